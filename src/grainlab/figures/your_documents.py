"""Your documents, your questions (notebook 09, ``grainlab compare``): the figures, from
``results/your_documents/<profile>/``."""

from __future__ import annotations

from grainlab.evaluation.labels import measure_label
from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_bars

STUDY = "your_documents"


@figure(STUDY, "your_documents_decision")
def decision(tables: StudyTables):
    """Hit, boundary retention and citation match per candidate on the held-out questions."""
    rows = tables.csv("per_question.csv", dtype={"qid": str})
    k = next(c for c in rows.columns if c.startswith("SpanHit@")).split("@")[1]
    shown = rows[(rows["check"] == "system") & (rows["split"] == "confirm") & rows["answerable"].astype(bool)]
    long = shown.melt(id_vars=["candidate", "qid"], value_vars=[f"SpanHit@{k}", f"SpanCovered@{k}", f"CitationMatch@{k}"],
                      var_name="measure", value_name="value")
    long["measure"] = long["measure"].map(measure_label)
    return plot_bars(long, "candidate", "value", "measure", "share of held-out questions",
                     f"Your documents: hit, boundary retention and citation match per candidate ({tables.profile})")


@figure(STUDY, "your_documents_failures")
def failures(tables: StudyTables):
    """How many questions each candidate lost, by the first stage that lost them."""
    stages = (tables.csv("failures.csv").assign(n=1).groupby(["chunker", "stage"], sort=False)["n"].sum()
              .reset_index())
    return plot_bars(stages, "chunker", "n", "stage", "failed questions",
                     f"First stage that lost each question ({tables.profile})", error=None)
