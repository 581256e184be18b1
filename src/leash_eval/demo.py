"""Writing the SIMULATED demo data set (``leash simulate``): the generator of ``data/demo/``.

:mod:`leash.sources.simulate` is the model the demo is drawn from and :mod:`leash.sources.demo`
reads the files; this module draws the demo with a fixed seed (:func:`write_demo`) and writes
one Parquet file per frame, deterministically (:func:`write_frames`). The files are
per-question summaries (:mod:`leash.summary`) labelled ``source = simulated``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from leash.analysis.compare import frame_differences
from leash.sources import demo
from leash.sources.demo import frame_from_table
from leash.sources.simulate import config_record, simulate_study
from leash.summary import SUMMARY_METADATA_KEY, summary_schema
from leash.writing import replacing_folder

__all__ = ["write_demo", "write_frames"]


def _to_arrow(frame, name, seed, config):
    """Arrow table with an explicit schema and no pandas metadata (so that the bytes depend on
    the data and the pyarrow version only).
    """
    import pyarrow as pa

    if name == "truth":
        types = {"string": pa.string(), "Int64": pa.int64(), "int64": pa.int64(),
                 "float64": pa.float64(), "bool": pa.bool_()}
        schema = pa.schema([pa.field(c, types[d]) for c, d in demo.TRUTH_COLUMNS.items()])
    else:
        schema = summary_schema().append(pa.field("source", pa.string()))
    cols = {}
    for f in schema:
        s = frame[f.name]
        if pa.types.is_list(f.type):
            cols[f.name] = pa.array([None if v is None else list(v) for v in s], type=f.type)
        else:
            cols[f.name] = pa.array(s.astype(object).where(s.notna(), None).tolist(),
                                    type=f.type)
    table = pa.table(cols, schema=schema)
    notice = ("SIMULATED data from leash.sources.simulate; not the paper's data, not model "
              "generations.")
    meta = {
        b"source": demo.SOURCE.encode(),
        b"leash.sources.simulate": json.dumps(
            {"source": demo.SOURCE, "notice": notice, "frame": name, "seed": seed,
             "config": config}, sort_keys=True).encode(),
    }
    if name != "truth":
        # Makes the file a leash summary for leash_eval.summarize.read_summary / load_counts; the
        # provenance there says "simulated".
        meta[SUMMARY_METADATA_KEY] = json.dumps(
            {"source": demo.SOURCE, "notice": notice, "generator": "leash_eval.demo.write_demo",
             "frame": name, "seed": seed}, sort_keys=True).encode()
    return table.replace_schema_metadata(meta)


def _same_content(path: Path, table, name: str) -> bool:
    """Whether the Parquet file at ``path`` holds ``table`` under leash.analysis.compare's rule."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        return False
    try:
        old = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return False
    return (old.schema == table.schema and old.schema.metadata == table.schema.metadata
            and not frame_differences(frame_from_table(old, name), frame_from_table(table, name)))


def write_frames(frames, out_dir=None, *, seed, config):
    """Write the demo frames as Parquet files, one per frame, deterministically.

    A file already there is left in place when it holds the same frame (same metadata, floats
    within 1e-12, everything else exact; :mod:`leash.analysis.compare`), so regenerating on another
    CPU,
    whose ``exp``/``log`` differ in the last bits, leaves the committed demo untouched.

    Parameters
    ----------
    frames : dict of str to pandas.DataFrame
        Keyed by ``leash.sources.demo.DEMO_FILES`` (:func:`leash.sources.simulate.simulate_study`).
    out_dir : str or Path, optional
        Default :func:`leash.sources.demo.demo_dir`. Created if missing.
    seed : int
        The seed the frames were drawn with (recorded in the metadata).
    config : dict
        The full configuration they were drawn from, JSON-serializable (recorded too).

    Returns
    -------
    dict of str to Path
        The files (written or kept), keyed by frame name.
    """
    import pyarrow.parquet as pq

    out = Path(out_dir) if out_dir is not None else demo.demo_dir()
    paths = {}
    # Whole or not at all: every file is written into a folder beside ``out`` first, which
    # becomes ``out`` (or whose files move into it) only once all are written.
    with replacing_folder(out) as tmp:
        for name in demo.DEMO_FILES:
            path = out / f"{name}.parquet"
            table = _to_arrow(frames[name], name, seed, config)
            if not _same_content(path, table, name):
                # Deterministic: fixed compression, no statistics timestamps (Parquet has none),
                # one row group.
                pq.write_table(table, tmp / path.name, compression="zstd", compression_level=9,
                               row_group_size=len(frames[name]) + 1)
            paths[name] = path
    return paths


def write_demo(out_dir=None, seed=demo.DEMO_SEED, *, config=None):
    """Generate the demo with a fixed seed and write one Parquet file per frame.

    Files that already hold the same frame are left in place
    (:func:`write_frames`).

    Parameters
    ----------
    out_dir : str or Path, optional
        Default ``data/demo/`` (:func:`leash.sources.demo.demo_dir`). Created if missing.
    seed : int, default DEMO_SEED
        Seed of ``numpy.random.default_rng``.
    config : dict, optional
        A configuration from :func:`leash.sources.demo.load_config`; default the demo's.

    Returns
    -------
    dict of str to Path
        The files (written or kept), keyed by frame name (``DEMO_FILES``).
    """
    cfg = demo.load_config() if config is None else config
    frames = simulate_study(cfg, rng=np.random.default_rng(seed))
    return write_frames(frames, out_dir, seed=seed, config=config_record(cfg))
