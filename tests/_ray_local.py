"""A local Ray for the tests (tests/test_ray.py) and the benchmark (benchmarks/bench_rescore.py)
(:func:`head`), and faults and slowness for the tests, installed in every worker process of the
test's Ray job (:func:`install`, a ``worker_process_setup_hook``): the tests drive leash's own
tasks, and a worker process cannot be patched from the test's process.

A response that contains a marker behaves so, wherever it is graded:

* ``[leash-test: sleep S]``: grading it takes S more seconds (a task stays busy);
* ``[leash-test: die]``: the worker process grading it is killed (SIGKILL), every time;
* ``[leash-test: die once PATH]``: killed the first time (PATH is created then), graded after.

And math-verify's comparison with the gold answer 31415926 takes 6 s, longer than its first time
limit (5 s: a SIGALRM interrupts it, as under load) and shorter than the retry's (30 s).

Outside a Ray worker nothing here runs: the markers are plain text to a grader.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SLOW_GOLD = "31415926"
#: How long a Ray head may take to start (a loaded machine takes minutes).
START_TIMEOUT = 300


@contextlib.contextmanager
def head(num_cpus: int = 2):
    """A Ray head node on this machine, ``num_cpus`` CPUs, no dashboard, its logs in a new
    temporary folder; yields its address (``RAY_ADDRESS``), ended with its processes on exit.

    ``ray start --head --block`` rather than ``ray.init()``: the agents' ports are given, so the
    raylet does not wait for them to write port files, and the head starts with a higher
    priority (put back once it runs, so that its workers have the usual one). Its raylet waits
    15 s (Ray's fixed limit) for the dashboard agent, whose imports take longer than that on a
    machine loaded by other work, and ``ray.init()`` gives up on the whole node after 30 s;
    token authentication is off (a cluster of this machine, for one test run).
    """
    tmp = tempfile.mkdtemp(prefix="ray-")  # short: Ray's sockets live there
    ports = {f"--{k}": _free_port() for k in (
        "port", "dashboard-agent-grpc-port", "dashboard-agent-listen-port",
        "metrics-export-port", "runtime-env-agent-port", "node-manager-port",
        "object-manager-port")}
    log = Path(tmp, "head.log")
    cmd = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
           f"--num-cpus={num_cpus}", "--include-dashboard=false", "--include-log-monitor=false",
           "--disable-usage-stats", f"--temp-dir={tmp}", *(f"{k}={v}" for k, v in ports.items())]
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    env.pop("RAY_ADDRESS", None)
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, preexec_fn=_higher_priority)
    try:
        end = time.monotonic() + START_TIMEOUT
        while "Ray runtime started" not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"the Ray head did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        with contextlib.suppress(OSError):  # the usual priority for what it starts from now on
            os.setpriority(os.PRIO_PGRP, proc.pid, 0)
        before = os.environ.get("RAY_AUTH_MODE")
        os.environ["RAY_AUTH_MODE"] = "disabled"  # this process connects without a token
        try:
            yield f"127.0.0.1:{ports['--port']}"
        finally:
            if before is None:
                os.environ.pop("RAY_AUTH_MODE", None)
            else:
                os.environ["RAY_AUTH_MODE"] = before
    finally:
        proc.terminate()  # the head ends every process of its node
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _higher_priority() -> None:
    """In the head's process before it runs: a higher priority, and (Linux) SIGTERM when the
    process that started it dies, so that a test run killed outright leaves no Ray behind (on
    SIGTERM the head ends its node's processes)."""
    with contextlib.suppress(OSError):  # not allowed: the usual priority
        os.nice(-5)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PDEATHSIG
_MARK = re.compile(r"\[leash-test: (sleep [0-9.]+|die once [^\]]+|die)\]")


def install() -> None:
    """Patch this worker process's grading (leash and math-verify) to honour the markers."""
    import math_verify.grader as mvg
    import sympy

    from leash_eval.rescore import graders

    real_grade, real_eq = graders._mv_grade, mvg.sympy_expr_eq

    def grade(response, gold, extract, limit=None):
        m = _MARK.search(response or "")
        if m is not None:
            what = m.group(1)
            if what.startswith("sleep"):
                time.sleep(float(what.split()[1]))
            elif what == "die":
                os.kill(os.getpid(), signal.SIGKILL)
            else:
                path = what.split(" ", 2)[2]
                if not os.path.exists(path):
                    open(path, "w").close()
                    os.kill(os.getpid(), signal.SIGKILL)
        return real_grade(response, gold, extract, limit)

    def slow_eq(gold, *args, **kw):
        if gold == sympy.Integer(int(SLOW_GOLD)):  # work, not a wait: the limits are CPU time
            t0 = time.process_time()
            while time.process_time() - t0 < 1.3:
                pass
        return real_eq(gold, *args, **kw)

    # limits of 1 s, then 3 s: the slow comparison times out once and is graded at the retry
    graders.TIME_LIMIT, graders.RETRY_LIMIT = 1, 3
    graders._mv_grade = grade
    mvg.sympy_expr_eq = slow_eq


def add_shared(shared: dict, x: int) -> int:
    """A task for the protocol's tests: ``x + shared["k"]``, finishing out of order."""
    time.sleep(0.05 * (x % 3))
    return x + shared["k"]
