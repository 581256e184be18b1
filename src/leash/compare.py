"""When two computed tables are "the same": the one rule every comparison of results uses.

numpy dispatches float64 ``exp``, ``log``, ``power``, ``expm1`` and ``log1p`` to different SIMD
kernels on different CPUs (AVX-512 builds use other routines than glibc's libm), and BLAS sums a
matrix product in an order that depends on the CPU and on its number of threads. So the same
code on the same data gives floats that differ in the last one to three bits from one machine
to the next. Those bits carry no science; everything else does. The rule:

* integer, boolean, string, categorical and other non-float values compare **exactly**;
* floats compare within ``rtol = 1e-12`` of the larger magnitude, or within ``atol = 1e-12``
  absolutely for values near 0 (the rule of :func:`math.isclose`, symmetric in its
  arguments); NaN equals NaN, an infinity only itself.

It is used by the freshness test of the committed ``figures/``, by ``leash simulate --check``,
and by the writers of :mod:`leash.report` and :func:`leash.simulate.write_demo`, which leave an
existing file in place when the new content equals it under this rule (so a re-run on another
CPU leaves ``git status`` clean). A difference of 1e-12 is far below anything a table prints
(three decimals) and far above a few ulps (about 2e-16 relative).
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd

__all__ = ["ATOL", "RTOL", "close", "csv_differences", "frame_differences"]

#: Relative tolerance of float comparisons.
RTOL = 1e-12
#: Absolute tolerance of float comparisons (for values near 0).
ATOL = 1e-12

# What a CSV cell holding an integer looks like (pandas writes floats always with '.' or 'e').
_INT_RE = re.compile(r"^[+-]?\d+$")


def close(a, b, *, rtol=RTOL, atol=ATOL) -> np.ndarray:
    """Elementwise "equal under the rule" of two float arrays (NaN == NaN, inf == inf only).

    Parameters
    ----------
    a, b : array-like of float, broadcastable shapes
    rtol, atol : float
        ``|a - b| <= max(rtol * max(|a|, |b|), atol)``, as :func:`math.isclose`.

    Returns
    -------
    numpy.ndarray of bool, the broadcast shape

    Examples
    --------
    >>> close([1.0, 0.0, np.nan, np.inf], [1.0 + 1e-15, 1e-14, np.nan, np.inf]).tolist()
    [True, True, True, True]
    >>> close([1.0, np.inf], [1.0 + 1e-9, -np.inf]).tolist()
    [False, False]
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - b)
        tol = np.maximum(rtol * np.maximum(np.abs(a), np.abs(b)), atol)
        out = (diff <= tol) & np.isfinite(a) & np.isfinite(b)
    both_nan = np.isnan(a) & np.isnan(b)
    same_inf = np.isinf(a) & (a == b)
    return out | both_nan | same_inf


def _max_rel(a: np.ndarray, b: np.ndarray) -> float:
    finite = np.isfinite(a) & np.isfinite(b)
    if not finite.any():
        return float("nan")
    a, b = a[finite], b[finite]
    scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), ATOL / RTOL)
    return float(np.max(np.abs(a - b) / scale))


def frame_differences(a: pd.DataFrame, b: pd.DataFrame, *, rtol=RTOL, atol=ATOL) -> list[str]:
    """What differs between two DataFrames under the rule; an empty list when they match.

    Columns, their order, dtypes and the index must be identical; float columns compare with
    :func:`close`, every other column exactly (list cells element by element).

    Parameters
    ----------
    a, b : pandas.DataFrame
    rtol, atol : float

    Returns
    -------
    list of str
        One line per difference, e.g. ``"column 'p_rl': 12 of 4641 values differ beyond rtol
        1e-12 (largest relative difference 3.1e-09)"``.
    """
    if list(a.columns) != list(b.columns):
        return [f"columns differ: {list(a.columns)} vs {list(b.columns)}"]
    if len(a) != len(b):
        return [f"row counts differ: {len(a)} vs {len(b)}"]
    out = []
    if not a.index.equals(b.index):
        out.append("the indexes differ")
    for col in a.columns:
        x, y = a[col], b[col]
        if x.dtype != y.dtype:
            out.append(f"column {col!r}: dtype {x.dtype} vs {y.dtype}")
            continue
        if pd.api.types.is_float_dtype(x.dtype):
            xv = x.to_numpy(dtype=float, na_value=np.nan)
            yv = y.to_numpy(dtype=float, na_value=np.nan)
            bad = ~close(xv, yv, rtol=rtol, atol=atol)
            if bad.any():
                out.append(f"column {col!r}: {int(bad.sum())} of {len(x)} values differ beyond "
                           f"rtol {rtol:g} (largest relative difference "
                           f"{_max_rel(xv, yv):.2g})")
            continue
        try:
            pd.testing.assert_series_equal(x, y, check_exact=True, check_index=False,
                                           check_names=False)
        except AssertionError:
            out.append(f"column {col!r}: values differ")
    return out


def _csv_cells_equal(x: str, y: str, rtol: float, atol: float) -> bool:
    if x == y:
        return True
    if _INT_RE.match(x) or _INT_RE.match(y):
        return False  # integers (and an integer vs a float) compare exactly
    try:
        fx, fy = float(x), float(y)
    except ValueError:
        return False  # text
    return bool(close(fx, fy, rtol=rtol, atol=atol))


def csv_differences(a: str, b: str, *, rtol=RTOL, atol=ATOL) -> list[str]:
    """What differs between two CSV texts under the rule; an empty list when they match.

    Cell by cell (so columns that mix text and numbers are handled): identical text matches;
    two integers must be identical; two floats compare with :func:`close`; anything else
    (text, an integer against a float) must be identical. The header and the shape must be
    identical.

    Parameters
    ----------
    a, b : str
        The CSV texts (e.g. a committed file and a fresh one).
    rtol, atol : float

    Returns
    -------
    list of str
        At most the first 5 differing cells as ``"row 3, column 'high': 0.41 vs 0.42"`` (rows
        counted from 1 after the header), and a count of the rest.
    """
    if a == b:
        return []
    ra = list(csv.reader(io.StringIO(a)))
    rb = list(csv.reader(io.StringIO(b)))
    if not ra or not rb or ra[0] != rb[0]:
        return [f"headers differ: {ra[0] if ra else []} vs {rb[0] if rb else []}"]
    if len(ra) != len(rb):
        return [f"row counts differ: {len(ra) - 1} vs {len(rb) - 1}"]
    header = ra[0]
    out: list[str] = []
    n_bad = 0
    for i, (row_a, row_b) in enumerate(zip(ra[1:], rb[1:]), start=1):
        if row_a == row_b:
            continue
        if len(row_a) != len(row_b):
            n_bad += 1
            if len(out) < 5:
                out.append(f"row {i}: {len(row_a)} vs {len(row_b)} fields")
            continue
        for j, (x, y) in enumerate(zip(row_a, row_b)):
            if not _csv_cells_equal(x, y, rtol, atol):
                n_bad += 1
                if len(out) < 5:
                    name = header[j] if j < len(header) else f"#{j + 1}"
                    out.append(f"row {i}, column {name!r}: {x!r} vs {y!r}")
    if n_bad > len(out):
        out.append(f"... {n_bad - len(out)} more")
    return out
