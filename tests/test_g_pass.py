"""G-Pass@k, mG-Pass@k and pass^k against exact rational references (math.comb), properties
(hypothesis), and the G-Pass values OpenCompass writes in its results files (the fixture of
tests/fixtures/harnesses/, written from OpenCompass's BaseEvaluator.evaluate).
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import ceil, comb, factorial
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import raises_with
from leash.core import _hypergeom
from leash.core.passk import (
    G_PASS_THRESHOLDS,
    MAX_N,
    MAX_TERMS,
    g_pass_at_k,
    mg_pass_at_k,
    pass_at_k,
    pass_hat_k,
)

FIX = Path(__file__).resolve().parent / "fixtures" / "harnesses"


def exact_at_least(m, n, c, k) -> Fraction:
    """P(X >= m), X hypergeometric (k drawn of n, c good), as a Fraction."""
    return sum((Fraction(comb(c, j) * comb(n - c, k - j), comb(n, k))
                for j in range(m, min(c, k) + 1)), Fraction(0))


def exact_g_pass(n, c, k, tau) -> Fraction:
    return exact_at_least(max(ceil(k * tau), 1), n, c, k)


def close(x, ref, rtol=1e-9) -> bool:
    ref = float(ref)
    return abs(x - ref) <= rtol * max(abs(ref), 1e-300) or abs(x - ref) < 1e-15


@st.composite
def nck(draw, max_n=300):
    n = draw(st.integers(1, max_n))
    return n, draw(st.integers(0, n)), draw(st.integers(1, n))


@pytest.mark.slow
def test_grid_against_exact_reference():
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                for tau in G_PASS_THRESHOLDS:
                    assert close(g_pass_at_k(n, c, k, tau), exact_g_pass(n, c, k, tau)), \
                        (n, c, k, tau)
                assert close(pass_hat_k(n, c, k), Fraction(comb(c, k), comb(n, k)))
                lo = ceil(k / 2)
                mg = 2 * sum((exact_at_least(i, n, c, k) for i in range(lo + 1, k + 1)),
                             Fraction(0)) / k
                assert close(mg_pass_at_k(n, c, k), mg), (n, c, k)


@settings(max_examples=150, deadline=None)
@given(nck(), st.sampled_from(G_PASS_THRESHOLDS))
def test_hypothesis_against_exact_reference(t, tau):
    n, c, k = t
    assert close(g_pass_at_k(n, c, k, tau), exact_g_pass(n, c, k, tau), rtol=1e-8)
    assert close(pass_hat_k(n, c, k), Fraction(comb(c, k), comb(n, k)), rtol=1e-8)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(nck(max_n=2000))
def test_properties(t):
    n, c, k = t
    g = [g_pass_at_k(n, c, k, tau) for tau in G_PASS_THRESHOLDS]
    assert all(0.0 <= x <= 1.0 for x in g)
    assert all(a >= b for a, b in zip(g, g[1:]))          # a higher bar is met less often
    assert g[0] == pytest.approx(pass_at_k(n, c, k), abs=1e-12)  # tau = 0 is pass@k
    assert g[-1] == pass_hat_k(n, c, k)                   # tau = 1 is pass^k
    assert pass_hat_k(n, c, k) <= c / n + 1e-12 <= pass_at_k(n, c, k) + 2e-12
    if k < n:
        assert pass_hat_k(n, c, k + 1) <= pass_hat_k(n, c, k) + 1e-15  # all of more is rarer
    assert pass_hat_k(n, c, 1) == pytest.approx(c / n, abs=1e-15)


def exact_mg(n, c, k) -> Fraction:
    lo = ceil(k / 2)
    return 2 * sum((exact_at_least(i, n, c, k) for i in range(lo + 1, k + 1)), Fraction(0)) / k


def rel_err(x, ref) -> float:
    ref = float(ref)
    return abs(x - ref) / ref if ref else abs(x)


@pytest.mark.slow
@pytest.mark.parametrize("n, c, k", [
    (1000, 500, 500), (1000, 3, 400), (1000, 997, 400), (3000, 985, 475), (2048, 1024, 1),
    (2048, 2047, 2048), (500, 250, 37)])
def test_moderate_n_to_a_few_ulps(n, c, k):
    """Exact where cheap: the whole tail, both sides of the mode, deep tails (1e-273) too."""
    for tau in (*G_PASS_THRESHOLDS, 0.1, 0.9):
        assert rel_err(g_pass_at_k(n, c, k, tau), exact_g_pass(n, c, k, tau)) < 1e-12, tau
    assert rel_err(pass_hat_k(n, c, k), Fraction(comb(c, k), comb(n, k))) < 1e-12
    if k <= 400:
        assert rel_err(mg_pass_at_k(n, c, k), exact_mg(n, c, k)) < 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("n, c, k", [
    (10**9, 3, 2), (10**9, 5 * 10**8, 10), (10**15, 10, 10), (10**15, 3 * 10**14, 10),
    (10**15, 3 * 10**14, 200), (10**15, 10**15 - 7, 30), (MAX_N, MAX_N // 2, 30)])
def test_huge_n_answers_and_is_exact(n, c, k):
    """n = 10^15 answered (scipy's hypergeom never did), to ~1e-13 where its relative error was
    1e-7 (n = 10^9); math.comb gives the exact value while k is small.
    """
    for tau in G_PASS_THRESHOLDS:
        assert rel_err(g_pass_at_k(n, c, k, tau), exact_g_pass(n, c, k, tau)) < 1e-12, tau
    assert rel_err(mg_pass_at_k(n, c, k), exact_mg(n, c, k)) < 1e-12


@settings(max_examples=60, deadline=None)
@given(st.integers(10**6, MAX_N), st.data())
def test_hypothesis_huge_n_against_exact_reference(n, data):
    k = data.draw(st.integers(1, 40))
    c = data.draw(st.one_of(st.integers(0, 60), st.integers(n - 60, n),
                            st.integers(0, n)))
    tau = data.draw(st.sampled_from(G_PASS_THRESHOLDS))
    assert rel_err(g_pass_at_k(n, c, k, tau), exact_g_pass(n, c, k, tau)) < 1e-11


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(nck(max_n=5000))
def test_hypothesis_symmetries(t):
    """X's law is symmetric in c and k, and mG-Pass@k is 2/k times the sum of its G-Pass terms
    (computed here by another route: one weighted tail instead of k/2 tails).
    """
    n, c, k = t
    if c >= 1:
        for tau in G_PASS_THRESHOLDS:
            m = max(ceil(k * tau), 1)
            swapped = _hypergeom.at_least(m, n, k, c, "test")[0]  # k drawn of c <-> c of k
            assert swapped == pytest.approx(g_pass_at_k(n, c, k, tau), rel=1e-12, abs=1e-300)
    lo = ceil(k / 2)
    terms = _hypergeom.at_least(np.arange(lo + 1, k + 1), n, c, k, "test")
    assert mg_pass_at_k(n, c, k) == pytest.approx(2 * terms.sum() / k, rel=1e-11, abs=1e-300)


@settings(max_examples=100, deadline=None)
@given(nck(max_n=_hypergeom.EXACT_N), st.sampled_from(G_PASS_THRESHOLDS))
def test_the_exact_route_and_the_summed_route_agree(t, tau):
    """Up to EXACT_N the sums are integers; the saddle-point route gives the same numbers."""
    n, c, k = t
    m = max(ceil(k * tau), 1)
    exact = _hypergeom.at_least(m, n, c, k, "test")[0]
    args = [np.array([v]) for v in (0, m, n, c, k)]
    assert exact == float(exact_at_least(m, n, c, k))  # correctly rounded
    assert _hypergeom._at_least(*args, "test")[0] == pytest.approx(exact, rel=1e-13, abs=1e-300)
    half = ceil(k / 2)
    args[1] = np.array([half])
    assert _hypergeom._excess_mean(*args, "test")[0] == pytest.approx(
        _hypergeom.excess_mean(half, n, c, k, "test")[0], rel=1e-13, abs=1e-300)


def test_stirling_error_table():
    """The table of ln(n!) - ln(sqrt(2 pi n) (n/e)^n), n <= 15, recomputed to 50 digits."""
    from decimal import Decimal, getcontext

    getcontext().prec = 50
    ln_2pi = (2 * Decimal("3.14159265358979323846264338327950288419716939937510")).ln()
    for n in range(1, 16):
        v = (Decimal(factorial(n)).ln() - (n + Decimal("0.5")) * Decimal(n).ln() + n
             - ln_2pi / 2)
        assert _hypergeom._STIRLERR_SMALL[n] == float(v), n


def test_beyond_the_work_cap_is_refused_naming_k_its_value_and_the_cap():
    """n = 10^15 with k and c near n/2: the exact tail would sum ~7e7 terms; refused at once
    (no work done), the error naming the parameter, its value and the cap.
    """
    n, c, k = 10**15, 5 * 10**14, 5 * 10**14
    for call, at in ((lambda: g_pass_at_k(n, c, k, 0.5), 0), (lambda: mg_pass_at_k(n, c, k), 0),
                     (lambda: g_pass_at_k([10, 9, n, 8], [5, 5, c, 1], [4, 4, k, 4], 0.5), 2)):
        with raises_with(param="k", value=k, constraint=str(MAX_TERMS),
                         got=f"{k} at index {at}"):
            call()
    assert g_pass_at_k([10, n], [5, c], [4, k], 0.75)[1] == 0.0  # deep in the tail: cheap
    assert pass_hat_k(n, c, k) == 0.0  # one term, deep in the tail: no work to refuse
    assert g_pass_at_k(n, c, 10**6, 1.0) == 0.0
    with raises_with(param="n", value=MAX_N + 1, constraint="2**53"):
        g_pass_at_k(MAX_N + 1, 3, 2, 0.5)


def test_vectorized_equals_scalar_and_exact_ends():
    n = np.array([8, 8, 8, 16, 5])
    c = np.array([0, 3, 8, 16, 2])
    got = g_pass_at_k(n, c, 4, 0.5)
    assert list(got) == [g_pass_at_k(int(a), int(b), 4, 0.5) for a, b in zip(n, c)]
    assert got[0] == 0.0 and got[2] == 1.0 and got[3] == 1.0
    assert pass_hat_k(n, c, 3)[0] == 0.0 and pass_hat_k(5, 2, 3) == 0.0


def test_bad_arguments_name_the_parameter():
    with raises_with(param="tau", value=1.5):
        g_pass_at_k(4, 2, 2, 1.5)
    with raises_with(param="k"):
        pass_hat_k(4, 2, 5)
    with raises_with(param="c"):
        mg_pass_at_k(4, 5, 2)


def test_the_g_pass_values_opencompass_writes():
    """Per example: the G-Pass@k_tau and mG-Pass@k of the results file, from its own (n, c);
    overall: OpenCompass's `G-Pass@k_tau` (the mean over examples, x 100).
    """
    doc = json.loads((FIX / "opencompass" / "results" / "qwen" / "math.json").read_text())
    details = doc["details"]
    n = np.array([len(d["correct"]) for d in details])
    c = np.array([sum(d["correct"]) for d in details])
    ks = sorted({int(key.split("@")[1].split("_")[0]) for key in details[0]
                 if key.startswith("G-Pass@")})
    assert ks
    for k in ks:
        for tau in G_PASS_THRESHOLDS:
            key = f"G-Pass@{k}_{tau}"
            got = g_pass_at_k(n, c, k, tau)
            assert np.allclose(got, [d[key] for d in details], rtol=1e-12, atol=0), key
            assert 100 * got.mean() == pytest.approx(doc[key], rel=1e-12)
        assert np.allclose(mg_pass_at_k(n, c, k), [d[f"mG-Pass@{k}"] for d in details],
                           rtol=1e-12, atol=0)


def test_the_g_pass_of_a_summary_equals_opencompass(capsys):
    """The same numbers through the reader and `leash passk --metric`."""
    from leash_eval.cli import main

    doc = json.loads((FIX / "opencompass" / "results" / "qwen" / "math.json").read_text())
    code = main(["-q", "passk", str(FIX / "opencompass" / "results" / "qwen" / "math.json"),
                 "--k", "2,4", "--metric", "g-pass", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = json.loads(out)
    for k in (2, 4):
        for tau in G_PASS_THRESHOLDS:
            row = next(r for r in rows if r["k"] == k)
            assert row[f"g_pass_{tau}"] * 100 == pytest.approx(doc[f"G-Pass@{k}_{tau}"],
                                                               rel=1e-12)
        assert row["mg_pass"] * 100 == pytest.approx(doc[f"mG-Pass@{k}"], rel=1e-12)


@pytest.mark.parametrize("metric", ["pass^k", "g-pass"])
def test_passk_metric_columns(tmp_path, capsys, metric):
    from leash_eval.cli import main

    counts = tmp_path / "counts.csv"
    counts.write_text("model,benchmark,question_id,n,c\nm,b,q1,8,3\nm,b,q2,8,8\nm,b,q3,8,0\n")
    code = main(["-q", "passk", str(counts), "--k", "1,4", "--metric", metric,
                 "--estimator", "unbiased", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {r["k"]: r for r in json.loads(out)}
    hat4 = (Fraction(comb(3, 4), comb(8, 4)) + 1 + 0) / 3
    if metric == "pass^k":
        assert rows[4]["pass^k"] == pytest.approx(float(hat4), rel=1e-12)
        assert rows[1]["pass^k"] == pytest.approx(11 / 24, rel=1e-12)
    else:
        assert rows[4]["g_pass_1.0"] == pytest.approx(float(hat4), rel=1e-12)
        want = (exact_g_pass(8, 3, 4, 0.5) + 1 + 0) / 3
        assert rows[4]["g_pass_0.5"] == pytest.approx(float(want), rel=1e-12)
