"""Benchmarks of the per-question tests (leash.analysis.flips), as ratios against what a user
would write instead, measured in the same run.

1. The one-sided Fisher tests of every question of a pair at the paper's scale (2950 questions,
   n = 8192 on math and 2048 on non-math, rates from a Beta(0.3, 0.7) with a tenth of the
   questions unsolved by both, as in the demo), ``leash.core.stats.fisher_one_sided`` against a
   loop calling ``scipy.stats.fisher_exact`` twice per question (greater, less): the p-values
   must agree to 1e-9. Both spend their time in scipy's hypergeometric distribution functions
   (boost), whose cost grows with the counts; the vectorized call evaluates each distinct table
   once, so the ratio depends on how many tables repeat.
2. The whole flips table (tests, Benjamini-Hochberg per direction with
   ``scipy.stats.false_discovery_control``, categories, verdicts) against that loop followed by
   the same adjustment.
3. The power of one test at growing budgets (``fisher_power``, bisection over the RLVR counts
   per base count) against the double sum over every pair of counts that a direct computation
   does (run on small budgets, where it finishes).

Usage: python benchmarks/bench_flips.py [--quick]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from bench_core import timed_cpu
from scipy.stats import binom, false_discovery_control, fisher_exact

from leash.analysis.flips import flips_table
from leash.core.stats import fisher_one_sided, fisher_power


def pilot(n_questions, rng):
    """A pair shaped like the demo's: math questions at n = 8192, the rest at 2048."""
    n = np.where(np.arange(n_questions) < n_questions // 2, 8192, 2048)
    p_base = rng.beta(0.3, 0.7, n_questions)
    p_base[rng.random(n_questions) < 0.1] = 0.0
    p_rl = np.clip(p_base * rng.uniform(0.5, 1.5, n_questions), 0, 1)
    return pd.DataFrame({"benchmark": np.where(n == 8192, "math", "other"),
                         "question_id": [str(i) for i in range(n_questions)], "n_base": n,
                         "c_base": rng.binomial(n, p_base), "n_rl": n,
                         "c_rl": rng.binomial(n, p_rl)})


def loop_tests(p):
    rows = zip(p["c_rl"], p["n_rl"], p["c_base"], p["n_base"])
    out = np.array([[fisher_exact([[a, n - a], [b, m - b]], alternative=alt).pvalue
                     for alt in ("greater", "less")] for a, n, b, m in rows])
    return out[:, 0], out[:, 1]


def brute_power(pb, pr, k, alpha=0.05):
    a, b = np.meshgrid(np.arange(k + 1), np.arange(k + 1), indexing="ij")
    p = fisher_one_sided(a.ravel(), k, b.ravel(), k).greater.reshape(a.shape)
    w = binom.pmf(np.arange(k + 1), k, pr)[:, None] * binom.pmf(np.arange(k + 1), k, pb)[None]
    return float(np.sum(w * (p <= alpha)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(20250719)
    p = pilot(300 if args.quick else 2950, rng)
    w_v, c_v, got = timed_cpu(lambda: fisher_one_sided(p["c_rl"], p["n_rl"], p["c_base"],
                                                       p["n_base"]))
    w_l, c_l, ref = timed_cpu(lambda: loop_tests(p), 1)
    np.testing.assert_allclose(got.greater, ref[0], rtol=1e-9, atol=0)
    np.testing.assert_allclose(got.less, ref[1], rtol=1e-9, atol=0)
    distinct = len(np.unique(p[["c_rl", "n_rl", "c_base", "n_base"]].to_numpy(), axis=0))
    print("one-sided Fisher tests of every question, vectorized vs a fisher_exact loop")
    print(f"  {len(p)} questions ({distinct} distinct tables), n = 2048/8192: fisher_one_sided "
          f"{w_v:.3f} s wall / {c_v:.3f} s CPU; loop {w_l:.3f} s wall / {c_l:.3f} s CPU -> "
          f"{w_l / w_v:.1f}x wall, {c_l / c_v:.1f}x CPU faster; p-values equal to 1e-9")
    w_t, c_t, table = timed_cpu(lambda: flips_table(p))
    w_r, c_r, _ = timed_cpu(lambda: [false_discovery_control(x, method="bh")
                                     for x in loop_tests(p)], 1)
    np.testing.assert_allclose(table["q_expansion"], false_discovery_control(ref[0]), rtol=1e-9)
    print("the flips table (tests, Benjamini-Hochberg, verdicts) vs the loop and the adjustment")
    print(f"  flips_table {w_t:.3f} s wall / {c_t:.3f} s CPU; loop + adjustment {w_r:.3f} s "
          f"wall / {c_r:.3f} s CPU -> {w_r / w_t:.1f}x wall, {c_r / c_t:.1f}x CPU faster")
    print("power of one test: bisection per base count vs the double sum over all counts")
    for k in ((16, 64) if args.quick else (64, 256, 512)):
        w_b, c_b, fast = timed_cpu(lambda k=k: fisher_power(0.1, 0.2, k))
        w_d, c_d, slow = timed_cpu(lambda k=k: brute_power(0.1, 0.2, k), 1)
        assert abs(fast - slow) < 1e-12, (k, fast, slow)
        print(f"  k = {k}: fisher_power {w_b * 1e3:.1f} ms wall / {c_b * 1e3:.1f} ms CPU; double "
              f"sum {w_d * 1e3:.1f} ms wall / {c_d * 1e3:.1f} ms CPU -> {w_d / w_b:.0f}x wall, "
              f"{c_d / c_b:.0f}x CPU faster (power {fast:.4f}, equal within 1e-12)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
