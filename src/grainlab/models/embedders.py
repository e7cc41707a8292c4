"""Which encoder class serves a model id: GGUF embedders on llama.cpp (``models.llama_encoder``),
everything else on torch/onnxruntime (``models.encoders``). Retrievers build encoders here."""

from __future__ import annotations

from grainlab.models.encoders import Encoder, max_positions


def load_encoder(model_id: str, max_length: int | None = None, batch_size: int = 32,
                 device: str | None = None, dimension: int | None = None) -> Encoder:
    """An encoder for ``model_id``; ``dimension`` (a Matryoshka size) only for models that have them."""
    from grainlab.models.llama_encoder import LlamaEncoder, is_gguf_embedder

    if is_gguf_embedder(model_id):
        return LlamaEncoder(model_id, max_length=max_length, batch_size=batch_size, device=device, dimension=dimension)
    if dimension is not None:
        from grainlab.errors import ConfigError

        raise ConfigError(f"{model_id} has no Matryoshka dimensions; leave dimension unset")
    return Encoder(model_id, device=device, batch_size=batch_size, max_length=max_length)


def context_length(model_id: str) -> int:
    """Tokens a model reads in one pass: a GGUF embedder's trained context, else its positions."""
    from grainlab.models.gguf import gguf_model_id
    from grainlab.models.llama_encoder import GGUF_EMBEDDERS

    preset = GGUF_EMBEDDERS.get(gguf_model_id(model_id))
    return preset.context if preset else max_positions(model_id)
