"""Tests of the leash command line, run in-process through leash_eval.cli.main."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from _support import HAVE_MV, MIRROR, REPO, needs_mirror, needs_mv  # noqa: F401
from _support import run_cli as _run
from leash_eval.cli import main

# Hand-made counts: question -> (n, c) per model; every question has 4 samples, and the
# correct ones come first except where noted in SAMPLES below.
COUNTS = {
    "base": {"q0": 4, "q1": 1, "q2": 0, "q3": 0, "q4": 2},
    "rl": {"q0": 4, "q1": 0, "q2": 3, "q3": 0, "q4": 4},
}
N = 4


def _samples_file(tmp_path: Path, counts=COUNTS, benchmark="toy") -> Path:
    rows = []
    for model, per_q in counts.items():
        for q, c in per_q.items():
            for i in range(N):
                # correct samples at the END of generation order (so first-k differs)
                rows.append({"model": model, "benchmark": benchmark, "question_id": q,
                             "sample_idx": i, "correct": i >= N - c, "answer": str(i >= N - c)})
    f = tmp_path / f"{benchmark}.samples.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f


def _unbiased(n, c, k):
    return 1 - math.comb(n - c, k) / math.comb(n, k)


# ----------------------------------------------------------------------------- error contract


def test_missing_file_is_one_line_exit_2(capsys, tmp_path):
    code, out, err = _run(capsys, "passk", str(tmp_path / "nope.jsonl"))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("leash passk: error: ") and "nope.jsonl" in err
    assert "Traceback" not in err


def test_unwritable_output_is_one_line_exit_2(capsys, tmp_path):
    f = _samples_file(tmp_path)
    target = f / "summary.parquet"  # the parent is a file
    code, out, err = _run(capsys, "-q", "summarize", str(f), "--out", str(target))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.slow
def test_invalid_content_is_one_line_exit_2(capsys, tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "1",
                             "sample_idx": 0, "correct": "maybe"}) + "\n")
    code, out, err = _run(capsys, "-q", "passk", str(f))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "correct" in err


def test_bad_option_values(capsys, tmp_path):
    f = _samples_file(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["passk", str(f), "--k", "1,zero"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main([])
    capsys.readouterr()
    code, _, err = _run(capsys, "passk", str(f), "--k", "8", "-q")  # k > n
    assert code == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_validate_reports_problems_with_exit_1(capsys, tmp_path):
    good = _samples_file(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "1",
                               "sample_idx": 0, "correct": 0.5}) + "\n"
                   + json.dumps({"model": "m", "benchmark": "b", "question_id": "1",
                                 "sample_idx": 1, "correct": True}) + "\n")
    code, out, _ = _run(capsys, "-q", "validate", str(good))
    assert code == 0 and "0 problems" in out
    code, out, _ = _run(capsys, "validate", str(good), str(bad), "--json", "-q")
    assert code == 1
    rows = json.loads(out)
    assert [r["ok"] for r in rows] == [True, False]
    assert set(rows[0]) == {"file", "format", "ok", "rows_read", "rows_used", "rows_rejected",
                            "n_problems", "problems_by_reason", "notes", "problems"}
    assert rows[1]["rows_read"] == 2 and rows[1]["rows_rejected"] == 1
    # the problems themselves, as the text lists them (they were left out), and the counts as
    # a JSON object (they were JSON text inside a string)
    assert rows[0]["problems"] == [] and rows[1]["problems_by_reason"] == {"invalid_bool": 1}
    assert rows[1]["problems"] == [{"location": "line 1", "field": "correct", "value": "0.5",
                                    "reason": "invalid_bool", "message": "must be boolean-like "
                                    "(true/false, 0/1)"}]


# ----------------------------------------------------------------------------- passk / summarize


def test_passk_unbiased_matches_hand_computation(capsys, tmp_path):
    f = _samples_file(tmp_path)
    code, out, err = _run(capsys, "passk", str(f), "--k", "1,2,4", "--estimator", "unbiased",
                          "--json")
    assert code == 0 and "reading" in err  # progress on stderr
    rows = json.loads(out)
    assert set(rows[0]) == {"model", "benchmark", "k", "pass_at_k", "n_questions", "estimator"}
    assert {r["estimator"] for r in rows} == {"unbiased"}
    got = {(r["model"], r["k"]): r["pass_at_k"] for r in rows}
    for model, per_q in COUNTS.items():
        for k in (1, 2, 4):
            expected = sum(_unbiased(N, c, k) for c in per_q.values()) / len(per_q)
            assert got[(model, k)] == pytest.approx(expected, abs=1e-12)


def test_passk_first_k_uses_generation_order(capsys, tmp_path):
    f = _samples_file(tmp_path)
    code, out, _ = _run(capsys, "-q", "passk", str(f), "--k", "1,2", "--estimator", "first-k",
                        "--json")
    assert code == 0
    # the default is Chen et al.'s unbiased estimator (user data); first-k is asked for
    default = json.loads(_run(capsys, "-q", "passk", str(f), "--k", "1,2", "--json")[1])
    assert {r["estimator"] for r in default} == {"unbiased"}
    assert {r["estimator"] for r in json.loads(out)} == {"first-k"}
    got = {(r["model"], r["k"]): r["pass_at_k"] for r in json.loads(out)}
    # correct samples come last: within the first k, question found iff c > N - k
    for model, per_q in COUNTS.items():
        for k in (1, 2):
            expected = sum(c > N - k for c in per_q.values()) / len(per_q)
            assert got[(model, k)] == pytest.approx(expected)


def test_summarize_writes_summary_and_prints_overview(capsys, tmp_path):
    f = _samples_file(tmp_path)
    out_path = tmp_path / "summary.parquet"
    code, out, _ = _run(capsys, "-q", "summarize", str(f), "--out", str(out_path), "--json")
    assert code == 0 and out_path.is_file()
    rows = {r["model"]: r for r in json.loads(out)}
    assert rows["base"]["questions"] == 5 and rows["base"]["samples"] == 20
    assert rows["base"]["correct"] == sum(COUNTS["base"].values())
    assert rows["rl"]["pass@n"] == pytest.approx(3 / 5)
    assert rows["base"]["avg@n"] == pytest.approx(sum(COUNTS["base"].values()) / 20)
    # the written summary is itself an input
    code, out2, _ = _run(capsys, "-q", "passk", str(out_path), "--k", "4", "--json")
    assert code == 0
    assert {r["model"]: r["pass_at_k"] for r in json.loads(out2)} == pytest.approx(
        {"base": 3 / 5, "rl": 3 / 5})


@pytest.mark.slow
def test_checkpoint_rows_and_rows_without_step_are_all_kept(capsys, tmp_path):
    rows = []
    for model, step, c in (("base", None, 1), ("rl", 10, 2), ("rl", 20, 4), ("rl", None, 3)):
        for i in range(N):
            row = {"model": model, "benchmark": "toy", "question_id": "q0", "sample_idx": i,
                   "correct": i < c}
            if step is not None:
                row["step"] = step
            rows.append(row)
    f = tmp_path / "steps.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = _run(capsys, "-q", "passk", str(f), "--k", "1", "--estimator", "unbiased",
                        "--json")
    assert code == 0
    got = {(r["model"], r["step"]): r["pass_at_k"] for r in json.loads(out)}
    assert got == pytest.approx({("base", None): 1 / 4, ("rl", None): 3 / 4, ("rl", 10): 2 / 4,
                                 ("rl", 20): 4 / 4})
    if importlib.util.find_spec("leash.analysis.pairing") is None:
        return
    code, out, _ = _run(capsys, "-q", "support", str(f), "--base", "base", "--rl", "rl",
                        "--n-boot", "0", "--json")
    assert code == 0
    steps = [r["step"] for r in json.loads(out) if r["scope"] == "benchmark"]
    assert steps == [None, 10, 20]
    code, out, _ = _run(capsys, "-q", "support", str(f), "--base", "rl@10", "--rl", "rl@20",
                        "--n-boot", "0", "--k", "1", "--json")
    assert code == 0
    row = next(r for r in json.loads(out) if r["scope"] == "benchmark")
    # first sample: correct for step 10 (c=2, correct first) and step 20 -> preservation
    assert (row["P"], row["E"], row["S"], row["O"], row["k"]) == (1, 0, 0, 0, 1)
    # a series against its own first checkpoint: that checkpoint against itself is left out
    code, out, err = _run(capsys, "support", str(f), "--base", "rl@10", "--rl", "rl",
                          "--n-boot", "0", "--json")
    assert code == 0 and "left out step 10 of --rl rl" in err
    steps = [r["step"] for r in json.loads(out) if r["scope"] == "benchmark"]
    assert steps == [None, 20]


# ----------------------------------------------------------------------------- support


def test_support_counts_and_keys(capsys, tmp_path):
    pytest.importorskip("leash.analysis.pairing")
    f = _samples_file(tmp_path)
    code, out, _ = _run(capsys, "-q", "support", str(f), "--base", "base", "--rl", "rl",
                        "--n-boot", "50", "--json")
    assert code == 0, out
    rows = json.loads(out)
    row = next(r for r in rows if r["benchmark"] == "toy")
    # base found: q0,q1,q4; rl found: q0,q2,q4  ->  P=2 (q0,q4), S=1 (q1), E=1 (q2), O=1 (q3)
    assert (row["P"], row["E"], row["S"], row["O"]) == (2, 1, 1, 1)
    assert row["SRR"] == pytest.approx(2 / 3) and row["NDR"] == pytest.approx(1 / 3)
    assert row["SDS"] == pytest.approx(2 * (2 / 3) * (1 / 3) / (2 / 3 + 1 / 3))
    assert row["NSCR"] == pytest.approx(0.0)
    assert row["mcnemar_p"] == pytest.approx(1.0)  # E = S = 1: exact two-sided sign test
    assert row["epsilon"] == pytest.approx(-math.log(0.05) / N)
    for key in ("SRR low", "SRR high", "NDR low", "NDR high"):
        assert key in row


# ----------------------------------------------------------------------------- fetch / rescore


def test_fetch_list_json_keys(capsys):
    code, out, _ = _run(capsys, "fetch", "--list", "--json", "--mirror", str(MIRROR))
    assert code == 0
    rows = json.loads(out)
    assert set(rows[0]) == {"name", "kind", "format", "model", "benchmark", "step", "path",
                            "local"}
    names = {r["name"] for r in rows}
    assert {"gsm8k-probe-sft", "math500", "gsm8k-probe"} <= names


def test_fetch_unknown_name_exit_2(capsys):
    code, out, err = _run(capsys, "fetch", "no-such-dataset")
    assert code == 2 and "Unknown dataset or group 'no-such-dataset'" in err
    assert len(err.strip().splitlines()) == 1


@needs_mirror
@pytest.mark.mirror
def test_fetch_from_mirror(capsys, tmp_path):
    code, out, _ = _run(capsys, "-q", "fetch", "aime24", "amc23", "--mirror", str(MIRROR),
                        "--dest", str(tmp_path), "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["aime24", "amc23"]
    assert rows[0]["path"] == str(MIRROR / "math-benchmarks" / "aime24.test.jsonl")


@pytest.mark.skipif(not HAVE_MV, reason="math-verify not installed")
def test_rescore_evaluator_file(capsys, tmp_path):
    f = tmp_path / "eval.jsonl"
    recs = [
        {"idx": 0, "gt": "\\frac{1}{2}", "code": ["\\boxed{0.5}", "\\boxed{2}"],
         "pred": ["0.5", "2"], "score": [False, False]},  # first verdict is wrong upstream
        {"idx": 1, "gt": "3", "code": ["\\boxed{3}", "no answer"], "pred": ["3", ""],
         "score": [True, False]},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out_path = tmp_path / "rescored.jsonl"
    code, out, _ = _run(capsys, "-q", "rescore", str(f), "--model", "m", "--benchmark", "b",
                        "--out", str(out_path), "--json")
    assert code == 0
    [row] = json.loads(out)
    assert set(row) == {"model", "benchmark", "step", "samples", "questions", "accuracy_before",
                        "accuracy_after", "changed", "agreement"}
    assert (row["samples"], row["changed"]) == (4, 1)
    assert row["accuracy_before"] == pytest.approx(0.25)
    assert row["accuracy_after"] == pytest.approx(0.5)
    written = pd.read_json(out_path, lines=True, dtype={"answer": str})
    assert written["correct"].tolist() == [True, False, True, False]
    assert written["answer"].tolist()[:3] == ["0.5", "2", "3"]
    # the rescored file is a canonical samples file: the summary readers accept it
    code, out, _ = _run(capsys, "-q", "passk", str(out_path), "--k", "1,2", "--estimator",
                        "unbiased", "--json")
    assert code == 0
    assert [r["pass_at_k"] for r in json.loads(out)] == pytest.approx([0.5, 1.0])


def test_rescore_without_gold_exit_2(capsys, tmp_path):
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps({"model": "m", "benchmark": "b", "question_id": "1",
                             "sample_idx": 0, "correct": True, "response": "\\boxed{1}"}) + "\n")
    code, _, err = _run(capsys, "-q", "rescore", str(f))
    assert code == 2 and "no gold answers" in err


@pytest.mark.slow
@needs_mirror
@pytest.mark.mirror
@pytest.mark.skipif(not HAVE_MV, reason="math-verify not installed")
def test_rescore_probe_agrees_with_upstream_verdicts(capsys, monkeypatch):
    """math-verify reproduces every one of the 480 final-pair verdicts of the GSM8K probe
    (measured: 1440/1440 over all six raw files)."""
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    code, out, _ = _run(capsys, "-q", "rescore", "gsm8k-probe-sft", "gsm8k-probe-rl-final",
                        "--json")
    assert code == 0
    rows = json.loads(out)
    assert sum(r["samples"] for r in rows) == 480
    assert sum(r["changed"] for r in rows) == 0


@pytest.mark.slow
@needs_mirror
@pytest.mark.mirror
def test_support_on_probe_matches_direct_count(capsys, monkeypatch):
    """P/E/S/O of the real SFT -> PPO pair equal a direct count of the raw files' own
    `correct` flags (plain json, no leash code).

    The upstream per-question table (c_sft, c_rl) agrees on 28 of 30 questions; on questions
    13 and 24 it says c = 0 for both models although the raw files (rescored upstream in the
    pinned commit) hold 3/2 and 2/5 correct rollouts: the table predates the rescoring.
    """
    pytest.importorskip("leash.analysis.pairing")
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(MIRROR))
    folder = MIRROR / "gsm8k-sft-vs-rlvr-probe"

    def raw_counts(name):
        recs = [json.loads(x) for x in (folder / name).read_text().splitlines() if x.strip()]
        return {r["qid"]: sum(bool(ro["correct"]) for ro in r["rollouts"]) for r in recs}

    c_sft, c_rl = raw_counts("final_2048.sft_raw.jsonl"), raw_counts("final_2048.rl_raw.jsonl")
    b = {q: c > 0 for q, c in c_sft.items()}
    r = {q: c > 0 for q, c in c_rl.items()}
    expected = (sum(b[q] and r[q] for q in b), sum(not b[q] and r[q] for q in b),
                sum(b[q] and not r[q] for q in b), sum(not b[q] and not r[q] for q in b))
    code, out, _ = _run(capsys, "-q", "support", "gsm8k-probe-sft", "gsm8k-probe-rl-final",
                        "--base", "sft", "--rl", "rl", "--n-boot", "0", "--json")
    assert code == 0
    row = next(x for x in json.loads(out) if x["benchmark"] == "gsm8k")
    assert (row["P"], row["E"], row["S"], row["O"]) == expected
    assert row["N"] == 30

    table = pd.read_csv(folder / "final_2048.per_question.csv")
    differ = {int(q) for q, cs, cr in zip(table["qid"], table["c_sft"], table["c_rl"],
                                          strict=True) if (cs, cr) != (c_sft[q], c_rl[q])}
    assert differ == {13, 24}


@pytest.mark.slow
def test_simulate_and_reproduce_are_passed_through(capsys):
    # `leash simulate --check` compares the committed demo with a fresh regeneration
    assert main(["simulate", "--check"]) == 0
    assert main(["reproduce", "--list"]) == 0
    assert "01_table1_support" in capsys.readouterr().out


@pytest.mark.slow
def test_summarize_loads_no_pandas_and_prints_aligned_text(tmp_path):
    """`leash summarize` works on Arrow tables and DuckDB alone: pandas (0.3-0.4 s of start-up)
    is not imported; the text table is right-aligned, NA where a value is missing."""
    import subprocess
    import sys

    f = _samples_file(tmp_path)
    out = tmp_path / "s.parquet"
    code = ("import sys; from leash_eval.cli import main; "
            "rc = main(['-q', 'summarize', sys.argv[1], "
            "'--out', sys.argv[2]]); assert 'pandas' not in sys.modules, 'pandas'; sys.exit(rc)")
    run = subprocess.run([sys.executable, "-c", code, str(f), str(out)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    header, *lines = run.stdout.splitlines()
    assert header.split() == ["model", "benchmark", "step", "questions", "samples", "correct",
                              "n_min", "n_max", "answer_missing", "truncated", "avg@n", "pass@n"]
    assert [ln.split()[:6] for ln in lines] == [
        ["base", "toy", "NA", "5", "20", str(sum(COUNTS["base"].values()))],
        ["rl", "toy", "NA", "5", "20", str(sum(COUNTS["rl"].values()))]]
    assert {len(ln) for ln in run.stdout.splitlines()} == {len(header)}  # aligned
    assert lines[1].split()[-1] == f"{3 / 5:.4g}"
    # the summary written from the table reads back as the library's own summary
    from leash.analysis.compare import frame_differences
    from leash_eval.summarize import read_summary, summarize

    assert frame_differences(read_summary(out), summarize(f)) == []


@pytest.mark.slow
def test_support_compares_different_sample_counts_at_the_common_budget(tmp_path, capsys):
    # README: "different sample counts between two models are compared at each question's
    # common budget". The base has 8 samples, the RLVR model 4: at the common budget 4 the base
    # finds a question only by a correct sample among its first 4 (its correct counts there are
    # unknown, the first correct sample decides)
    first = {"base": {"q0": 0, "q1": 6, "q2": None, "q3": 3}, "rl": {"q0": 2, "q1": 0,
                                                                      "q2": None, "q3": None}}
    rows = [{"model": m, "benchmark": "toy", "question_id": q, "sample_idx": i,
             "correct": f is not None and i >= f}
            for m, n in (("base", 8), ("rl", 4)) for q, f in first[m].items() for i in range(n)]
    f = tmp_path / "diff.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # by hand at budget 4: q0 both (P), q1 rl only (E: the base's sample 6 is beyond 4),
    # q2 neither (O), q3 base only (S)
    for extra in ([], ["--k", "4"], ["--k", "4", "--n-boot", "0"]):
        code, out, err = _run(capsys, "support", str(f), "--base", "base", "--rl", "rl",
                              "--json", *extra)
        assert code == 0, err
        row = json.loads(out)[0]
        assert [row[x] for x in "PESO"] == [1, 1, 1, 1] and row["k"] == 4
        assert "compared at min(n_base, n_rl)" in err
    code, out, err = _run(capsys, "support", str(f), "--base", "base", "--rl", "rl",
                          "--min-count", "2")
    last = err.strip().splitlines()[-1]
    assert code == 2 and "Traceback" not in err and last.startswith("leash support: error:")
    assert "correct counts are unknown at the budget of the pairing" in last
    assert "--min-count 2" in last


def test_summarize_of_a_summary_names_the_commands_that_read_it(tmp_path, capsys):
    f = _samples_file(tmp_path)
    out = tmp_path / "s.parquet"
    assert _run(capsys, "-q", "summarize", str(f), "--out", str(out))[0] == 0
    code, _, err = _run(capsys, "-q", "summarize", str(out))
    [line] = err.splitlines()
    assert code == 2 and line.startswith(f"leash summarize: error: {out} is already a "
                                         "per-question summary;")
    assert "`leash passk`" in line and "`leash support`" in line and "leash_eval" not in line
    code, text, _ = _run(capsys, "passk", str(out), "--k", "4", "-q")
    assert code == 0 and "toy" in text
    # a summary is Parquet: another extension is refused before anything is read
    code, _, err = _run(capsys, "-q", "summarize", str(f), "--out", str(tmp_path / "s.csv"))
    assert code == 2 and "--out must end in .parquet" in err
    assert not (tmp_path / "s.csv").exists()
    # its --help does not offer summaries as input (validate's, passk's and support's do)
    with pytest.raises(SystemExit):
        main(["summarize", "--help"])
    assert "summaries written by" not in capsys.readouterr().out


@pytest.mark.slow
def test_a_duplicate_names_its_key_not_options_the_user_never_gave(tmp_path, capsys):
    rec = {"model": "m", "benchmark": "b", "question_id": "1", "sample_idx": 0, "correct": True}
    f = tmp_path / "dup.jsonl"
    f.write_text((json.dumps(rec) + "\n") * 2)
    code, _, err = _run(capsys, "-q", "summarize", str(f))
    assert code == 2 and "(got model 'm', benchmark 'b', question_id '1', sample_idx 0)" in err
    assert "--model" not in err and "--benchmark" not in err


def test_budget_lists_and_thresholds_that_cannot_mean_anything(tmp_path, capsys):
    f = _samples_file(tmp_path)
    code, out, _ = _run(capsys, "-q", "passk", str(f), "--k", "4,1,4,2", "--json")
    assert code == 0 and [r["k"] for r in json.loads(out)] == [1, 2, 4] * 2  # once, ascending
    with pytest.raises(SystemExit) as e:  # argparse's own exit, one line
        main(["-q", "passk", str(f), "--k", "1,,2"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--k: must be a comma-separated list of integers" in err
    # more correct samples than the budget has: every question out of support, silently
    code, _, err = _run(capsys, "-q", "support", str(f), "--base", "base", "--rl", "rl",
                        "--min-count", "5")
    assert code == 2 and "--min-count 5 exceeds every question's budget (at most 4" in err


@pytest.mark.slow
@pytest.mark.parametrize("command", [["-m", "leash_eval.cli", "reproduce", "--list"],
                                     ["-m", "leash_eval.run.reproduce", "--list"]])
def test_a_reader_that_stops_reading_ends_the_command_quietly(command):
    """`leash reproduce --list | head -1` printed a BrokenPipeError traceback."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.readline()  # the reader takes one line and goes
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() in (0, 141) and "Traceback" not in err and "BrokenPipe" not in err, err
