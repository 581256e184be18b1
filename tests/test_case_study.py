"""The real-data case study (notebook 09) against counts taken by hand from the raw files.

Hand counts read the raw JSON directly (no leash reader): a question is solved by a model when
at least one of its rollouts is marked correct. They are compared with leash's functions and
with the committed case-study tables in figures/.
"""

import json

import pandas as pd
import pytest

from _support import MIRROR, REPO, needs_mirror
from leash import artifacts as A

PROBE = MIRROR / "gsm8k-sft-vs-rlvr-probe"
FIGURES = REPO / "figures"
STEPS = (100, 300, 500, 1000)


def raw_counts(name):
    """question id -> number of rollouts marked correct, straight from the raw file."""
    with open(PROBE / name) as fh:
        rows = [json.loads(line) for line in fh]
    return {str(r["qid"]): sum(1 for x in r["rollouts"] if x["correct"] is True) for r in rows}


def hand_categories(base, rl):
    p = sum(1 for q in base if base[q] > 0 and rl[q] > 0)
    e = sum(1 for q in base if base[q] == 0 and rl[q] > 0)
    s = sum(1 for q in base if base[q] > 0 and rl[q] == 0)
    o = sum(1 for q in base if base[q] == 0 and rl[q] == 0)
    return p, e, s, o


@pytest.fixture(scope="module")
def hand():
    sft = raw_counts("final_2048.sft_raw.jsonl")
    out = {"final": hand_categories(sft, raw_counts("final_2048.rl_raw.jsonl"))}
    for step in STEPS:
        out[step] = hand_categories(sft, raw_counts(f"step-{step}.rl_raw.jsonl"))
    return out


@needs_mirror
def test_hand_counts_are_what_the_data_say(hand):
    # written down once by reading the files; the other tests compare leash with these
    assert hand["final"] == (28, 1, 0, 1)
    assert hand[100] == (26, 1, 2, 1)


@needs_mirror
def test_leash_support_matches_hand_counts(hand, monkeypatch):
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    final = A.support_long("gsm8k-probe").iloc[0]
    assert (final.P, final.E, final.S, final.O) == hand["final"]
    ckpt = A.checkpoint_support("gsm8k-probe").set_index("step")
    for step in STEPS:
        assert tuple(ckpt.loc[step, ["P", "E", "S", "O"]]) == hand[step], step


@needs_mirror
def test_committed_case_study_tables_match_hand_counts(hand):
    final = pd.read_csv(FIGURES / "case_gsm8k_support.csv").iloc[0]
    assert (final.P, final.E, final.S, final.O) == hand["final"]
    ckpt = pd.read_csv(FIGURES / "case_gsm8k_checkpoints.csv").set_index("step")
    for step in STEPS:
        assert tuple(ckpt.loc[step, ["P", "E", "S", "O"]]) == hand[step], step
    # pass@1 = mean correct share and pass@8 = share of questions solved, from the raw files
    pk = pd.read_csv(FIGURES / "case_gsm8k_passk.csv").set_index(["label", "k"])["pass_at_k"]
    sft = raw_counts("final_2048.sft_raw.jsonl")
    assert pk[("sft", 1)] == pytest.approx(sum(sft.values()) / (8 * len(sft)))
    assert pk[("sft", 8)] == pytest.approx(sum(c > 0 for c in sft.values()) / len(sft))
    # the answers behind the one expansion: question 4, gold 70, which only RLVR produced
    cases = pd.read_csv(FIGURES / "case_gsm8k_answers.csv", dtype={"question_id": str})
    exp = cases[cases.category == "expansion"].iloc[0]
    assert exp.question_id == "4" and str(exp.gold) == "70" and "70 x" in exp["rl answers"]


@needs_mirror
def test_committed_math_example_matches_raw_scores():
    with open(MIRROR / "math-benchmarks" / "eval_rm_maj_example.math_cot_100.jsonl") as fh:
        rows = [json.loads(line) for line in fh]
    correct = [sum(bool(s) for s in r["score"]) for r in rows]
    pk = pd.read_csv(FIGURES / "case_math_passk.csv").set_index("k")["pass_at_k"]
    assert pk[1] == pytest.approx(sum(correct) / (8 * len(rows)))
    assert pk[8] == pytest.approx(sum(c > 0 for c in correct) / len(rows))


def test_notebook_inputs_follow_the_study_files(tmp_path, monkeypatch):
    # What notebook 09 requires comes from its studies' own sources and benchmarks, so another
    # study file skips for its own missing data (and runs where it is present).
    from leash.run.notebook import SkipNotebook, require_gold, require_study
    from leash_eval import manifest

    monkeypatch.setattr(manifest, "default_dest", lambda: tmp_path / "raw")
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(tmp_path / "no-mirror"))
    study = tmp_path / "mine.yaml"
    study.write_text(
        "benchmarks: {math500: {domain: math}, mine: {domain: math}}\n"
        "sections:\n"
        "  support: {sources: [{dataset: math-eval-example}, {path: gen/*.jsonl}]}\n"
        "  entropy: {sources: [{path: gen/*.jsonl}]}\n")
    s = A.open_study(study)
    assert s.study.datasets() == ["math-eval-example-cot100"] and s.study.datasets("entropy") == []
    assert s.study.path_sources("entropy") == [str(tmp_path / "gen" / "*.jsonl")]
    with pytest.raises(SkipNotebook, match=r"data not available locally: math-eval-example-cot100"):
        require_study(study, "support")
    with pytest.raises(SkipNotebook, match=r"input files of study 'mine' not found: .*gen/\*"):
        require_study(study, "entropy")
    with pytest.raises(SkipNotebook, match=r"its section 'checkpoints' is missing"):
        require_study(study, ["entropy", "checkpoints"])
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "a.jsonl").write_text("{}\n")
    assert require_study(study, "entropy").name == "mine"
    with pytest.raises(SkipNotebook, match=r"data not available locally: math500"):
        require_gold(study)  # math500 has a question file in the manifest, "mine" none
    study.write_text("benchmarks: {mine: {domain: math}}\n")
    assert require_gold(study) is None


@needs_mirror
def test_the_probe_gold_comes_from_its_benchmark(monkeypatch):
    from leash.run.notebook import require_gold

    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    gold = require_gold("gsm8k-probe")
    assert set(gold["benchmark"]) == {"gsm8k"} and len(gold) == 30
    assert {"question_id", "question", "gold"} <= set(gold.columns)
