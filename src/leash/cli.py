"""The ``leash`` command line: validate, summarize, fetch, rescore, passk, support.

Every subcommand is a thin layer over the library: files are read by the generations layer
(:mod:`leash.summarize`, :mod:`leash.validate`), pairs are formed by :mod:`leash.pairing`, tables
come from :mod:`leash.tables`, data from :mod:`leash.manifest`, verdicts from
:mod:`leash.rescore`. Input arguments ``FILE`` may also be data-manifest dataset or group names
(e.g. ``gsm8k-probe-raw``): they are fetched (mirror first) and read with the manifest's labels.

Conventions:

* tables go to stdout (``--json``: a JSON list of row objects whose keys are the column names);
  progress and notes go to stderr (``--quiet`` silences them);
* input errors (ValueError, TypeError, OSError such as FileNotFoundError or an unwritable
  ``--out``, a missing optional package, running out of memory, e.g. with a huge ``--n-boot``)
  end the command with exit status 2 and a one-line reason on stderr, without a traceback;
  ``leash validate`` exits 1 when a file has problems in its rows, and 2 (after the reports)
  when a file cannot be read as a whole (missing, not a regular file, truncated, no data rows,
  format not detected). Messages name the command's options (``--on-error skip``, ``--k``),
  not the library's keywords: the options of passk and support are checked by the CLI itself
  (``--k`` against each model's budget once the files are read); warnings are one line
  (``leash CMD: warning: ...``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._argparse import OneLineParser, non_negative_int

__all__ = ["main", "build_parser"]

PROG = "leash"
EXIT_INPUT = 2
EXIT_INVALID = 1


class _Context:
    def __init__(self, quiet: bool):
        self.quiet = quiet

    def note(self, msg: str) -> None:
        if not self.quiet:
            print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- argument helpers


def _int_list(text: str) -> list[int]:
    try:
        ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of integers, got {text!r}") from None
    if not ks or any(k < 1 for k in ks):
        raise argparse.ArgumentTypeError(f"must list integers >= 1, got {text!r}")
    return ks


def _reader_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("reader options (apply to every FILE; override manifest labels)")
    from .formats import FORMATS

    g.add_argument("--fmt", choices=FORMATS, help="input format (default: detect)")
    g.add_argument("--model", help="model label for files that do not name it")
    g.add_argument("--benchmark", help="benchmark label for files that do not name it")
    g.add_argument("--step", type=int, help="checkpoint label for every row")
    g.add_argument("--mapping", help="field mapping for nested layouts: rollouts, samples, "
                   "evaluator, or a YAML file of field paths (data/README.md, section 4b)")
    g.add_argument("--filter", help="lm-eval: the filter whose responses are read")


def _on_error_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--on-error", choices=("raise", "skip"), default="raise",
                   help="invalid rows: stop (default) or skip and count them")


def _data_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mirror", help="data mirror root (default: env LEASH_DATA_MIRROR)")
    p.add_argument("--dest", help="download cache (default: data/raw/ of the repository)")


def _out_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print a JSON list of row objects")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``leash`` command (exposed for documentation and tests)."""
    parser = OneLineParser(
        prog=PROG,
        description="Support dynamics, pass@k and answer statistics of base vs RLVR models "
                    "from generation files (arXiv 2507.14843).")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    # -q is also accepted after the subcommand; SUPPRESS keeps the global value otherwise.
    common = OneLineParser(add_help=False)
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no progress on stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add = sub.add_parser

    def add_parser(name, **kw):
        return _add(name, parents=[common], **kw)

    sub.add_parser = add_parser

    p = sub.add_parser("validate", help="check generation files and list every problem")
    p.add_argument("files", nargs="+", metavar="FILE")
    _reader_options(p)
    _data_options(p)
    _out_options(p)

    p = sub.add_parser("summarize", help="per-question summary (n, c, answers, tokens)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--out", help="write the per-question summary as Parquet here")
    p.add_argument("--na", choices=("class", "truncated"), default="class",
                   help="which samples count as NA for answer entropy: class (default: those "
                   "without an extracted answer) or truncated (also those with finish_reason "
                   "length: the paper's rule, which Table 5 uses)")
    _on_error_option(p)
    _reader_options(p)
    _data_options(p)
    _out_options(p)

    p = sub.add_parser("fetch", help="fetch verified data files of the manifest")
    p.add_argument("names", nargs="*", metavar="NAME", help="dataset or group names")
    p.add_argument("--list", action="store_true", help="list datasets and groups")
    p.add_argument("--force", action="store_true", help="ignore the download cache")
    _data_options(p)
    _out_options(p)

    p = sub.add_parser("rescore", help="recompute correctness from response texts")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--gold", help="gold answers: a benchmark of the manifest (e.g. math500) "
                   "or a JSONL question file; default: the file's own gold field. For "
                   "--scorer reasoning-gym: a JSONL file of Reasoning Gym entries")
    p.add_argument("--gold-rule", choices=("answer", "gold", "minerva", "olympiadbench"),
                   default="answer", help="where the gold is in a --gold JSONL file")
    p.add_argument("--scorer", choices=("math-verify", "reasoning-gym"), default="math-verify")
    p.add_argument("--extract", choices=("math-verify", "leash"), default="math-verify",
                   help="answer extraction for math-verify (default: its own)")
    p.add_argument("--task", help="Reasoning Gym task name (with --scorer reasoning-gym)")
    p.add_argument("--out", help="write the rescored samples (canonical samples format, "
                   ".jsonl or .parquet)")
    _reader_options(p)
    _data_options(p)
    _out_options(p)

    p = sub.add_parser("passk", help="pass@k per model and benchmark")
    p.add_argument("files", nargs="+", metavar="FILE")
    _on_error_option(p)
    p.add_argument("--k", type=_int_list, help="budgets, e.g. 1,2,4,8 (default: powers of 2 "
                   "up to n)")
    p.add_argument("--estimator", choices=("first-k", "unbiased"), default=None,
                   help="first-k (default): the first k samples in generation order, as the "
                   "paper's printed tables (needs the sample order or first_correct); "
                   "unbiased: Chen et al. (2021), from n and c alone. The output's estimator "
                   "column says which")
    _reader_options(p)
    _data_options(p)
    _out_options(p)

    p = sub.add_parser("support", help="support dynamics (P, E, S, O, SRR, NDR, SDS, NSCR)")
    p.add_argument("files", nargs="+", metavar="FILE")
    _on_error_option(p)
    p.add_argument("--base", required=True,
                   help="model label of the base model (MODEL or MODEL@STEP)")
    p.add_argument("--rl", required=True,
                   help="model label of the RLVR model (MODEL, or MODEL@STEP for one "
                        "checkpoint; a MODEL with several checkpoints gives one row per step)")
    p.add_argument("--k", type=int, help="budget (default: every question's full n)")
    p.add_argument("--min-count", type=int, default=1,
                   help="correct samples needed to find a question (paper: 1)")
    p.add_argument("--zeta", type=float, default=0.05,
                   help="miss probability for the reported epsilon = -ln(zeta)/k")
    p.add_argument("--shared-only", action="store_true",
                   help="keep only questions both models answered")
    p.add_argument("--n-boot", type=int, default=1000,
                   help="bootstrap replicates (0: none; otherwise at least 2, see leash.stats)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="bootstrap random seed (an integer >= 0)")
    _reader_options(p)
    _data_options(p)
    _out_options(p)

    # Two commands with their own option parsers: their arguments are passed through.
    p = sub.add_parser("simulate", help="write (or --check) the SIMULATED demo data set",
                       add_help=False)
    p.add_argument("args", nargs="*", help="see `leash simulate --help`")
    p = sub.add_parser("reproduce", help="run the notebooks: every table and figure",
                       add_help=False)
    p.add_argument("args", nargs="*", help="see `leash reproduce --help`")
    return parser


# ----------------------------------------------------------------------------- output


def _json_value(x):
    """numpy scalars as Python numbers (exact: floats keep every digit), NaN as null."""
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return None if np.isnan(x) else float(x)
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def _emit(df: pd.DataFrame, as_json: bool) -> None:
    if as_json:
        records = df.astype(object).where(df.notna(), None).to_dict(orient="records")
        sys.stdout.write(json.dumps(records, indent=1, default=_json_value) + "\n")
        return
    if df.empty:
        sys.stdout.write("(no rows)\n")
        return
    with pd.option_context("display.max_rows", None, "display.max_columns", None,
                           "display.width", 200):
        sys.stdout.write(df.to_string(index=False, float_format=lambda x: f"{x:.4g}") + "\n")


# ----------------------------------------------------------------------------- reading


def _inputs(args, ctx: _Context):
    """Resolve FILE arguments (paths or manifest names) into (path, reader kwargs) pairs."""
    from . import manifest as mf
    from .formats import check_regular_file

    given = {"fmt": args.fmt, "model": args.model, "benchmark": args.benchmark,
             "step": args.step, "mapping": args.mapping,
             "reader_options": {"filter": args.filter} if args.filter else None}
    given = {k: v for k, v in given.items() if v is not None}
    out = []
    for name in args.files:
        for path, ds in mf.resolve(name, mirror=args.mirror, dest=args.dest,
                                   progress=not ctx.quiet):
            check_regular_file(path)  # every command; a FIFO would block its reader
            kw = {}
            if ds is not None:
                if not ds.is_generations:
                    raise ValueError(f"Dataset {ds.name!r} ({ds.format}) is not a generations "
                                     "file.")
                kw = ds.reader_kwargs()
            kw.update(given)
            out.append((path, kw))
    return out


def _load_summary(args, ctx: _Context, **summarize_kwargs) -> pd.DataFrame:
    """Summary frame of every input: one reader call per set of labels, then one frame.

    Without ``summarize_kwargs`` the inputs go through :func:`leash.summarize.load_counts`
    (summary Parquet files allowed), else through :func:`leash.summarize.summarize`.
    """
    from .summarize import KEY_COLUMNS, load_counts, summarize

    groups: dict[str, tuple[list, dict]] = {}
    for path, kw in _inputs(args, ctx):
        groups.setdefault(json.dumps(kw, sort_keys=True), ([], kw))[0].append(path)
    frames = []
    for i, (paths, kw) in enumerate(groups.values(), start=1):
        ctx.note(f"reading {len(paths)} file(s) ({i}/{len(groups)}): "
                 f"{', '.join(Path(p).name for p in paths)}")
        if summarize_kwargs:
            frames.append(summarize(paths, **summarize_kwargs, **kw))
        else:
            frames.append(load_counts(paths, on_error=args.on_error, **kw))
        for f in frames[-1].attrs.get("provenance", {}).get("files", []):
            for note in f["notes"]:  # e.g. an ignored column that looks misspelled
                ctx.note(f"note: {f['path']}: {note}")
    if len(frames) == 1:
        return frames[0]
    summary = pd.concat(frames, ignore_index=True)
    summary.attrs["provenance"] = {"parts": [f.attrs.get("provenance", {}) for f in frames]}
    keys = summary[list(KEY_COLUMNS)].astype(object)
    keys = keys.where(keys.notna(), None)
    dup = keys.duplicated(keep=False)
    if dup.any():
        first = keys[dup].drop_duplicates().head(3).to_dict("records")
        raise ValueError(f"{int(keys[dup].drop_duplicates().shape[0])} questions appear in more "
                         f"than one input (first: {first}); pass each question once.")
    return summary


# ----------------------------------------------------------------------------- subcommands


def _cmd_validate(args, ctx: _Context) -> int:
    from .validate import validate

    rows, reports = [], []
    inputs = _inputs(args, ctx)
    for i, (path, kw) in enumerate(inputs, start=1):
        ctx.note(f"validating {path} ({i}/{len(inputs)})")
        rep = validate(path, **kw)
        reports.append(rep)
        rows.append({"file": str(path), "format": rep.format, "ok": rep.ok,
                     "rows_read": rep.rows_read, "rows_used": rep.rows_used,
                     "rows_rejected": rep.rows_rejected, "n_problems": len(rep.problems),
                     "problems_by_reason": json.dumps(rep.counts_by_reason()),
                     "notes": json.dumps(rep.notes)})
    if args.json:
        _emit(pd.DataFrame(rows), True)
    else:
        for rep in reports:
            sys.stdout.write(str(rep) + "\n")
    unreadable = [r.file_problem for r in reports if r.file_problem is not None]
    if unreadable:
        # a file that could not be read as a whole is an input error, not a list of problems
        raise ValueError(unreadable[0].message)
    return 0 if all(r.ok for r in reports) else EXIT_INVALID


def _overview(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (model, benchmark, step): questions, samples, correct, avg@n and pass@n."""
    from .passk import avg_at_n

    df = summary.assign(
        _avg=avg_at_n(summary["n"].to_numpy(), summary["c"].to_numpy()),
        _found=(summary["c"].to_numpy() > 0),
        step=summary["step"].astype("Int64"),
    )
    g = df.groupby(["model", "benchmark", "step"], dropna=False, sort=True, observed=True)
    out = g.agg(questions=("question_id", "size"), samples=("n", "sum"), correct=("c", "sum"),
                n_min=("n", "min"), n_max=("n", "max"), answer_missing=("n_answer_missing",
                                                                         "sum"),
                truncated=("n_truncated", "sum"), **{"avg@n": ("_avg", "mean"),
                                                     "pass@n": ("_found", "mean")})
    return out.reset_index()


def _cmd_summarize(args, ctx: _Context) -> int:
    from .summarize import write_summary

    summary = _load_summary(args, ctx, na=args.na, on_error=args.on_error)
    if args.out:
        write_summary(summary, args.out)
        ctx.note(f"wrote {len(summary)} question rows to {args.out}")
    _emit(_overview(summary), args.json)
    return 0


def _cmd_fetch(args, ctx: _Context) -> int:
    from . import manifest as mf

    m = mf.load_manifest()
    if args.list or not args.names:
        rows = [{"name": d.name, "kind": "dataset", "format": d.format, "model": d.model,
                 "benchmark": d.benchmark, "step": d.step, "path": d.path,
                 "local": str(mf.locate(d.name, dest=args.dest, mirror=args.mirror,
                                        manifest=m) or "")}
                for d in m.datasets.values()]
        groups = [{"name": g, "kind": "group", "format": None, "model": None, "benchmark": None,
                   "step": None, "path": " ".join(members), "local": ""}
                  for g, members in m.groups.items()]
        if args.json:
            _emit(pd.DataFrame(rows + groups), True)
        else:
            _emit(pd.DataFrame(rows).drop(columns="kind"), False)
            sys.stdout.write("\ngroups:\n" + "".join(
                f"  {g['name']}: {g['path']}\n" for g in groups))
        return 0
    rows = []
    for name in args.names:
        got = mf.fetch(name, dest=args.dest, mirror=args.mirror, force=args.force,
                       progress=not ctx.quiet, manifest=m)
        paths = {name: got} if isinstance(got, Path) else got
        for n, p in paths.items():
            rows.append({"name": n, "path": str(p), "sha256": m.datasets[n].sha256})
    _emit(pd.DataFrame(rows), args.json)
    return 0


def _gold_for(args, samples: pd.DataFrame):
    from . import rescore as rs

    if args.gold is None:
        if args.scorer == "reasoning-gym":
            raise ValueError("--scorer reasoning-gym needs --gold FILE (Reasoning Gym entries).")
        have = samples.dropna(subset=["gold"])
        if have.empty:
            raise ValueError("The input carries no gold answers: pass --gold (a manifest "
                             "benchmark such as math500, or a JSONL question file).")
        return dict(zip(have["question_id"].astype(str), have["gold"]))
    gpath = Path(args.gold)
    if args.scorer == "reasoning-gym":
        if not gpath.is_file():
            raise FileNotFoundError(f"The --gold file {gpath} does not exist.")
        entries = {}
        with open(gpath, encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                if line.strip():
                    try:
                        e = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise ValueError(f"{gpath}, line {i + 1}: malformed JSON "
                                         f"({exc.msg}).") from None
                    entries[str(e.get("question_id", e.get("idx", len(entries))))] = e
        return entries
    if gpath.is_file():
        return rs.gold_from_frame(rs.read_benchmark(gpath, args.gold_rule))
    return rs.gold_from_frame(rs.load_benchmark(args.gold, mirror=args.mirror, dest=args.dest))


def _cmd_rescore(args, ctx: _Context) -> int:
    from . import rescore as rs
    from .answers import extract_answer, normalize_answer

    parts = []
    for path, kw in _inputs(args, ctx):
        ctx.note(f"reading responses from {path}")
        parts.append(rs.read_responses(path, **kw))
    samples = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    gold = _gold_for(args, samples)
    ctx.note(f"rescoring {len(samples)} samples with {args.scorer}")
    res = rs.rescore(samples, gold, scorer=args.scorer,
                     extract=args.extract if args.scorer == "math-verify" else "math-verify",
                     task=args.task, progress=not ctx.quiet)
    out = res.samples
    before = samples["correct"]
    if args.out:
        canon = out.drop(columns=["gold", "response"]).assign(
            answer=[normalize_answer(extract_answer(r)) for r in out["response"]])
        target = Path(args.out)
        if target.name.lower().endswith((".parquet", ".pq")):
            canon.to_parquet(target, index=False)
        elif target.name.lower().endswith(".jsonl"):
            canon.to_json(target, orient="records", lines=True)
        else:
            raise ValueError(f"--out must end in .jsonl or .parquet. Got {args.out!r}.")
        ctx.note(f"wrote {len(canon)} rescored samples to {target}")
    df = out.assign(_before=before, _changed=res.changed)
    for col in ("model", "benchmark"):
        df[col] = df[col].astype(object).where(df[col].notna(), "")
    rows = []
    for (m, b, st), g in df.groupby(["model", "benchmark", "step"], sort=True, dropna=False):
        known = g["_before"].notna()
        rows.append({"model": m, "benchmark": b, "step": st, "samples": len(g),
                     "questions": g["question_id"].nunique(),
                     "accuracy_before": (float(g.loc[known, "_before"].astype(bool).mean())
                                         if known.any() else math.nan),
                     "accuracy_after": float(g["correct"].mean()),
                     "changed": int(g["_changed"].sum()),
                     "agreement": (1 - float(g.loc[known, "_changed"].mean())
                                   if known.any() else math.nan)})
    _emit(pd.DataFrame(rows), args.json)
    return 0


def _input_files(prov: dict) -> list[dict]:
    """The per-file provenance entries of one summary frame (one or several reader calls)."""
    if "parts" in prov:
        return [f for part in prov["parts"] for f in _input_files(part)]
    return list(prov.get("files", []))


def _require_first_correct(summary, missing, models, needed_by: str, instead: str) -> None:
    """Stop with what is missing, where, and what to do, when first_correct is unknown."""
    if not missing.any():
        return
    files = [f["path"] for f in _input_files(summary.attrs.get("provenance", {}))
             if f.get("first_correct_unknown")]
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    raise ValueError(
        f"{where or 'The input'} has no first_correct for model(s) "
        f"{', '.join(repr(m) for m in models)} ({int(missing.sum())} "
        f"question{'s' if missing.sum() > 1 else ''}; needed by "
        f"{needed_by}): give first_correct (the 0-based index of the first correct sample) "
        f"in the counts file, or {instead}.")


def _check_k_fits(rows: pd.DataFrame, ks) -> None:
    """Every budget of --k fits the smallest n of each model (and step) on each benchmark.

    ``rows`` has the columns model, benchmark, step and n (one row per question). The library
    would refuse the budget too, but naming its own function and keywords.
    """
    if ks is None or rows.empty:
        return
    smallest = (rows.assign(step=rows["step"].astype("Int64"))
                .groupby(["model", "benchmark", "step"], dropna=False, sort=True, observed=True)
                ["n"].min())
    (model, benchmark, step), n_min = smallest.index[int(np.argmin(smallest))], smallest.min()
    too_big = [k for k in np.atleast_1d(ks) if k > n_min]
    if too_big:
        at = "" if pd.isna(step) else f" at step {step}"
        raise ValueError(f"--k {too_big[0]} exceeds the smallest budget n = {n_min} of model "
                         f"{model}{at} on benchmark {benchmark}.")


def _cmd_passk(args, ctx: _Context) -> int:
    from .tables import passk_table

    summary = _load_summary(args, ctx)
    _check_k_fits(summary, args.k)
    if args.estimator is None:
        args.estimator, needed_by = "first-k", "--estimator first-k, the default"
    else:
        needed_by = f"--estimator {args.estimator}"
    if args.estimator == "first-k":
        missing = summary["first_correct"].isna().to_numpy()
        _require_first_correct(summary, missing,
                               sorted(pd.unique(summary.loc[missing, "model"].astype(str))),
                               needed_by, "use --estimator unbiased")
    by = ["model", "benchmark"]
    steps = summary["step"].astype("Int64")
    if steps.notna().any():
        # Checkpoint rows per step; rows without a step get their own call, because grouping
        # by a column with missing values would drop them.
        parts = [passk_table(summary[steps.notna()], args.k, estimator=args.estimator,
                             by=[*by, "step"])]
        if steps.isna().any():
            parts.insert(0, passk_table(summary[steps.isna()], args.k,
                                        estimator=args.estimator, by=by).assign(step=pd.NA))
        table = pd.concat(parts, ignore_index=True)
        table.insert(2, "step", table.pop("step").astype("Int64"))
    else:
        table = passk_table(summary, args.k, estimator=args.estimator, by=by)
    _emit(table, args.json)
    return 0


# The CLI's bootstrap level: support_table's default, named here for the --n-boot warning.
_LEVEL = 0.95


def _check_support_options(args) -> None:
    """The options of ``leash support`` that need no data, checked before any file is read."""
    from ._checks import INT64_MAX
    from .stats import MIN_N_BOOT

    if args.n_boot < 0 or 0 < args.n_boot < MIN_N_BOOT:
        raise ValueError(f"--n-boot must be 0 (no bootstrap) or >= {MIN_N_BOOT}. "
                         f"Got {args.n_boot}.")
    if args.n_boot > INT64_MAX:
        raise ValueError(f"--n-boot {args.n_boot} is too large (beyond the 64-bit integer "
                         "range).")
    if args.k is not None and args.k < 1:
        raise ValueError(f"--k must be an int >= 1. Got {args.k}.")
    if args.min_count < 1:
        raise ValueError(f"--min-count must be an int >= 1. Got {args.min_count}.")
    if not 0 < args.zeta < 1:  # NaN too
        raise ValueError(f"--zeta must be a number in (0, 1). Got {args.zeta}.")


def _side_rows(summary: pd.DataFrame, spec, paired: pd.DataFrame) -> pd.DataFrame:
    """The summary rows of one side (MODEL or (MODEL, STEP)) for the paired questions."""
    model, step = spec if isinstance(spec, tuple) else (spec, None)
    rows = summary[(summary["model"] == model).to_numpy(dtype=bool)]
    if step is not None:
        rows = rows[(rows["step"] == step).fillna(False).to_numpy(dtype=bool)]
    keys = paired[["benchmark", "question_id"]].astype(str).drop_duplicates()
    return rows.assign(benchmark=rows["benchmark"].astype(str),
                       question_id=rows["question_id"].astype(str)).merge(keys)


def _warn_about_the_bootstrap(args, paired: pd.DataFrame) -> None:
    """The bootstrap's warnings in the CLI's words (one line each), instead of the library's
    (which name its function and n_boot): too few replicates, benchmarks of one question."""
    from .stats import DegenerateBootstrapWarning, TooFewReplicatesWarning, min_n_boot

    warnings.simplefilter("ignore", TooFewReplicatesWarning)
    warnings.simplefilter("ignore", DegenerateBootstrapWarning)
    if not args.n_boot:
        return
    need = min_n_boot(_LEVEL)
    if args.n_boot < need:
        warnings.warn(f"--n-boot {args.n_boot} leaves no bootstrap replicate beyond the ends of "
                      f"the {_LEVEL:.0%} intervals, which are then the extreme replicates; use "
                      f"--n-boot {need} or more (1000 or more for stable ends).", stacklevel=2)
    sizes = (paired.assign(step=paired["step"].astype("Int64"))
             .groupby(["step", "benchmark"], dropna=False, sort=True, observed=True).size())
    alone = [str(b) + ("" if pd.isna(st) else f" at step {st}")
             for (st, b), size in sizes.items() if size < 2]
    if alone:
        warnings.warn(f"--n-boot: benchmark {', '.join(alone)} has one paired question, which a "
                      "bootstrap cannot resample: its interval bounds are NaN.", stacklevel=2)


def _cmd_support(args, ctx: _Context) -> int:
    _check_support_options(args)
    try:
        from .pairing import pair_counts
    except ImportError:
        raise ImportError("leash.pairing is not available in this installation; "
                          "'leash support' needs it.") from None
    from .support import epsilon
    from .tables import support_table

    summary = _load_summary(args, ctx)
    # Pair at the full sample counts; the budget --k is applied by support_table (first k
    # samples in generation order, from first_correct), which needs the per-question counts.
    base, rl = _model_spec(args.base), _model_spec(args.rl)
    paired = pair_counts(summary, base=base, rl=rl, restrict_to_shared=args.shared_only)
    for side in ("base", "rl"):
        unknown = int(pd.isna(paired[f"c_{side}"]).sum())
        if unknown:
            raise ValueError(
                f"The {side} model's sample counts differ from the other model's, so pairing "
                f"reduced them to a common budget and {unknown} correct counts are unknown; "
                "the support table needs them: compare models with equal samples per question.")
    if args.k is not None:
        for spec in (base, rl):
            _check_k_fits(_side_rows(summary, spec, paired), args.k)
        below = int(max(paired["n_base"].max(), paired["n_rl"].max()))
        if args.min_count != 1 and below > args.k:
            raise ValueError(
                f"--min-count {args.min_count} needs the full budget: below it (--k {args.k} < "
                f"n = {below}) a question is found by its first k samples, which defines found "
                "for --min-count 1 only; leave out --k or use --min-count 1.")
        labels = paired.attrs["pairing"]
        for side in ("base", "rl"):
            missing = (paired[f"first_correct_{side}"].isna()
                       & (paired[f"n_{side}"] > args.k)).to_numpy()
            _require_first_correct(
                summary, missing, [labels[side]], f"--k {args.k} below the full budget of "
                f"{int(paired[f'n_{side}'].max())} samples", "leave out --k to use the full "
                "budget")
    _warn_about_the_bootstrap(args, paired)
    ctx.note(f"support table for {len(paired)} paired questions"
             + (f", {args.n_boot} bootstrap replicates" if args.n_boot else ""))
    rng = np.random.default_rng(args.seed)
    kw = dict(k=args.k, min_count=args.min_count, n_boot=args.n_boot, rng=rng, level=_LEVEL)
    steps = paired["step"].astype("Int64")
    if steps.notna().any():
        # One table per checkpoint; rows of the final (step NA) model get their own call,
        # because grouping by a column with missing values would drop them.
        parts = [support_table(paired[steps.notna()], by=["step"], **kw)]
        if steps.isna().any():
            parts.insert(0, support_table(paired[steps.isna()], **kw).assign(step=pd.NA))
        table = pd.concat(parts, ignore_index=True)
        table.insert(0, "step", table.pop("step").astype("Int64"))
    else:
        table = support_table(paired, **kw)
    kk = pd.to_numeric(table["k"], errors="coerce").to_numpy(dtype=float)
    eps = np.full(len(table), np.nan)
    ok = np.isfinite(kk)
    if ok.any():
        eps[ok] = epsilon(kk[ok].astype(np.int64), args.zeta)
    table.insert(table.columns.get_loc("k") + 1, "epsilon", eps)
    _emit(table, args.json)
    return 0


def _model_spec(text: str):
    """``MODEL`` or ``MODEL@STEP`` (one checkpoint of a trajectory) for pair_counts."""
    if "@" in text:
        model, _, step = text.rpartition("@")
        try:
            return (model, int(step))
        except ValueError:
            raise ValueError(f"A model@step label needs an integer step. Got {text!r}.") from None
    return text


# The library names its keyword arguments; the command line names its options instead.
_CLI_PHRASES = (
    ("Pass on_error='skip' to reject bad rows and count them in the provenance, or run "
     "leash.validate.validate(path) to list every problem",
     "Pass --on-error skip to reject bad rows and count them, or run `leash validate FILE` "
     "to list every problem"),
    ("Pass restrict_to_shared=True", "Pass --shared-only"),
    ("; see attrs['provenance'].", "; `leash validate FILE` lists them."),
    ("Run leash.validate.validate(path) to list every problem",
     "Run `leash validate FILE` to list every problem"),
    ("select one with base=(model, step)", "select one with --base MODEL@STEP"),
    ("or two checkpoints of one run as (model, step)", "or two checkpoints of one run as "
     "MODEL@STEP"),
    ("; subsample='expected' uses the hypergeometric expectation instead", ""),
    ("fmt='nested' needs a 'mapping'", "--fmt nested needs --mapping"),
    ("Pass fmt= (", "Pass --fmt ("), ("layouts, mapping= to", "layouts, --mapping to"),
    ("The 'base' and 'rl' parameters name", "--base and --rl name"),
)
# Keywords of the generations layer (readers, pairing) whose messages reach the CLI. The
# options of passk and support (--k, --min-count, --zeta, --estimator, --n-boot, --seed) are
# checked by the CLI itself, before the library sees them.
_CLI_FLAGS = ("base", "rl", "step", "fmt", "mapping", "on_error", "na", "model", "benchmark")


def _cli_words(msg: str) -> str:
    """A library message with the CLI's option names instead of Python keywords."""
    import re

    for py, flag in _CLI_PHRASES:
        msg = msg.replace(py, flag)
    names = "|".join(_CLI_FLAGS)
    msg = re.sub(rf"The '({names})' parameter(?: of [\w.]+)?",
                 lambda m: "--" + m.group(1).replace("_", "-"), msg)
    return re.sub(rf"\bpass ({names})=\.\.\.", lambda m: f"pass --{m.group(1)} ...", msg)


def _run_simulate(argv) -> int:
    from .simulate import main_simulate

    return main_simulate(argv)


def _run_reproduce(argv) -> int:
    from .reproduce import main as reproduce_main

    return reproduce_main(argv)


_COMMANDS = {"validate": _cmd_validate, "summarize": _cmd_summarize, "fetch": _cmd_fetch,
             "rescore": _cmd_rescore, "passk": _cmd_passk, "support": _cmd_support}
# Commands with their own argument parser, called with the rest of the command line (argparse
# cannot pass leading --options through a subparser).
_PASSTHROUGH = {"simulate": _run_simulate, "reproduce": _run_reproduce}


def main(argv: list[str] | None = None) -> int:
    """Run the ``leash`` command; returns the exit status (0 ok, 1 invalid input file, 2 error).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in _PASSTHROUGH:
        return _PASSTHROUGH[argv[0]](argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    ctx = _Context(args.quiet)

    def show_warning(message, category, filename, lineno, file=None, line=None):
        text = str(message).strip().splitlines()[0] if str(message).strip() else ""
        print(f"{PROG} {args.command}: warning: {_cli_words(text)}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = show_warning  # one line, no source path
            return _COMMANDS[args.command](args, ctx)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"{PROG} {args.command}: error: {_cli_words(msg)}", file=sys.stderr)
        return EXIT_INPUT
    except MemoryError:
        # e.g. --n-boot beyond memory: numpy's message names array shapes, not options
        n_boot = getattr(args, "n_boot", 0)
        hint = f" for --n-boot {n_boot} bootstrap replicates; use fewer" if n_boot else ""
        print(f"{PROG} {args.command}: error: not enough memory{hint}.", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
