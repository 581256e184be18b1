"""Tests of leash.sources.simulate, the SIMULATED demo data generator, and of leash.sources.demo,
its files.

Three kinds of checks: exact hand-computed references (fractions, math.comb, scipy's
negative hypergeometric), properties (hypothesis), and the demo's qualitative agreement with the
paper's findings (high SRR, small NDR, negative NSCR; Table 5's entropy pattern).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from _calibration import calibrate_logit_normal, calibration_targets, logit_normal_moments
from _misclassification import misclassification_table
from _support import raises_with
from leash.analysis.compare import frame_differences
from leash.analysis.tables import entropy_table
from leash.core.support import CATEGORIES, epsilon, support_counts, support_metrics
from leash.sources import demo as D
from leash.sources import simulate as S
from leash.summary import SUMMARY_COLUMNS as SCHEMA_COLUMNS
from leash_eval import demo as G
from leash_eval.cli import main_simulate
from leash_eval.demo import write_demo
from leash_eval.summarize import read_summary

SUMMARY_FRAMES = ("support", "entropy", "checkpoints", "sft", "gym")


@pytest.fixture(scope="module")
def demo():
    return G.simulate_study(rng=np.random.default_rng(D.DEMO_SEED))


# ------------------------------------------------------------------------------ determinism


@pytest.mark.slow
def test_same_seed_same_frames_different_seed_differs(demo):
    again = G.simulate_study(rng=np.random.default_rng(D.DEMO_SEED))
    for name in D.DEMO_FILES:
        pd.testing.assert_frame_equal(demo[name], again[name], check_exact=True)
    other = G.simulate_study(rng=np.random.default_rng(D.DEMO_SEED + 1))
    assert not np.array_equal(demo["support"]["c"], other["support"]["c"])
    assert not np.array_equal(demo["truth"]["p_base"], other["truth"]["p_base"])


def test_simulate_study_rejects_non_generator():
    with pytest.raises(TypeError, match="'rng' parameter of simulate_study"):
        G.simulate_study(rng=0)
    with pytest.raises(TypeError, match="'config' parameter"):
        G.simulate_study({"beta": 1}, rng=np.random.default_rng(0))


# ------------------------------------------------------------------------------ the tilt


def _fractions_tilt(q, beta_exp, reward, sharpen=1):
    """pi ∝ q**sharpen * exp(beta)**R in exact rationals (exp(beta) given as a Fraction)."""
    w = [qi**sharpen * (beta_exp if r else 1) for qi, r in zip(q, reward, strict=True)]
    z = sum(w)
    return [wi / z for wi in w]


def test_tilt_equals_prop_c4_on_hand_examples():
    # q = (1/2, 1/3, 1/6), exp(beta) = 2: pi = (1, 1/3, 1/6) / (3/2) = (2/3, 2/9, 1/9).
    q = [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]
    expected = _fractions_tilt(q, Fraction(2), [1, 0, 0])
    assert expected == [Fraction(2, 3), Fraction(2, 9), Fraction(1, 9)]
    got = S.tilt(np.array([[float(x) for x in q]]), math.log(2.0))
    np.testing.assert_allclose(got[0], [float(x) for x in expected], rtol=1e-15, atol=0)

    # A counterexample to Thm. C.6(a) (App. C; leash's, not the paper's): q = (0.1 correct,
    # 0.9 wrong), beta = ln 9.
    got = S.tilt(np.array([[0.1, 0.9]]), math.log(9.0))
    np.testing.assert_allclose(got[0], [0.5, 0.5], rtol=1e-14)

    # Sharpening: q = (1/2, 1/4, 1/4), sharpen 2, exp(beta) = 3: (3/4, 1/16, 1/16)/(7/8).
    q = [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    expected = _fractions_tilt(q, Fraction(3), [1, 0, 0], sharpen=2)
    assert expected == [Fraction(6, 7), Fraction(1, 14), Fraction(1, 14)]
    got = S.tilt(np.array([[0.5, 0.25, 0.25]]), math.log(3.0), sharpen=2.0)
    np.testing.assert_allclose(got[0], [6 / 7, 1 / 14, 1 / 14], rtol=1e-14)


def test_tilt_with_custom_reward_and_large_beta():
    q = np.array([[0.2, 0.3, 0.5]])
    got = S.tilt(q, 1000.0, reward=[0, 1, 1])  # KL-free limit (Cor. C.5): q restricted to C
    np.testing.assert_allclose(got[0], [0.0, 0.375, 0.625], atol=1e-300, rtol=1e-14)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 12))
def test_beta_zero_without_pruning_or_expansion_is_identity(seed, k):
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.full(k, 0.7), size=20)
    q = q / q.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(S.tilt(q, 0.0), q, rtol=1e-13, atol=1e-300)
    pi, pruned, expanded = S.rlvr_distribution(
        q, S.RLVRModel(beta=0.0), u_prune=rng.random(q.shape), u_expand=rng.random(20),
        u_delta=rng.random(20), eps_expand=0.5,
    )
    np.testing.assert_allclose(pi, q, rtol=1e-13, atol=1e-300)
    assert not pruned.any() and not expanded.any()


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 5.0), st.floats(1.0, 2.0),
       st.floats(0.0, 0.09), st.floats(0.0, 1.0))
def test_pruning_removes_correct_mass_and_never_creates_support(seed, beta, sharpen, tau, pp):
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.full(10, 0.3), size=40)
    q = q / q.sum(axis=1, keepdims=True)
    model = S.RLVRModel(beta=beta, sharpen=sharpen, tau=tau, p_prune=pp)  # no expansion
    pi, pruned, expanded = S.rlvr_distribution(
        q, model, u_prune=rng.random(q.shape), u_expand=rng.random(40), u_delta=rng.random(40),
        eps_expand=1.0,
    )
    assert not expanded.any()
    # a pruned correct class had base mass below tau and has no mass left
    assert (q[pruned, 0] < tau).all()
    assert (pi[pruned, 0] == 0).all()
    # Thm. C.1: without expansion the update never puts mass where q has none
    assert (pi[q == 0] == 0).all()
    np.testing.assert_allclose(pi.sum(axis=1), 1.0, rtol=1e-12)
    # Relative to the same tilt without pruning, the correct mass of a pruned question drops
    # to 0 and can only grow for the others (their competitors lost mass).
    pi0, _, _ = S.rlvr_distribution(
        q, S.RLVRModel(beta=beta, sharpen=sharpen), u_prune=np.ones(q.shape),
        u_expand=np.ones(40), u_delta=np.ones(40), eps_expand=1.0,
    )
    assert (pi[pruned, 0] <= pi0[pruned, 0]).all()
    assert (pi[~pruned, 0] >= pi0[~pruned, 0] * (1 - 1e-12)).all()


def test_expansion_gives_new_mass_only_below_threshold():
    q = np.array([[0.0, 0.9, 0.1], [1e-6, 0.5, 0.5 - 1e-6], [0.3, 0.3, 0.4]])
    model = S.RLVRModel(beta=0.0, p_expand=1.0, delta_low=0.01, delta_high=0.01)
    pi, pruned, expanded = S.rlvr_distribution(
        q, model, u_prune=np.ones(q.shape), u_expand=np.zeros(3), u_delta=np.zeros(3),
        eps_expand=1e-4,
    )
    assert expanded.tolist() == [True, True, False]
    # pre-tilt correct mass 0.01, the rest renormalized: 0.01 / (0.01 + 1 - q0)
    np.testing.assert_allclose(pi[0, 0], 0.01 / 1.01, rtol=1e-14)
    np.testing.assert_allclose(pi[1, 0], 0.01 / (0.01 + 1 - 1e-6), rtol=1e-14)
    np.testing.assert_allclose(pi[2], q[2], rtol=1e-14)


def test_at_fraction_interpolates_from_base_to_model():
    m = S.RLVRModel(beta=2.0, sharpen=1.5, tau=0.01, p_prune=0.6, p_expand=0.1)
    m0, m1, mh = m.at_fraction(0.0), m.at_fraction(1.0), m.at_fraction(0.5)
    assert (m0.beta, m0.sharpen, m0.p_prune, m0.p_expand) == (0.0, 1.0, 0.0, 0.0)
    assert m1 == m
    assert (mh.beta, mh.sharpen, mh.p_prune, mh.p_expand) == (1.0, 1.25, 0.3, 0.05)
    with pytest.raises(ValueError, match="'f' parameter"):
        m.at_fraction(1.5)


def test_validation_messages():
    with pytest.raises(ValueError, match="'beta' parameter of tilt"):
        S.tilt(np.array([[0.5, 0.5]]), -1.0)
    with pytest.raises(ValueError, match=r"'q' parameter of tilt must be .* each row summing "
                                         r"to 1\)\. Got row 0 summing to 1\.1 instead"):
        S.tilt(np.array([[0.5, 0.6]]), 1.0)
    with pytest.raises(ValueError, match="'sharpen' parameter"):
        S.tilt(np.array([[0.5, 0.5]]), 1.0, sharpen=0.5)
    with pytest.raises(ValueError, match="tau"):
        S.rlvr_distribution(np.array([[0.5, 0.5]]), S.RLVRModel(beta=1.0, tau=0.6),
                            u_prune=np.zeros((1, 2)), u_expand=np.zeros(1), u_delta=np.zeros(1),
                            eps_expand=0.1)
    with pytest.raises(ValueError, match="'p_base' parameter of simulate_pair.*1.5 at index 1"):
        S.simulate_pair([0.1, 1.5], [0.1, 0.1], 8, rng=np.random.default_rng(0))
    with raises_with(param="c", func="draw_first_correct", got="c=5 > n=4 at index 0",
                     constraint="at most 'n'"):
        S.draw_first_correct(4, [5], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="'passk' parameter of calibrate_logit_normal"):
        calibrate_logit_normal(0.5, 0.4, 8)


# ------------------------------------------------------------------------------ sampling


def test_counts_match_expectations_within_five_sigma():
    rng = np.random.default_rng(12345)
    probs = rng.dirichlet(np.full(6, 0.5), size=3000)
    probs = probs / probs.sum(axis=1, keepdims=True)
    n = 500
    counts = S.draw_counts(probs, n, rng=rng)
    assert counts.shape == probs.shape and (counts.sum(axis=1) == n).all()
    # totals per class over questions: sum of independent multinomial coordinates
    mean = n * probs.sum(axis=0)
    sd = np.sqrt(n * (probs * (1 - probs)).sum(axis=0))
    assert (np.abs(counts.sum(axis=0) - mean) < 5 * sd).all()

    p = rng.random(4000)
    frame = S.simulate_pair(p, p, 256, rng=rng)
    c = frame["c"].to_numpy().reshape(2, -1)
    sd = math.sqrt(256 * (p * (1 - p)).sum())
    assert (np.abs(c.sum(axis=1) - 256 * p.sum()) < 5 * sd).all()


def _first_pmf(n, c):
    """P(first = j) = C(n-j-1, c-1) / C(n, c), exactly."""
    return np.array([Fraction(math.comb(n - j - 1, c - 1), math.comb(n, c))
                     for j in range(n - c + 1)], dtype=object)


@pytest.mark.parametrize(("n", "c"), [(10, 3), (12, 1), (9, 7)])
def test_first_correct_distribution_matches_exact_law(n, c):
    pmf = _first_pmf(n, c)
    assert sum(pmf) == 1
    # independent reference: scipy's negative hypergeometric (wrong draws before 1 correct)
    np.testing.assert_allclose(pmf.astype(float),
                               stats.nhypergeom(n, n - c, 1).pmf(np.arange(n - c + 1)),
                               rtol=1e-12)
    m = 40_000
    fc = S.draw_first_correct(np.full(m, n), np.full(m, c), rng=np.random.default_rng(7))
    assert fc.min() >= 0 and fc.max() <= n - c
    observed = np.bincount(fc, minlength=n - c + 1)
    expected = m * pmf.astype(float)
    keep = expected >= 5  # pool the sparse tail into one cell for the chi-square test
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp).pvalue > 1e-4


def test_first_correct_edge_cases_and_large_n():
    rng = np.random.default_rng(3)
    n = np.array([5, 5, 1, 8192, 8192])
    c = np.array([0, 5, 1, 0, 8192])
    assert S.draw_first_correct(n, c, rng=rng).tolist() == [-1, 0, 0, -1, 0]
    # c = 1 among n = 8192: uniform on 0..8191 (mean 4095.5, sd 2364.9)
    fc = S.draw_first_correct(8192, np.ones(20_000, dtype=int), rng=rng)
    assert fc.min() >= 0 and fc.max() < 8192
    assert abs(fc.mean() - 4095.5) < 5 * 2364.9 / math.sqrt(20_000)
    # c = 2: P(first >= j) = C(n-j, 2)/C(n, 2); check the median region exactly
    fc = S.draw_first_correct(8192, np.full(20_000, 2), rng=rng)
    j = 2400
    p = math.comb(8192 - j, 2) / math.comb(8192, 2)
    assert abs((fc >= j).mean() - p) < 5 * math.sqrt(p * (1 - p) / 20_000)


@pytest.mark.parametrize("name", SUMMARY_FRAMES)
def test_first_correct_consistent_with_counts(demo, name):
    f = demo[name]
    fc, c, n = (f[col].to_numpy(dtype=np.int64) for col in ("first_correct", "c", "n"))
    assert ((fc == -1) == (c == 0)).all()
    assert (fc < n).all() and (fc <= n - c).all()


# ------------------------------------------------------------------------------ schema


@pytest.mark.parametrize("name", SUMMARY_FRAMES)
def test_summary_frames_follow_the_schema(demo, name):
    f = demo[name]
    assert list(f.columns) == list(D.SUMMARY_COLUMNS)
    assert list(D.SUMMARY_COLUMNS)[:-1] == list(SCHEMA_COLUMNS)
    assert {c: str(t) for c, t in f.dtypes.items()} == D.SUMMARY_COLUMNS
    assert (f["source"] == D.SOURCE).all()
    assert not f.duplicated(["model", "benchmark", "question_id", "step"]).any()
    # answer lists: sorted by count desc then value, and they add up with the NA samples
    total = np.array([sum(v) for v in f["answer_counts"]]) + f["n_answer_missing"].to_numpy()
    assert (total == f["n"].to_numpy()).all()
    for vals, cnts in zip(f["answer_values"].head(300), f["answer_counts"].head(300),
                          strict=True):
        assert all(isinstance(v, str) for v in vals) and len(set(vals)) == len(vals)
        assert list(zip((-x for x in cnts), vals, strict=True)) == sorted(
            zip((-x for x in cnts), vals, strict=True))


def test_truth_frame_schema(demo):
    t = demo["truth"]
    assert {c: str(d) for c, d in t.dtypes.items()} == D.TRUTH_COLUMNS
    assert set(t["study"]) == {"support", "entropy", "checkpoints", "sft", "gym"}
    assert set(t["true_category"]) <= set(CATEGORIES)
    assert ((t["p_base"] >= 0) & (t["p_base"] <= 1) & (t["p_rl"] >= 0) & (t["p_rl"] <= 1)).all()


def test_token_columns_only_in_entropy_study(demo):
    e = demo["entropy"]
    assert e["token_entropy_mean"].notna().all() and e["n_tokens_mean"].notna().all()
    assert (e["n_tokens_min"] <= e["n_tokens_mean"]).all()
    assert (e["n_tokens_max"] <= 32768).all()
    assert ((e["n_truncated"] > 0) == (e["n_tokens_max"] == 32768)).all()
    assert demo["support"]["token_entropy_mean"].isna().all()


def test_simulate_pair_is_counts_only_summary():
    rng = np.random.default_rng(0)
    f = S.simulate_pair([0.0, 1.0, 0.5], [1.0, 0.0, 0.5], 16, rng=rng, models=("a", "b"))
    assert list(f.columns) == list(D.SUMMARY_COLUMNS)
    assert f["model"].tolist() == ["a"] * 3 + ["b"] * 3
    assert f["c"].tolist()[:2] == [0, 16] and f["c"].tolist()[3:5] == [16, 0]
    assert f["first_correct"].tolist()[:2] == [-1, 0]
    assert f["n_answer_missing"].isna().all() and f["answer_values"].isna().all()


# ------------------------------------------------------------------------------ calibration


CALIBRATED = calibration_targets()


def test_every_prior_of_the_support_and_sft_studies_has_targets():
    cfg = G.load_config()
    names = [b["name"] for b in cfg["benchmarks"]]
    expected = {f"pairs[{p['size']}].{b}" for p in cfg["pairs"] for b in names}
    expected |= {f"sft.{b}" for b in cfg["sft"]["priors"]}
    assert set(CALIBRATED) == expected and len(expected) == 28


@pytest.mark.parametrize("key", sorted(CALIBRATED))
def test_priors_are_calibrated_to_their_targets(key):
    mu0, sigma0, pass1, passk, k = CALIBRATED[key]
    mu, sigma = calibrate_logit_normal(pass1, passk, k)
    m1, mk = logit_normal_moments(mu, sigma, k)
    assert abs(m1 - pass1) < 1e-9 and abs(mk - passk) < 1e-9
    assert (mu0, sigma0) == pytest.approx((mu, sigma), abs=0.0051)
    # the rounded, committed prior still hits the targets closely
    r1, rk = logit_normal_moments(mu0, sigma0, k)
    assert abs(r1 - pass1) < 0.005 and abs(rk - passk) < 0.005


def test_logit_normal_moments_match_direct_integration():
    # independent reference: scipy.integrate.quad over the normal density
    from scipy import integrate, special

    mu, sigma, k = -1.0, 2.0, 64
    dens = stats.norm.pdf
    e1 = integrate.quad(lambda z: special.expit(mu + sigma * z) * dens(z), -12, 12)[0]
    ek = integrate.quad(lambda z: (1 - (1 - special.expit(mu + sigma * z)) ** k) * dens(z),
                        -12, 12, limit=200)[0]
    assert logit_normal_moments(mu, sigma, k) == pytest.approx((e1, ek), abs=1e-9)


# ------------------------------------------------------------------------------ committed demo


@pytest.mark.slow
def test_committed_demo_equals_fresh_regeneration(demo, tmp_path):
    # The committed files were written on one CPU; another CPU's exp/log differ in the last
    # bits, so floats compare within 1e-12 and everything else exactly (leash.analysis.compare).
    on_disk = D.read_demo()
    for name in D.DEMO_FILES:
        assert frame_differences(on_disk[name], demo[name]) == [], name
    # Writing is deterministic on one machine: two writes give the same bytes.
    a = write_demo(tmp_path / "a")
    b = write_demo(tmp_path / "b")
    for name in D.DEMO_FILES:
        assert a[name].read_bytes() == b[name].read_bytes()


@pytest.mark.slow
def test_committed_demo_is_labelled_and_readable_as_summaries():
    d = D.demo_dir()
    assert "SIMULATED" in (d / "README.md").read_text()
    for name in D.DEMO_FILES:
        meta = pq.read_schema(d / f"{name}.parquet").metadata
        assert meta[b"source"] == b"simulated"
    for name in SUMMARY_FRAMES:
        f = read_summary(d / f"{name}.parquet")
        assert f.attrs["provenance"]["source"] == "simulated"
        assert len(f) == len(D.read_demo()[name])


@pytest.mark.slow
def test_main_simulate_check_passes_on_committed_demo():
    assert main_simulate(["--check"]) == 0


# ------------------------------------------------------------------------------ the demo's shape


def _pair_counts(frame, base, rl, step_base=None, step_rl=None):
    def sel(model, step):
        f = frame[frame["model"] == model]
        if step is not None:
            f = f[f["step"] == step]
        return f.set_index(["benchmark", "question_id"])["c"]

    cb = sel(base, step_base)
    cr = sel(rl, step_rl).loc[cb.index]
    return support_counts(cb.to_numpy(), cr.to_numpy())


@pytest.mark.parametrize("size", ["1.5B", "7B"])
def test_support_table_looks_like_the_papers(demo, size):
    P, E, S_, O_ = _pair_counts(demo["support"], f"demo-base-{size}", f"demo-rlvr-{size}")
    m = support_metrics(P, E, S_, O_)
    assert 0.90 <= m.SRR <= 0.99
    assert 0.0 < m.NDR <= 0.05
    assert m.NSCR < 0


def test_entropy_pattern_of_table_5(demo):
    t = entropy_table(demo["entropy"]).groupby("model")[["token_entropy", "answer_entropy",
                                                         "avg@n (%)"]].mean()
    # 1.5B: token entropy up, answer entropy down; 7B: both down; accuracy up for both
    assert t.loc["demo-rlvr-1.5B", "token_entropy"] > t.loc["demo-base-1.5B", "token_entropy"]
    assert t.loc["demo-rlvr-7B", "token_entropy"] < t.loc["demo-base-7B", "token_entropy"]
    for size in ("1.5B", "7B"):
        base, rl = t.loc[f"demo-base-{size}"], t.loc[f"demo-rlvr-{size}"]
        assert rl["answer_entropy"] < base["answer_entropy"]
        assert rl["avg@n (%)"] > base["avg@n (%)"]


def test_checkpoint_shrinkage_grows_with_training(demo):
    ck = demo["checkpoints"]
    s = {step: _pair_counts(ck, "demo-dapo-1.5B", "demo-dapo-1.5B", 0, step).S
         for step in (50, 300)}
    assert s[300] > s[50]


def test_sft_expands_and_rlvr_shrinks(demo):
    sft = _pair_counts(demo["sft"], "demo-base-math-7B", "demo-sft-math-7B")
    rl = _pair_counts(demo["sft"], "demo-base-math-7B", "demo-rlvr-math-7B")
    assert sft.E > sft.S and rl.S > rl.E


def test_gym_tasks_show_their_pattern(demo):
    for task in G.load_config()["gym"]:
        name = task["name"]
        g = demo["gym"][demo["gym"]["benchmark"] == name]
        P, E, S_, O_ = _pair_counts(g, "demo-base-1.5B", "demo-rlvr-1.5B")
        if task["pattern"] == "expansion":
            assert E > S_, name
        elif task["pattern"] == "shrinkage":
            assert S_ > E, name
        else:
            assert P >= 0.9 * (P + E + S_ + O_), name


# ------------------------------------------------------------------------------ misclassification


def _truth_rows(p_base, p_rl, qids, n):
    k = len(qids)
    return pd.DataFrame({
        "study": pd.array(["walk"] * k, dtype="string"),
        "base_model": pd.array(["base"] * k, dtype="string"),
        "base_step": pd.array([None] * k, dtype="Int64"),
        "model": pd.array(["rlvr"] * k, dtype="string"),
        "step": pd.array([None] * k, dtype="Int64"),
        "benchmark": pd.array(["simulated"] * k, dtype="string"),
        "question_id": pd.array(qids, dtype="string"),
        "n": np.full(k, n, dtype=np.int64),
        "p_base": np.asarray(p_base, dtype=float),
        "p_rl": np.asarray(p_rl, dtype=float),
        "pruned": np.zeros(k, dtype=bool),
        "expanded": np.zeros(k, dtype=bool),
        "epsilon": np.full(k, np.nan),
        "true_category": pd.array(["?"] * k, dtype="string"),
        "reference_answer": pd.array(["0"] * k, dtype="string"),
        "source": pd.array(["simulated"] * k, dtype="string"),
    })


def test_misclassification_table_on_certain_outcomes():
    # p in {0, 1}: every draw is certain, so the empirical rule is always right
    pb = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    pr = np.array([1.0, 1.0, 0.0, 0.0, 1.0])
    qids = [f"q{i:05d}" for i in range(5)]
    summary = S.simulate_pair(pb, pr, 64, rng=np.random.default_rng(0))
    tab = misclassification_table(summary, _truth_rows(pb, pr, qids, 64), k=16)
    assert tab["misclassified"].sum() == 0
    diag = {idx[-1]: tab.loc[idx, idx[-1]] for idx in tab.index}
    assert diag == {"preservation": 2, "expansion": 1, "shrinkage": 1, "out_of_support": 1}


def test_misclassification_table_near_threshold_errs_as_expected():
    # p exactly at 3 epsilon(k): found in k draws with probability 1 - (1-p)^k ~ 1 - zeta^3
    k, n_q = 64, 4000
    p = 3 * epsilon(k)
    summary = S.simulate_pair(np.full(n_q, p), np.zeros(n_q), k, rng=np.random.default_rng(1))
    truth = _truth_rows(np.full(n_q, p), np.zeros(n_q), [f"q{i:05d}" for i in range(n_q)], k)
    tab = misclassification_table(summary, truth, k=k)
    row = tab.xs("shrinkage", level="true_category").iloc[0]
    miss = (1 - p) ** k  # base misses -> empirical out_of_support
    assert row["total"] == n_q
    assert abs(row["out_of_support"] - n_q * miss) < 5 * math.sqrt(n_q * miss * (1 - miss))
    assert row["misclassified"] == row["out_of_support"]


def test_misclassification_table_on_demo(demo):
    with pytest.raises(ValueError, match="'study' parameter"):
        misclassification_table(demo["support"], demo["truth"], k=2048)
    tab = misclassification_table(demo["support"], demo["truth"], k=2048, study="support")
    n_questions = sum(b["n_questions"] for b in G.load_config()["benchmarks"])
    assert tab.groupby(level="model")["total"].sum().tolist() == [n_questions] * 2
    # The rule is nearly exact for clear cases and errs near epsilon: questions with p just
    # below epsilon are still often found (finding does not imply p > epsilon).
    pres = tab.xs("preservation", level="true_category")
    assert (pres["misclassified"] <= 0.01 * pres["total"]).all()
    assert 0 < tab["misclassified"].sum() < 0.10 * tab["total"].sum()
    with pytest.raises(ValueError, match="'k' parameter of misclassification_table"):
        misclassification_table(demo["support"], demo["truth"], k=10_000, study="support")


def test_misclassification_table_reports_unmatched_and_missing_order():
    pb, pr = np.array([0.5, 0.5]), np.array([0.5, 0.5])
    summary = S.simulate_pair(pb[:1], pr[:1], 8, rng=np.random.default_rng(0))
    truth = _truth_rows(pb, pr, ["q00000", "q00001"], 8)
    with pytest.warns(UserWarning, match="1 of 2 truth rows .* left out; 1 used"):
        tab = misclassification_table(summary, truth, k=8)
    assert tab["total"].sum() == 1
    summary["first_correct"] = pd.array([None, None], dtype="Int64")
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="first_correct NA"):
        misclassification_table(summary, truth, k=4)


def test_study_config_is_validated():
    cfg = G.load_config()
    bad = {**cfg, "entropy_benchmarks": ["AIME2024", "GSM8K"]}
    with pytest.raises(ValueError, match=r"`entropy_benchmarks` names unknown benchmarks "
                                         r"\['GSM8K'\]"):
        G.simulate_study(bad, rng=np.random.default_rng(0))
    bad = {**cfg, "checkpoints": {**cfg["checkpoints"], "pair_size": "70B"}}
    with pytest.raises(ValueError, match="`checkpoints.pair_size` '70B' is not the size"):
        G.simulate_study(bad, rng=np.random.default_rng(0))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 20_000), st.floats(0.0, 1.0)), min_size=1,
                max_size=50), st.integers(0, 2**32 - 1))
def test_first_correct_is_a_feasible_position(nc, seed):
    n = np.array([a for a, _ in nc])
    c = np.floor(np.array([f for _, f in nc]) * n).astype(np.int64)
    fc = S.draw_first_correct(n, c, rng=np.random.default_rng(seed))
    assert ((fc == -1) == (c == 0)).all()
    assert ((fc >= -1) & (fc <= n - c) & (fc < n)).all()
    assert (fc[c == n] == 0).all()


# ------------------------------------------------------------------------------ the config file


def _bad_config(tmp_path, old, new):
    text = G.config_path().read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "config.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(("old", "new", "message"), [
    ("tau: 0.002", "tau: 2e-3",  # YAML 1.1 reads 2e-3 as a string
     r", line 59: `pairs\[0\]\.rlvr\.tau` must be a number in \[0, 1\], got '2e-3' \(str\)\.$"),
    ("sharpen: 1.5, tau: 0.002", "sharpn: 1.5, tau: 0.002",
     r", line 59: unknown key `pairs\[0\]\.rlvr\.sharpn` \(did you mean `sharpen`\?\)"),
    ("n_wrong: 8 ", "n_wrong: 0 ", r", line 18: `n_wrong` must be an int >= 1, got 0 \(int\)\.$"),
    ("  lam: 0.3\n", "", r", line \d+: `sft` lacks the required key `lam`\.$"),
    ("  pair_size: 1.5B", "  pair_size: 70B",
     r": `checkpoints\.pair_size` '70B' is not the size of any pair \(\['1\.5B', '7B'\]\)\.$"),
    ("      SciBench: {mu: 0.71", "      SciBenc: {mu: 0.71",
     r": `pairs\[1\]\.priors` has no prior for \['SciBench'\]\.$"),
])
def test_a_bad_config_file_is_one_line_naming_file_line_and_key(tmp_path, old, new, message):
    path = _bad_config(tmp_path, old, new)
    with pytest.raises(ValueError, match=r"^simulation config " + str(path).replace(".", r"\.")
                       + message) as exc:
        G.load_config(path)
    assert "\n" not in str(exc.value)


def test_leash_simulate_config_option(tmp_path, capsys):
    bad = _bad_config(tmp_path, "rho: 0.8", "rho: 1.8")
    assert main_simulate(["--config", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("leash simulate: error: simulation config ") and "\n" not in err
    assert "`rho` must be a number in [-1, 1], got 1.8 (float)" in err
    assert not (tmp_path / "out").exists()
    assert main_simulate(["--config", str(tmp_path / "none.yaml")]) == 2
    assert "none.yaml: no such file." in capsys.readouterr().err


def test_config_values_reach_the_model():
    cfg = G.load_config()
    pair = cfg["pairs"][0]
    # the file gives Table 5's printed mean length; the model uses 0.7 times it as the median
    assert pair["tokens_base"]["length"]["AIME2024"] == pytest.approx(0.7 * 16363)
    assert pair["priors"]["MATH500"] == {"mu": 6.41, "sigma": 5.92, "na_mean": 0.3}
    assert [t["name"] for t in cfg["gym"]][:2] == ["graph_color", "palindrome_generation"]
    models = G._models(cfg)
    assert models["gym"][0]["rlvr"] == S.RLVRModel(beta=4.0)
    assert models["sft"]["priors"]["AMC23"] == S.BasePrior(mu=-0.64, sigma=1.85, na_mean=0.1)
    # a fresh object each call: editing one does not change the next
    cfg["rho"] = 0.0
    assert G.load_config()["rho"] == 0.8


def test_committed_metadata_records_the_full_configuration():
    import json

    meta = pq.read_schema(D.demo_dir() / "support.parquet").metadata
    recorded = json.loads(meta[b"leash.sources.simulate"])
    assert recorded["seed"] == D.DEMO_SEED
    assert recorded["config"] == json.loads(json.dumps(G.config_record(G.load_config())))
    # every default written out, e.g. an RLVR update given as {beta: 4.0} in the file
    assert recorded["config"]["gym"][0]["rlvr"] == {
        "beta": 4.0, "sharpen": 1.0, "tau": 0.0, "p_prune": 0.0, "p_expand": 0.0,
        "eps_expand": None, "delta_low": 0.001, "delta_high": 0.02}


def test_summary_columns_follow_the_summary_schema():
    # independent derivation: the pyarrow schema of leash.summary, as read_summary types it
    import pyarrow as pa

    from leash.summary import summary_schema

    nullable = {"step", "first_correct", "n_answer_missing", "n_truncated"}
    expected = {}
    for f in summary_schema():
        if pa.types.is_list(f.type):
            expected[f.name] = "object"
        elif f.type == pa.string():
            expected[f.name] = "string"
        elif f.type == pa.float64():
            expected[f.name] = "float64"
        else:
            expected[f.name] = "Int64" if f.name in nullable else "int64"
    assert D.SUMMARY_COLUMNS == {**expected, "source": "string"}


@pytest.mark.slow
def test_simulate_does_not_load_the_summary_format_or_the_study():
    import subprocess
    import sys

    # beyond what `import leash` loads (the package imports its metric core and tables)
    code = ("import sys, leash; before = set(sys.modules); import leash.sources.simulate; "
            "bad = [m for m in ('leash_eval.formats', 'leash_eval.summarize', "
            "'leash.analysis.tables', "
            "'leash.sources.study') if m in set(sys.modules) - before]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)
    code = "import sys, leash.sources.study; assert 'leash.sources.simulate' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
