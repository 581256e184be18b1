"""The input engine: plug-in readers wired through the registry of leash_eval.readers (a fake
format is registered here with one entry, as a new format is), reader options, YAML field
mappings, streaming response batches, and the modules' import order (no cycle)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _support import raises_with, write_lines
from leash_eval import readers as R
from leash_eval.cli import main
from leash_eval.formats import detect_format, get_mapping, response_batches
from leash_eval.summarize import summarize
from leash_eval.validate import validate

# three questions, samples in generation order k; q2 has no correct sample
FAKE = [{"fake_id": q, "k": k, "ok": ok, "text": f"answer {q}.{k}", "gold": str(q)}
        for q, oks in ((0, (True, False, True)), (1, (False, True)), (2, (False, False)))
        for k, ok in enumerate(oks)]


@pytest.fixture
def fake(monkeypatch):
    """A reader "fake" for files whose records have ``fake_id``; returns the options it got."""
    calls = []

    def read(con, path, options):
        calls.append(dict(options))
        if options.get("filter") not in (None, "strict"):
            raise ValueError(f"{path}: --filter {options['filter']!r} is not in the file; "
                             "filters present: ['strict'].")
        correct = "NULL::BOOLEAN" if options.get("no_verdicts") else "CAST(ok AS BOOLEAN)"
        return con.sql(
            f"SELECT row_number() OVER () AS line, NULL::VARCHAR AS model, 'bench' AS benchmark,"
            f" CAST(fake_id AS VARCHAR) AS question_id, CAST(k AS BIGINT) AS sample_idx, "
            f"{correct} AS correct, text AS response, gold, NULL::VARCHAR AS answer, "
            "NULL::VARCHAR AS finish_reason, NULL::BIGINT AS n_tokens, NULL::BIGINT AS step "
            f"FROM read_json('{path}', format='newline_delimited')")

    monkeypatch.setitem(R.input_formats(), "fake", R.InputFormat(
        "fake", read, fits=lambda keys, first: "fake_id" in keys, module="tests",
        options=(R.ReaderOption("filter", "a filter"), R.ReaderOption("no_verdicts", "none"))))
    return calls


def test_an_evaluator_reader_goes_through_the_same_rules_and_aggregation(tmp_path, fake):
    p = write_lines(tmp_path / "fake.jsonl", FAKE)
    assert detect_format(p) == ("fake", None)
    out = summarize(p, model="m", reader_options={"filter": "strict"})
    assert fake[-1] == {"filter": "strict"}
    # by hand from FAKE: n, c and the first correct k per question
    assert out[["question_id", "n", "c", "first_correct"]].values.tolist() == [
        ["0", 3, 2, 0], ["1", 2, 1, 1], ["2", 2, 0, -1]]
    assert out.benchmark.tolist() == ["bench"] * 3 and out.model.tolist() == ["m"] * 3
    assert out.attrs["provenance"]["files"][0]["format"] == "fake"
    # a bad option is the reader's one-line message
    with pytest.raises(ValueError, match=r"--filter 'loose' is not in the file"):
        summarize(p, model="m", reader_options={"filter": "loose"})
    # the rules apply to what a reader yields: a negative index names the line and field
    bad = write_lines(tmp_path / "bad.jsonl", [FAKE[0], {**FAKE[1], "k": -1}])
    with raises_with(file=str(bad), line="line 2", key="sample_idx", text="must be >= 0"):
        summarize(bad, model="m")


def test_a_format_without_verdicts_says_to_rescore_first(tmp_path, fake, capsys):
    p = write_lines(tmp_path / "fake.jsonl", FAKE)
    opts = {"no_verdicts": True}
    want = (f"{p}: the fake format logs no per-sample correctness; run `leash rescore {p} "
            "--model m --out rescored.parquet` first")  # the labels it was given, to pass on
    with pytest.raises(ValueError) as e:
        summarize(p, model="m", reader_options=opts)
    assert want in str(e.value) and "\n" not in str(e.value)
    assert want in str(validate(p, model="m", reader_options=opts).file_problem)
    # the responses are there to be rescored, with the gold answers
    batches = list(response_batches(p, model="m", batch_size=3, reader_options=opts))
    assert [b.num_rows for b in batches] == [3, 3, 1]
    rows = [r for b in batches for r in b.to_pylist()]
    assert [r["response"] for r in rows] == [r["text"] for r in FAKE]
    assert {r["correct"] for r in rows} == {None} and rows[3]["gold"] == "1"
    # and the CLI forwards --filter to the reader
    assert main(["-q", "summarize", str(p), "--model", "m", "--filter", "strict"]) == 0
    assert fake[-1] == {"filter": "strict"}
    capsys.readouterr()


LAYOUT = """\
# outputs of a home-made harness: one object per question
question_id: doc.id
samples: outputs
correct: verdict.ok
response: text
answer: pred
tokens: usage.n
finish_reason: stop
gold: doc.answer
constants:
  model: my-model
  benchmark: gsm8k
"""


def _harness(tmp_path):
    recs = [{"doc": {"id": 7, "answer": "4"}, "outputs": [
                {"verdict": {"ok": True}, "text": "so 4", "pred": "4", "usage": {"n": 10},
                 "stop": "stop"},
                {"verdict": {"ok": False}, "text": "so 5", "pred": "5", "usage": {"n": 30},
                 "stop": "length"}]},
            {"doc": {"id": 8, "answer": "1"}, "outputs": [
                {"verdict": {"ok": False}, "text": "so 2", "pred": "2", "usage": {"n": 5}}]}]
    return write_lines(tmp_path / "harness.jsonl", recs)


@pytest.mark.slow
def test_a_yaml_mapping_reads_nested_field_paths(tmp_path, capsys):
    layout = tmp_path / "my-layout.yaml"
    layout.write_text(LAYOUT)
    data = _harness(tmp_path)
    m = get_mapping(str(layout))
    assert (m.question_id, m.samples, m.correct, m.n_tokens) == ("doc.id", "outputs",
                                                                 "verdict.ok", "usage.n")
    out = summarize(data, mapping=layout)
    # by hand: question 7 has 2 samples (1 correct, first at 0, tokens 10 and 30, one cut at
    # the length limit), question 8 one wrong sample
    assert out[["model", "benchmark", "question_id", "n", "c", "first_correct",
                "n_truncated"]].values.tolist() == [["my-model", "gsm8k", "7", 2, 1, 0, 1],
                                                    ["my-model", "gsm8k", "8", 1, 0, -1, 0]]
    assert out.n_tokens_mean.tolist() == [20.0, 5.0]
    assert [list(v) for v in out.answer_values] == [["4", "5"], ["2"]]
    rows = [r for b in response_batches(data, mapping=layout) for r in b.to_pylist()]
    assert [(r["question_id"], r["sample_idx"], r["response"], r["correct"], r["gold"])
            for r in rows] == [("7", 0, "so 4", True, "4"), ("7", 1, "so 5", False, "4"),
                               ("8", 0, "so 2", False, "1")]
    # the caller's label still wins over the YAML constant
    assert summarize(data, mapping=layout, model="other").model.tolist() == ["other"] * 2
    # from the command line
    code = main(["-q", "summarize", str(data), "--mapping", str(layout), "--json"])
    assert code == 0 and [r["samples"] for r in json.loads(capsys.readouterr().out)] == [3]


def test_a_yaml_mapping_with_an_unknown_key_names_the_file(tmp_path, capsys):
    layout = tmp_path / "typo.yaml"
    layout.write_text(LAYOUT.replace("answer: pred", "anwser: pred"))
    data = _harness(tmp_path)
    want = r"typo\.yaml: unknown key 'anwser' \(did you mean 'answer'\?\)"
    with pytest.raises(ValueError, match=want):
        summarize(data, mapping=layout)
    bad = tmp_path / "consts.yaml"
    bad.write_text(LAYOUT.replace("  model: my-model", "  modle: my-model"))
    with raises_with(file=bad, key="constants.modle", text="did you mean 'constants.model'?"):
        get_mapping(bad)
    assert main(["-q", "summarize", str(data), "--mapping", str(layout)]) == 2
    assert "unknown key 'anwser'" in capsys.readouterr().err


def test_response_batches_stream_every_layout(tmp_path):
    ev = write_lines(tmp_path / "ev.jsonl", [
        {"idx": q, "gt": "1", "code": [f"r{q}{i}" for i in range(3)], "pred": ["1"] * 3,
         "score": [True, False, True]} for q in range(4)])
    batches = list(response_batches(ev, model="m", benchmark="b", batch_size=5))
    assert [b.num_rows for b in batches] == [5, 5, 2]
    assert batches[0].schema.names == ["model", "benchmark", "question_id", "step",
                                       "sample_idx", "response", "correct", "gold"]
    rows = [r for b in batches for r in b.to_pylist()]
    assert rows[4] == {"model": "m", "benchmark": "b", "question_id": "1", "step": None,
                       "sample_idx": 1, "response": "r11", "correct": False, "gold": "1"}
    canon = write_lines(tmp_path / "s.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": i, "correct": True,
         "response": f"t{i}"} for i in range(3)])
    assert [r["response"] for b in response_batches(canon) for r in b.to_pylist()] == [
        "t0", "t1", "t2"]
    with pytest.raises(ValueError, match="needs a 'response' column"):
        list(response_batches(write_lines(tmp_path / "n.jsonl", [
            {"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 0,
             "correct": True}])))


@pytest.mark.slow
def test_response_batches_carry_tokens_and_finish_reasons_when_the_file_has_them(tmp_path):
    # a nested layout: per sample usage.n and stop (data of _harness, read by hand)
    layout = tmp_path / "my-layout.yaml"
    layout.write_text(LAYOUT)
    rows = [r for b in response_batches(_harness(tmp_path), mapping=layout)
            for r in b.to_pylist()]
    assert [(r["n_tokens"], r["finish_reason"]) for r in rows] == [(10, "stop"), (30, "length"),
                                                                   (5, None)]
    # a samples file: its columns; token_entropy absent from every line is not carried
    canon = write_lines(tmp_path / "s.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": i, "correct": True,
         "response": f"t{i}", **({"n_tokens": 7 + i} if i else {"finish_reason": "length"})}
        for i in range(3)])
    batch = next(response_batches(canon))
    assert batch.schema.names[-2:] == ["n_tokens", "finish_reason"]
    assert batch.column("n_tokens").to_pylist() == [None, 8, 9]
    assert batch.column("finish_reason").to_pylist() == ["length", None, None]
    # an evaluator's file: vLLM's finish_reason and per-choice tokens (the fixture's logprobs)
    chat = Path(__file__).parent / "fixtures" / "evaluators" / "openai-batch" / \
        "chat_output.jsonl"
    rows = [r for b in response_batches(chat, benchmark="b") for r in b.to_pylist()]
    assert [r["finish_reason"] for r in rows][:3] == ["stop", "stop", "length"]
    assert [r["n_tokens"] for r in rows][:3] == [4, 2, 3]
    # a bad value is refused by the rules, naming the line and field
    bad = write_lines(tmp_path / "bad.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 0, "correct": True,
         "response": "t", "n_tokens": -3}])
    with raises_with(file=str(bad), line="line 1", key="n_tokens", value="-3",
                     text="a finite number >= 0"):
        list(response_batches(bad))
