"""Chunk lists cached by (dataset fingerprint, chunker spec and version, model revisions, code)."""

from __future__ import annotations

from grainlab.cache import (
    ArtifactCache,
    code_fingerprint,
    content_key,
    reject_entry,
)
from grainlab.chunking.base import Chunker, chunk_id
from grainlab.data.types import Dataset
from grainlab.experiments.identity import model_revisions
from grainlab.types import Chunk


def chunk_corpus(dataset: Dataset, chunker: Chunker, cache: ArtifactCache | None = None,
                 fingerprint: str | None = None) -> list[Chunk]:
    """All chunks of ``dataset``'s corpus; offsets, contexts and rewrites are cached, texts re-cut from the documents."""
    cache = cache or ArtifactCache()
    key = chunks_key(dataset, chunker, fingerprint)
    rows = cache.load_json("chunks", key)
    chunks = _from_rows(dataset, rows, cache.path("chunks", key, ".json")) if rows is not None else None
    if chunks is None:
        chunks = chunker.chunk_many(dataset.corpus.values())
        cache.save_json("chunks", key, [[c.doc_id, c.position, c.start, c.end, c.n_tokens, c.parent_id,
                                         c.token_start, c.token_end, c.context, c.rewrite] for c in chunks])
    return chunks


def chunks_key(dataset: Dataset, chunker: Chunker, fingerprint: str | None = None) -> str:
    """Everything a chunk list depends on: the documents, the chunker's spec and version, the
    revisions of the models it names, and the source of the chunking code."""
    return content_key(kind="chunks", dataset=fingerprint or dataset.fingerprint(), chunker=chunker.spec,
                       version=chunker.version_string, models=model_revisions(chunker.revision_spec),
                       code=code_fingerprint("chunking", "models.tokenizers", "readers", "experiments.chunk_cache"))


def _from_rows(dataset: Dataset, rows: object, path) -> list[Chunk] | None:
    """Chunks re-cut from the documents; ``None`` (reported, entry deleted) when a row does not fit them."""
    out = []
    try:
        for row in rows:  # type: ignore[union-attr]
            doc_id, position, start, end, n_tokens, parent_id, token_start, token_end, context, rewrite = row
            text = dataset.corpus[doc_id].text
            if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(text)):
                raise ValueError(f"offsets {start}:{end} outside {doc_id!r}")
            out.append(Chunk(chunk_id=chunk_id(doc_id, position), doc_id=doc_id, text=text[start:end], start=start,
                             end=end, n_tokens=n_tokens, position=position, parent_id=parent_id,
                             token_start=token_start, token_end=token_end, context=context, rewrite=rewrite))
    except (TypeError, ValueError, KeyError) as exc:
        return reject_entry(path, f"a row does not fit the corpus ({type(exc).__name__}: {exc})")
    return out
