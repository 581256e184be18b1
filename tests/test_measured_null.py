"""The measured null (leash.analysis.measured_null), the replicate runs of a study
(``replicates:`` on a pair) and what a generations file tells of its sample order
(leash_eval.studies.sample_digest).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from _support import raises_with
from leash import artifacts as A
from leash.analysis.measured_null import (
    NULL_COLUMNS,
    STATISTICS,
    halves_null,
    measured_null,
    null_table,
    replicate_null,
)
from leash.analysis.pairing import pair_counts
from leash.analysis.tables import support_table
from leash.core.passk import pass_at_k
from leash.core.support import expected_support_counts
from leash.sources.study import load_study
from leash_eval.run.study_check import check_study
from leash_eval.studies import sample_digest

QUESTIONS = [f"q{i}" for i in range(12)]


def samples_file(path, model, correct: np.ndarray, benchmark="toy", responses=True):
    """A samples JSONL file: ``correct`` is (questions, samples) of bools."""
    rows = []
    for q, row in zip(QUESTIONS, correct):
        for i, ok in enumerate(row):
            r = {"model": model, "benchmark": benchmark, "question_id": q, "sample_idx": i,
                 "correct": bool(ok), "answer": "1" if ok else "2"}
            if responses:
                r["response"] = f"{model} {q} sample {i}: {'right' if ok else 'wrong'}"
            rows.append(r)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def runs(seed, n=8):
    """Four runs of one model (the same rates) and a trained model, as correctness matrices."""
    rng = np.random.default_rng(seed)
    p = np.concatenate([[0.0, 0.02, 0.05, 0.1, 0.3], rng.uniform(0.3, 1, len(QUESTIONS) - 5)])
    draw = [rng.random((len(QUESTIONS), n)) < p[:, None] for _ in range(4)]
    trained = rng.random((len(QUESTIONS), n)) < np.where(p < 0.06, 0.0, p ** 0.5)[:, None]
    return draw, trained


def study_file(tmp_path, replicates=None):
    """The study of the fixture's files; ``replicates``: the YAML value of the pair's
    ``replicates.base``.
    """
    extra = "" if replicates is None else f"\n        replicates:\n          base: {replicates}"
    (tmp_path / "study.yaml").write_text(
        "name: nulltest\ntitle: null test\nbenchmarks:\n  toy: {domain: math, budget: 8}\n"
        "sections:\n  support:\n    sources:\n      - path: data/*.jsonl\n    pairs:\n"
        "      - label: P\n        base: base\n        rl: rl" + extra + "\n",
        encoding="utf-8")
    return tmp_path / "study.yaml"


@pytest.fixture
def study(tmp_path):
    draw, trained = runs(1)
    (tmp_path / "data").mkdir()
    for i, c in enumerate(draw):
        samples_file(tmp_path / "data" / f"base{i}.jsonl", "base" if i == 0 else f"base-{i}", c)
    samples_file(tmp_path / "data" / "rl.jsonl", "rl", trained)
    return tmp_path


REPLICATES = "[base-1, base-2, base-3]"


def with_replicates(tmp_path, runs_text):
    return load_study(study_file(tmp_path, replicates=runs_text))


# ---- random halves ---------------------------------------------------------------------------

def test_random_halves_follow_the_hypergeometric_split():
    n = np.array([8, 8, 9, 20, 2])
    c = np.array([0, 1, 3, 10, 2])
    codes = halves_null(n, c, rng=np.random.default_rng(0), n_splits=40_000)
    h = n // 2
    # min_count 1: the first half finds the question with the unbiased pass@(n // 2); both
    # halves miss it with 1 - pass@(2 (n // 2)); so E = S = pass@2h - pass@h, O = 1 - pass@2h
    p_h, p_2h = pass_at_k(n, c, h), pass_at_k(n, c, 2 * h)
    want = {1: p_2h - p_h, 2: p_2h - p_h, 3: 1 - p_2h, 0: 2 * p_h - p_2h}
    for code, p in want.items():
        got = (codes == code).mean(axis=0)
        se = np.sqrt(p * (1 - p) / codes.shape[0]) + 1e-12
        assert (np.abs(got - p) <= 5 * se).all(), (code, got, p)
    same = halves_null(n, c, rng=np.random.default_rng(0), n_splits=40_000)
    np.testing.assert_array_equal(codes, same)  # the caller's seed decides every draw
    with pytest.raises(ValueError, match="n = 1"):
        halves_null(np.array([1]), np.array([0]), rng=np.random.default_rng(0))


# ---- replicate runs --------------------------------------------------------------------------

@pytest.mark.slow
def test_replicate_null_compares_every_two_runs(study):
    s = load_study(study_file(study, replicates=REPLICATES))
    summary = s.summaries("support")
    names = ["base", "base-1", "base-2", "base-3"]
    rep = replicate_null(summary, names)
    assert len(rep["comparisons"]) == 6
    e = rep["values"]["toy"][:, STATISTICS.index("E")]
    ref = [support_table(pair_counts(summary, base=a, rl=b))["E"].iat[0]
           for a, b in rep["comparisons"]]
    np.testing.assert_array_equal(e, ref)


@pytest.mark.slow
def test_measured_null_sets_each_null_beside_the_pair_at_its_budget(study):
    s = load_study(study_file(study, replicates=REPLICATES))
    p = s.section("support").pairs[0]
    assert p.runs("base") == ("base", "base-1", "base-2", "base-3") and p.runs("rl") == ("rl",)
    paired = s.paired("support", p)
    t = measured_null(s.summaries("support"), paired, p.base, p.rl,
                      replicates=dict(p.replicates), digest=s.sample_digest("support"),
                      rng=np.random.default_rng(0), n_splits=50)
    assert list(t.columns) == NULL_COLUMNS and not t.attrs["notes"]
    got = t.set_index(["side", "method", "statistic"])
    full = support_table(paired)
    assert got.loc[("base", "replicate runs", "E"), "pair"] == full["E"].iat[0]
    assert got.loc[("base", "replicate runs", "E"), "comparisons"] == 6
    assert ("rl", "replicate runs", "E") not in got.index  # one run of the RLVR model
    # the random halves: the pair's exact expectation at n // 2 = 4
    exp = expected_support_counts(paired["n_base"], paired["c_base"], paired["n_rl"],
                                  paired["c_rl"], 4)
    assert got.loc[("base", "random halves", "E"), "pair"] == pytest.approx(exp.E)
    assert got.loc[("base", "random halves", "E"), "k"] == 4
    # the ordered halves: the pair at its first 4 samples, beside the first 4 against the next
    first = support_table(paired, k=4)
    assert got.loc[("rl", "ordered halves", "S"), "pair"] == first["S"].iat[0]
    digest = s.sample_digest("support")
    base = digest[digest["model"] == "base"].set_index("question_id").loc[
        paired["question_id"]]
    e_null = int(((base["c_first"] == 0) & (base["c_second"] > 0)).sum())
    assert got.loc[("base", "ordered halves", "E"), "null_mean"] == e_null
    assert np.isnan(got.loc[("base", "ordered halves", "E"), "null_sd"])  # one split
    row = got.loc[("base", "random halves", "NDR")]
    assert row["difference"] == pytest.approx(row["pair"] - row["null_mean"])
    wide = null_table(t)
    assert {"E", "E null", "E null sd", "E - null", "NSCR - null"} <= set(wide.columns)
    assert len(wide) == 5  # base: replicates, random, ordered; rl: random, ordered


@pytest.mark.slow
def test_the_artifact_of_a_study_with_replicates(study):
    study_file(study, replicates=REPLICATES)
    t = A.measured_null(study / "study.yaml", n_splits=20)
    assert set(t["method"]) == {"replicate runs", "random halves", "ordered halves"}
    from leash.output.views import null_view

    view = null_view(t)
    assert view.shown.shape[0] == len(A.null_table(t))
    fig_data = A.null_figure_data(t)
    assert set(fig_data["statistic"]) == {"E", "S"} and fig_data["row"].is_unique is False
    with pytest.raises(ValueError, match="per-question data"):
        A.measured_null("paper")


# ---- bad replicates: one line naming the file, the key and the fix -------------------------

@pytest.mark.slow
def test_a_replicate_that_is_no_model_or_listed_twice(study):
    s = with_replicates(study, "[base-1, bse-2]")
    [p] = s.replicate_problems("support")
    assert p.key == "sections.support.pairs[0].replicates.base[1]" and p.value == "bse-2"
    assert p.line is not None and "did you mean 'base-2'" in str(p)
    s = with_replicates(study, "[base-1, base-1]")
    [p] = s.replicate_problems("support")
    assert p.value == "base-1" and "listed already" in str(p)
    [p] = with_replicates(study, "[base]").replicate_problems("support")
    assert p.value == "base"


@pytest.mark.slow
def test_the_same_file_twice_is_refused(study):
    shutil.copy(study / "data" / "base0.jsonl", study / "copy.jsonl")
    text = (study / "copy.jsonl").read_text().replace('"model": "base"', '"model": "base-9"')
    (study / "data" / "base9.jsonl").write_text(text)
    s = with_replicates(study, "[base-9]")
    [p] = s.replicate_problems("support")
    # the bytes differ (the label), the generations do not: the same counts
    assert p.value == "base-9" and "the same generations twice" in str(p)
    s = with_replicates(study, "[base-1]")
    s.read_section("support")
    files = s.model_files("support")
    files["base-1"] = files["base"]  # two labels read from one file
    s._files["support"] = [(f, [m]) for m, fs in files.items() for f in fs]
    [p] = s.replicate_problems("support")
    assert "base0.jsonl" in p.value and "the same bytes" in str(p)


def test_replicates_with_other_questions_or_budgets(study):
    draw, _ = runs(2)
    samples_file(study / "data" / "base1.jsonl", "base-1", draw[1][:, :6])  # n = 6
    [p] = with_replicates(study, "[base-1]").replicate_problems("support")
    assert "n = 6" in str(p) and "budget" in str(p)
    rows = [json.loads(x) for x in (study / "data" / "base1.jsonl").read_text().splitlines()]
    samples_file(study / "data" / "base1.jsonl", "base-1", draw[1])
    text = (study / "data" / "base1.jsonl").read_text().replace('"q11"', '"q99"')
    (study / "data" / "base1.jsonl").write_text(text)
    [p] = with_replicates(study, "[base-1]").replicate_problems("support")
    assert "toy/q11" in str(p) and "toy/q99" in str(p) and "same questions" in str(p)
    assert rows  # the file was read back


def test_study_check_and_the_notebook_refuse_bad_replicates(study):
    study_file(study, replicates="[base-1, bse-2]")
    check = check_study(study / "study.yaml", sections=["support"])
    assert [p.key for p in check.problems] == ["sections.support.pairs[0].replicates.base[1]"]
    with raises_with(ValueError, key="sections.support.pairs[0].replicates.base[1]",
                     value="bse-2"):
        A.measured_null(study / "study.yaml")
    study_file(study, replicates="base-1")
    with pytest.raises(ValueError, match="must be a list of model labels"):
        load_study(study / "study.yaml")


# ---- the sample order of a file ---------------------------------------------------------------

def test_sample_digest(tmp_path):
    correct = np.zeros((len(QUESTIONS), 9), dtype=bool)
    correct[0, [1, 5, 8]] = True  # odd n: halves of 4, the last sample left out
    correct[1, :] = True
    f = samples_file(tmp_path / "s.jsonl", "m", correct)
    d = sample_digest(f).set_index("question_id")
    assert (d.loc["q0", "n_ordered"], d.loc["q0", "c_first"], d.loc["q0", "c_second"]) == (9, 1,
                                                                                            1)
    assert (d.loc["q1", "c_first"], d.loc["q1", "c_second"]) == (4, 4)
    assert d.loc["q0", "response"] == "m q0 sample 1: right" and d.loc["q0", "response_correct"]
    assert d.loc["q2", "response"] == "m q2 sample 0: wrong"
    cut = sample_digest(f, response_chars=5).set_index("question_id")
    assert cut.loc["q0", "response"] == "m q0 ..."
    bare = samples_file(tmp_path / "bare.jsonl", "m", correct, responses=False)
    assert sample_digest(bare)["response"].isna().all()
    counts = tmp_path / "counts.csv"
    pd.DataFrame({"model": "m", "benchmark": "toy", "question_id": QUESTIONS, "n": 9,
                  "c": correct.sum(axis=1)}).to_csv(counts, index=False)
    assert sample_digest(counts) is None


def test_available_study_says_why_instead_of_skipping(study, tmp_path):
    from leash.run.notebook import available_study

    s, why = available_study(study_file(study), "support")
    assert s is not None and why == ""
    (study / "study.yaml").write_text((study / "study.yaml").read_text().replace(
        "data/*.jsonl", "nowhere/*.jsonl"))
    s, why = available_study(study / "study.yaml", "support")
    assert s is None and "nowhere" in why
