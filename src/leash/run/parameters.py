"""Notebook parameters: what a notebook's ``parameters`` cell declares, and the rules values obey.

A notebook declares its parameters as papermill expects them, typed literals with a help comment in
the cell tagged ``parameters`` (``zeta: float = 0.05  # miss probability``), and
:func:`notebook_parameters` reads that cell with papermill's own
:func:`papermill.inspect_notebook`. A parameter that may be "not given" defaults to ``None`` under
an ``Optional`` annotation written as a string, which papermill parses and the cell runs without
importing :mod:`typing` (``estimator: "Optional[str]" = None  # None: the study's``); it accepts
None and values of the inner type. What papermill does not do is written here: checking values
against the annotations and against :data:`PARAMETER_RULES` (one table of range rules keyed by
parameter name, shared by every notebook), and refusing an unknown name with the closest known one
(papermill only logs a warning), each with a one-line :class:`ParameterError`. The runner
(:mod:`leash_eval.run.reproduce`) checks before any kernel starts; the notebook checks again in its
first code cell (:func:`leash.run.notebook.start`), so that JupyterLab, nbconvert and plain
papermill give the same messages.
"""

from __future__ import annotations

import ast
import numbers
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from leash.errors import LeashTypeError, LeashValueError, closest
from leash.limits import INT64_MAX
from leash.paths import REPO, shown
from leash.sources.choices import PAPER

__all__ = ["PARAMETER_RULES", "NotebookParameter", "ParameterError", "Rule",
           "annotation_text", "notebook_parameters", "validate_parameters"]



class ParameterError(LeashValueError):
    """A notebook parameter is unknown, of the wrong type, or out of range: a
    :class:`leash.errors.LeashValueError` whose ``key`` is the parameter's name, ``value`` its
    value, ``constraint`` what it must be (a rule's description, an annotation) and ``file``
    the notebook, where the check has them.

    Inside a notebook, IPython shows it as its one-line message, without a traceback.
    """

    def _render_traceback_(self):  # IPython's hook: what to show instead of a traceback
        return [f"ParameterError: {self}"]


@dataclass(frozen=True)
class Rule:
    """A range rule for a parameter: ``check(value)`` is True for valid values."""

    description: str
    check: Callable[[object], bool]


def _is_int(v) -> bool:
    """An int (not a bool) within the 64-bit range, which numpy and the readers hold: beyond it
    a kernel would fail far from the parameter (``-p n_boot 99999999999999999999999``).
    """
    return (isinstance(v, numbers.Integral) and not isinstance(v, bool)
            and -INT64_MAX - 1 <= v <= INT64_MAX)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _one_of(module: str, name: str):
    """A check: a member of ``leash.<module>.<name>`` (imported when first used)."""
    import importlib

    return lambda v: v in getattr(importlib.import_module(f"leash.{module}"), name)


def _study_ok(v) -> bool:
    """``study`` as :func:`leash.artifacts.open_study` resolves it: ``"paper"``, a shipped
    study name, or an existing file (relative: to the working directory or the repository).
    """
    from leash.sources.study import list_studies

    if not isinstance(v, str) or not v:
        return False
    return v == PAPER or v in list_studies() or Path(v).is_file() or (REPO / v).is_file()


_INT_1 = Rule("an int >= 1", lambda v: _is_int(v) and v >= 1)
_OPEN_01 = Rule("a float in the open interval (0, 1)", lambda v: _is_real(v) and 0 < v < 1)
#: Range rules shared by every notebook, keyed by parameter name.
PARAMETER_RULES: dict[str, Rule] = {
    "zeta": _OPEN_01, "level": _OPEN_01, "k": _INT_1, "budget": _INT_1, "min_count": _INT_1,
    "ks": Rule("a non-empty list of ints >= 1 (None, where a notebook allows it: the study's "
               "budgets)", lambda v: isinstance(v, list) and len(v) > 0
               and all(_is_int(x) and x >= 1 for x in v)),
    "n_boot": Rule("0 (no bootstrap) or an int >= 2",
                   lambda v: _is_int(v) and (v == 0 or v >= 2)),
    "seed": Rule("an int >= 0", lambda v: _is_int(v) and v >= 0),
    "na": Rule("one of leash.core.entropy.NA_RULES ('truncated', 'class', 'drop'), or None "
               "(the study's rule, else the paper's)", _one_of("core.entropy", "NA_RULES")),
    "estimator": Rule("one of leash.core.passk.ESTIMATORS ('first-k', 'unbiased'), or None where "
                      "a notebook allows it (the study's, else unbiased)",
                      _one_of("core.passk", "ESTIMATORS")),
    "study": Rule(f"{PAPER!r} (the paper's printed numbers), the name of a study in "
                  f"data/studies/ ('demo' is the simulated one), or the path of a study file",
                  _study_ok),
}

_NO_LITERAL = object()


@dataclass(frozen=True)
class NotebookParameter:
    """One parameter of a notebook's ``parameters`` cell (``default``: its source text)."""

    name: str
    type_name: str | None
    default: str
    help: str = ""
    value: object = field(default=_NO_LITERAL, repr=False, compare=False)

    @property
    def has_literal_default(self) -> bool:
        """Whether the default is a Python literal (then ``value`` holds it)."""
        return self.value is not _NO_LITERAL


def _literal(src: str):
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_LITERAL


def _syntax_tree_parameters(source: str) -> dict[str, tuple[str | None, str]]:
    """Name -> (annotation, default source) of a cell's top-level assignments.

    Papermill's line-based regular expression skips ``x: str | None = None`` and ``a = b = 1``
    (it logs a warning); Python's own parser does not.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            out[node.target.id] = (ast.unparse(node.annotation), ast.unparse(node.value))
        for t in node.targets if isinstance(node, ast.Assign) else ():
            if isinstance(t, ast.Name):
                out[t.id] = (None, ast.unparse(node.value))
    return out


def notebook_parameters(path) -> dict[str, NotebookParameter]:
    """The parameters declared in a notebook's cell tagged ``parameters``.

    Read by :func:`papermill.inspect_notebook` (name, annotation, default as written, help
    comment); the assignments its regular expression skips come from the cell's syntax tree.

    Parameters
    ----------
    path : str or path-like
        The notebook (a ParameterError naming it if it cannot be read: a byte that is not
        UTF-8 names its line).

    Returns
    -------
    dict of str to NotebookParameter
        In the cell's order; empty if the notebook has no ``parameters`` cell.
    """
    import papermill

    from leash import notebook_files

    try:
        nb = notebook_files.read(path)
    except LeashValueError as exc:  # its message names the file, the line and the byte
        raise ParameterError(exc) from None
    except Exception as exc:
        raise ParameterError(f"Cannot read notebook {shown(path)}: {type(exc).__name__}: "
                             f"{exc}", file=shown(path)) from None
    cell = next((c for c in nb.cells if "parameters" in c.metadata.get("tags", [])), None)
    if cell is None:
        return {}
    out = {n: NotebookParameter(n, None if p["inferred_type_name"] == "None"
                                else p["inferred_type_name"], p["default"], p["help"],
                                _literal(p["default"]))
           for n, p in papermill.inspect_notebook(nb).items()}
    for name, (ann, default) in _syntax_tree_parameters(cell.source).items():
        if name not in out:
            out[name] = NotebookParameter(name, ann, default, "", _literal(default))
    return out


_TYPES = {int: _is_int, float: _is_real, str: lambda v: isinstance(v, str),
          bool: lambda v: isinstance(v, bool), dict: lambda v: isinstance(v, dict)}
_NAMES = {t.__name__: t for t in (int, float, str, bool, list, dict, tuple)} | {
    "None": None, "List": list, "Dict": dict, "Tuple": tuple, "Sequence": Sequence,
    "Optional": typing.Optional, "Union": typing.Union}
_UNKNOWN = object()


def _annotation(text: str):
    """The type an annotation's text names (``"list[int]"``, ``"str | None"``), else
    ``_UNKNOWN`` (a class or a ``Literal`` of the notebook's: not checked).
    """
    try:
        tp = eval(text.strip("'\""), {"__builtins__": {}}, _NAMES)
    except Exception:
        return _UNKNOWN
    return tp if tp is None or isinstance(tp, type) or typing.get_origin(tp) else _UNKNOWN


def _fits(value, tp) -> bool:
    """Whether ``value`` fits the type ``tp`` (a bool is no int, an int is a float, a list
    fits list/tuple/Sequence, a dict's items are not checked).
    """
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if tp is None or tp is type(None):
        return value is None
    if (origin or tp) in (list, tuple, Sequence):
        return isinstance(value, list) and (not args or all(_fits(x, args[0]) for x in value))
    return _TYPES.get(origin or tp, lambda v: True)(value)


def did_you_mean(name: str, known) -> str:
    """`` Did you mean 'x'?`` for the known name closest to a misspelt ``name``, or ``""``."""
    match = closest(name, known)
    return f" Did you mean {match!r}?" if match else ""


def _check(who: str, p: NotebookParameter, value, where: str, rules, file=None) -> None:
    """One value against the annotation of ``p`` (or the type of its literal default) and the
    rule of its name; None is "not given" where the annotation allows it.
    """
    if p.type_name is not None:
        tp, shown = _annotation(p.type_name), p.type_name
    elif p.has_literal_default and p.value is not None:
        tp = type(p.value)
        shown = f"{tp.__name__} (the type of its default {p.default})"
    else:
        tp = shown = _UNKNOWN
    if value is None and (p.value is None if tp is _UNKNOWN else _fits(None, tp)):
        return
    parts = {"key": p.name, "value": value, "file": file}
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and not _is_int(value):
        raise ParameterError(f"{who}: parameter {p.name!r} = {value!r}{where} is beyond the "
                             "64-bit integer range.",
                             constraint="an int within the 64-bit integer range", **parts)
    if tp is not _UNKNOWN and not _fits(value, tp):
        raise ParameterError(f"{who}: parameter {p.name!r} = {value!r}{where} has type "
                             f"{type(value).__name__}; its annotation asks for {shown}.",
                             constraint=f"of type {shown}" + (" (its annotation)" if
                                                              p.type_name else ""), **parts)
    rule = rules.get(p.name)
    try:
        ok = rule is None or bool(rule.check(value))
    except Exception:
        ok = False
    if not ok:
        raise ParameterError(f"{who}: parameter {p.name!r} = {value!r}{where} breaks the rule "
                             f"for {p.name!r}: it must be {rule.description}.",
                             constraint=rule.description, **parts)


def validate_parameters(path, parameters=None, *, declared=None, rules=None, label=None):
    """Check parameters against a notebook's parameters cell and the shared range rules.

    Parameters
    ----------
    path : str or path-like
        The notebook.
    parameters : dict, optional
        Values to inject (name -> value). Tuples are converted to lists.
    declared : dict of str to NotebookParameter, optional
        The result of :func:`notebook_parameters`, if already computed.
    rules : dict of str to Rule, optional
        Default :data:`PARAMETER_RULES`.
    label : str, optional
        How messages name the notebook; default ``"Notebook <stem>"``.

    Returns
    -------
    dict
        Every literal default of the cell, updated with ``parameters``. A ParameterError names
        the notebook, the parameter, the value and what was expected: an unknown name (with
        the closest known one), a wrong type, or a value (or default) that breaks its rule.
    """
    who = label or f"Notebook {Path(path).stem}"
    file = None if label else shown(path)  # for the errors (``start``'s notebook has none)
    declared = notebook_parameters(path) if declared is None else declared
    parameters = {k: list(v) if isinstance(v, tuple) else v for k, v in (parameters or {}).items()}
    if not all(isinstance(k, str) for k in parameters):
        raise LeashTypeError(f"Parameter names of {who} must be str. Got {list(parameters)}.",
                             value=next(k for k in parameters if not isinstance(k, str)))
    for name in sorted(set(parameters) - set(declared)):
        known = ", ".join(declared) or "(none: the notebook has no cell tagged 'parameters')"
        raise ParameterError(f"{who}: unknown parameter {name!r}.{did_you_mean(name, declared)} "
                             f"Parameters of this notebook: {known}.", key=name,
                             value=parameters[name], file=file)
    effective = {n: p.value for n, p in declared.items() if p.has_literal_default} | parameters
    for name, value in effective.items():
        where = "" if name in parameters else " (the default in its parameters cell)"
        _check(who, declared[name], value, where, PARAMETER_RULES if rules is None else rules,
               file)
    return effective


def annotation_text(annotation) -> str | None:
    """An evaluated annotation (``int``, ``list[int]``, ``str | None``) as the text
    :func:`validate_parameters` reads (``"int"``, ``"list[int]"``, ``"str | None"``).
    """
    if annotation is None or isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return str(annotation).replace("typing.", "")
