"""Tests of leash.sources.claims: the paper's numeric claims, each judged within its scope.

References are independent of the library: the numbers are read from the CSVs with pandas (not
through leash's loader) or typed by hand from the paper, the metrics are exact fractions, and
Table 1's rounding (half-up to 3 decimals, then to 2) is written again here with ``Fraction``.
"""

from __future__ import annotations

import math
import re
import shutil
from fractions import Fraction

import pandas as pd
import pytest

from leash.paths import REPO
from leash.sources import claims as C
from leash.sources import paper

DATA = paper.DATA_DIR
# Parameters of Table 1's models, as their names in the paper state them (typed by hand).
SIZE = {"ProRL-1.5B-v1": 1.5, "ProRL-1.5B-v2": 1.5, "Nemotron-1-7B": 7, "Skywork-OR1-7B": 7,
        "Nemotron-1-14B": 14, "Phi4-Reason-Plus-14B": 14, "Kangheng-OVR-7B": 7,
        "OLMo-2-0425-1B": 1}
# The claims that do not hold as stated, and those no printed number can decide (established
# by hand below, each with its reason).
DOES_NOT_HOLD = {"sampling_budgets", "math_srr", "overall_nscr", "v2_new_completions"}
NOT_CHECKABLE = {"simpleqa_subsample", "decoding", "figure2_convergence", "figure3_expansion"}


def half_up(x: Fraction, decimals: int) -> Fraction:
    """Round half away from zero, exactly."""
    scaled = abs(x) * 10**decimals
    n = math.floor(scaled + Fraction(1, 2))
    return Fraction(n if x >= 0 else -n, 10**decimals)


def table1_rounding(x: Fraction) -> Fraction:
    return half_up(half_up(x, 3), 2)


def metric(name: str, P: int, E: int, S: int) -> Fraction:
    return {"SRR": Fraction(P, P + S), "NDR": Fraction(E, P + E),
            "SDS": Fraction(2 * P * E, P * P + 2 * P * E + E * S),
            "NSCR": Fraction(E - S, P + E + S)}[name]


@pytest.fixture(scope="module")
def claims():
    return C.claims().set_index("claim")


@pytest.fixture(scope="module")
def table1():
    """Table 1's printed counts (they equal the pooled appendix counts: test_paper.py)."""
    t = pd.read_csv(DATA / "table1.csv")
    return t.assign(size=t["model"].map(SIZE))


def copy_data(tmp_path):
    for f in DATA.glob("*.csv"):
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


# --- every claim, one row ------------------------------------------------------------------------


@pytest.mark.slow
def test_every_claim_of_claims_csv_is_a_row_with_a_verdict(claims):
    listed = pd.read_csv(DATA / "claims.csv")
    assert list(claims.index) == list(listed["claim"])  # in the order of claims.csv
    assert len(claims) == 36 >= 35
    assert list(C.claims().columns) == ["claim", "where", "quote", "scope", "recomputed",
                                        "verdict", "explanation"]
    assert set(claims["verdict"]) <= set(C.VERDICTS)
    assert claims["scope"].str.len().gt(0).all() and claims["recomputed"].str.len().gt(0).all()
    assert claims["verdict"].value_counts().to_dict() == {"holds": 28, "does not hold": 4,
                                                          "not checkable": 4}
    # where a claim stands is the paper's (section, table, figure or appendix), never another
    # document's
    assert claims["where"].str.contains(r"Abstract|§3|Table|Figure|App\.|setup").all()


def test_the_claims_that_do_not_hold_and_those_no_number_decides_are_explained(claims):
    assert set(claims.index[claims["verdict"] == "does not hold"]) == DOES_NOT_HOLD
    assert set(claims.index[claims["verdict"] == "not checkable"]) == NOT_CHECKABLE
    assert claims["explanation"].ne("UNEXPLAINED").all()
    assert claims.loc[claims["verdict"] == "holds", "explanation"].isna().all()
    assert claims.loc[claims["verdict"] != "holds", "explanation"].str.len().gt(40).all()


def test_math_srr_does_not_hold_for_the_vlm_of_7b(claims, table1):
    # "math (SRR = 0.96–0.99 ...)" of the 1.5B-14B models: Kangheng-OVR-7B is 7B, its Math SRR
    # 781/785 is printed 1.00 (0.995 in Table 11); only a single rounding gives 0.99.
    math_rows = table1[(table1["domain"] == "math") & table1["size"].between(1.5, 14)]
    srr = {m: metric("SRR", p, e, s) for m, p, e, s in
           zip(math_rows["model"], math_rows["P"], math_rows["E"], math_rows["S"])}
    shown = {m: table1_rounding(v) for m, v in srr.items()}
    beyond = {m for m, v in shown.items() if not Fraction(96, 100) <= v <= Fraction(99, 100)}
    assert beyond == {"Kangheng-OVR-7B"}
    assert srr["Kangheng-OVR-7B"] == Fraction(781, 785)
    assert shown["Kangheng-OVR-7B"] == 1 and half_up(Fraction(781, 785), 2) == Fraction(99, 100)
    row = claims.loc["math_srr"]
    assert "Kangheng-OVR-7B Math 781/785 = 0.99490 -> 1.00" in row["recomputed"]
    assert "Kangheng-OVR-7B" in row["explanation"] and "0.99490" in row["explanation"]
    # OLMo (1B) is outside the scope: shown, not deciding
    assert "outside the scope: OLMo-2-0425-1B Math 0.88" in row["recomputed"]


def test_overall_nscr_does_not_hold_for_phi4(claims, table1):
    overall = table1[(table1["domain"] == "overall") & table1["size"].between(1.5, 14)]
    nscr = {m: table1_rounding(metric("NSCR", p, e, s)) for m, p, e, s in
            zip(overall["model"], overall["P"], overall["E"], overall["S"])}
    beyond = {m for m, v in nscr.items() if not Fraction(-6, 100) <= v <= Fraction(-1, 100)}
    assert beyond == {"Phi4-Reason-Plus-14B"}
    assert metric("NSCR", 2474, 16, 23) == Fraction(-7, 2513) and nscr[
        "Phi4-Reason-Plus-14B"] == 0
    assert "Phi4-Reason-Plus-14B Overall -7/2513 = -0.00279 -> -0.00" in \
        claims.at["overall_nscr", "recomputed"]


def test_v2_s_48_completions_are_over_13_benchmarks_not_11(claims, table1):
    v2 = table1[table1["model"] == "ProRL-1.5B-v2"].set_index("domain")
    assert int(v2.at["overall", "E"]) == 48
    n = (v2["P"] + v2["E"] + v2["S"] + v2["O"]).astype(int)
    # Table 6's benchmarks, sizes typed by hand: 6 math + 7 non-math (with LiveCodeBench v5/v6)
    math_n = [30, 30, 40, 500, 272, 675]
    non_math_n = [433, 100, 128, 50, 692, 323, 131]
    assert (n["math"], n["non-math"]) == (sum(math_n), sum(non_math_n)) == (1547, 1857)
    assert len(math_n) + len(non_math_n) == 13
    assert "Table 6's 13 benchmarks" in claims.at["v2_new_completions", "recomputed"]


def test_the_sampling_budgets_do_not_cover_olmo_s_256(claims):
    counts = pd.read_csv(DATA / "support_counts.csv", dtype={"table": str})
    main = counts[counts["table"].isin([str(i) for i in range(6, 13)])]
    math_k = set(main.loc[main["domain"] == "math", "k"])
    non_math_k = set(main.loc[main["domain"] == "non-math", "k"])
    assert math_k - {4096, 8192} == {256}  # Table 12, OLMo-2-0425-1B
    assert set(main.loc[main["k"] == 256, "pair"]) == {"OLMo-2-0425-1B"}
    assert non_math_k <= {1024, 2048}
    row = claims.loc["sampling_budgets"]
    assert "Table 12 (OLMo-2-0425-1B, math) k = 256" in row["recomputed"]
    # Tables 3 and 4 (256, stated in their own headers) are outside the scope: shown only
    assert "outside the scope: Table 3 k = 256" in row["recomputed"]
    assert "OLMo-2-0425-1B" in row["explanation"] and "256" in row["explanation"]


# --- the scope rule -------------------------------------------------------------------------------


def test_ndr_and_sds_bounds_are_judged_on_the_1_5b_to_14b_models_only(claims, table1):
    inside = table1[table1["size"].between(1.5, 14)]
    rows = list(zip(inside["P"], inside["E"], inside["S"]))
    assert max(table1_rounding(metric("NDR", *r)) for r in rows) == Fraction(4, 100)
    assert max(table1_rounding(metric("SDS", *r)) for r in rows) == Fraction(7, 100)
    # ... while OLMo-2-0425-1B (1B) exceeds both: outside the sentence's scope, shown only
    olmo = table1[table1["model"] == "OLMo-2-0425-1B"].iloc[0]
    assert metric("NDR", olmo["P"], olmo["E"], olmo["S"]) == Fraction(83, 844)
    assert table1_rounding(metric("NDR", olmo["P"], olmo["E"], olmo["S"])) == Fraction(10, 100)
    assert table1_rounding(metric("SDS", olmo["P"], olmo["E"], olmo["S"])) == Fraction(18, 100)
    for claim, shown in (("ndr_bound", "0.10"), ("sds_bound", "0.18")):
        assert claims.at[claim, "verdict"] == "holds"
        assert "19 rows of 7 models" in claims.at[claim, "recomputed"]
        assert f"outside the scope: OLMo-2-0425-1B Math {shown}" in \
            claims.at[claim, "recomputed"]


@pytest.mark.slow
def test_the_scope_decides_a_planted_size(tmp_path):
    # Were OLMo a 1.5B model, the sentence would cover it and both bounds would fail
    # (unexplained: claims.csv has no explanation for them).
    data = copy_data(tmp_path)
    pairs = (data / "pairs.csv").read_text(encoding="utf-8")
    assert ",OLMo-2-0425-1B-RLVR,1B," in pairs
    (data / "pairs.csv").write_text(pairs.replace(",OLMo-2-0425-1B-RLVR,1B,",
                                                  ",OLMo-2-0425-1B-RLVR,1.5B,"), encoding="utf-8")
    c = C.claims(data).set_index("claim")
    for claim in ("ndr_bound", "sds_bound"):
        assert c.at[claim, "verdict"] == "does not hold"
        assert c.at[claim, "explanation"] == "UNEXPLAINED"
        assert "beyond the claim: OLMo-2-0425-1B Math" in c.at[claim, "recomputed"]


def test_the_scope_mask_is_one_rule():
    frame = pd.DataFrame({"model": ["a", "b", "c"], "params": [1.0, 7.0, 14.0],
                          "domain": ["math", "math", "non-math"]})
    s = C.Scope("x", params=(1.5, 14.0), domains=("math",))
    assert s.mask(frame).tolist() == [False, True, False]
    assert s.outside(frame).tolist() == [True, False, False]  # only the size excludes it
    assert C.Scope("y", models=("c",)).mask(frame).tolist() == [False, False, True]


def test_the_notebook_states_the_rules_of_the_module():
    text = " ".join((REPO / "notebooks" / "08_paper_audit.md").read_text(
        encoding="utf-8").split())
    for rule in (C.SCOPE_RULE, C.PRECISION_RULE):
        assert " ".join(rule.split()) in text
    doc = " ".join(C.__doc__.split())
    assert " ".join(C.SCOPE_RULE.split()) in doc and " ".join(C.PRECISION_RULE.split()) in doc


# --- recomputations against hand computations -----------------------------------------------------


def test_ranges_of_table1_claims_by_hand(claims, table1):
    inside = table1[table1["size"].between(1.5, 14)]

    def span(domain, name):
        rows = inside[inside["domain"] == domain]
        v = [table1_rounding(metric(name, p, e, s))
             for p, e, s in zip(rows["P"], rows["E"], rows["S"])]
        return f"{float(min(v)):.2f}", f"{float(max(v)):.2f}"

    assert span("overall", "SRR") == ("0.93", "0.99")
    assert "Overall SRR 0.93 (ProRL-1.5B-v2 Overall) to 0.99" in claims.at["overall_srr",
                                                                          "recomputed"]
    assert span("non-math", "SRR") == ("0.90", "0.99")
    assert span("non-math", "NDR") == ("0.00", "0.04")
    assert span("math", "NDR") == ("0.00", "0.01")
    assert claims.at["non_math_srr", "verdict"] == "holds"


def test_shrink_expand_ratios_by_hand(claims, table1):
    ov = table1[table1["domain"] == "overall"].set_index("model")
    ratios = {m: Fraction(int(ov.at[m, "S"]), int(ov.at[m, "E"]))
              for m in ("Nemotron-1-7B", "Skywork-OR1-7B")}
    assert ratios == {"Nemotron-1-7B": Fraction(2), "Skywork-OR1-7B": Fraction(43, 13)}
    assert [half_up(r, 0) for r in ratios.values()] == [2, 3]
    assert "56:28 = 2.00:1" in claims.at["shrink_expand_ratio", "recomputed"]
    assert "86:26 = 3.31:1" in claims.at["shrink_expand_ratio", "recomputed"]


def test_single_rows_by_hand(claims):
    # Table 7 LiveBench-L: P, E, S = 10, 2, 2 (typed from the paper)
    assert metric("SDS", 10, 2, 2) == Fraction(40, 144)
    assert half_up(Fraction(40, 144), 3) == Fraction(278, 1000)
    assert "SDS = 40/144 = 0.27778 -> 0.278" in claims.at["livebench_l_sds", "recomputed"]
    # Table 6 AIME2024: P, E, S, O = 25, 0, 3, 2
    assert half_up(Fraction(100 * 28, 30), 1) == Fraction(933, 10)
    assert half_up(Fraction(100 * 25, 30), 1) == Fraction(833, 10)
    assert "28/30 = 93.33%" in claims.at["aime2024_pass", "recomputed"]
    assert "25/30 = 83.33%" in claims.at["aime2024_pass", "recomputed"]
    # App. C.4: -ln(0.05)/8192
    eps = -math.log(0.05) / 8192
    assert f"{-math.log(0.05):.3f}" == "2.996" and f"{eps:.2e}" == "3.66e-04"
    assert (1 - eps) ** 8192 <= 0.05
    assert "3.656900e-04" in claims.at["epsilon_example", "recomputed"]
    for c in ("livebench_l_sds", "aime2024_pass", "epsilon_example"):
        assert claims.at[c, "verdict"] == "holds"


def test_table5_claims_by_hand(claims):
    t5 = pd.read_csv(DATA / "table5_entropy.csv")
    cells = t5[t5["benchmark"] != "Avg"]
    pairs = [("ProRL-1.5B", "DeepSeek-1.5B"), ("AceReason-7B", "DeepSeek-7B"),
             ("Skywork-OR1-7B", "DeepSeek-7B"), ("AceReason-14B", "DeepSeek-14B"),
             ("DAPO-32B", "Qwen2.5-32B")]
    value = cells.set_index(["metric", "model", "benchmark"])["value"]
    benches = ["AIME2024", "AMC23", "MATH500", "Minerva", "OlympiadBench"]
    gains = [value[("avg32_accuracy_percent", m, b)] - value[("avg32_accuracy_percent", base, b)]
             for m, base in pairs for b in benches]
    assert len(gains) == 25 and min(gains) > 0
    assert f"smallest gain {min(gains):+.2f} points" in claims.at["abstract_pass1", "recomputed"]
    answer_down = sum(value[("answer_entropy", m, b)] < value[("answer_entropy", base, b)]
                      for m, base in pairs for b in benches)
    assert answer_down == 25
    token_up = [m for m, base in pairs
                if sum(value[("token_entropy", m, b)] for b in benches)
                > sum(value[("token_entropy", base, b)] for b in benches)]
    assert token_up == ["ProRL-1.5B", "DAPO-32B"]
    assert "2 of 5 pairs (ProRL-1.5B, DAPO-32B)" in claims.at["abstract_entropy", "recomputed"]
    # App. B.4's 32 completions: DeepSeek-1.5B AIME24 31.15% = 299 of 32 x 30 samples
    assert half_up(Fraction(100 * 299, 960), 2) == Fraction(3115, 100)
    assert "31.15 = 299/960" in claims.at["entropy_32_samples", "recomputed"]
    for c in ("abstract_pass1", "abstract_entropy", "table5_caption_accuracy",
              "answer_entropy_decreases", "table5_markers", "entropy_32_samples"):
        assert claims.at[c, "verdict"] == "holds", c


def test_counts_over_every_printed_row_by_hand(claims):
    rows = sum(len(pd.read_csv(DATA / f)) for f in
               ("support_counts.csv", "support_aggregates.csv", "table1.csv"))
    assert rows == 178
    assert f"in {rows} of {rows} printed rows" in claims.at["sds_closed_form", "recomputed"]
    counts = pd.read_csv(DATA / "support_counts.csv", dtype={"table": str})
    per = counts[counts["table"].isin([str(i) for i in range(6, 13)])]
    assert (int((per["S"] > per["E"]).sum()), int((per["S"] == per["E"]).sum()),
            int((per["E"] > per["S"]).sum())) == (47, 22, 0)
    assert "S > E in 47, S = E in 22, E > S in 0 of 69 rows" in \
        claims.at["abstract_shrinkage", "recomputed"]


# --- what claims.csv may and may not say ----------------------------------------------------------


def test_a_claim_without_a_check_is_refused(tmp_path):
    data = copy_data(tmp_path)
    with open(data / "claims.csv", "a", encoding="utf-8") as fh:
        fh.write('new_claim,text,"something",\n')
    with pytest.raises(ValueError, match="new_claim"):
        C.claims(data)


@pytest.mark.slow
def test_an_explanation_of_a_claim_that_holds_is_refused_and_a_missing_one_is_unexplained(
        tmp_path):
    data = copy_data(tmp_path)
    path = data / "claims.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    i = next(i for i, ln in enumerate(lines) if ln.startswith("ndr_bound,"))
    lines[i] += "a stale explanation"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"claims.csv, line {i + 1}: claim 'ndr_bound' holds"):
        C.claims(data)
    lines = (DATA / "claims.csv").read_text(encoding="utf-8").splitlines()
    j = next(j for j, ln in enumerate(lines) if ln.startswith("overall_nscr,"))
    lines[j] = re.sub(r',"[^"]*"$', ",", lines[j])  # its explanation removed
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    c = C.claims(data).set_index("claim")
    assert c.at["overall_nscr", "explanation"] == "UNEXPLAINED"


def test_the_readme_states_the_measured_counts(claims):
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    n = claims["verdict"].value_counts()
    assert (f"(`audit_claims`, {len(claims)} claims:" in text)
    assert (f"{n['holds']} hold, {n['does not hold']} do not hold as stated and "
            f"{n['not checkable']} cannot be checked from any printed number") in text
    assert f"(`08_paper_audit`, {len(paper.audit())} checks)" in text
