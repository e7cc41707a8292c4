"""nomic-embed-text-v1.5 on its two runtimes — llama.cpp (the f16 GGUF through xllamacpp) and torch
(transformers' NomicBert built from the same GGUF) — on the same windows: token states (the late
chunking path) of whole SQuAD dev articles cut to 512, 1,024 and 2,048 word pieces, tokens/s per
runtime and window length, and the agreement of their states (worst per-token cosine).
``python bench_nomic_backends.py [windows_per_length]``; on CUDA both run there when they can."""

from __future__ import annotations

import sys

import numpy as np
from common import mirror, save, timer

from grainlab.data import load_dataset

NOMIC = "nomic-ai/nomic-embed-text-v1.5"
LENGTHS = (512, 1024, 2048)


def main(per_length: int = 2) -> None:
    from grainlab.models.embedders import load_encoder

    squad = load_dataset("squad_dev", mirror=mirror())
    articles: dict[int, list[str]] = {}
    for doc_id, article in squad.info["article_of"].items():
        articles.setdefault(article, []).append(squad.corpus[doc_id].text)
    texts = ["search_document: " + " ".join(p) for p in articles.values() if len(" ".join(p).split()) > 1800][:per_length]
    encoders = {backend: load_encoder(NOMIC, batch_size=1, backend=backend) for backend in ("llama.cpp", "torch")}
    rows = []
    for length in LENGTHS:
        batches = [encoders["torch"].tokenize([t], max_length=length) for t in texts]
        encoders["llama.cpp"].token_states(batches[0])  # warm-up
        encoders["torch"].token_states(batches[0])
        states = {}
        for backend, encoder in encoders.items():
            t: dict[str, float] = {}
            with timer(t, "seconds"):
                states[backend] = [encoder.token_states(b)[0] for b in batches]
            tokens = sum(b["input_ids"].shape[1] for b in batches)
            rows.append({"runtime": backend, "window": length, "windows": len(batches), "tokens": tokens,
                         "seconds": t["seconds"], "tokens_per_s": round(tokens / t["seconds"], 1),
                         "device": encoder.device})
        worst = min(float(((a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)).min())
                    for a, b in zip(states["llama.cpp"], states["torch"]))
        for row in rows[-2:]:
            row["worst_token_cosine"] = round(worst, 6)
    faster = {length: max((r for r in rows if r["window"] == length), key=lambda r: r["tokens_per_s"])["runtime"]
              for length in LENGTHS}
    save("nomic_backends", {"rows": rows, "faster_by_window": faster})


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
