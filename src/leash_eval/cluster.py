"""Work on a cluster (``--cluster ADDRESS``), Dask or Ray, chosen by the address, behind one small
protocol (:class:`Cluster`): connect, share an object with the workers, and run a function over
items with a bounded number in flight, results in input order.

Used by ``leash rescore`` (:mod:`leash_eval.rescore`), ``leash summarize``
(:mod:`leash_eval.summarize`) and ``leash generate`` (:mod:`leash_eval.generate.sampling`). The
address says which engine:

``ray``
    Ray (the ``ray`` extra): the Ray this process has initialised already, else ``ray.init()``
    by Ray's own rule: the cluster at ``RAY_ADDRESS``, else one started on this machine with
    ``ray start``, else a new Ray of this machine's cores (shut down at the end).
``ray://HOST:10001``
    A Ray cluster through Ray Client (the head node's client server).
anything else
    A Dask scheduler (``tcp://HOST:8786``; the ``cluster`` extra). Start its workers so that
    they may start processes (``DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker ...``).

This is the only module that imports Dask or Ray (an import-linter contract in
``pyproject.toml``): everything else sees :class:`Cluster`. Workers need leash installed (with
what the work needs: math-verify for grading) and, for ``leash summarize``, the input files at
the same paths (a shared filesystem).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections import deque
from contextlib import contextmanager
from typing import Protocol
from urllib.parse import urlsplit

from leash.errors import LeashValueError, Param

__all__ = ["RAY_RETRIES", "Cluster", "WorkerLost", "connected", "engine_of", "task_threads"]

#: Times Ray runs a task again after its worker process died (killed, out of memory): Ray's
#: own default for tasks, said here so that the message of a lost task can count the attempts.
RAY_RETRIES = 3

# Seconds to wait for an address to answer: Ray Client alone retries for about 35 s, and Ray
# waits minutes for a cluster address where nothing listens.
_CONNECT_TIMEOUT = 10


class Cluster(Protocol):
    """A connected cluster, whichever the engine.

    Attributes
    ----------
    engine : str
        ``"Dask"`` or ``"Ray"``.
    address : str
        The address given.
    """

    engine: str
    address: str

    def slots(self) -> int:
        """How many tasks run at once (Dask: the workers' threads; Ray: the cluster's CPUs)."""

    def share(self, obj):
        """A handle of ``obj`` to pass in the ``args`` of :meth:`in_order`: the object is sent
        once (not with every task) and the function receives the object itself.
        """

    def in_order(self, func, items, *args, name=None):
        """Yield ``(meta, func(*args, x))`` for each ``(meta, x)`` of ``items``, in input order,
        computed on the workers with at most two tasks per slot in flight (memory is bounded by
        that, not by the items). A task that raises raises its own error here; a task whose
        worker died more often than the engine retries it raises :class:`WorkerLost`, named by
        ``name(meta)``; on leaving early (an error, Ctrl-C, SIGTERM) the tasks in flight are
        cancelled (Ray: their worker processes are ended).
        """

    def close_on_workers(self, func) -> None:
        """Run ``func()`` on every worker that may hold state of the tasks (Dask: every worker,
        ``Client.run``). Ray: nothing; a Ray task runs in the main thread of a worker process
        of this job, so nothing is left behind but what the job's own processes hold until the
        job ends.
        """


class WorkerLost(OSError):
    """A task whose worker process died (killed, or out of memory) as often as the engine
    retries it: the message names the item (``name(meta)`` of :meth:`Cluster.in_order`).
    """

    def __init__(self, what: str, engine: str, detail: str):
        super().__init__(f"{what}: the {engine} worker process running it died ({detail}); "
                         "nothing was written. Rerun; if the workers ran out of memory, with "
                         "smaller batches.")
        self.what, self.engine = what, engine


def engine_of(address: str) -> str:
    """``"Ray"`` for ``ray`` and ``ray://...`` addresses, ``"Dask"`` for any other.

    >>> engine_of("ray"), engine_of("ray://head:10001"), engine_of("tcp://10.0.0.1:8786")
    ('Ray', 'Ray', 'Dask')
    """
    return "Ray" if address == "ray" or address.startswith("ray://") else "Dask"


@contextmanager
def connected(address: str):
    """The :class:`Cluster` at ``address`` (Ray or Dask, see the module), disconnected on exit;
    a ValueError naming the ``cluster`` parameter when the engine is not installed or nothing
    answers there.
    """
    with (_ray if engine_of(address) == "Ray" else _dask)(address) as cluster:
        yield cluster


def task_threads() -> int:
    """How many tasks the worker running the current task runs at once: a Dask worker's
    threads, else 1 (a Ray task, or not on a cluster).
    """
    try:
        from distributed import get_worker
    except ImportError:
        return 1
    try:
        return get_worker().state.nthreads
    except ValueError:  # not in a Dask task
        return 1


def _named(name, meta) -> str:
    return name(meta) if name is not None else "a task"


class _Engine:
    """What both engines share: the bounded, in-order window over the items."""

    engine = address = ""

    def in_order(self, func, items, *args, name=None):
        pending: deque = deque()
        window = 2 * self.slots()

        def first():  # the oldest task stays in `pending` until it is done: cancelled otherwise
            meta0, task = pending[0]
            done = self._result(task, _named(name, meta0))
            pending.popleft()
            return meta0, done

        try:
            for meta, x in items:
                pending.append((meta, self._submit(func, args, x)))
                if len(pending) >= window:
                    yield first()
            while pending:
                yield first()
        finally:
            if pending:
                self._cancel([t for _, t in pending])


# ----------------------------------------------------------------------------------- Dask


class _Dask(_Engine):
    engine = "Dask"

    def __init__(self, client, address: str):
        self.client, self.address = client, address

    def slots(self) -> int:
        return sum(self.client.nthreads().values()) or 1

    def share(self, obj):
        return self.client.scatter(obj, broadcast=True)

    def _submit(self, func, args, x):
        return self.client.submit(func, *args, x, pure=False)

    def _result(self, fut, what: str):
        from distributed import KilledWorker

        try:
            return fut.result()
        except KilledWorker as exc:
            raise WorkerLost(what, "Dask", f"{exc}") from None

    def _cancel(self, futures) -> None:
        self.client.cancel(futures)

    def close_on_workers(self, func) -> None:
        self.client.run(func)


@contextmanager
def _dask(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise LeashValueError(Param("cluster"), " needs dask.distributed: pip install "
                              "leash[cluster].", value=address) from None
    try:
        client = Client(address, timeout=f"{_CONNECT_TIMEOUT}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise LeashValueError(Param("cluster"), f" names no reachable Dask scheduler: "
                              f"{address!r} ({type(exc).__name__}: {exc}).",
                              value=address) from None
    try:
        yield _Dask(client, address)
    finally:
        client.close()


# ------------------------------------------------------------------------------------ Ray


class _RayShared:
    """An object put in Ray's object store once (:meth:`_Ray.share`); a task gets the object,
    fetched once per worker process (:func:`_ray_call`).
    """

    def __init__(self, ref):
        self.ref = ref


_RAY_SHARED: dict = {}  # in a Ray worker: ObjectRef hex -> the shared object, latest few


def _ray_call(func, args, x):
    """The body of every Ray task of :meth:`_Ray.in_order`: ``func(*args, x)``, each shared
    object of ``args`` fetched once per worker process (Ray would copy an object given as an
    argument into every task).
    """
    import ray

    resolved = []
    for a in args:
        if isinstance(a, _RayShared):
            key = a.ref.hex()
            if key not in _RAY_SHARED:
                while len(_RAY_SHARED) >= 4:  # objects of earlier calls of this job
                    _RAY_SHARED.pop(next(iter(_RAY_SHARED)))
                _RAY_SHARED[key] = ray.get(a.ref)
            a = _RAY_SHARED[key]
        resolved.append(a)
    return func(*resolved, x)


class _Ray(_Engine):
    engine = "Ray"

    def __init__(self, address: str, noted: list):
        import ray

        self.ray, self.address, self._noted = ray, address, noted
        self._remote = ray.remote(_ray_call)
        self._slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self._held: list = []  # shared objects live as long as the connection

    def slots(self) -> int:
        return self._slots

    def share(self, obj):
        ref = self.ray.put(obj)
        self._held.append(ref)
        return _RayShared(ref)

    def _submit(self, func, args, x):
        return self._remote.options(
            name=f"leash:{func.__name__}", num_cpus=1, max_retries=RAY_RETRIES,
            retry_exceptions=False).remote(func, args, x)

    def _result(self, ref, what: str):
        from ray import exceptions as rx

        try:
            return self.ray.get(ref)
        except KeyboardInterrupt:  # Ray's, for whatever a signal handler raised
            if self._noted:
                signum, handler = self._noted.pop()
                handler(signum, None)  # its own exception, as outside Ray
            raise
        except rx.RayTaskError as exc:  # the task's own error, raised as itself
            raise exc.cause from exc
        except (rx.WorkerCrashedError, rx.NodeDiedError, rx.OutOfMemoryError,
                rx.ObjectLostError) as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise WorkerLost(what, "Ray", f"{type(exc).__name__}, {RAY_RETRIES + 1} attempt(s): "
                             f"{detail}") from None

    def _cancel(self, refs) -> None:
        # force: the worker process running a task is ended, not asked to stop (a task in
        # math-verify's C extensions would not see a KeyboardInterrupt soon)
        for ref in refs:
            self.ray.cancel(ref, force=True)

    def close_on_workers(self, func) -> None:
        pass


def _reachable(address: str, host_port: str) -> None:
    """Fail within :data:`_CONNECT_TIMEOUT` seconds when nothing listens at ``host:port``
    (Ray itself retries for half a minute or more). Hand-written: Ray offers no connect timeout.
    """
    parts = urlsplit(host_port if "://" in host_port else f"//{host_port}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None:
        raise LeashValueError(Param("cluster"), f" must be 'ray', 'ray://HOST:PORT' or a Dask "
                              f"scheduler's address; {host_port!r} names no host and port.",
                              value=address)
    try:
        socket.create_connection((parts.hostname, port), timeout=_CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise LeashValueError(Param("cluster"), f" names no reachable Ray cluster: "
                              f"{host_port!r} ({type(exc).__name__}: {exc}).",
                              value=address) from None


@contextmanager
def _ray(address: str):
    try:
        import ray
    except ImportError:
        raise LeashValueError(Param("cluster"), " needs Ray: pip install 'leash[ray]'.",
                              value=address) from None
    started = False
    if address.startswith("ray://"):
        _reachable(address, address)
        if ray.is_initialized():
            raise LeashValueError(Param("cluster"), f" is {address!r}, but this process uses "
                                  "a Ray already (ray.init); pass 'ray' to use that one, or "
                                  "call ray.shutdown() first.", value=address)
        _init(ray, address, address)
        started = True
    elif not ray.is_initialized():
        env = os.environ.get("RAY_ADDRESS", "")
        if env and env not in ("auto", "local"):
            _reachable(address, env)
        _init(ray, None, address)
        started = True
    noted: list = []
    try:
        with _ray_messages_off(), _signals_noted(noted):
            yield _Ray(address, noted)
    finally:
        if started:
            ray.shutdown()


@contextmanager
def _signals_noted(noted: list):
    """While inside, each SIGINT or SIGTERM that reaches a Python handler is noted in ``noted``
    (the signal and its handler) before the handler runs. Ray's blocking calls catch what a
    handler raises and raise a plain KeyboardInterrupt instead: :meth:`_Ray._result` has the
    handler raise its own again (``leash``'s SIGTERM: :class:`leash_eval.processes.Terminated`,
    "terminated", status 143). Main thread only, where Python runs handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(signum)
        if callable(handler):
            def noting(num, frame, handler=handler):
                noted.append((num, handler))
                handler(num, frame)

            previous[signum] = signal.signal(signum, noting)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def _ray_messages_off():
    """Ray's driver prints its cluster's error messages ("A worker died ...", "Task ... will be
    retried") on this process's stdout, in the middle of a command's table or JSON: off while
    connected (a task that is lost raises :class:`WorkerLost`, with its item named). A private
    switch of Ray (its debugger turns worker output off with it); where it is missing, the
    messages stay.
    """
    try:
        from ray._private import worker
    except ImportError:  # pragma: no cover - another Ray layout
        yield
        return
    before = getattr(worker, "_worker_logs_enabled", None)
    if before is None:  # pragma: no cover - another Ray layout
        yield
        return
    worker._worker_logs_enabled = False
    try:
        yield
    finally:
        worker._worker_logs_enabled = before


def _init(ray, target, address: str) -> None:
    """``ray.init``, quiet (its log on stderr only for errors, no worker output copied here, no
    dashboard when it starts a Ray); the SIGTERM handler this process had is put back: Ray
    replaces it with one that exits at once, without the command's cleanup.
    """
    import logging

    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    kw = {} if target else {"include_dashboard": False}
    try:
        ray.init(target, logging_level=logging.ERROR, log_to_driver=False, **kw)
    except Exception as exc:  # Ray raises bare Exception too (a node that did not start)
        what = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LeashValueError(Param("cluster"), f" names no reachable Ray cluster: "
                              f"{address!r} ({type(exc).__name__}: {what}).",
                              value=address) from None
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)
