"""Every notebook: its conventions, that it runs, and that the committed artifacts are current.

The run fixture executes all notebooks once with their defaults (the embedded data: the paper's
printed numbers and the simulated demo; the case study too when the real-data mirror is there)
through the same runner as `make reproduce`, into a temporary folder. Then every table and every
figure's CSV must equal the committed copy in figures/ byte for byte, so the repository never
shows stale results. (Images are checked for determinism in tests/test_report.py; they are not
compared here because another matplotlib release may render differently.)
"""

import json
import os
import re

import papermill
import pytest

from _support import MIRROR, REPO
from leash import reproduce

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
FIGURES = REPO / "figures"


def cells(path):
    return json.loads(path.read_text())["cells"]


def source(cell):
    return "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_conventions(path):
    cs = cells(path)
    assert cs[0]["cell_type"] == "markdown" and source(cs[0]).startswith("# ")
    assert cs[1]["cell_type"] == "code" and "parameters" in cs[1]["metadata"].get("tags", [])
    params = papermill.inspect_notebook(str(path))
    assert "outdir" in params
    # papermill silently drops a line it cannot parse (e.g. "=" inside the help comment)
    lines = [ln for ln in source(cs[1]).splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(params) == len(lines), f"{path.stem}: papermill parsed {sorted(params)}"
    for name, p in params.items():
        assert p["help"], f"{path.stem}: parameter {name!r} has no help comment"
        assert p["inferred_type_name"] not in ("None", ""), f"{path.stem}: {name!r} untyped"
    for c in cs:
        if c["cell_type"] != "code":
            continue
        assert not c.get("outputs") and not c.get("execution_count"), "committed with outputs"
        text = source(c)
        assert not re.search(r"^\s*(def|class)\s", text, re.M), "function definition"
        assert "lambda" not in text, "lambda in a notebook"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    build = tmp_path_factory.mktemp("build")
    if MIRROR.is_dir():
        os.environ.setdefault("LEASH_DATA_MIRROR", str(MIRROR))
    results = reproduce.run_all(reproduce.discover_notebooks(), outdir=out, build=build)
    return out, results


@pytest.mark.slow
def test_every_notebook_runs(run):
    _, results = run
    status = {r.name: r.status for r in results}
    assert set(status) == {p.stem for p in NOTEBOOKS}
    failed = {k: v for k, v in status.items() if v not in ("ok", "skipped")}
    assert not failed
    skipped = {r.name: r.reason for r in results if r.status == "skipped"}
    if MIRROR.is_dir():
        assert not skipped, skipped
    else:
        assert set(skipped) <= {"09_case_study_real_data"}


@pytest.mark.slow
def test_committed_tables_and_figure_data_are_current(run):
    out, _ = run
    fresh = {p.name: p for p in out.iterdir() if p.suffix in (".csv", ".md", ".tex")}
    committed = {p.name: p for p in FIGURES.iterdir() if p.suffix in (".csv", ".md", ".tex")}
    assert fresh, "the run wrote no tables"
    # the committed set and the fresh set name the same artifacts (the index is figures/README.md)
    missing = sorted(set(fresh) - set(committed) - {"README.md"})
    stale = sorted(set(committed) - set(fresh) - {"README.md"})
    assert not missing, f"artifacts not committed (run `make reproduce`): {missing}"
    assert not stale, f"committed artifacts no notebook writes any more: {stale}"
    differ = [n for n in sorted(fresh) if n != "README.md"
              and fresh[n].read_bytes() != committed[n].read_bytes()]
    assert not differ, f"committed artifacts differ from a fresh run (`make reproduce`): {differ}"
