"""Statistics the paper does not report: bootstrap intervals, the exact and mid-p McNemar tests of
expansion against shrinkage, one-sided Fisher exact tests of each question's success rate (and
their power at a budget), the crossover budget, and the Holm correction.

Bootstrap design: questions are the resampling unit, and the two models are resampled *paired*
(the same resampled questions for both), because the support categories are properties of a
question under both models. For pooled rows (several benchmarks) resampling is stratified by
benchmark, so every replicate keeps each benchmark's size. Intervals are percentile intervals.
Randomness comes only from the ``numpy.random.Generator`` the caller passes.

When a bootstrap cannot give an interval (the rule of every ``bootstrap_*`` function here, and so
of ``leash support --n-boot``):

* ``n_boot < 2`` is an error. One replicate is not a distribution: its "interval" is that
  replicate twice, which need not even contain the estimate.
* Too few replicates for the level, ``(n_boot - 1) (1 - level) / 2 < 1`` (``n_boot < 41`` at
  the default 0.95), give a ``RuntimeWarning``: then no replicate lies beyond an interval end,
  so each end is (an interpolation next to) the most extreme replicate and moves with it. This
  is a warning, not an error, because small ``n_boot`` is useful for smoke tests; it is tied to
  the level rather than a fixed minimum such as 100 because it is the tail mass that matters.
* Fewer than two questions to resample (or, with ``strata``, no stratum of two or more) makes
  every replicate equal to the data, so the interval would have zero width whatever the
  uncertainty. Its bounds are NaN ("no interval") and a ``RuntimeWarning`` says why; the point
  estimate is still returned. Zero questions is an error. Data that are merely homogeneous (ten
  questions in the same category) keep their legitimate zero-width interval.

``scipy.stats.bootstrap`` is not used: it has no stratification, and evaluating eight statistics
(P, E, S, O and four ratios) or a whole pass@k curve per replicate is much faster as matrix
products of resampling weights with per-question indicators (or curves), as done here.

Memory and reproducibility. The weights are never held whole (the (n_boot, n_questions) int64
matrix and its float64 copy took 5.2 GB at n_boot = 10^5 for 3400 questions, and 4.47 GiB at
n_boot = 2 * 10^7 for 30): replicates are drawn and reduced in blocks of at most
``_BLOCK_ELEMENTS`` draws, so the peak is a fixed working set (about 20 MiB) plus the replicate
statistics (n_boot x a few, held as two or three exact partial sums for pass@k). The random
numbers are those of :func:`resampling_weights`, drawn in the same order (stratum by stratum,
replicate by replicate). The sums behind each replicate are exact (see ``_exact_levels``) and
rounded once, so the replicates do not depend on the block size (nor on the BLAS, its threads or
the order of the strata), bit for bit, and two models whose replicate sums are equal stay equal
(a crossover at a tie is found). Support counts are sums of 0/1 indicators, exact either way:
they are bitwise those of the unblocked computation.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from leash.core._validation import (
    ArrayLike,
    Counts,
    Floats,
    Generator,
    Interval,
    StrOptions,
    check_c_le_n,
    check_ks_in_range,
    invalid,
    same_length,
    validate_params,
)
from leash.core.passk import (
    BUDGET_GRID,
    COUNTS,
    ESTIMATORS,
    FIRST_CORRECT,
    check_curve_inputs,
    curve_kernel,
)
from leash.core.support import (
    COUNT_NAMES,
    METRIC_NAMES,
    MIN_COUNT,
    pair_codes,
    support_metrics_kernel,
)

__all__ = [
    "MIN_N_BOOT",
    "TooFewReplicatesWarning",
    "DegenerateBootstrapWarning",
    "min_n_boot",
    "McNemarResult",
    "mcnemar_exact",
    "mcnemar_midp",
    "FisherResult",
    "fisher_one_sided",
    "fisher_power",
    "detection_budget",
    "resampling_weights",
    "bootstrap_support",
    "bootstrap_pass_at_k",
    "crossover_budget",
    "bootstrap_crossover",
    "holm",
]

SUPPORT_COLUMNS = (*COUNT_NAMES, *METRIC_NAMES)
MIN_N_BOOT = 2  # fewer replicates are not a distribution (see the module docstring)

# The declared kinds of the parameters (leash.core._validation).
LEVEL = Interval(Real, 0, 1, closed="neither")
N_BOOT = Interval(Integral, MIN_N_BOOT, None, closed="left")
STRATA = [ArrayLike(), None]
_CURVE_PARAMS = {
    "n_base": [COUNTS], "c_base": [COUNTS], "n_rl": [COUNTS], "c_rl": [COUNTS],
    "ks": [BUDGET_GRID], "rng": [Generator()], "n_boot": [N_BOOT], "strata": STRATA,
    "level": [LEVEL], "estimator": [StrOptions(*ESTIMATORS)],
    "first_correct_base": [FIRST_CORRECT, None], "first_correct_rl": [FIRST_CORRECT, None],
}
INCREASING_GRID = Counts(minimum=1, nonempty=True, increasing=True)  # budgets of a crossover


class TooFewReplicatesWarning(RuntimeWarning):
    """No bootstrap replicate lies beyond the ends of the percentile interval (see
    :func:`min_n_boot`): each end is then (next to) the most extreme replicate.
    """


class DegenerateBootstrapWarning(RuntimeWarning):
    """Fewer than two questions to resample (per stratum): every replicate equals the data, so
    the interval bounds are NaN.
    """


@validate_params({"level": [LEVEL]})
def min_n_boot(level=0.95):
    """The fewest replicates that leave one beyond each end of a percentile interval.

    Parameters
    ----------
    level : float, default 0.95
        Confidence level, in (0, 1).

    Returns
    -------
    int
        The smallest n_boot with ``(n_boot - 1) (1 - level) / 2 >= 1``: 41 at 0.95, 201 at 0.99.
        Fewer replicates give a :class:`TooFewReplicatesWarning` (not an error: small n_boot is
        useful for smoke tests).
    """
    return math.ceil(1 + 2 / (1 - level) - 1e-9)


class McNemarResult(NamedTuple):
    """Exact McNemar (sign) test of E against S and a Clopper-Pearson interval for E/(E+S)."""

    p_value: float
    proportion: float
    ci_low: float
    ci_high: float


@validate_params({"E": [Interval(Integral, 0, None, closed="left")],
                  "S": [Interval(Integral, 0, None, closed="left")], "level": [LEVEL]})
def mcnemar_exact(E, S, *, level=0.95):
    """Exact McNemar test of whether expansions and shrinkages are equally likely.

    Among the questions whose found/not-found status differs between the two models (the
    discordant pairs, E + S of them), under the null each is an expansion with probability 1/2.
    The two-sided p-value is the exact binomial test of E successes in E + S trials.

    Parameters
    ----------
    E, S : int
        Expansion and shrinkage counts.
    level : float, default 0.95
        Confidence level of the Clopper-Pearson (exact) interval for E / (E + S).

    Returns
    -------
    McNemarResult
        ``p_value`` (1.0 when E + S = 0), ``proportion`` = E/(E+S) and its interval (NaN when
        E + S = 0).

    Examples
    --------
    >>> mcnemar_exact(3, 0).p_value  # 2 x (1/2)**3
    0.25
    """
    e, s = E, S
    if e + s == 0:
        return McNemarResult(1.0, float("nan"), float("nan"), float("nan"))
    from scipy import stats as _st  # here, not at import: scipy.stats costs ~0.8 s

    res = _st.binomtest(e, e + s, 0.5, alternative="two-sided")
    ci = res.proportion_ci(confidence_level=level, method="exact")
    return McNemarResult(float(res.pvalue), e / (e + s), float(ci.low), float(ci.high))


@validate_params({"E": [Interval(Integral, 0, None, closed="left")],
                  "S": [Interval(Integral, 0, None, closed="left")]})
def mcnemar_midp(E, S):
    """Mid-p McNemar test of whether expansions and shrinkages are equally likely.

    The exact test (:func:`mcnemar_exact`) is conservative: with few discordant questions its
    true rejection rate lies well below its level. The mid-p version counts only half the
    probability of the observed split, ``2 [P(X <= b) - P(X = b) / 2]`` with X ~ Binomial(E +
    S, 1/2) and b = min(E, S), capped at 1; its rejection rate is close to the nominal level
    (Fagerland, Lydersen and Laake 2013, "The McNemar test for binary matched-pairs data:
    mid-p and asymptotic are better than exact conditional", BMC Med. Res. Methodol. 13:91).

    Parameters
    ----------
    E, S : int
        Expansion and shrinkage counts.

    Returns
    -------
    float
        The two-sided mid-p value; 1.0 when E + S = 0 and when E = S.

    Examples
    --------
    >>> mcnemar_midp(3, 0)  # 2 x (1/8 - 1/16)
    0.125
    """
    m, b = E + S, min(E, S)
    if m == 0:
        return 1.0
    from scipy import stats as _st  # here, not at import: scipy.stats costs ~0.8 s

    p = 2.0 * _st.binom.cdf(b, m, 0.5) - _st.binom.pmf(b, m, 0.5)
    return float(min(1.0, p))


class FisherResult(NamedTuple):
    """P-values of the one-sided Fisher exact tests of the RLVR model's success rate against the
    base model's (floats, or arrays for arrays of questions).
    """

    greater: object  # the RLVR model's rate is higher: evidence of an expansion
    less: object  # the RLVR model's rate is lower: evidence of a shrinkage


SAMPLES = Counts(minimum=1, note="samples per question")
_FISHER_PARAMS = {"c_rl": [COUNTS], "n_rl": [SAMPLES], "c_base": [COUNTS], "n_base": [SAMPLES]}


@validate_params(_FISHER_PARAMS)
def fisher_one_sided(c_rl, n_rl, c_base, n_base):
    """One-sided Fisher exact tests of each question's RLVR success rate against the base's.

    For one question, the 2x2 table ``[[c_rl, n_rl - c_rl], [c_base, n_base - c_base]]``
    (correct and wrong samples of each model) is tested as ``scipy.stats.fisher_exact`` does
    with ``alternative="greater"`` and ``"less"``: the hypergeometric tail of the RLVR model's
    correct count given the table's margins. Vectorized exactly: the same hypergeometric
    distribution functions fisher_exact evaluates (``scipy.stats.hypergeom.cdf``), once per
    distinct table (``tests/test_flips.py`` checks equality with fisher_exact to 1e-9).

    Parameters
    ----------
    c_rl, n_rl, c_base, n_base : int or array_like of int, shape (n_questions,)
        Correct samples and samples of each model per question; ``n >= 1`` and ``c <= n``.

    Returns
    -------
    FisherResult
        ``greater`` (p-value of "the RLVR model's rate is higher": an expansion, or a
        sharpening of a preserved question) and ``less`` (its rate is lower: a shrinkage),
        floats for scalar input, arrays of shape (n_questions,) otherwise. A table with an
        empty margin (no correct or no wrong sample at all) gives 1.0 both ways, as
        fisher_exact does.

    Examples
    --------
    >>> r = fisher_one_sided(3, 4, 0, 4)  # C(4,3) C(4,0) / C(8,3) = 4/56
    >>> round(r.greater, 12), r.less
    (0.071428571429, 1.0)
    """
    func = "fisher_one_sided"
    same_length(func, c_rl=c_rl, n_rl=n_rl, c_base=c_base, n_base=n_base)
    check_c_le_n(n_rl, c_rl, func, "n_rl", "c_rl")
    check_c_le_n(n_base, c_base, func, "n_base", "c_base")
    scalar = all(x.ndim == 0 for x in (c_rl, n_rl, c_base, n_base))
    table = np.column_stack(np.broadcast_arrays(*(np.atleast_1d(x) for x in (
        c_rl, n_rl, c_base, n_base))))
    if not len(table):
        return FisherResult(np.zeros(0), np.zeros(0))
    # questions with the same table have the same p-values: each distinct table once
    distinct, inverse = np.unique(table, axis=0, return_inverse=True)
    greater, less = (p[np.ravel(inverse)] for p in _fisher_kernel(*distinct.T))
    if scalar:
        return FisherResult(float(greater[0]), float(less[0]))
    return FisherResult(greater, less)


def _fisher_kernel(c_rl, n_rl, c_base, n_base):
    """(greater, less) p-values of validated int64 arrays, by fisher_exact's own formulas for a
    2x2 table [[a, b], [c, d]]: less = hypergeom.cdf(a, N, a + b, a + c), greater =
    hypergeom.cdf(b, N, a + b, b + d), capped at 1.
    """
    from scipy.stats import hypergeom  # here, not at import: scipy.stats costs ~0.8 s

    total = n_rl + n_base
    less = hypergeom.cdf(c_rl, total, n_rl, c_rl + c_base)
    wrong_rl = n_rl - c_rl
    greater = hypergeom.cdf(wrong_rl, total, n_rl, wrong_rl + n_base - c_base)
    return np.minimum(greater, 1.0), np.minimum(less, 1.0)


PROBABILITY = Floats(0, 1, ndim=(0, 1))
ALPHA = Interval(Real, 0, 1, closed="neither")
ALTERNATIVES = ("greater", "less")
# Binomial mass left out on each side of a model's correct count (fisher_power): the power is
# exact to within 2 x 2 x this.
_TAIL = 1e-13


@validate_params({"p_base": [PROBABILITY], "p_rl": [PROBABILITY],
                  "k": [Interval(Integral, 1, None, closed="left")], "alpha": [ALPHA],
                  "alternative": [StrOptions(*ALTERNATIVES)]})
def fisher_power(p_base, p_rl, k, *, alpha=0.05, alternative="greater"):
    """Probability that the one-sided Fisher test of one question rejects at level ``alpha``
    when each model draws ``k`` samples with success probabilities ``p_base`` and ``p_rl``.

    The correct counts are independent Binomial(k, p) draws; the power is the binomial
    probability of the tables the test rejects. Fisher's one-sided p-value falls as the RLVR
    count rises and rises with the base's (Barnard's convexity, checked in
    ``tests/test_flips.py``), so for each base count the rejected RLVR counts are those above a
    threshold, found by bisection: the cost is the base's plausible counts times log2(k)
    hypergeometric tails. Counts with binomial probability below 1e-13 on either side are left
    out, so the result is exact to within 4e-13.

    Parameters
    ----------
    p_base, p_rl : float or array_like of float, shape (n,)
        True success probabilities of the two models (broadcast together).
    k : int
        Samples per model.
    alpha : float, default 0.05
        Level of the test, in (0, 1). With a Benjamini-Hochberg control over many questions the
        per-question level is lower (between fdr / m and fdr).
    alternative : {"greater", "less"}, default "greater"
        "greater": an expansion is detected (the RLVR rate is higher); "less": a shrinkage.

    Returns
    -------
    float or ndarray of float, shape (n,)

    Examples
    --------
    >>> round(fisher_power(0.0, 0.5, 8), 6)  # rejects when the RLVR model has >= 4 of 8
    0.636719
    """
    pb, pr = np.broadcast_arrays(p_base, p_rl)
    if alternative == "less":  # a shrinkage of the RLVR model is an expansion of the base's
        pb, pr = pr, pb
    out = np.array([_power_greater(float(b), float(r), k, alpha) for b, r in
                    zip(np.ravel(pb), np.ravel(pr))]).reshape(pb.shape)
    return float(out) if out.ndim == 0 else out


def _power_greater(pb, pr, k, alpha):
    """Power of the "greater" test of Binomial(k, pr) against Binomial(k, pb) (see
    :func:`fisher_power`).
    """
    from scipy.stats import binom

    lo = int(binom.ppf(_TAIL, k, pb)) if 0 < pb < 1 else (0 if pb == 0 else k)
    hi = int(binom.isf(_TAIL, k, pb)) if 0 < pb < 1 else (0 if pb == 0 else k)
    cb = np.arange(max(lo - 1, 0), min(hi + 1, k) + 1, dtype=np.int64)
    kk = np.full(cb.shape, k, dtype=np.int64)
    # smallest RLVR count c with p(c, cb) <= alpha, by bisection over [0, k + 1] (k + 1: none)
    left, right = np.zeros(cb.shape, dtype=np.int64), np.full(cb.shape, k + 1, dtype=np.int64)
    while (left < right).any():
        mid = (left + right) // 2
        probe = np.minimum(mid, k)
        reject = (_fisher_kernel(probe, kk, cb, kk)[0] <= alpha) & (mid <= k)
        right = np.where(reject, mid, right)
        left = np.where(reject, left, mid + 1)
    # P(RLVR count >= threshold) for each base count, weighted by the base count's probability
    hit = binom.sf(left - 1, k, pr)
    return float(np.sum(binom.pmf(cb, k, pb) * hit))


DETECTION_RULES = ("found", "fisher")


@validate_params({"p_base": [PROBABILITY], "p_rl": [PROBABILITY], "ks": [INCREASING_GRID],
                  "power": [Interval(Real, 0, 1, closed="neither")], "alpha": [ALPHA],
                  "rule": [StrOptions(*DETECTION_RULES)]})
def detection_budget(p_base, p_rl, ks, *, power=0.8, alpha=0.05, rule="fisher"):
    """The smallest budget of ``ks`` at which an expansion is detected with probability at
    least ``power``.

    Parameters
    ----------
    p_base, p_rl : float or array_like of float, shape (n,)
        True success probabilities of the base and the RLVR model on the question (an
        expansion: ``p_base`` 0 or small, ``p_rl`` larger).
    ks : array_like of int, shape (n_ks,)
        Increasing budgets to try (samples per model).
    power : float, default 0.8
        Probability of detection required, in (0, 1).
    alpha : float, default 0.05
        Level of the Fisher test (``rule="fisher"``).
    rule : {"fisher", "found"}, default "fisher"
        "fisher": the one-sided Fisher test rejects (:func:`fisher_power`); "found": the
        paper's rule observes an expansion, the RLVR model finds the question (a correct sample
        among k) and the base does not, with probability ``(1 - (1 - p_rl)**k) (1 -
        p_base)**k``, which falls again at large k when ``p_base > 0``.

    Returns
    -------
    float or ndarray of float, shape (n,)
        The budget, NaN where no budget of ``ks`` reaches ``power``.

    Examples
    --------
    >>> detection_budget(0.0, 0.01, [64, 128, 256], rule="found")  # 1 - 0.99**k >= 0.8 at 161
    256.0
    """
    pb, pr = np.broadcast_arrays(p_base, p_rl)
    out = np.full(pb.shape, np.nan)
    for idx in np.ndindex(pb.shape):
        b, r = float(pb[idx]), float(pr[idx])
        for k in ks:
            k = int(k)
            if rule == "found":
                got = -np.expm1(k * np.log1p(-r)) * np.exp(k * np.log1p(-b)) if b < 1 else 0.0
            else:
                got = _power_greater(b, r, k, alpha)
            if got >= power:
                out[idx] = k
                break
    return float(out) if out.ndim == 0 else out


@validate_params({"n_items": [Interval(Integral, 1, None, closed="left")], "rng": [Generator()],
                  "n_boot": [Interval(Integral, 1, None, closed="left")], "strata": STRATA})
def resampling_weights(n_items, *, rng, n_boot, strata=None):
    """How often each question appears in each bootstrap replicate.

    The bootstrap functions of this module draw the same random numbers in the same order
    (stratum by stratum, replicate by replicate), but in blocks of replicates that they reduce
    at once, so they never hold this (n_boot, n_items) matrix.

    Parameters
    ----------
    n_items : int
        Number of questions.
    rng : numpy.random.Generator
        Source of randomness.
    n_boot : int
        Number of replicates.
    strata : array_like, shape (n_items,), optional
        Stratum label of each question (e.g. its benchmark); questions are resampled within
        their stratum, which keeps every stratum's size.

    Returns
    -------
    ndarray of int64, shape (n_boot, n_items)
        Row b holds the multiplicity of each question in replicate b; each row sums to n_items
        (and to each stratum's size within it).
    """
    func = "resampling_weights"
    w = _replicate_array((n_boot, n_items), func, np.int64)
    for members in _strata_groups(n_items, strata, func):
        for b0, b1, draw in _draw_blocks(members.size, rng, n_boot, 1):
            w[b0:b1, members] = _row_counts(draw, members.size)
    return w


# Replicates drawn and reduced at once by the bootstrap functions: a block holds at most this
# many draws (or statistics), so the working set is a few int64/float64 arrays of this size
# (about 20 MiB) whatever n_boot; only the replicate statistics (n_boot x a few) are kept.
_BLOCK_ELEMENTS = 1 << 19


def _strata_groups(n_items, strata, func):
    """The members (ascending question indices) of each stratum, strata in sorted order; the
    shape of ``strata`` is checked here, once per call.
    """
    if strata is None:
        return [np.arange(n_items)]
    strata = np.asarray(strata)
    if strata.shape != (n_items,):
        raise invalid("strata", func, f"an array of shape ({n_items},), one label per question",
                      f"an array of shape {strata.shape}")
    _, inv, counts = np.unique(strata, return_inverse=True, return_counts=True)
    order = np.argsort(np.ravel(inv), kind="stable")
    return np.split(order, np.cumsum(counts)[:-1])


def _draw_blocks(size, rng, n_boot, width):
    """Yield ``(b0, b1, draw)``: the positions (0..size-1) drawn with replacement for
    replicates b0..b1-1 of one stratum of ``size`` questions, in blocks of at most
    ``_BLOCK_ELEMENTS`` draws (or ``width`` statistics) per block.

    Consecutive blocks of rows consume the generator exactly as one ``(n_boot, size)`` draw
    would, so the replicates do not depend on the block size.
    """
    rows = max(1, _BLOCK_ELEMENTS // max(size, width, 1))
    for b0 in range(0, n_boot, rows):
        b1 = min(b0 + rows, n_boot)
        yield b0, b1, rng.integers(0, size, size=(b1 - b0, size))


def _row_counts(draw, n_values):
    """counts[b, v] = how often value v (0..n_values-1) occurs in row b of ``draw``."""
    flat = draw + (np.arange(draw.shape[0]) * n_values)[:, None]
    return np.bincount(flat.ravel(), minlength=draw.shape[0] * n_values).reshape(
        draw.shape[0], n_values)


def _replicate_array(shape, func, dtype=np.float64):
    """Zeros of ``shape`` for the replicates; too large for memory is a MemoryError that names
    n_boot (numpy says 'array is too big' or 'Unable to allocate', naming no argument).
    """
    try:
        return np.zeros(shape, dtype=dtype)
    except (MemoryError, ValueError):
        need = math.prod(shape) * np.dtype(dtype).itemsize / 2**30
        raise MemoryError(
            f"The 'n_boot' parameter of {func} asks for {shape[0]} replicates of {shape[1]} "
            f"values ({need:.3g} GiB), more memory than can be allocated; use fewer "
            "replicates."
        ) from None


def _exact_levels(table, total):
    """Split ``table`` (entries in [-1, 1]) into levels that sum to it exactly, such that the
    product of any row of non-negative integer weights summing to at most ``total`` with a
    level is exact in float64. Returns ``(levels, s)``.

    Level l holds multiples of 2**(-l s) below 2**(-(l-1) s) in magnitude, with
    ``total * 2**s <= 2**52``: every product and every partial sum is then a whole number of
    such units below 2**53, so a matrix product with a level gives the same (exact) result
    whatever the order of its additions, the block of rows it is called on, the BLAS or the
    number of threads. pass@k values take two or three levels, 0/1 indicators one.
    """
    s = 52 - max(int(total), 1).bit_length()
    levels, rest, scale = [], table, 0
    while True:
        scale += s
        level = np.ldexp(np.rint(np.ldexp(rest, scale)), -scale)
        levels.append(level)
        rest = rest - level  # exact: the bits of ``rest`` below the level's grid
        if not rest.any():
            return levels, s


def _replicate_sums(table, keys, groups, rng, n_boot, out, func):
    """out[b] = sum over questions i of w[b, i] * table[keys[i]], for every replicate b.

    ``w`` are the multiplicities of :func:`resampling_weights` (the same draws in the same
    order), never held whole: each stratum's replicates are drawn in blocks, counted per
    distinct row of the table (``keys`` maps each question to its row) and reduced with one
    exact matrix product per level of :func:`_exact_levels`, into exact per-level sums. Those
    are combined once, at the end, into the float nearest their exact total (correctly rounded
    for up to two levels): a function of the exact sum alone, so the result does not depend on
    the block size or the order of the strata, bit for bit, and equal sums stay equal (a tie
    between two models' pass@k is a tie). ``out`` must hold zeros.
    """
    levels, s = _exact_levels(table, keys.size)
    sums = [out] + [_replicate_array(out.shape, func) for _ in levels[1:]]
    for members in groups:
        rows, local = np.unique(keys[members], return_inverse=True)
        local = np.ravel(local)
        parts = [level[rows] for level in levels]
        for b0, b1, draw in _draw_blocks(members.size, rng, n_boot, table.shape[1]):
            counts = _row_counts(local[draw], rows.size).astype(np.float64)
            for total, part in zip(sums, parts):
                total[b0:b1] += counts @ part  # exact
    if len(sums) == 1:
        return
    # Level l's sum is a whole number of units 2**(-l s) below 2**53: as int64 digits with
    # carries (floor) into the level above, every exact total has one representation, which is
    # converted from the smallest level up.
    step = max(1, _BLOCK_ELEMENTS // out.shape[1])
    for b0 in range(0, n_boot, step):
        digits = [np.rint(np.ldexp(t[b0 : b0 + step], (j + 1) * s)).astype(np.int64)
                  for j, t in enumerate(sums)]
        for j in range(len(digits) - 1, 0, -1):
            carry = digits[j] >> s
            digits[j] -= carry << s
            digits[j - 1] += carry
        value = np.ldexp(digits[-1].astype(np.float64), -len(digits) * s)
        for j in range(len(digits) - 2, -1, -1):
            value = np.ldexp(digits[j].astype(np.float64), -(j + 1) * s) + value
        out[b0 : b0 + step] = value


def _category_counts(codes, groups, rng, n_boot, out):
    """out[b, j] += how many of replicate b's draws fall in category j (``codes`` 0..3).

    The draws of :func:`_replicate_sums` (the same blocks of :func:`_draw_blocks`, stratum by
    stratum), counted as a plain bootstrap does: the drawn questions' categories, offset by
    4 x their replicate, in one ``np.bincount`` per block. Counts are whole numbers, so this is
    bitwise the weights-times-indicators sum it replaces (``tests/test_bootstrap_bits.py``).
    """
    codes = np.asarray(codes, dtype=np.intp)
    for members in groups:
        local = codes[members]
        for b0, b1, draw in _draw_blocks(members.size, rng, n_boot, out.shape[1]):
            flat = local[draw]
            flat += np.arange(0, 4 * (b1 - b0), 4)[:, None]
            out[b0:b1] += np.bincount(flat.ravel(), minlength=4 * (b1 - b0)).reshape(b1 - b0, 4)


def _check_n_boot(n_boot, level, func):
    """Enough replicates beyond each end of the interval (a warning) for a declared n_boot."""
    if (n_boot - 1) * (1 - level) / 2 < 1:
        warnings.warn(
            f"{func}: with n_boot={n_boot} at level={level}, no bootstrap replicate lies beyond "
            f"the ends of the percentile interval, which are then the extreme replicates; use "
            f"n_boot >= {min_n_boot(level)} (1000 or more for stable ends).",
            TooFewReplicatesWarning, stacklevel=4)  # 4: the decorator adds a frame
    return n_boot


def _resampling_groups(n_items, strata, func, stacklevel=4):
    """The strata of a bootstrap (:func:`_strata_groups`) and whether it is degenerate: True
    (with a RuntimeWarning) when every replicate must equal the data; 0 items: error.
    """
    if n_items == 0:
        raise invalid("c_base" if func == "bootstrap_support" else "n_base", func,
                      "the counts of at least one question to resample", "an empty array")
    groups = _strata_groups(n_items, strata, func)
    if max(g.size for g in groups) >= 2:
        return groups, False
    what = ("one question" if strata is None or n_items == 1
            else f"{n_items} questions, each alone in its stratum")
    warnings.warn(
        f"{func}: the bootstrap over {what} is degenerate (every replicate equals the data), so "
        "the interval bounds are NaN.", DegenerateBootstrapWarning, stacklevel=stacklevel)
    return groups, True


def _interval(rep, level, method="linear"):
    """Percentile interval ends of each column of ``rep``, NaN-aware.

    Bitwise ``np.nanquantile(rep, a, axis=0)`` and ``(rep, 1 - a, axis=0)``, faster: columns
    without NaN go through one vectorized ``np.quantile`` (the same selection and interpolation
    as nanquantile's per-column path), only columns with NaN through ``np.nanquantile``
    (``tests/test_bootstrap_bits.py`` keeps the two-call form as the reference).
    """
    a = (1 - level) / 2
    if not rep.size:
        return np.nan, np.nan
    q = np.array([a, 1 - a])
    nan_cols = np.isnan(rep).any(axis=0)
    out = np.empty((2, rep.shape[1]))
    if not nan_cols.all():
        out[:, ~nan_cols] = np.quantile(rep[:, ~nan_cols], q, axis=0, method=method)
    if nan_cols.any():
        # A ratio undefined in every replicate (e.g. NDR when P + E = 0) has a NaN interval;
        # numpy's "All-NaN slice" warning says nothing the NaN does not.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[:, nan_cols] = np.nanquantile(rep[:, nan_cols], q, axis=0, method=method)
    return out[0], out[1]


@validate_params({"c_base": [COUNTS], "c_rl": [COUNTS], "rng": [Generator()], "n_boot": [N_BOOT],
                  "strata": STRATA, "min_count": [MIN_COUNT], "level": [LEVEL],
                  "return_replicates": ["boolean"]})
def bootstrap_support(c_base, c_rl, *, rng, n_boot=1000, strata=None, min_count=1, level=0.95,
                      return_replicates=False):
    """Point estimates and paired bootstrap intervals for P, E, S, O, SRR, NDR, SDS, NSCR.

    Parameters
    ----------
    c_base, c_rl : array_like of int, shape (n_questions,)
        Verified-correct counts of the base and RLVR model per question, at the same budget.
    rng : numpy.random.Generator
        Source of randomness (required: results are reproducible from the caller's seed).
    n_boot : int, default 1000
        Bootstrap replicates, at least 2 (fewer than ``1 + 2 / (1 - level)`` warn; see the
        module docstring).
    strata : array_like, shape (n_questions,), optional
        Benchmark of each question, for pooled rows (resampling within benchmark).
    min_count : int, default 1
        Correct samples for a model to "find" a question.
    level : float, default 0.95
        Confidence level of the percentile intervals.
    return_replicates : bool, default False
        Also return the (n_boot, 8) replicate matrix.

    Returns
    -------
    pandas.DataFrame
        Index ``P, E, S, O, SRR, NDR, SDS, NSCR``; columns ``estimate, low, high``. Replicates in
        which a ratio is undefined are ignored for that ratio's interval (NaN-aware quantiles).
        With ``return_replicates=True``, a tuple ``(frame, replicates)``.

    Warns
    -----
    RuntimeWarning
        With fewer than two questions to resample (``low``/``high`` are then NaN: a
        :class:`DegenerateBootstrapWarning`), or too few replicates for ``level`` (a
        :class:`TooFewReplicatesWarning`).
    """
    func = "bootstrap_support"
    n_boot = _check_n_boot(n_boot, level, func)
    codes = pair_codes(c_base, c_rl, min_count, func)
    return bootstrap_codes(codes, rng, n_boot, strata, level, func, return_replicates)


def bootstrap_codes(codes, rng, n_boot, strata, level, func, return_replicates=False,
                    stacklevel=5):  # 5: kernel, bootstrap function, decorator
    """The kernel of :func:`bootstrap_support` from validated category codes (int8, 0..3),
    ``rng``, ``n_boot`` and ``level``, for callers that decided found-ness themselves (the
    support tables); ``func`` is the function its messages name. Not in ``__all__``.
    """
    groups, degenerate = _resampling_groups(codes.size, strata, func, stacklevel=stacklevel)
    rep = _replicate_array((n_boot, len(SUPPORT_COLUMNS)), func)
    # P, E, S, O of each replicate: its draws counted per category
    _category_counts(codes, groups, rng, n_boot, rep[:, :4])
    for j, metric in enumerate(support_metrics_kernel(rep[:, 0], rep[:, 1], rep[:, 2]), start=4):
        rep[:, j] = metric
    point_counts = np.bincount(codes, minlength=4).astype(np.float64)
    point = np.concatenate([point_counts, np.asarray(support_metrics_kernel(*point_counts[:3]))])
    lo, hi = _interval(rep, level) if not degenerate else (np.nan, np.nan)
    import pandas as pd  # here, not at import: the metric core imports numpy and scipy only

    frame = pd.DataFrame({"estimate": point, "low": lo, "high": hi}, index=list(SUPPORT_COLUMNS))
    return (frame, rep) if return_replicates else frame


def _paired_curves(func, n_base, c_base, n_rl, c_rl, ks, rng, n_boot, strata, estimator,
                   first_correct_base, first_correct_rl, *, crossover=False):
    """Per-question pass@k matrices of both models and their bootstrap replicate means.

    Every input is validated here, once, with the names of the public function ``func``; the
    curves come from the unchecked kernel. Returns ``(mb, mr, rep, degenerate, ks)`` with
    ``rep`` of shape (n_boot, 3 n_ks) holding the replicate means of base, rlvr and
    rlvr - base (with ``crossover``: (n_boot, 2 n_ks), base and rlvr).
    """
    ks = np.atleast_1d(ks)
    n_base, c_base, fc_base = check_curve_inputs(n_base, c_base, first_correct_base, estimator,
                                                 func, "n_base", "c_base", "first_correct_base")
    n_rl, c_rl, fc_rl = check_curve_inputs(n_rl, c_rl, first_correct_rl, estimator, func, "n_rl",
                                           "c_rl", "first_correct_rl")
    same_length(func, n_base=n_base, n_rl=n_rl)
    check_ks_in_range(ks, n_base, func, n_name="n_base")
    check_ks_in_range(ks, n_rl, func, n_name="n_rl")
    groups, degenerate = _resampling_groups(n_base.size, strata, func, stacklevel=5)
    mb = curve_kernel(n_base, c_base, ks, fc_base)
    mr = curve_kernel(n_rl, c_rl, ks, fc_rl)
    # Questions with the same counts (and first correct samples) have the same curves: the
    # replicates are sums over the distinct ones.
    inputs = [n_base, c_base, n_rl, c_rl] + ([fc_base, fc_rl] if fc_base is not None else [])
    _, first, keys = np.unique(np.column_stack(inputs), axis=0, return_index=True,
                               return_inverse=True)
    columns = [mb[first], mr[first]] + ([] if crossover else [mr[first] - mb[first]])
    rep = _replicate_array((n_boot, len(columns) * ks.size), func)
    _replicate_sums(np.hstack(columns), np.ravel(keys), groups, rng, n_boot, rep, func)
    rep /= mb.shape[0]
    return mb, mr, rep, degenerate, ks


@validate_params(_CURVE_PARAMS)
def bootstrap_pass_at_k(n_base, c_base, n_rl, c_rl, ks, *, rng, n_boot=1000, strata=None,
                        level=0.95, estimator="unbiased", first_correct_base=None,
                        first_correct_rl=None):
    """Benchmark-level pass@k curves of both models with paired bootstrap intervals.

    Parameters
    ----------
    n_base, c_base, n_rl, c_rl : array_like of int, shape (n_questions,)
        Samples and correct samples per question for each model (same questions, same order).
    ks : array_like of int, shape (n_ks,)
        Budgets.
    rng : numpy.random.Generator
    n_boot : int, default 1000
        At least 2; see :func:`bootstrap_support` and the module docstring.
    strata : array_like, shape (n_questions,), optional
        Stratum (benchmark) per question.
    level : float, default 0.95
    estimator : {"unbiased", "first-k"}, default "unbiased"
    first_correct_base, first_correct_rl : array_like of int, shape (n_questions,), optional
        Needed for ``estimator="first-k"``.

    Returns
    -------
    pandas.DataFrame
        Long format, one row per (k, series) with series in ``base``, ``rlvr``,
        ``rlvr - base`` (the role names the plot helpers use);
        columns ``k, series, estimate, low, high``.

    Warns
    -----
    RuntimeWarning
        As :func:`bootstrap_support` (NaN bounds with fewer than two questions).
    """
    func = "bootstrap_pass_at_k"
    n_boot = _check_n_boot(n_boot, level, func)
    mb, mr, rep, degenerate, ks = _paired_curves(func, n_base, c_base, n_rl, c_rl, ks, rng,
                                                 n_boot, strata, estimator, first_correct_base,
                                                 first_correct_rl)
    series = {"base": mb, "rlvr": mr, "rlvr - base": mr - mb}
    import pandas as pd  # here, not at import: the metric core imports numpy and scipy only

    frames = []
    for j, (name, m) in enumerate(series.items()):
        cols = rep[:, j * ks.size : (j + 1) * ks.size]
        lo, hi = _interval(cols, level) if not degenerate else (np.nan, np.nan)
        frames.append(pd.DataFrame({"k": ks, "series": name, "estimate": m.mean(axis=0),
                                    "low": lo, "high": hi}))
    return pd.concat(frames, ignore_index=True)


@validate_params({"curve_base": [Floats(ndim="1+")], "curve_rl": [Floats(ndim="1+")],
                  "ks": [INCREASING_GRID]})
def crossover_budget(curve_base, curve_rl, ks):
    """Smallest budget at which the base model's pass@k reaches the RLVR model's.

    Parameters
    ----------
    curve_base, curve_rl : array_like of float, shape (n_ks,) or (n_rows, n_ks)
        Benchmark-level pass@k curves (e.g. bootstrap replicates as rows); a scalar is not a
        curve (an error). Zero rows give an empty result.
    ks : array_like of int, shape (n_ks,)
        Increasing budgets, at least one.

    Returns
    -------
    float or ndarray of float, shape (n_rows,)
        The smallest k in ``ks`` with ``base >= rl``; NaN when the base never reaches the RLVR
        model within ``ks``. If the base is already at or above the RLVR model at the smallest
        k, that k is returned.
    """
    func = "crossover_budget"
    # NaN curves are refused by the declaration: NaN would silently read as "not reached"
    b, r, ks = curve_base, curve_rl, np.atleast_1d(ks)
    if b.shape[-1] != ks.size:
        raise invalid("curve_base", func, f"an array whose last axis has len(ks) = {ks.size}",
                      f"an array of shape {b.shape}")
    if r.shape != b.shape:
        raise invalid("curve_rl", func, f"an array of the shape of 'curve_base', {b.shape}",
                      f"an array of shape {r.shape}")
    out = _crossover(b, r, ks)
    return float(out) if out.ndim == 0 else out


def _crossover(b, r, ks):
    """The kernel of :func:`crossover_budget` (validated curves, increasing budgets)."""
    reached = b >= r
    first = np.argmax(reached, axis=-1)
    return np.where(reached.any(axis=-1), ks.astype(np.float64)[first], np.nan)


@validate_params({**_CURVE_PARAMS, "ks": [INCREASING_GRID]})
def bootstrap_crossover(n_base, c_base, n_rl, c_rl, ks, *, rng, n_boot=1000, strata=None,
                        level=0.95, estimator="unbiased", first_correct_base=None,
                        first_correct_rl=None):
    """The crossover budget with its paired bootstrap distribution.

    Parameters
    ----------
    n_base, c_base, n_rl, c_rl : array_like of int, shape (n_questions,)
    ks : array_like of int, shape (n_ks,)
        Increasing budgets.
    rng : numpy.random.Generator
    n_boot : int, default 1000
        At least 2; see :func:`bootstrap_support` and the module docstring.
    strata : array_like, shape (n_questions,), optional
    level : float, default 0.95
    estimator : {"unbiased", "first-k"}, default "unbiased"
    first_correct_base, first_correct_rl : array_like of int, shape (n_questions,), optional
        Needed for ``estimator="first-k"``.

    Returns
    -------
    dict
        ``estimate`` (float, NaN if no crossover), ``low``/``high`` (percentile interval over
        replicates that cross), ``share_crossing`` (fraction of replicates with a crossover within
        ``ks``) and ``replicates`` (ndarray, shape (n_boot,)).

    Warns
    -----
    RuntimeWarning
        As :func:`bootstrap_support` (``low``/``high`` NaN with fewer than two questions).
    """
    func = "bootstrap_crossover"
    n_boot = _check_n_boot(n_boot, level, func)
    mb, mr, curves, degenerate, ks = _paired_curves(
        func, n_base, c_base, n_rl, c_rl, ks, rng, n_boot, strata, estimator,
        first_correct_base, first_correct_rl, crossover=True)
    rep = _crossover(curves[:, : ks.size], curves[:, ks.size :], ks)
    del curves
    est = float(_crossover(mb.mean(axis=0), mr.mean(axis=0), ks))
    crossing = np.isfinite(rep)
    # Budgets are discrete: the interval ends are budgets that occurred, not interpolations.
    lo, hi = (_interval(rep[crossing][:, None], level, method="inverted_cdf")
              if crossing.any() and not degenerate else ([np.nan], [np.nan]))
    return {
        "estimate": est,
        "low": float(np.ravel(lo)[0]),
        "high": float(np.ravel(hi)[0]),
        "share_crossing": float(crossing.mean()),
        "replicates": rep,
    }


@validate_params({"pvalues": [Floats(0, 1, ndim=(1,), nan=True, note="NaN for no test")]})
def holm(pvalues):
    """Holm's step-down adjustment of p-values for multiple comparisons.

    Written by hand because scipy offers only Benjamini-Hochberg/Yekutieli
    (``scipy.stats.false_discovery_control``) and statsmodels is not a dependency.

    Parameters
    ----------
    pvalues : array_like of float, shape (m,)
        Raw p-values in [0, 1]; NaN entries are passed through and not counted in m (an
        infinite p-value is an error, not a missing test).

    Returns
    -------
    ndarray of float, shape (m,)
        Adjusted p-values ``max_{j<=i} min(1, (m - j + 1) p_(j))`` in the original order.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03]).round(12).tolist()  # 3 x 0.01, max(2 x 0.03, ...)
    [0.03, 0.06, 0.06]
    """
    p = pvalues  # +-inf refused by the declaration: only NaN means "no test"
    ok = ~np.isnan(p)
    out = np.full_like(p, np.nan)
    idx = np.flatnonzero(ok)
    m = idx.size
    if m == 0:
        return out
    order = np.argsort(p[idx], kind="stable")
    adj = np.minimum(1.0, (m - np.arange(m)) * p[idx][order])
    out[idx[order]] = np.maximum.accumulate(adj)
    return out
