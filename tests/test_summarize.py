"""summarize / load_counts / read_summary: exact agreement with a naive pandas groupby for any
chunk size (hypothesis), hand-computed statistics, provenance, and one entry point for all
inputs."""

from __future__ import annotations

import json
import math
import statistics
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _support import raises_with
from leash.errors import Param
from leash.summary import SUMMARY_COLUMNS, SUMMARY_METADATA_KEY
from leash_eval.summarize import load_counts, read_summary, summarize


def naive_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Reference: plain pandas over the whole frame, one row per question."""
    rows = []
    for (m, b, q), g in df.groupby(["model", "benchmark", "question_id"], sort=True):
        g = g.sort_values("sample_idx")
        corr = g.correct.to_numpy(bool)
        ans = [None if (a is None or (isinstance(a, float) and math.isnan(a)))
               else str(a).strip() for a in g.answer]
        ans = [None if a in ("", "NA") else a for a in ans]
        hist = Counter(a for a in ans if a is not None)
        order = sorted(hist.items(), key=lambda kv: (-kv[1], kv[0]))
        tok = g.n_tokens.dropna().to_numpy(float)
        ent = g.token_entropy.dropna().to_numpy(float)
        rows.append({
            "model": m, "benchmark": b, "question_id": q, "n": len(g), "c": int(corr.sum()),
            # the position of the first correct sample in sample_idx order (its sample_idx when
            # the indices run 0..n-1; 1-based indices or gaps count as positions)
            "first_correct": int(np.flatnonzero(corr)[0]) if corr.any() else -1,
            "n_answer_missing": sum(a is None for a in ans),
            "answer_values": [k for k, _ in order], "answer_counts": [v for _, v in order],
            "n_tokens_mean": tok.mean() if len(tok) else np.nan,
            "n_tokens_min": tok.min() if len(tok) else np.nan,
            "n_tokens_max": tok.max() if len(tok) else np.nan,
            "token_entropy_mean": ent.mean() if len(ent) else np.nan,
            "token_entropy_std": statistics.stdev(ent) if len(ent) > 1 else np.nan,
            "n_truncated": int((g.finish_reason == "length").sum()),
        })
    return pd.DataFrame(rows)


def compare(got: pd.DataFrame, ref: pd.DataFrame):
    got = got.sort_values(["model", "benchmark", "question_id"]).reset_index(drop=True)
    assert len(got) == len(ref)
    for col in ("model", "benchmark", "question_id"):
        assert got[col].tolist() == ref[col].tolist()
    for col in ("n", "c", "first_correct", "n_answer_missing", "n_truncated"):
        assert got[col].astype(int).tolist() == ref[col].tolist(), col
    assert [list(v) for v in got.answer_values] == ref.answer_values.tolist()
    assert [list(v) for v in got.answer_counts] == ref.answer_counts.tolist()
    for col in ("n_tokens_mean", "n_tokens_min", "n_tokens_max", "token_entropy_mean",
                "token_entropy_std"):
        np.testing.assert_allclose(got[col].to_numpy(float), ref[col].to_numpy(float),
                                   rtol=1e-9, atol=1e-12, err_msg=col)


sample_rows = st.lists(
    st.tuples(
        st.sampled_from(["m1", "m2"]), st.sampled_from(["b1", "b2"]),
        st.integers(0, 4),                                    # question
        st.booleans(),                                        # correct
        st.one_of(st.none(), st.sampled_from(["1", "2", " 2", "x", "", "NA"])),
        st.one_of(st.none(), st.integers(1, 900)),            # n_tokens
        st.one_of(st.none(), st.floats(0, 5, allow_nan=False)),
        st.sampled_from(["stop", "length", None]),
        st.sampled_from([0, 0, 0, 1, 3]),                     # indices skipped before it
    ),
    min_size=1, max_size=60)


@pytest.mark.slow
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=sample_rows, chunk=st.integers(1, 25), perm_seed=st.integers(0, 2**31 - 1))
def test_any_chunk_size_matches_naive_groupby(tmp_path, rows, chunk, perm_seed):
    recs = []
    counter = Counter()
    for m, b, q, ok, ans, tok, ent, fr, skipped in rows:
        key = (m, b, q)  # indices with gaps and offsets: first_correct counts positions
        counter[key] += skipped
        recs.append({"model": m, "benchmark": b, "question_id": f"q{q}",
                     "sample_idx": counter[key], "correct": ok, "answer": ans,
                     "n_tokens": tok, "token_entropy": ent, "finish_reason": fr})
        counter[key] += 1
    # file order is a random permutation: first_correct must follow sample_idx, not file order
    perm = np.random.default_rng(perm_seed).permutation(len(recs))
    p = tmp_path / f"h{perm_seed}_{chunk}.jsonl"
    with open(p, "w") as fh:
        for i in perm:
            fh.write(json.dumps(recs[i]) + "\n")
    df = pd.DataFrame(recs).astype({"answer": object})
    got = summarize(p, chunk_size=chunk)
    compare(got, naive_summary(df))
    # parquet path agrees too
    pq_path = p.with_suffix(".parquet")
    df.iloc[perm].to_parquet(pq_path)
    compare(summarize(pq_path, chunk_size=chunk), naive_summary(df))


@pytest.mark.slow
def test_hand_computed_statistics(tmp_path):
    recs = [
        {"sample_idx": 3, "correct": True, "answer": "5", "n_tokens": 10, "token_entropy": 1.0},
        {"sample_idx": 0, "correct": False, "answer": "4", "n_tokens": 30, "token_entropy": 2.0,
         "finish_reason": "length"},
        {"sample_idx": 1, "correct": False, "answer": "NA", "n_tokens": None,
         "token_entropy": 4.0},
        {"sample_idx": 2, "correct": True, "answer": 5.0},
    ]
    p = tmp_path / "h.jsonl"
    p.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": 1, **r})
                         + "\n" for r in recs))
    r = summarize(p, chunk_size=1).iloc[0]
    assert (r.n, r.c, r.first_correct, r.n_answer_missing, r.n_truncated) == (4, 2, 2, 1, 1)
    assert list(r.answer_values) == ["5", "4"] and list(r.answer_counts) == [2, 1]
    assert (r.n_tokens_mean, r.n_tokens_min, r.n_tokens_max) == (20.0, 10.0, 30.0)
    assert r.token_entropy_mean == pytest.approx(7 / 3)
    assert r.token_entropy_std == pytest.approx(math.sqrt(((4 / 3) ** 2 + (1 / 3) ** 2
                                                            + (5 / 3) ** 2) / 2))
    t = summarize(p, na="truncated").iloc[0]
    assert t.n_answer_missing == 2 and list(t.answer_counts) == [2]


@pytest.mark.slow
def test_provenance_attrs_and_parquet_metadata(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": "q",
                                     "sample_idx": i, "correct": i % 2}) + "\n"
                         for i in range(5)) + "{broken\n")
    out_path = tmp_path / "out" / "summary.parquet"
    with pytest.warns(UserWarning, match="1 of 6 rows rejected"):
        df = summarize(p, on_error="skip", out=out_path)
    prov = df.attrs["provenance"]
    assert prov["files"][0]["path"] == str(p)
    assert (prov["rows_read"], prov["rows_used"], prov["rows_rejected"]) == (6, 5, 1)
    assert prov["rejected_by_reason"] == {"malformed_json": 1}
    assert "line 6" in prov["problem_examples"][0]
    meta = json.loads(pq.read_schema(out_path).metadata[SUMMARY_METADATA_KEY])
    assert meta == json.loads(json.dumps(prov))
    back = read_summary(out_path)
    assert list(back.columns) == list(SUMMARY_COLUMNS)
    pd.testing.assert_frame_equal(back, df)
    assert back.attrs["provenance"]["rows_rejected"] == 1


@pytest.mark.slow
def test_load_counts_accepts_samples_counts_and_summaries(tmp_path):
    s = tmp_path / "samples.jsonl"
    s.write_text("".join(json.dumps({"model": "base", "benchmark": "b", "question_id": q,
                                     "sample_idx": i, "correct": (i + q) % 3 == 0}) + "\n"
                         for q in range(3) for i in range(4)))
    c = tmp_path / "counts.csv"
    c.write_text("model,benchmark,question_id,n,c,first_correct\n"
                 "rl,b,0,4,2,0\nrl,b,1,4,0,-1\nrl,b,2,4,4,0\n")
    c2 = tmp_path / "counts_nofirst.csv"
    c2.write_text("model,benchmark,question_id,n,c\nrl2,b,0,4,2\nrl2,b,1,4,0\n")
    summ = tmp_path / "base_summary.parquet"
    summarize(s, out=summ)
    for inputs in ([s, c, c2], [summ, c, c2]):
        out = load_counts(inputs)
        assert len(out) == 8
        base = out[out.model == "base"].set_index("question_id")
        assert base.c.to_dict() == {"0": 2, "1": 1, "2": 1}
        assert base.first_correct.tolist() == [0, 2, 1]
        rl = out[out.model == "rl"].set_index("question_id")
        assert rl.c.tolist() == [2, 0, 4] and rl.first_correct.tolist() == [0, -1, 0]
        assert rl.n_answer_missing.isna().all() and rl.answer_values.isna().all()
        rl2 = out[out.model == "rl2"].set_index("question_id")
        assert pd.isna(rl2.loc["0", "first_correct"]) and rl2.loc["1", "first_correct"] == -1
        assert out.n.dtype == np.int64 and str(out.step.dtype) == "Int64"
    with pytest.raises(ValueError, match="more than one input"):
        load_counts([s, summ])


def test_checkpoint_step_label_and_duplicates_between_files(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "q",
                             "sample_idx": 0, "correct": True}) + "\n")
    with pytest.raises(ValueError, match="duplicate"):
        summarize([p, p])
    # caller's step replaces the file's absent step; two steps of one file are distinct rows
    a = summarize(p, step=100)
    b = summarize(p, step=300)
    both = pd.concat([a, b], ignore_index=True)
    assert both.step.tolist() == [100, 300]
    with pytest.raises(ValueError, match="'step' parameter"):
        summarize(p, step=-1)


def test_memory_independent_of_file_for_counts_of_groups(tmp_path):
    """Chunking never changes results: 1-row chunks equal one big chunk on a bigger file."""
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"model": "m", "benchmark": "b",
                       "question_id": rng.integers(0, 40, n).astype(str),
                       "correct": rng.random(n) < 0.3,
                       "answer": rng.integers(0, 5, n).astype(str),
                       "token_entropy": rng.gamma(2, 0.5, n)})
    df["sample_idx"] = df.groupby("question_id").cumcount()
    p = tmp_path / "big.parquet"
    df.to_parquet(p, row_group_size=333)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = summarize(p, chunk_size=7)
        b = summarize(p, chunk_size=10_000)
    compare(a, naive_summary(df.assign(n_tokens=np.nan, finish_reason=None)))
    compare(b, naive_summary(df.assign(n_tokens=np.nan, finish_reason=None)))


def test_empty_inputs_and_caller_labels(tmp_path):
    empty = tmp_path / "empty.parquet"
    pd.DataFrame({"model": pd.Series([], dtype=object), "benchmark": pd.Series([], dtype=object),
                  "question_id": pd.Series([], dtype=object),
                  "sample_idx": pd.Series([], dtype="int64"),
                  "correct": pd.Series([], dtype=bool)}).to_parquet(empty)
    # an input without data rows is an error, as for every format
    with pytest.raises(ValueError, match="empty.parquet has no data rows"):
        summarize(empty)
    p = tmp_path / "probe.jsonl"
    p.write_text(json.dumps({"model_name": "file-model", "qid": 1, "rollouts": [
        {"rollout": 0, "correct": True, "pred_value": 2.0, "text": "t"}]}) + "\n")
    out = summarize(p, model="mine", benchmark="b")
    assert out.model.tolist() == ["mine"]
    assert out.attrs["provenance"]["files"][0]["notes"] == [
        "field 'model_name' replaced by the caller's value 'mine'"]


def _truncated_example(tmp_path):
    """One question: answers 5 (twice), 4 from an output cut at the length limit, and none."""
    recs = [{"sample_idx": 0, "correct": False, "answer": "4", "finish_reason": "length"},
            {"sample_idx": 1, "correct": False, "answer": "NA"},
            {"sample_idx": 2, "correct": True, "answer": "5"},
            {"sample_idx": 3, "correct": True, "answer": "5", "finish_reason": "stop"}]
    p = tmp_path / "t.jsonl"
    p.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": "1", **r})
                         + "\n" for r in recs))
    return p


@pytest.mark.slow
def test_one_na_rule_from_summary_to_table(tmp_path):
    from leash.analysis.tables import answer_entropy_per_question, entropy_table
    from leash.summary import summary_na

    p = _truncated_example(tmp_path)
    cls, trunc = summarize(p), summarize(p, na="truncated")
    assert (summary_na(cls), summary_na(trunc)) == ("class", "truncated")
    h = {"truncated": math.log(2),  # NA (the NA and the truncated sample) and 5: 1/2 each
         "class": -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)),  # 5, 4 and NA
         "drop": -(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3))}  # 5 and 4
    for na, summary in (("truncated", trunc), ("class", cls), ("drop", cls)):
        assert entropy_table(summary, na=na).answer_entropy.iat[0] == pytest.approx(h[na])
        assert answer_entropy_per_question(summary, na=na).answer_entropy.iat[0] == \
            pytest.approx(h[na])
    # a summary made under another rule is refused: its NA samples are another set
    # the rule asked for, the one the summary was made with, and the remedy: summarize again
    with raises_with(param="na", value="truncated", text="na='class'") as info:
        entropy_table(cls, na="truncated")
    assert Param("na", value="truncated") in info.value.hint
    for na in ("class", "drop"):
        with pytest.raises(ValueError, match=rf"made with na='truncated'.* na={na!r}"):
            entropy_table(trunc, na=na)
    # a frame without a recorded rule: checked as far as its counts tell
    bare = cls.copy()
    bare.attrs = {}
    assert entropy_table(bare, na="class").answer_entropy.iat[0] == pytest.approx(h["class"])
    bare["n_answer_missing"] = pd.array([0], dtype="Int64")  # the truncated sample is not NA
    with pytest.raises(ValueError, match=r"more truncated samples than NA ones"):
        entropy_table(bare, na="truncated")
    # without truncated samples every rule selects the same samples
    none = cls.assign(n_truncated=pd.array([0], dtype="Int64"))
    assert entropy_table(none, na="truncated").answer_entropy.iat[0] == pytest.approx(h["class"])
    with raises_with(param="na", func="entropy_table", value="keep"):
        entropy_table(cls, na="keep")


@pytest.mark.slow
def test_a_summary_file_keeps_its_na_rule(tmp_path):
    p = _truncated_example(tmp_path)
    out = tmp_path / "class.parquet"
    summarize(p, out=out)
    assert load_counts(out).n_answer_missing.iat[0] == 1
    with raises_with(param="na", value="truncated", file=str(out), text="na='class'") as info:
        load_counts(out, na="truncated")
    assert Param("na", value="truncated") in info.value.hint
    summarize(p, na="truncated", out=out)
    assert load_counts(out, na="truncated").n_answer_missing.iat[0] == 2


def test_a_given_canonical_format_still_reads_the_files_columns(tmp_path):
    """fmt="samples" / "counts" given (as a study's rescored source is) skips detection, not
    the columns: a Parquet file is read by its own column names."""
    import pandas as pd

    p = tmp_path / "s.parquet"
    pd.DataFrame({"model": ["m"] * 3, "benchmark": ["b"] * 3, "question_id": ["q", "q", "r"],
                  "sample_idx": [0, 1, 0], "correct": [True, False, False]}).to_parquet(p)
    got = summarize(p, fmt="samples").set_index("question_id")
    assert got.loc["q", ["n", "c"]].tolist() == [2, 1] and got.loc["r", "c"] == 0
    c = tmp_path / "c.parquet"
    pd.DataFrame({"model": ["m"], "benchmark": ["b"], "question_id": ["q"], "n": [8],
                  "c": [3]}).to_parquet(c)
    assert summarize(c, fmt="counts")[["n", "c"]].values.tolist() == [[8, 3]]


@pytest.mark.slow
def test_summary_table_is_the_summary_frame_in_arrow(tmp_path):
    """summary_table gives summarize's rows and provenance as a pyarrow Table; summary_frame
    turns it back; concat_summaries joins tables and refuses a question given twice."""
    import pyarrow as pa

    from leash.analysis.compare import frame_differences
    from leash.summary import summary_schema
    from leash_eval.summarize import concat_summaries, summary_frame, summary_table

    p = tmp_path / "a.jsonl"
    p.write_text("".join(json.dumps({"model": m, "benchmark": "b", "question_id": str(q),
                                     "sample_idx": i, "correct": (q + i) % 3 == 0,
                                     "answer": str(i % 2)}) + "\n"
                         for m in ("base", "rl") for q in range(3) for i in range(4)))
    table = summary_table(p)
    assert isinstance(table, pa.Table) and table.schema.equals(summary_schema())
    frame = summary_frame(table)
    assert frame_differences(frame, summarize(p)) == []
    assert frame.attrs["provenance"]["rows_read"] == 24
    q = tmp_path / "b.jsonl"
    q.write_text(p.read_text().replace('"b"', '"b2"'))
    both = concat_summaries([table, summary_table(q)])
    assert both.num_rows == 12
    parts = summary_frame(both).attrs["provenance"]["parts"]
    assert [part["files"][0]["path"] for part in parts] == [str(p), str(q)]
    # how many, and the first question given twice
    with raises_with(param="tables", text="6 questions appear in more than one input",
                     value={"model": "base", "benchmark": "b", "question_id": "0", "step": None}):
        concat_summaries([table, table])


@pytest.mark.slow
def test_first_correct_counts_positions_not_indices(tmp_path):
    # 1-based indices (a common layout), a row rejected with on_error="skip" and a question
    # whose samples two files give with a gap between them: "the first k samples" are the
    # first k kept samples in sample_idx order, whatever their numbers
    from leash.analysis.pairing import pair_counts
    from leash.analysis.tables import support_table

    rows = [{"model": m, "benchmark": "b", "question_id": q, "sample_idx": s + 1,
             "correct": (q == "0" and s == 3) or (q == "1" and s == 0)}
            for m in ("base", "rl") for q in ("0", "1", "2") for s in range(4)]
    pd.DataFrame(rows).to_csv(tmp_path / "one_based.csv", index=False)
    got = summarize(tmp_path / "one_based.csv")
    assert got.first_correct.tolist() == [3, 0, -1] * 2  # sample_idx 4 is the 4th sample
    # by hand: both models solve questions 0 and 1 within their 4 samples, neither solves 2
    table = support_table(pair_counts(got, "base", "rl"), k=4)
    assert table[["P", "E", "S", "O"]].iloc[0].tolist() == [2, 0, 0, 1]
    recs = [{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": i,
             "correct": "maybe" if i == 2 else i == 5} for i in range(8)]
    (tmp_path / "gap.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = summarize(tmp_path / "gap.jsonl", on_error="skip")
    assert got[["n", "c", "first_correct"]].iloc[0].tolist() == [7, 1, 4]  # 0, 1, 3, 4 first
    for name, idx in (("a.jsonl", range(4)), ("b.jsonl", range(8, 12))):
        (tmp_path / name).write_text("".join(json.dumps(
            {"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": i,
             "correct": i in (9, 10)}) + "\n" for i in idx))
    got = summarize([tmp_path / "b.jsonl", tmp_path / "a.jsonl"])
    assert got[["n", "c", "first_correct"]].iloc[0].tolist() == [8, 2, 5]  # 0-3, 8, then 9


def test_truncation_is_finish_reason_length_in_any_case(tmp_path):
    recs = [{"model": "m", "benchmark": "b", "question_id": "1", "sample_idx": i,
             "correct": True, "answer": "5", "finish_reason": fr}
            for i, fr in enumerate(["LENGTH", "length", "Length", "stop", "STOP", None])]
    p = tmp_path / "fr.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert summarize(p).n_truncated.tolist() == [3]
    out = summarize(p, na="truncated")
    assert out[["n_truncated", "n_answer_missing"]].values.tolist() == [[3, 3]]


@pytest.mark.slow
def test_partitions_on_a_dask_cluster_are_summarized_as_in_one_process(tmp_path):
    """The one --cluster interface on its other engine: a folder of Parquet partitions, each
    read by a Dask worker (threads of this process), merged as one process merges them; a
    question's samples split over two partitions, its later samples in the earlier one."""
    import logging

    import pyarrow as pa

    distributed = pytest.importorskip("distributed", reason="the cluster extra (dask.distributed)")
    from leash_eval.formats import partitions

    folder = tmp_path / "rollouts"
    folder.mkdir()
    for name, idx, correct in (("part-1.parquet", [4, 5, 6, 7], [False, True, False, True]),
                               ("part-2.parquet", [0, 1, 2, 3], [False] * 4)):
        pq.write_table(pa.table({"model": ["m"] * 4, "benchmark": ["b"] * 4,
                                 "question_id": ["q"] * 4, "sample_idx": idx,
                                 "correct": correct, "answer": ["1", "2", "1", "2"]}),
                       folder / name)
    files = partitions(folder)
    one = summarize(files)
    with distributed.LocalCluster(processes=False, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, \
            warnings.catch_warnings():
        warnings.simplefilter("error")  # read on the cluster, not in this process after all
        on = summarize(files, cluster=cluster.scheduler_address)
    pd.testing.assert_frame_equal(on, one)
    assert on.attrs == one.attrs
    assert on[["n", "c", "first_correct"]].values.tolist() == [[8, 2, 5]]
