"""Benchmarks of the metric core, reported as ratios against baselines measured in the same run.

1. The full pass@k curve (every k from 1 to n) for 1547 questions with n = 8192 (the paper's
   math suite at its largest budget) against a per-k loop calling the product-form estimator of
   openai/human-eval, the way public evaluation scripts do it. The loop is far too slow to run
   for all 8192 budgets, so it runs for a spread of budgets and its cost is scaled by the number
   of budgets (its cost per budget does not depend on k: the product runs over c terms); the
   curve is also timed on exactly those budgets for a like-for-like ratio. And against the
   fastest plain numpy: one cumulative product of the factors (n-c-j)/(n-j) per distinct
   (n, c), 1 minus it, written into the (questions x budgets) result (target: the curve within
   2x of it; the reference loses the relative precision of small values, which the curve keeps).
2. Support counts and metrics with 1000 bootstrap replicates for 3400 questions in 13 strata,
   against a plain numpy bootstrap: stratified rng.integers draws (the same draws, so the same
   replicate counts, checked), one np.bincount, the four ratios and np.nanquantile (target:
   bootstrap_support within 1.2x of it, wall and CPU time).
3. Peak memory of pass_at_k for 100 questions at n = 10^6 (c = k = n/2: 5 * 10^7 log terms),
   chunked as leash does it against the one-pass kernel it replaced (every term materialised at
   once, copied here as the baseline); the two results must be bitwise equal.
4. The budget check of pass_at_k_curve for 10^6 budgets (one array comparison) against the
   per-budget check_k_in_range loop it replaced, run on 10^4 budgets and scaled (its cost per
   budget is constant).
5. Peak memory of bootstrap_support and bootstrap_pass_at_k for 3400 questions in 13 strata at
   n_boot = 10^5, in blocks of replicates as leash does it, against the unblocked computation
   they replaced (the whole (n_boot, n_questions) weight matrix, then one matrix product; copied
   here as the baseline, and used by the tests as their reference). The same random numbers are
   drawn: support counts are bitwise equal, pass@k intervals equal within 1e-12 (the blocked
   sums are exact, the baseline's BLAS sums round).

Peak memory is the tracemalloc peak (numpy reports its buffers to tracemalloc).
Usage: python benchmarks/bench_core.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import numpy as np

from leash.core._validation import check_k_in_range, check_ks_in_range
from leash.core.passk import pass_at_k, pass_at_k_curve
from leash.core.stats import bootstrap_pass_at_k, bootstrap_support
from leash.core.support import support_codes, support_metrics


def humaneval_estimator(n: int, c: int, k: int) -> float:
    """openai/human-eval's product form (without its assert)."""
    if n - c < k:
        return 1.0
    return 1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1))


def numpy_reference_curve(n, c, kmax):
    """Every k = 1..kmax by a plain numpy cumulative product per distinct (n, c), into the
    (questions x kmax) result: the speed to match (same values up to rounding, but 1 - prod
    cancels for small pass@k)."""
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    den = pairs[:, :1].astype(np.float64) - np.arange(kmax)
    r = np.cumprod((den - pairs[:, 1:]) / den, axis=1)
    np.subtract(1.0, r, out=r)
    return r[np.ravel(inverse)]


class Seconds(float):
    """The best wall seconds, with ``cpu`` the best CPU seconds (``time.process_time``)."""

    cpu: float


def timed(fn, repeat=3):
    best, cpu = float("inf"), float("inf")
    out = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        best, cpu = min(best, time.perf_counter() - t), min(cpu, time.process_time() - c)
    wall = Seconds(best)
    wall.cpu = cpu
    return wall, out


def peak_mib(fn):
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def bench_curve(n_questions, n, n_loop_ks, rng):
    """The curve against the per-k product-form loop, on a spread of budgets (the loop's cost
    per budget does not depend on k, so it is scaled to all of them): the values compared on
    50 questions first, then timed."""
    c = rng.binomial(n, rng.beta(0.3, 0.3, n_questions))
    nn = np.full(n_questions, n)
    ks = np.unique(np.linspace(1, n, n_loop_ks).astype(int))

    def loop(cs):
        return np.array([[humaneval_estimator(n, int(ci), int(k)) for k in ks] for ci in cs])

    # 1 - prod cancels for small values: absolute agreement (the curve keeps their digits)
    np.testing.assert_allclose(pass_at_k_curve(nn[:50], c[:50], ks), loop(c[:50]), rtol=0,
                               atol=1e-12)
    t_curve, m = timed(lambda: pass_at_k_curve(nn, c), repeat=3)
    mem = peak_mib(lambda: pass_at_k_curve(nn, c))
    t_loop, ref = timed(lambda: loop(c), repeat=1)
    t_curve_ks, m_ks = timed(lambda: pass_at_k_curve(nn, c, ks), repeat=3)
    err = float(np.max(np.abs(m[:, ks - 1] - ref)))
    np.testing.assert_array_equal(m_ks, m[:, ks - 1])
    t_loop_all = t_loop / ks.size * n
    return {
        "questions": n_questions, "n": n, "curve_all_k_s": t_curve, "curve_peak_MiB": mem,
        "curve_all_k_cpu_s": t_curve.cpu, "loop_ks": int(ks.size), "loop_s": t_loop,
        "curve_same_ks_s": t_curve_ks, "ratio_same_ks": t_loop / t_curve_ks,
        "ratio_same_ks_cpu": t_loop.cpu / t_curve_ks.cpu, "loop_all_k_s_scaled": t_loop_all,
        "ratio_all_k": t_loop_all / t_curve, "max_abs_diff_vs_loop": err,
    }


def numpy_key_reference_curve(n, c, kmax):
    """:func:`numpy_reference_curve` with the fastest plain numpy steps: the distinct pairs as
    np.unique of one int64 key (not of rows) and the questions' rows by np.take."""
    width = int(c.max()) + 1
    keys, inverse = np.unique(n * width + c, return_inverse=True)
    den = (keys // width)[:, None].astype(np.float64) - np.arange(kmax)
    r = np.cumprod((den - (keys % width)[:, None]) / den, axis=1)
    np.subtract(1.0, r, out=r)
    return np.take(r, inverse, axis=0, mode="clip")


SHAPES = ((1547, 8192), (25_000, 512), (100_000, 512))


def bench_curve_shapes(shapes, rng):
    """The full pass@k curve against the per-distinct-(n, c) numpy references at each shape
    (questions x samples, c drawn from a U-shaped beta-binomial as in the paper's data): the
    outputs compared first, then interleaved runs (medians), and the peak memory of each
    (tracemalloc) against the result's size."""
    out = []
    for questions, n in shapes:
        c = rng.binomial(n, rng.beta(0.3, 0.3, questions))
        nn = np.full(questions, n)
        routes = {"leash": lambda nn=nn, c=c: pass_at_k_curve(nn, c),
                  "numpy": lambda nn=nn, c=c, n=n: numpy_reference_curve(nn, c, n),
                  "numpy_key": lambda nn=nn, c=c, n=n: numpy_key_reference_curve(nn, c, n)}
        got = routes["leash"]()
        for name in ("numpy", "numpy_key"):  # 1 - prod loses small values' digits: atol
            np.testing.assert_allclose(got, routes[name](), rtol=1e-9, atol=1e-12)
        del got
        runs = {k: [] for k in routes}
        for _ in range(REPEAT):
            for k, f in routes.items():
                runs[k].append(timed_once(f))
        med = {k: medians(v) for k, v in runs.items()}
        out.append({"questions": questions, "n": n, "pairs": int(np.unique(c).size),
                    "result_MiB": questions * n * 8 / 2**20,
                    **{f"{k}_s": med[k][0] for k in routes},
                    **{f"{k}_cpu_s": med[k][1] for k in routes},
                    **{f"{k}_peak_MiB": peak_mib(f) for k, f in routes.items()}})
    return out


def plain_numpy_bootstrap(cb, cr, rng, n_boot, strata, level=0.95):
    """The plain numpy bootstrap of the support metrics: each stratum's (n_boot, size) draw with
    rng.integers (strata in sorted order, as leash draws them), the drawn categories offset by
    4 x replicate, one np.bincount, the ratios, np.nanquantile. Returns (replicates, low, high).
    """
    codes = support_codes(cb, cr)
    _, inv = np.unique(strata, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    cats = np.empty((n_boot, codes.size), dtype=np.intp)
    start = 0
    for size in np.bincount(inv):
        members = codes[order[start:start + size]]
        cats[:, start:start + size] = members[rng.integers(0, size, size=(n_boot, size))]
        start += size
    cats += 4 * np.arange(n_boot)[:, None]
    counts = np.bincount(cats.ravel(), minlength=4 * n_boot).reshape(n_boot, 4).astype(float)
    p, e, s = counts[:, 0], counts[:, 1], counts[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        srr, ndr = p / (p + s), e / (p + e)
        # SDS as Def. 3.3 has it (and leash computes it): the harmonic mean of SRR and NDR,
        # 0 where NDR is 0 and SRR is not
        sds = np.where((ndr == 0) & (srr > 0), 0.0, 2 * srr * ndr / (srr + ndr))
        rep = np.column_stack([counts, srr, ndr, sds, (e - s) / (p + e + s)])
    a = (1 - level) / 2
    low, high = np.nanquantile(rep, [a, 1 - a], axis=0)
    return rep, low, high


REPEAT = 7  # interleaved runs of each route; medians are reported


def timed_once(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call of ``fn``."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def medians(runs) -> tuple[float, float]:
    """(median wall, median CPU) of ``(wall, cpu)`` runs."""
    return float(np.median([w for w, _ in runs])), float(np.median([c for _, c in runs]))


def timed_cpu(fn, repeat=5):
    """(best wall seconds, best CPU seconds, result) over ``repeat`` calls."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return wall, cpu, out


def bench_bootstrap(n_questions, n_boot, rng):
    cb = rng.binomial(8, rng.beta(0.5, 0.5, n_questions))
    cr = rng.binomial(8, rng.beta(0.5, 0.5, n_questions))
    strata = np.repeat(np.arange(13), n_questions // 13 + 1)[:n_questions]
    fast, plain = (lambda: bootstrap_support(cb, cr, rng=np.random.default_rng(0), n_boot=n_boot,
                                             strata=strata, return_replicates=True),
                   lambda: plain_numpy_bootstrap(cb, cr, np.random.default_rng(0), n_boot, strata))
    # the same outputs first: the same draws, so every replicate's counts and four metrics
    # (NaN where a ratio is undefined) and the intervals
    (frame, got), (ref, low, high) = fast(), plain()
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_allclose(frame["low"].to_numpy(), low, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(frame["high"].to_numpy(), high, rtol=1e-12, equal_nan=True)
    # alternate the two so that both see the same load of the shared machine; medians
    runs = {"fast": [], "plain": []}
    for _ in range(REPEAT):
        runs["fast"].append(timed_once(fast))
        runs["plain"].append(timed_once(plain))
    (t_fast, c_fast), (t_plain, c_plain) = medians(runs["fast"]), medians(runs["plain"])
    mem = peak_mib(fast)
    return {"questions": n_questions, "replicates": n_boot, "bootstrap_s": t_fast,
            "bootstrap_cpu_s": c_fast, "bootstrap_peak_MiB": mem, "plain_s": t_plain,
            "plain_cpu_s": c_plain, "ratio": t_fast / t_plain, "ratio_cpu": c_fast / c_plain}


def one_pass_log_ratio(n, c, k):
    """log(C(n-c, k) / C(n, k)) as pass_at_k computed it before chunking: all sum(min(c, k))
    log terms at once. The baseline here and the reference of the tests' bitwise checks."""
    a, b = np.maximum(c, k), np.minimum(c, k)
    seg = np.repeat(np.arange(n.size), b)
    j = np.arange(int(b.sum())) - np.repeat(np.cumsum(b) - b, b)
    with np.errstate(divide="ignore"):
        terms = np.log1p(-np.minimum(a[seg] / (n[seg] - j), 1.0))
    return np.bincount(seg, weights=terms, minlength=n.size)


def one_pass_pass_at_k(n, c, k):
    """pass_at_k before chunking."""
    return -np.expm1(one_pass_log_ratio(n, c, k)) + 0.0


def bench_pass_at_k_memory(n_questions, n):
    nn = np.full(n_questions, n)
    half = nn // 2
    t_chunked, got = timed(lambda: pass_at_k(nn, half, half), repeat=1)
    mem = peak_mib(lambda: pass_at_k(nn, half, half))
    t_one, ref = timed(lambda: one_pass_pass_at_k(nn, half, half), repeat=1)
    mem_one = peak_mib(lambda: one_pass_pass_at_k(nn, half, half))
    np.testing.assert_array_equal(got, ref)
    return {"questions": n_questions, "n": n, "terms": int(half.sum()),
            "chunked_MiB": mem, "one_pass_MiB": mem_one, "ratio": mem_one / mem,
            "chunked_s": t_chunked, "one_pass_s": t_one}


def bench_budget_check(n_ks, n_loop, n_questions=10):
    n = np.full(n_questions, n_ks, dtype=np.int64)
    ks = np.arange(1, n_ks + 1, dtype=np.int64)
    t_vec, _ = timed(lambda: check_ks_in_range(ks, n, "pass_at_k_curve"), repeat=3)

    def loop():
        for kk in ks[:n_loop]:
            check_k_in_range(np.int64(kk), n, "pass_at_k_curve")

    t_loop, _ = timed(loop, repeat=1)
    t_loop_all = t_loop / n_loop * n_ks
    return {"budgets": n_ks, "questions": n_questions, "check_s": t_vec, "loop_budgets": n_loop,
            "loop_s": t_loop, "loop_scaled_s": t_loop_all, "ratio": t_loop_all / t_vec,
            "ratio_cpu": t_loop.cpu / n_loop * n_ks / t_vec.cpu}


def unblocked_weights(n_items, rng, n_boot, strata=None):
    """leash's resampling weights before blocking: each stratum's (n_boot, size) draw at once,
    into the whole (n_boot, n_items) matrix (the same random numbers in the same order)."""
    if strata is None:
        groups = [np.arange(n_items)]
    else:
        _, inv = np.unique(strata, return_inverse=True)
        groups = [np.flatnonzero(inv == g) for g in range(inv.max() + 1)]
    w = np.zeros((n_boot, n_items), dtype=np.int64)
    rows = np.arange(n_boot)[:, None]
    for members in groups:
        draw = members[rng.integers(0, members.size, size=(n_boot, members.size))]
        np.add.at(w, (np.broadcast_to(rows, draw.shape), draw), 1)
    return w


def unblocked_support_replicates(cb, cr, rng, n_boot, strata=None):
    """bootstrap_support's (n_boot, 8) replicates before blocking: weights @ category indicators."""
    codes = support_codes(cb, cr)
    onehot = (codes[:, None] == np.arange(4)[None, :]).astype(np.float64)
    counts = unblocked_weights(codes.size, rng, n_boot, strata) @ onehot
    return np.column_stack([counts, np.column_stack(support_metrics(*counts.T))])


def unblocked_pass_at_k(nb, cb, nr, cr, ks, rng, n_boot, strata=None, level=0.95):
    """bootstrap_pass_at_k before blocking: (estimate, low, high) per series (base, rlvr,
    rlvr - base) and budget, from the float weight matrix times each series' curves."""
    mb, mr = pass_at_k_curve(nb, cb, ks), pass_at_k_curve(nr, cr, ks)
    w = unblocked_weights(mb.shape[0], rng, n_boot, strata).astype(np.float64)
    a = (1 - level) / 2
    out = []
    for m in (mb, mr, mr - mb):
        rep = (w @ m) / m.shape[0]
        out.append(np.column_stack([m.mean(axis=0), np.quantile(rep, a, axis=0),
                                    np.quantile(rep, 1 - a, axis=0)]))
    return np.concatenate(out)


def peak_and_result(fn):
    """(tracemalloc peak in MiB, result) of one call of ``fn``."""
    tracemalloc.start()
    out = fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, out


def bench_bootstrap_memory(n_questions, n_boot, rng):
    cb = rng.binomial(8, rng.beta(0.5, 0.5, n_questions))
    cr = rng.binomial(8, rng.beta(0.5, 0.5, n_questions))
    n = np.full(n_questions, 8)
    ks = [1, 2, 4, 8]
    strata = np.repeat(np.arange(13), n_questions // 13 + 1)[:n_questions]
    out = {"questions": n_questions, "replicates": n_boot}
    out["support_MiB"], (_, got) = peak_and_result(lambda: bootstrap_support(
        cb, cr, rng=np.random.default_rng(0), n_boot=n_boot, strata=strata,
        return_replicates=True))
    out["support_unblocked_MiB"], ref = peak_and_result(lambda: unblocked_support_replicates(
        cb, cr, np.random.default_rng(0), n_boot, strata))
    np.testing.assert_array_equal(got, ref)  # bitwise: counts are exact either way
    out["passk_MiB"], got = peak_and_result(lambda: bootstrap_pass_at_k(
        n, cb, n, cr, ks, rng=np.random.default_rng(0), n_boot=n_boot, strata=strata))
    out["passk_unblocked_MiB"], ref = peak_and_result(lambda: unblocked_pass_at_k(
        n, cb, n, cr, ks, np.random.default_rng(0), n_boot, strata))
    diff = np.abs(got[["estimate", "low", "high"]].to_numpy(dtype=float) - ref)
    out["passk_max_abs_diff"] = float(diff.max())
    assert out["passk_max_abs_diff"] <= 1e-12
    out["support_ratio"] = out["support_unblocked_MiB"] / out["support_MiB"]
    out["passk_ratio"] = out["passk_unblocked_MiB"] / out["passk_MiB"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(20250719)
    if args.quick:
        shapes = bench_curve_shapes(((100, 512), (2000, 64)), rng)
        curve = bench_curve(100, 512, 8, rng)
        boot = bench_bootstrap(340, 100, rng)
        mem = bench_pass_at_k_memory(10, 10**5)
        check = bench_budget_check(10**5, 10**3)
        bmem = bench_bootstrap_memory(340, 10**4, rng)
    else:
        shapes = bench_curve_shapes(SHAPES, rng)
        curve = bench_curve(1547, 8192, 16, rng)
        boot = bench_bootstrap(3400, 1000, rng)
        mem = bench_pass_at_k_memory(100, 10**6)
        check = bench_budget_check(10**6, 10**4)
        bmem = bench_bootstrap_memory(3400, 10**5, rng)
    print("pass@k curve, every k from 1 to n, against plain numpy's cumulative product per "
          "distinct (n, c) (np.unique of rows, the rows indexed by question) and the same with "
          "a one-key np.unique and np.take (target: <= 1.0x; outputs equal within 1e-9, "
          f"compared first; medians of {REPEAT} interleaved runs; peak memory by tracemalloc)")
    print(f"  {'questions x n':>16} {'pairs':>6} {'leash s':>8} {'CPU':>7} {'numpy s':>8} "
          f"{'CPU':>7} {'key s':>7} {'CPU':>7}  {'leash/numpy CPU (wall)':>22}  "
          f"{'leash/key CPU (wall)':>20}  {'peak MiB: leash':>15} {'numpy':>6} {'result':>6}")
    for r in shapes:
        shape = f"{r['questions']:,} x {r['n']:,}"
        print(f"  {shape:>16} {r['pairs']:>6} {r['leash_s']:8.3f} {r['leash_cpu_s']:7.3f} "
              f"{r['numpy_s']:8.3f} {r['numpy_cpu_s']:7.3f} {r['numpy_key_s']:7.3f} "
              f"{r['numpy_key_cpu_s']:7.3f}  "
              f"{r['leash_cpu_s'] / r['numpy_cpu_s']:14.2f} ({r['leash_s'] / r['numpy_s']:.2f})  "
              f"{r['leash_cpu_s'] / r['numpy_key_cpu_s']:12.2f} "
              f"({r['leash_s'] / r['numpy_key_s']:.2f})  {r['leash_peak_MiB']:15.0f} "
              f"{r['numpy_peak_MiB']:6.0f} {r['result_MiB']:6.0f}")
    print("pass@k curve against the per-k loop of public scripts (target: < 1 s, >= 20x)")
    print(f"  {curve['questions']} questions x n={curve['n']}: "
          f"curve {curve['curve_all_k_s']:.3f} s, peak {curve['curve_peak_MiB']:.0f} MiB")
    print(f"  per-k product-form loop on {curve['loop_ks']} budgets: {curve['loop_s']:.2f} s vs "
          f"curve on the same budgets {curve['curve_same_ks_s']:.4f} s -> "
          f"{curve['ratio_same_ks']:.0f}x wall, {curve['ratio_same_ks_cpu']:.0f}x CPU")
    print(f"  loop scaled to all {curve['n']} budgets: {curve['loop_all_k_s_scaled']:.0f} s -> "
          f"{curve['ratio_all_k']:.0f}x; max |difference| {curve['max_abs_diff_vs_loop']:.1e}")
    print("support counts + metrics with bootstrap CIs vs a plain numpy bootstrap (target: within "
          "1.2x)")
    print(f"  {boot['questions']} questions in 13 strata x {boot['replicates']} replicates: "
          f"bootstrap_support {boot['bootstrap_s'] * 1e3:.1f} ms wall / "
          f"{boot['bootstrap_cpu_s'] * 1e3:.1f} ms CPU, peak {boot['bootstrap_peak_MiB']:.0f} MiB; "
          f"plain numpy {boot['plain_s'] * 1e3:.1f} ms wall / {boot['plain_cpu_s'] * 1e3:.1f} ms "
          f"CPU -> {boot['ratio']:.2f}x wall, {boot['ratio_cpu']:.2f}x CPU (medians; the same "
          "replicates and intervals, compared first)")
    print("pass@k peak memory, chunked vs all terms at once (target: a fixed few tens of MiB)")
    print(f"  {mem['questions']} questions x n={mem['n']}, c = k = n/2 ({mem['terms']:.1e} "
          f"terms): chunked {mem['chunked_MiB']:.1f} MiB ({mem['chunked_s']:.2f} s) vs one pass "
          f"{mem['one_pass_MiB']:.0f} MiB ({mem['one_pass_s']:.2f} s) -> {mem['ratio']:.0f}x "
          "less; results bitwise equal")
    print("pass@k curve budget check (one array comparison vs a check per budget)")
    print(f"  {check['budgets']} budgets x {check['questions']} questions: "
          f"{check['check_s'] * 1e3:.1f} ms vs per-budget loop {check['loop_s']:.2f} s on "
          f"{check['loop_budgets']} budgets, scaled {check['loop_scaled_s']:.1f} s -> "
          f"{check['ratio']:.0f}x wall, {check['ratio_cpu']:.0f}x CPU")
    print("bootstrap peak memory, blocks of replicates vs the whole weight matrix (target: a "
          "fixed working set plus n_boot x the statistics)")
    print(f"  {bmem['questions']} questions x {bmem['replicates']} replicates: bootstrap_support "
          f"{bmem['support_MiB']:.0f} MiB vs unblocked {bmem['support_unblocked_MiB']:.0f} MiB -> "
          f"{bmem['support_ratio']:.0f}x less (replicates bitwise equal); bootstrap_pass_at_k "
          f"{bmem['passk_MiB']:.0f} MiB vs unblocked {bmem['passk_unblocked_MiB']:.0f} MiB -> "
          f"{bmem['passk_ratio']:.0f}x less (max |difference| "
          f"{bmem['passk_max_abs_diff']:.1e})")
    for r in shapes:  # the lines benchmarks/run.py gathers into its summary
        print(f"RATIO pass@k curve {r['questions']:,} x {r['n']:,} / per-distinct numpy: "
              f"{r['leash_cpu_s'] / r['numpy_cpu_s']:.2f} CPU, {r['leash_s'] / r['numpy_s']:.2f} "
              f"wall (/ one-key numpy: {r['leash_cpu_s'] / r['numpy_key_cpu_s']:.2f} CPU); peak "
              f"{r['leash_peak_MiB'] - r['result_MiB']:.0f} MiB beyond the result "
              f"(numpy {r['numpy_peak_MiB'] - r['result_MiB']:.0f})")
    print(f"RATIO bootstrap_support / plain numpy (same draws, same outputs): "
          f"{boot['ratio_cpu']:.2f} CPU, {boot['ratio']:.2f} wall")
    sys.stdout.flush()
    return shapes, curve, boot, mem, check, bmem


if __name__ == "__main__":
    main()
