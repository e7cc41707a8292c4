"""llama.cpp in-process through the prebuilt ``xllamacpp`` bindings, for GGUF embedders.

One :class:`LlamaRuntime` loads one GGUF file; llama.cpp's server routes are reached on its
loopback port (``/embedding``, ``/tokenize``). ``OMP_WAIT_POLICY=PASSIVE`` is set (unless already
set) before the runtime loads: with OpenMP's default busy-waiting, throughput collapsed when
another process shared the cores. (The reader in ``readers.llama`` holds its own copy of this
start-up for now: its source is part of every cached generation's key.)
"""

from __future__ import annotations

import functools
import os
from typing import Any

from grainlab.errors import ConfigError, ModelNotAvailable

THREADS_ENV = "GRAINLAB_LLAMA_THREADS"
XLLAMACPP = "xllamacpp==2026.10.11549"


def runtime() -> Any:
    """The ``xllamacpp`` module, or a clear error naming the package to install."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelNotAvailable(f"GGUF models run on llama.cpp, which needs xllamacpp: pip install '{XLLAMACPP}' "
                                "(prebuilt; nothing to compile)") from exc
    return xllamacpp


def default_threads() -> int:
    """``$GRAINLAB_LLAMA_THREADS``, else every core."""
    return int(os.environ.get(THREADS_ENV) or os.cpu_count() or 1)


class LlamaRuntime:
    """One loaded GGUF model in embedding mode, with pooling turned off: ``/embedding`` returns
    one vector per token (special tokens included), not normalised. The whole sequence must fit
    one micro-batch (encoders attend both ways), so both batch sizes equal the context."""

    def __init__(self, path: str, context: int, threads: int, gpu_layers: int = 0) -> None:
        xllamacpp = runtime()
        params = xllamacpp.CommonParams()
        params.model.path = path
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_NONE
        params.embd_normalize = -1  # raw states; grainlab pools and normalises
        params.n_ctx = params.n_batch = params.n_ubatch = context
        params.n_parallel = 1  # one sequence at a time: more slots changed the states by up to 7e-3
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.n_gpu_layers = gpu_layers
        params.warmup = False
        params.port = 0  # any free loopback port
        params.verbosity = -1
        self.context = context
        self.server = xllamacpp.Server(params)
        address = self.server.listening_address
        self.base = address if address.startswith("http") else f"http://{address}"
        self.version = getattr(xllamacpp, "__version__", "unknown")

    def post(self, route: str, payload: dict[str, Any]) -> Any:
        import requests

        response = requests.post(self.base + route, json=payload, timeout=3600)
        if response.status_code != 200:
            raise ConfigError(f"llama.cpp {route} failed ({response.status_code}): {response.text[:300]}")
        return response.json()

    def token_states(self, sequences: list[list[int]]) -> list[list[list[float]]]:
        """Per-token states of each token-id sequence, in order."""
        too_long = [len(s) for s in sequences if len(s) > self.context]
        if too_long:
            raise ConfigError(f"a sequence of {max(too_long)} tokens exceeds the embedder's context of "
                              f"{self.context}: lower max_length or raise the context")
        results = self.post("/embedding", {"content": sequences})
        return [r["embedding"] for r in sorted(results, key=lambda r: r["index"])]

    def tokenize(self, text: str) -> list[int]:
        """llama.cpp's own tokenization of ``text`` (special tokens added), for checks."""
        return [int(t) for t in self.post("/tokenize", {"content": text, "add_special": True})["tokens"]]


@functools.lru_cache(maxsize=2)
def embedding_runtime(path: str, context: int, threads: int, gpu_layers: int = 0) -> LlamaRuntime:
    """One runtime per model file and settings per process, shared by every encoder of that model."""
    return LlamaRuntime(path, context, threads, gpu_layers)
