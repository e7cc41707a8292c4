"""grainlab for PyTerrier users: runs as PyTerrier result frames, and a system as a transformer.

PyTerrier (an optional extra: ``pip install 'grainlab[pyterrier]'``) passes queries and results
between transformers as DataFrames (``qid, query`` in; ``qid, docno, score, rank`` out).
:func:`run_frame` writes a grainlab run in that shape, and :func:`transformer` wraps a
:class:`~grainlab.experiments.System` over a dataset's corpus, so ``pt.Experiment`` can set it
beside any other pipeline. The transformer ranks what grainlab ranks (``experiments.rank``: the
same chunks, index and aggregation), so its scores are the ones ``run_experiment`` reports.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from grainlab.cache import ArtifactCache
from grainlab.data.types import Dataset
from grainlab.errors import ConfigError
from grainlab.experiments.engine import rank
from grainlab.experiments.systems import System
from grainlab.types import Run

COLUMNS = ["qid", "docno", "score", "rank"]


def run_frame(run: Run, queries: dict[str, str] | None = None) -> pd.DataFrame:
    """A run as PyTerrier's result frame: ``qid, docno, score, rank`` (rank from 0, as PyTerrier
    numbers it), with ``query`` when ``queries`` are given."""
    rows = [{"qid": str(qid), "docno": str(doc), "score": float(score), "rank": position}
            for qid, ranking in run.items() for position, (doc, score) in enumerate(ranking)]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    if queries is not None:
        frame.insert(1, "query", frame["qid"].map(queries))
    return frame


def topics_frame(dataset: Dataset) -> pd.DataFrame:
    """The dataset's queries as PyTerrier topics (``qid, query``)."""
    return pd.DataFrame([{"qid": q, "query": text} for q, text in dataset.queries.items()], columns=["qid", "query"])


def qrels_frame(dataset: Dataset) -> pd.DataFrame:
    """The dataset's judgments as PyTerrier qrels (``qid, docno, label``)."""
    return pd.DataFrame([{"qid": q, "docno": d, "label": int(grade)} for q, docs in dataset.qrels.items()
                         for d, grade in docs.items()], columns=["qid", "docno", "label"])


def _pyterrier() -> Any:
    try:
        import pyterrier
    except ImportError:
        raise ConfigError("PyTerrier transformers need pyterrier: pip install 'grainlab[pyterrier]'") from None
    return pyterrier


def transformer(dataset: Dataset, system: System, k: int = 1000, cache: ArtifactCache | None = None) -> Any:
    """A PyTerrier transformer that ranks ``dataset``'s corpus with ``system`` (a single retriever,
    chunked or not, no stages) for the queries it is given: their top ``k`` documents (or units)."""
    pt = _pyterrier()
    cache = cache or ArtifactCache()

    def retrieve(topics: pd.DataFrame) -> pd.DataFrame:
        queries = {str(q): str(text) for q, text in zip(topics["qid"], topics["query"])}
        asked = Dataset(dataset.name, dataset.corpus, queries, {}, info=dataset.info)
        run, _ = rank(asked, system, k, cache)
        return run_frame({q: run.get(q, []) for q in queries}, queries)

    return pt.apply.generic(retrieve)
