"""Recursive separator splitting under a token limit (LangChain-style, with offsets)."""

from __future__ import annotations

from dataclasses import dataclass

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import TextTokenizer, get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

SEPARATORS = ("\n\n", "\n", ". ", " ", "")
MIN_SIZE = 8  # one character can take up to 4 byte-level tokens


def _split_at(text: str, start: int, end: int, separator: str) -> list[tuple[int, int]]:
    """Pieces of ``[start, end)`` cut after each ``separator`` (kept with the left piece)."""
    if separator == "":
        return [(i, i + 1) for i in range(start, end)]
    pieces, cursor = [], start
    while True:
        found = text.find(separator, cursor, end)
        if found < 0:
            break
        cut = found + len(separator)
        pieces.append((cursor, cut))
        cursor = cut
    if cursor < end:
        pieces.append((cursor, end))
    return pieces


@register("recursive")
@dataclass(frozen=True)
class RecursiveChunker(Chunker):
    """Split at paragraphs, then lines, sentences, words, characters until pieces fit;
    merge neighbouring pieces greedily up to ``size`` tokens."""

    size: int = 256
    tokenizer: str = DEFAULT_TOKENIZER
    version = "2"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    def __post_init__(self) -> None:
        if self.size < MIN_SIZE:
            raise ConfigError(f"recursive size must be ≥ {MIN_SIZE} tokens, got {self.size}")

    def _leaves(self, tok: TextTokenizer, text: str, start: int, end: int, level: int,
                out: list[tuple[int, int, int]]) -> None:
        count = tok.count(text[slice(*trim_span(text, start, end))])  # counted as it will be cut: trimmed
        if count <= self.size or level >= len(SEPARATORS):
            out.append((start, end, count))
            return
        for piece_start, piece_end in _split_at(text, start, end, SEPARATORS[level]):
            self._leaves(tok, text, piece_start, piece_end, level + 1, out)

    def chunk(self, doc: Document) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        text = doc.text
        leaves: list[tuple[int, int, int]] = []
        self._leaves(tok, text, 0, len(text), 0, leaves)
        chunks: list[Chunk] = []
        i = 0
        while i < len(leaves):
            j, total = i, 0
            while j < len(leaves) and (j == i or total + leaves[j][2] <= self.size):
                total += leaves[j][2]
                j += 1
            while True:  # the sum of piece counts is an estimate: verify exactly
                start, end = trim_span(text, leaves[i][0], leaves[j - 1][1])
                count = tok.count(text[start:end])
                if count <= self.size or j - i == 1:
                    break
                j -= 1
            if start < end:
                chunks.append(make_chunk(doc, len(chunks), start, end, count))
            i = j
        return chunks
