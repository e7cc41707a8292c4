"""Late chunking (notebook 03): the figures, from ``results/late_chunking/<profile>/``."""

from __future__ import annotations

from grainlab.figures.registry import StudyTables, figure
from grainlab.plots import plot_paired_differences, plot_tradeoff
from grainlab.spec import parse_spec
from grainlab.studies import late_chunking as study

STUDY = "late_chunking"


def _model(tables: StudyTables, experiment: str) -> str:
    """The short name of the encoder an experiment ran (its first system's retriever)."""
    first = next(iter(tables.manifest(experiment)["systems"].values()))["name"]
    return str(parse_spec(first.split("|")[0])[1].get("model", "")).split("/")[-1]


@figure(STUDY, "late_chunking_sweep")
def sweep(tables: StudyTables):
    """Late − naive SciFact nDCG@10 at each swept chunk size (paired 95% CI), with the paper's."""
    tests = tables.csv("sweep_late_vs_naive.csv")
    model = _model(tables, "sweep")
    n = int((tests["wins"] + tests["ties"] + tests["losses"]).max())
    return plot_paired_differences(tests.assign(size=[int(s.split(" · ")[1]) for s in tests["system"]]),
                                   "size", None, "late − naive, SciFact nDCG@10",
                                   f"Late − naive chunking by chunk size ({model}, {tables.profile}, n={n}; "
                                   "paired 95% CI)", xlabel=f"chunk size ({model} word pieces)",
                                   references=study.paper_sweep_difference())


def _gap(tables: StudyTables, answer_level: bool):
    rows = tables.csv("long_gap_by_position.csv")
    measures = [m for m in rows["measure"].unique() if m.startswith("AnswerRecall") == answer_level]
    rows = rows[rows["measure"] == measures[0]]
    return plot_paired_differences(rows.assign(window="window " + rows["window"].astype(str)), "positions", "size",
                                   f"late − naive, {measures[0]}",
                                   f"Where in its macro window late chunking stops helping: {measures[0]} "
                                   f"({tables.profile}; cluster-bootstrap 95% CI over documents)", col="window",
                                   row="part", xlabel="answer position inside its window (tokens)",
                                   estimate="late − naive", hue_title="chunk size (tokens)")


@figure(STUDY, "late_chunking_gap_by_position")
def gap_by_position(tables: StudyTables):
    """Late − naive chunk answer recall by where the answer sits in its macro window."""
    return _gap(tables, answer_level=True)


@figure(STUDY, "late_chunking_gap_by_position_documents")
def gap_by_position_documents(tables: StudyTables):
    """Late − naive document nDCG@10 by where the answer sits in its macro window."""
    return _gap(tables, answer_level=False)


@figure(STUDY, "late_chunking_long_grid")
def long_grid(tables: StudyTables):
    """The long-document grid's tested contrasts (the verdicts' cluster-bootstrap 95% CIs)."""
    effects = study.grid_effects(tables.csv("verdicts.csv"))
    return plot_paired_differences(effects.assign(panel=effects["level"] + " ranked (" + effects["measure"] + ")",
                                                  window=effects["window"].map("{:,}".format)),
                                   "size", "window", "late − naive",
                                   f"Long late chunking vs naive on long documents ({tables.profile}; the verdicts' "
                                   "cluster-bootstrap 95% CI over documents)", col="panel", row="part",
                                   xlabel="chunk size (tokens)", estimate="effect", hue_title="macro window (tokens)")


@figure(STUDY, "late_chunking_framing")
def framing(tables: StudyTables):
    """Late − naive chunk answer recall in the first and in later macro windows, sliced against
    framed windows (cluster-bootstrap 95% CI over articles): the window-framing ablation."""
    rows = tables.csv("framing_gap_by_window.csv")
    return plot_paired_differences(rows.assign(panel=rows["part"] + " · window " + rows["window"].astype(str)),
                                   "answer in", "framing", "late − naive, answer recall",
                                   f"Ablation: later macro windows sliced mid-text or framed with [CLS], prefix and "
                                   f"[SEP] ({tables.profile}; cluster-bootstrap 95% CI over articles)", col="panel",
                                   xlabel="where the answer starts", estimate="late − naive",
                                   hue_title="later windows")


@figure(STUDY, "late_chunking_window_similarity")
def window_similarity(tables: StudyTables):
    """How alike the chunk vectors inside one macro window are, by the quarter of the window a
    chunk starts in: late (sliced, framed) against naive."""
    rows = tables.csv("framing_similarity.csv")
    rows = rows.assign(arm=rows["method"].where(rows["framing"] == "none", rows["method"] + " · " + rows["framing"]),
                       panel=rows["part"] + " · window " + rows["window"].astype(str) + " · " + rows["windows"],
                       quarter=rows["quarter"] + 1)
    return plot_tradeoff(rows, "quarter", "similarity", "arm", "panel", "quarter of the window the chunk starts in",
                         "mean cosine to the window's other chunks",
                         f"Chunk vectors inside one macro window: late against naive ({tables.profile})")
