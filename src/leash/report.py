"""Saving the paper's artifacts: tables and figures, byte-stable, each with its numbers.

Notebooks never call ``savefig`` or ``to_csv`` themselves; they call

* :func:`save_table` -> ``<name>.csv`` (unrounded numbers), ``<name>.md`` (Markdown, via
  ``DataFrame.to_markdown``, which needs ``tabulate``) and ``<name>.tex`` (LaTeX via pandas'
  ``Styler.to_latex``, which needs ``jinja2``; the table uses booktabs rules);
* :func:`save_figure` -> ``<name>.pdf`` and ``<name>.png`` plus ``<name>.csv`` with exactly the
  numbers plotted (a figure without its numbers is an error, unless ``data=False`` says that the
  figure is a pure diagram);
* :func:`publish` -> either of the two, plus a one-line note in the notebook ("saved ... to
  ...") whose output metadata carries the artifact's record (name, files, inputs, description).
  The executed notebook is thus the record of what it wrote: :mod:`leash.reproduce` reads the
  records back, adds the notebook and the parameters it ran with, and keeps them per run in
  ``<outdir>/.artifacts/<run>.json`` (:func:`write_records`); :func:`write_index` renders
  ``<outdir>/README.md`` from them.

Where. A relative ``outdir`` is relative to the repository; the empty string (the notebooks'
default) is the scratch folder ``build/figures/``, so a notebook run by hand never overwrites
the committed ``figures/``, which only the default ``make reproduce`` run writes.

Determinism. Every file is rendered in memory and written only as bytes, with LF line endings,
UTF-8, no timestamps: PDFs without CreationDate/ModDate and with a fixed Producer, PNGs without
the Software chunk, a fixed dpi, a fixed SVG hash salt; float formatting is fixed (the CSV keeps
pandas' shortest round-trip representation of each float, the Markdown and LaTeX files the
``float_format`` given). Saving the same object twice gives identical bytes. Files are replaced
atomically (temporary file + :func:`os.replace`), so an interrupted run never leaves half a file
under an artifact's name.

Across machines. Another CPU (or BLAS thread count) can change a float's last bits; that is
invisible in the rounded Markdown, LaTeX and images but not in a CSV's full-precision numbers.
A CSV is therefore left in place when the file already there holds the same table under
:mod:`leash.compare`'s rule (floats within 1e-12, everything else exact), so re-running on
another machine leaves the committed files, and ``git status``, unchanged.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ._paths import REPO, SCRATCH, shown
from .compare import csv_differences

__all__ = [
    "DPI",
    "FIGURE_FORMATS",
    "INDEX_NAME",
    "RECORD_KEY",
    "SIDECAR_DIR",
    "TABLE_FORMATS",
    "artifact_index",
    "artifact_record",
    "publish",
    "resolve_outdir",
    "save_figure",
    "save_table",
    "sidecar_path",
    "simulated_label",
    "write_index",
    "write_records",
]

#: Resolution of every PNG (PDFs are vector graphics).
DPI = 200
#: Files written by :func:`save_table`, in this order.
TABLE_FORMATS = ("csv", "md", "tex")
#: Image files written by :func:`save_figure` (plus ``csv`` with the plotted numbers).
FIGURE_FORMATS = ("pdf", "png")
#: Folder, inside the output folder, of the per-notebook JSON sidecars.
SIDECAR_DIR = ".artifacts"
#: File name of the rendered index inside the output folder.
INDEX_NAME = "README.md"
#: Key, in the metadata of a notebook output, of the record :func:`publish` displays.
RECORD_KEY = "leash.artifact"
#: Environment variable of the data mirror (paths under it are recorded relative to it).
_MIRROR_ENV = "LEASH_DATA_MIRROR"

# Matplotlib settings under which every figure is saved (a context, not a global change).
# pdf.fonttype 42 embeds TrueType subsets instead of Type 3 fonts (what publishers ask for).
_SAVE_RC = {
    "svg.hashsalt": "leash",
    "pdf.compression": 6,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "savefig.dpi": DPI,
}
_PDF_METADATA = {"CreationDate": None, "ModDate": None, "Producer": "leash (matplotlib)"}
_PNG_METADATA = {"Software": None}

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_SIMULATED_RE = re.compile(r"\bsimulated\b", re.IGNORECASE)
_DEFAULT_FLOAT_FORMAT = "{:.3f}"
_NA_REP = "--"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _check_name(name, func: str) -> str:
    if not isinstance(name, str):
        raise TypeError(
            f"The 'name' parameter of {func} must be a str. Got {name!r} of type "
            f"{type(name).__name__} instead."
        )
    if not _NAME_RE.match(name) or name.endswith((".", "-")):
        raise ValueError(
            f"The 'name' parameter of {func} must be a file stem of letters, digits, '_', '-' and "
            f"'.' (no folder, no suffix such as .pdf). Got {name!r} instead."
        )
    return name


def resolve_outdir(outdir) -> Path:
    """An output folder as a path: ``""`` is the scratch folder ``build/figures/``; a relative
    path is relative to the repository root.

    So a notebook opened in JupyterLab (working directory ``notebooks/``) and one run by the
    runner (working directory the repository) write to the same folder, and a notebook run by
    hand never writes into the committed ``figures/`` unless told to.
    """
    if isinstance(outdir, str) and not outdir.strip():
        return SCRATCH
    out = Path(outdir)
    return out if out.is_absolute() else REPO / out


def _outdir(outdir, func: str) -> Path:
    if not isinstance(outdir, (str, os.PathLike)):
        raise TypeError(
            f"The 'outdir' parameter of {func} must be a str or path. Got {outdir!r} of type "
            f"{type(outdir).__name__} instead."
        )
    out = resolve_outdir(outdir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"The 'outdir' parameter of {func} must be a folder. Got the file {out}.")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Permissions of written files: what open() would give (mkstemp creates them 0600).
_FILE_MODE = 0o666 & ~_umask()


def _write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder + os.replace)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _lf(text: str) -> str:
    """``text`` with LF line endings and a final newline: what every text artifact holds."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if text.endswith("\n") else text + "\n"


def _write_text(path: Path, text: str) -> Path:
    return _write_bytes(path, _lf(text).encode("utf-8"))


def _write_csv(path: Path, text: str) -> Path:
    """Write a CSV unless the file already holds the same numbers under :mod:`leash.compare`'s
    rule (floats within 1e-12, the rest exact): a re-run whose floats differ only in the last
    bits (another CPU, another BLAS thread count) leaves the committed file untouched."""
    text = _lf(text)
    try:
        if not csv_differences(path.read_text(encoding="utf-8"), text):
            return path
    except (OSError, UnicodeDecodeError):
        pass  # no readable file there yet: write it
    return _write_text(path, text)


def _csv_text(df: pd.DataFrame, index: bool) -> str:
    # float_format=None: pandas writes repr(float), the shortest string that round-trips, which
    # is deterministic and loses nothing; the CSV is the machine-readable copy of the numbers.
    return df.to_csv(index=index, lineterminator="\n", na_rep="")


def _check_frame(df, name: str, func: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(
            f"The '{name}' parameter of {func} must be a pandas DataFrame. Got "
            f"{type(df).__name__} instead."
        )
    if df.columns.has_duplicates:
        dup = df.columns[df.columns.duplicated()].unique().tolist()
        raise ValueError(f"The '{name}' DataFrame of {func} has duplicated columns: {dup}.")
    return df


def _has_default_index(df: pd.DataFrame) -> bool:
    idx = df.index
    return (
        isinstance(idx, pd.RangeIndex)
        and idx.start == 0
        and idx.step == 1
        and all(n is None for n in idx.names)
    )


# ---------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------

def _formatter(spec, column, func: str) -> Callable[[float], str]:
    if callable(spec):
        return spec
    if isinstance(spec, str):
        if "{" in spec:
            return spec.format
        if "%" in spec:
            return lambda v: spec % v
    raise TypeError(
        f"The 'float_format' parameter of {func} must be a format string such as '{{:.3f}}' or "
        f"'%.3f', a callable, or a dict of those keyed by column. Got {spec!r} for column "
        f"{column!r} instead."
    )


def _format_cells(df: pd.DataFrame, float_format, na_rep: str, func: str) -> pd.DataFrame:
    """Every cell as a string: floats with their column's format, NA as ``na_rep``."""
    if isinstance(float_format, Mapping):
        unknown = [c for c in float_format if c not in df.columns]
        if unknown:
            raise ValueError(
                f"The 'float_format' dict of {func} names columns that the table does not have: "
                f"{unknown}. Columns: {list(df.columns)}."
            )
    out = {}
    for col in df.columns:
        s = df[col]
        if isinstance(float_format, Mapping):
            spec = float_format.get(col, _DEFAULT_FLOAT_FORMAT)
        else:
            spec = _DEFAULT_FLOAT_FORMAT if float_format is None else float_format
        # every float cell is formatted, also in object columns that mix text and numbers
        fmt = _formatter(spec, col, func)
        cells = []
        for v in s.tolist():
            if v is None or (not isinstance(v, (list, tuple, np.ndarray)) and pd.isna(v)):
                cells.append(na_rep)
            elif isinstance(v, (float, np.floating)):
                cells.append(fmt(float(v)))
            else:
                cells.append(str(v))
        out[col] = cells
    return pd.DataFrame(out, columns=df.columns)


def _alignment(df: pd.DataFrame) -> list[str]:
    return [
        "r" if pd.api.types.is_numeric_dtype(df[c].dtype)
        and not pd.api.types.is_bool_dtype(df[c].dtype) else "l"
        for c in df.columns
    ]


def _flat_label(col) -> str:
    if isinstance(col, tuple):
        return " / ".join(str(c) for c in col if str(c) != "")
    return str(col)


def _markdown(cells: pd.DataFrame, align: list[str], caption: str | None) -> str:
    md = cells.copy()
    md.columns = [_flat_label(c).replace("|", r"\|") for c in md.columns]
    md = md.apply(lambda s: s.str.replace("|", r"\|", regex=False))
    colalign = ["right" if a == "r" else "left" for a in align]
    body = md.to_markdown(index=False, tablefmt="pipe", disable_numparse=True,
                          colalign=colalign)
    head = f"Table: {caption}\n\n" if caption else ""
    return head + body + "\n"


# Characters LaTeX treats specially, for the caption (pandas escapes cells and headers through
# Styler.format(escape="latex") but offers no public function for a caption string).
_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _latex(cells: pd.DataFrame, align: list[str], caption: str | None, label: str) -> str:
    styler = (
        cells.style.hide(axis="index")
        .format(escape="latex")
        .format_index(escape="latex", axis=1)
    )
    return styler.to_latex(
        caption=_latex_escape(caption) if caption else None,
        label=label,
        hrules=True,
        position_float="centering",
        column_format="".join(align),
        multicol_align="c",
    )


def save_table(df, name, outdir="", *, caption=None, float_format=None, index=False):
    """Write a table as ``<name>.csv``, ``<name>.md`` and ``<name>.tex``.

    Parameters
    ----------
    df : pandas.DataFrame, shape (n_rows, n_columns)
        The table, one row per printed row. Columns may be a MultiIndex (grouped headers): the
        Markdown header joins the levels with " / ", the LaTeX header keeps them.
    name : str
        File stem, e.g. ``"table1"`` (letters, digits, ``_``, ``-``, ``.``; no folder).
    outdir : str or path-like, default ""
        Output folder, created if needed (see :func:`resolve_outdir`; ``""`` is
        ``build/figures/``).
    caption : str, optional
        Plain-text caption: a ``Table: ...`` line above the Markdown table, ``\\caption`` (with
        LaTeX special characters escaped) in the ``.tex``. Use :func:`simulated_label` for
        tables made from simulated data.
    float_format : str, callable or dict, optional
        Format of float cells in ``.md`` and ``.tex``: a ``str.format`` string (``"{:.2f}"``,
        ``"{:.1%}"``), a ``%``-string (``"%.2f"``), a callable ``float -> str``, or a dict of those
        keyed by column (columns not in the dict get the default). Default ``"{:.3f}"``. The
        ``.csv`` is never rounded: it holds each float's shortest round-trip representation.
        Missing values are written as ``--`` (en dash in LaTeX) in ``.md``/``.tex`` and as an
        empty field in ``.csv``.
    index : bool, default False
        Write the index as the first column(s) of every file.

    Returns
    -------
    dict of str to pathlib.Path
        ``{"csv": ..., "md": ..., "tex": ...}``.

    Notes
    -----
    The LaTeX file is a floating ``table`` with booktabs rules (``\\usepackage{booktabs}``), its
    label ``tab:<name>``; numeric columns are right-aligned, the others left-aligned.
    """
    func = "save_table"
    df = _check_frame(df, "df", func)
    name = _check_name(name, func)
    if caption is not None and not isinstance(caption, str):
        raise TypeError(f"The 'caption' parameter of {func} must be a str or None. "
                        f"Got {type(caption).__name__} instead.")
    if not isinstance(index, bool):
        raise TypeError(f"The 'index' parameter of {func} must be a bool. Got {index!r} instead.")
    out = _outdir(outdir, func)
    table = df.reset_index() if index else df
    cells = _format_cells(table, float_format, _NA_REP, func)
    align = _alignment(table)
    paths = {
        "csv": _write_csv(out / f"{name}.csv", _csv_text(df, index)),
        "md": _write_text(out / f"{name}.md", _markdown(cells, align, caption)),
        "tex": _write_text(out / f"{name}.tex", _latex(cells, align, caption, f"tab:{name}")),
    }
    return paths


# ---------------------------------------------------------------------------------------------
# figures
# ---------------------------------------------------------------------------------------------

def _render(fig, fmt: str, dpi: int) -> bytes:
    import matplotlib

    buf = io.BytesIO()
    meta = _PDF_METADATA if fmt == "pdf" else _PNG_METADATA
    with matplotlib.rc_context(_SAVE_RC):
        fig.savefig(buf, format=fmt, dpi=dpi, metadata=dict(meta), bbox_inches="tight",
                    pad_inches=0.05)
    return buf.getvalue()


def save_figure(fig, name, outdir="", *, data=None, dpi=DPI):
    """Write a figure as ``<name>.pdf`` and ``<name>.png``, and its numbers as ``<name>.csv``.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (``ax.figure`` for an Axes returned by :mod:`leash.plots`). It is not closed.
    name : str
        File stem, e.g. ``"figure4_rg_shrinkage"``.
    outdir : str or path-like, default ""
        Output folder, created if needed (see :func:`resolve_outdir`; ``""`` is
        ``build/figures/``).
    data : pandas.DataFrame or False
        Exactly the numbers plotted, one row per plotted point/bar (tidy form), written to
        ``<name>.csv`` at full precision. Required: omitting it raises ValueError. Pass
        ``data=False`` only for a pure diagram with no data (no CSV is written, and a stale
        ``<name>.csv`` from an earlier run is removed). A non-default index (named, or not
        0..n-1) is written as leading column(s).
    dpi : int, default 200
        Resolution of the PNG.

    Returns
    -------
    dict of str to pathlib.Path
        ``{"pdf": ..., "png": ...[, "csv": ...]}``.

    Notes
    -----
    Byte-stable: PDF without CreationDate/ModDate and with a fixed Producer, PNG without the
    Software chunk, fixed dpi, ``svg.hashsalt`` fixed, TrueType (Type 42) fonts in the PDF,
    ``bbox_inches="tight"``. Saving the same figure twice gives identical bytes.
    """
    from matplotlib.figure import Figure

    func = "save_figure"
    if not isinstance(fig, Figure):
        raise TypeError(
            f"The 'fig' parameter of {func} must be a matplotlib Figure (use ax.figure for an "
            f"Axes). Got {type(fig).__name__} instead."
        )
    name = _check_name(name, func)
    if data is None:
        raise ValueError(
            f"{func}({name!r}) needs the plotted numbers: pass data=<DataFrame> with exactly the "
            f"values drawn (written to {name}.csv), or data=False for a pure diagram."
        )
    if data is not False:
        _check_frame(data, "data", func)
        if data.empty:
            raise ValueError(f"The 'data' DataFrame of {func}({name!r}) is empty; a figure's "
                             f"data must hold the plotted numbers.")
    if isinstance(dpi, bool) or not isinstance(dpi, (int, np.integer)) or dpi < 10:
        raise ValueError(f"The 'dpi' parameter of {func} must be an int >= 10. Got {dpi!r}.")
    out = _outdir(outdir, func)
    paths = {fmt: _write_bytes(out / f"{name}.{fmt}", _render(fig, fmt, int(dpi)))
             for fmt in FIGURE_FORMATS}
    csv = out / f"{name}.csv"
    if data is False:
        csv.unlink(missing_ok=True)
    else:
        paths["csv"] = _write_csv(csv, _csv_text(data, not _has_default_index(data)))
    return paths


# ---------------------------------------------------------------------------------------------
# labels
# ---------------------------------------------------------------------------------------------

def simulated_label(text=""):
    """Return ``text`` guaranteed to contain the word "simulated".

    Titles and captions of artifacts made from the simulated demo must say so. Text that already
    contains the word (any case) is returned unchanged; otherwise " (simulated)" is appended, or
    "simulated" returned for empty text.

    Parameters
    ----------
    text : str

    Returns
    -------
    str

    Examples
    --------
    >>> simulated_label("Table 1: support dynamics")
    'Table 1: support dynamics (simulated)'
    >>> simulated_label("Simulated pass@k")
    'Simulated pass@k'
    """
    if not isinstance(text, str):
        raise TypeError(f"The 'text' parameter of simulated_label must be a str. Got "
                        f"{type(text).__name__} instead.")
    if _SIMULATED_RE.search(text):
        return text
    stripped = text.rstrip()
    return f"{stripped} (simulated)" if stripped else "simulated"


# ---------------------------------------------------------------------------------------------
# provenance: sidecars and the index
# ---------------------------------------------------------------------------------------------

def _portable(value):
    """A JSON-safe copy of ``value`` with no machine paths.

    Absolute paths inside the repository become repository-relative; under the data mirror
    (env LEASH_DATA_MIRROR) they become ``$LEASH_DATA_MIRROR/<relative>``; other absolute paths
    keep only their file name (a study of the user's own, say), since an index may be shared.
    """
    if isinstance(value, Mapping):
        return {str(k): _portable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_portable(v) for v in value]
    if isinstance(value, os.PathLike) or (isinstance(value, str) and os.path.isabs(value)):
        p = Path(value)
        if not p.is_absolute():
            return p.as_posix()
        p = Path(os.path.abspath(p))
        roots = [(REPO, "")]
        if os.environ.get(_MIRROR_ENV):
            roots.insert(0, (Path(os.path.abspath(os.environ[_MIRROR_ENV])), f"${_MIRROR_ENV}/"))
        for root, prefix in roots:
            try:
                return prefix + p.relative_to(root).as_posix()
            except ValueError:
                continue
        return p.name  # a path of this machine does not belong in an index
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"Cannot record a value of type {type(value).__name__} ({value!r}) in the "
                    f"artifact index; use str, numbers, bools, lists or dicts.")


def sidecar_path(outdir, run) -> Path:
    """``<outdir>/.artifacts/<run>.json``, the records of one notebook run."""
    return resolve_outdir(outdir) / SIDECAR_DIR / f"{run}.json"


def _dump(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def artifact_record(name, files, *, inputs, description) -> dict:
    """The record of one artifact: its name, files, input data and a one-line description.

    Parameters
    ----------
    name : str
        Artifact name (file stem), e.g. ``"table1"``.
    files : dict of str to path, or iterable of path
        What :func:`save_table` / :func:`save_figure` returned. They must exist and share one
        folder.
    inputs : str or list of str
        The input data: dataset names of the manifest, study files, ``"data/paper/"``...
        Absolute paths are recorded relative to the repository or the data mirror.
    description : str
        One line saying what the artifact shows.

    Returns
    -------
    dict
        ``{"name", "files", "inputs", "description"}``, JSON-safe, with no machine paths.
    """
    func = "artifact_record"
    name = _check_name(name, func)
    if isinstance(files, Mapping):
        file_list = list(files.values())
    elif isinstance(files, (str, os.PathLike)):
        file_list = [files]
    else:
        file_list = list(files)
    if not file_list:
        raise ValueError(f"The 'files' parameter of {func}({name!r}) is empty.")
    paths = [Path(f) for f in file_list]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise ValueError(f"The 'files' of {func}({name!r}) do not exist: {missing}.")
    if len({Path(os.path.abspath(p.parent)) for p in paths}) != 1:
        raise ValueError(f"The 'files' of {func}({name!r}) lie in several folders; an "
                         f"artifact's files share the output folder.")
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if not isinstance(description, str) or not description.strip():
        raise ValueError(f"The 'description' parameter of {func}({name!r}) must be a non-empty "
                         f"str. Got {description!r} instead.")
    return {"name": name, "files": sorted(p.name for p in paths),
            "inputs": _portable(list(inputs)), "description": " ".join(description.split())}


def write_records(outdir, run, notebook, parameters, records) -> Path:
    """Keep the records of one notebook run: ``<outdir>/.artifacts/<run>.json``.

    Parameters
    ----------
    outdir : str or path-like
        The output folder the run wrote to.
    run : str
        The run's name: the notebook's stem, with the study it ran on for notebooks run once
        per source (``"01_table1_support.demo"``).
    notebook : str
        The notebook's stem.
    parameters : dict
        The parameters it ran with (JSON-serializable); ``outdir`` is left out.
    records : list of dict
        :func:`artifact_record` of each artifact, as read from the executed notebook.

    Returns
    -------
    pathlib.Path
    """
    params = {k: v for k, v in dict(parameters).items() if k != "outdir"}
    out = [{**r, "notebook": notebook, "parameters": _portable(params)} for r in records]
    out.sort(key=lambda r: r["name"])
    side = sidecar_path(outdir, run)
    side.parent.mkdir(parents=True, exist_ok=True)
    return _write_text(side, _dump(out))


_RECORD_KEYS = ("description", "files", "inputs", "name", "notebook", "parameters")


def _read_sidecar(path: Path) -> list[dict]:
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"Artifact sidecar {path} is not valid JSON: line {exc.lineno}, "
                         f"column {exc.colno}: {exc.msg}.") from None
    if not isinstance(records, list):
        raise ValueError(f"Artifact sidecar {path} must hold a JSON list of records.")
    for i, r in enumerate(records):
        if not isinstance(r, dict) or sorted(r) != list(_RECORD_KEYS):
            got = sorted(r) if isinstance(r, dict) else type(r).__name__
            raise ValueError(f"Artifact sidecar {path}, record {i}: expected the keys "
                             f"{list(_RECORD_KEYS)}, got {got}.")
    return records


def artifact_index(outdir="figures"):
    """All artifact records of an output folder, sorted by artifact name.

    Parameters
    ----------
    outdir : str or path-like, default "figures"

    Returns
    -------
    list of dict
        One record per artifact (keys: name, files, notebook, parameters, inputs, description).

    Raises
    ------
    ValueError
        If two notebooks registered the same artifact name (one would overwrite the other's
        files), or a sidecar is malformed.
    """
    side_dir = resolve_outdir(outdir) / SIDECAR_DIR
    records: list[dict] = []
    owner: dict[str, str] = {}
    for path in sorted(side_dir.glob("*.json")):
        for r in _read_sidecar(path):
            if r["name"] in owner:
                raise ValueError(
                    f"Artifact {r['name']!r} is written by two notebook runs: "
                    f"{owner[r['name']]} and {path.stem}; their files would overwrite each "
                    f"other."
                )
            owner[r["name"]] = path.stem
            records.append(r)
    records.sort(key=lambda r: r["name"])
    return records


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", r"\|")


def _fmt_value(v) -> str:
    if isinstance(v, str):
        return v if v else '""'  # an empty string stays visible
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def write_index(records, path="figures/README.md"):
    """Render the artifact index as Markdown (deterministic: sorted, no timestamps).

    Parameters
    ----------
    records : list of dict
        From :func:`artifact_index`.
    path : str or path-like, default "figures/README.md"
        Output file. Files in its folder that no record lists are named in a final section, so
        stale artifacts are visible.

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = sorted(records, key=lambda r: r["name"])
    lines = [
        "# Artifacts",
        "",
        "Generated by `make reproduce` (`python -m leash.reproduce`) from the records the "
        f"executed notebooks hold (kept per run in `{SIDECAR_DIR}/`); do not edit by hand. Each "
        "artifact names the notebook that wrote it, the parameters it ran with and its input "
        "data.",
        "",
        "| artifact | files | notebook | parameters | inputs | description |",
        "|---|---|---|---|---|---|",
    ]
    listed: set[str] = set()
    for r in records:
        listed.update(r["files"])
        params = ", ".join(f"{k}={_fmt_value(v)}" for k, v in sorted(r["parameters"].items()))
        lines.append("| " + " | ".join([
            f"`{_cell(r['name'])}`",
            ", ".join(f"[{_cell(f)}]({f})" for f in r["files"]),
            f"`notebooks/{_cell(r['notebook'])}.ipynb`",
            _cell(params) or "(defaults)",
            _cell(", ".join(_fmt_value(i) for i in r["inputs"])) or "(none)",
            _cell(r["description"]),
        ]) + " |")
    unlisted = sorted(
        p.name for p in path.parent.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.name != path.name
        and p.name not in listed
    )
    if unlisted:
        warnings.warn(f"{len(unlisted)} file(s) in {path.parent.name}/ are not registered by any "
                      f"notebook: {', '.join(unlisted)}.", stacklevel=2)
        lines += ["", "## Files without a record", "",
                  "No notebook registered these files (stale output of an earlier run?):", ""]
        lines += [f"- {_cell(n)}" for n in unlisted]
    return _write_text(path, "\n".join(lines) + "\n")


def _show(record: dict, folder: Path) -> None:
    """In a notebook, one line saying what was saved where, carrying the record."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return
    shell = get_ipython()
    if shell is None or getattr(shell, "kernel", None) is None:
        return  # a script or a test: nothing to show
    from IPython.display import Markdown, display

    kinds = ", ".join(Path(f).suffix.lstrip(".") for f in record["files"])
    display(Markdown(f"<small>saved `{record['name']}` ({kinds}) to `{shown(folder)}/`</small>"),
            metadata={RECORD_KEY: record})


def publish(obj, name, outdir="", *, inputs, description, data=None, caption=None,
            float_format=None, index=False):
    """Save a table or a figure and record it: one call per artifact.

    Parameters
    ----------
    obj : pandas.DataFrame or matplotlib.figure.Figure
        A table (saved by :func:`save_table`) or a figure (saved by :func:`save_figure`, which
        needs ``data``, the numbers plotted).
    name : str
        Artifact name (file stem).
    outdir : str or path-like, default ""
        See :func:`resolve_outdir` (``""``: ``build/figures/``).
    inputs, description
        As in :func:`artifact_record`.
    data : pandas.DataFrame, optional
        For a figure: exactly the numbers plotted (``False`` for a pure diagram).
    caption, float_format, index
        For a table, as in :func:`save_table`.

    Returns
    -------
    dict of str to pathlib.Path
        The files written.

    Notes
    -----
    In a notebook, a one-line note says what was saved where; its output metadata (key
    :data:`RECORD_KEY`) holds the :func:`artifact_record`, which :mod:`leash.reproduce` reads
    from the executed notebook to build the index. A figure stays open, so that the notebook
    shows it inline.
    """
    if isinstance(obj, pd.DataFrame):
        if data is not None:
            raise ValueError(f"publish({name!r}): 'data' is for figures; a table is its own "
                             f"data (its CSV).")
        files = save_table(obj, name, outdir, caption=caption, float_format=float_format,
                           index=index)
    else:
        unused = [k for k, v in (("caption", caption), ("float_format", float_format))
                  if v is not None] + (["index"] if index else [])
        if unused:
            raise ValueError(f"publish({name!r}): {', '.join(unused)} apply to tables only; "
                             f"a figure's title and labels are set on its Axes.")
        files = save_figure(obj, name, outdir, data=data)
    record = artifact_record(name, files, inputs=inputs, description=description)
    _show(record, resolve_outdir(outdir))
    return files
