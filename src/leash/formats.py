"""Input formats of model generations: detection, field mappings, the rule set and the readers.

Formats (full description with examples in ``data/README.md``): ``"samples"`` (one row per
sampled response: ``model, benchmark, question_id, sample_idx, correct`` and optionally
``answer, n_tokens, token_entropy, finish_reason, response, step``), ``"counts"`` (one row per
question: ``model, benchmark, question_id, n, c`` and optionally ``first_correct, step``), both
as ``.jsonl[.gz]``, ``.parquet`` or ``.csv``; ``"summary"`` (a Parquet file written by
:func:`leash.summarize.summarize`); ``"nested"`` (one JSON object per question, read through a
:class:`NestedMapping`: a list of per-sample objects, or parallel per-sample lists);
``"evaluator"`` (the Qwen2.5-Math evaluator output, an alias of ``"nested"`` with the
``"evaluator"`` mapping); and the evaluators' own files of :mod:`leash.evaluators`.

Every file is read by DuckDB into one relation of raw canonical fields; :func:`checked_sql`
applies the one rule set (SQL, below) that turns each field into its clean value and a problem
code, so ``validate``, ``summarize`` and :func:`response_batches` never disagree about a row.
Rules (also in ``data/README.md``): required fields present and non-null; ``correct``
boolean-like (``true``/``false``, ``0``/``1``, their strings in any case); integers within the
64-bit range (integral floats and decimal strings too), ``sample_idx``, ``step``, ``c`` >= 0,
``n`` >= 1, ``first_correct`` >= -1; ``n_tokens``, ``token_entropy`` finite and >= 0;
``model``, ``benchmark``, ``finish_reason`` strings; ``question_id`` a string or an integer;
text valid UTF-8; ``answer`` a string or a number (empty or ``"NA"``: none). The exact readers
(the Python pass over a file that failed: JSON lines DuckDB could not parse, every CSV record
with its line, Parquet text that is not UTF-8) only parse and locate; they never judge a value.
"""

from __future__ import annotations

import dataclasses
import difflib
import gzip
import json
import os
import re
import stat
import zlib
from pathlib import Path

from . import evaluators as E

__all__ = ["FORMATS", "SAMPLES_REQUIRED", "SAMPLES_OPTIONAL", "COUNTS_REQUIRED",
           "COUNTS_OPTIONAL", "NestedMapping", "MAPPINGS", "get_mapping", "detect_format",
           "check_regular_file", "SUMMARY_METADATA_KEY", "response_batches", "InputFileError"]

FORMATS = ("samples", "counts", "summary", "evaluator", "nested", *E.EVALUATOR_FORMATS)
SAMPLES_REQUIRED = ("model", "benchmark", "question_id", "sample_idx", "correct")
SAMPLES_OPTIONAL = ("answer", "n_tokens", "token_entropy", "finish_reason", "response", "step")
COUNTS_REQUIRED = ("model", "benchmark", "question_id", "n", "c")
COUNTS_OPTIONAL = ("first_correct", "step")
SUMMARY_METADATA_KEY = b"leash.summary"
SUMMARY_COLUMNS = ("model", "benchmark", "question_id", "step", "n", "c", "first_correct",
                   "n_answer_missing", "answer_values", "answer_counts", "n_tokens_mean",
                   "n_tokens_min", "n_tokens_max", "token_entropy_mean", "token_entropy_std",
                   "n_truncated")
_JSON_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".json", ".json.gz")
_PARQUET_SUFFIXES = (".parquet", ".pq")
_CSV_SUFFIXES = (".csv", ".csv.gz")
READ = {"samples": ("model", "benchmark", "question_id", "step", "sample_idx", "correct",
                    "answer", "n_tokens", "token_entropy", "finish_reason"),
        "counts": ("model", "benchmark", "question_id", "step", "n", "c", "first_correct")}

# Reasons of problems (provenance, reports); those of a whole file stop it even with "skip".
(MALFORMED, MALFORMED_CSV, MISSING, WRONG_TYPE, INVALID_BOOL, NOT_INTEGER, OUT_OF_RANGE,
 INVALID_NUMBER, DUPLICATE, C_GT_N, INCONSISTENT, RAGGED, EMPTY, INVALID_UTF8) = (
    "malformed_json", "malformed_csv", "missing_field", "wrong_type", "invalid_bool",
    "not_integer", "out_of_range", "invalid_number", "duplicate", "c_greater_than_n",
    "first_correct_inconsistent", "ragged_list", "empty_value", "invalid_utf8")
UNDETECTED, UNREADABLE, NO_ROWS, NOT_REGULAR, DUPLICATE_FILE = (
    "undetected_format", "unreadable_file", "no_rows", "not_a_regular_file", "duplicate_file")
FILE_REASONS = (UNDETECTED, UNREADABLE, NO_ROWS, NOT_REGULAR, DUPLICATE_FILE)
UTF8_MESSAGE = "must be valid UTF-8 text"
TOO_LARGE = "too large (beyond the 64-bit integer range)"
_INT_RE = r"^\s*[+-]?\d+\s*$"
_BAD = "__leash_invalid_utf8__"  # marker object of text that is not UTF-8 (exact readers)


class InputFileError(ValueError):
    """A problem with a whole input file rather than one of its rows.

    The file is not a regular file, cannot be read to its end (truncated or corrupt), or has
    no data rows. ``reason`` is one of :data:`FILE_REASONS`.
    """

    def __init__(self, message: str, reason: str = UNREADABLE):
        super().__init__(message)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Problem:
    """One problem found in an input file.

    Attributes
    ----------
    file : str
        The file as given by the caller.
    location : str
        ``"line 12"`` (JSONL, and CSV: the line the record starts on), ``"row group 0, row 5"``
        (Parquet, 0-based), with ``", sample 3"`` for nested layouts.
    field, value, reason, message : str
        The offending field (e.g. ``"score[3]"``), ``repr`` of its value (truncated), the
        machine-readable reason (e.g. ``"invalid_bool"``) and the explanation.
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
        return (f"{self.file}: {self.location}: field '{self.field}': {self.message} "
                f"(got {self.value})")


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
        keep = (limit - 3) // 2
        return f"{r[:keep]}...{r[-keep:]} ({sum(ch.isdigit() for ch in r)} digits)"
    return r[: limit - 3] + "..."


def _is_utf8(v: str) -> bool:
    try:
        v.isascii() or v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Field mappings of nested layouts (built-in, a dict, or a YAML file)
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class NestedMapping:
    """Where the fields of a nested (one object per question) layout live.

    Parameters
    ----------
    name : str
        Name used in provenance and messages.
    correct : str
        Per-sample correctness field (a list in the "columns" layout).
    question_id : str or None
        Top-level question id field; None uses the 0-based record number.
    samples : str or None
        Field holding the list of per-sample objects ("records" layout). None selects the
        "columns" layout: every per-sample field is a top-level list, all of equal length.
    answer, response, index, n_tokens, token_entropy, finish_reason : str or None
        Per-sample fields. ``index`` is the generation index; None uses the list position
        (offset by the samples already read for that question from earlier files, so several
        seed files of one model concatenate in the order given).
    model, benchmark, step, gold : str or None
        Top-level fields naming the model / benchmark / checkpoint / gold answer; None means
        the caller supplies them (``model=``, ``benchmark=``, ``step=`` arguments).
    constants : tuple of (str, value) pairs
        Fixed ``model`` / ``benchmark`` / ``step`` labels (a YAML mapping's ``constants:``).

    Field names may be dotted paths into nested objects (``doc.id``).
    """

    name: str
    correct: str
    question_id: str | None = None
    samples: str | None = None
    answer: str | None = None
    response: str | None = None
    index: str | None = None
    n_tokens: str | None = None
    token_entropy: str | None = None
    finish_reason: str | None = None
    model: str | None = None
    benchmark: str | None = None
    step: str | None = None
    gold: str | None = None
    constants: tuple = ()

    @property
    def layout(self) -> str:
        return "records" if self.samples else "columns"

    def per_sample_fields(self) -> dict[str, str]:
        """Canonical name -> field name of the per-sample fields that are configured."""
        names = ("correct", "answer", "response", "index", "n_tokens", "token_entropy",
                 "finish_reason")
        return {k: getattr(self, k) for k in names if getattr(self, k)}

    def detection_keys(self) -> tuple[str, ...]:
        return tuple(k.split(".")[0] for k in ([self.question_id] if self.question_id else [])
                     + [self.samples or self.correct])


MAPPINGS: dict[str, NestedMapping] = {
    # Qwen2.5-Math / limit-of-RLVR evaluator output: parallel lists, one file per seed.
    "evaluator": NestedMapping(name="evaluator", question_id="idx", correct="score",
                               answer="pred", response="code", finish_reason="finish_reason",
                               gold="gt"),
    # GSM8K SFT-vs-RLVR probe (rlvr_behavior_probe_runpod): list of rollout objects. The
    # numeric pred_value is the normalized answer (52.0 and "$52" both become "52").
    "rollouts": NestedMapping(name="rollouts", question_id="qid", samples="rollouts",
                              correct="correct", answer="pred_value", response="text",
                              index="rollout", model="model_name", gold="gold"),
    # Parallel lists named like the Large Language Monkeys release (samples[], is_corrects[]).
    "samples": NestedMapping(name="samples", question_id="question_id", correct="is_corrects",
                             response="samples", answer="extracted_answers"),
}
_YAML_KEYS = {f.name for f in dataclasses.fields(NestedMapping)} - {"constants"} | {"tokens"}


def get_mapping(mapping) -> NestedMapping:
    """Resolve a mapping: a built-in name, a YAML file, a dict of fields, or a NestedMapping.

    Parameters
    ----------
    mapping : str, os.PathLike, dict or NestedMapping
        A name of :data:`MAPPINGS`, a path to a YAML file declaring field paths (dotted for
        nested objects: ``question_id``, ``samples``, ``correct``, ``response``, ``answer``,
        ``tokens``, ``finish_reason``, ``gold``, ... and ``constants:`` for ``model``,
        ``benchmark``, ``step``; see ``data/README.md``), or the fields themselves.

    Returns
    -------
    NestedMapping
    """
    if isinstance(mapping, NestedMapping):
        return mapping
    if isinstance(mapping, os.PathLike) or (isinstance(mapping, str) and mapping.lower()
                                            .endswith((".yaml", ".yml"))):
        return _yaml_mapping(Path(mapping))
    if isinstance(mapping, str):
        if mapping not in MAPPINGS:
            raise ValueError(
                f"The 'mapping' parameter must be one of {sorted(MAPPINGS)}, a YAML file or a "
                f"NestedMapping. Got {mapping!r} instead.")
        return MAPPINGS[mapping]
    if isinstance(mapping, dict):
        return NestedMapping(**{"name": "custom", **mapping})
    raise TypeError("The 'mapping' parameter must be a str, dict or NestedMapping. "
                    f"Got {type(mapping).__name__} instead.")


def _yaml_mapping(path: Path) -> NestedMapping:
    import yaml

    check_regular_file(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not a YAML mapping file ({str(exc).splitlines()[0]}).") \
            from None
    if not isinstance(raw, dict) or "correct" not in raw:
        raise ValueError(f"{path}: a field mapping must be a YAML mapping with at least "
                         "'correct:' (see data/README.md, section 4b).")
    consts = raw.pop("constants", None) or {}
    for key, value in [*raw.items(), *((f"constants.{k}", v) for k, v in consts.items())]:
        allowed = ("constants.model", "constants.benchmark", "constants.step")
        known = allowed if key.startswith("constants.") else sorted(_YAML_KEYS | {"constants"})
        if key not in known:
            hit = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            raise ValueError(f"{path}: unknown key '{key}'" + (f" (did you mean '{hit[0]}'?)"
                             if hit else "") + f"; known keys: {', '.join(known)}.")
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ValueError(f"{path}: '{key}' must be a field path (a string). Got {value!r}.")
    if "tokens" in raw:
        raw["n_tokens"] = raw.pop("tokens")
    return NestedMapping(**{"name": path.name, **raw,
                            "constants": tuple(sorted(consts.items()))})


# --------------------------------------------------------------------------------------------
# Files: regular files only, errors of unreadable ones, detection
# --------------------------------------------------------------------------------------------
def check_regular_file(path) -> os.stat_result:
    """Raise unless ``path`` is an existing regular file (or a link to one); return its stat.

    A FIFO, a socket or a device would block or never end, and a directory is no input: each
    is refused with what it is, before anything is opened.
    """
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"The file {path} does not exist.") from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return st
    what = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a character device"
            if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "special")
    raise InputFileError(f"{path} is {what}, not a regular file; leash reads regular files "
                         "only.", NOT_REGULAR)


def no_rows_error(path, container: str) -> InputFileError:
    """The one error for an input without data rows, whatever its format."""
    what = {"csv": "a header and no data rows", "parquet": "zero rows",
            "empty": "the file is empty"}.get(container, "no records")
    return InputFileError(f"{path} has no data rows ({what}); an input must hold at least "
                          "one row.", NO_ROWS)


def unreadable(path: Path, exc: BaseException) -> Exception:
    """The error for a file that cannot be read to its end, with its last complete line."""
    if isinstance(exc, OSError) and getattr(exc, "filename", None):
        return exc  # not found, permission denied...: already names the file
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if path.name.lower().endswith(".gz"):
        lines = 0
        try:  # error path only: count the complete lines that can be decompressed
            with gzip.open(path, "rb") as fh:
                for line in fh:
                    lines += line.endswith(b"\n")
        except (EOFError, zlib.error, OSError):
            return InputFileError(
                f"{path}: the compressed file is truncated or corrupt ({detail}); " +
                (f"the last complete line is line {lines}." if lines else
                 "not one complete line could be read."), UNREADABLE)
    return InputFileError(f"{path}: cannot read the file ({detail}).", UNREADABLE)


def container(path: Path) -> str:
    name = path.name.lower()
    for kind, suffixes in (("parquet", _PARQUET_SUFFIXES), ("csv", _CSV_SUFFIXES),
                           ("jsonl", _JSON_SUFFIXES)):
        if name.endswith(suffixes):
            return kind
    raise ValueError(f"Cannot read {path}: unknown file extension. Supported: "
                     f"{', '.join(_JSON_SUFFIXES + _PARQUET_SUFFIXES + _CSV_SUFFIXES)}.")


def open_bytes(path: Path):
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


_open_text = open_bytes  # the name leash.rescore reads benchmark files with


def json_error(exc: ValueError) -> str:
    """What is wrong with a JSON line that json.loads refused, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8: {exc.reason}"
    text = str(exc).split(":")[0].strip() or type(exc).__name__
    return text[0].lower() + text[1:]


def loads(line: bytes):
    """``json.loads`` of one line, bytes that are not UTF-8 kept as surrogate escapes."""
    try:
        return json.loads(line)
    except UnicodeDecodeError:
        return json.loads(line.decode("utf-8", "surrogateescape"))


def _head(path: Path, kind: str):
    """(keys, first record or None, summary metadata or None) of a file, for detection."""
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            return set(schema.names), None, (schema.metadata or {}).get(SUMMARY_METADATA_KEY)
        with open_bytes(path) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                if kind == "csv":  # bytes: a bad byte further down is not the header's
                    import csv

                    return set(next(csv.reader([line.decode("utf-8", "replace")]))), None, None
                try:
                    rec = loads(line)
                except ValueError as exc:  # also an integer of more than 4300 digits
                    raise ValueError(f"{path}: line {lineno}: malformed JSON ({json_error(exc)})"
                                     "; cannot detect the format.") from None
                if not isinstance(rec, dict):
                    raise ValueError(f"{path}: the first record is a JSON {type(rec).__name__}"
                                     ", not an object; cannot detect the format.")
                return set(rec), rec, None
    except (EOFError, zlib.error, OSError) as exc:
        raise unreadable(path, exc) from None
    except Exception as exc:  # pyarrow's ArrowInvalid of a corrupt Parquet footer
        if type(exc).__module__.startswith("pyarrow"):
            raise unreadable(path, exc) from None
        raise
    raise no_rows_error(path, kind)


def detect_format(path, *, fmt=None, mapping=None) -> tuple[str, NestedMapping | None]:
    """Detect the format of a generations file.

    Parameters
    ----------
    path : str or os.PathLike
    fmt : str, optional
        Explicit format; skips detection (but is checked to be known).
    mapping : str, dict or NestedMapping, optional
        Field mapping (a name, a YAML file, fields); given alone it implies "nested".

    Returns
    -------
    fmt : str
        One of :data:`FORMATS`.
    mapping : NestedMapping or None
        The mapping for "nested"/"evaluator", else None.

    Raises
    ------
    ValueError
        The format cannot be detected; the message names the file, the formats tried and the
        keys of the first record.

    Notes
    -----
    Detection uses the extension (``.parquet``/``.pq``, ``.csv``, ``.jsonl``/``.jsonl.gz``/
    ``.ndjson``/``.json``) and then the columns or the first record's keys, in this order:
    summary (Parquet metadata), samples, counts, the shipped nested mappings, the evaluators'
    layouts (:func:`leash.evaluators.detect`).
    """
    return detect(Path(path), fmt, mapping, checked=False)[:2]


def detect(path: Path, fmt, mapping, *, checked: bool):
    """:func:`detect_format` plus the file's keys and summary metadata (None when not read)."""
    formats = (*FORMATS[:5], *E.EVALUATOR_FORMATS)
    if fmt is not None and fmt not in formats:
        raise ValueError(f"The 'fmt' parameter must be one of {formats} or None. "
                         f"Got {fmt!r} instead.")
    if fmt == "evaluator":
        return "evaluator", get_mapping(mapping or "evaluator"), None, None
    if fmt == "nested":
        if mapping is None:
            raise ValueError(f"{path}: fmt='nested' needs a 'mapping' (one of "
                             f"{sorted(MAPPINGS)}, a YAML file or a NestedMapping).")
        return "nested", get_mapping(mapping), None, None
    if fmt is not None and fmt != "summary":
        return fmt, None, None, None
    kind = container(path)
    if not checked:
        check_regular_file(path)  # a FIFO would block the read below
    if mapping is not None and fmt is None:
        if kind != "jsonl":
            raise ValueError(f"{path}: a nested mapping applies to JSONL files only.")
        return "nested", get_mapping(mapping), None, None
    keys, rec, meta = _head(path, kind)
    if fmt == "summary" or meta is not None:
        return "summary", None, keys, meta
    if {"sample_idx", "correct", "question_id"} <= keys:
        return "samples", None, keys, None
    if {"n", "c", "question_id"} <= keys:
        return "counts", None, keys, None
    for m in MAPPINGS.values():
        if rec is not None and all(k in rec for k in m.detection_keys()) \
                and isinstance(rec[m.samples or m.correct], list):
            return ("evaluator" if m.name == "evaluator" else "nested"), m, keys, None
    found = E.detect(path, keys, rec)
    if found:
        return found, None, keys, None
    tried = ["samples (needs columns question_id, sample_idx, correct)",
             "counts (needs question_id, n, c)"]
    if kind == "jsonl":
        tried += [f"nested mapping '{m.name}' (needs list field(s) {list(m.detection_keys())})"
                  for m in MAPPINGS.values()]
    tried += [f"{f} (leash.evaluators)" for f in E.EVALUATOR_FORMATS]
    raise ValueError(f"Could not detect the format of {path}. Tried: {'; '.join(tried)}. "
                     f"Found keys: {sorted(keys)[:20]}. Pass fmt= (one of {FORMATS}) and, for "
                     "nested layouts, mapping= to override.")


# --------------------------------------------------------------------------------------------
# The rule set: raw value -> (clean value, problem code), in SQL
# --------------------------------------------------------------------------------------------
CODES: list[tuple[str, str]] = []  # problem code -> (reason, message)


def code(reason: str, message: str) -> str:
    if (reason, message) not in CODES:
        CODES.append((reason, message))
    return str(CODES.index((reason, message)))


# a JSON integer of more than 4300 digits: Python's json cannot read the line (today's rule)
MALFORMED_CODE = code(MALFORMED, "malformed JSON")  # its message comes from the exact pass
HUGE = code(MALFORMED, "malformed JSON (exceeds the limit (4300 digits) for integer string "
                       "conversion)")


_INTS = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
         "UINTEGER", "UBIGINT", "UHUGEINT"}
_WS = "' \t\n\r\x0b\x0c'"
_PY = {"bool": "bool", "int": "int", "float": "float", "str": "str", "list": "list",
       "dict": "dict"}


class _Val:
    """A raw field: a typed DuckDB column (its category fixed) or JSON (category per value)."""

    def __init__(self, x: str, typ: str):
        t = typ.upper()
        self.x, self.json, self.tname = x, t == "JSON", typ.lower()
        self.cat = ("json" if self.json else "null" if t == '"NULL"' or t == "NULL" else
                    "bool" if t == "BOOLEAN" else "int" if t in _INTS else "float"
                    if t in ("FLOAT", "DOUBLE") or t.startswith("DECIMAL") else "str"
                    if t == "VARCHAR" else "other")
        j = f"{x}::VARCHAR"
        self.i = f"TRY_CAST({j if self.json else x} AS BIGINT)"  # NULL when beyond int64
        self.neg = f"starts_with({j}, '-')" if self.json else f"({x} < 0)"
        self.itext = j if self.json else f"{x}::VARCHAR"
        self.f = f"TRY_CAST({j} AS DOUBLE)" if self.json else f"{x}::DOUBLE"
        self.s = f"({x}->>'$')" if self.json else x
        self.b = f"({j} = 'true')" if self.json else x

    def category(self) -> str:
        x = self.x
        return (f"CASE WHEN {x} IS NULL THEN 'null' ELSE CASE json_type({x}) WHEN 'NULL' THEN "
                f"'null' WHEN 'BOOLEAN' THEN 'bool' WHEN 'BIGINT' THEN 'int' WHEN 'UBIGINT' THEN"
                f" 'int' WHEN 'DOUBLE' THEN CASE WHEN NOT regexp_full_match({x}::VARCHAR, '-?[0-9]+'"
                f") THEN 'float' WHEN length({x}::VARCHAR) > 4300 THEN 'huge' ELSE 'int' END WHEN 'VARCHAR' THEN 'str' WHEN 'ARRAY' THEN "
                f"'list' ELSE CASE WHEN json_exists({x}, '$.{_BAD}') THEN 'utf8' ELSE 'dict' "
                "END END END")


def _compile(v: _Val, k: str, branches: dict, wrong: str) -> tuple[str, str]:
    """(value SQL, problem-code SQL) from per-category branches; ``k``: the category column."""
    branches.setdefault("null", ("NULL", None))
    branches.setdefault("utf8", ("NULL", code(INVALID_UTF8, UTF8_MESSAGE)))
    branches.setdefault("huge", ("NULL", HUGE))

    def pick(cat):
        if cat in branches:
            return branches[cat]
        return "NULL", code(WRONG_TYPE, wrong.format(_PY.get(cat, v.tname)))

    if not v.json:
        (nv, np_), (tv, tp) = branches["null"], pick(v.cat)
        value = f"CASE WHEN {v.x} IS NULL THEN {nv} ELSE {tv} END"
        return value, f"CASE WHEN {v.x} IS NULL THEN {np_ or 'NULL'} ELSE {tp or 'NULL'} END"
    cats = ("null", "bool", "int", "float", "str", "utf8", "list", "dict", "huge")
    return tuple("CASE " + " ".join(f"WHEN {k} = '{c}' THEN {pick(c)[j] or 'NULL'}" for c in cats)
                 + " END" for j in (0, 1))


def _case(*pairs) -> str:
    return "CASE " + " ".join(f"WHEN {c} THEN {p}" for c, p in pairs) + " END"


def rule(kind: str, v: _Val, k: str, *, required=True, min_value=0):
    """(value SQL, problem SQL) of one field of ``kind`` (label, qid, int, bool, float, answer)."""
    miss = ("NULL", code(MISSING, "required value is missing") if required else None)
    if kind == "label":
        empty = _case((f"trim({v.s}, {_WS}) = ''", code(EMPTY, "must be a non-empty string")))
        return _compile(v, k, {"null": miss, "str": (v.s, empty if required else None)},
                        "must be a string, not {}")
    if kind == "qid":
        f = v.f
        return _compile(v, k, {
            "null": miss, "str": (v.s, _case((f"{v.s} = ''", code(EMPTY, "must be a non-empty "
                                                                 "string")))),
            "int": (v.itext, None),
            "float": (f"CASE WHEN isfinite({f}) AND {f} = floor({f}) THEN "
                      f"TRY_CAST({f} AS HUGEINT)::VARCHAR END",
                      _case((f"NOT isfinite({f}) OR {f} <> floor({f})",
                             code(WRONG_TYPE, "must be a string or an integer"))))},
            "must be a string or an integer, not {}")
    if kind == "int":
        lo = code(OUT_OF_RANGE, f"must be >= {min_value}")
        big, f = code(OUT_OF_RANGE, TOO_LARGE), v.f
        s = f"trim({v.s}, {_WS})"
        si = f"TRY_CAST({s} AS BIGINT)"
        ok = f"regexp_full_match({v.s}, '\\s*[+-]?[0-9]+\\s*')"
        fok = f"isfinite({f}) AND {f} = floor({f})"
        return _compile(v, k, {
            "null": miss,
            "int": (v.i, _case((f"{v.i} IS NULL", f"CASE WHEN {v.neg} THEN {lo} ELSE {big} END"),
                               (f"{v.i} < {min_value}", lo))),
            "float": (f"CASE WHEN {fok} AND abs({f}) < 9.2e18 THEN {f}::BIGINT END",
                      _case((f"NOT ({fok})", code(NOT_INTEGER, "must be an integer")),
                            (f"{f} >= 9223372036854775808.0", big),
                            (f"{f} < {min_value}", lo))),
            "str": (f"CASE WHEN {ok} THEN {si} END",
                    _case((f"NOT {ok}", code(NOT_INTEGER, "must be an integer")),
                          (f"{si} IS NULL", f"CASE WHEN starts_with({s}, '-') THEN {lo} ELSE "
                                            f"{big} END"), (f"{si} < {min_value}", lo))),
            "bool": ("NULL", code(WRONG_TYPE, "must be an integer, not bool"))},
            "must be an integer, not {}")
    if kind == "bool":
        bad = code(INVALID_BOOL, "must be boolean-like (true/false, 0/1)")
        s = f"lower(trim({v.s}, {_WS}))"
        return _compile(v, k, {
            "null": miss, "bool": (v.b, None),
            "int": (f"({v.itext} = '1')", _case((f"{v.itext} NOT IN ('0', '1', '-0')", bad)))
            if v.json else (f"({v.x} = 1)", _case((f"{v.x} NOT IN (0, 1)", bad))),
            "float": (f"({v.f} = 1)", _case((f"{v.f} NOT IN (0, 1)", bad))),
            "str": (f"({s} IN ('true', '1'))", _case((f"{s} NOT IN ('true', '1', 'false', '0')",
                                                      bad)))},
            "must be boolean-like, not {}")
    if kind == "float":
        bad = code(INVALID_NUMBER, "must be a finite number >= 0")
        sf = f"TRY_CAST({v.s} AS DOUBLE)"
        return _compile(v, k, {
            "int": (v.f, _case((f"{v.f} < 0", bad))),
            "float": (f"CASE WHEN isfinite({v.f}) AND {v.f} >= 0 THEN {v.f} END",
                      _case((f"NOT isfinite({v.f}) OR {v.f} < 0", bad))),
            "str": (f"CASE WHEN isfinite({sf}) AND {sf} >= 0 THEN {sf} END",
                    _case((f"{sf} IS NULL", code(INVALID_NUMBER, "must be a number")),
                          (f"NOT isfinite({sf}) OR {sf} < 0", bad))),
            "bool": ("NULL", code(WRONG_TYPE, "must be a number, not bool"))},
            "must be a number, not {}")
    # answer: text trimmed ("" and "NA" mean none), numbers as text (integral without ".0")
    f = v.f
    return _compile(v, k, {
        "str": (f"nullif(nullif(trim({v.s}, {_WS}), ''), 'NA')", None), "int": (v.itext, None),
        "float": (f"CASE WHEN NOT isfinite({f}) THEN NULL WHEN {f} = floor({f}) AND abs({f}) < "
                  f"9007199254740992 THEN {f}::BIGINT::VARCHAR ELSE {f}::VARCHAR END", None),
        "bool": ("NULL", code(WRONG_TYPE, "must be a string or a number, not bool"))},
        "must be a string or a number, not {}")


RULES = {"model": ("label", {}), "benchmark": ("label", {}), "question_id": ("qid", {}),
         "step": ("int", {"required": False}), "sample_idx": ("int", {}),
         "correct": ("bool", {}), "answer": ("answer", {}), "n_tokens": ("float", {}),
         "token_entropy": ("float", {}), "finish_reason": ("label", {"required": False}),
         "n": ("int", {"min_value": 1}), "c": ("int", {}),
         "first_correct": ("int", {"required": False, "min_value": -1})}
# --------------------------------------------------------------------------------------------
# Readers: one DuckDB relation per file, in raw canonical fields
# --------------------------------------------------------------------------------------------
def connect():
    """A DuckDB connection with bounded memory: beyond ``memory_limit`` it spills to disk.

    ``LEASH_MEMORY_LIMIT`` (default ``2GB``) and ``LEASH_TEMP_DIR`` (default: a new folder in
    the system's temporary directory, removed at exit) override the two settings.
    """
    import atexit
    import shutil
    import tempfile

    import duckdb

    tmp = os.environ.get("LEASH_TEMP_DIR") or tempfile.mkdtemp(prefix="leash-duckdb-")
    if not os.environ.get("LEASH_TEMP_DIR"):
        atexit.register(shutil.rmtree, tmp, True)
    return duckdb.connect(config={"memory_limit": os.environ.get("LEASH_MEMORY_LIMIT", "2GB"),
                                  "temp_directory": tmp})


def sql_str(text) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _jpath(field: str) -> str:
    return sql_str("$." + ".".join('"' + k.replace('"', '\\"') + '"' for k in field.split(".")))


_SUMMARY_EXTRA = ("n_answer_missing", "answer_values", "answer_counts", "n_tokens_mean",
                  "n_tokens_min", "n_tokens_max", "token_entropy_mean", "token_entropy_std",
                  "n_truncated")
_MAX_OBJECT = 1 << 26  # bytes of one JSON line DuckDB may read (a long response list)


class Source:
    """One input file on a connection: its reader (a view ``raw<no>`` of raw canonical fields),
    the checked view ``chk<no>`` (clean values, a problem code per field, ``bad``) and the
    exact pass of a file that failed (locations, the values to show).

    The raw view has ``ord`` (line ordinal, Parquet row), ``sub`` (sample position of a nested
    record, else -1), ``nrows`` (samples a record-level problem stands for), ``p_rec, f_rec,
    m_rec, v_rec`` (a record-level problem: code, field, message, value) and ``r_<field>``.
    """

    def __init__(self, con, path: Path, no: int, fmt: str, mapping, labels: dict, *,
                 options=None, keys=None, meta=None, contents=None):
        self.con, self.path, self.no, self.fmt, self.mapping = con, path, no, fmt, mapping
        self.fname, self.labels, self.options = str(path), labels, options or {}
        self.keys, self.meta, self.contents = set(keys or ()), meta, contents
        self.kind = "counts" if fmt in ("counts", "summary") else "samples"
        self.form = ("evaluator-file" if fmt in E.EVALUATOR_FORMATS else "nested" if mapping
                     else "table" if contents is not None else container(path))
        self.relative = mapping is not None and mapping.index is None
        self.notes: list[str] = []
        self.fields = READ[self.kind]
        self._shift = self._rg = self._fixed = None
        self.exact, self.optional, self.extra, self.utf8_error = False, (), (), False
        self.batch = 250_000
        self.reader = {"jsonl": "duckdb read_json", "csv": "python csv", "parquet":
                       "duckdb read_parquet", "table": "arrow table", "nested":
                       f"duckdb json, mapping '{getattr(mapping, 'name', '')}'"}.get(
                           self.form, f"leash.evaluators '{fmt}'")

    # ---- views ---------------------------------------------------------------------------
    def build(self, exact: bool = False) -> None:
        """(Re)define the views; ``exact``: the Python pass repairs what DuckDB cannot parse."""
        if self.exact and self.form == "csv":
            return  # a CSV file is read by the exact reader already
        self.exact = exact
        raw = getattr(self, "_raw_" + self.form.replace("-", "_"))(exact)
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW raw{self.no} AS {raw}")
        self.types = {r[0]: r[1] for r in self.con.execute(f"DESCRIBE raw{self.no}").fetchall()}
        sql = checked_sql(f"raw{self.no}", self.fields, self.types, self.kind, self.optional)
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW chk{self.no} AS {sql}")

    def _label(self, name: str, file_has: bool, what: str = "column"):
        given = self.labels.get(name)
        if given is None:
            return None
        note = f"{what} '{name}' replaced by the caller's value {given!r}"
        if file_has and note not in self.notes:
            self.notes.append(note)
        return f"{int(given)}::BIGINT" if name == "step" else f"{sql_str(given)}::VARCHAR"

    def _fields_sql(self, have, col) -> str:
        """``r_<field>`` select list: the caller's label, the file's column, or NULL."""
        out = []
        for f in self.fields:
            lab = self._label(f, f in have)
            out.append(f"{lab or (col(f) if f in have else 'NULL')} AS r_{f}")
        extra = _SUMMARY_EXTRA if self.fmt == "summary" else self.extra
        out += [f"{col(c)} AS x_{c}" if c in have else f"NULL AS x_{c}" for c in extra]
        return ", ".join(out)

    def _required(self, have) -> None:
        for f in READ[self.kind]:
            if f in ("step", "first_correct", "answer", "n_tokens", "token_entropy",
                     "finish_reason") or f in have or self.labels.get(f) is not None:
                continue
            tail = (f" and was not supplied: pass {f}=... to name it" if f in ("model",
                                                                              "benchmark") else "")
            raise ValueError(f"{self.fname}: required field '{f}' is missing from the file{tail}.")

    _NOREC = "NULL::INTEGER AS p_rec, NULL::VARCHAR AS f_rec, NULL::VARCHAR AS m_rec, " \
             "NULL::VARCHAR AS v_rec"

    def _raw_parquet(self, exact: bool) -> str:
        self._required(self.keys)
        if exact:  # text that is not UTF-8: read with pyarrow, such text becomes a marker
            self._parquet_exact()
            return f"SELECT *, -1 AS sub, 1 AS nrows, {self._NOREC} FROM (SELECT ord, " \
                   f"{self._fields_sql(self.keys, lambda f: f'x.{f}::JSON')} FROM fix{self.no} x)"
        src = f"read_parquet({sql_str(self.path)}, file_row_number=true)"
        return (f"SELECT file_row_number AS ord, -1 AS sub, 1 AS nrows, {self._NOREC}, "
                f"{self._fields_sql(self.keys, lambda f: chr(34) + f + chr(34))} FROM {src}")

    def _raw_table(self, exact: bool) -> str:
        self.keys = set(self.contents.column_names)
        self._required(self.keys)
        self.con.register(f"contents{self.no}", self.contents)
        return (f"SELECT row_number() OVER () - 1 AS ord, -1 AS sub, 1 AS nrows, {self._NOREC},"
                f" {self._fields_sql(self.keys, lambda f: chr(34) + f + chr(34))} "
                f"FROM contents{self.no}")

    def _raw_csv(self, exact: bool) -> str:
        self.exact = True
        self._csv_exact()  # every CSV record with the line it starts on (Python's csv module)
        self._required(self.keys)
        return (f"SELECT ord, -1 AS sub, 1 AS nrows, p_rec, '-' AS f_rec, m_rec, v_rec, "
                f"{self._fields_sql(self.keys, lambda f: f'x.{f}::JSON')} FROM fix{self.no} x")

    def _jsonl_base(self, exact: bool) -> str:
        """Every non-blank line as ``ord, j`` (NULL where DuckDB cannot parse it, unless the
        exact pass repaired it) with the exact pass's message for a malformed line."""
        src = (f"SELECT row_number() OVER () AS ord, json FROM read_ndjson_objects("
               f"{sql_str(self.path)}, ignore_errors=true, maximum_object_size={_MAX_OBJECT})")
        if not exact:
            return f"SELECT ord, json AS j, NULL::VARCHAR AS m_rec, NULL::VARCHAR AS v_rec " \
                   f"FROM ({src})"
        self._jsonl_exact()
        return (f"SELECT o.ord, CASE WHEN x.ord IS NULL THEN o.json ELSE x.json::JSON END AS j, "
                f"x.msg AS m_rec, x.val AS v_rec FROM ({src}) o LEFT JOIN fix{self.no} x "
                "USING (ord)")

    def _raw_jsonl(self, exact: bool) -> str:
        if not exact:  # the fast reader: each read field as JSON, one parse per line
            have = (*self.fields, *self.extra)
            cols = ", ".join(f"{sql_str(f)}: 'JSON'" for f in have)
            return (f"SELECT row_number() OVER () AS ord, -1 AS sub, 1 AS nrows, {self._NOREC}"
                    f", {self._fields_sql(have, lambda f: chr(34) + f + chr(34))} FROM "
                    f"read_json({sql_str(self.path)}, format='newline_delimited', columns="
                    f"{{{cols}}}, ignore_errors=true, maximum_object_size={_MAX_OBJECT})")
        notobj = code(WRONG_TYPE, "record must be a JSON object")
        present = {f for f, n in zip(self.fields, self.con.execute(
            "SELECT " + ", ".join(f"count(json_extract(j, {_jpath(f)}))" for f in self.fields)
            + f" FROM ({self._jsonl_base(True)})").fetchall()[0]) if n}
        self._required(present | {f for f in self.fields if f in self.keys})
        rec = _case(("j IS NULL", MALFORMED_CODE), (f"json_type(j) <> 'OBJECT'", notobj))
        cols = self._fields_sql((*self.fields, *self.extra),
                                lambda f: f"json_extract(j, {_jpath(f)})")
        return (f"SELECT ord, -1 AS sub, 1 AS nrows, {rec} AS p_rec, '-' AS f_rec, m_rec, "
                f"coalesce(v_rec, j::VARCHAR) AS v_rec, {cols} "
                f"FROM ({self._jsonl_base(True)})")

    def _raw_nested(self, exact: bool) -> str:
        m, base = self.mapping, self._jsonl_base(exact)
        top, _ = self.peek()
        consts = dict(m.constants)

        def jp(f, of="j"):
            return f"json_extract({of}, {_jpath(f)})"

        q = {"question_id": jp(m.question_id) if m.question_id else "(ord - 1)"}
        for name in ("model", "benchmark", "step"):
            fld = getattr(m, name)
            lab = self._label(name, False)
            if lab and fld and fld.split(".")[0] in top:
                note = f"field '{fld}' replaced by the caller's value {self.labels[name]!r}"
                self.notes += [note] if note not in self.notes else []
            q[name] = lab or (sql_str(consts[name]) + ("::BIGINT" if name == "step" else
                              "::VARCHAR") if name in consts else jp(fld) if fld else None)
            if q[name] is None and name != "step":
                raise ValueError(f"{self.fname}: the '{m.name}' layout does not name the {name}"
                                 f": pass {name}=... .")
        q["step"] = q["step"] or "NULL::BIGINT"
        qtypes = {f"r_{k}": ("JSON" if v.startswith("json_") else "BIGINT" if k in
                             ("step", "question_id") else "VARCHAR") for k, v in q.items()}
        qnames = {"question_id": m.question_id or "(record number)", "model": m.model,
                  "benchmark": m.benchmark, "step": m.step}
        qchk = checked_sql("qraw", tuple(q), qtypes, "q", rec=False)
        qfirst = _case(*[(f"p_{k} IS NOT NULL", f"p_{k}") for k in q]) if q else "NULL"
        qfield = _case(*[(f"p_{k} IS NOT NULL", sql_str(qnames[k])) for k in q])
        qval = _case(*[(f"p_{k} IS NOT NULL", f"r_{k}::VARCHAR") for k in q])
        per = {k: v for k, v in m.per_sample_fields().items() if k != "correct"}
        lst = jp(m.samples or m.correct)
        jt = {"VARCHAR": "str", "BIGINT": "int", "UBIGINT": "int", "DOUBLE": "float",
              "BOOLEAN": "bool", "OBJECT": "dict", "NULL": "NoneType"}
        pyt = "CASE json_type({}) " + " ".join(f"WHEN '{a}' THEN '{b}'" for a, b in jt.items()) \
              + " END"
        checks = [(f"L IS NULL OR json_type(L) = 'NULL'", code(MISSING, "must be a list" + (
            " of sample objects" if m.samples else "")), sql_str(m.samples or m.correct), "NULL",
                   "'null'", "1"),
                  (f"json_type(L) <> 'ARRAY'", code(WRONG_TYPE, "must be a list" + (
                      " of sample objects" if m.samples else "")), sql_str(m.samples or
                                                                         m.correct), "NULL",
                   "L::VARCHAR", "1")]
        if m.samples:
            pos = "list_position([json_type(y) = 'OBJECT' FOR y IN elist], false)"
            checks.append((f"{pos} IS NOT NULL", code(WRONG_TYPE, "sample must be a JSON object"),
                           f"{sql_str(m.samples)} || '[' || ({pos} - 1) || ']'", "NULL",
                           f"elist[{pos}]::VARCHAR", "n_s"))
        for k, fld in per.items() if not m.samples else ():
            x = jp(fld)
            msg = (f"'per-sample list must have the same length as ''{m.correct}'' (' || n_s || "
                   "'); leash never pads'")
            checks.append((f"{x} IS NOT NULL AND (json_type({x}) <> 'ARRAY' OR "
                           f"json_array_length({x}) <> n_s)", code(RAGGED, "ragged"),
                           sql_str(fld), msg, f"to_json(CASE WHEN json_type({x}) = 'ARRAY' THEN "
                           f"'length ' || json_array_length({x}) ELSE {pyt.format(x)} END)",
                           "n_s"))
        checks.append(("qp IS NOT NULL", "qp", "qf", "NULL", "qv", "n_s"))
        rec = [_case(("p0 IS NOT NULL", a), *[(c[0], c[i]) for c in checks]) for a, i in (
            ("p0", 1), ("'-'", 2), ("m_rec", 3), ("v_rec", 4), ("1", 5))]
        qsel = ", ".join(f"{v} AS r_{k}" for k, v in q.items())
        head = (f"WITH b AS (SELECT *, {_case(('j IS NULL', MALFORMED_CODE), (chr(39).join(['json_type(j) <> ', 'OBJECT', '']), code(WRONG_TYPE, 'record must be a JSON object')))} AS p0,"
                f" {lst} AS L FROM ({base})), qraw AS (SELECT *, {qsel}, NULL AS p_rec FROM b), "
                f"r AS (SELECT *, {qfirst} AS qp, {qfield} AS qf, {qval} AS qv, "
                f"json_extract(L, '$[*]') AS elist, CASE WHEN json_type(L) = 'ARRAY' THEN "
                f"json_array_length(L)::BIGINT END AS n_s FROM ({qchk})), "
                f"r2 AS (SELECT *, {rec[0]} AS pr, {rec[1]} AS fr, {rec[2]} AS mr, {rec[3]} AS vr,"
                f" {rec[4]} AS nr FROM r)")
        fields = {"correct": m.correct, **per}
        if m.samples:
            elems = "unnest(elist) AS el"
            samp = {k: jp(f, "el") for k, f in fields.items()}
        else:
            elems = ", ".join(f"unnest(json_extract({jp(f)}, '$[*]')) AS s_{k}"
                              for k, f in fields.items())
            samp = {k: f"s_{k}" for k in fields}
        idx = "sub" if m.index is None else samp.get("index", "NULL")
        self._names = {k: (f"{m.samples}[{{}}].{f}" if m.samples else f"{f}[{{}}]")
                       for k, f in {**fields, "sample_idx": m.index or "index"}.items()}
        rf = {"model": "r_model", "benchmark": "r_benchmark", "question_id": "r_question_id",
              "step": "r_step", "sample_idx": idx, "answer": samp.get("answer", "NULL"),
              "correct": samp["correct"], "n_tokens": samp.get("n_tokens", "NULL"),
              "token_entropy": samp.get("token_entropy", "NULL"),
              "finish_reason": samp.get("finish_reason", "NULL")}
        extra = {"response": samp.get("response", "NULL"),
                 "gold": jp(m.gold) if m.gold else "NULL"}
        cols = ", ".join([f"{v} AS r_{k}" for k, v in rf.items()]
                         + [f"{v} AS x_{k}" for k, v in extra.items()])
        nul = ", ".join([f"NULL AS r_{k}" for k in rf] + [f"NULL AS x_{k}" for k in extra])
        return (f"{head} SELECT ord, -1 AS sub, nr AS nrows, pr AS p_rec, fr AS f_rec, mr AS "
                f"m_rec, vr AS v_rec, {nul} FROM r2 WHERE pr IS NOT NULL UNION ALL BY NAME "
                f"SELECT ord, sub, 1 AS nrows, NULL AS p_rec, NULL AS f_rec, NULL AS m_rec, "
                f"NULL AS v_rec, {cols} FROM (SELECT *, unnest(range(n_s)) AS sub, {elems} "
                "FROM r2 WHERE pr IS NULL)")

    def _raw_evaluator_file(self, exact: bool) -> str:
        rel = E.relation(self.con, self.path, self.fmt, options=self.options)
        rel.create_view(f"ev{self.no}", replace=True)
        self.keys = set(E.RELATION_COLUMNS)
        self.reader += " (no per-sample correctness)" if not self.con.execute(
            f"SELECT count(correct) FROM ev{self.no}").fetchall()[0][0] else ""
        cols = self._fields_sql(self.keys, lambda f: f)
        return (f"SELECT line AS ord, -1 AS sub, 1 AS nrows, {self._NOREC}, {cols}, response AS "
                f"x_response, gold AS x_gold FROM ev{self.no}")

    def peek(self, n: int = 1000):
        """(top-level keys, keys of the samples) of the first ``n`` records (notes, labels)."""
        if not hasattr(self, "_peek"):
            lst = _jpath(self.mapping.samples) if self.mapping and self.mapping.samples else None
            rows = self.con.execute(
                f"SELECT json_keys(json), {f'json_extract(json, {lst})' if lst else 'NULL'} "
                f"FROM read_ndjson_objects({sql_str(self.path)}, ignore_errors=true, "
                f"maximum_object_size={_MAX_OBJECT}) WHERE json_type(json) = 'OBJECT' "
                f"LIMIT {n}").fetchall()
            top = {k for keys, _ in rows for k in keys or ()}
            sub = set()
            for _, samples in rows:
                for e in (json.loads(samples) if samples else None) or ():
                    sub.update(e if isinstance(e, dict) else ())
            self._peek = (top | self.keys, sub)
        return self._peek

    # ---- the exact pass over a file that failed --------------------------------------------
    def _fill(self, rows, schema) -> None:
        """Write rows (tuples) into the temp table ``fix<no>``, ``batch`` rows at a time."""
        import pyarrow as pa

        self.con.execute(f"DROP TABLE IF EXISTS fix{self.no}")
        batch, first = [], True
        for row in rows:
            batch.append(row)
            if len(batch) >= self.batch:
                _insert(self.con, f"fix{self.no}", pa.table(list(zip(*batch)), schema=schema),
                        first)
                batch, first = [], False
        if batch or first:
            _insert(self.con, f"fix{self.no}", pa.table(list(zip(*batch)) if batch else
                                                        [[]] * len(schema), schema=schema), first)

    def _jsonl_exact(self) -> None:
        """One pass over the lines: where blank lines shift the line numbers, and each line that
        DuckDB could not parse repaired (text that is not UTF-8 becomes a marker) or named
        malformed with Python's reason."""
        import pyarrow as pa

        if self._fixed:
            return
        self._fixed = True
        src = (f"SELECT row_number() OVER () AS ord, json FROM read_ndjson_objects("
               f"{sql_str(self.path)}, ignore_errors=true, maximum_object_size={_MAX_OBJECT})")
        nulls = {r[0] for r in self.con.execute(f"SELECT ord FROM ({src}) WHERE json IS NULL")
                 .fetchall()}
        tail = "; its samples cannot be counted" if self.mapping else ""
        starts, shifts = [1], [0]

        def rows():
            o = 0
            with open_bytes(self.path) as fh:
                for lineno, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    o += 1
                    if lineno - o != shifts[-1]:
                        starts.append(o)
                        shifts.append(lineno - o)
                    if o in nulls:
                        try:
                            yield o, json.dumps(_mark(loads(line))), None, None
                        except ValueError as exc:
                            yield (o, None, f"malformed JSON ({json_error(exc)}){tail}",
                                   json.dumps(line[:60].decode("utf-8", "replace")))

        try:
            self._fill(rows(), pa.schema([("ord", pa.int64()), ("json", pa.string()),
                                          ("msg", pa.string()), ("val", pa.string())]))
        except (EOFError, zlib.error, OSError) as exc:
            raise unreadable(self.path, exc) from None
        self._shift = (starts, shifts)

    def _csv_exact(self) -> None:
        """Every CSV record with the line it starts on; a record whose field count is not the
        header's is a malformed row (Python's csv module: values may hold newlines)."""
        import csv
        import sys

        import pyarrow as pa

        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        opener = gzip.open if self.path.name.lower().endswith(".gz") else open
        bad = code(MALFORMED_CSV, "malformed")
        with opener(self.path, "rt", newline="", encoding="utf-8", errors="surrogateescape") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            while header == []:
                header = next(reader, None)
            if header is None:
                raise no_rows_error(self.path, "csv")
            self.keys = set(header)
            pos = [(f, header.index(f)) for f in self.fields if f in header]

            def rows():
                prev = reader.line_num
                for rec in reader:
                    start, prev = prev + 1, reader.line_num
                    if not rec:
                        continue
                    if len(rec) != len(header):
                        yield (start, int(bad), f"{len(rec)} fields where the header has "
                               f"{len(header)}", json.dumps(",".join(rec)), *[None] * len(pos))
                    else:
                        yield start, None, None, None, *[
                            json.dumps(_mark(rec[i])) if rec[i] != "" else None for _, i in pos]

            schema = pa.schema([("ord", pa.int64()), ("p_rec", pa.int32()), ("m_rec", pa.string()),
                                ("v_rec", pa.string())] + [(f, pa.string()) for f, _ in pos])
            try:
                self._fill(rows(), schema)
            except csv.Error as exc:
                raise InputFileError(f"{self.path}: cannot read the file ({exc}).") from None

    def _parquet_exact(self) -> None:
        """The read columns through pyarrow, as JSON text; text that is not UTF-8: a marker."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = [f for f in self.fields if f in self.keys]
        pf = pq.ParquetFile(self.path)
        binary = {f for f in cols if pa.types.is_string(pf.schema_arrow.field(f).type)
                  or pa.types.is_large_string(pf.schema_arrow.field(f).type)}

        def rows():
            start = 0
            for batch in pf.iter_batches(columns=cols):
                vals = [(batch.column(f).view(pa.binary()) if f in binary else batch.column(f))
                        .to_pylist() for f in cols]
                for i, row in enumerate(zip(*vals)):
                    yield start + i, *[None if v is None else json.dumps(_mark(
                        v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v),
                        default=str) for v in row]
                start += batch.num_rows

        self._fill(rows(), pa.schema([("ord", pa.int64())] + [(f, pa.string()) for f in cols]))
        self.keys = set(cols)

    # ---- locations and values of problems --------------------------------------------------
    def where(self, ord_: int, sub: int = -1) -> str:
        """``"line 12"``, ``"line 3, sample 1"`` or ``"row group 0, row 5"`` of a row."""
        import bisect

        if self.form in ("parquet", "table"):
            if self._rg is None:
                sizes = self.con.execute(
                    "SELECT row_group_num_rows FROM (SELECT DISTINCT row_group_id, "
                    f"row_group_num_rows FROM parquet_metadata({sql_str(self.path)})) "
                    "ORDER BY row_group_id").fetchall()
                self._rg = [0]
                for (n,) in sizes:
                    self._rg.append(self._rg[-1] + n)
            g = bisect.bisect_right(self._rg, ord_) - 1
            return f"row group {g}, row {ord_ - self._rg[g]}"
        if self.form == "csv" or (self.form == "evaluator-file" and container(self.path) ==
                                  "jsonl"):
            return f"line {ord_}"
        if self.form == "evaluator-file":
            return f"row {ord_}"
        if self._shift is None:
            starts, shifts, o = [1], [0], 0
            with open_bytes(self.path) as fh:
                for lineno, line in enumerate(fh, 1):
                    if line.strip():
                        o += 1
                        if lineno - o != shifts[-1]:
                            starts.append(o)
                            shifts.append(lineno - o)
            self._shift = (starts, shifts)
        starts, shifts = self._shift
        line = ord_ + shifts[bisect.bisect_right(starts, ord_) - 1]
        return f"line {line}" + (f", sample {sub}" if sub >= 0 else "")

    def field_name(self, field: str, sub: int) -> str:
        names = getattr(self, "_names", None)
        return names[field].format(sub) if names and field in names and sub >= 0 else field

    @staticmethod
    def show(raw: str) -> str:
        """The value of a problem (JSON text) as the file holds it (``repr``, shortened)."""
        try:
            raw = json.loads(raw)
        except ValueError:
            return short_repr(raw)
        if isinstance(raw, dict) and _BAD in raw:
            return short_repr(bytes.fromhex(raw[_BAD]))
        return short_repr(raw)


def _insert(con, name: str, table, first: bool) -> None:
    """Append an Arrow table to a temp table (created by the first batch)."""
    con.register("batch_in", table)
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM batch_in" if first else
                f"INSERT INTO {name} SELECT * FROM batch_in")
    con.unregister("batch_in")


def _mark(v):
    """A parsed JSON value whose text that is not UTF-8 is replaced by a marker object (the
    rules call it ``invalid_utf8``); keys are decoded with replacement characters."""
    if isinstance(v, str):
        return v if _is_utf8(v) else {_BAD: v.encode("utf-8", "surrogateescape").hex()
                                      if _surrogates_only(v) else v.encode("utf-8",
                                                                           "surrogatepass").hex()}
    if isinstance(v, list):
        return [_mark(x) for x in v]
    if isinstance(v, dict):
        return {(k if _is_utf8(k) else k.encode("utf-8", "surrogateescape").decode(
            "utf-8", "replace")): _mark(x) for k, x in v.items()}
    return v


def _surrogates_only(v: str) -> bool:
    try:
        v.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return False
    return True


def checked_sql(src: str, fields, types: dict, kind: str, optional=(), rec: bool = True) -> str:
    """The rule set over a raw relation: per field its clean value, ``p_<field>`` (a problem
    code, NULL when fine) and ``r_<field>``; ``bad`` when the row has any problem."""
    out_type = {"question_id": "VARCHAR", "answer": "VARCHAR", "model": "VARCHAR",
                "benchmark": "VARCHAR", "finish_reason": "VARCHAR", "correct": "BOOLEAN",
                "n_tokens": "DOUBLE", "token_entropy": "DOUBLE"}
    cats, vals = [], []
    for f in fields:
        v = _Val(f"r_{f}", types.get(f"r_{f}", '"NULL"'))
        if v.json:
            cats.append(f"{v.category()} AS k_{f}")
        name, kw = RULES[f]
        val, prob = rule(name, v, f"k_{f}", **{**kw, **({"required": False} if f in optional
                                                         else {})})
        prob = f"CASE WHEN p_rec IS NULL THEN {prob} END" if rec else prob
        vals.append(f"CAST({val} AS {out_type.get(f, 'BIGINT')}) AS {f}, "
                    f"CAST({prob} AS INTEGER) AS p_{f}")
    sql = f"SELECT *, {', '.join(vals)} FROM (SELECT *{''.join(', ' + c for c in cats)} " \
          f"FROM {src})"
    if kind == "counts":
        ok = "p_rec IS NULL AND p_n IS NULL AND p_c IS NULL"
        sql = (f"SELECT * REPLACE (coalesce(p_c, CASE WHEN {ok} AND c > n THEN "
               f"{code(C_GT_N, 'must be <= n')} END) AS p_c, coalesce(p_first_correct, CASE WHEN "
               f"{ok} AND first_correct IS NOT NULL AND (first_correct >= n OR "
               f"((first_correct = -1) <> (c = 0))) THEN "
               f"{code(INCONSISTENT, 'must be < n, and -1 exactly when c == 0')} END) AS "
               f"p_first_correct) FROM ({sql})")
    bad = " OR ".join((["p_rec IS NOT NULL"] if rec else []) + [f"p_{f} IS NOT NULL"
                                                                 for f in fields])
    return f"SELECT *, ({bad}) AS bad FROM ({sql})"


def open_source(con, p, no: int, *, fmt, mapping, labels, options=None, contents=None,
                checked=True) -> Source:
    """Detect the format of input ``p`` and make its :class:`Source` (views not built yet)."""
    path = Path(p)
    if contents is not None:  # a summary already read (leash.summarize.read_summary)
        f, m, keys = "summary", None, contents.column_names
        meta = (contents.schema.metadata or {}).get(SUMMARY_METADATA_KEY)
    else:
        f, m, keys, meta = detect(path, fmt, mapping, checked=checked)
    src = Source(con, path, no, f, m, labels, options=options, keys=keys, meta=meta,
                 contents=contents)
    src.fname = str(p)
    return src


def guarded(src: Source, run):
    """Run ``run()``; an error of DuckDB reading the file is the file's (named, one line).

    Parquet text that is not UTF-8 sets ``src.utf8_error`` instead (the caller then reads the
    file with the exact reader). An error of the SQL itself (a bug) is never the file's.
    """
    import duckdb

    try:
        return run()
    except (duckdb.IOException, duckdb.InvalidInputException) as exc:
        if src.form == "parquet" and not src.exact and "UTF8" in str(exc).replace("-", ""):
            src.utf8_error = True
            return None
        raise unreadable(src.path, exc) from None


def rule_problems(src: Source, limit=None):
    """(problems in file order, at most ``limit``; problems per reason) of a built source."""
    parts = [f"SELECT ord, sub, -1 AS j, f_rec AS f, p_rec AS p, m_rec AS m, v_rec AS r "
             f"FROM chk{src.no} WHERE p_rec IS NOT NULL"]
    for j, f in enumerate(src.fields):
        raw = f"r_{f}::VARCHAR" if src.types.get(f"r_{f}", "").upper() == "JSON" else \
            f"to_json(r_{f})::VARCHAR"
        parts.append(f"SELECT ord, sub, {j}, '{f}', p_{f}, NULL, {raw} FROM chk{src.no} "
                     f"WHERE p_{f} IS NOT NULL")
    union = " UNION ALL ".join(parts)
    by_reason: dict[str, int] = {}
    for p, n in src.con.execute(f"SELECT p, count(*) FROM ({union}) GROUP BY p").fetchall():
        by_reason[CODES[p][0]] = by_reason.get(CODES[p][0], 0) + n
    rows = src.con.execute(f"SELECT * FROM ({union}) ORDER BY ord, sub, j"
                           + (f" LIMIT {int(limit)}" if limit is not None else "")).fetchall()
    out = []
    for ord_, sub, j, f, p, m, r in rows:
        reason, message = CODES[p]
        rec = j < 0 or reason == MALFORMED
        field = "-" if reason == MALFORMED else f if j < 0 else src.field_name(f, sub)
        value = (short_repr(str(r)[:60]) if reason == MALFORMED and j >= 0 else
                 src.show(r) if r is not None else "None")
        out.append(Problem(src.fname, src.where(ord_, sub if j >= 0 else -1), field, value,
                           reason, m or message))
    return out, by_reason


def response_batches(path, *, fmt=None, mapping=None, model=None, benchmark=None, step=None,
                     batch_size=10_000, reader_options=None):
    """Per-sample rows *with response texts* of one file, in batches of at most ``batch_size``.

    Parameters
    ----------
    path : str or os.PathLike
        A samples file with a ``response`` column, a nested/evaluator JSONL file or a file of
        one of the evaluators' formats (:data:`leash.evaluators.EVALUATOR_FORMATS`).
    fmt, mapping, model, benchmark, step
        As in :func:`leash.summarize.summarize`; given labels replace the file's.
    batch_size : int
        Rows per batch; memory is bounded by it, not by the file.
    reader_options : dict, optional
        Options of an evaluator's reader, e.g. ``{"filter": "strict-match"}``.

    Yields
    ------
    pyarrow.RecordBatch
        ``model, benchmark, question_id (string), step (int64), sample_idx (int64), response
        (string), correct (bool, null when the file has none), gold (string, null when the
        file has none)``, in file order; the rows go through the rules of every reader (a bad
        question id or verdict raises ValueError naming file, line and field).
    """
    con = connect()
    src = open_source(con, path, 0, fmt=fmt, mapping=mapping, checked=False,
                      labels={"model": model, "benchmark": benchmark, "step": step},
                      options=reader_options)
    if src.kind == "counts":
        raise ValueError(f"{path}: format {src.fmt!r} holds no response texts; rescoring needs a "
                         "samples file with a 'response' column or a nested/evaluator file.")
    if src.form in ("jsonl", "parquet", "csv") and "response" not in src.keys:
        raise ValueError(f"{path}: a samples file needs a 'response' column to be rescored; it "
                         f"has {sorted(src.keys)}.")
    src.fields = ("model", "benchmark", "question_id", "step", "sample_idx", "correct")
    src.optional, src.extra = ("model", "benchmark", "correct"), ("response", "gold")
    if guarded(src, lambda: src.build() or con.execute(
            f"SELECT bool_or(bad) FROM chk{src.no}").fetchall()[0][0]) is not False:
        src.build(exact=True)
        problems, _ = rule_problems(src, limit=1)
        if problems:
            raise ValueError(f"{problems[0]}.")

    def text(x):
        return f"(x_{x}->>'$')" if src.types.get(f"x_{x}", "").upper() == "JSON" else \
            f"CAST(x_{x} AS VARCHAR)"

    rel = con.sql(
        f"SELECT model, benchmark, question_id, step, sample_idx, {text('response')} AS "
        f"response, correct, {text('gold')} AS gold FROM chk{src.no} ORDER BY ord, sub")
    yield from (getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader)(batch_size)
