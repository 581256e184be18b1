"""leash: empirical support dynamics of base vs RLVR models (arXiv 2507.14843v4).

``leash`` is what the notebooks import: the metric core, the analyses, the paper's numbers and
the glue that turns them into the paper's artifacts. Every command, runner, server and process
manager lives in the evaluation toolkit beside it, ``leash_eval``.

The package's layers, bottom up; a module imports only from its own layer or a lower one (the
import-linter contracts of ``pyproject.toml`` check it, in ``make lint``), and each idea lives
in the module named after it:

* :mod:`leash.errors`: errors and warnings that carry their structure (parameter, value, file,
  line, key, remedy), so that each layer words them itself; :mod:`leash.limits`: the bounds
  every layer checks against (the lowest layer);
* :mod:`leash.summary`: the per-question summary format (what the toolkit writes, the notebooks
  read); beside it the small modules every layer may use: :mod:`leash.config` (the one YAML
  loader), :mod:`leash.paths` (the one module that knows the repository's folders),
  :mod:`leash.notebook_files` (notebooks committed as Markdown) and :mod:`leash.writing`
  (outputs written whole or not at all);
* :mod:`leash.core`: **the metric core**, numpy only (scipy inside two functions): pass@k
  estimators (``passk``), epsilon, support categories and SRR/NDR/SDS/NSCR (``support``),
  answer/token entropy and perplexity (``entropy``), bootstrap, McNemar, crossover and Holm
  (``stats``), and the declared parameter validation (``_validation``);
* :mod:`leash.analysis`: pairing two models (``pairing``), the tables (``tables``), the
  robustness analyses (``sensitivity``), the one rule for "the same numbers" (``compare``);
* :mod:`leash.sources`: the paper's printed numbers and their audit (``paper``), the text's
  numeric claims recomputed from them (``claims``), study files
  (``study``, with the names they choose among in ``choices``), the SIMULATED demo's model
  (``simulate``) and its files (``demo``), and the one seam to the toolkit (``seam``);
* :mod:`leash.artifacts`: one function per paper artifact, over those sources;
* :mod:`leash.output`: plot helpers (``plots``), printed precision (``printed``) and byte-stable
  saving (``report``);
* :mod:`leash.run`: what a notebook calls first (``notebook``, ``parameters``) and the live
  explorer of ``notebooks/12_explore`` (``explore``, ipywidgets).

``leash`` imports no process, signal or argument-parsing module (a contract) and never imports
the toolkit but through :func:`leash.sources.seam.toolkit`, for study sources that name raw
files.
"""

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
    "simulate_pair": "sources.simulate",
    "sensitivity_sweep": "analysis.sensitivity", "significance_table": "analysis.sensitivity",
    "explore": "run.explore",
}


# Names that moved to the evaluation toolkit (leash_eval), kept here for one release.
_MOVED = {"load_counts": "summarize", "read_summary": "summarize", "fetch": "manifest",
          "locate": "manifest", "extract_answer": "answers", "normalize_answer": "answers",
          "answer_classes": "answers", "load_benchmark": "rescore", "simulate_study": "demo"}


def __getattr__(name):
    if name == "__version__":  # the installed distribution's, read on first use
        from leash._version import version

        return version()
    if name in _MOVED:
        from leash.sources.seam import moved

        return moved(f"leash.{name}", f"leash_eval.{_MOVED[name]}.{name}")
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


def _install_moved_modules():
    # the old module paths of what moved to the toolkit (leash.run.reproduce, ...), one release
    from leash.sources.seam import install_moved_modules

    install_moved_modules()


_install_moved_modules()
