"""Validation of generation files: problems in file order, duplicates, and the report.

:func:`run` reads the inputs of a call in order under the one rule set of :mod:`leash_eval.formats`
(:mod:`leash_eval.summarize` drives it too, so validate and summarize never disagree), names the
rows
the rules reject and finds duplicate samples and questions within and across the inputs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from leash.errors import Api, Call, LeashTypeError, LeashValueError, Param, closest
from leash.summary import SUMMARY_COLUMNS
from leash_eval import formats as F
from leash_eval.formats import InputFileError, Problem

__all__ = ["Problem", "ValidationReport", "validate", "ON_ERROR", "InputFileError"]

ON_ERROR = ("raise", "skip")
#: The remedy of a bad row: skip the bad rows, or list them all.
SKIP_OR_VALIDATE = ("Pass ", Param("on_error", value="skip"), " to reject bad rows and count them",
                    Api(" in the provenance"), ", or run ", Call("leash_eval.validate.validate",
                                                                 "path"),
                    " to list every problem.")
_MAX_EXAMPLES = 20
KEYS = "model, benchmark, question_id, stepk"  # a question (stepk: the step, -1 for none)
WK = "ord::HUGEINT * 4294967296 + sub + 1"  # where a row is, as one number in file order


@dataclass
class ValidationReport:
    """Everything :func:`validate` found in one file.

    Attributes
    ----------
    path : str
    format : str or None
        Detected (or given) format; None when detection failed.
    rows_read, rows_used, rows_rejected : int
    problems : list of F.Problem
        Every problem found, in file order.
    notes : list of str
        Ignored columns (with a "did you mean"), labels replaced by the caller's.
    """

    path: str
    format: str | None
    rows_read: int = 0
    rows_used: int = 0
    rows_rejected: int = 0
    problems: list[F.Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    @property
    def file_problem(self) -> F.Problem | None:
        """The problem that stopped reading the whole file (see F.FILE_REASONS), if any."""
        return next((p for p in self.problems if p.reason in F.FILE_REASONS), None)

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

    def render(self, words=None) -> str:
        """The report, one line per problem (the first 20), in ``words``
        (:class:`leash.errors.Words`; default: the library's).
        """
        head = (f"{self.path} [{self.format}]: {self.rows_read} rows read, {self.rows_used} used,"
                f" {self.rows_rejected} rejected, {len(self.problems)} problems")
        return "\n".join([head] + [f"  note: {n}" for n in self.notes]
                         + [f"  {p.render(words)}" for p in self.problems[:_MAX_EXAMPLES]])

    def __str__(self) -> str:
        return self.render()


def validate(path, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
             chunk_size=250_000, reader_options=None) -> ValidationReport:
    """Check one generations file against every rule and list every problem.

    Parameters
    ----------
    path : str or os.PathLike
        A file of any format (see ``data/README.md``); a summary's rows are checked with the
        counts rules.
    fmt, model, benchmark, step, mapping, reader_options
        As in :func:`leash_eval.summarize.summarize` (labels are required for the evaluator format).
    chunk_size : int
        Rows per batch of the exact readers.

    Returns
    -------
    ValidationReport
        ``ok`` when the file is clean (``raise_on_error()`` lists the problems otherwise); a
        file that cannot be read as a whole has one problem, ``file_problem``, whose reason
        (:data:`F.FILE_REASONS`) says why.
    """
    path_s = str(path)
    try:
        files, sink, sources = run([path], fmt=fmt, model=model, benchmark=benchmark,
                                   step=step, mapping=mapping, chunk_size=chunk_size,
                                   on_error="collect", reader_options=reader_options,
                                   allow_summary=True)
    except (ValueError, TypeError, OSError) as exc:
        reason = getattr(exc, "reason", F.UNREADABLE if isinstance(exc, OSError) else F.UNDETECTED)
        return ValidationReport(path_s, None, problems=[
            F.Problem(path_s, "file", "-", "-", reason, str(exc), error=exc)])
    f = files[0]
    return ValidationReport(path_s, f["format"], f["rows_read"], f["rows_used"],
                            f["rows_rejected"], list(sink.all_problems),
                            list(f["notes"]) + lookalike_ids(sources[0].con))


def lookalike_ids(con) -> list[str]:
    """Notes on question ids of one model and benchmark that are one id after Unicode NFC
    normalization, stripping white space and dropping invisible format characters (a zero-width
    space): ``café`` written precomposed and decomposed, ``q1`` and ``q1 ``. They are counted as
    separate questions, as written; the note shows both spellings (escaped, so that they differ
    on the screen too).
    """
    import unicodedata

    def canon(q: str) -> str:
        q = unicodedata.normalize("NFC", q)
        return "".join(c for c in q if unicodedata.category(c) != "Cf").strip()

    groups: dict = {}
    for model, bench, q in con.execute(
            "SELECT DISTINCT model, benchmark, question_id FROM seen ORDER BY ALL").fetchall():
        groups.setdefault((model, bench, canon(q)), []).append(q)
    return [f"question ids {' and '.join(ascii(q) for q in qs)} of model {m!r}, benchmark "
            f"{b!r} are one id after Unicode NFC normalization and stripping; they are counted "
            "as separate questions" for (m, b, _), qs in groups.items() if len(qs) > 1]


class Sink:
    """Where problems go: ``on_error`` "raise" (at once), "skip" (count, keep 20) or "collect"."""

    def __init__(self, on_error: str):
        if on_error not in ("raise", "skip", "collect"):
            raise LeashValueError(param="on_error", value=on_error,
                                  constraint=f"one of {ON_ERROR}")
        self.on_error, self.by_reason, self.n_problems = on_error, Counter(), 0
        self.examples: list[F.Problem] = []
        self.all_problems: list[F.Problem] = []
        self.limit = {"raise": 1, "skip": _MAX_EXAMPLES}.get(on_error)

    def add(self, problems, by_reason: dict) -> None:
        """Problems in file order (at most ``limit`` of them), and how many there are."""
        if problems and self.on_error == "raise":
            raise problems[0].as_error(SKIP_OR_VALIDATE)
        self.n_problems += sum(by_reason.values())
        self.by_reason.update(by_reason)
        self.examples += problems[: _MAX_EXAMPLES - len(self.examples)]
        self.all_problems += problems if self.on_error == "collect" else []


def describe(key, idx=None) -> str:
    """The key of a question (and sample) in a message: ``model 'm', benchmark 'b', ...`` (not
    ``model='m'``, which reads as a keyword argument, and the CLI as its option).
    """
    m, b, q, s = key
    return (f"model {m!r}, benchmark {b!r}, question_id {q!r}" + (
        f", step {s}" if s is not None and s >= 0 else "") + (
        f", sample_idx {idx}" if idx is not None else ""))


def samples_rows(src) -> str:
    """SQL of a source's checked rows with the question's ``stepk`` and absolute index ``idx``
    (a list position offset by the samples earlier inputs gave the question).
    """
    off = f" LEFT JOIN off{src.no} o USING ({KEYS})" if src.relative else ""
    return (f"SELECT *, {'sample_idx + coalesce(o.off, 0)' if src.relative else 'sample_idx'} "
            f"AS idx FROM (SELECT *, coalesce(step, -1) AS stepk FROM chk{src.no}){off}")


def check(src, sources, sink: Sink) -> int:
    """Report the problems of a built source and its duplicates (into ``rej<no>``: a row whose
    question, and sample index, an earlier valid row of this call gave, in this input or an
    earlier one); returns the rows rejected.
    """
    con, no = src.con, src.no
    problems, by_reason = F.rule_problems(src, sink.limit)
    if src.kind == "samples":
        cur = f"SELECT {no} AS no, ord, sub, {KEYS}, idx FROM ({samples_rows(src)}) WHERE NOT bad"
        prev = [f"SELECT {s.no}, ord, sub, {KEYS}, idx FROM ({samples_rows(s)}) x WHERE NOT bad "
                f"AND NOT EXISTS (SELECT 1 FROM rej{s.no} r WHERE r.ord = x.ord AND r.sub = "
                f"x.sub) AND ({KEYS}) IN (SELECT ({KEYS}) FROM seen WHERE kind = 'samples')"
                for s in sources[:no] if s.kind == "samples"]
        part, what, msg = f"{KEYS}, idx", "sample_idx", "duplicate (model, benchmark, " \
            "question_id, step, sample_idx)"
    else:
        cur = f"SELECT {no} AS no, ord, sub, {KEYS}, NULL AS idx FROM (SELECT *, coalesce(step, " \
              f"-1) AS stepk FROM chk{no}) WHERE NOT bad"
        prev = [f"SELECT w_no, wk // 4294967296, wk % 4294967296 - 1, {KEYS}, NULL FROM seen"]
        part, what, msg = KEYS, "question_id", "duplicate (model, benchmark, question_id, step)"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE rej{no} AS SELECT * FROM (SELECT *, row_number() OVER w "
        "AS rn, first_value(no) OVER w AS fno, first_value(ord) OVER w AS ford, "
        f"first_value(sub) OVER w AS fsub FROM ({' UNION ALL '.join([cur, *prev])}) WINDOW w AS "
        f"(PARTITION BY {part} ORDER BY no, ord, sub)) WHERE rn > 1 AND no = {no}")
    n = con.execute(f"SELECT count(*) FROM rej{no}").fetchall()[0][0]
    for d in con.execute(f"SELECT * FROM rej{no} ORDER BY ord, sub" + (
            f" LIMIT {sink.limit}" if sink.limit else "")).fetchall():
        first, other = sources[d[9]], src.kind == "counts" and d[9] != no
        problems.append(F.Problem(
            src.fname, src.where(d[1], d[2]), what, describe(d[3:7], d[7] if what ==
                                                             "sample_idx" else None), F.DUPLICATE,
            f"{msg}{' in more than one input' if other else ''}; first given at {first.fname}: "
            f"{first.where(d[10], d[11])}", (d[1], d[2], len(src.fields))))
    # the rules' problems and the duplicates, merged in file order (each list is in order)
    problems = sorted(problems, key=lambda p: p.order)[: sink.limit or None]
    sink.add(problems, {**by_reason, **({F.DUPLICATE: n} if n else {})})
    return int(con.execute(f"SELECT coalesce(sum(nrows), 0) FROM chk{no} WHERE bad")
               .fetchall()[0][0]) + n


def _basic_partial(src, exact: bool):
    """The per-question facts :func:`run` needs (where first read, index range)."""
    if not exact:  # validate() lists every problem: the exact path. But DuckDB checks the
        text = [f"max(length(r_{f}))" for f in src.fields  # text it reads only when it reads it
                if src.types.get(f"r_{f}") == "VARCHAR"]
        if src.form == "parquet" and text:
            src.con.execute(f"SELECT {', '.join(text)} FROM raw{src.no}").fetchall()
        return None
    rows = samples_rows(src) if src.kind == "samples" else (
        f"SELECT *, coalesce(step, -1) AS stepk, NULL::BIGINT AS idx FROM chk{src.no}")
    src.con.execute(
        f"CREATE OR REPLACE TEMP VIEW pk{src.no} AS SELECT {KEYS}, min({WK}) AS wk, min(idx) AS "
        f"lo, max(idx) AS hi FROM ({rows}) x WHERE NOT bad AND NOT EXISTS (SELECT 1 FROM "
        f"rej{src.no} r WHERE r.ord = x.ord AND r.sub = x.sub) GROUP BY ALL")


def _check_distinct(paths, stat_results) -> None:
    """Refuse a file given twice (the same file, or a byte-identical copy: formats without
    sample indices number a later file's samples after an earlier one's, so a repeated file
    would silently double n). Contents are compared only between files of equal size.
    """
    import hashlib

    def once(seen, key, i, p, what):
        j, q = seen.setdefault(key, (i, p))
        if j != i:
            raise F.InputFileError(f"duplicate input: {p} (input {i}) {what} {q} (input {j}); "
                                   "give each file once, or its rows would be counted twice.",
                                   F.DUPLICATE_FILE)

    seen, by_size = {}, {}
    for i, (p, st) in enumerate(zip(paths, stat_results), 1):
        once(seen, (st.st_dev, st.st_ino), i, p, "is the same file as")
        by_size.setdefault(st.st_size, []).append((i, p))
    for group in (g for g in by_size.values() if len(g) > 1):
        digests = {}
        for i, p in group:
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(block)
            once(digests, h.digest(), i, p, "has the same content as")


def as_paths(paths) -> list:
    import os

    out = [paths] if isinstance(paths, (str, os.PathLike)) else paths
    what = "a path or a list of paths"
    if not hasattr(out, "__iter__") or isinstance(out, (bytes, dict)):
        raise LeashTypeError(param="paths", value=paths, got=type(paths).__name__,
                             constraint=what)
    if not (out := list(out)):
        raise LeashValueError(Param("paths"), " must name at least one file. Got [].", value=[])
    if bad := [p for p in out if not isinstance(p, (str, os.PathLike))]:
        raise LeashTypeError(param="paths", value=bad[0], constraint=what,
                             got=f"an element of type {type(bad[0]).__name__}")
    return out


def run(paths, *, fmt, model, benchmark, step, mapping, chunk_size, on_error, reader_options=None,
        allow_summary=False, contents=None, partial=_basic_partial):
    """Read and check every input in order: one rule set, one duplicate check for the call.

    ``partial(src, exact)`` writes the per-question tables ``part<no>`` / ``pk<no>`` of a built
    source and returns the rows read, or None when the fast path cannot vouch for the file:
    then the exact views are built, :func:`check` reports the problems and ``partial`` runs
    again over the rows left. Returns (per-file provenance, sink, sources).
    """
    check_arguments(chunk_size, step)
    sink, plist = Sink(on_error), input_paths(paths, contents)
    con = F.connect()
    start(con)
    files, sources = [], []
    for no, p in enumerate(plist):
        src = open_input(con, p, no, fmt=fmt, mapping=mapping, reader_options=reader_options,
                         labels={"model": model, "benchmark": benchmark, "step": step},
                         contents=contents, allow_summary=allow_summary)
        sources.append(src)
        before, reasons = sink.n_problems, dict(sink.by_reason)
        rows = build_input(src, chunk_size, partial)
        rejected = 0
        if rows is None:
            def exact(src=src, no=no):
                src.build(exact=src.form != "parquet" or src.utf8_error)
                found = check(src, sources, sink)
                partial(src, True)
                return found, con.execute(f"SELECT sum(nrows) FROM chk{no}").fetchall()[0][0]

            rejected, rows = F.guarded(src, exact) or F.guarded(src, exact)  # 2nd: not UTF-8
        if not rows:
            raise F.no_rows_error(p, {"table": "parquet", "nested": "jsonl"}.get(src.form,
                                                                                 src.form))
        hit = src.kind == "samples" and counts_clash(con, no)
        if hit:
            wk, fno, fwk, *key = hit
            raise ValueError(
                f"{src.fname}: {src.where(*_loc(wk))}: samples for a question that a counts "
                f"input already gave at {sources[fno].fname}: {sources[fno].where(*_loc(fwk))} "
                f"({describe(key)}); pass each question once.")
        admit(con, no, src.kind)
        files.append(file_record(src, rows, rejected, sink.n_problems - before, {
            r: k - reasons.get(r, 0) for r, k in sink.by_reason.items()
            if k > reasons.get(r, 0)}))
    return files, sink, sources


# The steps of run(), each input's own (open_input, build_input, file_record: what a cluster
# worker runs for one input, leash_eval.summarize) and the call's (the rest).


def check_arguments(chunk_size, step) -> None:
    """The arguments of :func:`run` that no input is needed to check."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise LeashValueError(param="chunk_size", value=chunk_size, constraint="an int >= 1")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
        raise LeashValueError(param="step", value=step, constraint="an int >= 0 or None")


def input_paths(paths, contents=None) -> list:
    """The inputs of a call: regular files, none empty, none given twice."""
    plist = as_paths(paths)
    if contents is None:
        stat_results = [F.check_regular_file(p) for p in plist]  # a FIFO would block below
        for p, st in zip(plist, stat_results):
            if st.st_size == 0:
                raise F.no_rows_error(p, "empty")
        _check_distinct(plist, stat_results)
    return plist


def start(con) -> None:
    """The table of the questions a call has read (``seen``), empty."""
    con.execute("CREATE TEMP TABLE seen (model VARCHAR, benchmark VARCHAR, question_id VARCHAR, "
                "stepk BIGINT, kind VARCHAR, w_no INTEGER, wk HUGEINT, lo BIGINT, hi BIGINT)")


def open_input(con, p, no: int, *, fmt, mapping, reader_options, labels, contents=None,
               allow_summary=False):
    """The :class:`leash_eval.formats.Source` of input number ``no`` (views not built)."""
    src = F.open_source(con, p, no, fmt=fmt, mapping=mapping, options=reader_options,
                        labels=labels, contents=contents)
    if src.fmt == "summary" and not allow_summary:
        raise LeashValueError(f"{p} is already a per-question summary;", file=p, hint=(
            "use ", Call("leash_eval.summarize.load_counts"), " to combine summaries with "
            "other inputs."))
    return src


def build_input(src, chunk_size: int, partial):
    """Build the views of a source and run the fast ``partial`` (:func:`run`): the rows read,
    or None when the fast path cannot vouch for the file.
    """
    con, no = src.con, src.no
    src.batch = chunk_size
    if src.relative:
        con.execute(f"CREATE TEMP TABLE off{no} AS SELECT {KEYS}, hi + 1 AS off FROM seen")
    con.execute(f"CREATE TEMP TABLE rej{no} (ord BIGINT, sub BIGINT)")
    F.guarded(src, src.build)
    return None if src.utf8_error or src.needs_exact else F.guarded(
        src, lambda: partial(src, False))


def counts_clash(con, no: int):
    """The first question of samples input ``no`` that a counts input gave already (``wk,
    w_no, seen wk, keys``), or None.
    """
    hit = con.execute(
        f"SELECT p.wk, s.w_no, s.wk, {', '.join('p.' + k for k in KEYS.split(', '))} FROM "
        f"pk{no} p JOIN seen s USING ({KEYS}) WHERE s.kind = 'counts' ORDER BY p.wk LIMIT 1"
    ).fetchall()
    return hit[0] if hit else None


def admit(con, no: int, kind: str) -> None:
    """The questions of input ``no`` (view ``pk<no>``) into ``seen``: where each was first
    read, and the range of its sample indices so far.
    """
    con.execute(f"INSERT INTO seen SELECT {KEYS}, '{kind}', {no}, wk, lo, hi FROM pk{no} "
                f"p ANTI JOIN seen s USING ({KEYS})")
    con.execute(f"UPDATE seen SET hi = greatest(seen.hi, p.hi), lo = least(seen.lo, p.lo) "
                f"FROM pk{no} p WHERE ({', '.join('seen.' + k for k in KEYS.split(', '))}) "
                f"= ({', '.join('p.' + k for k in KEYS.split(', '))})")


def file_record(src, rows, rejected: int, problems: int, by_reason: dict) -> dict:
    """The provenance of one input."""
    return {
        "path": str(src.fname), "format": src.fmt,
        "mapping": getattr(src.mapping, "name", None), "reader": src.reader,
        "rows_read": int(rows), "rows_used": int(rows) - rejected, "rows_rejected": rejected,
        "problems": problems, "rejected_by_reason": by_reason, "notes": src.notes + notes(src),
        "first_correct_unknown": getattr(src, "fc_unknown", 0)}


def _loc(wk: int) -> tuple[int, int]:
    o, s = divmod(int(wk), 4294967296)
    return o, s - 1


def notes(src) -> list[str]:
    """Notes on the fields of a file that leash does not read, with a "did you mean": extra
    columns are legitimate (a prompt), but a misspelled optional one (``answr``) would silently
    leave every answer missing; a mapping's optional field in no record is noted too.
    """
    def close(name, candidates):
        hit = closest(name, sorted(candidates), cutoff=0.75)
        return f" (did you mean '{hit}'?)" if hit else ""

    m, out = src.mapping, []
    if m is None and src.form != "evaluator_file":
        known = set(SUMMARY_COLUMNS if src.fmt == "summary" else (
            F.SAMPLES_REQUIRED + F.SAMPLES_OPTIONAL + ("timeout",) if src.kind == "samples"
            else F.COUNTS_REQUIRED + F.COUNTS_OPTIONAL))
        unknown = sorted((src.peek()[0] if src.form == "jsonl" else src.keys) - known)
        out = [f"column '{c}' is not a {src.fmt} column and was ignored" + close(c, known)
               for c in unknown[:20]] + ([f"... and {len(unknown) - 20} more unknown columns"]
                                         if len(unknown) > 20 else [])
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
