"""Reasoning Gym's evaluation results (``reasoning-gym-eval``): one JSON document per run.

Written by Reasoning Gym's evaluator of local models (open-thought/reasoning-gym,
``training/evaluations/evaluate_model.py``: ``LocalModelEvaluator.evaluate_all`` builds the
document, ``main`` writes it with ``json.dump(results, f, indent=2)`` to
``<output_dir>/local_<timestamp>/results.json``); the runs of open-thought/reasoning-gym-eval
are such documents::

    {"metadata": {"model", "temperature", "top_p", "eval_repeats", ...},
     "categories": [{"name", "datasets": [{"name", "category", "config", "results": [
         {"question", "expected_answer", "best_score", "mean_score", "completions": [
             {"model_answer", "full_model_response", "score"}, ...]}]}]}]}

One row per completion: ``model`` is ``metadata.model`` (``--model`` overrides it),
``benchmark`` the dataset's ``name`` (``--benchmark`` overrides it), ``question_id`` the first 16
hex digits of the sha256 of the question's text (the same in every file, so two runs of one
dataset join; a question asked twice in one run is one question, its completions numbered on),
``sample_idx`` the completion's rank among its question's, ``response`` the
``full_model_response``, ``answer`` the ``model_answer`` (Reasoning Gym's ``extract_answer``),
``gold`` the ``expected_answer``. The verdict is ``score > 0``: the writer sets every score
below 1 to 0 (``score = 0.0 if score < 1 else score``), so a positive score is a correct answer;
a score strictly between 0 and 1 (partial credit, as ``score_answer`` gives and other writers
log), a negative one, NaN or anything but a number is no verdict and is refused, naming the
question and completion. A completion whose generation failed (``error``; score 0) counts as
wrong, as the writer's ``mean_score`` counts it.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from leash.errors import LeashValueError
from leash_eval import documents as D
from leash_eval import evaluators as E
from leash_eval.readers import InputFormat

__all__ = ["READERS", "question_id"]


def question_id(question: str) -> str:
    """The id of a question: the first 16 hex digits of the sha256 of its text (UTF-8)."""
    return hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _fits(doc) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("categories"), list)
            and isinstance(doc.get("metadata"), dict))


class _Checks:
    """Where a document breaks its layout: one line naming the file, the JSON path and field."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, what: str, value=None):
        raise LeashValueError(f"{self.path}: {where}: {what}" + (
            f", found {json.dumps(value)[:60]}" if value is not None else "") + ".",
            file=self.path, line=where, key=where.rsplit(".", 1)[-1], value=value)

    def listed(self, parent: dict, field: str, where: str) -> list:
        v = parent.get(field)
        if not isinstance(v, list):
            self.fail(where, f"field '{field}' must be a list", "missing" if v is None else v)
        return v

    def obj(self, v, where: str) -> dict:
        if not isinstance(v, dict):
            self.fail(where, "must be an object", v)
        return v

    def text(self, v, where: str, field: str, required=True):
        if v is None and not required:
            return None
        if not isinstance(v, str) or (required and not v.strip()):
            self.fail(where, f"field '{field}' must be a non-empty string", v)
        return v


def _read(con, path: Path, options: dict):
    doc, _ = D.load(path)
    ck = _Checks(path)
    if not _fits(doc):
        raise LeashValueError(f"{path}: a Reasoning Gym results document has 'metadata' and "
                              "'categories' (training/evaluations/evaluate_model.py).", file=path)
    model = ck.text(doc["metadata"].get("model"), "metadata", "model", required=False)
    rows, seen = [], {}
    for c, cat in enumerate(doc["categories"]):
        at = f"categories[{c}]"
        for d, ds in enumerate(ck.listed(ck.obj(cat, at), "datasets", at)):
            at_d = f"{at}.datasets[{d}]"
            bench = ck.text(ck.obj(ds, at_d).get("name"), at_d, "name")
            for r, res in enumerate(ck.listed(ds, "results", at_d)):
                at_r = f"{at_d}.results[{r}]"
                qid = question_id(ck.text(ck.obj(res, at_r).get("question"), at_r, "question"))
                for k, comp in enumerate(ck.listed(res, "completions", at_r)):
                    at_k = f"{at_r}.completions[{k}]"
                    score = ck.obj(comp, at_k).get("score")
                    if not _is_verdict(score):
                        ck.fail(at_k, "field 'score' must be 0 or at least 1 (the writer's "
                                "verdicts; a partial score is no verdict)",
                                "missing" if score is None else score)
                    seen[(bench, qid)] = idx = seen.get((bench, qid), -1) + 1
                    rows.append({
                        "line": len(rows) + 1, "model": model, "benchmark": bench,
                        "question_id": qid, "sample_idx": idx, "correct": score > 0,
                        "response": ck.text(comp.get("full_model_response"), at_k,
                                            "full_model_response", required=False),
                        "answer": _text(comp.get("model_answer")),
                        "gold": _text(res.get("expected_answer"))})
    if not rows:
        raise LeashValueError(f"{path}: the document holds no completions.", file=path)
    return E.rows_relation(con, path, rows, "rgym")


def _is_verdict(score) -> bool:
    """0, or a finite number >= 1 (the writer's scores; not a bool, not partial credit)."""
    return (not isinstance(score, bool) and isinstance(score, (int, float))
            and math.isfinite(score) and (score == 0 or score >= 1))


def _text(v):
    return v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False)


READERS = (
    InputFormat("reasoning-gym-eval", _read, fits_document=_fits, unit="record",
                signature="'metadata' and 'categories' (Reasoning Gym's evaluation results)"),
)
