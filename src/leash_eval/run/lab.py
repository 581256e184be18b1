"""JupyterLab in the repository's environment: a notebook's Markdown opens as a notebook.

``python -m leash_eval.run.lab`` (run by every ``make`` target that sets up the environment,
and by Binder's ``postBuild``) writes two configuration files into the environment's own
Jupyter folder, ``<sys.prefix>/etc/jupyter/`` (``.venv/etc/jupyter/`` for ``make``), which
every JupyterLab of that environment reads wherever it is started (the repository's root,
``notebooks/``, ``make lab``), and nothing into the user's home:

* ``labconfig/default_setting_overrides.d/leash.json``: JupyterLab's defaults for this
  environment: a double-click on a Markdown file opens it with jupytext's "Jupytext Notebook"
  viewer (so ``notebooks/00a_walkthrough_support.md`` opens as a notebook, with its kernel; a
  README opens as a notebook of Markdown cells, and "Open With > Editor" edits any file as
  text), and no news toast or update check (the notebooks need no network). A user's own
  settings still win over these defaults.
* ``jupyter_server_config.json`` (its ``ServerApp.contents_manager_class``; other keys of an
  existing file are kept: jupyter_server reads traits from this file, its ``.d`` folder only
  enables extensions): the file browser lists each notebook once:
  :class:`leash_eval.run.lab_contents.PairedOnceContentsManager` leaves out an ``.ipynb``
  whose jupytext Markdown sits beside it (the pair ``make install`` writes; jupytext's
  contents manager, which JupyterLab builds on this one, opens and saves both files).

Why not a file in the repository that JupyterLab reads by itself: since jupyter_core 5 (the fix
of CVE-2022-39286) no Jupyter application reads configuration from the folder it starts in, so
a ``.jupyter/`` or ``jupyter_server_config.json`` in the checkout is ignored unless every user
sets ``JUPYTER_CONFIG_DIR``; and ``jupytext.toml`` (which the Markdown's folder does have)
configures the pairing, not JupyterLab's viewers. The environment the repository creates is the
one place both a plain ``jupyter lab`` and ``make lab`` read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from leash.writing import write_text

__all__ = ["CONTENTS_MANAGER", "LAB_DEFAULTS", "config_files", "install", "main"]

#: The contents manager JupyterLab's server uses in this environment (jupytext derives its own
#: from it).
CONTENTS_MANAGER = "leash_eval.run.lab_contents.PairedOnceContentsManager"
#: JupyterLab's default settings in this environment, by plugin.
LAB_DEFAULTS = {
    "@jupyterlab/docmanager-extension:plugin": {
        "defaultViewers": {"markdown": "Jupytext Notebook"}},
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                   "checkForUpdates": False},
}


def config_files(prefix=None) -> dict[Path, dict]:
    """The files :func:`install` writes under ``<prefix>/etc/jupyter/`` (default: this
    environment's ``sys.prefix``), with what it sets in each.
    """
    etc = Path(prefix if prefix is not None else sys.prefix) / "etc" / "jupyter"
    return {
        etc / "labconfig" / "default_setting_overrides.d" / "leash.json": LAB_DEFAULTS,
        etc / "jupyter_server_config.json": {
            "ServerApp": {"contents_manager_class": CONTENTS_MANAGER}},
    }


def install(prefix=None) -> list[Path]:
    """Write :func:`config_files`, each whole; the keys it sets replace those of an existing
    file, which keeps its others. Returns the paths written.
    """
    written = []
    for path, content in config_files(prefix).items():
        merged = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        for section, values in content.items():
            merged[section] = {**merged.get(section, {}), **values}
        path.parent.mkdir(parents=True, exist_ok=True)
        written.append(write_text(path, json.dumps(merged, indent=2, sort_keys=True) + "\n"))
    return written


def main(argv=None) -> int:
    """``python -m leash_eval.run.lab [PREFIX]``: install the configuration; exit status 0."""
    argv = sys.argv[1:] if argv is None else argv
    for path in install(argv[0] if argv else None):
        print(f"lab: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
