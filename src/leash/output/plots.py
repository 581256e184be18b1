"""Plot helpers for the paper's figures: precomputed statistics in, a matplotlib Axes out.

Each helper takes a tidy DataFrame of statistics (never raw samples), rejects a missing column,
a non-finite value or a duplicated point (which a plotting library would silently average),
draws on ``ax`` or a new figure under :func:`theme` (seaborn's, in an ``rc_context``: never
global) and returns the Axes; :func:`leash.output.report.save_figure` saves. Colours are fixed once:
base blue, RLVR red, SFT green (from a ``role`` column or a role-named label), the support
categories :data:`CATEGORY_COLORS`, other series :data:`SERIES_COLORS`, ordered values
:func:`sequential_colors`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
import pandas as pd

from leash.core._validation import (
    DATAFRAME,
    ArrayLike,
    Boolean,
    Counts,
    Floats,
    InstancesOf,
    Interval,
    SequenceOf,
    StrOptions,
    StrSequence,
    invalid,
    shown,
    validate_params,
)
from leash.errors import LeashValueError, Param

__all__ = [
    "BASE_COLOR", "CATEGORY_COLORS", "CATEGORY_LABELS", "EXTRA_COLORS", "PAGE_WIDTH",
    "RLVR_COLOR", "ROLE_COLORS", "SERIES_COLORS", "SFT_COLOR", "model_colors", "panel_grid",
    "plot_entropy_scatter", "plot_epsilon", "plot_metric_trajectory", "plot_pass_at_k_curves",
    "plot_null", "plot_passk_bars", "plot_sensitivity", "plot_support_counts",
    "plot_support_curves",
    "plot_support_diagram",
    "sequential_colors", "shades", "shared_legend", "theme",
]

# Colours of seaborn's "deep" palette, assigned once for the whole project.
BASE_COLOR, RLVR_COLOR, SFT_COLOR = "#4C72B0", "#C44E52", "#55A868"
ROLE_COLORS = {"base": BASE_COLOR, "rlvr": RLVR_COLOR, "sft": SFT_COLOR}
_ROLE_LABELS = {"base": "Base", "rlvr": "RLVR", "sft": "SFT"}
EXTRA_COLORS = ("#8172B3", "#CCB974", "#64B5CD", "#DD8452", "#937860", "#DA8BC3", "#8C8C8C")
# Series that are not models (benchmarks, domains): no role colour, dark enough on white.
SERIES_COLORS = ("#8172B3", "#DD8452", "#2A9D8F", "#937860", "#DA8BC3", "#B8A02F", "#5F5F5F",
                 "#222222")
CATEGORY_COLORS = {"preservation": "#55A868", "expansion": "#8172B3", "shrinkage": "#DD8452",
                   "out_of_support": "#B0B0B0"}
CATEGORY_LABELS = {"preservation": "Preservation", "expansion": "Expansion",
                   "shrinkage": "Shrinkage", "out_of_support": "Out of Support"}
_COUNT_COLUMNS = {"P": "preservation", "E": "expansion", "S": "shrinkage", "O": "out_of_support"}
_METRIC_STYLES, _METRIC_MARKERS = ("-", "--", ":", "-."), ("o", "s", "^", "D")
#: Width of a multi-panel figure in inches: 1500 pixels at 200 dpi, a page's text width.
PAGE_WIDTH = 7.5
_SPARE = "leash: spare panel"

# The declared kinds of the parameters (leash.core._validation).
FRAME = [DATAFRAME]
AXES = InstancesOf("matplotlib.axes.Axes", "a matplotlib Axes",
                   lambda: __import__("matplotlib.figure").figure.Figure().add_subplot())
AX = [AXES, None]
COUNT = Interval(Integral, 1, None, closed="left")
SIZE = Interval(Real, 0, None, closed="neither")
TITLE = [str, None]


@validate_params({})
def theme() -> dict:
    """The matplotlib settings every helper draws under.

    Returns
    -------
    dict
        seaborn's ``axes_style("whitegrid")`` and ``plotting_context("paper")`` without their font
        family (so figures render alike on every machine); for a figure of your own, use
        ``matplotlib.rc_context(theme())``.
    """
    import seaborn as sns

    rc = {**sns.axes_style("whitegrid"), **sns.plotting_context("paper")}
    return {k: v for k, v in rc.items() if k not in ("font.family", "font.sans-serif")}


def _themed(func):
    """Run a helper under :func:`theme`, leaving the caller's rcParams as they were, but for the
    interactive mode: a backend loaded by the helper's first figure may turn it on (IPython's
    inline backend does), and turning it off again on the way out would keep every later figure
    of a notebook from being shown.
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        import matplotlib as mpl

        rc, interactive = theme(), None
        try:
            with mpl.rc_context(rc):
                try:
                    return func(*args, **kwargs)
                finally:
                    interactive = mpl.is_interactive()
        finally:
            if interactive is not None:
                mpl.interactive(interactive)
    return wrapper


def _axes(ax, func: str):
    """``ax`` (declared :data:`AX`; or a new 6 x 4 inch Axes), styled as :func:`theme` even if
    made outside it.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 4.0), layout="constrained")
    rc = theme()
    ax.set_facecolor(rc["axes.facecolor"])
    ax.set_axisbelow(True)
    ax.grid(True, color=rc["grid.color"], linewidth=rc["grid.linewidth"])
    for spine in ax.spines.values():
        spine.set(color=rc["axes.edgecolor"], linewidth=rc["axes.linewidth"])
    ax.tick_params(which="both", labelsize=rc["xtick.labelsize"], labelcolor=rc["xtick.color"],
                   length=0)
    for label in (ax.xaxis.label, ax.yaxis.label):
        label.set(fontsize=rc["axes.labelsize"], color=rc["axes.labelcolor"])
    return ax


def _require(df, columns, func: str, unique=None) -> pd.DataFrame:
    """``df`` (a DataFrame, declared), checked: with ``columns``, not empty, one row per
    ``unique`` key.
    """
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise LeashValueError(f"the DataFrame has no column {missing[0]!r} (needed: "
                              f"{list(columns)}; it has: {list(df.columns)}).", func=func,
                              key=missing[0])
    if df.empty:
        raise LeashValueError("the DataFrame is empty; nothing to plot.", func=func)
    dup = df.duplicated(subset=unique, keep=False) if unique else np.zeros(1, bool)
    if dup.any():
        first = df.loc[dup, unique].iloc[0].to_dict()
        raise LeashValueError(f"{int(dup.sum())} rows share the same {unique} (e.g. {first}); "
                              "pass one row per plotted point (statistics are not aggregated "
                              "here).", func=func, key=unique[0], value=first)
    return df


def _numeric(df: pd.DataFrame, column: str, func: str, *, allow_nan=False,
             positive=False) -> np.ndarray:
    try:
        values = pd.to_numeric(df[column], errors="raise").to_numpy(dtype=float, na_value=np.nan)
    except (ValueError, TypeError):
        raise LeashValueError(f"column {column!r} must be numeric. Got dtype "
                              f"{df[column].dtype}.", func=func, key=column) from None
    bad = np.isinf(values) | (np.isnan(values) if not allow_nan else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LeashValueError(f"column {column!r} must be finite. Got {values[i]} in row {i} "
                              f"(index label {df.index[i]!r}).", func=func, key=column,
                              value=values[i])
    if positive and (values <= 0).any():
        bad = values[values <= 0][0]
        raise LeashValueError(f"column {column!r} must be > 0 on a log axis. Got {bad}.",
                              func=func, key=column, value=bad)
    return values


def _points(ax) -> tuple[float, float]:
    """Width and height of ``ax`` in points."""
    box, (w, h) = ax.get_position(), ax.figure.get_size_inches()
    return box.width * w * 72, box.height * h * 72


def _labelled(n: int, step: int = 2) -> np.ndarray:
    """Which of ``n`` ticks get a label: all up to 8, else every ``step``-th and the last
    (then not the labelled one less than ``step`` before it).
    """
    keep = np.ones(n, dtype=bool)
    if n > 8:
        keep = np.arange(n) % step == 0
        if not keep[-1]:
            prev = np.flatnonzero(keep)[-1]
            keep[-1] = True
            keep[prev] = n - 1 - prev >= step
    return keep


def _log2_ticks(ax, xs: np.ndarray) -> np.ndarray:
    """log2 x axis, a tick at every value, labelled every other one (every fourth when
    those would not fit, widths estimated from the characters); returns which are labelled.
    """
    ax.set_xscale("log", base=2)
    ticks = np.unique(xs)
    labels = [f"{int(t)}" if float(t).is_integer() else f"{t:g}" for t in ticks]
    need = max(len(lab) for lab in labels) * 0.64 * theme()["xtick.labelsize"] + 4
    keep = _labelled(len(ticks), 2 if -(-len(labels) // 2) * need <= _points(ax)[0] else 4)
    ax.set_xticks(ticks, labels=[lab if k else "" for lab, k in zip(labels, keep)])
    ax.minorticks_off()
    return keep


def _categories(ax, labels) -> None:
    """Category ticks, slanted beyond 5 labels: 30 degrees, or 45 when too close."""
    style = {}
    if len(labels) > 5:
        slot = _points(ax)[0] / len(labels)
        style = {"rotation": 30 if slot >= 3 * theme()["xtick.labelsize"] else 45, "ha": "right",
                 "rotation_mode": "anchor"}
    ax.set_xticks(np.arange(len(labels)), labels=labels, **style)
    ax.xaxis.grid(False)


@validate_params({"labels": [ArrayLike()],
                  "roles": [InstancesOf(Mapping, "a dict of label to role", dict), None]})
def model_colors(labels, roles=None) -> dict:
    """The fixed colour of each model label.

    Parameters
    ----------
    labels : sequence of str
        Model labels, in order of appearance.
    roles : dict of str to str, optional
        ``label -> role``, roles among ``ROLE_COLORS``; a label that is a role name (any case)
        has that role.

    Returns
    -------
    dict of str to str
        The role's colour, else :data:`RLVR_COLOR` then :data:`EXTRA_COLORS`, unused ones first.
    """
    roles = dict(roles or {})
    out: dict = {}
    for label in labels:
        role = roles.get(label)
        if role is None and str(label).lower() in ROLE_COLORS:
            role = str(label).lower()
        if role is not None:
            if role not in ROLE_COLORS:
                raise LeashValueError(f"unknown role {role!r} for {label!r}; roles: "
                                      f"{list(ROLE_COLORS)}.", func="model_colors", key="role",
                                      value=role)
            out[label] = ROLE_COLORS[role]
    pool = [c for c in (RLVR_COLOR, *EXTRA_COLORS) if c not in out.values()]
    for label in labels:
        if label not in out:
            out[label] = pool.pop(0) if pool else EXTRA_COLORS[len(out) % len(EXTRA_COLORS)]
    return out


def _colors_of(df: pd.DataFrame, hue: str, levels, func: str) -> dict:
    """:func:`model_colors` of ``levels``, with the roles of the frame's ``role`` column."""
    roles = None
    if "role" in df.columns:
        per = df.groupby(hue, sort=False)["role"].nunique(dropna=False)
        if (per > 1).any():
            raise LeashValueError(f"model {per[per > 1].index[0]!r} has several values in "
                                  "column 'role'.", func=func, key="role")
        roles = dict(zip(df[hue], df["role"]))
    return model_colors(levels, roles)


@validate_params({"n": [COUNT]})
def sequential_colors(n: int) -> list:
    """``n`` colours of an ordered series (budgets, zetas), light to dark viridis.

    Parameters
    ----------
    n : int
        ``n >= 1``.

    Returns
    -------
    list of str
        Hex colours, none a role colour.
    """
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    return [to_hex(colormaps["viridis"](v)) for v in (np.linspace(0.85, 0.05, n) if n > 1
                                                      else [0.45])]


@validate_params({"color": [str, ArrayLike()], "n": [COUNT]})
def shades(color, n: int) -> list:
    """``n`` shades of ``color``, light to full: one run's checkpoints, the last the final model.

    Parameters
    ----------
    color : matplotlib colour
    n : int
        ``n >= 1``; the first ``n - 1`` mix in 70% down to 25% white.

    Returns
    -------
    list of str
        Hex colours, the last ``color`` itself.
    """
    from matplotlib.colors import to_hex, to_rgb

    rgb = np.array(to_rgb(color))
    white = [*np.linspace(0.7, 0.25, n - 1), 0.0] if n > 2 else [0.5, 0.0][2 - n:]
    return [to_hex(rgb + (1 - rgb) * w) for w in white]


@_themed
@validate_params({"n": [COUNT], "ncols": [COUNT], "panel_height": [SIZE], "width": [SIZE],
                  "sharex": [Boolean(), StrOptions("none", "all", "row", "col")],
                  "sharey": [Boolean(), StrOptions("none", "all", "row", "col")]})
def panel_grid(n, *, ncols=3, panel_height=2.3, width=PAGE_WIDTH, sharex=False, sharey=False):
    """A page-wide figure (1500 px at 200 dpi) of ``n`` panels in at most ``ncols`` columns.

    Parameters
    ----------
    n, ncols : int, ncols default 3
    panel_height, width : float, default 2.3 and :data:`PAGE_WIDTH` inches
    sharex, sharey : bool
        Passed to :func:`matplotlib.pyplot.subplots`.

    Returns
    -------
    fig : matplotlib.figure.Figure
        With constrained layout.
    axes : list of matplotlib.axes.Axes
        The ``n`` panels in reading order; the spare cells are off (:func:`shared_legend` uses one).
    """
    import matplotlib.pyplot as plt

    cols = min(ncols, n)
    rows = -(-n // cols)
    fig, grid = plt.subplots(rows, cols, figsize=(width, panel_height * rows), squeeze=False,
                             sharex=sharex, sharey=sharey, layout="constrained")
    cells = list(grid.flat)
    for spare in cells[n:]:
        spare.set_axis_off()
        spare.set_label(_SPARE)
    return fig, cells[:n]


@validate_params({"axes": [SequenceOf(AXES, "matplotlib Axes", "item", nonempty=True)],
                  "title": TITLE, "fontsize": [SIZE, str], "ncols": [COUNT, None]})
def shared_legend(axes, *, title=None, fontsize=9, ncols=None):
    """One legend for several panels, each label once, instead of theirs.

    It goes into a spare cell of :func:`panel_grid` if there is one, else below the panels.

    Parameters
    ----------
    axes : sequence of matplotlib.axes.Axes
    title : str, optional
    fontsize : float, default 9
    ncols : int, optional
        Columns below the panels (default: one row, at most 6).

    Returns
    -------
    matplotlib.legend.Legend
    """
    entries: dict = {}
    for ax in axes:
        legend = ax.get_legend()
        if legend is not None:
            hs, ls = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
            legend.remove()
        else:
            hs, ls = ax.get_legend_handles_labels()
        for h, lab in zip(hs, ls):
            entries.setdefault(lab, h)
    if not entries:
        raise LeashValueError(Param("axes"), " have no labelled artist to show.",
                              func="shared_legend")
    fig = axes[0].figure
    kw = {"frameon": False, "title": title, "fontsize": fontsize, "title_fontsize": fontsize}
    spare = [a for a in fig.axes if a.get_label() == _SPARE and not a.axison]
    if spare:
        return spare[-1].legend(entries.values(), entries.keys(), loc="center", **kw)
    return fig.legend(entries.values(), entries.keys(), loc="outside lower center",
                      ncols=ncols or min(len(entries), 6), **kw)


def _lines(ax, x, y, hue, levels, colors, markersize=4.0) -> list:
    """One seaborn line per level of ``hue``, sorted by x, labelled with its level."""
    import seaborn as sns

    before = len(ax.lines)
    sns.lineplot(x=x, y=y, hue=hue, hue_order=levels, palette=colors, estimator=None,
                 errorbar=None, sort=True, marker="o", markersize=markersize, legend=False,
                 ax=ax)
    lines = ax.lines[before:]
    for line, level in zip(lines, levels):
        line.set_label(str(level))
    return lines


@_themed
@validate_params({"df": FRAME, "ax": AX, "x": [str], "y": [str], "hue": [str],
                  "annotate": [Boolean()], "logx": [Boolean()], "hue_order": [ArrayLike(), None],
                  "palette": [InstancesOf(Mapping, "a dict of model to colour", dict), None]})
def plot_pass_at_k_curves(df, *, ax=None, x="k", y="pass_at_k", hue="model", annotate=False,
                          logx=True, hue_order=None, palette=None):
    """pass@k against k, one line per model (a panel of the paper's Figures 2-4).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per (model, k): columns ``x``, ``y``, ``hue``; optional ``low`` and ``high`` (a
        band around each curve) and ``role``.
    ax : matplotlib.axes.Axes, optional
    x, y, hue : str
        Columns of the budget, the value and the model.
    annotate : bool, default False
        Values (3 decimals) at the labelled budgets, as the paper: the highest curve's above, the
        lowest one's below, equal ones once in grey.
    logx : bool, default True
        log2 x axis with a tick at every k.
    hue_order : sequence, optional
        Order of the models (every model once); default: order of appearance.
    palette : dict, optional
        ``model -> colour``, overriding :func:`model_colors`.

    Returns
    -------
    matplotlib.axes.Axes
        One line (and band) per model.
    """
    func = "plot_pass_at_k_curves"
    _require(df, [x, y, hue], func, [hue, x])
    has_band = [c for c in ("low", "high") if c in df.columns]
    if len(has_band) == 1:
        raise LeashValueError(f"bands need both columns 'low' and 'high'; got only "
                              f"{has_band[0]!r}.", func=func, key=has_band[0])
    xs, ys = _numeric(df, x, func, positive=logx), _numeric(df, y, func)
    band = [_numeric(df, c, func) for c in has_band]
    levels = list(pd.unique(df[hue]))
    if hue_order is not None:
        wanted = list(hue_order)
        missing = [lv for lv in levels if lv not in wanted]
        extra = [lv for lv in wanted if lv not in levels]
        if missing or extra or len(set(wanted)) != len(wanted):
            raise invalid("hue_order", func, f"a list of each {hue!r} of the frame, once",
                          f"{shown(hue_order)} (missing: {missing}; not in the frame: {extra})",
                          hue_order)
        levels = wanted
    colors = _colors_of(df, hue, levels, func)
    colors.update({k: v for k, v in dict(palette or {}).items() if k in colors})
    ax = _axes(ax, func)
    hues = df[hue].to_numpy()
    _lines(ax, xs, ys, hues, levels, colors)
    for level in levels if band else ():
        sel = np.flatnonzero(hues == level)
        order = sel[np.argsort(xs[sel], kind="stable")]
        ax.fill_between(xs[order], band[0][order], band[1][order], color=colors[level],
                        alpha=0.2, linewidth=0)
    budgets = np.unique(xs)
    labelled = _log2_ticks(ax, xs) if logx else _labelled(len(budgets))
    for xv in budgets[labelled] if annotate else ():
        at = np.flatnonzero(xs == xv)
        at = at[np.argsort(ys[at], kind="stable")]
        lo, hi = at[0], at[-1]
        same = len(at) > 1 and f"{ys[hi]:.3f}" == f"{ys[lo]:.3f}"
        placed = [(hi, 5, "bottom", "0.3" if same else colors[hues[hi]])]
        if len(at) > 1 and not same:
            placed.append((lo, -5, "top", colors[hues[lo]]))
        for i, dy, va, color in placed:
            ax.annotate(f"{ys[i]:.3f}", (xs[i], ys[i]), textcoords="offset points",
                        xytext=(0, dy), ha="center", va=va, fontsize=6.5, color=color)
    if annotate:
        ax.margins(y=0.16)
    ax.set(xlabel=x, ylabel="Pass@k" if y == "pass_at_k" else y)
    ax.legend(frameon=False)
    return ax


@_themed
@validate_params({"df": FRAME, "ax": AX, "benchmark": [str], "hue": [str], "y": [str]})
def plot_passk_bars(df, *, ax=None, benchmark="benchmark", hue="model", y="pass_at_k"):
    """Grouped bars (seaborn) of pass@k per benchmark, base vs RLVR (Figure 1's panel).

    Parameters
    ----------
    df : pandas.DataFrame
        Columns ``benchmark``, ``hue``, ``y``, optional ``role`` and ``k`` (then only each
        benchmark's largest k, named on its tick); one row per model and benchmark.
    ax : matplotlib.axes.Axes, optional
    benchmark, hue, y : str

    Returns
    -------
    matplotlib.axes.Axes
        One bar container per model, one bar per benchmark in each.
    """
    import seaborn as sns

    func = "plot_passk_bars"
    _require(df, [benchmark, hue, y], func)
    data, kmax = df, None
    if "k" in df.columns:
        ks = pd.Series(_numeric(df, "k", func), index=df.index)
        kmax = ks.groupby(df[benchmark].to_numpy()).transform("max")
        data = df.loc[ks == kmax]
        kmax = kmax.groupby(df[benchmark].to_numpy()).first()
    _require(data, [], func, [benchmark, hue])
    benches, models = list(pd.unique(df[benchmark])), list(pd.unique(df[hue]))
    long = pd.DataFrame({"b": data[benchmark].to_numpy(), "m": data[hue].to_numpy(),
                         "v": _numeric(data, y, func)})
    table = long.pivot(index="b", columns="m", values="v").reindex(index=benches, columns=models)
    if table.isna().any().any():
        b, m = next((b, m) for b in benches for m in models if pd.isna(table.loc[b, m]))
        at = f" at k = {int(kmax[b])}" if kmax is not None else ""
        raise LeashValueError(f"no value for model {m!r} on benchmark {b!r}{at}; every model "
                              "needs one bar per benchmark.", func=func, key=y)
    ax = _axes(ax, func)
    before = len(ax.containers)
    sns.barplot(long, x="b", y="v", hue="m", order=benches, hue_order=models,
                palette=_colors_of(df, hue, models, func), saturation=1, errorbar=None,
                gap=0.05, legend=False, ax=ax)  # saturation 1: the colours of every figure
    for container, m in zip(ax.containers[before:], models):
        container.set_label(str(m))
    sep = " " if len(benches) > 5 else "\n"  # slanted labels stay on one line
    _categories(ax, [f"{b}{sep}@{int(kmax[b])}" if kmax is not None else str(b)
                     for b in benches])
    ax.set(xlabel="", ylabel="Pass@k" if y == "pass_at_k" else y, xlim=(-0.6, len(benches) - 0.4))
    ax.legend(frameon=False)
    return ax


def _category_label(col: str) -> str:
    return f"{CATEGORY_LABELS[_COUNT_COLUMNS[col]]} ({col})"


@_themed
@validate_params({"df": FRAME, "ax": AX, "by": [str], "normalize": [Boolean()]})
def plot_support_counts(df, *, ax=None, by="benchmark", normalize=False):
    """Stacked bars of the P/E/S/O counts per benchmark (or per model).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per bar: column ``by`` and the non-negative counts ``P``, ``E``, ``S``, ``O``.
    ax : matplotlib.axes.Axes, optional
    by : str, default "benchmark"
    normalize : bool, default False
        Fractions of each row's total (which must not be 0).

    Returns
    -------
    matplotlib.axes.Axes
        Four bar containers, P at the bottom; the legend right of the axes in stack order.
    """
    func = "plot_support_counts"
    _require(df, [by, *_COUNT_COLUMNS], func, [by])
    counts = np.column_stack([_numeric(df, c, func) for c in _COUNT_COLUMNS])
    if (counts < 0).any():
        i, j = np.argwhere(counts < 0)[0]
        col = list(_COUNT_COLUMNS)[j]
        raise LeashValueError(f"column {col!r} must be >= 0. Got {counts[i, j]} in row {i}.",
                              func=func, key=col, value=counts[i, j])
    if normalize:
        total = counts.sum(axis=1)
        if (total == 0).any():
            i = int(np.flatnonzero(total == 0)[0])
            raise LeashValueError(f"row {i} ({df[by].iloc[i]!r}) has P+E+S+O = 0 and cannot be "
                                  "normalized.", func=func, hint=("Pass ", Param(
                                      "normalize", value=False), " to plot the counts."))
        counts = counts / total[:, None]
    ax = _axes(ax, func)
    # seaborn draws no stacked bars of given heights: matplotlib's bar with bottoms
    bottom = np.zeros(len(df))
    for j, col in enumerate(_COUNT_COLUMNS):
        ax.bar(np.arange(len(df)), counts[:, j], 0.7, bottom=bottom, label=_category_label(col),
               color=CATEGORY_COLORS[_COUNT_COLUMNS[col]], linewidth=0)  # no edge: thin E stays
        bottom = bottom + counts[:, j]
    _categories(ax, [str(v) for v in df[by]])
    ax.set_ylabel("fraction of questions" if normalize else "questions")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], frameon=False, fontsize=8, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return ax


@_themed
@validate_params({"df": FRAME, "categories": [StrOptions(*_COUNT_COLUMNS), SequenceOf(
    StrOptions(*_COUNT_COLUMNS), "count columns", "item", nonempty=True)], "ax": AX, "x": [str],
                  "logx": [Boolean()]})
def plot_support_curves(df, *, categories=("P", "E", "S", "O"), ax=None, x="k", logx=True):
    """P/E/S/O counts against the budget k, one line per category in its colour.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per budget: column ``x`` and the ``categories`` (e.g.
        :func:`leash.analysis.tables.expected_support_curve`).
    categories : sequence of str, default ("P", "E", "S", "O")
    ax : matplotlib.axes.Axes, optional
    x : str, default "k"
    logx : bool, default True

    Returns
    -------
    matplotlib.axes.Axes
    """
    func = "plot_support_curves"
    categories = [categories] if isinstance(categories, str) else categories
    _require(df, [x, *categories], func, [x])
    xs = _numeric(df, x, func, positive=logx)
    ax = _axes(ax, func)
    labels = [_category_label(c) for c in categories]
    _lines(ax, np.tile(xs, len(categories)),
           np.concatenate([_numeric(df, c, func) for c in categories]),
           np.repeat(labels, len(xs)), labels,
           {_category_label(c): CATEGORY_COLORS[_COUNT_COLUMNS[c]] for c in categories}, 3.5)
    if logx:
        _log2_ticks(ax, xs)
    ax.set(xlabel=x, ylabel="questions")
    ax.legend(frameon=False, fontsize=8)
    return ax


@_themed
@validate_params({"df": FRAME, "metrics": [str, StrSequence(min_len=1, max_len=len(
    _METRIC_STYLES))], "ax": AX, "x": [str], "hue": [str]})
def plot_metric_trajectory(df, *, metrics=("SRR", "NDR", "NSCR"), ax=None, x="step",
                           hue="benchmark"):
    """Support metrics against the training step, per benchmark (Table 4 as a figure).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per (benchmark, step): columns ``x``, ``hue`` and the metrics (NaN: a gap).
    metrics : sequence of str, default ("SRR", "NDR", "NSCR")
        One to four, each with its line style and marker.
    ax : matplotlib.axes.Axes, optional
    x, hue : str

    Returns
    -------
    matplotlib.axes.Axes
        A line per benchmark (:data:`SERIES_COLORS`) and metric, a dotted line at 0 when a value
        is negative; with one metric, the y label is the metric and the legend the benchmarks.
    """
    from matplotlib.lines import Line2D

    func = "plot_metric_trajectory"
    metrics = [metrics] if isinstance(metrics, str) else metrics
    _require(df, [x, hue, *metrics], func, [hue, x])
    xs = _numeric(df, x, func)
    values = {m: _numeric(df, m, func, allow_nan=True) for m in metrics}
    ax = _axes(ax, func)
    # matplotlib, not seaborn's lineplot, which drops NaN and so would bridge the gaps
    levels, hues = list(pd.unique(df[hue])), df[hue].to_numpy()
    colors = [SERIES_COLORS[j % len(SERIES_COLORS)] for j in range(len(levels))]
    for level, color in zip(levels, colors):
        sel = np.flatnonzero(hues == level)
        order = sel[np.argsort(xs[sel], kind="stable")]
        for m, style, marker in zip(metrics, _METRIC_STYLES, _METRIC_MARKERS):
            ax.plot(xs[order], values[m][order], linestyle=style, marker=marker, markersize=3,
                    color=color, label=f"{level} {m}")
    if any((v[np.isfinite(v)] < 0).any() for v in values.values()):  # a signed metric: NSCR
        ax.axhline(0.0, color="0.6", linewidth=0.8, linestyle=":")
    one = len(metrics) == 1
    handles = [Line2D([], [], color=c, marker="o" if one else None, markersize=3, label=str(lv))
               for lv, c in zip(levels, colors)]
    handles += [] if one else [Line2D([], [], color="0.3", linestyle=s, marker=mk, markersize=3,
                                      label=m)
                               for m, s, mk in zip(metrics, _METRIC_STYLES, _METRIC_MARKERS)]
    ax.legend(handles=handles, frameon=False, fontsize=7, ncols=1 if one else 2)
    ax.set(xlabel="training step" if x == "step" else x,
           ylabel=metrics[0] if one else "metric value")
    return ax


@validate_params({"data": FRAME, "title": TITLE})
def plot_sensitivity(data, *, title=None):
    """Notebook 10's figure: SRR, NDR and NSCR against the count threshold ``min_count``, one
    panel each, a line per domain (or benchmark), one legend.

    Parameters
    ----------
    data : pandas.DataFrame
        A :func:`leash.artifacts.sensitivity_figure_data` result: ``min_count``, ``SRR``,
        ``NDR``, ``NSCR`` and ``domain`` (or ``benchmark``), one row per domain and threshold.
    title : str, optional
        Above the panels.

    Returns
    -------
    matplotlib.figure.Figure
        A page-wide row of three panels (:func:`panel_grid`), the legend titled by the rows'
        kind.
    """
    func = "plot_sensitivity"
    hue = "domain" if "domain" in data.columns else "benchmark"
    _require(data, [hue, "min_count", "SRR", "NDR", "NSCR"], func, [hue, "min_count"])
    fig, axes = panel_grid(3, ncols=3, panel_height=2.4)
    for ax, metric in zip(axes, ["SRR", "NDR", "NSCR"]):
        plot_metric_trajectory(data, metrics=metric, ax=ax, x="min_count", hue=hue)
        ax.set_xticks(sorted(data["min_count"].unique()))
        ax.set_xlabel("min_count")
    shared_legend(axes, title=hue)
    if title is not None:
        fig.suptitle(title, fontsize=10)
    return fig


@_themed
@validate_params({"data": FRAME, "statistics": [StrSequence(min_len=1)], "title": TITLE})
def plot_null(data, *, statistics=("E", "S"), title=None):
    """E and S of each pair beside their measured null: one panel per statistic, one row per
    pair, scope and null (the null's 95% range as a grey bar, its mean a grey dot, the pair's
    value a red diamond at the null's budget).

    Parameters
    ----------
    data : pandas.DataFrame
        A :func:`leash.artifacts.null_figure_data` result: ``row`` (the row's label),
        ``statistic``, ``pair``, ``null_mean``, ``null_low``, ``null_high``; one row per label
        and statistic.
    statistics : sequence of str, default ("E", "S")
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    func = "plot_null"
    _require(data, ["row", "statistic", "pair", "null_mean", "null_low", "null_high"], func,
             ["row", "statistic"])
    labels = list(dict.fromkeys(data["row"]))
    fig, axes = panel_grid(len(statistics), ncols=len(statistics),
                           panel_height=max(2.0, 0.28 * len(labels) + 0.9), sharey=True)
    y = np.arange(len(labels))[::-1]
    where = dict(zip(labels, y))
    for ax, stat in zip(axes, statistics):
        d = data[data["statistic"] == stat]
        if d.empty:
            raise LeashValueError(f"no row of statistic {stat!r}.", func=func, key="statistic",
                                  value=stat)
        ys = d["row"].map(where).to_numpy(dtype=float)
        values = {c: _numeric(d, c, func, allow_nan=True) for c in ("pair", "null_mean",
                                                                    "null_low", "null_high")}
        ax.hlines(ys, values["null_low"], values["null_high"], color="0.6", linewidth=3,
                  label="null, 95% range")
        ax.plot(values["null_mean"], ys, "o", color="0.35", markersize=4, label="null, mean")
        ax.plot(values["pair"], ys, "D", color=RLVR_COLOR, markersize=4.5, label="the pair")
        _axes(ax, func)
        ax.set_title(stat, fontsize=9)
        ax.set_xlabel("questions")
        ax.set_xlim(left=0)
    axes[0].set_yticks(y, labels, fontsize=7)
    axes[0].set_ylim(-0.7, len(labels) - 0.3)
    shared_legend(axes, fontsize=8)
    if title is not None:
        fig.suptitle(title, fontsize=9)
    return fig


@_themed
@validate_params({"df": FRAME, "ax": AX, "x": [str], "y": [str], "base": [str],
                  "labels": [Boolean()]})
def plot_entropy_scatter(df, *, ax=None, x="token_entropy", y="answer_entropy",
                         base="base_model", labels=True):
    """Token- vs answer-level entropy per model, an arrow from each base to its trained models.

    RLVR models can be more uncertain token by token yet give fewer distinct answers (Table 5).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per model: ``model``, ``role``, ``x``, ``y`` and ``base`` (each trained model's
        base, a row with role "base").
    ax : matplotlib.axes.Axes, optional
    x, y, base : str
    labels : bool, default True
        Each model's label by its point, away from its arrows, inside the axes.

    Returns
    -------
    matplotlib.axes.Axes
        A scatter per role, an arrow per pair, a text per model.
    """
    from matplotlib.patches import FancyArrowPatch

    func = "plot_entropy_scatter"
    _require(df, ["model", "role", x, y, base], func, ["model"])
    xs, ys = _numeric(df, x, func), _numeric(df, y, func)
    roles = df["role"].astype(str).to_numpy()
    unknown = sorted(set(roles) - set(ROLE_COLORS))
    if unknown:
        raise LeashValueError(f"column 'role' has unknown value(s) {unknown}; roles: "
                              f"{list(ROLE_COLORS)}.", func=func, key="role", value=unknown[0])
    models = df["model"].to_numpy()
    where = {m: i for i, m in enumerate(models)}
    pairs = []
    for i in np.flatnonzero(roles != "base"):
        b = df[base].iloc[i]
        if pd.isna(b) or b not in where or roles[where[b]] != "base":
            raise LeashValueError(f"model {models[i]!r} (role {roles[i]!r}) names base {b!r} "
                                  f"in column {base!r}, which is not a model with role 'base' "
                                  "in the frame.", func=func, key=base, value=b)
        pairs.append((where[b], i))
    ax = _axes(ax, func)
    for role in [r for r in ROLE_COLORS if r in set(roles)]:
        ax.scatter(xs[roles == role], ys[roles == role], color=ROLE_COLORS[role], s=28,
                   zorder=3, label=_ROLE_LABELS[role], edgecolor="white", linewidth=0.6)
    for b, t in pairs:
        ax.add_patch(FancyArrowPatch((xs[b], ys[b]), (xs[t], ys[t]), arrowstyle="-|>",
                                     mutation_scale=10, color="0.35", linewidth=0.9,
                                     shrinkA=4, shrinkB=4, zorder=2))
    ax.margins(x=0.08, y=0.1)
    if labels:
        _label_points(ax, xs, ys, [str(m) for m in models], pairs)
    ax.set(xlabel="token-level entropy" if x == "token_entropy" else x,
           ylabel="answer-level entropy" if y == "answer_entropy" else y)
    ax.legend(frameon=False)
    return ax


def _label_points(ax, xs, ys, names, pairs, fontsize=7.5) -> None:
    """Each point's name beside it, where it overlaps least (greedy).

    Candidates: the four corners and left/right, the side away from the point's arrows first;
    a box (in axes fractions) costs 5 outside the axes, 3 per label or point it covers, 1 per
    arrow it crosses. adjustText would add a dependency and knows no side away from arrows.
    """
    from matplotlib.textpath import TextPath

    ax.autoscale_view()
    (x_lo, x_hi), (y_lo, y_hi) = ax.get_xlim(), ax.get_ylim()
    fx, fy = (xs - x_lo) / ((x_hi - x_lo) or 1.0), (ys - y_lo) / ((y_hi - y_lo) or 1.0)
    away = np.zeros((len(names), 2))
    for b, t in pairs:
        d = np.array([fx[t] - fx[b], fy[t] - fy[b]])
        away[t] += d / (np.hypot(*d) or 1.0)
        away[b] -= d / (np.hypot(*d) or 1.0)
    w_pt, h_pt = _points(ax)
    gap_x, gap_y, dot_x, dot_y = 5 / w_pt, 4 / h_pt, 5 / w_pt, 5 / h_pt
    arrow_pts = []
    for b, t in pairs:  # points every 3 pt along each arrow, without its ends (under the dots)
        length = np.hypot((fx[t] - fx[b]) * w_pt, (fy[t] - fy[b]) * h_pt)
        along = np.linspace(0, 1, max(int(length / 3), 2))
        along = along[(along * length > 5) & ((1 - along) * length > 5)]
        arrow_pts.append((fx[b] + along * (fx[t] - fx[b]), fy[b] + along * (fy[t] - fy[b])))
    dots = [(fx[j] - dot_x, fy[j] - dot_y, fx[j] + dot_x, fy[j] + dot_y)
            for j in range(len(names))]
    placed = []
    for i, name in enumerate(names):
        tw = (1.08 * TextPath((0, 0), name, size=fontsize).get_extents().width + 3) / w_pt
        th = 1.25 * fontsize / h_pt
        sx, sy = (1 if away[i, 0] >= 0 else -1), (1 if away[i, 1] >= 0 else -1)
        best = None
        for hx, hy in [(sx, sy), (-sx, sy), (sx, -sy), (-sx, -sy), (sx, 0), (-sx, 0)]:
            x0 = fx[i] + gap_x if hx > 0 else fx[i] - gap_x - tw
            y0 = (fy[i] + gap_y if hy > 0 else fy[i] - gap_y - th) if hy else fy[i] - th / 2
            box = (x0, y0, x0 + tw, y0 + th)
            cost = 5 * (box[0] < 0 or box[2] > 1 or box[1] < 0 or box[3] > 1)
            cost += 3 * sum(_overlap(box, o) for o in placed)
            cost += 3 * sum(_overlap(box, d) for j, d in enumerate(dots) if j != i)
            cost += sum(bool(((px > box[0]) & (px < box[2]) & (py > box[1])
                              & (py < box[3])).any()) for px, py in arrow_pts)
            if best is None or cost < best[0]:  # ties: the earlier (preferred) side
                best = (cost, hx, hy, box)
        _, hx, hy, box = best
        placed.append(box)
        ax.annotate(name, (xs[i], ys[i]), textcoords="offset points",
                    xytext=(5 * hx, 4 * hy), ha="left" if hx > 0 else "right",
                    va={1: "bottom", -1: "top", 0: "center"}[hy], fontsize=fontsize, zorder=4,
                    bbox={"boxstyle": "round,pad=0.1", "facecolor": "white", "edgecolor": "none",
                          "alpha": 0.8})


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@_themed
@validate_params({"ks": [Counts(minimum=1, nonempty=True)],
                  "zetas": [Floats(0, 1, closed="neither", nonempty=True)], "ax": AX,
                  "exact": [Boolean()]})
def plot_epsilon(ks, zetas, *, ax=None, exact=False):
    """The support threshold epsilon against the budget k, one line per zeta.

    Parameters
    ----------
    ks : array_like of int
        Budgets, ``k >= 1``.
    zetas : sequence of float
        Miss probabilities in (0, 1).
    ax : matplotlib.axes.Axes, optional
    exact : bool, default False
        Passed to :func:`leash.core.support.epsilon`.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from leash.core.support import epsilon
    from leash.errors import LeashWarning

    ks, zetas = np.unique(np.atleast_1d(ks)), list(np.atleast_1d(zetas))
    with warnings.catch_warnings():  # a curve of epsilon over k may pass 1: it is drawn, not
        warnings.filterwarnings("ignore", "epsilon", LeashWarning)  # used as a threshold
        curves = [np.atleast_1d(epsilon(ks, float(z), exact=exact)) for z in zetas]  # validates
    ax = _axes(ax, "plot_epsilon")
    labels = [f"ζ = {z:g}" for z in zetas]
    _lines(ax, np.tile(ks, len(zetas)), np.concatenate(curves), np.repeat(labels, ks.size),
           labels, dict(zip(labels, sequential_colors(len(zetas)))), 3.5)
    _log2_ticks(ax, ks.astype(float))
    ax.set(yscale="log", xlabel="k", ylabel="ε (exact)" if exact else "ε = −ln(ζ) / k")
    ax.legend(frameon=False)
    return ax


@_themed
@validate_params({"ax": AX, "eps": [Interval(Real, 0, 1, closed="neither")],
                  "lim": [Floats(0, 1, closed="right", ndim=(1,), size=2)]})
def plot_support_diagram(ax=None, *, eps=1e-3, lim=(1e-6, 1.0)):
    """The four-region diagram of Figure 1 on log-log axes.

    x is the base model's probability of a correct completion, y the RLVR model's; lines at
    epsilon split Preservation, Expansion, Shrinkage and Out of Support.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
    eps : float, default 1e-3
    lim : (float, float), default (1e-6, 1.0)
        Range of both axes, ``0 < lim[0] < eps < lim[1] <= 1``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from matplotlib.patches import Rectangle

    func = "plot_support_diagram"
    lo, hi = (float(v) for v in lim)
    if not lo < eps < hi:
        raise invalid("eps", func, "between lim[0] and lim[1] (0 < lim[0] < eps < lim[1] <= 1)",
                      f"eps={eps!r} with lim=({lo!r}, {hi!r})", eps)
    ax = _axes(ax, func)
    ax.grid(False)
    ax.set(xscale="log", yscale="log")
    regions = {  # (x0, x1, y0, y1) of each category in (q, pi)
        "preservation": (eps, hi, eps, hi), "expansion": (lo, eps, eps, hi),
        "shrinkage": (eps, hi, lo, eps), "out_of_support": (lo, eps, lo, eps),
    }
    for cat, (x0, x1, y0, y1) in regions.items():
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, facecolor=CATEGORY_COLORS[cat],
                               alpha=0.35, edgecolor="none"))
        ax.text(np.sqrt(x0 * x1), np.sqrt(y0 * y1), CATEGORY_LABELS[cat], ha="center",
                va="center", fontsize=9)
    ax.axvline(eps, color="0.2", linestyle="--", linewidth=1)
    ax.axhline(eps, color="0.2", linestyle="--", linewidth=1)
    ax.set(xlim=(lo, hi), ylim=(lo, hi), xlabel=r"base model $q(y^*\mid x)$",
           ylabel=r"RLVR model $\pi_\theta(y^*\mid x)$", aspect="equal")
    ax.text(eps, hi, " ε", ha="left", va="top", fontsize=10)
    ax.text(hi, eps, "ε ", ha="right", va="bottom", fontsize=10)
    return ax
