"""Late chunking (Günther et al. 2024): encode the whole document, then pool chunk spans.

Mechanics follow the official code: chunk character spans become token spans through the
tokenizer's offsets; the first span starts at token 0 (so it pools [CLS] and any prefix
tokens) and the last span runs to the end (so it pools [SEP]); each chunk is the mean of its
token states, L2-normalised. Documents longer than the model window are encoded in macro
windows with ``overlap`` tokens of left context ("long late chunking"): every window after
the first drops its first ``overlap`` outputs and the states are concatenated.

How a later window is framed is a choice (``framing``): ``sliced`` cuts the one tokenization of
``[CLS] prefix text [SEP]`` into windows, as the official ``_embed_with_overlap`` does, so a window
after the first starts mid-text with no ``[CLS]``, no prefix and no ``[SEP]``; ``framed`` gives
every window its own ``[CLS]``, the passage prefix and ``[SEP]`` around its slice of the text. The
stitched states line up with the one tokenization either way, so chunk offsets are the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from tqdm.auto import tqdm

from grainlab.cache import ArtifactCache, code_fingerprint, content_key, hash_texts
from grainlab.errors import ConfigError
from grainlab.models.embedders import context_length, load_encoder
from grainlab.models.embedding_cache import cached_encode
from grainlab.models.encoders import Encoder
from grainlab.retrieval.base import Retriever
from grainlab.spec import format_spec
from grainlab.types import Chunk, Document

LATE_CODE_VERSION = code_fingerprint("retrieval.late", "models.encoders")

# The token states of the last corpus encoded, shared by every late-chunking variant over it
# (boundary strategies and chunk sizes only change the pooling). One entry, kept in memory.
_STATES_MEMO: dict[str, list[tuple[np.ndarray, dict]]] = {}


def macro_windows(n_tokens: int, window: int, overlap: int) -> list[tuple[int, int]]:
    """Token windows ``[start, end)`` of at most ``window`` tokens, consecutive ones sharing ``overlap``."""
    if not 0 <= overlap < window:
        raise ConfigError(f"need 0 ≤ overlap < window, got overlap={overlap}, window={window}")
    windows = []
    for start in range(0, max(n_tokens, 1), window - overlap):
        end = min(start + window, n_tokens)
        windows.append((start, end))
        if end >= n_tokens:
            break
    return windows


def stitch_windows(outputs: Sequence[np.ndarray], overlap: int) -> np.ndarray:
    """Concatenate window states, dropping the first ``overlap`` of every window after the first."""
    return np.concatenate([out if i == 0 else out[overlap:] for i, out in enumerate(outputs)], axis=0)


FRAMINGS = ("sliced", "framed")


def framed_parts(ids: Sequence[int], special: Sequence[int], offsets: Sequence[tuple[int, int]],
                 prefix_chars: int) -> tuple[int, int]:
    """How many tokens open every framed window (``[CLS]`` and the prefix's tokens) and close it
    (``[SEP]``), for one tokenization of ``prefix + text``."""
    if len(ids) < 2 or not special[0] or not special[-1]:
        raise ConfigError("framed late-chunking windows need a tokenizer that opens and closes a text with "
                          "special tokens ([CLS] … [SEP]); use framing=sliced")
    head = 1
    while head < len(ids) - 1 and not special[head] and offsets[head][1] <= prefix_chars:
        head += 1
    return head, 1


def framed_windows(n_tokens: int, head: int, tail: int, window: int, overlap: int) -> list[tuple[int, int]]:
    """The text slices ``[start, end)`` (positions in the whole tokenization) of framed windows:
    each holds ``window - head - tail`` text tokens, consecutive ones sharing ``overlap``."""
    body = n_tokens - head - tail
    capacity = window - head - tail
    if capacity <= overlap:
        raise ConfigError(f"framed windows of {window} tokens hold {capacity} text tokens after [CLS], the prefix "
                          f"and [SEP]: fewer than the overlap {overlap}")
    return [(head + s, head + e) for s, e in macro_windows(body, capacity, overlap)]


def token_spans(offsets: Sequence[tuple[int, int]], special: Sequence[int],
                chunk_spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Token spans of character spans. ``offsets``/``special`` are per token of the encoded
    text (special tokens flagged 1). The first span starts at 0, the last ends after the
    final token; a span with no token of its own takes the next token so it is never empty."""
    regular = [i for i, flag in enumerate(special) if not flag]
    spans = []
    for start, end in chunk_spans:
        inside = [i for i in regular if offsets[i][1] > start and offsets[i][0] < end]
        if inside:
            spans.append((inside[0], inside[-1] + 1))
        else:
            following = next((i for i in regular if offsets[i][0] >= end), regular[-1] if regular else 0)
            spans.append((following, following + 1))
    if spans:
        spans[0] = (0, spans[0][1])
        spans[-1] = (spans[-1][0], len(offsets))
    return spans


def pool_spans(states: np.ndarray, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """Mean of the token states in each span, L2-normalised: ``[len(spans), dim]``."""
    pooled = np.stack([states[s:e].mean(axis=0) for s, e in spans])
    return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)


class LatePooler:
    """Pools token states into chunk vectors (late chunking): each document is encoded whole (in macro
    windows when longer than the model), then every chunk's token span is mean-pooled; windows batched
    by length. It cuts nothing: the chunks come from a chunker."""

    version = "1"  # bump when the same token states would pool into other chunk vectors (results keys)

    def __init__(self, encoder: Encoder, overlap: int = 256, window: int | None = None,
                 framing: str = "sliced") -> None:
        if framing not in FRAMINGS:
            raise ConfigError(f"late chunking framing must be one of {FRAMINGS}, got {framing!r}")
        self.encoder = encoder
        self.window = window or encoder.config.max_length
        self.overlap = overlap
        self.framing = framing
        macro_windows(self.window, self.window, overlap)  # validates overlap < window

    def _windows(self, enc: Mapping, prefix_chars: int) -> list[tuple[list[int], int, int]]:
        """Each window's input ids, and the positions ``[start, end)`` of the whole tokenization
        its outputs stand for (``framed``: the text slice; the frame's own states are read apart)."""
        ids = list(enc["input_ids"])
        if self.framing == "sliced":
            return [(ids[s:e], s, e) for s, e in macro_windows(len(ids), self.window, self.overlap)]
        head, tail = framed_parts(ids, enc["special_tokens_mask"], enc["offset_mapping"], prefix_chars)
        return [(ids[:head] + ids[s:e] + ids[len(ids) - tail:], s, e)
                for s, e in framed_windows(len(ids), head, tail, self.window, self.overlap)]

    def _stitched(self, enc: Mapping, windows: list[tuple[list[int], int, int]], outputs: list[np.ndarray],
                  prefix_chars: int) -> np.ndarray:
        """One state per token of the whole tokenization."""
        if self.framing == "sliced":
            return stitch_windows(outputs, self.overlap)
        ids = enc["input_ids"]
        head, tail = framed_parts(ids, enc["special_tokens_mask"], enc["offset_mapping"], prefix_chars)
        body = [out[head:len(out) - tail] for out in outputs]  # each window's text states
        return np.concatenate([outputs[0][:head], stitch_windows(body, self.overlap), outputs[-1][len(outputs[-1]) - tail:]])

    def document_states(self, texts: Sequence[str], progress: bool = False,
                        prefix_chars: int = 0) -> list[tuple[np.ndarray, dict]]:
        """Token states ``[n_tokens, dim]`` and the tokenization of each (prefixed) text; the
        first ``prefix_chars`` characters of each text are the passage prefix (framed windows
        repeat it)."""
        tok = self.encoder.tokenizer
        encodings = [tok(text, truncation=False, return_offsets_mapping=True, return_special_tokens_mask=True,
                         verbose=False) for text in texts]
        windows = [self._windows(enc, prefix_chars) for enc in encodings]
        jobs = [(d, w, len(inputs)) for d, doc in enumerate(windows) for w, (inputs, _, _) in enumerate(doc)]
        jobs.sort(key=lambda job: -job[2])
        outputs: dict[tuple[int, int], np.ndarray] = {}
        size = self.encoder.batch_size
        pad = tok.pad_token_id or 0
        for first in tqdm(range(0, len(jobs), size), desc="late chunking", disable=not progress, unit="batch"):
            batch = jobs[first:first + size]
            width = max(n for _, _, n in batch)
            ids = np.full((len(batch), width), pad, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, (d, w, n) in enumerate(batch):
                ids[row, :n] = windows[d][w][0]
                mask[row, :n] = 1
            states = self.encoder.token_states({"input_ids": ids, "attention_mask": mask,
                                                "token_type_ids": np.zeros_like(ids)})
            for row, (d, w, n) in enumerate(batch):
                outputs[(d, w)] = states[row, :n]
        result = []
        for d, enc in enumerate(encodings):
            stitched = self._stitched(enc, windows[d], [outputs[(d, w)] for w in range(len(windows[d]))],
                                      prefix_chars)
            assert len(stitched) == len(enc["input_ids"]), "stitched states must line up with the tokenization"
            result.append((stitched, enc))
        return result

    def shared_document_states(self, texts: Sequence[str], progress: bool = False,
                               prefix_chars: int = 0) -> list[tuple[np.ndarray, dict]]:
        """``document_states``, reused when the same texts were just encoded with the same settings."""
        key = content_key(encoder=self.encoder.identity, window=self.window, overlap=self.overlap,
                          framing=self.framing, prefix_chars=prefix_chars,
                          texts=hash_texts((str(i), t) for i, t in enumerate(texts)), code=LATE_CODE_VERSION)
        if key not in _STATES_MEMO:
            _STATES_MEMO.clear()
            _STATES_MEMO[key] = self.document_states(texts, progress, prefix_chars)
        return _STATES_MEMO[key]

    def embed(self, documents: Sequence[Document], chunks: Mapping[str, Sequence[Chunk]],
              progress: bool = False) -> dict[str, np.ndarray]:
        """Chunk id → late-chunked embedding, for the chunks of every document given."""
        prefix = self.encoder.config.passage_prefix
        states = self.shared_document_states([prefix + doc.text for doc in documents], progress, len(prefix))
        out = {}
        for doc, (doc_states, enc) in zip(documents, states):
            doc_chunks = chunks.get(doc.doc_id, [])
            if not doc_chunks:
                continue
            spans = token_spans(enc["offset_mapping"], enc["special_tokens_mask"],
                                [(c.start + len(prefix), c.end + len(prefix)) for c in doc_chunks])
            for chunk, vector in zip(doc_chunks, pool_spans(doc_states, spans)):
                out[chunk.chunk_id] = vector
        return out


@dataclass
class LateChunkingRetriever(Retriever):
    """``late(model=<hf id>,overlap=256[,backend=llama.cpp][,framing=framed])``: dense search over
    late-chunked embeddings.

    Needs the documents the units were cut from: ``index(units, documents)``. ``backend`` chooses a
    GGUF embedder's runtime (``models.embedders.gguf_backend``); the spec names it when it is not
    the default (torch). ``framing`` says how macro windows after the first are framed
    (:class:`LatePooler`); the spec and the results key name it when it is not ``sliced``, the
    behaviour every table stored before the option existed was computed with.
    """

    unkeyed_defaults: ClassVar[dict[str, object]] = {"framing": "sliced"}

    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    overlap: int = 256
    max_length: int | None = None
    batch_size: int = 16
    backend: str = "auto"
    framing: str = "sliced"
    cache: ArtifactCache | None = None
    units: Sequence[Chunk] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        # late chunking reads as far as the model's positions allow unless told otherwise
        window = self.max_length or context_length(self.model)
        self.encoder = load_encoder(self.model, max_length=window, batch_size=self.batch_size, backend=self.backend)
        self.late = LatePooler(self.encoder, overlap=self.overlap, framing=self.framing)
        self._cache = self.cache or ArtifactCache()

    @property
    def spec(self) -> str:
        params = {"model": self.model, "overlap": self.overlap, "max_length": self.encoder.config.max_length}
        if self.encoder.identity.get("backend") == "llama.cpp":
            params["backend"] = "llama.cpp"
        if self.framing != "sliced":
            params["framing"] = self.framing
        return format_spec("late", params)

    def index(self, units: Sequence[Chunk], documents: Mapping[str, Document] | None = None) -> LateChunkingRetriever:
        import torch

        if not documents:
            raise ConfigError("late chunking reads each unit inside its document: pass the documents, "
                              "index(units, documents=dataset.corpus)")
        missing = sorted({u.doc_id for u in units} - set(documents))
        if missing:
            raise ConfigError(f"late chunking: units of documents {missing[:3]} whose text was not given")
        self.units = units
        by_doc: dict[str, list[Chunk]] = {}
        for unit in units:
            by_doc.setdefault(unit.doc_id, []).append(unit)
        docs = [documents[d] for d in by_doc]
        key = content_key(kind="late", encoder=self.encoder.identity, overlap=self.overlap, window=self.late.window,
                          framing=self.framing,
                          docs=hash_texts((d.doc_id, d.text) for d in docs),
                          spans=hash_texts((u.chunk_id, f"{u.start}:{u.end}") for u in units), code=LATE_CODE_VERSION)

        def compute() -> np.ndarray:
            vectors = self.late.embed(docs, by_doc, progress=len(docs) > 50)
            return np.stack([vectors[u.chunk_id] for u in units])

        self.embeddings = self._cache.array("late", key, compute)
        self._matrix = torch.from_numpy(self.embeddings).to(self.encoder.device)
        return self

    def score(self, queries: list[str]) -> np.ndarray:
        import torch

        q = cached_encode(self.encoder, queries, "query", self._cache)
        return (torch.from_numpy(q).to(self.encoder.device) @ self._matrix.T).float().cpu().numpy()
