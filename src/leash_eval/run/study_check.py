"""Every check of a study file against its data that needs no notebook, in seconds.

``leash study check STUDY`` and ``make reproduce DATA=STUDY`` (before any kernel starts) call
:func:`check_study`. It reads each section's files once (their per-question summaries are
cached under the study's build folder, ``build/<name>/.summaries/``, keyed by each file's
sha256 and reader options, so the notebooks that follow do not read them again) and checks:

* the study's ``name`` and ``title`` (``paper`` is the paper's printed numbers: a copy of
  ``paper.yaml`` that keeps them would write the paper's file names, and caption every artifact
  with the paper's title);
* every ``path:`` source matches a file, and every ``gold:`` question file exists; a
  ``dataset:`` source not available locally makes its section skipped (as the notebooks skip
  it), with the reason;
* every benchmark of the data is declared under ``benchmarks`` ("did you mean" ignoring case
  and punctuation: ``math500`` for ``MATH500``);
* every pair's ``base`` and ``rl`` are models of its section's data (with "did you mean"), and
  its ``base_step`` a step of the base's rows;
* every budget fits the samples per question of both models of every pair, per benchmark
  (the entropy section uses every sample: no budget applies to it);
* a declared ``N`` equals the questions the data have;
* the pairing itself (questions one model lacks, a budget below n without the sample order):
  what :meth:`leash.sources.study.Study.paired` would refuse in a notebook;
* every replicate run a pair names (``replicates:``): a model of the data, not the side's own
  model nor listed twice, not the same file (by its bytes) as another run of the side, with
  the side's questions and samples per question, and not the same counts
  (:meth:`leash.sources.study.Study.replicate_problems`).

A section the notebooks read that the study leaves out, or that lists no sources, is no problem:
it "will be skipped" with the reason, as the notebook will be. Each problem is one
:class:`leash.errors.LeashValueError` naming the study file, the line, the key path
(``sections.support.pairs[0].rl``) and the value.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from leash.errors import LeashValueError, closest
from leash.paths import DATA, reserved_name, slug
from leash.sources.study import SECTIONS, Pair, Study, load_study
from leash_eval import studies

__all__ = ["StudyCheck", "check_study", "name_problems"]

#: The sections whose data are per-question summaries (``perplexity`` lists trace files).
_SUMMARY_SECTIONS = ("support", "checkpoints", "sft", "entropy", "gym")


@dataclass(frozen=True)
class StudyCheck:
    """What :func:`check_study` found: ``problems`` (errors), ``skipped`` (``(what, why)``: a
    section or artifact the notebooks will skip), and the sections read with their rows;
    ``skipped_sections``: section -> why, for the sections whose notebooks will skip whole
    (``leash reproduce`` starts no kernel for them).
    """

    study: Study
    problems: tuple[LeashValueError, ...]
    skipped: tuple[tuple[str, str], ...]
    read: tuple[tuple[str, int], ...]
    seconds: float
    skipped_sections: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems

    def lines(self) -> list[str]:
        """One line per problem, then one per skipped section."""
        return ([" ".join(str(p).split()) for p in self.problems]
                + [f"{what} will be skipped: {why}" for what, why in self.skipped])


class _Checker:
    def __init__(self, study: Study):
        self.study = study
        self.problems: list[LeashValueError] = []
        self.skipped: list[tuple[str, str]] = []
        self.skipped_sections: dict[str, str] = {}
        self.read: list[tuple[str, int]] = []

    def problem(self, keys: tuple, message: str, value, **kw) -> None:
        s = self.study
        line = s.line(*keys)
        key = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys).lstrip(".")
        where = f"study file {s.source}" if s.source else "study"
        at = f", line {line}" if line else ""
        self.problems.append(LeashValueError(f"{where}{at}: `{key}`: {message}",
                                             file=s.source, line=line, key=key, value=value,
                                             **kw))

    # ---- the study as a whole ------------------------------------------------------------
    def name(self) -> None:
        s = self.study
        shipped = (DATA / "studies" / "paper.yaml").resolve()
        if s.source is None or Path(s.source).resolve().parent == shipped.parent:
            return  # the shipped studies (demo, paper, ...) are the project's own
        if s.name == "paper":
            self.problem(("name",), "'paper' is the name of the paper's printed numbers; their "
                         "artifacts (table1.csv, ...) would be overwritten by yours: give your "
                         "study its own name (and `title:`).", s.name)
        elif (why := reserved_name(s.name)) is not None:
            self.problem(("name",), f"{s.name!r} is a name leash uses itself (build/"
                         f"{slug(s.name)}: {why}), which your study's artifacts and executed "
                         "notebooks would overwrite, or `make site` delete: give your study "
                         "its own name.", s.name)
        if s.title == load_study(shipped).title:
            self.problem(("title",), "is the paper's title, which every caption of your "
                         "artifacts would then show: give your study its own title (the models "
                         "and benchmarks it compares).", s.title)

    def skip_section(self, name: str, why: str) -> None:
        """The notebooks of section ``name`` will skip, because ``why``."""
        self.skipped.append((f"section {name!r}", why))
        self.skipped_sections[name] = why

    # ---- one section ---------------------------------------------------------------------
    def section(self, name: str) -> None:
        s = self.study
        sec = s.sections.get(name)
        if sec is None or not sec.sources:
            if sec is None or not sec.options.get("simulated"):
                self.skip_section(name, f"the study has no section {name!r}" if sec is None
                                  else "it lists no sources")
            return
        if not self.sources(name):
            return
        if name not in _SUMMARY_SECTIONS:
            return
        na = "class"
        if name == "entropy":
            from leash.core.entropy import PAPER_NA

            na = "truncated" if sec.options.get("na", PAPER_NA) == "truncated" else "class"
        try:
            frame = s.read_section(name, na=na)
        except (ValueError, TypeError, OSError) as exc:
            self.problem(("sections", name, "sources"), f"reading the data failed: "
                         f"{' '.join(str(exc).split())}", None)
            return
        self.read.append((name, len(frame)))
        bad = s.benchmark_problems(name, frame)
        self.problems.extend(bad)
        if bad:
            return
        for i, pair in enumerate(sec.pairs):
            self.pair(name, i, pair, frame)
        self.problems.extend(s.replicate_problems(name, frame))
        if not sec.pairs and name != "entropy":  # Table 5 has a row per model, pairs or not
            self.problem(("sections", name), "lists sources but no `pairs` (base and rl "
                         "model labels of the data)", None)
        if name == "entropy" and not frame["token_entropy_mean"].notna().any():
            self.skipped.append(("the token vs answer entropy figure (figure_entropy_scatter, "
                                 "notebook 07)", "the data have no per-token entropies "
                                 "(token_entropy); Table 5's token entropy is NA"))

    def sources(self, name: str) -> bool:
        """Whether every source of a section is here (problems or a skip otherwise)."""
        import glob

        ok = True
        for i, src in enumerate(self.study.section(name).sources):
            gold = self.study.gold_file(src)
            if gold is not None and not gold.is_file():
                self.problem(("sections", name, "sources", i, "gold"), f"the question file "
                             f"does not exist (looked for {gold})", src.rescore["gold"])
                ok = False
            if src.kind == "path":
                pattern = (src.value if Path(src.value).is_absolute()
                           else str(self.study.base_dir / src.value))
                if not glob.glob(pattern):
                    self.problem(("sections", name, "sources", i, "path"), f"matches no file "
                                 f"(looked for {pattern})", src.value)
                    ok = False
            elif src.kind == "dataset":
                try:
                    absent = [n for n, p in studies.local_copies(
                        src.value).items() if p is None]
                except ValueError as exc:
                    self.problem(("sections", name, "sources", i, "dataset"), str(exc),
                                 src.value)
                    ok = False
                    continue
                if absent:
                    self.skip_section(name, "data not available locally: "
                                      f"{', '.join(absent)} (`leash fetch {src.value}`)")
                    return False
        return ok

    def pair(self, name: str, i: int, p: Pair, frame: pd.DataFrame) -> None:
        s = self.study
        models = sorted(set(frame["model"].astype(str)))
        keys = ("sections", name, "pairs", i)
        fine = True
        for side in ("base", "rl"):
            label = getattr(p, side)
            if label not in models:
                near = closest(label, models)
                self.problem((*keys, side), f"model {label!r} is in no file of section {name!r}"
                             + (f"; did you mean {near!r}?" if near else
                                f" (models: {', '.join(models)})"), label)
                fine = False
        if not fine:
            return
        rows = frame[frame["model"].astype(str).isin([p.base, p.rl])]
        if name == "entropy":  # Table 5 uses every sample and pairs nothing
            return
        if not self.steps(name, keys, p, rows):
            return
        n_min = rows.groupby(rows["benchmark"].astype(str), sort=True)["n"].min()
        for bench, n in n_min.items():
            k = s.budget(bench, p) if bench in s.domains else None
            if k is None or k <= int(n):
                continue
            domain = s.domains[bench]
            where = ((*keys, "budgets", domain) if domain in p.budgets
                     else ("benchmarks", bench, "budget"))
            self.problem(where, f"budget {k} is above the samples per question of pair "
                         f"{p.label!r} on {bench}: n = {int(n)} on some question; set it to at "
                         f"most {int(n)}", k)
            fine = False
        if not fine:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the N check below says it once, as a problem
            try:
                paired = s.paired(name, p)
            except (ValueError, TypeError) as exc:
                self.problem(keys, " ".join(str(exc).split()), p.label)
                return
        declared = s.benchmarks.dropna(subset=["N"]).set_index("benchmark")["N"]
        have = paired.groupby("benchmark", observed=True)["question_id"].nunique()
        for bench, count in have.items():
            if bench in declared and int(count) != int(declared[bench]) and not any(
                    pr.key == f"benchmarks.{bench}.N" for pr in self.problems):
                self.problem(("benchmarks", bench, "N"), f"declares {int(declared[bench])} "
                             f"questions; the data of pair {p.label!r} (section {name!r}) have "
                             f"{int(count)}", int(declared[bench]))

    def steps(self, name: str, keys: tuple, p: Pair, rows: pd.DataFrame) -> bool:
        """Whether a pair's steps fit its section (a problem otherwise)."""
        if p.base_step is not None:
            steps = set(rows.loc[rows["model"].astype(str) == p.base, "step"].dropna().astype(int))
            if p.base_step not in steps:
                self.problem((*keys, "base_step"), f"model {p.base!r} has no rows at step "
                             f"{p.base_step} (steps: {sorted(steps) or 'none'})", p.base_step)
                return False
        if name == "checkpoints" and rows.loc[rows["model"].astype(str) == p.rl, "step"] \
                .isna().any():
            self.problem((*keys, "rl"), f"model {p.rl!r} has rows without a step (a final "
                         "model) in section 'checkpoints', which compares numbered steps: list "
                         "only the files of its checkpoints there (the final model belongs in "
                         "'support')", p.rl)
            return False
        if name != "checkpoints" and p.base_step is None:
            rl_steps = rows.loc[rows["model"].astype(str) == p.rl, "step"].astype("Int64")
            rl_steps = rl_steps.unique()  # a final model's rows have no step: <NA> counts too
            if len(rl_steps) > 1:
                self.problem((*keys, "rl"), f"model {p.rl!r} has rows at {len(rl_steps)} steps, "
                             f"and section {name!r} compares one model per side: list the "
                             "checkpoints in the 'checkpoints' section", p.rl)
                return False
        return True


def check_study(study, sections=None) -> StudyCheck:
    """Check a study file against its data before any notebook runs.

    Parameters
    ----------
    study : str, path-like or Study
        A shipped study name or a study file (:func:`leash.sources.study.load_study`; a file
        that breaks the schema raises its ConfigError here).
    sections : sequence of str, optional
        The sections to check (default: every section the notebooks read).

    Returns
    -------
    StudyCheck
        The problems (one :class:`leash.errors.LeashValueError` each, naming the study file, the
        line, the key path and the value), the sections that will be skipped and why, and the
        sections read.
    """
    t0 = time.perf_counter()
    s = load_study(study)
    c = _Checker(s)
    c.name()
    for name in sections or SECTIONS:
        c.section(name)
    return StudyCheck(s, tuple(c.problems), tuple(c.skipped), tuple(c.read),
                      time.perf_counter() - t0, dict(c.skipped_sections))


def name_problems(study) -> tuple[LeashValueError, ...]:
    """The problems of a study's ``name`` and ``title`` alone (no data read): what ``leash
    study init`` checks of its draft before writing it, so that it writes no study its check
    refuses.

    Parameters
    ----------
    study : Study
        A parsed study (its ``source`` the path it will be written to).

    Returns
    -------
    tuple of LeashValueError
    """
    c = _Checker(study)
    c.name()
    return tuple(c.problems)
