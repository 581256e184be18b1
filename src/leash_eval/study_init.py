"""``leash study init``: a study file written from the user's generation files.

Each FILE (a path, or a dataset or group of the data manifest) is read once, streaming, by the
readers and summarizer every command uses (:func:`leash_eval.summarize.load_counts`), into
per-question summaries; from them the study takes:

* the models and their checkpoints (``step``), the benchmarks, the questions and the samples
  per question (n) of each;
* the pairs: ``--base`` and ``--rl`` when given; else proposed when the names leave no doubt
  (exactly one model without an RL word in its name, every other with one: ``rl``, ``rlvr``,
  ``grpo``, ``ppo``, ``dapo``, ...), and the proposal is said; anything else is an error asking
  for ``--base`` and ``--rl``;
* each benchmark's ``budget``: the largest n both sides of every pair have on every question
  (their smallest n). When the questions' n differ and the files do not keep the sample order
  (``first_correct``), no budget can be honoured below a question's n: the budget is then left
  out, and the tables compare each question at the n both models have (a comment says so);
* ``N``: the questions the pair shares; when the two models' question sets differ, the pair
  gets ``shared_only: true`` (the questions one model lacks are dropped and counted) and a
  comment saying so;
* the sections: ``support`` (Tables 1 and 6-12, Figure 1) for the final models, ``checkpoints``
  (Table 4) when the RLVR model has several steps, ``entropy`` (Table 5) when the files keep the
  extracted answers; ``sft``, ``gym`` and ``perplexity`` need data a generations file cannot say
  it holds, and are left for the user (a comment says how);
* the title (the pairs and the benchmarks) and the name (``--out``'s file name, else the
  pairs), which names the output folder ``build/<name>/`` and the artifacts' suffix.

The YAML is written here as text, each key with a comment saying what it is and where it came
from (no YAML library keeps comments but ruamel.yaml, which leash does not depend on; every
value is quoted as JSON, which YAML reads as the same string). The summaries read are stored in
the study's summary cache (``build/<name>/.summaries/``), so ``leash study check`` and the
notebooks do not read the files again. The file is written whole or not at all (a temporary
file renamed), and an existing file is left alone unless ``force``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from leash.errors import LeashValueError, Param, closest
from leash.paths import slug, study_folder
from leash.writing import write_text

__all__ = ["StudyDraft", "draft_study", "write_study", "RL_WORDS", "MATH_WORDS"]

#: Words of a model name that mark the RL-trained side of a pair (whole words of the name).
RL_WORDS = ("rl", "rlvr", "grpo", "ppo", "dapo", "rloo", "reinforce", "gspo", "prorl", "zero")
#: Words of a benchmark name that make its domain "math" (else "non-math", said in a comment).
MATH_WORDS = ("math", "aime", "amc", "gsm", "gsm8k", "minerva", "olympiad", "olympiadbench",
              "hmmt", "math500", "mathvista", "mathvision", "aime24", "aime25", "aime2024",
              "aime2025", "amc23", "svamp", "asdiv", "theoremqa", "deepscaler", "omni")


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


@dataclass
class _Input:
    value: str  # the path or manifest name as the study lists it
    kind: str  # "path" or "dataset"
    reader: dict  # the reader options the study writes on the source
    files: list  # (path, reader kwargs, summary frame)


@dataclass
class StudyDraft:
    """A study file's text and what :func:`draft_study` found and chose (``notes``: one line
    each, for the user).
    """

    text: str
    name: str
    notes: list[str] = field(default_factory=list)
    frames: list = field(default_factory=list)  # (path, reader kwargs, frame) read


def _read(files, reader: dict, progress=None) -> list[_Input]:
    from leash_eval import manifest as mf
    from leash_eval.studies import read_counts  # hashed as read: what the cache is named after

    out = []
    for name in files:
        p = Path(name)
        if p.exists():
            kw = dict(reader)
            if progress:
                progress(f"reading {p}")
            out.append(_Input(str(p), "path", dict(reader), [(p, kw, read_counts(p, **kw))]))
            continue
        got = []
        for path, ds in mf.resolve(name, progress=False):
            kw = {**(ds.reader_kwargs() if ds is not None else {}), **reader}
            if progress:
                progress(f"reading {name}: {path.name}")
            got.append((path, kw, read_counts(path, **kw)))
        out.append(_Input(str(name), "dataset", dict(reader), got))
    return out


def _pairs(models: list[str], base, rl, notes: list[str]) -> list[tuple[str, str]]:
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
        raise LeashValueError(f"The files hold one model ({', '.join(models) or 'none'}); a "
                              "study compares a base model with its RLVR model: add the other "
                              "model's files.", value=models[0] if models else None)
    rls = [m for m in models if _is_rl(m)]
    bases = [m for m in models if m not in rls]
    if len(bases) != 1 or not rls:
        raise LeashValueError(
            f"The model names do not say which is the base and which the RLVR model (models: "
            f"{', '.join(models)}; an RLVR model's name has one of the words "
            f"{', '.join(RL_WORDS)}); give them with ", Param("base", value=...), " and ",
            Param("rl", value=...), ".", param="base")
    pairs = [(bases[0], r) for r in rls]
    notes.append("proposed pair(s) " + "; ".join(f"base {b!r} -> rl {r!r}" for b, r in pairs)
                 + f" (only {bases[0]!r} has no RL word in its name); check them, or give "
                 "--base and --rl")
    return pairs


def _q(value) -> str:
    """A scalar as YAML reads it back unchanged (a JSON string is a YAML double-quoted one)."""
    return json.dumps(value) if isinstance(value, str) else str(value)


def _benchmark_lines(s, pairs, final, benches):
    """One line per benchmark (budget, N, domain, each with why), and the pairs whose models'
    question sets differ; over every pair's final models.
    """
    import pandas as pd

    bench_lines, shared_only = [], {}
    for bench in benches:
        rows = s[(s["benchmark"] == bench)]
        sides = [rows[final[m][rows.index]] for b, r in pairs for m in (b, r)]
        n_all = pd.concat([x["n"] for x in sides])
        if n_all.empty:
            continue
        ordered = bool(pd.concat([x["first_correct"].notna() | (x["c"] == 0) for x in sides])
                       .all())
        qsets = [set(x["question_id"].astype(str)) for x in sides]
        shared = set.intersection(*qsets)
        for b, r in pairs:
            qb = set(rows.loc[final[b][rows.index], "question_id"].astype(str))
            qr = set(rows.loc[final[r][rows.index], "question_id"].astype(str))
            if qb != qr:
                shared_only[(b, r)] = True
        domain, known = _domain(bench)
        spec = {"domain": domain}
        why = [f"domain {domain}" + ("" if known else " (guessed: no math word in the name; "
                                                       "set math or non-math)")]
        lo, hi = int(n_all.min()), int(n_all.max())
        if lo == hi or ordered:
            spec["budget"] = lo
            why.append(f"budget {lo}: the largest n both sides have on every question"
                       + ("" if lo == hi else f" (n is {lo} to {hi}; the first {lo} samples of "
                                                "each count)"))
        else:
            why.append(f"no budget: n is {lo} to {hi} and the files do not keep the sample "
                       "order (first_correct), so each question is compared at the n both "
                       "models have")
        spec["N"] = len(shared)
        why.append(f"N {len(shared)}: the questions every model has")
        body = ", ".join(f"{k}: {_q(v)}" for k, v in spec.items())
        bench_lines.append(f"  {_q(bench)}: {{{body}}}  # {'; '.join(why)}")
    return bench_lines, shared_only


def draft_study(files, *, base=None, rl=None, out=None, reader=None,
                progress=None) -> StudyDraft:
    """The text of a study file for generation files (see the module docstring).

    Parameters
    ----------
    files : sequence of str or path-like
        Generation, counts or summary files, or dataset/group names of the data manifest.
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
    import pandas as pd

    reader = {k: v for k, v in dict(reader or {}).items() if v is not None}
    inputs = _read([str(f) for f in files], reader, progress)
    frames = [f for i in inputs for f in i.files]
    s = pd.concat([f[2] for f in frames], ignore_index=True)
    s["model"], s["benchmark"] = s["model"].astype(str), s["benchmark"].astype(str)
    models = list(dict.fromkeys(s["model"]))
    notes: list[str] = []
    pairs = _pairs(models, base, rl, notes)
    steps = {m: sorted(int(x) for x in g["step"].dropna().unique())
             for m, g in s.groupby("model", sort=False)}
    # a model's final rows: those without a step when it has any, else its last step's
    final_na = {m: bool(s.loc[s["model"] == m, "step"].isna().any()) for m in models}
    final = {m: (s["model"] == m) & (s["step"].isna() if final_na[m]
                                     else s["step"] == max(steps[m]))
             for m in models}
    benches = list(dict.fromkeys(s["benchmark"]))
    here = Path(out).resolve().parent if out is not None else Path.cwd()
    name = (Path(out).stem if out is not None
            else slug("-vs-".join([pairs[0][0], *[r for _, r in pairs]])))
    title = (", ".join(f"{r} vs {b}" for b, r in pairs) + f" on {', '.join(benches)}")

    bench_lines, shared_only = _benchmark_lines(s, pairs, final, benches)

    def rel(path) -> str:
        try:
            return os.path.relpath(Path(path).resolve(), here)
        except ValueError:  # another drive (Windows)
            return str(Path(path).resolve())

    def source_lines(only=None) -> list[str]:
        lines = []
        for i in inputs:
            if only is not None and not any(only(f[2]) for f in i.files):
                continue
            head = (f"path: {_q(rel(i.value))}" if i.kind == "path"
                    else f"dataset: {_q(i.value)}")
            extra = "".join(f", {k}: {_q(v)}" for k, v in i.reader.items())
            lines.append(f"      - {{{head}{extra}}}")
        return lines

    def pair_lines() -> list[str]:
        out_ = []
        for b, r in pairs:
            extra = ", shared_only: true" if shared_only.get((b, r)) else ""
            out_.append(f"      - {{label: {_q(f'{b} -> {r}')}, base: {_q(b)}, rl: {_q(r)}"
                        f"{extra}}}" + ("  # shared_only: the two models' question sets "
                                        "differ; the questions one lacks are dropped and "
                                        "counted" if extra else ""))
        return out_

    rl_models = {r for _, r in pairs}
    # several checkpoints: several steps, or steps beside final rows (step missing)
    multi = {r for r in rl_models if len(steps[r]) + bool(s.loc[s["model"] == r, "step"].isna()
                                                          .any()) > 1}
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
        *bench_lines,
        "sections:  # one per analysis; a notebook whose section is absent is skipped, saying "
        "why",
        "  support:  # Tables 1 and 6-12, Figure 1: each pair's final models",
        "    sources:  # files or globs relative to this file, or data-manifest datasets",
    ]
    final_sources = source_lines()
    if multi:  # the support tables compare one model per side: its files of the last step
        def last(frame):  # the file's rows of every model with checkpoints are final ones
            def final_only(r):
                st = frame.loc[frame["model"].astype(str) == r, "step"]
                return bool((st.isna() if final_na[r] else st == max(steps[r] or [0])).all())
            return all(final_only(r) for r in multi)
        final_sources = source_lines(last)
        notes.append(f"support and entropy sections: the files of the final "
                     f"{', '.join(sorted(multi))} (the checkpoints section has every step)")
    text += final_sources
    text += ["    pairs:  # base and rl: model labels as in the files", *pair_lines()]
    if multi:  # Table 4 compares steps: the files of numbered checkpoints, and the base's
        def stepped(frame):
            return all(not frame.loc[frame["model"].astype(str) == r, "step"].isna().any()
                       for r in multi)
        text += ["  checkpoints:  # Table 4: every step of the RLVR model against its base",
                 "    sources:", *source_lines(stepped),
                 "    pairs:", *pair_lines()]
        if any(final_na[r] for r in multi):
            notes.append("checkpoints section: the files of numbered steps only (the final "
                         f"{', '.join(sorted(r for r in multi if final_na[r]))} has no step)")
    has_answers = bool(s["answer_values"].notna().any()) if "answer_values" in s else False
    if has_answers:
        text += ["  entropy:  # Table 5: accuracy, length, token and answer entropy (every "
                 "sample)", "    sources:", *final_sources, "    pairs:", *pair_lines()]
    else:
        notes.append("no entropy section: the files keep no extracted answers (Table 5 needs "
                     "them)")
    text += ["# Not written: sft (Tables 3 and 14: an SFT and an RLVR model from one base), gym",
             "# (Figures 2-4: Reasoning Gym tasks) and perplexity (Table 2: scored reference",
             "# traces, `leash score-traces`); add them as in data/studies/paper.yaml."]
    return StudyDraft("\n".join(text) + "\n", name, notes, frames)


def write_study(draft: StudyDraft, out, *, force: bool = False) -> Path:
    """Write a draft's text to ``out`` whole or not at all, and store the summaries it read in
    the study's cache (``build/<name>/.summaries/``); an existing ``out`` is an error unless
    ``force``.
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
