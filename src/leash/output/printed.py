"""The paper's printed form of a table: its values, at its precision, as the paper prints them.

A table made from the paper's printed numbers (``study="paper"``) is captioned as the paper's,
so its Markdown and LaTeX show what the paper prints, cell by cell (arXiv 2507.14843v4):

* each number at the precision the paper prints it with (``data/paper/``'s ``decimals``
  columns): 3 decimals for the per-benchmark metrics of Tables 3, 4 and 6-12, 4 for some
  aggregates of Tables 6 and 9-11, pass@k in percent with 1 or 2 decimals, Table 5's lengths
  as whole tokens; rounded half-up (:func:`leash.sources.paper.round_half_up`), Table 1 by
  the double rounding (half-up to 3 decimals, then to 2) that fits 79 of its 80 metric cells;
* where the number recomputed from the printed counts does not give the printed one, the
  printed one, marked ``†``, with a note under the table saying what the counts give (Table
  1's Phi4-Reason-Plus-14B Non-Math SDS, whose note gives both roundings: 0.01 by a single
  rounding of its 0.01477, as printed, 0.02 only by the double rounding of Table 1's other
  cells; Table 4's AIME2025 step-300 metrics, four aggregates of Tables 7 and 8;
  ``leash.sources.paper.audit`` explains each);
* Table 5's Avg as printed (the CSV adds ``Avg recomputed``, the mean of the printed cells)
  and its ▲/▼ marks of the token-entropy rows;
* what leash adds (McNemar p and mid-p, epsilon, k) in columns whose header ends with ``(+)``,
  explained in a note; rows and files the paper does not print are left out (Table 1's
  "Overall" of a model with one domain; ProRL-1.5B-v2's appendix table, which v4 does not
  have).

The CSV keeps every number at full precision. For any other source the table is returned as
it is: :func:`printed` is the identity there. ``tests/_fidelity.py`` reads every paper-route
Markdown table back and compares each displayed cell with ``data/paper/``.
"""

from __future__ import annotations

import pandas as pd

from leash.artifacts import STUDY, open_study
from leash.core._validation import DATAFRAME, StrOptions, validate_params
from leash.core.support import COUNT_NAMES, METRIC_NAMES
from leash.output.report import TableView
from leash.sources.paper import load, round_half_up

__all__ = ["ADDED", "MARK", "printed", "appendix_pairs", "figure1_benchmarks"]

#: Suffix of a column header the paper does not print.
ADDED = "(+)"
#: Marker of a printed value that the printed counts do not give (a note says what they give).
MARK = "†"
_ADDED = {"k": "the samples per question",
          "epsilon": "-ln(zeta)/k, the threshold behind 'not found in k samples'",
          "McNemar p": "exact test of expansion against shrinkage on the questions the two "
                       "models disagree on",
          "McNemar mid-p": "its mid-p version (half the probability of the observed split), "
                           "less conservative"}
_DOMAIN = {"math": "Math", "non-math": "Non-Math", "overall": "Overall"}
_T5 = {"avg@n (%)": "avg32_accuracy_percent", "response_length": "response_length_tokens",
       "token_entropy": "token_entropy", "answer_entropy": "answer_entropy"}


def _added_note(shown: pd.DataFrame) -> str:
    """The note explaining the ``(+)`` columns of ``shown``."""
    names = [c.removesuffix(ADDED).strip() for c in shown.columns if c.endswith(ADDED)]
    return (f"Columns marked {ADDED} are not in the paper; leash adds them: "
            + "; ".join(f"{n}, {_ADDED[n]}" for n in names) + ".")


def _text(value, decimals: int, *, double: bool = False) -> str:
    if value is None or pd.isna(value):
        return "--"
    v = round_half_up(round_half_up(float(value), 3), 2) if double else round_half_up(
        float(value), int(decimals))
    return f"{v:.{int(decimals)}f}"


class _Cells:
    """Builds the displayed cells of one table and the notes of its marked ones.

    ``double_rule`` names, in a note, the double rounding a table's cells follow (Table 1).
    """

    def __init__(self, double_rule: str = "the double rounding"):
        self.notes: list[str] = []
        self.double_rule = double_rule

    def cell(self, recomputed, printed, decimals, where: str, *, double=False) -> str:
        """The printed value at its precision; marked, with a note, when the counts differ."""
        if printed is None or pd.isna(printed):
            return _text(recomputed, decimals, double=double) if recomputed is not None else "--"
        shown = _text(printed, decimals)
        got = _text(recomputed, decimals, double=double)
        if recomputed is None or pd.isna(recomputed) or got == shown:
            return shown
        # a tie printed rounded down (56.25 as 56.2) is within half a unit, as the audit allows
        if not double and abs(float(recomputed) - float(printed)) <= 0.5 * 10.0 ** -int(
                decimals) + 1e-9:
            return shown
        raw = float(recomputed)
        if double:  # say what each rounding of the counts' value gives
            single = _text(raw, decimals)
            steps = f"{raw:.5f} -> {round_half_up(raw, 3):.3f} -> {got}"
            how = (f"{shown} by a single rounding, as printed; {got} only by {self.double_rule} "
                   f"({steps})" if single == shown else
                   f"{got} by {self.double_rule} ({steps}), {single} by a single rounding")
            self.notes.append(f"{MARK} {where}: the paper prints {shown}; its counts give "
                              f"{raw:.5f}: {how}.")
        else:
            self.notes.append(f"{MARK} {where}: the paper prints {shown}; its counts give "
                              f"{raw:.5f}, {got} at the printed precision.")
        return shown + MARK


ARTIFACTS = ("table1", "appendix", "table3", "table4", "table5")


@validate_params({"table": [DATAFRAME], "artifact": [StrOptions(*ARTIFACTS)], "src": STUDY,
                  "pair": [str, None], "metric": [str, None]})
def printed(table: pd.DataFrame, artifact: str, src, *, pair: str | None = None,
            metric: str | None = None):
    """``table`` in the paper's printed form when ``src`` is the paper's numbers.

    Parameters
    ----------
    table : pandas.DataFrame
        The artifact's table: :func:`leash.artifacts.table1` (``"table1"``),
        :func:`leash.artifacts.appendix_table` (``"appendix"``, with ``pair``), Table 3's rows
        of :func:`leash.artifacts.sft_support` (``"table3"``),
        :func:`leash.artifacts.checkpoint_support` (``"table4"``) or
        :func:`leash.artifacts.entropy_wide` (``"table5"``, with ``metric``).
    artifact : {"table1", "appendix", "table3", "table4", "table5"}
    src : str, Study or ArtifactSource
        The run's source.
    pair, metric : str, optional
        The appendix table's pair; Table 5's metric (a column of
        :func:`leash.artifacts.entropy_long`).

    Returns
    -------
    TableView or pandas.DataFrame
        For the paper's numbers a :class:`leash.output.report.TableView` (CSV: ``table``,
        full precision; Markdown/LaTeX: the printed cells and notes); otherwise ``table``.
    """
    if not open_study(src).is_paper:
        return table
    build = {"table1": _table1, "appendix": lambda t: _appendix(t, pair),
             "table3": _table3, "table4": _table4, "table5": lambda t: _table5(t, metric)}
    return build[artifact](table)


def _metrics(c: _Cells, row, ref, where: str, *, double=False) -> dict:
    out = {}
    for m in METRIC_NAMES:
        dec = 2 if double else (ref[f"{m}_decimals"] if ref is not None else 3)
        out[m] = c.cell(row[m], None if ref is None else ref[m], dec, f"{where}, {m}",
                        double=double)
    for n in COUNT_NAMES:
        out[n] = str(int(row[n]))
    return out


def _pass(c: _Cells, value, printed_value, decimals, where: str) -> str:
    return c.cell(None if pd.isna(value) else 100 * float(value), printed_value, decimals, where)


def _table1(t: pd.DataFrame) -> TableView:
    ref = load("table1").set_index(["model", "domain"])
    to_key = {v: k for k, v in _DOMAIN.items()}
    keys = [(r["Model"], to_key.get(r["Domain"], r["Domain"])) for _, r in t.iterrows()]
    # How many printed metric cells the double rounding of the counts' metric gives.
    shown = [(_text(r[m], 2, double=True), _text(ref.at[key, m], 2))
             for (_, r), key in zip(t.iterrows(), keys) if key in ref.index
             for m in METRIC_NAMES]
    fit = f"{sum(a == b for a, b in shown)} of the {len(shown)} printed metric cells"
    c = _Cells(double_rule=f"the double rounding that gives {fit} of Table 1")
    rows = []
    for (_, r), key in zip(t.iterrows(), keys):
        p = ref.loc[key] if key in ref.index else None
        rows.append({"Model": r["Model"], "Domain": r["Domain"],
                     **_metrics(c, r, None if p is None else
                                {**{m: p[m] for m in METRIC_NAMES},
                                 **{f"{m}_decimals": 2 for m in METRIC_NAMES}},
                                f"{r['Model']} {r['Domain']}", double=True)})
    notes = ["SRR, NDR, SDS, NSCR: the metric of the pooled counts rounded half-up to 3 "
             f"decimals, then to 2: the rule that gives {fit} (the paper does not state it; "
             "the appendix tables print 3 or 4 decimals).", *c.notes]
    return TableView(t, pd.DataFrame(rows), tuple(notes))


def _appendix(t: pd.DataFrame, pair: str) -> TableView:
    sc = load("support_counts")
    sc = sc[(sc["pair"] == pair) & sc["table"].isin([str(i) for i in range(6, 13)])]
    by_bench = sc.set_index("benchmark")
    ag = load("support_aggregates")
    ag = ag[ag["pair"] == pair].set_index("aggregate")
    c = _Cells()
    rows = []
    for _, r in t.iterrows():
        ds = r["Dataset"]
        p = by_bench.loc[ds] if ds in by_bench.index else (ag.loc[ds] if ds in ag.index else None)
        where = f"{pair} {ds}"
        bench = p is not None and ds in by_bench.index
        rows.append({
            "Dataset": ds if p is not None else f"{ds} {ADDED}",
            f"k {ADDED}": "--" if pd.isna(r["k"]) else str(int(r["k"])),
            f"epsilon {ADDED}": "--" if pd.isna(r.get("epsilon")) else f"{r['epsilon']:.2e}",
            "pass@k Base (%)": _pass(c, r["pass@k Base (%)"] / 100,
                                     p["pass_base_percent"] if bench else None,
                                     p["pass_decimals"] if bench else 1, f"{where}, base pass@k"),
            "pass@k RLVR (%)": _pass(c, r["pass@k RLVR (%)"] / 100,
                                     p["pass_rl_percent"] if bench else None,
                                     p["pass_decimals"] if bench else 1, f"{where}, RLVR pass@k"),
            **_metrics(c, r, p, where),
            f"McNemar p {ADDED}": f"{r['McNemar p']:.3g}",
            f"McNemar mid-p {ADDED}": f"{r['McNemar mid-p']:.3g}"})
    shown = pd.DataFrame(rows)
    if "epsilon" not in t.columns:
        shown = shown.drop(columns=f"epsilon {ADDED}")
    return TableView(t, shown, (_added_note(shown), *c.notes))


def _counts_rows(table: str, keys: list[str]) -> pd.DataFrame:
    sc = load("support_counts")
    sc = sc[sc["table"] == table]
    return sc.assign(step=sc["step"].astype("Int64")).set_index(keys)


def _table3(t: pd.DataFrame) -> TableView:
    ref = _counts_rows("3", ["pair", "benchmark"])
    c = _Cells()
    rows = []
    for _, r in t.iterrows():
        p = ref.loc[(r["pair"], r["benchmark"])]
        where = f"{r['pair']} {r['benchmark']}"
        rows.append({"pair": r["pair"], "benchmark": r["benchmark"],
                     "pass@k base (%)": _pass(c, r["pass@k base"], p["pass_base_percent"],
                                              p["pass_decimals"], f"{where}, base pass@k"),
                     "pass@k rl (%)": _pass(c, r["pass@k rl"], p["pass_rl_percent"],
                                            p["pass_decimals"], f"{where}, pass@k"),
                     **_metrics(c, r, p, where),
                     f"McNemar p {ADDED}": f"{r['mcnemar_p']:.3g}",
                     f"McNemar mid-p {ADDED}": f"{r['mcnemar_midp']:.3g}"})
    shown = pd.DataFrame(rows)
    return TableView(t, shown, (_added_note(shown), *c.notes))


def _table4(t: pd.DataFrame) -> TableView:
    ref = _counts_rows("4", ["step", "benchmark"])
    step0 = load("table4_step0").set_index("benchmark")
    c = _Cells()
    rows = []
    for _, r in t.iterrows():
        p = ref.loc[(int(r["step"]), r["benchmark"])]
        s0 = step0.loc[r["benchmark"]]
        where = f"{r['benchmark']} step {int(r['step'])}"
        rows.append({"step": str(int(r["step"])), "benchmark": r["benchmark"],
                     "pass@k base (%)": _pass(c, r["pass@k base"], s0["pass_base_percent"],
                                              s0["pass_decimals"], f"{where}, step-0 pass@256"),
                     "pass@k rl (%)": _pass(c, r["pass@k rl"], p["pass_rl_percent"],
                                            p["pass_decimals"], f"{where}, pass@256"),
                     **_metrics(c, r, p, where),
                     f"McNemar p {ADDED}": f"{r['mcnemar_p']:.3g}",
                     f"McNemar mid-p {ADDED}": f"{r['mcnemar_midp']:.3g}"})
    shown = pd.DataFrame(rows)
    notes = ("pass@k base (%): the step-0 row of the paper's Table 4 (the non-RLVR baseline), "
             "repeated on each step.", _added_note(shown), *c.notes)
    return TableView(t, shown, notes)


def _table5(wide: pd.DataFrame, metric: str) -> TableView:
    t5 = load("table5_entropy")
    t5 = t5[t5["metric"] == _T5[metric]]
    ref = t5.set_index(["model", "benchmark"])
    marks = t5.drop_duplicates("model").set_index("model")["row_marker"]
    frame = wide.copy()
    frame["Avg recomputed"] = frame["Avg"]
    frame["Avg"] = [ref.at[(m, "Avg"), "value"] for m in frame.index]
    c = _Cells()
    rows = []
    for model, r in frame.iterrows():
        mark = marks.get(model) if metric == "token_entropy" else None
        row = {"model": f"{model} {mark}" if isinstance(mark, str) and mark else model}
        for b in wide.columns:
            dec = int(ref.at[(model, b), "decimals"])
            row[b] = _text(ref.at[(model, b), "value"], dec)
            if b == "Avg":
                mean = _text(r["Avg recomputed"], dec)
                if mean != row[b]:
                    c.notes.append(f"{model}: the mean of the printed cells is "
                                   f"{r['Avg recomputed']:.3f}, {mean} at the printed precision "
                                   f"(the printed cells are themselves rounded).")
            elif _text(r[b], dec) != row[b]:  # the source's value is the transcription
                raise AssertionError(f"Table 5 {metric} {model} {b}: {r[b]} is not the printed "
                                     f"{row[b]}")
        rows.append(row)
    notes = ["Avg as printed; the CSV adds `Avg recomputed`, the mean of the printed cells."
             + (" It rounds to another value than the printed Avg for:" if c.notes else ""),
             *c.notes]
    if metric == "token_entropy":
        notes.append("▲/▼: the paper's marks of token-level entropy rising/falling from the base "
                     "model to the RLVR model.")
    return TableView(frame, pd.DataFrame(rows), tuple(notes))


def appendix_pairs(long: pd.DataFrame, src) -> list[str]:
    """The pairs with an appendix table (Tables 6-12): for the paper's numbers those the paper
    prints one for (not ProRL-1.5B-v2, which v4 has only in Table 1), else every pair.
    """
    pairs = list(dict.fromkeys(long["pair"]))
    if not open_study(src).is_paper:
        return pairs
    printed_pairs = set(load("support_counts").query("table in ['6','7','8','9','10','11','12']")
                        ["pair"])
    return [p for p in pairs if p in printed_pairs]


def figure1_benchmarks(src) -> list[str] | None:
    """Figure 1's benchmarks for the paper's numbers (the ten of its panels; Table 6 has twelve:
    the figure leaves out MATH500 and both LiveCodeBench sets), else None (every benchmark).
    """
    if not open_study(src).is_paper:
        return None
    return list(dict.fromkeys(load("figure1_passk")["benchmark"]))
