"""`leash study init` labels any file and writes only studies its own `leash study check`
accepts: files that name no model (labelled with --label, or by their file names), a
checkpoint folder of one model (steps from the file names), a checkpoint run on a subset of the
questions (`shared_only`, no `N`), no section the data cannot feed, labels kept as given
whatever their characters, file names with glob characters, a relative --mapping, and the
file's permissions those of any new file.
"""

import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from _support import run_cli as _run
from leash.sources.study import load_study
from leash_eval.cli import main
from leash_eval.run.study_check import check_study
from leash_eval.study_init import Label, draft_study, parse_label


def _verdicts(path: Path, ids, p, rng) -> dict:
    """An `{id: verdict}` JSON file (what `json.dump(results, f, indent=2)` writes)."""
    got = {q: bool(rng.random() < p) for q in ids}
    path.write_text(json.dumps(got, indent=2))
    return got


@pytest.fixture
def unnamed(tmp_path):
    """Two result files that name no model or benchmark (k = 1, 233 questions), and a folder of
    ten checkpoints of the RLVR model evaluated on the first 20 questions only, as in the
    issue."""
    rng = np.random.default_rng(3)
    ids = [f"q{i}" for i in range(233)]
    d = tmp_path / "results"
    (d / "ckpts").mkdir(parents=True)
    truth = {"base": _verdicts(d / "base.json", ids, 0.5, rng),
             "rl": _verdicts(d / "rl.json", ids, 0.6, rng)}
    for s in range(1, 11):
        truth[s * 100] = _verdicts(d / "ckpts" / f"step_{s * 100}.json", ids[:20], 0.55, rng)
    return d, truth


@pytest.mark.slow
def test_unnamed_files_are_labelled_by_name_and_the_pair_proposed(capsys, tmp_path, cached,
                                                                   unnamed):
    d, truth = unnamed
    out = tmp_path / "s.yaml"
    code, _, err = _run(capsys, "study", "init", str(d / "base.json"), str(d / "rl.json"),
                        "--out", str(out))
    assert code == 2  # the benchmark cannot be proposed: one line naming the option
    [line] = [ln for ln in err.splitlines() if ": error: " in ln]
    assert "base.json" in line and "--benchmark BENCHMARK" in line and "Traceback" not in err
    code, _, err = _run(capsys, "study", "init", str(d / "base.json"), str(d / "rl.json"),
                        "--benchmark", "gsm8k", "--out", str(out))
    assert code == 0, err
    assert "name no model" in err and "--label FILE=MODEL" in err and "proposed pair" in err
    raw = yaml.safe_load(out.read_text())
    assert [s["model"] for s in raw["sections"]["support"]["sources"]] == ["base", "rl"]
    assert raw["sections"]["support"]["pairs"][0] == {
        "label": "base -> rl", "base": "base", "rl": "rl"}
    result = check_study(out)
    assert result.ok, result.lines()
    s = load_study(out).paired("support")
    assert int((s["c_base"] > 0).sum()) == sum(truth["base"].values())


@pytest.mark.slow
def test_a_checkpoint_folder_on_a_question_subset_checks_clean(capsys, tmp_path, cached,
                                                              unnamed):
    """The issue's route: a k = 1 pair and ten checkpoints on 20 of the 233 questions. The
    checkpoints pair gets `shared_only`, the benchmark no `N` (20 and 233 differ), and `study
    check` accepts the study (it refused it twice: `shared_only`, then `N`)."""
    d, truth = unnamed
    out = tmp_path / "s.yaml"
    code, _, err = _run(capsys, "study", "init", "--label", f"base={d / 'base.json'}",
                        "--label", f"{d / 'rl.json'}=rl", "--label", f"rl={d / 'ckpts'}",
                        "--benchmark", "gsm8k", "--out", str(out), "-q")
    assert code == 0, err
    raw = yaml.safe_load(out.read_text())
    assert raw["benchmarks"] == {"gsm8k": {"domain": "math", "budget": 1}}
    assert "no N: the pairs share 20 questions in checkpoints, 233 questions in support" \
        in out.read_text()
    ck = raw["sections"]["checkpoints"]
    assert [s.get("step") for s in ck["sources"]] == [None, *range(100, 1001, 100)]
    assert [s["model"] for s in ck["sources"]] == ["base"] + ["rl"] * 10
    assert ck["pairs"] == [{"label": "base -> rl", "base": "base", "rl": "rl",
                            "shared_only": True}]
    assert "shared_only" not in raw["sections"]["support"]["pairs"][0]
    assert "entropy" not in raw["sections"]  # {id: verdict} files keep no answers
    assert "# no entropy section (Table 5): the files keep no extracted answers" \
        in out.read_text()
    result = check_study(out)
    assert result.ok, result.lines()
    with pytest.warns(UserWarning, match="dropping unshared questions"):  # said, and counted
        paired = load_study(out).paired("checkpoints")
    assert paired.groupby("step")["question_id"].nunique().eq(20).all()
    hand = sum(truth[300].values())
    assert int(paired.loc[paired["step"] == 300, "c_rl"].sum()) == hand
    code, _, err = _run(capsys, "study", "check", str(out))
    assert code == 0, err


def test_label_values_name_their_files_one_way(tmp_path, unnamed):
    d, _ = unnamed
    assert parse_label(f"{d / 'base.json'}=m") == Label(str(d / "base.json"), "m")
    assert parse_label(f"rl@300={d / 'ckpts'}") == Label(str(d / "ckpts"), "rl", 300)
    assert parse_label(f"m={d}/ckpts/step_[12]00.json").files() == [
        d / "ckpts" / "step_100.json", d / "ckpts" / "step_200.json"]
    for bad, what in [("nothere.json=m", "neither side"),
                      (f"{d / 'base.json'}={d / 'rl.json'}", "both sides"),
                      (f"{d / 'base.json'}= ", "empty")]:
        with pytest.raises(ValueError, match=what) as e:
            parse_label(bad)
        assert e.value.param == "label" and e.value.value == bad


@pytest.mark.slow
def test_files_whose_names_do_not_tell_their_steps_are_one_line(capsys, tmp_path, unnamed):
    d, _ = unnamed
    (d / "ckpts" / "step_100.json").rename(d / "ckpts" / "early.json")
    code, _, err = _run(capsys, "study", "init", str(d / "base.json"), "--label",
                        f"rl={d / 'ckpts'}", "--benchmark", "b", "-q")
    assert code == 2
    [line] = [ln for ln in err.splitlines() if ": error: " in ln]
    assert "--label rl@STEP=FILE" in line


def test_two_unnamed_files_of_one_name_ask_for_labels(capsys, tmp_path, unnamed):
    d, _ = unnamed
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "base.json").write_bytes((d / "rl.json").read_bytes())
    code, _, err = _run(capsys, "study", "init", str(d / "base.json"),
                        str(tmp_path / "other" / "base.json"), "--benchmark", "b", "-q")
    assert code == 2 and "--label" in err and "'base'" in err


def _counts(path: Path, rows) -> Path:
    pd.DataFrame(rows, columns=["model", "benchmark", "question_id", "n", "c"]).to_csv(
        path, index=False)
    return path


def test_the_study_file_follows_the_umask_and_keeps_the_labels(capsys, tmp_path, cached):
    """The study file had mode 0600 (mkstemp's); the name made from the model labels turned
    `tulu_ck` into `tulu-ck`. The labels are kept as given (a name is a label; only file names
    take the slug, and the file's first comment says which folder)."""
    _counts(tmp_path / "c.csv", [("tulu_base", "math", q, 4, q % 5) for q in range(4)]
            + [("tulu_ck", "math", q, 4, (q + 1) % 5) for q in range(4)])
    old = os.umask(0o022)
    try:
        code, out, err = _run(capsys, "study", "init", str(tmp_path / "c.csv"), "--base",
                              "tulu_base", "--rl", "tulu_ck", "--out", str(tmp_path / "s.yaml"),
                              "-q")
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE((tmp_path / "s.yaml").stat().st_mode) == 0o644
    draft = draft_study([tmp_path / "c.csv"], base="tulu_base", rl="tulu_ck")
    assert draft.name == "tulu_base-vs-tulu_ck"
    assert "build/tulu-base-vs-tulu-ck/" in draft.text  # where its outputs go, said
    raw = yaml.safe_load(draft.text)
    assert raw["title"] == "tulu_ck vs tulu_base on math"


@pytest.mark.parametrize("base, rl", [("base😀", "rl😀"), ("b\u2028ase", "r\x85l"),
                                      ('b"a\\se', "rl\ttab"), ("é-base", "ζ-rl"),
                                      ("null", "1.50"), ("- x: [y]", "#rl &a *b")])
def test_any_label_is_written_as_the_data_have_it(tmp_path, cached, base, rl):
    """Labels beyond the BMP were written as JSON surrogate pairs, which YAML reads as two
    lone surrogates: check then found no such model. Every label round-trips now."""
    _counts(tmp_path / "c.csv", [(base, "bench😀", "1", 4, 1), (rl, "bench😀", "1", 4, 2),
                                 (base, "bench😀", "2", 4, 0), (rl, "bench😀", "2", 4, 3)])
    draft = draft_study([tmp_path / "c.csv"], base=base, rl=rl, out=tmp_path / "s.yaml")
    raw = yaml.safe_load(draft.text)
    [pair] = raw["sections"]["support"]["pairs"]
    assert (pair["base"], pair["rl"]) == (base, rl)
    assert list(raw["benchmarks"]) == ["bench😀"]
    (tmp_path / "s.yaml").write_text(draft.text, encoding="utf-8")
    result = check_study(tmp_path / "s.yaml")
    assert result.ok, result.lines()


def test_models_that_share_no_question_are_refused_not_written_with_n_0(capsys, tmp_path):
    _counts(tmp_path / "c.csv", [("base", "math", "1", 4, 1), ("rl", "math", "2", 4, 2)])
    code, out, err = _run(capsys, "study", "init", str(tmp_path / "c.csv"), "-q")
    assert code == 2 and out == ""
    [line] = [ln for ln in err.splitlines() if ": error: " in ln]
    assert "share no question" in line


def test_a_benchmark_one_model_lacks_gets_shared_only_and_no_n(tmp_path, cached):
    rows = [("base", b, str(q), 4, q % 3) for b in ("math", "aime") for q in range(3)]
    rows += [("rl", "math", str(q), 4, 1) for q in range(3)]
    _counts(tmp_path / "c.csv", rows)
    draft = draft_study([tmp_path / "c.csv"], out=tmp_path / "s.yaml")
    raw = yaml.safe_load(draft.text)
    assert raw["benchmarks"]["math"]["N"] == 3 and "N" not in raw["benchmarks"]["aime"]
    assert raw["sections"]["support"]["pairs"][0]["shared_only"] is True
    (tmp_path / "s.yaml").write_text(draft.text)
    result = check_study(tmp_path / "s.yaml")
    assert result.ok, result.lines()


@pytest.mark.parametrize("name, decoy", [("x[1].csv", "x1.csv"), ("a*b.csv", "aXXb.csv"),
                                         ("q?.csv", "q1.csv"), ("[!a]].csv", "b].csv")])
def test_a_file_name_with_glob_characters_is_that_file(tmp_path, cached, name, decoy):
    """`x[1].csv` was written as a glob, which matches `x1.csv` (another file) and not
    itself; every glob character is escaped now, and the decoy is never read."""
    _counts(tmp_path / name, [("base", "math", "1", 4, 1), ("rl", "math", "1", 4, 2)])
    _counts(tmp_path / decoy, [("other", "math", "1", 4, 4)])
    draft = draft_study([tmp_path / name], out=tmp_path / "s.yaml")
    (tmp_path / "s.yaml").write_text(draft.text)
    study = load_study(tmp_path / "s.yaml")
    [hit] = [p for src in study.section("support").sources for p, _ in study.resolve(src)]
    assert hit.name == name
    assert set(study.summaries("support")["model"]) == {"base", "rl"}
    result = check_study(study)
    assert result.ok, result.lines()


def test_a_relative_mapping_is_written_relative_to_the_study(capsys, tmp_path, cached,
                                                             monkeypatch):
    (tmp_path / "maps").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "maps" / "m.yaml").write_text("question_id: pid\nsamples: gens\ncorrect: ok\n")
    for model, shift in (("base", 0), ("rl", 1)):
        (tmp_path / "data" / f"{model}.jsonl").write_text("".join(
            json.dumps({"pid": q, "gens": [{"ok": (q + i + shift) % 3 == 0} for i in range(4)]})
            + "\n" for q in range(3)))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "studies" / "s.yaml"
    code, _, err = _run(capsys, "study", "init", "--label", "base=data/base.jsonl", "--label",
                        "rl=data/rl.jsonl", "--mapping", "maps/m.yaml", "--benchmark", "math",
                        "--out", str(out), "-q")
    assert code == 0, err
    [src, _] = yaml.safe_load(out.read_text())["sections"]["support"]["sources"]
    assert src["mapping"] == "../maps/m.yaml" and src["path"] == "../data/base.jsonl"
    monkeypatch.chdir(tmp_path / "data")  # the study reads it from anywhere
    import leash_eval.studies as tk

    def no_reading(*a, **k):
        raise AssertionError("read the file again")

    monkeypatch.setattr(tk, "load_counts", no_reading)  # the check reads init's cache
    result = check_study(out)
    assert result.ok, result.lines()


def test_files_with_answers_get_an_entropy_section(tmp_path, cached):
    rows = [{"model": m, "benchmark": "math", "question_id": str(q), "sample_idx": i,
             "correct": (q + i) % 2 == 0, "answer": str((q + i) % 3)}
            for m in ("base", "rl") for q in range(3) for i in range(4)]
    pd.DataFrame(rows).to_json(tmp_path / "g.jsonl", orient="records", lines=True)
    draft = draft_study([tmp_path / "g.jsonl"], out=tmp_path / "s.yaml")
    raw = yaml.safe_load(draft.text)
    assert set(raw["sections"]) == {"support", "entropy"}
    assert "no entropy section" not in draft.text


def test_a_name_check_refuses_is_refused_before_anything_is_written(capsys, tmp_path):
    """`--out paper.yaml` named the study 'paper', which `study check` refuses (the paper's
    printed numbers): one line naming --out, and no file."""
    _counts(tmp_path / "c.csv", [("base", "math", "1", 4, 1), ("rl", "math", "1", 4, 2)])
    code, _, err = _run(capsys, "study", "init", str(tmp_path / "c.csv"), "--out",
                        str(tmp_path / "paper.yaml"), "-q")
    assert code == 2 and not (tmp_path / "paper.yaml").exists()
    [line] = [ln for ln in err.splitlines() if ": error: " in ln]
    assert "--out" in line and "'paper'" in line and "study check" in line


def test_a_file_name_of_undecodable_bytes_is_written_and_read(tmp_path, cached):
    """A name with bytes that are not UTF-8 (a surrogate in Python) is written as a YAML
    escape the study reads back, and its summary cache is an ASCII file name (pyarrow could
    not write the surrogate)."""
    name = os.fsdecode(b"bad\xff.csv")
    try:
        _counts(tmp_path / name, [("base", "math", "1", 4, 1), ("rl", "math", "1", 4, 2)])
    except (OSError, UnicodeError):
        pytest.skip("the file system refuses names that are not UTF-8")
    out = tmp_path / "s.yaml"
    code = main(["study", "init", str(tmp_path / name), "--out", str(out), "-q"])
    assert code == 0
    assert '"bad\\uDCFF.csv"' in out.read_text(encoding="utf-8")
    result = check_study(out)
    assert result.ok, result.lines()
    assert [p.name.split(".")[0] for p in (cached / "s" / ".summaries").iterdir()] == ["bad_"]


def test_evaluator_files_that_name_no_model_are_labelled_too(capsys, tmp_path, cached):
    """The evaluator layout says 'does not name the model' its own way (no record, no value):
    the same proposal, and the same one line for the benchmark."""
    for name, scores in (("qwen-base.jsonl", [True, False]), ("qwen-grpo.jsonl", [True, True])):
        (tmp_path / name).write_text("".join(json.dumps(
            {"idx": q, "gt": "1", "code": ["a", "b"], "pred": ["1", "2"], "score": scores})
            + "\n" for q in range(3)))
    files = [str(tmp_path / "qwen-base.jsonl"), str(tmp_path / "qwen-grpo.jsonl")]
    code, _, err = _run(capsys, "study", "init", *files, "--fmt", "evaluator", "-q")
    assert code == 2 and "--benchmark BENCHMARK" in err
    code, out, err = _run(capsys, "study", "init", *files, "--fmt", "evaluator", "--benchmark",
                          "math500", "-q")
    assert code == 0, err
    raw = yaml.safe_load(out)
    assert raw["sections"]["support"]["pairs"][0] == {
        "label": "qwen-base -> qwen-grpo", "base": "qwen-base", "rl": "qwen-grpo"}
    assert "entropy" in raw["sections"]  # the files keep extracted answers
