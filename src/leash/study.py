"""Study files: which models are compared, on which benchmarks, at which budget, from which data.

A study file (YAML, ``data/studies/*.yaml``) is how a notebook is pointed at generations: the
paper's own study (its pairs, benchmarks and budgets, SPEC section 2) needs only the paths of a
user's generations; the embedded demo and the real public data each have one too. Layout::

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
        pairs:
          - {label: demo-1.5B, base: demo-base-1.5B, rl: demo-rlvr-1.5B}
      checkpoints: {...}            # Table 4: pairs whose rl model has several steps
      entropy: {...}                # Table 5
      sft: {...}                    # Tables 3 and 14
      gym: {...}                    # Figures 2-4

Sections may carry other keys (e.g. ``ks``); they are kept in ``Section.options``.
"""

from __future__ import annotations

import glob as _glob
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd
import yaml

__all__ = ["Source", "Pair", "Section", "Study", "load_study", "studies_dir", "list_studies"]

SOURCE_KINDS = ("path", "dataset", "demo")
READER_KEYS = ("fmt", "model", "benchmark", "step", "mapping")
DOMAINS = ("math", "non-math", "reasoning-gym")  # RG is never pooled into Table 1


def studies_dir() -> Path:
    """The folder of the shipped study files (``data/studies/`` of the repository)."""
    return Path(__file__).resolve().parents[2] / "data" / "studies"


def list_studies() -> list[str]:
    """Names of the shipped study files."""
    return sorted(p.stem for p in studies_dir().glob("*.yaml"))


@dataclass(frozen=True)
class Source:
    """One data source of a section: a file/glob, a manifest dataset/group, or a demo part."""

    kind: str
    value: str
    reader: Mapping = field(default_factory=dict)

    def describe(self) -> str:
        extra = "".join(f", {k}={v}" for k, v in self.reader.items())
        return f"{self.kind}: {self.value}{extra}"


@dataclass(frozen=True)
class Pair:
    """A base/RLVR comparison: model labels as they appear in the summary's ``model`` column."""

    label: str
    base: str
    rl: str
    base_step: int | None = None
    budgets: Mapping = field(default_factory=dict)  # domain -> k, overriding the benchmarks'


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
                raise ValueError(f"Section {self.name!r} declares no pairs.")
            return self.pairs[0]
        for p in self.pairs:
            if p.label == label:
                return p
        raise ValueError(
            f"Section {self.name!r} has no pair {label!r}; pairs: {[p.label for p in self.pairs]}."
        )


class Study:
    """A parsed study file. Use :func:`load_study` to make one."""

    def __init__(self, raw: Mapping, source: Path | None = None):
        where = f"study file {source}" if source else "study"
        if not isinstance(raw, Mapping):
            raise ValueError(f"The {where} must be a YAML mapping. Got {type(raw).__name__}.")
        self.source = source
        self.base_dir = source.parent if source else Path.cwd()
        self.name = str(raw.get("name") or (source.stem if source else "study"))
        self.title = str(raw.get("title", self.name))
        self.simulated = bool(raw.get("simulated", False))
        self.description = str(raw.get("description", "")).strip()
        self._where = where
        self.benchmarks = self._parse_benchmarks(raw.get("benchmarks") or {})
        sections = raw.get("sections") or {}
        if not isinstance(sections, Mapping):
            raise ValueError(f"'sections' of the {where} must be a mapping of section names.")
        self.sections = {str(k): self._parse_section(str(k), v) for k, v in sections.items()}
        self._cache: dict[str, pd.DataFrame] = {}

    # ---- parsing ---------------------------------------------------------------------------
    def _parse_benchmarks(self, raw) -> pd.DataFrame:
        if not isinstance(raw, Mapping):
            raise ValueError(f"'benchmarks' of the {self._where} must map names to settings.")
        rows = []
        for name, spec in raw.items():
            spec = spec or {}
            domain = spec.get("domain")
            if domain not in DOMAINS:
                raise ValueError(
                    f"Benchmark {name!r} of the {self._where} has domain {domain!r}; expected "
                    f"one of {DOMAINS}."
                )
            budget = spec.get("budget")
            if budget is not None and (not isinstance(budget, int) or budget < 1):
                raise ValueError(
                    f"Benchmark {name!r} of the {self._where} has budget {budget!r}; expected "
                    "a positive int."
                )
            rows.append({"benchmark": str(name), "domain": domain, "budget": budget,
                         "N": spec.get("N")})
        return pd.DataFrame(rows, columns=["benchmark", "domain", "budget", "N"])

    def _parse_section(self, name, raw) -> Section:
        where = f"section {name!r} of the {self._where}"
        if not isinstance(raw, Mapping):
            raise ValueError(f"The {where} must be a mapping.")
        sources = []
        for i, s in enumerate(raw.get("sources") or []):
            kinds = [k for k in SOURCE_KINDS if k in s] if isinstance(s, Mapping) else []
            if len(kinds) != 1:
                raise ValueError(
                    f"Source {i} of the {where} must have exactly one of {SOURCE_KINDS}. "
                    f"Got {s!r}."
                )
            unknown = set(s) - set(SOURCE_KINDS) - set(READER_KEYS)
            if unknown:
                raise ValueError(
                    f"Source {i} of the {where} has unknown key(s) {sorted(unknown)}; allowed: "
                    f"{[*SOURCE_KINDS, *READER_KEYS]}."
                )
            reader = {k: s[k] for k in READER_KEYS if k in s}
            sources.append(Source(kinds[0], str(s[kinds[0]]), reader))
        pairs = []
        for i, p in enumerate(raw.get("pairs") or []):
            if not isinstance(p, Mapping) or not {"base", "rl"} <= set(p):
                raise ValueError(f"Pair {i} of the {where} needs 'base' and 'rl'. Got {p!r}.")
            pairs.append(Pair(str(p.get("label", f"{p['base']} -> {p['rl']}")), str(p["base"]),
                              str(p["rl"]), p.get("base_step"), dict(p.get("budgets") or {})))
        options = {k: v for k, v in raw.items() if k not in ("sources", "pairs")}
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
            raise ValueError(f"Benchmark {benchmark!r} is not declared in the {self._where}.")
        if pair is not None and row["domain"].iat[0] in pair.budgets:
            return int(pair.budgets[row["domain"].iat[0]])
        b = row["budget"].iat[0]
        return None if pd.isna(b) else int(b)

    def section(self, name: str) -> Section:
        """The named section; ValueError listing the available ones otherwise."""
        if name not in self.sections:
            raise ValueError(
                f"The {self._where} has no section {name!r}; sections: {sorted(self.sections)}."
            )
        return self.sections[name]

    def has_data(self, name: str) -> bool:
        """Whether the section declares at least one source."""
        return name in self.sections and bool(self.sections[name].sources)

    def summaries(self, name: str) -> pd.DataFrame:
        """The per-question summary frame of a section, from all of its sources (cached).

        Raises
        ------
        ValueError
            If the section has no sources.
        FileNotFoundError
            If a path matches no file or a dataset is neither cached nor mirrored nor
            downloadable (``leash.manifest.DatasetUnavailableError``).
        """
        if name in self._cache:
            return self._cache[name]
        sec = self.section(name)
        if not sec.sources:
            raise ValueError(
                f"Section {name!r} of the {self._where} lists no sources: add the paths of your "
                "generations (see data/README.md) under 'sources'."
            )
        from .summarize import load_counts

        parts = []
        for src in sec.sources:
            for path, kwargs in self._resolve(src):
                if isinstance(path, pd.DataFrame):
                    parts.append(path)
                else:
                    parts.append(load_counts([path], **kwargs))
        frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        if self.benchmarks.shape[0]:
            unknown = sorted(set(frame["benchmark"].astype(str)) - set(self.domains))
            if unknown:
                raise ValueError(
                    f"Section {name!r} of the {self._where}: the data has benchmark(s) {unknown} "
                    f"that the study does not declare (declared: {sorted(self.domains)})."
                )
        self._cache[name] = frame
        return frame

    def _resolve(self, src: Source):
        """Yield (path or frame, reader kwargs) for one source."""
        if src.kind == "demo":
            from .simulate import DEMO_FILES, read_demo

            if src.value not in DEMO_FILES:
                raise ValueError(
                    f"Unknown demo part {src.value!r} in the {self._where}; parts: {DEMO_FILES}."
                )
            yield read_demo()[src.value], {}
        elif src.kind == "dataset":
            from .manifest import resolve

            for path, ds in resolve(src.value, progress=False):
                kw = ds.reader_kwargs() if ds is not None else {}
                kw.update(src.reader)
                yield path, kw
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
                yield Path(h), dict(src.reader)

    def paired(self, name: str, pair: str | Pair | None = None, **pair_kwargs) -> pd.DataFrame:
        """The paired per-question frame of one pair of a section.

        Thin wrapper over :func:`leash.pairing.pair_counts` on :meth:`summaries`; keyword
        arguments (e.g. ``restrict_to_shared=True``) are passed through. When the pair's base is
        a step of the RLVR run itself (``base_step``, e.g. step 0), it is paired against every
        other step, and not against itself.
        """
        from .pairing import pair_counts

        p = pair if isinstance(pair, Pair) else self.section(name).pair(pair)
        s = self.summaries(name)
        if p.base_step is None:
            return pair_counts(s, base=p.base, rl=p.rl, **pair_kwargs)
        paired = pair_counts(s, base=(p.base, p.base_step), rl=p.rl, **pair_kwargs)
        return paired[paired["step"] != p.base_step].reset_index(drop=True)

    def __repr__(self) -> str:
        return (f"Study({self.name!r}, simulated={self.simulated}, "
                f"sections={sorted(self.sections)}, benchmarks={len(self.benchmarks)})")


def load_study(name_or_path) -> Study:
    """Load a study by name (``data/studies/<name>.yaml``) or by path.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        ``"demo"``, ``"paper"``, ``"gsm8k-probe"``... or a path to a YAML file.

    Returns
    -------
    Study
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
    with open(p, encoding="utf-8") as fh:
        try:
            raw = yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise ValueError(f"The study file {p} is not valid YAML: {exc}") from None
    return Study(raw, p.resolve())
