"""Bad input files: one clear error (or note), nothing lost, doubled or invented.

Every case is checked through the API (ValueError naming the file and the place) and, where a
command reads it, through the CLI (one line on stderr, exit status 2, no traceback). One line
per bad-input class, and the test that covers it:

1. huge sample_idx (3e9, 2**40), memory of the rows -- test_huge_sample_idx_costs_memory_of_rows
   a real duplicate still caught -- test_duplicates_still_caught_dense_and_sparse
2. truncated / corrupt .gz or Parquet -- test_truncated_gzip_names_file_and_last_complete_line
3. invalid summary files (c > n, n = 0) -- test_summary_files_are_validated_like_counts
4. the same file twice, or a copy -- test_same_evaluator_file_twice_or_a_copy_is_refused
   duplicate rows, both named -- test_duplicates_name_both_occurrences_in_every_format
5. a misspelled / unknown column -- test_unknown_columns_are_noted_with_did_you_mean
6. a bad CSV row (values, field count) -- test_csv_bad_rows_name_line_and_field_and_skip_counts_them
7. an integer beyond int64 -- test_integer_beyond_int64_is_too_large_without_warning
   thousands of digits -- test_integers_of_thousands_of_digits_name_file_line_and_field
   shown as written (digits, not 1e+20) -- test_too_large_values_are_shown_as_written
8. no data rows, in any format -- test_no_data_rows_is_an_error_in_every_format
9. first_correct missing where needed -- test_missing_first_correct_says_what_to_do
10. the same model as base and RLVR -- test_same_model_twice_is_refused
    a FIFO or a directory as FILE -- test_fifo_and_directory_are_refused
    CLI messages name options, not keywords -- test_cli_messages_name_options_not_keywords
11. many malformed CSV rows: linear cost -- test_many_malformed_csv_rows_cost_one_cleaning_per_block
12. a byte that is not UTF-8, in any format -- test_a_bad_utf8_byte_is_one_bad_row_in_every_format
    a rule's error is not an unreadable file -- test_an_error_of_the_rules_is_not_an_unreadable_file
13. no file left open -- test_naming_a_line_of_an_earlier_csv_file_leaves_no_file_open
14. rows in the order read -- test_load_counts_keeps_the_rows_of_a_summary_in_file_order
15. every row rejected (skip) -- test_every_row_rejected_is_an_error_and_nothing_is_written
16. work done once -- test_read_summary_reads_its_file_once_and_files_are_checked_once
"""

from __future__ import annotations

import json
import re
import tracemalloc
import warnings

import pytest

from _support import cli, cli_error, raises_with, rec, write_lines
from leash_eval.cli import main
from leash_eval.summarize import summarize
from leash_eval.validate import validate


# --------------------------------------------------------------------------------------------
# 1. duplicate detection costs memory proportional to the rows, not to the largest index
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("big", [3_000_000_000, 2**40])
def test_huge_sample_idx_costs_memory_of_rows(tmp_path, big):
    p = write_lines(tmp_path / "huge.jsonl", [rec(i=0), rec(i=big)])
    validate(write_lines(tmp_path / "warm.jsonl", [rec(i=0)]))  # imports outside the measure
    tracemalloc.start()
    try:
        out = summarize(p)
        report = validate(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.n.tolist() == [2] and out.first_correct.tolist() == [0]
    assert report.ok and report.rows_used == 2
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB for a two-line file"


@pytest.mark.slow
def test_duplicates_still_caught_dense_and_sparse(tmp_path):
    big = 2**40
    # sparse indices: the duplicate of 2**40 is found, across chunks
    p = write_lines(tmp_path / "sparse.jsonl", [rec(i=0), rec(i=big), rec(i=5), rec(i=big)])
    with pytest.raises(ValueError, match=r"sparse\.jsonl: line 4: .*duplicate"):
        summarize(p, chunk_size=1)
    rep = validate(p, chunk_size=2)
    assert rep.rows_rejected == 1 and rep.counts_by_reason() == {"duplicate": 1}
    # dense indices first, then one far index (the check switches representation), then a
    # duplicate of a dense index: still found
    lines = [rec(i=i) for i in range(100)] + [rec(i=10**12), rec(i=42), rec(i=10**12)]
    p = write_lines(tmp_path / "mixed.jsonl", lines)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = summarize(p, on_error="skip", chunk_size=7)
    assert out.n.tolist() == [101]
    prov = out.attrs["provenance"]
    assert (prov["rows_read"], prov["rows_used"], prov["rows_rejected"]) == (103, 101, 2)
    assert prov["rejected_by_reason"] == {"duplicate": 2}


# --------------------------------------------------------------------------------------------
# 7. integers beyond int64 are "too large", in every reader, without a RuntimeWarning
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_integer_beyond_int64_is_too_large_without_warning(tmp_path, capsys):
    counts = write_lines(tmp_path / "n1e20.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": "q", "n": 1e20, "c": 1}])
    # the exact line-by-line reader (a piece pyarrow cannot parse) sees a Python int
    slow = write_lines(tmp_path / "slow.jsonl", [
        '{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": '
        '99999999999999999999, "correct": true}', '{"broken'])
    csv = tmp_path / "big.csv"
    csv.write_text("model,benchmark,question_id,n,c\nm,b,q,4,1\nm,b,r,99999999999999999999,1\n")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    par = tmp_path / "u64.parquet"
    pq.write_table(pa.table({"model": ["m"], "benchmark": ["b"], "question_id": ["q"],
                             "sample_idx": pa.array([2**64 - 1], pa.uint64()),
                             "correct": [True]}), par)
    for path, where, field in ((counts, "line 1", "n"), (slow, "line 1", "sample_idx"),
                               (csv, "line 3", "n"), (par, "row group 0, row 0", "sample_idx")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError) as e:
                summarize(path)
        msg = str(e.value)
        assert f"{path.name}: {where}: field '{field}': too large" in msg, msg
        assert "must be >=" not in msg
        line = cli_error(capsys, "summarize", path)
        assert "too large" in line and path.name in line


# --------------------------------------------------------------------------------------------
# 6. CSV: a bad row names its line and field, and --on-error skip rejects only that row
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_csv_bad_rows_name_line_and_field_and_skip_counts_them(tmp_path, capsys):
    p = tmp_path / "mix.csv"
    p.write_text("model,benchmark,question_id,sample_idx,correct,response\n"
                 'm,b,q,0,true,"two\nlines"\n'          # record 2, lines 2-3
                 "\n"                                   # blank line 4: not a record
                 "m,b,q,1,maybe,x\n"                    # line 5: bad value
                 "m,b,q,2,true,x,extra\n"               # line 6: one field too many
                 "m,b,q,3,true,y\n"
                 "m,b,q,99999999999999999999,true,z\n"  # line 8: beyond int64
                 "m,b,q,5\n")                           # line 9: too few fields
    with pytest.raises(ValueError, match=r"mix\.csv: line 5: field 'correct'"):
        summarize(p)
    report = validate(p)
    assert [(x.location, x.field, x.reason) for x in report.problems] == [
        ("line 5", "correct", "invalid_bool"), ("line 6", "-", "malformed_csv"),
        ("line 8", "sample_idx", "out_of_range"), ("line 9", "-", "malformed_csv")]
    assert "7 fields where the header has 6" in str(report.problems[1])
    assert (report.rows_read, report.rows_used, report.rows_rejected) == (6, 2, 4)
    with pytest.warns(UserWarning, match="4 of 6 rows rejected"):
        out = summarize(p, on_error="skip")
    assert out.n.tolist() == [2]
    prov = out.attrs["provenance"]
    assert prov["rejected_by_reason"] == {"invalid_bool": 1, "malformed_csv": 2,
                                          "out_of_range": 1}
    line = cli_error(capsys, "summarize", p)
    assert line.startswith("leash summarize: error: ") and "mix.csv: line 5" in line
    code, out_text, _ = cli(capsys, "summarize", p, "--on-error", "skip", "--json")
    assert code == 0 and json.loads(out_text)[0]["samples"] == 2
    # a structural error alone (the first row) is reported before later value problems
    q = tmp_path / "first.csv"
    q.write_text("model,benchmark,question_id,sample_idx,correct\nm,b,q,0\nm,b,q,1,maybe\n")
    with pytest.raises(ValueError, match=r"first\.csv: line 2: .*4 fields where the header"):
        summarize(q)


# --------------------------------------------------------------------------------------------
# 2. a truncated or corrupt file is named, with its last complete line
# --------------------------------------------------------------------------------------------
def test_truncated_gzip_names_file_and_last_complete_line(tmp_path, capsys):
    import gzip
    import zlib

    from leash_eval.summarize import load_counts

    data = "".join(json.dumps(rec(q=str(i % 7), i=i // 7)) + "\n" for i in range(5000))
    packed = gzip.compress(data.encode())
    p = tmp_path / "cut.jsonl.gz"
    p.write_bytes(packed[: len(packed) // 2])
    complete = zlib.decompressobj(31).decompress(p.read_bytes()).count(b"\n")
    assert 0 < complete < 5000
    want = "cut.jsonl.gz: the compressed file is truncated or corrupt"
    for read in (summarize, load_counts, lambda x: validate(x).raise_on_error()):
        with pytest.raises(ValueError, match=want) as e:
            read(p)
        assert f"the last complete line is line {complete}." in str(e.value)
    assert validate(p).file_problem.reason == "unreadable_file"
    for command in ("validate", "summarize", "passk"):
        line = cli_error(capsys, command, p)
        assert want in line and f"line {complete}" in line
    # the same file as CSV (read by Python's csv module, which raised a bare EOFError)
    csv_data = "model,benchmark,question_id,sample_idx,correct\n" + "".join(
        f"m,b,{i % 7},{i // 7},true\n" for i in range(5000))
    packed = gzip.compress(csv_data.encode())
    q = tmp_path / "cut.csv.gz"
    q.write_bytes(packed[: len(packed) // 2])
    complete = zlib.decompressobj(31).decompress(q.read_bytes()).count(b"\n")
    for command in ("validate", "summarize", "passk"):
        line = cli_error(capsys, command, q)
        assert "cut.csv.gz: the compressed file is truncated or corrupt" in line, line
        assert f"the last complete line is line {complete}." in line, line
    # not gzip at all, a nested layout, and a cut Parquet file
    junk = tmp_path / "junk.jsonl.gz"
    junk.write_bytes(b"plain text\n")
    assert "junk.jsonl.gz: the compressed file is truncated" in cli_error(capsys, "summarize",
                                                                            junk)
    ev = tmp_path / "ev.jsonl.gz"
    ev.write_bytes(gzip.compress(b"".join(
        json.dumps({"idx": i, "score": [True] * 50, "pred": ["1"] * 50}).encode() + b"\n"
        for i in range(300)))[:1500])
    with pytest.raises(ValueError, match="truncated") as info:
        summarize(ev, fmt="evaluator", model="m", benchmark="b")
    e = info.value  # the file, and its last complete line
    assert e.file == ev and 0 < e.line < 300 and f"line {e.line}" in str(e)
    par = tmp_path / "cut.parquet"
    summarize(write_lines(tmp_path / "s.jsonl", [rec()]), out=par)
    par.write_bytes(par.read_bytes()[:-40])
    for command in ("validate", "summarize", "support"):
        line = cli_error(capsys, command, par, *(("--base", "m", "--rl", "m")
                                                  if command == "support" else ()))
        assert "cut.parquet: cannot read the file" in line, line


# --------------------------------------------------------------------------------------------
# 8. an input with no data rows is an error naming the file, in every format
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_no_data_rows_is_an_error_in_every_format(tmp_path, capsys):
    import pandas as pd

    header = tmp_path / "header.csv"
    header.write_text("model,benchmark,question_id,sample_idx,correct\n")
    zero = tmp_path / "zero.parquet"
    pd.DataFrame({"model": pd.Series([], dtype=object), "benchmark": pd.Series([], dtype=object),
                  "question_id": pd.Series([], dtype=object),
                  "sample_idx": pd.Series([], dtype="int64"),
                  "correct": pd.Series([], dtype=bool)}).to_parquet(zero)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n  \n")
    empty_csv = tmp_path / "empty.csv"
    empty_csv.write_text("")
    for path in (header, zero, empty, blank, empty_csv):
        with pytest.raises(ValueError, match=f"{path.name} has no data rows"):
            summarize(path)
        rep = validate(path)
        assert rep.file_problem.reason == "no_rows", rep
        for command in ("validate", "summarize", "passk"):
            assert f"{path.name} has no data rows" in cli_error(capsys, command, path)
    # also with the format given (no detection), and for an evaluator file
    with pytest.raises(ValueError, match="blank.jsonl has no data rows"):
        summarize(blank, fmt="evaluator", model="m", benchmark="b")


# --------------------------------------------------------------------------------------------
# 10. only regular files are read: a FIFO would block forever
# --------------------------------------------------------------------------------------------
def test_fifo_and_directory_are_refused(tmp_path, capsys):
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for path, what in ((fifo, "is a FIFO (named pipe), not a regular file"),
                       (tmp_path, "is a directory, not a regular file")):
        with pytest.raises(ValueError, match=re.escape(what)):
            summarize(path)
        assert validate(path).file_problem.reason == "not_a_regular_file"
        for command in ("validate", "summarize", "passk", "rescore"):
            assert what in cli_error(capsys, command, path)


# --------------------------------------------------------------------------------------------
# 3. summary files are checked with the counts rules, and leash validate accepts them
# --------------------------------------------------------------------------------------------
def _summary_files(tmp_path):
    from leash_eval.summarize import write_summary

    s = write_lines(tmp_path / "s.jsonl", [
        rec(q=str(q), i=i, correct=(i + q) % 3 == 0, model=m, answer=str(i % 2))
        for m in ("base", "rl") for q in range(3) for i in range(8)])
    good = tmp_path / "good.parquet"
    frame = summarize(s, out=good)
    bad = frame.copy()
    bad.loc[0, "c"] = 9                      # c > n
    bad.loc[1, ["n", "c", "first_correct"]] = [0, 0, -1]  # n = 0
    write_summary(bad, tmp_path / "bad.parquet")
    return frame, good, tmp_path / "bad.parquet"


@pytest.mark.slow
def test_summary_files_are_validated_like_counts(tmp_path, capsys):
    import pandas as pd

    from leash_eval.summarize import load_counts, read_summary

    frame, good, bad = _summary_files(tmp_path)
    rep = validate(bad)
    assert rep.format == "summary"
    assert [(p.location, p.field, p.reason) for p in rep.problems] == [
        ("row group 0, row 0", "c", "c_greater_than_n"),
        ("row group 0, row 1", "n", "out_of_range")]
    assert (rep.rows_read, rep.rows_used, rep.rows_rejected) == (6, 4, 2)
    for read in (load_counts, read_summary):
        with pytest.raises(ValueError, match="must be <= n") as info:
            read(bad)
        e = info.value
        assert (e.file, e.line, e.key, e.value) == (str(bad), "row group 0, row 0", "c", "9")
    # the support table no longer prints k "0-8" and a NaN epsilon: it stops
    line = cli_error(capsys, "support", bad, "--base", "base", "--rl", "rl")
    assert "bad.parquet: row group 0, row 0: field 'c': must be <= n" in line
    code, out, _ = cli(capsys, "validate", bad)
    assert code == 1 and "[summary]: 6 rows read, 4 used, 2 rejected" in out
    code, out, _ = cli(capsys, "validate", good)
    assert code == 0 and "[summary]" in out
    # a good summary loads exactly as written; skipping drops only the bad rows, which keep
    # nothing of theirs, and the good rows keep their answers and tokens
    pd.testing.assert_frame_equal(load_counts(good), frame)
    with pytest.warns(UserWarning, match="2 of 6 rows rejected"):
        kept = load_counts(bad, on_error="skip")
    pd.testing.assert_frame_equal(kept, frame.iloc[2:].reset_index(drop=True))
    assert kept.attrs["provenance"]["files"][0]["stored_provenance"]["rows_read"] == 48


# --------------------------------------------------------------------------------------------
# 4. the same samples twice are refused in every format, naming both occurrences
# --------------------------------------------------------------------------------------------
def test_same_evaluator_file_twice_or_a_copy_is_refused(tmp_path, capsys):
    import shutil

    ev = write_lines(tmp_path / "eval.jsonl", [
        {"idx": q, "gt": "1", "code": ["a", "b"], "pred": ["1", "2"], "score": [True, False]}
        for q in range(2)])
    copy = tmp_path / "eval_copy.jsonl"
    shutil.copy(ev, copy)
    kw = dict(fmt="evaluator", model="m", benchmark="b")
    for second, what in ((ev, "is the same file as"), (copy, "has the same content as")):
        with pytest.raises(ValueError, match=f"duplicate input: .*{second.name} "
                                             f"\\(input 2\\) {what} .*eval.jsonl \\(input 1\\)"):
            summarize([ev, second], **kw)
        line = cli_error(capsys, "summarize", ev, second, "--fmt", "evaluator", "--model", "m",
                         "--benchmark", "b")
        assert what in line
    assert summarize(ev, **kw).n.tolist() == [2, 2]  # one file: n = 2, never doubled
    # two different seed files still concatenate
    seed1 = write_lines(tmp_path / "seed1.jsonl", [
        {"idx": q, "gt": "1", "code": ["c", "d"], "pred": ["1", "1"], "score": [False, True]}
        for q in range(2)])
    assert summarize([ev, seed1], **kw).n.tolist() == [4, 4]


@pytest.mark.slow
def test_duplicates_name_both_occurrences_in_every_format(tmp_path, capsys):
    import pandas as pd

    from leash_eval.summarize import load_counts

    # evaluator: one question twice in one file
    ev = write_lines(tmp_path / "ev.jsonl", [
        {"idx": 0, "score": [True, False], "pred": ["1", "2"]},
        {"idx": 1, "score": [True], "pred": ["1"]},
        {"idx": 0, "score": [True, True], "pred": ["1", "1"]}])
    with pytest.raises(ValueError, match=r"ev\.jsonl: line 3, sample 0: .*duplicate .*first "
                                         r"given at .*ev\.jsonl: line 1, sample 0"):
        summarize(ev, fmt="evaluator", model="m", benchmark="b")
    # nested records
    ro = write_lines(tmp_path / "ro.jsonl", [
        {"qid": 1, "model_name": "m", "rollouts": [{"rollout": 0, "correct": True}]},
        {"qid": 1, "model_name": "m", "rollouts": [{"rollout": 0, "correct": False}]}])
    with pytest.raises(ValueError, match=r"ro\.jsonl: line 2, sample 0: .*first given at "
                                         r".*ro\.jsonl: line 1, sample 0"):
        summarize(ro, benchmark="b", mapping="rollouts")
    # canonical samples across a JSONL and a CSV file (found again by reading the inputs)
    a = write_lines(tmp_path / "a.jsonl", [rec(i=0), rec(i=1)])
    b = tmp_path / "b.csv"
    b.write_text("model,benchmark,question_id,sample_idx,correct\nm,b,q1,2,true\nm,b,q1,1,false\n")
    with pytest.raises(ValueError, match=r"b\.csv: line 3: field 'sample_idx': duplicate .*"
                                         r"first given at .*a\.jsonl: line 2"):
        summarize([a, b])
    line = cli_error(capsys, "summarize", a, b)
    assert "b.csv: line 3" in line and "a.jsonl: line 2" in line
    # validate names it too (every problem kept), and skip counts it
    rep = validate(write_lines(tmp_path / "twice.jsonl", [rec(i=0), rec(i=1), rec(i=0)]))
    assert rep.problems[0].location == "line 3"
    assert "first given at" in rep.problems[0].message and "twice.jsonl: line 1" in str(
        rep.problems[0])
    with pytest.warns(UserWarning, match=r"b\.csv: 1 of 2 rows rejected"):
        out = summarize([a, b], on_error="skip")
    assert out.n.tolist() == [3]
    assert "first given at" in out.attrs["provenance"]["problem_examples"][0]
    # counts (CSV) within a file and across files
    c = tmp_path / "c.csv"
    c.write_text("model,benchmark,question_id,n,c\nm,b,q,4,1\nm,b,r,4,1\nm,b,q,4,2\n")
    with pytest.raises(ValueError, match=r"c\.csv: line 4: field 'question_id': duplicate "
                                         r".*first given at .*c\.csv: line 2"):
        summarize(c)
    c1 = tmp_path / "c1.csv"
    c1.write_text("model,benchmark,question_id,n,c\nm,b,q,4,1\nm,b,r,4,1\n")
    c2 = tmp_path / "c2.jsonl"
    c2.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "r", "n": 4,
                              "c": 0}) + "\n")
    with pytest.raises(ValueError, match=r"c2\.jsonl: line 1: .*in more than one input; "
                                         r"first given at .*c1\.csv: line 3"):
        summarize([c1, c2])
    # summary files: a row twice, and a summary with the samples it came from
    summ = tmp_path / "summ.parquet"
    frame = summarize(a, out=summ)
    from leash_eval.summarize import write_summary

    write_summary(pd.concat([frame, frame], ignore_index=True), tmp_path / "dup.parquet")
    with pytest.raises(ValueError, match=r"dup\.parquet: row group 0, row 1: .*first given at "
                                         r".*dup\.parquet: row group 0, row 0"):
        load_counts(tmp_path / "dup.parquet")
    with pytest.raises(ValueError, match=r"summ\.parquet: row group 0, row 0: .*in more than "
                                         r"one input; first given at .*a\.jsonl: line 1"):
        load_counts([a, summ])
    line = cli_error(capsys, "passk", a, summ)
    assert "summ.parquet: row group 0, row 0" in line and "a.jsonl: line 1" in line


# --------------------------------------------------------------------------------------------
# 5. an unknown column is noted (with a "did you mean"), not dropped silently
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_unknown_columns_are_noted_with_did_you_mean(tmp_path, capsys):
    p = write_lines(tmp_path / "answr.jsonl", [rec(i=i, answr="4", prompt="x") for i in range(4)])
    want = "column 'answr' is not a samples column and was ignored (did you mean 'answer'?)"
    out = summarize(p)
    assert out.n_answer_missing.tolist() == [4]  # still read as missing, but said so
    notes = out.attrs["provenance"]["files"][0]["notes"]
    assert want in notes and "column 'prompt' is not a samples column and was ignored" in notes
    rep = validate(p)
    assert rep.ok and want in rep.notes  # a note, not a problem: extra columns are legitimate
    code, text, _ = cli(capsys, "validate", p)
    assert code == 0 and f"note: {want}" in text
    code, text, _ = cli(capsys, "validate", p, "--json")
    assert want in json.loads(text)[0]["notes"]
    code = main(["summarize", str(p)])  # without -q: the note goes to stderr
    assert code == 0 and want in capsys.readouterr().err
    # CSV and counts, and a nested mapping field that no record holds
    c = tmp_path / "c.csv"
    c.write_text("model,benchmark,question_id,n,c,frist_correct\nm,b,q,4,1,2\n")
    assert any("'frist_correct'" in n and "did you mean 'first_correct'" in n
               for n in validate(c).notes)
    ro = write_lines(tmp_path / "ro.jsonl", [
        {"qid": 1, "model_name": "m", "rollouts": [
            {"rollout": 0, "correct": True, "pred_valu": 1, "text": "t"}]}])
    notes = summarize(ro, benchmark="b", mapping="rollouts").attrs["provenance"]["files"][0][
        "notes"]
    assert notes == ["field 'pred_value' of mapping 'rollouts' (answer) is in no record, so no "
                     "answer was read (did you mean 'pred_valu'?)"]


# --------------------------------------------------------------------------------------------
# 9. a missing first_correct says what is missing, where, and what to do
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_missing_first_correct_says_what_to_do(tmp_path, capsys):
    p = write_lines(tmp_path / "counts.jsonl", [
        {"model": m, "benchmark": "b", "question_id": "q", "n": 4, "c": c}
        for m, c in (("base", 1), ("rl", 2))])
    line = cli_error(capsys, "passk", p, "--estimator", "first-k", "--k", "1")
    assert line == (
        f"leash passk: error: {p} has no first_correct for model(s) 'base', 'rl' (2 questions; "
        "needed by --estimator first-k): give first_correct (the 0-based index of the first "
        "correct sample) in the counts file, or use --estimator unbiased.")
    # the default, Chen et al.'s unbiased estimator, needs only n and c
    assert cli(capsys, "passk", p, "--k", "1")[0] == 0
    line = cli_error(capsys, "support", p, "--base", "base", "--rl", "rl", "--k", "2")
    assert f"{p} has no first_correct for model(s) 'base' (1 question; needed by --k 2 below " \
           "the full budget of 4 samples)" in line and "leave out --k" in line
    # what the messages offer works
    assert cli(capsys, "passk", p, "--k", "1", "--estimator", "unbiased")[0] == 0
    assert cli(capsys, "support", p, "--base", "base", "--rl", "rl", "--n-boot", "0")[0] == 0


# --------------------------------------------------------------------------------------------
# 10. the same model as base and RLVR model is refused; CLI messages name CLI options
# --------------------------------------------------------------------------------------------
def test_same_model_twice_is_refused(tmp_path, capsys):
    from leash.analysis.pairing import pair_counts
    from leash_eval.summarize import load_counts

    p = write_lines(tmp_path / "s.jsonl", [rec(i=i, model=m, step=st)
                                           for m, st in (("m", 10), ("m", 20)) for i in range(4)])
    summary = load_counts(p)
    for base, rl in (("m", "m"), (("m", 10), ("m", 10)), ("m", ("m", None))):
        with pytest.raises(ValueError, match="name the same model 'm'.*E = S = 0"):
            pair_counts(summary, base, rl)
    line = cli_error(capsys, "support", p, "--base", "m@10", "--rl", "m@10")
    assert "--base and --rl name the same model 'm' at step 10" in line
    # the remedy, two checkpoints of the run, as the options take them
    assert "--base m@10 and --rl m@20" in line and "(model, step)" not in line
    # two checkpoints of one run are a legitimate pair
    assert cli(capsys, "support", p, "--base", "m@10", "--rl", "m@20", "--n-boot", "0")[0] == 0


@pytest.mark.slow
def test_cli_messages_name_options_not_keywords(tmp_path, capsys):
    bad = write_lines(tmp_path / "bad.jsonl", [rec(i=0), rec(i=1, correct="maybe")])
    for command in ("summarize", "passk"):
        line = cli_error(capsys, command, bad)
        assert "--on-error skip" in line and "leash validate FILE" in line
        assert "on_error=" not in line and "leash_eval.validate" not in line
    # and --on-error skip is honoured by every command that reads generations
    code, _, err = cli(capsys, "passk", bad, "--on-error", "skip", "--k", "1")
    assert code == 0
    # one line naming the file, once; no Python function names (load_counts, summarize)
    assert err.strip() == (f"leash passk: warning: {bad}: 1 of 2 rows rejected "
                           "({'invalid_bool': 1}); `leash validate FILE` lists them.")
    code, _, err = cli(capsys, "summarize", bad, "--on-error", "skip")
    assert code == 0 and err.strip() == (
        f"leash summarize: warning: {bad}: 1 of 2 rows rejected ({{'invalid_bool': 1}}); "
        "`leash validate FILE` lists them.")
    # several files: one line per file with rejected rows, each with its own reasons
    worse = write_lines(tmp_path / "worse.jsonl", [rec(q="q2", i=0, correct="no"),
                                                   rec(q="q2", i=-1)])
    good = write_lines(tmp_path / "good.jsonl", [rec(q="q3", i=0)])
    code, _, err = cli(capsys, "summarize", bad, good, worse, "--on-error", "skip")
    assert code == 0 and err.strip().splitlines() == [
        f"leash summarize: warning: {bad}: 1 of 2 rows rejected ({{'invalid_bool': 1}}); "
        "`leash validate FILE` lists them.",
        f"leash summarize: warning: {worse}: 2 of 2 rows rejected ({{'invalid_bool': 1, "
        "'out_of_range': 1}); `leash validate FILE` lists them."]
    nomodel = write_lines(tmp_path / "nomodel.jsonl", [{"question_id": "q", "sample_idx": 0,
                                                        "correct": True}])
    assert "pass --model MODEL to name it" in cli_error(capsys, "summarize", nomodel)
    with pytest.raises(ValueError, match=r"pass model=\.\.\. to name it"):
        summarize(nomodel)  # the API names its keyword


# --------------------------------------------------------------------------------------------
# 11. many malformed CSV rows: one cleaning pass per block, not one per bad row
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_many_malformed_csv_rows_cost_one_cleaning_per_block(tmp_path, monkeypatch):
    from leash_eval import formats as F

    head = "model,benchmark,question_id,sample_idx,correct"
    rows, good, expected = [], [], []
    for i in range(600):
        line = i + 2
        if i % 2:
            rows.append(f"m,b,q{i % 5},{i},true,extra")
            expected.append((f"line {line}", "-", "malformed_csv"))
        elif i % 10 == 4:
            rows.append(f"m,b,q{i % 5},{i},maybe")
            expected.append((f"line {line}", "correct", "invalid_bool"))
        else:
            rows.append(f"m,b,q{i % 5},{i},{'true' if i % 3 else 'false'}")
            good.append(rows[-1])
    p = tmp_path / "many_bad.csv"
    p.write_text("\n".join([head, *rows]) + "\n")
    clean = tmp_path / "clean.csv"
    clean.write_text("\n".join([head, *good]) + "\n")
    # small batches of the exact reader: malformed rows fall on batch boundaries too; the rules
    # (one SQL pass over the file) run once per read, however many rows are bad
    blocks, passes = [], []
    insert, checked_sql = F._insert, F.checked_sql
    monkeypatch.setattr(F, "_insert", lambda *a: (blocks.append(1), insert(*a))[1])
    monkeypatch.setattr(F, "checked_sql", lambda src, *a, **k: (  # the passes over a file
        src.startswith("raw") and passes.append(src), checked_sql(src, *a, **k))[1])
    rep = validate(p, chunk_size=64)
    assert 3 < len(blocks) < 100 and len(passes) == 1  # 360 bad rows
    assert [(x.location, x.field, x.reason) for x in rep.problems] == expected
    assert (rep.rows_read, rep.rows_used, rep.rows_rejected) == (600, len(good), 360)
    # the first problem in file order stops a default run; skip keeps exactly the good rows
    with pytest.raises(ValueError, match=r"many_bad\.csv: line 3: .*6 fields where the "
                                         r"header has 5"):
        summarize(p)
    with pytest.warns(UserWarning, match="360 of 600 rows rejected"):
        out = summarize(p, on_error="skip")
    assert len(passes) < 4
    want = summarize(clean)
    cols = ["model", "benchmark", "question_id", "n", "c", "first_correct"]
    assert out[cols].equals(want[cols])
    assert out.attrs["provenance"]["rejected_by_reason"] == {"malformed_csv": 300,
                                                             "invalid_bool": 60}


# --------------------------------------------------------------------------------------------
# 7. integers of thousands of digits: too large (text) or a malformed line (JSON number)
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_integers_of_thousands_of_digits_name_file_line_and_field(tmp_path, capsys):
    digits = "9" * 5000
    good = json.dumps(rec(i=0))
    csv = tmp_path / "huge.csv"
    csv.write_text(f"model,benchmark,question_id,sample_idx,correct\nm,b,q1,0,true\n"
                   f"m,b,q1,{digits},true\nm,b,q1,-{digits},true\n")
    text = write_lines(tmp_path / "text.jsonl", [good, rec(i=digits), rec(i="-" + digits)])
    number = write_lines(tmp_path / "number.jsonl", [
        good, json.dumps(rec(i=0)).replace('"sample_idx": 0', f'"sample_idx": {digits}')])
    cases = (
        (csv, [("line 3", "sample_idx", "out_of_range"), ("line 4", "sample_idx",
                                                          "out_of_range")]),
        (text, [("line 2", "sample_idx", "out_of_range"), ("line 3", "sample_idx",
                                                           "out_of_range")]),
        (number, [("line 2", "-", "malformed_json")]))
    for path, problems in cases:
        location, field, _ = problems[0]
        want = f"{path.name}: {location}: " + (f"field '{field}': too large" if field != "-"
                                               else "field '-': malformed JSON")
        with pytest.raises(ValueError, match=want):
            summarize(path)
        report = validate(path)
        assert report.file_problem is None, report
        assert [(p.location, p.field, p.reason) for p in report.problems] == problems
        if field != "-":
            assert "must be >= 0" in report.problems[1].message
        with pytest.warns(UserWarning, match=f"{len(problems)} of {len(problems) + 1} rows "
                                             "rejected"):
            out = summarize(path, on_error="skip")
        assert out.n.tolist() == [1]
        line = cli_error(capsys, "summarize", path)
        assert want in line and "set_int_max_str_digits" not in line
        assert cli(capsys, "summarize", path, "--on-error", "skip")[0] == 0


@pytest.mark.slow
def test_too_large_values_are_shown_as_written(tmp_path):
    # pyarrow reads this JSON number as the float 1e+20; the message shows the digits
    p = write_lines(tmp_path / "big.jsonl", [
        json.dumps(rec(i=0)), json.dumps(rec(i=0)).replace('"sample_idx": 0',
                                                           '"sample_idx": 99999999999999999999')])
    with pytest.raises(ValueError, match="too large") as info:
        summarize(p)
    e = info.value
    assert (e.file, e.line, e.key, e.value) == (str(p), "line 2", "sample_idx",
                                                "99999999999999999999")
    # thousands of digits: shortened in the middle, with the number of digits
    digits = "1" + "0" * 4998 + "7"
    csv = tmp_path / "long.csv"
    csv.write_text(f"model,benchmark,question_id,n,c\nm,b,q,{digits},1\n")
    problem = validate(csv).problems[0]
    assert problem.value.startswith("'10000") and problem.value.endswith("0007' (5000 digits)")
    assert "..." in problem.value
    assert len(problem.value) <= 80


# --------------------------------------------------------------------------------------------
# 12. a byte that is not UTF-8 is one bad row (line and field), not an unreadable file
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_bad_utf8_byte_is_one_bad_row_in_every_format(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    def jsonl(name, lines):
        path = tmp_path / name
        path.write_bytes(b"".join(x if isinstance(x, bytes) else json.dumps(x).encode() + b"\n"
                                  for x in lines))
        return path

    bad_answer = json.dumps(rec(i=1, answer="4X2")).encode().replace(b"X", b"\xff") + b"\n"
    bad_qid = json.dumps(rec(q="qX", i=0)).encode().replace(b"qX", b"q\xff") + b"\n"
    fast = jsonl("fast.jsonl", [rec(i=0), bad_answer, rec(i=2)])
    first = jsonl("first.jsonl", [bad_qid, rec(i=0), rec(i=1)])          # the detection line
    slow = jsonl("slow.jsonl", [rec(i=0), bad_answer, b"{broken\n"])     # line by line
    ignored = jsonl("ignored.jsonl", [rec(i=0), json.dumps(rec(i=1, prompt="aXb")).encode()
                                      .replace(b"aXb", b"a\xffb") + b"\n"])
    csv = tmp_path / "bad.csv"
    csv.write_bytes(b"model,benchmark,question_id,sample_idx,correct,answer\n"
                    b'm,b,q1,0,true,"two\nlines"\n'
                    b"m,b,q1,1,true,4\xff2\n"    # line 4 of the file, pyarrow's row 3
                    b"m,b,q1,2,true,4\n")
    par = tmp_path / "bad.parquet"
    answers = pa.array([b"4", b"4\xff2", b"4"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"model": ["m"] * 3, "benchmark": ["b"] * 3,
                             "question_id": ["q1"] * 3, "sample_idx": [0, 1, 2],
                             "correct": [True] * 3, "answer": answers}), par)
    ev = jsonl("ev.jsonl", [json.dumps({"idx": 0, "score": [True, False],
                                        "pred": ["1", "X"]}).encode().replace(b"X", b"\xff")
                            + b"\n", {"idx": 1, "score": [True], "pred": ["1"]}])
    cases = ((fast, "line 2", "answer", b"4\xff2"), (first, "line 1", "question_id", b"q\xff"),
             (slow, "line 2", "answer", b"4\xff2"), (csv, "line 4", "answer", b"4\xff2"),
             (par, "row group 0, row 1", "answer", b"4\xff2"),
             (ev, "line 1, sample 1", "pred[1]", b"\xff"))
    for path, where, field, value in cases:
        kw = dict(fmt="evaluator", model="m", benchmark="b") if path == ev else {}
        want = f"{path.name}: {where}: field '{field}': must be valid UTF-8 text (got {value!r})"
        with pytest.raises(ValueError) as e:
            summarize(path, **kw)
        assert want in str(e.value)
        report = validate(path, **kw)
        assert report.file_problem is None, report
        got = [(p.location, p.field, p.reason) for p in report.problems]
        assert got[0] == (where, field, "invalid_utf8"), got
        with pytest.warns(UserWarning, match="invalid_utf8"):
            out = summarize(path, on_error="skip", **kw)
        assert out.n.sum() == (1 if path == slow else 2)  # slow.jsonl: also a broken line
        options = ("--fmt", "evaluator", "--model", "m", "--benchmark", "b") if path == ev else ()
        line = cli_error(capsys, "summarize", path, *options)
        assert want in line and "--on-error skip" in line
        assert cli(capsys, "summarize", path, "--on-error", "skip", *options)[0] == 0
    # a column leash does not read may hold any bytes
    assert validate(ignored).ok and summarize(ignored).n.tolist() == [2]


# --------------------------------------------------------------------------------------------
# 13. naming an earlier file's line leaves no file open
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_naming_a_line_of_an_earlier_csv_file_leaves_no_file_open(tmp_path):
    import gc

    c1 = tmp_path / "c1.csv"
    c1.write_text("model,benchmark,question_id,n,c\nm,b,q,4,1\nm,b,r,4,1\n")
    c2 = write_lines(tmp_path / "c2.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": "r", "n": 4, "c": 0}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # the duplicate in c2 names its first occurrence, c1.csv line 3, after c1 was closed
        out = summarize([c1, c2], on_error="skip")
        assert "c1.csv: line 3" in out.attrs["provenance"]["problem_examples"][0]
        with pytest.raises(ValueError, match="first given at .*c1.csv: line 3"):
            summarize([c1, c2])
        del out
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks



# --------------------------------------------------------------------------------------------
# 14. rows come in the order the inputs are read, whatever the dictionary codes
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_load_counts_keeps_the_rows_of_a_summary_in_file_order(tmp_path):
    import pandas as pd
    import pyarrow.parquet as pq

    from _support import REPO
    from leash_eval.summarize import load_counts, read_summary

    for name in ("entropy", "support", "checkpoints", "sft", "gym"):
        path = REPO / "data" / "demo" / f"{name}.parquet"
        loaded, read = load_counts(path), read_summary(path)
        assert loaded["question_id"].tolist() == pq.read_table(path)["question_id"].to_pylist()
        pd.testing.assert_frame_equal(loaded, read, check_exact=True, check_like=False)
    # a samples file whose question ids are not in dictionary order
    p = write_lines(tmp_path / "s.jsonl", [rec(q=q, i=i) for q in "zamb" for i in range(2)])
    assert summarize(p)["question_id"].tolist() == ["z", "a", "m", "b"]


# --------------------------------------------------------------------------------------------
# 15. every row rejected: an error, before anything is written; what leash writes it reads
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_every_row_rejected_is_an_error_and_nothing_is_written(tmp_path, capsys):
    from leash_eval.summarize import load_counts, read_summary, write_summary

    bad = write_lines(tmp_path / "all_bad.jsonl", [rec(i=0, correct="maybe"),
                                                   rec(i=1, correct="no")])
    good = write_lines(tmp_path / "good.jsonl", [rec(q="q2", i=0), rec(q="q2", i=1)])
    out = tmp_path / "s.parquet"
    want = (r"all_bad\.jsonl: all 2 rows rejected \(\{'invalid_bool': 2\}\); nothing is left "
            r"to summarize")
    with pytest.raises(ValueError, match=want):
        summarize(bad, on_error="skip", out=out)
    with pytest.raises(ValueError, match=want):
        load_counts(bad, on_error="skip")
    assert not out.exists()
    line = cli_error(capsys, "summarize", bad, "--on-error", "skip", "--out", out)
    assert re.search(want, line) and "`leash validate FILE`" in line, line
    assert "leash_eval.validate" not in line and not out.exists()
    # one input all bad, another good: the good rows are a summary that reads back
    with pytest.warns(UserWarning, match=r"all_bad\.jsonl: 2 of 2 rows rejected"):
        frame = summarize([bad, good], on_error="skip", out=out)
    assert frame.n.tolist() == [2]
    read_summary(out)
    with pytest.warns(UserWarning, match=r"all_bad\.jsonl: 2 of 2 rows rejected"):
        assert load_counts([out, bad], on_error="skip").n.tolist() == [2]
    # and a frame without rows is never written: it could not be read back
    with pytest.raises(ValueError, match="'frame' parameter has no rows"):
        write_summary(frame.iloc[:0], tmp_path / "empty.parquet")
    assert not (tmp_path / "empty.parquet").exists()


# --------------------------------------------------------------------------------------------
# 16. work done once: read_summary reads its file once, a FILE is checked once
# --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_read_summary_reads_its_file_once_and_files_are_checked_once(tmp_path, monkeypatch):
    from collections import Counter

    import pyarrow.parquet as pq

    from _support import REPO
    from leash_eval import formats as F
    from leash_eval.summarize import read_summary

    calls = Counter()

    def counting(name, real):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return real(*args, **kwargs)
        return wrapper

    for name in ("read_table", "read_schema", "read_metadata", "ParquetFile"):
        monkeypatch.setattr(pq, name, counting(name, getattr(pq, name)))
    monkeypatch.setattr(F, "check_regular_file", counting("check", F.check_regular_file))
    frame = read_summary(REPO / "data" / "demo" / "support.parquet")
    assert len(frame) == 11800
    assert dict(calls) == {"check": 1, "ParquetFile": 1}  # no second pass over the file
    calls.clear()
    summarize(write_lines(tmp_path / "s.jsonl", [rec()]))
    assert calls["check"] == 1
    # a bad row is still found, and named by row group and row
    _, _, bad = _summary_files(tmp_path)
    with pytest.raises(ValueError, match=r"bad\.parquet: row group 0, row 0: field 'c'"):
        read_summary(bad)


def test_an_error_of_the_rules_is_not_an_unreadable_file(tmp_path, monkeypatch):
    import duckdb

    from leash_eval import formats as F
    from leash_eval.validate import InputFileError

    p = write_lines(tmp_path / "ok.jsonl", [rec(i=0), rec(i=1)])

    def broken(*args, **kwargs):  # a bug in the rule set: SQL that does not bind
        return "SELECT a_bug_in_a_rule FROM range(1)"

    monkeypatch.setattr(F, "checked_sql", broken)
    with pytest.raises(duckdb.Error, match="a_bug_in_a_rule") as e:
        summarize(p)
    assert not isinstance(e.value, InputFileError) and "cannot read" not in str(e.value)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_a_line_above_the_json_line_cap_is_named_by_its_line(tmp_path, monkeypatch, suffix):
    """DuckDB stops at its cap on one JSON line (``maximum_object_size``) without saying which
    line; the error names the first line above the cap (a scan holding at most the cap, on the
    error path only). DuckDB's own error is given here with a small cap: it takes a cap below
    its buffer size as that size, so a real one needs a line of over 128 MiB (checked by hand:
    a 200 MiB line is named in 0.5 s, 250 MB of memory)."""
    import gzip

    from leash_eval import formats

    monkeypatch.setattr(formats, "_MAX_OBJECT", 4096)
    lines = [json.dumps(rec("q1", 0, True)), json.dumps(rec("q2", 0, True)),
             json.dumps({**rec("q3", 0, True), "response": "x" * 4096}),
             json.dumps(rec("q4", 0, True))]
    text = ("\n".join(lines) + "\n").encode()
    path = tmp_path / f"s{suffix}"
    path.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    duckdb_says = Exception('Invalid Input Error: "maximum_object_size" of 4096 bytes exceeded '
                            f'while reading file "{path}" (>8192 bytes).')
    e = formats.unreadable(path, duckdb_says)
    assert isinstance(e, ValueError) and e.file == path and e.line == 3
    assert "line 3" in str(e) and str(path) in str(e)
    # a line of exactly the cap is within it
    monkeypatch.setattr(formats, "_MAX_OBJECT", len(lines[2]))
    assert getattr(formats.unreadable(path, duckdb_says), "line", None) is None


def test_a_symlink_loop_is_named_as_one(tmp_path, capsys):
    """A symbolic link loop is an input error naming the file (a ValueError, as documented),
    not an OSError from the API nor "neither an existing file nor a dataset" from the CLI."""
    import os

    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    with raises_with(file=loop, text="symbolic link loop"):
        summarize(loop)
    for command in ("validate", "summarize"):
        assert f"{loop} is a symbolic link loop" in cli_error(capsys, command, loop)


@pytest.mark.slow
def test_a_study_source_that_is_a_device_or_a_loop_is_one_line_not_a_hang(tmp_path):
    """The study cache hashes each input: a device (an endless /dev/zero) or a FIFO must be
    refused before that, as the readers refuse it; a loop is named too."""
    import os
    import subprocess
    import sys

    os.symlink("/dev/zero", tmp_path / "dev.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    os.symlink(tmp_path / "loop.jsonl", tmp_path / "loop.jsonl")
    for name, what in (("dev.jsonl", "a character device"), ("fifo.jsonl", "a FIFO"),
                       ("loop.jsonl", "a symbolic link loop")):
        study = tmp_path / "s.yaml"
        study.write_text("name: t\ntitle: t\nbenchmarks:\n  gsm8k: {domain: math, budget: 8}\n"
                         f"sections:\n  support:\n    sources:\n      - path: {name}\n"
                         "    pairs:\n      - {label: a, base: sft, rl: rl}\n")
        proc = subprocess.run([sys.executable, "-m", "leash_eval.cli", "study", "check",
                               str(study)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        errors = [ln for ln in proc.stderr.splitlines() if "error:" in ln]
        assert len(errors) == 1 and f"{tmp_path / name} is {what}" in errors[0], proc.stderr


def test_a_record_of_too_many_keys_is_refused_by_its_line(tmp_path, monkeypatch, capsys):
    """An 18 MB JSON lines file whose first record has 10^6 keys did not finish in 300 s (DuckDB
    infers a schema of 10^6 columns): one scan of each line's keys refuses it first, naming the
    line (the cap is made small here; the real one is 10,000 keys)."""
    from leash_eval import formats

    monkeypatch.setattr(formats, "_MAX_KEYS", 50)
    wide = {**rec("q2", 0, True), **{f"k{i}": i for i in range(60)}}
    path = write_lines(tmp_path / "s.jsonl", [rec("q1", 0, True), wide, rec("q3", 0, True)])
    with raises_with(file=path, line=2, text="more than 50 keys"):
        summarize(path)
    line = cli_error(capsys, "validate", path)
    assert str(path) in line and "line 2" in line
    monkeypatch.setattr(formats, "_MAX_KEYS", len(wide))  # a record of exactly the cap is read
    assert summarize(path)["n"].sum() == 3


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_a_wide_record_is_found_beyond_blank_lines_and_long_lines(tmp_path, monkeypatch, suffix):
    """Only lines long enough to hold more keys than the cap are read for their keys: a long
    line of few keys (a response) is read, a wide record further down is still refused, and
    its line counts the blank lines before it."""
    import gzip

    from leash_eval import formats

    monkeypatch.setattr(formats, "_MAX_KEYS", 50)
    long = json.dumps({**rec("q1", 0, True), "response": "x" * 5000})
    wide = json.dumps({**rec("q3", 0, True), **{f"k{i}": i for i in range(60)}})
    text = "\n".join([long, json.dumps(rec("q2", 0, True)), "", "", wide]) + "\n"
    path = tmp_path / f"s{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    with raises_with(file=path, line=5, text="more than 50 keys"):
        summarize(path)
    text = text.replace(wide, long)
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    with pytest.raises(ValueError, match="duplicate"):  # q1 twice: read, not refused as wide
        summarize(path)


def test_long_line_possible_never_misses_a_long_line(tmp_path):
    """formats._long_line_possible is False only when every line is shorter than twice the
    block, and True only when some line is at least a block long (a block without a newline).
    """
    import random

    from leash_eval.formats import _long_line_possible

    rng = random.Random(3)
    path = tmp_path / "lines.jsonl"
    for _ in range(300):
        lengths = [rng.choice([0, 1, 5, 40, 63, 64, 65, 127, 128, 129, 300])
                   for _ in range(rng.randint(1, 30))]
        data = b"".join(b"x" * n + b"\n" for n in lengths)[: None if rng.random() < .8 else -1]
        path.write_bytes(data)
        longest = max(map(len, data.split(b"\n")))
        for block in (16, 64, 100):
            possible = _long_line_possible(path, block)
            assert possible or longest < 2 * block, (lengths, block)
            assert not possible or longest >= block, (lengths, block)
