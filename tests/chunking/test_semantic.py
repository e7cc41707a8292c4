"""Max–Min and breakpoint chunking: the authors' decision rule, and the chunk invariants."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grainlab.chunking import breakpoint_groups, get_chunker, maxmin_groups
from grainlab.chunking.semantic import register_sentence_encoder
from grainlab.data import Document
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer


def unit(*rows):
    m = np.array(rows, dtype=np.float64)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def reference_maxmin(emb, threshold=0.6, c=0.9, init=1.5):
    """A literal transcription of the published rule, kept independent of our implementation."""
    sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    groups, start, end, pmin = [[0]], 0, 1, -math.inf
    for i in range(1, len(emb)):
        sims = [float(emb[i] @ emb[j]) for j in range(start, end)]
        if end - start > 1:
            thr = pmin * c * sig(end - start - 1)
            best = max(sims)
            pmin = min(min(sims), pmin)
        else:
            thr, pmin = 0.0, sims[0]
            best = init * pmin
        if best > max(thr, threshold):
            groups[-1].append(i)
            end += 1
        else:
            groups.append([i])
            start, end, pmin = i, i + 1, -math.inf
    return [g[0] for g in groups]


def test_maxmin_hand_example():
    # s0,s1 similar (cos 0.8 → 1.5·0.8 = 1.2 > 0.6 joins); s2 orthogonal to both → new group
    emb = unit([1, 0, 0], [0.8, 0.6, 0], [0, 0, 1], [0, 0.1, 1])
    assert maxmin_groups(emb) == [0, 2]
    # one-sentence group: 1.5·0.35 = 0.525 < 0.6 → split, although 0.35 > 0
    assert maxmin_groups(unit([1, 0], [0.35, math.sqrt(1 - 0.35**2)])) == [0, 1]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 25), st.floats(0.3, 0.8), st.floats(0.5, 1.0))
def test_maxmin_matches_the_published_rule(seed, n, threshold, c):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(3, 8))
    emb = base[rng.integers(0, 3, size=n)] + rng.normal(scale=0.6, size=(n, 8))
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    assert maxmin_groups(emb, threshold, c) == reference_maxmin(emb, threshold, c)


def test_breakpoints():
    emb = unit([1, 0], [0.99, 0.1], [0, 1], [0.1, 0.99], [1, 0.05])
    assert breakpoint_groups(emb, "percentile", 50) == [0, 2, 4]
    assert breakpoint_groups(emb[:1]) == [0] and breakpoint_groups(emb[:0]) == []
    with pytest.raises(ConfigError):
        breakpoint_groups(emb, "median", 1)


def bag_of_words(texts: list[str]) -> np.ndarray:
    """A deterministic stand-in encoder: hashed bag of lower-cased words, unit length."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, sum(map(ord, word.strip(".,"))) % 64] += 1.0
    out[:, 0] += 0.1  # no zero vectors
    return out / np.linalg.norm(out, axis=1, keepdims=True)


register_sentence_encoder("test-bag-of-words", bag_of_words)


SENTENCES = ["The heart pumps blood through the body.", "Arteries carry blood away from the heart.",
             "Veins return blood to the heart.", "Python is a programming language.",
             "Compilers translate source code.", "Interpreters execute code line by line.",
             "Paris is the capital of France.", "The Louvre is a museum in Paris."]
STUB = "model=test-bag-of-words"
SPECS = [f"maxmin(size=32,{STUB})", f"maxmin(size=12,{STUB})", f"breakpoint(size=40,{STUB})",
         f"breakpoint(method=std,amount=1.0,size=16,{STUB})", f"cluster_semantic(size=32,piece=8,{STUB})",
         f"cluster_semantic(size=16,piece=16,{STUB})"]


@pytest.mark.parametrize("spec", SPECS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(order=st.permutations(range(len(SENTENCES))), sep=st.sampled_from([" ", "\n", "  ", "\n\n"]))
def test_offsets_coverage_and_size(spec, order, sep):
    text = sep.join(SENTENCES[i] for i in order) + " " + "x" * 3 + " " + "long " * 40
    doc = Document("d", text)
    chunker = get_chunker(spec)
    chunks = chunker.chunk(doc)
    tok = get_tokenizer("cl100k_base")
    covered = set()
    for i, chunk in enumerate(chunks):
        assert doc.text[chunk.start:chunk.end] == chunk.text and chunk.chunk_id == f"d#{i}"
        assert chunk.n_tokens == tok.count(chunk.text) <= chunker.size
        covered |= set(range(chunk.start, chunk.end))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))


def test_best_segmentation_recovers_similarity_blocks():
    from grainlab.chunking.cluster import best_segmentation, centred_similarity

    emb = unit([1, 0, 0], [0.95, 0.1, 0], [0.9, 0.2, 0], [0, 1, 0], [0.1, 0.95, 0], [0, 0, 1])
    free = np.ones((6, 6), dtype=bool)
    assert best_segmentation(centred_similarity(emb), free) == [(0, 2), (3, 4), (5, 5)]
    capped = np.ones((6, 2), dtype=bool)  # runs of at most 2 pieces
    assert all(b - a < 2 for a, b in best_segmentation(centred_similarity(emb), capped))
    assert best_segmentation(np.zeros((0, 0)), free) == []


def test_cluster_semantic_groups_topics_with_the_stub():
    text = " ".join(SENTENCES)
    chunks = get_chunker(f"cluster_semantic(size=40,piece=8,{STUB})").chunk(Document("d", text))
    assert len(chunks) >= 2 and all(not ("heart" in c.text and "Python" in c.text) for c in chunks)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["maxmin(size=512)", "breakpoint(size=512)"])
def test_topics_are_separated_with_the_real_encoder(spec):
    doc = Document("d", " ".join(SENTENCES))
    chunks = get_chunker(spec).chunk(doc)
    assert len(chunks) >= 2
    assert all(not ("heart" in c.text and "Python" in c.text) for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "") == doc.text.replace(" ", "")


def test_the_stub_encoder_seam_is_used_and_named():
    assert get_chunker("maxmin").spec.startswith("maxmin(threshold=0.6,c=0.9,init=1.5,size=512,")
    chunks = get_chunker(f"maxmin(size=512,{STUB})").chunk(Document("d", " ".join(SENTENCES)))
    assert len(chunks) >= 1 and chunks[0].start == 0
    with pytest.raises(ConfigError, match="Hugging Face id"):
        register_sentence_encoder("org/model", bag_of_words)
