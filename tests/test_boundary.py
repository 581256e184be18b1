"""The boundary between the two packages: ``leash`` (what the notebooks import) and the
evaluation toolkit ``leash_eval`` beside it.

The layers themselves are import-linter's contracts (``pyproject.toml``, run by ``make lint``);
these tests check what a contract cannot: what ``import leash.artifacts`` loads, that the
paper's and the demo's notebook runs need no toolkit at all (it is made unimportable in their
kernel), that the names a study file chooses among are the toolkit's, and the one line a user
gets at the seam when the toolkit is missing.
"""

import dataclasses
import subprocess
import sys
import textwrap

import pytest

from _support import REPO, freshness

# A sitecustomize that makes the toolkit unimportable, as if only src/leash were installed.
REFUSE = textwrap.dedent('''
    import sys

    class _RefuseToolkit:
        def find_spec(self, name, path=None, target=None):
            if name == "leash_eval" or name.startswith("leash_eval."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, _RefuseToolkit())
''')


@pytest.fixture
def no_toolkit(tmp_path, monkeypatch):
    """An environment whose Python processes (kernels too) cannot import leash_eval."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(REFUSE)
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site


def _python(code, env_site=None):
    import os

    env = dict(os.environ)
    if env_site is not None:
        env["PYTHONPATH"] = str(env_site)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=REPO)


@pytest.mark.slow
def test_import_of_the_artifacts_loads_no_toolkit_and_no_duckdb():
    out = _python("import leash.artifacts, sys; print(sorted(m for m in sys.modules "
                  "if m == 'duckdb' or m.startswith('leash_eval')))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
def test_a_notebooks_first_cells_load_only_what_they_need():
    """The start-up of a notebook run: its first cell (``leash.run.notebook``) loads no numpy or
    pandas, and ``import leash.artifacts`` no plotting, no scipy.stats, no engine: what a
    notebook draws or tests loads when it does (measured: ``import leash.artifacts`` costs
    pandas's import and about 0.1 CPU-s more)."""
    heavy = ("matplotlib", "seaborn", "scipy.stats", "duckdb", "IPython", "jinja2")
    out = _python("import sys, leash.run.notebook; first = set(sys.modules); "
                  "import leash.artifacts; print(sorted(m for m in first if m.split('.')[0] in "
                  "('numpy', 'pandas')), sorted(m for m in sys.modules if m in "
                  f"{heavy!r} or m.split('.')[0] in {heavy!r}))")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "[]"]


def test_the_refusing_hook_refuses(no_toolkit):
    out = _python("import leash_eval", no_toolkit)
    assert out.returncode == 1 and "No module named 'leash_eval'" in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("notebook", ["01_table1_support", "07_table5_entropy"])
@pytest.mark.parametrize("study", ["paper", "demo"])
def test_paper_and_demo_runs_need_no_toolkit(notebook, study, no_toolkit, tmp_path):
    from leash_eval.run.reproduce import run_notebook

    out = tmp_path / "out"
    res = run_notebook(REPO / "notebooks" / f"{notebook}.md", {"study": study}, outdir=out,
                       build=tmp_path / "build", run=f"{notebook}-{study}")
    assert res.status == "ok"
    # the kernel really ran without the toolkit: its sitecustomize was loaded
    text = (tmp_path / "build" / f"{notebook}-{study}.ipynb").read_text()
    assert "leash_eval" not in text
    written = {f for r in res.records for f in r["files"]}
    assert written
    report = freshness(written, out, skipped=())
    assert not report["missing"] and not report["differ"], report


@pytest.mark.slow
def test_a_raw_file_source_without_the_toolkit_says_so_in_one_line(no_toolkit, tmp_path):
    study = tmp_path / "s.yaml"
    study.write_text("name: s\nbenchmarks: {b: {domain: math}}\nsections:\n  support:\n"
                     "    sources: [{path: gen.jsonl}]\n"
                     "    pairs: [{base: m1, rl: m2}]\n")
    (tmp_path / "gen.jsonl").write_text("{}\n")
    out = _python(f"from leash.sources.study import load_study; "
                  f"load_study({str(study)!r}).summaries('support')", no_toolkit)
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("leash.sources.seam.ToolkitMissingError: Reading generations")
    assert "leash_eval" in last and "pip install -e ." in last


def test_the_study_choices_are_the_toolkits():
    from leash.sources import choices
    from leash_eval import formats, readers, rescore, scorers

    assert tuple(formats.MAPPINGS) == choices.MAPPINGS
    assert tuple(f.name for f in dataclasses.fields(formats.NestedMapping)) == \
        choices.MAPPING_FIELDS
    assert tuple(rescore.GOLD_RULES) == choices.GOLD_DATASETS
    # the study schema's fmt: names are the registry's (a format added to the toolkit must be
    # named in leash.sources.choices for a study to use it, and nowhere else)
    assert tuple(readers.input_formats()) == choices.INPUT_FORMATS
    # and the scorers and extractors are the registries' (leash_eval.scorers): every scorer of
    # `leash rescore`, those a study source may ask for (rescore:), their extractors (extract:),
    # then the extractor of the scorer a study cannot use
    registered = scorers.scorers()
    assert tuple(registered) == choices.SCORERS
    assert tuple(n for n, s in registered.items() if s.study) == choices.RESCORERS
    assert tuple(e for s in choices.RESCORERS for e in registered[s].extractors) == \
        choices.EXTRACTORS
    assert tuple(scorers.extractors()) == (*choices.EXTRACTORS, choices.GYM_EXTRACT)
    assert choices.GYM_EXTRACT in registered["reasoning-gym"].extractors
    # each scorer's grader is there, and each extractor is an option of a registered scorer
    for s in registered.values():
        assert isinstance(scorers.grader(s), scorers.Grader)
    assert {e.scorer for e in scorers.EXTRACTORS} <= set(registered)


@pytest.mark.parametrize("name", ["load_counts", "read_summary", "fetch", "locate",
                                  "extract_answer", "normalize_answer", "answer_classes",
                                  "load_benchmark", "simulate_study"])
def test_moved_names_still_work_for_one_release(name):
    import importlib

    import leash

    leash.__dict__.pop(name, None)
    with pytest.warns(DeprecationWarning, match=f"leash_eval\\.\\w+\\.{name}"):
        old = getattr(leash, name)
    # the toolkit module the warning names (a name of the rescore package is defined in one of
    # its modules)
    module = importlib.import_module(f"leash_eval.{leash._MOVED[name]}")
    assert old is getattr(module, name)


@pytest.mark.parametrize(("module", "name", "new"), [
    ("leash.sources.simulate", "simulate_study", "leash_eval.demo"),
    ("leash.sources.simulate", "config_record", "leash_eval.demo"),
    ("leash.sources.demo", "load_config", "leash_eval.demo"),
    ("leash.sources.demo", "CONFIG_SCHEMA", "leash_eval.demo"),
])
def test_names_of_the_demo_generator_moved_with_a_warning(module, name, new):
    import importlib

    old = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{module}.{name} moved to {new}.{name}"):
        value = getattr(old, name)
    assert value is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        old.nope  # noqa: B018


@pytest.mark.slow
def test_moved_module_paths_are_the_new_modules_for_one_release():
    """`import leash.run.reproduce` (documented before the runner moved) is the runner itself,
    with a DeprecationWarning; `python -m leash.run.reproduce` runs it, saying the new path."""
    from leash.sources.seam import MOVED_MODULES

    code = ("import importlib, warnings, sys; warnings.simplefilter('error'); import leash\n"
            "for old, new in " + repr(sorted(MOVED_MODULES.items())) + ":\n"
            "    try:\n        importlib.import_module(old)\n"
            "    except DeprecationWarning as w:\n        assert new in str(w), (old, w)\n"
            "    else:\n        raise SystemExit(f'no warning for {old}')\n"
            "warnings.simplefilter('ignore')\n"
            "for old, new in " + repr(sorted(MOVED_MODULES.items())) + ":\n"
            "    assert importlib.import_module(old) is importlib.import_module(new), old\n")
    out = _python(code)
    assert out.returncode == 0, out.stderr
    run = subprocess.run([sys.executable, "-m", "leash.run.reproduce", "--list", "--only", "01"],
                         capture_output=True, text=True, cwd=REPO)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("01_table1_support.paper")
    assert "leash_eval.run.reproduce" in run.stderr


def test_a_skip_is_one_line_in_any_subclass():
    from leash.errors import SkipNotebook
    from leash_eval.manifest import DatasetUnavailableError

    exc = DatasetUnavailableError("no copy of math500")
    assert isinstance(exc, FileNotFoundError) and isinstance(exc, SkipNotebook)
    assert SkipNotebook.reason_in(exc._render_traceback_()) == "no copy of math500"
    assert SkipNotebook.reason_in(["Skipped: a", "more"]) is None

