"""The repository's folders: the one place that knows where things are.

leash runs from a checkout (its notebooks, data files and committed figures live beside the
package), so the paths are computed from this file's location.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["BUILD", "DATA", "FIGURES", "MIRROR_ENV", "NOTEBOOKS", "REPO", "RUNS", "SCRATCH",
           "shown", "slug", "study_folder"]

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


def study_folder(name: str) -> Path:
    """``build/<slug of the study's name>/``: a study run's artifacts, its index and the cache
    of its per-question summaries (``.summaries/``).
    """
    return BUILD / slug(name)
