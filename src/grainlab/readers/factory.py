"""One way to get a reader: a Hugging Face id and a backend (``auto``, ``transformers``, ``llama.cpp``)."""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

from grainlab import settings
from grainlab.errors import ConfigError
from grainlab.models.catalogue import has_gguf
from grainlab.readers.base import Reader

BACKENDS = ("auto", "transformers", "llama.cpp")


def choose_backend(model_id: str, backend: str = "auto", device: str | None = None) -> str:
    """``auto``: llama.cpp on CPU when the model has a known GGUF copy and ``xllamacpp`` is
    installed, else transformers (and transformers on CUDA); the others as asked."""
    if backend not in BACKENDS:
        raise ConfigError(f"reader backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if backend != "auto":
        return backend
    on_cpu = settings.torch_device(device) == "cpu"
    runtime = importlib.util.find_spec("xllamacpp") is not None
    return "llama.cpp" if on_cpu and runtime and has_gguf(model_id) else "transformers"


def get_reader(model_id: str, backend: str = "auto", **options: Any) -> Reader:
    """A reader of ``model_id`` on ``backend`` (``options`` as the reader classes take them;
    llama.cpp-only ones — ``context_window``, ``threads``, ``logprobs``, ``cache_prompt`` — are
    refused by the transformers reader)."""
    chosen = choose_backend(model_id, backend, options.get("device"))
    if chosen == "llama.cpp":
        from grainlab.readers.llama import LlamaCppReader

        return LlamaCppReader(model_id, **options)
    from grainlab.readers.llm import CausalLMReader

    try:
        return CausalLMReader(model_id, **options)
    except TypeError as exc:
        raise ConfigError(f"the transformers reader does not take {exc}; those options are llama.cpp's") from exc


@functools.lru_cache(maxsize=4)
def shared_reader(model_id: str, max_new_tokens: int, batch_size: int = 4, stop_at_newline: bool = True,
                  stop_chars: str = "", response_prefix: str = "", backend: str = "transformers") -> Reader:
    """One loaded reader per configuration, shared by the chunkers and studies that ask for it."""
    return get_reader(model_id, backend, max_new_tokens=max_new_tokens, batch_size=batch_size,
                      stop_at_newline=stop_at_newline, stop_chars=stop_chars, response_prefix=response_prefix)
