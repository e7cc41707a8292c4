"""Characters per token, per tokenizer and language: how "512 tokens" translates into characters.

Chunk sizes in grainlab are counted in a named tokenizer's tokens (``cl100k_base`` by default, an
encoder's word pieces, a reader's BPE), and a size written for English text means something else for
Japanese. :func:`chars_per_token` measures it on real text — the user's own documents
(``grainlab tokens DOCS``) or the project's reference texts — for every tokenizer the project uses
(:data:`PROJECT_TOKENIZERS`); each row states its language (detected) so English and Japanese are
never averaged together.

The readers' tokenizer (Qwen2.5's byte-level BPE) is read from the reader's own verified GGUF by
transformers' GGUF loader (``models.tokenizers``), so a chunk size can be given in the reader's
tokens too; its tokens are checked against llama.cpp's ``/tokenize`` on the same file in the tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from grainlab.errors import DatasetNotFound
from grainlab.languages import detect_language
from grainlab.models.tokenizers import get_tokenizer

PROJECT_TOKENIZERS: dict[str, str] = {
    "cl100k_base (chunk sizes' default)": "cl100k_base",
    "all-MiniLM-L6-v2 WordPiece (MiniLM encoders)": "sentence-transformers/all-MiniLM-L6-v2",
    "bge-small-en-v1.5 WordPiece": "BAAI/bge-small-en-v1.5",
    "nomic-embed-text-v1.5 WordPiece": "nomic-ai/nomic-embed-text-v1.5",
    "Qwen2.5 BPE (the readers)": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
}


def chars_per_token(texts: Mapping[str, Sequence[str]], tokenizers: Mapping[str, str] | None = None,
                    sizes: Sequence[int] = (256, 512)) -> pd.DataFrame:
    """One row per text set × tokenizer: its language (detected), characters (whitespace
    excluded, as a reader counts them, and all), tokens, characters per token, and how many
    characters ``sizes`` tokens hold. ``texts``: a label → the texts of that set."""
    rows = []
    for label, items in texts.items():
        language = detect_language(items)
        characters = sum(len(t) for t in items)
        visible = sum(len("".join(t.split())) for t in items)
        for tokenizer_label, name in (tokenizers or PROJECT_TOKENIZERS).items():
            tokens = sum(get_tokenizer(name).count(t) for t in items)
            row = {"texts": label, "language": language, "tokenizer": tokenizer_label, "tokenizer_id": name,
                   "characters": characters, "visible_characters": visible, "tokens": tokens,
                   "chars_per_token": characters / tokens if tokens else float("nan"),
                   "visible_chars_per_token": visible / tokens if tokens else float("nan")}
            row |= {f"chars_in_{size}_tokens": round(size * characters / tokens) if tokens else 0 for size in sizes}
            rows.append(row)
    return pd.DataFrame(rows)


def reference_texts(mirror: str | Path, limit: int = 32_000) -> dict[str, list[str]]:
    """The project's reference texts from the mirror: the three Japanese articles and, for English,
    SQuAD dev paragraphs (Wikipedia) and SciFact abstracts, each cut to about ``limit`` characters
    (whole texts, in the dataset's order)."""
    from grainlab.data import load_dataset

    root = Path(mirror)
    japanese = sorted(p for p in (root / "japanese_rag_articles").glob("*_*.txt"))
    if not japanese:
        raise DatasetNotFound(f"no Japanese articles in {root / 'japanese_rag_articles'}: point --mirror (or "
                              f"$GRAINLAB_MIRROR) at the dataset mirror, or name your own documents")
    out = {"Japanese RAG articles (3)": [p.read_text(encoding="utf-8") for p in japanese]}
    for label, name in (("SQuAD dev articles (English Wikipedia)", "squad_dev_articles"),
                        ("SciFact abstracts (English science)", "scifact")):
        kept, total = [], 0
        for doc in load_dataset(name, mirror=str(root)).corpus.values():
            if total >= limit:
                break
            kept.append(doc.text)
            total += len(doc.text)
        out[label] = kept
    return out
