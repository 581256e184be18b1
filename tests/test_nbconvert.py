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

PAGE = REPO / "notebooks" / "00a_walkthrough_support.ipynb"
TINY = REPO / "tests" / "notebooks" / "tiny.ipynb"


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
    copy = tmp_path / PAGE.name
    shutil.copy(PAGE, copy)
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
