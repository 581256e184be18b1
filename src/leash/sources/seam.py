"""The one seam between ``leash`` and the evaluation toolkit (``leash_eval``).

``leash`` alone reads the paper's printed numbers, the SIMULATED demo and per-question
summaries. A study source that names raw files (``path:`` to generations, ``dataset:`` of the
data manifest, ``rescore:``) is read by the toolkit, and :func:`toolkit` is the one place where
``leash`` imports it (the import-linter contract of ``pyproject.toml`` allows this import and
no other); it returns :mod:`leash_eval.studies`, whose functions are the whole interface.

The names and modules that moved from ``leash`` to the toolkit keep working for one release,
through here too: :func:`moved` (a name, with a DeprecationWarning) and :data:`MOVED_MODULES`
(a module path: ``import leash.run.reproduce`` and ``python -m leash.run.reproduce``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

__all__ = ["MOVED_MODULES", "ToolkitMissingError", "moved", "toolkit"]


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


def moved(old: str, new: str, *, stacklevel: int = 3):
    """The object ``new`` (``"leash_eval.demo.simulate_study"``) for the old name ``old``
    (``"leash.simulate_study"``), with a DeprecationWarning: the alias of a name that moved to
    the toolkit, kept for one release.
    """
    warnings.warn(f"{old} moved to {new}; import it from there (this alias goes in the next "
                  "release)", DeprecationWarning, stacklevel=stacklevel)
    module, _, name = new.rpartition(".")
    return getattr(toolkit(old).public_module(module), name)


#: Module paths of ``leash`` that moved to the toolkit, old -> new (one release).
MOVED_MODULES = {
    "leash.run.reproduce": "leash_eval.run.reproduce",
    "leash.run.site": "leash_eval.run.site",
    "leash.output.gallery": "leash_eval.run.gallery",
    "leash.sources.study_check": "leash_eval.run.study_check",
    "leash.processes": "leash_eval.processes",
    "leash.argparsing": "leash_eval.argparsing",
    "leash.sources.toolkit": "leash.sources.seam",
}


class _MovedModule(importlib.abc.Loader):
    """Loads an old module path as the module it moved to (the same object, so a test's
    monkeypatch of one is seen through the other), with a DeprecationWarning; ``python -m`` of
    the old path runs the new module's code and says the new path on stderr.
    """

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec):
        warnings.warn(f"the module {self.old} moved to {self.new}; import it from there (this "
                      "alias goes in the next release)", DeprecationWarning, stacklevel=2)
        return self._module()

    def exec_module(self, module):
        """Nothing to run: the module it moved to ran when it was imported."""

    def get_code(self, fullname):
        """The new module's code, for ``python -m OLD`` (runpy)."""
        print(f"note: {self.old} moved to {self.new} (`python -m {self.new}`); this alias goes "
              "in the next release", file=sys.stderr)
        spec = importlib.util.find_spec(self.new)
        return spec.loader.get_code(self.new)

    def _module(self):
        if self.new.startswith("leash_eval."):
            return toolkit(self.old).public_module(self.new)
        return importlib.import_module(self.new)


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths of :data:`MOVED_MODULES` (installed by ``import leash``, last on
    ``sys.meta_path``: a module that exists is always found first).
    """

    def find_spec(self, fullname, path=None, target=None):
        """The alias's spec for an old path, else None."""
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModule(fullname, new))


def install_moved_modules() -> None:
    """Put :class:`MovedModuleFinder` on ``sys.meta_path`` once."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
