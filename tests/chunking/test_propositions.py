"""Proposition units: exact source spans, model text as the indexed rewrite, honest fallbacks."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grainlab.chunking import decomposition_report, get_chunker, sentence_spans
from grainlab.chunking.propositions import best_sentence, support, words
from grainlab.data import Document
from grainlab.readers.propositions import ParsedPropositions

DOC = Document("sb50#0", "Super Bowl 50 was an American football game. The Denver Broncos defeated the Carolina "
                         "Panthers 24–10. It was played in Santa Clara.", "Super Bowl 50")
CHUNKER = get_chunker("propositions()")


def units(parsed: ParsedPropositions, doc: Document = DOC):
    decomposition = CHUNKER._filter(doc, parsed, raw="")
    return decomposition, CHUNKER._units(doc, decomposition)


def test_propositions_index_their_text_and_point_at_their_sentence():
    parsed = ParsedPropositions(("The Denver Broncos defeated the Carolina Panthers.",
                                 "Super Bowl 50 was played in Santa Clara."), "json")
    decomposition, chunks = units(parsed)
    assert decomposition.status == "json" and len(chunks) == 2
    assert [c.chunk_id for c in chunks] == ["sb50#0#0", "sb50#0#1"]
    assert chunks[0].text == "The Denver Broncos defeated the Carolina Panthers 24–10."
    assert chunks[1].text == "It was played in Santa Clara."
    for chunk, proposition in zip(chunks, parsed.propositions):
        assert DOC.text[chunk.start:chunk.end] == chunk.text
        assert chunk.rewrite == proposition and chunk.index_text == proposition


def test_unsupported_propositions_are_dropped_and_counted():
    parsed = ParsedPropositions(("Hares laid eggs in German gardens.", "The Broncos defeated the Panthers."), "json")
    decomposition, chunks = units(parsed)
    assert decomposition.dropped == ("Hares laid eggs in German gardens.",)
    assert [c.rewrite for c in chunks] == ["The Broncos defeated the Panthers."]


def test_failed_or_wholly_unsupported_output_falls_back_to_sentences():
    for parsed, status in ((ParsedPropositions((), "failed"), "failed"),
                           (ParsedPropositions(("Hares laid eggs.",), "repaired"), "unsupported")):
        decomposition, chunks = units(parsed)
        assert decomposition.status == status
        assert [(c.start, c.end) for c in chunks] == sentence_spans(DOC.text)
        assert all(c.rewrite == "" and c.metadata["fallback"] for c in chunks)


def test_report_counts_outcomes_and_sizes():
    decompositions = [units(ParsedPropositions(("The Broncos defeated the Panthers.",
                                                 "Super Bowl 50 was a game."), "json", repeats=2))[0],
                      units(ParsedPropositions((), "failed"))[0]]
    report = decomposition_report(decompositions, {DOC.doc_id: DOC})
    assert report["passages"] == 2 and report["propositions"] == 2
    assert report["propositions_per_passage"] == 1.0 and report["words_per_proposition"] == 5.5
    assert report["json_share"] == 0.5 and report["failed_share"] == 0.5 and report["fallback_share"] == 0.5
    assert report["repeats_per_passage"] == 1.0
    assert report["word_support"] == pytest.approx((1 + 5 / 6) / 2)  # "a" is not in the passage ("an" is)
    vocabulary = set(words(DOC.text))
    said = set(words("The Broncos defeated the Panthers. Super Bowl 50 was a game."))
    assert report["passage_word_coverage"] == pytest.approx(len(vocabulary & said) / len(vocabulary))


def test_report_splits_outputs_at_the_token_limit_into_loops_and_cuts():
    from dataclasses import replace

    looped = replace(units(ParsedPropositions(("The Broncos defeated the Panthers.",), "repaired", repeats=9))[0],
                     new_tokens=512)
    cut = replace(units(ParsedPropositions(("Super Bowl 50 was a game.",), "repaired"))[0], new_tokens=512)
    done = replace(units(ParsedPropositions(("Super Bowl 50 was a game.",), "json"))[0], new_tokens=80)
    report = decomposition_report([looped, cut, done, done], {DOC.doc_id: DOC}, max_new_tokens=512)
    assert (report["at_limit_share"], report["looped_share"], report["cut_share"]) == (0.5, 0.25, 0.25)
    assert "at_limit_share" not in decomposition_report([done], {DOC.doc_id: DOC})


WORD = st.sampled_from(["alpha", "beta", "gamma", "delta", "Mars", "1999", "the"])
TEXT = st.lists(st.lists(WORD, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=6).map(
    lambda sentences: ". ".join(sentences) + ".")


@given(TEXT, st.lists(st.lists(WORD, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=6))
def test_every_unit_keeps_exact_offsets(text, propositions):
    doc = Document("d", text, "t")
    _, chunks = units(ParsedPropositions(tuple(dict.fromkeys(propositions)), "json"), doc)
    assert chunks and all(doc.text[c.start:c.end] == c.text for c in chunks)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert all(support(c.rewrite, text) >= CHUNKER.min_support for c in chunks if c.rewrite)


def test_best_sentence_prefers_overlap_then_the_earliest():
    spans = sentence_spans(DOC.text)
    assert best_sentence("Santa Clara", DOC.text, spans) == spans[2]
    assert best_sentence("nothing shared", DOC.text, spans) == spans[0]
