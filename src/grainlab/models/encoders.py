"""Bi-encoders named by Hugging Face id, on torch (CPU/CUDA) or onnxruntime.

One forward path for every model gives token states (for late chunking) and pooled,
L2-normalised embeddings; texts are batched in length order and returned in input order.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from grainlab import settings
from grainlab.cache import code_fingerprint, content_key, hash_texts
from grainlab.errors import ConfigError
from grainlab.models.quiet import quiet_loading
from grainlab.models.resolve import ResolvedModel, resolve_model

ENCODER_CODE_VERSION = code_fingerprint("models.encoders")
ENCODER_VERSION = "1"  # bump when the same model and config would give other vectors (results keys)


@dataclass(frozen=True)
class EncoderConfig:
    """How a model turns token states into one vector."""

    pooling: str = "mean"  # "mean" | "cls"
    max_length: int = 512
    query_prefix: str = ""
    passage_prefix: str = ""
    normalize: bool = True


PRESETS: dict[str, EncoderConfig] = {
    "sentence-transformers/all-MiniLM-L6-v2": EncoderConfig(pooling="mean", max_length=256),
    "sentence-transformers/all-mpnet-base-v2": EncoderConfig(pooling="mean", max_length=384),
    "BAAI/bge-small-en-v1.5": EncoderConfig(
        pooling="cls", max_length=512,
        query_prefix="Represent this sentence for searching relevant passages: "),
    "jinaai/jina-embeddings-v2-small-en": EncoderConfig(pooling="mean", max_length=8192),
}


def config_from_folder(path: Path) -> EncoderConfig:
    """Read pooling and max length from a sentence-transformers folder when present."""
    pooling, max_length = "mean", 512
    pooling_file = path / "1_Pooling" / "config.json"
    if pooling_file.exists():
        cfg = json.loads(pooling_file.read_text())
        pooling = "cls" if cfg.get("pooling_mode_cls_token") else "mean"
    st_file = path / "sentence_bert_config.json"
    if st_file.exists():
        max_length = int(json.loads(st_file.read_text()).get("max_seq_length", max_length))
    return EncoderConfig(pooling=pooling, max_length=max_length)


def max_positions(model_id: str, default: int = 512) -> int:
    """The model's position limit (``max_position_embeddings``), e.g. 512 for BERT models."""
    config = resolve_model(model_id).path / "config.json"
    value = json.loads(config.read_text()).get("max_position_embeddings") if config.exists() else None
    return int(value) if value else default


def onnx_session(path: Path, device: str):
    """An onnxruntime session for ``path`` on ``device`` (CUDA when asked for and available, else
    CPU), and the device it actually runs on (its first execution provider) — what results record,
    not the device that was asked for."""
    import onnxruntime as ort

    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device.startswith("cuda") \
        else ["CPUExecutionProvider"]
    session = ort.InferenceSession(str(path), providers=[p for p in providers if p in ort.get_available_providers()])
    provider = session.get_providers()[0]
    actual = "cuda" if provider == "CUDAExecutionProvider" else "cpu" if provider == "CPUExecutionProvider" \
        else provider
    return session, actual


class Encoder:
    """A bi-encoder: ``encode_queries``/``encode_passages`` → float32 ``[n, dim]``."""

    def __init__(self, model_id: str, config: EncoderConfig | None = None, device: str | None = None,
                 batch_size: int = 32, max_length: int | None = None) -> None:
        from transformers import AutoTokenizer

        self.model_id = model_id
        self.resolved: ResolvedModel = resolve_model(model_id)
        base = config or PRESETS.get(model_id) or config_from_folder(self.resolved.path)
        if max_length is not None:
            base = EncoderConfig(base.pooling, max_length, base.query_prefix, base.passage_prefix, base.normalize)
        self.config = base
        self.batch_size = batch_size
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.resolved.path))
        self.device = settings.torch_device(device)
        if self.resolved.backend == "onnx":
            self._session, self.device = onnx_session(self.resolved.path / "model.onnx", self.device)
            self._input_names = {i.name for i in self._session.get_inputs()}
            self._model = None
        else:
            import torch
            from transformers import AutoModel

            with quiet_loading():
                self._model = AutoModel.from_pretrained(str(self.resolved.path)).to(self.device).eval()
            self._torch = torch

    @property
    def record(self) -> dict[str, object]:
        """Which copy ran where, for result manifests (``device`` is where it actually ran: an ONNX
        session's execution provider, not the device asked for)."""
        return self.resolved.record(self.device)

    @property
    def identity(self) -> dict[str, object]:
        """Everything that changes the vectors: a cache-key component."""
        return {"model_id": self.model_id, "revision": self.resolved.revision,
                "backend": self.resolved.backend, "config": self.config.__dict__,
                "code": ENCODER_CODE_VERSION}

    # -- token states -------------------------------------------------------------
    def tokenize(self, texts: list[str], max_length: int | None = None, truncation: bool = True) -> dict:
        return self.tokenizer(texts, padding=True, truncation=truncation,
                              max_length=max_length or self.config.max_length, return_tensors="np")

    def token_states(self, batch: dict) -> np.ndarray:
        """Last hidden states ``[batch, seq, dim]`` for a tokenized batch."""
        if self._model is None:
            feeds = {name: batch[name].astype(np.int64) for name in self._input_names if name in batch}
            if "token_type_ids" in self._input_names and "token_type_ids" not in feeds:
                feeds["token_type_ids"] = np.zeros_like(batch["input_ids"], dtype=np.int64)
            return self._session.run(None, feeds)[0]
        torch = self._torch
        with torch.inference_mode():
            inputs = {k: torch.from_numpy(np.asarray(v)).to(self.device) for k, v in batch.items()
                      if k in ("input_ids", "attention_mask", "token_type_ids")}
            return self._model(**inputs).last_hidden_state.float().cpu().numpy()

    def pool(self, states: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.config.pooling == "cls":
            pooled = states[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        if self.config.normalize:
            pooled = pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return pooled.astype(np.float32)

    # -- embeddings -------------------------------------------------------------------
    def encode(self, texts: list[str], prefix: str = "", progress: bool | None = None) -> np.ndarray:
        """Embed ``texts`` (with ``prefix``) in length-sorted batches; output in input order."""
        texts = [prefix + t for t in texts]
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out: np.ndarray | None = None
        show = progress if progress is not None else len(texts) > 4 * self.batch_size
        starts = range(0, len(texts), self.batch_size)
        for start in tqdm(starts, desc=f"encode {self.model_id.split('/')[-1]}", disable=not show,
                          unit="batch"):
            index = order[start:start + self.batch_size]
            batch = self.tokenize([texts[i] for i in index])
            vectors = self.pool(self.token_states(batch), batch["attention_mask"])
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[index] = vectors
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)

    def encode_queries(self, texts: list[str], progress: bool | None = None) -> np.ndarray:
        return self.encode(texts, self.config.query_prefix, progress)

    def encode_passages(self, texts: list[str], progress: bool | None = None) -> np.ndarray:
        return self.encode(texts, self.config.passage_prefix, progress)


@functools.lru_cache(maxsize=8)
def get_encoder(model_id: str, device: str | None = None) -> Encoder:
    """One shared encoder per model id and device in a process."""
    return Encoder(model_id, device=device)


def embedding_key(encoder: Encoder, texts: list[str], role: str = "passage") -> str:
    """The cache key of ``texts`` embedded by ``encoder`` as ``role`` (``passage``/``query``)."""
    if role not in ("passage", "query"):
        raise ConfigError(f"role must be 'passage' or 'query', got {role!r}")
    return content_key(kind="embeddings", role=role, encoder=encoder.identity,
                       texts=hash_texts((str(i), t) for i, t in enumerate(texts)))
