"""The artifact index of an output folder: the records of each run, and ``README.md``.

A :class:`leash.output.report.Publisher` leaves the record of every artifact it saves in its
note's metadata; the runner (:mod:`leash_eval.run.reproduce`) keeps the records of each run in
``<outdir>/.artifacts/<run>.json`` (:func:`write_records`), reads them back for a folder
(:func:`artifact_index`) and renders them with the gallery as the folder's ``README.md``
(:func:`write_index`). ``make site`` reads the same records.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from leash.output.report import portable, resolve_outdir
from leash.writing import write_text
from leash_eval.run.gallery import gallery_lines, notebook_link

__all__ = ["INDEX_NAME", "RECORD_KEYS", "SIDECAR_DIR", "artifact_index", "sidecar_path",
           "study_title", "write_index", "write_records"]

#: Folder of the per-run JSON sidecars, and file name of the index, in the output folder.
SIDECAR_DIR, INDEX_NAME = ".artifacts", "README.md"
#: The keys of a record in a sidecar.
RECORD_KEYS = ("description", "files", "inputs", "name", "notebook", "parameters")


def _write_text(path: Path, text: str) -> Path:
    return write_text(path, text if text.endswith("\n") else text + "\n")


def sidecar_path(outdir, run) -> Path:
    """``<outdir>/.artifacts/<run>.json``, the records of one notebook run.

    Parameters
    ----------
    outdir : str or path-like
    run : str

    Returns
    -------
    pathlib.Path
    """
    return resolve_outdir(outdir) / SIDECAR_DIR / f"{run}.json"


def write_records(outdir, run, notebook, parameters, records) -> Path:
    """Keep the records of one notebook run in ``<outdir>/.artifacts/<run>.json``.

    Parameters
    ----------
    outdir : str or path-like
    run : str
        The notebook's stem, with the study when run once per source (``"01_x.demo"``).
    notebook : str
    parameters : dict
        The parameters it ran with (``outdir`` left out).
    records : list of dict
        :func:`artifact_record` of each artifact.

    Returns
    -------
    pathlib.Path
    """
    params = portable({k: v for k, v in dict(parameters).items() if k != "outdir"})
    out = sorted(({**r, "notebook": notebook, "parameters": params} for r in records),
                 key=lambda r: r["name"])
    side = sidecar_path(outdir, run)
    side.parent.mkdir(parents=True, exist_ok=True)
    return _write_text(side, json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False))


def artifact_index(outdir="figures"):
    """All artifact records of an output folder, sorted by name.

    Parameters
    ----------
    outdir : str or path-like, default "figures"

    Returns
    -------
    list of dict
        Keys: name, files, notebook, parameters, inputs, description.

    Raises
    ------
    ValueError
        If two runs registered the same name, or a sidecar is malformed.
    """
    records, owner = [], {}
    for path in sorted((resolve_outdir(outdir) / SIDECAR_DIR).glob("*.json")):
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"Artifact sidecar {path} is not valid JSON: line {exc.lineno}, "
                             f"column {exc.colno}: {exc.msg}.") from None
        if not isinstance(found, list):
            raise ValueError(f"Artifact sidecar {path} must hold a JSON list of records.")
        for i, r in enumerate(found):
            if not isinstance(r, dict) or sorted(r) != list(RECORD_KEYS):
                got = sorted(r) if isinstance(r, dict) else type(r).__name__
                raise ValueError(f"Artifact sidecar {path}, record {i}: expected the keys "
                                 f"{list(RECORD_KEYS)}, got {got}.")
            if r["name"] in owner:
                raise ValueError(f"Artifact {r['name']!r} is written by two notebook runs: "
                                 f"{owner[r['name']]} and {path.stem}; their files would "
                                 f"overwrite each other.")
            owner[r["name"]] = path.stem
            records.append(r)
    return sorted(records, key=lambda r: r["name"])


def study_title(study) -> str:
    """The ``title:`` of a study: a shipped study's name, or a study file's path (relative to
    the repository, as records and runs name it, or absolute).
    """
    from leash.paths import REPO
    from leash.sources.study import load_study

    p = Path(str(study))
    if p.suffix in (".yaml", ".yml") and not p.is_absolute():
        p = REPO / p
    return load_study(p if p.suffix else str(study)).title


def write_index(records, path="figures/README.md", notebooks=None, *, title=None):
    """Render the artifact index as Markdown (sorted, no timestamps).

    Parameters
    ----------
    records : list of dict
        From :func:`artifact_index`.
    path : str or path-like, default "figures/README.md"
        Files of its folder that no record lists get a final section and a warning.
    notebooks : path-like, optional
        The notebooks' folder: each notebook named links to its committed Markdown there,
        relative to the index (``../notebooks/01_table1_support.md`` from ``figures/``);
        without it they are named, not linked.
    title : str, optional
        The study's ``title:``, for the folder of ``make reproduce DATA=STUDY``
        (:func:`study_title`): the index's heading, and its gallery then speaks of that study
        only (no paper beside a demo).

    Returns
    -------
    pathlib.Path
    """
    def cell(text) -> str:
        return " ".join(str(text).split()).replace("|", r"\|")

    def value(v) -> str:  # an empty string stays visible
        return (v or '""') if isinstance(v, str) else json.dumps(v, sort_keys=True,
                                                                  ensure_ascii=False)

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"# Artifacts: {cell(title)}" if title else "# Artifacts", "",
             "Generated by `make reproduce` (`leash reproduce`) from the records the "
             f"executed notebooks hold (kept per run in `{SIDECAR_DIR}/`); do not edit by hand. "
             "Each artifact names the notebook that wrote it, the parameters it ran with and "
             "its input data.", "",
             "## Gallery", "",
             "Every figure and table of this study, by the notebook that writes it."
             if title else "Every figure and table, by the notebook that "
             "writes it; an artifact on the paper's printed numbers beside the same one on the "
             "SIMULATED demo.",
             *gallery_lines(records, path.parent, notebooks), "",
             "## Index", "",
             "| artifact | files | notebook | parameters | inputs | description |",
             "|---|---|---|---|---|---|"]
    listed: set[str] = set()
    for r in sorted(records, key=lambda r: r["name"]):
        listed.update(r["files"])
        params = ", ".join(f"{k}={value(v)}" for k, v in sorted(r["parameters"].items()))
        lines.append("| " + " | ".join([
            f"`{cell(r['name'])}`", ", ".join(f"[{cell(f)}]({f})" for f in r["files"]),
            notebook_link(cell(r["notebook"]), path.parent, notebooks),
            cell(params) or "(defaults)",
            cell(", ".join(value(i) for i in r["inputs"])) or "(none)", cell(r["description"]),
        ]) + " |")
    unlisted = sorted(p.name for p in path.parent.iterdir()
                      if p.is_file() and not p.name.startswith(".") and p.name != path.name
                      and p.name not in listed)
    if unlisted:
        warnings.warn(f"{len(unlisted)} file(s) in {path.parent.name}/ are not registered by any "
                      f"notebook: {', '.join(unlisted)}.", stacklevel=2)
        lines += ["", "## Files without a record", "",
                  "No notebook registered these files (stale output of an earlier run?):", "",
                  *(f"- {cell(n)}" for n in unlisted)]
    return _write_text(path, re.sub(r"\n{3,}", "\n\n", "\n".join(lines)) + "\n")
