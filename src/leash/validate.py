"""Validation of generation files: the problems of one file, duplicates, and the report.

The rules themselves are the one SQL rule set of :mod:`leash.formats` (documented there and in
``data/README.md``); this module turns the rows they reject into :class:`Problem` records in
file order (a per-line pass names the line only for a file that failed), finds duplicate
samples and questions within and across the inputs of one call, and builds the
:class:`ValidationReport` of :func:`validate`. :mod:`leash.summarize` uses the same checks, so
``validate(path)`` and ``summarize(path)`` never disagree about a valid row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from . import formats as F
from .formats import (  # noqa: F401  (the reasons, re-exported)
    C_GT_N, DUPLICATE, DUPLICATE_FILE, EMPTY, FILE_REASONS, INCONSISTENT, INVALID_BOOL,
    INVALID_NUMBER, INVALID_UTF8, MALFORMED, MALFORMED_CSV, MISSING, NO_ROWS, NOT_INTEGER,
    NOT_REGULAR, OUT_OF_RANGE, RAGGED, TOO_LARGE, UNDETECTED, UNREADABLE, UTF8_MESSAGE,
    WRONG_TYPE, InputFileError, Problem, short_repr)

__all__ = ["Problem", "ValidationReport", "validate", "ON_ERROR", "InputFileError"]

ON_ERROR = ("raise", "skip")
_MAX_EXAMPLES = 20
KEYS = ("model", "benchmark", "question_id", "stepk")


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
        if len(self.problems) > len(lines):
            lines.append(f"... and {len(self.problems) - len(lines)} more problems")
        raise ValueError(f"{len(self.problems)} problems in {self.path}:\n" + "\n".join(lines))

    def __str__(self) -> str:
        head = (f"{self.path} [{self.format}]: {self.rows_read} rows read, {self.rows_used} used,"
                f" {self.rows_rejected} rejected, {len(self.problems)} problems")
        return "\n".join([head] + [f"  note: {n}" for n in self.notes]
                         + [f"  {p}" for p in self.problems[:_MAX_EXAMPLES]])


def validate(path, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
             chunk_size=250_000, reader_options=None) -> ValidationReport:
    """Check one generations file against every rule and list every problem.

    Parameters
    ----------
    path : str or os.PathLike
        A samples, counts, nested/evaluator, evaluator-tool or summary file (see
        ``data/README.md``); a summary's rows are checked with the counts rules.
    fmt : str, optional
        Format override (one of :data:`leash.formats.FORMATS`).
    model, benchmark, step : optional
        Labels supplied by the caller (required for the evaluator format).
    mapping : str, dict or NestedMapping, optional
        Field mapping for nested layouts (a built-in name or a YAML file).
    chunk_size : int
        Rows per batch of the exact readers.
    reader_options : dict, optional
        Options of an evaluator's reader (e.g. ``{"filter": "strict-match"}``).

    Returns
    -------
    ValidationReport
        ``report.ok`` is True when the file is clean; ``report.raise_on_error()`` raises a
        ValueError listing the problems. A file that cannot be read as a whole gives a report
        with one problem whose reason says why (:data:`FILE_REASONS`: ``"undetected_format"``,
        ``"unreadable_file"`` for a truncated or corrupt file, ``"no_rows"``,
        ``"not_a_regular_file"``); ``report.file_problem`` is that problem.
    """
    path_s = str(path)
    try:
        files, sink, _ = run([path], fmt=fmt, model=model, benchmark=benchmark, step=step,
                             mapping=mapping, chunk_size=chunk_size, on_error="collect",
                             reader_options=reader_options, allow_summary=True)
    except (ValueError, TypeError, OSError) as exc:
        reason = getattr(exc, "reason", UNREADABLE if isinstance(exc, OSError) else UNDETECTED)
        return ValidationReport(path_s, None, problems=[
            Problem(path_s, "file", "-", "-", reason, str(exc))])
    f = files[0]
    return ValidationReport(path_s, f["format"], f["rows_read"], f["rows_used"],
                            f["rows_rejected"], list(sink.all_problems), list(f["notes"]))


class Sink:
    """Where problems go: ``on_error`` "raise" (at once), "skip" (count, keep 20) or "collect"."""

    def __init__(self, on_error: str):
        if on_error not in ("raise", "skip", "collect"):
            raise ValueError(f"The 'on_error' parameter must be one of {ON_ERROR}. "
                             f"Got {on_error!r} instead.")
        self.on_error = on_error
        self.by_reason: Counter = Counter()
        self.examples: list[Problem] = []
        self.all_problems: list[Problem] = []
        self.n_problems = 0

    def add(self, problem: Problem, count: bool = True) -> None:
        if self.on_error == "raise":
            raise ValueError(
                f"{problem}. Pass on_error='skip' to reject bad rows and count them in the "
                "provenance, or run leash.validate.validate(path) to list every problem.")
        if count:
            self.n_problems += 1
            self.by_reason[problem.reason] += 1
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(problem)
        if self.on_error == "collect":
            self.all_problems.append(problem)

    @property
    def limit(self):
        return None if self.on_error == "collect" else _MAX_EXAMPLES


def describe(key, idx=None) -> str:
    m, b, q, s = key
    text = f"model={m!r}, benchmark={b!r}, question_id={q!r}"
    return text + (f", step={s}" if s is not None and s >= 0 else "") + (
        f", sample_idx={idx}" if idx is not None else "")


def samples_rows(src, *, keys_only=False) -> str:
    """SQL of a source's valid rows with their absolute sample index ``idx``."""
    off = (f" LEFT JOIN off{src.no} o USING (model, benchmark, question_id, stepk)"
           if src.relative else "")
    idx = "sample_idx + coalesce(o.off, 0)" if src.relative else "sample_idx"
    return (f"SELECT *, {idx} AS idx FROM (SELECT *, coalesce(step, -1) AS stepk FROM "
            f"chk{src.no}){off}")


def check(src, sources, sink: Sink) -> int:
    """Report the problems of one built source (exact views) and its duplicates; write the
    duplicate rows to ``rej<no>`` (the rows the rules reject have ``bad``). Returns the rows
    rejected. Duplicates are rows whose question (and sample index) an earlier valid row of
    this call already gave, in this input or an earlier one (``sources``)."""
    con, no = src.con, src.no
    problems, by_reason = F.rule_problems(src, sink.limit if sink.on_error != "raise" else 1)
    for p in problems:
        sink.add(p, count=False)
    sink.n_problems += sum(by_reason.values())
    sink.by_reason.update(by_reason)
    keys = ", ".join(KEYS)
    if src.kind == "samples":
        cur = f"SELECT {no} AS no, ord, sub, {keys}, idx FROM ({samples_rows(src)}) WHERE NOT bad"
        prev = " UNION ALL ".join(
            f"SELECT {s.no}, ord, sub, {keys}, idx FROM ({samples_rows(s)}) x WHERE NOT bad AND "
            f"NOT EXISTS (SELECT 1 FROM rej{s.no} r WHERE r.ord = x.ord AND r.sub = x.sub) AND "
            f"(model, benchmark, question_id, stepk) IN (SELECT (model, benchmark, question_id,"
            f" stepk) FROM seen WHERE kind = 'samples')" for s in sources[:no] if s.kind ==
            "samples")
        part, what = f"{keys}, idx", "sample_idx"
        msg = "duplicate (model, benchmark, question_id, step, sample_idx)"
    else:
        cur = f"SELECT {no} AS no, ord, sub, {keys}, NULL AS idx FROM (SELECT *, " \
              f"coalesce(step, -1) AS stepk FROM chk{no}) WHERE NOT bad"
        prev = (f"SELECT w_no, w_ord, w_sub, {keys}, NULL FROM seen")
        part, what = keys, "question_id"
        msg = "duplicate (model, benchmark, question_id, step)"
    union = cur + (f" UNION ALL {prev}" if prev else "")
    dups = con.execute(
        f"SELECT * FROM (SELECT *, row_number() OVER w AS rn, first_value(no) OVER w AS fno, "
        f"first_value(ord) OVER w AS ford, first_value(sub) OVER w AS fsub FROM ({union}) "
        f"WINDOW w AS (PARTITION BY {part} ORDER BY no, ord, sub)) WHERE rn > 1 AND no = {no} "
        "ORDER BY ord, sub").fetchall()
    con.execute(f"CREATE OR REPLACE TEMP TABLE rej{no} (ord BIGINT, sub BIGINT)")
    if dups:
        import pyarrow as pa

        con.register("dups", pa.table({"ord": [d[1] for d in dups], "sub": [d[2] for d in dups]}))
        con.execute(f"INSERT INTO rej{no} SELECT * FROM dups")
        con.unregister("dups")
    shown = dups if sink.limit is None else dups[: max(sink.limit - len(sink.examples), 1)]
    for d in shown:
        key, first = d[3:7], sources[d[9]]
        other = src.kind == "counts" and d[9] != no
        problem = Problem(src.fname, src.where(d[1], d[2]), what,
                          describe(key, d[7] if src.kind == "samples" else None), DUPLICATE,
                          f"{msg}{' in more than one input' if other else ''}; first given at "
                          f"{first.fname}: {first.where(d[10], d[11])}")
        sink.add(problem)
    if len(dups) > len(shown):
        sink.n_problems += len(dups) - len(shown)
        sink.by_reason[DUPLICATE] += len(dups) - len(shown)
    bad = con.execute(f"SELECT coalesce(sum(nrows), 0) FROM chk{no} WHERE bad").fetchall()[0][0]
    return int(bad) + len(dups)


def _basic_partial(src, exact: bool):
    """The per-question facts the driver needs (where first read, index range, rows read)."""
    if not exact:  # validate() always takes the exact path: it lists every problem; but first
        text = [f"max(length(r_{f}))" for f in src.fields  # DuckDB checks the text it reads
                if src.types.get(f"r_{f}") == "VARCHAR"]
        if src.form == "parquet" and text:
            src.con.execute(f"SELECT {', '.join(text)} FROM raw{src.no}").fetchall()
        return None
    rows = samples_rows(src) if src.kind == "samples" else (
        f"SELECT *, coalesce(step, -1) AS stepk, NULL::BIGINT AS idx FROM chk{src.no}")
    src.con.execute(
        f"CREATE OR REPLACE TEMP TABLE part{src.no} AS SELECT {', '.join(KEYS)}, "
        f"min(struct_pack(o := ord, s := sub)) AS w, min(idx) AS lo, max(idx) AS hi FROM "
        f"({rows}) x WHERE NOT bad AND NOT EXISTS (SELECT 1 FROM rej{src.no} r WHERE "
        f"r.ord = x.ord AND r.sub = x.sub) GROUP BY ALL")


def _check_distinct(paths, stat_results) -> None:
    """Refuse a file given twice (the same file, or a byte-identical copy) in one call.

    Formats without per-sample indices (evaluator, nested) number a later file's samples after
    an earlier file's, so a repeated file would silently double n: no key can catch it.
    Contents are compared only between files of equal size.
    """
    import hashlib

    seen, by_size = {}, {}
    for i, (p, st) in enumerate(zip(paths, stat_results), 1):
        same = seen.get((st.st_dev, st.st_ino))
        if same is not None:
            raise InputFileError(
                f"duplicate input: {p} (input {i}) is the same file as {same[1]} (input "
                f"{same[0]}); give each file once, or its rows would be counted twice.",
                DUPLICATE_FILE)
        seen[(st.st_dev, st.st_ino)] = (i, p)
        by_size.setdefault(st.st_size, []).append((i, p))
    for group in by_size.values():
        digests = {}
        for i, p in group if len(group) > 1 else ():
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(block)
            same = digests.setdefault(h.digest(), (i, p))
            if same[0] != i:
                raise InputFileError(
                    f"duplicate input: {p} (input {i}) has the same content as {same[1]} "
                    f"(input {same[0]}); give each file once, or its rows would be counted "
                    "twice.", DUPLICATE_FILE)


def as_paths(paths) -> list:
    import os
    from collections.abc import Iterable

    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    if isinstance(paths, Iterable) and not isinstance(paths, (bytes, dict)):
        out = list(paths)
        if not out:
            raise ValueError("The 'paths' parameter must name at least one file. Got [].")
        for p in out:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError("The 'paths' parameter must be a path or a list of paths. "
                                f"Got an element of type {type(p).__name__}.")
        return out
    raise TypeError("The 'paths' parameter must be a path or a list of paths. "
                    f"Got {type(paths).__name__} instead.")


def run(paths, *, fmt, model, benchmark, step, mapping, chunk_size, on_error, reader_options=None,
        allow_summary=False, contents=None, partial=_basic_partial, con=None):
    """Read and check every input in order: one rule set, one duplicate check for the call.

    ``partial(src, exact)`` writes the per-question table ``part<no>`` of a built source and
    returns the rows read, or None when the fast path cannot vouch for the file (then the
    exact views are built, :func:`check` reports its problems, and ``partial`` runs again
    over the rows that are left). Returns (per-file provenance, sink, sources).
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError("The 'chunk_size' parameter must be an int >= 1. "
                         f"Got {chunk_size!r} instead.")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
        raise ValueError(f"The 'step' parameter must be an int >= 0 or None. Got {step!r}.")
    sink = Sink(on_error)
    labels = {"model": model, "benchmark": benchmark, "step": step}
    plist = as_paths(paths)
    if contents is None:
        stat_results = [F.check_regular_file(p) for p in plist]  # a FIFO would block below
        for p, st in zip(plist, stat_results):
            if st.st_size == 0:
                raise F.no_rows_error(p, "empty")
        _check_distinct(plist, stat_results)
    con = con or F.connect()
    con.execute("CREATE OR REPLACE TEMP TABLE seen (model VARCHAR, benchmark VARCHAR, "
                "question_id VARCHAR, stepk BIGINT, kind VARCHAR, w_no INTEGER, w_ord BIGINT, "
                "w_sub BIGINT, lo BIGINT, hi BIGINT)")
    files, sources = [], []
    for no, p in enumerate(plist):
        src = F.open_source(con, p, no, fmt=fmt, mapping=mapping, labels=labels,
                            options=reader_options, contents=contents)
        if src.fmt == "summary" and not allow_summary:
            raise ValueError(f"{p} is already a per-question summary; use leash.summarize."
                             "load_counts to combine summaries with other inputs.")
        sources.append(src)
        src.batch = chunk_size
        before, reasons = sink.n_problems, dict(sink.by_reason)
        if src.relative:
            con.execute(f"CREATE OR REPLACE TEMP TABLE off{no} AS SELECT model, benchmark, "
                        "question_id, stepk, hi + 1 AS off FROM seen")
        con.execute(f"CREATE OR REPLACE TEMP TABLE rej{no} (ord BIGINT, sub BIGINT)")
        F.guarded(src, src.build)
        rows = None if src.utf8_error else F.guarded(src, lambda: partial(src, False))
        rejected = 0
        if rows is None:
            def exact():
                src.build(exact=src.form != "parquet" or src.utf8_error)
                found = check(src, sources, sink)
                partial(src, True)
                return found, con.execute(f"SELECT sum(nrows) FROM chk{no}").fetchall()[0][0]

            rejected, rows = F.guarded(src, exact) or F.guarded(src, exact)  # 2nd: not UTF-8
        if src.kind == "samples":
            hit = con.execute(
                f"SELECT p.w, s.w_no, s.w_ord, s.w_sub, {', '.join('p.' + k for k in KEYS)} FROM "
                f"part{no} p JOIN seen s USING ({', '.join(KEYS)}) WHERE s.kind = 'counts' "
                "ORDER BY p.w LIMIT 1").fetchall()
            if hit:
                w, fno, ford, fsub, *key = hit[0]
                first = sources[fno]
                raise ValueError(
                    f"{src.fname}: {src.where(w['o'], w['s'])}: samples for a question that a "
                    f"counts input already gave at {first.fname}: {first.where(ford, fsub)} "
                    f"({describe(key)}); pass each question once.")
        if not rows:
            raise F.no_rows_error(p, "csv" if src.form == "csv" else "parquet" if src.form in (
                "parquet", "table") else "jsonl")
        con.execute(f"INSERT INTO seen SELECT {', '.join(KEYS)}, '{src.kind}', {no}, w.o, w.s, "
                    f"lo, hi FROM part{no} p WHERE NOT EXISTS (SELECT 1 FROM seen s WHERE "
                    "(s.model, s.benchmark, s.question_id, s.stepk) = (p.model, p.benchmark, "
                    "p.question_id, p.stepk))")
        con.execute(f"UPDATE seen SET hi = greatest(seen.hi, p.hi), lo = least(seen.lo, p.lo) "
                    f"FROM part{no} p WHERE (seen.model, seen.benchmark, seen.question_id, "
                    "seen.stepk) = (p.model, p.benchmark, p.question_id, p.stepk)")
        files.append({
            "path": str(p), "format": src.fmt, "mapping": src.mapping.name if src.mapping
            else None, "reader": src.reader, "rows_read": int(rows),
            "rows_used": int(rows) - rejected, "rows_rejected": rejected,
            "problems": sink.n_problems - before,
            "rejected_by_reason": {r: k - reasons.get(r, 0) for r, k in sink.by_reason.items()
                                   if k > reasons.get(r, 0)},
            "notes": src.notes + notes(src),
            "first_correct_unknown": getattr(src, "fc_unknown", 0)})
    return files, sink, sources


def notes(src) -> list[str]:
    """Notes on the columns of a file that leash does not read, with a "did you mean".

    Extra columns are legitimate (a prompt, a gold answer), so they are notes, not problems;
    but a misspelled optional column (``answr``) would silently leave every answer missing.
    A nested mapping notes its optional fields that no record holds when a key looks like them.
    """
    import difflib

    def close(name, candidates):
        hit = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.75)
        return f" (did you mean '{hit[0]}'?)" if hit else ""

    out = []
    m = src.mapping
    if m is None and src.form != "evaluator_file":
        cols = src.peek()[0] if src.form == "jsonl" else src.keys
        known = set(F.SUMMARY_COLUMNS if src.fmt == "summary" else (
            F.SAMPLES_REQUIRED + F.SAMPLES_OPTIONAL if src.kind == "samples"
            else F.COUNTS_REQUIRED + F.COUNTS_OPTIONAL))
        unknown = sorted(cols - known)
        out = [f"column '{c}' is not a {src.fmt} column and was ignored" + close(c, known)
               for c in unknown[:20]]
        if len(unknown) > 20:
            out.append(f"... and {len(unknown) - 20} more unknown columns")
    elif m is not None:
        top, samp = src.peek()
        keys = samp if m.samples else top
        for canon in ("answer", "response", "n_tokens", "token_entropy", "finish_reason"):
            fld = getattr(m, canon)
            if fld and fld not in keys and close(fld, keys - {fld}):
                out.append(f"field '{fld}' of mapping '{m.name}' ({canon}) is in no record, "
                           f"so no {canon} was read" + close(fld, keys))
        if m.step and m.step not in top and close(m.step, top):
            out.append(f"field '{m.step}' of mapping '{m.name}' (step) is in no record"
                       + close(m.step, top))
    return out
