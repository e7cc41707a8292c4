"""Cluster-semantic chunking (the idea of Chroma's ClusterSemanticChunker, Smith & Troynikov 2024):
cut the text into small pieces, embed them, and choose the segmentation into consecutive runs of
pieces that maximises the total within-run similarity, under a size limit.

Pieces are ``recursive_separators(size=piece)`` chunks. Similarities are cosines with their mean
(over distinct pairs) subtracted and the diagonal zeroed, so a run earns its pairs' similarity
above the document's average; dynamic programming over run ends finds the best segmentation
exactly. Unlike the original, a run's size is its exact token count (not a piece count), chunks
keep exact offsets (the original joins pieces with spaces), and a run never exceeds ``size``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.chunking.recursive import MIN_SIZE
from grainlab.chunking.semantic import DEFAULT_MODEL, embed_texts
from grainlab.chunking.separators import RecursiveSeparatorChunker
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document


def best_segmentation(similarity: np.ndarray, allowed: np.ndarray) -> list[tuple[int, int]]:
    """Runs ``[first, last]`` covering ``0..n−1`` that maximise Σ over runs of the sum of
    ``similarity`` inside the run's block; ``allowed[i, m]`` says whether the run of ``m + 1``
    pieces ending at ``i`` may be taken (a single piece always may)."""
    n = len(similarity)
    if n == 0:
        return []
    prefix = np.zeros((n + 1, n + 1))
    prefix[1:, 1:] = similarity.cumsum(0).cumsum(1)

    def block(a: int, b: int) -> float:  # sum of similarity[a:b+1, a:b+1]
        return float(prefix[b + 1, b + 1] - prefix[a, b + 1] - prefix[b + 1, a] + prefix[a, a])

    best = np.full(n + 1, -np.inf)
    best[0] = 0.0
    start = np.zeros(n, dtype=int)
    for i in range(n):
        for m in range(allowed.shape[1]):
            first = i - m
            if first < 0 or (m and not allowed[i, m]):
                continue
            value = best[first] + block(first, i)
            if value > best[i + 1]:
                best[i + 1], start[i] = value, first
    runs, i = [], n - 1
    while i >= 0:
        runs.append((int(start[i]), i))
        i = start[i] - 1
    return runs[::-1]


def centred_similarity(embeddings: np.ndarray) -> np.ndarray:
    """Cosine similarities minus their mean over distinct pairs, with a zero diagonal."""
    sim = embeddings @ embeddings.T
    n = len(sim)
    if n > 1:
        sim = sim - sim[np.triu_indices(n, k=1)].mean()
    np.fill_diagonal(sim, 0.0)
    return sim


@register("cluster_semantic")
@dataclass(frozen=True)
class ClusterSemanticChunker(Chunker):
    """``cluster_semantic(size=200,piece=50,model=...,tokenizer=cl100k_base)``.

    Args:
        size: the largest chunk, in ``tokenizer`` tokens.
        piece: the size of the pieces runs are made of (Chroma: 50).
        model: the sentence encoder (Hugging Face id) that embeds the pieces.
        tokenizer: a tiktoken encoding or a Hugging Face model id.
    """

    size: int = 200
    piece: int = 50
    model: str = DEFAULT_MODEL
    tokenizer: str = DEFAULT_TOKENIZER
    version = "2"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    def __post_init__(self) -> None:
        if not MIN_SIZE <= self.piece <= self.size:
            raise ConfigError(f"cluster_semantic needs {MIN_SIZE} ≤ piece ≤ size, got piece={self.piece}, size={self.size}")

    def chunk(self, doc: Document) -> list[Chunk]:
        return self.chunk_many([doc])

    def chunk_many(self, docs: Iterable[Document]) -> list[Chunk]:
        """Every document's pieces are embedded in one batched call."""
        docs = list(docs)
        splitter = RecursiveSeparatorChunker(size=self.piece, overlap=0, tokenizer=self.tokenizer)
        pieces = [splitter.spans(d.text) for d in docs]
        embeddings = embed_texts(self.model, [d.text[s:e] for d, spans in zip(docs, pieces) for s, e in spans])
        out, cursor = [], 0
        for doc, spans in zip(docs, pieces):
            out += self._chunks(doc, spans, embeddings[cursor:cursor + len(spans)])
            cursor += len(spans)
        return out

    def _chunks(self, doc: Document, pieces: list[tuple[int, int]], embeddings: np.ndarray) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        longest = max(1, self.size // max(1, min((tok.count(doc.text[s:e]) for s, e in pieces), default=1)))
        allowed = np.zeros((len(pieces), longest), dtype=bool)
        counts: dict[tuple[int, int], int] = {}
        for i in range(len(pieces)):
            for m in range(1, longest):
                if i - m < 0:
                    break
                start, end = trim_span(doc.text, pieces[i - m][0], pieces[i][1])
                counts[(i - m, i)] = tok.count(doc.text[start:end])
                if counts[(i - m, i)] > self.size:
                    break  # longer runs ending at i are longer still
                allowed[i, m] = True
        runs = best_segmentation(centred_similarity(embeddings), allowed) if len(pieces) else []
        chunks = []
        for first, last in runs:
            start, end = trim_span(doc.text, pieces[first][0], pieces[last][1])
            n = counts.get((first, last)) if first != last else tok.count(doc.text[start:end])
            chunks.append(make_chunk(doc, len(chunks), start, end, n))
        return chunks
