"""The metric core of leash: numpy only (scipy.stats loads inside two functions).

pass@k estimators and curve (:mod:`~leash.core.passk`); epsilon, support categories and
SRR/NDR/SDS/NSCR (:mod:`~leash.core.support`); answer and token entropy, perplexity
(:mod:`~leash.core.entropy`); bootstrap, McNemar, crossover and Holm (:mod:`~leash.core.stats`);
declared parameter validation (:mod:`~leash.core._validation`). Nothing here imports pandas.
"""

from .entropy import (
    aggregate_perplexity,
    answer_entropy,
    answer_entropy_from_histograms,
    entropy_from_counts,
    perplexity,
    token_entropy,
)
from .passk import ESTIMATORS, avg_at_n, found_within, pass_at_k, pass_at_k_curve, pass_at_k_first
from .stats import (
    bootstrap_crossover,
    bootstrap_pass_at_k,
    bootstrap_support,
    crossover_budget,
    holm,
    mcnemar_exact,
)
from .support import (
    CATEGORIES,
    epsilon,
    expected_support_counts,
    found,
    found_probability,
    misclassification_probability,
    population_pass_at_k,
    support_counts,
    support_metrics,
    support_status,
)

__all__ = [
    "CATEGORIES", "ESTIMATORS", "aggregate_perplexity", "answer_entropy",
    "answer_entropy_from_histograms", "avg_at_n", "bootstrap_crossover", "bootstrap_pass_at_k",
    "bootstrap_support", "crossover_budget", "entropy_from_counts", "epsilon",
    "expected_support_counts", "found", "found_probability", "found_within", "holm",
    "mcnemar_exact", "misclassification_probability", "pass_at_k", "pass_at_k_curve",
    "pass_at_k_first", "perplexity", "population_pass_at_k", "support_counts", "support_metrics",
    "support_status", "token_entropy",
]
