"""Lost in the middle (notebook 05): the figures, from ``results/lost_in_the_middle/<profile>/``."""

from __future__ import annotations

from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_position_curve, plot_reader_curves
from grainlab.studies import lost_in_the_middle as study

STUDY = "lost_in_the_middle"
BASELINES = ("closed-book", "oracle")


@figure(STUDY, "lost_in_the_middle_qa")
def qa(tables: StudyTables):
    """The main reader's (the table's first) accuracy at each gold position, with its closed-book
    and oracle lines and the paper's curves and baselines."""
    by_reader = tables.csv("qa_accuracy_by_position.csv")
    model = by_reader["model"].iloc[0]
    summary = by_reader[by_reader["model"] == model]
    baselines = summary[summary["setting"].isin(BASELINES)].set_index("setting")["accuracy"]
    curve = summary[~summary["setting"].isin(BASELINES)]
    counts = ", ".join(f"n={g['n'].max()} at {s}" for s, g in curve.groupby("setting", sort=False))
    return plot_position_curve(curve, {f"{s} (ours) {baselines[s]:.2f}": baselines[s] for s in BASELINES},
                               f"Lost in the Middle: {model.split('/')[-1]} on NQ-open ({tables.profile}, {counts})",
                               paper=study.PAPER_QA[study.PAPER_QA["setting"].isin(curve["setting"])],
                               paper_baselines={f"{setting} ({study.PAPER_READER}) {value:.3f}": value
                                                for setting, value in study.PAPER_BASELINES.items()},
                               paper_label=study.PAPER_READER)


@figure(STUDY, "lost_in_the_middle_readers")
def readers(tables: StudyTables):
    """Accuracy by gold position for every reader, a panel per number of documents."""
    return plot_reader_curves(tables.csv("qa_accuracy_by_position.csv"),
                              f"Lost in the Middle on NQ-open by reader ({tables.profile})",
                              paper=study.PAPER_QA, paper_label=f"paper · {study.PAPER_READER}")


@figure(STUDY, "lost_in_the_middle_kv")
def key_value(tables: StudyTables):
    """Key–value retrieval accuracy by the gold pair's position, a line per reader."""
    runs = tables.csv("kv_runs.csv", usecols=["qid", "model", "n_docs"])
    records = ", ".join(map(str, sorted(runs["n_docs"].unique())))
    readers = ", ".join(f"{m.split('/')[-1]} n={n}" for m, n in runs.groupby("model", sort=False)["qid"].nunique().items())
    return plot_reader_curves(tables.csv("kv_accuracy_by_position.csv"),
                              f"Key–value retrieval, {records} keys, by reader ({tables.profile}, {readers})",
                              ylabel="accuracy (value in the answer)",
                              xlabel="position of the gold key–value pair (1 = first)")
