"""Embeddings through the artifact cache: computed once per encoder identity and text list, serially
or in shards on Ray workers (``models.sharded``), and read back from the same key either way."""

from __future__ import annotations

import numpy as np

from grainlab.cache import ArtifactCache
from grainlab.models.encoders import Encoder, embedding_key
from grainlab.models.sharded import encode_on_ray, ray_encoding_requested


def cached_encode(encoder: Encoder, texts: list[str], role: str = "passage", cache: ArtifactCache | None = None) -> np.ndarray:
    """``encode_passages``/``encode_queries`` through the artifact cache, keyed by the encoder's
    identity (model, revision, backend, pooling, length) and the texts in order; with
    ``$GRAINLAB_RAY`` set, a large corpus is encoded in shards on Ray (``models.sharded``)."""
    key = embedding_key(encoder, texts, role)
    cache = cache or ArtifactCache()
    if ray_encoding_requested(texts, role, encoder.batch_size):  # $GRAINLAB_RAY: shards on Ray workers
        return encode_on_ray(encoder, texts, role, cache)
    encode = encoder.encode_queries if role == "query" else encoder.encode_passages
    return cache.array("embeddings", key, lambda: encode(texts))
