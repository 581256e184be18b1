"""Bad input to the runners (`leash reproduce`, `leash simulate`): one line, exit 2.

Bad-input classes and the tests that cover them:

* `leash simulate --seed -1` (a traceback before): test_simulate_negative_seed
* `leash simulate --check --out <missing folder>`: test_simulate_check_missing_folder
* a usage error prints one line, not the usage block: test_usage_errors_are_one_line
* `reproduce --outdir <an existing file>`: test_outdir_is_a_file
* `reproduce --build <a folder that cannot be written>`: test_build_cannot_be_written,
  test_build_read_only_folder
* Ctrl-C during reproduce, or SIGTERM (to the group or the runner alone): one line, exit 130
  or 143, records intact, the lock released, no process left, no run started after it:
  test_ctrl_c_is_one_line_exit_130_records_intact (one job and two jobs; pressed twice; a
  worker idle), test_ctrl_c_while_the_workers_start,
  test_a_ctrl_c_while_a_worker_starts_is_held_then_raised_in_the_parent_only
* two runs into one output folder: the second is refused while the first holds the lock:
  test_second_run_into_the_same_folder_is_refused
* a relative `--outdir` from another working directory: artifacts and index in one place:
  test_relative_outdir_resolved_once
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _support import processes
from leash_eval.cli import main as leash_main
from leash_eval.cli import main_simulate
from leash_eval.run import reproduce

HERE = Path(__file__).resolve().parent
TINY = HERE / "notebooks" / "tiny.ipynb"


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_simulate_negative_seed(capsys):
    with pytest.raises(SystemExit) as info:
        leash_main(["simulate", "--seed", "-1"])
    assert info.value.code == 2
    line = one_line(capsys.readouterr().err)
    assert line == ("leash simulate: error: argument --seed: must be an integer >= 0, got -1 "
                    "(see leash simulate --help)")


def test_simulate_check_missing_folder(capsys, tmp_path):
    assert main_simulate(["--check", "--out", str(tmp_path / "nope")]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"leash simulate: error: --out {tmp_path / 'nope'}: no such folder")
    (tmp_path / "file").write_text("x")
    assert main_simulate(["--out", str(tmp_path / "file")]) == 2
    assert "not a folder" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("argv, expected", [
    (["passk", "--k", "0", "x.jsonl"], "leash passk: error: argument --k: must list integers"),
    (["frobnicate"], "leash: error: argument COMMAND: invalid choice: 'frobnicate'"),
])
def test_usage_errors_are_one_line(capsys, argv, expected):
    with pytest.raises(SystemExit) as info:
        leash_main(argv)
    assert info.value.code == 2
    assert one_line(capsys.readouterr().err).startswith(expected)
    with pytest.raises(SystemExit):
        reproduce.main(["--jobs", "x"])
    assert one_line(capsys.readouterr().err).startswith(
        "leash reproduce: error: argument --jobs: invalid int value: 'x'")


def test_outdir_is_a_file(capsys, tmp_path):
    target = tmp_path / "figures.txt"
    target.write_text("not a folder")
    assert reproduce.main(["--only", "08", "--outdir", str(target),
                           "--build", str(tmp_path / "b")]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"leash reproduce: --outdir {target}: is a file, not a folder.")
    assert not (tmp_path / "b" / "08_paper_audit.ipynb").exists()  # nothing ran


def test_build_cannot_be_written(capsys, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a parent folder should be")
    assert reproduce.main(["--only", "08", "--outdir", str(tmp_path / "o"),
                           "--build", str(blocker / "build")]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"leash reproduce: --build {blocker / 'build'}: cannot write there (")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root can write into a read-only folder")
def test_build_read_only_folder(capsys, tmp_path):  # pragma: no cover - not run as root
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert reproduce.main(["--only", "08", "--outdir", str(tmp_path / "o"),
                               "--build", str(ro)]) == 2
        assert "cannot write there (Permission denied)" in one_line(capsys.readouterr().err)
    finally:
        ro.chmod(0o755)


_BORN_INTERRUPTED = """
import signal
from leash_eval.processes import forkserver_context

def child(queue):
    queue.put(signal.getsignal(signal.SIGINT) == signal.SIG_IGN)

if __name__ == "__main__":
    ctx = forkserver_context()
    queue = ctx.SimpleQueue()
    p = ctx.Process(target=child, args=(queue,))
    p.start()
    print(queue.get())
    p.join()
"""


_HELD = """
import os, signal
from leash_eval.processes import Terminated, signals_held, sigterm_raises
for sig in (signal.SIGINT, signal.SIGTERM):
    try:
        with sigterm_raises(), signals_held():
            os.kill(os.getpid(), sig)
            print("noted")
    except KeyboardInterrupt as exc:
        print(type(exc).__name__)
"""


@pytest.mark.skipif(os.name != "posix", reason="needs a fork server")
def test_a_ctrl_c_while_a_worker_starts_is_held_then_raised_in_the_parent_only(tmp_path):
    """A worker's process starts with SIGINT ignored, from its very first instruction (its
    fork server was started so): a Ctrl-C while it imports Python's modules prints no
    traceback (one did, about 1.4 s after the start of a run with two jobs). The runner's
    Ctrl-C or SIGTERM while it starts its workers waits until they are started (one arriving
    between a worker's start and the data it reads first made the worker print "EOFError:
    Ran out of input") and then acts as it would have, not lost."""
    (tmp_path / "born.py").write_text(_BORN_INTERRUPTED)
    proc = subprocess.run([sys.executable, str(tmp_path / "born.py")], capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.split() == ["True"], proc.stderr
    proc = subprocess.run([sys.executable, "-c", _HELD], capture_output=True, text=True,
                          timeout=60)
    assert proc.stdout.split() == ["noted", "KeyboardInterrupt", "noted", "Terminated"], \
        proc.stderr


def test_second_run_into_the_same_folder_is_refused(capsys, tmp_path):
    out = tmp_path / "fig"
    out.mkdir()
    with reproduce._lock(out):
        assert (out / reproduce.LOCK_NAME).read_text().strip() == str(os.getpid())
        assert reproduce.main(["--only", "08", "--outdir", str(out),
                               "--build", str(tmp_path / "b")]) == 2
        line = one_line(capsys.readouterr().err)
        assert line == (f"leash reproduce: --outdir {out}: another reproduce run (pid "
                        f"{os.getpid()}) is writing there; wait for it to finish, or choose "
                        f"another --outdir.")
    with reproduce._lock(out):  # released: it can be taken again
        pass


@pytest.mark.slow  # one kernel
def test_relative_outdir_resolved_once(tmp_path, monkeypatch):
    folder = tmp_path / "nbs"
    folder.mkdir()
    shutil.copy(TINY, folder / "00_tiny.ipynb")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    results = reproduce.run_all([("00_tiny", {})], directory=folder, outdir="rel-out",
                                build="rel-build", stream=io.StringIO())
    assert [r.status for r in results] == ["ok"]
    out = elsewhere / "rel-out"
    assert (out / "tiny_table.csv").is_file() and (out / "README.md").is_file()
    assert (out / ".artifacts" / "00_tiny.json").is_file()
    assert (elsewhere / "rel-build" / "00_tiny.ipynb").is_file()
    assert "| `tiny_table` |" in (out / "README.md").read_text()


_SLEEPER = """
import nbformat, sys
from pathlib import Path
d, first = Path(sys.argv[1]), sys.argv[2]  # seconds the first notebook sleeps
for stem in ("00_a", "01_b"):
    cells = [nbformat.v4.new_code_cell('outdir: str = "figures"  # artifact folder',
                                       metadata={"tags": ["parameters"]}),
             nbformat.v4.new_code_cell(
                 f"import os, pathlib, time\\n"
                 f"pathlib.Path(r'{d}/started-{stem}').write_text(str(os.getpid()))\\n"
                 f"time.sleep({first if stem == '00_a' else 120})")]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "language": "python", "display_name": "Python 3"}})
    nbformat.write(nb, d / f"{stem}.ipynb")
"""

def _ended(proc, nbs: Path, deadline: float) -> tuple[str, list[str]]:
    """Wait for a stopped run: (its stderr, the processes of it still there at ``deadline``,
    given time to end after the runner did)."""
    _, err = proc.communicate(timeout=60)
    left = _left(proc.pid, nbs)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _left(proc.pid, nbs)
    return err, left


def _left(sid: int, nbs: Path) -> list[str]:
    """The processes of a run still there: those of its session ``sid`` (the runner's workers)
    and its kernels (jupyter_client starts each in a session of its own; each wrote its pid)."""
    kernels = {int(f.read_text()) for f in nbs.glob("started-*") if f.read_text().isdigit()}
    return [line for line in processes() if int(line.split()[0]) == sid
            or int(line.split()[1]) in kernels]


_RUN = """
import sys
from pathlib import Path
import leash_eval.run.reproduce as r
if __name__ == "__main__":
    r.NOTEBOOKS = Path(sys.argv[1])
    sys.exit(r.main(sys.argv[2:]))
"""


@pytest.mark.slow  # one or two kernels, interrupted after they start: about 5 s
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups")
@pytest.mark.parametrize("jobs, sig, group, times, idle", [
    (1, "SIGINT", True, 1, False), (2, "SIGINT", True, 1, False), (2, "SIGINT", True, 2, False),
    (2, "SIGTERM", True, 1, True), (2, "SIGTERM", False, 1, False)])
def test_ctrl_c_is_one_line_exit_130_records_intact(tmp_path, jobs, sig, group, times, idle):
    """Ctrl-C (SIGINT to the process group; ``times`` 2: pressed twice), SIGTERM to the group
    (a system's stop) or to the runner alone (``kill``, ``timeout``): one line, exit 130 or
    143, the records of the runs put back, the lock released, and no process of the run left.
    Before: SIGTERM to the runner alone left its workers running their notebooks; Ctrl-C twice
    left the runner waiting forever; SIGTERM to the group with a worker ``idle`` (its notebook
    done) too."""
    nbs, out = tmp_path / "nbs", tmp_path / "fig"
    nbs.mkdir()
    subprocess.run([sys.executable, "-c", _SLEEPER, str(nbs), "0" if idle else "120"],
                   check=True)
    (tmp_path / "run.py").write_text(_RUN)
    previous = b'[{"previous": "records of an earlier run"}]\n'
    for stem in ("00_a", "01_b"):
        (out / ".artifacts").mkdir(parents=True, exist_ok=True)
        (out / ".artifacts" / f"{stem}.json").write_bytes(previous)
    # a new session, like a terminal's foreground job: Ctrl-C signals the whole group
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "run.py"), str(nbs), "--outdir", str(out),
         "--build", str(tmp_path / "build"), "--jobs", str(jobs)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while len(list(nbs.glob("started-*"))) < jobs:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the notebooks never started"
            time.sleep(0.2)
        while idle and (out / ".artifacts" / "00_a.json").read_bytes() == previous:
            assert time.monotonic() < deadline, "the first notebook never ended"
            time.sleep(0.2)  # then its worker waits for another run
        time.sleep(0.5 if idle else 0)
        for i in range(times):
            time.sleep(0.1 * i)
            (os.killpg if group else os.kill)(proc.pid, getattr(signal, sig))
        err, left = _ended(proc, nbs, deadline)
    finally:
        if proc.poll() is None or _left(proc.pid, nbs):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == (130 if sig == "SIGINT" else 143), err
    assert "Traceback" not in err and "Kernel died" not in err, err
    what = "interrupted" if sig == "SIGINT" else "terminated"
    assert err.strip().splitlines()[-1] == (
        f"leash reproduce: {what}; the interrupted runs keep their earlier artifact records "
        "and the index was not rewritten.")
    assert not left, left
    if jobs == 1:  # no run starts after the stop
        assert not (nbs / "started-01_b").exists()
    for stem in ("01_b",) if idle else ("00_a", "01_b"):
        assert (out / ".artifacts" / f"{stem}.json").read_bytes() == previous, stem
    with reproduce._lock(out):  # the interrupted run released its lock
        pass
    assert not (out / "README.md").exists()


@pytest.mark.slow  # two workers, interrupted while they start
@pytest.mark.skipif(not hasattr(os, "killpg"), reason="needs POSIX process groups")
def test_ctrl_c_while_the_workers_start(tmp_path):
    """Ctrl-C as soon as the runner's first worker process exists (it then imports Python's
    modules for a while): one line, exit 130, no traceback of the worker, nothing left, no
    notebook started."""
    nbs, out = tmp_path / "nbs", tmp_path / "fig"
    nbs.mkdir()
    subprocess.run([sys.executable, "-c", _SLEEPER, str(nbs), "120"], check=True)
    (tmp_path / "run.py").write_text(_RUN)
    proc = subprocess.Popen(
        [sys.executable, str(tmp_path / "run.py"), str(nbs), "--outdir", str(out),
         "--build", str(tmp_path / "build"), "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while len([ln for ln in processes() if int(ln.split()[0]) == proc.pid]) < 2:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no worker started"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)
        err, left = _ended(proc, nbs, deadline)
    finally:
        if proc.poll() is None or _left(proc.pid, nbs):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(
        "leash reproduce: interrupted;"), err
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    assert not left, left
    assert not list(nbs.glob("started-*"))


_MARKDOWN = """---
jupyter:
  kernelspec:
    display_name: Python 3
    language: python
    name: python3
---

# Notebook {stem}

```python tags=["parameters"]
k: int = 1  # a budget
```

```python
print(k)
```
"""


def _markdown_notebooks(folder: Path, *stems: str) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for stem in stems:
        out[stem] = folder / f"{stem}.md"
        out[stem].write_text(_MARKDOWN.format(stem=stem), encoding="utf-8")
    return out


@pytest.mark.parametrize("where, suffix", [("header", ".md"), ("cell", ".md"),
                                           ("cell", ".ipynb")])
def test_a_notebook_that_is_not_utf8_is_one_line_naming_it(capsys, tmp_path, monkeypatch,
                                                           where, suffix):
    """A byte that is not UTF-8 in another notebook (in its front matter, which discovery
    reads, or in a cell): one line naming the file, its line and the byte, exit 2, before any
    kernel; a run that does not include that notebook is not concerned. Before: a traceback,
    or "'utf-8' codec can't decode byte 0xff in position 4715" naming no file (exit 1)."""
    nbs = tmp_path / "nbs"
    paths = _markdown_notebooks(nbs, "00_a", "01_b")
    bad = paths["01_b"]
    if suffix == ".ipynb":
        import jupytext

        bad.unlink()
        bad = nbs / "01_b.ipynb"
        jupytext.write(jupytext.reads(_MARKDOWN.format(stem="01_b"), fmt="md"), bad)
    text = bad.read_bytes()
    at = text.index(b"display_name" if where == "header" else b"print(k)")
    bad.write_bytes(text[:at] + b"\xff" + text[at:])
    line = text[:at].count(b"\n") + 1
    monkeypatch.setattr(reproduce, "NOTEBOOKS", nbs)
    for argv in (["--list"], ["--outdir", str(tmp_path / "o"), "--build", str(tmp_path / "b")]):
        assert reproduce.main(argv) == 2
        assert one_line(capsys.readouterr().err) == (
            f"leash reproduce: {bad}: line {line}: byte 0xff is not UTF-8 text; a notebook is "
            "UTF-8 (save it again as UTF-8).")
    assert not (tmp_path / "b").exists()
    assert reproduce.main(["--only", "00", "--list"]) == 0
    assert capsys.readouterr().out.startswith("00_a\n")


def test_an_ipynb_edited_outside_jupyterlab_is_refused_naming_the_fix(capsys, tmp_path,
                                                                      monkeypatch):
    """The .ipynb paired with a Markdown notebook is newer and has other cells (a source, a
    tag): one line per notebook naming both files and `jupytext --sync`, exit 2, before any
    kernel; the same cells (make install wrote it, or a run saved its outputs), or an older
    .ipynb, are no problem. Before: the Markdown ran silently without the edit."""
    import jupytext
    import nbformat

    nbs = tmp_path / "nbs"
    paths = _markdown_notebooks(nbs, "00_a", "01_b", "02_c")
    for stem, md in paths.items():
        nb = jupytext.read(md)
        nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
        if stem == "01_b":
            nb.cells[-1].source = "print(k + 1)"  # an edit of a cell
        if stem == "02_c":
            nb.cells[1].metadata["tags"] = []  # no parameters cell any more
        jupytext.write(nb, md.with_suffix(".ipynb"), fmt="ipynb")
        os.utime(md, (1e9, 1e9))  # the .ipynb is newer
    assert reproduce._edited_pair(paths["00_a"]) is None  # same cells, outputs aside
    monkeypatch.setattr(reproduce, "NOTEBOOKS", nbs)
    assert reproduce.main(["--outdir", str(tmp_path / "o"), "--build", str(tmp_path / "b")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"leash reproduce: {nbs / stem}.ipynb is newer than {nbs / stem}.md, the notebook's "
        f"source that runs here, and has other cells: edited outside JupyterLab? `jupytext "
        f"--sync {nbs / stem}.ipynb` takes its cells into the Markdown (or delete it to run "
        "the Markdown as it is)." for stem in ("01_b", "02_c")]
    assert not (tmp_path / "b").exists()
    os.utime(paths["01_b"])  # the Markdown is newer: it is the source, and make writes the pair
    assert reproduce._edited_pair(paths["01_b"]) is None
    (nbs / "02_c.ipynb").write_text("{not json")
    assert "02_c.ipynb is newer than" in reproduce._edited_pair(paths["02_c"])
    assert "and cannot be read (" in reproduce._edited_pair(paths["02_c"])
