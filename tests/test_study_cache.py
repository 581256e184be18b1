"""The study cache (leash_eval.studies) is named and filled from one read (issue 35, class 3):
a source replaced between its hashing and its reading (deterministically: the reader is
patched to replace it first) is read again, and no entry ever holds the numbers of another
content than its name says; a corrupt entry is discarded with a warning, never trusted and
never blocking a check. The same for the rescored files of `rescore:` sources.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

import pytest

from _support import needs_mv
from leash_eval import manifest as mf
from leash_eval import studies
from leash_eval.summarize import load_counts
from test_study_check import _counts


@pytest.fixture
def two_contents(tmp_path):
    """``counts.csv`` (content A) and, beside it, content B (other numbers, same models)."""
    a = _counts(tmp_path, seed=0)
    other = tmp_path / "other"
    other.mkdir()
    b = _counts(other, seed=1)
    assert a.read_bytes() != b.read_bytes()
    return a, b


def _swapping(monkeypatch, target: Path, replacement: Path, times: int = 1):
    """Patch the reader of the cache: its first ``times`` calls replace ``target`` by a copy of
    ``replacement`` (os.replace, as an editor or a sync tool does) and then read."""
    calls = {"n": 0}

    def swap_then_read(*args, **kw):
        calls["n"] += 1
        if calls["n"] <= times:
            tmp = target.with_name(f".swap{calls['n']}")
            shutil.copyfile(replacement, tmp)
            os.replace(tmp, target)
        return load_counts(*args, **kw)

    monkeypatch.setattr(studies, "load_counts", swap_then_read)
    return calls


def _entries(cache: Path) -> list:
    return sorted(cache.glob("*.parquet"))


@pytest.mark.slow
def test_a_source_replaced_while_it_is_read_is_read_again(tmp_path, two_contents, monkeypatch):
    a, b = two_contents
    want_a, want_b = load_counts([a]), load_counts([b])
    saved_a = tmp_path / "a.saved"
    shutil.copyfile(a, saved_a)
    cache = tmp_path / "cache"
    calls = _swapping(monkeypatch, a, b)
    got = studies.cached_counts(a, cache_dir=cache)
    assert calls["n"] == 2  # the first read was of a file that changed under it: read again
    assert got[["model", "question_id", "c"]].equals(want_b[["model", "question_id", "c"]])
    [entry] = _entries(cache)
    # the file is B now: the one entry is B's, read back
    monkeypatch.setattr(studies, "load_counts", load_counts)
    assert studies.cached_counts(a, cache_dir=cache).equals(got) and _entries(cache) == [entry]
    # A again: A's numbers, a new entry (before: B's numbers under A's name, read silently)
    shutil.copyfile(saved_a, a)
    again = studies.cached_counts(a, cache_dir=cache)
    assert again[["model", "question_id", "c"]].equals(want_a[["model", "question_id", "c"]])
    assert len(_entries(cache)) == 2


def test_a_source_that_keeps_changing_is_an_error_and_nothing_is_stored(tmp_path, two_contents,
                                                                       monkeypatch):
    a, b = two_contents
    flip = [b, a]

    def always(*args, **kw):
        src = flip[0]
        flip.reverse()
        tmp = a.with_name(".flip")
        shutil.copyfile(src, tmp)
        os.replace(tmp, a)
        return load_counts(*args, **kw)

    monkeypatch.setattr(studies, "load_counts", always)
    with pytest.raises(OSError, match="changed while it was read") as e:
        studies.cached_counts(a, cache_dir=tmp_path / "cache")
    assert str(a) in str(e.value)
    assert not _entries(tmp_path / "cache") if (tmp_path / "cache").exists() else True


@pytest.mark.slow
def test_a_yaml_mapping_replaced_while_it_is_read_is_read_again(tmp_path, monkeypatch):
    """The mapping file is part of the name too: the same rule for it."""
    import json

    src = tmp_path / "gen.jsonl"
    src.write_text("".join(json.dumps({"m": "base", "b": "math500", "q": f"q{i}",
                                       "ok": [i % 2 == 1] * 2, "yes": [True] * 2}) + "\n"
                           for i in range(6)))
    mapping = tmp_path / "map.yaml"
    mapping.write_text("model: m\nbenchmark: b\nquestion_id: q\ncorrect: ok\n")
    other = tmp_path / "other.yaml"
    other.write_text("model: m\nbenchmark: b\nquestion_id: q\ncorrect: \"yes\"\n")
    kw = dict(fmt="nested", mapping=str(mapping))
    with_other = load_counts([src], **{**kw, "mapping": str(other)})
    _swapping(monkeypatch, mapping, other)
    got = studies.cached_counts(src, cache_dir=tmp_path / "cache", **kw)
    assert got["c"].tolist() == with_other["c"].tolist() == [2] * 6
    monkeypatch.setattr(studies, "load_counts", load_counts)
    mapping.write_text("model: m\nbenchmark: b\nquestion_id: q\ncorrect: ok\n")  # back
    assert studies.cached_counts(src, cache_dir=tmp_path / "cache", **kw)["c"].tolist() == \
        [0, 2, 0, 2, 0, 2]


def test_study_init_stores_what_it_read_under_the_name_of_what_it_read(tmp_path, two_contents):
    """study init reads, then stores once it knows the study: a file replaced in between is
    not stored under its new content's name with the old numbers."""
    a, b = two_contents
    frame = studies.read_counts(a)
    shutil.copyfile(b, a)  # replaced after the read, before the store
    cache = tmp_path / "cache"
    studies.store_counts(frame, a, cache_dir=cache)
    got = studies.cached_counts(a, cache_dir=cache)  # B now: not the entry stored (A's)
    assert got[["model", "question_id", "c"]].equals(
        load_counts([b])[["model", "question_id", "c"]])
    assert len(_entries(cache)) == 2


@pytest.mark.parametrize("damage", ["garbage", "truncated", "another entry"])
def test_a_corrupt_entry_is_discarded_with_a_warning(tmp_path, two_contents, damage):
    a, b = two_contents
    cache = tmp_path / "cache"
    want = studies.cached_counts(a, cache_dir=cache)
    [entry] = _entries(cache)
    if damage == "garbage":
        entry.write_bytes(b"PAR1 not a summary")
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])
    else:  # a valid summary, but of B: not the entry its name says
        studies.cached_counts(b, cache_dir=tmp_path / "b")
        [other] = _entries(tmp_path / "b")
        shutil.copyfile(other, entry)
    with pytest.warns(UserWarning, match="corrupt") as w:
        got = studies.cached_counts(a, cache_dir=cache)
    assert str(entry) in str(w[0].message)
    assert got.equals(want) and entry.is_file()  # read again, stored again
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the entry is sound again
        assert studies.cached_counts(a, cache_dir=cache).equals(want)


def test_study_check_goes_on_past_a_corrupt_entry(tmp_path, capsys, cached):
    """One warning line and the check's own result, not an error for every check after."""
    from leash_eval.cli import main
    from test_study_check import _init

    study, _ = _init(capsys, tmp_path)
    assert main(["study", "check", str(study)]) == 0
    capsys.readouterr()
    entries = sorted(cached.rglob(".summaries/*.parquet"))
    assert entries
    for e in entries:
        e.write_bytes(b"garbage")
    assert main(["study", "check", str(study)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == len(entries) and "Traceback" not in err, err


@pytest.mark.slow
@needs_mv
def test_a_rescored_source_replaced_while_it_is_graded_is_graded_again(tmp_path, monkeypatch):
    from leash_eval import rescore as rs
    from leash_eval.rescore import stream
    from test_rescore_stream import RECORDS, _evaluator_file

    f = _evaluator_file(tmp_path / "eval.jsonl")
    one = _evaluator_file(tmp_path / "one.jsonl", RECORDS[:1])
    real = stream.rescore_inputs
    calls = {"n": 0}

    def swap_then_grade(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            shutil.copyfile(one, f)
        return real(*args, **kw)

    monkeypatch.setattr(stream, "rescore_inputs", swap_then_grade)
    kw = dict(reader={"fmt": "evaluator", "model": "m", "benchmark": "b"},
              cache_dir=tmp_path / "cache", jobs=1)
    out = rs.rescored_path(f, **kw)
    import pyarrow.parquet as pq

    assert calls["n"] == 2 and pq.read_table(out).num_rows == 4  # one question: 4 samples
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [out.name]
    monkeypatch.setattr(stream, "rescore_inputs", real)
    assert rs.rescored_path(f, **kw) == out
    assert rs.rescored_path(one, **kw).name.split(".")[1] == out.name.split(".")[1]


def test_file_state_sees_a_replacement_with_the_same_bytes(tmp_path):
    """A file replaced by the same bytes is another file (inode, change time): a read that
    straddles it is not trusted either."""
    p = tmp_path / "x.csv"
    p.write_text("a\n")
    before = mf.file_state(p)
    tmp = tmp_path / ".x"
    tmp.write_text("a\n")
    os.replace(tmp, p)
    after = mf.file_state(p)
    assert before[0] == after[0] and before != after


# ---- `leash study` stops as every command does (issue 35, class 8) --------------------------

_STOPPING = """
import os, signal, sys
from leash_eval import studies
real = studies.load_counts
SIG, WHERE = getattr(signal, sys.argv[1]), sys.argv[2]
def stopped(*args, **kw):  # the signal arrives while the check reads a file
    if WHERE == "python":
        os.kill(os.getpid(), SIG)
        return real(*args, **kw)
    try:  # in a DuckDB query, which stops and says so in its own words, losing the signal's
        os.kill(os.getpid(), SIG)
        return real(*args, **kw)
    except KeyboardInterrupt:
        raise RuntimeError("Query interrupted") from None
studies.load_counts = stopped
import pathlib, leash.sources.study as study_mod  # the cache under the test's folder
study_mod.study_folder = lambda name: pathlib.Path.cwd() / "build" / name
sys.argv = ["leash", *sys.argv[3:]]
from leash_eval.cli import console
console()
"""


@pytest.mark.slow
@pytest.mark.parametrize("sig, code, word", [("SIGTERM", 143, "terminated"),
                                             ("SIGINT", 130, "interrupted")])
@pytest.mark.parametrize("where", ["python", "duckdb"])
@pytest.mark.parametrize("argv", [["study", "check"], ["-q", "study", "check"]])
def test_a_signal_during_study_check_is_one_line(tmp_path, sig, code, word, where, argv):
    import subprocess
    import sys

    from test_study_check import BASE, RL

    _counts(tmp_path)
    study = tmp_path / "s.yaml"
    study.write_text("name: sig\ntitle: signals\nbenchmarks:\n  math500: {domain: math, "
                     "budget: 8}\nsections:\n  support:\n    sources:\n      - path: counts.csv"
                     f"\n    pairs:\n      - {{label: p, base: {BASE}, rl: {RL}}}\n")
    proc = subprocess.run([sys.executable, "-c", _STOPPING, sig, where, *argv, str(study)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.strip() == f"leash study: {word}", proc.stderr


@pytest.mark.slow
def test_quiet_before_study_is_its_quiet(tmp_path, capsys):
    """`leash -q study check` (a KeyError before): the check, without its closing note;
    `leash -q reproduce` is one line: reproduce has no quiet mode."""
    from leash_eval.cli import main

    assert main(["-q", "study", "check", "demo"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["--quiet", "study", "check", str(tmp_path / "absent.yaml")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "absent.yaml" in err, err
    assert main(["-q", "reproduce", "--list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "-q/--quiet" in err, err
