"""Whole-document SciFact on the real mirror lands near published numbers.

BM25 within 0.66–0.70 (bm25s 0.6863 measured here), all-MiniLM-L6-v2 within 0.01 of 0.6451
(MTEB) run in CI (~4 min of encoding cold; embeddings are cached, so only the first run on a
machine pays). bge-small-en-v1.5 within 0.01 of 0.7127 (MTEB; its int8 ONNX copy run in float32 offline: 0.7130; ~6 min cold on an idle machine)
and nomic-embed-text-v1.5 within 0.01 of 0.7028 (MTEB; f16 GGUF on llama.cpp; over an hour cold on
2 cores) are marked ``long``: ``make test-long``, not CI, which must stay under 30 minutes cold.
"""

import pytest

from grainlab.chunking import get_chunker
from grainlab.data import load_dataset
from grainlab.evaluation import evaluate_run
from grainlab.retrieval import get_retriever
from grainlab.sanity_gates import SCIFACT_GATES

pytestmark = [pytest.mark.mirror, pytest.mark.slow]


@pytest.fixture(scope="module")
def scifact(mirror):
    data = load_dataset("scifact", mirror=mirror, allow_download=False)
    return data, get_chunker("none").chunk_many(data.corpus.values())


@pytest.mark.parametrize("spec,gate", [
    ("bm25", "bm25"),
    pytest.param("dense(model=sentence-transformers/all-MiniLM-L6-v2)", "sentence-transformers/all-MiniLM-L6-v2",
                 marks=pytest.mark.long),  # 325 s cold (5,183 abstracts): out of CI, which must stay under 30 min
    pytest.param("dense(model=BAAI/bge-small-en-v1.5)", "BAAI/bge-small-en-v1.5",
                 marks=pytest.mark.long),  # ~6 min cold: out of CI
    pytest.param("dense(model=nomic-ai/nomic-embed-text-v1.5)", "nomic-ai/nomic-embed-text-v1.5",
                 marks=pytest.mark.long),  # ~1.8 M tokens through a 137M-parameter f16 model: over an hour cold
])
def test_scifact_gate(scifact, spec, gate):
    data, units = scifact
    run = get_retriever(spec).index(units).search(data.queries, k=100, aggregate="max")
    ndcg = evaluate_run(run, data.qrels, ["nDCG@10"])["value"].mean()
    expected, tolerance, source = SCIFACT_GATES[gate]
    assert abs(ndcg - expected) <= tolerance, f"{spec}: nDCG@10 {ndcg:.4f}, expected {expected}±{tolerance} ({source})"
