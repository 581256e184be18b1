"""leash_eval.harness_logs: verl, NeMo-Skills, inspect_ai, OpenCompass and JSON objects keyed by
question id, through detection, ``leash validate`` and ``leash summarize``.

The fixtures (tests/fixtures/harnesses/) are written by make_harness_fixtures.py, which follows
each upstream writer (named there); the expected per-question (n, c) are its ``EXPECTED``, written
out by hand from the verdict tables there, not taken from the reader's output.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import zipfile
from pathlib import Path

import pytest

from _support import cli, cli_error
from leash_eval import harness_logs as H
from leash_eval.formats import detect_format
from leash_eval.summarize import summarize
from leash_eval.validate import validate

FIX = Path(__file__).resolve().parent / "fixtures" / "harnesses"
_spec = importlib.util.spec_from_file_location("make_harness_fixtures",
                                               FIX / "make_harness_fixtures.py")
mf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mf)

VERL = FIX / "verl" / "val"
NEMO = sorted((FIX / "nemo-skills" / "eval-results" / "math").glob("output-rs*.jsonl"))
OC_RESULTS = FIX / "opencompass" / "results" / "qwen" / "math.json"
OC_PREDICTIONS = FIX / "opencompass" / "predictions" / "qwen" / "math.json"
ID_BOOLS = FIX / "json-object" / "results.json"
ID_SAMPLES = FIX / "json-object" / "samples.json"
RG = sorted((FIX / "reasoning-gym-eval").glob("*/results.json"))  # base run, then the RL run


def counts(frame) -> dict:
    """{question_id: (n, c)} of a summary frame."""
    return {q: (int(n), int(c)) for q, n, c in zip(frame["question_id"], frame["n"], frame["c"])}


@pytest.fixture
def evals(tmp_path):
    return {c: mf.write_inspect(tmp_path / f"{c}.eval", c) for c in ("deflate", "zstd")}


def test_committed_fixtures_are_what_the_generator_writes():
    for name, text in mf.TEXT_FIXTURES.items():
        assert (FIX / name).read_text(encoding="utf-8") == text(), name


def test_each_format_is_detected_from_its_content(tmp_path, evals):
    cases = {VERL / "0.jsonl": "verl", NEMO[0]: "nemo-skills", evals["deflate"]: "inspect",
             evals["zstd"]: "inspect", OC_RESULTS: "opencompass",
             OC_PREDICTIONS: "opencompass", ID_BOOLS: "json-object",
             ID_SAMPLES: "json-object"}
    for path, fmt in cases.items():
        assert detect_format(path)[0] == fmt, path
    # content, not the name: a verl dump renamed, an .eval zip named .zip, one-line JSON
    renamed = tmp_path / "dump.jsonl"
    renamed.write_bytes((VERL / "0.jsonl").read_bytes())
    assert detect_format(renamed)[0] == "verl"
    z = tmp_path / "log.zip"
    z.write_bytes(evals["zstd"].read_bytes())
    assert detect_format(z)[0] == "inspect"
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"a": True, "b": [True, False]}))
    assert detect_format(one)[0] == "json-object"
    # a JSON-lines samples file stays a samples file
    s = tmp_path / "s.json"
    s.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "q",
                             "sample_idx": 0, "correct": True}) + "\n")
    assert detect_format(s)[0] == "samples"


@pytest.mark.slow
def test_verl_counts_step_ids_and_the_correct_rule():
    frame = summarize(sorted(VERL.glob("*.jsonl")), model="m", benchmark="b")
    for step, name in ((0, "0.jsonl"), (50, "50.jsonl")):
        got = frame[frame["step"] == step].set_index("question_id")
        # question ids: the prompt's sha256, the same in every step
        want = {hashlib.sha256(mf._CHAT.format(q=q).encode()).hexdigest()[:16]: nc
                for (q, _), nc in zip(mf.VERL_QUESTIONS, mf.EXPECTED[f"verl/val/{name}"])}
        assert {q: (int(r.n), int(r.c)) for q, r in got.iterrows()} == want
    # DAPO scores a wrong answer -1.0: `acc` decides; score > 0 agrees, score != 0 would not
    pos = summarize(VERL / "0.jsonl", model="m", benchmark="b",
                    reader_options={"correct_rule": "positive"})
    assert sorted(pos["c"]) == sorted(c for _, c in mf.EXPECTED["verl/val/0.jsonl"])
    # a reward without `acc` (score 1.0 / 0.0): score > 0; step 10 from the lines
    plain = summarize(FIX / "verl" / "plain" / "10.jsonl", model="m", benchmark="b")
    assert set(plain["step"]) == {10} and sorted(plain["c"]) == [0, 1, 2]
    with pytest.raises(ValueError, match=r"line 1: field 'acc' is missing"):
        summarize(FIX / "verl" / "plain" / "10.jsonl", model="m", benchmark="b",
                  reader_options={"correct_rule": "acc"})


def test_verl_step_from_the_file_name_and_a_folder_on_the_cli(tmp_path, capsys):
    lines = [json.loads(x) for x in mf.verl_step0_lines()]
    folder = tmp_path / "val"
    folder.mkdir()
    (folder / "120.jsonl").write_text("".join(
        json.dumps({k: v for k, v in r.items() if k != "step"}) + "\n" for r in lines))
    assert set(summarize(folder / "120.jsonl", model="m", benchmark="b")["step"]) == {120}
    code, out, _ = cli(capsys, "summarize", VERL, "--model", "m", "--benchmark", "b", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [(r["step"], r["questions"], r["samples"], r["correct"]) for r in rows] == [
        (0, 3, 9, 3), (50, 3, 9, 7)]


def test_verl_bad_lines_name_file_line_and_field(tmp_path):
    lines = mf.verl_step0_lines()
    bad = json.loads(lines[3])
    bad["score"] = "high"
    p = tmp_path / "7.jsonl"
    p.write_text("".join(x + "\n" for x in [*lines[:3], json.dumps(bad), *lines[4:]]))
    with pytest.raises(ValueError, match=rf"{p}: line 4: field 'score' must be a number"):
        summarize(p, model="m", benchmark="b")


def test_nemo_skills_seeds_are_samples_and_lines_are_questions():
    frame = summarize(NEMO, model="m", benchmark="b")
    assert counts(frame) == {str(i): nc for i, nc in enumerate(
        mf.EXPECTED["nemo-skills/eval-results/math/output-rs*.jsonl"])}
    judged = summarize(FIX / "nemo-skills" / "judged" / "output-rs0.jsonl", model="m",
                       benchmark="b")
    assert list(judged["c"]) == [int(v) for v in mf.NEMO_VERDICTS[0]]
    with pytest.raises(ValueError, match="--score judge_correct does not apply|judge_correct"):
        summarize(NEMO[0], model="m", benchmark="b", reader_options={"score": "judge_correct"})


def test_inspect_deflate_and_zstd_give_the_same_counts(evals):
    for path in evals.values():
        frame = summarize(path)
        assert counts(frame) == mf.EXPECTED["inspect"], path
        assert set(frame["model"]) == {"openai/gpt-4o-mini"} and set(frame["benchmark"]) == {
            "gsm8k"}


def test_inspect_several_scores_are_chosen_by_name(tmp_path, capsys):
    two = mf.write_inspect(tmp_path / "two.eval", "deflate", two_scorers=True)
    line = cli_error(capsys, "summarize", two)
    assert "samples/1_epoch_1.json" in line and "--score NAME" in line
    assert counts(summarize(two, reader_options={"score": "match"})) == mf.EXPECTED["inspect"]
    assert set(summarize(two, reader_options={"score": "model_graded_fact"})["c"]) == {3}
    assert "--score nope is not among" in cli_error(capsys, "summarize", two, "--score", "nope")


def test_inspect_truncated_or_not_a_zip_is_one_line(tmp_path, capsys, evals):
    data = evals["deflate"].read_bytes()
    trunc = tmp_path / "trunc.eval"
    trunc.write_bytes(data[: len(data) // 2])
    text = tmp_path / "text.eval"
    text.write_text("not a zip")
    for p in (trunc, text):
        line = cli_error(capsys, "summarize", p)
        assert str(p) in line and "not a readable zip archive" in line


def test_inspect_bad_member_names_the_member_and_field(tmp_path):
    src = mf._inspect_members()
    src["samples/2_epoch_3.json"]["scores"]["match"]["value"] = "P"
    p = tmp_path / "bad.eval"
    with zipfile.ZipFile(p, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, obj in src.items():
            z.writestr(name, json.dumps(obj))
    with pytest.raises(ValueError, match=r"member samples/2_epoch_3.json: field "
                                         r"'scores.match.value' = \"P\" is not a verdict"):
        summarize(p)


def test_opencompass_results_details_and_predictions_to_rescore(capsys):
    frame = summarize(OC_RESULTS)
    assert counts(frame) == mf.EXPECTED["opencompass/results/qwen/math.json"]
    assert set(frame["model"]) == {"qwen"} and set(frame["benchmark"]) == {"math"}
    line = cli_error(capsys, "summarize", OC_PREDICTIONS)
    assert "leash rescore" in line and str(OC_PREDICTIONS) in line


def test_json_objects_keyed_by_question_id(tmp_path, capsys):
    assert counts(summarize(ID_BOOLS, model="m", benchmark="b")) == \
        mf.EXPECTED["json-object/results.json"]
    assert counts(summarize(ID_SAMPLES, model="m", benchmark="b")) == \
        mf.EXPECTED["json-object/samples.json"]
    code, out, err = cli(capsys, "validate", ID_BOOLS, "--model", "m", "--benchmark", "b")
    assert code == 0 and "malformed" not in out + err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"a": True, "b": "yes"}, indent=2))
    line = cli_error(capsys, "summarize", bad, "--model", "m", "--benchmark", "b")
    assert f"{bad}: line 3: field 'b'" in line


@pytest.mark.slow
def test_validate_counts_rows_read_used_rejected(evals):
    for path, n in ((VERL / "0.jsonl", 9), (NEMO[0], 4), (evals["zstd"], 9), (OC_RESULTS, 12),
                    (ID_SAMPLES, 4)):
        report = validate(path, model="m", benchmark="b")
        assert (report.rows_read, report.rows_used, report.rows_rejected) == (n, n, 0), path


def test_file_name_rules():
    assert H.verl_step(Path("120.jsonl")) == 120 and H.verl_step(Path("a.jsonl")) is None
    assert H.nemo_seed(Path("output-rs7.jsonl")) == 7 and H.nemo_seed(Path("output.jsonl")) is None


@pytest.mark.slow
def test_gold_answers_match_by_any_id_field_of_the_question_file(tmp_path, capsys):
    pytest.importorskip("math_verify")
    from leash_eval import rescore as rs

    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"problem": f"p{i}", "answer": str(i),
                                             "unique_id": f"test/algebra/{i}.json"}) + "\n"
                                 for i in range(3)))
    samples = tmp_path / "s.jsonl"
    samples.write_text("".join(json.dumps({
        "model": "m", "benchmark": "b", "question_id": f"test/algebra/{i}.json",
        "sample_idx": k, "response": f"\\boxed{{{i if k == 0 else 99}}}"}) + "\n"
        for i in range(3) for k in range(2)))
    gold = rs.read_benchmark(questions, "answer")
    report = rs.rescore_file(samples, tmp_path / "out.parquet", gold=gold, jobs=1)
    assert report.gold_ids == "unique_id" and report.n_samples == 6
    assert counts(summarize(tmp_path / "out.parquet")) == {
        f"test/algebra/{i}.json": (2, 1) for i in range(3)}
    # the row number (the file has no question_id/idx/qid) still keys samples numbered so
    by_line = tmp_path / "n.jsonl"
    by_line.write_text(samples.read_text().replace("test/algebra/", "").replace(".json", ""))
    assert rs.rescore_file(by_line, None, gold=gold, jobs=1).gold_ids == "line"
    # none matches: refused, naming the fields tried
    other = tmp_path / "o.jsonl"
    other.write_text(samples.read_text().replace("algebra", "geometry"))
    with pytest.raises(rs.MissingGoldError, match=r"tried line \(e.g. '0'\), unique_id"):
        rs.rescore_file(other, None, gold=gold, jobs=1)
    code, _, err = cli(capsys, "rescore", samples, "--gold", questions, "--jobs", "1")
    assert code == 0


# --- Reasoning Gym's evaluation results -------------------------------------------------------

def rg_ids(path) -> list[str]:
    """The question ids of a Reasoning Gym results file, by hand: sha256 of each question."""
    doc = json.loads(Path(path).read_text())
    return [hashlib.sha256(r["question"].encode()).hexdigest()[:16]
            for c in doc["categories"] for d in c["datasets"] for r in d["results"]]


def test_committed_reasoning_gym_fixtures_are_what_its_evaluator_writes():
    pytest.importorskip("reasoning_gym")  # the entries, extract_answer and score_answer
    for name, text in mf.GYM_FIXTURES.items():
        assert (FIX / name).read_text(encoding="utf-8") == text(), name


def test_reasoning_gym_results_are_detected_and_counted(tmp_path, capsys):
    for path in RG:
        assert detect_format(path)[0] == "reasoning-gym-eval"
        frame = summarize(path)
        want = mf.EXPECTED[str(path.relative_to(FIX))]
        assert counts(frame) == dict(zip(rg_ids(path), want)), path
        assert set(frame["benchmark"]) == {"gcd"}
        assert set(frame["model"]) == {mf.RG_RUNS[path.parent.name][0]}
    # one line, pretty-printed or not, any name: detected by content; --fmt too
    one = tmp_path / "run.json"
    one.write_text(json.dumps(json.loads(RG[0].read_text())))
    assert detect_format(one)[0] == "reasoning-gym-eval"
    assert counts(summarize(one, fmt="reasoning-gym-eval")) == counts(summarize(RG[0]))
    # the labels of the command line replace the file's (noted)
    code, out, err = cli(capsys, "summarize", RG[0], "--model", "base", "--benchmark", "GCD",
                         "--json")
    assert code == 0 and {(r["model"], r["benchmark"]) for r in json.loads(out)} == {
        ("base", "GCD")}
    # the answers and responses are the file's, for leash rescore and entropy
    from leash_eval.formats import response_batches

    batch = next(response_batches(RG[1]))
    assert batch.column("response")[0].as_py().endswith("</answer>")
    assert batch.column("gold").to_pylist()[:3] == ["1"] * 3


def test_two_reasoning_gym_runs_give_support_its_hand_count(capsys):
    base, rl = (mf.RG_RUNS[p.parent.name][0] for p in RG)
    assert rg_ids(RG[0]) == rg_ids(RG[1])  # the same questions, in both files
    code, out, _ = cli(capsys, "support", *RG, "--base", base, "--rl", rl, "--json")
    assert code == 0
    row = json.loads(out)[0]
    assert {k: row[k] for k in "PESO"} == mf.EXPECTED["reasoning-gym-eval support"]
    assert (row["N"], row["k"], row["benchmark"]) == (5, 3, "gcd")


def test_reasoning_gym_scores_that_are_no_verdict_are_refused(tmp_path, capsys):
    doc = json.loads(RG[0].read_text())
    at = "categories[0].datasets[0].results[1].completions[2]"
    for value in (0.5, -1, "1.0", None, True):
        d = json.loads(json.dumps(doc))
        d["categories"][0]["datasets"][0]["results"][1]["completions"][2]["score"] = value
        p = tmp_path / "bad.json"
        p.write_text(json.dumps(d, indent=2))
        line = cli_error(capsys, "summarize", p)
        assert str(p) in line and at in line and "'score'" in line, (value, line)
    p.write_text(json.dumps(doc).replace('"score": 1.0', '"score": NaN', 1))
    assert "'score'" in cli_error(capsys, "summarize", p)
    # a string or list where the layout has an object or a list
    for change, where in ((lambda d: d["categories"].__setitem__(0, "x"), "categories[0]"),
                          (lambda d: d["categories"][0]["datasets"][0].__setitem__(
                              "results", {}), "categories[0].datasets[0]")):
        d = json.loads(json.dumps(doc))
        change(d)
        p.write_text(json.dumps(d))
        line = cli_error(capsys, "summarize", p)
        assert str(p) in line and where in line, line
