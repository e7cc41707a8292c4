"""Evaluating chunking itself: gold-span coverage, boundary cuts, duplication, span overlap, AMI.

Spans are ``(doc_id, start, end)`` character ranges; chunks are anything with ``doc_id``,
``start``, ``end`` (and ``parent_id`` for coverage by a parent).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol


class SpanLike(Protocol):
    doc_id: str
    start: int
    end: int


Span = tuple[str, int, int]


def covers(chunk: SpanLike, span: Span) -> bool:
    """The gold span lies entirely inside the chunk."""
    doc_id, start, end = span
    return chunk.doc_id == doc_id and chunk.start <= start and end <= chunk.end


def span_coverage(retrieved: Sequence[SpanLike], span: Span, parents: dict[str, SpanLike] | None = None) -> str:
    """``"chunk"`` if one retrieved chunk holds the whole gold span, ``"parent"`` if the parent of
    a retrieved chunk does, ``"partial"`` if retrieved chunks only overlap it, else ``"none"``."""
    if any(covers(c, span) for c in retrieved):
        return "chunk"
    if parents and any(covers(parents[c.parent_id], span) for c in retrieved
                       if getattr(c, "parent_id", None) in parents):
        return "parent"
    doc_id, start, end = span
    if any(c.doc_id == doc_id and c.start < end and start < c.end for c in retrieved):
        return "partial"
    return "none"


def boundary_cut(chunks: Sequence[SpanLike], span: Span) -> bool:
    """True when no single chunk of the document contains the whole gold span."""
    return not any(covers(c, span) for c in chunks if c.doc_id == span[0])


def boundary_retention(chunks: Sequence[SpanLike], spans: Iterable[Span]) -> float:
    """Share of gold spans kept whole by some chunk (1 − share cut by a boundary)."""
    spans = list(spans)
    by_doc: dict[str, list[SpanLike]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    kept = sum(not boundary_cut(by_doc.get(s[0], []), s) for s in spans)
    return kept / len(spans) if spans else math.nan


def duplication_rate(chunk_tokens: Sequence[int], document_tokens: int) -> float:
    """Tokens indexed beyond the original: ``(Σ chunk tokens − document tokens) / document tokens``."""
    return (sum(chunk_tokens) - document_tokens) / document_tokens if document_tokens else 0.0


def fixed_window_count(total: int, size: int, overlap: int) -> int:
    """Windows a fixed-size chunker makes: ``N = 1 + ceil((T − L) / S)`` with stride ``S = L − overlap``."""
    if total <= 0:
        return 0
    if total <= size:
        return 1
    return 1 + math.ceil((total - size) / (size - overlap))


def _intervals(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def _length(intervals: list[tuple[int, int]]) -> int:
    return sum(b - a for a, b in intervals)


def _intersection(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def to_token_interval(token_starts: Sequence[int], start: int, end: int) -> tuple[int, int]:
    """Character range → the range of token indices whose characters it touches
    (token ``i`` spans ``[token_starts[i], token_starts[i+1])``)."""
    first = bisect.bisect_right(token_starts, start) - 1
    last = bisect.bisect_left(token_starts, end)
    return max(first, 0), max(last, max(first, 0))


def span_overlap(retrieved: Sequence[SpanLike], gold: Sequence[Span],
                 token_starts: Mapping[str, Sequence[int]] | None = None) -> dict[str, float]:
    """Recall, precision and IoU of retrieved chunks against gold spans (Chroma's chunking
    evaluation); overlapping chunks are counted once. In characters by default, in tokens when
    ``token_starts`` (document id → start offset of each token) is given."""
    docs = {c.doc_id for c in retrieved} | {g[0] for g in gold}
    inter = ret_len = gold_len = union = 0
    for doc in docs:
        def unit(s: int, e: int, doc: str = doc) -> tuple[int, int]:
            return to_token_interval(token_starts[doc], s, e) if token_starts is not None else (s, e)

        r = _intervals(unit(c.start, c.end) for c in retrieved if c.doc_id == doc)
        g = _intervals(unit(s, e) for d, s, e in gold if d == doc)
        shared = _intersection(r, g)
        inter += shared
        ret_len += _length(r)
        gold_len += _length(g)
        union += _length(r) + _length(g) - shared
    return {"recall": inter / gold_len if gold_len else math.nan,
            "precision": inter / ret_len if ret_len else math.nan,
            "iou": inter / union if union else math.nan}


def sentence_labels(sentences: Sequence[tuple[int, int]], segments: Sequence[tuple[int, int]]) -> list[int]:
    """Label each sentence with the index of the segment (a chunk, or a gold section) holding
    its midpoint; ``-1`` for a sentence outside every segment."""
    starts = [s for s, _ in segments]
    labels = []
    for start, end in sentences:
        middle = (start + end) // 2
        i = bisect.bisect_right(starts, middle) - 1
        labels.append(i if i >= 0 and segments[i][0] <= middle < segments[i][1] else -1)
    return labels


def segmentation_ami(predicted: Sequence[int], gold: Sequence[int]) -> float:
    """Adjusted mutual information of two labelings of the same units (scikit-learn)."""
    from sklearn.metrics import adjusted_mutual_info_score

    return float(adjusted_mutual_info_score(gold, predicted))
