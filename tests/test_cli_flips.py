"""`leash flips` and `leash plan`: the per-question tests and the budget plan from the command line.

Every p and q of `leash flips` equals scipy's fisher_exact and false_discovery_control to 1e-9,
on a hand-made counts file and on a real public pair of the data manifest; bad input is one line
naming the file, the option or the question, exit status 2.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import false_discovery_control, fisher_exact

from _support import MIRROR, needs_mirror
from _support import run_cli as run
from leash_eval.cli import main

# question -> (base c, rl c) of 16 samples each
PAIRS = {"q0": (0, 9), "q1": (12, 0), "q2": (5, 6), "q3": (0, 0), "q4": (16, 16), "q5": (1, 0),
         "q6": (0, 2), "q7": (3, 15)}
N = 16


def counts_file(tmp_path, pairs=PAIRS, n=N, extra=()):
    rows = [{"model": m, "benchmark": "toy", "question_id": q, "n": n, "c": c}
            for q, (cb, cr) in pairs.items() for m, c in (("base", cb), ("rl", cr))]
    rows += list(extra)
    f = tmp_path / "counts.csv"
    pd.DataFrame(rows).to_csv(f, index=False)
    return f


def check_p_and_q(rows):
    ref = np.array([[fisher_exact([[r["rl_c"], r["rl_n"] - r["rl_c"]],
                                   [r["base_c"], r["base_n"] - r["base_c"]]],
                                  alternative=alt).pvalue for alt in ("greater", "less")]
                    for r in rows])
    got = np.array([[r["p_expansion"], r["p_shrinkage"]] for r in rows])
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=0)
    for j, name in enumerate(("q_expansion", "q_shrinkage")):
        np.testing.assert_allclose([r[name] for r in rows],
                                   false_discovery_control(ref[:, j], method="bh"), rtol=1e-9)


def test_flips_on_a_counts_file_equals_scipy(capsys, tmp_path):
    f = counts_file(tmp_path)
    out_csv = tmp_path / "flips.csv"
    code, out, err = run(capsys, "flips", str(f), "--base", "base", "--rl", "rl", "--json",
                         "--out", str(out_csv))
    assert code == 0, err
    rows = json.loads(out)
    assert [r["question_id"] for r in rows] == list(PAIRS)
    assert [r["category"] for r in rows] == ["E", "S", "P", "O", "P", "S", "E", "P"]
    check_p_and_q(rows)
    assert {r["question_id"]: r["verdict"] for r in rows if r["verdict"]} == {
        "q0": "expansion", "q1": "shrinkage", "q7": "expansion"}
    # counts keep no answers or responses: no such columns
    assert "base_answers" not in rows[0] and "base_response" not in rows[0]
    back = pd.read_csv(out_csv, keep_default_na=False)
    assert back["question_id"].tolist() == list(PAIRS)
    np.testing.assert_allclose(back["q_expansion"], [r["q_expansion"] for r in rows], rtol=1e-15)
    assert "E = 2 (1 significant), S = 2 (1 significant), P = 3 (1 up, 0 down" in err


def test_flips_min_count_and_fdr(capsys, tmp_path):
    f = counts_file(tmp_path)
    code, out, _ = run(capsys, "-q", "flips", str(f), "--base", "base", "--rl", "rl",
                       "--min-count", "3", "--fdr", "0.5", "--json")
    rows = json.loads(out)
    assert code == 0 and rows[6]["category"] == "O"  # 0 vs 2 of 16: found by neither at 3
    check_p_and_q(rows)


@pytest.mark.slow
def test_flips_shows_answers_and_responses_where_the_files_keep_them(capsys, tmp_path):
    rows = []
    for model, correct in (("base", [0, 0, 0, 0]), ("rl", [0, 1, 1, 0])):
        for i, ok in enumerate(correct):
            rows.append({"model": model, "benchmark": "toy", "question_id": "a",
                         "sample_idx": i, "correct": bool(ok), "answer": "42" if ok else "7",
                         "response": ("so the answer is 42" if ok else "it is 7") + " " * 3
                         + "x" * 300})
        rows.append({"model": model, "benchmark": "toy", "question_id": "b", "sample_idx": 0,
                     "correct": True, "answer": "1", "response": "one"})
    f = tmp_path / "samples.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = run(capsys, "-q", "flips", str(f), "--base", "base", "--rl", "rl",
                         "--json", "--response-chars", "30")
    assert code == 0, err
    got = {r["question_id"]: r for r in json.loads(out)}
    assert got["a"]["category"] == "E"
    assert got["a"]["base_answers"] == "7 x4" and got["a"]["rl_answers"] == "42 x2, 7 x2"
    # the first correct response of each model, else its first, on one line and cut
    assert got["a"]["rl_response"] == "so the answer is 42 xxxxxxxxxx..."
    assert got["a"]["base_response"].startswith("it is 7 x") and len(
        got["a"]["base_response"]) == 33
    code, out, _ = run(capsys, "-q", "flips", str(f), "--base", "base", "--rl", "rl", "--json",
                       "--response-chars", "0")
    assert code == 0 and "base_response" not in json.loads(out)[0]


@pytest.mark.parametrize("change, expect", [
    ({"c": 17}, ("counts.csv", "c")),  # c > n
    ({"n": 0, "c": 0}, ("counts.csv", "n")),  # n = 0
])
def test_flips_bad_counts_are_one_line(capsys, tmp_path, change, expect):
    f = counts_file(tmp_path, extra=[{"model": "rl", "benchmark": "toy", "question_id": "q9",
                                      "n": N, "c": 1, **change},
                                     {"model": "base", "benchmark": "toy",
                                      "question_id": "q9", "n": N, "c": 1}])
    code, out, err = run(capsys, "-q", "flips", str(f), "--base", "base", "--rl", "rl")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert all(part in err for part in expect), err


def test_flips_bad_options_and_unequal_questions(capsys, tmp_path):
    f = counts_file(tmp_path, extra=[{"model": "rl", "benchmark": "toy", "question_id": "q9",
                                      "n": N, "c": 1}])
    code, _, err = run(capsys, "-q", "flips", str(f), "--base", "base", "--rl", "rl")
    # a question one model lacks: never tested on a subset unless asked, and the option named
    assert code == 2 and "--shared-only" in err and "toy/q9" in err
    code, out, err = run(capsys, "flips", str(f), "--base", "base", "--rl", "rl",
                         "--shared-only", "--json")
    assert code == 0 and len(json.loads(out)) == len(PAIRS) and "q9" in err
    for argv, word in ((["--fdr", "0"], "--fdr"), (["--fdr", "1.5"], "--fdr"),
                       (["--min-count", "0"], "--min-count"), (["--out", "x.txt"], "--out")):
        code, _, err = run(capsys, "-q", "flips", str(counts_file(tmp_path)), "--base", "base",
                           "--rl", "rl", *argv)
        assert code == 2 and word in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.slow
@needs_mirror
def test_flips_of_a_real_public_pair_equal_scipy(capsys, monkeypatch):
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    code, out, err = run(capsys, "-q", "flips", "gsm8k-probe-sft", "gsm8k-probe-rl-final",
                         "--base", "sft", "--rl", "rl", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) == 30
    check_p_and_q(rows)
    expansion = [r for r in rows if r["category"] == "E"]
    assert len(expansion) == 1 and expansion[0]["rl_response"] and expansion[0]["rl_answers"]


def test_plan(capsys, tmp_path):
    from leash.analysis.planning import budget_plan, detection_table

    f = counts_file(tmp_path)
    code, out, err = run(capsys, "-q", "plan", str(f), "--base", "base", "--rl", "rl", "--k",
                         "1,16,256", "--expansion", "0.01,0.1", "--json")
    assert code == 0, err
    got = json.loads(out)
    paired = pd.DataFrame({"n_base": N, "c_base": [b for b, _ in PAIRS.values()], "n_rl": N,
                           "c_rl": [r for _, r in PAIRS.values()]})
    ref = budget_plan(paired, [1, 16, 256])
    assert [r["k"] for r in got["budgets"]] == [1, 16, 256]
    np.testing.assert_allclose([r["E misclassified"] for r in got["budgets"]],
                               ref["E misclassified"], rtol=1e-12)
    assert got["found"][0]["k = 16"] == pytest.approx(1 - 0.99**16)
    det = detection_table([0.01, 0.1], [1, 16, 256])
    assert [r["budget (found)"] for r in got["detection"]] == [
        None if np.isnan(x) else x for x in det["budget (found)"]]
    code, out, _ = run(capsys, "-q", "plan", str(f), "--base", "base", "--rl", "rl")
    assert code == 0 and "budget at which an expansion is detected" in out
    code, _, err = run(capsys, "-q", "plan", str(f), "--base", "base", "--rl", "rl",
                       "--power", "1")
    assert code == 2 and "--power" in err
    with pytest.raises(SystemExit):
        main(["plan", str(f), "--base", "base", "--rl", "rl", "--expansion", "0,2"])
