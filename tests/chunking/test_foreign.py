"""Library splitters as chunkers: the library's own chunks, at exact offsets (issue 58)."""

from __future__ import annotations

import builtins
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grainlab.chunking import get_chunker
from grainlab.chunking.foreign import ForeignChunker, place
from grainlab.errors import ConfigError
from grainlab.types import Document

splitters = pytest.importorskip("langchain_text_splitters")
semchunk = pytest.importorskip("semchunk")
chonkie = pytest.importorskip("chonkie")

TEXT = ("Refunds are accepted within 30 days of delivery.  Items must be unused.\n\n"
        "Shipping is free above 50 euros. Express delivery costs 9 euros, and arrives in two days.\n"
        "Returns: print the label, pack the item, drop it at any post office.   Questions? Write to us.")
JAPANESE = ("返品は配達から三十日以内に受け付けます。未使用の商品に限ります。\n\n"
            "五十ユーロ以上は送料無料です。速達は九ユーロで、二日で届きます。ご質問はお問い合わせください。")
SPECS = ["langchain:RecursiveCharacterTextSplitter(chunk_size=60,chunk_overlap=15)",
         "langchain:CharacterTextSplitter(chunk_size=80,chunk_overlap=0,separator=.)",
         "chonkie:RecursiveChunker(chunk_size=40)",
         "chonkie:TokenChunker(chunk_size=30,chunk_overlap=5)",
         "semchunk(chunk_size=12)"]
try:
    from llama_index.core.node_parser import SentenceSplitter
except ImportError:  # the splitters extra without LlamaIndex: its adapter's error is tested below
    SentenceSplitter = None
else:
    SPECS.append("llamaindex:SentenceSplitter(chunk_size=40,chunk_overlap=5)")


def library_texts(spec: str, text: str) -> list[str]:
    """The library's own chunks, called directly (no grainlab code)."""
    if spec.startswith("langchain:RecursiveCharacterTextSplitter"):
        return splitters.RecursiveCharacterTextSplitter(chunk_size=60, chunk_overlap=15).split_text(text)
    if spec.startswith("langchain:CharacterTextSplitter"):
        return splitters.CharacterTextSplitter(chunk_size=80, chunk_overlap=0, separator=".").split_text(text)
    if spec.startswith("chonkie:RecursiveChunker"):
        return [c.text for c in chonkie.RecursiveChunker(chunk_size=40).chunk(text)]
    if spec.startswith("llamaindex:SentenceSplitter"):
        return SentenceSplitter(chunk_size=40, chunk_overlap=5).split_text(text)
    if spec.startswith("chonkie:TokenChunker"):
        return [c.text for c in chonkie.TokenChunker(chunk_size=30, chunk_overlap=5).chunk(text)]
    from grainlab.models.tokenizers import get_tokenizer

    return semchunk.chunkerify(get_tokenizer("cl100k_base").count, 12)(text)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("text", [TEXT, JAPANESE], ids=["english", "japanese"])
def test_the_librarys_own_chunks_at_exact_offsets(spec, text):
    doc = Document("d", text)
    chunks = get_chunker(spec).chunk(doc)
    assert [c.text for c in chunks] == [t for t in library_texts(spec, text) if t.strip()]
    for position, chunk in enumerate(chunks):
        assert doc.text[chunk.start:chunk.end] == chunk.text and chunk.chunk_id == f"d#{position}"
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)


@pytest.mark.mirror
def test_the_same_chunks_as_the_library_on_chromas_corpora(mirror):
    from grainlab.data import load_dataset

    data = load_dataset("chroma_chunking_eval", mirror=mirror, allow_download=False)
    doc = data.corpus["state_of_the_union"]
    for spec in SPECS:
        chunks = get_chunker(spec).chunk(doc)
        assert [c.text for c in chunks] == [t for t in library_texts(spec, doc.text) if t.strip()]
        assert all(doc.text[c.start:c.end] == c.text for c in chunks)


def test_a_repeated_piece_is_placed_after_the_previous_one_and_a_rewritten_one_is_refused():
    text = "ab. ab. ab."
    assert place(text, [("ab.", 0), ("ab.", 0), ("ab.", None)], "x") == [(0, 3), (4, 7), (8, 11)]
    with pytest.raises(ConfigError, match="chunk 1 .*not in the document text"):
        place(text, [("ab.", 0), ("AB.", None)], "x")


def test_a_chunk_may_start_where_the_previous_one_did_when_the_library_says_so():
    """LangChain on Chroma's pubmed: a 14-character heading chunk, then the overlapping chunk that
    starts with the same heading, both at the library's start index."""
    text = "Intro.\n\nRisky Business\nAfter seven years of crops."
    start = text.index("Risky")
    spans = place(text, [("Intro.", 0), ("Risky Business", start), ("Risky Business\nAfter seven years", start)], "x")
    assert spans == [(0, 6), (start, start + 14), (start, start + 32)]


def test_a_piece_rewritten_only_in_whitespace_maps_to_its_source_span():
    text = "Risky Business\n\n\nAfter seven   years.\nMore text.  After seven years."
    spans = place(text, [("Risky Business\nAfter seven years.", 0), ("After seven years.", None)], "x")
    assert [text[a:b] for a, b in spans] == ["Risky Business\n\n\nAfter seven   years.", "After seven years."]
    assert spans[1][0] > spans[0][0]  # the second is found after the first, not at the same words again
    with pytest.raises(ConfigError, match="rewrote more than its whitespace"):
        place(text, [("Risky  business", None)], "x")


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abc .,\n\t日本")), min_size=1, max_size=300))
def test_offsets_hold_for_any_text(text):
    doc = Document("d", text)
    for spec in ("langchain:RecursiveCharacterTextSplitter(chunk_size=20,chunk_overlap=5)",
                 "chonkie:RecursiveChunker(chunk_size=16)"):
        chunks = get_chunker(spec).chunk(doc)
        assert all(doc.text[c.start:c.end] == c.text and c.text.strip() for c in chunks)
        assert [c.position for c in chunks] == list(range(len(chunks)))


def test_the_spec_round_trips_and_the_library_version_is_in_the_key():
    import importlib.metadata

    chunker = get_chunker("langchain:RecursiveCharacterTextSplitter( chunk_size=800 , chunk_overlap=80)")
    assert chunker.spec == "langchain:RecursiveCharacterTextSplitter(chunk_overlap=80,chunk_size=800)"
    assert get_chunker(chunker.spec) == chunker
    version = importlib.metadata.version("langchain-text-splitters")
    assert chunker.version_string == f"foreign/2+langchain-text-splitters=={version}"
    assert get_chunker("semchunk(chunk_size=256)").spec == "semchunk(chunk_size=256)"
    with pytest.raises(ConfigError, match="name the chonkie splitter"):
        get_chunker("chonkie(chunk_size=5)")
    with pytest.raises(ConfigError, match="has no splitter 'Nope'"):
        get_chunker("langchain:Nope(chunk_size=5)").chunk(Document("d", TEXT))


def test_a_library_that_is_not_installed_names_the_extra(monkeypatch):
    real = builtins.__import__

    def missing(name, *args, **kwargs):
        if name.startswith("llama_index"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", missing)
    for module in ("llama_index", "llama_index.core", "llama_index.core.node_parser"):
        monkeypatch.setitem(sys.modules, module, None)  # an import finds nothing, as when not installed
    chunker = ForeignChunker.from_spec("llamaindex:SentenceSplitter(chunk_size=512)")
    with pytest.raises(ConfigError, match=r"needs llama-index-core: pip install 'grainlab\[splitters\]'"):
        chunker.chunk(Document("d", TEXT))


def test_compare_takes_library_splitters_as_candidates():
    from grainlab.studies.your_documents import parse_candidates

    spec = "langchain:RecursiveCharacterTextSplitter(chunk_size=800,chunk_overlap=80)"
    assert parse_candidates([spec, "S=semchunk(chunk_size=256)"]) == {spec: spec, "S": "semchunk(chunk_size=256)"}


def test_the_results_key_names_the_library_version_and_the_counting_tokenizer():
    from grainlab.experiments import System
    from grainlab.experiments.identity import key_parts, results_key

    spec = "semchunk(chunk_size=256)"
    parts = key_parts("f", System("bm25", spec, None), ["Tokens@5"], 5)
    assert parts["chunker"] == "semchunk(chunk_size=256) foreign(tokenizer=cl100k_base)"
    assert parts["versions"]["chunker"].startswith("foreign/2+semchunk==")
    assert results_key("f", System("bm25", spec, None), ["Tokens@5"], 5) != \
        results_key("f", System("bm25", "semchunk(chunk_size=128)", None), ["Tokens@5"], 5)
