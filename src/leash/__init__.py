"""leash: empirical support dynamics of base vs RLVR models (arXiv 2507.14843v4).

The package's layers, bottom up; a module imports only from its own layer or a lower one (the
import-linter contracts of ``pyproject.toml`` check it, in ``make lint``), and each idea lives
in the module named after it:

* :mod:`leash.errors`: errors and warnings that carry their structure (parameter, value, file,
  line, key, remedy), so that each layer words them itself (the lowest layer);
* :mod:`leash.summary`: the per-question summary format (what the toolkit writes, the notebooks
  read);
* :mod:`leash.core`: the metric core, numpy only (scipy inside two functions): pass@k
  estimators (``passk``), epsilon, support categories and SRR/NDR/SDS/NSCR (``support``),
  answer/token entropy and perplexity (``entropy``), bootstrap, McNemar, crossover and Holm
  (``stats``), and the declared parameter validation (``_validation``);
* :mod:`leash.analysis`: pairing two models (``pairing``), the tables (``tables``), the
  robustness analyses (``sensitivity``), the one rule for "the same numbers" (``compare``);
* :mod:`leash.sources`: the paper's printed numbers and their audit (``paper``), study files
  (``study``, with the names they choose among in ``choices``), the SIMULATED demo's model
  (``simulate``) and its configuration and files (``demo``), and the one seam to the toolkit
  (``toolkit``);
* :mod:`leash.artifacts`: one function per paper artifact, over those sources;
* :mod:`leash.output`: plot helpers (``plots``) and byte-stable saving (``report``);
* :mod:`leash.run`: the notebook runner (``reproduce``, ``notebook``, ``parameters``) and the
  live explorer of ``notebooks/12_explore.ipynb`` (``explore``, ipywidgets);

``leash.paths`` is the one module that knows the repository's folders. Beside it, at the bottom
of the layers, the small modules every layer may use: ``leash.config`` (the one YAML loader),
``leash.argparsing`` (one-line usage errors), ``leash.notebook_files`` (notebooks committed as
Markdown), ``leash.writing`` (outputs written whole or not at all) and ``leash.processes`` (how
the processes of a run end together: SIGTERM as Ctrl-C, workers that end with their parent).

The evaluation toolkit is a package of its own beside this one, ``leash_eval``: every input
reader, validation and summarizing, answers and rescoring, the data manifest and fetching,
generation, the ``leash`` command and the demo's generator. ``leash`` never imports it but
through :func:`leash.sources.toolkit.toolkit`, for study sources that name raw files.
"""
__version__ = "0.1.0"

# Every name loads its module on first use, so that `import leash` (and the `leash` command's
# start-up) costs no numpy, scipy or pandas.
_LAZY = {
    # the metric core: the names of leash.core.__all__ (tests/test_public_api.py keeps them equal)
    **dict.fromkeys((
        "CATEGORIES", "ESTIMATORS", "aggregate_perplexity", "answer_entropy",
        "answer_entropy_from_histograms", "avg_at_n", "bootstrap_crossover", "bootstrap_pass_at_k",
        "bootstrap_support", "crossover_budget", "entropy_from_counts", "epsilon",
        "expected_support_counts", "found", "found_probability", "found_within", "holm",
        "mcnemar_exact", "misclassification_probability", "pass_at_k", "pass_at_k_curve",
        "pass_at_k_first", "perplexity", "population_pass_at_k", "support_counts",
        "support_metrics", "support_status", "token_entropy"), "core"),
    **dict.fromkeys(("entropy_table", "expected_support_curve", "passk_table", "perplexity_table",
                     "support_from_counts", "support_table"), "analysis.tables"),
    "pair_counts": "analysis.pairing", "load_study": "sources.study",
    "simulate_study": "sources.simulate",
    "simulate_pair": "sources.simulate",
    "sensitivity_sweep": "analysis.sensitivity", "significance_table": "analysis.sensitivity",
    "explore": "run.explore",
}


# Names that moved to the evaluation toolkit (leash_eval), kept here for one release.
_MOVED = {"load_counts": "summarize", "read_summary": "summarize", "fetch": "manifest",
          "locate": "manifest", "extract_answer": "answers", "normalize_answer": "answers",
          "answer_classes": "answers", "load_benchmark": "rescore"}


def __getattr__(name):
    if name in _MOVED:
        import warnings

        from leash.sources.toolkit import toolkit

        warnings.warn(f"leash.{name} moved to leash_eval.{_MOVED[name]}.{name}; import it from "
                      "there (this alias goes in the next release)", DeprecationWarning,
                      stacklevel=2)
        return toolkit(f"leash.{name}").public(name)
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'leash' has no attribute {name!r}")


__all__ = sorted(_LAZY)


def __dir__():
    return sorted({*globals(), *_LAZY})
