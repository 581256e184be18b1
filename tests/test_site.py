"""`make site` on a small fixture (no notebook is executed): links resolve inside the site,
nothing is loaded from the web, two builds give the same bytes, and the Markdown gallery of
figures/README.md shows the same artifacts. The browser check is tests/browser/test_site.py.
"""

import base64
import hashlib
import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import nbformat
import pandas as pd
import pytest

from leash.output.report import artifact_record, save_figure, save_table
from leash_eval.run import site
from leash_eval.run.gallery import source_of
from leash_eval.run.index import artifact_index, write_index, write_records

PAPER = {"inputs": "data/paper/"}
DEMO = {"inputs": "data/studies/demo.yaml"}
# src/href of what a page loads (script, stylesheet, image, icon): never from the web
LOADED = re.compile(r'<(?:script|img|link|iframe|source)\b[^>]*?\b(?:src|href)="([^"]*)"')
LOCAL = re.compile(r'<[a-zA-Z][^>]*?\b(?:src|href)="(?!https?:|mailto:|data:|javascript:|#)'
                   r'([^"]+)"')


def _figure():
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([1, 2], [1, 4])
    return fig


def _executed(path: Path, title: str, params: dict) -> None:
    fig = _figure()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    png = base64.b64encode(buf.getvalue()).decode()
    nb = nbformat.v4.new_notebook()
    nb.metadata["papermill"] = {"parameters": params}
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# {title}\n\nMath $p^k$; see [the data](../data/README.md)"
                                      " and [the next notebook](02_y.md), [again](02_y.ipynb)."),
        nbformat.v4.new_code_cell("1 + 1", execution_count=1, outputs=[
            nbformat.v4.new_output("display_data", data={"image/png": png,
                                                         "text/plain": "<Figure>"})]),
        nbformat.v4.new_code_cell("assert 1 + 1 == 2  # the solution", execution_count=2,
                                  metadata={"tags": ["solution"],
                                            "jupyter": {"source_hidden": True}},
                                  outputs=[nbformat.v4.new_output(
                                      "display_data",
                                      data={"text/markdown": "**Solution 1.** two"})]),
    ]
    nbformat.write(nb, str(path))


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """An output folder with three runs (a paper/demo pair and a run without a pair)."""
    root = tmp_path_factory.mktemp("study")
    figs, build = root / "figs", root / "build"
    build.mkdir()
    table = pd.DataFrame({"model": ["a", "b"], "SRR": [0.91, 0.85]})
    for run, study, suffix, src in (("01_x.paper", "paper", "", PAPER),
                                    ("01_x.demo", "demo", "_demo", DEMO)):
        fig = _figure()
        recs = [artifact_record(f"table1{suffix}", save_table(table, f"table1{suffix}", figs,
                                                              caption="Table 1"),
                                description="Table 1: support", **src),
                artifact_record(f"figure1{suffix}", save_figure(fig, f"figure1{suffix}", figs,
                                                                data=table),
                                description="Figure 1: pass@k", **src)]
        plt.close(fig)
        write_records(figs, run, "01_x", {"study": study}, recs)
        _executed(build / f"{run}.ipynb", "Table 1 and Figure 1", {"study": study})
    write_records(figs, "02_y", "02_y", {}, [])
    _executed(build / "02_y.ipynb", "A walkthrough", {})
    return figs, build, root


def _tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _pages(out: Path):
    return [p for p in sorted(out.rglob("*.html")) if "mathjax" not in p.parts]


def _check_links(out: Path) -> list:
    bad = []
    for page in _pages(out):
        text = page.read_text(encoding="utf-8")
        bad += [f"{page.relative_to(out)} loads {u}" for u in LOADED.findall(text)
                if u.startswith(("http:", "https:", "//"))]
        for href in LOCAL.findall(text):
            target = href.split("#")[0].split("?")[0]
            if not target or "${" in target:  # a template string of pdoc's search script
                continue
            resolved = (page.parent / target).resolve()
            if not resolved.is_relative_to(out.resolve()) or not resolved.is_file():
                bad.append(f"{page.relative_to(out)}: {href} does not resolve in the site")
    return bad


def test_the_site_is_offline_its_links_resolve_and_two_builds_are_identical(study, tmp_path):
    pytest.importorskip("jupyter_server_mathjax", reason="the site extra is not installed")
    figs, build, _ = study
    stats = site.build_site(figs, build, tmp_path / "a", api=False)
    assert stats["pages"] == 5  # index, data formats, three runs
    first = _tree(tmp_path / "a")
    site.build_site(figs, build, tmp_path / "b", api=False)
    assert first == _tree(tmp_path / "b"), "two builds differ"
    out = tmp_path / "a"
    assert not _check_links(out), _check_links(out)
    index = (out / "index.html").read_text(encoding="utf-8")
    # the pair side by side in one item, thumbnails, sources named, the runs linked
    item = index.split('id="figure1"')[1].split('class="item')[0]
    assert "thumbs/figure1.png" in item and "thumbs/figure1_demo.png" in item
    assert "paper" in item and "SIMULATED" in item
    assert 'href="runs/01_x.paper.html"' in index and 'href="runs/02_y.html"' in index
    assert "Figures 2 and 3" in index  # the paper route ran: what it cannot regenerate
    run = (out / "runs" / "01_x.paper.html").read_text(encoding="utf-8")
    assert 'src="../mathjax/MathJax.js' in run and "data:image/png;base64" in run
    # a link to a notebook, its committed Markdown or its .ipynb, goes to its run
    assert run.count('href="02_y.html"') == 2
    assert 'title="../data/README.md">the data</span>' in run  # a repository file: text
    # an exercise's solution is folded, its input and output inside
    folded = run.split('<details class="leash-solution">')[1].split("</details>")[0]
    assert "<summary>" in folded and "the solution" in folded and "Solution 1." in folded
    assert run.count('<details class="leash-solution">') == 1  # the other cells are not
    assert "data:image/png" not in folded


def test_the_api_reference_is_offline(tmp_path):
    pytest.importorskip("pdoc", reason="the site extra is not installed")
    site._api(tmp_path)
    assert (tmp_path / "api" / "leash.html").is_file()
    assert (tmp_path / "api" / "leash" / "run" / "explore.html").is_file()
    assert (tmp_path / "api" / "leash_eval" / "run" / "site.html").is_file()
    assert not _check_links(tmp_path), _check_links(tmp_path)[:5]


def test_the_site_goes_under_build_only(capsys):
    assert site.main(["--out", "/tmp/elsewhere"]) == 2
    assert "under build/" in capsys.readouterr().err


def test_the_gallery_shows_images_tables_and_pairs(study):
    figs, _, _ = study
    text = write_index(artifact_index(figs), figs / "README.md").read_text(encoding="utf-8")
    assert "| the paper's printed numbers | the SIMULATED demo (not the paper's data) |" in text
    assert "![Figure 1: pass@k](figure1.png) | ![Figure 1: pass@k](figure1_demo.png) |" in text
    assert "| model   |   SRR |" in text  # the .md table itself
    assert text.index("## Gallery") < text.index("## Index")
    assert source_of({"inputs": ["none"]})[0] == "diagram"
    assert source_of({"inputs": ["data/studies/gsm8k-probe.yaml"]})[0] == "study"


def test_a_widget_view_is_shown_in_its_static_form_and_says_where_it_runs():
    # nbconvert's page would load the widget manager from a CDN for a widget view: the site
    # shows the output's other forms (the explorer's PNG) and one line on where it runs live
    import nbformat

    from leash_eval.run.site import _without_widgets

    nb = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}})
    out = nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2},
        "image/png": "iVBORw0KGgo=", "text/plain": "App(...)"})
    nb.cells.append(nbformat.v4.new_code_cell("app", outputs=[out]))
    nb = _without_widgets(nb)
    assert "widgets" not in nb.metadata
    note, shown = nb.cells[0]["outputs"]
    assert "make explore" in note["data"]["text/markdown"]
    assert "application/vnd.jupyter.widget-view+json" not in shown["data"]
    assert shown["data"]["image/png"] == "iVBORw0KGgo="
