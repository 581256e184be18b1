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

import contextlib
import dataclasses
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

__all__ = ["summarize", "load_counts", "read_summary", "write_summary", "summary_na",
           "SUMMARY_COLUMNS", "SUMMARY_SCHEMA", "NA_MODES"]

#: The NA rules a summary can be made under (see :data:`leash.entropy.NA_RULES`; "drop" is
#: applied when the entropy is computed, from a "class" summary).
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

    Memory: O(number of questions) numbers, the sample indices seen (duplicate check: one bit
    per index when they are dense, else 8 bytes per sample; see _duplicates),
    and the (question, distinct answer) count table; never the samples themselves.
    """

    _FIELDS = {
        "n": (np.int64, 0), "c": (np.int64, 0), "first": (np.int64, _BIG),
        "max_idx": (np.int64, -1), "n_missing": (np.int64, 0), "n_trunc": (np.int64, 0),
        "tok_cnt": (np.int64, 0), "tok_sum": (np.float64, 0.0),
        "tok_min": (np.float64, np.inf), "tok_max": (np.float64, -np.inf),
        "ent_cnt": (np.int64, 0), "ent_mean": (np.float64, 0.0), "ent_m2": (np.float64, 0.0),
        "counts_only": (bool, False), "first_known": (bool, True),
        # where the question's first row was read: input number, loc and sub of that row
        "w_file": (np.int64, -1), "w_loc": (np.int64, -1), "w_sub": (np.int64, -1),
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
        # per question: the sample indices seen, for the duplicate check (see _duplicates)
        self.seen_idx: dict[int, tuple] = {}
        self.answer_ids: dict[str, int] = {}
        self.answer_values: list[str] = []
        self.ans_parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.ans_rows = 0
        self.file_offset = np.empty(0, dtype=np.int64)
        self.file_no = -1
        self.inputs: list = []    # per input: (FileStats, arguments of read_chunks)
        self.pending: list = []   # duplicate problems whose first occurrence is to be named

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

    def _codes(self, arr, which: int):
        """Local dictionary indices of one key column and their global value codes.

        Returns (idx, lut): idx per row in [0, len(lut)), lut maps idx -> global value code.
        """
        if not pa.types.is_dictionary(arr.type):
            arr = pc.dictionary_encode(arr)
        nd = len(arr.dictionary)
        idx = arr.indices.fill_null(nd).to_numpy(zero_copy_only=False).astype(np.int64)
        ids, vals = self.value_ids[which], self.values[which]
        lut = np.empty(nd + 1, dtype=np.int64)
        entries = arr.dictionary.to_pylist() + [None]
        for j, v in enumerate(entries):
            if j == nd and not arr.null_count:
                lut[j] = 0  # unused slot for nulls
                continue
            code = ids.get(v)
            if code is None:
                code = ids[v] = len(vals)
                vals.append(v)
            lut[j] = code
        if len(vals) >= (1 << _BITS[which]):
            raise ValueError(
                f"Too many distinct values of '{KEY_COLUMNS[which]}' ({len(vals)}); leash "
                f"supports up to {1 << _BITS[which]}.")
        return idx, lut

    def group_codes(self, table: pa.Table):
        """Return (local code per row, gid per local code).

        Local codes number the chunk's groups in order of first appearance, and new groups
        get their gids in that order: gids, and so the rows of the result, follow the order
        in which the inputs are read.
        """
        n = table.num_rows
        parts = [self._codes(table.column(name).combine_chunks(), w)
                 for w, name in enumerate(KEY_COLUMNS)]
        dims = [len(lut) for _, lut in parts]
        space = int(np.prod(dims, dtype=np.float64))
        if space <= max(4 * n, 1 << 16):
            # dense mixed-radix code over the chunk's small dictionaries: O(n), no hashing
            dense = parts[0][0]
            for (i, _), d in zip(parts[1:], dims[1:]):
                dense = dense * d + i
            present = np.bincount(dense, minlength=space) > 0
            uniq_dense = np.flatnonzero(present)
            remap = np.zeros(space, dtype=np.int64)
            remap[uniq_dense] = np.arange(len(uniq_dense))
            local = remap[dense]
            # local codes in order of first appearance (as pd.factorize below), so that new
            # groups, and with them the output rows, follow the input and not the codes
            first = np.full(len(uniq_dense), n, dtype=np.int64)
            np.minimum.at(first, local, np.arange(n, dtype=np.int64))
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            local = rank[local]
            uniq_dense = uniq_dense[order]
            coords = np.unravel_index(uniq_dense, dims)
            gcodes = [lut[c] for (_, lut), c in zip(parts, coords)]
        else:
            comp = np.zeros(n, dtype=np.uint64)
            shift = 64
            for w, (i, lut) in enumerate(parts):
                shift -= _BITS[w]
                comp |= lut[i].astype(np.uint64) << np.uint64(shift)
            local, uniq = pd.factorize(comp)
            local = local.astype(np.int64)
            gcodes = [(uniq >> np.uint64(64 - sum(_BITS[: w + 1]))
                       & np.uint64((1 << _BITS[w]) - 1)).astype(np.int64) for w in range(4)]
        gl = np.empty(len(gcodes[0]), dtype=np.int64)
        for j, key in enumerate(zip(*(g.tolist() for g in gcodes))):
            g = self.gid_of.get(key)
            if g is None:
                g = self.gid_of[key] = len(self.keys)
                self.keys.append(key)
            gl[j] = g
        self._grow(len(self.keys))
        self.size = len(self.keys)
        return local, gl

    def describe(self, gid: int, idx=None) -> str:
        m, b, q, s = self.keys[gid]
        key = (self.values[0][m], self.values[1][b], self.values[2][q], self.values[3][s])
        text = f"model={key[0]!r}, benchmark={key[1]!r}, question_id={key[2]!r}"
        if key[3] is not None:
            text += f", step={key[3]}"
        if idx is not None:
            text += f", sample_idx={idx}"
        return text

    def start_file(self, stats, read_args: dict) -> None:
        """A new input: its FileStats (name, locator) and how to read it again."""
        self.file_offset = self.a["max_idx"][: self.size] + 1
        self.file_no += 1
        self.inputs.append((stats, read_args))

    def where_first(self, gid: int) -> str:
        """ "FILE: line N" of the first row read for a question."""
        stats, _ = self.inputs[int(self.a["w_file"][gid])]
        with stats.locator:  # closes what the lookup opens, unless the file is being read
            return f"{stats.path}: {stats.locator(self.a['w_loc'][gid], self.a['w_sub'][gid])}"

    def _lookup_gids(self, table: pa.Table) -> np.ndarray:
        """The group id of every row of a table (-1 for a question not seen), read-only."""
        codes = []
        for which, name in enumerate(KEY_COLUMNS):
            arr = table.column(name).combine_chunks()
            if not pa.types.is_dictionary(arr.type):
                arr = pc.dictionary_encode(arr)
            ids = self.value_ids[which]
            nd = len(arr.dictionary)
            lut = np.array([ids.get(v, -1) for v in arr.dictionary.to_pylist() + [None]],
                           dtype=np.int64)
            codes.append(lut[arr.indices.fill_null(nd).to_numpy(
                zero_copy_only=False).astype(np.int64)])
        uniq, inv = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
        g = np.array([self.gid_of.get(tuple(u), -1) for u in uniq.tolist()], dtype=np.int64)
        return g[np.ravel(inv)]

    def first_seen(self, requests) -> list:
        """ "FILE: line N" of the first occurrence of each (gid, sample_idx, input, offset).

        Error path only: the inputs up to the request's are read again (the same readers and
        rules, problems discarded) until every occurrence is found, so the duplicate check
        never has to keep a location per sample. ``offset`` is the index offset of a format
        without sample indices (list positions), whose duplicates lie within one input; None
        for explicit indices.
        """
        found = {}
        for file_no, (stats, args) in enumerate(self.inputs):
            wanted = {}
            for k, (g, i, f, off) in enumerate(requests):
                if k not in found and f >= file_no and (off is None or f == file_no):
                    wanted.setdefault((g, i if off is None else i - off), []).append(k)
            if not wanted:
                continue
            groups = np.array(sorted({g for g, _ in wanted}), dtype=np.int64)
            again = F.FileStats(stats.path, stats.fmt, stats.mapping)
            chunks = F.read_chunks(sink=V.Sink("collect"), stats=again, **args)
            with contextlib.closing(chunks):  # closes the file when found before its end
                for chunk in chunks:
                    if chunk.kind != "samples" or chunk.table.num_rows == 0:
                        continue
                    gids = self._lookup_gids(chunk.table)
                    sidx = chunk.table.column("sample_idx").to_numpy()
                    for r in np.flatnonzero(np.isin(gids, groups)).tolist():
                        for k in wanted.pop((int(gids[r]), int(sidx[r])), []):
                            found[k] = (f"{stats.path}: "
                                        f"{again.locator(chunk.loc[r], chunk.sub[r])}")
                    if not wanted:
                        break
        return [found.get(k) for k in range(len(requests))]

    def resolve_pending(self, sink) -> None:
        """Name the first occurrence in the duplicate problems kept by a skip/collect sink."""
        kept = {id(p) for p in sink.examples} | {id(p) for p in sink.all_problems}
        todo = [(p, req) for p, req in self.pending if id(p) in kept]
        self.pending = []
        if not todo:
            return
        firsts = self.first_seen([req for _, req in todo])
        sink.replace({id(p): dataclasses.replace(p, message=_dup_message(p.message, first))
                      for (p, _), first in zip(todo, firsts)})

    def _mark_origin(self, gid_rows, loc, sub) -> None:
        """Record where each question new in this chunk was first read (rows in file order)."""
        a = self.a
        new = a["w_file"][gid_rows] < 0
        if not new.any():
            return
        g, first = np.unique(gid_rows[new], return_index=True)
        rows = np.flatnonzero(new)[first]
        a["w_file"][g] = self.file_no
        a["w_loc"][g] = loc[rows]
        a["w_sub"][g] = sub[rows]

    # ---- samples --------------------------------------------------------------------------
    def add_samples(self, chunk: F.Chunk, *, fname, locator, sink, stats) -> None:
        t = chunk.table
        if t.num_rows == 0:
            return
        local, gl = self.group_codes(t)
        G = len(gl)
        a = self.a
        idx = t.column("sample_idx").to_numpy().astype(np.int64)
        off_rows = None
        if chunk.relative_idx:
            off = np.zeros(G, dtype=np.int64)
            known = gl < len(self.file_offset)
            off[known] = self.file_offset[gl[known]]
            off_rows = off[local]
            idx = idx + off_rows
        if a["counts_only"][gl].any():
            r = int(np.flatnonzero(a["counts_only"][gl[local]])[0])
            g = int(gl[local[r]])
            raise ValueError(
                f"{fname}: {locator(chunk.loc[r], chunk.sub[r])}: samples for a question that "
                f"a counts input already gave at {self.where_first(g)} ({self.describe(g)}); "
                "pass each question once.")
        # rows grouped by question (a stable sort, skipped when the chunk is already grouped)
        if len(local) > 1 and np.any(local[1:] < local[:-1]):
            order = np.argsort(local, kind="stable")
        else:
            order = None
        ls = local if order is None else local[order]
        xs = idx if order is None else idx[order]
        starts = np.searchsorted(ls, np.arange(G))
        dup_sorted = self._duplicates(ls, xs, starts, gl)
        keep_sorted = ~dup_sorted
        if dup_sorted.any():
            rows = np.flatnonzero(dup_sorted)
            rows = rows if order is None else order[rows]
            rows = np.sort(rows)
            limit = len(rows) if sink.on_error == "collect" else V._MAX_EXAMPLES
            for r in rows[:limit]:
                g, i = int(gl[local[r]]), int(idx[r])
                req = (g, i, self.file_no, None if off_rows is None else int(off_rows[r]))
                problem = V.Problem(
                    fname, locator(chunk.loc[r], chunk.sub[r]), "sample_idx",
                    self.describe(g, i), V.DUPLICATE,
                    "duplicate (model, benchmark, question_id, step, sample_idx)")
                if sink.on_error == "raise":  # name the first occurrence now
                    first = self.first_seen([req])[0]
                    problem = dataclasses.replace(
                        problem, message=_dup_message(problem.message, first))
                else:
                    self.pending.append((problem, req))
                sink.add(problem)
            extra = len(rows) - min(len(rows), limit)
            if extra:
                sink.by_reason[V.DUPLICATE] += extra
                sink.n_problems += extra
            stats.rows_rejected += len(rows)

        kept = np.ones(len(local), dtype=bool)
        if dup_sorted.any():
            kept[np.flatnonzero(dup_sorted) if order is None
                 else order[np.flatnonzero(dup_sorted)]] = False
        self._mark_origin(gl[local][kept], chunk.loc[kept], chunk.sub[kept])

        def col(x):
            x = x if order is None else x[order]
            return x if keep_sorted.all() else x[keep_sorted]

        if not keep_sorted.all():
            ls, xs = ls[keep_sorted], xs[keep_sorted]
            starts = np.searchsorted(ls, np.arange(G))
        nonempty = np.diff(np.append(starts, len(ls))) > 0
        corr = col(t.column("correct").to_numpy(zero_copy_only=False).astype(bool))
        n_add = np.bincount(ls, minlength=G)
        c_add = np.bincount(ls[corr], minlength=G)
        if len(ls):
            st = np.minimum(starts, len(ls) - 1)
            first = np.where(nonempty, np.minimum.reduceat(np.where(corr, xs, _BIG), st), _BIG)
            maxi = np.where(nonempty, np.maximum.reduceat(xs, st), -1)
        else:
            first = np.full(G, _BIG)
            maxi = np.full(G, -1)
        a["n"][gl] += n_add
        a["c"][gl] += c_add
        a["first"][gl] = np.minimum(a["first"][gl], first)
        a["max_idx"][gl] = np.maximum(a["max_idx"][gl], maxi)
        trunc_all = _equals(t.column("finish_reason").combine_chunks(), "length")
        ans = t.column("answer").combine_chunks()
        missing_all = V._isnull(ans)
        if self.na == "truncated":
            missing_all = missing_all | trunc_all
        a["n_missing"][gl] += np.bincount(ls[col(missing_all)], minlength=G)
        a["n_trunc"][gl] += np.bincount(ls[col(trunc_all)], minlength=G)
        x = col(t.column("n_tokens").to_numpy())
        v = ~np.isnan(x)
        if v.any():
            lv, xv = ls[v], x[v]
            a["tok_cnt"][gl] += np.bincount(lv, minlength=G)
            a["tok_sum"][gl] += np.bincount(lv, weights=xv, minlength=G)
            st = np.minimum(starts, len(ls) - 1)
            has = nonempty & (np.bincount(lv, minlength=G) > 0)
            mn = np.minimum.reduceat(np.where(v, x, np.inf), st)
            mx = np.maximum.reduceat(np.where(v, x, -np.inf), st)
            a["tok_min"][gl] = np.minimum(a["tok_min"][gl], np.where(has, mn, np.inf))
            a["tok_max"][gl] = np.maximum(a["tok_max"][gl], np.where(has, mx, -np.inf))
        x = col(t.column("token_entropy").to_numpy())
        v = ~np.isnan(x)
        if v.any():
            lv, xv = ls[v], x[v]
            nb = np.bincount(lv, minlength=G)
            sb = np.bincount(lv, weights=xv, minlength=G)
            mb = np.divide(sb, nb, out=np.zeros(G), where=nb > 0)
            m2b = np.bincount(lv, weights=(xv - mb[lv]) ** 2, minlength=G)
            # Chan et al. parallel merge of (count, mean, M2): exact up to rounding
            na_ = a["ent_cnt"][gl]
            ma, m2a = a["ent_mean"][gl], a["ent_m2"][gl]
            ntot = na_ + nb
            delta = mb - ma
            safe = np.maximum(ntot, 1)
            a["ent_cnt"][gl] = ntot
            a["ent_mean"][gl] = np.where(ntot > 0, ma + delta * nb / safe, 0.0)
            a["ent_m2"][gl] = m2a + m2b + delta**2 * na_ * nb / safe
        present = ~missing_all & kept
        if present.any():
            self._add_answers(ans, present, gl[local], G)

    def _add_answers(self, ans, present, gid_rows, G) -> None:
        enc = ans if pa.types.is_dictionary(ans.type) else pc.dictionary_encode(ans)
        nd = len(enc.dictionary)
        ai = enc.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)[present]
        gr = gid_rows[present]
        # global answer code of each dictionary entry
        lut = np.empty(nd, dtype=np.int64)
        ids, vals = self.answer_ids, self.answer_values
        used = np.zeros(nd, dtype=bool)
        used[ai] = True
        dict_vals = enc.dictionary
        for j in np.flatnonzero(used).tolist():
            v = dict_vals[j].as_py()
            code = ids.get(v)
            if code is None:
                code = ids[v] = len(vals)
                vals.append(v)
            lut[j] = code
        gmin = int(gr.min())
        span = int(gr.max()) - gmin + 1
        if span * nd <= max(4 * len(ai), 1 << 16):
            # dense (question, answer) code: a bincount instead of hashing
            cnt = np.bincount((gr - gmin) * nd + ai, minlength=span * nd)
            nz = np.flatnonzero(cnt)
            g = nz // nd + gmin
            keys = (g.astype(np.uint64) << np.uint64(32)) | lut[nz % nd].astype(np.uint64)
            counts = cnt[nz].astype(np.int64)
        else:
            comp = (gr.astype(np.uint64) << np.uint64(32)) | lut[ai].astype(np.uint64)
            lc, keys = pd.factorize(comp)
            counts = np.bincount(lc).astype(np.int64)
            keys = keys.astype(np.uint64)
        self.ans_parts.append((keys, counts))
        self.ans_rows += len(keys)
        if self.ans_rows > 4_000_000:
            self._compact_answers()

    def _compact_answers(self) -> None:
        if not self.ans_parts:
            return
        keys = np.concatenate([k for k, _ in self.ans_parts])
        cnts = np.concatenate([c for _, c in self.ans_parts])
        uniq, inv = np.unique(keys, return_inverse=True)
        self.ans_parts = [(uniq, np.bincount(inv, weights=cnts).astype(np.int64))]
        self.ans_rows = len(uniq)

    def _duplicates(self, ls, xs, starts, gl) -> np.ndarray:
        """Rows (in grouped order) whose (question, sample_idx) was already seen.

        Exact across chunks and files, with memory proportional to the number of samples and
        never to the largest sample_idx: per question, a bitmap of the indices seen while the
        indices are dense (at most 64 index values per sample seen, i.e. one bit per value and
        at most 8 bytes per sample), else the sorted array of the indices seen (8 bytes per
        sample). The common case, indices 0..n-1, costs one bit per sample.
        """
        dup = np.zeros(len(ls), dtype=bool)
        ends = np.append(starts[1:], len(ls))
        # strictly increasing indices within every question: no duplicates inside the chunk
        inc = len(xs) < 2 or bool(np.all((xs[1:] > xs[:-1]) | (ls[1:] != ls[:-1])))
        for j, g in enumerate(gl.tolist()):
            s0, s1 = int(starts[j]), int(ends[j])
            if s1 <= s0:
                continue
            ii = xs[s0:s1]
            if inc:
                seen = np.zeros(len(ii), dtype=bool)
            else:  # repeats inside the chunk: every occurrence after the first
                seen = np.ones(len(ii), dtype=bool)
                seen[np.unique(ii, return_index=True)[1]] = False
            store = self.seen_idx.get(g)
            # samples of this question kept so far, plus this chunk's
            n_rows = len(ii) + (0 if store is None else
                                int(store[1]) if store[0] == "bits" else len(store[1]))
            hi = int(ii.max()) + 1
            if (store is None or store[0] == "bits") and hi <= 64 * n_rows + 4096:
                bm = np.zeros(16, dtype=np.uint8) if store is None else store[2]
                nbytes = (hi + 7) // 8
                if len(bm) < nbytes:  # grow geometrically, within 8 bytes per sample
                    size = max(nbytes, min(2 * len(bm), 8 * n_rows + 512))
                    bm = np.concatenate([bm, np.zeros(size - len(bm), dtype=np.uint8)])
                byte = ii >> 3
                bit = np.left_shift(1, ii & 7).astype(np.uint8)
                seen |= (bm[byte] & bit) != 0
                np.bitwise_or.at(bm, byte, bit)
                self.seen_idx[g] = ("bits", n_rows - int(seen.sum()), bm)
            else:
                if store is None:
                    old = np.empty(0, dtype=np.int64)
                elif store[0] == "bits":  # too sparse for a bitmap from now on
                    old = np.flatnonzero(np.unpackbits(store[2], bitorder="little"))
                else:
                    old = store[1]
                if len(old):
                    pos = np.minimum(np.searchsorted(old, ii), len(old) - 1)
                    seen |= old[pos] == ii
                self.seen_idx[g] = ("sorted", np.union1d(old, ii[~seen]))
            dup[s0:s1] = seen
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
        keep = ~dup
        self._mark_origin(gid[keep], chunk.loc[keep], chunk.sub[keep])
        if dup.any():
            rows = np.flatnonzero(dup)
            limit = len(rows) if sink.on_error == "collect" else V._MAX_EXAMPLES
            for r in rows[:limit]:
                g = int(gid[r])
                other = int(a["w_file"][g]) != self.file_no
                sink.add(V.Problem(
                    fname, locator(chunk.loc[r], chunk.sub[r]), "question_id", self.describe(g),
                    V.DUPLICATE, _dup_message(
                        "duplicate (model, benchmark, question_id, step)"
                        + (" in more than one input" if other else ""), self.where_first(g))))
            extra = len(rows) - min(len(rows), limit)
            if extra:
                sink.by_reason[V.DUPLICATE] += extra
                sink.n_problems += extra
            stats.rows_rejected += len(rows)
        if dup.any():
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
        stats.first_correct_unknown += int((~known & (c > 0)).sum())
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


def _dup_message(message: str, first: str | None) -> str:
    return f"{message}; first given at {first}" if first else f"{message} of an earlier row"


def _equals(arr, value) -> np.ndarray:
    """Boolean mask of arr == value (False for nulls); dictionary arrays compare the values."""
    if arr.null_count == len(arr):
        return np.zeros(len(arr), dtype=bool)
    if pa.types.is_dictionary(arr.type):
        hit = np.asarray(pc.equal(arr.dictionary, value).fill_null(False), dtype=bool)
        idx = arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        return np.append(hit, False)[idx]
    return np.asarray(pc.equal(arr, value).fill_null(False), dtype=bool)


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------
@dataclass
class _RunResult:
    table: pa.Table
    provenance: dict
    sink: V.Sink
    origin: dict  # per output row: "w_file" (input number), "w_loc", "w_sub" of its first row


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


def _check_distinct(paths, stat_results) -> None:
    """Refuse a file given twice (the same file, or a byte-identical copy) in one call.

    Formats without per-sample indices (evaluator, nested) number a later file's samples after
    an earlier file's, so a repeated file would silently double n: no key can catch it.
    Contents are compared only between files of equal size.
    """
    import hashlib

    seen, by_size = {}, {}
    for i, (p, st) in enumerate(zip(paths, stat_results), 1):
        same = seen.get((st.st_dev, st.st_ino))
        if same is not None:
            raise V.InputFileError(
                f"duplicate input: {p} (input {i}) is the same file as {same[1]} (input "
                f"{same[0]}); give each file once, or its rows would be counted twice.",
                V.DUPLICATE_FILE)
        seen[(st.st_dev, st.st_ino)] = (i, p)
        by_size.setdefault(st.st_size, []).append((i, p))
    for group in by_size.values():
        digests = {}
        for i, p in group if len(group) > 1 else ():
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                for block in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(block)
            same = digests.setdefault(h.digest(), (i, p))
            if same[0] != i:
                raise V.InputFileError(
                    f"duplicate input: {p} (input {i}) has the same content as {same[1]} "
                    f"(input {same[0]}); give each file once, or its rows would be counted "
                    "twice.", V.DUPLICATE_FILE)


def _run(paths, *, fmt, model, benchmark, step, mapping, chunk_size, on_error, na,
         allow_summary=False, contents=None, finish=True):
    """Read every input into one accumulator (one rule set, one duplicate check).

    Summary files (``allow_summary``) are read as counts, with the counts rules; their other
    columns are attached by :func:`load_counts`. ``contents``: the table of the one input,
    already read by the caller (who checked that it is a regular file), so that it is not
    read again; ``finish=False`` only checks the rows (the result's table is None).
    """
    _check_params(chunk_size, na)
    if step is not None and (isinstance(step, bool) or not isinstance(step, (int, np.integer))
                             or step < 0):
        raise ValueError(f"The 'step' parameter must be an int >= 0 or None. Got {step!r}.")
    sink = V.Sink(on_error)
    acc = _Accumulator(na)
    labels = {"model": model, "benchmark": benchmark, "step": step}
    files = []
    plist = _as_paths(paths)
    if contents is None:
        stat_results = [F.check_regular_file(p) for p in plist]  # a FIFO would block below
        for p, st in zip(plist, stat_results):
            if st.st_size == 0:
                raise F.no_rows_error(p, "empty")
        _check_distinct(plist, stat_results)
    elif len(plist) != 1:
        raise ValueError("internal error: contents are those of one input")
    for p in plist:
        path = Path(p)
        f, m = F._detect_format(path, fmt, mapping, checked=True)
        if f == "summary" and not allow_summary:
            raise ValueError(f"{p} is already a per-question summary; use "
                             "leash.summarize.load_counts to combine summaries with "
                             "other inputs.")
        stats = F.FileStats(str(p), f, m)
        stats.locator = None
        before, reasons_before = sink.n_problems, dict(sink.by_reason)
        args = {"path": path, "fmt": f, "mapping": m, "labels": labels,
                "chunk_size": int(chunk_size), "contents": contents}
        acc.start_file(stats, args)
        for chunk in F.read_chunks(sink=sink, stats=stats, **args):
            add = acc.add_samples if chunk.kind == "samples" else acc.add_counts
            add(chunk, fname=str(p), locator=stats.locator, sink=sink, stats=stats)
        if stats.rows_read == 0:
            raise F.no_rows_error(p, F._container(path))
        stats.notes.extend(F.column_notes(f, m, stats, SUMMARY_COLUMNS if f == "summary"
                                          else ()))
        files.append({
            "path": str(p), "format": f, "mapping": m.name if m else None,
            "reader": stats.reader, "rows_read": stats.rows_read,
            "rows_used": stats.rows_read - stats.rows_rejected,
            "rows_rejected": stats.rows_rejected, "problems": sink.n_problems - before,
            "rejected_by_reason": {r: k - reasons_before.get(r, 0)
                                   for r, k in sink.by_reason.items()
                                   if k > reasons_before.get(r, 0)},
            "notes": stats.notes,
            # questions whose first correct sample is unknown (counts without first_correct)
            "first_correct_unknown": stats.first_correct_unknown,
        })
        if f == "summary":
            meta = stats.schema_metadata.get(F.SUMMARY_METADATA_KEY)
            files[-1]["stored_provenance"] = json.loads(meta) if meta else None
    acc.resolve_pending(sink)
    table = acc.finish() if finish else None
    from leash import __version__

    prov = {
        "leash_version": __version__,
        "files": files,
        "rows_read": sum(f["rows_read"] for f in files),
        "rows_used": sum(f["rows_used"] for f in files),
        "rows_rejected": sum(f["rows_rejected"] for f in files),
        "rejected_by_reason": dict(sink.by_reason),
        "problem_examples": [str(p) for p in sink.examples],
        "questions": acc.size,
        "on_error": on_error, "na": na, "chunk_size": int(chunk_size),
        "labels": {k: v for k, v in labels.items() if v is not None},
    }
    origin = {k: acc.a[k][: acc.size].copy() for k in ("w_file", "w_loc", "w_sub")}
    return _RunResult(table, prov, sink, origin)


def _refuse_nothing_left(prov: dict) -> None:
    """Every row rejected (``on_error="skip"``): an error, never a summary without rows.

    Nothing usable is left, and a summary file without rows would be refused when read back
    (an input must hold at least one row), so nothing is returned or written.
    """
    if prov["questions"] or not prov["rows_read"]:
        return
    files = ", ".join(f["path"] for f in prov["files"])
    raise ValueError(
        f"{files}: all {prov['rows_read']} rows rejected ({prov['rejected_by_reason']}); "
        "nothing is left to summarize. Run leash.validate.validate(path) to list every "
        "problem.")


def _warn_rejected(prov: dict) -> None:
    """One warning per file with rejected rows: "FILE: r of n rows rejected (reasons)"."""
    import warnings

    for f in prov["files"]:
        if f["rows_rejected"]:
            warnings.warn(
                f"{f['path']}: {f['rows_rejected']} of {f['rows_read']} rows rejected "
                f"({f['rejected_by_reason']}); see attrs['provenance'].", stacklevel=3)


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
        A frame with the summary columns (:data:`SUMMARY_COLUMNS`) and at least one row.
    path : str or os.PathLike

    Raises
    ------
    ValueError
        A column is missing, or the frame has no rows: every summary leash writes can be
        read back, and an input without rows is refused (data/README.md, section 6).
    """
    missing = [c for c in SUMMARY_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"The 'frame' parameter lacks summary columns {missing}.")
    if not len(frame):
        raise ValueError(f"The 'frame' parameter has no rows; {path} is not written, since "
                         "a summary without rows could not be read back.")
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

    Raises
    ------
    ValueError
        Not a summary file, or a row breaks the rules of counts inputs (``n >= 1``,
        ``0 <= c <= n``, ``first_correct``, one row per question), named by row group and row.
    """
    path = Path(path)
    F.check_regular_file(path)  # a FIFO would block the read
    try:  # the one read of the file: its footer, then the summary columns
        with pq.ParquetFile(path) as pf:
            schema = pf.schema_arrow
            meta = (schema.metadata or {}).get(F.SUMMARY_METADATA_KEY)
            missing = [c for c in SUMMARY_COLUMNS if c not in schema.names]
            table = None if meta is None or missing else pf.read(columns=list(SUMMARY_COLUMNS))
    except F._UNREADABLE as exc:
        raise F._unreadable(path, exc) from None
    if table is None:
        what = "provenance metadata" if meta is None else f"columns {missing}"
        raise ValueError(f"{path} is not a leash summary file (missing {what}).")
    # the counts rules of every input (n >= 1, 0 <= c <= n, first_correct, no duplicate
    # question), on the table just read: a summary is not trusted because leash wrote it
    _run([path], fmt="summary", model=None, benchmark=None, step=None, mapping=None,
         chunk_size=250_000, on_error="raise", na="class", allow_summary=True,
         contents=table, finish=False)
    try:
        table = table.select(list(SUMMARY_COLUMNS)).cast(SUMMARY_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise ValueError(f"{path}: a column does not have the type of a leash summary "
                         f"({exc}).") from None
    return _to_frame(table, json.loads(meta))


def summarize(paths, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
              chunk_size=250_000, out=None, na="class", on_error="raise") -> pd.DataFrame:
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
    chunk_size : int, default 250_000
        Rows per chunk (approximate for text formats, which are read in byte blocks). Peak
        memory is about 110 MB (interpreter and libraries) plus ~1 KB per row of chunk;
        bigger chunks are not faster (measured on 25M samples).
    out : str or os.PathLike, optional
        Also write the summary as Parquet here (provenance in the schema metadata). Nothing
        is written when the call raises.
    na : {"class", "truncated"}, default "class"
        The NA rule of answer entropy (:data:`leash.entropy.NA_RULES`), i.e. which samples
        count as "answer missing": "class" counts samples without an extracted answer
        (missing, empty or the literal "NA"); "truncated" also counts samples with
        ``finish_reason == "length"`` even when an answer was extracted (the paper's "NA for
        incomplete outputs", App. B.4). Missing answers are never in ``answer_values``; answer
        entropy counts them as one extra class, or leaves them out ("drop", which needs a
        "class" summary). The rule is recorded in ``attrs["provenance"]["na"]`` and in a
        written summary.
    on_error : {"raise", "skip"}, default "raise"
        "raise": the first invalid row raises ValueError naming file, line/row, field and
        value. "skip": invalid rows are rejected and counted (per reason) in the provenance,
        with a warning per file; if every row is rejected, that is an error (nothing usable
        is left, and a summary without rows could not be read back).

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        The summary frame (schema in the module docstring). ``attrs["provenance"]`` holds rows
        read / used / rejected per file and per reason, the readers used and the parameters.

    Raises
    ------
    ValueError
        Invalid rows (with ``on_error="raise"``), every row rejected (with
        ``on_error="skip"``; the message names the files and counts the rejections),
        undetectable formats, missing labels.
    """
    if on_error not in V.ON_ERROR:
        raise ValueError(f"The 'on_error' parameter must be one of {V.ON_ERROR}. "
                         f"Got {on_error!r} instead.")
    res = _run(paths, fmt=fmt, model=model, benchmark=benchmark, step=step, mapping=mapping,
               chunk_size=chunk_size, on_error=on_error, na=na)
    _refuse_nothing_left(res.provenance)
    _warn_rejected(res.provenance)
    frame = _to_frame(res.table, res.provenance)
    if out is not None:
        write_summary(frame, out)
    return frame


def load_counts(paths, *, fmt=None, model=None, benchmark=None, step=None, mapping=None,
                chunk_size=250_000, na="class", on_error="raise") -> pd.DataFrame:
    """Load per-question counts from samples, counts or summary files alike.

    Parameters
    ----------
    paths : str, os.PathLike or list of them
        Any mix of generation files (summarized as by :func:`summarize`) and summary Parquet
        files written earlier. Every input goes through the same rules and the same duplicate
        check; a summary's rows are checked with the counts rules (``n >= 1``, ``0 <= c <= n``,
        ``first_correct``) and keep their answer and token columns.
    fmt, model, benchmark, step, mapping, chunk_size, na, on_error
        As in :func:`summarize`; ``on_error="skip"`` also rejects (and counts) bad summary rows.
        A summary file keeps the NA counts it was written with: one written under another
        ``na`` rule is refused when it has truncated samples (the rules then differ).

    Returns
    -------
    pandas.DataFrame, shape (n_questions, 16)
        One summary frame, rows in the order the inputs are read; ``attrs["provenance"]``
        lists every file (a summary file's own provenance under ``"stored_provenance"``).

    Raises
    ------
    ValueError
        Invalid rows (with ``on_error="raise"``), every row rejected (with
        ``on_error="skip"``), a (model, benchmark, question_id, step) given more than once,
        and the errors of :func:`summarize`.
    """
    if on_error not in V.ON_ERROR:
        raise ValueError(f"The 'on_error' parameter must be one of {V.ON_ERROR}. "
                         f"Got {on_error!r} instead.")
    res = _run(paths, fmt=fmt, model=model, benchmark=benchmark, step=step, mapping=mapping,
               chunk_size=chunk_size, on_error=on_error, na=na, allow_summary=True)
    _refuse_nothing_left(res.provenance)
    _warn_rejected(res.provenance)
    table = res.table
    summaries = [(i, f["path"]) for i, f in enumerate(res.provenance["files"])
                 if f["format"] == "summary"]
    if summaries:
        table = _with_summary_columns(table, res.origin, summaries)
        _check_stored_na(table, res, summaries, na)
    return _to_frame(table, res.provenance)


def summary_na(summary: pd.DataFrame):
    """The NA rule a summary frame was made under (``"class"``, ``"truncated"``), or None.

    Read from ``attrs["provenance"]``: its ``"na"``, else the common ``"na"`` of its
    ``"parts"`` (a concatenation); None when it is not recorded (a frame made by hand, or
    parts made under different rules).
    """
    return _provenance_na(summary.attrs.get("provenance") or {})


def _provenance_na(prov: dict):
    if prov.get("na") is not None:
        return prov["na"]
    rules = {_provenance_na(p or {}) for p in prov.get("parts") or []}
    return rules.pop() if len(rules) == 1 else None


def _check_stored_na(table: pa.Table, res, summaries, na: str) -> None:
    """A summary file read under another NA rule than it was written with is refused when it
    has truncated samples: its answer counts cannot be re-split."""
    trunc = pc.fill_null(table.column("n_truncated"), 0).to_numpy().astype(np.int64)
    for i, path in summaries:
        stored = _provenance_na(res.provenance["files"][i].get("stored_provenance") or {})
        if stored is None or stored == na:
            continue
        rows = res.origin["w_file"] == i
        if (trunc[rows] > 0).any():
            raise ValueError(
                f"{path} was summarized with na={stored!r} and has truncated samples, so its "
                f"answer counts cannot be read under na={na!r} (which samples are NA is decided "
                f"when the generations are summarized): summarize them again with "
                f"na={na!r} (leash summarize --na {na}).")


# columns of a summary file that the counts rules do not read
_SUMMARY_EXTRA = [c for c in SUMMARY_COLUMNS if c not in KEY_COLUMNS + ("n", "c", "first_correct")]


def _with_summary_columns(table: pa.Table, origin: dict, summaries) -> pa.Table:
    """Fill the answer and token columns of rows read from summary files from those files."""
    src = np.arange(table.num_rows)
    parts, offset = [], table.num_rows
    schema = pa.schema([SUMMARY_SCHEMA.field(c) for c in _SUMMARY_EXTRA])
    for i, path in summaries:
        rows = np.flatnonzero(origin["w_file"] == i)
        if not len(rows):
            continue
        part = pq.read_table(path, columns=_SUMMARY_EXTRA).cast(schema)
        parts.append(part.take(pa.array(origin["w_loc"][rows])))
        src[rows] = offset + np.arange(len(rows))
        offset += len(rows)
    for name in _SUMMARY_EXTRA:
        col = pa.concat_arrays([table.column(name).combine_chunks()]
                               + [p.column(name).combine_chunks() for p in parts])
        table = table.set_column(table.schema.get_field_index(name), name,
                                 col.take(pa.array(src)))
    return table
