"""GGUF bi-encoders on llama.cpp: nomic-embed-text-v1.5, a long-context embedder.

The same interface as :class:`grainlab.models.encoders.Encoder` (pooled embeddings, token states
for late chunking, a ``tokenizer`` with character offsets), so dense retrieval and late chunking
take it unchanged. How it works:

- **Tokens.** The WordPiece vocabulary is read from the GGUF file itself (llama.cpp stores word
  starts with ``▁`` and continuations without ``##``; mapped back, it is bert-base-uncased's
  vocabulary) and loaded as a fast BERT tokenizer, which gives the character offsets late chunking
  needs. Token ids — not text — are sent to llama.cpp, so the states line up with the offsets.
- **States.** llama.cpp runs the model with pooling turned off and returns one vector per token
  (``[CLS]`` and ``[SEP]`` included); grainlab mean-pools them over the attention mask, as the
  model's own (mean) pooling does, and L2-normalises.
- **Definition.** The task prefixes (``search_query: `` / ``search_document: ``), the trained
  context (2,048 tokens, from the GGUF) and the Matryoshka dimensions belong to the model
  (:data:`GGUF_EMBEDDERS`), not to notebooks. A Matryoshka dimension below the full one follows the
  model card: layer norm over the full vector, truncate, normalise.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from grainlab import settings
from grainlab.cache import code_fingerprint
from grainlab.errors import ConfigError
from grainlab.models.catalogue import GGUF_EMBEDDERS, gguf_model_id
from grainlab.models.encoders import Encoder, EncoderConfig
from grainlab.models.gguf import GGUFFile, gguf_file
from grainlab.models.llama_runtime import default_threads, embedding_runtime

LLAMA_ENCODER_CODE_VERSION = code_fingerprint("models.llama_encoder", "models.llama_runtime")
LLAMA_ENCODER_VERSION = "1"  # bump when the same GGUF would give other vectors (results keys)


def _wordpiece(token: str, token_type: int) -> str:
    """A llama.cpp WPM vocabulary entry as BERT's vocab.txt writes it."""
    if token_type != 1 or re.fullmatch(r"\[unused\d+\]", token):  # control and unused tokens stay as they are
        return token
    return token[1:] if token.startswith("▁") else "##" + token


def wordpiece_vocabulary(path: Path) -> list[str]:
    """The GGUF's tokenizer vocabulary in BERT's ``vocab.txt`` form (one entry per id)."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    tokens, types = reader.fields["tokenizer.ggml.tokens"], reader.fields["tokenizer.ggml.token_type"]
    return [_wordpiece(bytes(tokens.parts[i]).decode("utf-8"), int(types.parts[j][0]))
            for i, j in zip(tokens.data, types.data)]


def gguf_tokenizer(file: GGUFFile, max_length: int):
    """A fast BERT tokenizer (lower-casing, as bert-base-uncased) over the GGUF's own vocabulary."""
    from tokenizers.implementations import BertWordPieceTokenizer
    from transformers import PreTrainedTokenizerFast

    vocabulary = {piece: number for number, piece in enumerate(wordpiece_vocabulary(file.path))}
    wordpiece = BertWordPieceTokenizer(vocabulary, lowercase=True)
    return PreTrainedTokenizerFast(tokenizer_object=wordpiece._tokenizer, model_max_length=max_length,
                                   unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                                   mask_token="[MASK]")


class LlamaEncoder(Encoder):
    """A GGUF bi-encoder by Hugging Face id (``GGUF_EMBEDDERS``) on llama.cpp.

    Args:
        model_id: e.g. ``nomic-ai/nomic-embed-text-v1.5`` (or its ``-GGUF`` repository id).
        max_length: tokens read per text, prefix and special tokens included (default: the model's
            trained context; more is an error).
        batch_size: texts per request to the runtime.
        device: ``cuda`` offloads every layer (needs a CUDA build of xllamacpp); default CPU.
        dimension: a Matryoshka size (default: the full vector).
        threads: CPU threads (default ``$GRAINLAB_LLAMA_THREADS`` or all cores).
    """

    def __init__(self, model_id: str, max_length: int | None = None, batch_size: int = 16,
                 device: str | None = None, dimension: int | None = None, threads: int | None = None) -> None:
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
        self.file = gguf_file(name)
        self.tokenizer = gguf_tokenizer(self.file, length)
        self.device = settings.torch_device(device) if device else "cpu"
        self.runtime = embedding_runtime(str(self.file.path), length, threads or default_threads(),
                                         999 if self.device.startswith("cuda") else 0)
        self._model = None

    @property
    def record(self) -> dict[str, object]:
        return self.file.record(self.device)

    @property
    def identity(self) -> dict[str, object]:
        return {"model_id": self.model_id, "revision": f"sha256:{self.file.sha256}", "backend": "llama.cpp",
                "runtime": f"xllamacpp=={self.runtime.version}", "config": self.config.__dict__,
                "dimension": self.dimension, "code": LLAMA_ENCODER_CODE_VERSION}

    def token_states(self, batch: dict) -> np.ndarray:
        """Per-token states ``[batch, seq, 768]`` of a tokenized (padded) batch; padding rows are 0."""
        ids, mask = np.asarray(batch["input_ids"]), np.asarray(batch["attention_mask"]).astype(bool)
        sequences = [row[keep].astype(int).tolist() for row, keep in zip(ids, mask)]
        out = np.zeros((*ids.shape, self.full_dimension), dtype=np.float32)
        for row, states in enumerate(self.runtime.token_states(sequences)):
            out[row, :len(states)] = np.asarray(states, dtype=np.float32)
        return out

    def pool(self, states: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean over the mask; at a Matryoshka size, layer norm, truncate; then L2-normalise."""
        weights = mask[..., None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self.dimension < self.full_dimension:
            centred = pooled - pooled.mean(axis=1, keepdims=True)
            pooled = (centred / np.sqrt(centred.var(axis=1, keepdims=True) + 1e-5))[:, :self.dimension]
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)
