"""Streaming per-question summaries of model generations.

:func:`summarize` reads any number of generation files chunk by chunk and merges partial
aggregates exactly, so memory is bounded by the chunk size (plus a few small per-question
accumulators), not by the file size. :func:`load_counts` is the one entry point for everything
downstream: it accepts samples files, counts files and written summaries alike.

The summary frame has one row per (model, benchmark, question_id, step):

==================  ===========  ============================================================
column              dtype        meaning
==================  ===========  ============================================================
model               string       model label
benchmark           string       benchmark label
question_id         string       question id (always a string)
step                Int64        checkpoint; NA when not a checkpoint study
n                   int64        samples used
c                   int64        samples verified correct
first_correct       Int64        0-based sample_idx of the first correct sample; -1 if none;
                                 NA for counts inputs that do not give it
n_answer_missing    Int64        samples without an extracted answer (NA for counts inputs)
answer_values       list<str>    distinct answers, by count desc then value (None for counts)
answer_counts       list<int64>  their counts
n_tokens_mean/min/max float64    over samples that have n_tokens; NaN if none
token_entropy_mean  float64      mean of the per-sample mean token entropies; NaN if none
token_entropy_std   float64      their sample standard deviation (ddof=1); NaN if < 2 values
n_truncated         Int64        samples with finish_reason == "length" (NA for counts inputs)
==================  ===========  ============================================================

Rows are in order of first appearance in the inputs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from leash import formats as F
from leash import validate as V

__all__ = ["summarize", "load_counts", "read_summary", "write_summary", "SUMMARY_COLUMNS",
           "SUMMARY_SCHEMA", "NA_MODES"]

NA_MODES = ("class", "truncated")

SUMMARY_SCHEMA = pa.schema([
    ("model", pa.string()),
    ("benchmark", pa.string()),
    ("question_id", pa.string()),
    ("step", pa.int64()),
    ("n", pa.int64()),
    ("c", pa.int64()),
    ("first_correct", pa.int64()),
    ("n_answer_missing", pa.int64()),
    ("answer_values", pa.list_(pa.string())),
    ("answer_counts", pa.list_(pa.int64())),
    ("n_tokens_mean", pa.float64()),
    ("n_tokens_min", pa.float64()),
    ("n_tokens_max", pa.float64()),
    ("token_entropy_mean", pa.float64()),
    ("token_entropy_std", pa.float64()),
    ("n_truncated", pa.int64()),
])
SUMMARY_COLUMNS = tuple(SUMMARY_SCHEMA.names)
KEY_COLUMNS = ("model", "benchmark", "question_id", "step")
_NULLABLE_INT = ("step", "first_correct", "n_answer_missing", "n_truncated")
_BIG = np.iinfo(np.int64).max
# bit widths of the composite group key (model, benchmark, question_id, step value codes)
_BITS = (12, 12, 26, 14)


# --------------------------------------------------------------------------------------------
# Accumulators
# --------------------------------------------------------------------------------------------
class _Accumulator:
    """Per-question partial aggregates, merged exactly across chunks and files.

    Memory: O(number of questions) numbers, one bit per sample index seen (duplicate check),
    and the (question, distinct answer) count table; never the samples themselves.
    """

    _FIELDS = {
        "n": (np.int64, 0), "c": (np.int64, 0), "first": (np.int64, _BIG),
        "max_idx": (np.int64, -1), "n_missing": (np.int64, 0), "n_trunc": (np.int64, 0),
        "tok_cnt": (np.int64, 0), "tok_sum": (np.float64, 0.0),
        "tok_min": (np.float64, np.inf), "tok_max": (np.float64, -np.inf),
        "ent_cnt": (np.int64, 0), "ent_mean": (np.float64, 0.0), "ent_m2": (np.float64, 0.0),
        "counts_only": (bool, False), "first_known": (bool, True),
    }

    def __init__(self, na: str):
        self.na = na
        self.size = 0
        self.cap = 0
        self.a = {k: np.empty(0, dtype=t) for k, (t, _) in self._FIELDS.items()}
        self.value_ids = [{}, {}, {}, {}]
        self.values = [[], [], [], []]
        self.gid_of: dict[int, int] = {}
        self.keys: list[tuple[int, int, int, int]] = []
        self.bitmaps: dict[int, np.ndarray] = {}
        self.answer_ids: dict[str, int] = {}
        self.answer_values: list[str] = []
        self.ans_parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.ans_rows = 0
        self.file_offset = np.empty(0, dtype=np.int64)

    # ---- groups ---------------------------------------------------------------------------
    def _grow(self, size: int) -> None:
        if size <= self.cap:
            return
        cap = max(size, 2 * self.cap, 1024)
        for k, (t, fill) in self._FIELDS.items():
            new = np.full(cap, fill, dtype=t)
            new[: self.size] = self.a[k][: self.size]
            self.a[k] = new
        self.cap = cap

    def _codes(self, arr, which: int) -> np.ndarray:
        """Global value codes of one key column (dictionary-encoded, mapped through a dict)."""
        if not pa.types.is_dictionary(arr.type):
            arr = pc.dictionary_encode(arr)
        idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        ids, vals = self.value_ids[which], self.values[which]
        lut = np.empty(len(arr.dictionary) + 1, dtype=np.int64)
        for j, v in enumerate(arr.dictionary.to_pylist()):
            code = ids.get(v)
            if code is None:
                code = ids[v] = len(vals)
                vals.append(v)
            lut[j] = code
        if arr.null_count:
            code = ids.get(None)
            if code is None:
                code = ids[None] = len(vals)
                vals.append(None)
            lut[-1] = code
        if len(vals) >= (1 << _BITS[which]):
            raise ValueError(
                f"Too many distinct values of '{KEY_COLUMNS[which]}' ({len(vals)}); leash "
                f"supports up to {1 << _BITS[which]}.")
        return lut[idx]

    def group_codes(self, table: pa.Table):
        """Return (local code per row, gid per local code)."""
        comp = np.zeros(table.num_rows, dtype=np.uint64)
        shift = 64
        for which, name in enumerate(KEY_COLUMNS):
            shift -= _BITS[which]
            col = table.column(name).combine_chunks()
            comp |= self._codes(col, which).astype(np.uint64) << np.uint64(shift)
        local, uniq = pd.factorize(comp)
        gl = np.empty(len(uniq), dtype=np.int64)
        for j, u in enumerate(uniq.tolist()):
            g = self.gid_of.get(u)
            if g is None:
                g = self.gid_of[u] = len(self.keys)
                self.keys.append(self._split(u))
            gl[j] = g
        self._grow(len(self.keys))
        self.size = len(self.keys)
        return local.astype(np.int64), gl

    @staticmethod
    def _split(u: int) -> tuple[int, int, int, int]:
        out = []
        shift = 64
        for b in _BITS:
            shift -= b
            out.append((u >> shift) & ((1 << b) - 1))
        return tuple(out)

    def describe(self, gid: int, idx=None) -> str:
        m, b, q, s = self.keys[gid]
        key = (self.values[0][m], self.values[1][b], self.values[2][q], self.values[3][s])
        text = f"model={key[0]!r}, benchmark={key[1]!r}, question_id={key[2]!r}"
        if key[3] is not None:
            text += f", step={key[3]}"
        if idx is not None:
            text += f", sample_idx={idx}"
        return text

    def start_file(self) -> None:
        self.file_offset = self.a["max_idx"][: self.size] + 1

    # ---- samples --------------------------------------------------------------------------
    def add_samples(self, chunk: F.Chunk, *, fname, locator, sink, stats) -> None:
        t = chunk.table
        if t.num_rows == 0:
            return
        local, gl = self.group_codes(t)
        G = len(gl)
        a = self.a
        idx = t.column("sample_idx").to_numpy().astype(np.int64)
        if chunk.relative_idx:
            off = np.zeros(G, dtype=np.int64)
            known = gl < len(self.file_offset)
            off[known] = self.file_offset[gl[known]]
            idx = idx + off[local]
        if a["counts_only"][gl].any():
            g = int(gl[np.flatnonzero(a["counts_only"][gl])[0]])
            raise ValueError(f"{fname}: samples for a question that an earlier counts file "
                             f"already gave ({self.describe(g)}); pass each question once.")
        dup = self._duplicates(local, gl, idx)
        if dup.any():
            rows = np.flatnonzero(dup)
            for r in rows if sink.on_error == "collect" else rows[: V._MAX_EXAMPLES]:
                sink.add(V.Problem(
                    fname, locator(chunk.loc[r], chunk.sub[r]), "sample_idx",
                    self.describe(int(gl[local[r]]), int(idx[r])), V.DUPLICATE,
                    "duplicate (model, benchmark, question_id, step, sample_idx)"))
            extra = len(rows) - min(len(rows), V._MAX_EXAMPLES)
            if sink.on_error != "collect" and extra:
                sink.by_reason[V.DUPLICATE] += extra
                sink.n_problems += extra
            stats.rows_rejected += len(rows)
            keep = ~dup
            local, idx, t = local[keep], idx[keep], t.filter(pa.array(keep))
        corr = t.column("correct").to_numpy(zero_copy_only=False).astype(bool)
        n_add = np.bincount(local, minlength=G)
        c_add = np.bincount(local[corr], minlength=G)
        first = np.full(G, _BIG, dtype=np.int64)
        np.minimum.at(first, local[corr], idx[corr])
        maxi = np.full(G, -1, dtype=np.int64)
        np.maximum.at(maxi, local, idx)
        a["n"][gl] += n_add
        a["c"][gl] += c_add
        a["first"][gl] = np.minimum(a["first"][gl], first)
        a["max_idx"][gl] = np.maximum(a["max_idx"][gl], maxi)
        fr = t.column("finish_reason")
        trunc = (pc.equal(fr, "length").fill_null(False).to_numpy(zero_copy_only=False)
                 if fr.null_count < len(fr) else np.zeros(len(local), dtype=bool))
        ans = t.column("answer").combine_chunks()
        missing = V._isnull(ans)
        if self.na == "truncated":
            missing = missing | trunc
        a["n_missing"][gl] += np.bincount(local[missing], minlength=G)
        a["n_trunc"][gl] += np.bincount(local[trunc], minlength=G)
        x = t.column("n_tokens").to_numpy()
        v = ~np.isnan(x)
        if v.any():
            lv, xv = local[v], x[v]
            a["tok_cnt"][gl] += np.bincount(lv, minlength=G)
            a["tok_sum"][gl] += np.bincount(lv, weights=xv, minlength=G)
            mn = np.full(G, np.inf)
            np.minimum.at(mn, lv, xv)
            mx = np.full(G, -np.inf)
            np.maximum.at(mx, lv, xv)
            a["tok_min"][gl] = np.minimum(a["tok_min"][gl], mn)
            a["tok_max"][gl] = np.maximum(a["tok_max"][gl], mx)
        x = t.column("token_entropy").to_numpy()
        v = ~np.isnan(x)
        if v.any():
            lv, xv = local[v], x[v]
            nb = np.bincount(lv, minlength=G)
            sb = np.bincount(lv, weights=xv, minlength=G)
            mb = np.divide(sb, nb, out=np.zeros(G), where=nb > 0)
            m2b = np.bincount(lv, weights=(xv - mb[lv]) ** 2, minlength=G)
            # Chan et al. parallel merge of (count, mean, M2): exact up to rounding
            na_ = a["ent_cnt"][gl]
            ma, m2a = a["ent_mean"][gl], a["ent_m2"][gl]
            ntot = na_ + nb
            delta = mb - ma
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(ntot > 0, ma + delta * nb / np.maximum(ntot, 1), 0.0)
                m2 = m2a + m2b + delta**2 * na_ * nb / np.maximum(ntot, 1)
            a["ent_cnt"][gl] = ntot
            a["ent_mean"][gl] = mean
            a["ent_m2"][gl] = m2
        present = ~missing & ~V._isnull(ans)
        if present.any():
            sel = ans.filter(pa.array(present))
            codes = self._answer_codes(sel)
            comp = (gl[local[present]].astype(np.uint64) << np.uint64(32)) | codes.astype(
                np.uint64)
            lc, uniq = pd.factorize(comp)
            self.ans_parts.append((uniq.astype(np.uint64), np.bincount(lc).astype(np.int64)))
            self.ans_rows += len(uniq)
            if self.ans_rows > 4_000_000:
                self._compact_answers()

    def _answer_codes(self, arr) -> np.ndarray:
        enc = pc.dictionary_encode(arr)
        idx = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        lut = np.empty(len(enc.dictionary), dtype=np.int64)
        ids, vals = self.answer_ids, self.answer_values
        for j, v in enumerate(enc.dictionary.to_pylist()):
            code = ids.get(v)
            if code is None:
                code = ids[v] = len(vals)
                vals.append(v)
            lut[j] = code
        return lut[idx]

    def _compact_answers(self) -> None:
        if not self.ans_parts:
            return
        keys = np.concatenate([k for k, _ in self.ans_parts])
        cnts = np.concatenate([c for _, c in self.ans_parts])
        uniq, inv = np.unique(keys, return_inverse=True)
        self.ans_parts = [(uniq, np.bincount(inv, weights=cnts).astype(np.int64))]
        self.ans_rows = len(uniq)

    def _duplicates(self, local, gl, idx) -> np.ndarray:
        """Rows whose (question, sample_idx) was seen before (in this chunk or earlier)."""
        comp = (gl[local].astype(np.uint64) << np.uint64(32)) | idx.astype(np.uint64)
        dup = np.asarray(pd.Index(comp).duplicated(keep="first"))
        order = np.argsort(local, kind="stable")
        bounds = np.searchsorted(local[order], np.arange(len(gl) + 1))
        for j, g in enumerate(gl.tolist()):
            rows = order[bounds[j]:bounds[j + 1]]
            ii = idx[rows]
            need = int(ii.max()) // 8 + 1 if len(ii) else 0
            bm = self.bitmaps.get(g)
            if bm is None:
                bm = np.zeros(max(need, 16), dtype=np.uint8)
            elif len(bm) < need:
                bm = np.concatenate([bm, np.zeros(max(need, 2 * len(bm)) - len(bm),
                                                  dtype=np.uint8)])
            byte = ii >> 3
            bit = (np.uint8(1) << (ii & 7).astype(np.uint8))
            seen = (bm[byte] & bit) != 0
            dup[rows] |= seen
            np.bitwise_or.at(bm, byte, bit)
            self.bitmaps[g] = bm
        return dup

    # ---- counts ---------------------------------------------------------------------------
    def add_counts(self, chunk: F.Chunk, *, fname, locator, sink, stats) -> None:
        t = chunk.table
        if t.num_rows == 0:
            return
        local, gl = self.group_codes(t)
        a = self.a
        gid = gl[local]
        dup = np.asarray(pd.Index(gid).duplicated(keep="first"))
        dup |= (a["n"][gid] > 0)
        if dup.any():
            rows = np.flatnonzero(dup)
            for r in rows if sink.on_error == "collect" else rows[: V._MAX_EXAMPLES]:
                sink.add(V.Problem(fname, locator(chunk.loc[r], chunk.sub[r]), "question_id",
                                   self.describe(int(gid[r])), V.DUPLICATE,
                                   "duplicate (model, benchmark, question_id, step)"))
            stats.rows_rejected += len(rows)
            keep = ~dup
            gid, t = gid[keep], t.filter(pa.array(keep))
        n = t.column("n").to_numpy()
        c = t.column("c").to_numpy()
        fc = t.column("first_correct")
        known = ~V._isnull(fc)
        fcv = fc.fill_null(-1).to_numpy()
        a["n"][gid] = n
        a["c"][gid] = c
        a["first"][gid] = np.where(known & (fcv >= 0), fcv, _BIG)
        a["first_known"][gid] = known | (c == 0)
        a["counts_only"][gid] = True

    # ---- result ---------------------------------------------------------------------------
    def finish(self) -> pa.Table:
        G = self.size
        a = {k: v[:G] for k, v in self.a.items()}
        keys = np.asarray(self.keys, dtype=np.int64).reshape(G, 4)
        cols = {}
        for which, name in enumerate(KEY_COLUMNS):
            vals = self.values[which]
            typ = pa.int64() if name == "step" else pa.string()
            cols[name] = pa.array([vals[i] for i in keys[:, which]], type=typ)
        counts_only = a["counts_only"]
        cols["n"] = pa.array(a["n"])
        cols["c"] = pa.array(a["c"])
        first = np.where(a["c"] == 0, -1, a["first"])
        cols["first_correct"] = pa.array(first, mask=~a["first_known"])
        cols["n_answer_missing"] = pa.array(a["n_missing"], mask=counts_only)
        vals, cnts = self._answer_lists(G, counts_only)
        cols["answer_values"] = vals
        cols["answer_counts"] = cnts
        tc = a["tok_cnt"]
        with np.errstate(invalid="ignore", divide="ignore"):
            cols["n_tokens_mean"] = pa.array(np.where(tc > 0, a["tok_sum"] / tc, np.nan))
            cols["n_tokens_min"] = pa.array(np.where(tc > 0, a["tok_min"], np.nan))
            cols["n_tokens_max"] = pa.array(np.where(tc > 0, a["tok_max"], np.nan))
            ec = a["ent_cnt"]
            cols["token_entropy_mean"] = pa.array(np.where(ec > 0, a["ent_mean"], np.nan))
            cols["token_entropy_std"] = pa.array(
                np.where(ec > 1, np.sqrt(a["ent_m2"] / np.maximum(ec - 1, 1)), np.nan))
        cols["n_truncated"] = pa.array(a["n_trunc"], mask=counts_only)
        return pa.table(cols, schema=SUMMARY_SCHEMA)

    def _answer_lists(self, G, counts_only):
        self._compact_answers()
        if self.ans_parts:
            keys, cnts = self.ans_parts[0]
        else:
            keys, cnts = np.empty(0, np.uint64), np.empty(0, np.int64)
        gid = (keys >> np.uint64(32)).astype(np.int64)
        aid = (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
        # rank of every answer string, so ties in count sort by value
        names = np.asarray(self.answer_values, dtype=object)
        rank = np.empty(len(names), dtype=np.int64)
        rank[np.argsort(names, kind="stable")] = np.arange(len(names))
        order = np.lexsort((rank[aid] if len(aid) else aid, -cnts, gid))
        gid, aid, cnts = gid[order], aid[order], cnts[order]
        offsets = np.searchsorted(gid, np.arange(G + 1)).astype(np.int32)
        mask = pa.array(counts_only)
        values = pa.ListArray.from_arrays(
            pa.array(offsets), pa.array(names[aid].tolist() if len(aid) else [],
                                        type=pa.string()), mask=mask)
        counts = pa.ListArray.from_arrays(pa.array(offsets), pa.array(cnts, type=pa.int64()),
                                          mask=mask)
        return values, counts


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------
@dataclass
class _RunResult:
    table: pa.Table
    provenance: dict
    sink: V.Sink


def _as_paths(paths) -> list:
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    if isinstance(paths, Iterable):
        out = list(paths)
        if not out:
            raise ValueError("The 'paths' parameter must name at least one file. Got [].")
        for p in out:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError("The 'paths' parameter must be a path or a list of paths. "
                                f"Got an element of type {type(p).__name__}.")
        return out
    raise TypeError("The 'paths' parameter must be a path or a list of paths. "
                    f"Got {type(paths).__name__} instead.")


def _check_params(chunk_size, na):
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError("The 'chunk_size' parameter must be an int >= 1. "
                         f"Got {chunk_size!r} instead.")
    if na not in NA_MODES:
        raise ValueError(f"The 'na' parameter must be one of {NA_MODES}. Got {na!r} instead.")


def _run(paths, *, fmt, model, benchmark, step, mapping, chunk_size, on_error, na):
    _check_params(chunk_size, na)
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, np.integer))
                             or step < 0):
        raise ValueError(f"The 'step' parameter must be an int >= 0 or None. Got {step!r}.")
    sink = V.Sink(on_error)
    acc = _Accumulator(na)
    labels = {"model": model, "benchmark": benchmark, "step": step}
    files = []
    for p in _as_paths(paths):
        path = Path(p)
        if not path.exists():
            raise FileNotFoundError(f"The file {p} does not exist.")
        f, m = F.detect_format(path, fmt=fmt, mapping=mapping)
        if f == "summary":
            raise ValueError(f"{p} is already a per-question summary; use "
                             "leash.summarize.load_counts to combine summaries with "
                             "other inputs.")
        stats = F.FileStats(str(p), f, m)
        stats.locator = None
        before = sink.n_problems
        acc.start_file()
        for chunk in F.read_chunks(path, f, m, labels=labels, chunk_size=int(chunk_size),
                                   sink=sink, stats=stats):
            add = acc.add_samples if chunk.kind == "samples" else acc.add_counts
            add(chunk, fname=str(p), locator=stats.locator, sink=sink, stats=stats)
        files.append({
            "path": str(p), "format": f, "mapping": m.name if m else None,
            "reader": stats.reader, "rows_read": stats.rows_read,
            "rows_used": stats.rows_read - stats.rows_rejected,
            "rows_rejected": stats.rows_rejected, "problems": sink.n_problems - before,
            "notes": stats.notes,
        })
    table = acc.finish()
    from leash import __version__

    prov = {
        "leash_version": __version__,
        "files": files,
        "rows_read": sum(f["rows_read"] for f in files),
        "rows_used": sum(f["rows_used"] for f in files),
        "rows_rejected": sum(f["rows_rejected"] for f in files),
        "rejected_by_reason": dict(sink.by_reason),
        "problem_examples": [str(p) for p in sink.examples],
        "questions": table.num_rows,
        "on_error": on_error, "na": na, "chunk_size": int(chunk_size),
        "labels": {k: v for k, v in labels.items() if v is not None},
    }
    return _RunResult(table, prov, sink)


def _to_frame(table: pa.Table, provenance: dict | None) -> pd.DataFrame:
    df = table.to_pandas(types_mapper={pa.string(): pd.StringDtype(),
                                       pa.int64(): pd.Int64Dtype()}.get)
    for col in ("n", "c"):
        df[col] = df[col].astype(np.int64)
    df.attrs["provenance"] = provenance or {}
    return df


def write_summary(frame: pd.DataFrame, path) -> None:
    """Write a summary frame as Parquet with its provenance in the schema metadata.

    Parameters
    ----------
    frame : pandas.DataFrame, shape (n_questions, 16)
        A frame with the summary columns (:data:`SUMMARY_COLUMNS`).
    path : str or os.PathLike
    """
    missing = [c for c in SUMMARY_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"The 'frame' parameter lacks summary columns {missing}.")
    table = _frame_to_table(frame)
    meta = {F.SUMMARY_METADATA_KEY: json.dumps(frame.attrs.get("provenance", {})).encode()}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(meta), path)


def _frame_to_table(frame: pd.DataFrame) -> pa.Table:
    cols = {}
    for f in SUMMARY_SCHEMA:
        s = frame[f.name]
        if pa.types.is_list(f.type):
            vals = [None if (v is None or (np.isscalar(v) and pd.isna(v))) else list(v)
                    for v in s.tolist()]
            cols[f.name] = pa.array(vals, type=f.type)
        else:
            cols[f.name] = pa.array(s.astype(object).where(s.notna(), None).tolist(),
                                    type=f.type)
    return pa.table(cols, schema=SUMMARY_SCHEMA)


def read_summary(path) -> pd.DataFrame:
    """Read a summary Parquet file written by :func:`summarize` or :func:`write_summary`.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        The summary frame; ``attrs["provenance"]`` holds the stored provenance.
    """
    path = Path(path)
    schema = pq.read_schema(path)
    meta = (schema.metadata or {}).get(F.SUMMARY_METADATA_KEY)
    missing = [c for c in SUMMARY_COLUMNS if c not in schema.names]
    if meta is None or missing:
        what = "provenance metadata" if meta is None else f"columns {missing}"
        raise ValueError(f"{path} is not a leash summary file (missing {what}).")
    table = pq.read_table(path, columns=list(SUMMARY_COLUMNS)).cast(SUMMARY_SCHEMA)
    return _to_frame(table, json.loads(meta))


def summarize(paths, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
              chunk_size=1_000_000, out=None, na="class", on_error="raise") -> pd.DataFrame:
    """Stream generation files into the per-question summary frame.

    Parameters
    ----------
    paths : str, os.PathLike or list of them
        Samples, counts, evaluator or nested files (any mix). Files are read in the order
        given; for formats without a per-sample index (evaluator, nested mappings with
        ``index=None``) the samples of a later file follow those of earlier files, so several
        seed files of one model concatenate in generation order.
    fmt : str, optional
        Format override for every file (see :data:`leash.formats.FORMATS`); default: detect.
    model, benchmark : str, optional
        Labels for files that do not carry them (required for the evaluator format). When a
        file does carry them, the caller's value replaces the file's and the provenance says so.
    step : int, optional
        Checkpoint label for every row (e.g. ``step=100`` for a trajectory file).
    mapping : str, dict or NestedMapping, optional
        Field mapping for nested layouts (``"rollouts"``, ``"samples"``, ``"evaluator"``).
    chunk_size : int, default 1_000_000
        Rows per chunk (approximate for text formats, which are read in byte blocks).
    out : str or os.PathLike, optional
        Also write the summary as Parquet here (provenance in the schema metadata).
    na : {"class", "truncated"}, default "class"
        Which samples count as "answer missing": "class" counts samples without an extracted
        answer (missing, empty or the literal "NA"); "truncated" also counts samples with
        ``finish_reason == "length"`` even when an answer was extracted (the paper's "NA for
        incomplete outputs"). Missing answers are never in ``answer_values``; downstream
        answer entropy treats them as one extra class.
    on_error : {"raise", "skip"}, default "raise"
        "raise": the first invalid row raises ValueError naming file, line/row, field and
        value. "skip": invalid rows are rejected and counted (per reason) in the provenance.

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        The summary frame (schema in the module docstring). ``attrs["provenance"]`` holds rows
        read / used / rejected per file and per reason, the readers used and the parameters.

    Raises
    ------
    ValueError
        Invalid rows (with ``on_error="raise"``), undetectable formats, missing labels.
    """
    if on_error not in V.ON_ERROR:
        raise ValueError(f"The 'on_error' parameter must be one of {V.ON_ERROR}. "
                         f"Got {on_error!r} instead.")
    res = _run(paths, fmt=fmt, model=model, benchmark=benchmark, step=step, mapping=mapping,
               chunk_size=chunk_size, on_error=on_error, na=na)
    if res.provenance["rows_rejected"]:
        import warnings

        warnings.warn(
            f"summarize: {res.provenance['rows_rejected']} of {res.provenance['rows_read']} "
            f"rows rejected ({res.provenance['rejected_by_reason']}); see "
            "attrs['provenance'].", stacklevel=2)
    frame = _to_frame(res.table, res.provenance)
    if out is not None:
        write_summary(frame, out)
    return frame


def load_counts(paths, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
                chunk_size=1_000_000, na="class", on_error="raise") -> pd.DataFrame:
    """Load per-question counts from samples, counts or summary files alike.

    Parameters
    ----------
    paths : str, os.PathLike or list of them
        Any mix of generation files (summarized with :func:`summarize`) and summary Parquet
        files written earlier (read with :func:`read_summary`).
    fmt, model, benchmark, step, mapping, chunk_size, na, on_error
        As in :func:`summarize` (they apply to the non-summary files).

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        One summary frame; ``attrs["provenance"]`` lists the provenance of every part.

    Raises
    ------
    ValueError
        When a (model, benchmark, question_id, step) appears in more than one input.
    """
    plist = _as_paths(paths)
    summaries, others = [], []
    for p in plist:
        if not Path(p).exists():
            raise FileNotFoundError(f"The file {p} does not exist.")
        is_summary = fmt == "summary" or (
            fmt is None and mapping is None
            and str(p).lower().endswith(F._PARQUET_SUFFIXES)
            and F.SUMMARY_METADATA_KEY in (pq.read_schema(p).metadata or {}))
        (summaries if is_summary else others).append(p)
    parts, provs = [], []
    if others:
        f = summarize(others, fmt=None if fmt == "summary" else fmt, model=model,
                      benchmark=benchmark, step=step, mapping=mapping, chunk_size=chunk_size,
                      na=na, on_error=on_error)
        parts.append(f)
        provs.append(f.attrs["provenance"])
    for p in summaries:
        f = read_summary(p)
        parts.append(f)
        provs.append({"summary_file": str(p), "provenance": f.attrs["provenance"]})
    if len(parts) == 1:
        out = parts[0]
    else:
        out = pd.concat(parts, ignore_index=True)
        for c in ("n", "c"):
            out[c] = out[c].astype(np.int64)
    keys = out[list(KEY_COLUMNS)].astype(object).where(out[list(KEY_COLUMNS)].notna(), None)
    dup = keys.duplicated(keep=False)
    if dup.any():
        shown = keys[dup].drop_duplicates().head(5).to_dict("records")
        raise ValueError(
            f"load_counts: {int(keys[dup].drop_duplicates().shape[0])} questions appear in "
            f"more than one input (first: {shown}); pass each question once.")
    out.attrs["provenance"] = provs[0] if len(provs) == 1 else {"parts": provs}
    return out
