"""The paper's printed numbers as reference data, and an audit of them.

``data/paper/`` holds every number the paper (arXiv 2507.14843, v4) prints in its tables, as
tidy CSV files transcribed from its Tables 1-14 and Figures 1 and 4 (``data/paper/README.md``
says where in the paper each comes from). This module

* loads them with one loader over a schema table (:func:`load`, :data:`SCHEMAS`), fixing the
  dtypes and validating every file at the boundary;
* rebuilds Table 1 from the per-benchmark appendix counts (``rebuild_table1()``), rounded by the
  rule that fits 79 of its 80 printed metric cells (``round_half_up``, double rounding of the
  pooled metric, 3 dp -> 2 dp: derived here by comparing Table 1 with the appendix Tables 6-12,
  whose printed aggregates have 3 or 4 dp and are not what Table 1 rounds);
* recomputes every derived number in the paper from the paper's own printed counts and compares
  it with the printed value (``audit()``); ``discrepancies()`` keeps the rows that disagree;
* gives the printed numbers the artifact functions' interface (:class:`PaperSource`, the
  counterpart of :class:`leash.artifacts.StudySource`).

The numeric claims of the paper's text, recomputed from these numbers, are
:mod:`leash.sources.claims`.

Nothing is hard-coded about which rows disagree: the audit computes, and explanations are looked
up afterwards in ``discrepancies.csv`` (:func:`known_explanations`); a disagreement that has no
known explanation is labelled ``"UNEXPLAINED"`` so that a transcription error shows up.

The metric formulas live only in :func:`leash.core.support.support_metrics`.
"""

from __future__ import annotations

import numbers
from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from leash.core._validation import (
    DATAFRAME,
    ArrayLike,
    InstancesOf,
    Interval,
    Paths,
    StrOptions,
    invalid,
    shown,
    validate_params,
)
from leash.core.support import COUNT_NAMES, METRIC_NAMES, support_metrics
from leash.errors import LeashValueError, Param
from leash.paths import DATA
from leash.sources.choices import PAPER

__all__ = [
    "PAPER", "DATA_DIR", "SCHEMAS", "round_half_up", "load", "known_explanations",
    "rebuild_table1", "audit", "discrepancies", "PaperSource",
]

#: Folder of the paper's reference CSVs (``data/paper/`` of the repository, or the installed
#: package's copy).
DATA_DIR = DATA / "paper"

_DOMAIN_LABEL = {"math": "Math", "non-math": "Non-Math", "overall": "Overall"}
# Float slack for "within tolerance" comparisons of binary floats (values are <= ~2e4).
_SLACK = 1e-9

# ---------------------------------------------------------------------------------------------
# Rounding
# ---------------------------------------------------------------------------------------------


def _round_one(v, decimals: int) -> float:
    """Round one number half away from zero ("half up" in magnitude) at ``decimals`` places."""
    if v is None or v is pd.NA:
        return float("nan")
    if isinstance(v, numbers.Rational) and not isinstance(v, bool):
        # Exact: floor(|v| * 10^d + 1/2) with the sign put back.
        fr = Fraction(v)
        scaled = abs(fr) * 10**decimals
        n = int(scaled + Fraction(1, 2))  # int() floors a positive Fraction
        return float(Fraction(n if fr >= 0 else -n, 10**decimals))
    if isinstance(v, Decimal):
        d = v
    else:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise invalid("x", "round_half_up", _REAL, shown(v), v)
        f = float(v)
        if not np.isfinite(f):
            return f
        # repr() is the shortest decimal string that reads back as the same float, i.e. the
        # decimal number the float stands for (0.0345, not 0.03449999999999999983...).
        d = Decimal(repr(f))
    return float(d.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


_REAL = "a real number (int, float, Fraction, Decimal) or an array of them"


@validate_params({"x": [InstancesOf(numbers.Number, _REAL, float), ArrayLike(), None,
                        InstancesOf(type(pd.NA), "pandas.NA")],
                  "decimals": [Interval(numbers.Integral, 0, None, closed="left")]})
def round_half_up(x, decimals):
    """Round half away from zero at ``decimals`` places, as printed tables do.

    Written by hand on purpose, for two reasons. ``numpy.round`` and Python's ``round`` round
    ties to even (0.125 -> 0.12), while printed tables round them up (0.13). And a binary float
    cannot hold most decimal ties (0.0345 is stored as 0.034499999999999999...), so even a
    half-up rule applied to the float goes down at exactly the ties that matter for the paper's
    double rounding. Here a float is read as the decimal its shortest ``repr`` denotes and
    rounded with :mod:`decimal` (``ROUND_HALF_UP``, i.e. ties away from zero); ``Fraction`` and
    ``int`` input is rounded exactly.

    For ratios of the paper's counts (denominators below 10^5) the repr reading is exact: a
    ratio that is not exactly a decimal half differs from it by more than 1e-11, far more than
    the float error, so only true halves are rounded up.

    Parameters
    ----------
    x : float, int, Fraction, Decimal or array_like of them, shape (n,)
        Values to round. NaN and infinities are returned unchanged; None and ``pd.NA`` give NaN.
    decimals : int
        Number of decimal places, ``>= 0``.

    Returns
    -------
    float or ndarray of float, shape (n,)
        A float for scalar input, otherwise an array of the input's shape.

    Examples
    --------
    >>> round_half_up(0.0345, 3), round_half_up(round_half_up(0.0346, 3), 2)
    (0.035, 0.04)
    >>> round_half_up(-0.0045, 3)  # ties go away from zero
    -0.005
    """
    if isinstance(x, numbers.Number) and not isinstance(x, np.ndarray):
        return _round_one(x, decimals)
    arr = np.asarray(x, dtype=object)
    out = np.array([_round_one(v, decimals) for v in arr.ravel()], dtype=np.float64)
    return out.reshape(arr.shape)


# ---------------------------------------------------------------------------------------------
# Loading: one loader over a schema table
# ---------------------------------------------------------------------------------------------

_METRIC_SPEC = " ".join([*(f"{m}:f" for m in METRIC_NAMES),
                         *(f"{m}_decimals:i" for m in METRIC_NAMES)])
_COUNT_SPEC = "P:i+ E:i+ S:i+ O:i+"

#: The schema table: file stem -> its columns, in order, as ``name[:type][?][+]``. Types: ``s``
#: text (the default), ``i`` whole number (``Int64`` when it may be empty, else ``int64``), ``f``
#: number (``float64``), ``b`` True/False (``boolean``). ``?``: the cell may be empty (NA);
#: ``+``: the value must be non-negative. What each file holds: ``data/paper/README.md``.
SCHEMAS: dict[str, str] = {
    "support_counts": "table pair base_model rl_model benchmark benchmark_printed domain k:i "
                      f"step:i? {_COUNT_SPEC} pass_base_percent:f? pass_rl_percent:f? "
                      f"pass_decimals:i {_METRIC_SPEC}",
    "support_aggregates": f"table pair base_model rl_model aggregate domain {_COUNT_SPEC} "
                          f"{_METRIC_SPEC}",
    "table1": f"model appendix_table? domain SRR:f NDR:f SDS:f NSCR:f decimals:i {_COUNT_SPEC}",
    "table2_perplexity": "category category_printed correctness reference target benchmark "
                         "benchmark_printed ppl:f? decimals:i? note?",
    "table4_step0": "table pair model benchmark benchmark_printed domain k:i step:i "
                    "pass_base_percent:f pass_decimals:i",
    "table5_entropy": "metric model role base_of_pair? row_marker? benchmark benchmark_printed "
                      "value:f decimals:i",
    "table13_models": "model full_name type params",
    "table14_passk": "benchmark benchmark_printed model pair k:i pass_at_k_percent:f decimals:i",
    "rg_figure4": "figure task series k:i pass_at_k:f decimals:i approximate:b note?",
    "figure1_passk": "figure task_printed benchmark domain k:i pass_base_percent:f "
                     "pass_rl_percent:f pair source",
    "benchmarks": "benchmark domain N:i+ suite printed_aliases? note?",
    "pairs": "pair base_model rl_model params table k_math:i k_non_math:i? base_hf_id_inferred? "
             "rl_hf_id_inferred? note?",
    "discrepancies": "table row quantity explanation",
    "claims": "claim where quote explanation?",
}


def _columns(spec: str):
    """``(name, type, may_be_empty, non_negative)`` of each column of a schema entry."""
    for item in spec.split():
        name, _, kind = item.rstrip("?+").partition(":")
        yield name, kind or "s", "?" in item, "+" in item


def _fail(name: str, bad, s: pd.Series, what: str):
    """Raise the error of the first bad cell: file, line (the header is line 1), column, value."""
    i = int(np.flatnonzero(np.asarray(bad))[0])
    raise LeashValueError(f"{name}, line {i + 2}: {what.format(value=s.iloc[i])}", file=name,
                          line=i + 2, key=s.name, value=s.iloc[i])


@validate_params({"table": [StrOptions(*SCHEMAS)], "data_dir": [Paths(), None]})
def load(table: str, data_dir=None) -> pd.DataFrame:
    """Read one of the paper's reference CSVs with its fixed dtypes, validated at the boundary.

    Parameters
    ----------
    table : str
        A key of :data:`SCHEMAS`: ``"support_counts"`` (Tables 3, 4, 6-12 per benchmark),
        ``"support_aggregates"``, ``"table1"``, ``"table2_perplexity"``, ``"table4_step0"``,
        ``"table5_entropy"``, ``"table13_models"``, ``"table14_passk"``, ``"rg_figure4"``,
        ``"figure1_passk"``, ``"benchmarks"``, ``"pairs"``, ``"discrepancies"`` (the audit's
        known disagreements) or ``"claims"`` (the text's numeric claims).
    data_dir : path-like, optional
        Folder holding the CSVs; default :data:`DATA_DIR`.

    Returns
    -------
    pandas.DataFrame
        The schema's columns in its order; empty cells as NA.

    Raises
    ------
    FileNotFoundError
        The file is missing.
    ValueError
        Naming the file, line, column and value: columns other than the schema's, an empty
        cell where none may be, a value that is not a number / whole number / True or False,
        a negative count.

    Examples
    --------
    >>> int(load("benchmarks").set_index("benchmark").loc["AIME2024", "N"])
    30
    """
    name = f"{table}.csv"
    path = Path(data_dir if data_dir is not None else DATA_DIR) / name
    if not path.is_file():
        raise FileNotFoundError(f"Reference file {name} not found at {path}.")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    columns = list(_columns(SCHEMAS[table]))
    missing = [c for c, *_ in columns if c not in raw.columns]
    extra = [c for c in raw.columns if c not in {c for c, *_ in columns}]
    if missing or extra:
        raise LeashValueError(
            f"{name}: columns do not match the schema. Missing {missing}, unexpected {extra}.",
            file=name, line=1, key=(missing or extra)[0])
    out = {}
    for col, kind, nullable, non_negative in columns:
        s = raw[col].str.strip()
        empty = s == ""
        if empty.any() and not nullable:
            _fail(name, empty, s, f"column '{col}' must not be empty.")
        if kind == "s":
            out[col] = s.mask(empty).astype("str")
        elif kind == "b":
            ok = s.isin(["True", "False"]) | empty
            if not ok.all():
                _fail(name, ~ok, s, f"column '{col}' must be True or False. Got {{value!r}}.")
            out[col] = s.map({"True": True, "False": False}).astype("boolean")
        else:
            num = pd.to_numeric(s.mask(empty), errors="coerce")
            if (num.isna() & ~empty).any():
                _fail(name, num.isna() & ~empty, s,
                      f"column '{col}' must be numeric. Got {{value!r}}.")
            if kind == "i" and (num.notna() & (num != np.round(num))).any():
                _fail(name, num.notna() & (num != np.round(num)), s,
                      f"column '{col}' must hold whole numbers. Got {{value!r}}.")
            if non_negative and (num < 0).any():
                _fail(name, num < 0, num.astype("Int64" if kind == "i" else "float64"),
                      f"column '{col}' must be non-negative. Got {{value}}.")
            out[col] = num.astype({"f": "float64", "i": "Int64" if nullable else "int64"}[kind])
    return pd.DataFrame(out)


def known_explanations(data_dir=None) -> dict[tuple[str, str, str], str]:
    """The audit's known disagreements, ``(table, row, quantity) -> explanation``.

    They are data (``discrepancies.csv``), each explanation citing the paper's table; the audit
    labels a disagreement missing here ``"UNEXPLAINED"``.

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding the CSVs; default :data:`DATA_DIR`.

    Returns
    -------
    dict
    """
    d = load("discrepancies", data_dir)
    keys = list(zip(d["table"], d["row"], d["quantity"]))
    if len(set(keys)) != len(keys):
        dup = next(k for i, k in enumerate(keys) if k in keys[:i])
        line = keys.index(dup, keys.index(dup) + 1) + 2
        raise LeashValueError(f"discrepancies.csv, line {line}: (table, row, quantity) {dup} is "
                              "listed twice.", file="discrepancies.csv", line=line, value=dup)
    return dict(zip(keys, d["explanation"]))


# ---------------------------------------------------------------------------------------------
# Table 1 rebuilt
# ---------------------------------------------------------------------------------------------


def _pool(counts: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Sum P, E, S, O per group of ``keys`` plus an "overall" domain over all benchmarks.

    "overall" is added only for groups that have more than one domain (Table 1 prints no
    Overall row for the math-only models).
    """
    by_dom = counts.groupby([*keys, "domain"], sort=False)[list(COUNT_NAMES)].sum().reset_index()
    ndom = by_dom.groupby(keys, sort=False)["domain"].transform("size")
    overall = (
        by_dom[ndom > 1].groupby(keys, sort=False)[list(COUNT_NAMES)].sum().reset_index()
    )
    overall["domain"] = "overall"
    nb = counts.groupby([*keys, "domain"], sort=False).size().rename("n_benchmarks")
    out = pd.concat([by_dom, overall], ignore_index=True)
    out = out.merge(nb.reset_index(), on=[*keys, "domain"], how="left")
    tot = counts.groupby(keys, sort=False).size().rename("n_all")
    out = out.merge(tot.reset_index(), on=keys, how="left")
    out["n_benchmarks"] = out["n_benchmarks"].fillna(out["n_all"]).astype("int64")
    return out.drop(columns="n_all")


def rebuild_table1(data_dir=None) -> pd.DataFrame:
    """Table 1 rebuilt by pooling the per-benchmark appendix counts per model and domain.

    For every model of Table 1 with an appendix table, P, E, S, O are summed over that table's
    benchmarks per domain ("math", "non-math") and over all of them ("overall", for models with
    both domains), then SRR, NDR, SDS, NSCR follow from :func:`leash.core.support.support_metrics`.
    ProRL-1.5B-v2 has no appendix table in v4: its "math" and "non-math" counts are Table 1's
    printed counts and its "overall" is their sum (``source`` says which).

    The displayed columns (``SRR_display`` ...) round the raw pooled metric half-up to 3 dp,
    then half-up to 2 dp (derived here from Table 1 against Tables 6-12: it gives 79 of the 80
    printed metric cells, all but Phi4-Reason-Plus-14B's Non-Math SDS); the raw values are kept
    in ``SRR`` ... .

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding the CSVs; default ``DATA_DIR``.

    Returns
    -------
    pandas.DataFrame, shape (20, 17)
        Columns model, domain, source, appendix_table, n_benchmarks (NA for ProRL-v2), P, E, S,
        O, SRR, NDR, SDS, NSCR (raw floats), SRR_display, NDR_display, SDS_display,
        NSCR_display (double-rounded); rows in the order of the printed Table 1.
    """
    t1 = load("table1", data_dir)
    counts = load("support_counts", data_dir)
    pieces = []
    for model, g in t1.groupby("model", sort=False):
        table = g["appendix_table"].iloc[0]
        if pd.isna(table):
            doms = g[g["domain"] != "overall"][["model", "domain", *COUNT_NAMES]].copy()
            doms["n_benchmarks"] = pd.NA
            overall = doms[list(COUNT_NAMES)].sum().to_frame().T
            overall["model"], overall["domain"] = model, "overall"
            overall["n_benchmarks"] = pd.NA
            part = pd.concat([doms, overall], ignore_index=True)
            part["source"] = "Table 1 printed domain counts (no appendix table in v4)"
            part = part[part["domain"].isin(g["domain"])]
        else:
            rows = counts[counts["table"] == table]
            if rows.empty:
                raise LeashValueError(
                    f"table1.csv: model {model!r} names appendix table {table!r}, which has no "
                    "rows in support_counts.csv.", file="table1.csv", key="appendix_table",
                    value=table)
            part = _pool(rows.assign(model=model), ["model"])
            part["source"] = f"Table {table} pooled per-benchmark counts"
        part["appendix_table"] = table
        pieces.append(part)
    out = pd.concat(pieces, ignore_index=True)
    for c in COUNT_NAMES:
        out[c] = out[c].astype("int64")
    out["n_benchmarks"] = out["n_benchmarks"].astype("Int64")
    m = support_metrics(out["P"], out["E"], out["S"], out["O"])
    for name in METRIC_NAMES:
        out[name] = getattr(m, name)
    for name in METRIC_NAMES:
        out[name + "_display"] = round_half_up(round_half_up(out[name].to_numpy(), 3), 2)
    # Order as printed Table 1 (models in order, then math, non-math, overall).
    dom_order = {"math": 0, "non-math": 1, "overall": 2}
    model_order = {m_: i for i, m_ in enumerate(t1["model"].unique())}
    out = out.sort_values(
        ["model", "domain"],
        key=lambda s: s.map(model_order) if s.name == "model" else s.map(dom_order),
    ).reset_index(drop=True)
    cols = ["model", "domain", "source", "appendix_table", "n_benchmarks", *COUNT_NAMES,
            *METRIC_NAMES,
            *(m_ + "_display" for m_ in METRIC_NAMES)]
    return out[cols]


# ---------------------------------------------------------------------------------------------
# Audit
# ---------------------------------------------------------------------------------------------

_AUDIT_COLUMNS = [
    "table", "row", "quantity", "printed", "recomputed", "tolerance", "agrees", "explanation",
    "pair", "benchmark", "domain", "step", "recomputed_unrounded", "check",
]


def _half_unit(decimals) -> np.ndarray:
    return 0.5 * np.power(10.0, -np.asarray(decimals, dtype=np.float64))


def _frame(ids: dict, quantity, printed, recomputed, check, *, tolerance=0.0, unrounded=None,
           sel=None, **extra) -> pd.DataFrame:
    """Audit rows, one per printed value (``sel``: a mask of the rows to keep)."""
    cols = {**ids, "quantity": quantity, "printed": printed, "recomputed": recomputed,
            "recomputed_unrounded": recomputed if unrounded is None else unrounded,
            "tolerance": tolerance, "check": check, **extra}
    if sel is not None:
        cols = {c: np.asarray(v)[sel] if np.ndim(v) else v for c, v in cols.items()}
    return pd.DataFrame(cols).reindex(columns=_AUDIT_COLUMNS)


def _ids(df: pd.DataFrame, table, row) -> dict:
    return {"table": table, "row": row,
            **{c: df[c] for c in ("pair", "benchmark", "domain", "step") if c in df.columns}}


def _metric_checks(ids: dict, printed: pd.DataFrame, counts, what: str) -> list[pd.DataFrame]:
    m = support_metrics(*counts)
    return [_frame(ids, name, printed[name], np.asarray(getattr(m, name)),
                   f"metric from {what}, within half a unit of the last printed digit",
                   tolerance=_half_unit(printed[name + "_decimals"])) for name in METRIC_NAMES]


def _check_per_benchmark(sc: pd.DataFrame, bench: pd.DataFrame, step0: pd.DataFrame) -> list:
    row = sc["pair"].astype(str) + " | " + sc["benchmark"].astype(str)
    row = row.where(sc["step"].isna(), row + " | step " + sc["step"].astype(str))
    ids = _ids(sc, sc["table"], row)
    out = _metric_checks(ids, sc, (sc["P"], sc["E"], sc["S"], sc["O"]), "printed P/E/S/O")
    n_row = (sc["P"] + sc["E"] + sc["S"] + sc["O"]).to_numpy()
    n_size = sc["benchmark"].map(bench.set_index("benchmark")["N"])
    if n_size.isna().any():
        b = sc.loc[n_size.isna(), "benchmark"].iloc[0]
        raise LeashValueError(f"support_counts.csv: benchmark {b!r} is not in benchmarks.csv.",
                              file="support_counts.csv", key="benchmark", value=b)
    out.append(_frame(ids, "N", n_row.astype(float), n_size.astype(float),
                      "N = P+E+S+O equals the benchmark size of benchmarks.csv"))
    for col, found in (("pass_base_percent", sc["P"] + sc["S"]),
                       ("pass_rl_percent", sc["P"] + sc["E"])):
        out.append(_frame(ids, col, sc[col], (100.0 * found / n_row).to_numpy(),
                          "pass@k = 100 (P+S)/N (base) or 100 (P+E)/N (RLVR)",
                          tolerance=_half_unit(sc["pass_decimals"]),
                          sel=sc[col].notna().to_numpy()))
    # Pairs sharing a base model and budget must find the same questions with the base model:
    # P+S must be the same in every row of the group (Tables 7/8, Table 3 SFT/DAPO, Table 4).
    base_found = (sc["P"] + sc["S"]).astype(float)
    group = base_found.groupby([sc["base_model"], sc["benchmark"], sc["k"]])
    out.append(_frame(ids, "P+S (shared base)", base_found, group.transform("first"),
                      "rows with the same base model, benchmark and budget have the same P+S",
                      sel=(group.transform("size") > 1).to_numpy()))
    # Table 4 prints the base pass@256 once, at step 0: it is (P+S)/N of every step's row.
    t4, s0 = (sc["table"] == "4").to_numpy(), step0.set_index("benchmark")
    out.append(_frame(ids, "pass_base_percent (step 0)",
                      sc["benchmark"].map(s0["pass_base_percent"]),
                      (100.0 * base_found / n_row).to_numpy(),
                      "step-0 base pass@256 = 100 (P+S)/N of every step's row",
                      tolerance=_half_unit(sc["benchmark"].map(s0["pass_decimals"])),
                      sel=t4))
    return out


def _check_aggregates(sc: pd.DataFrame, ag: pd.DataFrame) -> list[pd.DataFrame]:
    pooled = _pool(sc[sc["table"].isin(ag["table"].unique())], ["table", "pair"])
    m = ag.merge(pooled, on=["table", "pair", "domain"], how="left", suffixes=("", "_pooled"),
                 validate="one_to_one")
    if m["P_pooled"].isna().any():
        r = m[m["P_pooled"].isna()].iloc[0]
        raise LeashValueError(f"support_aggregates.csv: aggregate {r['aggregate']!r} of Table "
                              f"{r['table']} has no per-benchmark rows to pool.",
                              file="support_aggregates.csv", key="aggregate",
                              value=r["aggregate"])
    ids = _ids(m, m["table"], m["pair"] + " | " + m["aggregate"])
    out = [_frame(ids, c, m[c].astype(float), m[c + "_pooled"].astype(float),
                  "aggregate count = sum of the per-benchmark counts") for c in COUNT_NAMES]
    return out + _metric_checks(ids, m, [m[c + "_pooled"] for c in COUNT_NAMES], "pooled counts")


def _check_table1(t1: pd.DataFrame, rebuilt: pd.DataFrame, sc: pd.DataFrame,
                  bench: pd.DataFrame) -> list[pd.DataFrame]:
    m = t1.merge(rebuilt, on=["model", "domain"], how="left", suffixes=("", "_rebuilt"),
                 validate="one_to_one")
    ids = {"table": "1", "row": m["model"] + " | " + m["domain"], "pair": m["model"],
           "domain": m["domain"]}
    out = [_frame(ids, c, m[c].astype(float), m[c + "_rebuilt"].astype(float),
                  np.where(m["appendix_table"].isna(),
                           "overall = math + non-math of the printed Table 1 counts",
                           "Table 1 count = appendix counts pooled per domain"))
           for c in COUNT_NAMES]
    for name in METRIC_NAMES:
        raw, double = m[name + "_rebuilt"].to_numpy(), m[name + "_display"].to_numpy()
        single = round_half_up(raw, 2)
        expl = [None if s == d else
                f"printed value needs the double rounding (3 dp then 2 dp): raw {r:.5f} -> "
                f"{round_half_up(r, 3):.3f} -> {d:.2f}; single rounding gives {s:.2f}"
                for r, d, s in zip(raw, double, single)]
        out.append(_frame(ids, name, m[name], double,
                          "metric from pooled counts, rounded half-up to 3 dp then to 2 dp",
                          unrounded=raw, explanation=expl))
    # N per domain: the benchmark sizes of the pair's appendix table (ProRL-v2, which has none:
    # the v1 set, inferred here because its Table 1 N of 1547 math, 1857 non-math fits it).
    sizes = (sc.assign(N=sc["benchmark"].map(bench.set_index("benchmark")["N"]))
             .drop_duplicates(["table", "benchmark"]).groupby(["table", "domain"])["N"].sum())
    v1_table = t1.loc[t1["model"] == "ProRL-1.5B-v1", "appendix_table"].iloc[0]
    expected = [float(sizes.loc[tab].sum()) if dom == "overall"
                else float(sizes.get((tab, dom), np.nan))
                for tab, dom in zip(m["appendix_table"].fillna(v1_table), m["domain"])]
    out.append(_frame(ids, "N", (m["P"] + m["E"] + m["S"] + m["O"]).astype(float), expected,
                      "P+E+S+O = total benchmark size of the domain (ProRL-v2: benchmarks of "
                      "Table 6)"))
    return out


def _check_table2(t2: pd.DataFrame, sc: pd.DataFrame) -> pd.DataFrame:
    """A Table 2 cell can only exist if the category is non-empty on that benchmark (Table 6)."""
    v1 = sc[(sc["table"] == "6")].set_index("benchmark")
    count_of = {"shrinkage": "S", "expansion": "E", "out_of_support": "O"}
    p = t2.assign(p=t2["ppl"].notna()).groupby(["category", "benchmark"], sort=False)["p"]
    p = p.any().reset_index()
    expected = [float(v1.loc[b, count_of[c]] > 0) for c, b in zip(p["category"], p["benchmark"])]
    return _frame({"table": "2", "row": p["category"] + " | " + p["benchmark"],
                   "benchmark": p["benchmark"], "domain": "math"}, "cell_present",
                  p["p"].astype(float), expected,
                  "perplexity printed iff Table 6 (ProRL-1.5B-v1) has a question in that category")


def _check_table5(t5: pd.DataFrame) -> pd.DataFrame:
    is_avg = t5["benchmark"] == "Avg"
    body = t5[~is_avg].groupby(["metric", "model"], sort=False)
    avg = t5[is_avg].set_index(["metric", "model"])
    if len(avg) != body.ngroups or (body.size() != 5).any():
        raise LeashValueError("table5_entropy.csv: every (metric, model) needs 5 benchmarks and "
                              "Avg.", file="table5_entropy.csv")
    mean = body["value"].mean().reindex(avg.index).to_numpy()
    # The printed Avg is rounded (half a unit) and so are its 5 inputs (their mean is off by at
    # most half a unit of their last digit): both bounds add up.
    tol = _half_unit(avg["decimals"]) + _half_unit(body["decimals"].max().reindex(avg.index))
    row = avg.index.get_level_values(0) + " | " + avg.index.get_level_values(1)
    return _frame({"table": "5", "row": row}, "Avg", avg["value"].to_numpy(), mean,
                  "Avg = unweighted mean of the 5 printed benchmark values (rounding of Avg and "
                  "of the inputs both allowed)", tolerance=np.asarray(tol))


def _check_table14(t14: pd.DataFrame, sc: pd.DataFrame, bench: pd.DataFrame) -> list:
    t3 = sc[sc["table"] == "3"].set_index(["pair", "benchmark"])["pass_rl_percent"]
    target = [t3.get((p, b), np.nan) for p, b in zip(t14["pair"], t14["benchmark"])]
    ids = {"table": "14", "row": t14["model"] + " | " + t14["benchmark"],
           "pair": t14["pair"], "benchmark": t14["benchmark"], "domain": "math"}
    n = t14["benchmark"].map(bench.set_index("benchmark")["N"]).astype(float)
    nearest = 100.0 * np.round(t14["pass_at_k_percent"] * n / 100.0) / n
    return [_frame(ids, "pass@256 = Table 3 Target", t14["pass_at_k_percent"], target,
                   "Table 14 @256 equals Table 3's printed RLVR pass@256",
                   tolerance=_half_unit(t14["decimals"]), sel=(t14["k"] == 256).to_numpy()),
            _frame({**ids, "row": ids["row"] + " | k=" + t14["k"].astype(str)},
                   "multiple of 1/N", t14["pass_at_k_percent"], nearest,
                   "printed pass@k is a whole number of questions out of N",
                   tolerance=_half_unit(t14["decimals"]))]


def audit(data_dir=None) -> pd.DataFrame:
    """Recompute every derived number of the paper from its printed counts and compare.

    Checks (one output row per printed value checked):

    * Tables 3, 4, 6-12, per benchmark: SRR, NDR, SDS, NSCR from the printed P/E/S/O (tolerance
      half a unit of the last printed digit); N = P+E+S+O against the benchmark size
      (``benchmarks.csv``); printed pass@k of base = (P+S)/N and of RLVR = (P+E)/N; P+S equal
      across rows sharing a base model, benchmark and budget.
    * Table 4: the step-0 base pass@256 = (P+S)/N of every step's row.
    * Tables 6-12 aggregates: pooled per-benchmark counts equal the printed counts exactly; the
      metrics of the pooled counts match the printed ones.
    * Table 1: counts equal the pooled appendix counts (ProRL-v2: overall = math + non-math);
      metrics equal the pooled raw metric rounded half-up to 3 then to 2 decimals; cells where
      single and double rounding differ get an explanation even when they agree; N per domain.
    * Table 2: a perplexity cell is printed iff Table 6 has a question in that category.
    * Table 5: the Avg column is the unweighted mean of the five benchmarks.
    * Table 14: @256 equals Table 3's Target; every value is a multiple of 1/N.

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding the CSVs; default ``DATA_DIR``.

    Returns
    -------
    pandas.DataFrame, shape (n_checks, 14)
        Columns ``table, row, quantity, printed, recomputed, tolerance, agrees, explanation``
        followed by the identifiers ``pair, benchmark, domain, step``, the unrounded value
        ``recomputed_unrounded`` and a description ``check``. ``agrees`` is
        ``|printed - recomputed| <= tolerance`` (plus 1e-9 of float slack). ``explanation`` is
        the known explanation (``discrepancies.csv``, :func:`known_explanations`) for a
        disagreement, ``"UNEXPLAINED"`` for a disagreement without one, and otherwise a
        computed note or missing.
    """
    sc = load("support_counts", data_dir)
    ag = load("support_aggregates", data_dir)
    t1 = load("table1", data_dir)
    bench = load("benchmarks", data_dir)
    parts = [
        *_check_per_benchmark(sc, bench, load("table4_step0", data_dir)),
        *_check_aggregates(sc, ag),
        *_check_table1(t1, rebuild_table1(data_dir), sc, bench),
        _check_table2(load("table2_perplexity", data_dir), sc),
        _check_table5(load("table5_entropy", data_dir)),
        *_check_table14(load("table14_passk", data_dir), sc, bench),
    ]
    out = pd.concat(parts, ignore_index=True)
    for c in ("printed", "recomputed", "tolerance", "recomputed_unrounded"):
        out[c] = out[c].astype("float64")
    out["step"] = out["step"].astype("Int64")
    for c in ("table", "row", "quantity", "pair", "benchmark", "domain", "check"):
        out[c] = out[c].astype("str").where(out[c].notna())
    diff = (out["printed"] - out["recomputed"]).abs()
    both_nan = out["printed"].isna() & out["recomputed"].isna()
    out["agrees"] = ((diff <= out["tolerance"] + _SLACK) | both_nan).astype(bool)
    known_ = known_explanations(data_dir)
    known = [known_.get(key) for key in zip(out["table"], out["row"], out["quantity"])]
    expl = out["explanation"].astype(object).where(out["explanation"].notna(), None)
    expl = [k if k is not None else e for k, e in zip(known, expl)]
    expl = ["UNEXPLAINED" if (not a and e is None) else e for a, e in zip(out["agrees"], expl)]
    out["explanation"] = pd.Series(expl, dtype="str").where(pd.notna(pd.Series(expl)))
    return out


@validate_params({"audit_frame": [DATAFRAME, None], "data_dir": [Paths(), None]})
def discrepancies(audit_frame: pd.DataFrame | None = None, data_dir=None) -> pd.DataFrame:
    """Rows of :func:`audit` where the printed value disagrees with the recomputed one.

    Parameters
    ----------
    audit_frame : pandas.DataFrame, optional
        Output of :func:`audit`; computed when omitted.
    data_dir : path-like, optional
        Passed to :func:`audit` when ``audit_frame`` is omitted.

    Returns
    -------
    pandas.DataFrame, shape (n_disagreements, 14)
        Same columns as :func:`audit`; ``explanation`` is ``"UNEXPLAINED"`` for a disagreement
        that ``discrepancies.csv`` does not cover.
    """
    if audit_frame is None:
        audit_frame = audit(data_dir)
    elif "agrees" not in audit_frame.columns:
        raise invalid("audit_frame", "discrepancies", "the DataFrame returned by audit() (with "
                      "its column 'agrees')", f"a DataFrame of the columns "
                      f"{shown(list(audit_frame.columns))}", audit_frame)
    return audit_frame[~audit_frame["agrees"]].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# The printed numbers as an artifact source
# ---------------------------------------------------------------------------------------------


def _with_pass_and_tests(t: pd.DataFrame) -> pd.DataFrame:
    """Add pass@k of both models ((P+S)/N, (P+E)/N) and the exact and mid-p McNemar tests of E vs
    S; the significant subsets of E and S need per-question counts, which the paper does not
    print (NA).
    """
    from leash.core.stats import mcnemar_exact, mcnemar_midp

    tests = [mcnemar_exact(int(e), int(s)) for e, s in zip(t["E"], t["S"])]
    na = pd.array([pd.NA] * len(t), dtype="Int64")
    return t.assign(**{"pass@k base": (t["P"] + t["S"]) / t["N"],
                       "pass@k rl": (t["P"] + t["E"]) / t["N"],
                       "mcnemar_p": [r.p_value for r in tests],
                       "mcnemar_midp": [mcnemar_midp(int(e), int(s)) for e, s in zip(t["E"],
                                                                                   t["S"])],
                       "E/(E+S) low": [r.ci_low for r in tests],
                       "E/(E+S) high": [r.ci_high for r in tests],
                       "significant E": na, "significant S": na.copy()})


class PaperSource:
    """The paper's printed numbers with the interface of a study (``leash.artifacts``).

    One method per artifact input, as :class:`leash.artifacts.StudySource`; each returns what
    the paper prints, in the columns a study gives. Arguments that only per-question data can
    honour (``min_count``, ``k``, bootstrap, ``estimator``, ``na``...) are accepted and do not
    apply: the printed numbers are what they are.

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding the CSVs; default :data:`DATA_DIR`.
    """

    name = PAPER
    title = "the paper's printed numbers"
    simulated = False
    is_paper = True

    def __init__(self, data_dir=None):
        self.data_dir = data_dir

    def __repr__(self) -> str:
        return "PaperSource()"

    def inputs(self) -> str:
        """What an artifact records as its input data."""
        return "data/paper/"

    def skip_reason(self, section: str | None = None, printed: bool = True) -> str | None:
        """Why a notebook cannot run on the printed numbers (None: it can)."""
        return None if printed else ("the paper prints no per-question data for this artifact; "
                                     "run it with study='demo' or a study file")

    def caption(self, text: str, paper: str = "the paper's printed numbers") -> str:
        """``"Table 1 (the paper's printed numbers)"``."""
        return f"{text} ({paper})"

    def estimator(self, section: str, given: str | None = None) -> tuple[str, str]:
        """The pass@k estimator the printed values fit, and where that comes from."""
        return "first-k", ("the paper's printed values, which fit it (the paper states none; "
                           "the `estimator` parameter does not apply)")

    def na_rule(self, given: str | None = None) -> tuple[str, str]:
        """The NA rule of answer entropy behind Table 5, and where that comes from."""
        from leash.core.entropy import PAPER_NA

        return PAPER_NA, "the paper's printed values (the `na` parameter does not apply)"

    def section(self, name: str):
        """The paper has no study sections: per-question data are not printed."""
        raise LeashValueError(f"The paper's printed numbers have no per-question data (section "
                              f"{name!r}); use ", Param("study", value="demo"), " or a study "
                              "file.", param="study", value=PAPER, key=name)

    def _counts(self, tables, *, by=("pair",), pool=True) -> pd.DataFrame:
        from leash.analysis.tables import support_from_counts

        b = load("benchmarks", self.data_dir)
        sc = load("support_counts", self.data_dir)
        sc = sc[sc["table"].astype(int).isin(tables)]
        t = support_from_counts(sc, by=list(by), domains=dict(zip(b["benchmark"], b["domain"])),
                                pool=pool)
        k = sc.drop_duplicates(["pair", "benchmark"]).set_index(["pair", "benchmark"])["k"]
        t["k"] = pd.array([k.get((p, b), pd.NA) for p, b in zip(t["pair"], t["benchmark"])],
                          dtype="Int64")  # printed per benchmark only
        return _with_pass_and_tests(t.assign(k_min=t["k"], k_max=t["k"]))

    def support_counts(self, section: str = "support", **_) -> pd.DataFrame:
        """Tables 6-12 (``"support"``, with ProRL-1.5B-v2's Table 1 rows) or Table 3 (``"sft"``):
        per benchmark and pooled, in the layout of :func:`leash.analysis.tables.support_table`.
        """
        if section == "sft":
            return self._counts([3])
        t = self._counts([6, 7, 8, 9, 10, 11, 12])
        # ProRL-1.5B-v2 has no appendix table: its printed domain counts (Table 1).
        v2 = rebuild_table1(self.data_dir)
        v2 = v2[v2["appendix_table"].isna()]
        overall = v2["domain"] == "overall"
        v2 = _with_pass_and_tests(pd.DataFrame({
            "pair": v2["model"], "scope": np.where(overall, "overall", "domain"),
            "benchmark": v2["domain"].map(_DOMAIN_LABEL),
            "domain": np.where(overall, "", v2["domain"]), "N": v2[list(COUNT_NAMES)].sum(axis=1),
            **{c: v2[c] for c in [*COUNT_NAMES, *METRIC_NAMES]}}))
        order = {p: i for i, p in enumerate(dict.fromkeys(load("pairs", self.data_dir)["pair"]))}
        t = pd.concat([t, v2], ignore_index=True)
        return t.iloc[np.argsort(t["pair"].map(order).to_numpy(), kind="stable")].reset_index(
            drop=True)

    def checkpoint_counts(self, **_) -> pd.DataFrame:
        """Table 4: each DAPO step against step 0, per benchmark (pass@256)."""
        t = self._counts([4], by=("pair", "step"), pool=False)
        return t.assign(k=256)

    def passk(self, *, ks=None, **_) -> pd.DataFrame:
        """Table 14's pass@k (fractions) at the printed budgets, or at ``ks`` among them."""
        t = load("table14_passk", self.data_dir)
        if ks:
            printed = sorted(set(t["k"].astype(int)))
            missing = sorted(set(int(k) for k in ks) - set(printed))
            if missing:
                raise LeashValueError(f"the paper prints Table 14 at k = {printed}; no values "
                                      f"for k = {missing}.", func="sft_passk", param="ks",
                                      value=missing[0])
            t = t[t["k"].isin([int(k) for k in ks])]
        return pd.DataFrame({"benchmark": t["benchmark"], "model": t["model"], "k": t["k"],
                             "pass_at_k": t["pass_at_k_percent"] / 100.0,
                             "estimator": "first-k"}).reset_index(drop=True)

    def gym_curves(self, **_) -> pd.DataFrame:
        """Figure 4's series as decoded from the PDF (approximate; Figures 2-3 print none)."""
        f = load("rg_figure4", self.data_dir)
        return pd.DataFrame({"task": f["task"], "model": f["series"],
                             "role": np.where(f["series"] == "Base", "base", "rlvr"),
                             "k": f["k"], "pass_at_k": f["pass_at_k"], "estimator": "first-k",
                             "approximate": f["approximate"].astype(bool)})

    def passk_curves(self, section: str = "support", **_) -> pd.DataFrame:
        """The paper prints pass@k at the largest budget only (Figure 1): no curve."""
        raise LeashValueError("The paper prints pass@k at the largest budget only (Figure 1), no "
                              "pass@k against k; use ", Param("study", value="demo"), " or a "
                              "study file.", param="study", value=PAPER)

    def entropy(self, **_) -> pd.DataFrame:
        """Table 5 per model and benchmark (without its Avg column), wide per metric."""
        t = load("table5_entropy", self.data_dir)
        t = t[t["benchmark"] != "Avg"]
        names = {"avg32_accuracy_percent": "avg@n (%)", "response_length_tokens": "response_length"}
        t = t.assign(metric=t["metric"].replace(names))
        w = t.pivot_table(index=["model", "role", "benchmark"], columns="metric",
                          values="value", sort=False).reset_index()
        bases = t.drop_duplicates("model").set_index("model")["base_of_pair"]
        w.insert(2, "base_model", w["model"].map(bases))
        w["distinct_answers"] = np.nan
        w["na"] = self.na_rule()[0]
        w.columns.name = None
        return w

    def perplexity(self, **_) -> pd.DataFrame:
        """Table 2's printed cells (a "–" cell is left out)."""
        t = load("table2_perplexity", self.data_dir).dropna(subset=["ppl"])
        return pd.DataFrame({"category": t["category"], "reference": t["reference"],
                             "role": np.where(t["target"] == "Base", "base", "rlvr"),
                             "model": t["target"], "benchmark": t["benchmark"],
                             "ppl": t["ppl"], "n_traces": np.nan})
