"""When two computed tables are "the same": the one rule every comparison of results uses.

The same code on the same data differs in the last float bits between CPUs (numpy's SIMD
kernels, BLAS summation order). So non-float values compare exactly and floats within 1e-12,
relative or (near 0) absolute, as :func:`math.isclose` (symmetric; NaN equals NaN, an infinity
only itself): far below anything printed, far above a few ulps. The freshness test of
``figures/``, ``leash simulate --check`` and the writers of :mod:`leash.output.report` and
:func:`leash.sources.simulate.write_demo` (which leave an equal file in place) use it.
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pandas as pd

__all__ = ["ATOL", "RTOL", "close", "csv_differences", "frame_differences"]

#: Relative and absolute (near 0) tolerance of float comparisons.
RTOL = ATOL = 1e-12
_INT_RE = re.compile(r"^[+-]?\d+$")  # a CSV integer (pandas writes floats with '.' or 'e')


def close(a, b, *, rtol=RTOL, atol=ATOL) -> np.ndarray:
    """Elementwise "equal under the rule" of two float arrays.

    Parameters
    ----------
    a, b : array-like of float, broadcastable
    rtol, atol : float
        ``|a - b| <= max(rtol * max(|a|, |b|), atol)``; NaN == NaN, inf == inf only.

    Returns
    -------
    numpy.ndarray of bool

    Examples
    --------
    >>> close([1.0, 0.0, np.nan, np.inf], [1.0 + 1e-15, 1e-14, np.nan, np.inf]).tolist()
    [True, True, True, True]
    >>> close([1.0, np.inf], [1.0 + 1e-9, -np.inf]).tolist()
    [False, False]
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = np.abs(a - b) <= np.maximum(rtol * np.maximum(np.abs(a), np.abs(b)), atol)
    return (out & np.isfinite(a) & np.isfinite(b)) | (np.isnan(a) & np.isnan(b)) | (
        np.isinf(a) & (a == b))


def frame_differences(a: pd.DataFrame, b: pd.DataFrame, *, rtol=RTOL, atol=ATOL) -> list[str]:
    """What differs between two DataFrames under the rule (empty: they match).

    Parameters
    ----------
    a, b : pandas.DataFrame
        Columns, dtypes and index must be identical; float columns compare with :func:`close`,
        the others exactly.
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
    out = [] if a.index.equals(b.index) else ["the indexes differ"]
    for col in a.columns:
        x, y = a[col], b[col]
        if x.dtype != y.dtype:
            out.append(f"column {col!r}: dtype {x.dtype} vs {y.dtype}")
        elif pd.api.types.is_float_dtype(x.dtype):
            xv, yv = (s.to_numpy(dtype=float, na_value=np.nan) for s in (x, y))
            bad = ~close(xv, yv, rtol=rtol, atol=atol)
            if bad.any():
                both = bad & np.isfinite(xv) & np.isfinite(yv)
                rel = np.abs(xv - yv)[both] / np.maximum(np.maximum(np.abs(xv), np.abs(yv)),
                                                         atol / rtol)[both]
                out.append(f"column {col!r}: {int(bad.sum())} of {len(x)} values differ beyond "
                           f"rtol {rtol:g} (largest relative difference "
                           f"{rel.max() if rel.size else float('nan'):.2g})")
        elif not x.reset_index(drop=True).equals(y.reset_index(drop=True)):
            out.append(f"column {col!r}: values differ")
    return out


def _cells_equal(x: str, y: str, rtol: float, atol: float) -> bool:
    if x == y:
        return True
    if _INT_RE.match(x) or _INT_RE.match(y):
        return False  # integers (and an integer vs a float) compare exactly
    try:
        return bool(close(float(x), float(y), rtol=rtol, atol=atol))
    except ValueError:
        return False  # text


def csv_differences(a: str, b: str, *, rtol=RTOL, atol=ATOL) -> list[str]:
    """What differs between two CSV texts under the rule, cell by cell (empty: they match).

    Parameters
    ----------
    a, b : str
        Same header and shape; two floats compare with :func:`close`, anything else (integers,
        text, an integer against a float) must be identical text.
    rtol, atol : float

    Returns
    -------
    list of str
        The first 5 differing cells (``"row 3, column 'high': '0.41' vs '0.42'"``, rows from 1
        after the header), then a count of the rest.
    """
    if a == b:
        return []
    ra, rb = list(csv.reader(io.StringIO(a))), list(csv.reader(io.StringIO(b)))
    if not ra or not rb or ra[0] != rb[0]:
        return [f"headers differ: {ra[0] if ra else []} vs {rb[0] if rb else []}"]
    if len(ra) != len(rb):
        return [f"row counts differ: {len(ra) - 1} vs {len(rb) - 1}"]
    header, found = ra[0], []
    for i, (row_a, row_b) in enumerate(zip(ra[1:], rb[1:]), start=1):
        if len(row_a) != len(row_b):
            found.append(f"row {i}: {len(row_a)} vs {len(row_b)} fields")
            continue
        found += [f"row {i}, column {header[j] if j < len(header) else f'#{j + 1}'!r}: "
                  f"{x!r} vs {y!r}" for j, (x, y) in enumerate(zip(row_a, row_b))
                  if not _cells_equal(x, y, rtol, atol)]
    return found[:5] + ([f"... {len(found) - 5} more"] if len(found) > 5 else [])
