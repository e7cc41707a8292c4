"""nomic-embed-text-v1.5 on torch: transformers' native ``NomicBert`` built from the publisher's GGUF.

A second runtime for the same weights, independent of llama.cpp's forward pass, so the two can be
checked against each other (issue 37: long late chunking's result rests on nomic's token states
deep in a 2,048-token window). No other copy of the weights exists offline, so the model is built
from the GGUF grainlab already verifies by SHA-256, read with the ``gguf`` package:

- **Architecture** from the GGUF's metadata (``nomic-bert.*``: layers, width, heads, feed-forward
  width, layer-norm epsilon, rotary base, trained context) into a ``NomicBertConfig``; SwiGLU
  (``silu``), rotary position embeddings in the rotate-half (GPT-NeoX) layout, post-layer norms.
- **Weights** (f16 in the file, float32 here): ``token_embd`` → word embeddings, ``token_types`` →
  token-type embeddings, ``token_embd_norm`` → the embedding layer norm; per block the fused
  ``attn_qkv`` split into query, key and value (in that order), ``attn_output``, ``ffn_gate`` /
  ``ffn_up`` / ``ffn_down`` and the two post-norms. ggml stores a matrix as [in, out]; the reader
  returns it as torch's [out, in]. Every parameter of the model is filled (a missing or unexpected
  tensor is an error).
- **Everything else** is the llama.cpp encoder's: the GGUF's own WordPiece tokenizer, the task
  prefixes and context (:data:`~grainlab.models.catalogue.GGUF_EMBEDDERS`), mean pooling and
  the Matryoshka rule — so the two backends differ only in the forward pass.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from grainlab import settings
from grainlab.cache import code_fingerprint
from grainlab.errors import ConfigError
from grainlab.models.catalogue import GGUF_EMBEDDERS, gguf_model_id
from grainlab.models.encoders import Encoder, EncoderConfig
from grainlab.models.gguf import GGUFFile, gguf_file
from grainlab.models.llama_encoder import LlamaEncoder, gguf_tokenizer

NOMIC_TORCH_CODE_VERSION = code_fingerprint("models.nomic_torch")
NOMIC_TORCH_VERSION = "1"  # bump when the same GGUF would give other vectors (results keys)
ARCHITECTURE = "nomic-bert"


def _metadata(reader: Any, key: str) -> Any:
    field = reader.fields[key]
    value = field.parts[field.data[0]]
    return bytes(value).decode("utf-8") if field.types[0].name == "STRING" else value.tolist()[0]


def nomic_config(path: Path) -> Any:
    """A ``NomicBertConfig`` from the GGUF's ``nomic-bert.*`` metadata."""
    from gguf import GGUFReader
    from transformers import NomicBertConfig

    reader = GGUFReader(str(path))
    architecture = _metadata(reader, "general.architecture")
    if architecture != ARCHITECTURE:
        raise ConfigError(f"{path.name}: a {architecture!r} GGUF, not {ARCHITECTURE!r}")
    if _metadata(reader, f"{ARCHITECTURE}.attention.causal"):
        raise ConfigError(f"{path.name}: a causal nomic-bert; the encoder is bidirectional")
    width, heads = _metadata(reader, f"{ARCHITECTURE}.embedding_length"), _metadata(reader, f"{ARCHITECTURE}.attention.head_count")
    return NomicBertConfig(
        vocab_size=len(reader.fields["tokenizer.ggml.tokens"].data), hidden_size=width,
        num_hidden_layers=_metadata(reader, f"{ARCHITECTURE}.block_count"), num_attention_heads=heads,
        intermediate_size=_metadata(reader, f"{ARCHITECTURE}.feed_forward_length"), hidden_act="silu",
        max_position_embeddings=_metadata(reader, f"{ARCHITECTURE}.context_length"),
        layer_norm_eps=float(_metadata(reader, f"{ARCHITECTURE}.attention.layer_norm_epsilon")),
        pad_token_id=_metadata(reader, "tokenizer.ggml.padding_token_id"), type_vocab_size=2,
        rope_parameters={"rope_type": "default", "rope_theta": float(_metadata(reader, f"{ARCHITECTURE}.rope.freq_base"))})


def _tensor(data: Any) -> Any:
    import torch

    return torch.from_numpy(np.asarray(data, dtype=np.float32).copy())


def nomic_state_dict(path: Path, layers: int) -> dict[str, Any]:
    """The GGUF's tensors under ``NomicBertModel``'s parameter names (float32)."""
    from gguf import GGUFReader

    tensors = {t.name: t.data for t in GGUFReader(str(path)).tensors}
    state = {"embeddings.word_embeddings.weight": _tensor(tensors.pop("token_embd.weight")),
             "embeddings.token_type_embeddings.weight": _tensor(tensors.pop("token_types.weight")),
             "embeddings.LayerNorm.weight": _tensor(tensors.pop("token_embd_norm.weight")),
             "embeddings.LayerNorm.bias": _tensor(tensors.pop("token_embd_norm.bias"))}
    for i in range(layers):
        block, layer = f"blk.{i}.", f"layers.{i}."
        q, k, v = _tensor(tensors.pop(block + "attn_qkv.weight")).chunk(3, dim=0)
        state.update({layer + "self_attn.q_proj.weight": q, layer + "self_attn.k_proj.weight": k,
                      layer + "self_attn.v_proj.weight": v})
        names = {"attn_output.weight": "self_attn.o_proj.weight", "ffn_gate.weight": "mlp.gate_proj.weight",
                 "ffn_up.weight": "mlp.up_proj.weight", "ffn_down.weight": "mlp.down_proj.weight",
                 "attn_output_norm.weight": "post_attention_layernorm.weight",
                 "attn_output_norm.bias": "post_attention_layernorm.bias",
                 "layer_output_norm.weight": "post_mlp_layernorm.weight",
                 "layer_output_norm.bias": "post_mlp_layernorm.bias"}
        state.update({layer + ours: _tensor(tensors.pop(block + theirs)) for theirs, ours in names.items()})
    if tensors:
        raise ConfigError(f"{path.name}: tensors with no NomicBert parameter: {sorted(tensors)[:5]}")
    return state


@functools.lru_cache(maxsize=2)
def nomic_model(path: str, device: str) -> Any:
    """``NomicBertModel`` with the GGUF's weights, in eval mode on ``device`` (one per file and device)."""
    from transformers import NomicBertModel

    config = nomic_config(Path(path))
    model = NomicBertModel(config, add_pooling_layer=False)
    missing, unexpected = model.load_state_dict(nomic_state_dict(Path(path), config.num_hidden_layers), strict=False)
    if missing or unexpected:
        raise ConfigError(f"{Path(path).name}: NomicBert parameters left unfilled {missing[:5]} / unexpected "
                          f"{unexpected[:5]}")
    return model.to(device).eval()


class TorchNomicEncoder(Encoder):
    """A GGUF nomic-bert embedder (``GGUF_EMBEDDERS``) on torch — CPU, or CUDA when present.

    Arguments as :class:`~grainlab.models.llama_encoder.LlamaEncoder`'s (``threads`` aside: torch
    uses its own thread setting)."""

    pool = LlamaEncoder.pool  # mean over the mask, the Matryoshka rule, L2 norm: the same as llama.cpp's

    def __init__(self, model_id: str, max_length: int | None = None, batch_size: int = 8,
                 device: str | None = None, dimension: int | None = None) -> None:
        import torch

        name = gguf_model_id(model_id)
        if name not in GGUF_EMBEDDERS:
            raise ConfigError(f"{model_id!r} is not a known GGUF embedder; known: {', '.join(GGUF_EMBEDDERS)}")
        preset = GGUF_EMBEDDERS[name]
        length = max_length or preset.context
        if length > preset.context:
            raise ConfigError(f"{name} was trained on {preset.context} tokens; max_length={length} would need "
                              "rotary scaling, which grainlab does not configure")
        self.dimension = dimension or preset.dimensions[-1]
        if self.dimension not in preset.dimensions:
            raise ConfigError(f"{name}: dimension {self.dimension} is not one of its Matryoshka sizes {preset.dimensions}")
        self.model_id, self.batch_size, self.full_dimension = name, batch_size, preset.dimensions[-1]
        self.config = EncoderConfig(pooling="mean", max_length=length, query_prefix=preset.query_prefix,
                                    passage_prefix=preset.passage_prefix)
        self.file: GGUFFile = gguf_file(name)
        self.tokenizer = gguf_tokenizer(self.file, length)
        self.device = settings.torch_device(device)
        self._model = nomic_model(str(self.file.path), self.device)
        self._torch = torch

    @property
    def record(self) -> dict[str, object]:
        return {**self.file.record(self.device), "backend": "torch"}

    @property
    def identity(self) -> dict[str, object]:
        import torch
        import transformers

        return {"model_id": self.model_id, "revision": f"sha256:{self.file.sha256}", "backend": "torch",
                "runtime": f"transformers=={transformers.__version__},torch=={torch.__version__}",
                "config": self.config.__dict__, "dimension": self.dimension, "code": NOMIC_TORCH_CODE_VERSION}

    def token_states(self, batch: dict) -> np.ndarray:
        """Per-token states ``[batch, seq, 768]`` of a tokenized (padded) batch; padding rows are 0."""
        torch = self._torch
        mask = np.asarray(batch["attention_mask"])
        with torch.inference_mode():
            ids = torch.from_numpy(np.asarray(batch["input_ids"], dtype=np.int64)).to(self.device)
            states = self._model(input_ids=ids, attention_mask=torch.from_numpy(mask.astype(np.int64)).to(self.device),
                                 token_type_ids=torch.zeros_like(ids)).last_hidden_state
        return (states.float().cpu().numpy() * mask[..., None]).astype(np.float32)
