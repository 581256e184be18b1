"""pair_counts: shared questions, common budget, honest counts at a reduced budget."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _support import raises_with
from leash.analysis.pairing import pair_counts
from leash_eval.summarize import load_counts, summarize

REPO = Path(__file__).resolve().parents[1]


def frame(rows):
    df = pd.DataFrame(rows, columns=["model", "benchmark", "question_id", "step", "n", "c",
                                     "first_correct"])
    df["step"] = df["step"].astype("Int64")
    df["first_correct"] = df["first_correct"].astype("Int64")
    for c in ("model", "benchmark", "question_id"):
        df[c] = df[c].astype("string")
    return df


def test_equal_budgets_pass_counts_through():
    s = frame([("a", "b", "1", None, 4, 2, 1), ("a", "b", "2", None, 4, 0, -1),
               ("r", "b", "2", None, 4, 3, 0), ("r", "b", "1", None, 4, 0, -1)])
    p = pair_counts(s, "a", "r")
    p = p.sort_values("question_id").reset_index(drop=True)
    assert p.question_id.tolist() == ["1", "2"]
    assert p.c_base.tolist() == [2, 0] and p.c_rl.tolist() == [0, 3]
    assert p.found_base.tolist() == [True, False] and p.found_rl.tolist() == [False, True]
    assert p.attrs["pairing"]["budget"] == 4 and not p.budget_reduced.any()


def test_unshared_questions_error_or_dropped():
    s = frame([("a", "b", str(q), None, 2, 1, 0) for q in range(9)]
              + [("r", "b", "0", None, 2, 1, 0), ("r", "b", "99", None, 2, 0, -1)])
    with pytest.raises(ValueError) as e:
        pair_counts(s, "a", "r")
    msg = str(e.value)
    assert "8 questions" in msg and "b/1" in msg and "and 3 more" in msg and "b/99" in msg
    with pytest.warns(UserWarning, match="dropping unshared"):
        p = pair_counts(s, "a", "r", restrict_to_shared=True)
    assert p.question_id.tolist() == ["0"]
    assert p.attrs["pairing"]["dropped_base_only"] == 8
    assert p.attrs["pairing"]["dropped_rl_only"] == 1


def test_different_n_uses_common_budget_and_first_correct():
    # base n=8, rl n=4 -> budget 4
    s = frame([
        ("a", "b", "1", None, 8, 3, 5),    # solved only after the budget: found False, c 0
        ("a", "b", "2", None, 8, 3, 2),    # found, c at budget unknown -> NA
        ("a", "b", "3", None, 8, 8, 0),    # all correct: c at budget = 4
        ("a", "b", "4", None, 8, 0, -1),   # none: 0
        ("r", "b", "1", None, 4, 1, 3), ("r", "b", "2", None, 4, 0, -1),
        ("r", "b", "3", None, 4, 4, 0), ("r", "b", "4", None, 4, 2, 0),
    ])
    with pytest.warns(UserWarning, match=r"compared at min\(n_base, n_rl\)"):
        p = pair_counts(s, "a", "r")
    p = p.set_index("question_id")
    assert p.found_base.tolist() == [False, True, True, False]
    assert p.first_correct_base.tolist()[0] == -1 and p.first_correct_base.tolist()[1] == 2
    cb = p.c_base.tolist()
    assert cb[0] == 0 and pd.isna(cb[1]) and cb[2] == 4 and cb[3] == 0
    assert (p.n_base == 4).all() and (p.n_rl == 4).all()
    assert p.attrs["pairing"]["c_base_unknown"] == 1
    assert p.attrs["pairing"]["budget_by_benchmark"] == {"b": 4}
    # one meaning of "expected" (support_table's exact hypergeometric expectation): pairing
    # has no second one
    with pytest.raises(TypeError, match="subsample"):
        pair_counts(s, "a", "r", subsample="expected")


def test_found_unknown_without_first_correct_raises():
    s = frame([("a", "b", "1", None, 8, 3, None), ("r", "b", "1", None, 4, 1, 0)])
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="first_correct"):
        pair_counts(s, "a", "r")
    # c == 0 or c == n stay exact without first_correct
    s2 = frame([("a", "b", "1", None, 8, 8, None), ("a", "b", "2", None, 8, 0, None),
                ("r", "b", "1", None, 4, 1, 0), ("r", "b", "2", None, 4, 1, 0)])
    with pytest.warns(UserWarning):
        p = pair_counts(s2, "a", "r")
    assert p.c_base.tolist() == [4, 0] and p.found_base.tolist() == [True, False]


def test_budget_parameter_and_checkpoints():
    s = frame([("m", "b", "1", 0, 4, 1, 3), ("m", "b", "1", 100, 4, 2, 0),
               ("m", "b", "1", 300, 4, 4, 0)])
    p = pair_counts(s, ("m", 0), ("m", 300), budget=2)
    assert p.step.tolist() == [300] and p.found_base.tolist() == [False]
    assert p.c_rl.tolist() == [2]
    with raises_with(param="budget", value=5, constraint="[1, 4]"):
        pair_counts(s, ("m", 0), ("m", 300), budget=5)
    with pytest.raises(ValueError, match="several rows"):
        pair_counts(s, "m", ("m", 300))
    with pytest.raises(ValueError, match="selects no rows"):
        pair_counts(s, "zzz", ("m", 300))


def _mirror() -> Path:
    env = os.environ.get("LEASH_DATA_MIRROR")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.skipif(not (_mirror() / "gsm8k-sft-vs-rlvr-probe").is_dir(),
                    reason="data mirror not found (set LEASH_DATA_MIRROR)")
def test_probe_checkpoint_pairs(tmp_path):
    d = _mirror() / "gsm8k-sft-vs-rlvr-probe"
    parts = [summarize(d / "final_2048.sft_raw.jsonl", benchmark="gsm8k", step=0,
                       out=tmp_path / "sft.parquet")]
    for st in (100, 300):
        summarize(d / f"step-{st}.rl_raw.jsonl", benchmark="gsm8k", step=st,
                  out=tmp_path / f"rl{st}.parquet")
    s = load_counts([tmp_path / "sft.parquet", tmp_path / "rl100.parquet",
                     tmp_path / "rl300.parquet"])
    assert len(parts[0]) == 30
    sft = "ns-0/qwen-2.5-1.5b-instruct-reasoning-sft"
    rl = "expx/qwen-2.5-1.5b-rlvr-ppo"
    p = pair_counts(s, sft, rl)
    assert sorted(set(p.step.tolist())) == [100, 300] and len(p) == 60
    # the pair of c values equals the upstream per-question table of each checkpoint
    for st in (100, 300):
        up = pd.read_csv(d / f"step-{st}.per_question.csv")
        got = p[p.step == st].set_index("question_id")
        for q, cs, cr in zip(up.qid.astype(str), up.c_sft, up.c_rl):
            assert (got.loc[q, "c_base"], got.loc[q, "c_rl"]) == (cs, cr)
    # hand count of found for the RL checkpoint
    raw = [json.loads(line) for line in open(d / "step-100.rl_raw.jsonl")]
    found = {str(r["qid"]): any(x["correct"] for x in r["rollouts"]) for r in raw}
    got = p[p.step == 100].set_index("question_id").found_rl.to_dict()
    assert got == found
    assert np.array_equal(p.n_base.unique(), [8])
