"""Dense X propositions (notebook 02): the figures, from ``results/dense_x/<profile>/``."""

from __future__ import annotations

import pandas as pd

from grainlab.experiments.tables import split_cutoff
from grainlab.figures.registry import StudyTables, binary_rows, figure
from grainlab.plots import plot_bars, plot_tradeoff
from grainlab.studies import dense_x as study

STUDY = "dense_x"


@figure(STUDY, "dense_x_recall_at_k")
def recall_at_k(tables: StudyTables):
    """Passage answer recall@k by retrieval unit, a panel per retriever, with the paper's GTR R@5.
    The per-question rows are rebuilt from each system's stored hit count (answer recall is 0/1
    per question), so the intervals are the questions' bootstrap."""
    aggregate = pd.concat([tables.csv(f"{name}/aggregate.csv") for name in tables.experiments()], ignore_index=True)
    rows = split_cutoff(binary_rows(aggregate[aggregate["measure"].str.startswith("AnswerRecall@")], "recall"))
    return plot_tradeoff(rows, "k", "recall", "unit", "retriever_label", "passages retrieved (k)",
                         "passage answer recall (95% CI)",
                         f"Dense X on SQuAD dev: recall@k by retrieval unit ({tables.profile}, n={int(rows['count'].max())}); "
                         "◇ the paper's R@5 with GTR",
                         references=[(f"{r.retriever} {unit}", 5, getattr(r, unit) / 100)
                                     for r in study.PAPER_SQUAD_R5.itertuples() if r.retriever == "GTR"
                                     for unit in ("passage", "proposition")])


@figure(STUDY, "dense_x_word_budget_recall")
def word_budget_recall(tables: StudyTables):
    """Is the answer within the first l words of the retrieved units (per question, 95% CI)."""
    runs = tables.csv("word_budget_recall_runs.csv.xz", dtype={"qid": str})
    return plot_tradeoff(runs, "l_words", "recall", "unit", "retriever_label", "retrieved words read (l)",
                         "answer within the first l words (95% CI)",
                         f"Dense X on SQuAD dev: answer recall within l retrieved words ({tables.profile}, "
                         f"n={runs['qid'].nunique()})")


@figure(STUDY, "dense_x_reader_", family=True)
def reader(tables: StudyTables):
    """One figure per reader: exact match of the short answer by retrieval unit and word budget."""
    runs = tables.csv("em_runs.csv", dtype={"qid": str})
    figures = {}
    for model, rows in runs.groupby("model", sort=False):
        name = model.split("/")[-1]
        figures[f"dense_x_reader_{name}"] = plot_bars(
            rows.assign(budget=rows["l"].map(lambda words: f"l={words}" if words else "none")), "unit", "em", "budget",
            "exact match of the short answer (share of questions)",
            f"Reader {name} over retrieved units ({tables.profile}, n={rows['qid'].nunique()})",
            xlabel="retrieval unit of the reader's context")
    return figures
