"""The long-context embedder's cost: nomic-embed-text-v1.5 (f16 GGUF on llama.cpp) vs
all-MiniLM-L6-v2 (torch) on the same SciFact documents in one run — documents/s and tokens/s
(each model's own word pieces, prefix and special tokens included), plus nomic's token-state
path for late chunking (one request per document, as ``LatePooler`` sends them)."""

from __future__ import annotations

import sys

from common import mirror, save, timer

from grainlab.data import load_dataset

NOMIC = "nomic-ai/nomic-embed-text-v1.5"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def main(n_docs: int = 200) -> None:
    from grainlab.models.embedders import load_encoder
    from grainlab.retrieval.late import LatePooler

    data = load_dataset("scifact", mirror=mirror())
    texts = [f"{d.title} {d.text}".strip() for d in list(data.corpus.values())[:n_docs]]
    rows = []
    for model, batch_size in ((MINILM, 32), (NOMIC, 16)):
        encoder = load_encoder(model, batch_size=batch_size)
        encoder.encode_passages(texts[:8], progress=False)  # warm-up
        prefixed = [encoder.config.passage_prefix + t for t in texts]
        tokens = sum(min(len(encoder.tokenizer(t)["input_ids"]), encoder.config.max_length) for t in prefixed)
        t: dict[str, float] = {}
        with timer(t, "seconds"):
            encoder.encode_passages(texts, progress=False)
        rows.append({"model": model, "runtime": encoder.identity["backend"], "max_length": encoder.config.max_length,
                     "documents": len(texts), "tokens": tokens, "seconds": t["seconds"],
                     "documents_per_s": round(len(texts) / t["seconds"], 2),
                     "tokens_per_s": round(tokens / t["seconds"], 1)})
        if model == NOMIC:
            t = {}
            with timer(t, "seconds"):
                LatePooler(encoder).document_states(prefixed)
            rows.append({"model": model, "runtime": "llama.cpp token states (late chunking)",
                         "max_length": encoder.config.max_length, "documents": len(texts), "tokens": tokens,
                         "seconds": t["seconds"], "documents_per_s": round(len(texts) / t["seconds"], 2),
                         "tokens_per_s": round(tokens / t["seconds"], 1)})
    nomic, minilm = rows[1], rows[0]
    save("long_encoder", {"documents": len(texts), "nomic_over_minilm_seconds": round(nomic["seconds"] / minilm["seconds"], 1),
                          "scifact_corpus_hours_nomic_estimate": round(5183 / nomic["documents_per_s"] / 3600, 2),
                          "rows": rows})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
