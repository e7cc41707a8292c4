"""Semantic (Max–Min) chunking, parent–child and overlap (notebook 07): the figures, from
``results/semantic_chunking/<profile>/``."""

from __future__ import annotations

from grainlab.evaluation.registry import ANSWER_RECALL, TOKENS
from grainlab.experiments.tables import split_cutoff
from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_bars, plot_paired_differences, plot_tradeoff
from grainlab.spec import parse_spec
from grainlab.studies import semantic_chunking as study

STUDY = "semantic_chunking"


@figure(STUDY, "semantic_chunking_ami")
def ami(tables: StudyTables):
    """AMI of each splitter's segmentation against the gold segments (95% CI over documents)."""
    rows = tables.csv("ami_per_document.csv")
    return plot_bars(rows.assign(gold=rows["dataset"].str.replace("_stitched", "") + " · " + rows["level"]),
                     "chunker", "ami", "gold", "AMI (sentences vs gold segments)",
                     f"Segmentation of stitched documents ({tables.profile}; 95% CI over documents)",
                     references=study.PAPER_AMI_LINES, xlabel="splitter")


@figure(STUDY, "semantic_chunking_maxmin_threshold")
def maxmin_threshold(tables: StudyTables):
    """Max–Min's AMI by similarity threshold (no size cap)."""
    return plot_bars(tables.csv("maxmin_threshold_sweep.csv", dtype={"threshold": str}), "threshold", "ami", "gold",
                     "AMI", f"Max–Min (no cap, MiniLM) by similarity threshold ({tables.profile}; 95% CI over documents)",
                     references=study.PAPER_AMI_LINES, xlabel="Max–Min similarity threshold (cosine)")


@figure(STUDY, "semantic_chunking_retrieval")
def retrieval(tables: StudyTables):
    """Each semantic splitter − fixed-size chunks in answer recall, stitched and native documents,
    per retriever: the tested contrasts with the verdicts' cluster-bootstrap 95% intervals."""
    verdicts = tables.csv("verdicts.csv")
    rows = verdicts[(verdicts["baseline"] == "fixed") & verdicts["measure"].str.startswith(ANSWER_RECALL.name)]
    measure = rows["measure"].iloc[0]
    systems = tables.csv("retrieval.csv")
    fixed = parse_spec(systems.loc[systems["splitter"] == "fixed", "chunker"].iloc[0])[1]["size"]
    return plot_paired_differences(rows.assign(dataset=rows["dataset"].str.replace("_stitched", " (stitched)")),
                                   "dataset", "system", f"splitter − fixed, {measure}",
                                   f"Semantic splitters against fixed {fixed}-token chunks, stitched vs native documents "
                                   f"({tables.profile}; the verdicts' cluster-bootstrap 95% CI over gold documents)",
                                   col="retriever_label", xlabel="dataset", estimate="effect", hue_title="splitter")


@figure(STUDY, "semantic_chunking_size_matched")
def size_matched(tables: StudyTables):
    """Each semantic splitter − fixed-size chunks of its own mean length on that dataset, in answer
    recall, per retriever: Qu et al.'s test, method against method (verdicts' 95% intervals)."""
    verdicts = tables.csv("verdicts.csv")
    rows = verdicts[verdicts["baseline"].astype(str).str.startswith(study.matched_label(""))
                    & verdicts["measure"].str.startswith(ANSWER_RECALL.name)]
    measure = rows["measure"].iloc[0]
    return plot_paired_differences(rows.assign(dataset=rows["dataset"].str.replace("_stitched", " (stitched)")),
                                   "dataset", "system", f"splitter − size-matched fixed, {measure}",
                                   "Semantic splitters against fixed-size chunks of the same mean length "
                                   f"({tables.profile}; the verdicts' cluster-bootstrap 95% CI over gold documents)",
                                   col="retriever_label", xlabel="dataset", estimate="effect", hue_title="splitter")


@figure(STUDY, "semantic_chunking_parent_child")
def parent_child(tables: StudyTables):
    """Answer recall against tokens read for parent–child and flat chunks at each k."""
    curve = split_cutoff(tables.csv("parent_child.csv"))
    curve = curve[curve["measure_name"].isin([ANSWER_RECALL.name, TOKENS.name])]
    ks = sorted(curve["k"].unique())
    curve = curve.pivot_table(index=["dataset", "system", "k"], columns="measure_name", values="mean").reset_index()
    return plot_tradeoff(curve, TOKENS.name, ANSWER_RECALL.name, "system", "dataset", "tokens read (top-k units)",
                         "answer recall", f"Parent–child vs flat: recall against tokens read, k = "
                         f"{', '.join(map(str, ks))} ({tables.profile})")


@figure(STUDY, "semantic_chunking_overlap")
def overlap(tables: StudyTables):
    """Answer recall against duplication for fixed-size chunks with growing overlap."""
    sweep = tables.csv("overlap_sweep.csv")
    measure = next(c for c in sweep.columns if c.startswith(ANSWER_RECALL.name + "@"))
    size = parse_spec(sweep["chunker"].iloc[0])[1]["size"]
    overlaps = ", ".join(map(str, sweep["overlap"].drop_duplicates()))
    return plot_tradeoff(sweep.rename(columns={measure: "answer recall"}), "duplication_rate", "answer recall",
                         "dataset", "dataset", "duplication rate (extra tokens indexed / original)",
                         f"answer recall@{measure.split('@')[1]} (the tested measure)",
                         f"Fixed {size}-token chunks, overlap {overlaps} tokens ({tables.profile})")
