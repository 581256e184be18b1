"""Tests of streaming, parallel and cached rescoring (leash_eval.rescore.rescore_file, leash
rescore,
study sources with ``rescore:``).

Expected verdicts are worked out by hand from the fixture texts below; the streaming output is
compared with the in-memory :func:`leash_eval.rescore.rescore` on the same rows.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _support import MIRROR, REPO, needs_mirror, needs_mv, processes, raises_with
from _support import run_cli as _cli
from leash_eval import rescore as rs
from leash_eval.rescore import graders as rs_graders
from leash_eval.rescore import stream as rs_stream

# One evaluator-format record per question (Qwen2.5-Math evaluator: idx, gt, code[], score[]).
# Hand verdicts with math-verify's own extraction, in order:
#   q0 (gold 1/2): boxed 0.5 -> right; boxed 2 -> wrong; "answer is 1/2" -> right;
#                  no math at all -> wrong and no answer
#   q1 (gold 3):   "#### 3" -> right; boxed 4 -> wrong; empty text -> wrong and no answer;
#                  boxed \frac{6}{2} -> right
#   q2 (gold 10):  "10{,}000"-style 10 -> right; "The answer is 11." -> wrong; truncated box
#                  with a final number 10 before it -> right (math-verify finds the 10);
#                  boxed 10 -> right
RECORDS = [
    {"idx": 0, "gt": "\\frac{1}{2}",
     "code": ["so $x$ is \\boxed{0.5}", "\\boxed{2}", "The answer is 1/2.", "I give up"],
     "score": [False, False, True, False]},
    {"idx": 1, "gt": "3",
     "code": ["6 / 2\n#### 3", "\\boxed{4}", "", "thus \\boxed{\\frac{6}{2}}"],
     "score": [True, False, False, True]},
    {"idx": 2, "gt": "10",
     "code": ["we get $10$", "The answer is 11.", "so 10 \\boxed{1", "\\boxed{10}"],
     "score": [True, False, False, True]},
]
HAND_CORRECT = [True, False, True, False, True, False, False, True, True, False, True, True]
HAND_NO_ANSWER = 2  # "I give up" and ""


def _evaluator_file(path: Path, records=RECORDS) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _read_jsonl(path: Path) -> pd.DataFrame:
    return pd.read_json(path, lines=True, dtype={"question_id": str, "answer": str})


# ----------------------------------------------------------------------------- hand cases


@needs_mv
def test_in_memory_rescore_counts_no_answer_and_sets_answers():
    samples = pd.DataFrame({
        "question_id": ["a", "a", "a", "a"],
        "response": ["\\boxed{2}", "nothing to see", "The answer is 2.", None],
    })
    res = rs.rescore(samples, {"a": "2"})
    assert res.samples["correct"].tolist() == [True, False, True, False]
    assert res.n_no_answer == 2  # "nothing to see" and the missing response
    assert res.n_timeouts == 0
    # `answer` is leash's extraction (the answer as written), normalized
    assert res.samples["answer"].fillna("-").tolist() == ["2", "-", "2", "-"]
    leash = rs.rescore(samples, {"a": "2"}, extract="leash")
    assert leash.samples["correct"].tolist() == [True, False, True, False]
    assert leash.n_no_answer == 2


@needs_mv
def test_streaming_hand_verdicts_and_report(tmp_path):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    out = tmp_path / "out.jsonl"
    rep = rs.rescore_file(f, out, fmt="evaluator", model="m", benchmark="b", jobs=1,
                          batch_size=5)
    written = _read_jsonl(out)
    assert list(written.columns) == ["model", "benchmark", "question_id", "step", "sample_idx",
                                     "correct", "answer", "timeout"]
    assert written["correct"].tolist() == HAND_CORRECT
    assert written["question_id"].tolist() == ["0"] * 4 + ["1"] * 4 + ["2"] * 4
    assert written["sample_idx"].tolist() == [0, 1, 2, 3] * 3
    assert (rep.n_samples, rep.n_no_answer, rep.out) == (12, HAND_NO_ANSWER, out)
    before = [s for r in RECORDS for s in r["score"]]
    assert rep.n_changed == sum(b != a for b, a in zip(before, HAND_CORRECT))
    [row] = rep.table.to_dict(orient="records")
    assert (row["samples"], row["questions"], row["no_answer"]) == (12, 3, HAND_NO_ANSWER)
    assert row["accuracy_after"] == pytest.approx(sum(HAND_CORRECT) / 12)
    assert row["accuracy_before"] == pytest.approx(sum(before) / 12)


@needs_mv
def test_streaming_equals_in_memory_and_formats_agree(tmp_path):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    frame = rs.read_responses(f, fmt="evaluator", model="m", benchmark="b")
    gold = dict(zip(frame["question_id"], frame["gold"]))
    mem = rs.rescore(frame, gold).samples
    rs.rescore_file(f, tmp_path / "o.parquet", fmt="evaluator", model="m", benchmark="b",
                    jobs=1, batch_size=3)
    rs.rescore_file(f, tmp_path / "o.jsonl", fmt="evaluator", model="m", benchmark="b",
                    jobs=1, batch_size=7)
    par = pd.read_parquet(tmp_path / "o.parquet")
    jsl = _read_jsonl(tmp_path / "o.jsonl")
    def values(col):
        return [None if pd.isna(v) else v for v in col]

    for got in (par, jsl):
        for col in ("model", "benchmark", "question_id", "sample_idx", "correct", "answer"):
            assert values(got[col].astype(object)) == values(mem[col].astype(object)), col
    assert pq.read_schema(tmp_path / "o.parquet").names == rs.OUTPUT_SCHEMA.names


@needs_mv
def test_rescored_file_is_read_by_the_summary_readers(tmp_path):
    from leash_eval.summarize import load_counts

    f = _evaluator_file(tmp_path / "eval.jsonl")
    out = tmp_path / "o.parquet"
    rs.rescore_file(f, out, fmt="evaluator", model="m", benchmark="b", jobs=1)
    counts = load_counts([out]).sort_values("question_id")
    # hand counts of HAND_CORRECT per question: 2, 2, 3 of 4
    assert counts["n"].tolist() == [4, 4, 4]
    assert counts["c"].tolist() == [2, 2, 3]


@pytest.mark.slow
@needs_mv
def test_jobs_1_and_2_write_identical_files(tmp_path):
    # 30 questions x 4 responses, batches of 7: 18 batches, more than the 2 x jobs in flight
    records = [dict(r, idx=r["idx"] + 3 * k) for k in range(10) for r in RECORDS]
    f = _evaluator_file(tmp_path / "eval.jsonl", records)
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"o{jobs}.jsonl"
        rep = rs.rescore_file(f, out, fmt="evaluator", model="m", benchmark="b", jobs=jobs,
                              batch_size=7)
        outs.append(out.read_bytes())
        assert rep.n_samples == 120 and rep.n_no_answer == 10 * HAND_NO_ANSWER
    assert outs[0] == outs[1]
    assert _read_jsonl(tmp_path / "o2.jsonl")["correct"].tolist() == HAND_CORRECT * 10


@pytest.mark.slow
@needs_mv
@needs_mv
@pytest.mark.parametrize("start_after", [0.0, 1e9])
def test_the_default_jobs_writes_what_one_process_writes(tmp_path, monkeypatch, start_after):
    """The default (jobs=None): batches graded here, and (start_after 0) workers taking over
    once started, in the background; the output is byte for byte one process's."""
    from leash_eval.rescore import execution

    monkeypatch.setattr(execution, "START_AFTER", start_after)
    monkeypatch.setattr(execution, "_idle_workers", lambda jobs, share: jobs)  # whatever the load
    records = [dict(r, idx=r["idx"] + 3 * k) for k in range(10) for r in RECORDS]
    f = _evaluator_file(tmp_path / "eval.jsonl", records)
    kw = dict(fmt="evaluator", model="m", benchmark="b", batch_size=3)
    one = rs.rescore_file(f, tmp_path / "one.jsonl", jobs=1, **kw)
    auto = rs.rescore_file(f, tmp_path / "auto.jsonl", jobs=None, **kw)
    assert (tmp_path / "auto.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    assert auto.n_samples == one.n_samples == 120


@pytest.mark.parametrize("cores, load, share, jobs, workers", [
    (2, 0.1, 0.97, 2, 2),   # an idle machine: a worker per core
    (2, 1.0, 0.97, 2, 0),   # another process keeps the other core busy
    (2, 0.1, 0.5, 2, 0),    # this process got half a core: the cores are shared already
    (8, 3.2, 0.95, 8, 5),   # five cores idle, this one's among them
    (8, 0.0, 0.95, 4, 4),   # at most jobs
    (1, 0.0, 1.0, 1, 0)])   # one core: nothing to gain
def test_the_default_jobs_starts_workers_only_on_idle_cores(monkeypatch, cores, load, share,
                                                            jobs, workers):
    """Workers that could only share busy cores spend CPU on their start-up and caches for no
    gain in time: the default starts as many as the load average leaves cores idle."""
    from leash_eval.rescore import execution

    monkeypatch.setattr(execution, "default_jobs", lambda: cores)
    monkeypatch.setattr(execution.os, "getloadavg", lambda: (load, load, load))
    assert execution._idle_workers(jobs, share) == workers


# A rescore of one file with a stand-in grader, in a fresh process: its peak RSS in MiB, from
# VmHWM (ru_maxrss would count the peak of the process it was started from: Linux keeps it
# across exec).
_PEAK = textwrap.dedent("""
    import re, sys
    from leash_eval.rescore import graders, rescore_file
    graders._mv_grade = lambda response, gold, extract, limit=None: (
        response.endswith("{" + gold + "}$"), gold, True)
    rep = rescore_file(sys.argv[1], sys.argv[2], fmt="samples", jobs=1, batch_size=500)
    with open("/proc/self/status") as fh:
        print(rep.n_samples, int(re.search(r"VmHWM:\\s+(\\d+)", fh.read()).group(1)) // 1024)
""")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_memory_of_a_rescore_does_not_grow_with_the_file(tmp_path, suffix):
    """Memory is bounded by the batch, not by the file: a file ten times longer (176 MB more
    response text) is rescored at the peak of the shorter one, within a fraction of that text.
    Before, the rows were sorted (every response held) and held batches kept theirs alive.
    The grader is a stand-in (math-verify's own memory is math-verify's): what is measured is
    leash's reading, batching, counting and writing."""
    words = [f"w{i}" for i in range(500)]
    peaks = {}
    for n in (4_000, 40_000):
        src = tmp_path / f"r{n}{suffix}"
        text = [" ".join(words[(i * 7 + k * k) % 500] for k in range(1000)) +
                f" so $\\boxed{{{i % 97}}}$" for i in range(n)]  # about 4.4 kB, distinct
        rows = {"model": ["m"] * n, "benchmark": ["b"] * n, "question_id": list(map(str, range(n))),
                "sample_idx": [0] * n, "response": text, "gold": [str(i % 97) for i in range(n)]}
        if suffix == ".parquet":
            pq.write_table(pa.table(rows), src, row_group_size=500)
        else:
            src.write_text("".join(json.dumps(dict(zip(rows, r))) + "\n"
                                   for r in zip(*rows.values())))
        del rows, text
        proc = subprocess.run([sys.executable, "-c", _PEAK, str(src), str(tmp_path / "o.parquet")],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        got, peaks[n] = map(int, proc.stdout.split())
        assert got == n
        src.unlink()
    assert peaks[40_000] - peaks[4_000] < 60, peaks


def test_rescore_outside_the_main_thread_uses_a_worker(tmp_path):
    """math-verify's timeouts use signal.alarm, which raises in a non-main thread; rescore()
    then grades in a worker process, where the alarm works, and gives the same verdicts."""
    samples = pd.DataFrame({"question_id": ["0", "0"], "response": ["\\boxed{1}", "\\boxed{2}"]})
    got = {}

    def run():
        try:
            got["res"] = rs.rescore(samples, {"0": "2"}, jobs=1)
        except Exception as exc:
            got["err"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join(120)
    assert "err" not in got, got.get("err")
    assert got["res"].samples["correct"].tolist() == [False, True]


def test_math_verify_timeout_warnings_are_counted_not_printed(capsys):
    lg = logging.getLogger("math_verify.parser")
    with rs_graders.counting_timeouts() as counter:
        lg.warning("Timeout during parsing: %s", "x" * 10_000)
        lg.warning("Timeout during parsing: y")
    assert counter.n == 2
    assert "Timeout" not in capsys.readouterr().err
    assert lg.filters == []  # the filter is removed again


# ----------------------------------------------------------------------------- input errors


@needs_mv
def test_missing_gold_is_named(tmp_path):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    # the file, how many questions lack a gold answer, and which
    with raises_with(rs.MissingGoldError, file=f, text="1 question(s) have no gold answer in the "
                                                       "2 given, e.g. ['2']"):
        rs.rescore_file(f, tmp_path / "o.jsonl", {"0": "1", "1": "3"}, fmt="evaluator",
                        model="m", benchmark="b", jobs=1)
    assert not list(tmp_path.glob("*o.jsonl*"))  # no half-written output, no temporary file
    with pytest.raises(ValueError, match=r"\.jsonl, \.parquet or \.pq") as info:
        rs.rescore_file(f, tmp_path / "o.csv", fmt="evaluator", model="m", benchmark="b")
    assert (info.value.param, info.value.func) == ("out", "rescore_file")
    assert info.value.value == str(tmp_path / "o.csv")
    with raises_with(param="jobs", func="rescore_file", value=0, constraint="an int >= 1"):
        rs.rescore_file(f, None, fmt="evaluator", model="m", benchmark="b", jobs=0)
    with raises_with(param="batch_size", func="rescore", value=0, constraint="an int >= 1"):
        rs.rescore(pd.DataFrame({"question_id": ["0"], "response": ["1"]}), {"0": "1"},
                   batch_size=0)


@needs_mv
@pytest.mark.parametrize(("argv", "message"), [
    (["--jobs", "0"], "argument --jobs: must be an integer >= 1, got 0"),
    (["--batch-size", "x"], "argument --batch-size: must be an integer >= 1, got 'x'"),
    (["--out", "o.csv"], "--out must end in .jsonl or .parquet. Got 'o.csv'."),
    (["--task", "leg_counting"], "--task applies to --scorer reasoning-gym only."),
    (["--gold", "GOLD"], "1 question(s) have no gold answer in the 2 given, e.g. ['2']. "
                         "Check --gold"),
])
def test_cli_errors_are_one_line_exit_2_naming_flags(capsys, tmp_path, argv, message):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"answer": "1"}\n{"answer": "3"}\n', encoding="utf-8")
    argv = [str(gold) if a == "GOLD" else a for a in argv]
    with pytest.raises(SystemExit) if argv[0] in ("--jobs", "--batch-size") else _nothing():
        code, out, err = _cli(capsys, "-q", "rescore", str(f), "--fmt", "evaluator", "--model",
                              "m", "--benchmark", "b", *argv)
    if argv[0] in ("--jobs", "--batch-size"):
        err = capsys.readouterr().err
    else:
        assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert message in err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@needs_mv
def test_cli_notes_responses_without_answer(capsys, tmp_path):
    f = _evaluator_file(tmp_path / "eval.jsonl")
    out = tmp_path / "o.parquet"
    code, stdout, err = _cli(capsys, "rescore", str(f), "--fmt", "evaluator", "--model", "m",
                             "--benchmark", "b", "--out", str(out), "--jobs", "2", "--json")
    assert code == 0
    assert f"leash: {HAND_NO_ANSWER} of 12 responses had no extractable answer" in err
    [row] = json.loads(stdout)
    assert row["samples"] == 12
    assert pd.read_parquet(out)["correct"].tolist() == HAND_CORRECT


# ----------------------------------------------------------------------------- memory


_CHILD = textwrap.dedent("""
    import resource, sys
    import pyarrow.parquet as pq
    from leash_eval import formats
    from leash_eval import rescore as rs

    path, out = sys.argv[1], sys.argv[2]

    def streamed(p, *, batch_size, **kw):  # a reader that streams, as response_batches does
        yield from pq.ParquetFile(p).iter_batches(batch_size=batch_size)

    class Exact:  # a cheap scorer, so that the test measures the pipeline and not math-verify
        def score_answer(self, answer, entry):
            return 1.0 if answer == entry["answer"] else 0.0

    formats.response_batches = streamed
    gold = {str(q): {"answer": str(q)} for q in range(50)}
    rep = rs.rescore_file(path, out, gold, scorer="reasoning-gym", task=Exact(), jobs=1,
                          batch_size=500)
    print(rep.n_samples, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def _responses_parquet(path: Path, n: int) -> None:
    filler = "Let us think step by step about this problem. " * 80  # ~3.7 KB per response
    writer = None
    for start in range(0, n, 2000):
        idx = list(range(start, min(start + 2000, n)))
        t = pa.table({
            "model": ["m"] * len(idx), "benchmark": ["b"] * len(idx),
            "question_id": [str(i % 50) for i in idx], "step": pa.nulls(len(idx), pa.int64()),
            "sample_idx": [i // 50 for i in idx],
            "response": [f"{filler} {i} <answer>{i % 50}</answer>" for i in idx],
            "correct": pa.nulls(len(idx), pa.bool_()), "gold": pa.nulls(len(idx), pa.string()),
        })
        writer = writer or pq.ParquetWriter(path, t.schema)
        writer.write_table(t)
    writer.close()


@pytest.mark.slow
def test_streaming_memory_does_not_grow_with_the_file(tmp_path):
    """Peak RSS of a fresh process rescoring 4,000 vs 32,000 samples of ~3.7 KB (15 MB vs
    120 MB of response text): a pipeline that held the file would peak over 100 MB higher on
    the larger one; a streaming one stays within a few MB (batches of 500 = 2 MB)."""
    peaks = {}
    for n in (4_000, 32_000):
        src = tmp_path / f"in{n}.parquet"
        _responses_parquet(src, n)
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(src), str(tmp_path / "o.pq")],
                              capture_output=True, text=True, cwd=REPO, check=True)
        got_n, peak_kb = map(int, proc.stdout.split())
        assert got_n == n
        peaks[n] = peak_kb / 1024
        assert pq.read_table(tmp_path / "o.pq").column("correct").to_pylist() == [True] * n
    text_mb = (32_000 - 4_000) * 3.7e3 / 1e6  # ~104 MB more response text
    assert peaks[32_000] - peaks[4_000] < 0.25 * text_mb, peaks


# ----------------------------------------------------------------------------- Ctrl-C


def _group_alive(pgid: int) -> list[str]:
    return [line for line in processes() if int(line.split()[0]) == pgid]


@needs_mv
@pytest.mark.slow
def test_ctrl_c_is_one_line_exit_130_and_leaves_no_worker(tmp_path):
    records = [{"idx": q, "gt": str(q),
                "code": [f"Adding {q} and {i} gives $x = {q + i}$, so \\boxed{{{q * i + 7}}}"
                         for i in range(10)], "score": [False] * 10} for q in range(4000)]
    f = tmp_path / "big.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    leash = Path(sys.executable).with_name("leash")
    proc = subprocess.Popen(
        [str(leash), "rescore", str(f), "--fmt", "evaluator", "--model", "m", "--benchmark",
         "b", "--out", str(tmp_path / "o.parquet"), "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        # a terminal's Ctrl-C: SIGINT handled by default (a background job would ignore it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(_group_alive(proc.pid)) < 4 and proc.poll() is None:  # leash, server, 2 workers
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.2)
    assert proc.poll() is None, "finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does: the whole foreground group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "leash rescore: interrupted", err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    while _group_alive(proc.pid):
        assert time.monotonic() < deadline, _group_alive(proc.pid)
        time.sleep(0.2)
    assert not list(tmp_path.glob("*o.parquet*"))  # no partial output left behind


def _big_input(tmp_path: Path, n_questions: int = 4000) -> Path:
    records = [{"idx": q, "gt": str(q),
                "code": [f"Adding {q} and {i} gives $x = {q + i}$, so \\boxed{{{q * i + 7}}}"
                         for i in range(10)], "score": [False] * 10} for q in range(n_questions)]
    f = tmp_path / "big.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return f


@needs_mv
@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT alone"])
def test_no_process_outlives_a_killed_or_terminated_rescore(tmp_path, how):
    """SIGKILL (nothing can clean up: the workers end with their parent), SIGTERM (as Ctrl-C,
    its own line, 143) and SIGINT sent to the process alone, started as a shell starts a
    background job (SIGINT ignored): afterwards no process of the run is left (orphans: 0)."""
    f = _big_input(tmp_path)
    leash = Path(sys.executable).with_name("leash")
    ignore = how == "SIGINT alone"
    proc = subprocess.Popen(
        [str(leash), "rescore", str(f), "--fmt", "evaluator", "--model", "m", "--benchmark",
         "b", "--out", str(tmp_path / "o.parquet"), "--jobs", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN if ignore
                                         else signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(_group_alive(proc.pid)) < 4 and proc.poll() is None:  # leash, server, 2 workers
        assert time.monotonic() < deadline, "the workers never started"
        time.sleep(0.2)
    assert proc.poll() is None, "finished before it could be stopped"
    sig = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM}.get(how, signal.SIGINT)
    os.kill(proc.pid, sig)  # the process alone, not its group
    _, err = proc.communicate(timeout=60)
    want = {"SIGKILL": (-9, None), "SIGTERM": (143, "leash rescore: terminated"),
            "SIGINT alone": (130, "leash rescore: interrupted")}[how]
    assert proc.returncode == want[0], err
    if want[1]:
        assert err.strip().splitlines()[-1] == want[1] and "Traceback" not in err, err
    deadline = time.monotonic() + 30
    while _group_alive(proc.pid):  # orphans: re-parented, still in the process group
        assert time.monotonic() < deadline, _group_alive(proc.pid)
        time.sleep(0.2)
    if how != "SIGKILL":
        assert not list(tmp_path.glob("*o.parquet*"))  # no partial output left behind


# ----------------------------------------------------------------------------- study sources


def _study(tmp_path: Path, source: str) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text("name: t\nsections:\n  support:\n    sources:\n      - path: eval.jsonl\n"
                 "        fmt: evaluator\n        model: m\n        benchmark: math\n"
                 + textwrap.indent(source, " " * 8), encoding="utf-8")
    return p


@needs_mv
def test_study_source_rescore_round_trip(tmp_path, monkeypatch):
    from leash.sources.study import load_study

    monkeypatch.setattr(rs_stream, "CACHE_DIR", tmp_path / "cache")
    _evaluator_file(tmp_path / "eval.jsonl")
    study = load_study(_study(tmp_path, "rescore: math-verify\n"))
    src = study.section("support").sources[0]
    assert src.rescore == {"scorer": "math-verify"}
    frame = study.summaries("support").sort_values("question_id")
    assert frame["c"].tolist() == [2, 2, 3]  # HAND_CORRECT per question, not the file's scores
    [cached] = (tmp_path / "cache").glob("*.parquet")
    # a second load reads the cached file: rescoring is not run again
    monkeypatch.setattr(rs_stream, "rescore_inputs", lambda *a, **k: pytest.fail("rescored twice"))
    again = load_study(_study(tmp_path, "rescore: math-verify\n")).summaries("support")
    assert again.sort_values("question_id")["c"].tolist() == [2, 2, 3]
    # another extractor is another cache entry
    monkeypatch.undo()
    monkeypatch.setattr(rs_stream, "CACHE_DIR", tmp_path / "cache")
    load_study(_study(tmp_path, "rescore: math-verify\nextract: leash\n")).summaries("support")
    assert len(list((tmp_path / "cache").glob("*.parquet"))) == 2 and cached.is_file()


@needs_mv
@needs_mirror
@pytest.mark.mirror
def test_study_source_rescore_with_manifest_gold(tmp_path, monkeypatch):
    """gold: aime24 grades against AIME 2024's answers: question 0's is 204 (the file's own
    gold fields here are wrong on purpose)."""
    from leash.sources.study import load_study

    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    monkeypatch.setattr(rs_stream, "CACHE_DIR", tmp_path / "cache")
    records = [{"idx": 0, "gt": "1", "code": ["\\boxed{204}", "\\boxed{1}"],
                "score": [False, True]}]
    _evaluator_file(tmp_path / "eval.jsonl", records)
    with pytest.warns(UserWarning, match=r"own gold answers contradict the 'gold' parameter"):
        frame = load_study(_study(tmp_path, "rescore: math-verify\ngold: aime24\n")
                           ).summaries("support")  # said, and graded as asked
    assert (frame["n"].tolist(), frame["c"].tolist()) == ([2], [1])


@needs_mv
def test_study_source_rescore_with_a_local_gold_file(tmp_path, monkeypatch, capsys):
    """`gold:` takes a JSONL question file, relative to the study file, as `leash rescore
    --gold FILE` does: a study regrades offline. The file's own gold fields are wrong on
    purpose (question 0: 1/2); the question file's answers (0.5, 4, 11) grade it, by hand: q0
    "0.5" and "1/2" right, q1 "4" right, q2 "11" right."""
    from leash.sources.study import load_study
    from leash_eval.run.study_check import check_study

    monkeypatch.setattr(rs_stream, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.delenv("LEASH_DATA_MIRROR", raising=False)
    _evaluator_file(tmp_path / "eval.jsonl")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "gold.jsonl").write_text("".join(
        json.dumps({"idx": i, "problem": "?", "final": g}) + "\n"
        for i, g in enumerate(["0.5", "4", "11"])), encoding="utf-8")
    source = "rescore: math-verify\ngold: q/gold.jsonl\ngold_rule: gold\n"
    with pytest.raises(ValueError, match="field 'gold' is missing"):  # the rule is read
        load_study(_study(tmp_path, source)).summaries("support")
    (tmp_path / "q" / "gold.jsonl").write_text(
        (tmp_path / "q" / "gold.jsonl").read_text().replace('"final"', '"gold"'))
    with pytest.warns(UserWarning, match="own gold answers contradict"):
        frame = load_study(_study(tmp_path, source)).summaries("support")
    assert frame.sort_values("question_id")["c"].tolist() == [2, 1, 1]
    # a question file that is not there: one problem naming the key, before any reading
    bad = _study(tmp_path, source.replace("q/gold.jsonl", "q/nothere.jsonl"))
    [problem] = check_study(bad).problems
    assert (problem.key, problem.value) == ("sections.support.sources[0].gold", "q/nothere.jsonl")


@pytest.mark.parametrize(("source", "message"), [
    ("rescor: math-verify\n", r"line 9: unknown key `sections.support.sources\[0\].rescor` "
                              r"\(did you mean `rescore`\?\)"),
    ("rescore: mathverify\n", r"line 9: `sections.support.sources\[0\].rescore` must be one "
                              r"of math-verify, got 'mathverify' \(str\) \(did you mean "
                              r"`math-verify`\?\)"),
    ("rescore: math-verify\ngold: math5000\n", r"line 10: `sections\.support\.sources\[0\]\.gold` "
                                               r"must be a benchmark of "
                                               r"data/manifest.yaml with a question file, or a "
                                               r"JSONL question file \(\*\.jsonl, relative to "
                                               r"the study file\), got "
                                               r"'math5000' \(str\) \(did you mean `math500`"),
    ("rescore: math-verify\ngold_rule: gold\n", r"line 10: `sections.support.sources\[0\]"
                                                r"\.gold_rule` applies only with `gold`"),
    ("gold: math500\n", r"line 9: `sections.support.sources\[0\].gold` applies only with "
                        r"`rescore`"),
    ("rescore: math-verify\nextract: lesh\n",
     r"line 10: `sections\.support\.sources\[0\]\.extract` must be one of math-verify, leash, "
     r"got 'lesh'"),
])
def test_study_rescore_keys_are_checked(tmp_path, source, message):
    from leash.sources.study import load_study

    with pytest.raises(ValueError, match=message):
        load_study(_study(tmp_path, source))


def test_data_folder_is_not_touched(tmp_path):
    # the default cache lives in build/ (ignored by git), never next to the user's data
    assert rs.CACHE_DIR == REPO / "build" / "rescored"


@pytest.mark.slow
@needs_mv
def test_a_dask_cluster_writes_what_local_processes_write(tmp_path):
    """`--cluster`: a local Dask cluster of two worker processes on this machine's cores grades
    the batches and the output is byte for byte the local run's."""
    distributed = pytest.importorskip("distributed", reason="the cluster extra (dask.distributed)")
    records = [dict(r, idx=r["idx"] + 3 * k) for k in range(10) for r in RECORDS]
    f = _evaluator_file(tmp_path / "eval.jsonl", records)
    kw = dict(fmt="evaluator", model="m", benchmark="b", batch_size=7)
    import dask
    import psutil

    local = rs.rescore_file(f, tmp_path / "local.jsonl", jobs=1, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        with pytest.raises(ValueError, match=r"LocalCluster\(processes=False\), or .*"
                           "DASK_DISTRIBUTED__WORKER__DAEMON=False"):
            rs.rescore_file(f, None, cluster=cluster.scheduler_address, **kw)
    # the one-line remedy works: workers that are threads of this process
    with distributed.LocalCluster(processes=False, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster:
        rs.rescore_file(f, tmp_path / "threads.jsonl", cluster=cluster.scheduler_address, **kw)
    assert (tmp_path / "threads.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    # workers that may start processes (as the README says to start them); this process's own
    # helpers (a resource tracker, a fork server of an earlier test) are not the cluster's
    before = set(psutil.Process().children(recursive=True))
    with dask.config.set({"distributed.worker.daemon": False}), distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=logging.ERROR) as cluster:
        on = rs.rescore_file(f, tmp_path / "cluster.jsonl", cluster=cluster.scheduler_address,
                             **kw)
        started = set(psutil.Process().children(recursive=True)) - before  # the cluster's
    # no process of the run outlives the cluster (a grading pool left behind would wait forever)
    _, alive = psutil.wait_procs(started, timeout=30)
    assert not alive, [p.cmdline()[-1][:80] for p in alive]
    assert (tmp_path / "cluster.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert on.n_samples == local.n_samples == 120 and on.n_no_answer == 10 * HAND_NO_ANSWER
    assert _read_jsonl(tmp_path / "cluster.jsonl")["correct"].tolist() == HAND_CORRECT * 10


@needs_mv
def test_gold_files_inputs_and_outputs_that_used_to_go_wrong(tmp_path, capsys):
    samples = [{"model": "m", "benchmark": "b", "question_id": str(q), "sample_idx": 0,
                "response": f"so \\boxed{{{10 * (q + 1)}}}"} for q in range(3)]
    f = tmp_path / "s.jsonl"  # responses and no verdicts: detected, not only with --fmt
    f.write_text("".join(json.dumps(r) + "\n" for r in samples))
    # a gold file keyed by question_id, in another order: it was matched by line number
    gold = tmp_path / "gold.jsonl"
    gold.write_text("".join(json.dumps({"question_id": q, "answer": str(10 * (q + 1))}) + "\n"
                            for q in (2, 0, 1)))
    code, _, err = _cli(capsys, "-q", "rescore", str(f), "--gold", str(gold), "--out",
                        str(tmp_path / "o.jsonl"), "--jobs", "1")
    assert code == 0, err
    assert _read_jsonl(tmp_path / "o.jsonl").correct.tolist() == [True, True, True]
    # the input as --out: refused before anything is read, the input left as it was
    before = f.read_bytes()
    code, _, err = _cli(capsys, "-q", "rescore", str(f), "--gold", str(gold), "--out", str(f))
    assert code == 2 and "--out is its input" in err and f.read_bytes() == before
    # CSV (its response column was not read: a DuckDB binder traceback)
    pd.DataFrame(samples).assign(gold=["10", "21", "30"]).to_csv(tmp_path / "s.csv", index=False)
    code, _, err = _cli(capsys, "-q", "rescore", str(tmp_path / "s.csv"), "--out",
                        str(tmp_path / "c.parquet"), "--jobs", "1")
    assert code == 0, err
    assert pd.read_parquet(tmp_path / "c.parquet").correct.tolist() == [True, False, True]
    # summarizing the ungraded file says to grade it first
    code, _, err = _cli(capsys, "-q", "summarize", str(tmp_path / "s.csv"))
    assert code == 2 and "grade its responses first (`leash rescore" in err


@pytest.mark.slow
@needs_mv
def test_gold_answers_the_file_contradicts_are_a_warning(tmp_path, capsys):
    # the file's own gold answers against the given ones: another benchmark's (or the same in
    # another order) grade every response against another question's answer, which was silent;
    # a warning, not an error, since a file's own gold answers may be the wrong ones
    f = _evaluator_file(tmp_path / "eval.jsonl")  # its own gold: 1/2, 3, 10
    out = tmp_path / "o.parquet"
    for given, agree in ((["0.5", "3", "10"], True),  # the same answers (0.5 is 1/2)
                         (["3", "10", "\\frac{1}{2}"], False), (["1", "2", "10"], False),
                         (["1", "3", "10"], True)):  # one of three differs: not most
        gold = tmp_path / "gold.jsonl"
        gold.write_text("".join(json.dumps({"idx": i, "answer": a}) + "\n"
                                for i, a in enumerate(given)))
        code, _, err = _cli(capsys, "-q", "rescore", str(f), "--fmt", "evaluator", "--model",
                            "m", "--benchmark", "b", "--gold", str(gold), "--out", str(out),
                            "--jobs", "1")
        assert code == 0 and out.exists(), err
        warned = "leash rescore: warning: " in err and "contradict --gold on" in err
        assert warned != agree, err
        if not agree:
            assert "leave out --gold to grade against the file's own." in err
            assert err.count("\n") == 1  # one line
        out.unlink()


@needs_mv
def test_the_gold_check_runs_outside_the_main_thread(tmp_path):
    # math-verify refuses to parse with its signal timeouts outside the main thread; the check
    # of given gold answers against the file's own compares them as leash normalizes them there
    f = tmp_path / "s.jsonl"
    f.write_text("".join(json.dumps({"model": "m", "benchmark": "b", "question_id": str(q),
                                     "sample_idx": 0, "response": f"\\boxed{{{q + 1}}}",
                                     "gold": f"{q + 1}.0", "correct": False}) + "\n"
                         for q in range(3)))
    result = {}

    def run():
        try:
            result["report"] = rs.rescore_file(f, gold={str(q): str(q + 1) for q in range(3)},
                                               jobs=1)
        except Exception as exc:  # the test reports it
            result["error"] = exc

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert "error" not in result, result.get("error")
    assert result["report"].table["accuracy_after"].tolist() == [1.0]


def test_the_fork_server_is_silent_only_for_a_worker_started_after_its_pool_stopped(
        monkeypatch, capsys):
    """A worker the pool starts while a stopped run ends finds its semaphore gone
    (FileNotFoundError in multiprocessing.synchronize's __setstate__): the fork server's hook
    prints nothing for it (the run's own line is the last), and the usual traceback for
    anything else (seen once under load: a traceback after "leash rescore: interrupted")."""
    import importlib

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # the module sets it on import
    quiet = importlib.import_module("leash_eval.forkserver_quiet").quiet_excepthook
    ns: dict = {}
    exec(compile("def __setstate__():\n    raise FileNotFoundError(2, 'No such file')\n",
                 "multiprocessing/synchronize.py", "exec"), ns)
    for raiser, shown in ((ns["__setstate__"], False), (lambda: open("/nonexistent/x"), True),
                          (lambda: 1 / 0, True)):
        try:
            raiser()
        except Exception:
            quiet(*sys.exc_info())
        assert ("Traceback" in capsys.readouterr().err) == shown


def test_the_reader_of_responses_leaves_the_settings_of_later_readers_alone(tmp_path):
    """response_batches reads on one DuckDB thread: a database of its own, so a summary read
    later in the same process (a notebook, a study check) keeps every thread."""
    import duckdb

    from leash_eval import formats

    threads = formats.connect().execute("SELECT current_setting('threads')").fetchone()[0]
    f = _evaluator_file(tmp_path / "eval.jsonl")
    batches = list(formats.response_batches(f, fmt="evaluator", model="m", benchmark="b",
                                            batch_size=2))
    assert sum(b.num_rows for b in batches) == len(HAND_CORRECT)
    assert threads == duckdb.connect().execute("SELECT current_setting('threads')").fetchone()[0]
    assert formats.connect().execute("SELECT current_setting('threads')").fetchone()[0] \
        == threads
