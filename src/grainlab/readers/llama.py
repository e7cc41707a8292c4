"""A reader on llama.cpp (the prebuilt ``xllamacpp`` bindings): GGUF models by Hugging Face id.

The same protocol as the transformers reader (``readers.base``): the model's own chat template
(applied by llama.cpp from the GGUF's metadata), greedy decoding (temperature 0, top-k 1, fixed
seed), stop at the first newline and/or stop characters, ``response_prefix``, cached generations.
The model runs in-process; llama.cpp's server routes are reached on its loopback port
(``/completion``, which reports why generation stopped; ``/apply-template``; ``/tokenize``). Differences from the
transformers reader, stated once: generation stops *before* a newline (the answer's first line is
what is scored either way) and keeps a stop character but not the rest of its token.

``OMP_WAIT_POLICY=PASSIVE`` is set (unless already set) before the runtime loads: with OpenMP's
default busy-waiting, generation collapsed when another process shared the cores.
"""

from __future__ import annotations

import functools
import os
from typing import Any

from grainlab import settings
from grainlab.cache import ArtifactCache
from grainlab.errors import ConfigError, ModelNotAvailable
from grainlab.models.gguf import GGUFFile, gguf_file
from grainlab.readers.base import Generation, Prompt, Reader

LLAMA_READER_VERSION = "1"  # bump when the same file, settings and prompt would generate otherwise
LLAMA_LEGACY_CODE = "c1045bb9de46bda9"  # code_fingerprint("readers.base", "readers.llama") at 31f5994
THREADS_ENV = "GRAINLAB_LLAMA_THREADS"
DEFAULT_CONTEXT = 8192


def runtime() -> Any:
    """The ``xllamacpp`` module, or a clear error naming the package to install."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import xllamacpp
    except ImportError as exc:
        raise ModelNotAvailable("the llama.cpp backend needs xllamacpp: pip install 'xllamacpp==2026.10.11549' "
                                "(prebuilt; nothing to compile), or use backend='transformers'") from exc
    return xllamacpp


class LlamaServer:
    """One loaded GGUF model: in-process completions, and its loopback HTTP routes."""

    def __init__(self, path: str, context_window: int, threads: int, gpu_layers: int) -> None:
        xllamacpp = runtime()
        params = xllamacpp.CommonParams()
        params.model.path = path
        params.n_ctx = context_window
        params.n_batch = 512
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.n_gpu_layers = gpu_layers
        params.warmup = False
        params.port = 0  # any free loopback port
        params.verbosity = -1
        self.server = xllamacpp.Server(params)
        address = self.server.listening_address
        self.base = address if address.startswith("http") else f"http://{address}"
        self.version = getattr(xllamacpp, "__version__", "unknown")

    def post(self, route: str, payload: dict[str, Any]) -> dict[str, Any]:
        import requests

        response = requests.post(self.base + route, json=payload, timeout=600)
        if response.status_code != 200:
            raise ConfigError(f"llama.cpp {route} failed ({response.status_code}): {response.text[:300]}")
        return response.json()


@functools.lru_cache(maxsize=2)
def _server(path: str, context_window: int, threads: int, gpu_layers: int) -> LlamaServer:
    """One server per model file and settings per process, shared by every reader of that model."""
    return LlamaServer(path, context_window, threads, gpu_layers)


def default_threads() -> int:
    return int(os.environ.get(THREADS_ENV) or os.cpu_count() or 1)


class LlamaCppReader(Reader):
    """``generate(prompts)`` on llama.cpp; arguments as :class:`grainlab.readers.CausalLMReader`'s,
    plus ``context_window`` (tokens of KV cache; default 8,192), ``threads`` (default
    ``$GRAINLAB_LLAMA_THREADS`` or all cores), ``logprobs`` (record each generated token's
    log-probability) and ``cache_prompt`` (reuse the KV cache of the prompt prefix shared with the
    previous request: prompts for one question at several gold positions share their start).
    It runs on the CPU unless ``device="cuda"`` is given, which offloads every layer (that needs a
    CUDA build of xllamacpp; ``get_reader(backend="auto")`` takes transformers on CUDA instead)."""

    legacy_code = LLAMA_LEGACY_CODE

    supports_grammar = True
    sort_by_length = False  # keep the caller's order: consecutive prompts share prefixes

    def __init__(self, model_id: str = "Qwen/Qwen2.5-Coder-0.5B-Instruct", max_new_tokens: int = 100,
                 batch_size: int = 4, device: str | None = None, chat_template: bool | None = None,
                 stop_at_newline: bool = True, stop_chars: str = "", response_prefix: str = "",
                 cache: ArtifactCache | None = None, context_window: int = DEFAULT_CONTEXT,
                 threads: int | None = None, logprobs: bool = False, cache_prompt: bool = True) -> None:
        self.model_id = model_id
        self.backend = "llama.cpp"
        self.file: GGUFFile = gguf_file(model_id)
        self.device = settings.torch_device(device) if device else "cpu"
        gpu_layers = 999 if self.device.startswith("cuda") else 0
        self.server = _server(str(self.file.path), context_window, threads or default_threads(), gpu_layers)
        self.chat_template = True if chat_template is None else chat_template
        self.max_new_tokens, self.batch_size, self.stop_at_newline = max_new_tokens, batch_size, stop_at_newline
        self.stop_chars, self.response_prefix = stop_chars, response_prefix
        self.context_window = context_window
        self.logprobs, self.cache_prompt = logprobs, cache_prompt
        self._cache = cache or ArtifactCache()

    @property
    def resolved(self) -> GGUFFile:
        return self.file

    @property
    def record(self) -> dict[str, object]:
        return self.file.record(self.device)

    @property
    def identity(self) -> dict[str, object]:
        return {"model_id": self.file.model_id, "file_sha256": self.file.sha256, "backend": self.backend,
                "runtime": f"xllamacpp=={self.server.version}", "chat_template": self.chat_template,
                "max_new_tokens": self.max_new_tokens, "greedy": True, "stop_at_newline": self.stop_at_newline,
                "version": LLAMA_READER_VERSION, **({"stop_chars": self.stop_chars} if self.stop_chars else {}),
                **({"response_prefix": self.response_prefix} if self.response_prefix else {}),
                **({"logprobs": True} if self.logprobs else {})}

    def format(self, prompt: Prompt) -> str:
        """The prompt as a user turn (or a conversation of ``{"role", "content"}`` turns) through the
        model's chat template, then ``response_prefix``."""
        if not isinstance(prompt, str):
            if not self.chat_template:
                raise ConfigError(f"{self.model_id}: a multi-turn prompt needs the chat template")
            messages = [dict(m) for m in prompt]
        elif not self.chat_template:
            return prompt + self.response_prefix
        else:
            messages = [{"role": "user", "content": prompt}]
        return self.server.post("/apply-template", {"messages": messages})["prompt"] + self.response_prefix

    def count_tokens(self, prompt: Prompt) -> int:
        return len(self.server.post("/tokenize", {"content": self.format(prompt), "add_special": True})["tokens"])

    def _request(self, text: str, grammar: str | None) -> dict[str, Any]:
        stops = (["\n"] if self.stop_at_newline else []) + list(self.stop_chars)
        request: dict[str, Any] = {"prompt": text, "n_predict": self.max_new_tokens, "temperature": 0.0, "top_k": 1,
                                   "seed": 0, "cache_prompt": self.cache_prompt,
                                   "n_probs": 1 if self.logprobs else 0}
        if stops:
            request["stop"] = stops
        if grammar:
            request["grammar"] = grammar
        return request

    def _generate_batch(self, prompts: list[Prompt], grammar: str | None = None) -> list[Generation]:
        out = []
        for prompt in prompts:
            response = self.server.post("/completion", self._request(self.format(prompt), grammar))
            text = response["content"]
            if response.get("stop_type") == "word" and response.get("stopping_word", "") in self.stop_chars:
                text += response["stopping_word"]  # it ends the answer and belongs to it (a JSON list's "]")
            timings = response.get("timings", {})
            seconds = (timings.get("prompt_ms", 0.0) + timings.get("predicted_ms", 0.0)) / 1000
            logprobs = tuple(float(t["logprob"]) for t in response.get("completion_probabilities", [])) \
                if self.logprobs else None
            out.append(Generation(text=text, prompt_tokens=int(response.get("tokens_evaluated", 0)),
                                  new_tokens=int(response.get("tokens_predicted", 0)), seconds=seconds,
                                  token_logprobs=logprobs, constrained=bool(grammar)))
        return out
