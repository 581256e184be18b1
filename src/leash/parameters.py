"""Notebook parameters: what a notebook declares, and the rules every value must follow.

A notebook declares its parameters in the cell tagged ``parameters`` as typed literals with a
help comment, ``zeta: float = 0.05  # miss probability ...``. Two routes check values against
that cell and against :data:`PARAMETER_RULES` (one declarative table of range rules keyed by
parameter name, shared by all notebooks), with one message template:

* the runner (:mod:`leash.reproduce`), before any kernel starts, reading the cell with
  :func:`notebook_parameters` (papermill's :func:`papermill.inspect_notebook` plus the syntax
  tree, for the annotations papermill's regular expression cannot parse);
* the notebook itself, in its first code cell (:func:`leash.notebook.start`), so that
  JupyterLab, ``jupyter nbconvert --execute`` and plain ``papermill -p`` give the same message.

An unknown name stops with the closest known one (papermill itself only logs a warning); a
value of the wrong type or out of range stops with a one-line :class:`ParameterError` naming the
notebook, the parameter, the value and what was expected.
"""

from __future__ import annotations

import ast
import difflib
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ._paths import REPO

__all__ = ["PARAMETER_RULES", "NotebookParameter", "ParameterError", "Rule",
           "annotation_text", "notebook_parameters", "validate_parameters"]

PAPER = "paper"  # the paper's printed numbers (leash.artifacts.PAPER)


class ParameterError(ValueError):
    """A notebook parameter is unknown, of the wrong type, or out of range.

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
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _estimators():
    from .passk import ESTIMATORS

    return ESTIMATORS


def _na_rules():
    from .entropy import NA_RULES

    return NA_RULES


def _study_ok(v) -> bool:
    """``study`` as :func:`leash.artifacts.open_study` resolves it: ``"paper"``, a shipped
    study name, or an existing file (relative: to the working directory or the repository)."""
    from .study import list_studies

    if not isinstance(v, str) or not v:
        return False
    return v == PAPER or v in list_studies() or Path(v).is_file() or (REPO / v).is_file()


#: Range rules shared by every notebook, keyed by parameter name.
PARAMETER_RULES: dict[str, Rule] = {
    "zeta": Rule("a float in the open interval (0, 1)", lambda v: _is_real(v) and 0 < v < 1),
    "level": Rule("a float in the open interval (0, 1)", lambda v: _is_real(v) and 0 < v < 1),
    "k": Rule("an int >= 1", lambda v: _is_int(v) and v >= 1),
    "budget": Rule("an int >= 1", lambda v: _is_int(v) and v >= 1),
    "ks": Rule("a list of ints >= 1 (empty, where a notebook allows it: the study's budgets)",
               lambda v: isinstance(v, list) and all(_is_int(x) and x >= 1 for x in v)),
    "min_count": Rule("an int >= 1", lambda v: _is_int(v) and v >= 1),
    "n_boot": Rule("0 (no bootstrap) or an int >= 2",
                   lambda v: _is_int(v) and (v == 0 or v >= 2)),
    "seed": Rule("an int >= 0", lambda v: _is_int(v) and v >= 0),
    "na": Rule("one of leash.entropy.NA_RULES, or empty (the study's rule, else the paper's)",
               lambda v: v == "" or v in _na_rules()),
    "estimator": Rule("one of leash.passk.ESTIMATORS, or empty where a notebook allows it (the "
                      "study's, else first-k)", lambda v: v == "" or v in _estimators()),
    "study": Rule(f"{PAPER!r} (the paper's printed numbers), the name of a study in "
                  f"data/studies/ ('demo' is the simulated one), or the path of a study file",
                  _study_ok),
}

_NO_LITERAL = object()


@dataclass(frozen=True)
class NotebookParameter:
    """One parameter of a notebook's ``parameters`` cell."""

    name: str
    type_name: str | None
    default: str
    help: str = ""
    value: object = field(default=_NO_LITERAL, repr=False, compare=False)

    @property
    def has_literal_default(self) -> bool:
        return self.value is not _NO_LITERAL


def _read_nb(path: Path):
    import nbformat

    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as exc:  # nbformat raises several types for unreadable JSON/schema
        raise ValueError(f"Cannot read notebook {path}: {type(exc).__name__}: {exc}") from None


def _parameter_cell_index(nb) -> int:
    for i, cell in enumerate(nb.cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return i
    return -1


def _literal(src: str):
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NO_LITERAL


def _parse_cell(source: str) -> dict[str, tuple[str | None, str]]:
    """name -> (annotation, default source) of the top-level assignments of a cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict[str, tuple[str | None, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                out[node.target.id] = (ast.unparse(node.annotation), ast.unparse(node.value))
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = (None, ast.unparse(node.value))
    return out


def notebook_parameters(path) -> dict[str, NotebookParameter]:
    """The parameters declared in a notebook's cell tagged ``parameters``.

    Uses :func:`papermill.inspect_notebook` (names, annotations, help comments) and, for
    assignments papermill's line-based regular expression skips (``x: str | None = None``,
    multi-target assignments), the cell's syntax tree.

    Parameters
    ----------
    path : str or path-like
        The notebook.

    Returns
    -------
    dict of str to NotebookParameter
        In the cell's order; empty if the notebook has no ``parameters`` cell.
    """
    import papermill

    path = Path(path)
    nb = _read_nb(path)
    idx = _parameter_cell_index(nb)
    if idx < 0:
        return {}
    parsed = _parse_cell(nb.cells[idx].source)
    try:
        inspected = papermill.inspect_notebook(str(path))
    except Exception:  # noqa: BLE001 - papermill cannot inspect: the syntax tree still can
        inspected = {}
    out: dict[str, NotebookParameter] = {}
    for name in [*parsed, *[n for n in inspected if n not in parsed]]:
        info = inspected.get(name, {})
        ann, default = parsed.get(name, (None, ""))
        default = info.get("default") or default  # papermill keeps the source text as written
        if ann is None and info.get("inferred_type_name") not in (None, "None"):
            ann = info["inferred_type_name"]
        out[name] = NotebookParameter(
            name=name, type_name=ann, default=default, help=info.get("help", ""),
            value=_literal(default),
        )
    return out


_TYPES = {"int": _is_int, "float": _is_real, "str": lambda v: isinstance(v, str),
          "bool": lambda v: isinstance(v, bool), "list": lambda v: isinstance(v, list),
          "dict": lambda v: isinstance(v, dict)}
_ALIASES = {"List": "list", "Dict": "dict", "Sequence": "list", "tuple": "list",
            "Tuple": "list"}


def _split_annotation(ann: str) -> tuple[str | None, str | None, bool]:
    """(outer type, element type, None allowed) of an annotation string; None if unknown."""
    a = ann.replace(" ", "").strip("'\"")
    allow_none = False
    if a.startswith("Optional[") and a.endswith("]"):
        a, allow_none = a[len("Optional["):-1], True
    parts = a.split("|")
    if len(parts) > 1:
        rest = [p for p in parts if p != "None"]
        allow_none = allow_none or len(rest) < len(parts)
        if len(rest) != 1:
            return None, None, allow_none
        a = rest[0]
    elem = None
    if "[" in a and a.endswith("]"):
        a, elem = a[: a.index("[")], a[a.index("[") + 1: -1]
        if "," in elem:  # dict[str, int] and friends: check the container only
            elem = None
    a = _ALIASES.get(a, a)
    if elem is not None:
        elem = _ALIASES.get(elem, elem)
    return (a if a in _TYPES else None), (elem if elem in _TYPES else None), allow_none


def _allows_none(p: NotebookParameter) -> bool:
    if p.type_name is not None:
        return _split_annotation(p.type_name)[2]
    return p.has_literal_default and p.value is None


def _type_of_literal(v) -> str | None:
    for name in ("bool", "int", "float", "str", "list", "dict"):
        if _TYPES[name](v):
            return name
    return None


def _type_error(p: NotebookParameter, value) -> str | None:
    """None if ``value`` fits the annotation of ``p``, else the expected type as text."""
    if p.type_name is not None:
        outer, elem, allow_none = _split_annotation(p.type_name)
        shown = p.type_name
    elif p.has_literal_default and p.value is not None:
        outer, elem, allow_none = _type_of_literal(p.value), None, False
        shown = f"{outer} (the type of its default {p.default})"
    else:
        return None
    if value is None and allow_none:
        return None
    if outer is None:
        return None  # an annotation we do not interpret (a class, a Literal...): no check
    if not _TYPES[outer](value):
        return shown
    if elem is not None and not all(_TYPES[elem](x) for x in value):
        return shown
    return None


def _closest(name: str, known) -> str:
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" Did you mean {match[0]!r}?" if match else ""


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
        The effective parameters: every literal default of the cell, updated with
        ``parameters``.

    Raises
    ------
    ParameterError
        Naming the notebook, the parameter, the value and what was expected: for an unknown
        name (with the closest known name), a wrong type, or a value (given, or a literal
        default) that breaks its rule.
    """
    path = Path(path)
    who = label or f"Notebook {path.stem}"
    declared = notebook_parameters(path) if declared is None else declared
    rules = PARAMETER_RULES if rules is None else rules
    parameters = dict(parameters or {})
    if not all(isinstance(k, str) for k in parameters):
        raise TypeError(f"Parameter names of {who} must be str. Got {list(parameters)}.")
    for name in sorted(parameters):
        if name not in declared:
            known = ", ".join(declared) if declared else "(none: the notebook has no cell " \
                                                        "tagged 'parameters')"
            raise ParameterError(
                f"{who}: unknown parameter {name!r}.{_closest(name, declared)} "
                f"Parameters of this notebook: {known}."
            )
        if isinstance(parameters[name], tuple):
            parameters[name] = list(parameters[name])
    effective = {n: p.value for n, p in declared.items() if p.has_literal_default}
    effective.update(parameters)
    for name, value in effective.items():
        where = "" if name in parameters else " (the default in its parameters cell)"
        expected = _type_error(declared[name], value)
        if expected is not None:
            raise ParameterError(
                f"{who}: parameter {name!r} = {value!r}{where} has type "
                f"{type(value).__name__}; its annotation asks for {expected}."
            )
        rule = rules.get(name)
        if value is None and _allows_none(declared[name]):
            rule = None  # "not given", as the annotation permits
        if rule is not None:
            try:
                ok = bool(rule.check(value))
            except Exception:  # noqa: BLE001 - a rule that cannot evaluate the value rejects it
                ok = False
            if not ok:
                raise ParameterError(
                    f"{who}: parameter {name!r} = {value!r}{where} breaks the "
                    f"rule for {name!r}: it must be {rule.description}."
                )
    return effective


def annotation_text(annotation) -> str | None:
    """An evaluated annotation (``int``, ``list[int]``, ``str | None``) as the text
    :func:`validate_parameters` reads (``"int"``, ``"list[int]"``, ``"str | None"``)."""
    if annotation is None:
        return None
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        return annotation.__name__
    return str(annotation).replace("typing.", "")
