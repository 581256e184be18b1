"""The live explorer (leash.run.explore, notebooks/12_explore.ipynb): driven through its widgets'
``.value``, every number it shows equals the non-interactive functions' at that setting
(support_table, bootstrap_support, pass_at_k_curve, crossover_budget, epsilon); its controls
are bounded; the paper's printed numbers disable what they cannot serve, with one line.
"""

import html
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from traitlets import TraitError

import leash
from _support import REPO
from leash import notebook_files
from leash.analysis.tables import default_ks, support_table
from leash.artifacts import support_long
from leash.core.passk import pass_at_k_curve
from leash.core.stats import bootstrap_support, crossover_budget
from leash.core.support import COUNT_NAMES, METRIC_NAMES, epsilon
from leash.run.explore import ZETAS, ExplorerModel, Setting, explore, metrics_html
from leash.run.parameters import notebook_parameters

N_BOOT = 200


@pytest.fixture(scope="module")
def demo():
    return ExplorerModel("demo", n_boot=N_BOOT, seed=3)


@pytest.fixture(scope="module")
def paper():
    return ExplorerModel("paper")


def expected(model, s: Setting):
    """The numbers of setting ``s`` from the non-interactive functions."""
    paired = model.paired(s.pair)
    bench = paired["benchmark"].astype(str)
    pooled = s.scope not in set(bench)
    kw = dict(k=s.k, min_count=s.min_count, budget_rule=s.rule)
    if pooled:
        t = support_table(paired, domains=model.domains, **kw)
        row = t[t["benchmark"] == s.scope].iloc[0]
        sub = paired[bench.isin(model.scope(s.pair, s.scope).benchmark)]
    else:
        sub = paired[bench == s.scope]
        boot = {} if s.k is not None and s.rule == "expected" else dict(
            n_boot=N_BOOT, rng=np.random.default_rng(3))
        row = support_table(sub, **kw, **boot).iloc[0]
    out = {"counts": tuple(float(row[c]) for c in COUNT_NAMES),
           "metrics": {m: float(row[m]) for m in METRIC_NAMES}}
    if not pooled and "SRR low" in row:
        out["intervals"] = {m: (row[f"{m} low"], row[f"{m} high"]) for m in METRIC_NAMES}
    elif pooled and not (s.k is not None and s.rule == "expected"):
        if s.k is None:
            cb, cr, mc = sub["c_base"], sub["c_rl"], s.min_count
        else:  # found within the first k samples, as counts of 0/1
            cb = ((sub["first_correct_base"] >= 0) & (sub["first_correct_base"] < s.k)).astype(int)
            cr = ((sub["first_correct_rl"] >= 0) & (sub["first_correct_rl"] < s.k)).astype(int)
            mc = 1
        f = bootstrap_support(cb.to_numpy(dtype=np.int64), cr.to_numpy(dtype=np.int64),
                              rng=np.random.default_rng(3), n_boot=N_BOOT, min_count=mc,
                              strata=sub["benchmark"].astype(str).to_numpy())
        out["intervals"] = {m: (f.at[m, "low"], f.at[m, "high"]) for m in METRIC_NAMES}
    n = sub["n_base"].to_numpy(dtype=np.int64)
    ks = default_ks(int(min(n.min(), sub["n_rl"].min())))
    curves = []
    for side in ("base", "rl"):
        fc = (sub[f"first_correct_{side}"].to_numpy(dtype=np.int64)
              if s.estimator == "first-k" else None)
        curves.append(pass_at_k_curve(sub[f"n_{side}"].to_numpy(dtype=np.int64),
                                      sub[f"c_{side}"].to_numpy(dtype=np.int64), ks,
                                      estimator=s.estimator, first_correct=fc).mean(axis=0))
    out.update(ks=ks, curve_base=curves[0], curve_rl=curves[1],
               crossover=crossover_budget(curves[0], curves[1], ks))
    k_eff = s.k if s.k is not None else int(n.min())
    out["epsilon"] = epsilon(k_eff, s.zeta)
    return out


def check_shown(app, model):
    """The view equals the non-interactive functions, and the widgets show the view."""
    v = app.view
    e = expected(model, v.setting)
    assert tuple(float(x) for x in v.counts) == e["counts"]
    assert v.metrics.keys() == e["metrics"].keys()
    for m in METRIC_NAMES:
        assert v.metrics[m] == e["metrics"][m] or (np.isnan(v.metrics[m])
                                                   and np.isnan(e["metrics"][m]))
    if "intervals" in e:
        for m in METRIC_NAMES:
            np.testing.assert_array_equal(np.array(v.intervals[m], dtype=float),
                                          np.array(e["intervals"][m], dtype=float))
    else:
        assert v.intervals is None
    np.testing.assert_array_equal(v.ks, e["ks"])
    np.testing.assert_array_equal(v.curve_base, e["curve_base"])
    np.testing.assert_array_equal(v.curve_rl, e["curve_rl"])
    assert v.crossover == e["crossover"] or (np.isnan(v.crossover) and np.isnan(e["crossover"]))
    assert v.epsilon == e["epsilon"]
    # what is shown is the view, formatted
    assert app.widgets["metrics"].value == metrics_html(v)
    text = app.widgets["metrics"].value
    for m in METRIC_NAMES:
        shown = "–" if np.isnan(v.metrics[m]) else f"{v.metrics[m]:.3f}"
        assert f"<td><b>{m}</b></td><td>{shown}</td>" in text
    for name, x in zip(COUNT_NAMES, v.counts):
        shown = str(int(x)) if float(x).is_integer() else f"{x:.1f}"
        assert f"<td><b>{name}</b></td><td>{shown}</td>" in text
    if v.intervals:
        lo, hi = v.intervals["SRR"]
        assert f"[{lo:.3f}, {hi:.3f}]" in text
    assert f"epsilon = {v.epsilon:.4g}" in app.widgets["epsilon"].value
    assert app.widgets["image"].value[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_every_number_shown_equals_the_non_interactive_functions(demo):
    app = explore(model=demo, benchmark="Minerva")
    c = app.controls
    check_shown(app, demo)  # the paper's setting
    for name, value in [("k", 256), ("estimator", "unbiased"), ("zeta", 0.01), ("k", 16),
                        ("rule", "expected"), ("min_count", 3), ("k", 0), ("min_count", 2),
                        ("benchmark", "Overall"), ("k", 64), ("rule", "first-k"),
                        ("benchmark", "Math"), ("pair", "demo-7B")]:
        c[name].value = value
        check_shown(app, demo)
        assert app.last_update_s > 0


def test_the_changes_table_lists_exactly_the_questions_that_moved(demo):
    app = explore(model=demo, benchmark="OlympiadBench")
    before = app.view
    app.controls["k"].value = 64
    after = app.view
    ch = app.changes
    sub = demo.scope(before.setting.pair, "OlympiadBench").frame
    found = {}
    for side in ("base", "rl"):
        fc = sub[f"first_correct_{side}"]
        found[side] = ((sub[f"c_{side}"] >= 1).to_numpy(),
                       ((fc >= 0) & (fc < 64)).to_numpy(dtype=bool))
    moved = (found["base"][0] != found["base"][1]) | (found["rl"][0] != found["rl"][1])
    assert sorted(ch["question_id"]) == sorted(sub.loc[moved, "question_id"].astype(str))
    assert len(ch) > 0 and f"<b>{len(ch)} questions changed category</b>" in \
        app.widgets["changes"].value
    row = ch.iloc[0]
    q = sub[sub["question_id"] == row["question_id"]].iloc[0]
    assert row["base c/n"] == f"{q['c_base']}/{q['n_base']}"
    assert row["before"] != row["after"]
    assert (before.codes != after.codes).sum() == len(ch)


@pytest.mark.slow
def test_controls_are_bounded(demo):
    app = explore(model=demo, benchmark="MATH500")
    c = app.controls
    budgets = [v for _, v in c["k"].options]
    assert budgets == [2 ** i for i in range(13)] + [0]  # powers of two below 8192, then full
    for bad in (3, 10000, -1):
        with pytest.raises(TraitError):
            c["k"].value = bad
    with pytest.raises(TraitError):
        c["zeta"].value = 0.5
    assert list(c["zeta"].options) == list(ZETAS)
    with pytest.raises(TraitError):
        c["estimator"].value = "median"
    c["min_count"].value = 10**6
    assert c["min_count"].value == c["min_count"].max == 16
    c["k"].value = 32  # the first k samples define "found" for min_count 1 only
    assert c["min_count"].value == 1 and c["min_count"].disabled
    assert "min_count is 1" in app.widgets["note"].value
    c["rule"].value = "expected"
    assert not c["min_count"].disabled and c["min_count"].max == 16
    c["min_count"].value = 99
    assert c["min_count"].value == 16
    c["rule"].value = "first-k"
    assert c["min_count"].value == 1
    app.reset_button.click()
    s = app.view.setting
    assert (s.k, s.min_count, s.zeta, s.estimator, s.rule) == (None, 1, 0.05, "first-k",
                                                                "first-k")
    assert "paper's setting was restored" in html.unescape(app.widgets["changes"].value)
    # a pooled row with two budgets: powers of two up to the smallest, then each its own
    c["benchmark"].value = "Overall"
    assert c["k"].options[-2:] == (("2048", 2048), ("each its own (2048/8192)", 0))


@pytest.mark.slow
def test_the_paper_disables_what_it_cannot_serve_with_one_line(paper):
    app = explore(model=paper)
    c = app.controls
    for name in ("k", "min_count", "estimator", "rule"):
        assert c[name].disabled, name
    for name in ("pair", "benchmark", "zeta"):
        assert not c[name].disabled, name
    note = app.widgets["note"].value
    assert note.count("<i>") == 1 and "<br>" not in note and "per-question" in note
    long = support_long("paper")
    for pair, bench in [("ProRL-1.5B-v1", "Minerva"), ("Nemotron-1-7B", "Overall")]:
        c["pair"].value = pair
        c["benchmark"].value = bench
        row = long[(long["pair"] == pair) & (long["benchmark"] == bench)].iloc[0]
        assert app.view.counts == tuple(int(row[x]) for x in COUNT_NAMES)
        assert app.view.intervals is None
        c["zeta"].value = 0.01
        k = app.view.k_shown
        assert app.view.epsilon == epsilon(min(k), 0.01)
        c["zeta"].value = 0.05
    assert "No per-question data" in app.widgets["changes"].value


@pytest.mark.parametrize("k", [None, 128])
def test_the_papermill_line_uses_only_declared_parameters(demo, paper, k):
    for model in (demo, paper):
        s = Setting(model.pairs[0], model.scopes(model.pairs[0])[0], k if not model.is_paper
                    else None, 1, 0.01)
        cmd = model.papermill_command(s)
        words = shlex.split(cmd)
        assert words[:3] == ["papermill", words[1], "out.ipynb"]
        # the .ipynb make install writes from the committed Markdown, which holds the parameters
        declared = notebook_parameters(notebook_files.find(Path(words[1]).stem, REPO / "notebooks"))
        names = words[4::3]
        assert words[3::3] == ["-p"] * len(names) and set(names) <= set(declared), cmd
        assert f"study {model.name}" in cmd and "zetas" in cmd or "zeta 0.01" in cmd
        if k and not model.is_paper:
            assert "10_sensitivity" in cmd and "budgets '[128]'" in cmd


def test_leash_explore_is_the_public_entry():
    assert leash.explore is explore
    assert "Parameters" in explore.__doc__


@pytest.mark.slow
def test_a_control_change_recomputes_only_what_it_touches():
    """Arrays are loaded once: a control change touches only its own computation."""
    rng = np.random.default_rng(0)
    nq, n = 2000, 64
    paired = pd.DataFrame({"benchmark": np.repeat(["A", "B"], nq // 2),
                           "question_id": [f"q{i}" for i in range(nq)]})
    for side in ("base", "rl"):
        c = rng.binomial(n, rng.beta(0.3, 0.7, nq))
        fc = np.where(c > 0, rng.integers(0, n - 1, nq), -1)
        paired[f"n_{side}"], paired[f"c_{side}"], paired[f"first_correct_{side}"] = n, c, fc
    m = ExplorerModel("synthetic", paired={"p": paired}, domains={"A": "math", "B": "math"},
                      n_boot=N_BOOT)
    app = explore(model=m, benchmark="A")
    app.controls["zeta"].value = 0.1
    cached = dict(m._cache)
    assert app.view.setting.estimator == "unbiased"  # user data: Chen et al.'s
    app.controls["estimator"].value = "first-k"  # the support is not recomputed
    assert all(m._cache[key] is value for key, value in cached.items())
    assert re.search(r"papermill notebooks/01_table1_support.ipynb", app.widgets["command"].value)


def test_a_page_without_widgets_shows_the_figure(demo):
    """nbconvert's HTML, the site, a notebook viewer: the figure as a PNG beside the widget."""
    import base64

    app = explore(model=demo, benchmark="AMC23")
    data = app._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert base64.b64decode(data["image/png"]) == app.widgets["image"].value


def test_an_epsilon_above_one_is_said_to_bound_nothing():
    from leash.run.explore import ExplorerModel as M

    eps, text = M._epsilon((1,), 0.05)
    assert eps == pytest.approx(-np.log(0.05))
    assert "above 1" in text and "k > -ln(zeta) = 3" in text
    eps, text = M._epsilon((8,), 0.05)
    assert eps < 1 and "above 1" not in text


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    """A counts-only study (n = 128 and c per question, no first-correct indices): MATH500-like
    counts, as people publish them."""
    from leash.sources.study import load_study

    d = tmp_path_factory.mktemp("counts")
    rng = np.random.default_rng(5)
    p = rng.beta(0.5, 0.6, 300)
    rows = [{"model": m, "benchmark": "MATH500", "question_id": f"q{i}", "n": 128,
             "c": int(c)} for m, lift in (("my-base", 0.0), ("my-rlvr", 0.1))
            for i, c in enumerate(rng.binomial(128, np.clip(p + lift, 0, 1)))]
    pd.DataFrame(rows).to_csv(d / "counts.csv", index=False)
    (d / "s.yaml").write_text("name: counts-test\nbenchmarks: {MATH500: {domain: math, budget: "
                              "128}}\nsections: {support: {sources: [{path: counts.csv}], "
                              "pairs: [{base: my-base, rl: my-rlvr}]}}\n")
    study = load_study(d / "s.yaml")
    study.cache_dir = None  # no cache under the repository's build/
    return ExplorerModel(study, n_boot=N_BOOT, seed=3)


@pytest.mark.slow
def test_counts_open_on_the_unbiased_estimator_with_curves_and_every_budget(counts):
    """It opened with the first-k estimator (an empty pass@k panel) and only the full budget,
    though the expected rule needs nothing but the counts."""
    app = explore(model=counts)
    c, v = app.controls, app.view
    assert (v.setting.estimator, v.setting.rule, v.setting.k) == ("unbiased", "expected", None)
    assert v.curve_base is not None and not v.notes
    check_shown(app, counts)
    assert [k for _, k in c["k"].options] == [1, 2, 4, 8, 16, 32, 64, 0]
    assert not c["k"].disabled and c["estimator"].disabled  # first-k needs the sample order
    note = html.unescape(app.widgets["note"].value)
    assert "expected rule" in note and "unbiased" in note
    c["k"].value = 8
    assert c["rule"].value == "expected" and c["rule"].disabled  # the only rule of counts
    assert not c["min_count"].disabled and c["min_count"].max == 8
    c["min_count"].value = 3
    check_shown(app, counts)
    # notebook 10 computes the same rule from the same counts
    from leash.artifacts import sensitivity_long

    sweep = sensitivity_long(counts.src, ks=[8], min_counts=[3], zetas=[])
    row = sweep[sweep["scope"] == "benchmark"].iloc[0]
    np.testing.assert_allclose(app.view.counts, [row[x] for x in COUNT_NAMES], rtol=1e-12)
    assert "budgets '[8]'" in html.unescape(app.widgets["command"].value)
    app.reset_button.click()
    s = app.view.setting
    assert (s.k, s.min_count, s.estimator, s.rule) == (None, 1, "unbiased", "expected")


def test_a_rule_the_data_cannot_serve_is_refused_by_the_model(counts):
    s = Setting(counts.pairs[0], "MATH500", k=8, rule="first-k")
    with pytest.raises(ValueError, match="first-correct indices"):
        counts.view(s)


def test_the_demo_opens_on_the_estimator_it_declares(demo):
    assert demo.estimator == "first-k"  # data/studies/demo.yaml, as the paper's tables
    v = explore(model=demo, benchmark="AMC23").view
    assert (v.setting.estimator, v.setting.rule) == ("first-k", "first-k")


@pytest.mark.slow
def test_the_flips_table_lists_the_setting_s_e_and_s_questions(demo):
    from leash.analysis.flips import flips_table

    app = explore(model=demo, pair="demo-1.5B", benchmark="Minerva")
    v = app.view
    f = demo.flips(v)
    paired = demo.paired("demo-1.5B")
    sub = paired[paired["benchmark"] == "Minerva"]
    want = flips_table(sub)
    want = want[want["category"].isin(["E", "S"])]
    assert f["question_id"].tolist() == want["question_id"].tolist()
    assert f["base c/n"].tolist() == [f"{c}/{n}" for c, n in zip(want["base_c"],
                                                                 want["base_n"])]
    # the verdict of the test over all the pair's questions, not the benchmark's alone
    every = flips_table(paired).set_index("question_id")["verdict"]
    shown = f.set_index("question_id")["verdict"].replace("not significant", "")
    assert (shown == every.loc[shown.index]).all()
    assert {"base answers", "RLVR answers"} <= set(f.columns)  # the demo keeps its answers
    assert "E and S questions at this setting" in app.widgets["flips"].value
    # another budget, another set of questions
    app.controls["k"].value = 64
    assert demo.flips(app.view)["category"].isin(["E", "S"]).all()
    app.controls["k"].value = 0


@pytest.mark.slow
def test_the_paper_has_no_flips(paper):
    app = explore(model=paper)
    assert "No per-question data" in app.widgets["flips"].value
