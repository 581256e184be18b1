"""JupyterLab's configuration in the repository's environment (leash_eval.run.lab): what it
writes, and that the file browser lists each paired notebook once.

tests/browser/test_lab_double_click.py starts JupyterLab three ways and double-clicks a
notebook's Markdown in a real browser; this checks the parts without one.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from _support import REPO
from leash_eval.run import lab


def test_install_writes_the_environment_config_and_keeps_other_keys(tmp_path):
    server = tmp_path / "etc" / "jupyter" / "jupyter_server_config.json"
    server.parent.mkdir(parents=True)
    server.write_text(json.dumps({"ServerApp": {"port": 9999}, "Other": {"x": 1}}))
    written = lab.install(tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == [
        "etc/jupyter/jupyter_server_config.json",
        "etc/jupyter/labconfig/default_setting_overrides.d/leash.json"]
    config = json.loads(server.read_text())
    assert config == {"ServerApp": {"port": 9999, "contents_manager_class": lab.CONTENTS_MANAGER},
                      "Other": {"x": 1}}
    labconfig, = (p for p in written if "labconfig" in p.parts)
    overrides = json.loads(labconfig.read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"markdown": "Jupytext Notebook"}  # Markdown only: a .py opens as text
    before = {p: p.read_bytes() for p in written}
    assert lab.install(tmp_path) == written  # again: the same bytes
    assert {p: p.read_bytes() for p in written} == before


def test_the_command_writes_into_the_given_prefix(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "leash_eval.run.lab", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO, check=True)
    assert proc.stderr.count("lab: wrote ") == 2
    assert (tmp_path / "etc" / "jupyter" / "jupyter_server_config.json").is_file()


def test_the_viewer_named_is_jupytexts():
    # the name JupyterLab's jupytext extension registers its notebook factory under
    labext = pytest.importorskip("jupyterlab_jupytext", reason="jupytext's lab extension")
    from pathlib import Path

    bundle = Path(labext.__file__).parent / "labextension"
    if not bundle.is_dir():
        pytest.skip("jupytext's lab extension bundle not installed")
    text = "".join(p.read_text(errors="replace") for p in bundle.rglob("*.js"))
    assert '"Jupytext Notebook"' in text or "'Jupytext Notebook'" in text


def _listing(manager, path=""):
    model = asyncio.run(manager.get(path))
    return sorted(m["name"] for m in model["content"])


def test_the_file_browser_lists_each_paired_notebook_once(tmp_path):
    pytest.importorskip("jupyter_server", reason="JupyterLab's server is not installed")
    from leash_eval.run.lab_contents import PairedOnceContentsManager

    header = "---\njupyter:\n  kernelspec:\n    name: python3\n---\n\n# A\n"
    (tmp_path / "01_a.md").write_text(header)
    (tmp_path / "01_a.ipynb").write_text(json.dumps(
        {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    (tmp_path / "02_b.ipynb").write_text((tmp_path / "01_a.ipynb").read_text())  # unpaired
    (tmp_path / "README.md").write_text("# not a notebook\n")
    (tmp_path / "README.ipynb").write_text((tmp_path / "01_a.ipynb").read_text())  # not a pair
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "01_a.ipynb").write_text((tmp_path / "01_a.ipynb").read_text())
    manager = PairedOnceContentsManager(root_dir=str(tmp_path))
    assert _listing(manager) == ["01_a.md", "02_b.ipynb", "README.ipynb", "README.md", "build"]
    assert _listing(manager, "build") == ["01_a.ipynb"]  # an executed copy stays listed
    opened = asyncio.run(manager.get("01_a.ipynb"))  # opening by its path still works
    assert opened["type"] == "notebook" and opened["name"] == "01_a.ipynb"
    # jupytext derives its contents manager from this one: the pair is still listed once, and
    # the Markdown is a notebook there
    jupytext_cm = pytest.importorskip("jupytext.async_contentsmanager")
    derived = jupytext_cm.build_async_jupytext_contents_manager_class(PairedOnceContentsManager)
    model = asyncio.run(derived(root_dir=str(tmp_path)).get(""))
    types = {m["name"]: m["type"] for m in model["content"]}
    assert "01_a.ipynb" not in types and types["01_a.md"] == "notebook"
