"""Errors and warnings that carry their structure, so that each layer words them itself.

A message of the library names its parameters by keyword ("The 'on_error' parameter ...",
"Pass on_error='skip' ..."); on the command line the same parameters are options
("--on-error skip"), in a study file keys ("`shared_only: true`"). So a message here is not
a finished sentence but a sequence of parts, each rendered by the layer that shows it:

* text (``str``), the same in every layer;
* :class:`Param`: a parameter, perhaps with the value a remedy passes
  (``Param("on_error", value="skip")``: ``on_error='skip'``, ``--on-error skip``);
* :class:`Call`: a function to run (``leash_eval.validate.validate(path)``, ``leash
  validate FILE``);
* :class:`Api`: text about the Python objects themselves (``attrs['provenance']``), which a
  layer without them leaves out;
* an exception: its own message, rendered by the same layer (an error that wraps another).

An error of the family, :class:`LeashError` (raised as :class:`LeashValueError`,
:class:`LeashTypeError` or :class:`LeashImportError`, so ``except ValueError`` keeps working)
or a :class:`LeashWarning`, keeps what a caller acts on as attributes: ``param`` (the
keyword), ``func``, ``value`` (the bad value) and ``got`` (as the message shows it),
``constraint`` (what the value must be), ``file``, ``line`` and ``key`` (where in an input it
is), and ``hint`` (the remedy, parts as above). ``str(error)`` is the library's wording
(:class:`Words`); another layer passes its own :class:`Words` to :meth:`LeashError.render`
(``leash_eval.cli`` names the options of the running command).

An error with a ``constraint`` and no message reads as the one template of parameter errors::

    The 'k' parameter of pass_at_k must be an int >= 1. Got 0 instead.

The metric core (numpy only, importing no other layer) raises
:class:`leash.core._validation.InvalidParameterError` with the same attributes and this
template: :meth:`Words.error` renders any exception with those attributes (duck typing), and
any other exception as its text. Pure Python: importing it loads nothing.

>>> e = LeashValueError("a.jsonl: line 3: bad.", file="a.jsonl", line=3, key="correct",
...                     hint=("Pass ", Param("on_error", value="skip"), "."))
>>> str(e)
"a.jsonl: line 3: bad. Pass on_error='skip'."
>>> (e.file, e.line, e.key, e.hint[1].name, e.hint[1].value)
('a.jsonl', 3, 'correct', 'on_error', 'skip')
>>> str(LeashValueError(param="k", func="f", value=0, constraint="an int >= 1"))
"The 'k' parameter of f must be an int >= 1. Got 0 instead."
"""

from __future__ import annotations

import reprlib

__all__ = ["LIBRARY", "Api", "Call", "LeashError", "LeashImportError", "LeashTypeError",
           "LeashValueError", "LeashWarning", "Param", "SkipNotebook", "Words", "closest"]

_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 80


def _shown(value) -> str:
    """A bad value as a message shows it: its repr, shortened, on one line."""
    return " ".join(_REPR.repr(value).split())


class _NoValue:
    def __repr__(self):
        return "<no value>"

    def __reduce__(self):  # one object, also after pickling
        return "_NO_VALUE"


_NO_VALUE = _NoValue()


class Param:
    """A parameter named in a message: its keyword (or keywords, named together), the value a
    remedy passes (``...`` for "some value"), and the function when a message names another
    function's parameter (``the 'gold' parameter of rescore_file``).
    """

    __slots__ = ("names", "value", "func")

    def __init__(self, *names: str, value=_NO_VALUE, func: str | None = None):
        if not names or (len(names) > 1 and value is not _NO_VALUE):
            raise TypeError("Param takes one keyword with a value, or keywords without one")
        self.names, self.value, self.func = names, value, func

    @property
    def name(self) -> str:
        """The (first) keyword."""
        return self.names[0]

    @property
    def has_value(self) -> bool:
        """Whether the reference passes a value (``on_error='skip'``)."""
        return self.value is not _NO_VALUE

    def __eq__(self, other):
        return (isinstance(other, Param) and (self.names, self.func) == (other.names, other.func)
                and (self.value is other.value or self.value == other.value))

    __hash__ = None

    def __repr__(self):
        value = "" if not self.has_value else f", value={self.value!r}"
        func = "" if self.func is None else f", func={self.func!r}"
        return f"Param({', '.join(map(repr, self.names))}{value}{func})"

    def __reduce__(self):  # pickled across processes (the rescoring workers)
        return _param, (self.names, self.value, self.func)


def _param(names, value, func):
    return Param(*names, value=value, func=func)


class Call:
    """A function a message tells the reader to run: its dotted name and its arguments as
    written (``Call("leash_eval.validate.validate", "path")``).
    """

    __slots__ = ("func", "args")

    def __init__(self, func: str, args: str = ""):
        self.func, self.args = func, args

    def __eq__(self, other):
        return isinstance(other, Call) and (self.func, self.args) == (other.func, other.args)

    __hash__ = None

    def __repr__(self):
        return f"Call({self.func!r}, {self.args!r})"

    def __reduce__(self):
        return Call, (self.func, self.args)


class Api(str):
    """Text about the Python objects themselves (``attrs['provenance']``, a class name that
    a value may be), left out by a layer whose user has no such objects.
    """

    __slots__ = ()


class Words:
    """How one layer names parameters and functions; these are the library's words
    (``the 'on_error' parameter of f``, ``on_error='skip'``, ``f(path)``).

    A layer that names them otherwise subclasses it and overrides :meth:`param` (and, as
    needed, :meth:`call`, :meth:`api`, :meth:`prefix` and :meth:`invalid`).
    """

    def param(self, ref: Param, *, func: str | None = None, start: bool = False) -> str:
        """A parameter: ``the 'x' parameter [of func]`` (``The`` at the start of a sentence),
        ``the 'x' and 'y' parameters``, or with a value ``x='v'``. ``func`` is the function
        of the error, for its subject parameter.
        """
        if ref.has_value:
            return f"{ref.name}={'...' if ref.value is Ellipsis else repr(ref.value)}"
        func = ref.func or func
        names = " and ".join(repr(n) for n in ref.names)
        s = "s" if len(ref.names) > 1 else ""
        return (f"{'T' if start else 't'}he {names} parameter{s}"
                + (f" of {func}" if func else ""))

    def call(self, ref: Call) -> str:
        """A function to run: ``module.func(args)``."""
        return f"{ref.func}({ref.args})"

    def api(self, text: Api) -> str:
        """Text about the Python objects: kept."""
        return str(text)

    def prefix(self, func: str) -> str:
        """The function that raised, before a message whose subject is no parameter."""
        return f"{func}: "

    def invalid(self, exc) -> str:
        """An error with a ``constraint`` and no message: the template of parameter errors."""
        subject = self.param(Param(exc.param), func=exc.func, start=True)
        got = "" if exc.got is None else f" Got {exc.got} instead."
        return f"{subject} must be {self.constraint(exc)}.{got}"

    def constraint(self, exc) -> str:
        """What the value must be: text, or parts (``Api`` for a Python class it may be)."""
        c = exc.constraint
        return self.text(c) if isinstance(c, tuple) else str(c)

    def text(self, parts, *, func: str | None = None) -> str:
        """Parts rendered and joined; a :class:`Param` first is the subject (``func``'s)."""
        out = []
        for i, part in enumerate(parts):
            if isinstance(part, Api):
                out.append(self.api(part))
            elif isinstance(part, str):
                out.append(part)
            elif isinstance(part, Param):
                out.append(self.param(part, func=func if i == 0 else None, start=i == 0))
            elif isinstance(part, Call):
                out.append(self.call(part))
            elif isinstance(part, BaseException):
                out.append(self.error(part))
            else:
                out.append(str(part))
        return "".join(out)

    def error(self, exc: BaseException) -> str:
        """The message of any exception in these words: an error of the family renders its
        parts; one with the attributes of a parameter error (the core's) reads as
        :meth:`invalid`; any other is its text.
        """
        render = getattr(exc, "render", None)
        if callable(render):
            return render(self)
        if getattr(exc, "constraint", None) is not None and getattr(exc, "param", None):
            hint = self.text(getattr(exc, "hint", ()) or ())
            return self.invalid(exc) + (f" {hint}" if hint else "")
        return str(exc)


#: The library's words: what ``str`` of an error of the family reads.
LIBRARY = Words()


class _Structured:
    """The structure and rendering shared by :class:`LeashError` and :class:`LeashWarning`."""

    def __init__(self, *message, param: str | None = None, func: str | None = None,
                 value=None, got: str | None = None, constraint: str | tuple | None = None,
                 file=None, line=None, key: str | None = None, hint=()):
        self.message = tuple(message)
        subject = (message[0] if message and isinstance(message[0], Param)
                   and not message[0].has_value else None)  # "The 'x' parameter ..."
        inner = next((p for p in self.message if isinstance(p, BaseException)), None)

        def given_or_inner(name, given):  # what an error that wraps another does not say
            return given if given is not None or inner is None else getattr(inner, name, None)

        #: The keyword of the parameter the error is about (its subject), or None.
        self.param = given_or_inner("param", param or (subject and subject.name))
        #: The function whose parameter it is, or that raised (named before a message whose
        #: subject is no parameter: ``pair_counts: questions are not shared``).
        self.func = given_or_inner("func", func or (subject and subject.func))
        self._prefixed = func is not None and bool(message) and subject is None
        #: The bad value; ``got``: the bad value as the message shows it.
        self.value = given_or_inner("value", value)
        self.got = given_or_inner("got", got if got is not None or value is None
                                  else _shown(value))
        #: What the value must be (``an int >= 1``; text, or parts as the message's); without
        #: a message, the error reads as the template of parameter errors.
        self.constraint = given_or_inner("constraint", constraint)
        #: Where the problem is: the file, the line (a number, or the reader's location such
        #: as ``row group 0, row 5``), the key or field (``benchmarks.A.budget``, ``correct``).
        self.file = given_or_inner("file", file)
        self.line = given_or_inner("line", line)
        self.key = given_or_inner("key", key)
        #: The remedy, in parts as the message (``"Pass "``, ``Param("on_error", value="skip")``).
        self.hint = tuple([hint] if isinstance(hint, (str, Param, Call)) else hint)
        super().__init__(self.render())

    def render(self, words: Words | None = None) -> str:
        """The message in ``words`` (default: the library's, as ``str``)."""
        words = words or LIBRARY
        if self.message:
            body = words.text(self.message, func=self.func)
        else:
            body = words.invalid(self)
        if self._prefixed:
            head = words.prefix(self.func)
            body = head + body if head else body[:1].upper() + body[1:]
        hint = words.text(self.hint)
        return f"{body} {hint}" if hint else body

    def __str__(self):
        return self.render()


class LeashError(_Structured, Exception):
    """An error of leash with its structure (the module docstring); raised as one of its
    subclasses, which are also the built-in errors callers catch.
    """


class LeashValueError(LeashError, ValueError):
    """A bad value (a parameter's, a file's row, a setting's): a :class:`LeashError` and a
    ValueError.
    """


class LeashTypeError(LeashError, TypeError):
    """A value of the wrong type: a :class:`LeashError` and a TypeError."""


class LeashImportError(LeashError, ImportError):
    """An optional package that a parameter's value needs is missing (``scorer='math-verify'``
    needs math-verify): a :class:`LeashError` and an ImportError.
    """


class LeashWarning(_Structured, UserWarning):
    """A warning with the structure of :class:`LeashError` (``warnings.warn(LeashWarning(...))``),
    so a layer shows it in its own words too.
    """


class SkipNotebook(Exception):
    """Raised to say "this notebook cannot run here (its data are absent); skip the rest".

    IPython shows it, and any subclass, as one line (no traceback): :meth:`_render_traceback_`
    is that line, the whole traceback a kernel reports, and the notebook runner knows a skip
    from a failure by it (:meth:`reason_in`), whatever the subclass is called (the toolkit's
    ``DatasetUnavailableError`` is one). Raise it only for missing *external* data, never to
    hide a bug.

    >>> SkipNotebook.reason_in(SkipNotebook("no mirror")._render_traceback_())
    'no mirror'
    >>> SkipNotebook.reason_in(["Traceback (most recent call last):", "..."]) is None
    True
    """

    #: The start of the one line IPython shows.
    PREFIX = "Skipped: "

    def _render_traceback_(self):  # IPython's hook: what to show instead of a traceback
        return [f"{self.PREFIX}{self}"]

    @classmethod
    def reason_in(cls, traceback) -> str | None:
        """The reason of a skip, given the traceback a kernel reported (a list of lines), or
        None when that traceback is not a skip's.
        """
        lines = list(traceback or [])
        if len(lines) == 1 and isinstance(lines[0], str) and lines[0].startswith(cls.PREFIX):
            return lines[0][len(cls.PREFIX):]
        return None


def closest(word, choices, *, cutoff: float = 0.6):
    """The choice a misspelt ``word`` most likely meant (for a "did you mean"), or None.

    A choice equal to ``word`` but for case and punctuation (``MATH500`` for ``math500``,
    ``LiveBench-R`` for ``livebench_r``) first; else difflib's closest match above ``cutoff``
    (the one way leash suggests: study keys and labels, notebook parameters, mapping keys,
    columns). Each caller words the suggestion itself.

    >>> closest("sectoins", ["sections", "benchmarks"])
    'sections'
    >>> closest("math500", ["MATH500", "AIME2024"])
    'MATH500'
    >>> closest("zzz", ["sections"]) is None
    True
    """
    import difflib

    choices = [str(c) for c in choices]
    key = _folded(word)
    same = [c for c in choices if _folded(c) == key and c != str(word)]
    if key and same:
        return same[0]
    hit = difflib.get_close_matches(str(word), choices, n=1, cutoff=cutoff)
    if hit:
        return hit[0]
    folded = {_folded(c): c for c in reversed(choices)}
    hit = difflib.get_close_matches(key, list(folded), n=1, cutoff=cutoff)
    return folded[hit[0]] if hit else None


def _folded(word) -> str:
    """``word`` lower-cased without punctuation or spaces: what :func:`closest` compares."""
    return "".join(ch for ch in str(word).casefold() if ch.isalnum())
