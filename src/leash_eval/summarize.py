"""Per-question summaries of model generations, aggregated by DuckDB in one pass per file.

Each file is scanned once by a query applying the rules of :mod:`leash_eval.formats` and aggregating
per question (memory bounded by the questions; DuckDB spills beyond its limit); a file the rules
reject a row of is checked row by row (:func:`leash_eval.validate.check`) and aggregated again.
:func:`load_counts` reads samples, counts and summary files alike. The summary frame has a row
per (model, benchmark, question_id, step) in order of first appearance; its 16 columns
(:data:`leash.summary.SUMMARY_COLUMNS`) are described in ``data/README.md``, section 3.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from leash.errors import Api, Call, LeashValueError, LeashWarning, Param
from leash.summary import (
    KEY_COLUMNS,
    NA_MODES,
    SUMMARY_COLUMNS,
    SUMMARY_EXTRA,
    SUMMARY_METADATA_KEY,
    SUMMARY_TYPES,
    provenance_na,
    summary_schema,
)
from leash.writing import replacing
from leash_eval import formats as F
from leash_eval import validate as V

__all__ = ["summarize", "load_counts", "read_summary", "write_summary", "summary_table",
           "summary_frame", "table_provenance", "concat_summaries"]

NAN = "'NaN'::DOUBLE"


RAWKEYS = "r_model, r_benchmark, r_question_id, r_step, r_answer"
# a truncated sample: finish_reason "length" (vLLM's, OpenAI's, llama.cpp's word), in any case
TRUNCATED = "coalesce(lower(finish_reason) = 'length', false)"


def aggs(idx: str) -> str:
    """The sums of one partial row (Chan et al.'s merge needs count, mean and M2)."""
    return (f"count(*) AS n, count_if(correct) AS c, min({idx}) FILTER (WHERE correct) AS "
            f"first, min({idx}) AS lo, max({idx}) AS hi, bit_xor(hash({idx})) AS h, count_if("
            f"{TRUNCATED}) AS nt, count(n_tokens) AS tc, "
            "sum(n_tokens) AS ts, min(n_tokens) AS tmin, max(n_tokens) AS tmax, "
            "count(token_entropy) AS ec, avg(token_entropy) AS em, var_pop(token_entropy) * "
            "count(token_entropy) AS m2")


def _partial(na: str):
    """The aggregate of one source per (question, answer), ``part<no>``, for
    :func:`leash_eval.validate.run`: fast (``exact=False``) over every row, and None unless the file
    is vouched for: no row rejected, no duplicate possible (per question the indices are the
    range lo..hi, which the sum of their hashes confirms; they overlap no earlier input's).
    """
    miss = "answer IS NULL" + (f" OR {TRUNCATED}" if na == "truncated" else "")

    def partial(src, exact: bool):
        con, no = src.con, src.no
        keep = (f"WHERE NOT bad AND NOT EXISTS (SELECT 1 FROM rej{no} r WHERE r.ord = x.ord "
                "AND r.sub = x.sub)" if exact else "")
        # a row's place (V.WK); outside nested layouts its sample position is -1
        wk = f"min({V.WK})" if src.form == "nested" else "min(ord)::HUGEINT * 4294967296"
        common = f"{wk} AS wk, count_if(bad) AS nbad, sum(nrows) AS nrows"
        raw = not exact and src.kind == "samples" and not src.relative
        if raw:  # the rules of the question and the answer run once per distinct raw value
            # and, where the fields allow it, the others once per group (F.vouch)
            rows, ok = F.vouched(src) or (f"SELECT * FROM chk{no}", None)
            nbad = f"CASE WHEN {ok} THEN 0 ELSE count(*) END" if ok else "count_if(badr)"
            # a truncated sample's answer is set apart only under na="truncated"
            tr = TRUNCATED if na == "truncated" else "false"
            con.execute(f"CREATE OR REPLACE TEMP TABLE rp{no} AS SELECT {RAWKEYS}, "
                        f"{tr} AS tr, {aggs('sample_idx')}, "
                        f"{wk} AS wk, {nbad} AS nbad, sum(nrows) AS nrows FROM ({rows}) "
                        "GROUP BY ALL")
            types = {k: v for k, v in {**src.types, **src.hints}.items() if k in RAWKEYS}
            con.execute(f"CREATE OR REPLACE TEMP TABLE kr{no} AS " + F.checked_sql(
                f"(SELECT DISTINCT {RAWKEYS} FROM rp{no})", F.KEYLIKE, types, "keys"))
            if con.execute(f"SELECT bool_or(bad) FROM kr{no}").fetchall()[0][0]:
                return None
            tr = " OR tr" if na == "truncated" else ""
            sql = (f"SELECT k.model, k.benchmark, k.question_id, coalesce(k.step, -1) AS stepk,"
                   f" CASE WHEN k.answer IS NULL{tr} THEN NULL ELSE k.answer END AS a, p.* "
                   f"EXCLUDE ({RAWKEYS}, tr) FROM rp{no} p JOIN kr{no} k ON " + " AND ".join(
                       f"p.{c} IS NOT DISTINCT FROM k.{c}" for c in RAWKEYS.split(", ")))
        elif src.kind == "samples":
            sql = (f"SELECT {V.KEYS}, CASE WHEN {miss} THEN NULL ELSE answer END AS a, "
                   f"{aggs('idx')}, {common} FROM ({V.samples_rows(src)}) x {keep} GROUP BY ALL")
        else:
            x = "".join(f", any_value(x_{c}) AS x_{c}" for c in SUMMARY_EXTRA
                        if src.fmt == "summary")
            sql = (f"SELECT {V.KEYS}, count(*) AS n, any_value(n) AS qn, any_value(c) AS c, "
                   "any_value(first_correct) AS fc, NULL::BIGINT AS lo, NULL::BIGINT AS hi, "
                   f"NULL::UBIGINT AS h{x}, {common} FROM (SELECT *, coalesce(step, -1) AS "
                   f"stepk FROM chk{no}) x {keep} GROUP BY ALL")
        con.execute(f"CREATE OR REPLACE TEMP TABLE part{no} AS {sql}")
        _pk_view(con, no)
        unknown = "count_if(c > 0 AND fc IS NULL)" if src.kind == "counts" else "0"
        nbad, rows, unknown = con.execute(
            f"SELECT sum(nbad), sum(nrows), {unknown} FROM part{no}").fetchall()[0]
        src.fc_unknown = int(unknown or 0)
        if exact:
            return rows
        clash = nbad or _overlaps(con, no, src.kind) or con.execute(
            f"SELECT count(*) FROM pk{no} WHERE "
            f"{'hi - lo + 1 <> n' if src.kind == 'samples' else 'n > 1'}").fetchall()[0][0]
        if src.kind == "samples" and not clash:
            clash = con.execute(f"SELECT count(*) FROM pk{no} p, LATERAL (SELECT bit_xor(hash(v)) "
                                "AS ref FROM range(p.lo, p.hi + 1) t(v)) WHERE ref <> p.h"
                                ).fetchall()[0][0]
        return None if clash else rows

    return partial


def _pk_view(con, no: int) -> None:
    """View ``pk<no>``: per question of input ``no``, its samples, index range and hash, and
    where it was first read.
    """
    con.execute(f"CREATE OR REPLACE TEMP VIEW pk{no} AS SELECT {V.KEYS}, sum(n) AS n, "
                "min(lo) AS lo, max(hi) AS hi, bit_xor(h) AS h, min(wk) AS wk FROM "
                f"part{no} GROUP BY ALL")


def _overlaps(con, no: int, kind: str) -> int:
    """Questions of input ``no`` that an earlier input gave too: with samples whose index
    ranges meet (samples), at all (counts).
    """
    overlap = "p.lo <= s.hi AND s.lo <= p.hi" if kind == "samples" else "true"
    return con.execute(f"SELECT count(*) FROM pk{no} p JOIN seen s USING ({V.KEYS}) WHERE "
                       f"{overlap}").fetchall()[0][0]


def _run(paths, *, na, finish=True, cluster=None, **kw):
    """Read every input (:func:`leash_eval.validate.run`, or each on the cluster at ``cluster``
    when it can vouch for them: :func:`_cluster_read`), then merge the per-file aggregates.
    """
    if na not in NA_MODES:
        raise LeashValueError(param="na", value=na, constraint=f"one of {NA_MODES}")
    got = _cluster_read(paths, cluster, na=na, **kw) if cluster is not None else None
    if got is not None:
        files, sink, sources, con = got
    else:
        files, sink, sources = V.run(paths, partial=_partial(na), **kw)
        con = sources[0].con
    from leash._version import version

    for f, src in zip(files, sources):
        if src.fmt == "summary":
            f["stored_provenance"] = json.loads(src.meta) if src.meta else None
    prov = {"leash_version": version(), "files": files,
            **{k: sum(f[k] for f in files) for k in ("rows_read", "rows_used", "rows_rejected")},
            "rejected_by_reason": dict(sink.by_reason),
            "problem_examples": [str(p) for p in sink.examples],
            "on_error": kw["on_error"], "na": na, "chunk_size": int(kw["chunk_size"]),
            "labels": {k: kw[k] for k in ("model", "benchmark", "step") if kw[k] is not None}}
    if not finish:
        return None, prov
    keys, parts = V.KEYS, []
    samples = " UNION ALL BY NAME ".join(f"SELECT {s.no} AS no, * FROM part{s.no}" for s in sources
                                 if s.kind == "samples")
    if samples:  # merged over answers and inputs (Chan et al.'s merge of the variances)
        ranks = _first_ranks(con, samples, [s for s in sources if s.kind == "samples"])
        parts.append(
            f"WITH p AS (SELECT *, sum(ec * em) OVER w / sum(ec) OVER w AS emt FROM ({samples}) "
            f"WINDOW w AS (PARTITION BY {keys})), a AS (SELECT {keys}, list(a ORDER BY cnt "
            f"DESC, a) AS av, list(cnt ORDER BY cnt DESC, a) AS ac FROM (SELECT {keys}, a, "
            "sum(n) AS cnt FROM p WHERE a IS NOT NULL GROUP BY ALL) GROUP BY ALL), m AS (SELECT "
            f"{keys}, sum(n) AS n, sum(c) AS c, min(first) AS first, coalesce(sum(n) FILTER "
            "(WHERE a IS NULL), 0) AS nm, sum(nt) AS nt, sum(tc) AS tc, sum(ts) AS ts, "
            "min(tmin) AS tmin, max(tmax) AS tmax, sum(ec) AS ec, any_value(emt) AS emean, "
            "sum(m2 + ec * (em - emt) ** 2) AS m2, min((no::HUGEINT << 90) + wk) "
            f"AS wf, min(lo) AS lo, max(hi) AS hi FROM p GROUP BY ALL) SELECT {keys}, n, c, CASE "
            f"WHEN c = 0 THEN -1 WHEN hi - lo + 1 = n THEN first - lo ELSE {ranks} END, nm, "
            "coalesce(av, []), coalesce(ac, []), CASE WHEN tc > 0 THEN ts / tc "
            "END, CASE WHEN tc > 0 THEN tmin END, CASE WHEN tc > 0 THEN tmax END, CASE WHEN ec "
            "> 0 THEN emean END, CASE WHEN ec > 1 THEN sqrt(m2 / (ec - 1)) END, nt, wf FROM m "
            f"LEFT JOIN a USING ({keys})" + (f" LEFT JOIN qrank USING ({keys})" if ranks != "0"
                                              else ""))
    for s in (s for s in sources if s.kind == "counts"):
        x = [f"x_{c}" if s.fmt == "summary" else "NULL" for c in SUMMARY_EXTRA]
        parts.append(f"SELECT {keys}, qn, c, CASE WHEN c = 0 THEN -1 ELSE fc END, "
                     f"{', '.join(x)}, ({s.no}::HUGEINT << 90) + wk FROM part{s.no}")
        stored = provenance_na(files[s.no].get("stored_provenance") or {})
        if s.fmt == "summary" and stored not in (None, na) and con.execute(
                f"SELECT bool_or(x_n_truncated > 0) FROM part{s.no}").fetchall()[0][0]:
            raise LeashValueError(
                f"{s.fname} was summarized with ", Param("na", value=stored), " and has truncated "
                "samples, so its answer counts cannot be read under ", Param("na", value=na),
                " (which samples are NA is decided when the generations are summarized):",
                param="na", value=na, file=s.fname, hint=(
                    "summarize them again with ", Param("na", value=na),
                    f" (leash summarize --na {na})."))
    cols = ", ".join(f"CAST({f'coalesce({c}, {NAN})' if t == 'DOUBLE' else c} AS {t}) AS {c}"
                     for c, t in zip(SUMMARY_COLUMNS, SUMMARY_TYPES))
    names = ", ".join((*KEY_COLUMNS[:3], "stepk", *SUMMARY_COLUMNS[4:], "wf"))
    union = " UNION ALL ".join(f"SELECT * FROM ({q})" for q in parts)
    rel = con.sql(f"SELECT {cols.replace('CAST(step AS', 'CAST(nullif(stepk, -1) AS')} "
                  f"FROM (SELECT * FROM ({union}) t({names})) ORDER BY wf")
    table = (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()
    prov["questions"] = table.num_rows
    return table, prov


def _first_ranks(con, samples: str, sources) -> str:
    """SQL of ``first_correct`` where a question's sample indices are not 0..n-1 without gaps.

    ``first_correct`` is the position of the first correct sample among the question's samples
    in ``sample_idx`` order, what "the first k samples" counts: its ``sample_idx`` when the
    indices run 0..n-1, ``sample_idx - lo`` when they run lo..lo+n-1 (1-based files), and where
    they have gaps (rows rejected with ``on_error="skip"``, samples lost) the number of kept
    samples before it, counted here over the kept rows (table ``qrank``; "0" when no question
    has gaps, which the merge then never reads).
    """
    gap = _gaps(samples)
    if not con.execute(f"SELECT count(*) FROM ({gap})").fetchall()[0][0]:
        return "0"
    kept = " UNION ALL ".join(
        f"SELECT {V.KEYS}, idx FROM ({V.samples_rows(s)}) x WHERE NOT bad AND NOT EXISTS "
        f"(SELECT 1 FROM rej{s.no} r WHERE r.ord = x.ord AND r.sub = x.sub)" for s in sources)
    con.execute(f"CREATE OR REPLACE TEMP TABLE qrank AS SELECT {V.KEYS}, count_if(x.idx < "
                f"g.first) AS rank FROM ({gap}) g JOIN ({kept}) x USING ({V.KEYS}) GROUP BY ALL")
    return "rank"


def _gaps(samples: str) -> str:
    """SQL of the questions with a correct sample whose indices (over every input) have gaps."""
    return (f"SELECT {V.KEYS}, min(first) AS first FROM ({samples}) GROUP BY ALL HAVING "
            "max(hi) - min(lo) + 1 <> sum(n) AND min(first) IS NOT NULL")


# ------------------------------------------------------------------------- on a cluster


class _Read(NamedTuple):
    """What a cluster worker read of one input (:func:`_read_alone`): the per-question partial
    aggregates (table ``part<no>`` with its DuckDB column types) and the facts the merge needs.
    """

    no: int
    kind: str
    fmt: str
    fname: str
    meta: object
    relative: bool
    record: dict
    part: object  # pyarrow.Table
    types: list


def _read_alone(na: str, kw: dict, item) -> _Read | None:
    """Input ``item = (no, path)`` read on its own, as :func:`leash_eval.validate.run` reads it
    (the rules, the fast ``partial``): its :class:`_Read`, or None when the fast path cannot
    vouch for it (a row the rules reject, a duplicate, a gap in a question's sample indices),
    which only the exact path, with every earlier input at hand, can tell apart. Runs on a
    cluster worker.
    """
    import shutil
    import tempfile

    no, path = item
    tmp = tempfile.mkdtemp(prefix="leash-duckdb-")
    con = F.connect(temp_dir=tmp)
    try:
        V.start(con)
        src = V.open_input(con, path, no, fmt=kw["fmt"], mapping=kw["mapping"],
                           reader_options=kw["reader_options"], allow_summary=kw["allow_summary"],
                           labels={k: kw[k] for k in ("model", "benchmark", "step")})
        rows = V.build_input(src, kw["chunk_size"], _partial(na))
        if rows is None:
            return None
        if not rows:
            raise F.no_rows_error(path, {"table": "parquet", "nested": "jsonl"}.get(src.form,
                                                                                    src.form))
        types = [tuple(r[:2]) for r in con.execute(f"DESCRIBE part{no}").fetchall()]
        rel = con.sql(f"SELECT * FROM part{no}")
        part = (getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table)()
        return _Read(no, src.kind, src.fmt, src.fname, src.meta, src.relative,
                     V.file_record(src, rows, 0, 0, {}), part, types)
    finally:
        con.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _cluster_read(paths, address: str, *, na: str, **kw):
    """``(files, sink, sources)`` as :func:`leash_eval.validate.run` returns them, each input
    read by a worker of the cluster at ``address`` (:func:`_read_alone`, at most two per slot
    in flight) and the partial aggregates merged here, in input order, with the checks across
    inputs :func:`leash_eval.validate.run` makes: the same summary as one process. None (with a
    warning naming the input) when an input is not vouched for on its own, or the inputs
    overlap (a question's samples in two of them with indices that meet, samples of a
    question a counts input gave) or leave gaps in a question's sample indices: those the
    exact path of one process reads, which then runs instead.
    """
    import warnings

    from leash_eval.cluster import connected

    V.check_arguments(kw["chunk_size"], kw["step"])
    plist = V.input_paths(paths)
    opts = {k: kw.get(k) for k in ("fmt", "mapping", "reader_options", "model", "benchmark",
                                   "step", "chunk_size")}
    opts["allow_summary"] = kw.get("allow_summary", False)
    con = F.connect()
    V.start(con)
    files, sources, why, why_file = [], [], None, None
    with connected(address) as on:
        items = (((no, str(p)), (no, str(p))) for no, p in enumerate(plist))
        for (_, p), got in on.in_order(_read_alone, items, na, opts,
                                        name=lambda item: str(item[1])):
            why = _merge_read(con, got)
            if why:
                why, why_file = f"{p}: {why}", p
                break
            files.append(got.record)
            sources.append(got)
    samples = " UNION ALL BY NAME ".join(f"SELECT * FROM part{s.no}" for s in sources
                                         if s.kind == "samples")
    if not why and samples and con.execute(
            f"SELECT count(*) FROM ({_gaps(samples)})").fetchall()[0][0]:
        why = ("the inputs leave gaps in a question's sample indices, which only the exact "
               "path counts")
    if why:
        warnings.warn(LeashWarning(f"{why}; every input is summarized in this process instead "
                                   "(the same summary), not on the cluster.", file=why_file),
                      stacklevel=5)
        return None
    return files, V.Sink(kw["on_error"]), sources, con


def _merge_read(con, got: _Read | None) -> str | None:
    """Input ``got.no`` into the tables of the call on ``con``, as
    :func:`leash_eval.validate.run` would have it; why not (a reason), or None.
    """
    if got is None:
        return ("rows the rules reject, duplicates or gaps in a question's sample indices, "
                "which only the exact path reads")
    no = got.no
    con.register("read_in", got.part)
    cols = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in got.types)
    con.execute(f"CREATE TEMP TABLE part{no} AS SELECT {cols} FROM read_in")
    con.unregister("read_in")
    if got.relative:  # a list position: after the samples earlier inputs gave the question
        keys = V.KEYS.split(", ")
        con.execute(f'UPDATE part{no} SET "first" = "first" + o.off, lo = lo + o.off, hi = '
                    f"hi + o.off FROM (SELECT {V.KEYS}, hi + 1 AS off FROM seen) o WHERE "
                    f"({', '.join(f'part{no}.{k}' for k in keys)}) = "
                    f"({', '.join(f'o.{k}' for k in keys)})")
    _pk_view(con, no)
    if _overlaps(con, no, got.kind):
        return "a question of it is in an earlier input too, which only the exact path reads"
    if got.kind == "samples" and V.counts_clash(con, no):
        return "it has samples of a question a counts input gave"
    V.admit(con, no, got.kind)
    return None


ON_TIMEOUT = ("error", "false", "skip")


def _checked_table(paths, *, on_error, on_timeout="error", **kw):
    """:func:`_run` with the checks of a whole call: ``on_error`` known; every row rejected
    (``on_error="skip"``) an error, never a summary without rows (it could not be read back);
    one warning per file with rejected rows ("FILE: r of n rows rejected (reasons)"). Returns
    (the table in :func:`leash.summary.summary_schema`, provenance).
    """
    import warnings

    if on_error not in V.ON_ERROR:
        raise LeashValueError(param="on_error", value=on_error,
                              constraint=f"one of {V.ON_ERROR}")
    if on_timeout not in ON_TIMEOUT:
        raise LeashValueError(param="on_timeout", value=on_timeout,
                              constraint=f"one of {ON_TIMEOUT}")
    with _settled_timeouts(V.as_paths(paths), on_timeout) as (paths, renamed, settled):
        if renamed and kw.get("cluster") is not None:
            first = next(iter(renamed.values()))
            warnings.warn(LeashWarning(
                f"{first}: its samples without a verdict are settled (",
                Param("on_timeout", value=on_timeout), ") in a copy in a temporary folder of "
                "this machine; every input is summarized in this process, not on the cluster.",
                file=first), stacklevel=4)
            kw["cluster"] = None
        table, prov = _run(paths, on_error=on_error, **kw)
    if renamed:
        prov = json.loads(_renamed(json.dumps(prov), renamed))
    if settled:
        prov["timeouts"] = {"on_timeout": on_timeout, "files": settled}
    if prov["rows_read"] and not prov["questions"]:
        files = [f["path"] for f in prov["files"]]
        raise LeashValueError(
            f"{', '.join(files)}: all {prov['rows_read']} rows rejected "
            f"({prov['rejected_by_reason']}); nothing is left to summarize.", file=files[0],
            hint=("Run ", Call("leash_eval.validate.validate", "path"),
                  " to list every problem."))
    for f in prov["files"]:
        if f["rows_rejected"]:
            warnings.warn(LeashWarning(
                f"{f['path']}: {f['rows_rejected']} of {f['rows_read']} rows rejected "
                f"({f['rejected_by_reason']});", file=f["path"], hint=(
                    Api("see attrs['provenance']; "), Call("leash_eval.validate.validate",
                                                           "path"), " lists them.")),
                stacklevel=4)
    return table.cast(summary_schema()), prov


@contextmanager
def _settled_timeouts(paths, on_timeout):
    """The rescored files among ``paths`` (a ``timeout`` column: :mod:`leash_eval.rescore`)
    whose samples have no verdict since math-verify timed out twice: an error naming the file
    and the count (``on_timeout="error"``), else a copy (DuckDB, streaming, in a temporary
    folder) where they are wrong (``"false"``) or left out (``"skip"``). Yields the paths to
    read, ``{copy: original}`` and ``{original: count}``.
    """
    import tempfile

    renamed, settled, out, con = {}, {}, [], None
    with tempfile.TemporaryDirectory(prefix="leash-timeouts-") as tmp:
        for p in paths:
            src = _timeout_source(p)
            con = con or (F.connect() if src else None)
            n = _count_timeouts(con, src) if src else 0
            if not n:
                out.append(p)
                continue
            if on_timeout == "error":
                raise LeashValueError(
                    f"{p}: {n} sample(s) have no verdict: math-verify timed out grading them, "
                    "twice (leash rescore leaves such a sample's correct empty).", file=str(p),
                    key="timeout", value=n, param="on_timeout", hint=(
                        "Rescore the file on a less loaded machine, or pass ",
                        Param("on_timeout", value="false"), " (count them as wrong) or ",
                        Param("on_timeout", value="skip"), " (leave them out)."))
            copy = Path(tmp) / f"{len(out)}-{Path(p).name}"
            fix = ("WHERE NOT coalesce(timeout, false)" if on_timeout == "skip" else "")
            keep = ("" if on_timeout == "skip" else
                    " REPLACE (CASE WHEN timeout THEN false ELSE correct END AS correct)")
            fmt = "PARQUET" if copy.suffix in (".parquet", ".pq") else "JSON"
            con.execute(f"COPY (SELECT * EXCLUDE (timeout){keep} FROM {src} {fix}) "
                        f"TO {F.sql_str(copy)} (FORMAT {fmt})")
            renamed[str(copy)] = str(p)
            settled[str(p)] = n
            out.append(copy)
        yield out, renamed, settled


def _timeout_source(path) -> str | None:
    """DuckDB's relation of a rescored samples file (``.parquet``/``.pq``/``.jsonl``), or
    None when ``path`` is not one (no ``timeout`` column in its schema or first line).
    """
    import stat

    p = Path(path)
    name = p.name.lower()
    try:
        if not stat.S_ISREG(p.stat().st_mode):  # a FIFO would block: the reader refuses it
            return None
        if name.endswith((".parquet", ".pq")):
            import pyarrow.parquet as pq

            if "timeout" not in pq.read_schema(p).names:
                return None
            return f"read_parquet({F.sql_str(p)})"
        if name.endswith(".jsonl"):
            with open(p, "rb") as fh:
                first = fh.readline(1 << 20)
            if b'"timeout"' not in first:
                return None
            return f"read_json({F.sql_str(p)}, format='newline_delimited')"
    except (OSError, ValueError):
        return None  # the reader names what is wrong with the file
    return None


def _count_timeouts(con, src: str) -> int:
    try:
        return int(con.execute(
            f"SELECT count_if(timeout) FROM {src}").fetchone()[0] or 0)
    except Exception:  # duckdb.Error and others: the reader names what is wrong
        return 0


def _renamed(text: str, renamed: dict) -> str:
    for copy, orig in renamed.items():
        text = text.replace(json.dumps(copy)[1:-1], json.dumps(orig)[1:-1])
    return text


def _checked_frame(paths, **kw):
    return _to_frame(*_checked_table(paths, **kw))


def _with_provenance(table, provenance: dict):
    return table.replace_schema_metadata(
        {SUMMARY_METADATA_KEY: json.dumps(provenance).encode()})


def table_provenance(table) -> dict:
    """The provenance a table of :func:`summary_table` carries (``{}`` if none)."""
    return json.loads((table.schema.metadata or {}).get(SUMMARY_METADATA_KEY, b"{}"))


def summary_table(paths, *, summaries=False, **kw):
    """The summary of :func:`summarize` as a pyarrow Table, without pandas.

    Parameters
    ----------
    paths : str, os.PathLike or list of them
        As in :func:`summarize`.
    summaries : bool, default False
        Also accept summary files, as :func:`load_counts` does.
    **kw
        The keyword arguments of :func:`summarize` except ``out`` (``cluster`` too).

    Returns
    -------
    pyarrow.Table, shape (n_questions, 16)
        In :func:`leash.summary.summary_schema`; the provenance is JSON in the schema metadata under
        ``leash.summary`` (as in a summary file). :func:`summary_frame` makes it a frame.
    """
    kw.setdefault("on_error", "raise")
    kw.setdefault("na", "class")
    kw.setdefault("chunk_size", 250_000)
    for name in ("fmt", "model", "benchmark", "step", "mapping", "reader_options", "cluster"):
        kw.setdefault(name, None)
    return _with_provenance(*_checked_table(paths, allow_summary=summaries, **kw))


def summary_frame(table):
    """The summary frame of a table of :func:`summary_table` (``attrs["provenance"]`` from its
    metadata).
    """
    return _to_frame(table, table_provenance(table))


def concat_summaries(tables):
    """Tables of :func:`summary_table` as one, in order; a question in two of them (the same
    model, benchmark, question_id and step) is a ValueError naming the first three.

    Parameters
    ----------
    tables : list of pyarrow.Table

    Returns
    -------
    pyarrow.Table
        The rows of every table; its provenance is ``{"parts": [each table's provenance]}``.
    """
    import duckdb
    import pyarrow as pa

    if len(tables) == 1:
        return tables[0]
    parts = [table_provenance(t) for t in tables]
    table = pa.concat_tables([t.replace_schema_metadata(None) for t in tables])
    con = duckdb.connect()
    con.register("t", table.select(list(KEY_COLUMNS)))
    keys = ", ".join(KEY_COLUMNS)
    dup = con.execute(f"SELECT {keys}, count(*) OVER () FROM (SELECT {keys}, min(r) AS r FROM "
                      f"(SELECT *, row_number() OVER () AS r FROM t) GROUP BY ALL HAVING "
                      "count(*) > 1) ORDER BY r").fetchall()
    if dup:
        first = [dict(zip(KEY_COLUMNS, d[:4])) for d in dup[:3]]
        raise LeashValueError(f"{dup[0][4]} questions appear in more than one input (first: "
                              f"{first});", param="tables", value=first[0],
                              hint="pass each question once.")
    return _with_provenance(table, {"parts": parts})


def _to_frame(table, provenance: dict | None):
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    df = table.cast(summary_schema()).to_pandas(
        types_mapper={pa.string(): pd.StringDtype(), pa.int64(): pd.Int64Dtype()}.get)
    for col in ("n", "c"):
        df[col] = df[col].astype(np.int64)
    df.attrs["provenance"] = provenance or {}
    return df


def write_summary(frame, path) -> None:
    """Write a summary frame as Parquet with its provenance in the schema metadata.

    Parameters
    ----------
    frame : pandas.DataFrame, shape (n_questions, 16), or pyarrow.Table
        The summary columns (:data:`leash.summary.SUMMARY_COLUMNS`) and at least one row (a summary
        without
        rows could not be read back: a ValueError, as a missing column); a table of
        :func:`summary_table` is written as it is.
    path : str or os.PathLike
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = frame.column_names if isinstance(frame, pa.Table) else frame.columns
    if missing := [c for c in SUMMARY_COLUMNS if c not in names]:
        raise LeashValueError(Param("frame"), f" lacks summary columns {missing}.")
    if not len(frame):
        raise LeashValueError(Param("frame"), f" has no rows; {path} is not written, since a "
                              "summary without rows could not be read back.", file=path)
    if isinstance(frame, pa.Table):
        table = frame.select(list(SUMMARY_COLUMNS)).cast(summary_schema())
        table = _with_provenance(table, table_provenance(frame))
    else:
        table = _with_provenance(_frame_table(frame), frame.attrs.get("provenance", {}))
    with replacing(path) as tmp:  # whole or not at all: a kill or a full disk keeps the old file
        pq.write_table(table, tmp)


def _frame_table(frame):
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    schema, cols = summary_schema(), {}
    frame = frame.copy(deep=False)
    frame.attrs = {}  # pandas deep-copies attrs (the provenance) on every column it hands out
    for f in schema:
        s = frame[f.name]
        if pa.types.is_list(f.type):
            cols[f.name] = pa.array([None if (v is None or (np.isscalar(v) and pd.isna(v)))
                                     else list(v) for v in s.tolist()], type=f.type)
        else:
            cols[f.name] = pa.array(s.astype(object).where(s.notna(), None).tolist(), type=f.type)
    return pa.table(cols, schema=schema)


def read_summary(path):
    """Read a summary Parquet file written by :func:`summarize` or :func:`write_summary`.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        The summary frame, ``attrs["provenance"]`` the stored provenance. Not a summary file,
        or a row breaking the counts rules, is a ValueError (naming row group and row).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    F.check_regular_file(path)  # a FIFO would block the read
    try:  # the one read of the file: its footer, then the summary columns
        with pq.ParquetFile(path) as pf:
            schema = pf.schema_arrow
            meta = (schema.metadata or {}).get(SUMMARY_METADATA_KEY)
            missing = [c for c in SUMMARY_COLUMNS if c not in schema.names]
            table = None if meta is None or missing else pf.read(columns=list(SUMMARY_COLUMNS))
    except (pa.ArrowException, OSError, EOFError) as exc:
        raise F.unreadable(path, exc) from None
    if table is None:
        what = "provenance metadata" if meta is None else f"columns {missing}"
        raise ValueError(f"{path} is not a leash summary file (missing {what}).")
    # the counts rules of every input, on the table just read: a summary is not trusted
    # because leash wrote it
    _run([path], fmt="summary", model=None, benchmark=None, step=None, mapping=None,
         chunk_size=250_000, on_error="raise", na="class", allow_summary=True, contents=table,
         finish=False)
    try:
        table = table.select(list(SUMMARY_COLUMNS)).cast(summary_schema())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise ValueError(f"{path}: a column does not have the type of a leash summary "
                         f"({exc}).") from None
    return _to_frame(table, json.loads(meta))


def summarize(paths, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
              chunk_size=250_000, out=None, na="class", on_error="raise", reader_options=None,
              on_timeout="error", cluster=None):
    """Summarize generation files into the per-question summary frame.

    Parameters
    ----------
    paths : str, os.PathLike or list of them
        Samples, counts, evaluator or nested files (any mix), read in order; without a
        per-sample index a later file's samples follow an earlier file's (seed files).
    fmt : str, optional
        Format of every file (:data:`leash_eval.formats.FORMATS`); default: detected.
    model, benchmark : str, optional
        Labels for files without them (required for the evaluator format); a given label
        replaces the file's, and the provenance says so.
    step : int, optional
        Checkpoint label for every row (e.g. ``step=100`` for a trajectory file).
    mapping : str, dict or NestedMapping, optional
        Field mapping of nested layouts (a name of :data:`leash_eval.formats.MAPPINGS` or a YAML
        file of field paths, ``data/README.md`` section 4b).
    chunk_size : int, default 250_000
        Rows per batch of the exact readers; DuckDB's memory is ``LEASH_MEMORY_LIMIT``
        (default 2GB; it spills to a temporary folder beyond).
    out : str or os.PathLike, optional
        Also write the summary here (Parquet, provenance in the metadata; not when it raises).
    na : {"class", "truncated"}, default "class"
        The NA rule of answer entropy (:data:`leash.core.entropy.NA_RULES`): "class" counts samples
        without an extracted answer (missing, empty or "NA") as "answer missing"; "truncated"
        also those with ``finish_reason == "length"`` (the paper's "NA for incomplete
        outputs", App. B.4).
    on_error : {"raise", "skip"}, default "raise"
        "raise": the first invalid row is a ValueError naming file, line/row, field and value;
        "skip": invalid rows are rejected and counted per reason, with a warning per file
        (every row rejected is an error).
    reader_options : dict, optional
        Options of an evaluator's reader, e.g. ``{"filter": "strict-match"}`` for lm-eval.
    on_timeout : {"error", "false", "skip"}, default "error"
        Samples of a rescored file without a verdict (math-verify timed out twice,
        :mod:`leash_eval.rescore`): an error with their count, counted as wrong, or left out
        (the provenance's ``timeouts`` says which and how many).
    cluster : str, optional
        The address of a cluster (:mod:`leash_eval.cluster`: ``"ray"``, ``"ray://HOST:10001"``
        or a Dask scheduler's): each file (a partition of a folder of them, say) is read by a
        worker, which sends back its per-question partial counts (n, c, the first correct
        sample index, answer counts, token sums), merged here exactly, in input order: the
        summary of one process, byte for byte. The workers read the files at the same paths
        (a shared filesystem). When a file is not vouched for on its own (a row the rules
        reject, a duplicate) or the files overlap or leave gaps in a question's sample
        indices, every file is read in this process instead, with a warning saying why.

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        The summary frame; ``attrs["provenance"]``: rows read / used / rejected per file and
        reason, the readers and the parameters. Bad rows, undetectable formats, missing labels
        or an evaluator file without correctness (rescore it first) are ValueErrors.
    """
    frame = _checked_frame(paths, fmt=fmt, model=model, benchmark=benchmark, step=step,
                           mapping=mapping, chunk_size=chunk_size, on_error=on_error, na=na,
                           reader_options=reader_options, on_timeout=on_timeout,
                           cluster=cluster)
    if out is not None:
        write_summary(frame, out)
    return frame


def load_counts(paths, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
                chunk_size=250_000, na="class", on_error="raise", reader_options=None,
                on_timeout="error"):
    """Load per-question counts from samples, counts or summary files alike.

    Parameters
    ----------
    paths : str, os.PathLike or list of them
        Generation files and summary files, any mix, through the same rules and duplicate
        check (a summary's rows through the counts rules; it keeps its answer columns).
    fmt, model, benchmark, step, mapping, chunk_size, na, on_error, reader_options, on_timeout
        As in :func:`summarize` (a summary made under another ``na`` with truncated samples
        is refused).

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        One summary frame in the order read; ``attrs["provenance"]`` lists every file (a
        summary's own under ``"stored_provenance"``). Errors as :func:`summarize`.
    """
    return _checked_frame(paths, fmt=fmt, model=model, benchmark=benchmark, step=step,
                          mapping=mapping, chunk_size=chunk_size, on_error=on_error, na=na,
                          allow_summary=True, reader_options=reader_options,
                          on_timeout=on_timeout)
