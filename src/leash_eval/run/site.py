"""``make site``: every result of the last ``make reproduce`` as an offline static site.

``python -m leash_eval.run.site [--data embedded|STUDY] [--out DIR]``

Reads what ``make reproduce`` left (running it first when its executed notebooks are absent):
the artifact records and files of its output folder (``figures/``, or ``build/<study>/`` for
``--data STUDY``) and the executed notebooks of its runs (``build/<run>.ipynb``, or
``build/<study>/.executed/<run>.ipynb``: :func:`leash_eval.run.reproduce.executed_folder`), and
writes
``build/site/`` (``build/site-<study>/`` for a study):

* ``index.html``: the paper's claims, every artifact as a card (thumbnail or table excerpt,
  caption, the data it comes from), grouped by notebook with paper and demo side by side
  (:func:`leash_eval.run.gallery.groups`), the audit's findings, what is not regenerated and why,
  and the runs;
* ``runs/<run>.html``: each executed notebook (nbconvert's lab template without require.js or
  mermaid, MathJax 2.7 from ``mathjax/``, copied from the jupyter-server-mathjax package);
* ``flips.html``, when the runs wrote per-question tests (notebook 01 on per-question data):
  every ``flips_*`` table whole (the E and S questions of each pair, their tests, verdicts and
  answers) and the measured null (``support_null*``) beside them;
* ``api/``: the API reference of ``leash`` (pdoc, numpydoc docstrings, no math, no search
  index fetched from anywhere); ``data-formats.html``: ``data/README.md``;
* ``files/``, ``thumbs/``: the artifacts' files and PNG thumbnails;
* ``notebooks/<stem>.ipynb``: every notebook without outputs, its first cell installing leash
  where it is missing, to download or open in Colab (:mod:`leash_eval.run.launch`; the index
  and each run page link them, with the Binder link of the walkthrough).

Nothing is loaded from the network, links to repository files outside the site become plain
text, and the same inputs give the same bytes (sorted everything, no timestamps). The site
folder is replaced as a whole; only folders under ``build/`` are accepted.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import sys
import time
import warnings
from pathlib import Path

from leash import notebook_files
from leash.paths import BUILD, DATA, FIGURES, NOTEBOOKS, shown
from leash.writing import replacing_folder, write_bytes
from leash_eval.argparsing import OneLineParser
from leash_eval.run import launch
from leash_eval.run.gallery import groups, notebook_title, source_of, table_markdown
from leash_eval.run.index import INDEX_NAME, SIDECAR_DIR, artifact_index, study_title

__all__ = ["CLAIMS", "NOT_REGENERATED", "TEMPLATES", "build_site", "main", "site_folder"]

TEMPLATES = Path(__file__).with_name("site_templates")
#: What the paper claims, in three lines (the top of the index of the default site).
CLAIMS = (
    "RLVR mostly sharpens what the base model can already do: it raises the probability of "
    "answers inside the base model's empirical support far more often than it finds new ones.",
    "Support shrinks more than it expands: at large sampling budgets the RLVR model misses "
    "correct answers the base model finds, so its pass@k falls below the base's.",
    "Token-level entropy can rise while answer-level entropy falls: RLVR makes the model "
    "converge on fewer distinct final answers even when its tokens look more varied.",
)
#: Paper artifacts the paper route cannot regenerate, and why (shown when the paper ran).
NOT_REGENERATED = (
    ("Figures 2 and 3 (the paper's printed numbers)",
     "their values could not be decoded from the figures (the PDF prints no values for them; "
     "see data/paper/README.md). Figure 4's series, decoded from the PDF's text layer, are "
     "approximate; the SIMULATED demo run draws all three."),
)
THUMB = (560, 420)  # largest thumbnail, pixels
EXCERPT_ROWS = 6
_SKIP_MARK = "**Skipped:** "
_LOCAL = re.compile(r'<a ([^>]*?)href="(?!https?:|mailto:|#|data:)([^"]*)"([^>]*)>(.*?)</a>',
                    re.S)


def site_folder(data: str = "embedded") -> Path:
    """``build/site/`` for the default run, ``build/site-<study>/`` for a study."""
    from leash_eval.run.reproduce import EMBEDDED, Run

    if data == EMBEDDED:
        return BUILD / "site"
    return BUILD / f"site-{Run('x', {'study': data}).label}"


def _markdown():
    """Markdown of data (a table's cells hold labels from model and study files) as HTML that
    shows it as written: raw HTML escaped, and no link or image (a label's ``](javascript:``
    or ``![](http://...)`` is text).
    """
    from markdown_it import MarkdownIt

    return (MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
            .disable(["link", "image", "autolink"]))


def _repository_markdown():
    """Markdown of the repository's own pages (data/README.md), its HTML kept."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": html}).enable(["table", "strikethrough"])


# What a notebook output may keep on a run page (pandas' tables, Markdown, images inline):
# outputs hold labels from data, and Markdown passes HTML through. bleach, as nbconvert's own
# sanitizer (whose list keeps no headings, paragraphs or table heads).
_OUTPUT_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "del", "div", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "img", "li", "ol", "p", "pre", "small", "span",
    "strong", "style", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
    "ul"})
_OUTPUT_ATTRIBUTES = ("class", "id", "style", "title", "align", "border", "colspan", "rowspan",
                      "valign", "alt", "width", "height")


def _output_attribute(tag: str, name: str, value: str) -> bool:
    if name in _OUTPUT_ATTRIBUTES:
        return True
    if tag == "a" and name == "href":  # bleach checks the protocol (http, https, mailto)
        return True
    return tag == "img" and name == "src" and value.startswith("data:image/") and \
        not value.startswith("data:image/svg")


def _clean_output(text) -> str:
    """A notebook output's HTML with only :data:`_OUTPUT_TAGS` and safe attributes (no script,
    no event handler, no javascript: link, no image from outside the page); any other tag is
    escaped, so that a label is shown as it was written.
    """
    import bleach
    from bleach.css_sanitizer import CSSSanitizer

    return bleach.clean(str(text), tags=_OUTPUT_TAGS, attributes=_output_attribute,
                        protocols=["http", "https", "mailto"], strip=False,
                        strip_comments=True, css_sanitizer=CSSSanitizer())


def _write(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def _unlink_local(text: str, page: Path, root: Path, notebooks: dict) -> str:
    """Local links of a page that do not resolve inside the site: a notebook (its committed
    ``.md``, or its ``.ipynb``) to its run page, anything else (a repository file) to plain text.
    A link to a file of the site (the ``.ipynb`` it offers for download) is kept.
    """
    def fix(m):
        before, href, after, label = m.groups()
        target, _, anchor = href.partition("#")
        if not target:
            return m.group(0)
        if (page.parent / target).resolve().is_relative_to(root.resolve()) \
                and (page.parent / target).is_file():
            return m.group(0)
        name = Path(target).name
        stem = name.rsplit(".", 1)[0]
        if name.endswith((".md", ".ipynb")) and stem in notebooks:
            rel = os.path.relpath(root / "runs" / f"{notebooks[stem]}.html", page.parent)
            return f'<a {before}href="{rel}"{after}>{label}</a>'
        return f'<span class="repo-path" title="{html.escape(target)}">{label}</span>'
    return _LOCAL.sub(fix, text)


def _thumbnail(src: Path, dest: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(src) as im:
        im = im.convert("RGB")
        im.thumbnail(THUMB, Image.Resampling.LANCZOS)
        buf = io.BytesIO()
        im.save(buf, format="PNG", optimize=True)
        size = im.size
    write_bytes(dest, buf.getvalue())
    return size


def _favicon(dest: Path) -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (9, 105, 218)).save(buf, format="ICO")
    write_bytes(dest, buf.getvalue())


def _excerpt(md_path: Path, rows: int = EXCERPT_ROWS):
    """``(caption, html, shown, total)`` of the first rows of a ``.md`` table."""
    from markupsafe import Markup

    caption, table = table_markdown(md_path)
    lines = table.splitlines()
    total = max(0, len(lines) - 2)
    head = "\n".join(lines[:2 + rows])
    return caption, Markup(_markdown().render(head)), min(rows, total), total


def _card(record, folder: Path, out: Path, run_of: dict) -> dict:
    kind, label = source_of(record)
    badge = {"paper": "paper", "demo": "SIMULATED", "simulated": "SIMULATED",
             "diagram": "no data", "study": "generations"}[kind]
    card = {"name": record["name"], "kind": kind, "badge": badge,
            "source": label.replace("`", ""),
            "caption": record["description"], "run": run_of.get(record["name"]),
            "files": [{"href": f"files/{f}", "suffix": Path(f).suffix.lstrip(".")}
                      for f in record["files"]], "thumb": None, "excerpt": None}
    png = next((f for f in record["files"] if f.endswith(".png")), None)
    md = next((f for f in record["files"] if f.endswith(".md")), None)
    if png:
        card["image"] = f"files/{png}"
        card["thumb"] = f"thumbs/{png}"
        card["width"], card["height"] = _thumbnail(folder / png, out / "thumbs" / png)
    elif md:
        caption, excerpt, shown_rows, total = _excerpt(folder / md)
        card.update(excerpt=excerpt, shown=shown_rows, rows=total)
        if caption:
            card["caption"] = caption
    return card


def _audit(records, folder: Path, run_of: dict):
    """The audit's findings from its tables (``audit_summary``, ``audit_discrepancies``)."""
    import pandas as pd
    from markupsafe import Markup

    names = {r["name"]: r for r in records}
    if "audit_summary" not in names or "audit_discrepancies" not in names:
        return None
    summary = pd.read_csv(folder / "audit_summary.csv")
    disc = pd.read_csv(folder / "audit_discrepancies.csv", keep_default_na=False)
    checks, agree = int(summary["checks"].sum()), int(summary["agree"].sum())
    unexplained = int((disc["explanation"].astype(str).str.strip() == "").sum()
                      + disc["explanation"].astype(str).str.contains("UNEXPLAINED").sum())
    headline = (f"{agree} of {checks} derived numbers of the paper recompute from its own printed "
                f"counts; {checks - agree} do not, and "
                + ("every one has an explanation (a typo or a rounding rule of the paper)."
                   if not unexplained else f"{unexplained} are UNEXPLAINED."))
    cols = [c for c in ("table", "row", "quantity", "printed", "recomputed", "explanation")
            if c in disc.columns]
    _, summary_md = table_markdown(folder / "audit_summary.md")
    return {"headline": headline, "summary": Markup(_markdown().render(summary_md)),
            "discrepancies": Markup(disc[cols].to_html(index=False, classes="data", border=0,
                                                       float_format=lambda v: f"{v:.4f}")),
            "run": run_of.get("audit_summary"),
            "files": names["audit_summary"]["files"] + names["audit_discrepancies"]["files"]}


#: Artifacts the flips page shows whole, in this order: the overview first, then each pair's
#: questions, then the measured null.
FLIPS_PREFIXES = ("flips_summary", "flips_", "support_null")


def _flips_page(records, folder: Path, run_of: dict, env) -> str | None:
    """The flips page: every per-question table and the measured null, whole; None when the
    runs wrote none.
    """
    from markupsafe import Markup

    chosen = []
    for prefix in FLIPS_PREFIXES:
        chosen += [r for r in records if r["name"].startswith(prefix) and r not in chosen
                   and any(f.endswith(".md") for f in r["files"])]
    if not chosen:
        return None
    parts = ["<h1>Which flips are evidence</h1>",
             "<p>Every expansion (E) and shrinkage (S) question of each model pair, with both "
             "models' correct samples and samples, the one-sided Fisher exact tests of the "
             "RLVR model's success rate against the base's, their Benjamini-Hochberg "
             "adjustments over all the pair's questions, the verdict, and each model's most "
             "frequent answers and one response where the files keep them; then the measured "
             "null: each side's model against itself (replicate runs, or halves of its "
             "samples) beside the pair. The numbers of notebook 01; each table's CSV holds "
             "them at full precision.</p>"]
    for r in chosen:
        kind, label = source_of(r)
        md = next(f for f in r["files"] if f.endswith(".md"))
        caption, table = table_markdown(folder / md)
        run = run_of.get(r["name"])
        parts.append(f'<h2 id="{html.escape(r["name"])}">{html.escape(caption or r["name"])}'
                     "</h2>")
        parts.append(f'<p class="meta">Data: {html.escape(label).replace("`", "")} &middot; '
                     + " ".join(f'<a href="files/{f}">{Path(f).suffix.lstrip(".")}</a>'
                                for f in r["files"])
                     + (f' &middot; <a href="runs/{run}.html">notebook run</a>' if run else "")
                     + "</p>")
        parts.append(f'<div class="flips">{_markdown().render(table)}</div>')
    return env.get_template("page.html.j2").render(title="leash: which flips are evidence",
                                                   body=Markup("\n".join(parts)))


def _executed_status(nb) -> tuple[str, str]:
    """``("ok", "")``, ``("skipped", reason)`` or ``("failed", error)`` of an executed
    notebook.
    """
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                return "failed", f"{o.get('ename', '')}: {o.get('evalue', '')}"
            text = o.get("data", {}).get("text/markdown", "")
            if isinstance(text, str) and text.startswith(_SKIP_MARK):
                return "skipped", text[len(_SKIP_MARK):].strip()
    return "ok", ""


# An output's live widget view needs the widget manager's script, which nbconvert's page loads
# from a CDN; the site is static and offline, so it shows the output's other form (the explorer
# offers its figure as a PNG) and says where the live controls run.
_WIDGET = "application/vnd.jupyter.widget-view+json"
_LIVE = ("Live controls are not part of this static page: run the notebook in JupyterLab "
         "(make lab) or serve it as an app (make explore).")


def _without_widgets(nb):
    """The notebook with its widget views replaced by their static forms (and a line saying so)."""
    import nbformat

    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        outputs = []
        for o in cell.get("outputs", []):
            if _WIDGET in o.get("data", {}):
                del o["data"][_WIDGET]
                outputs.append(nbformat.v4.new_output("display_data",
                                                      data={"text/markdown": f"*{_LIVE}*"}))
            outputs.append(o)
        if "outputs" in cell:
            cell["outputs"] = outputs
    return nb


def _offer_notebooks(nb_dir: Path, out: Path) -> list[dict]:
    """Write every notebook of ``nb_dir`` as ``notebooks/<stem>.ipynb`` to run anywhere
    (:func:`leash_eval.run.launch.colab_notebook`); their links for the index.
    """
    import nbformat

    offered = []
    for stem in notebook_files.stems(nb_dir):
        nb = launch.colab_notebook(notebook_files.find(stem, nb_dir))
        write_bytes(out / "notebooks" / f"{stem}.ipynb", nbformat.writes(nb).encode("utf-8"))
        offered.append({"stem": stem, "title": html.escape(notebook_title(stem, nb_dir)),
                        "ipynb": f"notebooks/{stem}.ipynb", "colab": launch.colab_url(stem)})
    return offered


def _launch_links(stem: str, offered: set) -> str:
    """The run page's links to its notebook's ``.ipynb`` and Colab (when the site offers it)."""
    if stem not in offered:
        return ""
    return (f'<a href="../notebooks/{stem}.ipynb" download>{stem}.ipynb</a> &middot; '
            f'<a href="{launch.colab_url(stem)}">open in Colab</a> &middot; ')


def _notebook_pages(runs, build: Path, out: Path, offered=frozenset()) -> list[dict]:
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(template_name="leash-notebook",
                            extra_template_basedirs=[str(TEMPLATES)],
                            mathjax_url="../mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full,Safe",
                            anchor_link_text="¶")
    exporter.register_filter("leash_clean", _clean_output)  # outputs (leash-notebook/)
    pages = []
    for run in runs:
        path = build / f"{run}.ipynb"
        nb = _without_widgets(nbformat.read(str(path), as_version=4))
        status, reason = _executed_status(nb)
        params = nb.metadata.get("papermill", {}).get("parameters", {})
        body, _ = exporter.from_notebook_node(
            nb, resources={"metadata": {"name": run}, "leash_run": f"run {run}",
                           "leash_launch": _launch_links(run.split(".", 1)[0], offered)})
        pages.append({"name": run, "notebook": run.split(".", 1)[0], "status": status,
                      "reason": reason, "html": body,
                      "parameters": ", ".join(f"{k}={json.dumps(v, sort_keys=True)}"
                                              for k, v in sorted(params.items())
                                              if k != "outdir") or "(defaults)"})
    return pages


def _api(out: Path) -> None:
    """Pdoc's reference of ``leash`` and of the toolkit ``leash_eval`` (no math, no mermaid:
    nothing from the web).
    """
    import pdoc
    import pdoc.render

    pdoc.render.configure(docformat="numpy", math=False, mermaid=False, search=True,
                          show_source=True, footer_text="leash")
    import pkgutil

    import leash
    import leash_eval

    # the public modules by name: pdoc hides submodules a package's __all__ does not list
    # (those of a subpackage it finds itself); its notes on unresolved annotations stay out
    names = [name for package in (leash, leash_eval) for name in [package.__name__] + sorted(
        m.name for m in pkgutil.iter_modules(package.__path__, f"{package.__name__}.")
        if not m.name.rsplit(".", 1)[-1].startswith("_"))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pdoc.pdoc(*names, output_directory=out / "api")


def _mathjax(out: Path) -> None:
    import jupyter_server_mathjax

    shutil.copytree(Path(jupyter_server_mathjax.__file__).with_name("static"), out / "mathjax",
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))


def build_site(folder, build, out, runs=None, *, title=None, command="make reproduce",
               paper_claims=True, api=True, notebooks=None) -> dict:
    """Write the site of one output folder into ``out``, replaced as a whole: written in a
    folder beside it and exchanged with the previous site only once complete
    (:func:`leash.writing.replacing_folder`), so that a kill at any moment leaves the previous
    site or the new one. ``out`` is resolved first (a symlink is followed, once, here: what is
    replaced is the folder it names).

    Parameters
    ----------
    folder : path-like
        The artifact folder of a reproduce run (``figures/``, ``build/<study>/``), with its
        ``.artifacts/`` records.
    build : path-like
        Folder of the executed notebooks, ``<run>.ipynb``.
    out : path-like
        The site folder.
    runs : list of str, optional
        Run names (``01_table1_support.paper``); default: the records' runs (``.artifacts/``).
    title, command : str, optional
        The index's heading, and the command the runs came from.
    paper_claims : bool, default True
        Open with the paper's claims (:data:`CLAIMS`) and list :data:`NOT_REGENERATED`.
    api : bool, default True
        Render the API reference (pdoc); without it ``api/`` is not written.
    notebooks : path-like, optional
        Folder of the notebooks, for their titles; default ``notebooks/``.

    Returns
    -------
    dict
        ``{"pages", "images", "files"}``: HTML pages, images (PNG files) and all files written.
    """
    with replacing_folder(Path(os.path.realpath(out)), whole=True) as tmp:
        return _write_site(folder, build, tmp, runs, title=title, command=command,
                           paper_claims=paper_claims, api=api, notebooks=notebooks)


def _write_site(folder, build, out, runs, *, title, command, paper_claims, api,
                notebooks) -> dict:
    """:func:`build_site`, into the new folder ``out``."""
    import jinja2
    from markupsafe import Markup

    folder, build, out = Path(folder), Path(build), Path(out)
    records = artifact_index(folder)
    side = folder / SIDECAR_DIR
    runs = sorted(runs if runs is not None else (p.stem for p in side.glob("*.json")))
    run_of = {}
    for run in runs:
        path = side / f"{run}.json"
        if path.is_file():
            for r in json.loads(path.read_text(encoding="utf-8")):
                run_of[r["name"]] = run
    missing = [r for r in runs if not (build / f"{r}.ipynb").is_file()]
    runs = [r for r in runs if r not in missing]
    out.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=True, keep_trailing_newline=True)  # every string
    shutil.copyfile(TEMPLATES / "site.css", out / "site.css")
    _favicon(out / "favicon.ico")  # what a browser asks for on every page
    (out / "files").mkdir()
    for r in records:
        for f in r["files"]:
            shutil.copyfile(folder / f, out / "files" / f)

    nb_dir = Path(notebooks or NOTEBOOKS)
    offered = _offer_notebooks(nb_dir, out)
    pages = _notebook_pages(runs, build, out, {o["stem"] for o in offered})
    first_run = {}  # where a link to a notebook goes: its run on the paper, else its first
    for p in sorted(pages, key=lambda p: (not p["name"].endswith(".paper"), p["name"])):
        first_run.setdefault(p["notebook"], p["name"])
    for p in pages:
        _write(out / "runs" / f"{p['name']}.html", p.pop("html"))
    _mathjax(out)
    if api:
        _api(out)
    readme = DATA / "README.md"
    _write(out / "data-formats.html", env.get_template("page.html.j2").render(
        title="leash: data formats",
        body=Markup(_repository_markdown().render(readme.read_text(encoding="utf-8")))))

    flips = _flips_page(records, folder, run_of, env)
    if flips is not None:
        _write(out / "flips.html", flips)
    runs_of_nb: dict[str, list] = {}
    for p in pages:
        runs_of_nb.setdefault(p["notebook"], []).append(p["name"])
    cards = []
    for g in groups(records, nb_dir):
        items = [{"name": it.name, "cards": [_card(r, folder, out, run_of) for r in it.records]}
                 for it in g.items]
        cards.append({"notebook": g.notebook, "title": g.title, "entries": items,
                      "runs": runs_of_nb.get(g.notebook, [])})
    not_regenerated = []
    if paper_claims and any(source_of(r)[0] == "paper" for r in records):
        not_regenerated += list(NOT_REGENERATED)
    not_regenerated += [(f"run {p['name']}", f"{p['status']}: " + p["reason"])
                        for p in pages if p["status"] != "ok"]
    not_regenerated += [(f"run {r}", "not run: no executed notebook in build/ (make reproduce "
                         "stopped at a failure before it)") for r in missing]
    n_fig = sum(any(f.endswith(".png") for f in r["files"]) for r in records)
    index = env.get_template("index.html.j2").render(
        title=title or "The Invisible Leash, regenerated: every table and figure",
        claims=list(CLAIMS if paper_claims else ())
        or [f"The report of {folder.name}: every table and figure of "
            f"the paper's analysis, on its own model generations."],
        counts={"artifacts": len(records), "figures": n_fig, "tables": len(records) - n_fig,
                "runs": len(pages)},
        command=command, groups=cards, audit=_audit(records, folder, run_of),
        flips=flips is not None,
        launch={"binder": launch.binder_url(), "walkthrough": launch.WALKTHROUGH,
                "notebooks": offered, "branch": launch.SITE_BRANCH},
        not_regenerated=not_regenerated,
        runs=[{"name": p["name"], "title": notebook_title(p["notebook"], nb_dir),
               "parameters": p["parameters"],
               "status": p["status"] + (f": {p['reason']}" if p["reason"] else ""),
               "artifacts": sum(v == p["name"] for v in run_of.values())} for p in pages])
    _write(out / "index.html", index)
    # now that every page exists: links that leave the site (repository files) become text
    for page in sorted([*out.glob("*.html"), *(out / "runs").glob("*.html")]):
        write_bytes(page, _unlink_local(page.read_text(encoding="utf-8"), page, out,
                                       first_run).encode("utf-8"))
    files = sorted(p for p in out.rglob("*") if p.is_file())
    return {"pages": sum(p.suffix == ".html" for p in files),
            "images": sum(p.suffix == ".png" for p in files), "files": len(files)}


def _parser() -> OneLineParser:
    ap = OneLineParser(
        prog="python -m leash_eval.run.site",
        description="Build the offline static site of the last `make reproduce` (also `make "
                    "site`, which passes DATA): build/site/index.html with every artifact, one "
                    "page per executed notebook, the API reference and the data formats. Runs "
                    "`make reproduce` first when its executed notebooks are absent.")
    ap.add_argument("--data", default="embedded", help="'embedded' (the runs of "
                    "notebooks/runs.yaml, artifacts in figures/) or the study file (or shipped "
                    "study name) of `make reproduce DATA=...` (default: %(default)s)")
    ap.add_argument("--out", help="site folder under build/ (default: build/site/, "
                    "build/site-<study>/ for a study)")
    return ap


def main(argv=None) -> int:
    """Command-line entry point; returns the exit status (2: bad usage, 1: reproduce failed,
    130 or 143: stopped by Ctrl-C or SIGTERM, one line; the previous site is then intact).
    """
    from leash_eval.processes import Terminated, signalled, sigterm_raises

    args = _parser().parse_args(argv)
    signalled(clear=True)
    try:
        with sigterm_raises():
            return _main(args)
    except KeyboardInterrupt as exc:
        stop = exc
    except Exception:
        if (stop := signalled()) is None:  # an error a stop signal caused, or a bug
            raise
    terminated = isinstance(stop, Terminated)
    print(f"site: {'terminated' if terminated else 'interrupted'}; the previous site is left as "
          "it was", file=sys.stderr)
    return 143 if terminated else 130


def _out_folder(args, study, folder: Path) -> Path:
    """The site folder, resolved (a symlink followed, once, before anything is replaced): under
    build/, and neither the folder the site is made from nor a folder of leash's own.
    """
    from leash.paths import reserved_name
    from leash.run.parameters import ParameterError
    from leash_eval.run import reproduce

    build = Path(os.path.realpath(BUILD))
    given = args.out or site_folder(reproduce.EMBEDDED if study is None else study)
    out = Path(os.path.realpath(given))
    what = f"--out {shown(given)}" + (f" ({out})" if str(out) != os.path.abspath(given) else "")
    if not out.is_relative_to(build) or out == build:
        raise ParameterError(f"{what}: the site goes in a folder under {shown(BUILD)}/.")
    top = out.relative_to(build).parts[0]
    source = Path(os.path.realpath(folder))
    if out == source or source.is_relative_to(out) or out.is_relative_to(source):
        raise ParameterError(f"{what}: the site would replace the artifacts it shows "
                             f"({shown(folder)}); choose another folder.")
    if (why := reserved_name(top)) is not None and top != "site" and not top.startswith("site-"):
        raise ParameterError(f"{what}: {shown(BUILD)}/{top}/ is {why}; the site, replaced "
                             "as a whole, would delete it: choose another folder.")
    return out


def _main(args) -> int:
    from leash.run.parameters import ParameterError
    from leash_eval.run import reproduce

    t0 = time.perf_counter()
    try:
        study = reproduce._study_parameter(args.data)
        runs = reproduce.default_runs() if study is None else reproduce.study_runs(study)
        folder = FIGURES if study is None else BUILD / runs[0].label if runs else FIGURES
        out = _out_folder(args, study, folder)
    except ParameterError as exc:
        print(f"site: {exc}", file=sys.stderr)
        return 2
    executed = reproduce.executed_folder(folder)
    names = [r.name for r in runs]
    # the index is written at the end of a reproduce run without failure
    if not (folder / INDEX_NAME).is_file() or any(not (executed / f"{n}.ipynb").is_file()
                                                  for n in names):
        print("site: executed notebooks absent; running make reproduce first", file=sys.stderr)
        status = reproduce.main(["--data", args.data, "--jobs", "2"])
        if status != 1 and status:
            return status
        if status == 1:  # a notebook failed: the site shows it, and make fails
            print("site: a notebook failed; the site shows its error and the runs not run",
                  file=sys.stderr)
    else:
        status = 0
    stats = build_site(folder, executed, out, names,
                       title=None if study is None else study_title(study),
                       command="make reproduce" + (f" DATA={args.data}" if study else ""),
                       paper_claims=study is None)
    print(f"site: {shown(out / 'index.html')}: {stats['pages']} pages, {stats['images']} images, "
          f"{stats['files']} files in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return status


if __name__ == "__main__":
    from leash_eval.processes import exit_status

    sys.exit(exit_status(main))
