"""``make reproduce``: run the notebooks with papermill, each once per parameter set, in order.

``python -m leash.reproduce [--data paper-and-demo|STUDY] [--only NAME ...] [-p NAME VALUE ...]
[-f PARAMS.yaml] [--outdir DIR] [--build DIR] [--jobs N] [--list]``

What runs. By default (``--data embedded``) the runs listed in ``notebooks/runs.yaml``: each
artifact notebook once on the paper's printed numbers (``study="paper"``) and once on the
SIMULATED demo (``study="demo"``), the walkthrough and the audit once; their artifacts go to the
committed ``figures/``. ``--data STUDY`` (a study file, or a shipped study name) runs every
notebook that declares a ``study`` parameter once on that study, into ``build/<study>/``; the
walkthrough and the paper's audit do not run. ``-p NAME VALUE`` (value as YAML: ``-p ks
'[1, 4]'``) and ``-f params.yaml`` set parameters of the selected notebooks (each goes to the
notebooks that declare it); such a run is not the default one, so its artifacts go to
``build/figures/`` unless ``--outdir`` says otherwise.

1. **Checked before any kernel starts** (:mod:`leash.parameters`): an unknown name stops with
   the closest known one, a wrong type or an out-of-range value with a one-line message naming
   it; the study file is read and checked (:func:`leash.study.load_study`); ``--outdir`` and
   ``--build`` are resolved once (relative to the working directory), created and checked to
   be writable.
2. **Executed** with :func:`papermill.execute_notebook` into ``<build>/<run>.ipynb`` (``<run>``
   is the notebook's stem, plus ``.<source>`` for a notebook run once per source), with the
   repository as working directory. Progress goes to stderr, one line per run (``[3/19]
   01_table1_support.demo ... ok 4.2 s``), then a summary.
3. **Recorded.** Each artifact a notebook saves through :func:`leash.report.publish` leaves its
   record in the executed notebook (an output's metadata); after a run that succeeds, the
   runner writes those records, with the run's parameters, to
   ``<outdir>/.artifacts/<run>.json`` and finally renders ``<outdir>/README.md`` from all of
   them. A run that skips or fails leaves the previous records of that run in place.
4. **Outcome.** A notebook that raises :class:`leash.notebook.SkipNotebook` (its data are
   absent) or :class:`leash.manifest.DatasetUnavailableError` is ``skipped: <reason>``, and its
   executed copy says why in one Markdown line. Any other error stops the run (exit status 1),
   naming the notebook, the failing cell and the partially executed copy.
5. **One run at a time per folder; Ctrl-C.** The output folder is locked for the run (an flock
   on ``<outdir>/.reproduce.lock``, released by the operating system however the run ends), so
   a second run into it is refused instead of interleaving records. Ctrl-C ends the run with
   one line and exit status 130; the index is not rewritten.

Exit status: 0 success (skips included), 1 a notebook failed, 2 bad usage, parameters or
folders, 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ._argparse import OneLineParser
from ._paths import BUILD, FIGURES, NOTEBOOKS, REPO, RUNS, SCRATCH, shown
from .parameters import ParameterError, notebook_parameters, validate_parameters

__all__ = [
    "EMBEDDED",
    "KERNEL_ENV",
    "LOCK_NAME",
    "SKIP_EXCEPTIONS",
    "NotebookError",
    "NotebookResult",
    "ParameterError",
    "Run",
    "default_runs",
    "discover_notebooks",
    "main",
    "run_all",
    "run_notebook",
    "study_runs",
]

#: ``--data`` value of the default run: the paper's printed numbers and the simulated demo.
EMBEDDED = "embedded"
PAPER = "paper"
KERNEL_NAME = "python3"
#: Environment of every kernel, on top of the runner's own: string hashing fixed, so that no
#: output can depend on the order of a set of strings.
KERNEL_ENV = {"PYTHONHASHSEED": "0"}
#: Command-line arguments of every kernel. ipykernel logs start-up chatter (e.g. a warning
#: about TCP transport on localhost) to the terminal, where it would break the progress lines;
#: errors of the notebook's code still reach the executed notebook and the runner's report.
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL",)
#: Exceptions (by class name, as the kernel reports them) that mean "skipped", not "failed".
SKIP_EXCEPTIONS = ("SkipNotebook", "DatasetUnavailableError")
STUDY_PARAMETER = "study"
OUTDIR_PARAMETER = "outdir"
#: Lock file of an output folder while a run writes there (ignored by git).
LOCK_NAME = ".reproduce.lock"


# ---------------------------------------------------------------------------------------------
# what runs
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Run:
    """One execution of one notebook: its stem, the parameters it gets, and a label.

    ``label`` names the source of a notebook that runs once per source (``"paper"``,
    ``"demo"``, a study's name); the run is called ``<notebook>.<label>`` then, else
    ``<notebook>``. By default it is derived from the ``study`` parameter.
    """

    notebook: str
    parameters: dict = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self):
        if self.label is None and isinstance(self.parameters.get(STUDY_PARAMETER), str):
            object.__setattr__(self, "label", _label(self.parameters[STUDY_PARAMETER]))

    @property
    def name(self) -> str:
        return f"{self.notebook}.{self.label}" if self.label else self.notebook


def _label(study: str) -> str:
    """A run label for a study value: ``paper``, ``demo``, or the study file's stem."""
    stem = Path(study).stem if study.endswith((".yaml", ".yml")) else study
    return re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-") or "study"


def discover_notebooks(directory=None) -> list[str]:
    """Stems of the notebooks of a folder, in run order (file names are numbered ``00_``...).

    Files starting with ``_`` or ``.`` are drafts and left out.
    """
    directory = NOTEBOOKS if directory is None else Path(directory)
    return sorted(p.stem for p in directory.glob("*.ipynb") if not p.name.startswith(("_", ".")))


def default_runs(directory=None, runs_file=None) -> list[Run]:
    """The runs of ``make reproduce``: ``notebooks/runs.yaml``, in notebook order.

    A notebook the file does not list runs once with its defaults; the file naming a notebook
    that does not exist, or a parameter set that is not a mapping, is a ParameterError.
    """
    import yaml

    directory = NOTEBOOKS if directory is None else Path(directory)
    stems = discover_notebooks(directory)
    path = Path(runs_file) if runs_file is not None else directory / RUNS.name
    listed = {}
    if path.is_file():
        listed = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(listed, dict):
            raise ParameterError(f"{shown(path)}: must map notebook names to lists of "
                                 f"parameter sets.")
        for stem, sets in listed.items():
            if stem not in stems:
                raise ParameterError(f"{shown(path)}: no notebook {stem!r} in "
                                     f"{shown(directory)}.{_closest(str(stem), stems)}")
            if not isinstance(sets, list) or not all(isinstance(s, dict) for s in sets):
                raise ParameterError(f"{shown(path)}: {stem} must list parameter sets "
                                     f"(mappings), got {sets!r}.")
    return [Run(stem, dict(p)) for stem in stems for p in (listed.get(stem) or [{}])]


def study_runs(study: str, directory=None) -> list[Run]:
    """One run per notebook that declares ``study``, on that study."""
    directory = NOTEBOOKS if directory is None else Path(directory)
    return [Run(stem, {STUDY_PARAMETER: study}) for stem in discover_notebooks(directory)
            if STUDY_PARAMETER in notebook_parameters(directory / f"{stem}.ipynb")]


def _closest(name: str, known) -> str:
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" Did you mean {match[0]!r}?" if match else ""


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


def _with_parameters(runs: list[Run], given: dict, directory: Path) -> list[Run]:
    """Give each run the parameters of ``given`` that its notebook declares."""
    if not given:
        return runs
    declared = {r.notebook: notebook_parameters(directory / f"{r.notebook}.ipynb") for r in runs}
    known = {name for d in declared.values() for name in d}
    for name in given:
        if name not in known:
            raise ParameterError(
                f"-p {name}: no selected notebook has a parameter {name!r}."
                f"{_closest(name, known)} Their parameters: {', '.join(sorted(known))}.")
    return [Run(r.notebook, {**r.parameters, **{k: v for k, v in given.items()
                                                 if k in declared[r.notebook]}}, r.label)
            for r in runs]


def _study_parameter(data: str) -> str | None:
    """The ``study`` value the notebooks get for ``--data`` (None for the default run).

    A study file or shipped study is loaded here, so that a broken one (an unknown key, a value
    of the wrong type, YAML anchors...) stops the run before any kernel starts, with the
    one-line message of :func:`leash.study.load_study` (file, line, key path, value).
    """
    if data == EMBEDDED:
        return None
    from .study import list_studies, load_study

    p = Path(os.path.abspath(data))
    if p.is_file():
        study, target = _kernel_path(p), p
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


def _kernel_path(p: Path) -> str:
    """A path as the kernel (working directory: the repository) should see it."""
    try:
        return Path(os.path.abspath(p)).relative_to(REPO).as_posix()
    except ValueError:
        return str(p)


# ---------------------------------------------------------------------------------------------
# running one notebook
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class NotebookResult:
    """Outcome of one run."""

    name: str  # the run: notebook stem [+ ".<label>"]
    status: str  # "ok", "skipped" or "failed"
    seconds: float
    output: Path | None
    parameters: dict = field(default_factory=dict)
    reason: str = ""
    records: tuple = ()  # the artifact records the executed notebook holds


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


@contextlib.contextmanager
def _environ(updates):
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


def _read(path: Path):
    import nbformat

    return nbformat.read(str(path), as_version=4)


def _source_cell(nb, executed_index: int, injected: bool) -> int | None:
    """Index in the source notebook of a cell of the executed copy (None: the injected cell)."""
    if not injected:
        return executed_index
    tags = [c.get("metadata", {}).get("tags", []) for c in nb.cells]
    if any("injected-parameters" in t for t in tags):
        return executed_index  # replaced in place: no shift
    inj = next((i for i, t in enumerate(tags) if "parameters" in t), -1) + 1
    if executed_index == inj:
        return None
    return executed_index - 1 if executed_index > inj else executed_index


def _first_line(source: str) -> str:
    return next((ln.strip()[:100] for ln in source.splitlines() if ln.strip()), "")


def _records(nb) -> list[dict]:
    """The artifact records :func:`leash.report.publish` left in an executed notebook."""
    from .report import RECORD_KEY

    return [o["metadata"][RECORD_KEY] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if RECORD_KEY in o.get("metadata", {})]


def _as_skipped(output: Path, reason: str) -> None:
    """Make a skipped notebook's executed copy a page: the reason as one Markdown line where
    the error was, and no papermill error banner."""
    import nbformat

    nb = _read(output)
    nb.cells = [c for c in nb.cells
                if "papermill-error-cell-tag" not in c.get("metadata", {}).get("tags", [])]
    note = nbformat.v4.new_output("display_data", data={
        "text/markdown": f"**Skipped:** {reason}", "text/plain": f"Skipped: {reason}"})
    for c in nb.cells:
        outs = c.get("outputs", [])
        if any(o.get("output_type") == "error" for o in outs):
            c.outputs = [o for o in outs if o.get("output_type") != "error"] + [note]
    nbformat.write(nb, str(output))


def run_notebook(path, parameters=None, outdir=None, build=None, *, run=None,
                 kernel_name=KERNEL_NAME):
    """Validate and execute one notebook with papermill; keep the records of what it wrote.

    Parameters
    ----------
    path : str or path-like
        The notebook.
    parameters : dict, optional
        Values injected into its parameters cell, validated first. ``outdir`` is added for
        notebooks that declare it.
    outdir : str or path-like, optional
        Artifact folder; default the scratch folder ``build/figures/``. After a run that
        succeeds, the run's records go to ``<outdir>/.artifacts/<run>.json``.
    build : str or path-like, optional
        Folder of the executed copy ``<build>/<run>.ipynb``; default ``build/``.
    run : str, optional
        The run's name; default the notebook's stem.
    kernel_name : str, default "python3"

    Returns
    -------
    NotebookResult
        ``status`` "ok" (with the records) or "skipped" (with ``reason``).

    Raises
    ------
    ParameterError
        Before any kernel starts, for an unknown or invalid parameter.
    NotebookError
        If a cell fails: names the notebook, the cell (source index and ``In [n]``), the
        exception, and the partially executed notebook.
    KeyboardInterrupt
        On Ctrl-C (also when the kernel reports it).
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from .report import write_records

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Notebook {path} does not exist.")
    stem = path.stem
    run = run or stem
    outdir = Path(os.path.abspath(SCRATCH if outdir is None else outdir))
    build = Path(os.path.abspath(BUILD if build is None else build))
    declared = notebook_parameters(path)
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in (parameters or {}).items()}
    if OUTDIR_PARAMETER in declared and OUTDIR_PARAMETER not in params:
        params[OUTDIR_PARAMETER] = _kernel_path(outdir)
    effective = validate_parameters(path, params, declared=declared)
    build.mkdir(parents=True, exist_ok=True)
    outdir.mkdir(parents=True, exist_ok=True)
    output = build / f"{run}.ipynb"
    t0 = time.perf_counter()
    with _environ(KERNEL_ENV):
        try:
            papermill.execute_notebook(
                str(path), str(output), parameters=params, kernel_name=kernel_name,
                progress_bar=False, cwd=str(REPO), log_output=False,
                extra_arguments=list(KERNEL_ARGUMENTS),
            )
        except PapermillExecutionError as exc:
            seconds = time.perf_counter() - t0
            if exc.ename == "KeyboardInterrupt":
                raise KeyboardInterrupt from None
            if exc.ename in SKIP_EXCEPTIONS:
                _as_skipped(output, str(exc.evalue))
                return NotebookResult(run, "skipped", seconds, output, effective,
                                      reason=str(exc.evalue))
            src = _source_cell(_read(path), exc.cell_index, bool(params))
            where = ("the injected parameters cell" if src is None
                     else f"cell {src} of {shown(path)}")
            first = _first_line(exc.source or "")
            raise NotebookError(
                f"Notebook {stem} failed in {where} (In [{exc.exec_count}]): "
                f"{exc.ename}: {exc.evalue}"
                + (f"\n  cell starts with: {first}" if first else "")
                + f"\n  partially executed notebook: {shown(output)}",
                notebook=stem, cell_index=src, exec_count=exc.exec_count, ename=exc.ename,
                evalue=exc.evalue, output=output) from None
        except Exception as exc:  # noqa: BLE001 - kernel died, timeout...: still name the notebook
            raise NotebookError(
                f"Notebook {stem} could not be executed: {type(exc).__name__}: {exc}"
                f"\n  partially executed notebook: {shown(output)}",
                notebook=stem, ename=type(exc).__name__, evalue=str(exc), output=output,
            ) from None
    records = _records(_read(output))
    write_records(outdir, run, stem, effective, records)
    return NotebookResult(run, "ok", time.perf_counter() - t0, output, effective,
                          records=tuple(records))


# ---------------------------------------------------------------------------------------------
# running all
# ---------------------------------------------------------------------------------------------

def _prepare_folder(p: Path, flag: str) -> None:
    """Create an output folder and check that it can be written; ParameterError naming
    ``flag`` otherwise."""
    if p.exists() and not p.is_dir():
        raise ParameterError(f"{flag} {shown(p)}: is a file, not a folder.")
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=p):
            pass
    except OSError as exc:
        raise ParameterError(f"{flag} {shown(p)}: cannot write there "
                             f"({exc.strerror or type(exc).__name__}).") from None


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
    fh = open(outdir / LOCK_NAME, "a+")  # noqa: SIM115 - held open for the duration of the run
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "?"
            raise ParameterError(
                f"--outdir {shown(outdir)}: another reproduce run (pid {holder}) is writing "
                f"there; wait for it to finish, or choose another --outdir."
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield
    finally:
        fh.close()  # releases the lock


def _prune_records(outdir: Path, runs: list[str]) -> None:
    """Remove the records of runs that the notebooks just run no longer have.

    A notebook's runs change when ``notebooks/runs.yaml`` does (or when its records were kept
    per notebook, before it ran once per source); the records of its old runs would describe
    files it no longer writes, or the same files twice.
    """
    from .report import SIDECAR_DIR

    notebooks = {r.split(".", 1)[0] for r in runs}
    for side in (outdir / SIDECAR_DIR).glob("*.json"):
        if side.stem.split(".", 1)[0] in notebooks and side.stem not in runs:
            side.unlink()


def _run_one(job):
    """Run one notebook; failures come back as results (pickling-safe)."""
    path, run, params, outdir, build = job
    t0 = time.perf_counter()
    try:
        return run_notebook(path, params, outdir, build, run=run)
    except (NotebookError, ParameterError, FileNotFoundError) as exc:
        return NotebookResult(run, "failed", time.perf_counter() - t0,
                              getattr(exc, "output", None), params, reason=str(exc))


def _run_in_worker(job):
    """Pool worker: Ctrl-C interrupts the notebook being run (idle workers ignore it)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return _run_one(job)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _outcome(res: NotebookResult) -> str:
    if res.status == "ok":
        return f"ok {res.seconds:.1f} s"
    if res.status == "skipped":  # the full reason is repeated in the summary
        reason = res.reason if len(res.reason) <= 90 else res.reason[:89] + "…"
        return f"skipped: {reason} ({res.seconds:.1f} s)"
    return f"FAILED {res.seconds:.1f} s"


def run_all(runs, *, directory=None, data=EMBEDDED, outdir=None, build=None, jobs=1,
            stream=None):
    """Validate every run, then execute them in order; regenerate the index on success.

    Parameters
    ----------
    runs : list of Run (or of ``(stem, parameters)``)
        E.g. :func:`default_runs`.
    directory : str or path-like, optional
        Folder of the notebooks; default ``notebooks/``.
    data : str, default "embedded"
        ``"embedded"`` (the runs keep their parameters) or a study (``"paper"``, a shipped
        study name or the path of a study file), given as ``study`` to every run whose notebook
        declares that parameter and does not set it.
    outdir, build : str or path-like, optional
        Artifact folder (default the scratch folder ``build/figures/``) and folder of the
        executed notebooks (default ``build/``). Relative paths are relative to the working
        directory; both are resolved once, here, and created if needed. While the run lasts,
        ``outdir`` is locked: a second run into the same folder is refused.
    jobs : int, default 1
        Runs executed in parallel (separate processes). A failure stops submitting more.
    stream : file, optional
        Progress output; default ``sys.stderr``.

    Returns
    -------
    list of NotebookResult
        One per run that was started, in run order.

    Raises
    ------
    ParameterError
        Before anything runs: invalid parameters, a missing or invalid study file, an output
        folder that is a file or cannot be written, or one locked by another run.
    KeyboardInterrupt
        On Ctrl-C (the index is not rewritten; the lock is released).
    """
    stream = sys.stderr if stream is None else stream
    directory = NOTEBOOKS if directory is None else Path(directory)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"The 'jobs' parameter of run_all must be an int >= 1. Got {jobs!r}.")
    study = _study_parameter(data)
    outdir = Path(os.path.abspath(SCRATCH if outdir is None else outdir))
    build = Path(os.path.abspath(BUILD if build is None else build))
    jobs_list = []
    for r in runs:
        r = r if isinstance(r, Run) else Run(r[0], dict(r[1]))
        path = directory / f"{r.notebook}.ipynb"
        if not path.is_file():
            raise ParameterError(f"Notebook {r.notebook}: {shown(path)} does not exist.")
        declared = notebook_parameters(path)
        params = dict(r.parameters)
        if study is not None and STUDY_PARAMETER in declared:
            params.setdefault(STUDY_PARAMETER, study)
            r = Run(r.notebook, params)
        check = dict(params)
        if OUTDIR_PARAMETER in declared:
            check.setdefault(OUTDIR_PARAMETER, str(outdir))
        validate_parameters(path, check, declared=declared)
        jobs_list.append((str(path), r.name, params, str(outdir), str(build)))
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
            stream.write(f"[{i + 1}/{total}] {job[1]} ... ")
            stream.flush()
            res = results[i] = _run_one(job)
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
                    # the running notebooks were interrupted too (same process group): start
                    # no more, let them end, then stop
                    for fut in pending:
                        fut.cancel()
                    wait(pending)
                    raise
                for fut in done:
                    i = pending.pop(fut)
                    res = results[i] = fut.result()
                    stream.write(f"[{i + 1}/{total}] {res.name} ... {_outcome(res)}\n")
                    if res.status == "failed":
                        stream.write(res.reason + "\n")
                        failed = True
                    stream.flush()
                if failed:
                    for fut in pending:
                        fut.cancel()
                    pending = {f: i for f, i in pending.items() if not f.cancelled()}
    done_results = [r for r in results if r is not None]
    counts = {s: sum(r.status == s for r in done_results) for s in ("ok", "skipped", "failed")}
    not_run = total - len(done_results)
    stream.write(f"reproduce: {total} run(s) in {time.perf_counter() - t0:.1f} s: "
                 f"{counts['ok']} ok, {counts['skipped']} skipped, {counts['failed']} failed"
                 + (f", {not_run} not run" if not_run else "") + "\n")
    for r in done_results:
        if r.status == "skipped":
            stream.write(f"  skipped {r.name}: {r.reason}\n")
    if not failed:
        _prune_records(outdir, [job[1] for job in jobs_list])
        index = write_index(artifact_index(outdir), outdir / INDEX_NAME)
        stream.write(f"  artifact index: {shown(index)}\n")
    stream.flush()
    return done_results


# ---------------------------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    ap = OneLineParser(
        prog="python -m leash.reproduce",
        description="Regenerate every table and figure: run notebooks/*.ipynb with papermill "
                    "(also `leash reproduce`, and `make reproduce`, which passes DATA, ONLY, "
                    "PARAMS and JOBS). Reads the paper's printed numbers, the SIMULATED demo or "
                    "the generations a study file names; writes each run's artifacts (tables, "
                    "figures, their records) and the artifact index into the output folder, "
                    "and the executed notebooks into --build. Exit status 1 when a notebook "
                    "fails, 2 for bad arguments.",
        epilog="examples:\n"
               "  leash reproduce                               # every run, into figures/\n"
               "  leash reproduce --list --only 01              # the runs and parameters\n"
               "  leash reproduce --only 01 -p n_boot 200       # into build/figures/\n"
               "  leash reproduce --data gsm8k-probe --jobs 2   # a shipped study, into "
               "build/gsm8k-probe/\n"
               "  python -m leash.reproduce --data my-study.yaml -f params.yaml\n",
    )
    ap.add_argument("--data", default=EMBEDDED,
                    help="'embedded': the runs of notebooks/runs.yaml (the paper's printed "
                         "numbers and the SIMULATED demo) into figures/; or a study file (or "
                         "shipped study name of data/studies/) for every notebook with a 'study' "
                         "parameter, into build/<study>/ (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", default=None,
                    help="run only these notebooks (stem, stem without number, or number; "
                         "default: all)")
    ap.add_argument("-p", "--parameter", nargs=2, action="append", default=[],
                    metavar=("NAME", "VALUE"),
                    help="set a parameter of the selected notebooks (VALUE read as YAML; "
                         "repeatable; default: none, the runs' own)")
    ap.add_argument("-f", "--parameters-file", metavar="FILE",
                    help="a YAML mapping of parameters for the selected notebooks (-p wins; "
                         "default: none)")
    ap.add_argument("--outdir", default=None,
                    help="artifact folder (default: figures/ for the default run, "
                         "build/<study>/ for a study, build/figures/ when parameters are set)")
    ap.add_argument("--build", default=None,
                    help="folder of the executed notebooks (default: the repository's build/)")
    ap.add_argument("--jobs", type=int, default=1, help="notebooks run in parallel")
    ap.add_argument("--list", action="store_true",
                    help="list the runs and their parameters, run nothing")
    return ap


def _given_parameters(args) -> dict:
    """``-f FILE`` then ``-p NAME VALUE`` (later wins), values read as YAML."""
    import yaml

    given = {}
    if args.parameters_file:
        p = Path(args.parameters_file)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ParameterError(f"-f {p}: {exc.strerror or exc}.") from None
        except yaml.YAMLError as exc:
            raise ParameterError(f"-f {p}: not valid YAML ({' '.join(str(exc).split())}).") \
                from None
        if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
            raise ParameterError(f"-f {p}: must be a mapping of parameter names to values.")
        given.update(data)
    for name, text in args.parameter:
        try:
            given[name] = yaml.safe_load(text)
        except yaml.YAMLError:
            given[name] = text
    return given


def _list(runs: list[Run], stream) -> None:
    for r in runs:
        stream.write(f"{r.name}\n")
        for p in notebook_parameters(NOTEBOOKS / f"{r.notebook}.ipynb").values():
            given = p.name in r.parameters
            value = repr(r.parameters[p.name]) if given else p.default
            stream.write(f"    {p.name}: {p.type_name or '?'} = {value}"
                         + (" (set)" if given else "")
                         + (f"  # {p.help}" if p.help else "") + "\n")


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status."""
    args = _parser().parse_args(argv)
    stream = sys.stderr
    try:
        given = _given_parameters(args)
        study = _study_parameter(args.data)
        runs = default_runs() if study is None else study_runs(study)
        if args.only:
            chosen = _select(discover_notebooks(), args.only)
            runs = [r for r in runs if r.notebook in chosen]
            if not runs:
                raise ParameterError(f"--only {' '.join(args.only)}: none of these notebooks "
                                     f"runs on --data {args.data}.")
        runs = _with_parameters(runs, given, NOTEBOOKS)
        if args.list:
            _list(runs, sys.stdout)
            return 0
        if args.outdir is not None:
            outdir = args.outdir
        elif study is not None:
            outdir = BUILD / _label(study)
        else:
            outdir = SCRATCH if given else FIGURES
        results = run_all(runs, outdir=outdir, build=args.build, jobs=args.jobs, stream=stream)
    except ParameterError as exc:
        stream.write(f"reproduce: {exc}\n")
        return 2
    except ValueError as exc:  # the records of the output folder disagree (see artifact_index)
        stream.write(f"reproduce: {' '.join(str(exc).split())}\n")
        return 1
    except KeyboardInterrupt:
        stream.write("\nreproduce: interrupted; the interrupted runs keep their earlier "
                     "artifact records and the index was not rewritten.\n")
        return 130
    return 1 if any(r.status == "failed" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
