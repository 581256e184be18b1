"""Evaluator files end to end: read as written, graded where they log no verdict, summarized.

Each fixture of ``tests/fixtures/evaluators/`` (written like the upstream writer's output; see
``make_fixtures.py`` for the repository and file each imitates) goes through the user's route:
``leash summarize`` directly when the evaluator logs per-sample correctness (evalscope), else
``leash rescore`` (math-verify against the file's own gold, or a ``--gold`` question file)
and then ``leash summarize`` on the rescored samples. The per-question n and c below are
counted by hand from the fixtures' texts.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from leash_eval.cli import main
from leash_eval.rescore import rescore_file
from leash_eval.summarize import summarize

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "evaluators"
_spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
mf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mf)
LM_REPEATS = (FIXTURES / "lm-eval" / "Qwen__Qwen2.5-7B"
              / f"samples_gsm8k_cot_self_consistency_{mf.LM_EVAL_DATE}.jsonl")
ES_CURRENT = FIXTURES / "evalscope" / "outputs" / "reviews" / "qwen2.5-7b-instruct" / \
    "gsm8k_main.jsonl"
OA_CHAT = FIXTURES / "openai-batch" / "chat_output.jsonl"

needs_mv = pytest.mark.skipif(importlib.util.find_spec("math_verify") is None,
                              reason="math-verify not installed (pip install -e '.[verify]')")


def counts(frame) -> dict:
    return {q: (int(n), int(c)) for q, n, c in
            frame[["question_id", "n", "c"]].itertuples(index=False)}


def test_evalscope_reviews_are_summarized_with_their_own_verdicts(capsys):
    # gsm8k_main.jsonl: group 0 scores acc 1.0, 0.0; group 1: 1.0, 1.0; group 2: 0.0, 0.0
    frame = summarize(ES_CURRENT)
    assert counts(frame) == {"0": (2, 1), "1": (2, 2), "2": (2, 0)}
    assert set(frame["model"]) == {"qwen2.5-7b-instruct"}
    assert set(frame["benchmark"]) == {"gsm8k_main"}
    assert main(["summarize", str(ES_CURRENT), "--json", "-q"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["questions"], row["samples"]) == (3, 6)


def test_a_file_without_verdicts_says_to_rescore_it_first(capsys):
    assert main(["summarize", str(LM_REPEATS), "--model", "m", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "leash rescore" in err and LM_REPEATS.name in err


@needs_mv
def test_lm_eval_repeats_rescored_against_target_then_summarized(tmp_path, capsys):
    # resps of the `all` filter (the one that keeps every repeat), target in brackets:
    #   doc 0 [42]: "... The answer is 42." ok, "... The answer is 41." no, "Not sure." no
    #   doc 1 [56]: 56 ok, 56 ok, 54 no;   doc 2 [15]: 15, 15, 15 all ok
    out = tmp_path / "rescored.parquet"
    assert main(["rescore", str(LM_REPEATS), "--model", "qwen-7b", "--out", str(out),
                 "--jobs", "1", "-q"]) == 0
    capsys.readouterr()
    frame = summarize(out)
    assert counts(frame) == {"0": (3, 1), "1": (3, 2), "2": (3, 3)}
    assert set(frame["benchmark"]) == {"gsm8k_cot_self_consistency"}  # from the file name
    assert set(frame["model"]) == {"qwen-7b"}


@needs_mv
def test_lighteval_details_rescored_against_their_gold_then_summarized(tmp_path):
    path = mf.write_lighteval_current(tmp_path)
    # LIGHTEVAL_DOCS: a correct sample is one whose text gives the gold (choices[gold_index])
    expected = {}
    for ix, (_, gold, samples) in enumerate(mf.LIGHTEVAL_DOCS):
        ok = sum(1 for text, _ in samples
                 if text.replace("so ", "").strip() in (f"\\boxed{{{gold}}}", gold))
        expected[str(ix)] = (len(samples), ok)
    out = tmp_path / "rescored.parquet"
    report = rescore_file(path, out, jobs=1)
    assert report.n_samples == sum(n for n, _ in expected.values())
    assert counts(summarize(out)) == expected


@needs_mv
def test_openai_batch_rescored_against_a_question_file_then_summarized(tmp_path, capsys):
    # chat_output.jsonl: q0 choices \boxed{4}, \boxed{5}, "It is 4 because"; q1 \boxed{10},
    # \boxed{12}, \boxed{10}; q2#0 \boxed{7} and q2#1 \boxed{8} (two requests, one question)
    gold = tmp_path / "questions.jsonl"
    gold.write_text("".join(json.dumps(r) + "\n" for r in [
        {"idx": "q0", "answer": "5"}, {"idx": "q1", "answer": "10"},
        {"idx": "q2", "answer": "8"}]))
    out = tmp_path / "rescored.jsonl"
    assert main(["rescore", str(OA_CHAT), "--benchmark", "toy", "--gold", str(gold),
                 "--out", str(out), "--jobs", "1", "-q"]) == 0
    capsys.readouterr()
    assert counts(summarize(out)) == {"q0": (3, 1), "q1": (3, 2), "q2": (2, 1)}


def test_rescoring_a_file_that_names_no_model_asks_for_the_label(tmp_path, capsys):
    """lm-eval's samples name no model: a rescored file without one could not be summarized,
    so rescoring refuses it up front, naming the option, and writes nothing."""
    out = tmp_path / "rescored.parquet"
    assert main(["rescore", str(LM_REPEATS), "--out", str(out), "--jobs", "1", "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "does not name the model" in err and "--model" in err
    assert not out.exists()


@pytest.mark.parametrize("command", ["validate", "summarize", "rescore"])
def test_a_broken_evaluator_record_is_the_readers_one_line(tmp_path, capsys, command):
    """The reader's message (file, line, field), not DuckDB's wrapped in another sentence."""
    lines = LM_REPEATS.read_text().splitlines()
    rec = json.loads(lines[6])  # line 7: the first record of the `all` filter, the one read
    rec["resps"] = "oops"
    lines[6] = json.dumps(rec)
    bad = tmp_path / f"samples_gsm8k_{mf.LM_EVAL_DATE}.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    argv = [command, str(bad), "--model", "m", "--filter", "all", "-q"]
    argv += ["--jobs", "1"] if command == "rescore" else []
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"leash {command}: error: {bad}: line 7: field 'resps' must hold one "
                          "request")
    assert "Invalid Input Error" not in err and "cannot read the file" not in err
