"""Benchmarks with different budgets keep their own budget when paired (as in the paper:
8192 samples for math, 2048 for non-math)."""

import pandas as pd

from _support import raises_with
from leash.analysis.pairing import pair_counts
from leash.analysis.tables import support_table


def test_each_benchmark_keeps_its_budget():
    rows = []
    for model in ("base", "rl"):
        # math: 8 samples, first success at index 5 (found only with the full budget)
        rows.append((model, "math-bench", "1", 8, 1, 5))
        # non-math: 2 samples
        rows.append((model, "other", "1", 2, 1, 0))
    s = pd.DataFrame(rows, columns=["model", "benchmark", "question_id", "n", "c",
                                    "first_correct"]).assign(step=pd.NA)
    p = pair_counts(s, "base", "rl")
    assert p.set_index("benchmark")["n_base"].to_dict() == {"math-bench": 8, "other": 2}
    assert p["found_base"].tolist() == [True, True]
    assert p.attrs["pairing"]["budget_by_benchmark"] == {"math-bench": 8, "other": 2}
    t = support_table(p, pool=False)
    assert t["k"].tolist() == [8, 2]
    assert t["P"].tolist() == [1, 1]
    # a budget per benchmark (a study's declared ones): the first 4 math samples miss index 5
    p = pair_counts(s, "base", "rl", budget={"math-bench": 4, "not-here": 16})
    assert p.set_index("benchmark")["n_base"].to_dict() == {"math-bench": 4, "other": 2}
    assert p["found_base"].tolist() == [False, True]
    assert p.attrs["pairing"]["budget_by_benchmark"] == {"math-bench": 4, "other": 2}
    # the benchmark, its budget, and the range it must be in
    with raises_with(param="budget", key="other", value=4, text="[1, 2]"):
        pair_counts(s, "base", "rl", budget={"other": 4})
