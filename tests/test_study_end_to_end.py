"""Any study runs end to end: a one-benchmark, counts-only study through `make reproduce DATA=`.

The study is made here from simulated counts (n and c per question, nothing else: no
first_correct, no answers, no entropies). Every notebook that declares `study` runs on it; each
either writes its artifacts or skips with a one-line reason naming what is missing; none fails.
Table 1 and the appendix table hold the P/E/S/O counted by hand from the same counts, and the
committed figures/ are untouched (the study's artifacts go to its own folder with its own index).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _support import FIGURES, folder_digest
from leash_eval.run import reproduce


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    d = tmp_path_factory.mktemp("study")
    rng = np.random.default_rng(7)
    n = 16
    p_base = rng.beta(0.4, 0.6, size=60)
    p_rl = np.clip(p_base + rng.normal(0.05, 0.1, size=60), 0, 1) * (rng.random(60) > 0.05)
    c_base, c_rl = rng.binomial(n, p_base), rng.binomial(n, p_rl)
    rows = [{"model": m, "benchmark": "MATH500", "question_id": f"q{i}", "n": n, "c": int(c)}
            for m, cs in (("my-base", c_base), ("my-rlvr", c_rl)) for i, c in enumerate(cs)]
    (d / "counts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "one-benchmark.yaml").write_text(
        "name: one-benchmark\n"
        'title: "One benchmark, counts only (simulated counts, test)"\n'
        "simulated: true\n"
        "benchmarks:\n  MATH500: {domain: math, budget: 16}\n"
        "sections:\n  support:\n    sources:\n      - path: counts.jsonl\n"
        "    pairs:\n      - {label: my pair, base: my-base, rl: my-rlvr}\n")
    fb, fr = c_base >= 1, c_rl >= 1
    hand = {"P": int(np.sum(fb & fr)), "E": int(np.sum(~fb & fr)), "S": int(np.sum(fb & ~fr)),
            "O": int(np.sum(~fb & ~fr))}
    return d / "one-benchmark.yaml", hand


@pytest.mark.slow  # every notebook with a study parameter: about 30 s
def test_one_benchmark_counts_only_study_runs_through_make_reproduce(study, tmp_path,
                                                                       monkeypatch, capsys):
    path, hand = study
    before = folder_digest(FIGURES)
    monkeypatch.setattr(reproduce, "BUILD", tmp_path / "build")  # where DATA=... writes
    assert reproduce.main(["--data", str(path), "--build", str(tmp_path / "nb")]) == 0
    err = capsys.readouterr().err
    out = tmp_path / "build" / "one-benchmark"
    assert "0 failed" in err, err
    skipped = [ln for ln in err.splitlines() if ln.startswith("  skipped ")]
    for line in skipped:  # one line each, naming what the study lacks
        assert "has no data for this artifact" in line, line
    t1 = pd.read_csv(out / "table1_one-benchmark.csv")
    assert t1[["Model", "Domain", "P", "E", "S", "O"]].to_dict("records") == [
        {"Model": "my pair", "Domain": "Math (MATH500 only)", **hand}]
    caption = (out / "table1_one-benchmark.md").read_text().splitlines()[0]
    assert "one benchmark only" in caption and "pooling needs at least two" in caption
    app = pd.read_csv(out / "table_support_my-pair_one-benchmark.csv")
    assert app.iloc[0][["P", "E", "S", "O"]].astype(int).to_dict() == hand
    index = (out / "README.md").read_text()
    assert "table1_one-benchmark" in index
    assert folder_digest(FIGURES) == before  # the committed figures/ are untouched


@pytest.mark.slow
def test_study_runs_and_outdir_defaults(study, monkeypatch):
    path, _ = study
    runs = reproduce.study_runs(str(path))
    names = {r.name for r in runs}
    assert "01_table1_support.one-benchmark" in names
    assert not {n for n in names if n.startswith(("00_", "08_", "09_"))}  # no study parameter
    seen = {}
    monkeypatch.setattr(reproduce, "run_all", lambda runs, **kw: seen.update(kw) or [])
    assert reproduce.main(["--data", str(path), "--only", "01"]) == 0
    assert seen["outdir"] == reproduce.BUILD / "one-benchmark"
    assert reproduce.main(["--only", "01"]) == 0
    assert seen["outdir"] == reproduce.FIGURES  # the default run, and only it
    assert reproduce.main(["--only", "01", "-p", "zeta", "0.01"]) == 0
    assert seen["outdir"] == reproduce.SCRATCH  # parameters set: not the committed figures
    assert reproduce.main(["--data", str(path), "--only", "01", "-p", "zeta", "0.01"]) == 0
    assert seen["outdir"] == reproduce.SCRATCH  # nor the study's own artifacts


def test_parameters_on_the_command_line_are_checked_before_any_kernel(tmp_path, capsys):
    assert reproduce.main(["--only", "01", "-p", "zetta", "0.01", "--list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("leash reproduce: -p zetta: ") and err.count("\n") == 1
    assert "'zetta'" in err and "Did you mean 'zeta'?" in err  # the option, the value, the fix
    assert "Their parameters: " in err and " n_boot, " in err
    assert reproduce.main(["--only", "01", "-p", "zeta", "2", "--outdir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(
        "leash reproduce: Notebook 01_table1_support: parameter 'zeta' = 2 breaks the rule for "
        "'zeta': it must be a float in the open interval (0, 1).")
    f = tmp_path / "p.yaml"
    f.write_text("- zeta\n")
    assert reproduce.main(["--only", "01", "-f", str(f), "--list"]) == 2
    assert "must be a mapping of parameter names to values" in capsys.readouterr().err
    f.write_text("zeta: 0.01\nn_boot: 0\n")
    assert reproduce.main(["--only", "01", "-f", str(f), "-p", "seed", "3", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "01_table1_support.paper" in listing and "01_table1_support.demo" in listing
    assert "zeta: float = 0.01 (set)" in listing and "seed: int = 3 (set)" in listing
