"""Imported by the fork server of the toolkit's worker pools, and only there (its preload,
:func:`leash_eval.processes.forkserver_context`: ``leash rescore``'s grading workers, ``leash
reproduce``'s notebook workers): the one traceback it would print is left out.

A worker the pool starts while the run is being stopped (Ctrl-C, SIGTERM) finds the pool's
semaphores already gone (pebble unlinks them before it ends its workers): unpickling its
arguments raises ``FileNotFoundError`` in ``multiprocessing.synchronize``, and the fork server
prints that traceback on the terminal after the run's own line ("leash rescore: interrupted").
Such a worker has nothing to do; every other error is printed as before. Hand-written:
multiprocessing has no option for it.
"""

from __future__ import annotations

import sys


def _from_semaphore_rebuild(tb) -> bool:
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "__setstate__" and code.co_filename.endswith("synchronize.py"):
            return True
        tb = tb.tb_next
    return False


def quiet_excepthook(kind, value, tb) -> None:
    """``sys.excepthook`` of the fork server's children: silent for a worker started after its
    pool was stopped, the default hook for anything else.
    """
    if isinstance(value, FileNotFoundError) and _from_semaphore_rebuild(tb):
        return
    sys.__excepthook__(kind, value, tb)


sys.excepthook = quiet_excepthook
