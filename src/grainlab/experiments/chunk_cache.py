"""Chunk lists cached by (dataset fingerprint, chunker spec, chunker version)."""

from __future__ import annotations

from grainlab.cache import ArtifactCache, content_key
from grainlab.chunking.base import Chunk, Chunker, chunk_id
from grainlab.data.types import Dataset
from grainlab.experiments.identity import model_revisions


def chunk_corpus(dataset: Dataset, chunker: Chunker, cache: ArtifactCache | None = None,
                 fingerprint: str | None = None) -> list[Chunk]:
    """All chunks of ``dataset``'s corpus; offsets, contexts and rewrites are cached, texts re-cut from the documents."""
    cache = cache or ArtifactCache()
    key = content_key(kind="chunks", dataset=fingerprint or dataset.fingerprint(), chunker=chunker.spec,
                      version=f"{type(chunker).__name__}-{chunker.version}", layout=2, models=model_revisions(chunker.spec))
    rows = cache.load_json("chunks", key)
    if rows is None:
        chunks = chunker.chunk_many(dataset.corpus.values())
        cache.save_json("chunks", key, [[c.doc_id, c.position, c.start, c.end, c.n_tokens, c.parent_id,
                                         c.token_start, c.token_end, c.context, c.rewrite] for c in chunks])
        return chunks
    out = []
    for row in rows:  # rows written before ``rewrite`` existed have 9 fields
        doc_id, position, start, end, n_tokens, parent_id, token_start, token_end, context, rewrite = [*row, ""][:10]
        out.append(Chunk(chunk_id=chunk_id(doc_id, position), doc_id=doc_id,
                         text=dataset.corpus[doc_id].text[start:end], start=start, end=end,
                         n_tokens=n_tokens, position=position, parent_id=parent_id,
                         token_start=token_start, token_end=token_end, context=context,
                         rewrite=rewrite))
    return out
