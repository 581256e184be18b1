"""pass@k estimators: unbiased (Chen et al., 2021), "first k samples", and avg@n.

Two estimators are offered because the paper's printed tables use one and the literature the
other (the paper states no estimator; which one its tables use is inferred here from the
printed values, e.g. Table 14):

``"unbiased"``
    1 - C(n-c, k) / C(n, k): the probability that a random k-subset of the n samples contains a
    correct one. Chen et al. (2021).
``"first-k"``
    1[the first correct sample has index < k]: what the paper's printed pass@k tables report (its
    values are multiples of 1/N and stay flat between some k, which the unbiased estimator cannot
    do). It needs the sample order, via ``first_correct``.

Numerics. C(n-c, k)/C(n, k) = prod_{j<k} (1 - c/(n-j)) = prod_{j<c} (1 - k/(n-j)) (the ratio is
symmetric in c and k). We evaluate the shorter product as a sum of ``log1p`` terms and return
``-expm1(sum)``, so small values of pass@k (small c and k, large n) keep full relative precision,
where ``1 - prod`` would cancel. A question with n - c < k gets a ``log1p(-1) = -inf`` term and
so exactly 1.0; c = 0 gives exactly 0.0.

The curve over k uses the cumulative form of the recurrence r(k) = r(k-1) (n-c-k+1)/(n-k+1), as a
cumulative sum of the same log terms, so every k from 1 to n costs O(n) per question; questions
that share (n, c) are computed once.

Memory. Both kernels materialise at most ``_CHUNK_TERMS`` log terms at a time (a working set of
a few tens of MiB), whatever n, the number of questions and the number of budgets: beyond that
only the inputs and the output grow. A sum that straddles chunks is carried into the next chunk
as its running value, so it is accumulated in the same order as in one pass (``np.bincount`` and
``np.cumsum`` add sequentially) and results do not depend on the chunk size, bit for bit.

Kernels. :func:`pass_at_k_kernel`, :func:`check_curve_inputs` and :func:`curve_kernel` are the
bodies of the public functions without their declared checks, for the modules that validated
at their own boundary (``support``, ``stats``); they are not in ``__all__``.
"""

from __future__ import annotations

import numbers

import numpy as np

# MAX_N, MAX_TERMS: the bounds of G-Pass@k, mG-Pass@k and pass^k (n, and the terms of a tail
# summed per question), public here
from leash.core._hypergeom import MAX_N, MAX_TERMS, at_least, excess_mean
from leash.core._validation import (
    Counts,
    Interval,
    StrOptions,
    check_c_le_n,
    check_k_in_range,
    check_ks_in_range,
    check_pairs,
    invalid,
    same_length,
    validate_params,
)

ESTIMATORS = ("unbiased", "first-k")

# The declared kinds of the parameters (leash.core._validation): counts, budgets, sample indices.
COUNTS = Counts()
BUDGETS = Counts(minimum=1)
BUDGET_GRID = Counts(minimum=1, nonempty=True)
FIRST_CORRECT = Counts(minimum=-1, note="-1: no correct sample")

# Log terms materialised at once by the kernels below. A term costs about five 8-byte temporaries
# at its peak, so 2**19 terms keep the working set near 20 MiB (benchmarks/bench_core.py).
_CHUNK_TERMS = 1 << 19

__all__ = ["ESTIMATORS", "G_PASS_THRESHOLDS", "MAX_N", "MAX_TERMS", "found_within", "pass_at_k",
           "pass_at_k_first", "pass_at_k_curve", "avg_at_n", "g_pass_at_k", "mg_pass_at_k",
           "pass_hat_k"]

#: The thresholds tau of G-Pass@k_tau that OpenCompass reports (Liu et al., 2024,
#: arXiv 2412.13147; ``icl_base_evaluator.py``, ``BaseEvaluator.evaluate``).
G_PASS_THRESHOLDS = (0.0, 0.25, 0.5, 0.75, 1.0)


@validate_params({"n": [COUNTS], "c": [COUNTS], "k": [BUDGETS]})
def pass_at_k(n, c, k):
    """Unbiased pass@k estimator of Chen et al. (2021), vectorized over questions.

    Parameters
    ----------
    n : int or array_like of int, shape (n_questions,)
        Number of samples drawn per question.
    c : int or array_like of int, shape (n_questions,)
        Number of verified-correct samples per question, ``0 <= c <= n``.
    k : int or array_like of int, shape (n_questions,)
        Budget, ``1 <= k <= n`` for every question.

    Returns
    -------
    float or ndarray of float, shape (n_questions,)
        ``1 - C(n-c, k) / C(n, k)`` per question; a float when every input is a scalar.
        ``c == 0`` gives exactly 0.0 and ``n - c < k`` exactly 1.0.

    Raises
    ------
    ValueError
        If a count is negative or not a whole number, if ``c > n``, or if ``k`` is outside
        ``[1, n]`` for some question (the message names k, the smallest n and its index).
        Unlike many public copies of this estimator, ``k > n`` is an error, never 1.0.
    TypeError
        If an input is not numeric, or is a bool (True is not a count).

    Examples
    --------
    >>> round(pass_at_k(10, 3, 2), 12)  # 1 - C(7,2)/C(10,2) = 1 - 21/45 = 24/45
    0.533333333333
    """
    func = "pass_at_k"
    _check_n_c_k(func, n, c, k)
    return _shaped(pass_at_k_kernel(n, c, k), n, c, k)


def pass_at_k_kernel(n, c, k):
    """pass@k of validated int64 counts (scalars or 1-D of one length): the unchecked kernel
    behind :func:`pass_at_k`, for callers that validated at their own boundary.
    """
    n, c, k = (np.atleast_1d(a) for a in np.broadcast_arrays(n, c, k))
    return -np.expm1(_log_ratio(n, c, k)) + 0.0  # + 0.0 turns -0.0 (c == 0) into 0.0


def _log_ratio(n, c, k):
    """log(C(n-c, k) / C(n, k)) per element of 1-D int64 arrays of equal length (validated).

    log r = sum_{j < b} log1p(-a / (n - j)) with a = max(c, k), b = min(c, k). The terms of all
    elements, laid end to end, are evaluated ``_CHUNK_TERMS`` at a time. An element whose terms
    straddle two chunks enters the second one's ``bincount`` with its running sum as its first
    weight, so every sum is accumulated in the same order as in a single pass.
    """
    a = np.maximum(c, k)
    b = np.minimum(c, k)
    ends = np.cumsum(b)
    starts = ends - b
    total = int(ends[-1]) if n.size else 0
    log_r = np.zeros(n.size, dtype=np.float64)
    for t0 in range(0, total, _CHUNK_TERMS):
        t1 = min(t0 + _CHUNK_TERMS, total)
        # elements q0 .. q1-1 have terms in [t0, t1) (those with b = 0 among them have none)
        q0 = int(np.searchsorted(ends, t0, side="right"))
        q1 = int(np.searchsorted(starts, t1, side="left"))
        lo = np.maximum(starts[q0:q1], t0)
        cnt = np.minimum(ends[q0:q1], t1) - lo
        seg = np.repeat(np.arange(q1 - q0), cnt)
        j = np.arange(t0, t1) - np.repeat(starts[q0:q1], cnt)  # term index within its element
        x = a[q0:q1][seg].astype(np.float64)
        x /= n[q0:q1][seg] - j
        del j
        # Once a >= n - j the product hits a zero factor; clip so the term is log(0) = -inf
        # rather than the log of a negative number. A -inf term (n - c < k) makes the sum -inf,
        # hence pass@k exactly 1.
        np.minimum(x, 1.0, out=x)
        np.negative(x, out=x)
        with np.errstate(divide="ignore"):
            np.log1p(x, out=x)
        weights = np.concatenate([log_r[q0:q1], x])
        del x
        seg = np.concatenate([np.arange(q1 - q0), seg])
        log_r[q0:q1] = np.bincount(seg, weights=weights, minlength=q1 - q0)
    return log_r


@validate_params({"first_correct": [FIRST_CORRECT], "n": [COUNTS], "k": [BUDGETS]})
def pass_at_k_first(first_correct, n, k):
    """The "first k samples" pass@k: 1 if a correct sample is among the first k, else 0.

    This is the estimator behind the paper's printed pass@k tables (Tables 3, 4, 6-12 and 14;
    inferred here from the printed values, as the paper states no estimator).

    Parameters
    ----------
    first_correct : int or array_like of int, shape (n_questions,)
        0-based index (in generation order) of the first verified-correct sample, or -1 when no
        sample is correct.
    n : int or array_like of int, shape (n_questions,)
        Number of samples per question; ``first_correct < n`` is required.
    k : int
        Budget, ``1 <= k <= n`` for every question.

    Returns
    -------
    float or ndarray of float, shape (n_questions,)
        1.0 where ``0 <= first_correct < k``, else 0.0.

    Examples
    --------
    >>> pass_at_k_first([2, -1, 0], 8, 3).tolist()  # first correct at 2, never, 0
    [1.0, 0.0, 1.0]
    """
    func = "pass_at_k_first"
    fc = first_correct
    same_length(func, first_correct=fc, n=n, k=k)
    check_k_in_range(k, n, func)
    _check_first_lt_n(fc, n, func)
    out = np.asarray(found_within(fc, k), dtype=np.float64)
    return float(out) if out.ndim == 0 else out


def found_within(first_correct, k):
    """Whether a correct sample is among the first ``k`` samples: ``0 <= first_correct < k``.

    The one definition of "found within the first k samples" in leash: the "first-k" pass@k
    estimator, the support tables below the full budget, and pairing at a common budget all
    call it. It is the kernel of :func:`pass_at_k_first` without its checks, for inputs
    validated at the caller's boundary.

    Parameters
    ----------
    first_correct : int or array_like of int
        0-based index of the first verified-correct sample, -1 when no sample is correct.
    k : int or array_like of int, broadcastable with ``first_correct``
        Budget (number of leading samples).

    Returns
    -------
    bool or ndarray of bool
        True where ``0 <= first_correct < k``; the broadcast shape of the inputs.

    Examples
    --------
    >>> found_within([-1, 0, 3, 7], 4).tolist()
    [False, True, True, False]
    """
    fc = np.asarray(first_correct)
    out = (fc >= 0) & (fc < np.asarray(k))
    return bool(out) if out.ndim == 0 else out


@validate_params({"n": [COUNTS], "c": [COUNTS], "ks": [BUDGET_GRID, None],
                  "estimator": [StrOptions(*ESTIMATORS)], "first_correct": [FIRST_CORRECT, None]})
def pass_at_k_curve(n, c, ks=None, *, estimator="unbiased", first_correct=None):
    """pass@k for many budgets at once, per question.

    Parameters
    ----------
    n : array_like of int, shape (n_questions,)
        Number of samples per question.
    c : array_like of int, shape (n_questions,)
        Number of verified-correct samples per question.
    ks : array_like of int, shape (n_ks,), optional
        Budgets, each in ``[1, min(n)]`` (checked for all budgets at once: the cost of the
        check is O(n_ks + n_questions)); at least one. Default: every k from 1 to ``min(n)``,
        which needs every n >= 1.
    estimator : {"unbiased", "first-k"}, default "unbiased"
        Which estimator (see the module docstring). ``"first-k"`` needs ``first_correct``.
    first_correct : array_like of int, shape (n_questions,), optional
        Index of the first correct sample, -1 if none; required for ``"first-k"``.

    Returns
    -------
    ndarray of float, shape (n_questions, n_ks)
        pass@k of each question at each budget. The benchmark-level curve is ``.mean(axis=0)``.
        Zero questions give an empty result: shape (0, n_ks), or (0, 0) without ``ks``.

    Raises
    ------
    ValueError
        If a count is bad or ``c > n`` (as :func:`pass_at_k`), if ``ks`` is empty or a budget
        lies outside ``[1, min(n)]``, or, without ``ks``, if some question has n = 0 (no budget
        fits it).

    Examples
    --------
    >>> pass_at_k_curve([10], [3], [1, 2]).round(12).tolist()  # 3/10 and 24/45
    [[0.3, 0.533333333333]]
    """
    func = "pass_at_k_curve"
    n, c, fc = check_curve_inputs(n, c, first_correct, estimator, func)
    if ks is None:
        if n.size == 0:
            return np.zeros((0, 0))
        if (n < 1).any():
            i = int(np.flatnonzero(n < 1)[0])
            raise invalid("n", func, "an int in the range [1, inf) for every question when 'ks' "
                          "is not given (the default budgets are 1 to min(n))",
                          f"0 at index {i}")
        ks = np.arange(1, int(n.min()) + 1)
    ks = np.atleast_1d(ks)
    check_ks_in_range(ks, n, func)  # one array check for all budgets
    return curve_kernel(n, c, ks, fc)


def check_curve_inputs(n, c, first_correct, estimator, func, n_name="n", c_name="c",
                 fc_name="first_correct"):
    """One model's inputs of :func:`curve_kernel`, checked against each other: 1-D int64 ``n``,
    ``c`` of equal length with c <= n, and ``first_correct`` (required and checked for
    "first-k", else None).

    The arguments are those the public caller's declaration normalised (int64 arrays);
    ``func`` and the names are the caller's, so that messages name what the user called.
    """
    same_length(func, **{n_name: n, c_name: c})
    check_c_le_n(n, c, func, n_name, c_name)
    n, c = np.broadcast_arrays(np.atleast_1d(n), np.atleast_1d(c))
    if estimator != "first-k":
        return n, c, None
    if first_correct is None:
        raise invalid(fc_name, func, "the index of each question's first correct sample (-1 if "
                      "none) when estimator='first-k'", "None")
    fc = np.atleast_1d(first_correct)
    same_length(func, **{n_name: n, fc_name: fc})
    _check_first_lt_n(fc, n, func, fc_name, n_name)
    check_pairs((fc < 0) != (c == 0), func, f"-1 exactly when {c_name} == 0", fc, fc_name, c,
                c_name)
    return n, c, fc


def curve_kernel(n, c, ks, first_correct=None):
    """pass@k of each question at each budget from validated inputs (:func:`check_curve_inputs`,
    budgets in [1, min(n)]): the unchecked kernel behind :func:`pass_at_k_curve`. With
    ``first_correct`` the "first-k" estimator, else the unbiased one.
    """
    if n.size == 0:
        return np.zeros((0, ks.size))
    if first_correct is not None:
        return found_within(first_correct[:, None], ks[None, :]).astype(np.float64)
    pn, pc, inverse = _distinct_pairs(n, c)
    kmax = int(ks.max())
    # Sparse budgets: per-k sums of min(c, k) terms are cheaper than a cumulative product to
    # kmax. sum over ks of min(c, k) = sum of the ks below c + c * (number of ks >= c), per pair.
    ks_sorted = np.sort(ks)
    below = np.searchsorted(ks_sorted, pc, side="left")
    ks_csum = np.concatenate([[0], np.cumsum(ks_sorted)])
    per_k_cost = int((ks_csum[below] + pc * (ks.size - below)).sum())
    if per_k_cost < pn.size * kmax:
        return _curve_sparse(pn, pc, ks)[inverse]
    return _curve_dense(pn, pc, ks, inverse)


def _distinct_pairs(n, c):
    """(n, c of the distinct pairs in lexicographic order, each question's pair): numpy's
    unique of one int64 key ``n * (max(c) + 1) + c`` where it fits (a sort of numbers, ten
    times faster than ``np.unique(axis=0)`` of rows, which it equals), else of the rows.
    """
    width = int(c.max()) + 1
    if int(n.max()) < (2**62) // width:
        keys, inverse = np.unique(n * width + c, return_inverse=True)
        return keys // width, keys % width, np.ravel(inverse)
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    return pairs[:, 0], pairs[:, 1], np.ravel(inverse)


def _curve_sparse(pn, pc, ks):
    """pass@k of each (n, c) pair at each budget, through the single-k kernel, in blocks."""
    out = np.empty((pn.size, ks.size))
    # a block of (pair, budget) elements: its per-element arrays stay below the term budget
    cols = max(1, _CHUNK_TERMS // 8 // pn.size)
    for s in range(0, ks.size, cols):
        kb = ks[s : s + cols]
        log_r = _log_ratio(np.repeat(pn, kb.size), np.repeat(pc, kb.size), np.tile(kb, pn.size))
        out[:, s : s + kb.size] = (-np.expm1(log_r) + 0.0).reshape(pn.size, kb.size)
    return out


def _curve_dense(pn, pc, ks, inverse):
    """pass@k of every question (pair ``inverse[i]`` of the sorted distinct (n, c) pairs
    ``pn, pc``) at each budget, from cumulative products (:class:`_Products`).

    The (pairs x kmax) matrix is computed in tiles of at most ``_CHUNK_TERMS`` entries and
    copied into the result as each is done, so memory is the result's plus one tile. With few
    pairs for many questions (a benchmark of many questions at a small n has at most n + 1
    pairs; four questions a pair or more here), a tile holds every pair over a block of
    budgets and the questions read their rows from it in their own order (a gather: the
    result written once, in order, as plain numpy's per-pair product indexed by the questions
    writes it); else a tile holds a block of pairs over every budget (up to the tile's size)
    and is written to the rows of their questions, a tile's worth at a time.
    """
    out = np.empty((inverse.size, ks.size))
    kmax = int(ks.max())
    every_k = ks.size == kmax and bool((ks == np.arange(1, kmax + 1)).all())
    order = np.argsort(ks, kind="stable")
    ks_sorted = ks[order]

    def columns(j0, j1):
        """(result columns, tile columns) of the budgets in (j0, j1]."""
        if every_k:
            return slice(j0, j1), slice(None)
        lo, hi = np.searchsorted(ks_sorted, [j0 + 1, j1 + 1], side="left")
        return order[lo:hi], ks_sorted[lo:hi] - 1 - j0

    width = _CHUNK_TERMS // pn.size
    if inverse.size >= 4 * pn.size and width >= min(kmax, 64):  # all pairs in a tile: gather
        width = min(kmax, width)
        rows = max(1, _CHUNK_TERMS // width)  # questions copied at a time
        products = _Products(pn.size, width).start(pn, pc)
        for j0 in range(0, kmax, width):
            j1 = min(j0 + width, kmax)
            to, of = columns(j0, j1)
            tile = products.next(j0, j1)[:, of]
            # np.take (mode "clip": every index is a pair's, none is checked) straight into
            # the result when the tile is all of its columns, else a block of rows at a time
            if every_k and width == kmax:
                np.take(tile, inverse, axis=0, out=out, mode="clip")
                continue
            for q0 in range(0, inverse.size, rows):
                out[q0:q0 + rows, to] = np.take(tile, inverse[q0:q0 + rows], axis=0,
                                                mode="clip")
        return out
    by_pair = np.argsort(inverse, kind="stable")  # questions grouped by their pair
    first_q = np.searchsorted(inverse[by_pair], np.arange(pn.size + 1))
    # a quarter of the budget a tile here (1 MiB an array, kept in the cache: a quarter less
    # time than whole-budget tiles at 1,547 x 8,192 and 3,000 x 4,000 on the development
    # machine)
    terms = max(1, _CHUNK_TERMS // 4)
    width = min(kmax, terms)
    rows = max(1, terms // width)
    products = _Products(min(rows, pn.size), width)
    for s in range(0, pn.size, rows):
        e = min(s + rows, pn.size)
        products.start(pn[s:e], pc[s:e])
        questions = by_pair[first_q[s]: first_q[e]]
        local = inverse[questions] - s
        for j0 in range(0, kmax, width):
            j1 = min(j0 + width, kmax)
            to, of = columns(j0, j1)
            tile = products.next(j0, j1)
            for q0 in range(0, questions.size, rows):  # at most a tile copied at a time
                q = slice(q0, q0 + rows)
                if every_k:
                    out[questions[q], to] = tile[local[q]]
                else:
                    out[np.ix_(questions[q], to)] = tile[np.ix_(local[q], of)]
    return out


class _Products:
    """pass@k of some (n, c) pairs over consecutive blocks of budgets (:meth:`next`).

    r(k) = C(n-c, k) / C(n, k) is the cumulative product of the factors (n-c-j) / (n-j), each
    correctly rounded, so r keeps its relative precision (the cost is that of a plain numpy
    cumulative product). pass@k = 1 - r is then exact to that precision where r <= 1/2. Where
    r > 1/2 (small pass@k) the subtraction would cancel, and pass@k is evaluated there as
    r(k) * sum_{j<k} (c / (n-j)) / r(j+1), a sum of positive terms (it telescopes to 1 - r(k)),
    which keeps the relative precision of small values. Past j = n - c the product is exactly
    0, so pass@k is exactly 1 there and is filled in rather than computed; c = 0 gives 0.

    Each block's products and sums start from the previous block's last values (the carries),
    in the order of one pass over the row, so the results do not depend on the block sizes,
    bit for bit.
    """

    def __init__(self, rows: int, width: int):
        # the working set, allocated once for every block of pairs: (rows, width) each
        self._p, self._den, self._r, self._q = (np.empty((rows, width)) for _ in range(4))
        self._small = np.empty((rows, width), dtype=bool)

    def start(self, pn, pc) -> _Products:
        """Begin the pairs ``pn, pc`` (at most ``rows``) at k = 1."""
        self.m = m = pn.size
        self.nn = pn[:, None].astype(np.float64)
        self.cc = pc[:, None].astype(np.float64)
        self.zero = pc == 0
        self.last = int((pn - pc).max())  # r(k) = 0 for every k > last
        self.r_carry = np.ones((m, 1))
        self.q_carry = np.zeros((m, 1))
        return self

    def next(self, j0: int, j1: int):
        """pass@k at k = j0 + 1 .. j1 of each pair (after the block ending at j0), a view
        that the next block overwrites.
        """
        nn, cc, m = self.nn, self.cc, self.m
        p = self._p[:m, : j1 - j0]
        p.fill(1.0)
        w = max(0, min(j1, self.last) - j0)  # columns that are not exactly 1
        if w:
            den = np.subtract(nn, np.arange(j0, j0 + w, dtype=np.float64), out=self._den[:m, :w])
            r = np.subtract(den, cc, out=self._r[:m, :w])
            np.divide(r, den, out=r)
            np.maximum(r, 0.0, out=r)  # a factor past j = n - c is 0, not negative
            r[:, :1] *= self.r_carry
            np.cumprod(r, axis=1, out=r)  # r[:, i] = r(j0 + i + 1)
            np.subtract(1.0, r, out=p[:, :w])
            small = np.greater(r, 0.5, out=self._small[:m, :w])
            small[self.zero] = False  # c = 0 is exactly 0 (set below)
            span = int(small.sum(axis=1).max())  # r decreases along a row
            if span:
                # entries past a row's own span may overflow or be NaN: never used
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    q = np.divide(cc, den[:, :span], out=self._q[:m, :span])
                    q /= r[:, :span]
                    q[:, :1] += self.q_carry
                    np.cumsum(q, axis=1, out=q)
                    self.q_carry = q[:, -1:].copy()
                    q *= r[:, :span]
                np.copyto(p[:, :span], q, where=small[:, :span])
            self.r_carry = r[:, -1:].copy()
        p[self.zero] = 0.0
        return p


@validate_params({"n": [Counts(minimum=1)], "c": [COUNTS]})
def avg_at_n(n, c):
    """Mean accuracy over all samples of each question (avg@n), ``c / n``.

    Parameters
    ----------
    n : int or array_like of int, shape (n_questions,)
        Samples per question, each >= 1.
    c : int or array_like of int, shape (n_questions,)
        Verified-correct samples per question.

    Returns
    -------
    float or ndarray of float, shape (n_questions,)
        Per-question accuracy; the paper's avg@32 of a benchmark is the mean over questions.

    Examples
    --------
    >>> avg_at_n(10, 3)
    0.3
    """
    func = "avg_at_n"
    same_length(func, n=n, c=c)
    check_c_le_n(n, c, func)
    out = c / n
    return float(out) if np.ndim(out) == 0 else out


def _check_first_lt_n(fc, n, func, name="first_correct", n_name="n"):
    fc_b, n_b = np.broadcast_arrays(fc, n)
    check_pairs(fc_b >= n_b, func, f"a sample index below '{n_name}'", fc_b, name, n_b, n_name)


def _check_n_c_k(func, n, c, k) -> None:
    """The checks every per-question estimator of ``(n, c, k)`` makes: equal lengths,
    ``c <= n`` and ``1 <= k <= n``.
    """
    same_length(func, n=n, c=c, k=k)
    check_c_le_n(n, c, func)
    check_k_in_range(k, n, func)


def _shaped(out, n, c, k):
    """A float for scalar ``n, c, k`` (``out`` then holds one value), else a 1-d array."""
    if n.ndim == 0 and c.ndim == 0 and k.ndim == 0:
        return float(np.ravel(out)[0])
    return np.atleast_1d(out)


@validate_params({"n": [COUNTS], "c": [COUNTS], "k": [BUDGETS],
                  "tau": [Interval(numbers.Real, 0, 1, closed="both")]})
def g_pass_at_k(n, c, k, tau):
    """G-Pass@k_tau (Liu et al., 2024): the probability that at least ``ceil(tau * k)`` of ``k``
    samples drawn without replacement from the ``n`` are correct, exactly (hypergeometric).

    Parameters
    ----------
    n, c, k : int or array_like of int, shape (n_questions,)
        As in :func:`pass_at_k` (``0 <= c <= n``, ``1 <= k <= n``).
    tau : float in [0, 1]
        The threshold. As OpenCompass computes it, at least one correct sample is needed
        (``m = max(ceil(tau * k), 1)``), so ``tau = 0`` is pass@k and ``tau = 1`` is pass^k
        (:func:`pass_hat_k`). OpenCompass reports ``tau`` in :data:`G_PASS_THRESHOLDS`.

    Returns
    -------
    float or ndarray of float, shape (n_questions,)
        ``sum_{j >= m} C(c, j) C(n - c, k - j) / C(n, k)`` per question, to a few units in the
        last place (:mod:`leash.core._hypergeom`: Loader's saddle point, the tail summed away
        from the mode).

    Raises
    ------
    InvalidParameterError
        ``n`` above :data:`MAX_N`, or a question whose tail would sum more than
        :data:`MAX_TERMS` terms (about 9 standard deviations of the correct samples drawn:
        ``n`` and ``k`` both beyond ~1e12), refused before any work.

    Examples
    --------
    >>> round(g_pass_at_k(4, 2, 2, 0.5), 12)  # 1 - C(2,2)/C(4,2) = 5/6
    0.833333333333
    >>> g_pass_at_k(4, 2, 2, 1.0)  # both correct: C(2,2)/C(4,2) = 1/6
    0.16666666666666666
    """
    func = "g_pass_at_k"
    _check_n_c_k(func, n, c, k)
    m = np.maximum(np.ceil(k * np.float64(tau)), 1).astype(np.int64)  # as OpenCompass does
    return _shaped(at_least(m, n, c, k, func), n, c, k)


@validate_params({"n": [COUNTS], "c": [COUNTS], "k": [BUDGETS]})
def mg_pass_at_k(n, c, k):
    """mG-Pass@k (Liu et al., 2024): G-Pass@k_tau averaged over tau in (0.5, 1], as
    OpenCompass computes it: ``2/k * sum_{i = ceil(k/2)+1}^{k} P(X >= i)``.

    Parameters
    ----------
    n, c, k : int or array_like of int, shape (n_questions,)
        As in :func:`pass_at_k`.

    Returns
    -------
    float or ndarray of float, shape (n_questions,)
        ``2/k E[(X - ceil(k/2))+]``, the same sum as one weighted tail.

    Raises
    ------
    InvalidParameterError
        As :func:`g_pass_at_k`.

    Examples
    --------
    >>> mg_pass_at_k(4, 4, 4)  # every sample correct
    1.0
    >>> mg_pass_at_k(4, 2, 2)  # 2/2 * P(X >= 2) = C(2,2)/C(4,2)
    0.16666666666666666
    """
    func = "mg_pass_at_k"
    _check_n_c_k(func, n, c, k)
    # 2/k sum_{i > ceil(k/2)} P(X >= i) = 2/k E[(X - ceil(k/2))+]: one sum, not k of them
    half = -(-k // 2)
    out = 2.0 * excess_mean(half, n, c, k, func) / np.atleast_1d(k)
    return _shaped(out, n, c, k)


@validate_params({"n": [COUNTS], "c": [COUNTS], "k": [BUDGETS]})
def pass_hat_k(n, c, k):
    """pass^k: the probability that all ``k`` samples drawn without replacement from the ``n``
    are correct, ``C(c, k) / C(n, k)`` (G-Pass@k at tau = 1; Yao et al., 2024, tau-bench).

    Parameters
    ----------
    n, c, k : int or array_like of int, shape (n_questions,)
        As in :func:`pass_at_k`.

    Returns
    -------
    float or ndarray of float, shape (n_questions,)
        Exactly 0.0 when ``c < k`` and 1.0 when ``c == n``.

    Raises
    ------
    InvalidParameterError
        As :func:`g_pass_at_k`.

    Examples
    --------
    >>> round(pass_hat_k(10, 3, 2), 12)  # C(3,2)/C(10,2) = 3/45
    0.066666666667
    """
    func = "pass_hat_k"
    _check_n_c_k(func, n, c, k)
    return _shaped(at_least(k, n, c, k, func), n, c, k)
