"""Figures are drawn from tidy tables with labelled axes and saved as PNG and PDF."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
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
    from grainlab.plots import figure_stamp, plots_fingerprint

    assert figure_stamp(paths[0]) == plots_fingerprint()  # which plotting code drew it
    assert f"grainlab-plots={plots_fingerprint()}".encode() in paths[1].read_bytes()
    fig2 = plot_recall_vs_budget(table(), ["squad"], "budget")
    assert len(fig2.axes) >= 2 and "tokens read" in fig2.axes[0].get_xlabel()


def test_sweep_and_pipeline_plots():
    from grainlab.plots import plot_pipeline_stages, plot_sweep

    curve = pd.DataFrame({"size": [16, 32, 16, 32], "mean": [0.5, 0.6, 0.55, 0.58], "method": ["naive"] * 2 + ["late"] * 2})
    fig = plot_sweep(curve, "size", "mean", "method", "chunk size", "nDCG@10", "t",
                     references=[("paper · late", 16, 0.661)])
    ax = fig.axes[0]
    assert ax.get_xlabel() == "chunk size" and ax.get_ylabel() == "nDCG@10"
    assert any(line.get_marker() == "D" for line in ax.get_lines())  # the paper's point is drawn
    legend = ax.get_legend()
    assert legend is not None and legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1  # outside the data
    stages = pd.DataFrame([{"granularity": g, "system": s, "stage": st, "measure": "R@20", "mean": v}
                           for g in ("documents", "chunks") for s, v in (("bm25", 0.5), ("rrf", 0.6), ("x", .4))
                           for st in ("candidates", "fused", "context")])
    fig2 = plot_pipeline_stages(stages, "R@20", "t", columns=2)
    panels = [a for a in fig2.axes if a.get_visible()]
    assert len(panels) == 3 and [a.get_title() for a in panels] == ["bm25", "rrf", "x"]  # one panel per system
    drawn = [line for line in panels[0].get_lines() if len(line.get_xdata())]  # not the legend's empty proxies
    assert panels[0].get_ylabel() == "R@20" and len(drawn) == 2  # a line per granularity
    assert fig2.texts[0].get_text() == "t"  # aggregate rows: no query count to state
    rng = np.random.default_rng(0)
    per_query = pd.DataFrame([{"granularity": g, "system": s, "stage": st, "measure": "R@20", "qid": str(q),
                               "value": float(rng.random() < 0.5)}
                              for g in ("documents", "chunks") for s in ("bm25", "rrf") for st in ("candidates", "context")
                              for q in range(30)])
    fig3 = plot_pipeline_stages(per_query, "R@20", "t", columns=2)
    panel = fig3.axes[0]
    assert len(panel.collections) == 2  # one 95% interval (errorbar collection) per granularity
    assert fig3.texts[0].get_text() == "t (n = 30 queries)" and "95% CI" in panel.get_ylabel()
    legend = fig3.axes[1].get_legend()  # on the last panel of the first row, outside the data
    assert [t.get_text() for t in legend.get_texts()] == ["documents", "chunks"] and panel.get_legend() is None


def test_bar_and_tradeoff_plots():
    from grainlab.plots import plot_bars, plot_tradeoff

    ami = pd.DataFrame({"chunker": ["fixed", "fixed", "maxmin", "maxmin"], "ami": [0.2, 0.3, 0.5, 0.6],
                        "dataset": ["a", "b", "a", "b"]})
    fig = plot_bars(ami.assign(ami=[0.0, 0.0, 0.5, 0.6]), "chunker", "ami", "dataset", "AMI", "t",
                    references={"paper Max–Min": 0.85})
    ax = fig.axes[0]
    assert ax.get_ylabel() == "AMI" and len(ax.patches) >= 4
    assert "0.00" in [t.get_text() for t in ax.texts]  # a zero-height bar still shows its value
    assert any(line.get_label() == "paper Max–Min" for line in ax.get_lines())
    trade = pd.DataFrame({"tokens": [100, 200, 150, 300], "recall": [0.5, 0.6, 0.55, 0.7],
                          "system": ["flat", "flat", "parent", "parent"], "dataset": ["a"] * 4})
    fig2 = plot_tradeoff(trade, "tokens", "recall", "system", "dataset", "tokens read", "AnswerRecall@k", "t")
    assert fig2.axes[0].get_xlabel() == "tokens read" and len(fig2.axes[0].get_lines()) >= 2
    assert not fig2.axes[0].containers  # one row per point: nothing to put an interval on


def test_tradeoff_points_from_per_query_rows_get_seeded_intervals():
    import numpy as np

    from grainlab.plots import plot_tradeoff

    rows = pd.DataFrame([{"k": k, "value": float((i * k) % 4 == 0), "unit": u, "retriever": "BM25", "qid": i}
                         for k in (1, 5) for u in ("passage", "proposition") for i in range(30)])

    def bars(fig):
        return [np.asarray(c.lines[2][0].get_segments()) for c in fig.axes[0].containers]

    first = plot_tradeoff(rows, "k", "value", "unit", "retriever", "k", "recall", "t")
    again = plot_tradeoff(rows, "k", "value", "unit", "retriever", "k", "recall", "t")
    assert len(first.axes[0].containers) == 2  # an error bar set per unit
    assert list(first.axes[0].get_xticks()) == [1, 5]  # ticks at the k values themselves
    assert all((a == b).all() for a, b in zip(bars(first), bars(again)))  # same bootstrap every time
    # the interval brackets the mean of the per-query values
    segment = bars(first)[0][0]
    mean = rows[(rows.unit == "passage") & (rows.k == segment[0][0])]["value"].mean()
    assert segment[0][1] <= mean <= segment[1][1]


def test_tradeoff_keeps_one_colour_per_hue_level_across_panels_and_one_legend():
    from matplotlib.colors import to_hex

    from grainlab.plots import plot_tradeoff

    lines = [("BM25", "passages", "whole"), ("BM25", "groups", "whole"), ("MiniLM", "passages", "whole"),
             ("MiniLM", "groups", "MaxP"), ("nomic", "groups", "whole")]  # the nomic panel has no passages
    rows = pd.DataFrame([{"tokens": t, "recall": i / 10 + t / 10_000, "encoder": e, "unit": u, "scoring": s}
                         for i, (e, u, s) in enumerate(lines) for t in (100, 400)])
    fig = plot_tradeoff(rows, "tokens", "recall", "unit", "encoder", "tokens", "recall", "t", style="scoring")
    colours: dict[str, set] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if len(line.get_ydata()) == 2:  # a data line (legend proxies are empty)
                e, u, s = lines[round(line.get_ydata()[0] * 10)]
                assert ax.get_title() == e
                colours.setdefault(u, set()).add(to_hex(line.get_color()))
    assert len(colours["groups"]) == 1 and len(colours["passages"]) == 1
    assert colours["groups"] != colours["passages"]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert len(legends) == 1
    assert [t.get_text() for t in legends[0].get_texts()] == ["unit", "passages", "groups", "scoring", "whole", "MaxP"]


def test_position_curve():
    from grainlab.plots import plot_position_curve

    summary = pd.DataFrame({"setting": ["10 documents"] * 3, "position": [1, 5, 10], "accuracy": [0.6, 0.4, 0.5],
                            "ci_low": [0.5, 0.3, 0.4], "ci_high": [0.7, 0.5, 0.6]})
    paper = pd.DataFrame({"setting": ["10 documents"] * 3, "position": [1, 5, 10], "accuracy": [0.768, 0.612, 0.624]})
    fig = plot_position_curve(summary, {"closed-book": 0.3, "oracle": 0.8}, "t", paper=paper)
    ax = fig.axes[0]
    assert ax.get_xlabel().startswith("position") and len(ax.get_lines()) == 4


def test_reader_curves_one_panel_per_setting_one_line_per_reader():
    from grainlab.plots import plot_reader_curves

    rows = [{"model": m, "setting": s, "gold_index": g, "position": g + 1, "accuracy": 0.5, "ci_low": 0.4,
             "ci_high": 0.6, "n": 10}
            for m in ("org/a", "org/b") for s, golds in (("10 documents", [0, 4, 9]), ("20 documents", [0, 9, 19]))
            for g in golds]
    rows += [{"model": m, "setting": "closed-book", "gold_index": -1, "position": 0, "accuracy": 0.2, "ci_low": 0.1,
              "ci_high": 0.3, "n": 10} for m in ("org/a", "org/b")]
    paper = pd.DataFrame({"setting": ["10 documents"] * 3, "position": [1, 5, 10], "accuracy": [0.768, 0.612, 0.624]})
    fig = plot_reader_curves(pd.DataFrame(rows), "t", paper=paper, paper_label="paper · GPT-3.5-Turbo")
    left, right = fig.axes[:2]
    assert [ax.get_title() for ax in (left, right)] == ["10 documents", "20 documents"]
    # two readers' curves + their closed-book lines (+ the paper's curve on the left panel only)
    assert len(left.get_lines()) == 5 and len(right.get_lines()) == 4
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["a (n=10)", "b (n=10)", "paper · GPT-3.5-Turbo"]


def test_per_query_rows_get_intervals_and_the_style_is_colour_blind_safe():
    import matplotlib.pyplot as plt

    from grainlab.plots import OKABE_ITO, plot_metric_vs_chunk_size

    rows = [{"dataset": "squad", "retriever_label": r, "chunk_size": size, "measure": "AnswerRecall@5", "qid": f"q{i}",
             "value": float((i + size) % 3 == 0)} for r in ("BM25", "MiniLM") for size in (64, 256) for i in range(40)]
    fig = plot_metric_vs_chunk_size(pd.DataFrame(rows), {"squad": "AnswerRecall@5"}, "t",
                                    paper_best={"squad": (64, 128)})
    ax = fig.axes[0]
    assert "n=40" in ax.get_title()
    assert len(ax.collections) + len([c for c in ax.containers]) > 0  # error bars drawn
    from matplotlib.colors import to_hex

    assert to_hex(ax.get_lines()[0].get_color()) == OKABE_ITO[0].lower()
    assert plt.rcParams["axes.prop_cycle"].by_key()["color"][0] != OKABE_ITO[0]  # scoped to grainlab's figures


def test_every_committed_figure_is_one_a_notebook_saves():
    """No orphan figure: each file under figures/ has a name some notebook's ``save_figure`` call
    writes (an f-string name matches any text in its braces), so the report embeds only figures the
    current notebooks draw."""
    import re
    from pathlib import Path

    from tests.figure_names import saved_figure_names

    root = Path(__file__).resolve().parents[1]
    patterns = ["".join(re.escape(part) if part is not None else ".+" for part in name)
                for name in saved_figure_names()]
    assert len(patterns) >= 20
    committed = sorted({p.stem for p in (root / "figures").iterdir() if p.suffix in (".png", ".pdf")})
    orphans = [stem for stem in committed if not any(re.fullmatch(p, stem) for p in patterns)]
    assert orphans == [], f"figures no notebook saves (remove them): {orphans}"
