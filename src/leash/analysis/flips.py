"""Which expansions and shrinkages are evidence: a one-sided Fisher exact test per question, with
Benjamini-Hochberg control of the false discovery rate.

The paper counts a question as an expansion (E) when the RLVR model found it and the base did
not, at ``min_count`` correct samples (arXiv 2507.14843v4, Def. 3.2). Such counts have a noise
floor: two runs of one model disagree on questions solved rarely (walkthrough 00b). Here each
question of a pair gets the one-sided Fisher exact tests of the RLVR model's success rate
against the base's (:func:`leash.core.stats.fisher_one_sided`, equal to
``scipy.stats.fisher_exact`` on ``[[rl_c, rl_n - rl_c], [base_c, base_n - base_c]]``), and the
p-values of each direction are adjusted over *all* questions of the pair by Benjamini-Hochberg
(``scipy.stats.false_discovery_control``): a question's verdict is "expansion" when its
``q_expansion <= fdr``, "shrinkage" when its ``q_shrinkage <= fdr``, else empty (both cannot
hold: the two one-sided p-values of one table sum to more than 1). A preserved question can
have a verdict too: a significant rise of its rate is sharpening, which no count of E shows.

The counts are those at the pairing's budget (:func:`leash.analysis.pairing.pair_counts`: the
same n for both models); where the first samples do not fix them (a budget below the samples on
hand, from counts without the sample order) the table refuses to test, rather than test a
subset.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd

from leash.analysis.tables import BY, FDR, FRAME, groups_of, require_columns
from leash.core._validation import Interval, validate_params
from leash.core.stats import fisher_one_sided
from leash.core.support import COUNT_NAMES, MIN_COUNT, category_codes
from leash.errors import LeashValueError

__all__ = ["FDR", "VERDICTS", "FLIPS_COLUMNS", "flips_table", "flips_summary", "with_answers",
           "significant_flags"]

#: A question's verdict: a significant rise of the RLVR model's rate, a significant fall, none.
VERDICTS = ("expansion", "shrinkage", "")
#: The columns of :func:`flips_table` (after the ``by`` columns).
FLIPS_COLUMNS = ["question_id", "benchmark", "base_c", "base_n", "rl_c", "rl_n", "category",
                 "p_expansion", "p_shrinkage", "q_expansion", "q_shrinkage", "verdict"]
_WHERE = "flips_table"


def _checked_counts(paired: pd.DataFrame, where: str):
    """(n_base, c_base, n_rl, c_rl) of a paired frame as int64 arrays; any question whose counts
    cannot be tested is an error naming it (unknown counts, n = 0, c > n, unequal n).
    """
    def name(i):
        if "question_id" not in paired:
            return f"at row {i}"
        return f"{paired['benchmark'].iat[i]}/{paired['question_id'].iat[i]}"

    out = []
    for side in ("base", "rl"):
        for col in (f"n_{side}", f"c_{side}"):
            v = paired[col]
            if v.isna().any():
                i = int(np.flatnonzero(v.isna().to_numpy())[0])
                raise LeashValueError(
                    f"question {name(i)}: {col} is unknown ({int(v.isna().sum())} questions), "
                    "so no test can use it: the pairing's budget is below the samples on hand "
                    "and the first samples do not fix the count;", func=where, key=col,
                    hint="pair counts at equal n, or samples with their order, so that every "
                         "question is tested (none is left out).")
        n = paired[f"n_{side}"].to_numpy(dtype=np.int64)
        c = paired[f"c_{side}"].to_numpy(dtype=np.int64)
        for bad, text, key, val in ((n < 1, "has no samples", f"n_{side}", n),
                                    (c < 0, "has a negative count", f"c_{side}", c),
                                    (c > n, f"has more correct samples than samples "
                                            f"(c_{side} > n_{side})", f"c_{side}", c)):
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise LeashValueError(
                    f"question {name(i)} {text}: n_{side} = {int(n[i])}, c_{side} = "
                    f"{int(c[i])};", func=where, key=key, value=int(val[i]),
                    hint="fix the counts of that question in its file (leash validate FILE "
                         "lists every such row).")
        out += [n, c]
    n_b, c_b, n_r, c_r = out
    if (n_b != n_r).any():
        i = int(np.flatnonzero(n_b != n_r)[0])
        raise LeashValueError(
            f"question {name(i)} has n_base = {int(n_b[i])} and n_rl = {int(n_r[i])}: the "
            "categories compare the two models at one budget;", func=where, key="n_rl",
            value=int(n_r[i]), hint="pair the counts first (leash.analysis.pairing.pair_counts, "
                                    "which compares each question at a common budget).")
    return n_b, c_b, n_r, c_r


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (scipy's, which needs at least one p-value)."""
    if not p.size:
        return p.astype(np.float64)
    from scipy.stats import false_discovery_control

    return np.asarray(false_discovery_control(p, method="bh"), dtype=np.float64)


@validate_params({"paired": FRAME, "min_count": [MIN_COUNT], "fdr": [FDR], "by": BY})
def flips_table(paired: pd.DataFrame, *, min_count=1, fdr=0.05, by=()):
    """One row per question of a pair: its counts, category, one-sided Fisher tests and verdict.

    Parameters
    ----------
    paired : pandas.DataFrame, shape (n_questions, ...)
        Per-question counts of a pair at one budget (:func:`leash.analysis.pairing.pair_counts`):
        columns ``benchmark, question_id, n_base, c_base, n_rl, c_rl`` and the ``by`` columns.
    min_count : int, default 1
        Correct samples for a model to "find" a question (the paper's rule: 1); decides the
        category only, not the tests.
    fdr : float, default 0.05
        The false discovery rate of the verdicts, in (0, 1).
    by : sequence of str, default ()
        Columns whose groups are separate comparisons (``("step",)`` for checkpoints): the
        Benjamini-Hochberg adjustment runs within each group, over all its questions.

    Returns
    -------
    pandas.DataFrame
        ``*by`` and :data:`FLIPS_COLUMNS`: ``category`` is P, E, S or O; ``p_expansion`` and
        ``p_shrinkage`` the one-sided p-values ("greater" and "less"), ``q_expansion`` and
        ``q_shrinkage`` their Benjamini-Hochberg adjustments per direction, ``verdict``
        "expansion", "shrinkage" or "" at ``fdr``. ``attrs["flips"]`` records ``fdr`` and
        ``min_count``.

    Raises
    ------
    ValueError
        A question without samples, with more correct samples than samples, with counts unknown
        at the budget, or with different sample counts for the two models: one line naming
        it (nothing is tested on a subset).

    Examples
    --------
    >>> paired = pd.DataFrame({"benchmark": "B", "question_id": ["1", "2"], "n_base": 8,
    ...                        "c_base": [0, 4], "n_rl": 8, "c_rl": [8, 4]})
    >>> flips_table(paired)[["question_id", "category", "verdict"]].values.tolist()
    [['1', 'E', 'expansion'], ['2', 'P', '']]
    """
    by = list(by)
    require_columns(paired, ["benchmark", "question_id", "n_base", "c_base", "n_rl", "c_rl", *by],
                    _WHERE)
    paired = paired.reset_index(drop=True)
    (n_b, c_b, n_r, c_r), tests, q_up, q_down, verdict = _verdicts(paired, fdr, by)
    codes = category_codes(c_b >= min_count, c_r >= min_count)
    out = paired[by].copy() if by else pd.DataFrame(index=paired.index)
    out = out.assign(question_id=paired["question_id"].astype("string"),
                     benchmark=paired["benchmark"].astype("string"), base_c=c_b, base_n=n_b,
                     rl_c=c_r, rl_n=n_r, category=np.asarray(COUNT_NAMES)[codes],
                     p_expansion=tests.greater, p_shrinkage=tests.less, q_expansion=q_up,
                     q_shrinkage=q_down, verdict=verdict)
    out.attrs["flips"] = {"fdr": float(fdr), "min_count": int(min_count)}
    return out


def _verdicts(paired: pd.DataFrame, fdr, by: list):
    """The checked counts, the tests, their Benjamini-Hochberg adjustments per ``by`` group
    and the verdicts of a paired frame with a fresh index.
    """
    counts = n_b, c_b, n_r, c_r = _checked_counts(paired, _WHERE)
    tests = fisher_one_sided(c_r, n_r, c_b, n_b)
    q_up, q_down = np.empty(len(paired)), np.empty(len(paired))
    for _, g in groups_of(paired, by, sort=False):
        i = g.index.to_numpy()
        q_up[i], q_down[i] = _bh(tests.greater[i]), _bh(tests.less[i])
    verdict = np.where(q_up <= fdr, "expansion", np.where(q_down <= fdr, "shrinkage", ""))
    return counts, tests, q_up, q_down, verdict


@validate_params({"paired": FRAME, "fdr": [FDR], "by": BY})
def significant_flags(paired: pd.DataFrame, *, fdr=0.05, by=()) -> tuple[np.ndarray, np.ndarray]:
    """Whether each question of ``paired`` has the verdict "expansion" / "shrinkage" at ``fdr``
    (:func:`flips_table`'s, for the support tables' "significant E" and "significant S"; the
    frame needs the count columns and ``by``, not ``question_id``).

    Returns
    -------
    (ndarray of bool, ndarray of bool)
        In the rows' order.
    """
    require_columns(paired, ["benchmark", "n_base", "c_base", "n_rl", "c_rl", *by], _WHERE)
    v = _verdicts(paired.reset_index(drop=True), fdr, list(by))[-1]
    return v == "expansion", v == "shrinkage"


@validate_params({"flips": FRAME, "by": BY})
def flips_summary(flips: pd.DataFrame, *, by=()):
    """Per benchmark (and in all): the categories, their significant subsets, and the preserved
    questions whose rate changed significantly.

    Parameters
    ----------
    flips : pandas.DataFrame
        A :func:`flips_table` result.
    by : sequence of str, default ()
        Grouping columns before the benchmark (e.g. ``("pair",)``).

    Returns
    -------
    pandas.DataFrame
        ``*by, benchmark, N, P, E, S, O, significant E, significant S, P up, P down``: ``P up``
        and ``P down`` are preserved questions with the verdict "expansion" (sharpened) or
        "shrinkage"; the last row of each group is "All" when it has several benchmarks.
    """
    by = list(by)
    require_columns(flips, ["benchmark", "category", "verdict", *by], "flips_summary")
    rows = []
    for key, g in groups_of(flips, by, sort=False):
        parts = list(g.groupby("benchmark", sort=False, observed=True))
        if len(parts) > 1:
            parts.append(("All", g))
        for bench, b in parts:
            cat, v = b["category"].to_numpy(), b["verdict"].to_numpy()
            row = {**dict(zip(by, key)), "benchmark": str(bench), "N": len(b),
                   **{c: int((cat == c).sum()) for c in COUNT_NAMES},
                   "significant E": int(((cat == "E") & (v == "expansion")).sum()),
                   "significant S": int(((cat == "S") & (v == "shrinkage")).sum()),
                   "P up": int(((cat == "P") & (v == "expansion")).sum()),
                   "P down": int(((cat == "P") & (v == "shrinkage")).sum())}
            rows.append(row)
    return pd.DataFrame(rows)


def _answer_text(values, counts, n_missing, top: int) -> str:
    """The ``top`` most frequent answers of a summary row, "52 x6, 57 x1" (and "NA xk")."""
    values = [] if values is None or (np.ndim(values) == 0 and pd.isna(values)) else list(values)
    counts = [] if counts is None or (np.ndim(counts) == 0 and pd.isna(counts)) else list(counts)
    parts = [f"{v} x{int(c)}" for v, c in list(zip(values, counts))[:top]]
    if len(values) > top:
        parts.append(f"... ({len(values) - top} more)")
    if n_missing is not None and not pd.isna(n_missing) and int(n_missing) > 0:
        parts.append(f"NA x{int(n_missing)}")
    return ", ".join(parts)


@validate_params({"flips": FRAME, "summary": FRAME, "base": [str], "rl": [str],
                  "base_step": [Interval(Integral, 0, None, closed="left"), None],
                  "responses": [*FRAME, None], "top": [Interval(Integral, 1, None, closed="left")]})
def with_answers(flips: pd.DataFrame, summary: pd.DataFrame, base: str, rl: str, *,
                 base_step=None, responses=None, top=3):
    """The flips table with what each model answered: its most frequent answers and, where the
    files keep responses, one response of each model (truncated).

    Parameters
    ----------
    flips : pandas.DataFrame
        A :func:`flips_table` result (with ``step`` among its columns for checkpoints).
    summary : pandas.DataFrame
        The per-question summary the pair was made from (``model, benchmark, question_id, step,
        answer_values, answer_counts, n_answer_missing``).
    base, rl : str
        The two models' labels in ``summary``.
    base_step : int, optional
        The step of the base's rows when the base is a checkpoint of the RLVR run (step 0).
    responses : pandas.DataFrame, optional
        One response per model and question: ``model, benchmark, question_id, step, response``
        (:meth:`leash.sources.study.Study.sample_digest`).
    top : int, default 3
        Answers shown per model, most frequent first.

    Returns
    -------
    pandas.DataFrame
        ``flips`` with ``base_answers`` and ``rl_answers`` ("value xcount", most frequent
        first; "NA xk" for samples without an answer; empty where the summary has no answers)
        and, with ``responses``, ``base_response`` and ``rl_response``.
    """
    keys = ["benchmark", "question_id"]
    s = summary.assign(benchmark=summary["benchmark"].astype(str),
                       question_id=summary["question_id"].astype(str),
                       step=summary["step"].astype("Int64") if "step" in summary
                       else pd.array([pd.NA] * len(summary), dtype="Int64"))
    has = {"answer_values", "answer_counts"} <= set(s.columns)
    s = s.assign(_answers=[_answer_text(v, c, m, top) for v, c, m in zip(
        s["answer_values"] if has else [None] * len(s), s["answer_counts"] if has else
        [None] * len(s), s["n_answer_missing"] if "n_answer_missing" in s else [None] * len(s))])
    out = flips.assign(**{k: flips[k].astype(str) for k in keys})
    on_step = "step" in out.columns and out["step"].notna().any()
    cols = [*keys, *(["step"] if on_step else [])]
    if on_step:
        out = out.assign(step=out["step"].astype("Int64"))
    if responses is not None:
        r = responses.assign(benchmark=responses["benchmark"].astype(str),
                             question_id=responses["question_id"].astype(str),
                             step=responses["step"].astype("Int64"))
        s = s.merge(r[["model", *keys, "step", "response"]], on=["model", *keys, "step"],
                    how="left")
    for side, model in (("base", base), ("rl", rl)):
        rows = s[s["model"].astype(str) == model]
        if side == "base" and base_step is not None:
            rows = rows[(rows["step"] == base_step).fillna(False).to_numpy(dtype=bool)]
        # the base has one row per question: matched on the question only (every step)
        side_cols = cols if side == "rl" else keys
        rows = rows.drop_duplicates(side_cols)
        pick = rows[[*side_cols, "_answers", *(["response"] if responses is not None else [])]]
        pick = pick.rename(columns={"_answers": f"{side}_answers", "response": f"{side}_response"})
        out = out.merge(pick, on=side_cols, how="left")
    added = [c for c in ("base_answers", "rl_answers", "base_response", "rl_response")
             if c in out]
    out = out.fillna(dict.fromkeys(added, ""))
    return out[[*(c for c in out.columns if c not in added), *added]]
