"""Hybrid BM25 + dense search with RRF and a reranker (notebook 06): the figures, from
``results/hybrid_rerank/<profile>/``."""

from __future__ import annotations

from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_pipeline_stages
from grainlab.studies import hybrid_rerank as study

STUDY = "hybrid_rerank"
GRANULARITIES = ("documents", "256-token_chunks")
RECALL_STAGES = ("candidates", "fused", "reranked")  # Recall@20 of a 5-document context means nothing


def _stages(tables: StudyTables):
    """Every granularity's per-query rows at every stage (fusions named short for panel titles),
    and the single retrievers the fusions combine."""
    per_query = tables.per_query(*GRANULARITIES)
    singles = study.single_labels(tables.csv(f"{GRANULARITIES[0]}/systems.csv"))
    return per_query.assign(system=per_query["system"].map(study.figure_name)), ", ".join(singles)


@figure(STUDY, "hybrid_rerank_stages_ndcg")
def stages_ndcg(tables: StudyTables):
    """SciFact nDCG@10 after each stage of each pipeline, with the published whole-SciFact numbers."""
    rows, fused = _stages(tables)
    return plot_pipeline_stages(rows, "nDCG@10",
                                f"SciFact nDCG@10 along the pipeline ({tables.profile} profile; the fusions' lists: "
                                f"{fused})",
                                references={system: value for system, (value, _) in study.PUBLISHED_NDCG10.items()},
                                reference_label="published nDCG@10, whole SciFact (BEIR, MTEB)")


@figure(STUDY, "hybrid_rerank_stages_recall")
def stages_recall(tables: StudyTables):
    """SciFact Recall@20 after each stage of each pipeline."""
    rows, fused = _stages(tables)
    return plot_pipeline_stages(rows, "R@20", f"SciFact Recall@20 along the pipeline ({tables.profile} profile; the "
                                f"fusions' lists: {fused}; the final context holds fewer than 20 documents, so it "
                                "is left out)", stages=RECALL_STAGES)
