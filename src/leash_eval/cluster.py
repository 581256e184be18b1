"""Work on a Dask cluster (``--cluster ADDRESS``, the ``cluster`` extra): connect, and run a
function over items with a bounded number in flight, results in input order.

Used by ``leash rescore`` (:mod:`leash_eval.rescore`) and ``leash generate``
(:mod:`leash_eval.generate.sampling`); a Dask scheduler is started with ``dask scheduler`` and its
workers with ``dask worker ADDRESS`` (see the README for the environment they need).
"""

from __future__ import annotations

from collections import deque
from contextlib import contextmanager

from leash.errors import LeashValueError, Param

__all__ = ["connected", "in_order"]


@contextmanager
def connected(address: str):
    """A ``distributed.Client`` of the scheduler at ``address``, closed on exit; a ValueError
    naming the ``cluster`` parameter when dask.distributed is missing or nothing answers.
    """
    try:
        from distributed import Client
    except ImportError:
        raise LeashValueError(Param("cluster"), " needs dask.distributed: pip install "
                              "leash[cluster].") from None
    try:
        client = Client(address, timeout="10s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise LeashValueError(Param("cluster"), f" names no reachable Dask scheduler: "
                              f"{address!r} ({type(exc).__name__}: {exc}).",
                              value=address) from None
    try:
        yield client
    finally:
        client.close()


def in_order(client, func, items, *args):
    """Yield ``(meta, func(*args, x))`` for each ``(meta, x)`` of ``items``, in input order,
    computed on the cluster with at most two items per worker thread in flight (memory is
    bounded by that, not by the items); an item that fails raises its error here, and the
    items still in flight are cancelled.
    """
    pending: deque = deque()
    window = 2 * (sum(client.nthreads().values()) or 1)
    try:
        for meta, x in items:
            pending.append((meta, client.submit(func, *args, x, pure=False)))
            if len(pending) >= window:
                meta0, fut = pending.popleft()
                yield meta0, fut.result()
        while pending:
            meta0, fut = pending.popleft()
            yield meta0, fut.result()
    finally:
        client.cancel([f for _, f in pending])
