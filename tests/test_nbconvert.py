"""A notebook runs as a plain page: `jupyter nbconvert --execute`, no environment variable.

The one route the runner (papermill) does not take: no injected parameters (the notebook's own
defaults, so its artifacts go to the scratch folder build/figures/), no PYTHONHASHSEED,
MPLBACKEND or LEASH_* variable, and a copy of the notebook in another folder as the working
directory. What a route does not change is checked per notebook elsewhere, on the one run of
each notebook in a test session (tests/test_notebooks.py: inline figures, no error, no warning
or log on the page; and, read from the sources, no environment variable, the scratch folder as
the default outdir, notebook.start first). So each kind of page is executed here once:

* the first walkthrough, the notebook a reader opens first: it shows its figures inline, prints
  no traceback, saves its artifacts to the scratch folder and leaves the committed figures/
  unchanged;
* a notebook whose data are absent (the runner's test notebook asking for a missing input): it
  stops with one line, "Skipped: ...", and nothing else, no frame of leash's code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from _support import FIGURES, REPO, folder_digest

PAGE = REPO / "notebooks" / "00a_walkthrough_support.md"
TINY = REPO / "tests" / "notebooks" / "tiny.ipynb"


def _paired(markdown, ipynb):
    """The .ipynb of a committed notebook, written as `make install` writes it (jupytext)."""
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--to", "ipynb", "--update",
                    "-o", str(ipynb), str(markdown)], check=True)
    return ipynb


def _git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout


def _nbconvert(notebook, folder):
    """Execute ``notebook`` in ``folder`` as a user would, without the runner's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEASH_")
           and k not in ("MPLBACKEND", "PYTHONHASHSEED")}
    before = folder_digest(FIGURES)
    proc = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.timeout=600", "--output", "executed", str(notebook)],
        cwd=folder, env=env, capture_output=True, text=True)
    assert folder_digest(FIGURES) == before, "the committed figures/ changed"
    return proc


@pytest.mark.slow
def test_a_notebook_runs_as_a_plain_page(tmp_path):
    copy = _paired(PAGE, tmp_path / f"{PAGE.stem}.ipynb")
    proc = _nbconvert(copy, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    nb = json.loads((tmp_path / "executed.ipynb").read_text())
    outputs = [o for c in nb["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], \
        [o["text"] for o in outputs if o.get("name") == "stderr"]
    saved = [o["metadata"]["leash.artifact"] for o in outputs
             if "leash.artifact" in o.get("metadata", {})]
    assert saved, "the notebook saved no artifact"
    # every figure saved is shown inline too
    figures = [r for r in saved if any(f.endswith(".png") for f in r["files"])]
    assert figures and sum("image/png" in o.get("data", {}) for o in outputs) == len(figures)
    # by hand, into the scratch folder build/figures/, never figures/
    notes = [o["data"]["text/markdown"] for o in outputs
             if "leash.artifact" in o.get("metadata", {})]
    assert all("to `build/figures/`" in "".join(n) for n in notes), notes[:1]


@pytest.mark.slow
def test_a_notebook_without_its_data_stops_with_one_line(tmp_path):
    nb = json.loads(TINY.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    source = "".join(cell["source"])
    assert 'data: str = ""' in source
    cell["source"] = source.replace('data: str = ""', 'data: str = "tests-missing-input/x.jsonl"')
    copy = tmp_path / "tiny.ipynb"
    copy.write_text(json.dumps(nb))
    proc = _nbconvert(copy, tmp_path)
    # the notebook's data are absent here, said in one line: the kernel's "traceback" is that
    # line, with no frame of leash's code (nbconvert then reports the stop with its own)
    assert proc.returncode != 0
    assert "Skipped: input file tests-missing-input/x.jsonl not found" in proc.stderr, \
        proc.stderr[-3000:]
    assert "leash/run/notebook.py" not in proc.stderr, proc.stderr[-3000:]


@pytest.mark.slow
def test_a_run_in_place_leaves_git_status_clean_and_an_edit_shows(tmp_path):
    """`jupyter nbconvert --execute --inplace notebooks/01_table1_support.ipynb` after `make
    install`, in a clone: the outputs go into the git-ignored .ipynb, `git status` stays clean
    (git's own clean filters cannot give that: a changed size is reported as a change without
    running the filter); a changed parameter saved as JupyterLab saves a pair (jupytext writes
    both files) shows as an edit of the committed Markdown.
    """
    repo = tmp_path / "clone"
    (repo / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / ".gitignore", repo)
    for name in ("jupytext.toml", "01_table1_support.md"):
        shutil.copy(REPO / "notebooks" / name, repo / "notebooks")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "notebooks")
    ipynb = _paired(repo / "notebooks" / "01_table1_support.md",
                    repo / "notebooks" / "01_table1_support.ipynb")
    proc = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                           "--inplace", "--ExecutePreprocessor.timeout=600", str(ipynb)],
                          cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert any(c.get("outputs") for c in json.loads(ipynb.read_text())["cells"])
    assert _git(repo, "status", "--porcelain") == ""
    # the user's edit, saved as JupyterLab saves a paired notebook (both files, from the .ipynb)
    nb = json.loads(ipynb.read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    cell["source"] = "".join(cell["source"]).replace("min_count: int = 1", "min_count: int = 2")
    ipynb.write_text(json.dumps(nb))
    subprocess.run([sys.executable, "-m", "jupytext", "--quiet", "--sync", str(ipynb)],
                   check=True)
    assert _git(repo, "status", "--porcelain") == " M notebooks/01_table1_support.md\n"
    diff = _git(repo, "diff", "-U0")
    assert "-min_count: int = 1" in diff and "+min_count: int = 2" in diff
