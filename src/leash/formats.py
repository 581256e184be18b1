"""Input formats for model generations: detection, field mappings and chunked readers.

Formats (full description with examples in ``data/README.md``):

``"samples"``
    Canonical: one row per sampled response with ``model, benchmark, question_id, sample_idx,
    correct`` and optionally ``answer, n_tokens, token_entropy, finish_reason, response, step``.
    Stored as ``.jsonl``, ``.jsonl.gz``, ``.parquet`` or ``.csv``.
``"counts"``
    Canonical: one row per question with ``model, benchmark, question_id, n, c`` and optionally
    ``first_correct, step``. Same containers.
``"summary"``
    A per-question summary Parquet file written by :func:`leash.summarize.summarize`.
``"nested"``
    One JSON object per question holding its samples, read through a :class:`NestedMapping`.
    Two layouts: ``"records"`` (a list of per-sample objects, e.g. the GSM8K probe's
    ``rollouts[]``) and ``"columns"`` (parallel per-sample lists, e.g. ``score[]``, ``pred[]``).
``"evaluator"``
    The Qwen2.5-Math / limit-of-RLVR evaluator output (``idx, gt, code[], pred[], score[]``,
    optional ``finish_reason[]``), one file per seed; an alias of ``"nested"`` with the
    ``"evaluator"`` mapping. The file does not name the model or benchmark: the caller does.

Readers yield validated chunks of at most about ``chunk_size`` rows, so memory is bounded by the
chunk size and not by the file size.
"""

from __future__ import annotations

import bisect
import gzip
import json
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.json as pjson
import pyarrow.parquet as pq

from leash import validate as V

__all__ = [
    "FORMATS",
    "SAMPLES_REQUIRED",
    "SAMPLES_OPTIONAL",
    "COUNTS_REQUIRED",
    "COUNTS_OPTIONAL",
    "NestedMapping",
    "MAPPINGS",
    "get_mapping",
    "detect_format",
    "check_regular_file",
    "SUMMARY_METADATA_KEY",
]

FORMATS = ("samples", "counts", "summary", "evaluator", "nested")
SAMPLES_REQUIRED = ("model", "benchmark", "question_id", "sample_idx", "correct")
SAMPLES_OPTIONAL = ("answer", "n_tokens", "token_entropy", "finish_reason", "response", "step")
COUNTS_REQUIRED = ("model", "benchmark", "question_id", "n", "c")
COUNTS_OPTIONAL = ("first_correct", "step")
SUMMARY_METADATA_KEY = b"leash.summary"

_JSON_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz", ".json", ".json.gz")
_PARQUET_SUFFIXES = (".parquet", ".pq")
_CSV_SUFFIXES = (".csv", ".csv.gz")
# Columns a canonical samples / counts file may carry that leash reads (response is not needed
# for any summary, so it is never read from columnar files).
_SAMPLES_READ = ("model", "benchmark", "question_id", "step", "sample_idx", "correct", "answer",
                 "n_tokens", "token_entropy", "finish_reason")
_COUNTS_READ = ("model", "benchmark", "question_id", "step", "n", "c", "first_correct")


@dataclass(frozen=True)
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
    model, benchmark, step : str or None
        Top-level fields naming the model / benchmark / checkpoint; None means the caller must
        supply them (``model=``, ``benchmark=``, ``step=`` arguments).
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

    @property
    def layout(self) -> str:
        return "records" if self.samples else "columns"

    def per_sample_fields(self) -> dict[str, str]:
        """Canonical name -> field name of the per-sample fields that are configured."""
        names = ("correct", "answer", "response", "index", "n_tokens", "token_entropy",
                 "finish_reason")
        return {k: getattr(self, k) for k in names if getattr(self, k)}

    def detection_keys(self) -> tuple[str, ...]:
        keys = [self.question_id] if self.question_id else []
        keys.append(self.samples if self.samples else self.correct)
        return tuple(keys)


MAPPINGS: dict[str, NestedMapping] = {
    # Qwen2.5-Math / limit-of-RLVR evaluator output: parallel lists, one file per seed.
    "evaluator": NestedMapping(
        name="evaluator", question_id="idx", correct="score", answer="pred", response="code",
        finish_reason="finish_reason"),
    # GSM8K SFT-vs-RLVR probe (rlvr_behavior_probe_runpod): list of rollout objects. The
    # numeric pred_value is the normalized answer (52.0 and "$52" both become "52").
    "rollouts": NestedMapping(
        name="rollouts", question_id="qid", samples="rollouts", correct="correct",
        answer="pred_value", response="text", index="rollout", model="model_name"),
    # Parallel lists named like the Large Language Monkeys release (samples[], is_corrects[]).
    "samples": NestedMapping(
        name="samples", question_id="question_id", correct="is_corrects", response="samples",
        answer="extracted_answers"),
}


def get_mapping(mapping) -> NestedMapping:
    """Resolve a mapping name, a dict of NestedMapping fields, or a NestedMapping."""
    if isinstance(mapping, NestedMapping):
        return mapping
    if isinstance(mapping, str):
        if mapping not in MAPPINGS:
            raise ValueError(
                f"The 'mapping' parameter must be one of {sorted(MAPPINGS)} or a NestedMapping. "
                f"Got {mapping!r} instead.")
        return MAPPINGS[mapping]
    if isinstance(mapping, dict):
        return NestedMapping(**{"name": "custom", **mapping})
    raise TypeError(
        "The 'mapping' parameter must be a str, dict or NestedMapping. "
        f"Got {type(mapping).__name__} instead.")


# --------------------------------------------------------------------------------------------
# Detection
# --------------------------------------------------------------------------------------------
def _container(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    if name.endswith(_JSON_SUFFIXES):
        return "jsonl"
    raise ValueError(
        f"Cannot read {path}: unknown file extension. Supported: "
        f"{', '.join(_JSON_SUFFIXES + _PARQUET_SUFFIXES + _CSV_SUFFIXES)}.")


def _open_text(path: Path):
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rb")
    return open(path, "rb")


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
    raise V.InputFileError(f"{path} is {what}, not a regular file; leash reads regular files "
                           "only.", V.NOT_REGULAR)


def no_rows_error(path, container: str) -> V.InputFileError:
    """The one error for an input without data rows, whatever its format."""
    what = {"csv": "a header and no data rows", "parquet": "zero rows",
            "empty": "the file is empty"}.get(container, "no records")
    return V.InputFileError(f"{path} has no data rows ({what}); an input must hold at least "
                            "one row.", V.NO_ROWS)


# errors of a file that cannot be read to its end: I/O and decompression, and those of the
# pyarrow readers (a corrupt Parquet file). Never an error of the rules applied to what was
# read: a bad value is a bad row (named by line and field), not an unreadable file.
_IO_ERRORS = (EOFError, zlib.error, OSError)
_UNREADABLE = _IO_ERRORS + (pa.ArrowException,)


def _reading(path: Path, rows):
    """Iterate a pyarrow reader; its errors (not those of the caller's loop) are the file's."""
    rows = iter(rows)
    while True:
        try:
            item = next(rows)
        except StopIteration:
            return
        except _UNREADABLE as exc:
            raise _unreadable(path, exc) from None
        yield item


def _unreadable(path: Path, exc: BaseException) -> Exception:
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
            pass
        return V.InputFileError(
            f"{path}: the compressed file is truncated or corrupt ({detail}); "
            + (f"the last complete line is line {lines}." if lines else
               "not one complete line could be read."), V.UNREADABLE)
    return V.InputFileError(f"{path}: cannot read the file ({detail}).", V.UNREADABLE)


def _json_error(exc: ValueError) -> str:
    """What is wrong with a JSON line that json.loads refused, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8: {exc.reason}"
    # e.g. "Exceeds the limit (4300 digits) for integer string conversion: value has ..."
    text = str(exc).split(":")[0].strip() or type(exc).__name__
    return text[0].lower() + text[1:]


def _loads(line: bytes):
    """``json.loads`` of one line; bytes that are not UTF-8 are kept as surrogate escapes.

    So the rules can name the field that holds them (``validate.py``: invalid_utf8), and a
    field leash does not read may hold any bytes, as in the pyarrow reader.
    """
    try:
        return json.loads(line)
    except UnicodeDecodeError:
        obj = json.loads(line.decode("utf-8", "surrogateescape"))
        if isinstance(obj, dict) and not all(k.isascii() for k in obj):  # printable keys
            obj = {k.encode("utf-8", "surrogateescape").decode("utf-8", "replace"): v
                   for k, v in obj.items()}
        return obj


def _first_record(path: Path):
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.strip():
                try:
                    return _loads(line)
                except ValueError as exc:  # also an integer of more than 4300 digits
                    msg = _json_error(exc)
                    raise ValueError(
                        f"{path}: line {lineno}: malformed JSON ({msg}); cannot detect "
                        "the format.") from None
    raise no_rows_error(path, "jsonl")


def _keys_of(path: Path, container: str) -> tuple[set, dict | None, bytes | None]:
    try:
        return _keys_of_file(path, container)
    except _UNREADABLE as exc:
        raise _unreadable(path, exc) from None


def _keys_of_file(path: Path, container: str) -> tuple[set, dict | None, bytes | None]:
    if container == "parquet":
        schema = pq.read_schema(path)
        meta = schema.metadata or {}
        return set(schema.names), None, meta.get(SUMMARY_METADATA_KEY)
    if container == "csv":
        with _open_text(path) as fh:  # bytes: a bad byte further down is not the header's
            header = fh.readline().decode("utf-8", "replace")
        if not header.strip():
            raise no_rows_error(path, "csv")
        import csv

        return set(next(csv.reader([header]), [])), None, None
    rec = _first_record(path)
    if not isinstance(rec, dict):
        raise ValueError(f"{path}: the first record is a JSON {type(rec).__name__}, "
                         "not an object; cannot detect the format.")
    return set(rec), rec, None


def detect_format(path, *, fmt=None, mapping=None) -> tuple[str, NestedMapping | None]:
    """Detect the format of a generations file.

    Parameters
    ----------
    path : str or os.PathLike
    fmt : str, optional
        Explicit format; skips detection (but is checked to be known).
    mapping : str, dict or NestedMapping, optional
        Field mapping; given alone it implies the "nested" format.

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
    summary (Parquet metadata), samples, counts, evaluator, the shipped nested mappings.
    """
    return _detect_format(Path(path), fmt, mapping, checked=False)


def _detect_format(path: Path, fmt, mapping, *, checked: bool):
    """:func:`detect_format`; ``checked``: the caller made sure it is a regular file."""
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"The 'fmt' parameter must be one of {FORMATS} or None. "
                         f"Got {fmt!r} instead.")
    if fmt == "evaluator":
        return "evaluator", get_mapping(mapping or "evaluator")
    if fmt == "nested":
        if mapping is None:
            raise ValueError(f"{path}: fmt='nested' needs a 'mapping' (one of "
                             f"{sorted(MAPPINGS)} or a NestedMapping).")
        return "nested", get_mapping(mapping)
    if fmt is not None:
        return fmt, None
    container = _container(path)
    if not checked:
        check_regular_file(path)  # a FIFO would block the read below
    if mapping is not None:
        if container != "jsonl":
            raise ValueError(f"{path}: a nested mapping applies to JSONL files only.")
        return "nested", get_mapping(mapping)
    keys, rec, meta = _keys_of(path, container)
    if meta is not None:
        return "summary", None
    if {"sample_idx", "correct", "question_id"} <= keys:
        return "samples", None
    if {"n", "c", "question_id"} <= keys:
        return "counts", None
    if rec is not None:
        for m in MAPPINGS.values():
            if all(k in rec for k in m.detection_keys()):
                lst = rec[m.samples or m.correct]
                if isinstance(lst, list):
                    return ("evaluator" if m.name == "evaluator" else "nested"), m
    tried = [
        "samples (needs columns question_id, sample_idx, correct)",
        "counts (needs question_id, n, c)",
    ]
    if container == "jsonl":
        tried += [f"nested mapping '{m.name}' (needs list field(s) {list(m.detection_keys())})"
                  for m in MAPPINGS.values()]
    raise ValueError(
        f"Could not detect the format of {path}. Tried: {'; '.join(tried)}. "
        f"Found keys: {sorted(keys)[:20]}. Pass fmt= (one of {FORMATS}) and, for nested "
        "layouts, mapping= to override.")


# --------------------------------------------------------------------------------------------
# Chunks and locations
# --------------------------------------------------------------------------------------------
class Chunk(NamedTuple):
    """A validated chunk: canonical columns plus where each row came from."""

    kind: str               # "samples" or "counts"
    table: pa.Table         # canonical, clean columns
    loc: np.ndarray         # int64 row / line / ordinal per row
    sub: np.ndarray         # int64 sample position in a nested record, -1 otherwise
    relative_idx: bool      # sample_idx is a list position to be offset per question


class Locator:
    """Turns a row's (loc, sub) into text such as "line 12" or "row group 0, row 5".

    ``loc`` is the line number (JSON lines), the 0-based row (Parquet) or the CSV record number
    (header = 1), which is turned into the line the record starts on: the same unless values
    hold newlines or blank lines are skipped, and found, only when a problem is reported, by
    reading the file up to that record with the csv module.

    A context manager, reentrant: the file that a CSV lookup opens is closed when the
    outermost ``with`` ends (the reader holds one around its whole file, so its lookups
    read the file once; a lookup after that, such as the first occurrence of a duplicate
    in an earlier file, opens and closes it in its own ``with``).
    """

    def __init__(self, path: Path, container: str):
        self.path = path
        self.container = container
        self._rg_starts = None
        self._csv = None  # the csv reader of _csv_line, while a lookup needs it
        self._depth = 0

    def __enter__(self) -> Locator:
        self._depth += 1
        return self

    def __exit__(self, *exc) -> None:
        self._depth -= 1
        if self._depth <= 0:
            self._depth = 0
            self.close()

    def __call__(self, loc: int, sub: int = -1) -> str:
        loc = int(loc)
        if self.container == "parquet":
            if self._rg_starts is None:
                md = pq.read_metadata(self.path)
                sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
                self._rg_starts = np.concatenate([[0], np.cumsum(sizes)])
            g = int(np.searchsorted(self._rg_starts, loc, side="right") - 1)
            return f"row group {g}, row {loc - int(self._rg_starts[g])}"
        if self.container == "csv":
            return f"line {self._csv_line(loc)}"
        return f"line {loc}" + (f", sample {sub}" if sub >= 0 else "")

    def _csv_line(self, record: int) -> int:
        import csv

        if self._csv is None:
            fh = (gzip.open(self.path, "rt", newline="", errors="replace")
                  if self.path.name.lower().endswith(".gz")
                  else open(self.path, newline="", errors="replace"))
            # reader, file, records read, records where the shift changes, their shifts
            self._csv = [csv.reader(fh), fh, 0, [0], [0]]
        reader, fh, done, starts, shifts = self._csv
        try:
            while done < record:
                before = reader.line_num
                if not next(reader):  # a blank line: not a record, as for pyarrow
                    continue
                done += 1
                if before + 1 - done != shifts[-1]:
                    starts.append(done)
                    shifts.append(before + 1 - done)
        except (StopIteration, csv.Error, EOFError, OSError):
            pass
        self._csv[2] = done
        return record + shifts[bisect.bisect_right(starts, record) - 1]

    def close(self) -> None:
        if self._csv is not None:
            self._csv[1].close()
            self._csv = None


class FileStats:
    """Per-file counters for provenance."""

    def __init__(self, path: Path, fmt: str, mapping: NestedMapping | None):
        self.path = path
        self.fmt = fmt
        self.mapping = mapping
        self.rows_read = 0
        self.rows_rejected = 0
        self.first_correct_unknown = 0
        self.reader = ""
        self.notes: list[str] = []
        self.locator = None
        self.columns: set = set()         # columns / top-level keys seen in the file
        self.sample_keys: set = set()     # keys of per-sample objects (nested "records")
        self.schema_metadata: dict = {}   # of a Parquet file, as its reader found it


def column_notes(fmt: str, mapping: NestedMapping | None, stats: FileStats,
                 known: tuple = ()) -> list[str]:
    """Notes on the columns of a file that leash does not read, with a "did you mean".

    Extra columns are legitimate (a prompt, a gold answer), so they are notes, not problems;
    but a misspelled optional column (``answr``) would silently leave every answer missing.
    Canonical formats list every column they do not know (``known`` holds the summary
    columns for ``fmt="summary"``); a nested mapping notes its optional fields that no record
    holds when a key of the file looks like them.
    """
    import difflib

    def close(name, candidates):
        hit = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.75)
        return f" (did you mean '{hit[0]}'?)" if hit else ""

    notes = []
    if fmt in ("samples", "counts", "summary"):
        known = set(known or (SAMPLES_REQUIRED + SAMPLES_OPTIONAL if fmt == "samples"
                              else COUNTS_REQUIRED + COUNTS_OPTIONAL))
        unknown = sorted(stats.columns - known)
        for name in unknown[:_MAX_NOTES]:
            notes.append(f"column '{name}' is not a {fmt} column and was ignored"
                         + close(name, known))
        if len(unknown) > _MAX_NOTES:
            notes.append(f"... and {len(unknown) - _MAX_NOTES} more unknown columns")
    elif mapping is not None:
        optional = {"answer": mapping.answer, "response": mapping.response,
                    "n_tokens": mapping.n_tokens, "token_entropy": mapping.token_entropy,
                    "finish_reason": mapping.finish_reason}
        keys = stats.sample_keys if mapping.samples else stats.columns
        for canon, fld in optional.items():
            if fld and fld not in keys and close(fld, keys - {fld}):
                notes.append(f"field '{fld}' of mapping '{mapping.name}' ({canon}) is in no "
                             f"record, so no {canon} was read" + close(fld, keys))
        if mapping.step and mapping.step not in stats.columns and close(mapping.step,
                                                                        stats.columns):
            notes.append(f"field '{mapping.step}' of mapping '{mapping.name}' (step) is in no "
                         "record" + close(mapping.step, stats.columns))
    return notes


_MAX_NOTES = 20


# --------------------------------------------------------------------------------------------
# Vectorized cleaning of canonical tables
# --------------------------------------------------------------------------------------------
def _report(sink, locator, fname, problems, loc, sub, values_of, before=()):
    """Send vectorized problems to the sink; return the mask of rejected rows.

    ``before`` holds problems of rows that are not in the table (CSV rows with a wrong field
    count) as ``(loc, field, value, reason, message)``, sorted by ``loc`` (None: an unknown
    line, first); they are merged with the table's problems in file order, which assumes
    ``loc`` increases along the table (true of every caller: line, row or record numbers).
    """
    n = len(loc)
    rejected = np.zeros(n, dtype=bool)
    for _, _, _, mask in problems:
        rejected |= mask
    if not rejected.any() and not before:
        return rejected

    def where(pos):
        return "an unknown line" if pos is None else locator(pos)

    def extra_problem(item):
        pos, field, value, reason, msg = item
        return V.Problem(fname, where(pos), field, value, reason, msg)

    if sink.on_error == "raise":
        first = int(np.flatnonzero(rejected)[0]) if rejected.any() else None
        if before and (first is None or before[0][0] is None or before[0][0] < loc[first]):
            sink.add(extra_problem(before[0]))
        for field, reason, msg, mask in problems:
            if mask[first]:
                sink.add(V.Problem(fname, locator(loc[first], sub[first]), field,
                                   V.short_repr(values_of(field, first)), reason, msg))
    # one problem per (row, rule), in row order
    events = []
    for k, (_field, _reason, _msg, mask) in enumerate(problems):
        idx = np.flatnonzero(mask)
        keep = idx if sink.on_error == "collect" else idx[: V._MAX_EXAMPLES]
        for i in keep:
            events.append((int(i), k))
        extra = len(idx) - len(keep)
        if extra:
            sink.by_reason[problems[k][1]] += extra
            sink.n_problems += extra
    events.sort()
    kept = before if sink.on_error == "collect" else before[: V._MAX_EXAMPLES]
    for item in before[len(kept):]:
        sink.by_reason[item[3]] += 1
        sink.n_problems += 1
    j = 0  # the next problem of `before` to merge in
    for i, k in events:
        while j < len(kept) and (kept[j][0] is None or kept[j][0] < loc[i]):
            sink.add(extra_problem(kept[j]))
            j += 1
        field, reason, msg, _ = problems[k]
        sink.add(V.Problem(fname, locator(loc[i], sub[i]), field,
                           V.short_repr(values_of(field, i)), reason, msg))
    for item in kept[j:]:
        sink.add(extra_problem(item))
    return rejected


def _constant_or_column(raw: pa.Table, name: str, given, stats: FileStats, n: int):
    if given is not None:
        note = f"column '{name}' replaced by the caller's value {given!r}"
        if name in raw.column_names and note not in stats.notes:
            stats.notes.append(note)
        if name == "step":
            return pa.array(np.full(n, int(given), dtype=np.int64))
        # one dictionary entry instead of n copies of the label
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)),
                                              pa.array([str(given)], type=pa.string()))
    if name in raw.column_names:
        return raw.column(name).combine_chunks()
    return None


def clean_table(kind, raw, loc, sub, *, labels, stats, sink, locator, fname, before=()):
    """Apply the vectorized rules to a raw canonical table; return (clean table, keep mask).

    ``before``: problems of rows left out of ``raw`` (see :func:`_report`), reported with the
    table's own in file order.
    """
    n = raw.num_rows
    problems = []  # (field, reason, message, mask)
    # text that is not UTF-8 is a problem of its row and field; the other rules see a null
    original, not_utf8, masked = raw, {}, {}
    for name in _SAMPLES_READ if kind == "samples" else _COUNTS_READ:
        if name in raw.column_names and labels.get(name) is None:
            fixed, bad = V.vec_utf8(raw.column(name).combine_chunks())
            if bad is not None:
                not_utf8[name] = bad
                raw = raw.set_column(raw.schema.get_field_index(name), name, fixed)

    def add(field, bad):
        if field in not_utf8:  # first, in the order of the fields
            masked[field] = not_utf8.pop(field)
            problems.append((field, V.INVALID_UTF8, V.UTF8_MESSAGE, masked[field]))
        for reason, msg, mask in bad:
            if field in masked:  # the null that replaced the bad text is no second problem
                mask = mask & ~masked[field]
            if mask.any():
                problems.append((field, reason, msg, mask))

    cols = {}
    for name in ("model", "benchmark"):
        arr = _constant_or_column(raw, name, labels.get(name), stats, n)
        if arr is None:
            raise ValueError(
                f"{fname}: required field '{name}' is missing from the file and was not "
                f"supplied: pass {name}=... to name it.")
        cols[name], bad = V.vec_label(arr)
        add(name, bad)
    if "question_id" not in raw.column_names:
        raise ValueError(f"{fname}: required field 'question_id' is missing from the file.")
    cols["question_id"], bad = V.vec_qid(raw.column("question_id").combine_chunks())
    add("question_id", bad)
    step = _constant_or_column(raw, "step", labels.get("step"), stats, n)
    if step is None:
        cols["step"] = pa.nulls(n, pa.int64())
    else:
        vals, null, bad = V.vec_int(step, min_value=0, required=False)
        add("step", bad)
        cols["step"] = pa.array(vals, mask=null)
    required = SAMPLES_REQUIRED if kind == "samples" else COUNTS_REQUIRED
    for name in required:
        if name not in raw.column_names and name not in cols:
            raise ValueError(f"{fname}: required field '{name}' is missing from the file.")
    if kind == "samples":
        vals, _, bad = V.vec_int(raw.column("sample_idx").combine_chunks(), min_value=0)
        add("sample_idx", bad)
        cols["sample_idx"] = pa.array(vals)
        vals, bad = V.vec_bool(raw.column("correct").combine_chunks())
        add("correct", bad)
        cols["correct"] = pa.array(vals)
        if "answer" in raw.column_names:
            cols["answer"], bad = V.vec_answer(raw.column("answer").combine_chunks())
            add("answer", bad)
        else:
            cols["answer"] = pa.nulls(n, pa.string())
        for name in ("n_tokens", "token_entropy"):
            if name in raw.column_names:
                x, bad = V.vec_float(raw.column(name).combine_chunks())
                add(name, bad)
                cols[name] = pa.array(x)
            else:
                cols[name] = pa.array(np.full(n, np.nan))
        if "finish_reason" in raw.column_names:
            cols["finish_reason"], bad = V.vec_label(
                raw.column("finish_reason").combine_chunks(), required=False)
            add("finish_reason", bad)
        else:
            cols["finish_reason"] = pa.nulls(n, pa.string())
    else:
        nn, _, bad = V.vec_int(raw.column("n").combine_chunks(), min_value=1)
        add("n", bad)
        cc, _, bad = V.vec_int(raw.column("c").combine_chunks(), min_value=0)
        add("c", bad)
        valid_nc = np.ones(n, dtype=bool)
        for field, _, _, mask in problems:
            if field in ("n", "c"):
                valid_nc &= ~mask
        add("c", [(V.C_GT_N, "must be <= n", (cc > nn) & valid_nc)])
        cols["n"], cols["c"] = pa.array(nn), pa.array(cc)
        if "first_correct" in raw.column_names:
            fc, null, bad = V.vec_int(raw.column("first_correct").combine_chunks(),
                                      min_value=-1, required=False)
            add("first_correct", bad)
            ok = ~null & valid_nc
            for _, _, mask in bad:
                ok &= ~mask
            incons = ok & ((fc >= nn) | ((fc == -1) != (cc == 0)))
            add("first_correct", [(V.INCONSISTENT,
                                   "must be < n, and -1 exactly when c == 0", incons)])
            cols["first_correct"] = pa.array(fc, mask=null)
        else:
            cols["first_correct"] = pa.nulls(n, pa.int64())

    def values_of(field, i):
        if field in masked and masked[field][i]:  # the bytes, as in the file
            arr = original.column(field).combine_chunks()
            if pa.types.is_dictionary(arr.type):
                return V.utf8_bytes(arr.dictionary)[arr.indices[i].as_py()].as_py()
            return V.utf8_bytes(arr)[i].as_py()
        if field in raw.column_names:
            return raw.column(field)[i].as_py()
        return labels.get(field)

    for field, bad in not_utf8.items():  # defensive: a field read without a rule
        masked[field] = bad
        problems.append((field, V.INVALID_UTF8, V.UTF8_MESSAGE, bad))
    rejected = _report(sink, locator, fname, problems, loc, sub, values_of, before)
    table = pa.table(cols)
    keep = ~rejected
    if rejected.any():
        table = table.filter(pa.array(keep))
    stats.rows_rejected += int(rejected.sum())
    return table, keep


# --------------------------------------------------------------------------------------------
# Readers
# --------------------------------------------------------------------------------------------
def _block_size(path: Path, chunk_size: int) -> int:
    # Text readers work in bytes: estimate bytes per row from the head of the file.
    with _open_text(path) as fh:
        head = fh.read(1 << 16)
    lines = max(head.count(b"\n"), 1)
    per_row = max(len(head) / lines, 16)
    # capped at 32 MB: pyarrow parses several blocks in parallel, so bigger blocks only
    # raise the peak memory, not the speed
    return int(min(max(per_row * chunk_size * 1.1, 1 << 20), 1 << 25))


def _read_parquet(path, kind, chunk_size, stats: FileStats):
    """Yield (table, row numbers) per batch of a Parquet file (its columns go to stats)."""
    wanted = _SAMPLES_READ if kind == "samples" else _COUNTS_READ
    schema = pq.read_schema(path)
    stats.columns.update(schema.names)
    stats.schema_metadata = dict(schema.metadata or {})
    # string key columns are read dictionary-encoded: the rules and the group-by then work
    # on the few distinct values instead of every row
    dict_cols = [c for c in ("model", "benchmark", "question_id", "answer", "finish_reason")
                 if c in schema.names and (pa.types.is_string(schema.field(c).type)
                                           or pa.types.is_large_string(schema.field(c).type)
                                           or pa.types.is_dictionary(schema.field(c).type))]
    # pre_buffer=False: the default read-ahead buffers many row groups at once, which makes
    # peak memory grow with the file (measured: 300 MB vs 30 MB of Arrow memory on 25M rows)
    pf = pq.ParquetFile(path, read_dictionary=dict_cols, pre_buffer=False)
    cols = [c for c in wanted if c in pf.schema_arrow.names]
    start = 0
    for batch in pf.iter_batches(batch_size=chunk_size, columns=cols):
        t = pa.Table.from_batches([batch])
        yield t, np.arange(start, start + t.num_rows, dtype=np.int64)
        start += t.num_rows


def _table_batches(table: pa.Table, kind, chunk_size, stats: FileStats):
    """:func:`_read_parquet` over a table already read."""
    stats.columns.update(table.column_names)
    stats.schema_metadata = dict(table.schema.metadata or {})
    wanted = _SAMPLES_READ if kind == "samples" else _COUNTS_READ
    t = table.select([c for c in wanted if c in table.column_names])
    for start in range(0, t.num_rows, chunk_size):
        part = t.slice(start, chunk_size)
        yield part, np.arange(start, start + part.num_rows, dtype=np.int64)


def _read_csv(path, kind, chunk_size, columns: set):
    """Yield (table, record numbers, invalid rows) per block of a CSV file.

    Record numbers count the header as 1 and skip blank lines, as pyarrow does; a row whose
    field count differs from the header's is not read but returned, with its record number,
    among the invalid rows of the block that holds it (``(number, text, fields, expected)``).
    """
    wanted = _SAMPLES_READ if kind == "samples" else _COUNTS_READ
    # every known column is read as text and converted by the leash rules, so that type
    # inference on one block can never disagree with the next block
    types = {c: pa.string() for c in wanted}
    invalid = []

    def on_invalid(row):
        invalid.append((row.number, row.text, row.actual_columns, row.expected_columns))
        return "skip"

    reader = pcsv.open_csv(
        path,
        # one thread: it gives invalid rows their record number (and is not slower here)
        read_options=pcsv.ReadOptions(block_size=_block_size(path, chunk_size),
                                      use_threads=False),
        parse_options=pcsv.ParseOptions(newlines_in_values=True, invalid_row_handler=on_invalid),
        # check_utf8=False: a stray byte is one bad row for the rules (clean_table), named by
        # line and field, instead of an error that stops the reader
        convert_options=pcsv.ConvertOptions(
            column_types=types, strings_can_be_null=True, null_values=[""],
            include_columns=None, check_utf8=False),
    )
    names = reader.schema.names
    columns.update(names)
    keep = [c for c in names if c in wanted]
    record = 2  # the next record number (the header is record 1)
    for batch in reader:
        t = pa.Table.from_batches([batch]).select(keep)
        skipped = {int(r[0]) for r in invalid if r[0] is not None}
        numbers = np.arange(record, record + t.num_rows + len(skipped), dtype=np.int64)
        loc = numbers[~np.isin(numbers, list(skipped))][: t.num_rows]
        end = int(loc[-1]) + 1 if len(loc) else record
        # invalid rows come in file order: the block's are a prefix (one cut, not a search)
        cut = bisect.bisect_left(invalid, end, key=lambda r: -1 if r[0] is None else r[0])
        mine = invalid[:cut]
        del invalid[:cut]
        yield t, loc, mine
        record = end
    if invalid:
        yield pa.table({c: pa.array([], pa.string()) for c in keep}), \
            np.empty(0, dtype=np.int64), list(invalid)


def _json_pieces(path: Path, nbytes: int):
    """Yield (bytes, first line number) pieces of whole lines of about nbytes each.

    Hand-written instead of pyarrow.json.open_json: that streaming reader reads ahead without
    bound (measured: its Arrow memory grows with the file), while pieces keep the peak at a
    few times nbytes and give every row its exact line number.
    """
    line = 1
    rest = b""
    with _open_text(path) as fh:
        while True:
            data = fh.read(nbytes)
            if not data:
                break
            buf = rest + data
            cut = buf.rfind(b"\n")
            if cut < 0:
                rest = buf
                continue
            piece, rest = buf[: cut + 1], buf[cut + 1:]
            yield piece, line
            line += piece.count(b"\n")
    if rest.strip():
        yield rest, line


def _piece_lines(piece: bytes, start: int, n_rows: int) -> np.ndarray:
    """Line number of each JSON object in a piece (pyarrow skips blank lines)."""
    n_lines = piece.count(b"\n") + (0 if piece.endswith(b"\n") else 1)
    if n_lines == n_rows:  # every line holds one object: no blank lines
        return np.arange(start, start + n_rows, dtype=np.int64)
    out = np.asarray([start + i for i, ln in enumerate(piece.split(b"\n")) if ln.strip()],
                     dtype=np.int64)
    if len(out) != n_rows:  # defensive: never mislabel a row
        raise RuntimeError("internal error: JSON rows and lines do not match")
    return out


_INT_FIELDS = ("step", "sample_idx", "n", "c", "first_correct")


def _ints_read_as_floats(raw: pa.Table) -> bool:
    """Whether pyarrow read an integer field as a float beyond the 64-bit range.

    pyarrow.json reads 99999999999999999999 as 1e+20 and a number of thousands of digits as
    inf: the rules would reject them, but show a value the file does not hold.
    """
    for name in _INT_FIELDS:
        if name in raw.column_names and pa.types.is_floating(raw.schema.field(name).type):
            x = raw.column(name).combine_chunks().fill_null(0).to_numpy(zero_copy_only=False)
            if not np.all(np.abs(x) < 2.0**63):
                return True
    return False


def _iter_json_lines(path: Path, piece: bytes | None = None, start: int = 1):
    """Yield (line number, parsed object or JSONDecodeError, raw line) of a file or a piece."""
    src = _open_text(path) if piece is None else None
    lines = src if src is not None else piece.split(b"\n")
    try:
        for lineno, line in enumerate(lines, start):
            if not line.strip():
                continue
            try:
                yield lineno, _loads(line), line
            except json.JSONDecodeError as exc:
                yield lineno, exc, line
            except ValueError as exc:  # invalid UTF-8, an integer of more than 4300 digits
                yield lineno, json.JSONDecodeError(_json_error(exc), "", 0), line
    finally:
        if src is not None:
            src.close()


_PY_RULES = {
    "model": V.py_label, "benchmark": V.py_label, "question_id": V.py_qid,
    "step": lambda v: V.py_int(v, min_value=0, required=False),
    "sample_idx": lambda v: V.py_int(v, min_value=0), "correct": V.py_bool,
    "answer": V.py_answer, "n_tokens": V.py_float, "token_entropy": V.py_float,
    "finish_reason": lambda v: V.py_label(v, required=False),
    "n": lambda v: V.py_int(v, min_value=1), "c": lambda v: V.py_int(v, min_value=0),
    "first_correct": lambda v: V.py_int(v, min_value=-1, required=False),
}
_ARROW_TYPES = {
    "model": pa.string(), "benchmark": pa.string(), "question_id": pa.string(),
    "step": pa.int64(), "sample_idx": pa.int64(), "correct": pa.bool_(), "answer": pa.string(),
    "n_tokens": pa.float64(), "token_entropy": pa.float64(), "finish_reason": pa.string(),
    "n": pa.int64(), "c": pa.int64(), "first_correct": pa.int64(),
}


def _columns_to_table(kind, cols: dict[str, list]) -> pa.Table:
    names = _SAMPLES_READ if kind == "samples" else _COUNTS_READ
    out = {}
    for name in names:
        vals = cols[name]
        if name in ("n_tokens", "token_entropy"):
            out[name] = pa.array(np.array([np.nan if v is None else v for v in vals],
                                          dtype=np.float64))
        else:
            out[name] = pa.array(vals, type=_ARROW_TYPES[name])
    return pa.table(out)


def _py_row(kind, rec: dict, labels, fname, where, sink, stats, present):
    """Clean one canonical record with the per-value rules; None when rejected."""
    names = _SAMPLES_READ if kind == "samples" else _COUNTS_READ
    required = SAMPLES_REQUIRED if kind == "samples" else COUNTS_REQUIRED
    row = {}
    bad = False
    for name in names:
        if name in labels and labels[name] is not None:
            v = labels[name]
            if name in rec and name not in present:
                present.add(name)
                stats.notes.append(f"field '{name}' replaced by the caller's value {v!r}")
            row[name] = int(v) if name == "step" else str(v)
            continue
        v = rec.get(name)
        if v is None and name in ("model", "benchmark") and name not in rec:
            raise ValueError(
                f"{fname}: {where()}: required field '{name}' is missing and was not "
                f"supplied: pass {name}=... to name it.")
        if v is None and name in required:
            sink.add(V.Problem(fname, where(), name, "None", V.MISSING,
                               "required value is missing"))
            bad = True
            continue
        try:
            row[name] = _PY_RULES[name](v)
        except V.RuleError as e:
            sink.add(V.Problem(fname, where(), name, V.short_repr(v), e.reason, e.message))
            bad = True
    if not bad and kind == "counts":
        if row["c"] > row["n"]:
            sink.add(V.Problem(fname, where(), "c", repr(rec.get("c")), V.C_GT_N,
                               "must be <= n"))
            bad = True
        fc = row.get("first_correct")
        if fc is not None and (fc >= row["n"] or (fc == -1) != (row["c"] == 0)):
            sink.add(V.Problem(fname, where(), "first_correct", repr(fc), V.INCONSISTENT,
                               "must be < n, and -1 exactly when c == 0"))
            bad = True
    return None if bad else row


def _read_json_slow(lines, kind, chunk_size, *, labels, fname, sink, stats):
    names = _SAMPLES_READ if kind == "samples" else _COUNTS_READ
    cols = {k: [] for k in names}
    locs = []
    present: set = set()
    for lineno, rec, line in lines:
        stats.rows_read += 1

        def where(lineno=lineno):
            return f"line {lineno}"

        if isinstance(rec, json.JSONDecodeError):
            sink.add(V.Problem(fname, where(), "-", V.short_repr(line[:60].decode(
                "utf-8", "replace")), V.MALFORMED, f"malformed JSON ({rec.msg})"))
            stats.rows_rejected += 1
            continue
        if not isinstance(rec, dict):
            sink.add(V.Problem(fname, where(), "-", V.short_repr(rec), V.WRONG_TYPE,
                               "record must be a JSON object"))
            stats.rows_rejected += 1
            continue
        stats.columns.update(rec)
        row = _py_row(kind, rec, labels, fname, where, sink, stats, present)
        if row is None:
            stats.rows_rejected += 1
            continue
        for k in names:
            cols[k].append(row.get(k))
        locs.append(lineno)
        if len(locs) >= chunk_size:
            yield _columns_to_table(kind, cols), np.asarray(locs, dtype=np.int64)
            cols = {k: [] for k in names}
            locs = []
    if locs:
        yield _columns_to_table(kind, cols), np.asarray(locs, dtype=np.int64)


def _read_nested(path, mapping: NestedMapping, chunk_size, *, labels, fname, sink, stats):
    """Expand one-object-per-question records into canonical sample rows (per-value rules)."""
    names = _SAMPLES_READ
    cols = {k: [] for k in names}
    locs, subs = [], []
    per_sample = mapping.per_sample_fields()
    relative = mapping.index is None
    for ordinal, (lineno, rec, line) in enumerate(_iter_json_lines(path)):
        def where(sub=-1, lineno=lineno):
            return f"line {lineno}" + (f", sample {sub}" if sub >= 0 else "")

        def reject_record(field, value, reason, msg, n_rows=1):
            sink.add(V.Problem(fname, where(), field, V.short_repr(value), reason, msg))
            stats.rows_read += n_rows
            stats.rows_rejected += n_rows

        if isinstance(rec, json.JSONDecodeError):
            reject_record("-", line[:60].decode("utf-8", "replace"), V.MALFORMED,
                          f"malformed JSON ({rec.msg}); its samples cannot be counted")
            continue
        if not isinstance(rec, dict):
            reject_record("-", rec, V.WRONG_TYPE, "record must be a JSON object")
            continue
        stats.columns.update(rec)
        # the per-sample values, as lists aligned by position
        if mapping.samples:
            lst = rec.get(mapping.samples)
            if not isinstance(lst, list):
                reason = V.MISSING if lst is None else V.WRONG_TYPE
                reject_record(mapping.samples, lst, reason, "must be a list of sample objects")
                continue
            n_s = len(lst)
            lists = {}
            bad_elem = [i for i, e in enumerate(lst) if not isinstance(e, dict)]
            if bad_elem:
                i = bad_elem[0]
                reject_record(f"{mapping.samples}[{i}]", lst[i], V.WRONG_TYPE,
                              "sample must be a JSON object", n_rows=n_s)
                continue
            if lst:  # the keys of the first and last samples (cheap, and enough for a note)
                stats.sample_keys.update(lst[0], lst[-1])
            for canon, fld in per_sample.items():
                lists[canon] = [e.get(fld) for e in lst]
            fieldname = {c: f"{mapping.samples}[{{i}}].{f}" for c, f in per_sample.items()}
        else:
            corr = rec.get(mapping.correct)
            if not isinstance(corr, list):
                reason = V.MISSING if corr is None else V.WRONG_TYPE
                reject_record(mapping.correct, corr, reason, "must be a list")
                continue
            n_s = len(corr)
            lists = {}
            ragged = None
            for canon, fld in per_sample.items():
                v = rec.get(fld)
                if v is None and fld not in rec:
                    continue
                if not isinstance(v, list) or len(v) != n_s:
                    got = f"length {len(v)}" if isinstance(v, list) else type(v).__name__
                    ragged = (fld, got)
                    break
                lists[canon] = v
            if ragged is not None:
                fld, got = ragged
                reject_record(fld, got, V.RAGGED,
                              f"per-sample list must have the same length as "
                              f"'{mapping.correct}' ({n_s}); leash never pads",
                              n_rows=n_s)
                continue
            fieldname = {c: f"{f}[{{i}}]" for c, f in per_sample.items()}
        stats.rows_read += n_s
        # question-level fields
        qlevel = {}
        try:
            qraw = rec.get(mapping.question_id) if mapping.question_id else ordinal
            qfield = mapping.question_id or "(record number)"
            qlevel["question_id"] = V.py_qid(qraw)
            for name in ("model", "benchmark", "step"):
                given = labels.get(name)
                if given is not None:
                    qlevel[name] = int(given) if name == "step" else str(given)
                    fld = getattr(mapping, name)
                    note = f"field '{fld}' replaced by the caller's value {given!r}"
                    if fld and fld in rec and note not in stats.notes:
                        stats.notes.append(note)
                    continue
                fld = getattr(mapping, name)
                if fld is None:
                    if name == "step":
                        qlevel[name] = None
                        continue
                    raise ValueError(
                        f"{fname}: the '{mapping.name}' layout does not name the {name}: "
                        f"pass {name}=... .")
                qfield = fld
                qraw = rec.get(fld)
                qlevel[name] = (V.py_int(qraw, min_value=0, required=False) if name == "step"
                                else V.py_label(qraw))
        except V.RuleError as e:
            sink.add(V.Problem(fname, where(), qfield, V.short_repr(qraw), e.reason,
                               e.message))
            stats.rows_rejected += n_s
            continue
        for i in range(n_s):
            row = dict(qlevel)
            bad = False
            for canon, rule in (("correct", V.py_bool), ("answer", V.py_answer),
                                ("n_tokens", V.py_float), ("token_entropy", V.py_float),
                                ("finish_reason", lambda v: V.py_label(v, required=False)),
                                ("index", lambda v: V.py_int(v, min_value=0))):
                if canon not in lists:
                    row[canon] = None
                    continue
                v = lists[canon][i]
                try:
                    row[canon] = rule(v)
                except V.RuleError as e:
                    sink.add(V.Problem(fname, where(i), fieldname[canon].format(i=i),
                                       V.short_repr(v), e.reason, e.message))
                    bad = True
            if bad:
                stats.rows_rejected += 1
                continue
            row["sample_idx"] = i if relative else row.pop("index")
            for k in names:
                cols[k].append(row.get(k))
            locs.append(lineno)
            subs.append(i)
        if len(locs) >= chunk_size:
            yield (_columns_to_table("samples", cols), np.asarray(locs, dtype=np.int64),
                   np.asarray(subs, dtype=np.int64))
            cols = {k: [] for k in names}
            locs, subs = [], []
    if locs:
        yield (_columns_to_table("samples", cols), np.asarray(locs, dtype=np.int64),
               np.asarray(subs, dtype=np.int64))


def _clean_chunk(kind, raw, loc, labels, stats, sink, locator, fname) -> Chunk:
    stats.rows_read += raw.num_rows
    sub = np.full(len(loc), -1, dtype=np.int64)
    table, keep = clean_table(kind, raw, loc, sub, labels=labels, stats=stats, sink=sink,
                              locator=locator, fname=fname)
    return Chunk(kind, table, loc[keep], sub[keep], False)


def read_chunks(path, fmt, mapping, *, labels, chunk_size, sink, stats,
                contents: pa.Table | None = None) -> Iterator[Chunk]:
    """Yield validated :class:`Chunk` objects of one file.

    ``contents``: the table of a Parquet file that the caller has read already (with its
    schema metadata), so that the file is not read a second time.

    A file that cannot be read to its end (a truncated ``.gz``, a corrupt Parquet file) raises
    :class:`leash.validate.InputFileError` naming it (and the last complete line of a
    compressed text file), whatever ``on_error`` says: what was lost cannot be counted.
    """
    path = Path(path)
    try:
        yield from _read_chunks(path, fmt, mapping, labels=labels, chunk_size=chunk_size,
                                sink=sink, stats=stats, contents=contents)
    except _IO_ERRORS as exc:  # the pyarrow readers' errors: see _reading
        raise _unreadable(path, exc) from None


def _read_chunks(path, fmt, mapping, *, labels, chunk_size, sink, stats,
                 contents) -> Iterator[Chunk]:
    fname = str(stats.path)
    if fmt in ("nested", "evaluator"):
        stats.reader = f"python json, mapping '{mapping.name}'"
        stats.locator = Locator(path, "jsonl")
        for table, loc, sub in _read_nested(path, mapping, chunk_size, labels=labels,
                                            fname=fname, sink=sink, stats=stats):
            yield Chunk("samples", table, loc, sub, mapping.index is None)
        return
    # a per-question summary is checked by the counts rules (one rule set) on its counts
    kind = "counts" if fmt == "summary" else fmt
    container = _container(path)
    if container == "parquet":
        stats.reader = "pyarrow parquet"
        locator = stats.locator = Locator(path, container)
        batches = (_read_parquet(path, kind, chunk_size, stats) if contents is None
                   else _table_batches(contents, kind, chunk_size, stats))
        for raw, loc in _reading(path, batches):
            yield _clean_chunk(kind, raw, loc, labels, stats, sink, locator, fname)
        return
    if container == "csv":
        stats.reader = "pyarrow csv"
        locator = stats.locator = Locator(path, container)
        with locator:
            for raw, loc, invalid in _reading(path, _read_csv(path, kind, chunk_size,
                                                              stats.columns)):
                # rows with a wrong field count are not in the block: their problems are
                # merged with the block's in file order, and the block is cleaned once
                stats.rows_read += raw.num_rows + len(invalid)
                stats.rows_rejected += len(invalid)
                before = [(number, "-", V.short_repr(text), V.MALFORMED_CSV,
                           f"{fields} fields where the header has {expected}")
                          for number, text, fields, expected in invalid]
                sub = np.full(len(loc), -1, dtype=np.int64)
                table, keep = clean_table(kind, raw, loc, sub, labels=labels, stats=stats,
                                          sink=sink, locator=locator, fname=fname,
                                          before=before)
                yield Chunk(kind, table, loc[keep], sub[keep], False)
        return
    # JSONL: pieces of whole lines parsed by pyarrow.json; a piece pyarrow cannot parse
    # (malformed JSON, a field changing type) is re-read line by line with the exact rules.
    stats.reader = "pyarrow json (pieces)"
    locator = Locator(path, "jsonl")
    stats.locator = locator
    nbytes = _block_size(path, chunk_size)
    opts = pjson.ReadOptions(block_size=1 << 22)
    slow_pieces = 0
    for piece, start in _json_pieces(path, nbytes):
        try:
            raw = pjson.read_json(pa.py_buffer(piece), read_options=opts)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError,
                UnicodeDecodeError):  # the last: a key that is not UTF-8
            raw = None
        if raw is not None and _ints_read_as_floats(raw):
            raw = None  # only Python's json keeps 99999999999999999999 as written
        if raw is not None:
            stats.columns.update(raw.column_names)
            loc = _piece_lines(piece, start, raw.num_rows)
            stats.rows_read += raw.num_rows
            sub = np.full(len(loc), -1, dtype=np.int64)
            table, keep = clean_table(kind, raw, loc, sub, labels=labels, stats=stats,
                                      sink=sink, locator=locator, fname=fname)
            yield Chunk(kind, table, loc[keep], sub[keep], False)
            continue
        slow_pieces += 1
        stats.reader = (f"pyarrow json (pieces); {slow_pieces} piece(s) re-read with python "
                        "json")
        for table, lines in _read_json_slow(_iter_json_lines(path, piece, start), kind,
                                            chunk_size, labels=labels, fname=fname, sink=sink,
                                            stats=stats):
            yield Chunk(kind, table, lines, np.full(len(lines), -1, dtype=np.int64), False)


def response_batches(path, *, fmt=None, mapping=None, model=None, benchmark=None, step=None,
                     batch_size=10_000) -> Iterator[pa.RecordBatch]:
    """Per-sample rows *with response texts* of one file, in batches of at most ``batch_size``.

    Columns: ``model, benchmark, question_id (string), step (int64), sample_idx (int64),
    response (string), correct (bool, null when the file has none), gold (string, null when
    the file has none)``. This is what rescoring reads; memory is bounded by ``batch_size``.

    (Interim implementation over :func:`leash.rescore.read_responses`, which loads the whole
    file; the streaming engine replaces it with the same signature.)
    """
    from .rescore import read_responses

    df = read_responses(path, fmt=fmt, mapping=mapping, model=model, benchmark=benchmark,
                        step=step)
    table = pa.Table.from_pandas(df, preserve_index=False)
    yield from table.to_batches(max_chunksize=batch_size)
