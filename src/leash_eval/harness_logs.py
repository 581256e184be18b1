"""Readers for the logs of RL trainers and evaluation harnesses: verl, NeMo-Skills, inspect_ai,
OpenCompass, and plain JSON objects keyed by question id.

Plug-in formats of :mod:`leash_eval.readers`, declared in :data:`READERS`: each reader
*translates a layout* into a DuckDB relation of :data:`leash_eval.evaluators.RELATION_COLUMNS`;
the rules and the aggregation stay in :mod:`leash_eval.formats` and :mod:`leash_eval.summarize`.
Three of these layouts are not JSON lines at all: a zip archive (inspect_ai ``.eval``) and one
JSON document (OpenCompass results and predictions, JSON objects keyed by question id), read
within the bounds of :mod:`leash_eval.documents` (decompressed size, nesting depth, a key or
member twice).
``data/README.md`` ("Evaluator files") names the upstream file and function writing each.

- ``verl``: JSON lines (DuckDB SQL, streamed but for the rank of a question's samples);
- ``nemo-skills``: JSON lines, one file per seed, one line per question;
- ``inspect``: a zip read member by member (deflate, or zstd through the ``zstandard``
  package where Python's ``zipfile`` has no zstd);
- ``opencompass`` and ``json-object``: one JSON document, read whole (the document is the unit
  these tools write; its size is the file's, or a bounded multiple of it for ``.json.gz``).

Malformed input stops the read with one line naming the file, the line (JSON lines), the zip
member or the key, and the field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from leash.errors import LeashValueError
from leash.limits import INT64_MAX
from leash_eval import documents as D
from leash_eval import evaluators as E  # the SQL building blocks and RELATION_COLUMNS
from leash_eval.readers import InputFormat, ReaderOption

__all__ = ["READERS", "CORRECT_RULES", "NEMO_ID_FIELDS", "verl_step", "verl_folder",
           "nemo_seed"]

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
    or ``{id: {correct, ...}}``: a question per key, its samples in list order. One pass over
    the document (the line of a bad key is looked up only for its message).
    """
    doc, raw = D.load(path)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a JSON object keyed by question id is expected, found a "
                         f"JSON {type(doc).__name__}.")

    def fail(qid, field, what):
        line = _key_line(raw, qid)
        raise LeashValueError(f"{path}: {line}: field '{field}' {what}.", file=path,
                              line=line, key=field)

    rows, line = [], 0
    for qid, value in doc.items():
        samples = value if isinstance(value, list) else [value]
        if not samples:
            fail(qid, qid, "is an empty list of samples")
        for i, s in enumerate(samples):
            line += 1
            if isinstance(s, dict):
                if "correct" not in s:
                    fail(qid, f"{qid}[{i}].correct" if value is samples else f"{qid}.correct",
                         "is missing")
                ok = s["correct"]
                if ok is not None and not isinstance(ok, bool) and not (
                        isinstance(ok, (int, float)) and ok in (0, 1)):
                    fail(qid, f"{qid}[{i}].correct" if value is samples else f"{qid}.correct",
                         f"must be boolean-like (true/false, 1/0), found {json.dumps(ok)[:60]}")
                rows.append({"line": line, "question_id": qid, "sample_idx": i,
                             "correct": None if ok is None else ok == 1,
                             "response": _text(s.get("response")), "answer": _text(
                                 s.get("answer")), "gold": _text(s.get("gold"))})
            elif isinstance(s, bool):
                rows.append({"line": line, "question_id": qid, "sample_idx": i, "correct": s})
            else:
                fail(qid, f"{qid}[{i}]" if value is samples else qid, "must be true/false or an "
                     f"object with 'correct', found {json.dumps(s)[:60]}")
    return E.rows_relation(con, path, rows, "jsonobj")


# --- OpenCompass: results/<model>/<dataset>.json and predictions/<model>/<dataset>.json --------
_OC_VERDICTS = ("correct", "is_correct", "cascade_correct")  # BaseEvaluator.evaluate's order


def _opencompass(con, path: Path, options: dict):
    """OpenCompass results written with ``dump_details`` (one detail per example: its
    ``example_abbr``, and lists of ``pred``, ``answer``, ``correct`` over the n replicas; or, for
    n = 1, one detail per example keyed by its index), or a predictions file (no verdicts:
    ``leash rescore``).
    """
    doc, _ = D.load(path)
    kind = _opencompass_kind(doc)
    model = path.parent.name if path.parent.parent.name in ("results", "predictions") else None
    bench = re.sub(r"\.json(\.gz)?$", "", path.name)
    rows = []
    if kind == "predictions":
        for line, (key, rec) in enumerate(doc.items(), 1):  # each an object (detection)
            rows.append({"line": line, "model": model, "benchmark": bench, "question_id": key,
                         "sample_idx": 0, "response": _text(rec.get("prediction")),
                         "gold": _text(rec.get("gold"))})
        return E.rows_relation(con, path, rows, "ocpred")
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

        # with n replicas, a replica's own fields are lists of n: one value where n belong
        # (a scalar verdict) would be given to every replica, so it is refused; the gold
        # (answer, references) is the same for every replica and may be one value
        own = {*(names[:1]), "pred", "prediction", "origin_prediction"}

        def per(field, i, det=det, listed=listed, n=n, where=where, names=names, own=own):
            v = det.get(field)
            if listed and isinstance(v, list):
                if len(v) != n:
                    raise ValueError(f"{where}: field '{field}' has {len(v)} values where "
                                     f"'{names[0] if names else 'pred'}' has {n}; leash never "
                                     "pads.")
                return v[i]
            if listed and field in own and v is not None and n > 1:
                raise LeashValueError(
                    f"{where}: field '{field}' is one value ({json.dumps(v)[:40]}) where "
                    f"'{names[0] if names and field != names[0] else 'pred'}' has {n} "
                    "replicas; leash never gives one value to every replica.", file=path,
                    line=where.split(": ", 1)[1], key=field, value=v)
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
    return E.rows_relation(con, path, rows, "ocres")


# --- inspect_ai: <log_dir>/<timestamp>_<task>_<id>.eval ----------------------------------------
_SAMPLE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
_STOP = {"stop": "stop", "max_tokens": "length", "model_length": "length"}


def _obj(value, where: str, field: str) -> dict:
    """An object where the layout has one (None: empty); a string or a list there is one line
    naming the place and the field.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise LeashValueError(f"{where}: field '{field}' must be an object, found "
                              f"{json.dumps(value)[:60]}.", line=where.split(": ", 1)[-1],
                              key=field, value=value)
    return value


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


def _content(message: dict) -> str | None:
    content = message.get("content")
    if isinstance(content, list):  # content parts: the text ones, in order
        content = "".join(p.get("text", "") for p in content
                          if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else None


def _inspect(con, path: Path, options: dict):
    """An inspect_ai ``.eval`` log: ``header.json`` (``eval.model``, ``eval.task``; a log still
    running has ``_journal/start.json``) and one member ``samples/{id}_epoch_{epoch}.json`` per
    (sample, epoch): ``question_id`` the sample id, ``sample_idx`` epoch - 1, ``correct`` the
    chosen scorer's value. Members are read within :mod:`leash_eval.documents`' bounds.
    """
    with D.open_zip(path) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        head = next((n for n in ("header.json", "_journal/start.json") if n in infos), None)
        if head is None:
            raise ValueError(f"{path}: no header.json (nor _journal/start.json): not an "
                             "inspect_ai .eval log.")
        where = f"{path}: member {head}"
        spec = _obj(_obj(D.zip_json(zf, path, infos[head]), where, "(the member)").get("eval"),
                    where, "eval")
        model, task = spec.get("model"), spec.get("task")
        for field, v in (("eval.model", model), ("eval.task", task)):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"{where}: field '{field}' must be a string, found "
                                 f"{json.dumps(v)[:60]}.")
        members = sorted((m for m in infos if _SAMPLE.match(m)),
                         key=lambda m: (_SAMPLE.match(m).group(1), int(_SAMPLE.match(m)[2])))
        if not members:
            raise ValueError(f"{path}: no samples/*_epoch_*.json members: the log holds no "
                             "samples.")
        chosen, rows = options.get("score"), []
        for line, name in enumerate(members, 1):
            where = f"{path}: member {name}"
            s = _obj(D.zip_json(zf, path, infos[name]), where, "(the member)")
            epoch = s.get("epoch")
            if isinstance(epoch, bool) or not isinstance(epoch, int) or not 1 <= epoch <= \
                    INT64_MAX:
                raise ValueError(f"{where}: field 'epoch' must be an integer >= 1 (and within "
                                 f"the 64-bit range), found {json.dumps(epoch)[:40]}.")
            scores = _obj(s.get("scores"), where, "scores")
            if chosen is None and len(scores) > 1:
                raise ValueError(f"{where}: {len(scores)} scores ({', '.join(scores)}); choose "
                                 "one with --score NAME.")
            key = chosen or next(iter(scores), None)
            if chosen is not None and chosen not in scores:
                raise ValueError(f"{where}: --score {chosen} is not among its scores "
                                 f"({', '.join(scores) or 'none'}).")
            sc = _obj(scores.get(key), where, f"scores.{key}") if key else {}
            correct = (_score_verdict(sc.get("value"), where, f"scores.{key}.value")
                       if key in scores and scores[key] is not None else None)
            output = _obj(s.get("output"), where, "output")
            choices = output.get("choices") or [None]
            if not isinstance(choices, list):
                raise ValueError(f"{where}: field 'output.choices' must be a list, found "
                                 f"{json.dumps(choices)[:60]}.")
            choice = _obj(choices[0], where, "output.choices[0]")
            message = _obj(choice.get("message"), where, "output.choices[0].message")
            usage = _obj(output.get("usage"), where, "output.usage")
            tokens = usage.get("output_tokens")
            if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int)
                                       or not 0 <= tokens <= INT64_MAX):
                raise ValueError(f"{where}: field 'output.usage.output_tokens' must be an "
                                 f"integer >= 0, found {json.dumps(tokens)[:40]}.")
            target = s.get("target")
            stop = choice.get("stop_reason")
            rows.append({
                "line": line, "model": model, "benchmark": task,
                "question_id": _qid(s.get("id"), where, "id"), "sample_idx": epoch - 1,
                "correct": correct, "response": _content(message),
                "answer": _text(sc.get("answer")),
                "gold": ", ".join(map(str, target)) if isinstance(target, list)
                else _text(target),
                "finish_reason": _STOP.get(stop, stop) if isinstance(stop, str) else _text(stop),
                "n_tokens": tokens})
    return E.rows_relation(con, path, rows, "inspect")


# --- verl: <validation_data_dir>/<step>.jsonl -------------------------------------------------
def _name_number(path, pattern: str, what: str) -> int | None:
    """The number a file name holds (``pattern``'s first group), or None; beyond the 64-bit
    range it is one line naming the file.
    """
    m = re.fullmatch(pattern, Path(path).name)
    if not m:
        return None
    if len(m.group(1)) > 19 or int(m.group(1)) > INT64_MAX:
        raise LeashValueError(f"{path}: the {what} in the file name, {m.group(1)[:30]}"
                              f"{'...' if len(m.group(1)) > 30 else ''}, is beyond the 64-bit "
                              "integer range; rename the file.", file=path, key=what,
                              value=m.group(1))
    return int(m.group(1))


def verl_step(path: Path) -> int | None:
    """The training step in a verl dump's file name (``<step>.jsonl``), or None."""
    return _name_number(path, r"(\d+)\.jsonl(?:\.gz)?", "step")


def verl_folder(path) -> list[Path] | None:
    """The step files of a verl ``validation_data_dir`` (``<step>.jsonl``, by step), or None
    when ``path`` is not a folder holding any (any other folder stays refused as an input).
    """
    p = Path(path)
    if not p.is_dir():
        return None
    # a step beyond the 64-bit range is one line (verl_step)
    files = sorted((f for f in p.iterdir() if f.is_file() and verl_step(f) is not None),
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
    # NaN and Infinity (Python's json writes them) are no verdict: refused, not compared
    score_v = f"""CASE WHEN json_type({score}) IN {num}
                            AND isfinite(CAST(json_extract_string({score}, '$') AS DOUBLE))
                           THEN CAST(json_extract_string({score}, '$') AS DOUBLE)
                       WHEN json_type({score}) = 'BOOLEAN' THEN CAST(CAST({score} AS BOOLEAN)
                           AS DOUBLE)
                       ELSE {fail(path, "'field ''score'' must be a number (not NaN or "
                                  "infinite), found ', " + show(score))} END"""
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
    step_v = f"""CASE WHEN json_type({step}) = 'BIGINT'
                           OR json_type({step}) = 'UBIGINT'
                              AND TRY_CAST(json_extract_string({step}, '$') AS BIGINT) IS NOT NULL
                           THEN CAST(json_extract_string({step}, '$') AS BIGINT)
                      WHEN {step} IS NULL OR json_type({step}) = 'NULL' THEN {_lit(fstep)}
                      ELSE {fail(path, "'field ''step'' must be an integer within the 64-bit "
                                 "range, found ', " + show(step))} END"""
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
    return _name_number(path, r"output-rs(\d+)(?:-chunk\d+)?\.jsonl(?:\.gz)?", "seed")


#: The fields of a NeMo-Skills data point that name its question, in the order looked for.
NEMO_ID_FIELDS = ("id", "unique_id", "problem_id", "question_id", "idx")


def _nemo(con, path: Path, options: dict):
    """NeMo-Skills generations after evaluation: one line per question (the input data point
    with ``generation``, ``predicted_answer``, ``symbolic_correct`` or ``judge_correct``), one
    file per seed, ``sample_idx`` the seed. The seed files are paired by question id: the data
    point's own id (the first of :data:`NEMO_ID_FIELDS` the first record has; then every record
    needs it), else the record's number among the file's records from 0 (NeMo-Skills writes the
    input's order in every seed file), which a blank line does not shift.
    """
    seed = nemo_seed(path)
    first = E._first_record(path) or {}
    id_field = next((f for f in NEMO_ID_FIELDS if f in first), None)
    chosen = options.get("score")
    field = chosen
    if field is None:  # the file's verdict field: symbolic_correct, else judge_correct
        found = E._run(con, path, f"""WITH {E._records(path, ['$.symbolic_correct',
                                                              '$.judge_correct'])}
                           SELECT count(v[1]), count(v[2]) FROM recs""")[0]
        field = "symbolic_correct" if found[0] else "judge_correct" if found[1] else None
    paths = ["$.generation", "$.predicted_answer", "$.expected_answer",
             f'$."{field}"' if field else "$.symbolic_correct", f'$."{id_field or "id"}"']
    recs = E._records(path, paths)
    gen, pred, exp, ver, qid = (f"v[{i}]" for i in range(1, 6))
    fail, show = E._fail, E._show
    verdict = "NULL" if field is None else f"""CASE
        WHEN {ver} IS NULL THEN {fail(path, f"'field ''{field}'' is missing'")}
        WHEN json_type({ver}) = 'BOOLEAN' THEN CAST({ver} AS BOOLEAN)
        WHEN json_type({ver}) IN {E._NUM_TYPES} AND CAST({ver} AS DOUBLE) IN (0, 1)
            THEN CAST({ver} AS DOUBLE) = 1
        ELSE {fail(path, f"'field ''{field}'' must be boolean-like (true/false, 1/0), found ', "
                   + show(ver))} END"""
    qid = (f"""CASE WHEN json_type({qid}) IN {E._ID_TYPES}
                         AND json_extract_string({qid}, '$') <> ''
                        THEN json_extract_string({qid}, '$')
                    ELSE {fail(path, f"'field ''{id_field}'' (the question id: the first record "
                               "has it) must be a non-empty string or an integer, found ', "
                               + show(qid))} END""" if id_field else
           "CAST(row_number() OVER (ORDER BY line) - 1 AS VARCHAR)")
    query = f"""WITH {recs}
SELECT {E._select(model="NULL", benchmark="NULL", question_id=qid,
                  sample_idx=_lit(seed if seed is not None else 0),
                  correct=verdict,
                  response=f'''CASE WHEN json_type({gen}) = 'VARCHAR'
                                   THEN json_extract_string({gen}, '$')
                                   ELSE {fail(path, "'field ''generation'' must be a string, "
                                              "found ', " + show(gen))} END''',
                  answer=f"json_extract_string({pred}, '$')",
                  gold=f"json_extract_string({exp}, '$')")}
FROM recs ORDER BY line"""
    return con.sql(query)


_SCORE_HELP = "the verdict field (default: {})"
READERS = (
    InputFormat("verl", _verl, fits=_is_verl, signature="input, output, score, and step or gts",
                options=(ReaderOption(
                    "correct_rule", "where a sample's verdict comes from: auto (the default: "
                    "the reward's 'acc' when logged, else score > 0), acc, positive (score > 0) "
                    "or full (score >= 1)", metavar=None, choices=CORRECT_RULES),)),
    InputFormat("nemo-skills", _nemo, fits=_is_nemo,
                signature="generation with symbolic_correct, judge_correct, predicted_answer or "
                          "expected_answer",
                options=(ReaderOption("score", _SCORE_HELP.format(
                    "symbolic_correct, else judge_correct")),)),
    InputFormat("inspect", _inspect, archive=".eval", unit="record",
                signature="a zip archive (.eval)",
                options=(ReaderOption("score", "the scorer whose value is the verdict (needed "
                                      "when a sample has several)"),)),
    InputFormat("opencompass", _opencompass, fits_document=_opencompass_kind, unit="record",
                signature="'details' (results), or one object with 'prediction' per example "
                          "(predictions)",
                options=(ReaderOption("score", _SCORE_HELP.format("correct")),)),
    InputFormat("json-object", _json_object, fits_document=_is_id_object, unit="record",
                signature="a verdict (true/false), a list of verdicts or of objects with "
                          "'correct' per question id"),
)
