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
other labels take the RLVR colour, then the extra colours, in order of appearance.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "BASE_COLOR",
    "CATEGORY_COLORS",
    "CATEGORY_LABELS",
    "EXTRA_COLORS",
    "RLVR_COLOR",
    "ROLE_COLORS",
    "SFT_COLOR",
    "model_colors",
    "plot_entropy_scatter",
    "plot_epsilon",
    "plot_metric_trajectory",
    "plot_pass_at_k_curves",
    "plot_passk_bars",
    "plot_support_counts",
    "plot_support_diagram",
]

# Colours of seaborn's "deep" palette, assigned once for the whole project.
BASE_COLOR = "#4C72B0"
RLVR_COLOR = "#C44E52"
SFT_COLOR = "#55A868"
ROLE_COLORS = {"base": BASE_COLOR, "rlvr": RLVR_COLOR, "sft": SFT_COLOR}
EXTRA_COLORS = ("#8172B3", "#CCB974", "#64B5CD", "#DD8452", "#937860", "#DA8BC3", "#8C8C8C")
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


def _log2_ticks(ax, xs: np.ndarray) -> None:
    """log2 x axis with a tick at every value; beyond 8 values every other label is left blank
    (k = 1..16384 has 15 ticks, too many labels for a small panel)."""
    ax.set_xscale("log", base=2)
    ticks = np.unique(xs)
    labels = [f"{int(t)}" if float(t).is_integer() else f"{t:g}" for t in ticks]
    if len(ticks) > _MAX_TICK_LABELS:
        labels = [lab if i % 2 == 0 else "" for i, lab in enumerate(labels)]
    ax.set_xticks(ticks, labels=labels)
    ax.minorticks_off()


# ---------------------------------------------------------------------------------------------
# pass@k
# ---------------------------------------------------------------------------------------------

def plot_pass_at_k_curves(df, *, ax=None, x="k", y="pass_at_k", hue="model", annotate=False,
                          logx=True):
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
        Write each value (3 decimals) next to its point, as the paper does.
    logx : bool, default True
        log2 x axis with a tick at every k (k must be > 0).

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
    ax = _axes(ax, func)
    levels = _levels(df[hue])
    colors = model_colors(levels, _roles_of(df, hue, func))
    hue_values = df[hue].to_numpy()
    for j, level in enumerate(levels):
        sel = np.flatnonzero(hue_values == level)
        order = sel[np.argsort(xs[sel], kind="stable")]
        color = colors[level]
        ax.plot(xs[order], ys[order], marker="o", markersize=3.5, color=color,
                label=str(level))
        if lows is not None:
            ax.fill_between(xs[order], lows[order], highs[order], color=color, alpha=0.2,
                            linewidth=0)
        if annotate:
            offset = 6 if j % 2 == 0 else -11
            for xv, yv in zip(xs[order], ys[order]):
                ax.annotate(f"{yv:.3f}", (xv, yv), textcoords="offset points",
                            xytext=(0, offset), ha="center", fontsize=6, color=color)
    if logx:
        _log2_ticks(ax, xs)
    ax.set_xlabel(x)
    ax.set_ylabel("Pass@k" if y == "pass_at_k" else y)
    ax.legend(frameon=False)
    return ax


def _tick_style(n_labels: int) -> dict:
    """Slanted category labels when there are too many to sit side by side."""
    return {"rotation": 30, "ha": "right", "rotation_mode": "anchor"} if n_labels > 5 else {}


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
    ax.set_xticks(pos, labels=labels, **_tick_style(len(labels)))
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
    ax.set_xticks(pos, labels=[str(v) for v in df[by]], **_tick_style(len(df)))
    ax.set_ylabel("fraction of questions" if normalize else "questions")
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
        With ``len(metrics) * n_benchmarks`` lines (colour: benchmark, style: metric) plus a
        dotted reference line at 0.
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
    palette = (BASE_COLOR, RLVR_COLOR, SFT_COLOR, *EXTRA_COLORS)
    hue_values = df[hue].to_numpy()
    for j, level in enumerate(levels):
        sel = np.flatnonzero(hue_values == level)
        order = sel[np.argsort(xs[sel], kind="stable")]
        for i, m in enumerate(metrics):
            ax.plot(xs[order], values[m][order], linestyle=_METRIC_STYLES[i],
                    marker=_METRIC_MARKERS[i], markersize=3,
                    color=palette[j % len(palette)], label=f"{level} {m}")
    ax.axhline(0.0, color="0.6", linewidth=0.8, linestyle=":")
    handles = [Line2D([], [], color=palette[j % len(palette)], label=str(level))
               for j, level in enumerate(levels)]
    handles += [Line2D([], [], color="0.3", linestyle=_METRIC_STYLES[i],
                       marker=_METRIC_MARKERS[i], markersize=3, label=m)
                for i, m in enumerate(metrics)]
    ax.legend(handles=handles, frameon=False, fontsize=7, ncols=2)
    ax.set_xlabel("training step" if x == "step" else x)
    ax.set_ylabel("metric value")
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
        Write each model's label next to its point.

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
                   label=role if role != "rlvr" else "RLVR")
    for b, t in pairs:
        ax.add_patch(FancyArrowPatch((xs[b], ys[b]), (xs[t], ys[t]), arrowstyle="-|>",
                                     mutation_scale=10, color="0.35", linewidth=0.9,
                                     shrinkA=4, shrinkB=4, zorder=2))
    if labels:
        for i, m in enumerate(models):
            ax.annotate(str(m), (xs[i], ys[i]), textcoords="offset points", xytext=(4, 3),
                        fontsize=6)
    ax.set_xlabel("token-level entropy" if x == "token_entropy" else x)
    ax.set_ylabel("answer-level entropy" if y == "answer_entropy" else y)
    ax.legend(frameon=False)
    return ax


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
        log2 k against log epsilon, one line per zeta.
    """
    from .support import epsilon

    func = "plot_epsilon"
    ks = np.sort(np.unique(np.atleast_1d(np.asarray(ks))))
    zetas = list(np.atleast_1d(np.asarray(zetas, dtype=float)))
    if ks.size == 0 or not zetas:
        raise ValueError(f"{func}: 'ks' and 'zetas' must be non-empty.")
    curves = [epsilon(ks, float(z), exact=exact) for z in zetas]  # validates ks and zetas
    ax = _axes(ax, func)
    palette = (BASE_COLOR, RLVR_COLOR, SFT_COLOR, *EXTRA_COLORS)
    for j, (z, eps) in enumerate(zip(zetas, curves)):
        ax.plot(ks, np.atleast_1d(eps), marker="o", markersize=3,
                color=palette[j % len(palette)], label=f"ζ = {z:g}")
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
