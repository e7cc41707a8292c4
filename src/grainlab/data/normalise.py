"""Unicode-normalised matching that keeps the original text's offsets.

An answer typed as ``API`` should find ``ＡＰＩ`` (full-width), ``サーバー`` should find the
half-width ``ｻｰﾊﾞｰ``, and an answer in NFC should find a file saved in NFD (as macOS writes
accents: ``e`` + U+0301). Matching compares NFKC forms, but the offsets returned are the
original text's, so ``text[start:end]`` is exactly the characters that matched.

The text is cut into *clusters*, a base character with the marks that attach to it (combining
marks, the half-width voiced and semi-voiced sound marks); each cluster is normalised on its own,
so a match can start and end only at cluster boundaries, never between a letter and its accent.
"""

from __future__ import annotations

import unicodedata

HALF_WIDTH_SOUND_MARKS = ("\uff9e", "\uff9f")  # ﾞ ﾟ: they voice the half-width kana before them


def attaches(char: str) -> bool:
    """Whether ``char`` belongs to the character before it (a combining or sound mark)."""
    return unicodedata.combining(char) > 0 or char in HALF_WIDTH_SOUND_MARKS


def clusters(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each base character with the marks that follow it."""
    out: list[tuple[int, int]] = []
    for i, char in enumerate(text):
        if out and attaches(char):
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def normalised(text: str) -> tuple[str, list[int]]:
    """The NFKC form of ``text`` cluster by cluster, and for each of its characters the original
    offset of the cluster it came from (plus one final entry: ``len(text)``)."""
    parts, origin = [], []
    for start, end in clusters(text):
        piece = unicodedata.normalize("NFKC", text[start:end])
        parts.append(piece)
        origin += [start] * len(piece)
    origin.append(len(text))
    return "".join(parts), origin


def find_all(text: str, needle: str) -> list[tuple[int, int]]:
    """Every ``(start, end)`` in ``text`` whose NFKC form equals ``needle``'s, in original offsets;
    a match that would start or end inside a cluster does not count."""
    target = unicodedata.normalize("NFKC", needle)
    if not target:
        return []
    form, origin = normalised(text)
    out, at = [], form.find(target)
    while at >= 0:
        end_index = at + len(target)
        starts_a_cluster = at == 0 or origin[at] != origin[at - 1]
        ends_a_cluster = origin[end_index] != origin[end_index - 1]
        if starts_a_cluster and ends_a_cluster:
            out.append((origin[at], origin[end_index]))
        at = form.find(target, at + 1)
    return out
