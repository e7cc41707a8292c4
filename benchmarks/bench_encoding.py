"""Dense encoding throughput: grainlab's Encoder vs a plain sentence-transformers ``encode``
of the same texts in the same run (ratio > 1 means grainlab is faster)."""

from __future__ import annotations

import sys

from common import mirror, save, timer

from grainlab.data import load_dataset

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def main(n_docs: int = 400) -> None:
    from sentence_transformers import SentenceTransformer

    from grainlab.models import Encoder

    data = load_dataset("scifact", mirror=mirror())
    texts = [d.text for d in list(data.corpus.values())[:n_docs]]
    ours = Encoder(MODEL, batch_size=32)
    plain = SentenceTransformer(str(ours.resolved.path), device=ours.device)
    ours.encode_passages(texts[:32], progress=False)  # warm-up both
    plain.encode(texts[:32], batch_size=32)
    t: dict[str, float] = {}
    with timer(t, "grainlab_s"):
        a = ours.encode_passages(texts, progress=False)
    with timer(t, "sentence_transformers_s"):
        b = plain.encode(texts, batch_size=32, normalize_embeddings=True)
    save("encoding", {"model": MODEL, "texts": len(texts), **t,
                      "grainlab_texts_per_s": round(len(texts) / t["grainlab_s"], 1),
                      "ratio_st_over_grainlab": round(t["sentence_transformers_s"] / t["grainlab_s"], 3),
                      "max_abs_diff": float(abs(a - b).max())})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
