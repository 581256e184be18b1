"""Executed notebooks in build/ are the same bytes on a re-run on one machine: the cell papermill
injects has a fixed id (papermill's own is random), and no clock reading is kept (papermill's
start, end and duration; the kernel's execution timestamps). So a diff of two runs, and the
site, show only real changes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leash_eval.run.reproduce import INJECTED_ID, run_notebook

TINY = Path(__file__).resolve().parent / "notebooks" / "tiny.ipynb"


@pytest.mark.slow
def test_a_rerun_gives_the_same_bytes(tmp_path):
    copies = []
    for _ in range(2):
        res = run_notebook(TINY, {"k": 2, "seed": 3}, outdir=tmp_path / "out",
                           build=tmp_path / "build")
        assert res.status == "ok"
        copies.append(res.output.read_bytes())
    assert copies[0] == copies[1]
    nb = json.loads(copies[0])
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert [c["id"] for c in injected] == [INJECTED_ID]
    text = copies[0].decode()
    assert '"start_time"' not in text and '"end_time"' not in text and "iopub" not in text
