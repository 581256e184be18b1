"""`leash study check` and the study summary cache: what a notebook pays to get a section's
summaries, with and without the cache the check fills, in the same run.

A samples file (JSON Lines) of 2 models x 500 questions x 128 samples (128,000 lines; --quick:
32 samples) is written to a temporary folder, a study is drafted from it
(:func:`leash_eval.study_init.draft_study`, whose summaries are not stored here), and timed:

1. ``check_study`` with an empty cache: every file read by the summarizer, then stored;
2. ``check_study`` again: the cache hit (each input hashed, the stored summary read back and
   checked against the counts rules);
3. ``Study.summaries("support")`` from a fresh load, as a notebook does: cache hit;
4. the baseline, what a notebook did before the cache: ``load_counts`` of the same file.

Wall and CPU time (process_time) of each; the ratio cached / uncached is what the cache saves
each notebook that reads the section.

Usage: python benchmarks/bench_study_check.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _write(folder: Path, questions: int, n: int) -> Path:
    rng = np.random.default_rng(0)
    path = folder / "samples.jsonl"
    with open(path, "w") as fh:
        for model, lift in (("base-7b", 0.0), ("base-7b-grpo", 0.1)):
            p = np.clip(rng.beta(0.4, 0.6, questions) + lift, 0, 1)
            for q in range(questions):
                for i, ok in enumerate(rng.random(n) < p[q]):
                    fh.write(json.dumps({"model": model, "benchmark": "math500",
                                         "question_id": f"q{q}", "sample_idx": i,
                                         "correct": bool(ok)}) + "\n")
    return path


def _timed(f):
    w, c = time.perf_counter(), time.process_time()
    out = f()
    return out, time.perf_counter() - w, time.process_time() - c


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    n = 32 if args.quick else 128
    import leash.sources.study as study_mod
    from leash.sources.study import load_study
    from leash_eval.run.study_check import check_study
    from leash_eval.study_init import draft_study
    from leash_eval.summarize import load_counts

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = _write(tmp, 500, n)
        out = tmp / "bench-study.yaml"
        out.write_text(draft_study([data], out=out).text)
        study_mod.study_folder = lambda name: tmp / "build" / name  # a cache of our own
        rows = []
        r, w, c = _timed(lambda: check_study(out))
        assert r.ok, r.lines()
        rows.append(("check_study, empty cache", w, c))
        r, w, c = _timed(lambda: check_study(out))
        rows.append(("check_study, cached", w, c))
        _, w, c = _timed(lambda: load_study(out).summaries("support"))
        rows.append(("a notebook's summaries, cached", w, c))
        _, w, c = _timed(lambda: load_counts([data]))
        rows.append(("baseline: load_counts of the file", w, c))
    print(f"{2 * 500 * n:,} sample lines, 1,000 question rows")
    for name, w, c in rows:
        print(f"  {name:<36} {w:7.3f} s wall {c:7.3f} s CPU")
    base_w, base_c = rows[3][1], rows[3][2]
    print(f"  cached summaries / load_counts: {rows[2][1] / base_w:.2f}x wall, "
          f"{rows[2][2] / base_c:.2f}x CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
