"""leash_eval: the evaluation toolkit beside ``leash`` (arXiv 2507.14843v4's support analyses
run on your own generations).

``leash`` (the package the notebooks import) holds the metric core, the analyses, the paper's
numbers and the SIMULATED demo; this package holds everything that turns files and models into
the per-question summaries ``leash`` reads (:mod:`leash.summary`). Its layers, bottom up (the
import-linter contracts of ``pyproject.toml`` check them):

* reading: :mod:`.readers` (the registry of input formats), :mod:`.documents` (documents and
  archives read within bounds), the plug-in readers :mod:`.evaluators` (the evaluators' own
  files), :mod:`.harness_logs` (trainers' and harnesses' logs) and :mod:`.reasoning_gym_eval`,
  :mod:`.formats` (detection, the one rule set, DuckDB), :mod:`.validate`, :mod:`.summarize`;
  answers: :mod:`.answers`;
* data: :mod:`.manifest` (the data manifest and fetching);
* grading: :mod:`.cluster` (a Dask or Ray cluster), :mod:`.rescore` (math-verify, Reasoning Gym);
* generation: :mod:`.generate` (sampling and trace scoring on llama.cpp or vLLM);
* :mod:`.studies` (what ``leash``'s study files call), :mod:`.demo` (writing the SIMULATED
  demo), and :mod:`.cli`, the ``leash`` command.

It imports ``leash`` (the summary format, the metric core, the tables the CLI prints);
``leash`` imports it only through :func:`leash.sources.seam.toolkit`.
"""
