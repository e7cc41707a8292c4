"""Structure-aware chunking of Markdown/HTML-like text, and parent–child chunking.

``structure``: headings open sections and a chunk never crosses a section. Heading lines it
reads: Markdown ATX (``#``…``######``), HTML (``<h1>``…``<h6>``), MediaWiki and WikiText
(``== Title ==``, ``= = Title = =``; level = the number of ``=`` on the left) and PubMed Central
plain-text section markers (``==== Front``, ``==== Body``, ``==== Refs``; level 1). Each chunk carries its heading path as ``context``. Inside a
section, blocks (paragraphs, lists, tables) are packed greedily up to ``size`` tokens; a block
that does not fit is cut at its own boundaries — a paragraph at sentences, a list at items, a
table at rows — and a piece that still does not fit into token windows. A list piece keeps its
lead-in line (the paragraph line ending in ``:`` just before the list) and a table piece its
header row(s), in ``context``, whenever the chunk does not already contain them.
``n_tokens`` counts ``index_text`` (context + text), so the limit holds for what is indexed; a
context that would take more than half the limit is shortened (last heading only, then none).

``parent_child``: parents are ``structure`` (or ``recursive``) chunks of ``parent_size``
tokens; the chunks returned are ``recursive`` children of ``child_size`` tokens cut inside
each parent, with ``parent_id`` naming the parent (``doc#p<i>``). ``parents(doc)`` gives the
parent chunks, for context expansion and for span coverage by a parent.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.chunking.fixed import FixedTokenChunker
from grainlab.chunking.recursive import MIN_SIZE, RecursiveChunker
from grainlab.chunking.sentences import SEGMENTER_VERSION, sentence_spans
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import TextTokenizer, get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

MD_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
HTML_HEADING = re.compile(r"^\s*<h([1-6])\b[^>]*>(.*?)</h\1>\s*$", re.IGNORECASE)
WIKI_HEADING = re.compile(r"^\s*(=(?: ?=)*) +(\S(?:.*?\S)?) +=(?: ?=)*\s*$")
PMC_SECTION = re.compile(r"^={4} +([A-Za-z][\w ]*?)\s*$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S|^\s*<li\b", re.IGNORECASE)
MD_TABLE_ROW = re.compile(r"^\s*\|")
MD_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
TAG = re.compile(r"<[^>]+>")


@dataclass
class Block:
    """A run of lines of one kind inside a section, with the places it may be cut."""

    kind: str  # heading | paragraph | list | table
    start: int
    end: int
    units: list[tuple[int, int]] = field(default_factory=list)  # cut points when the block is too big
    carry: str = ""  # lead-in (list) or header (table) repeated for pieces that lack it
    carry_span: tuple[int, int] | None = None


@dataclass
class Section:
    path: list[str]
    blocks: list[Block]


def _lines(text: str) -> list[tuple[int, int]]:
    spans, cursor = [], 0
    for line in text.split("\n"):
        spans.append((cursor, cursor + len(line)))
        cursor += len(line) + 1
    return spans


def heading_of(line: str) -> tuple[int, str] | None:
    """``(level, title)`` of a heading line (see the module docstring for the styles), else ``None``."""
    if match := MD_HEADING.match(line):
        return len(match.group(1)), match.group(2).strip()
    if match := HTML_HEADING.match(line):
        return int(match.group(1)), TAG.sub("", match.group(2)).strip()
    if match := PMC_SECTION.match(line):
        return 1, match.group(1).strip()
    if match := WIKI_HEADING.match(line):
        return min(match.group(1).count("="), 6), match.group(2).strip()
    return None


def _kind(line: str, in_html_table: bool) -> str:
    if not line.strip():
        return "blank"
    if heading_of(line):
        return "heading"
    if in_html_table or MD_TABLE_ROW.match(line) or "<table" in line.lower():
        return "table"
    if LIST_ITEM.match(line):
        return "list"
    return "paragraph"


def parse_sections(text: str) -> list[Section]:
    """Sections (heading path + blocks) of a Markdown/HTML-like text, with exact offsets."""
    sections = [Section([], [])]
    stack: list[tuple[int, str]] = []
    current: Block | None = None
    in_html_table = False
    for start, end in _lines(text):
        line = text[start:end]
        kind = _kind(line, in_html_table)
        if kind == "table" and "<table" in line.lower():
            in_html_table = True
        if in_html_table and "</table>" in line.lower():
            in_html_table = False
        if kind == "blank":
            if current is not None and current.kind != "list":  # a list survives blank lines between items
                current = None
            continue
        if kind == "heading":
            level, title = heading_of(line)  # type: ignore[misc]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            sections.append(Section([t for _, t in stack], [Block("heading", start, end)]))
            current = None
            continue
        if kind == "paragraph" and current is not None and current.kind == "list" and line[:1].isspace():
            current.units[-1] = (current.units[-1][0], end)  # an indented line continues the item above
            current.end = end
            continue
        if current is not None and current.kind == kind:
            current.end = end
            if kind in ("list", "table"):
                current.units.append((start, end))
            continue
        current = Block(kind, start, end, [(start, end)] if kind in ("list", "table") else [])
        sections[-1].blocks.append(current)
    for section in sections:
        _finish_blocks(text, section.blocks)
    return [s for s in sections if s.blocks]


def _finish_blocks(text: str, blocks: list[Block]) -> None:
    for index, block in enumerate(blocks):
        if block.kind == "paragraph":
            block.units = [(block.start + s, block.start + e) for s, e in sentence_spans(text[block.start:block.end])]
        elif block.kind == "table":
            header_rows = _table_header_rows(text, block.units)
            if header_rows and header_rows < len(block.units):
                block.carry_span = (block.units[0][0], block.units[header_rows - 1][1])
                block.carry = text[block.carry_span[0]:block.carry_span[1]]
                block.units = [block.carry_span] + block.units[header_rows:]
        elif block.kind == "list" and index > 0 and blocks[index - 1].kind == "paragraph":
            before = blocks[index - 1]
            last_line = text[before.start:before.end].rsplit("\n", 1)[-1]
            if last_line.rstrip().endswith(":"):
                line_start = before.end - len(last_line)
                block.carry_span = trim_span(text, line_start, before.end)
                block.carry = text[block.carry_span[0]:block.carry_span[1]]
        block.units = [trim_span(text, s, e) for s, e in block.units]
        block.units = [(s, e) for s, e in block.units if s < e] or [trim_span(text, block.start, block.end)]


def _table_header_rows(text: str, rows: list[tuple[int, int]]) -> int:
    """How many leading rows form the header: Markdown header + rule, or HTML up to the first ``</tr>``."""
    if len(rows) >= 2 and MD_TABLE_RULE.match(text[rows[1][0]:rows[1][1]]):
        return 2
    for i, (s, e) in enumerate(rows):
        if "</tr>" in text[s:e].lower():
            return i + 1 if "<th" in text[rows[0][0]:e].lower() else 0
    return 0


@register("structure")
@dataclass(frozen=True)
class StructureChunker(Chunker):
    """``structure(size=512,tokenizer=cl100k_base)``: sections by heading, blocks packed to ``size``."""

    size: int = 512
    tokenizer: str = DEFAULT_TOKENIZER
    version = f"3.{SEGMENTER_VERSION}"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    def __post_init__(self) -> None:
        if self.size < MIN_SIZE:
            raise ConfigError(f"structure size must be ≥ {MIN_SIZE} tokens, got {self.size}")

    def _path_context(self, tok: TextTokenizer, path: list[str]) -> str:
        for candidate in (" > ".join(path), path[-1] if path else ""):
            if candidate and tok.count(candidate) <= self.size // 2:
                return candidate
        return ""

    def _atoms(self, text: str, tok: TextTokenizer, block: Block, budget: int) -> Iterable[tuple[int, int, Block]]:
        """Pieces of a block that fit ``budget`` tokens (with the block's carry)."""
        start, end = trim_span(text, block.start, block.end)
        carry = tok.count(block.carry) + 1 if block.carry and tok.count(block.carry) <= self.size // 2 else 0
        if tok.count(text[start:end]) + carry <= budget:
            yield start, end, block
            return
        for s, e in block.units:
            if tok.count(text[s:e]) + carry <= budget:
                yield s, e, block
                continue
            windows = FixedTokenChunker(size=max(budget - carry, 1), overlap=0, tokenizer=self.tokenizer)
            for piece in windows.chunk(Document("_", text[s:e])):
                yield s + piece.start, s + piece.end, block

    def _context(self, tok: TextTokenizer, path_context: str, block: Block, start: int, end: int) -> str:
        parts = [path_context] if path_context else []
        if block.carry and block.carry_span and not (start <= block.carry_span[0] and block.carry_span[1] <= end) \
                and tok.count(block.carry) <= self.size // 2:
            parts.append(block.carry)
        return "\n".join(parts)

    def chunk(self, doc: Document) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        text = doc.text
        if not text.strip():
            return []
        chunks: list[Chunk] = []
        for section in parse_sections(text):
            full_path = self._path_context(tok, section.path)
            parent_path = self._path_context(tok, section.path[:-1])
            budget = self.size - (tok.count(full_path) + 1 if full_path else 0)
            atoms = [a for block in section.blocks for a in self._atoms(text, tok, block, max(budget, 1))]
            i = 0
            while i < len(atoms):
                j = i + 1
                best = self._build(doc, tok, section, atoms, i, j, full_path, parent_path, len(chunks))
                while j < len(atoms):
                    candidate = self._build(doc, tok, section, atoms, i, j + 1, full_path, parent_path, len(chunks))
                    if candidate.n_tokens > self.size:
                        break
                    best, j = candidate, j + 1
                chunks.append(best)
                i = j
        return chunks

    def _build(self, doc: Document, tok: TextTokenizer, section: Section, atoms: list[tuple[int, int, Block]],
               i: int, j: int, full_path: str, parent_path: str, position: int) -> Chunk:
        start, end = atoms[i][0], atoms[j - 1][1]
        starts_with_heading = section.blocks[0].kind == "heading" and start == trim_span(
            doc.text, section.blocks[0].start, section.blocks[0].end)[0]
        context = self._context(tok, parent_path if starts_with_heading else full_path, atoms[i][2], start, end)
        n_tokens = tok.count(f"{context}\n{doc.text[start:end]}" if context else doc.text[start:end])
        if n_tokens > self.size and j - i == 1:  # a lone piece: drop the context rather than exceed
            context, n_tokens = "", tok.count(doc.text[start:end])
        return make_chunk(doc, position, start, end, n_tokens, context=context,
                          metadata={"headings": list(section.path)})


@register("parent_child")
@dataclass(frozen=True)
class ParentChildChunker(Chunker):
    """``parent_child(child_size=128,parent_size=1024,parents=structure,tokenizer=cl100k_base)``."""

    has_parents: ClassVar[bool] = True

    child_size: int = 128
    parent_size: int = 1024
    parents: str = "structure"
    tokenizer: str = DEFAULT_TOKENIZER
    version = f"4.{SEGMENTER_VERSION}"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    def __post_init__(self) -> None:
        if self.parents not in ("structure", "recursive"):
            raise ConfigError(f"parent_child parents must be 'structure' or 'recursive', got {self.parents!r}")
        if not MIN_SIZE <= self.child_size <= self.parent_size:
            raise ConfigError(f"need {MIN_SIZE} ≤ child_size ≤ parent_size, got {self.child_size}, {self.parent_size}")

    def parent_chunker(self) -> Chunker:
        cls = StructureChunker if self.parents == "structure" else RecursiveChunker
        return cls(size=self.parent_size, tokenizer=self.tokenizer)

    def parents_of(self, doc: Document) -> list[Chunk]:
        """The parent chunks of ``doc``, with ids ``doc#p<i>``."""
        return [dataclasses.replace(p, chunk_id=f"{doc.doc_id}#p{p.position}")
                for p in self.parent_chunker().chunk(doc)]

    def chunk(self, doc: Document) -> list[Chunk]:
        children = RecursiveChunker(size=self.child_size, tokenizer=self.tokenizer)
        out: list[Chunk] = []
        for parent in self.parents_of(doc):
            for child in children.chunk(Document(parent.chunk_id, parent.text)):
                out.append(make_chunk(doc, len(out), parent.start + child.start, parent.start + child.end,
                                      child.n_tokens, parent_id=parent.chunk_id))
        return out

