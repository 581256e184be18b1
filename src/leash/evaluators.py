"""Readers for the files evaluators write (lm-evaluation-harness, lighteval, evalscope, vLLM).

Each reader turns one evaluator file into DuckDB rows in leash's canonical per-sample columns,
so every format goes through the same validity rules and the same per-question aggregation
(:mod:`leash.formats`, :mod:`leash.summarize`). This module only *translates layouts*; it does
not validate values or aggregate.

Interface (used by :mod:`leash.formats`)
----------------------------------------
``EVALUATOR_FORMATS``
    The ``--fmt`` names of the readers here, e.g. ``("lm-eval", "lighteval", "evalscope",
    "openai-batch")``.
``detect(path, keys, first) -> str | None``
    The reader name for a file whose first record has the top-level ``keys`` (``first`` is that
    record as a dict, or None for a Parquet file, whose ``keys`` are its column names), or None.
``relation(con, path, fmt, *, options) -> duckdb.DuckDBPyRelation``
    The file's samples as a relation with exactly :data:`RELATION_COLUMNS` (in that order):
    ``line`` (1-based line of a JSONL file / row of a Parquet file, for messages), ``model``,
    ``benchmark`` (NULL when the file does not say), ``question_id`` (VARCHAR), ``sample_idx``
    (BIGINT, 0-based generation order within the question), ``correct`` (BOOLEAN; NULL when the
    evaluator does not log per-sample correctness, then ``leash rescore`` grades ``response``
    against ``gold``), ``response``, ``gold``, ``answer``, ``finish_reason`` (VARCHAR, NULL when
    absent), ``n_tokens`` (BIGINT, NULL when absent). ``options`` holds reader options such as
    ``{"filter": "strict-match"}`` for lm-eval; a bad or ambiguous option is a ValueError whose
    one-line message names the file, the option as a CLI flag and the values present.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EVALUATOR_FORMATS", "RELATION_COLUMNS", "detect", "relation"]

EVALUATOR_FORMATS: tuple[str, ...] = ()
RELATION_COLUMNS = ("line", "model", "benchmark", "question_id", "sample_idx", "correct",
                    "response", "gold", "answer", "finish_reason", "n_tokens")


def detect(path: Path, keys: set, first: dict | None) -> str | None:
    """The evaluator format of a file from its first record's keys, or None (stub)."""
    return None


def relation(con, path: Path, fmt: str, *, options: dict):
    """The file's samples in :data:`RELATION_COLUMNS` (stub: no reader yet)."""
    raise ValueError(f"{path}: no reader for format {fmt!r}")
