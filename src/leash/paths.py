"""The repository's folders: the one place that knows where things are.

leash runs from a checkout (its notebooks, data files and committed figures live beside the
package), so the paths are computed from this file's location.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["BUILD", "BUILD_FOLDERS", "DATA", "EMBEDDED_STUDIES", "FIGURES", "MIRROR_ENV",
           "NOTEBOOKS", "REPO", "RUNS", "SCRATCH", "reserved_name", "shown", "slug",
           "study_folder"]

REPO = Path(__file__).resolve().parents[2]
#: The shipped data: the paper's numbers, the demo, the study files, the manifest.
DATA = REPO / "data"
#: The paper's notebooks.
NOTEBOOKS = REPO / "notebooks"
#: The parameter sets of the default ``make reproduce`` run, per notebook.
RUNS = NOTEBOOKS / "runs.yaml"
#: The committed artifacts; only the default ``make reproduce`` run writes here.
FIGURES = REPO / "figures"
#: Executed notebooks and every other run's artifacts (ignored by git).
BUILD = REPO / "build"
#: Where a notebook writes when it is run by hand (JupyterLab, nbconvert, papermill).
SCRATCH = BUILD / "figures"
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
    """A path as messages show it: relative to the repository when inside it."""
    p = Path(os.path.abspath(path))
    try:
        return p.relative_to(REPO).as_posix()
    except ValueError:
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
