"""Statistics the paper does not report: bootstrap intervals, the exact McNemar test of expansion
against shrinkage, the crossover budget, and the Holm correction.

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
(P, E, S, O and four ratios) or a whole pass@k curve per replicate is much faster as one matrix
product of resampling weights with per-question indicators, as done here.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as _st

from ._checks import (
    as_budgets,
    as_count,
    as_float_array,
    check_at_least,
    check_choice,
    check_ks_in_range,
    check_positive_int,
    check_probability,
    refuse_values,
    same_length,
)
from .passk import ESTIMATORS, _curve, _curve_inputs
from .support import _codes, _found_pair, _metrics

__all__ = [
    "McNemarResult",
    "mcnemar_exact",
    "resampling_weights",
    "bootstrap_support",
    "bootstrap_pass_at_k",
    "crossover_budget",
    "bootstrap_crossover",
    "holm",
]

SUPPORT_COLUMNS = ("P", "E", "S", "O", "SRR", "NDR", "SDS", "NSCR")
MIN_N_BOOT = 2  # fewer replicates are not a distribution (see the module docstring)


class McNemarResult(NamedTuple):
    """Exact McNemar (sign) test of E against S and a Clopper-Pearson interval for E/(E+S)."""

    p_value: float
    proportion: float
    ci_low: float
    ci_high: float


def mcnemar_exact(E, S, *, level=0.95):  # noqa: N803
    """Exact McNemar test: are expansions and shrinkages equally likely?

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
    """
    func = "mcnemar_exact"
    e = as_count(E, "E", func)
    s = as_count(S, "S", func)
    level = check_probability(level, "level", func)
    if e + s == 0:
        return McNemarResult(1.0, float("nan"), float("nan"), float("nan"))
    res = _st.binomtest(e, e + s, 0.5, alternative="two-sided")
    ci = res.proportion_ci(confidence_level=level, method="exact")
    return McNemarResult(float(res.pvalue), e / (e + s), float(ci.low), float(ci.high))


def resampling_weights(n_items, *, rng, n_boot, strata=None):
    """How often each question appears in each bootstrap replicate.

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
    _check_rng(rng, func)
    n_boot = check_positive_int(n_boot, "n_boot", func)
    n_items = check_positive_int(n_items, "n_items", func)
    if strata is None:
        groups = [np.arange(n_items)]
    else:
        strata = np.asarray(strata)
        if strata.shape != (n_items,):
            raise ValueError(
                f"The 'strata' parameter of {func} must have shape ({n_items},). "
                f"Got {strata.shape} instead."
            )
        _, inv = np.unique(strata, return_inverse=True)
        groups = [np.flatnonzero(inv == g) for g in range(inv.max() + 1)]
    w = np.zeros((n_boot, n_items), dtype=np.int64)
    rows = np.arange(n_boot)[:, None]
    for members in groups:
        draw = members[rng.integers(0, members.size, size=(n_boot, members.size))]
        np.add.at(w, (np.broadcast_to(rows, draw.shape), draw), 1)
    return w


def _check_rng(rng, func):
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"The 'rng' parameter of {func} must be a numpy.random.Generator (for example "
            f"numpy.random.default_rng(0)). Got {type(rng).__name__} instead."
        )


def _check_n_boot(n_boot, level, func):
    """n_boot >= MIN_N_BOOT (an error) and enough replicates beyond each end (a warning)."""
    n_boot = check_positive_int(n_boot, "n_boot", func, minimum=MIN_N_BOOT)
    if (n_boot - 1) * (1 - level) / 2 < 1:
        need = math.ceil(1 + 2 / (1 - level) - 1e-9)
        warnings.warn(
            f"{func}: with n_boot={n_boot} at level={level}, no bootstrap replicate lies beyond "
            f"the ends of the percentile interval, which are then the extreme replicates; use "
            f"n_boot >= {need} (1000 or more for stable ends).", RuntimeWarning, stacklevel=3)
    return n_boot


def _resampling_is_degenerate(n_items, strata, func, stacklevel=3):
    """True (with a RuntimeWarning) when every replicate must equal the data; 0 items: error."""
    if n_items == 0:
        raise ValueError(f"{func} needs at least one question to resample. Got 0 questions.")
    if strata is None:
        largest = n_items
    else:
        strata = np.asarray(strata)
        if strata.shape != (n_items,):
            raise ValueError(
                f"The 'strata' parameter of {func} must have shape ({n_items},). "
                f"Got {strata.shape} instead."
            )
        largest = int(np.unique(strata, return_counts=True)[1].max())
    if largest >= 2:
        return False
    what = ("one question" if strata is None or n_items == 1
            else f"{n_items} questions, each alone in its stratum")
    warnings.warn(
        f"{func}: the bootstrap over {what} is degenerate (every replicate equals the data), so "
        "the interval bounds are NaN.", RuntimeWarning, stacklevel=stacklevel)
    return True


def _interval(rep, level, method="linear"):
    a = (1 - level) / 2
    # A ratio undefined in every replicate (e.g. NDR when P + E = 0) has a NaN interval; numpy's
    # "All-NaN slice" warning says nothing the NaN does not.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanquantile(rep, a, axis=0, method=method) if rep.size else np.nan
        hi = np.nanquantile(rep, 1 - a, axis=0, method=method) if rep.size else np.nan
    return lo, hi


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
        With fewer than two questions to resample (``low``/``high`` are then NaN), or too few
        replicates for ``level``.
    """
    func = "bootstrap_support"
    level = check_probability(level, "level", func)
    n_boot = _check_n_boot(n_boot, level, func)
    _check_rng(rng, func)
    codes = _codes(*_found_pair(c_base, c_rl, min_count, func))
    degenerate = _resampling_is_degenerate(codes.size, strata, func)
    onehot = (codes[:, None] == np.arange(4)[None, :]).astype(np.float64)
    w = resampling_weights(codes.size, rng=rng, n_boot=n_boot, strata=strata)
    counts = w @ onehot  # (n_boot, 4)
    rep = np.column_stack([counts, np.column_stack(_metrics(*counts.T[:3]))])
    point_counts = onehot.sum(axis=0)
    point = np.concatenate([point_counts, np.asarray(_metrics(*point_counts[:3]))])
    lo, hi = _interval(rep, level) if not degenerate else (np.nan, np.nan)
    frame = pd.DataFrame({"estimate": point, "low": lo, "high": hi}, index=list(SUPPORT_COLUMNS))
    return (frame, rep) if return_replicates else frame


def _paired_curves(func, n_base, c_base, n_rl, c_rl, ks, rng, n_boot, strata, estimator,
                   first_correct_base, first_correct_rl):
    """Per-question pass@k matrices of both models and the shared resampling weights.

    Every input is validated here, once, with the names of the public function ``func``; the
    curves come from the unchecked kernel.
    """
    check_choice(estimator, "estimator", func, ESTIMATORS)
    _check_rng(rng, func)
    ks = as_budgets(ks, "ks", func)
    n_base, c_base, fc_base = _curve_inputs(n_base, c_base, first_correct_base, estimator, func,
                                            "n_base", "c_base", "first_correct_base")
    n_rl, c_rl, fc_rl = _curve_inputs(n_rl, c_rl, first_correct_rl, estimator, func, "n_rl",
                                      "c_rl", "first_correct_rl")
    same_length(func, c_base=c_base, c_rl=c_rl)
    check_ks_in_range(ks, n_base, func, n_name="n_base")
    check_ks_in_range(ks, n_rl, func, n_name="n_rl")
    degenerate = _resampling_is_degenerate(n_base.size, strata, func, stacklevel=4)
    mb = _curve(n_base, c_base, ks, fc_base)
    mr = _curve(n_rl, c_rl, ks, fc_rl)
    w = resampling_weights(mb.shape[0], rng=rng, n_boot=n_boot, strata=strata)
    return mb, mr, w.astype(np.float64), degenerate, ks


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
    level = check_probability(level, "level", func)
    n_boot = _check_n_boot(n_boot, level, func)
    mb, mr, w, degenerate, ks = _paired_curves(func, n_base, c_base, n_rl, c_rl, ks, rng,
                                               n_boot, strata, estimator, first_correct_base,
                                               first_correct_rl)
    q = mb.shape[0]
    series = {"base": mb, "rlvr": mr, "rlvr - base": mr - mb}
    frames = []
    for name, m in series.items():
        rep = (w @ m) / q
        lo, hi = _interval(rep, level) if not degenerate else (np.nan, np.nan)
        frames.append(pd.DataFrame({"k": ks, "series": name, "estimate": m.mean(axis=0),
                                    "low": lo, "high": hi}))
    return pd.concat(frames, ignore_index=True)


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
    b = as_float_array(curve_base, "curve_base", func)
    r = as_float_array(curve_rl, "curve_rl", func)
    for name, x in (("curve_base", b), ("curve_rl", r)):
        # NaN would silently read as "not reached" (NaN >= x is False)
        refuse_values(x, ~np.isfinite(x), name, func, "hold finite pass@k values", flat=True)
    ks = as_budgets(ks, "ks", func)
    check_at_least(ks, "ks", func)
    if b.shape != r.shape or b.ndim == 0 or b.shape[-1] != ks.size:
        raise ValueError(
            f"The curves passed to {func} must have the same shape, 1-D or more, with last axis "
            f"len(ks)={ks.size}. Got {b.shape} and {r.shape}."
        )
    if np.any(np.diff(ks) <= 0):
        raise ValueError(f"The 'ks' parameter of {func} must increase. Got {ks}.")
    out = _crossover(b, r, ks)
    return float(out) if out.ndim == 0 else out


def _crossover(b, r, ks):
    """The kernel of :func:`crossover_budget` (validated curves, increasing budgets)."""
    reached = b >= r
    first = np.argmax(reached, axis=-1)
    return np.where(reached.any(axis=-1), ks.astype(np.float64)[first], np.nan)


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
    level = check_probability(level, "level", func)
    n_boot = _check_n_boot(n_boot, level, func)
    mb, mr, w, degenerate, ks = _paired_curves(func, n_base, c_base, n_rl, c_rl, ks, rng,
                                               n_boot, strata, estimator, first_correct_base,
                                               first_correct_rl)
    if np.any(np.diff(ks) <= 0):
        raise ValueError(f"The 'ks' parameter of {func} must increase. Got {ks}.")
    q = mb.shape[0]
    rep = _crossover((w @ mb) / q, (w @ mr) / q, ks)
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
    """
    p = as_float_array(pvalues, "pvalues", "holm")
    if p.ndim != 1:
        raise ValueError(f"The 'pvalues' parameter of holm must be 1-D. Got shape {p.shape}.")
    ok = ~np.isnan(p)
    # +-inf included: only NaN means "no test"
    refuse_values(p, ok & ((p < 0) | (p > 1)), "pvalues", "holm",
                  "lie in [0, 1] (NaN for no test)")
    out = np.full_like(p, np.nan)
    idx = np.flatnonzero(ok)
    m = idx.size
    if m == 0:
        return out
    order = np.argsort(p[idx], kind="stable")
    adj = np.minimum(1.0, (m - np.arange(m)) * p[idx][order])
    out[idx[order]] = np.maximum.accumulate(adj)
    return out
