"""Evaluating chunking itself: gold-span coverage, boundary cuts, duplication, span overlap, AMI.

Spans are ``(doc_id, start, end)`` character ranges; chunks are anything with ``doc_id``,
``start``, ``end`` (and ``parent_id`` for coverage by a parent).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol


class SpanLike(Protocol):
    doc_id: str
    start: int
    end: int


class CountedSpan(SpanLike, Protocol):
    n_tokens: int


Span = tuple[str, int, int]


def covers(chunk: SpanLike, span: Span) -> bool:
    """The gold span lies entirely inside the chunk."""
    doc_id, start, end = span
    return chunk.doc_id == doc_id and chunk.start <= start and end <= chunk.end


def overlaps(chunk: SpanLike, span: Span) -> bool:
    """The chunk shares at least one character with the gold span."""
    doc_id, start, end = span
    return chunk.doc_id == doc_id and chunk.start < end and start < chunk.end


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


def excess_tokens(chunks: Iterable[CountedSpan], texts: Mapping[str, str], count: Callable[[str], int]) -> float:
    """Tokens indexed beyond the text the chunks cover: ``Σ chunk tokens / covered tokens − 1``,
    where a chunk's tokens are those of what it indexes (``n_tokens``: a heading path counts) and
    the covered text is each document's stretches of overlapping chunks, merged and counted once
    by ``count`` (chunks that only touch stay apart: each is its own text). 0 for chunks that neither overlap nor add text (unlike :func:`duplication_rate`,
    whose whole-document count can exceed the chunks' and go below 0)."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    indexed = 0
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append((chunk.start, chunk.end))
        indexed += chunk.n_tokens
    covered = 0
    for doc, spans in by_doc.items():
        stretches: list[list[int]] = []
        for start, end in sorted(spans):
            if stretches and start < stretches[-1][1]:
                stretches[-1][1] = max(stretches[-1][1], end)
            else:
                stretches.append([start, end])
        covered += sum(count(texts[doc][a:b]) for a, b in stretches)
    return indexed / covered - 1 if covered else 0.0


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


COUNTS = ("union", "sum")


def _unit(token_starts: Mapping[str, Sequence[int]] | None, doc: str, start: int, end: int) -> tuple[int, int]:
    return to_token_interval(token_starts[doc], start, end) if token_starts is not None else (start, end)


def span_scores(retrieved: Sequence[SpanLike], gold: Sequence[Span],
                token_starts: Mapping[str, Sequence[int]] | None = None, count: str = "union") -> dict[str, float]:
    """Recall, precision and IoU of retrieved chunks against gold spans (Smith & Troynikov 2024,
    Chroma's chunking evaluation), in characters, or in tokens when ``token_starts`` (document id →
    start offset of each token) is given.

    With C = the gold characters the retrieved chunks cover (each counted once):

    - ``count="union"``: recall = C / |∪ gold|, precision = C / |∪ retrieved|, IoU = C / |∪ gold ∪
      ∪ retrieved| — overlapping chunks pay for their shared text once.
    - ``count="sum"`` (Chroma's code): recall = C / Σ|gold_j|, precision = C / Σ|retrieved_i|,
      IoU = C / (Σ|retrieved_i| + Σ|gold_j| − C) — every retrieved chunk pays for its whole length,
      so overlapping chunks pay twice for what they share (deliberately, per the report).

    Chunks of other documents count in the denominators, not in C. ``NaN`` where a denominator is 0.
    """
    if count not in COUNTS:
        raise ValueError(f"count must be one of {COUNTS}, got {count!r}")
    docs = {c.doc_id for c in retrieved} | {g[0] for g in gold}
    covered = ret_union = gold_union = union = ret_sum = gold_sum = 0
    for doc in docs:
        r_parts = [_unit(token_starts, doc, c.start, c.end) for c in retrieved if c.doc_id == doc]
        g_parts = [_unit(token_starts, doc, s, e) for d, s, e in gold if d == doc]
        r, g = _intervals(r_parts), _intervals(g_parts)
        shared = _intersection(r, g)
        covered += shared
        ret_union, gold_union = ret_union + _length(r), gold_union + _length(g)
        union += _length(r) + _length(g) - shared
        ret_sum, gold_sum = ret_sum + sum(e - s for s, e in r_parts), gold_sum + sum(e - s for s, e in g_parts)
    if count == "sum":
        ret_union, gold_union, union = ret_sum, gold_sum, ret_sum + gold_sum - covered

    def ratio(denominator: int) -> float:
        return covered / denominator if denominator else math.nan

    return {"recall": ratio(gold_union), "precision": ratio(ret_union), "iou": ratio(union)}


def precision_omega(chunks: Sequence[SpanLike], gold: Sequence[Span],
                    token_starts: Mapping[str, Sequence[int]] | None = None, count: str = "union") -> float:
    """PrecisionΩ (Smith & Troynikov 2024): the precision a chunking allows at best — every chunk
    that touches a gold span retrieved, nothing else: C / (|those chunks| + |gold left uncovered|),
    the chunks' size as their union (``count="union"``, what Chroma's code computes) or the sum of
    their lengths (``"sum"``). As in Chroma's code a chunk that merely touches a gold span (shares
    an end point) counts as touching it. ``NaN`` without gold spans."""
    if count not in COUNTS:
        raise ValueError(f"count must be one of {COUNTS}, got {count!r}")
    covered = size = left = 0
    for doc in {d for d, _, _ in gold}:
        g_parts = [_unit(token_starts, doc, s, e) for d, s, e in gold if d == doc]
        touching = {(c.start, c.end) for c in chunks if c.doc_id == doc
                    and any(c.start <= e and s <= c.end for d, s, e in gold if d == doc)}
        r_parts = [_unit(token_starts, doc, s, e) for s, e in sorted(touching)]
        r, g = _intervals(r_parts), _intervals(g_parts)
        shared = _intersection(r, g)
        covered += shared
        size += sum(e - s for s, e in r_parts) if count == "sum" else _length(r)
        left += (sum(e - s for s, e in g_parts) if count == "sum" else _length(g)) - shared
    return covered / (size + left) if size + left else math.nan


def first_copy(text: str, start: int, end: int) -> tuple[int, int]:
    """Where Chroma's code places a chunk: at the first occurrence of its text in the document
    (``str.find``, after dropping one trailing ``.``, as its ``rigorous_document_search`` does).
    A chunk cut from the second copy of a repeated passage lands on the first copy, so it matches
    gold excerpts whose offsets point there (the ``any_copy`` convention)."""
    target = text[start:end]
    if target.endswith("."):
        target = target[:-1]
    found = text.find(target)
    return (found, found + len(target)) if found >= 0 and target else (start, end)


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
