"""Running the grading of :mod:`leash_eval.rescore`: batches graded here, in worker processes
started from a fork server (stopped at once on Ctrl-C or an error), or on a Dask cluster,
results in input order (:func:`graded`); the number of jobs and the progress bar.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
from collections import deque

import numpy as np

from leash.errors import LeashValueError, Param
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


def graded(tasks, spec: Spec, jobs: int, cluster: str | None = None):
    """Yield ``(meta, Graded)`` for each ``(meta, args)`` of ``tasks``, in input order: here
    with ``jobs == 1`` or one batch (in the main thread), else by ``jobs`` worker processes with
    at most ``2 * jobs`` batches in flight (see :mod:`leash_eval.rescore`), or on the Dask
    cluster at ``cluster``.
    """
    from concurrent.futures import ProcessPoolExecutor

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
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=_mp_context(),
                                   initializer=_worker_init, initargs=(spec,))
    finished = False
    try:
        pending: deque = deque()
        for meta, args in itertools.chain(head, it):
            pending.append((meta, executor.submit(_worker_grade, args)))
            if len(pending) >= 2 * jobs:
                meta0, fut = pending.popleft()
                yield meta0, fut.result()
        while pending:
            meta0, fut = pending.popleft()
            yield meta0, fut.result()
        finished = True
    except BrokenProcessPool:
        raise OSError(f"A rescoring worker process died (killed from outside, e.g. by the "
                      f"system when memory ran out); with {jobs} jobs and batches of "
                      f"{len(head[0][1][0])} samples, try fewer jobs or smaller batches.") from None
    finally:
        if finished:
            executor.shutdown(wait=True)
        else:
            _stop_workers(executor)


_WORKER_STATE = None


def _worker_init(spec: Spec) -> None:
    # Ctrl-C reaches every process of the terminal's foreground group: the parent alone handles
    # it (one line, exit 130) and stops the workers, which must not print tracebacks of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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
        ctx.set_forkserver_preload(["leash_eval.rescore.execution", "math_verify"])
        return ctx
    return mp.get_context("spawn")  # pragma: no cover - not POSIX


def _stop_workers(executor) -> None:
    """End the workers now, not after their current batch (Ctrl-C, an error, early close).

    Never waits without a bound: batches still queued for a worker that is gone can keep the
    queue's feeder thread writing into a full pipe, and the executor joins that thread holding
    the lock its ``shutdown`` takes; so the queue drops them, and ``shutdown`` runs in a thread
    of its own. (A Ctrl-C under a loaded ``make test`` hung once, twice over the project's
    life, and was not reproduced; this is where a wait had no bound.)
    """
    procs = list((getattr(executor, "_processes", None) or {}).values())
    queue = getattr(executor, "_call_queue", None)
    if queue is not None:
        queue.cancel_join_thread()  # the batches not yet sent are dropped, not awaited
    if hasattr(executor, "terminate_workers"):  # Python >= 3.14
        executor.terminate_workers()
    else:  # before 3.14 the executor has no public way to stop a running worker
        for p in procs:
            p.terminate()
    closer = threading.Thread(target=executor.shutdown, kwargs={"wait": False,
                              "cancel_futures": True}, daemon=True)
    closer.start()
    closer.join(timeout=10)
    for p in procs:
        p.join(timeout=10)


_CLUSTER_STATE: dict = {}


_CLUSTER_LOCK = threading.Lock()


def _cluster_grade(spec: Spec, args) -> Graded:
    """One batch on a worker of a Dask cluster. Dask runs tasks in threads, and math-verify's
    timeouts need the main thread (``signal.alarm``), so the worker grades in its own pool of
    processes (one per worker thread, started for the first batch of a spec, which arrives once
    per worker, scattered) as :func:`graded` does outside the main thread.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from distributed import get_worker

    if multiprocessing.current_process().daemon:
        raise LeashValueError(
            Param("cluster"), " names a Dask cluster whose workers are daemonic "
            "processes, which cannot start the processes that "
            "grading needs (math-verify times out with signal.alarm, in a main thread only): "
            "start the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False in their "
            "environment (README, 'Running on your own generations').")
    with _CLUSTER_LOCK:
        entry = _CLUSTER_STATE.get(id(spec))
        if entry is None or entry[0] is not spec:
            for _, pool in _CLUSTER_STATE.values():
                pool.shutdown(wait=False, cancel_futures=True)
            _CLUSTER_STATE.clear()
            pool = ProcessPoolExecutor(max_workers=get_worker().state.nthreads,
                                       mp_context=_mp_context(), initializer=_worker_init,
                                       initargs=(spec,))
            entry = _CLUSTER_STATE[id(spec)] = (spec, pool)
    return entry[1].submit(_worker_grade, args).result()


def _cluster_close() -> None:
    """End the grading processes of a cluster worker (run on every worker after a call): a
    pool left behind would outlive the worker, its processes waiting for work forever.
    """
    with _CLUSTER_LOCK:
        for _, pool in _CLUSTER_STATE.values():
            pool.shutdown(wait=True, cancel_futures=True)
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

