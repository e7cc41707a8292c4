"""Cross-encoders named by HF id: ``[CLS] query [SEP] passage [SEP]`` → one relevance logit."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from grainlab import settings
from grainlab.cache import code_fingerprint
from grainlab.models.encoders import onnx_session
from grainlab.models.quiet import quiet_loading
from grainlab.models.resolve import resolve_model

CROSS_ENCODER_CODE_VERSION = code_fingerprint("models.cross_encoders")
CROSS_ENCODER_VERSION = "1"  # bump when the same model would score pairs differently (results keys)


class CrossEncoder:
    """Scores (query, passage) pairs on onnxruntime (offline int8 copies) or torch.

    ``batch_size`` defaults to 32 on torch and to 1 on ONNX: the offline copies are dynamically
    quantised, so activation scales are computed over the whole batch and a pair's score depended
    on its batch-mates (up to 0.39 logits on SciFact pairs) — and so on which systems had been
    reranked before in the process. One pair per call makes a score a function of the pair alone,
    and on CPU it is not slower (64 pairs: 2.3 s vs 3.4 s at 32, no padding)."""

    def __init__(self, model_id: str, device: str | None = None, batch_size: int | None = None,
                 max_length: int = 512) -> None:
        from transformers import AutoTokenizer

        self.model_id = model_id
        self.resolved = resolve_model(model_id)
        batch_size = batch_size or (1 if self.resolved.backend == "onnx" else 32)
        self.batch_size, self.max_length = batch_size, max_length
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.resolved.path))
        self.device = settings.torch_device(device)
        if self.resolved.backend == "onnx":
            self._session, self.device = onnx_session(self.resolved.path / "model.onnx", self.device)
            self._inputs = {i.name for i in self._session.get_inputs()}
            self._model = None
        else:
            import torch
            from transformers import AutoModelForSequenceClassification

            self._torch = torch
            with quiet_loading():
                self._model = AutoModelForSequenceClassification.from_pretrained(
                    str(self.resolved.path)).to(self.device).eval()

    @property
    def record(self) -> dict[str, object]:
        """Which copy ran where, for result manifests (the ONNX execution provider actually used)."""
        return self.resolved.record(self.device)

    @property
    def identity(self) -> dict[str, object]:
        return {"model_id": self.model_id, "revision": self.resolved.revision, "backend": self.resolved.backend,
                "max_length": self.max_length, "batch_size": self.batch_size, "code": CROSS_ENCODER_CODE_VERSION}

    def _logits(self, queries: list[str], passages: list[str]) -> np.ndarray:
        batch = self.tokenizer(queries, passages, padding=True, truncation="only_second",
                               max_length=self.max_length, return_tensors="np")
        if self._model is None:
            feeds = {k: batch[k].astype(np.int64) for k in self._inputs if k in batch}
            return self._session.run(None, feeds)[0][:, 0]
        torch = self._torch
        with torch.inference_mode():
            inputs = {k: torch.from_numpy(v).to(self.device) for k, v in batch.items()}
            return self._model(**inputs).logits[:, 0].float().cpu().numpy()

    def score(self, pairs: Sequence[tuple[str, str]], progress: bool | None = None) -> np.ndarray:
        """One logit per pair, computed in length-sorted batches, returned in input order."""
        out = np.zeros(len(pairs), dtype=np.float32)
        order = np.argsort([-(len(q) + len(p)) for q, p in pairs], kind="stable")
        show = progress if progress is not None else len(pairs) > 8 * self.batch_size
        for start in tqdm(range(0, len(pairs), self.batch_size), desc=f"rerank {self.model_id.split('/')[-1]}",
                          disable=not show, unit="batch"):
            index = order[start:start + self.batch_size]
            out[index] = self._logits([pairs[i][0] for i in index], [pairs[i][1] for i in index])
        return out


@functools.lru_cache(maxsize=4)
def get_cross_encoder(model_id: str, device: str | None = None) -> CrossEncoder:
    return CrossEncoder(model_id, device=device)
