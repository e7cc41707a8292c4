"""Sentence boundaries (pysbd, rule-based, offline) and the n-sentences chunker.

The rules follow each text's script (:func:`grainlab.languages.detect_language`): pysbd's English
rules, or its Japanese ones for Japanese text (``。！？`` end a sentence, a closing bracket such as
``」`` stays with the sentence it closes), mended where pysbd misses a full stop (:func:`japanese_starts`).
English text is split by pysbd's English rules alone. ``benchmarks/japanese_sentences.py`` measures pysbd against bunkai on real Japanese articles.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import ClassVar

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.errors import ConfigError
from grainlab.languages import detect_language
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

SEGMENTER_VERSION = "4"  # bump when the same text would split into other sentences (history: CHANGELOG.md)


@functools.lru_cache(maxsize=2)
def _segmenter(language: str):
    import pysbd

    return pysbd.Segmenter(language=language, clean=False)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (memoised: pysbd is slow on long documents
    and segmentation metrics ask for the same document's sentences many times)."""
    return list(_sentence_spans(text))


BLOCK_CHARS = 8_000
_LONG_LINE_CUT = re.compile(r"(?<=[a-z0-9)\]][.?!])[\"')\]]*\s+(?=[A-Z0-9\"'(])"
                            r"|(?<=[。！？])[」』）]*(?=[^」』）\s])")


def text_blocks(text: str, limit: int = BLOCK_CHARS) -> list[tuple[int, int]]:
    """Cut ``text`` into consecutive pieces of about ``limit`` characters at most, at line breaks
    (pysbd treats lines separately, so this changes nothing) and — for a single line longer than
    ``limit`` — after sentence-final punctuation followed by a capital (or after ``。！？`` and
    any closing brackets, in Japanese). pysbd's time grows with
    the square of a line's length; segmenting blocks keeps sentence splitting linear."""
    blocks: list[tuple[int, int]] = []
    start = 0
    while len(text) - start > limit:
        cut = text.rfind("\n", start, start + limit) + 1
        if cut <= start:  # one long line: its last sentence boundary within the limit, else the next one
            window = list(_LONG_LINE_CUT.finditer(text, start, start + limit))
            following = window[-1] if window else _LONG_LINE_CUT.search(text, start + limit)
            newline = text.find("\n", start + limit)
            cut = following.end() if following else len(text)
            if newline >= 0 and newline + 1 < cut:
                cut = newline + 1
        blocks.append((start, cut))
        start = cut
    blocks.append((start, len(text)))
    return [(a, b) for a, b in blocks if a < b]


_OPENING, _CLOSING, _FINAL = "「『（【", "」』）】", "。！？"


def japanese_starts(text: str, starts: list[int]) -> list[int]:
    """Sentence starts of Japanese ``text`` from pysbd's ``starts``, mended: a full stop ``。``
    outside brackets (「『（【 … 」』）】 on one line) that text follows on its line ends a sentence,
    and no sentence starts with sentence-final punctuation or a closing bracket (pysbd starts one at
    the ``。`` after a Latin abbreviation such as ``e.g.``: that mark belongs to the sentence before)."""
    mended = {0}
    for start in starts:
        while start < len(text) and text[start] in _FINAL + _CLOSING:
            start += 1
        mended.add(start)
    depth = 0
    for i, char in enumerate(text[:-1]):
        if char == "\n":
            depth = 0
        elif char in _OPENING:
            depth += 1
        elif char in _CLOSING and depth:
            depth -= 1
        elif char == "。" and depth == 0 and text[i + 1] not in _FINAL + _CLOSING + "\n…" \
                and not text[i + 1].isspace():
            mended.add(i + 1)
    return sorted(start for start in mended if start < len(text))


@functools.lru_cache(maxsize=256)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Character spans of the sentences of ``text``; together they cover every non-space char.

    pysbd proposes sentences block by block (:func:`text_blocks`); each is located in ``text``
    after the previous one, and a sentence runs up to the next one's start, so nothing pysbd
    drops or rewrites is lost.
    """
    if not text.strip():
        return ()
    language = detect_language(text)
    segmenter = _segmenter(language)
    starts: list[int] = []
    for block_start, block_end in text_blocks(text, BLOCK_CHARS):
        cursor = block_start
        first = True
        for sentence in segmenter.segment(text[block_start:block_end]):
            stripped = sentence.strip()
            if not stripped:
                continue
            found = text.find(stripped, cursor, block_end)
            if found < 0:
                continue
            if first:  # a block's first sentence starts at the block (nothing between is lost)
                found, first = block_start, False
            if not starts or found > starts[-1]:
                starts.append(found)
            cursor = max(cursor, found + len(stripped))
    if not starts:
        starts = [0]
    starts[0] = 0
    if language == "ja":
        starts = japanese_starts(text, starts)
    bounds = starts + [len(text)]
    spans = [trim_span(text, bounds[i], bounds[i + 1]) for i in range(len(starts))]
    return tuple((s, e) for s, e in spans if s < e)


@register("sentences")
@dataclass(frozen=True)
class SentenceChunker(Chunker):
    """``n`` consecutive sentences per chunk (the last chunk may hold fewer)."""

    version: ClassVar[str] = f"2.{SEGMENTER_VERSION}"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)
    n: int = 5
    tokenizer: str = DEFAULT_TOKENIZER

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ConfigError(f"sentences n must be ≥ 1, got {self.n}")

    def chunk(self, doc: Document) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        spans = sentence_spans(doc.text)
        chunks = []
        for position, first in enumerate(range(0, len(spans), self.n)):
            group = spans[first:first + self.n]
            start, end = group[0][0], group[-1][1]
            chunks.append(make_chunk(doc, position, start, end, tok.count(doc.text[start:end]),
                                     metadata={"n_sentences": len(group)}))
        return chunks
