"""Word-budget passages (Dense X / DPR-style): greedy whole sentences up to ``words`` words; a
final piece shorter than ``min_last`` words is merged into the previous passage.

A sentence longer than ``words`` words is cut into windows of ``words`` words. So a passage holds
at most ``words`` words, except the merged tail, which holds at most ``words + min_last − 1``.
Words are whitespace-separated tokens, as in the papers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register
from grainlab.chunking.sentences import SEGMENTER_VERSION, sentence_spans
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

WORD = re.compile(r"\S+")


def word_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text[start:end]``."""
    return [(m.start(), m.end()) for m in WORD.finditer(text, start, end)]


@register("passages")
@dataclass(frozen=True)
class PassageChunker(Chunker):
    """``passages(words=100,min_last=50,tokenizer=cl100k_base)``; ``n_tokens`` counts tokens."""

    words: int = 100
    min_last: int = 50
    tokenizer: str = DEFAULT_TOKENIZER
    version = f"2.{SEGMENTER_VERSION}"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    def __post_init__(self) -> None:
        if self.words < 1 or not 0 <= self.min_last <= self.words:
            raise ConfigError(f"passages needs words ≥ 1 and 0 ≤ min_last ≤ words, got {self.words}, {self.min_last}")

    @property
    def max_words(self) -> int:
        """The most words any passage can hold (a merged tail)."""
        return self.words + max(self.min_last - 1, 0)

    def _pieces(self, text: str) -> list[list[tuple[int, int]]]:
        """Sentences as lists of word spans; an over-long sentence becomes several pieces."""
        pieces = []
        for start, end in sentence_spans(text):
            words = word_spans(text, start, end)
            pieces += [words[i:i + self.words] for i in range(0, len(words), self.words)]
        return [p for p in pieces if p]

    def chunk(self, doc: Document) -> list[Chunk]:
        groups: list[list[tuple[int, int]]] = []
        for piece in self._pieces(doc.text):
            if groups and len(groups[-1]) + len(piece) <= self.words:
                groups[-1] += piece
            else:
                groups.append(list(piece))
        if len(groups) > 1 and len(groups[-1]) < self.min_last:
            tail = groups.pop()
            groups[-1] += tail
        tok = get_tokenizer(self.tokenizer)
        chunks = []
        for group in groups:
            start, end = group[0][0], group[-1][1]
            chunks.append(make_chunk(doc, len(chunks), start, end, tok.count(doc.text[start:end]),
                                     metadata={"n_words": len(group)}))
        return chunks
