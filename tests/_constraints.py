"""Values for the generic test of the declared parameter validation (tests/test_validation.py).

For each constraint class of :mod:`leash.core._validation`: a valid value
(:func:`valid_value`) and the invalid values with the "Got ..." text their message must show
(:func:`invalid_values`), as scikit-learn's ``generate_valid_param`` and
``generate_invalid_param_val`` do. Only the tests use them, so they live here, not in the
package.
"""

import math
import numbers
from functools import singledispatch

import numpy as np

from leash.core._validation import (
    ArrayLike,
    Boolean,
    Callables,
    Constraint,
    Counts,
    Distributions,
    Floats,
    Generator,
    InstancesOf,
    Interval,
    Iterables,
    ModelSide,
    Options,
    Paths,
    SequenceOf,
    StrMatching,
    StrOptions,
    StrSequence,
    Violation,
    shown,
)


class _Opaque:
    """A value of no kind a constraint accepts, with a stable repr (the test ids agree between
    xdist workers)."""

    def __repr__(self):
        return "<an opaque object>"


OPAQUE = _Opaque()


def is_satisfied_by(constraint: Constraint, value) -> bool:
    """Whether ``constraint`` accepts ``value``."""
    try:
        constraint.check(value)
    except Violation:
        return False
    return True


@singledispatch
def valid_value(constraint):
    """A value ``constraint`` accepts."""
    if str(constraint) == "None":
        return None
    raise NotImplementedError(type(constraint).__name__)


@singledispatch
def invalid_values(constraint) -> list:
    """Pairs of a value ``constraint`` refuses and the "Got ..." text its message shows."""
    if str(constraint) == "None":
        return []
    raise NotImplementedError(type(constraint).__name__)


@valid_value.register
def _(c: Interval):
    if c.type is numbers.Integral:
        lo = 0 if c.left is None else c.left
        return lo if c.closed in ("left", "both") else lo + 1
    lo = -1.0 if c.left is None else c.left
    hi = lo + 2.0 if c.right is None else c.right
    return (lo + hi) / 2


@invalid_values.register
def _(c: Interval):
    out = [(True, "True"), (np.bool_(False), "False"), ("1", "'1'")]
    if c.left is not None:
        bad = c.left - (0 if c.closed in ("right", "neither") else 1)
        out.append((bad, shown(bad)))
    if c.right is not None:
        bad = c.right + (0 if c.closed in ("left", "neither") else 1)
        out.append((bad, shown(bad)))
    out += [(x, shown(x)) for x in c.exclude]
    if c.type is numbers.Integral:
        out.append((2.5, "2.5"))
        if c.right is None:
            out.append((2**70, str(2**70)))
    else:
        out.append((math.nan, "nan"))
    return out


@valid_value.register(StrOptions)
@valid_value.register(Options)
def _(c):
    return c.options[0]


@invalid_values.register
def _(c: StrOptions):
    return [("bogus", "'bogus'"), (1, "1")]


@invalid_values.register
def _(c: Options):
    out = [("bogus", "'bogus'")]
    if c.type is bool:
        out += [(not c.options[0], repr(not c.options[0])), (0, "0")]
    return out


@valid_value.register
def _(c: Boolean):
    return False


@invalid_values.register
def _(c: Boolean):
    return [("yes", "'yes'"), (1, "1")]


@valid_value.register
def _(c: InstancesOf):
    return c.example() if c.example else c.classes()()


@invalid_values.register
def _(c: InstancesOf):
    return [(OPAQUE, "<an opaque object>")]


@invalid_values.register
def _(c: Generator):
    return [(0, "0"), (OPAQUE, "<an opaque object>")]


@valid_value.register
def _(c: Callables):
    return lambda x: x


@invalid_values.register
def _(c: Callables):
    return [("f", "'f'")]


@valid_value.register
def _(c: ArrayLike):
    return [0]


@valid_value.register
def _(c: Iterables):
    return []


@invalid_values.register(ArrayLike)
@invalid_values.register(Iterables)
def _(c):
    return [(3, "3"), ("ab", "'ab'")]


@valid_value.register
def _(c: StrSequence):
    return ("a",) * c.min_len


@invalid_values.register
def _(c: StrSequence):
    out = [("step", "'step'"), ([1], "[1]")]
    if c.min_len:
        out.append((["a"] * (c.min_len - 1), shown(["a"] * (c.min_len - 1))))
    if c.max_len is not None:
        out.append((["a"] * (c.max_len + 1), shown(["a"] * (c.max_len + 1))))
    return out


@valid_value.register
def _(c: StrMatching):
    return c.example


@invalid_values.register
def _(c: StrMatching):
    out = [(1, "1"), (None, "None")]
    return out + [(v, shown(v)) for v in ("", " ", "a/b.", "x\n") if not is_satisfied_by(c, v)][:2]


@valid_value.register
def _(c: Paths):
    return "x"


@invalid_values.register
def _(c: Paths):
    return [(3, "3"), (None, "None"), (b"x", "b'x'")] + ([("", "''")] if c.nonempty else [])


@valid_value.register
def _(c: Distributions):
    return np.full((1, c.min_classes), 1 / c.min_classes)


@invalid_values.register
def _(c: Distributions):
    m = c.min_classes
    return [(True, "True"), ("q", "'q'"), (None, "None"),
            ([0.5, 0.5], "an array of shape (2,)"),
            ([[1.0] * (m - 1)], f"an array of shape (1, {m - 1})"),
            ([[1.0] + [0.0] * (m - 2) + [np.nan]], f"nan at row 0, class {m - 1}"),
            ([[1.0] * m, [-0.5] + [1.5 / (m - 1)] * (m - 1)], "-0.5 at row 1, class 0"),
            ([[0.25] * m], f"row 0 summing to {shown(0.25 * m)}")]


@valid_value.register
def _(c: ModelSide):
    return "m"


@invalid_values.register
def _(c: ModelSide):
    return [(3, "3"), (("m", 1, 2), "('m', 1, 2)")]


@valid_value.register
def _(c: Counts):
    return np.array([max(c.minimum, 1)])


@invalid_values.register
def _(c: Counts):
    m = c.minimum
    out = [(True, "True"), (np.bool_(True), "True"), ("1", "'1'"), (None, "None"),
           (np.array([True, False]), "array([ True, False])"), ([True], "[True]"),
           (["1"], "['1']"),
           ([[m + 1]], "an array of shape (1, 1)"), ([m + 1, m - 1], f"{m - 1} at index 1"),
           ([m + 1.5], f"{m + 1.5} at index 0"), ([np.nan], "nan at index 0"),
           ([m + 1, 2**70], f"{2**70} at index 1"),
           (np.array([2**63], dtype=np.uint64), f"{2**63} at index 0")]
    if c.scalar:
        out.append((m - 1, f"{m - 1}"))
    else:
        out.append((m + 1, f"an array of shape {()}"))
    if c.nonempty:
        out.append(([], "an empty array"))
    if c.increasing:
        out.append(([m + 2, m + 1], f"{m + 1} after {m + 2} at index 1"))
    return out


@valid_value.register
def _(c: Floats):
    if c.size is not None:
        return np.full(c.size, valid_value(c.range))
    return np.full((1,) * _lowest_ndim(c), valid_value(c.range))


def _lowest_ndim(c: Floats) -> int:
    return 1 if c.ndim == "1+" else min(c.ndim) if isinstance(c.ndim, tuple) else 0


@invalid_values.register
def _(c: Floats):
    r = c.range
    d = max(_lowest_ndim(c), 1)  # bad elements in an array of an allowed dimension

    def one(x):
        return np.reshape([x], (1,) * d).tolist()

    where = "index 0" if d == 1 else "flat index 0"
    out = [(True, "True"), ("0.5", "'0.5'"), (None, "None"), ([True, True], "[True, True]"),
           (np.array([True, False]), "array([ True, False])"), (["1"], "['1']"),
           (one(np.inf), f"inf at {where}")]
    if not c.nan:
        out.append((one(np.nan), f"nan at {where}"))
    if r.left is not None:
        out.append((one(r.left - 1.0), f"{r.left - 1.0} at {where}"))
    if r.right is not None:
        out.append((one(r.right + 1.0), f"{r.right + 1.0} at {where}"))
    if c.ndim in ((0, 1), (1,)):
        out.append(([[valid_value(r)]], "an array of shape (1, 1)"))
    if c.size is not None:
        out.append(([valid_value(r)] * (c.size + 1), f"an array of length {c.size + 1}"))
    if c.ndim in ((1,), "1+"):
        out.append((valid_value(r), shown(valid_value(r))))
    if isinstance(c.ndim, tuple) and 0 not in c.ndim and c.ndim != (1,):
        out.append((valid_value(r), shown(valid_value(r))))
        out.append((np.full((1,) * (max(c.ndim) + 1), valid_value(r)),
                    f"an array of shape {(1,) * (max(c.ndim) + 1)}"))
    if c.nonempty:
        out.append(([], "an empty array"))
    return out


@valid_value.register
def _(c: SequenceOf):
    return [valid_value(c.item)]


@invalid_values.register
def _(c: SequenceOf):
    out = [("ab", "'ab'"), (3, "3")]
    out += [([valid_value(c.item), v], f"{got} ({c.noun} 1)")
            for v, got in invalid_values(c.item) if got is not None]
    if c.nonempty:
        out.append(([], "an empty sequence"))
    return out
