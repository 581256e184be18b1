"""Parameter validation declared once per public function, in the style of scikit-learn.

Each public function states what each of its parameters may be, once, in a decorator::

    @validate_params({"n": [Counts()], "k": [Counts(minimum=1)], "estimator": [StrOptions(*E)]})
    def f(n, k, estimator="unbiased"): ...

as scikit-learn's ``validate_params`` does (``sklearn/utils/_param_validation.py``: constraint
objects ``Interval``, ``StrOptions``, ``None``, types, ...; the declarations are an attribute of
the function, so one generic test walks them, ``tests/test_validation.py``, with the valid and
invalid values of each constraint class from ``tests/_constraints.py``). Written here rather
than imported because scikit-learn's is private API, and because two rules of this project differ
from it: a satisfied constraint also *normalises* the value the body receives (an
``Interval(Integral, ...)`` gives an int and accepts a whole float such as 3.0; :class:`Counts`
gives an int64 array), so the body never converts or re-checks; and bools are never numbers
(``True`` would silently count as 1).

A constraint checks one parameter alone, element by element for arrays (a negative count, NaN,
a non-whole budget: the message names the first bad index). Checks that relate two parameters
(``c <= n``, ``k <= n``, equal lengths) stay in the functions, through :func:`invalid` and the
helpers below, so that every message reads from one template, :data:`TEMPLATE`::

    The 'k' parameter of pass_at_k must be an int in the range [1, inf) or a 1-D array of such
    ints. Got 0 instead.

Every error is an :class:`InvalidParameterError`, both a ValueError and a TypeError (as
scikit-learn's), so callers catching either keep working. numpy only.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
import os
import re
import reprlib
import sys
from collections.abc import Iterable, Mapping

import numpy as np

from leash.limits import INT64_MAX

TEMPLATE = "The {name!r} parameter of {func} must be {constraint}. Got {value} instead."
_AT_MOST_INT64 = f"at most {INT64_MAX} (the 64-bit integer range)"

__all__ = [
    "TEMPLATE", "InvalidParameterError", "validate_params", "check_param",
    "invalid", "shown", "Constraint", "Violation",
    "Interval", "StrOptions", "Options", "Boolean", "InstancesOf", "Callables", "ArrayLike",
    "Iterables", "Counts", "Floats", "SequenceOf", "StrSequence", "ModelSide", "Generator",
    "StrMatching", "Paths", "Distributions", "DATAFRAME",
    "as_count_array", "check_positive_int", "check_probability",
    "same_length", "check_pairs", "check_c_le_n", "check_k_in_range", "check_ks_in_range",
]


class InvalidParameterError(ValueError, TypeError):
    """A parameter outside its declared constraints (a ValueError and a TypeError).

    Besides its message (:data:`TEMPLATE`) it keeps what a caller acts on, with the attributes
    of the errors of :mod:`leash.errors` (read by name: the core imports no other layer), so
    that another layer words it itself (the command line names the option): ``param`` (the
    keyword), ``func``, ``constraint`` (what the value must be), ``got`` (the bad value as the
    message shows it, e.g. ``-1 at index 0``) and ``value`` (the bad value, when the check has
    it, else None); ``file``, ``line`` and ``key`` are None and ``hint`` is empty.
    """

    file = line = key = None
    hint = ()

    def __init__(self, message: str, *, param=None, func=None, constraint=None, got=None,
                 value=None):
        super().__init__(message)
        self.param, self.func, self.constraint = param, func, constraint
        self.got, self.value = got, value


# ---- the one template ---------------------------------------------------------------------------

_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxtuple = 40, 40, 6, 6
_REPR.maxdict, _REPR.maxset, _REPR.maxlong = 4, 6, 60
_SHOWN_MAX = 80


def shown(value) -> str:
    """A short repr of ``value`` for a message: long values are cut (``...``), one line."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return shown(value.item())
        text = "array(" + np.array2string(value, threshold=6, edgeitems=3, separator=", ",
                                          max_line_width=10**6) + ")"
    elif hasattr(value, "shape") and not isinstance(value, (int, float, str)):
        text = f"a {type(value).__name__} of shape {tuple(value.shape)}"  # DataFrame, Series
    elif isinstance(value, int) and not isinstance(value, bool):
        text = repr(value)  # ints are shown whole (2**70 is the point of a message)
    else:
        text = _REPR.repr(value)
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN_MAX else text[: _SHOWN_MAX - 3] + "..."


def invalid(name: str, func: str, constraint: str, got: str, value=None
            ) -> InvalidParameterError:
    """The error of :data:`TEMPLATE`: parameter ``name`` of ``func`` must be ``constraint``;
    ``got`` is the bad value as text (:func:`shown`, with "at index i" for an element), and
    ``value`` the bad value itself where the caller has it.
    """
    return InvalidParameterError(
        TEMPLATE.format(name=name, func=func, constraint=constraint, value=got), param=name,
        func=func, constraint=constraint, got=got, value=value)


def _at(arr: np.ndarray, i: int, flat: bool = False) -> str:
    """The element ``i`` (flat index) of ``arr`` and where it is, for a message."""
    if arr.ndim == 0:
        return shown(arr.item())
    return f"{shown(np.ravel(arr)[i])} at {'flat ' if flat else ''}index {i}"


def _first(mask) -> int:
    return int(np.flatnonzero(np.ravel(mask))[0])


# ---- constraints ---------------------------------------------------------------------------------


class Violation(Exception):
    """Raised by :meth:`Constraint.check`: what the value must be and what it was.

    ``typed`` says the value had the constraint's kind (a number for an interval, an array for
    counts), so that its specific message wins over the list of all the constraints.
    """

    def __init__(self, must: str, got: str, typed: bool = True):
        super().__init__(must, got)
        self.must, self.got, self.typed = must, got, typed


class Constraint:
    """One allowed kind of value. ``check`` returns the value normalised, or raises
    :class:`Violation`; ``str()`` says what is allowed ("an int in the range [1, inf)").

    A constraint of one kind of value only sets ``text`` (what ``str()`` says) and ``accepts``
    (and ``normalise``, the value the body receives); the numeric ones override ``check``.
    """

    text = ""

    def accepts(self, value) -> bool:
        raise NotImplementedError

    def normalise(self, value):
        return value

    def check(self, value):
        if not self.accepts(value):
            self._refuse(value)
        return self.normalise(value)

    def __str__(self):
        return self.text

    def _refuse(self, value, typed=False):
        raise Violation(str(self), shown(value), typed)


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


class _NoneConstraint(Constraint):
    text = "None"

    def accepts(self, value):
        return value is None


class Interval(Constraint):
    """A number in an interval (scikit-learn's ``Interval``): ``type`` is ``numbers.Integral``
    (an int; a whole float such as 3.0 is accepted and given as an int) or ``numbers.Real``
    (given as a float). ``closed`` is "left", "right", "both" or "neither"; a bound of None is
    infinite; ``exclude`` lists values that are not allowed (a log base of 1). Bools are not
    numbers; ints beyond int64 are refused as too large.
    """

    def __init__(self, type, left, right, *, closed, exclude=()):
        if type not in (numbers.Integral, numbers.Real):
            raise TypeError("Interval type must be numbers.Integral or numbers.Real")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval closed must be left, right, both or neither: {closed}")
        self.type, self.left, self.right, self.closed = type, left, right, closed
        self.exclude = tuple(exclude)

    def __contains__(self, x) -> bool:
        if x != x:  # NaN
            return False
        lo = -math.inf if self.left is None else self.left
        hi = math.inf if self.right is None else self.right
        left_ok = x >= lo if self.closed in ("left", "both") else x > lo
        right_ok = x <= hi if self.closed in ("right", "both") else x < hi
        return left_ok and right_ok and x not in self.exclude

    def check(self, value):
        given = value  # messages show the value as given (0, not 0.0)
        if _is_bool(value) or not isinstance(value, numbers.Real):
            self._refuse(value)
        if self.type is numbers.Integral:
            if not isinstance(value, numbers.Integral) and (
                    not math.isfinite(value) or not float(value).is_integer()):
                self._refuse(value, typed=True)
            value = int(value)
            if value > INT64_MAX:
                raise Violation(_AT_MOST_INT64, shown(given))
        else:
            value = float(value)
        if value not in self:
            self._refuse(given, typed=True)
        return value

    def __str__(self):
        kind = "an int" if self.type is numbers.Integral else "a float"
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        other = (" other than " + ", ".join(map(str, self.exclude))) if self.exclude else ""
        return f"{kind} in the range {lb}{lo}, {hi}{rb}{other}"


class StrOptions(Constraint):
    """One of the given strings (scikit-learn's ``StrOptions``; the order is kept)."""

    def __init__(self, *options: str):
        self.options = tuple(options)
        self.text = "a str among {" + ", ".join(map(repr, self.options)) + "}"

    def check(self, value):
        if not isinstance(value, str) or value not in self.options:
            self._refuse(value, typed=isinstance(value, str))
        return value


class Options(Constraint):
    """One of a few values of a type (scikit-learn's ``Options``), e.g. ``Options(int, 0)``;
    ``Options(bool, False)`` is the bool False alone (a figure's ``data=False``).
    """

    def __init__(self, type, *options):
        self.type, self.options = type, tuple(options)
        kind = {int: "an int", numbers.Integral: "an int", float: "a float",
                str: "a str"}.get(self.type, "a value")
        self.text = (" or ".join(map(repr, self.options)) if type is bool
                     else f"{kind} among {{{', '.join(map(repr, self.options))}}}")

    def accepts(self, value):
        if self.type is bool:
            return _is_bool(value) and bool(value) in self.options
        return not _is_bool(value) and isinstance(value, self.type) and value in self.options

    def normalise(self, value):
        return bool(value) if self.type is bool else value


class Boolean(Constraint):
    """A bool (Python or numpy), given as a Python bool; 0 and 1 are not bools here."""

    text = "a bool"
    accepts = staticmethod(_is_bool)
    normalise = staticmethod(bool)


class InstancesOf(Constraint):
    """An instance of ``type`` (scikit-learn's ``_InstancesOf``); ``name`` is how a message
    calls it ("a pandas DataFrame") and ``example`` makes a valid one for the generic test.

    ``type`` is a class, a tuple of classes, or the dotted name of a class
    (``"matplotlib.axes.Axes"``), looked up among the modules already imported and never
    imported here: a value whose class's module is not loaded is no instance of it, so a
    declaration needs no heavy import (and the core names a class of a layer it may not import).
    """

    def __init__(self, type, name: str, example=None):
        self.type, self.text, self.example = type, name, example

    def classes(self):
        """The class (or tuple of classes) that ``type`` names; ``()`` when not loaded."""
        if not isinstance(self.type, str):
            return self.type
        module, _, name = self.type.rpartition(".")
        return getattr(sys.modules.get(module), name, ())

    def accepts(self, value):
        return isinstance(value, self.classes())


#: A pandas DataFrame (named: the core does not import pandas).
DATAFRAME = InstancesOf("pandas.DataFrame", "a pandas DataFrame",
                        lambda: sys.modules["pandas"].DataFrame())


class Generator(InstancesOf):
    """A ``numpy.random.Generator``: randomness comes only from the caller's generator."""

    def __init__(self):
        super().__init__(np.random.Generator, "a numpy.random.Generator (for example "
                         "numpy.random.default_rng(0))", lambda: np.random.default_rng(0))


class Callables(Constraint):
    """A callable."""

    text = "a callable"
    accepts = staticmethod(callable)


class ArrayLike(Constraint):
    """An array-like that is not a scalar or a string (not converted: read once, by the body)."""

    text = "an array-like"

    def accepts(self, value):
        return not isinstance(value, (str, bytes)) and (hasattr(value, "__len__")
                                                        or hasattr(value, "__array__"))


class Iterables(Constraint):
    """An iterable that is not a string (not consumed: a generator stays usable)."""

    text = "an iterable (not a str)"

    def accepts(self, value):
        return not isinstance(value, (str, bytes)) and isinstance(value, Iterable)


class StrSequence(Constraint):
    """A list or tuple of str (column names); a str alone is refused (it is not a list of its
    characters). Given as a list. ``min_len`` and ``max_len`` bound its length.
    """

    normalise = staticmethod(list)

    def __init__(self, *, min_len: int = 0, max_len: int | None = None):
        self.min_len, self.max_len = min_len, max_len
        if max_len == min_len:
            self.text = f"a list or tuple of {min_len} str"
        elif max_len is not None:
            self.text = f"a list or tuple of {min_len} to {max_len} str"
        else:
            self.text = "a " + ("non-empty " if min_len == 1 else "") + "list or tuple of str" + (
                f" (at least {min_len})" if min_len > 1 else "")

    def check(self, value):
        if not (isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)):
            self._refuse(value)
        if len(value) < self.min_len or (self.max_len is not None and len(value) > self.max_len):
            self._refuse(value, typed=True)
        return list(value)


class StrMatching(Constraint):
    """A str that the regular expression ``pattern`` matches whole (a file stem, a non-blank
    text); ``text`` says what it is in a message and ``example`` is one (for the generic test).
    """

    def __init__(self, pattern: str, text: str, example: str):
        self.regex, self.text, self.example = re.compile(pattern), text, example

    def check(self, value):
        if not isinstance(value, str) or self.regex.fullmatch(value) is None:
            self._refuse(value, typed=isinstance(value, str))
        return value


class Paths(Constraint):
    """A path: a str or an ``os.PathLike`` (not converted); ``nonempty`` refuses the str "",
    ``note`` says what a value means (``"": the scratch folder``).
    """

    def __init__(self, *, nonempty: bool = False, note: str = ""):
        self.nonempty = nonempty
        self.text = (("a non-empty str or path" if nonempty else "a str or path")
                     + (f" ({note})" if note else ""))

    def check(self, value):
        if not (isinstance(value, os.PathLike)
                or (isinstance(value, str) and (value or not self.nonempty))):
            self._refuse(value, typed=isinstance(value, str))
        return value


class ModelSide(Constraint):
    """A model label (str) or a (model, step) tuple."""

    text = "a model label (str) or a (model, step) tuple"

    def accepts(self, value):
        return isinstance(value, str) or (isinstance(value, tuple) and len(value) == 2
                                          and isinstance(value[0], str))


def _as_numeric_array(value, constraint):
    """``value`` as an ndarray of a numeric dtype (not bool), or a violation of ``constraint``."""
    if value is None or isinstance(value, (str, bytes)) or _is_bool(value):
        constraint._refuse(value)
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError):  # ragged nested lists
        constraint._refuse(value)
    if arr.dtype.kind not in "iuf" and not (arr.dtype == object and arr.size and all(
            isinstance(v, numbers.Integral) and not _is_bool(v) for v in arr.ravel())):
        constraint._refuse(value)
    return arr


class Counts(Constraint):
    """A count (a whole number >= ``minimum``) or a 1-D array of them, given as int64.

    Floats holding whole numbers (3.0) are counts; 2.5, NaN, inf, bools (a found mask passed
    where counts belong), strings and values beyond int64 (1e20, a uint64 2**63, a Python int
    2**70, which a cast would wrap) are refused, naming the first bad index. ``scalar=False``
    refuses a scalar, ``nonempty`` an empty array, ``increasing`` a grid that does not increase
    strictly; ``note`` is added to the description ("-1: no correct sample").
    """

    def __init__(self, minimum=0, *, scalar=True, nonempty=False, increasing=False, note=""):
        self.minimum, self.scalar, self.nonempty = minimum, scalar, nonempty
        self.increasing, self.note = increasing, note

    def __str__(self):
        grid = ("a non-empty " if self.nonempty else "a ") + "1-D array of "
        text = (f"an int in the range [{self.minimum}, inf) or {grid}such ints" if self.scalar
                else f"{grid}ints in the range [{self.minimum}, inf)")
        return (text + (", strictly increasing" if self.increasing else "")
                + (f" ({self.note})" if self.note else ""))

    def check(self, value):
        if type(value) is int and self.scalar:  # the common scalar, without numpy's overhead
            if value < self.minimum or value > INT64_MAX:
                raise Violation(_AT_MOST_INT64 if value > INT64_MAX else str(self), shown(value))
            return np.asarray(value, dtype=np.int64)
        arr = _as_numeric_array(value, self)
        if arr.ndim > 1 or (arr.ndim == 0 and not self.scalar):
            raise Violation(str(self), f"an array of shape {arr.shape}")
        if self.nonempty and arr.size == 0:
            raise Violation(str(self), "an empty array")
        # The first element that is not a whole number >= minimum, or beyond int64 (ints of an
        # object array, a uint64 2**63, a float 1e20: checked before the cast, which wraps them)
        big = arr >= 2.0**63 if arr.dtype.kind == "f" else arr > INT64_MAX
        bad = big | (arr < self.minimum)
        if arr.dtype.kind == "f":
            bad |= ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = _first(bad)
            raise Violation(_AT_MOST_INT64 if np.ravel(big)[i] else str(self), _at(arr, i))
        out = arr.astype(np.int64)
        if self.increasing and out.ndim and out.size > 1:
            down = np.diff(out) <= 0
            if down.any():
                i = _first(down) + 1
                raise Violation(str(self), f"{out[i]} after {out[i - 1]} at index {i}")
        return out


class Floats(Constraint):
    """Floats in an interval, as a float64 array (0-d for a scalar).

    ``ndim`` is the tuple of allowed dimensions (None: any; "1+": one or more); ``nan=True``
    lets NaN through (a missing value), ``nonempty`` refuses an empty array, ``size`` (with
    ``ndim=(1,)``) any other length; ``note`` says what they are ("NaN for no test"). Every
    other non-finite value, and any value outside ``[low, high]`` (``closed`` as for
    :class:`Interval`), is refused, naming its index.
    """

    def __init__(self, low=None, high=None, *, closed="both", ndim=(0, 1), nan=False,
                 nonempty=False, size=None, note=""):
        self.range = Interval(numbers.Real, low, high, closed=closed)
        self.ndim, self.nan, self.nonempty, self.note = ndim, nan, nonempty, note
        self.size = size

    def __str__(self):
        r = self.range
        if r.left is None and r.right is None:
            one, many = "a finite float", "finite floats"
        else:
            cond = str(r).removeprefix("a float ")
            one, many = f"a float {cond}", f"floats {cond}"
        if self.ndim == (0, 1):
            text = f"{one} or a 1-D array of such floats"
        elif self.ndim == (1,) and self.size is not None:
            text = f"a 1-D array of {self.size} {many}"
        elif self.ndim == (1,):
            text = ("a non-empty " if self.nonempty else "a ") + f"1-D array of {many}"
        elif self.ndim == "1+":
            text = f"an array (1-D or more) of {many}"
        elif isinstance(self.ndim, tuple) and 0 not in self.ndim:
            text = f"a {' or '.join(f'{d}-D' for d in self.ndim)} array of {many}"
        else:
            text = f"{one} or an array of such floats"
        return text + (f" ({self.note})" if self.note else "")

    def check(self, value):
        if type(value) in (int, float) and self.ndim in ((0, 1), None):  # a Python scalar
            if value in self.range or (self.nan and value != value):
                return np.asarray(value, dtype=np.float64)
            raise Violation(str(self), shown(value))
        arr = _as_numeric_array(value, self).astype(np.float64)
        dims_ok = (self.ndim is None or (arr.ndim >= 1 if self.ndim == "1+"
                                         else arr.ndim in self.ndim))
        if not dims_ok:
            raise Violation(str(self), f"an array of shape {arr.shape}" if arr.ndim
                            else shown(arr.item()))
        if self.nonempty and arr.size == 0:
            raise Violation(str(self), "an empty array")
        r = self.range
        ok = np.isfinite(arr)  # comparisons with NaN are False (and warn of nothing)
        if r.left is not None:
            ok &= arr >= r.left if r.closed in ("left", "both") else arr > r.left
        if r.right is not None:
            ok &= arr <= r.right if r.closed in ("right", "both") else arr < r.right
        if self.nan:
            ok |= np.isnan(arr)
        if not ok.all():
            raise Violation(str(self), _at(arr, _first(~ok), flat=arr.ndim > 1))
        if self.size is not None and arr.size != self.size:
            raise Violation(str(self), f"an array of length {arr.size}")
        return arr


class SequenceOf(Constraint):
    """A sequence (not a str) whose every item satisfies ``item`` (a :class:`Floats`), given
    as a list of the items' normalised values; ``what`` describes the items, ``noun`` names
    one in a message ("nan at index 0 (histogram 1)"). ``nonempty`` refuses an empty one.
    """

    def __init__(self, item: Constraint, what: str, noun: str, *, nonempty=False):
        self.item, self.what, self.noun, self.nonempty = item, what, noun, nonempty

    def __str__(self):
        return ("a non-empty " if self.nonempty else "a ") + f"sequence of {self.what}"

    def check(self, value):
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or isinstance(
                value, Mapping):
            self._refuse(value)
        items = []
        for j, x in enumerate(value):
            try:
                items.append(self.item.check(x))
            except Violation as v:
                raise Violation(str(self), f"{v.got} ({self.noun} {j})") from None
        if self.nonempty and not items:
            raise Violation(str(self), "an empty sequence")
        return items


class Distributions(Constraint):
    """Probability distributions, one per row: a 2-D array of shape (rows, classes) with at
    least ``min_classes`` classes, finite non-negative entries and rows summing to 1 (within
    ``atol``), given as float64. A message names the first bad row (and class).
    """

    def __init__(self, min_classes: int = 2, *, atol: float = 1e-9):
        self.min_classes, self.atol = min_classes, atol

    def __str__(self):
        return (f"a 2-D array of probability distributions, one per row (shape (n_questions, "
                f"n_classes) with n_classes >= {self.min_classes}, finite entries >= 0, each row "
                f"summing to 1)")

    def check(self, value):
        q = _as_numeric_array(value, self).astype(np.float64)
        if q.ndim != 2 or q.shape[1] < self.min_classes:
            raise Violation(str(self), f"an array of shape {q.shape}")
        bad = ~np.isfinite(q) | (q < 0)
        if bad.any():
            i, j = (int(x) for x in np.argwhere(bad)[0])
            raise Violation(str(self), f"{shown(q[i, j])} at row {i}, class {j}")
        total = q.sum(axis=1)
        off = np.abs(total - 1.0) > self.atol
        if off.any():
            i = _first(off)
            raise Violation(str(self), f"row {i} summing to {shown(total[i])}")
        return q


def _make(constraint) -> Constraint:
    if constraint is None:
        return _NoneConstraint()
    if isinstance(constraint, Constraint):
        return constraint
    if constraint == "boolean":
        return Boolean()
    if constraint == "array-like":
        return ArrayLike()
    if constraint is callable:
        return Callables()
    if isinstance(constraint, type):
        name = {str: "a str", int: "an int", float: "a float"}.get(
            constraint, f"an instance of {constraint.__module__}.{constraint.__qualname__}")
        return InstancesOf(constraint, name)
    raise TypeError(f"unknown constraint {constraint!r}")


def _describe(constraints) -> str:
    texts = [str(c) for c in constraints]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " or " + texts[-1]


def _validate(constraints, value, name, func):
    """The value of parameter ``name`` normalised by the first constraint it satisfies."""
    violations = []
    for c in constraints:
        try:
            return c.check(value)
        except Violation as v:
            violations.append(v)
    typed = [v for v in violations if v.typed]
    if typed:
        raise invalid(name, func, typed[0].must, typed[0].got, value)
    raise invalid(name, func, _describe(constraints), shown(value), value)


def check_param(value, constraints: list, name: str, func: str):
    """``value`` normalised by the first of ``constraints`` it satisfies (as declared with
    :func:`validate_params`), else the :data:`TEMPLATE` error naming ``name`` and ``func``: for
    the few values checked outside a declaration (the simulator's, through the three below).
    """
    return _validate([_make(c) for c in constraints], value, name, func)


def as_count_array(x, name: str, func: str):
    """``x`` as an int64 count array, scalar or 1-D (:class:`Counts`), checked alone."""
    return check_param(x, [Counts()], name, func)


def check_positive_int(x, name: str, func: str, *, minimum: int = 1) -> int:
    """``x`` as an int >= ``minimum`` (a whole float is accepted, a bool is not)."""
    return check_param(x, [Interval(numbers.Integral, minimum, None, closed="left")], name, func)


def check_probability(x, name: str, func: str, *, open_interval: bool = True) -> float:
    """``x`` as a float in (0, 1) (or [0, 1] when ``open_interval`` is False)."""
    closed = "neither" if open_interval else "both"
    return check_param(x, [Interval(numbers.Real, 0, 1, closed=closed)], name, func)


def validate_params(parameter_constraints: dict, *, name: str | None = None):
    """Decorator: validate (and normalise) the parameters of a function before its body runs.

    Parameters
    ----------
    parameter_constraints : dict
        ``{name: [constraint, ...]}``; a parameter is valid when it satisfies one of its
        constraints: a :class:`Constraint` object, None (the value None), "boolean",
        "array-like", ``callable`` or a type (an instance of it). Every parameter of the
        function should be declared (``tests/test_validation.py`` checks it), but a method's
        ``self``.
    name : str, optional
        How messages name the function; default its ``__name__``. A method passes the name
        its caller knows (``"Publisher"`` for ``Publisher.__init__``,
        ``"RLVRModel.at_fraction"``).

    Returns
    -------
    callable
        The decorator. The decorated function has the declarations, as constraint objects,
        in its attribute ``_parameter_constraints`` (and the name messages give it in
        ``_validated_name``); its body receives the normalised values.
    """
    made = {k: [_make(c) for c in (v if isinstance(v, list) else [v])]
            for k, v in parameter_constraints.items()}

    def decorator(func):
        sig = inspect.signature(func)
        shown_as = name or func.__name__

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            for param, value in arguments.items():
                constraints = made.get(param)
                if constraints is not None:
                    arguments[param] = _validate(constraints, value, param, shown_as)
            return func(*bound.args, **bound.kwargs)

        wrapper._parameter_constraints, wrapper._validated_name = made, shown_as
        return wrapper

    return decorator


# ---- checks between parameters (the same template) -------------------------------------------


def same_length(func: str, **arrays: np.ndarray) -> int:
    """The common length of 1-D (or scalar) arrays; the first one whose length differs from
    the first sized one is an error naming both.
    """
    sized = [(k, v.shape[0]) for k, v in arrays.items() if v.ndim]
    for name, length in sized[1:]:
        if length != sized[0][1]:
            first, n = sized[0]
            raise invalid(name, func, f"a scalar or an array of the length of '{first}', {n}",
                          f"an array of length {length}")
    return sized[0][1] if sized else 1


def check_pairs(bad, func: str, must: str, a, a_name: str, b, b_name: str, rel=" with "):
    """Refuse the first question where the mask ``bad`` holds: the parameter ``a_name`` of
    ``func`` must be ``must``; the message shows ``a`` and ``b`` (arrays of the shape of
    ``bad``) there, as "c=5 > n=3 at index 2".
    """
    if bad.any():
        i = _first(bad)
        where = f" at index {i}" if bad.ndim else ""
        raise invalid(a_name, func, must, f"{a_name}={a.flat[i]}{rel}{b_name}={b.flat[i]}{where}")


def check_c_le_n(n: np.ndarray, c: np.ndarray, func: str, n_name="n", c_name="c") -> None:
    """Refuse any ``c > n`` (after broadcasting), naming the first question."""
    n_b, c_b = np.broadcast_arrays(n, c)
    check_pairs(c_b > n_b, func, f"at most '{n_name}' for every question", c_b, c_name, n_b,
                n_name, " > ")


def _smallest_n(n: np.ndarray, n_name: str) -> str:
    j = int(np.argmin(n)) if n.ndim else 0
    return f"the smallest {n_name} is {n.flat[j]}, at question index {j}"


def check_k_in_range(k: np.ndarray, n: np.ndarray, func: str, n_name: str = "n",
                     name: str = "k") -> None:
    """Refuse a budget ``k`` outside ``[1, n]`` at some question (after broadcasting); the
    message names the first bad k and the smallest n with its question index.
    """
    k_b, n_b = np.broadcast_arrays(k, n)
    bad = (k_b < 1) | (k_b > n_b)
    if bad.any():
        raise invalid(name, func, f"an int in the range [1, {n_name}] for every question "
                      f"({_smallest_n(n_b, n_name)})", _at(k_b, _first(bad)))


def check_ks_in_range(ks: np.ndarray, n: np.ndarray, func: str, name: str = "ks",
                      n_name: str = "n") -> None:
    """Refuse any budget of the grid ``ks`` outside ``[1, min(n)]``: one pass over ``ks`` and
    one over ``n`` (a grid applies to every question), O(len(ks) + len(n)).
    """
    bad = (ks < 1) if not n.size else (ks < 1) | (ks > n.min())
    if bad.any():
        where = f" ({_smallest_n(n, n_name)})" if n.size else ""
        raise invalid(name, func, f"a grid of budgets in the range [1, {n_name}] for every question"
                      f"{where}", _at(ks, _first(bad)))
