"""Benchmark: streaming summarize() vs the naive pandas route, speed and peak memory.

Generates canonical samples files without response text (model, benchmark, question_id,
sample_idx, correct, answer, n_tokens, token_entropy) under build/bench/, then measures each
route in its own subprocess (so peak RSS, ru_maxrss, belongs to that route alone):

* ours  : leash.summarize.summarize(path)
* naive : pandas.read_parquet / pandas.read_json(lines=True) of the whole file, then groupby
          (n, c, first_correct, token and entropy stats, answer histogram)

Default sizes: Parquet 1547 questions x 8192 samples x 2 models = 25.3M samples (and a 1/8
file for the memory comparison); JSONL 2.5M and 0.6M lines (a 25M-line JSONL file is ~3 GB and
slow to write; samples/s is size-independent once past the start-up cost).
``--small`` runs everything on tiny files for a smoke test.

Usage::

    python benchmarks/bench_summarize.py            # full run (several minutes)
    python benchmarks/bench_summarize.py --small    # smoke test (seconds)
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"


def _chunk(rng, model, q0, q1, n_samples):
    nq = q1 - q0
    qid = np.repeat(np.arange(q0, q1), n_samples)
    idx = np.tile(np.arange(n_samples), nq)
    p = rng.beta(0.5, 0.5, size=nq)
    correct = rng.random(nq * n_samples) < np.repeat(p, n_samples)
    ans = rng.integers(0, 12, size=nq * n_samples)
    ans = np.where(correct, 0, ans)
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


def make_parquet(path: Path, n_questions, n_samples):
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    writer = None
    for t in _chunks(n_questions, n_samples):
        if writer is None:
            writer = pq.ParquetWriter(tmp, t.schema)
        writer.write_table(t, row_group_size=1 << 20)
    writer.close()
    tmp.rename(path)


def make_jsonl(path: Path, n_questions, n_samples):
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as fh:
        for t in _chunks(n_questions, n_samples):
            d = t.to_pydict()
            keys = list(d)
            cols = [d[k] for k in keys]
            fh.writelines(json.dumps(dict(zip(keys, row))) + "\n" for row in zip(*cols))
    tmp.rename(path)


# ---- measurements (each in a subprocess) ------------------------------------------------------
def measure(route: str, path: str) -> dict:
    # imports are outside the timed region (a constant start-up cost, not reading speed)
    import warnings

    import pandas as pd

    from leash.summarize import summarize

    t0 = time.perf_counter()
    if route == "ours":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = summarize(path)
        rows = int(out["n"].sum())
    else:
        df = pd.read_parquet(path) if path.endswith(".parquet") else pd.read_json(
            path, lines=True, dtype={"question_id": str, "answer": str})
        keys = ["model", "benchmark", "question_id"]
        df["_idx_correct"] = df["sample_idx"].where(df["correct"])
        g = df.groupby(keys, sort=False, observed=True)
        out = g.agg(n=("correct", "size"), c=("correct", "sum"),
                    first_correct=("_idx_correct", "min"),
                    n_answer_missing=("answer", lambda s: int(s.isna().sum())),
                    n_tokens_mean=("n_tokens", "mean"), n_tokens_min=("n_tokens", "min"),
                    n_tokens_max=("n_tokens", "max"),
                    token_entropy_mean=("token_entropy", "mean"),
                    token_entropy_std=("token_entropy", "std"))
        hist = df.groupby(keys + ["answer"], sort=False, observed=True).size()
        rows = int(out["n"].sum())
        del hist
    secs = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"route": route, "seconds": secs, "rows": rows, "peak_rss_mb": rss_mb}


def run_sub(route, path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--_measure", route, str(path)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="tiny files for a smoke test")
    ap.add_argument("--no-naive-big", action="store_true",
                    help="skip the naive route on the biggest Parquet file")
    ap.add_argument("--_measure", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._measure:
        print(json.dumps(measure(*args._measure)))
        return
    if args.small:
        pq_sizes = [(60, 256), (60, 64)]
        js_sizes = [(40, 128), (10, 128)]
    else:
        pq_sizes = [(1547, 8192), (1547, 1024)]
        js_sizes = [(1547, 808), (1547, 194)]   # 2.5M and 0.6M lines
    cases = []
    for nq, ns in pq_sizes:
        p = BUILD / f"samples_{nq}x{ns}x2.parquet"
        make_parquet(p, nq, ns)
        cases.append(("parquet", p))
    for nq, ns in js_sizes:
        p = BUILD / f"samples_{nq}x{ns}x2.jsonl"
        make_jsonl(p, nq, ns)
        cases.append(("jsonl", p))
    rows = []
    for fmt, p in cases:
        ours = run_sub("ours", p)
        skip_naive = args.no_naive_big and p == cases[0][1]
        naive = None if skip_naive else run_sub("naive", p)
        if naive is not None and naive["rows"] != ours["rows"]:
            raise SystemExit(f"row counts differ on {p.name}: {ours} vs {naive}")
        rows.append((fmt, p, ours, naive))
    hdr = (f"{'format':8} {'samples':>11} {'MB':>7} {'ours s':>8} {'ours Ms/s':>10} "
           f"{'ours RSS MB':>11} {'naive s':>8} {'naive Ms/s':>10} {'naive RSS MB':>12} "
           f"{'speed ratio':>11}")
    print(hdr)
    print("-" * len(hdr))
    for fmt, p, o, nv in rows:
        size = p.stat().st_size / 2**20
        rate = o["rows"] / o["seconds"] / 1e6
        if nv:
            nrate = nv["rows"] / nv["seconds"] / 1e6
            tail = (f"{nv['seconds']:8.2f} {nrate:10.2f} {nv['peak_rss_mb']:12.0f} "
                    f"{nv['seconds'] / o['seconds']:10.1f}x")
        else:
            tail = f"{'-':>8} {'-':>10} {'-':>12} {'-':>11}"
        print(f"{fmt:8} {o['rows']:11,d} {size:7.0f} {o['seconds']:8.2f} {rate:10.2f} "
              f"{o['peak_rss_mb']:11.0f} {tail}")
    print("speed ratio = naive seconds / ours seconds (imports not timed); RSS = peak resident "
          "set of the measuring subprocess (includes ~110 MB of Python + libraries).")


if __name__ == "__main__":
    main()
