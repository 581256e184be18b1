"""Formats: every supported layout round-trips to the same per-question summary; detection;
nested field mappings; the real public files from the data mirror."""

from __future__ import annotations

import csv
import gzip
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support import raises_with
from leash_eval.formats import MAPPINGS, NestedMapping, detect_format
from leash_eval.summarize import summarize

REPO = Path(__file__).resolve().parents[1]


def mirror() -> Path:
    env = os.environ.get("LEASH_DATA_MIRROR")
    return Path(env) if env else REPO.parent / "shared" / "data"


def synth_samples(rng, n_questions=7, n_samples=6, models=("base", "rl")) -> pd.DataFrame:
    """Synthetic canonical samples with answers (some missing), tokens, entropy, truncation."""
    rows = []
    for m in models:
        for q in range(n_questions):
            p = rng.random()
            for i in range(n_samples):
                ok = bool(rng.random() < p)
                ans = "42" if ok else rng.choice(["7", "x/2", None, " 9 "])
                rows.append({
                    "model": m, "benchmark": "bench", "question_id": f"q{q}",
                    "sample_idx": i, "correct": ok, "answer": ans,
                    "n_tokens": int(rng.integers(10, 500)),
                    "token_entropy": float(rng.gamma(2.0, 0.3)),
                    "finish_reason": "length" if rng.random() < 0.2 else "stop",
                    "response": f"resp {m} {q} {i}, with \"quotes\"\nand a newline",
                })
    return pd.DataFrame(rows)


def records(df: pd.DataFrame) -> list[dict]:
    """Rows as dicts with missing values as None (pandas 3 turns None into NaN in str columns)."""
    return [{k: (None if (not isinstance(v, (list, np.ndarray)) and pd.isna(v)) else v)
             for k, v in rec.items()} for rec in df.to_dict("records")]


def write_jsonl(df: pd.DataFrame, path: Path, gz=False):
    op = gzip.open if gz else open
    with op(path, "wt") as fh:
        for rec in records(df):
            fh.write(json.dumps(rec) + "\n")


def write_csv(df: pd.DataFrame, path: Path):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(df.columns))
        w.writeheader()
        for rec in records(df):
            w.writerow({k: ("" if v is None else v) for k, v in rec.items()})


def write_evaluator(df: pd.DataFrame, path: Path, model: str):
    """One evaluator record per question: parallel lists in sample order."""
    sub = df[df.model == model].sort_values(["question_id", "sample_idx"])
    with open(path, "w") as fh:
        for qid, g in sub.groupby("question_id", sort=False):
            fh.write(json.dumps({
                "idx": qid, "gt": "42", "code": g.response.tolist(), "pred": [
                    "" if pd.isna(a) else a for a in g.answer.tolist()],
                "score": g.correct.tolist(), "finish_reason": g.finish_reason.tolist(),
            }) + "\n")


def write_rollouts(df: pd.DataFrame, path: Path):
    """Probe-style nested records, rollouts deliberately stored out of order."""
    with open(path, "w") as fh:
        for (m, qid), g in df.groupby(["model", "question_id"], sort=False):
            ro = [{"rollout": int(r.sample_idx), "pred_value": None if pd.isna(r.answer) else
                   r.answer, "correct": r.correct,
                   "text": r.response} for r in g.itertuples()][::-1]
            fh.write(json.dumps({"model_name": m, "qid": qid, "rollouts": ro}) + "\n")


def _core(df: pd.DataFrame) -> pd.DataFrame:
    cols = ["model", "benchmark", "question_id", "n", "c", "first_correct", "n_answer_missing",
            "answer_values", "answer_counts", "n_truncated"]
    out = df[cols].copy()
    out["answer_values"] = out["answer_values"].map(list)
    out["answer_counts"] = out["answer_counts"].map(list)
    return out.sort_values(["model", "question_id"]).reset_index(drop=True)


@pytest.fixture
def samples():
    return synth_samples(np.random.default_rng(3))


@pytest.mark.slow
def test_canonical_containers_give_identical_summaries(tmp_path, samples):
    paths = {
        "jsonl": tmp_path / "s.jsonl", "jsonl.gz": tmp_path / "s.jsonl.gz",
        "parquet": tmp_path / "s.parquet", "csv": tmp_path / "s.csv",
    }
    write_jsonl(samples, paths["jsonl"])
    write_jsonl(samples, paths["jsonl.gz"], gz=True)
    samples.to_parquet(paths["parquet"])
    write_csv(samples, paths["csv"])
    ref = summarize(paths["parquet"])
    # hand count of c and n from the synthetic frame
    g = samples.groupby(["model", "question_id"])
    assert dict(zip(zip(ref.model, ref.question_id), ref.c)) == g.correct.sum().to_dict()
    assert set(ref.n) == {6}
    for name, p in paths.items():
        got = summarize(p, chunk_size=5)
        pd.testing.assert_frame_equal(_core(got), _core(ref), obj=name)
        for col in ("n_tokens_mean", "n_tokens_min", "n_tokens_max", "token_entropy_mean",
                    "token_entropy_std"):
            np.testing.assert_allclose(got.sort_values(["model", "question_id"])[col],
                                       ref.sort_values(["model", "question_id"])[col],
                                       rtol=1e-12, err_msg=f"{name} {col}")


@pytest.mark.parametrize("name", ["s.csv", "s.jsonl", "s.csv.gz", "counts.csv"])
def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path, samples, name):
    # Excel's "CSV UTF-8" and pandas' to_csv(encoding="utf-8-sig") start the file with a BOM;
    # it used to be read into the first column's name ("\ufeffmodel": "field 'model' missing")
    if name == "counts.csv":
        g = samples.groupby(["model", "benchmark", "question_id"], as_index=False)
        frame = g.agg(n=("correct", "size"), c=("correct", "sum"))
    else:
        frame = samples.drop(columns="response")
    plain, bom = tmp_path / ("plain_" + name), tmp_path / name
    if ".csv" in name:
        frame.to_csv(plain, index=False)
    else:
        write_jsonl(frame, plain)
    data = plain.read_bytes()
    if name.endswith(".gz"):
        data = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        bom.write_bytes(gzip.compress(b"\xef\xbb\xbf" + data))
    else:
        bom.write_bytes(b"\xef\xbb\xbf" + data)
    got = summarize(bom)
    by_hand = samples.groupby(["model", "question_id"]).correct.agg(["size", "sum"])
    assert dict(zip(zip(got.model, got.question_id), zip(got.n, got.c))) == {
        k: (int(n), int(c)) for k, (n, c) in by_hand.iterrows()}
    pd.testing.assert_frame_equal(got, summarize(plain))


@pytest.mark.slow
def test_nested_layouts_match_canonical(tmp_path, samples):
    canon = tmp_path / "s.parquet"
    samples.to_parquet(canon)
    ref = _core(summarize(canon))
    # evaluator: one file per model, model and benchmark from the caller
    parts = []
    for m in ("base", "rl"):
        p = tmp_path / f"{m}.eval.jsonl"
        write_evaluator(samples, p, m)
        assert detect_format(p)[0] == "evaluator"
        parts.append(summarize(p, model=m, benchmark="bench"))
    ev = _core(pd.concat(parts, ignore_index=True))
    pd.testing.assert_frame_equal(ev, ref)
    # probe-style rollouts (model from model_name), answers via pred_value
    p = tmp_path / "probe_raw.jsonl"
    write_rollouts(samples, p)
    fmt, mapping = detect_format(p)
    assert (fmt, mapping.name) == ("nested", "rollouts")
    got = _core(summarize(p, benchmark="bench"))
    # the probe layout has no finish_reason: nothing is counted as truncated
    assert (got.pop("n_truncated") == 0).all()
    pd.testing.assert_frame_equal(got, ref.drop(columns="n_truncated"))


@pytest.mark.slow
def test_a_different_mapping_needs_no_new_code(tmp_path, samples):
    """Parallel lists named samples / is_corrects (Large-Language-Monkeys style) and a custom
    dict mapping with other names both read without code changes."""
    sub = samples[samples.model == "rl"].sort_values(["question_id", "sample_idx"])
    p1, p2 = tmp_path / "monkeys.jsonl", tmp_path / "custom.jsonl"
    with open(p1, "w") as f1, open(p2, "w") as f2:
        for qid, g in sub.groupby("question_id", sort=False):
            ans = [None if pd.isna(a) else a for a in g.answer]
            f1.write(json.dumps({"question_id": qid, "samples": g.response.tolist(),
                                 "is_corrects": g.correct.tolist(),
                                 "extracted_answers": ans}) + "\n")
            f2.write(json.dumps({"problem": {"x": 1}, "pid": qid, "generations": [
                {"ok": int(c), "final": a, "k": int(i)} for c, a, i in
                zip(g.correct, ans, g.sample_idx)]}) + "\n")
    # these layouts carry no finish_reason
    ref = _core(summarize(_write(sub.drop(columns="finish_reason"), tmp_path)))
    got1 = summarize(p1, model="rl", benchmark="bench")
    assert got1.attrs["provenance"]["files"][0]["mapping"] == "samples"
    pd.testing.assert_frame_equal(_core(got1), ref)
    custom = {"question_id": "pid", "samples": "generations", "correct": "ok",
              "answer": "final", "index": "k"}
    got2 = summarize(p2, mapping=custom, model="rl", benchmark="bench")
    pd.testing.assert_frame_equal(_core(got2), ref)
    got3 = summarize(p2, mapping=NestedMapping(name="mine", **custom), model="rl",
                     benchmark="bench")
    pd.testing.assert_frame_equal(_core(got3), ref)


def _write(df, tmp_path):
    p = tmp_path / "ref.parquet"
    df.to_parquet(p)
    return p


def test_evaluator_seed_files_concatenate_in_order(tmp_path):
    """Two seed files of 3 samples: sample_idx continues, first_correct counts across files."""
    a, b = tmp_path / "seed0.jsonl", tmp_path / "seed1.jsonl"
    a.write_text(json.dumps({"idx": 0, "code": ["x"] * 3, "pred": ["1"] * 3,
                             "score": [False, False, False]}) + "\n")
    b.write_text(json.dumps({"idx": 0, "code": ["x"] * 3, "pred": ["2"] * 3,
                             "score": [False, True, False]}) + "\n")
    out = summarize([a, b], model="m", benchmark="b")
    assert out.loc[0, ["n", "c", "first_correct"]].tolist() == [6, 1, 4]


def test_detection_errors_name_file_and_formats(tmp_path):
    p = tmp_path / "weird.jsonl"
    p.write_text(json.dumps({"foo": 1, "bar": [1]}) + "\n")
    with pytest.raises(ValueError) as e:
        detect_format(p)
    msg = str(e.value)
    assert "weird.jsonl" in msg and "samples" in msg and "counts" in msg
    assert all(f"'{m}'" in msg for m in MAPPINGS) and "fmt=" in msg
    q = tmp_path / "x.txt"
    q.write_text("hello")
    with pytest.raises(ValueError, match="x.txt.*extension"):
        detect_format(q)
    with pytest.raises(ValueError, match="'fmt' parameter"):
        detect_format(p, fmt="bogus")
    # the two look-alikes users save most: a JSON array and a CSV file separated by semicolons
    recs = [{"question_id": "1", "sample_idx": i, "correct": True} for i in range(2)]
    for text in (json.dumps(recs), json.dumps(recs, indent=1)):
        (tmp_path / "results.json").write_text(text)
        with pytest.raises(ValueError, match=r"results.json: .*cannot detect the format\. The "
                                             r"file looks like one JSON array.*one object per "
                                             r"line"):
            detect_format(tmp_path / "results.json")
    pd.DataFrame({"question_id": ["1"], "sample_idx": [0], "correct": [True]}).to_json(
        tmp_path / "columns.json")  # pandas' default: {"question_id": {"0": "1"}, ...}
    with pytest.raises(ValueError, match=r"columns.json: the first record holds one object per "
                                         r"column.*orient='records', lines=True"):
        detect_format(tmp_path / "columns.json")
    (tmp_path / "excel.csv").write_text("question_id;n;c\n1;4;2\n")
    with pytest.raises(ValueError, match=r"Found keys: \['question_id;n;c'\] \(semicolon-"
                                         r"separated: leash reads CSV separated by commas\)"):
        detect_format(tmp_path / "excel.csv")
    (tmp_path / "spaced.csv").write_text("question_id, n, c\n1, 4, 2\n")
    with pytest.raises(ValueError, match=r"\(names with spaces around them: \[' c', ' n'\]\)"):
        detect_format(tmp_path / "spaced.csv")


def test_explicit_format_override(tmp_path, samples):
    p = tmp_path / "data.json"   # unusual extension content: canonical samples
    write_jsonl(samples, p)
    assert detect_format(p) == ("samples", None)
    assert detect_format(p, fmt="counts") == ("counts", None)
    out = summarize(p, fmt="samples")
    assert int(out.n.sum()) == len(samples)


# ---------------------------------------------------------------------------------------------
# Real public files (data mirror)
# ---------------------------------------------------------------------------------------------
PROBE = "gsm8k-sft-vs-rlvr-probe"
needs_mirror = pytest.mark.skipif(
    not (mirror() / PROBE).is_dir(),
    reason="data mirror not found (set LEASH_DATA_MIRROR or place it at ../shared/data)")


@pytest.mark.slow
@pytest.mark.mirror
@needs_mirror
@pytest.mark.parametrize("step", ["final_2048", "step-100", "step-1000"])
def test_probe_counts_match_hand_count_and_upstream(step):
    d = mirror() / PROBE
    rl = d / f"{step}.rl_raw.jsonl"
    sft = d / "final_2048.sft_raw.jsonl"
    out = summarize([sft, rl], benchmark="gsm8k")
    upstream = pd.read_csv(d / f"{step}.per_question.csv")
    for path, col in ((sft, "c_sft"), (rl, "c_rl")):
        hand = {}
        model = None
        with open(path) as fh:
            for line in fh:
                rec = json.loads(line)
                model = rec["model_name"]
                hand[str(rec["qid"])] = sum(bool(r["correct"]) for r in rec["rollouts"])
                assert hand[str(rec["qid"])] == rec["n_correct"]
        got = out[out.model == model].set_index("question_id")["c"].to_dict()
        assert got == hand
        up = dict(zip(upstream.qid.astype(str), upstream[col]))
        differ = {q for q in up if up[q] != got[q]}
        # Known upstream inconsistency: final_2048/per_question.csv was not regenerated after
        # the "Rescore" commit; for questions 13 (gold 45000) and 24 (gold 15400) it lists
        # c_sft = c_rl = 0 while the rescored rollouts (and their own n_correct field) have
        # verified-correct samples. Every other question, and every checkpoint file, agrees.
        assert differ == ({"13", "24"} if step == "final_2048" else set())
        assert all(up[q] == 0 for q in differ)
        assert set(out[out.model == model].n) == {8}


@pytest.mark.mirror
@needs_mirror
def test_math_evaluator_example_pass_at_1_and_8():
    p = mirror() / "math-benchmarks" / "eval_rm_maj_example.math_cot_100.jsonl"
    out = summarize(p, model="qwen2.5-math-instruct", benchmark="math")
    scores = [json.loads(line)["score"] for line in open(p)]
    exp1 = np.mean([np.mean(s) for s in scores])
    exp8 = np.mean([any(s) for s in scores])
    got1 = float((out.c / out.n).mean())
    got8 = float((out.c > 0).mean())
    assert got1 == pytest.approx(exp1, abs=1e-12) and got8 == pytest.approx(exp8)
    assert round(got1, 2) == 0.91 and round(got8, 2) == 0.96   # SOURCE.txt
    assert len(out) == 100 and set(out.n) == {8}
    # first_correct from score order
    fc = [next((i for i, s in enumerate(ss) if s), -1) for ss in scores]
    assert out.first_correct.tolist() == fc
    # answers: histogram of pred[] per question
    preds = [json.loads(line)["pred"] for line in open(p)]
    assert [int(np.sum(c)) for c in out.answer_counts] == [
        sum(1 for x in pr if x.strip()) for pr in preds]


def test_parquet_reads_int_question_ids_as_strings(tmp_path):
    t = pa.table({"model": ["m"] * 3, "benchmark": ["b"] * 3, "question_id": [5, 5, 12],
                  "sample_idx": [0, 1, 0], "correct": [1, 0, 1]})
    p = tmp_path / "ints.parquet"
    pq.write_table(t, p)
    out = summarize(p)
    assert out.question_id.tolist() == ["5", "12"]
    assert str(out.question_id.dtype) == "string"
    assert out.c.tolist() == [1, 1]


@pytest.mark.slow
def test_pandas_integer_columns_with_missing_values_read_in_csv(tmp_path):
    # pandas writes an integer column that has missing values as floats: "2.0" in CSV, where
    # JSON lines and Parquet keep the number 2.0, which was always read as 2
    counts = pd.DataFrame({"model": "m", "benchmark": "b", "question_id": [1, 2, 3],
                           "n": 8, "c": [0, 3, 8], "first_correct": [None, 2, 0],
                           "step": [None, 100, 100]})
    counts.to_csv(tmp_path / "c.csv", index=False)
    assert "2,8,3,2.0,100.0" in (tmp_path / "c.csv").read_text()
    counts.to_json(tmp_path / "c.jsonl", orient="records", lines=True)
    got = load_counts_frame(tmp_path / "c.csv")
    assert got.first_correct.tolist() == [-1, 2, 0] and got.step.tolist()[1:] == [100, 100]
    pd.testing.assert_frame_equal(got, load_counts_frame(tmp_path / "c.jsonl"))
    (tmp_path / "bad.csv").write_text("model,benchmark,question_id,n,c\nm,b,1,8,2.5\n")
    with raises_with(file=str(tmp_path / "bad.csv"), line="line 2", key="c", value="'2.5'",
                     text="must be an integer"):
        load_counts_frame(tmp_path / "bad.csv")


def load_counts_frame(path):
    from leash_eval.summarize import load_counts

    return load_counts(path)[["question_id", "step", "n", "c", "first_correct"]]
