"""leash installed from its wheel, outside any checkout, does what a notebook needs.

The wheel is built from this checkout (``pip wheel --no-deps --no-build-isolation``: the
setuptools of this environment, nothing downloaded) and installed (``--no-deps --no-index``)
into a fresh virtual environment in an empty temporary folder. That environment gets the
dependencies from this one without reinstalling them: a ``.pth`` file puts a folder of links to
this environment's installed packages on its path, every one but leash's own (its
distribution record and the editable install's finder), so the checkout is not importable
there; the test checks that ``leash`` is imported from the wheel's files.

There, in an empty working folder: the paper's printed numbers, the SIMULATED demo and the
shipped studies load from package data (``leash.explore("paper")``, ``leash.load_study``),
notebook 01 runs on ``study="paper"`` (as the site offers it for Colab, made from the Markdown
the wheel ships, its install cell first; through papermill and a kernel of that environment)
and writes the same ``table1.csv`` as the committed ``figures/`` under the current folder's
``build/figures/``, and nothing is written into the installation. In a second environment
without leash, that install cell installs it (from the wheel, offline).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from _support import REPO
from leash.analysis.compare import csv_differences

pytestmark = pytest.mark.slow


def _run(cmd, cwd, env=None, timeout=900):
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n" \
                                 f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _bare_venv(folder: Path, view: Path) -> Path:
    """A new environment without pip or leash, with this environment's other packages (the
    links in ``view``) on its path; its python."""
    _run([sys.executable, "-m", "venv", "--without-pip", folder], cwd=folder.parent)
    python = folder / "bin" / "python"
    lib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=folder.parent).stdout.strip())
    (lib / "_leash_test_dependencies.pth").write_text(f"{view}\n", encoding="utf-8")
    return python


def _leash_own(name: str) -> bool:
    """An entry of site-packages that belongs to the checkout's own (editable) install."""
    low = name.lower()
    return low.startswith(("leash", "__editable__")) or "leash" in low and low.endswith(".pth")


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(python, venv, work, env, wheel, view)``: the wheel installed in a fresh environment,
    an empty working folder outside the checkout, the environment variables to run there with,
    the wheel and the folder of links to this environment's packages."""
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    root = tmp_path_factory.mktemp("wheel")
    dist, venv, view, work = root / "dist", root / "venv", root / "deps", root / "work"
    for d in (dist, view, work):
        d.mkdir()
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--no-index", "-q", "-w", dist, REPO], cwd=root)
    wheel, = dist.glob("leash-*.whl")
    # this environment's packages, less the checkout's own install, as links
    purelib = Path(sysconfig.get_paths()["purelib"])
    for entry in purelib.iterdir():
        if not _leash_own(entry.name):
            (view / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    python = _bare_venv(venv, view)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "LEASH_", "JUPYTER", "VIRTUAL_ENV", "MPLBACKEND"))}
    # no user site, and Jupyter's own folders empty: the kernel is this environment's python3
    env.update(PYTHONNOUSERSITE="1", JUPYTER_DATA_DIR=str(root / "jupyter-data"),
               JUPYTER_CONFIG_DIR=str(root / "jupyter-config"),
               JUPYTER_RUNTIME_DIR=str(root / "jupyter-runtime"), MPLBACKEND="Agg",
               PIP_NO_INDEX="1",  # pip finds everything here: nothing is downloaded
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "-q", wheel], cwd=root,
         env=env)
    return python, venv, work, env, wheel, view


def test_the_wheel_carries_the_data_and_runs_outside_a_checkout(installed):
    python, venv, work, env = installed[:4]
    assert not any(work.iterdir())
    script = textwrap.dedent("""
        import json, sys
        from pathlib import Path
        import leash, leash.paths as paths
        from leash.sources import paper
        from leash.sources.study import list_studies

        app = leash.explore("paper")  # the paper's printed numbers, the notebooks' parameters
        demo = leash.load_study("demo")  # the SIMULATED demo, a shipped study
        print(json.dumps({
            "leash": leash.__file__, "checkout": str(paths.CHECKOUT), "data": str(paths.DATA),
            "build": str(paths.BUILD), "cwd": str(Path.cwd()),
            "runs": paths.RUNS.is_file(), "studies": list_studies(),
            "benchmarks": len(paper.load("benchmarks")), "demo": demo.name,
            "demo_pairs": len(demo.paired("support", "demo-1.5B")),
            "app": type(app).__name__, "path": sys.path}))
    """)
    out = json.loads(_run([python, "-c", script], cwd=work, env=env).stdout)
    site = Path(out["data"]).parent
    assert Path(out["leash"]).resolve().is_relative_to(venv.resolve()), out["leash"]
    assert not any(str(REPO) in p for p in out["path"]), "the checkout is importable there"
    assert out["checkout"] == "None" and site.name == "leash"
    assert Path(out["build"]) == work / "build" and out["runs"]
    assert {"demo", "paper"} <= set(out["studies"])
    assert out["benchmarks"] > 10 and out["demo"] == "demo" and out["demo_pairs"] > 1000
    before = sorted(p.relative_to(site).as_posix() for p in site.rglob("*")
                    if "__pycache__" not in p.parts)

    # notebook 01 on the paper's printed numbers, as the site offers it (made from the Markdown
    # the wheel ships, its install cell first: leash is installed here, so it does nothing)
    nb = work / "01_table1_support.ipynb"
    _run([python, "-c", "import nbformat, leash.paths as p; from leash_eval.run import launch; "
                        "nbformat.write(launch.colab_notebook(p.NOTEBOOKS / "
                        f"'01_table1_support.md'), {str(nb)!r})"], cwd=work, env=env)
    _run([python, "-m", "papermill", "-k", "python3", "--cwd", work, nb,
          work / "01_executed.ipynb", "-p", "study", "paper"], cwd=work, env=env)
    fresh = work / "build" / "figures" / "table1.csv"
    assert fresh.is_file(), sorted(p.name for p in (work / "build").rglob("*"))
    committed = REPO / "figures" / "table1.csv"
    assert not csv_differences(committed.read_text(encoding="utf-8"),
                               fresh.read_text(encoding="utf-8"))
    after = sorted(p.relative_to(site).as_posix() for p in site.rglob("*")
                   if "__pycache__" not in p.parts)
    assert after == before, "a run wrote into the installation"


def test_the_install_cell_installs_leash_where_it_is_missing(installed, tmp_path):
    from leash_eval.run import launch

    env, wheel, view = installed[3:]
    python = _bare_venv(tmp_path / "bare", view)
    missing = [python, "-c", "import importlib.util; "
                             "assert importlib.util.find_spec('leash') is None"]
    _run(missing, cwd=tmp_path, env=env)
    cell = launch.install_cell_source(str(wheel))  # the site's cell, with the wheel for the
    _run([python, "-c", cell], cwd=tmp_path, env=env)  # repository (nothing downloaded)
    out = _run([python, "-c", cell + "\nimport leash, leash.paths\n"
                                     "print(leash.__file__, leash.paths.CHECKOUT)"],
               cwd=tmp_path, env=env).stdout  # run again: leash is there, nothing happens
    where, checkout = out.split()
    assert Path(where).is_relative_to(tmp_path / "bare") and checkout == "None"


def test_the_console_command_works_from_the_wheel(installed):
    python, venv, work, env = installed[:4]
    out = _run([venv / "bin" / "leash", "reproduce", "--list"], cwd=work, env=env).stdout
    assert "01_table1_support" in out and "00a_walkthrough_support" in out
    assert shutil.which("leash", path=str(venv / "bin"))
