"""Benchmark: leash summarize against DuckDB's own query on the same files, in the same run.

Generates canonical samples files without response text (model, benchmark, question_id,
sample_idx, correct, answer, n_tokens, token_entropy) under build/bench/: a Parquet file of
1547 questions x 8192 samples x 2 models = 25.3M samples and one of 1/8 of it, a JSONL file of
2.5M lines and one of 0.6M lines (``--quick``: tiny files, a smoke test). Every measurement runs
in a fresh process under ``/usr/bin/time -v`` (peak RSS of that process alone; a child forked
from this parent would inherit its peak), three times, and the best time counts:

* leash     : ``leash_eval.summarize.summarize(path)`` (the scan, the rules of every row, the
              duplicate check and the whole 16-column summary), imports not timed;
* duckdb    : DuckDB's query doing the aggregation of the issue (n, c, first correct index,
              mean tokens per question), imports not timed;
* duckdb-16 : DuckDB's query computing the same 16 columns as leash (answer histogram, token
              and entropy statistics), without any validity rule: what the engine costs alone;
* duckdb-same: that query with the rows in order of first appearance, as leash gives them
              (``file_row_number`` of Parquet, ``WITH ORDINALITY`` of JSON lines, the only
              row number DuckDB's JSON reader has): the same output as leash;
* start-up  : whole processes on a tiny file, ``leash summarize FILE`` against
              ``python -c "import duckdb; ..."`` doing the issue's query (start-up counts), each
              run once first so that Python's bytecode caches exist, as on a user's second run
              (``PYTHONDONTWRITEBYTECODE`` is removed from their environment).

Ratios are DuckDB's seconds over leash's (>= 1: leash at least as fast), of wall time and of
CPU time (user + system of every thread, ``time.process_time``; on a shared machine wall
ratios move with the load while CPU ratios hold). Peak RSS of leash at two file sizes shows
that memory does not grow with the file.
Usage: python benchmarks/bench_summarize.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"
REPEAT = 3


def _chunk(rng, model, q0, q1, n_samples):
    nq = q1 - q0
    qid = np.repeat(np.arange(q0, q1), n_samples)
    idx = np.tile(np.arange(n_samples), nq)
    p = rng.beta(0.5, 0.5, size=nq)
    correct = rng.random(nq * n_samples) < np.repeat(p, n_samples)
    ans = np.where(correct, 0, rng.integers(0, 12, size=nq * n_samples))
    n = len(qid)
    answer = pa.DictionaryArray.from_arrays(
        pa.array(ans.astype(np.int32), mask=ans == 11), pa.array([str(i) for i in range(12)]))
    return pa.table({
        "model": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                                pa.array([model])),
        "benchmark": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)),
                                                    pa.array(["math"])),
        "question_id": pa.array(qid).cast(pa.string()),
        "sample_idx": pa.array(idx),
        "correct": pa.array(correct),
        "answer": answer,
        "n_tokens": pa.array(rng.integers(50, 4096, size=n)),
        "token_entropy": pa.array(rng.gamma(2.0, 0.2, size=n)),
    })


def _chunks(n_questions, n_samples, models=("base", "rl"), rows=1 << 20, seed=0):
    rng = np.random.default_rng(seed)
    per = max(1, rows // n_samples)
    for m in models:
        for q0 in range(0, n_questions, per):
            yield _chunk(rng, m, q0, min(q0 + per, n_questions), n_samples)


def make_file(path: Path, n_questions, n_samples):
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    if path.suffix == ".parquet":
        writer = None
        for t in _chunks(n_questions, n_samples):
            writer = writer or pq.ParquetWriter(tmp, t.schema)
            writer.write_table(t, row_group_size=1 << 20)
        writer.close()
    else:
        with open(tmp, "w") as fh:
            for t in _chunks(n_questions, n_samples):
                d = t.to_pydict()
                fh.writelines(json.dumps(dict(zip(d, row))) + "\n" for row in zip(*d.values()))
    tmp.rename(path)
    return path


def _source(path: str) -> str:
    return (f"read_parquet('{path}')" if path.endswith(".parquet") else
            f"read_json('{path}', format='newline_delimited')")


ISSUE_QUERY = ("SELECT model, benchmark, question_id, count(*), count_if(correct), "
               "min(sample_idx) FILTER (WHERE correct), avg(n_tokens) FROM {src} GROUP BY ALL")
FULL_QUERY = (
    "SELECT model, benchmark, question_id, count(*), count_if(correct), min(sample_idx) FILTER "
    "(WHERE correct), count_if(answer IS NULL), histogram(answer), avg(n_tokens), min(n_tokens),"
    " max(n_tokens), avg(token_entropy), stddev_samp(token_entropy), min(sample_idx), "
    "max(sample_idx) FROM {src} GROUP BY ALL")


def same_query(path: str) -> str:
    """:data:`FULL_QUERY` in order of first appearance (the order of leash's rows)."""
    if path.endswith(".parquet"):
        src, row = f"read_parquet('{path}', file_row_number=true)", "file_row_number"
    else:
        src, row = f"{_source(path)} WITH ORDINALITY", "ordinality"
    return (FULL_QUERY.format(src=src).replace(" FROM ", f", min({row}) AS first_row FROM ", 1)
            + " ORDER BY first_row")


def measure(route: str, path: str) -> dict:
    """One measurement (run in a fresh process): seconds and the rows aggregated."""
    if route == "leash":
        import warnings

        import duckdb  # imports are not timed, as for DuckDB below
        import pandas  # noqa: F401  (the frame summarize returns)
        import pyarrow  # noqa: F401

        from leash_eval.summarize import summarize

        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = int(summarize(path)["n"].sum())
    else:
        import duckdb

        query = (same_query(path) if route == "duckdb-same" else
                 (ISSUE_QUERY if route == "duckdb" else FULL_QUERY).format(src=_source(path)))
        t0, c0 = time.perf_counter(), time.process_time()
        rows = int(sum(r[3] for r in duckdb.connect().execute(query).fetchall()))
    return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "rows": rows}


def timed(argv: list[str], env=None) -> tuple[float, float, str, float]:
    """(wall seconds, peak RSS in MB, stdout, CPU seconds: user + system) of a fresh process
    under /usr/bin/time -v.
    """
    t0 = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                         check=True, env=env)
    wall = time.perf_counter() - t0
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr).group(1))
    cpu = sum(float(re.search(rf"{what} time \(seconds\): ([0-9.]+)", out.stderr).group(1))
              for what in ("User", "System"))
    return wall, rss / 1024, out.stdout, cpu


def run_route(route: str, path: Path) -> dict:
    """The best wall time and the best CPU time of REPEAT fresh processes (each on its own:
    the run with the least wall time is not always the one with the least CPU time).
    """
    runs = []
    for _ in range(REPEAT):
        _, rss, out, _ = timed([sys.executable, __file__, "--_measure", route, str(path)])
        runs.append(json.loads(out.strip().splitlines()[-1]) | {"rss": rss})
    return {"seconds": min(r["seconds"] for r in runs), "cpu": min(r["cpu"] for r in runs),
            "rows": runs[0]["rows"], "rss": max(r["rss"] for r in runs)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", "--small", action="store_true", help="tiny files (smoke test)")
    ap.add_argument("--_measure", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._measure:
        print(json.dumps(measure(*args._measure)))
        return
    if args.quick:
        sizes = [("parquet", 60, 256), ("parquet", 60, 32), ("jsonl", 40, 128),
                 ("jsonl", 10, 128)]
    else:
        sizes = [("parquet", 1547, 8192), ("parquet", 1547, 1024), ("jsonl", 1547, 808),
                 ("jsonl", 1547, 194)]   # 25.3M and 3.2M samples; 2.5M and 0.6M lines
    files = [make_file(BUILD / f"samples_{nq}x{ns}x2.{ext}", nq, ns) for ext, nq, ns in sizes]
    routes = ("leash", "duckdb", "duckdb-16", "duckdb-same")
    print("wall and CPU seconds (best of each), ratio = DuckDB / leash, wall | CPU")
    print(f"{'file':30} {'samples':>11} " + " ".join(f"{r + ' s':>17}" for r in routes)
          + "  " + " ".join(f"{r + ' ratio':>17}" for r in routes[1:])
          + f" {'leash RSS MB':>12} {'duckdb RSS MB':>13}")
    for p in files:
        ours, *theirs = (run_route(r, p) for r in routes)
        if any(t["rows"] != ours["rows"] for t in theirs):
            raise SystemExit(f"row counts differ on {p.name}: {ours} {theirs}")
        secs = " ".join(f"{t['seconds']:7.2f} | {t['cpu']:7.2f}" for t in (ours, *theirs))
        ratios = " ".join(f"{t['seconds'] / ours['seconds']:6.2f}x | {t['cpu'] / ours['cpu']:5.2f}x"
                          for t in theirs)
        print(f"{p.name:30} {ours['rows']:11,d} {secs}  {ratios} {ours['rss']:12.0f} "
              f"{theirs[0]['rss']:13.0f}", flush=True)
    # whole processes on a tiny file: start-up counts
    tiny = BUILD / "tiny.jsonl"
    tiny.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": str(q),
                                        "sample_idx": i, "correct": (q + i) % 3 == 0,
                                        "n_tokens": 10 + i}) + "\n"
                            for q in range(5) for i in range(4)))
    leash_cli = [sys.executable, "-m", "leash_eval.cli", "-q", "summarize", str(tiny)]
    duck_cli = [sys.executable, "-c", "import duckdb; print(duckdb.connect().execute("
                f"{ISSUE_QUERY.format(src=_source(str(tiny)))!r}).fetchall())"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = {name: [timed(cmd, env) for _ in range(REPEAT + 1)]  # the first writes .pyc
            for name, cmd in (("leash", leash_cli), ("duckdb", duck_cli))}
    walls = {name: min(r[0] for r in rs) for name, rs in runs.items()}
    cpus = {name: min(r[3] for r in rs) for name, rs in runs.items()}
    print(f"\nwhole process on a 20-line file: leash summarize {walls['leash']:.2f} s "
          f"({cpus['leash']:.2f} s CPU), python -c duckdb {walls['duckdb']:.2f} s "
          f"({cpus['duckdb']:.2f} s CPU), ratio {walls['duckdb'] / walls['leash']:.2f}x wall, "
          f"{cpus['duckdb'] / cpus['leash']:.2f}x CPU")
    print("ratio = DuckDB seconds / leash seconds (>= 1: leash at least as fast); best of "
          f"{REPEAT} fresh processes each; RSS = peak resident set of that process "
          "(/usr/bin/time -v).")


if __name__ == "__main__":
    main()
