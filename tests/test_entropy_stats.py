"""Entropy, perplexity, bootstrap, McNemar, crossover and Holm."""

from fractions import Fraction
from math import comb, exp, log

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import raises_with
from leash.core.entropy import (
    aggregate_perplexity,
    answer_entropy,
    entropy_from_counts,
    perplexity,
    token_entropy,
)
from leash.core.stats import (
    bootstrap_crossover,
    bootstrap_pass_at_k,
    bootstrap_support,
    crossover_budget,
    holm,
    mcnemar_exact,
    resampling_weights,
)
from leash.core.support import support_counts

# ---- entropy ---------------------------------------------------------------------------------


def test_answer_entropy_hand_values():
    r = answer_entropy([["4", "4", "5", None], ["7"] * 32, [None, ""], list("abcd")])
    h = -(0.5 * log(0.5) + 2 * 0.25 * log(0.25))
    np.testing.assert_allclose(r.entropy, [h, 0.0, 0.0, log(4)], rtol=1e-15)
    assert r.n_distinct.tolist() == [3, 1, 1, 4]
    assert r.n_na.tolist() == [1, 0, 2, 0]
    assert r.n_used.tolist() == [4, 32, 2, 4]
    d = answer_entropy([["4", "4", "5", None], [None, ""]], na="drop", base=2)
    np.testing.assert_allclose(d.entropy[0], -(2 / 3 * log(2 / 3) + 1 / 3 * log(1 / 3)) / log(2))
    assert np.isnan(d.entropy[1]) and d.n_used[1] == 0


def test_max_entropy_of_32_distinct_answers_is_ln32():
    assert answer_entropy([[str(i) for i in range(32)]]).entropy[0] == pytest.approx(log(32))


def test_miller_madow():
    counts = [5, 3, 1]
    n, m = 9, 3
    plain = -sum(c / n * log(c / n) for c in counts)
    assert entropy_from_counts(counts) == pytest.approx(plain, rel=1e-14)
    assert entropy_from_counts(counts, correction="miller-madow") == pytest.approx(
        plain + (m - 1) / (2 * n), rel=1e-14)
    assert np.isnan(entropy_from_counts([0, 0]))


def test_classes_mapping_merges_equivalent_answers():
    r = answer_entropy([["1/2", "0.5", "2"]], classes=lambda a: ["0.5" if x == "1/2" else x
                                                                 for x in a])
    assert r.n_distinct[0] == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", None]), min_size=1, max_size=20),
                min_size=1, max_size=10))
def test_answer_entropy_bounds_and_order_invariance(qs):
    r = answer_entropy(qs)
    ok = ~np.isnan(r.entropy)
    assert (r.entropy[ok] >= 0).all()
    assert (r.entropy[ok] <= np.log(np.maximum(r.n_distinct[ok], 1)) + 1e-12).all()
    r2 = answer_entropy([list(reversed(q)) for q in qs])
    np.testing.assert_allclose(r2.entropy, r.entropy, rtol=1e-12)


def test_token_entropy_is_macro_average_over_sequences():
    per_token = [[1.0, 1.0, 1.0, 1.0], [0.0, 2.0]]
    assert token_entropy(None, per_token=per_token) == pytest.approx(1.0)
    # a token-pooled mean would be 7/6: the paper's definition is not that
    assert token_entropy([0.2, 0.4, 0.9]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"index 1"):
        token_entropy([0.1, float("nan")])
    with pytest.raises(ValueError, match=r"'per_token' .* Got an empty array \(sequence 0\)"):
        token_entropy(None, per_token=[[]])


def test_perplexity():
    lp = [log(0.5), log(0.25)]
    assert perplexity(lp) == pytest.approx(exp(-(log(0.5) + log(0.25)) / 2))
    assert aggregate_perplexity([[log(0.5)], [log(0.25)] * 3]) == pytest.approx((2 + 4) / 2)
    assert aggregate_perplexity([[log(0.5)], [log(0.25)] * 3], how="token-pooled") == (
        pytest.approx(exp(-(log(0.5) + 3 * log(0.25)) / 4)))
    with raises_with(param="token_logprobs", func="perplexity", got="0.5 at index 1",
                     constraint="in the range (-inf, 0]"):
        perplexity([-0.1, 0.5])
    with pytest.raises(ValueError, match="'how' parameter of aggregate_perplexity"):
        aggregate_perplexity([[-1.0]], how="median")


# ---- McNemar, Holm -----------------------------------------------------------------------------


def test_mcnemar_exact_against_binomial_sum():
    E, S = 5, 56
    m = E + S
    tail = sum(Fraction(comb(m, i), 2**m) for i in range(0, E + 1))
    r = mcnemar_exact(E, S)
    assert r.p_value == pytest.approx(float(2 * tail), rel=1e-10)
    assert r.proportion == pytest.approx(5 / 61)
    assert r.ci_low < 5 / 61 < r.ci_high
    assert mcnemar_exact(3, 3).p_value == 1.0
    z = mcnemar_exact(0, 0)
    assert z.p_value == 1.0 and np.isnan(z.proportion)


def test_holm_hand_example():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    out = holm([0.5, np.nan, 0.01])
    assert np.isnan(out[1]) and out.tolist()[::2] == [0.5, 0.02]
    with raises_with(param="pvalues", func="holm", got="1.5 at index 0",
                     constraint="[0, 1] (NaN for no test)"):
        holm([1.5])


# ---- bootstrap ---------------------------------------------------------------------------------


def test_resampling_weights_keep_strata_sizes_and_are_seeded():
    strata = np.array(["a"] * 3 + ["b"] * 5)
    w = resampling_weights(8, rng=np.random.default_rng(1), n_boot=200, strata=strata)
    assert (w[:, :3].sum(axis=1) == 3).all() and (w[:, 3:].sum(axis=1) == 5).all()
    w2 = resampling_weights(8, rng=np.random.default_rng(1), n_boot=200, strata=strata)
    np.testing.assert_array_equal(w, w2)
    with pytest.raises(TypeError, match="must be a numpy.random.Generator"):
        resampling_weights(8, rng=1, n_boot=2)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_bootstrap_support_contains_point_estimate(seed):
    rng = np.random.default_rng(seed)
    cb = rng.binomial(8, rng.random(120))
    cr = rng.binomial(8, rng.random(120))
    f = bootstrap_support(cb, cr, rng=np.random.default_rng(seed), n_boot=300)
    assert tuple(int(x) for x in f.loc[["P", "E", "S", "O"], "estimate"]) == support_counts(cb, cr)
    ok = f["low"].notna()
    assert (f.loc[ok, "low"] <= f.loc[ok, "estimate"] + 1e-12).all()
    assert (f.loc[ok, "estimate"] <= f.loc[ok, "high"] + 1e-12).all()


def test_bootstrap_support_degenerate_data_has_zero_width():
    f = bootstrap_support([3] * 10, [0] * 10, rng=np.random.default_rng(0), n_boot=50)
    assert f.loc["S", "low"] == f.loc["S", "high"] == 10
    assert f.loc["SRR", "estimate"] == 0.0


def test_bootstrap_pass_at_k_paired_difference():
    rng = np.random.default_rng(0)
    n = np.full(80, 16)
    c = rng.binomial(16, rng.random(80))
    out = bootstrap_pass_at_k(n, c, n, c, [1, 4, 16], rng=rng, n_boot=200)
    diff = out[out.series == "rlvr - base"]
    # identical models: paired resampling gives an exactly zero difference in every replicate
    assert (diff[["estimate", "low", "high"]].to_numpy() == 0).all()
    base = out[out.series == "base"]
    assert (base.low <= base.estimate).all() and (base.estimate <= base.high).all()


def test_crossover_budget():
    ks = [1, 2, 4, 8]
    assert crossover_budget([0.1, 0.3, 0.6, 0.9], [0.4, 0.5, 0.6, 0.7], ks) == 4.0
    assert np.isnan(crossover_budget([0.1, 0.2], [0.4, 0.5], [1, 2]))
    rows = crossover_budget([[0.5, 0.6], [0.1, 0.2]], [[0.4, 0.5], [0.4, 0.5]], [1, 2])
    assert rows[0] == 1.0 and np.isnan(rows[1])
    with pytest.raises(ValueError, match="strictly increasing. Got 1 after 2 at index 1"):
        crossover_budget([0.1, 0.2], [0.1, 0.2], [2, 1])


def test_bootstrap_crossover_finds_a_known_crossover():
    # base: wide but unreliable (c = 2 of 64 on every question); RLVR: reliable on 70%, never
    # on the rest. Base overtakes RLVR once its pass@k passes 0.7.
    n = np.full(100, 64)
    cb = np.full(100, 2)
    cr = np.where(np.arange(100) < 70, 60, 0)
    ks = [1, 2, 4, 8, 16, 32, 64]
    r = bootstrap_crossover(n, cb, n, cr, ks, rng=np.random.default_rng(0), n_boot=100)
    # pass@k of the base = 1 - C(62,k)/C(64,k); the first k in ks where it reaches 0.7 is 32
    assert r["estimate"] == 32.0
    assert r["low"] <= 32 <= r["high"] and r["share_crossing"] > 0.9


def test_crossover_interval_ends_are_budgets():
    n = np.full(100, 64)
    cb = np.full(100, 2)
    cr = np.where(np.arange(100) < 70, 60, 0)
    ks = [1, 2, 4, 8, 16, 32, 64]
    r = bootstrap_crossover(n, cb, n, cr, ks, rng=np.random.default_rng(1), n_boot=200)
    assert r["low"] in ks and r["high"] in ks


def test_bootstrap_crossover_with_first_k_estimator():
    # first-k: base finds question i only at index 8 (within k = 16), RLVR at index 0 or never
    n = np.full(10, 16)
    cb = np.ones(10, dtype=int)
    fb = np.full(10, 8)
    cr = np.where(np.arange(10) < 7, 1, 0)
    fr = np.where(cr > 0, 0, -1)
    ks = [1, 2, 4, 8, 16]
    r = bootstrap_crossover(n, cb, n, cr, ks, rng=np.random.default_rng(0), n_boot=50,
                            estimator="first-k", first_correct_base=fb, first_correct_rl=fr)
    assert r["estimate"] == 16.0  # base pass@16 = 1 >= 0.7; below 16 it is 0
