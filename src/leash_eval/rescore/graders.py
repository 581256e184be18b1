"""Grading one batch of responses, with math-verify or a Reasoning Gym scorer: the one grading
function behind every path of :mod:`leash_eval.rescore` (:func:`grade_rows`), what it needs
besides the rows (:class:`Spec`), and math-verify's timeouts, counted
(:func:`~leash_eval.rescore.gold.counting_timeouts`). Each scorer is an entry of the registry
(:mod:`leash_eval.scorers`) naming its :class:`~leash_eval.scorers.Grader` here
(:data:`MATH_VERIFY`, :data:`REASONING_GYM`); :func:`make_spec`, :func:`prepare` and
:func:`grade_rows` dispatch through it.
The rule for math-verify's timeouts (:data:`TIME_LIMIT`, :data:`RETRY_LIMIT`) holds on the
gold side as on the response side.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from leash.errors import LeashImportError, LeashTypeError, LeashValueError, Param
from leash_eval.answers import (
    REASONING_GYM_METHODS,
    extract_answer,
    normalize_answer,
    require_math_verify,
)
from leash_eval.gym_answers import rewrite
from leash_eval.rescore.gold import counting_timeouts, cpu_limited, gold_str, parsed_gold
from leash_eval.scorers import Grader, extractors, grader, scorer_named, scorers

__all__ = ["MATH_VERIFY", "REASONING_GYM", "Graded", "Spec", "grade_rows", "make_spec", "prepare",
           "verify_response"]


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

    Raises
    ------
    TimeoutError
        math-verify timed out twice (response or gold, :data:`TIME_LIMIT` then
        :data:`RETRY_LIMIT` seconds): no verdict, not a wrong answer.
    """
    own = scorers()["math-verify"].extractors
    if extract not in own:
        raise LeashValueError(param="extract", func="verify_response", value=extract,
                              constraint=f"one of {own}")
    require_math_verify("scorer")
    g = gold_str(gold, where="verify_response")
    if response is None or (isinstance(response, float) and response != response):
        return False
    if not isinstance(response, str):
        raise LeashTypeError(param="response", func="verify_response", value=response,
                             constraint="a str or None", got=type(response).__name__)
    graded = grade_rows(prepare(Spec("math-verify", extract)), [response], [g], ["-"], 0)
    if graded.timeout[0]:
        raise TimeoutError(
            f"verify_response: no verdict: math-verify timed out grading the response against "
            f"{g!r}, at {TIME_LIMIT} s and again at {RETRY_LIMIT} s of CPU time (the "
            "expressions are too costly to compare).")
    return bool(graded.correct[0])


@dataclass(frozen=True)
class Spec:
    """What grading needs besides the rows: sent once to every worker process."""

    scorer: str
    extract: str
    task: object = None
    gold: Mapping | None = None  # question id -> gold; None: each row carries its own gold


class Graded(NamedTuple):
    """The verdicts of one batch (:func:`grade_rows`)."""

    correct: np.ndarray    # bool, one per row (False where ``timeout``: no verdict)
    answer: list           # normalized extracted answer or None, one per row
    no_answer: np.ndarray  # bool: nothing extractable (counted as wrong)
    timeouts: int          # rows whose grading timed out at TIME_LIMIT and was retried
    timeout: np.ndarray    # bool: timed out at RETRY_LIMIT too: no verdict (not wrong)


#: The time limit per parse (a response's, a gold answer's) and per comparison, in seconds of
#: this process's CPU time (:func:`leash_eval.rescore.gold.cpu_limited`; math-verify's own
#: default, 5, is wall-clock, which a machine busy with other processes spends where an idle one
#: does not, so that verdicts changed with the load): a row that times out is graded once more
#: with :data:`RETRY_LIMIT`, and one that times out again has no verdict (``timeout``), which
#: the summary refuses unless told what to do.
TIME_LIMIT = 5
RETRY_LIMIT = 30


def make_spec(func: str, scorer, extract, task, gold_map) -> Spec:
    """The :class:`Spec` of a call of ``func``, its arguments checked (gold answers as strings
    for math-verify; Reasoning Gym needs a task and entries by question id).
    """
    entry = scorer_named(scorer, func)
    gold_map = grader(entry).check(entry, func, extract, task, gold_map)
    return Spec(scorer, extract, task, gold_map)


def prepare(spec: Spec):
    """The scorer of a spec, ready to grade (checks the optional package is there): the state
    :func:`grade_rows` takes, made once per process.
    """
    g = grader(scorers()[spec.scorer])
    return spec, g, g.prepare(spec)


def grade_rows(state, responses: list, golds: list | None, qids: list,
                offset: int) -> Graded:
    """Grade one batch of rows: the one grading function behind every path (in memory,
    streaming, in this process or in a worker). ``golds`` is None when ``spec.gold`` maps
    question ids to gold answers; ``offset`` is the batch's first row number, for messages.
    """
    spec, scorer, prepared = state
    n = len(responses)
    correct = np.zeros(n, dtype=bool)
    found = np.zeros(n, dtype=bool)
    answers: list = [None] * n
    timed_out = np.zeros(n, dtype=bool)
    retried = 0
    with counting_timeouts() as timeouts:
        for i in range(n):
            resp, qid = responses[i], qids[i]
            if isinstance(resp, float) and resp != resp:
                resp = None
            if resp is not None and not isinstance(resp, str):
                raise TypeError(f"The response of sample row {offset + i} (question {qid}) must "
                                f"be a str or missing. Got {type(resp).__name__}.")
            gold = spec.gold[qid] if golds is None else golds[i]
            correct[i], answers[i], found[i], again, timed_out[i] = scorer.grade(
                prepared, spec, resp, gold, own_gold=golds is not None,
                where=f"sample row {offset + i} (question {qid})", timeouts=timeouts)
            retried += again
    return Graded(correct, answers, ~found & ~timed_out, retried, timed_out)


def _mv_grade(response: str | None, gold: str, extract: str,
              limit: int | None = None) -> tuple[bool, str | None, bool]:
    r"""``(correct, answer, found)`` of one response against one gold (a string) with
    math-verify. ``answer`` is leash's extraction (:func:`leash_eval.answers.extract_answer`,
    normalized), the answer as the model wrote it, with either extractor: math-verify's own
    matched string is already rewritten (``0.5`` comes back as ``\frac{1}{2}``). ``found``
    says whether the grading extractor found an answer at all.
    """
    mv = require_math_verify("scorer")
    limit = limit or TIME_LIMIT
    if response is None:
        return False, None, False
    answer = normalize_answer(extract_answer(response))  # MATH_METHODS
    if extract == "math-verify":
        text = response
    else:
        if answer is None:
            return False, None, False
        text = f"${answer}$"
    pred = cpu_limited(lambda: mv.parse(text, parsing_timeout=None), limit, [])
    if not pred:
        return False, answer, extract != "math-verify"
    g = parsed_gold(gold, limit)  # None: timed out (counted, as a timeout of the response)
    # math-verify's verify: any pair (gold, prediction) equal, each pair within the limit
    correct = bool(g) and any(
        cpu_limited(lambda a=a, b=b: mv.verify([a], [b], timeout_seconds=None), limit, False)
        for a, b in itertools.product(g, pred))
    return correct, answer, True


def _mv_check(scorer, func: str, extract, task, gold_map):
    """math-verify's arguments: no task, one of its extractors, gold answers as strings."""
    if task is not None:
        raise LeashValueError(Param("task", func=func), " applies to ", *_with_task(), " only.",
                              value=task)
    own = scorer.extractors
    if extract not in own:
        others = "; ".join(f"{e.name!r}: with scorer={e.scorer!r} only"
                           for e in extractors().values() if e.name not in own)
        raise LeashValueError(param="extract", func=func, value=extract,
                              constraint=f"one of {own}" + (f" ({others})" if others else ""))
    if gold_map is not None:
        gold_map = {q: gold_str(g, where=f"question {q}") for q, g in gold_map.items()}
    return gold_map


def _with_task() -> list:
    """The scorers that take a task, as parts of a message (``scorer='reasoning-gym'``)."""
    names = [Param("scorer", value=n) for n, s in scorers().items() if s.task]
    return [p for i, n in enumerate(names) for p in ((" or ", n) if i else (n,))]


def _mv_prepare(spec: Spec):
    require_math_verify("scorer")


def _mv_row(state, spec: Spec, response, gold, *, own_gold: bool, where: str, timeouts):
    """One response graded with math-verify: once more with :data:`RETRY_LIMIT` when it timed
    out without a verdict.
    """
    if own_gold:
        gold = gold_str(gold, where=where)
    seen = timeouts.n
    correct, answer, found = _mv_grade(response, gold, spec.extract)
    retried = timed_out = False
    if timeouts.n > seen and not correct:  # no verdict yet: once more, longer
        retried = True
        seen = timeouts.n
        correct, answer, found = _mv_grade(response, gold, spec.extract, RETRY_LIMIT)
        timed_out = timeouts.n > seen and not correct
    return correct, answer, found, retried, timed_out


def _gym_check(scorer, func: str, extract, task, gold_map):
    """Reasoning Gym's arguments: a task (a name, for its answer rewrites), entries; any other
    extractor than its own grades the answer as extracted.
    """
    if task is None:
        raise LeashValueError(Param("task", func=func), " is required with ",
                              Param("scorer", value=scorer.name), ".")
    if extract in scorer.extractors and not isinstance(task, str):
        raise LeashValueError(Param("extract", func=func, value=extract), " rewrites "
                              "answers by the task's name (App. B.3): give ",
                              Param("task", func=func), " as a name.", param="task",
                              value=task)
    if gold_map is None:
        raise LeashValueError(Param("scorer", value=scorer.name), " needs ",
                              Param("gold", func=func), " (Reasoning Gym entries by question "
                              "id).", param="gold")
    return gold_map


def _gym_prepare(spec: Spec):
    """The task's dataset, and whether answers are rewritten (its own extractor, App. B.3)."""
    return _gym_dataset(spec.task), spec.extract in scorers()[spec.scorer].extractors


def _gym_row(state, spec: Spec, response, entry, *, own_gold: bool, where: str, timeouts):
    """One response graded by the task's own scorer (App. B.3's rewrites with its extractor)."""
    dataset, rewrites = state
    correct, answer, found = _gym_grade(dataset, response, entry, where=where,
                                        rewrite_as=spec.task if rewrites else None)
    return correct, answer, found, False, False


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


def _gym_grade(dataset, response, entry, *, where: str,
               rewrite_as: str | None = None) -> tuple[bool, str | None, bool]:
    """Grade one response with the task's scorer; with ``rewrite_as`` (a task name), the
    answer first rewritten by App. B.3's rule for that task (:mod:`leash_eval.gym_answers`).
    """
    answer = None
    if isinstance(response, str):
        answer = extract_answer(response, methods=REASONING_GYM_METHODS)
        if rewrite_as is not None:
            answer = rewrite(rewrite_as, answer)
    try:
        score = dataset.score_answer(answer, entry)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        # some task scorers raise on an answer they cannot parse ("866 = 2 \times 433" for
        # prime_factorization's int()): such an answer is wrong, as an unparsable one is
        score = 0.0
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


#: The graders of the registry's scorers (:data:`leash_eval.scorers.SCORERS` names them).
MATH_VERIFY = Grader(_mv_check, _mv_prepare, _mv_row)
REASONING_GYM = Grader(_gym_check, _gym_prepare, _gym_row)
