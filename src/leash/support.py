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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._checks import (
    as_count_array,
    as_float_array,
    check_at_least,
    check_k_in_range,
    check_n_c,
    check_positive_int,
    check_probability,
    refuse_values,
    same_length,
)
from .passk import _pass_at_k

CATEGORIES = ("preservation", "expansion", "shrinkage", "out_of_support")

__all__ = [
    "CATEGORIES",
    "SupportCounts",
    "SupportMetrics",
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

    Examples
    --------
    >>> round(epsilon(8192), 7)  # the paper's 3.66e-4
    0.0003657
    """
    func = "epsilon"
    zeta = check_probability(zeta, "zeta", func)
    k = as_count_array(k, "k", func)
    check_at_least(k, "k", func)
    out = _epsilon(k, zeta, exact)
    return float(out) if np.ndim(out) == 0 else out


def _epsilon(k, zeta, exact=False):
    """epsilon of validated budgets ``k`` (int64, >= 1) and ``zeta`` (float in (0, 1))."""
    return -np.expm1(np.log(zeta) / k) if exact else -np.log(zeta) / k


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
    c = as_count_array(c, "c", "found")
    min_count = check_positive_int(min_count, "min_count", "found")
    out = c >= min_count
    return bool(out) if out.ndim == 0 else out


def _found_pair(c_base, c_rl, min_count, func):
    """Validated found masks of both models (1-D, one length); ``func`` is the public caller."""
    c_base = np.atleast_1d(as_count_array(c_base, "c_base", func))
    c_rl = np.atleast_1d(as_count_array(c_rl, "c_rl", func))
    same_length(func, c_base=c_base, c_rl=c_rl)
    min_count = check_positive_int(min_count, "min_count", func)
    return c_base >= min_count, c_rl >= min_count


def _codes(found_base, found_rl):
    """Category codes of validated found masks: the kernel behind :func:`support_codes`."""
    # (base, rl): (1,1)->0, (0,1)->1, (1,0)->2, (0,0)->3
    return np.where(found_rl, np.where(found_base, 0, 1), np.where(found_base, 2, 3)).astype(
        np.int8)


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
    return _codes(*_found_pair(c_base, c_rl, min_count, "support_codes"))


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
    """
    codes = _codes(*_found_pair(c_base, c_rl, min_count, "support_status"))
    return np.asarray(CATEGORIES)[codes]


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
    """
    codes = _codes(*_found_pair(c_base, c_rl, min_count, "support_counts"))
    counts = np.bincount(codes, minlength=4)
    return SupportCounts(*(int(x) for x in counts))


def support_metrics(P, E, S, O):  # noqa: E741, N803
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
    func = "support_metrics"
    arrs = []
    for name, x in (("P", P), ("E", E), ("S", S), ("O", O)):
        # Bools are not counts (True would count as 1 question); strings are not numbers.
        a = as_float_array(x, name, func, must="be numeric")
        if a.ndim > 1:
            raise ValueError(
                f"The '{name}' parameter of {func} must be a scalar or 1-D. Got shape {a.shape}."
            )
        refuse_values(a, ~np.isfinite(a) | (a < 0), name, func, "be finite and non-negative")
        arrs.append(a)
    same_length(func, P=arrs[0], E=arrs[1], S=arrs[2], O=arrs[3])
    p, e, s, _ = np.broadcast_arrays(*arrs)
    out = _metrics(p, e, s)
    if p.ndim == 0:
        return SupportMetrics(*(float(x) for x in out))
    return SupportMetrics(*out)


def _metrics(p, e, s):
    """SRR, NDR, SDS, NSCR of validated float counts of one shape (the kernel behind
    :func:`support_metrics`, e.g. for bootstrap replicates)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        srr = np.where(p + s > 0, p / (p + s), np.nan)
        ndr = np.where(p + e > 0, e / (p + e), np.nan)
        hm = np.where(srr + ndr > 0, 2 * srr * ndr / (srr + ndr), np.nan)
        sds = np.where((ndr == 0) & (srr > 0), 0.0, hm)
        nscr = np.where(p + e + s > 0, (e - s) / (p + e + s), np.nan)
    return srr, ndr, sds, nscr


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
    min_count = check_positive_int(min_count, "min_count", func)
    n, c = check_n_c(n, c, func)
    n, c = np.atleast_1d(n), np.atleast_1d(c)
    k = as_count_array(k, "k", func)
    same_length(func, n=n, c=c, k=k)
    check_k_in_range(k, n, func)
    return _found_probability(n, c, k, min_count)


def _found_probability(n, c, k, min_count):
    """The kernel behind :func:`found_probability`, for validated 1-D counts and budgets."""
    if min_count == 1:
        return _pass_at_k(n, c, k)
    # scipy's hypergeom(M=population, n=successes, N=draws); sf(m - 1) = P(X >= m).
    from scipy import stats as _st  # here, not at import: scipy.stats costs ~0.8 s

    return _st.hypergeom.sf(min_count - 1, n, c, k)


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
    n_base, c_base = check_n_c(n_base, c_base, func, "n_base", "c_base")
    n_rl, c_rl = check_n_c(n_rl, c_rl, func, "n_rl", "c_rl")
    n_base, c_base, n_rl, c_rl = (np.atleast_1d(a) for a in (n_base, c_base, n_rl, c_rl))
    k = as_count_array(k, "k", func)
    same_length(func, c_base=c_base, c_rl=c_rl, k=k)
    check_k_in_range(k, n_base, func, "n_base")
    check_k_in_range(k, n_rl, func, "n_rl")
    min_count = check_positive_int(min_count, "min_count", func)
    fb = _found_probability(n_base, c_base, k, min_count)
    fr = _found_probability(n_rl, c_rl, k, min_count)
    return SupportCounts(
        float(np.sum(fb * fr)),
        float(np.sum((1 - fb) * fr)),
        float(np.sum(fb * (1 - fr))),
        float(np.sum((1 - fb) * (1 - fr))),
    )


def _check_p(p, func):
    p = as_float_array(p, "p", func)
    refuse_values(p, ~np.isfinite(p) | (p < 0) | (p > 1), "p", func,
                  "hold probabilities in [0, 1]")
    return p


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
    func = "population_pass_at_k"
    p, k = _p_and_k(p, k, func)
    out = _population_pass_at_k(p, k)
    return float(out) if np.ndim(out) == 0 else out


def _p_and_k(p, k, func):
    """Validated probabilities ``p`` and budgets ``k`` >= 1 of broadcastable shapes."""
    p = _check_p(p, func)
    k = as_count_array(k, "k", func)
    check_at_least(k, "k", func)
    try:
        np.broadcast_shapes(p.shape, k.shape)
    except ValueError:
        raise ValueError(
            f"The 'p' and 'k' parameters of {func} must have broadcastable shapes. "
            f"Got {p.shape} and {k.shape}."
        ) from None
    return p, k


def _population_pass_at_k(p, k):
    """``1 - (1 - p)**k`` of validated ``p`` and ``k`` (the kernel of population_pass_at_k)."""
    with np.errstate(divide="ignore"):
        return -np.expm1(k * np.log1p(-p)) + 0.0


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
    func = "misclassification_probability"
    p, k = _p_and_k(p, k, func)
    zeta = check_probability(zeta, "zeta", func)
    found = _population_pass_at_k(p, k)
    out = np.where(p > _epsilon(k, zeta), 1.0 - found, found)
    return float(out) if np.ndim(out) == 0 else out
