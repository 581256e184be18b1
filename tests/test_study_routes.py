"""The analyst's two held-out routes, from `leash study init` to the site, with no hand edit and
no option a message did not name:

* a counts CSV (MATH500-like, 128 samples per question, model names that tell base from RLVR):
  `study init` with no option; the notebooks draw the pass@k curves with the unbiased
  estimator (named), the sensitivity sweep, and the explorer on the counts;
* two result files that name neither model nor benchmark (`{id: verdict}` JSON, k = 1) and a
  folder of ten checkpoints evaluated on 20 of the 233 questions: `study init --label ...
  --benchmark`, then `make site DATA=` (the site's heading the study's title).

Both slow: every notebook with a `study` parameter runs.
"""

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from leash_eval.cli import main
from leash_eval.run import reproduce, site
from leash_eval.run.study_check import check_study


@pytest.fixture
def cached(monkeypatch, tmp_path):
    """study init's summary cache under tmp_path, not the repository's build/."""
    import leash.paths
    import leash_eval.study_init as init_mod

    monkeypatch.setattr(init_mod, "study_folder",
                        lambda name: tmp_path / "cache" / leash.paths.slug(name))


def _ok(capsys, *argv) -> str:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 0, err
    return err


@pytest.mark.slow
def test_a_counts_csv_goes_from_init_to_curves_sweep_and_explorer(tmp_path, capsys, cached,
                                                                  monkeypatch):
    rng = np.random.default_rng(11)
    p = rng.beta(0.5, 0.5, 500)
    rows = [{"model": m, "benchmark": "MATH500", "question_id": f"test/{i}.json", "n": 128,
             "c": int(c)} for m, lift in (("qwen-base", 0.0), ("qwen-grpo", 0.15))
            for i, c in enumerate(rng.binomial(128, np.clip(p + lift, 0, 1)))]
    pd.DataFrame(rows).to_csv(tmp_path / "counts.csv", index=False)
    study = tmp_path / "route-counts-test.yaml"
    _ok(capsys, "study", "init", str(tmp_path / "counts.csv"), "--out", str(study), "-q")
    assert check_study(study).ok
    figs, nb = tmp_path / "figs", tmp_path / "nb"
    code = reproduce.main(["--data", str(study), "--only", "02", "10", "12", "--outdir",
                           str(figs), "--build", str(nb)])
    err = capsys.readouterr().err
    assert code == 0 and "3 ok" in err, err
    curves = pd.read_csv(figs / "figure_passk_curves_route-counts-test.csv")
    assert set(curves["estimator"]) == {"unbiased"} and curves["k"].max() == 128
    assert sorted(set(curves["k"])) == [1, 2, 4, 8, 16, 32, 64, 128]
    import nbformat

    explore = nbformat.read(str(nb / "12_explore.route-counts-test.ipynb"), as_version=4)
    outputs = [o for c in explore.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the explorer's figure


@pytest.mark.slow
def test_two_unnamed_result_files_and_a_checkpoint_folder_go_to_the_site(tmp_path, capsys,
                                                                         cached, monkeypatch):
    rng = np.random.default_rng(12)
    ids = [f"q{i}" for i in range(233)]
    d = tmp_path / "results"
    (d / "ckpts").mkdir(parents=True)
    for name, p, qs in [("base.json", 0.5, ids), ("rl.json", 0.6, ids),
                        *[(f"ckpts/step_{s}.json", 0.55, ids[:20]) for s in range(100, 1001,
                                                                                    100)]]:
        (d / name).write_text(json.dumps({q: bool(rng.random() < p) for q in qs}, indent=2))
    study = tmp_path / "route-unnamed-test.yaml"
    # the first try names what is missing, in one line
    code = main(["study", "init", str(d / "base.json"), str(d / "rl.json"), "--label",
                 f"rl={d / 'ckpts'}", "--out", str(study), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "--benchmark BENCHMARK" in err
    _ok(capsys, "study", "init", str(d / "base.json"), str(d / "rl.json"), "--label",
        f"rl={d / 'ckpts'}", "--benchmark", "gsm8k", "--out", str(study), "-q")
    raw = yaml.safe_load(study.read_text())
    assert raw["sections"]["checkpoints"]["pairs"][0]["shared_only"] is True
    assert check_study(study).ok
    build = tmp_path / "build"
    monkeypatch.setattr(reproduce, "BUILD", build)
    monkeypatch.setattr(site, "BUILD", build)
    assert site.main(["--data", str(study)]) == 0, capsys.readouterr().err
    err = capsys.readouterr().err
    assert "0 failed" in err, err
    index = (build / "site-route-unnamed-test" / "index.html").read_text()
    title = "rl vs base on gsm8k"
    assert f"<h1>{title}</h1>" in index and "Study route-unnamed-test" not in index
    readme = (build / "route-unnamed-test" / "README.md").read_text()
    assert readme.startswith(f"# Artifacts: {title}\n") and "SIMULATED demo" not in readme
    for stem in ("table1", "figure_passk_curves", "table4", "sensitivity_sweep"):
        assert re.search(f"{stem}_route-unnamed-test", index), stem
    t4 = pd.read_csv(build / "route-unnamed-test" / "table4_route-unnamed-test.csv")
    assert set(t4["N"]) == {20} and len(t4) == 10  # each checkpoint on its 20 questions
    sweep = pd.read_csv(build / "route-unnamed-test" / "sensitivity_sweep_route-unnamed-test.csv")
    assert set(sweep["min_count"]) == {1}  # k = 1: no impossible threshold printed
