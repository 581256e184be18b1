"""SIMULATED data: an explicit generative model of base vs RLVR answer distributions.

Everything this module produces is **simulated**, never the paper's data: it lets every notebook
run offline and lets the walkthrough show what the empirical support rule does when the truth is
known. Every frame carries ``source = "simulated"``. The demo's parameters are data,
``data/demo/config.yaml``; :mod:`leash_eval.demo` reads it and draws the whole demo from this
model (``leash simulate``), :mod:`leash.sources.demo` builds the frames' rows and reads the
files; ``data/demo/README.md`` describes the model and every parameter.

The model, one benchmark question at a time (arXiv 2507.14843v4 for the references):

* Answer classes (Def. 3.1): class 0 the correct answer (R = 1), ``n_wrong`` wrong answers and an
  "NA" class (no extracted answer, a truncated output), each with an answer string.
* Base q(y|x): success probability ``expit(mu + sigma z)`` (:class:`BasePrior`), the rest split
  into NA (Beta fraction) and wrong answers (Dirichlet weights).
* RLVR pi(y|x) (:class:`RLVRModel`): the KL tilt of Prop. C.4, ``pi ∝ q exp(beta R)``, after tail
  pruning (shrinkage) and rare new correct mass (expansion, what Thm. C.1 rules out for exact
  on-policy updates), with optional sharpening ``q**sharpen`` (an addition of this simulation).
  Checkpoints scale the update with the training fraction (common random numbers); SFT is a
  mixture with a teacher (expansion without pruning).
* Samples: exact multinomial class counts; ``first_correct`` exact given the count (negative
  hypergeometric, :func:`draw_first_correct`); per-sample token entropy and length
  (:class:`TokenModel`) in the n = 32 entropy study.
* Truth: the true success probabilities and epsilon-support categories of both models, so that
  the tests can grade the empirical rule against it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import special

from leash.core._validation import (
    DATAFRAME,
    ArrayLike,
    Counts,
    Distributions,
    Floats,
    Generator,
    InstancesOf,
    Interval,
    StrSequence,
    check_c_le_n,
    invalid,
    same_length,
    shown,
    validate_params,
)
from leash.core.support import CATEGORIES
from leash.errors import LeashValueError, Param
from leash.sources import demo
from leash.sources.demo import SOURCE

__all__ = ["BasePrior", "RLVRModel", "TokenModel", "draw_answer_distribution", "tilt",
           "rlvr_distribution", "draw_counts", "draw_first_correct", "simulate_pair",
           "TraceModel", "simulate_traces"]
_MOVED = ("simulate_study", "config_record")


# --------------------------------------------------------------------------------------------
# The model's parameters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BasePrior:
    """Prior of the base model's answer distribution on one benchmark.

    Attributes
    ----------
    mu, sigma : float
        Logit-normal success probability ``p = expit(mu + sigma z)``, ``z ~ N(0, 1)``.
    na_mean : float
        Mean fraction of the incorrect mass that is NA (incomplete, truncated outputs).
    na_concentration : float
        Concentration (a + b) of the Beta prior of that fraction.
    wrong_alpha : float
        Symmetric Dirichlet parameter of the split of the wrong mass over ``n_wrong`` classes
        (small values: a few dominant wrong answers).
    """

    mu: float
    sigma: float
    na_mean: float = 0.15
    na_concentration: float = 4.0
    wrong_alpha: float = 1.0


@dataclass(frozen=True)
class RLVRModel:
    """The RLVR update: prune, expand, then tilt (see the module docstring).

    Attributes
    ----------
    beta : float
        Tilt strength of ``pi ∝ q exp(beta R)`` (Prop. C.4), ``>= 0``.
    sharpen : float
        Exponent on q (``>= 1``); 1 is Prop. C.4 exactly.
    tau : float
        Pruning threshold: classes with ``q(y) < tau`` are pruned with probability ``p_prune``.
    p_prune : float
        Per-class pruning probability, in [0, 1].
    p_expand : float
        Probability that a question with ``q(correct) <= eps_expand`` gets new correct mass.
    eps_expand : float or None
        Expansion eligibility threshold; None means ``epsilon(budget)`` (zeta = 0.05) of the
        benchmark's budget, i.e. "not in the base's empirical support".
    delta_low, delta_high : float
        The new pre-tilt correct mass ``delta`` is log-uniform on this range.
    """

    beta: float
    sharpen: float = 1.0
    tau: float = 0.0
    p_prune: float = 0.0
    p_expand: float = 0.0
    eps_expand: float | None = None
    delta_low: float = 1e-3
    delta_high: float = 2e-2

    @validate_params({"f": [Interval(Real, 0, 1, closed="both")]}, name="RLVRModel.at_fraction")
    def at_fraction(self, f: float) -> RLVRModel:
        """The model at training fraction ``f`` in [0, 1] (checkpoints).

        beta, p_prune, p_expand and ``sharpen - 1`` scale linearly with f (f = 0 is the base
        model, f = 1 this model); tau and the delta range are unchanged.
        """
        return dataclasses.replace(
            self,
            beta=self.beta * f,
            sharpen=1.0 + (self.sharpen - 1.0) * f,
            p_prune=self.p_prune * f,
            p_expand=self.p_expand * f,
        )


@dataclass(frozen=True)
class TokenModel:
    """Per-sample token entropy and response length of one model (the entropy study).

    Attributes
    ----------
    entropy : dict of str to float
        Mean per-sample token entropy (nats) per benchmark.
    length : dict of str to float
        Median response length (tokens) of answered samples per benchmark.
    entropy_log_sd : float
        Log-sd of the per-sample mean token entropy.
    length_log_sd : float
        Log-sd of the length of answered samples.
    max_tokens : int
        Length of a truncated (NA) sample; answered samples are clipped to ``max_tokens - 1``.
    """

    entropy: dict
    length: dict
    entropy_log_sd: float = 0.25
    length_log_sd: float = 0.5
    max_tokens: int = 32768


# --------------------------------------------------------------------------------------------
# Answer distributions
# --------------------------------------------------------------------------------------------


# The declared kinds of the parameters (leash.core._validation).
PROBABILITIES = Floats(0, 1)
UNIFORMS = Floats(0, 1, ndim=(1,))
MODELS = StrSequence(min_len=2, max_len=2)


@validate_params({"p_correct": [PROBABILITIES],
                  "prior": [InstancesOf(BasePrior, "a BasePrior", lambda: BasePrior(0.0, 1.0))],
                  "n_wrong": [Interval(Integral, 1, None, closed="left")], "rng": [Generator()]})
def draw_answer_distribution(p_correct, prior, n_wrong, *, rng):
    """Base answer distributions q(y|x) given the success probabilities.

    Parameters
    ----------
    p_correct : array_like of float, shape (n_questions,)
        Success probability of each question (mass of class 0).
    prior : BasePrior
        Supplies ``na_mean``, ``na_concentration`` and ``wrong_alpha``.
    n_wrong : int
        Number of wrong-answer classes.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float, shape (n_questions, n_wrong + 2)
        Column 0 correct, columns ``1..n_wrong`` wrong answers, last column NA; rows sum to 1.
    """
    p = np.atleast_1d(p_correct)
    a = prior.na_mean * prior.na_concentration
    b = (1.0 - prior.na_mean) * prior.na_concentration
    f_na = rng.beta(a, b, size=p.size)
    w = rng.dirichlet(np.full(n_wrong, prior.wrong_alpha), size=p.size)
    rest = 1.0 - p
    q = np.empty((p.size, n_wrong + 2))
    q[:, 0] = p
    q[:, 1:-1] = (rest * (1.0 - f_na))[:, None] * w
    q[:, -1] = rest * f_na
    return q / q.sum(axis=1, keepdims=True)


@validate_params({"q": [Distributions()], "beta": [Floats(0, None, closed="left")],
                  "sharpen": [Interval(Real, 1, None, closed="left")],
                  "reward": [Floats(0, 1, ndim=(1, 2)), None]})
def tilt(q, beta, *, sharpen=1.0, reward=None):
    """The KL-tilted distribution of Prop. C.4: ``pi(y) ∝ q(y)**sharpen * exp(beta R(y))``.

    Parameters
    ----------
    q : array_like of float, shape (n_questions, n_classes)
        Base answer distributions (rows sum to 1; zeros stay zero: ``pi << q``).
    beta : float or array_like of float, shape (n_questions,)
        Tilt strength, ``>= 0``; 0 with ``sharpen = 1`` returns q.
    sharpen : float, default 1.0
        Exponent on q, ``>= 1``; 1 is the paper's proposition.
    reward : array_like of {0, 1}, shape (n_classes,) or (n_questions, n_classes), optional
        Verifiable reward per class; default: class 0 correct, all others 0.

    Returns
    -------
    ndarray of float, shape (n_questions, n_classes)
    """
    func = "tilt"
    same_length(func, q=q, beta=beta)
    if reward is None:
        reward = np.zeros(q.shape[1])
        reward[0] = 1.0
    try:
        reward = np.broadcast_to(reward, q.shape)
    except ValueError:
        raise invalid("reward", func, f"broadcastable to the shape of 'q', {q.shape}",
                      f"an array of shape {reward.shape}", reward) from None
    not01 = ~np.isin(reward, (0.0, 1.0))
    if not01.any():
        i = int(np.flatnonzero(not01)[0])
        raise invalid("reward", func, "an array of 0/1 rewards", f"{shown(reward.flat[i])} at "
                      f"flat index {i}", reward)
    b = beta[:, None] if beta.ndim == 1 else beta
    # exp(beta (R - R_max)) with R_max the largest reward carrying base mass in the row: the
    # same distribution after normalization, no overflow for large beta, and q**1 stays exact.
    r_max = np.where(q > 0, reward, -np.inf).max(axis=1, keepdims=True)
    w = q**sharpen * np.exp(b * (reward - r_max))
    return w / w.sum(axis=1, keepdims=True)


@validate_params({"q": [Distributions()],
                  "model": [InstancesOf(RLVRModel, "an RLVRModel", lambda: RLVRModel(1.0))],
                  "u_prune": [Floats(0, 1, ndim=(2,))], "u_expand": [UNIFORMS],
                  "u_delta": [UNIFORMS], "eps_expand": [Interval(Real, 0, None, closed="left")]})
def rlvr_distribution(q, model, *, u_prune, u_expand, u_delta, eps_expand):
    """Apply the RLVR model (prune, expand, tilt) to base answer distributions.

    The randomness enters only through the uniforms, so checkpoints can share them (common
    random numbers: the pruned and expanded sets grow monotonically with the training
    fraction).

    Parameters
    ----------
    q : array_like of float, shape (n_questions, n_classes)
        Base distributions; class 0 is correct.
    model : RLVRModel
    u_prune : array_like of float, shape (n_questions, n_classes)
        In [0, 1] (uniforms; 1 never prunes): class y is pruned iff ``q(y) < tau`` and
        ``u_prune < p_prune``.
    u_expand, u_delta : array_like of float, shape (n_questions,)
        Uniforms: a question is expanded iff ``q(correct) <= eps_expand`` and
        ``u_expand < p_expand``; its new mass is ``delta_low * (delta_high/delta_low)**u_delta``.
    eps_expand : float
        Expansion eligibility threshold (``model.eps_expand`` if set, else this value).

    Returns
    -------
    pi : ndarray of float, shape (n_questions, n_classes)
    pruned : ndarray of bool, shape (n_questions,)
        Whether the correct class was pruned (and not re-expanded).
    expanded : ndarray of bool, shape (n_questions,)
    """
    func = "rlvr_distribution"
    n_q, n_cls = q.shape
    if model.tau * n_cls >= 1.0:
        raise invalid("model", func, f"an RLVRModel whose tau is < 1/n_classes = {1 / n_cls:.4g} "
                      "(so that a class always survives pruning)", f"tau={model.tau!r}", model)
    for name, v in (("p_prune", model.p_prune), ("p_expand", model.p_expand)):
        if not 0.0 <= v <= 1.0:
            raise invalid("model", func, f"an RLVRModel whose {name} is in [0, 1]",
                          f"{name}={v!r}", model)
    if not 0.0 < model.delta_low <= model.delta_high < 1.0:
        raise invalid("model", func, "an RLVRModel with 0 < delta_low <= delta_high < 1",
                      f"delta_low={model.delta_low!r}, delta_high={model.delta_high!r}", model)
    for name, u, shape in (("u_prune", u_prune, q.shape), ("u_expand", u_expand, (n_q,)),
                           ("u_delta", u_delta, (n_q,))):
        if u.shape != shape:
            of = "the shape of 'q'" if name == "u_prune" else "one per row of 'q'"
            raise invalid(name, func, f"an array of shape {shape} ({of})",
                          f"an array of shape {u.shape}", u)
    eps = model.eps_expand if model.eps_expand is not None else eps_expand
    prune = (q < model.tau) & (u_prune < model.p_prune)
    qt = np.where(prune, 0.0, q)
    expanded = (q[:, 0] <= eps) & (u_expand < model.p_expand)
    delta = model.delta_low * (model.delta_high / model.delta_low) ** u_delta
    qt[:, 0] = np.where(expanded, delta, qt[:, 0])
    pruned = prune[:, 0] & ~expanded & (q[:, 0] > 0)
    qt = qt / qt.sum(axis=1, keepdims=True)
    return tilt(qt, model.beta, sharpen=model.sharpen), pruned, expanded


# --------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------


@validate_params({"probs": [Distributions()], "n": [Counts()], "rng": [Generator()]})
def draw_counts(probs, n, *, rng):
    """Counts of each answer class among n i.i.d. samples, per question (exact multinomial).

    Parameters
    ----------
    probs : array_like of float, shape (n_questions, n_classes)
    n : int or array_like of int, shape (n_questions,)
        Samples per question.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_questions, n_classes)
        Rows sum to n.
    """
    same_length("draw_counts", probs=probs, n=n)
    return rng.multinomial(n, probs).astype(np.int64)


def _log_first_sf(j, n, c):
    """Log P(first_correct >= j) = log C(n-j, c) - log C(n, c), for 0 <= j <= n - c."""
    return (
        special.gammaln(n - j + 1)
        - special.gammaln(n - j - c + 1)
        - special.gammaln(n + 1)
        + special.gammaln(n - c + 1)
    )


@validate_params({"n": [Counts()], "c": [Counts()], "rng": [Generator()]})
def draw_first_correct(n, c, *, rng):
    """Index of the first correct sample given c correct among n exchangeable samples.

    The correct samples occupy a uniformly random c-subset of the n positions, so
    ``P(first >= j) = C(n-j, c) / C(n, c)`` for ``0 <= j <= n - c`` (a negative hypergeometric
    law). We invert this survival function at one uniform per question by a vectorized binary
    search over j (hand-written because scipy's ``nhypergeom`` samples through a per-element
    Python loop; ~log2(n) array passes here). Exact up to floating-point rounding of the
    log-binomials (~1e-11 relative).

    Parameters
    ----------
    n : int or array_like of int, shape (n_questions,)
        Samples per question, ``>= 1``.
    c : array_like of int, shape (n_questions,)
        Correct samples per question, ``0 <= c <= n``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape (n_questions,)
        -1 where ``c == 0``; otherwise in ``[0, n - c]``.
    """
    func = "draw_first_correct"
    same_length(func, n=n, c=c)
    c = np.atleast_1d(c)
    n = np.broadcast_to(n, c.shape).astype(np.int64)
    check_c_le_n(n, c, func)
    u = 1.0 - rng.random(c.shape)  # in (0, 1]
    log_u = np.log(u)
    lo = np.zeros(c.shape, dtype=np.int64)  # G(lo) >= u always (G(0) = 1)
    hi = np.where(c > 0, n - c, 0)  # largest feasible index
    nf, cf = n.astype(np.float64), c.astype(np.float64)
    # Largest j in [lo, hi] with G(j) >= u; G is non-increasing in j.
    while True:
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi + 1) // 2
        ok = _log_first_sf(mid.astype(np.float64), nf, cf) >= log_u
        lo = np.where(active & ok, mid, lo)
        hi = np.where(active & ~ok, mid - 1, hi)
    return np.where(c > 0, lo, -1).astype(np.int64)


# --------------------------------------------------------------------------------------------
# Summary frames
# --------------------------------------------------------------------------------------------


@validate_params({"p_base": [PROBABILITIES], "p_rl": [PROBABILITIES],
                  "n": [Counts(minimum=1)], "rng": [Generator()], "benchmark": [str],
                  "models": [MODELS], "question_ids": [ArrayLike(), None]})
def simulate_pair(p_base, p_rl, n, *, rng, benchmark="simulated", models=("base", "rlvr"),
                  question_ids=None):
    """Counts-only summary rows for two models with given true success probabilities.

    For the walkthrough: draw ``c ~ Binomial(n, p)`` and the exact ``first_correct`` for each
    question and model, e.g. under the null ``p_rl == p_base`` to show how often the empirical
    rule reports expansion or shrinkage by chance.

    Parameters
    ----------
    p_base, p_rl : array_like of float, shape (n_questions,)
        True success probabilities in [0, 1].
    n : int or array_like of int, shape (n_questions,)
        Samples per question and model, ``>= 1``.
    rng : numpy.random.Generator
    benchmark : str, default "simulated"
    models : (str, str), default ("base", "rlvr")
        Model labels of the two rows of each question.
    question_ids : array_like of str, shape (n_questions,), optional
        Default ``"q00000"``, ``"q00001"``, ...

    Returns
    -------
    pandas.DataFrame, shape (2 * n_questions, len(SUMMARY_COLUMNS))
        The summary schema (base rows first, then RLVR rows) for counts-only inputs, as
        ``leash_eval.summarize`` gives them: answer lists None, ``n_answer_missing`` and
        ``n_truncated`` NA, token columns NaN.
    """
    func = "simulate_pair"
    same_length(func, p_base=p_base, p_rl=p_rl, n=n)
    pb, pr, n = np.broadcast_arrays(np.atleast_1d(p_base), p_rl, n)
    n = n.astype(np.int64)
    if question_ids is None:
        qids = [f"q{i:05d}" for i in range(pb.size)]
    else:
        qids = [str(q) for q in question_ids]
        if len(qids) != pb.size:
            raise invalid("question_ids", func, f"one id per question ({pb.size}, the length of "
                          "the probabilities)", f"{len(qids)} ids", question_ids)
    frames = []
    for model, p in zip(models, (pb, pr), strict=True):
        c = rng.binomial(n, p).astype(np.int64)
        fc = draw_first_correct(n, c, rng=rng)
        counts = np.stack([c, n - c], axis=1)
        frames.append(demo.summary_frame(model, benchmark, qids, None, n, counts, None, fc))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------
# Table 2: log-probabilities of external reference traces (SIMULATED)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceModel:
    """Explicit model of how likely a reference trace is under the base and the RLVR model.

    Per trace, the per-token perplexity is
    ``reference_ppl[reference] * category_factor[category] * (rl_factor[category] if RLVR)``
    times a log-normal noise factor with ``noise_sigma``; the length is log-normal around
    ``median_tokens[reference]``. The factors encode the paper's reading of Table 2 (an RLVR
    model finds external traces less likely, most so where it lost the question; expansion is
    the exception), not a fit to any model: the demo only exercises the computation.
    """

    reference_ppl: tuple = (("DeepSeek-R1", 1.3), ("Claude Sonnet 4", 1.8))
    category_factor: tuple = (("preservation", 1.0), ("expansion", 1.05), ("shrinkage", 1.05),
                              ("out_of_support", 1.35))
    rl_factor: tuple = (("preservation", 1.1), ("expansion", 0.92), ("shrinkage", 1.2),
                        ("out_of_support", 1.3))
    median_tokens: tuple = (("DeepSeek-R1", 6000), ("Claude Sonnet 4", 2500))
    noise_sigma: float = 0.05
    length_sigma: float = 0.4


@validate_params({"categories": [DATAFRAME], "rng": [Generator()], "models": [MODELS],
                  "model": [InstancesOf(TraceModel, "a TraceModel", TraceModel), None]})
def simulate_traces(categories, *, rng, models=("base", "rlvr"), model=None):
    """SIMULATED token log-probabilities of reference traces, for the Table 2 demo.

    Parameters
    ----------
    categories : pandas.DataFrame
        ``benchmark, question_id, category`` (support category of each question).
    rng : numpy.random.Generator
    models : (str, str)
        Labels of the base and the RLVR model in the output.
    model : TraceModel, optional
        Default ``TraceModel()``.

    Returns
    -------
    pandas.DataFrame
        One row per (question, reference, model): ``benchmark, question_id, reference, model,
        n_tokens, sum_logprob, source`` with ``source == "simulated"``.
    """
    tm = TraceModel() if model is None else model
    cat = categories[["benchmark", "question_id", "category"]].reset_index(drop=True)
    unknown = sorted(set(cat["category"].astype(str)) - set(CATEGORIES))
    if unknown:
        raise LeashValueError(Param("categories"), f" has unknown categories {unknown}; "
                              f"expected {CATEGORIES}.", func="simulate_traces", key="category",
                              value=unknown[0])
    cf, rf = dict(tm.category_factor), dict(tm.rl_factor)
    frames = []
    for ref, ppl0 in tm.reference_ppl:
        q = len(cat)
        n_tok = np.maximum(1, np.round(dict(tm.median_tokens)[ref] * np.exp(
            tm.length_sigma * rng.standard_normal(q)))).astype(np.int64)
        base_ppl = ppl0 * cat["category"].astype(str).map(cf).to_numpy(float)
        for role, label in zip(("base", "rlvr"), models):
            ppl = base_ppl * (cat["category"].astype(str).map(rf).to_numpy(float)
                              if role == "rlvr" else 1.0)
            ppl = ppl * np.exp(tm.noise_sigma * rng.standard_normal(q))
            frames.append(pd.DataFrame({
                "benchmark": cat["benchmark"].astype(str), "question_id":
                cat["question_id"].astype(str), "reference": ref, "model": label,
                "n_tokens": n_tok, "sum_logprob": -n_tok * np.log(np.maximum(ppl, 1.0)),
                "source": SOURCE}))
    return pd.concat(frames, ignore_index=True)


def __getattr__(name):
    # what moved to the demo's generator (leash_eval.demo) with ``leash simulate``, one release
    if name in _MOVED:
        from leash.sources.seam import moved

        return moved(f"{__name__}.{name}", f"leash_eval.demo.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
