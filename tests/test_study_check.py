"""The analyst's route: `leash study init` writes a study from a counts file, `leash study
check` checks it against its data in seconds (one line per problem, exit 2), and `make
reproduce DATA=` makes the support tables from it with no hand edit; pass@k on counts needs no
option (the unbiased estimator by default).
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from _support import run_cli as _run
from leash.sources.study import load_study
from leash_eval.run.study_check import check_study

BASE, RL = "Qwen2.5-Math-7B", "Qwen2.5-Math-7B-GRPO"


def _counts(folder: Path, n=128, questions=12, seed=0) -> Path:
    """A per-question counts file of two models on `math500` (n samples each), some questions
    unsolved by one side or both, as the counts people publish."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, lift in ((BASE, 0.0), (RL, 0.2)):
        for q in range(questions):
            p = 0.0 if q % 4 == 0 else min(1.0, rng.beta(0.7, 0.9) + lift)
            rows.append({"model": model, "benchmark": "math500",
                         "question_id": f"test/algebra/{q}.json", "n": n,
                         "c": int(rng.binomial(n, p))})
    path = folder / "counts.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _init(capsys, tmp_path, *extra):
    counts = _counts(tmp_path)
    out = tmp_path / "my-study.yaml"
    code, _, err = _run(capsys, "study", "init", str(counts), "--out", str(out), *extra)
    assert code == 0, err
    return out, err


def test_init_writes_a_commented_study_that_checks_clean(capsys, tmp_path, cached):
    out, err = _init(capsys, tmp_path)
    text = out.read_text()
    raw = yaml.safe_load(text)
    assert raw["name"] == "my-study"
    assert BASE in raw["title"] and RL in raw["title"] and "math500" in raw["title"]
    assert raw["benchmarks"] == {"math500": {"domain": "math", "budget": 128, "N": 12}}
    [pair] = raw["sections"]["support"]["pairs"]
    assert (pair["base"], pair["rl"]) == (BASE, RL)
    assert raw["sections"]["support"]["sources"] == [{"path": "counts.csv"}]
    assert "entropy" not in raw["sections"]  # counts keep no answers
    # every key line carries its comment
    keys = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", "-"))
            and ":" in ln and not ln.startswith("    ")]
    assert all("#" in ln for ln in keys), keys
    assert "proposed pair" in err and "--base" in err  # the proposal is said
    # the summaries read are cached, so the check reads nothing again
    assert list((cached / "my-study" / ".summaries").glob("counts.*.parquet"))
    code, _, err = _run(capsys, "study", "check", str(out))
    assert code == 0, err
    assert "ok" in err.splitlines()[-1]
    assert "section 'sft' will be skipped" in err


def test_init_with_base_and_rl_and_refusals(capsys, tmp_path, cached):
    counts = _counts(tmp_path)
    code, out, _ = _run(capsys, "study", "init", str(counts), "--base", BASE, "--rl", RL, "-q")
    assert code == 0 and yaml.safe_load(out)["sections"]["support"]["pairs"][0]["rl"] == RL
    code, _, err = _run(capsys, "study", "init", str(counts), "--base", BASE.lower(), "--rl", RL)
    assert code == 2 and f"did you mean {BASE!r}" in err and "--base" in err
    assert len([ln for ln in err.splitlines() if ": error: " in ln]) == 1
    code, _, err = _run(capsys, "study", "init", str(counts), "--base", BASE)
    assert code == 2 and "--rl" in err
    # an existing file is left alone
    target = tmp_path / "s.yaml"
    target.write_text("mine\n")
    code, _, err = _run(capsys, "study", "init", str(counts), "--out", str(target))
    assert code == 2 and "--force" in err and target.read_text() == "mine\n"


def test_init_says_when_the_names_do_not_tell_base_from_rl(capsys, tmp_path, cached):
    counts = _counts(tmp_path)
    f = pd.read_csv(counts)
    f["model"] = f["model"].map({BASE: "model-a", RL: "model-b"})
    f.to_csv(counts, index=False)
    code, _, err = _run(capsys, "study", "init", str(counts))
    assert code == 2 and "--base MODEL" in err and "--rl MODEL" in err


def _edited(path: Path, tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load(path.read_text())
    edit(raw)
    out = tmp_path / "edited.yaml"
    out.write_text(yaml.safe_dump(raw, sort_keys=False))
    return out


def test_a_mislabelled_benchmark_is_one_line_with_did_you_mean(capsys, tmp_path, cached):
    out, _ = _init(capsys, tmp_path)
    bad = _edited(out, tmp_path, lambda r: r.update(
        benchmarks={"MATH500": r["benchmarks"]["math500"]}))
    code, _, err = _run(capsys, "study", "check", str(bad))
    assert code == 2
    errors = [ln for ln in err.splitlines() if ": error: " in ln]
    assert len(errors) == 1, err
    assert str(bad.resolve()) in errors[0] and "`benchmarks`" in errors[0]
    assert "'math500'" in errors[0] and "did you mean 'MATH500'" in errors[0]
    result = check_study(bad)
    [e] = result.problems
    assert (e.key, e.value, e.file) == ("benchmarks", "math500", bad.resolve())
    assert e.line == bad.read_text().splitlines().index("benchmarks:") + 1


def test_a_budget_above_n_names_the_key_and_value(capsys, tmp_path, cached):
    out, _ = _init(capsys, tmp_path)
    bad = _edited(out, tmp_path, lambda r: r["benchmarks"]["math500"].update(budget=8192))
    [e] = check_study(bad).problems
    assert (e.key, e.value) == ("benchmarks.math500.budget", 8192)
    assert "at most 128" in str(e)
    code, _, err = _run(capsys, "study", "check", str(bad))
    assert code == 2 and len([ln for ln in err.splitlines() if ": error: " in ln]) == 1


@pytest.mark.parametrize("edit, key, value", [
    (lambda r: r["sections"]["support"]["pairs"][0].update(rl=RL.lower()),
     "sections.support.pairs[0].rl", RL.lower()),
    (lambda r: r["benchmarks"]["math500"].update(N=500), "benchmarks.math500.N", 500),
    (lambda r: r["sections"]["support"]["sources"][0].update(path="nothere.csv"),
     "sections.support.sources[0].path", "nothere.csv"),
    (lambda r: r.update(name="paper"), "name", "paper"),
    (lambda r: r.update(title=load_study("paper").title), "title", load_study("paper").title),
])
def test_each_static_problem_names_key_and_value(tmp_path, capsys, cached, edit, key, value):
    out, _ = _init(capsys, tmp_path)
    problems = check_study(_edited(out, tmp_path, edit)).problems
    assert [(p.key, p.value) for p in problems] == [(key, value)], [str(p) for p in problems]


def test_the_model_suggestion_ignores_case(tmp_path, capsys, cached):
    out, _ = _init(capsys, tmp_path)
    bad = _edited(out, tmp_path, lambda r: r["sections"]["support"]["pairs"][0].update(
        rl=RL.upper().replace("-", "_")))
    [e] = check_study(bad).problems
    assert f"did you mean {RL!r}" in str(e)


def test_the_notebooks_read_the_check_s_cache(tmp_path, capsys, cached, monkeypatch):
    out, _ = _init(capsys, tmp_path)
    assert check_study(out).ok
    import leash_eval.studies as tk

    def no_reading(*a, **k):
        raise AssertionError("read the file again")

    monkeypatch.setattr(tk, "load_counts", no_reading)
    s = load_study(out)
    assert s.summaries("support")["c"].sum() == pd.read_csv(tmp_path / "counts.csv")["c"].sum()
    # an edited input is read again (its sha256 changed)
    f = pd.read_csv(tmp_path / "counts.csv")
    f.loc[0, "c"] = 1 - min(f.loc[0, "c"], 1)
    f.to_csv(tmp_path / "counts.csv", index=False)
    with pytest.raises(AssertionError, match="read the file again"):
        load_study(out).summaries("support")


@pytest.mark.slow
def test_shipped_studies_check_clean():
    for name in ("paper", "demo"):
        result = check_study(name)
        assert result.ok, result.lines()
    assert ("section 'support'", "it lists no sources") in check_study("paper").skipped


def test_passk_on_counts_needs_no_option(capsys, tmp_path):
    counts = _counts(tmp_path)
    code, out, err = _run(capsys, "-q", "passk", str(counts), "--k", "1,8,128", "--json")
    assert code == 0, err
    rows = json.loads(out)
    f = pd.read_csv(counts)
    for r in rows:
        g = f[f["model"] == r["model"]]
        exact = sum(1 - Fraction(math.comb(n - c, r["k"]), math.comb(n, r["k"]))
                    for n, c in zip(g["n"], g["c"])) / len(g)
        assert r["estimator"] == "unbiased"
        assert r["pass_at_k"] == pytest.approx(float(exact), rel=1e-12)


def test_rescore_without_earlier_verdicts_leaves_changed_empty(capsys, tmp_path):
    pytest.importorskip("math_verify")
    f = tmp_path / "gens.jsonl"
    f.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": "1",
                                     "sample_idx": i, "response": r, "gold": "3"}) + "\n"
                         for i, r in enumerate(["\\boxed{3}", "\\boxed{4}"])))
    code, out, err = _run(capsys, "-q", "rescore", str(f), "--json")
    assert code == 0, err
    [row] = json.loads(out)
    assert row["changed"] is None and row["accuracy_after"] == 0.5


def test_reproduce_names_itself_one_way(capsys):
    from leash_eval.run import reproduce

    with pytest.raises(SystemExit):
        reproduce.main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: leash reproduce") and "python -m leash_eval.run.reproduce [" \
        not in out
    assert reproduce.main(["--data", "nothere.yaml"]) == 2
    assert capsys.readouterr().err.startswith("leash reproduce: --data 'nothere.yaml'")


def test_reproduce_refuses_a_mislabelled_study_before_any_kernel(tmp_path, capsys, cached,
                                                                   monkeypatch):
    from leash_eval.run import reproduce

    out, _ = _init(capsys, tmp_path)
    bad = _edited(out, tmp_path, lambda r: r.update(
        benchmarks={"MATH500": r["benchmarks"]["math500"]}))

    def no_kernel(*a, **k):
        raise AssertionError("a notebook ran")

    monkeypatch.setattr(reproduce, "run_all", no_kernel)
    assert reproduce.main(["--data", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("leash reproduce: study file")
    assert "did you mean 'MATH500'" in err[0]


def test_a_study_s_folder_and_suffix_come_from_its_name(tmp_path, capsys, cached):
    from leash.artifacts import artifact_name
    from leash_eval.run import reproduce

    out, _ = _init(capsys, tmp_path)
    renamed = _edited(out, tmp_path, lambda r: r.update(name="My Study"))
    assert reproduce._label(str(renamed)) == "my-study"
    assert artifact_name("table1", load_study(renamed)) == "table1_my-study"


@pytest.mark.slow
def test_reproduce_starts_no_kernel_for_the_sections_the_check_skips(tmp_path, capsys, cached,
                                                                      monkeypatch):
    """`make reproduce DATA=` on a counts study (a support section only): the notebooks of
    the sections its check finds skipped start no kernel (no cell of their pages ran), each
    is reported skipped with the reason a notebook gives, and its page is there for the
    site. A -p run on the study goes to the scratch folder, never the study's own."""
    import nbformat

    from leash_eval.run import reproduce
    from leash_eval.run.site import _executed_status

    out, _ = _init(capsys, tmp_path)
    figs = tmp_path / "figs"
    code = reproduce.main(["--data", str(out), "--only", "03", "06", "--outdir", str(figs),
                           "--jobs", "2"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "section 'gym' will be skipped: the study has no section 'gym'" in err
    for run, section in (("03_figures2-4_reasoning_gym", "gym"),
                         ("06_table4_checkpoints", "checkpoints")):
        reason = (f"study 'my-study' has no data for this artifact: its section {section!r} "
                  "is missing or lists no sources (sections: ['support'])")
        assert f"] {run}.my-study ... skipped: {reason} (" in err, err
        nb = nbformat.read(figs / ".executed" / f"{run}.my-study.ipynb", as_version=4)
        assert all(c.get("execution_count") is None for c in nb.cells)  # no kernel
        assert _executed_status(nb) == ("skipped", reason)
    seen = {}
    monkeypatch.setattr(reproduce, "run_all", lambda runs, **kw: seen.update(kw) or [])
    assert reproduce.main(["--data", str(out), "--only", "01", "-p", "n_boot", "0"]) == 0
    assert seen["outdir"] == reproduce.SCRATCH  # not build/my-study/


@pytest.mark.slow
def test_init_check_and_reproduce_make_the_support_tables(tmp_path, capsys, cached):
    """The whole route on a counts file, no hand edit: init, check, the notebooks."""
    from leash_eval.run import reproduce

    out, _ = _init(capsys, tmp_path)
    assert _run(capsys, "study", "check", str(out))[0] == 0
    figs, build = tmp_path / "figs", tmp_path / "nb"
    code = reproduce.main(["--data", str(out), "--only", "01", "02", "--outdir", str(figs),
                           "--build", str(build)])
    err = capsys.readouterr().err
    assert code == 0, err
    table = pd.read_csv(figs / "table_support_qwen2.5-math-7b-qwen2.5-math-7b-grpo_my-study.csv")
    f = pd.read_csv(tmp_path / "counts.csv")
    wide = f.pivot(index="question_id", columns="model", values="c") > 0
    row = table[table["Dataset"] == "math500"].iloc[0]
    assert row["P"] == int((wide[BASE] & wide[RL]).sum())
    assert row["E"] == int((~wide[BASE] & wide[RL]).sum())
    assert row["k"] == 128
    md = (figs / "table1_my-study.md").read_text()
    assert "The Invisible Leash" not in md and RL in md  # the study's own title


def test_the_entropy_scatter_leaves_out_what_has_no_token_entropy():
    from leash.artifacts import entropy_scatter_data

    long = pd.DataFrame({
        "model": ["b", "r", "b2", "r2"], "role": ["base", "rlvr", "base", "rlvr"],
        "base_model": [None, "b", None, "b2"], "benchmark": "MATH500",
        "token_entropy": [0.4, 0.5, np.nan, 0.3], "answer_entropy": [1.0, 0.5, 0.9, 0.2]})
    data, note = entropy_scatter_data(long)
    assert data["model"].tolist() == ["b", "r"]  # b2 lacks it, r2 loses its base
    assert "b2" in note and "r2" in note and "token_entropy" in note
    none, note = entropy_scatter_data(long.assign(token_entropy=np.nan))
    assert none.empty and "not drawn" in note
    full, note = entropy_scatter_data(long.fillna({"token_entropy": 0.1}))
    assert len(full) == 4 and note == ""


def test_a_cached_summary_is_the_summary_with_its_provenance(tmp_path):
    from leash_eval.studies import cached_counts, load_counts

    counts = _counts(tmp_path)
    fresh = load_counts([counts])
    first = cached_counts(counts, cache_dir=tmp_path / "cache")
    [stored] = (tmp_path / "cache").glob("counts.*.parquet")
    again = cached_counts(counts, cache_dir=tmp_path / "cache")
    assert fresh.equals(first) and fresh.equals(again)
    assert again.attrs["provenance"] == fresh.attrs["provenance"]  # rows read, used, rejected
    assert again.attrs["provenance"]["rows_read"] == 24
    # other reader options or another NA rule are other entries, never this one
    cached_counts(counts, cache_dir=tmp_path / "cache", na="truncated")
    cached_counts(counts, cache_dir=tmp_path / "cache", fmt="counts")
    assert len(list((tmp_path / "cache").glob("counts.*.parquet"))) == 3 and stored.is_file()
    assert not list((tmp_path / "cache").glob("*.tmp"))  # written whole
