"""Properties every chunker must keep, on arbitrary text (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.models.tokenizers import get_tokenizer

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

WORDS = st.sampled_from(["the", "cell", "Müller", "naïve", "東京", "🙂", "x1", "e.g.", "Dr.", "end.",
                         "?", "¿Qué", "co-op", "—", "résumé", "ünïcödé", "ok!", "A", "z", "12,5"])
SEPS = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", "\t", ". ", "", "\u00a0"])
MARKUP = st.sampled_from(["# ", "## Title", "### ", "\n# H\n", "- ", "\n- item", "1. ", "  ", "| a | b |",
                          "\n|---|---|\n", "| x | y |\n", "<h2>Head</h2>\n", "<table>\n<tr><th>k</th></tr>\n",
                          "<tr><td>v</td></tr>\n", "</table>", "Lead in:\n", "<li>one</li>\n",
                          "\n = = Wiki = = \n", " = Title = \n", "==== Body\n", "== H ==\n"])
TEXT = st.one_of(
    st.lists(st.tuples(WORDS, SEPS), max_size=120).map(lambda p: "".join(w + s for w, s in p)),
    st.text(max_size=400),
    st.lists(st.one_of(st.tuples(WORDS, SEPS).map("".join), MARKUP), max_size=80).map("".join),
)
CHUNKERS = [
    "fixed_tokens(size=8,overlap=0)",
    "fixed_tokens(size=16,overlap=5)",
    "fixed_tokens(size=7,overlap=6)",
    f"fixed_tokens(size=12,overlap=3,tokenizer={MINILM})",
    "sentences(n=1)",
    "sentences(n=3)",
    "recursive(size=8)",
    "recursive_separators(size=8)",
    "recursive_separators(size=24)",
    "recursive_separators(size=16,overlap=6)",
    f"recursive_separators(size=16,tokenizer={MINILM})",
    "recursive(size=24)",
    f"recursive(size=16,tokenizer={MINILM})",
    "structure(size=12)",
    "structure(size=48)",
    f"structure(size=24,tokenizer={MINILM})",
    "parent_child(child_size=8,parent_size=32)",
    "passages(words=5,min_last=2)",
    "passages(words=100,min_last=50)",
    "parent_child(child_size=16,parent_size=64,parents=recursive)",
    "none",
]
OVERLAPPING = [s for s in CHUNKERS if "overlap=" in s and "overlap=0" not in s]
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def chunks_of(spec: str, text: str, doc_id: str = "doc-1"):
    doc = Document(doc_id, text)
    return doc, get_chunker(spec).chunk(doc)


@pytest.mark.parametrize("spec", CHUNKERS)
@PROPERTY
@given(text=TEXT)
def test_offsets_exact_and_ids_derived(spec, text):
    doc, chunks = chunks_of(spec, text)
    for position, chunk in enumerate(chunks):
        assert doc.text[chunk.start:chunk.end] == chunk.text
        assert 0 <= chunk.start < chunk.end <= len(doc.text)
        assert chunk.text == chunk.text.strip()
        assert chunk.chunk_id == f"doc-1#{position}" and chunk.position == position
        assert chunk.doc_id == "doc-1"
        assert chunk.parent_id == "doc-1" or (spec.startswith("parent_child") and chunk.parent_id.startswith("doc-1#p"))
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


@pytest.mark.parametrize("spec", CHUNKERS)
@PROPERTY
@given(text=TEXT)
def test_no_text_lost_or_invented(spec, text):
    doc, chunks = chunks_of(spec, text)
    covered = [False] * len(text)
    for chunk in chunks:
        for i in range(chunk.start, chunk.end):
            covered[i] = True
    lost = [ch for ch, hit in zip(text, covered) if not hit and not ch.isspace()]
    assert lost == []
    if not text.strip():
        assert chunks == []


@pytest.mark.parametrize("spec", [s for s in CHUNKERS if s.startswith(("fixed", "recursive", "structure", "parent"))])
@PROPERTY
@given(text=TEXT)
@example(text="e.g.  Müller  the the 東京 ")  # found by hypothesis: the piece fit untrimmed, not trimmed
@example(text="word " * 7 + "reciprocal_rank_fusion(lists,")  # found on a Japanese article: one piece, 7 → 9 tokens trimmed
def test_size_limit_respected_after_retokenizing(spec, text):
    chunker = get_chunker(spec)
    tokenizer = get_tokenizer(chunker.tokenizer)
    limit = getattr(chunker, "size", None) or chunker.child_size
    _, chunks = chunks_of(spec, text)
    for chunk in chunks:
        assert chunk.n_tokens == tokenizer.count(chunk.index_text)  # context (if any) counts
        assert chunk.n_tokens <= limit


@pytest.mark.parametrize("spec", [s for s in CHUNKERS if s not in OVERLAPPING])
@PROPERTY
@given(text=TEXT)
def test_chunks_never_overlap_unless_overlap_was_asked_for(spec, text):
    _, chunks = chunks_of(spec, text)
    for left, right in zip(chunks, chunks[1:]):
        assert left.end <= right.start


@pytest.mark.parametrize("spec", ["passages(words=5,min_last=2)", "passages(words=12,min_last=6)"])
@PROPERTY
@given(text=TEXT)
def test_passage_word_budget(spec, text):
    chunker = get_chunker(spec)
    _, chunks = chunks_of(spec, text)
    sizes = [len(c.text.split()) for c in chunks]
    assert all(size <= chunker.max_words for size in sizes)
    assert all(size <= chunker.words for size in sizes[:-1])  # only the merged tail may exceed
    if len(sizes) > 1:
        assert sizes[-1] >= chunker.min_last or sizes[-1] <= chunker.words


def test_passages_as_in_dense_x():
    sentence = "One two three four five six seven eight nine ten."  # 10 words
    chunker = get_chunker("passages(words=100,min_last=50)")
    words = [[len(c.text.split()) for c in chunker.chunk(Document("d", " ".join([sentence] * n)))] for n in (25, 24, 3)]
    assert words == [[100, 100, 50], [100, 140], [30]]  # a tail under 50 words joins the previous passage
    long_sentence = " ".join(["w"] * 230) + "."
    assert [len(c.text.split()) for c in chunker.chunk(Document("d", long_sentence))] == [100, 130]

    from grainlab.chunking import available_chunkers

    for name in available_chunkers():
        chunker = get_chunker(name if name != "breakpoint" and name != "maxmin" else f"{name}()")
        assert chunker.version_string == f"{name}/{chunker.version}" and chunker.version


@pytest.mark.parametrize("spec", [s for s in CHUNKERS if s.startswith("fixed")])
@PROPERTY
@given(text=TEXT)
def test_overlap_exactly_as_asked(spec, text):
    chunker = get_chunker(spec)
    _, chunks = chunks_of(spec, text)
    for left, right in zip(chunks, chunks[1:]):
        if left.token_end - left.token_start > chunker.overlap:
            assert left.token_end - right.token_start == chunker.overlap
        else:  # the left window gave up tokens to fit; the next one still moves forward
            assert right.token_start == left.token_start + 1


def test_overlap_exact_on_ordinary_text():
    text = "The quick brown fox jumps over the lazy dog near the riverbank. " * 30
    for size, overlap in [(16, 5), (64, 16), (128, 64)]:
        chunks = chunks_of(f"fixed_tokens(size={size},overlap={overlap})", text)[1]
        assert len(chunks) > 3
        assert all(a.token_end - b.token_start == overlap for a, b in zip(chunks, chunks[1:]))


@pytest.mark.parametrize("spec", ["sentences(n=1)", "sentences(n=4)"])
@PROPERTY
@given(text=TEXT)
def test_sentence_chunks_never_overlap(spec, text):
    _, chunks = chunks_of(spec, text)
    for left, right in zip(chunks, chunks[1:]):
        assert left.end <= right.start
    assert all(c.metadata["n_sentences"] <= get_chunker(spec).n for c in chunks)


@pytest.mark.parametrize("spec", CHUNKERS)
def test_ids_stable_across_runs(spec):
    text = "Alpha beta gamma. Delta epsilon zeta! Eta theta iota? " * 20
    first = [(c.chunk_id, c.start, c.end) for c in chunks_of(spec, text)[1]]
    second = [(c.chunk_id, c.start, c.end) for c in get_chunker(spec).chunk(Document("doc-1", text))]
    assert first == second and first


@pytest.mark.parametrize("spec", CHUNKERS)
@pytest.mark.parametrize("text", ["", "   ", "\n\n\t "])
def test_empty_and_whitespace_documents_give_no_chunks(spec, text):
    assert chunks_of(spec, text)[1] == []


@pytest.mark.parametrize("spec", CHUNKERS)
def test_non_ascii_document(spec):
    text = "Zürich liegt am See. 東京は日本の首都です。 Ça va très bien — merci! 🙂🙂 Ελληνικά κείμενα."
    doc, chunks = chunks_of(spec, text)
    assert chunks and all(doc.text[c.start:c.end] == c.text for c in chunks)


@pytest.mark.parametrize("size,overlap", [(64, 0), (64, 16), (100, 99), (32, 8)])
def test_chunk_count_matches_formula(size, overlap):
    """N = 1 + ceil((T - L) / S) windows for T > L tokens, stride S = L - overlap."""
    text = " ".join(f"word{i}" for i in range(700))
    tokens = get_tokenizer("cl100k_base").count(text)
    chunks = chunks_of(f"fixed_tokens(size={size},overlap={overlap})", text)[1]
    assert len(chunks) == 1 + math.ceil((tokens - size) / (size - overlap))


def test_canonical_strings_round_trip():
    for spec in CHUNKERS:
        chunker = get_chunker(spec)
        assert get_chunker(chunker.spec) == chunker
        assert get_chunker(chunker.spec).spec == chunker.spec
    assert get_chunker("sentences(n=5)").spec == "sentences(n=5,tokenizer=cl100k_base)"


@pytest.mark.parametrize("bad", ["fixed_tokens(size=0)", "fixed_tokens(size=8,overlap=8)",
                                 "fixed_tokens(size=8,stride=2)", "recursive(size=2)", "sentences(n=0)",
                                 "semantic_magic(size=3)"])
def test_invalid_parameters_raise_config_errors(bad):
    from grainlab.errors import ConfigError

    with pytest.raises(ConfigError):
        get_chunker(bad)


@pytest.mark.parametrize("spec", CHUNKERS)
def test_each_chunker_declares_what_it_offers(spec):
    """The engine asks a chunker, never its class: parents (``has_parents`` / ``parents_of``), the
    tokens a unit stands for (``covered_tokens``) and the unit count a formula predicts."""
    from grainlab.errors import ConfigError

    chunker = get_chunker(spec)
    doc = Document("d", "## A heading\n\nOne sentence here. Another one follows it.\n\n" * 3)
    units = chunker.chunk(doc)
    if chunker.has_parents:
        parents = chunker.parents_of(doc)
        assert parents and all(p.chunk_id.startswith("d#p") for p in parents)
    else:
        with pytest.raises(ConfigError, match=f"{chunker.name!r} has no parents"):
            chunker.parents_of(doc)
    if spec.startswith("fixed_tokens"):
        assert [chunker.covered_tokens(u) for u in units] == [u.token_end - u.token_start for u in units]
        assert chunker.expected_units(get_tokenizer(chunker.tokenizer).count(doc.text)) == len(units)
    else:
        assert [chunker.covered_tokens(u) for u in units] == [u.n_tokens for u in units]
        assert chunker.expected_units(100) is None
