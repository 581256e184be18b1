"""The paper's tables as DataFrames, from per-question summaries (the layer notebooks and the CLI
share).

Inputs are the frames of the generations layer:

* a *summary* frame, one row per (model, benchmark, question_id[, step]) with ``n``, ``c``,
  ``first_correct`` and optional answer/token columns (``leash_eval.summarize``), and
* a *paired* frame, one row per (benchmark, question_id[, step]) with ``n_base, c_base,
  first_correct_base, n_rl, c_rl, first_correct_rl`` (``leash.analysis.pairing.pair_counts``).

Every metric is computed by the numpy core (``leash.core.passk``, ``leash.core.support``,
``leash.core.entropy``, ``leash.core.stats``); this module only groups, pools and lays out.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from numbers import Integral, Real

import numpy as np
import pandas as pd

from leash.core._validation import (
    DATAFRAME,
    Boolean,
    Generator,
    InstancesOf,
    Interval,
    Options,
    StrOptions,
    StrSequence,
    invalid,
    validate_params,
)
from leash.core.entropy import BASE, CORRECTION, NA_RULES, answer_entropy_from_histograms
from leash.core.passk import (
    BUDGET_GRID,
    ESTIMATORS,
    G_PASS_THRESHOLDS,
    found_within,
    g_pass_at_k,
    mg_pass_at_k,
    pass_at_k_curve,
    pass_hat_k,
)
from leash.core.stats import LEVEL, N_BOOT, bootstrap_codes, mcnemar_exact, mcnemar_midp
from leash.core.support import (
    CATEGORIES,
    COUNT_NAMES,
    METRIC_NAMES,
    MIN_COUNT,
    category_codes,
    expected_support_counts,
    support_metrics,
)
from leash.errors import LeashTypeError, LeashValueError, Param
from leash.summary import summary_na

__all__ = [
    "BUDGET_RULES",
    "CATEGORY_DTYPE",
    "require_columns",
    "default_ks",
    "found_at_budget",
    "support_table",
    "support_from_counts",
    "passk_table",
    "PASSK_METRICS",
    "passk_metrics_table",
    "entropy_table",
    "wide_with_average",
    "perplexity_table",
    "expected_support_curve",
    "answer_entropy_per_question",
]

BUDGET_RULES = ("first-k", "expected")
POOLED_NAMES = {"math": "Math", "non-math": "Non-Math"}
# The support categories as an ordered pandas dtype (the core returns their names as numpy).
CATEGORY_DTYPE = pd.CategoricalDtype(list(CATEGORIES), ordered=True)

# The declared kinds of the parameters (leash.core._validation).
FRAME = [DATAFRAME]
BY = [StrSequence()]
DOMAINS = [InstancesOf(Mapping, "a mapping of benchmark to domain", dict), None]
POOL = [Boolean()]
#: The declared kind of a false discovery rate (the verdicts of leash.analysis.flips).
FDR = Interval(Real, 0, 1, closed="neither")


def require_columns(df: pd.DataFrame, columns: Sequence[str], where: str) -> None:
    """Raise ValueError naming every column of ``columns`` missing from ``df`` (``where``: the
    function whose input it is, named first).
    """
    if not isinstance(df, pd.DataFrame):
        raise LeashTypeError(f"{where} needs a pandas DataFrame. Got {type(df).__name__} "
                             "instead.", value=df)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise LeashValueError(
            f"{where} needs the column(s) {missing}; the frame has {list(df.columns)}.",
            key=missing[0])


@validate_params({"n_max": [Interval(Integral, 1, None, closed="left")]})
def default_ks(n_max: int) -> np.ndarray:
    """Powers of two up to ``n_max``, plus ``n_max`` itself: 1, 2, 4, ..., n_max.

    Parameters
    ----------
    n_max : int
        The largest budget, at least 1.

    Returns
    -------
    ndarray of int64
        The budgets, increasing.
    """
    ks = 2 ** np.arange(int(np.floor(np.log2(n_max))) + 1)
    return np.unique(np.append(ks, n_max)).astype(np.int64)


def found_at_budget(n, c, first_correct, k, *, min_count=1, where="found_at_budget"):
    """Whether each question is found within a budget of ``k`` samples, by the paper's rule.

    At the full budget (``k`` None or equal to n) a question is found when ``c >= min_count``.
    Below it, the paper's printed tables use the first k samples (inferred here from their
    values; the paper does not say): :func:`leash.core.passk.found_within`, which is defined for
    ``min_count = 1`` only.

    Parameters
    ----------
    n, c, first_correct : array_like of int, shape (n_questions,)
    k : int or None
    min_count : int, default 1
    where : str, default "found_at_budget"
        The caller named in error messages.

    Returns
    -------
    ndarray of bool, shape (n_questions,)
    """
    n = np.asarray(n, dtype=np.int64)
    if k is None or (n == k).all():
        # pairing at a common budget leaves c NA where the first k samples do not fix it: there
        # the first correct sample decides (min_count 1 only)
        c = np.asarray(c, dtype=object)
        unknown = pd.isna(c)
        first = None if first_correct is None else np.asarray(first_correct, dtype=object)
        if unknown.any() and (min_count != 1 or first is None or pd.isna(first[unknown]).any()):
            raise LeashValueError(
                f"{int(unknown.sum())} correct counts are unknown at the budget of the pairing "
                "(a declared budget, or the smaller sample count of two models, below the "
                "samples on hand), and ", Param("min_count", value=min_count), " needs them;",
                func=where, param="min_count", value=min_count, hint=(
                    "with ", Param("min_count", value=1), " the first correct sample decides."))
        found = np.zeros(len(n), dtype=bool)
        found[~unknown] = c[~unknown].astype(np.int64) >= min_count
        if unknown.any():
            found[unknown] = found_within(first[unknown].astype(np.int64), n[unknown])
        return found
    if (n < k).any():
        i = int(np.flatnonzero(n < k)[0])
        raise LeashValueError(
            "the budget ", Param("k", value=k), f" exceeds the {int(n[i])} samples of question "
            f"index {i}.", func=where, param="k", value=k)
    if min_count != 1:
        raise LeashValueError(
            "a budget below the number of samples (", Param("k", value=k), ") uses the first k "
            "samples, which defines 'found' only for ", Param("min_count", value=1), ". Got ",
            Param("min_count", value=min_count), ";", func=where, param="min_count",
            value=min_count, hint=("use ", Param("budget_rule", value="expected"),
                                   " or the full budget."))
    return found_within(np.asarray(first_correct, dtype=np.int64), k)


def _percent_of_mean(c, n) -> float:
    """100 times the mean of c / n over questions, the float nearest its exact value.

    Summed as fractions (exact, and cheap for thousands of questions): in floats 51 / 160 =
    0.31875 times 100 is 31.874999..., which a table printed to two decimals shows as 31.87.
    """
    from fractions import Fraction

    total = sum(Fraction(int(ci), int(ni)) for ci, ni in zip(c, n))
    return float(100 * total / len(c))


def groups_of(df: pd.DataFrame, by: list, *, sort: bool):
    """(key tuple, frame) per group of ``by``; the whole frame once when ``by`` is empty.

    Rows whose key is missing (e.g. a base model without a ``step``) form their own group.
    """
    if not by:
        yield (), df
        return
    for key, g in df.groupby(by, sort=sort, observed=True, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), g


def _scope_groups(df: pd.DataFrame, domains: Mapping[str, str] | None, pool: bool):
    """Yield (scope, label, domain, frame) for each benchmark, then pooled domains and overall."""
    for bench, g in df.groupby("benchmark", sort=False, observed=True):
        yield "benchmark", str(bench), (domains or {}).get(str(bench), ""), g
    if not pool or df["benchmark"].nunique() < 2:  # pooling one benchmark repeats its row
        return
    if domains:
        dom = df["benchmark"].map(lambda b: domains.get(str(b), ""))
        unknown = sorted(set(df.loc[dom == "", "benchmark"].astype(str)))
        if unknown:
            raise LeashValueError(
                f"The 'domains' mapping has no domain for the benchmark(s) {unknown}; known: "
                f"{sorted(domains)}.", param="domains", key=unknown[0])
        for d in sorted(dom.unique(), key=lambda x: (x != "math", x)):
            yield "domain", POOLED_NAMES.get(d, d), d, df[dom == d]
    if df["benchmark"].nunique() > 1 or not domains:
        yield "overall", "Overall", "", df


@validate_params({
    "paired": FRAME, "k": [Interval(Integral, 1, None, closed="left"), None],
    "min_count": [MIN_COUNT], "domains": DOMAINS, "by": BY, "pool": POOL,
    "budget_rule": [StrOptions(*BUDGET_RULES)], "n_boot": [N_BOOT, Options(Integral, 0)],
    "rng": [Generator(), None],
    "level": [LEVEL], "fdr": [FDR, None]})
def support_table(paired: pd.DataFrame, *, k=None, min_count=1, domains=None, by=(),
                  pool=True, budget_rule="first-k", n_boot=0, rng=None, level=0.95, fdr=0.05):
    """Support dynamics per benchmark and pooled: the layout of the paper's Tables 1, 3, 4, 6-12.

    Parameters
    ----------
    paired : pandas.DataFrame, shape (n_questions, ...)
        One row per question with columns ``benchmark, n_base, c_base, n_rl, c_rl`` (and
        ``first_correct_base, first_correct_rl`` for budgets below n), plus the ``by`` columns.
    k : int, optional
        Budget. None (default) uses every question's full sample count, which must then be the
        same for both models on each question.
    min_count : int, default 1
        Correct samples needed to "find" a question (the paper: 1).
    domains : mapping of str to str, optional
        Benchmark -> domain ("math" / "non-math"). With it, pooled rows per domain are added
        (named "Math", "Non-Math") as well as "Overall".
    by : sequence of str, default ()
        Extra grouping columns (e.g. ``("step",)`` for checkpoints, or a pair label).
    pool : bool, default True
        Add pooled rows (sum the counts over benchmarks, then the metrics, as the paper does).
    budget_rule : {"first-k", "expected"}, default "first-k"
        For ``k`` below n: "first-k" classifies by the first k samples (the paper's printed
        tables); "expected" gives the exact expected P/E/S/O over random k-subsets (floats).
    n_boot : int, default 0
        Bootstrap replicates for intervals (0: none). Pooled rows resample within benchmarks.
    rng : numpy.random.Generator, optional
        Required when ``n_boot > 0``.
    level : float, default 0.95
    fdr : float or None, default 0.05
        False discovery rate of the per-question tests behind ``significant E`` and
        ``significant S`` (:func:`leash.analysis.flips.flips_table`); None: no tests, no
        such columns.

    Returns
    -------
    pandas.DataFrame
        One row per (by..., scope, benchmark): ``scope`` ("benchmark", "domain", "overall"),
        ``benchmark``, ``domain``, ``N``, ``k``, ``pass@k base``, ``pass@k rl`` (fractions),
        ``P, E, S, O, SRR, NDR, SDS, NSCR``, ``mcnemar_p`` (exact) and ``mcnemar_midp``
        (:func:`leash.core.stats.mcnemar_midp`), ``E/(E+S) low``/``high`` (Clopper-Pearson),
        ``significant E`` and ``significant S`` (the E and S questions whose one-sided Fisher
        test survives Benjamini-Hochberg at ``fdr`` over all questions of each ``by`` group;
        NA where the counts at the budget are unknown: a budget ``k`` below the samples) and,
        with ``n_boot``, ``<metric> low``/``<metric> high``.
    """
    where = "support_table"
    by = list(by)
    require_columns(paired, ["benchmark", "n_base", "c_base", "n_rl", "c_rl", *by], where)
    if n_boot and rng is None:
        raise invalid("rng", where, "a numpy.random.Generator when n_boot > 0 (for example "
                      "numpy.random.default_rng(seed))", "None")
    if k is None:
        diff = paired["n_base"].to_numpy() != paired["n_rl"].to_numpy()
        if diff.any():
            i = int(np.flatnonzero(diff)[0])
            raise LeashValueError(
                f"the two models have different sample counts (first at row {i}: "
                f"n_base={paired['n_base'].iat[i]}, n_rl={paired['n_rl'].iat[i]}); pass a common "
                "budget k (leash.analysis.pairing reports one).", func=where, key="n_rl",
                value=paired["n_rl"].iat[i])

    expected = k is not None and budget_rule == "expected"
    work = paired
    if k is None and min_count == 1 and {"found_base", "found_rl"} <= set(paired.columns):
        # leash.analysis.pairing already decided found-ness at the common budget (exactly, from the
        # first correct sample when the two models had different sample counts).
        work = paired.assign(**{f"_f{s[0]}": _found_column(paired, f"found_{s}", where)
                                for s in ("base", "rl")})
    elif not expected:
        work = paired.assign(**{f"_f{s[0]}": found_at_budget(
            paired[f"n_{s}"], paired[f"c_{s}"], paired.get(f"first_correct_{s}"), k,
            min_count=min_count, where=where) for s in ("base", "rl")})
    # the tests need the correct counts at the budget: the full samples, with known counts
    at_full = k is None or ((paired["n_base"] == k).all() and (paired["n_rl"] == k).all())
    known = not (paired["c_base"].isna().any() or paired["c_rl"].isna().any())
    testable = fdr is not None and not expected and at_full and known
    if testable:
        from leash.analysis.flips import significant_flags

        up, down = significant_flags(paired, fdr=fdr, by=by)
        work = work.assign(_up=up, _down=down)
    rows = []
    for key, gdf in groups_of(work, by, sort=True):
        for scope, label, domain, g in _scope_groups(gdf, domains, pool):
            if expected:
                counts = tuple(expected_support_counts(g["n_base"], g["c_base"], g["n_rl"],
                                                       g["c_rl"], k, min_count=min_count))
            else:
                codes = category_codes(g["_fb"].to_numpy(), g["_fr"].to_numpy())
                counts = tuple(int(x) for x in np.bincount(codes, minlength=4))
            P, E, S, O = counts  # noqa: E741
            n_q = len(g)
            lo, hi = (k, k) if k is not None else (int(g["n_base"].min()), int(g["n_base"].max()))
            row = dict(zip(by, key))
            row.update(scope=scope, benchmark=label, domain=domain, N=n_q,
                       k=lo if lo == hi else pd.NA, k_min=lo, k_max=hi,
                       **{"pass@k base": (P + S) / n_q, "pass@k rl": (P + E) / n_q},
                       P=P, E=E, S=S, O=O, **support_metrics(P, E, S, O)._asdict())
            if not expected:
                mc = mcnemar_exact(E, S)
                row.update({"mcnemar_p": mc.p_value, "mcnemar_midp": mcnemar_midp(E, S),
                            "E/(E+S) low": mc.ci_low, "E/(E+S) high": mc.ci_high})
                if fdr is not None:
                    row.update(_significant(codes, g) if testable else
                               {"significant E": pd.NA, "significant S": pd.NA})
                if n_boot:
                    strata = g["benchmark"].to_numpy() if scope != "benchmark" else None
                    ci = bootstrap_codes(codes, rng, n_boot, strata, level, "bootstrap_support")
                    for name in METRIC_NAMES:
                        row[f"{name} low"] = ci.at[name, "low"]
                        row[f"{name} high"] = ci.at[name, "high"]
            rows.append(row)
    return _budget_columns(pd.DataFrame(rows))


def _significant(codes: np.ndarray, g: pd.DataFrame) -> dict:
    """The E and S questions of a row whose verdict is "expansion" / "shrinkage"."""
    return {"significant E": int(((codes == 1) & g["_up"].to_numpy()).sum()),
            "significant S": int(((codes == 2) & g["_down"].to_numpy()).sum())}


def _budget_columns(t: pd.DataFrame) -> pd.DataFrame:
    """``k`` (NA where a pooled row's benchmarks have different budgets), ``k_min`` and
    ``k_max`` as nullable integers: budgets are numbers, never text; the significant counts as
    nullable integers (NA where the counts at the budget are unknown).
    """
    return t.astype({c: "Int64" for c in ("k", "k_min", "k_max", "significant E",
                                          "significant S") if c in t})


def _found_column(df: pd.DataFrame, col: str, where: str) -> np.ndarray:
    v = df[col]
    if v.isna().any():
        i = int(np.flatnonzero(v.isna().to_numpy())[0])
        raise LeashValueError(
            f"column {col!r} is missing at row {i} (found-ness unknown at the common budget); "
            "pair with per-sample data or counts at equal n.", func=where, key=col)
    return v.to_numpy(dtype=bool)


@validate_params({"counts": FRAME, "by": BY, "domains": DOMAINS, "pool": POOL})
def support_from_counts(counts: pd.DataFrame, *, by=(), domains=None, pool=True):
    """Support metrics from P/E/S/O counts (e.g. the paper's printed counts), with pooled rows.

    Parameters
    ----------
    counts : pandas.DataFrame
        Columns ``benchmark, P, E, S, O`` plus the ``by`` columns.
    by : sequence of str
        Grouping columns (e.g. the model pair).
    domains : mapping of str to str, optional
        Benchmark -> domain, for pooled "Math" / "Non-Math" rows.
    pool : bool, default True

    Returns
    -------
    pandas.DataFrame
        One row per (by..., scope, benchmark) with the counts, ``N`` and the four metrics.
    """
    by = list(by)
    require_columns(counts, ["benchmark", *COUNT_NAMES, *by], "support_from_counts")
    rows = []
    for key, gdf in groups_of(counts, by, sort=False):
        for scope, label, domain, g in _scope_groups(gdf, domains, pool):
            tot = {c: int(g[c].sum()) for c in COUNT_NAMES}
            m = support_metrics(*(tot[c] for c in COUNT_NAMES))
            row = dict(zip(by, key))
            row.update(scope=scope, benchmark=label, domain=domain, N=sum(tot.values()), **tot,
                       **m._asdict())
            rows.append(row)
    return pd.DataFrame(rows)


@validate_params({"summary": FRAME, "ks": [BUDGET_GRID, None],
                  "estimator": [StrOptions(*ESTIMATORS)], "by": BY})
def passk_table(summary: pd.DataFrame, ks=None, *, estimator="first-k",
                by=("model", "benchmark")):
    """Benchmark-level pass@k per group, long format.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-question summary with ``n, c`` (and ``first_correct`` for "first-k") and ``by``.
    ks : array_like of int, optional
        Budgets; default ``default_ks(min n)`` of each group.
    estimator : {"first-k", "unbiased"}, default "first-k"
        "first-k" (the first k samples in generation order, what the paper's printed pass@k
        tables report; the default of the tables, the CLI, the artifacts and the notebooks)
        needs ``first_correct``; "unbiased" (Chen et al. 2021) needs only ``n, c``. The result
        says which in its ``estimator`` column.
    by : sequence of str, default ("model", "benchmark")

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, k, pass_at_k, n_questions, estimator``; pass@k as a fraction.
    """
    where = "passk_table"
    by = list(by)
    need = ["n", "c", *by] + (["first_correct"] if estimator == "first-k" else [])
    require_columns(summary, need, where)
    frames = []
    for key, g in groups_of(summary, by, sort=True):
        if estimator == "first-k" and g["first_correct"].isna().any():
            raise LeashValueError(
                f"group {dict(zip(by, key))}: first_correct is unknown for "
                f"{int(g['first_correct'].isna().sum())} of {len(g)} questions (counts without "
                "the sample order), and ", Param("estimator", value="first-k"), " (the default: "
                "the first k samples, as the paper's tables) needs it;", func=where,
                param="estimator", value=estimator, hint=(
                    "pass ", Param("estimator", value="unbiased"), " for Chen et al.'s "
                    "estimator, which needs only n and c."))
        kk = default_ks(int(g["n"].min())) if ks is None else np.atleast_1d(ks)
        try:
            m = pass_at_k_curve(g["n"].to_numpy(), g["c"].to_numpy(), kk, estimator=estimator,
                                first_correct=(g["first_correct"].to_numpy()
                                               if estimator == "first-k" else None))
        except ValueError as exc:
            raise LeashValueError(f"group {dict(zip(by, key))}: ", exc, func=where) from None
        frames.append(pd.DataFrame({**dict(zip(by, key)), "k": kk, "pass_at_k": m.mean(axis=0),
                                    "n_questions": len(g), "estimator": estimator}))
    cols = [*by, "k", "pass_at_k", "n_questions", "estimator"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


#: The metrics beside pass@k (``leash passk --metric``): pass^k (all k correct) and G-Pass@k
#: at OpenCompass's thresholds with mG-Pass@k (:mod:`leash.core.passk`).
PASSK_METRICS = ("pass^k", "g-pass")


@validate_params({"summary": FRAME, "ks": [BUDGET_GRID, None], "metrics": [StrSequence()],
                  "by": BY})
def passk_metrics_table(summary: pd.DataFrame, ks=None, metrics=PASSK_METRICS, *,
                        by=("model", "benchmark")):
    """Benchmark-level pass^k and G-Pass@k per group and budget, from ``n, c`` alone.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-question summary with ``n, c`` and ``by``.
    ks : array_like of int, optional
        Budgets; default ``default_ks(min n)`` of each group.
    metrics : sequence of {"pass^k", "g-pass"}
        ``pass^k``: the mean over questions of C(c, k) / C(n, k); ``g-pass``: G-Pass@k_tau for
        each tau of :data:`leash.core.passk.G_PASS_THRESHOLDS` (columns ``g_pass_<tau>``) and
        ``mg_pass`` (mG-Pass@k), the means OpenCompass reports (as fractions, not x 100).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, k``, the metrics' columns, ``n_questions``.
    """
    where = "passk_metrics_table"
    by = list(by)
    bad = [m for m in metrics if m not in PASSK_METRICS]
    if bad:
        raise LeashValueError(param="metrics", func=where, value=bad[0],
                              constraint=f"one of {PASSK_METRICS}")
    require_columns(summary, ["n", "c", *by], where)
    rows = []
    for key, g in groups_of(summary, by, sort=True):
        n, c = g["n"].to_numpy(), g["c"].to_numpy()
        for k in (default_ks(int(n.min())) if ks is None else np.atleast_1d(ks)):
            row = {**dict(zip(by, key)), "k": int(k)}
            try:
                if "pass^k" in metrics:
                    row["pass^k"] = float(np.mean(pass_hat_k(n, c, int(k))))
                if "g-pass" in metrics:
                    for tau in G_PASS_THRESHOLDS:
                        row[f"g_pass_{tau}"] = float(np.mean(g_pass_at_k(n, c, int(k), tau)))
                    row["mg_pass"] = float(np.mean(mg_pass_at_k(n, c, int(k))))
            except ValueError as exc:
                raise LeashValueError(f"group {dict(zip(by, key))}: ", exc, func=where) from None
            rows.append({**row, "n_questions": len(g)})
    return pd.DataFrame(rows)


@validate_params({"summary": FRAME, "by": BY, "na": [StrOptions(*NA_RULES)], "base": BASE,
                  "correction": CORRECTION})
def entropy_table(summary: pd.DataFrame, *, by=("model", "benchmark"), na="class",
                  base=None, correction=None):
    """Table 5's quantities per group: avg@n accuracy, response length, token and answer entropy.

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-question summary (``n, c`` and, where available, ``n_tokens_mean``,
        ``token_entropy_mean``, ``answer_counts``, ``n_answer_missing``).
    by : sequence of str, default ("model", "benchmark")
    na : {"class", "drop", "truncated"}, default "class"
        The NA rule of the answer entropy (:data:`leash.core.entropy.NA_RULES`: "truncated" is the
        paper's, which Table 5 through :func:`leash.artifacts.entropy_long` uses by default).
        Which samples are NA is fixed when a summary is made (``leash_eval.summarize``, which
        records its rule): "truncated" needs a summary made with ``na="truncated"``, "class"
        and "drop" one made with ``na="class"``. A summary with no truncated sample serves
        every rule; another mismatch is a ValueError. A frame whose rule is not recorded is
        checked only as far as its counts tell (under "truncated", every truncated sample
        must be among its NA samples).
    base : float, optional
        Log base of the answer entropy (None: natural log).
    correction : {None, "miller-madow"}, optional

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, n_questions, n_samples, avg@n (%), response_length, token_entropy,
        answer_entropy, distinct_answers``. Accuracy is the mean over questions of c/n; length
        and token entropy are means over samples (each question's mean weighted by its n, so a
        macro average over sequences as the paper defines it); answer entropy is the mean over
        questions of the per-question entropy.
    """
    where = "entropy_table"
    by = list(by)
    require_columns(summary, ["n", "c", *by], where)
    na = _check_na_rule(summary, na, where)
    rows = []
    for key, g in groups_of(summary, by, sort=True):
        n = g["n"].to_numpy(dtype=np.float64)
        row = dict(zip(by, key))
        row.update(n_questions=len(g), n_samples=int(n.sum()),
                   **{"avg@n (%)": _percent_of_mean(g["c"], g["n"])})
        for col, out in (("n_tokens_mean", "response_length"),
                         ("token_entropy_mean", "token_entropy")):
            if col in g and g[col].notna().any():
                v = g[col].to_numpy(dtype=np.float64)
                ok = np.isfinite(v)
                row[out] = float(np.sum(v[ok] * n[ok]) / np.sum(n[ok]))
            else:
                row[out] = np.nan
        if "answer_counts" in g and g["answer_counts"].map(_has_items).any():
            ae = _answer_entropy(g, na, base, correction)
            row["answer_entropy"] = float(np.nanmean(ae.entropy))
            row["distinct_answers"] = float(np.mean(ae.n_distinct))
        else:
            row["answer_entropy"] = np.nan
            row["distinct_answers"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _check_na_rule(summary: pd.DataFrame, na, where: str) -> str:
    """Check that ``summary``'s NA samples follow the rule ``na``; return how they enter the
    answer distribution ("class" or "drop", for :mod:`leash.core.entropy`).
    """
    made_as = "truncated" if na == "truncated" else "class"
    trunc = (summary["n_truncated"].astype("Float64").fillna(0).to_numpy(dtype=np.float64)
             if "n_truncated" in summary else np.zeros(len(summary)))
    if (trunc > 0).any():  # otherwise "truncated" and "class" select the same samples
        made = summary_na(summary)
        if made is not None and made != made_as:
            raise LeashValueError(
                "the summary was made with ", Param("na", value=made), ", so its NA samples do "
                "not follow ", Param("na", value=na), f" ({int((trunc > 0).sum())} questions "
                "have truncated samples);", func=where, param="na", value=na, hint=(
                    "summarize the generations with ", Param("na", value=made_as),
                    f" (leash summarize --na {made_as}), or ask for ", Param("na", value=made),
                    "."))
        if made is None and made_as == "truncated" and "n_answer_missing" in summary:
            missing = summary["n_answer_missing"].astype("Float64").fillna(0).to_numpy(
                dtype=np.float64)
            if (trunc > missing).any():
                raise LeashValueError(
                    Param("na", value="truncated"), " counts every truncated sample as NA, but "
                    f"{int((trunc > missing).sum())} questions have more truncated samples than "
                    "NA ones (the summary was made with ", Param("na", value="class"), ");",
                    func=where, param="na", value=na, hint=(
                        "summarize the generations with ", Param("na", value="truncated"),
                        " (leash summarize --na truncated)."))
    return "drop" if na == "drop" else "class"


def _answer_entropy(frame: pd.DataFrame, na: str, base, correction):
    """Answer entropies of the questions of ``frame`` (its answer histograms and NA counts)."""
    n_na = (frame["n_answer_missing"].fillna(0).to_numpy(dtype=np.int64)
            if "n_answer_missing" in frame else None)
    hists = [np.asarray(h if _has_items(h) else [], dtype=np.float64)
             for h in frame["answer_counts"]]
    return answer_entropy_from_histograms(hists, n_na=n_na, na=na, base=base,
                                          correction=correction)


def _has_items(x) -> bool:
    try:
        return len(x) > 0
    except TypeError:
        return False


@validate_params({"df": FRAME, "value": [str], "index": [str], "columns": [str],
                  "column_order": [StrSequence(), None], "average": [str]})
def wide_with_average(df: pd.DataFrame, value: str, *, index="model", columns="benchmark",
                      column_order=None, average="Avg"):
    """Pivot to a wide table (e.g. models x benchmarks) and add the unweighted mean column.

    Table 5's "Avg." column is the unweighted mean of its benchmark columns (checked here
    against all 36 printed Avg values).

    Parameters
    ----------
    df : pandas.DataFrame
        Long table with ``index``, ``columns`` and ``value`` columns.
    value, index, columns : str
    column_order : sequence of str, optional
        Order of the benchmark columns (default: sorted).
    average : str, default "Avg"
        Name of the mean column.

    Returns
    -------
    pandas.DataFrame
        Index ``index`` in first-appearance order, one column per benchmark plus ``average``.
    """
    require_columns(df, [index, columns, value], "wide_with_average")
    wide = df.pivot(index=index, columns=columns, values=value)
    wide = wide.reindex(pd.unique(df[index]))
    if column_order is not None:
        wide = wide[list(column_order)]
    wide[average] = wide.mean(axis=1, skipna=False)
    wide.columns.name = None
    return wide


PPL_AGGREGATIONS = ("trace-mean", "token-pooled")


@validate_params({"traces": FRAME, "categories": FRAME, "how": [StrOptions(*PPL_AGGREGATIONS)]})
def perplexity_table(traces: pd.DataFrame, categories: pd.DataFrame, *, how="trace-mean"):
    """Table 2: perplexity of reference traces under each model, by support category.

    Parameters
    ----------
    traces : pandas.DataFrame, shape (n_traces, ...)
        One row per (benchmark, question_id, reference, model): the scoring ``model`` (base or
        RLVR), the ``reference`` that wrote the trace (e.g. "DeepSeek-R1"), and the trace's
        ``n_tokens`` and ``sum_logprob`` (natural-log probability of its reasoning tokens under
        the model, teacher-forced).
    categories : pandas.DataFrame
        ``benchmark, question_id, category``: each question's support category for the pair
        (e.g. from :func:`leash.core.support.support_status`).
    how : {"trace-mean", "token-pooled"}, default "trace-mean"
        "trace-mean": mean over traces of ``exp(-sum_logprob / n_tokens)``; "token-pooled":
        ``exp(-sum(sum_logprob) / sum(n_tokens))`` over the cell. The paper does not say which
        for Table 2.

    Returns
    -------
    pandas.DataFrame
        ``category, reference, model, benchmark, ppl, n_traces``; questions whose category has
        no trace are absent (the paper prints "-" there).
    """
    where = "perplexity_table"
    require_columns(traces, ["benchmark", "question_id", "reference", "model", "n_tokens",
                             "sum_logprob"], where)
    require_columns(categories, ["benchmark", "question_id", "category"], where)
    n = traces["n_tokens"].to_numpy(dtype=np.float64)
    lp = traces["sum_logprob"].to_numpy(dtype=np.float64)
    bad = ~(n >= 1) | ~np.isfinite(lp) | (lp > 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LeashValueError(
            f"trace row {i} has n_tokens={n[i].item():g}, sum_logprob={lp[i].item():g}; need "
            "n_tokens >= 1 and a finite log-probability <= 0.", func=where,
            key="n_tokens" if not n[i] >= 1 else "sum_logprob",
            value=n[i].item() if not n[i] >= 1 else lp[i].item())
    key = ["benchmark", "question_id"]
    cat = categories[[*key, "category"]].astype({"benchmark": str, "question_id": str})
    t = traces.astype({"benchmark": str, "question_id": str}).merge(cat, on=key, how="inner")
    unmatched = len(traces) - len(t)
    if unmatched:
        warnings.warn(f"{where}: {unmatched} of {len(traces)} traces have no category (their "
                      "question is not in 'categories') and are left out.", stacklevel=3)
    t = t.assign(_ppl=np.exp(-t["sum_logprob"] / t["n_tokens"]))
    g = t.groupby(["category", "reference", "model", "benchmark"], observed=True, sort=True)
    if how == "trace-mean":
        ppl = g["_ppl"].mean()
    else:
        ppl = np.exp(-g["sum_logprob"].sum() / g["n_tokens"].sum())
    out = pd.DataFrame({"ppl": ppl, "n_traces": g.size()}).reset_index()
    return out


@validate_params({"paired": FRAME, "ks": [BUDGET_GRID], "min_count": [MIN_COUNT]})
def expected_support_curve(paired: pd.DataFrame, ks, *, min_count=1):
    """Exact expected P, E, S, O and metrics as smooth functions of the budget k.

    For each k (at most every question's n), each model's k samples are a random subset of
    its n samples (:func:`leash.core.support.expected_support_counts`), so no resampling noise.

    Parameters
    ----------
    paired : pandas.DataFrame
        Columns ``n_base, c_base, n_rl, c_rl``.
    ks : array_like of int, shape (n_ks,)
    min_count : int, default 1

    Returns
    -------
    pandas.DataFrame, shape (n_ks, 9)
        ``k, P, E, S, O, SRR, NDR, SDS, NSCR`` (expected counts are floats; the metrics are
        those of the expected counts).
    """
    require_columns(paired, ["n_base", "c_base", "n_rl", "c_rl"], "expected_support_curve")
    rows = []
    for k in np.atleast_1d(ks):
        counts = expected_support_counts(paired["n_base"], paired["c_base"], paired["n_rl"],
                                         paired["c_rl"], int(k), min_count=min_count)
        rows.append({"k": int(k), **counts._asdict(), **support_metrics(*counts)._asdict()})
    return pd.DataFrame(rows)


@validate_params({"summary": FRAME, "na": [StrOptions(*NA_RULES)], "base": BASE,
                  "correction": CORRECTION})
def answer_entropy_per_question(summary: pd.DataFrame, *, na="class", base=None,
                                correction=None):
    """Answer-level entropy of every question (the per-question values Table 5 averages).

    Parameters
    ----------
    summary : pandas.DataFrame
        Per-question summary with ``answer_counts`` and ``n_answer_missing``.
    na : {"class", "drop", "truncated"}, default "class"
        The NA rule, checked against the summary as in :func:`entropy_table`.
    base, correction
        As in :func:`leash.core.entropy.answer_entropy_from_histograms`.

    Returns
    -------
    pandas.DataFrame
        The key columns (``model, benchmark, question_id`` and ``step`` if present), ``n, c``,
        ``answer_entropy``, ``n_distinct``, ``n_answer_missing``.
    """
    require_columns(summary, ["n", "c", "answer_counts"], "answer_entropy_per_question")
    na = _check_na_rule(summary, na, "answer_entropy_per_question")
    ae = _answer_entropy(summary, na, base, correction)
    keys = [c for c in ("model", "benchmark", "question_id", "step") if c in summary]
    out = summary[keys + ["n", "c"]].reset_index(drop=True)
    out["answer_entropy"] = ae.entropy
    out["n_distinct"] = ae.n_distinct
    out["n_answer_missing"] = ae.n_na
    return out
