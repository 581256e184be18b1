"""What the paper-route tables show is what the paper prints, cell by cell (``_fidelity.py``).

Every committed ``figures/*.md`` captioned as the paper's printed numbers is read back; each
displayed cell that stands for a printed number must show it at the printed precision; every
number the paper does not print must be in a column or row marked ``(+)``; and the cells
marked † (printed, but not what the printed counts give) are exactly the audit's disagreements
about displayed numbers.
"""

from __future__ import annotations

import pandas as pd
import pytest

import _fidelity as F
from leash.artifacts import slug
from leash.core.support import METRIC_NAMES
from leash.output.printed import MARK, printed
from leash.output.report import TableView, save_table
from leash.sources import paper

PAIRS_WITH_APPENDIX = ["ProRL-1.5B-v1", "Nemotron-1-7B", "Skywork-OR1-7B", "Nemotron-1-14B",
                       "Phi4-Reason-Plus-14B", "Kangheng-OVR-7B", "OLMo-2-0425-1B"]
EXPECTED_TABLES = sorted(
    ["table1.md", "table2.md", "table3.md", "table4.md", "table13.md", "table14.md",
     *(f"table5_{m}.md" for m in ("accuracy", "length", "token_entropy", "answer_entropy")),
     *(f"table_support_{slug(p)}.md" for p in PAIRS_WITH_APPENDIX)])


@pytest.fixture(scope="module")
def cells():
    return F.check_all()


@pytest.mark.slow
def test_every_paper_table_is_read(cells):
    assert sorted(p.name for p in F.paper_tables()) == EXPECTED_TABLES
    checked = cells[cells["kind"] == "checked"]
    # every printed number of Tables 1-5, 14 and 6-12 has a displayed cell: 80 + 80 metrics and
    # counts of Table 1, Table 5's 4 x 9 x 6 = 216 cells, ...
    assert len(checked[checked["file"] == "table1.md"]) == 20 * 8
    assert len(checked[checked["file"].str.startswith("table5_")]) == 216
    assert len(checked[checked["file"] == "table14.md"]) == 90
    assert len(checked[checked["file"] == "table13.md"]) == 9 * 3
    assert len(checked) == 2040 + 27


def test_every_displayed_cell_is_the_printed_value_at_the_printed_precision(cells):
    checked = cells[cells["kind"] == "checked"]
    bad = checked[checked["differs"] != ""]
    assert bad.empty, bad.to_string()


def test_every_added_number_is_labelled(cells):
    added = cells[cells["kind"] == "added"]
    assert added.empty, added.to_string()
    labelled = cells[cells["kind"] == "added, labelled"]
    assert set(labelled["column"]) <= {"k", "epsilon", "McNemar p", "McNemar mid-p"}


def test_the_marked_cells_are_the_audit_s_disagreements(cells):
    marked = cells[cells["shown"].str.endswith(MARK)]
    found = sorted((r.file, r.column) for r in marked.itertuples())
    d = paper.discrepancies()
    d = d[d["quantity"].isin(METRIC_NAMES)]  # Table 2's missing cell is no displayed number
    files = {"1": "table1.md", "4": "table4.md",
             **{str(t): f"table_support_{slug(p)}.md"
                for t, p in zip(range(6, 13), ["ProRL-1.5B-v1", "Nemotron-1-7B",
                                               "Skywork-OR1-7B", "Nemotron-1-14B",
                                               "Phi4-Reason-Plus-14B", "Kangheng-OVR-7B",
                                               "OLMo-2-0425-1B"])}}
    expected = sorted((files[r.table], r.quantity) for r in d.itertuples())
    assert found == expected
    assert len(found) == 9
    for f in set(marked["file"]):  # each marked cell has its note under the table
        text = (F.REPO / "figures" / f).read_text(encoding="utf-8")
        assert text.count(f"* {MARK} ") == (marked["file"] == f).sum()


def test_table5_keeps_the_printed_avg_and_its_markers():
    csv = pd.read_csv(F.REPO / "figures" / "table5_accuracy.csv", index_col=0)
    assert csv.at["Skywork-OR1-7B", "Avg"] == 74.71  # printed
    assert csv.at["Skywork-OR1-7B", "Avg recomputed"] == pytest.approx(
        (67.40 + 93.59 + 95.73 + 43.81 + 73.05) / 5)
    _, _, body = F.read_markdown(F.REPO / "figures" / "table5_token_entropy.md")
    marks = {row[0].split()[0]: row[0].split()[-1] for row in body if row[0][-1] in "▲▼"}
    assert marks == {"ProRL-1.5B": "▲", "AceReason-7B": "▼", "Skywork-OR1-7B": "▼",
                     "AceReason-14B": "▼", "DAPO-32B": "▲"}


def test_phi4_s_note_gives_both_roundings_of_its_counts():
    # Table 1 prints Phi4-Reason-Plus-14B's Non-Math SDS 0.01. Its counts (P, E, S = 1067, 8, 11)
    # give 2*1067*8 / (1067^2 + 2*1067*8 + 8*11) = 0.014770...: 0.01 by a single rounding, as
    # printed, 0.02 only by the double rounding (0.015 -> 0.02) of the other cells.
    sds = 2 * 1067 * 8 / (1067**2 + 2 * 1067 * 8 + 8 * 11)
    assert f"{sds:.5f}" == "0.01477"
    text = (F.REPO / "figures" / "table1.md").read_text(encoding="utf-8")
    note = next(ln for ln in text.splitlines() if ln.startswith(f"* {MARK} "))
    for part in ("Phi4-Reason-Plus-14B Non-Math, SDS", "prints 0.01;", "give 0.01477",
                 "0.01 by a single rounding, as printed", "0.02 only by the double rounding",
                 "79 of the 80", "0.01477 -> 0.015 -> 0.02"):
        assert part in note, part
    assert "the rule that gives 79 of the 80 printed metric cells" in text


@pytest.mark.parametrize("edit, why", [
    (("63.33", "0.633"), "percent shown as a fraction"),
    (("0.789", "0.79"), "precision"),
    (("0.789", "0.788"), "value"),
])
def test_the_check_finds_a_changed_cell(tmp_path, edit, why):
    text = (F.REPO / "figures" / "table3.md").read_text(encoding="utf-8")
    (tmp_path / "table3.md").write_text(text.replace(*edit, 1), encoding="utf-8")
    got = F.check(tmp_path / "table3.md")
    assert got.loc[got["differs"] != "", "differs"].tolist() == [why]


def test_the_check_finds_an_unlabelled_column(tmp_path):
    t = paper.load("table14_passk").head(2)
    view = TableView(t, pd.DataFrame({"benchmark": ["AIME2024"], "model": ["SFT"],
                                      "@1": ["20.00"], "extra": ["0.5"]}))
    save_table(view, "table14", tmp_path, caption="x (the paper's printed numbers)")
    got = F.check(tmp_path / "table14.md")
    assert got.loc[got["kind"] == "added", "column"].tolist() == ["extra"]
    assert set(got.loc[got["differs"] != "", "differs"]) == {"printed number not shown"}


def test_printed_is_the_identity_for_other_sources():
    t = pd.DataFrame({"a": [1.0]})
    assert printed(t, "table1", "demo") is t


def test_table13_types_are_table5_s_roles():
    t13 = paper.load("table13_models").set_index("model")["type"].str.lower()
    t5 = paper.load("table5_entropy").drop_duplicates("model").set_index("model")["role"]
    assert t5.to_dict() == t13.to_dict()
