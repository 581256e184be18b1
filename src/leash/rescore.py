r"""Recompute per-sample correctness from response texts and gold answers.

Two scorers:

``"math-verify"`` (optional extra ``pip install math-verify``)
    ``correct = verify(parse(gold), parse(response))`` with HuggingFace math-verify, gold first
    (its ``verify`` is not symmetric). A gold answer without math delimiters is wrapped as
    ``$gold$`` before parsing. With ``extract="math-verify"`` (default) the full response is
    given to ``parse``, i.e. math-verify's own answer extraction (last ``\boxed{}`` first, then
    other LaTeX/plain expressions), which is how the library is meant to be used and what
    Lighteval does; with ``extract="leash"`` the answer is first extracted with
    :func:`leash.answers.extract_answer` and parsed as ``$answer$`` (a missing answer is wrong).
``"reasoning-gym"`` (optional extra ``pip install reasoning-gym``)
    The task's own scorer, ``dataset.score_answer(answer, entry)``, on the answer extracted with
    :func:`leash.answers.extract_answer` (``<answer>`` tag, then last ``\boxed{}``, then the text
    after ``</think>``: the paper's hierarchy, App. B.3). Reasoning Gym gives partial credit (e.g.
    0.01 for a wrong but well-formed answer, or ``len(gold)/len(answer)`` when the gold is a
    substring); a sample counts as correct **only at full credit**, ``score == 1.0``. The
    paper's task-specific answer rewrites (App. B.3: dice fractions, prime factorization ``x``,
    palindromes, ...) are not applied here.

Benchmark question files (:func:`load_benchmark`) come from the data manifest; their question
ids follow the Qwen2.5-Math evaluator: the file's ``idx`` field if it has one, else the 0-based
row position (so they match the ``idx`` of evaluator outputs).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .answers import _canonical_number, extract_answer, last_boxed, normalize_answer

__all__ = [
    "SCORERS",
    "BENCHMARK_GOLD",
    "RescoreResult",
    "gold_from_frame",
    "load_benchmark",
    "question_dataset",
    "read_benchmark",
    "read_responses",
    "rescore",
    "verify_response",
]

SCORERS = ("math-verify", "reasoning-gym")
EXTRACTORS = ("math-verify", "leash")

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
    """Output of :func:`rescore`.

    Attributes
    ----------
    samples : pandas.DataFrame
        A copy of the input with ``correct`` (bool) recomputed.
    n_changed : int
        Samples whose verdict differs from the input's ``correct`` (0 if it had none).
    changed : ndarray of bool, shape (n_samples,)
        Which samples changed.
    """

    samples: pd.DataFrame
    n_changed: int
    changed: np.ndarray


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
        return _canonical_number(repr(float(value))) or repr(float(value))
    if isinstance(value, str):
        if not value.strip():
            raise ValueError(f"The gold answer of {where} is empty.")
        return value.strip()
    raise ValueError(f"The gold answer of {where} must be a string or a number. Got {value!r}.")



def _json_records(path: Path):
    """Yield ``(where, record)`` for each non-blank line of a JSONL file (.gz too), where
    ``where`` names the file and line for error messages; malformed JSON is a ValueError."""
    from . import formats as F

    with F._open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {lineno}"
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: malformed JSON ({exc.msg}).") from None
            yield where, record

def read_benchmark(path: str | os.PathLike, rule: str) -> pd.DataFrame:
    """Read a benchmark JSONL file into ``question_id, question, gold`` with a gold ``rule``.

    Parameters
    ----------
    path : path-like
        JSONL file, one question per line.
    rule : {"answer", "gold", "minerva", "olympiadbench"}
        Where the gold answer is: the named field, the last ``\\boxed{}`` of ``solution``
        (Minerva), or the ``final_answer`` list (OlympiadBench, joined with ", ").

    Returns
    -------
    pandas.DataFrame
        Columns ``question_id`` (str), ``question`` (str), ``gold`` (str), one row per line.
    """
    rules = ("answer", "gold", "minerva", "olympiadbench")
    if rule not in rules:
        raise ValueError(f"The 'rule' parameter of read_benchmark must be one of {rules}. "
                         f"Got {rule!r}.")
    p = Path(path)
    rows = []
    for where, rec in _json_records(p):
        qid = rec.get("idx", rec.get("qid", len(rows)))
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


_RULES = {"math500": "answer", "aime24": "answer", "amc23": "answer",
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
    from . import manifest as mf

    m = manifest or mf.load_manifest()
    if name in _RULES:
        return name
    by_label = [n for n in _RULES if n in m.datasets and m.datasets[n].benchmark == name]
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
        Passed to :func:`leash.manifest.fetch` (``mirror``, ``dest``, ...).

    Returns
    -------
    pandas.DataFrame
        ``question_id, question, gold`` (see :func:`read_benchmark`).
    """
    from . import manifest as mf

    m = fetch_kwargs.pop("manifest", None) or mf.load_manifest()
    if name not in _RULES:
        by_label = [n for n in _RULES if n in m.datasets and m.datasets[n].benchmark == name]
        if len(by_label) != 1:
            raise ValueError(f"The 'name' parameter of load_benchmark must be one of "
                             f"{sorted(_RULES)} or their benchmark labels. Got {name!r}.")
        name = by_label[0]
    fetch_kwargs.setdefault("progress", False)
    path = mf.fetch(name, manifest=m, **fetch_kwargs)
    return read_benchmark(path, _RULES[name])


def gold_from_frame(frame: pd.DataFrame, *, question_col: str = "question_id",
                    gold_col: str = "gold") -> dict[str, str]:
    """``{question_id: gold}`` from a frame (e.g. :func:`load_benchmark` output)."""
    for col in (question_col, gold_col):
        if col not in frame.columns:
            raise ValueError(f"The gold frame lacks the column {col!r}; it has "
                             f"{list(frame.columns)}.")
    return dict(zip(frame[question_col].astype(str), frame[gold_col], strict=True))


# ----------------------------------------------------------------------------- responses

#: Top-level gold-answer field of the shipped nested mappings (evaluator: ``gt``; GSM8K probe:
#: ``gold``), used when the caller gives no gold answers.
GOLD_FIELDS = {"evaluator": "gt", "rollouts": "gold"}
_RESPONSE_COLUMNS = ["model", "benchmark", "question_id", "step", "sample_idx", "response",
                     "correct", "gold"]


def read_responses(path, *, fmt=None, mapping=None, model=None, benchmark=None,
                   step=None, reader_options=None) -> pd.DataFrame:
    """Per-sample rows *with response texts* from one generations file, as one frame.

    A thin wrapper over :func:`leash.formats.response_batches` (the one reader of every layout
    that holds responses), for callers that want the whole file in memory.

    Parameters
    ----------
    path : path-like
        A nested/evaluator JSONL file, an evaluator tool's file, or a canonical samples file
        (JSONL, Parquet or CSV) with a ``response`` column.
    fmt, mapping, model, benchmark, step, reader_options
        As in :func:`leash.summarize.summarize`; given labels replace the file's.

    Returns
    -------
    pandas.DataFrame, shape (n_samples, 8)
        ``model, benchmark, question_id (str), step (Int64), sample_idx, response, correct
        (boolean, NA when the file has none), gold`` (the file's own gold answer, NA if none).

    Raises
    ------
    ValueError
        Undetectable format, malformed JSON, missing or ragged fields (file, line and field
        named).
    """
    import pyarrow as pa

    from . import formats as F

    batches = list(F.response_batches(path, fmt=fmt, mapping=mapping, model=model,
                                      benchmark=benchmark, step=step,
                                      reader_options=reader_options))
    df = (pa.Table.from_batches(batches).to_pandas() if batches
          else pd.DataFrame({c: [] for c in _RESPONSE_COLUMNS}))
    return df.astype({"question_id": "string", "step": "Int64", "correct": "boolean"})


# ----------------------------------------------------------------------------- scoring


def _math_verify():
    try:
        import math_verify
    except ImportError:
        raise ImportError("scorer='math-verify' needs the math-verify package: "
                          "pip install math-verify (or pip install 'leash[verify]').") from None
    return math_verify


def _as_latex(s: str) -> str:
    return s if ("$" in s or "\\boxed" in s or "\\(" in s or "\\[" in s) else f"${s}$"


@lru_cache(maxsize=16384)
def _parsed_gold(gold: str) -> tuple:
    return tuple(_math_verify().parse(_as_latex(gold)))


def verify_response(response, gold, *, extract: str = "math-verify") -> bool:
    """Whether one response is correct against one gold answer, with math-verify.

    Parameters
    ----------
    response : str or None
        Response text (None or NaN: wrong).
    gold : str or number
        Gold answer.
    extract : {"math-verify", "leash"}, default "math-verify"
        Answer extraction: math-verify's own, or :func:`leash.answers.extract_answer`.

    Returns
    -------
    bool
    """
    if extract not in EXTRACTORS:
        raise ValueError(f"The 'extract' parameter of verify_response must be one of "
                         f"{EXTRACTORS}. Got {extract!r}.")
    mv = _math_verify()
    g = _parsed_gold(_gold_str(gold, where="verify_response"))
    if response is None or (isinstance(response, float) and response != response):
        return False
    if not isinstance(response, str):
        raise TypeError(f"The 'response' parameter of verify_response must be a str or None. "
                        f"Got {type(response).__name__}.")
    if extract == "math-verify":
        pred = mv.parse(response)
    else:
        ans = normalize_answer(extract_answer(response))
        if ans is None:
            return False
        pred = mv.parse(f"${ans}$")
    if not g or not pred:
        return False
    return bool(mv.verify(list(g), pred))


def _gym_dataset(task):
    if hasattr(task, "score_answer"):
        return task
    if not isinstance(task, str):
        raise TypeError("The 'task' parameter of rescore must be a Reasoning Gym task name or "
                        f"an object with score_answer(answer, entry). Got {task!r}.")
    try:
        import reasoning_gym
    except ImportError:
        raise ImportError("scorer='reasoning-gym' needs the reasoning-gym package: "
                          "pip install reasoning-gym (or pip install 'leash[gym]').") from None
    # The scorer reads everything it needs from the entry; a one-item dataset only provides the
    # task's score_answer method (and its configuration defaults).
    return reasoning_gym.create_dataset(task, size=1, seed=0)


def _gym_correct(dataset, response, entry, *, where: str) -> bool:
    answer = None
    if isinstance(response, str):
        answer = extract_answer(response)
    score = dataset.score_answer(answer, entry)
    try:
        score = float(score)
    except (TypeError, ValueError):
        raise ValueError(f"The Reasoning Gym scorer returned a non-number for {where}: "
                         f"{score!r}.") from None
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"The Reasoning Gym scorer returned {score} for {where}, outside "
                         "[0, 1].")
    return score == 1.0  # full credit only: partial credit (e.g. 0.01) is a wrong answer


def rescore(
    samples: pd.DataFrame,
    gold,
    *,
    scorer: str = "math-verify",
    extract: str = "math-verify",
    task=None,
    question_col: str = "question_id",
    response_col: str = "response",
    progress: bool = False,
) -> RescoreResult:
    """Recompute ``correct`` for every sample from its response text and the gold answer.

    Parameters
    ----------
    samples : pandas.DataFrame, shape (n_samples, ...)
        Per-sample rows with ``question_col`` and ``response_col``; an existing ``correct``
        column is replaced (and compared to count changed verdicts).
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
    progress : bool, default False
        Report progress on stderr.

    Returns
    -------
    RescoreResult
        ``(samples, n_changed, changed)``.
    """
    func = "rescore"
    if scorer not in SCORERS:
        raise ValueError(f"The 'scorer' parameter of {func} must be one of {SCORERS}. "
                         f"Got {scorer!r}.")
    if not isinstance(samples, pd.DataFrame):
        raise TypeError(f"The 'samples' parameter of {func} must be a pandas DataFrame. "
                        f"Got {type(samples).__name__}.")
    for col in (question_col, response_col):
        if col not in samples.columns:
            raise ValueError(f"The 'samples' frame of {func} lacks the column {col!r}; it has "
                             f"{list(samples.columns)}. Pass question_col=/response_col=.")
    if isinstance(gold, pd.DataFrame):
        gold_map = gold_from_frame(gold)
    elif isinstance(gold, pd.Series):
        gold_map = {str(k): v for k, v in gold.items()}
    elif isinstance(gold, Mapping):
        gold_map = {str(k): v for k, v in gold.items()}
    else:
        raise TypeError(f"The 'gold' parameter of {func} must be a mapping, Series or "
                        f"DataFrame. Got {type(gold).__name__}.")
    qids = samples[question_col].astype(str).to_numpy()
    missing = sorted(set(qids) - set(gold_map))
    if missing:
        raise ValueError(f"{len(missing)} question(s) of the samples have no gold answer, e.g. "
                         f"{missing[:5]} (of {len(set(qids))} questions, {len(gold_map)} golds).")

    if scorer == "math-verify":
        if task is not None:
            raise ValueError(f"The 'task' parameter of {func} applies to scorer="
                             "'reasoning-gym' only.")
        if extract not in EXTRACTORS:
            raise ValueError(f"The 'extract' parameter of {func} must be one of {EXTRACTORS}. "
                             f"Got {extract!r}.")
        _math_verify()

        def score(i, resp, qid):
            return verify_response(resp, gold_map[qid], extract=extract)
    else:
        if task is None:
            raise ValueError(f"The 'task' parameter of {func} is required with scorer="
                             "'reasoning-gym'.")
        ds = _gym_dataset(task)

        def score(i, resp, qid):
            return _gym_correct(ds, resp, gold_map[qid], where=f"sample row {i} (question {qid})")

    responses = samples[response_col].tolist()
    n = len(responses)
    verdicts = np.zeros(n, dtype=bool)
    step = max(1, n // 20)
    for i, (resp, qid) in enumerate(zip(responses, qids, strict=True)):
        verdicts[i] = score(i, resp, qid)
        if progress and (i + 1) % step == 0 and i + 1 < n:
            sys.stderr.write(f"\rrescore: {i + 1}/{n} samples")
            sys.stderr.flush()
    if progress and n:
        sys.stderr.write(f"\rrescore: {n}/{n} samples\n")

    out = samples.copy()
    if "correct" in samples.columns:
        before = samples["correct"].astype("boolean").to_numpy(dtype=bool, na_value=False)
        changed = before != verdicts
    else:
        changed = np.zeros(n, dtype=bool)
    out["correct"] = verdicts
    return RescoreResult(out, int(changed.sum()), changed)
