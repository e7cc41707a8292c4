"""Which encoder class serves a model id: GGUF embedders on torch (``models.nomic_torch``) or
llama.cpp (``models.llama_encoder``), chosen by ``backend``; everything else on torch/onnxruntime
(``models.encoders``). Retrievers build encoders here."""

from __future__ import annotations

import functools

from grainlab.models.catalogue import GGUF_EMBEDDERS, gguf_model_id, is_gguf_embedder
from grainlab.models.encoders import Encoder, max_positions

GGUF_BACKENDS = ("auto", "llama.cpp", "torch")


AUTO_GGUF_BACKEND = {"cpu": "torch", "cuda": "torch"}
"""The faster runtime per device: on CPU torch reads nomic's token states 2.0–2.4× faster than
llama.cpp's f16 GGUF (``benchmarks/bench_nomic_backends.py``: 486 vs 206 tokens/s at 2,048-token
windows on a 2-core AVX-512 EPYC); on CUDA only torch runs (xllamacpp's wheel is a CPU build)."""


def gguf_backend(device: str | None = None, backend: str = "auto") -> str:
    """The runtime of a GGUF embedder: as asked, or for ``auto`` the faster one on the device
    (:data:`AUTO_GGUF_BACKEND`)."""
    from grainlab import settings
    from grainlab.errors import ConfigError

    if backend not in GGUF_BACKENDS:
        raise ConfigError(f"encoder backend {backend!r}: choose one of {', '.join(GGUF_BACKENDS)}")
    if backend != "auto":
        return backend
    return AUTO_GGUF_BACKEND["cuda" if settings.torch_device(device).startswith("cuda") else "cpu"]


@functools.lru_cache(maxsize=8)
def load_encoder(model_id: str, max_length: int | None = None, batch_size: int = 32,
                 device: str | None = None, dimension: int | None = None, backend: str = "auto") -> Encoder:
    """An encoder for ``model_id``; ``dimension`` (a Matryoshka size) only for models that have them;
    ``backend`` chooses a GGUF embedder's runtime (:func:`gguf_backend`: ``llama.cpp`` or ``torch``,
    the same weights through transformers' own architecture). One encoder per configuration in a
    process: the systems of a run share its loaded model."""
    from grainlab.errors import ConfigError
    from grainlab.models.llama_encoder import LlamaEncoder

    if is_gguf_embedder(model_id):
        if gguf_backend(device, backend) == "torch":
            from grainlab.models.nomic_torch import TorchNomicEncoder

            return TorchNomicEncoder(model_id, max_length=max_length, batch_size=min(batch_size, 8), device=device,
                                     dimension=dimension)
        return LlamaEncoder(model_id, max_length=max_length, batch_size=batch_size, device=device, dimension=dimension)
    if backend not in ("auto", "torch"):
        raise ConfigError(f"{model_id} runs on torch or onnxruntime (its resolved copy decides); backend={backend!r} "
                          "is for GGUF embedders")
    if dimension is not None:
        raise ConfigError(f"{model_id} has no Matryoshka dimensions; leave dimension unset")
    return Encoder(model_id, device=device, batch_size=batch_size, max_length=max_length)


def context_length(model_id: str) -> int:
    """Tokens a model reads in one pass: a GGUF embedder's trained context, else its positions."""
    preset = GGUF_EMBEDDERS.get(gguf_model_id(model_id))
    return preset.context if preset else max_positions(model_id)
