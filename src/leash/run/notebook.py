"""What a notebook calls besides the analysis: check its parameters, and skip when data is absent.

Every notebook starts the same way, so that it runs as a page in JupyterLab ("Run All"), with
``jupyter nbconvert --execute``, with ``papermill -p NAME VALUE`` and under ``make reproduce``::

    # cell tagged "parameters"
    study: str = "paper"  # "paper" (the paper's printed numbers), "demo" (SIMULATED) or a file
    outdir: str = ""  # folder of the artifacts; "" = build/figures/ (make reproduce: figures/)
    estimator: "Optional[str]" = None  # not given: None, under a quoted Optional[...]

    # first code cell after it
    from leash.run import notebook
    notebook.start(globals())

A notebook whose data are absent calls :func:`skip` (or :func:`require_data`,
:func:`require_study`, :func:`require_gold`): the reason is one line, not a traceback, and
:mod:`leash_eval.run.reproduce` reports the notebook as skipped. A notebook that only *shows*
real data in one section, and runs without it, asks :func:`available_study` instead and says
the reason where that section would be.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from leash.errors import LeashTypeError, LeashValueError, SkipNotebook
from leash.run.parameters import (
    NotebookParameter,
    ParameterError,
    annotation_text,
    validate_parameters,
)

__all__ = ["ParameterError", "SkipNotebook", "available_study", "source", "require_data",
           "require_gold", "require_import", "require_study", "skip", "start"]


def source(study="paper", *, section: str | None = None, paper: bool = True):
    """The one input a notebook runs on; skip the notebook when it has no data for it.

    Parameters
    ----------
    study : str or Study
        The notebook's ``study`` parameter (see :func:`leash.artifacts.open_study`).
    section : str, optional
        The study section the artifact needs (``"support"``, ``"gym"``...).
    paper : bool, default True
        Whether the paper's printed numbers can serve this artifact.

    Returns
    -------
    leash.artifacts.ArtifactSource

    Raises
    ------
    SkipNotebook
        With a one-line reason, when the source has no data for this artifact (the paper prints
        nothing for it, or the study's section is missing or empty).
    """
    from leash.artifacts import open_study

    src = open_study(study)
    reason = src.skip_reason(section, printed=paper)
    if reason:
        raise SkipNotebook(reason)
    return src



def skip(reason: str):
    """Stop the notebook here: its data are absent (raises SkipNotebook with ``reason``)."""
    raise SkipNotebook(reason)


def require_import(module: str, extra: str):
    """Skip the notebook unless ``module`` can be imported here (an optional extra).

    Parameters
    ----------
    module : str
        A module name, e.g. ``"llama_cpp"``.
    extra : str
        The extra of leash that installs it, e.g. ``"cpu-generate"`` (named in the reason).
    """
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise SkipNotebook(f"the {extra} extra is not installed (no module {module}; pip "
                           f"install -e \".[{extra}]\")")


def _injected(history) -> list[str]:
    """Names papermill injected: the assignments of the last input (IPython's ``In``) that
    starts with the header papermill's Python translator writes, ``# Parameters``.
    """
    source = next((s for s in reversed(list(history or [])) if isinstance(s, str)
                   and s.startswith("# Parameters")), "")
    try:
        return [t.id for node in ast.parse(source).body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)]
    except SyntaxError:
        return []


def start(namespace) -> None:
    """Check the notebook's parameters; call it first, right after the parameters cell.

    The declared parameters are the names the parameters cell annotates (Python keeps them in
    ``__annotations__``); a name papermill injected that is not declared is refused (papermill
    itself only warns).

    Parameters
    ----------
    namespace : dict
        The notebook's ``globals()``.

    Raises
    ------
    ParameterError
        One line naming the parameter and the value: an unknown name (with the closest declared
        one), a value of the wrong type, or one out of range.
    """
    declared = {name: NotebookParameter(name, annotation_text(ann), default="")
                for name, ann in (namespace.get("__annotations__") or {}).items()}
    given = {name: namespace.get(name) for name in [*declared, *_injected(namespace.get("In"))]
             if name in namespace or name not in declared}
    validate_parameters("notebook", given, declared=declared, label="This notebook")


def require_data(path_or_name):
    """Return the local path(s) of an input, or skip the notebook if it is not available here.

    Parameters
    ----------
    path_or_name : str or path-like
        An existing file or folder, or a dataset or group name of ``data/manifest.yaml``,
        looked up in the download cache and the mirror (``LEASH_DATA_MIRROR``), never online.

    Returns
    -------
    pathlib.Path or dict of str to pathlib.Path
        The path (file, dataset), or ``{dataset: path}`` for a group. SkipNotebook if it is not
        here; ValueError for a name that is neither a path nor in the manifest (a misspelt name
        is a bug, not a reason to skip) or a mirror file with the wrong checksum.
    """
    from leash.sources.seam import toolkit

    if not isinstance(path_or_name, (str, os.PathLike)) or not str(path_or_name):
        # the template of parameter errors, through leash.errors: the first cell of a notebook
        # loads no numpy, which the declared validation (leash.core._validation) needs
        raise LeashTypeError(param="path_or_name", func="require_data", value=path_or_name,
                             constraint="a non-empty str or path")
    p = Path(path_or_name)
    if p.exists():
        return p
    name = str(path_or_name)
    tk = toolkit("A dataset of the data manifest")
    try:
        found = tk.local_copies(name)
    except ValueError as exc:
        if isinstance(path_or_name, os.PathLike) or "/" in name or os.sep in name or p.suffix:
            raise SkipNotebook(f"input file {name} not found") from None
        raise LeashValueError(f"{name!r} is neither an existing file nor a dataset or group of "
                              "the manifest. ", exc, func="require_data", param="path_or_name",
                              value=name) from None
    absent = [n for n, path in found.items() if path is None]
    if absent:
        raise SkipNotebook(
            f"data not available locally: {', '.join(absent)} (no verified copy in data/raw/ and "
            f"none in the mirror ${tk.MIRROR_ENV}; `leash fetch {name}` downloads it)"
        )
    return found[name] if list(found) == [name] else found


def require_study(study, sections=None):
    """Return the study, or skip the notebook if the data its sections list are not here.

    Required: each manifest dataset its ``dataset:`` sources name (through
    :func:`require_data`), a file for each ``path:`` source, and a section with sources for
    each of ``sections``.

    Parameters
    ----------
    study : str, path-like or leash.sources.study.Study
        A shipped study name or a study file (see :func:`leash.sources.study.load_study`).
    sections : str or sequence of str, optional
        The sections the notebook reads (default: all of the study's).

    Returns
    -------
    leash.sources.study.Study
    """
    import glob

    from leash.sources.study import load_study

    s = load_study(study)
    names = [sections] if isinstance(sections, str) else list(sections or s.sections)
    for name in names:
        if not s.has_data(name):
            raise SkipNotebook(
                f"study {s.name!r} has no data for this notebook: its section {name!r} is "
                f"missing or lists no sources (sections: {sorted(s.sections)})")
    for name in s.datasets(names):
        require_data(name)
    for pattern in s.path_sources(names):
        if not glob.glob(pattern):
            raise SkipNotebook(f"input files of study {s.name!r} not found: {pattern}")
    return s


def available_study(study, sections=None):
    """The study if the data its sections list are here, else None and why: for a section of a
    notebook that runs without it (the rest of the notebook is not skipped).

    Parameters
    ----------
    study, sections
        As for :func:`require_study`.

    Returns
    -------
    (leash.sources.study.Study or None, str)
        The study and "", or None and the one-line reason :func:`require_study` would skip with.
    """
    try:
        return require_study(study, sections), ""
    except SkipNotebook as exc:
        return None, str(exc)


def require_gold(study):
    """The gold answers of a study's benchmarks, or skip the notebook if they are not here.

    Each benchmark's question file of the data manifest (``question_dataset`` of
    :mod:`leash_eval.studies`)
    through :func:`require_data`; benchmarks without one have no gold answers.

    Parameters
    ----------
    study : str, path-like or leash.sources.study.Study

    Returns
    -------
    pandas.DataFrame or None
        ``benchmark, question_id, question, gold``; None when no benchmark has a question file.
    """
    import pandas as pd

    from leash.sources.seam import toolkit
    from leash.sources.study import load_study

    tk = toolkit("Gold answers")
    s = load_study(study)
    frames = []
    for bench in s.benchmarks["benchmark"]:
        name = tk.question_dataset(str(bench))
        if name is None:
            continue
        require_data(name)
        frames.append(tk.load_benchmark(name).assign(benchmark=str(bench)))
    if not frames:
        return None
    gold = pd.concat(frames, ignore_index=True)
    return gold[["benchmark", *[c for c in gold.columns if c != "benchmark"]]]
