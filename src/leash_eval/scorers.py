"""The registries of scorers and of answer extractors: every way ``leash rescore`` grades a
response, and every way it takes the answer out of one, by name.

A scorer is one :class:`Scorer` in :data:`SCORERS`: its name, what it needs (a task, gold
answers or per-question entries), whether a study source may ask for it, and its
:class:`Grader`, named by its dotted path and imported when a response is graded (the grading
modules load numpy and the optional packages; the command line builds its options from this
module without them). An extractor is one :class:`Extractor` in :data:`EXTRACTORS`, an option
of one scorer. Nothing else names them: the checks of :func:`leash_eval.rescore.rescore` and
:func:`~leash_eval.rescore.rescore_file`, the grader each name runs, the choices and help of
``--scorer`` and ``--extract`` and the messages that list them all come from :func:`scorers`
and :func:`extractors`. The study schema's names (:data:`leash.sources.choices.SCORERS`,
``RESCORERS``, ``EXTRACTORS``, ``GYM_EXTRACT``, read by a study check that does not import the
toolkit) are checked against these registries by a test (``tests/test_boundary.py``).

Adding a scorer: a module with a :class:`Grader` (its checks, its preparation, the grading of
one response), its :class:`Scorer` entry here (and its extractors' entries, if it has options),
its name in :data:`leash.sources.choices.SCORERS` (and ``RESCORERS`` if a study may use it);
the batches, workers, gold answers and outputs are the same for every scorer.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import NamedTuple

from leash.errors import LeashValueError

__all__ = ["EXTRACTORS", "SCORERS", "Extractor", "Grader", "Scorer", "extractors", "grader",
           "scorer_named", "scorers"]


class Grader(NamedTuple):
    """What a scorer does (its :attr:`Scorer.grader`).

    Attributes
    ----------
    check : callable
        ``check(scorer, func, extract, task, gold) -> gold``: the arguments of a call of
        ``func`` with the :class:`Scorer` ``scorer`` checked (a LeashValueError naming the
        parameter), the gold answers by question id as the scorer grades with them (or None:
        each row carries its own).
    prepare : callable
        ``prepare(spec) -> state``: what grading needs, once per process (an optional package
        imported, a task's scorer made).
    grade : callable
        ``grade(state, spec, response, gold, *, own_gold, where, timeouts) -> (correct, answer,
        found, retried, timed_out)``: one response (a str or None) against its gold
        (``own_gold``: the row's own, not yet checked); ``where`` names the row for messages,
        ``timeouts`` counts math-verify's timeouts.
    """

    check: Callable
    prepare: Callable
    grade: Callable


@dataclasses.dataclass(frozen=True)
class Scorer:
    """One scorer.

    Attributes
    ----------
    name : str
        Its name (``scorer=``, ``--scorer``, a study source's ``rescore:``).
    help : str
        How it grades, in a few words (``--scorer``'s help).
    grader : str
        The dotted path of its :class:`Grader` (``module.NAME``), imported when used.
    golds : {"answers", "entries"}
        What it grades against: gold answers (a benchmark, a question file or each row's own,
        checked against a file's gold column), or per-question entries (a JSONL file of
        objects, required).
    task : bool
        Whether it takes a task (``task=``, ``--task``; then required).
    study : bool
        Whether a study source may ask for it (``rescore:``: a study file names no task or
        entries).
    """

    name: str
    help: str
    grader: str
    golds: str = "answers"
    task: bool = False
    study: bool = False

    @property
    def extractors(self) -> tuple[str, ...]:
        """The names of its extractors (its ``extract`` options), the default first."""
        return tuple(e.name for e in EXTRACTORS if e.scorer == self.name)


@dataclasses.dataclass(frozen=True)
class Extractor:
    """One way of taking the answer out of a response: an option of one scorer.

    Attributes
    ----------
    name : str
        Its name (``extract=``, ``--extract``, a study source's ``extract:``).
    scorer : str
        The scorer whose option it is.
    help : str
        What it does, in a few words (``--extract``'s help).
    """

    name: str
    scorer: str
    help: str


#: Every scorer, in the order the command line lists them; the first is the default.
SCORERS = (
    Scorer("math-verify", "math-verify against the gold answers",
           "leash_eval.rescore.graders.MATH_VERIFY", study=True),
    Scorer("reasoning-gym", "the Reasoning Gym task's own scorer, full credit only",
           "leash_eval.rescore.graders.REASONING_GYM", golds="entries", task=True),
)
#: Every extractor, in the order the command line lists them; each scorer's first is its default.
EXTRACTORS = (
    Extractor("math-verify", "math-verify", "math-verify's own"),
    Extractor("leash", "math-verify", "leash_eval.answers: <answer> tag, last \\boxed{}, ..."),
    Extractor("reasoning-gym", "reasoning-gym", "the paper's task-specific answer rewrites, "
              "App. B.3; without it the answer is graded as extracted"),
)


def scorers() -> dict[str, Scorer]:
    """Every scorer by name, in :data:`SCORERS` order."""
    return {s.name: s for s in SCORERS}


def extractors() -> dict[str, Extractor]:
    """Every extractor by name, in :data:`EXTRACTORS` order."""
    return {e.name: e for e in EXTRACTORS}


def scorer_named(name, func: str) -> Scorer:
    """The scorer ``name``; any other value is a LeashValueError naming the parameter
    ``scorer`` of ``func`` and the scorers.
    """
    found = scorers().get(name) if isinstance(name, str) else None
    if found is None:
        raise LeashValueError(param="scorer", func=func, value=name,
                              constraint=f"one of {tuple(scorers())}")
    return found


def grader(scorer: Scorer) -> Grader:
    """The :class:`Grader` of a scorer (its module imported)."""
    module, _, name = scorer.grader.rpartition(".")
    return getattr(importlib.import_module(module), name)
