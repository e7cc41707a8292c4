"""Late vs naive chunking cost on SciFact, measured in one run: naive encodes every fixed-256
chunk on its own; late encodes each document once (one 512-token window for most abstracts)
and mean-pools the chunks' token spans. Ratio > 1 means late chunking is cheaper."""

from __future__ import annotations

import sys

from common import mirror, save, timer

from grainlab.chunking import get_chunker
from grainlab.data import load_dataset

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main(n_docs: int = 400) -> None:
    from grainlab.models import Encoder
    from grainlab.retrieval.late import _STATES_MEMO, LatePooler

    data = load_dataset("scifact", mirror=mirror())
    docs = list(data.corpus.values())[:n_docs]
    chunker = get_chunker(f"fixed_tokens(size=256,overlap=0,tokenizer={MODEL})")
    chunks = {d.doc_id: chunker.chunk(d) for d in docs}
    texts = [c.text for cs in chunks.values() for c in cs]
    encoder = Encoder(MODEL, batch_size=32, max_length=512)
    late = LatePooler(encoder, overlap=256)
    encoder.encode_passages(texts[:32], progress=False)  # warm-up
    t: dict[str, float] = {}
    with timer(t, "naive_s"):
        encoder.encode_passages(texts, progress=False)
    _STATES_MEMO.clear()
    with timer(t, "late_s"):
        late.embed(docs, chunks)
    save("late_chunking", {"model": MODEL, "documents": len(docs), "chunks": len(texts), **t,
                           "ratio_naive_over_late": round(t["naive_s"] / t["late_s"], 3)})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
