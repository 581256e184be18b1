"""leash: empirical support dynamics of base vs RLVR models (arXiv 2507.14843v4).

The package's layers, bottom up; a module imports only from its own layer or a lower one
(``tests/test_layers.py`` checks it), and each idea lives in the module named after it:

* :mod:`leash.core`: the metric core, numpy only (scipy inside two functions): pass@k
  estimators (``passk``), epsilon, support categories and SRR/NDR/SDS/NSCR (``support``),
  answer/token entropy and perplexity (``entropy``), bootstrap, McNemar, crossover and Holm
  (``stats``), and the declared parameter validation (``_validation``);
* :mod:`leash.io`: reading generations on one engine (``formats``, ``evaluators``,
  ``validate``), per-question summaries (``summarize``), answers and rescoring (``answers``,
  ``rescore``), the data manifest and fetching (``manifest``);
* :mod:`leash.analysis`: pairing two models (``pairing``), the tables (``tables``), the
  robustness analyses (``sensitivity``), the one rule for "the same numbers" (``compare``);
* :mod:`leash.sources`: the paper's printed numbers and their audit (``paper``), study files
  (``study``), the SIMULATED demo's model (``simulate``) and its configuration and files
  (``demo``);
* :mod:`leash.artifacts`: one function per paper artifact, over those sources;
* :mod:`leash.output`: plot helpers (``plots``) and byte-stable saving (``report``);
* :mod:`leash.run`: the notebook runner (``reproduce``, ``notebook``, ``parameters``);
* :mod:`leash.cli`: the ``leash`` command.

``leash._paths`` is the one module that knows the repository's folders.
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
    "load_counts": "io.summarize", "read_summary": "io.summarize",
    "pair_counts": "analysis.pairing", "fetch": "io.manifest",
    "locate": "io.manifest", "extract_answer": "io.answers", "normalize_answer": "io.answers",
    "answer_classes": "io.answers", "load_benchmark": "io.rescore",
    "load_study": "sources.study", "simulate_study": "sources.simulate",
    "simulate_pair": "sources.simulate",
    "sensitivity_sweep": "analysis.sensitivity", "significance_table": "analysis.sensitivity",
}


def __getattr__(name):
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
