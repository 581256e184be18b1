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


def test_the_distribution_lists_every_package_and_ships_what_the_notebooks_read():
    """pyproject.toml lists the packages (packages.find cannot map data/ and notebooks/ into
    leash): every package under src/ is listed, and the package data cover the files leash
    reads outside a checkout (tests/test_wheel.py installs the wheel and runs them)."""
    from fnmatch import fnmatch

    from setuptools import find_packages

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    config = tool["setuptools"]
    listed, dirs, data = set(config["packages"]), config["package-dir"], config["package-data"]
    assert set(find_packages(str(ROOT / "src"))) <= listed
    assert dirs == {"": "src", "leash._data": "data", "leash._notebooks": "notebooks"}
    shipped = {"leash._data.paper": "data/paper", "leash._data.demo": "data/demo",
               "leash._data.studies": "data/studies", "leash._notebooks": "notebooks"}
    for package, folder in shipped.items():
        assert package in listed
        needed = [p for p in (ROOT / folder).iterdir() if p.is_file() and (
            p.suffix in (".csv", ".parquet", ".yaml")
            or (p.suffix == ".md" and p.name[0].isdigit()))]
        assert needed, folder
        missing = [p.name for p in needed if not any(fnmatch(p.name, g) for g in data[package])]
        assert not missing, (package, missing)
    # downloads and summaries stay out of the wheel
    assert not [g for globs in data.values() for g in globs if "raw" in g or "summar" in g]
