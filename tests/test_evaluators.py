"""leash_eval.evaluators: the evaluators' own files as canonical per-sample rows.

The fixtures (tests/fixtures/evaluators/) are written by make_fixtures.py, which follows each
upstream writer (named there). Expected rows and per-question counts below are written out by
hand from the fixture contents, not taken from the reader's output.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import pytest

from leash_eval import evaluators as ev
from leash_eval import readers

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "evaluators"
_spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
mf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mf)

LM = FIXTURES / "lm-eval" / "Qwen__Qwen2.5-7B"
LM_REPEATS = LM / f"samples_gsm8k_cot_self_consistency_{mf.LM_EVAL_DATE}.jsonl"
LM_GSM8K = LM / f"samples_gsm8k_{mf.LM_EVAL_DATE}.jsonl"
LM_PLAIN = LM / f"samples_gsm8k_plain_{mf.LM_EVAL_DATE}.jsonl"
ES = FIXTURES / "evalscope" / "outputs" / "reviews" / "qwen2.5-7b-instruct"
ES_CURRENT = ES / "gsm8k_main.jsonl"
ES_LEGACY = ES / "math_500_Level 1.jsonl"
OA_CHAT = FIXTURES / "openai-batch" / "chat_output.jsonl"
OA_COMPLETIONS = FIXTURES / "openai-batch" / "completions_output.jsonl"


@pytest.fixture
def con():
    c = duckdb.connect()
    yield c
    c.close()


def rows(rel):
    """The relation's rows as dicts, sorted by (question_id, sample_idx)."""
    out = [dict(zip(rel.columns, r)) for r in rel.fetchall()]
    return sorted(out, key=lambda r: (r["question_id"], r["sample_idx"]))


def per_question(rs):
    """(n, c) per question id, counted here in Python."""
    n, c = Counter(), Counter()
    for r in rs:
        n[r["question_id"]] += 1
        c[r["question_id"]] += bool(r["correct"])
    return dict(n), dict(c)


def run_error(con, path, fmt, options=None) -> str:
    """The one-line message of a reader error, whether relation() or the query raises it."""
    try:
        rel = readers.relation(con, path, fmt, options=options or {})
        rel.fetchall()
    except ValueError as exc:
        return str(exc)
    except duckdb.Error as exc:
        return str(ev.translate_error(exc, path))
    raise AssertionError("no error")


def write_lines(path: Path, records) -> Path:
    """JSON lines; a str item is written as it is (a blank or malformed line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return path


def first_record(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.loads(f.readline())


# --------------------------------------------------------------------------------------------
# the fixtures themselves
# --------------------------------------------------------------------------------------------

def test_committed_fixtures_are_what_the_generator_writes():
    for name in mf.JSONL_FIXTURES:
        assert (FIXTURES / name).read_text(encoding="utf-8") == mf.jsonl_text(name), name


def test_interface_constants():
    assert tuple(f.name for f in ev.READERS) == ("lm-eval", "lighteval", "evalscope",
                                                 "openai-batch")
    assert ev.RELATION_COLUMNS == ("line", "model", "benchmark", "question_id", "sample_idx",
                                   "correct", "response", "gold", "answer", "finish_reason",
                                   "n_tokens", "step")


def test_columns_and_types_of_every_reader(con, tmp_path):
    expected = ["BIGINT", "VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "BOOLEAN", "VARCHAR",
                "VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "BIGINT"]
    cases = [(LM_REPEATS, "lm-eval"), (ES_CURRENT, "evalscope"), (ES_LEGACY, "evalscope"),
             (OA_CHAT, "openai-batch"), (mf.write_lighteval_current(tmp_path / "a"), "lighteval"),
             (mf.write_lighteval_flat(tmp_path / "b"), "lighteval")]
    for path, fmt in cases:
        rel = readers.relation(con, path, fmt, options={})
        assert tuple(rel.columns) == ev.RELATION_COLUMNS, path
        assert [str(t) for t in rel.types] == expected, path


# --------------------------------------------------------------------------------------------
# lm-evaluation-harness
# --------------------------------------------------------------------------------------------

def test_lm_eval_repeats_default_filter_keeps_all_repeats(con):
    rs = rows(readers.relation(con, LM_REPEATS, "lm-eval", options={}))
    n, c = per_question(rs)
    assert n == {"0": 3, "1": 3, "2": 3}          # repeats: 3 for each of the 3 documents
    assert c == {"0": 0, "1": 0, "2": 0}          # correct is NULL: nothing counted
    assert all(r["correct"] is None for r in rs)
    assert {r["line"] for r in rs} == {7, 8, 9}   # the `all` filter's records (lines 7-9)
    assert [r["response"] for r in rs[:3]] == [
        "40 + 2 = 42. The answer is 42.", "He has 41. The answer is 41.", "Not sure."]
    # answers: the `all` filter's extraction per repeat; "[invalid]" (no match) -> NULL
    assert [r["answer"] for r in rs] == ["42", "41", None, "56", "56", "54", "15", "15", "15"]
    assert [r["gold"] for r in rs] == ["42"] * 3 + ["56"] * 3 + ["15"] * 3
    assert {r["benchmark"] for r in rs} == {"gsm8k_cot_self_consistency"}  # from the name
    assert {r["model"] for r in rs} == {None}
    assert [r["sample_idx"] for r in rs] == [0, 1, 2] * 3


def test_lm_eval_named_filter_that_keeps_one_output(con):
    rs = rows(readers.relation(con, LM_REPEATS, "lm-eval", options={"filter": "score-first"}))
    assert per_question(rs)[0] == {"0": 3, "1": 3, "2": 3}   # the raw repeats are all there
    assert {r["line"] for r in rs} == {1, 2, 3}
    assert {r["answer"] for r in rs} == {None}   # one filtered output for 3 repeats: no answer


def test_lm_eval_filter_not_in_file(con):
    msg = run_error(con, LM_REPEATS, "lm-eval", {"filter": "strict-match"})
    assert str(LM_REPEATS) in msg and "--filter strict-match" in msg
    assert "score-first, maj@3, all" in msg and "\n" not in msg


def test_lm_eval_ambiguous_file_is_refused_with_its_filters(con):
    msg = run_error(con, LM_GSM8K, "lm-eval")
    assert str(LM_GSM8K) in msg and "\n" not in msg
    assert "strict-match, flexible-extract" in msg and "--filter" in msg


def test_lm_eval_ambiguous_file_with_filter(con):
    rs = rows(readers.relation(con, LM_GSM8K, "lm-eval", options={"filter": "strict-match"}))
    assert per_question(rs)[0] == {"0": 1, "1": 1, "2": 1}
    assert {r["line"] for r in rs} == {1, 2, 3}
    assert {r["answer"] for r in rs} == {None}        # strict-match found nothing: [invalid]
    rs = rows(readers.relation(con, LM_GSM8K, "lm-eval", options={"filter": "flexible-extract"}))
    assert [r["answer"] for r in rs] == ["42", "56", "15"]
    assert {r["line"] for r in rs} == {4, 5, 6}


def test_lm_eval_single_default_filter(con):
    rs = rows(readers.relation(con, LM_PLAIN, "lm-eval", options={"filter": None}))
    assert per_question(rs)[0] == {"0": 2, "1": 2, "2": 2}   # repeats: 2
    # "none" = take_first: its output is the first response itself, not an extracted answer
    assert {r["answer"] for r in rs} == {None}


def test_lm_eval_records_without_filter_key(con, tmp_path):
    # lm-eval before 2024-11 logged no `filter` (lm_eval/evaluator.py, PR #2517)
    recs = [{"doc_id": i, "target": "1", "resps": [["a", "b"]], "filtered_resps": [["1", "2"]]}
            for i in range(2)]
    path = write_lines(tmp_path / "samples_old_2024-05-01T00-00-00.jsonl", recs)
    rs = rows(readers.relation(con, path, "lm-eval", options={}))
    assert per_question(rs)[0] == {"0": 2, "1": 2}
    assert [r["answer"] for r in rs] == ["1", "2", "1", "2"]
    assert {r["benchmark"] for r in rs} == {"old"}
    msg = run_error(con, path, "lm-eval", {"filter": "x"})
    assert "(unnamed)" in msg and "--filter x" in msg


def test_lm_eval_gzipped_and_blank_lines(con, tmp_path):
    lines = ["", *LM_PLAIN.read_text(encoding="utf-8").splitlines()[:2], "   ", ""]
    path = tmp_path / "samples_x_2025-01-01T00-00-00.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    rs = rows(readers.relation(con, path, "lm-eval", options={}))
    assert {r["line"] for r in rs} == {2, 3}   # blank line 1 counts
    assert per_question(rs)[0] == {"0": 2, "1": 2}
    assert {r["benchmark"] for r in rs} == {"x"}


def _lm(doc_id=0, **fields):
    rec = {"doc_id": doc_id, "target": "1", "resps": [["a"]], "filtered_resps": ["a"],
           "filter": "none"}
    rec.update(fields)
    return {k: v for k, v in rec.items() if v is not ...}


@pytest.mark.parametrize("bad, line, needle", [
    (_lm(1, resps=...), 3, "field 'resps' is missing"),
    # a multiple-choice task: one loglikelihood request per choice, [[logprob, is_greedy]]
    (_lm(1, resps=[[["-1.2", "False"]], [["-0.3", "True"]]]), 3, "field 'resps' must hold one"),
    # one list level too shallow: resps = [r1, r2] instead of [[r1, r2]]
    (_lm(1, resps=["a", "b"]), 3, "field 'resps' must hold one"),
    (_lm(1, resps=[["a", 7]]), 3, "field 'resps[0]' must be a non-empty list of response"),
    (_lm(1, resps=[[]]), 3, "field 'resps[0]' must be a non-empty list"),
    (_lm(1, resps=[[["a"]]]), 3, "field 'resps[0]'"),
    (_lm(doc_id=[1]), 3, "field 'doc_id' must be an integer or a string"),
    ('{"doc_id": 1, "resps": [["a"]', 3, "malformed JSON"),
])
def test_lm_eval_bad_records_name_file_line_field(con, tmp_path, bad, line, needle):
    path = write_lines(tmp_path / "samples_t_2025-01-01T00-00-00.jsonl", [_lm(0), "", bad])
    msg = run_error(con, path, "lm-eval")
    assert msg.startswith(f"{path}: line {line}: "), msg
    assert needle in msg and "\n" not in msg


# --------------------------------------------------------------------------------------------
# lighteval
# --------------------------------------------------------------------------------------------

def test_lighteval_current_layout(con, tmp_path):
    path = mf.write_lighteval_current(tmp_path)
    rs = rows(readers.relation(con, path, "lighteval", options={}))
    n, c = per_question(rs)
    assert n == {"0": 4, "1": 4, "2": 4}            # num_samples = 4 for each of 3 documents
    assert c == {"0": 0, "1": 0, "2": 0} and {r["correct"] for r in rs} == {None}
    assert [r["gold"] for r in rs] == ["2"] * 4 + ["6"] * 4 + ["5"] * 4   # choices[gold_index]
    assert [r["response"] for r in rs[:4]] == ["\\boxed{2}", "\\boxed{3}", "so \\boxed{2}", "2"]
    assert [r["n_tokens"] for r in rs] == [3, 3, 4, 1, 3, 3, 3, 1, 3, 3, 3, 3]
    assert [r["line"] for r in rs] == [1] * 4 + [2] * 4 + [3] * 4
    assert {r["model"] for r in rs} == {"Qwen/Qwen2.5-Math-1.5B"}   # details/<model>/<date>/
    assert {r["benchmark"] for r in rs} == {"lighteval|math_500|0"}   # doc.task_name


def test_lighteval_flat_layout(con, tmp_path):
    path = mf.write_lighteval_flat(tmp_path)
    rs = rows(readers.relation(con, path, "lighteval", options={}))
    assert per_question(rs)[0] == {"0": 2, "1": 2, "2": 2}   # row positions as question ids
    assert [r["gold"] for r in rs] == ["2", "2", "6", "6", "5", "5"]
    assert [r["response"] for r in rs[:2]] == ["\\boxed{2}", "\\boxed{3}"]
    assert [r["n_tokens"] for r in rs] == [3, 3, 3, 3, 3, 3]
    assert {r["benchmark"] for r in rs} == {"lighteval|math_500|0"}   # from the file name


def test_lighteval_outside_its_folder_layout(con, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "details.parquet"
    pq.write_table(pa.Table.from_pylist(mf.lighteval_current_rows()), path)
    rs = rows(readers.relation(con, path, "lighteval", options={}))
    assert {r["model"] for r in rs} == {None}
    assert {r["benchmark"] for r in rs} == {"lighteval|math_500|0"}


def test_lighteval_bad_files(con, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # before 2025-02-25 lighteval wrote str(v) for every field
    flat = [{k: str(v) for k, v in r.items()} for r in mf.lighteval_flat_rows()]
    p1 = tmp_path / "old.parquet"
    pq.write_table(pa.Table.from_pylist(flat), p1)
    msg = run_error(con, p1, "lighteval")
    assert msg.startswith(f"{p1}: column 'predictions'") and "Python text" in msg

    # a document without generations (a loglikelihood task: text == [])
    cur = mf.lighteval_current_rows()
    cur[1]["model_response"]["text"] = []
    p2 = tmp_path / "empty.parquet"
    pq.write_table(pa.Table.from_pylist(cur), p2)
    msg = run_error(con, p2, "lighteval")
    assert msg.startswith(f"{p2}: line 2: field 'model_response.text' is empty"), msg
    assert "\n" not in msg

    # text as one string, not a list of samples
    cur = mf.lighteval_current_rows()
    for r in cur:
        r["model_response"]["text"] = r["model_response"]["text"][0]
    p3 = tmp_path / "flat_text.parquet"
    pq.write_table(pa.Table.from_pylist(cur), p3)
    msg = run_error(con, p3, "lighteval")
    assert msg.startswith(f"{p3}: field 'model_response.text' is string, not a list")

    p4 = tmp_path / "other.parquet"
    pq.write_table(pa.table({"question_id": ["1"], "n": [3]}), p4)
    msg = run_error(con, p4, "lighteval")
    assert "not a lighteval details file" in msg and "question_id" in msg


# --------------------------------------------------------------------------------------------
# evalscope
# --------------------------------------------------------------------------------------------

def test_evalscope_current_layout(con):
    rs = rows(readers.relation(con, ES_CURRENT, "evalscope", options={}))
    n, c = per_question(rs)
    assert n == {"0": 2, "1": 2, "2": 2}            # repeats = 2, group_id per question
    assert c == {"0": 1, "1": 2, "2": 0}            # acc 1/0, 1/1, 0/0
    assert [r["correct"] for r in rs] == [True, False, True, True, False, False]
    assert [r["answer"] for r in rs] == ["5", "6", "5", "5", "6", "8"]
    assert [r["gold"] for r in rs] == ["5", "5", "5", "5", "9", "9"]
    assert rs[0]["response"] == "2+3=5. \\boxed{5}"
    assert {r["model"] for r in rs} == {"qwen2.5-7b-instruct"}   # reviews/<model>/
    assert {r["benchmark"] for r in rs} == {"gsm8k_main"}         # <benchmark>_<subset>


def test_evalscope_legacy_layout_ranks_sample_ids(con):
    rs = rows(readers.relation(con, ES_LEGACY, "evalscope", options={}))
    n, c = per_question(rs)
    assert n == {"0": 2, "1": 2, "2": 2}
    assert c == {"0": 1, "1": 2, "2": 0}
    # lines are in the order 1, 0, 3, 2, 5, 4 of sample_id: sample 0 of question 0 is line 2
    assert [(r["question_id"], r["sample_idx"], r["line"]) for r in rs] == [
        ("0", 0, 2), ("0", 1, 1), ("1", 0, 4), ("1", 1, 3), ("2", 0, 6), ("2", 1, 5)]
    assert [r["correct"] for r in rs] == [True, False, True, True, False, False]
    assert {r["benchmark"] for r in rs} == {"math_500_Level 1"}


def _es(i, value, status="success", main="acc", gen=True, **extra):
    score = {"value": value, "status": status, "prediction": "p", "extracted_prediction": "a",
             "main_score_name": main}
    ss = {"score": score, "sample_id": i, "group_id": i // 2, "sample_metadata": {}}
    if gen:
        ss["generation_index"] = i % 2
    rec = {"index": i, "target": "t", "sample_score": ss}
    rec.update(extra)
    return rec


def test_evalscope_verdicts(con, tmp_path):
    recs = [_es(0, {"acc": True}), _es(1, {"acc": 0}), _es(2, {"other": 1.0, "acc": 1}),
            _es(3, {}, status="parse_error"), _es(4, {"f1": 1.0, "acc": 0.0}, main=None),
            _es(5, {"acc": None})]
    path = write_lines(tmp_path / "r.jsonl", recs)
    rs = rows(readers.relation(con, path, "evalscope", options={}))
    # main_score_name picks acc; without it the first key (f1); no usable score -> NULL
    assert [r["correct"] for r in rs] == [True, False, True, None, True, None]
    assert {r["model"] for r in rs} == {None} and {r["benchmark"] for r in rs} == {None}


@pytest.mark.parametrize("bad, needle", [
    (_es(1, {"acc": 0.5}),
     "score 'sample_score.score.value.acc' = 0.5 is not a verdict"),
    (_es(1, {"acc": "yes"}), "is not a verdict"),
    (_es(1, [1]), "field 'sample_score.score.value' must be an object"),
    ({"index": 1, "target": "t", "sample_score": "x"}, "field 'sample_score' must be an object"),
    (_es(1, {"acc": 1}, gen=False), "field 'sample_score.generation_index' must be an integer"),
])
def test_evalscope_bad_records(con, tmp_path, bad, needle):
    path = write_lines(tmp_path / "r.jsonl", [_es(0, {"acc": 1}), bad])
    msg = run_error(con, path, "evalscope")
    assert msg.startswith(f"{path}: line 2: "), msg
    assert needle in msg and "\n" not in msg


def test_evalscope_missing_ids(con, tmp_path):
    bad = _es(1, {"acc": 1})
    del bad["sample_score"]["group_id"], bad["sample_score"]["sample_id"]
    path = write_lines(tmp_path / "r.jsonl", [_es(0, {"acc": 1}), bad])
    msg = run_error(con, path, "evalscope")
    assert msg.startswith(f"{path}: line 2: field 'sample_score.group_id' (or 'sample_id')")


# --------------------------------------------------------------------------------------------
# vLLM / OpenAI batch output
# --------------------------------------------------------------------------------------------

def test_openai_batch_chat_choices_and_custom_ids(con):
    rs = rows(readers.relation(con, OA_CHAT, "openai-batch", options={}))
    n, c = per_question(rs)
    assert n == {"q0": 3, "q1": 3, "q2": 2}   # n=3 choices; q2#0 and q2#1 with n=1 each
    assert c == {"q0": 0, "q1": 0, "q2": 0} and {r["correct"] for r in rs} == {None}
    assert [r["sample_idx"] for r in rs] == [0, 1, 2, 0, 1, 2, 0, 1]
    # per-choice tokens from logprobs (q0), none without logprobs when n > 1 (q1: usage is
    # the sum over choices), usage.completion_tokens for n = 1 (q2)
    assert [r["n_tokens"] for r in rs] == [4, 2, 3, None, None, None, 11, 64]
    assert [r["finish_reason"] for r in rs] == ["stop", "stop", "length", "stop", "stop",
                                                "stop", "stop", "length"]
    assert rs[0]["response"] == "2+2 = \\boxed{4}" and rs[7]["response"] == "\\boxed{8}"
    assert [r["line"] for r in rs] == [1, 1, 1, 2, 2, 2, 3, 4]
    assert {r["model"] for r in rs} == {"Qwen/Qwen2.5-Math-7B"}
    assert {r["benchmark"] for r in rs} == {None} and {r["gold"] for r in rs} == {None}


def test_openai_batch_completions(con):
    rs = rows(readers.relation(con, OA_COMPLETIONS, "openai-batch", options={}))
    assert [(r["question_id"], r["sample_idx"], r["response"], r["n_tokens"]) for r in rs] == [
        ("gsm8k-7", 0, " 42", 2), ("gsm8k-7", 1, " 41", 1)]


def test_the_rescore_hint_carries_what_rescore_will_need():
    # an OpenAI batch output names neither benchmark nor gold (the model is its "model" field):
    # the command the message suggests must run as written, once the placeholders are filled
    from leash_eval.summarize import summarize

    with pytest.raises(ValueError) as e:
        summarize(OA_CHAT)
    assert (f"run `leash rescore {OA_CHAT} --benchmark BENCHMARK --gold GOLD --out "
            "rescored.parquet` first") in str(e.value)
    with pytest.raises(ValueError) as e:
        summarize(OA_CHAT, benchmark="gsm8k")
    assert f"`leash rescore {OA_CHAT} --benchmark gsm8k --gold GOLD --out" in str(e.value)


def test_openai_batch_custom_id_suffix_offsets_choices(con, tmp_path):
    line = json.loads(OA_CHAT.read_text(encoding="utf-8").splitlines()[1])   # q1, n = 3
    a, b = dict(line, custom_id="17#0"), dict(line, custom_id="17#3")
    c = dict(line, custom_id="a#b")          # not "#<digits>": the whole id is the question
    rs = rows(readers.relation(con, write_lines(tmp_path / "o.jsonl", [a, b, c]), "openai-batch",
                          options={}))
    assert [(r["question_id"], r["sample_idx"]) for r in rs] == [
        ("17", 0), ("17", 1), ("17", 2), ("17", 3), ("17", 4), ("17", 5),
        ("a#b", 0), ("a#b", 1), ("a#b", 2)]


def test_openai_batch_failed_request(con, tmp_path):
    ok = json.loads(OA_CHAT.read_text(encoding="utf-8").splitlines()[0])
    # run_batch.make_error_request_output: status 400, no body, the error text
    failed = {"id": "vllm-x", "custom_id": "q9",
              "response": {"status_code": 400, "request_id": "vllm-batch-x", "body": None},
              "error": "The model does not support Chat Completions API"}
    path = write_lines(tmp_path / "o.jsonl", [ok, failed])
    msg = run_error(con, path, "openai-batch")
    assert msg.startswith(f"{path}: line 2: the request failed (status 400; error "), msg
    assert "does not support Chat Completions" in msg and "\n" not in msg


@pytest.mark.parametrize("mutate, needle", [
    (lambda r: r.update(custom_id=5), "field 'custom_id' must be a string"),
    (lambda r: r["response"]["body"].pop("choices"), "field 'response.body.choices' must be"),
    (lambda r: r["response"]["body"].update(choices=[]), "field 'response.body.choices'"),
    (lambda r: r["response"]["body"]["choices"][0].update(index="x"),
     "field 'choices[0].index' must be an integer"),
])
def test_openai_batch_bad_records(con, tmp_path, mutate, needle):
    good = json.loads(OA_CHAT.read_text(encoding="utf-8").splitlines()[0])
    bad = json.loads(OA_CHAT.read_text(encoding="utf-8").splitlines()[2])
    mutate(bad)
    path = write_lines(tmp_path / "o.jsonl", [good, bad])
    msg = run_error(con, path, "openai-batch")
    assert msg.startswith(f"{path}: line 2: "), msg
    assert needle in msg and "\n" not in msg


# --------------------------------------------------------------------------------------------
# detection, formats and options
# --------------------------------------------------------------------------------------------

def test_detect_picks_the_reader_from_keys(tmp_path):
    for path, fmt in [(LM_REPEATS, "lm-eval"), (LM_GSM8K, "lm-eval"), (ES_CURRENT, "evalscope"),
                      (ES_LEGACY, "evalscope"), (OA_CHAT, "openai-batch"),
                      (OA_COMPLETIONS, "openai-batch")]:
        first = first_record(path)
        assert readers.detect_record(path, set(first), first) == fmt, path
    import pyarrow.parquet as pq

    for path in (mf.write_lighteval_current(tmp_path / "a"),
                 mf.write_lighteval_flat(tmp_path / "b")):
        assert readers.detect_record(path, set(pq.read_schema(path).names), None) == "lighteval"


def test_detect_leaves_other_layouts_alone():
    p = Path("x.jsonl")
    samples = {"model": "m", "benchmark": "b", "question_id": "1", "sample_idx": 0,
               "correct": True, "response": "text", "custom_id": "1"}
    # response is text, not an object
    assert readers.detect_record(p, set(samples), samples) is None
    counts = {"question_id": "1", "n": 4, "c": 1}
    assert readers.detect_record(p, set(counts), counts) is None
    qwen = {"idx": 0, "gt": "1", "code": ["a"], "pred": ["1"], "score": [True]}
    assert readers.detect_record(p, set(qwen), qwen) is None
    assert readers.detect_record(Path("x.parquet"), {"question_id", "sample_idx", "correct"},
                                 None) is None
    # lm-eval keys in a Parquet file, lighteval columns in a JSON record: neither
    assert readers.detect_record(Path("x.parquet"), {"doc_id", "resps", "filtered_resps"},
                                 None) is None
    rec = {"doc": {}, "model_response": {}, "metric": {}}
    assert readers.detect_record(p, set(rec), rec) is None
    es = {"index": 0, "sample_score": {"no_score": 1}}
    assert readers.detect_record(p, set(es), es) is None


def test_detect_refuses_a_record_of_two_layouts():
    rec = first_record(LM_PLAIN) | first_record(OA_CHAT)
    with pytest.raises(ValueError) as e:
        readers.detect_record(Path("both.jsonl"), set(rec), rec)
    msg = str(e.value)
    assert msg.startswith("both.jsonl: ") and "lm-eval, openai-batch" in msg and "--fmt" in msg


def test_unknown_format_and_options(con):
    with pytest.raises(ValueError, match=r"--fmt lmeval is not a format with a reader of its "
                                         r"own; those: lm-eval, lighteval, evalscope, "
                                         r"openai-batch, verl"):
        readers.relation(con, LM_PLAIN, "lmeval", options={})
    with pytest.raises(ValueError, match=r"--filter does not apply to --fmt evalscope "
                                         r"\(its options: none\)"):
        readers.relation(con, ES_CURRENT, "evalscope", options={"filter": "x"})
    with pytest.raises(ValueError, match=r"--shots does not apply to --fmt lm-eval "
                                         r"\(its options: --filter\)"):
        readers.relation(con, LM_PLAIN, "lm-eval", options={"shots": 3})


def test_not_utf8_names_the_line(con, tmp_path):
    path = tmp_path / "r.jsonl"
    good = json.dumps(_es(0, {"acc": 1})).encode()
    path.write_bytes(good + b"\n" + good.replace(b'"t"', b'"\xff"') + b"\n")
    msg = run_error(con, path, "evalscope")
    assert msg == f"{path}: line 2: text that is not valid UTF-8; leash reads evaluator files " \
                  "as UTF-8 JSON lines."


def test_a_line_too_long_is_named(con, tmp_path):
    path = tmp_path / "r.jsonl"
    long = _es(1, {"acc": 1}, target="x" * (ev._MAX_LINE + 10))
    write_lines(path, [_es(0, {"acc": 1}), long])
    msg = run_error(con, path, "evalscope")
    assert msg == f"{path}: line 2: a line longer than 8 MiB, the most leash reads in one JSON " \
                  "line."


def test_relation_is_lazy(con, tmp_path):
    """A record of the wrong layout does not stop building the relation, only running it."""
    recs = [_lm(i) for i in range(2000)] + [_lm(2000, resps=...)]
    path = write_lines(tmp_path / "samples_t_2025-01-01T00-00-00.jsonl", recs)
    rel = readers.relation(con, path, "lm-eval", options={})   # the pre-scan reads filters only
    assert tuple(rel.columns) == ev.RELATION_COLUMNS
    with pytest.raises(duckdb.Error):
        rel.fetchall()
    msg = run_error(con, path, "lm-eval")
    assert msg.startswith(f"{path}: line 2001: field 'resps' is missing")


def test_line_numbers_count_blank_lines(con, tmp_path):
    recs = []
    expected = defaultdict(int)
    for i in range(50):
        if i % 7 == 3:
            recs.append("")
        recs.append(_lm(i))
        expected[str(i)] = len(recs)
    path = write_lines(tmp_path / "samples_t_2025-01-01T00-00-00.jsonl", recs)
    rs = rows(readers.relation(con, path, "lm-eval", options={}))
    assert {r["question_id"]: r["line"] for r in rs} == dict(expected)
