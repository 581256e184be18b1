r"""The paper's task-specific Reasoning Gym answer rewrites (arXiv 2507.14843v4, App. B.3).

App. B.3 extracts a Reasoning Gym answer by a hierarchy (``<answer>`` tag, last ``\boxed{}``,
the text after ``</think>``: :data:`leash_eval.answers.REASONING_GYM_METHODS`), then rewrites it
per task, "primarily to address format compatibility issues" of the base model's responses,
before the task's own scorer sees it. :func:`rewrite` applies those rewrites; ``leash rescore
--scorer reasoning-gym --extract reasoning-gym`` (``extract="reasoning-gym"``) grades with them.
One function per task family, each rule as the appendix states it:

``dice``
    The appendix converts the ground truth ``a/b`` to ``\frac{a}{b}`` for the base model (and
    reads its answers with Lighteval's ``math_normalizer``, ``a/b`` -> ``\frac{a}{b}``), and
    keeps ``a/b`` for ProRL. Both make answer and gold one form; here the answer is brought to
    the gold's ``a/b``: ``\frac{a}{b}`` / ``\dfrac{a}{b}`` (in ``$...$`` or not) -> ``a/b``.
``prime_factorization``
    ``\times`` -> ``×``; ``a^b`` expanded into repeated multiplication; with an ``=``, only the
    right side ("561 = 3 × 11 × 17" -> "3 × 11 × 17").
``palindrome_generation``
    whitespace removed ("k h g a g h k" -> "khgaghk").
``advanced_geometry``
    ``\left`` / ``\right`` removed, ``^\circ`` -> ``°``; a LaTeX expression (``\frac``,
    ``\sqrt``, ``\sin``, ``\log``, ``\pi``, ...) or radical arithmetic evaluated to a float with
    3 decimals by latex2sympy2_extended's ``latex2sympy`` (math-verify's dependency).
``power_function``
    mixed scientific notation -> e-notation ("-2.36 × 10^{-16}" -> "-2.36e-16", "1.5 × 10^5"
    -> "1.5e5"; the appendix's own examples, "−2.36 × 10−16" and "1.5 × 105", are these with
    the superscript flattened by the PDF's text).
``arc_1d``
    a string of digits only gets a blank between digits ("0012" -> "0 0 1 2"); a LaTeX array
    (``\begin{array}...``) becomes its digits separated by blanks.
``boxnet`` (the answer is a list of dicts ``[{key: value}, ...]``)
    a purely numeric answer is rejected (None); ```` ```json ```` fences stripped; a dict becomes
    ``[dict]``; list elements that are not dicts are dropped; a value that is a list becomes its
    first element; a value that is a dict becomes its value under the same key, else its first
    value. The result is written back as JSON.

Tasks of other families (``leg_counting``, ``graph_color``, ...) are left as extracted. Task
names match by family: ``prime_factorization_hard`` is ``prime_factorization``.
"""

from __future__ import annotations

import json
import re

__all__ = ["FAMILIES", "family", "rewrite"]

_FRAC = re.compile(r"^\$?\s*\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}\s*\$?$")
_POWER = re.compile(r"(\d+)\s*\^\s*\{?\s*(\d+)\s*\}?")
_SCI = re.compile(r"([-\u2212]?\d+(?:\.\d+)?)\s*(?:×|\\times|\\cdot|x|\*)\s*10\s*\^?\s*\{?\s*"
                  r"([-\u2212+]?\d+)\s*\}?")


def _dice(a: str) -> str:
    m = _FRAC.match(a.strip())
    return f"{m.group(1)}/{m.group(2)}" if m else a.strip()


def _prime_factorization(a: str) -> str:
    a = a.replace("\\times", "×")
    if "=" in a:
        a = a.rsplit("=", 1)[1]
    a = _POWER.sub(lambda m: " × ".join([m.group(1)] * int(m.group(2))), a)
    return " × ".join(p.strip() for p in a.split("×") if p.strip())


def _palindrome_generation(a: str) -> str:
    return re.sub(r"\s+", "", a)


def _advanced_geometry(a: str) -> str:
    a = a.replace("\\left", "").replace("\\right", "")
    a = re.sub(r"\^\s*\{?\s*\\circ\s*\}?", "°", a).strip().strip("$").strip()
    if "\\" not in a and not re.search(r"\d\s*[-+*/^]\s*\d", a):
        return a  # a plain number or text: nothing to evaluate
    try:
        from latex2sympy2_extended import latex2sympy

        value = float(latex2sympy(a.replace("°", "")).evalf())
    except Exception:
        return a
    return f"{value:.3f}"


def _power_function(a: str) -> str:
    def sci(m):
        mant, exp = m.group(1).replace("\u2212", "-"), m.group(2).replace("\u2212", "-")
        return f"{mant}e{exp.lstrip('+')}"

    return _SCI.sub(sci, a.strip().strip("$").strip())


def _arc_1d(a: str) -> str:
    a = a.strip()
    if "\\begin{array}" in a:
        body = re.sub(r"\\(?:begin|end)\{array\}(\{[^}]*\})?", " ", a)
        return " ".join(re.findall(r"\d", body))
    if re.fullmatch(r"\d+", a):
        return " ".join(a)
    return a


def _boxnet(a: str) -> str | None:
    a = a.strip()
    a = re.sub(r"^```(?:json)?\s*|\s*```$", "", a).strip()
    if re.fullmatch(r"[-+]?\d+(?:\.\d+)?", a):
        return None  # a bare number is no plan
    try:
        value = json.loads(a)
    except ValueError:
        return a
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return a
    out = []
    for item in value:
        if not isinstance(item, dict):
            continue
        fixed = {}
        for k, v in item.items():
            if isinstance(v, list):
                v = v[0] if v else v
            if isinstance(v, dict):
                v = v.get(k, next(iter(v.values()), v))
            fixed[k] = v
        out.append(fixed)
    return json.dumps(out)


#: The task families App. B.3 rewrites, and their rewrite.
FAMILIES = {"dice": _dice, "prime_factorization": _prime_factorization,
            "palindrome_generation": _palindrome_generation,
            "advanced_geometry": _advanced_geometry, "power_function": _power_function,
            "arc_1d": _arc_1d, "boxnet": _boxnet}


def family(task: str) -> str | None:
    """The App. B.3 family of a Reasoning Gym task name, or None.

    Examples
    --------
    >>> family("prime_factorization_hard"), family("leg_counting")
    ('prime_factorization', None)
    """
    for name in sorted(FAMILIES, key=len, reverse=True):
        if task == name or task.startswith(name + "_"):
            return name
    return None


def rewrite(task: str, answer: str | None) -> str | None:
    r"""``answer`` (as extracted) rewritten by App. B.3's rule for ``task``'s family.

    Parameters
    ----------
    task : str
        The Reasoning Gym task name.
    answer : str or None
        The extracted answer; None stays None.

    Returns
    -------
    str or None
        The rewritten answer; None when the rule rejects it (boxnet: a bare number).

    Examples
    --------
    >>> rewrite("prime_factorization", r"561 = 3 \times 11 \times 17")
    '3 × 11 × 17'
    >>> rewrite("palindrome_generation", "k h g a g h k")
    'khgaghk'
    """
    if answer is None:
        return None
    f = family(task)
    return answer if f is None else FAMILIES[f](answer)
