"""SIMULATED demo data: an explicit generative model of base vs RLVR answer distributions.

Everything this module produces is **simulated**. It is never the paper's data; it exists so
that every notebook of the project runs offline and so that the walkthrough can show what the
empirical support rule does when the truth is known. Every frame carries a column
``source = "simulated"`` and every Parquet file written by :func:`write_demo` carries the
key-value metadata ``source = simulated``.

The generative model (one benchmark question x at a time)
---------------------------------------------------------
Answer classes. A question has ``K = n_wrong + 2`` answer-level equivalence classes (Def. 3.1,
"answer-level correct completions"): class 0 is the single correct answer (R = 1), classes
``1..n_wrong`` are distinct wrong answers (R = 0) and the last class is "NA", an incomplete
output with no extracted answer (R = 0, counted in ``n_answer_missing`` and ``n_truncated``).
Each class has a normalized answer string (small integers, distinct per question).

Base model q(y|x).

* Success probability ``p_base(x) = expit(mu + sigma * z_x)``, a logit-normal prior whose
  ``(mu, sigma)`` are set per (model size, benchmark) so that the expected pass@1 and pass@k at
  the paper's budget match the targets in :data:`CALIBRATION_TARGETS` (taken from the paper's
  Tables 5-8 where it prints them, otherwise invented and marked so); see
  :func:`calibrate_logit_normal`. ``z_x`` is standard normal; the latent difficulty of a
  question is shared between model sizes with correlation ``rho`` (harder questions are hard
  for every model).
* The incorrect mass ``1 - p_base`` is split into NA with a Beta-distributed fraction
  (mean ``na_mean``, concentration ``na_concentration``) and wrong answers with
  Dirichlet(``wrong_alpha``) weights over ``n_wrong`` classes.

RLVR model pi(y|x): the KL-tilted distribution of Prop. C.4 (arXiv 2507.14843v4, App. C),
``pi(y) = q(y) exp(beta R(y)) / Z``, with three explicit, documented departures that are the
walkthrough's knobs (:class:`RLVRModel`), applied in this order:

1. Tail pruning (shrinkage): every class with ``q(y) < tau`` is removed (mass 0) with
   probability ``p_prune``, independently per class. Pruning never increases the correct mass.
2. Rare new mass (expansion): with probability ``p_expand``, a question whose correct class
   has ``q(correct) <= eps_expand`` gets pre-tilt correct mass ``delta``, drawn log-uniform on
   ``[delta_low, delta_high]``. This is exactly what Thm. C.1/C.3 rule out for on-policy updates,
   and what the paper's small E counts show happens in practice.
3. Tilt and optional sharpening: ``pi(y) ∝ q~(y)**sharpen * exp(beta R(y))`` with ``q~`` the
   pruned/expanded base distribution. ``sharpen = 1`` is Prop. C.4 exactly; ``sharpen > 1``
   additionally concentrates the wrong-answer mass (the entropy collapse of RLVR) and is an
   addition of this simulation, not of the paper. ``beta = 0, sharpen = 1``, no pruning and
   no expansion give ``pi == q``.

Checkpoints (a DAPO-like run): at step s of ``s_max`` the model uses ``beta * s/s_max``,
``1 + (sharpen - 1) s/s_max``, ``p_prune * s/s_max`` and ``p_expand * s/s_max``, with common
random numbers across steps, so
the pruned and expanded sets grow monotonically with training. Step 0 is the base model.

SFT model (for the SFT-vs-RLVR study): the mixture ``(1 - lam) q + lam t`` with a "teacher"
answer distribution t whose success probability is logit-normal and correlated with the base's
(``rho_teacher``). A mixture adds mass where the teacher has it: expansion without pruning.

Samples. Per question and model, the counts of the K classes among n samples are drawn exactly
(one multinomial per question, vectorized over questions). ``first_correct`` (0-based index of
the first correct sample in generation order) is drawn exactly given the count c: the n samples
are exchangeable, so the correct ones sit at a uniformly random c-subset of positions and
``P(first_correct >= j) = C(n-j, c) / C(n, c)`` (negative hypergeometric; see
:func:`draw_first_correct`).

Token entropy and response length (the n = 32 "entropy" study, Table 5 style). Per sample:
the mean token entropy is ``level * exp(s Z - s^2/2)`` (mean ``level``, log-sd ``s``) with a
per (model, benchmark) ``level`` near the paper's Table 5 value; the response length of an
answered sample is log-normal with median ``length_median``; an NA sample is a truncated one
(``finish_reason == "length"``) and has exactly ``max_tokens`` tokens. The 1.5B pair has higher
token entropy after RLVR and the 7B pair lower, while answer entropy drops for both (the paper's
Table 5 finding).

Outputs follow the project's per-question summary schema (one row per model, benchmark,
question_id[, step]) plus a ``truth`` table with the true success probabilities of both models,
the pruning/expansion flags and the true epsilon-support category, so that
:func:`misclassification_table` can report how often the empirical rule (>= 1 correct sample)
misclassifies a question.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy import optimize, special

from ._argparse import OneLineParser, non_negative_int
from ._checks import as_count_array, check_c_le_n, check_positive_int, check_probability
from .compare import frame_differences
from .formats import SUMMARY_METADATA_KEY
from .summarize import SUMMARY_SCHEMA
from .support import CATEGORIES, _codes, epsilon
from .tables import CATEGORY_DTYPE, found_at_budget

__all__ = [
    "SOURCE",
    "DEMO_SEED",
    "DEMO_FILES",
    "SUMMARY_COLUMNS",
    "TRUTH_COLUMNS",
    "Benchmark",
    "BasePrior",
    "RLVRModel",
    "TokenModel",
    "PairSpec",
    "CheckpointSpec",
    "SFTSpec",
    "GymTask",
    "StudyConfig",
    "BENCHMARKS",
    "CALIBRATION_TARGETS",
    "DEFAULT_CONFIG",
    "logit_normal_moments",
    "calibrate_logit_normal",
    "draw_answer_distribution",
    "tilt",
    "rlvr_distribution",
    "draw_counts",
    "draw_first_correct",
    "simulate_pair",
    "simulate_study",
    "misclassification_table",
    "TraceModel",
    "simulate_traces",
    "write_demo",
    "read_demo",
    "demo_dir",
    "main_simulate",
]

SOURCE = "simulated"
"""Value of the ``source`` column and of the Parquet metadata key ``source``."""

DEMO_SEED = 2507_14843
"""Seed of the committed demo (the paper's arXiv number)."""

DEMO_FILES = ("support", "entropy", "checkpoints", "sft", "gym", "truth")
"""The frames of :func:`simulate_study`, one Parquet file each in ``data/demo/``."""

# pandas dtypes of the summary frame as leash.summarize.read_summary returns them (the nullable
# Int64 columns are NA for counts-only inputs there); list columns hold Python lists here.
_NULLABLE_INT = ("step", "first_correct", "n_answer_missing", "n_truncated")
SUMMARY_COLUMNS = {
    **{
        f.name: (
            "string" if f.type == pa.string()
            else ("Int64" if f.name in _NULLABLE_INT else "int64") if f.type == pa.int64()
            else "float64" if f.type == pa.float64()
            else "object"
        )
        for f in SUMMARY_SCHEMA
    },
    "source": "string",
}
"""Columns and pandas dtypes of a simulated summary frame: ``leash.summarize.SUMMARY_SCHEMA``
plus ``source``."""

TRUTH_COLUMNS = {
    "study": "string",
    "base_model": "string",
    "base_step": "Int64",
    "model": "string",
    "step": "Int64",
    "benchmark": "string",
    "question_id": "string",
    "n": "int64",
    "p_base": "float64",
    "p_rl": "float64",
    "pruned": "bool",
    "expanded": "bool",
    "epsilon": "float64",
    "true_category": "string",
    "reference_answer": "string",
    "source": "string",
}
"""Columns of the truth table: one row per (study, pair, benchmark, question[, step])."""


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Benchmark:
    """A benchmark of the simulated study.

    Attributes
    ----------
    name : str
        Benchmark label used in the ``benchmark`` column.
    domain : str
        "math" or "non-math" (Table 1's domains).
    n_questions : int
        Number of questions (the paper's N = P+E+S+O, Tables 6-12).
    budget : int
        Samples per question in the support study (Tables 6-8: 8192 math, 2048 non-math).
    """

    name: str
    domain: str
    n_questions: int
    budget: int


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
            raise ValueError(
                f"The 'f' parameter of RLVRModel.at_fraction must be in [0, 1]. Got {f!r}."
            )
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


@dataclass(frozen=True)
class PairSpec:
    """A base -> RLVR pair of the support study.

    Attributes
    ----------
    size : str
        Key into :data:`CALIBRATION_TARGETS` and the priors.
    base_model, rl_model : str
        Model labels.
    priors : dict of str to BasePrior
        Base prior per benchmark name.
    rlvr : RLVRModel
        The update.
    tokens_base, tokens_rl : TokenModel
        Token entropy / length models of the entropy study.
    """

    size: str
    base_model: str
    rl_model: str
    priors: dict
    rlvr: RLVRModel
    tokens_base: TokenModel
    tokens_rl: TokenModel


@dataclass(frozen=True)
class CheckpointSpec:
    """Checkpoints of an RLVR run started from one pair's base model (Table 4 style).

    Attributes
    ----------
    pair_size : str
        ``PairSpec.size`` of the pair whose base distributions q (and truth) are reused.
    model : str
        Model label of every checkpoint row (steps distinguish them; step 0 is the base).
    steps : tuple of int
        Checkpoint steps, including 0; step s uses ``rlvr.at_fraction(s / max(steps))``.
    budget : int
        Samples per question and checkpoint.
    benchmarks : tuple of str
        Benchmarks of the run (names of ``StudyConfig.benchmarks``).
    rlvr : RLVRModel
        The model at the last step.
    """

    pair_size: str
    model: str
    steps: tuple
    budget: int
    benchmarks: tuple
    rlvr: RLVRModel


@dataclass(frozen=True)
class SFTSpec:
    """Base vs SFT vs RLVR on the same base (Table 3/14 style).

    The SFT model is the mixture ``(1 - lam) q + lam t``. The teacher t has success logit
    ``logit(p_base) + teacher_shift + teacher_sigma * e``, ``e ~ N(0, 1)``, and its own
    NA/wrong split drawn from the same prior.

    Attributes
    ----------
    base_model, sft_model, rl_model : str
        Model labels.
    budget : int
        Samples per question and model.
    priors : dict of str to BasePrior
        Base prior per benchmark (the benchmarks of this study).
    lam : float
        Teacher weight of the mixture, in [0, 1].
    teacher_shift, teacher_sigma : float
        Mean shift and noise scale of the teacher's success logit.
    rlvr : RLVRModel
        The RLVR model trained from the same base.
    """

    base_model: str
    sft_model: str
    rl_model: str
    budget: int
    priors: dict
    lam: float
    teacher_shift: float
    teacher_sigma: float
    rlvr: RLVRModel


@dataclass(frozen=True)
class GymTask:
    """A Reasoning-Gym-like task for pass@k curves (Figs. 2-4 style).

    Attributes
    ----------
    name : str
        Benchmark label (the paper's task names; the tasks themselves are invented).
    n_questions, budget : int
        Instances and samples per instance and model.
    prior : BasePrior
        Base prior (set directly, not calibrated).
    rlvr : RLVRModel
        The update.
    pattern : str
        "preservation", "expansion" or "shrinkage": what the parameters are meant to show.
    """

    name: str
    n_questions: int
    budget: int
    prior: BasePrior
    rlvr: RLVRModel
    pattern: str


@dataclass(frozen=True)
class StudyConfig:
    """Everything :func:`simulate_study` needs; :data:`DEFAULT_CONFIG` is the demo's.

    Attributes
    ----------
    benchmarks : tuple of Benchmark
        Benchmarks of the support study.
    pairs : tuple of PairSpec
        Base -> RLVR pairs of the support and entropy studies.
    checkpoints : CheckpointSpec
    sft : SFTSpec
    gym_models : (str, str)
        Base and RLVR labels of the gym tasks.
    gym : tuple of GymTask
    n_wrong : int, default 8
        Wrong-answer classes per question (plus one correct and one NA class).
    rho : float, default 0.8
        Correlation of a question's latent difficulty between the pairs' bases.
    entropy_n : int, default 32
        Samples per question of the entropy study (Table 5 uses 32).
    entropy_benchmarks : tuple of str
        Benchmarks of the entropy study; every pair's TokenModels must cover them.
    zeta : float, default 0.05
        Confidence parameter of the truth table's epsilon (App. C.4).
    """

    benchmarks: tuple
    pairs: tuple
    checkpoints: CheckpointSpec
    sft: SFTSpec
    gym_models: tuple
    gym: tuple
    n_wrong: int = 8
    rho: float = 0.8
    entropy_n: int = 32
    entropy_benchmarks: tuple = ("AIME2024", "AIME2025", "AMC23", "MATH500", "Minerva",
                                 "OlympiadBench")
    zeta: float = 0.05

    def to_dict(self) -> dict:
        """A JSON-serializable copy (stored in the Parquet metadata and README)."""
        return dataclasses.asdict(self)


BENCHMARKS = (
    Benchmark("MATH500", "math", 500, 8192),
    Benchmark("Minerva", "math", 272, 8192),
    Benchmark("OlympiadBench", "math", 675, 8192),
    Benchmark("AIME2024", "math", 30, 8192),
    Benchmark("AIME2025", "math", 30, 8192),
    Benchmark("AMC23", "math", 40, 8192),
    Benchmark("SimpleQA", "non-math", 433, 2048),
    Benchmark("LiveBench-R", "non-math", 100, 2048),
    Benchmark("LiveBench-C", "non-math", 128, 2048),
    Benchmark("LiveBench-L", "non-math", 50, 2048),
    Benchmark("SciBench", "non-math", 692, 2048),
)
"""The paper's benchmarks and sizes (N = P+E+S+O, Table 6) with the 1.5B/7B budgets of
Tables 6-8."""

# (expected pass@1, expected pass@k, k) of the BASE model that the logit-normal priors are
# calibrated to. Sources: pass@1 = the paper's avg@32 (Table 5: DeepSeek-1.5B, DeepSeek-7B);
# pass@k = the base pass@8192 / pass@2048 of Tables 6 (1.5B) and
# 7 (7B), and pass@256 of Table 3 (math-7B). Values of 100% are capped at 99.5% (a logit-normal
# never gives exactly 1). "inv" = invented (the paper prints no such number).
CALIBRATION_TARGETS = {
    ("1.5B", "AIME2024"): (0.3115, 0.933, 8192),
    ("1.5B", "AIME2025"): (0.23, 0.800, 8192),  # pass@1 inv
    ("1.5B", "AMC23"): (0.7281, 0.995, 8192),
    ("1.5B", "MATH500"): (0.8501, 0.996, 8192),
    ("1.5B", "Minerva"): (0.3218, 0.717, 8192),
    ("1.5B", "OlympiadBench"): (0.5155, 0.927, 8192),
    ("1.5B", "SimpleQA"): (0.05, 0.233, 2048),  # pass@1 inv
    ("1.5B", "LiveBench-R"): (0.50, 0.995, 2048),  # pass@1 inv
    ("1.5B", "LiveBench-C"): (0.25, 0.625, 2048),  # pass@1 inv
    ("1.5B", "LiveBench-L"): (0.08, 0.260, 2048),  # pass@1 inv
    ("1.5B", "SciBench"): (0.45, 0.941, 2048),  # pass@1 inv
    ("7B", "AIME2024"): (0.5323, 0.933, 8192),
    ("7B", "AIME2025"): (0.40, 0.995, 8192),  # pass@1 inv
    ("7B", "AMC23"): (0.893, 0.995, 8192),
    ("7B", "MATH500"): (0.9395, 0.998, 8192),
    ("7B", "Minerva"): (0.4307, 0.717, 8192),
    ("7B", "OlympiadBench"): (0.6667, 0.960, 8192),
    ("7B", "SimpleQA"): (0.10, 0.386, 2048),  # pass@1 inv
    ("7B", "LiveBench-R"): (0.60, 0.995, 2048),  # pass@1 inv
    ("7B", "LiveBench-C"): (0.40, 0.859, 2048),  # pass@1 inv
    ("7B", "LiveBench-L"): (0.08, 0.240, 2048),  # pass@1 inv
    ("7B", "SciBench"): (0.55, 0.947, 2048),  # pass@1 inv
    ("math-7B", "AIME2024"): (0.10, 0.6333, 256),  # pass@1 inv
    ("math-7B", "AIME2025"): (0.05, 0.50, 256),  # pass@1 inv
    ("math-7B", "AMC23"): (0.40, 0.995, 256),  # pass@1 inv
    ("math-7B", "MATH500"): (0.60, 0.964, 256),  # pass@1 inv
    ("math-7B", "Minerva"): (0.20, 0.6324, 256),  # pass@1 inv
    ("math-7B", "OlympiadBench"): (0.25, 0.7822, 256),  # pass@1 inv
}

def _prior(size, bench, na_mean):
    mu, sigma = _PRIOR_MU_SIGMA[(size, bench)]
    return BasePrior(mu=mu, sigma=sigma, na_mean=na_mean)


# --------------------------------------------------------------------------------------------
# Logit-normal prior and its calibration
# --------------------------------------------------------------------------------------------

# Probabilists' Gauss-Hermite rule for E[f(Z)], Z ~ N(0, 1); 201 nodes are exact to ~1e-12 for
# the smooth integrands below.
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(201)
_GH_W = _GH_W / _GH_W.sum()


def logit_normal_moments(mu, sigma, k):
    """Expected pass@1 and pass@k of a question whose success probability is logit-normal.

    Parameters
    ----------
    mu : float
        Location of the logit.
    sigma : float
        Scale of the logit, ``> 0``.
    k : int
        Budget, ``>= 1``.

    Returns
    -------
    (float, float)
        ``E[p]`` and ``E[1 - (1 - p)^k]`` for ``p = expit(mu + sigma Z)``, by Gauss-Hermite
        quadrature (201 nodes).
    """
    k = check_positive_int(k, "k", "logit_normal_moments")
    if not (np.isfinite(mu) and np.isfinite(sigma) and sigma > 0):
        raise ValueError(
            "The 'mu' and 'sigma' parameters of logit_normal_moments must be finite with "
            f"sigma > 0. Got mu={mu!r}, sigma={sigma!r} instead."
        )
    logit = mu + sigma * _GH_X
    p = special.expit(logit)
    # 1 - (1-p)^k with log(1-p) = -softplus(logit), without cancellation.
    passk = -np.expm1(-k * np.logaddexp(0.0, logit))
    return float(_GH_W @ p), float(_GH_W @ passk)


def calibrate_logit_normal(pass1, passk, k):
    """The logit-normal prior with a given expected pass@1 and pass@k.

    Parameters
    ----------
    pass1 : float
        Target ``E[p]``, in (0, 1).
    passk : float
        Target ``E[1 - (1-p)^k]``, in (pass1, 1).
    k : int
        Budget, ``>= 2``.

    Returns
    -------
    (float, float)
        ``(mu, sigma)``.

    Raises
    ------
    ValueError
        If the targets are out of range or the solver does not converge.
    """
    func = "calibrate_logit_normal"
    pass1 = check_probability(pass1, "pass1", func)
    passk = check_probability(passk, "passk", func)
    k = check_positive_int(k, "k", func, minimum=2)
    if passk <= pass1:
        raise ValueError(
            f"The 'passk' parameter of {func} must exceed pass1 (pass@k > pass@1 for k > 1). "
            f"Got pass1={pass1}, passk={passk} instead."
        )

    def resid(v):
        m1, mk = logit_normal_moments(v[0], math.exp(v[1]), k)
        return [special.logit(m1) - special.logit(pass1), special.logit(mk) - special.logit(passk)]

    sol = optimize.root(resid, [special.logit(pass1), math.log(3.0)], method="hybr")
    if not sol.success or np.max(np.abs(resid(sol.x))) > 1e-8:
        raise ValueError(
            f"{func} did not converge for pass1={pass1}, passk={passk}, k={k}: {sol.message}"
        )
    return float(sol.x[0]), float(math.exp(sol.x[1]))


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
        raise ValueError(
            f"The rows of '{name}' in {func} must sum to 1. Row {i} sums to {s[i]!r}."
        )
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
    """log P(first_correct >= j) = log C(n-j, c) - log C(n, c), for 0 <= j <= n - c."""
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


def _answer_lists(counts, answers):
    """answer_values / answer_counts lists: non-NA classes with count > 0, sorted by count
    desc then value."""
    cnt = counts[:, :-1]
    order = np.lexsort((answers, -cnt), axis=-1)
    cnt_s = np.take_along_axis(cnt, order, axis=1)
    val_s = np.take_along_axis(answers, order, axis=1)
    values, cnts = [], []
    for cr, vr in zip(cnt_s, val_s, strict=True):
        m = cr > 0
        values.append(vr[m].tolist())
        cnts.append(cr[m].tolist())
    return values, cnts


def _summary_frame(model, benchmark, qids, step, n, counts, answers, first_correct,
                   token_stats=None):
    n_q = counts.shape[0]
    if answers is None:  # counts-only rows, as leash.summarize gives them
        values = [None] * n_q
        cnts = [None] * n_q
        missing = pd.array([None] * n_q, dtype="Int64")
    else:
        values, cnts = _answer_lists(counts, answers)
        missing = pd.array(counts[:, -1], dtype="Int64")
    nan = np.full(n_q, np.nan)
    ts = token_stats or {}
    frame = pd.DataFrame(
        {
            "model": pd.array(np.broadcast_to(np.asarray(model, dtype=object), (n_q,)),
                              dtype="string"),
            "benchmark": pd.array([benchmark] * n_q, dtype="string"),
            "question_id": pd.array(qids, dtype="string"),
            "step": pd.array([step] * n_q, dtype="Int64"),
            "n": np.broadcast_to(np.asarray(n, dtype=np.int64), (n_q,)).copy(),
            "c": counts[:, 0].astype(np.int64),
            "first_correct": pd.array(first_correct, dtype="Int64"),
            "n_answer_missing": missing,
            "answer_values": pd.Series(values, dtype=object),
            "answer_counts": pd.Series(cnts, dtype=object),
            "n_tokens_mean": ts.get("n_tokens_mean", nan),
            "n_tokens_min": ts.get("n_tokens_min", nan),
            "n_tokens_max": ts.get("n_tokens_max", nan),
            "token_entropy_mean": ts.get("token_entropy_mean", nan),
            "token_entropy_std": ts.get("token_entropy_std", nan),
            "n_truncated": missing.copy(),
            "source": pd.array([SOURCE] * n_q, dtype="string"),
        }
    )
    return frame


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


def _true_category(p_base, p_rl, eps):
    """Category codes at threshold eps: 'in support' iff p > eps (Def. 3.2)."""
    b = p_base > eps
    r = p_rl > eps
    return np.where(r, np.where(b, 0, 1), np.where(b, 2, 3))


def _truth_frame(study, base_model, base_step, model, step, benchmark, qids, n, p_base, p_rl,
                 pruned, expanded, ref, zeta):
    n_q = len(qids)
    eps = epsilon(int(n), zeta)
    codes = _true_category(p_base, p_rl, eps)
    return pd.DataFrame(
        {
            "study": pd.array([study] * n_q, dtype="string"),
            "base_model": pd.array([base_model] * n_q, dtype="string"),
            "base_step": pd.array([base_step] * n_q, dtype="Int64"),
            "model": pd.array([model] * n_q, dtype="string"),
            "step": pd.array([step] * n_q, dtype="Int64"),
            "benchmark": pd.array([benchmark] * n_q, dtype="string"),
            "question_id": pd.array(qids, dtype="string"),
            "n": np.full(n_q, int(n), dtype=np.int64),
            "p_base": np.asarray(p_base, dtype=np.float64),
            "p_rl": np.asarray(p_rl, dtype=np.float64),
            "pruned": np.asarray(pruned, dtype=bool),
            "expanded": np.asarray(expanded, dtype=bool),
            "epsilon": np.full(n_q, eps),
            "true_category": pd.array(np.asarray(CATEGORIES)[codes], dtype="string"),
            "reference_answer": pd.array(ref, dtype="string"),
            "source": pd.array([SOURCE] * n_q, dtype="string"),
        }
    )


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
        ``leash.summarize`` gives them: answer lists None, ``n_answer_missing`` and
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
        frames.append(_summary_frame(model, benchmark, qids, None, n, counts, None, fc))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------
# The study
# --------------------------------------------------------------------------------------------


def _validate_config(cfg):
    """Cross-checks of a StudyConfig, with messages that name the offending field."""
    names = [b.name for b in cfg.benchmarks]
    if len(set(names)) != len(names):
        raise ValueError(f"StudyConfig.benchmarks has duplicate names: {names}.")
    for b in cfg.benchmarks:
        if b.n_questions < 1 or b.budget < 2:
            raise ValueError(f"StudyConfig.benchmarks[{b.name!r}] needs n_questions >= 1 and "
                             f"budget >= 2. Got {b.n_questions}, {b.budget}.")
    check_positive_int(cfg.n_wrong, "n_wrong", "StudyConfig")
    check_positive_int(cfg.entropy_n, "entropy_n", "StudyConfig", minimum=2)
    check_probability(cfg.zeta, "zeta", "StudyConfig")
    if not -1.0 <= cfg.rho <= 1.0:
        raise ValueError(f"StudyConfig.rho must be in [-1, 1]. Got {cfg.rho!r}.")
    labels = set()
    for pair in cfg.pairs:
        missing = [n for n in names if n not in pair.priors]
        if missing:
            raise ValueError(f"PairSpec {pair.size!r} has no BasePrior for {missing}.")
        for tok, which in ((pair.tokens_base, "tokens_base"), (pair.tokens_rl, "tokens_rl")):
            gaps = [n for n in cfg.entropy_benchmarks
                    if n not in tok.entropy or n not in tok.length]
            if gaps:
                raise ValueError(f"PairSpec {pair.size!r}.{which} has no token entropy/length "
                                 f"level for entropy benchmarks {gaps}.")
        labels |= {pair.base_model, pair.rl_model}
    unknown = [n for n in cfg.entropy_benchmarks if n not in names]
    if unknown:
        raise ValueError(f"StudyConfig.entropy_benchmarks names unknown benchmarks {unknown}.")
    ck = cfg.checkpoints
    if ck.pair_size not in {p.size for p in cfg.pairs}:
        raise ValueError(f"CheckpointSpec.pair_size {ck.pair_size!r} is not the size of any "
                         f"pair ({[p.size for p in cfg.pairs]}).")
    if 0 not in ck.steps or min(ck.steps) < 0 or len(set(ck.steps)) != len(ck.steps):
        raise ValueError(f"CheckpointSpec.steps must be distinct, >= 0 and include 0. Got "
                         f"{ck.steps}.")
    unknown = [n for n in (*ck.benchmarks, *cfg.sft.priors) if n not in names]
    if unknown:
        raise ValueError(f"The checkpoint/SFT studies name unknown benchmarks {unknown}.")
    if not 0.0 <= cfg.sft.lam <= 1.0:
        raise ValueError(f"SFTSpec.lam must be in [0, 1]. Got {cfg.sft.lam!r}.")
    if len(cfg.gym_models) != 2:
        raise ValueError(f"StudyConfig.gym_models must be two labels. Got {cfg.gym_models!r}.")


def _qids(bench, n_q):
    return [f"{bench}-{i:04d}" for i in range(n_q)]


def simulate_study(config=None, *, rng):
    """Simulate the whole demo study.

    Parameters
    ----------
    config : StudyConfig, optional
        Default :data:`DEFAULT_CONFIG`.
    rng : numpy.random.Generator
        The only source of randomness; independent child streams are spawned per study part.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``"support"`` (the two base/RLVR pairs on all benchmarks at the paper's budgets),
        ``"entropy"`` (the same models and true distributions, n = 32 with token entropy and
        length), ``"checkpoints"`` (one RLVR run, steps with step 0 = base, n = 256),
        ``"sft"`` (base, SFT and RLVR on the same base, n = 256), ``"gym"`` (Reasoning-Gym-like
        tasks for pass@k curves) -- all in the summary schema -- and ``"truth"`` (true
        probabilities and categories, one row per question and pair).
    """
    cfg = DEFAULT_CONFIG if config is None else config
    if not isinstance(cfg, StudyConfig):
        raise TypeError(
            f"The 'config' parameter of simulate_study must be a StudyConfig or None. Got "
            f"{type(cfg).__name__} instead."
        )
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            "The 'rng' parameter of simulate_study must be a numpy.random.Generator. Got "
            f"{type(rng).__name__} instead."
        )
    _validate_config(cfg)
    r_lat, r_sup, r_ent, r_ckp, r_sft, r_gym = rng.spawn(6)
    bench_by_name = {b.name: b for b in cfg.benchmarks}

    # Latent difficulty and answer strings, shared by every model on a question.
    latent, answers = {}, {}
    for b in cfg.benchmarks:
        latent[b.name] = r_lat.standard_normal(b.n_questions)
        answers[b.name] = _answer_strings(b.n_questions, cfg.n_wrong + 1, r_lat)

    support, entropy_rows, truth = [], [], []
    dists = {}  # (size, bench) -> (q, pi, pruned, expanded, u_prune, u_expand, u_delta)
    for pair in cfg.pairs:
        for b in cfg.benchmarks:
            z = cfg.rho * latent[b.name] + math.sqrt(1 - cfg.rho**2) * r_sup.standard_normal(
                b.n_questions
            )
            prior = pair.priors[b.name]
            p = special.expit(prior.mu + prior.sigma * z)
            q = draw_answer_distribution(p, prior, cfg.n_wrong, rng=r_sup)
            u_prune = r_sup.random(q.shape)
            u_expand = r_sup.random(b.n_questions)
            u_delta = r_sup.random(b.n_questions)
            eps_b = epsilon(b.budget, cfg.zeta)
            pi, pruned, expanded = rlvr_distribution(
                q, pair.rlvr, u_prune=u_prune, u_expand=u_expand, u_delta=u_delta,
                eps_expand=eps_b,
            )
            dists[(pair.size, b.name)] = (q, pi, pruned, expanded, u_prune, u_expand, u_delta)
            qids = _qids(b.name, b.n_questions)
            ans = answers[b.name]
            for model, probs in ((pair.base_model, q), (pair.rl_model, pi)):
                counts = draw_counts(probs, b.budget, rng=r_sup)
                fc = draw_first_correct(b.budget, counts[:, 0], rng=r_sup)
                support.append(
                    _summary_frame(model, b.name, qids, None, b.budget, counts, ans, fc)
                )
            for study, n in (("support", b.budget),) + (
                (("entropy", cfg.entropy_n),) if b.name in cfg.entropy_benchmarks else ()
            ):
                truth.append(
                    _truth_frame(study, pair.base_model, None, pair.rl_model, None, b.name,
                                 qids, n, q[:, 0], pi[:, 0], pruned, expanded, ans[:, 0],
                                 cfg.zeta)
                )
            if b.name in cfg.entropy_benchmarks:
                for model, probs, tok in ((pair.base_model, q, pair.tokens_base),
                                          (pair.rl_model, pi, pair.tokens_rl)):
                    counts = draw_counts(probs, cfg.entropy_n, rng=r_ent)
                    fc = draw_first_correct(cfg.entropy_n, counts[:, 0], rng=r_ent)
                    ts = _token_stats(counts, tok, b.name, r_ent)
                    entropy_rows.append(
                        _summary_frame(model, b.name, qids, None, cfg.entropy_n, counts, ans,
                                       fc, ts)
                    )

    # Checkpoints: one run from a pair's base, common random numbers across steps.
    ck = cfg.checkpoints
    ckpt_rows = []
    s_max = max(ck.steps)
    for bname in ck.benchmarks:
        b = bench_by_name[bname]
        q, _, _, _, u_prune, u_expand, u_delta = dists[(ck.pair_size, bname)]
        qids = _qids(bname, b.n_questions)
        ans = answers[bname]
        eps_ck = epsilon(ck.budget, cfg.zeta)
        for step in ck.steps:
            if step == 0:
                pi = q
                pruned = expanded = np.zeros(b.n_questions, dtype=bool)
            else:
                pi, pruned, expanded = rlvr_distribution(
                    q, ck.rlvr.at_fraction(step / s_max), u_prune=u_prune, u_expand=u_expand,
                    u_delta=u_delta, eps_expand=eps_ck,
                )
                truth.append(
                    _truth_frame("checkpoints", ck.model, 0, ck.model, step, bname, qids,
                                 ck.budget, q[:, 0], pi[:, 0], pruned, expanded, ans[:, 0],
                                 cfg.zeta)
                )
            counts = draw_counts(pi, ck.budget, rng=r_ckp)
            fc = draw_first_correct(ck.budget, counts[:, 0], rng=r_ckp)
            ckpt_rows.append(
                _summary_frame(ck.model, bname, qids, step, ck.budget, counts, ans, fc)
            )

    # SFT vs RLVR on a separate base.
    sp = cfg.sft
    sft_rows = []
    for bname, prior in sp.priors.items():
        b = bench_by_name[bname]
        qids = _qids(bname, b.n_questions)
        ans = answers[bname]
        p = special.expit(prior.mu + prior.sigma * latent[bname])
        q = draw_answer_distribution(p, prior, cfg.n_wrong, rng=r_sft)
        teacher_logit = special.logit(np.clip(p, 1e-300, 1.0)) + sp.teacher_shift + (
            sp.teacher_sigma * r_sft.standard_normal(b.n_questions)
        )
        t = draw_answer_distribution(special.expit(teacher_logit), prior, cfg.n_wrong, rng=r_sft)
        sft = (1.0 - sp.lam) * q + sp.lam * t
        eps_s = epsilon(sp.budget, cfg.zeta)
        pi, pruned, expanded = rlvr_distribution(
            q, sp.rlvr, u_prune=r_sft.random(q.shape), u_expand=r_sft.random(b.n_questions),
            u_delta=r_sft.random(b.n_questions), eps_expand=eps_s,
        )
        no = np.zeros(b.n_questions, dtype=bool)
        for model, probs in ((sp.base_model, q), (sp.sft_model, sft), (sp.rl_model, pi)):
            counts = draw_counts(probs, sp.budget, rng=r_sft)
            fc = draw_first_correct(sp.budget, counts[:, 0], rng=r_sft)
            sft_rows.append(_summary_frame(model, bname, qids, None, sp.budget, counts, ans, fc))
        truth.append(_truth_frame("sft", sp.base_model, None, sp.sft_model, None, bname, qids,
                                  sp.budget, q[:, 0], sft[:, 0], no, no, ans[:, 0], cfg.zeta))
        truth.append(_truth_frame("sft", sp.base_model, None, sp.rl_model, None, bname, qids,
                                  sp.budget, q[:, 0], pi[:, 0], pruned, expanded, ans[:, 0],
                                  cfg.zeta))

    # Reasoning-Gym-like tasks.
    base_label, rl_label = cfg.gym_models
    gym_rows = []
    for task in cfg.gym:
        qids = _qids(task.name, task.n_questions)
        z = r_gym.standard_normal(task.n_questions)
        ans = _answer_strings(task.n_questions, cfg.n_wrong + 1, r_gym)
        p = special.expit(task.prior.mu + task.prior.sigma * z)
        q = draw_answer_distribution(p, task.prior, cfg.n_wrong, rng=r_gym)
        pi, pruned, expanded = rlvr_distribution(
            q, task.rlvr, u_prune=r_gym.random(q.shape), u_expand=r_gym.random(task.n_questions),
            u_delta=r_gym.random(task.n_questions), eps_expand=epsilon(task.budget, cfg.zeta),
        )
        for model, probs in ((base_label, q), (rl_label, pi)):
            counts = draw_counts(probs, task.budget, rng=r_gym)
            fc = draw_first_correct(task.budget, counts[:, 0], rng=r_gym)
            gym_rows.append(
                _summary_frame(model, task.name, qids, None, task.budget, counts, ans, fc)
            )
        truth.append(_truth_frame("gym", base_label, None, rl_label, None, task.name, qids,
                                  task.budget, q[:, 0], pi[:, 0], pruned, expanded, ans[:, 0],
                                  cfg.zeta))

    out = {
        "support": pd.concat(support, ignore_index=True),
        "entropy": pd.concat(entropy_rows, ignore_index=True),
        "checkpoints": pd.concat(ckpt_rows, ignore_index=True),
        "sft": pd.concat(sft_rows, ignore_index=True),
        "gym": pd.concat(gym_rows, ignore_index=True),
        "truth": pd.concat(truth, ignore_index=True),
    }
    return out


# --------------------------------------------------------------------------------------------
# Misclassification of the empirical rule
# --------------------------------------------------------------------------------------------


def misclassification_table(summary, truth, k, zeta=0.05, *, study=None, min_count=1,
                            by=("base_model", "model", "step")):
    """Confusion table of the empirical support rule against the true epsilon-support.

    The empirical category of a question at budget k uses its first k samples (the paper's
    printed reading): a model finds it iff ``0 <= first_correct < k`` (for ``k == n``, iff
    ``c >= min_count``). The true category uses the true success probabilities of ``truth``:
    "in support" iff ``p > epsilon(k, zeta)`` (Def. 3.2 with the threshold of App. C.4).

    Parameters
    ----------
    summary : pandas.DataFrame
        Summary rows (``model, benchmark, question_id, step, n, c, first_correct``) of one study.
    truth : pandas.DataFrame
        The ``truth`` frame of :func:`simulate_study` (``TRUTH_COLUMNS``).
    k : int
        Budget, ``1 <= k <= n`` for every matched row.
    zeta : float, default 0.05
    study : str, optional
        Which study of ``truth`` to use; required when truth holds more than one.
    min_count : int, default 1
        Correct samples needed to "find" a question; > 1 needs ``k == n``.
    by : sequence of str, default ("base_model", "model", "step")
        Truth columns to group by.

    Returns
    -------
    pandas.DataFrame
        One row per group and true category (all four categories), columns: the four
        empirical categories (counts), ``total``, ``misclassified`` (off-diagonal count).
    """
    func = "misclassification_table"
    k = check_positive_int(k, "k", func)
    zeta = check_probability(zeta, "zeta", func)
    min_count = check_positive_int(min_count, "min_count", func)
    missing = [col for col in TRUTH_COLUMNS if col not in truth.columns]
    if missing:
        raise ValueError(f"The 'truth' frame of {func} lacks columns {missing}.")
    need = ["model", "benchmark", "question_id", "step", "n", "c", "first_correct"]
    missing = [col for col in need if col not in summary.columns]
    if missing:
        raise ValueError(f"The 'summary' frame of {func} lacks columns {missing}.")
    studies = sorted(truth["study"].dropna().unique())
    if study is None:
        if len(studies) != 1:
            raise ValueError(
                f"The 'study' parameter of {func} is required when truth holds several "
                f"studies. Got None; truth has {studies}."
            )
        study = studies[0]
    if study not in studies:
        raise ValueError(f"The 'study' parameter of {func} must be one of {studies}. Got "
                         f"{study!r} instead.")
    bad_by = [col for col in by if col not in truth.columns]
    if bad_by:
        raise ValueError(f"The 'by' parameter of {func} names unknown truth columns {bad_by}.")
    t = truth[truth["study"] == study].copy()
    s = summary[need].copy()
    s["step"] = s["step"].astype("Int64").fillna(-1)
    s["first_correct"] = s["first_correct"].astype("Int64").fillna(-2)  # -2: not recorded
    t["_bstep"] = t["base_step"].astype("Int64").fillna(-1)
    t["_step"] = t["step"].astype("Int64").fillna(-1)
    keys = ["benchmark", "question_id"]
    sb = s.rename(columns={"model": "base_model", "step": "_bstep", "n": "n_b", "c": "c_b",
                           "first_correct": "fc_b"})
    sr = s.rename(columns={"step": "_step", "n": "n_r", "c": "c_r", "first_correct": "fc_r"})
    m = t.merge(sb, on=["base_model", "_bstep", *keys], how="inner", validate="many_to_one")
    m = m.merge(sr, on=["model", "_step", *keys], how="inner", validate="many_to_one")
    if len(m) < len(t):
        warnings.warn(
            f"{func}: {len(t) - len(m)} of {len(t)} truth rows of study {study!r} have no "
            f"matching base and RLVR rows in the summary and were left out; {len(m)} used.",
            stacklevel=2,
        )
    if len(m) == 0:
        raise ValueError(f"{func}: no truth row of study {study!r} matches the summary.")
    nmin = int(min(m["n_b"].min(), m["n_r"].min()))
    if k > nmin:
        raise ValueError(
            f"The 'k' parameter of {func} must be an int in the range [1, n]. Got k={k}, but "
            f"the smallest n is {nmin}."
        )
    no_order = ((m["fc_b"] == -2) & (m["n_b"] > k)) | ((m["fc_r"] == -2) & (m["n_r"] > k))
    if no_order.any():
        raise ValueError(
            f"{func}: k={k} is below n, which needs first_correct (the first k samples), but "
            f"{int(no_order.sum())} matched rows have first_correct NA (counts-only inputs)."
        )
    fb = found_at_budget(m["n_b"], m["c_b"], m["fc_b"], k, min_count=min_count, where=func)
    fr = found_at_budget(m["n_r"], m["c_r"], m["fc_r"], k, min_count=min_count, where=func)
    emp = _codes(fb, fr)
    true = _true_category(m["p_base"].to_numpy(), m["p_rl"].to_numpy(), epsilon(k, zeta))
    # Every observed group (NA steps included) x 4 true x 4 empirical categories, by codes.
    if by:
        gid = m.groupby(list(by), dropna=False, sort=True).ngroup().to_numpy()
        first = pd.Series(np.arange(len(m))).groupby(gid).first().to_numpy()
        group_rows = m[list(by)].iloc[first].reset_index(drop=True)
    else:
        gid = np.zeros(len(m), dtype=np.int64)
        group_rows = pd.DataFrame(index=range(1))
    n_groups = len(group_rows)
    cube = np.bincount(gid * 16 + true * 4 + emp, minlength=n_groups * 16).reshape(-1, 4)
    index = group_rows.loc[np.repeat(np.arange(n_groups), 4)].reset_index(drop=True)
    index["true_category"] = pd.Categorical(np.tile(list(CATEGORIES), n_groups),
                                            dtype=CATEGORY_DTYPE)
    tab = pd.DataFrame(cube, columns=list(CATEGORIES),
                       index=pd.MultiIndex.from_frame(index))
    tab["total"] = cube.sum(axis=1)
    tab["misclassified"] = tab["total"] - cube[np.arange(len(cube)), np.tile(np.arange(4),
                                                                              n_groups)]
    return tab


# --------------------------------------------------------------------------------------------
# Writing and reading the demo
# --------------------------------------------------------------------------------------------



# ---------------------------------------------------------------------------------------------
# Table 2: log-probabilities of external reference traces (SIMULATED)
# ---------------------------------------------------------------------------------------------


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


def demo_dir():
    """``data/demo/`` of the repository (computed relative to this file)."""
    return Path(__file__).resolve().parents[2] / "data" / "demo"


_TRUTH_SCHEMA = pa.schema([
    pa.field(c, {"string": pa.string(), "Int64": pa.int64(), "int64": pa.int64(),
                 "float64": pa.float64(), "bool": pa.bool_()}[d])
    for c, d in TRUTH_COLUMNS.items()
])
_DEMO_SUMMARY_SCHEMA = SUMMARY_SCHEMA.append(pa.field("source", pa.string()))


def _to_arrow(frame, name, seed, cfg):
    """Arrow table with an explicit schema and no pandas metadata (so that the bytes depend on
    the data and the pyarrow version only)."""
    schema = _TRUTH_SCHEMA if name == "truth" else _DEMO_SUMMARY_SCHEMA
    cols = {}
    for f in schema:
        s = frame[f.name]
        if pa.types.is_list(f.type):
            cols[f.name] = pa.array([None if v is None else list(v) for v in s], type=f.type)
        else:
            cols[f.name] = pa.array(s.astype(object).where(s.notna(), None).tolist(),
                                    type=f.type)
    table = pa.table(cols, schema=schema)
    notice = "SIMULATED data from leash.simulate; not the paper's data, not model generations."
    meta = {
        b"source": SOURCE.encode(),
        b"leash.simulate": json.dumps(
            {"source": SOURCE, "notice": notice, "frame": name, "seed": seed,
             "config": cfg.to_dict()}, sort_keys=True).encode(),
    }
    if name != "truth":
        # Makes the file a leash summary for leash.summarize.read_summary / load_counts; the
        # provenance there says "simulated".
        meta[SUMMARY_METADATA_KEY] = json.dumps(
            {"source": SOURCE, "notice": notice, "generator": "leash.simulate.write_demo",
             "frame": name, "seed": seed}, sort_keys=True).encode()
    return table.replace_schema_metadata(meta)


def write_demo(out_dir=None, seed=DEMO_SEED, *, config=None):
    """Generate the demo with a fixed seed and write one Parquet file per frame.

    A file already there is left in place when it holds the same frame (same metadata, floats
    within 1e-12, everything else exact; :mod:`leash.compare`), so regenerating on another CPU,
    whose ``exp``/``log`` differ in the last bits, leaves the committed demo untouched.

    Parameters
    ----------
    out_dir : str or Path, optional
        Default :func:`demo_dir`. Created if missing.
    seed : int, default DEMO_SEED
        Seed of ``numpy.random.default_rng``.
    config : StudyConfig, optional
        Default :data:`DEFAULT_CONFIG`.

    Returns
    -------
    dict of str to Path
        The files (written or kept), keyed by frame name (``DEMO_FILES``).
    """
    import pyarrow.parquet as pq

    cfg = DEFAULT_CONFIG if config is None else config
    out = Path(out_dir) if out_dir is not None else demo_dir()
    out.mkdir(parents=True, exist_ok=True)
    frames = simulate_study(cfg, rng=np.random.default_rng(seed))
    paths = {}
    for name in DEMO_FILES:
        path = out / f"{name}.parquet"
        table = _to_arrow(frames[name], name, seed, cfg)
        if not _same_content(path, table, name):
            # Deterministic: fixed compression, no statistics timestamps (Parquet has none),
            # one row group.
            pq.write_table(table, path, compression="zstd", compression_level=9,
                           row_group_size=len(frames[name]) + 1)
        paths[name] = path
    return paths


def _same_content(path: Path, table: pa.Table, name: str) -> bool:
    """Whether the Parquet file at ``path`` holds ``table`` under leash.compare's rule."""
    import pyarrow.parquet as pq

    if not path.is_file():
        return False
    try:
        old = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return False
    return (old.schema == table.schema and old.schema.metadata == table.schema.metadata
            and not frame_differences(_frame(old, name), _frame(table, name)))


def _restore_dtypes(frame, columns):
    out = frame.copy()
    for col, dtype in columns.items():
        if col == "answer_values":
            out[col] = [None if v is None else [str(x) for x in v] for v in out[col]]
        elif col == "answer_counts":
            out[col] = [None if v is None else [int(x) for x in v] for v in out[col]]
        else:
            out[col] = out[col].astype(dtype)
    return out


def _frame(table: pa.Table, name: str) -> pd.DataFrame:
    """A demo frame from its Arrow table, with the schema dtypes restored."""
    cols = TRUTH_COLUMNS if name == "truth" else SUMMARY_COLUMNS
    return _restore_dtypes(table.to_pandas(), cols)[list(cols)]


def read_demo(directory=None):
    """Read the demo frames written by :func:`write_demo`, with the schema dtypes restored.

    Parameters
    ----------
    directory : str or Path, optional
        Default :func:`demo_dir`.

    Returns
    -------
    dict of str to pandas.DataFrame
        Keyed by ``DEMO_FILES``; list columns hold Python lists.

    Raises
    ------
    ValueError
        If a file is missing or is not labelled ``source = simulated``.
    """
    import pyarrow.parquet as pq

    d = Path(directory) if directory is not None else demo_dir()
    out = {}
    for name in DEMO_FILES:
        path = d / f"{name}.parquet"
        if not path.is_file():
            raise ValueError(f"read_demo: missing demo file {path.name} in {d}.")
        table = pq.read_table(path)
        meta = table.schema.metadata or {}
        if meta.get(b"source") != SOURCE.encode():
            raise ValueError(
                f"read_demo: {path.name} is not labelled source=simulated in its metadata."
            )
        out[name] = _frame(table, name)
    return out


def main_simulate(argv=None):
    """``leash simulate``: regenerate (or check) the simulated demo files.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 1 when ``--check`` finds a difference, 2 for bad arguments
        or an unreadable/unwritable folder (one line on stderr, no traceback).
    """
    parser = OneLineParser(
        prog="leash simulate",
        description="Write the SIMULATED demo data set (not the paper's data): "
                    f"{', '.join(DEMO_FILES)} as Parquet files in --out, drawn from an explicit "
                    "model of the RLVR update with known true probabilities (see data/demo/"
                    "README.md). With --check, write nothing: regenerate in memory and compare "
                    "with the files in --out (exit status 1 and one line per differing file).",
        epilog="examples:\n"
               "  leash simulate --check              # is data/demo/ what the code makes?\n"
               "  leash simulate                      # rewrite data/demo/\n"
               "  leash simulate --out my-demo --seed 7\n",
    )
    parser.add_argument("--out", default=None, help="output folder (default: data/demo/ of the "
                        "repository)")
    parser.add_argument("--seed", type=non_negative_int, default=DEMO_SEED,
                        help="random seed, an integer >= 0 (default: %(default)s, the committed "
                             "demo's)")
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory and compare with the files in --out (floats "
                             "within 1e-12, everything else exact)")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out is not None else demo_dir()
    try:
        if args.check:
            if not out.is_dir():
                raise ValueError(f"--out {args.out}: no such folder")
            on_disk = read_demo(out)
            fresh = simulate_study(rng=np.random.default_rng(args.seed))
            bad = {n: frame_differences(on_disk[n], fresh[n]) for n in DEMO_FILES}
            bad = {n: d for n, d in bad.items() if d}
            for n, diffs in bad.items():
                print(f"leash simulate --check: {n}.parquet differs from a fresh regeneration: "
                      f"{'; '.join(diffs)}", file=sys.stderr)
            return 1 if bad else 0
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {args.out}: not a folder")
        paths = write_demo(out, args.seed)
    except (ValueError, OSError) as exc:
        print(f"leash simulate: {exc}", file=sys.stderr)
        return 2
    for p in paths.values():
        print(f"{p} ({p.stat().st_size} bytes) [SIMULATED]", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------------------
# The demo configuration
# --------------------------------------------------------------------------------------------

# (mu, sigma) = calibrate_logit_normal(*CALIBRATION_TARGETS[key]), rounded to 2 decimals
# (tests/test_simulate.py recomputes them). Hard-coded rather than solved at run time so that
# the demo does not depend on the root finder's last bits.
_PRIOR_MU_SIGMA = {
    ("1.5B", "AIME2024"): (-2.43, 4.62),
    ("1.5B", "AIME2025"): (-4.53, 5.87),
    ("1.5B", "AMC23"): (3.10, 4.79),
    ("1.5B", "MATH500"): (6.41, 5.92),
    ("1.5B", "Minerva"): (-4.31, 9.14),
    ("1.5B", "OlympiadBench"): (0.27, 6.66),
    ("1.5B", "SimpleQA"): (-14.63, 8.71),
    ("1.5B", "LiveBench-R"): (0.00, 2.98),
    ("1.5B", "LiveBench-C"): (-5.58, 8.08),
    ("1.5B", "LiveBench-L"): (-14.96, 10.49),
    ("1.5B", "SciBench"): (-0.63, 4.69),
    ("7B", "AIME2024"): (0.56, 6.66),
    ("7B", "AIME2025"): (-0.92, 3.17),
    ("7B", "AMC23"): (9.23, 7.21),
    ("7B", "MATH500"): (11.63, 7.28),
    ("7B", "Minerva"): (-2.28, 12.86),
    ("7B", "OlympiadBench"): (3.20, 7.20),
    ("7B", "SimpleQA"): (-10.56, 8.04),
    ("7B", "LiveBench-R"): (0.96, 3.37),
    ("7B", "LiveBench-C"): (-1.59, 6.01),
    ("7B", "LiveBench-L"): (-16.39, 11.53),
    ("7B", "SciBench"): (0.71, 5.38),
    ("math-7B", "AIME2024"): (-4.88, 3.36),
    ("math-7B", "AIME2025"): (-6.09, 3.23),
    ("math-7B", "AMC23"): (-0.64, 1.85),
    ("math-7B", "MATH500"): (1.06, 3.81),
    ("math-7B", "Minerva"): (-4.39, 4.90),
    ("math-7B", "OlympiadBench"): (-2.90, 3.92),
}

_MATH = ("AIME2024", "AIME2025", "AMC23", "MATH500", "Minerva", "OlympiadBench")


def _tokens(entropy, length, scale=0.7):
    """Token model from Table 5 rows (AIME2024, AMC23, MATH500, Minerva, Olympiad); AIME2025 (not
    in Table 5) copies AIME2024. The median length of answered samples is ``scale`` times the
    printed mean length (the printed mean also contains truncated samples)."""
    e = dict(zip(("AIME2024", "AMC23", "MATH500", "Minerva", "OlympiadBench"), entropy,
                 strict=True))
    n = dict(zip(("AIME2024", "AMC23", "MATH500", "Minerva", "OlympiadBench"), length,
                 strict=True))
    e["AIME2025"], n["AIME2025"] = e["AIME2024"], n["AIME2024"]
    return TokenModel(entropy=e, length={b: scale * v for b, v in n.items()})


def _build_default_config():
    names = [b.name for b in BENCHMARKS]
    # NA (truncated) share of the incorrect mass: long-thinking small models truncate more.
    na15 = {b: (0.30 if b in _MATH else 0.10) for b in names}
    na7 = {b: (0.20 if b in _MATH else 0.08) for b in names}
    pair15 = PairSpec(
        size="1.5B",
        base_model="demo-base-1.5B",
        rl_model="demo-rlvr-1.5B",
        priors={b: _prior("1.5B", b, na15[b]) for b in names},
        rlvr=RLVRModel(beta=1.5, sharpen=1.5, tau=2e-3, p_prune=0.4, p_expand=0.03),
        tokens_base=_tokens((0.45, 0.40, 0.42, 0.49, 0.44), (16363, 9979, 5700, 8194, 11873)),
        tokens_rl=_tokens((0.47, 0.51, 0.54, 0.55, 0.52), (7786, 6294, 5070, 6569, 6678)),
    )
    pair7 = PairSpec(
        size="7B",
        base_model="demo-base-7B",
        rl_model="demo-rlvr-7B",
        priors={b: _prior("7B", b, na7[b]) for b in names},
        rlvr=RLVRModel(beta=1.0, sharpen=1.5, tau=1e-3, p_prune=0.2, p_expand=0.02),
        tokens_base=_tokens((0.38, 0.34, 0.35, 0.39, 0.38), (13613, 6402, 4125, 5595, 8988)),
        tokens_rl=_tokens((0.18, 0.23, 0.27, 0.24, 0.23), (10740, 5961, 4313, 6261, 7703)),
    )
    checkpoints = CheckpointSpec(
        pair_size="1.5B",
        model="demo-dapo-1.5B",
        steps=(0, 50, 100, 150, 200, 250, 300),
        budget=256,
        benchmarks=_MATH,
        rlvr=RLVRModel(beta=1.0, sharpen=1.3, tau=2e-2, p_prune=0.6, p_expand=0.05),
    )
    sft = SFTSpec(
        base_model="demo-base-math-7B",
        sft_model="demo-sft-math-7B",
        rl_model="demo-rlvr-math-7B",
        budget=256,
        priors={b: _prior("math-7B", b, 0.10) for b in _MATH},
        lam=0.3,
        teacher_shift=1.0,
        teacher_sigma=1.5,
        rlvr=RLVRModel(beta=1.0, sharpen=1.3, tau=2e-2, p_prune=0.5, p_expand=0.05),
    )
    g = GymTask
    gym = (
        g("graph_color", 100, 1024, BasePrior(-3.0, 2.5), RLVRModel(beta=4.0), "preservation"),
        g("palindrome_generation", 100, 1024, BasePrior(-2.0, 2.0), RLVRModel(beta=4.0),
          "preservation"),
        g("arc_1d", 100, 2048, BasePrior(-9.0, 3.0), RLVRModel(beta=2.0, p_expand=0.3),
          "expansion"),
        g("boxnet", 100, 4096, BasePrior(-10.0, 3.0), RLVRModel(beta=2.0, p_expand=0.3),
          "expansion"),
        g("graph_color_vertex20", 100, 16384, BasePrior(-12.0, 2.0),
          RLVRModel(beta=6.0, p_expand=0.9, delta_low=1e-3, delta_high=1e-2), "expansion"),
        g("family_relationships", 50, 1024, BasePrior(-2.0, 2.5),
          RLVRModel(beta=3.0, tau=5e-2, p_prune=0.9), "shrinkage"),
        g("leg_counting", 50, 1024, BasePrior(-4.0, 3.0),
          RLVRModel(beta=3.0, tau=3e-2, p_prune=0.9), "shrinkage"),
        g("power_function", 101, 1024, BasePrior(-0.5, 3.0),
          RLVRModel(beta=2.0, tau=5e-2, p_prune=0.9), "shrinkage"),
    )
    return StudyConfig(
        benchmarks=BENCHMARKS,
        pairs=(pair15, pair7),
        checkpoints=checkpoints,
        sft=sft,
        gym_models=("demo-base-1.5B", "demo-rlvr-1.5B"),
        gym=gym,
    )


DEFAULT_CONFIG = _build_default_config()
"""The demo's configuration (documented parameter by parameter in data/demo/README.md)."""


if __name__ == "__main__":  # python -m leash.simulate [--out DIR] [--seed N] [--check]
    sys.exit(main_simulate())
