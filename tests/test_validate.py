"""Validation: every bad-input case names the file, the line/row and the field; skip mode
counts what it rejects; validate() lists every problem."""

from __future__ import annotations

import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support import rec, write_lines
from leash_eval.summarize import summarize
from leash_eval.validate import ValidationReport, validate


def raises_naming(path, *parts, **kw):
    with pytest.raises(ValueError) as e:
        summarize(path, **kw)
    msg = str(e.value)
    assert path.name in msg, msg
    for p in parts:
        assert p in msg, f"{p!r} not in {msg!r}"
    return msg


@pytest.mark.slow
def test_malformed_json_names_line(tmp_path):
    p = write_lines(tmp_path / "bad.jsonl", [rec(i=0), rec(i=1), '{"model": "m", "bench',
                                             rec(i=2)])
    raises_naming(p, "line 3", "malformed JSON")


@pytest.mark.slow
def test_missing_required_value_names_line_and_field(tmp_path):
    p = write_lines(tmp_path / "miss.jsonl", [rec(i=0), rec(i=1, correct=None)])
    raises_naming(p, "line 2", "'correct'", "missing")


def test_missing_required_column_names_field(tmp_path):
    p = write_lines(tmp_path / "nomodel.jsonl",
                    [{k: v for k, v in rec(i=i).items() if k != "model"} for i in range(2)])
    raises_naming(p, "'model'", "model=")
    out = summarize(p, model="given")
    assert out.model.tolist() == ["given"]


@pytest.mark.slow
@pytest.mark.parametrize("bad, reason", [(0.5, "boolean-like"), ("yes", "boolean-like"),
                                         ("t", "boolean-like"), ([1], "boolean-like")])
def test_correct_must_be_boolean_like(tmp_path, bad, reason):
    p = write_lines(tmp_path / "corr.jsonl", [rec(i=0), rec(i=1), rec(i=2, correct=bad)])
    raises_naming(p, "line 3", "'correct'", reason, repr(bad))


@pytest.mark.slow
def test_boolean_like_values_accepted(tmp_path):
    vals = [True, False, 1, 0, "TRUE", " false ", "1", "0", 1.0, "True"]
    p = write_lines(tmp_path / "ok.jsonl", [rec(i=i, correct=v) for i, v in enumerate(vals)])
    out = summarize(p)
    assert out.loc[0, "c"] == 6 and out.loc[0, "n"] == 10 and out.loc[0, "first_correct"] == 0


@pytest.mark.slow
def test_wrong_types_name_field(tmp_path):
    p = write_lines(tmp_path / "idx.jsonl", [rec(i=0), rec(i="abc")])
    raises_naming(p, "line 2", "'sample_idx'", "integer")
    p = write_lines(tmp_path / "neg.jsonl", [rec(i=0), rec(i=-1)])
    raises_naming(p, "line 2", "'sample_idx'", ">= 0")
    p = write_lines(tmp_path / "tok.jsonl", [rec(i=0, n_tokens=5), rec(i=1, n_tokens=-3)])
    raises_naming(p, "line 2", "'n_tokens'")
    p = write_lines(tmp_path / "ans.jsonl", [rec(i=0, answer="1"), rec(i=1, answer={"a": 1})])
    raises_naming(p, "line 2", "'answer'")


@pytest.mark.slow
def test_blank_lines_keep_true_line_numbers(tmp_path):
    # fast reader (consistent types): the line is recovered from the object ordinal
    p = write_lines(tmp_path / "blank.jsonl", [rec(i=0), "", "   ", rec(i=1), rec(i=-2)])
    raises_naming(p, "line 5", "'sample_idx'")
    # exact reader (a field changes type, so pyarrow cannot parse it)
    p = write_lines(tmp_path / "blank2.jsonl", [rec(i=0), "", rec(i=1, correct="yes")])
    raises_naming(p, "line 3", "'correct'", "'yes'")


@pytest.mark.slow
def test_duplicates_across_chunks(tmp_path):
    lines = [rec(i=i) for i in range(5)] + [rec(q="q2", i=0), rec(i=3)]
    p = write_lines(tmp_path / "dup.jsonl", lines)
    msg = raises_naming(p, "line 7", "'sample_idx'", "duplicate", chunk_size=2)
    assert "question_id 'q1'" in msg and "sample_idx 3" in msg
    with pytest.warns(UserWarning, match="1 of 7 rows rejected"):
        out = summarize(p, chunk_size=2, on_error="skip")
    prov = out.attrs["provenance"]
    assert prov["rows_rejected"] == 1 and prov["rejected_by_reason"] == {"duplicate": 1}
    assert out.n.tolist() == [5, 1]


def test_parquet_location_is_row_group_and_row(tmp_path):
    t = pa.table({"model": ["m"] * 6, "benchmark": ["b"] * 6, "question_id": ["q"] * 6,
                  "sample_idx": [0, 1, 2, 3, 4, 5],
                  "correct": pa.array([1, 0, 1, 0, 7, 1], pa.int64())})
    p = tmp_path / "rg.parquet"
    pq.write_table(t, p, row_group_size=3)
    raises_naming(p, "row group 1, row 1", "'correct'", "7")


@pytest.mark.slow
def test_csv_location_is_row(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("model,benchmark,question_id,n,c\nm,b,q1,8,3\nm,b,q2,8,9\nm,b,q3,-1,0\n")
    # the line in the file (the header is line 1), as the other text formats
    raises_naming(p, "line 3", "'c'", "<= n")
    rep = validate(p)
    assert [(x.location, x.field, x.reason) for x in rep.problems] == [
        ("line 3", "c", "c_greater_than_n"), ("line 4", "n", "out_of_range")]


@pytest.mark.slow
def test_counts_rules(tmp_path):
    p = write_lines(tmp_path / "counts.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": 1, "n": 4, "c": 2, "first_correct": 1},
        {"model": "m", "benchmark": "b", "question_id": 2, "n": 4, "c": 0, "first_correct": 2},
        {"model": "m", "benchmark": "b", "question_id": 3, "n": 4, "c": 1, "first_correct": 4},
        {"model": "m", "benchmark": "b", "question_id": 1, "n": 4, "c": 1},
        {"model": "m", "benchmark": "b", "question_id": 5, "n": 4, "c": -1},
    ])
    rep = validate(p)
    got = [(x.location, x.field, x.reason) for x in rep.problems]
    assert got == [("line 2", "first_correct", "first_correct_inconsistent"),
                   ("line 3", "first_correct", "first_correct_inconsistent"),
                   ("line 4", "question_id", "duplicate"),  # in file order
                   ("line 5", "c", "out_of_range")]
    assert rep.rows_read == 5 and rep.rows_rejected == 4 and rep.rows_used == 1
    with pytest.raises(ValueError, match="4 problems in .*counts.jsonl"):
        rep.raise_on_error()


@pytest.mark.slow
def test_evaluator_ragged_lists_are_reported_not_padded(tmp_path):
    p = write_lines(tmp_path / "eval.jsonl", [
        {"idx": 0, "code": ["a", "b"], "pred": ["1", "2"], "score": [True, False]},
        {"idx": 1, "code": ["a", "b", "c"], "pred": ["1"], "score": [True]},
    ])
    raises_naming(p, "line 2", "'code'", "same length", model="m", benchmark="b")
    with pytest.warns(UserWarning):
        out = summarize(p, model="m", benchmark="b", on_error="skip")
    assert out.n.tolist() == [2]
    assert out.attrs["provenance"]["rejected_by_reason"] == {"ragged_list": 1}
    assert out.attrs["provenance"]["rows_rejected"] == 1


def test_evaluator_needs_model_and_benchmark(tmp_path):
    p = write_lines(tmp_path / "eval.jsonl", [{"idx": 0, "code": ["a"], "score": [True]}])
    with pytest.raises(ValueError, match="eval.jsonl.*model=") as e:
        summarize(p, benchmark="b")
    assert "evaluator" in str(e.value)


@pytest.mark.slow
def test_nested_bad_sample_names_line_sample_and_field(tmp_path):
    p = write_lines(tmp_path / "probe.jsonl", [
        {"model_name": "m", "qid": 0, "rollouts": [
            {"rollout": 0, "correct": True, "pred_value": 3.0},
            {"rollout": 1, "correct": "maybe", "pred_value": 2.0}]}])
    raises_naming(p, "line 1, sample 1", "'rollouts[1].correct'", "'maybe'", benchmark="b")


@pytest.mark.slow
def test_skip_counts_every_rejection_and_validate_lists_all(tmp_path):
    lines = [rec(i=0), rec(i=1, correct="yes"), "{oops", rec(i=2, sample_idx=None),
             rec(i=3), rec(i=3)]
    lines[3] = {k: v for k, v in rec(i=0).items() if k != "sample_idx"}
    p = write_lines(tmp_path / "many.jsonl", lines)
    rep = validate(p)
    assert isinstance(rep, ValidationReport) and not rep.ok
    assert [(x.location, x.field, x.reason) for x in rep.problems] == [
        ("line 2", "correct", "invalid_bool"), ("line 3", "-", "malformed_json"),
        ("line 4", "sample_idx", "missing_field"), ("line 6", "sample_idx", "duplicate")]
    assert all(x.file.endswith("many.jsonl") for x in rep.problems)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = summarize(p, on_error="skip")
    prov = out.attrs["provenance"]
    assert (prov["rows_read"], prov["rows_used"], prov["rows_rejected"]) == (6, 2, 4)
    assert prov["rejected_by_reason"] == {"invalid_bool": 1, "malformed_json": 1,
                                          "missing_field": 1, "duplicate": 1}
    assert out.n.tolist() == [2]
    clean = write_lines(tmp_path / "clean.jsonl", [rec(i=0), rec(i=1)])
    assert validate(clean).ok


def test_validate_reports_undetectable_file(tmp_path):
    p = write_lines(tmp_path / "odd.jsonl", [{"x": 1}])
    rep = validate(p)
    assert not rep.ok and "odd.jsonl" in str(rep.problems[0])


def test_on_error_parameter_checked(tmp_path):
    p = write_lines(tmp_path / "a.jsonl", [rec()])
    with pytest.raises(ValueError, match="'on_error' parameter"):
        summarize(p, on_error="ignore")
    with pytest.raises(ValueError, match="'chunk_size' parameter"):
        summarize(p, chunk_size=0)
    with pytest.raises(ValueError, match="'na' parameter"):
        summarize(p, na="drop")


@pytest.mark.slow
def test_duplicates_and_rule_problems_come_in_file_order(tmp_path):
    # the docs promise problems in file order; duplicates used to follow every other problem,
    # and on_error="raise" stopped at a later bad row rather than at an earlier duplicate
    import json

    one = {"model": "m", "benchmark": "b", "question_id": "1", "sample_idx": 0, "correct": True}
    lines = [one, one, {**one, "sample_idx": 1, "correct": "x"}, {**one, "sample_idx": 2},
             one, {**one, "sample_idx": 3, "correct": "y"}]
    p = tmp_path / "order.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in lines))
    rep = validate(p)
    assert [(x.location, x.reason) for x in rep.problems] == [
        ("line 2", "duplicate"), ("line 3", "invalid_bool"), ("line 5", "duplicate"),
        ("line 6", "invalid_bool")]
    assert rep.counts_by_reason() == {"duplicate": 2, "invalid_bool": 2}
    with pytest.raises(ValueError, match=r"order\.jsonl: line 2: field 'sample_idx': duplicate"):
        summarize(p)


def test_a_file_without_model_or_benchmark_names_the_options_once(tmp_path, capsys):
    """An {id: verdict} file: one problem naming --model and --benchmark, not two per row."""
    import json

    from _support import cli

    p = tmp_path / "results.json"
    p.write_text(json.dumps({f"q{i}": i % 2 == 0 for i in range(466)}, indent=2))
    rep = validate(p)
    assert len(rep.problems) == 1 and rep.file_problem is not None
    err = rep.file_problem.error
    assert (err.file, err.key) == (str(p), "model")
    code, out, errtext = cli(capsys, "validate", p)
    assert code == 2 and "Traceback" not in errtext
    lines = errtext.strip().splitlines()
    assert len(lines) == 1 and lines[0].count("--model") == 1 and \
        lines[0].count("--benchmark") == 1 and str(p) in lines[0]
    assert out.count("--model") == 1 and "required value is missing" not in out
    # one label given: the other is named alone; both given: clean
    code, _, errtext = cli(capsys, "validate", p, "--model", "m")
    assert code == 2 and "--benchmark" in errtext and "--model" not in errtext
    assert validate(p, model="m", benchmark="b").ok


@pytest.mark.slow
def test_a_wide_per_question_table_is_refused_with_the_reshape_it_needs(tmp_path, capsys):
    """Refused, not read: a column prefix (base, rl) is a side, not a model label. The reshape
    the message gives is run here, and its output is read with the counts of the wide table.
    """
    import subprocess
    import sys

    from _support import cli, cli_error

    wide = tmp_path / "wide.csv"
    wide.write_text("problem,base_n,base_correct,rl_n,rl_correct\nq1,4,2,4,3\nq2,4,0,4,1\n")
    line = cli_error(capsys, "summarize", wide)
    assert str(wide) in line and "base_n/base_correct, rl_n/rl_correct" in line
    with pytest.raises(ValueError) as e:
        validate(wide).raise_on_error()
    assert "python -c" in str(e.value)
    code = line.split('python -c "', 1)[1].split('" and `leash', 1)[0]
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)
    out = summarize(tmp_path / "counts.csv", benchmark="b")
    got = {(m, q): (int(n), int(c)) for m, q, n, c in
           zip(out["model"], out["question_id"], out["n"], out["c"])}
    assert got == {("base", "q1"): (4, 2), ("base", "q2"): (4, 0), ("rl", "q1"): (4, 3),
                   ("rl", "q2"): (4, 1)}
    # other side names and count columns: c
    other = tmp_path / "other.csv"
    other.write_text("question_id,qwen_n,qwen_c,dapo_n,dapo_c\nq1,8,1,8,5\n")
    code, _, err = cli(capsys, "validate", other)
    assert code == 2 and "dapo_n/dapo_c, qwen_n/qwen_c" in err
