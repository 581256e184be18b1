"""The installed distribution's version, read from its metadata (``pyproject.toml`` is its one
home): ``leash.__version__``, and what a summary or a cache key records.
"""

from __future__ import annotations

import functools

__all__ = ["version"]


@functools.cache
def version() -> str:
    """The version of the installed ``leash`` distribution (``0+unknown`` for a source tree
    that was never installed).
    """
    from importlib import metadata

    try:
        return metadata.version("leash")
    except metadata.PackageNotFoundError:
        return "0+unknown"
