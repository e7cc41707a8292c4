"""Fixed-size token windows with overlap, and the whole-document "chunker"."""

from __future__ import annotations

import math
from dataclasses import dataclass

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document


@register("fixed_tokens")
@dataclass(frozen=True)
class FixedTokenChunker(Chunker):
    """Windows of ``size`` tokens; consecutive windows share exactly ``overlap`` tokens.

    A window covers the characters from its first token's start to the next window
    token's start (whitespace trimmed). If re-tokenizing that text gives more than
    ``size`` tokens (possible where a window starts inside a word), the window gives
    up its last token until it fits, so ``tokenizer.count(chunk.text) <= size`` always.
    The next window starts ``overlap`` tokens before the end of this one; only if a
    window had to shrink to ``overlap`` tokens or fewer (text whose characters span
    several byte tokens, with overlap close to size) does it start one token later.
    """

    size: int = 256
    overlap: int = 0
    tokenizer: str = DEFAULT_TOKENIZER

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ConfigError(f"fixed_tokens size must be ≥ 1, got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise ConfigError(f"fixed_tokens overlap must be in [0, size), got {self.overlap}")

    def chunk(self, doc: Document) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        # Characters the tokenizer drops (e.g. control characters) stay with a neighbour:
        # the first window starts at 0 and each window runs to the next one's first token.
        starts = tok.token_starts(doc.text) or ([0] if doc.text.strip() else [])
        if starts:
            starts[0] = 0
        n = len(starts)
        bounds = starts + [len(doc.text)]
        chunks: list[Chunk] = []
        first = 0
        while first < n:
            last = min(first + self.size, n)
            while True:
                start, end = trim_span(doc.text, bounds[first], bounds[last])
                count = tok.count(doc.text[start:end])
                if count <= self.size or last - first <= 1:
                    break
                last -= 1
            if start < end:
                chunks.append(make_chunk(doc, len(chunks), start, end, count,
                                         token_start=first, token_end=last))
            if last >= n:
                break
            first = max(last - self.overlap, first + 1)
        return chunks

    def covered_tokens(self, unit: Chunk) -> int:
        """The document tokens the window spans (its own re-tokenized count can differ)."""
        return unit.token_end - unit.token_start  # type: ignore[operator]

    def expected_units(self, document_tokens: int) -> int:
        """``N = 1 + ceil((T − L) / S)`` windows, stride ``S = L − overlap`` (exact unless a window
        had to shrink to stay within the limit)."""
        return fixed_window_count(document_tokens, self.size, self.overlap)


def fixed_window_count(total: int, size: int, overlap: int) -> int:
    """Windows a fixed-size chunker makes: ``N = 1 + ceil((T − L) / S)`` with stride ``S = L − overlap``."""
    if total <= 0:
        return 0
    if total <= size:
        return 1
    return 1 + math.ceil((total - size) / (size - overlap))


@register("none")
@dataclass(frozen=True)
class WholeDocument(Chunker):
    """The whole document as one unit (whitespace trimmed); ``n_tokens`` in cl100k tokens."""

    def chunk(self, doc: Document) -> list[Chunk]:
        start, end = trim_span(doc.text, 0, len(doc.text))
        if start == end:
            return []
        return [make_chunk(doc, 0, start, end, get_tokenizer(DEFAULT_TOKENIZER).count(doc.text[start:end]))]
