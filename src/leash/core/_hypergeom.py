"""Hypergeometric tails, the sums behind G-Pass@k, mG-Pass@k and pass^k (:mod:`leash.core.passk`).

X is the number of correct samples among ``k`` drawn without replacement from ``n`` samples of
which ``c`` are correct. :func:`at_least` is P(X >= m) and :func:`excess_mean` is E[(X - L)+],
both per question: exactly rounded up to ``n`` = :data:`EXACT_N` (integers), to a few units
in the last place beyond, and refused (one
:class:`~leash.core._validation.InvalidParameterError`) where the work would not be small.

Written by hand, because ``scipy.stats.hypergeom`` (Boost) is neither bounded nor exact at large
n: beyond about 1e8 samples it factors binomial coefficients into primes, so its time grows with
n (a second at n = 1e9, no answer within minutes at n = 1e15), and its relative error reaches
1e-7 at n = 1e9. The method here is R's ``phyper`` (Welinder's summation) over ``dhyper`` by
Loader's saddle-point formula (C. Loader, "Fast and Accurate Computation of Binomial
Probabilities", 2000):

* One probability is a ratio of three binomial probabilities at a common p, each computed near
  its mode from Stirling's error term and the deviance ``bd0``, which are small numbers: no two
  large logarithms cancel, so the relative error is ~1e-15 (at huge n, about n / 2**53 / sd(X),
  from the rounding of the binomial means).
* A tail is summed from its inner end outward on the side away from the mode, where the terms
  decrease, in blocks: each block's first term directly, the others by the ratio
  ``P(X = j-1) / P(X = j)``, until the geometric bound on what is left is below 2**-56 of the
  sum. The other tail is one minus it: that side holds the mode, so it is not small and nothing
  cancels.
* Work: a tail sums at most about 9 standard deviations of X in terms (fewer from deep in the
  tail), computed as :data:`MAX_TERMS` at most per question. A question that would need more (a
  standard deviation of X near 450,000: n and k both beyond ~1e12) is refused before any
  work, naming ``k``, its value and the cap; so is an ``n`` beyond :data:`MAX_N`.
"""

from __future__ import annotations

import math

import numpy as np

from leash.core._validation import invalid, shown

__all__ = ["EXACT_N", "MAX_N", "MAX_TERMS", "at_least", "excess_mean"]

#: Terms of one tail summed per question at most (the work cap of :func:`at_least` and
#: :func:`excess_mean`); a question that needs more is refused.
MAX_TERMS = 1 << 22
#: The largest ``n`` the sums take: float64 holds every integer up to it exactly.
MAX_N = 1 << 53

_TOL = 2.0 ** -56  # what is left of a sum when it stops, relative to the sum
_CHUNK = 1 << 18   # terms materialised at once
_LN_2PI = 1.8378770664093454835606594728112352797227949

# ln(n!) - (n + 1/2) ln(n) + n - ln(2 pi) / 2 for n = 0..15, computed to 50 digits with
# decimal (tests/test_g_pass.py recomputes them); index 0 is never used.
_STIRLERR_SMALL = np.array([
    0.0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834, 0.020790672103765093,
    0.016644691189821193, 0.013876128823070748, 0.01189670994589177, 0.010411265261972096,
    0.009255462182712733, 0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
    0.006408994188004207, 0.0059513701127588475, 0.005554733551962801])
# Stirling's series of that error, B_{2i} / (2i (2i - 1)): 1/12, 1/360, 1/1260, 1/1680, ...
_S = (1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188, 691 / 360360, 1 / 156)


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """ln(n!) - ln(sqrt(2 pi n) (n/e)^n) for whole numbers n >= 1 (float array)."""
    out = np.empty_like(n)
    small = n <= 15
    out[small] = _STIRLERR_SMALL[n[small].astype(np.int64)]
    big = n[~small]
    nn = big * big
    s = _S[-1]
    for coef in _S[-2::-1]:  # the series beyond 15: its 8th term is below 1e-19 there
        s = coef - s / nn
    out[~small] = s / big
    return out


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The deviance ``x ln(x/m) + m - x`` (x, m > 0), by its series where x is near m."""
    out = np.empty_like(x)
    d = x - m
    near = np.abs(d) < 0.1 * (x + m)
    far = ~near
    xf, mf = x[far], m[far]
    out[far] = xf * np.log(xf / mf) + mf - xf
    xn, dn = x[near], d[near]
    v = dn / (xn + m[near])  # |v| < 0.1: each term of the series gains two digits
    s = dn * v
    ej = 2 * xn * v
    v2 = v * v
    for j in range(1, 12):
        ej = ej * v2
        s = s + ej / (2 * j + 1)
    out[near] = s
    return out


def _log_dbinom(x, size, p, q):
    """The log of P(B = x) for B binomial(size, p), q = 1 - p, all float arrays (Loader's form)."""
    out = np.zeros_like(x)
    zero, full = x == 0, x == size
    mid = ~zero & ~full
    for at, succ, fail in ((zero & (size > 0), p, q), (full & ~zero, q, p)):
        # every draw a failure (at x = 0) or a success (x = size)
        s, ps, pf = size[at], succ[at], fail[at]
        out[at] = np.where(ps < 0.1, -_bd0(s, s * pf) - s * ps, s * np.log(pf))
    xm, sm = x[mid], size[mid]
    lc = (_stirlerr(sm) - _stirlerr(xm) - _stirlerr(sm - xm) - _bd0(xm, sm * p[mid])
          - _bd0(sm - xm, sm * q[mid]))
    out[mid] = lc - 0.5 * (_LN_2PI + np.log(xm) + np.log1p(-xm / sm))
    return out


def _log_dhyper(x, good, bad, draws):
    """The log of P(X = x), X the good ones among ``draws`` drawn from ``good + bad`` (float arrays;
    x within the support). Three binomial probabilities at p = draws / total, each near its
    mode.
    """
    total = good + bad
    p, q = draws / total, (total - draws) / total
    return (_log_dbinom(x, good, p, q) + _log_dbinom(draws - x, bad, p, q)
            - _log_dbinom(draws, total, p, q))


def _ratio_down(j, good, bad, draws):
    """P(X = j - 1) / P(X = j)."""
    return j * (bad - draws + j) / ((draws + 1 - j) * (good + 1 - j))


def _lower_sums(x, good, bad, draws):
    """``(S0, S1)``: sum over j <= x of P(X = j) and of (x + 1 - j) P(X = j), for x at or
    below the mode (the terms decrease from x down) and within the support.
    """
    count = len(x)
    s0, s1 = np.zeros(count), np.zeros(count)
    lo = np.maximum(0.0, draws - bad)
    log_anchor = _log_dhyper(x, good, bad, draws)
    top = x.copy()  # the first j of the next block
    done = np.zeros(count, dtype=bool)
    width = 16
    while not done.all():
        todo = np.flatnonzero(~done)
        for part in np.array_split(todo, max(1, -(-len(todo) * width // _CHUNK))):
            j0, g, b, d = top[part], good[part], bad[part], draws[part]
            # the block's first term relative to the anchor, directly (no error carried over)
            t0 = np.exp(_log_dhyper(j0, g, b, d) - log_anchor[part])
            js = j0[:, None] - np.arange(width)
            r = np.ones_like(js)
            r[:, 1:] = _ratio_down(js[:, :-1], g[:, None], b[:, None], d[:, None])
            r[js < lo[part, None]] = 0.0  # past the support's end (the ratio gives 0 there)
            terms = t0[:, None] * np.cumprod(r, axis=1)
            weights = x[part, None] + 1 - js
            s0[part] += terms.sum(axis=1)
            s1[part] += (terms * weights).sum(axis=1)
            last, j_last, w_last = terms[:, -1], js[:, -1], weights[:, -1]
            rho = np.where(j_last - 1 < lo[part], 0.0,
                           _ratio_down(j_last, g, b, d))
            with np.errstate(divide="ignore", invalid="ignore"):
                g1 = rho / (1 - rho)
                left0 = last * g1
                left1 = last * (w_last * g1 + g1 / (1 - rho))
            finished = (j_last - 1 < lo[part]) | (
                (rho < 1) & (left0 <= _TOL * s0[part]) & (left1 <= _TOL * s1[part]))
            done[part] = finished
            top[part] = j0 - width
        width = min(width * 4, 1024)
    anchor = np.exp(log_anchor)
    return anchor * s0, anchor * s1


def _support(n, c, k):
    return np.maximum(0, c + k - n), np.minimum(c, k)


def _mode(n, c, k):
    # floor((k + 1)(c + 1) / (n + 2)): only which side is summed depends on it
    return np.floor((k + 1.0) * (c + 1.0) / (n + 2.0))


def _check_work(func, where, n, c, k, start, mode, lo):
    """Refuse, before any work, a question whose tail would sum more than MAX_TERMS terms
    (from ``start``, ``mode - start`` away from the mode; about 9 sd of X from it) or whose n
    is beyond MAX_N.
    """
    if (n > MAX_N).any():
        i = int(np.flatnonzero(n > MAX_N)[0])
        raise invalid("n", func, f"at most 2**53 = {MAX_N} (float64's exact integers, in which "
                      "the hypergeometric sums are computed)",
                      f"{shown(n[i])} at index {where[i]}", int(n[i]))
    nf, cf, kf = (a.astype(np.float64) for a in (n, c, k))
    var = kf * (cf / nf) * ((nf - cf) / nf) * (nf - kf) / np.maximum(nf - 1, 1)
    spread = 2 * var * 40.0  # 2 sd^2 ln(1/tol), ln(2**56) < 40
    gap = np.maximum(np.abs(mode - start), 0.0)
    need = np.minimum(np.abs(start - lo) + 1, spread / (gap + np.sqrt(gap * gap + spread)) + 64)
    over = need > MAX_TERMS
    if over.any():
        i = int(np.flatnonzero(over)[0])
        raise invalid("k", func, f"at most what keeps the exact hypergeometric tail of a "
                      f"question within {MAX_TERMS} terms (leash.core.passk's MAX_TERMS; with "
                      f"n = {int(n[i])} and c = {int(c[i])} it would sum about "
                      f"{float(need[i]):.3g})", f"{int(k[i])} at index {where[i]}", int(k[i]))


def _distinct(func, *arrays):
    """``func(where, *columns)`` of the distinct rows of the int64 ``arrays`` (broadcast, 1-d),
    spread back to every question: questions that share their numbers are computed once
    (``where``: the index of the first question of each row, for messages).
    """
    cols = np.stack([np.atleast_1d(a).astype(np.int64).ravel()
                     for a in np.broadcast_arrays(*arrays)], axis=1)
    if not len(cols):
        return np.zeros(0)
    order = np.lexsort(cols.T[::-1])  # np.unique(axis=0) sorts rows as records: far slower
    ranked = cols[order]
    new = np.ones(len(ranked), dtype=bool)
    new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    back = np.empty(len(ranked), dtype=np.int64)
    back[order] = np.cumsum(new) - 1
    return func(order[new], *ranked[new].T)[back]


def at_least(m, n, c, k, func: str) -> np.ndarray:
    """P(X >= m) per question (int arrays broadcast to one shape; 1-d float array out)."""
    return _distinct(lambda *a: _exact_or_summed(_at_least, a, func, weighted=False),
                     m, n, c, k)


def excess_mean(low, n, c, k, func: str) -> np.ndarray:
    """E[(X - low)+] per question (int arrays broadcast to one shape; 1-d float array out):
    the upper tail's weighted sum where it holds no mode, else ``E[X] - low`` plus the lower
    tail's (both terms >= 0: nothing cancels).
    """
    return _distinct(lambda *a: _exact_or_summed(_excess_mean, a, func, weighted=True),
                     low, n, c, k)


#: Up to this n the sums are exact: integers (math.comb), one correctly rounded division.
EXACT_N = 128


def _exact_or_summed(summed, args, func, weighted):
    """Rows with ``n <= EXACT_N`` exactly (cheap: at most 129 terms of at most 128 bits),
    the others by ``summed``.
    """
    where, m, n, c, k = args
    out = np.empty(len(n))
    small = n <= EXACT_N
    for i in np.flatnonzero(small):
        mi, ni, ci, ki = int(m[i]), int(n[i]), int(c[i]), int(k[i])
        total = sum(math.comb(ci, j) * math.comb(ni - ci, ki - j) * (j - mi if weighted else 1)
                    for j in range(mi + weighted, min(ci, ki) + 1))
        out[i] = total / math.comb(ni, ki)
    big = ~small
    if big.any():
        out[big] = summed(where[big], m[big], n[big], c[big], k[big], func)
    return out


def _at_least(where, m, n, c, k, func):
    lo, hi = _support(n, c, k)
    out = np.where(m <= lo, 1.0, 0.0)
    todo = np.flatnonzero((m > lo) & (m <= hi))
    if not todo.size:
        return out
    m, n, c, k, lo, where = m[todo], n[todo], c[todo], k[todo], lo[todo], where[todo]
    x = m - 1  # P(X > x)
    mode = _mode(n, c, k)
    up = x >= mode  # the upper tail holds no mode: summed directly (as X' = k - X below)
    start = np.where(up, k - m, x)  # where the summed tail starts, in its own variable
    lo_sum = np.where(up, np.maximum(0, k - c), lo)
    _check_work(func, where, n, c, k, start, np.where(up, k - mode, mode), lo_sum)
    good = np.where(up, n - c, c).astype(np.float64)
    s0, _ = _lower_sums(start.astype(np.float64), good, (n - good).astype(np.float64),
                        k.astype(np.float64))
    out[todo] = np.clip(np.where(up, s0, 1.0 - s0), 0.0, 1.0)
    return out


def _excess_mean(where, low, n, c, k, func):
    lo, hi = _support(n, c, k)
    # E[X] - low = (k c - low n) / n, exactly rounded (Python ints: k c may pass int64)
    gap = np.array([(int(kk) * int(cc) - int(ll) * int(nn)) / int(nn)
                    for kk, cc, ll, nn in zip(k, c, low, n)], dtype=np.float64)
    out = np.where(low < lo, gap, 0.0)  # below the support: X - low > 0 always
    todo = np.flatnonzero((low >= lo) & (low < hi))
    if not todo.size:
        return out
    low, n, c, k, lo, gap, where = (a[todo] for a in (low, n, c, k, lo, gap, where))
    mode = _mode(n, c, k)
    up = low >= mode
    # up: sum_{j > low} (j - low) P(X = j), as X' = k - X <= k - low - 1 with weights k-low-X'
    # else: E[X] - low + sum_{j < low} (low - j) P(X = j)
    start = np.where(up, k - low - 1, low - 1)
    lo_sum = np.where(up, np.maximum(0, k - c), lo)
    empty = start < lo_sum  # no term below low: E[(X - low)+] = E[X] - low
    _check_work(func, where, n, c, k, start, np.where(up, k - mode, mode), lo_sum)
    good = np.where(up, n - c, c).astype(np.float64)
    res = np.where(up, 0.0, gap)
    run = np.flatnonzero(~empty)
    if run.size:
        _, s1 = _lower_sums(start[run].astype(np.float64), good[run],
                            (n[run] - good[run]).astype(np.float64),
                            k[run].astype(np.float64))
        res[run] += s1
    out[todo] = res
    return out

