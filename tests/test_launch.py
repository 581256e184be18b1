"""Binder and Colab, checked here without a network: the files Binder reads, the README's
launch links, the .ipynb the site offers and its install cell's logic.

tests/test_wheel.py runs that .ipynb's install cell for real: in an environment without leash
it installs leash (from the wheel, offline) and the notebook runs.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import nbformat
import pytest
import yaml

from _support import REPO
from leash import notebook_files
from leash_eval.run import launch


def test_binder_builds_from_environment_yml_and_postbuild():
    env = yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))
    deps = env["dependencies"]
    names = {re.split(r"[<>=\s]", d)[0] for d in deps if isinstance(d, str)}
    # the server Binder starts (JupyterLab) with jupytext's extension, in Python 3.10+
    assert {"python", "jupyterlab", "jupytext", "ipykernel", "pip"} <= names
    python = next(d for d in deps if isinstance(d, str) and d.startswith("python="))
    assert tuple(map(int, python.split("=")[1].split(".")[:2])) >= (3, 10)
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert "-e ." in pip  # leash itself, from the repository (Binder then copies it first)
    post = REPO / "postBuild"
    mode = subprocess.run(["git", "ls-files", "-s", "postBuild"], cwd=REPO, capture_output=True,
                          text=True).stdout.split()
    if mode:  # a git checkout: committed executable, as repo2docker runs it
        assert mode[0] == "100755"
    lines = [ln for ln in post.read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines == ["set -euo pipefail", "python -m leash_eval.run.lab"]


def test_the_launch_urls_open_the_walkthrough():
    assert (REPO / launch.WALKTHROUGH).is_file()
    url = launch.binder_url()
    owner_name = launch.repository().removeprefix("https://github.com/")
    assert url == (f"https://mybinder.org/v2/gh/{owner_name}/HEAD"
                   f"?urlpath=lab/tree/{launch.WALKTHROUGH}")
    assert launch.colab_url("00a_walkthrough_support") == (
        f"https://colab.research.google.com/github/{owner_name}/blob/{launch.SITE_BRANCH}/"
        "notebooks/00a_walkthrough_support.ipynb")
    assert launch.install_spec() == f"leash @ git+{launch.repository()}.git"


def test_the_readme_has_the_launch_badges_and_says_how_to_use_colab():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"]({launch.binder_url()})" in readme
    assert f"]({launch.colab_url('00a_walkthrough_support')})" in readme
    words = " ".join(readme.split())
    assert "File > Upload notebook" in words and "make site" in words


@pytest.mark.parametrize("stem", ["00a_walkthrough_support", "01_table1_support",
                                  "12_explore"])
def test_the_offered_notebook_is_the_markdown_with_the_install_cell_first(stem):
    md = REPO / "notebooks" / f"{stem}.md"
    nb = launch.colab_notebook(md, spec="leash @ git+https://example.invalid/leash.git")
    nbformat.validate(nb)
    own = notebook_files.read(md).cells
    first, rest = nb.cells[0], nb.cells[1:]
    assert first["metadata"]["tags"] == [launch.INSTALL_TAG]
    assert "example.invalid" in first["source"]
    assert [c["source"] for c in rest] == [c["source"] for c in own]
    assert [c["metadata"] for c in rest] == [c["metadata"] for c in own]  # tags, hidden solutions
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb.cells if c["cell_type"] == "code")
    # papermill finds the parameters cell after the install cell (and the title)
    assert "parameters" in rest[1]["metadata"]["tags"]


def _run_install_cell(monkeypatch, present: bool) -> list:
    calls = []
    real = importlib.util.find_spec

    def find_spec(name, *args):
        if name == "leash":
            return real(name) if present else None
        return real(name, *args)

    def run(cmd, check=False):
        calls.append((cmd, check))

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(subprocess, "run", run)
    exec(compile(launch.install_cell_source("leash @ git+https://example.invalid/l.git"),
                 "install-cell", "exec"), {})
    return calls


def test_the_install_cell_installs_leash_only_where_it_is_missing(monkeypatch):
    assert _run_install_cell(monkeypatch, present=True) == []
    missing = _run_install_cell(monkeypatch, present=False)
    assert missing == [([sys.executable, "-m", "pip", "install", "--quiet",
                         "leash @ git+https://example.invalid/l.git"], True)]


def test_the_install_cell_is_plain_python():
    source = launch.install_cell_source()
    compile(source, "install-cell", "exec")
    assert not re.search(r"^\s*(def|class)\s|lambda|^[%!]", source, re.M)  # runs in any kernel
