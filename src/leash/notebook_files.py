"""Where the notebooks are, and how they are read: committed as Markdown, run as ``.ipynb``.

Each notebook of ``notebooks/`` is committed as jupytext Markdown (``01_table1_support.md``:
its cells, without outputs), paired with an ``.ipynb`` of the same stem that git ignores
(``notebooks/jupytext.toml``). ``make install`` and ``make lab`` write the ``.ipynb`` from the
Markdown; JupyterLab (with jupytext's contents manager) saves both, so a Run All, JupyterLab's
autosave or ``jupyter nbconvert --execute --inplace`` changes only the ignored ``.ipynb``, while
an edit of a cell (a changed parameter) shows in ``git status`` as an edit of the Markdown.
Git's own filters cannot give that: ``git status`` reports a file whose size changed as
modified without running the clean filter (nbstripout's known limitation).

The Markdown is the source: :mod:`leash_eval.run.reproduce` runs it, whatever the ``.ipynb`` holds.
A folder of ``.ipynb`` files only (a user's own, the tests') works as well.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["find", "is_notebook_markdown", "read", "stems"]

#: The suffixes of a notebook's file, the source first.
SUFFIXES = (".md", ".ipynb")


def stems(directory) -> list[str]:
    """The notebooks of ``directory``, by stem, sorted (``00a_...`` first); names starting with
    ``_`` or ``.`` are drafts, and a Markdown file is a notebook only with jupytext's header
    (so a folder's ``README.md`` is none).
    """
    found = set()
    for p in Path(directory).iterdir():
        if p.name.startswith(("_", ".")) or p.suffix not in SUFFIXES or not p.is_file():
            continue
        if p.suffix == ".ipynb" or is_notebook_markdown(p):
            found.add(p.stem)
    return sorted(found)


def find(stem: str, directory) -> Path:
    """The file of notebook ``stem`` in ``directory``: its Markdown source if there is one,
    else its ``.ipynb`` (FileNotFoundError naming both when neither exists).
    """
    for suffix in SUFFIXES:
        path = Path(directory) / f"{stem}{suffix}"
        if path.is_file():
            return path
    raise FileNotFoundError(f"No notebook {stem} in {directory} ({stem}.md or {stem}.ipynb).")


def read(path):
    """The notebook in ``path`` as an ``nbformat`` node, from Markdown (jupytext) or ``.ipynb``.

    A notebook read from Markdown gets cell ids from its cells' positions (``cell-0``...), not
    random ones, so that the executed copies of two runs differ only where their outputs do.
    A file that is not UTF-8 text is a :class:`leash.errors.LeashValueError` naming it, the
    line and the byte.
    """
    import nbformat

    path = Path(path)
    text = _text(path)
    if path.suffix == ".md":
        import jupytext

        nb = jupytext.reads(text, fmt="md")
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"cell-{i}"
        nb.metadata.pop("jupytext", None)
        return nb
    return nbformat.reads(text, as_version=4)


def _text(path: Path) -> str:
    """A notebook file's text (UTF-8, as Jupyter writes it)."""
    from leash.errors import LeashValueError
    from leash.paths import shown

    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise LeashValueError(
            f"{shown(path)}: line {line}: byte 0x{data[exc.start]:02x} is not UTF-8 text; "
            f"a notebook is UTF-8 (save it again as UTF-8).", file=shown(path), line=line,
            value=data[exc.start:exc.end]) from None


def is_notebook_markdown(path) -> bool:
    """Whether a Markdown file is a jupytext notebook: its front matter has a ``jupyter:`` key
    (read as bytes: whether it is text at all is :func:`read`'s to say; False for a file that
    cannot be read).
    """
    try:
        with Path(path).open("rb") as f:
            head = f.read(200)
    except OSError:
        return False
    return head.startswith(b"---\n") and b"\njupyter:\n" in head
