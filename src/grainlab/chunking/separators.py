"""Recursive separator splitting as Chroma's report configures it (LangChain's recursive text
splitter: ``\\n\\n``, ``\\n``, ``.``, ``?``, ``!``, space, characters), with exact offsets.

At each level the first separator that occurs in the text is used; a separator starts the piece
after it (LangChain's ``keep_separator``). Pieces under the size limit are merged greedily into
chunks; a piece at or over it is split again with the remaining separators. With ``overlap``
a chunk starts with the last pieces of the one before, as many as fit in ``overlap`` tokens.
Counts are in ``tokenizer`` tokens and every chunk is re-counted exactly: none exceeds ``size``.
"""

from __future__ import annotations

from dataclasses import dataclass

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.chunking.recursive import MIN_SIZE
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import TextTokenizer, get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")
Piece = tuple[int, int, int]  # start, end, tokens


def split_keeping_separator(text: str, start: int, end: int, separator: str) -> list[tuple[int, int]]:
    """``[start, end)`` cut before each occurrence of ``separator`` (characters when it is empty)."""
    if separator == "":
        return [(i, i + 1) for i in range(start, end)]
    cuts, found = [start], text.find(separator, start, end)
    while found >= 0:
        if found > cuts[-1]:
            cuts.append(found)
        found = text.find(separator, found + len(separator), end)
    return [(a, b) for a, b in zip(cuts, cuts[1:] + [end]) if a < b]


@register("recursive_separators")
@dataclass(frozen=True)
class RecursiveSeparatorChunker(Chunker):
    """``recursive_separators(size=200,overlap=0,tokenizer=cl100k_base)``: the "Recursive" rows of
    Chroma's report (see the module docstring).

    Args:
        size: the largest chunk, in ``tokenizer`` tokens.
        overlap: tokens of the previous chunk's last pieces repeated at the start of the next.
        tokenizer: a tiktoken encoding or a Hugging Face model id.
    """

    size: int = 200
    overlap: int = 0
    tokenizer: str = DEFAULT_TOKENIZER
    version = "3"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)
    # 3: a single piece over the limit once trimmed (" fusion(" is fewer tokens than "fusion(") is cut at characters

    def __post_init__(self) -> None:
        if self.size < MIN_SIZE:
            raise ConfigError(f"recursive_separators size must be ≥ {MIN_SIZE} tokens, got {self.size}")
        if not 0 <= self.overlap < self.size:
            raise ConfigError(f"recursive_separators overlap must be in [0, size), got {self.overlap}")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The chunks' character spans, in order."""
        tok = get_tokenizer(self.tokenizer)
        out: list[tuple[int, int]] = []
        self._split(tok, text, 0, len(text), SEPARATORS, out)
        return out

    def chunk(self, doc: Document) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        return [make_chunk(doc, i, s, e, tok.count(doc.text[s:e])) for i, (s, e) in enumerate(self.spans(doc.text))]

    def _split(self, tok: TextTokenizer, text: str, start: int, end: int, separators: tuple[str, ...],
               out: list[tuple[int, int]]) -> None:
        level = next(i for i, sep in enumerate(separators) if sep == "" or text.find(sep, start, end) >= 0)
        rest = separators[level + 1:]
        small: list[Piece] = []
        for s, e in split_keeping_separator(text, start, end, separators[level]):
            n = tok.count(text[s:e])
            if n < self.size:
                small.append((s, e, n))
                continue
            self._merge(tok, text, small, out)
            small = []
            if rest:
                self._split(tok, text, s, e, rest, out)
            else:  # one character over the limit: cannot happen for size ≥ MIN_SIZE
                out.append(trim_span(text, s, e))
        self._merge(tok, text, small, out)

    def _merge(self, tok: TextTokenizer, text: str, pieces: list[Piece], out: list[tuple[int, int]]) -> None:
        current: list[Piece] = []
        total = 0
        for piece in pieces:
            if current and total + piece[2] > self.size:
                self._emit(tok, text, current, out)
                # without overlap nothing is carried, not even a piece a tokenizer counts as no
                # tokens (BERT's normalizer drops control characters): chunks would overlap there
                while current and (total > self.overlap or total + piece[2] > self.size or not self.overlap):
                    total -= current.pop(0)[2]
            current.append(piece)
            total += piece[2]
        if current:
            self._emit(tok, text, current, out)

    def _emit(self, tok: TextTokenizer, text: str, pieces: list[Piece], out: list[tuple[int, int]]) -> None:
        """A chunk over ``pieces``; summed piece counts can undercount the joined text, so the
        exact count decides, and a group over the limit gives up its last pieces to a next chunk."""
        group = list(pieces)
        while group:
            take = len(group)
            while True:
                start, end = trim_span(text, group[0][0], group[take - 1][1])
                if take == 1 or tok.count(text[start:end]) <= self.size:
                    break
                take -= 1
            if take == 1 and start < end and tok.count(text[start:end]) > self.size:
                self._cut_characters(tok, text, start, end, out)
            elif start < end and (not out or out[-1] != (start, end)):
                out.append((start, end))
            group = group[take:]

    def _cut_characters(self, tok: TextTokenizer, text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
        """One piece over the limit only once trimmed (its leading separator shared a token with
        its first word): cut at characters, as the last separator does, each chunk the longest
        prefix whose exact count fits."""
        while start < end:
            cut = end
            while cut > start + 1 and tok.count(text[start:cut]) > self.size:
                cut -= 1
            piece = trim_span(text, start, cut)
            if piece[0] < piece[1]:
                out.append(piece)
            start = trim_span(text, cut, end)[0] if cut < end else end
