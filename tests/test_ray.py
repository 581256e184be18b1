"""The Ray route (leash_eval.cluster, ``--cluster ray`` / ``ray://HOST:PORT``) on a real local Ray:
rescoring, partitioned summaries and generation (with the cpu-generate extra) write what one
process writes; math-verify's timeouts work in Ray's workers; a killed worker is retried, one
that always dies is reported with its batch named; Ctrl-C and SIGTERM leave no worker running
leash's tasks; an unreachable address is one line.

One Ray head of two CPUs for the module (tests/_ray_local.py: no dashboard, logs in a temporary
folder), ended at the end. Its workers run tests/_ray_local.py's hook: responses with a marker
sleep or kill their worker, and one gold answer makes math-verify's comparison slower than its
first time limit. Skipped, with the reason, without the ``ray`` extra.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import _ray_local
from _support import REPO, needs_mv, processes
from leash_eval import cluster
from leash_eval import rescore as rs
from leash_eval.cli import main
from leash_eval.processes import raise_terminated
from test_generate import _run, needs_model
from test_rescore_stream import HAND_CORRECT, HAND_NO_ANSWER, RECORDS, _evaluator_file

ray = pytest.importorskip("ray", reason="the ray extra (pip install -e '.[ray]')")
pytestmark = pytest.mark.slow  # each test starts or uses a Ray of its own

KW = dict(fmt="evaluator", model="m", benchmark="b", batch_size=7)


@pytest.fixture(scope="module")
def local_ray():
    """A Ray head of 2 CPUs on this machine, this process connected to it (``--cluster ray``
    uses that connection): its address."""
    from ray import cloudpickle  # Ray's own copy, which pickles the setup hook

    cloudpickle.register_pickle_by_value(_ray_local)  # the workers cannot import tests/
    with _ray_local.head(num_cpus=2) as address:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False,
                 runtime_env={"worker_process_setup_hook": _ray_local.install})
        try:
            yield address
        finally:
            ray.shutdown()


def _records(copies=10, **marked):
    """RECORDS ``copies`` times over (question ids 0..3*copies-1); ``marked``: response number
    -> text put before that response (a marker of _ray_local)."""
    out = [dict(r, idx=r["idx"] + 3 * k, code=list(r["code"])) for k in range(copies)
           for r in RECORDS]
    for i, text in marked.items():
        rec = out[int(i.lstrip("r")) // 4]
        rec["code"][int(i.lstrip("r")) % 4] = text + " " + rec["code"][int(i.lstrip("r")) % 4]
    return out


def _leash_tasks() -> list:
    """The processes running a task of leash (Ray titles them ``ray::leash:<function>``)."""
    return [line for line in processes() if " ray::leash:" in line]


def _gone(timeout=20.0) -> list:
    end = time.monotonic() + timeout
    while (left := _leash_tasks()) and time.monotonic() < end:
        time.sleep(0.1)
    return left


# ----------------------------------------------------------------------------- the protocol


def test_one_protocol_picks_the_engine_by_address(local_ray):
    assert [cluster.engine_of(a) for a in ("ray", "ray://h:10001", "tcp://h:8786", "h:8786")] \
        == ["Ray", "Ray", "Dask", "Dask"]
    consumed = []

    def items():
        for i in range(12):
            consumed.append(i)
            yield i, i

    with cluster.connected("ray") as on:
        assert (on.engine, on.slots()) == ("Ray", 2)
        shared = on.share({"k": 10})
        it = on.in_order(_ray_local.add_shared, items(), shared)
        first = next(it)
        assert first == (0, 10) and len(consumed) == 4  # two tasks per slot in flight
        assert [first, *it] == [(i, i + 10) for i in range(12)]  # in input order
    assert ray.is_initialized()  # a Ray the caller started is the caller's


# ----------------------------------------------------------------------------- rescoring


@needs_mv
def test_rescoring_on_ray_writes_the_local_bytes(local_ray, tmp_path):
    f = _evaluator_file(tmp_path / "eval.jsonl", _records())
    local = rs.rescore_file(f, tmp_path / "local.jsonl", jobs=1, **KW)
    on = rs.rescore_file(f, tmp_path / "ray.jsonl", cluster="ray", **KW)
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    rows = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == HAND_CORRECT * 10
    assert on.n_samples == local.n_samples == 120 and on.n_no_answer == 10 * HAND_NO_ANSWER
    assert on.table.equals(local.table)
    rs.rescore_file(f, tmp_path / "ray.parquet", cluster="ray", **KW)
    rs.rescore_file(f, tmp_path / "local.parquet", jobs=1, **KW)
    assert (tmp_path / "ray.parquet").read_bytes() == (tmp_path / "local.parquet").read_bytes()


@needs_mv
def test_math_verify_times_out_in_the_ray_workers(local_ray, tmp_path):
    """A comparison that outlasts math-verify's first limit is interrupted there (SIGALRM, in
    the worker's main thread), counted, and graded again with the longer one."""
    recs = _records(2)  # question 1: one response compared with the slow gold, three without
    recs[1] = dict(recs[1], gt=_ray_local.SLOW_GOLD, score=[True, False, False, False],
                   code=["so \\boxed{\\frac{62831852}{2}}", "I give up", "", "no idea"])
    f = _evaluator_file(tmp_path / "eval.jsonl", recs)
    local = rs.rescore_file(f, tmp_path / "local.jsonl", jobs=1, **KW)
    on = rs.rescore_file(f, tmp_path / "ray.jsonl", cluster="ray", **KW)
    assert (local.n_timeouts, on.n_timeouts, on.n_unresolved) == (0, 1, 0)
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()


@needs_mv
def test_a_killed_worker_is_retried_and_the_bytes_are_the_same(local_ray, tmp_path):
    once = tmp_path / "killed-once"
    f = _evaluator_file(tmp_path / "eval.jsonl", _records(**{"r20": f"[leash-test: die once "
                                                                       f"{once}]"}))
    rs.rescore_file(f, tmp_path / "local.jsonl", jobs=1, **KW)
    rs.rescore_file(f, tmp_path / "ray.jsonl", cluster="ray", **KW)
    assert once.exists()  # a worker was killed grading that batch
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()


@needs_mv
def test_a_batch_whose_worker_always_dies_is_named(local_ray, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cluster, "RAY_RETRIES", 1)
    f = _evaluator_file(tmp_path / "eval.jsonl", _records(**{"r20": "[leash-test: die]"}))
    out = tmp_path / "o.jsonl"
    code = main(["-q", "rescore", str(f), "--fmt", "evaluator", "--model", "m", "--benchmark",
                 "b", "--batch-size", "7", "--cluster", "ray", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    # sample 20 is in the batch of samples 14-20 of the file: named, with the attempts
    assert f"{f}: the batch of samples 14-20" in err and "2 attempt(s)" in err, err
    assert not out.exists() and not list(tmp_path.glob(".o.jsonl*"))


@needs_mv
@pytest.mark.parametrize(("signum", "code", "word"), [(signal.SIGINT, 130, "interrupted"),
                                                      (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_and_sigterm_leave_no_worker_running_leash_tasks(local_ray, tmp_path, capsys,
                                                                signum, code, word):
    f = _evaluator_file(tmp_path / "eval.jsonl", _records(
        **{f"r{i}": "[leash-test: sleep 60]" for i in (0, 7, 14, 21)}))
    out = tmp_path / "o.jsonl"

    def stop_once_busy():
        end = time.monotonic() + 120
        while len(_leash_tasks()) < 2 and time.monotonic() < end:
            time.sleep(0.05)
        os.kill(os.getpid(), signum)

    previous = signal.signal(signal.SIGTERM, raise_terminated)  # as the leash command has it
    try:
        threading.Thread(target=stop_once_busy, daemon=True).start()
        got = main(["-q", "rescore", str(f), "--fmt", "evaluator", "--model", "m",
                    "--benchmark", "b", "--batch-size", "7", "--cluster", "ray", "--out",
                    str(out)])
    finally:
        signal.signal(signal.SIGTERM, previous)
    err = capsys.readouterr().err
    assert (got, err) == (code, f"leash rescore: {word}\n")
    assert not out.exists() and not list(tmp_path.glob(".o.jsonl*"))
    # the driver is still connected (this process): the tasks were cancelled, not the job
    assert ray.is_initialized() and _gone() == []


def test_an_unreachable_address_is_one_line(local_ray, capsys, tmp_path):
    with socket.socket() as s:  # a port where nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "q",
                             "sample_idx": 0, "correct": True}) + "\n")
    for address, part in ((f"ray://127.0.0.1:{port}", "names no reachable Ray cluster"),
                          ("ray://nowhere", "names no host and port")):
        t0 = time.monotonic()
        code = main(["-q", "summarize", str(f), "--cluster", address])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "--cluster" in err and part in err, err
        assert address in err and time.monotonic() - t0 < 30


# ----------------------------------------------------------------------------- summaries

def _partitions(folder: Path) -> Path:
    """Two models' samples of three questions in four Parquet partitions, as a batch job writes
    them: a question's samples split over partitions, ``sample_idx`` global, the later samples
    of rl's question q0 in an earlier partition than its first ones; and the files a job
    leaves beside them (``_SUCCESS``, hidden checksums), which are not partitions."""
    rng = np.random.default_rng(7)
    folder.mkdir()

    def rows(model, q, idx, correct):
        n = len(idx)
        return {"model": [model] * n, "benchmark": ["math"] * n, "question_id": [q] * n,
                "sample_idx": list(idx), "correct": correct,
                "answer": [str(int(x)) for x in rng.integers(0, 4, n)],
                "n_tokens": [int(x) for x in rng.integers(10, 500, n)],
                "token_entropy": [float(x) for x in rng.random(n)],
                "finish_reason": ["length" if x < 0.2 else "stop" for x in rng.random(n)]}

    F, T = False, True
    parts = {
        "part-0.parquet": [rows("base", "q0", range(4), [F, F, F, F]),
                           rows("base", "q1", range(8), [F, F, F, F, F, F, T, F]),
                           rows("rl", "q0", range(4, 8), [F, T, F, T])],
        "part-1.parquet": [rows("base", "q0", range(4, 8), [F, T, F, T]),
                           rows("base", "q2", range(4), [F, F, T, F])],
        "part-2.parquet": [rows("rl", "q0", range(4), [F, F, F, F]),
                           rows("base", "q2", range(4, 8), [T, F, F, F])],
        "part-10.parquet": [rows("rl", "q1", range(8), [T] * 8)]}
    for name, chunks in parts.items():
        table = pa.concat_tables([pa.table(c) for c in chunks])
        pq.write_table(table, folder / name, row_group_size=5)
    (folder / "_SUCCESS").write_text("")
    (folder / ".part-0.parquet.crc").write_text("")
    return folder


def _same_summary(a: Path, b: Path) -> None:
    """Two summary files are one process's: the same bytes, or (where DuckDB's parallel float
    sums took another order, which one process does against itself from run to run) every
    column, the provenance and the row order the same and the token entropy's mean and standard
    deviation within a few ulps."""
    if a.read_bytes() == b.read_bytes():
        return
    x, y = pq.read_table(a), pq.read_table(b)
    assert x.schema.metadata == y.schema.metadata and x.column_names == y.column_names
    for name in x.column_names:
        if name in ("token_entropy_mean", "token_entropy_std"):
            np.testing.assert_allclose(x[name].to_numpy(zero_copy_only=False),
                                       y[name].to_numpy(zero_copy_only=False), rtol=1e-14)
        else:
            assert x[name].equals(y[name]), name


def _summarize(capsys, *argv):
    """``leash -q summarize ARGV``: exit status, stderr and its warning lines."""
    code = main(["-q", "summarize", *argv])
    err = capsys.readouterr().err
    return code, err, [line for line in err.splitlines() if ": warning: " in line]


def test_a_folder_of_partitions_is_summarized_on_ray_as_in_one_process(local_ray, tmp_path,
                                                                      capsys):
    folder = _partitions(tmp_path / "rollouts")
    code, err, _ = _summarize(capsys, str(folder), "--out", str(tmp_path / "one.parquet"))
    assert code == 0, err
    code, err, warned = _summarize(capsys, str(folder), "--cluster", "ray", "--out",
                                   str(tmp_path / "ray.parquet"))
    assert code == 0 and not warned and err == "", (err, warned)  # read on the cluster
    _same_summary(tmp_path / "ray.parquet", tmp_path / "one.parquet")
    from leash_eval.summarize import read_summary

    s = read_summary(tmp_path / "ray.parquet").set_index(["model", "question_id"])
    # first_correct is a place in the question's sample order over every partition
    assert s.loc[("base", "q0"), ["n", "c", "first_correct"]].tolist() == [8, 2, 5]
    assert s.loc[("rl", "q0"), ["n", "c", "first_correct"]].tolist() == [8, 2, 5]
    assert s.loc[("base", "q2"), ["n", "c", "first_correct"]].tolist() == [8, 2, 2]
    assert s.loc[("base", "q1"), "first_correct"] == 6 and s.loc[("rl", "q1"), "c"] == 8
    files = [Path(f["path"]).name for f in s.attrs["provenance"]["files"]]
    assert files == ["part-0.parquet", "part-1.parquet", "part-2.parquet", "part-10.parquet"]


def test_seed_files_without_sample_indices_follow_each_other_on_ray(local_ray, tmp_path,
                                                                    capsys):
    """Evaluator files (a list per question, no index): a later file's samples come after an
    earlier file's, so a worker's list positions are shifted here by what came before."""
    seed0 = [dict(r, score=[False] * 4) if r["idx"] == 0 else r for r in RECORDS]
    seed1 = [dict(r, score=[False, True, False, False]) if r["idx"] == 0 else r
             for r in RECORDS]
    a = _evaluator_file(tmp_path / "seed0.jsonl", seed0)
    b = _evaluator_file(tmp_path / "seed1.jsonl", seed1)
    opts = ["--fmt", "evaluator", "--model", "m", "--benchmark", "b"]
    _summarize(capsys, str(a), str(b), *opts, "--out", str(tmp_path / "one.parquet"))
    code, err, warned = _summarize(capsys, str(a), str(b), *opts, "--cluster", "ray", "--out",
                                   str(tmp_path / "ray.parquet"))
    assert code == 0 and not warned, (err, warned)
    _same_summary(tmp_path / "ray.parquet", tmp_path / "one.parquet")
    t = pq.read_table(tmp_path / "ray.parquet").to_pydict()
    assert (t["n"][0], t["c"][0], t["first_correct"][0]) == (8, 1, 5)


@pytest.mark.parametrize(("damage", "why"), [
    ("bad_row", "rows the rules reject"),
    ("duplicate", "is in an earlier input too"),
    ("gap", "gaps in a question's sample indices")])
def test_what_only_one_process_can_tell_apart_is_read_there(local_ray, tmp_path, capsys,
                                                           damage, why):
    folder = _partitions(tmp_path / "rollouts")
    t = pq.read_table(folder / "part-2.parquet").to_pydict()
    if damage == "bad_row":
        t["sample_idx"][0] = -1
    elif damage == "duplicate":
        t["sample_idx"][0] = 4  # rl q0 sample 4 is in part-0 already
    else:  # rl q0 sample 3 is lost: each partition's indices run on, all of them do not
        t = {k: v[:3] + v[4:] for k, v in t.items()}
    pq.write_table(pa.table(t), folder / "part-2.parquet")
    code, err, _ = _summarize(capsys, str(folder), "--on-error", "skip", "--out",
                              str(tmp_path / "one.parquet"))
    assert code == 0, err
    code, err, warned = _summarize(capsys, str(folder), "--on-error", "skip", "--cluster",
                                   "ray", "--out", str(tmp_path / "ray.parquet"))
    # one warning: why every input is read here; and the rejected row's own, as without --cluster
    assert code == 0 and len(warned) == 1 + (damage != "gap") and why in warned[0], err
    assert "summarized in this process" in warned[0] and err.count("\n") == len(warned), err
    _same_summary(tmp_path / "ray.parquet", tmp_path / "one.parquet")


def test_an_unreadable_partition_is_the_same_one_line_error(local_ray, tmp_path, capsys):
    folder = _partitions(tmp_path / "rollouts")
    (folder / "part-1.parquet").write_bytes(b"PAR1 this is not a Parquet file PAR1")
    code, one, _ = _summarize(capsys, str(folder))
    code_ray, on_ray, _ = _summarize(capsys, str(folder), "--cluster", "ray")
    assert code == code_ray == 2 and on_ray == one and one.count("\n") == 1, (one, on_ray)
    assert "part-1.parquet" in one


# ----------------------------------------------------------------------------- generation


@needs_model
def test_generating_on_ray_writes_the_local_file(local_ray, tmp_path):
    """`leash generate --cluster ray`: each Ray worker opens the model once and samples its
    chunks; every sample has its own seed, so the file is the local run's."""
    import pandas as pd

    from leash_eval.generate.backends import LlamaCpp

    smol = LlamaCpp("smollm2", n_ctx=256)  # as test_generate.py's real-model tests

    kw = {"label": "smol", "benchmark": "toy", "k": 2, "temperature": 0.8, "max_tokens": 8,
          "flush_every": 2, "backend": smol}
    _run(tmp_path, "local.parquet", **kw)
    r, _ = _run(tmp_path, "ray.parquet", cluster="ray", **kw)
    assert r["finished"] and r["generated"] == 6
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "local.parquet"),
                                  pd.read_parquet(tmp_path / "ray.parquet"))


# ----------------------------------------------------------------------------- other drivers


def _python(code: str, env: dict, timeout=240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, **env}, timeout=timeout)


@needs_mv
def test_another_process_joins_the_ray_at_RAY_ADDRESS(local_ray, tmp_path):
    """A second driver (a ``leash`` command) with ``--cluster ray`` and RAY_ADDRESS joins this
    cluster, keeps its SIGTERM handler (Ray's would exit without cleanup) and writes the local
    bytes; its leaving ends nothing of the cluster."""
    f = _evaluator_file(tmp_path / "eval.jsonl", _records())
    rs.rescore_file(f, tmp_path / "local.jsonl", jobs=1, **KW)
    code = f"""
import os, signal, sys, time
from leash_eval import cluster
from leash_eval.cli import main
from leash_eval.processes import Terminated, raise_terminated
signal.signal(signal.SIGTERM, raise_terminated)
with cluster.connected("ray") as on:
    assert (on.engine, on.slots()) == ("Ray", 2)
    try:  # Ray's own handler would exit at once, without the command's cleanup
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
        sys.exit("SIGTERM did not raise Terminated")
    except Terminated:
        pass
assert signal.getsignal(signal.SIGTERM) is raise_terminated
sys.exit(main(["-q", "rescore", {str(f)!r}, "--fmt", "evaluator", "--model", "m",
               "--benchmark", "b", "--batch-size", "7", "--cluster", "ray",
               "--out", {str(tmp_path / "cli.jsonl")!r}]))
"""
    proc = _python(code, {"RAY_ADDRESS": local_ray})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "cli.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert ray.cluster_resources().get("CPU") == 2


@needs_mv
def test_ray_client_at_a_ray_address(local_ray, tmp_path):
    """``--cluster ray://HOST:PORT``: Ray Client, through a client server of this cluster."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "ray.util.client.server", f"--address={local_ray}",
         "--host=127.0.0.1", f"--port={port}", "--mode=legacy"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        f = _evaluator_file(tmp_path / "eval.jsonl", _records())
        rs.rescore_file(f, tmp_path / "local.jsonl", jobs=1, **KW)
        folder = _partitions(tmp_path / "rollouts")
        main(["-q", "summarize", str(folder), "--out", str(tmp_path / "one.parquet")])
        address = f"ray://127.0.0.1:{port}"
        code = f"""
import sys, time
from leash_eval.cli import main
# the client server takes a while to listen
for _ in range(300):
    try:
        __import__("socket").create_connection(("127.0.0.1", {port}), 1).close()
        break
    except OSError:
        time.sleep(0.2)
sys.exit(main(["-q", "rescore", {str(f)!r}, "--fmt", "evaluator", "--model", "m",
               "--benchmark", "b", "--batch-size", "7", "--cluster", {address!r},
               "--out", {str(tmp_path / "client.jsonl")!r}])
         or main(["-q", "summarize", {str(folder)!r}, "--cluster", {address!r},
                  "--out", {str(tmp_path / "client.parquet")!r}]))
"""
        proc = _python(code, {})
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert (tmp_path / "client.jsonl").read_bytes() == \
            (tmp_path / "local.jsonl").read_bytes()
        _same_summary(tmp_path / "client.parquet", tmp_path / "one.parquet")
    finally:
        server.terminate()
        server.wait(30)
