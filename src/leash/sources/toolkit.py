"""The one seam between ``leash`` and the evaluation toolkit (``leash_eval``).

``leash`` alone reads the paper's printed numbers, the SIMULATED demo and per-question
summaries. A study source that names raw files (``path:`` to generations, ``dataset:`` of the
data manifest, ``rescore:``) is read by the toolkit, and :func:`toolkit` is the one place where
``leash`` imports it (the import-linter contract of ``pyproject.toml`` allows this import and
no other); it returns :mod:`leash_eval.studies`, whose functions are the whole interface.
"""

from __future__ import annotations

__all__ = ["ToolkitMissingError", "toolkit"]


class ToolkitMissingError(ImportError):
    """The evaluation toolkit (``leash_eval``) is not importable here."""


def toolkit(need: str = "reading generations"):
    """The toolkit's study interface (:mod:`leash_eval.studies`), imported on first use.

    Parameters
    ----------
    need : str
        What needs it, for the one-line message when it is missing.

    Raises
    ------
    ToolkitMissingError
        When ``leash_eval`` cannot be imported; the message says what needed it.
    """
    try:
        import leash_eval.studies as studies
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "leash_eval":
            raise
        raise ToolkitMissingError(
            f"{need} needs leash's evaluation toolkit (the package leash_eval), which is not "
            "importable here; install leash with `pip install -e .` from its repository."
        ) from None
    return studies
