"""nomic-embed-text-v1.5 on llama.cpp: its vocabulary and tokens, pooling against the runtime's
own, Matryoshka sizes, late chunking's span mechanics, and retrieval."""

import numpy as np
import pytest

from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.errors import ConfigError
from grainlab.models.embedders import context_length, load_encoder
from grainlab.models.llama_encoder import LlamaEncoder, wordpiece_vocabulary
from grainlab.models.llama_runtime import runtime
from grainlab.models.resolve import resolve_model
from grainlab.retrieval import get_retriever
from grainlab.retrieval.late import LatePooler, token_spans

NOMIC = "nomic-ai/nomic-embed-text-v1.5"
TEXTS = ["Interleukin-6 (IL-6) levels rose 3.8-fold in mice; p < 0.001.",
         "Café naïve résumé — Zürich’s façade, 北京 and Ωmega!",
         "search_query: what is late chunking?",
         "The quick brown fox jumps over the lazy dog. " * 40]
TEXT = ("Berlin is the capital of Germany. It has 3.8 million inhabitants. The city lies on the Spree. "
        "Its zoo is the oldest in the country. Berlin hosted the 1936 Olympics.")


@pytest.fixture(scope="module")
def nomic():
    return LlamaEncoder(NOMIC, batch_size=4)


@pytest.fixture(scope="module")
def pooled_server(nomic):
    """The runtime's own mean pooling, an independent path to the same embedding."""
    import requests

    xllamacpp = runtime()
    params = xllamacpp.CommonParams()
    params.model.path = str(nomic.file.path)
    params.embedding = True
    params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
    params.n_ctx = params.n_batch = params.n_ubatch = 2048
    params.port, params.verbosity, params.warmup = 0, -1, False
    server = xllamacpp.Server(params)
    base = server.listening_address if server.listening_address.startswith("http") else f"http://{server.listening_address}"

    def embed(text: str) -> np.ndarray:
        vector = np.asarray(requests.post(base + "/embedding", json={"content": text}).json()[0]["embedding"][0])
        return vector / np.linalg.norm(vector)
    embed.server = server
    return embed


def test_the_gguf_vocabulary_is_bert_base_uncased(nomic):
    minilm = (resolve_model("sentence-transformers/all-MiniLM-L6-v2").path / "vocab.txt").read_text().splitlines()
    assert wordpiece_vocabulary(nomic.file.path) == minilm


def test_tokens_and_offsets_match_llama_cpp(nomic):
    for text in TEXTS:
        encoded = nomic.tokenizer(text, return_offsets_mapping=True)
        assert encoded["input_ids"] == nomic.runtime.tokenize(text), text
    encoded = nomic.tokenizer(TEXTS[1], return_offsets_mapping=True, return_special_tokens_mask=True)
    spans = [span for span, special in zip(encoded["offset_mapping"], encoded["special_tokens_mask"]) if not special]
    assert all(0 <= s < e <= len(TEXTS[1]) for s, e in spans) and TEXTS[1][slice(*spans[0])] == "Café"


def test_mean_pooled_states_equal_the_runtime_pooling(nomic, pooled_server):
    ours = nomic.encode_passages(TEXTS)
    for text, vector in zip(TEXTS, ours):
        assert float(vector @ pooled_server(nomic.config.passage_prefix + text)) >= 0.9999


@pytest.mark.slow
@pytest.mark.mirror
@pytest.mark.parametrize("n_documents", [15, pytest.param(50, marks=pytest.mark.long)])
def test_scifact_documents_pool_as_the_runtime_does(nomic, pooled_server, mirror, n_documents):
    """SciFact abstracts, each encoded by us and by the llama.cpp server's own pooling: in CI the first
    ten and the five longest of the first 200; the issue's 50 (the first 50) with `make test-long`."""
    from grainlab.data import load_dataset

    head = list(load_dataset("scifact", mirror=mirror, allow_download=False).corpus.values())[:200]
    longest = sorted(head[10:], key=lambda d: len(d.text), reverse=True)[:5]
    documents = head[:50] if n_documents == 50 else head[:10] + longest
    texts = [f"{d.title} {d.text}".strip() for d in documents]
    ours = nomic.encode_passages(texts)
    cosines = [float(v @ pooled_server(nomic.config.passage_prefix + t)) for t, v in zip(texts, ours)]
    assert min(cosines) >= 0.999


def test_the_model_defines_its_prefixes_context_and_dimensions(nomic):
    assert (nomic.config.query_prefix, nomic.config.passage_prefix) == ("search_query: ", "search_document: ")
    assert nomic.config.max_length == context_length(NOMIC) == 2048
    assert nomic.identity["revision"].startswith("sha256:f7af6f66") and nomic.identity["dimension"] == 768
    assert isinstance(load_encoder(f"{NOMIC}-GGUF", backend="llama.cpp"), LlamaEncoder)
    with pytest.raises(ConfigError, match="rotary scaling"):
        LlamaEncoder(NOMIC, max_length=4096)
    with pytest.raises(ConfigError, match="Matryoshka"):
        LlamaEncoder(NOMIC, dimension=300)
    with pytest.raises(ConfigError, match="no Matryoshka"):
        load_encoder("sentence-transformers/all-MiniLM-L6-v2", dimension=128)


def test_matryoshka_vectors_follow_the_model_card(nomic):
    small = LlamaEncoder(NOMIC, dimension=256)
    full = nomic.encode_queries(TEXTS[:2])
    truncated = small.encode_queries(TEXTS[:2])
    assert truncated.shape == (2, 256) and np.allclose(np.linalg.norm(truncated, axis=1), 1.0, atol=1e-5)
    # the card: layer norm over the full (mean-pooled) vector, keep the first 256, normalise
    batch = nomic.tokenize([nomic.config.query_prefix + t for t in TEXTS[:2]])
    mean = (nomic.token_states(batch) * batch["attention_mask"][..., None]).sum(1) / batch["attention_mask"].sum(1, keepdims=True)
    normed = (mean - mean.mean(1, keepdims=True)) / np.sqrt(mean.var(1, keepdims=True) + 1e-5)
    expected = normed[:, :256] / np.linalg.norm(normed[:, :256], axis=1, keepdims=True)
    assert np.abs(truncated - expected).max() < 1e-5
    assert small.identity != nomic.identity and not np.allclose(full[:, :256] / np.linalg.norm(full[:, :256], axis=1,
                                                                                                 keepdims=True), truncated)


def test_late_spans_cover_the_prefix_and_the_final_special_token(nomic):
    prefix = nomic.config.passage_prefix
    enc = nomic.tokenizer(prefix + TEXT, return_offsets_mapping=True, return_special_tokens_mask=True)
    chunks = get_chunker("sentences(n=2)").chunk(Document("d", TEXT))
    spans = token_spans(enc["offset_mapping"], enc["special_tokens_mask"],
                        [(c.start + len(prefix), c.end + len(prefix)) for c in chunks])
    prefix_tokens = len(nomic.tokenizer(prefix, add_special_tokens=False)["input_ids"])
    assert spans[0][0] == 0 and spans[0][1] > 1 + prefix_tokens  # [CLS] + the prefix + the first chunk
    assert spans[-1][1] == len(enc["input_ids"]) and enc["input_ids"][-1] == nomic.tokenizer.sep_token_id
    assert all(e == s for (_, e), (s, _) in zip(spans, spans[1:]))


def test_late_chunks_pool_the_runtime_states_of_the_whole_document(nomic):
    doc = Document("d", TEXT)
    chunks = get_chunker("sentences(n=2)").chunk(doc)
    late = LatePooler(nomic, overlap=256).embed([doc], {"d": chunks})
    prefix = nomic.config.passage_prefix
    states = np.asarray(nomic.runtime.post("/embedding", {"content": prefix + TEXT})[0]["embedding"])  # from text
    enc = nomic.tokenizer(prefix + TEXT, return_offsets_mapping=True, return_special_tokens_mask=True)
    spans = token_spans(enc["offset_mapping"], enc["special_tokens_mask"],
                        [(c.start + len(prefix), c.end + len(prefix)) for c in chunks])
    for chunk, (s, e) in zip(chunks, spans):
        expected = states[s:e].mean(0)
        assert np.abs(late[chunk.chunk_id] - expected / np.linalg.norm(expected)).max() < 1e-4
    whole = LatePooler(nomic).embed([doc], {"d": get_chunker("none").chunk(doc)})
    assert float(next(iter(whole.values())) @ nomic.encode_passages([TEXT])[0]) > 0.9999  # one span = the embedding


def test_one_window_is_one_pass(nomic):
    doc = Document("d", TEXT)
    chunks = {"d": get_chunker("sentences(n=1)").chunk(doc)}
    single = LatePooler(nomic, overlap=256).embed([doc], chunks)
    windowed = LatePooler(nomic, overlap=8, window=200).embed([doc], chunks)  # the document still fits
    assert all(np.allclose(single[k], windowed[k], atol=1e-6) for k in single)


def test_dense_and_late_retrieval_with_nomic(cache):
    docs = {"berlin": Document("berlin", TEXT),
            "tea": Document("tea", "Green tea is made from unoxidised leaves. It is popular in Japan and China.")}
    units = get_chunker("sentences(n=1)").chunk_many(docs.values())
    dense = get_retriever(f"dense(model={NOMIC},dimension=256,backend=llama.cpp)", cache=cache)
    assert dense.spec == f"dense(model={NOMIC},max_length=2048,dimension=256,backend=llama.cpp)"
    for retriever in (dense, get_retriever(f"late(model={NOMIC},backend=llama.cpp)", cache=cache)):
        run = retriever.index(units, docs).search({"q": "Which city has the oldest zoo?"}, k=2, aggregate="max")
        assert run["q"][0][0] == "berlin"
