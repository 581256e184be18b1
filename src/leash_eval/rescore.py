r"""Recompute per-sample correctness from response texts and gold answers.

Two scorers:

``"math-verify"`` (optional extra ``pip install math-verify``)
    ``correct = verify(parse(gold), parse(response))`` with HuggingFace math-verify, gold first
    (its ``verify`` is not symmetric). A gold answer without math delimiters is wrapped as
    ``$gold$`` before parsing. With ``extract="math-verify"`` (default) the full response is
    given to ``parse``, i.e. math-verify's own answer extraction (last ``\boxed{}`` first, then
    other LaTeX/plain expressions), which is how the library is meant to be used and what
    Lighteval does; with ``extract="leash"`` the answer is first extracted with
    :func:`leash_eval.answers.extract_answer` in its default order (:data:`leash_eval.answers.
    MATH_METHODS`: ``<answer>`` tag, last ``\boxed{}``, ``#### X``, "The answer is X", the last
    number) and parsed as ``$answer$``.
``"reasoning-gym"`` (optional extra ``pip install reasoning-gym``)
    The task's own scorer, ``dataset.score_answer(answer, entry)``, on the answer extracted with
    :data:`leash_eval.answers.REASONING_GYM_METHODS` (``<answer>`` tag, then last ``\boxed{}``, then
    the text after ``</think>``: the paper's hierarchy, App. B.3). Reasoning Gym gives partial
    credit (e.g. 0.01 for a wrong but well-formed answer, or ``len(gold)/len(answer)`` when the
    gold is a substring); a sample counts as correct **only at full credit**, ``score == 1.0``.
    The paper's task-specific answer rewrites (App. B.3: dice fractions, prime factorization
    ``x``, palindromes, ...) are not applied here.

A response from which the grading extractor gets no answer is wrong and counted
(``n_no_answer``), and so is a math-verify parse or comparison that hits its time limit
(``n_timeouts``; math-verify's warning, which prints the whole response, is kept off the
terminal). The ``answer`` column is leash's extraction, normalized
(:func:`leash_eval.answers.normalize_answer`), with either extractor: the answer as the model wrote
it, which answer entropy (Table 5) counts.

:func:`rescore` grades a DataFrame in memory; :func:`rescore_file` (and ``leash rescore``) reads
a file in batches (:func:`leash_eval.formats.response_batches`) and writes the rescored samples
batch
by batch. Both grade with one per-batch function, here (``jobs=1``) or in ``jobs`` worker
processes with at most ``2 * jobs`` batches in flight, so memory is bounded by the batch size
times the jobs, never by the file; results come back in input order, so the output does not
depend on ``jobs``. math-verify times a parse out with ``signal.alarm``, which works only in the
main thread of a process: workers grade in their main thread, and a caller outside the main
thread is served by a worker. Workers start from a fork server that imported math-verify once
and ignore Ctrl-C: the parent stops them (``leash rescore`` says "interrupted", exit 130).
:func:`rescored_path` caches a rescored file under ``build/rescored/`` for study files.

Benchmark question files (:func:`load_benchmark`) come from the data manifest; their question
ids follow the Qwen2.5-Math evaluator: the file's ``idx`` field, else the 0-based row position.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import signal
import sys
import threading
import warnings
from collections import deque
from collections.abc import Mapping
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from leash._paths import BUILD
from leash.errors import LeashImportError, LeashTypeError, LeashValueError, LeashWarning, Param
from leash.sources.choices import EXTRACTORS, SCORERS
from leash_eval.answers import (
    REASONING_GYM_METHODS,
    canonical_number,
    extract_answer,
    last_boxed,
    normalize_answer,
    require_math_verify,
)

__all__ = ["GOLD_RULES", "BENCHMARK_GOLD", "CACHE_DIR", "OUTPUT_SCHEMA",
           "MissingGoldError", "RescoreReport", "RescoreResult", "default_jobs", "gold_from_frame",
           "load_benchmark", "question_dataset", "read_benchmark", "read_responses", "rescore",
           "rescore_file", "rescore_inputs", "rescored_path", "verify_response"]


#: How the gold answer of each benchmark file is found (manifest dataset name -> rule).
BENCHMARK_GOLD = {
    "math500": "answer",
    "aime24": "answer",
    "amc23": "answer",
    "minerva-math": "last \\boxed{} of solution",
    "olympiadbench": "final_answer (list, joined with ', ')",
    "gsm8k-probe-questions": "gold",
}


class RescoreResult(NamedTuple):
    """Output of :func:`rescore`: ``samples`` (a copy of the input with ``correct`` and
    ``answer`` recomputed), ``n_changed`` and ``changed`` (which verdicts differ from the input's
    ``correct``; none if it had none), ``n_no_answer`` (responses without an extractable answer)
    and ``n_timeouts`` (math-verify parses or comparisons that timed out), both counted wrong.
    """

    samples: pd.DataFrame
    n_changed: int
    changed: np.ndarray
    n_no_answer: int = 0
    n_timeouts: int = 0


# ----------------------------------------------------------------------------- benchmarks


def _gold_str(value, *, where: str) -> str:
    if isinstance(value, bool) or value is None:
        raise ValueError(f"The gold answer of {where} must be a string or a number. "
                         f"Got {value!r}.")
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        if not np.isfinite(value):
            raise ValueError(f"The gold answer of {where} must be finite. Got {value!r}.")
        return canonical_number(repr(float(value))) or repr(float(value))
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"The gold answer of {where} is empty.")
        return value.strip()
    raise ValueError(f"The gold answer of {where} must be a string or a number. Got {value!r}.")


def read_benchmark(path: str | os.PathLike, rule: str) -> pd.DataFrame:
    r"""Read a benchmark JSONL file into ``question_id, question, gold`` with a gold ``rule``.

    Parameters
    ----------
    path : path-like
        JSONL file, one question per line.
    rule : {"answer", "gold", "minerva", "olympiadbench"}
        Where the gold answer is: the named field, the last ``\boxed{}`` of ``solution``
        (Minerva), or the ``final_answer`` list (OlympiadBench, joined with ", ").

    Returns
    -------
    pandas.DataFrame
        Columns ``question_id`` (str), ``question`` (str), ``gold`` (str), one row per line.
    """
    from leash_eval import formats as F

    rules = ("answer", "gold", "minerva", "olympiadbench")
    if rule not in rules:
        raise LeashValueError(param="rule", func="read_benchmark", value=rule,
                              constraint=f"one of {rules}")
    p = Path(path)
    rows = []
    for where, rec in F.json_records(p):
        qid = rec.get("question_id", rec.get("idx", rec.get("qid", len(rows))))
        question = rec.get("problem", rec.get("question"))
        if rule in ("answer", "gold"):
            if rule not in rec:
                raise ValueError(f"{where}: field '{rule}' is missing.")
            gold = _gold_str(rec[rule], where=where)
        elif rule == "minerva":
            sol = rec.get("solution")
            boxed = last_boxed(sol) if isinstance(sol, str) else None
            if not boxed:
                raise ValueError(f"{where}: field 'solution' has no \\boxed{{}} answer.")
            gold = boxed
        else:
            fa = rec.get("final_answer")
            if not isinstance(fa, list) or not fa:
                raise ValueError(f"{where}: field 'final_answer' must be a non-empty list. "
                                 f"Got {fa!r}.")
            gold = ", ".join(_gold_str(v, where=where) for v in fa)
        rows.append({"question_id": str(qid), "question": question, "gold": gold})
    df = pd.DataFrame(rows, columns=["question_id", "question", "gold"])
    dup = df["question_id"].duplicated()
    if dup.any():
        raise ValueError(f"{p}: duplicate question ids {df.loc[dup, 'question_id'].tolist()[:5]}.")
    return df.astype({"question_id": "string", "question": "string", "gold": "string"})


#: How each question file of :data:`leash.sources.choices.GOLD_DATASETS` is read.
GOLD_RULES = {"math500": "answer", "aime24": "answer", "amc23": "answer",
              "minerva-math": "minerva", "olympiadbench": "olympiadbench",
              "gsm8k-probe-questions": "gold"}


def question_dataset(name: str, *, manifest=None) -> str | None:
    """The manifest dataset of a benchmark's question file (what :func:`load_benchmark` reads).

    Parameters
    ----------
    name : str
        A dataset name (``math500``, ...) or a benchmark label of one (``gsm8k``, ``minerva``).

    Returns
    -------
    str or None
        The dataset name, or None when the manifest has no question file for ``name``.
    """
    from leash_eval import manifest as mf

    m = manifest or mf.load_manifest()
    if name in GOLD_RULES:
        return name
    by_label = [n for n in GOLD_RULES if n in m.datasets and m.datasets[n].benchmark == name]
    return by_label[0] if len(by_label) == 1 else None


def load_benchmark(name: str, **fetch_kwargs) -> pd.DataFrame:
    """Question file of a benchmark from the data manifest.

    Parameters
    ----------
    name : str
        Manifest dataset name (``math500``, ``aime24``, ``amc23``, ``minerva-math``,
        ``olympiadbench``, ``gsm8k-probe-questions``) or a benchmark label of one of them
        (e.g. ``minerva``).
    **fetch_kwargs
        Passed to :func:`leash_eval.manifest.fetch` (``mirror``, ``dest``, ...).

    Returns
    -------
    pandas.DataFrame
        ``question_id, question, gold`` (see :func:`read_benchmark`).
    """
    from leash_eval import manifest as mf

    m = fetch_kwargs.pop("manifest", None) or mf.load_manifest()
    ds = question_dataset(name, manifest=m)
    if ds is None:
        raise LeashValueError(param="name", func="load_benchmark", value=name,
                              constraint=f"one of {sorted(GOLD_RULES)} or their benchmark labels")
    fetch_kwargs.setdefault("progress", False)
    return read_benchmark(mf.fetch(ds, manifest=m, **fetch_kwargs), GOLD_RULES[ds])


def gold_from_frame(frame: pd.DataFrame, *, question_col: str = "question_id",
                    gold_col: str = "gold") -> dict[str, str]:
    """``{question_id: gold}`` from a frame (e.g. :func:`load_benchmark` output)."""
    for col in (question_col, gold_col):
        if col not in frame.columns:
            raise ValueError(f"The gold frame lacks the column {col!r}; it has "
                             f"{list(frame.columns)}.")
    return dict(zip(frame[question_col].astype(str), frame[gold_col], strict=True))


# ----------------------------------------------------------------------------- responses

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


# ----------------------------------------------------------------------------- scoring


def _math_verify():
    return require_math_verify("scorer")


def _as_latex(s: str) -> str:
    return s if ("$" in s or "\\boxed" in s or "\\(" in s or "\\[" in s) else f"${s}$"


@lru_cache(maxsize=16384)
def _parsed_gold(gold: str) -> tuple:
    return tuple(_math_verify().parse(_as_latex(gold)))


class _TimeoutCount(logging.Filter):
    """Counts math-verify's "Timeout during ...: <the whole response>" warnings (a wrong answer:
    it returns ``[]`` / False) and keeps them off the terminal, where each would print the whole
    response in the middle of the progress bar.
    """

    n = 0

    def filter(self, record: logging.LogRecord) -> bool:
        timeout = isinstance(record.msg, str) and record.msg.startswith("Timeout during")
        self.n += timeout
        return not timeout


@contextmanager
def _counting_timeouts():
    counter = _TimeoutCount()
    loggers = [logging.getLogger(n) for n in ("math_verify.parser", "math_verify.grader")]
    for lg in loggers:
        lg.addFilter(counter)
    try:
        yield counter
    finally:
        for lg in loggers:
            lg.removeFilter(counter)


def _mv_grade(response: str | None, gold: str, extract: str) -> tuple[bool, str | None, bool]:
    r"""``(correct, answer, found)`` of one response against one gold (a string) with
    math-verify. ``answer`` is leash's extraction (:func:`leash_eval.answers.extract_answer`,
    normalized), the answer as the model wrote it, with either extractor: math-verify's own
    matched string is already rewritten (``0.5`` comes back as ``\frac{1}{2}``). ``found``
    says whether the grading extractor found an answer at all.
    """
    mv = _math_verify()
    if response is None:
        return False, None, False
    answer = normalize_answer(extract_answer(response))  # MATH_METHODS
    if extract == "math-verify":
        pred = mv.parse(response)
        if not pred:
            return False, answer, False
    else:
        if answer is None:
            return False, None, False
        pred = mv.parse(f"${answer}$")
    g = _parsed_gold(gold)
    correct = bool(g) and bool(pred) and bool(mv.verify(list(g), pred))
    return correct, answer, True


def verify_response(response, gold, *, extract: str = "math-verify") -> bool:
    """Whether one response is correct against one gold answer, with math-verify.

    Parameters
    ----------
    response : str or None
        Response text (None or NaN: wrong).
    gold : str or number
        Gold answer.
    extract : {"math-verify", "leash"}, default "math-verify"
        Answer extraction: math-verify's own, or :func:`leash_eval.answers.extract_answer` (its
        default order, :data:`leash_eval.answers.MATH_METHODS`).

    Returns
    -------
    bool
    """
    if extract not in EXTRACTORS:
        raise LeashValueError(param="extract", func="verify_response", value=extract,
                              constraint=f"one of {EXTRACTORS}")
    _math_verify()
    g = _gold_str(gold, where="verify_response")
    if response is None or (isinstance(response, float) and response != response):
        return False
    if not isinstance(response, str):
        raise LeashTypeError(param="response", func="verify_response", value=response,
                             constraint="a str or None", got=type(response).__name__)
    return _mv_grade(response, g, extract)[0]


def _gym_dataset(task):
    if hasattr(task, "score_answer"):
        return task
    if not isinstance(task, str):
        raise LeashTypeError(param="task", func="rescore", value=task, constraint=(
            "a Reasoning Gym task name or an object with score_answer(answer, entry)"))
    try:
        import reasoning_gym
    except ImportError:
        raise LeashImportError(Param("scorer", value="reasoning-gym"), " needs the reasoning-gym "
                               "package: pip install reasoning-gym (or pip install "
                               "'leash[gym]').", param="scorer") from None
    # The scorer reads everything it needs from the entry; a one-item dataset only provides the
    # task's score_answer method (and its configuration defaults).
    return reasoning_gym.create_dataset(task, size=1, seed=0)


def _gym_grade(dataset, response, entry, *, where: str) -> tuple[bool, str | None, bool]:
    answer = None
    if isinstance(response, str):
        answer = extract_answer(response, methods=REASONING_GYM_METHODS)
    score = dataset.score_answer(answer, entry)
    try:
        score = float(score)
    except (TypeError, ValueError):
        raise ValueError(f"The Reasoning Gym scorer returned a non-number for {where}: "
                         f"{score!r}.") from None
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"The Reasoning Gym scorer returned {score} for {where}, outside "
                         "[0, 1].")
    # full credit only: partial credit (e.g. 0.01) is a wrong answer
    return score == 1.0, normalize_answer(answer), answer is not None


# ----------------------------------------------------------------------------- one batch


@dataclass(frozen=True)
class _Spec:
    """What grading needs besides the rows: sent once to every worker process."""

    scorer: str
    extract: str
    task: object = None
    gold: Mapping | None = None  # question id -> gold; None: each row carries its own gold


class _Graded(NamedTuple):
    correct: np.ndarray    # bool, one per row
    answer: list           # normalized extracted answer or None, one per row
    no_answer: np.ndarray  # bool: nothing extractable (counted as wrong)
    timeouts: int          # math-verify parses/comparisons that timed out (counted as wrong)


def _prepare(spec: _Spec):
    """The scorer of a spec, ready to grade (checks the optional package is there)."""
    if spec.scorer == "math-verify":
        _math_verify()
        return spec, None
    return spec, _gym_dataset(spec.task)


def _grade_rows(state, responses: list, golds: list | None, qids: list,
                offset: int) -> _Graded:
    """Grade one batch of rows: the one grading function behind every path (in memory,
    streaming, in this process or in a worker). ``golds`` is None when ``spec.gold`` maps
    question ids to gold answers; ``offset`` is the batch's first row number, for messages.
    """
    spec, gym = state
    n = len(responses)
    correct = np.zeros(n, dtype=bool)
    found = np.zeros(n, dtype=bool)
    answers: list = [None] * n
    with _counting_timeouts() as timeouts:
        for i in range(n):
            resp, qid = responses[i], qids[i]
            if isinstance(resp, float) and resp != resp:
                resp = None
            if resp is not None and not isinstance(resp, str):
                raise TypeError(f"The response of sample row {offset + i} (question {qid}) must "
                                f"be a str or missing. Got {type(resp).__name__}.")
            gold = spec.gold[qid] if golds is None else golds[i]
            if gym is None:
                if golds is not None:
                    gold = _gold_str(gold, where=f"sample row {offset + i} (question {qid})")
                correct[i], answers[i], found[i] = _mv_grade(resp, gold, spec.extract)
            else:
                correct[i], answers[i], found[i] = _gym_grade(
                    gym, resp, gold, where=f"sample row {offset + i} (question {qid})")
    return _Graded(correct, answers, ~found, timeouts.n)


# ----------------------------------------------------------------------------- processes


def default_jobs() -> int:
    """The number of CPU cores this process may run on (``os.sched_getaffinity``), at least 1.

    Returns
    -------
    int
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without sched_getaffinity
        return max(1, os.cpu_count() or 1)


_WORKER_STATE = None


def _worker_init(spec: _Spec) -> None:
    # Ctrl-C reaches every process of the terminal's foreground group: the parent alone handles
    # it (one line, exit 130) and stops the workers, which must not print tracebacks of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    global _WORKER_STATE
    _WORKER_STATE = _prepare(spec)


def _worker_grade(args) -> _Graded:
    return _grade_rows(_WORKER_STATE, *args)


def _mp_context():
    """Worker processes start from a fork server that imported math-verify once (POSIX), else
    are spawned. Not ``fork``: the parent may hold threads (pyarrow, DuckDB, tqdm's monitor).
    """
    import multiprocessing as mp

    if "forkserver" in mp.get_all_start_methods():
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["leash_eval.rescore", "math_verify"])
        return ctx
    return mp.get_context("spawn")  # pragma: no cover - not POSIX


def _stop_workers(executor) -> None:
    """End the workers now, not after their current batch (Ctrl-C, an error, early close).

    Never waits without a bound: batches still queued for a worker that is gone can keep the
    queue's feeder thread writing into a full pipe, and the executor joins that thread holding
    the lock its ``shutdown`` takes; so the queue drops them, and ``shutdown`` runs in a thread
    of its own. (A Ctrl-C under a loaded ``make test`` hung once, twice over the project's
    life, and was not reproduced; this is where a wait had no bound.)
    """
    procs = list((getattr(executor, "_processes", None) or {}).values())
    queue = getattr(executor, "_call_queue", None)
    if queue is not None:
        queue.cancel_join_thread()  # the batches not yet sent are dropped, not awaited
    if hasattr(executor, "terminate_workers"):  # Python >= 3.14
        executor.terminate_workers()
    else:  # before 3.14 the executor has no public way to stop a running worker
        for p in procs:
            p.terminate()
    closer = threading.Thread(target=executor.shutdown, kwargs={"wait": False,
                              "cancel_futures": True}, daemon=True)
    closer.start()
    closer.join(timeout=10)
    for p in procs:
        p.join(timeout=10)


_CLUSTER_STATE: dict = {}
_CLUSTER_LOCK = threading.Lock()


def _cluster_grade(spec: _Spec, args) -> _Graded:
    """One batch on a worker of a Dask cluster. Dask runs tasks in threads, and math-verify's
    timeouts need the main thread (``signal.alarm``), so the worker grades in its own pool of
    processes (one per worker thread, started for the first batch of a spec, which arrives once
    per worker, scattered) as :func:`_graded` does outside the main thread.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from distributed import get_worker

    if multiprocessing.current_process().daemon:
        raise LeashValueError(
            Param("cluster"), " names a Dask cluster whose workers are daemonic "
            "processes, which cannot start the processes that "
            "grading needs (math-verify times out with signal.alarm, in a main thread only): "
            "start the workers with DASK_DISTRIBUTED__WORKER__DAEMON=False in their "
            "environment (README, 'Running on your own generations').")
    with _CLUSTER_LOCK:
        entry = _CLUSTER_STATE.get(id(spec))
        if entry is None or entry[0] is not spec:
            for _, pool in _CLUSTER_STATE.values():
                pool.shutdown(wait=False, cancel_futures=True)
            _CLUSTER_STATE.clear()
            pool = ProcessPoolExecutor(max_workers=get_worker().state.nthreads,
                                       mp_context=_mp_context(), initializer=_worker_init,
                                       initargs=(spec,))
            entry = _CLUSTER_STATE[id(spec)] = (spec, pool)
    return entry[1].submit(_worker_grade, args).result()


def _cluster_close() -> None:
    """End the grading processes of a cluster worker (run on every worker after a call): a
    pool left behind would outlive the worker, its processes waiting for work forever.
    """
    with _CLUSTER_LOCK:
        for _, pool in _CLUSTER_STATE.values():
            pool.shutdown(wait=True, cancel_futures=True)
        _CLUSTER_STATE.clear()


def _cluster_graded(tasks, spec: _Spec, address: str):
    """:func:`_graded` on the Dask cluster at ``address`` (``dask.distributed``): at most two
    batches per worker thread in flight, results in input order; a batch that fails raises
    its own error here.
    """
    from leash_eval.cluster import connected, in_order

    with connected(address) as client:
        try:
            spec_f = client.scatter(spec, broadcast=True)
            yield from in_order(client, _cluster_grade, tasks, spec_f)
        finally:
            client.run(_cluster_close)


def _graded(tasks, spec: _Spec, jobs: int, cluster: str | None = None):
    """Yield ``(meta, _Graded)`` for each ``(meta, args)`` of ``tasks``, in input order: here
    with ``jobs == 1`` or one batch (in the main thread), else by ``jobs`` worker processes with
    at most ``2 * jobs`` batches in flight (see the module docstring), or on the Dask cluster at
    ``cluster``.
    """
    from concurrent.futures import ProcessPoolExecutor

    state = _prepare(spec)  # here first: a missing package or bad task fails before any worker
    if cluster is not None:
        yield from _cluster_graded(tasks, spec, cluster)
        return
    it = iter(tasks)
    head = list(itertools.islice(it, 2))
    if not head:
        return
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread and (jobs == 1 or len(head) == 1):
        for meta, args in itertools.chain(head, it):
            yield meta, _grade_rows(state, *args)
        return
    from concurrent.futures.process import BrokenProcessPool

    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=_mp_context(),
                                   initializer=_worker_init, initargs=(spec,))
    finished = False
    try:
        pending: deque = deque()
        for meta, args in itertools.chain(head, it):
            pending.append((meta, executor.submit(_worker_grade, args)))
            if len(pending) >= 2 * jobs:
                meta0, fut = pending.popleft()
                yield meta0, fut.result()
        while pending:
            meta0, fut = pending.popleft()
            yield meta0, fut.result()
        finished = True
    except BrokenProcessPool:
        raise OSError(f"A rescoring worker process died (killed from outside, e.g. by the "
                      f"system when memory ran out); with {jobs} jobs and batches of "
                      f"{len(head[0][1][0])} samples, try fewer jobs or smaller batches.") from None
    finally:
        if finished:
            executor.shutdown(wait=True)
        else:
            _stop_workers(executor)


def progress_bar(progress: bool, desc: str, total: int | None = None):
    """A tqdm progress bar on stderr, counting samples; shown only when ``progress`` is true and
    stderr is a terminal.

    Parameters
    ----------
    progress : bool
        False: a disabled bar (its ``update`` does nothing).
    desc : str
        The bar's label (the command, e.g. ``"rescore"``).
    total : int, optional
        The number of samples, when known.

    Returns
    -------
    tqdm.tqdm
        A context manager.
    """
    # Plain tqdm on stderr, not tqdm.auto: the auto bar warns "IProgress not found" in a notebook
    # without ipywidgets. disable=None: tqdm's own rule, off when stderr is not a terminal (logs,
    # notebooks, CI).
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=" samples", file=sys.stderr, dynamic_ncols=True,
                disable=None if progress else True, leave=False)


def _jobs_and_batch(jobs, batch_size, func: str) -> tuple[int, int]:
    """``jobs`` (None: every core) and ``batch_size`` as ints >= 1."""
    out = []
    for name, x, or_none in (("jobs", jobs, " or None"), ("batch_size", batch_size, "")):
        if x is None and or_none:
            x = default_jobs()
        if isinstance(x, bool) or not isinstance(x, int | np.integer) or x < 1:
            raise LeashValueError(param=name, func=func, value=x,
                                  constraint=f"an int >= 1{or_none}")
        out.append(int(x))
    return out[0], out[1]


def _spec(func: str, scorer, extract, task, gold_map) -> _Spec:
    if scorer not in SCORERS:
        raise LeashValueError(param="scorer", func=func, value=scorer,
                              constraint=f"one of {SCORERS}")
    if scorer == "math-verify":
        if task is not None:
            raise LeashValueError(Param("task", func=func), " applies to ",
                                  Param("scorer", value="reasoning-gym"), " only.", value=task)
        if extract not in EXTRACTORS:
            raise LeashValueError(param="extract", func=func, value=extract,
                                  constraint=f"one of {EXTRACTORS}")
        if gold_map is not None:
            gold_map = {q: _gold_str(g, where=f"question {q}") for q, g in gold_map.items()}
    else:
        if task is None:
            raise LeashValueError(Param("task", func=func), " is required with ",
                                  Param("scorer", value="reasoning-gym"), ".")
        if gold_map is None:
            raise LeashValueError(Param("scorer", value="reasoning-gym"), " needs ",
                                  Param("gold", func=func), " (Reasoning Gym entries by question "
                                  "id).", param="gold")
    return _Spec(scorer, extract, task, gold_map)


def _gold_map(gold, func: str) -> dict:
    if isinstance(gold, pd.DataFrame):
        return gold_from_frame(gold)
    if isinstance(gold, pd.Series | Mapping):
        return {str(k): v for k, v in gold.items()}
    raise LeashTypeError(param="gold", func=func, value=gold, got=type(gold).__name__,
                         constraint="a mapping, Series or DataFrame")


# ----------------------------------------------------------------------------- in memory


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
        Worker processes (None: :func:`default_jobs`); the result does not depend on it.
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
    if scorer not in SCORERS:
        raise LeashValueError(param="scorer", func=func, value=scorer,
                              constraint=f"one of {SCORERS}")
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
    gold_map = _gold_map(gold, func)
    jobs, batch_size = _jobs_and_batch(jobs, batch_size, func)
    qids = samples[question_col].astype(str).tolist()
    missing = sorted(set(qids) - set(gold_map))
    if missing:
        raise ValueError(f"{len(missing)} question(s) of the samples have no gold answer, e.g. "
                         f"{missing[:5]} (of {len(set(qids))} questions, {len(gold_map)} golds).")
    spec = _spec(func, scorer, extract, task, gold_map)

    responses = samples[response_col].tolist()
    n = len(responses)
    tasks = (((start, min(start + batch_size, n)),
              (responses[start:start + batch_size], None, qids[start:start + batch_size], start))
             for start in range(0, n, batch_size))
    verdicts = np.zeros(n, dtype=bool)
    no_answer = np.zeros(n, dtype=bool)
    answers: list = [None] * n
    n_timeouts = 0
    with progress_bar(progress, "rescore", total=n) as bar, \
            closing(_graded(tasks, spec, jobs)) as gr:
        for (start, end), g in gr:
            verdicts[start:end] = g.correct
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
    out["correct"] = verdicts
    out["answer"] = pd.array(answers, dtype="string")
    return RescoreResult(out, int(changed.sum()), changed, int(no_answer.sum()), n_timeouts)


# ----------------------------------------------------------------------------- streaming

#: Columns of a rescored samples file, in this order, then any of :data:`_EXTRA_COLUMNS` the
#: input has.
OUTPUT_SCHEMA = pa.schema([("model", pa.string()), ("benchmark", pa.string()),
                           ("question_id", pa.string()), ("step", pa.int64()),
                           ("sample_idx", pa.int64()), ("correct", pa.bool_()),
                           ("answer", pa.string())])
# Other canonical samples columns (leash_eval.formats.SAMPLES_OPTIONAL) passed through when the
# input batches carry them; `response` is left out (rescored files are for counting) and so is
# `gold`.
_EXTRA_COLUMNS = {"n_tokens": pa.int64(), "token_entropy": pa.float64(),
                  "finish_reason": pa.string()}
_OUT_SUFFIXES = (".parquet", ".pq", ".jsonl")


class MissingGoldError(LeashValueError):
    """A sample has no gold answer: neither in the ``gold`` given nor in its own file."""


class RescoreReport(NamedTuple):
    """Output of :func:`rescore_file`: ``out`` (the rescored samples file, or None),
    ``n_samples``, ``n_changed`` (verdicts that differ from the input's ``correct``; a missing
    one counts as False), ``n_no_answer`` and ``n_timeouts`` (as in :class:`RescoreResult`) and
    ``table``, one row per (model, benchmark, step): ``samples, questions, accuracy_before,
    accuracy_after, changed, agreement, no_answer``.
    """

    out: Path | None
    n_samples: int
    n_changed: int
    n_no_answer: int
    n_timeouts: int
    table: pd.DataFrame


class _Writer:
    """Rescored samples written batch by batch to a temporary file beside ``out``, moved into
    place only when every batch is written (an interrupted run leaves no half file).
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
        self.tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        self.schema = self._pq = self._fh = None

    def write(self, table: pa.Table) -> None:
        import pyarrow.parquet as pq

        if self.parquet:
            self._pq = self._pq or pq.ParquetWriter(self.tmp, table.schema)
            self._pq.write_table(table)
        else:
            self._fh = self._fh or open(self.tmp, "w", encoding="utf-8")
            self._fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                   for r in table.to_pylist()))

    def close(self) -> None:
        import pyarrow.parquet as pq

        if self.parquet:  # no rows: still a valid (empty) file with the columns
            (self._pq or pq.ParquetWriter(self.tmp, self.schema or OUTPUT_SCHEMA)).close()
        else:
            (self._fh or open(self.tmp, "w", encoding="utf-8")).close()
        os.replace(self.tmp, self.out)

    def abort(self) -> None:
        for h in (self._pq, self._fh):
            if h is not None:
                with suppress(Exception):  # already failing; the file is removed anyway
                    h.close()
        self.tmp.unlink(missing_ok=True)


class _Tally:
    """Per (model, benchmark, step) counts of a stream, for the report table."""

    def __init__(self):
        self.rows: dict = {}

    def add(self, frame: pd.DataFrame) -> None:
        for key, g in frame.groupby(["model", "benchmark", "step"], sort=False, dropna=False):
            key = tuple(None if pd.isna(k) else k for k in key)
            r = self.rows.setdefault(key, {"samples": 0, "questions": set(), "known": 0,
                                           "before": 0, "after": 0, "changed": 0,
                                           "changed_known": 0, "no_answer": 0})
            known = g["before"].notna().to_numpy()
            r["samples"] += len(g)
            r["questions"].update(g["question_id"])
            r["known"] += int(known.sum())
            r["before"] += int(g["before"].to_numpy(dtype=bool, na_value=False).sum())
            r["after"] += int(g["after"].sum())
            r["changed"] += int(g["changed"].sum())
            r["changed_known"] += int(g["changed"].to_numpy()[known].sum())
            r["no_answer"] += int(g["no_answer"].sum())

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
                        "changed": r["changed"],
                        "agreement": 1 - r["changed_known"] / k if k else math.nan,
                        "no_answer": r["no_answer"]})
        cols = ["model", "benchmark", "step", "samples", "questions", "accuracy_before",
                "accuracy_after", "changed", "agreement", "no_answer"]
        return pd.DataFrame(out, columns=cols).astype({"step": "Int64"})


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
    gold_map = None if gold is None else _gold_map(gold, func)
    jobs, batch_size = _jobs_and_batch(jobs, batch_size, func)
    spec = _spec(func, scorer, extract, task, gold_map)
    writer = _Writer(Path(out)) if out is not None else None
    tally = _Tally()
    counts = {"rows": 0, "gold_seen": False}
    extras: list[str] | None = None
    check = _GoldCheck(gold_map, func) if gold_map is not None and \
        spec.scorer == "math-verify" else None

    def tasks():
        for path, batch in _batches_of(inputs, batch_size):
            qids = _column(batch, "question_id", path).cast(pa.string()).to_pylist()
            offset = counts["rows"]
            counts["rows"] += len(qids)
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
            yield (path, batch, qids), (responses, golds, qids, offset)
        if check is not None:
            check.done()

    n = n_changed = n_no_answer = n_timeouts = 0
    try:
        with progress_bar(progress, "rescore") as bar, \
                closing(_graded(tasks(), spec, jobs, cluster)) as gr:
            for (path, batch, qids), g in gr:
                before = (_column(batch, "correct", path).to_pandas().astype("boolean")
                          if "correct" in batch.schema.names
                          else pd.Series(pd.NA, index=range(len(g.correct)), dtype="boolean"))
                changed = before.fillna(False).to_numpy(dtype=bool) != g.correct
                tally.add(pd.DataFrame({
                    "model": _column(batch, "model", path).cast(pa.string()).to_pandas(),
                    "benchmark": _column(batch, "benchmark", path).cast(pa.string()).to_pandas(),
                    "step": _column(batch, "step", path).cast(pa.int64()).to_pandas(
                        types_mapper={pa.int64(): pd.Int64Dtype()}.get),
                    "question_id": qids,
                    "before": before.array,
                    "after": g.correct, "changed": changed, "no_answer": g.no_answer}))
                n += len(g.correct)
                n_changed += int(changed.sum())
                n_no_answer += int(g.no_answer.sum())
                n_timeouts += g.timeouts
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
                         n_timeouts, tally.table())


class _GoldCheck:
    """The file's own gold answers, where it has them, against the given ones, on its first
    :attr:`SIZE` questions: a warning when most differ (math-verify), since the given ones are
    then another benchmark's, or the same in another order, and every response is graded
    against another question's answer. A warning, not an error: a file's own gold answers may
    be the wrong ones, which is why gold answers are given.
    """

    SIZE = 50

    def __init__(self, given: dict, func: str):
        self.given, self.func, self.own, self.path = given, func, {}, None

    def add(self, qids, golds, path) -> None:
        if self.own is None:
            return
        self.path = self.path or path  # the file the compared questions start in
        for q, g in zip(qids, golds):
            if g is not None and len(self.own) < self.SIZE:
                self.own.setdefault(q, g)
        if len(self.own) >= self.SIZE:
            self.done()

    def done(self) -> None:
        own, self.own = self.own, None
        if not own:
            return
        mv = _math_verify()
        # math-verify's timeouts are signals, for the main thread only; elsewhere (a caller's
        # thread) the answers are compared as leash normalizes them
        exact = threading.current_thread() is threading.main_thread()

        def same(a, b):
            a, b = str(a).strip(), str(b).strip()
            if a == b or not exact:
                return a == b or normalize_answer(a) == normalize_answer(b)
            pa, pb = _parsed_gold(a), _parsed_gold(b)
            return bool(pa and pb and mv.verify(list(pb), list(pa)))

        differ = [(q, a, self.given[q]) for q, a in own.items() if not same(a, self.given[q])]
        if 2 * len(differ) > len(own):
            q, a, b = differ[0]
            warnings.warn(LeashWarning(
                f"{self.path}: the file's own gold answers contradict ",
                Param("gold", func=self.func), f" on {len(differ)} of the {len(own)} questions "
                f"compared (question {q}: {a!r} in the file, {b!r} given): if those are another "
                "benchmark's answers, or in another order, every response is graded against "
                "another question's;", param="gold", func=self.func, file=self.path, key=q,
                hint=("leave out ", Param("gold"), " to grade against the file's own.")),
                stacklevel=2)


def _output_table(batch: pa.RecordBatch, g: _Graded, schema: pa.Schema, extras: list,
                  path: Path) -> pa.Table:
    late = [c for c in _EXTRA_COLUMNS if c in batch.schema.names and c not in extras]
    if late:
        raise ValueError(f"{path} has the column(s) {late}, which the earlier inputs of the same "
                         "output file lack: rescore it into a file of its own.")
    n = len(g.correct)
    cols = {}
    for field in schema:
        if field.name == "correct":
            cols["correct"] = pa.array(g.correct, type=pa.bool_())
        elif field.name == "answer":
            cols["answer"] = pa.array(g.answer, type=pa.string())
        elif field.name in batch.schema.names:
            col = batch.column(field.name)
            if pa.types.is_dictionary(col.type):
                col = col.dictionary_decode()
            cols[field.name] = col.cast(field.type)
        else:  # an extra column the first input had and this one lacks
            cols[field.name] = pa.nulls(n, type=field.type)
    return pa.Table.from_pydict(cols, schema=schema)


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
    ``jobs`` (see the module docstring), and write the rescored samples in input order.

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
        The address of a Dask scheduler (``tcp://host:8786``; ``pip install leash[cluster]``):
        the batches are graded by its workers instead of ``jobs`` local processes, at most two
        per worker thread in flight, and written in input order, so the output is the local
        run's.

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


# ----------------------------------------------------------------------------- cache

#: Where :func:`rescored_path` keeps rescored files (ignored by git).
CACHE_DIR = BUILD / "rescored"
# Part of every cache key: bump it when grading or the output format changes.
_CACHE_VERSION = 1


def rescored_path(path, *, scorer: str = "math-verify", extract: str = "math-verify",
                  gold: str | None = None, reader: Mapping | None = None,
                  cache_dir=None, jobs: int | None = None, progress: bool = False,
                  **fetch_kwargs) -> Path:
    """The rescored samples file of one generations file, made once and then reused: a Parquet
    file under ``cache_dir`` (default :data:`CACHE_DIR`) named by a sha256 over the input's bytes
    (hashed every time), the scorer, extractor, gold source, reader options and math-verify
    version.

    Parameters
    ----------
    path : path-like
        Generations file with response texts.
    scorer : {"math-verify"}
        The scorer (Reasoning Gym needs entries per question, which study files do not name).
    extract : {"math-verify", "leash"}
        As in :func:`rescore`.
    gold : str, optional
        A benchmark of the data manifest with a question file (``math500``, ``aime24``, ...,
        see :func:`question_dataset`); None: the file's own gold answers.
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

    if scorer != "math-verify":
        raise LeashValueError(param="scorer", func="rescored_path", value=scorer,
                              constraint="'math-verify'")
    if extract not in EXTRACTORS:
        raise LeashValueError(param="extract", func="rescored_path", value=extract,
                              constraint=f"one of {EXTRACTORS}")
    _math_verify()
    p = Path(path)
    reader = dict(reader or {})
    gold_id = None
    if gold is not None:
        ds = question_dataset(gold)
        if ds is None:
            raise LeashValueError(param="gold", func="rescored_path", value=gold, constraint=(
                "a benchmark of the data manifest with a question file "
                f"({sorted(GOLD_RULES)})"))
        gold_id = f"{ds}:{mf.load_manifest().datasets[ds].sha256}"
    key = json.dumps({"version": _CACHE_VERSION, "input": mf.sha256_file(p), "scorer": scorer,
                      "extract": extract, "gold": gold_id, "reader": reader,
                      "math_verify": version("math-verify")}, sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    folder = Path(cache_dir) if cache_dir is not None else CACHE_DIR
    target = folder / f"{p.name.split('.')[0]}.{digest}.parquet"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    gold_map = (gold_from_frame(load_benchmark(gold, **fetch_kwargs)) if gold is not None
                else None)
    rescore_inputs([(p, reader)], target, gold_map, scorer=scorer, extract=extract, task=None,
                   jobs=jobs, batch_size=1000, progress=progress, func="rescored_path")
    return target
