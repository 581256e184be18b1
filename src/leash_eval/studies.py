"""What the notebooks' study files read through the evaluation toolkit: the seam's toolkit side.

``leash`` reads the paper's numbers, the SIMULATED demo and per-question summaries on its own; a
study source that names raw files (``path:`` to generations in any format, ``dataset:`` of the
data manifest, ``rescore:``) is read here, through :func:`leash.sources.seam.toolkit`, the one
place where ``leash`` imports this package. Everything ``leash`` calls of the toolkit is a
function of this module, so the interface between the two packages is this page.
"""

from __future__ import annotations

__all__ = ["manifest_names", "dataset_names", "gold_names", "question_dataset", "resolve",
           "load_counts", "cached_counts", "read_counts", "store_counts", "rescored_path",
           "local_copies", "MIRROR_ENV", "load_benchmark", "DatasetUnavailableError",
           "public_module", "sample_digest", "DIGEST_COLUMNS"]

from leash_eval.formats import check_regular_file
from leash_eval.manifest import MIRROR_ENV, DatasetUnavailableError, load_manifest, locate
from leash_eval.rescore import GOLD_RULES, load_benchmark, question_dataset, rescored_path
from leash_eval.summarize import load_counts

#: Bumped when what a cached summary holds changes (with leash's version, part of the key).
#: 2: named and filled from one read, and carrying its own key (entries of 1 are not read).
SUMMARY_CACHE_VERSION = 2


def cached_counts(path, *, cache_dir, na: str = "class", **reader):
    """:func:`load_counts` of one file, made once and then read back: a summary Parquet file
    under ``cache_dir`` named by a sha256 over the input's bytes (hashed every time, so an
    edited file is read again), the reader options (a YAML mapping file by its bytes too), the
    NA rule and leash's version. Named and filled from one read: the files are hashed before
    and after they are read (:func:`leash_eval.manifest.read_unchanged`), so a file replaced
    meanwhile is read again and never stored under another content's name. Written whole or
    not at all (a temporary file renamed), so an interrupted run leaves no half summary; an
    entry that cannot be read, or that is not the one its name says (it carries its key), is
    discarded with a warning and the file read again. ``leash study check`` fills it, the
    notebooks of ``make reproduce DATA=...`` read it.

    Parameters
    ----------
    path : path-like
        One generations, counts or summary file.
    cache_dir : path-like
        The cache folder (a study's ``build/<name>/.summaries/``).
    na, **reader
        As for :func:`load_counts` (``fmt, model, benchmark, step, mapping, reader_options``).

    Returns
    -------
    pandas.DataFrame
        The summary frame, its ``attrs["provenance"]`` that of the first read.
    """
    from leash_eval.manifest import file_state, read_unchanged

    sources = _sources(path, reader)
    states = [file_state(p) for p in sources]
    target, key = _cache_file(path, cache_dir, na, reader, [d for d, _ in states])
    cached = _cached(target, lambda t: _summary_entry(t, key), "summary",
                     "the file it summarized")
    if cached is not None:
        return cached
    frame, digests = read_unchanged(sources, lambda _: load_counts([path], na=na, **reader),
                                    states)
    _store(frame, *_cache_file(path, cache_dir, na, reader, digests))
    return frame


def read_counts(path, *, na: str = "class", **reader):
    """:func:`load_counts` of one file, read while it does not change (as
    :func:`cached_counts`), the frame carrying what :func:`store_counts` names its cache entry
    after (``attrs["sources_sha256"]``): for ``leash study init``, which reads the files before
    it knows the study's cache folder.
    """
    from leash_eval.manifest import read_unchanged

    frame, digests = read_unchanged(_sources(path, reader),
                                    lambda _: load_counts([path], na=na, **reader))
    frame.attrs["sources_sha256"] = digests
    return frame


def store_counts(frame, path, *, cache_dir, na: str = "class", **reader) -> None:
    """Store ``frame``, :func:`read_counts` of ``path`` under ``na`` and ``reader``, where
    :func:`cached_counts` looks for it (``leash study init`` read the files already), named
    after the bytes it was read from. Written whole or not at all; a frame without rows, or
    without the hashes of its read, is not stored.
    """
    digests = frame.attrs.get("sources_sha256")
    if len(frame) and digests:
        _store(frame, *_cache_file(path, cache_dir, na, reader, digests))


def _sources(path, reader: dict) -> list:
    """The files a read of ``path`` with ``reader`` reads: the file, and a YAML mapping file."""
    from pathlib import Path

    p = Path(path)
    check_regular_file(p)  # hashing a device or a FIFO would never end
    m = reader.get("mapping")
    if isinstance(m, str) and m.lower().endswith((".yaml", ".yml")) and Path(m).is_file():
        return [p, Path(m)]
    return [p]


def _cache_file(path, cache_dir, na: str, reader: dict, digests: list):
    """``(cache file, key)`` of one input: the key a sha256 over the bytes of the files read
    (``digests``: the input's, a YAML mapping file's), the reader options, the NA rule and
    leash's version; the file named after it.
    """
    import hashlib
    import json
    import re
    from pathlib import Path

    from leash._version import version

    options = dict(reader)
    if len(digests) > 1:
        options["mapping_sha256"] = digests[1]
    key = json.dumps({"version": SUMMARY_CACHE_VERSION, "leash": version(),
                      "input": digests[0], "na": na, "reader": options},
                     sort_keys=True, default=str)
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    # the file's stem only as a readable prefix, in ASCII (a name of undecodable bytes, read
    # as surrogates, is no path pyarrow can write): the digest names the entry
    prefix = re.sub(r"[^A-Za-z0-9_-]+", "_", Path(path).name.split(".")[0]) or "input"
    return Path(cache_dir) / f"{prefix}.{digest}.parquet", digest


#: Where a cache entry keeps the key it was stored under, in its provenance.
_KEY = "summary_cache_key"


def _store(frame, target, key: str) -> None:
    from leash_eval.summarize import write_summary

    if not len(frame):
        return
    out = frame.copy(deep=False)
    out.attrs = {**frame.attrs, "provenance": {**frame.attrs.get("provenance", {}), _KEY: key}}
    out.attrs.pop("sources_sha256", None)
    write_summary(out, target)  # whole or not at all


def _cached(target, read, what: str, source: str):
    """``read(target)`` of a cache entry, or None: absent, or discarded (removed, with a warning
    naming the ``what`` and that its ``source`` is read again) when ``read`` cannot read it or
    finds it is not the entry its name says (a ValueError).
    """
    import warnings

    from leash.errors import LeashWarning

    if not target.is_file():
        return None
    try:
        return read(target)
    except (ValueError, TypeError, OSError) as exc:  # pyarrow's errors are ValueErrors
        warnings.warn(LeashWarning(
            f"{target}: a cached {what} that is corrupt ({' '.join(str(exc).split())[:200]}): "
            f"discarded; {source} is read again.", file=target), stacklevel=3)
        target.unlink(missing_ok=True)
        return None


def _summary_entry(target, key: str):
    """The summary of a cache entry that holds the entry of ``key`` (else a ValueError)."""
    from leash_eval.summarize import read_summary

    frame = read_summary(target)
    stored = frame.attrs.get("provenance", {}).pop(_KEY, None)
    if stored != key:
        raise ValueError(f"it holds the entry of key {stored!r}")
    return frame


def _digest_entry(target):
    """The sample digest of a cache entry with :data:`DIGEST_COLUMNS` (else a ValueError)."""
    import pandas as pd

    out = pd.read_parquet(target)
    if list(out.columns) != list(DIGEST_COLUMNS):
        raise ValueError(f"its columns are {list(out.columns)}")
    return out.astype({"question_id": "string", "step": "Int64"})


def manifest_names() -> tuple[str, ...]:
    """Every name a ``dataset:`` source may take: datasets, groups and ``"all"``."""
    m = load_manifest()
    return (*m.datasets, *m.groups, "all")


def dataset_names(name_or_group: str) -> list[str]:
    """The datasets of a dataset or group name of the manifest (ValueError if it is neither)."""
    return load_manifest().names(name_or_group)


def gold_names() -> tuple[str, ...]:
    """Every value ``gold:`` may take: question-file datasets and their benchmark labels."""
    m = load_manifest()
    labels = {m.datasets[n].benchmark for n in GOLD_RULES if n in m.datasets}
    return (*GOLD_RULES, *sorted(b for b in labels if b))


def resolve(name_or_group: str) -> list[tuple[object, dict]]:
    """``(path, reader options)`` of each local file of a dataset or group (fetched, verified),
    the options from its manifest entry (format, mapping, labels).
    """
    from leash_eval.manifest import resolve as _resolve

    return [(path, ds.reader_kwargs() if ds is not None else {})
            for path, ds in _resolve(name_or_group, progress=False)]


def local_copies(name_or_group: str) -> dict:
    """``{dataset: path or None}`` for a dataset or group, looked up in the download cache and
    the mirror only (never online); ValueError for a name the manifest does not have.
    """
    m = load_manifest()
    return {n: locate(n, manifest=m) for n in m.names(name_or_group)}


def public_module(name: str):
    """A toolkit module by its dotted name (``leash_eval.demo``), for the aliases of the names
    and modules that moved from ``leash`` (:mod:`leash.sources.seam`).
    """
    import importlib

    if name != "leash_eval" and not name.startswith("leash_eval."):
        raise ValueError(f"not a module of the toolkit: {name!r}")
    return importlib.import_module(name)


#: The columns of :func:`sample_digest`.
DIGEST_COLUMNS = ("model", "benchmark", "question_id", "step", "n_ordered", "c_first",
                  "c_second", "response", "response_correct")


def sample_digest(path, *, response_chars: int = 160, cache_dir=None, **reader):
    """What the sample order and the response texts of one generations file tell, per question:
    the correct samples of its first and second half, and one response.

    The samples of a question are ordered by ``sample_idx``; with n of them, the first half is
    the first n // 2 and the second half the next n // 2 (an odd n leaves its last sample
    out). The response is the question's first correct one (lowest ``sample_idx``), else its
    first one, on one line (runs of white space as one space) and cut to ``response_chars``
    characters ("..." marks a cut). Streaming over the
    file's rows (:func:`leash_eval.formats.response_batches`): memory holds the sample order and
    verdicts (a few bytes per sample) and one response per question, never the texts of a file.

    Parameters
    ----------
    path : path-like
        One generations file with one row per sample (samples, nested or evaluator formats).
    response_chars : int, default 160
        Characters kept of each response (0: no responses).
    cache_dir : path-like, optional
        Where the digest is kept, keyed as :func:`cached_counts` keys a summary (a study's
        ``build/<name>/.summaries/``); read back on the next call.
    **reader
        Reader options (``fmt, model, benchmark, step, mapping, reader_options``).

    Returns
    -------
    pandas.DataFrame or None
        :data:`DIGEST_COLUMNS`, one row per (model, benchmark, question_id, step):
        ``n_ordered`` samples, ``c_first`` and ``c_second`` (NA where a sample has no
        verdict), ``response`` and whether it is correct. None for a file of per-question
        counts or summaries, which keep neither the order nor the texts.
    """
    if cache_dir is None:
        return _digest(path, response_chars, reader)
    from leash.writing import replacing
    from leash_eval.manifest import file_state, read_unchanged

    tag, sources = f"digest-{int(response_chars)}", _sources(path, reader)
    states = [file_state(p) for p in sources]
    target, _ = _cache_file(path, cache_dir, tag, reader, [d for d, _ in states])
    cached = _cached(target, _digest_entry, "digest", "the file it digested")
    if cached is not None:
        return cached
    # named after the bytes read, as cached_counts: a file replaced meanwhile is read again
    out, digests = read_unchanged(sources, lambda _: _digest(path, response_chars, reader),
                                  states)
    if out is not None:
        target, _ = _cache_file(path, cache_dir, tag, reader, digests)
        with replacing(target) as tmp:
            out.to_parquet(tmp, index=False)
    return out


def _digest(path, response_chars: int, reader: dict):
    """:func:`sample_digest` of one file, read now."""
    import pandas as pd

    from leash_eval import formats as F

    kind = F.detect_format(path, fmt=reader.get("fmt"), mapping=reader.get("mapping"))[0]
    if kind in ("counts", "summary"):
        return None
    keys = ["model", "benchmark", "question_id", "step"]
    order, first_any, first_ok = [], [], []
    for batch in F.response_batches(path, require_response=False, **reader):
        df = batch.to_pandas().astype({"question_id": "string", "step": "Int64"})
        df["correct"] = df["correct"].astype("boolean")
        order.append(df[[*keys, "sample_idx", "correct"]])
        if response_chars:
            df = df.sort_values("sample_idx", kind="stable")
            first_any.append(df.drop_duplicates(keys)[[*keys, "sample_idx", "response",
                                                       "correct"]])
            ok = df[df["correct"].fillna(False).to_numpy(dtype=bool)]
            first_ok.append(ok.drop_duplicates(keys)[[*keys, "sample_idx", "response",
                                                      "correct"]])
    if not order:
        return None
    rows = pd.concat(order, ignore_index=True).sort_values([*keys, "sample_idx"],
                                                           kind="stable")
    g = rows.groupby(keys, sort=False, dropna=False)
    n = g["sample_idx"].transform("size").to_numpy()
    rank = g.cumcount().to_numpy()
    half = n // 2
    rows = rows.assign(_first=rank < half, _second=(rank >= half) & (rank < 2 * half))
    correct = rows["correct"]
    out = rows.groupby(keys, sort=False, dropna=False).agg(
        n_ordered=("sample_idx", "size"), _unknown=("correct", lambda c: bool(c.isna().any())))
    for col, mask in (("c_first", "_first"), ("c_second", "_second")):
        out[col] = (correct.fillna(False) & rows[mask]).groupby(
            [rows[k] for k in keys], sort=False, dropna=False).sum().astype("Int64")
        out.loc[out["_unknown"], col] = pd.NA
    out = out.drop(columns="_unknown").reset_index()
    if response_chars:
        picked = pd.concat([*first_ok, *first_any], ignore_index=True)
        picked = picked.assign(_ok=picked["correct"].fillna(False).astype(bool))
        picked = picked.sort_values(["_ok", "sample_idx"], ascending=[False, True],
                                    kind="stable").drop_duplicates(keys)
        # one line: runs of white space (newlines of a derivation) as one space
        text = picked["response"].astype("string").str.split().str.join(" ")
        cut = text.str.len() > response_chars
        text = text.where(~cut, text.str.slice(0, response_chars) + "...")
        out = out.merge(picked[keys].assign(response=text.to_numpy(),
                                            response_correct=picked["_ok"].to_numpy()),
                        on=keys, how="left")
    else:
        out = out.assign(response=pd.NA, response_correct=pd.NA)
    out = out[list(DIGEST_COLUMNS)].astype({"question_id": "string", "step": "Int64",
                                            "n_ordered": "int64", "response": "string",
                                            "response_correct": "boolean"})
    return out
