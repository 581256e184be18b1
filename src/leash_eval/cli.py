"""The ``leash`` command line: validate, summarize, fetch, rescore, generate, score-traces, passk,
support, flips, plan.

Every subcommand is a thin layer over the library (:mod:`leash_eval.summarize`,
:mod:`leash_eval.validate`,
:mod:`leash.analysis.pairing`, :mod:`leash.analysis.tables`, :mod:`leash.analysis.flips`,
:mod:`leash.analysis.planning`, :mod:`leash_eval.manifest`,
:mod:`leash_eval.rescore`); a
``FILE`` may also be a dataset or group name of the data manifest, fetched (mirror first) and
read with the manifest's labels. ``leash COMMAND --help`` says what a command reads and writes,
with examples (``_HELP``) and every option's default. Tables go to stdout (``--json``: a JSON
list of row objects), progress and notes to stderr (``--quiet`` silences them, not warnings).
An input error (ValueError, TypeError, OSError, a missing optional package, no memory) is one
line on stderr and exit status 2; ``leash validate`` exits 1 when rows have problems. Messages
and warnings (one line each) name the command's options (``--on-error skip``), not the
library's keywords: the library's errors carry their structure (:mod:`leash.errors`), and
:class:`_CliWords` renders a parameter as the option of the running command that sets it (its
argparse ``dest``, or a keyword declared with the option). pandas and numpy are imported by the
commands that need them, so ``--help`` starts quickly.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

from leash._version import version
from leash.errors import Call, LeashValueError, Param, Words
from leash.sources.choices import GOLD_FILE_RULES
from leash_eval import scorers as _scorers
from leash_eval.argparsing import OneLineParser, non_empty, non_negative_int, positive_int
from leash_eval.processes import (
    Terminated,
    exit_status,
    raise_interrupted,
    raise_terminated,
    signalled,
)

__all__ = ["main", "build_parser", "main_simulate", "main_study"]

PROG = "leash"
EXIT_INPUT = 2
EXIT_INVALID = 1


class _Context:
    def __init__(self, quiet: bool):
        self.quiet = quiet

    def note(self, msg: str) -> None:
        if not self.quiet:
            print(f"{PROG}: {msg}", file=sys.stderr, flush=True)


def _int_list(text: str) -> list[int]:
    """The budgets of a list such as ``1,2,4,8``, ascending, each once."""
    try:
        ks = [int(x) for x in text.split(",")]  # an empty item ("1,,2") is no integer
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of integers, got {text!r}") from None
    if any(k < 1 for k in ks):
        raise argparse.ArgumentTypeError(f"must list integers >= 1, got {text!r}")
    return sorted(set(ks))


class _VersionAction(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked for (the
    metadata scan would slow down every other command's start-up).
    """

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="print leash's version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"{PROG} {version()}\n")  # stdout, as argparse's own "version"
        parser.exit(0)


class _ModelSpec:
    """The argparse ``type`` of ``--base`` and ``--rl``: ``MODEL``, or ``MODEL@STEP`` for one
    checkpoint of a trajectory, given to pair_counts as ``(MODEL, STEP)``; :meth:`show` writes
    such a value back as the option takes it (a message's remedy ``--base rl@100``).
    """

    __name__ = "MODEL[@STEP]"  # argparse names the type in some messages

    def __call__(self, text: str):
        if "@" not in text:
            return text
        model, _, step = text.rpartition("@")
        try:
            return (model, int(step))
        except ValueError:
            raise argparse.ArgumentTypeError(f"a MODEL@STEP label needs an integer step (e.g. "
                                             f"{model}@100), got {text!r}") from None

    @staticmethod
    def show(value) -> str:
        """``MODEL`` or ``MODEL@STEP`` of a side ``model`` or ``(model, step)``."""
        return f"{value[0]}@{value[1]}" if isinstance(value, tuple) else str(value)


_DESCRIPTION = """\
Support dynamics, pass@k and answer statistics of base vs RLVR models from their generation
files (arXiv 2507.14843v4). Tables go to stdout (--json: a JSON list of rows), progress and
warnings to stderr; an error is one line on stderr and exit status 2."""

_EPILOG = """\
A typical session, on the GSM8K SFT-vs-RLVR probe of data/manifest.yaml (read from the mirror
in LEASH_DATA_MIRROR when it holds the files, else downloaded into data/raw/ and verified):
  leash fetch --list                       # the datasets and groups of the manifest
  leash fetch gsm8k-probe                  # fetch the probe's files
  leash validate gsm8k-probe-raw           # every problem, with file, line and field
  leash summarize gsm8k-probe-sft gsm8k-probe-rl-final --out summary.parquet
  leash support summary.parquet --base sft --rl rl
  leash passk summary.parquet --k 1,2,4,8

Your own files work the same way (`leash validate my_samples.jsonl`); data/README.md describes
the formats. From a model (the cpu-generate extra): `leash generate smollm2 gsm8k --k 4 --out
smol.parquet` samples, grades and writes a samples file the other commands read.
`leash COMMAND --help` describes each command."""

# Per command: (one line for `leash --help`, description, examples). The examples run as shown
# (tests/test_cli_help.py checks their options and manifest names).
_HELP = {
    "validate": (
        "check generation files and list every problem",
        "Check generation files without summarizing them: every invalid row is listed with "
        "its file, line (or row), field and value, and problems of a file as a whole (missing, "
        "truncated, no data rows, format not detected) are reported too. Reads each FILE; "
        "prints one report per file to stdout. Exit status: 0 no problems, 1 some rows have "
        "problems, 2 a file cannot be read as a whole.",
        ["leash validate my_samples.jsonl",
         "leash validate gsm8k-probe-raw --json",
         "leash validate rollouts.jsonl --fmt nested --mapping rollouts"]),
    "summarize": (
        "per-question summary (n, c, answers, tokens)",
        "Summarize generation files per question (samples n, correct c, index of the first "
        "correct sample, answer counts, tokens, truncation), streaming in bounded memory, "
        "here or (--cluster) on the workers of a Dask or Ray cluster, one task per file. "
        "Reads each FILE; prints one overview row per model, benchmark and step to stdout "
        "and, with --out, writes the per-question summary as Parquet, which passk and "
        "support read.",
        ["leash summarize my_samples.jsonl --out summary.parquet",
         "leash summarize gsm8k-probe-sft gsm8k-probe-rl-final --json",
         "leash summarize rollouts/ --cluster ray --out summary.parquet",
         "leash summarize eval.jsonl --fmt evaluator --model m --benchmark math "
         "--on-error skip"]),
    "fetch": (
        "fetch verified data files of the manifest",
        "Fetch files of data/manifest.yaml by dataset or group name: from the mirror folder "
        "(--mirror or LEASH_DATA_MIRROR) when it holds them, else downloaded into the cache "
        "(--dest); the sha256 of every file is verified. Prints each file's name, path and "
        "sha256; without NAME (or with --list), lists the datasets and groups.",
        ["leash fetch --list",
         "leash fetch gsm8k-probe math-benchmarks",
         "leash fetch aime24 --dest data-cache --json"]),
    "rescore": (
        "recompute correctness from response texts",
        "Recompute each sample's correctness from its response text: math-verify against the "
        "gold answers (the file's own gold field, a benchmark of the manifest, or a JSONL "
        "question file), or a Reasoning Gym task's scorer, in local processes or (--cluster) "
        "on the workers of a Dask or Ray cluster. Reads each FILE's responses; "
        "prints per model, benchmark and step the accuracy before and after and how many "
        "verdicts changed; with --out, writes the rescored samples (canonical samples "
        "format), which the other commands read.",
        ["leash rescore gsm8k-probe-sft gsm8k-probe-rl-final",
         "leash rescore eval.jsonl --model m --benchmark math500 --gold math500 "
         "--out rescored.jsonl",
         "leash rescore gens.parquet --gold math500 --out rescored.parquet "
         "--cluster ray://head:10001",
         "leash rescore gym.jsonl --scorer reasoning-gym --gold entries.jsonl --task "
         "basic_arithmetic"]),
    "generate": (
        "sample responses from a model",
        "Sample --k responses to every question from a model, with the entropy of each "
        "generated token's distribution (at --entropy-temperature, default 1), grade them with "
        "math-verify against the gold answers, and write the canonical samples file (--out, "
        "Parquet) that the other commands read. QUESTIONS is a benchmark of the manifest "
        "(math500, aime24, amc23, minerva, olympiadbench, gsm8k), a Reasoning Gym task "
        "(gym:TASK or gym:TASK:SIZE, graded by the task's scorer) or a JSONL file with question "
        "and gold per line. Resumable: a rerun with the same settings continues where the last "
        "one stopped. Backends: llama-cpp (a GGUF file on the CPU; `smollm2` is the 135M test "
        "model of the cpu-generate extra) and vllm (GPUs). Prints what was generated.",
        ["leash generate smollm2 gsm8k --k 4 --max-tokens 256 --out smol.parquet",
         "leash generate model.gguf questions.jsonl --k 8 --temperature 0.6 --top-p 0.95 "
         "--label base --out base.parquet",
         "leash generate Qwen/Qwen2.5-Math-1.5B math500 --backend vllm --k 64 --out b.parquet"]),
    "score-traces": (
        "score reference traces (Table 2)",
        "Score reference reasoning traces under a model by teacher forcing: the natural-log "
        "probability of each trace token given the question (under the same prompt as "
        "generate) and the trace before it. TRACES is JSONL with question_id, question, trace, "
        "reference and benchmark per line; --out (Parquet) gets benchmark, question_id, "
        "reference, model, n_tokens, sum_logprob and token_logprobs, which a study's "
        "perplexity section lists (Table 2). Prints the traces' perplexities.",
        ["leash score-traces smollm2 traces.jsonl --label base --out base_traces.parquet"]),
    "passk": (
        "pass@k per model and benchmark",
        "pass@k per model, benchmark (and step) at the budgets --k: the unbiased estimator "
        "of Chen et al. (2021) from n and c (the default), or first-k, the share of "
        "questions solved within the first k samples in generation order (the paper's "
        "printed tables). "
        "Reads each FILE (samples, counts or summaries); prints one row per model, "
        "benchmark, step and k.",
        ["leash passk summary.parquet --k 1,2,4,8",
         "leash passk my_counts.csv --k 1,8,128 --json",
         "leash passk my_samples.jsonl --estimator first-k"]),
    "support": (
        "support dynamics (P, E, S, O, SRR, NDR, SDS, NSCR)",
        "Support dynamics of an RLVR model against its base (arXiv 2507.14843v4, Defs. 3.2 "
        "and 3.3): the questions preserved (P), expanded (E), shrunk (S) and out of support "
        "(O), the metrics SRR, NDR, SDS and NSCR, McNemar's p, epsilon = -ln(zeta)/k and "
        "bootstrap intervals. Reads each FILE; pairs the two models' questions by benchmark "
        "and question_id; prints one row per benchmark (and step), and pooled rows when "
        "there are several.",
        ["leash support summary.parquet --base sft --rl rl",
         "leash support gsm8k-probe-sft gsm8k-probe-rl-final --base sft --rl rl --k 4 "
         "--n-boot 0 --json",
         "leash support gsm8k-probe-raw --base sft --rl rl --n-boot 0",
         "leash support gsm8k-probe-raw --base rl@100 --rl rl@1000 --shared-only"]),
    "flips": (
        "per-question tests: which E and S are evidence",
        "One row per question of a pair: both models' correct samples and samples (base_c, "
        "base_n, rl_c, rl_n), its support category at --min-count (P, E, S, O), the one-sided "
        "Fisher exact tests of the RLVR model's success rate against the base's (p_expansion: "
        "higher, p_shrinkage: lower), their Benjamini-Hochberg adjustments over all questions "
        "of the pair per direction (q_expansion, q_shrinkage; per step for checkpoints) and the "
        "verdict at --fdr (expansion, shrinkage or empty). Where the files keep answers and "
        "responses, each model's most frequent answers and one response (its first correct "
        "one, else its first; cut to --response-chars). Reads each FILE as `leash support` "
        "does; prints the table (--out: also written as CSV) and, on stderr, how many E and S "
        "are significant.",
        ["leash flips summary.parquet --base sft --rl rl",
         "leash flips gsm8k-probe-sft gsm8k-probe-rl-final --base sft --rl rl --fdr 0.1 "
         "--out flips.csv",
         "leash flips my_counts.csv --base base --rl rlvr --json"]),
    "plan": (
        "how many samples a study needs, from a pilot",
        "From a pilot's per-question success rates (c/n of both models): at each budget k "
        "(--k), the expected P, E, S, O a study would observe, the categories by the truth at "
        "k (a rate above epsilon = -ln(zeta)/k), the expected E and S whose truth is another "
        "category (misclassified) and each model's expected misclassified questions; then, "
        "for each expansion rate of --expansion (the RLVR model's rate on a question the base "
        "solves at --p-base), the smallest budget of --k at which it is detected with --power: "
        "observed as E (the paper's rule) and significant (one-sided Fisher test at --alpha). "
        "A question the pilot never solved counts as rate 0: budgets far beyond the pilot's n "
        "are extrapolations. Reads each FILE as `leash support` does; prints the tables, with "
        "the probability that a question of each --expansion rate is found within each k "
        "between them (--json: an object with 'budgets', 'found' and 'detection').",
        ["leash plan gsm8k-probe-sft gsm8k-probe-rl-final --base sft --rl rl",
         "leash plan summary.parquet --base sft --rl rl --k 8,64,512,4096 --expansion "
         "0.001,0.01 --json"]),
}


def _examples(lines) -> str:
    return "examples:\n" + "".join(f"  {line}\n" for line in lines)


def _metric_list(text: str) -> list[str]:
    """``--metric pass^k,g-pass``: the metrics of :data:`PASSK_METRICS`, checked."""
    from leash.analysis.tables import PASSK_METRICS

    out = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in out if m not in PASSK_METRICS]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"{bad[0] if bad else text!r} is not a metric; "
                                         f"choose from {', '.join(PASSK_METRICS)}")
    return out


# The options of each command, declared once: (flag, argparse keywords), or (title, [options])
# for a group of options shown under that title.
_FILES = ("files", dict(
    nargs="+", metavar="FILE", help="generation files (samples, counts or evaluator output: "
    "JSONL, JSONL.gz, Parquet, CSV; see data/README.md), folders of Parquet partitions (their "
    "files in path order) or a verl validation folder, per-question summaries written by "
    "`leash summarize --out`, or dataset/group names of data/manifest.yaml (`leash fetch "
    "--list`), fetched and labelled by the manifest"))
# --cluster ADDRESS: one option, every engine (leash_eval.cluster chooses by the address)
_CLUSTER_HELP = ("Dask scheduler at tcp://HOST:8786 (the cluster extra), or on Ray: "
                 "ray://HOST:10001 (Ray Client), or `ray` (the cluster at RAY_ADDRESS, or one "
                 "`ray start` began on this machine, else a new local Ray; the ray extra)")
# summarize and rescore read generations, not summaries (a summary is summarized already)
_GENERATIONS = ("files", {**_FILES[1], "help": _FILES[1]["help"].replace(
    ", per-question summaries written by `leash summarize --out`,", ",")})
_READER = ("reader options (apply to every FILE; override manifest labels)", [
    ("--fmt", dict(choices="FORMATS", help="input format (default: detected from the file's "
                   "name and first records)")),
    ("--model", dict(type=non_empty, help="model label for files that do not name it "
                     "(default: the file's model column, or the manifest's label)")),
    ("--benchmark", dict(type=non_empty, help="benchmark label for files that do not name it "
                         "(default: the file's benchmark column, or the manifest's label)")),
    ("--step", dict(type=non_negative_int, help="checkpoint label (an integer >= 0) for every "
                    "row (default: the file's step column, or none: a final model)")),
    ("--mapping", dict(help="field mapping for nested layouts: rollouts, samples, evaluator, or "
                       "a YAML file of field paths (data/README.md, section 4b; default: "
                       "detected, or the manifest's)")),
    "READER_OPTIONS"])  # each plug-in format's options (leash_eval.readers)
_DATA = ("data options (for manifest names)", [
    ("--mirror", dict(help="data mirror root, used before any download (default: the "
                      "environment variable LEASH_DATA_MIRROR)")),
    ("--dest", dict(help="download cache (default: data/raw/ of the repository)"))])
_JSON = ("--json", dict(action="store_true",
                        help="print a JSON list of row objects instead of a text table"))
_ON_ERROR = ("--on-error", dict(
    choices=("raise", "skip"), default="raise", help="invalid rows: stop at the first one "
    "(raise, the default) or skip them and count them (a one-line warning says how many)"))
_ON_TIMEOUT = ("--on-timeout", dict(
    choices=("error", "false", "skip"), default="error", help="samples `leash rescore` left "
    "without a verdict (math-verify timed out twice): stop (error, the default), count them as "
    "wrong (false) or leave them out (skip)"))


def _entropy_temperature(text: str):
    """``--entropy-temperature``: a number > 0, or "sampling"."""
    if text == "sampling":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a number > 0 or 'sampling'. Got {text!r}.") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0 or 'sampling'. Got {text!r}.")
    return value


_GEN_MODEL = ("model options", [
    ("--backend", dict(choices=("llama-cpp", "vllm"), default="llama-cpp", help="llama-cpp "
                       "(CPU, the default) or vllm (GPUs)")),
    ("--label", dict(help="model label of the rows (default: the model file's or id's name)")),
    ("--benchmark", dict(help="benchmark label of the rows (default: the manifest's, or the "
                         "questions file's name)")),
    ("--prompt", dict(help="the user message, with {question} for the question; the model's "
                      "chat template wraps it (default: the question, then 'Please reason step "
                      "by step, and put your final answer within \\boxed{}.')")),
    ("--n-ctx", dict(type=positive_int, default=2048, metavar="N", help="context length in "
                     "tokens, prompt and response (default: %(default)s)"))])
_OPTIONS = {
    "validate": [_FILES, _READER, _DATA, _JSON],
    "summarize": [
        _GENERATIONS,
        ("--out", dict(help="write the per-question summary as Parquet here (default: not "
                       "written)")),
        ("--na", dict(choices=("class", "truncated"), default="class", help="which samples "
                      "count as NA for answer entropy: class (the default: those without an "
                      "extracted answer) or truncated (also those with finish_reason length: "
                      "the paper's rule, which Table 5 uses)")),
        ("--cluster", dict(metavar="ADDRESS", help="read each file (a partition of a folder, "
                           "say) on the workers of a cluster, its partial counts merged here "
                           "exactly: the same summary (default: here). The " + _CLUSTER_HELP +
                           "; the workers read the files at the same paths")),
        _ON_ERROR, _ON_TIMEOUT, _READER, _DATA, _JSON],
    "fetch": [
        ("names", dict(nargs="*", metavar="NAME", help="dataset or group names of "
                       "data/manifest.yaml (none: list them)")),
        ("--list", dict(action="store_true", help="list datasets and groups")),
        ("--force", dict(action="store_true", help="download again even when the cache holds "
                         "a verified copy")),
        _DATA, _JSON],
    "rescore": [
        _GENERATIONS,
        ("--gold", dict(keywords=("load_benchmark.name",), help="gold answers: a benchmark of "
                        "the manifest (e.g. math500) or a "
                        "JSONL question file (matched by the id field whose ids the samples "
                        "use: question_id, idx or qid, else the line number from 0, or any other "
                        "id field it has, e.g. unique_id; default: the file's own gold field). "
                        "For "
                        "--scorer reasoning-gym: a JSONL file of Reasoning Gym entries")),
        ("--gold-rule", dict(choices=GOLD_FILE_RULES,
                             default="answer", help="where the gold is in a --gold JSONL file")),
        ("--scorer", dict(choices=tuple(_scorers.scorers()), default=_scorers.SCORERS[0].name,
                          help="how a response is graded: " + "; ".join(
                              f"{s.name} ({s.help})" for s in _scorers.SCORERS))),
        ("--extract", dict(choices=tuple(_scorers.extractors()),
                           default=_scorers.EXTRACTORS[0].name,
                           help="answer extraction: " + "; ".join(
                               f"for --scorer {s.name}, " + " or ".join(
                                   f"{e} ({_scorers.extractors()[e].help})"
                                   for e in s.extractors)
                               for s in _scorers.SCORERS if s.extractors))),
        ("--task", dict(help="Reasoning Gym task name (required with --scorer reasoning-gym; "
                        "default: none)")),
        ("--out", dict(help="write the rescored samples (canonical samples format, .jsonl or "
                       ".parquet; default: not written)")),
        ("--jobs", dict(type=positive_int, metavar="N", help="worker processes (default: one, "
                        "then one per idle core once grading took longer than starting them, "
                        "none on a busy machine; never slower than 1); the output does not "
                        "depend on it")),
        ("--cluster", dict(metavar="ADDRESS", help="grade on the workers of a cluster instead "
                           "of local processes: the " + _CLUSTER_HELP + "; the same batches, "
                           "at most two per worker slot in flight, written in order: the "
                           "output does not depend on it (default: local)")),
        ("--batch-size", dict(type=positive_int, default=1000, metavar="N", help="samples per "
                              "batch; memory grows with batch size x jobs")),
        _READER, _DATA, _JSON],
    "generate": [
        ("model_path", dict(metavar="MODEL", help="a GGUF file (llama-cpp), `smollm2` (the test "
                            "model of the cpu-generate extra), or a Hugging Face model (vllm)")),
        ("questions", dict(metavar="QUESTIONS", help="a benchmark of data/manifest.yaml, "
                           "gym:TASK[:SIZE] (a Reasoning Gym task, SIZE questions with seed 0, "
                           "100 by default) or a JSONL file with question (or problem) and gold "
                           "(or answer)")),
        ("--out", dict(required=True, help="the samples file to write (.parquet; required); "
                       "OUT.parts/ holds a run in progress")),
        _GEN_MODEL,
        ("sampling", [
            ("--k", dict(type=positive_int, default=8, help="samples per question (default: "
                         "%(default)s)")),
            ("--temperature", dict(type=float, default=1.0, help="sampling temperature > 0 "
                                   "(default: %(default)s)")),
            ("--entropy-temperature", dict(type=_entropy_temperature, default=1.0, metavar="T",
                                           help="temperature of the token entropies, a number "
                                           "> 0 or 'sampling' (the sampling temperature); the "
                                           "paper (App. B.4) does not say, 1 is the plain "
                                           "reading (default: %(default)s); recorded in the "
                                           "file's metadata")),
            ("--top-p", dict(type=float, default=1.0, help="nucleus sampling mass in (0, 1], "
                             "after the temperature (default: %(default)s)")),
            ("--max-tokens", dict(type=positive_int, default=1024, help="tokens per response "
                                  "at most (default: %(default)s)")),
            ("--seed", dict(type=non_negative_int, default=0, help="the run's seed; each sample "
                            "has its own, from it, the question and the sample index (default: "
                            "%(default)s)")),
            ("--flush-every", dict(type=positive_int, default=64, metavar="N", help="samples per "
                                   "part file: what an interruption can lose (default: "
                                   "%(default)s)")),
            ("--limit", dict(type=positive_int, metavar="N", help="generate at most N new "
                             "samples, then stop (rerun to continue; default: all)")),
            ("--cluster", dict(metavar="ADDRESS", help="generate on the workers of a cluster: "
                               "the " + _CLUSTER_HELP + "; --flush-every samples per task, the "
                               "model file at the same path on every worker; the file is the "
                               "local run's (default: here)"))]),
        _JSON],
    "score-traces": [
        ("model_path", dict(metavar="MODEL", help="as for generate")),
        ("traces", dict(metavar="TRACES", help="JSONL with question_id, question, trace, "
                        "reference and benchmark per line")),
        ("--out", dict(required=True, help="the Parquet file to write (required)")),
        _GEN_MODEL, _JSON],
    "passk": [
        _FILES, _ON_ERROR, _ON_TIMEOUT,
        ("--k", dict(type=_int_list, keywords=("ks",), help="budgets, e.g. 1,2,4,8 (default: "
                     "powers of 2 up to each model's n)")),
        ("--estimator", dict(choices=("unbiased", "first-k"), default="unbiased",
                             help="unbiased (the default): Chen et al. (2021), from n and c "
                             "alone; first-k: the first k samples in generation order, as the "
                             "paper's printed tables (needs the sample order or "
                             "first_correct). The output's estimator column says which")),
        ("--metric", dict(type=_metric_list, metavar="METRICS", help="columns beside pass@k, "
                          "comma-separated: pass^k (all k samples correct) and g-pass (G-Pass@k "
                          "at tau 0, .25, .5, .75, 1 and mG-Pass@k, as OpenCompass reports "
                          "them), each exact from n and c (default: none)")),
        _READER, _DATA, _JSON],
    "support": [
        _FILES, _ON_ERROR, _ON_TIMEOUT,
        ("--base", dict(required=True, type=_ModelSpec(), metavar="MODEL", help="model label of "
                        "the base model (MODEL or MODEL@STEP; required)")),
        ("--rl", dict(required=True, type=_ModelSpec(), metavar="MODEL", help="model label of "
                      "the RLVR model "
                      "(MODEL, or MODEL@STEP for one checkpoint; a MODEL with several "
                      "checkpoints gives one row per step; required)")),
        ("--k", dict(type=int, help="budget: the first k samples of each question (default: "
                     "every question's full n)")),
        ("--min-count", dict(type=int, default=1, help="correct samples among the first k "
                             "needed to find a question (default: %(default)s, the paper's "
                             "rule)")),
        ("--zeta", dict(type=float, default=0.05, help="miss probability for the reported "
                        "epsilon = -ln(zeta)/k")),
        ("--shared-only", dict(action="store_true", dest="restrict_to_shared", help="keep only "
                               "questions both models "
                               "answered, and count the others (without it, unshared questions "
                               "are an error)")),
        ("--n-boot", dict(type=int, default=1000, help="bootstrap replicates of the intervals "
                          "(0: none; otherwise at least 2, 41 or more for 95%% intervals, 1000 "
                          "or more for stable ends)")),
        ("--seed", dict(type=non_negative_int, default=0, help="bootstrap random seed (an "
                        "integer >= 0)")),
        _READER, _DATA, _JSON],
}
_PAIR_OPTIONS = [
    ("--base", dict(required=True, type=_ModelSpec(), metavar="MODEL", help="model label of "
                    "the base model (MODEL or MODEL@STEP; required)")),
    ("--rl", dict(required=True, type=_ModelSpec(), metavar="MODEL", help="model label of "
                  "the RLVR model (MODEL, or MODEL@STEP for one checkpoint; a MODEL with several "
                  "checkpoints gives one family of tests per step; required)")),
    ("--shared-only", dict(action="store_true", dest="restrict_to_shared", help="keep only "
                           "questions both models answered, and count the others (without "
                           "it, unshared questions are an error)"))]


def _float_list(text: str) -> list[float]:
    """A comma-separated list of rates in (0, 1]."""
    try:
        out = [float(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a comma-separated list of numbers, got "
                                         f"{text!r}") from None
    if not out or any(not 0 < x <= 1 for x in out):
        raise argparse.ArgumentTypeError(f"must list rates in (0, 1], got {text!r}")
    return out


_OPTIONS["flips"] = [
    _FILES, _ON_ERROR, _ON_TIMEOUT, *_PAIR_OPTIONS,
    ("--fdr", dict(type=float, default=0.05, help="false discovery rate of the verdicts, in "
                   "(0, 1) (default: %(default)s)")),
    ("--min-count", dict(type=int, default=1, help="correct samples needed to find a question, "
                         "for the category (default: %(default)s, the paper's rule)")),
    ("--response-chars", dict(type=non_negative_int, default=160, metavar="N", help="characters "
                              "of each model's response shown, where the files keep responses "
                              "(0: none, and the files are not read again; default: "
                              "%(default)s)")),
    ("--out", dict(help="also write the table here, as CSV (.csv; written whole or not at all; "
                   "default: not written)")),
    _READER, _DATA, _JSON]
_OPTIONS["plan"] = [
    _FILES, _ON_ERROR, _ON_TIMEOUT, *_PAIR_OPTIONS,
    ("--k", dict(type=_int_list, keywords=("ks",), help="budgets, e.g. 8,64,512 (default: "
                 "powers of 2 up to 16 times the pilot's largest n for the budget table, up to "
                 "131072 for the detection table)")),
    ("--zeta", dict(type=float, default=0.05, help="miss probability of epsilon = -ln(zeta)/k, "
                    "which decides the true category at each budget (default: %(default)s)")),
    ("--expansion", dict(type=_float_list, default=[0.001, 0.003, 0.01, 0.03, 0.1],
                         metavar="RATES", keywords=("p_rl",), help="the RLVR model's success "
                         "rates on an expanded question to plan for, comma-separated (default: "
                         "0.001,0.003,0.01,0.03,0.1)")),
    ("--p-base", dict(type=float, default=0.0, keywords=("p_base",), help="the base's rate on "
                      "it (default: %(default)s, a true expansion)")),
    ("--power", dict(type=float, default=0.8, help="probability of detection required, in "
                     "(0, 1) (default: %(default)s)")),
    ("--alpha", dict(type=float, default=0.05, help="level of the one-sided Fisher test per "
                     "question (with the false discovery rate over m questions a discovery "
                     "needs between fdr/m and fdr; default: %(default)s)")),
    _READER, _DATA, _JSON]
# Commands with their own option parsers: their arguments are passed through (see main).
_RUNNERS = {"simulate": "write (or --check) the SIMULATED demo data set",
            "reproduce": "run the notebooks: every table and figure",
            "study": "write a study file from files (init), check it (check)"}


def _add_options(p, options, keywords: dict | None = None) -> dict:
    """Add ``options`` to the parser ``p``; returns the option of each library keyword: its
    argparse ``dest``, and the ``keywords`` declared with it (``func.keyword`` for one
    function's keyword: ``load_benchmark.name`` is ``--gold``).
    """
    from leash_eval import readers

    keywords = {} if keywords is None else keywords
    for option in options:
        if option == "READER_OPTIONS":
            _add_options(p, _reader_options(), keywords)
            continue
        name, spec = option
        if isinstance(spec, list):
            _add_options(p.add_argument_group(name), spec, keywords)
            continue
        spec = {**spec, **({"choices": tuple(readers.input_formats())}
                           if spec.get("choices") == "FORMATS" else {})}
        also = spec.pop("keywords", ())
        action = p.add_argument(name, **spec)
        if action.option_strings:
            keywords.update(dict.fromkeys((action.dest, *also), action))
    return keywords


def _reader_options() -> list:
    """The options of the plug-in readers (:func:`leash_eval.readers.reader_options`), one flag
    per keyword, its help naming each format that takes it.
    """
    from leash_eval import readers

    out = []
    for name, (o, fmts) in readers.reader_options().items():
        helps = [f"{f}: {h}" for f, h in ((f, next(x.help for x in readers.input_formats()[f]
                                                   .options if x.name == name)) for f in fmts)]
        spec = dict(help="; ".join(helps), dest=name)
        spec.update({"choices": o.choices} if o.choices else {"metavar": o.metavar})
        out.append((o.flag, spec))
    return out


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``leash`` command (exposed for documentation and tests).

    Returns
    -------
    argparse.ArgumentParser
    """
    parser = OneLineParser(prog=PROG, description=_DESCRIPTION, epilog=_EPILOG)
    parser.set_defaults(_words=_CliWords())  # each command's: the options it has
    parser.add_argument("-V", "--version", action=_VersionAction)
    quiet = dict(action="store_true", help="no progress notes on stderr (warnings and errors "
                 "are still shown)")
    parser.add_argument("-q", "--quiet", **quiet)
    # -q is also accepted after the subcommand; SUPPRESS keeps the global value otherwise.
    common = OneLineParser(add_help=False)
    common.add_argument("-q", "--quiet", default=argparse.SUPPRESS, **quiet)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                title="commands")
    for name, options in _OPTIONS.items():
        line, description, examples = _HELP[name]
        p = sub.add_parser(name, parents=[common], help=line, description=description,
                           epilog=_examples(examples))
        p.set_defaults(_words=_CliWords(_add_options(p, options)))
    for name, line in _RUNNERS.items():
        p = sub.add_parser(name, parents=[common], help=line, add_help=False)
        p.add_argument("args", nargs="*", help=f"see `leash {name} --help`")
    return parser



def _json_value(x):
    """Numpy scalars as Python numbers (exact: floats keep every digit), NaN as null."""
    import numpy as np

    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return None if np.isnan(x) else float(x)
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def _rows(data) -> tuple[list, list]:
    """(column names, rows of Python values, None where missing) of a pandas DataFrame, a
    pyarrow Table or a list of row dicts.
    """
    if isinstance(data, list):
        cols = list(dict.fromkeys(c for row in data for c in row))
        return cols, [[row.get(c) for c in cols] for row in data]
    if hasattr(data, "to_pylist"):
        return list(data.column_names), [list(r.values()) for r in data.to_pylist()]
    return [str(c) for c in data.columns], data.astype(object).where(data.notna(),
                                                                     None).values.tolist()


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "NA"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _emit(data, as_json: bool) -> None:
    """Print a table (:func:`_rows`): JSON records (``--json``), or aligned text columns (numbers
    right-aligned, floats to 4 significant digits, text left-aligned, NA where a value is
    missing). Written here, not with
    pandas' ``to_string``, so that a command without a frame need not load pandas (0.3-0.4 s
    of a command's start-up).
    """
    cols, rows = _rows(data)
    if as_json:
        records = [dict(zip(cols, r)) for r in rows]
        sys.stdout.write(json.dumps(records, indent=1, default=_json_value) + "\n")
        return
    if not rows:
        sys.stdout.write("(no rows)\n")
        return
    text = [cols, *([_cell(v) for v in r] for r in rows)]
    widths = [max(len(r[i]) for r in text) for i in range(len(cols))]
    numeric = [all(isinstance(r[i], (int, float)) or r[i] is None for r in rows)
               for i in range(len(cols))]  # right-aligned; text columns left-aligned
    sys.stdout.write("".join("  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in
                                       zip(r, widths, numeric)).rstrip() + "\n"
                             for r in text))


def _inputs(args, ctx: _Context):
    """Resolve FILE arguments (paths or manifest names) into (path, reader kwargs) pairs."""
    from leash_eval import manifest as mf
    from leash_eval import readers
    from leash_eval.formats import check_regular_file

    given = {"fmt": args.fmt, "model": args.model, "benchmark": args.benchmark,
             "step": args.step, "mapping": args.mapping,
             "reader_options": {k: getattr(args, k) for k in readers.reader_options()
                                if getattr(args, k, None)} or None}
    given = {k: v for k, v in given.items() if v is not None}
    out = []
    from leash_eval.formats import partitions
    from leash_eval.harness_logs import verl_folder

    # a verl validation_data_dir stands for its <step>.jsonl files, in step order; a folder of
    # Parquet partitions for its files, in path order
    names = [f for name in args.files for f in (verl_folder(name) or partitions(name)
                                                or [name])]
    for name in names:
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


def _load_table(args, ctx: _Context, **summarize_kwargs):
    """Summary table of every input (:func:`leash_eval.summarize.summary_table`): one reader call
    per set of labels, then one table, each question once.

    Without ``summarize_kwargs`` summary Parquet files are allowed too (as
    :func:`leash_eval.summarize.load_counts`), with only ``--on-error``.
    """
    from leash_eval.summarize import concat_summaries, summary_table, table_provenance

    groups: dict[str, tuple[list, dict]] = {}
    for path, kw in _inputs(args, ctx):
        groups.setdefault(json.dumps(kw, sort_keys=True), ([], kw))[0].append(path)
    tables = []
    for i, (paths, kw) in enumerate(groups.values(), start=1):
        ctx.note(f"reading {', '.join(Path(p).name for p in paths)}" + (
            f" (labels {i} of {len(groups)})" if len(groups) > 1 else ""))
        tables.append(summary_table(paths, **(summarize_kwargs or {
            "summaries": True, "on_error": args.on_error,
            "on_timeout": args.on_timeout}), **kw))
        for f in table_provenance(tables[-1]).get("files", []):
            for note in f["notes"]:  # e.g. an ignored column that looks misspelled
                ctx.note(f"note: {f['path']}: {note}")
    return concat_summaries(tables)


def _load_summary(args, ctx: _Context, **summarize_kwargs):
    """:func:`_load_table` as the summary frame."""
    from leash_eval.summarize import summary_frame

    return summary_frame(_load_table(args, ctx, **summarize_kwargs))


def _cmd_validate(args, ctx: _Context) -> int:
    from leash_eval.validate import validate

    rows, reports = [], []
    inputs = _inputs(args, ctx)
    for i, (path, kw) in enumerate(inputs, start=1):
        ctx.note(f"validating {path} ({i}/{len(inputs)})")
        rep = validate(path, **kw)
        reports.append(rep)
        rows.append({"file": str(path), "format": rep.format, "ok": rep.ok,
                     "rows_read": rep.rows_read, "rows_used": rep.rows_used,
                     "rows_rejected": rep.rows_rejected, "n_problems": len(rep.problems),
                     "problems_by_reason": rep.counts_by_reason(), "notes": rep.notes,
                     "problems": [{"location": p.location, "field": p.field, "value": p.value,
                                   "reason": p.reason, "message": p.text(args._words)}
                                  for p in rep.problems]})
    if args.json:  # every problem, as the text lists them; counts and notes as JSON values
        _emit(rows, True)
    else:
        for rep in reports:  # the problems in the options' words, as the errors
            sys.stdout.write(rep.render(args._words) + "\n")
    unreadable = [r.file_problem for r in reports if r.file_problem is not None]
    if unreadable:
        # a file that could not be read as a whole is an input error, not a list of problems
        raise unreadable[0].error or ValueError(unreadable[0].message)
    return 0 if all(r.ok for r in reports) else EXIT_INVALID


def _overview(table) -> list[dict]:
    """Per (model, benchmark, step) of a summary table: questions, samples, correct, avg@n
    (mean of c / n, :func:`leash.core.passk.avg_at_n`) and pass@n (share with c > 0).
    """
    import duckdb

    con = duckdb.connect()
    con.register("t", table)
    rel = con.sql(
        "SELECT model, benchmark, step, count(*) AS questions, sum(n)::BIGINT AS samples, "
        "sum(c)::BIGINT AS correct, min(n) AS n_min, max(n) AS n_max, sum(n_answer_missing)"
        "::BIGINT AS answer_missing, sum(n_truncated)::BIGINT AS truncated, avg(c / n) AS "
        "\"avg@n\", avg((c > 0)::DOUBLE) AS \"pass@n\" FROM t GROUP BY ALL "
        "ORDER BY model, benchmark, step NULLS LAST")
    return [dict(zip(rel.columns, r)) for r in rel.fetchall()]


def _cmd_summarize(args, ctx: _Context) -> int:
    from leash_eval.summarize import write_summary

    if args.out is not None and not args.out.lower().endswith((".parquet", ".pq")):  # '' too
        raise ValueError(f"--out must end in .parquet (a summary is written as Parquet, with "
                         f"its provenance). Got {args.out!r}.")
    table = _load_table(args, ctx, na=args.na, on_error=args.on_error,
                        on_timeout=args.on_timeout, cluster=args.cluster)
    if args.out:
        write_summary(table, args.out)
        ctx.note(f"wrote {table.num_rows} question rows to {args.out}")
    _emit(_overview(table), args.json)
    return 0


def _cmd_fetch(args, ctx: _Context) -> int:
    from leash_eval import manifest as mf

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
            _emit(rows + groups, True)
        else:
            _emit([{k: v for k, v in r.items() if k != "kind"} for r in rows], False)
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
    _emit(rows, args.json)
    return 0


def _gold_for(args):
    """The --gold answers by question id, or None: each file's own gold field."""
    from leash_eval import rescore as rs

    entries = _scorers.scorers()[args.scorer].golds == "entries"
    if args.gold is None:
        if entries:
            raise ValueError(f"--scorer {args.scorer} needs --gold FILE (a JSONL file of its "
                             "entries, one per question).")
        return None
    gpath = Path(args.gold)
    if entries:
        if not gpath.is_file():
            raise FileNotFoundError(f"The --gold file {gpath} does not exist.")
        entries = {}
        with open(gpath, encoding="utf-8-sig") as fh:
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
    from leash_eval import rescore as rs

    if args.out is not None and not args.out.lower().endswith((".jsonl", ".parquet", ".pq")):
        raise ValueError(f"--out must end in .jsonl or .parquet. Got {args.out!r}.")
    if args.task is not None and not _scorers.scorers()[args.scorer].task:
        raise ValueError("--task applies to " + " or ".join(
            f"--scorer {n}" for n, s in _scorers.scorers().items() if s.task) + " only.")
    inputs = _inputs(args, ctx)
    gold = _gold_for(args)
    jobs = args.jobs  # None: here while up to every core's workers start (never slower)
    where = (f"the cluster at {args.cluster}" if args.cluster else f"{jobs} process(es)"
             if jobs else f"up to {rs.default_jobs()} process(es)")
    ctx.note(f"rescoring {len(inputs)} file(s) with {args.scorer} on {where}, "
             f"{args.batch_size} samples per batch")
    try:
        report = rs.rescore_inputs(
            inputs, args.out, gold, scorer=args.scorer, extract=args.extract, task=args.task,
            jobs=jobs, batch_size=args.batch_size, progress=not ctx.quiet,
            cluster=args.cluster)
    except rs.MissingGoldError as exc:
        if gold is None:
            raise ValueError(f"{exc} The input carries no gold answers there: pass --gold (a "
                             "manifest benchmark such as math500, or a JSONL question "
                             "file).") from None
        raise ValueError(f"{exc} Check --gold {args.gold}.") from None
    if report.gold_ids is not None:
        ctx.note(f"--gold {args.gold}: matched the samples' question ids by its "
                 f"'{report.gold_ids}' field")
    if report.n_no_answer:
        ctx.note(f"{report.n_no_answer} of {report.n_samples} responses had no extractable "
                 "answer (counted as wrong)")
    if report.n_timeouts:  # a timeout is not a verdict: retried, and what is left is no verdict
        ctx.note(f"{report.n_timeouts} response(s) hit math-verify's time limit and were graded "
                 f"again with a longer one; {report.n_unresolved} timed out again" + (
                     ": no verdict (correct empty, timeout true), which `leash summarize` "
                     "refuses unless --on-timeout false or skip; rescore on a less loaded "
                     "machine to grade them" if report.n_unresolved else ""))
    if report.out is not None:
        ctx.note(f"wrote {report.n_samples} rescored samples to {report.out}")
    table = report.table.drop(columns=["no_answer"])
    for col in ("model", "benchmark"):
        table[col] = table[col].astype(object).where(table[col].notna(), "")
    _emit(table, args.json)
    return 0


def _backend(args):
    from leash_eval.generate.backends import open_backend

    kw = {"n_ctx": args.n_ctx}
    label = args.label or Path(args.model_path).name.split(".")[0]
    return open_backend(args.backend, args.model_path, **kw), label


def _prompt(args) -> str:
    from leash_eval.generate.backends import DEFAULT_PROMPT

    return DEFAULT_PROMPT if args.prompt is None else args.prompt


def _cmd_generate(args, ctx: _Context) -> int:
    from leash_eval.generate.sampling import check_settings, generate, read_questions

    if not args.out.lower().endswith((".parquet", ".pq")):
        raise ValueError(f"--out must end in .parquet. Got {args.out!r}.")
    settings = dict(k=args.k, temperature=args.temperature, top_p=args.top_p,
                    max_tokens=args.max_tokens, seed=args.seed, prompt=_prompt(args),
                    flush_every=args.flush_every, entropy_temperature=args.entropy_temperature)
    check_settings(**settings)  # before the model loads
    questions, bench = read_questions(args.questions)
    backend, label = _backend(args)
    ctx.note(f"generating {args.k} samples for each of {len(questions)} questions with "
             f"{label} ({args.backend})")
    r = generate(backend, questions, args.out, label=label, benchmark=args.benchmark or bench,
                 **settings, progress=not ctx.quiet, limit=args.limit, cluster=args.cluster)
    ctx.note(f"wrote {args.out}" if r["finished"] else
             f"stopped with {r['samples']} of {len(questions) * args.k} samples in "
             f"{args.out}.parts/: rerun the same command to continue")
    _emit([{"out": args.out, **r}], args.json)
    return 0


def _cmd_score_traces(args, ctx: _Context) -> int:
    import numpy as np
    import pandas as pd

    from leash_eval.generate.traces import score_traces

    backend, label = _backend(args)
    n = score_traces(backend, args.traces, args.out, label=label, prompt=_prompt(args),
                     progress=not ctx.quiet)
    ctx.note(f"wrote {n} scored traces to {args.out}")
    t = pd.read_parquet(args.out, columns=["benchmark", "question_id", "reference", "model",
                                           "n_tokens", "sum_logprob"])
    _emit(t.assign(ppl=np.exp(-t["sum_logprob"] / t["n_tokens"])), args.json)
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


def _check_k_fits(rows, ks) -> None:
    """Every budget of --k fits the smallest n of each model (and step) on each benchmark.

    ``rows`` has the columns model, benchmark, step and n (one row per question). The library
    would refuse the budget too, but naming its own function and keywords.
    """
    import numpy as np
    import pandas as pd

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


def _by_step(frame, table, by):
    """``table(frame, by)`` with one row group per checkpoint (a ``step`` column after ``by``);
    the rows of a final model (step NA) get their own call, because grouping by a column with
    missing values would drop them.
    """
    import pandas as pd


    steps = frame["step"].astype("Int64")
    if not steps.notna().any():
        return table(frame, by)
    parts = [table(frame[steps.notna()], [*by, "step"])]
    if steps.isna().any():
        parts.insert(0, table(frame[steps.isna()], by).assign(step=pd.NA))
    out = pd.concat(parts, ignore_index=True)
    out.insert(len(by), "step", out.pop("step").astype("Int64"))
    return out


def _cmd_passk(args, ctx: _Context) -> int:
    import pandas as pd

    from leash.analysis.tables import passk_table

    summary = _load_summary(args, ctx)
    _check_k_fits(summary, args.k)
    needed_by = f"--estimator {args.estimator}"
    if args.estimator == "first-k":
        missing = summary["first_correct"].isna().to_numpy()
        _require_first_correct(summary, missing,
                               sorted(pd.unique(summary.loc[missing, "model"].astype(str))),
                               needed_by, "use --estimator unbiased")
    table = _by_step(summary, lambda f, by: passk_table(f, args.k, estimator=args.estimator,
                                                        by=by), ["model", "benchmark"])
    if args.metric:
        table = _with_metrics(summary, table, args)
    _emit(table, args.json)
    return 0


def _with_metrics(summary, table, args):
    """The pass@k rows with the columns of ``--metric`` (per group, step and k)."""
    from leash.analysis.tables import passk_metrics_table

    extra = _by_step(summary, lambda f, by: passk_metrics_table(f, args.k, args.metric, by=by),
                     ["model", "benchmark"]).drop(columns="n_questions")
    keys = [c for c in ("model", "benchmark", "step", "k") if c in table.columns]
    out = table.merge(extra, on=keys, how="left")
    return out[[c for c in out.columns if c != "estimator"] + ["estimator"]]


# The CLI's bootstrap level: support_table's default, named here for the --n-boot warning.
_LEVEL = 0.95


def _check_support_options(args) -> None:
    """The options of ``leash support`` that need no data, checked before any file is read."""
    from leash.core.stats import MIN_N_BOOT
    from leash.limits import INT64_MAX

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


def _side_rows(summary, spec, paired):
    """The summary rows of one side (MODEL or (MODEL, STEP)) for the paired questions."""
    model, step = spec if isinstance(spec, tuple) else (spec, None)
    rows = summary[(summary["model"] == model).to_numpy(dtype=bool)]
    if step is not None:
        rows = rows[(rows["step"] == step).fillna(False).to_numpy(dtype=bool)]
    keys = paired[["benchmark", "question_id"]].astype(str).drop_duplicates()
    return rows.assign(benchmark=rows["benchmark"].astype(str),
                       question_id=rows["question_id"].astype(str)).merge(keys)


def _warn_about_the_bootstrap(args, paired) -> None:
    """The bootstrap's warnings in the CLI's words (one line each), instead of the library's
    (which name its function and n_boot): too few replicates, benchmarks of one question.
    """
    import pandas as pd

    from leash.core.stats import DegenerateBootstrapWarning, TooFewReplicatesWarning, min_n_boot

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
    import numpy as np

    from leash.analysis.pairing import pair_counts
    from leash.analysis.tables import support_table
    from leash.core.support import epsilon

    _check_support_options(args)
    summary = _load_summary(args, ctx)
    # Pair at the full sample counts; the budget --k is applied by support_table (first k
    # samples in generation order, from first_correct), which needs the per-question counts.
    base, rl = args.base, args.rl
    paired = pair_counts(summary, base=base, rl=rl, restrict_to_shared=args.restrict_to_shared)
    if isinstance(base, tuple) and base[0] == rl and "step" in paired.columns:
        itself = (paired["step"].astype("Int64") == base[1]).fillna(False).to_numpy()
        if itself.any() and not itself.all():  # the base checkpoint against itself says nothing
            paired = paired[~itself].reset_index(drop=True)
            ctx.note(f"left out step {base[1]} of --rl {rl}: it is the base checkpoint "
                     f"(--base {_ModelSpec.show(base)}) itself")
    most = args.k or int(max(paired["n_base"].max(), paired["n_rl"].max(), 0))
    if args.min_count > most:  # else every question is out of support, and says nothing
        raise ValueError(f"--min-count {args.min_count} exceeds every question's budget (at "
                         f"most {most} samples), so no question could be found.")
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
    table = _by_step(paired, lambda f, by: support_table(f, by=by, **kw), [])
    kk = table["k"].to_numpy(dtype=float, na_value=np.nan)
    eps = np.full(len(table), np.nan)
    ok = np.isfinite(kk)
    if ok.any():
        eps[ok] = epsilon(kk[ok].astype(np.int64), args.zeta)
    table.insert(table.columns.get_loc("k") + 1, "epsilon", eps)
    _emit(table, args.json)
    return 0


def _pair_of(args, ctx: _Context):
    """(summary, paired) of ``--base`` and ``--rl`` at their common budget, as ``leash support``
    pairs them (the base checkpoint left out of a trajectory of its own run).
    """
    from leash.analysis.pairing import pair_counts

    summary = _load_summary(args, ctx)
    base, rl = args.base, args.rl
    paired = pair_counts(summary, base=base, rl=rl, restrict_to_shared=args.restrict_to_shared)
    if isinstance(base, tuple) and base[0] == rl and "step" in paired.columns:
        itself = (paired["step"].astype("Int64") == base[1]).fillna(False).to_numpy()
        if itself.any() and not itself.all():
            paired = paired[~itself].reset_index(drop=True)
            ctx.note(f"left out step {base[1]} of --rl {rl}: it is the base checkpoint "
                     f"(--base {_ModelSpec.show(base)}) itself")
    return summary, paired


def _responses(args, ctx: _Context):
    """One response per model and question of the inputs that keep them, or None."""
    import pandas as pd

    from leash_eval.studies import sample_digest

    parts = []
    for path, kw in _inputs(args, ctx):
        digest = sample_digest(path, response_chars=args.response_chars, **kw)
        if digest is not None and digest["response"].notna().any():
            parts.append(digest)
    return pd.concat(parts, ignore_index=True) if parts else None


def _cmd_flips(args, ctx: _Context) -> int:
    from leash.analysis.flips import flips_summary, flips_table, with_answers
    from leash.writing import replacing

    if not 0 < args.fdr < 1:
        raise ValueError(f"--fdr must be a number in (0, 1). Got {args.fdr}.")
    if args.min_count < 1:
        raise ValueError(f"--min-count must be an int >= 1. Got {args.min_count}.")
    if args.out is not None and not args.out.lower().endswith(".csv"):
        raise ValueError(f"--out must end in .csv (the table is written as CSV). Got "
                         f"{args.out!r}.")
    summary, paired = _pair_of(args, ctx)
    by = ["step"] if paired["step"].notna().any() else []
    table = flips_table(paired, min_count=args.min_count, fdr=args.fdr, by=by)
    if not by:
        table = table.drop(columns="step", errors="ignore")
    responses = _responses(args, ctx) if args.response_chars else None
    base, rl = args.base, args.rl
    table = with_answers(table, summary, base[0] if isinstance(base, tuple) else base,
                         rl[0] if isinstance(rl, tuple) else rl,
                         base_step=base[1] if isinstance(base, tuple) else None,
                         responses=responses)
    if not (summary["answer_values"].map(lambda v: v is not None and len(v) > 0).any()
            if "answer_values" in summary else False):
        table = table.drop(columns=["base_answers", "rl_answers"])
    for _, row in flips_summary(table, by=by).iterrows():
        if row["benchmark"] != "All" and len(set(table["benchmark"])) > 1:
            continue
        at = "" if not by else f" at step {row['step']}"
        ctx.note(f"{row['N']} questions{at}: E = {row['E']} ({row['significant E']} "
                 f"significant), S = {row['S']} ({row['significant S']} significant), P = "
                 f"{row['P']} ({row['P up']} up, {row['P down']} down significantly) at a false "
                 f"discovery rate of {args.fdr:g}")
    if args.out:
        with replacing(args.out) as tmp:
            table.to_csv(tmp, index=False)
        ctx.note(f"wrote {len(table)} question rows to {args.out}")
    _emit(table, args.json)
    return 0


def _cmd_plan(args, ctx: _Context) -> int:
    import numpy as np

    from leash.analysis.planning import (
        budget_plan,
        default_plan_ks,
        detection_table,
        found_probability_table,
    )

    if not 0 < args.zeta < 1:
        raise ValueError(f"--zeta must be a number in (0, 1). Got {args.zeta}.")
    for name, value in (("--power", args.power), ("--alpha", args.alpha)):
        if not 0 < value < 1:
            raise ValueError(f"{name} must be a number in (0, 1). Got {value}.")
    if not 0 <= args.p_base <= 1:
        raise ValueError(f"--p-base must be a number in [0, 1]. Got {args.p_base}.")
    _, paired = _pair_of(args, ctx)
    ks = np.asarray(args.k if args.k else default_plan_ks(
        int(max(paired["n_base"].max(), paired["n_rl"].max()))), dtype=np.int64)
    by = ["step"] if paired["step"].notna().any() else []
    plan = budget_plan(paired, ks, zeta=args.zeta, by=by)
    ctx.note(f"pilot of {len(paired)} paired questions at n = "
             f"{int(paired['n_base'].max())} samples; budgets beyond it extrapolate its rates")
    # an expansion may need far more samples than the pilot's: its own grid unless --k is given
    detect_ks = ks if args.k else 2 ** np.arange(18)
    detect = detection_table(args.expansion, detect_ks, p_base=args.p_base, power=args.power,
                             alpha=args.alpha)
    found = found_probability_table(args.expansion, ks)
    if args.json:
        tables = {"budgets": plan, "found": found, "detection": detect}
        out = {}
        for name, table in tables.items():
            cols, rows = _rows(table)
            out[name] = [dict(zip(cols, r)) for r in rows]
        sys.stdout.write(json.dumps(out, indent=1, default=_json_value) + "\n")
        return 0
    _emit(plan, False)
    sys.stdout.write("\nprobability that a question with rate p is found within k samples:\n")
    _emit(found, False)
    sys.stdout.write(f"\nbudget at which an expansion is detected with power {args.power:g}:\n")
    _emit(detect, False)
    return 0


class _CliWords(Words):
    """The command line's words for the errors of :mod:`leash.errors` (and the core's, by their
    attributes): a parameter is the option of the running command that sets it, found through
    argparse's own ``dest`` and the keywords declared with the option (:func:`_add_options`),
    with a value as the option takes it (``--on-error skip``, ``--shared-only``, ``--base
    rl@100``, ``--model MODEL``); a function to run is the command that runs it (``leash
    validate FILE``); text about Python objects and the name of the function that raised are
    left out. A parameter without an option keeps the library's words.
    """

    # the library functions each command runs, for a message's remedy "run f(path)"
    RUNS = {"validate": ("leash_eval.validate.validate",),
            "passk": ("leash_eval.summarize.load_counts",),
            "support": ("leash_eval.summarize.load_counts",)}

    def __init__(self, options: dict | None = None):
        self.options = options or {}

    def option(self, keyword: str, func: str | None = None):
        """The argparse action that sets ``keyword`` (of ``func``), or None."""
        return self.options.get(f"{func}.{keyword}") or self.options.get(keyword)

    @staticmethod
    def flag(action) -> str:
        return max(action.option_strings, key=len)

    def param(self, ref: Param, *, func=None, start=False) -> str:
        actions = [self.option(n, ref.func or func) for n in ref.names]
        if None in actions:
            return super().param(ref, func=func, start=start)
        flags = [self.flag(a) for a in actions]
        if not ref.has_value:
            return " and ".join(flags)
        action, value = actions[0], ref.value
        if value is Ellipsis:
            return f"{flags[0]} {action.metavar or action.dest.upper()}"
        if action.nargs == 0:  # a switch: --shared-only
            return flags[0] if value == action.const else f"no {flags[0]}"
        if value is None:
            return f"no {flags[0]}"
        show = getattr(action.type, "show", str)
        return f"{flags[0]} {show(value)}"

    def call(self, ref: Call) -> str:
        commands = [c for c, funcs in self.RUNS.items() if ref.func in funcs]
        if not commands:
            return super().call(ref)
        return " and ".join(f"`{PROG} {c}{' FILE' if ref.args else ''}`" for c in commands)

    def api(self, text) -> str:
        return ""

    def prefix(self, func: str) -> str:
        return ""

    def invalid(self, exc) -> str:
        action = self.option(exc.param, exc.func)
        if action is None:
            return super().invalid(exc)
        got = "" if exc.got is None else f", got {exc.got}"
        return f"{self.flag(action)} must be {self.constraint(exc)}{got}."


def _one_line(text: str) -> str:
    """A message on one line: its lines joined, runs of white space collapsed."""
    return " ".join(str(text).split())


def main_simulate(argv=None):
    """``leash simulate``: regenerate (or check) the simulated demo files.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 1 when ``--check`` finds a difference, 2 for bad arguments,
        a bad ``--config`` or an unreadable/unwritable folder (one line on stderr, no traceback).
    """
    from leash.sources.demo import DEMO_FILES, DEMO_SEED

    parser = OneLineParser(
        prog="leash simulate",
        description="Write the SIMULATED demo data set (not the paper's data): "
                    f"{', '.join(DEMO_FILES)} as Parquet files in --out, drawn from an explicit "
                    "model of the RLVR update with known true probabilities (see data/demo/"
                    "README.md). With --check, write nothing: regenerate in memory and compare "
                    "with the files in --out (exit status 1 and one line per differing file).",
        epilog="examples:\n"
               "  leash simulate --check              # is data/demo/ what the code makes?\n"
               "  leash simulate                      # rewrite data/demo/\n"
               "  leash simulate --out my-demo --seed 7 --config my-config.yaml\n",
    )
    words = _CliWords(_add_options(parser, [
        ("--out", dict(default=None, help="output folder (default: data/demo/ of the "
                       "repository)")),
        ("--seed", dict(type=non_negative_int, default=DEMO_SEED, help="random seed, an integer "
                        ">= 0 (default: %(default)s, the committed demo's)")),
        ("--config", dict(default=None, help="configuration file (default: "
                          "data/demo/config.yaml, the committed demo's)")),
        ("--check", dict(action="store_true", help="regenerate in memory and compare with the "
                         "files in --out (floats within 1e-12, everything else exact)"))]))
    args = parser.parse_args(argv)
    import numpy as np

    from leash.analysis.compare import frame_differences
    from leash.sources import demo
    from leash_eval.demo import load_config, simulate_study, write_demo

    out = Path(args.out) if args.out is not None else demo.demo_dir()
    try:
        cfg = load_config(args.config)
        if args.check:
            if not out.is_dir():
                raise ValueError(f"--out {args.out}: no such folder")
            on_disk = demo.read_demo(out)
            fresh = simulate_study(cfg, rng=np.random.default_rng(args.seed))
            bad = {n: frame_differences(on_disk[n], fresh[n]) for n in DEMO_FILES}
            bad = {n: d for n, d in bad.items() if d}
            for n, diffs in bad.items():
                print(f"leash simulate --check: {n}.parquet differs from a fresh regeneration: "
                      f"{'; '.join(diffs)}", file=sys.stderr)
            if not bad:
                print(f"leash simulate --check: the {len(DEMO_FILES)} files in {out} equal a "
                      "fresh regeneration", file=sys.stderr)
            return 1 if bad else 0
        if out.exists() and not out.is_dir():
            raise ValueError(f"--out {args.out}: not a folder")
        paths = write_demo(out, args.seed, config=cfg)
    except (ValueError, OSError) as exc:  # one line, as every command's errors
        print(f"leash simulate: error: {_one_line(words.error(exc))}", file=sys.stderr)
        return 2
    for p in paths.values():
        print(f"{p} ({p.stat().st_size} bytes) [SIMULATED]", file=sys.stderr)
    return 0


def main_study(argv=None, *, quiet: bool = False) -> int:
    """``leash study init FILES...`` and ``leash study check STUDY``: a study file written from
    generation files (:mod:`leash_eval.study_init`), and checked against its data
    (:mod:`leash_eval.run.study_check`) in seconds, before any notebook.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after ``leash study`` (default ``sys.argv[1:]``).
    quiet : bool, default False
        No progress notes (``leash -q study ...``, as ``-q`` after the action).

    Returns
    -------
    int
        Exit status: 0 ok, 2 a problem (one line each on stderr) or bad arguments, 130 or 143
        stopped by Ctrl-C or SIGTERM (one line, from :func:`main`).
    """
    import time

    parser = OneLineParser(
        prog="leash study", description="Write a study file from your generation files, and "
        "check a study file against its data before `make reproduce DATA=...` runs its "
        "notebooks.", epilog="examples:\n"
        "  leash study init base.jsonl rl.jsonl --out my-study.yaml\n"
        "  leash study init counts.csv --base my-base --rl my-rlvr --out my-study.yaml\n"
        "  leash study check my-study.yaml\n"
        "  make reproduce DATA=my-study.yaml\n")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                title="actions")
    init = sub.add_parser("init", help="write a study file from generation files",
                          description="Read FILES (streaming, as `leash summarize`), find their "
                          "models, benchmarks, steps and samples per question, and write a "
                          "study file: each benchmark's budget the largest n both sides have, "
                          "the pairs given (or proposed when the model names leave no doubt), "
                          "a title from the models and benchmarks, every key commented. "
                          "Written whole or not at all; the summaries read are cached for "
                          "`leash study check` and the notebooks.",
                          epilog="examples:\n  leash study init base.jsonl rl.jsonl --out "
                          "my-study.yaml\n  leash study init gsm8k-probe-sft "
                          "gsm8k-probe-rl-final --base sft --rl rl\n  leash study init "
                          "--label base=base.json --label rl=rl.json --label rl=checkpoints/ "
                          "--benchmark gsm8k --out my-study.yaml\n")
    init_words = _CliWords(_add_options(init, [
        ("files", {**_GENERATIONS[1], "nargs": "*", "help": _GENERATIONS[1]["help"]
                   + "; a folder stands for its files"}),
        ("--label", dict(action="append", default=[], metavar="FILE=MODEL", help="the model "
                         "of files that do not name it: FILE=MODEL, or MODEL=FILES for a "
                         "folder or glob of one model's files (several files without a step "
                         "are its checkpoints, each step the number in which their names "
                         "differ); MODEL@STEP gives the step; repeatable (default: files that "
                         "name no model are labelled by their file names)")),
        ("--base", dict(metavar="MODEL", help="model label of the base model (with --rl; "
                        "default: proposed from the model names)")),
        ("--rl", dict(metavar="MODEL", help="model label of the RLVR model (with --base; "
                      "default: proposed from the model names)")),
        ("--out", dict(help="the study file to write (default: print it to stdout)")),
        ("--force", dict(action="store_true", help="replace --out if it exists (default: "
                         "refuse)")),
        ("reader options (written on every source)", [
            o for o in _READER[1] if isinstance(o, tuple) and o[0] in (
                "--fmt", "--model", "--benchmark", "--step", "--mapping")])]))
    init.add_argument("-q", "--quiet", action="store_true", help="no progress notes on stderr")
    check = sub.add_parser("check", help="check a study file against its data",
                           description="Every check of STUDY against its data that needs no "
                           "notebook: benchmark and model labels (with 'did you mean'), budgets "
                           "against the samples per question of each pair, declared N against "
                           "the questions found, sources present, and the sections the "
                           "notebooks will skip and why. One line per problem, exit status 2. "
                           "The summaries read are cached (build/<name>/.summaries/) for the "
                           "notebooks.", epilog="examples:\n  leash study check my-study.yaml\n"
                           "  leash study check gsm8k-probe\n")
    check.add_argument("study", metavar="STUDY", help="a study file, or the name of a shipped "
                       "study of data/studies/")
    check.add_argument("-q", "--quiet", action="store_true", help="no closing note on stderr "
                       "(problems and skipped sections are still shown)")
    args = parser.parse_args(argv)
    args.quiet = args.quiet or quiet
    prog = f"{PROG} study {args.action}"
    try:
        if args.action == "init":
            return _study_init(args, prog, init_words)
        from leash_eval.run.study_check import check_study

        t0 = time.perf_counter()
        result = check_study(args.study)
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if (stop := signalled()) is not None:  # an error a stop signal caused
            raise stop from None
        words = init_words if args.action == "init" else _CliWords()
        print(f"{prog}: error: {_one_line(words.error(exc))}", file=sys.stderr)
        return EXIT_INPUT
    for e in result.problems:
        print(f"{prog}: error: {_one_line(e)}", file=sys.stderr)
    for what, why in result.skipped:
        print(f"{prog}: {what} will be skipped: {why}", file=sys.stderr)
    read = ", ".join(f"{name} ({rows} question rows)" for name, rows in result.read)
    if args.quiet:
        return EXIT_INPUT if result.problems else 0
    print(f"{prog}: {result.study.source or args.study}: "
          + (f"{len(result.problems)} problem(s)" if result.problems else "ok")
          + (f"; read {read}" if read else "") + f" in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr)
    return EXIT_INPUT if result.problems else 0


def _study_init(args, prog: str, words) -> int:
    from leash_eval.study_init import draft_study, write_study

    reader = {k: getattr(args, k) for k in ("fmt", "model", "benchmark", "step", "mapping")}
    if args.out is not None and Path(args.out).exists() and not args.force:
        raise ValueError(f"--out {args.out} exists; it is left as it is (pass --force to "
                         "replace it).")
    draft = draft_study(args.files, labels=args.label, base=args.base, rl=args.rl,
                        out=args.out, reader=reader,
                        progress=None if args.quiet else
                        lambda m: print(f"{prog}: {m}", file=sys.stderr, flush=True))
    _refuse_what_check_refuses(draft, args.out)
    for note in draft.notes:
        print(f"{prog}: {note}", file=sys.stderr)
    if args.out is None:
        sys.stdout.write(draft.text)
        return 0
    write_study(draft, args.out, force=args.force)
    print(f"{prog}: wrote {args.out} (study {draft.name!r}); next: leash study check "
          f"{args.out}, then make reproduce DATA={args.out}", file=sys.stderr)
    return 0


def _refuse_what_check_refuses(draft, out) -> None:
    """A draft whose name or title `leash study check` would refuse (``--out paper.yaml``
    names the study after the paper's printed numbers): one line naming --out, nothing
    written.
    """
    from leash.config import load_yaml_text
    from leash.sources.study import Study
    from leash_eval.run.study_check import name_problems

    target = Path(os.path.abspath(out if out is not None else "study.yaml"))
    raw, lines = load_yaml_text(draft.text, "the drafted study", "study file")
    for problem in name_problems(Study(raw, target, lines=lines)):
        why = str(problem).split(f"`{problem.key}`: ", 1)[-1]
        raise LeashValueError(Param("out"), f" {out}: the study's {problem.key} would be "
                              f"{problem.value!r}, which `leash study check` refuses: {why}",
                              param="out", value=out, key=problem.key)


def _run_reproduce(argv) -> int:
    from leash_eval.run.reproduce import main as reproduce_main

    return reproduce_main(argv)


_COMMANDS = {"validate": _cmd_validate, "summarize": _cmd_summarize, "fetch": _cmd_fetch,
             "rescore": _cmd_rescore, "generate": _cmd_generate,
             "score-traces": _cmd_score_traces, "passk": _cmd_passk, "support": _cmd_support,
             "flips": _cmd_flips, "plan": _cmd_plan}
# Commands with their own argument parser, called with the rest of the command line (argparse
# cannot pass leading --options through a subparser).
_PASSTHROUGH = {"simulate": main_simulate, "reproduce": _run_reproduce, "study": main_study}


class _OneLineWarnings(warnings.catch_warnings):
    """Within it, each warning is one line on stderr, ``leash CMD: warning: MESSAGE``.

    Python's own display is two lines naming the warning's class and the library's source line,
    which mean nothing to a user of the command line; the message is kept whole (its lines
    joined), in the CLI's words (a warning of :mod:`leash.errors` names options, see
    :class:`_CliWords`), and never silenced: ``--quiet`` silences progress notes only.
    """

    def __init__(self, command: str, words: Words | None = None):
        super().__init__()
        self._command, self._words = command, words or _CliWords()

    def __enter__(self):
        out = super().__enter__()
        warnings.showwarning = self._show
        return out

    def _show(self, message, category, filename, lineno, file=None, line=None):
        text = _one_line(self._words.error(message) if isinstance(message, Warning)
                         else message) or category.__name__
        print(f"{PROG} {self._command}: warning: {text}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the ``leash`` command; returns the exit status (0 ok, 1 invalid input file, 2 error).

    Parameters
    ----------
    argv : list of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    signalled(clear=True)
    first = 0  # the global -q/--quiet may come before a command with its own parser too
    while first < len(argv) and argv[first] in ("-q", "--quiet"):
        first += 1
    if first < len(argv) and argv[first] in _PASSTHROUGH:
        return _passthrough(argv[first], argv[first + 1:], quiet=first > 0)
    parser = build_parser()
    args = parser.parse_args(argv)
    ctx = _Context(args.quiet)
    try:
        with _OneLineWarnings(args.command, args._words):
            return _COMMANDS[args.command](args, ctx)
    except Exception as exc:
        if (stop := signalled()) is not None:  # an error a stop signal caused (DuckDB's)
            return _stopped(args.command, stop)
        if isinstance(exc, ValueError | TypeError | OSError | ImportError | Warning):
            # Warning: a warning turned into an error (python -W error)
            msg = _one_line(args._words.error(exc)) or type(exc).__name__
            print(f"{PROG} {args.command}: error: {msg}", file=sys.stderr)
            return EXIT_INPUT
        if isinstance(exc, MemoryError):
            # e.g. --n-boot beyond memory: numpy's message names array shapes, not options
            n_boot = getattr(args, "n_boot", 0)
            hint = f" for --n-boot {n_boot} bootstrap replicates; use fewer" if n_boot else ""
            print(f"{PROG} {args.command}: error: not enough memory{hint}.", file=sys.stderr)
            return EXIT_INPUT
        raise
    except KeyboardInterrupt as exc:
        return _stopped(args.command, exc)


def _stopped(command: str, exc: KeyboardInterrupt) -> int:
    """The line and status of a command stopped by SIGTERM (143: handled as Ctrl-C is, see
    :func:`console`) or Ctrl-C (130).
    """
    if isinstance(exc, Terminated):
        print(f"{PROG} {command}: terminated", file=sys.stderr)
        return 143
    print(f"{PROG} {command}: interrupted", file=sys.stderr)
    return 130


def _passthrough(command: str, argv: list, quiet: bool) -> int:
    """Run a command with its own parser (``study``, ``reproduce``, ``simulate``) as the others
    run: warnings one line each, Ctrl-C and SIGTERM one line and status 130 or 143.
    """
    try:
        with _OneLineWarnings(command):
            if quiet:
                if command != "study":
                    print(f"{PROG} {command}: error: -q/--quiet: {PROG} {command} has no quiet "
                          "mode (its lines are its report); leave it out.", file=sys.stderr)
                    return EXIT_INPUT
                return main_study(argv, quiet=True)
            return _PASSTHROUGH[command](argv)
    except KeyboardInterrupt as exc:
        return _stopped(command, exc)
    except Exception:
        if (stop := signalled()) is not None:  # an error a stop signal caused (DuckDB's)
            return _stopped(command, stop)
        raise


def console() -> None:
    """The ``leash`` executable: :func:`main`, then exit with its status.

    SIGINT stops a command also when the process was started with SIGINT ignored (as a shell
    starts a background job) and is sent it alone; SIGTERM stops it the same way, with its own
    line and status 143. After either the process ends at once, once its streams are flushed:
    the command has already removed its partial output and printed its line.
    """
    import signal

    signal.signal(signal.SIGINT, raise_interrupted)
    signal.signal(signal.SIGTERM, raise_terminated)
    code = exit_status(main)
    if code in (130, 143):
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console()
