"""The bounds leash holds values to, where more than one layer checks them.

Pure Python (importing it loads nothing), so the metric core, the parameter checks of the
notebooks and the toolkit's command line all take their bounds from here.
"""

from __future__ import annotations

__all__ = ["INT64_MAX", "INT64_MIN"]

#: The largest 64-bit signed integer: the bound of every integer option, parameter and count
#: (what numpy, Arrow and DuckDB hold).
INT64_MAX = 2**63 - 1
#: The smallest 64-bit signed integer.
INT64_MIN = -(2**63)
