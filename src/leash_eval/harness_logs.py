"""Readers for the logs of RL trainers and evaluation harnesses: verl, NeMo-Skills, inspect_ai,
OpenCompass, and plain JSON objects keyed by question id.

The same interface as :mod:`leash_eval.evaluators` (which dispatches to :data:`READERS`): each
reader *translates a layout* into a DuckDB relation of
:data:`leash_eval.evaluators.RELATION_COLUMNS`; the rules and the aggregation stay in
:mod:`leash_eval.formats` and :mod:`leash_eval.summarize`. A module of its own, apart from
``formats.py`` (the rule set and the generic readers) and ``evaluators.py`` (per-record JSON
lines and Parquet), because three of these layouts are not JSON lines at all: a zip archive
(inspect_ai ``.eval``) and one JSON document (OpenCompass results and predictions, JSON objects
keyed by question id), detected before the JSON-lines detection (:func:`detect_document`).
``data/README.md`` ("Evaluator files") names the upstream file and function writing each.

- ``verl``: JSON lines (DuckDB SQL, streamed but for the rank of a question's samples);
- ``nemo-skills``: JSON lines, one file per seed, one line per question;
- ``inspect``: a zip read member by member (deflate, or zstd through the ``zstandard``
  package where Python's ``zipfile`` has no zstd);
- ``opencompass`` and ``json-object``: one JSON document, read whole (``json.load``: the
  document is the unit these tools write; its size is the file's).

Malformed input stops the read with one line naming the file, the line (JSON lines), the zip
member or the key, and the field.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import struct
import zipfile
from pathlib import Path

from leash.sources.choices import HARNESS_FORMATS
from leash_eval import evaluators as E  # the SQL building blocks and RELATION_COLUMNS

__all__ = ["FORMATS", "OPTIONS", "CORRECT_RULES", "DOCUMENT_FORMATS", "detect",
           "detect_document", "relation", "verl_step", "verl_folder", "nemo_seed"]

FORMATS = HARNESS_FORMATS
#: formats read as one document (or archive) rather than as JSON lines
DOCUMENT_FORMATS = ("inspect", "opencompass", "json-object")
#: reader options by format, as spelled on the command line (``--correct-rule``, ``--score``)
OPTIONS = {"verl": ("correct_rule",), "nemo-skills": ("score",), "inspect": ("score",),
           "opencompass": ("score",), "json-object": ()}
#: verl: where a sample's verdict comes from. ``auto``: the ``acc`` field of the reward's extra
#: information when the line has one (DAPO's reward logs it), else ``score > 0``; ``acc``: that
#: field, required; ``positive``: ``score > 0``; ``full``: ``score >= 1``.
CORRECT_RULES = ("auto", "acc", "positive", "full")


def _lit(value) -> str:
    return "NULL" if value is None else "'" + str(value).replace("'", "''") + "'"




# --- detection -------------------------------------------------------------------------------
def _is_verl(keys, first):
    # base_data of _dump_generations: input, output, score, step, and gts since 2025-05
    return first is not None and {"input", "output", "score"} <= keys and bool(
        {"step", "gts"} & keys)


def _is_nemo(keys, first):
    return first is not None and "generation" in keys and bool(
        {"symbolic_correct", "judge_correct", "predicted_answer", "expected_answer"} & keys)


SIGNATURES = (("verl", _is_verl), ("nemo-skills", _is_nemo))


def detect(keys, first) -> str | None:
    """The JSON-lines layout of :data:`FORMATS` a first record fits (verl, nemo-skills), or
    None (the documents are recognised by :func:`detect_document`).
    """
    keys = set(keys)
    return next((name for name, fits in SIGNATURES if fits(keys, first)), None)


def _opencompass_kind(doc) -> str | None:
    """``results`` (a results file written with details), ``predictions``, or None."""
    if not isinstance(doc, dict) or not doc:
        return None
    if isinstance(doc.get("details"), (list, dict)):
        return "results"
    if all(isinstance(v, dict) and "prediction" in v for v in doc.values()):
        return "predictions"
    return None


def _verdict_like(v) -> bool:
    return isinstance(v, bool) or (isinstance(v, dict) and "correct" in v)


def _is_id_object(doc) -> bool:
    """A JSON object keyed by question id, recognised by its first value (as other formats by
    their first record): a verdict, a list of verdicts or of sample objects with ``correct``,
    or an object with ``correct``; the reader checks every value, naming a bad one.
    """
    if not isinstance(doc, dict) or not doc:
        return False
    v = next(iter(doc.values()))
    return _verdict_like(v) or (isinstance(v, list) and bool(v) and _verdict_like(v[0]))


_CACHE: dict = {}


def _document(path: Path):
    """The file parsed as one JSON document (cached for the last file: detection, then the
    read); a ValueError naming the file, line and column when it is not JSON.
    """
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _CACHE:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as fh:
            raw = fh.read()
        try:
            doc = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {exc.lineno}, column {exc.colno}: malformed JSON "
                             f"({exc.msg}).") from None
        except (UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{path}: not a JSON document ({exc}).") from None
        _CACHE.clear()
        _CACHE[key] = (doc, raw)
    return _CACHE[key]


def detect_document(path: Path) -> str | None:
    """``inspect`` for a zip archive (an ``.eval`` log), ``opencompass`` or ``json-object`` for
    a file holding one JSON document that is not JSON lines (pretty-printed, or one object),
    else None (the JSON-lines and table detection of :func:`leash_eval.formats.detect` go on).
    """
    name = path.name.lower()
    with open(path, "rb") as fh:
        head = fh.read(4)
    if head == b"PK\x03\x04" or name.endswith(".eval"):
        return "inspect"
    if not name.endswith((".json", ".json.gz")):
        return None
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(path, "rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
    except (OSError, EOFError):
        return None
    try:
        rec = json.loads(first)
        if isinstance(rec, dict) and (_opencompass_kind(rec) or _is_id_object(rec)):
            pass  # one object on one line: a document too
        else:
            return None  # a JSON line: the JSON-lines detection decides
    except ValueError:
        if not first.lstrip().startswith(b"{"):
            return None
    doc, _ = _document(path)
    if _opencompass_kind(doc):
        return "opencompass"
    if _is_id_object(doc):
        return "json-object"
    if isinstance(doc, dict):  # one pretty-printed object that is no layout leash knows
        first = next(iter(doc.items()), None)
        raise ValueError(f"{path}: one JSON document (not JSON lines) of no known layout: "
                         "json-object needs a verdict (true/false), a list of verdicts or of "
                         "objects with 'correct' per question id (first entry: "
                         f"{json.dumps(first)[:60]}); opencompass needs 'details' or one "
                         "object with 'prediction' per example.")
    return None


# --- tables from Python rows -----------------------------------------------------------------
def _table(con, path: Path, rows: list[dict], name: str):
    """A relation of RELATION_COLUMNS (plus ``step``) over rows built in Python."""
    import pyarrow as pa

    types = {"line": pa.int64(), "sample_idx": pa.int64(), "n_tokens": pa.int64(),
             "correct": pa.bool_(), "step": pa.int64()}
    cols = (*E.RELATION_COLUMNS,)
    table = pa.table({c: pa.array([r.get(c) for r in rows], type=types.get(c, pa.string()))
                      for c in cols})
    view = f"{name}_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"
    con.register(view, table)
    return con.sql(f"SELECT * FROM {view}")


def _qid(value, where: str, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise ValueError(f"{where}: field '{field}' must be a non-empty string or an integer, "
                         f"found {json.dumps(value)[:60]}.")
    return str(value)


def _bool(value, where: str, field: str) -> bool | None:
    """A verdict: true/false, 1/0; None stays None (no verdict: leash rescore)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return value == 1
    raise ValueError(f"{where}: field '{field}' must be boolean-like (true/false, 1/0), found "
                     f"{json.dumps(value)[:60]}.")


def _text(value):
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


# --- JSON objects keyed by question id --------------------------------------------------------
def _key_line(raw: bytes, key: str) -> str:
    """``line N`` of a key in the document (error path only), else ``key``."""
    for text in (json.dumps(key), json.dumps(key, ensure_ascii=False)):
        i = raw.find(text.encode() + b":")
        i = i if i >= 0 else raw.find(text.encode() + b" :")
        if i >= 0:
            return "line " + str(raw.count(b"\n", 0, i) + 1)
    return "key"


def _json_object(con, path: Path, options: dict):
    """``{id: verdict}``, ``{id: [verdict, ...]}``, ``{id: [{response, correct, ...}, ...]}``
    or ``{id: {correct, ...}}``: a question per key, its samples in list order.
    """
    doc, raw = _document(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a JSON object keyed by question id is expected, found a "
                         f"JSON {type(doc).__name__}.")
    rows, line = [], 0
    for qid, value in doc.items():
        samples = value if isinstance(value, list) else [value]
        if not samples:
            raise ValueError(f"{path}: {_key_line(raw, qid)}: key {qid!r}: an empty list of "
                             "samples.")
        for i, s in enumerate(samples):
            line += 1
            field = f"{qid}[{i}]" if isinstance(value, list) else qid
            where = f"{path}: {_key_line(raw, qid)}"
            if isinstance(s, dict):
                if "correct" not in s:
                    raise ValueError(f"{where}: field '{field}.correct' is missing.")
                rows.append({"line": line, "question_id": qid, "sample_idx": i,
                             "correct": _bool(s["correct"], where, f"{field}.correct"),
                             "response": _text(s.get("response")), "answer": _text(
                                 s.get("answer")), "gold": _text(s.get("gold"))})
            else:
                if not isinstance(s, bool):
                    raise ValueError(f"{where}: field '{field}' must be true/false or an "
                                     f"object with 'correct', found {json.dumps(s)[:60]}.")
                rows.append({"line": line, "question_id": qid, "sample_idx": i, "correct": s})
    return _table(con, path, rows, "jsonobj")


# --- OpenCompass: results/<model>/<dataset>.json and predictions/<model>/<dataset>.json --------
_OC_VERDICTS = ("correct", "is_correct", "cascade_correct")  # BaseEvaluator.evaluate's order


def _opencompass(con, path: Path, options: dict):
    """OpenCompass results written with ``dump_details`` (one detail per example: its
    ``example_abbr``, and lists of ``pred``, ``answer``, ``correct`` over the n replicas; or, for
    n = 1, one detail per example keyed by its index), or a predictions file (no verdicts:
    ``leash rescore``).
    """
    doc, raw = _document(path)
    kind = _opencompass_kind(doc)
    model = path.parent.name if path.parent.parent.name in ("results", "predictions") else None
    bench = re.sub(r"\.json(\.gz)?$", "", path.name)
    rows = []
    if kind == "predictions":
        for line, (key, rec) in enumerate(doc.items(), 1):
            rows.append({"line": line, "model": model, "benchmark": bench, "question_id": key,
                         "sample_idx": 0, "response": _text(rec.get("prediction")),
                         "gold": _text(rec.get("gold"))})
        return _table(con, path, rows, "ocpred")
    if kind != "results":
        raise ValueError(f"{path}: an OpenCompass results file has 'details' (written with "
                         "dump_details) and a predictions file one object with 'prediction' "
                         "per example; this file has neither.")
    details = doc["details"]
    items = list(details.items()) if isinstance(details, dict) else list(enumerate(details))
    chosen = options.get("score")
    line = 0
    for pos, det in items:
        where = f"{path}: details[{json.dumps(pos)}]"
        if not isinstance(det, dict):
            raise ValueError(f"{where}: must be an object, found {json.dumps(det)[:60]}.")
        qid = _qid(det.get("example_abbr", pos), where, "example_abbr")
        names = [chosen] if chosen else [f for f in _OC_VERDICTS if f in det]
        if chosen and chosen not in det:
            raise ValueError(f"{where}: --score {chosen} is not a field of the detail; fields: "
                             f"{', '.join(sorted(det))}.")
        verdict = det.get(names[0]) if names else None
        listed = isinstance(verdict, list) or isinstance(det.get("pred"), list) and \
            "example_abbr" in det
        n = len(verdict) if isinstance(verdict, list) else len(det["pred"]) if listed else 1

        def per(field, i, det=det, listed=listed, n=n, where=where, names=names):
            v = det.get(field)
            if listed and isinstance(v, list):
                if len(v) != n:
                    raise ValueError(f"{where}: field '{field}' has {len(v)} values where "
                                     f"'{names[0] if names else 'pred'}' has {n}; leash never "
                                     "pads.")
                return v[i]
            return v

        for i in range(n):
            line += 1
            rows.append({
                "line": line, "model": model, "benchmark": bench, "question_id": qid,
                "sample_idx": i,
                "correct": _bool(per(names[0], i), where, names[0] + (f"[{i}]" if listed
                                                                     else "")) if names else None,
                "answer": _text(per("pred", i)),
                "gold": _text(per("answer", i) if "answer" in det else per("references", i)),
                "response": _text(per("origin_prediction", i) if "origin_prediction" in det
                                  else per("prediction", i))})
    if not rows:
        raise ValueError(f"{path}: 'details' is empty.")
    return _table(con, path, rows, "ocres")


# --- inspect_ai: <log_dir>/<timestamp>_<task>_<id>.eval ----------------------------------------
_ZSTD = 93  # the zip compression method of zstandard (inspect_ai since 0.3.206)
_SAMPLE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
_STOP = {"stop": "stop", "max_tokens": "length", "model_length": "length"}


def _member(zf: zipfile.ZipFile, path: Path, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes: deflate and stored by ``zipfile``, zstd by ``zipfile`` where Python
    has it (3.14), else by the ``zstandard`` package over the member's raw bytes.
    """
    if info.compress_type != _ZSTD or getattr(zipfile, "ZIP_ZSTANDARD", None) == _ZSTD:
        return zf.read(info)
    try:
        import zstandard
    except ImportError:
        raise ValueError(f"{path}: member {info.filename}: compressed with zstd (inspect_ai "
                         "0.3.206 and later); install the 'zstandard' package to read it.") \
            from None
    with open(path, "rb") as fh:  # the local header: 30 bytes, then the name and extra field
        fh.seek(info.header_offset)
        head = fh.read(30)
        if len(head) < 30 or head[:4] != b"PK\x03\x04":
            raise ValueError(f"{path}: member {info.filename}: no local header (a truncated "
                             "or corrupt archive).")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        data = fh.read(info.compress_size)
    try:
        out = zstandard.ZstdDecompressor().decompress(data, max_output_size=info.file_size)
    except zstandard.ZstdError as exc:
        raise ValueError(f"{path}: member {info.filename}: cannot decompress ({exc}).") from None
    if zipfile.crc32(out) != info.CRC:
        raise ValueError(f"{path}: member {info.filename}: CRC mismatch (a corrupt archive).")
    return out


def _member_json(zf, path, info):
    try:
        data = _member(zf, path, info)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:  # zlib.error is an OSError? no:
        raise ValueError(f"{path}: member {info.filename}: cannot read ({exc}).") from None
    except Exception as exc:  # zlib.error of a corrupt deflate stream
        if type(exc).__module__ == "zlib":
            raise ValueError(f"{path}: member {info.filename}: cannot decompress ({exc}).") \
                from None
        raise
    try:
        return json.loads(data)
    except ValueError as exc:
        raise ValueError(f"{path}: member {info.filename}: malformed JSON ({exc}).") from None


def _score_verdict(value, where: str, field: str) -> bool:
    """inspect_ai's score values: C (correct) / I (incorrect) / N (no answer), true/false,
    1/0; P (partial) or another number is no verdict and is refused.
    """
    if isinstance(value, str):
        v = value.strip().upper()
        if v in ("C", "YES", "TRUE", "1"):
            return True
        if v in ("I", "N", "NO", "FALSE", "0"):
            return False
    elif isinstance(value, bool):
        return value
    elif isinstance(value, (int, float)) and value in (0, 1):
        return value == 1
    raise ValueError(f"{where}: field '{field}' = {json.dumps(value)[:40]} is not a verdict "
                     "(leash reads C/I/N, true/false or 1/0; a partial score is no verdict).")


def _content(message) -> str | None:
    content = (message or {}).get("content")
    if isinstance(content, list):  # content parts: the text ones, in order
        content = "".join(p.get("text", "") for p in content
                          if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else None


def _inspect(con, path: Path, options: dict):
    """An inspect_ai ``.eval`` log: ``header.json`` (``eval.model``, ``eval.task``; a log still
    running has ``_journal/start.json``) and one member ``samples/{id}_epoch_{epoch}.json`` per
    (sample, epoch): ``question_id`` the sample id, ``sample_idx`` epoch - 1, ``correct`` the
    chosen scorer's value.
    """
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable zip archive ({exc}); an inspect_ai .eval log "
                         "is a zip (truncated or not an .eval file?).") from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}
        head = next((n for n in ("header.json", "_journal/start.json") if n in infos), None)
        if head is None:
            raise ValueError(f"{path}: no header.json (nor _journal/start.json): not an "
                             "inspect_ai .eval log.")
        spec = _member_json(zf, path, infos[head]).get("eval") or {}
        model, task = spec.get("model"), spec.get("task")
        members = sorted((m for m in infos if _SAMPLE.match(m)),
                         key=lambda m: (_SAMPLE.match(m).group(1), int(_SAMPLE.match(m)[2])))
        if not members:
            raise ValueError(f"{path}: no samples/*_epoch_*.json members: the log holds no "
                             "samples.")
        chosen, rows = options.get("score"), []
        for line, name in enumerate(members, 1):
            where = f"{path}: member {name}"
            s = _member_json(zf, path, infos[name])
            if not isinstance(s, dict):
                raise ValueError(f"{where}: must be a JSON object.")
            epoch = s.get("epoch")
            if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
                raise ValueError(f"{where}: field 'epoch' must be an integer >= 1, found "
                                 f"{json.dumps(epoch)[:40]}.")
            scores = s.get("scores") or {}
            if not isinstance(scores, dict):
                raise ValueError(f"{where}: field 'scores' must be an object.")
            if chosen is None and len(scores) > 1:
                raise ValueError(f"{where}: {len(scores)} scores ({', '.join(scores)}); choose "
                                 "one with --score NAME.")
            key = chosen or next(iter(scores), None)
            if chosen is not None and chosen not in scores:
                raise ValueError(f"{where}: --score {chosen} is not among its scores "
                                 f"({', '.join(scores) or 'none'}).")
            sc = scores.get(key) if key else None
            if sc is not None and not isinstance(sc, dict):
                raise ValueError(f"{where}: field 'scores.{key}' must be an object.")
            correct = (_score_verdict(sc.get("value"), where, f"scores.{key}.value")
                       if sc is not None else None)
            choice = ((s.get("output") or {}).get("choices") or [None])[0] or {}
            target = s.get("target")
            rows.append({
                "line": line, "model": model, "benchmark": task,
                "question_id": _qid(s.get("id"), where, "id"), "sample_idx": epoch - 1,
                "correct": correct, "response": _content(choice.get("message")),
                "answer": _text(sc.get("answer")) if sc else None,
                "gold": ", ".join(target) if isinstance(target, list) else _text(target),
                "finish_reason": _STOP.get(choice.get("stop_reason"), choice.get("stop_reason")),
                "n_tokens": ((s.get("output") or {}).get("usage") or {}).get("output_tokens")})
    return _table(con, path, rows, "inspect")


# --- verl: <validation_data_dir>/<step>.jsonl -------------------------------------------------
def verl_step(path: Path) -> int | None:
    """The training step in a verl dump's file name (``<step>.jsonl``), or None."""
    m = re.fullmatch(r"(\d+)\.jsonl(?:\.gz)?", Path(path).name)
    return int(m.group(1)) if m else None


def verl_folder(path) -> list[Path] | None:
    """The step files of a verl ``validation_data_dir`` (``<step>.jsonl``, by step), or None
    when ``path`` is not a folder holding any (any other folder stays refused as an input).
    """
    p = Path(path)
    if not p.is_dir():
        return None
    files = sorted((f for f in p.iterdir() if verl_step(f) is not None and f.is_file()),
                   key=verl_step)
    return files or None


def _verl(con, path: Path, options: dict):
    """Read verl's validation generations (``RayPPOTrainer._dump_generations``): one line per
    sample, ``input`` (the prompt text), ``output``, ``gts``, ``score``, ``step`` and the
    reward's extra information (DAPO: ``acc``, ``pred``). The samples of a question share its
    prompt: ``question_id`` is the first 16 hex digits of the prompt's sha256 (the same in
    every step's file), ``sample_idx`` the sample's rank among the question's lines.
    """
    rule = options.get("correct_rule") or "auto"
    if rule not in CORRECT_RULES:
        raise ValueError(f"{path}: --correct-rule {rule} is not one of "
                         f"{', '.join(CORRECT_RULES)}.")
    recs = E._records(path, ["$.input", "$.output", "$.gts", "$.score", "$.step", "$.acc",
                             "$.pred", "$.data_source"])
    inp, out, gts, score, step, acc, pred, src = (f"v[{i}]" for i in range(1, 9))
    fail, show, num = E._fail, E._show, E._NUM_TYPES
    fstep = verl_step(path)
    score_v = f"""CASE WHEN json_type({score}) IN {num} THEN CAST(json_extract_string({score},
                           '$') AS DOUBLE)
                       WHEN json_type({score}) = 'BOOLEAN' THEN CAST(CAST({score} AS BOOLEAN)
                           AS DOUBLE)
                       ELSE {fail(path, "'field ''score'' must be a number, found ', "
                                  + show(score))} END"""
    acc_v = f"""CASE WHEN json_type({acc}) = 'BOOLEAN' THEN CAST({acc} AS BOOLEAN)
                     WHEN json_type({acc}) IN {num} AND CAST({acc} AS DOUBLE) IN (0, 1)
                         THEN CAST({acc} AS DOUBLE) = 1
                     ELSE {fail(path, "'field ''acc'' must be boolean-like (true/false, 1/0), "
                                "found ', " + show(acc))} END"""
    no_acc = fail(path, "'field ''acc'' is missing (--correct-rule acc)'")
    correct = {"auto": f"CASE WHEN {acc} IS NOT NULL AND json_type({acc}) <> 'NULL' THEN "
                       f"{acc_v} ELSE s > 0 END",
               "acc": f"CASE WHEN {acc} IS NULL OR json_type({acc}) = 'NULL' THEN {no_acc} "
                      f"ELSE {acc_v} END",
               "positive": "s > 0", "full": "s >= 1"}[rule]
    step_v = f"""CASE WHEN json_type({step}) IN ('UBIGINT', 'BIGINT') THEN CAST({step} AS BIGINT)
                      WHEN {step} IS NULL OR json_type({step}) = 'NULL' THEN {_lit(fstep)}
                      ELSE {fail(path, "'field ''step'' must be an integer, found ', "
                                 + show(step))} END"""
    query = f"""WITH {recs},
checked AS (SELECT line, v,
        CASE WHEN json_type({inp}) = 'VARCHAR' THEN json_extract_string({inp}, '$')
             ELSE {fail(path, "'field ''input'' must be a string (the prompt), found ', "
                        + show(inp))} END AS prompt,
        CASE WHEN json_type({out}) = 'VARCHAR' THEN json_extract_string({out}, '$')
             ELSE {fail(path, "'field ''output'' must be a string, found ', " + show(out))}
             END AS response,
        {score_v} AS s, {step_v} AS st FROM recs),
scored AS (SELECT line, prompt, response, st, {correct} AS correct,
        json_extract_string({gts}, '$') AS gold, json_extract_string({pred}, '$') AS answer,
        json_extract_string({src}, '$') AS source FROM checked)
SELECT {E._select(model="NULL", benchmark="source", question_id="left(sha256(prompt), 16)",
                  sample_idx="row_number() OVER (PARTITION BY prompt ORDER BY line) - 1",
                  correct="correct", response="response", gold="gold", answer="answer",
                  step="st")}
FROM scored ORDER BY line"""
    return con.sql(query)


# --- NeMo-Skills: <output_dir>/eval-results/<benchmark>/output-rs<seed>.jsonl ----------------
def nemo_seed(path: Path) -> int | None:
    """The random seed in a NeMo-Skills output file name (``output-rs<seed>.jsonl``), or None."""
    m = re.fullmatch(r"output-rs(\d+)(?:-chunk\d+)?\.jsonl(?:\.gz)?", Path(path).name)
    return int(m.group(1)) if m else None


def _nemo(con, path: Path, options: dict):
    """NeMo-Skills generations after evaluation: one line per question (the input data point
    with ``generation``, ``predicted_answer``, ``symbolic_correct`` or ``judge_correct``), one
    file per seed: ``question_id`` the line number from 0 (NeMo-Skills writes the input's
    order in every seed file and compares seeds line by line), ``sample_idx`` the seed.
    """
    seed = nemo_seed(path)
    chosen = options.get("score")
    field = chosen
    if field is None:  # the file's verdict field: symbolic_correct, else judge_correct
        found = E._run(con, path, f"""WITH {E._records(path, ['$.symbolic_correct',
                                                              '$.judge_correct'])}
                           SELECT count(v[1]), count(v[2]) FROM recs""")[0]
        field = "symbolic_correct" if found[0] else "judge_correct" if found[1] else None
    paths = ["$.generation", "$.predicted_answer", "$.expected_answer",
             f'$."{field}"' if field else "$.symbolic_correct"]
    recs = E._records(path, paths)
    gen, pred, exp, ver = (f"v[{i}]" for i in range(1, 5))
    fail, show = E._fail, E._show
    verdict = "NULL" if field is None else f"""CASE
        WHEN {ver} IS NULL THEN {fail(path, f"'field ''{field}'' is missing'")}
        WHEN json_type({ver}) = 'BOOLEAN' THEN CAST({ver} AS BOOLEAN)
        WHEN json_type({ver}) IN {E._NUM_TYPES} AND CAST({ver} AS DOUBLE) IN (0, 1)
            THEN CAST({ver} AS DOUBLE) = 1
        ELSE {fail(path, f"'field ''{field}'' must be boolean-like (true/false, 1/0), found ', "
                   + show(ver))} END"""
    query = f"""WITH {recs}
SELECT {E._select(model="NULL", benchmark="NULL", question_id="CAST(line - 1 AS VARCHAR)",
                  sample_idx=_lit(seed if seed is not None else 0),
                  correct=verdict,
                  response=f'''CASE WHEN json_type({gen}) = 'VARCHAR'
                                   THEN json_extract_string({gen}, '$')
                                   ELSE {fail(path, "'field ''generation'' must be a string, "
                                              "found ', " + show(gen))} END''',
                  answer=f"json_extract_string({pred}, '$')",
                  gold=f"json_extract_string({exp}, '$')")}
FROM recs"""
    return con.sql(query)


READERS = {"verl": _verl, "nemo-skills": _nemo, "inspect": _inspect, "opencompass": _opencompass,
           "json-object": _json_object}


def relation(con, path, fmt: str, *, options: dict | None = None):
    """The file's samples in :data:`leash_eval.evaluators.RELATION_COLUMNS`, as a DuckDB
    relation (lazy for the JSON-lines layouts), as :func:`leash_eval.evaluators.relation`.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
    path : Path
    fmt : str
        One of :data:`FORMATS`.
    options : dict, optional
        ``correct_rule`` (verl, one of :data:`CORRECT_RULES`), ``score`` (inspect, nemo-skills,
        opencompass); None values ignored, another option is a ValueError naming it.
    """
    path = Path(path)
    if fmt not in READERS:
        raise ValueError(f"{path}: --fmt {fmt} is not one of {', '.join(FORMATS)}.")
    return READERS[fmt](con, path, E._check_options(path, fmt, options, OPTIONS[fmt]))
