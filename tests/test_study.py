"""Study files: parsing, validation messages, and loading real data through the manifest."""

import json

import pandas as pd
import pytest

from _support import MIRROR, raises_with
from leash.sources.study import list_studies, load_study


def test_shipped_studies_parse():
    assert {"paper", "demo", "gsm8k-probe", "math-eval-example"} <= set(list_studies())
    paper = load_study("paper")
    assert not paper.simulated and load_study("demo").simulated
    support = paper.section("support")
    assert [p.label for p in support.pairs][:2] == ["ProRL-1.5B-v1", "ProRL-1.5B-v2"]
    assert not paper.has_data("support")  # the authors released no generations
    assert paper.budget("MATH500") == 8192
    assert paper.budget("MATH500", support.pair("Nemotron-1-14B")) == 4096
    assert paper.budget("SimpleQA", support.pair("Nemotron-1-14B")) == 1024
    assert paper.section("sft").options["ks"] == [1, 2, 4, 8, 16, 32, 64, 128, 256]


def test_paper_study_matches_paper_benchmark_sizes():
    from leash.sources.paper import load

    bench = load("benchmarks").set_index("benchmark")
    study = load_study("paper").benchmarks.set_index("benchmark")
    for name, row in study.iterrows():
        assert int(row.N) == int(bench.loc[name, "N"]), name
        assert row.domain == bench.loc[name, "domain"], name


def write(tmp_path, text):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    return p


def test_study_errors_name_the_problem(tmp_path):
    # (Section names are checked now: these cases used to be written under a section "s",
    # which the notebooks never read; the bad-input classes are in test_bad_input_config.py.)
    with raises_with(key="benchmarks.A.domain", value="maths", text="did you mean `math`?"):
        load_study(write(tmp_path, "benchmarks: {A: {domain: maths}}"))
    with raises_with(key="sections.support.sources[0].file", text="unknown key"):
        load_study(write(tmp_path, "sections: {support: {sources: [{file: x}]}}"))
    with raises_with(key="sections.support.sources[0]", text="exactly one of path, dataset, demo"):
        load_study(write(tmp_path, "sections: {support: {sources: [{model: m}]}}"))
    with raises_with(key="sections.support.sources[0].modle", text="did you mean `model`?"):
        load_study(write(tmp_path, "sections: {support: {sources: [{path: x, modle: m}]}}"))
    with raises_with(key="sections.support.pairs[0].rl", text="lacks the required key"):
        load_study(write(tmp_path, "sections: {support: {pairs: [{base: a}]}}"))
    with pytest.raises(FileNotFoundError, match="No study file 'nope'"):
        load_study("nope")
    s = load_study(write(tmp_path, "sections: {support: {sources: [{path: missing*.jsonl}]}}"))
    with pytest.raises(FileNotFoundError, match="matches no file"):
        s.summaries("support")
    with pytest.raises(ValueError, match=r"no section 'x'; sections: \['support'\]"):
        s.section("x")


def test_path_sources_are_relative_to_the_study_file(tmp_path):
    rows = [{"model": m, "benchmark": "A", "question_id": q, "n": 4, "c": c}
            for m, q, c in [("b", "1", 1), ("b", "2", 0), ("r", "1", 0), ("r", "2", 2)]]
    pd.DataFrame(rows).to_csv(tmp_path / "counts.csv", index=False)
    s = load_study(write(tmp_path, "benchmarks: {A: {domain: math}}\n"
                                   "sections: {support: {sources: [{path: counts.csv}],"
                                   " pairs: [{base: b, rl: r}]}}"))
    f = s.summaries("support")
    assert f.groupby("model")["c"].sum().to_dict() == {"b": 1, "r": 2}
    bad = load_study(write(tmp_path, "benchmarks: {B: {domain: math}}\n"
                                     "sections: {support: {sources: [{path: counts.csv}]}}"))
    with raises_with(key="benchmarks", value="A", file=bad.source):
        bad.summaries("support")
    # a label that differs in case or punctuation only: "did you mean" names the declared one
    near = load_study(write(tmp_path, "benchmarks: {a_: {domain: math}}\n"
                                      "sections: {support: {sources: [{path: counts.csv}]}}"))
    with raises_with(key="benchmarks", value="A", line=1, text="did you mean 'a_'?"):
        near.summaries("support")


@pytest.mark.skipif(not MIRROR.is_dir(), reason="real-data mirror (LEASH_DATA_MIRROR) absent")
def test_gsm8k_probe_through_manifest_matches_hand_count(monkeypatch):
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    s = load_study("gsm8k-probe")
    f = s.summaries("support")
    for model, name in (("sft", "final_2048.sft_raw.jsonl"), ("rl", "final_2048.rl_raw.jsonl")):
        with open(MIRROR / "gsm8k-sft-vs-rlvr-probe" / name) as fh:
            raw = [json.loads(line) for line in fh]
        hand = {str(r["qid"]): sum(bool(x["correct"]) for x in r["rollouts"]) for r in raw}
        got = f[f.model == model].set_index("question_id")["c"].to_dict()
        assert got == hand
        assert (f[f.model == model]["n"] == 8).all()


def _ordered_samples(tmp_path):
    """Benchmark A, 8 samples per question in generation order; the RLVR model solves question
    1 only at sample 6, so it finds it at budget 8 but not at budget 4."""
    rows = [{"model": m, "benchmark": "A", "question_id": q, "sample_idx": i, "correct": i == first}
            for m, q, first in [("b", "1", 0), ("r", "1", 6), ("b", "2", 0), ("r", "2", 1)]
            for i in range(8)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_study_budgets_are_where_models_are_compared(tmp_path):
    from leash import artifacts as A
    from leash.analysis.sensitivity import sensitivity_sweep

    _ordered_samples(tmp_path)
    sections = ("sections: {support: {sources: [{path: s.jsonl}],"
                " pairs: [{label: p, base: b, rl: r%s}]}}")
    s = load_study(write(tmp_path, "benchmarks: {A: {domain: math, budget: 4}}\n" + sections % ""))
    assert s.budgets("support") == {"A": 4}
    p = s.paired("support")
    assert (p["n_base"] == 4).all() and p.set_index("question_id")["found_rl"].to_dict() == {
        "1": False, "2": True}
    assert (s.paired("support", at_budgets=False)["n_base"] == 8).all()
    row = A.support_long(s).iloc[0]
    assert (row.k, row.P, row.S) == (4, 1, 1)
    sweep = sensitivity_sweep(s.paired("support"), min_counts=(1,), zetas=())
    assert sweep[["k", "k_min", "k_max", "full_budget", "P", "S"]].to_dict("records") == [
        {"k": 4, "k_min": 4, "k_max": 4, "full_budget": True, "P": 1, "S": 1}]
    # a pair's budgets come first; a budget the data cannot give is an error naming it
    s = load_study(write(tmp_path, "benchmarks: {A: {domain: math, budget: 16}}\n"
                         + sections % ", budgets: {math: 8}"))
    assert A.support_long(s).iloc[0].P == 2
    s = load_study(write(tmp_path, "benchmarks: {A: {domain: math, budget: 16}}\n" + sections % ""))
    with pytest.raises(ValueError, match=r"benchmark 'A' has the budget 16 \(`benchmarks.A.budget`"
                                         r".* pair 'p' has only n = 8 .* at most 8\."):
        A.support_long(s)


def test_pass_at_k_curves_stop_at_the_study_budget_with_the_study_estimator(tmp_path):
    from leash import artifacts as A

    _ordered_samples(tmp_path)
    gym = ("benchmarks: {A: {domain: reasoning-gym, budget: 4}}\n"
           "sections: {gym: {sources: [{path: s.jsonl}], pairs: [{base: b, rl: r}]%s}}")
    # a study that names no estimator gets Chen et al.'s unbiased one (user data)
    g = A.gym_curves(load_study(write(tmp_path, gym % "")))
    assert sorted(set(g["k"])) == [1, 2, 4] and set(g["estimator"]) == {"unbiased"}
    assert "from the default" in A.estimator_note(load_study(write(tmp_path, gym % "")), "gym")
    s = load_study(write(tmp_path, gym % ", estimator: first-k"))
    g = A.gym_curves(s)
    assert set(g["estimator"]) == {"first-k"}
    rl = g[g["role"] == "rlvr"].set_index("k")["pass_at_k"]
    assert rl.to_dict() == {1: 0.0, 2: 0.5, 4: 0.5}  # question 1 is solved at sample 6 only
    assert set(A.gym_curves(s, estimator="unbiased")["estimator"]) == {"unbiased"}  # given
    s = load_study(write(tmp_path, gym % ", estimator: unbiased"))
    assert set(A.gym_curves(s)["estimator"]) == {"unbiased"}
    assert set(A.gym_curves(s, estimator="first-k")["estimator"]) == {"first-k"}  # given: wins
    assert "from the study's `gym` section" in A.estimator_note(s, "gym")
    assert "from the notebook's `estimator`" in A.estimator_note(s, "gym", "first-k")
    sft = ("benchmarks: {A: {domain: math, budget: 4}}\n"
           "sections: {sft: {sources: [{path: s.jsonl}], pairs: [{label: RL, base: b, rl: r}]%s}}")
    t = A.sft_passk(load_study(write(tmp_path, sft % "")))
    assert sorted(set(t["k"])) == [1, 2, 4] and set(t["model"]) == {"Base", "RL"}
    with pytest.raises(ValueError, match=r"k = 8 exceeds the study's budget 4 of benchmark 'A'"):
        A.sft_passk(load_study(write(tmp_path, sft % ", ks: [1, 8]")))
    with pytest.raises(ValueError, match=r"`sections.sft.estimator` must be one of"):
        load_study(write(tmp_path, sft % ", estimator: chen"))
    with pytest.raises(ValueError, match=r"unknown key `sections.entropy.estimator`"):
        load_study(write(tmp_path, "sections: {entropy: {estimator: unbiased}}"))


def test_pass_at_k_curves_of_every_pair_and_benchmark(tmp_path):
    """The curves behind Figure 1's bars: k = 1, 2, 4, ... up to the study's budget, each value
    the unbiased estimator (user data: the default) computed here with math.comb and
    Fraction, or the first k samples when the section declares first-k."""
    import math
    from fractions import Fraction

    from leash import artifacts as A

    _ordered_samples(tmp_path)
    support = ("benchmarks: {A: {domain: math, budget: 4}}\n"
               "sections: {support: {sources: [{path: s.jsonl}], pairs: [{label: p, base: b, "
               "rl: r}]%s}}")
    c = A.passk_curves(load_study(write(tmp_path, support % "")))
    assert list(c.columns) == ["pair", "benchmark", "domain", "model", "role", "k", "pass_at_k",
                               "n_questions", "estimator"]
    assert set(c["estimator"]) == {"unbiased"} and sorted(set(c["k"])) == [1, 2, 4]
    for k in (1, 2, 4):  # each question has 1 correct of n = 8 (every sample, not the first 4)
        exact = 1 - Fraction(math.comb(7, k), math.comb(8, k))
        got = c[c["k"] == k].set_index("role")["pass_at_k"]
        assert got["base"] == pytest.approx(float(exact), rel=1e-12)
        assert got["rlvr"] == pytest.approx(float(exact), rel=1e-12)
    first = A.passk_curves(load_study(write(tmp_path, support % ", estimator: first-k")))
    rl = first[first["role"] == "rlvr"].set_index("k")["pass_at_k"]
    assert rl.to_dict() == {1: 0.0, 2: 0.5, 4: 0.5}  # question 1 at sample 6, question 2 at 1
    assert set(first["estimator"]) == {"first-k"}
    with pytest.raises(ValueError, match="largest budget only"):
        A.passk_curves("paper")


def test_first_k_curves_of_counts_without_the_sample_order_name_the_remedy(tmp_path):
    from leash import artifacts as A

    (tmp_path / "c.csv").write_text("model,benchmark,question_id,n,c\nb,A,1,8,2\nr,A,1,8,3\n")
    s = load_study(write(tmp_path, "benchmarks: {A: {domain: math}}\nsections: {support: "
                                   "{sources: [{path: c.csv}], pairs: [{base: b, rl: r}]}}"))
    assert set(A.passk_curves(s)["estimator"]) == {"unbiased"}  # counts: no option needed
    with pytest.raises(ValueError, match="first correct sample") as e:
        A.passk_curves(s, estimator="first-k")
    assert e.value.param == "estimator" and "unbiased" in str(e.value)


def test_a_support_pair_whose_rl_model_has_several_steps_is_refused(tmp_path):
    # the support tables compare one model per side; an RLVR model given at several steps
    # counted every question once per step (60 of 20 questions), with no word
    from leash import artifacts as A

    rows = [{"model": m, "benchmark": "A", "question_id": q, "sample_idx": i, "correct": i == 0,
             "step": step} for m, step in (("b", None), ("r", 50), ("r", 100))
            for q in ("1", "2") for i in range(4)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = ("benchmarks: {A: {domain: math}}\nsections:\n  %s: {sources: [{path: s.jsonl}], "
            "pairs: [{label: p, base: b, rl: r}]}\n")
    with pytest.raises(ValueError, match=r"s\.yaml: section 'support', pair 'p': the RLVR model "
                                         r"'r' has rows at 2 steps \(50, 100\).*'checkpoints'"):
        A.support_long(load_study(write(tmp_path, text % "support")))
    # the checkpoints section is where such a run goes: one row per step
    t = A.checkpoint_support(load_study(write(tmp_path, text % "checkpoints")))
    assert t.groupby("step").P.sum().to_dict() == {50: 2, 100: 2}


def test_support_long_computes_only_the_pairs_asked_for(tmp_path):
    # a copy of paper.yaml keeps pairs the user has no files for: asking for the others by
    # label (the notebooks' `pairs` parameter) works, as it did not when every pair was paired
    from leash import artifacts as A

    _ordered_samples(tmp_path)
    s = load_study(write(tmp_path, "benchmarks: {A: {domain: math}}\nsections: {support: "
                                   "{sources: [{path: s.jsonl}], pairs: [{label: mine, base: b, "
                                   "rl: r}, {label: theirs, base: b, rl: nobody}]}}"))
    t = A.support_long(s, pairs=["mine"])
    assert set(t["pair"]) == {"mine"} and t.iloc[0][["P", "E", "S", "O"]].tolist() == [2, 0, 0, 0]
    # in the study file's words: its file, section and pair, and the pair's keys
    with pytest.raises(ValueError, match=r"s\.yaml, section 'support', pair 'theirs': Its `rl` "
                                         r"selects no rows: model 'nobody' is not in the summary"):
        A.support_long(s)
    same = load_study(write(tmp_path, "benchmarks: {A: {domain: math}}\nsections: {support: "
                                      "{sources: [{path: s.jsonl}], pairs: [{base: b, rl: b}]}}"))
    with pytest.raises(ValueError, match=r"Its `base` and `rl` name the same model 'b'") as info:
        A.support_long(same)
    assert "'base' and 'rl' parameters" not in str(info.value)
    with pytest.raises(ValueError, match=r"Unknown pair\(s\) \['ours'\]; available: \['mine', "
                                         r"'theirs'\]"):
        A.support_long(s, pairs=["ours"])


def test_a_pair_may_drop_the_questions_one_model_lacks(tmp_path):
    # the library's restrict_to_shared, which a study file could not set: its error named a
    # keyword argument no notebook parameter or study key reaches
    import warnings

    from leash import artifacts as A

    _ordered_samples(tmp_path)
    extra = {"model": "b", "benchmark": "A", "question_id": "3", "sample_idx": 0, "correct": True}
    with open(tmp_path / "s.jsonl", "a") as fh:
        fh.write(json.dumps(extra) + "\n")
    text = ("benchmarks: {A: {domain: math, budget: 1}}\nsections: {support: {sources: [{path: "
            "s.jsonl}], pairs: [{label: p, base: b, rl: r%s}]}}")
    with pytest.raises(ValueError, match=r"s\.yaml, section 'support', pair 'p': ") as info:
        A.support_long(load_study(write(tmp_path, text % "")))
    # the questions one model lacks, and the remedy in the study's keys, not pair_counts'
    msg = str(info.value)
    assert "present for base 'b' only: 1 questions (A/3)" in msg and "`shared_only: true`" in msg
    assert "restrict_to_shared" not in msg and "pair_counts" not in msg
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        t = A.support_long(load_study(write(tmp_path, text % ", shared_only: true")))
    assert any("dropping unshared questions" in str(x.message) for x in w)
    # by hand at budget 1 (sample 0): the base solves questions 1 and 2 there, the RLVR model
    # neither (its first correct samples are 6 and 1): S = 2; question 3 is dropped
    assert t.iloc[0][["N", "P", "E", "S", "O"]].tolist() == [2, 0, 0, 2, 0]
    with raises_with(key="sections.support.pairs[0].shared_only", value="yes please",
                     text="true or false"):
        load_study(write(tmp_path, text % ", shared_only: yes please"))


def test_a_declared_question_count_the_data_do_not_have_is_said(tmp_path):
    # a run that lost questions (450 of MATH500's 500) was tabled without a word
    import warnings

    from leash import artifacts as A

    _ordered_samples(tmp_path)  # 2 questions
    text = ("benchmarks: {A: {domain: math, N: %d}}\nsections: {support: {sources: [{path: "
            "s.jsonl}], pairs: [{label: p, base: b, rl: r}]}}")
    with pytest.warns(UserWarning, match=r"s\.yaml, section 'support', pair 'p': A declares N = "
                                         r"3 \(`benchmarks\.A\.N`\), the data 2 questions"):
        t = A.support_long(load_study(write(tmp_path, text % 3)))
    assert t.iloc[0].N == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A.support_long(load_study(write(tmp_path, text % 2)))
