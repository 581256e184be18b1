"""What several test files need: the repository, the real-data mirror, optional packages.

The mirror is $LEASH_DATA_MIRROR, else the shared data folder beside the repository (where CI
has it); tests that need it are skipped, with the reason, when it is absent.
"""

import hashlib
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_env = os.environ.get("LEASH_DATA_MIRROR")
MIRROR = Path(_env) if _env else REPO.parent / "shared" / "data"
needs_mirror = pytest.mark.skipif(not MIRROR.is_dir(),
                                  reason="data mirror not found (set LEASH_DATA_MIRROR)")

try:
    import math_verify  # noqa: F401

    HAVE_MV = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_MV = False
needs_mv = pytest.mark.skipif(not HAVE_MV, reason="math-verify not installed")


# ---------------------------------------------------------------------------------------------
# errors: the parts a user acts on, not the sentence around them
# ---------------------------------------------------------------------------------------------

class raises_with:
    """``pytest.raises(exc)`` whose error carries ``parts`` as its attributes (leash.errors, and
    the core's InvalidParameterError): ``param``, ``func``, ``value``, ``got``, ``file``,
    ``line``, ``key`` equal; ``constraint`` and ``text`` (the message) contain the given text.
    The error is ``.value`` afterwards, as pytest's ``ExceptionInfo``'s.
    """

    def __init__(self, exc=ValueError, **parts):
        self._raises, self._parts = pytest.raises(exc), parts

    def __enter__(self):
        self._info = self._raises.__enter__()
        return self

    def __exit__(self, *exc_info):
        handled = self._raises.__exit__(*exc_info)
        self.value = e = self._info.value
        for name, want in self._parts.items():
            if name in ("constraint", "text"):
                have = str(e) if name == "text" else str(e.constraint)
                assert want in have, (name, want, str(e))
            else:
                assert getattr(e, name) == want, (name, getattr(e, name), want, str(e))
        return handled


# ---------------------------------------------------------------------------------------------
# freshness of the committed figures/ against a fresh run of the notebooks
# ---------------------------------------------------------------------------------------------

FIGURES = REPO / "figures"
SIDECARS = ".artifacts"  # leash_eval.run.index.SIDECAR_DIR


def committed_records(figures=FIGURES):
    """notebook stem -> its committed artifact records (figures/.artifacts/<stem>.json)."""
    import json

    return {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((figures / SIDECARS).glob("*.json"))}


def freshness(fresh_files, fresh_dir, skipped, figures=FIGURES):
    """Compare a fresh run's artifacts with the committed ones.

    ``fresh_files`` are the file names the run wrote in ``fresh_dir``; ``skipped`` the notebooks
    the run skipped. The committed artifacts of a skipped notebook (as its committed records
    list them) are excluded, exactly those. CSV files compare under leash.analysis.compare's rule
    (floats within 1e-12, the rest exact), Markdown and LaTeX byte for byte, images by name
    (another matplotlib may render other bytes; tests/test_report.py checks determinism).

    Returns a dict: ``missing`` (written but not committed), ``stale`` (committed, not written,
    not excluded), ``differ`` (name -> what differs), ``excluded`` (notebook -> its files).
    """
    from leash.analysis.compare import csv_differences

    records = committed_records(figures)
    excluded = {nb: sorted(f for r in records.get(nb, []) for f in r["files"])
                for nb in sorted(skipped)}
    skip_files = {f for files in excluded.values() for f in files}
    # dot files (the runner's lock file) are not artifacts
    committed = {p.name for p in figures.iterdir() if p.is_file() and p.name != "README.md"
                 and not p.name.startswith(".")}
    fresh = {f for f in fresh_files if f != "README.md" and not f.startswith(".")}
    differ = {}
    for name in sorted(fresh & committed):
        new, old = fresh_dir / name, figures / name
        if name.endswith(".csv"):
            diffs = csv_differences(old.read_text(encoding="utf-8"),
                                    new.read_text(encoding="utf-8"))
            if diffs:
                differ[name] = "; ".join(diffs)
        elif name.endswith((".md", ".tex")) and old.read_bytes() != new.read_bytes():
            differ[name] = "bytes differ"
    return {"missing": sorted(fresh - committed), "stale": sorted(committed - fresh - skip_files),
            "differ": differ, "excluded": excluded}


# ---------------------------------------------------------------------------------------------
# the benchmarks' baselines, which the tests use as references
# ---------------------------------------------------------------------------------------------

def load_benchmark(name: str):
    """The module ``benchmarks/<name>.py``: its baselines are the computations leash replaced
    (one-pass pass@k, the unblocked bootstrap), kept once, there, and used here as references."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"leash_{name}", REPO / "benchmarks" /
                                                  f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def folder_digest(folder) -> str:
    """One sha256 over the names and bytes of every non-hidden file below ``folder``."""
    h = hashlib.sha256()
    for p in sorted(Path(folder).rglob("*")):
        if p.is_file() and not p.name.startswith("."):
            h.update(p.name.encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def rec(q="q1", i=0, correct=True, model="m", **kw):
    """One generation record (benchmark "b") for the input-file tests."""
    r = {"model": model, "benchmark": "b", "question_id": q, "sample_idx": i, "correct": correct}
    r.update(kw)
    return r


def write_lines(path, lines):
    """Write JSON Lines: dicts are dumped, strings written as they are."""
    path.write_text("".join(
        (x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


# ---------------------------------------------------------------------------------------------
# the teaching walkthrough: three notebooks, their artifacts (tables, figures)
# ---------------------------------------------------------------------------------------------

WALKTHROUGH = {
    "00a_walkthrough_support": (
        ["walkthrough_epsilon", "walkthrough_passk_estimators", "walkthrough_support_example",
         "walkthrough_support_example_metrics"],
        ["walkthrough_epsilon_curve", "walkthrough_passk_estimators_curve",
         "walkthrough_support_example_counts"]),
    "00b_walkthrough_noise": (
        ["walkthrough_null_studies", "walkthrough_shrinkage_bootstrap", "walkthrough_boundary"],
        ["walkthrough_null_e_minus_s", "walkthrough_misclassification"]),
    "00c_walkthrough_curves": (
        ["walkthrough_crossover", "walkthrough_entropy_example"],
        ["walkthrough_expected_support", "walkthrough_passk_curves",
         "walkthrough_entropy_scatter"]),
}
#: The walkthrough tables made from simulated data, whose captions must say so.
WALKTHROUGH_SIMULATED = ["walkthrough_null_studies", "walkthrough_shrinkage_bootstrap",
                         "walkthrough_crossover"]


# ---------------------------------------------------------------------------------------------
# the notebooks, as committed
# ---------------------------------------------------------------------------------------------

#: The committed notebooks of notebooks/: their jupytext Markdown (leash.notebook_files),
#: which no run writes outputs into; the paired .ipynb beside each is git-ignored.
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9]*.md"))


# ---------------------------------------------------------------------------------------------
# the CLI, in-process
# ---------------------------------------------------------------------------------------------

def run_cli(capsys, *argv):
    """Run the CLI in-process as given, its notes included: (exit status, stdout, stderr)."""
    from leash_eval.cli import main

    code = main([*map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def cli(capsys, *argv):
    """Run the CLI in-process with ``-q`` (no notes): (exit status, stdout, stderr)."""
    return run_cli(capsys, "-q", *argv)


def cli_error(capsys, *argv) -> str:
    """The CLI fails with exit status 2 and exactly one line on stderr; return that line."""
    code, _, err = cli(capsys, *argv)
    assert code == 2, (code, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def processes() -> list[str]:
    """The processes running (zombies left out), one line each: session, pid, state, command."""
    import subprocess

    out = subprocess.run(["ps", "-e", "-o", "sid=,pid=,stat=,args="], capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if not line.split()[2].startswith("Z")]
