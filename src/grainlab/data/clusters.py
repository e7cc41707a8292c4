"""The unit a dataset's questions share, for cluster-aware tests: each question's gold document.

Questions written over one passage (SQuAD), one article or one stitched document are not
independent draws: they succeed or fail together when that unit is easy or hard to retrieve.
:func:`gold_clusters` labels each query with the document its answer lives in, so a paired test
can resample and flip whole clusters (:mod:`grainlab.evaluation.significance`).
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
