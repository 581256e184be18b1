"""The DataFrame layer: support tables with pooling, pass@k tables, entropy tables."""

from fractions import Fraction
from math import comb, log

import numpy as np
import pandas as pd
import pytest

from _support import raises_with
from leash.analysis.tables import (
    default_ks,
    entropy_table,
    passk_table,
    support_from_counts,
    support_table,
    wide_with_average,
)
from leash.errors import Param


def paired_frame():
    # benchmark A (math): P, E, S, O, S ; benchmark B (non-math): P, P, E
    return pd.DataFrame({
        "benchmark": ["A"] * 5 + ["B"] * 3,
        "question_id": [str(i) for i in range(8)],
        "n_base": 8, "n_rl": 8,
        "c_base": [3, 0, 2, 0, 1, 8, 1, 0],
        "c_rl": [1, 4, 0, 0, 0, 8, 2, 1],
        "first_correct_base": [5, -1, 0, -1, 7, 0, 2, -1],
        "first_correct_rl": [0, 6, -1, -1, -1, 0, 3, 0],
    })


DOMAINS = {"A": "math", "B": "non-math"}


def test_support_table_counts_pooling_and_metrics():
    t = support_table(paired_frame(), domains=DOMAINS)
    assert t["benchmark"].tolist() == ["A", "B", "Math", "Non-Math", "Overall"]
    assert t["scope"].tolist() == ["benchmark", "benchmark", "domain", "domain", "overall"]
    a = t.iloc[0]
    assert (a.P, a.E, a.S, a.O, a.N) == (1, 1, 2, 1, 5)
    assert a["pass@k base"] == 3 / 5 and a["pass@k rl"] == 2 / 5
    assert a.SRR == pytest.approx(1 / 3) and a.NDR == pytest.approx(1 / 2)
    assert a.NSCR == pytest.approx(-1 / 4)
    ov = t.iloc[-1]
    assert (ov.P, ov.E, ov.S, ov.O) == (3, 2, 2, 1)  # pooled counts, then metrics
    assert ov.SRR == pytest.approx(3 / 5) and ov.NDR == pytest.approx(2 / 5)
    # the exact McNemar p for E=1, S=2 is 1.0
    assert a.mcnemar_p == 1.0


def test_support_table_first_k_budget_uses_sample_order():
    t = support_table(paired_frame(), k=2, pool=False)
    a = t.iloc[0]
    # within the first 2 samples: base finds q2 (fc 0) only; rl finds q0 (fc 0) only
    assert (a.P, a.E, a.S, a.O) == (0, 1, 1, 3)
    with pytest.raises(ValueError, match="min_count=1"):
        support_table(paired_frame(), k=2, min_count=2)


def test_support_table_expected_budget_is_exact():
    df = paired_frame()
    t = support_table(df, k=4, budget_rule="expected", pool=False)
    a = df[df.benchmark == "A"]

    def f(c):
        return 1 - Fraction(comb(8 - c, 4), comb(8, 4))

    p_ref = sum(f(cb) * f(cr) for cb, cr in zip(a.c_base, a.c_rl))
    assert t.iloc[0].P == pytest.approx(float(p_ref), rel=1e-12)
    assert t.iloc[0][["P", "E", "S", "O"]].sum() == pytest.approx(5)


def test_support_table_by_step_and_bootstrap():
    df = pd.concat([paired_frame().assign(step=s) for s in (100, 200)], ignore_index=True)
    t = support_table(df, by=["step"], domains=DOMAINS, n_boot=50,
                      rng=np.random.default_rng(0))
    assert t["step"].tolist() == [100] * 5 + [200] * 5
    assert {"SRR low", "SRR high", "NSCR low"} <= set(t.columns)
    ok = t["SRR low"].notna()
    assert (t.loc[ok, "SRR low"] <= t.loc[ok, "SRR"] + 1e-12).all()


def test_support_table_errors():
    df = paired_frame()
    with pytest.raises(ValueError, match=r"needs the column\(s\) \['c_rl'\]"):
        support_table(df.drop(columns="c_rl"))
    bad = df.assign(n_rl=[8] * 7 + [16])
    with pytest.raises(ValueError, match="different sample counts .* row 7: n_base=8, n_rl=16"):
        support_table(bad)
    with pytest.raises(ValueError, match=r"no domain for the benchmark\(s\) \['B'\]"):
        support_table(df, domains={"A": "math"})
    with pytest.raises(TypeError, match="'rng' parameter of support_table must be a numpy"
                                        r"\.random\.Generator when n_boot > 0"):
        support_table(df, n_boot=10)
    with pytest.raises(ValueError, match="exceeds the 8 samples of question index 0"):
        support_table(df, k=9)


def test_support_from_counts_pools_paper_rows():
    # Table 6 math rows (ProRL-1.5B-v1): pooled P/E/S/O = 1355/5/56/131 (Agg Math)
    counts = pd.DataFrame({
        "benchmark": ["AIME2024", "AIME2025", "AMC23", "MATH500", "Minerva", "Olympiad"],
        "P": [25, 20, 40, 497, 173, 600], "E": [0, 2, 0, 0, 0, 3],
        "S": [3, 4, 0, 1, 22, 26], "O": [2, 4, 0, 2, 77, 46],
    })
    t = support_from_counts(counts, domains={b: "math" for b in counts.benchmark})
    pooled = t[t.scope == "domain"].iloc[0]
    assert (pooled.P, pooled.E, pooled.S, pooled.O) == (1355, 5, 56, 131)
    assert round(pooled.SRR, 4) == 0.9603 and pooled.N == 1547


def test_passk_table_against_hand_values():
    s = pd.DataFrame({"model": "m", "benchmark": "b", "question_id": ["0", "1"],
                      "n": [4, 4], "c": [1, 0], "first_correct": [2, -1]})
    t = passk_table(s, [1, 2, 4], estimator="unbiased")
    assert t["pass_at_k"].tolist() == pytest.approx([1 / 8, (1 - 3 / 6) / 2, 1 / 2])
    f = passk_table(s, [1, 2, 4])  # the default: first-k, as the paper's tables
    assert f["pass_at_k"].tolist() == [0, 0, 0.5]
    assert set(f["estimator"]) == {"first-k"} and set(t["estimator"]) == {"unbiased"}
    unordered = s.assign(first_correct=pd.array([pd.NA, -1], dtype="Int64"))
    with raises_with(param="estimator", func="passk_table", value="first-k",
                     text="first_correct is unknown for 1 of 2 questions") as info:
        passk_table(unordered, [1])
    assert Param("estimator", value="unbiased") in info.value.hint
    assert passk_table(unordered, [4], estimator="unbiased")["pass_at_k"].tolist() == [0.5]
    assert default_ks(10).tolist() == [1, 2, 4, 8, 10]
    assert passk_table(s)["k"].tolist() == [1, 2, 4]
    with pytest.raises(ValueError, match=r"group \{'model': 'm', 'benchmark': 'b'\}"):
        passk_table(s, [8])


def test_entropy_table_hand_values():
    s = pd.DataFrame({
        "model": "m", "benchmark": "b", "question_id": ["0", "1"],
        "n": [4, 2], "c": [2, 2],
        "n_tokens_mean": [100.0, 400.0], "token_entropy_mean": [0.5, 0.2],
        "answer_values": [["4", "5"], ["7"]], "answer_counts": [[2, 1], [2]],
        "n_answer_missing": [1, 0],
    })
    t = entropy_table(s).iloc[0]
    assert t["avg@n (%)"] == pytest.approx(100 * (0.5 + 1.0) / 2)
    assert t.response_length == pytest.approx((4 * 100 + 2 * 400) / 6)
    assert t.token_entropy == pytest.approx((4 * 0.5 + 2 * 0.2) / 6)
    h0 = -(0.5 * log(0.5) + 2 * 0.25 * log(0.25))  # 4, 4, 5, NA
    assert t.answer_entropy == pytest.approx(h0 / 2)
    assert t.distinct_answers == pytest.approx((3 + 1) / 2)


def test_wide_with_average_is_unweighted_mean():
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "benchmark": ["x", "y", "x", "y"],
                       "v": [1.0, 2.0, 3.0, 5.0]})
    w = wide_with_average(df, "v")
    assert w.loc["a", "Avg"] == 1.5 and w.loc["b", "Avg"] == 4.0


def test_grouping_keeps_rows_with_missing_step():
    # A base model without a step next to checkpoints: its rows must not vanish.
    s = pd.DataFrame({"model": ["b", "r", "r"], "benchmark": "x", "question_id": "0",
                      "step": pd.array([pd.NA, 100, 200], dtype="Int64"),
                      "n": 4, "c": [1, 2, 3]})
    t = passk_table(s, [1], by=("model", "step"), estimator="unbiased")
    assert len(t) == 3
    e = entropy_table(s, by=("model", "step"))
    assert len(e) == 3
    df = paired_frame().assign(step=pd.array([pd.NA] * 8, dtype="Int64"))
    assert len(support_table(df, by=["step"], pool=False)) == 2


def test_support_table_uses_pairings_found_columns():
    # After pairing at a reduced budget, c may be unknown (NA) while found-ness is exact.
    df = paired_frame().assign(
        c_base=pd.array([pd.NA] * 8, dtype="Int64"),
        found_base=[True, False, True, False, True, True, True, False],
        found_rl=[True, True, False, False, False, True, True, True])
    t = support_table(df, pool=False)
    assert tuple(t.iloc[0][["P", "E", "S", "O"]]) == (1, 1, 2, 1)
    with pytest.raises(ValueError, match="column 'found_rl' is missing at row 2"):
        support_table(df.assign(found_rl=[True, True, None, False, False, True, True, True]))


def test_perplexity_table_hand_values():
    from math import exp, log

    from leash.analysis.tables import perplexity_table

    traces = pd.DataFrame({
        "benchmark": "A", "question_id": ["1", "2", "1", "3"], "reference": "R",
        "model": ["m", "m", "r", "m"], "n_tokens": [2, 4, 2, 1],
        "sum_logprob": [2 * log(0.5), 4 * log(0.25), 2 * log(0.5), log(0.5)],
    })
    cats = pd.DataFrame({"benchmark": "A", "question_id": ["1", "2"],
                         "category": ["shrinkage", "shrinkage"]})
    with pytest.warns(UserWarning, match="1 of 4 traces have no category"):
        t = perplexity_table(traces, cats)
    m = t[t.model == "m"].iloc[0]
    assert m.ppl == pytest.approx((2 + 4) / 2) and m.n_traces == 2
    with pytest.warns(UserWarning):
        pooled = perplexity_table(traces, cats, how="token-pooled")
    assert pooled[pooled.model == "m"].ppl.iat[0] == pytest.approx(
        exp(-(2 * log(0.5) + 4 * log(0.25)) / 6))
    with pytest.raises(ValueError, match="trace row 0 has n_tokens=0"):
        perplexity_table(traces.assign(n_tokens=0), cats)


def test_expected_support_curve_ends_at_exact_counts():
    from leash.analysis.tables import expected_support_curve

    df = paired_frame()
    c = expected_support_curve(df, [1, 4, 8])
    assert c["k"].tolist() == [1, 4, 8]
    assert c[["P", "E", "S", "O"]].sum(axis=1).tolist() == pytest.approx([8, 8, 8])
    last = c.iloc[-1]
    full = support_table(df, pool=False)
    assert last.P == full.P.sum() and last.S == full.S.sum()
    # at k = 1: P = sum of (c_b/n)(c_r/n)
    assert c.iloc[0].P == pytest.approx(float(((df.c_base / 8) * (df.c_rl / 8)).sum()))


def test_avg_at_n_is_the_float_nearest_its_exact_percentage():
    # 51 of 160 is 31.875 % exactly; 100 * (51 / 160) in floats is 31.874999..., which a table
    # printed to two decimals showed as 31.87
    from fractions import Fraction

    from leash.analysis.tables import entropy_table

    s = pd.DataFrame({"model": "m", "benchmark": "b", "question_id": ["1", "2", "3"],
                      "n": [160, 3, 7], "c": [51, 1, 2]})
    got = entropy_table(s.iloc[:1], na="class")["avg@n (%)"].iat[0]
    assert got == 31.875 and f"{got:.2f}" == "31.88"
    exact = 100 * (Fraction(51, 160) + Fraction(1, 3) + Fraction(2, 7)) / 3
    assert entropy_table(s, na="class")["avg@n (%)"].iat[0] == float(exact)


def test_found_at_budget_mixes_known_counts_and_first_correct():
    # pairing at a common budget leaves some counts unknown (NA) and a counts input may have no
    # first_correct: each row is decided by what it has (this raised pandas' int64 error)
    from leash.analysis.tables import found_at_budget

    n = [4, 4, 4, 4]
    c = pd.array([2, pd.NA, 0, pd.NA], dtype="Int64")
    first = pd.array([pd.NA, 3, pd.NA, 5], dtype="Int64")  # row 3: first correct beyond 4
    assert found_at_budget(n, c, first, None).tolist() == [True, True, False, False]
    with raises_with(param="min_count", value=2, text="2 correct counts are unknown") as info:
        found_at_budget(n, c, first, None, min_count=2)
    assert Param("min_count", value=1) in info.value.hint
    # a threshold above a budget finds nothing there, and is no error (sensitivity sweeps)
    assert found_at_budget([4, 8], [4, 6], [0, 0], None, min_count=5).tolist() == [False, True]
