"""Every numeric claim of the paper's text, recomputed from its printed numbers.

Each sentence of arXiv 2507.14843v4 that states a number (the abstract, the definitions of
Section 3, the text on the tables and figures, their captions, the appendices) is a row of
``data/paper/claims.csv``: an id, where it stands, the claim quoted or closely paraphrased, and,
for a claim that does not hold as stated or cannot be checked, why. Here each id has a check that
recomputes the claim from the printed counts and tables (``data/paper/``) within the claim's
scope, and :func:`claims` puts quote, scope, recomputation and verdict side by side.

Two rules decide every verdict, the same for all claims (:data:`SCOPE_RULE`,
:data:`PRECISION_RULE`):

* **Scope.** A claim is judged on exactly the rows its sentence names: the models (by name, or
  by the range of parameters it gives), domains, benchmarks, budgets and tables. Where the
  sentence names none of these, it is judged on every row of the table or figure it discusses.
  Rows outside the scope are shown beside the verdict and never decide it. So "NDR <= 0.04",
  said of the models of 1.5B to 14B parameters, is judged on Table 1 without OLMo-2-0425-1B,
  whose 1B and Math NDR of 0.10 are shown but do not count.
* **Precision.** A number is compared at the precision it is written with: the value recomputed
  from the counts is rounded half-up as the paper prints that quantity (Table 1: to 3 decimals
  and then to 2) and then to the claim's decimals. A range "a-b" (with or without "≈") holds
  when every value of the scope lies in it, a bound "<= x" when none exceeds it, and "x", "≈ x"
  or "x -> y" when the value rounds to it. A plain statement and "consistently" mean every row
  of the scope, "generally" and "often" more than half of them, "sometimes" at least one. Table
  1's rule is the one that fits 79 of its 80 metric cells
  (:func:`leash.sources.paper.rebuild_table1`).

A verdict is ``"holds"``, ``"does not hold"`` or ``"not checkable"`` (the paper prints no number
that could decide it: Figures 2 and 3, whose values could not be decoded, the sampling settings).
Nothing about which claims fail is hard-coded: the checks compute, and ``claims.csv`` supplies
the explanation of each claim that does not hold or cannot be checked; one without an
explanation is labelled ``"UNEXPLAINED"``, and an explanation on a claim that holds is refused
(it would be stale).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
import pandas as pd

from leash.core.support import COUNT_NAMES
from leash.errors import LeashValueError
from leash.sources.paper import load, rebuild_table1, round_half_up

__all__ = ["SCOPE_RULE", "PRECISION_RULE", "VERDICTS", "Scope", "claims"]

#: The one rule for the scope of every claim (the module docstring says it with an example).
SCOPE_RULE = (
    "A claim is judged on exactly the rows its sentence names: the models (by name, or by the "
    "range of parameters it gives), domains, benchmarks, budgets and tables. Where the sentence "
    "names none of these, it is judged on every row of the table or figure it discusses. Rows "
    "outside the scope are shown beside the verdict and never decide it.")
#: The one rule for comparing a stated number with a recomputed one.
PRECISION_RULE = (
    "A number is compared at the precision it is written with: the value recomputed from the "
    "counts is rounded half-up as the paper prints that quantity (Table 1: to 3 decimals and "
    "then to 2) and then to the claim's decimals. A range \"a-b\" (with or without \"≈\") holds "
    "when every value of the scope lies in it, a bound \"<= x\" when none exceeds it, and "
    "\"x\", \"≈ x\" or \"x -> y\" when the value rounds to it. A plain statement and "
    "\"consistently\" mean every row of the scope, \"generally\" and \"often\" more than half "
    "of them, \"sometimes\" at least one.")
HOLDS, FAILS, UNCHECKABLE = "holds", "does not hold", "not checkable"
#: The verdicts of :func:`claims`.
VERDICTS = (HOLDS, FAILS, UNCHECKABLE)

_EPS = 1e-9  # float slack when comparing values rounded by round_half_up with stated ones
_DOMAIN = {"math": "Math", "non-math": "Non-Math", "overall": "Overall"}


def _billions(params: str) -> float:
    """``"1.5B"`` -> 1.5 (the parameter counts of ``pairs.csv`` and Table 13)."""
    return float(str(params).removesuffix("B"))


@dataclass(frozen=True)
class Scope:
    """The rows a claim is judged on, as its sentence states them (:data:`SCOPE_RULE`).

    Parameters
    ----------
    stated : str
        The scope in words, as the sentence gives it (or, where it gives none, the table or
        figure it discusses).
    params : tuple of float, optional
        ``(low, high)``, in billions: the models of that size, inclusive.
    models, domains, benchmarks, tables : tuple of str
        The rows of these models (``model``), domains, benchmarks, tables; empty: every one.
    """

    stated: str
    params: tuple[float, float] | None = None
    models: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    benchmarks: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()

    def mask(self, frame: pd.DataFrame, *, models: bool = True) -> np.ndarray:
        """Which rows of ``frame`` are in scope (columns ``params, model, domain, benchmark,
        table`` as the scope needs them); ``models=False`` ignores the models and parameters
        the scope names (the rows a sentence about every model would take).
        """
        keep = np.ones(len(frame), dtype=bool)
        for col, allowed in (("model", self.models if models else ()),
                             ("domain", self.domains), ("benchmark", self.benchmarks),
                             ("table", self.tables)):
            if allowed:
                keep &= frame[col].isin(allowed).to_numpy()
        if self.params is not None and models:
            low, high = self.params
            keep &= frame["params"].between(low, high).to_numpy()
        return keep

    def outside(self, frame: pd.DataFrame) -> np.ndarray:
        """The rows of the same domains, benchmarks and tables that the scope's models or
        parameters leave out: shown beside a verdict, never deciding it.
        """
        return self.mask(frame, models=False) & ~self.mask(frame)


class _Printed:
    """The paper's printed numbers the checks read, loaded once per :func:`claims` call."""

    def __init__(self, data_dir):
        self.data_dir = data_dir

    def load(self, name: str) -> pd.DataFrame:
        return load(name, self.data_dir)

    @cached_property
    def params(self) -> dict[str, float]:
        p = self.load("pairs")
        return dict(zip(p["pair"], p["params"].map(_billions)))

    @cached_property
    def table1(self) -> pd.DataFrame:
        """Table 1 rebuilt from the appendix counts (rounded as Table 1), with ``params``."""
        t = rebuild_table1(self.data_dir)
        return t.assign(params=t["model"].map(self.params))

    @cached_property
    def counts(self) -> pd.DataFrame:
        """The per-benchmark rows of Tables 3, 4 and 6-12, ``model`` = the pair."""
        sc = self.load("support_counts")
        return sc.assign(model=sc["pair"], params=sc["pair"].map(self.params))

    @cached_property
    def table5(self) -> pd.DataFrame:
        """Table 5's benchmark cells (without its Avg column)."""
        t = self.load("table5_entropy")
        return t[t["benchmark"] != "Avg"].reset_index(drop=True)

    @cached_property
    def table5_pairs(self) -> list[tuple[str, str]]:
        """(RLVR model, its base) of Table 5, in the table's order."""
        t = self.table5.drop_duplicates("model")
        return [(m, b) for m, b in zip(t["model"], t["base_of_pair"]) if isinstance(b, str)]

    def table5_mean(self, metric: str, model: str) -> float:
        """The mean of a model's five printed cells of a Table 5 metric (what its Avg rounds)."""
        t = self.table5
        return float(t.loc[(t["metric"] == metric) & (t["model"] == model), "value"].mean())

    def table5_cell(self, metric: str, model: str, benchmark: str) -> float:
        t = self.table5
        return float(t.loc[(t["metric"] == metric) & (t["model"] == model)
                           & (t["benchmark"] == benchmark), "value"].iat[0])


# ---------------------------------------------------------------------------------------------
# Helpers: how rows and values are written in the recomputation
# ---------------------------------------------------------------------------------------------


def _label(r) -> str:
    return f"{r.model} {_DOMAIN.get(r.domain, r.domain)}"


def _ratio(metric: str, r) -> str:
    """The metric of a row as the fraction of its counts (Def. 3.3), unreduced."""
    p, e, s = int(r.P), int(r.E), int(r.S)
    return {"SRR": f"{p}/{p + s}", "NDR": f"{e}/{p + e}", "NSCR": f"{e - s}/{p + e + s}",
            "SDS": f"2PE/(P²+2PE+ES) = {2 * p * e}/{p * p + 2 * p * e + e * s}"}[metric]


def _verdict(ok: bool) -> str:
    return HOLDS if ok else FAILS


def _most(n: int, of: int) -> bool:
    """"generally" / "often": more than half (:data:`PRECISION_RULE`)."""
    return 2 * n > of


def _table1_range(d: _Printed, scope: Scope, metric: str, low: float, high: float,
                  name: str) -> tuple[str, bool]:
    """A range or bound over Table 1's rows in scope, at Table 1's printed precision."""
    t = d.table1
    rows, outside = t[scope.mask(t)], t[scope.outside(t)]
    shown = rows[f"{metric}_display"]
    lo, hi = rows.loc[shown.idxmin()], rows.loc[shown.idxmax()]
    text = (f"{name} {shown.min():.2f} ({_label(lo)}) to {shown.max():.2f} ({_label(hi)}) over "
            f"{len(rows)} rows of {rows['model'].nunique()} models")
    bad = rows[(shown < low - _EPS) | (shown > high + _EPS)]
    if len(bad):
        text += "; beyond the claim: " + ", ".join(
            f"{_label(r)} {_ratio(metric, r)} = {getattr(r, metric):.5f} -> "
            f"{getattr(r, metric + '_display'):.2f}" for r in bad.itertuples())
    if len(outside):
        text += "; outside the scope: " + ", ".join(
            f"{_label(r)} {getattr(r, metric + '_display'):.2f}"
            for r in outside.itertuples())
    return text, bad.empty


def _joined(*parts: tuple[str, bool]) -> tuple[str, str]:
    return "; ".join(p[0] for p in parts), _verdict(all(p[1] for p in parts))


# ---------------------------------------------------------------------------------------------
# The checks: one per claim of claims.csv, registered with the scope its sentence states
# ---------------------------------------------------------------------------------------------

_Check = Callable[[_Printed, Scope], tuple[str, str]]
_CHECKS: dict[str, tuple[Scope, _Check]] = {}


def _claim(name: str, scope: Scope):
    def register(check: _Check) -> _Check:
        if name in _CHECKS:
            raise RuntimeError(f"claim {name!r} has two checks")
        _CHECKS[name] = (scope, check)
        return check
    return register


_SIZES_1_5_TO_14 = (1.5, 14.0)
_TABLE1_1_5_TO_14 = "Table 1, the models of 1.5B to 14B parameters"


def _table5_changes(d: _Printed, metric: str, pairs, decimals: int) -> tuple[str, str]:
    """``base x -> rlvr y`` of Table 5's means of the printed cells, at the claim's decimals."""
    text = ", ".join(f"{b} {d.table5_mean(metric, b):.3f} -> {m} {d.table5_mean(metric, m):.3f}"
                     for b, m, _, _ in pairs)
    ok = all(round_half_up(d.table5_mean(metric, b), decimals) == x
             and round_half_up(d.table5_mean(metric, m), decimals) == y for b, m, x, y in pairs)
    return text + " (means of the printed cells, which the Avg column rounds)", _verdict(ok)


def _table5_rises(d: _Printed, metric: str) -> tuple[list[str], list[str], int, int]:
    """RLVR models whose mean of a Table 5 metric is above / below their base's, and the
    (model, benchmark) cells above and in all.
    """
    up = [m for m, b in d.table5_pairs if d.table5_mean(metric, m) > d.table5_mean(metric, b)]
    down = [m for m, b in d.table5_pairs if d.table5_mean(metric, m) < d.table5_mean(metric, b)]
    benches = list(dict.fromkeys(d.table5["benchmark"]))
    cells = [d.table5_cell(metric, m, x) > d.table5_cell(metric, b, x)
             for m, b in d.table5_pairs for x in benches]
    return up, down, sum(cells), len(cells)


def _table5_improves(d: _Printed) -> tuple[str, str]:
    """avg@32 of every RLVR model of Table 5 against its base, cell by cell."""
    metric = "avg32_accuracy_percent"
    benches = list(dict.fromkeys(d.table5["benchmark"]))
    cells = [(m, x, d.table5_cell(metric, m, x) - d.table5_cell(metric, b, x))
             for m, b in d.table5_pairs for x in benches]
    up = [c for c in cells if c[2] > 0]
    least = min(cells, key=lambda c: c[2])
    text = (f"avg@32 (the mean pass@1 over 32 samples) higher after RLVR in {len(up)} of "
            f"{len(cells)} (model, benchmark) cells of Table 5's {len(d.table5_pairs)} pairs; "
            f"smallest gain {least[2]:+.2f} points ({least[0]}, {least[1]})")
    return text, _verdict(len(up) == len(cells))


@_claim("abstract_pass1", Scope(
    "every RLVR model against its base (none named): Table 5's five pairs, whose avg@32 is the "
    "mean pass@1 over 32 samples (Table 14 prints pass@1 of SFT and DAPO but none of their "
    "base)"))
def _abstract_pass1(d, scope):
    return _table5_improves(d)


@_claim("abstract_shrinkage", Scope(
    "the support results at large budgets (none named): every row of Table 1"))
def _abstract_shrinkage(d, scope):
    t = d.table1
    more = int((t["S"] > t["E"]).sum())
    per = d.counts[d.counts["table"].isin([str(i) for i in range(6, 13)])]
    text = (f"S > E in {more} of {len(t)} rows of Table 1 (NSCR < 0 in those); per "
            f"benchmark (Tables 6-12): S > E in {int((per['S'] > per['E']).sum())}, S = E in "
            f"{int((per['S'] == per['E']).sum())}, E > S in {int((per['E'] > per['S']).sum())} "
            f"of {len(per)} rows")
    return text, _verdict(_most(more, len(t)))


@_claim("abstract_entropy", Scope("Table 5's five pairs (none named)"))
def _abstract_entropy(d, scope):
    up, _, _, _ = _table5_rises(d, "token_entropy")
    a_up, a_down, a_cells, n = _table5_rises(d, "answer_entropy")
    text = (f"token-level entropy higher after RLVR for {len(up)} of {len(d.table5_pairs)} "
            f"pairs ({', '.join(up)}); answer-level entropy lower for {len(a_down)} of "
            f"{len(d.table5_pairs)} pairs and in {n - a_cells} of {n} (model, benchmark) cells "
            "(means of the printed cells)")
    return text, _verdict(len(up) >= 1 and len(a_down) == len(d.table5_pairs) and a_cells == 0)


def _all_count_rows(d: _Printed) -> pd.DataFrame:
    """Every printed row of counts: Tables 3, 4, 6-12 per benchmark, their aggregates, Table 1."""
    t1 = d.load("table1")
    return pd.concat([d.load("support_counts")[list(COUNT_NAMES)],
                      d.load("support_aggregates")[list(COUNT_NAMES)],
                      t1[list(COUNT_NAMES)]], ignore_index=True)


@_claim("sds_closed_form", Scope(
    "Def. 3.3, an identity (no rows named): every printed row of counts (Tables 1, 3, 4, "
    "6-12 and the appendix aggregates)"))
def _sds_closed_form(d, scope):
    rows = _all_count_rows(d)
    same = 0
    for p, e, s in zip(rows["P"], rows["E"], rows["S"]):
        p, e, s = int(p), int(e), int(s)
        srr, ndr = Fraction(p, p + s), Fraction(e, p + e)
        harmonic = 2 * srr * ndr / (srr + ndr) if srr + ndr else Fraction(0)
        closed = Fraction(2 * p * e, p * p + 2 * p * e + e * s)
        same += harmonic == closed
    return (f"the harmonic mean 2 SRR NDR/(SRR+NDR) equals 2PE/(P²+2PE+ES) as exact fractions "
            f"in {same} of {len(rows)} printed rows of counts"), _verdict(same == len(rows))


@_claim("metric_ranges", Scope(
    "Def. 3.3, the definitions (no rows named): every printed row of counts"))
def _metric_ranges(d, scope):
    rows = _all_count_rows(d)
    p, e, s = (rows[c].astype(object).map(int) for c in ("P", "E", "S"))
    srr = [Fraction(a, a + b) for a, b in zip(p, s)]
    ndr = [Fraction(b, a + b) for a, b in zip(p, e)]
    nscr = [Fraction(b - c, a + b + c) for a, b, c in zip(p, e, s)]
    in_range = (all(0 <= x <= 1 for x in srr + ndr) and all(-1 <= x <= 1 for x in nscr))
    srr_one = all((x == 1) == (c == 0) for x, c in zip(srr, s))
    ndr_zero = all((x == 0) == (c == 0) for x, c in zip(ndr, e))
    ndr_one = sum(x == 1 for x in ndr)
    t1 = d.table1
    rounded_up = t1[(t1["SRR_display"] >= 1 - _EPS) & (t1["S"] > 0)]
    text = (f"in all {len(rows)} printed rows of counts SRR and NDR lie in [0, 1] and NSCR in "
            f"[-1, 1]: {in_range}; SRR = 1 exactly where S = 0: {srr_one}; NDR = 0 exactly where "
            f"E = 0: {ndr_zero}; rows with NDR = 1: {ndr_one}")
    if len(rounded_up):
        text += ("; printed 1.00 although S > 0 (rounding): " + ", ".join(
            f"Table 1 {_label(r)} {_ratio('SRR', r)} = {r.SRR:.5f}"
            for r in rounded_up.itertuples()))
    return text, _verdict(in_range and srr_one and ndr_zero)


@_claim("epsilon_example", Scope("the worked example of App. C.4: k = 8192, ζ = 0.05"))
def _epsilon_example(d, scope):
    k, zeta = 8192, 0.05
    log_term = -math.log(zeta)
    eps = log_term / k
    miss = (1 - eps) ** k
    ok = (round_half_up(log_term, 3) == 2.996 and round_half_up(eps * 1e4, 2) == 3.66
          and miss <= zeta)
    return (f"-ln(0.05) = {log_term:.6f} -> 2.996; 2.995732/8192 = {eps:.6e} -> 3.66e-04; "
            f"(1 - ε)^8192 = {miss:.6f} <= ζ = 0.05"), _verdict(ok)


@_claim("sampling_budgets", Scope(
    "the experiments the setup describes (no models named): the support-dynamics budgets of "
    "Tables 6-12 (every model of Table 1) per domain, and the Reasoning Gym curves",
    tables=tuple(str(i) for i in range(6, 13))))
def _sampling_budgets(d, scope):
    sc = d.counts
    keep = scope.mask(sc)
    stated = {"math": {4096, 8192}, "non-math": {1024, 2048}}
    per = sc[keep].drop_duplicates(["table", "domain"])
    bad = per[[int(k) not in stated[dom] for k, dom in zip(per["k"], per["domain"])]]
    parts = []
    for dom in ("math", "non-math"):
        g = per[per["domain"] == dom]
        parts.append(f"{dom}: " + ", ".join(
            f"{k} (Table{'s' if len(x) > 1 else ''} {', '.join(sorted(x['table'], key=int))})"
            for k, x in g.groupby("k", sort=True)))
    rg = d.load("rg_figure4")
    rg_max = rg.groupby("task")["k"].max()
    rg_ok = rg_max.isin([1024, 2048, 4096, 8192, 16384]).all()
    ends = ", ".join(map(str, sorted(set(rg_max))))
    parts.append(f"Reasoning Gym: Figure 4's curves end at k = {ends} (Figures 2-3 could not "
                 "be decoded)")
    text = "; ".join(parts)
    if len(bad):
        text += "; outside the stated sets: " + ", ".join(
            f"Table {r.table} ({r.pair}, {r.domain}) k = {r.k}" for r in bad.itertuples())
    out = sc[~keep].drop_duplicates(["table", "domain"])
    if len(out):
        text += "; outside the scope: " + ", ".join(
            f"Table {r.table} k = {r.k} (stated in its header)" for r in out.itertuples())
    return text, _verdict(bad.empty and bool(rg_ok))


@_claim("simpleqa_subsample", Scope("SimpleQA, every table that has it", benchmarks=("SimpleQA",)))
def _simpleqa_subsample(d, scope):
    sc = d.counts[scope.mask(d.counts)]
    n = sorted(set((sc["P"] + sc["E"] + sc["S"] + sc["O"]).astype(int)))
    tables = ", ".join(sorted(set(sc["table"]), key=int))
    lo, hi = math.ceil((n[0] - 0.5) * 10), math.ceil((n[0] + 0.5) * 10) - 1
    return (f"N = P+E+S+O = {', '.join(map(str, n))} in Tables {tables}; 10% of a set of "
            f"{lo} to {hi} questions rounds to it, and the paper does not print SimpleQA's "
            "size"), UNCHECKABLE


@_claim("lcb_models", Scope(
    "LiveCodeBench v5 and v6 across the models evaluated on non-math benchmarks (Tables 6-10, "
    "and ProRL-1.5B-v2's Table 1 rows)", domains=("non-math",)))
def _lcb_models(d, scope):
    sc = d.counts[scope.mask(d.counts)]
    lcb = sc["benchmark"].str.startswith("LiveCodeBench")
    has = lcb.groupby(sc["model"], sort=False).any()
    size = has.index.map(d.params)
    ok = all(h == (s <= 7) for h, s in zip(has, size))
    bench = d.load("benchmarks").set_index("benchmark")["N"]
    lcb_n = int(bench["LiveCodeBench-v5"] + bench["LiveCodeBench-v6"])
    t1 = d.table1[d.table1["domain"] == "non-math"]
    n = (t1["P"] + t1["E"] + t1["S"] + t1["O"]).astype(int)
    t1_ok = all((v == n.max()) == (d.params[m] <= 7) for m, v in zip(t1["model"], n))
    text = ("with LiveCodeBench rows: " + ", ".join(
        f"{m} ({d.params[m]:g}B)" for m, h in has.items() if h)
        + "; without: " + ", ".join(f"{m} ({d.params[m]:g}B)" for m, h in has.items() if not h)
        + f"; Table 1 non-math N = {n.max()} for the 1.5B and 7B models (ProRL-1.5B-v2 included)"
          f", {n.min()} = {n.max()} - {lcb_n} (the two LiveCodeBench sets) for the 14B ones")
    return text, _verdict(ok and t1_ok and n.max() - n.min() == lcb_n)


@_claim("decoding", Scope("every generation of every model (none named)"))
def _decoding(d, scope):
    lengths = d.table5[d.table5["metric"] == "response_length_tokens"]["value"]
    return (f"no per-sample data are printed; Table 5's mean response lengths (at most "
            f"{lengths.max():.0f} tokens) are below the 32768 cap, which shows nothing about the "
            "sampling settings"), UNCHECKABLE


@_claim("entropy_32_samples", Scope(
    "Table 5, every model and benchmark; its avg@32 cells are the numbers a count of correct "
    "samples out of 32 N can be checked against"))
def _entropy_32_samples(d, scope):
    t = d.table5[d.table5["metric"] == "avg32_accuracy_percent"]
    size = d.load("benchmarks").set_index("benchmark")["N"]
    fits, sharp, example = 0, [], None
    for r in t.itertuples():
        den = 32 * int(size[r.benchmark])
        value = Fraction(str(r.value))
        half = Fraction(1, 2 * 10 ** int(r.decimals))
        c = round(value * den / 100)
        hit = [x for x in (c - 1, c, c + 1) if abs(Fraction(100 * x, den) - value) <= half]
        fits += bool(hit)
        if Fraction(100, den) > 2 * half:  # the grid is coarser than the printed precision
            sharp.append(r.benchmark)
        if example is None and hit:
            example = f"{r.model} {r.benchmark} {r.value:.2f} = {hit[0]}/{den}"
    return (f"{fits} of {len(t)} printed avg@32 cells are a whole number of correct samples out "
            f"of 32 N, within half a unit of the last digit ({len(sharp)} of them, on "
            f"{', '.join(dict.fromkeys(sharp))}, on a grid of 100/(32 N) coarser than the "
            f"printed 0.01, so a real test); e.g. {example}"), _verdict(fits == len(t))


@_claim("overall_srr", Scope(_TABLE1_1_5_TO_14 + ", Overall rows", params=_SIZES_1_5_TO_14,
                             domains=("overall",)))
def _overall_srr(d, scope):
    text, ok = _table1_range(d, scope, "SRR", 0.93, 0.99, "Overall SRR")
    return text, _verdict(ok)


@_claim("ndr_bound", Scope(_TABLE1_1_5_TO_14 + ", every domain", params=_SIZES_1_5_TO_14))
def _ndr_bound(d, scope):
    text, ok = _table1_range(d, scope, "NDR", 0.0, 0.04, "NDR")
    return text, _verdict(ok)


@_claim("math_srr", Scope(_TABLE1_1_5_TO_14 + ", Math rows", params=_SIZES_1_5_TO_14,
                          domains=("math",)))
def _math_srr(d, scope):
    return _joined(_table1_range(d, scope, "SRR", 0.96, 0.99, "Math SRR"),
                   _table1_range(d, scope, "NDR", 0.00, 0.01, "Math NDR"))


@_claim("non_math_srr", Scope(_TABLE1_1_5_TO_14 + ", Non-Math rows", params=_SIZES_1_5_TO_14,
                              domains=("non-math",)))
def _non_math_srr(d, scope):
    return _joined(_table1_range(d, scope, "SRR", 0.90, 0.99, "Non-Math SRR"),
                   _table1_range(d, scope, "NDR", 0.0, 0.04, "Non-Math NDR"))


@_claim("overall_nscr", Scope(_TABLE1_1_5_TO_14 + ", Overall rows", params=_SIZES_1_5_TO_14,
                              domains=("overall",)))
def _overall_nscr(d, scope):
    text, ok = _table1_range(d, scope, "NSCR", -0.06, -0.01, "Overall NSCR")
    return text, _verdict(ok)


@_claim("sds_bound", Scope(_TABLE1_1_5_TO_14 + ", every domain", params=_SIZES_1_5_TO_14))
def _sds_bound(d, scope):
    text, ok = _table1_range(d, scope, "SDS", 0.0, 0.07, "SDS")
    return text, _verdict(ok)


@_claim("shrink_expand_ratio", Scope("Table 1, Nemotron-1-7B and Skywork-OR1-7B, Overall rows",
                                     models=("Nemotron-1-7B", "Skywork-OR1-7B"),
                                     domains=("overall",)))
def _shrink_expand_ratio(d, scope):
    rows = d.table1[scope.mask(d.table1)]
    ratios = [(r.model, int(r.S), int(r.E), Fraction(int(r.S), int(r.E)))
              for r in rows.itertuples()]
    ok = all(2 <= round_half_up(q, 0) <= 3 for *_, q in ratios)
    return ("Overall S:E " + ", ".join(f"{m} {s}:{e} = {float(q):.2f}:1" for m, s, e, q in ratios)
            + " (≈ to the whole number: " + ", ".join(f"{round_half_up(q, 0):.0f}:1"
                                                     for *_, q in ratios) + ")"), _verdict(ok)


@_claim("v2_new_completions", Scope("Table 1, ProRL-1.5B-v2, Overall row",
                                    models=("ProRL-1.5B-v2",), domains=("overall",)))
def _v2_new_completions(d, scope):
    row = d.table1[scope.mask(d.table1)].iloc[0]
    t1 = d.table1[(d.table1["model"] == "ProRL-1.5B-v2") & (d.table1["domain"] != "overall")]
    n = dict(zip(t1["domain"], (t1["P"] + t1["E"] + t1["S"] + t1["O"]).astype(int)))
    # The benchmark sets whose sizes add up to v2's N per domain: those of Table 6 (ProRL-v1).
    bench = d.load("benchmarks").set_index("benchmark")["N"]
    t6 = d.counts[d.counts["table"] == "6"].drop_duplicates("benchmark")
    t6_n = t6.groupby("domain")["benchmark"].apply(lambda b: int(bench[list(b)].sum()))
    same = all(int(t6_n[dom]) == v for dom, v in n.items())
    count = len(t6) if same else None
    text = (f"Overall E = {int(row['E'])}; N = {n['math']} math + {n['non-math']} non-math, "
            + (f"the sizes of Table 6's {count} benchmarks" if same
               else "not the sizes of Table 6's benchmarks"))
    return text, _verdict(int(row["E"]) == 48 and same and count == 11)


@_claim("aime2024_pass", Scope("Table 6 (ProRL-1.5B-v1, pass@8192), AIME2024",
                               tables=("6",), benchmarks=("AIME2024",)))
def _aime2024_pass(d, scope):
    r = d.counts[scope.mask(d.counts)].iloc[0]
    n = int(r["P"] + r["E"] + r["S"] + r["O"])
    base, rl = Fraction(100 * int(r["P"] + r["S"]), n), Fraction(100 * int(r["P"] + r["E"]), n)
    ok = round_half_up(base, 1) == 93.3 and round_half_up(rl, 1) == 83.3
    return (f"base (P+S)/N = {int(r['P'] + r['S'])}/{n} = {float(base):.2f}%, ProRL (P+E)/N = "
            f"{int(r['P'] + r['E'])}/{n} = {float(rl):.2f}%"), _verdict(ok)


@_claim("livebench_l_sds", Scope("Table 7 (Nemotron-1-7B), LiveBench-L",
                                 tables=("7",), benchmarks=("LiveBench-L",)))
def _livebench_l_sds(d, scope):
    r = d.counts[scope.mask(d.counts)].iloc[0]
    p, e, s = int(r["P"]), int(r["E"]), int(r["S"])
    sds = Fraction(2 * p * e, p * p + 2 * p * e + e * s)
    ok = round_half_up(sds, 3) == 0.278 and (e, s) == (2, 2)
    return (f"E = {e}, S = {s}; SDS = {2 * p * e}/{p * p + 2 * p * e + e * s} = {float(sds):.5f}"
            f" -> {round_half_up(sds, 3):.3f}"), _verdict(ok)


@_claim("ppl_out_of_support", Scope(
    "Table 2, out of support, Claude Sonnet 4 reference, AIME2024"))
def _ppl_out_of_support(d, scope):
    t2 = d.load("table2_perplexity")
    cell = t2[(t2["category"] == "out_of_support") & (t2["reference"] == "Claude Sonnet 4")
              & (t2["benchmark"] == "AIME2024")].set_index("target")["ppl"]
    return (f"Table 2 cells: Base {cell['Base']:.2f}, ProRL {cell['ProRL']:.2f}",
            _verdict((cell["Base"], cell["ProRL"]) == (8.76, 14.91)))


@_claim("table3_caption", Scope("Table 3, its six benchmarks, SFT against DAPO",
                                tables=("3",)))
def _table3_caption(d, scope):
    t = d.counts[scope.mask(d.counts)]
    sft = t[t["pair"].str.endswith("SFT")].set_index("benchmark")
    dapo = t[t["pair"].str.endswith("DAPO")].set_index("benchmark").loc[sft.index]
    n = len(sft)

    def nscr(x):
        return Fraction(int(x["E"].sum() - x["S"].sum()), int(x[["P", "E", "S"]].sum().sum()))

    sft_ok = int((sft["E"] >= sft["S"]).sum())
    lower_nscr = int((dapo["NSCR"] < sft["NSCR"]).sum())
    more_s = int((dapo["S"] > sft["S"]).sum())
    lower_srr = int((dapo["SRR"] < sft["SRR"]).sum())
    text = (f"SFT: E >= S in {sft_ok} of {n} benchmarks, pooled E {int(sft['E'].sum())} vs S "
            f"{int(sft['S'].sum())} (NSCR {float(nscr(sft)):+.3f}); DAPO against SFT: lower NSCR "
            f"in {lower_nscr} of {n}, more shrinkage in {more_s} of {n} (pooled S "
            f"{int(dapo['S'].sum())} vs {int(sft['S'].sum())}), lower SRR in {lower_srr} of {n}")
    ok = (sft_ok == n and nscr(sft) > 0 and _most(lower_nscr, n) and _most(more_s, n)
          and _most(lower_srr, n))
    return text, _verdict(ok)


@_claim("table4_caption", Scope("Table 4, every step and benchmark", tables=("4",)))
def _table4_caption(d, scope):
    t = d.counts[scope.mask(d.counts)]
    n = t["P"] + t["E"] + t["S"] + t["O"]
    s0 = d.load("table4_step0").set_index("benchmark")
    half = 0.5 * 10.0 ** -t["pass_decimals"] + _EPS
    rl = ((100 * (t["P"] + t["E"]) / n - t["pass_rl_percent"]).abs() <= half).sum()
    base = ((100 * (t["P"] + t["S"]) / n - t["benchmark"].map(s0["pass_base_percent"])).abs()
            <= half).sum()
    return (f"pass@256 = 100 (P+E)/N, in percent, in {int(rl)} of {len(t)} rows; the step-0 "
            f"value = 100 (P+S)/N, the base's, in {int(base)} of {len(t)} rows"), \
        _verdict(rl == len(t) and base == len(t))


@_claim("table5_caption_accuracy", Scope("Table 5, its five pairs and five benchmarks"))
def _table5_caption_accuracy(d, scope):
    return _table5_improves(d)


@_claim("answer_entropy_decreases", Scope("Table 5, its five pairs and five benchmarks"))
def _answer_entropy_decreases(d, scope):
    _, _, up, n = _table5_rises(d, "answer_entropy")
    t_up, t_down, t_cells, _ = _table5_rises(d, "token_entropy")
    text = (f"answer entropy lower after RLVR in {n - up} of {n} (model, benchmark) cells; token "
            f"entropy higher in {t_cells} of {n} cells, its mean higher for {len(t_up)} pairs "
            f"and lower for {len(t_down)}")
    return text, _verdict(up == 0 and 0 < t_cells < n)


@_claim("table5_markers", Scope("Table 5, the token-level entropy rows of the RLVR models"))
def _table5_markers(d, scope):
    t = d.table5[d.table5["metric"] == "token_entropy"]
    marks = t.drop_duplicates("model").set_index("model")["row_marker"]
    rows = []
    for m, b in d.table5_pairs:
        rises = d.table5_mean("token_entropy", m) > d.table5_mean("token_entropy", b)
        rows.append((m, marks.get(m), "▲" if rises else "▼"))
    agree = sum(mark == want for _, mark, want in rows)
    return (f"the mark agrees with the means of the printed cells for {agree} of {len(rows)} "
            "models: " + ", ".join(f"{m} {mark}" for m, mark, _ in rows)), \
        _verdict(agree == len(rows))


@_claim("accuracy_gains", Scope("Table 5: DeepSeek-1.5B -> ProRL-1.5B, Qwen2.5-32B -> DAPO-32B"))
def _accuracy_gains(d, scope):
    return _table5_changes(d, "avg32_accuracy_percent", [
        ("DeepSeek-1.5B", "ProRL-1.5B", 54.5, 65.4), ("Qwen2.5-32B", "DAPO-32B", 43.0, 61.3)], 1)


@_claim("token_entropy_changes", Scope(
    "Table 5: DeepSeek-1.5B -> ProRL-1.5B, DeepSeek-7B -> AceReason-7B and Skywork-OR1-7B"))
def _token_entropy_changes(d, scope):
    return _table5_changes(d, "token_entropy", [
        ("DeepSeek-1.5B", "ProRL-1.5B", 0.44, 0.52), ("DeepSeek-7B", "AceReason-7B", 0.37, 0.23),
        ("DeepSeek-7B", "Skywork-OR1-7B", 0.37, 0.16)], 2)


@_claim("answer_entropy_changes", Scope(
    "Table 5: DeepSeek-1.5B -> ProRL-1.5B, Qwen2.5-32B -> DAPO-32B"))
def _answer_entropy_changes(d, scope):
    return _table5_changes(d, "answer_entropy", [
        ("DeepSeek-1.5B", "ProRL-1.5B", 1.30, 0.66), ("Qwen2.5-32B", "DAPO-32B", 1.61, 0.61)], 2)


@_claim("skywork_vs_acereason", Scope("Table 5: Skywork-OR1-7B against AceReason-7B"))
def _skywork_vs_acereason(d, scope):
    tok = [d.table5_mean("token_entropy", m) for m in ("Skywork-OR1-7B", "AceReason-7B")]
    ans = [d.table5_mean("answer_entropy", m) for m in ("Skywork-OR1-7B", "AceReason-7B")]
    return (f"token entropy {tok[0]:.3f} vs {tok[1]:.3f}, answer entropy {ans[0]:.3f} vs "
            f"{ans[1]:.3f} (Skywork-OR1-7B vs AceReason-7B, means of the printed cells)"), \
        _verdict(tok[0] < tok[1] and ans[0] > ans[1])


@_claim("table14_caption", Scope("Table 14"))
def _table14_caption(d, scope):
    t14 = d.load("table14_passk")
    t3 = d.counts[d.counts["table"] == "3"]
    b14 = list(dict.fromkeys(t14["benchmark"]))
    missing = sorted(set(t3["benchmark"]) - set(b14))
    models = sorted(set(t14["model"]))
    return (f"{len(b14)} benchmarks ({', '.join(b14)}; Table 3's {', '.join(missing)} is not in "
            f"it), models {' and '.join(models)}"), \
        _verdict(len(b14) == 5 and models == ["DAPO", "SFT"])


@_claim("figure1_budgets", Scope("Figure 1's pass@k panels and the pair whose numbers they "
                                 "plot (Table 6, ProRL-1.5B-v1)", tables=("6",)))
def _figure1_budgets(d, scope):
    f1 = d.load("figure1_passk")
    sc = d.counts[scope.mask(d.counts)]
    k = sc.drop_duplicates("domain").set_index("domain")["k"]
    inside = set(f1["benchmark"]) <= set(sc["benchmark"])
    return (f"Table 6's budgets: math k = {int(k['math'])}, non-math k = {int(k['non-math'])}; "
            f"the figure's {len(f1)} benchmarks are all in Table 6: {inside}"), \
        _verdict(int(k["math"]) == 8192 and int(k["non-math"]) == 2048 and inside)


@_claim("figure2_convergence", Scope("Figure 2's nine Reasoning Gym panels"))
def _figure2_convergence(d, scope):
    return ("Figure 2 writes a value at every point, but none could be decoded from the "
            "figure: leash holds no number of it"), UNCHECKABLE


@_claim("figure3_expansion", Scope("Figure 3's Reasoning Gym panels"))
def _figure3_expansion(d, scope):
    return ("Figure 3 writes a value at every point, but none could be decoded from the "
            "figure: leash holds no number of it"), UNCHECKABLE


@_claim("figure4_shrinkage", Scope("Figure 4: leg_counting, family_relationships, "
                                   "power_function (values read off the plot, approximate)"))
def _figure4_shrinkage(d, scope):
    f = d.load("rg_figure4")
    top = f[f["k"] == f.groupby("task")["k"].transform("max")].set_index(["task", "series"])
    first = f[f["k"] == 1].set_index(["task", "series"])
    tasks = list(dict.fromkeys(f["task"]))
    shrink = [t for t in tasks if top.at[(t, "Base"), "pass_at_k"]
              > top.at[(t, "ProRL"), "pass_at_k"]]
    text = ("base above ProRL at the largest k in " + f"{len(shrink)} of {len(tasks)} tasks: "
            + ", ".join(f"{t} {top.at[(t, 'Base'), 'pass_at_k']:.3f} vs "
                        f"{top.at[(t, 'ProRL'), 'pass_at_k']:.3f} at k = "
                        f"{int(top.at[(t, 'Base'), 'k'])} (k = 1: "
                        f"{first.at[(t, 'Base'), 'pass_at_k']:.3f} vs "
                        f"{first.at[(t, 'ProRL'), 'pass_at_k']:.3f})" for t in tasks))
    return text, _verdict(len(shrink) == len(tasks))


# ---------------------------------------------------------------------------------------------
# The audit of the claims
# ---------------------------------------------------------------------------------------------


def claims(data_dir=None) -> pd.DataFrame:
    """The paper's numeric claims (``claims.csv``), each recomputed within its scope.

    Every claim is judged by the two rules of this module, the same for all claims:
    :data:`SCOPE_RULE` (the rows the sentence names, else every row of the table or figure it
    discusses; rows outside never decide) and :data:`PRECISION_RULE` (a number compared at the
    precision it is written with, the recomputed value rounded as the paper prints it).

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding the paper's CSVs; default ``leash.sources.paper.DATA_DIR``.

    Returns
    -------
    pandas.DataFrame
        One row per claim, in the order of ``claims.csv``: ``claim, where, quote`` (from
        ``claims.csv``), ``scope`` (the rows judged, as the sentence states them),
        ``recomputed`` (what the printed numbers give there, with the rows outside the scope),
        ``verdict`` (one of :data:`VERDICTS`) and ``explanation`` (from ``claims.csv`` for a
        claim that does not hold or cannot be checked; ``"UNEXPLAINED"`` when it has none;
        missing for a claim that holds).

    Raises
    ------
    ValueError
        ``claims.csv`` lists a claim without a check or misses one that has a check, or it
        explains a claim that holds (a stale explanation).

    Examples
    --------
    >>> c = claims().set_index("claim")
    >>> c.at["ndr_bound", "verdict"], c.at["v2_new_completions", "verdict"]
    ('holds', 'does not hold')
    """
    c = load("claims", data_dir)
    unknown = sorted(set(c["claim"]) ^ set(_CHECKS))
    if unknown:
        raise LeashValueError(f"claims.csv and the claim checks differ in {unknown}: every claim "
                              "needs one check and every check one row.", file="claims.csv",
                              key="claim", value=unknown[0])
    printed = _Printed(data_dir)
    rows = []
    for i, r in enumerate(c.itertuples()):
        scope, check = _CHECKS[r.claim]
        text, verdict = check(printed, scope)
        explained = isinstance(r.explanation, str)
        if verdict == HOLDS and explained:
            raise LeashValueError(f"claims.csv, line {i + 2}: claim {r.claim!r} holds, yet has an "
                                  "explanation; remove it (it is stale).", file="claims.csv",
                                  line=i + 2, key="explanation", value=r.explanation)
        rows.append({"claim": r.claim, "where": r.where, "quote": r.quote,
                     "scope": scope.stated, "recomputed": text, "verdict": verdict,
                     "explanation": None if verdict == HOLDS else
                     (r.explanation if explained else "UNEXPLAINED")})
    out = pd.DataFrame(rows)
    out["explanation"] = out["explanation"].astype("str").where(out["explanation"].notna())
    return out
