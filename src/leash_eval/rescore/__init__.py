r"""Recompute per-sample correctness from response texts and gold answers.

Two scorers:

``"math-verify"`` (optional extra ``pip install math-verify``)
    ``correct = verify(parse(gold), parse(response))`` with HuggingFace math-verify, gold first
    (its ``verify`` is not symmetric). A gold answer without math delimiters is wrapped as
    ``$gold$`` before parsing. With ``extract="math-verify"`` (default) the full response is
    given to ``parse``, i.e. math-verify's own answer extraction (last ``\boxed{}`` first, then
    other LaTeX/plain expressions), which is how the library is meant to be used and what
    Lighteval does; with ``extract="leash"`` the answer is first extracted with
    :func:`leash_eval.answers.extract_answer` in its default order (:data:`leash_eval.answers.
    MATH_METHODS`: ``<answer>`` tag, last ``\boxed{}``, ``#### X``, "The answer is X", the last
    number) and parsed as ``$answer$``.
``"reasoning-gym"`` (optional extra ``pip install reasoning-gym``)
    The task's own scorer, ``dataset.score_answer(answer, entry)``, on the answer extracted with
    :data:`leash_eval.answers.REASONING_GYM_METHODS` (``<answer>`` tag, then last ``\boxed{}``, then
    the text after ``</think>``: the paper's hierarchy, App. B.3). Reasoning Gym gives partial
    credit (e.g. 0.01 for a wrong but well-formed answer, or ``len(gold)/len(answer)`` when the
    gold is a substring); a sample counts as correct **only at full credit**, ``score == 1.0``.
    With ``extract="reasoning-gym"`` (``leash rescore --extract reasoning-gym``) the answer is
    first rewritten by the paper's task-specific rules (App. B.3: dice fractions, prime
    factorization ``\times``, palindrome blanks, advanced_geometry LaTeX to a float,
    power_function e-notation, arc_1d, boxnet; :mod:`leash_eval.gym_answers`); otherwise it is
    graded as extracted.

A response from which the grading extractor gets no answer is wrong and counted
(``n_no_answer``). A timeout is not a verdict. math-verify's limits are wall-clock seconds, which
a machine busy with other processes spends where an idle one does not, so leash limits each
parse and comparison in CPU time instead (5 s, math-verify's default; the verdicts of a loaded
machine are an idle one's); a response whose parse or comparison, or whose gold answer's parse,
times out is graded again with a longer limit (``n_timeouts`` counts them), and one that times
out again has no verdict: ``correct`` is empty and ``timeout`` true in the output
(``n_unresolved``), which the summary refuses unless told otherwise (``on_timeout``). A gold
parse is cached only once it finished, never from a timeout. math-verify's warning, which prints
the whole response, is kept off the terminal. The ``answer`` column is leash's extraction,
normalized (:func:`leash_eval.answers.normalize_answer`), with either extractor: the answer as the
model wrote it, which answer entropy (Table 5) counts.

:func:`rescore` grades a DataFrame in memory; :func:`rescore_file` (and ``leash rescore``) reads
a file in batches (:func:`leash_eval.formats.response_batches`) and writes the rescored samples
batch
by batch. Both grade with one per-batch function, here (``jobs=1``) or in ``jobs`` worker
processes with at most ``2 * jobs`` batches in flight, so memory is bounded by the batch size
times the jobs, never by the file; results come back in input order, so the output does not
depend on ``jobs``. A parse is timed out by a signal (a CPU-time timer), which works only in the
main thread of a process: workers grade in their main thread, and a caller outside the main
thread is served by a worker. Workers (a pebble process pool) start from a fork server that
imported math-verify once, ignore Ctrl-C (the parent stops them: ``leash rescore`` says
"interrupted", exit 130; SIGTERM "terminated", 143) and end with the parent, even a parent killed
with SIGKILL. With the default ``jobs`` of ``leash rescore`` batches are graded here, and workers
start (in the background, grading going on here) only once that took longer than starting them,
so a small input never pays their start-up, and only on cores the machine leaves idle (none when
this process got less than a whole core), so they never cost CPU without gaining time.
:func:`rescored_path` caches a rescored file under ``build/rescored/`` for study files.

Benchmark question files (:func:`load_benchmark`) come from the data manifest; their question
ids follow the Qwen2.5-Math evaluator: the file's ``idx`` field, else the 0-based row position.

The package, each module importing only those after it: :mod:`~leash_eval.rescore.stream`
(:func:`rescore`, :func:`rescore_file`, :func:`rescored_path`: frames and files in, rescored
samples out), :mod:`~leash_eval.rescore.execution` (where batches are graded: here, worker
processes, a Dask or Ray cluster), :mod:`~leash_eval.rescore.graders` (one batch, math-verify or
Reasoning Gym) and :mod:`~leash_eval.rescore.gold` (question files and gold answers).
"""

from leash_eval.rescore.execution import default_jobs
from leash_eval.rescore.gold import (
    BENCHMARK_GOLD,
    GOLD_RULES,
    MissingGoldError,
    gold_from_frame,
    load_benchmark,
    question_dataset,
    read_benchmark,
)
from leash_eval.rescore.graders import verify_response
from leash_eval.rescore.stream import (
    CACHE_DIR,
    OUTPUT_SCHEMA,
    RescoreReport,
    RescoreResult,
    read_responses,
    rescore,
    rescore_file,
    rescore_inputs,
    rescored_path,
)

__all__ = ["GOLD_RULES", "BENCHMARK_GOLD", "CACHE_DIR", "OUTPUT_SCHEMA",
           "MissingGoldError", "RescoreReport", "RescoreResult", "default_jobs", "gold_from_frame",
           "load_benchmark", "question_dataset", "read_benchmark", "read_responses", "rescore",
           "rescore_file", "rescore_inputs", "rescored_path", "verify_response"]
