"""The live explorer (leash.run.explore): one control change against recomputing the same view
from scratch with the non-interactive functions, in the same run.

1. The paper's scale: 1547 math questions (the six math benchmarks' sizes) x 8 pairs (16
   models), n = 8192 samples per question and model, 1000 bootstrap replicates. Each control
   change (k over the powers of two, min_count, zeta, estimator, benchmark) is timed as the
   explorer does it (ExplorerModel.view and the changes table: numpy over arrays loaded once,
   cached by what each control touches) and as a from-scratch view: support_table (with the
   same bootstrap) on the pair's paired frame, pass_at_k_curve of both models at the budgets,
   crossover_budget and epsilon. Target: the explorer's update within 100 ms.
2. A 25M-sample study summary: 25,000 questions in 10 benchmarks x 2 models x 512 samples,
   the same sequence. Target: within 1 s.
The figure is drawn (matplotlib, PNG) after each update; its time is reported apart, since it
does not depend on the number of questions. Wall and CPU time (process_time) of each; the
median over the sequence of changes.

Usage: python benchmarks/bench_explore.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

from leash.analysis.tables import default_ks, support_table
from leash.core.passk import pass_at_k_curve
from leash.core.stats import crossover_budget
from leash.core.support import epsilon
from leash.run.explore import ExplorerModel, Setting, figure_png

MATH = {"AIME2024": 30, "AIME2025": 30, "AMC23": 40, "MATH500": 500, "Minerva": 272,
        "OlympiadBench": 675}


def synthetic_pair(sizes: dict, n: int, rng) -> pd.DataFrame:
    """A paired frame: c ~ Binomial(n, p), p ~ Beta(0.3, 0.5), the first correct sample the
    smallest of c random positions (approximately: n Beta(1, c))."""
    nq = sum(sizes.values())
    frame = pd.DataFrame({"benchmark": np.repeat(list(sizes), list(sizes.values())),
                          "question_id": [f"q{i}" for i in range(nq)]})
    p = rng.beta(0.3, 0.5, nq)
    for side, shift in (("base", 1.0), ("rl", 0.8)):
        c = rng.binomial(n, np.clip(p * shift + rng.normal(0, 0.02, nq), 0, 1))
        fc = np.where(c > 0, np.minimum((n * rng.beta(1, np.maximum(c, 1))).astype(np.int64),
                                        n - c), -1)
        frame[f"n_{side}"], frame[f"c_{side}"], frame[f"first_correct_{side}"] = n, c, fc
    return frame


def from_scratch(paired, domains, s: Setting, n_boot, seed):
    """The same view with the non-interactive functions, nothing reused."""
    bench = paired["benchmark"].astype(str)
    sub = paired if s.scope in ("Overall", "Math") else paired[bench == s.scope]
    t = support_table(sub, k=s.k, min_count=s.min_count, domains=domains, budget_rule=s.rule,
                      n_boot=n_boot if not (s.k and s.rule == "expected") else 0,
                      rng=np.random.default_rng(seed))
    row = t[t["benchmark"] == s.scope].iloc[0]
    ks = default_ks(int(sub["n_base"].min()))
    fc = s.estimator == "first-k"
    curves = [pass_at_k_curve(sub[f"n_{x}"].to_numpy(), sub[f"c_{x}"].to_numpy(), ks,
                              estimator=s.estimator,
                              first_correct=sub[f"first_correct_{x}"].to_numpy() if fc else None
                              ).mean(axis=0) for x in ("base", "rl")]
    return row, crossover_budget(*curves, ks), epsilon(s.k or int(sub["n_base"].min()), s.zeta)


def changes(pair: str, scope: str, n: int) -> list[Setting]:
    """A sequence of control moves: k down the powers of two, min_count, zeta, estimator."""
    s = Setting(pair, scope)
    out, k = [s], min(256, n // 4)
    for budget in [int(b) for b in default_ks(n)][::-1][1:]:
        out.append(Setting(pair, scope, budget))
    out += [Setting(pair, scope, None, 2), Setting(pair, scope, None, 3),
            Setting(pair, scope, None, 3, 0.01), Setting(pair, scope, None, 3, 0.01, "unbiased"),
            Setting(pair, scope, k, 1, 0.01, "unbiased"),
            Setting(pair, scope, k, 2, 0.01, "unbiased", "expected")]
    return out


def timed(fn):
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t, time.process_time() - c, out


def bench(pairs: dict, domains, scope, n, n_boot, seed=0, n_scratch=None):
    model = ExplorerModel("bench", paired=pairs, domains=domains, n_boot=n_boot, seed=seed)
    pair = next(iter(pairs))
    load_wall, load_cpu, _ = timed(lambda: model.scope(pair, scope))
    seq = changes(pair, scope, n)
    upd, draw, scratch = [], [], []
    before = None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.4), dpi=90)  # as the explorer draws it
    for s in seq:
        w, c, view = timed(lambda s=s: model.view(s))
        if before is not None:
            w2, c2, _ = timed(lambda b=before, v=view: model.changes(b, v))
            w, c = w + w2, c + c2
        upd.append((w, c))
        before = view
        draw.append(timed(lambda v=view: figure_png(v, fig))[:2])
    for s in seq[: n_scratch or len(seq)]:
        w, c, (row, cross, eps) = timed(lambda s=s: from_scratch(pairs[pair], domains, s,
                                                                 n_boot, seed))
        scratch.append((w, c))
        v = model.view(s)  # the same numbers
        assert tuple(float(x) for x in v.counts) == tuple(float(row[x]) for x in "PESO"), s
        assert v.epsilon == eps and (v.crossover == cross or np.isnan(cross) and
                                     np.isnan(v.crossover))
    first, upd, draw = upd[0], upd[1:], draw[1:]  # the first view fills the caches
    med = lambda xs, i: float(np.median([x[i] for x in xs]))  # noqa: E731
    nq = len(model.scope(pair, scope).frame)
    slowest = seq[1 + int(np.argmax([x[0] for x in upd]))]
    return {"questions": nq, "changes": len(upd), "slowest": slowest, "load_s": load_wall,
            "load_cpu_s": load_cpu, "first_s": first[0],
            "update_s": med(upd, 0), "update_cpu_s": med(upd, 1),
            "update_max_s": max(x[0] for x in upd),
            "scratch_s": med(scratch, 0), "scratch_cpu_s": med(scratch, 1),
            "draw_s": med(draw, 0), "draw_cpu_s": med(draw, 1),
            "ratio": med(scratch, 0) / med(upd, 0), "ratio_cpu": med(scratch, 1) / med(upd, 1)}


def report(title, r, target):
    print(title)
    print(f"  {r['questions']} questions, {r['changes']} control changes (median): explorer "
          f"update {r['update_s'] * 1e3:.1f} ms wall / {r['update_cpu_s'] * 1e3:.1f} ms CPU "
          f"(target {target}) vs from scratch "
          f"{r['scratch_s'] * 1e3:.0f} ms wall / {r['scratch_cpu_s'] * 1e3:.0f} ms CPU -> "
          f"{r['ratio']:.1f}x wall, {r['ratio_cpu']:.1f}x CPU")
    s = r["slowest"]
    print(f"  slowest change {r['update_max_s'] * 1e3:.0f} ms wall (to k={s.k or 'full'}, "
          f"min_count={s.min_count}, {s.estimator} pass@k, {s.rule} rule)")
    print(f"  loading the scope's arrays once: {r['load_s'] * 1e3:.0f} ms; the first view "
          f"(filling the caches): {r['first_s'] * 1e3:.0f} ms; drawing the figure "
          f"(PNG) after an update: {r['draw_s'] * 1e3:.0f} ms wall / "
          f"{r['draw_cpu_s'] * 1e3:.0f} ms CPU")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(20250719)
    domains = dict.fromkeys(MATH, "math")
    if args.quick:
        sizes, n, n_pairs, n_boot = {b: max(2, s // 10) for b, s in MATH.items()}, 512, 2, 100
        big = ({f"B{i}": 250 for i in range(10)}, 64)
    else:
        sizes, n, n_pairs, n_boot = MATH, 8192, 8, 1000
        big = ({f"B{i}": 2500 for i in range(10)}, 512)
    pairs = {f"pair{i}": synthetic_pair(sizes, n, rng) for i in range(n_pairs)}
    paper = bench(pairs, domains, "Math", n, n_boot)
    report(f"paper's scale: {n_pairs} pairs ({2 * n_pairs} models), n = {n}, {n_boot} bootstrap "
           "replicates, pooled Math row", paper, "100 ms")
    big_pairs = {"pair": synthetic_pair(big[0], big[1], rng)}
    samples = 2 * sum(big[0].values()) * big[1]
    study = bench(big_pairs, dict.fromkeys(big[0], "math"), "Overall", big[1], n_boot,
                  n_scratch=6)
    report(f"a {samples / 1e6:.1f}M-sample study summary (2 models x n = {big[1]})", study, "1 s")
    sys.stdout.flush()
    return paper, study


if __name__ == "__main__":
    main()
