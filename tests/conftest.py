"""Fixtures shared by several test modules.

``notebook_run`` executes every notebook once per test session, through the same runner as
``make reproduce``, into a temporary folder: first with the real-data mirror hidden (the state
of a fresh clone without ``../shared``, where notebooks that need real data skip), then, when
the mirror is there, once more for exactly the notebooks that skipped. So one run checks both
states, and a notebook that silently needs the mirror fails the suite on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from _support import MIRROR


@dataclass
class NotebookRun:
    outdir: Path  # the artifacts of the final state (mirror used where there is one)
    build: Path  # executed notebooks
    results: dict  # stem -> leash.reproduce.NotebookResult, final state
    hidden: dict  # stem -> NotebookResult with the mirror hidden
    hidden_files: frozenset  # file names written with the mirror hidden
    cache_has_data: bool  # data/raw/ holds downloaded datasets: hiding the mirror hides nothing


@pytest.fixture(scope="session")
def notebook_run(tmp_path_factory):
    from leash import manifest, reproduce

    out = tmp_path_factory.mktemp("figures")
    build = tmp_path_factory.mktemp("build")
    notebooks = reproduce.discover_notebooks()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(manifest.MIRROR_ENV, "")
        hidden = {r.name: r for r in reproduce.run_all(notebooks, outdir=out, build=build)}
        cache_has_data = manifest.default_dest().is_dir() and any(
            manifest.locate(n) is not None for n in manifest.load_manifest().datasets)
    hidden_files = frozenset(p.name for p in out.iterdir() if p.is_file())
    results = dict(hidden)
    again = [(s, p) for s, p in notebooks if hidden.get(s) and hidden[s].status == "skipped"]
    if again and MIRROR.is_dir():
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv(manifest.MIRROR_ENV, str(MIRROR))
            results.update({r.name: r for r in reproduce.run_all(again, outdir=out, build=build)})
    return NotebookRun(out, build, results, hidden, hidden_files, cache_has_data)
