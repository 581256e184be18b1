"""bootstrap_support / bootstrap_codes are bit for bit what they were before their fast path.

``reference_bootstrap_codes`` is the implementation before the fast path (counts through
``_replicate_sums`` with the rows of eye(4), NaN-aware quantiles over all eight columns at once),
copied here as the reference: the same draws from the same Generator must give the same
replicates, estimates and interval ends, bit for bit, and leave the Generator in the same state.
``PINNED`` holds a few outputs of that implementation, computed before the change.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from leash.core.stats import (
    SUPPORT_COLUMNS,
    _interval,
    _replicate_array,
    _replicate_sums,
    _resampling_groups,
    bootstrap_codes,
    bootstrap_support,
)
from leash.core.support import support_codes, support_metrics_kernel


def reference_interval(rep, level, method="linear"):
    a = (1 - level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo = np.nanquantile(rep, a, axis=0, method=method) if rep.size else np.nan
        hi = np.nanquantile(rep, 1 - a, axis=0, method=method) if rep.size else np.nan
    return lo, hi


def reference_bootstrap_codes(codes, rng, n_boot, strata, level, func="bootstrap_support"):
    """bootstrap_codes before the fast path, returning (frame, replicates)."""
    groups, degenerate = _resampling_groups(codes.size, strata, func, stacklevel=5)
    rep = _replicate_array((n_boot, len(SUPPORT_COLUMNS)), func)
    _replicate_sums(np.eye(4), codes.astype(np.intp), groups, rng, n_boot, rep[:, :4], func)
    for j, metric in enumerate(support_metrics_kernel(rep[:, 0], rep[:, 1], rep[:, 2]), start=4):
        rep[:, j] = metric
    point_counts = np.bincount(codes, minlength=4).astype(np.float64)
    point = np.concatenate([point_counts, np.asarray(support_metrics_kernel(*point_counts[:3]))])
    lo, hi = reference_interval(rep, level) if not degenerate else (np.nan, np.nan)
    frame = pd.DataFrame({"estimate": point, "low": lo, "high": hi}, index=list(SUPPORT_COLUMNS))
    return frame, rep


def _data(seed, n_questions, n_strata, skew):
    rng = np.random.default_rng(seed)
    cb = rng.binomial(8, rng.beta(skew, skew, n_questions))
    cr = rng.binomial(8, rng.beta(skew, skew, n_questions))
    strata = (None if n_strata is None else
              rng.integers(0, n_strata, n_questions).astype(str))  # unequal, unsorted strata
    return cb, cr, strata


CASES = [(0, 50, None, 0.5, 200, 0.95), (1, 340, 13, 0.5, 100, 0.95),
         (2, 1547, 11, 0.3, 1000, 0.9), (3, 30, 3, 5.0, 500, 0.99),  # NaN ratios in replicates
         (4, 7, None, 0.2, 2001, 0.95), (5, 3000, 2, 0.5, 300, 0.5)]


@pytest.mark.parametrize("case", CASES, ids=[f"seed{c[0]}" for c in CASES])
def test_bootstrap_codes_is_bitwise_the_reference(case):
    seed, nq, ns, skew, n_boot, level = case
    cb, cr, strata = _data(seed, nq, ns, skew)
    codes = support_codes(cb, cr)
    rng_new, rng_ref = np.random.default_rng(seed + 100), np.random.default_rng(seed + 100)
    frame, rep = bootstrap_codes(codes, rng_new, n_boot, strata, level, "bootstrap_support",
                                 return_replicates=True)
    ref_frame, ref_rep = reference_bootstrap_codes(codes, rng_ref, n_boot, strata, level)
    np.testing.assert_array_equal(rep, ref_rep)
    assert rep.tobytes() == ref_rep.tobytes()  # bit for bit, NaN and signed zeros included
    assert frame.to_numpy().tobytes() == ref_frame.to_numpy().tobytes()
    assert list(frame.index) == list(ref_frame.index) and list(frame.columns) == list(
        ref_frame.columns)
    assert rng_new.bit_generator.state == rng_ref.bit_generator.state  # the same draws


def test_bootstrap_support_is_bitwise_the_reference_with_min_count():
    cb, cr, strata = _data(7, 400, 5, 0.5)
    got = bootstrap_support(cb, cr, rng=np.random.default_rng(9), n_boot=300, strata=strata,
                            min_count=3)
    ref, _ = reference_bootstrap_codes(support_codes(cb, cr, min_count=3),
                                       np.random.default_rng(9), 300, strata, 0.95)
    assert got.to_numpy().tobytes() == ref.to_numpy().tobytes()


def test_interval_is_bitwise_nanquantile():
    rng = np.random.default_rng(0)
    for n in (2, 3, 41, 1000, 1001):
        rep = rng.random((n, 8))
        rep[:, 5] = np.round(rep[:, 5] * 4) / 4  # ties
        rep[rng.random(n) < 0.3, 6] = np.nan  # some NaN
        rep[:, 7] = np.nan  # all NaN
        for level in (0.5, 0.9, 0.95, 0.99):
            for method in ("linear", "inverted_cdf"):
                lo, hi = _interval(rep, level, method)
                rlo, rhi = reference_interval(rep, level, method)
                assert np.asarray(lo).tobytes() == np.asarray(rlo).tobytes()
                assert np.asarray(hi).tobytes() == np.asarray(rhi).tobytes()


# Computed with the implementation before the fast path (commit 8294028): 5 questions, seed 0.
PINNED = {
    "low": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.7875000000000003],
    "high": [3.0, 3.0, 2.049999999999997, 4.0, 1.0, 1.0, 0.6666666666666666, 1.0],
}


def test_pinned_output_of_the_old_implementation():
    cb, cr = np.array([0, 3, 0, 1, 0]), np.array([2, 0, 0, 1, 0])
    f = bootstrap_support(cb, cr, rng=np.random.default_rng(0), n_boot=100, level=0.9)
    assert f["estimate"].tolist() == [1.0, 1.0, 1.0, 2.0, 0.5, 0.5, 0.5, 0.0]
    assert f["low"].tolist() == PINNED["low"] and f["high"].tolist() == PINNED["high"]
