"""Benchmark question files and gold answers, the first part of :mod:`leash_eval.rescore`.

The question files of the data manifest (:data:`GOLD_RULES`, :func:`load_benchmark`), read with
a gold rule (:func:`read_benchmark`); the gold answers a call is given, as ``{question_id:
gold}`` (:func:`as_gold_map`); and the check of a file's own gold answers against the given
ones (:class:`GoldCheck`); math-verify's parse of a gold answer (:func:`parsed_gold`), and its
limits in CPU time (:func:`cpu_limited`) and timeouts counted (:func:`counting_timeouts`).
Question ids follow the Qwen2.5-Math evaluator: the file's ``idx`` field, else the 0-based row
position.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from leash.errors import LeashTypeError, LeashValueError, LeashWarning, Param
from leash.sources.choices import GOLD_FILE_RULES
from leash_eval.answers import canonical_number, last_boxed, normalize_answer, require_math_verify

__all__ = ["BENCHMARK_GOLD", "GOLD_RULES", "ID_FIELDS", "GoldByIds", "GoldCheck",
           "MissingGoldError", "as_gold_map", "counting_timeouts", "cpu_limited",
           "gold_from_frame", "gold_str",
           "load_benchmark", "parsed_gold", "question_dataset", "read_benchmark"]


#: How the gold answer of each benchmark file is found (manifest dataset name -> rule).
BENCHMARK_GOLD = {
    "math500": "answer",
    "aime24": "answer",
    "amc23": "answer",
    "minerva-math": "last \\boxed{} of solution",
    "olympiadbench": "final_answer (list, joined with ', ')",
    "gsm8k-probe-questions": "gold",
}


#: How each question file of :data:`leash.sources.choices.GOLD_DATASETS` is read.
GOLD_RULES = {"math500": "answer", "aime24": "answer", "amc23": "answer",
              "minerva-math": "minerva", "olympiadbench": "olympiadbench",
              "gsm8k-probe-questions": "gold"}


class MissingGoldError(LeashValueError):
    """A sample has no gold answer: neither in the ``gold`` given nor in its own file."""


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

    rules = GOLD_FILE_RULES
    if rule not in rules:
        raise LeashValueError(param="rule", func="read_benchmark", value=rule,
                              constraint=f"one of {rules}")
    p = Path(path)
    rows, ids = [], {f: [] for f in ID_FIELDS}
    for where, rec in F.json_records(p):
        qid = rec.get("question_id", rec.get("idx", rec.get("qid", len(rows))))
        for f, col in ids.items():  # every id field the file has, for GoldByIds
            v = rec.get(f)
            col.append(str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) else None)
        question = rec.get("problem", rec.get("question"))
        if rule in ("answer", "gold"):
            if rule not in rec:
                raise ValueError(f"{where}: field '{rule}' is missing.")
            gold = gold_str(rec[rule], where=where)
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
            gold = ", ".join(gold_str(v, where=where) for v in fa)
        rows.append({"question_id": str(qid), "question": question, "gold": gold})
    df = pd.DataFrame(rows, columns=["question_id", "question", "gold"])
    dup = df["question_id"].duplicated()
    if dup.any():
        raise ValueError(f"{p}: duplicate question ids {df.loc[dup, 'question_id'].tolist()[:5]}.")
    df = df.astype({"question_id": "string", "question": "string", "gold": "string"})
    own = next((f for f in ("question_id", "idx", "qid") if None not in ids[f] and rows), None)
    # the id fields that name every question once: the other ways samples may key them
    df.attrs["ids"] = {f: col for f, col in ids.items() if f != own and rows and None not in col
                       and len(set(col)) == len(col)}
    df.attrs["own_id"] = own or "line"
    return df


def gold_str(value, *, where: str) -> str:
    """One gold answer as a string: stripped text, an int's digits, or a float written
    canonically (:func:`leash_eval.answers.canonical_number`); a ValueError naming ``where``
    when it is missing, empty, not finite or of another type.
    """
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


#: The fields of a question file that may key its questions, besides the row number.
ID_FIELDS = ("question_id", "idx", "qid", "unique_id", "id", "problem_id", "example_id")


class GoldByIds(dict):
    """Gold answers by the question file's own id (``question_id``, ``idx`` or ``qid``, else the
    row number from 0: ``own``), a dict; ``others`` holds them by every other id field the file
    has (``unique_id``, ``id``, ...). :meth:`match` picks the ids the samples use.
    """

    def __init__(self, own_map: dict, own: str, others: dict[str, dict]):
        super().__init__(own_map)
        self.own, self.others = own, others

    def match(self, qids, where) -> tuple[str, dict]:
        """(field, gold map) of the id field holding every id of ``qids``; a
        :class:`MissingGoldError` naming the fields tried when none does. Two fields that both
        hold every id but give some id another gold answer are ambiguous: which questions the
        samples mean is a guess, so that is refused too, naming both fields and that id (fields
        that agree on every id, such as ``idx`` and the line number of a file numbered from 0,
        give the same answers whichever is taken).
        """
        need = set(qids)
        fits = [(f, m) for f, m in ((self.own, dict(self)), *self.others.items())
                if need <= m.keys()]
        for (f1, m1), (f2, m2) in zip(fits, fits[1:]):
            if q := next((q for q in sorted(need) if m1[q] != m2[q]), None):
                raise LeashValueError(
                    f"{where}: the samples' question ids are ids of two fields of the gold "
                    f"answers, {f1} and {f2}, which differ (question {q!r}: {m1[q]!r} by "
                    f"{f1}, {m2[q]!r} by {f2}); which one the samples mean is ambiguous: give "
                    "a question file with one of them.", file=where, key="question_id",
                    value=q)
        if fits:
            return fits[0]
        tried = ", ".join(f"{f} (e.g. {next(iter(m), None)!r})" for f, m in (
            (self.own, self), *self.others.items()))
        raise MissingGoldError(
            f"{where}: no id field of the gold answers holds the samples' question ids (e.g. "
            f"{sorted(need)[:3]}); tried {tried}.", file=where, key="question_id")


def gold_from_frame(frame: pd.DataFrame, *, question_col: str = "question_id",
                    gold_col: str = "gold") -> dict[str, str]:
    """``{question_id: gold}`` from a frame (e.g. :func:`load_benchmark` output); a
    :class:`GoldByIds` when the frame's question file has other id fields too.
    """
    for col in (question_col, gold_col):
        if col not in frame.columns:
            raise ValueError(f"The gold frame lacks the column {col!r}; it has "
                             f"{list(frame.columns)}.")
    own = dict(zip(frame[question_col].astype(str), frame[gold_col], strict=True))
    others = frame.attrs.get("ids") or {}
    if question_col != "question_id" or not others:
        return own
    golds = list(frame[gold_col])
    return GoldByIds(own, frame.attrs.get("own_id", "question_id"),
                     {f: dict(zip(col, golds, strict=True)) for f, col in others.items()})


def as_gold_map(gold, func: str) -> dict:
    """The ``gold`` argument of ``func`` (mapping, Series or :func:`load_benchmark` frame) as
    ``{question_id (str): gold}``.
    """
    if isinstance(gold, pd.DataFrame):
        return gold_from_frame(gold)
    if isinstance(gold, GoldByIds):
        return gold
    if isinstance(gold, pd.Series | Mapping):
        return {str(k): v for k, v in gold.items()}
    raise LeashTypeError(param="gold", func=func, value=gold, got=type(gold).__name__,
                         constraint="a mapping, Series or DataFrame")


def _as_latex(s: str) -> str:
    return s if ("$" in s or "\\boxed" in s or "\\(" in s or "\\[" in s) else f"${s}$"


class _Timeouts(logging.Filter):
    """The one filter on math-verify's loggers while a :func:`counting_timeouts` block runs:
    counts its "Timeout during ...: <the whole response>" warnings (a wrong answer: it returns
    ``[]`` / False) and keeps them off the terminal, where each would print the whole response
    in the middle of the progress bar. One filter and one count, so blocks nest: a logging
    filter that rejects a record hides it from the filters after it.
    """

    def __init__(self):
        super().__init__()
        self.n = self.depth = 0

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.msg if isinstance(record.msg, str) else ""
        timeout = msg.startswith("Timeout during")
        self.n += timeout
        # and its note that its own (wall-clock) limit is off: leash's limit is CPU time
        return not (timeout or msg.startswith("Timeout is disabled"))


_TIMEOUTS = _Timeouts()


class _TimeoutCount:
    """What :func:`counting_timeouts` yields: ``n``, the timeouts since the block began."""

    def __init__(self):
        self._start = _TIMEOUTS.n

    @property
    def n(self) -> int:
        return _TIMEOUTS.n - self._start


@contextmanager
def counting_timeouts():
    """Within the block, math-verify's timeout warnings are counted (the ``n`` of the object
    yielded) and kept off the terminal; blocks nest (each counts every timeout in it).
    """
    loggers = [logging.getLogger(n) for n in ("math_verify.parser", "math_verify.grader")]
    if not _TIMEOUTS.depth:
        for lg in loggers:
            lg.addFilter(_TIMEOUTS)
    _TIMEOUTS.depth += 1
    try:
        yield _TimeoutCount()
    finally:
        _TIMEOUTS.depth -= 1
        if not _TIMEOUTS.depth:  # outside every block, math-verify's warnings are its own
            for lg in loggers:
                lg.removeFilter(_TIMEOUTS)


def cpu_limited(call, seconds: float, fallback):
    """``call()`` (a call of math-verify) within ``seconds`` of this process's CPU time, not
    wall-clock time: math-verify's own limits are ``signal.alarm``'s wall-clock seconds, which a
    machine busy with other processes spends where an idle one does not, so that its verdicts
    changed with the load. A CPU-time timer (``setitimer(ITIMER_PROF)``: user and system time)
    raises math-verify's ``TimeoutException`` in the call, which math-verify turns into its
    "Timeout during ..." warning (counted by :func:`counting_timeouts`) and an empty parse or
    False; one raised
    outside math-verify's handlers is counted here and gives ``fallback``. Call math-verify
    with its own limit off (``parsing_timeout=None``, ``timeout_seconds=None``). In the main
    thread only (signals), as math-verify's limits; where there is no ``setitimer``
    (Windows) the call runs unlimited.
    """
    import signal

    from math_verify.errors import TimeoutException

    if not hasattr(signal, "setitimer"):  # pragma: no cover - Windows
        return call()

    def expired(signum, frame):
        raise TimeoutException("CPU time limit")

    previous = signal.signal(signal.SIGPROF, expired)
    try:
        try:
            signal.setitimer(signal.ITIMER_PROF, float(seconds))
            return call()
        finally:  # a one-shot timer: once disarmed (or fired) no second exception can come
            signal.setitimer(signal.ITIMER_PROF, 0)
    except TimeoutException:  # fired between math-verify's own handlers
        _TIMEOUTS.n += 1
        return fallback
    finally:
        signal.signal(signal.SIGPROF, previous)


#: Gold parses that finished, by gold answer (the most recent :data:`_GOLD_CACHE_SIZE`).
_GOLD_PARSES: OrderedDict = OrderedDict()
_GOLD_CACHE_SIZE = 16384


def parsed_gold(gold: str, limit: int = 5) -> tuple | None:
    """math-verify's parse of one gold answer (wrapped as ``$gold$`` without math delimiters),
    within ``limit`` seconds of CPU time (:func:`cpu_limited`; math-verify's default limit, 5),
    cached once it finished.

    Returns
    -------
    tuple or None
        The parse (empty: unparsable); None when it timed out: no verdict, and nothing cached
        (a cached timeout would grade every response to the question wrong).
    """
    hit = _GOLD_PARSES.get(gold)
    if hit is not None:
        _GOLD_PARSES.move_to_end(gold)
        return hit
    mv = require_math_verify("scorer")
    with counting_timeouts() as timeouts:
        parsed = tuple(cpu_limited(lambda: mv.parse(_as_latex(gold), parsing_timeout=None),
                                   limit, []))
    if timeouts.n:
        return None
    _GOLD_PARSES[gold] = parsed
    if len(_GOLD_PARSES) > _GOLD_CACHE_SIZE:
        _GOLD_PARSES.popitem(last=False)
    return parsed


class GoldCheck:
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
        """Note the file's own gold answers of one batch (None: the row has none)."""
        if self.own is None:
            return
        self.path = self.path or path  # the file the compared questions start in
        for q, g in zip(qids, golds):
            if g is not None and len(self.own) < self.SIZE:
                self.own.setdefault(q, g)
        if len(self.own) >= self.SIZE:
            self.done()

    def done(self) -> None:
        """Compare the answers noted (once; later calls do nothing) and warn if most differ."""
        own, self.own = self.own, None
        if not own:
            return
        mv = require_math_verify("scorer")
        # math-verify's timeouts are signals, for the main thread only; elsewhere (a caller's
        # thread) the answers are compared as leash normalizes them
        exact = threading.current_thread() is threading.main_thread()

        def same(a, b):
            a, b = str(a).strip(), str(b).strip()
            if a == b or not exact:
                return a == b or normalize_answer(a) == normalize_answer(b)
            pa, pb = parsed_gold(a), parsed_gold(b)
            if pa is None or pb is None:  # timed out: compared as leash normalizes them
                return normalize_answer(a) == normalize_answer(b)
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

