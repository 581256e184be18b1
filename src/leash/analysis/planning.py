"""How many samples a study needs: from a pilot's per-question success rates, what each budget k
would show, how much of it would be misclassified, and the budget at which an expansion of a
given size is detected with a given power.

A pilot of n samples per question estimates each question's success rate by p = c / n, for
both models. At a budget k a question with rate p is found with probability 1 - (1 - p)^k
(:func:`leash.core.support.population_pass_at_k`); its category *by the truth* at k is decided
by epsilon(k) = -ln(zeta) / k (arXiv 2507.14843v4, App. C.4: in support when p > epsilon), so
the observed E and S at k are partly misclassified: a question truly preserved shows as E when
the base misses it by chance (:func:`leash.core.support.misclassification_probability` is the
per-model rate). Everything here is exact given the rates; what the rates cannot say is said:
a question the pilot never solved counts as p = 0 (a pilot of n samples cannot see rates
below about 1/n), so budgets far beyond the pilot's n are extrapolations.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import pandas as pd

from leash.analysis.tables import BY, FRAME, groups_of, require_columns
from leash.core._validation import (
    Counts,
    Floats,
    Interval,
    SequenceOf,
    StrOptions,
    validate_params,
)
from leash.core.stats import ALPHA, DETECTION_RULES, INCREASING_GRID, detection_budget
from leash.core.support import (
    ZETA,
    epsilon_kernel,
    misclassification_probability,
    population_pass_at_k,
)
from leash.errors import LeashValueError

__all__ = ["PLAN_COLUMNS", "pilot_rates", "budget_plan", "found_probability_table",
           "detection_table", "default_plan_ks"]

#: The columns of :func:`budget_plan` after the ``by`` columns.
PLAN_COLUMNS = ["k", "epsilon", "N", "P", "E", "S", "O", "true P", "true E", "true S", "true O",
                "E misclassified", "S misclassified", "misclassified base", "misclassified rl"]
RATES = Floats(0, 1, ndim=(1,), nonempty=True)


@validate_params({"paired": FRAME})
def pilot_rates(paired: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The pilot's success rates ``c / n`` of the base and the RLVR model per question.

    Parameters
    ----------
    paired : pandas.DataFrame
        ``n_base, c_base, n_rl, c_rl`` per question (known counts).

    Returns
    -------
    (ndarray, ndarray)
        The base's and the RLVR model's rates.
    """
    require_columns(paired, ["n_base", "c_base", "n_rl", "c_rl"], "pilot_rates")
    out = []
    for side in ("base", "rl"):
        n, c = paired[f"n_{side}"], paired[f"c_{side}"]
        bad = n.isna() | c.isna() | ~(n >= 1) | ~(c <= n) | ~(c >= 0)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise LeashValueError(f"question at row {i} has n_{side} = {n.iat[i]}, c_{side} = "
                                  f"{c.iat[i]}; a rate needs n >= 1 and 0 <= c <= n known (pair "
                                  "the pilot at a common budget).", func="pilot_rates",
                                  key=f"c_{side}", value=c.iat[i])
        out.append(c.to_numpy(dtype=np.float64) / n.to_numpy(dtype=np.float64))
    return out[0], out[1]


@validate_params({"n_max": [Interval(Integral, 1, None, closed="left")]})
def default_plan_ks(n_max):
    """Budgets from 1 up to 16 times the pilot's samples, powers of two (and ``n_max``)."""
    top = int(n_max) * 16
    ks = 2 ** np.arange(int(np.floor(np.log2(top))) + 1)
    return np.unique(np.append(ks, n_max)).astype(np.int64)


@validate_params({"paired": FRAME, "ks": [Counts(minimum=1, scalar=False, nonempty=True), None],
                  "zeta": [ZETA], "by": BY})
def budget_plan(paired: pd.DataFrame, ks=None, *, zeta=0.05, by=()):
    """What each budget would show, from a pilot's per-question rates.

    Parameters
    ----------
    paired : pandas.DataFrame
        The pilot: per-question counts of the pair (``n_base, c_base, n_rl, c_rl`` and ``by``).
    ks : array_like of int, optional
        Budgets; default :func:`default_plan_ks` of the pilot's largest n.
    zeta : float, default 0.05
        Miss probability of epsilon, which decides the true category at each budget.
    by : sequence of str, default ()
        Grouping columns (``("benchmark",)``).

    Returns
    -------
    pandas.DataFrame
        ``*by`` and :data:`PLAN_COLUMNS`: at each ``k`` the expected observed ``P, E, S, O``
        (found = at least one correct sample of k), the categories by the truth at k (``true
        P`` ...: a rate above ``epsilon``), the expected observed E and S whose true category
        is another (``E misclassified``, ``S misclassified``), and the expected questions each
        model's found-ness misclassifies (``misclassified base``, ``misclassified rl``, the sum
        of :func:`leash.core.support.misclassification_probability`).

    Examples
    --------
    A pilot of two questions, 8 samples each: one both models solve half of the time, one only
    the RLVR model, a quarter of the time. At k = 1 half an E is expected and all of it is
    misclassified (epsilon = 3 bounds nothing); at k = 16 (epsilon = 0.19) the second question
    is a true expansion, seen with probability 1 - 0.75^16:

    >>> pilot = pd.DataFrame({"n_base": 8, "c_base": [4, 0], "n_rl": 8, "c_rl": [4, 2]})
    >>> plan = budget_plan(pilot, [1, 16])
    >>> plan[["k", "E", "true E", "E misclassified"]].round(4).values.tolist()
    [[1.0, 0.5, 0.0, 0.5], [16.0, 0.99, 1.0, 0.0]]
    """
    by = list(by)
    require_columns(paired, ["n_base", "c_base", "n_rl", "c_rl", *by], "budget_plan")
    if ks is None:
        ks = default_plan_ks(int(max(paired["n_base"].max(), paired["n_rl"].max())))
    rows = []
    for key, g in groups_of(paired, by, sort=True):
        pb, pr = pilot_rates(g)
        for k in np.atleast_1d(ks):
            k = int(k)
            eps = float(epsilon_kernel(k, zeta))  # above 1 when k < -ln(zeta): nothing is in
            fb, fr = population_pass_at_k(pb, k), population_pass_at_k(pr, k)
            obs = {"P": fb * fr, "E": (1 - fb) * fr, "S": fb * (1 - fr),
                   "O": (1 - fb) * (1 - fr)}
            tb, tr = pb > eps, pr > eps  # support by the truth at k
            true = {"P": tb & tr, "E": ~tb & tr, "S": tb & ~tr, "O": ~tb & ~tr}
            mb = misclassification_probability(pb, k, zeta)
            mr = misclassification_probability(pr, k, zeta)
            rows.append({
                **dict(zip(by, key)), "k": k, "epsilon": eps, "N": len(g),
                **{c: float(v.sum()) for c, v in obs.items()},
                **{f"true {c}": int(v.sum()) for c, v in true.items()},
                "E misclassified": float(obs["E"][~true["E"]].sum()),
                "S misclassified": float(obs["S"][~true["S"]].sum()),
                "misclassified base": float(np.sum(mb)), "misclassified rl": float(np.sum(mr))})
    return pd.DataFrame(rows)


@validate_params({"ps": [RATES], "ks": [Counts(minimum=1, scalar=False, nonempty=True)]})
def found_probability_table(ps, ks):
    """The probability that a question with success rate p is found within k samples.

    Parameters
    ----------
    ps : array_like of float, shape (n_ps,)
        Success rates.
    ks : array_like of int, shape (n_ks,)
        Budgets.

    Returns
    -------
    pandas.DataFrame
        One row per rate (``p``), one column per budget (``k = <k>``): ``1 - (1 - p)^k``.

    Examples
    --------
    >>> found_probability_table([0.5], [1, 2]).round(2).values.tolist()
    [[0.5, 0.5, 0.75]]
    """
    return pd.DataFrame({"p": ps, **{f"k = {int(k)}": population_pass_at_k(ps, int(k))
                                     for k in ks}})


@validate_params({"p_rl": [RATES], "ks": [INCREASING_GRID],
                  "p_base": [Interval(Real, 0, 1, closed="both")],
                  "power": [Interval(Real, 0, 1, closed="neither")], "alpha": [ALPHA],
                  "rules": [SequenceOf(StrOptions(*DETECTION_RULES), "detection rules ("
                                       + ", ".join(map(repr, DETECTION_RULES)) + ")", "item")]})
def detection_table(p_rl, ks, *, p_base=0.0, power=0.8, alpha=0.05,
                    rules=DETECTION_RULES):
    """The budget at which an expansion of each size is detected with probability ``power``.

    Parameters
    ----------
    p_rl : array_like of float, shape (n,)
        The RLVR model's success rate on the expanded question.
    ks : array_like of int
        Increasing budgets to try.
    p_base : float, default 0.0
        The base's rate on it (0: a true expansion).
    power : float, default 0.8
    alpha : float, default 0.05
        Per-question level of the Fisher test (with Benjamini-Hochberg over m questions, the
        level a discovery needs lies between fdr / m and fdr).
    rules : sequence of {"found", "fisher"}
        "found": the paper's rule shows the question as E; "fisher": the one-sided Fisher test
        rejects (:func:`leash.core.stats.detection_budget`).

    Returns
    -------
    pandas.DataFrame
        ``p_base, p_rl`` and ``budget (<rule>)`` per rule: the smallest budget of ``ks`` with
        at least ``power``, NaN where none is.
    """
    out = pd.DataFrame({"p_base": float(p_base), "p_rl": p_rl})
    for rule in rules:
        out[f"budget ({rule})"] = detection_budget(p_base, p_rl, ks, power=power, alpha=alpha,
                                                   rule=rule)
    return out
