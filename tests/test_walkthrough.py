"""The teaching walkthrough (notebooks/00_walkthrough.ipynb): its form, that it runs and writes
its artifacts, and that every statement its text makes as a fact holds.

The fact tests recompute each claim directly with the leash functions the notebook calls (same
defaults, same random streams), against exact references (fractions, math.comb, closed forms)
where there is one.
"""

from __future__ import annotations

import ast
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from leash import artifacts
from leash.analysis import tables
from leash.core import entropy, passk, stats, support
from leash.output.report import RECORD_KEY
from leash.run.parameters import ParameterError, notebook_parameters, validate_parameters
from leash.run.reproduce import default_runs, run_notebook
from leash.sources import simulate
from leash.sources.study import load_study

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "00_walkthrough.ipynb"

TABLES = ["walkthrough_epsilon", "walkthrough_passk_estimators", "walkthrough_support_example",
          "walkthrough_support_example_metrics", "walkthrough_null_studies",
          "walkthrough_shrinkage_bootstrap", "walkthrough_boundary", "walkthrough_crossover",
          "walkthrough_entropy_example"]
FIGURES = ["walkthrough_epsilon_curve", "walkthrough_passk_estimators_curve",
           "walkthrough_support_example_counts", "walkthrough_null_e_minus_s",
           "walkthrough_misclassification", "walkthrough_expected_support",
           "walkthrough_passk_curves", "walkthrough_entropy_scatter"]
SIMULATED_TABLES = ["walkthrough_null_studies", "walkthrough_shrinkage_bootstrap",
                    "walkthrough_crossover"]


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _code():
    return "\n".join("".join(c["source"]) for c in _cells() if c["cell_type"] == "code")


@pytest.fixture(scope="module")
def defaults():
    return {name: p.value for name, p in notebook_parameters(NOTEBOOK).items()}


# ---------------------------------------------------------------------------------------------
# form
# ---------------------------------------------------------------------------------------------

def test_form_title_parameters_no_definitions_no_outputs():
    cells = _cells()
    assert cells[0]["cell_type"] == "markdown"
    title = "".join(cells[0]["source"])
    assert title.startswith("# Walkthrough") and "**Input**" in title and "**Writes**" in title
    assert "`build/figures/`" in title  # where a run by hand writes
    for name in TABLES + FIGURES:  # the title names every artifact it writes
        assert f"`{name.removeprefix('walkthrough_')}`" in title, name
    assert cells[1]["cell_type"] == "code" and "parameters" in cells[1]["metadata"]["tags"]
    # the first code cell after the parameters checks them, on every route
    assert cells[2]["cell_type"] == "code"
    assert "".join(cells[2]["source"]) == ("from leash.run import notebook\n\n"
                                           "notebook.start(globals())")
    declared = notebook_parameters(NOTEBOOK)
    assert {"outdir", "seed"} <= set(declared) and "study" not in declared  # no data source
    assert declared["outdir"].value == "" and declared["seed"].value == 0  # scratch folder
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
    code = _code()
    assert "savefig" not in code and "to_csv" not in code  # artifacts only via pub
    # the runner records the run's parameters; no source is "embedded" any more
    assert "parameters=" not in code and "params" not in code and "embedded" not in code
    for name in TABLES + FIGURES:
        assert f'"{name}"' in code, name


def test_make_reproduce_runs_it_once_with_its_defaults():
    # the title says so; its committed artifacts are figures/walkthrough_* under its own name
    runs = [r for r in default_runs() if r.notebook == NOTEBOOK.stem]
    assert [(r.name, r.parameters) for r in runs] == [("00_walkthrough", {})]


def test_parameters_are_validated_by_the_runner():
    validate_parameters(NOTEBOOK)  # the literal defaults are legal
    for bad in ({"zeta": 1.5}, {"seed": -1}, {"n_boot": -3}, {"ks": [0]}, {"level": 1.0},
                {"n_nul": 10}):
        with pytest.raises(ParameterError):
            validate_parameters(NOTEBOOK, bad)


@pytest.mark.slow  # one kernel, about 10 s
def test_runs_and_writes_every_artifact(tmp_path):
    out, build = tmp_path / "out", tmp_path / "build"
    res = run_notebook(NOTEBOOK, {"n_null": 20, "n_boot": 50}, outdir=out, build=build)
    assert res.status == "ok"
    for name in TABLES:
        for ext in ("csv", "md", "tex"):
            assert (out / f"{name}.{ext}").is_file(), (name, ext)
    for name in FIGURES:
        for ext in ("pdf", "png", "csv"):
            assert (out / f"{name}.{ext}").is_file(), (name, ext)
    written = {p.stem for p in out.iterdir() if p.suffix in (".csv", ".pdf")}
    assert written == set(TABLES) | set(FIGURES)
    # the runner keeps the records, read from the executed notebook, with the run's parameters
    records = json.loads((out / ".artifacts" / "00_walkthrough.json").read_text())
    assert sorted(r["name"] for r in records) == sorted(TABLES + FIGURES)
    for r in records:
        assert sorted(r) == ["description", "files", "inputs", "name", "notebook", "parameters"]
        assert r["notebook"] == "00_walkthrough" and r["description"], r["name"]
        assert "outdir" not in r["parameters"], r["name"]
        assert r["parameters"]["n_null"] == 20 and r["parameters"]["n_boot"] == 50, r["name"]
        assert r["parameters"]["seed"] == 0, r["name"]  # defaults are recorded too
        assert r["files"] == sorted(f"{r['name']}.{ext}" for ext in (
            ("csv", "pdf", "png") if r["name"] in FIGURES else ("csv", "md", "tex")))
    inputs = {r["name"]: r["inputs"] for r in records}
    assert inputs["walkthrough_epsilon"] == ["none"]
    assert inputs["walkthrough_entropy_scatter"] == ["data/studies/demo.yaml"]
    for name in SIMULATED_TABLES:
        assert "simulated" in (out / f"{name}.md").read_text().splitlines()[0].lower(), name
    # the run's numbers: epsilon table, null summary with the small n_null
    eps = pd.read_csv(out / "walkthrough_epsilon.csv")
    np.testing.assert_allclose(eps["k * epsilon"], -math.log(0.05), rtol=1e-12)
    null = pd.read_csv(out / "walkthrough_null_studies.csv")
    assert null["studies"].item() == 20
    # the executed copy reads as a page: every figure inline, no error, no warning or log
    executed = json.loads((build / "00_walkthrough.ipynb").read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"], "warnings or logs on the page"
    assert sum("image/png" in o.get("data", {}) for o in outputs) == len(FIGURES)
    saved = [o["metadata"][RECORD_KEY]["name"] for o in outputs
             if RECORD_KEY in o.get("metadata", {})]
    assert sorted(saved) == sorted(TABLES + FIGURES)  # one "saved ..." note per artifact


# ---------------------------------------------------------------------------------------------
# facts stated in the text
# ---------------------------------------------------------------------------------------------

def test_section1_epsilon_facts(defaults):
    ks = np.asarray(defaults["paper_budgets"])
    assert ks.tolist() == [32, 256, 1024, 2048, 4096, 8192, 16384]
    eps = support.epsilon(ks, 0.05)
    assert round(support.epsilon(8192, 0.05), 6) == 0.000366  # the paper's 3.66e-4
    np.testing.assert_allclose(ks * eps, 2.995732, atol=1e-6)  # -ln 0.05, every budget
    assert (support.epsilon(ks, 0.05, exact=True) < eps).all()  # exact is a little smaller
    missed = 1 - support.population_pass_at_k(eps, ks)
    assert (missed <= 0.05).all()
    np.testing.assert_allclose(missed, (1 - eps) ** ks, rtol=1e-10)


def test_section2_estimator_facts():
    code = _code()
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


def test_section3_example_facts(defaults):
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


def test_section4a_null_facts(defaults):
    assert defaults["n_null"] == 200
    null = _null_studies(defaults)
    share = (null["p"] < 0.05).mean()
    assert share <= 0.06  # "about 5% or less"
    diff = null["E"] - null["S"]
    assert abs(diff.mean()) < 3 * diff.std() / math.sqrt(len(null))  # centred on 0
    assert (null["E"] + null["S"]).min() > 0  # identical models still disagree


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


def test_section4b_shrinkage_facts(defaults):
    d = defaults
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


def test_section4c_boundary_facts(defaults):
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


def test_section5_demo_facts(defaults):
    d = defaults
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


def test_section6_entropy_facts():
    base = ["12"] * 11 + ["8"] * 7 + ["15"] * 5 + ["3"] * 4 + ["20"] * 3 + [None] * 2
    rl = ["12"] * 29 + ["8"] * 3
    code = _code()
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


def test_section7_table1_row():
    m = support.support_metrics(1355, 5, 56, 131)
    assert (round(m.SRR, 2), round(m.NDR, 2), round(m.SDS, 2), round(m.NSCR, 2)) == (
        0.96, 0.0, 0.01, -0.04)  # Table 1, ProRL-1.5B-v1, Math
    assert stats.mcnemar_exact(5, 56).p_value < 1e-10
