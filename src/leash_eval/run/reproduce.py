"""``make reproduce``: a loop over :func:`papermill.execute_notebook`, one call per run.

``leash reproduce [--data embedded|STUDY] [--only NAME ...] [-p NAME VALUE ...] [-f PARAMS.yaml]
[--outdir DIR] [--build DIR] [--jobs N] [--list]`` (also ``python -m leash_eval.run.reproduce``; it
calls itself ``leash reproduce`` in its help, progress and errors however it is started).

Papermill reads each notebook's parameters cell, injects the run's values and writes the executed
copy ``<build>/<run>.ipynb`` (``build/`` for ``figures/``, else ``<outdir>/.executed/``), the
run's record (its parameters, the failing cell, and the note a
:class:`leash.output.report.Publisher` leaves per artifact in an output's metadata). Written here,
as papermill does not do it: which runs (``notebooks/runs.yaml`` into the committed ``figures/``;
``--data STUDY`` into ``build/<slug of the study's name>/``, the study checked against its data
first, :mod:`leash_eval.run.study_check`, and no kernel for a notebook whose section it finds
skipped; ``-p``/``-f`` into ``build/figures/``, on a study too), every value, study file and
folder checked before any kernel starts (and the ``.ipynb`` of a Markdown notebook edited
since), the records copied to
``<outdir>/.artifacts/<run>.json`` with the index ``<outdir>/README.md`` rebuilt after a run
without failure, a skip (a :class:`leash.errors.SkipNotebook`) told apart from a failure, the
wall and CPU time of each run (its kernel's included), an flock on the output folder, and
Ctrl-C or SIGTERM as one line. ``--jobs``: runs in a :class:`pebble.ProcessPool` (not make's
``-j``: one command keeps the checks before any kernel, the lock, the progress and the index
written once after every run, and ``run_all`` serves the Python API as well).
Exit status: 0 success (skips included), 1 a notebook failed, 2 bad usage, parameters or
folders, 130 interrupted, 143 terminated.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from leash import notebook_files
from leash.errors import SkipNotebook
from leash.paths import BUILD, FIGURES, NOTEBOOKS, REPO, RUNS, SCRATCH, shown, slug
from leash.run.parameters import (
    ParameterError,
    did_you_mean,
    notebook_parameters,
    validate_parameters,
)
from leash.sources.choices import PAPER
from leash.writing import open_lock, write_text
from leash_eval.argparsing import OneLineParser
from leash_eval.processes import (
    Terminated,
    die_with,
    forkserver_context,
    signals_held,
    signals_ignored,
    sigterm_raises,
    stop_forkserver,
)

__all__ = ["EMBEDDED", "EXECUTED_DIR", "KERNEL_ENV", "LOCK_NAME", "NotebookError",
           "NotebookResult", "ParameterError", "Run", "default_runs", "discover_notebooks",
           "executed_folder", "main", "run_all", "run_notebook", "study_runs"]

#: ``--data`` value of the default run: the paper's printed numbers and the simulated demo.
EMBEDDED = "embedded"
#: Environment of every kernel: string hashing fixed, so no output depends on a set's order.
KERNEL_ENV = {"PYTHONHASHSEED": "0"}
#: ipykernel logs start-up chatter to the terminal, where it would break the progress lines.
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]
#: Lock file of an output folder while a run writes there (ignored by git).
LOCK_NAME = ".reproduce.lock"
#: Folder of the executed notebooks inside an output folder other than figures/
#: (:func:`executed_folder`).
EXECUTED_DIR = ".executed"
#: The runner's name in its usage, help, progress and errors, however it is started (``leash
#: reproduce``, ``python -m leash_eval.run.reproduce``, ``make reproduce``).
PROG = "leash reproduce"


@dataclass(frozen=True)
class Run:
    """One execution of one notebook: its stem, the parameters it gets, and a label.

    The run is called ``<notebook>.<label>`` (``label``: by default the ``study`` parameter,
    ``"paper"``, ``"demo"`` or a study file's stem), else ``<notebook>``.
    """

    notebook: str
    parameters: dict = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self):
        if self.label is None and isinstance(self.parameters.get("study"), str):
            object.__setattr__(self, "label", _label(self.parameters["study"]))

    @property
    def name(self) -> str:
        """``<notebook>.<label>``, or the notebook's stem."""
        return f"{self.notebook}.{self.label}" if self.label else self.notebook


def _label(study: str) -> str:
    """The label of a study's runs and the name of its output folder: the slug of the study's
    name (:func:`leash.paths.slug`, as its artifacts' suffix), its ``name:`` for a study file.
    """
    if study.endswith((".yaml", ".yml")):
        study = _study_name(os.path.abspath(study))
    return slug(study)


@functools.lru_cache(maxsize=64)
def _study_name(path: str) -> str:
    from leash.sources.study import load_study

    try:
        return load_study(path).name
    except (OSError, ValueError):  # refused later, with its message, by _study_parameter
        return Path(path).stem


def discover_notebooks(directory=None) -> list[str]:
    """Stems of the notebooks of ``directory`` (default ``notebooks/``) in run order (``00_``...);
    names starting with ``_`` or ``.`` are drafts.
    """
    return notebook_files.stems(directory or NOTEBOOKS)


def default_runs(directory=None, runs_file=None) -> list[Run]:
    """The runs of ``make reproduce``: ``runs.yaml`` of ``directory`` (default ``notebooks/``),
    in notebook order; a notebook it does not list runs once with its defaults. A
    ParameterError names a notebook that does not exist or a parameter set that is no mapping.
    """
    from leash.config import load_yaml

    directory = Path(directory or NOTEBOOKS)
    stems = discover_notebooks(directory)
    path = Path(runs_file or directory / RUNS.name)
    listed = (load_yaml(path, shown(path), "runs file")[0] or {}) if path.is_file() else {}
    if not isinstance(listed, dict):
        raise ParameterError(f"{shown(path)}: must map notebook names to lists of parameter "
                             f"sets.")
    for stem, sets in listed.items():
        if stem not in stems:
            raise ParameterError(f"{shown(path)}: no notebook {stem!r} in {shown(directory)}."
                                 f"{did_you_mean(str(stem), stems)}")
        if not isinstance(sets, list) or not all(isinstance(s, dict) for s in sets):
            raise ParameterError(f"{shown(path)}: {stem} must list parameter sets (mappings), "
                                 f"got {sets!r}.")
    return [Run(stem, dict(p)) for stem in stems for p in (listed.get(stem) or [{}])]


def study_runs(study: str, directory=None) -> list[Run]:
    """One run per notebook of ``directory`` that declares a ``study`` parameter, on ``study``."""
    directory = Path(directory or NOTEBOOKS)
    return [Run(stem, {"study": study}) for stem in discover_notebooks(directory)
            if "study" in notebook_parameters(notebook_files.find(stem, directory))]


def _select(available: list[str], names) -> list[str]:
    """Resolve ``--only`` names: a stem, a stem without its number prefix, or a number prefix."""
    chosen = set()
    for name in names:
        hits = ([s for s in available if s == name]
                or [s for s in available if s.split("_", 1)[-1] == name]
                or [s for s in available if s.split("_", 1)[0] == name])
        if len(hits) > 1:
            raise ParameterError(f"--only {name!r} is ambiguous: {', '.join(hits)}.")
        if not hits:
            raise ParameterError(
                f"--only {name!r}: no such notebook in notebooks/.{did_you_mean(name, available)} "
                f"Notebooks: {', '.join(available) or '(none yet)'}.")
        chosen.add(hits[0])
    return [s for s in available if s in chosen]


def _study_parameter(data: str, stream=None) -> str | None:
    """The ``study`` the notebooks get for ``--data`` (None: the default run), its file read
    and checked against its data here (:func:`leash_eval.run.study_check.check_study`: labels,
    budgets, N, pairs), before any kernel starts: a ParameterError of one line per problem.
    The sections that will be skipped, and why, are written to ``stream`` (one line each).
    """
    return _checked_data(data, stream)[0]


def _checked_data(data: str, stream=None) -> tuple[str | None, dict[str, str]]:
    """:func:`_study_parameter`, and the sections of the study the notebooks will skip whole,
    each with the reason a notebook on it gives (:meth:`leash.artifacts.StudySource.
    skip_reason`, else the check's: a dataset not available locally).
    """
    if data in (EMBEDDED, PAPER):
        return (None if data == EMBEDDED else data), {}
    from leash.artifacts import open_study
    from leash.sources.study import list_studies
    from leash_eval.run.study_check import check_study

    p = Path(os.path.abspath(data))
    if not p.is_file() and data not in list_studies():
        raise ParameterError(
            f"--data {data!r}: no such study file or shipped study (use '{EMBEDDED}', "
            f"'{PAPER}', one of {list_studies()} or the path of a study file).")
    try:
        check = check_study(p if p.is_file() else data)
    except ValueError as exc:
        raise ParameterError(f"--data {data!r}: {exc}") from None
    if not check.ok:
        raise ParameterError("\n".join(" ".join(str(e).split()) for e in check.problems))
    for what, why in check.skipped if stream is not None else ():
        stream.write(f"{PROG}: {what} will be skipped: {why}\n")
    src = open_study(check.study)
    return (shown(p) if p.is_file() else data), {
        name: src.skip_reason(name) or why for name, why in check.skipped_sections.items()}


@dataclass(frozen=True)
class NotebookResult:
    """Outcome of one run: ``status`` "ok", "skipped" (with ``reason``) or "failed"; its wall
    time ``seconds`` and ``cpu``, the CPU seconds of the process that ran it and of its kernel.
    """

    name: str
    status: str
    seconds: float
    output: Path | None
    parameters: dict = field(default_factory=dict)
    reason: str = ""
    records: tuple = ()  # the artifact records of the executed notebook
    cpu: float = 0.0


class NotebookError(RuntimeError):
    """A notebook failed; the message names the notebook, its cell and the partial output."""

    def __init__(self, message, *, notebook, cell_index=None, exec_count=None, ename=None,
                 evalue=None, output=None):
        super().__init__(message)
        self.notebook, self.cell_index, self.exec_count = notebook, cell_index, exec_count
        self.ename, self.evalue, self.output = ename, evalue, output


def _as_skipped(output: Path, reason: str, cell_id: str | None = None) -> None:
    """A skipped notebook's executed copy as a page: the reason as one Markdown line where the
    error was (for a run skipped before any kernel, in the cell ``cell_id``), without
    papermill's error banner.
    """
    import nbformat

    nb = nbformat.read(str(output), as_version=4)
    nb.cells = [c for c in nb.cells if "papermill-error-cell-tag" not in c.metadata.get("tags", [])]
    note = nbformat.v4.new_output("display_data", data={
        "text/markdown": f"**Skipped:** {reason}", "text/plain": f"Skipped: {reason}"})
    for c in nb.cells:
        if (c.get("id") == cell_id and c.cell_type == "code") \
                or any(o.get("output_type") == "error" for o in c.get("outputs", [])):
            c.outputs = [o for o in c.outputs if o.get("output_type") != "error"] + [note]
    text = nbformat.writes(nb)
    write_text(output, text if text.endswith("\n") else text + "\n")  # as nbformat.write


#: The id of the cell papermill injects (its own is random on every run).
INJECTED_ID = "injected-parameters"
_CLOCK_KEYS = ("start_time", "end_time", "duration")


def stabilize(output: Path, source: Path | None = None) -> None:
    """Make an executed notebook the same bytes on a re-run on one machine: the cell papermill
    injects gets a fixed id (:data:`INJECTED_ID`) and the clock readings (papermill's start,
    end and duration of the notebook and of each cell, the kernel's execution timestamps) are
    dropped; written whole (:func:`leash.writing.write_text`). So the site and a diff of two
    runs see only real changes. ``source``, the notebook's file, becomes papermill's
    ``input_path`` (given the notebook read from its Markdown, papermill stores the whole
    notebook there).
    """
    import nbformat

    nb = nbformat.read(str(output), as_version=4)
    if source is not None:
        nb.metadata.setdefault("papermill", {})["input_path"] = shown(source)
    for key in _CLOCK_KEYS:
        nb.metadata.get("papermill", {}).pop(key, None)
    for c in nb.cells:
        if "injected-parameters" in c.metadata.get("tags", []):
            c.id = INJECTED_ID
        for key in _CLOCK_KEYS:
            c.metadata.get("papermill", {}).pop(key, None)
        c.metadata.pop("execution", None)
    text = nbformat.writes(nb)
    write_text(output, text if text.endswith("\n") else text + "\n")


def _failure(path: Path, output: Path, exc) -> NotebookError:
    """Papermill's execution error, naming the cell of the source notebook (the executed copy
    has the injected cell more): the first source cell with the failing cell's code.
    """
    cells = notebook_files.read(path).cells
    src = next((i for i, c in enumerate(cells) if c.source == exc.source), None)
    where = "the injected parameters cell" if src is None else f"cell {src} of {shown(path)}"
    first = next((ln.strip()[:100] for ln in (exc.source or "").splitlines() if ln.strip()), "")
    return NotebookError(
        f"Notebook {path.stem} failed in {where} (In [{exc.exec_count}]): {exc.ename}: "
        f"{exc.evalue}" + (f"\n  cell starts with: {first}" if first else "")
        + f"\n  partially executed notebook: {shown(output)}", notebook=path.stem,
        cell_index=src, exec_count=exc.exec_count, ename=exc.ename, evalue=exc.evalue,
        output=output)


def run_notebook(path, parameters=None, outdir=None, build=None, *, run=None,
                 kernel_name="python3", skip=None):
    """Validate and execute one notebook with papermill; keep the records of what it wrote.

    Parameters
    ----------
    path : str or path-like
        The notebook.
    parameters : dict, optional
        Injected into its parameters cell, validated first (ParameterError); ``outdir`` is
        added for a notebook that declares it.
    outdir, build : str or path-like, optional
        Artifact folder (default ``build/figures/``; the executed notebook's records go to
        ``<outdir>/.artifacts/<run>.json`` when it succeeds) and folder of the executed copy
        ``<build>/<run>.ipynb`` (default :func:`executed_folder` of ``outdir``).
    run : str, optional
        The run's name; default the notebook's stem.
    kernel_name : str, default "python3"
    skip : str, optional
        A reason to skip known before the run (the study check found the section the notebook
        reads skipped): no kernel starts; the executed copy is the notebook with its
        parameters, the reason shown in the cell that reads the section.

    Returns
    -------
    NotebookResult
        "ok" (with the records) or "skipped" (with ``reason``). A failing cell or a dead kernel
        is a NotebookError naming the notebook, the cell, the exception and the partial copy.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from leash.output.report import RECORD_KEY
    from leash_eval.run.index import write_records

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Notebook {path} does not exist.")
    run = run or path.stem
    outdir = Path(os.path.abspath(outdir or SCRATCH))
    build = Path(os.path.abspath(build)) if build else executed_folder(outdir)
    declared = notebook_parameters(path)
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in (parameters or {}).items()}
    if "outdir" in declared:
        params.setdefault("outdir", shown(outdir))
    effective = validate_parameters(path, params, declared=declared)
    build.mkdir(parents=True, exist_ok=True)
    outdir.mkdir(parents=True, exist_ok=True)
    output = build / f"{run}.ipynb"
    t0, c0 = time.perf_counter(), _cpu()
    if skip is not None:  # the page, without a kernel: papermill injects the parameters only
        papermill.execute_notebook(notebook_files.read(path), str(output), parameters=params,
                                   kernel_name=kernel_name, prepare_only=True,
                                   progress_bar=False, log_output=False)
        _as_skipped(output, skip, next(iter(_sections(path).values()), None))
        stabilize(output, path)
        return NotebookResult(run, "skipped", time.perf_counter() - t0, output, effective,
                              reason=skip, cpu=_cpu() - c0)
    try:
        with mock.patch.dict(os.environ, KERNEL_ENV):
            nb = papermill.execute_notebook(
                notebook_files.read(path), str(output), parameters=params,
                kernel_name=kernel_name, cwd=str(REPO),
                progress_bar=False, log_output=False, extra_arguments=KERNEL_ARGUMENTS)
    except PapermillExecutionError as exc:
        stabilize(output, path)
        if exc.ename == "KeyboardInterrupt":
            raise KeyboardInterrupt from None
        reason = SkipNotebook.reason_in(exc.traceback)  # any SkipNotebook, by its rendering
        if reason is None:
            raise _failure(path, output, exc) from None
        _as_skipped(output, reason)
        return NotebookResult(run, "skipped", time.perf_counter() - t0, output, effective,
                              reason=reason, cpu=_cpu() - c0)
    except Exception as exc:
        raise NotebookError(f"Notebook {path.stem} could not be executed: "
                            f"{type(exc).__name__}: {exc}\n  partially executed notebook: "
                            f"{shown(output)}", notebook=path.stem, ename=type(exc).__name__,
                            evalue=str(exc), output=output) from None
    stabilize(output, path)
    records = [o.metadata[RECORD_KEY] for c in nb.cells for o in c.get("outputs", [])
               if RECORD_KEY in o.get("metadata", {})]
    write_records(outdir, run, path.stem, effective, records)
    return NotebookResult(run, "ok", time.perf_counter() - t0, output, effective,
                          records=tuple(records), cpu=_cpu() - c0)


def _edited_pair(path: Path) -> str | None:
    """Why the Markdown notebook ``path`` should not run as it is: the ``.ipynb`` paired with
    it is newer and has other cells (sources or tags), so it was edited outside JupyterLab,
    whose jupytext saves both; or None.

    Refused rather than warned about: the run would silently leave out the edit its user made
    (and the default run writes the committed figures/ from it); one command brings the edit
    into the Markdown, or deleting the ``.ipynb`` discards it (``make`` writes it again).
    """
    pair = path.with_suffix(".ipynb")
    try:
        if path.suffix != ".md" or pair.stat().st_mtime <= path.stat().st_mtime:
            return None
    except OSError:  # no .ipynb beside it
        return None
    try:
        if _cells(notebook_files.read(pair)) == _cells(notebook_files.read(path)):
            return None
        why = "has other cells"
    except Exception as exc:  # whatever nbformat raises on a file that is no notebook
        why = f"cannot be read ({' '.join(str(exc).split())[:200]})"
    return (f"{shown(pair)} is newer than {shown(path)}, the notebook's source that runs here, "
            f"and {why}: edited outside JupyterLab? `jupytext --sync {shown(pair)}` takes its "
            f"cells into the Markdown (or delete it to run the Markdown as it is).")


def _cells(nb) -> list[tuple]:
    return [(c.cell_type, c.source.rstrip(), tuple(c.metadata.get("tags", ()))) for c in nb.cells]


def _sections(path) -> dict[str, str]:
    """The study sections notebook ``path`` reads, each with the id of the first cell that
    reads it: the literal ``section=`` of its ``notebook.source(study, section="support")``
    calls (read from its syntax, not run).
    """
    import ast

    found: dict[str, str] = {}
    for cell in notebook_files.read(path).cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # an IPython magic: no call of source here
            continue
        for node in ast.walk(tree):
            func = getattr(node, "func", None)
            if not isinstance(node, ast.Call) or not (
                    isinstance(func, ast.Name) and func.id == "source"
                    or isinstance(func, ast.Attribute) and func.attr == "source"
                    and isinstance(func.value, ast.Name) and func.value.id == "notebook"):
                continue
            for kw in node.keywords:
                if kw.arg == "section" and isinstance(kw.value, ast.Constant) \
                        and isinstance(kw.value.value, str):
                    found.setdefault(kw.value.value, cell.get("id"))
    return found


def executed_folder(outdir) -> Path:
    """Where the executed notebooks of a run into ``outdir`` go unless ``--build`` says: the
    repository's ``build/`` for the committed ``figures/`` (git ignores it), else
    ``<outdir>/.executed/``, so that two runs into different folders never share an executed
    copy (the site reads a folder's runs there, :mod:`leash_eval.run.site`).
    """
    outdir = Path(os.path.abspath(outdir))
    return BUILD if outdir == Path(os.path.abspath(FIGURES)) else outdir / EXECUTED_DIR


def _prepare_folder(p: Path, flag: str) -> None:
    """Create an output folder and check that it can be written (else a line naming ``flag``)."""
    if p.exists() and not p.is_dir():
        raise ParameterError(f"{flag} {shown(p)}: is a file, not a folder.")
    try:
        p.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=p).close()
    except OSError as exc:
        raise ParameterError(f"{flag} {shown(p)}: cannot write there "
                             f"({exc.strerror or type(exc).__name__}).") from None


@contextlib.contextmanager
def _lock(outdir: Path):
    """An exclusive ``fcntl.flock`` on ``<outdir>/.reproduce.lock`` while a run writes there, so
    that a second run is refused instead of interleaving records. The system releases it however
    the process ends; the file stays (deleting a file another run may be about to lock would
    let two runs lock two files). Windows has no fcntl: runs are not locked there.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open_lock(outdir / LOCK_NAME) as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            raise ParameterError(
                f"--outdir {shown(outdir)}: another reproduce run (pid "
                f"{fh.read().strip() or '?'}) is writing there; wait for it to finish, or choose "
                f"another --outdir.") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (a run's kernel, once
    the run is over), user and system; this process's alone where ``resource`` is missing.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return time.process_time()
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _run_in_worker(job) -> NotebookResult:
    """One run in a pool worker; a failure comes back as a result, with its time."""
    path, run, params, outdir, build, skip = job
    t0, c0 = time.perf_counter(), _cpu()
    try:
        return run_notebook(path, params, outdir, build, run=run, skip=skip)
    except (NotebookError, ParameterError, FileNotFoundError) as exc:
        return NotebookResult(run, "failed", time.perf_counter() - t0,
                              getattr(exc, "output", None), params, reason=str(exc),
                              cpu=_cpu() - c0)


def _finished(jobs_list, jobs: int, stream):
    """Yield ``(index, result)`` as runs end, in a :class:`pebble.ProcessPool` of ``jobs``
    workers (at most one per run); after a failure no new run starts (those running end).
    With one job, the line's start is written when a run starts.

    The workers are forked from a fork server that imported papermill once
    (:func:`leash_eval.processes.forkserver_context`), which, like them, ignores SIGINT: the
    runner alone handles a Ctrl-C. On Ctrl-C, SIGTERM or an error here, the pool is stopped,
    with further signals doing nothing (a second Ctrl-C must not break the stop): pebble ends
    each worker (SIGTERM, SIGKILL after 3 s), and a worker's kernel ends within a second of
    its worker (ipykernel polls its parent; jupyter_client starts it in a session of its own,
    which a terminal's Ctrl-C does not reach). A worker ends with the runner even when the
    runner is killed (:func:`leash_eval.processes.die_with`, its initializer). A worker that
    dies (killed from outside) fails its run with :class:`pebble.ProcessExpired`.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    from pebble import ProcessPool

    if not jobs_list:
        return
    todo, running, failed = iter(enumerate(jobs_list)), {}, False
    with signals_held():
        context = forkserver_context("leash_eval.run.reproduce", "papermill")
    pool = ProcessPool(max_workers=min(jobs, len(jobs_list)), initializer=die_with,
                       initargs=(os.getpid(),), context=context)
    try:
        while True:
            while not failed and len(running) < jobs and (nxt := next(todo, None)):
                with signals_held():  # the first schedule starts the workers
                    running[pool.schedule(_run_in_worker, args=(nxt[1],))] = nxt[0]
                if jobs == 1:
                    stream.write(f"[{nxt[0] + 1}/{len(jobs_list)}] {nxt[1][1]} ... ")
                    stream.flush()
            if not running:
                return
            for fut in wait(running, return_when=FIRST_COMPLETED)[0]:
                result = fut.result()
                failed |= result.status == "failed"
                yield running.pop(fut), result
    finally:
        with signals_ignored():
            pool.stop()
            pool.join()
            stop_forkserver()  # so that its CPU time, its workers' and kernels' counts here


def _outcome(res: NotebookResult) -> str:
    took = f"{res.seconds:.1f} s, {res.cpu:.1f} s CPU"
    if res.status == "ok":
        return f"ok {took}"
    if res.status == "skipped":  # the whole reason, on one line
        return f"skipped: {' '.join(res.reason.split())} ({took})"
    return f"FAILED {took}\n{res.reason}"


def run_all(runs, *, directory=None, data=EMBEDDED, outdir=None, build=None, jobs=1,
            stream=None, skipped=None):
    """Validate every run, then execute them; regenerate the artifact index on success.

    Parameters
    ----------
    runs : list of Run (or of ``(stem, parameters)``)
        E.g. :func:`default_runs`.
    directory : str or path-like, optional
        Folder of the notebooks; default ``notebooks/``.
    data : str, default "embedded"
        Or a study (``"paper"``, a shipped study name or a study file): the ``study`` of every
        run whose notebook declares it and does not set it.
    outdir, build : str or path-like, optional
        Artifact folder (default ``build/figures/``, locked while the run lasts) and folder of
        the executed notebooks (default :func:`executed_folder` of ``outdir``), resolved once
        and created.
    jobs : int, default 1
        Runs executed at a time, in worker processes. A failure stops starting more.
    stream : file, optional
        Progress, one line per run, then a summary; default ``sys.stderr``.
    skipped : dict, optional
        ``{(study, section): reason}``: a run whose ``study`` parameter is ``study`` and whose
        notebook reads ``section`` (its ``notebook.source(study, section=...)``) is skipped
        without a kernel, its executed copy a page with the reason. Default: the sections the
        check of ``data``'s study found skipped.

    Returns
    -------
    list of NotebookResult
        One per run that was started, in run order. Before anything runs, a ParameterError
        names a bad parameter, study file or folder; Ctrl-C leaves the index as it was.
    """
    from leash_eval.run.index import (
        INDEX_NAME,
        SIDECAR_DIR,
        artifact_index,
        study_title,
        write_index,
    )

    stream = stream or sys.stderr
    directory = Path(directory or NOTEBOOKS)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"The 'jobs' parameter of run_all must be an int >= 1. Got {jobs!r}.")
    study, skips = _checked_data(data)
    if skipped is None:
        skipped = {(study, section): why for section, why in skips.items()}
    outdir = Path(os.path.abspath(outdir or SCRATCH))
    build = Path(os.path.abspath(build)) if build else executed_folder(outdir)
    jobs_list = []
    for r in runs:
        r = r if isinstance(r, Run) else Run(r[0], dict(r[1]))
        try:
            path = notebook_files.find(r.notebook, directory)
        except FileNotFoundError as exc:
            raise ParameterError(f"Notebook {r.notebook}: {exc}") from None
        declared = notebook_parameters(path)
        params = dict(r.parameters)
        if study is not None and "study" in declared:
            r = Run(r.notebook, {"study": study, **params})
            params = r.parameters
        checked = {"outdir": str(outdir), **params} if "outdir" in declared else params
        validate_parameters(path, checked, declared=declared)
        skip = next((skipped[params.get("study"), section] for section in _sections(path)
                     if (params.get("study"), section) in skipped), None)
        jobs_list.append((str(path), r.name, params, str(outdir), str(build), skip))
    stale = [line for path in dict.fromkeys(Path(job[0]) for job in jobs_list)
             if (line := _edited_pair(path))]
    if stale:
        raise ParameterError("\n".join(stale))
    _prepare_folder(outdir, "--outdir")
    _prepare_folder(build, "--build")
    total, t0, c0, results = len(jobs_list), time.perf_counter(), _cpu(), {}
    with _lock(outdir), contextlib.closing(_finished(jobs_list, jobs, stream)) as finished:
        for i, res in finished:
            results[i] = res
            stream.write(("" if jobs == 1 else f"[{i + 1}/{total}] {res.name} ... ")
                         + _outcome(res) + "\n")
            stream.flush()
        # the pool has ended: its processes' CPU time is counted (stop_forkserver)
        done = [results[i] for i in sorted(results)]
        count = {s: sum(r.status == s for r in done) for s in ("ok", "skipped", "failed")}
        stream.write(f"{PROG}: {total} run(s) in {time.perf_counter() - t0:.1f} s, "
                     f"{_cpu() - c0:.1f} s CPU ({sum(r.cpu for r in done):.1f} s in the runs): "
                     f"{count['ok']} ok, {count['skipped']} skipped, {count['failed']} failed"
                     + (f", {total - len(done)} not run" if total > len(done) else "") + "\n"
                     + "".join(f"  skipped {r.name}: {r.reason}\n" for r in done
                               if r.status == "skipped"))
        if not count["failed"]:
            # the records of runs these notebooks no longer have (runs.yaml changed) would
            # describe files they no longer write, or the same files twice
            names = {job[1] for job in jobs_list}
            for side in (outdir / SIDECAR_DIR).glob("*.json"):
                if side.stem.split(".", 1)[0] in {n.split(".", 1)[0] for n in names} \
                        and side.stem not in names:
                    side.unlink()
            # a study's own folder (make reproduce DATA=...) is headed by its title
            ran = {job[2].get("study") for job in jobs_list}
            own = next(iter(ran)) if len(ran) == 1 else None
            title = (study_title(own) if own not in (None, PAPER)
                     and outdir == BUILD / _label(own) else None)
            index = write_index(artifact_index(outdir), outdir / INDEX_NAME, directory,
                                title=title)
            stream.write(f"  artifact index: {shown(index)}\n")
        stream.flush()
    return done


def _parser() -> OneLineParser:
    ap = OneLineParser(
        prog=PROG,
        description="Regenerate every table and figure: run the notebooks of notebooks/ with "
                    "papermill (also `python -m leash_eval.run.reproduce`, and `make reproduce`, "
                    "which passes DATA, ONLY, PARAMS, OUTDIR and JOBS). Reads the paper's "
                    "printed numbers, the SIMULATED demo or the generations a study file "
                    "names; writes each run's artifacts (tables, figures, their records) and "
                    "the artifact index into the output folder, and the executed notebooks "
                    "into --build. Exit status 1 when a notebook fails, 2 for bad arguments.",
        epilog="examples:\n"
               "  leash reproduce                               # every run, into figures/\n"
               "  leash reproduce --list --only 01              # the runs and parameters\n"
               "  leash reproduce --only 01 -p n_boot 200       # into build/figures/\n"
               "  leash reproduce --data gsm8k-probe --jobs 2   # a shipped study, into "
               "build/gsm8k-probe/\n"
               "  leash reproduce --data my-study.yaml -f params.yaml\n")
    add = ap.add_argument
    add("--data", default=EMBEDDED, help="'embedded': the runs of notebooks/runs.yaml (the "
        "paper's printed numbers and the SIMULATED demo) into figures/; or a study file (or "
        "shipped study name of data/studies/) for every notebook with a 'study' parameter, "
        "into build/<study>/ (default: %(default)s)")
    add("--only", nargs="+", metavar="NAME", help="run only these notebooks (stem, stem "
        "without number, or number; default: all)")
    add("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
        help="set a parameter of the selected notebooks (VALUE read as YAML; repeatable; "
             "default: none, the runs' own)")
    add("-f", "--parameters-file", metavar="FILE", help="a YAML mapping of parameters for the "
        "selected notebooks (-p wins; default: none)")
    add("--outdir", help="artifact folder (default: figures/ for the default run, "
        "build/<study>/ for a study, build/figures/ when parameters are set, on a study too)")
    add("--build", help="folder of the executed notebooks (default: the repository's build/ "
        "for figures/, else <outdir>/.executed/)")
    add("--jobs", type=int, default=1, help="notebooks run in parallel")
    add("--list", action="store_true", help="list the runs and their parameters, run nothing")
    return ap


def _given_parameters(args) -> dict:
    """``-f FILE`` then ``-p NAME VALUE`` (later wins), values read as YAML."""
    from leash.config import ConfigError, NotYamlError, load_yaml, load_yaml_text

    given = {}
    if args.parameters_file:
        p = Path(args.parameters_file)
        try:  # the one YAML loader: no anchors or aliases, no duplicate keys, bounded
            given = load_yaml(p, f"-f {p}", "parameter file")[0]
        except OSError as exc:
            raise ParameterError(f"-f {p}: {exc.strerror or exc}.") from None
        except ConfigError as exc:
            raise ParameterError(exc) from None
        if not isinstance(given, dict) or not all(isinstance(k, str) for k in given):
            raise ParameterError(f"-f {p}: must be a mapping of parameter names to values.")
    for name, text in args.parameter:
        try:
            given[name] = load_yaml_text(text, f"-p {name}", "parameter value")[0]
        except NotYamlError:
            given[name] = text  # not YAML: the text itself
        except ConfigError as exc:  # YAML refused: an anchor, a duplicate key, too large
            raise ParameterError(exc) from None
    return given


def _with_parameters(runs: list[Run], given: dict) -> list[Run]:
    """Give each run the parameters of ``given`` that its notebook declares."""
    if not given:
        return runs
    declared = {r.notebook: notebook_parameters(notebook_files.find(r.notebook, NOTEBOOKS))
                for r in runs}
    known = {name for d in declared.values() for name in d}
    for name in given:
        if name not in known:
            raise ParameterError(f"-p {name}: no selected notebook has a parameter {name!r}."
                                 f"{did_you_mean(name, known)} Their parameters: "
                                 f"{', '.join(sorted(known))}.")
    return [Run(r.notebook, {**r.parameters, **{k: v for k, v in given.items()
                                                 if k in declared[r.notebook]}}, r.label)
            for r in runs]


def _verdict(run: Run, p) -> str:
    """`` (set)`` after a value given for ``p``, or `` (set; refused: WHY)`` when the run's
    check (:func:`leash.run.parameters.validate_parameters`) would refuse it: ``--list`` shows
    what a run would do.
    """
    try:
        validate_parameters(notebook_files.find(run.notebook, NOTEBOOKS),
                            {p.name: run.parameters[p.name]})
    except ParameterError as exc:
        why = (f"{exc.got} must be {exc.constraint}" if exc.constraint is not None
               else " ".join(str(exc).split()))
        return f" (set; refused: {why})"
    return " (set)"


def main(argv=None) -> int:
    """Command-line entry point (``argv`` default ``sys.argv[1:]``); returns the exit status.
    SIGTERM stops it as Ctrl-C does, with its own line and status 143.
    """
    args = _parser().parse_args(argv)
    try:
        with sigterm_raises():
            return _main(args)
    except KeyboardInterrupt as exc:
        with signals_ignored():  # Ctrl-C pressed twice: the second must not cut this short
            what, code = (("terminated", 143) if isinstance(exc, Terminated)
                          else ("interrupted", 130))
            print(f"\n{PROG}: {what}; the interrupted runs keep their earlier artifact "
                  "records and the index was not rewritten.", file=sys.stderr)
            sys.stderr.flush()
            return code


def _main(args) -> int:
    from concurrent.futures.process import BrokenProcessPool

    from pebble import ProcessExpired

    try:
        given = _given_parameters(args)
        study, skips = _checked_data(args.data, sys.stderr)
        runs = default_runs() if study is None else study_runs(study)
        if args.only:
            chosen = _select(discover_notebooks(), args.only)
            runs = [r for r in runs if r.notebook in chosen]
            if not runs:
                raise ParameterError(f"--only {' '.join(args.only)}: none of these notebooks "
                                     f"runs on --data {args.data}.")
        runs = _with_parameters(runs, given)
        if args.list:
            for r in runs:
                print(r.name)
                for p in notebook_parameters(notebook_files.find(r.notebook, NOTEBOOKS)).values():
                    value = repr(r.parameters[p.name]) if p.name in r.parameters else p.default
                    print(f"    {p.name}: {p.type_name or '?'} = {value}"
                          + (_verdict(r, p) if p.name in r.parameters else "")
                          + (f"  # {p.help}" if p.help else ""))
            return 0
        # parameters set by hand: the scratch folder, never a default run's artifacts
        outdir = args.outdir or (SCRATCH if given else FIGURES if study is None
                                 else BUILD / _label(study))
        results = run_all(runs, outdir=outdir, build=args.build, jobs=args.jobs,
                          skipped={(study, section): why for section, why in skips.items()})
    except ParameterError as exc:  # one line per problem (a study's check may find several)
        print("".join(f"{PROG}: {line}\n" for line in str(exc).splitlines()), end="",
              file=sys.stderr)
        return 2
    except ValueError as exc:  # the records of the output folder disagree (see artifact_index)
        print(f"{PROG}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except (BrokenProcessPool, ProcessExpired):
        print(f"{PROG}: a notebook worker process died (killed from outside, e.g. by the system "
              "when memory ran out); the runs it had keep their earlier artifact records and "
              "the index was not rewritten. With two jobs, try JOBS=1.", file=sys.stderr)
        return 1
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":  # python -m: the module by its name, which the workers import
    from leash_eval.processes import exit_status
    from leash_eval.run.reproduce import main as _named_main

    sys.exit(exit_status(_named_main))
