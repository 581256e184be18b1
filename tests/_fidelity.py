"""Every displayed cell of the paper-route Markdown tables against the paper's transcription.

A paper-route table is a committed ``figures/*.md`` whose caption says it shows "the paper's
printed numbers". Each of its cells is one of:

* a **checked** cell: it stands for a number the paper prints (``data/paper/``), and must show
  that number at the printed precision: the same digits as ``f"{value:.{decimals}f}"`` (a
  percentage as a percentage, ``63.33`` or ``63.33%``, never ``0.633``); a marker after it
  (``†``, ``▲``, ``▼``) is allowed and points to a note under the table;
* an **empty** cell: where the paper prints nothing (``--``, ``–``);
* an **added** cell: a number the paper does not print (a column or row leash adds). It is
  *labelled* when its column header or its row label ends with ``(+)``, which the note under
  the table explains; otherwise it is an unlabelled addition;
* a label (the row's key columns: model, benchmark, step, ...), not compared.

:func:`check` returns one row per non-label cell with its kind and, for a checked cell that
differs, why (``percent shown as a fraction``, ``precision``, ``value``). ``python
tests/_fidelity.py`` prints the counts for ``figures/``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from leash.artifacts import slug
from leash.paths import REPO
from leash.sources.paper import load

PAPER_CAPTION = "(the paper's printed numbers)"
ADDED = "(+)"
MARKERS = "†‡▲▼*"
EMPTY = {"--", "–", "-", ""}
METRICS = ("SRR", "NDR", "SDS", "NSCR")
COUNTS = ("P", "E", "S", "O")
_DOMAIN = {"Math": "math", "Non-Math": "non-math", "Overall": "overall"}
_T5 = {"accuracy": "avg32_accuracy_percent", "length": "response_length_tokens",
       "token_entropy": "token_entropy", "answer_entropy": "answer_entropy"}


def read_markdown(path: Path) -> tuple[str, list[str], list[list[str]]]:
    """Caption, header and body cells of a pipe table written by ``save_table``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    caption = lines[0].removeprefix("Table: ") if lines and lines[0].startswith("Table: ") else ""
    rows = [ln for ln in lines if ln.startswith("|")]

    def split(line):
        parts = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        return [p.strip().replace(r"\|", "|") for p in parts]

    return caption, split(rows[0]), [split(r) for r in rows[2:]]


def paper_tables(folder: Path | None = None) -> list[Path]:
    """The paper-route Markdown tables of ``folder`` (default ``figures/``)."""
    folder = folder or REPO / "figures"
    return sorted(p for p in folder.glob("*.md")
                  if p.name != "README.md" and read_markdown(p)[0].endswith(PAPER_CAPTION)
                  and p.stem.startswith("table"))


def _base(header: str) -> str:
    return header.removesuffix(ADDED).strip()


def _printed_text(value, decimals) -> str | None:
    if isinstance(value, str):
        return value
    if pd.isna(value):
        return None
    return f"{float(value):.{int(decimals)}f}"


def _shown_number(text: str) -> tuple[str, bool]:
    t = text.strip().rstrip(MARKERS).strip().replace("\u2212", "-")
    pct = t.endswith("%")
    return t.removesuffix("%").strip(), pct


def _why(shown: str, printed: str) -> str:
    try:
        s, p = float(shown), float(printed)
    except ValueError:
        return "value"
    shown_dec = len(shown.partition(".")[2])
    printed_dec = len(printed.partition(".")[2])
    as_fraction = abs(s * 100 - p) <= 0.5 * 10 ** (2 - shown_dec) + 1e-9
    if shown_dec > printed_dec and abs(p) > 1e-12 and as_fraction:
        return "percent shown as a fraction"
    coarser = min(shown_dec, printed_dec)
    if shown_dec != printed_dec and abs(s - p) <= 0.5 * 10 ** -coarser + 1e-12:
        return "precision"
    return "value"


# Each mapper: (header, body row) -> key -> {column header: (printed value, decimals)} or None
# for a row the paper does not print.

def _t1():
    t = load("table1")
    out = {}
    for r in t.itertuples():
        cells = {m: (getattr(r, m), r.decimals) for m in METRICS}
        cells.update({c: (getattr(r, c), 0) for c in COUNTS})
        out[(r.model, r.domain)] = cells
    return out, lambda row: (row["Model"], _DOMAIN.get(row["Domain"], row["Domain"]))


def _metric_cells(r, *, pass_cols=True):
    cells = {m: (getattr(r, m), getattr(r, f"{m}_decimals")) for m in METRICS}
    cells.update({c: (getattr(r, c), 0) for c in COUNTS})
    return cells


_PASS_BASE = ("pass@k Base (%)", "pass@k base", "pass@k base (%)")
_PASS_RL = ("pass@k RLVR (%)", "pass@k rl", "pass@k rl (%)")


def _appendix(pair: str):
    sc = load("support_counts")
    ag = load("support_aggregates")
    out = {}
    for r in sc[sc["pair"] == pair].itertuples():
        if r.table not in {"6", "7", "8", "9", "10", "11", "12"}:
            continue
        cells = _metric_cells(r)
        for h in _PASS_BASE:
            cells[h] = (r.pass_base_percent, r.pass_decimals)
        for h in _PASS_RL:
            cells[h] = (r.pass_rl_percent, r.pass_decimals)
        out[r.benchmark] = cells
    for r in ag[ag["pair"] == pair].itertuples():
        cells = _metric_cells(r)
        for h in (*_PASS_BASE, *_PASS_RL):
            cells[h] = (float("nan"), 0)
        out[r.aggregate] = cells
    return out, lambda row: row["Dataset"]


def _t3():
    sc = load("support_counts")
    out = {}
    for r in sc[sc["table"] == "3"].itertuples():
        cells = _metric_cells(r)
        for h in _PASS_BASE:
            cells[h] = (r.pass_base_percent, r.pass_decimals)
        for h in _PASS_RL:
            cells[h] = (r.pass_rl_percent, r.pass_decimals)
        out[(r.pair, r.benchmark)] = cells
    return out, lambda row: (row["pair"], row["benchmark"])


def _t4():
    sc = load("support_counts")
    s0 = load("table4_step0").set_index("benchmark")
    out = {}
    for r in sc[sc["table"] == "4"].itertuples():
        cells = _metric_cells(r)
        for h in _PASS_RL:
            cells[h] = (r.pass_rl_percent, r.pass_decimals)
        for h in _PASS_BASE:
            cells[h] = (s0.at[r.benchmark, "pass_base_percent"], s0.at[r.benchmark,
                                                                          "pass_decimals"])
        out[(str(int(r.step)), r.benchmark)] = cells
    return out, lambda row: (row["step"], row["benchmark"])


def _t14():
    t = load("table14_passk")
    out = {}
    for r in t.itertuples():
        out.setdefault((r.benchmark, r.model), {})[f"@{int(r.k)}"] = (r.pass_at_k_percent,
                                                                      r.decimals)
    return out, lambda row: (row["benchmark"], row["model"])


def _t2():
    t = load("table2_perplexity")
    out = {}
    for r in t.itertuples():
        role = "base" if r.target == "Base" else "rlvr"
        out.setdefault((r.category, r.reference, role), {})[r.benchmark] = (r.ppl, r.decimals)
    return out, lambda row: (row["category"], row["reference"], row["role"])


def _t5(short: str):
    t = load("table5_entropy")
    t = t[t["metric"] == _T5[short]]
    out = {}
    for r in t.itertuples():
        out.setdefault(r.model, {})[r.benchmark] = (r.value, r.decimals)
    return out, lambda row: row["model"].rstrip(MARKERS).strip()


def _t13():
    t = load("table13_models")
    out = {r.model: {"Full name": (r.full_name, None), "Type": (r.type, None),
                     "Params": (r.params, None)} for r in t.itertuples()}
    return out, lambda row: row["Name"]


def _mapper(stem: str):
    if stem == "table13":
        return _t13()
    if stem == "table1":
        return _t1()
    if stem == "table3":
        return _t3()
    if stem == "table4":
        return _t4()
    if stem == "table14":
        return _t14()
    if stem == "table2":
        return _t2()
    if stem.startswith("table5_"):
        return _t5(stem.removeprefix("table5_"))
    if stem.startswith("table_support_"):
        pairs = {slug(p): p for p in load("pairs")["pair"]}
        return _appendix(pairs[stem.removeprefix("table_support_")])
    raise KeyError(stem)


_LABELS = {"Name", "Model", "Domain", "Dataset", "pair", "benchmark", "model", "step", "category",
           "reference", "role"}


def check(path: Path) -> pd.DataFrame:
    """One row per non-label cell of the table at ``path``: ``file, row, column, shown,
    printed, kind`` (checked, empty, added) and ``differs`` (why, or "")."""
    _, header, body = read_markdown(path)
    printed, key_of = _mapper(path.stem)
    rows = []
    for cells in body:
        row = dict(zip([_base(h) for h in header], cells))
        row_label = cells[0]
        row_added = row_label.endswith(ADDED)
        row = {k: (v.removesuffix(ADDED).strip() if k in _LABELS else v) for k, v in row.items()}
        key = key_of(row)
        ref = printed.get(key)
        for h, text in zip(header, cells):
            col = _base(h)
            if col in _LABELS:
                continue
            entry = {"file": path.name, "row": str(key), "column": col, "shown": text,
                     "printed": "", "differs": ""}
            value = None if ref is None else ref.get(col)
            shown, _ = _shown_number(text)
            if value is None or _printed_text(*value) is None:
                kind = "empty" if shown in EMPTY else (
                    "added, labelled" if (h.endswith(ADDED) or row_added) else "added")
                rows.append({**entry, "kind": kind})
                continue
            expected = _printed_text(*value)
            differs = "" if shown == expected else (
                "empty where the paper prints a number" if shown in EMPTY
                else _why(shown, expected))
            rows.append({**entry, "printed": expected, "kind": "checked", "differs": differs})
        if ref is not None:  # a printed number with no column at all is not checked: report it
            shown_cols = {_base(h) for h in header}
            for col, value in ref.items():
                if col not in shown_cols and _printed_text(*value) is not None and not (
                        col in _PASS_BASE + _PASS_RL and any(c in shown_cols
                                                             for c in _PASS_BASE + _PASS_RL)):
                    rows.append({"file": path.name, "row": str(key), "column": col, "shown": "",
                                 "printed": _printed_text(*value), "kind": "checked",
                                 "differs": "printed number not shown"})
    return pd.DataFrame(rows, columns=["file", "row", "column", "shown", "printed", "kind",
                                       "differs"])


def check_all(folder: Path | None = None) -> pd.DataFrame:
    """:func:`check` over every paper-route table of ``folder``."""
    return pd.concat([check(p) for p in paper_tables(folder)], ignore_index=True)


if __name__ == "__main__":
    cells = check_all(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    checked = cells[cells["kind"] == "checked"]
    diff = checked[checked["differs"] != ""]
    print(f"tables: {cells['file'].nunique()}; checked cells: {len(checked)}; "
          f"differing: {len(diff)}")
    print(diff.groupby(["file", "differs"]).size().to_string())
    print("added cells:", cells["kind"].value_counts().to_dict())
    print(cells[cells["kind"].str.startswith("added")].groupby(["file", "kind"]).size()
          .to_string())
    if "-v" in sys.argv:
        print(diff.to_string())
