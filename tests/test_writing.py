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

import pytest

from _support import rec, write_lines

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
