"""The SIMULATED demo's generator (``leash simulate``): its configuration, its draw, its files.

:mod:`leash.sources.simulate` is the model the demo is drawn from and :mod:`leash.sources.demo`
reads the files; this module holds what only ``leash simulate`` needs: the configuration file
``data/demo/config.yaml`` (:func:`load_config`, checked against :data:`CONFIG_SCHEMA`), the draw
of every frame of the demo from the model (:func:`simulate_study`), and writing one Parquet file
per frame, deterministically (:func:`write_demo`, :func:`write_frames`). The files are
per-question summaries (:mod:`leash.summary`) labelled ``source = simulated``;
``data/demo/README.md`` documents the model and every parameter.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

from leash import config as C
from leash.analysis.compare import frame_differences
from leash.core.support import epsilon
from leash.paths import shown
from leash.sources import demo
from leash.sources.demo import DEMO_FILES, frame_from_table
from leash.sources.simulate import (
    BasePrior,
    RLVRModel,
    TokenModel,
    draw_answer_distribution,
    draw_counts,
    draw_first_correct,
    rlvr_distribution,
)
from leash.summary import SUMMARY_METADATA_KEY, summary_schema
from leash.writing import replacing_folder

__all__ = ["CONFIG_SCHEMA", "check_config", "config_path", "config_record", "load_config",
           "simulate_study", "write_demo", "write_frames"]


def config_path() -> Path:
    """``data/demo/config.yaml``: the configuration the committed demo was drawn from."""
    return demo.demo_dir() / "config.yaml"


# --------------------------------------------------------------------------------------------
# The configuration file
# --------------------------------------------------------------------------------------------


def _number(what, ok=lambda v: True):
    return C.Value(what, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                   and math.isfinite(v) and ok(v))


def _int(minimum):
    return C.Value(f"an int >= {minimum}",
                   lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= minimum)


def _choice(*choices):
    return C.Value(f"one of {', '.join(choices)}", lambda v: v in choices, choices=choices)


_NAME = C.Value("a non-empty string", lambda v: isinstance(v, str) and v.strip() != "")
_NAMES = C.ListOf(_NAME, what="a list of names", min_len=1)
_REAL, _POS = _number("a number"), _number("a number > 0", lambda v: v > 0)
_NONNEG = _number("a number >= 0", lambda v: v >= 0)
_UNIT = _number("a number in [0, 1]", lambda v: 0 <= v <= 1)
_OPEN = _number("a number in (0, 1)", lambda v: 0 < v < 1)
_PRIOR = C.Fields({"mu": _REAL, "sigma": _POS, "na_mean": _OPEN, "na_concentration": _POS,
                   "wrong_alpha": _POS, "target_pass1": _OPEN, "target_passk": _OPEN},
                  required=("mu", "sigma", "na_mean"))
_PRIORS = C.MapOf(_NAME, _PRIOR, what="a mapping benchmark: prior")
_RLVR = C.Fields({"beta": _NONNEG, "sharpen": _number("a number >= 1", lambda v: v >= 1),
                  "tau": _UNIT, "p_prune": _UNIT, "p_expand": _UNIT, "eps_expand": _UNIT,
                  "delta_low": _OPEN, "delta_high": _OPEN}, required=("beta",))
_PER_BENCH = C.MapOf(_NAME, _POS, what="a mapping benchmark: number")
_TOKENS = C.Fields({"entropy": _PER_BENCH, "mean_length": _PER_BENCH, "entropy_log_sd": _NONNEG,
                    "length_log_sd": _NONNEG, "max_tokens": _int(2)},
                   required=("entropy", "mean_length"))
_MODELS = ("base_model", "rl_model")
CONFIG_SCHEMA = C.Fields({
    "n_wrong": _int(1), "rho": _number("a number in [-1, 1]", lambda v: -1 <= v <= 1),
    "zeta": _OPEN, "entropy_n": _int(2), "entropy_benchmarks": _NAMES, "token_length_scale": _POS,
    "benchmarks": C.MapOf(_NAME, C.Fields(
        {"domain": _choice("math", "non-math"), "n_questions": _int(1), "budget": _int(2)},
        required=("domain", "n_questions", "budget"))),
    "pairs": C.ListOf(C.Fields(
        {"size": _NAME, **dict.fromkeys(_MODELS, _NAME), "priors": _PRIORS, "rlvr": _RLVR,
         "tokens_base": _TOKENS, "tokens_rl": _TOKENS},
        required=("size", *_MODELS, "priors", "rlvr", "tokens_base", "tokens_rl")), min_len=1),
    "checkpoints": C.Fields(
        {"pair_size": _NAME, "model": _NAME, "steps": C.ListOf(_int(0), min_len=1),
         "budget": _int(2), "benchmarks": _NAMES, "rlvr": _RLVR},
        required=("pair_size", "model", "steps", "budget", "benchmarks", "rlvr")),
    "sft": C.Fields(
        {**dict.fromkeys(("base_model", "sft_model", "rl_model"), _NAME), "budget": _int(2),
         "priors": _PRIORS, "lam": _UNIT, "teacher_shift": _REAL, "teacher_sigma": _NONNEG,
         "rlvr": _RLVR},
        required=("base_model", "sft_model", "rl_model", "budget", "priors", "lam",
                  "teacher_shift", "teacher_sigma", "rlvr")),
    "gym_models": C.ListOf(_NAME, what="a list of two model labels (base, RLVR)", min_len=2),
    "gym": C.MapOf(_NAME, C.Fields(
        {"n_questions": _int(1), "budget": _int(2), "prior": _PRIOR, "rlvr": _RLVR,
         "pattern": _choice("preservation", "expansion", "shrinkage")},
        required=("n_questions", "budget", "prior", "rlvr", "pattern"))),
}, required=("n_wrong", "rho", "zeta", "entropy_n", "entropy_benchmarks", "token_length_scale",
             "benchmarks", "pairs", "checkpoints", "sft", "gym_models", "gym"))
"""Schema of a configuration file (:mod:`leash.config` nodes), checked by :func:`load_config`."""


def _floats(d, skip=()):
    """The given (non-null) numbers of a mapping as floats, without the keys in ``skip``."""
    return {k: float(v) for k, v in d.items() if v is not None and k not in skip}


def _build(raw):
    """Plain data for :func:`simulate_study`, from a checked file's values.

    Benchmarks and gym tasks become lists of mappings with a ``name``, numbers of the model's
    parameters floats, a token model's ``mean_length`` the median ``length`` (times
    ``token_length_scale``); the priors' ``target_*`` keys (documentation) are dropped.
    """
    scale = raw["token_length_scale"]

    def priors(d):
        return {b: _floats(p, ("target_pass1", "target_passk")) for b, p in d["priors"].items()}

    def tokens(d):
        out = {"entropy": _floats(d["entropy"]),
               "length": {b: scale * v for b, v in d["mean_length"].items()},
               **_floats(d, ("entropy", "mean_length", "max_tokens"))}
        if d.get("max_tokens") is not None:
            out["max_tokens"] = d["max_tokens"]
        return out

    sft, ck = raw["sft"], raw["checkpoints"]
    return {
        "benchmarks": [{"name": n, **b} for n, b in raw["benchmarks"].items()],
        "pairs": [{**p, "priors": priors(p), "rlvr": _floats(p["rlvr"]),
                   "tokens_base": tokens(p["tokens_base"]), "tokens_rl": tokens(p["tokens_rl"])}
                  for p in raw["pairs"]],
        "checkpoints": {**ck, "rlvr": _floats(ck["rlvr"])},
        "sft": {**sft, "priors": priors(sft), "rlvr": _floats(sft["rlvr"]),
                **_floats({k: sft[k] for k in ("lam", "teacher_shift", "teacher_sigma")})},
        "gym_models": list(raw["gym_models"]),
        "gym": [{"name": n, **g, "prior": _floats(g["prior"]), "rlvr": _floats(g["rlvr"])}
                for n, g in raw["gym"].items()],
        "n_wrong": raw["n_wrong"], "rho": float(raw["rho"]), "entropy_n": raw["entropy_n"],
        "entropy_benchmarks": list(raw["entropy_benchmarks"]), "zeta": float(raw["zeta"]),
    }


def load_config(path=None):
    """Read and check a configuration file of the simulator.

    Parameters
    ----------
    path : str or Path, optional
        A YAML file laid out like ``data/demo/config.yaml`` (default: that file, the committed
        demo's configuration).

    Returns
    -------
    dict
        Plain data (mappings, lists, numbers, strings) that
        :func:`simulate_study` takes; a new object on every call.

    Raises
    ------
    ValueError
        One line naming the file, the line, the key path and the bad value (a
        ``leash.config.ConfigError``), or the missing file.
    """
    p = Path(path) if path is not None else config_path()
    where = f"simulation config {shown(p)}"
    C.not_a_file(p, where)  # a device (/dev/zero), a FIFO, a folder: named as such
    if not p.is_file():
        raise ValueError(f"{where}: no such file.")
    raw, lines = C.load_yaml(p, where, kind="simulation config")
    C.check(raw, CONFIG_SCHEMA, where=where, lines=lines)
    cfg = _build(raw)
    check_config(cfg, where)
    return cfg


def check_config(cfg, where):
    """Raise ValueError, naming ``where`` and the key path, where ``cfg`` contradicts itself.

    The checks the schema cannot express: every name a study uses is a benchmark, every pair
    has a prior per benchmark and token levels per entropy benchmark, and so on.
    """
    names = [b["name"] for b in cfg["benchmarks"]]
    sizes = [p["size"] for p in cfg["pairs"]]

    def unknown(path, given):
        if bad := [n for n in given if n not in names]:
            raise ValueError(f"{where}: `{path}` names unknown benchmarks {bad}; known: {names}.")

    if len(set(names)) != len(names) or len(set(sizes)) != len(sizes):
        raise ValueError(f"{where}: duplicate benchmark names {names} or pair sizes {sizes}.")
    unknown("entropy_benchmarks", cfg["entropy_benchmarks"])
    for i, pair in enumerate(cfg["pairs"]):
        if missing := [n for n in names if n not in pair["priors"]]:
            raise ValueError(f"{where}: `pairs[{i}].priors` has no prior for {missing}.")
        for which in ("tokens_base", "tokens_rl"):
            tok = pair[which]
            if gaps := [n for n in cfg["entropy_benchmarks"]
                        if n not in tok["entropy"] or n not in tok["length"]]:
                raise ValueError(f"{where}: `pairs[{i}].{which}` has no token entropy/length "
                                 f"level for entropy benchmarks {gaps}.")
    ck = cfg["checkpoints"]
    if ck["pair_size"] not in sizes:
        raise ValueError(f"{where}: `checkpoints.pair_size` {ck['pair_size']!r} is not the size "
                         f"of any pair ({sizes}).")
    if 0 not in ck["steps"] or min(ck["steps"]) < 0 or len(set(ck["steps"])) != len(ck["steps"]):
        raise ValueError(f"{where}: `checkpoints.steps` must be distinct, >= 0 and include 0. "
                         f"Got {ck['steps']}.")
    unknown("checkpoints.benchmarks", ck["benchmarks"])
    unknown("sft.priors", cfg["sft"]["priors"])
    if len(cfg["gym_models"]) != 2:
        raise ValueError(f"{where}: `gym_models` must be two labels. Got {cfg['gym_models']!r}.")


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
        A configuration as :func:`load_config` returns it; default the demo's
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
    cfg = load_config() if config is None else config
    keys = ("benchmarks", "pairs", "checkpoints", "sft", "gym_models", "gym", "n_wrong", "rho",
            "entropy_n", "entropy_benchmarks", "zeta")
    if not isinstance(cfg, Mapping) or (lacks := [k for k in keys if k not in cfg]):
        got = f"a mapping without {lacks}" if isinstance(cfg, Mapping) else type(cfg).__name__
        raise TypeError("The 'config' parameter of simulate_study must be a configuration "
                        f"from leash_eval.demo.load_config or None. Got {got} instead.")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("The 'rng' parameter of simulate_study must be a numpy.random.Generator. "
                        f"Got {type(rng).__name__} instead.")
    check_config(cfg, "the 'config' parameter of simulate_study")
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
# The files
# --------------------------------------------------------------------------------------------
def _to_arrow(frame, name, seed, config):
    """Arrow table with an explicit schema and no pandas metadata (so that the bytes depend on
    the data and the pyarrow version only).
    """
    import pyarrow as pa

    if name == "truth":
        types = {"string": pa.string(), "Int64": pa.int64(), "int64": pa.int64(),
                 "float64": pa.float64(), "bool": pa.bool_()}
        schema = pa.schema([pa.field(c, types[d]) for c, d in demo.TRUTH_COLUMNS.items()])
    else:
        schema = summary_schema().append(pa.field("source", pa.string()))
    cols = {}
    for f in schema:
        s = frame[f.name]
        if pa.types.is_list(f.type):
            cols[f.name] = pa.array([None if v is None else list(v) for v in s], type=f.type)
        else:
            cols[f.name] = pa.array(s.astype(object).where(s.notna(), None).tolist(),
                                    type=f.type)
    table = pa.table(cols, schema=schema)
    notice = ("SIMULATED data from leash.sources.simulate; not the paper's data, not model "
              "generations.")
    meta = {
        b"source": demo.SOURCE.encode(),
        b"leash.sources.simulate": json.dumps(
            {"source": demo.SOURCE, "notice": notice, "frame": name, "seed": seed,
             "config": config}, sort_keys=True).encode(),
    }
    if name != "truth":
        # Makes the file a leash summary for leash_eval.summarize.read_summary / load_counts; the
        # provenance there says "simulated".
        meta[SUMMARY_METADATA_KEY] = json.dumps(
            {"source": demo.SOURCE, "notice": notice, "generator": "leash_eval.demo.write_demo",
             "frame": name, "seed": seed}, sort_keys=True).encode()
    return table.replace_schema_metadata(meta)


def _same_content(path: Path, table, name: str) -> bool:
    """Whether the Parquet file at ``path`` holds ``table`` under leash.analysis.compare's rule."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        return False
    try:
        old = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return False
    return (old.schema == table.schema and old.schema.metadata == table.schema.metadata
            and not frame_differences(frame_from_table(old, name), frame_from_table(table, name)))


def write_frames(frames, out_dir=None, *, seed, config):
    """Write the demo frames as Parquet files, one per frame, deterministically.

    A file already there is left in place when it holds the same frame (same metadata, floats
    within 1e-12, everything else exact; :mod:`leash.analysis.compare`), so regenerating on another
    CPU,
    whose ``exp``/``log`` differ in the last bits, leaves the committed demo untouched.

    Parameters
    ----------
    frames : dict of str to pandas.DataFrame
        Keyed by ``leash.sources.demo.DEMO_FILES`` (:func:`simulate_study`).
    out_dir : str or Path, optional
        Default :func:`leash.sources.demo.demo_dir`. Created if missing.
    seed : int
        The seed the frames were drawn with (recorded in the metadata).
    config : dict
        The full configuration they were drawn from, JSON-serializable (recorded too).

    Returns
    -------
    dict of str to Path
        The files (written or kept), keyed by frame name.
    """
    import pyarrow.parquet as pq

    out = Path(out_dir) if out_dir is not None else demo.demo_dir()
    paths = {}
    # Whole or not at all: every file is written into a folder beside ``out`` first, which
    # becomes ``out`` (or whose files move into it) only once all are written.
    with replacing_folder(out) as tmp:
        for name in demo.DEMO_FILES:
            path = out / f"{name}.parquet"
            table = _to_arrow(frames[name], name, seed, config)
            if not _same_content(path, table, name):
                # Deterministic: fixed compression, no statistics timestamps (Parquet has none),
                # one row group.
                pq.write_table(table, tmp / path.name, compression="zstd", compression_level=9,
                               row_group_size=len(frames[name]) + 1)
            paths[name] = path
    return paths


def write_demo(out_dir=None, seed=demo.DEMO_SEED, *, config=None):
    """Generate the demo with a fixed seed and write one Parquet file per frame.

    Files that already hold the same frame are left in place
    (:func:`write_frames`).

    Parameters
    ----------
    out_dir : str or Path, optional
        Default ``data/demo/`` (:func:`leash.sources.demo.demo_dir`). Created if missing.
    seed : int, default DEMO_SEED
        Seed of ``numpy.random.default_rng``.
    config : dict, optional
        A configuration from :func:`load_config`; default the demo's.

    Returns
    -------
    dict of str to Path
        The files (written or kept), keyed by frame name (``DEMO_FILES``).
    """
    cfg = load_config() if config is None else config
    frames = simulate_study(cfg, rng=np.random.default_rng(seed))
    return write_frames(frames, out_dir, seed=seed, config=config_record(cfg))
