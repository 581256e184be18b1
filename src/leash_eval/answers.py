r"""Final-answer extraction, normalization and answer equivalence classes.

Extraction (:func:`extract`, :func:`extract_answer`)
---------------------------------------------------
An answer is found by trying named steps in a fixed order; the first step that finds a
non-empty answer wins. The steps:

``answer_tag``
    the content of the **last** ``<answer>...</answer>`` pair; if that content holds a
    ``\boxed{}``, the content of its last box;
``boxed``
    the content of the **last complete** ``\boxed{...}`` or ``\fbox{...}`` in the text, with
    balanced braces (nested ``{}`` allowed). A box whose closing brace is missing (a truncated
    response) is skipped;
``gsm8k``
    the rest of the line after the **last** ``####`` (GSM8K's answer marker, Cobbe et al. 2021:
    "#### 72");
``answer_is``
    the **last** "the answer is X" / "the final answer is X" (any case, an optional colon), or a
    line starting "Answer: X" / "Final answer: X"; X runs to the end of its sentence (a period
    followed by a blank or the end of the text) or of its line, without markdown ``**``;
``think``
    the **whole** stripped text after the last ``</think>`` (the paper's step 3 takes "the
    content after </think>"; taking only its last line would be a guess), if non-empty;
``last_number``
    the **last** number of the text (optional sign, digits with optional thousands commas,
    optional decimals), the last resort of GSM8K-style graders.

Two orders are used (:data:`METHODS` lists every step):

* :data:`MATH_METHODS` (the default of :func:`extract` and :func:`extract_answer`, and of
  ``leash rescore --extract leash``): ``answer_tag``, ``boxed``, ``gsm8k``, ``answer_is``,
  ``last_number``: the explicit markers first, most explicit first, then the final number.
  ``think`` is not part of it: the text after ``</think>`` of a math response is a paragraph,
  not an answer.
* :data:`REASONING_GYM_METHODS`: ``answer_tag``, ``boxed``, ``think``: the paper's Reasoning Gym
  hierarchy (arXiv 2507.14843v4, App. B.3), used by the ``reasoning-gym`` scorer of
  :mod:`leash_eval.rescore`. Reasoning Gym answers are often not numbers, so no number fallback.

When no step finds anything the answer is missing (``None``), which the entropy code counts as
the paper's "NA" class and :mod:`leash_eval.rescore` counts as "no extractable answer". Which steps
are tried, and in which order, is the ``methods`` parameter. The paper extracts answers for its
entropy study (Table 5) with Lighteval, whose exact configuration it does not give; this module
is a documented stand-in, and math-verify (which Lighteval uses) is available for answer
equivalence below and for verification in :mod:`leash_eval.rescore`.

Normalization (:func:`normalize_answer`)
----------------------------------------
A small, fixed sequence of *meaning-preserving* rewrites, modelled on the MATH normalizer of
Hendrycks et al. (2021, ``strip_string``), applied in this order:

1. strip whitespace; unwrap one pair of math delimiters enclosing the whole answer (``$...$``,
   ``$$...$$``, ``\(...\)``, ``\[...\]``) and one ``\boxed{...}`` enclosing the whole answer;
2. delete layout-only commands: ``\left``, ``\right``, ``\displaystyle``, and the spacing
   commands ``\!``, ``\,``, ``\;``, ``\:``, ``\ ``, ``\quad``, ``\qquad``, ``~``;
3. ``\dfrac`` and ``\tfrac`` become ``\frac``;
4. unwrap text-style groups ``\text{..}``, ``\textbf{..}``, ``\textrm{..}``, ``\mathrm{..}``,
   ``\mathbf{..}``, ``\mbox{..}`` to their content;
5. delete degree, percent and dollar marks (``^\circ``, ``^{\circ}``, ``\%``, ``%``, ``\$``);
6. delete a trailing period;
7. ``lhs = rhs`` where ``lhs`` is a single variable (a letter, optionally with a subscript)
   becomes ``rhs`` ("x = 5" -> "5");
8. whitespace: runs collapse; a blank survives only between two letters (so that "\pi r" keeps
   its meaning), all other blanks are deleted ("\frac {1} {2}" -> "\frac{1}{2}");
9. pure numbers (optional sign, digits with optional thousands separators ``,`` or ``{,}``,
   optional decimals) are written canonically with :class:`decimal.Decimal`: no thousands
   separators, no leading ``+``, no trailing fractional zeros, no exponent ("1,000.50" ->
   "1000.5", "5.0" -> "5", "-0" -> "0", ".5" -> "0.5").

No step guesses at meaning beyond that (no unit stripping, no ``a/b`` -> ``\frac{a}{b}``, no
numeric evaluation): mathematically equivalent but differently written answers are the job of
the math-verify equivalence below.

Equivalence (:func:`answer_classes`, :func:`canonical_answers`)
--------------------------------------------------------------
``equivalence="exact"`` (default): two answers are equivalent iff their normalized strings are
equal. ``equivalence="math-verify"`` (optional extra ``pip install math-verify``): two answers
are equivalent iff their normalized strings are equal or math-verify confirms the equivalence in
**both** directions (``verify(parse(a), parse(b)) and verify(parse(b), parse(a))``; its
``verify`` is not symmetric). Because that relation need not be transitive, classes are built
greedily: each new distinct answer joins the first earlier class whose *representative* (first
member seen) it is equivalent to, otherwise it opens a new class. Parses and verdicts are cached.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from leash.errors import LeashImportError, LeashTypeError, LeashValueError, Param

__all__ = ["EQUIVALENCES", "MATH_METHODS", "METHODS", "REASONING_GYM_METHODS", "Extracted",
           "answer_classes", "canonical_answers", "canonical_number", "equivalent", "extract",
           "extract_answer", "last_boxed", "normalize_answer", "require_math_verify"]

#: Every extraction step, by name (see the module docstring).
METHODS = ("answer_tag", "boxed", "gsm8k", "answer_is", "think", "last_number")
#: The default order, for math responses: explicit markers first, then the final number.
MATH_METHODS = ("answer_tag", "boxed", "gsm8k", "answer_is", "last_number")
#: The paper's Reasoning Gym hierarchy (arXiv 2507.14843v4, App. B.3).
REASONING_GYM_METHODS = ("answer_tag", "boxed", "think")
EQUIVALENCES = ("exact", "math-verify")

_BOX_RE = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_TAG_RE = re.compile(r"<answer>(.*?)</answer>", flags=re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = "</think>"
_GSM8K_RE = re.compile(r"####[ \t]*([^\n]*)")
# "the (final) answer is X" anywhere, or "Answer: X" / "Final answer: X" at a line start; X ends
# at a sentence end (". " or "." at the end of the text) or at the end of its line.
_ANSWER_IS_RE = re.compile(
    r"(?:\banswer\s+is\s*:?|^[ \t*#]*(?:final\s+)?answer[ \t*]*:)[ \t]*"
    r"(?P<ans>[^\n]*?)[ \t]*(?=\.[ \t]*(?:\n|$)|\.\s|\n|$)",
    flags=re.IGNORECASE | re.MULTILINE)
# A number not glued to a word or another number: "-1,234.5", "72"; the thousands form first so
# that "1,000" is one number.
_LAST_NUMBER_RE = re.compile(r"(?<![\w.])[-+]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?!\w)")


class Extracted(NamedTuple):
    """An extracted answer and the method that found it (both None when nothing was found)."""

    answer: str | None
    method: str | None


def _balanced_from(text: str, start: int) -> int | None:
    """Index of the brace closing the ``{`` at ``text[start - 1]``, or None if unbalanced."""
    # Hand-written because regular expressions cannot match nested braces; escaped braces
    # (\{ and \}) are skipped so that "\boxed{\{1,2\}}" is read correctly.
    depth = 1
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] in "{}":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def last_boxed(text: str) -> str | None:
    r"""Content of the last complete ``\boxed{...}`` / ``\fbox{...}`` of ``text`` (stripped).

    Returns None when there is none (a box without its closing brace does not count).
    """
    if not isinstance(text, str):
        raise LeashTypeError(param="text", func="last_boxed", value=text, constraint="a str",
                             got=type(text).__name__)
    for m in reversed(list(_BOX_RE.finditer(text))):
        end = _balanced_from(text, m.end())
        if end is not None:
            return text[m.end():end].strip()
    return None


def _strip_marks(ans: str) -> str:
    """An answer found in prose without markdown emphasis around it ("**42**" -> "42")."""
    return ans.strip().strip("*").strip()


def _step(m: str, text: str) -> str | None:
    """The answer one extraction step finds in ``text``, or None."""
    if m == "answer_tag":
        tags = _ANSWER_TAG_RE.findall(text)
        if tags:
            content = tags[-1]
            boxed = last_boxed(content)
            return boxed if boxed is not None else content.strip()
    elif m == "boxed":
        return last_boxed(text)
    elif m == "gsm8k":
        hits = _GSM8K_RE.findall(text)
        if hits:
            return _strip_marks(hits[-1]).rstrip(".").strip()
    elif m == "answer_is":
        for hit in reversed(list(_ANSWER_IS_RE.finditer(text))):
            ans = _strip_marks(hit.group("ans"))
            if ans:
                return ans
    elif m == "think":
        if _THINK_CLOSE in text:
            return text.rsplit(_THINK_CLOSE, 1)[1].strip()
    else:  # last_number
        hits = _LAST_NUMBER_RE.findall(text)
        if hits:
            return hits[-1]
    return None


def extract(text, *, methods: Sequence[str] = MATH_METHODS) -> Extracted:
    """Extract the final answer of one response, with the method that found it.

    Parameters
    ----------
    text : str or None
        Response text. None or NaN (no response) gives ``Extracted(None, None)``.
    methods : sequence of str, default MATH_METHODS
        Extraction steps to try, in order: names from :data:`METHODS`; the default is
        ``("answer_tag", "boxed", "gsm8k", "answer_is", "last_number")``, and
        :data:`REASONING_GYM_METHODS` is the paper's Reasoning Gym hierarchy (see the module
        docstring).

    Returns
    -------
    Extracted
        ``(answer, method)``; the answer is the raw (not normalized) stripped string.
    """
    if isinstance(methods, str):
        raise LeashTypeError(param="methods", func="extract", value=methods, constraint=(
            "a sequence of method names, not a single str"))
    for m in methods:
        if m not in METHODS:
            raise LeashValueError(Param("methods", func="extract"), " must contain only "
                                  f"{METHODS}. Got {m!r}.", value=m)
    if text is None or (isinstance(text, float) and text != text):
        return Extracted(None, None)
    if not isinstance(text, str):
        raise LeashTypeError(param="text", func="extract", value=text, constraint="a str or None",
                             got=type(text).__name__)
    for m in methods:
        ans = _step(m, text)
        if ans:
            return Extracted(ans, m)
    return Extracted(None, None)


def extract_answer(text, *, methods: Sequence[str] = MATH_METHODS) -> str | None:
    r"""The raw final answer of one response, or None ("NA"); see :func:`extract`.

    Parameters
    ----------
    text : str or None
        The response.
    methods : sequence of str, default MATH_METHODS
        Extraction steps tried in order (``<answer>`` tag, last ``\boxed{}``, ``#### X``,
        "The answer is X", the last number); :data:`REASONING_GYM_METHODS` for the paper's
        Reasoning Gym hierarchy.

    Returns
    -------
    str or None
        The extracted answer before normalization, None when nothing is found.

    Examples
    --------
    >>> extract_answer("... The answer is 245.")
    '245'
    >>> extract_answer("<think>2+2</think> so 4", methods=REASONING_GYM_METHODS)
    'so 4'
    """
    return extract(text, methods=methods).answer


# ----------------------------------------------------------------------------- normalization

_DELIMS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_LAYOUT_RE = re.compile(r"\\left(?![a-zA-Z])|\\right(?![a-zA-Z])|\\displaystyle(?![a-zA-Z])"
                        r"|\\qquad(?![a-zA-Z])|\\quad(?![a-zA-Z])|\\[!,;: ]|~")
_TEXT_RE = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox)\s*\{")
_MARKS_RE = re.compile(r"\^\s*\{\s*\\circ\s*\}|\^\s*\\circ(?![a-zA-Z])|\\%|%|\\\$")
_VAR_EQ_RE = re.compile(r"^\s*[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?\s*=\s*(?P<rhs>[^=]+)$")
_NUMBER_RE = re.compile(
    r"^(?P<sign>[+-]?)(?P<int>\d{1,3}(?:(?:,|\{,\})\d{3})+|\d*)(?P<frac>\.\d+)?$"
)


def _unwrap_delims(s: str) -> str:
    for left, right in _DELIMS:
        if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
            inner = s[len(left):len(s) - len(right)]
            if left == "$" and "$" in inner:
                continue  # "$a$ and $b$" is not one enclosed formula
            return inner.strip()
    return s


def _unwrap_whole_box(s: str) -> str:
    m = _BOX_RE.match(s)
    if m:
        end = _balanced_from(s, m.end())
        if end == len(s) - 1:
            return s[m.end():end].strip()
    return s


def _unwrap_text(s: str) -> str:
    while True:
        m = _TEXT_RE.search(s)
        if not m:
            return s
        end = _balanced_from(s, m.end())
        if end is None:
            return s
        s = s[:m.start()] + s[m.end():end] + s[end + 1:]


def canonical_number(s: str) -> str | None:
    """A plain number written canonically (step 9 of the module docstring), else None.

    Parameters
    ----------
    s : str
        An optional sign, digits with optional thousands separators (``,`` or ``{,}``) and
        optional decimals, nothing else.

    Returns
    -------
    str or None
        The number without separators, trailing zeros or a sign on zero (``"1,000.50"`` ->
        ``"1000.5"``), or None when ``s`` is not such a number.
    """
    m = _NUMBER_RE.match(s)
    if not m or not (m.group("int") or m.group("frac")):
        return None
    digits = re.sub(r",|\{,\}", "", m.group("int")) or "0"
    try:
        d = Decimal(m.group("sign") + digits + (m.group("frac") or ""))
    except InvalidOperation:  # pragma: no cover - the regex admits only valid literals
        return None
    if d == d.to_integral_value():
        d = d.quantize(Decimal(1))
    else:
        d = d.normalize()
    out = format(d, "f")
    return "0" if out in ("-0", "+0") else out


def normalize_answer(answer) -> str | None:
    """Normalize one extracted answer (the steps are listed in the module docstring).

    Parameters
    ----------
    answer : str, number or None
        None, NaN, blank strings and the literal ``"NA"`` stay missing (None). Numbers are
        converted with ``str`` first.

    Returns
    -------
    str or None
    """
    if answer is None or (isinstance(answer, float) and answer != answer):
        return None
    if isinstance(answer, bool) or not isinstance(answer, str | int | float | np.integer |
                                                  np.floating):
        raise LeashTypeError(param="answer", func="normalize_answer", value=answer,
                             constraint="a str, a number or None", got=type(answer).__name__)
    s = str(answer).strip()
    # The steps are applied until nothing changes (removing a mark can expose a delimiter,
    # e.g. "%$$"), so that normalizing twice equals normalizing once.
    for _ in range(8):
        if s == "" or s == "NA":
            return None
        out = _normalize_once(s)
        if out == s:
            break
        s = out
    return s if s and s != "NA" else None


def _normalize_once(s: str) -> str:
    # 1. enclosing delimiters and box (repeated: "$\boxed{5}$")
    prev = None
    while prev != s:
        prev = s
        s = _unwrap_whole_box(_unwrap_delims(s))
    # 2.-5.
    s = _LAYOUT_RE.sub(" ", s)
    s = re.sub(r"\\[dt]frac(?![a-zA-Z])", r"\\frac", s)
    s = _unwrap_text(s)
    s = _MARKS_RE.sub("", s)
    # 6. trailing period(s)
    s = s.strip().rstrip(".").strip()
    # 7. "x = 5" -> "5"
    m = _VAR_EQ_RE.match(s)
    if m:
        s = m.group("rhs").strip()
    # 8. whitespace
    s = re.sub(r"\s+", " ", s)
    s = re.sub(r"(?<![A-Za-z]) | (?![A-Za-z])", "", s)
    # 9. pure numbers
    num = canonical_number(s)
    if num is not None:
        s = num
    return s


# ----------------------------------------------------------------------------- equivalence


def require_math_verify(param: str = "equivalence"):
    """The math_verify module, or an ImportError saying that ``param='math-verify'`` needs it
    and how to install it.

    Parameters
    ----------
    param : str, default "equivalence"
        The parameter whose value ``"math-verify"`` needs the package (named in the error).

    Returns
    -------
    module
        ``math_verify``.
    """
    try:
        import math_verify
    except ImportError:
        raise LeashImportError(Param(param, value="math-verify"), " needs the math-verify "
                               "package: pip install math-verify (or pip install "
                               "'leash[verify]').", param=param) from None
    return math_verify


@lru_cache(maxsize=65536)
def _parsed(s: str) -> tuple:
    """math-verify parse of one normalized answer, wrapped as inline LaTeX (cached)."""
    mv = require_math_verify()
    return tuple(mv.parse(f"${s}$"))


@lru_cache(maxsize=262144)
def _verify_one_way(gold: str, pred: str) -> bool:
    mv = require_math_verify()
    g, p = _parsed(gold), _parsed(pred)
    if not g or not p:
        return False
    return bool(mv.verify(list(g), list(p)))


def equivalent(a, b, *, equivalence: str = "exact") -> bool:
    """Whether two answers fall in the same class (see the module docstring).

    Missing answers are equivalent to nothing, not even to each other; grouping them into the
    "NA" class is the entropy code's decision.
    """
    if equivalence not in EQUIVALENCES:
        raise LeashValueError(param="equivalence", func="equivalent", value=equivalence,
                              constraint=f"one of {EQUIVALENCES}")
    na, nb = normalize_answer(a), normalize_answer(b)
    if na is None or nb is None:
        return False
    if na == nb:
        return True
    if equivalence == "exact":
        return False
    return _verify_one_way(na, nb) and _verify_one_way(nb, na)


def _classes(answers: Iterable, equivalence: str, func: str):
    if equivalence not in EQUIVALENCES:
        raise LeashValueError(param="equivalence", func=func, value=equivalence,
                              constraint=f"one of {EQUIVALENCES}")
    if isinstance(answers, str):
        raise LeashTypeError(Param("answers", func=func), " must be a sequence of answers, not "
                             "a single str.", value=answers)
    if equivalence == "math-verify":
        require_math_verify()
    normalized = [normalize_answer(a) for a in answers]
    reps: list[str] = []          # class representatives, in order of first appearance
    label_of: dict[str, int] = {}  # normalized string -> class label
    labels = np.full(len(normalized), -1, dtype=np.int64)
    for i, s in enumerate(normalized):
        if s is None:
            continue
        if s not in label_of:
            found = -1
            if equivalence == "math-verify":
                for j, r in enumerate(reps):
                    if _verify_one_way(r, s) and _verify_one_way(s, r):
                        found = j
                        break
            if found < 0:
                reps.append(s)
                found = len(reps) - 1
            label_of[s] = found
        labels[i] = label_of[s]
    return labels, reps


def answer_classes(answers: Iterable, *, equivalence: str = "exact") -> np.ndarray:
    """Equivalence-class labels of the answers to one question.

    Parameters
    ----------
    answers : iterable of str or None, shape (n_samples,)
        Extracted (raw or normalized) answers; None/NaN/blank/"NA" mean missing.
    equivalence : {"exact", "math-verify"}, default "exact"
        See the module docstring.

    Returns
    -------
    labels : ndarray of int64, shape (n_samples,)
        ``0 .. M-1`` numbered by first appearance; ``-1`` for missing answers.
    """
    return _classes(answers, equivalence, "answer_classes")[0]


def canonical_answers(answers: Iterable, *, equivalence: str = "exact") -> list[str | None]:
    """Each answer replaced by its class representative (normalized), None when missing.

    The result feeds :func:`leash.core.entropy.answer_entropy` directly.

    Parameters
    ----------
    answers : iterable of str or None, shape (n_samples,)
    equivalence : {"exact", "math-verify"}, default "exact"

    Returns
    -------
    list of str or None, length n_samples
    """
    labels, reps = _classes(answers, equivalence, "canonical_answers")
    return [reps[k] if k >= 0 else None for k in labels]
