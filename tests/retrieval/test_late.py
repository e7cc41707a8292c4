"""Late chunking against an independent transformers computation, and its span mechanics."""

import numpy as np
import pytest
import torch

from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.errors import ConfigError
from grainlab.models import Encoder
from grainlab.retrieval.late import (
    _STATES_MEMO,
    LateChunkingRetriever,
    LatePooler,
    framed_parts,
    framed_windows,
    macro_windows,
    stitch_windows,
    token_spans,
)

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TEXT = ("Berlin is the capital of Germany. It has 3.8 million inhabitants. The city lies on the Spree. "
        "Its zoo is the oldest in the country. Berlin hosted the 1936 Olympics.")


@pytest.fixture(scope="module")
def encoder():
    return Encoder(MINILM, batch_size=4, max_length=512)


@pytest.fixture(scope="module")
def reference(encoder):
    from transformers import AutoModel

    return AutoModel.from_pretrained(str(encoder.resolved.path)).eval()


def reference_states(encoder, model, ids):
    with torch.inference_mode():
        tensor = torch.tensor([ids])
        return model(input_ids=tensor, attention_mask=torch.ones_like(tensor)).last_hidden_state[0].numpy()


def test_windows_and_stitching():
    assert macro_windows(10, 512, 256) == [(0, 10)]
    assert macro_windows(600, 512, 256) == [(0, 512), (256, 600)]
    assert macro_windows(1000, 512, 256) == [(0, 512), (256, 768), (512, 1000)]
    parts = [np.arange(512), np.arange(256, 600)]
    assert stitch_windows(parts, 256).tolist() == list(range(600))
    with pytest.raises(ConfigError):
        macro_windows(10, 8, 8)


def test_spans_start_at_cls_and_end_with_sep(encoder):
    enc = encoder.tokenizer(TEXT, return_offsets_mapping=True, return_special_tokens_mask=True)
    chunks = get_chunker("sentences(n=2)").chunk(Document("d", TEXT))
    spans = token_spans(enc["offset_mapping"], enc["special_tokens_mask"], [(c.start, c.end) for c in chunks])
    assert spans[0][0] == 0 and spans[-1][1] == len(enc["input_ids"])
    assert enc["input_ids"][0] == encoder.tokenizer.cls_token_id
    assert enc["input_ids"][spans[-1][1] - 1] == encoder.tokenizer.sep_token_id
    for (_, e), (s2, _) in zip(spans, spans[1:]):
        assert e == s2  # contiguous: whitespace between chunks has no token
    for chunk, (s, e) in zip(chunks[1:-1], spans[1:-1]):  # interior spans: exactly the chunk's tokens
        expected = {enc.char_to_token(i) for i in range(chunk.start, chunk.end)} - {None}
        assert set(range(s, e)) == expected


def test_pooling_equals_independent_computation(encoder, reference):
    chunks = get_chunker("sentences(n=2)").chunk(Document("d", TEXT))
    ours = LatePooler(encoder).embed([Document("d", TEXT)], {"d": chunks})
    ids = encoder.tokenizer(TEXT)["input_ids"]
    states = reference_states(encoder, reference, ids)
    enc = encoder.tokenizer(TEXT, return_offsets_mapping=True, return_special_tokens_mask=True)
    spans = token_spans(enc["offset_mapping"], enc["special_tokens_mask"], [(c.start, c.end) for c in chunks])
    for chunk, (s, e) in zip(chunks, spans):
        expected = states[s:e].mean(0)
        expected /= np.linalg.norm(expected)
        assert np.abs(ours[chunk.chunk_id] - expected).max() < 1e-5
        assert np.linalg.norm(ours[chunk.chunk_id]) == pytest.approx(1.0, abs=1e-5)


def test_long_late_chunking_equals_single_pass_when_the_document_fits(encoder):
    doc = Document("d", TEXT)
    chunks = {"d": get_chunker("sentences(n=1)").chunk(doc)}
    single = LatePooler(encoder, overlap=256, window=512).embed([doc], chunks)
    windowed = LatePooler(encoder, overlap=8, window=200).embed([doc], chunks)  # still one window
    assert all(np.allclose(single[k], windowed[k], atol=1e-6) for k in single)


def test_long_document_windows_match_manual_windows(encoder, reference):
    long_text = " ".join([TEXT] * 6)
    late = LatePooler(encoder, overlap=16, window=64)
    (states, enc), = late.document_states([long_text])
    ids = enc["input_ids"]
    assert states.shape[0] == len(ids) > 64
    manual = [reference_states(encoder, reference, ids[s:e]) for s, e in macro_windows(len(ids), 64, 16)]
    assert np.abs(states - stitch_windows(manual, 16)).max() < 1e-4


PREFIX = "search_document: "


def test_framed_windows_hold_the_text_between_their_own_frame():
    # [CLS] search _ document : (prefix, 4 tokens ending at char 17) text… [SEP]
    offsets = [(0, 0), (0, 6), (7, 15), (15, 16), (17, 17), *[(17 + i, 18 + i) for i in range(20)], (0, 0)]
    special = [1] + [0] * (len(offsets) - 2) + [1]
    ids = list(range(len(offsets)))
    assert framed_parts(ids, special, offsets, len(PREFIX)) == (5, 1)
    windows = framed_windows(len(ids), 5, 1, window=16, overlap=4)  # 10 text tokens a window
    assert windows == [(5, 15), (11, 21), (17, 25)]
    with pytest.raises(ConfigError, match="fewer than the overlap"):
        framed_windows(len(ids), 5, 1, window=10, overlap=4)
    with pytest.raises(ConfigError, match="special tokens"):
        framed_parts(ids, [0] * len(ids), offsets, len(PREFIX))


def test_framed_windows_equal_independent_framed_passes_and_keep_the_offsets(encoder, reference):
    """Issue 60: every window after the first began mid-text, without [CLS], prefix or [SEP].
    Framed, each window is [CLS] + prefix + its slice + [SEP], computed here by hand with
    transformers; the first window's frame and the last window's [SEP] stand for the whole."""
    text = PREFIX + " ".join([TEXT] * 6)
    late = LatePooler(encoder, overlap=16, window=64, framing="framed")
    (states, enc), = late.document_states([text], prefix_chars=len(PREFIX))
    ids = enc["input_ids"]
    head, tail = framed_parts(ids, enc["special_tokens_mask"], enc["offset_mapping"], len(PREFIX))
    assert ids[0] == encoder.tokenizer.cls_token_id and ids[-1] == encoder.tokenizer.sep_token_id
    assert encoder.tokenizer.decode(ids[1:head]).replace(" ", "") == PREFIX.strip().replace(" ", "")
    windows = framed_windows(len(ids), head, tail, 64, 16)
    assert len(windows) >= 3 and all(e - s <= 64 - head - tail for s, e in windows)
    passes = [reference_states(encoder, reference, ids[:head] + ids[s:e] + ids[-tail:]) for s, e in windows]
    expected = np.concatenate([passes[0][:head], stitch_windows([p[head:-tail] for p in passes], 16), passes[-1][-tail:]])
    assert states.shape == (len(ids), expected.shape[1])
    assert np.abs(states - expected).max() < 1e-4
    sliced, _ = LatePooler(encoder, overlap=16, window=64).document_states([text])[0]
    assert np.abs(states[-5:] - sliced[-5:]).max() > 1e-3  # later windows now read their own frame


def test_framing_changes_nothing_for_a_document_that_fits_one_window(encoder):
    doc = Document("d", TEXT)
    chunks = {"d": get_chunker("sentences(n=1)").chunk(doc)}
    sliced = LatePooler(encoder, overlap=8, window=200).embed([doc], chunks)
    framed = LatePooler(encoder, overlap=8, window=200, framing="framed").embed([doc], chunks)
    assert all(np.allclose(sliced[k], framed[k], atol=1e-6) for k in sliced)
    with pytest.raises(ConfigError, match="framing must be one of"):
        LatePooler(encoder, framing="padded")


def test_the_results_key_names_framing_only_when_framed():
    from grainlab.experiments.identity import retriever_identity

    plain = retriever_identity("late(model=nomic-ai/nomic-embed-text-v1.5,max_length=512)")
    assert plain == retriever_identity("late(model=nomic-ai/nomic-embed-text-v1.5,max_length=512,framing=sliced)")
    assert "framing" not in plain["spec"]  # the stored tables' keys, computed before the option existed
    framed = retriever_identity("late(model=nomic-ai/nomic-embed-text-v1.5,max_length=512,framing=framed)")
    assert "framing=framed" in framed["spec"] and framed != plain


def test_retriever_ranks_and_needs_documents(cache):
    docs = {"berlin": Document("berlin", TEXT),
            "tea": Document("tea", "Tea is brewed from leaves. Green tea is not oxidised. Black tea is.")}
    units = get_chunker("sentences(n=1)").chunk_many(docs.values())
    with pytest.raises(ConfigError, match="pass the documents"):
        LateChunkingRetriever(MINILM, cache=cache).index(units)
    with pytest.raises(ConfigError, match="whose text was not given"):
        LateChunkingRetriever(MINILM, cache=cache).index(units, documents={"tea": docs["tea"]})
    retriever = LateChunkingRetriever(MINILM, cache=cache).index(units, documents=docs)
    top = retriever.search({"q": "how many people live in the German capital"}, k=2, aggregate="max")["q"]
    assert top[0][0] == "berlin"
    assert retriever.spec == f"late(model={MINILM},overlap=256,max_length=512)"


def test_token_states_are_shared_between_chunkers_but_not_between_settings(encoder, monkeypatch):
    doc = Document("d", TEXT)
    late = LatePooler(encoder, overlap=256, window=512)
    calls = []
    original = LatePooler.document_states

    def counting(self, texts, progress=False, prefix_chars=0):
        calls.append((self.window, self.overlap, self.framing))
        return original(self, texts, progress, prefix_chars)

    monkeypatch.setattr(LatePooler, "document_states", counting)
    by_sentence = late.embed([doc], {"d": get_chunker("sentences(n=1)").chunk(doc)})
    by_pair = late.embed([doc], {"d": get_chunker("sentences(n=2)").chunk(doc)})
    assert calls == [(512, 256, "sliced")]  # the second chunker only re-pools
    LatePooler(encoder, overlap=8, window=200).embed([doc], {"d": get_chunker("sentences(n=1)").chunk(doc)})
    assert calls == [(512, 256, "sliced"), (200, 8, "sliced")]  # other window settings: encoded again
    LatePooler(encoder, overlap=8, window=200, framing="framed").embed([doc], {"d": get_chunker("sentences(n=1)").chunk(doc)})
    assert calls[-1] == (200, 8, "framed")
    _STATES_MEMO.clear()
    recomputed = late.embed([doc], {"d": get_chunker("sentences(n=2)").chunk(doc)})
    assert all(np.allclose(by_pair[k], recomputed[k], atol=1e-6) for k in by_pair)
    assert len(by_sentence) > len(by_pair)
