"""The fast path of a summary (the rules of a field checked once per group, through aggregate
witnesses: leash_eval.formats.vouch) gives exactly what reading the file row by row under the
rules gives: the same summary, the same provenance, the same first problem, for values of every
JSON type and typed Parquet columns, clean or not."""

from __future__ import annotations

import json
import math
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leash_eval.summarize as S
from leash.analysis.compare import frame_differences
from leash_eval import validate as V

# per field: values the rules accept and values they refuse, of every JSON type
POOLS = {
    "sample_idx": [0, 1, 2, 3, 2.0, 2.5, -1, "3", " 1 ", "2.0", "2.5", True, None, 2**63,
                   2**62],
    "correct": [True, False, 1, 0, 1.0, "true", "False", "yes", 2, None],
    "n_tokens": [10, 0, 12.5, -1, None, "12", True, math.nan, math.inf],
    "token_entropy": [0.5, 0.0, 1, -0.1, None, "0.3", math.nan, math.inf, False],
    "finish_reason": ["stop", "length", "", None, 5, True],
}


def _summary(path, *, fast: bool):
    """(summary frame, or the error's message) with or without the fast path."""
    real = S._partial

    def partial(na):
        inner = real(na)
        return inner if fast else (lambda src, exact: inner(src, exact) if exact else None)

    S._partial = partial
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "r of n rows rejected": both paths say it
            df = S.summarize(path, on_error="skip")
        prov = df.attrs["provenance"]
        return df, {k: prov[k] for k in ("rows_read", "rows_used", "rows_rejected",
                                         "rejected_by_reason")}
    except ValueError as exc:
        return str(exc), None
    finally:
        S._partial = real


def _same(a, b):
    (fa, pa_), (fb, pb) = a, b
    if isinstance(fa, str) or isinstance(fb, str):
        assert fa == fb
        return
    assert pa_ == pb
    assert frame_differences(fa, fb) == []


field_values = st.fixed_dictionaries({f: st.sampled_from(v) for f, v in POOLS.items()})


@pytest.mark.slow
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 2), field_values), min_size=1, max_size=12),
       dirty=st.sets(st.sampled_from(sorted(POOLS))))
def test_jsonl_fast_path_equals_the_rules_row_by_row(tmp_path_factory, rows, dirty):
    counter: dict = {}
    recs = []
    for q, vals in rows:
        i = counter[q] = counter.get(q, -1) + 1
        rec = {"model": "m", "benchmark": "b", "question_id": f"q{q}", "sample_idx": i,
               "correct": i % 2 == 0, "n_tokens": 3 * i, "token_entropy": 0.25 * i}
        rec.update({f: v for f, v in vals.items() if f in dirty})
        recs.append(rec)
    p = tmp_path_factory.mktemp("fast") / "s.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    _same(_summary(p, fast=True), _summary(p, fast=False))


parquet_columns = st.fixed_dictionaries({
    "sample_idx": st.sampled_from([pa.int64(), pa.int32(), pa.uint64(), pa.float64()]),
    "correct": st.sampled_from([pa.bool_(), pa.int8()]),
    "n_tokens": st.sampled_from([pa.int64(), pa.float64(), pa.string()]),
    "token_entropy": st.sampled_from([pa.float64(), pa.float32(), pa.int64()]),
    "finish_reason": st.sampled_from([pa.string(), pa.null()]),
})


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(types=parquet_columns, n=st.integers(1, 9), bad=st.sampled_from(
    [None, ("sample_idx", -1), ("sample_idx", None), ("correct", None), ("n_tokens", -3),
     ("token_entropy", math.nan), ("token_entropy", -math.inf), ("token_entropy", math.inf),
     ("sample_idx", 2**63 + 5), ("correct", 2)]))
def test_parquet_fast_path_equals_the_rules_row_by_row(tmp_path_factory, types, n, bad):
    cols = {"model": ["m"] * n, "benchmark": ["b"] * n,
            "question_id": [f"q{i % 2}" for i in range(n)],
            "sample_idx": [i // 2 for i in range(n)], "correct": [i % 3 == 0 for i in range(n)],
            "n_tokens": [5 * i for i in range(n)], "token_entropy": [0.5 * i for i in range(n)],
            "finish_reason": [("stop", "length")[i % 2] for i in range(n)]}
    if bad is not None:
        cols[bad[0]][n // 2] = bad[1]
    arrays = {}
    for c, vals in cols.items():
        t = types.get(c, pa.string())
        if pa.types.is_null(t):
            vals = [None] * n
        elif pa.types.is_string(t):
            vals = [None if v is None else str(v) for v in vals]
        elif pa.types.is_integer(t):
            if any(v is not None and (isinstance(v, float) or not -2**31 <= v < 2**63
                                      or (v < 0 and pa.types.is_unsigned_integer(t)))
                   for v in vals) and not (pa.types.is_uint64(t) and all(
                       v is None or (isinstance(v, int) and 0 <= v < 2**64) for v in vals)):
                t = pa.float64()  # a value this type cannot hold: the column is float
            vals = [None if v is None else float(v) if t == pa.float64() else int(v)
                    for v in vals]
        elif pa.types.is_floating(t):
            vals = [None if v is None else float(v) for v in vals]
        elif pa.types.is_boolean(t) and any(v not in (None, True, False) for v in vals):
            t = pa.int64()  # a value a bool column cannot hold: the column is an integer one
            vals = [None if v is None else int(v) for v in vals]
        arrays[c] = pa.array(vals, type=t)
    p = tmp_path_factory.mktemp("fastpq") / "s.parquet"
    pq.write_table(pa.table(arrays), p)
    _same(_summary(p, fast=True), _summary(p, fast=False))


OPTIONAL = ("answer", "n_tokens", "token_entropy", "finish_reason", "step")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("present", [(), *((c,) for c in OPTIONAL), OPTIONAL],
                         ids=lambda cols: "+".join(cols) or "required-only")
def test_a_clean_file_takes_the_fast_path(tmp_path, monkeypatch, suffix, present):
    """The witnesses vouch for a clean file whatever optional columns it has: the row-by-row
    check (leash_eval.validate.check) never runs. (A file without token_entropy once failed its
    witness and was read twice.)"""


    values = {"answer": ["7", None, "7", "8"], "n_tokens": [3, 4, 5, 6],
              "token_entropy": [0.1, 0.2, 0.3, 0.4], "finish_reason": ["stop"] * 4,
              "step": [100] * 4}
    cols = {"model": ["m"] * 4, "benchmark": ["b"] * 4, "question_id": ["q"] * 4,
            "sample_idx": [0, 1, 2, 3], "correct": [True, False, True, False],
            **{c: values[c] for c in present}}
    p = tmp_path / f"s{suffix}"
    if suffix == ".parquet":
        pq.write_table(pa.table(cols), p)
    else:
        p.write_text("".join(json.dumps(dict(zip(cols, row))) + "\n"
                             for row in zip(*cols.values())))
    monkeypatch.setattr(V, "check", lambda *a: pytest.fail("the row-by-row check ran"))
    df = S.summarize(p)
    assert (df.n.tolist(), df.c.tolist(), df.first_correct.tolist()) == ([4], [2], [0])
    assert df.n_answer_missing.tolist() == [4 if "answer" not in present else 1]


@pytest.mark.slow
@pytest.mark.parametrize("field, late", [
    ("sample_idx", 63.4), ("sample_idx", "63"), ("correct", 1), ("correct", "true"),
    ("n_tokens", True), ("token_entropy", math.nan), ("finish_reason", 5)])
def test_a_value_beyond_the_lines_duckdb_samples_is_read_by_the_rules(tmp_path, field, late):
    """DuckDB infers a JSON field's type from its first 20,480 lines: a later value of another
    type must not pass the witnesses (a JSON 63.4 read as an integer is 63, the index the last
    line would have)."""
    lines = [{"model": "m", "benchmark": "b", "question_id": f"q{i // 64}", "sample_idx": i % 64,
              "correct": i % 3 == 0, "n_tokens": i % 50, "token_entropy": 0.5,
              "finish_reason": "stop"} for i in range(20_544)]
    lines[-1][field] = late
    p = tmp_path / "late.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in lines))
    fast, slow = _summary(p, fast=True), _summary(p, fast=False)
    _same(fast, slow)
