"""Bad configuration input is refused at the boundary: one line naming file, line, key and value.

Study files (leash.sources.study.load_study; `leash reproduce --data STUDY [--list]`):
misspelled top-level key (`sectoins:`)  -> test_misspelled_top_level_key_is_refused
unknown key at any level, "did you mean" -> test_unknown_keys_at_every_level
wrong value types, bools never ints      -> test_wrong_types_are_named
empty values mean "not given"            -> test_empty_values_mean_not_given
a mapping given to Study() directly      -> test_study_from_a_mapping_names_the_key_path
YAML alias bomb (no expansion)           -> test_alias_bomb_is_refused_before_expansion
any YAML anchor or alias                 -> test_any_anchor_or_alias_is_refused
duplicate key                            -> test_duplicate_key_is_refused
a list or mapping as a key               -> test_a_key_that_is_not_a_plain_value_is_shown_as_written
invalid YAML                             -> test_invalid_yaml_is_one_line_with_its_line
a file that is not a mapping             -> test_file_that_is_not_a_mapping
CLI: exit 2, one line, no traceback      -> test_reproduce_cli_refuses_a_bad_study
run_all refuses before any notebook      -> test_run_all_refuses_a_bad_study_before_running
the shipped studies still load           -> test_shipped_studies_load
paper.yaml documents every schema key    -> test_paper_yaml_documents_every_key

The data manifest (leash_eval.manifest; `leash fetch`; commands taking a dataset name):
empty, absolute or `..` entry path       -> test_manifest_refuses_paths_outside_the_root
(relative file paths still accepted)     -> test_manifest_accepts_relative_file_paths
the same through the CLI, exit 2         -> test_cli_refuses_an_empty_manifest_path
wrong sha256 from a URL: try the next    -> test_checksum_mismatch_tries_the_next_url
every URL fails: each listed, with why   -> test_every_url_failing_lists_each_with_its_reason
network failures only: still unavailable -> test_network_failures_only_stay_unavailable
file edited in place, same size + mtime  -> test_sha256_is_not_fooled_by_same_size_and_mtime
... a cached download edited in place    -> test_cached_file_edited_in_place_is_not_verified
... a mirror file edited in place        -> test_mirror_file_edited_in_place_is_a_checksum_error
... the manifest itself edited in place  -> test_manifest_edited_in_place_is_read_again
invalid manifest YAML                    -> test_invalid_manifest_yaml_is_one_line_with_its_line
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import pytest
import yaml

from leash import config as C
from leash.sources.study import STUDY_SCHEMA, Study, list_studies, load_study, studies_dir
from leash_eval import manifest as mf
from leash_eval.cli import main as leash_main
from leash_eval.run.reproduce import ParameterError, run_all
from leash_eval.run.reproduce import main as reproduce_main


def _study(tmp_path, text: str, name: str = "s.yaml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _refused(path, pattern: str) -> str:
    """load_study(path) raises one ValueError line naming the file and matching pattern."""
    with pytest.raises(ValueError) as info:
        load_study(path)
    msg = str(info.value)
    assert "\n" not in msg, msg
    assert str(path.resolve()) in msg, msg
    assert re.search(pattern, msg), msg
    return msg


_ANY = object()


def _refused_at(path, line: int, key: str, *parts: str, value=_ANY) -> str:
    """load_study(path) raises one ConfigError line naming the file, whose ``line``, ``key``
    (the key path) and ``value`` are the place and the value to change, and whose message has
    each of ``parts`` (what the value must be, "did you mean")."""
    with pytest.raises(C.ConfigError) as info:
        load_study(path)
    e, msg = info.value, str(info.value)
    assert "\n" not in msg and str(path.resolve()) in msg, msg
    assert (e.line, e.key) == (line, key), (e.line, e.key, msg)
    assert value is _ANY or e.value == value, (e.value, msg)
    assert f"`{key}`" in msg or f"`{key.rpartition('.')[2]}`" in msg, msg
    for part in parts:
        assert part in msg, (part, msg)
    return msg


# ----------------------------------------------------------------------------- unknown keys


def test_misspelled_top_level_key_is_refused(tmp_path):
    p = _study(tmp_path, "name: mine\nsectoins:\n  support: {sources: [{demo: support}]}\n")
    msg = _refused_at(p, 2, "sectoins", "did you mean `sections`?", value="sectoins")
    assert "allowed at the top level:" in msg and "benchmarks" in msg


@pytest.mark.parametrize(("text", "line", "key", "parts"), [
    # a section the notebooks do not read: the sections there are
    ("sections:\n  table1:\n    budgets: 5\n", 2, "sections.table1", ("allowed here:", "support")),
    ("sections:\n  suport: {}\n", 2, "sections.suport", ("did you mean `support`?",)),
    # a key inside a section
    ("sections:\n  support:\n    budgets: 5\n", 3, "sections.support.budgets",
     ("allowed here:", "sources", "pairs")),
    ("sections:\n  support:\n    ks: [1, 2]\n", 3, "sections.support.ks", ()),
    # inside a pair, inside a pair's budgets
    ("sections:\n  support:\n    pairs:\n      - {base: a, rl: b, budget: {math: 8}}\n", 4,
     "sections.support.pairs[0].budget", ("did you mean `budgets`?",)),
    ("sections:\n  sft:\n    pairs:\n      - base: a\n        rl: b\n        budgets:\n"
     "          maths: 8\n", 7, "sections.sft.pairs[0].budgets.maths", ("did you mean `math`?",)),
    # inside a source and a source's field mapping
    ("sections:\n  entropy:\n    sources:\n      - {path: x.jsonl, modle: m}\n", 4,
     "sections.entropy.sources[0].modle", ("did you mean `model`?",)),
    ("sections:\n  entropy:\n    sources:\n      - path: x.jsonl\n        mapping:\n"
     "          correct: ok\n          questionid: pid\n", 7,
     "sections.entropy.sources[0].mapping.questionid", ("did you mean `question_id`?",)),
    # inside a benchmark
    ("benchmarks:\n  MATH500: {domain: math, budgte: 8}\n", 2, "benchmarks.MATH500.budgte",
     ("did you mean `budget`?",)),
])
def test_unknown_keys_at_every_level(tmp_path, text, line, key, parts):
    _refused_at(_study(tmp_path, text), line, key, "unknown key", *parts)


# ----------------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(("text", "line", "key", "value", "parts"), [
    # used to fail inside a notebook with AttributeError
    ("benchmarks: {X: math}\n", 1, "benchmarks.X", "math", ("must be a mapping",)),
    # used to give TypeError
    ("sections:\n  support:\n    pairs:\n      - {base: a, rl: b, budgets: 5}\n", 4,
     "sections.support.pairs[0].budgets", 5, ("a mapping of domains to budgets", "got 5")),
    # used to be read as 1
    ("benchmarks:\n  X: {domain: math, budget: true}\n", 2, "benchmarks.X.budget", True,
     ("an int >= 1", "got true (bool)")),
    ("benchmarks:\n  X: {domain: math, budget: 0}\n", 2, "benchmarks.X.budget", 0,
     ("an int >= 1", "got 0")),
    ("benchmarks:\n  X: {domain: math, N: 30.0}\n", 2, "benchmarks.X.N", 30.0,
     ("an int >= 1", "got 30.0 (float)")),
    ("benchmarks:\n  X: {domain: maths}\n", 2, "benchmarks.X.domain", "maths",
     ("got 'maths'", "did you mean `math`?")),
    ("benchmarks:\n  X: {budget: 8}\n", 2, "benchmarks.X.domain", None,
     ("lacks the required key",)),
    ("benchmarks:\n  2024: {domain: math}\n", 2, "benchmarks", 2024,
     ("the keys of `benchmarks`", "got 2024 (int)")),
    ("simulated: 'yes'\n", 1, "simulated", "yes", ("true or false", "got 'yes'")),
    ("sections:\n  sft:\n    ks: [1, 2, true]\n", 3, "sections.sft.ks[2]", True,
     ("an int >= 1",)),
    ("sections:\n  sft:\n    ks: 8\n", 3, "sections.sft.ks", 8, ("a list of ints >= 1",)),
    ("sections:\n  checkpoints:\n    pairs:\n      - {base: a, rl: a, base_step: false}\n", 4,
     "sections.checkpoints.pairs[0].base_step", False, ("an int >= 0",)),
    ("sections:\n  support:\n    pairs:\n      - {base: 1.50, rl: b}\n", 4,
     "sections.support.pairs[0].base", 1.5, ("quote it", "got 1.5 (float)")),
    ("sections:\n  support:\n    pairs:\n      - {base: a}\n", 4,
     "sections.support.pairs[0].rl", None, ("lacks the required key",)),
    ("sections:\n  support:\n    pairs: {base: a, rl: b}\n", 3, "sections.support.pairs",
     {"base": "a", "rl": "b"}, ("must be a list",)),
    ("sections:\n  support:\n    sources:\n      - {path: a.jsonl, demo: support}\n", 4,
     "sections.support.sources[0]", None, ("exactly one of path, dataset, demo", "got path, demo")),
    ("sections:\n  support:\n    sources:\n      - {path: a.jsonl, step: true}\n", 4,
     "sections.support.sources[0].step", True, ("an int >= 0",)),
    ("sections:\n  support:\n    sources:\n      - {path: a.jsonl, fmt: jsonl}\n", 4,
     "sections.support.sources[0].fmt", "jsonl", ("must be one of", "samples", "got 'jsonl'")),
    ("sections:\n  support:\n    sources:\n      - {path: a.jsonl, mapping: rollout}\n", 4,
     "sections.support.sources[0].mapping", "rollout", ("did you mean `rollouts`?",)),
    ("sections:\n  support:\n    sources:\n      - {demo: suport}\n", 4,
     "sections.support.sources[0].demo", "suport", ("did you mean `support`?",)),
    ("sections:\n  support:\n    sources:\n      - {dataset: gsm8k-probe-sf}\n", 4,
     "sections.support.sources[0].dataset", "gsm8k-probe-sf",
     ("did you mean `gsm8k-probe-sft`?",)),
    ("sections:\n  support:\n    sources:\n      - {dataset: nothing-like-it}\n", 4,
     "sections.support.sources[0].dataset", "nothing-like-it",
     ("`leash fetch --list` lists them",)),
    ("sections:\n  perplexity:\n    simulated: 1\n", 3, "sections.perplexity.simulated", 1,
     ("true or false", "got 1 (int)")),
])
def test_wrong_types_are_named(tmp_path, text, line, key, value, parts):
    _refused_at(_study(tmp_path, text), line, key, *parts, value=value)


def test_empty_values_mean_not_given(tmp_path):
    s = load_study(_study(tmp_path, "title:\nbenchmarks:\n  X: {domain: math, budget: }\n"
                                    "sections:\n  support:\n    sources:\n    pairs:\n"))
    assert s.title == "s" and s.budget("X") is None and not s.has_data("support")


def test_study_from_a_mapping_names_the_key_path():
    with pytest.raises(ValueError, match=r"^study: `benchmarks.X.budget` ") as info:
        Study({"benchmarks": {"X": {"domain": "math", "budget": True}}})
    e = info.value
    assert (e.key, e.value, e.line) == ("benchmarks.X.budget", True, None)
    assert "an int >= 1" in str(info.value)


# ----------------------------------------------------------------------------- YAML features


def _bomb(levels: int = 9) -> str:
    lines = ['lol0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"lol{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "name: bomb\n" + "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_before_expansion(tmp_path, monkeypatch):
    # refused while the YAML is composed, at its first anchor (line 2): nothing is ever
    # constructed, so the 9**9 strings are never expanded (it used to run 24 s into MemoryError)
    import yaml

    def constructed(*args, **kwargs):
        raise AssertionError("the YAML document was constructed")

    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_document", constructed)
    p = _study(tmp_path, _bomb())  # 9**9 = 387 million strings if expanded
    _refused(p, r", line 2: YAML anchor &a0 refused: a study file has no need of anchors or "
                r"aliases \(write each value out\), and refusing them rules out alias bombs")


@pytest.mark.parametrize(("text", "message"), [
    ("benchmarks:\n  A: &m {domain: math}\n  B: *m\n", r", line 2: YAML anchor &m refused"),
    ("x: 1\nsections:\n  support: &s {}\n", r", line 3: YAML anchor &s refused"),
    ("benchmarks:\n  A: {domain: &d math}\n", r", line 2: YAML anchor &d refused"),
    # an alias without its anchor is refused too (before PyYAML's own error)
    ("benchmarks:\n  A: *nothing\n", r", line 2: YAML alias \*nothing refused"),
])
def test_any_anchor_or_alias_is_refused(tmp_path, text, message):
    _refused(_study(tmp_path, text), message)


def test_duplicate_key_is_refused(tmp_path):
    p = _study(tmp_path, "sections:\n  support: {}\n  entropy: {}\n  support: {}\n")
    _refused(p, r", line 4: duplicate key `support` \(first on line 2\)\.$")


def test_a_key_that_is_not_a_plain_value_is_shown_as_written(tmp_path):
    p = _study(tmp_path, "name: x\n? [a, b]\n: 1\n")
    _refused(p, r", line 2: a key must be a plain value, got \['a', 'b'\] \(list\)\.$")


def test_invalid_yaml_is_one_line_with_its_line(tmp_path):
    p = _study(tmp_path, "name: x\nbenchmarks:\n  A: {domain: math\nsections: {}\n")
    _refused(p, r", line \d: not valid YAML: while parsing a flow mapping, ")


@pytest.mark.parametrize(("text", "got"), [("", "null"), ("- a\n", r"\['a'\] \(list\)"),
                                           ("just text\n", r"'just text' \(str\)")])
def test_file_that_is_not_a_mapping(tmp_path, text, got):
    _refused(_study(tmp_path, text), rf": the file must be a mapping .*, got {got}\.$")


# ----------------------------------------------------------------------------- command line


@pytest.mark.parametrize("entry", ["reproduce", "leash"])
@pytest.mark.parametrize(("text", "message"), [
    ("name: mine\nsectoins:\n  support: {}\n", r"unknown key `sectoins` \(did you mean "),
    ("benchmarks:\n  X: {domain: math, budget: true}\n",
     r"`benchmarks.X.budget` must be an int >= 1, got true \(bool\)"),
    (_bomb(), r"YAML anchor &a0 refused"),
])
def test_reproduce_cli_refuses_a_bad_study(tmp_path, capsys, entry, text, message):
    p = _study(tmp_path, text)
    argv = ["--data", str(p), "--list"]
    code = reproduce_main(argv) if entry == "reproduce" else leash_main(["reproduce", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"leash reproduce: --data {str(p)!r}: study file {p.resolve()}")
    assert re.search(message, err), err


def test_run_all_refuses_a_bad_study_before_running(tmp_path):
    p = _study(tmp_path, "sections:\n  support:\n    budgets: 5\n")
    with pytest.raises(ParameterError, match=r"line 3: unknown key `sections.support.budgets`"):
        run_all([], data=str(p), outdir=tmp_path / "fig", build=tmp_path / "build")
    assert not (tmp_path / "build").exists()


# ----------------------------------------------------------------------------- shipped files


def test_shipped_studies_load():
    names = list_studies()
    assert {"paper", "demo", "gsm8k-probe", "math-eval-example"} <= set(names)
    for name in names:
        assert load_study(name).name == name


def _schema_keys(node) -> set[str]:
    """Every fixed key of the schema (a field mapping's own fields are data/README's)."""
    if isinstance(node, C.Either):
        return _schema_keys(node.scalar)
    if isinstance(node, C.Fields):
        return set(node.fields).union(*(_schema_keys(v) for v in node.fields.values()))
    if isinstance(node, C.ListOf):
        return _schema_keys(node.item)
    if isinstance(node, C.MapOf):
        return _schema_keys(node.value)
    return set()


def test_paper_yaml_documents_every_key():
    text = (studies_dir() / "paper.yaml").read_text(encoding="utf-8")
    comments = "\n".join(line.split("#", 1)[1] for line in text.splitlines() if "#" in line)
    keys = _schema_keys(STUDY_SCHEMA)
    assert {"budget", "ks", "base_step", "mapping", "perplexity", "non-math"} <= keys
    undocumented = sorted(k for k in keys
                          if not re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", comments))
    assert undocumented == []


# ----------------------------------------------------------------------------- the data manifest


def _entry(path: object = "sub/toy.jsonl", urls=("file:///nowhere/toy.jsonl",),
           sha: str = "0" * 64) -> dict:
    return {"urls": list(urls), "sha256": sha, "path": path, "format": "nested",
            "mapping": "rollouts", "license": "test", "description": "toy"}


def _manifest_file(tmp_path, entry: dict) -> Path:
    p = tmp_path / "manifest.yaml"
    p.write_text(yaml.safe_dump({"datasets": {"toy": entry}}), encoding="utf-8")
    return p


@pytest.mark.parametrize("path", ["", " ", ".", "./", "sub/", "/abs/toy.jsonl", "../toy.jsonl",
                                  "sub/../../toy.jsonl", "C:/toy.jsonl", "..\\toy.jsonl", 5,
                                  None])
def test_manifest_refuses_paths_outside_the_root(tmp_path, path):
    with pytest.raises(ValueError) as info:
        mf.load_manifest(_manifest_file(tmp_path, _entry(path)))
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"The 'path' of the dataset 'toy' of the manifest {tmp_path}")
    assert msg.endswith(f"must be a relative file path without '..' (e.g. folder/file.jsonl). "
                        f"Got {path!r}.")


def test_manifest_accepts_relative_file_paths(tmp_path):
    for path in ("toy.jsonl", "sub/toy.jsonl", "./sub/toy.jsonl"):
        assert mf.load_manifest(_manifest_file(tmp_path, _entry(path))).datasets["toy"].path == (
            path)


@pytest.mark.parametrize("argv", [["fetch", "toy"], ["fetch", "--list"],
                                  ["support", "toy", "--base", "a", "--rl", "b"]])
def test_cli_refuses_an_empty_manifest_path(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.setattr(mf, "_MANIFEST_PATH", _manifest_file(tmp_path, _entry("")))
    monkeypatch.chdir(tmp_path)  # `toy` is no file here
    code = leash_main([*argv, "--dest", str(tmp_path / "raw")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.splitlines() == [f"leash {argv[0]}: error: The 'path' of the dataset 'toy' of the "
                                f"manifest {tmp_path / 'manifest.yaml'} must be a relative file "
                                "path without '..' (e.g. folder/file.jsonl). Got ''."]
    assert not (tmp_path / "raw").exists()  # nothing was written where the folder should be


def _upstream(tmp_path, name: str, payload: bytes) -> str:
    f = tmp_path / "upstream" / name
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_bytes(payload)
    return f.as_uri()


GOOD = b'{"qid": 1, "rollouts": []}\n'


def test_checksum_mismatch_tries_the_next_url(tmp_path, monkeypatch):
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    urls = [_upstream(tmp_path, "moved.jsonl", b"<html>not the file</html>\n"),
            _upstream(tmp_path, "good.jsonl", GOOD)]
    m = mf._parse_manifest({"datasets": {"toy": _entry(
        urls=urls, sha=hashlib.sha256(GOOD).hexdigest())}}, "fake")
    dest = tmp_path / "raw"
    path = mf.fetch("toy", dest=dest, manifest=m, progress=False)
    assert path == dest / "sub" / "toy.jsonl" and path.read_bytes() == GOOD
    assert [p.name for p in path.parent.iterdir()] == ["toy.jsonl"]  # the bad download is gone


def test_every_url_failing_lists_each_with_its_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    bad, stale = b"<html>not the file</html>\n", b"stale\n"
    urls = [_upstream(tmp_path, "moved.jsonl", bad), (tmp_path / "gone.jsonl").as_uri(),
            _upstream(tmp_path, "stale.jsonl", stale)]
    sha = hashlib.sha256(GOOD).hexdigest()
    entry = _entry(urls=urls, sha=sha)
    dest = tmp_path / "raw"
    expected = (
        f"Checksum mismatch for dataset 'toy': no URL served the expected bytes: "
        f"{urls[0]} (expected sha256 {sha}, got {hashlib.sha256(bad).hexdigest()}; discarded); "
        f"{urls[1]} ([Errno 2] No such file or directory: '{tmp_path / 'gone.jsonl'}'); "
        f"{urls[2]} (expected sha256 {sha}, got {hashlib.sha256(stale).hexdigest()}; "
        f"discarded). Provide a verified copy at {dest / 'sub' / 'toy.jsonl'} or in the mirror "
        f"({mf.MIRROR_ENV}) as sub/toy.jsonl.")
    m = mf._parse_manifest({"datasets": {"toy": entry}}, "fake")
    with pytest.raises(ValueError) as info:
        mf.fetch("toy", dest=dest, manifest=m, progress=False)
    assert str(info.value) == expected
    assert not isinstance(info.value, mf.DatasetUnavailableError)  # an error, not a skip
    assert list((dest / "sub").iterdir()) == []
    # the command line: the same one line, exit status 2
    monkeypatch.setattr(mf, "_MANIFEST_PATH", _manifest_file(tmp_path, entry))
    assert leash_main(["fetch", "toy", "--dest", str(dest)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines()[-1] == f"leash fetch: error: {expected}"
    assert len([line for line in err.splitlines() if "error" in line]) == 1


def test_network_failures_only_stay_unavailable(tmp_path, monkeypatch):
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    urls = [(tmp_path / "a.jsonl").as_uri(), (tmp_path / "b.jsonl").as_uri()]
    m = mf._parse_manifest({"datasets": {"toy": _entry(urls=urls)}}, "fake")
    with pytest.raises(mf.DatasetUnavailableError) as info:
        mf.fetch("toy", dest=tmp_path / "raw", manifest=m, progress=False)
    assert all(f"{u} ([Errno 2] No such file or directory" in str(info.value) for u in urls)


def _edit_in_place(path: Path, payload: bytes) -> None:
    """Overwrite with bytes of the same size and set the mtime back: (size, mtime) unchanged."""
    st = path.stat()
    assert len(payload) == st.st_size
    os.chmod(path, 0o644)
    with open(path, "r+b") as fh:
        fh.write(payload)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def test_sha256_is_not_fooled_by_same_size_and_mtime(tmp_path):
    f = tmp_path / "f.jsonl"
    f.write_bytes(GOOD)
    before = mf.sha256_file(f)
    _edit_in_place(f, GOOD.upper())
    assert mf.sha256_file(f) == hashlib.sha256(GOOD.upper()).hexdigest() != before


def test_cached_file_edited_in_place_is_not_verified(tmp_path, monkeypatch):
    monkeypatch.delenv(mf.MIRROR_ENV, raising=False)
    m = mf._parse_manifest({"datasets": {"toy": _entry(
        urls=[_upstream(tmp_path, "good.jsonl", GOOD)], sha=hashlib.sha256(GOOD).hexdigest())}},
        "fake")
    dest = tmp_path / "raw"
    path = mf.fetch("toy", dest=dest, manifest=m, progress=False)
    assert mf.locate("toy", dest=dest, manifest=m) == path  # verified once in this process
    _edit_in_place(path, GOOD.upper())
    assert mf.locate("toy", dest=dest, manifest=m) is None
    assert mf.fetch("toy", dest=dest, manifest=m, progress=False).read_bytes() == GOOD


def test_mirror_file_edited_in_place_is_a_checksum_error(tmp_path, monkeypatch):
    sha = hashlib.sha256(GOOD).hexdigest()
    m = mf._parse_manifest({"datasets": {"toy": _entry(sha=sha)}}, "fake")
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "toy.jsonl").write_bytes(GOOD)
    assert mf.locate("toy", dest=tmp_path / "raw", mirror=mirror, manifest=m) is not None
    _edit_in_place(mirror / "sub" / "toy.jsonl", GOOD.upper())
    with pytest.raises(ValueError, match=rf"'toy' \(mirror file .*\): expected sha256 {sha}, "
                                         rf"got {hashlib.sha256(GOOD.upper()).hexdigest()}\."):
        mf.locate("toy", dest=tmp_path / "raw", mirror=mirror, manifest=m)


def test_manifest_edited_in_place_is_read_again(tmp_path):
    p = _manifest_file(tmp_path, _entry())
    assert mf.load_manifest(p).datasets["toy"].description == "toy"
    _edit_in_place(p, p.read_bytes().replace(b"description: toy", b"description: TOY"))
    assert mf.load_manifest(p).datasets["toy"].description == "TOY"


def test_invalid_manifest_yaml_is_one_line_with_its_line(tmp_path, capsys, monkeypatch):
    p = tmp_path / "manifest.yaml"
    p.write_text("datasets:\n  toy: {urls: [a, b}\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        mf.load_manifest(p)
    msg = str(info.value)  # the project's one YAML loader (leash.config.load_yaml_text)
    assert info.value.file == p and info.value.line == 2 and "\n" not in msg
    assert "not valid YAML: while parsing a flow sequence" in msg
    monkeypatch.setattr(mf, "_MANIFEST_PATH", p)
    assert leash_main(["fetch", "--list"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"leash fetch: error: {msg}"]
