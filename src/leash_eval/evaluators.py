"""Readers for the files evaluators write (lm-evaluation-harness, lighteval, evalscope, vLLM).

Each reader only *translates a layout* into DuckDB rows in leash's canonical per-sample columns;
the rules and the aggregation are :mod:`leash_eval.formats` and :mod:`leash_eval.summarize`.
``data/README.md`` ("Evaluator files") documents each layout and the upstream file writing it.
Each format is declared in :data:`READERS` (:class:`leash_eval.readers.InputFormat`: its reader,
a lazy relation of :data:`RELATION_COLUMNS`, its detection and options); :func:`translate_error`
makes a layout error raised while a relation runs (a ``duckdb.Error`` whose text is the one-line
message naming file, line and field) one line.

JSON lines are read as lines of text (``read_csv``, one VARCHAR column, no quoting) and parsed
with DuckDB's JSON functions, because ``read_json`` does not say which line a record came from:
blank lines count, and ``line`` is the line an editor shows. The queries stream (no join, no
materialized CTE; samples expanded with ``unnest`` in the SELECT list), so memory is set by
DuckDB's buffers, not by the file (except an evalscope file without ``generation_index``, whose
samples are ranked with a window). Lines are at most 8 MiB.
"""

from __future__ import annotations

import re
from pathlib import Path

from leash_eval.readers import InputFormat, ReaderOption

__all__ = ["READERS", "RELATION_COLUMNS", "rows_relation", "translate_error"]

RELATION_COLUMNS = ("line", "model", "benchmark", "question_id", "sample_idx", "correct",
                    "response", "gold", "answer", "finish_reason", "n_tokens", "step")

# The longest JSON line read (DuckDB's 2 MiB default is less than one lm-eval record of 64 long
# chain-of-thought repeats) and DuckDB's read buffer. The line limit costs memory even for short
# lines: with DuckDB 2.0 on two threads, files of 113 MB and 450 MB are read within a 500 MB
# memory_limit with 8 MiB, not 16 MiB (flat in file size). A longer line is refused by number.
_MAX_LINE = 1 << 23
_BUF = 1 << 25


# --- detection -------------------------------------------------------------------------------
def _is_lm_eval(keys, first):
    return first is not None and {"doc_id", "resps", "filtered_resps"} <= keys


def _is_evalscope(keys, first):
    return (first is not None and {"index", "sample_score"} <= keys
            and isinstance(first.get("sample_score"), dict)
            and "score" in first["sample_score"])


def _is_openai_batch(keys, first):
    # `response` is an object (or null for a failed request): a canonical samples file may hold
    # a `response` *text* column beside a `custom_id`, and must not be taken for a batch file.
    return (first is not None and {"custom_id", "response"} <= keys
            and (first.get("response") is None or isinstance(first["response"], dict)))


def _is_lighteval(keys, first):
    return first is None and ({"doc", "model_response", "metric"} <= keys
                              or {"example", "predictions", "metrics"} <= keys)


def rows_relation(con, path, rows: list[dict], name: str):
    """A relation of :data:`RELATION_COLUMNS` over rows built in Python (the readers of whole
    documents): each row a dict of some of the columns, the others NULL.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
    path : path-like
        The file read (names the view, so two files on one connection do not meet).
    rows : list of dict
    name : str
        The view's prefix.
    """
    import hashlib

    import pyarrow as pa

    types = {"line": pa.int64(), "sample_idx": pa.int64(), "n_tokens": pa.int64(),
             "correct": pa.bool_(), "step": pa.int64()}
    table = pa.table({c: pa.array([r.get(c) for r in rows], type=types.get(c, pa.string()))
                      for c in RELATION_COLUMNS})
    view = f"{name}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    con.register(view, table)
    return con.sql(f"SELECT * FROM {view}")


# --- SQL building blocks ---------------------------------------------------------------------
def _lit(value) -> str:
    """A SQL literal for a Python string (or NULL)."""
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"


def _fail(path: Path, *parts: str) -> str:
    """SQL raising ``<path>: line <line>: <parts...>`` (SQL expressions; ``concat`` skips
    NULLs, so a missing value cannot blank the message).
    """
    return f"error(concat({_lit(f'{path}: line ')}, line, ': ', {', '.join(parts)}))"


def _show(expr: str, width: int = 80) -> str:
    """SQL: a short preview of a JSON value for a message (``missing`` for SQL NULL)."""
    return (f"coalesce(CASE WHEN length(CAST({expr} AS VARCHAR)) > {width} "
            f"THEN left(CAST({expr} AS VARCHAR), {width}) || '...' "
            f"ELSE CAST({expr} AS VARCHAR) END, 'missing')")


def _records(path: Path, paths: list[str]) -> str:
    """SQL CTEs ``lines`` and ``recs``: a row per non-blank line, ``v[i]`` the JSON value at
    ``paths[i-1]`` (SQL NULL: absent). A line that is not JSON, or whose object holds a key
    twice (DuckDB would read the first, Python's ``json`` the last), stops the query, naming it.
    """
    blank = f"trim(j, {_lit(' ' + chr(9) + chr(13))}) = ''"
    return f"""
lines AS (SELECT ordinality AS line, j
    FROM read_csv({_lit(path)}, columns = {{'j': 'VARCHAR'}}, delim = '\\0', quote = '',
                  escape = '', header = false, auto_detect = false, skip = 0,
                  max_line_size = {_MAX_LINE}, buffer_size = {_BUF}) WITH ORDINALITY
),
recs AS (SELECT line,
           CASE WHEN NOT json_valid(j) THEN {_fail(path, "'malformed JSON: ', " + _show('j', 60))}
                WHEN json_type(j) = 'OBJECT' AND {_TWICE} THEN {_fail(
                    path, "'the key ', " + _show(_TWICE_KEY, 40) + ", ' appears twice in the "
                    "record (which value is meant is ambiguous)'")}
                ELSE json_extract(j, [{', '.join(_lit(p) for p in paths)}]) END AS v
    FROM lines WHERE j IS NOT NULL AND NOT {blank}
)"""


# a key twice at the top level of a record, and the first such key
_TWICE = "len(json_keys(j)) <> len(list_distinct(json_keys(j)))"
_TWICE_KEY = "list_filter(json_keys(j), lambda k, i: list_position(json_keys(j), k) < i)[1]"


_ID_TYPES = "('UBIGINT', 'BIGINT', 'VARCHAR')"

# Samples are expanded with unnest() calls in the SELECT list: several of them in one SELECT are
# unnested side by side (a shorter or NULL list is padded with NULLs), and DuckDB streams them.
# A lateral `FROM t, unnest(t.list)` would be planned as a join over the materialized input,
# holding the whole file in memory.
_NUM_TYPES = "('UBIGINT', 'BIGINT', 'DOUBLE')"


def _run(con, path: Path, query: str):
    """Run a small eager query (a pre-scan), turning DuckDB errors into ValueErrors."""
    import duckdb

    try:
        return con.sql(query).fetchall()
    except duckdb.Error as exc:
        raise translate_error(exc, path) from None


def translate_error(exc: Exception, path: Path) -> ValueError:
    """The one-line ValueError for a DuckDB error raised while an evaluator relation runs.

    Parameters
    ----------
    exc : Exception
        The ``duckdb.Error`` raised by fetching (or aggregating) a :func:`relation`.
    path : Path
        The file the relation reads.

    Returns
    -------
    ValueError
        Naming the file, the line and the field (or the first line of DuckDB's own text).
    """
    text = re.sub(r"^(Invalid Input|Conversion|Binder) Error: ", "", str(exc), count=1)
    if text.startswith(f"{path}: "):
        return ValueError(text.splitlines()[0])
    m = re.search(r"CSV Error on Line: (\d+)", text)
    if m and "unicode" in text.lower():
        return ValueError(f"{path}: line {m.group(1)}: text that is not valid UTF-8; leash "
                          "reads evaluator files as UTF-8 JSON lines.")
    if m and "Maximum line size" in text:
        return ValueError(f"{path}: line {m.group(1)}: a line longer than "
                          f"{_MAX_LINE >> 20} MiB, the most leash reads in one JSON line.")
    first = text.splitlines()[0] if text else type(exc).__name__
    return ValueError(f"{path}: {first}")


def _select(**cols: str) -> str:
    """The final SELECT list, in RELATION_COLUMNS order and types (absent columns NULL)."""
    typ = {"line": "BIGINT", "sample_idx": "BIGINT", "n_tokens": "BIGINT", "correct": "BOOLEAN",
           "step": "BIGINT"}
    return ", ".join(f"CAST({cols.get(c, 'line' if c == 'line' else 'NULL')} AS "
                     f"{typ.get(c, 'VARCHAR')}) AS {c}" for c in RELATION_COLUMNS)


# The date_id lm-evaluation-harness and lighteval put in file names:
# datetime.now().isoformat().replace(":", "-"), e.g. 2025-01-15T10-20-30.123456.
_DATE_ID = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"


# --- lm-evaluation-harness: samples_<task>_<date>.jsonl --------------------------------------
# lm-eval's RegexFilter puts this in filtered_resps when its pattern does not match.
_LM_EVAL_NO_MATCH = "[invalid]"


def _lm_eval(con, path: Path, options: dict):
    """lm-evaluation-harness ``--log_samples`` records, one row per (document, repeat).

    A record is a (document, filter) pair: ``resps == [[r1, ..., rK]]`` (K repeats, the same
    under every filter), ``filtered_resps == [f]``, ``f`` one string (e.g. ``take_first``) or K
    strings (every repeat kept). One filter is read: ``options["filter"]``, else the only one,
    else the only one keeping every repeat; otherwise the file is refused, naming them.
    """
    m = re.fullmatch(rf"samples_(.+)_{_DATE_ID}\.jsonl(?:\.gz)?", path.name)
    benchmark = _lit(m.group(1)) if m else "NULL"
    recs = _records(path, ["$.doc_id", "$.target", "$.resps", "$.filtered_resps", "$.filter"])

    # Pre-scan: which filters the file holds, and whether each keeps all repeats in every record.
    keeps = """CASE json_type(v[4], '$[0]')
                   WHEN 'ARRAY'
                       THEN json_array_length(v[4], '$[0]') = json_array_length(v[3], '$[0]')
                   WHEN 'VARCHAR' THEN json_array_length(v[3], '$[0]') = 1
                   ELSE false END"""
    rows = _run(con, path, f"""WITH {recs}
        SELECT json_extract_string(v[5], '$') AS f, bool_and(coalesce({keeps}, false)), min(line)
        FROM recs GROUP BY f ORDER BY min(line)""")
    filters, keepers = [r[0] for r in rows], [r[0] for r in rows if r[1]]

    def names(fs):
        return ", ".join("(unnamed)" if f is None else f for f in fs) or "none"

    chosen = options.get("filter")
    if chosen is not None:
        if chosen not in filters:
            raise ValueError(f"{path}: --filter {chosen} is not in the file; filters present: "
                             f"{names(filters)}.")
    elif len(filters) == 1:
        chosen = filters[0]
    elif len(keepers) == 1:
        chosen = keepers[0]
    elif filters:
        raise ValueError(f"{path}: {len(filters)} filters present ({names(filters)}; keeping "
                         f"all repeats: {names(keepers)}); choose one with --filter NAME.")
    if chosen is None and any(f is not None for f in filters):
        raise ValueError(f"{path}: some records name no filter; filters present: "
                         f"{names(filters)}.")

    doc_id, target, resps, fres = "v[1]", "v[2]", "v[3]", "v[4]"
    resp_types = f"json_type({resps}, '$[0][*]')"
    # The filtered output of a repeat is its extracted answer when the filter kept one output
    # per repeat, unless it is lm-eval's no-match placeholder or the response itself (a filter
    # that changed nothing, such as the default `take_first`, extracted nothing).
    answer = f"""CASE WHEN kept <> {_lit(_LM_EVAL_NO_MATCH)} AND kept IS DISTINCT FROM resp
                      THEN kept END"""
    columns = _select(model="NULL", benchmark=benchmark, question_id="question_id",
                      sample_idx="k", response="resp", gold="gold", answer=answer)
    query = f"""WITH {recs},
picked AS (SELECT * FROM recs
            WHERE json_extract_string(v[5], '$') IS NOT DISTINCT FROM {_lit(chosen)}),
checked AS (SELECT line,
        CASE WHEN json_type({doc_id}) IN {_ID_TYPES} THEN json_extract_string({doc_id}, '$')
             ELSE {_fail(path, "'field ''doc_id'' must be an integer or a string, found ', "
                                + _show(doc_id))} END AS question_id,
        json_extract_string({target}, '$') AS gold,
        CASE WHEN {resps} IS NULL THEN {_fail(path, "'field ''resps'' is missing'")}
             WHEN json_type({resps}) <> 'ARRAY' OR json_array_length({resps}) <> 1 THEN
                {_fail(path, "'field ''resps'' must hold one request ([[r1, ..., rK]]), found ', "
                       + _show(resps) + ", ' (leash reads generate_until tasks, not "
                       "loglikelihood or multiple-choice ones)'")}
             WHEN json_type({resps}, '$[0]') <> 'ARRAY' OR json_array_length({resps}, '$[0]') = 0
                  OR list_distinct({resp_types}) <> ['VARCHAR'] THEN
                {_fail(path, "'field ''resps[0]'' must be a non-empty list of response strings, "
                       "found ', " + _show(f"json_extract({resps}, '$[0]')"))}
             ELSE from_json({resps}, '[["VARCHAR"]]')[1] END AS reps,
        CASE json_type({fres}, '$[0]')
             WHEN 'VARCHAR' THEN [json_extract_string({fres}, '$[0]')]
             WHEN 'ARRAY' THEN from_json({fres}, '[["VARCHAR"]]')[1] END AS kept FROM picked),
expanded AS (SELECT line, question_id, gold,
           unnest(reps) AS resp, unnest(range(len(reps))) AS k,
           unnest(CASE WHEN len(kept) = len(reps) THEN kept END) AS kept FROM checked)
SELECT {columns} FROM expanded"""
    return con.sql(query)


# --- lighteval: details_<task>_<date>.parquet ------------------------------------------------
def _pa():
    import pyarrow as pa

    return pa.types


def _fields(typ) -> dict:
    """Field name -> Arrow type of a struct type ({} for any other type)."""
    return {f.name: f.type for f in typ} if _pa().is_struct(typ) else {}


def _list_depth(typ, leaf) -> int:
    """How many list levels wrap a ``leaf``-typed value (-1 when the leaf test fails)."""
    depth = 0
    while _pa().is_list(typ) or _pa().is_large_list(typ):
        typ, depth = typ.value_type, depth + 1
    return depth if leaf(typ) else -1


def _is_text(typ) -> bool:
    return _pa().is_string(typ) or _pa().is_large_string(typ)


def _is_int(typ) -> bool:
    return _pa().is_integer(typ)


def _lighteval_labels(path: Path):
    """(model, task) from lighteval's path ``details/<model>/<date>/details_<task>_<date>``."""
    m = re.fullmatch(rf"details_(.+)_({_DATE_ID})\.parquet", path.name)
    if not m:
        return None, None
    (task, date), parts, model = m.groups(), path.parent.parts, None
    if path.parent.name == date and "details" in parts[:-1]:
        start = len(parts) - 1 - parts[:-1][::-1].index("details")
        if start < len(parts) - 1:
            model = "/".join(parts[start:-1])
    return model, task


def _lighteval(con, path: Path, options: dict):
    """Lighteval details, current (``doc``/``model_response``/``metric``) or pre-2025-06 flat.

    A row per document; its samples are ``model_response.text`` or ``predictions``. The
    question id is ``doc.id`` (the document's index in its split); the flat layout has none,
    so there it is the row's position (the same document only for the same task version).
    """
    import pyarrow.parquet as pq

    try:  # the footer only
        schema = pq.read_schema(path)
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise ValueError(f"{path}: cannot read the Parquet schema ({exc}).") from None
    cols = {f.name: f.type for f in schema}
    if len(cols) < len(schema.names):  # which of two columns of one name is meant?
        twice = next(n for i, n in enumerate(schema.names) if n in schema.names[:i])
        raise ValueError(f"{path}: column {twice!r} appears twice; which one is meant is "
                         "ambiguous: rename or drop one.")
    model, task = _lighteval_labels(path)
    src = f"read_parquet({_lit(path)}, file_row_number = true)"
    if {"doc", "model_response"} <= set(cols):
        doc, mr = _fields(cols["doc"]), _fields(cols["model_response"])
        if not doc or not mr:
            raise ValueError(f"{path}: columns 'doc' and 'model_response' must be structs, "
                             f"found {cols['doc']} and {cols['model_response']}.")
        if "text" not in mr:
            raise ValueError(f"{path}: column 'model_response' has no field 'text' (fields: "
                             f"{', '.join(sorted(mr))}).")
        if _list_depth(mr["text"], _is_text) != 1:
            raise ValueError(f"{path}: field 'model_response.text' is {mr['text']}, not a list "
                             "of strings (one per sample).")
        qid = ("CASE WHEN doc.id IS NULL OR doc.id = '' THEN "
               + _fail(path, "'field ''doc.id'' is empty'") + " ELSE doc.id END"
               if "id" in doc and _is_text(doc["id"]) else "CAST(file_row_number AS VARCHAR)")
        bench = (f"coalesce(nullif(doc.task_name, ''), {_lit(task)})"
                 if "task_name" in doc and _is_text(doc["task_name"]) else _lit(task))
        texts, what = "model_response.text", "model_response.text"
        per_sample_tokens = ("output_tokens" in mr
                             and _list_depth(mr["output_tokens"], _is_int) == 2)
        toks = ("CASE WHEN len(model_response.output_tokens) = len(model_response.text) "
                "THEN model_response.output_tokens END" if per_sample_tokens else "NULL")
        gold = _choice_gold(doc)
    elif {"example", "predictions"} <= set(cols):
        if _list_depth(cols["predictions"], _is_text) != 1:
            raise ValueError(
                f"{path}: column 'predictions' is {cols['predictions']}, not a list of strings "
                "(lighteval before 2025-02-25 wrote every details field as Python text, which "
                "leash does not parse; re-save the details with a newer lighteval).")
        qid = "CAST(file_row_number AS VARCHAR)"
        bench = _lit(task)
        texts, what = "predictions", "predictions"
        gold = ("gold[1]" if "gold" in cols and _list_depth(cols["gold"], _is_text) == 1
                else "NULL")
        # cont_tokens = [o.generated_tokens for o in outputs]: one output per generative
        # document, holding one token list per sample.
        per_sample_tokens = ("cont_tokens" in cols
                             and _list_depth(cols["cont_tokens"], _is_int) == 3)
        toks = ("CASE WHEN len(cont_tokens) = 1 AND len(cont_tokens[1]) = len(predictions) "
                "THEN cont_tokens[1] END" if per_sample_tokens else "NULL")
    else:
        raise ValueError(f"{path}: not a lighteval details file: it needs the columns doc and "
                         "model_response (lighteval since 2025-06) or example and predictions "
                         f"(before); columns found: {', '.join(sorted(cols))}.")
    empty = _fail(path, f"'field ''{what}'' is empty (no generations; leash reads generative "
                        "tasks)'")
    columns = _select(model=_lit(model), benchmark="benchmark", question_id="question_id",
                      sample_idx="k", response="t", gold="gold", n_tokens="len(tk)")
    query = f"""WITH checked AS (
    SELECT file_row_number + 1 AS line, {qid} AS question_id, {gold} AS gold,
           {bench} AS benchmark, {toks} AS toks,
           CASE WHEN {texts} IS NULL OR len({texts}) = 0 THEN {empty} ELSE {texts} END AS texts
    FROM {src}
),
expanded AS (SELECT line, question_id, gold, benchmark,
           unnest(texts) AS t, unnest(range(len(texts))) AS k, unnest(toks) AS tk FROM checked)
SELECT {columns} FROM expanded"""
    return con.sql(query)


def _choice_gold(doc_fields: dict) -> str:
    """SQL: lighteval's gold answer ``doc.choices[doc.gold_index]`` (the first of several)."""
    if "choices" not in doc_fields or "gold_index" not in doc_fields:
        return "NULL"
    if _list_depth(doc_fields["gold_index"], _is_int) == 1:
        return "doc.choices[doc.gold_index[1] + 1]"
    return "doc.choices[doc.gold_index + 1]"


# --- evalscope: reviews/<model>/<benchmark>_<subset>.jsonl -----------------------------------
# evalscope's ScoreStatus values whose score may enter aggregation (evalscope/constants.py);
# any other status means "no usable score", which leash reads as correct = NULL.
_EVALSCOPE_USABLE = ("success", "fallback")


def _first_record(path: Path):
    """The first non-blank line of a (possibly gzipped) JSON-lines file, parsed, or None (a
    line longer than the longest read is a ValueError naming it).
    """
    import json

    from leash_eval.documents import first_line

    try:
        rec = json.loads(first_line(path, _MAX_LINE) or b"null")
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def _evalscope(con, path: Path, options: dict):
    """Evalscope review records, one row per (sample, repeat); correctness from ``score``.

    ``question_id`` is ``sample_score.group_id`` (one per question's k repeats), else
    ``sample_id``; ``sample_idx`` is ``generation_index`` when the first record has it
    (evalscope since 2026-08), else the rank of ``sample_id`` in the group (repeats are
    numbered consecutively, ``group_id = sample_id // repeats``).
    """
    model = benchmark = None
    if path.parent.parent.name == "reviews":
        model = path.parent.name
        benchmark = re.sub(r"\.jsonl(\.gz)?$", "", path.name)
    first = _first_record(path) or {}
    has_gen_index = "generation_index" in (first.get("sample_score") or {})
    recs = _records(path, ["$.target", "$.sample_score", "$.sample_score.sample_id",
                           "$.sample_score.group_id", "$.sample_score.generation_index",
                           "$.sample_score.score.value", "$.sample_score.score.main_score_name",
                           "$.sample_score.score.status", "$.sample_score.score.prediction",
                           "$.sample_score.score.extracted_prediction"])
    target, ss, sid, gid, gen, value, main, status, pred, extracted = (
        f"v[{i}]" for i in range(1, 11))
    qid = f"""CASE WHEN {ss} IS NULL OR json_type({ss}) <> 'OBJECT' THEN
                  {_fail(path, "'field ''sample_score'' must be an object, found ', " + _show(ss))}
              WHEN json_type({gid}) IN {_ID_TYPES} THEN json_extract_string({gid}, '$')
              WHEN json_type({sid}) IN {_ID_TYPES} THEN json_extract_string({sid}, '$')
              ELSE {_fail(path, "'field ''sample_score.group_id'' (or ''sample_id'') must be an "
                          "integer or a string, found ', " + _show(gid))} END"""
    if has_gen_index:
        idx = f"""CASE WHEN json_type({gen}) IN ('UBIGINT', 'BIGINT') THEN CAST({gen} AS BIGINT)
                      ELSE {_fail(path, "'field ''sample_score.generation_index'' must be an "
                                  "integer (the first record has one), found ', " + _show(gen))}
                  END"""
        order = ""
    else:
        idx = "NULL"
        order = f"""CASE WHEN json_type({sid}) IN {_ID_TYPES} THEN {sid}
                    ELSE {_fail(path, "'field ''sample_score.sample_id'' must be an integer or "
                                "a string, found ', " + _show(sid))} END"""
    # The main score: value[main_score_name], else the first key (evalscope's Score.main_value).
    # true/false and 1/0 are verdicts; no usable score (another status, an empty `value`, null)
    # is NULL; any other number (a partial credit) is refused: a value that is not clearly a
    # verdict is not guessed into one (the rule of `correct` everywhere, data/README.md sec. 6).
    key = f"""CASE WHEN json_extract_string({main}, '$') IS NOT NULL
                        AND list_contains(json_keys({value}), json_extract_string({main}, '$'))
                   THEN json_extract_string({main}, '$') ELSE json_keys({value})[1] END"""
    correct = f"""CASE
        WHEN json_extract_string({status}, '$') IS NOT NULL
             AND json_extract_string({status}, '$') NOT IN {tuple(_EVALSCOPE_USABLE)} THEN NULL
        WHEN {value} IS NULL OR json_type({value}) <> 'OBJECT' THEN
            CASE WHEN {value} IS NULL OR json_type({value}) = 'NULL' THEN NULL
                 ELSE {_fail(path, "'field ''sample_score.score.value'' must be an object, "
                             "found ', " + _show(value))} END
        WHEN mv IS NULL OR json_type(mv) = 'NULL' THEN NULL
        WHEN json_type(mv) = 'BOOLEAN' THEN CAST(mv AS BOOLEAN)
        WHEN json_type(mv) IN {_NUM_TYPES} AND CAST(mv AS DOUBLE) IN (0, 1)
            THEN CAST(mv AS DOUBLE) = 1
        ELSE {_fail(path, "'score ''sample_score.score.value.', mkey, ''' = ', " + _show("mv")
                    + ", ' is not a verdict (leash reads true/false or 1/0)'")} END"""
    query = f"""WITH {recs},
keyed AS (SELECT *, {key} AS mkey FROM recs),
checked AS (SELECT line, {qid} AS question_id, {idx} AS gen_idx, {order or 'NULL'} AS ord,
           json_extract(v[6], '$."' || replace(mkey, '"', '\\"') || '"') AS mv,
           v, mkey FROM keyed),
scored AS (SELECT line, question_id, gen_idx, ord, {correct} AS correct,
           json_extract_string({target}, '$') AS gold,
           json_extract_string({pred}, '$') AS response,
           json_extract_string({extracted}, '$') AS answer FROM checked)
SELECT {_select(model=_lit(model), benchmark=_lit(benchmark), question_id="question_id",
                 sample_idx=("gen_idx" if has_gen_index else
                             "dense_rank() OVER (PARTITION BY question_id ORDER BY "
                             "TRY_CAST(ord AS BIGINT) NULLS LAST, CAST(ord AS VARCHAR)) - 1"),
                 correct="correct", response="response", gold="gold", answer="answer")}
FROM scored"""
    return con.sql(query)


# --- vLLM / OpenAI-compatible batch output ---------------------------------------------------
# custom_id: "<question_id>#<first sample index>" (choices are samples first, first+1, ...), or
# without that suffix the question id (choices are samples 0..n-1).
_CUSTOM_ID = r"^(.*)#([0-9]+)$"


def _openai_batch(con, path: Path, options: dict):
    """VLLM ``run_batch`` (and OpenAI Batch API) output lines, one row per choice."""
    recs = _records(path, ["$.custom_id", "$.response.status_code", "$.response.body",
                           "$.error", "$.response.body.choices", "$.response.body.model",
                           "$.response.body.usage.completion_tokens"])
    cid, status, body, err, choices, model, usage = (f"v[{i}]" for i in range(1, 8))
    bad_index = _fail(path, "'field ''choices[', k - 1, '].index'' must be an integer, "
                            "found ', " + _show("f[1]"))
    sample_idx = f"""CASE
        WHEN first_idx IS NULL THEN {_fail(path, "'the sample index after # in custom_id is "
                                            "too large'")}
        WHEN json_type(f[1]) IN ('UBIGINT', 'BIGINT') THEN first_idx + CAST(f[1] AS BIGINT)
        WHEN f[1] IS NULL OR json_type(f[1]) = 'NULL' THEN first_idx + k - 1
        ELSE {bad_index} END"""
    # A chat choice has `message.content`, a completion choice `text`.
    response = """CASE WHEN f[2] IS NOT NULL AND json_type(f[2]) = 'OBJECT'
                       THEN json_extract_string(f[3], '$')
                       ELSE json_extract_string(f[4], '$') END"""
    # usage.completion_tokens counts the tokens of all n choices together (vLLM sums them), so
    # it is a sample's count only when there is one choice; else the logprobs, when logged,
    # have one entry per generated token.
    n_tokens = """CASE WHEN n_choices = 1 THEN usage_tokens
                       WHEN json_type(f[6]) = 'ARRAY' THEN json_array_length(f[6])
                       WHEN json_type(f[7]) = 'ARRAY' THEN json_array_length(f[7]) END"""
    columns = _select(model="model", benchmark="NULL", question_id="question_id",
                      sample_idx=sample_idx, response=response,
                      finish_reason="json_extract_string(f[5], '$')", n_tokens=n_tokens)
    query = f"""WITH {recs},
checked AS (SELECT line,
        CASE WHEN json_type({cid}) = 'VARCHAR' THEN json_extract_string({cid}, '$')
             ELSE {_fail(path, "'field ''custom_id'' must be a string, found ', " + _show(cid))}
             END AS custom_id,
        CASE WHEN ({err} IS NOT NULL AND json_type({err}) <> 'NULL')
                  OR coalesce(TRY_CAST(json_extract_string({status}, '$') AS BIGINT), 200) <> 200
                  OR {body} IS NULL OR json_type({body}) = 'NULL' THEN
                {_fail(path, "'the request failed (status ', "
                       + _show(f"json_extract_string({status}, '$')", 10) + ", '; error ', "
                       + _show(err, 100) + ", '): a failed request is no sample; rerun it, or "
                       "remove the line to leave it out'")}
             WHEN {choices} IS NULL OR json_type({choices}) <> 'ARRAY'
                  OR json_array_length({choices}) = 0 THEN
                {_fail(path, "'field ''response.body.choices'' must be a non-empty list, "
                       "found ', " + _show(choices))}
             ELSE from_json({choices}, '["JSON"]') END AS chs,
        json_extract_string({model}, '$') AS model,
        TRY_CAST(json_extract_string({usage}, '$') AS BIGINT) AS usage_tokens FROM recs),
ids AS (SELECT *, regexp_extract(custom_id, {_lit(_CUSTOM_ID)}, ['q', 's']) AS m FROM checked),
expanded AS (SELECT line, model, len(chs) AS n_choices, usage_tokens,
        CASE WHEN m.q <> '' OR m.s <> '' THEN m.q ELSE custom_id END AS question_id,
        CASE WHEN m.s <> '' THEN TRY_CAST(m.s AS BIGINT) ELSE 0 END AS first_idx,
        unnest(chs) AS c, unnest(range(1, len(chs) + 1)) AS k FROM ids),
choice AS (SELECT *, json_extract(c, ['$.index', '$.message', '$.message.content', '$.text',
                           '$.finish_reason', '$.logprobs.content', '$.logprobs.tokens']) AS f
    FROM expanded
)
SELECT {columns} FROM choice"""
    return con.sql(query)


READERS = (
    InputFormat("lm-eval", _lm_eval, fits=_is_lm_eval,
                signature="doc_id, resps, filtered_resps",
                options=(ReaderOption("filter", "the filter whose records are read "
                                      "(default: the only filter, or the only one that keeps "
                                      "every repeat)"),)),
    InputFormat("lighteval", _lighteval, fits=_is_lighteval,
                signature="Parquet with doc, model_response, metric (or example, predictions, "
                          "metrics)"),
    InputFormat("evalscope", _evalscope, fits=_is_evalscope,
                signature="index, sample_score (an object with score)"),
    InputFormat("openai-batch", _openai_batch, fits=_is_openai_batch,
                signature="custom_id, response (an object, or null)"),
)
