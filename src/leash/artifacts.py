"""One function per paper artifact: the tables and plotted numbers the notebooks show and save.

Each function takes a ``study`` and returns DataFrames; notebooks only lay them out and save
them. Each notebook run has one source, its ``study`` parameter:

* ``"paper"`` (the default): the paper's printed counts and values (``data/paper/``, via
  :mod:`leash.paper`), for every artifact the paper prints numbers for;
* ``"demo"``: the SIMULATED demo study (``data/studies/demo.yaml``), per-question data shaped
  like the paper's study, which adds what printed counts cannot give (bootstrap intervals,
  entropies, checkpoint trajectories);
* any study file (``data/studies/*.yaml``, :mod:`leash.study`): per-question summaries of real
  generations, paired per model pair, then the same tables.

Whatever the input, the result has the same columns, so a notebook never branches on it beyond
choosing titles ("simulated" is said whenever the data are). ``make reproduce`` runs each
artifact notebook once on the paper's numbers and once on the demo (``notebooks/runs.yaml``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import paper as _paper
from .stats import mcnemar_exact
from .study import Study, load_study
from .support import support_metrics
from .tables import entropy_table, passk_table, support_from_counts, support_table

__all__ = [
    "PAPER",
    "open_study",
    "source",
    "has_section_data",
    "artifact_name",
    "slug",
    "caption",
    "inputs",
    "describe_source",
    "is_simulated",
    "DEFAULT_ESTIMATOR",
    "resolve_estimator",
    "estimator_note",
    "budget_text",
    "resolve_na",
    "na_note",
    "support_long",
    "table1",
    "table1_caption",
    "appendix_table",
    "float_formats",
    "figure1_data",
    "gym_curves",
    "sft_support",
    "sft_passk",
    "checkpoint_support",
    "entropy_long",
    "entropy_wide",
    "entropy_pairs",
    "table2",
    "table2_wide",
    "answer_cases",
]

_REPO = Path(__file__).resolve().parents[2]
PAPER = "paper"
METRICS = ["SRR", "NDR", "SDS", "NSCR"]
COUNTS = ["P", "E", "S", "O"]
LONG_COLUMNS = ["pair", "scope", "benchmark", "domain", "N", "k", "k_min", "k_max",
                "pass@k base", "pass@k rl",
                *COUNTS, *METRICS, "mcnemar_p", "E/(E+S) low", "E/(E+S) high"]
MATH_5 = ["AIME2024", "AMC23", "MATH500", "Minerva", "OlympiadBench"]  # Table 5's columns
#: The pass@k estimator of the artifacts when neither the caller nor the study names one: the
#: first k samples, which the paper's printed pass@k tables use (``leash.passk``).
DEFAULT_ESTIMATOR = "first-k"


def open_study(study: str | Study = PAPER):
    """Resolve a notebook's ``study`` parameter.

    Parameters
    ----------
    study : str or Study
        ``"paper"``, a shipped study name (``"demo"``, ``"gsm8k-probe"``...) or the path of a
        study file.

    Returns
    -------
    "paper" or Study
    """
    if isinstance(study, Study):
        return study
    if study == PAPER:
        return PAPER
    if study == "embedded":
        raise ValueError("study='embedded' is gone: a notebook runs on one source, 'paper' (the "
                         "paper's printed numbers), 'demo' (the simulated study) or a study "
                         "file; `make reproduce` runs both 'paper' and 'demo'.")
    return load_study(study)


def has_section_data(src, section: str) -> bool:
    """Whether a study can feed a section: it lists sources there, or simulates it."""
    if src == PAPER or section not in src.sections:
        return False
    sec = src.sections[section]
    return bool(sec.sources) or bool(sec.options.get("simulated"))


def source(study: str | Study = PAPER, *, section: str | None = None, paper: bool = True):
    """The one input a notebook runs on; skip the notebook when it has no data for it.

    Parameters
    ----------
    study : str or Study
        The notebook's ``study`` parameter (see :func:`open_study`).
    section : str, optional
        The study section the artifact needs (``"support"``, ``"gym"``...).
    paper : bool, default True
        Whether the paper's printed numbers can serve this artifact.

    Returns
    -------
    "paper" or Study

    Raises
    ------
    leash.notebook.SkipNotebook
        With a one-line reason, when the source has no data for this artifact (the paper prints
        nothing for it, or the study's section is missing or empty).
    """
    from .notebook import SkipNotebook

    src = open_study(study)
    if src == PAPER:
        if not paper:
            raise SkipNotebook("the paper prints no per-question data for this artifact; run it "
                               "with study='demo' or a study file")
        return src
    if section is not None and not has_section_data(src, section):
        raise SkipNotebook(
            f"study {src.name!r} has no data for this artifact: its section {section!r} is "
            f"missing or lists no sources (sections: {sorted(src.sections)})")
    return src


def label(src) -> str:
    """The short name of a source: ``"paper"``, or the study's name (``"demo"``...)."""
    return PAPER if src == PAPER else src.name


def artifact_name(stem: str, src) -> str:
    """File stem of an artifact: ``stem`` for the paper's numbers, ``stem_<source>`` otherwise
    (``table1_demo``), so runs on different sources can share an output folder."""
    name = src if isinstance(src, str) else label(src)
    return stem if name == PAPER else f"{stem}_{slug(name)}"


def slug(label: str) -> str:
    """A file-name-safe form of a label: "SFT -> PPO (final)" -> "sft-ppo-final"."""
    import re

    out = re.sub(r"[^A-Za-z0-9.]+", "-", str(label)).strip("-.").lower()
    return out or "x"


def caption(text: str, src, *, paper: str = "the paper's printed numbers") -> str:
    """A caption naming the data; it says "simulated" whenever the data are.

    ``"Table 1 (the paper's printed numbers)"``, ``"Table 1 – SIMULATED demo, not the
    paper's data"``: a dash before a study's title, which may have parentheses of its own.
    """
    from .report import simulated_label

    if src == PAPER:
        return f"{text} ({paper})"
    out = f"{text} – {src.title}"
    return simulated_label(out) if src.simulated else out


def inputs(src) -> str:
    """What to record as an artifact's input data."""
    if src == PAPER:
        return "data/paper/"
    return str(src.source.relative_to(_REPO)) if src.source and src.source.is_relative_to(
        _REPO) else (str(src.source) if src.source else src.name)


def is_simulated(src) -> bool:
    """Whether the source is simulated data (its artifacts must say so)."""
    return isinstance(src, Study) and src.simulated


def describe_source(src) -> str:
    """A one-line description of the data behind an artifact, for captions and the index."""
    if src == PAPER:
        return "the paper's printed counts (data/paper/)"
    label = "SIMULATED demo data, not the paper's" if src.simulated else "generations"
    return f"{src.title} [{label}; study file {src.source.name if src.source else src.name}]"


def resolve_estimator(src, section: str, estimator: str | None = None) -> tuple[str, str]:
    """The pass@k estimator a run uses, and where it comes from.

    The notebook's ``estimator`` when given, else the study section's ``estimator``, else
    :data:`DEFAULT_ESTIMATOR` ("first-k", as the paper's tables). For ``"paper"``: the printed
    values, which fit "first-k".

    Returns
    -------
    (str, str)
        The estimator and a phrase saying where it comes from.
    """
    if src == PAPER:
        return DEFAULT_ESTIMATOR, "the paper's printed values (they fit it; the paper names none)"
    if estimator:
        return estimator, "the notebook's `estimator` parameter"
    sec = src.sections.get(section)
    if sec is not None and sec.options.get("estimator"):
        return sec.options["estimator"], f"the study's `{section}` section"
    return DEFAULT_ESTIMATOR, "the default (the paper's tables use it)"


def estimator_note(src, section: str, estimator: str | None = None) -> str:
    """One line for a notebook: which pass@k estimator its run uses, and why."""
    if src == PAPER:
        return ("pass@k: the paper's printed values, which fit the first-k estimator (the paper "
                "states none); the `estimator` parameter does not apply.")
    value, origin = resolve_estimator(src, section, estimator)
    what = {"first-k": "the first k samples in generation order, as the paper's tables",
            "unbiased": "Chen et al.'s unbiased estimator, from all n samples"}[value]
    return f"pass@k estimator: {value} ({what}), from {origin}."


def budget_text(ks) -> str:
    """The budgets of a table's ``k`` column for a caption: ``"256"``, ``"2048/8192"``."""
    out = []
    for k in ks:
        if pd.isna(k):
            continue
        text = str(int(k)) if isinstance(k, (int, float, np.integer, np.floating)) and float(
            k).is_integer() else str(k)
        if text not in out:
            out.append(text)
    return "/".join(out)


def _paper_domains() -> dict:
    b = _paper.load_benchmarks()
    return dict(zip(b["benchmark"], b["domain"]))


def _with_pass_and_tests(t: pd.DataFrame) -> pd.DataFrame:
    t = t.copy()
    t["pass@k base"] = (t["P"] + t["S"]) / t["N"]
    t["pass@k rl"] = (t["P"] + t["E"]) / t["N"]
    tests = [mcnemar_exact(int(e), int(s)) for e, s in zip(t["E"], t["S"])]
    t["mcnemar_p"] = [r.p_value for r in tests]
    t["E/(E+S) low"] = [r.ci_low for r in tests]
    t["E/(E+S) high"] = [r.ci_high for r in tests]
    return t


def _paper_support(tables, *, by=("pair",)) -> pd.DataFrame:
    sc = _paper.load_support_counts()
    sc = sc[sc["table"].astype(int).isin(tables)]
    t = support_from_counts(sc, by=list(by), domains=_paper_domains())
    k = sc.drop_duplicates(["pair", "benchmark"]).set_index(["pair", "benchmark"])["k"]
    t["k"] = pd.array([k.get((p, b), pd.NA) for p, b in zip(t["pair"], t["benchmark"])],
                      dtype="Int64")  # printed per benchmark only
    return _with_pass_and_tests(t.assign(k_min=t["k"], k_max=t["k"]))


def support_long(study=PAPER, *, section="support", pairs=None, min_count=1, k=None,
                 n_boot=0, seed=0, level=0.95):
    """Support dynamics of every pair, per benchmark and pooled (Tables 1 and 6-12, long form).

    Parameters
    ----------
    study : str or Study, default "paper" (the paper's printed counts)
    section : str, default "support"
        Study section (``"support"``; ``"sft"`` for Table 3).
    pairs : list of str, optional
        Pair labels to keep (default: all).
    min_count : int, default 1
        Correct samples for "found" (generations only; printed counts are fixed at 1).
    k : int, optional
        Budget below the number of samples (generations only; first k samples).
    n_boot, seed, level
        Bootstrap intervals (generations only: printed counts have no per-question data).

    Returns
    -------
    pandas.DataFrame
        Columns ``pair, scope, benchmark, domain, N, k, k_min, k_max, pass@k base, pass@k rl,
        P, E, S, O, SRR, NDR, SDS, NSCR, mcnemar_p, E/(E+S) low, E/(E+S) high`` (+ CI
        columns); the budgets are integers, ``k`` NA where a row's budgets differ.
    """
    src = open_study(study)
    if src == PAPER:
        table = {"support": [6, 7, 8, 9, 10, 11, 12], "sft": [3]}[section]
        t = _paper_support(table)
        if section == "support":
            # ProRL-1.5B-v2 has no appendix table: its printed domain counts (Table 1).
            t1 = _paper.load_table1()
            v2 = t1[t1["model"] == "ProRL-1.5B-v2"].rename(columns={"model": "pair"})
            v2 = v2.assign(scope=np.where(v2["domain"] == "overall", "overall", "domain"),
                           benchmark=v2["domain"].map({"math": "Math", "non-math": "Non-Math",
                                                       "overall": "Overall"}),
                           domain=np.where(v2["domain"] == "overall", "", v2["domain"]))
            v2["N"] = v2[COUNTS].sum(axis=1)
            m = support_metrics(*(v2[c].to_numpy(float) for c in COUNTS))
            for name, values in zip(METRICS, m):
                v2[name] = values
            v2 = _with_pass_and_tests(v2[["pair", "scope", "benchmark", "domain", "N", *COUNTS,
                                          *METRICS]])
            order = list(dict.fromkeys(_paper.load_pairs()["pair"]))
            t = pd.concat([t, v2], ignore_index=True)
            t["_o"] = t["pair"].map({p: i for i, p in enumerate(order)})
            t = t.sort_values("_o", kind="stable").drop(columns="_o").reset_index(drop=True)
    else:
        sec = src.section(section)
        rng = np.random.default_rng(seed)
        frames = []
        for p in sec.pairs:
            paired = src.paired(section, p)
            f = support_table(paired, k=k, min_count=min_count, domains=src.domains,
                              n_boot=n_boot, rng=rng if n_boot else None, level=level)
            f.insert(0, "pair", p.label)
            frames.append(f)
        t = pd.concat(frames, ignore_index=True)
    t = t[[*LONG_COLUMNS, *[c for c in t.columns if c not in LONG_COLUMNS]]]
    t = t.astype({"k": "Int64", "k_min": "Int64", "k_max": "Int64"})
    if pairs:
        unknown = sorted(set(pairs) - set(t["pair"]))
        if unknown:
            known = list(dict.fromkeys(t["pair"]))
            raise ValueError(f"Unknown pair(s) {unknown}; available: {known}.")
        t = t[t["pair"].isin(pairs)].reset_index(drop=True)
    return t


def table1(long: pd.DataFrame) -> pd.DataFrame:
    """Table 1's layout: pooled rows per model and domain (Math, Non-Math, Overall).

    Pooling needs at least two benchmarks; a pair with one benchmark only shows that
    benchmark's row (its ``Domain`` is the benchmark's name; :func:`table1_caption` says so).

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`support_long` result.

    Returns
    -------
    pandas.DataFrame
        ``Model, Domain, SRR, NDR, SDS, NSCR, P, E, S, O`` (unrounded; the paper prints 2
        decimals, which fit the pooled metric rounded half-up to 3 decimals and then to 2 in 79
        of its 80 metric cells: see :func:`leash.paper.rebuild_table1`).
    """
    pooled = long["scope"].isin(["domain", "overall"])
    single = (long["scope"] == "benchmark") & ~long["pair"].isin(long.loc[pooled, "pair"])
    out = long[pooled | single].rename(columns={"pair": "Model", "benchmark": "Domain"})
    return out[["Model", "Domain", *METRICS, *COUNTS]].reset_index(drop=True)


def table1_caption(long: pd.DataFrame, src) -> str:
    """Table 1's caption for ``long``, saying which models are shown per benchmark unpooled."""
    pooled = set(long.loc[long["scope"].isin(["domain", "overall"]), "pair"])
    single = [p for p in dict.fromkeys(long["pair"]) if p not in pooled]
    text = "Table 1: aggregate support dynamics per model and domain"
    if single:
        text += (f"; {', '.join(single)}: one benchmark only, shown as that benchmark's row "
                 f"(pooling needs at least two)")
    return caption(text, src)


def appendix_table(long: pd.DataFrame, pair: str, *, zeta=None) -> pd.DataFrame:
    """The appendix layout (Tables 6-12) for one pair: per benchmark, then "Agg" rows.

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`support_long` result.
    pair : str
        Pair label.
    zeta : float, optional
        With it, a column ``epsilon`` = -ln(zeta)/k: the probability below which a correct
        answer never seen in the k samples is taken to lie (per benchmark; NaN on pooled rows
        whose budgets differ).

    Returns
    -------
    pandas.DataFrame
        ``Dataset, k, k_min, k_max, pass@k Base (%), pass@k RLVR (%), SRR, NDR, SDS, NSCR, P,
        E, S, O, McNemar p`` plus the bootstrap interval columns present in ``long``; ``k`` is
        NA on a pooled row whose benchmarks have different budgets (``k_min`` to ``k_max``).
    """
    t = long[long["pair"] == pair]
    if t.empty:
        raise ValueError(f"No rows for pair {pair!r}; pairs: {list(dict.fromkeys(long.pair))}.")
    ds = np.where(t["scope"] == "benchmark", t["benchmark"], "Agg " + t["benchmark"])
    out = pd.DataFrame({"Dataset": ds, **{c: t[c].array for c in ("k", "k_min", "k_max")},
                        "pass@k Base (%)": 100 * t["pass@k base"].to_numpy(),
                        "pass@k RLVR (%)": 100 * t["pass@k rl"].to_numpy()})
    if zeta is not None:
        from .support import epsilon

        k = t["k"].to_numpy(dtype=float, na_value=np.nan)
        ok = np.isfinite(k) & (k >= 1)
        eps = np.full(k.shape, np.nan)
        eps[ok] = epsilon(k[ok].astype(np.int64), zeta)
        out.insert(out.columns.get_loc("k_max") + 1, "epsilon", eps)
    out.loc[(t["scope"] != "benchmark").to_numpy(), ["pass@k Base (%)", "pass@k RLVR (%)"]] = np.nan
    for c in [*METRICS, *COUNTS]:
        out[c] = t[c].to_numpy()
    out["McNemar p"] = t["mcnemar_p"].to_numpy()
    for c in [c for c in t.columns if c.endswith((" low", " high")) and c.split()[0] in METRICS]:
        out[c] = t[c].to_numpy()
    return out


_FORMATS = {"epsilon": "{:.2e}", "pass@k Base (%)": "{:.1f}", "pass@k RLVR (%)": "{:.1f}",
            "McNemar p": "{:.3g}", "mcnemar_p": "{:.3g}", "pass@k base": "{:.3f}",
            "pass@k rl": "{:.3f}"}


def float_formats(table: pd.DataFrame, default: str = "{:.3f}") -> dict:
    """Display formats (Markdown/LaTeX) for the columns of ``table``: p-values and epsilon in
    significant digits, percentages with one decimal, everything else ``default``."""
    return {c: _FORMATS.get(c, default) for c in table.columns}


def figure1_data(long: pd.DataFrame, pair: str | None = None, *, benchmarks=None,
                 leave_out=()):
    """Figure 1's bars: base vs RLVR pass@k at the largest budget per benchmark (long form).

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`support_long` result.
    pair : str, optional
        Default: the first pair (the paper: ProRL-1.5B-v1).
    benchmarks : list of str, optional
        Default: every benchmark of the pair.
    leave_out : sequence of str
        Benchmarks to leave out (the paper's figure omits MATH500), unless that would leave
        none: a study whose only benchmark is MATH500 still gets its bars.

    Returns
    -------
    pandas.DataFrame
        ``benchmark, domain, k, model, role, pass_at_k`` (two rows per benchmark).
    """
    pair = pair or long["pair"].iat[0]
    t = long[(long["pair"] == pair) & (long["scope"] == "benchmark")]
    if benchmarks:
        t = t[t["benchmark"].isin(benchmarks)]
    if leave_out and not t["benchmark"].isin(leave_out).all():
        t = t[~t["benchmark"].isin(leave_out)]
    rows = []
    for _, r in t.iterrows():
        for role, col, name in (("base", "pass@k base", "Base"), ("rlvr", "pass@k rl", "RLVR")):
            rows.append({"benchmark": r["benchmark"], "domain": r["domain"], "k": r["k"],
                         "model": name, "role": role, "pass_at_k": r[col]})
    return pd.DataFrame(rows)


def gym_curves(study=PAPER, *, estimator=None, n_boot=0, seed=0, level=0.95):
    """Reasoning Gym pass@k curves (Figures 2-4): k = 1, 2, 4, ... up to each task's budget.

    With ``study="paper"`` only Figure 4's series exist (read off the paper's plot, approximate);
    Figures 2 and 3 print no values, so only a study (the demo) draws them. A study's task
    budget is its declared one (the benchmark's ``budget``, or the pair's ``budgets`` for
    ``reasoning-gym``), else the samples per question; the curve is k = 1, 2, 4, ... up to it
    (and the budget itself).

    Parameters
    ----------
    study : str or Study, default "paper"
    estimator : {"first-k", "unbiased"}, optional
        Generations only. Default: the ``gym`` section's ``estimator``, else "first-k" (the
        decoded values of Figure 4 fit it: multiples of 1/N that repeat from one k to the
        next). Both use every sample the data have: "first-k" the first k, "unbiased" all n.
    n_boot, seed, level
        Bootstrap bands (generations only).

    Returns
    -------
    pandas.DataFrame
        ``task, model, role, k, pass_at_k`` (+ ``low, high`` with ``n_boot``), ``estimator``
        and ``approximate`` (True for the paper's decoded series).
    """
    src = open_study(study)
    if src == PAPER:
        f = _paper.load_rg_figure4()
        return pd.DataFrame({"task": f["task"], "model": f["series"],
                             "role": np.where(f["series"] == "Base", "base", "rlvr"),
                             "k": f["k"], "pass_at_k": f["pass_at_k"], "estimator": "first-k",
                             "approximate": f["approximate"].astype(bool)})
    from .tables import default_ks

    sec = src.section("gym")
    estimator = resolve_estimator(src, "gym", estimator)[0]
    summary = src.summaries("gym")
    rng = np.random.default_rng(seed)
    frames = []
    for p in sec.pairs:
        budgets = src.budgets("gym", p)
        paired = src.paired("gym", p, at_budgets=False)  # the curve stops at the budget
        for task, g in paired.groupby("benchmark", sort=True):
            ks = default_ks(budgets.get(task, int(g["n_base"].min())))
            if n_boot:
                from .stats import bootstrap_pass_at_k

                b = bootstrap_pass_at_k(g["n_base"], g["c_base"], g["n_rl"], g["c_rl"], ks,
                                        rng=rng, n_boot=n_boot, level=level, estimator=estimator,
                                        first_correct_base=g["first_correct_base"],
                                        first_correct_rl=g["first_correct_rl"])
                b = b[b["series"] != "rlvr - base"]
                f = pd.DataFrame({"task": task, "k": b["k"], "pass_at_k": b["estimate"],
                                  "low": b["low"], "high": b["high"],
                                  "model": np.where(b["series"] == "base", p.base, p.rl),
                                  "role": np.where(b["series"] == "base", "base", "rlvr")})
            else:
                parts = []
                for role, model in (("base", p.base), ("rlvr", p.rl)):
                    s = summary[(summary["model"] == model) & (summary["benchmark"] == task)]
                    pk = passk_table(s, ks, estimator=estimator)
                    parts.append(pd.DataFrame({"task": task, "k": pk["k"],
                                               "pass_at_k": pk["pass_at_k"], "model": model,
                                               "role": role}))
                f = pd.concat(parts, ignore_index=True)
            frames.append(f)
    out = pd.concat(frames, ignore_index=True)
    out["estimator"] = estimator
    out["approximate"] = False
    cols = ["task", "model", "role", "k", "pass_at_k", *(["low", "high"] if n_boot else []),
            "estimator", "approximate"]
    return out[cols]


def sft_support(study=PAPER, **kwargs):
    """Table 3: support dynamics of SFT and RLVR (DAPO) from the same base, per benchmark.

    Keyword arguments go to :func:`support_long` (section ``"sft"``).
    """
    return support_long(study, section="sft", **kwargs)


def sft_passk(study=PAPER, *, ks=None, estimator=None):
    """Table 14: pass@k at k = 1, 2, 4, ..., 256 of each trained model (and its base).

    Parameters
    ----------
    study : str or Study, default "paper" (the paper's printed values)
    ks : list of int, optional
        Budgets. Default: a study's own (its ``sft`` section's ``ks``, else 1, 2, 4, ... up to
        each benchmark's declared budget, else its samples per question); a given or declared
        ``ks`` must not exceed a declared budget. For ``"paper"``, every printed budget (a given
        ``ks`` must be among them).
    estimator : {"first-k", "unbiased"}, optional
        Generations only: the printed values are what they are (they fit "first-k", the first k
        samples, which the paper's tables use; the paper states no estimator). Default: the
        ``sft`` section's ``estimator``, else "first-k".

    Returns
    -------
    pandas.DataFrame
        Long form ``benchmark, model, k, pass_at_k, estimator`` (fractions); the paper's printed
        values for ``"paper"`` (``estimator`` "first-k").
    """
    src = open_study(study)
    if src == PAPER:
        t = _paper.load_table14_passk()
        if ks:
            printed = sorted(set(t["k"].astype(int)))
            missing = sorted(set(int(k) for k in ks) - set(printed))
            if missing:
                raise ValueError(f"sft_passk: the paper prints Table 14 at k = {printed}; "
                                 f"no values for k = {missing}.")
            t = t[t["k"].isin([int(k) for k in ks])]
        return pd.DataFrame({"benchmark": t["benchmark"], "model": t["model"], "k": t["k"],
                             "pass_at_k": t["pass_at_k_percent"] / 100.0,
                             "estimator": "first-k"}).reset_index(drop=True)
    from .tables import default_ks

    sec = src.section("sft")
    ks = ks or sec.options.get("ks")
    estimator = resolve_estimator(src, "sft", estimator)[0]
    s = src.summaries("sft")
    # each model with the budgets of its pair (the base with the first pair's)
    models = {sec.pairs[0].base: sec.pairs[0], **{p.rl: p for p in sec.pairs}}
    labels = {sec.pairs[0].base: "Base", **{p.rl: p.label for p in sec.pairs}}
    frames = []
    for model, p in models.items():
        budgets = src.budgets("sft", p)
        rows = s[s["model"] == model]
        for bench, g in rows.groupby(rows["benchmark"].astype(str), sort=True):
            top = budgets.get(bench)
            if ks and top is not None and max(ks) > top:
                raise ValueError(f"sft_passk: k = {max(ks)} exceeds the study's budget {top} of "
                                 f"benchmark {bench!r} for model {model!r}.")
            kk = ks or default_ks(top if top is not None else int(g["n"].min()))
            frames.append(passk_table(g, kk, estimator=estimator))
    t = pd.concat(frames, ignore_index=True).sort_values(["model", "benchmark"], kind="stable")
    return pd.DataFrame({"benchmark": t["benchmark"], "model": t["model"].map(labels),
                         "k": t["k"], "pass_at_k": t["pass_at_k"], "estimator": estimator})


def checkpoint_support(study=PAPER, *, min_count=1, n_boot=0, seed=0, level=0.95):
    """Table 4: support dynamics of each training checkpoint against step 0, per benchmark.

    Returns
    -------
    pandas.DataFrame
        ``pair, step, scope, benchmark, domain, N, k, pass@k base, pass@k rl, P, E, S, O, SRR,
        NDR, SDS, NSCR, mcnemar_p, ...``, sorted by benchmark then step.
    """
    src = open_study(study)
    if src == PAPER:
        sc = _paper.load_support_counts()
        sc = sc[sc["table"].astype(int) == 4]
        t = support_from_counts(sc, by=["pair", "step"], domains=_paper_domains(), pool=False)
        t["k"] = 256
        t = _with_pass_and_tests(t)
    else:
        sec = src.section("checkpoints")
        rng = np.random.default_rng(seed)
        frames = []
        for p in sec.pairs:
            paired = src.paired("checkpoints", p)
            f = support_table(paired, by=["step"], min_count=min_count, domains=src.domains,
                              pool=False, n_boot=n_boot, rng=rng if n_boot else None,
                              level=level)
            f.insert(0, "pair", p.label)
            frames.append(f)
        t = pd.concat(frames, ignore_index=True)
    t["step"] = t["step"].astype("Int64")
    return t.sort_values(["pair", "benchmark", "step"], kind="stable").reset_index(drop=True)


def resolve_na(src, na: str | None = None) -> tuple[str, str]:
    """The NA rule of answer entropy a Table 5 run uses, and where it comes from.

    The notebook's ``na`` when given, else the study's (``entropy`` section, ``na``), else the
    paper's :data:`leash.entropy.PAPER_NA` ("truncated": a truncated or incomplete output is NA,
    App. B.4). For ``"paper"``: the printed values, made under the paper's rule.

    Returns
    -------
    (str, str)
        The rule (one of :data:`leash.entropy.NA_RULES`) and a phrase saying where it comes from.
    """
    from .entropy import NA_RULES, PAPER_NA

    if src == PAPER:
        return PAPER_NA, "the paper's printed values"
    if na:
        if na not in NA_RULES:
            raise ValueError(f"The 'na' parameter must be one of {NA_RULES}. Got {na!r}.")
        return na, "the notebook's `na` parameter"
    sec = src.sections.get("entropy")
    if sec is not None and sec.options.get("na"):
        return sec.options["na"], "the study's `entropy` section"
    return PAPER_NA, "the paper's rule (the default)"


_NA_TEXT = {
    "truncated": "a sample without an extracted answer, or truncated (finish_reason \"length\"), "
                 "counts as one answer class NA",
    "class": "a sample without an extracted answer counts as one answer class NA; a truncated "
             "one keeps its answer",
    "drop": "samples without an extracted answer are left out; a truncated one keeps its answer",
}


def na_note(src, na: str | None = None) -> str:
    """One line for a notebook: which NA rule its answer entropy uses, and why."""
    rule, origin = resolve_na(src, na)
    if src == PAPER:
        return (f"Answer entropy: the paper's printed values, under its rule \"{rule}\" "
                f"({_NA_TEXT[rule]}); the `na` parameter does not apply.")
    return f"Answer entropy: NA rule \"{rule}\" ({_NA_TEXT[rule]}), from {origin}."


def entropy_long(study=PAPER, *, na=None, base=None, correction=None):
    """Table 5's quantities per model and benchmark, long form.

    ``"paper"`` returns the printed values; a study (the demo) computes them from generations.

    Parameters
    ----------
    study : str or Study, default "paper"
    na : {"truncated", "class", "drop"}, optional
        The NA rule of answer entropy (:data:`leash.entropy.NA_RULES`). Default: the study's
        (``entropy`` section, ``na``), else the paper's "truncated" (:func:`resolve_na`). The
        generations are summarized under it.
    base, correction
        As in :func:`leash.tables.entropy_table`.

    Returns
    -------
    pandas.DataFrame
        ``model, role, base_model, benchmark, avg@n (%), response_length, token_entropy,
        answer_entropy, distinct_answers, na`` (``na``: the rule used).
    """
    src = open_study(study)
    if src == PAPER:
        t = _paper.load_table5_entropy()
        t = t[t["benchmark"] != "Avg"]
        names = {"avg32_accuracy_percent": "avg@n (%)", "response_length_tokens": "response_length",
                 "token_entropy": "token_entropy", "answer_entropy": "answer_entropy"}
        t = t.assign(metric=t["metric"].map(names))
        w = t.pivot_table(index=["model", "role", "benchmark"], columns="metric",
                          values="value", sort=False).reset_index()
        bases = t.drop_duplicates("model").set_index("model")["base_of_pair"]
        w.insert(2, "base_model", w["model"].map(bases))
        w["distinct_answers"] = np.nan
        w["na"] = resolve_na(src)[0]
        w.columns.name = None
        return w
    sec = src.section("entropy")
    rule = resolve_na(src, na)[0]
    s = src.summaries("entropy", na="truncated" if rule == "truncated" else "class")
    e = entropy_table(s, na=rule, base=base, correction=correction)
    e["na"] = rule
    roles = {}
    for p in sec.pairs:
        roles.setdefault(p.base, ("base", None))
        roles[p.rl] = ("rlvr", p.base)
    e.insert(1, "role", e["model"].map(lambda m: roles.get(m, ("model", None))[0]))
    e.insert(2, "base_model", e["model"].map(lambda m: roles.get(m, (None, None))[1]))
    return e


def entropy_wide(long: pd.DataFrame, metric: str, *, benchmarks=None) -> pd.DataFrame:
    """One metric of Table 5 as models x benchmarks with the unweighted "Avg" column."""
    from .tables import wide_with_average

    cols = benchmarks or [b for b in MATH_5 if b in set(long["benchmark"])] or sorted(
        long["benchmark"].unique())
    sub = long[long["benchmark"].isin(cols)]
    return wide_with_average(sub, metric, column_order=cols)


def entropy_pairs(long: pd.DataFrame, *, benchmarks=None) -> pd.DataFrame:
    """Per model: mean token and answer entropy over benchmarks, for the entropy scatter.

    Returns
    -------
    pandas.DataFrame
        ``model, role, base_model, token_entropy, answer_entropy`` (unweighted means over the
        benchmarks, as Table 5's Avg column).
    """
    cols = benchmarks or [b for b in MATH_5 if b in set(long["benchmark"])] or None
    sub = long if cols is None else long[long["benchmark"].isin(cols)]
    g = sub.groupby(["model", "role"], sort=False, dropna=False)
    out = g[["token_entropy", "answer_entropy"]].mean().reset_index()
    bases = sub.drop_duplicates("model").set_index("model")["base_model"]
    out.insert(2, "base_model", out["model"].map(bases))
    return out



def _categories(paired: pd.DataFrame) -> np.ndarray:
    """Support category of each paired question (from pairing's exact found columns)."""
    from .support import CATEGORIES, _codes

    found = (paired[f"found_{side}"].to_numpy(dtype=bool) for side in ("base", "rl"))
    return np.asarray(CATEGORIES)[_codes(*found)]


TABLE2_BENCHMARKS = ("AIME2024", "AIME2025", "OlympiadBench")


def _read_traces(src: Study) -> pd.DataFrame:
    """Trace log-probabilities from the files of a study's ``perplexity`` section."""
    frames = []
    for s in src.section("perplexity").sources:
        for path, _ in src._resolve(s):
            p = str(path)
            if p.endswith((".parquet", ".pq")):
                frames.append(pd.read_parquet(path))
            elif p.endswith(".csv"):
                frames.append(pd.read_csv(path))
            else:
                frames.append(pd.read_json(path, lines=True))
    return pd.concat(frames, ignore_index=True)


def table2(study=PAPER, *, pair=None, benchmarks=TABLE2_BENCHMARKS, how="trace-mean",
           seed=0):
    """Table 2: perplexity of external reasoning traces, by support category and reference.

    Parameters
    ----------
    study : str or Study
        ``"paper"``: the printed values. A study: its ``perplexity`` section names the pair
        (categories come from that pair in the ``support`` section) and lists files of trace
        log-probabilities (``benchmark, question_id, reference, model, n_tokens,
        sum_logprob``); with ``simulated: true`` instead (the demo) they are simulated
        (:func:`leash.simulate.simulate_traces`).
    pair : str, optional
        Pair label (default: the first of the support section).
    benchmarks : sequence of str
        The paper uses AIME2024, AIME2025 and OlympiadBench.
    how : {"trace-mean", "token-pooled"}
    seed : int
        Seed of the simulated traces (demo only).

    Returns
    -------
    pandas.DataFrame
        ``category, reference, role ("base"/"rlvr"), model, benchmark, ppl, n_traces``.
    """
    src = open_study(study)
    if src == PAPER:
        t = _paper.load_table2_perplexity().dropna(subset=["ppl"])
        return pd.DataFrame({"category": t["category"], "reference": t["reference"],
                             "role": np.where(t["target"] == "Base", "base", "rlvr"),
                             "model": t["target"], "benchmark": t["benchmark"],
                             "ppl": t["ppl"], "n_traces": np.nan})
    from .simulate import simulate_traces
    from .tables import perplexity_table

    sec = src.section("perplexity")
    p = sec.pair(pair)
    paired = src.paired("support", p)
    paired = paired[paired["benchmark"].isin(list(benchmarks))]
    cats = paired[["benchmark", "question_id"]].assign(category=_categories(paired))
    if sec.sources:
        traces = _read_traces(src)
    elif sec.options.get("simulated"):
        traces = simulate_traces(cats, rng=np.random.default_rng(seed), models=(p.base, p.rl))
    else:
        raise ValueError(
            f"Study {src.name!r} has no 'perplexity' section with trace log-probabilities "
            "(columns benchmark, question_id, reference, model, n_tokens, sum_logprob).")
    t = perplexity_table(traces, cats, how=how)
    t.insert(2, "role", np.where(t["model"] == p.base, "base", "rlvr"))
    return t[t["category"] != "preservation"].reset_index(drop=True)


def table2_wide(long: pd.DataFrame) -> pd.DataFrame:
    """Table 2's layout: rows (category, reference, role), one column per benchmark."""
    w = long.pivot_table(index=["category", "reference", "role"], columns="benchmark",
                         values="ppl", sort=False)
    order = {"shrinkage": 0, "expansion": 1, "out_of_support": 2}
    w = w.reset_index()
    w = w.sort_values(["category", "reference", "role"], key=lambda c: c.map(order)
                      if c.name == "category" else c, kind="stable")
    w.columns.name = None
    return w.reset_index(drop=True)


def _answer_text(values, counts, n_missing) -> str:
    """ "52 x6, 57 x1, NA x1" from a summary row's answer histogram."""
    parts = [f"{v} x{int(c)}" for v, c in zip(values if values is not None else [],
                                              counts if counts is not None else [])]
    if n_missing is not None and not pd.isna(n_missing) and int(n_missing) > 0:
        parts.append(f"NA x{int(n_missing)}")
    return ", ".join(parts)


def answer_cases(study, *, section="support", pair=None, categories=("shrinkage", "expansion"),
                 gold=None):
    """The questions behind the shrinkage/expansion counts: gold answer and what each model said.

    Parameters
    ----------
    study : str or Study
        A study with per-question answers (e.g. ``"gsm8k-probe"``).
    section : str, default "support"
        ``"checkpoints"`` lists the cases of every step (a ``step`` column).
    pair : str, optional
        Pair label (default: the section's first).
    categories : sequence of str
        Support categories to list.
    gold : pandas.DataFrame, optional
        ``question_id, gold[, question]`` (e.g. :func:`leash.rescore.load_benchmark`), with a
        ``benchmark`` column when the study has several (:func:`leash.notebook.require_gold`):
        then matched on benchmark and question.

    Returns
    -------
    pandas.DataFrame
        ``benchmark, question_id, step, category, [question, gold,] c_base, c_rl, base answers,
        rl answers`` (answers as "value xcount", most frequent first).
    """
    src = open_study(study)
    p = src.section(section).pair(pair)
    paired = src.paired(section, p)
    out = paired[["benchmark", "question_id", "step", "c_base", "c_rl"]].assign(
        category=_categories(paired))
    out = out[out["category"].isin(list(categories))].reset_index(drop=True)
    s = src.summaries(section)
    text = s.assign(_answers=[_answer_text(v, c, m) for v, c, m in zip(
        s["answer_values"], s["answer_counts"], s["n_answer_missing"])])
    text = text.assign(benchmark=text["benchmark"].astype(str),
                       question_id=text["question_id"].astype(str),
                       step=text["step"].astype("Int64"))
    keys = ["benchmark", "question_id"]
    b = text[(text["model"] == p.base) & ((text["step"] == p.base_step) if p.base_step is not None
                                           else True)][[*keys, "_answers"]]
    r = text[text["model"] == p.rl][[*keys, "step", "_answers"]]
    out = out.astype({"benchmark": str, "question_id": str})
    out = out.merge(b.rename(columns={"_answers": "base answers"}), on=keys, how="left")
    out = out.merge(r.rename(columns={"_answers": "rl answers"}), on=[*keys, "step"], how="left")
    if gold is not None:
        on = [c for c in ("benchmark", "question_id") if c in gold.columns]
        cols = [*on, *[c for c in ("question", "gold") if c in gold.columns]]
        out = out.merge(gold[cols].astype({c: str for c in on}), on=on, how="left")
    first = ["benchmark", "question_id", "step", "category"]
    rest = [c for c in ("question", "gold") if c in out.columns]
    out = out[first + rest + ["c_base", "c_rl", "base answers", "rl answers"]]
    return out.sort_values(["step", "category", "question_id"], kind="stable",
                           na_position="first").reset_index(drop=True)
