"""Rescoring a frame in memory (:func:`rescore`) or files batch by batch into a rescored samples
file (:func:`rescore_file`, :func:`rescore_inputs`), with its report; and the cache of rescored
files of study sources (:func:`rescored_path`). Part of :mod:`leash_eval.rescore`.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from collections.abc import Mapping
from contextlib import closing, suppress
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from leash.errors import LeashTypeError, LeashValueError, Param
from leash.paths import BUILD
from leash.sources.choices import is_gold_file
from leash.writing import replacing
from leash_eval.answers import require_math_verify
from leash_eval.rescore.execution import graded, jobs_and_batch, progress_bar
from leash_eval.rescore.gold import (
    GOLD_RULES,
    GoldByIds,
    GoldCheck,
    MissingGoldError,
    as_gold_map,
    gold_from_frame,
    load_benchmark,
    question_dataset,
    read_benchmark,
)
from leash_eval.rescore.graders import Graded, make_spec
from leash_eval.scorers import scorer_named, scorers

__all__ = ["CACHE_DIR", "OUTPUT_SCHEMA", "RescoreReport", "RescoreResult", "read_responses",
           "rescore", "rescore_file", "rescore_inputs", "rescored_path"]


class RescoreResult(NamedTuple):
    """Output of :func:`rescore`: ``samples`` (a copy of the input with ``correct`` and
    ``answer`` recomputed), ``n_changed`` and ``changed`` (which verdicts differ from the input's
    ``correct``; none if it had none), ``n_no_answer`` (responses without an extractable answer,
    counted wrong), ``n_timeouts`` (responses whose grading hit math-verify's time limit and was
    retried with a longer one) and ``n_unresolved`` (those that timed out again: no verdict,
    ``correct`` is NA there and ``timeout`` true; not counted wrong).
    """

    samples: pd.DataFrame
    n_changed: int
    changed: np.ndarray
    n_no_answer: int = 0
    n_timeouts: int = 0
    n_unresolved: int = 0


_RESPONSE_COLUMNS = ["model", "benchmark", "question_id", "step", "sample_idx", "response",
                     "correct", "gold"]


def read_responses(path, *, fmt=None, mapping=None, model=None, benchmark=None,
                   step=None, reader_options=None) -> pd.DataFrame:
    """Per-sample rows *with response texts* from one generations file, as one frame (the
    batches of :func:`leash_eval.formats.response_batches`, for callers that want them in memory).

    Parameters
    ----------
    path : path-like
        A nested/evaluator JSONL file, an evaluator tool's file, or a canonical samples file
        (JSONL, Parquet or CSV) with a ``response`` column.
    fmt, mapping, model, benchmark, step, reader_options
        As in :func:`leash_eval.summarize.summarize`; given labels replace the file's.

    Returns
    -------
    pandas.DataFrame, shape (n_samples, 8)
        ``model, benchmark, question_id (str), step (Int64), sample_idx, response, correct
        (boolean, NA when the file has none), gold`` (the file's own gold answer, NA if none).
    """
    from leash_eval import formats as F

    batches = list(F.response_batches(path, fmt=fmt, mapping=mapping, model=model,
                                      benchmark=benchmark, step=step,
                                      reader_options=reader_options))
    df = (pa.Table.from_batches(batches).to_pandas() if batches
          else pd.DataFrame({c: [] for c in _RESPONSE_COLUMNS}))
    return df.astype({"question_id": "string", "step": "Int64", "correct": "boolean"})


def rescore(
    samples: pd.DataFrame,
    gold,
    *,
    scorer: str = "math-verify",
    extract: str = "math-verify",
    task=None,
    question_col: str = "question_id",
    response_col: str = "response",
    jobs: int | None = 1,
    batch_size: int = 1000,
    progress: bool = False,
) -> RescoreResult:
    """Recompute ``correct`` (and ``answer``) for every sample from its response and the gold,
    in memory (files of any size go through :func:`rescore_file`, which streams).

    Parameters
    ----------
    samples : pandas.DataFrame, shape (n_samples, ...)
        Per-sample rows with ``question_col`` and ``response_col``; an existing ``correct``
        column is replaced (and compared to count changed verdicts), and so is ``answer``.
    gold : mapping or pandas.DataFrame or pandas.Series
        ``question_id -> gold answer`` (str/number) for ``"math-verify"``; ``question_id ->
        Reasoning Gym entry`` (dict with ``answer`` and ``metadata``) for ``"reasoning-gym"``.
        A frame must have ``question_id`` and ``gold`` columns (:func:`load_benchmark`).
        Question ids are compared as strings. Every sample's question must have a gold answer.
    scorer : {"math-verify", "reasoning-gym"}, default "math-verify"
    extract : {"math-verify", "leash"}, default "math-verify"
        Answer extraction for ``"math-verify"`` (see :func:`verify_response`).
    task : str or object, optional
        Reasoning Gym task name (or an object with ``score_answer(answer, entry)``); required
        for ``"reasoning-gym"``.
    question_col, response_col : str
        Column names.
    jobs : int or None, default 1
        Worker processes (None: up to :func:`default_jobs`, grading here while they start,
        so that a small input is never slower than with one); the result does not depend on it.
    batch_size : int, default 1000
        Samples per task given to a worker.
    progress : bool, default False
        A tqdm progress bar on stderr (shown only when stderr is a terminal).

    Returns
    -------
    RescoreResult
        ``samples`` is a copy with ``correct`` (bool) and ``answer`` (normalized extracted
        answer, None when there is none) recomputed.
    """
    func = "rescore"
    scorer_named(scorer, func)
    if not isinstance(samples, pd.DataFrame):
        raise LeashTypeError(param="samples", func=func, value=samples,
                             got=type(samples).__name__, constraint="a pandas DataFrame")
    for col in (question_col, response_col):
        if col not in samples.columns:
            raise LeashValueError(
                f"The 'samples' frame of {func} lacks the column {col!r}; it has "
                f"{list(samples.columns)}.", param="samples", func=func, key=col, hint=(
                    "Pass ", Param("question_col", value=...), "/",
                    Param("response_col", value=...), "."))
    gold_map = as_gold_map(gold, func)
    auto = jobs is None
    jobs, batch_size = jobs_and_batch(jobs, batch_size, func)
    qids = samples[question_col].astype(str).tolist()
    if isinstance(gold_map, GoldByIds):
        gold_map = gold_map.match(qids, "the samples")[1]
    missing = sorted(set(qids) - set(gold_map))
    if missing:
        raise ValueError(f"{len(missing)} question(s) of the samples have no gold answer, e.g. "
                         f"{missing[:5]} (of {len(set(qids))} questions, {len(gold_map)} golds).")
    spec = make_spec(func, scorer, extract, task, gold_map)

    responses = samples[response_col].tolist()
    n = len(responses)
    tasks = (((start, min(start + batch_size, n)),
              (responses[start:start + batch_size], None, qids[start:start + batch_size], start))
             for start in range(0, n, batch_size))
    verdicts = np.zeros(n, dtype=bool)
    timed_out = np.zeros(n, dtype=bool)
    no_answer = np.zeros(n, dtype=bool)
    answers: list = [None] * n
    n_timeouts = 0
    with progress_bar(progress, "rescore", total=n) as bar, \
            closing(graded(tasks, spec, jobs, auto=auto)) as gr:
        for (start, end), g in gr:
            verdicts[start:end] = g.correct
            timed_out[start:end] = g.timeout
            no_answer[start:end] = g.no_answer
            answers[start:end] = g.answer
            n_timeouts += g.timeouts
            bar.update(end - start)

    out = samples.copy()
    if "correct" in samples.columns:
        before = samples["correct"].astype("boolean").to_numpy(dtype=bool, na_value=False)
        changed = before != verdicts
    else:
        changed = np.zeros(n, dtype=bool)
    out["correct"] = pd.arrays.BooleanArray(verdicts, timed_out) if timed_out.any() else verdicts
    out["answer"] = pd.array(answers, dtype="string")
    out["timeout"] = timed_out
    return RescoreResult(out, int(changed.sum()), changed, int(no_answer.sum()), n_timeouts,
                         int(timed_out.sum()))


#: Columns of a rescored samples file, in this order, then any of :data:`_EXTRA_COLUMNS` the
#: input has.
OUTPUT_SCHEMA = pa.schema([("model", pa.string()), ("benchmark", pa.string()),
                           ("question_id", pa.string()), ("step", pa.int64()),
                           ("sample_idx", pa.int64()), ("correct", pa.bool_()),
                           ("answer", pa.string()), ("timeout", pa.bool_())])


# Other canonical samples columns (leash_eval.formats.SAMPLES_OPTIONAL) passed through when the
# input batches carry them; `response` is left out (rescored files are for counting) and so is
# `gold`.
_EXTRA_COLUMNS = {"n_tokens": pa.int64(), "token_entropy": pa.float64(),
                  "finish_reason": pa.string()}


_OUT_SUFFIXES = (".parquet", ".pq", ".jsonl")


class RescoreReport(NamedTuple):
    """Output of :func:`rescore_file`: ``out`` (the rescored samples file, or None),
    ``n_samples``, ``n_changed`` (verdicts that differ from the input's ``correct``; a missing
    one counts as False), ``n_no_answer``, ``n_timeouts`` and ``n_unresolved`` (as in
    :class:`RescoreResult`) and
    ``table``, one row per (model, benchmark, step): ``samples, questions, accuracy_before,
    accuracy_after, changed, agreement, no_answer`` (``changed``: the verdicts that differ among
    the samples that had one before, missing when none had).
    """

    out: Path | None
    n_samples: int
    n_changed: int
    n_no_answer: int
    n_timeouts: int
    table: pd.DataFrame
    #: the id field of the gold answers that matched the samples' question ids (None: a plain
    #: mapping was given, or each file's own gold)
    gold_ids: str | None = None
    n_unresolved: int = 0


def rescore_inputs(inputs, out, gold, *, scorer, extract, task, jobs, batch_size, progress,
                   func="rescore_file", cluster=None) -> RescoreReport:
    """Rescore ``(path, reader kwargs)`` inputs in bounded memory into one output: what
    :func:`rescore_file` does, with reader options of each file's own.

    Parameters
    ----------
    inputs : sequence of (path-like, dict)
        Each generations file and its reader keywords (``fmt, mapping, model, benchmark, step,
        reader_options``).
    out, gold, scorer, extract, task, jobs, batch_size, progress, cluster
        As in :func:`rescore_file`.
    func : str, default "rescore_file"
        The function named in error messages (the caller's).

    Returns
    -------
    RescoreReport
    """
    _check_out(out, inputs, func)
    gold_map = None if gold is None else as_gold_map(gold, func)
    auto = jobs is None
    jobs, batch_size = jobs_and_batch(jobs, batch_size, func)
    batches, gold_ids, gold_map = _matched_gold(_batches_of(inputs, batch_size), gold_map)
    spec = make_spec(func, scorer, extract, task, gold_map)
    writer = _Writer(Path(out)) if out is not None else None
    tally = _Tally()
    counts = {"rows": 0, "gold_seen": False}
    extras: list[str] | None = None
    check = GoldCheck(gold_map, func) if gold_map is not None and \
        scorers()[spec.scorer].golds == "answers" else None

    in_file: dict = {}  # samples read so far of each input: where a batch starts in its file

    def tasks():
        for path, batch in batches:
            qids = _column(batch, "question_id", path).cast(pa.string()).to_pylist()
            offset = counts["rows"]
            counts["rows"] += len(qids)
            start = in_file.get(path, 0)
            in_file[path] = start + len(qids)
            if gold_map is not None:
                missing = sorted(set(qids) - gold_map.keys())
                if missing:
                    raise MissingGoldError(
                        f"{path}: {len(missing)} question(s) have no gold answer in the "
                        f"{len(gold_map)} given, e.g. {missing[:5]}.", file=path)
                if check is not None and "gold" in batch.schema.names:
                    check.add(qids, batch.column("gold").to_pylist(), path)
                golds = None
            else:
                golds = _column(batch, "gold", path).to_pylist()
                if None in golds:
                    i = golds.index(None)
                    sidx = batch.column("sample_idx")[i].as_py()
                    what = ("has no gold answers" if not counts["gold_seen"]
                            and all(g is None for g in golds) else
                            f"has no gold answer for question {qids[i]!r} (sample {sidx})")
                    raise MissingGoldError(f"{path} {what}: give the gold answers of its "
                                           "benchmark.", file=path)
                counts["gold_seen"] = True
            responses = _column(batch, "response", path).to_pylist()
            yield (path, batch, qids, start), (responses, golds, qids, offset)
        if check is not None:
            check.done()

    n = n_changed = n_no_answer = n_timeouts = n_unresolved = 0
    try:
        with progress_bar(progress, "rescore") as bar, \
                closing(graded(tasks(), spec, jobs, cluster, auto=auto,
                               name=_batch_name)) as gr:
            for (path, batch, qids, _), g in gr:
                if "correct" in batch.schema.names:
                    col = _column(batch, "correct", path).cast(pa.bool_())
                    known = col.is_valid().to_numpy(zero_copy_only=False)
                    before = col.fill_null(False).to_numpy(zero_copy_only=False)
                else:
                    known = before = np.zeros(len(g.correct), dtype=bool)
                changed = before != g.correct
                keys = list(zip(*(_column(batch, c, path).cast(t).to_pylist() for c, t in (
                    ("model", pa.string()), ("benchmark", pa.string()), ("step", pa.int64())))))
                tally.add(keys, qids, known, before, g.correct, changed, g.no_answer)
                n += len(g.correct)
                n_changed += int(changed.sum())
                n_no_answer += int(g.no_answer.sum())
                n_timeouts += g.timeouts
                n_unresolved += int(g.timeout.sum())
                if writer is not None:
                    if extras is None:
                        extras = [c for c in _EXTRA_COLUMNS if c in batch.schema.names]
                        writer.schema = pa.schema(list(OUTPUT_SCHEMA) + [
                            pa.field(c, _EXTRA_COLUMNS[c]) for c in extras])
                    writer.write(_output_table(batch, g, writer.schema, extras, path))
                bar.update(len(g.correct))
        if writer is not None:
            writer.close()
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return RescoreReport(writer.out if writer is not None else None, n, n_changed, n_no_answer,
                         n_timeouts, tally.table(), gold_ids, n_unresolved)


def rescore_file(
    path,
    out=None,
    gold=None,
    *,
    scorer: str = "math-verify",
    extract: str = "math-verify",
    task=None,
    fmt=None,
    mapping=None,
    model=None,
    benchmark=None,
    step=None,
    reader_options=None,
    jobs: int | None = None,
    batch_size: int = 1000,
    progress: bool = False,
    cluster: str | None = None,
) -> RescoreReport:
    """Rescore a generations file batch by batch, in memory bounded by ``batch_size`` times
    ``jobs`` (see :mod:`leash_eval.rescore`), and write the rescored samples in input order.

    Parameters
    ----------
    path : path-like or sequence of path-like
        Generations file(s) with response texts (see :func:`read_responses`); several files
        are rescored into one output, in the order given.
    out : path-like, optional
        The rescored samples file, ``.parquet``/``.pq`` or ``.jsonl``, in the canonical samples
        format: :data:`OUTPUT_SCHEMA` (``model, benchmark, question_id, step, sample_idx,
        correct, answer``) and the input's ``n_tokens``, ``token_entropy``, ``finish_reason``
        when it has them. Written beside and moved into place at the end; None writes nothing
        (the report still counts).
    gold : mapping or pandas.DataFrame or pandas.Series, optional
        As in :func:`rescore`; None uses each row's own gold answer (the file's gold field).
    scorer, extract, task, batch_size, progress
        As in :func:`rescore`.
    fmt, mapping, model, benchmark, step, reader_options
        Reader options, as in :func:`leash_eval.summarize.summarize` (``reader_options``: the
        evaluator readers' own, e.g. ``{"filter": "strict-match"}`` for lm-eval files).
    jobs : int or None, default None
        Worker processes; None: every usable core (:func:`default_jobs`).
    cluster : str, optional
        The address of a cluster (:mod:`leash_eval.cluster`): ``"ray"`` or ``"ray://HOST:10001"``
        (Ray; ``pip install leash[ray]``), else a Dask scheduler (``tcp://host:8786``; ``pip
        install leash[cluster]``): the batches are graded by its workers instead of ``jobs``
        local processes, at most two per slot (Dask worker thread, Ray CPU) in flight, and
        written in input order, so the output is the local run's. A batch whose worker died
        more often than the engine retries it is an OSError naming its file and samples.

    Returns
    -------
    RescoreReport

    Raises
    ------
    MissingGoldError
        A sample has no gold answer (the message names the file and the question).
    """
    paths = [path] if isinstance(path, str | os.PathLike) else list(path)
    kw = {k: v for k, v in {"fmt": fmt, "mapping": mapping, "model": model,
                            "benchmark": benchmark, "step": step,
                            "reader_options": reader_options}.items() if v is not None}
    return rescore_inputs([(p, kw) for p in paths], out, gold, scorer=scorer, extract=extract,
                          task=task, jobs=jobs, batch_size=batch_size, progress=progress,
                          cluster=cluster)


class _Writer:
    """Rescored samples written batch by batch to a temporary file beside ``out``
    (:func:`leash.writing.replacing`: created new under a random name, so nothing planted there
    is written through, and given the umask's mode), moved into place only when every batch is
    written (an interrupted run leaves no half file).
    """

    def __init__(self, out: Path):
        self.out = out
        name = out.name.lower()
        if not name.endswith(_OUT_SUFFIXES):
            raise LeashValueError(param="out", func="rescore_file", value=str(out),
                                  constraint="a file name ending in .jsonl, .parquet or .pq")
        self.parquet = not name.endswith(".jsonl")
        if not out.parent.is_dir():
            raise FileNotFoundError(f"The folder of {out} does not exist.")
        self._replacing = replacing(out)
        self.tmp = self._replacing.__enter__()
        self.schema = self._pq = self._fh = None
        self._held: list = []

    #: Rows of a Parquet row group: batches are held until there are as many (rows without
    #: response texts, a few MB), not written as a row group each.
    ROWS = 1 << 16

    def write(self, table: pa.Table) -> None:
        if self.parquet:
            self._held.append(table)
            if sum(t.num_rows for t in self._held) >= self.ROWS:
                self._flush()
        else:
            self._fh = self._fh or open(self.tmp, "w", encoding="utf-8")
            self._fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                   for r in table.to_pylist()))

    def _flush(self) -> None:
        import pyarrow.parquet as pq

        if self._held:
            table = pa.concat_tables(self._held)
            self._pq = self._pq or pq.ParquetWriter(self.tmp, table.schema)
            self._pq.write_table(table, row_group_size=self.ROWS)
            self._held = []

    def close(self) -> None:
        import pyarrow.parquet as pq

        try:
            self._flush()
            if self.parquet:  # no rows: still a valid (empty) file with the columns
                (self._pq or pq.ParquetWriter(self.tmp, self.schema or OUTPUT_SCHEMA)).close()
            elif self._fh is not None:
                self._fh.close()
        except BaseException as exc:
            self.abort(exc)
            raise
        self._replacing.__exit__(None, None, None)  # moved onto out

    def abort(self, exc: BaseException | None = None) -> None:
        for h in (self._pq, self._fh):
            if h is not None:
                with suppress(Exception):  # already failing; the file is removed anyway
                    h.close()
        with suppress(BaseException):  # removes the temporary file; the error is the caller's
            self._replacing.__exit__(type(exc or OSError), exc or OSError(), None)


class _Tally:
    """Per (model, benchmark, step) counts of a stream, for the report table: a few numpy sums
    per batch (most batches are of one group).
    """

    COUNTS = ("samples", "known", "before", "after", "changed", "changed_known", "no_answer")

    def __init__(self):
        self.rows: dict = {}

    def add(self, keys: list, qids: list, known, before, after, changed, no_answer) -> None:
        """One batch: its rows' ``(model, benchmark, step)``, question ids, and boolean arrays
        (a verdict before, it, the verdict after, changed, no answer).
        """
        groups = dict.fromkeys(keys)
        if len(groups) == 1:
            of = [slice(None)]
        else:
            index = {k: i for i, k in enumerate(groups)}
            codes = np.fromiter((index[k] for k in keys), dtype=np.intp, count=len(keys))
            of = [codes == i for i in range(len(groups))]
        q = np.asarray(qids, dtype=object)
        for key, sel in zip(groups, of):
            r = self.rows.setdefault(key, dict.fromkeys(self.COUNTS, 0) | {"questions": set()})
            r["questions"].update(q[sel].tolist())
            for name, x in (("known", known), ("before", before & known), ("after", after),
                            ("changed", changed), ("changed_known", changed & known),
                            ("no_answer", no_answer)):
                r[name] += int(np.count_nonzero(x[sel]))
            r["samples"] += len(known[sel])

    def table(self) -> pd.DataFrame:
        out = []
        for (m, b, st), r in sorted(self.rows.items(),
                                    key=lambda kv: tuple("" if k is None else str(k)
                                                         for k in kv[0])):
            k = r["known"]
            out.append({"model": m, "benchmark": b, "step": st, "samples": r["samples"],
                        "questions": len(r["questions"]),
                        "accuracy_before": r["before"] / k if k else math.nan,
                        "accuracy_after": r["after"] / r["samples"] if r["samples"] else math.nan,
                        # among the samples with an earlier verdict: none, nothing to compare
                        "changed": r["changed_known"] if k else None,
                        "agreement": 1 - r["changed_known"] / k if k else math.nan,
                        "no_answer": r["no_answer"]})
        cols = ["model", "benchmark", "step", "samples", "questions", "accuracy_before",
                "accuracy_after", "changed", "agreement", "no_answer"]
        return pd.DataFrame(out, columns=cols).astype({"step": "Int64", "changed": "Int64"})


def _batch_name(meta) -> str:
    """A batch of :func:`rescore_inputs` in a message: its file and samples."""
    path, _, qids, start = meta
    return f"{path}: the batch of samples {start}-{start + len(qids) - 1} (from 0, in file order)"


def _matched_gold(batches, gold_map):
    """(batches, id field, gold map): for :class:`GoldByIds`, the id field whose ids the first
    batch's questions use (:meth:`GoldByIds.match`), that batch put back in front.
    """
    if not isinstance(gold_map, GoldByIds):
        return batches, None, gold_map
    first = next(batches, None)
    if first is None:
        return iter(()), None, dict(gold_map)
    field, matched = gold_map.match(
        _column(first[1], "question_id", first[0]).cast(pa.string()).to_pylist(), first[0])
    return itertools.chain([first], batches), field, matched


def _batches_of(inputs, batch_size: int):
    """``(path, batch)`` for every batch of every ``(path, reader kwargs)`` input."""
    from leash_eval import formats as F

    for path, kw in inputs:
        for batch in F.response_batches(path, batch_size=batch_size, **kw):
            for label in ("model", "benchmark"):  # a rescored file must be summarizable
                if label in batch.schema.names and batch.column(label).null_count:
                    raise LeashValueError(
                        f"{path}: the file does not name the {label} of its samples:",
                        param=label, file=path, key=label,
                        hint=("pass ", Param(label, value=...), " to label them."))
            yield Path(path), batch


def _column(batch: pa.RecordBatch, name: str, path: Path):
    if name not in batch.schema.names:
        raise ValueError(f"{path}: the response batches lack the column {name!r}; they have "
                         f"{batch.schema.names}.")
    return batch.column(name)


def _check_out(out, inputs, func: str) -> None:
    """The output replaces its file at the end: never one of the inputs."""
    if out is not None and Path(out).exists():
        for path, _ in inputs:
            if Path(path).exists() and os.path.samefile(path, out):
                raise LeashValueError(Param("out", func=func), f" is its input {path}: the "
                                      "rescored file would replace the responses it is graded "
                                      "from; write it to another file.", value=out, file=path)


def _output_table(batch: pa.RecordBatch, g: Graded, schema: pa.Schema, extras: list,
                  path: Path) -> pa.Table:
    late = [c for c in _EXTRA_COLUMNS if c in batch.schema.names and c not in extras]
    if late:
        raise ValueError(f"{path} has the column(s) {late}, which the earlier inputs of the same "
                         "output file lack: rescore it into a file of its own.")
    n = len(g.correct)
    cols = {}
    for field in schema:
        if field.name == "correct":  # no verdict where grading timed out twice
            cols["correct"] = pa.array(g.correct, type=pa.bool_(), mask=g.timeout)
        elif field.name == "timeout":
            cols["timeout"] = pa.array(g.timeout, type=pa.bool_())
        elif field.name == "answer":
            cols["answer"] = pa.array(g.answer, type=pa.string())
        elif field.name in batch.schema.names:
            col = batch.column(field.name)
            if pa.types.is_dictionary(col.type):
                col = col.dictionary_decode()
            # a copy: a column of the batch keeps the whole batch alive (the Arrow C stream
            # releases a batch at once), response texts and all, while the writer holds it
            cols[field.name] = pa.concat_arrays([col.cast(field.type)])
        else:  # an extra column the first input had and this one lacks
            cols[field.name] = pa.nulls(n, type=field.type)
    return pa.Table.from_pydict(cols, schema=schema)


#: Where :func:`rescored_path` keeps rescored files (ignored by git).
CACHE_DIR = BUILD / "rescored"


# Part of every cache key: bump it when grading or the output format changes.
_CACHE_VERSION = 2  # 2: the timeout column


def rescored_path(path, *, scorer: str = "math-verify", extract: str = "math-verify",
                  gold: str | None = None, gold_rule: str = "answer",
                  reader: Mapping | None = None, cache_dir=None, jobs: int | None = None,
                  progress: bool = False, **fetch_kwargs) -> Path:
    """The rescored samples file of one generations file, made once and then reused: a Parquet
    file under ``cache_dir`` (default :data:`CACHE_DIR`) named by a sha256 over the input's bytes
    (hashed every time), the scorer, extractor, gold source, reader options and math-verify
    version. A file with rows whose grading timed out twice (no verdict) is not kept: it is
    returned as ``NAME.unresolved.parquet`` (which the summary refuses) and graded again by the
    next call.

    Parameters
    ----------
    path : path-like
        Generations file with response texts.
    scorer : {"math-verify"}
        The scorer (Reasoning Gym needs entries per question, which study files do not name).
    extract : {"math-verify", "leash"}
        As in :func:`rescore`.
    gold : str or path-like, optional
        A benchmark of the data manifest with a question file (``math500``, ``aime24``, ...,
        see :func:`question_dataset`), or a local JSONL question file (a path-like, or a name
        ending in ``.jsonl``, ``.jsonl.gz``, ``.json`` or ``.ndjson``: matched by id as
        :func:`gold_from_frame` says, cached by its bytes); None: the file's own gold answers.
    gold_rule : {"answer", "gold", "minerva", "olympiadbench"}, default "answer"
        Where the gold answer is in a local question file (:func:`read_benchmark`).
    reader : mapping, optional
        Reader options of the file (``fmt, mapping, model, benchmark, step``).
    cache_dir, jobs, progress : optional
        The cache folder; as in :func:`rescore_file`.
    **fetch_kwargs
        Passed to :func:`load_benchmark` (``mirror``, ``dest``).

    Returns
    -------
    pathlib.Path
        A canonical samples Parquet file.
    """
    import hashlib
    from importlib.metadata import version

    from leash_eval import manifest as mf

    for_studies = [n for n, s in scorers().items() if s.study]
    if scorer not in for_studies:
        raise LeashValueError(param="scorer", func="rescored_path", value=scorer,
                              constraint=" or ".join(map(repr, for_studies)))
    if extract not in scorers()[scorer].extractors:
        raise LeashValueError(param="extract", func="rescored_path", value=extract,
                              constraint=f"one of {scorers()[scorer].extractors}")
    require_math_verify("scorer")
    p = Path(path)
    reader = dict(reader or {})
    gold_id, gold_file = None, None
    if isinstance(gold, os.PathLike) or is_gold_file(gold):  # a question file, by its bytes
        gold_file = Path(gold)
        if not gold_file.is_file():
            raise LeashValueError(f"The gold question file {gold_file} does not exist.",
                                  param="gold", func="rescored_path", value=str(gold),
                                  file=str(gold_file))
        gold_id = f"file:{mf.sha256_file(gold_file)}:{gold_rule}"
    elif gold is not None:
        ds = question_dataset(str(gold))
        if ds is None:
            raise LeashValueError(param="gold", func="rescored_path", value=str(gold),
                                  constraint="a benchmark of the data manifest with a question "
                                  f"file ({sorted(GOLD_RULES)}), or a JSONL question file that "
                                  "exists")
        gold_id = f"{ds}:{mf.load_manifest().datasets[ds].sha256}"
    folder = Path(cache_dir) if cache_dir is not None else CACHE_DIR

    def named(digest: str) -> Path:
        key = json.dumps({"version": _CACHE_VERSION, "input": digest, "scorer": scorer,
                          "extract": extract, "gold": gold_id, "reader": reader,
                          "math_verify": version("math-verify")}, sort_keys=True, default=str)
        digest = hashlib.sha256(key.encode()).hexdigest()[:20]
        return folder / f"{p.name.split('.')[0]}.{digest}.parquet"

    state = mf.file_state(p)
    target = named(state[0])
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    gold_map = (gold_from_frame(read_benchmark(gold_file, gold_rule)) if gold_file is not None
                else gold_from_frame(load_benchmark(str(gold), **fetch_kwargs))
                if gold is not None else None)

    def grade(digests):
        # rows without a verdict (math-verify timed out twice) are no result to keep: such a
        # file goes under another name, which the summary refuses and no call reuses
        pending = named(digests[0]).with_suffix(".unresolved.parquet")
        report = rescore_inputs([(p, reader)], pending, gold_map, scorer=scorer,
                                extract=extract, task=None, jobs=jobs, batch_size=1000,
                                progress=progress, func="rescored_path")
        return report, pending

    # named after the bytes graded: a file replaced while it is graded is graded again
    (report, pending), digests = mf.read_unchanged(
        [p], grade, [state], discard=lambda done: done[1].unlink(missing_ok=True))
    if report.n_unresolved:
        return pending
    target = named(digests[0])
    os.replace(pending, target)
    return target

