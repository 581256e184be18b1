"""A measured null of the support statistics: what one model shows against itself, beside what the
pair shows.

Two runs of the *same* model disagree on the questions they solve rarely, so E and S are never
zero between identical models (walkthrough 00b simulates it). Here that null is *measured* on
the data, for each side of a pair, three ways:

``"replicate runs"``
    The study names other runs of the model (``replicates:`` on a pair: the same questions and
    budget, independent seeds; :class:`leash.sources.study.Pair`). Every two runs are compared
    as a pair is, at the pair's budget: one value of each statistic per comparison, whose
    mean, standard deviation and range are the null. R runs give R (R - 1) / 2 comparisons,
    which share runs (their spread is not that of independent studies).
``"random halves"``
    One run of n samples per question, split into two halves of n // 2 at random, many times
    (``n_splits`` draws, from the caller's generator): with counts alone, which samples are
    correct is unknown, so the correct samples of the first half are drawn from their
    hypergeometric distribution (c correct of n, n // 2 drawn) and the second half's from what
    is left. A distribution of splits, not one split; exchangeable samples (i.i.d. sampling)
    are assumed. Its budget is n // 2, so the pair's statistics beside it are the pair's exact
    expectation over random subsets of n // 2 samples
    (:func:`leash.core.support.found_probability`).
``"ordered halves"``
    Where the files keep the sample order (:meth:`leash.sources.study.Study.sample_digest`):
    the first n // 2 samples against the next n // 2, one split, beside the pair at its first
    n // 2 samples (``min_count`` 1, which the first correct sample decides).

A null at n // 2 is labelled so (``k``); it is the noise floor of a study of half the budget,
lower than at n (the noise in E falls as the budget grows; :mod:`leash.analysis.planning`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from numbers import Integral

import numpy as np
import pandas as pd

from leash.analysis.tables import DOMAINS, FRAME, POOL, _scope_groups, require_columns
from leash.core._validation import (
    Generator,
    InstancesOf,
    Interval,
    StrSequence,
    validate_params,
)
from leash.core.passk import found_within
from leash.core.support import (
    COUNT_NAMES,
    METRIC_NAMES,
    MIN_COUNT,
    category_codes,
    found_probability,
    support_metrics_kernel,
)
from leash.errors import LeashValueError

__all__ = ["METHODS", "STATISTICS", "NULL_COLUMNS", "replicate_null", "halves_null",
           "measured_null", "null_table"]

#: The ways a null is measured (the module docstring).
METHODS = ("replicate runs", "random halves", "ordered halves")
#: The support statistics whose null is measured.
STATISTICS = (*COUNT_NAMES, *METRIC_NAMES)
#: The columns of :func:`measured_null`.
NULL_COLUMNS = ["side", "run", "method", "k", "k_min", "k_max", "comparisons", "scope",
                "benchmark", "domain", "statistic", "pair", "null_mean", "null_sd", "null_low",
                "null_high", "difference"]
SIDES = ("base", "rl")


def _scope_index(benchmark: np.ndarray, domains, pool):
    """(scope, label, domain, positions) of every row a support table would have."""
    frame = pd.DataFrame({"benchmark": benchmark})
    return [(scope, label, domain, g.index.to_numpy())
            for scope, label, domain, g in _scope_groups(frame, domains, pool)]


def _per_scope(codes: np.ndarray, scopes) -> dict:
    """Per scope label: the (n_comparisons, 8) statistics of category codes (rows: comparisons,
    columns: questions).
    """
    out = {}
    for _, label, _, idx in scopes:
        sub = codes[:, idx]
        counts = np.stack([(sub == j).sum(axis=1) for j in range(4)], axis=1).astype(np.float64)
        metrics = np.stack(support_metrics_kernel(*counts[:, :3].T), axis=1)
        out[label] = np.hstack([counts, metrics])
    return out


def _expected_per_scope(fb: np.ndarray, fr: np.ndarray, scopes) -> dict:
    """Per scope label: the (1, 8) expected counts (and their metrics) of found probabilities."""
    cells = np.stack([fb * fr, (1 - fb) * fr, fb * (1 - fr), (1 - fb) * (1 - fr)], axis=0)
    out = {}
    for _, label, _, idx in scopes:
        counts = cells[:, idx].sum(axis=1)[None, :]
        out[label] = np.hstack([counts, np.stack(support_metrics_kernel(*counts[:, :3].T),
                                                 axis=1)])
    return out


def _summary(values: np.ndarray):
    """Mean, standard deviation (ddof 1; NaN for one comparison), 2.5% and 97.5% quantiles of
    each column, NaN-aware (a ratio undefined in a comparison is left out).
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, one comparison
        mean = np.nanmean(values, axis=0)
        sd = (np.nanstd(values, axis=0, ddof=1) if len(values) > 1
              else np.full(values.shape[1], np.nan))
        lo, hi = np.nanquantile(values, [0.025, 0.975], axis=0)
    return mean, sd, lo, hi


def _budget_columns(k: np.ndarray, idx: np.ndarray) -> dict:
    ks = np.unique(k[idx])
    return {"k": int(ks[0]) if ks.size == 1 else pd.NA, "k_min": int(ks.min()),
            "k_max": int(ks.max())}


def _rows(head: dict, scopes, null: dict, pair: dict, k: np.ndarray, comparisons: int) -> list:
    rows = []
    for scope, label, domain, idx in scopes:
        mean, sd, lo, hi = _summary(null[label])
        for j, stat in enumerate(STATISTICS):
            rows.append({**head, **_budget_columns(k, idx), "comparisons": comparisons,
                         "scope": scope, "benchmark": label, "domain": domain,
                         "statistic": stat, "pair": float(pair[label][0, j]),
                         "null_mean": float(mean[j]), "null_sd": float(sd[j]),
                         "null_low": float(lo[j]), "null_high": float(hi[j]),
                         "difference": float(pair[label][0, j] - mean[j])})
    return rows


def _codes_of(paired: pd.DataFrame, min_count: int) -> np.ndarray:
    """Category codes of a paired frame at ``min_count`` (pairing's exact found-ness for 1)."""
    if min_count == 1 and {"found_base", "found_rl"} <= set(paired.columns):
        fb, fr = (paired[f"found_{s}"].to_numpy(dtype=bool) for s in SIDES)
    else:
        fb, fr = (paired[f"c_{s}"].to_numpy(dtype=np.int64) >= min_count for s in SIDES)
    return category_codes(fb, fr)


@validate_params({"summary": FRAME, "runs": [StrSequence(min_len=2)],
                  "budget": [Interval(Integral, 1, None, closed="left"),
                             InstancesOf(Mapping, "a mapping of benchmark to budget", dict), None],
                  "min_count": [MIN_COUNT], "domains": DOMAINS, "pool": POOL})
def replicate_null(summary: pd.DataFrame, runs, *, budget=None, min_count=1, domains=None,
                   pool=True):
    """The support statistics of every two runs of one model, compared as a pair is.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-question summaries with every run as a model label.
    runs : sequence of str
        At least two runs of one model (the same questions and samples per question).
    budget : int or mapping of str to int, optional
        The budget of the comparison (:func:`leash.analysis.pairing.pair_counts`).
    min_count : int, default 1
    domains, pool
        As in :func:`leash.analysis.tables.support_table`.

    Returns
    -------
    dict
        ``{"scopes": [(scope, label, domain, positions)], "values": {label: (n_comparisons, 8)
        array}, "k": budget per question, "comparisons": [(run_a, run_b)]}``.
    """
    from leash.analysis.pairing import pair_counts

    values, scopes, k, done = {}, None, None, []
    for a, b in itertools.combinations(runs, 2):
        paired = pair_counts(summary, base=a, rl=b, budget=budget)
        paired = paired.sort_values(["benchmark", "question_id"], kind="stable",
                                    ignore_index=True)
        if scopes is None:
            scopes = _scope_index(paired["benchmark"].astype(str).to_numpy(), domains, pool)
            k = paired["n_base"].to_numpy(dtype=np.int64)
        for label, v in _per_scope(_codes_of(paired, min_count)[None, :], scopes).items():
            values.setdefault(label, []).append(v[0])
        done.append((a, b))
    return {"scopes": scopes, "values": {lb: np.asarray(v) for lb, v in values.items()},
            "k": k, "comparisons": done}


@validate_params({"n": [InstancesOf(np.ndarray, "an ndarray", lambda: np.ones(1, int))],
                  "c": [InstancesOf(np.ndarray, "an ndarray", lambda: np.ones(1, int))],
                  "rng": [Generator()], "n_splits": [Interval(Integral, 2, None, closed="left")],
                  "min_count": [MIN_COUNT]})
def halves_null(n, c, *, rng, n_splits=200, min_count=1):
    """Category codes of random splits of each question's n samples into two halves of n // 2.

    Parameters
    ----------
    n, c : ndarray of int, shape (n_questions,)
        Samples (at least 2) and correct samples per question of one run.
    rng : numpy.random.Generator
    n_splits : int, default 200
        Random splits drawn (at least 2).
    min_count : int, default 1

    Returns
    -------
    ndarray of int8, shape (n_splits, n_questions)
        The category (0..3) of each question between the first and the second half of each
        split; memory n_splits x n_questions.
    """
    n, c = n.astype(np.int64), c.astype(np.int64)
    if (n < 2).any() or (c < 0).any() or (c > n).any():
        i = int(np.flatnonzero((n < 2) | (c < 0) | (c > n))[0])
        raise LeashValueError(f"question index {i} has n = {n[i]}, c = {c[i]}; a split into "
                              "halves needs n >= 2 and 0 <= c <= n.", func="halves_null",
                              param="n" if n[i] < 2 else "c", value=int(n[i] if n[i] < 2
                                                                       else c[i]))
    h = n // 2
    size = (int(n_splits), n.size)
    first = rng.hypergeometric(np.broadcast_to(c, size), np.broadcast_to(n - c, size),
                               np.broadcast_to(h, size))
    # the second half: n // 2 of the n - n // 2 samples left (c - first of them correct)
    second = rng.hypergeometric(c - first, (n - c) - (h - first), np.broadcast_to(h, size))
    return category_codes(first >= min_count, second >= min_count)


@validate_params({"summary": FRAME, "paired": FRAME, "base": [str], "rl": [str],
                  "replicates": [InstancesOf(Mapping, "a mapping of side to runs", dict), None],
                  "budget": [Interval(Integral, 1, None, closed="left"),
                             InstancesOf(Mapping, "a mapping of benchmark to budget", dict), None],
                  "digest": [*FRAME, None], "min_count": [MIN_COUNT], "domains": DOMAINS,
                  "pool": POOL, "rng": [Generator()],
                  "n_splits": [Interval(Integral, 2, None, closed="left")]})
def measured_null(summary: pd.DataFrame, paired: pd.DataFrame, base: str, rl: str, *,
                  replicates=None, budget=None, digest=None, min_count=1, domains=None,
                  pool=True, rng, n_splits=200):
    """The null of every support statistic, measured for each side of a pair, beside the
    pair's value (see the module docstring for the three methods).

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-question summaries with the pair's models and their replicate runs.
    paired : pandas.DataFrame
        The pair at its budget (:func:`leash.analysis.pairing.pair_counts`).
    base, rl : str
        The pair's model labels.
    replicates : mapping of str to sequence of str, optional
        Other runs per side (``{"base": [...], "rl": [...]}``).
    budget : int or mapping of str to int, optional
        The pair's budget, for the replicate comparisons.
    digest : pandas.DataFrame, optional
        Per model and question the correct samples of each half in sample order (``model,
        benchmark, question_id, step, n_ordered, c_first, c_second``;
        :meth:`leash.sources.study.Study.sample_digest`).
    min_count : int, default 1
    domains, pool
        As in :func:`leash.analysis.tables.support_table`.
    rng : numpy.random.Generator
        The random halves' draws.
    n_splits : int, default 200
        Random splits per side.

    Returns
    -------
    pandas.DataFrame
        :data:`NULL_COLUMNS`, one row per side, method, scope and statistic: the budget of the
        comparisons (``k``: the pair's, or half of it), their number, the pair's value at that
        budget, the null's mean, standard deviation and 2.5-97.5% range, and ``difference`` =
        pair - null mean. ``attrs["notes"]`` says which method was left out and why.
    """
    require_columns(paired, ["benchmark", "question_id", "n_base", "c_base", "n_rl", "c_rl"],
                    "measured_null")
    paired = paired.reset_index(drop=True)
    bench = paired["benchmark"].astype(str).to_numpy()
    scopes = _scope_index(bench, domains, pool)
    n = paired["n_base"].to_numpy(dtype=np.int64)
    rows, notes = [], []
    full = _per_scope(_codes_of(paired, min_count)[None, :], scopes)
    known = not (paired["c_base"].isna().any() or paired["c_rl"].isna().any())
    h = n // 2
    if known:
        c = {s: paired[f"c_{s}"].to_numpy(dtype=np.int64) for s in SIDES}
        at_half = _expected_per_scope(*(found_probability(n, c[s], np.maximum(h, 1),
                                                          min_count=min_count) for s in SIDES),
                                      scopes)
    first = {s: paired.get(f"first_correct_{s}") for s in SIDES}
    ordered_pair = None
    if min_count == 1 and all(f is not None and not f.isna().any() for f in first.values()):
        fw = [found_within(first[s].to_numpy(dtype=np.int64), h) for s in SIDES]
        ordered_pair = _per_scope(category_codes(*fw)[None, :], scopes)
    for side, model in zip(SIDES, (base, rl)):
        runs = (model, *((replicates or {}).get(side, ())))
        if len(runs) > 1:
            rep = replicate_null(summary, list(runs), budget=budget, min_count=min_count,
                                 domains=domains, pool=pool)
            rows += _rows({"side": side, "run": " | ".join(runs), "method": METHODS[0]},
                          scopes, rep["values"], full, n, len(rep["comparisons"]))
        if not known:
            notes.append(f"random halves of {model}: its correct counts at the pair's budget "
                         "are unknown (a budget below the samples on hand)")
        elif (n < 2).any():
            notes.append(f"random halves of {model}: a question has fewer than 2 samples")
        else:
            codes = halves_null(n, c[side], rng=rng, n_splits=n_splits, min_count=min_count)
            rows += _rows({"side": side, "run": model, "method": METHODS[1]}, scopes,
                          _per_scope(codes, scopes), at_half, h, int(n_splits))
        halves = _ordered(digest, paired, model, n)
        if isinstance(halves, str):
            notes.append(f"ordered halves of {model}: {halves}")
        elif ordered_pair is None:
            notes.append(f"ordered halves of {model}: the pair at its first n // 2 samples needs "
                         "min_count 1 and the first correct sample of every question")
        else:
            codes = category_codes(halves[0] >= min_count, halves[1] >= min_count)[None, :]
            rows += _rows({"side": side, "run": model, "method": METHODS[2]}, scopes,
                          _per_scope(codes, scopes), ordered_pair, h, 1)
    out = pd.DataFrame(rows, columns=NULL_COLUMNS).astype(
        {"k": "Int64", "k_min": "Int64", "k_max": "Int64"})
    out.attrs["notes"] = notes
    return out


def _ordered(digest, paired: pd.DataFrame, model: str, n: np.ndarray):
    """(c_first, c_second) of ``model`` in the order of ``paired``, or why there are none."""
    if digest is None:
        return "the data keep no sample order (counts, summaries or a demo part)"
    d = digest[digest["model"].astype(str) == model]
    d = d[d["step"].isna()] if "step" in d and d["step"].notna().any() else d
    keys = ["benchmark", "question_id"]
    got = paired[keys].astype(str).merge(
        d.assign(**{k: d[k].astype(str) for k in keys})[[*keys, "n_ordered", "c_first",
                                                          "c_second"]],
        on=keys, how="left")
    if got["n_ordered"].isna().any():
        return f"{int(got['n_ordered'].isna().sum())} questions have no sample order"
    if (got["n_ordered"].to_numpy(dtype=np.int64) != n).any():
        return ("the pair's budget is below the samples on hand: the halves of all samples "
                "would not be those of the budget")
    if got["c_first"].isna().any() or got["c_second"].isna().any():
        return "some samples have no verdict"
    return (got["c_first"].to_numpy(dtype=np.int64), got["c_second"].to_numpy(dtype=np.int64))


@validate_params({"null": FRAME, "statistics": [StrSequence()]})
def null_table(null: pd.DataFrame, *, statistics=("E", "S", "NDR", "NSCR")):
    """The measured null in a readable layout: one row per side, method and scope; per
    statistic the pair's value, the null's mean and standard deviation, and their difference.

    Parameters
    ----------
    null : pandas.DataFrame
        A :func:`measured_null` result (with a ``pair`` label column first when it has several
        pairs: ``pair label``).
    statistics : sequence of str, default ("E", "S", "NDR", "NSCR")

    Returns
    -------
    pandas.DataFrame
        ``[pair label,] side, run, method, k, comparisons, benchmark`` and per statistic
        ``<stat>``, ``<stat> null``, ``<stat> null sd``, ``<stat> - null``.
    """
    lead = [c for c in ("pair label",) if c in null.columns]
    keys = [*lead, "side", "run", "method", "k", "comparisons", "scope", "benchmark"]
    require_columns(null, [*keys, "statistic", "pair", "null_mean", "null_sd", "difference"],
                    "null_table")
    sub = null[null["statistic"].isin(list(statistics))]
    out = None
    for stat in statistics:
        s = sub[sub["statistic"] == stat].rename(columns={
            "pair": stat, "null_mean": f"{stat} null", "null_sd": f"{stat} null sd",
            "difference": f"{stat} - null"})
        s = s[[*keys, stat, f"{stat} null", f"{stat} null sd", f"{stat} - null"]]
        out = s if out is None else out.merge(s, on=keys, how="left", sort=False)
    return out.drop(columns="scope").reset_index(drop=True)
