"""Chunk metadata a citation can be resolved from, and ids that survive edits elsewhere.

A chunk's grainlab id (``doc#position``) is an ordinal: insert a paragraph at the top and every
later chunk is renumbered. A **citation id** is derived from what the chunk *is* instead — the
document id and revision (the document's key), the splitter's version, and a content locator (its
heading path and the SHA-256 of its text) — ``<key>#<12 hex>``, with ``~2``, ``~3`` … appended to
the second, third … chunk of one document that has the same locator. Inserting a paragraph
changes only the ids of the chunks whose text changed.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Sequence

from grainlab.chunking.base import Chunker
from grainlab.chunking.structure import parse_sections
from grainlab.data.documents import SourceDocument
from grainlab.types import Chunk


def heading_paths(text: str) -> tuple[list[int], list[list[str]]]:
    """Each section's first offset and heading path (``structure``'s reading of headings)."""
    sections = parse_sections(text)
    return [s.blocks[0].start for s in sections], [s.path for s in sections]


def heading_path(starts: list[int], paths: list[list[str]], offset: int) -> list[str]:
    """The heading path of the section an offset falls in (``[]`` before the first heading)."""
    i = bisect.bisect_right(starts, offset) - 1
    return list(paths[i]) if i >= 0 else []


def citation_id(doc_key: str, splitter_version: str, headings: Sequence[str], text: str) -> str:
    """``<doc key>#<first 12 hex of SHA-256(splitter version, heading path, text)>``."""
    digest = hashlib.sha256("\x1f".join([splitter_version, " > ".join(headings), text]).encode()).hexdigest()
    return f"{doc_key}#{digest[:12]}"


def citation_records(doc: SourceDocument, chunks: Sequence[Chunk], chunker: Chunker,
                     parents: Sequence[Chunk] = ()) -> list[dict[str, object]]:
    """One record per chunk of ``doc`` (document order): ``id`` (citation id), ``chunk_id``
    (grainlab's ordinal id, as runs name it), ``document_id``, ``revision``, ``splitter``,
    ``splitter_version``, ``headings``, ``start``, ``end``, ``pages`` (PDFs), ``sha256``,
    ``n_tokens``, ``parent_id`` (a parent chunk's citation id, for parent–child chunking),
    ``prev_id``, ``next_id`` and ``text``."""
    starts, paths = heading_paths(doc.text)
    parent_ids = {p.chunk_id: rid for p, rid in zip(parents, _ids(doc, parents, chunker, starts, paths), strict=True)}
    ids = _ids(doc, chunks, chunker, starts, paths)
    records = []
    for i, (chunk, rid) in enumerate(zip(chunks, ids, strict=True)):
        records.append({
            "id": rid, "chunk_id": chunk.chunk_id, "document_id": doc.doc_id, "revision": doc.revision,
            "splitter": chunker.spec, "splitter_version": chunker.version_string,
            "headings": heading_path(starts, paths, chunk.start), "start": chunk.start, "end": chunk.end,
            "pages": doc.pages(chunk.start, chunk.end), "sha256": hashlib.sha256(chunk.text.encode()).hexdigest(),
            "n_tokens": chunk.n_tokens, "parent_id": parent_ids.get(chunk.parent_id or ""),
            "prev_id": ids[i - 1] if i else None, "next_id": ids[i + 1] if i + 1 < len(ids) else None,
            "text": chunk.text})
    return records


def _ids(doc: SourceDocument, chunks: Sequence[Chunk], chunker: Chunker, starts: list[int],
         paths: list[list[str]]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for chunk in chunks:
        base = citation_id(doc.key, chunker.version_string, heading_path(starts, paths, chunk.start), chunk.text)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}~{seen[base]}")
    return out
