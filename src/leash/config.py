"""Strict reading of configuration files: YAML without anchors, checked against a schema.

Every YAML the project reads goes through :func:`load_yaml` (a file) or :func:`load_yaml_text`
(text: a ``-p`` value, the manifest's bytes): study files (:mod:`leash.sources.study`), the
simulation config, ``-f``/``-p`` parameters and ``notebooks/runs.yaml``, field mapping files and
the data manifest. It refuses YAML anchors and aliases (a configuration file has no need of them,
and refusing them at the first anchor rules out "billion laughs" alias bombs without expanding
anything), duplicate keys, files beyond :data:`MAX_BYTES` and documents of more than
:data:`MAX_NODES` nodes (PyYAML builds some 20,000 nodes a second: a 10^6-item list would take
minutes), and records the line of every key. :func:`check` then walks the data against a
declarative schema, a small table per level built from five node kinds:

* :class:`Value`: a leaf, ``what`` (e.g. "an int >= 1") and a predicate;
* :class:`Fields`: a mapping with a fixed set of keys (unknown keys are rejected with the
  closest known one, by :mod:`difflib`), some required, optionally exactly one of a group,
  optionally keys that apply only with another (``needs``);
* :class:`MapOf`: a mapping with free keys (e.g. benchmark names), each value one schema;
* :class:`ListOf`: a list whose items follow one schema;
* :class:`Either`: a scalar or a mapping (e.g. a preset name or the fields it stands for).

``null`` (an empty YAML value) for an optional key means "not given". Every problem is reported
as :class:`ConfigError` (a ValueError) with a one-line message of one template::

    study file s.yaml, line 4: `benchmarks.MATH500.budget` must be an int >= 1, got true (bool)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path

import yaml

from leash.errors import LeashValueError, closest

__all__ = ["ConfigError", "NotYamlError", "Either", "Fields", "ListOf", "MapOf", "MAX_BYTES",
           "MAX_NODES", "Value", "check", "load_yaml", "load_yaml_text", "one_line_yaml_error",
           "show"]

#: Bytes of a YAML file read at most (the largest shipped one, the manifest, has some 13,000).
MAX_BYTES = 1 << 20
#: YAML nodes (scalars, lists, mappings) of one document at most.
MAX_NODES = 50_000


class ConfigError(LeashValueError):
    """A configuration file is unreadable or breaks its schema (the message is one line); a
    ValueError with the attributes of :mod:`leash.errors`: ``line``, and where the schema is
    broken ``key`` (the key path, ``benchmarks.A.budget``) and ``value``.
    """


class NotYamlError(ConfigError):
    """The text is not YAML at all (a syntax error), rather than YAML this loader refuses (an
    anchor, a duplicate key, too large): a caller that also takes plain text (the runner's
    ``-p NAME VALUE``) catches this one.
    """


class _Problem(Exception):
    """Raised inside the loader; turned into a ConfigError naming the file."""

    def __init__(self, line: int | None, message: str):
        super().__init__(message)
        self.line, self.message = line, message


def one_line_yaml_error(exc: yaml.YAMLError) -> tuple[int | None, str]:
    """The 1-based line (or None) and a one-line reason of a PyYAML error."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    text = ", ".join(str(p) for p in parts if p) or str(exc)
    return (mark.line + 1 if mark is not None else None), " ".join(text.split())


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors, aliases and duplicate keys and records key lines."""

    kind = "configuration file"  # set per load, for the messages

    def __init__(self, stream):
        super().__init__(stream)
        self.nodes = 0
        # id(container) -> {key: line} for mappings, [line of each item] for lists. The
        # containers are alive as long as the loaded data is, so the ids stay valid.
        self.lines: dict[int, dict | list] = {}

    def compose_node(self, parent, index):
        event = self.peek_event()
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _Problem(event.start_mark.line + 1,
                           f"more than {MAX_NODES:,} YAML values: too large for a {self.kind}")
        if event.anchor is not None:  # an anchor (&name) or an alias (*name)
            kind = "alias" if isinstance(event, yaml.AliasEvent) else "anchor"
            mark = "*" if kind == "alias" else "&"
            raise _Problem(event.start_mark.line + 1,
                           f"YAML {kind} {mark}{event.anchor} refused: a {self.kind} has no need "
                           "of anchors or aliases (write each value out), and refusing them rules "
                           "out alias bombs")
        return super().compose_node(parent, index)

    def _construct_map(self, node):
        data: dict = {}
        yield data
        self.flatten_mapping(node)
        lines: dict = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, Hashable):
                raise _Problem(line, f"a key must be a plain value, got {show(key)}")
            if key in lines:
                raise _Problem(line, f"duplicate key `{key}` (first on line {lines[key]})")
            lines[key] = line
            data[key] = self.construct_object(value_node)
        self.lines[id(data)] = lines

    def _construct_seq(self, node):
        data: list = []
        yield data
        data.extend(self.construct_sequence(node))
        self.lines[id(data)] = [n.start_mark.line + 1 for n in node.value]


_StrictLoader.add_constructor("tag:yaml.org,2002:map", _StrictLoader._construct_map)
_StrictLoader.add_constructor("tag:yaml.org,2002:seq", _StrictLoader._construct_seq)


def load_yaml(path: str | Path, where: str, kind: str = "configuration file"
              ) -> tuple[object, dict]:
    """Read one YAML document strictly: ``(data, lines)``; ConfigError naming ``where``.

    ``kind`` names the sort of file in messages ("study file").

    ``lines`` maps ``id(container)`` to the line of each key (mappings) or item (lists), for
    :func:`check`. Anchors and aliases are refused at the first one, before anything is
    expanded.
    """
    not_a_file(path, where)
    with open(path, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{where} is larger than {MAX_BYTES:,} bytes: too large for a {kind}.",
                          file=path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where} is not UTF-8 text (byte {exc.start}: {exc.reason}).",
                          file=path) from None
    return load_yaml_text(text, where, kind, file=path)


def not_a_file(path, where: str) -> None:
    """A ConfigError naming what ``path`` is when it is no regular file (a device such as
    ``/dev/zero``, a FIFO, a folder, a symlink loop); a missing file is left to ``open``.
    """
    import errno
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{where} is a symbolic link loop, not a file.", file=path) from None
        return
    what = ("a folder" if stat.S_ISDIR(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else None)
    if what:
        raise ConfigError(f"{where} is {what}, not a file.", file=path)


def load_yaml_text(text: str, where: str, kind: str = "configuration file", *, file=None
                   ) -> tuple[object, dict]:
    """:func:`load_yaml` of text (a ``-p`` value, bytes already read); ``file`` for the error."""
    path = file
    if len(text) > MAX_BYTES:
        raise ConfigError(f"{where} is longer than {MAX_BYTES:,} characters: too large for a "
                          f"{kind}.", file=path)
    loader = _StrictLoader(text)
    loader.kind = kind
    try:
        data = loader.get_single_data()
    except _Problem as p:
        raise ConfigError(f"{where}, line {p.line}: {p.message}.", file=path,
                          line=p.line) from None
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to be a {kind}.", file=path) from None
    except yaml.YAMLError as exc:
        line, reason = one_line_yaml_error(exc)
        at = f", line {line}" if line else ""
        raise NotYamlError(f"{where}{at}: not valid YAML: {reason}.", file=path,
                           line=line) from None
    finally:
        loader.dispose()
    return data, loader.lines


# --------------------------------------------------------------------------------------------
# the schema
# --------------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Value:
    """A leaf: ``what`` completes "must be ..."; ``choices`` (or a callable giving them) adds a
    "did you mean" for a near miss.
    """

    what: str
    ok: Callable[[object], bool]
    choices: Sequence[str] | Callable[[], Sequence[str]] | None = None
    known: str | None = None  # where to find the names, when there are too many to list


@dataclasses.dataclass(frozen=True)
class Fields:
    """A mapping with known keys: ``fields`` maps each key to its schema."""

    fields: Mapping[str, object]
    required: tuple[str, ...] = ()
    one_of: tuple[str, ...] = ()  # exactly one of these keys must be given
    what: str = "a mapping (key: value)"
    needs: Mapping[str, str] = dataclasses.field(default_factory=dict)  # key -> key it needs


@dataclasses.dataclass(frozen=True)
class MapOf:
    """A mapping with free keys (each checked by ``key``) and one schema for every value."""

    key: Value
    value: object
    what: str = "a mapping (key: value)"


@dataclasses.dataclass(frozen=True)
class ListOf:
    """A list whose items follow ``item``; at least ``min_len`` of them."""

    item: object
    what: str = "a list"
    min_len: int = 0


@dataclasses.dataclass(frozen=True)
class Either:
    """A scalar (``scalar``) or a mapping (``mapping``); ``what`` describes both."""

    scalar: Value
    mapping: Fields
    what: str


def show(v) -> str:
    """A value as the messages print it: ``true (bool)``, ``'maths' (str)``, ``null``."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"{str(v).lower()} (bool)"
    text = repr(v)
    if len(text) > 60:
        text = text[:57] + "..."
    kind = {dict: "mapping", list: "list"}.get(type(v), type(v).__name__)
    return f"{text} ({kind})"


def _suggest(word, choices) -> str:
    close = closest(word, choices)
    return f" (did you mean `{close}`?)" if close else ""


class _Walk:
    def __init__(self, where: str, lines: Mapping):
        self.where, self.lines = where, lines

    def fail(self, line, message, key=None, value=None):
        at = f", line {line}" if line else ""
        raise ConfigError(f"{self.where}{at}: {message}.", line=line, key=key or None,
                          value=value)

    def check(self, value, spec, path: str, line):  # noqa: C901 - one branch per schema node kind
        if isinstance(spec, Either):
            spec = (spec.mapping if isinstance(value, Mapping)
                    else dataclasses.replace(spec.scalar, what=spec.what))
        if isinstance(spec, Value):
            if not spec.ok(value):
                hint = ""
                if callable(spec.choices):  # names known only at run time: say which
                    choices = spec.choices()
                    hint = _suggest(value, choices) or (
                        f"; {spec.known}" if spec.known else f"; known: {', '.join(choices)}")
                elif spec.choices and isinstance(value, str):
                    hint = _suggest(value, spec.choices)
                self.fail(line, f"{_q(path)} must be {spec.what}, got {show(value)}{hint}", path,
                          value)
        elif isinstance(spec, ListOf):
            if not isinstance(value, (list, tuple)):
                self.fail(line, f"{_q(path)} must be {spec.what}, got {show(value)}", path, value)
            if len(value) < spec.min_len:
                self.fail(line, f"{_q(path)} must have at least {spec.min_len} item(s), got none",
                          path, value)
            item_lines = self.lines.get(id(value)) or []
            for i, item in enumerate(value):
                at = item_lines[i] if i < len(item_lines) else line
                self.check(item, spec.item, f"{path}[{i}]", at)
        elif isinstance(spec, (Fields, MapOf)):
            if not isinstance(value, Mapping):
                self.fail(line, f"{_q(path)} must be {spec.what}, got {show(value)}", path, value)
            key_lines = self.lines.get(id(value)) or {}
            if isinstance(spec, MapOf):
                for key, v in value.items():
                    at = key_lines.get(key, line)
                    if not spec.key.ok(key):
                        self.fail(at, f"the keys of {_q(path)} must be {spec.key.what}, got "
                                      f"{show(key)}", path, key)
                    self.check(v, spec.value, _join(path, key), at)
                return
            for key in value:
                if key not in spec.fields:
                    self.fail(key_lines.get(key, line),
                              f"unknown key `{_join(path, key)}`{_suggest(key, spec.fields)}; "
                              f"allowed {'here' if path else 'at the top level'}: "
                              f"{', '.join(spec.fields)}", _join(path, key), key)
            for key in spec.required:
                if key not in value:
                    self.fail(line, f"{_q(path)} lacks the required key `{key}`",
                              _join(path, key))
            if spec.one_of:
                given = [k for k in spec.one_of if value.get(k) is not None]
                if len(given) != 1:
                    self.fail(line, f"{_q(path)} must have exactly one of "
                                    f"{', '.join(spec.one_of)}; got "
                                    f"{', '.join(given) if given else 'none'}", path)
            for key, other in spec.needs.items():
                if value.get(key) is not None and value.get(other) is None:
                    self.fail(key_lines.get(key, line),
                              f"`{_join(path, key)}` applies only with `{other}`, which "
                              f"{_q(path)} does not give", _join(path, key))
            for key, v in value.items():
                if v is None and key not in spec.required:
                    continue  # null = not given
                self.check(v, spec.fields[key], _join(path, key), key_lines.get(key, line))
        else:  # pragma: no cover - a schema bug, not an input error
            raise TypeError(f"unknown schema node {spec!r}")


def _q(path: str) -> str:
    return f"`{path}`" if path else "the file"


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def check(data, schema, *, where: str, lines: Mapping | None = None) -> None:
    """Raise :class:`ConfigError` at the first place where ``data`` breaks ``schema``.

    ``where`` names the file ("study file data/studies/x.yaml"); ``lines`` comes from
    :func:`load_yaml` (without it, messages name key paths only).
    """
    _Walk(where, lines or {}).check(data, schema, "", 1 if lines else None)
