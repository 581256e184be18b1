"""Pair the per-question counts of a base model and an RLVR model, question by question.

Rules (also in ``data/README.md``):

* Questions are matched on ``(benchmark, question_id)``. For checkpoint studies the RLVR side
  may carry several ``step`` values; each is paired with the same base row, and ``step`` is a
  column of the result. The base side must have one row per question.
* A question present for one model and missing for the other is an error listing them (first
  few and how many), unless ``restrict_to_shared=True``: then they are dropped, a warning says
  how many, and ``attrs["pairing"]`` records it.
* Sample counts may differ between the models. Each question is then compared at the common
  budget ``b`` = min(n_base, n_rl) of that question, so benchmarks with different budgets keep
  their own (or at ``budget=`` for every question, if given, which must not exceed any ``n``;
  ``budget={benchmark: b}`` gives benchmarks their own, e.g. a study's declared budgets).
  It is reported in a warning and in ``attrs["pairing"]["budget_by_benchmark"]``.
* When ``n > b`` the number correct among the first ``b`` samples cannot be recomputed from
  ``c`` alone. leash is honest about it:

  - ``found_<side>`` (at least one correct among the first ``b`` samples) is exact when
    ``first_correct`` is known: found iff ``0 <= first_correct < b``; also when ``c == 0``
    (never found) or ``c == n`` (always found);
  - ``c_<side>`` at budget ``b`` is exact when ``c == 0`` (0), ``c == n`` (``b``) or
    ``first_correct == -1`` or ``>= b`` (0); otherwise it is NA;
  - if found-ness is unknown for some question (a counts input without ``first_correct`` and
    ``0 < c < n``) pairing raises: per-sample data or counts at equal ``n`` are needed.

  Expected counts over random subsets of ``b`` samples (the exact hypergeometric expectation)
  are :func:`leash.core.support.expected_support_counts`, through ``support_table(...,
  budget_rule="expected")``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from numbers import Integral

import numpy as np
import pandas as pd

from leash.core._validation import (
    DATAFRAME,
    Boolean,
    InstancesOf,
    Interval,
    ModelSide,
    validate_params,
)
from leash.core.passk import found_within
from leash.errors import LeashValueError, LeashWarning, Param

__all__ = ["pair_counts"]

_SHOW = 5


def _select(summary: pd.DataFrame, side, name: str) -> tuple[pd.DataFrame, str]:
    model, step = _spec(side)  # a declared side: a str or a (model, step) tuple
    sel = summary["model"] == model
    if step is not None:
        sel &= summary["step"] == step
    out = summary.loc[sel.fillna(False).to_numpy(dtype=bool)]
    if out.empty:
        models = sorted(pd.unique(summary["model"].astype(object)))[:10]
        raise LeashValueError(Param(name), f" selects no rows: model {model!r}"
                              f"{'' if step is None else f', step {step}'} is not in the summary "
                              f"(models: {models}).", value=side)
    label = model if step is None else f"{model}@step{step}"
    return out, label


def _spec(side):
    """(model, step or None) of a side, so that "m" and ("m", None) compare equal."""
    return (side[0], side[1]) if isinstance(side, tuple) and len(side) == 2 else (side, None)


def _keys_text(keys) -> str:
    keys = list(keys)
    shown = ", ".join(f"{b}/{q}" for b, q in keys[:_SHOW])
    more = f" and {len(keys) - _SHOW} more" if len(keys) > _SHOW else ""
    return f"{len(keys)} questions ({shown}{more})"


def _at_budget(n, c, first, b, side):
    """Counts at budget b from (n, c, first_correct); see the module docstring."""
    n, c = np.asarray(n, dtype=np.int64), np.asarray(c, dtype=np.int64)
    known = ~pd.isna(first)  # first_correct known
    fc = np.where(known, pd.array(first).fillna(-1).to_numpy(dtype=np.int64), -1)
    found = np.where(known, found_within(fc, b), c > 0)
    cut = n > b
    if (cut & ~known & (c > 0) & (c < n)).any():
        bad = int((cut & ~known & (c > 0) & (c < n)).sum())
        raise LeashValueError(
            f"{bad} {side} questions have n > budget {b}, 0 < c < n and no "
            "first_correct, so whether they are solved within the first "
            f"{b} samples is unknown. Provide per-sample data (or counts with first_correct) "
            "or counts at equal n.", func="pair_counts")
    none = (c == 0) | (known & ~found)  # no correct sample among the first b
    c_out = pd.array(np.where(~cut, c, np.where(c == n, b, 0)), dtype="Int64")
    c_out[cut & ~none & (c < n)] = pd.NA
    fb = pd.array(np.where(found, fc, -1), dtype="Int64")
    fb[~known] = pd.NA
    return c_out, fb, found


@validate_params({
    "summary": [DATAFRAME],
    "base": [ModelSide()], "rl": [ModelSide()], "restrict_to_shared": [Boolean()],
    "budget": [Interval(Integral, 1, None, closed="left"),
               InstancesOf(Mapping, "a mapping of benchmark to budget", dict), None]})
def pair_counts(summary: pd.DataFrame, base, rl, *, restrict_to_shared: bool = False,
                budget=None) -> pd.DataFrame:
    """Pair base and RLVR per-question counts.

    Parameters
    ----------
    summary : pandas.DataFrame, shape (n_rows, >=7)
        A summary frame (``leash_eval.summarize.load_counts``) with columns model, benchmark,
        question_id, step, n, c, first_correct.
    base, rl : str or tuple (str, int)
        Model label, or (model, step) to select one checkpoint (e.g. step 0 vs step 300).
    restrict_to_shared : bool, default False
        Drop questions present for only one side (warn and record) instead of raising.
    budget : int or mapping of str to int, optional
        Common number of samples per question; default: the smallest n on either side. Must
        be >= 1 and <= every n. A mapping gives each named benchmark its own budget (at most
        the n of each of its questions); benchmarks it does not name keep the default.
        Below a question's n, its first ``budget`` samples in generation order count: exact
        found-ness from ``first_correct``; c where determinable, else NA.

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 12)
        Columns benchmark, question_id, step, n_base, c_base, first_correct_base, found_base,
        n_rl, c_rl, first_correct_rl, found_rl, budget_reduced (bool: n differed from the
        budget on a side). ``n_*`` equal the budget. ``attrs["pairing"]`` records the budget,
        the original sample counts, dropped questions and NA counts.

    Raises
    ------
    ValueError
        Missing columns, unknown models, the same model (and step) on both sides, unshared
        questions (without ``restrict_to_shared``), duplicate base rows, a budget above some
        n, undeterminable found-ness.
    """
    need = ["model", "benchmark", "question_id", "step", "n", "c", "first_correct"]
    missing = [c for c in need if c not in summary.columns]
    if missing:
        raise LeashValueError(Param("summary"), f" lacks columns {missing}.")
    if _spec(base) == _spec(rl):
        # refused rather than warned: the table would look like a result (SRR = 1, NDR = 0)
        model, step = _spec(base)
        steps = sorted(pd.unique(summary.loc[(summary["model"] == model).fillna(False)
                                             .to_numpy(dtype=bool), "step"].dropna()))
        raise LeashValueError(
            Param("base", "rl"), f" name the same model {model!r}"
            + ("" if step is None else f" at step {step}")
            + ": a model paired with itself has E = S = 0 by construction.", value=base,
            hint=("Name two models, or two checkpoints of one run: ",
                  Param("base", value=(model, int(steps[0]))), " and ",
                  Param("rl", value=(model, int(steps[-1]))), ".") if len(steps) > 1
            else "Name two models.")
    (b_rows, b_label), (r_rows, r_label) = _select(summary, base, "base"), _select(summary, rl,
                                                                                    "rl")
    key = ["benchmark", "question_id"]
    bdup = b_rows.duplicated(key, keep=False)
    if bdup.any():
        steps = sorted(pd.unique(b_rows.loc[bdup, "step"].dropna()))
        raise LeashValueError(
            f"the base side {b_label!r} has several rows for "
            f"{_keys_text(b_rows.loc[bdup, key].drop_duplicates().itertuples(index=False))}"
            + (f" (at steps {', '.join(str(int(s)) for s in steps)});" if steps else "."),
            func="pair_counts", param="base", value=base,
            hint=("select one with ", Param("base", value=(_spec(base)[0], int(steps[0]))), ".")
            if steps and _spec(base)[1] is None else ())
    r_rows = r_rows.assign(step=r_rows["step"].astype("Int64"))
    rdup = r_rows.duplicated([*key, "step"], keep=False)
    if rdup.any():
        raise LeashValueError(f"the rl side {r_label!r} has duplicate rows for "
                              f"{int(rdup.sum())} (benchmark, question_id, step) keys.",
                              func="pair_counts", param="rl", value=rl)
    pairing = {"base": b_label, "rl": r_label, "dropped_base_only": 0, "dropped_rl_only": 0}
    only_b, only_r = _unshared(b_rows, r_rows, key)
    if only_b or only_r:
        msg = "; ".join([f"present for base {b_label!r} only: {_keys_text(sorted(only_b))}"]
                        * bool(only_b)
                        + [f"present for rl {r_label!r} only: {_keys_text(sorted(only_r))}"]
                        * bool(only_r))
        if not restrict_to_shared:
            raise LeashValueError(f"questions are not shared; {msg}.", func="pair_counts", hint=(
                "Pass ", Param("restrict_to_shared", value=True), " to drop them."))
        warnings.warn(LeashWarning(f"dropping unshared questions; {msg}", func="pair_counts"),
                      stacklevel=3)
        pairing.update(dropped_base_only=len(only_b), dropped_rl_only=len(only_r))
    cols, as_str = ["n", "c", "first_correct"], {"benchmark": str, "question_id": str}
    m = r_rows[[*key, "step", *cols]].astype(as_str).merge(
        b_rows[key + cols].astype(as_str), on=key, how="inner", suffixes=("_rl", "_base"))
    if m.empty:
        raise LeashValueError(f"{b_label!r} and {r_label!r} share no questions.",
                              func="pair_counts")
    n_b, n_r = m["n_base"].to_numpy(np.int64), m["n_rl"].to_numpy(np.int64)
    b = _budgets(np.minimum(n_b, n_r), m["benchmark"].to_numpy(), budget)
    by_bench = pd.Series(b).groupby(m["benchmark"].to_numpy()).agg(lambda x: sorted(set(x)))
    pairing.update(budget=int(b[0]) if (b == b[0]).all() else None,
                   budget_by_benchmark={k: (v[0] if len(v) == 1 else v)
                                        for k, v in by_bench.items()},
                   n_base=sorted(set(n_b.tolist()))[:10], n_rl=sorted(set(n_r.tolist()))[:10])
    unequal = n_b != n_r
    if unequal.any() and (budget is None or isinstance(budget, Mapping)):
        warnings.warn(LeashWarning(
            f"the two models have different sample counts on {int(unequal.sum())} "
            f"questions; each is compared at min(n_base, n_rl)"
            f"{' or the budget given for its benchmark' if budget is not None else ''} "
            f"(first samples); budgets by benchmark: {pairing['budget_by_benchmark']}.",
            func="pair_counts"), stacklevel=3)
    out = pd.DataFrame({"benchmark": m["benchmark"].astype("string"),
                        "question_id": m["question_id"].astype("string"),
                        "step": m["step"].astype("Int64")})
    for side in ("base", "rl"):
        counts = _at_budget(m[f"n_{side}"], m[f"c_{side}"], m[f"first_correct_{side}"], b, side)
        out[f"n_{side}"] = b
        for name, values in zip(("c", "first_correct", "found"), counts):
            out[f"{name}_{side}"] = values
        pairing[f"c_{side}_unknown"] = int(pd.isna(counts[0]).sum())
    out["budget_reduced"] = (n_b > b) | (n_r > b)
    if not (pairing["c_base_unknown"] or pairing["c_rl_unknown"]):
        out = out.astype({"c_base": np.int64, "c_rl": np.int64})
    out.attrs["pairing"] = pairing
    return out


def _unshared(b_rows, r_rows, key):
    """The (benchmark, question_id) keys of one side only, per rl step against the base."""
    bk = set(map(tuple, b_rows[key].astype(str).to_numpy().tolist()))
    only_b, only_r = set(), set()
    for _, grp in r_rows.groupby("step", dropna=False, sort=False):
        rk = set(map(tuple, grp[key].astype(str).to_numpy().tolist()))
        only_b |= bk - rk
        only_r |= rk - bk
    return only_b, only_r


def _budgets(common, bench, budget):
    """Each question's budget: ``common`` (min(n_base, n_rl)), or ``budget`` (an int for every
    question, or per benchmark from a mapping), which must lie in [1, the smallest n].
    """
    b = common.copy()
    if budget is None:
        return b
    one = not isinstance(budget, Mapping)
    for name, value in [(None, budget)] if one else budget.items():
        sel = np.ones(b.size, dtype=bool) if one else bench == str(name)
        if not sel.any():
            continue
        top = int(common[sel].min())
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
                1 <= value <= top):
            raise LeashValueError(
                param="budget", value=value, constraint=f"an int in the range [1, {top}] (the "
                "smallest n of the paired questions)") if one else LeashValueError(
                Param("budget"), f" gives benchmark {name!r} the budget {value!r}, but it must "
                f"be an int in the range [1, {top}] (the smallest n of its paired questions).",
                value=value, key=str(name))
        b[sel] = int(value)
    return b
