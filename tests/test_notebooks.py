"""Every notebook: its conventions, that it runs, and that the committed artifacts are current.

The module fixture ``notebook_run`` executes all notebooks once with their defaults (the paper's
printed numbers and the simulated demo) through the same runner as `make reproduce`: first with
the real-data mirror hidden, as on a fresh clone without ``../shared``, then with the mirror for
the notebooks that skipped. It is the one execution of each notebook in a test session: every
test that inspects a notebook's run (its artifacts, records or executed page, the walkthrough's
included) reads it here, and `make test` gives whole files to its two workers (``--dist
loadfile``), so the run happens once. (tests/test_nbconvert.py runs the one route papermill does
not take, plain nbconvert, on one notebook.)

The committed figures/ must equal the fresh artifacts: CSV numbers under
leash.analysis.compare's rule (floats within 1e-12, since another CPU rounds exp/log differently
in the last bit; everything else exact), Markdown and LaTeX byte for byte, images by name
(tests/test_report.py checks that images are deterministic). A notebook that skipped (its data
absent) is excluded with exactly the artifacts its committed records list, and the test says so.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

import papermill
import pytest

from _support import (
    FIGURES,
    MIRROR,
    NOTEBOOKS,
    REPO,
    WALKTHROUGH,
    WALKTHROUGH_SIMULATED,
    committed_records,
    freshness,
)
from leash import notebook_files
from leash.run.parameters import _UNKNOWN, _annotation, notebook_parameters, validate_parameters


def cells(path):
    """The cells of a notebook's committed Markdown (a run never writes outputs there)."""
    return notebook_files.read(path).cells


def source(cell):
    return "".join(cell["source"])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_conventions(path):
    cs = cells(path)
    assert cs[0]["cell_type"] == "markdown" and source(cs[0]).startswith("# ")
    assert cs[1]["cell_type"] == "code" and "parameters" in cs[1]["metadata"].get("tags", [])
    # the first code cell after the parameters checks them (the same message on every route)
    assert cs[2]["cell_type"] == "code" and "notebook.start(globals())" in source(cs[2])
    params = papermill.inspect_notebook(notebook_files.read(path))
    # by hand, a notebook writes to the scratch folder, never into the committed figures/; one
    # without an outdir publishes nothing (11_from_a_model writes under build/ only)
    if "outdir" in params:
        assert params["outdir"]["default"] == '""'
    else:
        assert not any("Publisher(" in source(c) for c in cs), path.stem
    if "study" in params:
        assert params["study"]["default"] == '"paper"'
    # papermill silently drops a line it cannot parse (e.g. "=" inside the help comment)
    lines = [ln for ln in source(cs[1]).splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(params) == len(lines), f"{path.stem}: papermill parsed {sorted(params)}"
    declared = notebook_parameters(path)
    validate_parameters(path, declared=declared)  # every default fits its annotation and rule
    for name, p in params.items():
        assert p["help"], f"{path.stem}: parameter {name!r} has no help comment"
        assert p["inferred_type_name"] not in ("None", ""), f"{path.stem}: {name!r} untyped"
        # the runner and notebook.start check values against the annotation: one they can read
        assert _annotation(p["inferred_type_name"]) is not _UNKNOWN, (path.stem, name)
        # "not given" is None, under Optional[...] written as a string (papermill parses it, the
        # cell runs without importing typing); "" and [] are values (outdir "": the scratch)
        if p["default"] == "None":
            assert p["inferred_type_name"].startswith("Optional["), (path.stem, name)
            assert re.search(rf"^{name}: \"Optional\[", source(cs[1]), re.M), (path.stem, name)
        assert name == "outdir" or p["default"] not in ('""', "''", "[]"), \
            f"{path.stem}: {name!r} defaults to {p['default']}; a parameter not given is None"
    for c in cs:
        if c["cell_type"] != "code":
            continue
        assert not c.get("outputs") and not c.get("execution_count"), "committed with outputs"
        text = source(c)
        assert not re.search(r"^\s*(def|class)\s", text, re.M), "function definition"
        assert "lambda" not in text, "lambda in a notebook"
        assert not re.search(r"\bor None\b", text), "x or None: a parameter not given is None"
        assert "A.sources(" not in text, "one source per run: notebook.source(study, ...)"
        assert "os.environ" not in text and "LEASH_" not in text, "environment variable"


@dataclass
class NotebookRun:
    """Every notebook run once: first with the data mirror hidden (a fresh clone without
    ../shared, where notebooks that need real data skip), then with the mirror, when there is
    one, for exactly the notebooks that skipped. A notebook that silently needs the mirror
    fails on any machine."""

    outdir: Path  # the artifacts of the final state (mirror used where there is one)
    build: Path  # executed notebooks
    results: dict  # run name -> leash_eval.run.reproduce.NotebookResult, final state
    hidden: dict  # run name -> NotebookResult with the mirror hidden
    hidden_files: frozenset  # file names written with the mirror hidden
    cache_has_data: bool  # data/raw/ holds downloaded datasets: hiding the mirror hides nothing


@pytest.fixture(scope="module")
def notebook_run(tmp_path_factory):
    from leash_eval import manifest
    from leash_eval.run import reproduce

    # figures/ beside notebooks/ (a link to the checkout's), as in the checkout: the index
    # links each notebook's Markdown relative to its folder, as figures/README.md does
    root = tmp_path_factory.mktemp("checkout")
    out, build, notebooks = root / "figures", root / "build", root / "notebooks"
    notebooks.symlink_to(REPO / "notebooks", target_is_directory=True)
    runs = reproduce.default_runs()  # what `make reproduce` runs into figures/
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(manifest.MIRROR_ENV, "")
        hidden = {r.name: r for r in reproduce.run_all(runs, directory=notebooks, outdir=out,
                                                         build=build)}
        cache_has_data = manifest.default_dest().is_dir() and any(
            manifest.locate(n) is not None for n in manifest.load_manifest().datasets)
    hidden_files = frozenset(p.name for p in out.iterdir() if p.is_file())
    results = dict(hidden)
    again = [r for r in runs if hidden.get(r.name) and hidden[r.name].status == "skipped"]
    if again and MIRROR.is_dir():
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(manifest.MIRROR_ENV, str(MIRROR))
            results.update({r.name: r for r in reproduce.run_all(
                again, directory=notebooks, outdir=out, build=build)})
    return NotebookRun(out, build, results, hidden, hidden_files, cache_has_data)


def _run_names():
    from leash_eval.run.reproduce import default_runs

    return [r.name for r in default_runs()]


NAMES = _run_names()  # the runs of `make reproduce`: notebook[.source]


def _skipped(results):
    return {name: r.reason for name, r in results.items() if r.status == "skipped"}


@pytest.mark.slow
def test_every_notebook_runs(notebook_run):
    for state, results in (("mirror hidden", notebook_run.hidden),
                           ("final", notebook_run.results)):
        assert set(results) == set(NAMES), state
        failed = {k: r.reason for k, r in results.items() if r.status not in ("ok", "skipped")}
        assert not failed, (state, failed)
    skipped = _skipped(notebook_run.results)
    # only notebooks that need the real data (absent) or an extra (not installed) may skip
    extra = {k: why for k, why in skipped.items() if "extra is not installed" in why}
    data = {k: why for k, why in skipped.items() if k not in extra}
    if MIRROR.is_dir():
        assert not data, data
    else:
        assert all("not available locally" in why for why in data.values()), data


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_committed_artifacts_of_each_notebook_are_current(notebook_run, name):
    result = notebook_run.results[name]
    committed = committed_records().get(name, [])
    if result.status == "skipped":
        pytest.skip(f"{name} skipped ({result.reason}); its {len(committed)} committed "
                    f"artifacts are not checked here")
    fresh = json.loads((notebook_run.outdir / ".artifacts" / f"{name}.json").read_text())
    assert fresh == committed, f"{name}: artifact records differ from figures/.artifacts/"
    # the executed copy shows every figure it saves inline (papermill records them as PNG
    # outputs; a notebook may show more, as 02 shows its diagram on every source)
    executed = json.loads(result.output.read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    figures = [r["name"] for r in fresh if any(f.endswith(".png") for f in r["files"])]
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= len(figures), name
    assert not [o for o in outputs if o.get("output_type") == "error"], name
    assert not [o for o in outputs if o.get("name") == "stderr"], f"{name}: warnings or logs"
    files = [f for r in fresh for f in r["files"]]
    report = freshness(files, notebook_run.outdir, skipped=())
    assert not report["missing"], f"artifacts not committed (run `make reproduce`): " \
                                  f"{report['missing']}"
    assert not report["differ"], f"committed artifacts differ from a fresh run (`make " \
                                 f"reproduce`): {report['differ']}"


@pytest.mark.slow
def test_committed_artifact_set_is_current(notebook_run):
    run = notebook_run
    files = [p.name for p in run.outdir.iterdir() if p.is_file()]
    report = freshness(files, run.outdir, skipped=_skipped(run.results))
    assert not report["missing"], f"artifacts not committed (run `make reproduce`): " \
                                  f"{report['missing']}"
    assert not report["stale"], f"committed artifacts no notebook writes any more: " \
                                f"{report['stale']}"
    if not report["excluded"]:  # with every notebook run, the index is current too
        assert (run.outdir / "README.md").read_bytes() == (FIGURES / "README.md").read_bytes()


@pytest.mark.slow
def test_a_fresh_clone_without_the_data_mirror_passes(notebook_run):
    """The state of a clone without ../shared: the notebooks that need real data skip, and the
    freshness check excludes exactly the artifacts their committed records list."""
    run = notebook_run
    if run.cache_has_data:
        pytest.skip("data/raw/ holds downloaded datasets, so hiding the mirror hides nothing")
    skipped = _skipped(run.hidden)
    assert all("not available locally" in why or "extra is not installed" in why
               for why in skipped.values()), skipped
    report = freshness(run.hidden_files, run.outdir, skipped=skipped)
    assert not report["missing"] and not report["stale"], report
    assert not report["differ"], report["differ"]
    records = committed_records()
    for name, files in report["excluded"].items():
        assert files == sorted(f for r in records[name] for f in r["files"])
        assert not set(files) & (run.hidden_files - {"README.md"}), name


@pytest.mark.slow
@pytest.mark.parametrize("stem", WALKTHROUGH)
def test_the_walkthrough_writes_every_artifact_of_its_part(notebook_run, stem):
    """Each part of the walkthrough (tests/test_walkthrough.py checks its form and facts)
    writes its tables and figures, records them with its parameters, and reads as a page."""
    import math

    import numpy as np
    import pandas as pd

    from leash.output.report import RECORD_KEY
    from leash.run.parameters import notebook_parameters

    tables, figures = WALKTHROUGH[stem]
    result, out = notebook_run.results[stem], notebook_run.outdir
    assert result.status == "ok", result.reason
    for name in tables:
        for ext in ("csv", "md", "tex"):
            assert (out / f"{name}.{ext}").is_file(), (name, ext)
    for name in figures:
        for ext in ("pdf", "png", "csv"):
            assert (out / f"{name}.{ext}").is_file(), (name, ext)
    # the runner keeps the records, read from the executed notebook, with the run's parameters
    records = json.loads((out / ".artifacts" / f"{stem}.json").read_text())
    assert sorted(r["name"] for r in records) == sorted(tables + figures)
    defaults = {n: p.value for n, p in notebook_parameters(REPO / "notebooks" / f"{stem}.md")
                .items() if n != "outdir"}
    for r in records:
        assert sorted(r) == ["description", "files", "inputs", "name", "notebook", "parameters"]
        assert r["notebook"] == stem and r["description"], r["name"]
        assert r["parameters"] == defaults, r["name"]  # every parameter, outdir left out
        assert r["files"] == sorted(f"{r['name']}.{ext}" for ext in (
            ("csv", "pdf", "png") if r["name"] in figures else ("csv", "md", "tex")))
    inputs = {r["name"]: r["inputs"] for r in records}
    simulated = ["simulated (leash.sources.simulate.simulate_pair)"]
    expected_inputs = {"walkthrough_epsilon": ["none"], "walkthrough_boundary": ["none"],
                       "walkthrough_null_studies": simulated,
                       "walkthrough_entropy_example": ["none"],
                       "walkthrough_entropy_scatter": ["data/studies/demo.yaml"]}
    for name, want in expected_inputs.items():
        if name in inputs:
            assert inputs[name] == want, name
    for name in set(WALKTHROUGH_SIMULATED) & set(tables):
        assert "simulated" in (out / f"{name}.md").read_text().splitlines()[0].lower(), name
    # the run's numbers where a closed form or the parameters say what they are
    if "walkthrough_epsilon" in tables:
        eps = pd.read_csv(out / "walkthrough_epsilon.csv")
        np.testing.assert_allclose(eps["k * epsilon"], -math.log(0.05), rtol=1e-12)
    if "walkthrough_null_studies" in tables:
        null = pd.read_csv(out / "walkthrough_null_studies.csv")
        assert null["studies"].item() == defaults["n_null"]
    # the executed copy reads as a page: every figure inline, no error, no warning or log
    executed = json.loads(result.output.read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "warnings or logs on the page"
    assert sum("image/png" in o.get("data", {}) for o in outputs) == len(figures)
    saved = [o["metadata"][RECORD_KEY]["name"] for o in outputs
             if RECORD_KEY in o.get("metadata", {})]
    assert sorted(saved) == sorted(tables + figures)  # one "saved ..." note per artifact


@pytest.mark.slow
@pytest.mark.parametrize("stem", WALKTHROUGH)
def test_the_walkthrough_exercises_solutions_ran_and_checked_their_answers(notebook_run, stem):
    """The solution cells (tagged "solution", tests/test_walkthrough.py checks their form) ran
    in the part's run, each to its end: its asserts held and it showed its answer."""
    executed = json.loads(notebook_run.results[stem].output.read_text())
    solutions = [c for c in executed["cells"] if "solution" in c["metadata"].get("tags", [])]
    assert 2 <= len(solutions) <= 3
    for n, cell in enumerate(solutions, 1):
        assert cell["execution_count"], f"solution {n} did not run"
        outputs = cell.get("outputs", [])
        assert not [o for o in outputs if o.get("output_type") == "error" or
                    o.get("name") == "stderr"], (n, outputs)
        shown = "".join("".join(o.get("data", {}).get("text/markdown", "")) for o in outputs)
        assert shown.startswith(f"**Solution {n}.**"), (n, shown)
