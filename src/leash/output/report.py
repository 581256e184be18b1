"""Saving the paper's artifacts: tables and figures, byte-stable, each with its numbers.

Notebooks save through a :class:`Publisher` bound once to their output folder and source
(never ``savefig`` or ``to_csv``): a table becomes ``.csv`` (unrounded), ``.md`` and ``.tex``; a
figure ``.pdf`` and ``.png`` plus a ``.csv`` of exactly the numbers plotted. The note a
publisher shows in a notebook carries the artifact's record, which the runner keeps per run
and indexes (:mod:`leash_eval.run.index`).
Files are rendered in memory and replaced atomically, LF, UTF-8, without timestamps; a CSV equal
under :mod:`leash.analysis.compare`'s rule to the file already there is left alone, so a re-run on
another CPU leaves ``git status`` clean. ``outdir=""`` is the scratch ``build/figures/``.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Integral
from pathlib import Path

import numpy as np
import pandas as pd

from leash.analysis.compare import csv_differences
from leash.artifacts import STUDY
from leash.core._validation import (
    DATAFRAME,
    Boolean,
    InstancesOf,
    Interval,
    Options,
    Paths,
    SequenceOf,
    StrMatching,
    invalid,
    validate_params,
)
from leash.core._validation import shown as shown_value
from leash.errors import LeashTypeError, LeashValueError, Param
from leash.paths import DATA, MIRROR_ENV, NOTEBOOKS, REPO, SCRATCH, shown
from leash.writing import write_bytes

__all__ = [
    "DPI", "FIGURE_FORMATS", "RECORD_KEY", "TABLE_FORMATS", "Publisher", "TableView",
    "artifact_record", "portable", "resolve_outdir", "save_figure", "save_table",
]

#: Resolution of every PNG (PDFs are vector graphics).
DPI = 200
#: Files written by :func:`save_table`, and the images of :func:`save_figure` (plus its csv).
TABLE_FORMATS, FIGURE_FORMATS = ("csv", "md", "tex"), ("pdf", "png")
#: Key, in the metadata of a notebook output, of the record a :class:`Publisher` displays.
RECORD_KEY = "leash.artifact"
# pdf.fonttype 42 embeds TrueType subsets instead of Type 3 fonts (what publishers ask for)
_SAVE_RC = {"svg.hashsalt": "leash", "pdf.compression": 6, "pdf.fonttype": 42,
            "ps.fonttype": 42, "savefig.dpi": DPI}
_METADATA = {"pdf": {"CreationDate": None, "ModDate": None, "Producer": "leash (matplotlib)"},
             "png": {"Software": None}}
# LaTeX's special characters, for the caption (pandas escapes cells, not a caption string)
_NUMBER_CELL = r"(-?[\d.]+(e[-+]?\d+)?%?|--)\W?"
_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


# The declared kinds of the parameters (leash.core._validation).
#: An artifact's name: a file stem.
NAME = StrMatching(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(?<![.-])", "a file stem of letters, digits, "
                   "'_', '-' and '.' (no folder, no suffix such as .pdf)", "table1")
OUTDIR = Paths(note='"": the scratch folder build/figures/')
FIGURE = InstancesOf("matplotlib.figure.Figure", "a matplotlib Figure (ax.figure for an Axes)",
                     lambda: __import__("matplotlib.figure").figure.Figure())
FLOAT_FORMAT = [StrMatching(r"(?s).*[{%].*", "a format string such as '{:.3f}' or '%.3f'",
                            "{:.3f}"), callable,
                InstancesOf(Mapping, "a dict of those keyed by column", dict), None]
_INPUT = Paths(nonempty=True)
INPUTS = [_INPUT, SequenceOf(_INPUT, 'non-empty strs or paths ("none" for hand-made numbers)',
                             "item", nonempty=True)]
DESCRIPTION = StrMatching(r"(?s).*\S.*", "a non-empty str (one line for the artifact index)",
                          "d")


def _check_columns(df: pd.DataFrame, name: str, func: str) -> pd.DataFrame:
    """``df`` (the parameter ``name``), refused if a column name is there twice."""
    if df.columns.has_duplicates:
        dup = df.columns[df.columns.duplicated()].unique().tolist()
        raise LeashValueError(Param(name), f" has duplicated columns: {dup}.", func=func,
                              key=str(dup[0]))
    return df


@validate_params({"outdir": [OUTDIR]})
def resolve_outdir(outdir) -> Path:
    """An output folder as a path.

    Parameters
    ----------
    outdir : str or path-like
        ``""`` is the scratch folder ``build/figures/``; a relative path is relative to the
        repository (the same folder from ``notebooks/`` and from the runner); installed
        (no checkout, :mod:`leash.paths`), to the current folder.

    Returns
    -------
    pathlib.Path
    """
    if isinstance(outdir, str) and not outdir.strip():
        return SCRATCH
    out = Path(outdir)
    return out if out.is_absolute() else REPO / out


def _folder(outdir, func: str) -> Path:
    """The resolved ``outdir`` (declared :data:`OUTDIR`), refused if it is a file."""
    out = resolve_outdir(outdir)
    if out.exists() and not out.is_dir():
        raise invalid("outdir", func, "a folder", f"the file {shown(out)}", outdir)
    return out


def _outdir(outdir, func: str) -> Path:
    out = _folder(outdir, func)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all (:func:`leash.writing.write_bytes`)."""
    return write_bytes(path, data)


def _lf(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def _write_text(path: Path, text: str) -> Path:
    return _write_bytes(path, _lf(text).encode("utf-8"))


def _write_csv(path: Path, df: pd.DataFrame, index: bool) -> Path:
    """Write ``df`` as CSV (shortest round-trip floats, NA empty), unless the file there holds
    the same numbers under :mod:`leash.analysis.compare`'s rule.
    """
    text = _lf(df.to_csv(index=index, lineterminator="\n", na_rep=""))
    try:
        if not csv_differences(path.read_text(encoding="utf-8"), text):
            return path
    except (OSError, UnicodeDecodeError):
        pass  # no readable file there yet: write it
    return _write_text(path, text)


def _formatter(spec, column, func: str):
    if callable(spec):
        return spec
    if isinstance(spec, str) and ("{" in spec or "%" in spec):
        return spec.format if "{" in spec else (lambda v: spec % v)
    raise invalid("float_format", func, "a format string such as '{:.3f}' or '%.3f' or a "
                  "callable, for each column of its dict", f"{shown_value(spec)} for column "
                  f"{column!r}", spec)


def _cells(df: pd.DataFrame, float_format, func: str) -> pd.DataFrame:
    """Every cell as a string: floats (also in object columns) formatted, missing ones ``--``."""
    per_column = isinstance(float_format, Mapping)
    unknown = [c for c in float_format if c not in df.columns] if per_column else []
    if unknown:
        raise LeashValueError(Param("float_format"), f" names columns that the table does not "
                              f"have: {unknown}. Columns: {list(df.columns)}.", func=func,
                              key=str(unknown[0]), value=float_format)
    out = {}
    for col in df.columns:
        spec = float_format.get(col) if per_column else float_format
        fmt = _formatter("{:.3f}" if spec is None else spec, col, func)
        out[col] = ["--" if v is None or (not isinstance(v, (list, tuple, np.ndarray))
                                          and pd.isna(v))
                    else fmt(float(v)) if isinstance(v, (float, np.floating)) else str(v)
                    for v in df[col].tolist()]
    return pd.DataFrame(out, columns=df.columns)


@dataclass(frozen=True)
class TableView:
    """A table whose Markdown and LaTeX show other cells than its CSV's formatted numbers.

    The paper's printed form of a table (:mod:`leash.output.printed`) is one: its CSV keeps the
    numbers at full precision (and columns the paper does not print), its Markdown and LaTeX
    show ``shown``, cell by cell as the paper prints them, with ``notes`` under the table.

    Attributes
    ----------
    frame : pandas.DataFrame
        What the CSV holds.
    shown : pandas.DataFrame
        The displayed cells, as strings (``--`` where nothing is printed).
    notes : tuple of str
        Lines under the table (Markdown) or below the tabular (LaTeX).
    """

    frame: pd.DataFrame
    shown: pd.DataFrame
    notes: tuple = field(default_factory=tuple)


def _latex(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


@validate_params({"df": [DATAFRAME, InstancesOf(TableView, "a TableView", lambda: TableView(
    pd.DataFrame(), pd.DataFrame()))], "name": [NAME], "outdir": [OUTDIR], "caption": [str, None],
    "float_format": FLOAT_FORMAT, "index": [Boolean()]})
def save_table(df, name, outdir="", *, caption=None, float_format=None, index=False):
    r"""Write a table as ``<name>.csv``, ``<name>.md`` and ``<name>.tex``.

    Parameters
    ----------
    df : pandas.DataFrame or TableView
        One row per printed row; MultiIndex columns are grouped headers (joined by " / " in
        Markdown). A :class:`TableView` writes its ``frame`` as the CSV and its ``shown`` cells
        and ``notes`` as the Markdown and LaTeX (``float_format`` then does not apply).
    name : str
        File stem, e.g. ``"table1"`` (letters, digits, ``_``, ``-``, ``.``).
    outdir : str or path-like, default ""
        See :func:`resolve_outdir`; created if needed.
    caption : str, optional
        ``Table: ...`` above the Markdown, ``\caption`` (escaped) in LaTeX; simulated data says
        so (:func:`simulated_label`).
    float_format : str, callable or dict, optional
        Float cells of ``.md``/``.tex``: ``"{:.2f}"``, ``"%.2f"``, ``float -> str``, or a dict of
        those by column; default ``"{:.3f}"``. The CSV is never rounded; NA is ``--`` (CSV: empty).
    index : bool, default False
        Write the index as the first column(s).

    Returns
    -------
    dict of str to pathlib.Path
        ``{"csv", "md", "tex"}``; the LaTeX is a booktabs ``table`` labelled ``tab:<name>``.
    """
    return _save_table(df, name, outdir, caption=caption, float_format=float_format,
                       index=index, func="save_table")


def _save_table(df, name, outdir, *, caption, float_format, index, func):
    """:func:`save_table` on parameters its caller (``func``) has validated."""
    view = df if isinstance(df, TableView) else None
    if view is not None:
        df = view.frame
    df = _check_columns(df, "df", func)
    out = _outdir(outdir, func)
    table = df.reset_index() if index else df
    if view is not None:  # right-aligned: columns of numbers (a marker after one allowed)
        cells, notes = view.shown.astype(str), [str(n) for n in view.notes]
        align = ["r" if cells[c].str.fullmatch(_NUMBER_CELL).all() else "l"
                 for c in cells.columns]
    else:
        cells, notes = _cells(table, float_format, func), []
        align = ["r" if pd.api.types.is_numeric_dtype(table[c].dtype)
                 and not pd.api.types.is_bool_dtype(table[c].dtype) else "l"
                 for c in table.columns]
    md = cells.apply(lambda s: s.str.replace("|", r"\|", regex=False))
    md.columns = [(" / ".join(str(c) for c in col if str(c) != "") if isinstance(col, tuple)
                   else str(col)).replace("|", r"\|") for col in md.columns]
    body = md.to_markdown(index=False, tablefmt="pipe", disable_numparse=True,
                          colalign=["right" if a == "r" else "left" for a in align])
    tex = cells.style.hide(axis="index").format(escape="latex").format_index(
        escape="latex", axis=1).to_latex(
        caption=_latex(caption) if caption else None,
        label=f"tab:{name}", hrules=True, position_float="centering",
        column_format="".join(align), multicol_align="c")
    if notes:
        body += "\n\n" + "\n".join(f"* {n}" for n in notes)
        latex_notes = "".join(f"\\par\\footnotesize {_latex(n)}\n" for n in notes)
        tex = tex.replace("\\end{table}", latex_notes + "\\end{table}")
    return {"csv": _write_csv(out / f"{name}.csv", df, index),
            "md": _write_text(out / f"{name}.md",
                              (f"Table: {caption}\n\n" if caption else "") + body + "\n"),
            "tex": _write_text(out / f"{name}.tex", tex)}


@validate_params({"fig": [FIGURE], "name": [NAME], "outdir": [OUTDIR],
                  "data": [DATAFRAME, Options(bool, False), None],
                  "dpi": [Interval(Integral, 10, None, closed="left")]})
def save_figure(fig, name, outdir="", *, data=None, dpi=DPI):
    """Write a figure as ``<name>.pdf`` and ``<name>.png``, its numbers as ``<name>.csv``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        ``ax.figure`` for an Axes of :mod:`leash.output.plots`; it is not closed.
    name : str
        File stem.
    outdir : str or path-like, default ""
        See :func:`resolve_outdir`.
    data : pandas.DataFrame or False
        Required: exactly the numbers plotted, a row per point or bar, at full precision (a
        non-default index as leading columns); ``False`` for a pure diagram (a stale CSV goes).
    dpi : int, default 200

    Returns
    -------
    dict of str to pathlib.Path
        ``{"pdf", "png"[, "csv"]}``, the same bytes for the same figure (no timestamps, fixed
        Producer, TrueType fonts).
    """
    return _save_figure(fig, name, outdir, data=data, dpi=dpi, func="save_figure")


def _save_figure(fig, name, outdir, *, data, dpi, func):
    """:func:`save_figure` on parameters its caller (``func``) has validated."""
    import matplotlib

    if data is None:
        raise LeashValueError(
            f"{name!r} needs the plotted numbers: pass data=<DataFrame> with exactly the values "
            f"drawn (written to {name}.csv), or ", Param("data", value=False), " for a pure "
            "diagram.", func=func, param="data", value=None)
    if data is not False and _check_columns(data, "data", func).empty:
        raise LeashValueError(Param("data"), f" of {name!r} is an empty DataFrame; a figure's "
                              "data must hold the plotted numbers.", func=func)
    out = _outdir(outdir, func)
    paths = {}
    for fmt in FIGURE_FORMATS:
        buf = io.BytesIO()
        with matplotlib.rc_context(_SAVE_RC):
            fig.savefig(buf, format=fmt, dpi=int(dpi), metadata=dict(_METADATA[fmt]),
                        bbox_inches="tight", pad_inches=0.05)
        paths[fmt] = _write_bytes(out / f"{name}.{fmt}", buf.getvalue())
    if data is False:
        (out / f"{name}.csv").unlink(missing_ok=True)
    else:
        idx = data.index
        default = (isinstance(idx, pd.RangeIndex) and idx.start == 0 and idx.step == 1
                   and all(n is None for n in idx.names))
        paths["csv"] = _write_csv(out / f"{name}.csv", data, not default)
    return paths


def portable(value):
    """A JSON-safe copy without machine paths: absolute paths relative to the repository or
    ``$LEASH_DATA_MIRROR/`` (a shipped file as ``data/...``, installed too), else only their
    file name.
    """
    if isinstance(value, Mapping):
        return {str(k): portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(v) for v in value]
    if isinstance(value, os.PathLike) or (isinstance(value, str) and os.path.isabs(value)):
        p = Path(value)
        if not p.is_absolute():
            return p.as_posix()
        p = Path(os.path.abspath(p))
        roots = [(REPO, ""), (DATA, "data/"), (NOTEBOOKS, "notebooks/")]
        if os.environ.get(MIRROR_ENV):
            roots.insert(0, (Path(os.path.abspath(os.environ[MIRROR_ENV])), f"${MIRROR_ENV}/"))
        for root, prefix in roots:
            if p.is_relative_to(root):
                return prefix + p.relative_to(root).as_posix()
        return p.name  # a path of this machine does not belong in an index
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise LeashTypeError(f"Cannot record a value of type {type(value).__name__} ({value!r}) in "
                         "the artifact index; use str, numbers, bools, lists or dicts.",
                         value=value)


@validate_params({"name": [NAME], "files": [InstancesOf(Mapping, "a dict of str to path", dict),
                                              SequenceOf(Paths(nonempty=True), "paths", "item")],
                  "inputs": [Paths(), SequenceOf(Paths(), "strs or paths", "item")],
                  "description": [DESCRIPTION]})
def artifact_record(name, files, *, inputs, description) -> dict:
    """The record of one artifact: name, files, input data and a one-line description.

    Parameters
    ----------
    name : str
        Artifact name (file stem).
    files : dict of str to path, or iterable of path
        What :func:`save_table` / :func:`save_figure` returned: existing files of one folder.
    inputs : str or list of str
        Dataset names, study files, ``"data/paper/"``... (paths made portable).
    description : str

    Returns
    -------
    dict
        ``{"name", "files", "inputs", "description"}``, JSON-safe.
    """
    return _record(name, files, inputs, description, "artifact_record")


def _record(name, files, inputs, description, func: str) -> dict:
    """:func:`artifact_record` on parameters its caller (``func``) has validated."""
    paths = [Path(f) for f in (files.values() if isinstance(files, Mapping) else files)]
    if not paths:
        raise LeashValueError(Param("files"), f" of {name!r} is empty.", func=func)
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise LeashValueError(Param("files"), f" of {name!r} do not exist: {missing}.",
                              func=func, file=missing[0])
    if len({Path(os.path.abspath(p.parent)) for p in paths}) != 1:
        raise LeashValueError(Param("files"), f" of {name!r} lie in several folders; an "
                              "artifact's files share the output folder.", func=func)
    return {"name": name, "files": sorted(p.name for p in paths),
            "inputs": portable(_inputs(inputs)), "description": " ".join(description.split())}


def _inputs(inputs) -> list:
    """The declared :data:`INPUTS` as a list."""
    return [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)


class Publisher:
    """Save and record the artifacts of one notebook run: bound once to its output folder and
    its source, then one call per table or figure.

    Notebooks save through a publisher, never with ``savefig`` or ``to_csv``::

        pub = Publisher(outdir, src)   # src = leash.run.notebook.source(study, ...)
        pub(t1, "table1", caption=..., description="Table 1: ...")  # table1.*, table1_demo.*
        pub(fig, "figure1_passk", data=values, description="...")

    Parameters
    ----------
    outdir : str or path-like
        The notebook's ``outdir`` parameter: ``""`` is the scratch folder ``build/figures/``, a
        relative path is relative to the repository (:func:`resolve_outdir`); created at the
        first save.
    source : str, Study or ArtifactSource, optional
        The run's one source (:func:`leash.artifacts.open_study`). Each artifact's file stem is
        then its name with the source's suffix (:func:`leash.artifacts.artifact_name`:
        ``"table1"`` for the paper's numbers, ``"table1_demo"`` for the demo) and its record
        names the source's input data. Without a source, names are used as given.
    inputs : str, path-like or list of them, optional
        What every artifact records as its input data (dataset names, study files,
        ``"data/paper/"``, ``"none"`` for hand-made numbers). Default: the source's. Needed
        when there is no source.

    Attributes
    ----------
    outdir : pathlib.Path
        The resolved output folder.
    source : ArtifactSource or None
    inputs : list of str

    Raises
    ------
    TypeError
        ``outdir`` is not a str or path, or ``inputs`` not a str, path or list of them.
    ValueError
        ``outdir`` names a file, or neither ``source`` nor ``inputs`` is given.
    """

    @validate_params({"outdir": [OUTDIR], "source": [*STUDY, None], "inputs": [*INPUTS, None]},
                     name="Publisher")
    def __init__(self, outdir, source=None, *, inputs=None):
        func = "Publisher"
        out = _folder(outdir, func)
        if source is None and inputs is None:
            raise LeashValueError(
                Param("source", "inputs"), " are both None, and every artifact records its "
                "input data: pass the run's source (leash.run.notebook.source(study)) or its "
                'inputs ("none" for hand-made numbers).', func=func)
        if source is not None:
            from leash.artifacts import open_study

            source = open_study(source)
        self.outdir, self.source = out, source
        self.inputs = _inputs(source.inputs() if inputs is None else inputs)

    def __repr__(self) -> str:
        src = f", source={self.source.name!r}" if self.source is not None else ""
        return f"Publisher({shown(self.outdir)!r}{src}, inputs={self.inputs!r})"

    @validate_params({"stem": [NAME]}, name="Publisher.name")
    def name(self, stem) -> str:
        """The file stem an artifact called ``stem`` is saved under (the source's suffix added).

        Parameters
        ----------
        stem : str
            Letters, digits, ``_``, ``-`` and ``.``; no folder, no file suffix.

        Returns
        -------
        str
        """
        if self.source is None:
            return stem
        from leash.artifacts import artifact_name

        return artifact_name(stem, self.source)

    @validate_params({"obj": [DATAFRAME, InstancesOf(TableView, "a TableView"), FIGURE],
                      "name": [NAME], "description": [DESCRIPTION], "inputs": [*INPUTS, None],
                      "data": [DATAFRAME, Options(bool, False), None], "caption": [str, None],
                      "float_format": FLOAT_FORMAT, "index": [Boolean()]}, name="Publisher")
    def __call__(self, obj, name, *, description, inputs=None, data=None, caption=None,
                 float_format=None, index=False):
        """Save a table or a figure into the bound folder and record it.

        Parameters
        ----------
        obj : pandas.DataFrame, TableView or matplotlib.figure.Figure
            A table (written as ``.csv``, ``.md``, ``.tex``, see :func:`save_table`) or a
            figure (``.pdf``, ``.png`` and the ``.csv`` of ``data``, see :func:`save_figure`).
        name : str
            The artifact's name, e.g. ``"table1"``; the file stem is :meth:`name` of it.
        description : str
            One line for the artifact index.
        inputs : str, path-like or list of them, optional
            This artifact's input data, instead of the bound ones.
        data : pandas.DataFrame or False, optional
            For a figure: exactly the numbers plotted (``False`` for a pure diagram).
        caption, float_format, index
            For a table, as in :func:`save_table`.

        Returns
        -------
        dict of str to pathlib.Path
            The files written. In a notebook, a one-line note says where; its output metadata
            (:data:`RECORD_KEY`) holds the :func:`artifact_record` that
            :mod:`leash_eval.run.reproduce` reads back.
        """
        func = "Publisher"
        stem = self.name(name)
        inputs = self.inputs if inputs is None else _inputs(inputs)
        if isinstance(obj, (pd.DataFrame, TableView)):
            if data is not None:
                raise LeashValueError(Param("data"), f" is for figures; a table ({name!r}) is "
                                      "its own data (its CSV).", func=func)
            files = _save_table(obj, stem, self.outdir, caption=caption,
                                float_format=float_format, index=index, func=func)
        else:
            unused = [k for k, v in (("caption", caption), ("float_format", float_format),
                                     ("index", index or None)) if v is not None]
            if unused:
                verb = " applies" if len(unused) == 1 else " apply"
                raise LeashValueError(Param(*unused), f"{verb} to tables only; a figure ("
                                      f"{name!r}) has its title and labels set on its Axes.",
                                      func=func)
            files = _save_figure(obj, stem, self.outdir, data=data, dpi=DPI, func=func)
        record = _record(stem, files, inputs, description, func)
        _show_note(record, self.outdir)
        return files


def _show_note(record: dict, outdir: Path) -> None:
    """In a kernel, one line saying where the files went, carrying the record as metadata."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:  # not a script/test
        from IPython.display import Markdown, display

        kinds = ", ".join(Path(f).suffix.lstrip(".") for f in record["files"])
        display(Markdown(f"<small>saved `{record['name']}` ({kinds}) to "
                         f"`{shown(outdir)}/`</small>"),
                metadata={RECORD_KEY: record})
