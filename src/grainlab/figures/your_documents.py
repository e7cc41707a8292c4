"""Your documents, your questions (notebook 09, ``grainlab compare``): the figures, from
``results/your_documents/<profile>/``."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from grainlab.evaluation.labels import measure_label
from grainlab.figures.registry import StudyTables, draw_figure, figure
from grainlab.files import atomic_write_text
from grainlab.plots import plot_bars, plot_tradeoff

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


@figure(STUDY, "your_documents_hit_vs_tokens")
def hit_vs_tokens(tables: StudyTables):
    """Each candidate's held-out Hit@k against the tokens it indexes (what embedding it costs)."""
    decision = tables.csv("decision.csv")
    hit = next(c for c in decision.columns if c.startswith("hit@"))
    return plot_tradeoff(decision.assign(panel="retriever: " + decision["retriever"].astype(str)), "embed_tokens", hit,
                         "chunker", "panel", "tokens indexed (each embedded once)", f"{hit} on held-out questions",
                         f"Your documents: hit against tokens indexed per candidate ({tables.profile})",
                         hue_title="candidate")


REPORT_FIGURES = ("your_documents_hit_vs_tokens", "your_documents_failures")
REPORT_MARKER = "<!-- figures -->"


def report_with_figures(out: str | Path) -> Path:
    """``grainlab compare``'s ``report.html`` in ``out`` with :data:`REPORT_FIGURES` drawn from the
    tables beside it and embedded (PNG), where the report marks them; the failures figure only
    when some question failed."""
    import matplotlib.pyplot as plt

    out = Path(out)
    report = out / "report.html"
    tables = StudyTables(out)
    failed = len(tables.csv("failures.csv")) > 0
    images = []
    for name in REPORT_FIGURES:
        if name == "your_documents_failures" and not failed:
            continue
        for stem, fig in draw_figure(name, tables).items():
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
            plt.close(fig)
            encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
            images.append(f"<p><img alt='{html.escape(stem)}' style='max-width:100%' "
                          f"src='data:image/png;base64,{encoded}'></p>")
    text = report.read_text("utf-8")
    atomic_write_text(report, text.replace(REPORT_MARKER, "<h2>Figures</h2>\n" + "\n".join(images), 1))
    return report
