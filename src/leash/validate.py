"""Validation of generation files: the rules, the problem records and the report.

Every reader in :mod:`leash.formats` and the streaming summary in :mod:`leash.summarize` apply the
rules defined here, so ``validate(path)`` and ``summarize(path)`` can never disagree about what a
valid row is. The rules exist in two equivalent forms: a vectorized one over pyarrow arrays (the
fast path for canonical Parquet, CSV and JSONL files) and a per-value one in plain Python (for the
nested layouts and for the exact line-by-line JSONL reader). Tests check that both give identical
summaries.

Rules (also documented in ``data/README.md``):

* required fields present and non-null;
* ``correct`` is boolean-like: ``true``/``false``, ``0``/``1`` (integers, or floats equal to 0.0
  or 1.0) or the strings ``"true"``/``"false"``/``"0"``/``"1"`` in any case with surrounding
  blanks. Anything else (``0.5``, ``"yes"``, ``"t"``, ``"1.0"``) is rejected, because a value
  that is not clearly a verdict should not be guessed into one;
* ``sample_idx``, ``step``, ``n``, ``c``: integers (or integral floats, or decimal strings)
  within the 64-bit range (larger values are "too large", never wrapped or rounded);
  ``sample_idx``, ``n``, ``c`` and ``step`` must be >= 0, ``n`` >= 1, ``first_correct`` >= -1;
* ``n_tokens``, ``token_entropy``: finite numbers >= 0 (or missing);
* ``model``, ``benchmark``, ``finish_reason``: strings; ``question_id``: a string or an integer
  (stored as a string);
* text in a field leash reads is valid UTF-8: a stray byte (``\xff``) rejects its row, named
  by line and field, and is shown as bytes (``b'4\xff2'``); columns leash does not read may
  hold any bytes;
* ``answer``: string or number (numbers are stored as strings: integral floats without ``.0``);
  missing, empty or the literal ``"NA"`` means no answer was extracted;
* no duplicate ``(model, benchmark, question_id, step, sample_idx)``; in counts files no
  duplicate ``(model, benchmark, question_id, step)``;
* counts: ``c <= n``; ``first_correct < n``; ``first_correct == -1`` exactly when ``c == 0``;
* parallel per-sample lists in nested layouts (e.g. the evaluator's ``code``/``pred``/``score``)
  must all have the same length. Public evaluators pad a short ``score`` list with its last value;
  leash never pads: a ragged record is a problem.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Problem", "ValidationReport", "validate", "ON_ERROR", "InputFileError"]

ON_ERROR = ("raise", "skip")

# Reasons used in provenance and reports.
MALFORMED = "malformed_json"
MALFORMED_CSV = "malformed_csv"
MISSING = "missing_field"
WRONG_TYPE = "wrong_type"
INVALID_BOOL = "invalid_bool"
NOT_INTEGER = "not_integer"
OUT_OF_RANGE = "out_of_range"
INVALID_NUMBER = "invalid_number"
DUPLICATE = "duplicate"
C_GT_N = "c_greater_than_n"
INCONSISTENT = "first_correct_inconsistent"
RAGGED = "ragged_list"
EMPTY = "empty_value"
INVALID_UTF8 = "invalid_utf8"
UTF8_MESSAGE = "must be valid UTF-8 text"
# Problems of a whole file (it is not read, or not to its end): errors even with on_error="skip".
UNDETECTED = "undetected_format"
UNREADABLE = "unreadable_file"
NO_ROWS = "no_rows"
NOT_REGULAR = "not_a_regular_file"
DUPLICATE_FILE = "duplicate_file"
FILE_REASONS = (UNDETECTED, UNREADABLE, NO_ROWS, NOT_REGULAR, DUPLICATE_FILE)

_MAX_EXAMPLES = 20
_INT_RE = r"^\s*[+-]?\d+\s*$"
# Integer fields are stored as int64: a larger value is rejected, never wrapped or rounded.
INT64_MAX = int(np.iinfo(np.int64).max)
INT64_MIN = int(np.iinfo(np.int64).min)
TOO_LARGE = "too large (beyond the 64-bit integer range)"
_TRUE = ("true", "1")
_FALSE = ("false", "0")


class InputFileError(ValueError):
    """A problem with a whole input file rather than one of its rows.

    The file is not a regular file, cannot be read to its end (truncated or corrupt), or has
    no data rows. ``reason`` is one of :data:`FILE_REASONS`.
    """

    def __init__(self, message: str, reason: str = UNREADABLE):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Problem:
    """One problem found in an input file.

    Attributes
    ----------
    file : str
        The file as given by the caller.
    location : str
        ``"line 12"`` (JSONL, and CSV: the line the record starts on), ``"row group 0, row 5"``
        (Parquet, 0-based), with ``", sample 3"`` for nested layouts.
    field : str
        The offending field (column or JSON key, e.g. ``"score[3]"``).
    value : str
        ``repr`` of the offending value (truncated).
    reason : str
        Machine-readable reason (e.g. ``"invalid_bool"``).
    message : str
        Human-readable explanation.
    """

    file: str
    location: str
    field: str
    value: str
    reason: str
    message: str

    def __str__(self) -> str:
        if self.location == "file":  # a whole-file problem: its message names the file
            return self.message
        return (
            f"{self.file}: {self.location}: field '{self.field}': {self.message} "
            f"(got {self.value})"
        )


@dataclass
class ValidationReport:
    """Everything :func:`validate` found in one file.

    Attributes
    ----------
    path : str
    format : str or None
        Detected (or given) format; None when detection failed.
    rows_read, rows_used, rows_rejected : int
        Samples (or counts rows) read, accepted and rejected.
    problems : list of Problem
        Every problem found, in file order.
    notes : list of str
        What is not a problem but worth knowing: columns that were ignored (with a "did you
        mean" for a likely misspelling), labels replaced by the caller's.
    """

    path: str
    format: str | None
    rows_read: int = 0
    rows_used: int = 0
    rows_rejected: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    @property
    def file_problem(self) -> Problem | None:
        """The problem that stopped reading the whole file (see FILE_REASONS), if any."""
        return next((p for p in self.problems if p.reason in FILE_REASONS), None)

    def counts_by_reason(self) -> dict[str, int]:
        """Number of problems per reason."""
        return dict(Counter(p.reason for p in self.problems))

    def raise_on_error(self) -> None:
        """Raise ValueError listing the problems (the first 20 and how many in total)."""
        if self.ok:
            return
        lines = [str(p) for p in self.problems[:_MAX_EXAMPLES]]
        more = len(self.problems) - len(lines)
        if more:
            lines.append(f"... and {more} more problems")
        raise ValueError(
            f"{len(self.problems)} problems in {self.path}:\n" + "\n".join(lines)
        )

    def __str__(self) -> str:
        head = (
            f"{self.path} [{self.format}]: {self.rows_read} rows read, {self.rows_used} used, "
            f"{self.rows_rejected} rejected, {len(self.problems)} problems"
        )
        return "\n".join([head] + [f"  note: {n}" for n in self.notes]
                         + [f"  {p}" for p in self.problems[:_MAX_EXAMPLES]])


def validate(path, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
             chunk_size=250_000) -> ValidationReport:
    """Check one generations file against every rule and list every problem.

    Parameters
    ----------
    path : str or os.PathLike
        A samples, counts, nested/evaluator or summary file (see ``data/README.md``); a
        summary's rows are checked with the counts rules.
    fmt : str, optional
        Format override (``"samples"``, ``"counts"``, ``"summary"``, ``"evaluator"``,
        ``"nested"``).
    model, benchmark, step : optional
        Labels supplied by the caller (required for the evaluator format).
    mapping : str or NestedMapping, optional
        Field mapping for nested layouts.
    chunk_size : int
        Rows per chunk.

    Returns
    -------
    ValidationReport
        ``report.ok`` is True when the file is clean; ``report.raise_on_error()`` raises a
        ValueError listing the problems. A file that cannot be read as a whole gives a report
        with one problem whose reason says why (:data:`FILE_REASONS`: ``"undetected_format"``,
        ``"unreadable_file"`` for a truncated or corrupt file, ``"no_rows"``,
        ``"not_a_regular_file"``); ``report.file_problem`` is that problem.
    """
    from leash.summarize import _run  # local import: summarize imports this module

    path_s = str(path)
    try:
        result = _run([path], fmt=fmt, model=model, benchmark=benchmark, step=step,
                      mapping=mapping, chunk_size=chunk_size, on_error="collect", na="class",
                      allow_summary=True)
    except (ValueError, TypeError, OSError) as exc:
        reason = getattr(exc, "reason", UNREADABLE if isinstance(exc, OSError) else UNDETECTED)
        return ValidationReport(path_s, None, problems=[
            Problem(path_s, "file", "-", "-", reason, str(exc))])
    fprov = result.provenance["files"][0]
    return ValidationReport(
        path=path_s, format=fprov["format"], rows_read=fprov["rows_read"],
        rows_used=fprov["rows_used"], rows_rejected=fprov["rows_rejected"],
        problems=list(result.sink.all_problems), notes=list(fprov["notes"]),
    )


# --------------------------------------------------------------------------------------------
# The sink: where problems go (raise at once, or count and keep going)
# --------------------------------------------------------------------------------------------
class Sink:
    """Collects problems for one run. ``on_error`` is "raise", "skip" or "collect"."""

    def __init__(self, on_error: str):
        if on_error not in ("raise", "skip", "collect"):
            raise ValueError(
                f"The 'on_error' parameter must be one of {ON_ERROR}. Got {on_error!r} instead.")
        self.on_error = on_error
        self.by_reason: Counter = Counter()
        self.examples: list[Problem] = []
        self.all_problems: list[Problem] = []
        self.n_problems = 0

    def add(self, problem: Problem) -> None:
        if self.on_error == "raise":
            raise ValueError(
                f"{problem}. Pass on_error='skip' to reject bad rows and count them in the "
                "provenance, or run leash.validate.validate(path) to list every problem."
            )
        self.n_problems += 1
        self.by_reason[problem.reason] += 1
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(problem)
        if self.on_error == "collect":
            self.all_problems.append(problem)

    def replace(self, new_by_id: dict) -> None:
        """Replace kept problems (by ``id`` of the old Problem) with new ones, in place."""
        for kept in (self.examples, self.all_problems):
            kept[:] = [new_by_id.get(id(p), p) for p in kept]


def short_repr(value, limit: int = 60) -> str:
    """``repr`` of a bad value, at most about ``limit`` characters.

    A long integer (or integer text) keeps its first and last digits and says how many
    there are, ``'1000...0007' (5000 digits)``; anything else is cut at the end.
    """
    if isinstance(value, str) and not _is_utf8(value):
        try:  # the bytes as they are in the file (read with surrogate escapes)
            value = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate written as a JSON escape
            pass
    r = repr(value)
    if len(r) <= limit:
        return r
    if (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and re.match(_INT_RE, value)):
        n = sum(ch.isdigit() for ch in r)
        keep = (limit - 3) // 2
        return f"{r[:keep]}...{r[-keep:]} ({n} digits)"
    return r[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# Per-value rules (plain Python): used by the nested readers and the exact JSONL reader
# --------------------------------------------------------------------------------------------
def _is_utf8(v: str) -> bool:
    """Whether a str can be written as UTF-8 (no surrogates from undecodable bytes)."""
    if v.isascii():
        return True
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_text(v) -> None:
    if isinstance(v, str) and not _is_utf8(v):
        raise RuleError(INVALID_UTF8, UTF8_MESSAGE)


class RuleError(Exception):
    """A single value broke a rule: (reason, message)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


def format_float(x: float) -> str:
    """String form of a float answer or id: integral floats without '.0', else repr."""
    if math.isfinite(x) and x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)


def py_bool(v) -> bool:
    _check_text(v)
    if v is None:
        raise RuleError(MISSING, "required value is missing")
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        if v == 0 or v == 1:
            return bool(v == 1)
        raise RuleError(INVALID_BOOL, "must be boolean-like (true/false, 0/1)")
    if isinstance(v, str):
        s = v.strip().lower()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
        raise RuleError(INVALID_BOOL, "must be boolean-like (true/false, 0/1)")
    raise RuleError(WRONG_TYPE, f"must be boolean-like, not {type(v).__name__}")


def int_text_side(text: str) -> int:
    """-1, 0 or 1: a decimal integer text below, within or above the 64-bit range.

    More than 19 significant digits is beyond the range whatever they are, so a text of
    thousands of digits is judged without ``int()`` (which refuses more than 4300 digits).
    """
    t = text.strip()
    digits = t.lstrip("+-").lstrip("0")
    if len(digits) > 19:
        return -1 if t.startswith("-") else 1
    v = int(t)
    return 1 if v > INT64_MAX else -1 if v < INT64_MIN else 0


def py_int(v, *, min_value: int = 0, required: bool = True):
    _check_text(v)
    if v is None:
        if required:
            raise RuleError(MISSING, "required value is missing")
        return None
    if isinstance(v, bool):
        raise RuleError(WRONG_TYPE, "must be an integer, not bool")
    if isinstance(v, int):
        out = v
    elif isinstance(v, float):
        if not (math.isfinite(v) and v.is_integer()):
            raise RuleError(NOT_INTEGER, "must be an integer")
        out = int(v)
    elif isinstance(v, str) and re.match(_INT_RE, v):
        side = int_text_side(v)
        if side:
            raise RuleError(OUT_OF_RANGE, TOO_LARGE if side > 0 else f"must be >= {min_value}")
        out = int(v)
    elif isinstance(v, str):
        raise RuleError(NOT_INTEGER, "must be an integer")
    else:
        raise RuleError(WRONG_TYPE, f"must be an integer, not {type(v).__name__}")
    if out > INT64_MAX:
        raise RuleError(OUT_OF_RANGE, TOO_LARGE)
    if out < min_value:
        raise RuleError(OUT_OF_RANGE, f"must be >= {min_value}")
    return out


def py_float(v):
    """Optional non-negative finite number."""
    _check_text(v)
    if v is None:
        return None
    if isinstance(v, bool):
        raise RuleError(WRONG_TYPE, "must be a number, not bool")
    if isinstance(v, (int, float)):
        x = float(v)
    elif isinstance(v, str):
        try:
            x = float(v)
        except ValueError:
            raise RuleError(INVALID_NUMBER, "must be a number") from None
    else:
        raise RuleError(WRONG_TYPE, f"must be a number, not {type(v).__name__}")
    if not math.isfinite(x) or x < 0:
        raise RuleError(INVALID_NUMBER, "must be a finite number >= 0")
    return x


def py_label(v, *, required: bool = True):
    """model / benchmark / finish_reason: a string."""
    _check_text(v)
    if v is None:
        if required:
            raise RuleError(MISSING, "required value is missing")
        return None
    if not isinstance(v, str):
        raise RuleError(WRONG_TYPE, f"must be a string, not {type(v).__name__}")
    if required and not v.strip():
        raise RuleError(EMPTY, "must be a non-empty string")
    return v


def py_qid(v) -> str:
    _check_text(v)
    if v is None:
        raise RuleError(MISSING, "required value is missing")
    if isinstance(v, bool):
        raise RuleError(WRONG_TYPE, "must be a string or an integer, not bool")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not (math.isfinite(v) and v.is_integer()):
            raise RuleError(WRONG_TYPE, "must be a string or an integer")
        return str(int(v))
    if isinstance(v, str):
        if not v:
            raise RuleError(EMPTY, "must be a non-empty string")
        return v
    raise RuleError(WRONG_TYPE, f"must be a string or an integer, not {type(v).__name__}")


def py_answer(v):
    _check_text(v)
    if v is None:
        return None
    if isinstance(v, bool):
        raise RuleError(WRONG_TYPE, "must be a string or a number, not bool")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        s = v.strip()
        return None if (not s or s == "NA") else s
    raise RuleError(WRONG_TYPE, f"must be a string or a number, not {type(v).__name__}")


# --------------------------------------------------------------------------------------------
# Vectorized rules over pyarrow arrays: return (clean array, [(reason, message, bad_mask)])
# --------------------------------------------------------------------------------------------
def _np_mask(arr) -> np.ndarray:
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=bool)


def _isnull(arr) -> np.ndarray:
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return _np_mask(arr.is_null())


def _is_str(t) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _decode(arr):
    if pa.types.is_dictionary(arr.type):
        return arr.cast(arr.type.value_type)
    return arr


def _on_dictionary(fn, arr, *, required):
    """Apply a vectorized rule to the (small) dictionary of a dictionary array.

    Returns the same (out, problems) as the rule on the decoded array would, but the output
    stays dictionary-encoded and the rule runs once per distinct value.
    """
    idx = arr.indices
    inull = _isnull(idx)
    ii = idx.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    out_d, bad_d = fn(arr.dictionary)
    bad = [(r, m, mask[ii] & ~inull) for r, m, mask in bad_d if mask.size]
    dnull = _isnull(out_d)
    if dnull.any():
        # values that the rule turned into nulls (e.g. "NA" answers): null rows
        rownull = dnull[ii] & ~inull
        idx = pa.array(ii, mask=inull | rownull, type=pa.int32())
    else:
        idx = pa.array(ii, mask=inull if inull.any() else None, type=pa.int32())
    if required:
        bad.append((MISSING, "required value is missing", inull))
    return pa.DictionaryArray.from_arrays(idx, out_d), bad


def vec_utf8(arr):
    """Rows of a string array that are not valid UTF-8: (the array with them null, mask).

    The readers do not check (pyarrow's JSON and Parquet readers never do; the CSV reader is
    told not to, so that one bad byte is one bad row, not an unreadable file), and the other
    rules must not see such bytes. The mask is None when every value is valid: one pass in
    C; the rows are found one by one only when there is a bad one.
    """
    if pa.types.is_dictionary(arr.type):
        dictionary, bad_d = vec_utf8(arr.dictionary)
        if bad_d is None:
            return arr, None
        inull = _isnull(arr.indices)
        ii = arr.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        bad = bad_d[ii] & ~inull
        idx = pa.array(ii, mask=inull | bad, type=arr.indices.type)
        return pa.DictionaryArray.from_arrays(idx, dictionary), bad
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr, None
    try:
        arr.validate(full=True)
        return arr, None
    except pa.ArrowInvalid:
        pass
    raw = utf8_bytes(arr)
    bad = np.array([b is not None and not _decodes(b) for b in raw.to_pylist()], dtype=bool)
    return pc.if_else(pa.array(bad), pa.nulls(len(arr), arr.type), arr), bad


def utf8_bytes(arr):
    """The bytes of a string array, without decoding them (``large_string`` stays large)."""
    return arr.view(pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary())


def _decodes(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def vec_bool(arr, *, required=True):
    arr = _decode(arr)
    n = len(arr)
    null = _isnull(arr)
    bad = []
    t = arr.type
    if pa.types.is_boolean(t):
        vals = _np_mask(arr.fill_null(False))
    elif pa.types.is_integer(t) or pa.types.is_floating(t):
        x = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
        ok = (x == 0) | (x == 1)
        vals = x == 1
        bad.append((INVALID_BOOL, "must be boolean-like (true/false, 0/1)", ~ok & ~null))
    elif _is_str(t):
        s = pc.utf8_lower(pc.utf8_trim_whitespace(arr))
        tr = _np_mask(pc.is_in(s, value_set=pa.array(_TRUE)).fill_null(False))
        fa = _np_mask(pc.is_in(s, value_set=pa.array(_FALSE)).fill_null(False))
        vals = tr
        bad.append((INVALID_BOOL, "must be boolean-like (true/false, 0/1)", ~(tr | fa) & ~null))
    elif pa.types.is_null(t):
        vals = np.zeros(n, dtype=bool)
    else:
        vals = np.zeros(n, dtype=bool)
        bad.append((WRONG_TYPE, f"must be boolean-like, not {t}", ~null))
    if required:
        bad.append((MISSING, "required value is missing", null))
    return vals, bad


def vec_int(arr, *, min_value=0, required=True, min_message=None):
    """Return (int64 values with 0 where null/bad, null mask, problems)."""
    arr = _decode(arr)
    n = len(arr)
    null = _isnull(arr)
    bad = []
    t = arr.type
    # values beyond int64: above -> TOO_LARGE, below -> the minimum's message
    big = np.zeros(n, dtype=bool)
    small = np.zeros(n, dtype=bool)
    if pa.types.is_integer(t):
        x = arr.fill_null(0).to_numpy(zero_copy_only=False)
        if x.dtype == np.uint64:
            big = x > np.uint64(INT64_MAX)
            x = np.where(big, 0, x)
        vals = x.astype(np.int64)
    elif pa.types.is_floating(t):
        x = arr.fill_null(0).to_numpy(zero_copy_only=False)
        ok = np.isfinite(x) & (np.floor(x) == x)
        big, small = ok & (x >= 2.0**63), ok & (x < -(2.0**63))
        vals = np.where(ok & ~big & ~small, x, 0).astype(np.int64)
        bad.append((NOT_INTEGER, "must be an integer", ~ok & ~null))
    elif _is_str(t):
        ok = _np_mask(pc.match_substring_regex(arr, _INT_RE).fill_null(False))
        trimmed = pc.utf8_trim_whitespace(arr)
        # more than 18 digits may not fit: those few are checked exactly with Python ints
        long = ok & _np_mask(pc.greater(pc.utf8_length(trimmed), 18).fill_null(False))
        for i in np.flatnonzero(long):
            side = int_text_side(trimmed[int(i)].as_py())
            big[i], small[i] = side > 0, side < 0
        fits = ok & ~big & ~small
        cleaned = pc.if_else(pa.array(fits), trimmed, pa.scalar("0", trimmed.type))
        vals = pc.cast(cleaned.fill_null("0"), pa.int64()).to_numpy()
        bad.append((NOT_INTEGER, "must be an integer", ~ok & ~null))
    elif pa.types.is_null(t):
        vals = np.zeros(n, dtype=np.int64)
    else:
        vals = np.zeros(n, dtype=np.int64)
        bad.append((WRONG_TYPE, f"must be an integer, not {t}", ~null))
    min_message = min_message or f"must be >= {min_value}"
    bad.append((OUT_OF_RANGE, TOO_LARGE, big & ~null))
    bad.append((OUT_OF_RANGE, min_message, small & ~null))
    already = np.zeros(n, dtype=bool)
    for _, _, m in bad:
        already |= m
    bad.append((OUT_OF_RANGE, min_message, (vals < min_value) & ~null & ~already))
    if required:
        bad.append((MISSING, "required value is missing", null))
    return vals, null, bad


def vec_float(arr):
    """Optional non-negative finite number -> (float64 with NaN where missing, problems)."""
    arr = _decode(arr)
    n = len(arr)
    null = _isnull(arr)
    t = arr.type
    bad = []
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        x = arr.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)
    elif _is_str(t):
        x = np.full(n, np.nan)
        notbad = np.ones(n, dtype=bool)
        try:
            x = pc.cast(arr, pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            # locate the unparsable entries one by one (rare path)
            for i, s in enumerate(arr.to_pylist()):
                if s is None:
                    continue
                try:
                    x[i] = float(s)
                except ValueError:
                    notbad[i] = False
        bad.append((INVALID_NUMBER, "must be a number", ~notbad))
        null = null | ~notbad
    elif pa.types.is_null(t):
        x = np.full(n, np.nan)
    else:
        bad.append((WRONG_TYPE, f"must be a number, not {t}", ~null))
        return np.full(n, np.nan), bad
    badv = ~null & ~(np.isfinite(x) & (x >= 0))
    bad.append((INVALID_NUMBER, "must be a finite number >= 0", badv))
    x = np.where(badv, np.nan, x)
    return x, bad


def vec_label(arr, *, required=True):
    if pa.types.is_dictionary(arr.type):
        return _on_dictionary(lambda d: _vec_label(d, required=required), arr,
                              required=required)
    return _vec_label(arr, required=required)


def _vec_label(arr, *, required=True):
    arr = _decode(arr)
    null = _isnull(arr)
    t = arr.type
    bad = []
    if _is_str(t):
        out = arr.cast(pa.string())
        if required:
            empty = _np_mask(pc.equal(pc.utf8_trim_whitespace(out), "").fill_null(False))
            bad.append((EMPTY, "must be a non-empty string", empty))
    elif pa.types.is_null(t):
        out = pa.nulls(len(arr), pa.string())
    else:
        bad.append((WRONG_TYPE, f"must be a string, not {t}", ~null))
        out = pa.nulls(len(arr), pa.string())
    if required:
        bad.append((MISSING, "required value is missing", null))
    return out, bad


def _floats_to_str(x: np.ndarray, null: np.ndarray) -> pa.Array:
    """Float array -> strings with the same rule as :func:`format_float`."""
    integral = np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) < 2**53)
    ints = pa.array(np.where(integral, x, 0).astype(np.int64)).cast(pa.string())
    out = ints
    other = ~integral & ~null & np.isfinite(x)
    if other.any():
        # hand-written: repr() of the (few) distinct non-integral values, so that this path
        # and the per-value path produce byte-identical strings
        uniq, inv = np.unique(x[other], return_inverse=True)
        strs = np.array([repr(float(u)) for u in uniq], dtype=object)[inv]
        full = np.array(ints.to_pylist(), dtype=object)
        full[other] = strs
        out = pa.array(full, type=pa.string())
    keep = (integral | other) & ~null
    return pc.if_else(pa.array(keep), out, pa.nulls(len(x), pa.string()))


def vec_qid(arr):
    if pa.types.is_dictionary(arr.type):
        return _on_dictionary(vec_qid, arr, required=True)
    arr = _decode(arr)
    null = _isnull(arr)
    t = arr.type
    bad = []
    if _is_str(t):
        out = arr.cast(pa.string())
        empty = _np_mask(pc.equal(out, "").fill_null(False))
        bad.append((EMPTY, "must be a non-empty string", empty))
    elif pa.types.is_integer(t):
        out = arr.cast(pa.string())
    elif pa.types.is_floating(t):
        x = arr.fill_null(0).to_numpy(zero_copy_only=False)
        ok = np.isfinite(x) & (np.floor(x) == x)
        bad.append((WRONG_TYPE, "must be a string or an integer", ~ok & ~null))
        out = _floats_to_str(x, null | ~ok)
    else:
        bad.append((WRONG_TYPE, f"must be a string or an integer, not {t}", ~null))
        out = pa.nulls(len(arr), pa.string())
    bad.append((MISSING, "required value is missing", null))
    return out, bad


def vec_answer(arr):
    if pa.types.is_dictionary(arr.type):
        return _on_dictionary(vec_answer, arr, required=False)
    arr = _decode(arr)
    null = _isnull(arr)
    t = arr.type
    bad = []
    if _is_str(t):
        s = pc.utf8_trim_whitespace(arr.cast(pa.string()))
        na = pc.or_(pc.equal(s, ""), pc.equal(s, "NA")).fill_null(True)
        out = pc.if_else(na, pa.nulls(len(s), pa.string()), s)
    elif pa.types.is_integer(t):
        out = arr.cast(pa.string())
    elif pa.types.is_floating(t):
        x = arr.fill_null(np.nan).to_numpy(zero_copy_only=False)
        out = _floats_to_str(x, null | ~np.isfinite(x))
    elif pa.types.is_null(t):
        out = pa.nulls(len(arr), pa.string())
    else:
        bad.append((WRONG_TYPE, f"must be a string or a number, not {t}", ~null))
        out = pa.nulls(len(arr), pa.string())
    return out, bad

