"""Chroma's span-labelled chunking evaluation (notebook 08): the figures, from
``results/chroma_chunking/<profile>/``."""

from __future__ import annotations

from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_hbars, plot_recall_precision
from grainlab.studies import chroma_chunking as study

STUDY = "chroma_chunking"


@figure(STUDY, "chroma_chunking_recall_precision")
def recall_precision(tables: StudyTables):
    """Recall against precision of the top 5 chunks per chunker (the first retriever), with arrows
    from the report's numbers to ours."""
    aggregate = tables.csv("aggregate.csv")
    shown = aggregate["retriever_label"].iloc[0]
    ours, report = study.recall_precision_points(aggregate, shown)
    return plot_recall_precision(ours, report, "family", f"Chroma's chunking evaluation: recall vs precision of the "
                                 f"top 5 chunks, {shown} ({tables.profile})",
                                 xlabel="precision, % (Chroma's convention)", ylabel="recall, %",
                                 paper_label="Chroma's report")


@figure(STUDY, "chroma_chunking_conventions")
def conventions(tables: StudyTables):
    """Recall and precision of the same retrieved chunks under both conventions."""
    aggregate = tables.csv("aggregate.csv")
    names = {str(study.measure_name(kind, convention)): f"{kind} ({convention})"
             for convention in study.CONVENTIONS for kind in ("recall", "precision")}
    shares = aggregate[aggregate["measure"].isin(names)].assign(metric=lambda t: t["measure"].map(names))
    return plot_hbars(shares.assign(kind=shares["metric"].str.split(" ").str[0],
                                    convention=shares["metric"].str.extract(r"\((.*)\)")[0]),
                      "chunker_label", "mean", "convention", "kind", "share of characters (recall: of the gold "
                      "excerpts; precision: of the retrieved chunks)", f"Both conventions side by side ({tables.profile})",
                      error=None)
