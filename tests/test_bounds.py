"""Nothing unbounded, nothing odd said nothing about: one YAML loader for every YAML the project
reads (no anchors or aliases, no duplicate keys, a size cap), the 64-bit range for integer
options and notebook parameters, empty ``--out`` and ``--model`` named as options, devices and
symlink loops named as what they are, and ``--list`` showing the check's verdict.
"""

from __future__ import annotations

import os

import pytest

from _support import raises_with
from leash import config as C
from leash_eval import formats as F
from leash_eval import manifest as mf
from leash_eval.cli import main as leash_main
from leash_eval.cli import main_simulate
from leash_eval.run.reproduce import main as reproduce_main

ALIAS_CHAIN = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n"


def one_line(capsys, code, want=2) -> str:
    out, err = capsys.readouterr()
    assert code == want, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_every_yaml_refuses_anchors_and_duplicate_keys(tmp_path, capsys):
    # -f parameter file: an alias chain refused before anything is expanded
    f = tmp_path / "p.yaml"
    f.write_text(ALIAS_CHAIN)
    line = one_line(capsys, reproduce_main(["--list", "-f", str(f)]))
    assert "-f" in line and "anchor &a" in line and "line 1" in line
    # -p value
    line = one_line(capsys, reproduce_main(["--list", "-p", "seed", "&a 3"]))
    assert "-p seed" in line and "anchor &a" in line
    # a field mapping file with a key twice
    m = tmp_path / "map.yaml"
    m.write_text("correct: score\nquestion_id: idx\ncorrect: ok\n")
    with raises_with(file=m, line=3, text="duplicate key `correct`"):
        F.get_mapping(str(m))
    # the manifest
    man = tmp_path / "manifest.yaml"
    man.write_text("x: &x 1\ndatasets: {}\n")
    with raises_with(file=man, line=1, text="anchor &x"):
        mf.load_manifest(man)


@pytest.mark.slow
def test_a_huge_yaml_list_is_refused_before_it_is_parsed(tmp_path):
    """A 2-4 MB YAML list of 10^6 items did not finish loading in 180 s: the loader refuses it
    by its size, and one under the size cap by its count of values (no timing here: the
    refusals are what bound the time)."""
    s = tmp_path / "s.yaml"
    s.write_text("name: t\nsections: [" + ", ".join(["1"] * 1_000_000) + "]\n")
    with raises_with(file=s, text="too large"):
        C.load_yaml(s, "study file s.yaml", kind="study file")
    big = tmp_path / "b.yaml"
    big.write_text("x: [" + ", ".join(["1"] * 60_000) + "]\n")  # under 1 MiB, many values
    with raises_with(file=big, text="more than 50,000 YAML values"):
        C.load_yaml(big, "study file b.yaml", kind="study file")


def test_devices_fifos_and_symlink_loops_are_named(tmp_path, capsys):
    line = one_line(capsys, main_simulate(["--config", "/dev/zero", "--out",
                                           str(tmp_path / "d")]))
    assert "/dev/zero is a character device, not a file" in line
    loop = tmp_path / "loop.yaml"
    os.symlink(loop, loop)
    with raises_with(file=loop, text="symbolic link loop"):
        C.load_yaml(loop, "study file loop.yaml")
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with raises_with(file=fifo, text="is a FIFO"):
        C.load_yaml(fifo, "study file fifo.yaml")


@pytest.mark.parametrize("argv, option", [
    (["--step", "99999999999999999999"], "--step"),
    (["--model", ""], "--model"),
    (["--benchmark", " "], "--benchmark"),
])
def test_bad_options_name_the_option(tmp_path, capsys, argv, option):
    f = tmp_path / "g.jsonl"
    f.write_text('{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 0, '
                 '"correct": true}\n')
    with pytest.raises(SystemExit) as info:
        leash_main(["summarize", str(f), *argv])
    line = one_line(capsys, info.value.code)
    assert f"argument {option}:" in line


def test_empty_out_is_refused(tmp_path, capsys):
    f = tmp_path / "g.jsonl"
    f.write_text('{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 0, '
                 '"correct": true}\n')
    line = one_line(capsys, leash_main(["summarize", str(f), "--out", ""]))
    assert "--out" in line and "Got ''" in line


def test_notebook_integers_beyond_int64_are_refused_and_list_says_so(capsys):
    huge = "99999999999999999999999"
    code = reproduce_main(["--list", "--only", "01", "-p", "n_boot", huge])
    out, _ = capsys.readouterr()
    assert code == 0
    assert [line for line in out.splitlines() if "n_boot" in line and
            "(set; refused:" in line and "64-bit" in line]
    line = one_line(capsys, reproduce_main(["--only", "01", "-p", "n_boot", huge,
                                            "--outdir", "/nonexistent-leash-test"]))
    assert "n_boot" in line and "64-bit integer range" in line


def test_epsilon_above_one_is_a_warning_saying_what_it_means():
    from leash.core.support import epsilon

    with pytest.warns(UserWarning, match=r"above 1 .*bounds nothing.*cannot rule out") as w:
        assert epsilon(1) == pytest.approx(2.995732273553991)
    assert w[0].message.param == "zeta"
    with pytest.warns(UserWarning, match="above 1"):
        epsilon(8, 5e-324)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        epsilon(8192)  # the paper's: no warning


@pytest.mark.parametrize("encoding, name", [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"),
                                            ("utf-32", "UTF-32"), ("utf-32-be", "UTF-32")])
@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_utf16_and_utf32_files_are_named(tmp_path, encoding, name, suffix):
    from leash_eval.summarize import summarize

    f = tmp_path / f"g{suffix}"
    text = ('{"model": "m", "benchmark": "b", "question_id": "q", "sample_idx": 0, '
            '"correct": true}\n' if suffix == ".jsonl" else
            "model,benchmark,question_id,sample_idx,correct\nm,b,q,0,true\n")
    f.write_bytes(text.encode(encoding))
    with raises_with(file=f, line=1, value=name, text="leash reads UTF-8"):
        summarize(f)


@pytest.mark.parametrize("prompt", ["{0}{question}", "Q: {question} }", "{question} {answer}"])
def test_a_prompt_that_cannot_be_formatted_is_refused_before_the_model(prompt):
    from leash_eval.generate.sampling import check_settings

    with raises_with(param="prompt", value=prompt, constraint="as str.format takes it"):
        check_settings(k=1, temperature=1.0, top_p=1.0, max_tokens=5, seed=0, flush_every=1,
                       prompt=prompt)
    check_settings(k=1, temperature=1.0, top_p=1.0, max_tokens=5, seed=0, flush_every=1,
                   prompt="Q: {question} {{not a field}}")
