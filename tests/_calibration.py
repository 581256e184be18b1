"""Calibration of the demo's logit-normal priors (only the tests run it).

The priors of ``data/demo/config.yaml`` give ``(mu, sigma)`` rounded to 2 decimals and the
targets they were solved from (``target_pass1``, ``target_passk`` at the study's budget).
:func:`calibrate_logit_normal` solves for ``(mu, sigma)`` again, so that a test can check the
committed numbers against their documented origin. The simulator reads mu and sigma only, so
that the demo does not depend on a root finder's last bits.
"""

import math

import numpy as np
import yaml
from scipy import optimize, special

from leash.core._validation import check_positive_int, check_probability
from leash_eval.demo import config_path

# Probabilists' Gauss-Hermite rule for E[f(Z)], Z ~ N(0, 1); 201 nodes are exact to ~1e-12 for
# the smooth integrands below.
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(201)
_GH_W = _GH_W / _GH_W.sum()


def logit_normal_moments(mu, sigma, k):
    """``E[p]`` and ``E[1 - (1 - p)^k]`` for ``p = expit(mu + sigma Z)``, Z ~ N(0, 1).

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
        Expected pass@1 and pass@k, by Gauss-Hermite quadrature (201 nodes).
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
    """The logit-normal prior ``(mu, sigma)`` with a given expected pass@1 and pass@k.

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


def calibration_targets(path=None):
    """Every calibrated prior of a configuration file: ``{where: (mu, sigma, pass1, passk, k)}``.

    ``where`` is ``"pairs[<size>].<benchmark>"`` (k = the benchmark's budget) or
    ``"sft.<benchmark>"`` (k = the SFT study's budget); priors without targets are skipped.
    """
    raw = yaml.safe_load((path or config_path()).read_text(encoding="utf-8"))
    studies = [(f"pairs[{p['size']}]", p["priors"], None) for p in raw["pairs"]]
    studies.append(("sft", raw["sft"]["priors"], raw["sft"]["budget"]))
    out = {}
    for label, priors, budget in studies:
        for bench, p in priors.items():
            if "target_pass1" in p:
                k = budget or raw["benchmarks"][bench]["budget"]
                out[f"{label}.{bench}"] = (p["mu"], p["sigma"], p["target_pass1"],
                                           p["target_passk"], k)
    return out
