"""One function per paper artifact: the tables and plotted numbers the notebooks show and save.

Each function takes a ``study`` and returns DataFrames; notebooks only lay them out and save
them. A notebook run has one source, its ``study`` parameter, opened by :func:`open_study` into
an :class:`ArtifactSource`, which has one method per artifact input:

* ``"paper"`` (the default): the paper's printed counts and values (``data/paper/``),
  :class:`leash.sources.paper.PaperSource`, for every artifact the paper prints numbers for;
* ``"demo"``: the SIMULATED demo study (``data/studies/demo.yaml``), per-question data shaped
  like the paper's study, which adds what printed counts cannot give (bootstrap intervals,
  entropies, checkpoint trajectories);
* any study file (``data/studies/*.yaml``, :mod:`leash.sources.study`): per-question summaries of
real
  generations, paired per model pair, then the same tables (:class:`StudySource`).

Whatever the input, the result has the same columns, so neither a notebook nor an artifact
function branches on it beyond choosing titles ("simulated" is said whenever the data are).
``make reproduce`` runs each artifact notebook once on the paper's numbers and once on the demo
(``notebooks/runs.yaml``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from leash.analysis.tables import passk_table, support_table
from leash.core._validation import InstancesOf, Paths, StrOptions, check_param, validate_params
from leash.core.support import COUNT_NAMES, METRIC_NAMES
from leash.errors import LeashValueError, Param
from leash.paths import shown, slug
from leash.sources.paper import PAPER, PaperSource
from leash.sources.study import Study, load_study

__all__ = [
    "PAPER", "STUDY", "ArtifactSource", "StudySource", "open_study", "artifact_name", "slug",
    "as_markdown", "caption", "inputs", "is_simulated", "DEFAULT_ESTIMATOR", "estimator_label",
    "estimator_note", "budget_text", "na_note", "support_long", "table1",
    "table1_caption", "appendix_table", "float_formats", "figure1_data", "passk_curves",
    "gym_curves",
    "sft_support", "sft_passk", "table14_wide", "checkpoint_support", "entropy_long",
    "entropy_wide", "entropy_pairs", "entropy_scatter_data", "table13", "table2",
    "table2_wide", "SENSITIVITY_COLUMNS",
    "sensitivity_long", "sensitivity_summary", "sensitivity_figure_data", "answer_cases",
    "flips", "flips_overview", "measured_null", "null_table", "FLIPS_SHOWN",
    "null_figure_data", "budget_plan", "detection",
]

LONG_COLUMNS = ["pair", "scope", "benchmark", "domain", "N", "k", "k_min", "k_max",
                "pass@k base", "pass@k rl",
                *COUNT_NAMES, *METRIC_NAMES, "mcnemar_p", "mcnemar_midp", "E/(E+S) low",
                "E/(E+S) high", "significant E", "significant S"]
MATH_5 = ["AIME2024", "AMC23", "MATH500", "Minerva", "OlympiadBench"]  # Table 5's columns
TABLE2_BENCHMARKS = ("AIME2024", "AIME2025", "OlympiadBench")
#: The pass@k estimator of a study's artifacts when neither the caller nor the study names one:
#: Chen et al.'s unbiased estimator, the literature's pass@k, which needs only n and c
#: (``leash.core.passk``). The paper's printed tables fit the first k samples instead: its
#: study (``data/studies/paper.yaml``) and the demo declare ``estimator: first-k``.
DEFAULT_ESTIMATOR = "unbiased"


class ArtifactSource(Protocol):
    """What the artifact functions read: one method per artifact input, same columns whatever
    the source (:class:`leash.sources.paper.PaperSource`, :class:`StudySource`). The artifact
    function of the same name documents each argument and the columns returned.
    """

    name: str  # "paper", or the study's name
    title: str
    simulated: bool  # its artifacts must say "simulated"
    is_paper: bool  # the paper's printed numbers (artifact files keep their bare name)

    def inputs(self) -> str:
        """What an artifact records as its input data."""
    def skip_reason(self, section: str | None = None, printed: bool = True) -> str | None:
        """Why a notebook section cannot run on this source, or None when it can."""
    def caption(self, text: str, paper: str = ...) -> str:
        """``text`` as a caption that says where the numbers come from."""
    def estimator(self, section: str, given: str | None = None) -> tuple[str, str]:
        """The pass@k estimator of a section, and where that choice comes from."""
    def na_rule(self, given: str | None = None) -> tuple[str, str]:
        """The NA rule of answer entropy, and where that choice comes from."""
    def support_counts(self, section: str = "support", **kw) -> pd.DataFrame:
        """Support dynamics per pair, benchmark and pooled row (Tables 1, 3, 6-12)."""
    def checkpoint_counts(self, **kw) -> pd.DataFrame:
        """Each training checkpoint against step 0 (Table 4)."""
    def passk(self, *, ks=None, estimator=None) -> pd.DataFrame:
        """pass@k per benchmark and model (Table 14)."""
    def gym_curves(self, **kw) -> pd.DataFrame:
        """pass@k curves of the Reasoning Gym tasks (Figures 2-4)."""
    def passk_curves(self, section: str = "support", **kw) -> pd.DataFrame:
        """pass@k against k of every pair and benchmark of a section."""
    def entropy(self, **kw) -> pd.DataFrame:
        """Token- and answer-level entropy per model and benchmark (Table 5)."""
    def perplexity(self, **kw) -> pd.DataFrame:
        """Perplexity of external reasoning traces by support category (Table 2)."""


_NA_TEXT = {
    "truncated": "a sample without an extracted answer, or truncated (finish_reason \"length\"), "
                 "counts as one answer class NA",
    "class": "a sample without an extracted answer counts as one answer class NA; a truncated "
             "one keeps its answer",
    "drop": "samples without an extracted answer are left out; a truncated one keeps its answer",
}
_ESTIMATOR_TEXT = {"first-k": "the first k samples in generation order, as the paper's tables",
                   "unbiased": "Chen et al.'s unbiased estimator, from all n samples"}


class StudySource:
    """A study (:class:`leash.sources.study.Study`) as an artifact source: per-question data,
    paired per model pair of a section, then the tables. What it reads of the study is named
    below (its name, title and sections; :meth:`summaries`, :meth:`paired`, :meth:`section`);
    anything else is ``source.study``'s.

    Parameters
    ----------
    study : Study
    """

    is_paper = False

    def __init__(self, study: Study):
        self.study = study
        self.name: str = study.name
        self.title: str = study.title
        self.simulated: bool = study.simulated
        #: Benchmark -> domain, as the study declares them.
        self.domains = study.domains
        self.sections = study.sections

    def section(self, name: str):
        """The study's section ``name`` (:meth:`leash.sources.study.Study.section`)."""
        return self.study.section(name)

    def summaries(self, name: str, **kw) -> pd.DataFrame:
        """Per-question summaries of a section (:meth:`leash.sources.study.Study.summaries`)."""
        return self.study.summaries(name, **kw)

    def paired(self, name: str, pair=None, **kw) -> pd.DataFrame:
        """One pair of a section, paired per question (:meth:`leash.sources.study.Study.paired`)."""
        return self.study.paired(name, pair, **kw)

    def budgets(self, name: str, pair) -> dict:
        """The budgets of a pair, per benchmark (:meth:`leash.sources.study.Study.budgets`)."""
        return self.study.budgets(name, pair)

    def __repr__(self) -> str:
        return f"StudySource({self.study!r})"

    def inputs(self) -> str:
        """The study file, relative to the repository when inside it (a shipped study as
        ``data/studies/<name>.yaml``, installed too).
        """
        s = self.study.source
        if s is None:
            return self.name
        return shown(s)

    def skip_reason(self, section: str | None = None, printed: bool = True) -> str | None:
        """Why a notebook cannot run on this study: its section is missing or empty."""
        sec = self.sections.get(section)
        if section is None or (sec is not None and (sec.sources or sec.options.get("simulated"))):
            return None
        return (f"study {self.name!r} has no data for this artifact: its section {section!r} is "
                f"missing or lists no sources (sections: {sorted(self.sections)})")

    def caption(self, text: str, paper: str = "") -> str:
        """``"Table 1 – <title>"`` (a dash: the title may have parentheses of its own)."""
        from leash.sources.demo import simulated_label

        out = f"{text} – {self.title}"
        return simulated_label(out) if self.simulated else out

    def _option(self, section: str, key: str, given, default):
        if given:
            return given, f"the notebook's `{key}` parameter"
        sec = self.sections.get(section)
        if sec is not None and sec.options.get(key):
            return sec.options[key], f"the study's `{section}` section"
        return default

    def estimator(self, section: str, given: str | None = None) -> tuple[str, str]:
        """The given estimator, else the section's, else :data:`DEFAULT_ESTIMATOR`."""
        return self._option(section, "estimator", given,
                            (DEFAULT_ESTIMATOR, "the default for a study that names none"))

    def na_rule(self, given: str | None = None) -> tuple[str, str]:
        """The given NA rule, else the ``entropy`` section's, else the paper's."""
        from leash.core.entropy import NA_RULES, PAPER_NA

        if given:
            check_param(given, [StrOptions(*NA_RULES)], "na", "na_rule")
        return self._option("entropy", "na", given, (PAPER_NA, "the paper's rule (the default)"))

    def _support(self, section, *, by=(), pool=True, min_count=1, k=None, n_boot=0, seed=0,
                 level=0.95, pairs=None, fdr=0.05) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        frames, listed = [], self.section(section).pairs
        _check_pairs(pairs, [p.label for p in listed])
        for i, p in enumerate(listed):
            if pairs and p.label not in pairs:  # only those asked for
                continue
            paired = self.paired(section, p)
            steps = sorted(paired["step"].dropna().unique().tolist())
            if "step" not in by and len(steps) > 1:  # else each question counts once a step
                raise self.study.error(
                    f"{self.study.source or self.study.name}: section {section!r}, pair "
                    f"{p.label!r}: the RLVR model "
                    f"{p.rl!r} has rows at {len(steps)} steps ({', '.join(map(str, steps[:5]))}"
                    f"{', ...' if len(steps) > 5 else ''}), and these tables compare one model"
                    " per side: list the checkpoints in the 'checkpoints' section, and here "
                    "only the files of the final model.", "sections", section, "pairs", i, "rl",
                    value=p.rl)
            f = support_table(paired, by=list(by), k=k, min_count=min_count,
                              domains=self.domains, pool=pool, n_boot=n_boot,
                              rng=rng if n_boot else None, level=level, fdr=fdr)
            f.insert(0, "pair", p.label)
            frames.append(f)
        return pd.concat(frames, ignore_index=True)

    def support_counts(self, section: str = "support", **kw) -> pd.DataFrame:
        """Support dynamics of every pair of ``section``, per benchmark and pooled."""
        return self._support(section, **kw)

    def checkpoint_counts(self, **kw) -> pd.DataFrame:
        """Each checkpoint (``step``) against the base, per benchmark."""
        return self._support("checkpoints", by=("step",), pool=False, **kw)

    def passk(self, *, ks=None, estimator=None) -> pd.DataFrame:
        """pass@k of the ``sft`` section's models (the base with the first pair's budgets)."""
        from leash.analysis.tables import default_ks

        sec = self.section("sft")
        ks = ks or sec.options.get("ks")
        estimator = self.estimator("sft", estimator)[0]
        s = self.summaries("sft")
        models = {sec.pairs[0].base: sec.pairs[0], **{p.rl: p for p in sec.pairs}}
        labels = {sec.pairs[0].base: "Base", **{p.rl: p.label for p in sec.pairs}}
        frames = []
        for model, p in models.items():
            budgets = self.budgets("sft", p)
            rows = s[s["model"] == model]
            for bench, g in rows.groupby(rows["benchmark"].astype(str), sort=True):
                top = budgets.get(bench)
                if ks and top is not None and max(ks) > top:
                    raise LeashValueError(f"k = {max(ks)} exceeds the study's budget {top} of "
                                          f"benchmark {bench!r} for model {model!r}.",
                                          func="sft_passk", param="ks", value=max(ks),
                                          file=self.study.source)
                kk = ks or default_ks(top if top is not None else int(g["n"].min()))
                frames.append(passk_table(g, kk, estimator=estimator))
        t = pd.concat(frames, ignore_index=True).sort_values(["model", "benchmark"],
                                                             kind="stable")
        return pd.DataFrame({"benchmark": t["benchmark"], "model": t["model"].map(labels),
                             "k": t["k"], "pass_at_k": t["pass_at_k"], "estimator": estimator})

    def gym_curves(self, *, estimator=None, n_boot=0, seed=0, level=0.95) -> pd.DataFrame:
        """pass@k at k = 1, 2, 4, ... up to each task's budget, per pair of the ``gym`` section."""
        from leash.analysis.tables import default_ks
        from leash.core.stats import bootstrap_pass_at_k

        estimator = self.estimator("gym", estimator)[0]
        summary = self.summaries("gym")
        rng = np.random.default_rng(seed)
        frames = []
        for p in self.section("gym").pairs:
            budgets = self.budgets("gym", p)
            paired = self.paired("gym", p, at_budgets=False)  # the curve stops at the budget
            for task, g in paired.groupby("benchmark", sort=True):
                ks = default_ks(budgets.get(task, int(g["n_base"].min())))
                if n_boot:
                    b = bootstrap_pass_at_k(g["n_base"], g["c_base"], g["n_rl"], g["c_rl"], ks,
                                            rng=rng, n_boot=n_boot, level=level,
                                            estimator=estimator,
                                            first_correct_base=g["first_correct_base"],
                                            first_correct_rl=g["first_correct_rl"])
                    b = b[b["series"] != "rlvr - base"]
                    base = (b["series"] == "base").to_numpy()
                    frames.append(pd.DataFrame({
                        "task": task, "k": b["k"], "pass_at_k": b["estimate"], "low": b["low"],
                        "high": b["high"], "model": np.where(base, p.base, p.rl),
                        "role": np.where(base, "base", "rlvr")}))
                    continue
                for role, model in (("base", p.base), ("rlvr", p.rl)):
                    s = summary[(summary["model"] == model) & (summary["benchmark"] == task)]
                    pk = passk_table(s, ks, estimator=estimator)
                    frames.append(pd.DataFrame({"task": task, "k": pk["k"],
                                                "pass_at_k": pk["pass_at_k"], "model": model,
                                                "role": role}))
        cols = ["task", "model", "role", "k", "pass_at_k", *(["low", "high"] if n_boot else [])]
        return pd.concat(frames, ignore_index=True)[cols].assign(estimator=estimator,
                                                                 approximate=False)

    def passk_curves(self, section: str = "support", *, estimator=None,
                     pairs=None) -> pd.DataFrame:
        """pass@k at k = 1, 2, 4, ... up to each benchmark's budget, base and RLVR model of
        every pair of ``section``, over the questions the pair shares (see
        :func:`passk_curves`).
        """
        from leash.analysis.tables import default_ks
        from leash.core.passk import pass_at_k_curve

        estimator = self.estimator(section, estimator)[0]
        listed = self.section(section).pairs
        _check_pairs(pairs, [p.label for p in listed])
        frames = []
        for i, p in enumerate(listed):
            if pairs and p.label not in pairs:
                continue
            budgets = self.budgets(section, p)
            paired = self.paired(section, p, at_budgets=False)  # every sample; k stops at the
            steps = paired["step"].dropna().unique()            # budget
            if len(steps) > 1:
                raise self.study.error(
                    f"{self.study.source or self.name}: section {section!r}, pair {p.label!r}: "
                    f"the RLVR model {p.rl!r} has rows at {len(steps)} steps, and a pass@k "
                    "curve is one model's.", "sections", section, "pairs", i, "rl", value=p.rl)
            for bench, g in paired.groupby(paired["benchmark"].astype(str), sort=False):
                top = budgets.get(bench, int(min(g["n_base"].min(), g["n_rl"].min())))
                ks = default_ks(top)
                for role, model, side in (("base", p.base, "base"), ("rlvr", p.rl, "rl")):
                    fc = g[f"first_correct_{side}"]
                    if estimator == "first-k" and fc.isna().any():
                        raise LeashValueError(
                            f"{self.study.source or self.name}: pair {p.label!r}, benchmark "
                            f"{bench!r}: the first-k pass@k needs each question's first "
                            f"correct sample, which {int(fc.isna().sum())} of {len(g)} "
                            f"questions of {model!r} lack (counts without the sample order); "
                            "the unbiased estimator needs only n and c.", param="estimator",
                            value=estimator, hint=("Pass ", Param("estimator",
                                                                  value="unbiased"), "."))
                    curve = pass_at_k_curve(
                        g[f"n_{side}"].to_numpy(dtype=np.int64),
                        g[f"c_{side}"].to_numpy(dtype=np.int64), ks, estimator=estimator,
                        first_correct=(fc.to_numpy(dtype=np.int64) if estimator == "first-k"
                                       else None))
                    frames.append(pd.DataFrame({
                        "pair": p.label, "benchmark": bench,
                        "domain": self.domains.get(bench, ""), "model": model, "role": role,
                        "k": ks, "pass_at_k": curve.mean(axis=0), "n_questions": len(g)}))
        return pd.concat(frames, ignore_index=True).assign(estimator=estimator)

    def entropy(self, *, na=None, base=None, correction=None) -> pd.DataFrame:
        """Table 5's quantities per model and benchmark of the ``entropy`` section."""
        from leash.analysis.tables import entropy_table

        rule = self.na_rule(na)[0]
        s = self.summaries("entropy", na="truncated" if rule == "truncated" else "class")
        e = entropy_table(s, na=rule, base=base, correction=correction)
        e["na"] = rule
        roles = {}
        for p in self.section("entropy").pairs:
            roles.setdefault(p.base, ("base", None))
            roles[p.rl] = ("rlvr", p.base)
        e.insert(1, "role", e["model"].map(lambda m: roles.get(m, ("model", None))[0]))
        e.insert(2, "base_model", e["model"].map(lambda m: roles.get(m, (None, None))[1]))
        return e

    def perplexity(self, *, pair=None, benchmarks=TABLE2_BENCHMARKS, how="trace-mean",
                   seed=0) -> pd.DataFrame:
        """Perplexity of the ``perplexity`` section's traces by support category (``support``)."""
        from leash.analysis.tables import perplexity_table
        from leash.sources.simulate import simulate_traces

        sec = self.section("perplexity")
        p = sec.pair(pair)
        paired = self.paired("support", p)
        paired = paired[paired["benchmark"].isin(list(benchmarks))]
        cats = paired[["benchmark", "question_id"]].assign(category=_categories(paired))
        if sec.sources:
            traces = self._read_traces()
        elif sec.options.get("simulated"):
            traces = simulate_traces(cats, rng=np.random.default_rng(seed), models=(p.base, p.rl))
        else:
            raise self.study.error(
                f"Study {self.name!r} has no 'perplexity' section with trace log-probabilities "
                "(columns benchmark, question_id, reference, model, n_tokens, sum_logprob).",
                "sections", "perplexity")
        t = perplexity_table(traces, cats, how=how)
        t.insert(2, "role", np.where(t["model"] == p.base, "base", "rlvr"))
        return t[t["category"] != "preservation"].reset_index(drop=True)

    def _read_traces(self) -> pd.DataFrame:
        """Trace log-probabilities from the files of the ``perplexity`` section."""
        read = {".parquet": pd.read_parquet, ".pq": pd.read_parquet, ".csv": pd.read_csv}
        return pd.concat([read.get(Path(path).suffix, lambda f: pd.read_json(f, lines=True))(path)
                          for s in self.section("perplexity").sources
                          for path, _ in self.study.resolve(s)], ignore_index=True)


def _categories(paired: pd.DataFrame) -> np.ndarray:
    """Support category of each paired question (from pairing's exact found columns)."""
    from leash.core.support import CATEGORIES, category_codes

    found = (paired[f"found_{side}"].to_numpy(dtype=bool) for side in ("base", "rl"))
    return np.asarray(CATEGORIES)[category_codes(*found)]


#: The declared kinds of a ``study`` parameter, which :func:`open_study` resolves.
STUDY = [Paths(nonempty=True, note=f"{PAPER!r}, a shipped study's name or a study file"),
         InstancesOf((Study, PaperSource, StudySource), "a Study or an ArtifactSource",
                     PaperSource)]


@validate_params({"study": STUDY})
def open_study(study: str | Study | ArtifactSource = PAPER) -> ArtifactSource:
    """Resolve a notebook's ``study`` parameter into its source.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        ``"paper"``, a shipped study name (``"demo"``, ``"gsm8k-probe"``...), the path of a
        study file, a loaded study, or a source (returned as it is).

    Returns
    -------
    ArtifactSource
        :class:`leash.sources.paper.PaperSource` for ``"paper"``, else a :class:`StudySource`.
    """
    if isinstance(study, (PaperSource, StudySource)):
        return study
    if isinstance(study, Study):
        return StudySource(study)
    if study == PAPER:
        return PaperSource()
    if study == "embedded":
        raise LeashValueError(Param("study", value="embedded"), " is gone: a notebook runs on "
                              "one source, 'paper' (the paper's printed numbers), 'demo' (the "
                              "simulated study) or a study file; `make reproduce` runs both "
                              "'paper' and 'demo'.", func="open_study", param="study",
                              value=study)
    return StudySource(load_study(study))


def artifact_name(stem: str, src) -> str:
    """File stem of an artifact: ``stem`` for the paper's numbers, ``stem_<source>`` otherwise
    (``table1_demo``), so runs on different sources can share an output folder.
    """
    name = src if isinstance(src, str) else open_study(src).name
    return stem if name == PAPER else f"{stem}_{slug(name)}"


def caption(text: str, src, *, paper: str = "the paper's printed numbers") -> str:
    """A caption naming the data; it says "simulated" whenever the data are.

    ``"Table 1 (the paper's printed numbers)"``, ``"Table 1 – SIMULATED demo, not the
    paper's data"``: a dash before a study's title, which may have parentheses of its own.
    """
    return open_study(src).caption(text, paper)


_MARKDOWN_SPECIAL = re.compile(r"[\\`*_\[\]<>#|~$&!{}+:]")  # ":" so no bare URL is linked


def as_markdown(text: str) -> str:
    r"""``text`` from data (a study's title, a pair's or a model's label, a caption holding
    them) as Markdown that shows it as written: each character Markdown or HTML gives a
    meaning is written as a character reference (``&#60;``; not a backslash escape: ``\[``
    and ``\(`` open math in JupyterLab and nbconvert). Markdown passes HTML through, so a title
    ``<img src=x onerror=...>`` shown with ``Markdown(f"**{caption}**")`` would run in the
    notebook's page, and on the site.

    Examples
    --------
    >>> print(as_markdown("Table 1 – <b>mine</b> [x](javascript:y) $2$"))
    Table 1 – &#60;b&#62;mine&#60;/b&#62; &#91;x&#93;(javascript&#58;y) &#36;2&#36;
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: f"&#{ord(m.group())};", str(text))


def inputs(src) -> str:
    """What to record as an artifact's input data."""
    return open_study(src).inputs()


def is_simulated(src) -> bool:
    """Whether the source is simulated data (its artifacts must say so)."""
    return bool(open_study(src).simulated)


def estimator_label(src, section: str, estimator: str | None = None) -> str:
    """The pass@k estimator of a run as a caption says it: "first-k estimator" or "unbiased
    estimator".
    """
    return f"{open_study(src).estimator(section, estimator)[0]} estimator"


def estimator_note(src, section: str, estimator: str | None = None) -> str:
    """One line for a notebook: which pass@k estimator its run uses, and why."""
    value, origin = open_study(src).estimator(section, estimator)
    return f"pass@k estimator: {value} ({_ESTIMATOR_TEXT[value]}), from {origin}."


def na_note(src, na: str | None = None) -> str:
    """One line for a notebook: which NA rule its answer entropy uses, and why."""
    rule, origin = open_study(src).na_rule(na)
    return f"Answer entropy: NA rule \"{rule}\" ({_NA_TEXT[rule]}), from {origin}."


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


def support_long(study=PAPER, *, section="support", pairs=None, min_count=1, k=None,
                 n_boot=0, seed=0, level=0.95, fdr=0.05):
    """Support dynamics of every pair, per benchmark and pooled (Tables 1 and 6-12, long form).

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper" (the paper's printed counts)
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
    fdr : float, default 0.05
        False discovery rate of the significant subsets of E and S (generations only).

    Returns
    -------
    pandas.DataFrame
        Columns ``pair, scope, benchmark, domain, N, k, k_min, k_max, pass@k base, pass@k rl,
        P, E, S, O, SRR, NDR, SDS, NSCR, mcnemar_p, mcnemar_midp, E/(E+S) low, E/(E+S) high,
        significant E, significant S`` (+ CI columns); the budgets are integers, ``k`` NA where
        a row's budgets differ; the significant subsets of E and S (per-question Fisher tests,
        Benjamini-Hochberg at ``fdr`` over the pair's questions) are NA on the paper's printed
        counts.
    """
    t = open_study(study).support_counts(section, min_count=min_count, k=k, n_boot=n_boot,
                                          seed=seed, level=level, pairs=pairs, fdr=fdr)
    t = t[[*LONG_COLUMNS, *[c for c in t.columns if c not in LONG_COLUMNS]]]
    t = t.astype({"k": "Int64", "k_min": "Int64", "k_max": "Int64"})
    if pairs:
        _check_pairs(pairs, list(dict.fromkeys(t["pair"])))
        t = t[t["pair"].isin(pairs)].reset_index(drop=True)
    return t


def _check_pairs(pairs, known: list, name: str = "pairs") -> None:
    """Refuse pair labels that are not among ``known`` (the parameter ``name``)."""
    if pairs and (unknown := sorted(set(pairs) - set(known))):
        raise LeashValueError(f"Unknown pair(s) {unknown}; available: {known}.", param=name,
                              value=unknown[0])


def table1(long: pd.DataFrame) -> pd.DataFrame:
    """Table 1's layout: pooled rows per model and domain (Math, Non-Math, Overall).

    Pooling needs at least two benchmarks; a pair with one benchmark only shows that
    benchmark's row (its ``Domain`` says so: "Math (MATH500 only)"; so does
    :func:`table1_caption`).

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`support_long` result.

    Returns
    -------
    pandas.DataFrame
        ``Model, Domain, SRR, NDR, SDS, NSCR, P, E, S, O`` (unrounded; no Overall row for a
        model of one domain, as printed; a one-benchmark pair's Domain is "Math (MATH500
        only)"; the paper prints 2
        decimals, which fit the pooled metric rounded half-up to 3 decimals and then to 2 in 79
        of its 80 metric cells: see :func:`leash.sources.paper.rebuild_table1`).
    """
    long = _without_lone_overall(long)
    pooled = long["scope"].isin(["domain", "overall"])
    single = (long["scope"] == "benchmark") & ~long["pair"].isin(long.loc[pooled, "pair"])
    out = long[pooled | single].rename(columns={"pair": "Model", "benchmark": "Domain"})
    label = out.loc[single[pooled | single].to_numpy(), "domain"].map(
        lambda d: {"math": "Math", "non-math": "Non-Math"}.get(d, str(d)))
    out.loc[label.index, "Domain"] = label + " (" + out.loc[label.index, "Domain"] + " only)"
    return out[["Model", "Domain", *METRIC_NAMES, *COUNT_NAMES]].reset_index(drop=True)


def _without_lone_overall(long: pd.DataFrame) -> pd.DataFrame:
    """``long`` without the "overall" row of a pair pooled over one domain only: it repeats
    that domain's row, and the paper prints none (Tables 1, 11 and 12 for math-only models).
    """
    domains = long[long["scope"] == "domain"].groupby("pair", sort=False).size()
    lone = long["pair"].map(domains).eq(1) & (long["scope"] == "overall")
    return long[~lone.to_numpy()]


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
        E, S, O``, ``significant E, significant S`` (on per-question data: the E and S
        questions whose one-sided Fisher test survives the false discovery rate control),
        ``McNemar p, McNemar mid-p`` plus the bootstrap interval columns present in ``long``;
        ``k`` is NA on a pooled row whose benchmarks have different budgets (``k_min`` to
        ``k_max``).
    """
    t = _without_lone_overall(long[long["pair"] == pair])
    if t.empty:
        raise LeashValueError(f"No rows for pair {pair!r}; pairs: "
                              f"{list(dict.fromkeys(long.pair))}.", func="appendix_table",
                              param="pair", value=pair)
    ds = np.where(t["scope"] == "benchmark", t["benchmark"], "Agg " + t["benchmark"])
    out = pd.DataFrame({"Dataset": ds, **{c: t[c].array for c in ("k", "k_min", "k_max")},
                        "pass@k Base (%)": 100 * t["pass@k base"].to_numpy(),
                        "pass@k RLVR (%)": 100 * t["pass@k rl"].to_numpy()})
    if zeta is not None:
        from leash.core.support import epsilon

        k = t["k"].to_numpy(dtype=float, na_value=np.nan)
        ok = np.isfinite(k) & (k >= 1)
        eps = np.full(k.shape, np.nan)
        eps[ok] = epsilon(k[ok].astype(np.int64), zeta)
        out.insert(out.columns.get_loc("k_max") + 1, "epsilon", eps)
    out.loc[(t["scope"] != "benchmark").to_numpy(), ["pass@k Base (%)", "pass@k RLVR (%)"]] = np.nan
    for c in [*METRIC_NAMES, *COUNT_NAMES]:
        out[c] = t[c].to_numpy()
    for c in ("significant E", "significant S"):
        if c in t and t[c].notna().any():  # per-question data only
            out[c] = t[c].array
    out["McNemar p"] = t["mcnemar_p"].to_numpy()
    out["McNemar mid-p"] = t["mcnemar_midp"].to_numpy()
    for c in [c for c in t.columns
              if c.endswith((" low", " high")) and c.split()[0] in METRIC_NAMES]:
        out[c] = t[c].to_numpy()
    return out


_FORMATS = {"epsilon": "{:.2e}", "pass@k Base (%)": "{:.1f}", "pass@k RLVR (%)": "{:.1f}",
            "McNemar p": "{:.3g}", "mcnemar_p": "{:.3g}", "McNemar mid-p": "{:.3g}",
            "mcnemar_midp": "{:.3g}", "significant E": "{}", "significant S": "{}",
            "pass@k base": "{:.3f}",
            "pass@k rl": "{:.3f}"}


def float_formats(table: pd.DataFrame, default: str = "{:.3f}") -> dict:
    """Display formats (Markdown/LaTeX) for the columns of ``table``: p-values and epsilon in
    significant digits, percentages with one decimal, everything else ``default``.
    """
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
    parts = [t.assign(model=name, role=role, pass_at_k=t[col]) for role, col, name in
             (("base", "pass@k base", "Base"), ("rlvr", "pass@k rl", "RLVR"))]
    out = pd.concat(parts).sort_index(kind="stable")
    cols = ["benchmark", "domain", "k", "model", "role", "pass_at_k"]
    return out[cols].infer_objects().reset_index(drop=True)  # k: numeric on benchmark rows


def gym_curves(study=PAPER, *, estimator=None, n_boot=0, seed=0, level=0.95):
    """Reasoning Gym pass@k curves (Figures 2-4): k = 1, 2, 4, ... up to each task's budget.

    With ``study="paper"`` only Figure 4's series exist (read off the paper's plot, approximate);
    Figures 2 and 3 print values that could not be decoded from the figure, so only a study
    (the demo) draws them. A study's task
    budget is its declared one (the benchmark's ``budget``, or the pair's ``budgets`` for
    ``reasoning-gym``), else the samples per question; the curve is k = 1, 2, 4, ... up to it
    (and the budget itself).

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper"
    estimator : {"first-k", "unbiased"}, optional
        Generations only. Default: the ``gym`` section's ``estimator``, else
        :data:`DEFAULT_ESTIMATOR` ("unbiased"; the paper's study declares "first-k": the decoded
        values of Figure 4 fit it, multiples of 1/N that repeat from one k to the next). Both
        use every sample the data have: "first-k" the first k, "unbiased" all n.
    n_boot, seed, level
        Bootstrap bands (generations only).

    Returns
    -------
    pandas.DataFrame
        ``task, model, role, k, pass_at_k`` (+ ``low, high`` with ``n_boot``), ``estimator``
        and ``approximate`` (True for the paper's decoded series).
    """
    return open_study(study).gym_curves(estimator=estimator, n_boot=n_boot, seed=seed,
                                        level=level)


def passk_curves(study=PAPER, *, section="support", estimator=None, pairs=None):
    """pass@k against k for every pair and benchmark of a study: k = 1, 2, 4, ... up to each
    benchmark's budget (its ``budget``, or the pair's ``budgets``; else the samples both
    models have on every question), the base and the RLVR model over the questions the pair
    compares. The paper prints pass@k at the largest budget only (Figure 1, whose bars are
    this curve's last point), so only a study (per-question data) draws it.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        ``"demo"`` or a study file; the paper's printed numbers are a ValueError.
    section : str, default "support"
    estimator : {"first-k", "unbiased"}, optional
        Default: the section's ``estimator``, else :data:`DEFAULT_ESTIMATOR` ("unbiased",
        Chen et al.'s, from all n samples: what counts give; the demo declares "first-k", as
        the paper's tables). "first-k" needs each question's first correct sample.
    pairs : list of str, optional
        Pair labels (default: every pair of the section).

    Returns
    -------
    pandas.DataFrame
        ``pair, benchmark, domain, model, role, k, pass_at_k, n_questions, estimator``, one row
        per pair, benchmark, model and k (pass@k as a fraction).
    """
    src = open_study(study)
    if src.is_paper:
        raise LeashValueError("passk_curves needs per-question data (",
                              Param("study", value="demo"), " or a study file): the paper prints "
                              "pass@k at the largest budget only (Figure 1).", param="study",
                              value=PAPER)
    return src.passk_curves(section, estimator=estimator, pairs=pairs)


def sft_support(study=PAPER, **kwargs):
    """Table 3: support dynamics of SFT and RLVR (DAPO) from the same base, per benchmark.

    Keyword arguments go to :func:`support_long` (section ``"sft"``).
    """
    return support_long(study, section="sft", **kwargs)


def sft_passk(study=PAPER, *, ks=None, estimator=None):
    """Table 14: pass@k at k = 1, 2, 4, ..., 256 of each trained model (and its base).

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper" (the paper's printed values)
    ks : list of int, optional
        Budgets. Default: a study's own (its ``sft`` section's ``ks``, else 1, 2, 4, ... up to
        each benchmark's declared budget, else its samples per question); a given or declared
        ``ks`` must not exceed a declared budget. For ``"paper"``, every printed budget (a given
        ``ks`` must be among them).
    estimator : {"first-k", "unbiased"}, optional
        Generations only: the printed values are what they are (they fit "first-k", the first k
        samples, which the paper's tables use; the paper states no estimator). Default: the
        ``sft`` section's ``estimator``, else :data:`DEFAULT_ESTIMATOR` ("unbiased").

    Returns
    -------
    pandas.DataFrame
        Long form ``benchmark, model, k, pass_at_k, estimator`` (fractions); the paper's printed
        values for ``"paper"`` (``estimator`` "first-k").
    """
    return open_study(study).passk(ks=ks, estimator=estimator)


def table14_wide(long: pd.DataFrame) -> pd.DataFrame:
    """Table 14's layout: pass@k in percent per benchmark and model, one column per budget.

    Parameters
    ----------
    long : pandas.DataFrame
        A :func:`sft_passk` result: ``benchmark, model, k, pass_at_k`` (fractions), one row per
        benchmark, model and k.

    Returns
    -------
    pandas.DataFrame
        ``benchmark, model, @<k>...`` (100 x pass@k, unrounded; the paper prints 2 decimals),
        rows and budgets in the order they first appear; a budget a model lacks is NaN.

    Raises
    ------
    ValueError
        A column is missing, or a benchmark, model and k appear twice.

    Examples
    --------
    >>> long = pd.DataFrame({"benchmark": "AIME2024", "model": "SFT", "k": [1, 2],
    ...                      "pass_at_k": [0.25, 0.5]})
    >>> table14_wide(long)
      benchmark model    @1    @2
    0  AIME2024   SFT  25.0  50.0
    """
    from leash.analysis.tables import require_columns

    require_columns(long, ["benchmark", "model", "k", "pass_at_k"], "table14_wide")
    twice = long.duplicated(["benchmark", "model", "k"])
    if twice.any():
        b, m, k = long.loc[twice, ["benchmark", "model", "k"]].iloc[0].tolist()
        raise LeashValueError(f"benchmark {b!r}, model {m!r}, k = {k} has more than one row; the "
                              "table takes one pass@k per benchmark, model and k.",
                              func="table14_wide", key="k", value=k)
    wide = long.pivot_table(index=["benchmark", "model"], columns="k", values="pass_at_k",
                            sort=False).mul(100).reset_index()
    wide.columns = [c if isinstance(c, str) else f"@{c}" for c in wide.columns]
    return wide


def checkpoint_support(study=PAPER, *, min_count=1, n_boot=0, seed=0, level=0.95):
    """Table 4: support dynamics of each training checkpoint against step 0, per benchmark.

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper"
    min_count, n_boot, seed, level
        As in :func:`support_long` (generations only).

    Returns
    -------
    pandas.DataFrame
        ``pair, step, scope, benchmark, domain, N, k, pass@k base, pass@k rl, P, E, S, O, SRR,
        NDR, SDS, NSCR, mcnemar_p, ...``, sorted by benchmark then step.
    """
    t = open_study(study).checkpoint_counts(min_count=min_count, n_boot=n_boot, seed=seed,
                                            level=level)
    t["step"] = t["step"].astype("Int64")
    return t.sort_values(["pair", "benchmark", "step"], kind="stable").reset_index(drop=True)


def entropy_long(study=PAPER, *, na=None, base=None, correction=None):
    """Table 5's quantities per model and benchmark, long form.

    ``"paper"`` returns the printed values; a study (the demo) computes them from generations.

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper"
    na : {"truncated", "class", "drop"}, optional
        The NA rule of answer entropy (:data:`leash.core.entropy.NA_RULES`). Default: the study's
        (``entropy`` section, ``na``), else the paper's "truncated"; :func:`na_note` says
        which. The generations are summarized under it.
    base, correction
        As in :func:`leash.analysis.tables.entropy_table`.

    Returns
    -------
    pandas.DataFrame
        ``model, role, base_model, benchmark, avg@n (%), response_length, token_entropy,
        answer_entropy, distinct_answers, na`` (``na``: the rule used).
    """
    return open_study(study).entropy(na=na, base=base, correction=correction)


def entropy_wide(long: pd.DataFrame, metric: str, *, benchmarks=None) -> pd.DataFrame:
    """One metric of Table 5 as models x benchmarks with the unweighted "Avg" column."""
    from leash.analysis.tables import wide_with_average

    cols = benchmarks or [b for b in MATH_5 if b in set(long["benchmark"])] or sorted(
        long["benchmark"].unique())
    sub = long[long["benchmark"].isin(cols)]
    return wide_with_average(sub, metric, column_order=cols)


def table13(study=PAPER) -> pd.DataFrame:
    """Table 13, the models of the entropy analysis (Table 5), as the paper prints it.

    Parameters
    ----------
    study : str, Study or ArtifactSource, default "paper"
        The paper's printed numbers only: Table 13 describes the paper's models.

    Returns
    -------
    pandas.DataFrame
        ``Name, Full name, Type, Params`` in the printed order, ``data/paper/table13_models.csv``.

    Examples
    --------
    >>> table13().iloc[1].tolist()
    ['ProRL-1.5B', 'Nemotron-Research-Reasoning-Qwen-1.5B', 'RLVR', '1.5B']
    """
    from leash.sources.paper import load

    if not open_study(study).is_paper:
        raise LeashValueError("Table 13 lists the paper's models; it exists for ",
                              Param("study", value=PAPER), " only.", func="table13",
                              param="study", value=study)
    t = load("table13_models")
    return pd.DataFrame({"Name": t["model"], "Full name": t["full_name"], "Type": t["type"],
                         "Params": t["params"]})


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


def entropy_scatter_data(long: pd.DataFrame, *, benchmarks=None) -> tuple[pd.DataFrame, str]:
    """What the entropy scatter can draw: :func:`entropy_pairs` without the models that lack a
    token or answer entropy (generations without per-token entropies, e.g. files with only
    texts and verdicts), and a trained model whose base is left out; and one line naming what
    was left out and why ("" when nothing was).

    Returns
    -------
    (pandas.DataFrame, str)
        The rows to plot (possibly none: then the figure is not drawn) and the note.
    """
    data = entropy_pairs(long, benchmarks=benchmarks)
    lacking = data[["token_entropy", "answer_entropy"]].isna().any(axis=1)
    keep = ~lacking & (data["role"].eq("base") | data["base_model"].isin(
        data.loc[~lacking, "model"]))
    if keep.all():
        return data, ""
    gone = [str(m) for m in data.loc[~keep, "model"]]
    why = ("no token-level entropy in the data (token_entropy: the generations did not record "
           "per-token entropies)" if data["token_entropy"].isna().any()
           else "no answer-level entropy in the data")
    if not keep.any():
        return data.iloc[:0], f"The token vs answer entropy figure is not drawn: {why}."
    return (data[keep].reset_index(drop=True),
            f"Left out of the figure: {', '.join(gone)} ({why}, or their base model's).")


def table2(study=PAPER, *, pair=None, benchmarks=TABLE2_BENCHMARKS, how="trace-mean",
           seed=0):
    """Table 2: perplexity of external reasoning traces, by support category and reference.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        ``"paper"``: the printed values. A study: its ``perplexity`` section names the pair
        (categories come from that pair in the ``support`` section) and lists files of trace
        log-probabilities (``benchmark, question_id, reference, model, n_tokens,
        sum_logprob``); with ``simulated: true`` instead (the demo) they are simulated
        (:func:`leash.sources.simulate.simulate_traces`).
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
    return open_study(study).perplexity(pair=pair, benchmarks=benchmarks, how=how, seed=seed)


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


#: The columns of a sensitivity sweep a reader compares (:func:`sensitivity_summary`).
SENSITIVITY_COLUMNS = ["pair", "rule", "zeta", "min_count", "k", "k_min", "k_max", "scope",
                       "benchmark", "P", "E", "S", "O", "SRR", "NDR", "NSCR"]


def sensitivity_long(study, *, section="support", ks=None, zetas=(0.01, 0.05, 0.1, 0.2),
                     min_counts=(1, 2, 3, 5)):
    """Notebook 10's sweep: support counts and metrics of every pair of a study section as the
    rule, the count threshold, zeta and the budget vary.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        A study with per-question data (``"demo"`` or a study file); the paper prints its counts
        at one threshold (``min_count`` 1) and the full budget only.
    section : str, default "support"
    ks : sequence of int, optional
        Budgets, each at most every benchmark's; default: each benchmark at the study's budget,
        with exact counts.
    zetas, min_counts : sequence
        As in :func:`leash.analysis.sensitivity.sensitivity_sweep`.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`leash.analysis.sensitivity.sensitivity_sweep` (per benchmark and
        pooled per domain and overall) and ``pair`` last, the pairs in the section's order.

    Raises
    ------
    ValueError
        For the paper's printed numbers, which have no per-question data.
    """
    from leash.analysis.sensitivity import sensitivity_sweep

    src = open_study(study)
    if src.is_paper:
        raise LeashValueError("sensitivity_long needs per-question data (",
                              Param("study", value="demo"), " or a study file): the paper prints "
                              "its counts at one threshold (min_count 1) and the full budget "
                              "only.", param="study", value=PAPER)
    frames = [sensitivity_sweep(src.paired(section, p), ks=ks, zetas=zetas,
                                min_counts=min_counts, domains=src.domains).assign(pair=p.label)
              for p in src.section(section).pairs]
    return pd.concat(frames, ignore_index=True)


def sensitivity_summary(sweep: pd.DataFrame) -> pd.DataFrame:
    """The rows of a sensitivity sweep to compare: the pooled ones (each domain and overall), or
    each benchmark's when the study has one benchmark only (pooling needs two).

    Parameters
    ----------
    sweep : pandas.DataFrame
        A :func:`sensitivity_long` result.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SENSITIVITY_COLUMNS`, in the sweep's order.
    """
    from leash.analysis.tables import require_columns

    require_columns(sweep, SENSITIVITY_COLUMNS, "sensitivity_summary")
    pooled = sweep[sweep["scope"] != "benchmark"]
    rows = pooled if len(pooled) else sweep
    return rows[SENSITIVITY_COLUMNS].reset_index(drop=True)


def sensitivity_figure_data(sweep: pd.DataFrame, pair: str | None = None) -> pd.DataFrame:
    """What notebook 10's figure plots: SRR, NDR and NSCR of one pair under the count rule, per
    count threshold, each row at its largest budget.

    Parameters
    ----------
    sweep : pandas.DataFrame
        A :func:`sensitivity_long` result.
    pair : str, optional
        Pair label; default the first.

    Returns
    -------
    pandas.DataFrame
        ``pair, domain, min_count, k_min, k_max, SRR, NDR, NSCR``: the rows of
        :func:`sensitivity_summary` (``benchmark`` instead of ``domain`` for a study of one
        benchmark), at each row's largest budget where several were swept (averaging over
        budgets would mix min_count with k).

    Raises
    ------
    ValueError
        An unknown pair, or no row of the count rule (``min_counts`` empty).
    """
    rows = sensitivity_summary(sweep)
    labels = list(dict.fromkeys(rows["pair"]))
    pair = labels[0] if pair is None and labels else pair
    _check_pairs([pair], labels, "pair")
    data = rows[(rows["pair"] == pair) & (rows["rule"] == "count")]
    if data.empty:
        raise LeashValueError(f"the sweep has no row of the count rule for pair {pair!r} (were "
                              "min_counts empty?).", func="sensitivity_figure_data",
                              param="pair", value=pair)
    data = data[data["k_max"] == data.groupby("benchmark")["k_max"].transform("max")]
    hue = "benchmark" if (data["scope"] == "benchmark").all() else "domain"
    return (data[["pair", "benchmark", "min_count", "k_min", "k_max", "SRR", "NDR", "NSCR"]]
            .rename(columns={"benchmark": hue}).reset_index(drop=True))


def _answer_text(values, counts, n_missing) -> str:
    """Render a summary row's answer histogram as "52 x6, 57 x1, NA x1"."""
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
        ``question_id, gold[, question]`` (e.g. :func:`leash_eval.rescore.load_benchmark`), with a
        ``benchmark`` column when the study has several (:func:`leash.run.notebook.require_gold`):
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


def _per_question(study, what: str):
    """The study source of an artifact that needs per-question data (a ValueError for the
    paper's printed counts, which have none).
    """
    src = open_study(study)
    if src.is_paper:
        raise LeashValueError(f"{what} needs per-question data (", Param("study", value="demo"),
                              " or a study file): the paper prints counts per benchmark only.",
                              param="study", value=PAPER)
    return src


def flips(study, *, section="support", pairs=None, min_count=1, fdr=0.05, answers=True,
          response_chars=160):
    """Every question of every pair of a study section: counts, category, the one-sided Fisher
    tests and the verdict at ``fdr`` (:func:`leash.analysis.flips.flips_table`), with each
    model's most frequent answers and one response where the files keep them.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        A study with per-question data (``"demo"`` or a study file).
    section : str, default "support"
    pairs : list of str, optional
        Pair labels to keep (default: all).
    min_count : int, default 1
        Correct samples for "found" (the category; the tests do not depend on it).
    fdr : float, default 0.05
        False discovery rate of the verdicts (Benjamini-Hochberg per pair and direction; per
        step for checkpoints).
    answers : bool, default True
        Add ``base_answers, rl_answers`` (and, where the files keep responses,
        ``base_response, rl_response``, cut to ``response_chars``;
        :func:`leash.analysis.flips.with_answers`).
    response_chars : int, default 160

    Returns
    -------
    pandas.DataFrame
        ``pair`` and the columns of :func:`leash.analysis.flips.flips_table` (``step`` after
        ``pair`` for checkpoints), then the answer columns.
    """
    from leash.analysis.flips import flips_table, with_answers

    src = _per_question(study, "flips")
    listed = src.section(section).pairs
    _check_pairs(pairs, [p.label for p in listed])
    summary = src.summaries(section) if answers else None
    digest = (src.study.sample_digest(section, response_chars=response_chars)
              if answers and response_chars else None)
    frames = []
    for p in (p for p in listed if not pairs or p.label in pairs):
        paired = src.paired(section, p)
        by = ["step"] if paired["step"].notna().any() else []
        t = flips_table(paired, min_count=min_count, fdr=fdr, by=by)
        if answers:
            t = with_answers(t, summary, p.base, p.rl, base_step=p.base_step,
                             responses=digest)
        frames.append(t.assign(pair=p.label))
    out = pd.concat(frames, ignore_index=True)
    # answer columns the files have nothing for (counts, the demo's support part) are left out
    empty = [c for c in ("base_answers", "rl_answers", "base_response", "rl_response")
             if c in out and not out[c].astype(str).str.len().any()]
    out = out.drop(columns=empty)
    return out[["pair", *[c for c in out.columns if c != "pair"]]]


#: The categories whose questions a flips artifact lists (the support counts' E and S).
FLIPS_SHOWN = ("E", "S")


def flips_overview(table: pd.DataFrame) -> pd.DataFrame:
    """Per pair and benchmark (and all of a pair's): the categories, their significant subsets
    and the preserved questions whose rate moved significantly
    (:func:`leash.analysis.flips.flips_summary`).
    """
    from leash.analysis.flips import flips_summary

    by = ["pair", *(["step"] if "step" in table.columns and table["step"].notna().any()
                    else [])]
    return flips_summary(table, by=by)


def measured_null(study, *, section="support", pairs=None, min_count=1, n_splits=200, seed=0):
    """The measured null of every support statistic for each side of each pair, beside the
    pair's value (:func:`leash.analysis.measured_null.measured_null`): replicate runs where the
    study names them (``replicates:`` on a pair), random halves of each run's samples, and the
    halves in sample order where the files keep it.

    Parameters
    ----------
    study : str, Study or ArtifactSource
        A study with per-question data.
    section : str, default "support"
    pairs : list of str, optional
    min_count : int, default 1
    n_splits : int, default 200
        Random splits into halves per side.
    seed : int, default 0
        Seed of the random splits (``numpy.random.default_rng(seed)``, one stream for the
        run).

    Returns
    -------
    pandas.DataFrame
        ``pair label`` and :data:`leash.analysis.measured_null.NULL_COLUMNS`;
        ``attrs["notes"]`` lists what was left out and why.

    Raises
    ------
    ValueError
        The paper's printed counts (no per-question data), or a replicate that cannot measure
        a null (:meth:`leash.sources.study.Study.replicate_problems`: one line naming the
        study file, the key and the fix).
    """
    from leash.analysis.measured_null import measured_null as _null

    src = _per_question(study, "measured_null")
    problems = src.study.replicate_problems(section)
    if problems:
        raise problems[0]
    listed = src.section(section).pairs
    _check_pairs(pairs, [p.label for p in listed])
    summary = src.summaries(section)
    digest = src.study.sample_digest(section)  # the order; the one digest flips() reads too
    rng = np.random.default_rng(seed)
    frames, notes = [], []
    for p in (p for p in listed if not pairs or p.label in pairs):
        paired = src.paired(section, p)
        t = _null(summary, paired, p.base, p.rl, replicates=dict(p.replicates),
                  budget=src.budgets(section, p) or None, digest=digest, min_count=min_count,
                  domains=src.domains, rng=rng, n_splits=n_splits)
        notes += [f"{p.label}: {n}" for n in t.attrs["notes"]]
        frames.append(t.assign(**{"pair label": p.label}))
    out = pd.concat(frames, ignore_index=True)
    out = out[["pair label", *[c for c in out.columns if c != "pair label"]]]
    out.attrs["notes"] = notes
    return out


def null_table(null: pd.DataFrame, *, statistics=("E", "S", "NDR", "NSCR"), pooled=False):
    """:func:`measured_null` as one row per pair, side, method and scope, per statistic the
    pair's value, the null's mean and standard deviation and their difference
    (:func:`leash.analysis.measured_null.null_table`); ``pooled``: the pooled rows only (each
    benchmark's where a pair has one).
    """
    from leash.analysis.measured_null import null_table as _table

    if pooled:
        keep = null["scope"] != "benchmark"
        single = ~null["pair label"].isin(null.loc[keep, "pair label"])
        null = null[keep | single]
    return _table(null, statistics=list(statistics))


def null_figure_data(null: pd.DataFrame, *, statistics=("E", "S")) -> pd.DataFrame:
    """What the measured null's figure plots: for the pooled rows (each benchmark's where a
    pair has one), per pair, side and method, the pair's value and the null's mean and 95%
    range of ``statistics``.

    Returns
    -------
    pandas.DataFrame
        ``row`` (a label "pair, scope: null of <run> (<method>, k = ...)"), ``pair label,
        benchmark, side, run, method, k, statistic, pair, null_mean, null_low, null_high``.
    """
    keep = null["scope"] != "benchmark"
    single = ~null["pair label"].isin(null.loc[keep, "pair label"])
    d = null[(keep | single) & null["statistic"].isin(list(statistics))]

    def k_text(r):
        return str(int(r["k"])) if not pd.isna(r["k"]) else f"{r['k_min']}-{r['k_max']}"

    rows = d.assign(row=[f"{r['pair label']}, {r['benchmark']}: null of {r['run']} ({r['method']}, "
                         f"k = {k_text(r)})" for _, r in d.iterrows()])
    cols = ["row", "pair label", "benchmark", "side", "run", "method", "k", "statistic",
            "pair", "null_mean", "null_low", "null_high"]
    return rows[cols].reset_index(drop=True)


def budget_plan(study, *, section="support", pairs=None, ks=None, zeta=0.05):
    """What each budget would show, for every pair of a study taken as a pilot: expected and
    misclassified E and S per budget (:func:`leash.analysis.planning.budget_plan`).

    Parameters
    ----------
    study : str, Study or ArtifactSource
        A study with per-question data: its pairs' rates c / n are the pilot's.
    section : str, default "support"
    pairs : list of str, optional
    ks : sequence of int, optional
        Budgets; default powers of two up to 16 times the study's largest n.
    zeta : float, default 0.05

    Returns
    -------
    pandas.DataFrame
        ``pair`` and :data:`leash.analysis.planning.PLAN_COLUMNS`.
    """
    from leash.analysis.planning import budget_plan as _plan

    src = _per_question(study, "budget_plan")
    listed = src.section(section).pairs
    _check_pairs(pairs, [p.label for p in listed])
    frames = [_plan(src.paired(section, p), ks, zeta=zeta).assign(pair=p.label)
              for p in listed if not pairs or p.label in pairs]
    out = pd.concat(frames, ignore_index=True)
    return out[["pair", *[c for c in out.columns if c != "pair"]]]


def detection(expansions, *, ks=None, p_base=0.0, power=0.8, alpha=0.05):
    """The budget at which an expansion of each rate is detected with ``power``: observed as E
    (the paper's rule) and significant (a one-sided Fisher test at ``alpha``;
    :func:`leash.analysis.planning.detection_table`). Default budgets: powers of two up to
    131072.
    """
    from leash.analysis.planning import detection_table

    ks = 2 ** np.arange(18) if ks is None else ks
    return detection_table(list(expansions), ks, p_base=p_base, power=power, alpha=alpha)
