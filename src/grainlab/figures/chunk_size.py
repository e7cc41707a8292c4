"""Chunk size across datasets (notebook 01): the figures, from ``results/chunk_size/<profile>/``."""

from __future__ import annotations

import pandas as pd

from grainlab.experiments.stored import MissingResults
from grainlab.experiments.tables import split_cutoff
from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_metric_vs_chunk_size, plot_recall_vs_budget
from grainlab.studies import chunk_size as study

STUDY = "chunk_size"
ANSWER_RECALL = "AnswerRecall"
TRUNCATED = (1024, "MiniLM and bge-small read 512 word pieces")
"""From 1,024 tokens on, the 512-word-piece encoders leave much of a chunk unread (issue 60)."""


def _sweep(tables: StudyTables, under: str = "", qa: bool = True) -> tuple[pd.DataFrame, list[str], int]:
    """The sweep's per-query rows (datasets in the notebook's order), its QA sets and their
    largest answer-recall cutoff (``qa``: refuse a run with no QA set)."""
    experiments = {d: e for e, d in tables.experiments(under).items() if e != "gates"}
    order = tables.csv(f"{under + '_' if under else ''}aggregate.csv")["dataset"].drop_duplicates()
    per_query = tables.per_query(*(experiments[d] for d in order if d in experiments))
    cutoffs = split_cutoff(per_query.drop_duplicates("measure"))
    answers = cutoffs[cutoffs["measure_name"] == ANSWER_RECALL]
    qa_sets = [d for d in order if d in set(per_query.loc[per_query["measure"].isin(answers["measure"]), "dataset"])]
    if not qa_sets and qa:
        raise MissingResults(f"{tables.folder / under}: no QA set was run (no {ANSWER_RECALL} rows): nothing to draw")
    return per_query, qa_sets, int(answers["k"].max()) if qa_sets else 0


@figure(STUDY, "chunk_size_recall")
def recall(tables: StudyTables):
    """Each dataset's primary measure against chunk size: answer recall at the largest k on the
    QA sets, nDCG@10 on the IR set; bootstrap 95% intervals over questions."""
    per_query, qa_sets, k = _sweep(tables, qa=False)
    primary = {d: f"{ANSWER_RECALL}@{k}" if d in qa_sets else "nDCG@10" for d in per_query["dataset"].unique()}
    return plot_metric_vs_chunk_size(per_query, primary, f"Retrieval quality vs chunk size ({tables.profile} profile; "
                                     "95% CI over questions)", paper_best=study.PAPER_BEST,
                                     truncated=TRUNCATED)


@figure(STUDY, "chunk_size_recall_at1")
def recall_at_1(tables: StudyTables):
    """Answer recall@1 against chunk size on the QA sets (the paper's Table 2 measure)."""
    per_query, qa_sets, _ = _sweep(tables)
    return plot_metric_vs_chunk_size(per_query, {d: f"{ANSWER_RECALL}@1" for d in qa_sets},
                                     f"Answer recall@1 vs chunk size ({tables.profile} profile; 95% CI over questions)",
                                     paper_best=study.PAPER_BEST, truncated=TRUNCATED)


@figure(STUDY, "chunk_size_recall_vs_budget")
def recall_vs_budget(tables: StudyTables):
    """Answer recall against the tokens read (k × mean chunk length), a line per chunk size."""
    aggregate = tables.csv("aggregate.csv")
    qa_sets = list(dict.fromkeys(aggregate.loc[aggregate["measure"].str.startswith(ANSWER_RECALL), "dataset"]))
    if not qa_sets:
        raise MissingResults(f"{tables.folder}: no QA set was run (no {ANSWER_RECALL} rows): nothing to draw")
    return plot_recall_vs_budget(aggregate, qa_sets, f"Answer recall vs tokens read ({tables.profile} profile)")


@figure(STUDY, "chunk_size_long_encoder")
def long_encoder(tables: StudyTables):
    """The sweep again on a sample of stitched documents, with a 2,048-token encoder beside the
    512-word-piece ones."""
    per_query, qa_sets, k = _sweep(tables, "long_encoder")
    documents = {tables.manifest(f"long_encoder/{d}")["parameters"].get("n_docs") for d in qa_sets}
    sample = f"{documents.pop()} stitched documents per set" if len(documents) == 1 else "a sample of stitched documents"
    return plot_metric_vs_chunk_size(per_query, {d: f"{ANSWER_RECALL}@{k}" for d in qa_sets},
                                     f"Answer recall@{k} vs chunk size with a 2,048-token encoder "
                                     f"({tables.profile}; {sample})", truncated=TRUNCATED)
