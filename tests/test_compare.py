"""leash.analysis.compare: the one rule for "the same numbers" (floats within 1e-12, the rest
exact), and
the writers that keep a file whose content equals the new one under that rule.

numpy's float64 exp/log/power differ in the last bits between CPUs (AVX-512 vs AVX2 kernels),
and BLAS sums matrix products in a thread-count dependent order; these tests perturb values by
a few ulps, the size of those differences, and by 1e-9, well above the tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from leash.analysis.compare import ATOL, RTOL, close, csv_differences, frame_differences
from leash.output.report import save_figure, save_table
from leash_eval.cli import main_simulate
from leash_eval.demo import write_demo


def ulps(x, n=3):
    """x moved by n units in the last place (towards +inf)."""
    x = np.asarray(x, dtype=float)
    for _ in range(n):
        x = np.nextafter(x, np.inf)
    return x


finite = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False)


@given(finite, st.integers(0, 3))
def test_a_few_ulps_are_always_close(x, n):
    assert close(x, ulps(x, n)) and close(ulps(x, n), x)


@given(finite, finite)
def test_close_is_symmetric_and_is_math_isclose(x, y):
    assert bool(close(x, y)) == bool(close(y, x))
    assert bool(close(x, y)) == math.isclose(x, y, rel_tol=RTOL, abs_tol=ATOL)


def test_close_special_values():
    assert close([np.nan, np.inf, -np.inf, 0.0], [np.nan, np.inf, -np.inf, -0.0]).all()
    assert not close([np.nan, np.inf, 1.0, 0.0], [0.0, -np.inf, np.inf, 1e-11]).any()
    assert close(0.0, 1e-13) and close(1e-3, 1e-3 + 1e-13) and not close(1e-3, 1e-3 + 1e-11)
    assert close(1e6, 1e6 * (1 + 1e-13)) and not close(1.0, 1.0 + 1e-9)


def frame():
    return pd.DataFrame({
        "model": ["a", "b", "c"], "n": np.array([8, 8, 16], dtype=np.int64),
        "found": [True, False, True], "p": [0.1, 1 / 3, np.nan],
        "cat": pd.Categorical(["P", "E", "P"]), "lists": [["1", "2"], ["3"], []],
    })


def test_frame_differences_floats_within_tolerance_rest_exact():
    a = frame()
    b = a.copy()
    b["p"] = ulps(a["p"].to_numpy())
    assert frame_differences(a, b) == []
    b.loc[1, "p"] = 1 / 3 + 1e-9
    [msg] = frame_differences(a, b)
    assert "column 'p': 1 of 3 values differ beyond rtol 1e-12" in msg
    for col, value in (("n", 9), ("model", "x"), ("found", False), ("cat", "E")):
        c = a.copy()
        c.loc[0, col] = value
        assert frame_differences(a, c) == [f"column {col!r}: values differ"], col
    c = a.copy()
    c.at[2, "lists"] = ["4"]
    assert frame_differences(a, c) == ["column 'lists': values differ"]
    assert frame_differences(a, a.astype({"n": float})) == ["column 'n': dtype int64 vs float64"]
    assert frame_differences(a, a[["n", "model"]])[0].startswith("columns differ")
    assert frame_differences(a, a.iloc[:2]) == ["row counts differ: 3 vs 2"]


def test_csv_differences_cell_rule():
    a = "k,name,x,mixed\n1,base,0.30603228158397483,0.5\n2,rl,,text\n"
    assert csv_differences(a, a) == []
    b = a.replace("0.30603228158397483", "0.3060322815839749")  # 1 ulp
    assert csv_differences(a, b) == []
    assert csv_differences(a, a.replace("0.30603228158397483", "0.3060322816")) == [
        "row 1, column 'x': '0.30603228158397483' vs '0.3060322816'"]
    assert csv_differences(a, a.replace("2,rl", "3,rl")) == ["row 2, column 'k': '2' vs '3'"]
    assert csv_differences(a, a.replace("base", "Base")) == [
        "row 1, column 'name': 'base' vs 'Base'"]
    # an integer against a float that equals it is still a different cell (dtype changed)
    assert csv_differences(a, a.replace("1,base", "1.0,base")) == [
        "row 1, column 'k': '1' vs '1.0'"]
    assert csv_differences(a, a.replace("0.5\n", "5e-1\n")) == []  # same float, other text
    assert csv_differences(a, a.replace("k,name", "K,name"))[0].startswith("headers differ")
    assert csv_differences(a, a + "3,x,1.0,y\n") == ["row counts differ: 2 vs 3"]
    many = "x\n" + "".join(f"{i}\n" for i in range(10))
    assert csv_differences(many, many.replace("\n", "0\n").replace("x0", "x"))[-1] == "... 5 more"


def test_save_table_keeps_a_file_equal_under_the_rule(tmp_path):
    df = pd.DataFrame({"k": [1, 2], "p": [0.1, 2 / 3]})
    path = save_table(df, "t", tmp_path)["csv"]
    before = path.read_bytes()
    stamp = path.stat().st_mtime_ns
    nudged = df.assign(p=ulps(df["p"].to_numpy()))
    assert save_table(nudged, "t", tmp_path)["csv"] == path
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stamp
    save_table(df.assign(p=df["p"] + 1e-9), "t", tmp_path)
    assert path.read_bytes() != before  # a real difference is written
    save_table(df.assign(k=[1, 3]), "t", tmp_path)
    assert pd.read_csv(path)["k"].tolist() == [1, 3]


@pytest.mark.slow
def test_save_figure_keeps_its_csv_when_equal_under_the_rule(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = pd.DataFrame({"k": [1, 2], "p": [0.25, 1 / 3]})
    fig, ax = plt.subplots()
    ax.plot(data["k"], data["p"])
    csv = save_figure(fig, "f", tmp_path, data=data)["csv"]
    before = csv.read_bytes()
    save_figure(fig, "f", tmp_path, data=data.assign(p=ulps(data["p"].to_numpy(), 2)))
    assert csv.read_bytes() == before
    plt.close(fig)


# ------------------------------------------------------------------ the simulated demo's files


@pytest.fixture(scope="module")
def demo_files(tmp_path_factory):
    return write_demo(tmp_path_factory.mktemp("demo"))


def _perturb(path, column, how):
    """Rewrite one float column of a demo file in place (keeping its schema and metadata)."""
    table = pq.read_table(path)
    i = table.schema.get_field_index(column)
    values = how(table.column(column).to_numpy(zero_copy_only=False))
    table = table.set_column(i, table.schema.field(i), pa.array(values, type=pa.float64()))
    pq.write_table(table, path, compression="zstd", compression_level=9)
    return path.read_bytes()


@pytest.mark.slow
def test_write_demo_keeps_files_equal_under_the_rule(demo_files):
    out = demo_files["truth"].parent
    nudged = _perturb(demo_files["truth"], "p_rl", ulps)  # what another CPU computes
    assert main_simulate(["--check", "--out", str(out)]) == 0
    write_demo(out)
    assert demo_files["truth"].read_bytes() == nudged  # left in place
    _perturb(demo_files["truth"], "p_rl", lambda v: v * (1 + 1e-9))
    assert main_simulate(["--check", "--out", str(out)]) == 1
    write_demo(out)  # a real difference is rewritten
    assert main_simulate(["--check", "--out", str(out)]) == 0


@pytest.mark.slow
def test_simulate_check_names_the_column_that_differs(demo_files, capsys):
    out = demo_files["entropy"].parent
    _perturb(demo_files["entropy"], "token_entropy_mean", lambda v: v + 1e-6)
    assert main_simulate(["--check", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "entropy.parquet differs from a fresh regeneration: column 'token_entropy_mean':" in err
    write_demo(out)
