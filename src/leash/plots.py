"""Plot helpers for the paper's figures: precomputed statistics in, a matplotlib Axes out.

Every helper

* takes tidy DataFrames of statistics that are already computed (pass@k values, P/E/S/O counts,
  metrics, entropies), never raw samples: the numbers come from the metric core, and the same
  frame goes to :func:`leash.report.save_figure` as the figure's data;
* validates its input (a missing column is a ValueError naming it; a duplicated point, which a
  plotting library would silently average, is a ValueError too);
* takes ``ax=None``: it draws on the given Axes, or on a new figure, and returns the Axes;
* never saves (that is :func:`leash.report.save_figure`'s job).

Colours are fixed in one place (:data:`ROLE_COLORS`, :data:`CATEGORY_COLORS`): base models are
always blue, RLVR models always red, SFT green, and the four support categories keep their colour
in every figure. Model colours come from a ``role`` column when the frame has one (``base``,
``rlvr``, ``sft``); a model label that is itself a role name ("Base") gets that role's colour;
other labels take the RLVR colour, then the extra colours, in order of appearance. Lines that are
not models (benchmarks, domains) take :data:`SERIES_COLORS`, which holds neither the base blue
nor the RLVR red, and ordered values (budgets, zetas) :func:`sequential_colors`.

Multi-panel figures: :func:`panel_grid` lays ``n`` panels out in at most three columns, sized for
a page (about 7.5 inches, 1500 pixels at 200 dpi), and :func:`shared_legend` replaces the
panels' identical legends by one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "BASE_COLOR",
    "CATEGORY_COLORS",
    "CATEGORY_LABELS",
    "EXTRA_COLORS",
    "PAGE_WIDTH",
    "RLVR_COLOR",
    "ROLE_COLORS",
    "SERIES_COLORS",
    "SFT_COLOR",
    "model_colors",
    "panel_grid",
    "plot_entropy_scatter",
    "plot_epsilon",
    "plot_metric_trajectory",
    "plot_pass_at_k_curves",
    "plot_passk_bars",
    "plot_support_counts",
    "plot_support_curves",
    "plot_support_diagram",
    "sequential_colors",
    "shades",
    "shared_legend",
]

# Colours of seaborn's "deep" palette, assigned once for the whole project.
BASE_COLOR = "#4C72B0"
RLVR_COLOR = "#C44E52"
SFT_COLOR = "#55A868"
ROLE_COLORS = {"base": BASE_COLOR, "rlvr": RLVR_COLOR, "sft": SFT_COLOR}
EXTRA_COLORS = ("#8172B3", "#CCB974", "#64B5CD", "#DD8452", "#937860", "#DA8BC3", "#8C8C8C")
# Series that are not models (benchmarks, domains): no base blue, no RLVR red, no SFT green; dark
# enough on white. Seaborn "deep"/"dark" hues, then the muted grey.
SERIES_COLORS = ("#8172B3", "#DD8452", "#2A9D8F", "#937860", "#DA8BC3", "#B8A02F", "#5F5F5F",
                 "#222222")
CATEGORY_COLORS = {
    "preservation": "#55A868",
    "expansion": "#8172B3",
    "shrinkage": "#DD8452",
    "out_of_support": "#B0B0B0",
}
CATEGORY_LABELS = {
    "preservation": "Preservation",
    "expansion": "Expansion",
    "shrinkage": "Shrinkage",
    "out_of_support": "Out of Support",
}
_COUNT_COLUMNS = {"P": "preservation", "E": "expansion", "S": "shrinkage", "O": "out_of_support"}
_METRIC_STYLES = ("-", "--", ":", "-.")
_METRIC_MARKERS = ("o", "s", "^", "D")
_FIGSIZE = (6.0, 4.0)


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _axes(ax, func: str):
    from matplotlib.axes import Axes

    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=_FIGSIZE, layout="constrained")
        return ax
    if not isinstance(ax, Axes):
        raise TypeError(f"The 'ax' parameter of {func} must be a matplotlib Axes or None. "
                        f"Got {type(ax).__name__} instead.")
    return ax


def _require(df, columns, func: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"The 'df' parameter of {func} must be a pandas DataFrame. "
                        f"Got {type(df).__name__} instead.")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{func}: the DataFrame has no column {missing[0]!r} (needed: "
                         f"{list(columns)}; it has: {list(df.columns)}).")
    if df.empty:
        raise ValueError(f"{func}: the DataFrame is empty; nothing to plot.")
    return df


def _numeric(df: pd.DataFrame, column: str, func: str, *, allow_nan=False) -> np.ndarray:
    try:
        values = pd.to_numeric(df[column], errors="raise").to_numpy(dtype=float, na_value=np.nan)
    except (ValueError, TypeError):
        raise ValueError(f"{func}: column {column!r} must be numeric. Got dtype "
                         f"{df[column].dtype}.") from None
    bad = np.isinf(values) | (np.isnan(values) if not allow_nan else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{func}: column {column!r} must be finite. Got {values[i]} in row "
                         f"{i} (index label {df.index[i]!r}).")
    return values


def _no_duplicates(df: pd.DataFrame, keys: list[str], func: str) -> None:
    dup = df.duplicated(subset=keys, keep=False)
    if dup.any():
        first = df.loc[dup, keys].iloc[0].to_dict()
        raise ValueError(f"{func}: {int(dup.sum())} rows share the same {keys} (e.g. {first}); "
                         f"pass one row per plotted point (statistics are not aggregated here).")


def _levels(series: pd.Series) -> list:
    """Distinct values in order of first appearance."""
    return list(pd.unique(series))


def model_colors(labels, roles=None) -> dict:
    """The fixed colour of each model label.

    Parameters
    ----------
    labels : sequence of str
        Model labels, in order of appearance.
    roles : dict of str to str, optional
        ``label -> role`` with roles among ``ROLE_COLORS`` ("base", "rlvr", "sft").

    Returns
    -------
    dict of str to str
        ``label -> colour``: the role's colour; a label equal to a role name (any case) gets
        that role's colour; other labels take :data:`RLVR_COLOR` then :data:`EXTRA_COLORS`,
        skipping colours already used.
    """
    roles = dict(roles or {})
    out: dict = {}
    for label in labels:
        role = roles.get(label)
        if role is None and str(label).lower() in ROLE_COLORS:
            role = str(label).lower()
        if role is not None:
            if role not in ROLE_COLORS:
                raise ValueError(f"model_colors: unknown role {role!r} for {label!r}; roles: "
                                 f"{list(ROLE_COLORS)}.")
            out[label] = ROLE_COLORS[role]
    pool = [c for c in (RLVR_COLOR, *EXTRA_COLORS) if c not in out.values()]
    for label in labels:
        if label not in out:
            out[label] = pool.pop(0) if pool else EXTRA_COLORS[len(out) % len(EXTRA_COLORS)]
    return out


def _roles_of(df: pd.DataFrame, hue: str, func: str) -> dict | None:
    if "role" not in df.columns:
        return None
    per = df.groupby(hue, sort=False)["role"].nunique(dropna=False)
    if (per > 1).any():
        bad = per[per > 1].index[0]
        raise ValueError(f"{func}: model {bad!r} has several values in column 'role'.")
    return dict(zip(df[hue], df["role"]))


_MAX_TICK_LABELS = 8


def _labelled(n: int, step: int = 2) -> np.ndarray:
    """Which of ``n`` ticks get a label: all up to 8; beyond, every ``step``-th from the first,
    and always the last (then not the labelled one less than ``step`` ticks before it)."""
    keep = np.ones(n, dtype=bool)
    if n > _MAX_TICK_LABELS:
        keep = np.arange(n) % max(step, 2) == 0
        if not keep[-1]:
            prev = np.flatnonzero(keep)[-1]
            keep[-1] = True
            if n - 1 - prev < max(step, 2):
                keep[prev] = False
    return keep


def _tick_step(ax, labels) -> int:
    """2, or 4 when every other label would still not fit side by side in the panel's width
    (k = 1..16384 in a narrow panel). Widths are estimated from the number of characters."""
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties

    size = FontProperties(size=mpl.rcParams["xtick.labelsize"]).get_size_in_points()
    need = max(len(lab) for lab in labels) * 0.64 * size + 4
    width = ax.get_position().width * ax.figure.get_size_inches()[0] * 72
    return 2 if -(-len(labels) // 2) * need <= width else 4


def _log2_ticks(ax, xs: np.ndarray) -> np.ndarray:
    """log2 x axis with a tick at every value; beyond 8 values only every other label is shown
    (every fourth when even those would collide), the largest always. Returns which ticks are
    labelled."""
    ax.set_xscale("log", base=2)
    ticks = np.unique(xs)
    labels = [f"{int(t)}" if float(t).is_integer() else f"{t:g}" for t in ticks]
    keep = _labelled(len(ticks), _tick_step(ax, labels))
    ax.set_xticks(ticks, labels=[lab if k else "" for lab, k in zip(labels, keep)])
    ax.minorticks_off()
    return keep


def sequential_colors(n: int) -> list:
    """``n`` colours of an ordered series (budgets k, zetas), light to dark along viridis.

    Parameters
    ----------
    n : int
        Number of colours, ``n >= 1``.

    Returns
    -------
    list of str
        Hex colours; none is the base blue or the RLVR red.
    """
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"The 'n' parameter of sequential_colors must be an int >= 1. Got {n!r}.")
    cmap = colormaps["viridis"]
    return [to_hex(cmap(v)) for v in np.linspace(0.85, 0.05, int(n))] if n > 1 else \
        [to_hex(cmap(0.45))]


def shades(color, n: int) -> list:
    """``n`` shades of one colour, light to full: the checkpoints of one training run, the last
    being the final model (e.g. ``shades(RLVR_COLOR, 5)``).

    Parameters
    ----------
    color : matplotlib colour
    n : int
        Number of shades, ``n >= 1``: the first ``n - 1`` mix 70% down to 25% white in, so the
        last one, ``color`` itself, stands out from the one before it.

    Returns
    -------
    list of str
        Hex colours, the last one ``color`` itself.
    """
    from matplotlib.colors import to_hex, to_rgb

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"The 'n' parameter of shades must be an int >= 1. Got {n!r}.")
    rgb = np.array(to_rgb(color))
    white = [*np.linspace(0.7, 0.25, int(n) - 1), 0.0] if n > 2 else [0.5, 0.0][2 - int(n):]
    return [to_hex(rgb + (1 - rgb) * w) for w in white]


# ---------------------------------------------------------------------------------------------
# multi-panel figures
# ---------------------------------------------------------------------------------------------

#: Width of a multi-panel figure in inches: 1500 pixels at 200 dpi, a page's text width.
PAGE_WIDTH = 7.5
_SPARE = "leash: spare panel"


def panel_grid(n, *, ncols=3, panel_height=2.3, width=PAGE_WIDTH, sharex=False, sharey=False):
    """A figure of ``n`` panels in at most ``ncols`` columns, as wide as a page.

    Parameters
    ----------
    n : int
        Number of panels, ``n >= 1``.
    ncols : int, default 3
        Maximum number of columns (fewer when ``n`` is smaller).
    panel_height : float, default 2.3
        Height of one row in inches.
    width : float, default 7.5
        Width of the figure in inches (1500 pixels at 200 dpi).
    sharex, sharey : bool
        Passed to :func:`matplotlib.pyplot.subplots`.

    Returns
    -------
    fig : matplotlib.figure.Figure
        With constrained layout (do not call ``tight_layout``).
    axes : list of matplotlib.axes.Axes
        The ``n`` panels in reading order. The unused cells of the last row are switched off;
        :func:`shared_legend` puts the legend into one of them.
    """
    import matplotlib.pyplot as plt

    for name, value, low in (("n", n, 1), ("ncols", ncols, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"The '{name}' parameter of panel_grid must be an int >= {low}. "
                             f"Got {value!r}.")
    cols = min(int(ncols), int(n))
    rows = -(-int(n) // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(width, panel_height * rows), squeeze=False,
                             sharex=sharex, sharey=sharey, layout="constrained")
    cells = list(grid.flat)
    for spare in cells[n:]:
        spare.set_axis_off()
        spare.set_label(_SPARE)
    return fig, cells[:n]


def shared_legend(axes, *, title=None, fontsize=9, ncols=None):
    """One legend for several panels: every entry of the panels' legends, each label once.

    Each panel's own legend is removed. The legend goes into an unused cell of the grid of
    :func:`panel_grid` when there is one, else below the panels (above them it would collide
    with the figure's suptitle).

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
        Panels of one figure.
    title : str, optional
        Legend title (e.g. "domain").
    fontsize : float, default 9
    ncols : int, optional
        Columns of a legend below the panels (default: all entries in one row, at most 6).

    Returns
    -------
    matplotlib.legend.Legend
    """
    axes = list(axes)
    if not axes:
        raise ValueError("shared_legend: 'axes' is empty.")
    fig = axes[0].figure
    handles, labels = [], []
    for ax in axes:
        legend = ax.get_legend()
        if legend is not None:
            hs, ls = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
            legend.remove()
        else:
            hs, ls = ax.get_legend_handles_labels()
        for h, lab in zip(hs, ls):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        raise ValueError("shared_legend: the panels have no labelled artist to show.")
    spare = [a for a in fig.axes if a.get_label() == _SPARE and not a.axison]
    if spare:
        return spare[-1].legend(handles, labels, loc="center", frameon=False, title=title,
                                fontsize=fontsize, title_fontsize=fontsize)
    return fig.legend(handles, labels, loc="outside lower center", frameon=False, title=title,
                      fontsize=fontsize, title_fontsize=fontsize,
                      ncols=ncols or min(len(handles), 6))


# ---------------------------------------------------------------------------------------------
# pass@k
# ---------------------------------------------------------------------------------------------

def plot_pass_at_k_curves(df, *, ax=None, x="k", y="pass_at_k", hue="model", annotate=False,
                          logx=True, hue_order=None, palette=None):
    """pass@k against k, one line per model (Figures 2-4 of the paper, one panel).

    Parameters
    ----------
    df : pandas.DataFrame, shape (n_models * n_ks, ...)
        One row per (model, k): columns ``x``, ``y``, ``hue``; optional ``low`` and ``high``
        (both or neither: a bootstrap band drawn around each curve) and ``role`` (colours).
    ax : matplotlib.axes.Axes, optional
    x, y, hue : str
        Column names of the budget, the value and the model.
    annotate : bool, default False
        Write values (3 decimals) next to the points, as the paper does, where they stay
        readable: at the budgets whose tick is labelled (every k up to 8 budgets, else every
        other or every fourth one, and the largest), the higher curve's value above its point
        and the lower one's below (with more than two models, only the highest and the
        lowest); equal values (at 3 decimals) are written once, in grey. The axis gets head
        room for them.
    logx : bool, default True
        log2 x axis with a tick at every k (k must be > 0).
    hue_order : sequence, optional
        Order of the models in the legend (and of drawing); default: order of appearance. It
        must list every model of the frame.
    palette : dict, optional
        ``model -> colour``, overriding :func:`model_colors` for the models it names.

    Returns
    -------
    matplotlib.axes.Axes
        With one line per model (plus one band per model when ``low``/``high`` are given).
    """
    func = "plot_pass_at_k_curves"
    _require(df, [x, y, hue], func)
    has_low, has_high = "low" in df.columns, "high" in df.columns
    if has_low != has_high:
        raise ValueError(f"{func}: bands need both columns 'low' and 'high'; got only "
                         f"{'low' if has_low else 'high'!r}.")
    _no_duplicates(df, [hue, x], func)
    xs, ys = _numeric(df, x, func), _numeric(df, y, func)
    if logx and (xs <= 0).any():
        raise ValueError(f"{func}: column {x!r} must be > 0 on a log axis. Got "
                         f"{xs[xs <= 0][0]}.")
    lows = _numeric(df, "low", func) if has_low else None
    highs = _numeric(df, "high", func) if has_high else None
    levels = _levels(df[hue])
    if hue_order is not None:
        wanted = list(hue_order)
        missing = [lv for lv in levels if lv not in wanted]
        extra = [lv for lv in wanted if lv not in levels]
        if missing or extra or len(set(wanted)) != len(wanted):
            raise ValueError(f"The 'hue_order' parameter of {func} must list each {hue!r} of the "
                             f"frame once. Missing: {missing}; not in the frame: {extra}.")
        levels = wanted
    colors = model_colors(levels, _roles_of(df, hue, func))
    colors.update({k: v for k, v in dict(palette or {}).items() if k in colors})
    ax = _axes(ax, func)
    hue_values = df[hue].to_numpy()
    for level in levels:
        sel = np.flatnonzero(hue_values == level)
        order = sel[np.argsort(xs[sel], kind="stable")]
        color = colors[level]
        ax.plot(xs[order], ys[order], marker="o", markersize=3.5, color=color,
                label=str(level))
        if lows is not None:
            ax.fill_between(xs[order], lows[order], highs[order], color=color, alpha=0.2,
                            linewidth=0)
    budgets = np.unique(xs)
    labelled = _log2_ticks(ax, xs) if logx else _labelled(len(budgets))
    if annotate:
        _annotate_values(ax, xs, ys, hue_values, colors, budgets[labelled])
    ax.set_xlabel(x)
    ax.set_ylabel("Pass@k" if y == "pass_at_k" else y)
    ax.legend(frameon=False)
    return ax


def _annotate_values(ax, xs, ys, hue_values, colors, budgets) -> None:
    """The value labels of :func:`plot_pass_at_k_curves` at ``budgets`` (see its
    ``annotate``)."""
    for xv in budgets:
        at = np.flatnonzero(xs == xv)
        at = at[np.argsort(ys[at], kind="stable")]
        lo, hi = at[0], at[-1]
        text_hi, text_lo = f"{ys[hi]:.3f}", f"{ys[lo]:.3f}"
        if len(at) == 1 or text_hi == text_lo:
            color = colors[hue_values[hi]] if len(at) == 1 else "0.3"
            placed = [(hi, 5, "bottom", color)]
        else:
            placed = [(hi, 5, "bottom", colors[hue_values[hi]]),
                      (lo, -5, "top", colors[hue_values[lo]])]
        for i, dy, va, color in placed:
            ax.annotate(f"{ys[i]:.3f}", (xs[i], ys[i]), textcoords="offset points",
                        xytext=(0, dy), ha="center", va=va, fontsize=6.5, color=color)
    ax.margins(y=0.16)


def _tick_style(ax, n_labels: int) -> dict:
    """Slanted category labels when there are too many to sit side by side: at 30 degrees, or
    at 45 when the ticks are too close for that (slanted neighbours then touch)."""
    import matplotlib as mpl
    from matplotlib.font_manager import FontProperties

    if n_labels <= 5:
        return {}
    size = FontProperties(size=mpl.rcParams["xtick.labelsize"]).get_size_in_points()
    slot = ax.get_position().width * ax.figure.get_size_inches()[0] * 72 / n_labels
    return {"rotation": 30 if slot >= 3 * size else 45, "ha": "right",
            "rotation_mode": "anchor"}


def plot_passk_bars(df, *, ax=None, benchmark="benchmark", hue="model", y="pass_at_k"):
    """Grouped bars of pass@k per benchmark, base vs RLVR (Figure 1's bar panel).

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``benchmark``, ``hue``, ``y``; optional ``k`` (then, per benchmark, only the
        rows at that benchmark's largest k are drawn, and the tick says ``@k``) and ``role``.
        Every model needs exactly one row per benchmark (at the largest k).
    ax : matplotlib.axes.Axes, optional
    benchmark, hue, y : str
        Column names.

    Returns
    -------
    matplotlib.axes.Axes
        With one bar container per model, one bar per benchmark in each.
    """
    func = "plot_passk_bars"
    _require(df, [benchmark, hue, y], func)
    data = df
    kmax = None
    if "k" in df.columns:
        ks = _numeric(df, "k", func)
        kmax = pd.Series(ks, index=df.index).groupby(df[benchmark].to_numpy()).transform("max")
        data = df.loc[ks == kmax.to_numpy()]
        kmax = kmax.groupby(df[benchmark].to_numpy()).first()
    _no_duplicates(data, [benchmark, hue], func)
    values = _numeric(data, y, func)
    benches, models = _levels(df[benchmark]), _levels(df[hue])
    table = pd.DataFrame({"b": data[benchmark].to_numpy(), "m": data[hue].to_numpy(),
                          "v": values}).pivot(index="b", columns="m", values="v")
    table = table.reindex(index=benches, columns=models)
    if table.isna().any().any():
        b, m = next((b, m) for b in benches for m in models if pd.isna(table.loc[b, m]))
        at = f" at k = {int(kmax[b])}" if kmax is not None else ""
        raise ValueError(f"{func}: no value for model {m!r} on benchmark {b!r}{at}; every model "
                         f"needs one bar per benchmark.")
    ax = _axes(ax, func)
    colors = model_colors(models, _roles_of(df, hue, func))
    pos = np.arange(len(benches), dtype=float)
    width = 0.8 / len(models)
    for j, m in enumerate(models):
        ax.bar(pos + (j - (len(models) - 1) / 2) * width, table[m].to_numpy(), width * 0.95,
               color=colors[m], label=str(m))
    sep = " " if len(benches) > 5 else "\n"  # slanted labels (see _tick_style) stay on one line
    labels = [f"{b}{sep}@{int(kmax[b])}" if kmax is not None else str(b) for b in benches]
    ax.set_xticks(pos, labels=labels, **_tick_style(ax, len(labels)))
    ax.set_ylabel("Pass@k" if y == "pass_at_k" else y)
    ax.legend(frameon=False)
    return ax


# ---------------------------------------------------------------------------------------------
# support
# ---------------------------------------------------------------------------------------------

def plot_support_counts(df, *, ax=None, by="benchmark", normalize=False):
    """Stacked bars of the P/E/S/O counts per benchmark (or per model).

    Parameters
    ----------
    df : pandas.DataFrame, shape (n_groups, ...)
        One row per group: column ``by`` and the counts ``P``, ``E``, ``S``, ``O`` (non-negative).
    ax : matplotlib.axes.Axes, optional
    by : str, default "benchmark"
        Column naming the bars.
    normalize : bool, default False
        Fractions of each row's total instead of counts (a row with total 0 is an error).

    Returns
    -------
    matplotlib.axes.Axes
        With four bar containers (Preservation, Expansion, Shrinkage, Out of Support, bottom to
        top), one bar per row in each.
    """
    func = "plot_support_counts"
    _require(df, [by, *_COUNT_COLUMNS], func)
    _no_duplicates(df, [by], func)
    counts = np.column_stack([_numeric(df, c, func) for c in _COUNT_COLUMNS])
    if (counts < 0).any():
        i, j = np.argwhere(counts < 0)[0]
        raise ValueError(f"{func}: column {list(_COUNT_COLUMNS)[j]!r} must be >= 0. Got "
                         f"{counts[i, j]} in row {i}.")
    if normalize:
        total = counts.sum(axis=1)
        if (total == 0).any():
            i = int(np.flatnonzero(total == 0)[0])
            raise ValueError(f"{func}: row {i} ({df[by].iloc[i]!r}) has P+E+S+O = 0 and cannot "
                             f"be normalized.")
        counts = counts / total[:, None]
    ax = _axes(ax, func)
    pos = np.arange(len(df), dtype=float)
    bottom = np.zeros(len(df))
    for j, (col, cat) in enumerate(_COUNT_COLUMNS.items()):
        ax.bar(pos, counts[:, j], 0.7, bottom=bottom, color=CATEGORY_COLORS[cat],
               label=f"{CATEGORY_LABELS[cat]} ({col})")
        bottom = bottom + counts[:, j]
    ax.set_xticks(pos, labels=[str(v) for v in df[by]], **_tick_style(ax, len(df)))
    ax.set_ylabel("fraction of questions" if normalize else "questions")
    _stack_legend(ax)
    return ax


def _stack_legend(ax) -> None:
    """The category legend right of the axes, clear of the bars, top to bottom in the order of
    the stack (Out of Support on top)."""
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], frameon=False, fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def plot_support_curves(df, *, categories=("P", "E", "S", "O"), ax=None, x="k", logx=True):
    """P/E/S/O counts against the budget k, one line per category in its fixed colour.

    Parameters
    ----------
    df : pandas.DataFrame, shape (n_ks, ...)
        One row per budget: column ``x`` and the counts named in ``categories`` (e.g. the
        expected counts of :func:`leash.tables.expected_support_curve`).
    categories : sequence of str, default ("P", "E", "S", "O")
        Which of P, E, S, O to draw.
    ax : matplotlib.axes.Axes, optional
    x : str, default "k"
    logx : bool, default True
        log2 x axis with a tick at every k (k must be > 0).

    Returns
    -------
    matplotlib.axes.Axes
        With one line per category, coloured as in :func:`plot_support_counts`.
    """
    func = "plot_support_curves"
    categories = [categories] if isinstance(categories, str) else list(categories)
    unknown = [c for c in categories if c not in _COUNT_COLUMNS]
    if not categories or unknown:
        raise ValueError(f"The 'categories' parameter of {func} must name some of "
                         f"{list(_COUNT_COLUMNS)}. Got {categories}.")
    _require(df, [x, *categories], func)
    _no_duplicates(df, [x], func)
    xs = _numeric(df, x, func)
    if logx and (xs <= 0).any():
        raise ValueError(f"{func}: column {x!r} must be > 0 on a log axis. Got "
                         f"{xs[xs <= 0][0]}.")
    ax = _axes(ax, func)
    order = np.argsort(xs, kind="stable")
    for col in categories:
        cat = _COUNT_COLUMNS[col]
        ax.plot(xs[order], _numeric(df, col, func)[order], marker="o", markersize=3,
                color=CATEGORY_COLORS[cat], label=f"{CATEGORY_LABELS[cat]} ({col})")
    if logx:
        _log2_ticks(ax, xs)
    ax.set_xlabel(x)
    ax.set_ylabel("questions")
    ax.legend(frameon=False, fontsize=8)
    return ax


def plot_metric_trajectory(df, *, metrics=("SRR", "NDR", "NSCR"), ax=None, x="step",
                           hue="benchmark"):
    """Support metrics against the training step, per benchmark (Table 4's companion figure).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per (benchmark, step): columns ``x``, ``hue`` and every metric. Undefined metric
        values (NaN, e.g. NDR with no found question) are drawn as gaps.
    metrics : sequence of str, default ("SRR", "NDR", "NSCR")
        At most four; each gets its own line style and marker.
    ax : matplotlib.axes.Axes, optional
    x, hue : str
        Column names of the step and of the benchmark.

    Returns
    -------
    matplotlib.axes.Axes
        With ``len(metrics) * n_benchmarks`` lines (colour: benchmark, from
        :data:`SERIES_COLORS`; style: metric), plus a dotted reference line at 0 when some value
        is negative (NSCR). With one metric, the y axis is labelled with it and the legend lists
        the benchmarks only.
    """
    func = "plot_metric_trajectory"
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    if not 1 <= len(metrics) <= len(_METRIC_STYLES):
        raise ValueError(f"The 'metrics' parameter of {func} must name 1 to "
                         f"{len(_METRIC_STYLES)} columns. Got {metrics}.")
    _require(df, [x, hue, *metrics], func)
    _no_duplicates(df, [hue, x], func)
    xs = _numeric(df, x, func)
    values = {m: _numeric(df, m, func, allow_nan=True) for m in metrics}
    ax = _axes(ax, func)
    from matplotlib.lines import Line2D

    levels = _levels(df[hue])
    palette = SERIES_COLORS
    hue_values = df[hue].to_numpy()
    for j, level in enumerate(levels):
        sel = np.flatnonzero(hue_values == level)
        order = sel[np.argsort(xs[sel], kind="stable")]
        for i, m in enumerate(metrics):
            ax.plot(xs[order], values[m][order], linestyle=_METRIC_STYLES[i],
                    marker=_METRIC_MARKERS[i], markersize=3,
                    color=palette[j % len(palette)], label=f"{level} {m}")
    if any((v[np.isfinite(v)] < 0).any() for v in values.values()):  # a signed metric: NSCR
        ax.axhline(0.0, color="0.6", linewidth=0.8, linestyle=":")
    handles = [Line2D([], [], color=palette[j % len(palette)], marker=_METRIC_MARKERS[0]
                      if len(metrics) == 1 else None, markersize=3, label=str(level))
               for j, level in enumerate(levels)]
    if len(metrics) > 1:
        handles += [Line2D([], [], color="0.3", linestyle=_METRIC_STYLES[i],
                           marker=_METRIC_MARKERS[i], markersize=3, label=m)
                    for i, m in enumerate(metrics)]
    ax.legend(handles=handles, frameon=False, fontsize=7, ncols=2 if len(metrics) > 1 else 1)
    ax.set_xlabel("training step" if x == "step" else x)
    ax.set_ylabel(metrics[0] if len(metrics) == 1 else "metric value")
    return ax


# ---------------------------------------------------------------------------------------------
# entropy
# ---------------------------------------------------------------------------------------------

def plot_entropy_scatter(df, *, ax=None, x="token_entropy", y="answer_entropy",
                         base="base_model", labels=True):
    """Token-level vs answer-level entropy per model, with an arrow from each base to its RLVR.

    The paper's point (Table 5): RLVR models can be more uncertain token by token while giving
    fewer distinct answers, i.e. the arrows tend to go down (and often right).

    Parameters
    ----------
    df : pandas.DataFrame, shape (n_models, ...)
        One row per model: columns ``model``, ``role`` ("base" or a trained role such as
        "rlvr"), ``x``, ``y``, and ``base``: for every non-base row, the ``model`` label of its
        base (which must be a row with role "base").
    ax : matplotlib.axes.Axes, optional
    x, y : str
        Columns of the token-level and answer-level entropy.
    base : str, default "base_model"
        Column pairing each trained model with its base.
    labels : bool, default True
        Write each model's label next to its point, on the side away from its arrows and
        inside the axes.

    Returns
    -------
    matplotlib.axes.Axes
        With one scatter collection per role, one arrow patch per (base, trained) pair, and one
        text per model when ``labels``.
    """
    func = "plot_entropy_scatter"
    _require(df, ["model", "role", x, y, base], func)
    _no_duplicates(df, ["model"], func)
    xs, ys = _numeric(df, x, func), _numeric(df, y, func)
    roles = df["role"].astype(str).to_numpy()
    unknown = sorted(set(roles) - set(ROLE_COLORS))
    if unknown:
        raise ValueError(f"{func}: column 'role' has unknown value(s) {unknown}; roles: "
                         f"{list(ROLE_COLORS)}.")
    models = df["model"].to_numpy()
    where = {m: i for i, m in enumerate(models)}
    pairs = []
    for i in np.flatnonzero(roles != "base"):
        b = df[base].iloc[i]
        if pd.isna(b) or b not in where or roles[where[b]] != "base":
            raise ValueError(f"{func}: model {models[i]!r} (role {roles[i]!r}) names base "
                             f"{b!r} in column {base!r}, which is not a model with role "
                             f"'base' in the frame.")
        pairs.append((where[b], i))
    ax = _axes(ax, func)
    from matplotlib.patches import FancyArrowPatch

    for role in [r for r in ROLE_COLORS if r in set(roles)]:
        sel = roles == role
        ax.scatter(xs[sel], ys[sel], color=ROLE_COLORS[role], s=28, zorder=3,
                   label=_ROLE_LABELS[role])
    for b, t in pairs:
        ax.add_patch(FancyArrowPatch((xs[b], ys[b]), (xs[t], ys[t]), arrowstyle="-|>",
                                     mutation_scale=10, color="0.35", linewidth=0.9,
                                     shrinkA=4, shrinkB=4, zorder=2))
    ax.margins(x=0.08, y=0.1)
    if labels:
        _label_points(ax, xs, ys, [str(m) for m in models], pairs)
    ax.set_xlabel("token-level entropy" if x == "token_entropy" else x)
    ax.set_ylabel("answer-level entropy" if y == "answer_entropy" else y)
    ax.legend(frameon=False)
    return ax


_ROLE_LABELS = {"base": "Base", "rlvr": "RLVR", "sft": "SFT"}


def _label_points(ax, xs, ys, names, pairs, fontsize=7.5) -> None:
    """Each point's name next to it, placed greedily where it overlaps nothing.

    Candidates: the four diagonal corners around the point and straight left or right, in order
    of preference the side away from the point's arrows first (a trained model's label continues
    its arrow, a base's label points away from its arrows). Each candidate's box is estimated in
    axes fractions (from the text's outline and the axes' size); the chosen one is the first with
    the fewest collisions with the labels already placed, the other points, the arrows and the
    edges of the axes. A label that still crosses an arrow sits on a white background.
    """
    from matplotlib.textpath import TextPath

    ax.autoscale_view()
    (x_lo, x_hi), (y_lo, y_hi) = ax.get_xlim(), ax.get_ylim()
    fx = (xs - x_lo) / ((x_hi - x_lo) or 1.0)
    fy = (ys - y_lo) / ((y_hi - y_lo) or 1.0)
    away = np.zeros((len(names), 2))
    for b, t in pairs:
        d = np.array([fx[t] - fx[b], fy[t] - fy[b]])
        d = d / (np.hypot(*d) or 1.0)
        away[t] += d
        away[b] -= d
    box = ax.get_position()
    fig_w, fig_h = ax.figure.get_size_inches()
    w_pt, h_pt = box.width * fig_w * 72, box.height * fig_h * 72
    gap_x, gap_y, dot = 5 / w_pt, 4 / h_pt, (5 / w_pt, 5 / h_pt)
    arrow_pts = []
    for b, t in pairs:  # points every 3 pt along each arrow, without its ends (under the dots)
        length = np.hypot((fx[t] - fx[b]) * w_pt, (fy[t] - fy[b]) * h_pt)
        along = np.linspace(0, 1, max(int(length / 3), 2))
        along = along[(along * length > 5) & ((1 - along) * length > 5)]
        arrow_pts.append((fx[b] + along * (fx[t] - fx[b]), fy[b] + along * (fy[t] - fy[b])))
    placed = []
    for i, name in enumerate(names):
        tw = (1.08 * TextPath((0, 0), name, size=fontsize).get_extents().width + 3) / w_pt
        th = 1.25 * fontsize / h_pt
        sx = 1 if away[i, 0] >= 0 else -1
        sy = 1 if away[i, 1] >= 0 else -1
        options = [(sx, sy), (-sx, sy), (sx, -sy), (-sx, -sy), (sx, 0), (-sx, 0)]
        best = None
        for hx, hy in options:
            x0 = fx[i] + gap_x if hx > 0 else fx[i] - gap_x - tw
            y0 = (fy[i] + gap_y if hy > 0 else fy[i] - gap_y - th) if hy else fy[i] - th / 2
            cand = (x0, y0, x0 + tw, y0 + th)
            cost = 5 * (cand[0] < 0 or cand[2] > 1 or cand[1] < 0 or cand[3] > 1)
            cost += 3 * sum(_boxes_overlap(cand, other) for other in placed)
            cost += 3 * sum(_boxes_overlap(cand, (fx[j] - dot[0], fy[j] - dot[1],
                                                  fx[j] + dot[0], fy[j] + dot[1]))
                            for j in range(len(names)) if j != i)
            cost += sum(bool(((px > cand[0]) & (px < cand[2]) & (py > cand[1])
                              & (py < cand[3])).any()) for px, py in arrow_pts)
            if best is None or cost < best[0]:  # ties: the earlier (preferred) side
                best = (cost, hx, hy, cand)
        _, hx, hy, cand = best
        placed.append(cand)
        ax.annotate(name, (xs[i], ys[i]), textcoords="offset points",
                    xytext=(5 * hx, 4 * hy), ha="left" if hx > 0 else "right",
                    va={1: "bottom", -1: "top", 0: "center"}[hy], fontsize=fontsize, zorder=4,
                    bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none",
                          "alpha": 0.8})


def _boxes_overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# ---------------------------------------------------------------------------------------------
# epsilon and the conceptual diagram
# ---------------------------------------------------------------------------------------------

def plot_epsilon(ks, zetas, *, ax=None, exact=False):
    """The support threshold epsilon against the budget k, one line per zeta.

    Parameters
    ----------
    ks : array_like of int, shape (n_ks,)
        Budgets, ``k >= 1``.
    zetas : sequence of float, shape (n_zetas,)
        Miss probabilities in (0, 1).
    ax : matplotlib.axes.Axes, optional
    exact : bool, default False
        Passed to :func:`leash.support.epsilon` (paper bound ``-ln(zeta)/k``, or exact).

    Returns
    -------
    matplotlib.axes.Axes
        log2 k against log epsilon, one line per zeta (colours: :func:`sequential_colors`).
    """
    from .support import epsilon

    func = "plot_epsilon"
    ks = np.sort(np.unique(np.atleast_1d(np.asarray(ks))))
    zetas = list(np.atleast_1d(np.asarray(zetas, dtype=float)))
    if ks.size == 0 or not zetas:
        raise ValueError(f"{func}: 'ks' and 'zetas' must be non-empty.")
    curves = [epsilon(ks, float(z), exact=exact) for z in zetas]  # validates ks and zetas
    ax = _axes(ax, func)
    palette = sequential_colors(len(zetas))
    for j, (z, eps) in enumerate(zip(zetas, curves)):
        ax.plot(ks, np.atleast_1d(eps), marker="o", markersize=3, color=palette[j],
                label=f"ζ = {z:g}")
    _log2_ticks(ax, ks.astype(float))
    ax.set_yscale("log")
    ax.set_xlabel("k")
    ax.set_ylabel("ε (exact)" if exact else "ε = −ln(ζ) / k")
    ax.legend(frameon=False)
    return ax


def plot_support_diagram(ax=None, *, eps=1e-3, lim=(1e-6, 1.0)):
    """The conceptual four-region diagram of Figure 1.

    x: probability q(y*|x) of a correct completion under the base model; y: its probability
    under the RLVR model. Lines at epsilon split the log-log square into Preservation (both above
    epsilon), Expansion (only RLVR above), Shrinkage (only the base above) and Out of Support.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
    eps : float, default 1e-3
        Threshold drawn (illustrative), inside ``lim``.
    lim : (float, float), default (1e-6, 1.0)
        Axis range of both probabilities, ``0 < low < eps < high <= 1``.

    Returns
    -------
    matplotlib.axes.Axes
        With four region rectangles, two threshold lines, four region labels and two "ε"
        labels (one per threshold line).
    """
    func = "plot_support_diagram"
    try:
        lo, hi = (float(v) for v in lim)
    except (TypeError, ValueError):
        raise ValueError(f"The 'lim' parameter of {func} must be two floats. Got {lim!r}.") \
            from None
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < lo < eps < hi <= 1:
        raise ValueError(f"{func} needs 0 < lim[0] < eps < lim[1] <= 1. Got eps={eps!r}, "
                         f"lim={lim!r}.")
    ax = _axes(ax, func)
    from matplotlib.patches import Rectangle

    ax.set_xscale("log")
    ax.set_yscale("log")
    regions = {  # (x0, x1, y0, y1) of each category in (q, pi)
        "preservation": (eps, hi, eps, hi),
        "expansion": (lo, eps, eps, hi),
        "shrinkage": (eps, hi, lo, eps),
        "out_of_support": (lo, eps, lo, eps),
    }
    for cat, (x0, x1, y0, y1) in regions.items():
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=CATEGORY_COLORS[cat],
                               alpha=0.35, edgecolor="none"))
        ax.text(np.sqrt(x0 * x1), np.sqrt(y0 * y1), CATEGORY_LABELS[cat], ha="center",
                va="center", fontsize=9)
    ax.axvline(eps, color="0.2", linestyle="--", linewidth=1)
    ax.axhline(eps, color="0.2", linestyle="--", linewidth=1)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(r"base model $q(y^*\mid x)$")
    ax.set_ylabel(r"RLVR model $\pi_\theta(y^*\mid x)$")
    ax.text(eps, hi, " ε", ha="left", va="top", fontsize=10)
    ax.text(hi, eps, "ε ", ha="right", va="bottom", fontsize=10)
    ax.set_aspect("equal")
    return ax
