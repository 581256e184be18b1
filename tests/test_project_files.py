"""The project's metadata files agree with each other (CITATION.cff, pyproject.toml, leash)."""

from pathlib import Path

import tomllib
import yaml

import leash

ROOT = Path(__file__).resolve().parents[1]


def test_citation_cites_the_paper_and_the_current_version():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == project["version"] == leash.__version__
    paper = cff["preferred-citation"]
    assert paper["title"] == "The Invisible Leash: Why RLVR May or May Not Escape Its Origin"
    assert [i["value"] for i in paper["identifiers"]] == ["arXiv:2507.14843"]
    assert all({"family-names", "given-names"} <= set(a) for a in paper["authors"])
