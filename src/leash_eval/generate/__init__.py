"""From a model to the samples files: sampling with per-token entropies (:mod:`.sampling`) and
teacher-forced scoring of reference traces (:mod:`.traces`) on one backend interface
(:mod:`.backends`: llama.cpp on CPUs, vLLM on GPUs).
"""
