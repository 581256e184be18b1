"""The artifacts of an output folder as a gallery: grouped by notebook, paper beside demo.

:func:`groups` orders the records of :func:`leash_eval.run.index.artifact_index` by the notebook
(paper artifact) that wrote them, pairs an artifact on the paper's printed numbers with the
same artifact on another source (``table1`` with ``table1_demo``) and names each record's
data (:func:`source_of`). :func:`gallery_lines` renders that as Markdown a repository browser
shows (images inline, tables included), the top of ``figures/README.md``; ``make site``
(:mod:`leash_eval.run.site`) renders the same groups as HTML. Nothing here depends on a fixed list
of notebooks or artifacts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from leash import notebook_files
from leash.paths import NOTEBOOKS

__all__ = ["Group", "Item", "LONG_TABLE", "gallery_lines", "groups", "notebook_link",
           "notebook_title", "source_of", "table_markdown"]

#: Tables with more rows than this are folded (``<details>``) in the Markdown gallery.
LONG_TABLE = 20


def source_of(record) -> tuple[str, str]:
    """``(kind, label)`` of the data behind a record: kind "paper", "demo", "simulated",
    "diagram" or "study" (generations named by a study file).

    Examples
    --------
    >>> source_of({"inputs": ["data/paper/"], "parameters": {"study": "paper"}})
    ('paper', "the paper's printed numbers")
    >>> source_of({"inputs": ["data/studies/demo.yaml"], "parameters": {}})[0]
    'demo'
    """
    inputs = [str(i) for i in record.get("inputs", [])]
    if not inputs or inputs == ["none"]:
        return "diagram", "no input data (a diagram or a worked example)"
    if any(i.startswith("data/paper") for i in inputs):
        return "paper", "the paper's printed numbers"
    if any(i.endswith("studies/demo.yaml") for i in inputs):
        return "demo", "the SIMULATED demo (not the paper's data)"
    if any(i.startswith("simulated") for i in inputs):
        return "simulated", "SIMULATED data (" + ", ".join(inputs) + ")"
    studies = [Path(i).stem for i in inputs if i.endswith((".yaml", ".yml"))]
    if studies:
        return "study", "model generations: study " + ", ".join(f"`{s}`" for s in studies)
    return "study", "model generations: " + ", ".join(inputs)


def notebook_title(stem: str, directory=None) -> str:
    """The first heading of notebook ``stem`` of ``notebooks/`` (the stem if there is none)."""
    try:
        cells = notebook_files.read(notebook_files.find(stem, directory or NOTEBOOKS)).cells
    except (OSError, ValueError, KeyError):
        return stem
    for cell in cells[:1]:
        text = cell.get("source", "")
        for line in text.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    return stem


@dataclass
class Item:
    """One artifact, or the same artifact on two sources: ``records`` in display order."""

    records: list

    @property
    def name(self) -> str:
        """The first record's name."""
        return self.records[0]["name"]


@dataclass
class Group:
    """The artifacts of one notebook."""

    notebook: str
    title: str
    items: list = field(default_factory=list)


def groups(records, directory=None) -> list[Group]:
    """The records grouped by notebook (in notebook order), paired by source.

    A record on another source than the paper (``parameters.study``) whose name is that of a
    paper record of the same notebook plus ``_<suffix>`` is shown beside it.
    """
    by_nb: dict[str, list] = {}
    for r in sorted(records, key=lambda r: r["name"]):
        by_nb.setdefault(r["notebook"], []).append(r)
    out = []
    for nb in sorted(by_nb):
        recs = by_nb[nb]
        names = {r["name"]: r for r in recs}
        partner, taken = {}, set()
        for r in recs:
            if r["parameters"].get("study") in (None, "paper"):
                continue
            for base in (r["name"].rsplit("_", i)[0] for i in (1, 2)):
                b = names.get(base)
                if b is not None and b is not r and b["parameters"].get("study") == "paper" \
                        and base not in partner:
                    partner[base] = r
                    taken.add(r["name"])
                    break
        items = [Item([r] + ([partner[r["name"]]] if r["name"] in partner else []))
                 for r in recs if r["name"] not in taken]
        out.append(Group(nb, notebook_title(nb, directory), items))
    return out


def table_markdown(path: Path) -> tuple[str, str]:
    """``(caption, table)`` of a ``.md`` table written by :func:`save_table`."""
    text = Path(path).read_text(encoding="utf-8")
    caption = ""
    if text.startswith("Table: "):
        first, _, text = text.partition("\n")
        caption = first[len("Table: "):].strip()
    return caption, text.strip("\n")


def _cell(text) -> str:
    return " ".join(str(text).split()).replace("|", r"\|")


def _image(record) -> str | None:
    return next((f for f in record["files"] if f.endswith(".png")), None)


def notebook_link(stem: str, folder, notebooks=None) -> str:
    """Notebook ``stem`` as an index in ``folder`` names it: its file in ``notebooks`` (its
    folder; the committed Markdown where there is one, which a repository browser shows and
    JupyterLab with jupytext opens as a notebook, else its ``.ipynb``) linked relative to
    ``folder``; without that folder, or the notebook not in it, ```notebooks/<stem>.md```.

    Examples
    --------
    >>> notebook_link("01_table1_support", "figures")
    '`notebooks/01_table1_support.md`'
    """
    try:
        path = notebook_files.find(stem, notebooks) if notebooks is not None else None
    except FileNotFoundError:
        path = None
    if path is None:
        return f"`notebooks/{stem}.md`"
    # both sides as given, not resolved: a folder linked into place keeps its place
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(folder))
    return f"[`{Path(notebooks).name}/{path.name}`]({Path(rel).as_posix()})"


def gallery_lines(records, folder, notebooks=None) -> list[str]:
    """The gallery as Markdown lines: per notebook a section (its name linked to its Markdown
    in ``notebooks``, :func:`notebook_link`); per artifact its description, its source(s), its
    image(s) (side by side for a pair) or its table(s) (long ones folded).
    """
    folder = Path(folder)
    lines = []
    for g in groups(records):
        lines += ["", f"### {g.title}", "", notebook_link(g.notebook, folder, notebooks)]
        for item in g.items:
            recs = item.records
            lines += ["", f"#### `{item.name}`: {_cell(recs[0]['description'])}", ""]
            images = [_image(r) for r in recs]
            if all(images):
                heads = [source_of(r)[1] for r in recs]
                lines += ["| " + " | ".join(heads) + " |",
                          "|" + "---|" * len(recs),
                          "| " + " | ".join(f"![{_cell(r['description'])}]({img})"
                                            for r, img in zip(recs, images)) + " |"]
                continue
            for r in recs:
                md = next((f for f in r["files"] if f.endswith(".md")), None)
                lines.append(f"*Data: {source_of(r)[1]}.* Files: "
                             + " · ".join(f"[{Path(f).suffix.lstrip('.')}]({f})"
                                          for f in r["files"]))
                if md is None or not (folder / md).is_file():
                    lines.append("")
                    continue
                caption, table = table_markdown(folder / md)
                rows = max(0, len(table.splitlines()) - 2)
                if caption:
                    lines += ["", f"Table: {caption}"]
                if rows > LONG_TABLE:
                    lines += ["", f"<details><summary>{rows} rows</summary>", "", table, "",
                              "</details>", ""]
                else:
                    lines += ["", table, ""]
    return lines
