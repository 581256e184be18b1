"""Every output a user names is written whole or not at all (leash.writing): a writer killed
with SIGKILL at its first change of the target, or stopped by a full disk (ENOSPC), leaves the
previous file (or folder) as it was, and nothing half-written under the target's name.

The kill is put where it hurts most and deterministically: the writer (pyarrow's
``write_table``, patched in a child process) opens its destination as the real one does,
writes a few bytes, then kills its own process.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _support import HAVE_MV, rec, write_lines

# A child process whose pyarrow writer dies at the first bytes it writes (SIGKILL) or meets a
# full disk (ENOSPC) there; then it runs the code given.
_CHILD = """
import errno, os, signal, sys
import pyarrow.parquet as pq

MODE = sys.argv[1]

def broken_write_table(table, where, *args, **kwargs):
    with open(where, "wb") as fh:  # what the real writer does first: truncate the destination
        fh.write(b"PAR1")
        fh.flush()
        if MODE == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(where))

pq.write_table = broken_write_table
"""


def run_child(mode: str, code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _CHILD + textwrap.dedent(code), mode],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["kill", "enospc"])
def test_summarize_out_keeps_the_previous_file(tmp_path, mode):
    from leash_eval.summarize import read_summary, summarize

    src = write_lines(tmp_path / "g.jsonl", [rec(q=f"q{j}", i=i) for j in range(3)
                                             for i in range(2)])
    out = tmp_path / "s.parquet"
    summarize(src, out=out)
    before = out.read_bytes()
    proc = run_child(mode, f"""
        from leash_eval.cli import main
        sys.exit(main(["summarize", {str(src)!r}, "--out", {str(out)!r}]))
    """, tmp_path)
    assert proc.returncode == (-9 if mode == "kill" else 2), proc.stderr
    if mode == "enospc":
        assert "No space left on device" in proc.stderr and "Traceback" not in proc.stderr
    assert out.read_bytes() == before
    assert read_summary(out).n.tolist() == [2, 2, 2]
    if mode == "enospc":  # an error cleans up after itself; a SIGKILL cannot (next test)
        assert leftovers(tmp_path) == []


def test_a_killed_writers_temporary_is_removed_by_the_next_write(tmp_path):
    from leash.writing import write_text

    out = tmp_path / "t.txt"
    stale = tmp_path / ".t.txt.999999999.abcd.tmp"  # a pid above any pid_max: not running
    stale.write_text("half")
    live = tmp_path / f".t.txt.{os.getpid()}.abcd.tmp"  # a live writer's: kept
    live.write_text("busy")
    write_text(out, "whole")
    assert out.read_text() == "whole" and leftovers(tmp_path) == [live.name]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["kill", "enospc"])
def test_simulate_out_keeps_the_previous_folder(tmp_path, mode):
    from leash.sources.demo import DEMO_FILES

    out = tmp_path / "demo"
    # a fresh folder: nothing is left under its name
    proc = run_child(mode, f"""
        from leash_eval.cli import main_simulate
        sys.exit(main_simulate(["--out", {str(out)!r}]))
    """, tmp_path)
    assert proc.returncode == (-9 if mode == "kill" else 2), proc.stderr
    assert not out.exists()
    # an existing folder: its files unchanged (seed 7 would change every one of them)
    assert _simulate(out) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == sorted(f"{n}.parquet" for n in DEMO_FILES)
    proc = run_child(mode, f"""
        from leash_eval.cli import main_simulate
        sys.exit(main_simulate(["--out", {str(out)!r}, "--seed", "7"]))
    """, tmp_path)
    assert proc.returncode == (-9 if mode == "kill" else 2), proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def _simulate(out) -> int:
    from leash_eval.cli import main_simulate

    return main_simulate(["--out", str(out)])


def test_report_writer_keeps_the_previous_file_on_a_full_disk(tmp_path, monkeypatch):
    import leash.writing as W

    out = tmp_path / "t.csv"
    W.write_text(out, "old\n")

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(W.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        W.write_text(out, "new\n")
    assert out.read_text() == "old\n" and leftovers(tmp_path) == []


# ---- a name planted in advance is never written through (issue 35, class 10) -----------------

@pytest.fixture
def planted(tmp_path, monkeypatch):
    """Temporary names made predictable: tempfile's first candidate is always "x", then fresh
    ones; ``plant(target)`` puts a symlink to a victim file at every name a writer of
    ``target`` could pick first (``.NAME.PID.x.tmp``, and the old ``.NAME.PID.tmp``).
    """
    import itertools
    import tempfile

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    counter = itertools.count()

    def names():
        yield "x"
        while True:
            yield f"fresh{next(counter)}"

    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names())

    def plant(target):
        target = Path(target)
        links = [target.with_name(f".{target.name}.{os.getpid()}.x.tmp"),
                 target.with_name(f".{target.name}.{os.getpid()}.tmp")]
        for link in links:
            link.symlink_to(victim)
        return links

    return victim, plant


def _mode(path) -> int:
    return path.stat().st_mode & 0o777


def test_no_writer_writes_through_a_planted_name(tmp_path, planted):
    """Every writer: the rescored file (JSONL and Parquet), a summary, a file and a folder of
    leash.writing, a study file of study init; the victim is untouched, the outputs are regular
    files with the mode open() gives under the umask, and the planted links are left alone.
    """
    import pandas as pd

    from leash.writing import replacing_folder, write_text
    from leash_eval.study_init import StudyDraft, write_study
    from leash_eval.summarize import read_summary, summarize, write_summary

    victim, plant = planted
    umask = os.umask(0o022)
    os.umask(umask)
    want = 0o666 & ~umask
    outs = []
    text = tmp_path / "t.txt"
    plant(text)
    write_text(text, "whole\n")
    outs.append(text)
    src = write_lines(tmp_path / "g.jsonl", [rec(q=f"q{j}", i=i) for j in range(3)
                                             for i in range(2)])
    summary = tmp_path / "s.parquet"
    plant(summary)
    write_summary(summarize(src), summary)
    assert read_summary(summary).n.tolist() == [2, 2, 2]
    outs.append(summary)
    folder = tmp_path / "folder"
    plant(folder)
    with replacing_folder(folder) as tmp:
        (tmp / "a.txt").write_text("a")
    assert (folder / "a.txt").read_text() == "a" and not folder.is_symlink()
    study = tmp_path / "my.yaml"
    plant(study)
    write_study(StudyDraft("name: my\n", "my", [], []), study)
    outs.append(study)
    if HAVE_MV:  # the rescored file
        from leash_eval import rescore as rs
        from test_rescore_stream import _evaluator_file

        f = _evaluator_file(tmp_path / "eval.jsonl")
        for name in ("o.jsonl", "o.parquet"):
            out = tmp_path / name
            plant(out)
            rs.rescore_file(f, out, fmt="evaluator", model="m", benchmark="b", jobs=1)
            outs.append(out)
        assert len(pd.read_json(tmp_path / "o.jsonl", lines=True)) == 12
    assert victim.read_text() == "precious\n"
    for out in outs:
        assert out.is_file() and not out.is_symlink() and _mode(out) == want, out
    assert all(p.is_symlink() for p in tmp_path.glob(".*.x.tmp"))


def test_a_lock_file_is_never_opened_through_a_symlink(tmp_path):
    """The locks of `leash generate` and `leash reproduce` have names known in advance: a
    symlink there is refused (one OSError naming it), the file it names untouched.
    """
    from leash.writing import open_lock

    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    lock = tmp_path / ".reproduce.lock"
    lock.symlink_to(victim)
    with pytest.raises(OSError, match="symlink") as e:
        open_lock(lock)
    assert str(lock) in str(e.value) and victim.read_text() == "precious\n"
    fresh = tmp_path / "out.parquet.lock"
    with open_lock(fresh) as fh:
        fh.write("1\n")
    assert fresh.read_text() == "1\n" and not fresh.is_symlink()
