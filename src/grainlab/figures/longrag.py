"""LongRAG long retrieval units (notebook 04): the figures, from ``results/longrag/<profile>/``."""

from __future__ import annotations

from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_bars, plot_tradeoff
from grainlab.studies import longrag as study

STUDY = "longrag"
READER_MEASURES = {"em": "exact match (short answer)", "answer_in_long": "answer in the long answer",
                   "context_has_answer": "answer in the context"}


@figure(STUDY, "longrag_recall_vs_tokens")
def recall_vs_tokens(tables: StudyTables):
    """Answer recall against tokens retrieved per unit type and encoder (per-question 95% CI), up
    to 20 units, with the paper's NQ recall as reference marks."""
    table = tables.csv("answer_recall.csv")
    units = list(dict.fromkeys(table["unit"]))
    per_query = tables.per_query(*(unit.replace(" ", "_") for unit in units))
    points = study.recall_points(per_query, table)
    return plot_tradeoff(study.with_encoder_and_scoring(points[points["units retrieved"] <= 20]),
                         "avg tokens", "answer recall", "unit", "encoder", "tokens retrieved (cl100k)",
                         "answer recall (95% CI)",
                         f"LongRAG units: recall against retrieved tokens ({tables.profile}, "
                         f"n={per_query['qid'].nunique()}; diamonds: the paper's NQ recall on its 22M-passage / "
                         "600K-group corpus)", style="scoring", references=study.paper_points(), columns=2)


@figure(STUDY, "longrag_reader_", family=True)
def reader(tables: StudyTables):
    """One figure per reader: EM, the answer in the long answer, and the answer in the context,
    per reader context."""
    runs = tables.csv("reader_runs.csv", dtype={"qid": str})
    budgets = tables.csv("reader_em.csv")["budget tokens"]
    budget = int(budgets[budgets > 0].max())
    figures = {}
    for model, rows in runs.groupby("model", sort=False):
        name = model.split("/")[-1]
        long = rows.melt(id_vars=["setting"], value_vars=list(READER_MEASURES), var_name="measure")
        figures[f"longrag_reader_{name}"] = plot_bars(
            long.assign(measure=long["measure"].map(READER_MEASURES)), "setting", "value", "measure",
            "share of questions",
            f"LongRAG reader {name}, {budget}-token budget ({tables.profile}, n={rows['qid'].nunique()})",
            xlabel="reader context (retrieved units within the token budget)")
    return figures
