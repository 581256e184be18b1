"""The command line a user learns from ``--help``: help texts, ``--version``, error messages
that name options (not the library's keywords), one-line warnings, and command examples in the
READMEs and help texts that name real manifest datasets.

Run in-process through leash_eval.cli.main, except where the real process matters (exit status of
``--version``, what a warning looks like in a terminal).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import warnings
from importlib.metadata import version

import numpy as np
import pytest
import yaml

from _support import HAVE_MV, MIRROR, REPO, needs_mirror
from leash_eval import cli
from leash_eval.cli import build_parser, main

COMMANDS = ("validate", "summarize", "fetch", "rescore", "generate", "score-traces", "passk",
            "support", "flips", "plan")
PASSTHROUGH = ("simulate", "reproduce", "study")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _help_of(capsys, run, argv) -> str:
    """stdout of ``--help`` (argparse exits 0 after printing it)."""
    with pytest.raises(SystemExit) as info:
        run(argv)
    assert info.value.code == 0
    return capsys.readouterr().out


def _examples(text: str) -> list[str]:
    """The example command lines of a help text (lines that start with ``leash `` or
    ``python -m leash``), without their comments."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("leash ", "python -m leash")):
            out.append(line.split("  #")[0].strip())
    return out


# ----------------------------------------------------------------------------- help texts


def test_top_level_help_lists_every_command_and_a_typical_session(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps at the terminal's width
    text = _help_of(capsys, main, ["--help"])
    listing = text.split("commands:")[1].split("\n\n")[0].splitlines()[2:]
    # one line each: the name, then its summary on the same line, no continuation line
    assert [line.split()[0] for line in listing] == [*COMMANDS, *PASSTHROUGH]
    assert all(len(line.split()) > 2 for line in listing)
    session = [line.split()[1] for line in _examples(text)]
    # fetch -> validate -> summarize -> support and passk, in that order
    order = [session.index(c) for c in ("fetch", "validate", "summarize")]
    assert order == sorted(order)
    assert min(session.index("support"), session.index("passk")) > order[-1]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_a_description_examples_and_documented_options(capsys, name):
    sub = _subparsers(build_parser())[name]
    assert sub.description and len(sub.description.split()) >= 20
    text = _help_of(capsys, main, [name, "--help"])
    assert sub.description.split()[0] in text
    assert "examples:" in text
    assert any(line.startswith(f"leash {name}") for line in _examples(text))
    formatter = sub._get_formatter()
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{name}: {action.dest} has no help"
        if not action.option_strings:
            continue  # positional: FILE / NAME, described in its help
        if action.nargs == 0 and action.const is True:
            continue  # a switch (--json, --shared-only): off unless given
        shown = formatter._get_help_string(action) % {"default": action.default}
        assert action.required or "default" in shown, f"{name} {action.option_strings}: {shown}"


def test_defaults_shown_are_the_parsers_own(capsys):
    """The formatter appends argparse's real default, not a copy of it in the help text."""
    text = " ".join(_help_of(capsys, main, ["support", "--help"]).split())
    assert "(default: 0.05)" in text  # --zeta
    assert "(default: 1000)" in text  # --n-boot
    assert "(default: 0)" in text  # --seed: a default of 0 is still a default
    assert "(default: None)" not in text and "(default: False)" not in text


@pytest.mark.parametrize("name", PASSTHROUGH)
def test_runners_have_their_own_help_with_examples(capsys, name):
    if name == "simulate":
        from leash_eval.cli import main_simulate as run
    elif name == "study":
        from leash_eval.cli import main_study as run
    else:
        from leash_eval.run.reproduce import main as run
    text = _help_of(capsys, run, ["--help"])
    assert "examples:" in text and any(x.startswith(f"leash {name}") for x in _examples(text))
    # the same text through the leash command
    assert _help_of(capsys, main, [name, "--help"]) == text
    for line in text.split("options:")[1].split("examples:")[0].split("\n  -")[1:]:
        flag = line.split()[0]
        if flag not in ("h,", "-check", "-list"):  # -h and the switches
            assert "default" in line, line


# ----------------------------------------------------------------------------- --version


def test_version_prints_the_installed_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"leash {version('leash')}\n"


def test_version_of_the_real_process():
    run = subprocess.run([sys.executable, "-m", "leash_eval.cli", "--version"], capture_output=True,
                         text=True, timeout=120)
    assert (run.returncode, run.stdout, run.stderr) == (0, f"leash {version('leash')}\n", "")


# ----------------------------------------------------------------------------- option names

# What a Python keyword looks like in a message: "The 'x' parameter", "x=...", "on_error".
_PY_KEYWORD = re.compile(r"parameter|\b[a-z][a-z0-9_]*=|\b[a-z]+_[a-z_]+=|\bon_error\b|"
                         r"restrict_to_shared|NestedMapping|\(model, step\)|\.validate\(")


def _one_line(capsys, argv) -> tuple[int, str]:
    try:
        code = main(["-q", *argv])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return code, lines[0]


@pytest.fixture
def files(tmp_path):
    def write(name, rows):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(tmp_path / name)

    rows = [{"model": m, "benchmark": "toy", "question_id": q, "sample_idx": i,
             "correct": i < 2, "response": "\\boxed{1}", "gold": "1"}
            for m in ("base", "rl") for q in ("q0", "q1") for i in range(4)]
    return {
        "good": write("good.jsonl", rows),
        "bad": write("bad.jsonl", rows[:3] + [{**rows[3], "correct": "maybe"}]),
        "odd": write("odd.jsonl", [{"foo": 1, "bar": 2}]),
        "unshared": write("unshared.jsonl", rows + [
            {"model": "base", "benchmark": "toy", "question_id": "q9", "sample_idx": i,
             "correct": True} for i in range(4)]),
        "steps": write("steps.jsonl", [r for r in rows if r["model"] == "base"] + [
            {**r, "step": s} for s in (1, 2) for r in rows if r["model"] == "rl"]),
        "counts": write("counts.jsonl", [
            {"model": "base", "benchmark": "toy", "question_id": "q0", "n": 4, "c": 2},
            {"model": "rl", "benchmark": "toy", "question_id": "q0", "n": 8, "c": 3}]),
        "entries": write("entries.jsonl", [{"question_id": q, "answer": "1"}
                                           for q in ("q0", "q1")]),
    }


# (arguments, what the one-line message must name: the option, and the value or the remedy
# where there is one, exit status); every command. The library raised each with its structure
# (leash.errors): the parameter 'mapping', the hint Param("on_error", value="skip"),
# Param("restrict_to_shared", value=True), Param("base", value=("rl", 1)), load_benchmark's
# 'name' (declared with --gold).
BAD_INPUTS = [
    (["validate", "{odd}"], ("--fmt", "--mapping"), 2),
    (["validate", "{good}", "--fmt", "nested"], ("--fmt nested", "--mapping"), 2),
    (["validate", "{good}", "--step", "-1"], ("--step", "-1"), 2),
    (["summarize", "{good}", "--mapping", "no-such-mapping"], ("--mapping", "'no-such-mapping'"),
     2),
    (["summarize", "{bad}"], ("bad.jsonl: line 4", "'correct'", "'maybe'", "--on-error skip",
                              "`leash validate FILE`"), 2),
    (["passk", "{bad}", "--k", "1"], ("--on-error skip",), 2),
    (["passk", "{counts}", "--estimator", "first-k"], ("--estimator unbiased",), 2),
    (["passk", "{good}", "--k", "100"], ("--k 100",), 2),
    (["support", "{unshared}", "--base", "base", "--rl", "rl"], ("--shared-only", "toy/q9"), 2),
    (["support", "{good}", "--base", "nobody", "--rl", "rl"], ("--base", "'nobody'"), 2),
    (["support", "{good}", "--base", "base", "--rl", "base"], ("--base and --rl", "'base'"), 2),
    (["support", "{steps}", "--base", "rl", "--rl", "base"], ("--base rl@1",), 2),
    (["support", "{good}", "--base", "base", "--rl", "rl", "--n-boot", "1"], ("--n-boot",), 2),
    (["support", "{good}", "--base", "base", "--rl", "rl@last"], ("--rl", "'rl@last'"), 2),
    (["flips", "{unshared}", "--base", "base", "--rl", "rl"], ("--shared-only", "toy/q9"), 2),
    (["flips", "{good}", "--base", "base", "--rl", "rl", "--fdr", "2"], ("--fdr", "2"), 2),
    (["plan", "{good}", "--base", "base", "--rl", "rl", "--power", "1"], ("--power",), 2),
    (["plan", "{unshared}", "--base", "base", "--rl", "rl"], ("--shared-only", "toy/q9"), 2),
    (["summarize", "{good}", "--out", "summary.csv"], ("--out", ".parquet"), 2),
    (["rescore", "{good}", "--gold", "no-such-benchmark"], ("--gold", "'no-such-benchmark'",
                                                            "math500"), 2),
    (["rescore", "{good}", "--task", "basic_arithmetic"], ("--task", "--scorer reasoning-gym"),
     2),
    (["rescore", "{good}", "--scorer", "reasoning-gym", "--gold", "{entries}"], ("--task",), 2),
    (["fetch", "no-such-dataset"], ("'no-such-dataset'",), 2),  # no option to name
    (["generate", "smollm2", "{good}", "--out", "s.jsonl"], ("--out",), 2),
    (["generate", "smollm2", "{good}", "--out", "s.parquet", "--top-p", "0"], ("--top-p", "0"),
     2),
    (["generate", "smollm2", "{good}", "--out", "s.parquet", "--prompt", "Q"], ("--prompt",
                                                                                 "{question}"), 2),
    (["score-traces", "no-such.gguf", "{good}", "--out", "t.parquet"], ("'no-such.gguf'",), 2),
]


@pytest.mark.parametrize("argv, parts, status", BAD_INPUTS,
                         ids=[" ".join(a[:1] + [p[0]]) for a, p, _ in BAD_INPUTS])
def test_errors_name_the_option_not_the_keyword(capsys, files, argv, parts, status):
    if argv[0] in ("support", "flips", "plan"):
        pytest.importorskip("leash.analysis.pairing")
    if argv[0] == "rescore" and "--gold" not in argv[-2:] and not HAVE_MV:
        pytest.skip("math-verify not installed")
    code, line = _one_line(capsys, [a.format(**files) for a in argv])
    assert code == status
    assert line.startswith(f"leash {argv[0]}: error: ")
    for part in parts:
        assert part in line, (part, line)
    assert not _PY_KEYWORD.search(line), line


@pytest.mark.slow
def test_validate_reports_problems_in_the_options_words(capsys, files):
    code = main(["-q", "validate", files["good"], files["odd"], "--json"])
    [_, odd] = json.loads(capsys.readouterr().out)
    assert code == 2
    # the report of the file whose format is not detected, as the error line: both options,
    # the formats to choose from, the keys found
    [problem] = odd["problems"]
    assert problem["reason"] == "undetected_format"
    for part in ("--fmt FMT (one of", "'lm-eval'", "--mapping MAPPING", "['bar', 'foo']"):
        assert part in problem["message"], part
    code = main(["-q", "validate", files["odd"]])
    out = capsys.readouterr().out
    assert code == 2 and "--fmt FMT" in out and "--mapping MAPPING" in out
    assert not _PY_KEYWORD.search(out), out


def test_every_command_is_driven_by_a_bad_input():
    assert {argv[0] for argv, _, _ in BAD_INPUTS} == set(COMMANDS)


def test_unshared_questions_dropped_is_a_warning_in_the_options_words(capsys, files):
    pytest.importorskip("leash.analysis.pairing")
    code = main(["-q", "support", files["unshared"], "--base", "base", "--rl", "rl",
                 "--shared-only", "--n-boot", "0"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 0
    # was "leash support: warning: pair_counts: dropping unshared questions; ..."
    assert lines == ["leash support: warning: Dropping unshared questions; present for base "
                     "'base' only: 1 questions (toy/q9)"]


def _words(command):
    return _subparsers(build_parser())[command].get_default("_words")


def test_structured_errors_in_the_options_words():
    """Each layer words an error from its structure: the same error names the keyword in the
    library and the option of the running command on the command line (its argparse dest, or a
    keyword declared with it), with the value as the option takes it; a parameter without an
    option keeps the library's words, and nobody rewrites plain text."""
    from leash.core import pass_at_k_curve
    from leash.errors import Api, Call, LeashImportError, LeashValueError, Param
    from leash_eval.validate import SKIP_OR_VALIDATE

    with pytest.raises(ValueError) as info:
        pass_at_k_curve([4], [1], [1, 100])
    cases = [  # (command, error, the library's words, the command line's)
        ("summarize", LeashValueError(param="on_error", value="x", constraint="one of ('raise', "
                                      "'skip')"),
         "The 'on_error' parameter must be one of ('raise', 'skip'). Got 'x' instead.",
         "--on-error must be one of ('raise', 'skip'), got 'x'."),
        ("summarize", LeashValueError("a.jsonl: line 3: bad.", hint=SKIP_OR_VALIDATE),
         "Pass on_error='skip' to reject bad rows and count them in the provenance, or run "
         "leash_eval.validate.validate(path)",
         "Pass --on-error skip to reject bad rows and count them, or run `leash validate FILE`"),
        ("support", LeashValueError("questions are not shared; b.", func="pair_counts",
                                    hint=("Pass ", Param("restrict_to_shared", value=True), ".")),
         "pair_counts: questions are not shared; b. Pass restrict_to_shared=True.",
         "Questions are not shared; b. Pass --shared-only."),
        ("support", LeashValueError("called with ", Param("restrict_to_shared", value=False)),
         "called with restrict_to_shared=False", "called with no --shared-only"),
        ("support", LeashValueError("select ", Param("base", value=("rl", 100))),
         "select base=('rl', 100)", "select --base rl@100"),
        ("passk", info.value, "The 'ks' parameter of pass_at_k_curve", "--k must be a grid of "),
        ("passk", LeashValueError("group {}: ", info.value, func="passk_table"),
         "passk_table: group {}: The 'ks' parameter", "Group {}: --k must be"),
        ("rescore", LeashValueError(param="name", func="load_benchmark", value="x",
                                    constraint="one of ['aime24']"),
         "The 'name' parameter of load_benchmark must be", "--gold must be one of ['aime24'], "
         "got 'x'."),
        ("passk", LeashValueError(Param("estimator", value="first-k"), " needs it;", hint=(
            "pass ", Param("estimator", value="unbiased"), " instead.")),
         "estimator='first-k' needs it; pass estimator='unbiased' instead.",
         "--estimator first-k needs it; pass --estimator unbiased instead."),
        ("rescore", LeashImportError(Param("scorer", value="math-verify"), " needs math-verify."),
         "scorer='math-verify' needs", "--scorer math-verify needs"),
        ("summarize", LeashValueError("no model:", hint=("pass ", Param("model", value=...), ".")),
         "pass model=....", "pass --model MODEL."),
        ("summarize", LeashValueError("x", Api(" or a NestedMapping"), hint=(
            "use ", Call("leash_eval.summarize.load_counts"), "."),),
         "x or a NestedMapping use leash_eval.summarize.load_counts().",
         "x use `leash passk` and `leash support`."),
        # no option: the library's words
        ("validate", LeashValueError(Param("paths"), " must name at least one file."),
         "The 'paths' parameter must name", "The 'paths' parameter must name"),
        ("passk", LeashValueError(param="budget_rule", value="x", constraint="one of ('a',)"),
         "The 'budget_rule' parameter", "The 'budget_rule' parameter"),
        # plain text is nobody's to rewrite
        ("summarize", ValueError("a.jsonl: line 2: field 'model' (got 'fmt=x'); b.fmt=1"),
         "(got 'fmt=x'); b.fmt=1", "(got 'fmt=x'); b.fmt=1"),
    ]
    for command, exc, library, command_line in cases:
        assert library in str(exc), (library, str(exc))
        assert command_line in _words(command).error(exc), (command_line,
                                                            _words(command).error(exc))


def test_a_structured_error_keeps_its_parts():
    """What a caller acts on, as attributes: the parameter, the function, the bad value, where,
    and the remedy naming a parameter with a value."""
    import pickle

    from leash.core import pass_at_k
    from leash.errors import LeashValueError, Param
    from leash_eval.validate import SKIP_OR_VALIDATE

    with pytest.raises(ValueError) as info:
        pass_at_k(4, 1, 0)
    e = info.value
    assert (e.param, e.func, e.value, e.got) == ("k", "pass_at_k", 0, "0")
    e = LeashValueError("a.jsonl: line 3: field 'correct': bad.", file="a.jsonl", line="line 3",
                        key="correct", value="'maybe'", hint=SKIP_OR_VALIDATE)
    assert Param("on_error", value="skip") in e.hint
    assert isinstance(e, ValueError) and (e.file, e.line, e.key) == ("a.jsonl", "line 3", "correct")
    again = pickle.loads(pickle.dumps(e))  # the rescoring workers' errors cross processes
    assert str(again) == str(e) and again.hint == e.hint and again.key == "correct"


def test_keywords_declared_with_an_option_are_the_library_s():
    """A keyword whose name is not its option's dest (--shared-only sets restrict_to_shared,
    --gold load_benchmark's name) is declared with the option; each names a real parameter."""
    import importlib
    import inspect

    modules = [importlib.import_module(m) for m in (
        "leash.analysis.pairing", "leash.analysis.tables", "leash.analysis.planning",
        "leash_eval.rescore",
        "leash_eval.summarize", "leash_eval.generate.sampling")]
    params = {}
    for mod in modules:
        for name, f in vars(mod).items():
            if inspect.isfunction(f):
                params.setdefault(name, set()).update(inspect.signature(f).parameters)
    aliases = {(kw, a.dest) for c in COMMANDS for kw, a in _words(c).options.items()
               if kw != a.dest}
    assert ("load_benchmark.name", "gold") in aliases and ("ks", "k") in aliases
    assert _words("support").option("restrict_to_shared").option_strings == ["--shared-only"]
    for kw, _ in aliases:
        func, _, name = kw.rpartition(".")
        assert name in (params[func] if func else set().union(*params.values())), kw


# ----------------------------------------------------------------------------- warnings


def _warns(args, ctx):
    from leash.errors import LeashWarning, Param

    warnings.warn("first line\n  second line", stacklevel=2)
    np.mean([])  # numpy's RuntimeWarnings "Mean of empty slice", "invalid value ..."
    warnings.warn(LeashWarning("some rows were odd;", func="summary_table", hint=(
        "pass ", Param("fmt", value="nested"), " next time")), stacklevel=1)
    return 0


EXPECTED_WARNINGS = [
    "leash validate: warning: first line second line",
    "leash validate: warning: Mean of empty slice",
    "leash validate: warning: invalid value encountered in ",  # numpy's words vary: a prefix
    "leash validate: warning: Some rows were odd; pass --fmt nested next time",
]


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_warnings_are_one_line_each_and_never_silenced(capsys, monkeypatch, quiet):
    monkeypatch.setitem(cli._COMMANDS, "validate", _warns)
    assert main([*quiet, "validate", "x"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == len(EXPECTED_WARNINGS)
    for line, expected in zip(lines, EXPECTED_WARNINGS, strict=True):
        assert line.startswith(expected) and (line == expected or expected.endswith(" "))
        assert ".py" not in line and "Warning" not in line


def test_runner_warnings_are_one_line_too(capsys, monkeypatch):
    monkeypatch.setitem(cli._PASSTHROUGH, "simulate",
                        lambda argv: warnings.warn("demo: " + " ".join(argv), stacklevel=2) or 0)
    assert main(["simulate", "--check"]) == 0
    assert capsys.readouterr().err.splitlines() == ["leash simulate: warning: demo: --check"]


def test_warnings_in_a_terminal_have_no_source_line(tmp_path):
    """A real process, as in a terminal: Python's own display would add the warning's class,
    the library's file and line number, and the source line on a second line."""
    rows = [{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": i,
             "correct": ["true", "maybe"][i]} for i in range(2)]
    f = tmp_path / "bad.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = subprocess.run([sys.executable, "-m", "leash_eval.cli", "-q", "summarize", str(f),
                          "--on-error", "skip"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0
    assert run.stderr.splitlines() == [
        f"leash summarize: warning: {f}: 1 of 2 rows rejected ({{'invalid_bool': 1}}); "
        "`leash validate FILE` lists them."]


def test_a_warning_made_an_error_is_one_line(capsys, monkeypatch):
    """``python -W error``: the warning is raised, and reported as an error line."""
    monkeypatch.setitem(cli._COMMANDS, "validate", _warns)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code, line = _one_line(capsys, ["validate", "x"])
    assert (code, line) == (2, "leash validate: error: first line second line")


# ----------------------------------------------------------------------------- README names


def _manifest():
    raw = yaml.safe_load((REPO / "data" / "manifest.yaml").read_text(encoding="utf-8"))
    return set(raw["datasets"]), set(raw["groups"]), {
        d["benchmark"] for d in raw["datasets"].values() if d.get("format") == "benchmark"}


def _markdown_commands(text: str) -> list[str]:
    """``leash ...`` and ``make ...`` commands of a Markdown text: the lines of its code blocks
    and its inline code spans (which may wrap over lines)."""
    found, prose, block = [], [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            block = not block
        elif block:
            found.append(line.split("  #")[0].strip())
        else:
            prose.append(line)
    found += [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", "\n".join(prose))]
    return [c for c in found if c.startswith(("leash ", "make "))]


def _placeholder(word: str) -> bool:
    return word.isupper() or word.startswith("<") or "..." in word


def _check_command(command: str, where: str) -> list[str]:  # noqa: C901 - one check per kind of name
    """What is wrong with one documented command: options the parser refuses, names that are
    not datasets, groups or benchmarks of data/manifest.yaml, studies that do not exist."""
    datasets, groups, benchmarks = _manifest()
    studies = {p.stem for p in (REPO / "data" / "studies").glob("*.yaml")}
    words = shlex.split(command)
    problems = []

    def study(value):
        if not (_placeholder(value) or value == "embedded" or value.endswith((".yaml", ".yml"))
                or value in studies):
            problems.append(f"{where}: `{command}`: no study {value!r} in data/studies/")

    if words[0] == "make":
        for w in words[1:]:
            if w.startswith("DATA="):
                study(w.split("=", 1)[1])
        return problems
    if words[:3] == ["python", "-m", "leash_eval.run.reproduce"]:
        words = ["leash", "reproduce", *words[3:]]
    if words[1] in ("--help", "-h", "--version", "-V") or words[1].endswith(":"):
        return problems  # `leash --help`; `leash support: warning: ...` is an output line
    if len(words) == 2 or "--help" in words:  # a mention of the command: `leash passk`
        if words[1] not in (*COMMANDS, *PASSTHROUGH) and not _placeholder(words[1]):
            problems.append(f"{where}: `{command}`: no command {words[1]!r}")
        return problems
    if words[1] in PASSTHROUGH:
        if "--data" in words:
            study(words[words.index("--data") + 1])
        return problems
    try:
        args = build_parser().parse_args(words[1:])
    except SystemExit:
        return [f"{where}: `{command}`: refused by the parser"]
    for name in getattr(args, "files", None) or getattr(args, "names", None) or []:
        path_like = "." in name or "/" in name
        if not (path_like or _placeholder(name) or name in datasets | groups):
            problems.append(f"{where}: `{command}`: {name!r} is no dataset or group of "
                            "data/manifest.yaml")
    gold = getattr(args, "gold", None)
    if gold and not ("." in gold or gold in datasets or gold in benchmarks):
        problems.append(f"{where}: `{command}`: --gold {gold!r} is no benchmark of the manifest")
    return problems


@pytest.mark.slow
def test_readme_commands_name_real_datasets():
    checked, problems = 0, []
    for readme in ("README.md", "data/README.md"):
        for command in _markdown_commands((REPO / readme).read_text(encoding="utf-8")):
            checked += 1
            problems += _check_command(command, readme)
    assert checked >= 10  # the READMEs' commands were found
    assert not problems


@pytest.mark.slow
def test_help_examples_name_real_datasets(capsys):
    from leash_eval.cli import main_simulate
    from leash_eval.run.reproduce import main as reproduce_main

    texts = {"leash --help": _help_of(capsys, main, ["--help"])}
    texts |= {f"leash {c} --help": _help_of(capsys, main, [c, "--help"]) for c in COMMANDS}
    texts["leash simulate --help"] = _help_of(capsys, main_simulate, ["--help"])
    texts["leash reproduce --help"] = _help_of(capsys, reproduce_main, ["--help"])
    problems = [p for where, text in texts.items() for c in _examples(text)
                for p in _check_command(c, where)]
    assert not problems


@pytest.mark.parametrize("command, problem", [
    ("leash fetch gsm8k-probes", "'gsm8k-probes' is no dataset"),
    ("leash support gsm8k-sft x.parquet --base a --rl b", "'gsm8k-sft' is no dataset"),
    ("leash passk summary.parquet --k 1,2 --estimatr unbiased", "refused by the parser"),
    ("leash rescore s.jsonl --gold math-500", "--gold 'math-500'"),
    ("make reproduce DATA=gsm8k", "no study 'gsm8k'"),
])
def test_the_readme_check_can_fail(command, problem):
    [found] = _check_command(command, "README.md")
    assert problem in found


@pytest.mark.slow
@needs_mirror
@pytest.mark.mirror
def test_the_typical_session_runs(capsys, monkeypatch, tmp_path):
    """The session of ``leash --help``, as printed, on the real probe from the mirror."""
    pytest.importorskip("leash.analysis.pairing")
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    monkeypatch.chdir(tmp_path)  # summary.parquet is written here
    for command in _examples(_help_of(capsys, main, ["--help"])):
        code = main(["-q", *shlex.split(command)[1:]])
        out, err = capsys.readouterr()
        assert (code, err) == (0, ""), command
    # the last step's table: pass@8 of the two final models, from the raw files' own flags
    rows = {r["model"]: r for r in json.loads(
        (main(["-q", "passk", "summary.parquet", "--k", "8", "--json"]),
         capsys.readouterr().out)[1])}
    folder = MIRROR / "gsm8k-sft-vs-rlvr-probe"
    for model, name in (("sft", "final_2048.sft_raw.jsonl"), ("rl", "final_2048.rl_raw.jsonl")):
        recs = [json.loads(x) for x in (folder / name).read_text().splitlines() if x.strip()]
        solved = sum(any(ro["correct"] for ro in r["rollouts"]) for r in recs) / len(recs)
        assert rows[model]["pass_at_k"] == pytest.approx(solved)
