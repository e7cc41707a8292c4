"""Semantic chunkers over sentence embeddings: Max–Min (Kiss et al. 2025) and breakpoints.

Both group consecutive sentences (pysbd boundaries), then enforce a maximum chunk size in
tokens by splitting oversize groups at sentence boundaries (and an oversize sentence into
token windows), which the Max–Min authors' code does not do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register
from grainlab.chunking.fixed import FixedTokenChunker
from grainlab.chunking.recursive import MIN_SIZE
from grainlab.chunking.sentences import SEGMENTER_VERSION, sentence_spans
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def maxmin_groups(embeddings: np.ndarray, threshold: float = 0.6, c: float = 0.9, init: float = 1.5) -> list[int]:
    """Start index of each group, following the authors' decision rule.

    ``embeddings`` are L2-normalised rows (cosine = dot product). A sentence joins the current
    group if its largest similarity to the group's sentences exceeds
    ``max(threshold, pairwise_min · c · sigmoid(|group| − 1))``; for a one-sentence group the
    test is ``init · sim > threshold``. ``pairwise_min`` is the smallest similarity seen inside
    the group, updated after each test (so a rejected sentence never lowers the next group's).
    """
    starts = [0] if len(embeddings) else []
    group_start, group_end = 0, 1
    pairwise_min = -math.inf
    for i in range(1, len(embeddings)):
        sims = embeddings[group_start:group_end] @ embeddings[i]
        if group_end - group_start > 1:
            adjusted = pairwise_min * c * _sigmoid((group_end - group_start) - 1)
            best = float(sims.max())
            pairwise_min = min(float(sims.min()), pairwise_min)
        else:
            adjusted = 0.0
            pairwise_min = float(sims[0])
            best = init * pairwise_min
        if best > max(adjusted, threshold):
            group_end += 1
        else:
            starts.append(i)
            group_start, group_end = i, i + 1
            pairwise_min = -math.inf
    return starts


def breakpoint_groups(embeddings: np.ndarray, method: str = "percentile", amount: float = 95.0) -> list[int]:
    """Start index of each group: a new group begins after a cosine distance between adjacent
    sentences above the ``amount``-th percentile (``percentile``) or mean + ``amount`` std (``std``)."""
    if len(embeddings) < 2:
        return [0] if len(embeddings) else []
    distances = 1.0 - np.sum(embeddings[:-1] * embeddings[1:], axis=1)
    if method == "percentile":
        cut = float(np.percentile(distances, amount))
    elif method == "std":
        cut = float(distances.mean() + amount * distances.std())
    else:
        raise ConfigError(f"breakpoint method must be 'percentile' or 'std', got {method!r}")
    return [0] + [i + 1 for i, d in enumerate(distances) if d > cut]


SENTENCE_ENCODERS: dict[str, Callable[[list[str]], np.ndarray]] = {}


def register_sentence_encoder(name: str, encode: Callable[[list[str]], np.ndarray]) -> None:
    """Serve the ``model=name`` of the semantic chunkers from ``encode`` (texts → unit vectors)
    instead of a Hugging Face model: the seam tests use for a fast, deterministic stub."""
    if "/" in name:
        raise ConfigError(f"{name!r} looks like a Hugging Face id; give the stub encoder a name without '/'")
    SENTENCE_ENCODERS[name] = encode


def embed_texts(model: str, texts: list[str]) -> np.ndarray:
    """Unit vectors of ``texts`` from ``model`` (a Hugging Face id, cached on disk, or a name
    registered with :func:`register_sentence_encoder`)."""
    from grainlab.models.embedding_cache import cached_encode
    from grainlab.models.encoders import get_encoder

    if not texts:
        return np.zeros((0, 1), np.float32)
    if model in SENTENCE_ENCODERS:
        return np.asarray(SENTENCE_ENCODERS[model](texts), dtype=np.float32)
    return cached_encode(get_encoder(model), texts)


class _SentenceGroupChunker(Chunker):
    """Shared machinery: sentences → embeddings → groups → size-limited chunks."""

    version: ClassVar[str] = f"2.{SEGMENTER_VERSION}"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    model: str
    size: int
    tokenizer: str

    def _groups(self, embeddings: np.ndarray) -> list[int]:
        raise NotImplementedError

    def _check_size(self) -> None:
        if self.size < MIN_SIZE:
            raise ConfigError(f"{self.name} size must be ≥ {MIN_SIZE} tokens, got {self.size}")

    def _embed(self, texts: list[str]) -> np.ndarray:
        return embed_texts(self.model, texts)

    def _chunks(self, doc: Document, spans: list[tuple[int, int]], embeddings: np.ndarray) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        starts = self._groups(embeddings) + [len(spans)]
        pieces: list[tuple[int, int]] = []
        for first, stop in zip(starts, starts[1:]):
            pieces.extend(self._fit(doc.text, spans[first:stop], tok))
        return [make_chunk(doc, i, s, e, tok.count(doc.text[s:e])) for i, (s, e) in enumerate(pieces)]

    def _fit(self, text: str, group: list[tuple[int, int]], tok) -> Iterable[tuple[int, int]]:
        """Split a group at sentence boundaries until every piece has ≤ ``size`` tokens."""
        current: list[tuple[int, int]] = []
        for span in group:
            if tok.count(text[span[0]:span[1]]) > self.size:
                if current:
                    yield current[0][0], current[-1][1]
                    current = []
                yield from self._windows(text, span)
                continue
            candidate = current + [span]
            if current and tok.count(text[candidate[0][0]:candidate[-1][1]]) > self.size:
                yield current[0][0], current[-1][1]
                candidate = [span]
            current = candidate
        if current:
            yield current[0][0], current[-1][1]

    def _windows(self, text: str, span: tuple[int, int]) -> Iterable[tuple[int, int]]:
        windows = FixedTokenChunker(size=self.size, overlap=0, tokenizer=self.tokenizer)
        for piece in windows.chunk(Document("_", text[span[0]:span[1]])):
            yield span[0] + piece.start, span[0] + piece.end

    def chunk(self, doc: Document) -> list[Chunk]:
        return self.chunk_many([doc])

    def chunk_many(self, docs: Iterable[Document]) -> list[Chunk]:
        """All sentences of all documents are embedded in one batched call."""
        docs = list(docs)
        spans = [sentence_spans(d.text) for d in docs]
        texts = [d.text[s:e] for d, doc_spans in zip(docs, spans) for s, e in doc_spans]
        embeddings = self._embed(texts)
        out, cursor = [], 0
        for doc, doc_spans in zip(docs, spans):
            out += self._chunks(doc, doc_spans, embeddings[cursor:cursor + len(doc_spans)])
            cursor += len(doc_spans)
        return out


@register("maxmin")
@dataclass(frozen=True)
class MaxMinChunker(_SentenceGroupChunker):
    """``maxmin(threshold=0.6,c=0.9,init=1.5,size=512,model=...,tokenizer=cl100k_base)``."""

    threshold: float = 0.6
    c: float = 0.9
    init: float = 1.5
    size: int = 512
    model: str = DEFAULT_MODEL
    tokenizer: str = DEFAULT_TOKENIZER

    def __post_init__(self) -> None:
        self._check_size()
        if not -1 <= self.threshold <= 1:
            raise ConfigError(f"maxmin threshold is a cosine similarity, from -1 to 1, got {self.threshold}")
        if self.c <= 0 or self.init <= 0:
            raise ConfigError(f"maxmin c and init must be > 0, got c={self.c}, init={self.init}")

    def _groups(self, embeddings: np.ndarray) -> list[int]:
        return maxmin_groups(embeddings, self.threshold, self.c, self.init)


@register("breakpoint")
@dataclass(frozen=True)
class BreakpointChunker(_SentenceGroupChunker):
    """``breakpoint(method=percentile,amount=95.0,size=512,model=...,tokenizer=cl100k_base)``."""

    method: str = "percentile"
    amount: float = 95.0
    size: int = 512
    model: str = DEFAULT_MODEL
    tokenizer: str = DEFAULT_TOKENIZER

    def __post_init__(self) -> None:
        self._check_size()
        if self.method not in ("percentile", "std"):
            raise ConfigError(f"breakpoint method must be 'percentile' or 'std', got {self.method!r}")
        if self.method == "percentile" and not 0 <= self.amount <= 100:
            raise ConfigError(f"breakpoint(method=percentile) takes an amount from 0 to 100, got {self.amount}")
        if self.method == "std" and self.amount < 0:
            raise ConfigError(f"breakpoint(method=std) takes an amount ≥ 0 (standard deviations), got {self.amount}")

    def _groups(self, embeddings: np.ndarray) -> list[int]:
        return breakpoint_groups(embeddings, self.method, self.amount)

