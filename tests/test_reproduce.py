"""Tests of leash_eval.run.reproduce: parameter validation, discovery, and real papermill runs.

The notebook tests/notebooks/tiny.ipynb is executed through the same function the paper's
notebooks go through (run_notebook / run_all); each kernel run takes a few seconds.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from leash.run.notebook import SkipNotebook, require_data
from leash.run.parameters import PARAMETER_RULES, notebook_parameters, validate_parameters
from leash_eval.run import reproduce
from leash_eval.run.reproduce import (
    KERNEL_ENV,
    NotebookError,
    ParameterError,
    Run,
    default_runs,
    discover_notebooks,
    main,
    run_all,
    run_notebook,
)

HERE = Path(__file__).resolve().parent
TINY = HERE / "notebooks" / "tiny.ipynb"
REPO_ROOT = HERE.parent


def _notebook(folder: Path, stem: str, parameters: str | None, body: str = "x = 1") -> Path:
    cells = []
    if parameters is not None:
        cells.append(nbformat.v4.new_code_cell(parameters, metadata={"tags": ["parameters"]}))
    cells.append(nbformat.v4.new_code_cell(body))
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
        "language_info": {"name": "python"}})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.ipynb"
    nbformat.write(nb, path)
    return path


# ---------------------------------------------------------------------------------------------
# reading and validating parameters (no kernel)
# ---------------------------------------------------------------------------------------------

def test_notebook_parameters_of_tiny():
    params = notebook_parameters(TINY)
    assert list(params) == ["k", "zeta", "seed", "fail", "data", "prefix", "outdir"]
    assert params["k"].type_name == "int" and params["k"].value == 4
    assert params["k"].help == "budget"
    assert params["zeta"].value == 0.05 and params["fail"].value is False
    assert params["data"].default == '""'


def test_notebook_parameters_reads_what_papermill_cannot(tmp_path):
    src = ("study: str | None = None  # optional study file\n"
           "ks: list[int] = [1, 2,\n      4]\n"
           "a = b = 3\n"
           "label = 'x'")
    nb = _notebook(tmp_path, "nb", src)
    params = notebook_parameters(nb)
    assert set(params) == {"study", "ks", "a", "b", "label"}
    assert params["study"].type_name == "str | None" and params["study"].value is None
    assert params["ks"].value == [1, 2, 4]
    assert params["label"].type_name is None and params["label"].value == "x"
    assert notebook_parameters(_notebook(tmp_path, "none", None)) == {}


def test_unknown_parameter_is_rejected_with_the_closest_name():
    with pytest.raises(ParameterError, match=r"Notebook tiny: unknown parameter 'zetta'\. "
                                             r"Did you mean 'zeta'\? Parameters of this "
                                             r"notebook: k, zeta, seed"):
        validate_parameters(TINY, {"zetta": 0.1})
    with pytest.raises(ParameterError, match="unknown parameter 'qqqq'. Parameters"):
        validate_parameters(TINY, {"qqqq": 1})


@pytest.mark.parametrize("params, pattern", [
    ({"zeta": 1.5}, r"Notebook tiny: parameter 'zeta' = 1\.5 breaks the rule for 'zeta': it "
                    r"must be a float in the open interval \(0, 1\)"),
    ({"zeta": 0}, r"'zeta' = 0 breaks the rule"),
    ({"k": 0}, r"parameter 'k' = 0 breaks the rule for 'k': it must be an int >= 1"),
    ({"seed": -1}, r"'seed' = -1 breaks the rule for 'seed': it must be an int >= 0"),
    ({"k": "4"}, r"parameter 'k' = '4' has type str; its annotation asks for int"),
    ({"k": True}, r"parameter 'k' = True has type bool; its annotation asks for int"),
    ({"k": 4.0}, r"'k' = 4\.0 has type float"),
    ({"fail": 1}, r"'fail' = 1 has type int; its annotation asks for bool"),
    ({"zeta": "0.1"}, r"'zeta' = '0\.1' has type str; its annotation asks for float"),
])
def test_invalid_values_are_rejected(params, pattern):
    with pytest.raises(ParameterError, match=pattern):
        validate_parameters(TINY, params)


def test_valid_values_give_the_effective_parameters():
    eff = validate_parameters(TINY, {"k": 8, "zeta": 0.1})
    assert eff == {"k": 8, "zeta": 0.1, "seed": 0, "fail": False, "data": "", "prefix": "tiny",
                   "outdir": ""}


def test_rules_cover_lists_choices_defaults_and_optional(tmp_path):
    src = ('ks: list[int] = [1, 2]\nestimator: str = "unbiased"\nmin_count: int = 1\n'
           'n_boot: int = 0\nstudy: str | None = None\nlevel = 0.95\nscale: float = 0.5')
    nb = _notebook(tmp_path, "nb", src)
    assert validate_parameters(nb, {"scale": 2})["scale"] == 2  # an int is a valid float
    assert validate_parameters(nb, {"estimator": "first-k", "ks": (1, 8)})["ks"] == [1, 8]
    with pytest.raises(ParameterError, match=r"'ks' = \['a'\] has type list; its annotation "
                                             r"asks for list\[int\]"):
        validate_parameters(nb, {"ks": ["a"]})
    with pytest.raises(ParameterError, match=r"'ks' = \[0, 2\] breaks the rule .* a non-empty "
                                             r"list of ints >= 1"):
        validate_parameters(nb, {"ks": [0, 2]})
    with pytest.raises(ParameterError, match="'estimator' = 'first_k' breaks the rule .* "
                                             "leash.core.passk.ESTIMATORS"):
        validate_parameters(nb, {"estimator": "first_k"})
    with pytest.raises(ParameterError, match="'min_count' = 0 breaks"):
        validate_parameters(nb, {"min_count": 0})
    with pytest.raises(ParameterError, match="'n_boot' = -5 breaks"):
        validate_parameters(nb, {"n_boot": -5})
    # un-annotated parameters are checked against the type of their literal default
    with pytest.raises(ParameterError, match=r"'level' = 'high' has type str; its annotation "
                                             r"asks for float \(the type of its default 0\.95\)"):
        validate_parameters(nb, {"level": "high"})
    with pytest.raises(ParameterError, match="'level' = 1.0 breaks the rule"):
        validate_parameters(nb, {"level": 1.0})
    # study: None allowed by the annotation; else 'paper', a shipped study or an existing file
    for ok in ("paper", "demo", "data/studies/demo.yaml"):
        validate_parameters(nb, {"study": ok})
    with pytest.raises(ParameterError, match="'study' = 'embedded' breaks"):
        validate_parameters(nb, {"study": "embedded"})  # one source per run
    with pytest.raises(ParameterError, match="'study' = 'data/studies/nope.yaml' breaks"):
        validate_parameters(nb, {"study": "data/studies/nope.yaml"})


@pytest.mark.slow
def test_optional_parameters_take_none_or_the_inner_type(tmp_path):
    """A parameter that may be not given: None under a quoted Optional[...] annotation, which
    papermill parses (inspect, --help-notebook) and the runner and notebook.start check alike."""
    import subprocess
    import sys

    import papermill

    from leash.run import notebook

    src = ('estimator: "Optional[str]" = None  # pass@k estimator; None: the study\'s\n'
           'ks: "Optional[list[int]]" = None  # budgets; None: the study\'s\n'
           'pair: "Optional[str]" = None  # a model pair; None: the first')
    nb = _notebook(tmp_path, "nb", src)
    seen = papermill.inspect_notebook(str(nb))
    assert {n: (p["inferred_type_name"], p["default"]) for n, p in seen.items()} == {
        "estimator": ("Optional[str]", "None"), "ks": ("Optional[list[int]]", "None"),
        "pair": ("Optional[str]", "None")}
    shown = subprocess.run([sys.executable, "-m", "papermill", "--help-notebook", str(nb)],
                           capture_output=True, text=True, check=True).stdout
    assert "estimator: Optional[str] (default None)" in shown
    assert "ks: Optional[list[int]] (default None)" in shown
    declared = notebook_parameters(nb)
    assert declared["ks"].type_name == "Optional[list[int]]" and declared["ks"].value is None
    namespace = {"__annotations__": {"estimator": "Optional[str]", "ks": "Optional[list[int]]",
                                     "pair": "Optional[str]"},
                 "estimator": None, "ks": None, "pair": None}
    for check in (lambda values: validate_parameters(nb, values),
                  lambda values: notebook.start({**namespace, **values})):
        check({})
        check({"estimator": None, "ks": None, "pair": None})
        check({"estimator": "unbiased", "ks": [1, 8], "pair": "demo-1.5B"})
        for bad, pattern in (
                ({"estimator": 3}, r"'estimator' = 3 has type int; its annotation asks for "
                                   r"Optional\[str\]"),
                ({"ks": ["a"]}, r"'ks' = \['a'\] has type list; its annotation asks for "
                                r"Optional\[list\[int\]\]"),
                ({"ks": 8}, r"'ks' = 8 has type int"),
                ({"pair": [1]}, r"'pair' = \[1\] has type list"),
                # not given is None: an empty value is no longer a way to say it
                ({"estimator": ""}, r"'estimator' = '' breaks the rule .* or None"),
                ({"ks": []}, r"'ks' = \[\] breaks the rule .* a non-empty list")):
            with pytest.raises(ParameterError, match=pattern):
                check(bad)
    # a parameter that is not Optional refuses None
    with pytest.raises(ParameterError, match=r"'k' = None has type NoneType; its annotation "
                                             r"asks for int"):
        validate_parameters(TINY, {"k": None})


def test_the_rules_name_their_choices():
    from leash.core.entropy import NA_RULES
    from leash.core.passk import ESTIMATORS

    assert all(repr(v) in PARAMETER_RULES["na"].description for v in NA_RULES)
    assert all(repr(v) in PARAMETER_RULES["estimator"].description for v in ESTIMATORS)


def test_bad_defaults_are_caught_before_running(tmp_path):
    nb = _notebook(tmp_path, "07_bad", "zeta: float = 2.0")
    with pytest.raises(ParameterError, match=r"Notebook 07_bad: parameter 'zeta' = 2\.0 \(the "
                                             r"default in its parameters cell\) breaks"):
        validate_parameters(nb, {})


def test_parameters_for_a_notebook_without_parameters_cell(tmp_path):
    nb = _notebook(tmp_path, "plain", None)
    assert validate_parameters(nb, {}) == {}
    with pytest.raises(ParameterError, match="no cell tagged 'parameters'"):
        validate_parameters(nb, {"k": 1})


def test_rule_table_keys():
    assert {"zeta", "k", "budget", "min_count", "n_boot", "estimator", "seed"} <= set(
        PARAMETER_RULES)


# ---------------------------------------------------------------------------------------------
# discovery, selection, require_data
# ---------------------------------------------------------------------------------------------

def test_discover_notebooks_in_file_name_order_and_default_runs(tmp_path):
    for stem in ("01_table1", "00_walkthrough", "_draft", "10_figure4"):
        _notebook(tmp_path, stem, 'study: str = "paper"\nk: int = 1')
    assert discover_notebooks(tmp_path) == ["00_walkthrough", "01_table1", "10_figure4"]
    (tmp_path / "runs.yaml").write_text("01_table1: [{study: paper}, {study: demo, k: 2}]\n")
    runs = default_runs(tmp_path)
    assert [(r.name, r.parameters) for r in runs] == [
        ("00_walkthrough", {}), ("01_table1.paper", {"study": "paper"}),
        ("01_table1.demo", {"study": "demo", "k": 2}), ("10_figure4", {})]
    assert Run("n", {"study": "data/studies/my-study.yaml"}).name == "n.my-study"
    (tmp_path / "runs.yaml").write_text("01_tabel1: [{}]\n")
    with pytest.raises(ParameterError, match="no notebook '01_tabel1'.*Did you mean '01_table1'"):
        default_runs(tmp_path)
    (tmp_path / "runs.yaml").write_text("01_table1: {study: paper}\n")
    with pytest.raises(ParameterError, match="01_table1 must list parameter sets"):
        default_runs(tmp_path)


def test_the_repository_runs_each_artifact_notebook_on_the_paper_and_the_demo():
    runs = default_runs()
    assert {r.name for r in runs} >= {"00a_walkthrough_support", "00b_walkthrough_noise",
                                      "00c_walkthrough_curves", "01_table1_support.paper",
                                      "01_table1_support.demo", "08_paper_audit"}
    for r in runs:  # every listed parameter set is valid for its notebook
        validate_parameters(REPO_ROOT / "notebooks" / f"{r.notebook}.md", r.parameters)


def test_select_by_stem_name_or_number():
    stems = ["00_walkthrough", "00b_noise", "01_table1", "02_table3"]
    assert reproduce._select(stems, ["02_table3", "00"]) == ["00_walkthrough", "02_table3"]
    assert reproduce._select(stems, ["00b"]) == ["00b_noise"]  # a number with a letter
    assert reproduce._select(stems, ["table1"]) == ["01_table1"]
    with pytest.raises(ParameterError, match="--only 'tabel1': no such notebook.*Did you mean"):
        reproduce._select(stems, ["tabel1"])


def test_require_data_existing_missing_and_unknown(tmp_path):
    f = tmp_path / "x.jsonl"
    f.write_text("{}\n")
    assert require_data(f) == f
    with pytest.raises(SkipNotebook, match="input file .*nowhere/y.jsonl not found"):
        require_data(str(tmp_path / "nowhere" / "y.jsonl"))
    with pytest.raises(ValueError, match="'no-such-dataset' is neither an existing file nor"):
        require_data("no-such-dataset")
    with pytest.raises(TypeError, match="'path_or_name' parameter of require_data"):
        require_data(3)


def test_require_data_skips_a_dataset_without_local_copy(tmp_path, monkeypatch):
    from leash_eval import manifest

    name = next(iter(manifest.load_manifest().datasets))
    monkeypatch.setattr(manifest, "default_dest", lambda: tmp_path / "cache")
    monkeypatch.setenv(manifest.MIRROR_ENV, str(tmp_path / "empty-mirror"))
    with pytest.raises(SkipNotebook, match=f"data not available locally: {re.escape(name)}"):
        require_data(name)


@pytest.mark.mirror
def test_require_data_finds_the_mirror(monkeypatch):
    from leash_eval import manifest

    mirror = REPO_ROOT.parent / "shared" / "data"
    if not mirror.is_dir():
        pytest.skip("no data mirror next to the repository")
    monkeypatch.setenv(manifest.MIRROR_ENV, str(mirror))
    name = next(iter(manifest.load_manifest().datasets))
    path = require_data(name)
    assert path.is_file()


# ---------------------------------------------------------------------------------------------
# command line without kernels
# ---------------------------------------------------------------------------------------------

def test_main_rejects_an_unknown_notebook_name(capsys):
    assert main(["--only", "no_such_notebook_xyz"]) == 2
    assert "--only 'no_such_notebook_xyz': no such notebook" in capsys.readouterr().err


def test_run_all_validates_everything_before_running(tmp_path):
    folder = tmp_path / "nbs"
    folder.mkdir()
    shutil.copy(TINY, folder / "00_tiny.ipynb")
    _notebook(folder, "01_bad", "k: int = 1")
    with pytest.raises(ParameterError, match="Notebook 01_bad: unknown parameter 'kk'"):
        run_all([("00_tiny", {}), ("01_bad", {"kk": 2})], directory=folder,
                outdir=tmp_path / "fig", build=tmp_path / "build")
    assert not (tmp_path / "build").exists()  # nothing was executed
    with pytest.raises(ParameterError, match="no such study file"):
        run_all([("00_tiny", {})], directory=folder, data=str(tmp_path / "s.yaml"),
                outdir=tmp_path / "fig", build=tmp_path / "build")
    with pytest.raises(ParameterError, match="'jobs' parameter of run_all"):
        run_all([], directory=folder, jobs=0)


# ---------------------------------------------------------------------------------------------
# real runs (each starts a kernel)
# ---------------------------------------------------------------------------------------------

def _stream_text(nb_path: Path) -> str:
    nb = nbformat.read(nb_path, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")


@pytest.mark.slow
def test_run_all_executes_writes_artifacts_and_index(tmp_path):
    folder = tmp_path / "nbs"
    folder.mkdir()
    shutil.copy(TINY, folder / "00_tiny.ipynb")
    out, build, stream = tmp_path / "fig", tmp_path / "build", io.StringIO()
    before = {k: os.environ.get(k) for k in KERNEL_ENV}
    results = run_all([("00_tiny", {"k": 8})], directory=folder, outdir=out, build=build,
                      stream=stream)
    assert [(r.name, r.status) for r in results] == [("00_tiny", "ok")]
    assert results[0].parameters["k"] == 8
    log = stream.getvalue()
    # each run's wall and CPU time, its kernel's included (a kernel's start alone takes more
    # than 0.1 s of CPU)
    assert re.search(r"^\[1/1\] 00_tiny \.\.\. ok \d+\.\d s, \d+\.\d s CPU$", log, re.M), log
    assert results[0].cpu > 0.1
    assert re.search(r"^leash reproduce: 1 run\(s\) in \d+\.\d s, \d+\.\d s CPU \(\d+\.\d s "
                     r"in the runs\): 1 ok, 0 skipped, 0 failed$", log, re.M), log
    executed = build / "00_tiny.ipynb"
    assert executed.is_file()
    nb = nbformat.read(executed, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "k = 8" in injected[0].source
    # the kernel saw the fixed hash seed and no forced backend; the parent's env is unchanged
    assert ("env: PYTHONHASHSEED=0 MPLBACKEND=module://matplotlib_inline.backend_inline"
            in _stream_text(executed))
    assert {k: os.environ.get(k) for k in KERNEL_ENV} == before
    # the figure is shown inline, and the notes of what was saved carry the records
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs)
    shown = [o["metadata"]["leash.artifact"]["name"] for o in outputs
             if "leash.artifact" in o.get("metadata", {})]
    assert shown == ["tiny_table", "tiny_figure"]
    for name in ("tiny_table.csv", "tiny_table.md", "tiny_table.tex", "tiny_figure.pdf",
                 "tiny_figure.png", "tiny_figure.csv"):
        assert (out / name).is_file(), name
    records = json.loads((out / ".artifacts" / "00_tiny.json").read_text())
    assert [r["name"] for r in records] == ["tiny_figure", "tiny_table"]
    assert records[0]["parameters"] == {"k": 8, "seed": 0, "zeta": 0.05, "fail": False,
                                        "data": "", "prefix": "tiny"}
    assert records[0]["notebook"] == "00_tiny"
    index = (out / "README.md").read_text()
    # the notebook links to its file in the run's folder, relative to the index
    assert "| `tiny_table` |" in index and "[`nbs/00_tiny.ipynb`](../nbs/00_tiny.ipynb)" in index
    assert "(simulated)" in (out / "tiny_table.md").read_text()


@pytest.mark.slow
def test_failing_cell_is_reported_with_notebook_and_cell(tmp_path):
    with pytest.raises(NotebookError) as info:
        run_notebook(TINY, {"fail": True}, tmp_path / "fig", tmp_path / "build")
    err = info.value
    msg = str(err)
    assert msg.startswith("Notebook tiny failed in cell 4 of tests/notebooks/tiny.ipynb (In [")
    assert "RuntimeError: tiny: failure requested by the 'fail' parameter" in msg
    assert "cell starts with: if fail:" in msg
    assert err.notebook == "tiny" and err.cell_index == 4 and err.ename == "RuntimeError"
    assert err.output == tmp_path / "build" / "tiny.ipynb" and err.output.is_file()
    assert f"partially executed notebook: {err.output}" in msg


@pytest.mark.slow
def test_skip_is_reported_and_previous_records_are_kept(tmp_path):
    out = tmp_path / "fig"
    side = out / ".artifacts" / "tiny.json"
    side.parent.mkdir(parents=True)
    side.write_text("[]\n")
    res = run_notebook(TINY, {"data": "tests-missing-input/x.jsonl"}, out, tmp_path / "build")
    assert res.status == "skipped"
    assert res.reason == "input file tests-missing-input/x.jsonl not found"
    assert side.read_text() == "[]\n"  # a run that skips keeps the run's earlier records
    # the executed copy is a page: the reason as one Markdown line, no error, no banner
    nb = nbformat.read(res.output, as_version=4)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    notes = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    assert notes == ["**Skipped:** input file tests-missing-input/x.jsonl not found"]
    assert not [c for c in nb.cells if "papermill-error-cell-tag" in c.metadata.get("tags", [])]


@pytest.mark.slow
def test_the_notebook_checks_its_own_parameters_under_plain_papermill(tmp_path):
    import papermill
    from papermill.exceptions import PapermillExecutionError

    for params, message in (
            ({"zetta": 0.1}, "ParameterError: This notebook: unknown parameter 'zetta'. Did you "
                             "mean 'zeta'? Parameters of this notebook: k, zeta, seed, fail, "
                             "data, prefix, outdir."),
            ({"zeta": 1.5}, "ParameterError: This notebook: parameter 'zeta' = 1.5 breaks the "
                            "rule for 'zeta': it must be a float in the open interval (0, 1).")):
        out = tmp_path / "out.ipynb"
        with pytest.raises(PapermillExecutionError) as info:
            papermill.execute_notebook(str(TINY), str(out), parameters=params,
                                       progress_bar=False, log_output=False)
        assert info.value.ename == "ParameterError"
        errors = [o for c in nbformat.read(out, as_version=4).cells
                  for o in c.get("outputs", []) if o["output_type"] == "error"]
        # one line, not a traceback through leash
        assert [e["traceback"] for e in errors] == [[message]], errors


@pytest.mark.slow
def test_unavailable_dataset_counts_as_a_skip(tmp_path, monkeypatch):
    from leash_eval import manifest

    name = next(iter(manifest.load_manifest().datasets))
    body = ("from leash_eval.manifest import DatasetUnavailableError\n"
            f"raise DatasetUnavailableError('no copy of {name}')")
    nb = _notebook(tmp_path / "nbs", "09_real", "outdir: str = 'figures'", body)
    res = run_notebook(nb, {}, tmp_path / "fig", tmp_path / "build")
    assert (res.status, res.reason) == ("skipped", f"no copy of {name}")


@pytest.mark.slow
def test_a_skip_is_told_by_its_class_not_its_name(tmp_path):
    """A user's own exception called SkipNotebook is a failure; a subclass of leash's, under
    any name, is a skip."""
    body = "class SkipNotebook(Exception): pass\nraise SkipNotebook('mine')"
    nb = _notebook(tmp_path / "nbs", "09_own", "outdir: str = 'figures'", body)
    with pytest.raises(reproduce.NotebookError, match="SkipNotebook: mine"):
        run_notebook(nb, {}, tmp_path / "fig", tmp_path / "build")
    body = ("from leash.errors import SkipNotebook\nclass NoGpu(SkipNotebook): pass\n"
            "raise NoGpu('no GPU here')")
    nb = _notebook(tmp_path / "nbs", "10_sub", "outdir: str = 'figures'", body)
    res = run_notebook(nb, {}, tmp_path / "fig", tmp_path / "build")
    assert (res.status, res.reason) == ("skipped", "no GPU here")


@pytest.mark.slow  # three kernels in two worker processes: about 5-6 s
def test_run_all_stops_at_a_failure_and_in_parallel(tmp_path):
    folder = tmp_path / "nbs"
    folder.mkdir()
    for stem in ("00_a", "01_b", "02_c"):
        shutil.copy(TINY, folder / f"{stem}.ipynb")
    out, stream = tmp_path / "fig", io.StringIO()
    results = run_all([("00_a", {"prefix": "a"}), ("01_b", {"data": "gone/x.csv"}),
                       ("02_c", {"fail": True})], directory=folder, outdir=out,
                      build=tmp_path / "build", jobs=2, stream=stream)
    status = {r.name: r.status for r in results}
    assert status == {"00_a": "ok", "01_b": "skipped", "02_c": "failed"}
    log = stream.getvalue()
    assert re.search(r"^\[2/3\] 01_b \.\.\. skipped: input file gone/x\.csv not found", log, re.M)
    assert re.search(r"^\[3/3\] 02_c \.\.\. FAILED", log, re.M)
    assert "Notebook 02_c failed in cell 4" in log
    assert "1 ok, 1 skipped, 1 failed" in log
    assert not (out / "README.md").exists()  # no index after a failed run


# ---------------------------------------------------------------------------------------------
# runs known to skip, and where executed copies go (no kernel)
# ---------------------------------------------------------------------------------------------

_READS_GYM = ('from leash.run import notebook\n'
              'src = notebook.source(study, section="gym")\n'
              'raise RuntimeError("a kernel ran")')


def _gym_notebook(folder: Path) -> Path:
    return _notebook(folder, "03_gym", 'study: str = "paper"  # the source\n'
                     'outdir: str = ""  # artifacts', _READS_GYM)


@pytest.mark.slow
def test_a_run_whose_section_is_skipped_starts_no_kernel_and_still_has_its_page(tmp_path):
    """A run on a study whose section the study check found skipped: no kernel starts (no cell
    has run), the run is skipped with the reason, its earlier records are kept, and its
    executed copy is a page the site shows as skipped (its parameters injected, the reason in
    the cell that reads the section). Before: a kernel started for each (about 50 s of a 174 s
    study run)."""
    from leash_eval.run.site import _executed_status

    folder = tmp_path / "nbs"
    _gym_notebook(folder)
    out, stream = tmp_path / "out", io.StringIO()
    side = out / ".artifacts" / "03_gym.demo.json"
    side.parent.mkdir(parents=True)
    side.write_text("[]\n")
    [res] = run_all([Run("03_gym", {"study": "demo"})], directory=folder, outdir=out,
                    stream=stream, skipped={("demo", "gym"): "the study has no section 'gym'"})
    assert (res.status, res.reason) == ("skipped", "the study has no section 'gym'")
    assert re.search(r"^\[1/1\] 03_gym\.demo \.\.\. skipped: the study has no section 'gym' "
                     r"\(\d+\.\d s, \d+\.\d s CPU\)$", stream.getvalue(), re.M)
    assert side.read_text() == "[]\n"
    assert res.output == out / ".executed" / "03_gym.demo.ipynb"
    nb = nbformat.read(res.output, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is None for c in code)  # nothing ran
    assert "study = \"demo\"" in code[1].source  # papermill's injected parameters
    assert [o["data"]["text/markdown"] for o in code[-1].outputs] == [
        "**Skipped:** the study has no section 'gym'"]
    assert _executed_status(nb) == ("skipped", "the study has no section 'gym'")
    # a run on another study (or section) is not concerned: the notebook's own run decides
    assert reproduce._sections(folder / "03_gym.ipynb") == {"gym": code[-1].id}


@pytest.mark.slow
def test_runs_into_two_output_folders_keep_their_own_executed_copies(tmp_path, monkeypatch):
    """Two runs of one notebook with different --outdir: each executed copy goes under its own
    folder (<outdir>/.executed/), the committed figures/'s to build/; the site reads a
    folder's runs from there. Before: both wrote build/<run>.ipynb, the second run's copy
    showing with the first run's artifacts."""
    from leash_eval.run import site

    assert reproduce.executed_folder(reproduce.FIGURES) == reproduce.BUILD
    folder = tmp_path / "nbs"
    _gym_notebook(folder)
    copies = {}
    for name in ("a", "b"):
        [res] = run_all([Run("03_gym", {"study": "demo", "outdir": name})], directory=folder,
                        outdir=tmp_path / name, stream=io.StringIO(),
                        skipped={("demo", "gym"): f"run {name}"})
        copies[name] = res.output
    assert copies == {n: tmp_path / n / ".executed" / "03_gym.demo.ipynb" for n in "ab"}
    for name, path in copies.items():
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["papermill"]["parameters"]["outdir"] == name
    seen = {}
    monkeypatch.setattr(reproduce, "BUILD", tmp_path)
    monkeypatch.setattr(site, "BUILD", tmp_path)
    monkeypatch.setattr(reproduce, "_study_parameter", lambda data, stream=None: "demo")
    monkeypatch.setattr(reproduce, "study_runs", lambda study: [Run("03_gym", {"study": "demo"})])
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "README.md").write_text("index\n")
    (tmp_path / "demo" / ".executed").mkdir()
    shutil.copy(copies["a"], tmp_path / "demo" / ".executed")
    monkeypatch.setattr(site, "build_site", lambda folder, build, out, names, **kw:
                        seen.update(folder=folder, build=build, names=names)
                        or {"pages": 0, "images": 0, "files": 0})
    assert site.main(["--data", "demo"]) == 0  # found: nothing runs again
    assert seen == {"folder": tmp_path / "demo", "build": tmp_path / "demo" / ".executed",
                    "names": ["03_gym.demo"]}
