"""The splitters of the libraries a pipeline already uses, as grainlab chunkers.

``langchain:RecursiveCharacterTextSplitter(chunk_size=800,chunk_overlap=80)``,
``chonkie:RecursiveChunker(chunk_size=256)``, ``semchunk(chunk_size=256)`` and
``llamaindex:SentenceSplitter(chunk_size=512)`` run the library itself and keep exact character
offsets: each chunk is placed where the library says it starts (LangChain's ``start_index``,
chonkie's ``start_index``, semchunk's offsets, LlamaIndex's ``start_char_idx``), checked against
the document text, else found in it after the previous chunk's start. A chunk whose text differs
from the document only in whitespace (LangChain strips chunks and re-joins its pieces with one
separator) is mapped to the source span its words come from, and its text is the document's; a
chunk rewritten beyond that is refused by name, never misplaced.
The library's name and installed version are in the chunker's version string, so in every
results key. These libraries are optional: ``pip install 'grainlab[splitters]'``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from grainlab.chunking.base import Chunker, make_chunk
from grainlab.errors import ConfigError
from grainlab.spec import format_value, parse_spec
from grainlab.types import Chunk, Document

LIBRARIES = {  # spec prefix → (module, distribution to install)
    "langchain": ("langchain_text_splitters", "langchain-text-splitters"),
    "chonkie": ("chonkie", "chonkie"),
    "semchunk": ("semchunk", "semchunk"),
    "llamaindex": ("llama_index.core.node_parser", "llama-index-core"),
}
FOREIGN_SPEC = re.compile(r"^\s*(langchain|chonkie|semchunk|llamaindex)(?::([A-Za-z_]\w*))?\s*(\(.*\))?\s*$", re.S)


def is_foreign(spec: str) -> bool:
    return bool(FOREIGN_SPEC.match(spec))


def _module(library: str):
    module, distribution = LIBRARIES[library]
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"the {library} splitter needs {distribution}: pip install 'grainlab[splitters]' "
                          f"(or pip install {distribution})") from None


def _spans(library: str, splitter: str, options: dict[str, Any], text: str,
           count_tokens: Callable[[str], int]) -> list[tuple[str, int | None]]:
    """The library's chunks of ``text``: each its text and the start it reports (``None``: none)."""
    module = _module(library)
    if library == "semchunk":
        chunker = module.chunkerify(count_tokens, int(options.get("chunk_size", 512)))
        extra = {"overlap": options["overlap"]} if "overlap" in options else {}
        pieces, offsets = chunker(text, offsets=True, **extra)
        return [(piece, start) for piece, (start, _) in zip(pieces, offsets)]
    cls = getattr(module, splitter, None)
    if cls is None:
        raise ConfigError(f"{library} has no splitter {splitter!r}")
    if library == "langchain":
        documents = cls(**options, add_start_index=True).create_documents([text])
        return [(d.page_content, d.metadata.get("start_index")) for d in documents]
    if library == "chonkie":
        return [(c.text, c.start_index) for c in cls(**options).chunk(text)]
    from llama_index.core import Document as LlamaDocument

    nodes = cls(**options).get_nodes_from_documents([LlamaDocument(text=text)])
    return [(n.get_content(), n.start_char_idx) for n in nodes]


def _whitespace_span(text: str, piece: str, cursor: int) -> tuple[int, int] | None:
    """The first span of ``text`` from ``cursor`` on whose words are ``piece``'s, whatever the
    whitespace between them: where a splitter stripped or re-joined the text at its separators."""
    words = piece.split()
    match = re.compile(r"\s+".join(map(re.escape, words))).search(text, cursor) if words else None
    return (match.start(), match.end()) if match else None


def place(text: str, pieces: list[tuple[str, int | None]], where: str) -> list[tuple[int, int]]:
    """``[start, end)`` of every non-blank piece in ``text``: at the start the library gave when the
    text is there and it is not before the previous piece's (a piece may start where the previous
    one did, when that one is its prefix), else found after the previous piece's start; a piece that occurs nowhere as it is
    but whose words do, with other whitespace between them, is mapped to that source span (its chunk
    text is the document's); a piece found nowhere is refused by name (:class:`ConfigError`)."""
    spans: list[tuple[int, int]] = []
    previous, previous_piece = -1, None
    for index, (piece, start) in enumerate(pieces):
        if not piece.strip():
            continue
        given = (start is not None and text[start:start + len(piece)] == piece and start >= previous
                 and not (start == previous and piece == previous_piece))  # overlapping chunks may share a start
        if not given:
            start = text.find(piece, previous + 1)
        span = (start, start + len(piece)) if start >= 0 else _whitespace_span(text, piece, previous + 1)
        if span is None:
            raise ConfigError(f"{where}: chunk {index} ({piece[:40]!r}…) is not in the document text (the splitter "
                              "rewrote more than its whitespace), so it has no exact offsets: choose options that "
                              "keep the text as it is")
        spans.append(span)
        previous, previous_piece = span[0], piece
    return spans


@dataclass(frozen=True)
class ForeignChunker(Chunker):
    """A library's splitter (see the module docstring); ``options`` are its keyword arguments and
    ``tokenizer`` counts each chunk's tokens (and semchunk's)."""

    library: str
    splitter: str
    options: tuple[tuple[str, Any], ...] = ()
    tokenizer: str = "cl100k_base"
    _counter: list = field(default_factory=list, compare=False, repr=False)

    name: ClassVar[str] = "foreign"
    version: ClassVar[str] = "2"  # bump when the same parameters would cut otherwise (what each version changed: CHANGELOG.md)

    @classmethod
    def from_spec(cls, spec: str, tokenizer: str | None = None) -> ForeignChunker:
        match = FOREIGN_SPEC.match(spec)
        if not match:
            raise ConfigError(f"not a library splitter spec: {spec!r}; e.g. "
                              "'langchain:RecursiveCharacterTextSplitter(chunk_size=800,chunk_overlap=80)'")
        library, splitter, args = match.group(1), match.group(2) or "", match.group(3) or "()"
        if library != "semchunk" and not splitter:
            raise ConfigError(f"name the {library} splitter: e.g. '{library}:<SplitterClass>(...)'")
        _, options = parse_spec("x" + args)
        return cls(library, splitter, tuple(sorted(options.items())), tokenizer or "cl100k_base")

    def params(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def spec(self) -> str:
        inner = ",".join(f"{k}={format_value(v)}" for k, v in self.options)
        return f"{self.library}{':' + self.splitter if self.splitter else ''}({inner})"

    @property
    def revision_spec(self) -> str:
        """The tokenizer that counts (semchunk: and cuts) the chunks' tokens, for the results key."""
        return f"foreign(tokenizer={self.tokenizer})"

    @property
    def version_string(self) -> str:
        """``foreign/<version>+<distribution>==<its version>``: the library's version is part of every key."""
        distribution = LIBRARIES[self.library][1]
        try:
            installed = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            installed = "not installed"
        return f"{self.name}/{self.version}+{distribution}=={installed}"

    def _count(self, text: str) -> int:
        if not self._counter:
            from grainlab.models.tokenizers import get_tokenizer

            self._counter.append(get_tokenizer(self.tokenizer).count)
        return self._counter[0](text)

    def chunk(self, doc: Document) -> list[Chunk]:
        if not doc.text.strip():
            return []
        pieces = _spans(self.library, self.splitter, dict(self.options), doc.text, self._count)
        spans = place(doc.text, pieces, f"{self.spec} on {doc.doc_id!r}")
        return [make_chunk(doc, i, start, end, self._count(doc.text[start:end])) for i, (start, end) in enumerate(spans)]
