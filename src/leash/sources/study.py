"""Study files: which models are compared, on which benchmarks, at which budget, from which data.

A study file (YAML, ``data/studies/*.yaml``) is how a notebook is pointed at generations: the
paper's own study (its model pairs, benchmarks and budgets, arXiv 2507.14843v4, Tables 1-14 and
Figures 1-4) needs only the paths of a user's generations; the embedded demo and the real public
data each have one too. Layout::

    name: demo
    title: Simulated demo study (NOT the paper's data)
    simulated: true                 # every artifact made from it says "simulated"
    benchmarks:                     # benchmark -> domain (math / non-math) and budget
      MATH500: {domain: math, budget: 8192}
    sections:                       # one per analysis; a notebook reads the section it needs
      support:                      # Tables 1 and 6-12, Figure 1
        sources:                    # any mix of the three kinds of source below
          - demo: support           # a part of the embedded simulated demo (data/demo/)
          - dataset: gsm8k-probe-sft      # a manifest dataset or group (fetched/mirrored)
          - path: ../../generations/*.parquet   # files or globs, relative to this file
            fmt: samples            # optional reader overrides: fmt, model, benchmark, step,
            model: my-model         #   mapping
          - path: ../../generations/lm-eval/*.jsonl
            rescore: math-verify    # grade the responses first (files without correctness)
            gold: math500           # optional: a manifest benchmark or a JSONL question file
            gold_rule: answer       #   (relative to this file; default: the file's own gold),
            extract: leash          #   where a file's gold is; math-verify (default) or leash
        pairs:
          - {label: demo-1.5B, base: demo-base-1.5B, rl: demo-rlvr-1.5B}
          - label: mine             # replicates: other runs of a side's model (same questions
            base: my-base           #   and budget, own seeds), labels of the section's data;
            rl: my-rlvr             #   they measure the null of the support statistics
            replicates: {base: [my-base-seed1, my-base-seed2]}
      checkpoints: {...}            # Table 4: pairs whose rl model has several steps
      entropy: {...}                # Table 5
      sft: {...}                    # Tables 3 and 14
      gym: {...}                    # Figures 2-4
      perplexity: {...}             # Table 2

The file is checked against :data:`STUDY_SCHEMA` before anything runs: an unknown key at any
level (a misspelled ``sectoins:``, a section the notebooks do not read) is an error with the
closest known key, and so is a value of the wrong type (``budget: true``: bools are never
ints). YAML anchors and aliases are refused (a study file has no need of them, and refusing them
rules out alias bombs without expanding anything), and so are duplicate keys. Each problem is
one ValueError naming the file, the line and the key path, e.g.
``study file s.yaml, line 4: `benchmarks.MATH500.budget` must be an int >= 1, got true (bool).``
An empty value (``budget:``) means "not given". A pair's ``replicates`` are checked against the
data when it is read (:meth:`Study.replicate_problems`, and ``leash study check``): each must be
a model of the section, another run than the side's own and its other replicates (not the same
file, nor the same counts), with the side's questions and samples per question. Beyond
``sources`` and ``pairs``, the ``support`` section takes ``estimator`` (of its pass@k curves and
the explorer), the ``sft`` section ``ks`` and ``estimator``, the ``gym`` section ``estimator``,
the ``entropy``
section ``na`` (the NA rule of answer entropy, :data:`leash.core.entropy.NA_RULES`; default the
paper's "truncated") and the ``perplexity`` section ``simulated``; they are kept in
``Section.options``, and a notebook parameter overrides them only when it is given.

Rescoring. A ``path:`` or ``dataset:`` source with ``rescore: math-verify`` has its responses
graded (:func:`leash_eval.rescore.rescored_path`) before it is summarized: against the gold answers
of ``gold:`` (a benchmark of ``data/manifest.yaml`` with a question file, e.g. ``math500``, or a
local JSONL question file, ``*.jsonl`` relative to the study file, its gold in the field
``gold_rule:`` names: ``answer`` by default, as ``leash rescore --gold FILE --gold-rule``; so a
study offline regrades too) or, without it, each file's own gold field; ``extract:`` picks the
answer extraction. The rescored file is cached under ``build/rescored/``, keyed by the input's
sha256, the scorer, the extractor, the gold source (a question file by its sha256) and the
reader options, so a second load only hashes the input. ``gold:`` and ``extract:`` apply only
with ``rescore:``, ``gold_rule:`` only with ``gold:``.

Budgets. A benchmark's ``budget`` (or a pair's ``budgets`` for the benchmark's domain) is the
number of samples per question the tables use: :meth:`Study.paired` compares the two models at
it (the first ``budget`` samples, when the data have more), and the pass@k curves stop there.
Data with fewer samples than the declared budget are an error naming the benchmark, so a table
never claims a budget it does not have. The entropy section (Table 5) uses every sample.
"""

from __future__ import annotations

import functools
import glob as _glob
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from leash import config as C
from leash.core.entropy import NA_RULES
from leash.core.passk import ESTIMATORS
from leash.errors import LeashValueError, Param, Words, closest
from leash.paths import DATA, study_folder
from leash.sources.choices import (
    EXTRACTORS,
    GOLD_DATASETS,
    GOLD_FILE_RULES,
    INPUT_FORMATS,
    MAPPING_FIELDS,
    MAPPINGS,
    RESCORERS,
    is_gold_file,
)
from leash.sources.seam import toolkit

__all__ = ["Source", "Pair", "Section", "Study", "STUDY_SCHEMA", "load_study",
           "studies_dir", "list_studies"]

SOURCE_KINDS = ("path", "dataset", "demo")
READER_KEYS = ("fmt", "model", "benchmark", "step", "mapping")
DOMAINS = ("math", "non-math", "reasoning-gym")  # RG is never pooled into Table 1
#: The analyses a study can feed, one per section; the notebooks read no other.
SECTIONS = ("support", "checkpoints", "sft", "entropy", "gym", "perplexity")


# ---- the schema of a study file (one table per level; leash.config walks it) ---------------

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(minimum: int) -> C.Value:
    return C.Value(f"an int >= {minimum}", lambda v: _is_int(v) and v >= minimum)


def _one_of(choices: tuple[str, ...]) -> C.Value:
    return C.Value(f"one of {', '.join(choices)}", lambda v: isinstance(v, str) and v in choices,
                   choices=choices)


def _demo_parts():
    from leash.sources.demo import DEMO_FILES

    return DEMO_FILES


# The data manifest's names are the toolkit's to read: checked only when a study names one.
def _gold_names():
    return toolkit("A `gold:` benchmark").gold_names()


def _is_gold(v) -> bool:
    return isinstance(v, str) and (v in GOLD_DATASETS or is_gold_file(v) or toolkit(
        "A `gold:` benchmark").question_dataset(v) is not None)


def _manifest_names():
    return toolkit("A `dataset:` source").manifest_names()


_LABEL = C.Value("a non-empty string (quote it if YAML reads it as a number, date or bool)",
                 lambda v: isinstance(v, str) and bool(v.strip()))
_TEXT = C.Value("a string", lambda v: isinstance(v, str))
_BOOL = C.Value("true or false", lambda v: isinstance(v, bool))
_DATASET = C.Value("a dataset or group of data/manifest.yaml",
                   lambda v: isinstance(v, str) and v in _manifest_names(),
                   choices=_manifest_names, known="`leash fetch --list` lists them")
_DEMO = C.Value("a part of the simulated demo", lambda v: isinstance(v, str) and v in
                _demo_parts(), choices=_demo_parts)
_MAPPING = C.Either(
    C.Value(f"one of {', '.join(MAPPINGS)} or a YAML file of field paths (*.yaml)",
            lambda v: isinstance(v, str) and (v in MAPPINGS or v.lower().endswith((".yaml",
                                                                                   ".yml"))),
            choices=tuple(MAPPINGS)),
    C.Fields({f: _TEXT for f in MAPPING_FIELDS}, required=("correct",),
             what="a mapping of NestedMapping fields"),
    what=f"one of {', '.join(MAPPINGS)}, or a mapping of NestedMapping fields "
         "(data/README.md, section 4b)")
_GOLD = C.Value("a benchmark of data/manifest.yaml with a question file, or a JSONL question "
                "file (*.jsonl, relative to the study file)", _is_gold, choices=_gold_names)
_SOURCE = C.Fields(
    {"path": _LABEL, "dataset": _DATASET, "demo": _DEMO, "fmt": _one_of(INPUT_FORMATS),
     "model": _LABEL, "benchmark": _LABEL, "step": _int(0), "mapping": _MAPPING,
     "rescore": _one_of(RESCORERS), "gold": _GOLD, "gold_rule": _one_of(GOLD_FILE_RULES),
     "extract": _one_of(EXTRACTORS)},
    one_of=SOURCE_KINDS, needs={"gold": "rescore", "extract": "rescore", "gold_rule": "gold"},
    what="a mapping (path:, dataset: or demo:, reader options, rescore:)")
_RUNS = C.ListOf(_LABEL, what="a list of model labels", min_len=1)
_PAIR = C.Fields(
    {"label": _LABEL, "base": _LABEL, "rl": _LABEL, "base_step": _int(0),
     "budgets": C.Fields({d: _int(1) for d in DOMAINS}, what="a mapping of domains to budgets"),
     "shared_only": _BOOL,
     "replicates": C.Fields({"base": _RUNS, "rl": _RUNS},
                            what="a mapping (base:, rl:) of lists of model labels")},
    required=("base", "rl"), what="a mapping (label:, base:, rl:, ...)")
_SECTION_KEYS = {"sources": C.ListOf(_SOURCE), "pairs": C.ListOf(_PAIR)}
_SECTION_EXTRA = {"support": {"estimator": _one_of(ESTIMATORS)},
                  "sft": {"ks": C.ListOf(_int(1), what="a list of ints >= 1", min_len=1),
                          "estimator": _one_of(ESTIMATORS)},
                  "gym": {"estimator": _one_of(ESTIMATORS)},
                  "entropy": {"na": _one_of(NA_RULES)},
                  "perplexity": {"simulated": _BOOL}}
_BENCHMARK = C.Fields({"domain": _one_of(DOMAINS), "budget": _int(1), "N": _int(1)},
                      required=("domain",), what="a mapping (domain:, budget:, N:)")

#: The schema of a study file, level by level (see :mod:`leash.config` for the node kinds).
STUDY_SCHEMA = C.Fields({
    "name": _LABEL,
    "title": _TEXT,
    "simulated": _BOOL,
    "description": _TEXT,
    "benchmarks": C.MapOf(_LABEL, _BENCHMARK, what="a mapping of benchmark names to settings"),
    "sections": C.Fields(
        {s: C.Fields({**_SECTION_KEYS, **_SECTION_EXTRA.get(s, {})}) for s in SECTIONS},
        what="a mapping of section names to sections"),
}, what="a mapping (name:, title:, benchmarks:, sections:, ...)")


def studies_dir() -> Path:
    """The folder of the shipped study files (``data/studies/`` of the repository)."""
    return DATA / "studies"


def list_studies() -> list[str]:
    """Names of the shipped study files."""
    return sorted(p.stem for p in studies_dir().glob("*.yaml"))


@dataclass(frozen=True)
class Source:
    """One data source of a section: a file/glob, a manifest dataset/group, or a demo part."""

    kind: str
    value: str
    reader: Mapping = field(default_factory=dict)
    #: ``scorer`` (and ``gold``, ``extract``) when the source is rescored; empty otherwise.
    rescore: Mapping = field(default_factory=dict)

    def describe(self) -> str:
        """One line naming the source: its kind, value and reader/rescore options."""
        extra = "".join(f", {k}={v}" for k, v in self.reader.items())
        extra += "".join(f", {'rescore' if k == 'scorer' else k}={v}"
                         for k, v in self.rescore.items())
        return f"{self.kind}: {self.value}{extra}"


class _PairWords(Words):
    """pair_counts' errors in the words of a study pair: its keys (``Its `rl` selects no
    rows``, ```shared_only: true```, ```base: m` with `base_step: 0```) for the parameters they
    set, and no function name (a study's reader calls none).
    """

    KEYS = {"base": "base", "rl": "rl", "restrict_to_shared": "shared_only"}

    def param(self, ref: Param, *, func=None, start=False) -> str:
        keys = [self.KEYS.get(n) for n in ref.names]
        if None in keys:
            return super().param(ref, func=func, start=start)
        if not ref.has_value:
            return ("Its " if start else "its ") + " and ".join(f"`{k}`" for k in keys)
        if isinstance(ref.value, tuple):  # (model, step): the pair's base_step
            model, step = ref.value
            return f"`{keys[0]}: {model}`" + (f" with `base_step: {step}`"
                                               if ref.name == "base" else "")
        value = str(ref.value).lower() if isinstance(ref.value, bool) else ref.value
        return f"`{keys[0]}: {value}`"

    def prefix(self, func: str) -> str:
        return ""


@dataclass(frozen=True)
class Pair:
    """A base/RLVR comparison: model labels as they appear in the summary's ``model`` column."""

    label: str
    base: str
    rl: str
    base_step: int | None = None
    budgets: Mapping = field(default_factory=dict)  # domain -> k, overriding the benchmarks'
    shared_only: bool = False  # drop (and count) questions one model lacks, else an error
    #: Other runs of each side's model ("base", "rl" -> model labels of the section's data):
    #: the same questions and budget, independent seeds; they measure the null of the support
    #: statistics (:mod:`leash.analysis.measured_null`).
    replicates: Mapping = field(default_factory=dict)

    def runs(self, side: str) -> tuple[str, ...]:
        """The runs of one side's model: the side's own label, then its replicates."""
        return (getattr(self, side), *self.replicates.get(side, ()))


@dataclass(frozen=True)
class Section:
    """The data and comparisons of one analysis of a study."""

    name: str
    sources: tuple[Source, ...]
    pairs: tuple[Pair, ...]
    options: Mapping = field(default_factory=dict)

    def pair(self, label: str | None = None) -> Pair:
        """The pair with this label (default: the first)."""
        if label is None:
            if not self.pairs:
                raise LeashValueError(f"Section {self.name!r} declares no pairs.",
                                      key=f"sections.{self.name}.pairs")
            return self.pairs[0]
        for p in self.pairs:
            if p.label == label:
                return p
        raise LeashValueError(
            f"Section {self.name!r} has no pair {label!r}; pairs: {[p.label for p in self.pairs]}.",
            key=f"sections.{self.name}.pairs", value=label)



class _SharedProvenance(dict):
    """The provenance of a section (one entry per file read), shared by the frames made from
    its frame, not copied: pandas deep-copies a frame's attrs at every operation (every column
    it hands out), which for a section of 1,000 files cost more than reading them, in time
    growing with the files times the operations. Read only: nothing changes a provenance.
    """

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

class Study:
    """A parsed study file. Use :func:`load_study` to make one.

    ``Study(raw)`` checks a mapping against :data:`STUDY_SCHEMA` (ValueError at the first
    problem); ``lines`` (key lines from the loader) puts line numbers into the messages.
    """

    def __init__(self, raw: Mapping, source: Path | None = None, *, lines: Mapping | None = None):
        where = f"study file {source}" if source else "study"
        C.check(raw, STUDY_SCHEMA, where=where, lines=lines)
        self.source = source
        self.base_dir = source.parent if source else Path.cwd()
        self.name = str(raw.get("name") or (source.stem if source else "study"))
        self.title = str(raw.get("title") or self.name)
        self.simulated = bool(raw.get("simulated", False))
        self.description = str(raw.get("description") or "").strip()
        self._where = where
        self._raw, self._lines = raw, lines or {}
        self.benchmarks = self._parse_benchmarks(raw.get("benchmarks") or {})
        sections = raw.get("sections") or {}
        self.sections = {str(k): self._parse_section(str(k), v) for k, v in sections.items()}
        self._cache: dict[tuple[str, str], pd.DataFrame] = {}
        self._files: dict[str, list] = {}  # section -> [(file, its models)] of the last read
        #: Where the per-question summaries of the study's files are cached (keyed by each
        #: file's sha256 and reader options): ``build/<name>/.summaries/``, beside its artifacts.
        self.cache_dir: Path | None = study_folder(self.name) / ".summaries"

    def line(self, *keys) -> int | None:
        """The line of a key path of the file (``"sections", "support", "pairs", 0, "rl"``),
        or of the deepest part of it found; None without line numbers.
        """
        node, line = self._raw, None
        for k in keys:
            at = self._lines.get(id(node))
            if at is None:
                break
            try:
                line, node = at[k], node[k]
            except (KeyError, IndexError, TypeError):
                break
        return line

    def error(self, message: str, *keys, value=None) -> LeashValueError:
        """An error about the study file: ``message`` with the file, and the line and key of
        the key path ``keys`` (``"sections", "support", "pairs", 0`` is
        ``sections.support.pairs[0]``).
        """
        key = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys).lstrip(".")
        return LeashValueError(message, file=self.source, line=self.line(*keys) if keys else None,
                               key=key or None, value=value)

    # ---- parsing ---------------------------------------------------------------------------
    def _parse_benchmarks(self, raw) -> pd.DataFrame:
        rows = [{"benchmark": str(name), "domain": spec["domain"], "budget": spec.get("budget"),
                 "N": spec.get("N")} for name, spec in raw.items()]
        return pd.DataFrame(rows, columns=["benchmark", "domain", "budget", "N"])

    def _parse_section(self, name, raw) -> Section:
        raw = raw or {}
        sources = []
        for i, s in enumerate(raw.get("sources") or []):
            kind = next(k for k in SOURCE_KINDS if s.get(k) is not None)
            reader = {k: s[k] for k in READER_KEYS if s.get(k) is not None}
            rescore = {}
            if s.get("rescore") is not None:
                if kind == "demo":
                    raise self.error(f"Section {name!r} of the {self._where}: a demo source is "
                                      "already summarized; `rescore` applies to path: and "
                                      "dataset: sources.", "sections", name, "sources", i,
                                      "rescore", value=s["rescore"])
                rescore = {"scorer": s["rescore"], **{k: s[k] for k in (
                    "gold", "gold_rule", "extract") if s.get(k) is not None}}
            sources.append(Source(kind, str(s[kind]), reader, rescore))
        pairs = [Pair(str(p.get("label") or f"{p['base']} -> {p['rl']}"), str(p["base"]),
                      str(p["rl"]), p.get("base_step"), dict(p.get("budgets") or {}),
                      bool(p.get("shared_only")),
                      {side: tuple(str(x) for x in runs) for side, runs in
                       (p.get("replicates") or {}).items() if runs})
                 for p in raw.get("pairs") or []]
        options = {k: v for k, v in raw.items() if k not in ("sources", "pairs") and v is not None}
        return Section(name, tuple(sources), tuple(pairs), options)

    # ---- access ----------------------------------------------------------------------------
    @cached_property
    def domains(self) -> dict[str, str]:
        """Benchmark -> domain."""
        return dict(zip(self.benchmarks["benchmark"], self.benchmarks["domain"]))

    def budget(self, benchmark: str, pair: Pair | None = None):
        """The declared budget of a benchmark (a pair's per-domain budget first; None if none)."""
        row = self.benchmarks[self.benchmarks["benchmark"] == benchmark]
        if row.empty:
            raise self.error(f"Benchmark {benchmark!r} is not declared in the {self._where}.",
                              "benchmarks", value=benchmark)
        if pair is not None and row["domain"].iat[0] in pair.budgets:
            return int(pair.budgets[row["domain"].iat[0]])
        b = row["budget"].iat[0]
        return None if pd.isna(b) else int(b)

    def budgets(self, name: str, pair: Pair | str | None = None) -> dict[str, int]:
        """The declared budget of every benchmark in a section's data, for one pair.

        A pair's per-domain ``budgets`` come first, then the benchmark's ``budget``; benchmarks
        with neither are left out (they are compared at their samples per question).

        Raises
        ------
        ValueError
            If the pair's models have fewer samples per question on a benchmark than its
            declared budget (the message names the benchmark, the budget and the n found).
        """
        p = pair if isinstance(pair, Pair) else self.section(name).pair(pair)
        s = self.summaries(name)
        rows = s[s["model"].isin([p.base, p.rl])]
        n_min = rows.groupby(rows["benchmark"].astype(str), sort=False)["n"].min()
        out = {}
        for bench, n in n_min.items():
            if bench not in self.domains:
                continue
            k = self.budget(bench, p)
            if k is None:
                continue
            if k > int(n):
                where = (f"the `budgets` of pair {p.label!r}" if self.domains[bench] in p.budgets
                         else f"`benchmarks.{bench}.budget`")
                keys = (("sections", name, "pairs", self.section(name).pairs.index(p), "budgets",
                         self.domains[bench]) if self.domains[bench] in p.budgets
                        else ("benchmarks", bench, "budget"))
                raise self.error(
                    f"Section {name!r} of the {self._where}: benchmark {bench!r} has the budget "
                    f"{k} ({where}: the samples per question the tables use), but pair "
                    f"{p.label!r} has only n = {int(n)} samples on some of its questions; set "
                    f"the budget to at most {int(n)}.", *keys, value=k)
            out[bench] = k
        return out

    def section(self, name: str) -> Section:
        """The named section; ValueError listing the available ones otherwise."""
        if name not in self.sections:
            raise self.error(
                f"The {self._where} has no section {name!r}; sections: {sorted(self.sections)}.",
                "sections", value=name)
        return self.sections[name]

    def datasets(self, sections=None) -> list[str]:
        """The data-manifest datasets behind the study's ``dataset:`` sources (groups expanded).

        Parameters
        ----------
        sections : str or sequence of str, optional
            The sections to look at (default: all).

        Returns
        -------
        list of str
            Dataset names of ``data/manifest.yaml``, each once, in the order the sources list
            them; what :func:`leash.run.notebook.require_study` checks is available locally.
        """
        out: dict[str, None] = {}
        for sec in self._sections(sections):
            for src in sec.sources:
                if src.kind == "dataset":
                    out.update(dict.fromkeys(toolkit("A `dataset:` source").dataset_names(
                        src.value)))
        return list(out)

    def path_sources(self, sections=None) -> list[str]:
        """The ``path:`` sources of the given sections (default: all), as absolute patterns."""
        out: dict[str, None] = {}
        for sec in self._sections(sections):
            for src in sec.sources:
                if src.kind == "path":
                    out[src.value if Path(src.value).is_absolute()
                        else str(self.base_dir / src.value)] = None
        return list(out)

    def _sections(self, sections):
        if sections is None:
            return list(self.sections.values())
        names = [sections] if isinstance(sections, str) else list(sections)
        return [self.section(n) for n in names]

    def has_data(self, name: str) -> bool:
        """Whether the section declares at least one source."""
        return name in self.sections and bool(self.sections[name].sources)

    def summaries(self, name: str, *, na: str = "class") -> pd.DataFrame:
        """The per-question summary frame of a section, from all of its sources (cached).

        ``na`` ("class" or "truncated", :data:`leash.summary.NA_MODES`) is the NA rule the
        generations are summarized under (which samples count as "answer missing"); it is
        recorded in ``attrs["provenance"]["na"]`` when every source was read under it (a demo
        part, already a summary, has no recorded rule: its NA samples are its truncated ones).

        Raises
        ------
        ValueError
            If the section has no sources.
        FileNotFoundError
            If a path matches no file or a dataset is neither cached nor mirrored nor
            downloadable (``leash_eval.manifest.DatasetUnavailableError``).
        """
        frame = self.read_section(name, na=na)
        if problems := self.benchmark_problems(name, frame):
            raise problems[0]
        return frame

    def read_section(self, name: str, *, na: str = "class") -> pd.DataFrame:
        """:meth:`summaries` without the check of its benchmark labels (cached)."""
        if (name, na) in self._cache:
            return self._cache[(name, na)]
        sec = self.section(name)
        if not sec.sources:
            raise self.error(
                f"Section {name!r} of the {self._where} lists no sources: add the paths of your "
                "generations (see data/README.md) under 'sources'.", "sections", name)
        parts, read, files = [], True, []
        for src in sec.sources:
            for path, kwargs in self.resolve(src):
                if isinstance(path, pd.DataFrame):
                    parts.append(path)
                    read = False
                else:
                    parts.append(self._counts(path, na, kwargs))
                    files.append((Path(path), sorted(set(parts[-1]["model"].astype(str)))))
        self._files[name] = files
        frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].copy()
        frame.attrs["provenance"] = _SharedProvenance(
            na=na if read else None, parts=[p.attrs.get("provenance", {}) for p in parts])
        self._cache[(name, na)] = frame
        return frame

    def sample_digest(self, name: str, *, response_chars: int = 160) -> pd.DataFrame | None:
        """What the sample order and texts of a section's files tell per question
        (:func:`leash_eval.studies.sample_digest`: the correct samples of each half, one
        response), cached beside the summaries; None when no source keeps samples (a demo part,
        counts or summaries).

        Returns
        -------
        pandas.DataFrame or None
            ``model, benchmark, question_id, step, n_ordered, c_first, c_second, response,
            response_correct`` for the questions of the files that keep their samples.
        """
        key = (name, f"digest-{int(response_chars)}")
        if key in self._cache:
            return self._cache[key]
        parts = []
        for src in self.section(name).sources:
            if src.kind == "demo":
                continue
            for path, kwargs in self.resolve(src):
                d = toolkit("Reading the samples of generations").sample_digest(
                    path, response_chars=response_chars, cache_dir=self.cache_dir, **kwargs)
                if d is not None:
                    parts.append(d)
        out = pd.concat(parts, ignore_index=True) if parts else None
        self._cache[key] = out
        return out

    def model_files(self, name: str) -> dict[str, list[Path]]:
        """The files each model label of a section's data comes from (after reading it; a demo
        part is no file).
        """
        if name not in self._files:
            self.read_section(name)
        out: dict[str, list[Path]] = {}
        for path, models in self._files[name]:
            for m in models:
                out.setdefault(m, []).append(path)
        return out

    def replicate_problems(self, name: str, frame: pd.DataFrame | None = None
                           ) -> list[LeashValueError]:
        """One error per replicate run of a section's pairs that cannot measure a null: a
        label that is no model of the data (with "did you mean"), the side's own model or a run
        listed twice, the same file as another run of the side (by its bytes), other questions
        or other samples per question than the side's model, or per-question counts identical to
        another run's (the same generations twice). Each names the study file, the line and the
        key path (``sections.support.pairs[0].replicates.base[1]``), the value and the fix.
        """
        sec = self.section(name)
        if not any(p.replicates for p in sec.pairs):
            return []
        frame = self.read_section(name) if frame is None else frame
        models = sorted(set(frame["model"].astype(str)))
        files = self.model_files(name)
        out = []

        def problem(keys, message, value, hint):
            at = self.line(*keys)
            key = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys).lstrip(".")
            out.append(LeashValueError(
                f"{self._where}{f', line {at}' if at else ''}: `{key}`: {message};",
                file=self.source, line=at, key=key, value=value, hint=hint))

        for i, p in enumerate(sec.pairs):
            for side, runs in p.replicates.items():
                own = getattr(p, side)
                seen = {own: ("sections", name, "pairs", i, side)}
                for j, label in enumerate(runs):
                    keys = ("sections", name, "pairs", i, "replicates", side, j)
                    if label in seen:
                        problem(keys, f"{label!r} is listed already as a run of the {side} "
                                f"model {own!r}", label, "a replicate is another run of the "
                                "model (its own files, its own seed): list each once.")
                        continue
                    if label not in models:
                        near = closest(label, models)
                        problem(keys, f"model {label!r} is in no file of section {name!r}",
                                label, f"did you mean {near!r}?" if near else
                                f"models: {', '.join(models)}.")
                        continue
                    self._replicate_differences(keys, frame, files, own, label, list(seen),
                                                problem)
                    seen[label] = keys
        return out

    def _replicate_differences(self, keys, frame, files, own, label, others, problem):
        """The problems of one replicate ``label`` of the model ``own`` (see
        :meth:`replicate_problems`); ``problem`` records each.
        """
        mine = {_digest(f): f for f in files.get(label, [])}
        for other in others:
            twice = [mine[d] for d in map(_digest, files.get(other, [])) if d in mine]
            if twice:
                problem(keys, f"{label!r} comes from the file {twice[0]}, and {other!r} from "
                        "the same bytes: the same generations twice", str(twice[0]),
                        "a replicate is another run of the model, with its own seed, in its "
                        "own files.")
                return
        key = ["benchmark", "question_id"]
        rows = {m: frame[frame["model"].astype(str) == m].assign(
            benchmark=lambda d: d["benchmark"].astype(str),
            question_id=lambda d: d["question_id"].astype(str)).set_index(key).sort_index()
            for m in (own, label)}
        a, b = rows[own], rows[label]
        if not a.index.equals(b.index):
            only = sorted(set(a.index) ^ set(b.index))
            shown = ", ".join(f"{x}/{y}" for x, y in only[:3])
            problem(keys, f"{label!r} has {len(b)} questions and {own!r} {len(a)}, "
                    f"{len(only)} of them not both ({shown}{', ...' if len(only) > 3 else ''})",
                    label, "a replicate answers the same questions as its model (nothing is "
                    "compared on a subset): run it on the same questions.")
            return
        n_a, n_b = a["n"].to_numpy(), b["n"].to_numpy()
        if (n_a != n_b).any():
            at = int((n_a != n_b).argmax())
            problem(keys, f"{label!r} has n = {int(n_b[at])} samples on {a.index[at][0]}/"
                    f"{a.index[at][1]} and {own!r} n = {int(n_a[at])}: another budget", label,
                    "a replicate has the budget of its model: sample it as often per question.")
            return
        same = (a["c"].to_numpy() == b["c"].to_numpy()).all() and (
            a["first_correct"].astype("Int64").fillna(-2).to_numpy()
            == b["first_correct"].astype("Int64").fillna(-2).to_numpy()).all()
        if same:
            problem(keys, f"{label!r} has the same correct samples as {own!r} on all "
                    f"{len(a)} questions (and the same first correct ones): the same "
                    "generations twice", label, "a replicate is another run of the model, "
                    "with its own seed.")

    def benchmark_problems(self, name: str, frame: pd.DataFrame) -> list[LeashValueError]:
        """One error per benchmark of a section's data that the study does not declare, with
        the declared one it most likely means (case and punctuation ignored); none when the
        study declares no benchmarks.
        """
        if not self.benchmarks.shape[0]:
            return []
        declared = sorted(self.domains)
        out = []
        for bench in sorted(set(frame["benchmark"].astype(str)) - set(self.domains)):
            near = closest(bench, declared)
            at = self.line("benchmarks")
            out.append(LeashValueError(
                f"{self._where}{f', line {at}' if at else ''}: `benchmarks`: the data of "
                f"section {name!r} have benchmark {bench!r}, which the study does not declare"
                + (f"; did you mean {near!r}? (rename the key, or set `benchmark: {near}` on "
                   "the source)" if near else f" (declared: {', '.join(declared)})") + ".",
                file=self.source, line=at, key="benchmarks", value=bench))
        return out

    def _counts(self, path, na: str, kwargs: dict) -> pd.DataFrame:
        """The per-question summary of one file, through the study's cache when it has one."""
        tk = toolkit("Reading generations")
        if self.cache_dir is None:
            return tk.load_counts([path], na=na, **kwargs)
        return tk.cached_counts(path, cache_dir=self.cache_dir, na=na, **kwargs)

    def resolve(self, src: Source):
        """Yield ``(path or frame, reader options)`` for each file of one source: a demo part's
        frame, a dataset's local files, a ``path:`` glob's files (each rescored first when the
        source says ``rescore:``).
        """
        if src.kind == "demo":
            from leash.sources.demo import DEMO_FILES, read_demo

            if src.value not in DEMO_FILES:
                raise self.error(
                    f"Unknown demo part {src.value!r} in the {self._where}; parts: {DEMO_FILES}.",
                    value=src.value)
            yield read_demo()[src.value], {}
        elif src.kind == "dataset":
            for path, kw in toolkit("A `dataset:` source").resolve(src.value):
                kw.update(self._reader(src.reader))
                yield self._rescored(src, path, kw)
        else:
            pattern = src.value if Path(src.value).is_absolute() else str(self.base_dir /
                                                                             src.value)
            hits = sorted(_glob.glob(pattern))
            if not hits:
                raise FileNotFoundError(
                    f"The source {src.value!r} of the {self._where} matches no file (looked for "
                    f"{pattern})."
                )
            for h in hits:
                yield self._rescored(src, Path(h), self._reader(src.reader))

    def gold_file(self, src: Source) -> Path | None:
        """The question file of a source's ``gold:`` when it names one (relative to the study
        file), else None (a manifest benchmark, or no ``gold:``).
        """
        g = src.rescore.get("gold")
        if not is_gold_file(g):
            return None
        return Path(g) if Path(g).is_absolute() else self.base_dir / g

    def _rescored(self, src: Source, path: Path, kw: dict):
        """``(path, reader kwargs)`` of a source file, or of its rescored (cached) samples."""
        if not src.rescore:
            return path, kw
        opts = dict(src.rescore)
        if (gold := self.gold_file(src)) is not None:
            if not gold.is_file():
                raise FileNotFoundError(f"The `gold:` question file {src.rescore['gold']!r} of "
                                        f"the {self._where} does not exist (looked for {gold}).")
            opts["gold"] = gold
        return toolkit("A `rescore:` source").rescored_path(
            path, scorer=opts.pop("scorer"), reader=kw, **opts), {
            "fmt": "samples"}

    def _reader(self, reader: dict) -> dict:
        """Reader options of a source; a YAML mapping file is relative to the study file."""
        m = reader.get("mapping")
        if isinstance(m, str) and m.lower().endswith((".yaml", ".yml")) \
                and not Path(m).is_absolute():
            return {**reader, "mapping": str(self.base_dir / m)}
        return dict(reader)

    def paired(self, name: str, pair: str | Pair | None = None, *, at_budgets: bool = True,
               **pair_kwargs) -> pd.DataFrame:
        """The paired per-question frame of one pair of a section.

        Thin wrapper over :func:`leash.analysis.pairing.pair_counts` on :meth:`summaries`; keyword
        arguments (e.g. ``restrict_to_shared=True``) are passed through. The two models are
        compared at the study's declared budgets (:meth:`budgets`; the first ``budget``
        samples) unless ``at_budgets=False`` or a ``budget=`` is given. When the pair's base is
        a step of the RLVR run itself (``base_step``, e.g. step 0), it is paired against every
        other step, and not against itself. A pair's ``shared_only: true`` drops (and counts)
        the questions one model lacks.
        """
        p = pair if isinstance(pair, Pair) else self.section(name).pair(pair)
        s = self.summaries(name)
        if at_budgets and "budget" not in pair_kwargs:
            pair_kwargs["budget"] = self.budgets(name, p)
        pair_kwargs.setdefault("restrict_to_shared", p.shared_only)
        try:
            paired = self._pair_counts(s, p, pair_kwargs)
        except ValueError as exc:  # named by the pair, in the study file's words
            raise LeashValueError(f"{self._where}, section {name!r}, pair {p.label!r}: "
                                  f"{_PairWords().error(exc)}", param=getattr(exc, "param", None),
                                  value=getattr(exc, "value", None)) from None
        declared = self.benchmarks.dropna(subset=["N"]).set_index("benchmark")["N"]
        have = paired.groupby("benchmark")["question_id"].nunique()
        if off := [f"{b} declares N = {int(declared[b])} (`benchmarks.{b}.N`), the data "
                   f"{int(n)}" for b, n in have.items() if b in declared and n != declared[b]]:
            warnings.warn(f"{self._where}, section {name!r}, pair {p.label!r}: "
                          f"{'; '.join(off)} questions; the tables count the questions "
                          "paired (their N).", stacklevel=2)
        return paired

    @staticmethod
    def _pair_counts(s, p: Pair, pair_kwargs) -> pd.DataFrame:
        from leash.analysis.pairing import pair_counts

        if p.base_step is None:
            return pair_counts(s, base=p.base, rl=p.rl, **pair_kwargs)
        paired = pair_counts(s, base=(p.base, p.base_step), rl=p.rl, **pair_kwargs)
        return paired[paired["step"] != p.base_step].reset_index(drop=True)

    def __repr__(self) -> str:
        return (f"Study({self.name!r}, simulated={self.simulated}, "
                f"sections={sorted(self.sections)}, benchmarks={len(self.benchmarks)})")


def _digest(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks (two paths of one file, or a copy, are the
    same generations); read once per file, size and modification time.
    """
    st = Path(path).stat()
    return _digest_of(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _digest_of(path: str, size: int, mtime_ns: int) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_study(name_or_path) -> Study:
    """Load a study by name (``data/studies/<name>.yaml``) or by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        ``"demo"``, ``"paper"``, ``"gsm8k-probe"``... or a path to a YAML file.

    Returns
    -------
    Study

    Raises
    ------
    FileNotFoundError
        No such file and no such shipped study.
    ValueError
        The file is not valid YAML, uses anchors or aliases, repeats a key, or breaks
        :data:`STUDY_SCHEMA`; one line naming the file, the line and the key path.
    """
    if isinstance(name_or_path, Study):
        return name_or_path
    p = Path(name_or_path)
    if not p.suffix and not p.exists():
        p = studies_dir() / f"{name_or_path}.yaml"
    if not p.is_file():
        raise FileNotFoundError(
            f"No study file {name_or_path!r}: neither a file nor one of the shipped studies "
            f"{list_studies()}."
        )
    source = p.resolve()
    raw, lines = C.load_yaml(p, f"study file {source}", kind="study file")
    return Study(raw, source, lines=lines)
