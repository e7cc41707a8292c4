"""Every chunker's invariants on Japanese text: generated (hypothesis — kanji, kana, half- and
full-width forms, mixed English terms, Japanese punctuation and brackets, headings, lists, tables,
code) and the three real Japanese articles of the mirror; and Japanese sentence boundaries on them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from grainlab.chunking import get_chunker, sentence_spans
from grainlab.chunking.propositions import PropositionChunker
from grainlab.data import Document
from grainlab.languages import detect_language
from grainlab.models.tokenizers import get_tokenizer
from grainlab.readers.propositions import ParsedPropositions
from tests.chunking.test_invariants import CHUNKERS, OVERLAPPING
from tests.chunking.test_semantic import SPECS as SEMANTIC

REPO = Path(__file__).resolve().parents[2]
WORDS = st.sampled_from(["東京", "検索", "チャンク", "分割幅", "は", "を", "に", "の", "です", "ます", "RAG", "BM25",
                         "Dense Retrieval", "２０２６年", "ｶﾀｶﾅ", "「例外」", "（注）", "・", "ー", "🙂", "Ａ",
                         "e.g.", "ア゙", "𠮷", "々", "〜", "cl100k_base"])
SEPS = st.sampled_from(["", "", "", "、", "。", "！", "？", "。\n", "\n\n", "\u3000", " ", "」。", "\n", "…"])
MARKUP = st.sampled_from(["## 見出し\n", "# 第1章 概要\n", "・項目\n", "1. 手順\n", "| 列 | 値 |\n", "|---|---|\n",
                          "```python\nprint('検索')\n```\n", "※注記\n", "【重要】", "> 引用文。\n", "「質問？」と尋ねた。"])
TEXT = st.one_of(
    st.lists(st.tuples(WORDS, SEPS), max_size=150).map(lambda p: "".join(w + s for w, s in p)),
    st.lists(st.one_of(st.tuples(WORDS, SEPS).map("".join), MARKUP), max_size=80).map("".join),
)
ALL = CHUNKERS + SEMANTIC
SIZED = [s for s in ALL if s.startswith(("fixed", "recursive", "structure", "parent", "maxmin", "breakpoint",
                                         "cluster_semantic"))]
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def limit_of(chunker) -> int:
    return getattr(chunker, "size", None) or chunker.child_size


def check_invariants(spec: str, doc: Document) -> None:
    """Exact offsets, ids from doc id and position, nothing lost, sizes within the limit (counted
    again by the chunker's tokenizer), no overlap unless asked for."""
    chunker = get_chunker(spec)
    chunks = chunker.chunk(doc)
    covered = [False] * len(doc.text)
    for position, chunk in enumerate(chunks):
        assert doc.text[chunk.start:chunk.end] == chunk.text == chunk.text.strip()
        assert chunk.chunk_id == f"{doc.doc_id}#{position}" and chunk.position == position
        covered[chunk.start:chunk.end] = [True] * (chunk.end - chunk.start)
    assert [c for c, hit in zip(doc.text, covered) if not hit and not c.isspace()] == []
    if spec in SIZED:
        tokenizer = get_tokenizer(chunker.tokenizer)
        assert all(c.n_tokens == tokenizer.count(c.index_text) <= limit_of(chunker) for c in chunks)
    if spec not in OVERLAPPING:
        assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))


@pytest.mark.parametrize("spec", ALL)
@PROPERTY
@given(text=TEXT)
def test_every_chunker_keeps_its_invariants_on_japanese_text(spec, text):
    check_invariants(spec, Document("文書-1", text))


@PROPERTY
@given(text=TEXT, propositions=st.lists(st.text(alphabet="検索分割幅はをのです。", min_size=1, max_size=12),
                                        min_size=1, max_size=5))
def test_proposition_units_keep_exact_offsets_on_japanese_text(text, propositions):
    """A proposition unit keeps the span of its source sentence (the fallback: the sentences);
    blank passages never reach it (``decompose`` skips them)."""
    assume(text.strip())
    doc = Document("文書", text, "t")
    chunker: PropositionChunker = get_chunker("propositions()")
    decomposition = chunker._filter(doc, ParsedPropositions(tuple(dict.fromkeys(propositions)), "json"), raw="")
    chunks = chunker._units(doc, decomposition)
    assert all(doc.text[c.start:c.end] == c.text for c in chunks)
    assert [c.position for c in chunks] == list(range(len(chunks)))


@PROPERTY
@given(text=TEXT)
def test_japanese_sentences_end_at_a_full_stop_outside_brackets(text):
    """Where ``。`` closes a sentence outside any bracket and text follows on the same line, a
    sentence ends right there (in Japanese text; pysbd's Japanese rules)."""
    if detect_language(text) != "ja":
        return
    ends = {end for _, end in sentence_spans(text)}
    depth = 0
    for i, char in enumerate(text):
        depth = 0 if char == "\n" else depth + (char in "「『（【") - (char in "」』）】" and depth > 0)
        if char == "。" and depth == 0 and i + 1 < len(text) and text[i + 1] not in "。！？」』）】\n…" \
                and not text[i + 1].isspace():
            assert i + 1 in ends, (text[max(0, i - 10):i + 10], i)


@pytest.mark.parametrize("text, sentences", [
    ("東京e.g.。東京", ["東京e.g.。", "東京"]),  # pysbd starts a sentence at the 。 after an abbreviation
    ("東京e.g.。東京。東京", ["東京e.g.。", "東京。", "東京"]),  # … and then misses the next 。
    ("「質問？。」と尋ねた。東京。", ["「質問？。」と尋ねた。", "東京。"]),  # a 。 inside brackets ends nothing
    ("検索です。」東京", ["検索です。」", "東京"]),  # a closing bracket stays with the sentence it closes
])
def test_japanese_full_stops_where_pysbd_misses_them(text, sentences):
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences


# ---------------------------------------------------------------- the real articles (mirror)


def articles() -> list[Path]:
    import os

    root = Path(os.environ.get("GRAINLAB_MIRROR") or REPO.parent / "shared" / "data") / "japanese_rag_articles"
    found = sorted(root.glob("*_*.txt"))
    if not found:
        pytest.skip(f"no Japanese articles in {root}")
    return found


@pytest.mark.mirror
@pytest.mark.parametrize("spec", ALL + ["maxmin(size=256)", "breakpoint(size=256)", "sentences(n=5)"])
def test_every_chunker_keeps_its_invariants_on_the_japanese_articles(spec):
    for path in articles():
        check_invariants(spec, Document(path.stem, path.read_text(encoding="utf-8")))


@pytest.mark.mirror
def test_sentence_boundaries_on_the_articles_match_the_written_rule():
    """The sentence-boundary benchmark's written rule (line ends; ``。！？!?`` with closing brackets,
    outside brackets): grainlab finds every boundary and adds at most two."""
    spec = importlib.util.spec_from_file_location("japanese_sentences", REPO / "benchmarks" / "japanese_sentences.py")
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    found = reference = correct = 0
    for path in articles():
        text = path.read_text(encoding="utf-8")
        ours, rule = {end for _, end in sentence_spans(text)}, bench.reference_boundaries(text)
        assert detect_language(text) == "ja"
        found, reference, correct = found + len(ours), reference + len(rule), correct + len(ours & rule)
    assert correct == reference and found - correct <= 2  # today 1: after "et al." inside a reference entry


@pytest.mark.mirror
def test_proposition_units_keep_exact_offsets_on_the_japanese_articles():
    """The propositions chunker on real Japanese passages, with the passages' own sentences (and
    each sentence shortened) standing in for a model's propositions: every unit is an exact span
    of its passage, positioned in order (no model is run)."""
    chunker: PropositionChunker = get_chunker("propositions()")
    passages = get_chunker("structure(size=300)")
    checked = 0
    for path in articles():
        for passage in passages.chunk(Document(path.stem, path.read_text(encoding="utf-8"))):
            doc = Document(passage.chunk_id, passage.text, path.stem)
            sentences = [doc.text[a:b] for a, b in sentence_spans(doc.text)]
            propositions = tuple(dict.fromkeys([*sentences, *(s[: max(1, len(s) // 2)] for s in sentences)]))
            decomposition = chunker._filter(doc, ParsedPropositions(propositions, "json"), raw="")
            units = chunker._units(doc, decomposition)
            assert units and all(doc.text[u.start:u.end] == u.text for u in units)
            assert [u.position for u in units] == list(range(len(units)))
            checked += 1
    assert checked >= 50
