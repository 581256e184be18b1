"""`make site` never loses the previous site and never writes where it should not (issue 35,
classes 6 and 9): the site is written beside its folder and exchanged with it once complete,
so a SIGKILL, a SIGTERM (one line, 143) or an error at any point leaves the previous site; its
folder is resolved before anything is replaced (a symlink under build/ does not lead the
replacement outside), and is never the folder the site shows nor one of leash's own; no study
is named after one of leash's own folders or runs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from leash_eval.run import site
from test_site import study  # noqa: F401 (the fixture: an output folder with three runs)


def _tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _leftovers(folder: Path) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def previous(study, tmp_path):  # noqa: F811
    """A site built once: ``(figs, build, out, its files)``; then a second, different build
    (one run fewer) is what is interrupted."""
    figs, build, _ = study
    out = tmp_path / "build" / "site"
    site.build_site(figs, build, out, api=False)
    return figs, build, out, _tree(out)


_CHILD = """
import os, signal, sys
from pathlib import Path
from leash_eval.run import site
figs, build, out, how, where = sys.argv[1:6]
real = getattr(site, where)
def stopped(*args, **kw):  # the build stops here, halfway
    if how == "SIGKILL":
        os.kill(os.getpid(), signal.SIGKILL)
    if how == "SIGTERM":
        os.kill(os.getpid(), signal.SIGTERM)
    if how == "error":
        raise OSError(28, "No space left on device")
    return real(*args, **kw)
setattr(site, where, stopped)
def make_site(args):  # `make site`'s build, on the fixture
    site.build_site(Path(figs), Path(build), Path(out), ["01_x.paper", "02_y"], api=False)
    return 0
site._main = make_site
sys.exit(site.main([]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("where", ["_notebook_pages", "_mathjax", "_unlink_local"])
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "error"])
def test_a_build_stopped_halfway_leaves_the_previous_site(previous, how, where, tmp_path):
    figs, build, out, before = previous
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(figs), str(build), str(out), how,
                           where], capture_output=True, text=True, timeout=600)
    want = {"SIGKILL": -9, "SIGTERM": 143, "error": 1}[how]
    assert proc.returncode == want, proc.stderr
    if how == "SIGTERM":
        assert proc.stderr.strip().splitlines() == [
            "site: terminated; the previous site is left as it was"], proc.stderr
    assert _tree(out) == before  # the previous site, whole
    if how != "SIGKILL":  # an error and a signal clean up; SIGKILL cannot: the next build does
        assert _leftovers(out.parent) == []
    site.build_site(figs, build, out, ["01_x.paper", "02_y"], api=False)
    assert _leftovers(out.parent) == []
    assert not (out / "runs" / "01_x.demo.html").exists()  # replaced as a whole
    assert (out / "runs" / "01_x.paper.html").is_file()


def test_a_symlinked_site_folder_is_resolved_before_anything_is_replaced(study, tmp_path,  # noqa: F811
                                                                         monkeypatch, capsys):
    """build/site a symlink to a folder outside build/: refused, the folder untouched (it was
    deleted and written before: the check was lexical)."""
    figs, build, _ = study
    b = tmp_path / "build"
    b.mkdir()
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    monkeypatch.setattr(site, "BUILD", b)
    for link, args in ((b / "site", []), (b / "mine", ["--out", str(b / "mine")]),
                       (b / "sub", ["--out", str(b / "sub" / "site")])):
        link.symlink_to(outside)
        assert site.main(args) == 2
        err = capsys.readouterr().err
        assert "goes in a folder under" in err and str(outside) in err and err.count("\n") == 1, err
        assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]
        link.unlink()


def test_the_site_never_replaces_its_own_artifacts_nor_a_folder_of_leash(tmp_path, monkeypatch,
                                                                        capsys):
    b = tmp_path / "build"
    (b / "rescored").mkdir(parents=True)
    monkeypatch.setattr(site, "BUILD", b)
    monkeypatch.setattr(site, "FIGURES", b / "figs")
    for out, what in ((b / "figs", "artifacts it shows"), (b, "goes in a folder under"),
                      (b / "rescored", "cache of rescored"), (b / "figures", "scratch"),
                      (b / "figs" / "site", "artifacts it shows")):
        assert site.main(["--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert what in err and err.count("\n") == 1, (out, err)


@pytest.mark.parametrize("name", ["demo", "Demo", "site", "site-my-study", "SITE my study",
                                  "figures", "rescored", "explore"])
def test_a_study_named_after_a_folder_or_run_of_leash_is_refused(tmp_path, capsys, name):
    """One line naming the key, its line and the value; the shipped studies keep their names."""
    from leash_eval.cli import main
    from test_study_check import BASE, RL, _counts

    _counts(tmp_path)
    path = tmp_path / "s.yaml"
    path.write_text(f"name: {name}\ntitle: a title of its own\nbenchmarks:\n  math500: "
                     "{domain: math, budget: 128}\nsections:\n  support:\n    sources:\n      - "
                     f"path: counts.csv\n    pairs:\n      - {{label: p, base: {BASE}, rl: "
                     f"{RL}}}\n")
    from leash_eval.run.study_check import check_study

    [problem] = check_study(path).problems
    assert (problem.key, problem.line, problem.value) == ("name", 1, name)
    assert main(["-q", "study", "check", str(path)]) == 2
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ": error: " in ln]
    assert len(errors) == 1 and "`name`" in errors[0], errors


def test_reproduce_refuses_a_reserved_study_name_before_any_kernel(tmp_path, capsys):
    from leash_eval.run import reproduce
    from test_study_check import BASE, RL, _counts

    _counts(tmp_path)
    path = tmp_path / "demo.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: demo
        title: my own demo
        benchmarks:
          math500: {{domain: math, budget: 128}}
        sections:
          support:
            sources:
              - path: counts.csv
            pairs:
              - {{label: p, base: {BASE}, rl: {RL}}}
        """))
    before = {p: p.stat().st_mtime_ns for p in Path(site.BUILD).glob("*.demo.ipynb")}
    assert reproduce.main(["--data", str(path), "--only", "01"]) == 2
    err = capsys.readouterr().err
    assert "`name`" in err and "demo" in err, err
    assert {p: p.stat().st_mtime_ns for p in Path(site.BUILD).glob("*.demo.ipynb")} == before


def test_exchanging_folders_without_renameat2(tmp_path, monkeypatch):
    """The fallback of leash.writing's exchange (no RENAME_EXCHANGE): the same result."""
    import leash.writing as W

    target = tmp_path / "t"
    with W.replacing_folder(target, whole=True) as tmp:
        (tmp / "old.txt").write_text("old")
    monkeypatch.setattr(W.sys, "platform", "darwin")
    with W.replacing_folder(target, whole=True) as tmp:
        (tmp / "sub").mkdir()
        (tmp / "sub" / "new.txt").write_text("new")
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == [
        "sub", "sub/new.txt"]
    assert sorted(os.listdir(tmp_path)) == ["t"]
