"""Input validation shared by the metric core.

Every public function of the core validates at its boundary through these helpers, so error
messages read the same everywhere: they name the function, the argument, the offending index and
the bad value, in the style of scikit-learn ("The 'k' parameter of pass_at_k must be ...").
"""

from __future__ import annotations

import numbers

import numpy as np

INT64_MAX = int(np.iinfo(np.int64).max)
TOO_LARGE = "too large (beyond the 64-bit integer range)"


def as_count_array(x, name: str, func: str) -> np.ndarray:
    """Return ``x`` as a 1-D-or-scalar int64 array of non-negative whole numbers.

    Floats that hold whole numbers (3.0) are accepted; 2.5, NaN, inf and negative values are
    rejected with a ValueError that names the first offending index and value, and so are
    values beyond int64 (1e20, a uint64 2**63, a Python int 2**70: "too large"), which a cast
    would wrap or saturate. Bools (Python, numpy scalars or bool arrays) are not counts: a
    TypeError, because ``True`` silently counting as 1 hides a swapped argument (a found mask
    passed where counts belong).
    """
    if x is None or isinstance(x, (str, bytes, bool, np.bool_)):
        raise TypeError(
            f"The '{name}' parameter of {func} must be an int or an array of ints. "
            f"Got {x!r} of type {type(x).__name__} instead."
        )
    arr = np.asarray(x)
    if arr.dtype == object:
        _check_object_ints(arr, name, func)  # Python ints beyond int64 land here
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"The '{name}' parameter of {func} must be an int or an array of ints. "
            f"Got an array of dtype {arr.dtype} instead."
        )
    if arr.ndim > 1:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a scalar or 1-D. "
            f"Got an array of shape {arr.shape} instead."
        )
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = _first(bad)
            raise ValueError(
                f"The '{name}' parameter of {func} must hold whole numbers. "
                f"Got {arr.flat[i].item()!r} at index {i} instead."
            )
    # Range checks before the cast: astype(int64) would turn 1e20 and 2**63 into -2**63.
    if arr.dtype.kind != "u":
        _check_non_negative(arr, name, func)
    if arr.dtype.kind == "u" or arr.dtype.kind == "f":
        big = arr > np.uint64(INT64_MAX) if arr.dtype.kind == "u" else arr >= 2.0**63
        if big.any():
            i = _first(big)
            _raise_too_large(arr.flat[i].item(), i, name, func)
    return arr.astype(np.int64)


def _check_non_negative(arr, name, func):
    neg = arr < 0
    if neg.any():
        i = _first(neg)
        raise ValueError(
            f"The '{name}' parameter of {func} must be non-negative. "
            f"Got {arr.flat[i].item()!r} at index {i} instead."
        )


def _raise_too_large(value, i, name, func):
    raise ValueError(
        f"The '{name}' parameter of {func} must be at most {INT64_MAX}. Got {value!r} at "
        f"index {i} instead: {TOO_LARGE}."
    )


def _check_object_ints(arr, name, func):
    """An object array of ints holds one beyond int64 (numpy keeps such ints as objects):
    name it. Object arrays of anything else fall through to the dtype TypeError."""
    flat = arr.ravel()
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))
               for v in flat):
        return
    for i, v in enumerate(flat):
        if v < 0:
            raise ValueError(
                f"The '{name}' parameter of {func} must be non-negative. "
                f"Got {int(v)} at index {i} instead."
            )
        if v > INT64_MAX:
            _raise_too_large(int(v), i, name, func)


def as_float_array(x, name: str, func: str, *, must: str = "be a float or an array of floats",
                   where: str = "") -> np.ndarray:
    """Return ``x`` as a float64 array (any shape); the caller checks shape and values.

    Bools (Python, numpy scalars or bool arrays), strings, None and non-numeric dtypes are a
    TypeError: ``True`` is not a number here (it would silently count as 1), nor is ``"0.5"``.
    ``must`` says what the argument holds ("hold numeric counts"), ``where`` adds a position
    to the message (" (histogram 3)").
    """
    arr = None if x is None or isinstance(x, (str, bytes, bool, np.bool_)) else np.asarray(x)
    if arr is None or arr.dtype.kind not in "iuf":
        got = (f"{x!r} of type {type(x).__name__}" if arr is None or arr.ndim == 0
               else f"an array of dtype {arr.dtype}")
        raise TypeError(f"The '{name}' parameter of {func} must {must}. Got {got}{where} instead.")
    return arr.astype(np.float64)


def refuse_values(arr: np.ndarray, bad: np.ndarray, name: str, func: str, must: str, *,
                  where: str = "", flat: bool = False) -> None:
    """Raise ValueError naming the first entry of ``arr`` where the mask ``bad`` is True.

    ``flat`` says "flat index" (for arrays of more than one dimension).
    """
    if bad.any():
        i = _first(bad)
        raise ValueError(
            f"The '{name}' parameter of {func} must {must}. Got {np.ravel(arr)[i].item()!r} at "
            f"{'flat ' if flat else ''}index {i}{where} instead."
        )


def as_count(x, name: str, func: str) -> int:
    """Return the scalar count ``x`` as an int (the rules of :func:`as_count_array`)."""
    arr = as_count_array(x, name, func)
    if arr.ndim:
        raise TypeError(
            f"The '{name}' parameter of {func} must be an int. "
            f"Got an array of shape {arr.shape} instead."
        )
    return int(arr)


def as_budgets(ks, name: str, func: str) -> np.ndarray:
    """Return the budget grid ``ks`` as a 1-D int64 array of at least one whole number >= 0
    (the caller checks the range: budgets are at least 1 and at most a question's n).

    None and an empty grid are a ValueError ("must hold at least one budget"): no budget means
    no result, and an empty grid used to fail inside numpy (an argmax or a max of nothing).
    """
    if ks is None or np.size(ks) == 0:
        got = "None" if ks is None else "an empty array"
        raise ValueError(
            f"The '{name}' parameter of {func} must hold at least one budget. Got {got} instead."
        )
    return np.atleast_1d(as_count_array(ks, name, func))


def check_at_least(arr: np.ndarray, name: str, func: str, minimum: int = 1) -> None:
    """Raise ValueError unless every entry of the count array ``arr`` is >= ``minimum``."""
    bad = arr < minimum
    if bad.any():
        i = _first(bad)
        where = f" at index {i}" if arr.ndim else ""
        raise ValueError(
            f"The '{name}' parameter of {func} must be an int in the range [{minimum}, inf). "
            f"Got {arr.flat[i]}{where} instead."
        )


def check_c_le_n(n: np.ndarray, c: np.ndarray, func: str, n_name="n", c_name="c") -> None:
    """Raise ValueError if any ``c > n`` (after broadcasting)."""
    n_b, c_b = np.broadcast_arrays(n, c)
    bad = c_b > n_b
    if bad.any():
        i = _first(bad)
        raise ValueError(
            f"The '{c_name}' parameter of {func} must satisfy {c_name} <= {n_name} for every "
            f"question. Got {c_name}={c_b.flat[i]} > {n_name}={n_b.flat[i]} at index {i}."
        )


def check_n_c(n, c, func: str, n_name: str = "n", c_name: str = "c"):
    """Return the counts ``n`` and ``c`` of one model as int64 arrays (scalar or 1-D) of equal
    length with ``c <= n`` for every question."""
    n = as_count_array(n, n_name, func)
    c = as_count_array(c, c_name, func)
    same_length(func, **{n_name: n, c_name: c})
    check_c_le_n(n, c, func, n_name, c_name)
    return n, c


def _smallest_n(n_b: np.ndarray, n_name: str):
    """The smallest n and where it is, for range messages: ("3", "(question index 0)")."""
    j = int(np.argmin(n_b)) if n_b.ndim else 0
    where = f"question index {j}" if n_name == "n" else f"{n_name} at question index {j}"
    return n_b.flat[j], f"({where})"


def check_k_in_range(k: np.ndarray, n: np.ndarray, func: str, n_name: str = "n") -> None:
    """Raise ValueError unless ``1 <= k <= n`` for every question (after broadcasting).

    The message names k, the smallest n (with ``n_name`` when it is not "n") and the index of
    that question.
    """
    k_b, n_b = np.broadcast_arrays(k, n)
    bad = (k_b < 1) | (k_b > n_b)
    if bad.any():
        i = _first(bad)
        if (k_b < 1).any():
            j = _first(k_b < 1)
            raise ValueError(
                f"The 'k' parameter of {func} must be an int in the range [1, n]. "
                f"Got k={k_b.flat[j]} at index {j} instead."
            )
        smallest, where = _smallest_n(n_b, n_name)
        raise ValueError(
            f"The 'k' parameter of {func} must be an int in the range [1, n] for every "
            f"question. Got k={k_b.flat[i]}, but the smallest n is {smallest} {where}; first "
            f"violation at index {i}."
        )


def check_ks_in_range(ks: np.ndarray, n: np.ndarray, func: str, name: str = "ks",
                      n_name: str = "n") -> None:
    """Raise ValueError unless every budget of ``ks`` is in ``[1, min(n)]``.

    One pass over ``ks`` and one over ``n`` (a budget grid applies to every question), so the
    cost is O(len(ks) + len(n)) and not O(len(ks) * len(n)). The message names the first bad
    budget and its index in ``ks``, and the smallest n with its question index.
    """
    bad = (ks < 1) if not n.size else (ks < 1) | (ks > n.min())
    if not bad.any():
        return
    i = _first(bad)
    if ks.flat[i] < 1:
        raise ValueError(
            f"The '{name}' parameter of {func} must hold budgets in the range [1, n]. "
            f"Got k={ks.flat[i]} at index {i} instead."
        )
    smallest, where = _smallest_n(n, n_name)
    raise ValueError(
        f"The '{name}' parameter of {func} must hold budgets in the range [1, n] for every "
        f"question. Got k={ks.flat[i]} at index {i}, but the smallest n is {smallest} {where}."
    )


def check_probability(x, name: str, func: str, *, open_interval: bool = True) -> float:
    """Return ``x`` as a float in (0, 1) (or [0, 1] when ``open_interval`` is False)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(
            f"The '{name}' parameter of {func} must be a float. Got {x!r} of type "
            f"{type(x).__name__} instead."
        )
    x = float(x)
    ok = (0.0 < x < 1.0) if open_interval else (0.0 <= x <= 1.0)
    if not ok:
        rng = "(0, 1)" if open_interval else "[0, 1]"
        raise ValueError(
            f"The '{name}' parameter of {func} must be a float in the range {rng}. "
            f"Got {x!r} instead."
        )
    return x


def check_positive_int(x, name: str, func: str, *, minimum: int = 1) -> int:
    """Return ``x`` as an int >= ``minimum``; a float holding a whole number is accepted, a bool
    is not (bool is a subclass of int, so ``True`` would silently count as 1)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(
            f"The '{name}' parameter of {func} must be an int. Got {x!r} of type "
            f"{type(x).__name__} instead."
        )
    if not isinstance(x, numbers.Integral):
        if isinstance(x, numbers.Real) and float(x).is_integer():
            x = int(x)
        else:
            raise TypeError(
                f"The '{name}' parameter of {func} must be an int. Got {x!r} of type "
                f"{type(x).__name__} instead."
            )
    x = int(x)
    if x > INT64_MAX:
        raise ValueError(
            f"The '{name}' parameter of {func} must be at most {INT64_MAX}. Got {x} instead: "
            f"{TOO_LARGE}."
        )
    if x < minimum:
        raise ValueError(
            f"The '{name}' parameter of {func} must be an int in the range [{minimum}, inf). "
            f"Got {x} instead."
        )
    return x


def check_choice(x, name: str, func: str, choices) -> str:
    """Return ``x`` if it is one of ``choices``."""
    if x not in choices:
        raise ValueError(
            f"The '{name}' parameter of {func} must be one of {sorted(choices)}. "
            f"Got {x!r} instead."
        )
    return x


def same_length(func: str, **arrays: np.ndarray) -> int:
    """Return the common length of 1-D (or scalar) arrays; raise if they differ."""
    lengths = {k: (v.shape[0] if v.ndim else None) for k, v in arrays.items()}
    sized = {k: v for k, v in lengths.items() if v is not None}
    if len(set(sized.values())) > 1:
        desc = ", ".join(f"{k}: {v}" for k, v in sized.items())
        raise ValueError(f"The arrays passed to {func} must have the same length. Got {desc}.")
    return next(iter(sized.values()), 1)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(np.ravel(mask))[0])
