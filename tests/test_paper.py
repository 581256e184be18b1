"""Tests of the paper's reference data (data/paper) and of leash.sources.paper.

References are independent of the library: metrics are recomputed here with exact fractions
(SDS through the paper's closed form 2PE / (P^2 + 2PE + ES), not the harmonic mean the library
uses), and benchmark sizes are typed by hand (the paper's N = P+E+S+O of Tables 6-12).
"""

from __future__ import annotations

import shutil
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import raises_with
from leash.sources import paper
from leash.sources.paper import round_half_up

METRICS = ("SRR", "NDR", "SDS", "NSCR")

# Benchmark sizes N (P+E+S+O, the same in every one of Tables 3, 4 and 6-12), typed by hand.
PAPER_N = {
    "MATH500": 500, "Minerva": 272, "OlympiadBench": 675, "AIME2024": 30, "AIME2025": 30,
    "AMC23": 40, "MathVista": 1000, "MathVision": 304, "SimpleQA": 433, "LiveBench-R": 100,
    "LiveBench-L": 50, "LiveBench-C": 128, "SciBench": 692, "LiveCodeBench-v5": 323,
    "LiveCodeBench-v6": 131,
}

T4_TYPO_ROW = "DeepSeek-1.5B-DAPO | AIME2025 | step 300"
# Every disagreement between printed and recomputed numbers, established by hand (see the
# README of data/paper): exactly these, nothing more, nothing less.
EXPECTED_DISCREPANCIES = {
    *(("4", T4_TYPO_ROW, q) for q in METRICS),
    ("1", "Phi4-Reason-Plus-14B | non-math", "SDS"),
    ("2", "expansion | AIME2025", "cell_present"),
    ("7", "Nemotron-1-7B | Agg Overall", "SRR"),
    ("8", "Skywork-OR1-7B | Agg Math", "NSCR"),
    ("8", "Skywork-OR1-7B | Agg Overall", "NSCR"),
    ("8", "Skywork-OR1-7B | Agg Overall", "SDS"),
}
AGGREGATE_EXCEPTIONS = {
    ("7", "math"): set(), ("7", "non-math"): set(), ("7", "overall"): {"SRR"},
    ("8", "math"): {"NSCR"}, ("8", "overall"): {"NSCR", "SDS"},
}


def exact_metrics(P, E, S, O):  # noqa: E741
    """Reference metrics as Fractions (None where undefined); SDS via the paper's closed form."""
    P, E, S = int(P), int(E), int(S)
    srr = Fraction(P, P + S) if P + S else None
    ndr = Fraction(E, P + E) if P + E else None
    den = P * P + 2 * P * E + E * S
    sds = Fraction(2 * P * E, den) if den else None
    nscr = Fraction(E - S, P + E + S) if P + E + S else None
    return {"SRR": srr, "NDR": ndr, "SDS": sds, "NSCR": nscr}


def within_half_unit(printed, exact, decimals):
    """|printed - exact| <= half a unit of the last printed digit, decided exactly."""
    return abs(Fraction(str(printed)) - exact) <= Fraction(1, 2 * 10 ** int(decimals))


@pytest.fixture(scope="module")
def counts():
    return paper.load("support_counts")


@pytest.fixture(scope="module")
def aggregates():
    return paper.load("support_aggregates")


@pytest.fixture(scope="module")
def audit_frame():
    return paper.audit()


# --- round_half_up -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "decimals", "expected"),
    [
        (0.0346, 3, 0.035),  # Table 7 -> Table 1, Nemotron-7B Non-Math SDS, first step
        (0.035, 2, 0.04),  # ... second step
        (0.9949, 3, 0.995),  # OVR SRR
        (0.995, 2, 1.00),
        (0.0148, 3, 0.015),  # ProRL-v1 overall NDR
        (0.015, 2, 0.02),
        (0.0148, 2, 0.01),  # single rounding of the same value
        (0.0345, 3, 0.035),  # a decimal tie stored as 0.03449999...
        (0.125, 2, 0.13),  # an exact binary tie (numpy gives 0.12)
        (2.5, 0, 3.0),
        (-2.5, 0, -3.0),  # ties go away from zero
        (-0.0045, 3, -0.005),
        (Fraction(69, 2000), 3, 0.035),
        (Fraction(-69, 2000), 3, -0.035),
        (Fraction(1, 3), 2, 0.33),
        (7, 2, 7.0),
    ],
)
def test_round_half_up_hand_values(x, decimals, expected):
    assert round_half_up(x, decimals) == expected


def test_round_half_up_double_rounding_of_table1():
    assert round_half_up(round_half_up(0.0346, 3), 2) == 0.04
    assert round_half_up(0.0346, 2) == 0.03  # single rounding differs
    assert round_half_up(round_half_up(0.9949, 3), 2) == 1.00


def test_round_half_up_arrays_and_nan():
    out = round_half_up(np.array([[0.0345, np.nan], [-0.0345, 1.0]]), 3)
    assert out.shape == (2, 2)
    np.testing.assert_array_equal(out, [[0.035, np.nan], [-0.035, 1.0]])
    assert np.isnan(round_half_up(float("nan"), 2))
    s = round_half_up(pd.Series([0.0346, 0.0344]), 3)
    np.testing.assert_array_equal(s, [0.035, 0.034])
    with_na = round_half_up(pd.array([7, None], dtype="Int64"), 1)
    np.testing.assert_array_equal(with_na, [7.0, np.nan])


@pytest.mark.parametrize(
    ("x", "decimals", "exc", "match"),
    [
        (0.5, -1, ValueError, "'decimals'.*range \\[0, inf\\). Got -1"),
        (0.5, 1.5, TypeError, "'decimals'.*must be an int.* Got 1.5"),
        (0.5, True, TypeError, "'decimals'"),
        ("0.5", 1, TypeError, "'x'"),
        ([0.5, "a"], 1, TypeError, "'x'"),
    ],
)
def test_round_half_up_rejects_bad_input(x, decimals, exc, match):
    with pytest.raises(exc, match=match):
        round_half_up(x, decimals)


@settings(max_examples=400, deadline=None)
@given(
    p=st.integers(-20000, 20000),
    q=st.integers(1, 20000),
    decimals=st.integers(0, 5),
)
def test_round_half_up_float_ratio_matches_exact_fraction(p, q, decimals):
    # The docstring's claim: for ratios of counts the float path is as good as exact arithmetic.
    assert round_half_up(p / q, decimals) == round_half_up(Fraction(p, q), decimals)


@given(n=st.integers(-(10**7), 10**7), decimals=st.integers(0, 4))
def test_round_half_up_exact_ties_go_away_from_zero(n, decimals):
    # x = (n + 1/2) / 10^d is exactly a tie; the result has magnitude (|n + 1/2| + 1/2) / 10^d.
    x = Fraction(2 * n + 1, 2 * 10**decimals)
    mag = (abs(2 * n + 1) + 1) // 2
    expected = Fraction(mag if n >= 0 else -mag, 10**decimals)
    assert round_half_up(x, decimals) == float(expected)
    assert round_half_up(float(x), decimals) == float(expected)


# --- the CSVs ----------------------------------------------------------------------------------


def test_loaders_shapes_and_dtypes(counts, aggregates):
    shapes = {
        "support_counts": (141, 24), "support_aggregates": (17, 18),
        "table1": (20, 12), "table2_perplexity": (36, 10),
        "table4_step0": (6, 10), "table5_entropy": (216, 9),
        "table14_passk": (90, 7), "rg_figure4": (66, 8),
        "figure1_passk": (10, 9), "benchmarks": (15, 6), "pairs": (11, 10),
        "discrepancies": (10, 4), "table13_models": (9, 4), "claims": (36, 4),
    }
    assert set(shapes) == set(paper.SCHEMAS)  # one schema per file, every file loaded here
    for name, shape in shapes.items():
        assert paper.load(name).shape == shape, name
    for c in ("P", "E", "S", "O", "k"):
        assert counts[c].dtype == np.int64
    assert counts["step"].dtype == "Int64"
    assert counts["SRR"].dtype == np.float64
    # Row counts per table, as printed: 6, 7, 8 have 13 benchmarks, 9, 10 have 11 (no LCB),
    # 11 has 2, 12 has 6, Table 3 has 6 x 2 models, Table 4 has 6 x 10 steps.
    per_table = counts.groupby("table").size().to_dict()
    assert per_table == {"3": 12, "4": 60, "6": 13, "7": 13, "8": 13, "9": 11, "10": 11,
                         "11": 2, "12": 6}
    assert not counts.duplicated(["table", "pair", "benchmark", "step"]).any()
    assert aggregates.groupby("table").size().to_dict() == {
        "6": 3, "7": 3, "8": 3, "9": 3, "10": 3, "11": 1, "12": 1}


def test_n_per_benchmark_matches_paper_sizes(counts):
    bench = paper.load("benchmarks").set_index("benchmark")["N"].to_dict()
    assert bench == PAPER_N
    n = counts["P"] + counts["E"] + counts["S"] + counts["O"]
    assert (n.to_numpy() == counts["benchmark"].map(PAPER_N).to_numpy()).all()
    # Domain totals: 1547 math, 1857 non-math (Table 6), 1403 non-math without LiveCodeBench.
    t6 = counts[counts["table"] == "6"]
    assert t6.groupby("domain")["benchmark"].apply(lambda b: sum(PAPER_N[x] for x in b)).to_dict() \
        == {"math": 1547, "non-math": 1857}
    t9 = counts[(counts["table"] == "9") & (counts["domain"] == "non-math")]
    assert sum(PAPER_N[b] for b in t9["benchmark"]) == 1403


def test_every_per_benchmark_metric_recomputes_except_the_table4_typo(counts):
    bad = set()
    for r in counts.itertuples():
        ex = exact_metrics(r.P, r.E, r.S, r.O)
        for m in METRICS:
            value = ex[m]
            if value is None or (m == "SDS" and r.E == 0):
                value = Fraction(0)  # the paper prints 0.000 when E = 0
            if not within_half_unit(getattr(r, m), value, getattr(r, m + "_decimals")):
                bad.add((r.table, r.benchmark, r.step, m))
    assert bad == {("4", "AIME2025", 300, m) for m in METRICS}


def test_table4_typo_values_by_hand(counts):
    r = counts[(counts["table"] == "4") & (counts["benchmark"] == "AIME2025")
               & (counts["step"] == 300)].iloc[0]
    assert (r.P, r.E, r.S, r.O) == (18, 2, 3, 7)
    ex = exact_metrics(18, 2, 3, 7)
    assert ex["SRR"] == Fraction(6, 7) and round_half_up(ex["SRR"], 3) == 0.857
    assert ex["NDR"] == Fraction(1, 10)
    assert round_half_up(ex["SDS"], 3) == 0.179 and round_half_up(ex["NSCR"], 3) == -0.043
    # The printed metrics are exactly those of P=19, E=2, S=3.
    alt = exact_metrics(19, 2, 3, 6)
    assert [round_half_up(alt[m], 3) for m in METRICS] == [r.SRR, r.NDR, r.SDS, r.NSCR]


def test_pass_at_k_percentages_follow_from_counts(counts):
    n = counts["P"] + counts["E"] + counts["S"] + counts["O"]
    for col, found in (("pass_base_percent", counts["P"] + counts["S"]),
                       ("pass_rl_percent", counts["P"] + counts["E"])):
        sel = counts[col].notna()
        for v, f, nn, d in zip(counts[col][sel], found[sel], n[sel], counts["pass_decimals"][sel]):
            assert within_half_unit(v, Fraction(100 * int(f), int(nn)), d), (v, f, nn)
    # Hand check: Table 6 AIME2024 base 93.3% = 28/30, ProRL 83.3% = 25/30.
    r = counts[(counts["table"] == "6") & (counts["benchmark"] == "AIME2024")].iloc[0]
    assert (r.P + r.S, r.P + r.E) == (28, 25)
    assert round_half_up(Fraction(2800, 30), 1) == r.pass_base_percent == 93.3


def test_table4_step0_base_equals_every_step(counts):
    step0 = paper.load("table4_step0").set_index("benchmark")["pass_base_percent"]
    t4 = counts[counts["table"] == "4"]
    for r in t4.itertuples():
        exact = Fraction(100 * (r.P + r.S), r.P + r.E + r.S + r.O)
        assert within_half_unit(step0[r.benchmark], exact, 2), (r.benchmark, r.step)


def test_pooled_counts_equal_printed_aggregates(counts, aggregates):
    for a in aggregates.itertuples():
        rows = counts[counts["table"] == a.table]
        if a.domain != "overall":
            rows = rows[rows["domain"] == a.domain]
        pooled = tuple(int(rows[c].sum()) for c in "PESO")
        assert pooled == (a.P, a.E, a.S, a.O), (a.table, a.aggregate)


def test_aggregate_metrics_recompute_except_four_cells(aggregates):
    bad = {}
    for a in aggregates.itertuples():
        ex = exact_metrics(a.P, a.E, a.S, a.O)
        for m in METRICS:
            if not within_half_unit(getattr(a, m), ex[m], getattr(a, m + "_decimals")):
                bad.setdefault((a.table, a.domain), set()).add(m)
    assert bad == {k: v for k, v in AGGREGATE_EXCEPTIONS.items() if v}


def test_hand_value_prorl_v1_math():
    # Table 6 math rows, pooled: P = 25+20+40+497+173+600 = 1355, E = 5, S = 56, SRR = 1355/1411.
    t1 = paper.rebuild_table1()
    r = t1[(t1["model"] == "ProRL-1.5B-v1") & (t1["domain"] == "math")].iloc[0]
    assert (r.P, r.E, r.S, r.O) == (1355, 5, 56, 131)
    assert r.SRR == pytest.approx(float(Fraction(1355, 1411)), rel=1e-15)
    assert r.NDR == pytest.approx(float(Fraction(5, 1360)), rel=1e-15)
    assert r.NSCR == pytest.approx(float(Fraction(-51, 1416)), rel=1e-15)
    assert r.SDS == pytest.approx(float(Fraction(2 * 1355 * 5, 1355**2 + 2 * 1355 * 5 + 5 * 56)))


def test_rebuilt_table1_agrees_with_printed():
    printed = paper.load("table1")
    rebuilt = paper.rebuild_table1()
    assert len(rebuilt) == len(printed) == 20
    m = printed.merge(rebuilt, on=["model", "domain"], suffixes=("", "_r"), validate="1:1")
    for c in "PESO":
        assert (m[c] == m[c + "_r"]).all(), c
    for q in METRICS:
        assert (abs(m[q] - m[q + "_r"]) <= 0.01).all(), q  # Table 1 prints 2 dp; raw values
    # Displayed (double-rounded) values equal the printed ones except one cell.
    diff = {(r.model, r.domain, q) for r in m.itertuples() for q in METRICS
            if getattr(r, q) != getattr(r, q + "_display")}
    assert diff == {("Phi4-Reason-Plus-14B", "non-math", "SDS")}
    v2 = rebuilt[rebuilt["model"] == "ProRL-1.5B-v2"]
    assert v2["source"].str.contains("printed").all() and len(v2) == 3
    assert (rebuilt.loc[rebuilt["model"] != "ProRL-1.5B-v2", "source"]
            .str.contains("pooled").all())


# --- audit --------------------------------------------------------------------------------------


def test_audit_structure(audit_frame):
    a = audit_frame
    assert list(a.columns[:8]) == ["table", "row", "quantity", "printed", "recomputed",
                                   "tolerance", "agrees", "explanation"]
    assert a["agrees"].dtype == bool
    assert (a["tolerance"] >= 0).all()
    assert a[["table", "row", "quantity", "printed", "recomputed"]].notna().all().all()
    assert not a.duplicated(["table", "row", "quantity"]).any()
    # Every per-benchmark row is checked for the 4 metrics, N and its printed pass@k.
    per_bench = a[a["quantity"].isin(METRICS) & a["step"].notna()]
    assert len(per_bench) == 60 * 4
    assert set(a["table"]) == {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12",
                               "14"}


def test_discrepancies_are_exactly_the_known_set(audit_frame):
    d = paper.discrepancies(audit_frame)
    found = set(zip(d["table"], d["row"], d["quantity"]))
    assert found == EXPECTED_DISCREPANCIES
    assert set(paper.known_explanations()) == EXPECTED_DISCREPANCIES  # no stale explanations
    assert not (d["explanation"] == "UNEXPLAINED").any()
    assert d["explanation"].str.len().gt(40).all()
    assert (audit_frame["explanation"] == "UNEXPLAINED").sum() == 0


def test_table1_double_rounding_cells_are_explained(audit_frame):
    t1 = audit_frame[(audit_frame["table"] == "1") & audit_frame["quantity"].isin(METRICS)]
    noted = t1[t1["agrees"] & t1["explanation"].notna()]
    assert set(zip(noted["row"], noted["quantity"])) == {
        ("ProRL-1.5B-v1 | overall", "NDR"),
        ("Nemotron-1-7B | non-math", "SRR"),
        ("Nemotron-1-7B | non-math", "SDS"),
        ("Nemotron-1-14B | non-math", "NSCR"),
        ("Kangheng-OVR-7B | math", "SRR"),
    }
    assert noted["explanation"].str.contains("double rounding").all()


def test_other_audit_checks_all_agree(audit_frame):
    a = audit_frame
    for table, quantity, n in [("5", "Avg", 36), ("14", "pass@256 = Table 3 Target", 10),
                               ("14", "multiple of 1/N", 90), ("1", "N", 20)]:
        rows = a[(a["table"] == table) & (a["quantity"] == quantity)]
        assert len(rows) == n and rows["agrees"].all(), (table, quantity)
    shared = a[a["quantity"] == "P+S (shared base)"]
    assert set(shared["table"]) == {"3", "4", "7", "8"} and shared["agrees"].all()


def test_audit_flags_a_planted_transcription_error(tmp_path):
    for f in paper.DATA_DIR.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "support_counts.csv"
    text = path.read_text().splitlines()
    i = next(j for j, line in enumerate(text) if ",AIME2024,AIME2024,math,8192,,25,0,3,2," in line)
    text[i] = text[i].replace(",25,0,3,2,", ",25,0,4,1,", 1)  # S 3 -> 4, O 2 -> 1
    path.write_text("\n".join(text) + "\n")
    d = paper.discrepancies(data_dir=tmp_path)
    new = d[d["explanation"] == "UNEXPLAINED"]
    assert {"SRR", "NSCR", "pass_base_percent", "S", "O"} <= set(new["quantity"])
    assert new["row"].str.startswith("ProRL-1.5B-v1").all()


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("table,pair", "tabel,pair", "Missing \\['table'\\].*unexpected \\['tabel'\\]"),
        (",25,0,3,2,", ",25,x,3,2,", "line 2: column 'E' must be numeric. Got 'x'"),
        (",25,0,3,2,", ",25,-1,3,2,", "line 2: column 'E' must be non-negative"),
        (",25,0,3,2,", ",25,0.5,3,2,", "line 2: column 'E' must hold whole numbers"),
        (",ProRL-1.5B-v1,", ",,", "line 2: column 'pair' must not be empty"),
    ],
)
def test_loader_rejects_corrupt_files(tmp_path, old, new, match):
    src = (paper.DATA_DIR / "support_counts.csv").read_text()
    (tmp_path / "support_counts.csv").write_text(src.replace(old, new, 1))
    with pytest.raises(ValueError, match=match):
        paper.load("support_counts", tmp_path)


def test_loader_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="table1.csv"):
        paper.load("table1", tmp_path)


def test_discrepancies_rejects_non_audit_input():
    with pytest.raises(TypeError, match="'audit_frame'"):
        paper.discrepancies(pd.DataFrame({"x": [1]}))


def test_known_discrepancies_are_data_citing_the_paper(tmp_path):
    d = paper.load("discrepancies")
    # each explanation names the table of the paper it is about (Appendix A for Tables 6-12)
    for r in d.itertuples():
        assert f"Table {r.table}" in r.explanation, (r.table, r.row)
    for f in paper.DATA_DIR.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    path = tmp_path / "discrepancies.csv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([ln for ln in lines if ",cell_present," not in ln]) + "\n")
    d = paper.discrepancies(data_dir=tmp_path)  # an explanation removed: its row is unexplained
    assert d.loc[d["explanation"] == "UNEXPLAINED", "row"].tolist() == ["expansion | AIME2025"]
    path.write_text("\n".join([*lines, lines[-1]]) + "\n")
    with pytest.raises(ValueError, match=r"discrepancies.csv, line 12: .*'expansion \| AIME2025'"
                                         r".* is listed twice"):
        paper.known_explanations(tmp_path)


@pytest.mark.parametrize(
    ("name", "old", "new", "match"),
    [
        ("rg_figure4.csv", ",True,", ",yes,", "rg_figure4.csv, line 2: column 'approximate' must "
                                              "be True or False. Got 'yes'"),
        ("benchmarks.csv", ",30,", ",-30,", "benchmarks.csv, line .*: column 'N' must be "
                                            "non-negative. Got -30"),
    ],
)
def test_loader_checks_of_other_columns(tmp_path, name, old, new, match):
    src = (paper.DATA_DIR / name).read_text()
    assert old in src
    (tmp_path / name).write_text(src.replace(old, new, 1))
    with pytest.raises(ValueError, match=match):
        paper.load(name.removesuffix(".csv"), tmp_path)
    with raises_with(param="table", func="load", value="table99", constraint="'benchmarks'"):
        paper.load("table99")
