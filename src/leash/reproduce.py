"""The engine of ``make reproduce``: run every notebook through papermill, validated, in order.

``python -m leash.reproduce --data embedded|<study.yaml> [--only NAME ...] [--outdir figures]
[--build build] [--jobs 1] [--list]``

1. **Discovery.** The notebooks are ``notebooks/*.ipynb``, run in file-name order (they are
   numbered ``00_``, ``01_``, ...). :data:`NOTEBOOKS` is that list as ``(stem, parameters)``
   pairs; :data:`DEFAULT_PARAMETERS` holds per-notebook overrides of the defaults written in the
   notebooks' ``parameters`` cells. An override for a notebook that does not exist (yet) is
   reported as missing; it fails the run only when the notebook is named with ``--only``.
2. **Validation before execution**, for every selected notebook, before any kernel starts. The
   parameters cell is read with :func:`papermill.inspect_notebook` (and with :mod:`ast`, for the
   annotations papermill's regular expression cannot parse, such as ``str | None``). An unknown
   parameter stops the run with the closest known name (papermill itself only logs a warning);
   values are type-checked against the annotation (int, float, str, bool, list[...], dict,
   ``X | None``) and range-checked by :data:`PARAMETER_RULES`, one declarative table keyed by
   parameter name and shared by all notebooks. Literal defaults are checked too.
3. **Execution** with :func:`papermill.execute_notebook` into ``build/<stem>.ipynb``, in the
   repository root as working directory, with ``PYTHONHASHSEED=0``, ``MPLBACKEND=Agg``,
   ``SOURCE_DATE_EPOCH=0`` and ``LEASH_NOTEBOOK=<stem>`` in the kernel's environment. Progress
   goes to stderr, one line per notebook (``[3/12] 03_table4_checkpoints ... ok 4.2 s``), then a
   summary.
4. **Outcome.** A notebook that raises :class:`SkipNotebook` (e.g. via :func:`require_data` when
   real data is absent) or :class:`leash.manifest.DatasetUnavailableError` (the data layer's
   "no cached copy, no mirror, no network") is reported as ``skipped: <reason>``. Any other
   error stops the run with exit status 1, naming the notebook, the failing cell (index in the
   source notebook and the ``In [n]`` of the executed copy), the exception and the path of the
   partially executed notebook. After a run without failure, ``<outdir>/README.md`` is
   regenerated from the artifact records (:func:`leash.report.write_index`).

5. **Folders and interruption.** ``--outdir`` (default the repository's ``figures/``) and
   ``--build`` (default ``build/``) are resolved once, relative paths against the working
   directory, created and checked to be writable before any kernel starts. The output folder
   is locked for the run (an flock on ``<outdir>/.reproduce.lock``, released by the operating
   system however the run ends), so a second run into it is refused instead of interleaving
   records.
   Ctrl-C ends the run with one line and exit status 130; the interrupted notebooks' previous
   artifact records are put back and the index is not rewritten.

``--data embedded`` runs every notebook on its defaults (the paper's printed counts plus the
simulated demo). ``--data <study.yaml>`` (or a shipped study name such as ``demo``, or
``paper``) is passed as the ``study`` parameter to every notebook that declares one; the others
run unchanged. ``outdir`` is passed to every notebook that
declares it.

Notebook contract: declare ``outdir: str = "figures"`` (and ``study: str = "embedded"`` when the
notebook can run on real data) in the cell tagged ``parameters``, write artifacts only through
:mod:`leash.report`, and register each one with :func:`leash.report.register_artifact`.

Exit status: 0 success (skips included), 1 a notebook failed, 2 bad usage, parameters or
folders, 130 interrupted.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import difflib
import numbers
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ._argparse import OneLineParser

__all__ = [
    "DEFAULT_PARAMETERS",
    "EMBEDDED",
    "KERNEL_ENV",
    "NOTEBOOKS",
    "NOTEBOOK_DIR",
    "PARAMETER_RULES",
    "SKIP_EXCEPTIONS",
    "NotebookError",
    "NotebookParameter",
    "NotebookResult",
    "ParameterError",
    "Rule",
    "SkipNotebook",
    "discover_notebooks",
    "main",
    "missing_notebooks",
    "notebook_parameters",
    "require_data",
    "run_all",
    "run_notebook",
    "validate_parameters",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Folder of the paper's notebooks.
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
#: ``--data`` value that runs every notebook on its embedded defaults.
EMBEDDED = "embedded"
PAPER = "paper"  # the paper's printed counts (leash.artifacts.PAPER)
KERNEL_NAME = "python3"
#: Environment of every kernel (papermill's kernels inherit the parent's environment).
KERNEL_ENV = {"PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", "SOURCE_DATE_EPOCH": "0"}
#: Command-line arguments of every kernel. ipykernel logs start-up chatter (e.g. a warning
#: about TCP transport on localhost) to the terminal, where it would break the progress lines;
#: errors of the notebook's code still reach the executed notebook and the runner's report.
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL",)
_NOTEBOOK_ENV = "LEASH_NOTEBOOK"  # same value as leash.report.NOTEBOOK_ENV
#: Exceptions (by class name, as the kernel reports them) that mean "skipped", not "failed":
#: SkipNotebook, and leash.manifest.DatasetUnavailableError (a dataset neither cached, nor in
#: the mirror, nor downloadable), which the data layer raises when real data is absent.
SKIP_EXCEPTIONS = ("SkipNotebook", "DatasetUnavailableError")
STUDY_PARAMETER = "study"
OUTDIR_PARAMETER = "outdir"

#: Per-notebook overrides of the parameters-cell defaults for ``make reproduce``, keyed by
#: notebook stem. Empty by default: each notebook's own defaults are the paper's settings.
DEFAULT_PARAMETERS: dict[str, dict] = {}


# ---------------------------------------------------------------------------------------------
# skipping notebooks whose data is absent
# ---------------------------------------------------------------------------------------------

class SkipNotebook(Exception):  # noqa: N818 - a signal, not an error: the name says what it does
    """Raised inside a notebook to say "this notebook cannot run here; skip it".

    The runner reports it as ``skipped: <message>`` instead of a failure. Raise it (usually via
    :func:`require_data`) only for missing *external* data, never to hide a bug.
    """


def require_data(path_or_name):
    """Return the local path(s) of an input, or skip the notebook if it is not available here.

    Parameters
    ----------
    path_or_name : str or path-like
        An existing file or folder (relative paths are relative to the working directory, the
        repository root under the runner), or a dataset or group name of the data manifest
        (``data/manifest.yaml``), looked up in the download cache and in the mirror
        (``LEASH_DATA_MIRROR``) without any network access.

    Returns
    -------
    pathlib.Path or dict of str to pathlib.Path
        The path, for a file or a single dataset; ``{dataset: path}`` for a group.

    Raises
    ------
    SkipNotebook
        If the file does not exist, or a dataset has no verified local copy.
    ValueError
        If ``path_or_name`` is neither a path (it has a folder or a suffix) nor a name of the
        manifest: a misspelt name is a bug, not a reason to skip. Also when a mirror file has
        the wrong checksum (see :func:`leash.manifest.locate`).
    """
    from . import manifest as _manifest

    if not isinstance(path_or_name, (str, os.PathLike)) or not str(path_or_name):
        raise TypeError(f"The 'path_or_name' parameter of require_data must be a non-empty str "
                        f"or path. Got {path_or_name!r} instead.")
    p = Path(path_or_name)
    if p.exists():
        return p
    name = str(path_or_name)
    m = _manifest.load_manifest()
    try:
        names = m.names(name)
    except ValueError as exc:
        if isinstance(path_or_name, os.PathLike) or "/" in name or os.sep in name or p.suffix:
            raise SkipNotebook(f"input file {name} not found") from None
        raise ValueError(f"require_data: {name!r} is neither an existing file nor a dataset or "
                         f"group of the manifest. {exc}") from None
    found = {n: _manifest.locate(n, manifest=m) for n in names}
    absent = [n for n, path in found.items() if path is None]
    if absent:
        raise SkipNotebook(
            f"data not available locally: {', '.join(absent)} (no verified copy in data/raw/ and "
            f"none in the mirror ${_manifest.MIRROR_ENV}; `leash fetch {name}` downloads it)"
        )
    if name in m.datasets:
        return found[name]
    return found


# ---------------------------------------------------------------------------------------------
# parameters: reading, rules, validation
# ---------------------------------------------------------------------------------------------

class ParameterError(ValueError):
    """A notebook parameter is unknown, of the wrong type, or out of range."""


@dataclass(frozen=True)
class Rule:
    """A range rule for a parameter: ``check(value)`` is True for valid values."""

    description: str
    check: Callable[[object], bool]


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _estimators():
    from .passk import ESTIMATORS

    return ESTIMATORS


def _study_ok(v) -> bool:
    """``study`` as :func:`leash.artifacts.open_study` resolves it: a keyword, a shipped study
    name, or an existing file (relative paths: from the repository root, the kernels' cwd)."""
    from .study import list_studies

    if not isinstance(v, str) or not v:
        return False
    return v in (EMBEDDED, PAPER) or v in list_studies() or (REPO_ROOT / v).is_file()


#: Range rules shared by every notebook, keyed by parameter name.
PARAMETER_RULES: dict[str, Rule] = {
    "zeta": Rule("a float in the open interval (0, 1)", lambda v: _is_real(v) and 0 < v < 1),
    "level": Rule("a float in the open interval (0, 1)", lambda v: _is_real(v) and 0 < v < 1),
    "k": Rule("an int >= 1", lambda v: _is_int(v) and v >= 1),
    "budget": Rule("an int >= 1", lambda v: _is_int(v) and v >= 1),
    "ks": Rule("a non-empty list of ints >= 1",
               lambda v: isinstance(v, list) and len(v) > 0
               and all(_is_int(x) and x >= 1 for x in v)),
    "min_count": Rule("an int >= 1", lambda v: _is_int(v) and v >= 1),
    "n_boot": Rule("0 (no bootstrap) or an int >= 2",
                   lambda v: _is_int(v) and (v == 0 or v >= 2)),
    "seed": Rule("an int >= 0", lambda v: _is_int(v) and v >= 0),
    "estimator": Rule("one of leash.passk.ESTIMATORS", lambda v: v in _estimators()),
    "study": Rule(f"{EMBEDDED!r}, {'paper'!r}, the name of a study in data/studies/, or the "
                  f"path of an existing study file (relative to the repository root)", _study_ok),
}

_NO_LITERAL = object()


@dataclass(frozen=True)
class NotebookParameter:
    """One parameter of a notebook's ``parameters`` cell."""

    name: str
    type_name: str | None
    default: str
    help: str = ""
    value: object = field(default=_NO_LITERAL, repr=False, compare=False)

    @property
    def has_literal_default(self) -> bool:
        return self.value is not _NO_LITERAL


def _read_nb(path: Path):
    import nbformat

    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as exc:  # nbformat raises several types for unreadable JSON/schema
        raise ValueError(f"Cannot read notebook {path}: {type(exc).__name__}: {exc}") from None


def _parameter_cell_index(nb) -> int:
    for i, cell in enumerate(nb.cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return i
    return -1


def _literal(src: str):
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_LITERAL


def _parse_cell(source: str) -> dict[str, tuple[str | None, str]]:
    """name -> (annotation, default source) of the top-level assignments of a cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, tuple[str | None, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                out[node.target.id] = (ast.unparse(node.annotation), ast.unparse(node.value))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = (None, ast.unparse(node.value))
    return out


def notebook_parameters(path) -> dict[str, NotebookParameter]:
    """The parameters declared in a notebook's cell tagged ``parameters``.

    Uses :func:`papermill.inspect_notebook` (names, annotations, help comments) and, for
    assignments papermill's line-based regular expression skips (``x: str | None = None``,
    multi-target assignments), the cell's syntax tree.

    Parameters
    ----------
    path : str or path-like
        The notebook.

    Returns
    -------
    dict of str to NotebookParameter
        In the cell's order; empty if the notebook has no ``parameters`` cell.
    """
    import papermill

    path = Path(path)
    nb = _read_nb(path)
    idx = _parameter_cell_index(nb)
    if idx < 0:
        return {}
    parsed = _parse_cell(nb.cells[idx].source)
    try:
        inspected = papermill.inspect_notebook(str(path))
    except Exception:  # noqa: BLE001 - papermill cannot inspect: the syntax tree still can
        inspected = {}
    out: dict[str, NotebookParameter] = {}
    for name in [*parsed, *[n for n in inspected if n not in parsed]]:
        info = inspected.get(name, {})
        ann, default = parsed.get(name, (None, ""))
        default = info.get("default") or default  # papermill keeps the source text as written
        if ann is None and info.get("inferred_type_name") not in (None, "None"):
            ann = info["inferred_type_name"]
        out[name] = NotebookParameter(
            name=name, type_name=ann, default=default, help=info.get("help", ""),
            value=_literal(default),
        )
    return out


_TYPES = {"int": _is_int, "float": _is_real, "str": lambda v: isinstance(v, str),
          "bool": lambda v: isinstance(v, bool), "list": lambda v: isinstance(v, list),
          "dict": lambda v: isinstance(v, dict)}
_ALIASES = {"List": "list", "Dict": "dict", "Sequence": "list", "tuple": "list",
            "Tuple": "list"}


def _split_annotation(ann: str) -> tuple[str | None, str | None, bool]:
    """(outer type, element type, None allowed) of an annotation string; None if unknown."""
    a = ann.replace(" ", "").strip("'\"")
    allow_none = False
    if a.startswith("Optional[") and a.endswith("]"):
        a, allow_none = a[len("Optional["):-1], True
    parts = a.split("|")
    if len(parts) > 1:
        rest = [p for p in parts if p != "None"]
        allow_none = allow_none or len(rest) < len(parts)
        if len(rest) != 1:
            return None, None, allow_none
        a = rest[0]
    elem = None
    if "[" in a and a.endswith("]"):
        a, elem = a[: a.index("[")], a[a.index("[") + 1: -1]
        if "," in elem:  # dict[str, int] and friends: check the container only
            elem = None
    a = _ALIASES.get(a, a)
    if elem is not None:
        elem = _ALIASES.get(elem, elem)
    return (a if a in _TYPES else None), (elem if elem in _TYPES else None), allow_none


def _allows_none(p: NotebookParameter) -> bool:
    if p.type_name is not None:
        return _split_annotation(p.type_name)[2]
    return p.has_literal_default and p.value is None


def _type_of_literal(v) -> str | None:
    for name in ("bool", "int", "float", "str", "list", "dict"):
        if _TYPES[name](v):
            return name
    return None


def _type_error(p: NotebookParameter, value) -> str | None:
    """None if ``value`` fits the annotation of ``p``, else the expected type as text."""
    if p.type_name is not None:
        outer, elem, allow_none = _split_annotation(p.type_name)
        shown = p.type_name
    elif p.has_literal_default and p.value is not None:
        outer, elem, allow_none = _type_of_literal(p.value), None, False
        shown = f"{outer} (the type of its default {p.default})"
    else:
        return None
    if value is None and allow_none:
        return None
    if outer is None:
        return None  # an annotation we do not interpret (a class, a Literal...): no check
    if not _TYPES[outer](value):
        return shown
    if elem is not None and not all(_TYPES[elem](x) for x in value):
        return shown
    return None


def _closest(name: str, known) -> str:
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" Did you mean {match[0]!r}?" if match else ""


def validate_parameters(path, parameters=None, *, declared=None, rules=None):
    """Check parameters against a notebook's parameters cell and the shared range rules.

    Parameters
    ----------
    path : str or path-like
        The notebook.
    parameters : dict, optional
        Values to inject (name -> value). Tuples are converted to lists.
    declared : dict of str to NotebookParameter, optional
        The result of :func:`notebook_parameters`, if already computed.
    rules : dict of str to Rule, optional
        Default :data:`PARAMETER_RULES`.

    Returns
    -------
    dict
        The effective parameters: every literal default of the cell, updated with
        ``parameters``.

    Raises
    ------
    ParameterError
        Naming the notebook, the parameter, the value and what was expected: for an unknown
        name (with the closest known name), a wrong type, or a value (given, or a literal
        default) that breaks its rule.
    """
    path = Path(path)
    stem = path.stem
    declared = notebook_parameters(path) if declared is None else declared
    rules = PARAMETER_RULES if rules is None else rules
    parameters = dict(parameters or {})
    if not all(isinstance(k, str) for k in parameters):
        raise TypeError(f"Parameter names of notebook {stem} must be str. "
                        f"Got {list(parameters)}.")
    for name in sorted(parameters):
        if name not in declared:
            known = ", ".join(declared) if declared else "(none: the notebook has no cell " \
                                                        "tagged 'parameters')"
            raise ParameterError(
                f"Notebook {stem}: unknown parameter {name!r}.{_closest(name, declared)} "
                f"Parameters of this notebook: {known}."
            )
        if isinstance(parameters[name], tuple):
            parameters[name] = list(parameters[name])
    effective = {n: p.value for n, p in declared.items() if p.has_literal_default}
    effective.update(parameters)
    for name, value in effective.items():
        where = "" if name in parameters else " (the default in its parameters cell)"
        expected = _type_error(declared[name], value)
        if expected is not None:
            raise ParameterError(
                f"Notebook {stem}: parameter {name!r} = {value!r}{where} has type "
                f"{type(value).__name__}; its annotation asks for {expected}."
            )
        rule = rules.get(name)
        if value is None and _allows_none(declared[name]):
            rule = None  # "not given", as the annotation permits
        if rule is not None:
            try:
                ok = bool(rule.check(value))
            except Exception:  # noqa: BLE001 - a rule that cannot evaluate the value rejects it
                ok = False
            if not ok:
                raise ParameterError(
                    f"Notebook {stem}: parameter {name!r} = {value!r}{where} breaks the "
                    f"rule for {name!r}: it must be {rule.description}."
                )
    return effective


# ---------------------------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------------------------

def discover_notebooks(directory=None, overrides=None):
    """The notebooks of a folder in run order, with their parameter overrides.

    Parameters
    ----------
    directory : str or path-like, optional
        Default ``notebooks/`` of the repository.
    overrides : dict of str to dict, optional
        Per-notebook overrides keyed by stem; default :data:`DEFAULT_PARAMETERS`.

    Returns
    -------
    list of (str, dict)
        ``(stem, parameters)`` sorted by file name; files starting with ``_`` or ``.`` are
        drafts and left out.
    """
    directory = NOTEBOOK_DIR if directory is None else Path(directory)
    overrides = DEFAULT_PARAMETERS if overrides is None else overrides
    paths = sorted(p for p in directory.glob("*.ipynb") if not p.name.startswith(("_", ".")))
    return [(p.stem, dict(overrides.get(p.stem, {}))) for p in paths]


def missing_notebooks(directory=None, overrides=None) -> list[str]:
    """Stems that have parameter overrides but no notebook file (not written yet)."""
    directory = NOTEBOOK_DIR if directory is None else Path(directory)
    overrides = DEFAULT_PARAMETERS if overrides is None else overrides
    return sorted(s for s in overrides if not (directory / f"{s}.ipynb").is_file())


#: The notebooks of ``notebooks/`` at import time, as ``(stem, parameters)`` in run order.
#: :func:`main` discovers again, so notebooks added later are picked up.
NOTEBOOKS: list[tuple[str, dict]] = discover_notebooks()


# ---------------------------------------------------------------------------------------------
# running one notebook
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NotebookResult:
    """Outcome of one notebook run."""

    name: str
    status: str  # "ok", "skipped" or "failed"
    seconds: float
    output: Path | None
    parameters: dict = field(default_factory=dict)
    reason: str = ""


class NotebookError(RuntimeError):
    """A notebook failed; the message names the notebook, the cell and the partial output."""

    def __init__(self, message, *, notebook, cell_index=None, exec_count=None, ename=None,
                 evalue=None, output=None):
        super().__init__(message)
        self.notebook = notebook
        self.cell_index = cell_index
        self.exec_count = exec_count
        self.ename = ename
        self.evalue = evalue
        self.output = output

    def __reduce__(self):  # picklable across the process pool of --jobs
        return (_rebuild_error, (self.args[0], self.notebook, self.cell_index, self.exec_count,
                                 self.ename, self.evalue, self.output))


def _rebuild_error(message, notebook, cell_index, exec_count, ename, evalue, output):
    return NotebookError(message, notebook=notebook, cell_index=cell_index,
                         exec_count=exec_count, ename=ename, evalue=evalue, output=output)


@contextlib.contextmanager
def _environ(updates: Mapping[str, str]):
    """Set environment variables for the duration of a run, then restore them."""
    old = {k: os.environ.get(k) for k in updates}
    os.environ.update(updates)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _display_path(p: Path) -> str:
    """Path relative to the repository when inside it (messages carry no machine paths)."""
    p = Path(os.path.abspath(p))
    try:
        return p.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(p)


def _source_cell(nb, executed_index: int, injected: bool) -> int | None:
    """Index in the source notebook of a cell of the executed copy (None: the injected cell)."""
    if not injected:
        return executed_index
    if any("injected-parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        return executed_index  # replaced in place: no shift
    inj = _parameter_cell_index(nb) + 1  # 0 when there is no parameters cell
    if executed_index == inj:
        return None
    return executed_index - 1 if executed_index > inj else executed_index


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            return line.strip()[:100]
    return ""


def run_notebook(path, parameters=None, outdir="figures", build="build", *, cwd=None,
                 kernel_name=KERNEL_NAME):
    """Validate and execute one notebook with papermill.

    Parameters
    ----------
    path : str or path-like
        The notebook.
    parameters : dict, optional
        Values injected into its parameters cell; validated first (:func:`validate_parameters`).
        ``outdir`` is added for notebooks that declare it.
    outdir : str or path-like, default "figures"
        Artifact folder. The notebook's artifact records there (``.artifacts/<stem>.json``) are
        cleared before the run and put back if the notebook skips or fails.
    build : str or path-like, default "build"
        Folder of the executed copy ``<build>/<stem>.ipynb`` (created).
    cwd : str or path-like, optional
        Working directory of the kernel; default the repository root.
    kernel_name : str, default "python3"

    Returns
    -------
    NotebookResult
        ``status`` "ok" or "skipped" (with ``reason``: the notebook raised one of
        :data:`SKIP_EXCEPTIONS`).

    Raises
    ------
    ParameterError
        Before any kernel starts, for an unknown or invalid parameter.
    NotebookError
        If a cell fails: names the notebook, the cell (source index and ``In [n]``), the
        exception, and the partially executed notebook.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from .report import sidecar_path

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Notebook {path} does not exist.")
    stem = path.stem
    cwd = REPO_ROOT if cwd is None else Path(cwd)
    outdir, build = Path(os.path.abspath(outdir)), Path(os.path.abspath(build))
    declared = notebook_parameters(path)
    params = dict(parameters or {})
    if OUTDIR_PARAMETER in declared and OUTDIR_PARAMETER not in params:
        params[OUTDIR_PARAMETER] = _kernel_path(outdir, cwd)
    effective = validate_parameters(path, params, declared=declared)
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in params.items()}

    build.mkdir(parents=True, exist_ok=True)
    outdir.mkdir(parents=True, exist_ok=True)
    output = build / f"{stem}.ipynb"
    # The notebook's artifact records are rebuilt by this run; a run that skips or fails puts
    # the previous records back, since the files they describe were not regenerated.
    side = sidecar_path(outdir, stem)
    previous = side.read_bytes() if side.is_file() else None
    side.unlink(missing_ok=True)
    t0 = time.perf_counter()
    with _environ({**KERNEL_ENV, _NOTEBOOK_ENV: stem}):
        try:
            papermill.execute_notebook(
                str(path), str(output), parameters=params, kernel_name=kernel_name,
                progress_bar=False, cwd=str(cwd), log_output=False,
                extra_arguments=list(KERNEL_ARGUMENTS),
            )
        except PapermillExecutionError as exc:
            seconds = time.perf_counter() - t0
            _restore(side, previous)
            if exc.ename == "KeyboardInterrupt":
                raise KeyboardInterrupt from None
            if exc.ename in SKIP_EXCEPTIONS:
                return NotebookResult(stem, "skipped", seconds, output, effective,
                                      reason=str(exc.evalue))
            src = _source_cell(_read_nb(path), exc.cell_index, bool(params))
            where = ("the injected parameters cell" if src is None
                     else f"cell {src} of {_display_path(path)}")
            first = _first_line(exc.source or "")
            message = (
                f"Notebook {stem} failed in {where} (In [{exc.exec_count}]): "
                f"{exc.ename}: {exc.evalue}"
                + (f"\n  cell starts with: {first}" if first else "")
                + f"\n  partially executed notebook: {_display_path(output)}"
            )
            raise NotebookError(message, notebook=stem, cell_index=src,
                                exec_count=exc.exec_count, ename=exc.ename,
                                evalue=exc.evalue, output=output) from None
        except KeyboardInterrupt:
            _restore(side, previous)
            raise
        except Exception as exc:  # noqa: BLE001 - kernel died, timeout...: still name the notebook
            _restore(side, previous)
            raise NotebookError(
                f"Notebook {stem} could not be executed: {type(exc).__name__}: {exc}"
                f"\n  partially executed notebook: {_display_path(output)}",
                notebook=stem, ename=type(exc).__name__, evalue=str(exc), output=output,
            ) from None
    return NotebookResult(stem, "ok", time.perf_counter() - t0, output, effective)


def _restore(side: Path, previous: bytes | None) -> None:
    if previous is None:
        side.unlink(missing_ok=True)
    else:
        side.parent.mkdir(parents=True, exist_ok=True)
        side.write_bytes(previous)


def _kernel_path(p: Path, cwd: Path) -> str:
    """A path as the kernel (working directory ``cwd``) should see it: relative when inside."""
    try:
        return Path(os.path.abspath(p)).relative_to(os.path.abspath(cwd)).as_posix()
    except ValueError:
        return str(p)


# ---------------------------------------------------------------------------------------------
# running all notebooks
# ---------------------------------------------------------------------------------------------

def _select(available: list[str], names) -> list[str]:
    """Resolve ``--only`` names: a stem, a stem without its number prefix, or a number prefix."""
    chosen: list[str] = []
    for name in names:
        hits = [s for s in available if s == name]
        hits = hits or [s for s in available if s.split("_", 1)[-1] == name]
        hits = hits or [s for s in available if s.split("_", 1)[0] == name]
        if len(hits) != 1:
            if hits:
                raise ParameterError(f"--only {name!r} is ambiguous: {', '.join(hits)}.")
            raise ParameterError(
                f"--only {name!r}: no such notebook in notebooks/.{_closest(name, available)} "
                f"Notebooks: {', '.join(available) or '(none yet)'}."
            )
        if hits[0] not in chosen:
            chosen.append(hits[0])
    return [s for s in available if s in chosen]


def _prepare_folder(p: Path, flag: str) -> None:
    """Create an output folder and check that it can be written; ParameterError naming
    ``flag`` otherwise."""
    shown = _display_path(p)
    if p.exists() and not p.is_dir():
        raise ParameterError(f"{flag} {shown}: is a file, not a folder.")
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=p):
            pass
    except OSError as exc:
        raise ParameterError(f"{flag} {shown}: cannot write there "
                             f"({exc.strerror or type(exc).__name__}).") from None


#: Lock file of an output folder while a run writes there (ignored by git).
LOCK_NAME = ".reproduce.lock"


@contextlib.contextmanager
def _lock(outdir: Path):
    """Hold an exclusive lock on ``outdir`` for the duration of a run.

    Two runs into one folder would interleave their artifact records and leave an index that
    disagrees with them; the second run is refused instead. The lock is ``fcntl.flock`` on
    ``<outdir>/.reproduce.lock``, which the operating system releases when the process ends,
    however it ends, so a killed run leaves no stale lock. The file itself stays (ignored by
    git and by the index): removing a file that another process may be about to lock would
    let two runs lock two different files. (Where fcntl does not exist, on Windows, runs are
    not locked.)
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    path = outdir / LOCK_NAME
    fh = open(path, "a+")  # noqa: SIM115 - held open for the duration of the run
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "?"
            raise ParameterError(
                f"--outdir {_display_path(outdir)}: another reproduce run (pid {holder}) is "
                f"writing there; wait for it to finish, or choose another --outdir."
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield
    finally:
        fh.close()  # releases the lock


def _run_in_worker(job):
    """Pool worker: Ctrl-C interrupts the notebook being run (idle workers ignore it)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _run_one(job)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_one(job):
    """Run one notebook; failures come back as results (pickling-safe)."""
    path, params, outdir, build = job
    t0 = time.perf_counter()
    try:
        return run_notebook(path, params, outdir, build)
    except (NotebookError, ParameterError, FileNotFoundError) as exc:
        output = getattr(exc, "output", None)
        return NotebookResult(Path(path).stem, "failed", time.perf_counter() - t0, output,
                              params, reason=str(exc))


def _line(i: int, total: int, stem: str) -> str:
    return f"[{i}/{total}] {stem} ... "


def _outcome(res: NotebookResult) -> str:
    if res.status == "ok":
        return f"ok {res.seconds:.1f} s"
    if res.status == "skipped":  # the full reason is repeated in the summary
        reason = res.reason if len(res.reason) <= 90 else res.reason[:89] + "…"
        return f"skipped: {reason} ({res.seconds:.1f} s)"
    return f"FAILED {res.seconds:.1f} s"


def _study_parameter(data: str) -> str | None:
    """The ``study`` parameter the notebooks get for ``--data`` (None for "embedded").

    A study file or shipped study is loaded here, so that a broken one (an unknown key, a
    value of the wrong type, YAML anchors...) stops the run before any kernel starts, with the
    one-line message of :func:`leash.study.load_study` (file, line, key path, value).

    Raises
    ------
    ParameterError
        No such study, or the study file is invalid.
    """
    if data == EMBEDDED:
        return None
    from .study import list_studies, load_study

    p = Path(os.path.abspath(data))
    if p.is_file():
        study, target = _kernel_path(p, REPO_ROOT), p
    elif data == PAPER:
        return data  # the paper's printed numbers: no study file is read
    elif data in list_studies():
        study, target = data, data
    else:
        raise ParameterError(
            f"--data {data!r}: no such study file or shipped study (use '{EMBEDDED}', "
            f"'{PAPER}', one of {list_studies()} or the path of a study file)."
        )
    try:
        load_study(target)
    except ValueError as exc:
        raise ParameterError(f"--data {data!r}: {exc}") from None
    return study


def run_all(notebooks, *, directory=None, data=EMBEDDED, outdir=None, build=None,
            jobs=1, stream=None):
    """Validate, then execute notebooks in order; regenerate the artifact index on success.

    Parameters
    ----------
    notebooks : list of (str, dict)
        ``(stem, parameters)`` in run order, e.g. :data:`NOTEBOOKS`.
    directory : str or path-like, optional
        Folder of the notebooks; default ``notebooks/``.
    data : str, default "embedded"
        ``"embedded"`` (notebooks keep their default), or a study passed as ``study`` to the
        notebooks that declare that parameter: ``"paper"``, a shipped study name
        (``data/studies/<name>.yaml``) or the path of a study file.
    outdir, build : str or path-like, optional
        Artifact folder (default the repository's ``figures/``) and folder of the executed
        notebooks (default ``build/``). Relative paths are relative to the working directory;
        both are resolved once, here, and created if needed. While the run lasts, ``outdir``
        is locked (:func:`_lock`): a second run into the same folder is refused.
    jobs : int, default 1
        Notebooks executed in parallel (separate processes). A failure stops submitting more.
    stream : file, optional
        Progress output; default ``sys.stderr``.

    Returns
    -------
    list of NotebookResult
        One per notebook that was started, in run order.

    Raises
    ------
    ParameterError
        Before anything runs, if any notebook's parameters are invalid or the study file is
        missing or invalid (:func:`_study_parameter`); if ``outdir`` or ``build`` is a file or
        cannot be written; if another run holds the lock of ``outdir``.
    KeyboardInterrupt
        On Ctrl-C: the interrupted notebooks' previous artifact records are put back, the
        index is not rewritten, the lock is released.
    """
    stream = sys.stderr if stream is None else stream
    directory = NOTEBOOK_DIR if directory is None else Path(directory)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"The 'jobs' parameter of run_all must be an int >= 1. Got {jobs!r}.")
    study = _study_parameter(data)
    outdir = Path(os.path.abspath(REPO_ROOT / "figures" if outdir is None else outdir))
    build = Path(os.path.abspath(REPO_ROOT / "build" if build is None else build))

    jobs_list = []
    for stem, params in notebooks:
        path = directory / f"{stem}.ipynb"
        if not path.is_file():
            raise ParameterError(f"Notebook {stem}: {_display_path(path)} does not exist.")
        params = dict(params)
        declared = notebook_parameters(path)
        if study is not None and STUDY_PARAMETER in declared:
            params.setdefault(STUDY_PARAMETER, study)
        check = dict(params)
        if OUTDIR_PARAMETER in declared:
            check.setdefault(OUTDIR_PARAMETER, str(outdir))
        validate_parameters(path, check, declared=declared)
        jobs_list.append((str(path), params, str(outdir), str(build)))

    _prepare_folder(outdir, "--outdir")
    _prepare_folder(build, "--build")
    with _lock(outdir):
        return _execute(jobs_list, outdir, jobs, stream)


def _execute(jobs_list, outdir: Path, jobs: int, stream) -> list[NotebookResult]:
    """Run the validated jobs in order (or ``jobs`` at a time); write the index on success."""
    from .report import INDEX_NAME, artifact_index, write_index

    total = len(jobs_list)
    results: list[NotebookResult | None] = [None] * total
    t0 = time.perf_counter()
    failed = False
    if jobs == 1:
        for i, job in enumerate(jobs_list):
            stem = Path(job[0]).stem
            stream.write(_line(i + 1, total, stem))
            stream.flush()
            res = _run_one(job)
            results[i] = res
            stream.write(_outcome(res) + "\n")
            if res.status == "failed":
                stream.write(res.reason + "\n")
                failed = True
                break
            stream.flush()
    else:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx,
                                 initializer=_ignore_sigint) as pool:
            pending = {pool.submit(_run_in_worker, job): i for i, job in enumerate(jobs_list)}
            while pending:
                try:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                except KeyboardInterrupt:
                    # the running notebooks were interrupted too (same process group): let
                    # them put their records back, start no more, then stop
                    for fut in pending:
                        fut.cancel()
                    wait(pending)
                    raise
                for fut in done:
                    i = pending.pop(fut)
                    res = fut.result()
                    results[i] = res
                    stream.write(_line(i + 1, total, res.name) + _outcome(res) + "\n")
                    if res.status == "failed":
                        stream.write(res.reason + "\n")
                        failed = True
                    stream.flush()
                if failed:
                    for fut in pending:
                        fut.cancel()
                    pending = {f: i for f, i in pending.items() if not f.cancelled()}
    done_results = [r for r in results if r is not None]
    elapsed = time.perf_counter() - t0
    counts = {s: sum(r.status == s for r in done_results) for s in ("ok", "skipped", "failed")}
    not_run = total - len(done_results)
    summary = (f"reproduce: {total} notebook(s) in {elapsed:.1f} s: {counts['ok']} ok, "
               f"{counts['skipped']} skipped, {counts['failed']} failed"
               + (f", {not_run} not run" if not_run else ""))
    stream.write(summary + "\n")
    for r in done_results:
        if r.status == "skipped":
            stream.write(f"  skipped {r.name}: {r.reason}\n")
    if not failed:
        index = write_index(artifact_index(outdir), outdir / INDEX_NAME)
        stream.write(f"  artifact index: {_display_path(index)}\n")
    stream.flush()
    return done_results


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m leash.reproduce",
        description="Regenerate every table and figure: run notebooks/*.ipynb with papermill.",
    )
    ap.add_argument("--data", default=EMBEDDED,
                    help="'embedded' (paper counts + simulated demo), or a study file (or "
                         "shipped study name, or 'paper') passed as the 'study' parameter of "
                         "the notebooks that have one (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", default=None,
                    help="run only these notebooks (stem, stem without number, or number)")
    ap.add_argument("--outdir", default=None,
                    help="artifact folder (default: the repository's figures/; a relative path "
                         "is relative to the working directory)")
    ap.add_argument("--build", default=None,
                    help="folder of the executed notebooks (default: the repository's build/)")
    ap.add_argument("--jobs", type=int, default=1, help="notebooks run in parallel")
    ap.add_argument("--list", action="store_true",
                    help="list the notebooks and their parameters, run nothing")
    return ap


def _list(notebooks, directory: Path, stream) -> None:
    for stem, overrides in notebooks:
        stream.write(f"{stem}\n")
        for p in notebook_parameters(directory / f"{stem}.ipynb").values():
            value = overrides.get(p.name, p.default)
            note = " (override)" if p.name in overrides else ""
            stream.write(f"    {p.name}: {p.type_name or '?'} = {value}{note}"
                         + (f"  # {p.help}" if p.help else "") + "\n")


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    stream = sys.stderr
    notebooks = discover_notebooks()
    missing = missing_notebooks()
    try:
        if args.only:
            for name in args.only:
                if name in missing:
                    raise ParameterError(f"--only {name!r}: notebooks/{name}.ipynb does not "
                                         f"exist yet.")
            chosen = _select([s for s, _ in notebooks], args.only)
            notebooks = [(s, p) for s, p in notebooks if s in chosen]
        elif missing:
            stream.write(f"reproduce: not written yet (skipped): {', '.join(missing)}\n")
        if args.list:
            _study_parameter(args.data)  # a broken study file stops --list too
            _list(notebooks, NOTEBOOK_DIR, sys.stdout)
            return 0
        if not notebooks:
            stream.write("reproduce: no notebooks in notebooks/ yet.\n")
        results = run_all(notebooks, data=args.data, outdir=args.outdir, build=args.build,
                          jobs=args.jobs, stream=stream)
    except ParameterError as exc:
        stream.write(f"reproduce: {exc}\n")
        return 2
    except KeyboardInterrupt:
        stream.write("\nreproduce: interrupted; the interrupted notebooks' artifact records were "
                     "put back and the index was not rewritten.\n")
        return 130
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
