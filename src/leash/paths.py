"""Where things are: the one module that knows the folders, in a checkout and installed.

In a checkout (``src/leash/`` beside ``pyproject.toml``, ``data/`` and ``notebooks/``), the
shipped data and the notebooks are the repository's own folders, and outputs go to its
``build/`` (and, for the default ``make reproduce`` run, to the committed ``figures/``).

Installed from a wheel (``pip install leash-*.whl``), the same files are package data inside
``leash`` (``leash/_data/``: the paper's printed numbers, the SIMULATED demo, the shipped study
files, the data manifest; ``leash/_notebooks/``: the notebooks' Markdown and their runs file;
``pyproject.toml`` maps the repository's folders there), found with :mod:`importlib.resources`;
and outputs go under the current folder: ``build/`` of the folder Python started in (a
notebook's kernel starts in the notebook's folder), never into the installation.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path

__all__ = ["BUILD", "BUILD_FOLDERS", "CHECKOUT", "DATA", "EMBEDDED_STUDIES", "FIGURES",
           "MIRROR_ENV", "NOTEBOOKS", "REPO", "RUNS", "SCRATCH", "reserved_name", "shown", "slug",
           "study_folder"]


def _checkout() -> Path | None:
    """The repository this module runs from, or None when it is installed (no checkout)."""
    root = Path(__file__).resolve().parents[2]
    markers = (root / "pyproject.toml", root / "data" / "paper", root / "notebooks" / "runs.yaml")
    return root if all(p.exists() for p in markers) else None


def _shipped(folder: str) -> Path:
    """A folder of package data of the installed ``leash`` (a wheel installs it unpacked)."""
    return Path(str(resources.files("leash").joinpath(folder)))


#: The repository when leash runs from a checkout; None when it is installed.
CHECKOUT = _checkout()
#: The folder paths are relative to and outputs go under: the checkout, else the current folder.
REPO = CHECKOUT if CHECKOUT is not None else Path.cwd()
#: The shipped data: the paper's numbers, the demo, the study files, the manifest.
DATA = CHECKOUT / "data" if CHECKOUT is not None else _shipped("_data")
#: The paper's notebooks (their committed Markdown).
NOTEBOOKS = CHECKOUT / "notebooks" if CHECKOUT is not None else _shipped("_notebooks")
#: The parameter sets of the default ``make reproduce`` run, per notebook.
RUNS = NOTEBOOKS / "runs.yaml"
#: Executed notebooks and every other run's artifacts (ignored by git).
BUILD = REPO / "build"
#: Where a notebook writes when it is run by hand (JupyterLab, nbconvert, papermill).
SCRATCH = BUILD / "figures"
#: The committed artifacts; only the default ``make reproduce`` run writes here. Installed,
#: there is no committed gallery: that run writes to the scratch folder too.
FIGURES = CHECKOUT / "figures" if CHECKOUT is not None else SCRATCH
#: The folders of ``build/`` leash writes itself, and what each is (``site-<study>`` too): a
#: study's output folder, ``build/<slug of its name>/``, must be none of them.
BUILD_FOLDERS = {
    "figures": "the scratch folder of notebooks run by hand or with parameters",
    "site": "the site of `make site`",
    "rescored": "the cache of rescored study files",
    "browser": "the folder of the browser tests' screenshots",
    "explore": "the folder of the explorer app (`make explore`)",
}
#: The studies of the embedded runs (``notebooks/runs.yaml``): their executed notebooks are
#: ``build/<notebook>.<study>.ipynb``, which another study of that name would overwrite.
EMBEDDED_STUDIES = ("paper", "demo")
#: The environment variable naming a local mirror of the data manifest's files (consulted
#: before the network; paths under it are recorded relative to it).
MIRROR_ENV = "LEASH_DATA_MIRROR"


def shown(path) -> str:
    """A path as messages and records show it: relative to the repository (installed: to the
    current folder) when inside it; a shipped file as ``data/...`` or ``notebooks/...``, the
    same in a checkout and installed; anything else absolute.
    """
    p = Path(os.path.abspath(path))
    for root, prefix in ((REPO, ""), (DATA, "data/"), (NOTEBOOKS, "notebooks/")):
        if p.is_relative_to(root):
            rel = p.relative_to(root).as_posix()
            return prefix + rel if rel != "." else (prefix.rstrip("/") or ".")
    return str(p)


def slug(label: str) -> str:
    """A file-name-safe form of a label: "SFT -> PPO (final)" -> "sft-ppo-final".

    The one spelling of a study's name in file names: its output folder
    (:func:`study_folder`) and the suffix of its artifacts (``table1_<slug>``).
    """
    out = re.sub(r"[^A-Za-z0-9.]+", "-", str(label)).strip("-.").lower()
    return out or "x"


def reserved_name(name: str) -> str | None:
    """What the files of a study named ``name`` would collide with, when its slug is a name
    leash uses itself (an embedded study, a folder of :data:`BUILD_FOLDERS`, ``site-*``: the
    site of another study, which ``make site`` replaces as a whole); None when it is free.

    Examples
    --------
    >>> reserved_name("Site-my-study")
    'the site of `make site` for study my-study'
    >>> reserved_name("my study") is None
    True
    """
    label = slug(name)
    if label in EMBEDDED_STUDIES:
        return (f"the study of the embedded runs, whose executed notebooks are "
                f"build/<notebook>.{label}.ipynb")
    if label.startswith("site-"):
        return f"the site of `make site` for study {label[len('site-'):]}"
    return BUILD_FOLDERS.get(label)


def study_folder(name: str) -> Path:
    """``build/<slug of the study's name>/``: a study run's artifacts, its index and the cache
    of its per-question summaries (``.summaries/``).
    """
    return BUILD / slug(name)
