"""The values every layer passes around: documents, the units cut from them, ranked runs.

They sit at the bottom of the package (nothing here imports grainlab), so a retriever can
name a ``Chunk`` without importing the chunkers, and a chunker a ``Document`` without the
dataset loaders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Document:
    """A retrievable text with a stable id. ``text`` is what chunkers cut."""

    doc_id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class Chunk:
    """A retrieval unit cut from a document."""

    chunk_id: str
    doc_id: str
    text: str
    start: int
    end: int
    n_tokens: int
    position: int
    parent_id: str | None = None
    token_start: int | None = None
    token_end: int | None = None
    context: str = ""
    rewrite: str = ""
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def index_text(self) -> str:
        """What retrievers index: the chunk's ``context`` (e.g. its heading path, a table's
        header row) on a line before its text — or before its ``rewrite``, when a model rewrote
        the span (a Dense X proposition stands for the sentence it came from; ``text`` stays the
        exact source span). ``n_tokens`` counts this text."""
        body = self.rewrite or self.text
        return f"{self.context}\n{body}" if self.context else body

    def to_record(self) -> dict[str, Any]:
        """The JSON line written by ``grainlab chunk``."""
        return {"id": self.chunk_id, "doc_id": self.doc_id, "start": self.start, "end": self.end,
                "text": self.text, "n_tokens": self.n_tokens, "parent_id": self.parent_id,
                **({"context": self.context} if self.context else {}),
                **({"rewrite": self.rewrite} if self.rewrite else {})}


Run = dict[str, list[tuple[str, float]]]
"""query id → ``[(unit or document id, score), ...]`` best first."""
