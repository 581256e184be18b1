"""``leash score-traces``: teacher-forced log-probabilities of reference reasoning traces under a
model, the input of Table 2 (arXiv 2507.14843v4, Section 4.2: perplexity of external traces by
support category).

The traces file is JSONL, one trace per line: ``question_id``, ``question``, ``trace`` (the
reference's reasoning text), ``reference`` (who wrote it, e.g. "DeepSeek-R1") and ``benchmark``.
The trace is scored as the model's response to the question under the same prompt as
``leash generate``. The output has the columns :func:`leash.analysis.tables.perplexity_table`
reads (``benchmark, question_id, reference, model, n_tokens, sum_logprob``) and each trace's
``token_logprobs``; it is what a study's ``perplexity`` section lists.
"""

from __future__ import annotations

import json
from pathlib import Path

from leash.errors import LeashValueError
from leash_eval.generate.backends import DEFAULT_PROMPT, Backend

__all__ = ["score_traces", "TRACE_FIELDS"]

TRACE_FIELDS = ("question_id", "question", "trace", "reference", "benchmark")


def _traces(path: Path):
    """(line number, record) of each trace, every field a non-empty string (or an id)."""
    with open(path, encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise LeashValueError(f"{path}, line {lineno}: malformed JSON ({exc.msg}).",
                                      file=path, line=lineno) from None
            if not isinstance(rec, dict):
                raise LeashValueError(f"{path}, line {lineno}: a trace must be a JSON object.",
                                      file=path, line=lineno)
            for f in TRACE_FIELDS:
                v = rec.get(f)
                if f == "question_id" and isinstance(v, int) and not isinstance(v, bool):
                    v = rec[f] = str(v)
                if not isinstance(v, str) or not v.strip():
                    raise LeashValueError(f"{path}, line {lineno}, field '{f}': must be a "
                                          f"non-empty string. Got {v!r}.", file=path,
                                          line=lineno, key=f, value=v)
            yield lineno, rec


def score_traces(backend: Backend, traces, out, *, label: str, prompt: str = DEFAULT_PROMPT,
                 progress: bool = False) -> int:
    """Score every trace of ``traces`` under ``backend`` and write them to ``out``.

    Parameters
    ----------
    backend : Backend
    traces : str or os.PathLike
        JSONL with the fields :data:`TRACE_FIELDS`.
    out : str or os.PathLike
        Parquet file: ``benchmark, question_id, reference, model, n_tokens, sum_logprob,
        token_logprobs`` (natural log; ``model`` is ``label``).
    label : str
        The scoring model's label (as in the support section of a study).
    prompt : str, default :data:`~leash_eval.generate.backends.DEFAULT_PROMPT`
        The user message with ``{question}``, as in :func:`leash_eval.generate.sampling.generate`.
    progress : bool, default False

    Returns
    -------
    int
        The number of traces written.
    """
    import pyarrow as pa

    from leash_eval.generate.sampling import write_parquet
    from leash_eval.rescore.execution import progress_bar

    path = Path(traces)
    if not path.is_file():
        raise ValueError(f"The traces file {path} does not exist.")
    records = list(_traces(path))
    rows = []
    with progress_bar(progress, "score-traces", total=len(records)) as bar:
        for lineno, rec in records:
            toks = backend.tokenize(rec["trace"])
            if not toks:
                raise ValueError(f"{path}, line {lineno}, field 'trace': has no token.")
            lp = backend.score(backend.prompt(prompt.format(question=rec["question"])), toks)
            rows.append({"benchmark": rec["benchmark"], "question_id": rec["question_id"],
                         "reference": rec["reference"], "model": label, "n_tokens": len(toks),
                         "sum_logprob": float(lp.sum()), "token_logprobs": lp.tolist()})
            bar.update(1)
    if not rows:
        raise ValueError(f"{path} has no trace.")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    meta = {"backend": backend.describe(), "prompt": prompt, "model": label}
    write_parquet(pa.Table.from_pylist(rows), out, meta, key=b"leash.score-traces")
    return len(rows)
