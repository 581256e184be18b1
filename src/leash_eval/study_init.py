"""``leash study init``: a study file written from the user's generation files.

Each FILE (a path, a folder of files, or a dataset or group of the data manifest) is read once,
streaming, by the readers and summarizer every command uses
(:func:`leash_eval.summarize.load_counts`), into per-question summaries; from them the study
takes:

* the models and their checkpoints (``step``), the benchmarks, the questions and the samples
  per question (n) of each. A file that names no model (``{id: verdict}`` JSON, evaluator
  output, ...) takes it from a ``label`` (``--label FILE=MODEL``, or ``--label MODEL=FILES``
  for a folder or glob of one model's files), else from its file name (said, and written on
  its source). Several files of one label that name no step are that model's checkpoints:
  each step is the number in which their file names differ (``step_100.json``,
  ``step_200.json``), or is given with ``--label MODEL@STEP=FILE``;
* the pairs: ``--base`` and ``--rl`` when given; else proposed when the names leave no doubt
  (exactly one model without an RL word in its name, every other with one: ``rl``, ``rlvr``,
  ``grpo``, ``ppo``, ``dapo``, ...), and the proposal is said; anything else is an error asking
  for ``--base`` and ``--rl``;
* each benchmark's ``budget``: the largest n both sides of every pair have on every question
  (their smallest n). When the questions' n differ and the files do not keep the sample order
  (``first_correct``), no budget can be honoured below a question's n: the budget is then left
  out, and the tables compare each question at the n both models have (a comment says so). A
  checkpoints pair whose steps have fewer samples gets its own ``budgets``;
* ``N``: the questions each pair shares, written when it is the same for every pair, section
  and step (else left out, with a comment saying the counts); a pair whose two models'
  question sets differ (a checkpoint run on a subset of the questions, a benchmark one model
  lacks) gets ``shared_only: true`` (the questions one model lacks are dropped and counted) and
  a comment saying so. Two models that share no question are an error;
* the sections: ``support`` (Tables 1 and 6-12, Figure 1) for the final models, ``checkpoints``
  (Table 4) when an RLVR model has several steps, ``entropy`` (Table 5) when the files keep
  extracted answers; a section the data cannot feed is left out with a comment saying why, and
  ``sft``, ``gym`` and ``perplexity`` need data a generations file cannot say it holds, and are
  left for the user (a comment says how);
* the title (the pairs and the benchmarks) and the name (``--out``'s file name, else the
  pairs' model labels as given), which names the output folder ``build/<name>/`` and the
  artifacts' suffix (both in the file-name form of :func:`leash.paths.slug`).

Every study it writes is one its own ``leash study check`` accepts: labels are kept as given
(any character, written as YAML double-quoted scalars by PyYAML's emitter, which escapes what
YAML cannot hold raw), paths are relative to the study file and glob-escaped (``x[1].jsonl``
is that file, not a pattern matching ``x1.jsonl``), and a YAML ``--mapping`` file is written
relative to the study, as the study reads it. The YAML is written here as text, each key with
a comment saying what it is and where it came from (no YAML library keeps comments but
ruamel.yaml, which leash does not depend on). The summaries read are stored in the study's
summary cache (``build/<name>/.summaries/``), so ``leash study check`` and the notebooks do
not read the files again. The file is written whole or not at all, with the permissions of
any new file (:mod:`leash.writing`), and an existing file is left alone unless ``force``.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from leash.errors import LeashValueError, Param, closest
from leash.paths import slug, study_folder
from leash.writing import write_text

__all__ = ["StudyDraft", "Label", "parse_label", "draft_study", "write_study", "RL_WORDS",
           "MATH_WORDS"]

#: Words of a model name that mark the RL-trained side of a pair (whole words of the name).
RL_WORDS = ("rl", "rlvr", "grpo", "ppo", "dapo", "rloo", "reinforce", "gspo", "prorl", "zero")
#: Words of a benchmark name that make its domain "math" (else "non-math", said in a comment).
MATH_WORDS = ("math", "aime", "amc", "gsm", "gsm8k", "minerva", "olympiad", "olympiadbench",
              "hmmt", "math500", "mathvista", "mathvision", "aime24", "aime25", "aime2024",
              "aime2025", "amc23", "svamp", "asdiv", "theoremqa", "deepscaler", "omni")
#: File-name endings left out of a label made from a file name.
_ENDINGS = (".gz", ".bz2", ".xz", ".zst", ".jsonl", ".ndjson", ".json", ".csv", ".parquet",
            ".pq", ".eval", ".txt")


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if w} | {
        re.sub(r"\d+$", "", w) for w in re.split(r"[^a-z0-9]+", name.lower()) if w}


def _is_rl(model: str) -> bool:
    return bool(_words(model) & set(RL_WORDS))


def _domain(bench: str) -> tuple[str, bool]:
    """(domain, guessed from a word of the name)."""
    w = _words(bench)
    if w & set(MATH_WORDS) or any(x.startswith(("math", "aime", "amc", "gsm", "olympiad"))
                                   for x in w):
        return "math", True
    return "non-math", False


# ---- labels: --label FILE=MODEL, --label MODEL=FILES, MODEL@STEP ------------------------------

@dataclass(frozen=True)
class Label:
    """The model (and step) of the files of ``pattern``: a file, a folder (its files) or a glob."""

    pattern: str
    model: str
    step: int | None = None

    def files(self) -> list[Path]:
        """The files the pattern names, in name order (none: a LeashValueError)."""
        found = _files_of(self.pattern)
        if not found:
            raise LeashValueError(Param("label"), f" {self.pattern!r} (model {self.model!r}) "
                                  "names no file.", param="label", value=self.pattern)
        return found


def _files_of(pattern: str) -> list[Path]:
    p = Path(pattern)
    if p.is_dir():
        return sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
    if p.exists():
        return [p]
    if glob.has_magic(pattern):
        return sorted(Path(f) for f in glob.glob(pattern) if Path(f).is_file())
    return []


def _model_step(text: str) -> tuple[str, int | None]:
    """``MODEL@STEP`` as (MODEL, STEP); a text without a trailing ``@digits`` as (text, None)."""
    m = re.fullmatch(r"(.+)@(\d+)", text, re.S)
    return (m.group(1), int(m.group(2))) if m else (text, None)


def parse_label(text: str) -> Label:
    """A ``--label`` value: ``FILE=MODEL`` or ``MODEL=FILES`` (FILES a file, a folder of files
    or a glob), MODEL optionally ``MODEL@STEP``. The side that names files is the files; a
    value where both sides or neither do is an error, as is an empty model.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a.json").write_text("{}")
    >>> parse_label(f"{d}/a.json=my base").model, parse_label(f"rl@100={d}/a.json").step
    ('my base', 100)
    """
    text = str(text)
    readings = []
    for at in [m.start() for m in re.finditer("=", text)]:
        left, right = text[:at], text[at + 1:]
        if left and right and _files_of(left):
            readings.append((left, right))
        if left and right and _files_of(right):
            readings.append((right, left))
    readings = list(dict.fromkeys(readings))
    if len(readings) != 1:
        why = ("neither side of its '=' names a file, folder or glob of files" if not readings
               else "both sides of its '=' name files: " + ", ".join(
                   f"{f!r} as model {m!r}" for f, m in readings))
        raise LeashValueError(Param("label"), f" {text!r}: {why}; write FILE=MODEL or "
                              "MODEL=FILES.", param="label", value=text)
    pattern, model = readings[0]
    model, step = _model_step(model)
    if not model.strip():
        raise LeashValueError(Param("label"), f" {text!r}: the model label is empty.",
                              param="label", value=text)
    return Label(pattern, model, step)


def _name_label(path: Path) -> str:
    """A model label from a file name: the name without its data endings."""
    name = path.name
    while (low := name.lower()).endswith(_ENDINGS):
        name = name[:-len(next(e for e in _ENDINGS if low.endswith(e)))]
    return name or path.name


def _name_steps(files: list[Path]) -> dict[Path, int] | None:
    """Each file's step: the one number in which the names differ (``step_100.json``,
    ``step_200.json``; ``global_step_100/...`` too); None when no single number does.
    """
    numbers = [[int(x) for x in re.findall(r"\d+", f.name)] for f in files]
    if len({len(n) for n in numbers}) != 1 or not numbers[0]:
        return None
    varying = [i for i in range(len(numbers[0])) if len({n[i] for n in numbers}) > 1]
    if len(varying) != 1:
        return None
    steps = {f: n[varying[0]] for f, n in zip(files, numbers)}
    return steps if len(set(steps.values())) == len(files) else None


# ---- reading ---------------------------------------------------------------------------------

@dataclass
class _File:
    value: str  # the path or manifest name as the study lists it
    kind: str  # "path" or "dataset"
    reader: dict  # the reader options the study writes on the source
    parts: list  # (path, reader kwargs, summary frame)


@dataclass
class StudyDraft:
    """A study file's text and what :func:`draft_study` found and chose (``notes``: one line
    each, for the user).
    """

    text: str
    name: str
    notes: list[str] = field(default_factory=list)
    frames: list = field(default_factory=list)  # (path, reader kwargs, frame) read


def _missing(exc: Exception) -> str | None:
    """``"model"`` or ``"benchmark"`` when a read failed because the file does not name it."""
    key = getattr(exc, "key", None)  # a record without the field, or a layout without it
    if key in ("model", "benchmark") and getattr(exc, "value", "") in (None, "None"):
        return key
    return None


def _load(path: Path, kw: dict, progress, *, named: bool):
    """:func:`~leash_eval.studies.read_counts` of one file (hashed as read: what the study's
    cache entry is named after); a file naming no benchmark is one line asking for
    ``--benchmark``. Returns the frame, or None when the file names no model and ``named`` is
    False (the caller then labels it).
    """
    from leash_eval.studies import read_counts

    if progress:
        progress(f"reading {path}")
    try:
        return read_counts(path, **kw)
    except LeashValueError as exc:
        what = _missing(exc)
        if what == "model" and not named:
            return None
        if what == "benchmark":
            raise LeashValueError(
                f"{path} names no benchmark: give it with ", Param("benchmark", value=...),
                " (every file), or in the study file as `benchmark:` on its source.",
                param="benchmark", file=str(path), key="benchmark") from None
        raise


def _read(files, labels: list[Label], reader: dict, notes: list[str], progress) -> list[_File]:
    """Every input as :class:`_File` entries (a folder's files one by one), labelled."""
    from leash_eval import manifest as mf

    label_of: dict[Path, tuple[Label, int]] = {}  # resolved file -> (label, files in its group)
    order: list[Path] = []
    for lab in labels:
        group = lab.files()
        for f in group:
            key = f.resolve()
            if key in label_of and (label_of[key][0].model, label_of[key][0].step) != (
                    lab.model, lab.step):
                raise LeashValueError(
                    Param("label"), f": {f} is labelled twice, as {label_of[key][0].model!r} "
                    f"and as {lab.model!r}.", param="label", value=lab.pattern)
            label_of[key] = (lab, len(group))
            order.append(f)
    entries: list[tuple[str, object]] = []  # ("path", Path) or ("dataset", name)
    for name in files:
        p = Path(name)
        if p.is_dir():
            entries += [("path", f) for f in _files_of(name)]
        elif p.exists() or os.path.islink(p):
            entries.append(("path", p))
        else:
            entries.append(("dataset", str(name)))
    given = {e[1].resolve() for e in entries if e[0] == "path"}
    entries += [("path", f) for f in dict.fromkeys(order) if f.resolve() not in given]
    seen: set = set()
    out, unnamed = [], []
    for kind, value in entries:
        if kind == "dataset":
            got = []
            for path, ds in mf.resolve(value, progress=False):
                kw = {**(ds.reader_kwargs() if ds is not None else {}), **reader}
                got.append((path, kw, _load(path, kw, progress, named=True)))
            out.append(_File(value, "dataset", dict(reader), got))
            continue
        if value.resolve() in seen:
            continue
        seen.add(value.resolve())
        kw = dict(reader)
        lab, _ = label_of.get(value.resolve(), (None, 0))
        if lab is not None:
            kw["model"] = lab.model
            if lab.step is not None:
                kw["step"] = lab.step
        frame = _load(value, kw, progress, named="model" in kw)
        entry = _File(str(value), "path", kw, [(value, kw, frame)])
        if frame is None:
            unnamed.append(entry)
        out.append(entry)
    _label_unnamed(unnamed, notes)
    _checkpoint_steps(out, label_of, notes)
    return out


def _label_unnamed(unnamed: list[_File], notes: list[str]) -> None:
    """Files that name no model, labelled by their file names (distinct ones only)."""
    if not unnamed:
        return
    names = {e.value: _name_label(Path(e.value)) for e in unnamed}
    clash = [v for v in names.values() if list(names.values()).count(v) > 1]
    if clash:
        files = [f for f, v in names.items() if v == clash[0]]
        raise LeashValueError(
            f"{', '.join(files)} name no model, and their file names give one label "
            f"({clash[0]!r}) to several files: name each file's model with ",
            Param("label", value=f"{files[0]}=MODEL"), " (or ", Param("model", value=...),
            " for every file).", param="label", file=files[0], key="model")
    for e in unnamed:
        path = Path(e.value)
        e.reader["model"] = names[e.value]
        frame = _load(path, e.reader, None, named=True)
        e.parts = [(path, e.reader, frame)]
    notes.append("the files " + ", ".join(f"{e.value} ({names[e.value]!r})" for e in unnamed)
                 + " name no model: each is labelled by its file name (written as `model:` on "
                 "its source); give your own labels with --label FILE=MODEL")


def _checkpoint_steps(entries: list[_File], label_of: dict, notes: list[str]) -> None:
    """Several files of one label without a step: the steps their file names give."""
    groups: dict[Label, list[_File]] = {}
    for e in entries:
        if e.kind != "path":
            continue
        lab, size = label_of.get(Path(e.value).resolve(), (None, 0))
        frame = e.parts[0][2]
        if lab is not None and lab.step is None and size > 1 and frame["step"].isna().all():
            groups.setdefault(lab, []).append(e)
    for lab, group in groups.items():
        if len(group) < 2:
            continue
        steps = _name_steps([Path(e.value) for e in group])
        if steps is None:
            raise LeashValueError(
                Param("label"), f" {lab.pattern!r} names {len(group)} files of model "
                f"{lab.model!r} that hold no step, and their file names do not differ in one "
                "number: give each file's step with ",
                Param("label", value=f"{lab.model}@STEP=FILE"), ".", param="label",
                value=lab.pattern)
        at = sorted(entries.index(e) for e in group)
        group.sort(key=lambda e: steps[Path(e.value)])
        for i, e in zip(at, group):  # in step order
            path = Path(e.value)
            e.reader["step"] = steps[path]
            e.parts = [(path, e.reader, _load(path, e.reader, None, named=True))]
            entries[i] = e
        notes.append(f"{lab.pattern}: the checkpoints of {lab.model!r}, steps "
                     f"{', '.join(str(steps[Path(e.value)]) for e in group)} from their file "
                     "names (written as `step:` on each source)")


# ---- pairs, budgets, N -------------------------------------------------------------------------

def _pairs(models: list[str], base, rl, notes: list[str],
           labelled: bool = False) -> list[tuple[str, str]]:
    """The (base, rl) pairs: the given ones, or those the names make unambiguous."""
    if base is not None or rl is not None:
        if base is None or rl is None:
            raise LeashValueError(Param("base"), " and ", Param("rl"), " go together: give "
                                  "both, or neither to let the model names decide.",
                                  param="base" if base is None else "rl")
        for p, label in (("base", base), ("rl", rl)):
            if label not in models:
                near = closest(label, models)
                raise LeashValueError(
                    Param(p), f" is {label!r}, which is a model of no file"
                    + (f"; did you mean {near!r}?" if near else
                       f" (models: {', '.join(models)})."), param=p, value=label)
        if base == rl:
            raise LeashValueError(Param("base"), " and ", Param("rl"), f" are both {base!r}: "
                                  "a pair compares two models.", param="rl", value=rl)
        return [(base, rl)]
    if len(models) < 2:
        raise LeashValueError(
            f"The files hold one model ({', '.join(models) or 'none'}); a study compares a base "
            "model with its RLVR model: add the other model's files, or, when the files do not "
            "name their model, label each with ", Param("label", value="FILE=MODEL"), ".",
            param="label", value=models[0] if models else None)
    rls = [m for m in models if _is_rl(m)]
    bases = [m for m in models if m not in rls]
    if len(bases) != 1 or not rls:
        raise LeashValueError(
            f"The model names do not say which is the base and which the RLVR model (models: "
            f"{', '.join(models)}; an RLVR model's name has one of the words "
            f"{', '.join(RL_WORDS)}); give them with ", Param("base", value=...), " and ",
            Param("rl", value=...), "" if not labelled else " (or name the files' models "
            "with --label FILE=MODEL)", ".", param="base")
    pairs = [(bases[0], r) for r in rls]
    notes.append("proposed pair(s) " + "; ".join(f"base {b!r} -> rl {r!r}" for b, r in pairs)
                 + f" (only {bases[0]!r} has no RL word in its name); check them, or give "
                 "--base and --rl")
    return pairs


def _q(value) -> str:
    r"""A scalar as YAML reads it back unchanged: a string double-quoted by PyYAML's emitter,
    which escapes what YAML cannot hold raw (control and non-printable characters, line
    separators, characters beyond the BMP as ``\U`` escapes, lone surrogates of undecodable
    file names), so the study's ``leash study check`` reads the very label of the data.
    """
    import yaml

    if not isinstance(value, str):
        return str(value)
    text = yaml.safe_dump(value, default_style='"', allow_unicode=True, width=float("inf"))
    return text.removesuffix("\n...\n").rstrip("\n")


@dataclass
class _Section:
    """One section as drafted: its files, pairs, and per pair ``shared_only`` and budgets."""

    name: str
    files: list  # _File
    pairs: list  # (base, rl)
    shared_only: dict = field(default_factory=dict)  # (base, rl) -> True
    budgets: dict = field(default_factory=dict)  # (base, rl) -> {domain: k}


@dataclass
class _Seen:
    """What the paired sections have of one benchmark: questions shared per (section, base,
    rl, step), the samples per question of each pair's shared questions, the sample order.
    """

    shared: dict = field(default_factory=dict)  # (section, base, rl, step) -> count
    n: dict = field(default_factory=dict)  # (section, base, rl) -> n Series
    ordered: bool = True


def _observe(rows_b, paired: list[_Section]) -> _Seen:
    """:class:`_Seen` of one benchmark's rows (``_file`` says each row's file); sets the
    ``shared_only`` of each pair whose models' question sets differ.
    """
    seen = _Seen()
    for sec in paired:
        rows = rows_b[rows_b["_file"].isin([id(f) for f in sec.files])]
        for b, r in sec.pairs:
            qb = set(rows.loc[rows["model"] == b, "question_id"].astype(str))
            rl_rows = rows[rows["model"] == r]
            if not qb and rl_rows.empty:
                continue  # neither model of the pair has this benchmark
            if rl_rows.empty:  # only the base has it
                sec.shared_only[(b, r)] = True
                seen.shared[(sec.name, b, r, None)] = 0
            qr_all = set()
            for step, g in rl_rows.groupby(rl_rows["step"].astype("Int64"), dropna=False):
                qr = set(g["question_id"].astype(str))
                qr_all |= qr
                if qb != qr:
                    sec.shared_only[(b, r)] = True
                seen.shared[(sec.name, b, r, None if pd.isna(step) else int(step))] = \
                    len(qb & qr)
            both = rows[rows["model"].isin([b, r])
                        & rows["question_id"].astype(str).isin(qb & qr_all)]
            if not both.empty:
                seen.n[(sec.name, b, r)] = both["n"]
                seen.ordered &= bool((both["first_correct"].notna() | (both["c"] == 0)).all())
    return seen


def _benchmark_line(bench: str, seen: _Seen) -> tuple[str, dict]:
    """A benchmark's line of the study (budget, N, domain, each with why), and its spec."""
    domain, known = _domain(bench)
    spec = {"domain": domain}
    why = [f"domain {domain}" + ("" if known else " (guessed: no math word in the name; set "
                                                   "math or non-math)")]
    sides = [n for k, n in seen.n.items() if k[0] == "support"] or list(seen.n.values())
    if sides:
        n_all = pd.concat(sides)
        lo, hi = int(n_all.min()), int(n_all.max())
        if lo == hi or seen.ordered:
            spec["budget"] = lo
            why.append(f"budget {lo}: the largest n both sides have on every question"
                       + ("" if lo == hi else f" (n is {lo} to {hi}; the first {lo} samples of "
                                              "each count)"))
        else:
            why.append(f"no budget: n is {lo} to {hi} and the files do not keep the sample "
                       "order (first_correct), so each question is compared at the n both "
                       "models have")
    values = sorted(set(seen.shared.values()))
    if len(values) == 1 and values[0] > 0:
        spec["N"] = values[0]
        why.append(f"N {values[0]}: the questions every pair shares")
    elif values in ([0], []):
        why.append("no N: no pair has questions of both its models here")
    else:
        per = sorted({(k[0], v) for k, v in seen.shared.items()})
        why.append("no N: the pairs share " + ", ".join(f"{v} questions in {name}"
                                                        for name, v in per))
    body = ", ".join(f"{k}: {_q(v)}" for k, v in spec.items())
    return f"  {_q(bench)}: {{{body}}}  # {'; '.join(why)}", spec


def _plan(s, sections: list[_Section], benches: list[str], notes: list[str]) -> list[str]:
    """The benchmark lines, setting each paired section's ``shared_only`` and per-pair
    ``budgets`` (a pair whose files have fewer samples than a benchmark's budget: the smallest
    n of its benchmarks of that domain); two models that share no question are an error.
    """
    paired = [sec for sec in sections if sec.name != "entropy"]
    lines, shared_any = [], {}
    for bench in benches:
        seen = _observe(s[s["benchmark"] == bench], paired)
        for key, n in seen.shared.items():
            shared_any[key[:3]] = shared_any.get(key[:3], 0) + n
        line, spec = _benchmark_line(bench, seen)
        lines.append(line)
        for (name, b, r), n in seen.n.items():
            if "budget" in spec and int(n.min()) < spec["budget"]:
                sec = next(x for x in paired if x.name == name)
                k = sec.budgets.setdefault((b, r), {})
                k[spec["domain"]] = min(k.get(spec["domain"], spec["budget"]), int(n.min()))
    for (name, b, r), n in shared_any.items():
        if n == 0:
            raise LeashValueError(
                f"{b!r} and {r!r} share no question (section {name!r}): a pair compares two "
                "models on the same questions; check that the files number their questions "
                "the same way (question_id), and that they are of one benchmark.",
                value=f"{b} -> {r}")
    for sec in paired:
        for (b, r), budgets in sec.budgets.items():
            notes.append(f"{sec.name} pair {b!r} -> {r!r}: budgets {budgets} (its files have "
                         "fewer samples per question than the benchmarks' budget)")
    return lines


def _sections(s, inputs: list[_File], pairs, notes: list[str]) -> list[_Section]:
    """The sections the data feed: ``support`` (the final models' files), ``checkpoints``
    (an RLVR model with several steps: the base's files and those of numbered steps) and
    ``entropy`` (files that keep extracted answers).
    """
    models = list(dict.fromkeys(s["model"]))
    steps = {m: sorted(int(x) for x in g["step"].dropna().unique())
             for m, g in s.groupby("model", sort=False)}
    final_na = {m: bool(s.loc[s["model"] == m, "step"].isna().any()) for m in models}
    rows_of = {id(i): s[s["_file"] == id(i)] for i in inputs}
    # several checkpoints: several steps, or steps beside final rows (step missing)
    multi = {r for _, r in pairs if len(steps[r]) + final_na[r] > 1}

    def final_only(i) -> bool:  # no rows of a checkpoint of a model with several
        rows = rows_of[id(i)]
        return all((lambda st: (st.isna() if final_na[r] else st == max(steps[r])).all())(
            rows.loc[rows["model"] == r, "step"]) for r in multi)

    support = _Section("support", [i for i in inputs if final_only(i)], list(pairs))
    out = [support]
    final_rows = s[s["_file"].isin([id(i) for i in support.files])]
    has_answers = bool(final_rows["answer_values"].map(
        lambda v: v is not None and len(v) > 0).any())
    ck_pairs = [(b, r) for b, r in pairs if r in multi]
    if ck_pairs:
        bases = [b for b, _ in ck_pairs]

        def stepped(i) -> bool:  # the base's files, and those of numbered checkpoints
            rows = rows_of[id(i)]
            ck = rows[rows["model"].isin(list(multi))]
            return (bool(rows["model"].isin(bases).any()) or not ck.empty) and \
                not ck["step"].isna().any()
        out.append(_Section("checkpoints", [i for i in inputs if stepped(i)], ck_pairs))
        notes.append(("support and entropy sections" if has_answers else "support section")
                     + f": the files of the final {', '.join(sorted(multi))} (the checkpoints "
                     "section has every step)")
        if any(final_na[r] for r in multi):
            notes.append("checkpoints section: the files of numbered steps only (the final "
                         f"{', '.join(sorted(r for r in multi if final_na[r]))} has no step)")
    if has_answers:
        out.append(_Section("entropy", support.files, list(pairs)))
    else:
        notes.append("no entropy section: the files keep no extracted answers (Table 5 needs "
                     "them)")
    return out


_HEADS = {"support": "Tables 1 and 6-12, Figure 1: each pair's final models",
          "checkpoints": "Table 4: every step of the RLVR model against its base",
          "entropy": "Table 5: accuracy, length, token and answer entropy (every sample)"}


def _section_lines(sec: _Section, rel) -> list[str]:
    """A section's lines: its sources (paths relative to the study and glob-escaped, a YAML
    mapping file relative to the study) and its pairs, each with why where a key was added.
    """
    lines = [f"  {sec.name}:  # {_HEADS[sec.name]}",
             "    sources:" + ("  # files or globs relative to this file, or data-manifest "
                               "datasets" if sec.name == "support" else "")]
    for i in sec.files:
        head = (f"path: {_q(glob.escape(rel(i.value)))}" if i.kind == "path"
                else f"dataset: {_q(i.value)}")
        opts = dict(i.reader)
        m = opts.get("mapping")
        if isinstance(m, str) and m.lower().endswith((".yaml", ".yml")) and Path(m).is_file():
            opts["mapping"] = rel(m)
        lines.append(f"      - {{{head}{''.join(f', {k}: {_q(v)}' for k, v in opts.items())}}}")
    lines.append("    pairs:" + ("  # base and rl: model labels as in the files"
                                 if sec.name == "support" else ""))
    for b, r in sec.pairs:
        shared, budgets = sec.shared_only.get((b, r)), sec.budgets.get((b, r))
        extra = (", shared_only: true" if shared else "") + (
            ", budgets: {" + ", ".join(f"{_q(d)}: {k}" for d, k in budgets.items()) + "}"
            if budgets else "")
        why = (["shared_only: the two models' question sets differ; the questions one lacks "
                "are dropped and counted"] if shared else []) + (
            ["budgets: its files have fewer samples per question"] if budgets else [])
        lines.append(f"      - {{label: {_q(f'{b} -> {r}')}, base: {_q(b)}, rl: {_q(r)}{extra}}}"
                     + (f"  # {'; '.join(why)}" if why else ""))
    return lines


# ---- the draft ---------------------------------------------------------------------------------

def draft_study(files=(), *, labels=(), base=None, rl=None, out=None, reader=None,
                progress=None) -> StudyDraft:
    """The text of a study file for generation files (see the module docstring).

    Parameters
    ----------
    files : sequence of str or path-like
        Generation, counts or summary files, folders of them, or dataset/group names of the
        data manifest.
    labels : sequence of str or Label
        ``FILE=MODEL`` or ``MODEL=FILES`` (:func:`parse_label`): the model (``MODEL@STEP``:
        and step) of files that do not name it; their files need not be in ``files``.
    base, rl : str, optional
        The model labels of the pair (both or neither).
    out : path-like, optional
        Where the study will be written: paths are written relative to its folder, and its file
        name is the study's name. None: relative to the working directory, the name from the
        pair.
    reader : mapping, optional
        Reader options for every file (``fmt, model, benchmark, step, mapping``), written on
        each source.
    progress : callable, optional
        Called with one line per file read.

    Returns
    -------
    StudyDraft
    """
    reader = {k: v for k, v in dict(reader or {}).items() if v is not None}
    labels = [lab if isinstance(lab, Label) else parse_label(lab) for lab in labels]
    if not files and not labels:
        raise LeashValueError("No files: name the generation files (or label them with ",
                              Param("label", value="FILE=MODEL"), ").", param="label")
    here = Path(out).resolve().parent if out is not None else Path.cwd()

    def rel(path) -> str:
        try:
            return os.path.relpath(Path(path).resolve(), here)
        except ValueError:  # another drive (Windows)
            return str(Path(path).resolve())

    m = reader.get("mapping")
    as_read = None  # a YAML mapping file: read here by its path, the study by its own
    if isinstance(m, str) and m.lower().endswith((".yaml", ".yml")) and Path(m).is_file():
        reader["mapping"] = as_read = str(Path(m).resolve())
    notes: list[str] = []
    inputs = _read([str(f) for f in files], labels, reader, notes, progress)
    parts = [(i, f) for i in inputs for f in i.parts]
    s = pd.concat([f[2].assign(_file=id(i)) for i, f in parts], ignore_index=True)
    s["model"], s["benchmark"] = s["model"].astype(str), s["benchmark"].astype(str)
    pairs = _pairs(list(dict.fromkeys(s["model"])), base, rl, notes,
                   labelled=any("model" in i.reader and "model" not in reader for i in inputs))
    benches = list(dict.fromkeys(s["benchmark"]))
    name = (Path(out).stem if out is not None
            else "-vs-".join([pairs[0][0], *[r for _, r in pairs]]))
    title = (", ".join(f"{r} vs {b}" for b, r in pairs) + f" on {', '.join(benches)}")
    sections = _sections(s, inputs, pairs, notes)
    text = [
        "# A study of your generations, written by `leash study init` from the files below; edit",
        "# it freely (data/studies/paper.yaml lists every key). Check it against its data in",
        "# seconds with `leash study check THIS_FILE`; then `make reproduce DATA=THIS_FILE`",
        f"# writes every table and figure its data allow into build/{slug(name)}/.",
        f"name: {_q(name)}  # names the output folder build/<name>/ and the artifacts' suffix",
        f"title: {_q(title)}  # shown on every artifact made from this study",
        "simulated: false  # real generations (true only for simulated data)",
        "benchmarks:  # benchmark label as in the files -> domain (Table 1 pools by it), budget "
        "(samples per question the tables use), N (questions)",
        *_plan(s, sections, benches, notes),
        "sections:  # one per analysis; a notebook whose section is absent is skipped, saying "
        "why",
        *(line for sec in sections for line in _section_lines(sec, rel))]
    names = [sec.name for sec in sections]
    if "checkpoints" not in names:
        text.append("  # no checkpoints section (Table 4): no RLVR model has several steps")
    if "entropy" not in names:
        text.append("  # no entropy section (Table 5): the files keep no extracted answers")
    text += ["# Not written: sft (Tables 3 and 14: an SFT and an RLVR model from one base), gym",
             "# (Figures 2-4: Reasoning Gym tasks) and perplexity (Table 2: scored reference",
             "# traces, `leash score-traces`); add them as in data/studies/paper.yaml."]
    # the summaries under the reader options the study reads them with (the cache's key)
    frames = [(path, {**kw, "mapping": str(here / rel(as_read))}
               if as_read is not None and kw.get("mapping") == as_read else kw, frame)
              for _, (path, kw, frame) in parts]
    return StudyDraft("\n".join(text) + "\n", name, notes, frames)


def write_study(draft: StudyDraft, out, *, force: bool = False) -> Path:
    """Write a draft's text to ``out`` whole or not at all (:func:`leash.writing.write_text`:
    the permissions of any new file), and store the summaries it read in the study's cache
    (``build/<name>/.summaries/``); an existing ``out`` is an error unless ``force``.
    """
    from leash_eval.studies import store_counts

    out = Path(out)
    if out.exists() and not force:
        raise LeashValueError(Param("out"), f" {out} exists; it is left as it is (pass ",
                              Param("force", value=True), " to replace it).", param="out",
                              value=str(out), file=out)
    write_text(out, draft.text)  # whole or not at all, with the mode open() gives
    for path, kw, frame in draft.frames:
        store_counts(frame, path, cache_dir=study_folder(draft.name) / ".summaries", **kw)
    return out
