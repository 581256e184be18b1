"""Tests of leash.output.report: byte-stable artifacts, their numbers, and the artifact index."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leash.output import report
from leash.output.report import artifact_record, save_figure, save_table
from leash.sources import demo
from leash.sources.demo import simulated_label
from leash_eval.run.index import artifact_index, sidecar_path, write_index, write_records

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _table():
    return pd.DataFrame({
        "Model": ["ProRL_1.5B", "50% model"],
        "SRR": [1 / 3, np.nan],
        "P": [1355, 5],
        "step": pd.array([0, None], dtype="Int64"),
    })


def _figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 4], [0.1, 0.25, 0.5], marker="o", label="base")
    ax.set_title("pass@k")
    ax.legend()
    return fig


def _digest(paths):
    return {k: hashlib.sha256(Path(p).read_bytes()).hexdigest() for k, p in paths.items()}


# ---------------------------------------------------------------------------------------------
# save_table
# ---------------------------------------------------------------------------------------------

def test_save_table_writes_three_files_with_fixed_formatting(tmp_path):
    paths = save_table(_table(), "t1", tmp_path, caption="Support 50% (simulated)",
                       float_format={"SRR": "{:.2f}"})
    assert set(paths) == {"csv", "md", "tex"}
    assert [p.name for p in paths.values()] == ["t1.csv", "t1.md", "t1.tex"]
    csv = paths["csv"].read_text()
    # the CSV keeps full precision, NA as an empty field
    assert csv.splitlines() == ["Model,SRR,P,step", f"ProRL_1.5B,{1 / 3!r},1355,0",
                                "50% model,,5,"]
    md = paths["md"].read_text()
    assert md.startswith("Table: Support 50% (simulated)\n\n")
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines()[2:]]
    assert rows[0] == ["Model", "SRR", "P", "step"]
    assert rows[2] == ["ProRL_1.5B", "0.33", "1355", "0"]
    assert rows[3] == ["50% model", "--", "5", "--"]
    sep = md.splitlines()[3].strip("|").split("|")  # alignment row
    assert sep[0].startswith(":") and all(c.endswith(":") for c in sep[1:])  # numbers right
    tex = paths["tex"].read_text()
    assert r"\caption{Support 50\% (simulated)}" in tex
    assert r"\label{tab:t1}" in tex
    assert r"ProRL\_1.5B & 0.33 & 1355 & 0 \\" in tex
    assert r"50\% model & -- & 5 & -- \\" in tex
    assert r"\begin{tabular}{lrrr}" in tex
    assert r"\toprule" in tex and r"\bottomrule" in tex


def test_save_table_is_byte_stable_with_lf_endings(tmp_path):
    first = _digest(save_table(_table(), "t", tmp_path))
    for p in tmp_path.glob("t.*"):
        assert b"\r" not in p.read_bytes()
        assert p.read_bytes().endswith(b"\n")
    assert _digest(save_table(_table(), "t", tmp_path)) == first


def test_save_table_default_format_and_index(tmp_path):
    df = pd.DataFrame({"x": [0.12345, 2.0]}, index=pd.Index(["a", "b"], name="bench"))
    paths = save_table(df, "t", tmp_path, index=True)
    assert paths["csv"].read_text().splitlines() == ["bench,x", "a,0.12345", "b,2.0"]
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in paths["md"].read_text().splitlines()]
    assert rows == [["bench", "x"], rows[1], ["a", "0.123"], ["b", "2.000"]]
    assert "bench" in paths["tex"].read_text()


@pytest.mark.parametrize("fmt, expected", [("%.1f", "0.3"), ("{:.1%}", "33.3%"),
                                           (lambda v: f"<{v:.0e}>", "<3e-01>")])
def test_save_table_float_format_kinds(tmp_path, fmt, expected):
    md = save_table(pd.DataFrame({"v": [1 / 3]}), "t", tmp_path, float_format=fmt)["md"]
    assert expected in md.read_text()


def test_save_table_markdown_escapes_pipes(tmp_path):
    md = save_table(pd.DataFrame({"a|b": ["x|y"]}), "t", tmp_path)["md"].read_text()
    assert r"a\|b" in md and r"x\|y" in md


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                max_size=8))
def test_save_table_csv_round_trips_and_md_shows_the_format(tmp_path_factory, values):
    out = tmp_path_factory.mktemp("t")
    df = pd.DataFrame({"v": values})
    paths = save_table(df, "t", out, float_format="{:.4f}")
    back = pd.read_csv(paths["csv"])
    np.testing.assert_array_equal(back["v"].to_numpy(), np.asarray(values))
    cells = [line.strip("|").strip() for line in paths["md"].read_text().splitlines()[2:]]
    assert cells == [f"{v:.4f}" for v in values]


def test_save_table_rejects_bad_input(tmp_path):
    with pytest.raises(TypeError, match="'df' parameter of save_table"):
        save_table([1, 2], "t", tmp_path)
    with pytest.raises(ValueError, match="'name' parameter of save_table.*'a/b'"):
        save_table(_table(), "a/b", tmp_path)
    with pytest.raises(ValueError, match="'name' parameter.*'t.csv.'"):
        save_table(_table(), "t.csv.", tmp_path)
    with pytest.raises(ValueError, match=r"columns that the table does not have: \['NDR'\]"):
        save_table(_table(), "t", tmp_path, float_format={"NDR": "{:.2f}"})
    with pytest.raises(TypeError, match="'float_format' parameter of save_table"):
        save_table(_table(), "t", tmp_path, float_format=3)
    with pytest.raises(TypeError, match="'caption' parameter"):
        save_table(_table(), "t", tmp_path, caption=1)
    dup = pd.DataFrame([[1, 2]], columns=["a", "a"])
    with pytest.raises(ValueError, match="duplicated columns"):
        save_table(dup, "t", tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="must be a folder"):
        save_table(_table(), "t", tmp_path / "file")


# ---------------------------------------------------------------------------------------------
# save_figure
# ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_save_figure_is_byte_stable(tmp_path):
    data = pd.DataFrame({"k": [1, 2, 4], "pass_at_k": [0.1, 0.25, 0.5]})
    fig = _figure()
    first = _digest(save_figure(fig, "f", tmp_path, data=data))
    assert set(first) == {"pdf", "png", "csv"}
    second = _digest(save_figure(fig, "f", tmp_path, data=data))
    assert first == second
    # a fresh but identical figure gives the same bytes too
    assert _digest(save_figure(_figure(), "f", tmp_path, data=data)) == first


def test_save_figure_metadata_has_no_timestamps(tmp_path):
    paths = save_figure(_figure(), "f", tmp_path, data=False)
    pdf = paths["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF")
    assert b"CreationDate" not in pdf and b"ModDate" not in pdf
    assert b"/Producer (leash \\(matplotlib\\))" in pdf
    png = paths["png"].read_bytes()
    assert png.startswith(b"\x89PNG") and b"Software" not in png
    # fixed dpi: the pHYs chunk stores pixels per metre = dpi / 0.0254
    i = png.index(b"pHYs")
    ppm = int.from_bytes(png[i + 4:i + 8], "big")
    assert ppm == round(report.DPI / 0.0254)


@pytest.mark.slow
def test_save_figure_csv_holds_exactly_the_data(tmp_path):
    data = pd.DataFrame({"model": ["base", "rlvr"], "k": [8192, 8192],
                         "pass_at_k": [0.1 + 0.2, 2 / 3]})
    paths = save_figure(_figure(), "f", tmp_path, data=data)
    back = pd.read_csv(paths["csv"])
    pd.testing.assert_frame_equal(back, data)
    # a meaningful index is kept as a column
    indexed = data.set_index("model")
    back = pd.read_csv(save_figure(_figure(), "g", tmp_path, data=indexed)["csv"])
    assert list(back.columns) == ["model", "k", "pass_at_k"]


def test_save_figure_requires_data(tmp_path):
    with pytest.raises(ValueError, match="data=False for a pure diagram"):
        save_figure(_figure(), "f", tmp_path)
    with pytest.raises(ValueError, match="empty"):
        save_figure(_figure(), "f", tmp_path, data=pd.DataFrame())
    with pytest.raises(TypeError, match="matplotlib Figure"):
        save_figure(plt.subplots()[1], "f", tmp_path, data=False)
    with pytest.raises(TypeError, match="'data' parameter of save_figure"):
        save_figure(_figure(), "f", tmp_path, data=[1, 2])
    assert not list(tmp_path.iterdir())


def test_save_figure_pure_diagram_removes_stale_csv(tmp_path):
    (tmp_path / "d.csv").write_text("old\n")
    paths = save_figure(_figure(), "d", tmp_path, data=False)
    assert set(paths) == {"pdf", "png"}
    assert not (tmp_path / "d.csv").exists()


@pytest.mark.slow
def test_save_figure_bytes_equal_across_processes(tmp_path):
    """A second interpreter (other hash seed) writes the same bytes."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import matplotlib
        matplotlib.use("Agg")
        import pandas as pd
        from test_report import _figure
        from leash.output.report import save_figure
        save_figure(_figure(), "f", sys.argv[1],
                    data=pd.DataFrame({{"k": [1, 2, 4], "y": [0.1, 0.25, 0.5]}}))
    """)
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "a")], check=True, env=env)
    here = save_figure(_figure(), "f", tmp_path / "b",
                       data=pd.DataFrame({"k": [1, 2, 4], "y": [0.1, 0.25, 0.5]}))
    for fmt in ("pdf", "png", "csv"):
        assert (tmp_path / "a" / f"f.{fmt}").read_bytes() == here[fmt].read_bytes(), fmt


# ---------------------------------------------------------------------------------------------
# simulated_label
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("Table 1", "Table 1 (simulated)"),
    ("Table 1  ", "Table 1 (simulated)"),
    ("Simulated pass@k", "Simulated pass@k"),
    ("pass@k (SIMULATED data)", "pass@k (SIMULATED data)"),
    ("", "simulated"),
    ("unsimulated", "unsimulated (simulated)"),  # a word, not a substring
])
def test_simulated_label(text, expected):
    assert simulated_label(text) == expected


@given(st.text())
def test_simulated_label_always_contains_the_word(text):
    out = simulated_label(text)
    assert demo._SIMULATED_RE.search(out)
    assert simulated_label(out) == out


def test_simulated_label_rejects_non_str():
    with pytest.raises(TypeError, match="'text' parameter of simulated_label"):
        simulated_label(None)


# ---------------------------------------------------------------------------------------------
# artifact_record, write_records, artifact_index, write_index
# ---------------------------------------------------------------------------------------------

def _saved(tmp_path, name="t"):
    return save_table(pd.DataFrame({"x": [1.0]}), name, tmp_path)


def _record(tmp_path, name, **kw):
    ok = {"inputs": ["data/paper/"], "description": "d"}
    return artifact_record(name, _saved(tmp_path, name), **{**ok, **kw})


def test_write_records_writes_a_sorted_deterministic_sidecar(tmp_path):
    records = [_record(tmp_path, "zz", description="last"),
               _record(tmp_path, "aa", inputs="data/paper/", description="first  \n line")]
    side = write_records(tmp_path, "01_nb.demo", "01_nb",
                         {"zeta": np.float64(0.05), "k": np.int64(4), "outdir": "x"}, records)
    assert side == sidecar_path(tmp_path, "01_nb.demo") == tmp_path / ".artifacts" / \
        "01_nb.demo.json"
    out = json.loads(side.read_text())
    assert [r["name"] for r in out] == ["aa", "zz"]
    assert out[0] == {"description": "first line", "files": ["aa.csv", "aa.md", "aa.tex"],
                      "inputs": ["data/paper/"], "name": "aa", "notebook": "01_nb",
                      "parameters": {"k": 4, "zeta": 0.05}}  # outdir is left out
    text = side.read_text()
    write_records(tmp_path, "01_nb.demo", "01_nb", {"k": 4, "zeta": 0.05},
                  list(reversed(records)))
    assert side.read_text() == text  # byte-identical


def test_artifact_record_and_records_carry_portable_paths(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    monkeypatch.setenv("LEASH_DATA_MIRROR", str(mirror))
    rec = _record(tmp_path, "t", inputs=[mirror / "sub" / "f.jsonl", "data/raw/y.parquet",
                                         "gsm8k-probe"])
    assert rec["inputs"] == ["$LEASH_DATA_MIRROR/sub/f.jsonl", "data/raw/y.parquet",
                             "gsm8k-probe"]
    side = write_records(tmp_path, "nb", "nb",
                         {"study": str(REPO_ROOT / "data" / "studies" / "x.yaml")}, [rec])
    assert json.loads(side.read_text())[0]["parameters"] == {"study": "data/studies/x.yaml"}
    rec = _record(tmp_path, "t", inputs=[Path(os.path.abspath(os.sep)) / "elsewhere" / "z.csv"])
    assert rec["inputs"] == ["z.csv"]  # no path of this machine


def test_artifact_record_rejects_bad_input(tmp_path):
    files = _saved(tmp_path)
    ok = {"inputs": [], "description": "d"}
    with pytest.raises(ValueError, match="do not exist"):
        artifact_record("t", [tmp_path / "nope.csv"], **ok)
    with pytest.raises(ValueError, match="is empty"):
        artifact_record("t", [], **ok)
    with pytest.raises(ValueError, match="'description' parameter"):
        artifact_record("t", files, **{**ok, "description": "  "})
    with pytest.raises(TypeError, match=r"'inputs' parameter of artifact_record .* Got "
                                        r"<object object at .*> \(item 0\) instead"):
        artifact_record("t", files, **{**ok, "inputs": [object()]})
    with pytest.raises(TypeError, match="Cannot record a value of type object") as info:
        report.portable({"a": [object()]})
    assert info.value.value.__class__ is object
    other = _saved(tmp_path / "other", "u")
    with pytest.raises(ValueError, match="lie in several folders"):
        artifact_record("t", [files["csv"], other["csv"]], **ok)


def test_artifact_index_rejects_a_name_written_by_two_runs(tmp_path):
    write_records(tmp_path, "01_a", "01_a", {}, [_record(tmp_path, "t")])
    write_records(tmp_path, "02_b.demo", "02_b", {}, [_record(tmp_path, "t")])
    with pytest.raises(ValueError, match="'t' is written by two notebook runs: 01_a and "
                                         "02_b.demo"):
        artifact_index(tmp_path)


def test_artifact_index_rejects_malformed_sidecar(tmp_path):
    side = tmp_path / ".artifacts"
    side.mkdir()
    (side / "x.json").write_text("[{\"name\": 1}]")
    with pytest.raises(ValueError, match="x.json, record 0: expected the keys"):
        artifact_index(tmp_path)
    (side / "x.json").write_text("{")
    with pytest.raises(ValueError, match="not valid JSON: line 1"):
        artifact_index(tmp_path)


def test_write_index_is_sorted_deterministic_and_lists_stray_files(tmp_path):
    ok = {"inputs": ["data/paper/"], "description": "what | it shows"}
    write_records(tmp_path, "02_b", "02_b", {"k": 256, "estimator": "first-k"},
                  [artifact_record("table2", _saved(tmp_path, "table2"), **ok)])
    write_records(tmp_path, "01_a", "01_a", {}, [artifact_record(
        "figure1", save_figure(_figure(), "figure1", tmp_path, data=False), **ok)])
    records = artifact_index(tmp_path)
    assert [r["name"] for r in records] == ["figure1", "table2"]
    index = write_index(records, tmp_path / "README.md")
    text = index.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows[0].startswith("| `figure1` | [figure1.pdf](figure1.pdf), [figure1.png]"
                              "(figure1.png) | `notebooks/01_a.md` | (defaults) |")
    assert "| estimator=first-k, k=256 | data/paper/ | what \\| it shows |" in rows[1]
    # with the notebooks' folder, each notebook links to its committed Markdown there, relative
    # to the index (a notebook not found there is named only)
    notebooks = tmp_path.parent / f"{tmp_path.name}-notebooks"
    notebooks.mkdir()
    (notebooks / "01_a.md").write_text("---\njupyter:\n---\n")
    linked = write_index(records, tmp_path / "README.md", notebooks).read_text()
    assert f"[`{notebooks.name}/01_a.md`](../{notebooks.name}/01_a.md)" in linked
    assert "`notebooks/02_b.md`" in linked and "(../" + notebooks.name + "/02_b.md)" not in linked
    index = write_index(records, tmp_path / "README.md")
    assert "Files without a record" not in text
    before = index.read_bytes()
    assert write_index(list(reversed(records)), tmp_path / "README.md").read_bytes() == before
    (tmp_path / "old.png").write_bytes(b"x")
    with pytest.warns(UserWarning, match="not registered by any notebook: old.png"):
        text = write_index(records, tmp_path / "README.md").read_text()
    assert text.endswith("## Files without a record\n\nNo notebook registered these files "
                         "(stale output of an earlier run?):\n\n- old.png\n")


def test_writes_are_atomic_and_keep_normal_permissions(tmp_path):
    paths = save_table(pd.DataFrame({"x": [1]}), "t", tmp_path)
    mode = paths["csv"].stat().st_mode & 0o777
    from leash.writing import _FILE_MODE

    assert mode == _FILE_MODE
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_save_table_grouped_headers_and_mixed_columns(tmp_path):
    cols = pd.MultiIndex.from_tuples([("", "Dataset"), ("pass@k", "Base"), ("pass@k", "Target")])
    df = pd.DataFrame([["AIME24", 63.333, 2 / 3], ["AMC23", 100.0, np.nan]], columns=cols)
    paths = save_table(df, "t3", tmp_path, float_format="{:.2f}")
    md = paths["md"].read_text().splitlines()
    assert [c.strip() for c in md[0].strip("|").split("|")] == ["Dataset", "pass@k / Base",
                                                                "pass@k / Target"]
    assert [c.strip() for c in md[3].strip("|").split("|")] == ["AMC23", "100.00", "--"]
    tex = paths["tex"].read_text()
    assert r"\multicolumn{2}{c}{pass@k}" in tex and r"AIME24 & 63.33 & 0.67 \\" in tex
    # an object column mixing text and numbers still gets the float format
    mixed = pd.DataFrame({"a": ["–", 0.12345]}, dtype=object)
    cells = save_table(mixed, "m", tmp_path)["md"].read_text().splitlines()[2:]
    assert [c.strip("| ").strip() for c in cells] == ["–", "0.123"]


def test_publisher_saves_tables_and_figures(tmp_path):
    pub = report.Publisher(tmp_path, inputs=["data/paper/"])
    files = pub(pd.DataFrame({"x": [0.5]}), "t", caption="c", float_format="{:.1f}",
                description="d")
    assert set(files) == {"csv", "md", "tex"} and "0.5" in files["md"].read_text()
    data = pd.DataFrame({"k": [1], "y": [0.5]})
    files = pub(_figure(), "f", data=data, description="d")
    assert set(files) == {"pdf", "png", "csv"}
    assert {p.parent for p in files.values()} == {tmp_path}
    assert not (tmp_path / ".artifacts").exists()  # records are the runner's job
    with pytest.raises(ValueError, match="pass data=<DataFrame>"):
        pub(_figure(), "g", description="d")
    with pytest.raises(ValueError, match="'caption' parameter of Publisher applies to tables "
                                         "only") as info:
        pub(_figure(), "g", data=data, caption="c", description="d")
    assert info.value.param == "caption"
    with pytest.raises(ValueError, match="'data' parameter of Publisher is for figures"):
        pub(pd.DataFrame({"x": [1]}), "g", data=data, description="d")
    assert not list(tmp_path.glob("g.*"))  # nothing of a refused call is written


def test_publisher_binds_the_source_suffix_and_inputs_once(tmp_path):
    from leash.artifacts import open_study

    paper = report.Publisher(tmp_path, "paper")
    assert paper.name("table1") == "table1" and paper.inputs == ["data/paper/"]
    demo_src = open_study("demo")
    pub = report.Publisher(tmp_path, demo_src)
    assert pub.source is demo_src and pub.name("table1") == "table1_demo"
    assert pub.inputs == ["data/studies/demo.yaml"]
    files = pub(pd.DataFrame({"x": [1]}), "table1", description="Table 1")
    assert files["csv"] == tmp_path / "table1_demo.csv"
    # a study given by name is opened as notebooks open it; an artifact may name other inputs
    assert report.Publisher(tmp_path, "demo").name("f") == "f_demo"
    files = pub(_figure(), "diagram", data=False, inputs="none", description="a diagram")
    assert set(files) == {"pdf", "png"} and files["pdf"].name == "diagram_demo.pdf"
    assert "demo" in repr(pub) and "data/studies/demo.yaml" in repr(pub)


def test_publisher_records_what_the_runner_reads(tmp_path, monkeypatch):
    shown = []
    monkeypatch.setattr(report, "_show_note", lambda record, outdir: shown.append(record))
    pub = report.Publisher(tmp_path, "demo", inputs=["a.jsonl", "b.jsonl"])
    pub(pd.DataFrame({"x": [1]}), "t", description="  one\n line  ")
    pub(pd.DataFrame({"x": [2]}), "u", inputs="c.jsonl", description="other input")
    assert shown == [
        {"name": "t_demo", "files": ["t_demo.csv", "t_demo.md", "t_demo.tex"],
         "inputs": ["a.jsonl", "b.jsonl"], "description": "one line"},
        {"name": "u_demo", "files": ["u_demo.csv", "u_demo.md", "u_demo.tex"],
         "inputs": ["c.jsonl"], "description": "other input"}]


def test_publisher_refuses_bad_input_naming_the_parameter(tmp_path):
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    with pytest.raises(ValueError, match=r"'outdir' parameter of Publisher must be a folder\. "
                                         r"Got the file .*f\.txt"):
        report.Publisher(a_file, "paper")
    with pytest.raises(TypeError, match=r"'outdir' parameter of Publisher must be a str or "
                                        r"path.*Got 3 instead"):
        report.Publisher(3, "paper")
    with pytest.raises(ValueError, match=r"'source' and 'inputs' parameters of Publisher are "
                                         r"both None") as info:
        report.Publisher(tmp_path)
    assert info.value.func == "Publisher"
    for bad in ([], "", [3], {"a": 1}):
        with pytest.raises(TypeError, match=r"'inputs' parameter of Publisher"):
            report.Publisher(tmp_path, inputs=bad)
    pub = report.Publisher(tmp_path, "paper")
    for name in ("sub/table1", "table1.pdf.", "", "-x"):
        with pytest.raises(ValueError, match=r"'name' parameter of Publisher must be a file stem"):
            pub(pd.DataFrame({"x": [1]}), name, description="d")
    with pytest.raises(TypeError, match=r"'name' parameter of Publisher must be a file stem.*"
                                        r"Got None instead"):
        pub(pd.DataFrame({"x": [1]}), None, description="d")
    with pytest.raises(ValueError, match=r"'description' parameter of Publisher must be a "
                                         r"non-empty str.*Got ' ' instead"):
        pub(pd.DataFrame({"x": [1]}), "t", description=" ")
    with pytest.raises(TypeError, match=r"'inputs' parameter of Publisher"):
        pub(pd.DataFrame({"x": [1]}), "t", inputs=[None], description="d")
    with pytest.raises(TypeError, match=r"'float_format' parameter of Publisher"):
        pub(pd.DataFrame({"x": [1.5]}), "t", float_format=3, description="d")
    with pytest.raises(TypeError, match=r"'obj' parameter of Publisher must be a pandas "
                                        r"DataFrame, a TableView or a matplotlib Figure"):
        pub([1, 2], "t", data=pd.DataFrame({"x": [1]}), description="d")
    assert not [p for p in tmp_path.iterdir() if p != a_file]  # nothing written
    # the outdir is created at the first save, not before
    later = tmp_path / "later" / "figures"
    pub = report.Publisher(later, inputs="none")
    assert not later.exists()
    pub(pd.DataFrame({"x": [1]}), "t", description="d")
    assert (later / "t.csv").is_file()


def test_an_empty_outdir_is_the_scratch_folder_never_figures():
    from leash.paths import FIGURES, SCRATCH

    assert report.resolve_outdir("") == SCRATCH != FIGURES
    assert report.resolve_outdir("figures") == FIGURES
    assert report.resolve_outdir("/abs/dir") == Path("/abs/dir")
