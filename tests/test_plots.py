"""Figures are drawn from tidy tables with labelled axes and saved as PNG and PDF."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from grainlab.plots import plot_metric_vs_chunk_size, plot_recall_vs_budget, save_figure  # noqa: E402


def table():
    rows = []
    for retriever in ("BM25", "all-MiniLM-L6-v2"):
        for size in (64, 128, 256):
            for k in (1, 2):
                rows.append({"dataset": "squad", "retriever_label": retriever, "chunk_size": size,
                             "measure": f"AnswerRecall@{k}", "mean": 0.1 * k + size / 1000,
                             "mean_unit_tokens": size * 0.98})
    return pd.DataFrame(rows)


def test_figures_have_labels_and_files(tmp_path):
    fig = plot_metric_vs_chunk_size(table(), {"squad": "AnswerRecall@2"}, "title")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "chunk size (cl100k tokens)" and ax.get_ylabel() == "AnswerRecall@2"
    assert len(ax.get_lines()) >= 2
    paths = save_figure(fig, "x", tmp_path)
    assert [p.suffix for p in paths] == [".png", ".pdf"] and all(p.stat().st_size > 1000 for p in paths)
    fig2 = plot_recall_vs_budget(table(), ["squad"], "budget")
    assert len(fig2.axes) >= 2 and "tokens read" in fig2.axes[0].get_xlabel()
