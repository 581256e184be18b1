"""The readers of evaluators', trainers' and harnesses' files under hostile or unlucky input: no
silent choice (a key or zip member twice, two id fields that both fit, a scalar verdict given to
every replica, ids shifted by a blank line), memory bounded by the input's size (zip and gzip
bombs, measured as peak RSS in a subprocess), and one line with exit status 2 for every
malformed input (encrypted or deflate64 members, a string or list where an object belongs,
100,000-deep JSON, numbers beyond the 64-bit range, NaN scores). Each test checks the parts a
user acts on: the file, the line or member, the key and the value.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from _support import cli, cli_error, raises_with, write_lines
from leash_eval import documents as D
from leash_eval import harness_logs as H
from leash_eval.summarize import summarize

FIX = Path(__file__).resolve().parent / "fixtures" / "harnesses"
_spec = importlib.util.spec_from_file_location("make_harness_fixtures",
                                               FIX / "make_harness_fixtures.py")
mf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mf)
LABELS = ("--model", "m", "--benchmark", "b")


def counts(frame) -> dict:
    return {q: (int(n), int(c)) for q, n, c in zip(frame["question_id"], frame["n"], frame["c"])}


def write_eval(path: Path, members: dict, *, raw: dict | None = None) -> Path:
    """An .eval zip of JSON members (deflate), plus ``raw`` members written as bytes."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, obj in members.items():
            z.writestr(name, json.dumps(obj))
        for name, data in (raw or {}).items():
            z.writestr(name, data)
    return path


def patch_member(data: bytes, name: str, *, method=None, flags=None) -> bytes:
    """The zip with member ``name``'s compression method or general purpose flags set in its
    local header and its central directory entry (zipfile writes neither an unknown method nor
    the encryption flag; the bytes are left as they are: what a reader must refuse).
    """
    out, fname = bytearray(data), name.encode()
    for sig, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        i = -1
        while (i := out.find(sig, i + 1)) >= 0:
            if out[i + name_at: i + name_at + len(fname)] == fname:
                if method is not None:
                    out[i + flag_at + 2: i + flag_at + 4] = struct.pack("<H", method)
                if flags is not None:
                    out[i + flag_at: i + flag_at + 2] = struct.pack("<H", flags)
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# class 4: nothing chosen silently
# ---------------------------------------------------------------------------------------------

def test_a_key_twice_in_a_json_document_is_refused_naming_place_and_key(tmp_path, capsys):
    top = tmp_path / "top.json"
    top.write_text('{\n  "q1": true,\n  "q2": false,\n  "q1": false\n}\n')
    line = cli_error(capsys, "summarize", top, *LABELS)
    assert str(top) in line and "line 4" in line and "'q1'" in line and "twice" in line
    nested = tmp_path / "nested.json"
    nested.write_text('{"q1": [{"correct": true, "correct": false}], "q2": [true]}')
    line = cli_error(capsys, "summarize", nested, *LABELS)
    assert str(nested) in line and "$.q1[0]" in line and "'correct'" in line
    # OpenCompass: a detail with its verdicts twice
    oc = tmp_path / "results" / "qwen" / "math.json"
    oc.parent.mkdir(parents=True)
    text = mf.opencompass_results_text().replace(
        '"correct": [', '"correct": [true, true, true, true],\n            "correct": [', 1)
    oc.write_text(text)
    line = cli_error(capsys, "summarize", oc)
    assert str(oc) in line and "$.details[0]" in line and "'correct'" in line
    with raises_with(file=oc, key="correct"):
        summarize(oc)


def test_a_member_twice_in_an_eval_archive_is_refused_naming_it(tmp_path, capsys):
    members = mf._inspect_members()
    p = tmp_path / "twice.eval"
    with pytest.warns(UserWarning, match="Duplicate name"):
        write_eval(p, members, raw={"samples/1_epoch_1.json": json.dumps(
            {**members["samples/1_epoch_1.json"], "scores": {"match": {"value": "I"}}})})
    line = cli_error(capsys, "summarize", p)
    assert str(p) in line and "member samples/1_epoch_1.json" in line and "two" in line
    with raises_with(file=p, key="samples/1_epoch_1.json"):
        summarize(p)


def test_a_key_twice_in_a_json_line_of_a_plugin_format_names_line_and_key(tmp_path, capsys):
    lines = mf.verl_step0_lines()
    bad = lines[4][:-1] + ', "score": 1.0}'  # the reader would read the first, Python the last
    p = write_lines(tmp_path / "3.jsonl", [*lines[:4], bad, *lines[5:]])
    line = cli_error(capsys, "summarize", p, *LABELS)
    assert f"{p}: line 5" in line and "score" in line and "twice" in line
    nemo = mf.nemo_rs0_lines()
    p = write_lines(tmp_path / "output-rs0.jsonl",
                    [nemo[0], nemo[1][:-1] + ', "symbolic_correct": true}', *nemo[2:]])
    line = cli_error(capsys, "summarize", p, *LABELS)
    assert f"{p}: line 2" in line and "symbolic_correct" in line


def test_a_scalar_opencompass_verdict_is_not_given_to_every_replica(tmp_path, capsys):
    doc = json.loads(mf.opencompass_results_text())
    for field, value in (("correct", True), ("correct", 1), ("pred", "5")):
        d = json.loads(json.dumps(doc))
        d["details"][1][field] = value
        p = tmp_path / "results" / "m" / f"{field}{value}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(d, indent=4))
        line = cli_error(capsys, "summarize", p)
        assert str(p) in line and "details[1]" in line and f"'{field}'" in line, line
        with raises_with(file=p, key=field, value=value):
            summarize(p)
    # one replica: a scalar is that replica's verdict
    d = json.loads(json.dumps(doc))
    d["details"] = [{"example_abbr": "a_0", "pred": ["5"], "answer": ["5"], "correct": True}]
    p = tmp_path / "results" / "m" / "one.json"
    p.write_text(json.dumps(d))
    assert counts(summarize(p)) == {"a_0": (1, 1)}


@pytest.mark.slow
def test_nemo_skills_seed_files_are_paired_by_id_not_by_line(tmp_path):
    want = {str(i): nc for i, nc in enumerate(
        mf.EXPECTED["nemo-skills/eval-results/math/output-rs*.jsonl"])}
    # a blank line (and a line of spaces) in one seed file shifts no id
    for pad in ("", "   "):
        folder = tmp_path / f"blank{len(pad)}"
        folder.mkdir()
        for seed in (0, 1, 2):
            lines = getattr(mf, f"nemo_rs{seed}_lines")()
            if seed == 1:
                lines = [lines[0], pad, *lines[1:3], pad, lines[3]]
            write_lines(folder / f"output-rs{seed}.jsonl", lines)
        got = counts(summarize(sorted(folder.glob("*.jsonl")), model="m", benchmark="b"))
        assert got == want, pad
    # with an id field, the files may list the questions in any order
    ids = tmp_path / "ids"
    ids.mkdir()
    for seed in (0, 1, 2):
        recs = [dict(json.loads(x), id=f"math/{i}") for i, x in
                enumerate(getattr(mf, f"nemo_rs{seed}_lines")())]
        write_lines(ids / f"output-rs{seed}.jsonl", recs[::-1] if seed == 2 else recs)
    got = counts(summarize(sorted(ids.glob("*.jsonl")), model="m", benchmark="b"))
    assert got == {f"math/{q}": nc for q, nc in want.items()}
    # the id field of the first record is every record's
    recs = [json.loads(x) | {"id": i} for i, x in enumerate(mf.nemo_rs0_lines())]
    del recs[2]["id"]
    p = write_lines(tmp_path / "output-rs5.jsonl", recs)
    with raises_with(text=f"{p}: line 3: field 'id'"):
        summarize(p, model="m", benchmark="b")


def test_gold_answers_by_two_id_fields_that_both_fit_and_differ_are_refused(tmp_path):
    pytest.importorskip("math_verify")
    from leash_eval import rescore as rs

    # `id` and `unique_id` both name every question, in opposite orders
    questions = tmp_path / "q.jsonl"
    write_lines(questions, [{"problem": f"p{i}", "answer": str(i), "id": f"t{i}",
                             "unique_id": f"t{9 - i}"} for i in range(10)])
    samples = write_lines(tmp_path / "s.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": f"t{i}", "sample_idx": 0,
         "response": f"\\boxed{{{i}}}"} for i in range(10)])
    gold = rs.read_benchmark(questions, "answer")
    with raises_with(file=samples, key="question_id", value="t0") as e:
        rs.rescore_file(samples, None, gold=gold, jobs=1)
    assert "unique_id" in str(e.value) and " id" in str(e.value)
    # fields that agree on every id (idx = the line number from 0) are no ambiguity
    write_lines(questions, [{"problem": f"p{i}", "answer": str(i), "idx": i,
                             "unique_id": str(i)} for i in range(10)])
    samples = write_lines(tmp_path / "s.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": str(i), "sample_idx": 0,
         "response": f"\\boxed{{{i}}}"} for i in range(10)])
    report = rs.rescore_file(samples, None, gold=rs.read_benchmark(questions, "answer"), jobs=1)
    assert report.gold_ids == "idx"


# ---------------------------------------------------------------------------------------------
# class 5: memory bounded by the input's size, measured in a subprocess (never timed)
# ---------------------------------------------------------------------------------------------

_PEAK = """
import resource, sys
from leash_eval.summarize import summarize
try:
    summarize(sys.argv[1], model="m", benchmark="b")
except ValueError as e:
    print("ERROR", str(e).splitlines()[0])
print("PEAK", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
"""


def _peak(path) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True,
                         text=True, timeout=600, cwd=Path(__file__).parent)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    err = next((x[6:] for x in lines if x.startswith("ERROR ")), "")
    return int(next(x for x in lines if x.startswith("PEAK "))[5:]), err


def _zstd_eval(path: Path, name: str, size: int, declared: int | None = None) -> Path:
    """An .eval whose member ``name`` is ``size`` bytes of JSON white space, zstd-compressed."""
    zstandard = pytest.importorskip("zstandard")
    good = tmp = path.with_suffix(".tmp.eval")
    mf.write_inspect(tmp, "zstd")
    data = bytearray(tmp.read_bytes())
    tmp.unlink()
    cobj = zstandard.ZstdCompressor(level=3).compressobj()
    chunk = b" " * (1 << 20)
    comp = cobj.compress(b"{") + b"".join(cobj.compress(chunk) for _ in range(size >> 20))
    comp += cobj.compress(b"}") + cobj.flush()
    # a member appended by hand (zipfile writes no zstd before Python 3.14)
    offset, fname = data.find(b"PK\x01\x02"), name.encode()
    central, end = data[offset:data.find(b"PK\x05\x06")], data[data.find(b"PK\x05\x06"):]
    n_members = struct.unpack("<H", end[10:12])[0]
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 63, 0, 93, 0, 0x21, 0, len(comp),
                        declared or size + 2, len(fname), 0) + fname + comp
    entry = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 63, 63, 0, 93, 0, 0x21, 0,
                        len(comp), declared or size + 2, len(fname), 0, 0, 0, 0, 0,
                        offset) + fname
    body = data[:offset] + local
    central = central + entry
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, n_members + 1, n_members + 1,
                      len(central), len(body), 0)
    path.write_bytes(bytes(body + central + end))
    del good
    return path


@pytest.mark.slow
def test_decompression_bombs_are_refused_within_memory_bounded_by_the_input(tmp_path):
    small, _ = _peak(FIX / "json-object" / "results.json")  # the same process, a small file
    size = 512 << 20
    cases = {}
    # a zstd member declaring its true size, and one declaring a small size
    cases["zstd"] = _zstd_eval(tmp_path / "z.eval", "samples/9_epoch_1.json", size)
    cases["zstd-lying"] = _zstd_eval(tmp_path / "l.eval", "samples/9_epoch_1.json", size,
                                     declared=1000)
    # a deflate member
    d = tmp_path / "d.eval"
    mf.write_inspect(d, "deflate")
    with zipfile.ZipFile(d, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("samples/9_epoch_1.json", "w", force_zip64=True) as fh:
            fh.write(b"{")
            for _ in range(size >> 20):
                fh.write(b" " * (1 << 20))
            fh.write(b"}")
    cases["deflate"] = d
    # a .json.gz document
    g = tmp_path / "bomb.json.gz"
    with gzip.open(g, "wb", compresslevel=9) as fh:
        fh.write(b'{"q1": true')
        for _ in range(size >> 20):
            fh.write(b" " * (1 << 20))
        fh.write(b"}")
    cases["gzip"] = g
    for what, path in cases.items():
        peak, err = _peak(path)
        size_in = path.stat().st_size
        assert str(path) in err and ("zip bomb" in err or "CRC" in err or "size" in err), \
            (what, err)
        # what may be held: the bounded document (RATIO times the input, at least FLOOR)
        assert peak - small < D.cap(size_in) + (96 << 20), (what, peak, small, size_in)
        assert peak - small < size // 2, (what, peak, small)


@pytest.mark.slow
def test_a_json_object_is_read_in_one_pass(tmp_path, monkeypatch):
    """3 MB of {id: verdict} took 97 s: the line of every key was searched for in the whole
    text, for every sample. The line is looked up only for a message now: a clean document
    never searches for one, however many keys it has (counted, not timed).
    """
    calls = []
    real = H._key_line
    monkeypatch.setattr(H, "_key_line", lambda raw, key: calls.append(key) or real(raw, key))
    p = tmp_path / "big.json"
    n = 50_000
    p.write_text(json.dumps({f"q{i}": [i % 3 == 0, i % 2 == 0] for i in range(n)}, indent=2))
    frame = summarize(p, model="m", benchmark="b")
    assert len(frame) == n and calls == []
    assert int(frame["c"].sum()) == sum((i % 3 == 0) + (i % 2 == 0) for i in range(n))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"a": True, "b": [True, "yes"]}, indent=2))
    with raises_with(file=bad, line="line 3", key="b[1]"):
        summarize(bad, model="m", benchmark="b")
    assert calls == ["b"]


# ---------------------------------------------------------------------------------------------
# class 8: one line and exit status 2, never a traceback
# ---------------------------------------------------------------------------------------------

def test_encrypted_and_deflate64_members_are_one_line(tmp_path, capsys):
    members = mf._inspect_members()
    plain = write_eval(tmp_path / "plain.eval", members)
    name = "samples/2_epoch_1.json"
    for method, word in ((9, "deflate64"), (12, "bzip2"), (14, "lzma"), (77, "method 77")):
        p = tmp_path / f"m{method}.eval"
        p.write_bytes(patch_member(plain.read_bytes(), name, method=method))
        line = cli_error(capsys, "summarize", p)
        assert str(p) in line and f"member {name}" in line and word in line, line
    enc = tmp_path / "enc.eval"
    enc.write_bytes(patch_member(plain.read_bytes(), name, flags=0x1))
    line = cli_error(capsys, "summarize", enc)
    assert str(enc) in line and f"member {name}" in line and "encrypted" in line


def test_a_string_or_list_where_an_object_belongs_is_one_line(tmp_path, capsys):
    base = mf._inspect_members()
    sample = "samples/1_epoch_2.json"
    cases = [("header.json", lambda m: m.__setitem__("eval", ["gsm8k"]), "eval"),
             ("header.json", lambda m: m.__setitem__("eval", "gsm8k"), "eval"),
             (sample, lambda m: m.__setitem__("output", "ANSWER: 42"), "output"),
             (sample, lambda m: m.__setitem__("scores", ["C"]), "scores"),
             (sample, lambda m: m["scores"].__setitem__("match", "C"), "scores.match"),
             (sample, lambda m: m["output"].__setitem__("choices", [["x"]]),
              "output.choices[0]"),
             (sample, lambda m: m["output"]["choices"][0].__setitem__("message", "hi"),
              "output.choices[0].message"),
             (sample, lambda m: m["output"].__setitem__("usage", [5]), "output.usage")]
    for i, (member, change, field) in enumerate(cases):
        members = json.loads(json.dumps(base))
        change(members[member])
        p = write_eval(tmp_path / f"c{i}.eval", members)
        line = cli_error(capsys, "summarize", p)
        assert str(p) in line and f"member {member}" in line and f"'{field}'" in line, line
    # a whole member that is a list
    members = json.loads(json.dumps(base))
    members[sample] = [1, 2]
    p = write_eval(tmp_path / "list.eval", members)
    assert f"member {sample}" in cli_error(capsys, "summarize", p)
    # OpenCompass: a detail that is a string; Reasoning Gym: a result that is a list
    doc = json.loads(mf.opencompass_results_text())
    doc["details"][2] = "algebra_2"
    p = tmp_path / "results" / "m" / "x.json"
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(doc))
    line = cli_error(capsys, "summarize", p)
    assert str(p) in line and "details[2]" in line


@pytest.mark.slow
def test_json_nested_100000_deep_is_one_line(tmp_path, capsys):
    deep = "[" * 100_000 + "]" * 100_000
    cases = {}
    cases["doc"] = tmp_path / "doc.json"
    cases["doc"].write_text('{"q1": ' + deep + "}")
    cases["doc.gz"] = tmp_path / "doc.json.gz"
    cases["doc.gz"].write_bytes(gzip.compress(('{"q1": true, "q2": ' + deep + "}").encode()))
    members = mf._inspect_members()
    cases["member"] = write_eval(tmp_path / "deep.eval", members,
                                 raw={"samples/7_epoch_1.json": '{"id": ' + deep + "}"})
    cases["samples"] = write_lines(tmp_path / "s.jsonl", [
        {"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 0, "correct": True},
        '{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 1, "correct": '
        'true, "answer": ' + deep + "}"])
    cases["verl"] = write_lines(tmp_path / "4.jsonl", [*mf.verl_step0_lines()[:2], json.dumps(
        json.loads(mf.verl_step0_lines()[2]) | {"score": "X"}).replace('"X"', deep)])
    cases["first line"] = tmp_path / "first.jsonl"
    cases["first line"].write_text(deep + "\n")
    for what, p in cases.items():
        line = cli_error(capsys, "summarize", p, *LABELS)
        assert str(p) in line, (what, line)
        code, out, err = cli(capsys, "validate", p, *LABELS)
        assert "Traceback" not in err and "RecursionError" not in out + err, what
        # 2: the file cannot be read at all; 1: validate lists a row's problem with its line
        # (a samples file read row by row, whose second line holds the deep value)
        assert code == (1 if what == "samples" else 2), what
        if code == 1:
            assert f"{p}: line 2: field 'answer'" in out + err, (what, out + err)


def test_numbers_beyond_the_64_bit_range_are_one_line(tmp_path, capsys):
    big = "9" * 25
    lines = mf.verl_step0_lines()
    # a verl step in the file name, alone and in a folder
    p = write_lines(tmp_path / f"{big}.jsonl", lines)
    line = cli_error(capsys, "summarize", p, *LABELS)
    assert str(p) in line and "step" in line and "64-bit" in line
    folder = tmp_path / "val"
    folder.mkdir()
    write_lines(folder / "10.jsonl", lines)
    write_lines(folder / f"{2**63}.jsonl", lines)
    line = cli_error(capsys, "summarize", folder, *LABELS)
    assert f"{2**63}.jsonl" in line and "64-bit" in line
    # a NeMo-Skills seed in the file name
    p = write_lines(tmp_path / f"output-rs{2**64}.jsonl", mf.nemo_rs0_lines())
    line = cli_error(capsys, "summarize", p, *LABELS)
    assert str(p) in line and "seed" in line and "64-bit" in line
    with raises_with(file=p, key="seed", value=str(2**64)):
        H.nemo_seed(p)
    # a verl step in a line
    rec = json.loads(lines[1])
    rec["step"] = 2**64 - 1
    p = write_lines(tmp_path / "5.jsonl", [lines[0], rec, *lines[2:]])
    line = cli_error(capsys, "summarize", p, *LABELS)
    assert f"{p}: line 2" in line and "'step'" in line and str(2**64 - 1) in line
    # an inspect epoch
    members = mf._inspect_members()
    members["samples/2_epoch_2.json"]["epoch"] = 2**63
    p = write_eval(tmp_path / "e.eval", members)
    line = cli_error(capsys, "summarize", p)
    assert "member samples/2_epoch_2.json" in line and "'epoch'" in line


def test_verl_scores_of_nan_or_infinity_are_refused_with_file_and_line(tmp_path, capsys):
    lines = mf.verl_plain_lines()  # no `acc`: the score is the verdict
    for value in ("NaN", "Infinity", "-Infinity", "1e999"):
        bad = json.loads(lines[3])
        text = json.dumps(bad).replace(f'"score": {bad["score"]}', f'"score": {value}')
        p = write_lines(tmp_path / "8.jsonl", [*lines[:3], text, *lines[4:]])
        for rule in (None, "positive", "full"):
            argv = ("--correct-rule", rule) if rule else ()
            line = cli_error(capsys, "summarize", p, *LABELS, *argv)
            assert f"{p}: line 4: field 'score'" in line, (value, line)


def test_a_column_twice_in_a_lighteval_parquet_file_is_refused(tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "details_gsm8k_2025-01-15T10-20-30.123456.parquet"
    pq.write_table(pa.Table.from_arrays(
        [pa.array([{"id": "1"}]), pa.array([{"text": ["a"]}]), pa.array([{"text": ["b"]}]),
         pa.array([{"x": 1}])], names=["doc", "model_response", "model_response", "metric"]), p)
    line = cli_error(capsys, "summarize", p, "--fmt", "lighteval", "--model", "m")
    assert str(p) in line and "'model_response'" in line and "twice" in line
