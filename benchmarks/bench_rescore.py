r"""Benchmark: rescoring throughput, per core and on every core, by response length.

Three routes grade the same responses against the same gold answers, each in a fresh process
(so that no route profits from another's math-verify caches or imports), after a warm-up on
other text in that process:

* raw   : ``math_verify.verify(parse(gold), parse(response))`` in a loop: the baseline, what
          grading costs at least;
* 1 core: ``leash_eval.rescore.rescore_file(..., jobs=1)``: read the file, grade, count, write the
          rescored Parquet file;
* all   : the same with ``jobs=`` every usable core (worker processes);
* cluster: the same on a local Dask cluster (``cluster=``: one worker process per usable core,
          one thread each), started in that process before the clock starts (skipped without
          the cluster extra);
* ray   : the same on a local Ray of every usable core (``cluster="ray"``, the route of
          ``--cluster ray``), its head started before the clock (tests/_ray_local.head), with
          the CPU time of the whole process tree (driver, raylet, workers) beside the wall time
          (skipped without the ray extra).

Then the cost of one task on each engine: 400 tasks that do nothing through
``leash_eval.cluster``'s window (submit, schedule, run, return, in order), wall and CPU time per
task: what a cluster adds to each batch whatever its size.

Responses, by length: **short** (~300 characters), **median** (a chain-of-thought response as
it is) and **long** (~29,000 characters). With the data mirror (``LEASH_DATA_MIRROR``, dataset
``math-eval-example-cot100``: 100 MATH problems x 8 chain-of-thought responses of a Qwen2.5-Math
instruct model, from the limit-of-RLVR evaluator) they are real: the median bucket is the 800
responses as written; the short bucket the last ~300 characters of each (cut at a line start,
so the final answer stays); the long bucket, per question, its responses one after the other
until 29,000 characters, ending with one whole response. Without the mirror the responses are
synthetic (arithmetic steps and a final ``\boxed{}``), which the output says.

Each route first runs once untimed and the routes' verdicts are compared sample by sample (the
benchmark stops if any differs); then the repetitions, interleaved; medians are reported.

Then the peak RSS of grading the 800 median responses and ten times as many (leash, and
math-verify's loop alone), and ``leash rescore`` as a user runs it, cold (start-up included),
with ``--jobs 1``, every core and the default ``--jobs``, on 800, 2,400 and 24,000 median
responses: wall and CPU time (the default must cost no more CPU than one process unless it
gains time). The lines starting with RATIO are gathered by ``benchmarks/run.py``.

Usage::

    python benchmarks/bench_rescore.py               # 3 repetitions of every measurement
    python benchmarks/bench_rescore.py --quick       # 1 repetition, fewer long responses
    python benchmarks/bench_rescore.py --sizes-only  # only the cold runs by size
    python benchmarks/bench_rescore.py --quick --routes raw,one,all,ray   # some routes only
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench" / "rescore"
DATASET = "math-eval-example-cot100"
LONG_CHARS = 29_000
SHORT_CHARS = 300


# ----------------------------------------------------------------------------- responses


def _real_rows():
    """``[(question, gold, [responses])]`` from the mirror, or None."""
    from leash_eval import manifest as mf

    try:
        path = mf.locate(DATASET)
    except (ValueError, OSError):
        return None
    if path is None:
        return None
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            rows.append((str(rec["idx"]), str(rec["gt"]), list(rec["code"])))
    return rows


def _synthetic_rows(n_questions=100, per_question=8, seed=0):
    rng = random.Random(seed)
    rows = []
    for q in range(n_questions):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        gold = str(a * b)
        resps = []
        for _ in range(per_question):
            steps = [f"Step {k + 1}: we compute ${rng.randint(1, 999)} + {rng.randint(1, 999)}"
                     f" = {rng.randint(1, 2000)}$, which we keep for later." for k in
                     range(rng.randint(8, 30))]
            answer = gold if rng.random() < 0.6 else str(a * b + rng.randint(1, 9))
            resps.append("\n\n".join(steps) + f"\n\nTherefore ${a} \\times {b} = {answer}$, and "
                         f"the answer is $\\boxed{{{answer}}}$.")
        rows.append((str(q), gold, resps))
    return rows


def _tail(text: str, chars: int) -> str:
    """The last ``chars`` characters of a response, from a line start when there is one."""
    if len(text) <= chars:
        return text
    cut = text[-chars:]
    nl = cut.find("\n")
    return cut[nl + 1:] if 0 <= nl < chars // 2 else cut


def buckets(rows, n_long: int) -> dict[str, list[tuple[str, str, str]]]:
    """bucket -> ``[(question_id, gold, response)]``."""
    median = [(q, g, r) for q, g, resps in rows for r in resps]
    short = [(q, g, _tail(r, SHORT_CHARS)) for q, g, r in median]
    long = []
    for q, g, resps in rows:
        # distinct long texts: each starts at another response of its question
        for start in range(len(resps)):
            parts, size, k = [], 0, start
            last = resps[(start + len(resps) - 1) % len(resps)]
            while size + len(last) < LONG_CHARS:
                part = resps[k % len(resps)]
                parts.append(part)
                size += len(part) + 2
                k += 1
            parts.append(last)
            long.append((q, g, "\n\n".join(parts)))
            if len(long) >= n_long:
                break
        if len(long) >= n_long:
            break
    return {"short": short, "median": median, "long": long}


def write_bucket(path: Path, items) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(items)
    # question ids are per response, each with its own gold: no question is graded twice
    pq.write_table(pa.table({
        "model": ["bench"] * n, "benchmark": ["math"] * n,
        "question_id": [str(i) for i in range(n)], "sample_idx": [0] * n,
        "correct": pa.nulls(n, pa.bool_()), "response": [r for _, _, r in items],
        "gold": [g for _, g, _ in items],
    }), path)


# ----------------------------------------------------------------------------- one route


def _warm_up(route: str, jobs: int, cluster=None) -> None:
    """Imports, compiled regexes and (for ``all``) the fork server, on text not measured."""
    import math_verify as mv

    from leash_eval import rescore as rs

    warm = [(str(i), str(i + 1), f"so the sum is $\\boxed{{{i + 1}}}$") for i in range(4 * jobs)]
    if route == "raw":
        for _, g, r in warm:
            mv.verify(mv.parse(f"${g}$"), mv.parse(r))
        return
    path = BUILD / f"warm-{os.getpid()}.parquet"
    write_bucket(path, warm)
    rs.rescore_file(path, None, fmt="samples", jobs=jobs, batch_size=2, cluster=cluster)
    path.unlink()


def _local_cluster(jobs: int):
    """A Dask cluster on this machine: ``jobs`` worker processes of one thread, non-daemonic
    (so that they may start the grading processes, as the README says to start workers)."""
    import logging

    import dask
    import distributed

    with dask.config.set({"distributed.worker.daemon": False}):
        return distributed.LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.ERROR)


@contextlib.contextmanager
def _local_ray(jobs: int):
    """A Ray of ``jobs`` CPUs on this machine, this process connected (``--cluster ray`` uses
    that connection): the head of the tests (tests/_ray_local.py), which starts on a loaded
    machine too."""
    import logging

    import ray

    sys.path.insert(0, str(ROOT / "tests"))
    import _ray_local

    with _ray_local.head(num_cpus=jobs) as address:
        ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        try:
            yield "ray"
        finally:
            ray.shutdown()


def _tree_cpu() -> float | None:
    """CPU seconds of this process and every live descendant (a Ray's raylet and workers), or
    None without psutil."""
    try:
        import psutil
    except ImportError:
        return None
    me = psutil.Process()
    total = 0.0
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def run_route(route: str, path: Path, jobs: int, batch_size: int) -> dict:
    """Time one route on one bucket file (in this process); ``{"n", "seconds"}``."""
    with contextlib.ExitStack() as stack:
        if route == "ray":
            address = stack.enter_context(_local_ray(jobs))
        elif route == "cluster":
            address = stack.enter_context(contextlib.closing(_local_cluster(jobs)))
            address = address.scheduler_address
        else:
            address = None
        return _timed_route(route, path, jobs, batch_size, address)


def _timed_route(route: str, path: Path, jobs: int, batch_size: int, address) -> dict:
    import time

    import pyarrow.parquet as pq

    from leash_eval import rescore as rs

    _warm_up(route, jobs, address)
    if route == "raw":
        import math_verify as mv

        t = pq.read_table(path, columns=["response", "gold"]).to_pydict()
        pairs = list(zip(t["gold"], t["response"]))
        t0, c0 = time.perf_counter(), _cpu()
        verdicts = []
        for g, r in pairs:
            gold = g if ("$" in g or "\\boxed" in g) else f"${g}$"
            verdicts.append(bool(mv.verify(mv.parse(gold), mv.parse(r))))
        seconds = time.perf_counter() - t0
        return {"n": len(pairs), "seconds": seconds, "cpu": _cpu() - c0,
                "verdicts": _packed(verdicts), "peak": _peak_mb()}
    out = BUILD / f"out-{os.getpid()}.parquet"
    import resource

    tree0 = _tree_cpu() if route == "ray" else None
    self0 = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    t0, c0 = time.perf_counter(), _cpu()
    rep = rs.rescore_file(path, out, fmt="samples", jobs=jobs, batch_size=batch_size,
                          cluster=address)
    seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    driver = sum(resource.getrusage(resource.RUSAGE_SELF)[:2]) - self0
    if tree0 is not None:  # the workers are alive: their CPU is read, not reaped
        cpu = _tree_cpu() - tree0
    verdicts = pq.read_table(out, columns=["correct"]).column("correct").to_pylist()
    out.unlink()
    return {"n": rep.n_samples, "seconds": seconds, "cpu": cpu, "driver": driver,
            "verdicts": _packed(bool(v) for v in verdicts), "peak": _peak_mb()}


def _nothing(x):
    return x


def task_overhead(engine: str, jobs: int, n: int = 400) -> dict:
    """``n`` tasks that return their argument through leash_eval.cluster's window on a local
    ``engine`` of ``jobs`` slots (warm: its workers ran one round already): wall and CPU
    seconds per task (CPU of the whole process tree; None without psutil)."""
    import time

    from leash_eval.cluster import connected

    with contextlib.ExitStack() as stack:
        if engine == "Ray":
            address = stack.enter_context(_local_ray(jobs))
        else:
            address = stack.enter_context(contextlib.closing(_local_cluster(jobs)))
            address = address.scheduler_address
        with connected(address) as on:
            items = [(i, i) for i in range(n)]
            list(on.in_order(_nothing, items[: 4 * jobs]))  # workers up, function shipped
            tree0 = _tree_cpu()
            t0 = time.perf_counter()
            got = [x for _, x in on.in_order(_nothing, items)]
            wall = time.perf_counter() - t0
            tree = _tree_cpu()
    assert got == list(range(n))
    return {"engine": engine, "n": n, "wall": wall / n,
            "cpu": (tree - tree0) / n if tree0 is not None else None}


def _peak_mb() -> float:
    """This process's peak resident set in MB (VmHWM; ru_maxrss would count the peak of the
    process that started it: Linux keeps it across exec), NaN where there is no /proc."""
    try:
        with open("/proc/self/status") as fh:
            return int(re.search(r"VmHWM:\s+(\d+)", fh.read()).group(1)) / 1024
    except OSError:
        return float("nan")


def _packed(verdicts) -> str:
    """Per-sample verdicts in order as a string of 0 and 1 (compared between routes)."""
    return "".join("1" if v else "0" for v in verdicts)


# ----------------------------------------------------------------------------- memory


def run_memory(rows) -> dict:
    """Peak RSS of grading the 800 median responses and ten times as many (the same texts under
    other question ids), one process each (jobs 1), leash against math-verify's loop alone:
    memory bounded by the batch, not by the file. Returns ``{route: (1x MB, 10x MB)}``."""
    median = buckets(rows, 0)["median"]
    out = {}
    for route in ("raw", "leash"):
        peaks = []
        for times in (1, 10):
            items = [median[i % len(median)] for i in range(times * len(median))]
            path = BUILD / f"memory-{times}x.parquet"
            write_bucket(path, items)
            proc = subprocess.run([sys.executable, __file__, "--_route", route, str(path), "1",
                                   "100"], capture_output=True, text=True, cwd=ROOT)
            if proc.returncode:
                sys.stderr.write(proc.stderr)
                raise SystemExit(1)
            peaks.append(json.loads(proc.stdout.strip().splitlines()[-1])["peak"])
            path.unlink()
        out[route] = tuple(peaks)
    print(f"\npeak RSS grading {len(median):,} and {10 * len(median):,} median responses "
          f"(one process, batches of 100): leash {out['leash'][0]:.0f} -> "
          f"{out['leash'][1]:.0f} MB, math-verify's loop alone {out['raw'][0]:.0f} -> "
          f"{out['raw'][1]:.0f} MB")
    return out


# ----------------------------------------------------------------------------- sizes, cold

SIZES = (800, 2_400, 24_000)


def run_sizes(rows, all_jobs: int, quick: bool) -> dict:
    """``leash rescore FILE --out OUT`` as a user runs it, cold (a fresh process: imports, the
    fork server and the workers' start-up are in the time), with ``--jobs 1``, ``--jobs`` every
    core and the default, on 800, 2,400 and 24,000 responses (the 800 median responses, repeated
    with other question ids beyond 800). Wall time and CPU time (this process's children: the
    command and its workers).
    """
    import resource
    import time

    _adopt_orphans()
    median = buckets(rows, 0)["median"]
    leash = str(Path(sys.executable).with_name("leash"))
    sizes = SIZES[:2] if quick else SIZES
    print(f"\nleash rescore, cold (a fresh process each, start-up included): wall / CPU seconds "
          f"(CPU: the command and its workers); default = no --jobs (one process, and "
          f"{all_jobs} workers once grading took longer than starting them)")
    header = (f"{'n':>6}  {'--jobs 1':>15}  {'--jobs ' + str(all_jobs):>15}  {'default':>15}  "
              f"{'all / 1 CPU (wall)':>18}  {'default / 1 CPU (wall)':>22}")
    print(header)
    print("-" * len(header))
    ratios = {}
    for n in sizes:
        items = [median[i % len(median)] for i in range(n)]
        path = BUILD / f"size-{n}.parquet"
        write_bucket(path, items)
        out = BUILD / f"size-{n}-out.parquet"
        got = {}
        for label, extra in (("one", ["--jobs", "1"]), ("all", ["--jobs", str(all_jobs)]),
                             ("default", [])):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run([leash, "-q", "rescore", str(path), "--out", str(out), *extra],
                                  capture_output=True, text=True, cwd=ROOT)
            wall = time.perf_counter() - t0
            _reap()  # the fork server and its workers, re-parented here: their CPU counts too
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode:
                sys.stderr.write(proc.stderr)
                raise SystemExit(1)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            got[label] = (wall, cpu, out.read_bytes())
        if len({v[2] for v in got.values()}) != 1:
            print(f"bench_rescore: --jobs changed the output at n = {n}", file=sys.stderr)
            raise SystemExit(1)
        out.unlink()
        path.unlink()
        cell = {k: f"{w:.1f} / {c:.1f}" for k, (w, c, _) in got.items()}
        ratio = {k: (got[k][1] / got["one"][1], got[k][0] / got["one"][0])
                 for k in ("all", "default")}
        ratios[n] = ratio["default"]
        print(f"{n:>6,}  {cell['one']:>15}  {cell['all']:>15}  {cell['default']:>15}  "
              f"{ratio['all'][0]:>11.2f} ({ratio['all'][1]:.2f})  "
              f"{ratio['default'][0]:>15.2f} ({ratio['default'][1]:.2f})", flush=True)
    return ratios


def _adopt_orphans() -> None:
    """Become the Linux subreaper of the commands run: descendants whose parent ends (the fork
    server of ``leash rescore`` and its workers) are re-parented here, so that waiting for them
    adds their CPU time to RUSAGE_CHILDREN."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _reap(timeout: float = 30.0) -> None:
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.05)


# ----------------------------------------------------------------------------- the report


def _cpu() -> float:
    """CPU seconds (user + system) of this process and of its children that have ended (the
    worker processes, once their pool is shut down; a worker still alive is not counted yet).
    """
    import resource

    return sum(t for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for t in resource.getrusage(who)[:2])


def _rate(results, key="seconds"):
    rates = [r["n"] / r[key] for r in results if r.get(key)]
    return (statistics.median(rates), min(rates), max(rates)) if rates else (float("nan"),) * 3


def _fmt(med, lo, hi):
    return f"{med:,.0f} ({lo:,.0f}-{hi:,.0f})" if hi > lo else f"{med:,.0f}"


def _cluster_cells(res: dict, every) -> str:
    """The table's cells of the cluster routes: samples/s, against every core; for Ray also
    the CPU per sample of the whole tree (driver, raylet, workers) beside one process's."""
    on = _rate(res["cluster"]) if res.get("cluster") else None
    tail = (f"  {_fmt(*on):>20}  {on[0] / every[0]:>13.2f}" if on else
            f"  {'(no cluster extra)':>20}  {'':>13}")
    if not res.get("ray"):
        return tail + f"  {'(no ray extra)':>20}"
    ray_rate = _rate(res["ray"])
    cpu = [r["cpu"] / r["n"] for r in res["ray"] if r.get("cpu") is not None]
    driver = statistics.median(r["driver"] / r["n"] for r in res["ray"])
    one_cpu = statistics.median(r["cpu"] / r["n"] for r in res["one"])
    return tail + (f"  {_fmt(*ray_rate):>20}  {ray_rate[0] / every[0]:>9.2f}  "
                   f"{(statistics.median(cpu) * 1e3 if cpu else float('nan')):>11.2f} ms  "
                   f"{driver * 1e3:>6.2f} ms  {one_cpu * 1e3:>14.2f} ms")


def _engines(have: dict, routes) -> list:
    """The cluster engines installed (and asked for by ``--routes``, when given)."""
    return [e for e, k in (("Dask", "cluster"), ("Ray", "ray")) if have[k] and (
        not routes or k in routes.split(","))]


def _print_overheads(engines, jobs: int) -> int:
    """The cost of one task on each engine (:func:`task_overhead`, each in a fresh process)."""
    if not engines:
        return 0
    print(f"\none task on a local cluster of {jobs} slots (400 tasks that return their "
          "argument, through leash_eval.cluster's in-order window; warm workers): wall and "
          "CPU (the whole process tree) per task")
    for engine in engines:  # none: nothing printed but the heading
        proc = subprocess.run([sys.executable, __file__, "--_overhead", engine, str(jobs)],
                              capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            sys.stderr.write(proc.stderr)
            return 1
        o = json.loads(proc.stdout.strip().splitlines()[-1])
        cpu = f"{o['cpu'] * 1e3:.2f} ms" if o["cpu"] is not None else "n/a (no psutil)"
        print(f"  {engine:<5} wall {o['wall'] * 1e3:7.2f} ms   CPU {cpu}")
    return 0


def _print_ratio_lines(ratios: dict, mem: dict, sizes: dict) -> None:
    """The RATIO lines benchmarks/run.py gathers: grading against bare math-verify, memory of a
    10x file against the 1x file, the default --jobs against --jobs 1."""
    for name, (cpu, wall) in ratios.items():
        print(f"RATIO grading ({name} responses, 1 core) / bare math-verify parse+verify: "
              f"{cpu:.2f} CPU, {wall:.2f} wall")
    grow = mem["leash"][1] / mem["leash"][0]
    print(f"RATIO grading peak RSS, a 10x file / the 1x file: {grow:.2f}"
          f" ({mem['leash'][0]:.0f} -> {mem['leash'][1]:.0f} MB; math-verify alone "
          f"{mem['raw'][0]:.0f} -> {mem['raw'][1]:.0f} MB)")
    for n, (cpu, wall) in sizes.items():
        print(f"RATIO leash rescore default --jobs / --jobs 1 at {n:,} responses: {cpu:.2f} "
              f"CPU, {wall:.2f} wall")


def _rows_and_source():
    """The responses graded (real ones from the data mirror, else synthetic) and their story."""
    rows = _real_rows()
    if rows is None:
        return _synthetic_rows(), (
            "synthetic responses (arithmetic steps and a final \\boxed{}): no data mirror; "
            f"set LEASH_DATA_MIRROR for the real {DATASET}")
    return rows, (f"real MATH chain-of-thought responses ({DATASET}, 100 problems x 8, "
                  "Qwen2.5-Math instruct, from the data mirror); short = their last ~300 "
                  "characters, long = responses of one question joined to ~29k characters")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", "--small", action="store_true",
                    help="one repetition, 40 long responses")
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 3; 1 quick)")
    ap.add_argument("--routes", default=None, help="comma-separated routes to run: raw, one, "
                    "all, cluster, ray (default: every one whose extra is installed)")
    ap.add_argument("--_route", nargs=4, help=argparse.SUPPRESS)  # ROUTE FILE JOBS BATCH
    ap.add_argument("--_overhead", nargs=2, help=argparse.SUPPRESS)  # ENGINE JOBS
    ap.add_argument("--sizes-only", action="store_true",
                    help="only the cold runs of leash rescore at 800, 2,400 and 24,000")
    args = ap.parse_args(argv)
    if args._route:
        route, path, jobs, batch = args._route
        print(json.dumps(run_route(route, Path(path), int(jobs), int(batch))))
        return 0
    if args._overhead:
        print(json.dumps(task_overhead(args._overhead[0], int(args._overhead[1]))))
        return 0
    try:
        import math_verify  # noqa: F401
    except ImportError:
        print("bench_rescore: math-verify is not installed (pip install 'leash[verify]'); "
              "skipped")
        return 0
    from leash_eval.rescore import default_jobs

    reps = args.reps or (1 if args.quick else 3)
    n_long = 40 if args.quick else 120
    BUILD.mkdir(parents=True, exist_ok=True)
    rows, source = _rows_and_source()
    all_jobs = default_jobs()
    import importlib.util

    have = {"cluster": importlib.util.find_spec("distributed") is not None,
            "ray": importlib.util.find_spec("ray") is not None}
    routes = [("raw", "raw", 1), ("one", "leash", 1), ("all", "leash", all_jobs)] + [
        (k, k, all_jobs) for k in ("cluster", "ray") if have[k]]
    if args.routes:
        wanted = set(args.routes.split(","))
        routes = [r for r in routes if r[0] in wanted or r[0] in ("raw", "one", "all")]
    print(f"responses: {source}")
    if args.sizes_only:
        run_sizes(rows, all_jobs, args.quick)
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cores: {all_jobs} usable (os.sched_getaffinity), load average {load:.2f} at the "
          f"start; each route in a fresh process, a first run of each whose verdicts are "
          f"compared sample by sample (and not timed), then {reps} interleaved; samples/s as "
          "median (min-max); CPU ratio: leash's CPU seconds per sample over math-verify's, "
          "medians (target: <= 1.15)")
    header = (f"{'bucket':<7} {'chars':>7} {'n':>5}  {'raw math-verify':>20}  "
              f"{'leash, 1 core':>20}  {'leash, ' + str(all_jobs) + ' cores':>20}  "
              f"{'per core':>8}  {'per CPU s':>9}  {'leash/raw CPU':>13}  {'(wall)':>6}  "
              f"{'all / 1 core':>12}  "
              f"{'local cluster':>20}  {'cluster / all':>13}  {'local Ray':>20}  "
              f"{'Ray / all':>9}  {'Ray CPU/sample':>14}  {'(driver)':>9}  "
              f"{'1 core CPU/sample':>17}")
    print(header)
    print("-" * len(header))
    ratios = {}
    for name, items in buckets(rows, n_long).items():
        path = BUILD / f"{name}.parquet"
        write_bucket(path, items)
        batch = max(1, len(items) // (8 * all_jobs))
        res = {key: [] for key, _, _ in routes}
        for rep in range(reps + 1):
            for key, route, jobs in routes:
                proc = subprocess.run(
                    [sys.executable, __file__, "--_route", route, str(path), str(jobs),
                     str(batch)], capture_output=True, text=True, cwd=ROOT)
                if proc.returncode:
                    sys.stderr.write(proc.stderr)
                    return 1
                res[key].append(json.loads(proc.stdout.strip().splitlines()[-1]))
            if rep == 0:  # the check run: the same verdict for every sample, or stop
                verdicts = {k: v.pop()["verdicts"] for k, v in res.items()}
                if len(set(verdicts.values())) != 1:
                    print(f"bench_rescore: the routes disagree on {name}", file=sys.stderr)
                    return 1
        raw, one, every = _rate(res["raw"]), _rate(res["one"]), _rate(res["all"])
        cpu = (statistics.median(r["cpu"] for r in res["one"]) /
               statistics.median(r["cpu"] for r in res["raw"]))
        wall = raw[0] / one[0]
        ratios[name] = (cpu, wall)
        chars = statistics.median(len(r) for _, _, r in items)
        tail = _cluster_cells(res, every)
        print(f"{name:<7} {chars:>7,.0f} {len(items):>5}  {_fmt(*raw):>20}  {_fmt(*one):>20}  "
              f"{_fmt(*every):>20}  {every[0] / all_jobs:>8,.0f}  "
              f"{_rate(res['one'], 'cpu')[0]:>9,.0f}  {cpu:>13.2f}  {wall:>6.2f}  "
              f"{every[0] / one[0]:>12.2f}{tail}", flush=True)
    if _print_overheads(_engines(have, args.routes), all_jobs):
        return 1
    if args.routes:
        return 0
    mem = run_memory(rows)
    sizes = run_sizes(rows, all_jobs, args.quick)
    _print_ratio_lines(ratios, mem, sizes)
    print("\nratios: 'leash/raw CPU' is leash's whole pipeline (read, extract the answer column, "
          "grade, count, write) against math-verify alone, in CPU seconds (user + system of the "
          "process and its ended workers), '(wall)' the same in wall seconds; "
          "'per CPU s' leash's samples per CPU second on one core (what the load of a shared "
          "machine changes least); 'all / 1 core' the speed-up of "
          f"{all_jobs} worker processes (start-up included), which other load on the machine "
          "eats first; 'cluster / all' the local Dask cluster against the local processes "
          "(its scheduler and transfers cost; a real cluster adds machines); 'Ray / all' the "
          "same for a local Ray, whose CPU per sample (driver, raylet and workers; the "
          "driver's alone in brackets: reading, sending, writing) stands beside one "
          "process's.")
    if hasattr(os, "getloadavg"):
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
