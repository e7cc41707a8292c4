"""Span-level chunking metrics on hand-made cases."""

import math
from types import SimpleNamespace as C

import pytest

from grainlab.chunking import get_chunker
from grainlab.chunking.fixed import fixed_window_count
from grainlab.data import Document
from grainlab.evaluation.spans import (
    boundary_retention,
    duplication_rate,
    excess_tokens,
    segmentation_ami,
    span_coverage,
    span_scores,
)
from grainlab.models.tokenizers import get_tokenizer


def chunk(doc, start, end, parent=None):
    return C(doc_id=doc, start=start, end=end, parent_id=parent)


def test_coverage_levels():
    gold = ("d", 10, 20)
    assert span_coverage([chunk("d", 0, 25)], gold) == "chunk"
    parents = {"p": chunk("d", 0, 100)}
    assert span_coverage([chunk("d", 0, 15, "p")], gold, parents) == "parent"
    assert span_coverage([chunk("d", 0, 15)], gold) == "partial"
    assert span_coverage([chunk("e", 0, 50), chunk("d", 30, 40)], gold) == "none"


def test_boundary_retention():
    chunks = [chunk("d", 0, 10), chunk("d", 10, 20), chunk("e", 0, 30)]
    spans = [("d", 2, 8), ("d", 8, 12), ("e", 5, 25), ("f", 0, 1)]
    assert boundary_retention(chunks, spans) == pytest.approx(2 / 4)
    assert math.isnan(boundary_retention(chunks, []))


def test_duplication_and_window_count_match_the_chunker():
    text = " ".join(f"w{i}" for i in range(500))
    total = get_tokenizer("cl100k_base").count(text)
    for size, overlap in [(64, 0), (64, 16), (50, 10)]:
        chunks = get_chunker(f"fixed_tokens(size={size},overlap={overlap})").chunk(Document("d", text))
        assert len(chunks) == fixed_window_count(total, size, overlap)
        windows = sum(c.token_end - c.token_start for c in chunks)
        assert duplication_rate([c.token_end - c.token_start for c in chunks], total) == \
            pytest.approx((windows - total) / total)
    assert duplication_rate([10, 10], 20) == 0.0
    assert fixed_window_count(0, 10, 0) == 0 and fixed_window_count(5, 10, 2) == 1


def test_span_overlap_by_hand():
    retrieved = [chunk("d", 0, 10), chunk("d", 5, 15), chunk("e", 0, 4)]
    gold = [("d", 8, 20)]
    got = span_scores(retrieved, gold)
    # retrieved d: [0,15) (15 chars) + e: 4 chars = 19; gold 12 chars; shared 7; union 19 + 12 − 7 = 24
    assert got == pytest.approx({"recall": 7 / 12, "precision": 7 / 19, "iou": 7 / 24})


def test_ami():
    assert segmentation_ami([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 2, 2]) == pytest.approx(1.0)
    assert segmentation_ami([5, 5, 7, 7], [0, 0, 1, 1]) == pytest.approx(1.0)
    assert segmentation_ami([0, 1, 0, 1, 0, 1], [0, 0, 0, 1, 1, 1]) < 0.1


def test_span_overlap_in_tokens():
    from grainlab.evaluation.spans import to_token_interval

    text = "alpha beta gamma delta epsilon"
    starts = get_tokenizer("cl100k_base").token_starts(text)  # tokens at 0, 5, 10, 16, 22 (leading spaces)
    assert starts == [0, 5, 10, 16, 22]
    assert to_token_interval(starts, 0, 5) == (0, 1)
    assert to_token_interval(starts, 6, 12) == (1, 3)  # touches "beta" and " gamma"
    retrieved = [chunk("d", 0, 10)]  # tokens 0-1
    gold = [("d", 6, 16)]  # "beta gamma": tokens 1-2
    got = span_scores(retrieved, gold, token_starts={"d": starts})
    assert got == pytest.approx({"recall": 1 / 2, "precision": 1 / 2, "iou": 1 / 3})


def test_sentence_labels_for_ami():
    from grainlab.evaluation.spans import sentence_labels

    sentences = [(0, 10), (11, 20), (21, 30), (31, 40)]
    assert sentence_labels(sentences, [(0, 20), (21, 40)]) == [0, 0, 1, 1]
    assert sentence_labels(sentences, [(0, 14), (14, 40)]) == [0, 1, 1, 1]  # midpoint 15 → second
    assert sentence_labels(sentences, [(21, 30)]) == [-1, -1, 0, -1]


def _chroma_reference(retrieved, gold):
    """Chroma's per-question formulas as the ANCHORS entry states them, written independently,
    over character ranges of one corpus: numerator = gold characters covered (once); precision
    denominator = sum of the retrieved chunks' lengths; IoU denominator = that sum + uncovered gold."""
    covered = {i for s, e in gold for i in range(s, e) if any(a <= i < b for a, b in retrieved)}
    gold_chars = sum(e - s for s, e in gold)
    lengths = sum(b - a for a, b in retrieved)
    return {"recall": len(covered) / gold_chars, "precision": len(covered) / lengths,
            "iou": len(covered) / (lengths + gold_chars - len(covered))}


@pytest.mark.parametrize("retrieved, gold", [
    ([(0, 10), (5, 15)], [(8, 20)]),                      # overlapping chunks pay twice for [5, 10)
    ([(0, 100), (50, 150), (300, 400)], [(40, 60), (120, 130)]),
    ([(10, 20)], [(0, 5)]),                                # nothing covered
])
def test_sum_convention_matches_chromas_formulas(retrieved, gold):
    got = span_scores([chunk("d", a, b) for a, b in retrieved], [("d", s, e) for s, e in gold], count="sum")
    assert got == pytest.approx(_chroma_reference(retrieved, gold))


def test_the_two_conventions_differ_only_with_overlap():
    gold = [("d", 8, 20)]
    apart = [chunk("d", 0, 10), chunk("d", 10, 15)]
    assert span_scores(apart, gold, count="sum") == pytest.approx(span_scores(apart, gold))
    overlapping = [chunk("d", 0, 10), chunk("d", 5, 15)]
    union, summed = span_scores(overlapping, gold), span_scores(overlapping, gold, count="sum")
    assert summed["recall"] == union["recall"]
    assert summed["precision"] == pytest.approx(7 / 20) and union["precision"] == pytest.approx(7 / 15)
    with pytest.raises(ValueError, match="count"):
        span_scores(apart, gold, count="both")


def test_precision_omega_by_hand():
    from grainlab.evaluation.spans import precision_omega

    chunks = [chunk("d", 0, 10), chunk("d", 10, 20), chunk("d", 20, 30), chunk("d", 30, 40)]
    gold = [("d", 12, 18)]
    assert precision_omega(chunks, gold) == pytest.approx(6 / 10)  # only [10, 20) touches it
    # a chunk sharing only an end point touches it, as in Chroma's code: [10, 20) and [20, 30)
    assert precision_omega(chunks, [("d", 15, 20)]) == pytest.approx(5 / 20)
    overlapping = [chunk("d", 0, 20), chunk("d", 10, 30)]
    assert precision_omega(overlapping, gold) == pytest.approx(6 / 30)
    assert precision_omega(overlapping, gold, count="sum") == pytest.approx(6 / 40)
    assert precision_omega([chunk("d", 50, 60)], gold) == 0.0  # nothing touches: C = 0 over the gold left


def test_first_copy_places_a_repeated_chunk_where_chromas_code_does():
    from grainlab.evaluation.spans import first_copy

    text = "Revenue rose. Costs fell. Revenue rose. Margins grew."
    second = text.index("Revenue rose.", 1)
    assert first_copy(text, second, second + len("Revenue rose.")) == (0, len("Revenue rose"))  # trailing '.' dropped
    assert first_copy(text, 14, 25) == (14, 24)


def test_excess_tokens_count_what_is_indexed_twice_or_added_and_never_go_negative():
    def chunk(doc, start, end, extra=0):
        return C(doc_id=doc, start=start, end=end, n_tokens=len(TEXT[start:end].split()) + extra)

    count = lambda text: len(text.split())  # noqa: E731 - one token per word
    texts = {"a": TEXT, "b": TEXT}
    assert excess_tokens([], texts, count) == 0.0
    apart = [chunk("a", 0, 9), chunk("a", 9, 19)]  # "w0 w1 w2" and " w3 w4 w5": they touch, nothing repeats
    assert excess_tokens(apart, texts, count) == 0.0
    overlapping = [chunk("a", 0, 9), chunk("a", 6, 15)]  # w2 is indexed twice: 6 tokens over 5 covered
    assert excess_tokens(overlapping, texts, count) == pytest.approx(6 / 5 - 1)
    assert excess_tokens([chunk("a", 0, 9), chunk("b", 6, 15)], texts, count) == 0.0  # other documents
    headed = [chunk("a", 0, 9, extra=3)]  # a heading path of three tokens indexed with the chunk
    assert excess_tokens(headed, texts, count) == pytest.approx(3 / 3)
    windows = get_chunker("fixed_tokens(size=8,overlap=0)").chunk(Document("d", "one two three four five six " * 20))
    tokenizer = get_tokenizer("cl100k_base")
    assert excess_tokens(windows, {"d": "one two three four five six " * 20}, tokenizer.count) >= 0.0


TEXT = " ".join(f"w{i}" for i in range(10))
