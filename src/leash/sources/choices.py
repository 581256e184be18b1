"""The names a study chooses among: the paper's own, and what the toolkit does with a source.

A study source may name an input format (``fmt:``), a built-in field mapping (``mapping:``), a
scorer (``rescore:``), an answer extractor (``extract:``) and a benchmark whose question file
holds the gold answers (``gold:``). The toolkit (``leash_eval``) implements each; the names live
here, as plain data, so that checking a study file (:mod:`leash.sources.study`) imports nothing
from the toolkit. Where the toolkit has a registry of a family (input formats:
``leash_eval.readers``; scorers and extractors: ``leash_eval.scorers``), the names here are its
names, checked by one test (``tests/test_boundary.py``); elsewhere the toolkit takes its names
from here.
"""

from __future__ import annotations

__all__ = ["PAPER", "INPUT_FORMATS", "MAPPINGS", "MAPPING_FIELDS", "RESCORERS", "SCORERS",
           "EXTRACTORS", "GYM_EXTRACT", "GOLD_DATASETS", "GOLD_FILE_RULES", "is_gold_file"]

#: The study that is the paper's printed numbers (``study = "paper"``; ``data/paper/``).
PAPER = "paper"
#: Every value of ``fmt:`` (and of the CLI's ``--fmt``): the names of the toolkit's registry of
#: input formats (``leash_eval.readers.input_formats``, in its order; a test keeps them one),
#: leash's own (``data/README.md``, sections 1-4b), then the evaluators', trainers' and
#: harnesses' files it reads as they are (sections 4c-4e).
INPUT_FORMATS = ("samples", "counts", "summary", "evaluator", "nested",
                 "lm-eval", "lighteval", "evalscope", "openai-batch",
                 "verl", "nemo-skills", "inspect", "opencompass", "json-object",
                 "reasoning-gym-eval")
#: The built-in field mappings of nested files (``leash_eval.formats.MAPPINGS``).
MAPPINGS = ("evaluator", "rollouts", "samples")
#: The fields of a mapping (``leash_eval.formats.NestedMapping``); ``correct`` is required.
MAPPING_FIELDS = ("name", "correct", "question_id", "samples", "answer", "response", "index",
                  "n_tokens", "token_entropy", "finish_reason", "model", "benchmark", "step",
                  "gold", "constants")
#: Scorers a study source can ask for (``rescore:``); Reasoning Gym needs entries per question,
#: which a study file does not name. These names and the three below are those of the toolkit's
#: registries of scorers and extractors (``leash_eval.scorers``, in their order; a test keeps
#: them one).
RESCORERS = ("math-verify",)
#: Every scorer of ``leash rescore``.
SCORERS = ("math-verify", "reasoning-gym")
#: How the answer is taken from a response before it is graded (``extract:``): the extractors of
#: the scorers a study can ask for.
EXTRACTORS = ("math-verify", "leash")
#: The extraction of the ``reasoning-gym`` scorer that adds the paper's task-specific answer
#: rewrites (arXiv 2507.14843v4, App. B.3; ``leash_eval.gym_answers``).
GYM_EXTRACT = "reasoning-gym"
#: The manifest datasets that are question files with gold answers (``gold:``, ``--gold``).
GOLD_DATASETS = ("math500", "aime24", "amc23", "minerva-math", "olympiadbench",
                 "gsm8k-probe-questions")
#: Where the gold answer is in a question file named by its path (``gold_rule:``, ``--gold-rule``):
#: the field ``answer`` (the default) or ``gold``, the last ``\boxed{}`` of ``solution``
#: (``minerva``), or the ``final_answer`` list (``olympiadbench``).
GOLD_FILE_RULES = ("answer", "gold", "minerva", "olympiadbench")


def is_gold_file(value) -> bool:
    """Whether a ``gold:`` value names a question file (a JSON lines path: ``*.jsonl``,
    ``*.jsonl.gz``, ``*.json``) rather than a benchmark of the data manifest.
    """
    return isinstance(value, str) and value.lower().endswith((".jsonl", ".jsonl.gz", ".json",
                                                              ".ndjson"))
