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


@pytest.mark.slow
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
    # ... but the .ipynb the site offers for download is that file
    offered = sorted(p.name for p in (out / "notebooks").glob("*.ipynb"))
    assert offered and all(f'href="notebooks/{n}" download' in index for n in offered)
    assert 'title="../data/README.md">the data</span>' in run  # a repository file: text
    # an exercise's solution is folded, its input and output inside
    folded = run.split('<details class="leash-solution">')[1].split("</details>")[0]
    assert "<summary>" in folded and "the solution" in folded and "Solution 1." in folded
    assert run.count('<details class="leash-solution">') == 1  # the other cells are not
    assert "data:image/png" not in folded


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_study_s_index_and_site_carry_its_title(tmp_path):
    """A `make reproduce DATA=` folder: the index is headed by the study's `title:` and no
    longer speaks of the paper's numbers beside the demo; the site's heading is that title
    (it was "Study <name>")."""
    from leash_eval.run.index import study_title

    (tmp_path / "s.yaml").write_text('name: mine\ntitle: "GRPO vs base <on> MATH500"\n')
    figs, build = tmp_path / "figs", tmp_path / "build"
    build.mkdir()
    fig = _figure()
    rec = artifact_record("figure1_mine", save_figure(fig, "figure1_mine", figs, data=False),
                          description="Figure 1: pass@k", inputs=str(tmp_path / "s.yaml"))
    plt.close(fig)
    write_records(figs, "01_x.mine", "01_x", {"study": str(tmp_path / "s.yaml")}, [rec])
    _executed(build / "01_x.mine.ipynb", "Table 1", {"study": str(tmp_path / "s.yaml")})
    index = write_index(artifact_index(figs), figs / "README.md",
                        title=study_title(tmp_path / "s.yaml")).read_text()
    assert index.startswith("# Artifacts: GRPO vs base <on> MATH500\n")
    assert "SIMULATED demo" not in index and "paper's printed numbers" not in index
    assert study_title(tmp_path / "s.yaml") == "GRPO vs base <on> MATH500"
    # a shipped study by its name, or by its path relative to the repository (as runs name it)
    assert study_title("demo") == study_title("data/studies/demo.yaml") \
        == "SIMULATED demo, not the paper's data"
    site.build_site(figs, build, tmp_path / "site", title=study_title(tmp_path / "s.yaml"),
                    paper_claims=False, api=False)
    page = (tmp_path / "site" / "index.html").read_text()
    assert "<h1>GRPO vs base &lt;on&gt; MATH500</h1>" in page and "Study mine" not in page


@pytest.mark.slow
def test_the_flips_page_shows_every_flips_table_whole(tmp_path):
    pytest.importorskip("jupyter_server_mathjax", reason="the site extra is not installed")
    figs, build = tmp_path / "figs", tmp_path / "build"
    build.mkdir()
    flips = pd.DataFrame({"question_id": [f"q{i}" for i in range(40)], "category": "E",
                          "base_c": 0, "rl_c": 5, "verdict": "expansion",
                          "rl_response": "<think>so | the answer is 5 <script>x</script>"})
    overview = pd.DataFrame({"pair": ["P"], "E": [40], "significant E": [40]})
    recs = [artifact_record(name, save_table(t, name, figs, caption=cap),
                            description=cap, **DEMO)
            for name, t, cap in (("flips_p_demo", flips, "The E and S questions of P"),
                                 ("flips_summary_demo", overview, "Flips overview"))]
    write_records(figs, "01_x.demo", "01_x", {"study": "demo"}, recs)
    _executed(build / "01_x.demo.ipynb", "Table 1", {"study": "demo"})
    site.build_site(figs, build, tmp_path / "site", api=False)
    out = tmp_path / "site"
    page = (out / "flips.html").read_text(encoding="utf-8")
    assert page.index("Flips overview") < page.index("The E and S questions of P")
    assert page.count("<tr>") == 1 + 1 + 1 + 40  # both tables whole: headers and every row
    # a cell with a pipe stays one cell; a response's markup is shown as text, never run
    assert "&lt;think&gt;so | the answer is 5 &lt;script&gt;x&lt;/script&gt;" in page
    assert "<script>" not in page and "<think>" not in page
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "<script>x" not in index and "&lt;think&gt;" in index  # the card's excerpt too
    assert 'href="flips.html"' in (out / "index.html").read_text(encoding="utf-8")
    assert not _check_links(out), _check_links(out)
    # without flips tables there is no such page, and no link to it
    study_out = tmp_path / "plain"
    write_records(figs, "01_x.demo", "01_x", {"study": "demo"}, [])
    site.build_site(figs, build, study_out, api=False)
    assert not (study_out / "flips.html").exists()
    assert "flips.html" not in (study_out / "index.html").read_text(encoding="utf-8")


def test_a_link_to_a_file_of_the_site_is_kept_one_to_a_notebook_elsewhere_goes_to_its_run(
        tmp_path):
    """The .ipynb the site offers for download (notebooks/<stem>.ipynb) is linked as that file,
    from the index and from the notebook's own run page; a notebook's link to another
    notebook's .md or .ipynb, which the site does not hold there, goes to that one's run page;
    a repository file becomes text."""
    root = tmp_path / "site"
    (root / "notebooks").mkdir(parents=True)
    (root / "runs").mkdir()
    (root / "notebooks" / "01_x.ipynb").write_text("{}")
    runs = {"01_x": "01_x.paper", "02_y": "02_y"}
    index = site._unlink_local('<a href="notebooks/01_x.ipynb" download>01_x.ipynb</a>',
                               root / "index.html", root, runs)
    assert index == '<a href="notebooks/01_x.ipynb" download>01_x.ipynb</a>'
    page = root / "runs" / "01_x.paper.html"
    own = '<a href="../notebooks/01_x.ipynb" download>01_x.ipynb</a>'
    assert site._unlink_local(own, page, root, runs) == own
    assert site._unlink_local('<a href="02_y.ipynb">next</a> <a href="02_y.md">again</a>',
                              page, root, runs) == \
        '<a href="02_y.html">next</a> <a href="02_y.html">again</a>'
    assert 'class="repo-path"' in site._unlink_local('<a href="../data/README.md">d</a>', page,
                                                      root, runs)

