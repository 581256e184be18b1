"""Sensitivity sweep and significance table."""

from math import floor, log

import numpy as np
import pandas as pd
import pytest

from leash.analysis.sensitivity import rate_rule_min_count, sensitivity_sweep, significance_table
from leash.analysis.tables import support_table
from leash.core.support import support_counts


def test_rate_rule_is_a_count_threshold_independent_of_k():
    for zeta in (0.01, 0.05, 0.1, 0.2, 0.5):
        for k in (8, 256, 8192):
            m = rate_rule_min_count(k, zeta)
            assert m == floor(-log(zeta)) + 1
            # c/k > eps holds for c = m and fails for c = m - 1
            eps = -log(zeta) / k
            assert m / k > eps and (m - 1) / k <= eps
    assert rate_rule_min_count(8192) == 3  # c/k > -ln(0.05)/k (App. C.4) means c >= 3


def paired(seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"benchmark": np.repeat(["A", "B"], 40), "n_base": 8, "n_rl": 8,
                         "c_base": rng.binomial(8, rng.random(80) * 0.4),
                         "c_rl": rng.binomial(8, rng.random(80) * 0.4)})


def test_sweep_at_full_budget_matches_direct_counts():
    df = paired()
    s = sensitivity_sweep(df, min_counts=(1, 3), zetas=(0.05,), pool=False)
    for m in (1, 3):
        row = s[(s.rule == "count") & (s.min_count == m) & (s.benchmark == "A")].iloc[0]
        a = df[df.benchmark == "A"]
        assert tuple(row[["P", "E", "S", "O"]]) == support_counts(a.c_base, a.c_rl, min_count=m)
        assert bool(row.exact_counts)
    rate = s[(s.rule == "rate") & (s.benchmark == "A")].iloc[0]
    count3 = s[(s.rule == "count") & (s.min_count == 3) & (s.benchmark == "A")].iloc[0]
    assert rate.min_count == 3 and tuple(rate[["P", "E", "S", "O"]]) == tuple(
        count3[["P", "E", "S", "O"]])


def test_sweep_below_budget_uses_expected_counts():
    s = sensitivity_sweep(paired(), ks=[4], min_counts=(1,), zetas=(), pool=False)
    assert not s.exact_counts.any()
    assert s[["P", "E", "S", "O"]].sum(axis=1).tolist() == pytest.approx([40, 40])


def test_significance_table_holm_over_benchmarks_only():
    t = pd.DataFrame({"scope": ["benchmark", "benchmark", "overall"],
                      "benchmark": ["A", "B", "Overall"], "E": [0, 1, 1], "S": [10, 1, 11],
                      "mcnemar_p": [0.002, 1.0, 0.006]})
    g = significance_table(t)
    assert g.holm_p.tolist() == pytest.approx([0.004, 1.0, 0.006])
    assert g["significant_0.05"].tolist() == [True, False, True]
    full = significance_table(support_table(paired(), domains={"A": "math", "B": "math"}))
    assert (full.holm_p >= full.mcnemar_p - 1e-15).all()


def test_budgets_are_numbers_with_k_min_and_k_max_where_they_differ():
    df = paired()
    df.loc[df.benchmark == "B", ["n_base", "n_rl"]] = 4
    df[["c_base", "c_rl"]] = df[["c_base", "c_rl"]].clip(upper=df["n_base"], axis=0)
    for t in (support_table(df, domains={"A": "math", "B": "math"}),
              sensitivity_sweep(df, min_counts=(1,), zetas=(), domains={"A": "math", "B": "math"})):
        assert [str(t[c].dtype) for c in ("k", "k_min", "k_max")] == ["Int64"] * 3
        by = t.set_index("benchmark")
        assert (by.at["A", "k"], by.at["B", "k"]) == (8, 4)
        assert pd.isna(by.at["Math", "k"])
        assert (by.at["Math", "k_min"], by.at["Math", "k_max"]) == (4, 8)


def test_a_budget_below_the_samples_leaves_out_the_settings_that_need_counts():
    # a study's declared budget 4 on 8 samples: the count among the first 4 is unknown where
    # the first correct sample does not fix it, so min_count 2 (and the rate rule) cannot be
    # computed there; the sweep used to stop with pandas' "cannot convert to int64"
    import warnings

    from leash.analysis.pairing import pair_counts

    rows = [{"model": m, "benchmark": "A", "question_id": q, "n": 8, "c": c, "first_correct": f,
             "step": pd.NA} for m, q, c, f in [("b", "1", 3, 0), ("b", "2", 0, -1),
                                              ("r", "1", 2, 5), ("r", "2", 8, 0)]]
    paired = pair_counts(pd.DataFrame(rows), "b", "r", budget=4)
    assert paired.c_base.isna().tolist() == [True, False]  # 3 of 8 from sample 0: unknown in 4
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = sensitivity_sweep(paired, min_counts=(1, 2), zetas=(0.05,))
    assert len(w) == 1 and "left out min_count 2, zeta 0.05" in str(w[0].message)
    assert w[0].filename == __file__  # the warning points at the caller
    row = t[t.scope == "benchmark"].iloc[0]
    # by hand at budget 4: q1 base finds (sample 0), rl does not (sample 5): S; q2: E
    assert (row.rule, row.min_count, row.P, row.E, row.S, row.O) == ("count", 1, 0, 1, 1, 0)
    with pytest.raises(ValueError, match="no setting can be computed"):
        sensitivity_sweep(paired, min_counts=(2,), zetas=(0.05,))


def test_default_thresholds_run_on_small_budgets():
    # the default thresholds run on 4 samples (they were refused); min_count 5 cannot be
    # reached by any question there, so it is left out, said (it was a row of O = 3)
    from leash.analysis.pairing import pair_counts

    rows = [{"model": m, "benchmark": "A", "question_id": str(q), "n": 4, "c": c,
             "first_correct": 0 if c else -1, "step": pd.NA}
            for m, cs in (("b", (4, 1, 0)), ("r", (4, 4, 2))) for q, c in enumerate(cs)]
    with pytest.warns(UserWarning, match=r"left out min_count 5 at the full budget \(n = 4\)"):
        t = sensitivity_sweep(pair_counts(pd.DataFrame(rows), "b", "r"), zetas=(0.05,))
    got = t[(t.rule == "count") & (t.scope == "benchmark")].set_index("min_count")
    assert sorted(got.index) == [1, 2, 3]
    # by hand at min_count 2: base finds q0 (4), rl finds q0, q1, q2 (4, 4, 2)
    assert got.loc[2, ["P", "E", "S", "O"]].tolist() == [1, 2, 0, 0]


def test_a_k_1_study_sweeps_only_the_thresholds_one_sample_can_reach():
    """k = 1 data at their full budget: min_count 2, 3, 5 and the rate rule (3 correct at zeta
    0.05) need more correct samples than a question has; the sweep printed them as rows of
    every question out of support."""
    from leash.analysis.pairing import pair_counts

    rng = np.random.default_rng(0)
    c = rng.integers(0, 2, size=(2, 40))
    rows = [{"model": m, "benchmark": "A", "question_id": str(q), "n": 1, "c": int(c[i, q]),
             "first_correct": 0 if c[i, q] else -1, "step": pd.NA}
            for i, m in enumerate(("b", "r")) for q in range(40)]
    paired = pair_counts(pd.DataFrame(rows), "b", "r")
    with pytest.warns(UserWarning) as w:
        t = sensitivity_sweep(paired)
    msg = str(w[0].message)
    for left in ("min_count 2", "min_count 3", "min_count 5", "zeta 0.01", "zeta 0.2"):
        assert f"{left} at the full budget (n = 1)" in msg
    assert t[["rule", "min_count"]].drop_duplicates().values.tolist() == [["count", 1]]
    row = t[t.scope == "benchmark"].iloc[0]
    found_b, found_r = c[0] > 0, c[1] > 0
    assert (row.P, row.E, row.S, row.O) == (int((found_b & found_r).sum()),
                                            int((~found_b & found_r).sum()),
                                            int((found_b & ~found_r).sum()),
                                            int((~found_b & ~found_r).sum()))


def test_thresholds_above_the_budget_are_left_out_with_a_warning():
    """At k = 1 no question can have 2 correct samples: min_count 2, 3 (and zeta's rate rule,
    3 at zeta = 0.05) would put every question out of support, so they are left out, said."""
    with pytest.warns(UserWarning, match=r"left out min_count 2 at k = 1, min_count 3 at k = 1, "
                                         r"zeta 0.05 at k = 1"):
        s = sensitivity_sweep(paired(), ks=[1, 4], min_counts=(1, 2, 3), zetas=(0.05,),
                              pool=False)
    assert set(s.loc[s.k == 1, "min_count"]) == {1}
    assert set(s.loc[s.k == 4, "min_count"]) == {1, 2, 3}
    with pytest.raises(ValueError, match="no setting can be computed"):
        sensitivity_sweep(paired(), ks=[1], min_counts=(2,), zetas=(), pool=False)
