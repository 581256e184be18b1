"""How many samples a study needs (leash.analysis.planning): exact against fractions, and the
properties a plan must have.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from leash.analysis.planning import (
    PLAN_COLUMNS,
    budget_plan,
    default_plan_ks,
    detection_table,
    found_probability_table,
    pilot_rates,
)
from leash.core.support import misclassification_probability


def pilot(c_base, c_rl, n=8):
    return pd.DataFrame({"benchmark": "B", "n_base": n, "c_base": c_base, "n_rl": n,
                         "c_rl": c_rl})


def test_budget_plan_against_fractions():
    c_base, c_rl, n, k = [4, 0, 8, 1, 0], [4, 2, 0, 1, 0], 8, 16
    plan = budget_plan(pilot(c_base, c_rl), [k])
    assert list(plan.columns) == PLAN_COLUMNS
    row = plan.iloc[0]
    eps = -np.log(0.05) / k
    exp = {"P": 0, "E": 0, "S": 0, "O": 0}
    wrong_e = wrong_s = Fraction(0)
    for cb, cr in zip(c_base, c_rl):
        pb, pr = Fraction(cb, n), Fraction(cr, n)
        fb, fr = 1 - (1 - pb) ** k, 1 - (1 - pr) ** k
        cell = {"P": fb * fr, "E": (1 - fb) * fr, "S": fb * (1 - fr), "O": (1 - fb) * (1 - fr)}
        for c in exp:
            exp[c] += cell[c]
        tb, tr = pb > eps, pr > eps
        wrong_e += cell["E"] * (not (not tb and tr))
        wrong_s += cell["S"] * (not (tb and not tr))
    for c in exp:
        assert row[c] == pytest.approx(float(exp[c]), rel=1e-12, abs=1e-15)
    assert row["E misclassified"] == pytest.approx(float(wrong_e), rel=1e-12, abs=1e-15)
    assert row["S misclassified"] == pytest.approx(float(wrong_s), rel=1e-12, abs=1e-15)
    # true categories at k = 16 (epsilon 0.187): rates 1/2, 1/4, 1, 1/8, 0
    assert (row["true P"], row["true E"], row["true S"], row["true O"]) == (1, 1, 1, 2)
    pb, pr = pilot_rates(pilot(c_base, c_rl))
    assert row["misclassified base"] == pytest.approx(misclassification_probability(pb, k).sum())
    assert row["misclassified rl"] == pytest.approx(misclassification_probability(pr, k).sum())


@pytest.mark.slow
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=1, max_size=20))
def test_a_plan_is_a_distribution_and_misclassification_is_part_of_it(counts):
    cb, cr = zip(*counts)
    plan = budget_plan(pilot(list(cb), list(cr)), [1, 2, 8, 64, 4096])
    total = plan[["P", "E", "S", "O"]].sum(axis=1)
    np.testing.assert_allclose(total, len(counts), rtol=1e-12)
    assert (plan[["true P", "true E", "true S", "true O"]].sum(axis=1) == len(counts)).all()
    assert (plan["E misclassified"] <= plan["E"] + 1e-12).all()
    assert (plan["S misclassified"] <= plan["S"] + 1e-12).all()
    # at a budget far beyond the pilot every rate the pilot saw (>= 1/8) is found and in support
    assert plan["E misclassified"].iat[-1] < 1e-12 and plan["misclassified base"].iat[-1] < 1e-12


def test_plan_groups_and_defaults():
    p = pd.concat([pilot([1, 0], [1, 3]), pilot([0], [0]).assign(benchmark="C")],
                  ignore_index=True)
    plan = budget_plan(p, by=["benchmark"])
    assert plan["benchmark"].unique().tolist() == ["B", "C"]
    assert plan["k"].unique().tolist() == default_plan_ks(8).tolist() == [1, 2, 4, 8, 16, 32,
                                                                           64, 128]
    with pytest.raises(ValueError, match="c_rl = 9"):
        budget_plan(pilot([1], [9]))


def test_found_probability_and_detection_tables():
    t = found_probability_table([0.01, 0.5], [1, 100])
    assert t["k = 100"].iat[0] == pytest.approx(1 - 0.99**100)
    d = detection_table([0.01, 0.1], 2 ** np.arange(12))
    assert d["budget (found)"].tolist() == [256, 16]  # 1 - 0.9**16 = 0.81
    assert (d["budget (fisher)"] >= d["budget (found)"]).all()
    only = detection_table([0.1], [16], rules=["found"])
    assert list(only.columns) == ["p_base", "p_rl", "budget (found)"]
    with pytest.raises(ValueError, match="'rules' parameter of detection_table .* Got 'bayes'"):
        detection_table([0.1], [16], rules=["bayes"])
