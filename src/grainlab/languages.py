"""Which language a text is in, as far as grainlab's text handling needs to know.

Only two behaviours exist: English (whitespace words, Snowball stems, pysbd's English sentence
rules) and Japanese (no spaces between words: morphemes for BM25, pysbd's Japanese rules, which keep
a closing bracket such as ``」`` with its sentence). A text is Japanese when at least
``JAPANESE_SHARE`` of its letters are kana or CJK ideographs — mixed text (English terms inside
Japanese prose) stays Japanese, an English text quoting one Japanese word stays English.
"""

from __future__ import annotations

from collections.abc import Iterable

from grainlab.errors import ConfigError

LANGUAGES = ("en", "ja")
AUTO = "auto"
JAPANESE_SHARE = 0.2


def check_language(language: str, *, allow_auto: bool = False) -> str:
    """``language`` if grainlab knows it, else a ConfigError naming the choices."""
    known = LANGUAGES + ((AUTO,) if allow_auto else ())
    if language not in known:
        raise ConfigError(f"language must be one of {known}, got {language!r}")
    return language


def is_japanese_char(char: str) -> bool:
    """Hiragana, katakana (full and half width) or a CJK ideograph."""
    code = ord(char)
    return (0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x4DBF or 0x4E00 <= code <= 0x9FFF
            or 0xF900 <= code <= 0xFAFF or 0xFF66 <= code <= 0xFF9F or 0x31F0 <= code <= 0x31FF)


def japanese_share(text: str) -> float:
    """The share of ``text``'s letters that are Japanese script (0.0 for a text without letters)."""
    letters = [c for c in text if c.isalpha()]
    return sum(map(is_japanese_char, letters)) / len(letters) if letters else 0.0


def detect_language(texts: str | Iterable[str]) -> str:
    """``ja`` when at least ``JAPANESE_SHARE`` of the letters of ``texts`` are Japanese, else ``en``."""
    joined = texts if isinstance(texts, str) else "\n".join(texts)
    return "ja" if japanese_share(joined) >= JAPANESE_SHARE else "en"


def resolve_language(language: str, texts: str | Iterable[str]) -> str:
    """``language`` itself, or the detected one when it is ``auto``."""
    return detect_language(texts) if check_language(language, allow_auto=True) == AUTO else language
