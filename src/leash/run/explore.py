"""A live explorer of the support analysis: ``leash.explore(study)``, an ipywidgets app
(``notebooks/12_explore.ipynb``; ``make explore`` serves it with Voila).

Over one source (the paper's printed numbers, the SIMULATED demo or a study file), controls for
the model pair, the benchmark (or a pooled domain), the budget k, ``min_count``, ``zeta``, the
pass@k estimator and the support rule below the full budget, and views that follow them: the
P/E/S/O counts against the paper's setting, SRR/NDR/SDS/NSCR (with bootstrap intervals on
per-question data), the pass@k curves of both models with their crossover budget, epsilon at k,
the questions that change category when a control moves, the E and S questions of the setting
with both models' counts, the verdict of their per-question test, their most frequent answers
and one response each (where the files keep them), and the papermill call of the notebook that
reproduces the view. It opens on the study's pass@k estimator (the ``support`` section's
``estimator``; unbiased for user data, first-k for the demo and the paper); on counts without
the sample order the budget still moves, with the expected rule (the exact expectation over
random k-subsets, which notebook 10 computes from the same counts) and the unbiased estimator.

Two parts: :class:`ExplorerModel` computes a view (:class:`View`) from a :class:`Setting`,
numpy over arrays loaded once, caching what a control does not touch (the curves do not depend
on k, the support does not depend on the estimator or zeta); :func:`explore` binds widgets to
it. Every number equals the non-interactive functions' at that setting
(:func:`leash.analysis.tables.support_table`, :func:`leash.core.passk.pass_at_k_curve`,
:func:`leash.core.support.epsilon`; ``tests/test_explore.py``).
"""

from __future__ import annotations

import functools
import html
import io
import shlex
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from leash.analysis.tables import default_ks
from leash.artifacts import open_study
from leash.core.passk import curve_kernel, found_within
from leash.core.stats import bootstrap_codes, crossover_budget
from leash.core.support import (
    CATEGORIES,
    COUNT_NAMES,
    METRIC_NAMES,
    category_codes,
    epsilon,
    found_probability,
    support_metrics,
)
from leash.errors import LeashValueError, LeashWarning

__all__ = ["Setting", "View", "ExplorerModel", "explore", "ZETAS", "RULES", "ESTIMATORS",
           "flips_html"]

#: The values of the zeta slider (the paper: 0.05).
ZETAS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
RULES = ("first-k", "expected")
ESTIMATORS = ("first-k", "unbiased")
FULL = 0  # the k slider's value for the full budget (Setting.k None)
MAX_MIN_COUNT = 16  # the largest min_count the slider offers (bounded by the budget too)
POOLED_LABELS = {"math": "Math", "non-math": "Non-Math"}
CHANGES_SHOWN = 12  # rows of the table of questions that changed category
FLIPS_SHOWN = 12  # rows of the table of the setting's E and S questions
RESPONSE_SHOWN = 120  # characters of a response in that table
_CATEGORY_SHORT = dict(zip(CATEGORIES, COUNT_NAMES))


@dataclass(frozen=True)
class Setting:
    """One position of the controls. ``k`` None is the full budget (each benchmark its own)."""

    pair: str
    scope: str
    k: int | None = None
    min_count: int = 1
    zeta: float = 0.05
    estimator: str = "first-k"
    rule: str = "first-k"

    def paper(self) -> Setting:
        """The paper's setting for the same pair and scope."""
        return Setting(self.pair, self.scope)


@dataclass
class View:
    """The numbers a setting shows."""

    setting: Setting
    counts: tuple  # P, E, S, O (floats under the expected rule)
    metrics: dict  # SRR, NDR, SDS, NSCR
    intervals: dict | None  # metric -> (low, high), or None (no per-question data, or expected)
    paper_counts: tuple
    paper_metrics: dict
    ks: np.ndarray  # budgets of the curves
    curve_base: np.ndarray | None
    curve_rl: np.ndarray | None
    crossover: float | None
    k_shown: tuple  # the budget(s) behind the counts: (k,) or the benchmarks' (min, max)
    epsilon: float
    epsilon_text: str
    codes: np.ndarray | None = None  # category code per question (first-k rule)
    notes: list = field(default_factory=list)


class _Scope:
    """The questions of one pair and scope, as arrays (loaded once)."""

    def __init__(self, label, frame: pd.DataFrame, pooled: bool):
        self.label = label
        self.frame = frame.reset_index(drop=True)
        self.pooled = pooled
        f = self.frame
        self.benchmark = f["benchmark"].astype(str).to_numpy()
        self.question_id = f["question_id"].astype(str).to_numpy()
        self.strata = self.benchmark if pooled else None
        self.arrays = {}
        for side in ("base", "rl"):
            self.arrays[f"n_{side}"] = f[f"n_{side}"].to_numpy(dtype=np.int64)
            c = f[f"c_{side}"]
            self.arrays[f"c_known_{side}"] = not c.isna().any()
            self.arrays[f"c_{side}"] = c.astype("Int64").fillna(-1).to_numpy(dtype=np.int64)
            fc = f.get(f"first_correct_{side}")
            self.arrays[f"fc_{side}"] = (None if fc is None or fc.isna().any()
                                         else fc.to_numpy(dtype=np.int64))
        n = np.concatenate([self.arrays["n_base"], self.arrays["n_rl"]])
        self.n_min, self.n_max = int(n.min()), int(n.max())
        self.has_first = self.arrays["fc_base"] is not None and self.arrays["fc_rl"] is not None
        self.c_known = self.arrays["c_known_base"] and self.arrays["c_known_rl"]
        self.budget_of = f.groupby(f["benchmark"].astype(str), sort=False)["n_base"].max()

    def budget_options(self):
        """(label, k) of the k slider: powers of two below the largest budget (with
        first-correct indices, or with the correct counts, whose expected rule needs nothing
        more), then the full budget (:data:`FULL`).
        """
        full = (str(self.n_min) if self.n_min == self.n_max
                else f"each its own ({self.n_min}/{self.n_max})")
        if not (self.has_first or self.c_known):
            return [(full, FULL)]
        ks = [int(k) for k in default_ks(self.n_min) if k < self.n_max]
        return [(str(k), k) for k in ks] + [(full, FULL)]


class ExplorerModel:
    """The computations behind the explorer, over per-question data or the paper's counts.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        ``"paper"``, ``"demo"``, a study file (:func:`leash.artifacts.open_study`).
    section : str, default "support"
        The study section of the pairs.
    n_boot : int, default 1000
        Bootstrap replicates of the intervals (0: none).
    seed : int, default 0
        Each view's bootstrap draws from ``numpy.random.default_rng(seed)``.
    level : float, default 0.95
        Confidence level of the intervals.
    paired : mapping of str to DataFrame, optional
        Paired frames per pair label instead of a study's (benchmarks, benchmarks' domains from
        ``domains``); ``study`` then only names the source.
    domains : mapping of str to str, optional
        Benchmark -> domain, with ``paired``.
    """

    def __init__(self, study="paper", *, section="support", n_boot=1000, seed=0, level=0.95,
                 paired=None, domains=None):
        self.n_boot, self.seed, self.level, self.section = int(n_boot), int(seed), level, section
        self._scopes, self._cache, self._answers = {}, {}, {}
        self.estimator = "unbiased"  # the study's (its section's `estimator`), else this
        if paired is not None:
            self.src = None
            self.name, self.title, self.simulated, self.is_paper = str(study), str(study), False, \
                False
            self.domains = dict(domains or {})
            self._paired = dict(paired)
            self.pairs = list(self._paired)
        else:
            self.src = open_study(study)
            self.name, self.title = self.src.name, self.src.title
            self.simulated, self.is_paper = bool(self.src.simulated), bool(self.src.is_paper)
            self.estimator = self.src.estimator(section)[0]
            if self.is_paper:
                from leash.artifacts import support_long

                self._long = support_long(self.src, section=section)
                self.pairs = list(dict.fromkeys(self._long["pair"]))
                self.domains = {}
            else:
                self.domains = dict(self.src.domains)
                self._pair_objs = {p.label: p for p in self.src.section(section).pairs}
                self.pairs = list(self._pair_objs)
                self._paired = {}
        if not self.is_paper:  # the expected rule's hypergeometric tail: imported once, here
            import scipy.stats  # noqa: F401

    # ---- data, loaded once per pair ----
    def paired(self, pair: str) -> pd.DataFrame:
        """The paired per-question frame of ``pair`` (loaded once)."""
        if pair not in self._paired:
            self._paired[pair] = self.src.paired(self.section, self._pair_objs[pair])
        return self._paired[pair]

    def scopes(self, pair: str) -> list[str]:
        """The benchmarks of ``pair``, then its pooled rows (domains, Overall)."""
        if self.is_paper:
            return self._long.loc[self._long["pair"] == pair, "benchmark"].tolist()
        bench = self.paired(pair)["benchmark"].astype(str)
        names = list(dict.fromkeys(bench))
        if len(names) < 2:
            return names
        doms = [self.domains.get(b, "") for b in names]
        pooled = []
        if all(doms):
            pooled = [POOLED_LABELS.get(d, d) for d in sorted(set(doms),
                                                                  key=lambda x: (x != "math", x))]
        return names + pooled + ["Overall"]

    def scope(self, pair: str, label: str) -> _Scope:
        """The arrays of one pair and scope (cached)."""
        key = (pair, label)
        if key not in self._scopes:
            p = self.paired(pair)
            bench = p["benchmark"].astype(str)
            names = set(bench)
            if label in names:
                sel, pooled = bench == label, False
            elif label == "Overall":
                sel, pooled = np.ones(len(p), dtype=bool), True
            else:
                dom = {v: k for k, v in POOLED_LABELS.items()}.get(label, label)
                sel, pooled = bench.map(lambda b: self.domains.get(b, "")) == dom, True
            self._scopes[key] = _Scope(label, p[np.asarray(sel)], pooled)
        return self._scopes[key]

    def _paper_row(self, pair, scope) -> pd.Series:
        t = self._long
        return t[(t["pair"] == pair) & (t["benchmark"] == scope)].iloc[0]

    # ---- what a control touches ----
    def budget_options(self, pair: str, scope: str) -> list[tuple[str, int | None]]:
        """(label, k) pairs of the budgets this pair and scope support; :data:`FULL` (0) is the
        full budget, each benchmark its own.
        """
        if self.is_paper:
            k = self._paper_row(pair, scope)["k"]
            return [(str(int(k)) if not pd.isna(k) else "each its own", FULL)]
        return self.scope(pair, scope).budget_options()

    def rules(self, pair: str, scope: str) -> tuple[str, ...]:
        """The support rules below the full budget these data serve: "first-k" needs each
        question's first correct sample, "expected" (the exact expectation over random
        k-subsets, as notebook 10) the correct counts.
        """
        if self.is_paper:
            return ("first-k",)
        sc = self.scope(pair, scope)
        return tuple(r for r, ok in (("first-k", sc.has_first), ("expected", sc.c_known)) if ok)

    def estimators(self, pair: str, scope: str) -> tuple[str, ...]:
        """The pass@k estimators these data serve ("first-k" needs first-correct indices)."""
        if self.is_paper:
            return ("first-k",)
        return ESTIMATORS if self.scope(pair, scope).has_first else ("unbiased",)

    def opening(self, pair: str, scope: str) -> Setting:
        """The setting the explorer opens on (and its reset button restores): the paper's
        support setting, with the study's pass@k estimator (unbiased for user data; the paper
        and the demo: first-k) where the data serve it, and below the full budget the first-k
        rule where they have the sample order, else the expected one.
        """
        est = self.estimator if self.estimator in self.estimators(pair, scope) else "unbiased"
        if self.is_paper:
            est = "first-k"
        rules = self.rules(pair, scope)
        return Setting(pair, scope, estimator=est, rule=rules[0] if rules else "first-k")

    def max_min_count(self, setting: Setting) -> int:
        """The largest min_count this setting can serve (1 where 'found' is defined for 1 only:
        first k samples below the full budget, unknown counts, the paper's numbers).
        """
        if self.is_paper:
            return 1
        sc = self.scope(setting.pair, setting.scope)
        if setting.k is not None and setting.rule == "first-k":
            return 1
        if not sc.c_known:
            return 1
        return int(min(MAX_MIN_COUNT, setting.k or sc.n_min))

    def _support(self, s: Setting):
        """(counts, codes or None, intervals or None), cached per the controls they depend on."""
        key = ("support", s.pair, s.scope, s.k, s.min_count, s.rule if s.k else "")
        if key in self._cache:
            return self._cache[key]
        sc = self.scope(s.pair, s.scope)
        a = sc.arrays
        if s.k is not None and s.rule not in self.rules(s.pair, s.scope):
            raise LeashValueError(f"the {s.rule} rule below the full budget needs "
                                  + ("first-correct indices" if s.rule == "first-k" else
                                     "the correct counts") + ", which these data lack; rules: "
                                  f"{', '.join(self.rules(s.pair, s.scope)) or 'none'}.",
                                  func="explore", key="rule", value=s.rule)
        if s.k is not None and s.rule == "expected":
            fb = found_probability(a["n_base"], a["c_base"], s.k, min_count=s.min_count)
            fr = found_probability(a["n_rl"], a["c_rl"], s.k, min_count=s.min_count)
            counts = (float(np.sum(fb * fr)), float(np.sum((1 - fb) * fr)),
                      float(np.sum(fb * (1 - fr))), float(np.sum((1 - fb) * (1 - fr))))
            out = (counts, None, None)
        else:
            if s.k is None:
                fb, fr = a["c_base"] >= s.min_count, a["c_rl"] >= s.min_count
            else:
                fb, fr = found_within(a["fc_base"], s.k), found_within(a["fc_rl"], s.k)
            codes = category_codes(fb, fr)
            counts = tuple(int(x) for x in np.bincount(codes, minlength=4))
            ci = None
            if self.n_boot and len(codes):
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # one question: NaN ends
                    f = bootstrap_codes(codes, np.random.default_rng(self.seed), self.n_boot,
                                        sc.strata, self.level, "bootstrap_support")
                ci = {m: (float(f.at[m, "low"]), float(f.at[m, "high"])) for m in METRIC_NAMES}
            out = (counts, codes, ci)
        self._cache[key] = out
        return out

    def _curves(self, s: Setting):
        """(ks, base curve, RLVR curve, crossover), cached per pair, scope and estimator."""
        key = ("curves", s.pair, s.scope, s.estimator)
        if key not in self._cache:
            sc = self.scope(s.pair, s.scope)
            a = sc.arrays
            ks = default_ks(sc.n_min)
            first = s.estimator == "first-k"
            if first and not sc.has_first:
                self._cache[key] = (ks, None, None, None)
            else:
                cb = curve_kernel(a["n_base"], a["c_base"], ks, a["fc_base"] if first else None)
                cr = curve_kernel(a["n_rl"], a["c_rl"], ks, a["fc_rl"] if first else None)
                b, r = cb.mean(axis=0), cr.mean(axis=0)
                self._cache[key] = (ks, b, r, crossover_budget(b, r, ks))
        return self._cache[key]

    def view(self, s: Setting) -> View:
        """Every number the explorer shows at setting ``s``."""
        if self.is_paper:
            return self._paper_view(s)
        counts, codes, ci = self._support(s)
        paper_counts = self._support(s.paper())[0]
        ks, b, r, cross = self._curves(s)
        sc = self.scope(s.pair, s.scope)
        k_shown = (s.k,) if s.k is not None else tuple(sorted({sc.n_min, sc.n_max}))
        notes = []
        if s.estimator == "first-k" and b is None:
            notes.append("No first-correct indices in these data: the first-k pass@k curve "
                         "needs them; choose the unbiased estimator.")
        return View(s, counts, support_metrics(*counts)._asdict(), ci, paper_counts,
                    support_metrics(*paper_counts)._asdict(), ks, b, r, cross, k_shown,
                    *self._epsilon(k_shown, s.zeta), codes=codes, notes=notes)

    def _paper_view(self, s: Setting) -> View:
        row = self._paper_row(s.pair, s.scope)
        counts = tuple(int(row[c]) for c in COUNT_NAMES)
        metrics = {m: float(row[m]) for m in METRIC_NAMES}
        k = row["k"]
        if pd.isna(k):  # a pooled row: its benchmarks' printed budgets
            t = self._long
            ks_b = t[(t["pair"] == s.pair) & (t["scope"] == "benchmark")]["k"].dropna()
            k_shown = tuple(sorted({int(x) for x in ks_b})) or (8192,)
        else:
            k_shown = (int(k),)
        kk = np.array([max(k_shown)])
        b = np.array([float(row["pass@k base"])])
        r = np.array([float(row["pass@k rl"])])
        return View(s, counts, metrics, None, counts, metrics, kk, b, r, None, k_shown,
                    *self._epsilon(k_shown, s.zeta))

    @staticmethod
    def _epsilon(k_shown, zeta):
        with warnings.catch_warnings():  # an epsilon above 1 is said below, in the page's words
            warnings.filterwarnings("ignore", "epsilon", LeashWarning)
            eps, e_hi = epsilon(min(k_shown), zeta), epsilon(max(k_shown), zeta)
        if len(k_shown) > 1:
            text = (f"At the budgets k = {min(k_shown)} to {max(k_shown)} (each benchmark its "
                    f"own) and zeta = {zeta:g}, epsilon = -ln(zeta)/k = {e_hi:.3g} to "
                    f"{eps:.3g}: ")
            what = f"{e_hi:.3g} (k = {max(k_shown)}) to {eps:.3g} (k = {min(k_shown)})"
        else:
            text = f"At k = {k_shown[0]} and zeta = {zeta:g}, epsilon = -ln(zeta)/k = {eps:.3g}: "
            what = f"{eps:.3g}"
        text += (f"a question that no sample of k finds has, with confidence {1 - zeta:.1%}, a "
                 f"probability of a correct answer below {what} per sample, not zero. \"Not "
                 f"found in k samples\" says p < epsilon; a larger k lowers epsilon, it never "
                 f"reaches 0.")
        if eps >= 1:
            text += (f" At k = {min(k_shown)} epsilon is {eps:.3g}, above 1: a probability "
                     "cannot exceed 1, so there \"not found\" bounds nothing (the bound needs "
                     f"k > -ln(zeta) = {-np.log(zeta):.3g}).")
        return eps, text

    def changes(self, before: View, after: View) -> pd.DataFrame:
        """The questions whose category differs between two views of the same pair and scope."""
        cols = ["question_id", "benchmark", "base c/n", "RLVR c/n", "first correct base/RLVR",
                "before", "after"]
        if (before.codes is None or after.codes is None
                or (before.setting.pair, before.setting.scope)
                != (after.setting.pair, after.setting.scope)):
            return pd.DataFrame(columns=cols)
        sc = self.scope(after.setting.pair, after.setting.scope)
        i = np.flatnonzero(before.codes != after.codes)
        a = sc.arrays
        names = np.asarray(CATEGORIES)

        def cn(side):
            c = a[f"c_{side}"][i].astype(str)
            c[a[f"c_{side}"][i] < 0] = "?"
            return np.char.add(np.char.add(c, "/"), a[f"n_{side}"][i].astype(str))

        fc = ("-" if not sc.has_first else
              [f"{x if x >= 0 else '-'} / {y if y >= 0 else '-'}"
               for x, y in zip(a["fc_base"][i], a["fc_rl"][i])])
        return pd.DataFrame({"question_id": sc.question_id[i], "benchmark": sc.benchmark[i],
                             "base c/n": cn("base"), "RLVR c/n": cn("rl"),
                             "first correct base/RLVR": fc,
                             "before": names[before.codes[i]], "after": names[after.codes[i]]},
                            columns=cols)

    def answers(self, pair: str) -> pd.DataFrame | None:
        """Per question of ``pair`` (indexed by benchmark and question_id): the verdict of its
        one-sided Fisher test at the full budget (FDR 0.05, :func:`leash.analysis.flips.
        flips_table`), both models' most frequent answers and, where the files keep them, one
        response each; None without a study (loaded once per pair).
        """
        if pair in self._answers:
            return self._answers[pair]
        out = None
        if self.src is not None and not self.is_paper:
            from leash.analysis.flips import flips_table, with_answers

            paired = self.paired(pair)
            p = self._pair_objs[pair]
            keys = paired[["benchmark", "question_id"]].astype(str)
            try:
                verdict = flips_table(paired)["verdict"].to_numpy()
            except ValueError:  # counts unknown at the budget: no test, no verdict
                verdict = np.full(len(paired), "")
            summary = self.src.summaries(self.section)
            digest = self.src.study.sample_digest(self.section)
            out = with_answers(keys.assign(verdict=verdict), summary, p.base, p.rl,
                               base_step=p.base_step, responses=digest)
            out = out.drop_duplicates(["benchmark", "question_id"]).set_index(
                ["benchmark", "question_id"])
        self._answers[pair] = out
        return out

    def flips(self, view: View) -> pd.DataFrame | None:
        """The E and S questions of a view (first-k rule): both models' c/n, the verdict of
        the per-question test, their answers and responses; None where a view has no
        categories per question (the paper's counts, the expected rule).
        """
        if view.codes is None:
            return None
        s = view.setting
        sc = self.scope(s.pair, s.scope)
        i = np.flatnonzero((view.codes == 1) | (view.codes == 2))
        a = sc.arrays
        out = pd.DataFrame({"question_id": sc.question_id[i], "benchmark": sc.benchmark[i],
                            "category": np.asarray(COUNT_NAMES)[view.codes[i]]})
        for side, name in (("base", "base"), ("rl", "RLVR")):
            c = a[f"c_{side}"][i]
            out[f"{name} c/n"] = [f"{x if x >= 0 else '?'}/{n}" for x, n in
                                  zip(c, a[f"n_{side}"][i])]
        extra = self.answers(s.pair)
        if extra is not None:
            at = list(zip(out["benchmark"], out["question_id"]))
            verdict = extra["verdict"].reindex(at).fillna("").to_numpy()
            out["verdict"] = np.where(verdict == "", "not significant", verdict)
            for col, name in (("base_answers", "base answers"), ("rl_answers", "RLVR answers"),
                              ("base_response", "base response"),
                              ("rl_response", "RLVR response")):
                if col in extra and extra[col].astype(str).str.len().any():
                    out[name] = extra[col].reindex(at).fillna("").to_numpy()
        return out

    def papermill_command(self, s: Setting) -> str:
        """The papermill call of the notebook that reproduces the support view at ``s``, with
        only parameters that notebook declares.
        """
        study = (self.name if self.src is None or self.is_paper or self.name == "demo"
                 else self.src.inputs())
        if s.k is None or self.is_paper:
            nb = "01_table1_support"
            params = {"study": study, "pairs": [s.pair], "min_count": s.min_count,
                      "n_boot": self.n_boot, "seed": self.seed, "level": self.level,
                      "zeta": s.zeta}
            defaults = {"min_count": 1, "n_boot": 1000, "seed": 0, "level": 0.95, "zeta": 0.05}
        else:
            nb = "10_sensitivity"
            params = {"study": study, "pair": s.pair, "budgets": [s.k],
                      "min_counts": [s.min_count], "zetas": [s.zeta]}
            defaults = {}
        declared = _declared(nb)
        words = [f"papermill notebooks/{nb}.ipynb out.ipynb"]
        for name, value in params.items():
            if name not in declared or defaults.get(name, object()) == value:
                continue
            text = (f"[{', '.join(_yaml_scalar(v) for v in value)}]" if isinstance(value, list)
                    else _yaml_scalar(value))
            words.append(f"-p {name} {shlex.quote(text)}")
        return " ".join(words)


@functools.cache
def _declared(stem: str) -> frozenset:
    """The parameters notebook ``stem`` declares (read once)."""
    from leash import notebook_files
    from leash.paths import NOTEBOOKS
    from leash.run.parameters import notebook_parameters

    return frozenset(notebook_parameters(notebook_files.find(stem, NOTEBOOKS)))


def _yaml_scalar(v) -> str:
    if isinstance(v, str):
        return f'"{v}"' if not v.replace("-", "").replace("_", "").replace(".", "").isalnum() \
            or any(ch in v for ch in " ,[]") else v
    return f"{v:g}" if isinstance(v, float) else str(v)


# ---------------------------------------------------------------- widgets
def _fmt(x) -> str:
    """A metric or interval end as shown: three decimals, "–" for NaN (undefined)."""
    return "–" if x is None or np.isnan(x) else f"{x:.3f}"


def _fmt_count(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


_COLORS = ["#4c72b0", "#55a868", "#c44e52", "#8c8c8c"]


def render_figure(view: View, fig=None):
    """The counts (this setting against the paper's) and the pass@k curves, as one figure.

    Drawn for speed, since a control moves it: fixed margins instead of tight_layout, the
    budgets as plain tick labels at log2 positions (no mathtext), and on a ``fig`` drawn before
    for the same curves only the bars, their labels, the k line and the titles change.
    """
    from matplotlib.figure import Figure

    if fig is None:
        fig = Figure(figsize=(10, 3.4), dpi=90)
    key = (id(view.curve_base), id(view.curve_rl), view.setting.pair, view.setting.scope,
           view.setting.estimator)
    state = getattr(fig, "_leash_state", None)
    if state is None or state["key"] != key:
        state = fig._leash_state = _draw_figure(view, fig)
        state["key"] = key
    for rects, values in ((state["paper"], view.paper_counts), (state["now"], view.counts)):
        for rect, v in zip(rects, values):
            rect.set_height(v)
    for text, rect, v in zip(state["labels"], state["now"], view.counts):
        text.set_position((rect.get_x() + rect.get_width() / 2, v))
        text.set_text(_fmt_count(v))
    state["ax1"].set_ylim(0, 1.12 * max(max(view.counts), max(view.paper_counts), 1))
    k_now = view.setting.k if view.setting.k is not None else max(view.k_shown)
    if state["kline"] is not None:
        state["kline"].set_xdata([np.log2(k_now)] * 2)
    state["ax2"].set_title(f"pass@k ({view.setting.estimator}); red line: k = {k_now}",
                           fontsize=9)
    return fig


def _draw_figure(view: View, fig) -> dict:
    """Draw the axes, bars and curves of ``view`` afresh; the artists an update moves."""
    fig.clear()
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.9, wspace=0.22)
    x = np.arange(4)
    paper = ax1.bar(x - 0.2, view.paper_counts, 0.4, color=_COLORS, alpha=0.35,
                    label="paper's setting")
    now = ax1.bar(x + 0.2, view.counts, 0.4, color=_COLORS, label="this setting")
    labels = [ax1.text(0, 0, "", ha="center", va="bottom", fontsize=8) for _ in range(4)]
    ax1.set_xticks(x, ["P preserved", "E expanded", "S shrunk", "O out"], fontsize=8)
    ax1.set_ylabel("questions")
    ax1.set_title("support categories: this setting (solid) vs the paper's (light)", fontsize=9)
    kline = None
    if view.curve_base is not None:
        lx = np.log2(view.ks)
        style = "o-" if len(view.ks) > 1 else "o"
        ax2.plot(lx, view.curve_base, style, ms=3, color="#4c72b0", label="base")
        ax2.plot(lx, view.curve_rl, style, ms=3, color="#dd8452", label="RLVR")
        step = max(1, len(lx) // 8)
        ax2.set_xticks(lx[::step], [str(int(k)) for k in view.ks[::step]], fontsize=8)
        if view.crossover is not None and not np.isnan(view.crossover):
            c = np.log2(view.crossover)
            ax2.axvline(c, color="0.3", ls=":", lw=1)
            ax2.text(c, 0.03, f" crossover k = {int(view.crossover)}", fontsize=8, rotation=90,
                     ha="right", va="bottom")
        kline = ax2.axvline(0, color="#c44e52", lw=1.5, alpha=0.7)
        ax2.set_xlim(lx[0] - 0.3, lx[-1] + 0.3)
        ax2.set_ylim(-0.02, 1.02)
        ax2.set_xlabel("budget k (samples, log scale)")
        ax2.set_ylabel("pass@k")
        ax2.legend(fontsize=8, frameon=False, loc="lower right")
    else:
        ax2.text(0.5, 0.5, "no pass@k curve for these data", ha="center", va="center",
                 transform=ax2.transAxes)
    return {"ax1": ax1, "ax2": ax2, "paper": list(paper), "now": list(now), "labels": labels,
            "kline": kline}


def figure_png(view: View, fig=None) -> bytes:
    """:func:`render_figure` as PNG bytes."""
    buf = io.BytesIO()
    render_figure(view, fig).savefig(buf, format="png")
    return buf.getvalue()


def metrics_html(view: View) -> str:
    """The counts and metrics at this setting against the paper's setting (an HTML table)."""
    rows = []
    for i, name in enumerate(COUNT_NAMES):
        rows.append((name, _fmt_count(view.counts[i]), _fmt_count(view.paper_counts[i]), ""))
    for m in METRIC_NAMES:
        ci = ""
        if view.intervals:
            lo, hi = view.intervals[m]
            ci = f"[{_fmt(lo)}, {_fmt(hi)}]"
        rows.append((m, _fmt(float(view.metrics[m])), _fmt(float(view.paper_metrics[m])), ci))
    head = ("<tr><th></th><th>this setting</th><th>paper's setting</th><th>"
            + ("bootstrap interval" if view.intervals else "") + "</th></tr>")
    body = "".join(f"<tr><td><b>{a}</b></td><td>{b}</td><td>{c}</td><td>{d}</td></tr>"
                   for a, b, c, d in rows)
    return f"<table class='leash-metrics'>{head}{body}</table>"


def changes_html(frame: pd.DataFrame, moved: str) -> str:
    """A short table of the questions that changed category."""
    if moved == "":
        return "<i>Move a control to see which questions change category.</i>"
    if frame is None:
        return f"<i>{html.escape(moved)}</i>"
    n = len(frame)
    head = (f"<b>{n} question{'s' if n != 1 else ''} changed category</b> when "
            f"{html.escape(moved)}" + (f" (first {CHANGES_SHOWN} shown)" if n > CHANGES_SHOWN
                                       else "") + ".")
    if not n:
        return head
    return head + frame.head(CHANGES_SHOWN).to_html(index=False, border=0)


def flips_html(frame: pd.DataFrame | None) -> str:
    """A short table of a view's E and S questions (responses cut to a line)."""
    if frame is None:
        return ("<i>Per-question flips need per-question data and a category per question "
                "(the first-k rule).</i>")
    n = len(frame)
    head = (f"<b>{n} E and S question{'s' if n != 1 else ''} at this setting</b>"
            + (f" (first {FLIPS_SHOWN} shown)" if n > FLIPS_SHOWN else "")
            + ("; verdict: the one-sided Fisher test at the full budget, FDR 0.05"
               if "verdict" in frame else "") + ".")
    if not n:
        return head
    shown = frame.head(FLIPS_SHOWN).copy()
    for col in ("base response", "RLVR response"):
        if col in shown:
            shown[col] = [t if len(t) <= RESPONSE_SHOWN else t[:RESPONSE_SHOWN] + "..."
                          for t in shown[col].astype(str)]
    return head + shown.to_html(index=False, border=0)


def explore(study="paper", *, pair=None, benchmark=None, section="support", n_boot=1000, seed=0,
            level=0.95, model=None):
    """The live explorer, an ipywidgets app over one source.

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper"
        ``"paper"`` (the paper's printed counts: per benchmark, no per-question data, so only
        the pair, benchmark and zeta can move), ``"demo"`` (SIMULATED) or a study file.
    pair, benchmark : str, optional
        The pair and benchmark (or pooled row, e.g. ``"Overall"``) shown first; default the
        first pair and its first benchmark.
    section : str, default "support"
        Study section of the pairs.
    n_boot, seed, level
        Bootstrap intervals of the metrics (per-question data only; 0: none).
    model : ExplorerModel, optional
        A model already loaded (``study`` and the rest are then its own).

    Returns
    -------
    ipywidgets.VBox
        The app; ``.controls`` (name -> widget), ``.widgets`` (the views), ``.model``,
        ``.view`` (the :class:`View` shown), ``.changes`` (the last table of questions that
        changed category), ``.last_update_s`` and ``.reset_button``; ``.widgets["flips"]``
        lists the setting's E and S questions (:meth:`ExplorerModel.flips`).
    """
    m = model or ExplorerModel(study, section=section, n_boot=n_boot, seed=seed, level=level)
    pair = pair or m.pairs[0]
    if pair not in m.pairs:
        raise LeashValueError(f"no pair {pair!r}; pairs: {m.pairs}", func="explore",
                              param="pair", value=pair)
    scopes = m.scopes(pair)
    benchmark = benchmark or scopes[0]
    if benchmark not in scopes:
        raise LeashValueError(f"no benchmark {benchmark!r} for pair {pair!r}; available: "
                              f"{scopes}", func="explore", param="benchmark", value=benchmark)
    return _Controller(m, pair, benchmark).app


@functools.cache
def _app_class():
    """The app's class: an ``ipywidgets.VBox`` that also offers its figure as a PNG, which a
    page that cannot run widgets (nbconvert's HTML, the site, a notebook viewer) shows instead.
    """
    import base64

    import ipywidgets as W

    class ExplorerApp(W.VBox):
        def _repr_mimebundle_(self, **kwargs):
            data = super()._repr_mimebundle_(**kwargs)
            png = self.widgets["image"].value
            if png:
                data["image/png"] = base64.b64encode(png).decode("ascii")
            return data

    return ExplorerApp


class _Controller:
    """The widgets of :func:`explore` and what a control change does."""

    def __init__(self, m: ExplorerModel, pair: str, benchmark: str):
        import ipywidgets as W

        self.m, self.busy, self.fig = m, False, None
        style = {"description_width": "90px"}
        opening = m.opening(pair, benchmark)
        c = self.controls = {
            "pair": W.Dropdown(options=m.pairs, value=pair, description="model pair",
                               style=style),
            "benchmark": W.Dropdown(options=m.scopes(pair), value=benchmark,
                                    description="benchmark", style=style),
            "k": W.SelectionSlider(options=m.budget_options(pair, benchmark), value=FULL,
                                   description="budget k", style=style,
                                   layout=W.Layout(width="420px"), continuous_update=False),
            "min_count": W.IntSlider(value=1, min=1, max=1, description="min_count",
                                     style=style, continuous_update=False),
            "zeta": W.SelectionSlider(options=list(ZETAS), value=0.05, description="zeta",
                                      style=style, continuous_update=False),
            "estimator": W.ToggleButtons(options=list(ESTIMATORS), value=opening.estimator,
                                         description="pass@k", style=style),
            "rule": W.ToggleButtons(options=list(RULES), value=opening.rule,
                                    description="below full k", style=style),
        }
        reset = W.Button(description="paper's setting", icon="undo",
                         tooltip="k = full budget, min_count = 1, zeta = 0.05, the study's "
                         "pass@k estimator")
        w = self.widgets = {name: W.HTML() for name in ("title", "note", "metrics", "epsilon",
                                                         "changes", "flips", "command")}
        w["image"] = W.Image(format="png", layout=W.Layout(width="900px"))  # 1:1, not blurred
        w["changes"].value = changes_html(None, "")
        app = self.app = _app_class()([
            w["title"], W.HBox([c["pair"], c["benchmark"], reset]),
            W.HBox([c["k"], c["min_count"]]), c["zeta"], c["estimator"], c["rule"], w["note"],
            w["image"], W.HBox([w["metrics"], W.HTML(layout=W.Layout(width="24px")),
                                w["epsilon"]]), w["changes"], w["flips"], w["command"]])
        app.model, app.controls, app.widgets, app.reset_button = m, c, w, reset
        app.view, app.changes, app.last_update_s = None, None, 0.0
        app.to_paper = self.to_paper
        label = "SIMULATED data, not the paper's" if m.simulated else m.title
        w["title"].value = (
            f"<h3 style='margin:4px 0'>Support explorer – {html.escape(label)}</h3><small>The "
            "Invisible Leash (arXiv 2507.14843): a question is <i>found</i> when at least "
            "min_count of a model's first k samples are correct.</small>")
        for name, widget in c.items():
            widget.observe(functools.partial(self.on_change, name), names="value")
        reset.on_click(self.to_paper)
        self.refresh("")

    def setting(self) -> Setting:
        c = self.controls
        return Setting(c["pair"].value, c["benchmark"].value, c["k"].value or None,
                       c["min_count"].value, c["zeta"].value, c["estimator"].value,
                       c["rule"].value)

    def bound(self):
        """Enable what the source and setting can serve; say in one line why the rest is
        fixed.
        """
        c, m, s = self.controls, self.m, self.setting()
        why = []
        if m.is_paper:
            for name in ("k", "min_count", "estimator", "rule"):
                c[name].disabled = True
            why.append("The paper prints per-benchmark counts only, no per-question data: the "
                       "budget, min_count, estimator and rule stay at the paper's setting, and "
                       "there are no bootstrap intervals, pass@k curves or per-question "
                       "changes (use study=\"demo\" or a study file).")
        else:
            top = m.max_min_count(s)
            rules, estimators = m.rules(s.pair, s.scope), m.estimators(s.pair, s.scope)
            c["min_count"].max = max(top, 1)
            c["min_count"].disabled = top <= 1
            c["k"].disabled = len(c["k"].options) <= 1
            c["rule"].disabled = s.k is None or len(rules) <= 1
            c["estimator"].disabled = len(estimators) <= 1
            if top <= 1 and s.k is not None and s.rule == "first-k":
                why.append("Below the full budget the first-k rule knows only each question's "
                           "first correct sample, so min_count is 1; choose the expected rule "
                           "for more.")
            if c["k"].disabled:
                why.append("These data have no first-correct indices and no correct counts: "
                           "only the full budget.")
            elif rules == ("expected",):
                why.append("These data have no first-correct indices (counts): below the full "
                           "budget a question is found with the probability that min_count of "
                           "a random k of its samples are correct (the expected rule, as "
                           "notebook 10), and pass@k is Chen et al.'s unbiased estimator.")
        self.widgets["note"].value = "<br>".join(f"<i>{html.escape(x)}</i>" for x in why)

    def refresh(self, moved=""):
        """Recompute the view of the current setting and show it."""
        if self.busy:
            return
        t = time.perf_counter()
        m, w, app = self.m, self.widgets, self.app
        self.bound()
        before = app.view
        view = app.view = m.view(self.setting())
        if self.fig is None:
            from matplotlib.figure import Figure

            self.fig = Figure(figsize=(10, 3.4), dpi=90)
        w["image"].value = figure_png(view, self.fig)
        w["metrics"].value = metrics_html(view)
        w["epsilon"].value = (f"<div style='max-width:420px'><b>epsilon = {view.epsilon:.4g}"
                              f"</b><br>{html.escape(view.epsilon_text)}</div>"
                              + "".join(f"<br><i>{html.escape(n)}</i>" for n in view.notes))
        if m.is_paper:
            app.changes = None
            w["changes"].value = changes_html(None, "No per-question data in the paper's "
                                                    "numbers.")
        elif before is not None and moved:
            if view.codes is None or before.codes is None:
                app.changes = None
                w["changes"].value = changes_html(None, "The expected rule gives each question "
                                                        "a probability per category, not one "
                                                        "category.")
            else:
                app.changes = m.changes(before, view)
                w["changes"].value = changes_html(app.changes, moved)
        w["flips"].value = ("<i>No per-question data in the paper's numbers.</i>" if m.is_paper
                            else flips_html(m.flips(view)))
        w["command"].value = ("Reproduce as a notebook run: <code>"
                              + html.escape(m.papermill_command(view.setting)) + "</code>")
        app.last_update_s = time.perf_counter() - t

    def _quietly(self, **values):
        """Set controls without a refresh for each."""
        self.busy = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self.busy = False

    def on_change(self, name, change):
        c, m = self.controls, self.m
        if name in ("pair", "benchmark"):
            self.busy = True
            try:
                if name == "pair":
                    c["benchmark"].options = m.scopes(c["pair"].value)
                opts = m.budget_options(c["pair"].value, c["benchmark"].value)
                keep = c["k"].value
                c["k"].options = opts
                c["k"].value = keep if keep in [v for _, v in opts] else FULL
                opening = m.opening(c["pair"].value, c["benchmark"].value)
                if c["rule"].value not in m.rules(c["pair"].value, c["benchmark"].value):
                    c["rule"].value = opening.rule
                if c["estimator"].value not in m.estimators(c["pair"].value,
                                                            c["benchmark"].value):
                    c["estimator"].value = opening.estimator
            finally:
                self.busy = False
            self.app.view = None  # another set of questions: nothing to compare with
            self.refresh("")
            self.widgets["changes"].value = changes_html(None, "")
            return
        if name in ("k", "rule") and not m.is_paper \
                and c["min_count"].value > m.max_min_count(self.setting()):
            self._quietly(min_count=1)
        old, new = (("the full budget" if v == FULL and name == "k" else v)
                    for v in (change["old"], change["new"]))
        self.refresh(f"{name} moved from {old} to {new}")

    def to_paper(self, _=None):
        """Back to the paper's setting, with the study's estimator (the button)."""
        o = self.m.opening(self.controls["pair"].value, self.controls["benchmark"].value)
        self._quietly(rule=o.rule, k=FULL, min_count=1, zeta=0.05, estimator=o.estimator)
        self.refresh("the paper's setting was restored")
