"""Empirical support: the threshold epsilon, support categories, P/E/S/O counts and the paper's
four summary metrics SRR, NDR, SDS and NSCR (arXiv 2507.14843v4: App. C.4, Defs. 3.2, 3.3).

The paper's operational rule (derived here from the printed counts of Tables 3, 4 and 6-12, all
of which it reproduces exactly): a model "finds" a question at budget k when at least
``min_count`` (default 1) of its k samples are verified correct. With that rule, for each
question:

=====================  ==========  ==========
category               base found  RLVR found
=====================  ==========  ==========
preservation  (P)      yes         yes
expansion     (E)      no          yes
shrinkage     (S)      yes         no
out_of_support (O)     no          no
=====================  ==========  ==========

and the metrics (Def. 3.3):

* SRR = P / (P + S)          support retention rate
* NDR = E / (P + E)          net discovery rate
* SDS = 2 SRR NDR / (SRR + NDR)   harmonic mean
* NSCR = (E - S) / (P + E + S)    net support change rate

Undefined ratios (a zero denominator) are NaN. SDS is 0.0 when NDR = 0 and SRR > 0, as the paper
prints it; it is NaN when either input is NaN.

Kernels, for the modules that validated at their own boundary (``stats``, the tables, the
demo): :func:`category_codes` (codes of found masks), :func:`pair_codes`,
:func:`support_metrics_kernel` and :func:`epsilon_kernel`; they are not in ``__all__``.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from leash.core._validation import (
    Floats,
    Interval,
    check_c_le_n,
    check_k_in_range,
    invalid,
    same_length,
    validate_params,
)
from leash.core.passk import BUDGETS, COUNTS, pass_at_k_kernel

CATEGORIES = ("preservation", "expansion", "shrinkage", "out_of_support")

__all__ = [
    "CATEGORIES",
    "SupportCounts",
    "SupportMetrics",
    "COUNT_NAMES",
    "METRIC_NAMES",
    "epsilon",
    "found",
    "support_codes",
    "support_status",
    "support_counts",
    "support_metrics",
    "found_probability",
    "expected_support_counts",
    "population_pass_at_k",
    "misclassification_probability",
]


# The declared kinds of the parameters (leash.core._validation) besides counts and budgets.
MIN_COUNT = Interval(Integral, 1, None, closed="left")
ZETA = Interval(Real, 0, 1, closed="neither")
CATEGORY_COUNTS = Floats(0, None, closed="left")  # expected counts are floats
PROBABILITIES = Floats(0, 1, ndim=None)


class SupportCounts(NamedTuple):
    """Counts of questions per support category (ints, floats for expectations, or arrays)."""

    P: object
    E: object
    S: object
    O: object  # noqa: E741  (the paper's name)


class SupportMetrics(NamedTuple):
    """The paper's four support-dynamics metrics (floats, or arrays for vectorized input)."""

    SRR: object
    NDR: object
    SDS: object
    NSCR: object


#: The names of the four counts (the paper's P, E, S, O) and of the four metrics, as the
#: fields of :class:`SupportCounts` and :class:`SupportMetrics` and the columns of every table.
COUNT_NAMES: tuple[str, ...] = SupportCounts._fields
METRIC_NAMES: tuple[str, ...] = SupportMetrics._fields


@validate_params({"k": [BUDGETS], "zeta": [ZETA], "exact": ["boolean"]})
def epsilon(k, zeta=0.05, *, exact=False):
    """Empirical-support threshold for a budget of ``k`` samples (arXiv 2507.14843v4, App. C.4).

    A correct completion never observed in k i.i.d. samples has probability at most epsilon with
    confidence ``1 - zeta``.

    Parameters
    ----------
    k : int or array_like of int, shape (n,)
        Sampling budget, ``k >= 1``.
    zeta : float, default 0.05
        Miss probability, in (0, 1).
    exact : bool, default False
        False gives the paper's bound ``-ln(zeta) / k`` (from ``log(1-p) <= -p``); True gives the
        exact solution of ``(1 - p)^k = zeta``, ``1 - zeta**(1/k)``, which is slightly smaller.

    Returns
    -------
    float or ndarray of float, shape (n,)
        Above 1 (k = 1 at zeta = 0.05: 2.996) with a warning: the bound then bounds nothing, so
        k samples cannot rule out an answer they never showed at confidence ``1 - zeta``.

    Examples
    --------
    >>> round(epsilon(8192), 7)  # the paper's 3.66e-4
    0.0003657
    """
    out = epsilon_kernel(k, zeta, exact)
    if np.any(out > 1):
        import warnings

        from leash.errors import LeashWarning

        worst = int(np.min(k))
        warnings.warn(LeashWarning(
            f"epsilon = {float(np.max(out)):.4g} is above 1 (k = {worst}, zeta = {zeta}): a "
            f"probability bound above 1 bounds nothing, so {worst} sample(s) cannot rule out an "
            f"answer they never showed at confidence 1 - zeta; use a larger k or zeta.",
            param="zeta", func="epsilon", value=zeta), stacklevel=2)
    return float(out) if np.ndim(out) == 0 else out


def epsilon_kernel(k, zeta, exact=False):
    """Epsilon of validated budgets ``k`` (int64, >= 1) and ``zeta`` (float in (0, 1))."""
    return -np.expm1(np.log(zeta) / k) if exact else -np.log(zeta) / k


@validate_params({"c": [COUNTS], "min_count": [MIN_COUNT]})
def found(c, min_count=1):
    """Whether a model "found" each question: at least ``min_count`` correct samples.

    Parameters
    ----------
    c : int or array_like of int, shape (n_questions,)
        Verified-correct samples per question.
    min_count : int, default 1
        The paper's rule is 1 (derived here: it reproduces every printed count).

    Returns
    -------
    bool or ndarray of bool, shape (n_questions,)
    """
    out = c >= min_count
    return bool(out) if out.ndim == 0 else out


def category_codes(found_base, found_rl):
    """Category codes 0..3 (index into ``CATEGORIES``) of the found masks of the two models."""
    # (base, rl): (1,1)->0, (0,1)->1, (1,0)->2, (0,0)->3
    return np.where(found_rl, np.where(found_base, 0, 1), np.where(found_base, 2, 3)).astype(
        np.int8)


def pair_codes(c_base, c_rl, min_count, func):
    """Category codes of the counts (int64) and ``min_count`` the public caller ``func``
    declared, after checking that both have one length: the kernel of :func:`support_codes`.
    """
    c_base, c_rl = np.atleast_1d(c_base), np.atleast_1d(c_rl)
    same_length(func, c_base=c_base, c_rl=c_rl)
    return category_codes(c_base >= min_count, c_rl >= min_count)


@validate_params({"c_base": [COUNTS], "c_rl": [COUNTS], "min_count": [MIN_COUNT]})
def support_codes(c_base, c_rl, *, min_count=1):
    """Category codes 0..3 (index into ``CATEGORIES``), vectorized.

    Parameters
    ----------
    c_base, c_rl : array_like of int, shape (n_questions,)
        Verified-correct counts of the base and the RLVR model on the same questions, at the
        same budget.
    min_count : int, default 1

    Returns
    -------
    ndarray of int8, shape (n_questions,)
        0 preservation, 1 expansion, 2 shrinkage, 3 out_of_support.
    """
    return pair_codes(c_base, c_rl, min_count, "support_codes")


@validate_params({"c_base": [COUNTS], "c_rl": [COUNTS], "min_count": [MIN_COUNT]})
def support_status(c_base, c_rl, *, min_count=1):
    """Per-question support category, as the names of ``CATEGORIES``.

    Parameters
    ----------
    c_base, c_rl : array_like of int, shape (n_questions,)
        Verified-correct counts of the base and RLVR model per question at the same budget.
    min_count : int, default 1
        Correct samples needed for a model to "find" a question (the paper uses 1).

    Returns
    -------
    ndarray of str, shape (n_questions,)
        One of ``CATEGORIES`` per question (``CATEGORIES[support_codes(...)]``). For an
        ordered pandas column: ``pandas.Categorical(status, categories=CATEGORIES,
        ordered=True)``.

    Examples
    --------
    >>> support_status([3, 0, 2, 0], [1, 4, 0, 0]).tolist()
    ['preservation', 'expansion', 'shrinkage', 'out_of_support']
    """
    codes = pair_codes(c_base, c_rl, min_count, "support_status")
    return np.asarray(CATEGORIES)[codes]


@validate_params({"c_base": [COUNTS], "c_rl": [COUNTS], "min_count": [MIN_COUNT]})
def support_counts(c_base, c_rl, *, min_count=1):
    """Counts P, E, S, O of questions per support category.

    Parameters
    ----------
    c_base, c_rl : array_like of int, shape (n_questions,)
    min_count : int, default 1

    Returns
    -------
    SupportCounts
        Named tuple of ints ``(P, E, S, O)`` summing to n_questions.

    Examples
    --------
    >>> support_counts([3, 0, 2, 0], [1, 4, 0, 0])
    SupportCounts(P=1, E=1, S=1, O=1)
    """
    codes = pair_codes(c_base, c_rl, min_count, "support_counts")
    counts = np.bincount(codes, minlength=4)
    return SupportCounts(*(int(x) for x in counts))


@validate_params({"P": [CATEGORY_COUNTS], "E": [CATEGORY_COUNTS], "S": [CATEGORY_COUNTS],
                  "O": [CATEGORY_COUNTS]})
def support_metrics(P, E, S, O):  # noqa: E741
    """SRR, NDR, SDS and NSCR from category counts (Def. 3.3), vectorized over rows.

    Parameters
    ----------
    P, E, S, O : int, float or array_like, shape (n_rows,)
        Preservation, expansion, shrinkage and out-of-support counts (non-negative; floats are
        allowed so that expected counts work). O enters no metric; it is validated only.

    Returns
    -------
    SupportMetrics
        ``SRR = P/(P+S)``, ``NDR = E/(P+E)``, ``SDS = 2 SRR NDR/(SRR+NDR)``,
        ``NSCR = (E-S)/(P+E+S)``; floats for scalar input, arrays of shape (n_rows,) otherwise.
        A zero denominator gives NaN. SDS is 0 when NDR = 0 and SRR > 0 (the paper prints
        0.000 for such rows), and NaN when SRR or NDR is NaN or both are 0.

    Examples
    --------
    >>> m = support_metrics(1355, 5, 56, 131)  # Table 1, ProRL-1.5B-v1, Math
    >>> round(m.SRR, 4), round(m.NDR, 4), round(m.NSCR, 3)
    (0.9603, 0.0037, -0.036)
    """
    same_length("support_metrics", P=P, E=E, S=S, O=O)
    p, e, s, _ = np.broadcast_arrays(P, E, S, O)
    out = support_metrics_kernel(p, e, s)
    if p.ndim == 0:
        return SupportMetrics(*(float(x) for x in out))
    return SupportMetrics(*out)


def support_metrics_kernel(p, e, s):
    """SRR, NDR, SDS, NSCR of validated float counts of one shape (the kernel behind
    :func:`support_metrics`, e.g. for bootstrap replicates).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        srr = np.where(p + s > 0, p / (p + s), np.nan)
        ndr = np.where(p + e > 0, e / (p + e), np.nan)
        hm = np.where(srr + ndr > 0, 2 * srr * ndr / (srr + ndr), np.nan)
        sds = np.where((ndr == 0) & (srr > 0), 0.0, hm)
        nscr = np.where(p + e + s > 0, (e - s) / (p + e + s), np.nan)
    return srr, ndr, sds, nscr


@validate_params({"n": [COUNTS], "c": [COUNTS], "k": [BUDGETS], "min_count": [MIN_COUNT]})
def found_probability(n, c, k, *, min_count=1):
    """Probability that a random k-subset of a question's n samples holds >= min_count correct.

    Exact (hypergeometric), no resampling. With ``min_count=1`` this is the unbiased pass@k.

    Parameters
    ----------
    n, c : array_like of int, shape (n_questions,)
        Samples and correct samples per question.
    k : int
        Budget, ``1 <= k <= n``.
    min_count : int, default 1

    Returns
    -------
    ndarray of float, shape (n_questions,)
    """
    func = "found_probability"
    same_length(func, n=n, c=c, k=k)
    check_c_le_n(n, c, func)
    n, c = np.atleast_1d(n), np.atleast_1d(c)
    check_k_in_range(k, n, func)
    return _found_probability(n, c, k, min_count)


def _found_probability(n, c, k, min_count):
    """The kernel behind :func:`found_probability`, for validated 1-D counts and budgets."""
    if min_count == 1:
        return pass_at_k_kernel(n, c, k)
    # scipy's hypergeom(M=population, n=successes, N=draws); sf(m - 1) = P(X >= m).
    from scipy import stats as _st  # here, not at import: scipy.stats costs ~0.8 s

    return _st.hypergeom.sf(min_count - 1, n, c, k)


@validate_params({"n_base": [COUNTS], "c_base": [COUNTS], "n_rl": [COUNTS], "c_rl": [COUNTS],
                  "k": [BUDGETS], "min_count": [MIN_COUNT]})
def expected_support_counts(n_base, c_base, n_rl, c_rl, k, *, min_count=1):
    """Expected P, E, S, O at a budget ``k`` below the number of samples, computed exactly.

    Each model's k samples are a random subset of its n samples, drawn independently for the
    two models, so with f = found_probability per question,
    E[P] = sum f_b f_r, E[E] = sum (1-f_b) f_r, E[S] = sum f_b (1-f_r), E[O] = sum (1-f_b)(1-f_r).
    Evaluating this over a grid of k draws support dynamics as smooth curves.

    Parameters
    ----------
    n_base, c_base, n_rl, c_rl : array_like of int, shape (n_questions,)
    k : int
        Budget, ``1 <= k <= min(n_base, n_rl)``.
    min_count : int, default 1

    Returns
    -------
    SupportCounts
        Named tuple of floats summing to n_questions.
    """
    func = "expected_support_counts"
    same_length(func, n_base=n_base, c_base=c_base, n_rl=n_rl, c_rl=c_rl, k=k)
    check_c_le_n(n_base, c_base, func, "n_base", "c_base")
    check_c_le_n(n_rl, c_rl, func, "n_rl", "c_rl")
    n_base, c_base, n_rl, c_rl = (np.atleast_1d(a) for a in (n_base, c_base, n_rl, c_rl))
    check_k_in_range(k, n_base, func, "n_base")
    check_k_in_range(k, n_rl, func, "n_rl")
    fb = _found_probability(n_base, c_base, k, min_count)
    fr = _found_probability(n_rl, c_rl, k, min_count)
    return SupportCounts(
        float(np.sum(fb * fr)),
        float(np.sum((1 - fb) * fr)),
        float(np.sum(fb * (1 - fr))),
        float(np.sum((1 - fb) * (1 - fr))),
    )


@validate_params({"p": [PROBABILITIES], "k": [BUDGETS]})
def population_pass_at_k(p, k):
    """pass@k of a model whose per-sample success probability is ``p`` (Cor. C.2).

    Parameters
    ----------
    p : float or array_like of float, shape (n,)
        True probability that one sample is correct.
    k : int or array_like of int, broadcastable with ``p``
        Number of i.i.d. samples, ``k >= 1``.

    Returns
    -------
    float or ndarray of float
        ``1 - (1 - p)**k``, computed as ``-expm1(k * log1p(-p))`` so small values stay exact.

    Raises
    ------
    ValueError
        If a ``p`` is outside [0, 1] or not finite, if a ``k`` is below 1 or not a whole number
        (k = 0 is no budget at all, and gave 0 * log(0) = NaN at p = 1), or if the shapes of
        ``p`` and ``k`` do not broadcast.
    TypeError
        If ``p`` or ``k`` is a bool, a string or otherwise not numeric.
    """
    _check_broadcast(p, k, "population_pass_at_k")
    out = _population_pass_at_k(p, k)
    return float(out) if np.ndim(out) == 0 else out


def _check_broadcast(p, k, func):
    """Refuse budgets ``k`` whose shape does not broadcast with that of ``p``."""
    try:
        np.broadcast_shapes(p.shape, k.shape)
    except ValueError:
        raise invalid("k", func, f"broadcastable with the shape of 'p', {p.shape}",
                      f"an array of shape {k.shape}") from None


def _population_pass_at_k(p, k):
    """``1 - (1 - p)**k`` of validated ``p`` and ``k`` (the kernel of population_pass_at_k)."""
    with np.errstate(divide="ignore"):
        return -np.expm1(k * np.log1p(-p)) + 0.0


@validate_params({"p": [PROBABILITIES], "k": [BUDGETS], "zeta": [ZETA]})
def misclassification_probability(p, k, zeta=0.05):
    """Probability that the empirical rule (>= 1 correct in k samples) contradicts the truth.

    The truth is "in support" when ``p > epsilon(k, zeta)``. The rule errs on an in-support
    question when all k samples fail, with probability ``(1 - p)**k`` (at most ``zeta`` by the
    choice of epsilon), and on an out-of-support question when some sample succeeds, with
    probability ``1 - (1 - p)**k``, which is about ``1 - zeta`` just below epsilon (slightly
    more with the paper's epsilon, a little above the exact one): the boundary is fuzzy.

    Parameters
    ----------
    p : float or array_like of float, shape (n,)
        True per-sample success probability.
    k : int
        Budget, ``k >= 1``.
    zeta : float, default 0.05
        Miss probability of :func:`epsilon`, in (0, 1).

    Returns
    -------
    float or ndarray of float, shape (n,)
    """
    _check_broadcast(p, k, "misclassification_probability")
    found = _population_pass_at_k(p, k)
    out = np.where(p > epsilon_kernel(k, zeta), 1.0 - found, found)
    return float(out) if np.ndim(out) == 0 else out
