"""The SIMULATED demo data set of ``data/demo/`` as data: its frames and files.

:mod:`leash.sources.simulate` is the generative model and :mod:`leash_eval.demo` draws the demo
from it (``leash simulate``, with its configuration ``data/demo/config.yaml``); this module
holds what reading the demo needs, so that a study file can use a demo part
(:mod:`leash.sources.study`) without loading the simulator: the columns of the frames and their
constructors, and reading the Parquet files. Every frame carries ``source = "simulated"`` and
every file the key-value metadata ``source = simulated``; ``data/demo/README.md`` documents it
all.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from leash.core._validation import Paths, validate_params
from leash.core.support import CATEGORIES, epsilon
from leash.errors import LeashValueError
from leash.paths import DATA

__all__ = ["simulated_label", "SOURCE", "DEMO_SEED", "DEMO_FILES", "SUMMARY_COLUMNS",
           "TRUTH_COLUMNS", "demo_dir", "summary_frame", "truth_frame", "true_category_codes",
           "frame_from_table", "read_demo"]
_MOVED = ("CONFIG_SCHEMA", "config_path", "load_config", "check_config")

SOURCE = "simulated"
"""Value of the ``source`` column and of the Parquet metadata key ``source``."""

DEMO_SEED = 2507_14843
"""Seed of the committed demo (the paper's arXiv number)."""

DEMO_FILES = ("support", "entropy", "checkpoints", "sft", "gym", "truth")
"""The frames of :func:`leash_eval.demo.simulate_study`, one Parquet file each in
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
    """``data/demo/``: the repository's, or the installed package's copy."""
    return DATA / "demo"


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


@validate_params({"directory": [Paths(), None]})
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
            raise LeashValueError(f"missing demo file {path.name} in {d}.", func="read_demo",
                                  file=str(path))
        table = pq.read_table(path)
        meta = table.schema.metadata or {}
        if meta.get(b"source") != SOURCE.encode():
            raise LeashValueError(f"{path.name} is not labelled source=simulated in its "
                                  "metadata.", func="read_demo", file=str(path), key="source",
                                  value=meta.get(b"source"))
        out[name] = frame_from_table(table, name)
    return out


_SIMULATED_RE = re.compile(r"\bsimulated\b", re.IGNORECASE)


@validate_params({"text": [str]})
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
    if _SIMULATED_RE.search(text):
        return text
    return f"{text.rstrip()} (simulated)" if text.strip() else "simulated"


def __getattr__(name):
    # what moved to the demo's generator (leash_eval.demo) with ``leash simulate``, one release
    if name in _MOVED:
        from leash.sources.seam import moved

        return moved(f"{__name__}.{name}", f"leash_eval.demo.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
