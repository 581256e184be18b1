"""The per-question summary format: what the evaluation toolkit writes and the notebooks read.

A summary has one row per (model, benchmark, question_id, step) with the 16 columns of
:data:`SUMMARY_COLUMNS` (``data/README.md``, section 3); a summary file is Parquet with the
Arrow schema :func:`summary_schema` and its provenance as JSON under the key-value metadata key
:data:`SUMMARY_METADATA_KEY`. ``leash_eval.summarize`` makes summaries from generations; the
SIMULATED demo's files (:mod:`leash.sources.demo`) are summaries too. This module is the one home
of the format, so that both packages name it the same way; importing it loads neither pandas
nor pyarrow.
"""

from __future__ import annotations

__all__ = ["SUMMARY_COLUMNS", "SUMMARY_TYPES", "SUMMARY_EXTRA", "SUMMARY_METADATA_KEY",
           "KEY_COLUMNS", "NA_MODES", "summary_schema", "summary_na", "provenance_na"]

SUMMARY_COLUMNS = ("model", "benchmark", "question_id", "step", "n", "c", "first_correct",
                   "n_answer_missing", "answer_values", "answer_counts", "n_tokens_mean",
                   "n_tokens_min", "n_tokens_max", "token_entropy_mean", "token_entropy_std",
                   "n_truncated")
#: The DuckDB type of each column of :data:`SUMMARY_COLUMNS`, in order.
SUMMARY_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "BIGINT", "BIGINT", "BIGINT",
                 "BIGINT", "VARCHAR[]", "BIGINT[]", "DOUBLE", "DOUBLE", "DOUBLE", "DOUBLE",
                 "DOUBLE", "BIGINT")
#: What a summary keeps beyond its counts (answers, lengths, token entropies, truncations).
SUMMARY_EXTRA = SUMMARY_COLUMNS[7:]
#: The Parquet key-value metadata key under which a summary file keeps its provenance (JSON).
SUMMARY_METADATA_KEY = b"leash.summary"
#: The columns that name a question of one model at one step.
KEY_COLUMNS = ("model", "benchmark", "question_id", "step")
#: The NA rules a summary can be made under (see :data:`leash.core.entropy.NA_RULES`; "drop" is
#: applied when the entropy is computed, from a "class" summary).
NA_MODES = ("class", "truncated")

_SCHEMA = []


def summary_schema():
    """The Arrow schema of a summary file (pyarrow is imported on the first call)."""
    if not _SCHEMA:
        import pyarrow as pa

        t = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(),
             "VARCHAR[]": pa.list_(pa.string()), "BIGINT[]": pa.list_(pa.int64())}
        _SCHEMA.append(pa.schema([(c, t[k]) for c, k in zip(SUMMARY_COLUMNS, SUMMARY_TYPES)]))
    return _SCHEMA[0]


def summary_na(summary):
    """The NA rule a summary frame was made under (``"class"``, ``"truncated"``), or None.

    Read from ``attrs["provenance"]`` (:func:`provenance_na`); None when it is not recorded (a
    frame made by hand, or parts made under different rules).
    """
    return provenance_na(summary.attrs.get("provenance") or {})


def provenance_na(prov: dict):
    """The NA rule a summary's provenance records: its ``"na"``, else the common ``"na"`` of its
    ``"parts"`` (a concatenation), else None.
    """
    if prov.get("na") is not None:
        return prov["na"]
    rules = {provenance_na(p or {}) for p in prov.get("parts") or []}
    return rules.pop() if len(rules) == 1 else None
