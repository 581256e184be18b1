"""Answer-level entropy, token-level entropy and perplexity (arXiv 2507.14843v4: Table 5 and
App. B.4 for the entropies, Table 2 for perplexity).

* Answer-level entropy of a question: the Shannon entropy of the empirical distribution of its
  samples' extracted final answers, ``-sum_j p_j log p_j``; averaged over questions.
  Missing/unparsable answers form one "NA" class (the paper's choice) or are dropped.
* Token-level entropy (the paper's definition): the mean over sequences of each sequence's mean
  per-token entropy, i.e. a macro average over sequences, not over tokens.
* Perplexity of a trace: ``exp(-mean token log-probability)``.

Natural logs by default; ``base=2`` gives bits.

The NA rule of answer entropy, ``na``: one vocabulary, one meaning per value, wherever it is
accepted (:data:`NA_RULES`):

``"truncated"`` (the paper's, :data:`PAPER_NA`: "NA" for incomplete outputs, App. B.4)
    a sample without an extracted answer, or truncated (``finish_reason == "length"``) even
    when an answer was extracted, is NA; NA counts as one answer class.
``"class"``
    a sample without an extracted answer is NA, one answer class; a truncated sample keeps the
    answer extracted from it.
``"drop"``
    samples without an extracted answer are left out of the distribution; a truncated sample
    keeps its answer.

Which samples are NA is decided when generations are summarized
(:func:`leash_eval.summarize.summarize`, ``na="class"`` or ``"truncated"``; the summary records it),
so the tables (:func:`leash.analysis.tables.entropy_table`) check that a summary was made under the
rule
asked for. The functions of this module take the NA samples as given (``None`` answers,
``n_na``) and accept ``"class"`` and ``"drop"``: how those samples enter the distribution.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from numbers import Real
from typing import NamedTuple

import numpy as np

from leash.core._validation import (
    Counts,
    Floats,
    Interval,
    Iterables,
    SequenceOf,
    StrOptions,
    invalid,
    validate_params,
)

__all__ = [
    "AnswerEntropy",
    "entropy_from_counts",
    "answer_entropy",
    "answer_entropy_from_histograms",
    "token_entropy",
    "perplexity",
    "aggregate_perplexity",
    "is_missing_answer",
    "NA_RULES",
    "PAPER_NA",
]

NA_CHOICES = ("class", "drop")
#: Every NA rule of answer entropy (module docstring); the paper's is :data:`PAPER_NA`.
NA_RULES = ("truncated", "class", "drop")
PAPER_NA = "truncated"

# The declared kinds of the parameters (leash.core._validation).
BASE = [Interval(Real, 0, None, closed="neither", exclude=(1,)), None]  # None: natural log
CORRECTION = [StrOptions("miller-madow"), None]
NA = [StrOptions(*NA_CHOICES)]
HISTOGRAM = Floats(0, None, closed="left", ndim=None)
LOGPROBS = Floats(None, 0, closed="right", ndim=(1,), nonempty=True)


class AnswerEntropy(NamedTuple):
    """Per-question answer-entropy facts, each an ndarray of shape (n_questions,)."""

    entropy: np.ndarray
    n_distinct: np.ndarray
    n_used: np.ndarray
    n_na: np.ndarray


def is_missing_answer(a) -> bool:
    """True for answers that count as "NA": None, NaN, pandas NA, or a blank string."""
    if a is None:
        return True
    if isinstance(a, str):
        return a.strip() == ""
    try:
        return bool(a != a)  # NaN and pandas.NA-like values
    except (TypeError, ValueError):
        return False


def _log_factor(base):
    """1 / log(base) of a declared base (None: natural log)."""
    return 1.0 if base is None else 1.0 / math.log(base)


@validate_params({"counts": [Floats(0, None, closed="left", ndim=(1,))], "base": BASE,
                  "correction": CORRECTION})
def entropy_from_counts(counts, *, base=None, correction=None):
    """Shannon entropy of an empirical distribution given by class counts.

    Parameters
    ----------
    counts : array_like of int, shape (n_classes,)
        Non-negative counts; zero counts are ignored.
    base : float, optional
        Log base; None (default) for nats.
    correction : {None, "miller-madow"}, default None
        "miller-madow" adds the first-order bias correction ``(m - 1) / (2 N)`` (in nats),
        where m is the number of non-zero classes and N the total count.

    Returns
    -------
    float
        The entropy; NaN for an empty distribution (N = 0).

    Examples
    --------
    >>> round(entropy_from_counts([2, 2]), 12)  # ln 2
    0.69314718056
    """
    out = _from_histograms([counts], None, "class", base, correction, "entropy_from_counts")
    return float(out.entropy[0])


@validate_params({
    "histograms": [SequenceOf(HISTOGRAM, "arrays of counts (floats in the range [0, inf))",
                              "histogram")],
    "n_na": [Counts(), None], "na": NA, "base": BASE, "correction": CORRECTION})
def answer_entropy_from_histograms(histograms, *, n_na=None, na="class", base=None,
                                   correction=None):
    """Answer-level entropy from per-question answer histograms (vectorized over questions).

    Parameters
    ----------
    histograms : sequence of array_like of int, length n_questions
        Counts of each distinct (non-missing) answer, per question.
    n_na : array_like of int, shape (n_questions,), optional
        Number of samples per question with no extracted answer. Default: 0 everywhere.
    na : {"class", "drop"}, default "class"
        "class" counts the missing answers as one extra class "NA" (the paper's choice);
        "drop" leaves them out of the distribution.
    base : float, optional
        Log base; None for natural log.
    correction : {None, "miller-madow"}, default None

    Returns
    -------
    AnswerEntropy
        entropy (NaN for a question with no usable sample), n_distinct, n_used, n_na.
    """
    return _from_histograms(histograms, n_na, na, base, correction,
                            "answer_entropy_from_histograms")


def _from_histograms(hists, n_na, na, base, correction, func):
    """The kernel of :func:`answer_entropy_from_histograms`, for declared (normalised)
    histograms and options; ``func`` is the public caller, for the message on ``n_na``.
    """
    factor = _log_factor(base)
    hists = [h.ravel() for h in hists]
    q = len(hists)
    n_na = np.zeros(q, dtype=np.int64) if n_na is None else np.atleast_1d(n_na)
    if n_na.shape != (q,):
        raise invalid("n_na", func, f"an array of shape ({q},), one entry per question",
                      f"an array of shape {n_na.shape}")
    if na == "class":
        hists = [np.append(h, n) if n > 0 else h for h, n in zip(hists, n_na)]
    lengths = np.fromiter((h.size for h in hists), dtype=np.int64, count=q)
    flat = np.concatenate(hists) if q else np.zeros(0)
    seg = np.repeat(np.arange(q), lengths)
    totals = np.bincount(seg, weights=flat, minlength=q)
    nonzero = flat > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        p = flat / totals[seg]
        terms = np.where(nonzero, -p * np.log(np.where(nonzero, p, 1.0)), 0.0)
    h = np.bincount(seg, weights=terms, minlength=q)
    distinct = np.bincount(seg, weights=nonzero.astype(np.float64), minlength=q).astype(np.int64)
    if correction == "miller-madow":
        with np.errstate(divide="ignore", invalid="ignore"):
            h = h + (distinct - 1) / (2.0 * totals)
    h = np.where(totals > 0, h * factor, np.nan) + 0.0
    return AnswerEntropy(h, distinct, totals.astype(np.int64), n_na)


@validate_params({"answers_per_question": [Iterables()], "base": BASE, "na": NA,
                  "correction": CORRECTION, "classes": [callable, None]})
def answer_entropy(answers_per_question: Iterable[Sequence], *, base=None, na="class",
                   correction=None, classes=None):
    """Answer-level entropy per question from the extracted answers of its samples.

    Parameters
    ----------
    answers_per_question : iterable of sequences, length n_questions
        For each question, the extracted final answer of each sample (hashable values; None,
        NaN or a blank string mean "no answer extracted").
    base : float, optional
        Log base; None (default) for natural log. The paper does not state its log base;
        natural log is leash's assumption.
    na : {"class", "drop"}, default "class"
        Missing answers form their own "NA" class (the paper) or are dropped.
    correction : {None, "miller-madow"}, default None
        Optional first-order bias correction.
    classes : callable, optional
        Maps one question's list of non-missing answers to equivalence-class labels (same
        length), e.g. ``leash_eval.answers.answer_classes``; default: answers are classes as given.

    Returns
    -------
    AnswerEntropy
        Per-question entropy, number of distinct answer classes (NA counted as a class when
        ``na="class"``), samples used, and samples without an answer.

    Examples
    --------
    >>> r = answer_entropy([["4", "4", "5", None]])
    >>> round(float(r.entropy[0]), 4), int(r.n_distinct[0])  # p = (1/2, 1/4, 1/4)
    (1.0397, 3)
    """
    func = "answer_entropy"
    hists, n_na = [], []
    for j, answers in enumerate(answers_per_question):
        if isinstance(answers, (str, bytes)):
            raise invalid("answers_per_question", func, "an iterable of sequences of answers, "
                          "one per question", f"the string {answers!r} (question {j})")
        present = [a for a in answers if not is_missing_answer(a)]
        n_na.append(len(answers) - len(present))
        if classes is not None:
            labels = list(classes(present))
            if len(labels) != len(present):
                raise invalid("classes", func, "a callable that returns one label per answer",
                              f"{len(labels)} labels for {len(present)} answers (question {j})")
            present = labels
        hists.append(np.fromiter(Counter(present).values(), dtype=np.float64))
    return _from_histograms(hists, np.asarray(n_na, dtype=np.int64), na, base, correction,
                            func)


@validate_params({
    "sequence_means": [Floats(0, None, closed="left", ndim=(1,), nonempty=True), None],
    "per_token": [SequenceOf(Floats(0, None, closed="left", ndim=(1,), nonempty=True),
                             "non-empty 1-D arrays of token entropies (floats in the range "
                             "[0, inf))", "sequence", nonempty=True), None]})
def token_entropy(sequence_means, *, per_token=None):
    """The paper's token-level entropy: mean over sequences of per-sequence mean token entropy.

    Parameters
    ----------
    sequence_means : array_like of float, shape (n_sequences,), or None
        Each sequence's mean per-token (full-vocabulary) entropy. NaN entries are rejected.
    per_token : sequence of array_like of float, length n_sequences, optional
        Alternatively, each sequence's per-token entropies; their means are taken first
        (pass ``sequence_means=None``).

    Returns
    -------
    float
        ``(1/N) sum_i (1/T_i) sum_t H_t^(i)`` (the paper's token-level entropy of Table 5,
        computed as in App. B.4). A macro average over sequences: a long
        sequence weighs as much as a short one.
    """
    func = "token_entropy"
    if per_token is not None:
        if sequence_means is not None:
            raise invalid("per_token", func, "None when 'sequence_means' is given (pass one "
                          "of them)", f"a sequence of {len(per_token)} sequences")
        return float(np.mean([t.mean() for t in per_token]))
    if sequence_means is None:
        raise invalid("sequence_means", func, "a non-empty 1-D array when 'per_token' is not "
                      "given", "None")
    return float(sequence_means.mean())


@validate_params({"token_logprobs": [LOGPROBS]})
def perplexity(token_logprobs):
    """Perplexity of one trace from its token log-probabilities (natural log).

    Parameters
    ----------
    token_logprobs : array_like of float, shape (n_tokens,)
        ``log p(y_t | x, y_<t)`` of each token of the trace under the scoring model (<= 0).

    Returns
    -------
    float
        ``exp(-mean(token_logprobs))``. The paper gives no formula for Table 2's perplexity; this
        standard one is leash's assumption.

    Examples
    --------
    >>> round(perplexity([-1.0, -1.0]), 12)  # exp(1)
    2.718281828459
    """
    return float(np.exp(-token_logprobs.mean()))


AGGREGATIONS = ("trace-mean", "token-pooled")


@validate_params({
    "traces": [SequenceOf(LOGPROBS, "non-empty 1-D arrays of token log-probabilities (floats "
                          "in the range (-inf, 0])", "trace", nonempty=True)],
    "how": [StrOptions(*AGGREGATIONS)]})
def aggregate_perplexity(traces, *, how="trace-mean"):
    """Aggregate perplexity over several traces.

    Parameters
    ----------
    traces : sequence of array_like of float, length n_traces
        Token log-probabilities of each trace.
    how : {"trace-mean", "token-pooled"}, default "trace-mean"
        "trace-mean": the mean of per-trace perplexities; "token-pooled": ``exp`` of minus the
        mean log-probability over all tokens of all traces. The paper does not say which it
        uses for Table 2; the default is the per-trace mean.

    Returns
    -------
    float
    """
    if how == "trace-mean":
        return float(np.mean([np.exp(-t.mean()) for t in traces]))
    return float(np.exp(-np.concatenate(traces).mean()))
