"""The registry of input formats: every format leash reads, by name, with how it is detected,
read and configured.

leash's own formats (``samples``, ``counts``, ``summary``, ``evaluator``, ``nested``) are read by
:mod:`leash_eval.formats`. Every other format is a plug-in: a module that declares its formats
in a tuple ``READERS`` of :class:`InputFormat` (the reader, its detection, its options), listed
once in :data:`PLUGINS`. Nothing else names a format: detection, the reader each name runs, the
options each takes, the choices of ``--fmt`` and the reader options of the command line, and
the messages that list the formats all come from :func:`input_formats`. The study schema's names
(:data:`leash.sources.choices.INPUT_FORMATS`, read by a study check that does not import the
toolkit) are checked against this registry by a test (``tests/test_boundary.py``).

Adding a format: a module with a reader ``read(con, path, options)`` returning a DuckDB relation
of :data:`leash_eval.evaluators.RELATION_COLUMNS` and ``READERS = (InputFormat(...),)``, its
name in :data:`PLUGINS` and in :data:`leash.sources.choices.INPUT_FORMATS`, a fixture and its
row in ``data/README.md``; everything after the reader (the rules, duplicates, summaries,
pairing) is the same for every format.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from collections.abc import Callable
from pathlib import Path

from leash.errors import LeashValueError

__all__ = ["InputFormat", "ReaderOption", "OWN", "PLUGINS", "input_formats", "plugin",
           "reader_options", "detect_record", "detect_document", "relation", "check_options"]


@dataclasses.dataclass(frozen=True)
class ReaderOption:
    """An option of a reader: its keyword in ``reader_options`` (``--name-with-dashes`` on the
    command line), what it does for the format declaring it, and its metavar or choices.
    """

    name: str
    help: str
    metavar: str | None = "NAME"
    choices: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        """The option as the command line spells it."""
        return "--" + self.name.replace("_", "-")


@dataclasses.dataclass(frozen=True)
class InputFormat:
    """One input format.

    Attributes
    ----------
    name : str
        Its name (``fmt=``, ``--fmt``, a study source's ``fmt:``).
    read : callable or None
        ``read(con, path, options) -> duckdb.DuckDBPyRelation`` of
        :data:`leash_eval.evaluators.RELATION_COLUMNS` (a layout error: a ValueError or a
        ``duckdb.Error`` whose text names file, line and field); None for leash's own formats.
    fits : callable, optional
        ``fits(keys, first) -> bool``: whether a file of JSON lines (``first`` its first record)
        or a Parquet file (``first`` None, ``keys`` its columns) is of this format.
    fits_document : callable, optional
        ``fits_document(doc) -> bool`` for a file holding one JSON document (``.json``,
        ``.json.gz``): whether the parsed document is of this format.
    archive : str, optional
        The file suffix of its zip archives (``.eval``): a zip is of this format.
    options : tuple of ReaderOption
        The reader options it takes.
    signature : str
        How it is detected, in words (detection failures list it).
    unit : str
        What a location in it names: ``line`` (JSON lines; a Parquet file's row) or ``record``
        (the n-th sample of a document or archive).
    module : str
        The module declaring it (set by the registry).
    """

    name: str
    read: Callable | None = None
    fits: Callable | None = None
    fits_document: Callable | None = None
    archive: str | None = None
    options: tuple[ReaderOption, ...] = ()
    signature: str = ""
    unit: str = "line"
    module: str = ""


#: leash's own formats, read by :mod:`leash_eval.formats` (``data/README.md``, sections 1-4b).
OWN = tuple(InputFormat(n, module="leash_eval.formats")
            for n in ("samples", "counts", "summary", "evaluator", "nested"))
#: The modules declaring plug-in formats (``READERS``), in the order formats are listed.
PLUGINS = ("leash_eval.evaluators", "leash_eval.harness_logs", "leash_eval.reasoning_gym_eval")

_REGISTRY: dict[str, InputFormat] | None = None


def input_formats() -> dict[str, InputFormat]:
    """Every input format by name: :data:`OWN`, then each plug-in's in :data:`PLUGINS` order.

    Returns
    -------
    dict of str to InputFormat
        The registry (one dict, built on first use; do not change it).
    """
    global _REGISTRY
    if _REGISTRY is None:
        found = {f.name: f for f in OWN}
        for module in PLUGINS:
            for f in importlib.import_module(module).READERS:
                if f.name in found:
                    raise RuntimeError(f"input format {f.name!r} is declared twice "
                                       f"({found[f.name].module}, {module})")
                found[f.name] = dataclasses.replace(f, module=module)
        _REGISTRY = found
    return _REGISTRY


def plugin(name) -> InputFormat | None:
    """The plug-in format of that name, or None (leash's own formats, unknown names)."""
    f = input_formats().get(name) if isinstance(name, str) else None
    return f if f is not None and f.read is not None else None


def reader_options() -> dict[str, tuple[ReaderOption, list[str]]]:
    """Every reader option by keyword, with the formats that take it (the command line's
    reader options: one flag per keyword, its help naming each format's use).
    """
    out: dict[str, tuple[ReaderOption, list[str]]] = {}
    for f in input_formats().values():
        for o in f.options:
            out.setdefault(o.name, (o, []))[1].append(f.name)
    return out


def check_options(path, fmt: str, options: dict | None) -> dict:
    """The reader options given (None values dropped); one the format does not take is a
    LeashValueError naming it as the command line spells it.
    """
    known = {o.name: o for o in input_formats()[fmt].options}
    options = {k: v for k, v in (options or {}).items() if v is not None}
    if bad := [k for k in options if k not in known]:
        flag = "--" + bad[0].replace("_", "-")
        raise LeashValueError(f"{path}: {flag} does not apply to --fmt {fmt} (its options: "
                              f"{', '.join(o.flag for o in known.values()) or 'none'}).",
                              file=path, key=bad[0], value=options[bad[0]])
    for k, v in options.items():
        if known[k].choices and v not in known[k].choices:
            raise LeashValueError(f"{path}: {known[k].flag} {v} is not one of "
                                  f"{', '.join(known[k].choices)}.", file=path, key=k, value=v)
    return options


def _plugins():
    return [f for f in input_formats().values() if f.read is not None]


def _one(path, found: list[str], what: str) -> str | None:
    if len(found) > 1:
        raise LeashValueError(f"{path}: {what} fits several formats ({', '.join(found)}); "
                              "choose one with --fmt.", file=path, value=found)
    return found[0] if found else None


def detect_record(path, keys, first) -> str | None:
    """The plug-in format whose ``fits`` a file's first JSON record (``first``; None for a
    Parquet file, whose columns are ``keys``) fits, or None; two fitting is an error.
    """
    keys = set(keys)
    return _one(path, [f.name for f in _plugins() if f.fits and f.fits(keys, first)],
                "the first record")


def detect_document(path) -> str | None:
    """The plug-in format of a zip archive or of a ``.json`` file holding one JSON document that
    is not JSON lines (pretty-printed, or one object on one line), or None: the JSON-lines and
    table detection of :func:`leash_eval.formats.detect` go on. A document of no known layout
    is an error naming what each document format needs.
    """
    from leash_eval import documents

    path = Path(path)
    name = path.name.lower()
    with open(path, "rb") as fh:
        head = fh.read(4)
    archives = [f for f in _plugins() if f.archive]
    if head == b"PK\x03\x04" or any(name.endswith(f.archive) for f in archives):
        by_name = [f.name for f in archives if name.endswith(f.archive)]
        return _one(path, by_name or [f.name for f in archives], "the zip archive")
    if not name.endswith((".json", ".json.gz")):
        return None
    docs = [f for f in _plugins() if f.fits_document]
    try:
        first = documents.first_line(path)
    except (OSError, EOFError):
        return None  # the reader of the file says what is wrong with it
    try:
        rec = json.loads(first)
        if not (isinstance(rec, dict) and any(f.fits_document(rec) for f in docs)):
            return None  # a JSON line (or JSON lines): the JSON-lines detection decides
    except (ValueError, RecursionError):
        if not first.lstrip().startswith(b"{"):
            return None
    doc, _ = documents.load(path)
    found = _one(path, [f.name for f in docs if f.fits_document(doc)], "the JSON document")
    if found or not isinstance(doc, dict):
        return found
    entry = next(iter(doc.items()), None)
    raise LeashValueError(
        f"{path}: one JSON document (not JSON lines) of no known layout (first entry: "
        f"{json.dumps(entry)[:60]}); " + "; ".join(f"{f.name} needs {f.signature}"
                                                   for f in docs) + ".", file=path,
        param="fmt")


def relation(con, path, fmt: str, *, options: dict | None = None):
    """The samples of a file of a plug-in format, as a DuckDB relation of
    :data:`leash_eval.evaluators.RELATION_COLUMNS` (lazy for the JSON-lines readers).

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
    path : path-like
    fmt : str
        A plug-in format (:func:`plugin`).
    options : dict, optional
        Its reader options (None values ignored; another option is a ValueError naming it).
    """
    path = Path(path)
    f = plugin(fmt)
    if f is None:
        raise LeashValueError(f"{path}: --fmt {fmt} is not a format with a reader of its own; "
                              f"those: {', '.join(x.name for x in _plugins())}.", file=path,
                              param="fmt", value=fmt)
    return f.read(con, path, check_options(path, fmt, options))
