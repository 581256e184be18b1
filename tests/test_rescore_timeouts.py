"""A timeout is not a verdict (leash_eval.rescore): math-verify's time limits are wall-clock, so a
loaded machine hits them where an idle one does not. A response whose grading times out is graded
again with a longer limit; one that times out twice has no verdict (``correct`` empty,
``timeout`` true), is counted and reported, and the summary refuses it unless told what to do
(``on_timeout``).

The limits are CPU time, not wall-clock (math-verify's own are ``signal.alarm``'s): a machine
busy with other processes spends wall-clock seconds where an idle one does not, so a wall-clock
limit changed the verdicts with the load. Both are simulated for real: a grader that waits
(``time.sleep``: what load does to this process) never times out; one that works (burns CPU)
longer than the first limit and shorter than the retry's is interrupted by the timer and graded
again. The gold side follows the responses' rule: a gold parse that times out is retried, then is
no verdict for that row, and is never cached.
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


def burn(seconds: float) -> None:
    """Work (CPU time) for ``seconds``, as a slow parse or comparison does."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


@pytest.fixture
def slow_half(monkeypatch):
    """math-verify's comparisons against the gold 1/2 (question 0) take 1.3 s of CPU time; the
    first limit is 1 s, the retry's 3 s."""
    import math_verify.grader as mvg
    import sympy

    real = mvg.sympy_expr_eq

    def slow(gold, *args, **kw):
        if gold == sympy.Rational(1, 2):
            burn(1.3)
        return real(gold, *args, **kw)

    monkeypatch.setattr(mvg, "sympy_expr_eq", slow)
    monkeypatch.setattr(graders, "TIME_LIMIT", 1)
    monkeypatch.setattr(graders, "RETRY_LIMIT", 3)


@pytest.mark.slow
@needs_mv
def test_a_loaded_machine_gives_the_same_verdicts_without_a_timeout(tmp_path, monkeypatch):
    """Load: every comparison and every gold parse waits 1.3 s (wall clock) with both limits at
    1 s. A wall-clock limit made every one of them a timeout; in CPU time none is.
    """
    import math_verify.grader as mvg
    import math_verify.parser as mvp

    from leash_eval.rescore import gold as rs_gold

    for module, name in ((mvg, "sympy_expr_eq"), (mvp, "extract_target_from_pred")):
        real = getattr(module, name)

        def waits(*args, _real=real, **kw):
            time.sleep(1.3)
            return _real(*args, **kw)

        monkeypatch.setattr(module, name, waits)
    monkeypatch.setattr(rs_gold, "_GOLD_PARSES", type(rs_gold._GOLD_PARSES)())
    monkeypatch.setattr(graders, "TIME_LIMIT", 1)
    monkeypatch.setattr(graders, "RETRY_LIMIT", 1)
    f = _evaluator_file(tmp_path / "eval.jsonl", RECORDS[:1])
    rep = rs.rescore_file(f, tmp_path / "o.jsonl", **KW)
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == HAND_CORRECT[:4]
    assert rep.n_timeouts == rep.n_unresolved == 0 and not any(r["timeout"] for r in rows)


@pytest.mark.slow
@needs_mv
def test_a_slowed_grader_gives_the_same_verdicts(tmp_path, slow_half):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    rep = rs.rescore_file(f, tmp_path / "o.jsonl", **KW)
    rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in rows] == HAND_CORRECT  # as on an idle machine
    assert not any(r["timeout"] for r in rows)
    assert rep.n_timeouts >= 1 and rep.n_unresolved == 0 and rep.n_no_answer == HAND_NO_ANSWER


@pytest.mark.slow
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


# ---- the gold side (issue 35, class 1): a gold parse that times out is no verdict, never cached

GOLD_HALF = "$\\frac{1}{2}$"  # question 0's gold as math-verify is given it


@pytest.fixture
def slow_gold(monkeypatch):
    """math-verify's parse of question 0's gold (1/2) takes 1.3 s of CPU time for the first
    ``calls["slow"]`` parses (all of them by default); no response is that string. The first
    limit is 1 s, the retry's 3 s; the cache of gold parses starts empty.
    """
    from collections import OrderedDict

    import math_verify.parser as mvp

    from leash_eval.rescore import gold as rs_gold

    real = mvp.extract_target_from_pred
    calls = {"gold": 0, "slow": 10**9}

    def slow(pred, *args, **kw):
        if pred == GOLD_HALF:
            calls["gold"] += 1
            if calls["gold"] <= calls["slow"]:
                burn(1.3)
        return real(pred, *args, **kw)

    monkeypatch.setattr(mvp, "extract_target_from_pred", slow)
    monkeypatch.setattr(rs_gold, "_GOLD_PARSES", OrderedDict())
    monkeypatch.setattr(graders, "TIME_LIMIT", 1)
    monkeypatch.setattr(graders, "RETRY_LIMIT", 3)
    return calls


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
@needs_mv
def test_a_slow_gold_parse_gives_the_same_verdicts(tmp_path, slow_gold):
    """Each parse of the gold times out at the first limit and finishes within the retry's:
    every verdict as on an idle machine, the retries counted, nothing cached from a timeout.
    """
    from leash_eval.rescore import gold as rs_gold

    f = _evaluator_file(tmp_path / "eval.jsonl")
    rep = rs.rescore_file(f, tmp_path / "o.jsonl", **KW)
    rows = _rows(tmp_path / "o.jsonl")
    assert [r["correct"] for r in rows] == HAND_CORRECT
    assert not any(r["timeout"] for r in rows)
    assert rep.n_timeouts >= 1 and rep.n_unresolved == 0 and rep.n_no_answer == HAND_NO_ANSWER
    assert rs_gold._GOLD_PARSES["\\frac{1}{2}"]  # the retry's parse, the only one kept


@pytest.mark.slow
@needs_mv
def test_a_gold_that_always_times_out_is_no_verdict_for_its_question(tmp_path, slow_gold,
                                                                     monkeypatch, capsys):
    """Its responses have no verdict (``correct`` empty, ``timeout`` true: not wrong); the other
    question is graded; the summary and `leash summarize` refuse the file (one line).
    """
    from leash_eval.cli import main
    from leash_eval.summarize import summarize

    monkeypatch.setattr(graders, "RETRY_LIMIT", 1)
    f = _evaluator_file(tmp_path / "eval.jsonl")
    out = tmp_path / "o.jsonl"
    rep = rs.rescore_file(f, out, **KW)
    rows = _rows(out)
    q0 = [r for r in rows if r["question_id"] == "0"]
    parsed = [r for r in q0 if r["answer"] is not None or r["correct"] is None]
    assert all(r["timeout"] and r["correct"] is None for r in parsed) and parsed
    assert rep.n_unresolved == len(parsed) == sum(r["timeout"] for r in rows)
    assert [r["correct"] for r in rows if r["question_id"] == "1"] == HAND_CORRECT[4:8]
    with raises_with(param="on_timeout", key="timeout", value=len(parsed)):
        summarize(out)
    assert main(["-q", "summarize", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--on-timeout" in err, err


@pytest.mark.slow
@needs_mv
def test_a_gold_that_timed_out_once_is_parsed_again(tmp_path, slow_gold, monkeypatch):
    """No retry left (both limits 1 s) and only the first parse of the gold slow: the first
    response to question 0 has no verdict, every later one is graded as on an idle machine
    (before, the timed-out parse was cached as unparsable: all of them wrong, timeout false).
    """
    monkeypatch.setattr(graders, "RETRY_LIMIT", 1)
    slow_gold["slow"] = 2  # the first try and its retry
    f = _evaluator_file(tmp_path / "eval.jsonl")
    rs.rescore_file(f, tmp_path / "o.jsonl", **KW)
    rows = _rows(tmp_path / "o.jsonl")
    assert rows[0]["timeout"] and rows[0]["correct"] is None
    assert [r["correct"] for r in rows[1:]] == HAND_CORRECT[1:]
    assert not any(r["timeout"] for r in rows[1:])


@pytest.mark.slow
@needs_mv
def test_verify_response_and_the_frame_path_follow_the_same_rule(slow_gold, monkeypatch):
    """In memory (:func:`rescore`): NA and timeout; one response: a TimeoutError, not False."""
    import pandas as pd

    monkeypatch.setattr(graders, "RETRY_LIMIT", 1)
    with pytest.raises(TimeoutError, match="no verdict"):
        rs.verify_response("so \\boxed{0.5}", "\\frac{1}{2}")
    frame = pd.DataFrame({"question_id": ["0", "1"],
                          "response": ["so \\boxed{0.5}", "\\boxed{3}"]})
    res = rs.rescore(frame, {"0": "\\frac{1}{2}", "1": "3"})
    assert res.samples["timeout"].tolist() == [True, False]
    assert pd.isna(res.samples["correct"][0]) and res.samples["correct"][1] == True  # noqa: E712
    assert res.n_unresolved == 1
    slow_gold["slow"] = 0  # the machine is idle again: the verdict
    assert rs.verify_response("so \\boxed{0.5}", "\\frac{1}{2}") is True


@pytest.mark.slow
@needs_mv
def test_a_rescored_study_file_with_no_verdict_is_not_cached(tmp_path, slow_gold, monkeypatch):
    """rescored_path: a file with rows without a verdict is returned under another name (which
    the summary refuses) and graded again by the next call, on an idle machine: its verdicts.
    """
    from leash_eval.summarize import summarize

    monkeypatch.setattr(graders, "RETRY_LIMIT", 1)
    f = _evaluator_file(tmp_path / "eval.jsonl")
    kw = dict(reader={"fmt": "evaluator", "model": "m", "benchmark": "b"},
              cache_dir=tmp_path / "cache", jobs=1)
    first = rs.rescored_path(f, **kw)
    assert first.name.endswith(".unresolved.parquet")
    with raises_with(param="on_timeout", key="timeout"):
        summarize(first)
    slow_gold["slow"] = 0
    second = rs.rescored_path(f, **kw)
    assert second != first and not second.name.endswith(".unresolved.parquet")
    import pyarrow.parquet as pq

    t = pq.read_table(second).to_pydict()
    assert t["correct"] == HAND_CORRECT and not any(t["timeout"])
    assert rs.rescored_path(f, **kw) == second  # now reused
