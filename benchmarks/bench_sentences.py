"""Sentence splitting is linear in document length: 1 MB documents (one long line, and SciFact
abstracts joined by line breaks) split in seconds; time per MB at 125 KB, 250 KB, 500 KB and 1 MB."""

from __future__ import annotations

from common import mirror, save, timer

from grainlab.chunking.sentences import _sentence_spans
from grainlab.data import load_dataset

SIZES = (125_000, 250_000, 500_000, 1_000_000)


def main() -> None:
    data = load_dataset("scifact", mirror=mirror())
    lines = "\n".join(d.text for d in data.corpus.values())
    one_line = lines.replace("\n", " ")
    t: dict[str, float] = {}
    for label, text in (("one_line", one_line), ("lines", lines)):
        for size in SIZES:
            _sentence_spans.cache_clear()
            with timer(t, f"{label}_{size // 1000}KB_s"):
                spans = _sentence_spans(text[:size])
            t[f"{label}_{size // 1000}KB_sentences"] = len(spans)
        t[f"{label}_growth_1MB_vs_125KB"] = round(t[f"{label}_1000KB_s"] / t[f"{label}_125KB_s"], 1)
    save("sentences", t)


if __name__ == "__main__":
    main()
