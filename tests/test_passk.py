"""pass@k estimators against exact rational references, properties, and the error contract."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import raises_with
from leash.core.passk import avg_at_n, pass_at_k, pass_at_k_curve, pass_at_k_first


def exact(n, c, k):
    """1 - C(n-c, k)/C(n, k) as an exact Fraction (math.comb is 0 when k > n - c)."""
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def rel_err(x, ref):
    ref = float(ref)
    return abs(x - ref) / ref if ref else abs(x)


@st.composite
def nck(draw, max_n=16384):
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


# ---- exact references ------------------------------------------------------------------------

def test_grid_against_exact_reference():
    worst = 0.0
    for n in (1, 2, 3, 7, 16, 33):
        for c in range(n + 1):
            for k in range(1, n + 1):
                worst = max(worst, rel_err(pass_at_k(n, c, k), exact(n, c, k)))
    assert worst < 1e-12


@settings(max_examples=150, deadline=None)
@given(nck())
def test_hypothesis_against_exact_reference_up_to_16384(t):
    n, c, k = t
    assert rel_err(pass_at_k(n, c, k), exact(n, c, k)) < 1e-12


def test_small_values_keep_relative_precision():
    # 1 - (1 - 1/16384) would lose ~4 digits with a naive 1 - product.
    assert rel_err(pass_at_k(16384, 1, 1), Fraction(1, 16384)) < 1e-15
    assert rel_err(pass_at_k(16384, 2, 3), exact(16384, 2, 3)) < 1e-13


def test_hand_values():
    assert pass_at_k(10, 3, 2) == pytest.approx(1 - 21 / 45, rel=1e-15)
    assert pass_at_k(5, 0, 5) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(5, 3, 3) == 1.0  # n - c = 2 < k = 3


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 300), st.floats(0, 1)), min_size=1, max_size=12))
def test_curve_matches_exact_reference(rows):
    n = np.array([r[0] for r in rows])
    c = np.array([int(round(r[1] * r[0])) for r in rows])
    ks = np.unique(np.linspace(1, n.min(), 7).astype(int))
    m = pass_at_k_curve(n, c, ks)
    assert m.shape == (n.size, ks.size)
    for i in range(n.size):
        for j, k in enumerate(ks):
            assert rel_err(m[i, j], exact(int(n[i]), int(c[i]), int(k))) < 1e-12


def test_curve_equals_single_k_for_large_n():
    rng = np.random.default_rng(3)
    n = np.full(50, 8192)
    c = rng.integers(0, 8193, 50)
    ks = np.array([1, 2, 64, 1000, 8192])
    m = pass_at_k_curve(n, c, ks)
    for j, k in enumerate(ks):
        np.testing.assert_allclose(m[:, j], pass_at_k(n, c, k), rtol=1e-12, atol=0)


def test_curve_default_is_every_k():
    m = pass_at_k_curve([4, 6], [1, 2])
    assert m.shape == (2, 4)
    np.testing.assert_allclose(m[1, 3], float(exact(6, 2, 4)), rtol=1e-14)


# ---- properties ------------------------------------------------------------------------------

@settings(max_examples=100, deadline=None)
@given(nck(max_n=2000))
def test_properties(t):
    n, c, k = t
    v = pass_at_k(n, c, k)
    assert 0.0 <= v <= 1.0
    assert pass_at_k(n, c, 1) == pytest.approx(c / n, rel=1e-12, abs=0)
    assert pass_at_k(n, c, n) == (1.0 if c > 0 else 0.0)
    if k < n:
        assert pass_at_k(n, c, k + 1) >= v - 1e-15
    if c < n:
        assert pass_at_k(n, c + 1, k) >= v - 1e-15


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(8, 64), st.integers(0, 8)), min_size=2, max_size=20),
       st.randoms(use_true_random=False))
def test_curve_monotone_and_order_invariant(rows, rnd):
    n = np.array([r[0] for r in rows])
    c = np.array([r[1] for r in rows])
    ks = np.arange(1, 9)
    m = pass_at_k_curve(n, c, ks)
    assert (np.diff(m, axis=1) >= -1e-15).all()
    perm = list(range(n.size))
    rnd.shuffle(perm)
    np.testing.assert_array_equal(pass_at_k_curve(n[perm], c[perm], ks), m[perm])
    assert m.mean(axis=0) == pytest.approx(m[perm].mean(axis=0), rel=1e-12)


# ---- the "first k samples" estimator -----------------------------------------------------------

def test_first_k_is_share_of_questions_with_early_success():
    fc = np.array([0, 3, -1, 1, 7])
    n = np.full(5, 8)
    assert pass_at_k_first(fc, n, 1).tolist() == [1, 0, 0, 0, 0]
    assert pass_at_k_first(fc, n, 2).tolist() == [1, 0, 0, 1, 0]
    assert pass_at_k_first(fc, n, 8).tolist() == [1, 1, 0, 1, 1]
    c = np.array([3, 1, 0, 2, 1])
    m = pass_at_k_curve(n, c, [1, 2, 4, 8], estimator="first-k", first_correct=fc)
    assert m.mean(axis=0).tolist() == [0.2, 0.4, 0.6, 0.8]


def test_first_k_can_stay_flat_where_unbiased_cannot():
    # Why the paper's printed pass@2 == pass@4 happens (Table 14): first-k is a step function.
    fc = np.array([0, 4, -1])
    n = np.full(3, 8)
    c = np.array([2, 1, 0])
    fk = pass_at_k_curve(n, c, [2, 4], estimator="first-k", first_correct=fc).mean(axis=0)
    ub = pass_at_k_curve(n, c, [2, 4]).mean(axis=0)
    assert fk[0] == fk[1]
    assert ub[1] > ub[0]


def test_estimators_agree_at_k_equals_n():
    rng = np.random.default_rng(0)
    n = np.full(40, 16)
    c = rng.integers(0, 17, 40)
    fc = np.where(c > 0, rng.integers(0, 16 - c + 1), -1)
    a = pass_at_k_curve(n, c, [16], estimator="first-k", first_correct=fc)
    b = pass_at_k_curve(n, c, [16])
    np.testing.assert_array_equal(a, b)


def test_avg_at_n():
    assert avg_at_n(32, 8) == 0.25
    np.testing.assert_allclose(avg_at_n([32, 32], [0, 32]), [0, 1])
    # the paper's DeepSeek-1.5B AIME24 avg@32 (Table 5): 299 correct of 30 x 32
    assert round(100 * 299 / (30 * 32), 2) == 31.15


# ---- the error contract ------------------------------------------------------------------------

@pytest.mark.parametrize(
    "args, match",
    [
        # one parameter alone (k = 0, c = -1, ...): tests/test_validation.py walks them all
        ((5, 1, 6), r"'k' parameter of pass_at_k must be an int in the range \[1, n\] for every "
                    r"question \(the smallest n is 5, at question index 0\)\. Got 6 instead\."),
        (([8, 3, 9], [1, 1, 1], 4), r"\(the smallest n is 3, at question index 1\)\. Got 4 at "
                                    r"index 1 instead"),
        ((5, 6, 1), r"'c' parameter of pass_at_k must be at most 'n' for every question\. Got "
                    r"c=6 > n=5 instead"),
        (([5, 5], [5, 6], 1), r"Got c=6 > n=5 at index 1 instead"),
        ((5, 2.5, 1), r"'c' parameter of pass_at_k must be an int in the range \[0, inf\) or a "
                      r"1-D array of such ints\. Got 2\.5 instead"),
        ((-5, 0, 1), r"'n' parameter of pass_at_k .* Got -5 instead"),
        (([5, 5], [1, 1, 1], 1), r"'c' parameter of pass_at_k must be a scalar or an array of the "
                                 r"length of 'n', 2\. Got an array of length 3 instead"),
    ],
)
def test_pass_at_k_errors(args, match):
    with pytest.raises(ValueError, match=match):
        pass_at_k(*args)


def test_type_errors_and_whole_floats():
    with raises_with(TypeError, param="n", func="pass_at_k", value="10", constraint="an int"):
        pass_at_k("10", 1, 1)
    assert pass_at_k(10.0, 3.0, 2.0) == pass_at_k(10, 3, 2)


def test_curve_errors():
    with raises_with(param="estimator", func="pass_at_k_curve", value="biased",
                     constraint="'first-k'"):
        pass_at_k_curve([4], [1], [1], estimator="biased")
    with pytest.raises(ValueError, match="'first_correct' parameter .* when estimator='first-k'"):
        pass_at_k_curve([4], [1], [1], estimator="first-k")
    with pytest.raises(ValueError, match=r"-1 exactly when c == 0\. Got first_correct=2 with c=0"):
        pass_at_k_curve([4], [0], [1], estimator="first-k", first_correct=[2])
    with pytest.raises(ValueError, match=r"smallest n is 4"):
        pass_at_k_curve([4, 8], [1, 1], [1, 5])
    with pytest.raises(ValueError, match=r"first_correct=4 with n=4"):
        pass_at_k_first([4], [4], 2)


def test_dense_curve_against_exact_reference_at_large_n():
    # every k = 1..n: the cumulative-product kernel, with its positive-sum branch for small
    # values (r > 1/2) and its exact 1.0 past k = n - c
    n = np.array([8192, 8192, 8192, 8192, 8192, 8192, 8192, 9000])
    c = np.array([0, 1, 2, 50, 4000, 8191, 8192, 3])
    m = pass_at_k_curve(n, c)
    assert m.shape == (n.size, 8192)
    for i in range(n.size):
        for k in (1, 2, 3, 17, 100, 1000, 4096, 4196, 8000, 8191, 8192):
            assert rel_err(m[i, k - 1], exact(int(n[i]), int(c[i]), k)) < 1e-12
    assert (m[5, 1:] == 1.0).all() and (m[6] == 1.0).all() and (m[0] == 0.0).all()


def test_dense_curve_does_not_depend_on_the_tile_size(monkeypatch):
    import leash.core.passk as passk

    n = np.array([700, 700, 650, 700])
    c = np.array([1, 3, 2, 600])
    ks = np.arange(1, 651)
    whole = pass_at_k_curve(n, c, ks)
    monkeypatch.setattr(passk, "_CHUNK_TERMS", 97)  # tiles of 97 columns, one row each
    np.testing.assert_array_equal(pass_at_k_curve(n, c, ks), whole)
    np.testing.assert_array_equal(pass_at_k_curve(n, c, ks[::-7]), whole[:, ks[::-7] - 1])
    # many questions of few pairs: tiles of every pair over 70 budgets, gathered by question
    monkeypatch.setattr(passk, "_CHUNK_TERMS", 280)
    rep = np.tile(np.arange(4), 50)[::-1]
    np.testing.assert_array_equal(pass_at_k_curve(n[rep], c[rep], ks), whole[rep])
    np.testing.assert_array_equal(pass_at_k_curve(n[rep], c[rep], ks[::-7]),
                                  whole[rep][:, ks[::-7] - 1])


@pytest.mark.slow
@pytest.mark.parametrize("questions, n", [(1547, 8192), (25_000, 512), (100_000, 512)])
def test_curve_at_the_benchmark_shapes_against_exact_reference(questions, n):
    """Every k of many questions (few distinct (n, c) for many questions at n = 512: the tiles
    are gathered by question; at n = 8192 about one question per pair), on a subsample of
    questions and budgets against math.comb, and within the result's memory plus one tile's
    working set (about five temporaries of the tile's terms)."""
    import tracemalloc

    import leash.core.passk as passk

    rng = np.random.default_rng(questions)
    c = rng.binomial(n, rng.beta(0.3, 0.3, questions))
    c[:4] = [0, 1, n - 1, n]
    nn = np.full(questions, n)
    tracemalloc.start()
    m = pass_at_k_curve(nn, c)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert m.shape == (questions, n)
    assert peak - m.nbytes <= 6 * 8 * passk._CHUNK_TERMS, (peak, m.nbytes)
    rows = np.concatenate([np.arange(4), rng.choice(questions, 16, replace=False)])
    ks = np.concatenate([[1, 2, n // 2, n - 1, n], rng.choice(np.arange(1, n + 1), 5)])
    for i in rows:
        for k in ks:
            assert rel_err(m[i, k - 1], exact(n, int(c[i]), int(k))) < 1e-12, (i, k)
