"""The public metric API refuses bad input, with messages that name the function and argument.

One line per bad-input class and the test that covers it:

* bools, strings, None, 2-D arrays, NaN, negative or non-whole values and ints beyond int64 as
  the value of one parameter, in every public function: the generic walk over the declared
  constraints, tests/test_validation.py (it replaced the hand-written cases of bools as counts,
  bools as scalar ints, bools and strings as numbers, k = 0 and the names in the messages);
  numpy ints and whole floats still pass: test_whole_floats_and_numpy_ints_are_still_counts
* NaN/inf/negative p, non-whole k, shapes that do not broadcast in population_pass_at_k ->
  ValueError: test_population_pass_at_k_checks_p_and_k
* n_boot < 2 (or not an int) in every bootstrap function -> ValueError/TypeError:
  test_bootstrap_needs_two_replicates; through the CLI's --n-boot:
  test_cli_n_boot_goes_through_the_bootstrap_rule (the CLI's own check, with MIN_N_BOOT)
* CLI options of passk and support that reached the library and came back in its words
  (pass_at_k_curve's 'ks', support_table's k, numpy's "expected non-negative integer" for
  --seed -1) -> the CLI checks them itself, naming the option:
  test_cli_checks_its_own_options; the bootstrap's warnings ("bootstrap_support: with
  n_boot=10 ...") -> one line speaking of --n-boot: test_cli_bootstrap_warnings_speak_of_n_boot;
  --n-boot beyond memory (a traceback) -> one line, exit 2: test_cli_out_of_memory_is_one_line
* too few replicates for the level -> RuntimeWarning:
  test_bootstrap_warns_when_no_replicate_lies_beyond_the_ends
* one question, or only singleton strata -> RuntimeWarning and NaN bounds:
  test_bootstrap_over_one_question_has_nan_bounds_and_warns,
  test_bootstrap_with_only_singleton_strata_is_degenerate; zero questions -> ValueError:
  test_bootstrap_over_zero_questions_is_an_error; strata of the wrong shape -> ValueError:
  test_bootstrap_strata_shape_is_checked_by_the_caller
* budgets of pass_at_k_curve outside [1, min n], empty, non-whole or 2-D -> ValueError, from one
  array check instead of a Python loop over ks: test_curve_budgets_are_checked_at_once,
  test_curve_budgets_checked_even_without_questions,
  test_curve_budget_check_agrees_with_a_per_k_check
* memory that grew with n and the number of budgets (all log terms at once) -> chunked kernels,
  bitwise equal to the one-pass computation: test_chunked_pass_at_k_is_bitwise_the_unchunked_one,
  test_chunked_curve_is_bitwise_the_unchunked_one, test_sparse_curve_equals_single_k_calls_bitwise,
  test_pass_at_k_working_set_does_not_grow_with_n
* NaN/inf/negative histogram counts, NaN/inf log bases, infinite p-values in holm, NaN curves in
  crossover_budget, missing or empty ks in the bootstrap curves, messages naming an inner
  function -> ValueError/TypeError: test_non_finite_and_out_of_range_values_are_refused; the
  valid edges still pass: test_valid_edge_values_still_pass
* counts beyond int64 (1e20, a uint64 2**63, a Python int 2**70), which a cast wrapped to
  -2**63 ("must be non-negative") -> ValueError "too large": test_counts_beyond_int64_are_too_large,
  test_scalar_ints_beyond_int64_are_too_large
* bools, strings and None as floats (p, P/E/S/O, counts, histograms, curves, p-values) -> one
  TypeError, from one check: test_float_arguments_refuse_bools_and_strings_alike
* edge shapes that failed inside numpy (IndexError, "argmax of an empty sequence", "zero-size
  array to reduction"): scalar curves and empty budgets in crossover_budget, n = 0 without ks
  in pass_at_k_curve -> leash ValueError: test_edge_shapes_get_leash_messages_not_numpys;
  zero questions (or zero replicate rows) are legitimate -> empty results:
  test_zero_questions_give_empty_results
* inputs validated two or three times per call (expected_support_counts -> found_probability ->
  pass_at_k; the bootstrap curves -> pass_at_k_curve; misclassification_probability ->
  epsilon, population_pass_at_k), with messages naming the inner function -> each argument
  validated once, at the public boundary:
  test_each_argument_is_validated_once_by_the_public_function,
  test_bootstrap_messages_name_the_bootstrap_and_its_arguments
* bootstrap memory that grew with n_boot (the whole (n_boot, n_questions) weight matrix and its
  float copy: 4.47 GiB at n_boot = 2 * 10^7 for 30 questions) -> blocks of replicates, bitwise
  equal to the unblocked computation whatever the block size, same random numbers:
  test_blocked_bootstrap_is_bitwise_the_unblocked_one,
  test_bootstrap_working_set_does_not_grow_with_n_boot; more replicates than memory holds ->
  a MemoryError naming n_boot: test_bootstrap_beyond_memory_names_n_boot; strata read and
  checked once per call: test_bootstrap_reads_the_strata_once
"""

import inspect
import json
import re
import tracemalloc
import warnings
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import load_benchmark
from leash.core import _validation, passk, stats, support
from leash.core.entropy import answer_entropy, answer_entropy_from_histograms, entropy_from_counts
from leash.core.passk import pass_at_k, pass_at_k_curve
from leash.core.stats import (
    bootstrap_crossover,
    bootstrap_pass_at_k,
    bootstrap_support,
    crossover_budget,
    holm,
    mcnemar_exact,
    resampling_weights,
)
from leash.core.support import (
    expected_support_counts,
    found,
    found_probability,
    misclassification_probability,
    population_pass_at_k,
    support_counts,
    support_metrics,
)

# The computations leash replaced (one-pass pass@k, the unblocked bootstrap) are kept once, as
# the baselines of benchmarks/bench_core.py; the bitwise checks here use them as references.
bench_core = load_benchmark("bench_core")


def rng():
    return np.random.default_rng(0)


# ---- bools are not counts ----------------------------------------------------------------------

def test_whole_floats_and_numpy_ints_are_still_counts():
    assert pass_at_k(np.int64(10), 3.0, np.uint8(2)) == pass_at_k(10, 3, 2)
    assert found(np.int32(2), min_count=np.int64(2))
    assert mcnemar_exact(np.int64(5), 56.0) == mcnemar_exact(5, 56)
    assert support_metrics(np.int64(1), 1.0, np.uint16(1), 0) == support_metrics(1, 1, 1, 0)


# ---- population_pass_at_k and misclassification_probability ------------------------------------

@pytest.mark.parametrize("p, k, exc, match", [
    (np.nan, 1, ValueError, r"'p' parameter .* float in the range \[0, 1\] .*\. Got nan instead"),
    ([0.5, np.inf], 1, ValueError, r"Got inf at index 1"),
    (-1e-300, 1, ValueError, r"Got -1e-300"),
    (0.5, -1, ValueError, r"'k' parameter of population_pass_at_k must be an int in the range "
                          r"\[1, inf\) or a 1-D array of such ints\. Got -1 instead\."),
    (0.5, 2.5, ValueError, r"'k' parameter of population_pass_at_k .* Got 2\.5 instead"),
    (0.5, np.inf, ValueError, r"'k' parameter of population_pass_at_k .* Got inf instead"),
    ([0.1, 0.2], [1, 2, 3], ValueError, r"'k' parameter of population_pass_at_k must be "
     r"broadcastable with the shape of 'p', \(2,\)\. Got an array of shape \(3,\) instead\."),
    (None, 1, TypeError, r"'p' parameter of population_pass_at_k must be a float"),
])
def test_population_pass_at_k_checks_p_and_k(p, k, exc, match):
    with pytest.raises(exc, match=match):
        population_pass_at_k(p, k)


def test_population_pass_at_k_edges_still_exact():
    assert population_pass_at_k(1.0, 1) == 1.0 and population_pass_at_k(0.0, 10**9) == 0.0
    np.testing.assert_array_equal(population_pass_at_k([0.0, 1.0], 3), [0.0, 1.0])
    assert population_pass_at_k(np.full(3, 0.5), np.array([1, 2, 3])).tolist() == [0.5, 0.75,
                                                                                  0.875]


# ---- bootstrap: too few replicates, too few questions --------------------------------------------

NQ = np.full(6, 8)
CB = np.array([0, 1, 3, 8, 0, 2])
CR = np.array([2, 0, 3, 8, 1, 0])
BOOTSTRAPS = {
    "bootstrap_support": lambda n_boot, q=6, **kw: bootstrap_support(
        CB[:q], CR[:q], rng=rng(), n_boot=n_boot, **kw),
    "bootstrap_pass_at_k": lambda n_boot, q=6, **kw: bootstrap_pass_at_k(
        NQ[:q], CB[:q], NQ[:q], CR[:q], [1, 4, 8], rng=rng(), n_boot=n_boot, **kw),
    "bootstrap_crossover": lambda n_boot, q=6, **kw: bootstrap_crossover(
        NQ[:q], CR[:q], NQ[:q], CB[:q], [1, 4, 8], rng=rng(), n_boot=n_boot, **kw),
}


def bounds(func, out):
    if func == "bootstrap_crossover":
        return np.array([out["low"], out["high"]])
    return out[["low", "high"]].to_numpy(dtype=float)


@pytest.mark.parametrize("func", BOOTSTRAPS)
@pytest.mark.parametrize("n_boot, exc, match", [
    (1, ValueError, r"must be an int in the range \[2, inf\)\. Got 1 instead"),
    (0, ValueError, r"must be an int in the range \[2, inf\)\. Got 0 instead"),
    (-5, ValueError, r"must be an int in the range \[2, inf\)\. Got -5 instead"),
    (True, TypeError, r"must be an int in the range \[2, inf\)\. Got True instead"),
    (2.5, TypeError, r"must be an int in the range \[2, inf\)\. Got 2\.5 instead"),
    (None, TypeError, r"must be an int in the range \[2, inf\)\. Got None instead"),
])
def test_bootstrap_needs_two_replicates(func, n_boot, exc, match):
    # n_boot=1 used to give an "interval" that was one replicate twice (E: estimate 1, [2, 2])
    with pytest.raises(exc, match=rf"The 'n_boot' parameter of {func} " + match):
        BOOTSTRAPS[func](n_boot)


@pytest.mark.parametrize("func", BOOTSTRAPS)
def test_bootstrap_warns_when_no_replicate_lies_beyond_the_ends(func):
    # the function, the replicates given and the level, and how many are needed
    with pytest.warns(RuntimeWarning, match=rf"{func}: .*n_boot=40.*level=0\.95.*n_boot >= 41"):
        BOOTSTRAPS[func](40)
    with pytest.warns(RuntimeWarning, match=r"n_boot=200 at level=0\.99, .* n_boot >= 201"):
        BOOTSTRAPS[func](200, level=0.99)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BOOTSTRAPS[func](41)
        BOOTSTRAPS[func](201, level=0.99)
        # the rule is the tail mass beyond each end, not a fixed minimum: a 1% interval needs 4
        BOOTSTRAPS[func](4, level=0.01)


@pytest.mark.parametrize("func", BOOTSTRAPS)
def test_bootstrap_over_one_question_has_nan_bounds_and_warns(func):
    with pytest.warns(RuntimeWarning, match=rf"{func}: .*one question.*NaN") as rec:
        out = BOOTSTRAPS[func](100, q=1)
    assert rec[0].filename == __file__  # the warning points at the caller
    assert np.isnan(bounds(func, out)).all()
    if func == "bootstrap_support":
        assert out.loc["P":"O", "estimate"].tolist() == [0.0, 1.0, 0.0, 0.0]  # 0 vs 2: expansion
    elif func == "bootstrap_pass_at_k":
        assert out["estimate"].notna().all()


@pytest.mark.parametrize("func", BOOTSTRAPS)
def test_bootstrap_with_only_singleton_strata_is_degenerate(func):
    with pytest.warns(RuntimeWarning, match=r"6 questions, each alone in its stratum"):
        out = BOOTSTRAPS[func](100, strata=np.arange(6))
    assert np.isnan(bounds(func, out)).all()
    with warnings.catch_warnings():  # one stratum of two is enough to resample
        warnings.simplefilter("error")
        out = BOOTSTRAPS[func](100, strata=[0, 1, 2, 3, 4, 4])
    assert not np.isnan(bounds(func, out)).all()


@pytest.mark.parametrize("func", BOOTSTRAPS)
def test_bootstrap_over_zero_questions_is_an_error(func):
    arg = "c_base" if func == "bootstrap_support" else "n_base"
    with pytest.raises(ValueError) as info:
        BOOTSTRAPS[func](100, q=0)
    e = info.value
    assert (e.param, e.func, e.got) == (arg, func, "an empty array")
    assert "at least one question" in e.constraint


def test_bootstrap_strata_shape_is_checked_by_the_caller():
    with pytest.raises(ValueError) as info:
        BOOTSTRAPS["bootstrap_support"](100, strata=[0, 1])
    e = info.value
    assert (e.param, e.func, e.got) == ("strata", "bootstrap_support", "an array of shape (2,)")
    assert "shape (6,)" in e.constraint


def toy_samples(tmp_path, benchmarks=(("toy", 5),)):
    """A samples file of models base and rl, 4 samples per question."""
    rows = [{"model": m, "benchmark": b, "question_id": f"q{q}", "sample_idx": i,
             "correct": bool((q + i + (m == "rl")) % 3 == 0), "answer": str(i)}
            for m in ("base", "rl") for b, n_q in benchmarks for q in range(n_q)
            for i in range(4)]
    f = tmp_path / "toy.samples.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f


@pytest.mark.slow
def test_cli_n_boot_goes_through_the_bootstrap_rule(tmp_path, capsys):
    pytest.importorskip("leash.analysis.pairing")
    from leash_eval.cli import main

    f = toy_samples(tmp_path)
    args = ["-q", "support", str(f), "--base", "base", "--rl", "rl", "--json", "--n-boot"]
    assert main([*args, "1"]) == 2
    err = capsys.readouterr().err
    # the CLI names its option, not the keyword of the function behind it
    assert err == "leash support: error: --n-boot must be 0 (no bootstrap) or >= 2. Got 1.\n"
    assert main([*args, "10"]) == 0  # the CLI prints the warning as one line
    assert "leash support: warning: " in capsys.readouterr().err
    assert main([*args, "0"]) == 0  # 0: no intervals at all
    with mock.patch.object(stats, "MIN_N_BOOT", 5):  # the rule's constant, not a literal 1
        assert main([*args, "3"]) == 2
    assert "or >= 5. Got 3." in capsys.readouterr().err


# ---- pass_at_k_curve: one array check for all budgets --------------------------------------------

@pytest.mark.parametrize("ks, match", [
    ([1, 0, 2], r"'ks' parameter of pass_at_k_curve must be an int in the range \[1, inf\) or "
                r"a non-empty 1-D array of such ints\. Got 0 at index 1 instead"),
    ([1, 5, 9, 3], r"in the range \[1, n\] for every question \(the smallest n is 8, at "
                   r"question index 1\)\. Got 9 at index 2 instead"),
    ([], r"'ks' parameter of pass_at_k_curve .* Got an empty array instead"),
    ([-1], r"'ks' parameter of pass_at_k_curve .* Got -1 at index 0 instead"),
    ([1.5], r"'ks' parameter of pass_at_k_curve .* Got 1\.5 at index 0 instead"),
    ([[1, 2]], r"'ks' parameter of pass_at_k_curve .* Got an array of shape \(1, 2\) instead"),
])
def test_curve_budgets_are_checked_at_once(ks, match):
    with pytest.raises(ValueError, match=match):
        pass_at_k_curve([16, 8, 12], [1, 2, 3], ks)


def test_curve_budgets_checked_even_without_questions():
    assert pass_at_k_curve([], [], [1, 3]).shape == (0, 2)
    assert pass_at_k_curve([], []).shape == (0, 0)
    with pytest.raises(ValueError, match=r"Got 0 at index 0 instead"):
        pass_at_k_curve([], [], [0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 40), min_size=1, max_size=8),
       st.lists(st.integers(0, 45), min_size=1, max_size=30))
def test_curve_budget_check_agrees_with_a_per_k_check(ns, ks):
    # the vectorized check refuses exactly the grids a per-budget loop refuses, naming the
    # first bad budget: the first below 1 (the declaration of ks), else the first above min(n)
    n = np.array(ns)
    bad = ([i for i, k in enumerate(ks) if k < 1]
           or [i for i, k in enumerate(ks) if k > n.min()])
    if not bad:
        assert pass_at_k_curve(n, np.zeros_like(n), ks).shape == (n.size, len(ks))
        return
    with pytest.raises(ValueError, match=rf"Got {ks[bad[0]]} at index {bad[0]} instead"):
        pass_at_k_curve(n, np.zeros_like(n), ks)


# ---- pass_at_k works in bounded memory, with results independent of the chunk size ---------------

@st.composite
def question_sets(draw):
    q = draw(st.integers(1, 25))
    n = np.array(draw(st.lists(st.integers(1, 300), min_size=q, max_size=q)))
    c = np.array([draw(st.integers(0, int(x))) for x in n])
    k = np.array([draw(st.integers(1, int(x))) for x in n])
    return n, c, k


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(question_sets(), st.integers(1, 200))
def test_chunked_pass_at_k_is_bitwise_the_unchunked_one(nck, chunk):
    n, c, k = nck
    ref = bench_core.one_pass_pass_at_k(n, c, k)  # all terms at once, as before chunking
    with mock.patch.object(passk, "_CHUNK_TERMS", chunk):
        got = pass_at_k(n, c, k)
    np.testing.assert_array_equal(got, ref)
    assert np.array_equal(np.signbit(got), np.signbit(ref))


@settings(max_examples=60, deadline=None)
@given(question_sets(), st.integers(1, 50), st.integers(1, 400), st.randoms())
def test_chunked_curve_is_bitwise_the_unchunked_one(nck, n_ks, chunk, rnd):
    n, c, _ = nck
    ks = [rnd.randint(1, int(n.min())) for _ in range(n_ks)]  # unsorted, with repeats
    whole = pass_at_k_curve(n, c, ks)  # one tile: the inputs are far below _CHUNK_TERMS
    with mock.patch.object(passk, "_CHUNK_TERMS", chunk):
        np.testing.assert_array_equal(pass_at_k_curve(n, c, ks), whole)
    every = pass_at_k_curve(n, c)  # every k: the cumulative-sum kernel
    with mock.patch.object(passk, "_CHUNK_TERMS", chunk):
        np.testing.assert_array_equal(pass_at_k_curve(n, c), every)


def test_sparse_curve_equals_single_k_calls_bitwise():
    n = np.array([1000, 1000, 50, 7])
    c = np.array([0, 2, 3, 1])  # small c: the per-k kernel
    ks = [7, 1, 3, 7]
    m = pass_at_k_curve(n, c, ks)
    for j, k in enumerate(ks):
        np.testing.assert_array_equal(m[:, j], pass_at_k(n, c, k))


def test_pass_at_k_working_set_does_not_grow_with_n():
    # 8 questions at n = 10^6 with c = k = n / 2: 4 * 10^6 log terms. All at once they took
    # ~250 MiB; in chunks the peak stays at the fixed working set (about 20 MiB). This is an
    # allocation count (tracemalloc), not a timing; the benchmark reports the full-size case.
    n = np.full(8, 10**6)
    tracemalloc.start()
    try:
        out = pass_at_k(n, n // 2, n // 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (out == 1.0).all()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"


# ---- NaN, inf and other values that used to pass silently ---------------------------------------

@pytest.mark.parametrize("call, exc, match", [
    # the contents of arrays, and checks between parameters (the values of one parameter alone
    # are walked by tests/test_validation.py)
    (lambda: answer_entropy_from_histograms([[1, 2], [np.nan, 1]]), ValueError,
     r"'histograms' parameter of answer_entropy_from_histograms must be a sequence of arrays of "
     r"counts \(floats in the range \[0, inf\)\)\. Got nan at index 0 \(histogram 1\) instead"),
    (lambda: answer_entropy_from_histograms([[1, np.inf]]), ValueError,
     r"Got inf at index 1 \(histogram 0\)"),
    (lambda: answer_entropy_from_histograms([[1, -2]]), ValueError,
     r"Got -2\.0 at index 1 \(histogram 0\)"),
    (lambda: entropy_from_counts([1, np.nan]), ValueError,
     r"'counts' parameter of entropy_from_counts must be a 1-D array of floats in the range "
     r"\[0, inf\)\. Got nan at index 1 instead"),
    (lambda: entropy_from_counts([[1, 2]]), ValueError, r"Got an array of shape \(1, 2\)"),
    (lambda: answer_entropy([["a"]], na="keep"), ValueError,
     r"'na' parameter of answer_entropy must be a str among \{'class', 'drop'\}\. Got 'keep'"),
    (lambda: entropy_from_counts([1, 2], base=np.inf), ValueError, r"Got inf instead"),
    (lambda: entropy_from_counts([1, 2], base="2"), TypeError,
     r"'base' parameter of entropy_from_counts must be a float in the range \(0, inf\) other "
     r"than 1 or None\. Got '2' instead"),
    (lambda: holm([0.5, np.inf]), ValueError,
     r"'pvalues' parameter of holm must be a 1-D array of floats in the range \[0, 1\] \(NaN for "
     r"no test\)\. Got inf at index 1 instead"),
    (lambda: holm([-np.inf]), ValueError, r"Got -inf at index 0"),
    (lambda: crossover_budget([0.1, np.nan], [0.2, 0.1], [1, 2]), ValueError,
     r"'curve_base' parameter of crossover_budget must be an array \(1-D or more\) of finite "
     r"floats\. Got nan at index 1 instead"),
    (lambda: crossover_budget([0.1, 0.2], [[0.2, 0.1], [0.3, np.inf]], [1, 2]), ValueError,
     r"'curve_rl' .* Got inf at flat index 3"),
    (lambda: crossover_budget([0.1, 0.2], [0.2, 0.1], [0, 2]), ValueError,
     r"'ks' parameter of crossover_budget must be an int in the range \[1, inf\) or a non-empty "
     r"1-D array of such ints, strictly increasing\. Got 0 at index 0 instead"),
    (lambda: bootstrap_crossover([4, 4], [1, 2], [4, 4], [1, 1], [1, 2.5], rng=rng(),
                                 n_boot=100),
     ValueError, r"'ks' parameter of bootstrap_crossover .* Got 2\.5 at index 1 instead"),
    (lambda: found_probability([4], [5], 2), ValueError,
     r"'c' parameter of found_probability must be at most 'n' for every question\. Got c=5 > "
     r"n=4 at index 0 instead"),
    (lambda: expected_support_counts([4], [1], [4], [5], 2), ValueError,
     r"'c_rl' parameter of expected_support_counts must be at most 'n_rl'"),
    (lambda: expected_support_counts([4], [1], [4, 4], [1, 1], 2), ValueError,
     r"'n_rl' parameter of expected_support_counts must be a scalar or an array of the length "
     r"of 'n_base', 1\. Got an array of length 2 instead"),
    (lambda: expected_support_counts([4], [1], [3], [1], 4), ValueError,
     r"'k' parameter of expected_support_counts .* smallest n_rl is 3"),
])
def test_non_finite_and_out_of_range_values_are_refused(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_valid_edge_values_still_pass():
    assert entropy_from_counts([1, 1], base=np.int64(2)) == pytest.approx(1.0)
    assert entropy_from_counts([1, 1], base=np.float32(2)) == pytest.approx(1.0)
    out = holm([0.01, np.nan, 0.04])
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.02)
    assert crossover_budget([0.1, 0.9], [0.5, 0.5], [1.0, 2.0]) == 2.0  # whole floats are budgets
    b = bootstrap_pass_at_k([4, 4], [1, 2], [4, 4], [1, 1], [1.0, 4.0], rng=rng(), n_boot=100)
    assert b["k"].tolist() == [1, 4] * 3
    assert answer_entropy_from_histograms([[0, 0], []]).n_used.tolist() == [0, 0]


# ---- integers beyond int64 are too large, never wrapped ------------------------------------------

@pytest.mark.parametrize("n, shown, index", [
    (1e20, "1e+20", 0),
    (2.0**63, "9.223372036854776e+18", 0),
    (np.uint64(2**63), "9223372036854775808", 0),
    (2**63, "9223372036854775808", 0),
    (2**70, str(2**70), 0),
    ([8, 2**70], str(2**70), 1),
    (np.array([8, 2**64 - 1], dtype=np.uint64), str(2**64 - 1), 1),
])
def test_counts_beyond_int64_are_too_large(n, shown, index):
    # astype(int64) turned these into -2**63 (with a RuntimeWarning for floats), reported as
    # "must be non-negative. Got -9223372036854775808"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        where = f" at index {index}" if np.ndim(n) else ""
        with pytest.raises(ValueError) as info:
            pass_at_k(n, 0, 1)
    e = info.value
    assert (e.param, e.func, e.got) == ("n", "pass_at_k", f"{shown}{where}")
    assert "9223372036854775807 (the 64-bit integer range)" in e.constraint
    assert pass_at_k(2**63 - 1, 0, 1) == 0.0  # the largest int64 is still a count
    with pytest.raises(ValueError) as info:
        pass_at_k(-(2**70), 0, 1)  # below the range: negative, as before
    assert (info.value.param, info.value.value, info.value.got) == ("n", -(2**70), str(-(2**70)))
    assert "[0, inf)" in info.value.constraint


@pytest.mark.parametrize("call, arg, func", [
    (lambda: resampling_weights(4, rng=rng(), n_boot=2**70), "n_boot", "resampling_weights"),
    (lambda: bootstrap_support([1, 2], [1, 0], rng=rng(), n_boot=1e20), "n_boot",
     "bootstrap_support"),
    (lambda: mcnemar_exact(2**64, 1), "E", "mcnemar_exact"),
    (lambda: found(3, min_count=2**63), "min_count", "found"),
])
def test_scalar_ints_beyond_int64_are_too_large(call, arg, func):
    with pytest.raises(ValueError) as info:
        call()
    e = info.value
    assert (e.param, e.func) == (arg, func) and re.fullmatch(r"[\d.e+]+", e.got)
    assert "9223372036854775807 (the 64-bit integer range)" in e.constraint


# ---- edge shapes: leash's messages, not numpy's -------------------------------------------------

@pytest.mark.parametrize("call, match", [
    # IndexError: tuple index out of range
    (lambda: crossover_budget(0.5, 0.6, 1), r"The 'curve_base' parameter of crossover_budget "
     r"must be an array \(1-D or more\) of finite floats\. Got 0\.5 instead\."),
    # "attempt to get argmax of an empty sequence"
    (lambda: crossover_budget([], [], []), r"The 'ks' parameter of crossover_budget must be .*\. "
     r"Got an empty array instead\."),
    # "zero-size array to reduction operation maximum which has no identity"
    (lambda: pass_at_k_curve([0, 5], [0, 1]), r"The 'n' parameter of pass_at_k_curve must be an "
     r"int in the range \[1, inf\) for every question when 'ks' is not given \(the default "
     r"budgets are 1 to min\(n\)\)\. Got 0 at index 0 instead\."),
    (lambda: pass_at_k_curve(0, 0), r"'n' parameter of pass_at_k_curve must be an int in the "
     r"range \[1, inf\) for every question when 'ks' is not given"),
    (lambda: pass_at_k_curve([0, 5], [0, 1], [1]), r"'ks' parameter of pass_at_k_curve .* \(the "
     r"smallest n is 0, at question index 0\)"),
])
def test_edge_shapes_get_leash_messages_not_numpys(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zero_questions_give_empty_results():
    # no questions is a legitimate (empty) benchmark: empty results, not errors
    assert pass_at_k_curve([], []).shape == (0, 0)
    assert pass_at_k_curve([], [], [1, 4]).shape == (0, 2)
    assert crossover_budget(np.zeros((0, 2)), np.zeros((0, 2)), [1, 2]).shape == (0,)
    assert support_counts([], []) == (0, 0, 0, 0)
    assert pass_at_k([], [], 1).shape == (0,)


# ---- each argument is validated once, by the function the user called ---------------------------

def validations(call):
    """(function, parameter) of every declared check that ``call`` runs, in order."""
    seen = []
    real = _validation._validate

    def spy(constraints, value, name, func):
        seen.append((func, name))
        return real(constraints, value, name, func)

    with mock.patch.object(_validation, "_validate", spy):
        call()
    return seen


N8 = [8, 8, 8]
ONCE_CASES = [
    # expected_support_counts went through found_probability and pass_at_k; the bootstraps
    # through resampling_weights (n_boot again, n_items) and support_codes or pass_at_k_curve
    # (the counts and ks again); misclassification_probability through epsilon
    ("expected_support_counts", lambda: expected_support_counts(N8, [1, 2, 0], N8, [3, 0, 8], 4)),
    ("expected_support_counts", lambda: expected_support_counts(N8, [1, 2, 0], N8, [3, 0, 8], 4,
                                                                min_count=2)),
    ("found_probability", lambda: found_probability(N8, [1, 2, 0], 4)),
    ("misclassification_probability", lambda: misclassification_probability([0.1, 0.5], 4)),
    ("support_counts", lambda: support_counts([1, 0], [0, 2])),
    ("pass_at_k_curve", lambda: pass_at_k_curve(N8, [1, 2, 0], [1, 4], estimator="first-k",
                                                first_correct=[3, 0, -1])),
    ("bootstrap_support", lambda: bootstrap_support([1, 0, 3], [0, 2, 3], rng=rng(), n_boot=50)),
    ("bootstrap_pass_at_k", lambda: bootstrap_pass_at_k(N8, [1, 0, 3], N8, [0, 2, 3], [1, 4],
                                                        rng=rng(), n_boot=50)),
    ("bootstrap_crossover", lambda: bootstrap_crossover(N8, [1, 0, 3], N8, [0, 2, 3], [1, 4],
                                                        rng=rng(), n_boot=50)),
]


@pytest.mark.parametrize("func, call", ONCE_CASES)
def test_each_argument_is_validated_once_by_the_public_function(func, call):
    public = next(getattr(m, func) for m in (passk, support, stats) if hasattr(m, func))
    seen = validations(call)
    # messages name the function called, and each of its parameters is checked once
    assert seen == [(func, name) for name in inspect.signature(public).parameters], seen


@pytest.mark.parametrize("call, match", [
    # these named pass_at_k_curve and its 'c', 'n', 'first_correct' and 'estimator'
    (lambda: bootstrap_pass_at_k([4, 4], [1, 5], [4, 4], [1, 1], [1], rng=rng(), n_boot=50),
     r"The 'c_base' parameter of bootstrap_pass_at_k must be at most 'n_base' for every "
     r"question\. Got c_base=5 > n_base=4 at index 1 instead\."),
    (lambda: bootstrap_crossover([8, 8], [1, 5], [8, 4], [1, 1], [1, 6], rng=rng(), n_boot=50),
     r"The 'ks' parameter of bootstrap_crossover must be a grid of budgets in the range "
     r"\[1, n_rl\] for every question \(the smallest n_rl is 4, at question index 1\)\. Got 6 at "
     r"index 1 instead\."),
    (lambda: bootstrap_pass_at_k([4], [1], [4], [1], [1], rng=rng(), n_boot=50,
                                 estimator="first-k", first_correct_base=[0]),
     r"The 'first_correct_rl' parameter of bootstrap_pass_at_k must be the index of each "
     r"question's first correct sample \(-1 if none\) when estimator='first-k'\. Got None"),
    (lambda: bootstrap_crossover([4], [1], [4], [0], [1], rng=rng(), n_boot=50,
                                 estimator="first-k", first_correct_base=[0],
                                 first_correct_rl=[2]),
     r"The 'first_correct_rl' parameter of bootstrap_crossover must be -1 exactly when "
     r"c_rl == 0\. Got first_correct_rl=2 with c_rl=0 at index 0 instead\."),
    (lambda: bootstrap_pass_at_k([4], [1], [4], [1], [1], rng=rng(), n_boot=50,
                                 estimator="last-k"),
     r"The 'estimator' parameter of bootstrap_pass_at_k must be a str among"),
    (lambda: bootstrap_crossover([4, 4], [1, 2], [4, 4], [1, 1], [2, 1], rng=rng(), n_boot=50),
     r"The 'ks' parameter of bootstrap_crossover must be .*, strictly increasing\. Got 1 "
     r"after 2 at index 1 instead\."),
    (lambda: bootstrap_support([1, 2], [1, 0], rng=0, n_boot=50),  # named resampling_weights
     r"The 'rng' parameter of bootstrap_support must be a numpy\.random\.Generator"),
    (lambda: expected_support_counts([4], [1], [8], [1], 6),
     r"'k' parameter of expected_support_counts .* \(the smallest n_base is 4, at question "
     r"index 0\)"),
    (lambda: found_probability([4, 4], [1, 1], [2, 2, 2]),  # numpy's "shape mismatch"
     r"The 'k' parameter of found_probability must be a scalar or an array of the length of "
     r"'n', 2\. Got an array of length 3 instead\."),
])
def test_bootstrap_messages_name_the_bootstrap_and_its_arguments(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ---- the bootstrap works in blocks of replicates, bitwise as unblocked ---------------------------

@st.composite
def bootstrap_inputs(draw):
    q = draw(st.integers(1, 30))
    n = draw(st.sampled_from([1, 4, 8, 50]))
    counts = st.lists(st.integers(0, n), min_size=q, max_size=q)
    strata = draw(st.none() | st.lists(st.integers(0, 3), min_size=q, max_size=q))
    return (np.full(q, n), np.array(draw(counts)), np.array(draw(counts)), strata,
            draw(st.integers(2, 60)))


def run_bootstraps(n, cb, cr, strata, n_boot, seed):
    """The three bootstraps, each from a fresh generator: (outputs, generator states after)."""
    ks = sorted({1, max(1, int(n[0]) // 2), int(n[0])})
    outs, states = [], []
    for call in (
        lambda r: bootstrap_support(cb, cr, rng=r, n_boot=n_boot, strata=strata,
                                    return_replicates=True),
        lambda r: bootstrap_pass_at_k(n, cb, n, cr, ks, rng=r, n_boot=n_boot, strata=strata),
        lambda r: bootstrap_crossover(n, cb, n, cr, ks, rng=r, n_boot=n_boot, strata=strata),
    ):
        r = np.random.default_rng(seed)
        outs.append(call(r))
        states.append(r.bit_generator.state)
    return outs, states, ks


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(bootstrap_inputs(), st.integers(1, 4000), st.integers(0, 2**32 - 1))
def test_blocked_bootstrap_is_bitwise_the_unblocked_one(inputs, block, seed):
    n, cb, cr, strata, n_boot = inputs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # few replicates, one question
        with mock.patch.object(stats, "_BLOCK_ELEMENTS", 10**9):  # one block: unblocked
            whole, whole_states, ks = run_bootstraps(n, cb, cr, strata, n_boot, seed)
        with mock.patch.object(stats, "_BLOCK_ELEMENTS", block):
            got, states, _ = run_bootstraps(n, cb, cr, strata, n_boot, seed)
    assert states == whole_states  # the same random numbers, no more, no fewer
    # every block size gives the same bits
    pd.testing.assert_frame_equal(got[0][0], whole[0][0], check_exact=True)
    np.testing.assert_array_equal(got[0][1], whole[0][1])
    pd.testing.assert_frame_equal(got[1], whole[1], check_exact=True)
    np.testing.assert_array_equal(got[2]["replicates"], whole[2]["replicates"])
    assert str(got[2]) == str(whole[2])
    # and the replicates are those of the unblocked weight matrix, drawn in the same order
    ref_rng = np.random.default_rng(seed)
    ref = bench_core.unblocked_support_replicates(cb, cr, ref_rng, n_boot, strata)
    np.testing.assert_array_equal(got[0][1], ref)  # counts are exact: bitwise
    assert ref_rng.bit_generator.state == states[0]
    ref = bench_core.unblocked_pass_at_k(n, cb, n, cr, ks, np.random.default_rng(seed), n_boot,
                                         strata)
    out = got[1][["estimate", "low", "high"]].to_numpy(dtype=float)
    shown = ~np.isnan(out)  # NaN bounds: a degenerate bootstrap (one question)
    np.testing.assert_allclose(out[shown], ref[shown], rtol=0, atol=1e-12)


@pytest.mark.slow
def test_bootstrap_working_set_does_not_grow_with_n_boot():
    # 2000 questions x 4000 replicates: the unblocked weight matrix took 61 MiB as int64 and as
    # much again as float64 (4.47 GiB at the CLI's --n-boot 20000000 with 30 questions). In
    # blocks the peak is the fixed working set (~20 MiB at most) plus n_boot x the statistics.
    # An allocation count (tracemalloc), not a timing.
    q, n_boot = 2000, 4000
    gen = np.random.default_rng(3)
    n = np.full(q, 8)
    cb, cr = gen.integers(0, 9, q), gen.integers(0, 9, q)
    strata = gen.integers(0, 5, q)
    calls = {
        "bootstrap_support": lambda: bootstrap_support(cb, cr, rng=rng(), n_boot=n_boot,
                                                       strata=strata),
        "bootstrap_pass_at_k": lambda: bootstrap_pass_at_k(n, cb, n, cr, [1, 2, 4, 8], rng=rng(),
                                                           n_boot=n_boot, strata=strata),
        "bootstrap_crossover": lambda: bootstrap_crossover(n, cb, n, cr, [1, 2, 4, 8], rng=rng(),
                                                           n_boot=n_boot, strata=strata),
    }
    for name, call in calls.items():
        call()  # imports and caches outside the measure
        tracemalloc.start()
        try:
            call()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 32 * 2**20, f"{name}: peak {peak / 2**20:.0f} MiB"


@pytest.mark.parametrize("func", BOOTSTRAPS)
@pytest.mark.parametrize("n_boot", [10**15, 2**62])
def test_bootstrap_beyond_memory_names_n_boot(func, n_boot):
    # numpy's "Unable to allocate 4.47 GiB" (or "array is too big") named no argument, and the
    # weight matrix was allocated only after the curves were computed
    # the argument and its value, the memory it asks for, and the remedy
    with pytest.raises(MemoryError, match=rf"'n_boot' .*{func}.* {n_boot} replicates.* GiB.*use "
                                          r"fewer replicates"):
        BOOTSTRAPS[func](n_boot)


class CountingStrata:
    """An array-like that counts how often it is read."""

    def __init__(self, values):
        self.values, self.reads = np.asarray(values), 0

    def __array__(self, dtype=None, copy=None):
        self.reads += 1
        return self.values


@pytest.mark.parametrize("func", BOOTSTRAPS)
def test_bootstrap_reads_the_strata_once(func):
    # _resampling_is_degenerate and resampling_weights each converted and checked them
    strata = CountingStrata([0, 0, 1, 1, 2, 2])
    BOOTSTRAPS[func](100, strata=strata)
    assert strata.reads == 1


# ---- the CLI checks the options of passk and support itself --------------------------------------

def cli_lines(capsys, *argv):
    """(exit status, stderr lines) of ``leash -q ARGV`` run in-process, refusing a traceback."""
    from leash_eval.cli import main

    try:
        code = main(["-q", *map(str, argv)])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err.strip().splitlines()


LIBRARY_WORDS = re.compile(r"parameter|_table|pass_at_k|bootstrap_|n_boot|min_count|numpy|"
                           r"ks\b|=\d")


@pytest.mark.parametrize("argv, line", [
    # was "passk_table, group {...}: The 'ks' parameter of pass_at_k_curve must hold ..."
    (["passk", "{f}", "--k", "1,100"],
     "leash passk: error: --k 100 exceeds the smallest budget n = 4 of model base on benchmark "
     "toy."),
    # was "The budget k=100 of support_table exceeds the 4 samples of question index 0."
    (["support", "{f}", "--base", "base", "--rl", "rl", "--k", "100"],
     "leash support: error: --k 100 exceeds the smallest budget n = 4 of model base on "
     "benchmark toy."),
    # was numpy's "expected non-negative integer"
    (["support", "{f}", "--base", "base", "--rl", "rl", "--seed", "-1", "--n-boot", "10"],
     "leash support: error: argument --seed: must be an integer >= 0, got -1 (see leash "
     "support --help)"),
    (["support", "{f}", "--base", "base", "--rl", "rl", "--zeta", "1.5"],
     "leash support: error: --zeta must be a number in (0, 1). Got 1.5."),
    (["support", "{f}", "--base", "base", "--rl", "rl", "--min-count", "0"],
     "leash support: error: --min-count must be an int >= 1. Got 0."),
    # was support_table's "... Got min_count=2; use budget_rule='expected' or the full budget."
    (["support", "{f}", "--base", "base", "--rl", "rl", "--k", "2", "--min-count", "2"],
     "leash support: error: --min-count 2 needs the full budget: below it (--k 2 < n = 4) a "
     "question is found by its first k samples, which defines found for --min-count 1 only; "
     "leave out --k or use --min-count 1."),
    (["support", "{f}", "--base", "base", "--rl", "rl", "--n-boot", str(2**64)],
     f"leash support: error: --n-boot {2**64} is too large (beyond the 64-bit integer range)."),
])
def test_cli_checks_its_own_options(tmp_path, capsys, argv, line):
    pytest.importorskip("leash.analysis.pairing")
    f = toy_samples(tmp_path)
    code, lines = cli_lines(capsys, *(a.format(f=f) for a in argv))
    assert code == 2
    assert lines == [line]
    assert not LIBRARY_WORDS.search(line.replace("--n-boot", "").replace("--min-count", ""))


def test_cli_bootstrap_warnings_speak_of_n_boot(tmp_path, capsys):
    pytest.importorskip("leash.analysis.pairing")
    f = toy_samples(tmp_path, (("toy", 5), ("one", 1)))
    code, lines = cli_lines(capsys, "support", f, "--base", "base", "--rl", "rl", "--n-boot", 10)
    assert code == 0
    # was "leash support: warning: bootstrap_support: with n_boot=10 at level=0.95, ... use
    # n_boot >= 41 ...", once per table row, and "bootstrap_support: the bootstrap over one
    # question is degenerate ..."
    assert lines == [
        "leash support: warning: --n-boot 10 leaves no bootstrap replicate beyond the ends of "
        "the 95% intervals, which are then the extreme replicates; use --n-boot 41 or more "
        "(1000 or more for stable ends).",
        "leash support: warning: --n-boot: benchmark one has one paired question, which a "
        "bootstrap cannot resample: its interval bounds are NaN.",
    ]
    code, lines = cli_lines(capsys, "support", f, "--base", "base", "--rl", "rl", "--n-boot", 41)
    assert code == 0 and len(lines) == 1 and "benchmark one" in lines[0]


def test_cli_out_of_memory_is_one_line(tmp_path, capsys):
    pytest.importorskip("leash.analysis.pairing")
    f = toy_samples(tmp_path)
    # was a traceback ending in numpy's "_ArrayMemoryError: Unable to allocate ..."
    code, lines = cli_lines(capsys, "support", f, "--base", "base", "--rl", "rl", "--n-boot",
                            10**15)
    assert code == 2
    assert lines == ["leash support: error: not enough memory for --n-boot 1000000000000000 "
                     "bootstrap replicates; use fewer."]
