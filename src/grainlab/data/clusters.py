"""The unit a dataset's questions share, for cluster-aware tests.

Questions written over one passage (SQuAD), one article or one stitched document are not
independent draws: they succeed or fail together when that unit is easy or hard to retrieve.
:func:`gold_clusters` labels each query with the document its answer lives in, so a paired test
can resample and flip whole clusters (:mod:`grainlab.evaluation.significance`). Where every
question's document is one of a handful of whole corpora (Chroma's five), the document is too
coarse a unit (five clusters cannot give a two-sided p below 1/16); :func:`evidence_clusters`
labels each query with the gold *evidence* it shares: questions whose gold spans overlap, joined
transitively.
"""

from __future__ import annotations

from grainlab.data.types import Dataset
from grainlab.errors import MalformedData


def gold_clusters(dataset: Dataset) -> dict[str, str]:
    """Query id → its gold document: the positively judged document of the highest grade (the
    smallest id among equals, so the label is stable). A query without a positive judgment is an
    error naming it."""
    clusters = {}
    for qid, judged in dataset.qrels.items():
        positive = [(-grade, doc) for doc, grade in judged.items() if grade > 0]
        if not positive:
            raise MalformedData(f"{dataset.name}: query {qid!r} has no positive judgment, so no gold document to "
                                "cluster on; drop it or judge it")
        clusters[qid] = min(positive)[1]
    return clusters


def evidence_clusters(dataset: Dataset) -> dict[str, str]:
    """Query id → its evidence cluster: queries whose gold spans (``info["gold_spans"]``: doc id,
    start, end) overlap in one document belong together, transitively; a cluster is named by its
    first span (``doc:start``). A query without gold spans is an error naming it."""
    spans = dataset.info.get("gold_spans") or {}
    missing = [q for q in dataset.queries if not spans.get(q)]
    if missing:
        raise MalformedData(f"{dataset.name}: query {missing[0]!r} has no gold spans to cluster on "
                            f"({len(missing)} such queries)")
    parent = {q: q for q in dataset.queries}

    def root(q: str) -> str:
        while parent[q] != q:
            parent[q] = parent[parent[q]]
            q = parent[q]
        return q

    reach: dict[str, tuple[int, str]] = {}  # per document: the furthest end so far and its query
    for doc, start, end, qid in sorted((d, s, e, q) for q in dataset.queries for d, s, e in spans[q]):
        if doc in reach and start < reach[doc][0]:
            parent[root(qid)] = root(reach[doc][1])
            reach[doc] = (max(end, reach[doc][0]), reach[doc][1])
        else:
            reach[doc] = (end, qid)
    first = {q: min(spans[q]) for q in dataset.queries}
    names: dict[str, tuple[str, int, int]] = {}
    for qid in dataset.queries:
        top = root(qid)
        names[top] = min(names.get(top, first[qid]), first[qid])
    return {qid: f"{names[root(qid)][0]}:{names[root(qid)][1]}" for qid in dataset.queries}
