"""SIMULATED data: an explicit generative model of base vs RLVR answer distributions.

Everything this module produces is **simulated**, never the paper's data: it lets every notebook
run offline and lets the walkthrough show what the empirical support rule does when the truth is
known. Every frame carries ``source = "simulated"``, every file written by :func:`write_demo`
the key-value metadata ``source = simulated``. The demo's parameters are data,
``data/demo/config.yaml``; :mod:`leash.sources.demo` reads it, builds the frames' rows and writes
and
reads the files; ``data/demo/README.md`` describes the model and every parameter.

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
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from leash.core._validation import as_count_array, check_c_le_n, check_positive_int
from leash.core.support import CATEGORIES, epsilon
from leash.sources import demo
from leash.sources.demo import DEMO_FILES, SOURCE

__all__ = ["BasePrior", "RLVRModel", "TokenModel", "draw_answer_distribution", "tilt",
           "rlvr_distribution", "draw_counts", "draw_first_correct", "simulate_pair",
           "simulate_study", "config_record", "TraceModel", "simulate_traces"]


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

    def at_fraction(self, f: float) -> RLVRModel:
        """The model at training fraction ``f`` in [0, 1] (checkpoints).

        beta, p_prune, p_expand and ``sharpen - 1`` scale linearly with f (f = 0 is the base
        model, f = 1 this model); tau and the delta range are unchanged.
        """
        if not 0.0 <= f <= 1.0:
            raise ValueError(f"The 'f' parameter of RLVRModel.at_fraction must be in [0, 1]. "
                             f"Got {f!r}.")
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


def _check_probs(probs, name, func):
    q = np.asarray(probs, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] < 2:
        raise ValueError(
            f"The '{name}' parameter of {func} must be a 2-D array of shape (n_questions, "
            f"n_classes) with n_classes >= 2. Got shape {q.shape} instead."
        )
    bad = ~np.isfinite(q) | (q < 0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"The '{name}' parameter of {func} must hold finite non-negative probabilities. "
            f"Got {q[i, j]!r} at row {i}, class {j} instead."
        )
    s = q.sum(axis=1)
    bad = np.abs(s - 1.0) > 1e-9
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"The rows of '{name}' in {func} must sum to 1. Row {i} sums to {s[i]!r}.")
    return q


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
    func = "draw_answer_distribution"
    p = np.atleast_1d(np.asarray(p_correct, dtype=np.float64))
    if p.ndim != 1 or (~np.isfinite(p) | (p < 0) | (p > 1)).any():
        raise ValueError(
            f"The 'p_correct' parameter of {func} must be a 1-D array of probabilities in "
            f"[0, 1]. Got {p!r} instead."
        )
    n_wrong = check_positive_int(n_wrong, "n_wrong", func)
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
    q = _check_probs(q, "q", func)
    beta = np.asarray(beta, dtype=np.float64)
    if (~np.isfinite(beta) | (beta < 0)).any():
        raise ValueError(f"The 'beta' parameter of {func} must be finite and >= 0. Got {beta!r}.")
    if not (np.isfinite(sharpen) and sharpen >= 1.0):
        raise ValueError(f"The 'sharpen' parameter of {func} must be >= 1. Got {sharpen!r}.")
    if reward is None:
        reward = np.zeros(q.shape[1])
        reward[0] = 1.0
    reward = np.broadcast_to(np.asarray(reward, dtype=np.float64), q.shape)
    if not np.isin(reward, (0.0, 1.0)).all():
        raise ValueError(f"The 'reward' parameter of {func} must hold 0/1 values.")
    b = beta[:, None] if beta.ndim == 1 else beta
    # exp(beta (R - R_max)) with R_max the largest reward carrying base mass in the row: the
    # same distribution after normalization, no overflow for large beta, and q**1 stays exact.
    r_max = np.where(q > 0, reward, -np.inf).max(axis=1, keepdims=True)
    w = q**sharpen * np.exp(b * (reward - r_max))
    return w / w.sum(axis=1, keepdims=True)


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
        Uniforms in [0, 1): class y is pruned iff ``q(y) < tau`` and ``u_prune < p_prune``.
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
    q = _check_probs(q, "q", func)
    n_q, n_cls = q.shape
    if model.tau * n_cls >= 1.0:
        raise ValueError(
            f"The RLVRModel.tau of {func} must be < 1/n_classes = {1 / n_cls:.4g} so that a "
            f"class always survives pruning. Got tau={model.tau!r}."
        )
    for name, v in (("p_prune", model.p_prune), ("p_expand", model.p_expand)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"The RLVRModel.{name} of {func} must be in [0, 1]. Got {v!r}.")
    if not 0.0 < model.delta_low <= model.delta_high < 1.0:
        raise ValueError(
            f"The RLVRModel delta range of {func} must satisfy 0 < delta_low <= delta_high < 1. "
            f"Got ({model.delta_low!r}, {model.delta_high!r})."
        )
    u_prune = np.asarray(u_prune, dtype=np.float64)
    u_expand = np.asarray(u_expand, dtype=np.float64)
    u_delta = np.asarray(u_delta, dtype=np.float64)
    if u_prune.shape != q.shape or u_expand.shape != (n_q,) or u_delta.shape != (n_q,):
        raise ValueError(
            f"The uniforms of {func} must have shapes {q.shape} (u_prune) and ({n_q},) "
            f"(u_expand, u_delta). Got {u_prune.shape}, {u_expand.shape}, {u_delta.shape}."
        )
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
    probs = _check_probs(probs, "probs", "draw_counts")
    n = as_count_array(n, "n", "draw_counts")
    return rng.multinomial(n, probs).astype(np.int64)


def _log_first_sf(j, n, c):
    """Log P(first_correct >= j) = log C(n-j, c) - log C(n, c), for 0 <= j <= n - c."""
    return (
        special.gammaln(n - j + 1)
        - special.gammaln(n - j - c + 1)
        - special.gammaln(n + 1)
        + special.gammaln(n - c + 1)
    )


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
    c = np.atleast_1d(as_count_array(c, "c", func))
    n = np.broadcast_to(as_count_array(n, "n", func), c.shape).astype(np.int64)
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


def _answer_strings(n_q, n_answers, rng):
    """Distinct small-integer answer strings per question: ``(b + j s) mod 997``.

    997 is prime and s in [1, 996], so the n_answers values of a row are distinct.
    """
    b = rng.integers(0, 997, size=n_q)
    s = rng.integers(1, 997, size=n_q)
    vals = (b[:, None] + np.arange(n_answers)[None, :] * s[:, None]) % 997
    return vals.astype(str)


def _token_stats(counts, tokens: TokenModel, benchmark, rng):
    """Per-sample token entropy and length, aggregated per question (see module docstring).

    ``token_entropy_std`` is the sample standard deviation (ddof = 1) over a question's samples.
    """
    n_q, n_cls = counts.shape
    n = counts.sum(axis=1)
    if (n < 2).any():
        raise ValueError("The entropy study needs at least 2 samples per question.")
    cls = np.repeat(np.tile(np.arange(n_cls), n_q), counts.ravel())
    is_na = cls == n_cls - 1
    total = cls.size
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    s_e = tokens.entropy_log_sd
    ent = tokens.entropy[benchmark] * np.exp(s_e * rng.standard_normal(total) - s_e**2 / 2)
    s_l = tokens.length_log_sd
    length = np.exp(np.log(tokens.length[benchmark]) + s_l * rng.standard_normal(total))
    length = np.clip(np.rint(length), 1, tokens.max_tokens - 1)
    length = np.where(is_na, tokens.max_tokens, length).astype(np.float64)
    ent_sum = np.add.reduceat(ent, starts)
    ent_mean = ent_sum / n
    ent_ss = np.add.reduceat((ent - np.repeat(ent_mean, n)) ** 2, starts)
    return {
        "n_tokens_mean": np.add.reduceat(length, starts) / n,
        "n_tokens_min": np.minimum.reduceat(length, starts),
        "n_tokens_max": np.maximum.reduceat(length, starts),
        "token_entropy_mean": ent_mean,
        "token_entropy_std": np.sqrt(ent_ss / (n - 1)),
    }


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
    pb = np.atleast_1d(np.asarray(p_base, dtype=np.float64))
    pr = np.atleast_1d(np.asarray(p_rl, dtype=np.float64))
    for name, p in (("p_base", pb), ("p_rl", pr)):
        if p.ndim != 1 or (~np.isfinite(p) | (p < 0) | (p > 1)).any():
            bad = np.flatnonzero(~np.isfinite(p) | (p < 0) | (p > 1))
            got = f"{float(p[bad[0]])!r} at index {bad[0]}" if bad.size else f"shape {p.shape}"
            raise ValueError(
                f"The '{name}' parameter of {func} must be a 1-D array of probabilities in "
                f"[0, 1]. Got {got} instead."
            )
    if pb.shape != pr.shape:
        raise ValueError(
            f"The arrays passed to {func} must have the same length. Got p_base: {pb.size}, "
            f"p_rl: {pr.size}."
        )
    n = np.broadcast_to(as_count_array(n, "n", func), pb.shape).astype(np.int64)
    if (n < 1).any():
        raise ValueError(f"The 'n' parameter of {func} must be >= 1. Got {n.min()} instead.")
    if len(models) != 2 or not all(isinstance(m, str) for m in models):
        raise ValueError(f"The 'models' parameter of {func} must be two strings. Got {models!r}.")
    if question_ids is None:
        qids = [f"q{i:05d}" for i in range(pb.size)]
    else:
        qids = [str(q) for q in question_ids]
        if len(qids) != pb.size:
            raise ValueError(
                f"The 'question_ids' parameter of {func} must have length {pb.size}. "
                f"Got {len(qids)}."
            )
    frames = []
    for model, p in zip(models, (pb, pr), strict=True):
        c = rng.binomial(n, p).astype(np.int64)
        fc = draw_first_correct(n, c, rng=rng)
        counts = np.stack([c, n - c], axis=1)
        frames.append(demo.summary_frame(model, benchmark, qids, None, n, counts, None, fc))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------
# The study
# --------------------------------------------------------------------------------------------


def _models(cfg):
    """The configuration with its priors, updates and token models as the model's classes."""
    def models(d, cls):
        return {k: cls(**v) for k, v in d.items()}

    def update(d, **extra):
        return {**d, "rlvr": RLVRModel(**d["rlvr"]), **extra}

    return {
        **cfg,
        "pairs": [update(p, priors=models(p["priors"], BasePrior),
                         tokens_base=TokenModel(**p["tokens_base"]),
                         tokens_rl=TokenModel(**p["tokens_rl"])) for p in cfg["pairs"]],
        "checkpoints": update(cfg["checkpoints"]),
        "sft": update(cfg["sft"], priors=models(cfg["sft"]["priors"], BasePrior)),
        "gym": [update(g, prior=BasePrior(**g["prior"])) for g in cfg["gym"]],
    }


def config_record(cfg):
    """The configuration with every default of the model's classes written out (metadata)."""
    def plain(obj):
        if dataclasses.is_dataclass(obj):
            return dataclasses.asdict(obj)
        if isinstance(obj, Mapping):
            return {k: plain(v) for k, v in obj.items()}
        return [plain(v) for v in obj] if isinstance(obj, (list, tuple)) else obj

    return plain(_models(cfg))


def _qids(bench, n_q):
    return [f"{bench}-{i:04d}" for i in range(n_q)]


def _sample(model, bench, qids, step, n, probs, answers, rng, tokens=None):
    """Summary rows of one model: class counts, first correct sample[, token statistics]."""
    counts = draw_counts(probs, n, rng=rng)
    fc = draw_first_correct(n, counts[:, 0], rng=rng)
    ts = _token_stats(counts, tokens, bench, rng) if tokens is not None else None
    return demo.summary_frame(model, bench, qids, step, n, counts, answers, fc, ts)


def _update(q, model, eps, rng):
    """``rlvr_distribution`` with fresh uniforms from ``rng``; also returns the uniforms."""
    u = (rng.random(q.shape), rng.random(q.shape[0]), rng.random(q.shape[0]))
    return (*rlvr_distribution(q, model, u_prune=u[0], u_expand=u[1], u_delta=u[2],
                               eps_expand=eps), u)


def simulate_study(config=None, *, rng):  # noqa: C901 - one block per demo frame
    """Simulate the whole demo study.

    Parameters
    ----------
    config : dict, optional
        A configuration as :func:`leash.sources.demo.load_config` returns it; default the demo's
        (``data/demo/config.yaml``).
    rng : numpy.random.Generator
        The only source of randomness; independent child streams are spawned per study part.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``"support"`` (the base/RLVR pairs on all benchmarks at the paper's budgets),
        ``"entropy"`` (the same models and true distributions, n = 32 with token entropy and
        length), ``"checkpoints"`` (one RLVR run, steps with step 0 = base, n = 256),
        ``"sft"`` (base, SFT and RLVR on the same base, n = 256), ``"gym"`` (Reasoning-Gym-like
        tasks for pass@k curves) -- all in the summary schema -- and ``"truth"`` (true
        probabilities and categories, one row per question and pair).
    """
    cfg = demo.load_config() if config is None else config
    keys = ("benchmarks", "pairs", "checkpoints", "sft", "gym_models", "gym", "n_wrong", "rho",
            "entropy_n", "entropy_benchmarks", "zeta")
    if not isinstance(cfg, Mapping) or (lacks := [k for k in keys if k not in cfg]):
        got = f"a mapping without {lacks}" if isinstance(cfg, Mapping) else type(cfg).__name__
        raise TypeError("The 'config' parameter of simulate_study must be a configuration "
                        f"from leash.sources.demo.load_config or None. Got {got} instead.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("The 'rng' parameter of simulate_study must be a numpy.random.Generator. "
                        f"Got {type(rng).__name__} instead.")
    demo.check_config(cfg, "the 'config' parameter of simulate_study")
    cfg = _models(cfg)
    r_lat, r_sup, r_ent, r_ckp, r_sft, r_gym = rng.spawn(6)
    benches = {b["name"]: b for b in cfg["benchmarks"]}
    n_wrong, rho, zeta = cfg["n_wrong"], cfg["rho"], cfg["zeta"]
    ent_n = cfg["entropy_n"]
    out = {name: [] for name in DEMO_FILES}
    truth = out["truth"]

    # Latent difficulty and answer strings, shared by every model on a question.
    latent, answers = {}, {}
    for b in cfg["benchmarks"]:
        latent[b["name"]] = r_lat.standard_normal(b["n_questions"])
        answers[b["name"]] = _answer_strings(b["n_questions"], n_wrong + 1, r_lat)

    dists = {}  # (size, bench) -> (q, uniforms of the update)
    for pair in cfg["pairs"]:
        base, rl = pair["base_model"], pair["rl_model"]
        for name, b in benches.items():
            n_q, budget = b["n_questions"], b["budget"]
            z = rho * latent[name] + math.sqrt(1 - rho**2) * r_sup.standard_normal(n_q)
            prior = pair["priors"][name]
            p = special.expit(prior.mu + prior.sigma * z)
            q = draw_answer_distribution(p, prior, n_wrong, rng=r_sup)
            pi, pruned, expanded, u = _update(q, pair["rlvr"], epsilon(budget, zeta), r_sup)
            dists[(pair["size"], name)] = (q, u)
            qids, ans = _qids(name, n_q), answers[name]
            for model, probs in ((base, q), (rl, pi)):
                out["support"].append(_sample(model, name, qids, None, budget, probs, ans, r_sup))
            in_entropy = name in cfg["entropy_benchmarks"]
            for study, n in (("support", budget),) + ((("entropy", ent_n),) if in_entropy else ()):
                truth.append(demo.truth_frame(study, base, None, rl, None, name, qids, n,
                                              q[:, 0], pi[:, 0], pruned, expanded, ans[:, 0],
                                              zeta))
            if in_entropy:
                for model, probs, tok in ((base, q, pair["tokens_base"]),
                                          (rl, pi, pair["tokens_rl"])):
                    out["entropy"].append(_sample(model, name, qids, None, ent_n, probs, ans,
                                                  r_ent, tok))

    # Checkpoints: one run from a pair's base, common random numbers across steps.
    ck = cfg["checkpoints"]
    s_max, n_ck, label = max(ck["steps"]), ck["budget"], ck["model"]
    for name in ck["benchmarks"]:
        n_q = benches[name]["n_questions"]
        q, (u_prune, u_expand, u_delta) = dists[(ck["pair_size"], name)]
        qids, ans = _qids(name, n_q), answers[name]
        for step in ck["steps"]:
            pi = q
            if step != 0:
                pi, pruned, expanded = rlvr_distribution(
                    q, ck["rlvr"].at_fraction(step / s_max), u_prune=u_prune, u_expand=u_expand,
                    u_delta=u_delta, eps_expand=epsilon(n_ck, zeta),
                )
                truth.append(demo.truth_frame("checkpoints", label, 0, label, step, name, qids,
                                              n_ck, q[:, 0], pi[:, 0], pruned, expanded,
                                              ans[:, 0], zeta))
            out["checkpoints"].append(_sample(label, name, qids, step, n_ck, pi, ans, r_ckp))

    # SFT vs RLVR on a separate base.
    sp = cfg["sft"]
    n_s = sp["budget"]
    for name, prior in sp["priors"].items():
        n_q = benches[name]["n_questions"]
        qids, ans = _qids(name, n_q), answers[name]
        p = special.expit(prior.mu + prior.sigma * latent[name])
        q = draw_answer_distribution(p, prior, n_wrong, rng=r_sft)
        teacher_logit = special.logit(np.clip(p, 1e-300, 1.0)) + sp["teacher_shift"] + (
            sp["teacher_sigma"] * r_sft.standard_normal(n_q)
        )
        t = draw_answer_distribution(special.expit(teacher_logit), prior, n_wrong, rng=r_sft)
        sft = (1.0 - sp["lam"]) * q + sp["lam"] * t
        pi, pruned, expanded, _ = _update(q, sp["rlvr"], epsilon(n_s, zeta), r_sft)
        for model, probs in ((sp["base_model"], q), (sp["sft_model"], sft), (sp["rl_model"], pi)):
            out["sft"].append(_sample(model, name, qids, None, n_s, probs, ans, r_sft))
        no = np.zeros(n_q, dtype=bool)
        for model, probs, pr, ex in ((sp["sft_model"], sft, no, no),
                                     (sp["rl_model"], pi, pruned, expanded)):
            truth.append(demo.truth_frame("sft", sp["base_model"], None, model, None, name, qids,
                                          n_s, q[:, 0], probs[:, 0], pr, ex, ans[:, 0], zeta))

    # Reasoning-Gym-like tasks.
    base, rl = cfg["gym_models"]
    for task in cfg["gym"]:
        name, n_q, n_g = task["name"], task["n_questions"], task["budget"]
        qids = _qids(name, n_q)
        z = r_gym.standard_normal(n_q)
        ans = _answer_strings(n_q, n_wrong + 1, r_gym)
        p = special.expit(task["prior"].mu + task["prior"].sigma * z)
        q = draw_answer_distribution(p, task["prior"], n_wrong, rng=r_gym)
        pi, pruned, expanded, _ = _update(q, task["rlvr"], epsilon(n_g, zeta), r_gym)
        for model, probs in ((base, q), (rl, pi)):
            out["gym"].append(_sample(model, name, qids, None, n_g, probs, ans, r_gym))
        truth.append(demo.truth_frame("gym", base, None, rl, None, name, qids, n_g, q[:, 0],
                                      pi[:, 0], pruned, expanded, ans[:, 0], zeta))
    return {name: pd.concat(frames, ignore_index=True) for name, frames in out.items()}


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
    if not isinstance(rng, np.random.Generator):
        raise TypeError("The 'rng' parameter of simulate_traces must be a "
                        f"numpy.random.Generator. Got {type(rng).__name__} instead.")
    tm = TraceModel() if model is None else model
    cat = categories[["benchmark", "question_id", "category"]].reset_index(drop=True)
    unknown = sorted(set(cat["category"].astype(str)) - set(CATEGORIES))
    if unknown:
        raise ValueError(f"simulate_traces: unknown categories {unknown}; expected {CATEGORIES}.")
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
