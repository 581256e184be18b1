"""Support categories and metrics: exact references, properties, paper values, errors."""

from fractions import Fraction
from math import comb, log

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import raises_with
from leash.core.support import (
    CATEGORIES,
    epsilon,
    expected_support_counts,
    found,
    found_probability,
    support_counts,
    support_metrics,
    support_status,
)


def frac_metrics(P, E, S, O):  # noqa: E741
    srr = Fraction(P, P + S)
    ndr = Fraction(E, P + E)
    sds = 0 if ndr == 0 else 2 * srr * ndr / (srr + ndr)
    nscr = Fraction(E - S, P + E + S)
    return srr, ndr, sds, nscr


def test_epsilon_matches_app_c4():
    # App. C.4: k * eps = -ln(0.05) = 2.9957; the paper works k = 8192 (3.66e-4), the other
    # budgets are the same formula to 4 significant digits (computed, not printed in the paper)
    expected = {32: 9.362e-2, 256: 1.170e-2, 1024: 2.926e-3, 2048: 1.463e-3, 4096: 7.314e-4,
                8192: 3.657e-4, 16384: 1.828e-4}
    for k, v in expected.items():
        assert epsilon(k) == pytest.approx(v, rel=6e-4)
        assert epsilon(k) * k == pytest.approx(-log(0.05), rel=1e-15)
    # the exact version solves (1 - eps)^k = zeta and is slightly below the bound
    e = epsilon(8192, exact=True)
    assert (1 - e) ** 8192 == pytest.approx(0.05, rel=1e-9)
    assert e < epsilon(8192)
    np.testing.assert_allclose(epsilon([1, 2], 0.5), [log(2), log(2) / 2])


@pytest.mark.parametrize("zeta", [0, 1, -0.1, 1.5])
def test_epsilon_rejects_bad_zeta(zeta):
    with raises_with(param="zeta", func="epsilon", value=zeta, constraint="(0, 1)"):
        epsilon(10, zeta)


def test_categories_hand_example():
    c_base = [3, 0, 2, 0, 1]
    c_rl = [1, 4, 0, 0, 0]
    s = support_status(c_base, c_rl)
    assert list(s) == ["preservation", "expansion", "shrinkage", "out_of_support", "shrinkage"]
    # numpy strings (no pandas), each one of CATEGORIES
    assert isinstance(s, np.ndarray) and s.dtype.kind == "U" and set(s) <= set(CATEGORIES)
    assert support_counts(c_base, c_rl) == (1, 1, 2, 1)
    # min_count=2: base finds questions 0 and 2 only; rl finds question 1 only
    assert support_counts(c_base, c_rl, min_count=2) == (0, 1, 2, 2)
    assert found([0, 1, 2], 2).tolist() == [False, False, True]


def test_paper_example_table6_aime2024():
    # Table 6, AIME2024: base found 28/30, ProRL 25/30, P=25, S=3, E=0, O=2
    c_base = [1] * 25 + [5] * 3 + [0] * 2
    c_rl = [2] * 25 + [0] * 3 + [0] * 2
    P, E, S, O = support_counts(c_base, c_rl)  # noqa: E741
    assert (P, E, S, O) == (25, 0, 3, 2)
    m = support_metrics(P, E, S, O)
    assert round(m.SRR, 3) == 0.893 and m.NDR == 0.0 and m.SDS == 0.0
    assert round(m.NSCR, 3) == -0.107
    assert (P + S) / 30 == pytest.approx(0.933, abs=5e-4)


def test_metrics_against_fractions_and_closed_form():
    for P, E, S, O in [(1355, 5, 56, 131), (15, 4, 4, 7), (4, 2, 3, 21), (10, 2, 2, 36)]:  # noqa: E741
        m = support_metrics(P, E, S, O)
        for got, ref in zip(m, frac_metrics(P, E, S, O)):
            assert got == pytest.approx(float(ref), rel=1e-14)
        # the paper's closed form SDS = 2PE / (P^2 + 2PE + ES)
        assert m.SDS == pytest.approx(2 * P * E / (P * P + 2 * P * E + E * S), rel=1e-14)


def test_metrics_vectorized_and_edge_cases():
    m = support_metrics([25, 0, 0, 0, 5], [0, 0, 1, 0, 0], [3, 0, 0, 2, 0], [2, 9, 0, 0, 0])
    np.testing.assert_allclose(m.SRR, [25 / 28, np.nan, np.nan, 0.0, 1.0])
    np.testing.assert_allclose(m.NDR, [0, np.nan, 1, np.nan, 0])
    # SDS: 0 when NDR = 0 and SRR > 0; NaN when anything is undefined or both are 0
    np.testing.assert_allclose(m.SDS, [0, np.nan, np.nan, np.nan, 0])
    np.testing.assert_allclose(m.NSCR, [-3 / 28, np.nan, 1, -1, 0])
    assert isinstance(support_metrics(1, 1, 1, 1).SRR, float)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(0, 500), st.integers(0, 500), st.integers(0, 500))
def test_metric_ranges(P, E, S, O):  # noqa: E741
    m = support_metrics(P, E, S, O)
    for v, lo in ((m.SRR, 0), (m.NDR, 0), (m.SDS, 0), (m.NSCR, -1)):
        assert np.isnan(v) or lo - 1e-12 <= v <= 1 + 1e-12
    if P + S > 0 and S == 0:
        assert m.SRR == 1.0
    if P + E + S > 0:
        assert np.sign(m.NSCR) == np.sign(E - S)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), min_size=1, max_size=50))
def test_counts_sum_and_pass_at_k_identities(rows):
    cb = np.array([r[0] for r in rows])
    cr = np.array([r[1] for r in rows])
    P, E, S, O = support_counts(cb, cr)  # noqa: E741
    assert P + E + S + O == len(rows)
    assert P + S == int((cb >= 1).sum())  # base pass@k at the full budget
    assert P + E == int((cr >= 1).sum())  # RLVR pass@k
    # swapping the models swaps E and S
    assert support_counts(cr, cb) == (P, S, E, O)


def test_found_probability_is_hypergeometric():
    n, c, k = 12, 4, 5
    # P(X >= 2) with X ~ Hypergeom(population 12, 4 successes, 5 draws)
    ref = sum(Fraction(comb(c, x) * comb(n - c, k - x), comb(n, k)) for x in range(2, 5))
    assert found_probability([n], [c], k, min_count=2)[0] == pytest.approx(float(ref), rel=1e-12)
    ref1 = 1 - Fraction(comb(n - c, k), comb(n, k))
    assert found_probability([n], [c], k)[0] == pytest.approx(float(ref1), rel=1e-14)


def test_expected_counts_exact_and_reduce_to_counts_at_full_budget():
    nb, cb, nr, cr = [8, 8, 8, 8], [0, 1, 8, 3], [8, 8, 8, 8], [2, 0, 8, 0]
    full = expected_support_counts(nb, cb, nr, cr, 8)
    assert full == tuple(float(x) for x in support_counts(cb, cr))
    half = expected_support_counts(nb, cb, nr, cr, 4)
    assert sum(half) == pytest.approx(4.0, rel=1e-14)
    fb = [float(1 - Fraction(comb(8 - c, 4), comb(8, 4))) for c in cb]
    fr = [float(1 - Fraction(comb(8 - c, 4), comb(8, 4))) for c in cr]
    assert half.P == pytest.approx(sum(a * b for a, b in zip(fb, fr)), rel=1e-14)
    assert half.S == pytest.approx(sum(a * (1 - b) for a, b in zip(fb, fr)), rel=1e-14)


def test_support_status_works_with_pandas_series():
    df = pd.DataFrame({"cb": [1, 0], "cr": [0, 1]})
    assert list(support_status(df.cb, df.cr)) == ["shrinkage", "expansion"]


def test_support_errors():
    with raises_with(param="c_rl", func="support_counts", got="an array of length 3",
                     constraint="the length of 'c_base', 2"):
        support_counts([1, 2], [1, 2, 3])
    # messages name the function called, not support_codes behind it
    with raises_with(param="c_rl", func="support_counts", got="-1 at index 0"):
        support_counts([1], [-1])
    with raises_with(param="S", func="support_metrics", value=-1, constraint="[0, inf)"):
        support_metrics(1, 1, -1, 0)
    with raises_with(TypeError, param="P", func="support_metrics", value="a"):
        support_metrics("a", 1, 1, 1)


def test_population_pass_at_k_and_misclassification():
    from leash.core.support import misclassification_probability, population_pass_at_k

    assert population_pass_at_k(0.5, 3) == pytest.approx(1 - 0.125)
    assert population_pass_at_k(0.0, 100) == 0.0 and population_pass_at_k(1.0, 1) == 1.0
    assert population_pass_at_k(1e-12, 1) == pytest.approx(1e-12, rel=1e-9)
    k = 100
    eps = epsilon(k)
    # just above epsilon: missed with probability (1 - p)^k, which is at most zeta
    assert misclassification_probability(eps * 1.0001, k) == pytest.approx(
        (1 - eps * 1.0001) ** k)
    assert misclassification_probability(eps * 1.0001, k) <= 0.05 + 1e-3
    # below epsilon: wrongly "found" with probability 1 - (1 - p)^k
    assert misclassification_probability(eps / 2, k) == pytest.approx(1 - (1 - eps / 2) ** k)
    with raises_with(param="p", func="population_pass_at_k", got="1.5 at index 1",
                     constraint="[0, 1]"):
        population_pass_at_k([0.5, 1.5], 2)
