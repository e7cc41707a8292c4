"""Lost-in-the-Middle examples built offline from the NQ-open oracle file.

For each question the distractors are the passages, retrieved from the pool of the *other*
questions' gold passages, that contain none of its answers (DPR-style answer matching), kept in
decreasing relevance — the paper's recipe with its Contriever-over-Wikipedia retrieval replaced
by one retriever over this pool (recorded in each example's ``info``).
"""

from __future__ import annotations

from tqdm.auto import tqdm

from grainlab.cache import ArtifactCache
from grainlab.data.lost_in_the_middle import MultiDocExample
from grainlab.data.types import Dataset
from grainlab.errors import ConfigError
from grainlab.evaluation.answers import has_answer
from grainlab.retrieval import index_titled_documents


def build_multidoc_examples(pool: Dataset, n_distractors: int = 29, retriever: str = "bm25",
                            question_ids: list[str] | None = None, depth: int = 200,
                            cache: ArtifactCache | None = None) -> list[MultiDocExample]:
    """Examples for ``question_ids`` (default: all) of an NQ-oracle-shaped dataset; every
    passage of ``pool.corpus`` can be a distractor for every question but its own."""
    if not pool.is_qa:
        raise ConfigError(f"{pool.name} has no answers: build from the NQ-open oracle file (nq_open_oracle)")
    index = index_titled_documents(pool.corpus.values(), retriever, cache)
    qids = question_ids if question_ids is not None else list(pool.queries)
    run = index.search({q: pool.queries[q] for q in qids}, k=depth, aggregate="max", progress=True)
    examples = []
    for qid in tqdm(qids, desc="distractors", disable=len(qids) < 200):
        answers = pool.answers[qid]
        own = set(pool.qrels.get(qid, {}))
        gold = pool.corpus[next(iter(own))]
        chosen = []
        for doc_id, _ in run[qid]:
            doc = pool.corpus[doc_id]
            if doc.doc_id in own or has_answer(doc.text, answers) or has_answer(doc.title, answers):
                continue
            chosen.append((doc.title, doc.text))
            if len(chosen) == n_distractors:
                break
        if len(chosen) < n_distractors:
            raise ConfigError(f"{qid}: only {len(chosen)} answer-free passages in the top {depth}; raise depth")
        examples.append(MultiDocExample(qid, pool.queries[qid], answers, (gold.title, gold.text), chosen,
                                        info={"distractor_retriever": index.spec, "pool": pool.name,
                                              "pool_size": len(index.units)}))
    return examples
