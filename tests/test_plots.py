"""Tests of leash.output.plots: each helper draws exactly the numbers it is given, on the given
Axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer
from matplotlib.patches import FancyArrowPatch, Rectangle

from leash.core.support import epsilon
from leash.output import plots
from leash.output.plots import (
    BASE_COLOR,
    CATEGORY_COLORS,
    EXTRA_COLORS,
    RLVR_COLOR,
    SERIES_COLORS,
    SFT_COLOR,
    model_colors,
    panel_grid,
    plot_entropy_scatter,
    plot_epsilon,
    plot_metric_trajectory,
    plot_pass_at_k_curves,
    plot_passk_bars,
    plot_sensitivity,
    plot_support_counts,
    plot_support_curves,
    plot_support_diagram,
    sequential_colors,
    shades,
    shared_legend,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _curves():
    # rows deliberately out of k order: the helper sorts by k within each model
    return pd.DataFrame({
        "model": ["Base", "Base", "Base", "ProRL", "ProRL", "ProRL"],
        "k": [4, 1, 2, 1, 2, 4],
        "pass_at_k": [0.3, 0.1, 0.2, 0.4, 0.5, 0.6],
    })


def _bars():
    return pd.DataFrame({
        "benchmark": ["AIME24", "AIME24", "AMC", "AMC", "AIME24", "AIME24"],
        "model": ["Base", "ProRL", "Base", "ProRL", "Base", "ProRL"],
        "k": [8192, 8192, 8192, 8192, 1024, 1024],
        "pass_at_k": [0.933, 0.833, 1.0, 1.0, 0.5, 0.4],
    })


def _counts():
    return pd.DataFrame({"benchmark": ["AIME24", "AMC23", "MATH500"],
                         "P": [25, 40, 480], "E": [0, 0, 15], "S": [3, 0, 2], "O": [2, 0, 3]})


def _trajectory():
    return pd.DataFrame({
        "benchmark": ["AIME24"] * 3 + ["AMC23"] * 3,
        "step": [200, 0, 100, 0, 100, 200],
        "SRR": [0.8, 1.0, 0.9, 1.0, 0.95, 0.9],
        "NDR": [0.1, np.nan, 0.05, np.nan, 0.0, 0.02],
        "NSCR": [-0.1, 0.0, -0.05, 0.0, -0.05, -0.08],
    })


def _entropy():
    return pd.DataFrame({
        "model": ["DeepSeek-1.5B", "ProRL-1.5B", "DeepSeek-7B", "AceReason-7B", "SFT-7B"],
        "role": ["base", "rlvr", "base", "rlvr", "sft"],
        "token_entropy": [0.50, 0.62, 0.45, 0.40, 0.47],
        "answer_entropy": [1.20, 0.70, 0.90, 0.60, 0.85],
        "base_model": [None, "DeepSeek-1.5B", None, "DeepSeek-7B", "DeepSeek-7B"],
    })


# ---------------------------------------------------------------------------------------------
# the palette
# ---------------------------------------------------------------------------------------------

def test_model_colors_are_fixed_by_role():
    assert model_colors(["Base", "ProRL"]) == {"Base": BASE_COLOR, "ProRL": RLVR_COLOR}
    assert model_colors(["A", "B"], {"A": "rlvr", "B": "base"}) == {"A": RLVR_COLOR,
                                                                   "B": BASE_COLOR}
    assert model_colors(["SFT", "DAPO"]) == {"SFT": SFT_COLOR, "DAPO": RLVR_COLOR}
    assert model_colors(["x", "y", "z"]) == {"x": RLVR_COLOR, "y": EXTRA_COLORS[0],
                                             "z": EXTRA_COLORS[1]}
    with pytest.raises(ValueError, match="unknown role 'teacher'"):
        model_colors(["x"], {"x": "teacher"})


def test_series_sequential_and_shaded_colours_keep_clear_of_the_roles():
    roles = {BASE_COLOR.lower(), RLVR_COLOR.lower(), SFT_COLOR.lower()}
    assert not roles & {c.lower() for c in SERIES_COLORS}
    seq = sequential_colors(4)
    assert len(seq) == 4 and len(set(seq)) == 4 and not roles & set(seq)
    assert len(sequential_colors(1)) == 1
    red = shades(RLVR_COLOR, 5)
    assert len(set(red)) == 5 and red[-1] == RLVR_COLOR.lower()
    assert shades(RLVR_COLOR, 1) == [RLVR_COLOR.lower()] and len(shades(RLVR_COLOR, 2)) == 2
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="'n' parameter"):
            sequential_colors(bad)
        with pytest.raises(ValueError, match="'n' parameter"):
            shades(RLVR_COLOR, bad)


# ---------------------------------------------------------------------------------------------
# plot_pass_at_k_curves
# ---------------------------------------------------------------------------------------------

def test_pass_at_k_curves_draw_one_sorted_line_per_model():
    ax = plot_pass_at_k_curves(_curves())
    assert isinstance(ax, Axes)
    assert len(ax.lines) == 2
    base, rl = ax.lines
    np.testing.assert_array_equal(base.get_xdata(), [1, 2, 4])
    np.testing.assert_array_equal(base.get_ydata(), [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(rl.get_ydata(), [0.4, 0.5, 0.6])
    assert to_hex(base.get_color()) == BASE_COLOR.lower()
    assert to_hex(rl.get_color()) == RLVR_COLOR.lower()
    assert ax.get_xscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "4"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Base", "ProRL"]
    assert len(ax.texts) == 0 and len(ax.collections) == 0


def test_pass_at_k_curves_many_budgets_label_every_other_tick():
    ks = 2 ** np.arange(15)  # 1 .. 16384, as in Figure 3
    df = pd.DataFrame({"model": "Base", "k": ks, "pass_at_k": np.linspace(0, 1, 15)})
    ax = plot_pass_at_k_curves(df)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "1" and labels[1] == "" and labels[-1] == "16384"
    np.testing.assert_array_equal(ax.get_xticks(), ks)


def test_pass_at_k_curves_always_label_the_largest_budget():
    ks = 2 ** np.arange(12)  # 1 .. 2048: every other label would end at 1024
    df = pd.DataFrame({"model": "Base", "k": ks, "pass_at_k": np.linspace(0, 1, 12)})
    _, ax = plt.subplots(figsize=(6, 4))
    labels = [t.get_text() for t in plot_pass_at_k_curves(df, ax=ax).get_xticklabels()]
    assert labels[-1] == "2048" and labels[-2] == "" and labels[-3] == ""  # 1024 unlabelled
    assert labels[:3] == ["1", "", "4"]


def test_pass_at_k_curves_narrow_panel_labels_every_fourth_budget():
    ks = 2 ** np.arange(15)
    df = pd.DataFrame({"model": "Base", "k": ks, "pass_at_k": np.linspace(0, 1, 15)})
    _, ax = plt.subplots(figsize=(2.5, 2))
    labels = [t.get_text() for t in plot_pass_at_k_curves(df, ax=ax).get_xticklabels()]
    assert [lab for lab in labels if lab] == ["1", "16", "256", "16384"]


def test_pass_at_k_curves_annotations_and_bands():
    df = _curves().assign(low=lambda d: d.pass_at_k - 0.05, high=lambda d: d.pass_at_k + 0.05)
    ax = plot_pass_at_k_curves(df, annotate=True)
    assert sorted(t.get_text() for t in ax.texts) == ["0.100", "0.200", "0.300", "0.400",
                                                      "0.500", "0.600"]
    assert len(ax.collections) == 2  # one band per model
    band = ax.collections[0].get_paths()[0].vertices
    assert np.isclose(band[:, 1].min(), 0.05) and np.isclose(band[:, 1].max(), 0.35)


def test_pass_at_k_curves_annotate_the_higher_value_above_and_the_lower_below():
    ks = 2 ** np.arange(11)  # 1 .. 1024: labels at 1, 4, 16, 64, 256, 1024
    base = np.linspace(0.1, 0.9, 11)
    rl = np.full(11, 0.5)
    rl[4] = base[4]  # equal at k = 16: written once, in grey
    df = pd.DataFrame({"model": ["Base"] * 11 + ["RLVR"] * 11, "k": np.tile(ks, 2),
                       "pass_at_k": np.concatenate([base, rl])})
    _, ax = plt.subplots(figsize=(4, 3))
    plot_pass_at_k_curves(df, ax=ax, annotate=True)
    texts = {(t.xy[0], t.get_text()): t for t in ax.texts}
    assert {x for x, _ in texts} == {1, 4, 16, 64, 256, 1024}
    assert len(ax.texts) == 11
    low_k = texts[(1, "0.100")], texts[(1, "0.500")]  # base lower at k = 1: below
    assert low_k[0].get_va() == "top" and low_k[1].get_va() == "bottom"
    assert to_hex(low_k[0].get_color()) == BASE_COLOR.lower()
    high_k = texts[(1024, "0.900")], texts[(1024, "0.500")]  # base higher at k = 1024: above
    assert high_k[0].get_va() == "bottom" and high_k[1].get_va() == "top"
    equal = texts[(16, "0.420")]
    assert equal.get_va() == "bottom" and to_hex(equal.get_color()) == to_hex("0.3")
    # head room: the labels stay inside the axes
    lo, hi = ax.get_ylim()
    assert lo < 0.1 - 0.1 and hi > 0.9 + 0.1


def test_pass_at_k_curves_hue_order_and_palette():
    ax = plot_pass_at_k_curves(_curves(), hue_order=["ProRL", "Base"],
                               palette={"ProRL": "#000000", "nobody": "#ffffff"})
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["ProRL", "Base"]
    rl, base = ax.lines
    assert to_hex(rl.get_color()) == "#000000" and to_hex(base.get_color()) == BASE_COLOR.lower()
    np.testing.assert_array_equal(rl.get_ydata(), [0.4, 0.5, 0.6])
    with pytest.raises(ValueError, match=r"'hue_order' .*\(missing: \['Base'\]"):
        plot_pass_at_k_curves(_curves(), hue_order=["ProRL"])
    with pytest.raises(ValueError, match=r"not in the frame: \['SFT'\]"):
        plot_pass_at_k_curves(_curves(), hue_order=["ProRL", "Base", "SFT"])


def test_pass_at_k_curves_on_given_axes_linear():
    fig, (a1, a2) = plt.subplots(1, 2)
    out = plot_pass_at_k_curves(_curves(), ax=a2, logx=False)
    assert out is a2 and len(a2.lines) == 2 and len(a1.lines) == 0
    assert a2.get_xscale() == "linear"


def test_pass_at_k_curves_validation():
    with pytest.raises(ValueError, match="no column 'pass_at_k'"):
        plot_pass_at_k_curves(_curves().drop(columns="pass_at_k"))
    with pytest.raises(ValueError, match="no column 'family'"):
        plot_pass_at_k_curves(_curves(), hue="family")
    with pytest.raises(ValueError, match="both columns 'low' and 'high'"):
        plot_pass_at_k_curves(_curves().assign(low=0.0))
    dup = pd.concat([_curves(), _curves().iloc[:1]])
    with pytest.raises(ValueError, match=r"2 rows share the same \['model', 'k'\]"):
        plot_pass_at_k_curves(dup)
    with pytest.raises(ValueError, match="must be > 0 on a log axis"):
        plot_pass_at_k_curves(_curves().assign(k=[0, 1, 2, 0, 1, 2]))
    with pytest.raises(ValueError, match="'pass_at_k' must be finite. Got nan in row 2"):
        plot_pass_at_k_curves(_curves().assign(pass_at_k=[0.1, 0.2, np.nan, 0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match="empty"):
        plot_pass_at_k_curves(_curves().iloc[:0])
    with pytest.raises(TypeError, match="'ax' parameter"):
        plot_pass_at_k_curves(_curves(), ax="left")
    with pytest.raises(TypeError, match="'df' parameter"):
        plot_pass_at_k_curves(_curves().to_dict())


# ---------------------------------------------------------------------------------------------
# plot_passk_bars
# ---------------------------------------------------------------------------------------------

def test_passk_bars_use_the_largest_budget_per_benchmark():
    ax = plot_passk_bars(_bars())
    assert isinstance(ax, Axes)
    containers = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(containers) == 2 and len(ax.patches) == 4
    heights = {c.get_label(): [p.get_height() for p in c] for c in containers}
    assert heights == {"Base": [0.933, 1.0], "ProRL": [0.833, 1.0]}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["AIME24\n@8192", "AMC\n@8192"]
    # bars of one benchmark sit side by side, centred on the tick
    b0, r0 = containers[0][0], containers[1][0]
    centre = (b0.get_x() + r0.get_x() + r0.get_width()) / 2
    assert np.isclose(centre, 0.0, atol=0.02)


def test_passk_bars_without_k_and_on_given_axes():
    _, ax = plt.subplots()
    df = _bars().query("k == 8192").drop(columns="k")
    assert plot_passk_bars(df, ax=ax) is ax
    assert len(ax.patches) == 4
    assert [t.get_text() for t in ax.get_xticklabels()] == ["AIME24", "AMC"]


def test_passk_bars_validation():
    with pytest.raises(ValueError, match="no column 'benchmark'"):
        plot_passk_bars(_bars().drop(columns="benchmark"))
    missing = _bars().drop(index=3)  # ProRL on AMC at k = 8192
    with pytest.raises(ValueError, match="no value for model 'ProRL' on benchmark 'AMC' at "
                                         "k = 8192"):
        plot_passk_bars(missing)


# ---------------------------------------------------------------------------------------------
# plot_support_counts
# ---------------------------------------------------------------------------------------------

def test_support_counts_stack_p_e_s_o():
    ax = plot_support_counts(_counts())
    assert isinstance(ax, Axes)
    assert len(ax.containers) == 4 and len(ax.patches) == 12
    labels = [c.get_label() for c in ax.containers]
    assert labels == ["Preservation (P)", "Expansion (E)", "Shrinkage (S)",
                      "Out of Support (O)"]
    # MATH500 column: bottoms 0, 480, 495, 497 and heights 480, 15, 2, 3
    col = [c[2] for c in ax.containers]
    assert [p.get_y() for p in col] == [0, 480, 495, 497]
    assert [p.get_height() for p in col] == [480, 15, 2, 3]
    assert to_hex(col[0].get_facecolor()) == CATEGORY_COLORS["preservation"].lower()


def test_support_counts_legend_sits_outside_in_stack_order():
    ax = plot_support_counts(_counts())
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "Out of Support (O)", "Shrinkage (S)", "Expansion (E)", "Preservation (P)"]
    ax.figure.canvas.draw()
    assert legend.get_window_extent().x0 > ax.get_window_extent().x1  # right of the bars


def test_support_curves_one_line_per_category_in_its_colour():
    curve = pd.DataFrame({"k": [4, 1, 2], "P": [3.0, 1.0, 2.0], "E": [0.5, 0.1, 0.2],
                          "S": [1.0, 2.0, 1.5], "O": [5.5, 6.9, 6.3]})
    ax = plot_support_curves(curve, categories=["P", "S"])
    assert len(ax.lines) == 2
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1, 2, 4])
    np.testing.assert_array_equal(ax.lines[1].get_ydata(), [2.0, 1.5, 1.0])
    assert to_hex(ax.lines[1].get_color()) == CATEGORY_COLORS["shrinkage"].lower()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Preservation (P)",
                                                                  "Shrinkage (S)"]
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="'categories' parameter"):
        plot_support_curves(curve, categories=["X"])
    with pytest.raises(ValueError, match="share the same"):
        plot_support_curves(curve.assign(k=1))


def test_support_counts_normalized_on_given_axes():
    _, ax = plt.subplots()
    out = plot_support_counts(_counts(), ax=ax, normalize=True)
    assert out is ax
    tops = [c[0].get_y() + c[0].get_height() for c in ax.containers]
    assert np.isclose(tops[-1], 1.0)
    assert np.isclose(ax.containers[0][0].get_height(), 25 / 30)


def test_support_counts_validation():
    with pytest.raises(ValueError, match="no column 'O'"):
        plot_support_counts(_counts().drop(columns="O"))
    with pytest.raises(ValueError, match="'E' must be >= 0"):
        plot_support_counts(_counts().assign(E=[0, -1, 0]))
    zero = _counts().assign(P=[0, 40, 1], E=0, S=0, O=0)
    with pytest.raises(ValueError, match="row 0 \\('AIME24'\\) has P\\+E\\+S\\+O = 0"):
        plot_support_counts(zero, normalize=True)


# ---------------------------------------------------------------------------------------------
# plot_metric_trajectory
# ---------------------------------------------------------------------------------------------

def test_metric_trajectory_one_line_per_benchmark_and_metric():
    ax = plot_metric_trajectory(_trajectory())
    assert isinstance(ax, Axes)
    assert len(ax.lines) == 2 * 3 + 1  # + the reference line at 0
    first = ax.lines[0]  # AIME24 SRR, sorted by step
    np.testing.assert_array_equal(first.get_xdata(), [0, 100, 200])
    np.testing.assert_array_equal(first.get_ydata(), [1.0, 0.9, 0.8])
    ndr = ax.lines[1].get_ydata()
    assert np.isnan(ndr[0]) and np.allclose(ndr[1:], [0.05, 0.1])  # undefined NDR is a gap
    assert len(ax.get_legend().get_texts()) == 2 + 3


def test_metric_trajectory_subset_on_given_axes():
    _, ax = plt.subplots()
    assert plot_metric_trajectory(_trajectory(), metrics="SRR", ax=ax) is ax
    assert len(ax.lines) == 2  # SRR is never negative: no reference line at 0
    assert ax.get_ylabel() == "SRR"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["AIME24", "AMC23"]
    assert [to_hex(line.get_color()) for line in ax.lines] == [c.lower()
                                                               for c in SERIES_COLORS[:2]]
    _, ax = plt.subplots()
    plot_metric_trajectory(_trajectory(), metrics="NSCR", ax=ax)
    assert len(ax.lines) == 2 + 1 and ax.lines[-1].get_ydata()[0] == 0.0


def test_metric_trajectory_validation():
    with pytest.raises(ValueError, match="no column 'SDS'"):
        plot_metric_trajectory(_trajectory(), metrics=("SRR", "SDS"))
    with pytest.raises(ValueError, match="'metrics' parameter of plot_metric_trajectory must "
                                         "be a list or tuple of 1 to 4 str"):
        plot_metric_trajectory(_trajectory(), metrics=())
    with pytest.raises(ValueError, match="share the same"):
        plot_metric_trajectory(_trajectory().assign(step=0))


def _sensitivity(hue="domain"):
    return pd.DataFrame({"pair": "p", hue: ["Math", "Overall"] * 3,
                         "min_count": [1, 1, 2, 2, 5, 5], "k_min": 8, "k_max": 8,
                         "SRR": [0.9, 0.8, 0.95, 0.85, 1.0, 0.9],
                         "NDR": [0.1, 0.05, np.nan, 0.04, 0.0, 0.02],
                         "NSCR": [-0.1, -0.2, -0.05, -0.1, 0.0, -0.05]})


def test_sensitivity_three_panels_against_min_count_one_legend():
    fig = plot_sensitivity(_sensitivity(), title="Sensitivity, p")
    axes = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_ylabel() for ax in axes] == ["SRR", "NDR", "NSCR"]
    for ax, metric in zip(axes, ["SRR", "NDR", "NSCR"]):
        assert ax.get_xlabel() == "min_count" and list(ax.get_xticks()) == [1, 2, 5]
        math_line = ax.lines[0]  # the first row kind, sorted by min_count
        np.testing.assert_array_equal(math_line.get_xdata(), [1, 2, 5])
        want = _sensitivity().query("domain == 'Math'")[metric].to_numpy()
        np.testing.assert_array_equal(math_line.get_ydata(), want)
        assert ax.get_legend() is None  # one shared legend instead
    legend = fig.legends[0]
    assert legend.get_title().get_text() == "domain"
    assert [t.get_text() for t in legend.get_texts()] == ["Math", "Overall"]
    assert fig.get_suptitle() == "Sensitivity, p"
    # a one-benchmark study's rows are benchmarks, and the legend says so
    fig = plot_sensitivity(_sensitivity("benchmark"))
    assert fig.legends[0].get_title().get_text() == "benchmark" and fig.get_suptitle() == ""


def test_sensitivity_validation():
    with pytest.raises(TypeError, match="'data' parameter of plot_sensitivity must be a pandas"):
        plot_sensitivity([1, 2])
    with pytest.raises(ValueError, match="plot_sensitivity: the DataFrame has no column 'NSCR'"):
        plot_sensitivity(_sensitivity().drop(columns="NSCR"))
    with pytest.raises(ValueError, match="plot_sensitivity: 4 rows share the same"):
        plot_sensitivity(_sensitivity().assign(min_count=[1, 1, 2, 2, 2, 2]))


# ---------------------------------------------------------------------------------------------
# plot_entropy_scatter
# ---------------------------------------------------------------------------------------------

def test_entropy_scatter_arrows_from_base_to_trained_model():
    ax = plot_entropy_scatter(_entropy())
    assert isinstance(ax, Axes)
    assert len(ax.collections) == 3  # base, rlvr, sft
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 3
    assert len(ax.texts) == 5
    offsets = {tuple(np.round(o, 6)) for c in ax.collections for o in c.get_offsets()}
    assert offsets == {(0.5, 1.2), (0.62, 0.7), (0.45, 0.9), (0.4, 0.6), (0.47, 0.85)}
    assert ax.get_xlabel() == "token-level entropy"
    assert ax.get_ylabel() == "answer-level entropy"


def _paper_entropy():
    # Table 5's means (the paper's figure): a crowded lower-left corner
    return pd.DataFrame({
        "model": ["DeepSeek-1.5B", "ProRL-1.5B", "DeepSeek-7B", "AceReason-7B", "Skywork-OR1-7B",
                  "DeepSeek-14B", "AceReason-14B", "Qwen2.5-32B", "DAPO-32B"],
        "role": ["base", "rlvr", "base", "rlvr", "rlvr", "base", "rlvr", "base", "rlvr"],
        "base_model": [None, "DeepSeek-1.5B", None, "DeepSeek-7B", "DeepSeek-7B", None,
                       "DeepSeek-14B", None, "Qwen2.5-32B"],
        "token_entropy": [0.44, 0.518, 0.368, 0.23, 0.164, 0.326, 0.138, 0.182, 0.292],
        "answer_entropy": [1.3, 0.66, 0.754, 0.502, 0.534, 0.54, 0.38, 1.61, 0.612],
    })


@pytest.mark.parametrize("frame", [_entropy, _paper_entropy])
def test_entropy_scatter_labels_stay_inside_and_apart(frame):
    fig, ax = plt.subplots(figsize=(6, 4.5))
    plot_entropy_scatter(frame(), ax=ax)
    fig.canvas.draw()
    inside = ax.get_window_extent()
    boxes = [t.get_window_extent() for t in ax.texts]
    for t, b in zip(ax.texts, boxes):
        assert inside.x0 <= b.x0 and b.x1 <= inside.x1, t.get_text()
        assert inside.y0 <= b.y0 and b.y1 <= inside.y1, t.get_text()
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (ax.texts[i].get_text(), a, b)
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == ["Base", "RLVR"]


def test_entropy_scatter_on_given_axes_without_labels():
    _, ax = plt.subplots()
    assert plot_entropy_scatter(_entropy(), ax=ax, labels=False) is ax
    assert len(ax.texts) == 0


def test_entropy_scatter_validation():
    with pytest.raises(ValueError, match="no column 'base_model'"):
        plot_entropy_scatter(_entropy().drop(columns="base_model"))
    bad = _entropy()
    bad.loc[1, "base_model"] = "DeepSeek-1.5"
    with pytest.raises(ValueError, match="'ProRL-1.5B' .* names base 'DeepSeek-1.5'"):
        plot_entropy_scatter(bad)
    bad = _entropy()
    bad.loc[1, "base_model"] = None
    with pytest.raises(ValueError, match="names base (None|nan|<NA>) in column"):
        plot_entropy_scatter(bad)
    with pytest.raises(ValueError, match=r"unknown value\(s\) \['teacher'\]"):
        plot_entropy_scatter(_entropy().assign(role=["base", "teacher", "base", "rlvr",
                                                     "sft"]))


# ---------------------------------------------------------------------------------------------
# plot_epsilon and plot_support_diagram
# ---------------------------------------------------------------------------------------------

def test_epsilon_one_line_per_zeta_with_the_core_values():
    ks = [1, 2, 8192, 4]
    ax = plot_epsilon(ks, [0.05, 0.01])
    assert isinstance(ax, Axes) and len(ax.lines) == 2
    np.testing.assert_array_equal(ax.lines[0].get_xdata(), [1, 2, 4, 8192])
    np.testing.assert_allclose(ax.lines[0].get_ydata(), -np.log(0.05) / np.array([1, 2, 4, 8192]))
    assert np.isclose(ax.lines[0].get_ydata()[-1], 3.657e-4, atol=1e-7)  # the paper's 3.66e-4
    ax2 = plot_epsilon(ks, [0.05], exact=True, ax=plt.subplots()[1])
    np.testing.assert_allclose(ax2.lines[0].get_ydata(),
                               epsilon(np.array([1, 2, 4, 8192]), 0.05, exact=True))
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"


def test_epsilon_validation_names_the_parameters_of_plot_epsilon():
    # the core's epsilon named its own 'zeta' and 'k', which the caller did not pass
    with pytest.raises(ValueError, match=r"'zetas' parameter of plot_epsilon .* Got 1\.5 at "
                                         r"index 0 instead"):
        plot_epsilon([1, 2], [1.5])
    with pytest.raises(ValueError, match=r"'ks' parameter of plot_epsilon .* Got 0 at index 0"):
        plot_epsilon([0, 2], [0.05])
    with pytest.raises(ValueError, match="'ks' parameter of plot_epsilon must be .*non-empty"):
        plot_epsilon([], [0.05])


def test_support_diagram_has_four_regions_and_two_thresholds():
    ax = plot_support_diagram(eps=1e-3)
    assert isinstance(ax, Axes)
    rects = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(rects) == 4
    assert len(ax.lines) == 2
    texts = [t.get_text() for t in ax.texts]
    for name in ("Preservation", "Expansion", "Shrinkage", "Out of Support"):
        assert name in texts
    # Preservation is the upper-right square: both probabilities above epsilon
    pres = rects[0]
    assert np.isclose(pres.get_x(), 1e-3) and np.isclose(pres.get_y(), 1e-3)
    assert to_hex(pres.get_facecolor()) == CATEGORY_COLORS["preservation"].lower()
    _, given = plt.subplots()
    assert plot_support_diagram(given) is given


def test_support_diagram_validation():
    with pytest.raises(ValueError, match=r"'eps' parameter of plot_support_diagram .* Got 2\.0"):
        plot_support_diagram(eps=2.0)
    with pytest.raises(ValueError, match="0 < lim\\[0\\] < eps < lim\\[1\\] <= 1") as info:
        plot_support_diagram(eps=0.5, lim=(1e-6, 0.1))
    assert info.value.param == "eps" and info.value.value == 0.5
    with pytest.raises(ValueError, match="'lim' parameter"):
        plot_support_diagram(lim=None)


# ---------------------------------------------------------------------------------------------
# panel_grid and shared_legend
# ---------------------------------------------------------------------------------------------

def test_panel_grid_wraps_into_page_wide_rows():
    fig, axes = panel_grid(5)
    assert len(axes) == 5 and len(fig.axes) == 6
    assert fig.get_size_inches()[0] == 7.5 and np.isclose(fig.get_size_inches()[1], 2 * 2.3)
    spare = [a for a in fig.axes if a not in axes]
    assert len(spare) == 1 and not spare[0].axison
    fig, axes = panel_grid(2, ncols=3, panel_height=3)
    assert len(fig.axes) == 2 and np.isclose(fig.get_size_inches()[1], 3)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="'n' parameter of panel_grid"):
            panel_grid(bad)
    with pytest.raises(ValueError, match="'ncols' parameter of panel_grid"):
        panel_grid(3, ncols=0)


def test_shared_legend_in_the_spare_cell_else_below():
    fig, axes = panel_grid(3, ncols=2)
    for ax in axes:
        plot_pass_at_k_curves(_curves(), ax=ax)
    legend = shared_legend(axes)
    assert all(ax.get_legend() is None for ax in axes)
    spare = [a for a in fig.axes if a not in axes][0]
    assert spare.get_legend() is legend
    assert [t.get_text() for t in legend.get_texts()] == ["Base", "ProRL"]
    fig, axes = panel_grid(3)
    for ax, metric in zip(axes, ["SRR", "NDR", "NSCR"]):
        plot_metric_trajectory(_trajectory(), metrics=metric, ax=ax)
    legend = shared_legend(axes, title="benchmark")
    assert legend in fig.legends and legend.get_title().get_text() == "benchmark"
    assert [t.get_text() for t in legend.get_texts()] == ["AIME24", "AMC23"]
    with pytest.raises(ValueError, match="no labelled artist"):
        shared_legend(panel_grid(1)[1])
    with pytest.raises(ValueError, match="empty"):
        shared_legend([])


def test_a_helper_keeps_the_interactive_mode_its_first_figure_turned_on():
    # In a notebook the inline backend is loaded with the first figure, and IPython then turns
    # interactive mode on; when that figure comes from a helper (panel_grid), leaving the
    # helper's rc_context turned it off again, and no later figure of the notebook was shown.
    import matplotlib as mpl

    @plots._themed
    def first_figure(fail=False):
        mpl.interactive(True)  # what loading the inline backend does
        if fail:
            raise RuntimeError("drawing failed")
        return mpl.rcParams["axes.facecolor"]

    was, facecolor = mpl.is_interactive(), mpl.rcParams["axes.facecolor"]
    try:
        mpl.interactive(False)
        assert first_figure() == plots.theme()["axes.facecolor"]  # the theme, inside
        assert mpl.is_interactive()
        mpl.interactive(False)
        with pytest.raises(RuntimeError, match="drawing failed"):
            first_figure(fail=True)
        assert mpl.is_interactive()
        assert mpl.rcParams["axes.facecolor"] == facecolor  # the caller's rcParams are back
    finally:
        mpl.interactive(was)


def test_every_helper_returns_a_new_axes_when_none_is_given():
    axes = [
        plot_pass_at_k_curves(_curves()), plot_passk_bars(_bars()),
        plot_support_counts(_counts()), plot_metric_trajectory(_trajectory()),
        plot_entropy_scatter(_entropy()), plot_epsilon([1, 2], [0.05]),
        plot_support_diagram(), plot_support_curves(pd.DataFrame({"k": [1, 2], "P": [1, 2]}),
                                                    categories="P"),
    ]
    assert len({id(a.figure) for a in axes}) == len(axes)
    assert plots.__all__  # the public names are declared
