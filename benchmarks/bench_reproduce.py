"""`make reproduce`: CPU and wall time per notebook run, against the loop a user would write
instead, one `papermill` command per run, in the same benchmark.

Both run the same runs (by default those of notebooks 01 and 08 of notebooks/runs.yaml: the
paper's Table 1, its run on the SIMULATED demo, and the audit; --quick: the audit; --all: every
run of `make reproduce`), one at a time, into temporary folders:

1. ``leash reproduce --only ... --jobs 1`` (``python -m leash_eval.run.reproduce``): the study
   and parameter checks, a fork server and one pool worker, a kernel per run, the executed
   copies made byte-stable, the records and the index;
2. the baseline: ``python -m papermill NOTEBOOK.ipynb OUT.ipynb -p study ... -p outdir ...`` per
   run (the ``.ipynb`` written from the Markdown by jupytext first, as `make install` does),
   with the same fixed hash seed.

The artifacts both write must be the same bytes (checked before anything is reported). CPU is
that of every process of each command (user + system, as ``time`` counts it: the runner waits
for its fork server, whose children the pool's workers are). The runner's own per-run CPU (its
progress lines: each run's worker and kernel) is reported too; the difference to the whole is
its start-up (reading and checking the notebooks, the fork server, the worker). Peak RSS is
the largest single process's.

Usage: python benchmarks/bench_reproduce.py [--quick | --all]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _children() -> tuple[float, float]:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime, r.ru_maxrss / 1024


def _timed(commands, env) -> tuple[float, float, float, list[str]]:
    """Wall and CPU seconds of ``commands`` run one after the other (every descendant), their
    largest RSS (MB, over this whole process's children so far), and their stderr.
    """
    c0 = _children()[0]
    t0 = time.perf_counter()
    errs = []
    for cmd in commands:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
        if proc.returncode:
            sys.exit(f"bench_reproduce: {' '.join(map(str, cmd))} failed:\n{proc.stderr}")
        errs.append(proc.stderr)
    wall = time.perf_counter() - t0
    cpu, rss = _children()
    return wall, cpu - c0, rss, errs


def _artifacts(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.startswith(".") and p.name != "README.md"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="the audit's run only")
    group.add_argument("--all", action="store_true", help="every run of make reproduce")
    args = ap.parse_args(argv)
    import jupytext

    from leash import notebook_files
    from leash_eval.run.reproduce import KERNEL_ENV, default_runs

    only = [] if args.all else ["08"] if args.quick else ["01", "08"]
    runs = [r for r in default_runs() if not only or r.notebook.split("_", 1)[0] in only]
    env = {**os.environ, **KERNEL_ENV}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        leash_out, pm_out, pm_nb = tmp / "leash", tmp / "papermill", tmp / "nb"
        for folder in (leash_out, pm_out, pm_nb):
            folder.mkdir()
        wall, cpu, rss, [err] = _timed([[
            sys.executable, "-m", "leash_eval.run.reproduce", "--jobs", "1",
            "--outdir", str(leash_out), "--build", str(tmp / "leash-build"),
            *(["--only", *only] if only else [])]], env)
        in_runs = sum(float(x) for x in re.findall(r", (\d+\.\d+) s CPU\)?$", err, re.M))
        commands = []
        for r in runs:
            src = pm_nb / f"{r.notebook}.ipynb"
            if not src.exists():
                jupytext.write(notebook_files.read(notebook_files.find(r.notebook,
                                                                       REPO / "notebooks")),
                               src, fmt="ipynb")
            params = [x for k, v in {**r.parameters, "outdir": str(pm_out)}.items()
                      for x in ("-p", k, str(v))]
            commands.append([sys.executable, "-m", "papermill", str(src),
                             str(tmp / f"pm-{r.name}.ipynb"), *params, "--no-progress-bar",
                             "--log-level", "ERROR"])
        b_wall, b_cpu, b_rss, _ = _timed(commands, env)
        mine, theirs = _artifacts(leash_out), _artifacts(pm_out)
        if mine != theirs:
            differ = sorted(set(mine) ^ set(theirs)) or sorted(
                n for n in mine if mine[n] != theirs[n])
            sys.exit(f"bench_reproduce: the artifacts differ: {differ[:10]}")
    n = len(runs)
    print(f"{n} run(s) ({', '.join(r.name for r in runs)}), one at a time; "
          f"{len(mine)} artifact files, the same bytes from both")
    print(f"  leash reproduce      {wall:7.1f} s wall {cpu:7.1f} s CPU ({cpu / n:5.2f} per run)"
          f"  peak RSS {rss:5.0f} MB")
    print(f"    of which the runs  {'':14} {in_runs:7.1f} s CPU ({in_runs / n:5.2f} per run; "
          f"start-up {cpu - in_runs:.1f} s)")
    print(f"  papermill per run    {b_wall:7.1f} s wall {b_cpu:7.1f} s CPU "
          f"({b_cpu / n:5.2f} per run)  peak RSS {b_rss:5.0f} MB")
    print(f"  leash / papermill: {wall / b_wall:.2f}x wall, {cpu / b_cpu:.2f}x CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
