"""Running the grading of :mod:`leash_eval.rescore`: batches graded here, in worker processes
started from a fork server (stopped at once on Ctrl-C or an error), or on a Dask cluster,
results in input order (:func:`graded`); the number of jobs and the progress bar.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import threading
import time
from collections import deque
from typing import NamedTuple

import numpy as np

from leash.errors import LeashValueError, Param
from leash_eval.processes import die_with
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


def graded(tasks, spec: Spec, jobs: int, cluster: str | None = None, *, auto: bool = False):
    """Yield ``(meta, Graded)`` for each ``(meta, args)`` of ``tasks``, in input order: here
    with ``jobs == 1`` or one batch (in the main thread), else by ``jobs`` worker processes
    (a :class:`pebble.ProcessPool`) with at most ``2 * jobs`` batches in flight (see
    :mod:`leash_eval.rescore`), or on the Dask cluster at ``cluster``.

    ``auto`` (the default ``jobs`` of ``leash rescore``): batches are graded here; once that
    took :data:`START_AFTER` seconds, workers start in the background while grading goes on
    here, and batches go to them once they are ready: a small input never pays their start-up,
    so the default is never slower than one process by more than the start-up's CPU.
    """
    state = prepare(spec)  # here first: a missing package or bad task fails before any worker
    if cluster is not None:
        yield from _cluster_graded(tasks, spec, cluster)
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
    # start in the background while this process goes on grading (never slower than one)
    auto = auto and main_thread
    pool = None if auto else _Pool(spec, jobs, background=False)
    spent = 0.0
    try:
        pending: deque = deque()
        for meta, args in itertools.chain(head, it):
            if pool is not None and pool.ready():
                pending.append((meta, pool.submit(args)))
            else:  # auto, no workers yet: here, in order after what is in flight
                t0 = time.perf_counter()
                pending.append((meta, _Done(grade_rows(state, *args))))
                spent += time.perf_counter() - t0
                if pool is None and spent > START_AFTER:
                    pool = _Pool(spec, jobs, background=True)
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
    are spawned. Not ``fork``: the parent may hold threads (pyarrow, DuckDB, tqdm's monitor).
    """
    import multiprocessing as mp

    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["leash_eval.rescore.forkserver_quiet",
                                    "leash_eval.rescore.execution", "math_verify"])
        if threading.current_thread() is threading.main_thread():
            # Started with SIGINT ignored, which its exec keeps: a Ctrl-C while it imports
            # math-verify would print its traceback; the parent stops it and its workers.
            from multiprocessing import forkserver

            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                forkserver.ensure_running()
            finally:
                signal.signal(signal.SIGINT, old)
        return ctx
    return mp.get_context("spawn")  # pragma: no cover - not POSIX


_CLUSTER_STATE: dict = {}


_CLUSTER_LOCK = threading.Lock()


def _cluster_grade(spec: Spec, args) -> Graded:
    """One batch on a worker of a Dask cluster. Dask runs tasks in threads, and math-verify's
    timeouts need the main thread (a signal), so the worker grades in its own pool of
    processes (one per worker thread, started for the first batch of a spec, which arrives once
    per worker, scattered) as :func:`graded` does outside the main thread.
    """
    import multiprocessing

    from distributed import get_worker

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
            pool = _Pool(spec, get_worker().state.nthreads, background=False)
            entry = _CLUSTER_STATE[id(spec)] = (spec, pool)
    return entry[1].submit(args).result()


def _cluster_close() -> None:
    """End the grading processes of a cluster worker (run on every worker after a call): a
    pool left behind would outlive the worker, its processes waiting for work forever.
    """
    with _CLUSTER_LOCK:
        for _, pool in _CLUSTER_STATE.values():
            pool.stop()
        _CLUSTER_STATE.clear()


def _cluster_graded(tasks, spec: Spec, address: str):
    """:func:`graded` on the Dask cluster at ``address`` (``dask.distributed``): at most two
    batches per worker thread in flight, results in input order; a batch that fails raises
    its own error here.
    """
    from leash_eval.cluster import connected, in_order

    with connected(address) as client:
        try:
            spec_f = client.scatter(spec, broadcast=True)
            yield from in_order(client, _cluster_grade, tasks, spec_f)
        finally:
            client.run(_cluster_close)

