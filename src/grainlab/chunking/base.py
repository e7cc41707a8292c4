"""The chunker protocol, the ``Chunk`` value and the name registry.

Every chunk keeps exact offsets into its document (``doc.text[start:end] == text``) and
an id derived from the document id and its position, so ids are stable across runs.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar

from grainlab.errors import ConfigError
from grainlab.spec import format_spec
from grainlab.types import Chunk, Document


def chunk_id(doc_id: str, position: int) -> str:
    """Stable id of the ``position``-th chunk of ``doc_id``."""
    return f"{doc_id}#{position}"


def make_chunk(doc: Document, position: int, start: int, end: int, n_tokens: int, **extra: Any) -> Chunk:
    """A chunk over ``doc.text[start:end]`` with the derived id."""
    return Chunk(chunk_id=chunk_id(doc.doc_id, position), doc_id=doc.doc_id, text=doc.text[start:end],
                 start=start, end=end, n_tokens=n_tokens, position=position,
                 parent_id=extra.pop("parent_id", doc.doc_id), **extra)


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` so it neither starts nor ends with whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


_REGISTRY: dict[str, type[Chunker]] = {}


def register(name: str):
    """Class decorator: make a chunker constructible from its spec string."""

    def wrap(cls: type[Chunker]) -> type[Chunker]:
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return wrap


class Chunker(ABC):
    """Cuts documents into chunks. Subclasses are frozen dataclasses of their parameters.

    The protocol every chunker keeps (property-tested in ``tests/chunking/test_invariants.py``):
    ``doc.text[c.start:c.end] == c.text``; ``c.n_tokens`` never above the chunker's size limit;
    ``c.chunk_id == f"{doc_id}#{position}"``; chunks of one document in order and not overlapping
    unless overlap was asked for.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    has_parents: ClassVar[bool] = False  # its units are searched and their parents returned (parents_of)

    def parents_of(self, doc: Document) -> list[Chunk]:
        """The units returned in place of the searched ones, for a chunker that ``has_parents``."""
        raise ConfigError(f"chunker {self.name!r} has no parents: search its units directly")

    def covered_tokens(self, unit: Chunk) -> int:
        """The document tokens ``unit`` stands for, as duplication counts them: its own count,
        unless the chunker knows the token range it cut."""
        return unit.n_tokens

    def expected_units(self, document_tokens: int) -> int | None:
        """How many units a document of ``document_tokens`` gives, where a formula says; else ``None``."""
        return None

    @abstractmethod
    def chunk(self, doc: Document) -> list[Chunk]:
        """Cut one document.

        Args:
            doc: the document; its ``text`` is what the offsets index.

        Returns:
            Its chunks in document order; ``[]`` for an empty or whitespace-only text.
        """

    def chunk_many(self, docs: Iterable[Document]) -> list[Chunk]:
        """Cut several documents (the batch call; chunkers that batch a model override it).

        Args:
            docs: the documents, in the order their chunks should come back.

        Returns:
            Every document's chunks, document order kept.
        """
        return [c for doc in docs for c in self.chunk(doc)]

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @property
    def version_string(self) -> str:
        """``name/version``: bumped whenever the same parameters would cut differently."""
        return f"{self.name}/{self.version}"

    @property
    def spec(self) -> str:
        """Canonical string, e.g. ``fixed_tokens(size=256,overlap=0,tokenizer=cl100k_base)``."""
        return format_spec(self.name, self.params())

    @property
    def revision_spec(self) -> str:
        """A spec whose ``model`` / ``tokenizer`` parameters name what this chunker reads (the
        results key records their revisions): its own spec."""
        return self.spec

    def __str__(self) -> str:
        return self.spec
