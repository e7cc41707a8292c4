"""Sentence splitting block by block: the blocks partition the text and the spans still cover it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grainlab.chunking import sentences
from grainlab.chunking.sentences import text_blocks

WORDS = st.sampled_from(["Cells", "grow", "fast.", "Dr.", "Smith", "said", "no!", "1)", "(see", "Fig.", "2)", "ok?",
                         "\n", "\n\n", "protein", "levels", "rose."])
TEXTS = st.lists(WORDS, max_size=120).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(TEXTS, st.integers(min_value=10, max_value=200))
def test_blocks_partition_the_text(text, limit):
    blocks = text_blocks(text, limit)
    assert "".join(text[a:b] for a, b in blocks) == text
    assert all(a < b for a, b in blocks) and all(b1 == a2 for (_, b1), (a2, _) in zip(blocks, blocks[1:]))
    for a, b in blocks[:-1]:  # a block longer than the limit only where no boundary lies within it
        assert b - a <= limit or "\n" not in text[a:b - 1]


@settings(max_examples=80, deadline=None)
@given(TEXTS, st.integers(min_value=10, max_value=200))
def test_spans_cover_every_character_with_small_blocks(text, limit):
    import pytest

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sentences, "BLOCK_CHARS", limit)
        sentences._sentence_spans.cache_clear()
        spans = sentences.sentence_spans(text)
    sentences._sentence_spans.cache_clear()
    covered = set()
    for start, end in spans:
        assert start < end and text[start:end] == text[start:end].strip()
        covered.update(range(start, end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    assert spans == sorted(spans) and all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))


def test_a_long_single_line_is_cut_after_a_sentence():
    text = " ".join(f"Sentence number {i} ends here." for i in range(400))
    blocks = text_blocks(text, 1000)
    assert len(blocks) > 5 and all(text[b - 1] == " " or b == len(text) for _, b in blocks)
    assert all(text[a:a + 8] == "Sentence" for a, _ in blocks)
