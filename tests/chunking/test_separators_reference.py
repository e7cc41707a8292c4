"""recursive_separators against LangChain's RecursiveCharacterTextSplitter (what Chroma's report
ran), configured as the report describes: the same chunk texts, with exact offsets on our side."""

import pytest

from grainlab.chunking.separators import SEPARATORS, RecursiveSeparatorChunker
from grainlab.models.tokenizers import get_tokenizer

splitters = pytest.importorskip("langchain_text_splitters")


def langchain(text: str, size: int, overlap: int) -> list[str]:
    tok = get_tokenizer("cl100k_base")
    splitter = splitters.RecursiveCharacterTextSplitter(separators=list(SEPARATORS), chunk_size=size,
                                                        chunk_overlap=overlap, length_function=tok.count,
                                                        keep_separator=True, strip_whitespace=True)
    return splitter.split_text(text)


def ours(text: str, size: int, overlap: int) -> list[str]:
    return [text[s:e] for s, e in RecursiveSeparatorChunker(size=size, overlap=overlap).spans(text)]


TEXT = ("Chunking matters.\n\nA retriever reads chunks, not documents. Small chunks are precise? Large ones "
        "carry context! Both have costs.\nEvery line counts.\n\n" * 6) + "tail without a stop"


@pytest.mark.parametrize("size, overlap", [(12, 0), (20, 0), (20, 8), (40, 10)])
def test_same_chunks_as_langchain_on_hand_text(size, overlap):
    assert ours(TEXT, size, overlap) == langchain(TEXT, size, overlap)


@pytest.mark.mirror
@pytest.mark.parametrize("size, overlap", [(200, 0), (250, 125)])
def test_same_chunks_as_langchain_on_chromas_corpora(mirror, size, overlap):
    from grainlab.data import load_dataset

    data = load_dataset("chroma_chunking_eval", mirror=mirror)
    for doc in data.corpus.values():
        assert ours(doc.text, size, overlap) == langchain(doc.text, size, overlap), doc.doc_id
