"""How BM25 reads a text, per language.

- ``en``: bm25s's analyzer — lowercase words, bm25s's English stopwords, Snowball stemming
  (PyStemmer), as every English study here uses.
- ``ja``: Japanese has no spaces between words, so whitespace tokens match almost nothing. The
  text is cut into morphemes by MeCab (through fugashi) with the UniDic dictionary of
  ``unidic-lite``; surface forms are kept, lowercased, and particles (助詞), auxiliary verbs
  (助動詞), symbols (補助記号) and blanks (空白) are dropped, as a stopword list drops function words.

The analyzer's library and dictionary versions (:func:`analyzer_versions`) are part of a BM25
index's cache key and of the retriever's record, so a new dictionary never reuses an old index.
"""

from __future__ import annotations

import functools
from importlib import metadata

from grainlab.errors import ConfigError
from grainlab.languages import LANGUAGES, check_language

__all__ = ["JA_DROPPED_POS", "JA_PACKAGES", "LANGUAGES", "analyzer_versions", "check_language",
           "japanese_tokens", "whitespace_tokens"]

JA_DROPPED_POS = frozenset({"助詞", "助動詞", "補助記号", "空白"})
JA_PACKAGES = ("fugashi", "unidic-lite")


@functools.lru_cache(maxsize=1)
def _tagger():
    try:
        import fugashi
        import unidic_lite  # noqa: F401  (the dictionary fugashi finds)
    except ImportError:
        raise ConfigError("Japanese BM25 needs a morphological analyzer: pip install fugashi unidic-lite "
                          "(both install offline from PyPI)") from None
    return fugashi.Tagger()


def japanese_tokens(text: str) -> list[str]:
    """Content morphemes of a Japanese (or mixed-script) text, lowercased surface forms."""
    return [word.surface.lower() for word in _tagger()(text)
            if word.feature.pos1 not in JA_DROPPED_POS and word.surface.strip()]


def whitespace_tokens(text: str) -> list[str]:
    """Lowercased whitespace-separated tokens: what an English analyzer sees of Japanese text."""
    return text.lower().split()


def analyzer_versions(language: str) -> dict[str, str]:
    """The analyzer's packages and their versions (``{}`` for English, whose bm25s and PyStemmer
    versions the index key already holds)."""
    if check_language(language) == "ja":
        _tagger()
        return {name: metadata.version(name) for name in JA_PACKAGES}
    return {}
