"""The SIMULATED demo data set of ``data/demo/`` as data: its configuration, frames and files.

:mod:`leash.sources.simulate` draws the demo (the generative model); this module holds what does not
need the model, so that a study file can use a demo part (:mod:`leash.sources.study`) without
loading
the simulator: the configuration file ``data/demo/config.yaml`` (:func:`load_config`, checked
against :data:`CONFIG_SCHEMA`), the columns of the frames and their constructors, writing and
reading the Parquet files. Every frame carries ``source = "simulated"`` and every
file the key-value metadata ``source = simulated``; ``data/demo/README.md`` documents it all.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from leash import config as C
from leash.core.support import CATEGORIES, epsilon
from leash.paths import REPO, shown

__all__ = ["simulated_label", "SOURCE", "DEMO_SEED", "DEMO_FILES", "SUMMARY_COLUMNS",
           "TRUTH_COLUMNS",
           "CONFIG_SCHEMA", "demo_dir", "config_path", "load_config", "check_config",
           "summary_frame", "truth_frame", "true_category_codes", "frame_from_table", "read_demo"]

SOURCE = "simulated"
"""Value of the ``source`` column and of the Parquet metadata key ``source``."""

DEMO_SEED = 2507_14843
"""Seed of the committed demo (the paper's arXiv number)."""

DEMO_FILES = ("support", "entropy", "checkpoints", "sft", "gym", "truth")
"""The frames of :func:`leash.sources.simulate.simulate_study`, one Parquet file each in
``data/demo/``."""

SUMMARY_COLUMNS = {
    "model": "string", "benchmark": "string", "question_id": "string", "step": "Int64",
    "n": "int64", "c": "int64", "first_correct": "Int64", "n_answer_missing": "Int64",
    "answer_values": "object", "answer_counts": "object", "n_tokens_mean": "float64",
    "n_tokens_min": "float64", "n_tokens_max": "float64", "token_entropy_mean": "float64",
    "token_entropy_std": "float64", "n_truncated": "Int64", "source": "string",
}
"""Columns and pandas dtypes of a simulated summary frame: the per-question summary schema
(``leash_eval.summarize.SUMMARY_SCHEMA``, as ``read_summary`` gives it: nullable Int64 where
counts-only inputs have NA; list columns hold Python lists) plus ``source``."""

TRUTH_COLUMNS = {
    "study": "string", "base_model": "string", "base_step": "Int64", "model": "string",
    "step": "Int64", "benchmark": "string", "question_id": "string", "n": "int64",
    "p_base": "float64", "p_rl": "float64", "pruned": "bool", "expanded": "bool",
    "epsilon": "float64", "true_category": "string", "reference_answer": "string",
    "source": "string",
}
"""Columns of the truth table: one row per (study, pair, benchmark, question[, step])."""


def demo_dir() -> Path:
    """``data/demo/`` of the repository."""
    return REPO / "data" / "demo"


def config_path() -> Path:
    """``data/demo/config.yaml``: the configuration the committed demo was drawn from."""
    return demo_dir() / "config.yaml"


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
    """Plain data for :func:`leash.sources.simulate.simulate_study`, from a checked file's values.

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
        :func:`leash.sources.simulate.simulate_study` takes; a new object on every call.

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


# --------------------------------------------------------------------------------------------
# The frames
# --------------------------------------------------------------------------------------------


def _answer_lists(counts, answers):
    """answer_values / answer_counts lists: non-NA classes with count > 0, sorted by count
    desc then value.
    """
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


def summary_frame(model, benchmark, qids, step, n, counts, answers, first_correct,
                  token_stats=None):
    """Summary rows (``SUMMARY_COLUMNS``) of one model from class counts (column 0 correct,
    the last NA); ``answers`` None gives counts-only rows, as ``leash_eval.summarize`` does.
    """
    n_q = counts.shape[0]
    if answers is None:  # counts-only rows, as leash_eval.summarize gives them
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


def truth_frame(study, base_model, base_step, model, step, benchmark, qids, n, p_base, p_rl,
                pruned, expanded, ref, zeta):
    """Truth rows (``TRUTH_COLUMNS``) of one pair: the true category at ``epsilon(n, zeta)``."""
    n_q = len(qids)
    eps = epsilon(int(n), zeta)
    codes = true_category_codes(p_base, p_rl, eps)
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


def true_category_codes(p_base, p_rl, eps):
    """Category codes (``CATEGORIES`` order) at threshold eps: in support iff p > eps (Def. 3.2)."""
    b = np.asarray(p_base) > eps
    r = np.asarray(p_rl) > eps
    return np.where(r, np.where(b, 0, 1), np.where(b, 2, 3))


# --------------------------------------------------------------------------------------------
# The files
# --------------------------------------------------------------------------------------------


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


def frame_from_table(table, name: str) -> pd.DataFrame:
    """A demo frame (``name`` of :data:`DEMO_FILES`) from its Arrow table, with the schema
    dtypes restored.
    """
    cols = TRUTH_COLUMNS if name == "truth" else SUMMARY_COLUMNS
    return _restore_dtypes(table.to_pandas(), cols)[list(cols)]


def read_demo(directory=None):
    """Read the demo frames written by ``leash simulate`` (:func:`leash_eval.demo.write_demo`),
    with the schema dtypes restored.

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
        out[name] = frame_from_table(table, name)
    return out


_SIMULATED_RE = re.compile(r"\bsimulated\b", re.IGNORECASE)


def simulated_label(text=""):
    """``text`` with the word "simulated" (appended as " (simulated)" if missing, any case).

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> simulated_label("Table 1: support dynamics")
    'Table 1: support dynamics (simulated)'
    >>> simulated_label("Simulated pass@k")
    'Simulated pass@k'
    """
    if not isinstance(text, str):
        raise TypeError(f"The 'text' parameter of simulated_label must be a str. Got "
                        f"{type(text).__name__} instead.")
    if _SIMULATED_RE.search(text):
        return text
    return f"{text.rstrip()} (simulated)" if text.strip() else "simulated"
