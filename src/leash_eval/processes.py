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

__all__ = ["Terminated", "die_with", "exit_status", "forkserver_context", "raise_interrupted",
           "raise_terminated", "sigterm_raises", "signalled", "signals_held", "signals_ignored",
           "stop_forkserver"]


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
def signals_held():
    """While inside, SIGINT and SIGTERM wait (in the main thread; elsewhere nothing changes):
    for starting worker processes, which the command's KeyboardInterrupt must not cut short
    between a worker's start and the data it reads first (the worker then printed "EOFError:
    Ran out of input"). One that arrives meanwhile acts on leaving, as it would have (its
    KeyboardInterrupt replacing an error raised inside).
    Their handlers only note them while inside, since Python runs a handler at the next
    instruction, wherever that is.
    """
    arrived: list[int] = []
    try:
        with _handling({s: lambda signum, frame: arrived.append(signum)
                        for s in (signal.SIGINT, signal.SIGTERM)}) as previous:
            yield
    finally:  # also after an error inside, which the signal may have caused (SIGTERM to the
        # whole group ends a fork server while it starts)
        for signum in dict.fromkeys(arrived):
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)


def forkserver_context(*preload: str):
    """The multiprocessing context of a pool's workers: forked from a fork server (POSIX) that
    imported the modules ``preload`` once and prints nothing for a worker started after its
    pool stopped (:mod:`leash_eval.forkserver_quiet`), else spawned.

    The server is started (from the main thread) with SIGINT ignored, which its exec and its
    children keep: a Ctrl-C while it or a worker starts prints no traceback of theirs; the
    command's process handles it and stops them (pebble's workers ignore SIGINT anyway, once
    started). Not ``fork``: the parent may hold threads (pyarrow, DuckDB, tqdm's monitor).
    One fork server per process: the first call's ``preload`` is the one it imports.
    """
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")  # pragma: no cover - not POSIX
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["leash_eval.forkserver_quiet", *preload])
    if threading.current_thread() is threading.main_thread():
        from multiprocessing import forkserver

        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            forkserver.ensure_running()
        finally:
            signal.signal(signal.SIGINT, old)
    return ctx


def stop_forkserver() -> None:
    """End this process's fork server, once its pool has ended, and wait for it (the next
    :func:`forkserver_context` starts another). Its workers are its children, not this
    process's: waited for here, the server's CPU time and theirs (their kernels' included)
    count as this process's children's, which ``time`` and ``getrusage`` report; else the
    server ended with this process, an orphan whose time nobody counted.
    CPython has no public call for it: ``_stop`` is the one its own tests use (3.8 and later;
    where it is missing, nothing happens).
    """
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)
    if stop is not None:
        stop()


@contextlib.contextmanager
def _handling(handlers):
    """``handlers`` (signal -> handler) while inside, from the main thread; the previous ones
    (given as the context's value) after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield {}
        return
    previous = {s: signal.signal(s, h) for s, h in handlers.items()}
    try:
        yield previous
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


def exit_status(main) -> int:
    """``main()``'s exit status, where a reader that stopped reading (``leash reproduce --list |
    head``) ends the command quietly, as ``cat`` does, instead of a BrokenPipeError traceback:
    stdout is pointed at the null device, so the flush at exit cannot fail again, and the
    status is 141 (128 + SIGPIPE), what a shell reports for a command a pipe ended. Python's
    own recipe (the ``signal`` module's notes on SIGPIPE), which no library wraps.
    """
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    return code

