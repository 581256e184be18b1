"""Benchmark: leash summarize against DuckDB's own query with the same output, in the same run.

Generates canonical samples files without response text (model, benchmark, question_id,
sample_idx, correct, answer, n_tokens, token_entropy, finish_reason) under build/bench/: a
Parquet file of 1547 questions x 8192 samples x 2 models = 25.3M samples and one of 1/8 of it,
a JSONL file of 2.5M lines and one of 0.6M lines (``--quick``: tiny files, a smoke test). Two
routes, each in a fresh process under ``/usr/bin/time -v`` (peak RSS of that process alone; a
child forked from this parent would inherit its peak):

* leash : ``leash_eval.summarize.summarize(path)`` (the scan, the rules of every row, the
          duplicate checks and the whole 16-column summary), imports not timed;
* duckdb: DuckDB's query computing the same 16 columns (n, c, first correct index, missing
          answers, the answer histogram, token and entropy statistics, truncations) with the
          rows in order of first appearance (``file_row_number`` of Parquet, ``WITH
          ORDINALITY`` of JSON lines), without any validity rule: what the engine costs alone.

First each route runs once and writes its output, and the two outputs are compared (every row,
every column: the same summary, or the benchmark stops); then the routes run ``REPEAT`` times
each, interleaved so that both see the same load of this shared machine, and the medians count.
Ratios are leash's seconds over DuckDB's (<= 1: leash at least as fast), of CPU time (user +
system of every thread) beside wall time; on a shared machine wall ratios move with the load
while CPU ratios hold. Peak RSS at two file sizes shows that memory does not grow with the file.

``--options`` measures, on the larger JSONL file, what each way of checking JSON lines for a
key given twice or a record of too many keys costs alone (the options tried for the JSONL
reader; see :func:`measure`), beside the fast reader's own scan.
Usage: python benchmarks/bench_summarize.py [--quick] [--options]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"
REPEAT = 5


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
    reason = pa.DictionaryArray.from_arrays(
        pa.array((rng.random(n) < 0.05).astype(np.int32)), pa.array(["stop", "length"]))
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
        "finish_reason": reason,
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
    return (f"read_parquet('{path}', file_row_number=true)" if path.endswith(".parquet") else
            f"read_json('{path}', format='newline_delimited') WITH ORDINALITY")


def same_query(path: str) -> str:
    """DuckDB's query of leash's summary: the 16 columns, in order of first appearance."""
    row = "file_row_number" if path.endswith(".parquet") else "ordinality"
    return (
        "SELECT model, benchmark, question_id, NULL::BIGINT AS step, count(*) AS n, "
        "count_if(correct) AS c, coalesce(min(sample_idx) FILTER (WHERE correct) - "
        "min(sample_idx), -1) AS first_correct, count_if(answer IS NULL) AS n_answer_missing, "
        "histogram(answer) AS answers, avg(n_tokens) AS n_tokens_mean, min(n_tokens) AS "
        "n_tokens_min, max(n_tokens) AS n_tokens_max, avg(token_entropy) AS "
        "token_entropy_mean, stddev_samp(token_entropy) AS token_entropy_std, "
        "count_if(lower(finish_reason) = 'length') AS n_truncated, "
        f"min({row}) AS first_row FROM {_source(path)} GROUP BY ALL ORDER BY first_row")


def measure(route: str, path: str, out: str | None = None) -> dict:
    """One measurement (run in a fresh process): seconds, CPU seconds, the samples counted;
    with ``out``, the output is written there (Parquet) after the clock stops.

    Besides the two routes, the options for the JSONL reader's duplicate-key and wide-record
    checks, each alone (``--options``):

    * ``keys-scan``: every line's keys (``json_keys`` + ``list_distinct``), the first pass the
      reader had: duplicate keys and records over 10,000 keys in one scan;
    * ``strlen-scan``: the keys of only the lines long enough to hold 10,000 keys (the check
      of a file whose lines are not all proved short);
    * ``block-test``: the byte-level proof that no line is that long
      (``leash_eval.formats._long_line_possible``, what a file of short lines costs now);
    * ``read-lenient`` / ``read-strict``: the fast reader's scan of the read fields as JSON,
      errors ignored (a duplicate read field silently its first value) or stopping at one (a
      read field given twice, now the check of duplicates, in the same pass);
    * ``map-read``: every line as a ``MAP(VARCHAR, JSON)``, which refuses any duplicate key
      and counts the keys in the same pass.
    """
    import duckdb

    fields = ("model", "benchmark", "question_id", "step", "sample_idx", "correct", "answer",
              "n_tokens", "token_entropy", "finish_reason")
    lines = f"read_ndjson_objects('{path}', ignore_errors=true)"
    cols = ", ".join(f"'{f}': 'JSON'" for f in fields)
    options = {
        "keys-scan": f"SELECT min(ordinality) FILTER (WHERE len(k) > 10000), coalesce(bool_or("
                     f"len(k) <> len(list_distinct(k))), false) FROM (SELECT ordinality, "
                     f"json_keys(json) AS k FROM {lines} WITH ORDINALITY)",
        "strlen-scan": f"SELECT min(ordinality) FROM {lines} WITH ORDINALITY WHERE strlen(json) "
                       ">= 50006 AND len(json_keys(json)) > 10000",
        "read-lenient": f"SELECT count(*), count(model), count(sample_idx), count(answer) FROM "
                        f"read_json('{path}', format='newline_delimited', columns={{{cols}}}, "
                        "ignore_errors=true) WITH ORDINALITY",
        "read-strict": f"SELECT count(*), count(model), count(sample_idx), count(answer) FROM "
                       f"read_json('{path}', format='newline_delimited', columns={{{cols}}}, "
                       "ignore_errors=false) WITH ORDINALITY",
        "map-read": f"SELECT count(*), max(cardinality(json)) FROM read_json('{path}', format="
                    "'newline_delimited', records=false, columns={'json': "
                    "'MAP(VARCHAR, JSON)'})",
    }
    if route == "leash":
        import warnings

        import pandas  # noqa: F401  (imports are not timed, as for DuckDB below)
        import pyarrow  # noqa: F401

        from leash_eval.summarize import summarize

        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = summarize(path)
        result = {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "rows": int(df["n"].sum())}
        if out:
            df.to_parquet(out)
        return result
    if route == "block-test":
        from leash_eval.formats import _long_line_possible

        t0, c0 = time.perf_counter(), time.process_time()
        found = _long_line_possible(Path(path), 25_003)
        return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                "rows": int(found)}
    query = same_query(path) if route == "duckdb" else options[route]
    t0, c0 = time.perf_counter(), time.process_time()
    rel = duckdb.connect().execute(query)
    table = (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()
    result = {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
              "rows": int(sum(table.column("n").to_pylist())) if route == "duckdb"
              else table.num_rows}
    if out:
        pq.write_table(table, out)
    return result


def same_output(leash_path: Path, duck_path: Path, name: str) -> None:
    """Stop unless leash's summary and DuckDB's table are the same, row by row."""
    ours = pq.read_table(leash_path).to_pydict()
    theirs = pq.read_table(duck_path).to_pydict()
    if len(ours["n"]) != len(theirs["n"]):
        raise SystemExit(f"{name}: {len(ours['n'])} questions from leash, "
                         f"{len(theirs['n'])} from DuckDB")
    exact = ("model", "benchmark", "question_id", "step", "n", "c", "first_correct",
             "n_answer_missing", "n_tokens_min", "n_tokens_max", "n_truncated")
    close = ("n_tokens_mean", "token_entropy_mean", "token_entropy_std")
    for col in exact:
        if [None if v is None else float(v) if isinstance(v, int | float) else v
                for v in ours[col]] != [
                None if v is None else float(v) if isinstance(v, int | float) else v
                for v in theirs[col]]:
            raise SystemExit(f"{name}: column {col} differs between leash and DuckDB")
    for col in close:
        if not all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(ours[col], theirs[col])):
            raise SystemExit(f"{name}: column {col} differs between leash and DuckDB")
    hist = [dict(zip(v, c)) for v, c in zip(ours["answer_values"], ours["answer_counts"])]
    if hist != [dict(h) for h in theirs["answers"]]:
        raise SystemExit(f"{name}: the answer histograms differ between leash and DuckDB")


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


def run_once(route: str, path: Path, out: Path | None = None) -> dict:
    argv = [sys.executable, __file__, "--_measure", route, str(path)] + (
        [str(out)] if out else [])
    _, rss, stdout, _ = timed(argv)
    return json.loads(stdout.strip().splitlines()[-1]) | {"rss": rss}


def run_routes(routes, path: Path) -> dict:
    """Medians of ``REPEAT`` fresh processes of each route, interleaved."""
    runs = {r: [] for r in routes}
    for _ in range(REPEAT):
        for r in routes:
            runs[r].append(run_once(r, path))
    return {r: {k: statistics.median(x[k] for x in v) for k in ("seconds", "cpu", "rss")}
            | {"rows": v[0]["rows"]} for r, v in runs.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", "--small", action="store_true", help="tiny files (smoke test)")
    ap.add_argument("--options", action="store_true",
                    help="also time each option of the JSONL reader's checks alone")
    ap.add_argument("--_measure", nargs="+", help=argparse.SUPPRESS)
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
    files = [make_file(BUILD / f"samples-fr_{nq}x{ns}x2.{ext}", nq, ns) for ext, nq, ns in sizes]
    print(f"leash summarize vs DuckDB's query of the same 16 columns in the same order: outputs "
          f"compared first, then medians of {REPEAT} interleaved fresh processes each; ratio = "
          "leash / DuckDB (<= 1: leash at least as fast), CPU (wall)")
    print(f"{'file':34} {'samples':>11} {'leash s':>8} {'CPU':>6} {'duckdb s':>8} {'CPU':>6}  "
          f"{'ratio CPU (wall)':>16}  {'leash RSS MB':>12} {'duckdb RSS MB':>13}")
    ratios = {}
    for p in files:
        outs = {r: BUILD / f"out-{r}-{p.stem}.parquet" for r in ("leash", "duckdb")}
        counted = {r: run_once(r, p, outs[r])["rows"] for r in outs}
        if counted["leash"] != counted["duckdb"]:
            raise SystemExit(f"{p.name}: leash counted {counted['leash']} samples, DuckDB "
                             f"{counted['duckdb']}")
        same_output(outs["leash"], outs["duckdb"], p.name)
        for o in outs.values():
            o.unlink()
        m = run_routes(("leash", "duckdb"), p)
        ours, theirs = m["leash"], m["duckdb"]
        cpu, wall = ours["cpu"] / theirs["cpu"], ours["seconds"] / theirs["seconds"]
        ratios.setdefault(p.suffix, []).append((p.name, ours["rows"], cpu, wall, ours["rss"],
                                                theirs["rss"]))
        print(f"{p.name:34} {ours['rows']:11,d} {ours['seconds']:8.2f} {ours['cpu']:6.2f} "
              f"{theirs['seconds']:8.2f} {theirs['cpu']:6.2f}  {cpu:9.2f} ({wall:.2f})  "
              f"{ours['rss']:12.0f} {theirs['rss']:13.0f}", flush=True)
    for suffix, rows in ratios.items():
        name, n, cpu, wall, rss, drss = rows[0]  # the larger file of each format
        print(f"RATIO summary of {n:,} samples ({suffix[1:]}) / DuckDB same output: {cpu:.2f} "
              f"CPU, {wall:.2f} wall; peak RSS {rss:.0f} MB vs {drss:.0f} MB "
              f"({rss / drss:.2f}x; {rows[-1][4]:.0f} MB at {rows[-1][1]:,} samples)")
    if args.options:
        big = files[2]
        print(f"\nthe JSONL checks alone on {big.name} (medians of {REPEAT} fresh processes): "
              "CPU and wall seconds, peak RSS")
        m = run_routes(("keys-scan", "strlen-scan", "block-test", "read-lenient",
                        "read-strict", "map-read"), big)
        for r, v in m.items():
            print(f"  {r:14} {v['cpu']:6.2f} CPU {v['seconds']:6.2f} wall {v['rss']:6.0f} MB")
    # whole processes on a tiny file: start-up counts
    tiny = BUILD / "tiny.jsonl"
    tiny.write_text("".join(json.dumps({
        "model": "m", "benchmark": "b", "question_id": str(q), "sample_idx": i,
        "correct": (q + i) % 3 == 0, "answer": str(i % 2), "n_tokens": 10 + i,
        "token_entropy": 0.1 * i, "finish_reason": "stop"}) + "\n"
        for q in range(5) for i in range(4)))
    leash_cli = [sys.executable, "-m", "leash_eval.cli", "-q", "summarize", str(tiny)]
    duck_cli = [sys.executable, "-c", "import duckdb; print(duckdb.connect().execute("
                f"{same_query(str(tiny))!r}).fetchall())"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    runs = {name: [timed(cmd, env) for _ in range(REPEAT + 1)][1:]  # the first writes .pyc
            for name, cmd in (("leash", leash_cli), ("duckdb", duck_cli))}
    walls = {name: statistics.median(r[0] for r in rs) for name, rs in runs.items()}
    cpus = {name: statistics.median(r[3] for r in rs) for name, rs in runs.items()}
    print(f"\nwhole process on a 20-line file: leash summarize {walls['leash']:.2f} s "
          f"({cpus['leash']:.2f} s CPU), python -c duckdb {walls['duckdb']:.2f} s "
          f"({cpus['duckdb']:.2f} s CPU): leash / DuckDB {cpus['leash'] / cpus['duckdb']:.2f} "
          f"CPU, {walls['leash'] / walls['duckdb']:.2f} wall (start-up counts)")
    print("RSS = peak resident set of that process (/usr/bin/time -v).")


if __name__ == "__main__":
    main()
