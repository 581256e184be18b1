"""No markup from data reaches a page of the site (issue 35, class 2): a study whose every
label carries markup (model, pair, benchmark, title, name: `<script>`, `<img onerror>`,
`<svg onload>`, `](javascript:...)`) runs through `make reproduce DATA=` and `make site`; every
page is parsed (not grepped) and holds no element, attribute or link that came from a label.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

import numpy as np
import pytest

from leash_eval.run import reproduce, site

MARK = "pwned"  # in every payload: its text may show, slugged in file names too
# what only a payload holds (a slug has no parenthesis, colon or dot-invalid)
PAYLOAD = ("alert(", "javascript:", "example.invalid")
BASE = f'<script>alert("{MARK}-base")</script>'
RL = f'<img src=x onerror=alert("{MARK}-rl")>'
PAIR = f'[a pair](javascript:alert("{MARK}-pair"))'
BENCH = f'MATH<svg onload=alert("{MARK}-bench")>'
TITLE = (f'Title <img src=y onerror=alert("{MARK}-title")> [x](javascript:alert("{MARK}-t2")) '
         f'![i](http://example.invalid/{MARK}.png) <iframe src="javascript:{MARK}">')
NAME = f'n<script>alert("{MARK}-name")</script>'


class _Page(HTMLParser):
    """Every element and attribute of a page, and the text of its scripts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.bad, self._in_script = [], False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.bad.append(f"<{tag} {name}=...>")
            if name in ("href", "src", "action", "formaction", "xlink:href") and \
                    value.strip().lower().startswith(("javascript:", "vbscript:", "data:text")):
                self.bad.append(f"<{tag} {name}={value[:40]}>")
            if any(p in value for p in PAYLOAD):
                self.bad.append(f"<{tag} {name}> holds {value[:60]}")
        if tag in ("svg", "iframe", "object", "embed") or (tag == "img" and any(
                (v or "").startswith(("http:", "https:", "//")) for _, v in attrs)):
            self.bad.append(f"<{tag}> element")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and any(p in data for p in PAYLOAD):
            self.bad.append(f"script text {data[:60]}")


@pytest.mark.slow  # every notebook with a study parameter, then the site: a few minutes
def test_markup_in_every_label_reaches_no_page(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(3)
    n, questions = 16, 40
    p_base = rng.beta(0.5, 0.6, size=questions)
    c_base = rng.binomial(n, p_base)
    c_rl = rng.binomial(n, np.clip(p_base + 0.1, 0, 1))
    rows = [{"model": m, "benchmark": BENCH, "question_id": f"q{i}", "n": n, "c": int(c)}
            for m, cs in ((BASE, c_base), (RL, c_rl)) for i, c in enumerate(cs)]
    (tmp_path / "counts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    study = tmp_path / "hostile.yaml"
    study.write_text(
        f"name: {json.dumps(NAME)}\ntitle: {json.dumps(TITLE)}\nsimulated: true\n"
        f"benchmarks:\n  {json.dumps(BENCH)}: {{domain: math, budget: {n}}}\n"
        "sections:\n  support:\n    sources:\n      - path: counts.jsonl\n    pairs:\n"
        f"      - {{label: {json.dumps(PAIR)}, base: {json.dumps(BASE)}, "
        f"rl: {json.dumps(RL)}}}\n")
    build = tmp_path / "build"
    monkeypatch.setattr(reproduce, "BUILD", build)
    assert reproduce.main(["--data", str(study), "--build", str(tmp_path / "nb")]) == 0, \
        capsys.readouterr().err
    outdir = next(p for p in build.iterdir() if p.is_dir())
    runs = sorted(p.stem for p in (outdir / ".artifacts").glob("*.json"))
    assert runs
    out = tmp_path / "site"
    site.build_site(outdir, tmp_path / "nb", out, runs, title=f"Study {TITLE}",
                    paper_claims=False, api=False)
    pages = [p for p in sorted(out.rglob("*.html")) if "mathjax" not in p.parts]
    assert len(pages) >= len(runs) + 2
    seen = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        seen += text.count(MARK)
        parser = _Page()
        parser.feed(text)
        assert not parser.bad, (page.relative_to(out), parser.bad[:5])
    assert seen  # the labels are on the pages, as text
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in index or "&lt;img" in index


@pytest.mark.slow
def test_markup_in_outputs_tables_and_records_reaches_no_page(tmp_path):
    """The same without running notebooks (fast): hostile table cells, captions and
    descriptions, and notebook outputs (Markdown, HTML, JavaScript) with every payload."""
    import nbformat
    import pandas as pd

    from leash.output.report import artifact_record, save_table
    from leash_eval.run.index import write_records

    figs, nb = tmp_path / "figs", tmp_path / "nb"
    nb.mkdir()
    payloads = [BASE, RL, PAIR, BENCH, TITLE, NAME]
    table = pd.DataFrame({"model": payloads, "x": range(len(payloads))})
    rec = artifact_record("table1_h", save_table(table, "table1_h", figs, caption=TITLE),
                          description=f"Table 1: {PAIR} {RL}", inputs="data/studies/h.yaml")
    write_records(figs, "01_x.h", "01_x", {"study": "h"}, [rec])
    book = nbformat.v4.new_notebook()
    book.metadata["papermill"] = {"parameters": {"study": TITLE}}
    outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": f"**{p}**"})
               for p in payloads]
    outputs += [nbformat.v4.new_output("display_data", data={"text/html": table.to_html(
        escape=False)}), nbformat.v4.new_output("display_data", data={
            "application/javascript": f'alert("{MARK}-js")', "text/plain": "js"})]
    book.cells = [nbformat.v4.new_markdown_cell("# A notebook"),
                  nbformat.v4.new_code_cell("x", execution_count=1, outputs=outputs)]
    nbformat.write(book, str(nb / "01_x.h.ipynb"))
    out = tmp_path / "site"
    site.build_site(figs, nb, out, title=TITLE, paper_claims=False, api=False)
    for page in [p for p in sorted(out.rglob("*.html")) if "mathjax" not in p.parts]:
        parser = _Page()
        parser.feed(page.read_text(encoding="utf-8"))
        assert not parser.bad, (page.relative_to(out), parser.bad[:5])
    run = (out / "runs" / "01_x.h.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in run  # shown as written, not run
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror" in index and MARK in index


@pytest.mark.parametrize("label", [BASE, RL, PAIR, BENCH, TITLE, NAME,
                                   "Table 1 (the paper's printed numbers) $k$ [x] \\(y\\)"])
def test_a_label_shown_as_markdown_reads_as_written(label):
    """What the notebooks display (leash.artifacts.as_markdown): the text exactly, as
    JupyterLab's and nbconvert's Markdown render it; no element, no link, no math."""
    import html as _html

    from markdown_it import MarkdownIt
    from nbconvert.filters.markdown import markdown2html_mistune

    from leash.artifacts import as_markdown

    md = f"**{as_markdown(label)}**"
    for rendered in (MarkdownIt("commonmark").render(md), markdown2html_mistune(md)):
        parser = _Page()
        parser.feed(rendered)
        assert not parser.bad, rendered
        body = rendered.strip().removeprefix("<p><strong>").removesuffix("</strong></p>")
        assert _html.unescape(body) == label, rendered
