"""The demo's check of the empirical support rule against its known truth (tests only).

``misclassification_table`` grades the paper's empirical categories (a question is found when a
model's first k samples hold a correct one) against the true epsilon-support categories the
SIMULATED demo knows (``data/demo/truth.parquet``); tests/test_simulate.py checks it on certain
and near-threshold outcomes. It was a public function of leash.sources.demo that only the tests
called.
"""

import warnings

import numpy as np
import pandas as pd

from leash.core._validation import check_positive_int, check_probability
from leash.core.support import CATEGORIES, category_codes, epsilon
from leash.sources.demo import TRUTH_COLUMNS, true_category_codes


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
        The ``truth`` frame of the demo (``TRUTH_COLUMNS``).
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
    from leash.analysis.tables import CATEGORY_DTYPE, found_at_budget

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
    emp = category_codes(fb, fr)
    true = true_category_codes(m["p_base"].to_numpy(), m["p_rl"].to_numpy(), epsilon(k, zeta))
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
