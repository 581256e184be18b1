"""Per-question evidence: the one-sided Fisher tests, their power, the mid-p McNemar test, the
flips table with its Benjamini-Hochberg verdicts, and the significant subsets of E and S in the
support tables.

Checked three ways: exact references (fractions and math.comb), scipy's own fisher_exact and
false_discovery_control (to 1e-9), and properties (hypothesis).
"""

from fractions import Fraction
from math import comb

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import false_discovery_control, fisher_exact

from _support import MIRROR, needs_mirror, raises_with
from leash.analysis.flips import FLIPS_COLUMNS, flips_summary, flips_table, with_answers
from leash.analysis.tables import support_table
from leash.core.stats import (
    detection_budget,
    fisher_one_sided,
    fisher_power,
    mcnemar_exact,
    mcnemar_midp,
)


def exact_tails(a, n_rl, b, n_base):
    """(P(X >= a), P(X <= a)) of the RLVR row's correct count given the table's margins, as
    fractions: X ~ Hypergeometric(N = n_rl + n_base, successes t = a + b, draws n_rl).
    """
    t, total = a + b, n_rl + n_base

    def pmf(x):
        return Fraction(comb(n_rl, x) * comb(n_base, t - x), comb(total, t))

    xs = range(max(0, t - n_base), min(t, n_rl) + 1)
    return (sum((pmf(x) for x in xs if x >= a), Fraction(0)),
            sum((pmf(x) for x in xs if x <= a), Fraction(0)))


def scipy_pair(a, n_rl, b, n_base):
    table = [[a, n_rl - a], [b, n_base - b]]
    return (fisher_exact(table, alternative="greater").pvalue,
            fisher_exact(table, alternative="less").pvalue)


# ---- the tests of one question -----------------------------------------------------------------

def test_fisher_by_hand():
    # 3 of 4 against 0 of 4: only the tables with 3 or 4 correct in the RLVR row are as extreme,
    # and there are 3 correct in all: C(4,3) C(4,0) / C(8,3) = 4 / 56
    r = fisher_one_sided(3, 4, 0, 4)
    assert r.greater == pytest.approx(4 / 56, abs=1e-15) and r.less == 1.0
    # 0 of 8 against 8 of 8: P(X <= 0) = C(8,0) C(8,8) / C(16,8) = 1 / 12870
    assert fisher_one_sided(0, 8, 8, 8).less == pytest.approx(1 / 12870, rel=1e-12)
    # nothing correct at all, or everything: an empty margin, 1 both ways (as fisher_exact)
    assert tuple(fisher_one_sided(0, 5, 0, 7)) == (1.0, 1.0)
    assert tuple(fisher_one_sided(5, 5, 7, 7)) == (1.0, 1.0)


@given(st.integers(1, 14), st.integers(1, 14), st.data())
def test_fisher_equals_fractions_and_fisher_exact(n_rl, n_base, data):
    a = data.draw(st.integers(0, n_rl))
    b = data.draw(st.integers(0, n_base))
    got = fisher_one_sided(a, n_rl, b, n_base)
    ref = [float(x) for x in exact_tails(a, n_rl, b, n_base)]
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(got, scipy_pair(a, n_rl, b, n_base), rtol=1e-9, atol=0)


def test_fisher_vectorized_equals_fisher_exact_at_large_n():
    rng = np.random.default_rng(3)
    n = rng.integers(1, 9000, size=300)
    n_base = np.where(rng.random(300) < 0.5, n, rng.integers(1, 9000, size=300))
    c_rl = rng.binomial(n, rng.beta(0.3, 0.7, 300))
    c_base = rng.binomial(n_base, rng.beta(0.3, 0.7, 300))
    c_rl[:20], c_base[:20] = 0, 0  # repeated tables, empty margins
    got = fisher_one_sided(c_rl, n, c_base, n_base)
    ref = np.array([scipy_pair(*t) for t in zip(c_rl, n, c_base, n_base)])
    np.testing.assert_allclose(got.greater, ref[:, 0], rtol=1e-9, atol=0)
    np.testing.assert_allclose(got.less, ref[:, 1], rtol=1e-9, atol=0)
    assert fisher_one_sided([], [], [], []).greater.shape == (0,)


@given(st.integers(1, 12), st.integers(1, 12))
def test_one_sided_p_values_are_monotone(n_rl, n_base):
    # Barnard's convexity, which fisher_power's bisection relies on: more RLVR successes lower
    # the "greater" p-value, more base successes raise it
    a, b = np.meshgrid(np.arange(n_rl + 1), np.arange(n_base + 1), indexing="ij")
    p = fisher_one_sided(a.ravel(), n_rl, b.ravel(), n_base).greater.reshape(a.shape)
    assert (np.diff(p, axis=0) <= 1e-15).all() and (np.diff(p, axis=1) >= -1e-15).all()


def test_the_tests_refuse_what_is_no_question():
    with raises_with(ValueError, param="n_rl", func="fisher_one_sided"):
        fisher_one_sided(0, 0, 1, 4)
    with raises_with(ValueError, param="c_base", func="fisher_one_sided", text="c_base=5 > "):
        fisher_one_sided(1, 4, 5, 4)
    with raises_with(ValueError, param="c_base", func="fisher_one_sided", text="length"):
        fisher_one_sided([1, 2], [4, 4], [0], [4, 4, 4])


def test_mcnemar_midp_against_fractions():
    for e, s in [(5, 56), (0, 3), (3, 0), (4, 4), (1, 2), (17, 30)]:
        m, b = e + s, min(e, s)
        ref = 2 * (sum(Fraction(comb(m, i), 2**m) for i in range(b + 1))
                   - Fraction(comb(m, b), 2 ** (m + 1)))
        assert mcnemar_midp(e, s) == pytest.approx(float(min(ref, 1)), rel=1e-12, abs=1e-15)
        # the mid-p value lies below the exact one, by half the probability of the split
        assert mcnemar_midp(e, s) <= mcnemar_exact(e, s).p_value
    assert mcnemar_midp(0, 0) == 1.0


# ---- power and the budget of a detection -----------------------------------------------------

def brute_power(pb, pr, k, alpha):
    """The power as a double sum over every pair of counts (the reference of fisher_power)."""
    from scipy.stats import binom

    a, b = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    p = fisher_one_sided(a.ravel(), k, b.ravel(), k).greater.reshape(a.shape)
    w = binom.pmf(np.arange(k + 1), k, pr)[:, None] * binom.pmf(np.arange(k + 1), k, pb)[None]
    return float(np.sum(w * (p <= alpha)))


@pytest.mark.parametrize("pb, pr, k, alpha", [(0.0, 0.5, 8, 0.05), (0.1, 0.6, 20, 0.05),
                                              (0.3, 0.35, 40, 0.1), (0.0, 0.02, 64, 0.05),
                                              (0.5, 0.5, 16, 0.05), (1.0, 1.0, 5, 0.05)])
def test_fisher_power_equals_the_double_sum(pb, pr, k, alpha):
    assert fisher_power(pb, pr, k, alpha=alpha) == pytest.approx(brute_power(pb, pr, k, alpha),
                                                                abs=1e-12)
    # a shrinkage is an expansion of the base's
    assert fisher_power(pr, pb, k, alpha=alpha, alternative="less") == pytest.approx(
        fisher_power(pb, pr, k, alpha=alpha), abs=1e-15)


def test_fisher_power_by_hand():
    # base 0 of 8: the test rejects from 4 of 8 (C(8,4)/C(16,4) = 0.038), so the power is
    # P(Binomial(8, 1/2) >= 4) = 163/256
    assert fisher_power(0.0, 0.5, 8) == pytest.approx(163 / 256, abs=1e-13)
    # equal rates: the test keeps its level (at most alpha)
    assert fisher_power(0.2, 0.2, 200) <= 0.05
    # a vector of expansions at once, each as alone
    np.testing.assert_array_equal(fisher_power(0.0, [0.2, 0.5], 8),
                                  [fisher_power(0.0, 0.2, 8), fisher_power(0.0, 0.5, 8)])


def test_detection_budget():
    ks = 2 ** np.arange(0, 14)
    # the paper's rule with p_base = 0: 1 - 0.99**k >= 0.8 from k = 161 on
    assert detection_budget(0.0, 0.01, ks, rule="found") == 256
    assert detection_budget(0.0, 0.01, [161], rule="found") == 161
    assert np.isnan(detection_budget(0.0, 0.01, [160], rule="found"))
    # a base that solves the question too: the paper's rule sees it less and less often
    assert np.isnan(detection_budget(0.05, 0.06, ks, rule="found"))
    # the test needs several RLVR successes against none: a larger budget than the rule
    k_test = detection_budget(0.0, 0.01, ks)
    assert k_test > 256 and fisher_power(0.0, 0.01, int(k_test)) >= 0.8
    assert fisher_power(0.0, 0.01, int(k_test) // 2) < 0.8
    both = detection_budget(0.0, [0.01, 0.001], ks)
    assert both[0] == k_test and both[1] > both[0]


# ---- the flips table -------------------------------------------------------------------------

def paired_frame(c_base, c_rl, n=8, bench="B"):
    c_base, c_rl = np.asarray(c_base), np.asarray(c_rl)
    return pd.DataFrame({"benchmark": bench, "question_id": [str(i) for i in range(len(c_base))],
                         "n_base": n, "c_base": c_base, "n_rl": n, "c_rl": c_rl})


def check_against_scipy(t: pd.DataFrame, by=()):
    """Every p and q of a flips table equals scipy's to 1e-9."""
    ref = np.array([scipy_pair(a, n, b, m) for a, n, b, m in
                    zip(t["rl_c"], t["rl_n"], t["base_c"], t["base_n"])])
    np.testing.assert_allclose(t["p_expansion"], ref[:, 0], rtol=1e-9, atol=0)
    np.testing.assert_allclose(t["p_shrinkage"], ref[:, 1], rtol=1e-9, atol=0)
    groups = [t.index] if not by else [g.index for _, g in t.groupby(list(by))]
    for i in groups:
        np.testing.assert_allclose(t.loc[i, "q_expansion"],
                                   false_discovery_control(ref[i, 0], method="bh"), rtol=1e-9)
        np.testing.assert_allclose(t.loc[i, "q_shrinkage"],
                                   false_discovery_control(ref[i, 1], method="bh"), rtol=1e-9)


def test_flips_table_small_case_by_hand():
    t = flips_table(paired_frame([0, 8, 4, 0, 1], [8, 0, 4, 0, 0]), fdr=0.05)
    assert list(t.columns) == FLIPS_COLUMNS
    assert t["category"].tolist() == ["E", "S", "P", "O", "S"]
    p_edge = 1 / 12870  # 8 of 8 against 0 of 8
    assert t["p_expansion"].iat[0] == pytest.approx(p_edge, rel=1e-12)
    assert t["p_shrinkage"].iat[1] == pytest.approx(p_edge, rel=1e-12)
    # BH over the five questions: the smallest p of each direction times 5
    assert t["q_expansion"].iat[0] == pytest.approx(5 * p_edge, rel=1e-12)
    assert t["verdict"].tolist() == ["expansion", "shrinkage", "", "", ""]
    check_against_scipy(t)
    s = flips_summary(t)
    assert s.iloc[0][["E", "significant E", "S", "significant S"]].tolist() == [1, 1, 2, 1]


def test_the_verdict_follows_fdr_and_min_count_sets_only_the_category():
    p = paired_frame([0, 0, 2], [3, 6, 2])
    loose, strict = flips_table(p, fdr=0.5), flips_table(p, fdr=0.01)
    assert (loose["verdict"] != "").sum() >= (strict["verdict"] != "").sum()
    m3 = flips_table(p, min_count=3)
    assert m3["category"].tolist() == ["E", "E", "O"]
    np.testing.assert_array_equal(m3["p_expansion"], loose["p_expansion"])


def test_bh_runs_per_group():
    a, b = paired_frame([0, 0], [8, 2]), paired_frame([0, 0, 0], [8, 8, 1])
    p = pd.concat([a.assign(step=100), b.assign(step=300)], ignore_index=True)
    t = flips_table(p, by=["step"])
    check_against_scipy(t, by=["step"])
    assert list(t.columns) == ["step", *FLIPS_COLUMNS]


def test_flips_bad_input_names_the_question():
    with raises_with(ValueError, key="n_rl", value=0, text="question B/1 has no samples"):
        flips_table(paired_frame([0, 1], [1, 1]).assign(n_rl=[8, 0], c_rl=[1, 0]))
    with raises_with(ValueError, key="c_base", value=9, text="B/0"):
        flips_table(paired_frame([9, 1], [1, 1]))
    with raises_with(ValueError, key="n_rl", value=4, text="n_base = 8 and n_rl = 4"):
        flips_table(paired_frame([1], [1]).assign(n_rl=4))
    unknown = paired_frame([1, 2], [1, 1]).astype({"c_rl": "Int64"})
    unknown.loc[1, "c_rl"] = pd.NA
    with raises_with(ValueError, key="c_rl", text="c_rl is unknown"):
        flips_table(unknown)


def test_support_table_significant_subsets_and_mid_p():
    rng = np.random.default_rng(0)
    pb = rng.beta(0.3, 0.7, 200)
    p = pd.concat([paired_frame(rng.binomial(64, pb), rng.binomial(64, np.clip(pb * 1.5, 0, 1)),
                                n=64, bench=b) for b in ("A", "B")], ignore_index=True)
    p.loc[:9, "c_base"], p.loc[:9, "c_rl"] = 0, 40  # ten clear expansions
    t = support_table(p, fdr=0.05)
    f = flips_summary(flips_table(p, fdr=0.05))
    for bench in ("A", "B"):
        row, ref = t[t["benchmark"] == bench].iloc[0], f[f["benchmark"] == bench].iloc[0]
        assert (row["significant E"], row["significant S"]) == (ref["significant E"],
                                                                ref["significant S"])
        assert row["mcnemar_midp"] == pytest.approx(mcnemar_midp(int(row["E"]), int(row["S"])))
    overall = t[t["scope"] == "overall"].iloc[0]
    assert overall["significant E"] >= 10 and overall["significant E"] <= overall["E"]
    assert overall["significant E"] == f[f["benchmark"] == "All"]["significant E"].iat[0]
    # below the full budget the counts of the first k samples are unknown: NA, not a guess
    below = support_table(p.assign(first_correct_base=0, first_correct_rl=0), k=32)
    assert below["significant E"].isna().all() and below["significant S"].isna().all()
    assert "significant E" not in support_table(p, fdr=None).columns


def test_with_answers_shows_what_each_model_said():
    p = paired_frame([0, 3], [2, 3])
    summary = pd.DataFrame({
        "model": ["b", "b", "r", "r"], "benchmark": "B", "question_id": ["0", "1", "0", "1"],
        "step": pd.array([pd.NA] * 4, dtype="Int64"),
        "answer_values": [["7", "8"], ["5"], ["6", "7", "9", "10"], ["5"]],
        "answer_counts": [[5, 3], [3], [2, 2, 2, 1], [3]], "n_answer_missing": [0, 5, 1, 5]})
    responses = summary[["model", "benchmark", "question_id", "step"]].assign(
        response=["b0", "b1", "r0", "r1"])
    t = with_answers(flips_table(p), summary, "b", "r", responses=responses, top=3)
    assert t["base_answers"].tolist() == ["7 x5, 8 x3", "5 x3, NA x5"]
    assert t["rl_answers"].iat[0] == "6 x2, 7 x2, 9 x2, ... (1 more), NA x1"
    assert t[["base_response", "rl_response"]].values.tolist() == [["b0", "r0"], ["b1", "r1"]]


# ---- a real public pair of the data manifest -------------------------------------------------

@pytest.mark.slow
@needs_mirror
def test_flips_of_a_real_pair_equal_scipy(monkeypatch):
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    from leash.analysis.pairing import pair_counts
    from leash_eval import studies

    parts = [studies.load_counts([path], **kw) for name in ("gsm8k-probe-sft",
                                                            "gsm8k-probe-rl-final")
             for path, kw in studies.resolve(name)]
    paired = pair_counts(pd.concat(parts, ignore_index=True), base="sft", rl="rl")
    t = flips_table(paired)
    assert len(t) == 30
    check_against_scipy(t)
    # the probe's one expansion (0 of 8 against a few of 8) is too weak to be evidence
    assert t["category"].value_counts().to_dict().get("E") == 1
    assert (t.loc[t["category"] == "E", "verdict"] == "").all()
