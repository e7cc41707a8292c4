"""The offline cross-encoder: pair format, order independence, relevance, caching."""

import numpy as np
import pytest

from grainlab.models.cross_encoders import get_cross_encoder
from grainlab.retrieval.rerank import Reranker

MODEL = "cross-encoder/ms-marco-MiniLM-L-12-v2"
QUERY = "what do photovoltaic cells convert into electricity"
PASSAGES = {"good": "Photovoltaic cells convert sunlight directly into electricity.",
            "bad": "Tea is an aromatic beverage prepared with hot water.",
            "meh": "Electricity can be stored in lithium-ion batteries."}


@pytest.fixture(scope="module")
def encoder():
    return get_cross_encoder(MODEL)


def test_pair_input_format(encoder):
    batch = encoder.tokenizer([QUERY], [PASSAGES["good"]], return_tensors="np")
    ids, types = batch["input_ids"][0], batch["token_type_ids"][0]
    sep = encoder.tokenizer.sep_token_id
    assert ids[0] == encoder.tokenizer.cls_token_id and ids[-1] == sep and (ids == sep).sum() == 2
    first_sep = int(np.argmax(ids == sep))
    assert set(types[:first_sep + 1]) == {0} and set(types[first_sep + 1:]) == {1}


def test_a_score_does_not_depend_on_the_other_pairs(encoder):
    """Dynamic int8 ONNX quantises activations per batch, so batched pairs moved each other's
    logits (up to 0.39 on SciFact): the ONNX copy scores one pair per call, and a pair's score is
    the same in any company and any order; torch batches, within float noise."""
    pairs = [(QUERY, p) for p in PASSAGES.values()]
    together = encoder.score(pairs)
    alone = np.array([encoder.score([pair])[0] for pair in pairs])
    reversed_ = encoder.score(pairs[::-1])[::-1]
    tolerance = 0.0 if encoder.resolved.backend == "onnx" else 1e-4
    assert np.abs(together - alone).max() <= tolerance and np.abs(together - reversed_).max() <= tolerance
    assert encoder.batch_size == (1 if encoder.resolved.backend == "onnx" else 32)


def test_relevant_passage_ranks_first_and_cache_is_used(cache, monkeypatch):
    run = {"q": [("bad", 3.0), ("meh", 2.0), ("good", 1.0)]}
    reranker = Reranker(MODEL, cache=cache)
    out = reranker.rerank({"q": QUERY}, run, PASSAGES, k=3)
    assert out["q"][0][0] == "good" and out["q"][-1][0] == "bad"
    assert [d for d, _ in reranker.rerank({"q": QUERY}, run, PASSAGES, k=2)["q"]] == ["meh", "bad"]
    monkeypatch.setattr(reranker.encoder, "score", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    assert reranker.rerank({"q": QUERY}, run, PASSAGES, k=3) == out  # in-process memo
    assert Reranker(MODEL, cache=cache).rerank({"q": QUERY}, run, PASSAGES, k=3) == out  # disk cache
