"""A timeout is not a verdict (leash_eval.rescore): math-verify's time limits are wall-clock, so a
loaded machine hits them where an idle one does not. A response whose grading times out is graded
again with a longer limit; one that times out twice has no verdict (``correct`` empty,
``timeout`` true), is counted and reported, and the summary refuses it unless told what to do
(``on_timeout``).

The grader is slowed for real: math-verify's comparison of the responses to one gold answer
sleeps longer than the first limit (a SIGALRM interrupts it, as under load) and shorter than the
retry's.
"""

from __future__ import annotations

import json
import time

import pytest

from _support import needs_mv, raises_with
from leash_eval import rescore as rs
from leash_eval.rescore import graders
from test_rescore_stream import HAND_CORRECT, HAND_NO_ANSWER, RECORDS, _evaluator_file

KW = dict(fmt="evaluator", model="m", benchmark="b", jobs=1)


@pytest.fixture
def slow_half(monkeypatch):
    """math-verify's comparisons against the gold 1/2 (question 0) take 1.3 s; the first limit
    is 1 s, the retry's 3 s."""
    import math_verify.grader as mvg
    import sympy

    real = mvg.sympy_expr_eq

    def slow(gold, *args, **kw):
        if gold == sympy.Rational(1, 2):
            time.sleep(1.3)
        return real(gold, *args, **kw)

    monkeypatch.setattr(mvg, "sympy_expr_eq", slow)
    monkeypatch.setattr(graders, "TIME_LIMIT", 1)
    monkeypatch.setattr(graders, "RETRY_LIMIT", 3)


@needs_mv
def test_a_slowed_grader_gives_the_same_verdicts(tmp_path, slow_half):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    rep = rs.rescore_file(f, tmp_path / "o.jsonl", **KW)
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == HAND_CORRECT  # as on an idle machine
    assert not any(r["timeout"] for r in rows)
    assert rep.n_timeouts >= 1 and rep.n_unresolved == 0 and rep.n_no_answer == HAND_NO_ANSWER


@needs_mv
def test_twice_timed_out_is_no_verdict_and_the_summary_refuses_it(tmp_path, slow_half,
                                                                   monkeypatch, capsys):
    from leash_eval.cli import main
    from leash_eval.summarize import summarize

    monkeypatch.setattr(graders, "RETRY_LIMIT", 1)
    f = _evaluator_file(tmp_path / "eval.jsonl", RECORDS[:1])  # question 0: gold 1/2
    out = tmp_path / "o.parquet"
    rep = rs.rescore_file(f, out, **KW)
    import pyarrow.parquet as pq

    t = pq.read_table(out).to_pydict()
    stuck = [i for i, x in enumerate(t["timeout"]) if x]
    assert rep.n_unresolved == len(stuck) >= 1 and rep.n_timeouts >= len(stuck)
    assert all(t["correct"][i] is None for i in stuck)  # not False: no verdict
    # the summary: an error with the count (default), wrong (false) or left out (skip)
    with raises_with(param="on_timeout", file=str(out), key="timeout", value=len(stuck)) as e:
        summarize(out)
    assert "on_timeout='false'" in str(e.value) and "on_timeout='skip'" in str(e.value)
    as_false = summarize(out, on_timeout="false")
    skipped = summarize(out, on_timeout="skip")
    assert as_false.n.tolist() == [4] and skipped.n.tolist() == [4 - len(stuck)]
    assert as_false.attrs["provenance"]["timeouts"] == {"on_timeout": "false",
                                                        "files": {str(out): len(stuck)}}
    assert str(out) in json.dumps(as_false.attrs["provenance"]["files"])
    assert "leash-timeouts-" not in json.dumps(as_false.attrs["provenance"])
    code = main(["-q", "summarize", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "--on-timeout false" in err and len(err.strip().splitlines()) == 1, err
    # JSONL output: the same
    rs.rescore_file(f, tmp_path / "o.jsonl", **KW)
    with raises_with(param="on_timeout", key="timeout"):
        summarize(tmp_path / "o.jsonl")
    assert summarize(tmp_path / "o.jsonl", on_timeout="false").n.tolist() == [4]
