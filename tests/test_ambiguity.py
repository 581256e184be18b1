"""Nothing chosen silently: a key twice in a JSON object, a column named twice in Parquet or a
CSV header (which one is meant is a guess: DuckDB takes the first, Python's json the last) are
refused, naming file, line and key; question ids that are one after Unicode normalization and
stripping are noted by ``leash validate`` with both spellings.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support import raises_with
from leash_eval.summarize import summarize
from leash_eval.validate import validate

ROW = '{"model": "m", "benchmark": "b", "question_id": "q1", "sample_idx": %d, "correct": true}'


@pytest.mark.slow
def test_a_key_twice_in_a_json_line_is_a_bad_row_named_by_line_and_key(tmp_path):
    f = tmp_path / "g.jsonl"
    f.write_text("\n".join([ROW % 0, ROW % 1, '{"model": "m", "benchmark": "b", "question_id": '
                            '"q1", "sample_idx": 2, "correct": false, "answer": "7", "correct": '
                            'true}', ROW % 3]) + "\n")
    with raises_with(file=str(f), line="line 3", key="correct", text="appears twice"):
        summarize(f)
    rep = validate(f)
    assert [(p.location, p.field, p.reason) for p in rep.problems] == [("line 3", "correct",
                                                                     "duplicate_key")]
    with pytest.warns(UserWarning, match="1 of 4 rows rejected"):
        assert summarize(f, on_error="skip").n.tolist() == [3]


@pytest.mark.slow
def test_a_read_field_twice_is_found_on_any_line_and_an_unread_key_twice_is_no_problem(
        tmp_path):
    """DuckDB's reader stops at a field leash reads given twice, on any line (not only the
    lines it samples); a key leash never reads, given twice, chooses no value: the file is read
    alike whether the fast reader or the exact one (here sent to it by a bad row) reads it."""
    lines = [ROW % i for i in range(25_000)]
    lines[24_000] = lines[24_000].replace('"model": "m"', '"model": "m", "model": "m"')
    f = tmp_path / "late.jsonl"
    f.write_text("\n".join(lines) + "\n")
    with raises_with(file=str(f), line="line 24001", key="model", text="appears twice"):
        summarize(f)
    g = tmp_path / "prompt.jsonl"
    unread = ROW[:-1] + ', "prompt": "a", "prompt": "b"}'
    g.write_text("\n".join([ROW % 0, unread % 1]) + "\n")
    assert validate(g).problems == []
    assert summarize(g).n.tolist() == [2]
    g.write_text("\n".join([ROW % 0, unread % 1, ROW % -1]) + "\n")  # -1: out of range
    assert [(p.location, p.reason) for p in validate(g).problems] == [("line 3", "out_of_range")]
    with pytest.warns(UserWarning, match="1 of 3 rows rejected"):
        assert summarize(g, on_error="skip").n.tolist() == [2]


def test_a_column_twice_in_parquet_or_a_csv_header_is_refused(tmp_path):
    p = tmp_path / "g.parquet"
    pq.write_table(pa.Table.from_arrays(
        [pa.array(["m"]), pa.array(["b"]), pa.array(["q1"]), pa.array([0]), pa.array([False]),
         pa.array([True])],
        names=["model", "benchmark", "question_id", "sample_idx", "correct", "correct"]), p)
    with raises_with(file=p, key="correct", text="appears twice"):
        summarize(p)
    c = tmp_path / "g.csv"
    c.write_text("model,benchmark,question_id,sample_idx,correct,correct\nm,b,q1,0,false,true\n")
    with raises_with(file=c, line=1, key="correct", text="appears twice"):
        summarize(c)
    assert validate(c).problems[0].error.key == "correct"


@pytest.mark.slow
def test_validate_notes_question_ids_one_after_normalization(tmp_path):
    f = tmp_path / "g.jsonl"
    qs = ["caf\u00e9", "cafe\u0301", "q1", "q1 ", "q\u200b2", "q2", "q3"]
    f.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": q,
                                     "sample_idx": 0, "correct": True}) + "\n" for q in qs))
    notes = [n for n in validate(f).notes if "normalization" in n]
    assert len(notes) == 3
    assert "'caf\\xe9'" in notes[0] and "'cafe\\u0301'" in notes[0]
    assert "'q1'" in notes[1] and "'q1 '" in notes[1]
    assert "'q\\u200b2'" in notes[2] and "'q2'" in notes[2]
    assert summarize(f).shape[0] == 7  # counted as written, not merged silently
