"""Figures are drawn from tidy tables with labelled axes and saved as PNG and PDF."""

import matplotlib

matplotlib.use("Agg")

from pathlib import Path  # noqa: E402

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


def test_saved_pdfs_embed_truetype_fonts_never_type3(tmp_path):
    """Camera-ready checkers reject Type 3 fonts: the style's font type must hold when saving,
    outside the drawing function's style context too."""
    import matplotlib.pyplot as plt

    from grainlab.plots import pdf_font_types

    fig = plot_metric_vs_chunk_size(table(), {"squad": "AnswerRecall@2"}, "title")
    _, pdf = save_figure(fig, "fonts", tmp_path)
    assert pdf_font_types(pdf) and pdf_font_types(pdf) <= {"/TrueType", "/CIDFontType2"}
    with plt.rc_context({"pdf.fonttype": 3}):  # the reference: matplotlib's default embeds Type 3
        fig.savefig(tmp_path / "type3.pdf")
    assert "/Type3" in pdf_font_types(tmp_path / "type3.pdf")


def test_paired_differences_draw_what_the_test_tested():
    """Each contrast is its paired difference with its interval: filled when the interval misses
    zero, hollow when it covers it; the paper's difference is a black diamond where its x exists."""
    from grainlab.plots import plot_paired_differences

    tests = pd.DataFrame({"size": [16, 64, 256], "delta": [0.058, 0.010, -0.001], "ci_low": [0.034, -0.010, -0.016],
                          "ci_high": [0.082, 0.031, 0.012]})
    fig = plot_paired_differences(tests, "size", None, "late − naive", "t", xlabel="chunk size",
                                  references=[("paper · 256", 256, 0.019), ("paper · 8", 8, 0.5)])
    ax = fig.axes[0]
    filled, hollow = [c for c in ax.collections if c.get_offsets().shape[0] and c.get_offsets().shape[1] == 2][-2:]
    assert filled.get_offsets().shape[0] == 1 and hollow.get_offsets().shape[0] == 2  # only 16 clears zero
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16", "64", "256"]
    diamonds = [line for line in ax.get_lines() if line.get_marker() == "D"]
    assert len(diamonds) == 1 and list(diamonds[0].get_xdata()) == [2]  # at 256; no x = 8 here
    assert ax.get_xlabel() == "chunk size" and any(line.get_ydata()[0] == 0 for line in ax.get_lines()
                                                    if line.get_marker() != "D")


def test_pipeline_stages_one_panel_per_system_one_legend_below():
    from grainlab.plots import plot_pipeline_stages

    stages = pd.DataFrame([{"granularity": g, "system": s, "stage": st, "measure": "R@20", "mean": v}
                           for g in ("documents", "chunks") for s, v in (("bm25", 0.5), ("rrf", 0.6), ("x", .4))
                           for st in ("candidates", "fused", "context")])
    fig2 = plot_pipeline_stages(stages, "R@20", "t", columns=2, references={"bm25": 0.665}, reference_label="BEIR")
    panels = [a for a in fig2.axes if a.get_visible()]
    assert len(panels) == 3 and [a.get_title() for a in panels] == ["bm25", "rrf", "x"]  # one panel per system
    drawn = [line for line in panels[0].get_lines() if len(line.get_xdata()) > 2]  # not the reference line
    assert panels[0].get_ylabel() == "R@20" and len(drawn) == 2  # a line per granularity
    assert [line.get_ydata()[0] for line in panels[0].get_lines() if line.get_linestyle() == "--"] == [0.665]
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
    assert all(ax.get_legend() is None for ax in fig3.axes)  # one legend, the figure's, under the panels
    assert [t.get_text() for t in fig3.legends[0].get_texts()] == ["documents", "chunks"]


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


def test_bar_values_clear_their_error_bars_and_counts_print_as_integers():
    from grainlab.plots import plot_bars

    rows = pd.DataFrame({"chunker": ["a"] * 20 + ["b"] * 20, "hit": [0.0, 1.0] * 10 + [1.0] * 15 + [0.0] * 5})
    ax = plot_bars(rows, "chunker", "hit", None, "share", "t").axes[0]
    tops = {round(float(line.get_xdata()[0]), 6): max(line.get_ydata()) for line in ax.get_lines()
            if len(line.get_xdata()) == 2}
    labels = {round(float(text.xy[0]), 6): text for text in ax.texts}
    assert sorted(text.get_text() for text in labels.values()) == ["0.50", "0.75"]
    for x, text in labels.items():
        assert text.xy[1] >= tops[x] > float(text.get_text())  # above the interval, not inside it
    assert ax.get_ylim()[1] > max(tops.values())
    counts = pd.DataFrame({"chunker": ["a", "b"], "n": [79, 2], "stage": ["embedding", "chunking"]})
    ax = plot_bars(counts, "chunker", "n", "stage", "failed questions", "t", error=None).axes[0]
    assert sorted(text.get_text() for text in ax.texts) == ["2", "79"]
    shares = counts.assign(n=[1.0, 0.0])  # whole numbers that are not counts keep their decimals
    ax = plot_bars(shares, "chunker", "n", "stage", "share", "t", error=None).axes[0]
    assert sorted(text.get_text() for text in ax.texts) == ["0.00", "1.00"]


def test_a_long_y_label_on_stacked_rows_stays_within_its_row():
    from grainlab.plots import plot_paired_differences

    rows = pd.DataFrame([{"part": part, "window": window, "positions": f"{q}", "size": size, "delta": -0.1,
                          "ci_low": -0.2, "ci_high": 0.0}
                         for part in ("covid_qa", "squad_dev_articles") for window in (512, 1024, 2048)
                         for q in range(4) for size in (128, 256, 512)])
    fig = plot_paired_differences(rows, "positions", "size", "late − naive, AnswerRecall@5 (answer in its window)",
                                  "t", col="window", row="part")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes[::3]:
        label, box = ax.yaxis.label.get_window_extent(renderer), ax.get_window_extent(renderer)
        assert label.height <= box.height  # stacked rows' labels never run into each other


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


def test_tradeoff_puts_values_spanning_ten_times_on_a_log_axis_and_ticks_only_what_stays_apart():
    from grainlab.plots import plot_tradeoff, spans_decades, ticks_at_values

    assert spans_decades([1, 2, 5, 10, 20]) and spans_decades([50, 500])
    assert not spans_decades([100, 400]) and not spans_decades([0, 16, 64])  # a zero cannot go on a log axis
    assert ticks_at_values([1, 2, 5, 10, 20], log=True)
    assert not ticks_at_values([370, 420, 1160, 1270], log=True)  # 370 and 420 would overlap
    assert not ticks_at_values([0.5, 1.5], log=False)  # not whole numbers
    rows = pd.DataFrame([{"k": k, "recall": k / 40, "unit": u, "retriever": r}
                         for k in (1, 2, 5, 10, 20) for u in ("passage", "proposition") for r in ("BM25", "MiniLM")])
    fig = plot_tradeoff(rows, "k", "recall", "unit", "retriever", "k", "a long label for recall", "t")
    first, second = fig.axes[:2]
    assert first.get_xscale() == "log" and list(first.get_xticks()) == [1, 2, 5, 10, 20]
    fig.canvas.draw()
    assert [t.get_text() for t in first.get_xticklabels()] == ["1", "2", "5", "10", "20"]
    assert first.get_ylabel().replace("\n", " ") == "a long label for recall" and second.get_ylabel() == ""
    tokens = pd.DataFrame({"tokens": [50, 150, 250, 370, 420, 1950], "recall": [0.2, 0.3, 0.4, 0.3, 0.4, 0.5],
                           "system": ["flat"] * 3 + ["parent"] * 3, "dataset": ["a"] * 6})
    ax = plot_tradeoff(tokens, "tokens", "recall", "system", "dataset", "tokens", "recall", "t").axes[0]
    ax.figure.canvas.draw()
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text() and ax.get_xlim()[0] <= t.get_position()[0]
              <= ax.get_xlim()[1]]
    assert len(labels) >= 4 and set(labels) <= {"50", "100", "200", "500", "1000", "2000"}  # 1-2-5 steps, plain
    linear = plot_tradeoff(rows[rows.k <= 5].assign(k=lambda t: t.k + 10), "k", "recall", "unit", "retriever", "k",
                           "recall", "t").axes[0]
    assert linear.get_xscale() == "linear"


def test_bar_intervals_resample_whole_clusters_when_given_units():
    from grainlab.plots import plot_bars

    # 10 documents of 20 questions each: all of a document's questions hit or all miss
    rows = pd.DataFrame([{"system": "a", "doc": d, "hit": float(d % 2)} for d in range(10) for _ in range(20)])

    def interval(fig):
        (line,) = [line for line in fig.axes[0].get_lines() if len(line.get_xdata()) == 2]
        low, high = line.get_ydata()
        return high - low

    naive = interval(plot_bars(rows, "system", "hit", None, "share", "t"))
    clustered = interval(plot_bars(rows, "system", "hit", None, "share", "t", units="doc"))
    assert clustered > 3 * naive  # 200 rows but only 10 independent documents


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
    assert all(ax.get_legend() is None for ax in fig.axes) and len(fig.legends) == 1  # one, under the panels
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["unit", "passages", "groups", "scoring", "whole",
                                                                  "MaxP"]


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
    assert [ax.get_title() for ax in (left, right)] == ["10 documents (a n=10, b n=10)", "20 documents (a n=10, b n=10)"]
    # two readers' curves + their closed-book lines (+ the paper's curve on the left panel only)
    assert len(left.get_lines()) == 5 and len(right.get_lines()) == 4
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["a", "b", "paper · GPT-3.5-Turbo"]  # each reader once
    colour = {ax: {line.get_label(): line.get_color() for line in ax.get_lines()} for ax in (left, right)}
    assert colour[left]["a"] == colour[right]["a"] != colour[left]["b"]  # one colour per reader in every panel


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


def test_every_committed_figure_is_one_the_registry_draws():
    """No orphan figure: each file under figures/ has a name a registered figure writes (a family's
    per-model suffix matches any text), so the report embeds only figures the current code draws."""
    import re
    from pathlib import Path

    from tests.figure_names import saved_figure_names

    root = Path(__file__).resolve().parents[1]
    patterns = ["".join(re.escape(part) if part is not None else ".+" for part in name)
                for name in saved_figure_names()]
    assert len(patterns) >= 20
    committed = sorted({p.stem for p in (root / "figures").iterdir() if p.suffix in (".png", ".pdf")})
    orphans = [stem for stem in committed if not any(re.fullmatch(p, stem) for p in patterns)]
    assert orphans == [], f"figures the registry does not draw (remove them): {orphans}"


def _saved_width(fig, tmp_path, name: str) -> float:
    """The saved PNG's width in inches (``bbox_inches="tight"`` grows a figure to whatever sticks out)."""
    import matplotlib.pyplot as plt
    from PIL import Image

    png, _ = save_figure(fig, name, tmp_path)
    plt.close(fig)
    with Image.open(png) as image:
        return image.size[0] / image.info["dpi"][0]


def test_every_plot_fits_a_papers_text_width_with_many_panels_and_long_labels(tmp_path):
    """At 7 in a pasted figure keeps its 9-pt text: however many panels, series or long labels a
    figure has, it is laid out within 7.5 in (panels wrap at four a row, legends go underneath)."""
    from grainlab.plots import (
        plot_bars,
        plot_hbars,
        plot_paired_differences,
        plot_pipeline_stages,
        plot_recall_precision,
        plot_tradeoff,
    )

    rng = np.random.default_rng(0)
    long = "a rather long system label · with a fused list of candidates"
    datasets = {f"dataset_number_{i}_stitched": "AnswerRecall@5" for i in range(6)}
    sizes = pd.DataFrame([{"dataset": d, "retriever_label": f"retriever {r} {long}", "chunk_size": c,
                           "measure": "AnswerRecall@5", "mean": rng.random()}
                          for d in datasets for r in range(3) for c in (64, 128, 256, 512, 1024)])
    stages = pd.DataFrame([{"granularity": g, "system": f"{long} {i}", "stage": st, "measure": "R@20", "mean": rng.random()}
                           for g in ("documents", "256-token chunks") for i in range(10)
                           for st in ("candidates", "fused", "reranked", "context")])
    bars = pd.DataFrame([{"chunker": f"chunker {i} {long}", "value": rng.random(), "metric": m}
                         for i in range(20) for m in ("recall (chroma)", "precision (deduplicated)")])
    trade = pd.DataFrame([{"tokens": t, "recall": rng.random(), "unit": f"unit {u}", "panel": f"{long} {p}"}
                          for t in (100, 200, 400) for u in range(20) for p in range(5)])
    diffs = pd.DataFrame([{"x": f"{q * 512}–{q * 512 + 511}", "size": s, "window": f"window {w}", "part": p,
                           "delta": -0.1, "ci_low": -0.2, "ci_high": 0.0}
                          for p in ("squad_dev_articles", "covid_qa") for w in (512, 1024, 2048)
                          for s in (128, 256, 512) for q in range(4)])
    points = pd.DataFrame([{"label": f"{f} {i}, overlap {i * 25}", "family": f, "precision": rng.random() * 10,
                            "recall": 50 + rng.random() * 40} for f in ("TokenText", "Recursive", "fixed") for i in range(7)])
    figures = {
        "sizes": plot_metric_vs_chunk_size(sizes, datasets, "t " * 80),
        "budget": plot_recall_vs_budget(sizes.assign(mean_unit_tokens=100.0), list(datasets)[:3], "t"),
        "stages": plot_pipeline_stages(stages, "R@20", "t"),
        "bars": plot_bars(bars, "chunker", "value", "metric", "share", "t", error=None),
        "hbars": plot_hbars(bars, "chunker", "value", None, "metric", "share of characters " * 4, "t", error=None),
        "trade": plot_tradeoff(trade, "tokens", "recall", "unit", "panel", "tokens read", "recall", "t"),
        "diffs": plot_paired_differences(diffs, "x", "size", "late − naive", "t", col="window", row="part",
                                         xlabel="answer position inside its window (tokens)"),
        "points": plot_recall_precision(points, points.head(3), "family", "t"),
    }
    widths = {name: _saved_width(fig, tmp_path, name) for name, fig in figures.items()}
    assert max(widths.values()) <= 7.5, {name: round(width, 2) for name, width in widths.items()}


def test_committed_figures_fit_the_page_and_embed_no_type3_fonts():
    """What ``pdffonts`` and a 7-in column would reject (every committed figure is drawn by the
    current code: ``tests/test_figures.py``)."""
    from PIL import Image

    from grainlab.plots import pdf_font_types

    figures = Path(__file__).resolve().parents[1] / "figures"
    current = sorted(figures.glob("*.png"))
    assert current
    for png in current:
        with Image.open(png) as image:
            assert image.size[0] / image.info["dpi"][0] <= 7.5, png.name
        assert "/Type3" not in pdf_font_types(png.with_suffix(".pdf")), png.name


def test_tradeoff_reference_labels_stay_inside_their_panel_and_out_of_the_layout():
    """Four panels of long paper labels once collapsed constrained layout (the LongRAG figure drawn
    with no layout at all: titles, x labels and legend on top of each other)."""
    import warnings

    from grainlab.plots import plot_tradeoff

    rows = pd.DataFrame([{"tokens": base * k, "recall": 0.5 + k / 50, "encoder": e, "unit": u}
                         for e in ("BM25", "MiniLM", "bge-small", "nomic")
                         for u, base in (("passages", 100), ("groups", 4000)) for k in (1, 2, 4, 8, 20)])
    references = [("paper passages ×1", 120, 0.52), ("paper grouped documents ×1", 4000, 0.72),
                  ("paper grouped documents ×4", 16000, 0.86), ("paper grouped documents ×8", 32000, 0.89)]
    for columns in (None, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "constrained_layout not applied" is a UserWarning
            fig = plot_tradeoff(rows, "tokens", "recall", "unit", "encoder", "tokens retrieved", "recall", "t",
                                references=references, columns=columns)
            fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            assert ax.get_window_extent().width > 0.15 * fig.bbox.width / (columns or 4)
            labels = [text for text in ax.texts if text.get_text().startswith("paper")]
            assert len(labels) == 4 and not any(text.get_in_layout() for text in labels)
        if columns == 2:
            assert [bool(ax.get_xlabel()) for ax in fig.axes] == [False, False, True, True]  # bottom row only
            for ax in fig.axes:
                box = ax.get_window_extent(renderer)
                for text in ax.texts:
                    extent = text.get_window_extent(renderer)
                    assert box.x0 - 1 <= extent.x0 and extent.x1 <= box.x1 + 1, text.get_text()
