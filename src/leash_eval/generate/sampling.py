"""``leash generate``: k responses per question from a model, graded, as a canonical samples file.

The output is the canonical per-sample Parquet of ``data/README.md`` (``model, benchmark,
question_id, sample_idx, response, answer, correct, n_tokens, token_entropy, finish_reason``),
which every other command reads. ``n_tokens`` counts the generated tokens without the
end-of-generation token, and ``token_entropy`` is the mean over them of the entropy of the
distribution each was drawn from (:class:`leash_eval.generate.backends.Completion`); a response of
no
token has none. Responses are graded as ``leash rescore`` grades (:func:`leash_eval.rescore.
rescore`, math-verify against the gold answer).

A run is resumable: finished samples go, in groups of ``flush_every``, to part files beside the
output (``OUT.parts/``), each written whole or not at all; a rerun with the same settings
generates only the (question, sample) pairs no part holds, and the last step joins the parts
into ``OUT`` (in question order, then sample order) and removes them. Every sample is drawn from
its own seed (:func:`leash_eval.generate.backends.sample_seed`), so a resumed run writes exactly
what
an uninterrupted one would. The settings (sampling, prompt, backend and model) are in the
file's Parquet metadata under ``leash_eval.generate``; a rerun with other settings is refused.
"""

from __future__ import annotations

import fcntl
import json
import threading
from pathlib import Path

import numpy as np

from leash.errors import LeashValueError, Param
from leash.writing import open_lock, replacing
from leash_eval.generate.backends import DEFAULT_PROMPT, Backend, sample_seed

__all__ = ["generate", "check_settings", "read_questions", "write_parquet", "METADATA_KEY",
           "COLUMNS"]

METADATA_KEY = b"leash_eval.generate"
COLUMNS = ("model", "benchmark", "question_id", "sample_idx", "response", "answer", "correct",
           "n_tokens", "token_entropy", "finish_reason")
# the settings a resumed run must share with the samples already written (their key in the
# stored metadata: the keyword of generate that sets it; backend: the backend's name)
_SETTINGS = {"model": "label", "benchmark": "benchmark", "k": "k", "temperature": "temperature",
             "top_p": "top_p", "max_tokens": "max_tokens", "seed": "seed", "prompt": "prompt",
             "backend": "backend", "entropy_temperature": "entropy_temperature"}
#: The temperature of the token entropies when none is given: 1, the plain reading of the
#: paper's App. B.4 (arXiv 2507.14843v4), which does not say at which temperature Table 5's
#: token-level entropy is taken; "sampling" takes it at the sampling temperature instead.
ENTROPY_TEMPERATURE = 1.0


def read_questions(source: str):
    """Questions and gold answers: a benchmark of the data manifest (``math500``, ``aime24``,
    ...; :func:`leash_eval.rescore.load_benchmark`), a Reasoning Gym task (``gym:TASK`` or
    ``gym:TASK:SIZE``, SIZE questions of its dataset with seed 0, 100 by default; graded by the
    task's own scorer) or a JSONL file with ``question`` (or ``problem``) and ``gold`` (or
    ``answer``) per line.

    Returns
    -------
    (pandas.DataFrame, str)
        ``question_id, question, gold`` (for a Reasoning Gym task, ``gold`` holds each entry
        and ``attrs["task"]`` the task), and the benchmark label (the manifest's, the task's
        name, or the file's name without its suffixes).
    """
    import pandas as pd

    from leash_eval import rescore as rs
    from leash_eval.formats import json_records

    if source.startswith("gym:"):
        task, _, size = source[4:].partition(":")
        if not task or not (size.isdigit() and int(size) >= 1 if size else True):
            raise ValueError(f"The questions {source!r} must be gym:TASK or gym:TASK:SIZE "
                             "(SIZE an integer >= 1).")
        try:
            import reasoning_gym
        except ImportError:
            raise ValueError("Reasoning Gym questions need the reasoning-gym package: pip "
                             "install leash[gym].") from None
        try:
            ds = reasoning_gym.create_dataset(task, size=int(size or 100), seed=0)
        except (KeyError, ValueError) as exc:
            raise ValueError(f"The questions {source!r}: no Reasoning Gym task {task!r} "
                             f"({exc}).") from None
        entries = list(ds)
        frame = pd.DataFrame({"question_id": [f"{task}-{i}" for i in range(len(entries))],
                              "question": [e["question"] for e in entries], "gold": entries})
        frame.attrs["task"] = task
        return frame, task
    path = Path(source)
    if not path.is_file():
        ds = rs.question_dataset(source)
        if ds is None:
            raise ValueError(f"The questions {source!r} are neither a file nor a benchmark of "
                             f"the data manifest ({', '.join(sorted(rs.BENCHMARK_GOLD))}).")
        from leash_eval import manifest as mf

        return rs.load_benchmark(source), mf.load_manifest().datasets[ds].benchmark or ds
    first = next((rec for _, rec in json_records(path)), {})  # file and line in errors
    rule = "gold" if "gold" in first else "answer"
    return rs.read_benchmark(path, rule), path.name.split(".")[0]


def _parts_dir(out: Path) -> Path:
    return out.with_name(out.name + ".parts")


def _stored(paths) -> tuple[set, dict | None]:
    """(the (question_id, sample_idx) pairs of existing files, their settings)."""
    import pyarrow.parquet as pq

    done, settings = set(), None
    for p in paths:
        meta = pq.read_schema(p).metadata or {}
        if METADATA_KEY not in meta:
            raise ValueError(f"{p} was not written by leash generate (no '{METADATA_KEY.decode()}"
                             "' metadata); give another --out.")
        s = json.loads(meta[METADATA_KEY])["settings"]
        if settings is not None and s != settings:
            raise ValueError(f"{p} was written with other settings than the other parts.")
        settings = s
        t = pq.read_table(p, columns=["question_id", "sample_idx"]).to_pydict()
        done.update(zip(t["question_id"], t["sample_idx"]))
    return done, settings


def _check_resume(settings: dict, stored: dict | None, where: Path) -> None:
    if stored is None:
        return
    # a file written before entropy_temperature was recorded took the entropies at the
    # sampling temperature: resuming it at another one would mix two quantities
    stored = {"entropy_temperature": stored.get("temperature"), **stored}
    for key, keyword in _SETTINGS.items():
        if stored.get(key) != settings.get(key):
            raise LeashValueError(
                Param(keyword, value=settings.get(key)), f" differs from the "
                f"{stored.get(key)!r} of the samples already in {where}:", param=keyword,
                func="generate", value=settings.get(key), file=where, hint=(
                    "rerun with the same settings to continue, or write to another file (",
                    Param("out"), ")."))


def write_parquet(table, path: Path, meta: dict, key: bytes = METADATA_KEY) -> None:
    """Write ``table`` with ``meta`` (JSON) under ``key`` in its schema metadata as the Parquet
    file ``path``, whole or not at all (a temporary file, renamed).

    Parameters
    ----------
    table : pyarrow.Table
    path : pathlib.Path
    meta : dict
        JSON-serializable metadata (what a resumed run or a reader checks).
    key : bytes, default :data:`METADATA_KEY`
        The schema metadata key.
    """
    import pyarrow.parquet as pq

    with replacing(path) as tmp:
        pq.write_table(table.replace_schema_metadata({key: json.dumps(meta).encode()}), tmp)


def _table(rows: list[dict]):
    import pyarrow as pa

    schema = pa.schema([("model", pa.string()), ("benchmark", pa.string()),
                        ("question_id", pa.string()), ("sample_idx", pa.int64()),
                        ("response", pa.string()), ("answer", pa.string()),
                        ("correct", pa.bool_()), ("n_tokens", pa.int64()),
                        ("token_entropy", pa.float64()), ("finish_reason", pa.string())])
    return pa.Table.from_pylist(rows, schema=schema)


def _graded(rows: list[dict], gold: dict, task=None) -> list[dict]:
    import pandas as pd

    from leash_eval.rescore import rescore

    kw = {"scorer": "reasoning-gym", "task": task} if task else {}
    res = rescore(pd.DataFrame(rows), gold, jobs=1, **kw).samples
    answers = res["answer"].astype(object).where(res["answer"].notna(), None)
    for r, ok, ans in zip(rows, res["correct"].tolist(), answers.tolist()):
        r["correct"], r["answer"] = bool(ok), ans
    return rows


def entropy_temperature_of(entropy_temperature, temperature) -> float:
    """The temperature the token entropies are taken at: ``entropy_temperature`` (a number
    > 0), or ``temperature`` for ``"sampling"``.

    Examples
    --------
    >>> entropy_temperature_of(1.0, 0.6), entropy_temperature_of("sampling", 0.6)
    (1.0, 0.6)
    """
    return float(temperature if entropy_temperature == "sampling" else entropy_temperature)


def check_settings(*, k, temperature, top_p, max_tokens, seed, flush_every, prompt,
                   entropy_temperature=ENTROPY_TEMPERATURE) -> None:
    """The settings of :func:`generate`, checked (a ValueError naming the first bad one), so a
    caller can check them before loading a model.
    """
    for name, value, ok, rule in (
            ("entropy_temperature", entropy_temperature, entropy_temperature == "sampling" or (
                isinstance(entropy_temperature, (int, float))
                and 0 < entropy_temperature < float("inf")), 'a number > 0 or "sampling"'),
            ("k", k, isinstance(k, int) and k >= 1, "an int >= 1"),
            ("temperature", temperature, isinstance(temperature, (int, float)) and
             0 < temperature < float("inf"), "a number > 0"),
            ("top_p", top_p, isinstance(top_p, (int, float)) and 0 < top_p <= 1, "in (0, 1]"),
            ("max_tokens", max_tokens, isinstance(max_tokens, int) and max_tokens >= 1,
             "an int >= 1"),
            ("seed", seed, isinstance(seed, int) and seed >= 0, "an int >= 0"),
            ("flush_every", flush_every, isinstance(flush_every, int) and flush_every >= 1,
             "an int >= 1"),
            ("prompt", prompt, isinstance(prompt, str) and "{question}" in prompt
             and _formats(prompt), "a string with {question} and no other {field} (a literal "
             "brace doubled: {{ }}), as str.format takes it")):
        if isinstance(value, bool) or not ok:
            raise LeashValueError(param=name, func="generate", value=value, constraint=rule)


def _formats(prompt: str) -> bool:
    """Whether ``prompt.format(question=...)`` works: a trial format, so that ``{0}`` or a
    lone brace is refused here, not at the first question after the model loaded.
    """
    try:
        prompt.format(question="2 + 2?")
    except (KeyError, IndexError, ValueError, AttributeError):
        return False
    return True


def generate(backend: Backend, questions, out, *, label: str, benchmark: str, k: int,
             temperature: float = 1.0, top_p: float = 1.0, max_tokens: int = 1024,
             seed: int = 0, prompt: str = DEFAULT_PROMPT, flush_every: int = 64,
             progress: bool = False, limit: int | None = None,
             cluster: str | None = None,
             entropy_temperature: float | str = ENTROPY_TEMPERATURE) -> dict:
    """Sample ``k`` responses per question, grade them and write the samples file ``out``.

    Parameters
    ----------
    backend : Backend
        The model (:func:`leash_eval.generate.backends.open_backend`).
    questions : pandas.DataFrame, shape (n_questions, 3)
        ``question_id, question, gold`` (:func:`read_questions`).
    out : str or os.PathLike
        The Parquet file to write (its parts folder ``OUT.parts`` holds a run in progress).
    label, benchmark : str
        The ``model`` and ``benchmark`` labels of the rows.
    k : int
        Samples per question (``sample_idx`` 0..k-1).
    temperature : float, default 1.0
        > 0, the sampling temperature.
    top_p : float, default 1.0
        In (0, 1]: sample among the most probable tokens whose mass reaches it (after the
        temperature).
    max_tokens : int, default 1024
        Tokens per response at most (``finish_reason`` "length" when reached).
    seed : int, default 0
        The run's seed; sample i of question q is drawn from ``sample_seed(seed, q, i)``.
    prompt : str, default :data:`~leash_eval.generate.backends.DEFAULT_PROMPT`
        The user message, with ``{question}`` for the question; the model's chat template wraps
        it.
    flush_every : int, default 64
        Samples per part file: at most this many are generated again after an interruption.
    progress : bool, default False
        A tqdm progress bar on stderr.
    limit : int, optional
        Generate at most this many new samples, then stop with the run unfinished (for tests
        and for spreading a run over sessions); None: all.
    cluster : str, optional
        The address of a cluster (:mod:`leash_eval.cluster`): a Dask scheduler (``pip install
        leash[cluster]``), or ``"ray"`` / ``"ray://HOST:10001"`` (``pip install leash[ray]``):
        chunks of ``flush_every`` samples are generated by its workers (each opens the model
        once, from the backend's ``spec``: the model file must be at the same path there),
        graded and written here in order; every sample has its own seed, so the file is the
        local run's.
    entropy_temperature : float or "sampling", default :data:`ENTROPY_TEMPERATURE` (1.0)
        The temperature T of the token entropies, softmax(logits / T) over the whole vocabulary
        (before top-p): 1, the plain reading of App. B.4, which does not say; ``"sampling"``:
        ``temperature``. Recorded in the file's metadata (``settings.entropy_temperature``).

    Returns
    -------
    dict
        ``samples`` (in the file), ``generated`` (by this call), ``resumed`` (found done),
        ``finished`` (the output file is complete), ``tokens`` (generated by this call).
    """
    check_settings(k=k, temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed,
                   flush_every=flush_every, prompt=prompt,
                   entropy_temperature=entropy_temperature)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open_lock(out.with_name(out.name + ".lock")) as lock:
        # one run at a time per output: a second one waits, then resumes what the first left
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _generate(backend, questions, out, label=label, benchmark=benchmark, k=k,
                         temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed,
                         prompt=prompt, flush_every=flush_every, progress=progress, limit=limit,
                         cluster=cluster,
                         entropy_temperature=entropy_temperature_of(entropy_temperature,
                                                                    temperature))


def _generate(backend, questions, out: Path, *, label, benchmark, k, temperature, top_p,
              max_tokens, seed, prompt, flush_every, progress, limit, cluster,
              entropy_temperature) -> dict:
    from leash_eval.rescore.execution import progress_bar

    parts = _parts_dir(out)
    settings = {"model": label, "benchmark": benchmark, "k": k, "temperature": float(temperature),
                "top_p": float(top_p), "max_tokens": max_tokens, "seed": seed,
                "prompt": prompt, **{f"backend_{a}": b for a, b in backend.describe().items()},
                "backend": backend.describe()["backend"],
                "entropy_temperature": entropy_temperature}
    meta = {"settings": settings, "entropy": f"{backend.entropy_source}, softmax(logits / "
            f"{entropy_temperature:g}) (entropy_temperature; the sampling temperature is "
            f"{float(temperature):g}), nats, mean over the generated tokens (end-of-generation "
            "token excluded)", "n_questions": len(questions)}
    existing = sorted(parts.glob("part-*.parquet")) if parts.is_dir() else []
    done, stored = _stored(existing + ([out] if out.is_file() else []))
    _check_resume(settings, stored, out if out.is_file() else parts)
    qids = [str(q) for q in questions["question_id"]]
    task = questions.attrs.get("task")  # a Reasoning Gym task: its entries are the golds
    gold = dict(zip(qids, questions["gold"] if task else questions["gold"].astype(str)))
    todo = [(i, q, s) for i, q in enumerate(qids) for s in range(k) if (q, s) not in done]
    resumed = len(qids) * k - len(todo)
    todo = todo[:limit] if limit is not None else todo
    texts = dict(zip(qids, questions["question"].astype(str)))
    params = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
              "entropy_temperature": entropy_temperature}
    chunks = [[(q, s, sample_seed(seed, q, s)) for _, q, s in todo[i:i + flush_every]]
              for i in range(0, len(todo), flush_every)]
    tokens, n_parts = 0, len(existing)
    with progress_bar(progress, "generate", total=len(todo)) as bar:
        for chunk, done_rows in zip(chunks, _sampled(backend, chunks, texts, prompt, params,
                                                    cluster)):
            rows = [{"model": label, "benchmark": benchmark, "question_id": q,
                     "sample_idx": s, **r} for (q, s, _), r in zip(chunk, done_rows)]
            tokens += sum(r["n_tokens"] for r in rows)
            parts.mkdir(parents=True, exist_ok=True)
            n_parts += 1
            write_parquet(_table(_graded(rows, gold, task)),
                          parts / f"part-{n_parts:06d}.parquet", meta)
            bar.update(len(rows))
    left = len(qids) * k - resumed - len(todo)
    if left == 0:
        _join(out, parts, qids, meta)
    return {"samples": len(qids) * k - left, "generated": len(todo), "resumed": resumed,
            "finished": left == 0, "tokens": tokens}


def _row(c) -> dict:
    """The columns of a samples file that one completion gives."""
    return {"response": c.text, "n_tokens": len(c.token_ids),
            "token_entropy": float(np.mean(c.entropy)) if len(c.entropy) else None,
            "finish_reason": c.finish_reason}


def _sample_chunk(backend, chunk, prompts: dict, params: dict) -> list[dict]:
    """The rows of one chunk of ``(question_id, sample_idx, seed)``: one prompt at a time."""
    return [_row(backend.sample(prompts[q], seed=sd, **params)) for q, _, sd in chunk]


_WORKER = threading.local()  # a cluster worker thread's backend: (spec, backend)


def _remote_chunk(spec: tuple, params: dict, job) -> list[dict]:
    """:func:`_sample_chunk` of ``job = (chunk, prompts)`` on a cluster worker: each worker
    thread (Dask) or process (Ray) opens the model once.
    """
    from leash_eval.generate.backends import open_backend

    chunk, prompts = job
    held = getattr(_WORKER, "held", None)
    if held is None or held[0] != spec:
        _WORKER.held = held = (spec, open_backend(spec[0], spec[1], **dict(spec[2])))
    return _sample_chunk(held[1], chunk, prompts, params)


def _sampled(backend, chunks, texts: dict, prompt: str, params: dict, cluster):
    """The rows of each chunk, in order: here, or on the cluster at ``cluster`` (Dask or Ray,
    :mod:`leash_eval.cluster`) with at most two chunks per slot in flight (every sample has
    its own seed, so the rows are the same).
    """
    def prompts_of(chunk):
        return {q: backend.prompt(prompt.format(question=texts[q])) for q, _, _ in chunk}

    if cluster is None:
        for chunk in chunks:
            yield _sample_chunk(backend, chunk, prompts_of(chunk), params)
        return
    spec = getattr(backend, "spec", None)
    if spec is None:
        raise LeashValueError(Param("cluster", func="generate"), " needs a backend that a "
                              "worker can open again (leash_eval.generate.backends.open_backend).")
    from leash_eval.cluster import connected

    with connected(cluster) as on:
        items = ((chunk, (chunk, prompts_of(chunk))) for chunk in chunks)
        for _, rows in on.in_order(_remote_chunk, items, spec, params, name=_chunk_name):
            yield rows


def _chunk_name(chunk) -> str:
    """A chunk of :func:`_sampled` in a message: its first and last sample."""
    (q0, s0, _), (q1, s1, _) = chunk[0], chunk[-1]
    return (f"the chunk of samples from question {q0!r}, sample {s0} to question {q1!r}, "
            f"sample {s1}")


def _join(out: Path, parts: Path, qids: list, meta: dict) -> None:
    """The parts (and an earlier output) as ``out``, in question then sample order."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = sorted(parts.glob("part-*.parquet")) if parts.is_dir() else []
    if not files:
        return
    tables = [pq.read_table(p) for p in files + ([out] if out.is_file() else [])]
    t = pa.concat_tables([x.replace_schema_metadata(None) for x in tables])
    order = {q: i for i, q in enumerate(qids)}
    rank = pa.array([order[q] for q in t.column("question_id").to_pylist()], pa.int64())
    t = t.append_column("_q", rank).sort_by([("_q", "ascending"), ("sample_idx", "ascending")])
    t = t.drop_columns(["_q"])
    dup = pc.count_distinct(pc.binary_join_element_wise(
        t.column("question_id"), pc.cast(t.column("sample_idx"), pa.string()), "\x00"))
    if dup.as_py() != t.num_rows:
        raise ValueError(f"{parts}: a (question_id, sample_idx) pair is in two parts; remove "
                         "the folder and run again.")
    write_parquet(t, out, meta)
    for p in files:
        p.unlink()
    for p in parts.glob("*.tmp"):  # what a killed run was writing: never read, now garbage
        p.unlink()
    parts.rmdir()
