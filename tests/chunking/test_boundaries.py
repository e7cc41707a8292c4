"""Where chunkers cut, on hand-made cases whose right answer is worked out by hand.

The invariant tests (``test_invariants.py``) catch broken offsets and sizes; these catch
boundaries that are valid but wrong: a repeated sentence merged into its neighbour, a group that
exactly fills ``size`` split early, a table header carried twice, a breakpoint threshold with
the sample instead of the population standard deviation."""

import math

import numpy as np

from grainlab.chunking import get_chunker
from grainlab.chunking.semantic import breakpoint_groups
from grainlab.chunking.sentences import sentence_spans
from grainlab.data import Document
from grainlab.models.tokenizers import get_tokenizer


def test_a_repeated_sentence_is_its_own_sentence():
    text = "The cat sat. The cat sat. Dogs run."
    assert sentence_spans(text) == [(0, 12), (13, 25), (26, 35)]
    chunks = get_chunker("sentences(n=1)").chunk(Document("d", text))
    assert [c.text for c in chunks] == ["The cat sat.", "The cat sat.", "Dogs run."]


def test_a_recursive_group_that_exactly_fills_size_is_one_chunk():
    words = "one two three four five six seven eight nine ten eleven twelve".split()
    tok = get_tokenizer("cl100k_base")
    assert all(tok.count(f" {w}") == 1 for w in words) and tok.count(" ".join(words[:8])) == 8  # the premise
    chunks = get_chunker("recursive(size=8)").chunk(Document("d", " ".join(words)))
    assert [c.text for c in chunks] == [" ".join(words[:8]), " ".join(words[8:])]
    assert [c.n_tokens for c in chunks] == [8, 4]


TABLE = "# Data\n| name | size |\n|------|------|\n" + "".join(f"| set{i} | {1000 + i} |\n" for i in range(12))
HEADER = "| name | size |\n|------|------|"


def test_a_table_header_is_carried_once_and_never_into_a_piece_that_holds_it():
    chunks = get_chunker("structure(size=40)").chunk(Document("t", TABLE))
    assert len(chunks) >= 3
    assert HEADER in chunks[0].text and HEADER not in chunks[0].context
    for chunk in chunks[1:]:
        assert HEADER not in chunk.text and chunk.context.count(HEADER) == 1
        assert chunk.context == f"Data\n{HEADER}"
    whole = get_chunker("structure(size=512)").chunk(Document("t", TABLE))
    assert len(whole) == 1 and whole[0].context == ""


def _unit_vectors(steps: list[float]) -> np.ndarray:
    """2-D unit vectors whose consecutive cosine distances are ``steps``."""
    angles = np.concatenate([[0.0], np.cumsum([math.acos(1.0 - d) for d in steps])])
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)


def test_breakpoint_std_uses_the_population_standard_deviation():
    # distances 0.1 ×4 and 0.45: mean 0.17; population std 0.14 → cut 0.17 + 1.9 × 0.14 = 0.436,
    # so 0.45 is a break; the sample std (0.1565) would put the cut at 0.467 and find none.
    embeddings = _unit_vectors([0.1, 0.1, 0.1, 0.1, 0.45])
    assert breakpoint_groups(embeddings, "std", 1.9) == [0, 5]
    assert breakpoint_groups(embeddings, "std", 2.5) == [0]
    # percentile: the 50th percentile of (0.1 ×4, 0.45) is 0.1; only 0.45 lies above it
    assert breakpoint_groups(embeddings, "percentile", 50.0) == [0, 5]
