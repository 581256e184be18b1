"""Tables whose Markdown and LaTeX show a readable layout while their CSV keeps every number
(:class:`leash.output.report.TableView`), for artifacts of leash's own analyses.
"""

from __future__ import annotations

import pandas as pd

from leash.artifacts import null_table
from leash.core.support import COUNT_NAMES
from leash.output.report import TableView

__all__ = ["null_view"]


def null_view(null: pd.DataFrame, *, statistics=("E", "S", "NDR", "NSCR")):
    """A measured null as an artifact: its CSV every statistic at full precision (the long
    :func:`leash.artifacts.measured_null`), its Markdown and LaTeX the readable
    :func:`leash.artifacts.null_table` (counts to
    2 decimals, ratios to 4; "--" where undefined, e.g. the spread of one comparison), with a
    note per method and what was left out.
    """
    wide = null_table(null, statistics=statistics)

    def cell(col, v):
        if v is None or pd.isna(v):
            return "--"
        if isinstance(v, str):
            return v
        if col in ("k", "comparisons"):
            return str(int(v))
        stat = col.split(" ")[0]
        return f"{float(v):.2f}" if stat in COUNT_NAMES else f"{float(v):.4f}"

    shown = pd.DataFrame({c: [cell(c, v) for v in wide[c]] for c in wide.columns})
    notes = ("replicate runs: every two runs of the side's model compared at the pair's budget "
             "k; random halves: each run's samples split into halves of n // 2 at random "
             "(hypergeometric draws from the counts; the pair beside it: its expectation over "
             "random subsets of k = n // 2 samples); ordered halves: the first n // 2 samples "
             "against the next (the pair at its first n // 2).",
             *null.attrs.get("notes", ()))
    return TableView(null, shown, tuple(notes))

