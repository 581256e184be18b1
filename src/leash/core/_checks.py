"""The value checks of :mod:`leash.sources.simulate`, on the constraints of
:mod:`leash.core._validation`.

The metric core declares its parameters instead (``leash.core._validation.validate_params``); these
few functions give the same constraints, and so the same message template, to the simulator's
calls that check one value at a time.
"""

from __future__ import annotations

from numbers import Integral, Real

from leash.core._validation import (  # noqa: F401  (re-exported for the simulator, the CLI, the benchmark)
    INT64_MAX,
    TOO_LARGE,
    Counts,
    Interval,
    check_c_le_n,
    check_k_in_range,
    check_ks_in_range,
    check_param,
)


def as_count_array(x, name: str, func: str):
    """``x`` as an int64 count array, scalar or 1-D (:class:`leash.core._validation.Counts`)."""
    return check_param(x, [Counts()], name, func)


def check_positive_int(x, name: str, func: str, *, minimum: int = 1) -> int:
    """``x`` as an int >= ``minimum`` (a whole float is accepted, a bool is not)."""
    return check_param(x, [Interval(Integral, minimum, None, closed="left")], name, func)


def check_probability(x, name: str, func: str, *, open_interval: bool = True) -> float:
    """``x`` as a float in (0, 1) (or [0, 1] when ``open_interval`` is False)."""
    closed = "neither" if open_interval else "both"
    return check_param(x, [Interval(Real, 0, 1, closed=closed)], name, func)
