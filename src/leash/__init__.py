"""leash: empirical support dynamics of base vs RLVR models (arXiv 2507.14843).

Layers, bottom up (each idea in the module named after it):

* the metric core, numpy/scipy only: :mod:`leash.passk` (pass@k estimators),
  :mod:`leash.support` (epsilon, support categories, SRR/NDR/SDS/NSCR), :mod:`leash.entropy`
  (answer/token entropy, perplexity), :mod:`leash.stats` (bootstrap, McNemar, crossover, Holm);
* generations: :mod:`leash.formats`, :mod:`leash.validate`, :mod:`leash.summarize`,
  :mod:`leash.pairing`, :mod:`leash.answers`, :mod:`leash.rescore`, :mod:`leash.manifest`;
* analysis: :mod:`leash.tables`, :mod:`leash.sensitivity`, :mod:`leash.study`,
  :mod:`leash.artifacts` (one function per paper artifact), :mod:`leash.paper` (the paper's
  printed numbers and their audit), :mod:`leash.simulate` (the SIMULATED demo's model) and
  :mod:`leash.demo` (its configuration and files);
* output: :mod:`leash.plots`, :mod:`leash.report`, :mod:`leash.reproduce` (`make reproduce`),
  :mod:`leash.cli` (the `leash` command).
"""

__version__ = "0.1.0"

# Every name loads its module on first use, so that `import leash` (and the `leash` command's
# start-up) costs no numpy, scipy or pandas. Functions named like their module (summarize,
# validate, rescore) are not exported here, so that `leash.summarize` always is the module:
# call leash.summarize.summarize(...) and so on.
_LAZY = {
    **dict.fromkeys(("aggregate_perplexity", "answer_entropy", "answer_entropy_from_histograms",
                     "entropy_from_counts", "perplexity", "token_entropy"), "entropy"),
    **dict.fromkeys(("ESTIMATORS", "avg_at_n", "found_within", "pass_at_k",
                     "pass_at_k_curve", "pass_at_k_first"), "passk"),
    **dict.fromkeys(("bootstrap_crossover", "bootstrap_pass_at_k", "bootstrap_support",
                     "crossover_budget", "holm", "mcnemar_exact"), "stats"),
    **dict.fromkeys(("CATEGORIES", "epsilon", "expected_support_counts", "found",
                     "found_probability", "misclassification_probability",
                     "population_pass_at_k", "support_counts", "support_metrics",
                     "support_status"), "support"),
    **dict.fromkeys(("entropy_table", "expected_support_curve", "passk_table",
                     "perplexity_table", "support_from_counts", "support_table"), "tables"),
    "load_counts": "summarize", "read_summary": "summarize",
    "pair_counts": "pairing", "fetch": "manifest",
    "locate": "manifest", "extract_answer": "answers", "normalize_answer": "answers",
    "answer_classes": "answers", "load_benchmark": "rescore",
    "load_study": "study", "simulate_study": "simulate", "simulate_pair": "simulate",
    "sensitivity_sweep": "sensitivity", "significance_table": "sensitivity",
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
