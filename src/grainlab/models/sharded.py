"""Corpus encoding in shards on Ray workers, resumable through the content-addressed cache.

Why actors and explicit shards rather than Ray Data ``map_batches``: each worker loads its model
once (an actor per CPU slot or GPU), and the driver decides the shards. A shard is a run of the
serial encoder's own length-sorted batches, so every text is padded with the same neighbours as
in ``Encoder.encode``, and each actor computes with the driver's torch thread count, so the
assembled matrix is the serial one up to rounding (``experiments.agreement``). Each finished shard is written to the cache at once under its own
content key, so a run that dies — a worker killed, the driver interrupted — resumes with the
shards still missing; a killed actor is restarted and its shard retried. The driver writes every
file, so workers need no shared disk. The assembled matrix is stored under the same key as the
serial ``cached_encode``, so retrievers find it whichever way it was computed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from tqdm.auto import tqdm

from grainlab.cache import ArtifactCache, content_key, hash_texts
from grainlab.errors import ConfigError
from grainlab.models.catalogue import is_gguf_embedder
from grainlab.models.encoders import Encoder, EncoderConfig, embedding_key
from grainlab.models.threads import torch_threads

SHARD_BATCHES = 32  # serial batches per shard: 1,024 texts at batch size 32


def shard_plan(texts: list[str], prefix: str, batch_size: int, shard_batches: int) -> list[np.ndarray]:
    """Text indices per shard: the serial encoder's length-sorted order cut every
    ``batch_size × shard_batches`` texts (so shards are whole serial batches)."""
    if batch_size < 1 or shard_batches < 1:
        raise ConfigError(f"batch_size and shard_batches must be ≥ 1, got {batch_size}, {shard_batches}")
    order = np.argsort([-len(prefix + t) for t in texts], kind="stable")
    size = batch_size * shard_batches
    return [order[start:start + size] for start in range(0, len(order), size)]


def shard_key(encoder: Encoder, texts: list[str], role: str) -> str:
    return content_key(kind="embedding-shard", role=role, encoder=encoder.identity, batch_size=encoder.batch_size,
                       texts=hash_texts((str(i), t) for i, t in enumerate(texts)))


class EncoderWorker:
    """A Ray actor holding one encoder (its model loaded once)."""

    def __init__(self, model_id: str, config: EncoderConfig, batch_size: int, dimension: int | None = None,
                 threads: int | None = None, backend: str = "auto") -> None:
        from grainlab.models.embedders import load_encoder
        from grainlab.models.threads import pin_threads

        pin_threads(threads)  # the driver's split of each matrix product, not Ray's one thread

        self.encoder = load_encoder(model_id, max_length=config.max_length, batch_size=batch_size, dimension=dimension,
                                    backend=backend) if is_gguf_embedder(model_id) \
            else Encoder(model_id, config=config, batch_size=batch_size)

    def encode(self, shard: int, texts: list[str], prefix: str) -> tuple[int, np.ndarray]:
        return shard, self.encoder.encode(texts, prefix, progress=False)

    def pid(self) -> int:
        import os

        return os.getpid()


def encode_on_ray(encoder: Encoder, texts: list[str], role: str = "passage", cache: ArtifactCache | None = None, *,
                  workers: int | None = None, shard_batches: int = SHARD_BATCHES, gpus_per_worker: float | None = None,
                  on_shard: Callable[[int], None] | None = None, name: str | None = None) -> np.ndarray:
    """``cached_encode(encoder, texts, role, cache)``, computed in shards on Ray actors.

    Args:
        encoder: the driver's encoder (its identity keys the cache; workers build the same one).
        workers: actors to start (default: the cluster's GPUs when it has any, else its CPUs).
        shard_batches: serial batches per shard (a shard is the unit of work and of resuming).
        gpus_per_worker: GPUs each actor takes (default 1 when the cluster has GPUs, else 0).
        on_shard: called with each shard's index once it is computed and saved.
        name: when given, actors are named ``<name>-<i>`` in the ``grainlab`` namespace (to find them).
    """
    from grainlab.distributed import connect, ray_requested

    cache = cache or ArtifactCache()
    full_key = embedding_key(encoder, texts, role)
    done = cache.load_array("embeddings", full_key)
    if done is not None:
        return done
    prefix = encoder.config.query_prefix if role == "query" else encoder.config.passage_prefix
    plan = shard_plan(texts, prefix, encoder.batch_size, shard_batches)
    keys = [shard_key(encoder, [texts[i] for i in shard], role) for shard in plan]
    out: np.ndarray | None = None
    missing = []
    for number, (shard, key) in enumerate(zip(plan, keys)):
        found = cache.load_array("embedding-shard", key)
        if found is None:
            missing.append(number)
            continue
        out = out if out is not None else np.zeros((len(texts), found.shape[1]), dtype=np.float32)
        out[shard] = found
    if missing:
        ray = connect(ray_requested() or "auto")  # the cluster $GRAINLAB_RAY names (or ray.init()'s choice)
        resources = ray.cluster_resources()
        gpus = gpus_per_worker if gpus_per_worker is not None else (1.0 if resources.get("GPU", 0) >= 1 else 0.0)
        count = workers or int(resources.get("GPU", 0) // gpus if gpus else max(1, resources.get("CPU", 1)))
        count = max(1, min(count, len(missing)))
        threads = torch_threads()
        actor = ray.remote(EncoderWorker)
        options = {"num_cpus": 1, "num_gpus": gpus, "max_restarts": 3, "max_task_retries": 3, "namespace": "grainlab"}
        actors = [actor.options(**options, **({"name": f"{name}-{i}"} if name else {})).remote(
            encoder.model_id, encoder.config, encoder.batch_size, getattr(encoder, "dimension", None), threads,
            str(encoder.identity.get("backend", "auto")) if encoder.identity.get("backend") in ("torch", "llama.cpp")
            else "auto")
            for i in range(count)]
        pool = ray.util.ActorPool(actors)
        work = [(number, [texts[i] for i in plan[number]]) for number in missing]
        results = pool.map_unordered(lambda a, item: a.encode.remote(item[0], item[1], prefix), work)
        try:
            for number, vectors in tqdm(results, total=len(work), desc=f"encode on Ray ({count} workers)",
                                        unit="shard"):
                cache.save_array("embedding-shard", keys[number], vectors)
                out = out if out is not None else np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                out[plan[number]] = vectors
                if on_shard is not None:
                    on_shard(number)
        finally:
            for handle in actors:
                ray.kill(handle)
    assert out is not None or not texts
    result = out if out is not None else np.zeros((0, 0), dtype=np.float32)
    cache.save_array("embeddings", full_key, result)
    return result


def ray_encoding_requested(texts: list[str], role: str, batch_size: int) -> bool:
    """Whether ``cached_encode`` hands ``texts`` to Ray: it was asked for (``$GRAINLAB_RAY``) and
    they are passages enough for two shards."""
    from grainlab.distributed import ray_requested

    return ray_requested() is not None and role == "passage" and len(texts) >= 2 * batch_size * SHARD_BATCHES
