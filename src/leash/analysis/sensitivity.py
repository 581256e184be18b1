"""How much the support conclusions depend on the analyst's choices: zeta, min_count, budget k,
and the rule itself; and the significance of expansion against shrinkage across benchmarks.

Two rules decide whether a model "found" a question at budget k:

``"count"`` (the paper's: derived here from the printed counts of Tables 3, 4 and 6-12)
    at least ``min_count`` of the k samples are correct (the paper: 1).
``"rate"`` (the alternative reading the paper does NOT use)
    the empirical rate exceeds the threshold, c/k > epsilon(k, zeta). With the paper's
    epsilon = -ln(zeta)/k this is c > -ln(zeta) whatever k is, i.e. a count rule with
    min_count = floor(-ln(zeta)) + 1 (3 at zeta = 0.05). :func:`rate_rule_min_count` computes it
    for any epsilon, so both rules run through one code path.

At the full budget counts are exact; below it the sweep uses exact expected counts over random
k-subsets of the n samples (hypergeometric), which is defined for every min_count. A threshold
no question can reach (more correct samples than the budget, or than a question's n at the full
budget: min_count 2 on k = 1 data) would put every such question out of support whatever the
models do: it is left out of the sweep, and a warning names it.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral

import numpy as np
import pandas as pd

from leash.analysis.tables import (
    BY,
    DOMAINS,
    FRAME,
    POOL,
    groups_of,
    require_columns,
    support_table,
)
from leash.core._validation import Counts, Floats, Interval, validate_params
from leash.core.stats import holm
from leash.core.support import ZETA, epsilon_kernel
from leash.errors import LeashValueError

__all__ = ["RULES", "rate_rule_min_count", "sensitivity_sweep", "significance_table"]

RULES = ("count", "rate")


@validate_params({"k": [Interval(Integral, 1, None, closed="left")], "zeta": [ZETA],
                  "exact": ["boolean"]})
def rate_rule_min_count(k, zeta=0.05, *, exact=False):
    """The smallest correct count c with c / k > epsilon(k, zeta).

    Parameters
    ----------
    k : int
        Budget.
    zeta : float, default 0.05
    exact : bool, default False
        Use the exact epsilon ``1 - zeta**(1/k)`` instead of the paper's ``-ln(zeta)/k``.

    Returns
    -------
    int
        ``floor(k * epsilon) + 1``.

    Examples
    --------
    >>> rate_rule_min_count(8192), rate_rule_min_count(32, 0.5)
    (3, 1)
    """
    return int(math.floor(k * epsilon_kernel(k, zeta, exact) + 1e-12)) + 1


@validate_params({
    "paired": FRAME, "ks": [Counts(minimum=1, scalar=False, nonempty=True), None],
    "zetas": [Floats(0, 1, closed="neither", ndim=(1,))],
    "min_counts": [Counts(minimum=1, scalar=False)], "domains": DOMAINS, "by": BY, "pool": POOL})
def sensitivity_sweep(paired: pd.DataFrame, *, ks=None, zetas=(0.01, 0.05, 0.1, 0.2),
                      min_counts=(1, 2, 3, 5), domains=None, by=(), pool=True):
    """Support counts and metrics over a grid of budgets, thresholds and both rules.

    Parameters
    ----------
    paired : pandas.DataFrame
        Paired per-question frame (see :func:`leash.analysis.tables.support_table`); both models
        must
        have the same n on each question.
    ks : sequence of int, optional
        Budgets (each <= the smallest n), the same for every benchmark. Default: each
        benchmark at its own full budget, its n (for :meth:`leash.sources.study.Study.paired`, the
        study's declared budget), with exact counts; ``full_budget`` is then True.
    zetas : sequence of float
        Confidence parameters for the "rate" rule.
    min_counts : sequence of int
        Thresholds for the "count" rule (1 is the paper's). A threshold (of either rule) above
        the budget, or above some question's n at the full budget, is left out with a warning;
        none left is a ValueError.
    domains, by, pool
        As in :func:`leash.analysis.tables.support_table`.

    Returns
    -------
    pandas.DataFrame
        One row per (rule, setting, budget, by..., scope, benchmark) with columns ``rule``,
        ``zeta`` (NaN for "count"), ``min_count`` (the effective count threshold), ``k`` (the
        row's samples per question: the budget swept, or the benchmark's n; NA on a pooled
        row whose benchmarks differ), ``k_min``/``k_max`` (the row's smallest and largest
        budget), ``full_budget`` (True where every benchmark is at its own n, ``ks`` not
        given), ``exact_counts`` (False where counts are expectations) and the support table
        columns (without the McNemar tests and the significant subsets of E and S, which need
        exact counts).
    """
    require_columns(paired, ["n_base", "n_rl"], "sensitivity_sweep")
    n_min = int(min(paired["n_base"].min(), paired["n_rl"].min()))
    n_max = int(max(paired["n_base"].max(), paired["n_rl"].max()))
    full_n = sorted(set(paired["n_base"].astype(int)))  # the budgets of k=None
    settings = [("count", np.nan, int(m)) for m in min_counts]
    # counts within a budget below the samples on hand are unknown where the first ones do not
    # fix them (leash.analysis.pairing); only found-ness by the first correct sample is known
    unknown = bool(paired["c_base"].isna().any() or paired["c_rl"].isna().any()) \
        if {"c_base", "c_rl"} <= set(paired.columns) else False
    frames, skipped, impossible = [], [], []
    for k in [None] if ks is None else [int(k) for k in ks]:
        rate = []
        for z in zetas:
            ms = {rate_rule_min_count(b, z) for b in (full_n if k is None else [k])}
            if len(ms) > 1:  # not with the paper's epsilon, whose k * epsilon is -ln(zeta)
                raise LeashValueError(f"the rate rule at zeta = {z} needs {sorted(ms)} correct "
                                      f"samples at the budgets {full_n}; pass ks to sweep one "
                                      "budget.", func="sensitivity_sweep", param="zetas",
                                      value=float(z))
            rate.append(("rate", float(z), ms.pop()))
        exact = k is None or k == n_min == n_max
        for rule, zeta, m in settings + rate:
            # no question has more than k correct of k (at the full budget: of its n), so such
            # a threshold finds nothing and its row says nothing of the models
            if m > (n_min if k is None else k):
                impossible.append((f"min_count {m}" if rule == "count" else f"zeta {zeta}")
                                  + (f" at k = {k}" if k is not None else
                                     f" at the full budget (n = {n_min}"
                                     + (" on some question)" if n_min < n_max else ")")))
                continue
            if unknown and (m != 1 or not exact):  # needs the counts
                skipped.append(f"min_count {m}" if rule == "count" else f"zeta {zeta}")
                skipped[-1] += f" at k = {k}" if k else ""
                continue
            t = support_table(paired, k=None if exact else k, min_count=m, domains=domains,
                              by=by, pool=pool, budget_rule="expected", fdr=None)
            t = t.drop(columns=[c for c in t.columns if c.startswith(("mcnemar", "E/(E+S)",
                                                                       "significant"))])
            head = {"rule": rule, "zeta": zeta, "min_count": m, **{c: t.pop(c) for c in (
                "k", "k_min", "k_max")}, "full_budget": k is None, "exact_counts": exact}
            frames.append(pd.concat([pd.DataFrame(head, index=t.index), t], axis=1))
    if impossible:
        if not frames:
            raise LeashValueError(f"no setting can be computed: {', '.join(impossible)} need "
                                  "more correct samples than k.", func="sensitivity_sweep")
        warnings.warn(f"sensitivity_sweep: left out {', '.join(impossible)}: they need more "
                      "correct samples than the budget has, so every question would be out of "
                      "support.", stacklevel=3)
    if skipped:
        why = ("the correct counts within the pairing's budget are unknown where it is below "
               "the samples on hand (a summary keeps the first correct sample, not the count "
               "among the first k)")
        if not frames:
            raise LeashValueError(f"no setting can be computed: {why}.",
                                  func="sensitivity_sweep")
        warnings.warn(f"sensitivity_sweep: left out {', '.join(skipped)}: {why}; only "
                      "min_count 1 at the full budget is exact there.", stacklevel=3)
    return pd.concat(frames, ignore_index=True)


@validate_params({"support": FRAME, "by": BY})
def significance_table(support: pd.DataFrame, *, by=()):
    """McNemar p-values of expansion vs shrinkage with a Holm correction across benchmarks.

    Parameters
    ----------
    support : pandas.DataFrame
        A :func:`leash.analysis.tables.support_table` result (exact counts, with ``mcnemar_p``).
    by : sequence of str
        Grouping columns; the correction runs within each group, over its per-benchmark rows
        (pooled rows are reported with their own unadjusted p-value: they are not separate
        tests of the same family).

    Returns
    -------
    pandas.DataFrame
        ``*by, scope, benchmark, E, S, E/(E+S), E/(E+S) low, E/(E+S) high, mcnemar_p,
        holm_p, significant_0.05`` (on the Holm-adjusted value for benchmark rows).
    """
    by = list(by)
    require_columns(support, ["scope", "benchmark", "E", "S", "mcnemar_p", *by],
                    "significance_table")
    out = support.copy()
    out["holm_p"] = out["mcnemar_p"]
    for _, g in groups_of(out, by, sort=False):
        idx = g.index[g["scope"] == "benchmark"]
        out.loc[idx, "holm_p"] = holm(out.loc[idx, "mcnemar_p"].to_numpy(dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["E/(E+S)"] = out["E"] / (out["E"] + out["S"])
    out["significant_0.05"] = out["holm_p"] < 0.05
    cols = [*by, "scope", "benchmark", "E", "S", "E/(E+S)", "E/(E+S) low", "E/(E+S) high",
            "mcnemar_p", "holm_p", "significant_0.05"]
    return out[[c for c in cols if c in out.columns]]
