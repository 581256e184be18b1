"""Input formats of model generations: detection, field mappings, the rule set and the readers.

The formats (``data/README.md``): samples, counts, summary, nested (a :class:`NestedMapping`),
evaluator, and the plug-in formats of :mod:`leash_eval.readers` (the files of evaluators,
trainers and harnesses). DuckDB reads every file into
raw canonical fields; :func:`checked_sql` is the one rule set (SQL) deciding each field's clean
value and problem, so validate, summarize and :func:`response_batches` agree on every row. The
exact readers (Python; only for a file that failed, and for CSV) locate what DuckDB cannot.
"""

from __future__ import annotations

import bisect
import dataclasses
import errno
import gzip
import json
import os
import re
import stat
import zlib
from pathlib import Path

from leash.errors import Api, LeashTypeError, LeashValueError, Param, closest
from leash.summary import SUMMARY_EXTRA, SUMMARY_METADATA_KEY
from leash_eval import evaluators as E
from leash_eval import readers as R

__all__ = ["SAMPLES_REQUIRED", "SAMPLES_OPTIONAL", "COUNTS_REQUIRED",
           "COUNTS_OPTIONAL", "NestedMapping", "MAPPINGS", "get_mapping", "detect_format",
           "check_regular_file", "partitions", "response_batches", "InputFileError"]

SAMPLES_REQUIRED = ("model", "benchmark", "question_id", "sample_idx", "correct")
SAMPLES_OPTIONAL = ("answer", "n_tokens", "token_entropy", "finish_reason", "response", "step")
COUNTS_REQUIRED = ("model", "benchmark", "question_id", "n", "c")
COUNTS_OPTIONAL = ("first_correct", "step")
READ = {"samples": ("model", "benchmark", "question_id", "step", "sample_idx", "correct",
                    "answer", "n_tokens", "token_entropy", "finish_reason"),
        "counts": ("model", "benchmark", "question_id", "step", "n", "c", "first_correct")}
_SUFFIXES = {"parquet": (".parquet", ".pq"), "csv": (".csv", ".csv.gz"),
             "jsonl": (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".json", ".json.gz")}
# Reasons of problems; those of a whole file (FILE_REASONS) stop it even with on_error="skip".
(MALFORMED, MALFORMED_CSV, MISSING, WRONG_TYPE, INVALID_BOOL, NOT_INTEGER, OUT_OF_RANGE,
 INVALID_NUMBER, DUPLICATE, C_GT_N, INCONSISTENT, RAGGED, EMPTY, INVALID_UTF8) = (
    "malformed_json", "malformed_csv", "missing_field", "wrong_type", "invalid_bool",
    "not_integer", "out_of_range", "invalid_number", "duplicate", "c_greater_than_n",
    "first_correct_inconsistent", "ragged_list", "empty_value", "invalid_utf8")
FILE_REASONS = UNDETECTED, UNREADABLE, NO_ROWS, NOT_REGULAR, DUPLICATE_FILE = (
    "undetected_format", "unreadable_file", "no_rows", "not_a_regular_file", "duplicate_file")
DUPLICATE_KEY = "duplicate_key"  # a key twice in one JSON object: which value is meant?
UTF8_MESSAGE = "must be valid UTF-8 text"
TOO_LARGE = "too large (beyond the 64-bit integer range)"
_BAD = "__leash_invalid_utf8__"  # marker object of text that is not UTF-8 (exact readers)
_MAX_OBJECT = 1 << 26  # bytes of one JSON line DuckDB reads (a long list of responses)
_OBJECT = 1 << 24  # DuckDB's default cap: buffers a quarter the size, for files of shorter lines
_MAX_KEYS = 10_000  # keys of one JSON record (a record has tens; DuckDB's schema inference
#                     over a first record of 10^6 keys runs for many minutes)


class InputFileError(LeashValueError):
    """A problem with a whole input file (not regular, unreadable, no rows); ``reason`` is one
    of :data:`FILE_REASONS`, ``file`` the file (the attributes of :mod:`leash.errors`).
    """

    def __init__(self, *message, reason: str = UNREADABLE, **structure):
        self.reason = reason
        super().__init__(*message, **structure)


@dataclasses.dataclass(frozen=True)
class Problem:
    """One problem of an input file: ``file``, ``location`` (``"line 12"``, ``"line 3, sample
    1"``, ``"row group 0, row 5"``), ``field`` (e.g. ``"score[3]"``), ``value`` (its repr),
    ``reason`` (e.g. ``"invalid_bool"``) and ``message``.
    """

    file: str
    location: str
    field: str
    value: str
    reason: str
    message: str
    order: tuple = dataclasses.field(default=(), compare=False, repr=False)  # in its file
    #: the error of a whole-file problem, whose message another layer words itself
    error: BaseException | None = dataclasses.field(default=None, compare=False, repr=False)

    def text(self, words=None) -> str:
        """The message, in ``words`` (:class:`leash.errors.Words`) when it has an error."""
        return self.message if words is None or self.error is None else words.error(self.error)

    def render(self, words=None) -> str:
        """The problem on one line: where, the field, the message and the value."""
        if self.location == "file":  # a whole-file problem: its message names the file
            return self.text(words)
        return (f"{self.file}: {self.location}: field '{self.field}': {self.message} "
                f"(got {self.value})")

    def __str__(self) -> str:
        return self.render()

    def as_error(self, hint=()) -> LeashValueError:
        """The error that stops a read at this problem: its file, location (``line``), field
        (``key``) and value, and ``hint`` (a remedy: :data:`leash_eval.validate.SKIP_OR_VALIDATE`).
        """
        return LeashValueError(f"{self}.", file=self.file, line=self.location, key=self.field,
                               value=self.value, got=self.value, hint=hint)


def short_repr(value, limit: int = 60) -> str:
    """``repr`` of a bad value, cut at about ``limit`` characters (a long integer keeps its
    first and last digits and says how many there are: ``'1000...0007' (5000 digits)``).
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
            isinstance(value, str) and re.match(r"^\s*[+-]?\d+\s*$", value)):
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
    """Where the fields of a nested (one object per question) layout live (dotted paths into
    nested objects allowed): ``correct`` (required), ``question_id`` (None: the record number),
    ``samples`` (the list of per-sample objects; None: parallel per-sample lists at top level),
    the per-sample ``answer, response, index`` (None: the list position, after the samples
    earlier files gave the question), ``n_tokens, token_entropy, finish_reason``, the top-level
    ``model, benchmark, step, gold``, and ``constants`` (fixed labels, ``(name, value)`` pairs);
    ``name`` names it in provenance and messages.
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

    def per_sample_fields(self) -> dict[str, str]:
        """Canonical name -> field name of the per-sample fields that are configured."""
        names = ("correct", "answer", "response", "index", "n_tokens", "token_entropy",
                 "finish_reason")
        return {k: getattr(self, k) for k in names if getattr(self, k)}

    def detection_keys(self) -> tuple[str, ...]:
        """The top-level keys a file of this layout must have (used to recognise it)."""
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


def get_mapping(mapping) -> NestedMapping:
    """Resolve a mapping: a name of :data:`MAPPINGS`, a YAML file of field paths
    (``data/README.md``, section 4b), a dict of :class:`NestedMapping` fields, or one.
    """
    if isinstance(mapping, NestedMapping):
        return mapping
    if isinstance(mapping, os.PathLike) or (isinstance(mapping, str) and mapping.lower()
                                            .endswith((".yaml", ".yml"))):
        return _yaml_mapping(Path(mapping))
    if isinstance(mapping, str):
        if mapping not in MAPPINGS:
            raise LeashValueError(param="mapping", value=mapping, constraint=(
                f"one of {sorted(MAPPINGS)}, a YAML file", Api(" or a NestedMapping")))
        return MAPPINGS[mapping]
    if isinstance(mapping, dict):
        return NestedMapping(**{"name": "custom", **mapping})
    raise LeashTypeError(param="mapping", value=mapping, got=type(mapping).__name__,
                         constraint="a str, dict or NestedMapping")


def _yaml_mapping(path: Path) -> NestedMapping:
    from leash.config import load_yaml

    check_regular_file(path)
    raw = load_yaml(path, f"field mapping {path}", "field mapping")[0]  # the one YAML loader
    if not isinstance(raw, dict) or "correct" not in raw:
        raise LeashValueError(f"{path}: a field mapping is a YAML mapping with at least "
                              "'correct:' (data/README.md, section 4b).", file=path)
    consts = raw.pop("constants", None) or {}
    fields = {f.name for f in dataclasses.fields(NestedMapping)} - {"constants"} | {"tokens"}
    for key, value in [*raw.items(), *((f"constants.{k}", v) for k, v in consts.items())]:
        known = (("constants.model", "constants.benchmark", "constants.step")
                 if key.startswith("constants.") else sorted(fields | {"constants"}))
        if key not in known:
            hit = closest(key, known)
            raise LeashValueError(f"{path}: unknown key '{key}'" + (
                f" (did you mean '{hit}'?)" if hit else "") + f"; known keys: "
                f"{', '.join(known)}.", file=path, key=key)
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise LeashValueError(f"{path}: '{key}' must be a field path (a string). Got "
                                  f"{value!r}.", file=path, key=key, value=value)
    raw["n_tokens"] = raw.pop("tokens", raw.get("n_tokens"))
    return NestedMapping(**{"name": path.name, **raw, "constants": tuple(sorted(consts.items()))})


# --------------------------------------------------------------------------------------------
# Files: regular files only, errors of unreadable ones, detection
# --------------------------------------------------------------------------------------------
def partitions(path) -> list[Path] | None:
    """The Parquet files of a folder of partitions: every ``*.parquet`` / ``*.pq`` file below
    it, in path order with numbers compared as numbers (``part-2`` before ``part-10``), as
    verl, vLLM and Ray Data batch jobs (or Spark) write a dataset; hidden or bookkeeping files
    and folders (a name starting with ``.`` or ``_``: ``_SUCCESS``, ``.part-0.crc``) are left
    out. None when ``path`` is not a folder holding any. Values that exist only in folder
    names (Hive's ``step=100/``) are not read: each file must carry its columns.
    """
    root = Path(path)
    if not root.is_dir():
        return None
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
        found += [Path(dirpath, f) for f in filenames if not f.startswith((".", "_"))
                  and f.lower().endswith((".parquet", ".pq"))]

    def order(p: Path):
        parts = re.split(r"(\d+)", p.relative_to(root).as_posix())
        return [(0, int(x), "") if x.isdigit() else (1, 0, x) for x in parts]

    return sorted(found, key=order) or None


def check_regular_file(path) -> os.stat_result:
    """Raise unless ``path`` is an existing regular file (or a link to one); return its stat
    (a FIFO, socket or device would block or never end, a directory is no input).
    """
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"The file {path} does not exist.") from None
    except OSError as exc:  # a symbolic link loop (ELOOP), a name too long...
        what = ("a symbolic link loop" if exc.errno == errno.ELOOP else
                f"not readable ({exc.strerror or type(exc).__name__})")
        raise InputFileError(f"{path} is {what}; leash reads regular files only.",
                             reason=NOT_REGULAR, file=path) from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return st
    what = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a character device"
            if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "special")
    raise InputFileError(f"{path} is {what}, not a regular file; leash reads regular files "
                         "only.", reason=NOT_REGULAR, file=path)


def no_rows_error(path, kind: str) -> InputFileError:
    """The one error for an input without data rows, whatever its format."""
    what = {"csv": "a header and no data rows", "parquet": "zero rows",
            "empty": "the file is empty"}.get(kind, "no records")
    return InputFileError(f"{path} has no data rows ({what}); an input must hold at least "
                          "one row.", reason=NO_ROWS, file=path)


def unreadable(path: Path, exc: BaseException) -> Exception:
    """The error for a file that cannot be read to its end, with its last complete line."""
    if isinstance(exc, OSError) and getattr(exc, "filename", None):
        return exc  # not found, permission denied...: already names the file
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "maximum_object_size" in detail:  # DuckDB's cap on one JSON line, without its line
        line = _first_line_longer_than(path, _MAX_OBJECT)
        if line is not None:
            return InputFileError(
                f"{path}, line {line}: the line is longer than {_MAX_OBJECT >> 20} MiB, the "
                "most one JSON line may hold (one record: a few responses, not a corpus).",
                file=path, line=line)
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
                 "not one complete line could be read."), file=path, line=lines or None)
    return InputFileError(f"{path}: cannot read the file ({detail}).", file=path)


def _first_line_longer_than(path: Path, cap: int) -> int | None:
    """The number of the first line of more than ``cap`` bytes (error path only: a scan that
    holds at most ``cap`` bytes at a time), or None.
    """
    try:
        with open_bytes(path) as fh:
            lineno, fresh = 0, True
            while chunk := fh.readline(cap + 2):
                lineno += fresh
                if len(chunk.rstrip(b"\r\n")) > cap:
                    return lineno
                fresh = chunk.endswith(b"\n")
    except (EOFError, zlib.error, OSError):
        return None
    return None


def container(path: Path) -> str:
    for kind, suffixes in _SUFFIXES.items():
        if path.name.lower().endswith(suffixes):
            return kind
    raise LeashValueError(f"Cannot read {path}: unknown file extension. Supported: "
                          f"{', '.join(s for v in _SUFFIXES.values() for s in v)}.", file=path)


def open_bytes(path: Path):
    """A file opened for reading bytes, decompressed when its name ends in ``.gz``."""
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def json_records(path: Path):
    """Yield ``(where, record)`` for each non-blank line of a JSONL file (.gz too), where
    ``where`` names the file and line for error messages; malformed JSON is a ValueError.
    """
    with open_bytes(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: malformed JSON ({exc.msg}).") from None
            yield where, record


def loads(line: bytes):
    """``json.loads`` of one line; its reason in a few words when it is no JSON."""
    try:
        try:
            return json.loads(line)
        except UnicodeDecodeError:  # bytes that are not UTF-8: kept as surrogate escapes
            return json.loads(line.decode("utf-8", "surrogateescape"))
    except ValueError as exc:  # also an integer of more than 4300 digits
        text = exc.msg if isinstance(exc, json.JSONDecodeError) else \
            str(exc).split(":")[0].strip() or type(exc).__name__
        raise ValueError(text[0].lower() + text[1:]) from None
    except RecursionError:  # JSON nested deeper than Python's parser follows
        raise ValueError("nested too deeply (more levels than Python's parser follows)") \
            from None


def _head(path: Path, kind: str):
    """(keys, first record or None, summary metadata or None) of a file, for detection."""
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            schema = pq.read_schema(path)
            _no_twice(schema.names, path, "column", None)
            return set(schema.names), None, (schema.metadata or {}).get(SUMMARY_METADATA_KEY)
        with open_bytes(path) as fh:
            # lines read at most one record's worth at a time (a .gz bomb of one line is not
            # held whole): a longer first record is refused, naming its line
            for lineno, line in enumerate(iter(lambda: fh.readline(_MAX_OBJECT + 2), b""), 1):
                if len(line) > _MAX_OBJECT + 1:
                    raise InputFileError(
                        f"{path}, line {lineno}: the line is longer than {_MAX_OBJECT >> 20} "
                        "MiB, the most one JSON line may hold.", file=path, line=lineno)
                if lineno == 1 and (wide := _wide_encoding(line)):
                    raise LeashValueError(
                        f"{path}: the file is {wide} text; leash reads UTF-8 (convert it: "
                        f"iconv -f {wide} -t UTF-8 {path.name} > utf8-{path.name}).",
                        file=path, line=1, value=wide)
                if not line.strip():
                    continue
                if kind == "csv":  # bytes: a bad byte further down is not the header's
                    import csv

                    header = line.decode("utf-8-sig", "replace")  # a BOM is no column name
                    names = next(csv.reader([header]))
                    _no_twice(names, path, "column", lineno)
                    return set(names), None, None
                # a JSON array (json.dump of a list, often named .json) is no JSON lines
                array = (f" The file looks like one JSON array: leash reads JSON lines, one "
                         f"object per line (jq -c '.[]' {path.name} > records.jsonl writes "
                         "them).") if line.lstrip().startswith(b"[") else ""
                try:
                    rec = loads(line)
                except ValueError as exc:
                    raise LeashValueError(f"{path}: line {lineno}: malformed JSON ({exc}); "
                                          f"cannot detect the format.{array}", file=path,
                                          line=lineno) from None
                if not isinstance(rec, dict):
                    raise LeashValueError(f"{path}: the first record is a JSON "
                                          f"{type(rec).__name__}, not an object; cannot detect "
                                          f"the format.{array}", file=path, line=lineno)
                return set(rec), rec, None
    except (EOFError, zlib.error, OSError) as exc:
        raise unreadable(path, exc) from None
    except Exception as exc:  # pyarrow's ArrowInvalid of a corrupt Parquet footer
        if type(exc).__module__.startswith("pyarrow"):
            raise unreadable(path, exc) from None
        raise
    raise no_rows_error(path, kind)


def _wide_encoding(first: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` when the first line of a text file is in one of them (a
    byte-order mark, or NUL bytes beside ASCII ones), else None: named, not "malformed JSON".
    """
    if first.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if first.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    head, zeros = first[:64], first[:64].count(0)
    if len(head) >= 8 and zeros * 4 >= len(head) * 3 - 4:
        return "UTF-32"
    if len(head) >= 4 and zeros * 2 >= len(head) - 2:
        return "UTF-16"
    return None


def _no_twice(names, path, what: str, line) -> None:
    """Refuse a column named twice (Parquet, a CSV header): which one is meant is a guess."""
    seen = set()
    for n in names:
        if n in seen:
            raise LeashValueError(f"{path}: " + (f"line {line}: " if line else "") +
                                  f"{what} {n!r} appears twice; which one is meant is "
                                  "ambiguous: rename or drop one.", file=path, line=line, key=n,
                                  value=n)
        seen.add(n)


def detect_format(path, *, fmt=None, mapping=None) -> tuple[str, NestedMapping | None]:
    """Detect the format of a generations file.

    Parameters
    ----------
    path : str or os.PathLike
    fmt : str, optional
        Explicit format (a name of :func:`leash_eval.readers.input_formats`); skips detection.
    mapping : str, dict or NestedMapping, optional
        Field mapping (a name, a YAML file, fields); given alone it implies "nested".

    Returns
    -------
    tuple of (str, NestedMapping or None)
        The format and, for "nested"/"evaluator", the mapping; from the extension, then the
        columns or first record (a file no format fits: a ValueError naming those tried).
    """
    return detect(Path(path), fmt, mapping, checked=False)[:2]


def detect(path: Path, fmt, mapping, *, checked: bool):  # noqa: C901 - one branch per format
    """:func:`detect_format` plus the file's keys and summary metadata (None when not read)."""
    formats = tuple(R.input_formats())
    if fmt is not None and fmt not in formats:
        raise LeashValueError(param="fmt", value=fmt, constraint=f"one of {formats} or None")
    if fmt in ("evaluator", "nested"):
        if fmt == "nested" and mapping is None:
            raise LeashValueError(
                f"{path}: ", Param("fmt", value="nested"), " needs ", Param("mapping", value=...),
                f" (one of {sorted(MAPPINGS)}, a YAML file", Api(" or a NestedMapping"), ").",
                param="mapping", file=path)
        return fmt, get_mapping(mapping or "evaluator"), None, None
    if R.plugin(fmt):
        return fmt, None, None, None
    if not checked:
        check_regular_file(path)  # a FIFO would block the read below
    if fmt is None and mapping is None and (found := R.detect_document(path)):
        return found, None, None, None  # a zip archive or one JSON document (a plug-in's)
    kind = container(path)
    if fmt in ("samples", "counts"):  # given, not detected: the reader still needs the keys
        return fmt, None, _head(path, kind)[0], None
    if mapping is not None and fmt is None:
        if kind != "jsonl":
            raise LeashValueError(f"{path}: a nested mapping applies to JSONL files only.",
                                  param="mapping", file=path)
        return "nested", get_mapping(mapping), None, None
    keys, rec, meta = _head(path, kind)
    if fmt == "summary" or meta is not None:
        return "summary", None, keys, meta
    # responses without verdicts are samples too, to be graded by leash rescore
    have = keys | ({"correct"} if {"question_id", "sample_idx", "response"} <= keys else set())
    for name, need in (("samples", {"sample_idx", "correct", "question_id"}),
                       ("counts", {"n", "c", "question_id"})):
        if not need <= have:
            continue
        if rec and all(isinstance(v, dict) for v in rec.values()):
            raise LeashValueError(f"{path}: the first record holds one object per column, as "
                                  "pandas' DataFrame.to_json() writes by default; leash reads "
                                  "one record per line, as to_json(path, orient='records', "
                                  "lines=True) writes.", file=path)
        return name, None, keys, None
    for m in MAPPINGS.values():
        if rec is not None and all(k in rec for k in m.detection_keys()) \
                and isinstance(rec[m.samples or m.correct], list):
            return ("evaluator" if m.name == "evaluator" else "nested"), m, keys, None
    found = R.detect_record(path, keys, rec)
    if found:
        return found, None, keys, None
    if sides := _wide_sides(keys):
        raise _wide_error(path, keys, sides)
    tried = ["samples (needs columns question_id, sample_idx, correct or response)",
             "counts (needs question_id, n, c)"]
    if kind == "jsonl":
        tried += [f"nested mapping '{m.name}' (needs list field(s) {list(m.detection_keys())})"
                  for m in MAPPINGS.values()]
    tried += [f"{f.name} ({f.signature})" for f in R.input_formats().values() if f.read]
    sep = next((f" ({name}-separated: leash reads CSV separated by commas)" for c, name in
                ((";", "semicolon"), ("\t", "tab"), ("|", "pipe")) if kind == "csv" and
                len(keys) == 1 and c in next(iter(keys))), "")
    padded = sorted(k for k in keys if k != k.strip() and k.strip() in READ["samples"] +
                    READ["counts"])  # "model, benchmark": a space after each comma
    sep += f" (names with spaces around them: {padded[:3]})" if padded else ""
    raise LeashValueError(
        f"Could not detect the format of {path}. Tried: {'; '.join(tried)}. Found keys: "
        f"{sorted(keys)[:20]}{sep}.", param="fmt", file=path, hint=(
            "Pass ", Param("fmt", value=...), f" (one of {formats}) and, for nested layouts, ",
            Param("mapping", value=...), " to override."))


_COUNT_SUFFIXES = ("_correct", "_c")


def _wide_sides(keys) -> list[tuple[str, str]]:
    """(side, count column) of a wide per-question table, one column pair per model
    (``base_n, base_correct, rl_n, rl_correct``), or [] when ``keys`` are not one.
    """
    sides = [(k[:-2], next((k[:-2] + x for x in _COUNT_SUFFIXES if k[:-2] + x in keys), None))
             for k in sorted(keys) if k.endswith("_n") and len(k) > 2]
    sides = [(side, c) for side, c in sides if c]
    return sides if len(sides) >= 2 else []


def _wide_error(path, keys, sides) -> LeashValueError:
    """The refusal of a wide table, with the reshape into counts that it needs.

    Refused rather than read: leash keys every count by a model label, and a column prefix
    (``base``, ``rl``) is a side, not a model (two wide files of different models would both
    say ``base``); whether ``<side>_correct`` counts correct samples or is a rate is a guess.
    The reshape makes the model labels the user's.
    """
    used = {c for side, cnt in sides for c in (side + "_n", cnt)}
    ids = sorted(k for k in keys if k not in used)
    rename = "" if "question_id" in ids or not ids else (
        f".rename(columns={{{ids[0]!r}: 'question_id'}})")
    pairs = ", ".join(f"{side}_n/{cnt}" for side, cnt in sides)
    suffixes = [(side, cnt[len(side):]) for side, cnt in sides]
    code = (f"import pandas as pd; w = pd.read_csv({Path(path).name!r}){rename}; "
            f"pd.concat([w.assign(model=m, n=w[m + '_n'], c=w[m + x]) for m, x in {suffixes!r}])"
            "[['model', 'question_id', 'n', 'c']].to_csv('counts.csv', index=False)")
    return LeashValueError(
        f"{path}: a wide table, one column pair per model ({pairs}); leash reads counts as one "
        "row per model and question (model, benchmark, question_id, n, c), so that every "
        "count carries a model label, not a side. Reshape it, then name the models and the "
        f"benchmark: python -c \"{code}\" and `leash summarize counts.csv --benchmark NAME`.",
        file=path, key=sides[0][0] + "_n", value=sorted(keys)[:20], param="fmt")


# --------------------------------------------------------------------------------------------
# The rule set: raw value -> (clean value, problem code), in SQL
# --------------------------------------------------------------------------------------------
CODES: list[tuple[str, str]] = []  # problem code -> (reason, message)


def code(reason: str, message: str) -> str:
    if (reason, message) not in CODES:
        CODES.append((reason, message))
    return str(CODES.index((reason, message)))


MALFORMED_CODE = code(MALFORMED, "malformed JSON")  # its message comes from the exact pass
# a JSON integer of more than 4300 digits: a line Python's json cannot read
HUGE = code(MALFORMED, "malformed JSON (exceeds the limit (4300 digits) for integer string "
                       "conversion)")
MISSING_CODE = code(MISSING, "required value is missing")
_INTS = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
         "UINTEGER", "UBIGINT", "UHUGEINT"}
_WS = "' \t\n\r\x0b\x0c'"


def _case(*pairs, default="NULL") -> str:
    pairs = [(c, v) for c, v in pairs if v is not None]
    return ("CASE " + " ".join(f"WHEN {c} THEN {v}" for c, v in pairs) + f" ELSE {default} END"
            if pairs else default)


class _Val:
    """A raw field: a typed DuckDB column (its category fixed), JSON (a category per value),
    or JSON with the category DuckDB inferred for the file (``"JSON:int"``): the fast path
    applies that category's rule and leaves any other value to the exact path.
    """

    def __init__(self, x: str, typ: str):
        t, _, self.hint = typ.upper().partition(":")
        self.x, self.json, self.tname, self.hint = x, t == "JSON", typ.lower(), self.hint.lower()
        self.cat = ("json" if self.json else "null" if t in ('"NULL"', "NULL") else "bool"
                    if t == "BOOLEAN" else "int" if t in _INTS else "float" if t in (
                        "FLOAT", "DOUBLE") or t.startswith("DECIMAL") else "str" if t ==
                    "VARCHAR" else "other")
        j = self.text = f"({x}::VARCHAR)"  # JSON: integers as written (every digit)
        self.i = (x if t in _INTS - {"UBIGINT", "HUGEINT", "UHUGEINT"} else
                  f"TRY_CAST({j if self.json else x} AS BIGINT)")  # NULL beyond int64
        self.neg = f"starts_with({j}, '-')" if self.json else f"({x} < 0)"
        self.f = f"TRY_CAST({j} AS DOUBLE)" if self.json else f"{x}::DOUBLE"
        self.s = (f"CASE WHEN contains({j}, '\\') THEN {x}->>'$' ELSE {j}[2:-2] END"
                  if self.json else x)
        self.b = f"({j} = 'true')" if self.json else x
        number = f"TRY_CAST({j} AS DOUBLE) IS NOT NULL AND NOT starts_with({j}, '\"')"
        real = f"contains({j}, '.') OR contains({j}, 'e') OR contains({j}, 'E')"
        self.is_hint = {"bool": f"{j} IN ('true', 'false')", "str": f"starts_with({j}, '\"')",
                        "int": f"{number} AND NOT ({real}) AND length({j}) < 19",
                        "float": f"{number} AND ({real} OR length({j}) <= 15)"}.get(self.hint)

    def category(self) -> str:
        x = self.x
        return (f"CASE WHEN {x} IS NULL THEN 'null' ELSE CASE json_type({x}) WHEN 'NULL' THEN "
                "'null' WHEN 'BOOLEAN' THEN 'bool' WHEN 'BIGINT' THEN 'int' WHEN 'UBIGINT' THEN "
                f"'int' WHEN 'DOUBLE' THEN CASE WHEN NOT regexp_full_match({x}::VARCHAR, "
                f"'-?[0-9]+') THEN 'float' WHEN length({x}::VARCHAR) > 4300 THEN 'huge' ELSE "
                "'int' END WHEN 'VARCHAR' THEN 'str' WHEN 'ARRAY' THEN 'list' ELSE CASE WHEN "
                f"json_exists({x}, '$.{_BAD}') THEN 'utf8' ELSE 'dict' END END END")


NEEDS_EXACT = code("needs_exact", "left to the exact path")  # never in a report


def _compile(v: _Val, k: str, branches: dict, wrong: str) -> tuple[str, str]:
    """(value SQL, problem SQL) from per-category branches; ``k``: the category column."""
    branches = {"null": ("NULL", None), "utf8": ("NULL", code(INVALID_UTF8, UTF8_MESSAGE)),
                "huge": ("NULL", HUGE), **branches}

    def pick(cat):
        return branches.get(cat) or ("NULL", code(WRONG_TYPE, wrong.format(
            cat if cat in ("bool", "int", "float", "str", "list", "dict") else v.tname)))

    if v.json and v.is_hint:
        tv, tp = pick(v.hint)
        return tv, _case((f"{v.x} IS NULL", branches["null"][1] or "NULL"),
                         (f"NOT ({v.is_hint})", NEEDS_EXACT), default=tp or "NULL")
    if not v.json:
        (nv, np_), (tv, tp) = branches["null"], pick(v.cat)
        if v.cat == "null":
            return nv, np_ or "NULL"
        # the values are NULL-propagating expressions of the field
        return tv, _case((f"{v.x} IS NULL", np_ or "NULL"), default=tp or "NULL") if tp else (
            _case((f"{v.x} IS NULL", np_)))
    cats = ("null", "bool", "int", "float", "str", "utf8", "list", "dict", "huge")
    return tuple(_case(*[(f"{k} = '{c}'", pick(c)[j]) for c in cats]) for j in (0, 1))


def rule(kind: str, v: _Val, k: str, *, required=True, min_value=0) -> tuple[str, str]:
    """(value SQL, problem SQL) of one field of ``kind``: label, qid, int, bool, float, answer."""
    miss = ("NULL", MISSING_CODE if required else None)
    f, s = v.f, v.s
    if kind == "label":  # model, benchmark, finish_reason: a string
        empty = _case((f"trim({s}, {_WS}) = ''", code(EMPTY, "must be a non-empty string")))
        return _compile(v, k, {"null": miss, "str": (s, empty if required else None)},
                        "must be a string, not {}")
    if kind == "qid":  # a string, or an integer (integral floats too) written as text
        return _compile(v, k, {
            "null": miss, "str": (s, _case((f"{s} = ''", code(EMPTY, "must be a non-empty "
                                                             "string")))),
            "int": (v.text, None),
            "float": (f"CASE WHEN isfinite({f}) AND {f} = floor({f}) THEN "
                      f"TRY_CAST({f} AS HUGEINT)::VARCHAR END",
                      _case((f"NOT isfinite({f}) OR {f} <> floor({f})",
                             code(WRONG_TYPE, "must be a string or an integer"))))},
            "must be a string or an integer, not {}")
    if kind == "int":  # within int64 (never wrapped or rounded) and >= min_value
        lo, big = code(OUT_OF_RANGE, f"must be >= {min_value}"), code(OUT_OF_RANGE, TOO_LARGE)
        # text: digits, and a whole decimal such as "2.0" (pandas writes an integer column
        # with missing values so in CSV); its ".0" is dropped, never rounded
        t = f"regexp_replace(trim({s}, {_WS}), '\\.0*$', '')"
        ok = f"regexp_full_match({s}, '\\s*[+-]?[0-9]+(\\.0*)?\\s*')"
        si = f"TRY_CAST({t} AS BIGINT)"
        whole = f"isfinite({f}) AND {f} = floor({f})"
        return _compile(v, k, {
            "null": miss,
            "int": (v.i, _case((f"{v.i} IS NULL", f"CASE WHEN {v.neg} THEN {lo} ELSE {big} END"),
                               (f"{v.i} < {min_value}", lo))),
            "float": (f"CASE WHEN {whole} AND abs({f}) < 9.2e18 THEN {f}::BIGINT END",
                      _case((f"NOT ({whole})", code(NOT_INTEGER, "must be an integer")),
                            (f"{f} >= 9223372036854775808.0", big), (f"{f} < {min_value}", lo))),
            "str": (f"CASE WHEN {ok} THEN {si} END",
                    _case((f"NOT {ok}", code(NOT_INTEGER, "must be an integer")),
                          (f"{si} IS NULL", f"CASE WHEN starts_with({t}, '-') THEN {lo} ELSE "
                                            f"{big} END"), (f"{si} < {min_value}", lo))),
            "bool": ("NULL", code(WRONG_TYPE, "must be an integer, not bool"))},
            "must be an integer, not {}")
    if kind == "bool":  # true/false, 0/1 (also as floats), their strings in any case
        bad = code(INVALID_BOOL, "must be boolean-like (true/false, 0/1)")
        t = f"lower(trim({s}, {_WS}))"
        num = ((f"({v.text} = '1')", _case((f"{v.text} NOT IN ('0', '1', '-0')", bad)))
               if v.json else (f"({v.x} = 1)", _case((f"{v.x} NOT IN (0, 1)", bad))))
        return _compile(v, k, {
            "null": miss, "bool": (v.b, None), "int": num,
            "float": (f"({f} = 1)", _case((f"{f} NOT IN (0, 1)", bad))),
            "str": (f"({t} IN ('true', '1'))", _case((f"{t} NOT IN ('true', '1', 'false', '0')",
                                                      bad)))},
            "must be boolean-like, not {}")
    if kind == "float":  # optional, finite and >= 0
        bad, sf = code(INVALID_NUMBER, "must be a finite number >= 0"), f"TRY_CAST({s} AS DOUBLE)"
        return _compile(v, k, {
            "int": (f, _case((f"{f} < 0", bad))),
            "float": (f"CASE WHEN isfinite({f}) AND {f} >= 0 THEN {f} END",
                      _case((f"NOT isfinite({f}) OR {f} < 0", bad))),
            "str": (f"CASE WHEN isfinite({sf}) AND {sf} >= 0 THEN {sf} END",
                    _case((f"{sf} IS NULL", code(INVALID_NUMBER, "must be a number")),
                          (f"NOT isfinite({sf}) OR {sf} < 0", bad))),
            "bool": ("NULL", code(WRONG_TYPE, "must be a number, not bool"))},
            "must be a number, not {}")
    # answer: text trimmed ("" and "NA" mean none), numbers as text (integral without ".0")
    return _compile(v, k, {
        "str": (f"nullif(nullif(trim({s}, {_WS}), ''), 'NA')", None), "int": (v.text, None),
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
_OUT = {"question_id": "VARCHAR", "answer": "VARCHAR", "model": "VARCHAR",
        "benchmark": "VARCHAR", "finish_reason": "VARCHAR", "correct": "BOOLEAN",
        "n_tokens": "DOUBLE", "token_entropy": "DOUBLE"}


def checked_sql(src: str, fields, types: dict, kind: str, optional=()) -> str:
    """The rule set over a raw relation: per field its clean value, ``p_<field>`` (a problem
    code, NULL when fine) and ``r_<field>``; ``bad`` when the row has any problem. A row with a
    record-level problem (``p_rec``) gets no field problems.
    """
    cats, vals = [], []
    rec = "p_rec" in types
    for f in fields:
        v = _Val(f"r_{f}", types.get(f"r_{f}", '"NULL"'))
        cats += [f"{v.category()} AS k_{f}"] if v.json and not v.is_hint else []
        name, kw = RULES[f]
        val, prob = rule(name, v, f"k_{f}", **{**kw, **({"required": False} if f in optional
                                                         else {})})
        prob = _case(("p_rec IS NULL", prob)) if rec and prob != "NULL" else prob
        vals.append(f"CAST({val} AS {_OUT.get(f, 'BIGINT')}) AS {f}, "
                    f"CAST({prob} AS INTEGER) AS p_{f}")
    sql = f"SELECT *, {', '.join(vals)} FROM (SELECT *{''.join(', ' + c for c in cats)} " \
          f"FROM {src})"
    if kind == "counts":  # c <= n, first_correct < n and -1 exactly when c == 0
        ok = ("p_rec IS NULL AND " if rec else "") + "p_n IS NULL AND p_c IS NULL"
        sql = (f"SELECT * REPLACE (coalesce(p_c, CASE WHEN {ok} AND c > n THEN "
               f"{code(C_GT_N, 'must be <= n')} END) AS p_c, coalesce(p_first_correct, CASE WHEN "
               f"{ok} AND first_correct IS NOT NULL AND (first_correct >= n OR "
               f"((first_correct = -1) <> (c = 0))) THEN "
               f"{code(INCONSISTENT, 'must be < n, and -1 exactly when c == 0')} END) AS "
               f"p_first_correct) FROM ({sql})")
    bad = [f"p_{f} IS NOT NULL" for f in fields if f not in KEYLIKE] + (
        ["p_rec IS NOT NULL"] if rec else [])  # badr: of a row, not of its question or answer
    keyp = [f"p_{f} IS NOT NULL" for f in fields if f in KEYLIKE]
    return f"SELECT *, ({' OR '.join(bad + keyp)}) AS bad, ({' OR '.join(bad) or 'false'}) AS " \
           f"badr FROM ({sql})"


KEYLIKE = ("model", "benchmark", "question_id", "step", "answer")  # few distinct values


def vouch(kind: str, v: _Val, col: str, *, required=True, min_value=0) -> tuple[str, str] | None:
    """(value SQL, witness SQL) of a field whose values all have one simple form (a typed
    column, or JSON values of the type DuckDB inferred): the rule of :func:`rule` holds on every
    row of a group exactly when the witness, an aggregate over the value column ``col`` (counts,
    minimum, maximum: those of the summary itself), is true, and the value is then the rule's
    clean value. So a clean file needs no problem code per row (the fast path of a summary); a
    group whose witness fails is read by the rules row by row. None where a field has no such
    form (the rules of :func:`checked_sql` decide).
    """
    x, j, cat = v.x, v.text, v.hint if v.json else v.cat
    required = required and kind != "float"  # a number may be missing (:func:`rule`)
    every = "count(*)" if required else f"count({x})"  # the values it gives
    if cat in ("null", ""):  # "": JSON in none of the lines DuckDB sampled
        return "NULL", "false" if required else "true" if cat else f"count({x}) = 0"
    if kind == "int" and cat == "int":  # a JSON number read as BIGINT is rounded: 5.5 -> 6
        whole = f" AND count_if({col} <> TRY_CAST({j} AS DOUBLE)) = 0" if v.json else ""
        return (f"TRY_CAST({j} AS BIGINT)" if v.json else v.i,
                f"count({col}) = {every} AND coalesce(min({col}) >= {min_value}, true){whole}")
    if kind == "bool" and cat == "bool":
        return (f"CASE {j} WHEN 'true' THEN true WHEN 'false' THEN false END" if v.json else x,
                f"count({col}) = {every}")
    if kind == "bool" and cat == "int":  # 0 and 1
        return ((f"CASE {j} WHEN '1' THEN true WHEN '0' THEN false END", f"count({col}) = "
                 f"{every}") if v.json else (f"({x} = 1)", f"count({x}) = {every} AND coalesce("
                                             f"min({x}) >= 0 AND max({x}) <= 1, true)"))
    if kind == "float" and cat in ("int", "float"):  # max is NaN when any value is (DuckDB)
        return (f"TRY_CAST({j} AS DOUBLE)" if v.json else f"{x}::DOUBLE",
                f"count({col}) = {every} AND coalesce(min({col}) >= 0 AND isfinite(max({col})), "
                "true)")
    if kind == "label" and not required and cat == "str":  # an optional label may be empty
        return (v.s, f"count_if(NOT starts_with({j}, '\"')) = 0") if v.json else (x, "true")
    return None


def vouched(src) -> tuple[str, str] | None:
    """(SQL of the rows of a built source with the clean values of its fields outside
    :data:`KEYLIKE`, witness of all their rules) per :func:`vouch`; None when a field has no
    such form or the reader reports record-level problems.
    """
    if "p_rec" in src.types:
        return None
    cols, witnesses = [], []
    for f in (f for f in src.fields if f not in KEYLIKE):
        name, kw = RULES[f]
        t = src.types.get(f"r_{f}", '"NULL"')
        out = vouch(name, _Val(f"r_{f}", src.hints.get(f"r_{f}", t) if t == "JSON" else t), f,
                    **{**kw, **({"required": False} if f in src.optional else {})})
        if out is None:
            return None
        cols.append(f"CAST({out[0]} AS {_OUT.get(f, 'BIGINT')}) AS {f}")
        witnesses.append(out[1])
    return (f"SELECT *, {', '.join(cols)} FROM raw{src.no}",
            " AND ".join(witnesses) or "true")


# --------------------------------------------------------------------------------------------
# Readers: one DuckDB view per file, in raw canonical fields
# --------------------------------------------------------------------------------------------
_DATABASES: dict = {}  # this process's DuckDB database, by process and settings
_SPILL: dict = {}  # and its spill folder


def connect(temp_dir=None, *, own: bool = False):
    """A DuckDB connection within ``LEASH_MEMORY_LIMIT`` (default ``2GB``), spilling beyond it
    to ``temp_dir``, else ``LEASH_TEMP_DIR``, else a new temporary folder (removed at exit),
    printing no progress bar of its own (on stdout, into a command's output, for a query of
    seconds): a cursor of this process's one in-memory database (its own temporary tables,
    views and registrations; the limit is the process's). A new database per read cost about
    20 ms of CPU, a cursor a quarter of a millisecond: a study of 1,000 small files opened
    1,000. ``own``: a database of its own instead, for a reader that changes settings DuckDB
    keeps per database (``threads``, the allocator's), which every later cursor would inherit.
    """
    import atexit
    import shutil
    import tempfile

    import duckdb

    tmp = temp_dir or os.environ.get("LEASH_TEMP_DIR")
    if not tmp:  # one per process, as the database
        if _SPILL.get("dir") is None or not os.path.isdir(_SPILL["dir"]):
            _SPILL["dir"] = tempfile.mkdtemp(prefix="leash-duckdb-")
            atexit.register(shutil.rmtree, _SPILL["dir"], True)
        tmp = _SPILL["dir"]
    config = {"memory_limit": os.environ.get("LEASH_MEMORY_LIMIT", "2GB"),
              "temp_directory": tmp}
    # by process too: a child forked after this one opened it gets its own (DuckDB's threads
    # are not forked with it)
    key = (os.getpid(), config["memory_limit"], tmp)
    if not own and key not in _DATABASES:
        _DATABASES[key] = duckdb.connect(config=config)
    con = duckdb.connect(config=config) if own else _DATABASES[key].cursor()
    con.execute("SET enable_progress_bar = false")  # a setting of each connection
    return con


def sql_str(text) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _jp(field: str, of: str = "j") -> str:
    """The JSON value at a (dotted) field path."""
    path = "$." + ".".join('"' + k.replace('"', '\\"') + '"' for k in field.split("."))
    return f"json_extract({of}, {sql_str(path)})"


def _twice(keys: str = "json_keys(j)") -> tuple[str, str]:
    """(SQL: a key of ``keys``, a list of the record's keys, is there twice; the first such)."""
    return (f"len({keys}) <> len(list_distinct({keys}))",
            f"list_filter({keys}, lambda k, i: list_position({keys}, k) < i)[1]")


def _long_line_possible(path: Path, block: int) -> bool:
    """False when no line of an uncompressed file holds ``2 * block`` bytes or more: every
    aligned block of ``block`` bytes has a newline (a line of ``2 * block`` bytes would hold a
    whole one). A block's first newline is a line's length in, so a file of short lines is
    proved so reading a few hundred bytes per block. True for a ``.gz`` file. Hand-written: no
    reader bounds the lines of a file without reading all of its bytes.
    """
    if path.name.lower().endswith(".gz"):
        return True
    head = min(block, 1024)
    with open(path, "rb", buffering=0) as fh:
        size = os.fstat(fh.fileno()).st_size
        for start in range(0, size - block + 1, block):
            fh.seek(start)
            if b"\n" not in fh.read(head) and b"\n" not in fh.read(block - head):
                return True
    return False


class Source:
    """One input on a connection: its reader (view ``raw<no>``: ``ord`` the line ordinal or
    Parquet row, ``sub`` the sample of a nested record or -1, ``nrows`` the samples a record
    problem stands for, ``p_rec, f_rec, m_rec, v_rec`` that problem, ``r_<field>`` the raw
    fields), its checked view ``chk<no>`` (:func:`checked_sql`), and where each row is.
    """

    def __init__(self, con, path: Path, no: int, fmt: str, mapping, labels: dict, *,
                 options=None, keys=None, meta=None, contents=None):
        self.con, self.path, self.no, self.fmt, self.mapping = con, path, no, fmt, mapping
        self.fname, self.labels, self.options = str(path), labels, options or {}
        self.keys, self.meta, self.contents = set(keys or ()), meta, contents
        self.kind = "counts" if fmt in ("counts", "summary") else "samples"
        self.form = ("evaluator_file" if R.plugin(fmt) else
                     "nested" if mapping
                     else "table" if contents is not None else container(path))
        self.relative = mapping is not None and mapping.index is None
        self.fields, self.notes, self.names = READ[self.kind], [], {}
        self.exact = self.utf8_error = self._fixed = self.needs_exact = False
        self._wide_checked, self._object_size = False, None
        self.optional, self.extra, self.batch = (), (), 250_000
        self._shift = self._rg = self._peek = None
        self.reader = {"jsonl": "duckdb read_json", "csv": "python csv", "parquet":
                       "duckdb read_parquet", "table": "arrow table", "nested":
                       f"duckdb json, mapping '{getattr(mapping, 'name', '')}'"}.get(
                           self.form, f"{getattr(R.plugin(fmt), 'module', '')} '{fmt}'")

    def build(self, exact: bool = False) -> None:
        """(Re)define the views; ``exact``: the exact reader (repairs, malformed lines)."""
        if self.exact and self.form == "csv":
            return  # a CSV file is read by the exact reader already
        self.exact = exact or self.form == "csv"
        self.hints = {}
        raw = getattr(self, "_" + self.form)()
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW raw{self.no} AS {raw}")
        self.types = dict(r[:2] for r in self.con.execute(f"DESCRIBE raw{self.no}").fetchall())
        sql = checked_sql(f"raw{self.no}", self.fields, {**self.types, **{
            k: v for k, v in self.hints.items() if self.types.get(k) == "JSON"}}, self.kind,
            self.optional)
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW chk{self.no} AS {sql}")

    def _label(self, name: str, file_has: bool, what: str = "column"):
        given = self.labels.get(name)
        if given is None:
            return None
        note = f"{what} '{name}' replaced by the caller's value {given!r}"
        self.notes += [note] if file_has and note not in self.notes else []
        return f"{int(given)}::BIGINT" if name == "step" else f"{sql_str(given)}::VARCHAR"

    def _cols(self, have, col) -> str:
        """``r_<field>`` (the caller's label, the file's field, or NULL) and ``x_<extra>``; a
        required field not in ``have`` is an error.
        """
        for f in ("model", "benchmark", "question_id", "sample_idx", "correct", "n", "c"):
            if f in self.fields and f not in have and f not in self.optional and \
                    self.labels.get(f) is None:
                what = f"{self.fname}: required field '{f}' is missing from the file"
                if f in ("model", "benchmark"):
                    raise LeashValueError(what, " and was not supplied:", param=f,
                                          file=self.fname, key=f,
                                          hint=("pass ", Param(f, value=...), " to name it."))
                tail = (f": grade its responses first (`leash rescore {self.fname} --out "
                        "rescored.parquet`), then read rescored.parquet"
                        if f == "correct" and "response" in have else "")
                raise LeashValueError(f"{what}{tail}.", file=self.fname, key=f)
        out = [f"{self._label(f, f in have) or (col(f) if f in have else 'NULL')} AS r_{f}"
               for f in self.fields]
        extra = SUMMARY_EXTRA if self.fmt == "summary" else self.extra
        return ", ".join(out + [f"{col(c) if c in have else 'NULL'} AS x_{c}" for c in extra])

    def _parquet(self) -> str:
        if self.exact:  # text that is not UTF-8: read by pyarrow, such text becomes a marker
            self._parquet_rows()
            return f"SELECT ord, -1 AS sub, 1 AS nrows, {self._cols(self.keys, _as_json)} " \
                   f"FROM fix{self.no}"
        return (f"SELECT file_row_number AS ord, -1 AS sub, 1 AS nrows, "
                f"{self._cols(self.keys, _quoted)} FROM read_parquet({sql_str(self.path)}, "
                "file_row_number=true)")

    def _table(self) -> str:
        self.con.register(f"contents{self.no}", self.contents)
        return (f"SELECT row_number() OVER () - 1 AS ord, -1 AS sub, 1 AS nrows, "
                f"{self._cols(self.keys, _quoted)} FROM contents{self.no}")

    def _csv(self) -> str:
        self._csv_rows()  # every record with the line it starts on (Python's csv module)
        return (f"SELECT ord, -1 AS sub, 1 AS nrows, p_rec, '-' AS f_rec, m_rec, v_rec, "
                f"{self._cols(self.keys, _as_json)} FROM fix{self.no}")

    def _objects(self) -> str:
        """Every non-blank line as ``ord, j`` (NULL where DuckDB cannot parse it unless the
        exact pass repaired it) and the exact pass's message of a malformed line.
        """
        src = (f"SELECT ordinality AS ord, json FROM read_ndjson_objects({sql_str(self.path)}, "
               f"ignore_errors=true, maximum_object_size={self.object_size()}) WITH ORDINALITY")
        if not self.exact:
            return f"SELECT ord, json AS j, NULL AS m_rec, NULL AS v_rec FROM ({src})"
        self._lines(src)
        return (f"SELECT o.ord, CASE WHEN x.ord IS NULL THEN o.json ELSE x.json::JSON END AS j, "
                f"x.msg AS m_rec, x.val AS v_rec FROM ({src}) o LEFT JOIN fix{self.no} x "
                "USING (ord)")

    def _record(self, keys: str = "json_keys(j)") -> str:
        return _case(("j IS NULL", MALFORMED_CODE), ("json_type(j) <> 'OBJECT'", code(
            WRONG_TYPE, "record must be a JSON object")), (_twice(keys)[0], code(
                DUPLICATE_KEY, "appears twice in the record (which value is meant is ambiguous)")))

    def object_size(self) -> int:
        """DuckDB's ``maximum_object_size`` for this file: :data:`_OBJECT` when no line is as
        long (DuckDB's buffers are then a quarter the size), else :data:`_MAX_OBJECT`.
        """
        if self._object_size is None:
            small = min(_OBJECT, _MAX_OBJECT)
            self._object_size = (_MAX_OBJECT if _long_line_possible(self.path, small // 2)
                                 else small)
        return self._object_size

    def _refuse_wide(self) -> None:
        """Refuse a record of more than :data:`_MAX_KEYS` keys, naming its line (DuckDB's
        schema inference over a first record of 10^6 keys runs for minutes). A record of n keys
        takes at least 5n + 1 bytes (``{"":0,...}``): only lines that long are read for their
        keys, and only when :func:`_long_line_possible` cannot rule them out.
        """
        if self._wide_checked:
            return
        least = 5 * _MAX_KEYS + 6  # bytes of a record of _MAX_KEYS + 1 keys
        if _long_line_possible(self.path, least // 2):
            wide = self.con.execute(
                f"SELECT min(ordinality) FROM read_ndjson_objects({sql_str(self.path)}, "
                f"ignore_errors=true, maximum_object_size={self.object_size()}) WITH "
                "ORDINALITY WHERE "
                f"strlen(json) >= {least} AND len(json_keys(json)) > {_MAX_KEYS}").fetchone()[0]
            if wide is not None:
                line = self.line(wide)
                raise InputFileError(
                    f"{self.path}, line {line}: a record of more than {_MAX_KEYS:,} keys; a "
                    "record holds one sample or question (its fields), not a table.",
                    file=self.path, line=line)
        self._wide_checked = True

    def _jsonl(self) -> str:
        have = (*self.fields, *self.extra)
        self._refuse_wide()
        if not self.exact:
            # the fast reader: each read field as JSON, one parse per line. DuckDB stops at a
            # line it cannot read so (malformed, not an object, a read field twice: DuckDB
            # would take the first, Python's json the last); guarded() then sends the file to
            # the exact reader, which names the line. A key the reader does not read may be
            # there twice: no value of it is chosen.
            cols = ", ".join(f"{sql_str(f)}: 'JSON'" for f in have)
            sql = (f"SELECT ordinality AS ord, -1 AS sub, 1 AS nrows, "
                   f"{self._cols(have, _quoted)} FROM read_json({sql_str(self.path)}, format="
                   f"'newline_delimited', columns={{{cols}}}, ignore_errors=false, "
                   f"maximum_object_size={self.object_size()}) WITH ORDINALITY")
            inferred = {"BOOLEAN": "bool", "BIGINT": "int", "UBIGINT": "int", "DOUBLE": "float",
                        "VARCHAR": "str"}
            self.hints = {f"r_{n}": "JSON:" + inferred[t] for n, t, *_ in self.con.execute(
                f"DESCRIBE SELECT * FROM read_json({sql_str(self.path)}, format="
                f"'newline_delimited', ignore_errors=true, maximum_object_size="
                f"{self.object_size()})"
            ).fetchall() if t in inferred and n in have}
            return sql
        base = self._objects()
        present = self.con.execute("SELECT " + ", ".join(f"count({_jp(f)})" for f in have) +
                                   f" FROM ({base})").fetchall()[0]
        read = f"list_filter(json_keys(j), lambda k: k IN ({', '.join(map(sql_str, have))}))"
        have = {f for f, n in zip(have, present) if n} | (self.keys & set(have))
        return (f"SELECT ord, -1 AS sub, 1 AS nrows, {self._record(read)} AS p_rec, CASE WHEN "
                f"json_type(j) = 'OBJECT' AND {_twice(read)[0]} THEN {_twice(read)[1]} ELSE '-' "
                f"END AS f_rec, m_rec, coalesce(v_rec, j::VARCHAR) AS v_rec, "
                f"{self._cols(have, _jp)} FROM ({base})")

    def _nested(self) -> str:
        m, base, top = self.mapping, self._objects(), self.peek()[0]
        consts = dict(m.constants)
        q = {"question_id": _jp(m.question_id) if m.question_id else "(ord - 1)"}
        for name in ("model", "benchmark", "step"):
            fld = getattr(m, name)
            lab = self._label(name, False)
            note = f"field '{fld}' replaced by the caller's value {self.labels[name]!r}" \
                if lab and fld and fld.split(".")[0] in top else None
            self.notes += [note] if note and note not in self.notes else []
            q[name] = lab or (sql_str(consts[name]) + ("::BIGINT" if name == "step" else
                              "::VARCHAR") if name in consts else _jp(fld) if fld else None)
            if q[name] is None and name != "step":
                raise LeashValueError(
                    f"{self.fname}: the '{m.name}' layout does not name the {name}:",
                    param=name, file=self.fname, key=name,
                    hint=("pass ", Param(name, value=...), " ."))
        q["step"] = q["step"] or "NULL::BIGINT"
        qtypes = {f"r_{k}": ("JSON" if v.startswith("json_") else "BIGINT" if k in
                             ("step", "question_id") else "VARCHAR") for k, v in q.items()}
        qnames = {"question_id": m.question_id or "(record number)", "model": m.model,
                  "benchmark": m.benchmark, "step": m.step}
        per = {k: v for k, v in m.per_sample_fields().items() if k != "correct"}
        lst, what = m.samples or m.correct, "must be a list" + (" of sample objects"
                                                                if m.samples else "")
        pyt = ("CASE json_type({}) WHEN 'VARCHAR' THEN 'str' WHEN 'BIGINT' THEN 'int' WHEN "
               "'UBIGINT' THEN 'int' WHEN 'DOUBLE' THEN 'float' WHEN 'BOOLEAN' THEN 'bool' WHEN "
               "'OBJECT' THEN 'dict' ELSE 'NoneType' END")
        # record-level problems, in order: (condition, code, field, message, value, samples)
        checks = [("L IS NULL OR json_type(L) = 'NULL'", code(MISSING, what),
                   sql_str(lst), "NULL", "'null'", "1"),
                  ("json_type(L) <> 'ARRAY'", code(WRONG_TYPE, what), sql_str(lst), "NULL",
                   "L::VARCHAR", "1")]
        if m.samples:
            pos = "list_position([json_type(y) = 'OBJECT' FOR y IN elist], false)"
            checks.append((f"{pos} IS NOT NULL", code(WRONG_TYPE, "sample must be a JSON object"),
                           f"{sql_str(m.samples)} || '[' || ({pos} - 1) || ']'", "NULL",
                           f"elist[{pos}]::VARCHAR", "n_s"))
        for fld in per.values() if not m.samples else ():
            x = _jp(fld)
            checks.append((f"{x} IS NOT NULL AND (json_type({x}) <> 'ARRAY' OR "
                           f"json_array_length({x}) <> n_s)", code(RAGGED, "ragged"),
                           sql_str(fld), f"'per-sample list must have the same length as "
                           f"''{m.correct}'' (' || n_s || '); leash never pads'",
                           f"to_json(CASE WHEN json_type({x}) = 'ARRAY' THEN 'length ' || "
                           f"json_array_length({x}) ELSE {pyt.format(x)} END)", "n_s"))
        checks += [(f"p_{k} IS NOT NULL", f"p_{k}", sql_str(qnames[k]), "NULL",
                    f"to_json(r_{k})::VARCHAR", "n_s") for k in q]
        rec = [_case(("p0 IS NOT NULL", a), *[(c[0], c[i]) for c in checks]) for a, i in (
            ("p0", 1), ("'-'", 2), ("m_rec", 3), ("v_rec", 4), ("1", 5))]
        qsel = ", ".join(f"{v} AS r_{k}" for k, v in q.items())
        qchk = checked_sql("qraw", tuple(q), qtypes, "q")
        head = (f"WITH b AS (SELECT *, {self._record()} AS p0, {_jp(lst)} AS L FROM ({base})), "
                f"qraw AS (SELECT *, {qsel} FROM b), r AS (SELECT *, json_extract(L, '$[*]') AS "
                "elist, CASE WHEN json_type(L) = 'ARRAY' THEN json_array_length(L)::BIGINT END "
                f"AS n_s FROM ({qchk})), r2 AS (SELECT *, {rec[0]} AS pr, {rec[1]} AS fr, "
                f"{rec[2]} AS mr, {rec[3]} AS vr, {rec[4]} AS nr FROM r)")
        fields = {"correct": m.correct, **per}
        if m.samples:
            elems, samp = "unnest(elist) AS el", {k: _jp(f, "el") for k, f in fields.items()}
        else:
            elems = ", ".join(f"unnest(json_extract({_jp(f)}, '$[*]')) AS s_{k}"
                              for k, f in fields.items())
            samp = {k: f"s_{k}" for k in fields}
        self.names = {k: (f"{m.samples}[{{}}].{f}" if m.samples else f"{f}[{{}}]")
                      for k, f in {**fields, "sample_idx": m.index or "index"}.items()}
        rf = {"model": "r_model", "benchmark": "r_benchmark", "question_id": "r_question_id",
              "step": "r_step", "sample_idx": "sub" if m.index is None else samp["index"],
              **{k: samp.get(k, "NULL") for k in ("correct", "answer", "n_tokens",
                                                  "token_entropy", "finish_reason")},
              "x_response": samp.get("response", "NULL"),
              "x_gold": _jp(m.gold) if m.gold else "NULL"}
        cols = ", ".join(f"{v} AS {k if k.startswith('x_') else 'r_' + k}" for k, v in rf.items())
        nul = ", ".join(f"NULL AS {k if k.startswith('x_') else 'r_' + k}" for k in rf)
        return (f"{head} SELECT ord, -1 AS sub, nr AS nrows, pr AS p_rec, fr AS f_rec, mr AS "
                f"m_rec, vr AS v_rec, {nul} FROM r2 WHERE pr IS NOT NULL UNION ALL BY NAME "
                f"SELECT ord, sub, 1 AS nrows, {cols} FROM (SELECT *, unnest(range(n_s)) AS "
                f"sub, {elems} FROM r2 WHERE pr IS NULL)")

    def _evaluator_file(self) -> str:
        R.relation(self.con, self.path, self.fmt, options=self.options).create_view(
            f"ev{self.no}", replace=True)
        self.keys = set(E.RELATION_COLUMNS)
        graded, *named, gold = self.con.execute(
            f"SELECT count(correct), count(model), count(benchmark), count(gold) FROM "
            f"ev{self.no}").fetchall()[0]
        if not graded and "correct" not in self.optional:
            # what rescore needs: the caller's labels, placeholders where the file has none
            labels = "".join(f" --{k} {self.labels[k]}" if self.labels.get(k) is not None else
                             "" if n else f" --{k} {k.upper()}"
                             for k, n in zip(("model", "benchmark"), named))
            labels += "" if gold else " --gold GOLD"
            raise ValueError(f"{self.fname}: the {self.fmt} format logs no per-sample "
                             f"correctness; run `leash rescore {self.fname}{labels} --out "
                             "rescored.parquet` first and summarize rescored.parquet.")
        # labels the file gives for none of its samples: one line naming the options, not a
        # problem per row
        if unnamed := [k for k, n in zip(("model", "benchmark"), named) if not n and
                       self.labels.get(k) is None and k not in self.optional]:
            raise LeashValueError(
                f"{self.fname}: the {self.fmt} file does not name the "
                f"{' or the '.join(unnamed)} of its samples:", param=unnamed[0], file=self.fname,
                key=unnamed[0], hint=(
                    "pass ", *[x for k in unnamed for x in (Param(k, value=...), " and ")][:-1],
                    " to name them." if len(unnamed) > 1 else " to name it."))
        return (f"SELECT line AS ord, -1 AS sub, 1 AS nrows, {self._cols(self.keys, _quoted)}, "
                f"response AS x_response, gold AS x_gold FROM ev{self.no}")

    def peek(self, n: int = 1000):
        """(top-level keys, keys of the samples) of the first ``n`` records (notes, labels)."""
        if self._peek is None:
            lst = _jp(self.mapping.samples, "json") if self.mapping and self.mapping.samples \
                else "NULL"
            rows = self.con.execute(
                f"SELECT json_keys(json), {lst} FROM read_ndjson_objects({sql_str(self.path)}, "
                f"ignore_errors=true, maximum_object_size={self.object_size()}) WHERE "
                "json_type(json) "
                f"= 'OBJECT' LIMIT {n}").fetchall()
            sub = {k for _, s in rows for e in json.loads(s or "null") or ()
                   if isinstance(e, dict) for k in e}
            self._peek = ({k for keys, _ in rows for k in keys or ()} | self.keys, sub)
        return self._peek

    # ---- the exact readers (a file that failed; CSV) ---------------------------------------
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

    def _lines(self, src=None) -> None:
        """One pass over the lines of a JSONL file: where blank lines shift the line numbers
        (:meth:`where`), and (``src``: the DuckDB reader) each line DuckDB could not parse,
        repaired (text that is not UTF-8 becomes a marker) or named malformed.
        """
        import pyarrow as pa

        if src is not None and self._fixed:
            return
        nulls = {r[0] for r in self.con.execute(f"SELECT ord FROM ({src}) WHERE json IS NULL")
                 .fetchall()} if src else set()
        starts, shifts, tail = [1], [0], "; its samples cannot be counted" * bool(self.mapping)

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
                            yield (o, None, f"malformed JSON ({exc}){tail}",
                                   json.dumps(line[:60].decode("utf-8", "replace")))

        try:
            if src:
                self._fill(rows(), pa.schema([("ord", pa.int64()), ("json", pa.string()),
                                              ("msg", pa.string()), ("val", pa.string())]))
                self._fixed = True
            else:
                for _ in rows():
                    pass
        except (EOFError, zlib.error, OSError) as exc:
            raise unreadable(self.path, exc) from None
        self._shift = (starts, shifts)

    def _csv_rows(self) -> None:
        """Every CSV record with the line it starts on; a record whose field count is not the
        header's is a malformed row (values may hold newlines: Python's csv module).
        """
        import csv
        import sys

        import pyarrow as pa

        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        opener = gzip.open if self.path.name.lower().endswith(".gz") else open
        bad = int(code(MALFORMED_CSV, "malformed"))
        with opener(self.path, "rt", newline="", encoding="utf-8-sig",  # a BOM is no text
                    errors="surrogateescape") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            while header == []:
                header = next(reader, None)
            if header is None:
                raise no_rows_error(self.path, "csv")
            self.keys = set(header)
            pos = [(f, header.index(f)) for f in (*self.fields, *self.extra) if f in header]

            def rows():
                prev = reader.line_num
                for rec in reader:
                    start, prev = prev + 1, reader.line_num
                    if rec and len(rec) != len(header):
                        yield (start, bad, f"{len(rec)} fields where the header has "
                               f"{len(header)}", json.dumps(",".join(rec)), *[None] * len(pos))
                    elif rec:
                        yield start, None, None, None, *[
                            json.dumps(_mark(rec[i])) if rec[i] != "" else None for _, i in pos]

            try:
                self._fill(rows(), pa.schema([("ord", pa.int64()), ("p_rec", pa.int32()),
                                              ("m_rec", pa.string()), ("v_rec", pa.string())]
                                             + [(f, pa.string()) for f, _ in pos]))
            except csv.Error as exc:
                raise InputFileError(f"{self.path}: cannot read the file ({exc}).",
                                     file=self.path) from None
            except (EOFError, zlib.error, OSError) as exc:  # a truncated or corrupt .csv.gz
                raise unreadable(self.path, exc) from None

    def _parquet_rows(self) -> None:
        """The read columns through pyarrow, as JSON text; text that is not UTF-8: a marker."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = [f for f in self.fields if f in self.keys]
        pf = pq.ParquetFile(self.path)
        text = {f for f in cols if pa.types.is_string(pf.schema_arrow.field(f).type)
                or pa.types.is_large_string(pf.schema_arrow.field(f).type)}

        def rows():
            start = 0
            for b in pf.iter_batches(columns=cols):
                vals = [(b.column(f).view(pa.binary()) if f in text else b.column(f)).to_pylist()
                        for f in cols]
                for i, row in enumerate(zip(*vals)):
                    yield start + i, *[None if v is None else json.dumps(_mark(
                        v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else v),
                        default=str) for v in row]
                start += b.num_rows

        self._fill(rows(), pa.schema([("ord", pa.int64())] + [(f, pa.string()) for f in cols]))

    # ---- locations and values of problems --------------------------------------------------
    def where(self, ord_: int, sub: int = -1) -> str:
        """``"line 12"``, ``"line 3, sample 1"`` or ``"row group 0, row 5"`` of a row."""
        if self.form in ("parquet", "table"):
            if self._rg is None:
                self._rg = [0]
                for (n,) in self.con.execute(
                        "SELECT row_group_num_rows FROM (SELECT DISTINCT row_group_id, "
                        f"row_group_num_rows FROM parquet_metadata({sql_str(self.path)})) "
                        "ORDER BY row_group_id").fetchall():
                    self._rg.append(self._rg[-1] + n)
            g = bisect.bisect_right(self._rg, ord_) - 1
            return f"row group {g}, row {ord_ - self._rg[g]}"
        if self.form == "evaluator_file":
            return (f"record {ord_}" if R.plugin(self.fmt).unit == "record" else
                    f"{'line' if container(self.path) == 'jsonl' else 'row'} {ord_}")
        if self.form == "jsonl" or self.form == "nested":
            ord_ = self.line(ord_)
        return f"line {ord_}" + (f", sample {sub}" if sub >= 0 else "")

    def line(self, ord_: int) -> int:
        """The line of the ``ord_``-th record of a JSON lines file (blank lines are none)."""
        if self._shift is None:
            self._lines()
        starts, shifts = self._shift
        return ord_ + shifts[bisect.bisect_right(starts, ord_) - 1]

    def show(self, raw: str) -> str:
        """The value of a problem (JSON text) as the file holds it (``repr``, shortened)."""
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):  # deeper than Python's parser goes: as text
            return short_repr(raw)
        if isinstance(raw, dict) and _BAD in raw:
            return short_repr(bytes.fromhex(raw[_BAD]))
        return short_repr(raw)


_quoted, _as_json = '"{}"'.format, '"{}"::JSON'.format


def _insert(con, name: str, table, first: bool) -> None:
    """Append an Arrow table to a temp table (created by the first batch)."""
    con.register("batch_in", table)
    con.execute(f"CREATE TEMP TABLE {name} AS SELECT * FROM batch_in" if first else
                f"INSERT INTO {name} SELECT * FROM batch_in")
    con.unregister("batch_in")


def _mark(v):
    """A parsed value whose text that is not UTF-8 is a marker object (the rules call it
    ``invalid_utf8``; the bytes are shown); such keys are decoded with replacement marks.
    """
    if isinstance(v, str):
        if _is_utf8(v):
            return v
        try:
            return {_BAD: v.encode("utf-8", "surrogateescape").hex()}
        except UnicodeEncodeError:  # a lone surrogate written as a JSON escape
            return {_BAD: v.encode("utf-8", "surrogatepass").hex()}
    if isinstance(v, list):
        return [_mark(x) for x in v]
    if isinstance(v, dict):
        return {(k if _is_utf8(k) else k.encode("utf-8", "surrogateescape").decode(
            "utf-8", "replace")): _mark(x) for k, x in v.items()}
    return v


def open_source(con, p, no: int, *, fmt, mapping, labels, options=None, contents=None,
                checked=True) -> Source:
    """Detect the format of input ``p`` and make its :class:`Source` (views not built)."""
    path = Path(p)
    if contents is not None:  # a summary already read (leash_eval.summarize.read_summary)
        f, m, keys = "summary", None, contents.column_names
        meta = (contents.schema.metadata or {}).get(SUMMARY_METADATA_KEY)
    else:
        f, m, keys, meta = detect(path, fmt, mapping, checked=checked)
    src = Source(con, path, no, f, m, labels, options=options, keys=keys, meta=meta,
                 contents=contents)
    src.fname = str(p)
    return src


def guarded(src: Source, run):
    """``run()``; an error of DuckDB reading the file is the file's (one line naming it), but
    Parquet text that is not UTF-8 sets ``src.utf8_error`` (the caller then reads the file with
    the exact reader). An error of the SQL itself (a bug) is never the file's.
    """
    import duckdb

    try:
        return run()
    except (duckdb.IOException, duckdb.InvalidInputException) as exc:
        if src.form == "parquet" and not src.exact and "UTF8" in str(exc).replace("-", ""):
            src.utf8_error = True
            return None
        if src.form == "jsonl" and not src.exact and isinstance(exc, duckdb.InvalidInputException):
            src.needs_exact = True  # a line the fast reader stops at: the exact one names it
            return None
        if src.form == "evaluator_file":  # the reader's own one-line message, line and field
            raise InputFileError(str(E.translate_error(exc, src.path)), file=src.path) from None
        raise unreadable(src.path, exc) from None


def rule_problems(src: Source, limit=None):
    """(problems in file order, at most ``limit``; problems per reason) of a built source."""
    parts = [f"SELECT ord, sub, -1 AS j, f_rec AS f, p_rec AS p, m_rec AS m, v_rec AS r FROM "
             f"chk{src.no} WHERE p_rec IS NOT NULL"] if "p_rec" in src.types else []
    for j, f in enumerate(src.fields):
        raw = f"r_{f}" if src.types.get(f"r_{f}") == "JSON" else f"to_json(r_{f})"
        parts.append(f"SELECT ord, sub, {j}, '{f}', p_{f}, NULL, {raw}::VARCHAR FROM "
                     f"chk{src.no} WHERE p_{f} IS NOT NULL")
    union = f"SELECT * FROM ({' UNION ALL '.join(parts)}) t(ord, sub, j, f, p, m, r)"
    by_reason: dict[str, int] = {}  # in the order of the codes: the same on every run
    for p, n in src.con.execute(f"SELECT p, count(*) FROM ({union}) GROUP BY p ORDER BY p"
                                ).fetchall():
        by_reason[CODES[p][0]] = by_reason.get(CODES[p][0], 0) + n
    out = []
    for ord_, sub, j, f, p, m, r in src.con.execute(
            f"SELECT * FROM ({union}) ORDER BY ord, sub, j" + (
                f" LIMIT {int(limit)}" if limit is not None else "")).fetchall():
        reason, message = CODES[p]
        field = ("-" if reason == MALFORMED else f if j < 0 else
                 src.names.get(f, f).format(sub) if sub >= 0 else f)
        value = (short_repr(str(r)[:60]) if reason == MALFORMED and j >= 0 else
                 src.show(r) if r is not None else "None")
        out.append(Problem(src.fname, src.where(ord_, sub if j >= 0 else -1), field, value,
                           reason, m or message, (ord_, sub, j)))
    return out, by_reason


def response_batches(path, *, fmt=None, mapping=None, model=None, benchmark=None, step=None,
                     batch_size=10_000, reader_options=None, require_response=True):
    """Per-sample rows *with response texts* of one file, in batches of at most ``batch_size``.

    Parameters
    ----------
    path : str or os.PathLike
        A samples file with a ``response`` column, a nested/evaluator file or an evaluator's.
    fmt, mapping, model, benchmark, step, reader_options
        As in :func:`leash_eval.summarize.summarize`.
    batch_size : int
        Rows per batch: memory is bounded by it, not by the file.
    require_response : bool, default True
        Refuse a samples file without a ``response`` column (rescoring needs the texts);
        False reads it with ``response`` null (the sample order and verdicts are what a
        caller wants then).

    Yields
    ------
    pyarrow.RecordBatch
        ``model, benchmark, question_id, step, sample_idx, response, correct, gold`` (nulls
        where the file has none), and ``n_tokens, token_entropy, finish_reason`` when it has
        any, in file order, through the rules (a ValueError naming file, line and field).
    """
    con = connect(own=True)  # settings of its own database, not every later reader's
    # One thread reads far faster than the responses are graded (more only hold more buffers),
    # and the memory DuckDB frees goes back at once instead of up to 512 MiB kept for reuse.
    con.execute("SET threads = 1; SET allocator_bulk_deallocation_flush_threshold = '4MB'; "
                "SET allocator_flush_threshold = '4MB'")
    src = open_source(con, path, 0, fmt=fmt, mapping=mapping, checked=False,
                      labels={"model": model, "benchmark": benchmark, "step": step},
                      options=reader_options)
    if src.kind == "counts":
        raise LeashValueError(f"{path}: format {src.fmt!r} holds no response texts; rescoring "
                              "needs a samples file with a 'response' column or a "
                              "nested/evaluator file.", file=path)
    if require_response and src.form in ("jsonl", "parquet", "csv") and src.keys \
            and "response" not in src.keys:
        raise LeashValueError(f"{path}: a samples file needs a 'response' column to be "
                              f"rescored; it has {sorted(src.keys)}.", file=path, key="response")
    carried = ("n_tokens", "token_entropy", "finish_reason")  # kept when the file has any
    src.fields = ("model", "benchmark", "question_id", "step", "sample_idx", "correct", *carried)
    src.optional, src.extra = ("model", "benchmark", "correct"), ("response", "gold")
    scan = f"SELECT bool_or(bad), {', '.join(f'count({c})' for c in carried)} FROM chk0"
    found = guarded(src, lambda: src.build() or src.con.execute(scan).fetchall()[0])
    if found is None or found[0] is not False:
        src.build(exact=True)
        problems, _ = rule_problems(src, limit=1)
        if problems:
            raise problems[0].as_error()
        found = src.con.execute(scan).fetchall()[0]
    text = {x: f"(x_{x}->>'$')" if src.types.get(f"x_{x}") == "JSON" else f"x_{x}::VARCHAR"
            for x in ("response", "gold")}
    # The readers of samples files and nested layouts keep the file's order on one thread: a
    # scan through projections, filters, UNION ALL and unnest, no join or aggregate (the exact
    # JSON reader joins its repairs; the evaluators' readers group). Their rows are streamed
    # as read, in memory bounded by the batch, and checked in order; the others are sorted
    # (DuckDB spills beyond its memory limit).
    ordered = src.form == "csv" or (src.form in ("parquet", "jsonl", "nested") and not src.exact)
    rel = src.con.sql(f"SELECT ord, sub, model, benchmark, question_id, step, sample_idx, "
                      f"{text['response']} AS response, correct, {text['gold']} AS gold"
                      + "".join(f", {c}" for c, n in zip(carried, found[1:]) if n)
                      + " FROM chk0" + ("" if ordered else " ORDER BY ord, sub"))
    import numpy as np

    last = (-1, -2)
    for batch in (getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader)(batch_size):
        if ordered and batch.num_rows:  # (ord, sub) increasing: a bug otherwise, never data
            o = np.concatenate([[last[0]], batch.column("ord").to_numpy()])
            s = np.concatenate([[last[1]], batch.column("sub").to_numpy()])
            if not ((o[1:] > o[:-1]) | ((o[1:] == o[:-1]) & (s[1:] > s[:-1]))).all():
                raise RuntimeError(f"{path}: DuckDB returned rows out of the file's order.")
            last = (o[-1], s[-1])
        yield batch.drop_columns(["ord", "sub"])
