"""How the processes of a run end together: SIGTERM stops a command as Ctrl-C does, and a
worker process ends with the process that started it.

The toolkit's commands use these: ``leash reproduce`` (its notebook workers) and ``leash
rescore`` (its grading workers, :mod:`leash_eval.rescore.execution`); the ``leash`` command
line renders :class:`Terminated` as its ``terminated`` line and status 143.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time

from leash.writing import alive

__all__ = ["Terminated", "die_with", "raise_interrupted", "raise_terminated", "sigterm_raises",
           "signalled", "signals_ignored"]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command runs, so that it stops as after Ctrl-C (its partial
    output removed, its workers stopped) and ends with status 143 (128 + SIGTERM).
    """


#: The stop signal this process last received through the handlers below (None: none).
_RECEIVED: dict = {"signal": None}


def raise_terminated(signum, frame):
    """A SIGTERM handler: raise :class:`Terminated` in the main thread (and remember it:
    :func:`signalled`).
    """
    _RECEIVED["signal"] = signal.SIGTERM
    raise Terminated


def raise_interrupted(signum, frame):
    """A SIGINT handler: raise KeyboardInterrupt, as Python's own does (and remember it:
    :func:`signalled`).
    """
    _RECEIVED["signal"] = signal.SIGINT
    raise KeyboardInterrupt


def signalled(clear: bool = False) -> KeyboardInterrupt | None:
    """The stop of the last SIGTERM or SIGINT received through :func:`raise_terminated` or
    :func:`raise_interrupted` (a :class:`Terminated` or a KeyboardInterrupt), else None;
    ``clear`` forgets it (a command starting). A library may turn the exception a handler
    raised into its own: DuckDB stops a query when a signal's handler raises and reports
    ``RuntimeError("Query interrupted")`` instead, so that a command would print a traceback
    for Ctrl-C; what ends a command after a stop signal is that stop.
    """
    sig = _RECEIVED["signal"]
    if clear:
        _RECEIVED["signal"] = None
    if sig is None:
        return None
    return Terminated() if sig == signal.SIGTERM else KeyboardInterrupt()


def sigterm_raises():
    """While inside, SIGTERM raises :class:`Terminated` in this process (when called from the
    main thread, the only one Python runs handlers in; elsewhere nothing changes); the previous
    handler comes back on leaving.
    """
    return _handling({signal.SIGTERM: raise_terminated})


def signals_ignored():
    """While inside, SIGINT and SIGTERM do nothing (in the main thread; elsewhere nothing
    changes): for a cleanup that a second Ctrl-C must not break. A Python handler that does
    nothing, not ``SIG_IGN``: Python raises "OSError: Signal N ignored due to race condition"
    for a signal on its way to a handler just switched to ``SIG_IGN``.
    """
    return _handling({signal.SIGINT: _nothing, signal.SIGTERM: _nothing})


@contextlib.contextmanager
def _handling(handlers):
    """``handlers`` (signal -> handler) while inside, from the main thread; the previous ones
    after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, h) for s, h in handlers.items()}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _nothing(signum, frame):
    pass


def die_with(parent: int) -> None:
    """End this process when the process ``parent`` ends, even one killed with SIGKILL, which
    can clean up nothing: Linux's ``PR_SET_PDEATHSIG`` covers this process's own parent (a fork
    server, say), a thread waiting on a pidfd of ``parent`` (or polling it where pidfds are
    missing) covers ``parent`` when it is another process.
    Hand-written: no library offers this for a multiprocessing child. Nothing on Windows.
    """
    if sys.platform == "win32":  # pragma: no cover - Windows
        return
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()


def _watch(parent: int) -> None:
    import select

    try:
        fd = os.pidfd_open(parent)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        select.select([fd], [], [])  # readable once the process has ended
    else:  # pragma: no cover - no pidfd (not Linux >= 5.3)
        while alive(parent):
            time.sleep(1.0)
    os._exit(1)
