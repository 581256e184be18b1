"""The teaching walkthrough, three notebooks (notebooks/00a_walkthrough_support,
00b_walkthrough_noise, 00c_walkthrough_curves): their form, and that every
statement their text makes as a fact holds.

No kernel here: the notebooks run once per test session, in tests/test_notebooks.py (the runs
of `make reproduce`), which also checks the artifacts and the executed page of each part
(test_the_walkthrough_writes_every_artifact_of_its_part). The fact tests recompute each claim
directly with the leash functions the notebooks call (same defaults, same random streams),
against exact references (fractions, math.comb, closed forms) where there is one.
"""

from __future__ import annotations

import ast
import math
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from _support import REPO, WALKTHROUGH
from leash import artifacts, notebook_files
from leash.analysis import tables
from leash.core import entropy, passk, stats, support
from leash.run.parameters import ParameterError, notebook_parameters, validate_parameters
from leash.sources import simulate
from leash.sources.study import load_study
from leash_eval.run.reproduce import default_runs

NOTEBOOKS = {stem: REPO / "notebooks" / f"{stem}.md" for stem in WALKTHROUGH}
SUPPORT, NOISE, CURVES = NOTEBOOKS  # the three parts, in reading order


def _cells(stem):
    return notebook_files.read(NOTEBOOKS[stem]).cells


def _code(stem):
    return "\n".join("".join(c["source"]) for c in _cells(stem) if c["cell_type"] == "code")


def _defaults(stem):
    return {name: p.value for name, p in notebook_parameters(NOTEBOOKS[stem]).items()}


# ---------------------------------------------------------------------------------------------
# form
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_form_title_parameters_no_definitions_no_outputs(stem):
    tables_, figures = WALKTHROUGH[stem]
    cells = _cells(stem)
    assert cells[0]["cell_type"] == "markdown"
    title = "".join(cells[0]["source"])
    assert title.startswith("# Walkthrough") and "**Input**" in title and "**Writes**" in title
    assert "arXiv 2507.14843v4" in title and re.search(r"Section \d|App\. [A-Z]", title)
    assert "`build/figures/`" in title  # where a run by hand writes
    for name in tables_ + figures:  # the title names every artifact it writes
        assert f"`{name.removeprefix('walkthrough_')}`" in title, name
    # each part links the others by their committed Markdown (JupyterLab with jupytext opens
    # it as a notebook; a repository browser shows it; git holds no .ipynb)
    for other in NOTEBOOKS:
        if other != stem:
            assert f"({other}.md)" in title, other
    assert cells[1]["cell_type"] == "code" and "parameters" in cells[1]["metadata"]["tags"]
    # the first code cell after the parameters checks them, on every route
    assert cells[2]["cell_type"] == "code"
    assert "".join(cells[2]["source"]) == ("from leash.run import notebook\n\n"
                                           "notebook.start(globals())")
    declared = notebook_parameters(NOTEBOOKS[stem])
    assert "outdir" in declared and "study" not in declared  # no data source
    assert declared["outdir"].value == ""  # the scratch folder
    for name, p in declared.items():
        assert p.type_name and p.help and p.has_literal_default, name
    for c in cells:
        if c["cell_type"] != "code":
            continue
        text = "".join(c["source"])
        assert not c.get("outputs") and c.get("execution_count") is None
        assert not re.search(r"^\s*(def|class)\s", text, re.M) and "lambda" not in text
        assert "os.environ" not in text and "LEASH_" not in text
        # a cell ending in pub(...) ends with ";": its return value is not echoed
        body = ast.parse(text).body
        if body and isinstance(body[-1], ast.Expr) and isinstance(body[-1].value, ast.Call) and (
                getattr(body[-1].value.func, "id", None) == "pub"):
            assert text.rstrip().endswith(";"), text.splitlines()[0]
    code = _code(stem)
    assert "savefig" not in code and "to_csv" not in code  # artifacts only via pub
    # the runner records the run's parameters; no source is "embedded" any more
    assert "parameters=" not in code and "params" not in code and "embedded" not in code
    for name in tables_ + figures:
        assert f'"{name}"' in code, name


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_each_part_ends_with_exercises_and_hidden_solutions_that_check_themselves(stem):
    cells = _cells(stem)
    texts = ["".join(c["source"]) if c["cell_type"] == "markdown" else "" for c in cells]
    sections = re.findall(r"^## .*", "\n".join(texts), re.M)
    assert sections[-1] == "## Exercises", "the part ends with its exercises"
    solutions = [i for i, c in enumerate(cells)
                 if "solution" in c["metadata"].get("tags", [])]
    assert 2 <= len(solutions) <= 3 and solutions[-1] == len(cells) - 1
    # each exercise is followed by its solution: a Markdown cell, then the solution cell
    assert len(re.findall(r"^### Exercise \d", "\n".join(texts), re.M)) == len(solutions)
    for n, i in enumerate(solutions, 1):
        cell, text = cells[i], "".join(cells[i]["source"])
        question = texts[i - 1].rpartition("### Exercise")[2]
        assert cell["cell_type"] == "code" and question.startswith(f" {n}\n")
        assert "predict" in question.lower()
        # collapsed in JupyterLab (the Markdown keeps the flag, notebooks/jupytext.toml) and
        # folded on the site (the tag)
        assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True
        # it checks its answer (computed by leash) against an independent computation
        assert re.search(r"^assert ", text, re.M), text
        assert f"**Solution {n}.**" in text
        # it writes nothing and draws nothing: the part's artifacts do not depend on it
        assert "pub(" not in text and "rng" not in text and "plt." not in text


@pytest.mark.slow
def test_the_parts_split_the_walkthrough_artifacts_without_overlap():
    names = [n for stem in NOTEBOOKS for part in WALKTHROUGH[stem] for n in part]
    assert len(names) == len(set(names)) == 17
    for stem in NOTEBOOKS:  # no part writes another part's artifact
        others = {n for s in NOTEBOOKS if s != stem for part in WALKTHROUGH[s] for n in part}
        assert not [n for n in others if f'"{n}"' in _code(stem)], stem
    # the committed walkthrough artifacts are exactly theirs
    committed = {p.stem for p in (REPO / "figures").glob("walkthrough_*.csv")}
    assert committed == set(names)


def test_make_reproduce_runs_each_part_once_with_its_defaults():
    # the titles say so; the committed artifacts are figures/walkthrough_* under these names
    runs = [(r.name, r.parameters) for r in default_runs() if r.notebook in NOTEBOOKS]
    assert runs == [(stem, {}) for stem in NOTEBOOKS]


@pytest.mark.parametrize("stem, bad", [
    (SUPPORT, [{"zeta": 1.5}, {"paper_budgets": "32"}, {"c_base_example": 8},
               {"seed": 0}]),  # part 1 draws nothing at random: no seed
    (NOISE, [{"zeta": 1.5}, {"seed": -1}, {"n_boot": -3}, {"level": 1.0}, {"n_nul": 10}]),
    (CURVES, [{"seed": -1}, {"n_boot": 1}, {"ks": [0]}, {"ks": []}, {"level": 1.0},
              {"zeta": 0.05}]),
])
def test_parameters_are_validated_by_the_runner(stem, bad):
    validate_parameters(NOTEBOOKS[stem])  # the literal defaults are legal
    for params in bad:
        with pytest.raises(ParameterError):
            validate_parameters(NOTEBOOKS[stem], params)


# ---------------------------------------------------------------------------------------------
# facts stated in the text
# ---------------------------------------------------------------------------------------------

def test_section1_epsilon_facts():
    ks = np.asarray(_defaults(SUPPORT)["paper_budgets"])
    assert ks.tolist() == [32, 256, 1024, 2048, 4096, 8192, 16384]
    eps = support.epsilon(ks, 0.05)
    assert round(support.epsilon(8192, 0.05), 6) == 0.000366  # the paper's 3.66e-4
    np.testing.assert_allclose(ks * eps, 2.995732, atol=1e-6)  # -ln 0.05, every budget
    assert (support.epsilon(ks, 0.05, exact=True) < eps).all()  # exact is a little smaller
    missed = 1 - support.population_pass_at_k(eps, ks)
    assert (missed <= 0.05).all()
    np.testing.assert_allclose(missed, (1 - eps) ** ks, rtol=1e-10)


def test_section2_estimator_facts():
    code = _code(SUPPORT)
    assert "c_demo = np.array([3, 1, 5, 0])" in code  # the example the text describes
    assert "first_demo = np.array([0, 4, 1, -1])" in code
    n, c, first = 8, [3, 1, 5, 0], [0, 4, 1, -1]
    ks = list(range(1, n + 1))
    unbiased = passk.pass_at_k_curve(n, c, ks).mean(axis=0)
    first_k = passk.pass_at_k_curve(n, c, ks, estimator="first-k", first_correct=first).mean(0)
    exact = [sum(1 - Fraction(math.comb(n - ci, k), math.comb(n, k)) for ci in c) / len(c)
             for k in ks]
    np.testing.assert_allclose(unbiased, [float(x) for x in exact], rtol=1e-12)
    assert (np.diff(unbiased) > 0).all()  # strictly increasing: some 0 < c < n
    assert first_k[1] == first_k[2] == first_k[3] == 0.5  # flat from k = 2 to k = 4
    assert first_k.tolist() == [0.25, 0.5, 0.5, 0.5, 0.75, 0.75, 0.75, 0.75]
    assert unbiased[-1] == first_k[-1] == 0.75  # both agree at k = n


def test_section3_example_facts():
    defaults = _defaults(SUPPORT)
    cb, cr = defaults["c_base_example"], defaults["c_rl_example"]
    assert len(cb) == len(cr) == 8 and max(cb + cr) <= 8
    counts = support.support_counts(cb, cr)
    assert tuple(counts) == (3, 1, 2, 2)
    m = support.support_metrics(*counts)
    srr, ndr = Fraction(3, 5), Fraction(1, 4)
    assert m.SRR == pytest.approx(float(srr)) and m.NDR == pytest.approx(float(ndr))
    assert m.SDS == pytest.approx(float(2 * srr * ndr / (srr + ndr)))  # 6/17
    assert m.NSCR == pytest.approx(float(Fraction(1 - 2, 6)))


def _null_studies(d):
    rows = []
    for stream in np.random.SeedSequence(d["seed"]).spawn(d["n_null"]):
        r = np.random.default_rng(stream)
        p = r.beta(d["beta_a"], d["beta_b"], size=d["n_questions"])
        sim = simulate.simulate_pair(p, p, d["n_samples"], rng=r)
        cnt = support.support_counts(sim.loc[sim["model"] == "base", "c"].to_numpy(),
                                     sim.loc[sim["model"] == "rlvr", "c"].to_numpy())
        rows.append((cnt.E, cnt.S, stats.mcnemar_exact(cnt.E, cnt.S).p_value))
    return pd.DataFrame(rows, columns=["E", "S", "p"])


@pytest.mark.slow
def test_section4a_null_facts():
    defaults = _defaults(NOISE)
    assert defaults["n_null"] == 200
    null = _null_studies(defaults)
    share = (null["p"] < 0.05).mean()
    assert share <= 0.06  # "about 5% or less"
    diff = null["E"] - null["S"]
    assert abs(diff.mean()) < 3 * diff.std() / math.sqrt(len(null))  # centred on 0
    assert (null["E"] + null["S"]).min() > 0  # identical models still disagree


@pytest.mark.slow
def test_section4a_exact_rejection_rate_is_at_most_alpha():
    # "at most 5% by construction": the exact rejection rate of the two-sided sign test,
    # summed with exact binomial weights, for every number m of discordant questions
    # (the test is symmetric in E and S, checked at a few points; then only e <= m/2 is computed)
    for e, s in ((3, 17), (20, 21), (0, 9)):
        assert stats.mcnemar_exact(e, s).p_value == stats.mcnemar_exact(s, e).p_value
    for m in range(1, 101):
        lower = sum(Fraction(math.comb(m, e), 2**m) for e in range(m // 2 + 1)
                    if stats.mcnemar_exact(e, m - e).p_value < 0.05)
        middle = Fraction(math.comb(m, m // 2), 2**m) if m % 2 == 0 and (
            stats.mcnemar_exact(m // 2, m // 2).p_value < 0.05) else 0
        assert 2 * lower - middle <= Fraction(1, 20), m


def test_section4b_shrinkage_facts():
    d = _defaults(NOISE)
    for seed in range(5):  # the notebook's random order, for its seed and four more
        rng = np.random.default_rng(seed)
        p_true = rng.beta(d["beta_a"], d["beta_b"], size=d["n_questions"])
        simulate.simulate_pair(p_true, p_true, d["n_samples"], rng=rng)  # section 4a's draw
        p_rl = np.where(p_true < d["prune_below"], 0.0,
                        simulate.tilt(np.column_stack([p_true, 1 - p_true]), d["tilt_beta"])[:, 0])
        sim = simulate.simulate_pair(p_true, p_rl, d["n_samples"], rng=rng)
        cb = sim.loc[sim["model"] == "base", "c"].to_numpy()
        cr = sim.loc[sim["model"] == "rlvr", "c"].to_numpy()
        cnt = support.support_counts(cb, cr)
        assert stats.mcnemar_exact(cnt.E, cnt.S).p_value < 0.05, seed
        boot = stats.bootstrap_support(cb, cr, rng=rng, n_boot=d["n_boot"], level=d["level"])
        assert boot.loc["NSCR", "high"] < 0, seed  # the interval excludes 0
        # the tilt (Prop. C.4) raises every non-pruned probability and keeps 0 and 1 fixed
        kept = p_true >= d["prune_below"]
        assert (p_rl[kept] >= p_true[kept]).all() and (p_rl[~kept] == 0).all()


def test_section4c_boundary_facts():
    defaults = _defaults(NOISE)
    zeta = defaults["zeta"]
    for k in defaults["misclass_ks"]:
        eps = support.epsilon(k, zeta)
        above = np.nextafter(eps, 1.0)
        assert support.misclassification_probability(above, k, zeta) <= zeta  # missed <= zeta
        assert support.population_pass_at_k(eps, k) >= 1 - zeta  # found just below: >= 1-zeta
        grid = np.logspace(-8, 0, 2001)
        wrong = support.misclassification_probability(grid, k, zeta)
        assert wrong[grid > eps].max() <= zeta
        # p found half the time and one time in twenty: closed forms 1 - f**(1/k)
        p50 = support.epsilon(k, 0.5, exact=True)
        p05 = support.epsilon(k, 0.95, exact=True)
        assert support.population_pass_at_k(p50, k) == pytest.approx(0.5)
        assert support.population_pass_at_k(p05, k) == pytest.approx(0.05)
        # eps / p50 -> ln(1/zeta) / ln 2 = 4.32 and eps / p05 -> ln(1/zeta) / -ln 0.95 = 58.4
        assert eps / p50 == pytest.approx(math.log(1 / zeta) / math.log(2), rel=0.01)
        assert eps / p05 == pytest.approx(math.log(1 / zeta) / -math.log(0.95), rel=0.01)


@pytest.mark.slow
def test_section6_demo_facts():
    d = _defaults(CURVES)
    demo = load_study("demo")
    assert demo.simulated
    paired = demo.paired("support", d["pair"])
    bench = paired[paired["benchmark"] == d["benchmark"]]
    curve = tables.expected_support_curve(bench, d["ks"])
    np.testing.assert_allclose(curve[["P", "E", "S", "O"]].sum(axis=1), len(bench))
    first, last = curve.iloc[0], curve.iloc[-1]
    assert first["E"] > first["S"] and last["S"] > last["E"]  # E dominates small k, S large k
    assert (np.diff(curve["S"]) > 0).all()
    ks = np.asarray(d["ks"])
    base = passk.pass_at_k_curve(bench["n_base"], bench["c_base"], ks).mean(axis=0)
    rl = passk.pass_at_k_curve(bench["n_rl"], bench["c_rl"], ks).mean(axis=0)
    assert rl[0] > base[0] and base[-1] > rl[-1]
    cross = stats.bootstrap_crossover(bench["n_base"], bench["c_base"], bench["n_rl"],
                                      bench["c_rl"], ks, rng=np.random.default_rng(0),
                                      n_boot=200)
    assert cross["estimate"] == ks[np.argmax(base >= rl)]
    assert cross["low"] <= cross["estimate"] <= cross["high"]


@pytest.mark.slow
def test_section7_entropy_facts():
    base = ["12"] * 11 + ["8"] * 7 + ["15"] * 5 + ["3"] * 4 + ["20"] * 3 + [None] * 2
    rl = ["12"] * 29 + ["8"] * 3
    code = _code(CURVES)
    assert 'base_answers = ["12"] * 11 + ["8"] * 7 + ["15"] * 5' in code
    assert 'rl_answers = ["12"] * 29 + ["8"] * 3' in code
    assert len(base) == len(rl) == 32
    h = entropy.answer_entropy([base, rl])
    ref = [-sum(f / 32 * math.log(f / 32) for f in counts)
           for counts in ((11, 7, 5, 4, 3, 2), (29, 3))]
    np.testing.assert_allclose(h.entropy, ref, rtol=1e-12)
    assert h.n_distinct.tolist() == [6, 2]
    tok_base = entropy.token_entropy(np.linspace(0.30, 0.50, 32))
    tok_rl = entropy.token_entropy(np.linspace(0.45, 0.75, 32))
    assert tok_rl > tok_base and h.entropy[1] < h.entropy[0]  # less sure per token, not answer
    pairs = artifacts.entropy_pairs(artifacts.entropy_long(load_study("demo")))
    by = pairs.set_index("model")
    for _, row in pairs[pairs["role"] == "rlvr"].iterrows():
        assert row["answer_entropy"] < by.loc[row["base_model"], "answer_entropy"]  # arrow down
    # the demo's 1.5B pair shows the paper's finding: more token entropy, less answer entropy
    assert by.loc["demo-rlvr-1.5B", "token_entropy"] > by.loc["demo-base-1.5B", "token_entropy"]


def test_section5_table1_row():
    m = support.support_metrics(1355, 5, 56, 131)
    assert (round(m.SRR, 2), round(m.NDR, 2), round(m.SDS, 2), round(m.NSCR, 2)) == (
        0.96, 0.0, 0.01, -0.04)  # Table 1, ProRL-1.5B-v1, Math
    assert stats.mcnemar_exact(5, 56).p_value < 1e-10
