"""Running the grading of :mod:`leash_eval.rescore`: batches graded here, in worker processes
started from a fork server (stopped at once on Ctrl-C or an error), or on a cluster (Dask or
Ray), results in input order (:func:`graded`); the number of jobs and the progress bar.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
import time
from collections import deque
from typing import NamedTuple

import numpy as np

from leash.errors import LeashValueError, Param
from leash_eval.processes import die_with, forkserver_context
from leash_eval.rescore.graders import Graded, Spec, grade_rows, prepare

__all__ = ["default_jobs", "graded", "jobs_and_batch", "progress_bar"]


def default_jobs() -> int:
    """The number of CPU cores this process may run on (``os.sched_getaffinity``), at least 1.

    Returns
    -------
    int
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


def jobs_and_batch(jobs, batch_size, func: str) -> tuple[int, int]:
    """``jobs`` (None: every core) and ``batch_size`` as ints >= 1."""
    out = []
    for name, x, or_none in (("jobs", jobs, " or None"), ("batch_size", batch_size, "")):
        if x is None and or_none:
            x = default_jobs()
        if isinstance(x, bool) or not isinstance(x, int | np.integer) or x < 1:
            raise LeashValueError(param=name, func=func, value=x,
                                  constraint=f"an int >= 1{or_none}")
        out.append(int(x))
    return out[0], out[1]


def progress_bar(progress: bool, desc: str, total: int | None = None):
    """A tqdm progress bar on stderr, counting samples; shown only when ``progress`` is true and
    stderr is a terminal.

    Parameters
    ----------
    progress : bool
        False: a disabled bar (its ``update`` does nothing).
    desc : str
        The bar's label (the command, e.g. ``"rescore"``).
    total : int, optional
        The number of samples, when known.

    Returns
    -------
    tqdm.tqdm
        A context manager.
    """
    # Plain tqdm on stderr, not tqdm.auto: the auto bar warns "IProgress not found" in a notebook
    # without ipywidgets. disable=None: tqdm's own rule, off when stderr is not a terminal (logs,
    # notebooks, CI).
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=" samples", file=sys.stderr, dynamic_ncols=True,
                disable=None if progress else True, leave=False)


def graded(tasks, spec: Spec, jobs: int, cluster: str | None = None, *, auto: bool = False,
           name=None):
    """Yield ``(meta, Graded)`` for each ``(meta, args)`` of ``tasks``, in input order: here
    with ``jobs == 1`` or one batch (in the main thread), else by ``jobs`` worker processes
    (a :class:`pebble.ProcessPool`) with at most ``2 * jobs`` batches in flight (see
    :mod:`leash_eval.rescore`), or on the cluster at ``cluster`` (Dask or Ray,
    :mod:`leash_eval.cluster`), where ``name(meta)`` names a batch whose worker died.

    ``auto`` (the default ``jobs`` of ``leash rescore``): batches are graded here; once that
    took :data:`START_AFTER` seconds, workers start in the background while grading goes on
    here, and batches go to them once they are ready, but only as many as there are idle cores
    (:func:`_idle_workers`; none on a busy machine): a small input never pays their start-up,
    and workers that could only share busy cores, spending CPU on their start-up and caches
    for no gain in time, never start.
    """
    state = prepare(spec)  # here first: a missing package or bad task fails before any worker
    if cluster is not None:
        yield from _cluster_graded(tasks, spec, cluster, name)
        return
    it = iter(tasks)
    head = list(itertools.islice(it, 2))
    if not head:
        return
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread and (jobs == 1 or len(head) == 1):
        for meta, args in itertools.chain(head, it):
            yield meta, grade_rows(state, *args)
        return
    # auto: here until the work done here took longer than starting workers does, then workers
    # on the idle cores start in the background while this process goes on grading (never
    # slower than one)
    auto = auto and main_thread
    pool = None if auto else _Pool(spec, jobs, background=False)
    spent = cpu = 0.0
    decided = not auto
    try:
        pending: deque = deque()
        for meta, args in itertools.chain(head, it):
            if pool is not None and pool.ready():
                pending.append((meta, pool.submit(args)))
            else:  # auto, no workers yet: here, in order after what is in flight
                t0, c0 = time.perf_counter(), time.process_time()
                pending.append((meta, _Done(grade_rows(state, *args))))
                spent += time.perf_counter() - t0
                cpu += time.process_time() - c0
                if not decided and spent > START_AFTER:
                    decided, workers = True, _idle_workers(jobs, cpu / spent)
                    pool = _Pool(spec, workers, background=True) if workers else None
            while pending and (len(pending) >= 2 * jobs or isinstance(pending[0][1], _Done)):
                meta0, fut = pending.popleft()
                yield meta0, _result(fut, jobs, head)
        while pending:
            meta0, fut = pending.popleft()
            yield meta0, _result(fut, jobs, head)
    finally:
        if pool is not None:
            pool.stop()


#: Seconds of grading in this process after which the default ``jobs`` starts workers: about
#: what starting them costs (a fork server importing math-verify, then the workers), so an
#: input graded sooner never pays it.
START_AFTER = 3.0


def _idle_workers(jobs: int, share: float) -> int:
    """Workers for the default ``jobs`` once grading here took :data:`START_AFTER` seconds, of
    which this process ran a ``share`` (CPU over wall time): none when it did not get a whole
    core (the cores are busy: workers would share them, their start-up and caches costing CPU
    for no gain in time) or when the load average (over the last minute, in which this process
    barely counts yet) leaves no core idle besides this one's; else one per core it leaves idle
    and this one's (which then only hands batches out), at most ``jobs``.
    """
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - no load average on this platform
        load = 0.0
    cores = default_jobs()
    if share < 0.8 or cores - 1 - load < 0.5:
        return 0
    return max(0, min(jobs, round(cores - load)))


def _result(fut, jobs: int, head) -> Graded:
    from concurrent.futures.process import BrokenProcessPool

    if isinstance(fut, _Done):
        return fut.graded
    try:
        return fut.result()
    except (BrokenProcessPool, ProcessExpired):
        raise OSError(f"A rescoring worker process died (killed from outside, e.g. by the "
                      f"system when memory ran out); with {jobs} jobs and batches of "
                      f"{len(head[0][1][0])} samples, try fewer jobs or smaller "
                      "batches.") from None


class _Done(NamedTuple):
    """A batch graded here, in the queue of batches in flight."""

    graded: Graded


class _Pool:
    """The worker processes of :func:`graded`: a :class:`pebble.ProcessPool` (a maintained
    library: stopping it terminates its workers, with no private attributes of
    ``concurrent.futures``), started from a fork server that imported math-verify once; its
    workers end when this process ends (:func:`_worker_init`). ``background``: started in a
    thread, :meth:`ready` once the first worker answered.
    """

    def __init__(self, spec: Spec, jobs: int, background: bool):
        from pebble import ProcessPool

        self.jobs = jobs
        self.pool = ProcessPool(max_workers=jobs, initializer=_worker_init,
                                initargs=(spec, os.getpid()), context=_mp_context())
        self._ready = threading.Event()
        self._starter = None
        if background:
            self._starter = threading.Thread(target=self._start, daemon=True)
            self._starter.start()
        else:
            self._ready.set()

    def _start(self) -> None:
        with contextlib.suppress(Exception):  # a failure shows at the first batch sent
            self.pool.schedule(os.getpid).result()
        self._ready.set()

    def ready(self) -> bool:
        return self._ready.is_set()

    def submit(self, args):
        return self.pool.schedule(_worker_grade, args=(args,))

    def stop(self) -> None:
        """End the workers now, not after their current batch (Ctrl-C, an error, the end)."""
        self.pool.stop()
        self.pool.join(timeout=10)


try:
    from pebble import ProcessExpired
except ImportError:  # pragma: no cover - pebble is a dependency
    ProcessExpired = OSError


_WORKER_STATE = None


def _worker_init(spec: Spec, parent: int) -> None:
    # Ctrl-C reaches every process of the terminal's foreground group: the parent alone handles
    # it (one line, exit 130) and stops the workers, which must not print tracebacks of their own
    # (pebble's workers ignore SIGINT). A worker ends with the process that started the pool,
    # even one killed with SIGKILL, which can clean up nothing.
    die_with(parent)
    global _WORKER_STATE
    _WORKER_STATE = prepare(spec)


def _worker_grade(args) -> Graded:
    return grade_rows(_WORKER_STATE, *args)


def _mp_context():
    """Worker processes start from a fork server that imported math-verify once (POSIX), else
    are spawned (:func:`leash_eval.processes.forkserver_context`).
    """
    return forkserver_context("leash_eval.rescore.execution", "math_verify")


_CLUSTER_STATE: dict = {}


_CLUSTER_LOCK = threading.Lock()


_HERE: list = [None, None]  # a Ray worker's prepared spec: (spec, prepare(spec))


def _cluster_grade(spec: Spec, args) -> Graded:
    """One batch on a worker of a cluster (:mod:`leash_eval.cluster`). math-verify's timeouts
    need the main thread (``signal.alarm``): a Ray task runs in its worker process's main
    thread and grades there; Dask runs tasks in threads, so a Dask worker grades in its own
    pool of processes (one per worker thread, started for the first batch of a spec, which
    arrives once per worker, shared) as :func:`graded` does outside the main thread.
    """
    import multiprocessing

    from leash_eval.cluster import task_threads

    if threading.current_thread() is threading.main_thread():
        if _HERE[0] is not spec:
            _HERE[:] = [spec, prepare(spec)]
        return grade_rows(_HERE[1], *args)
    if multiprocessing.current_process().daemon:
        raise LeashValueError(
            Param("cluster"), " names a Dask cluster whose workers are daemonic processes, "
            "which cannot start the grading processes (leash times math-verify out with "
            "a signal, in a main thread only): start it with "
            "LocalCluster(processes=False), or its workers with "
            "DASK_DISTRIBUTED__WORKER__DAEMON=False in their environment.")
    with _CLUSTER_LOCK:
        entry = _CLUSTER_STATE.get(id(spec))
        if entry is None or entry[0] is not spec:
            for _, pool in _CLUSTER_STATE.values():
                pool.stop()
            _CLUSTER_STATE.clear()
            pool = _Pool(spec, task_threads(), background=False)
            entry = _CLUSTER_STATE[id(spec)] = (spec, pool)
    return entry[1].submit(args).result()


def _cluster_close() -> None:
    """End the grading processes of a Dask worker (run on every worker after a call): a pool
    left behind would outlive the worker, its processes waiting for work forever.
    """
    with _CLUSTER_LOCK:
        for _, pool in _CLUSTER_STATE.values():
            pool.stop()
        _CLUSTER_STATE.clear()


def _cluster_graded(tasks, spec: Spec, address: str, name=None):
    """:func:`graded` on the cluster at ``address`` (Dask or Ray, :mod:`leash_eval.cluster`):
    at most two batches per slot in flight, results in input order; a batch that fails raises
    its own error here, one whose worker died is named by ``name(meta)``.
    """
    from leash_eval.cluster import connected

    with connected(address) as cluster:
        try:
            shared = cluster.share(spec)
            yield from cluster.in_order(_cluster_grade, tasks, shared, name=name)
        finally:
            cluster.close_on_workers(_cluster_close)
