"""Figures drawn from tidy result tables, saved as PNG and PDF under ``figures/``.

Every figure is drawn in one style (:data:`STYLE`: the Okabe–Ito colour-blind-safe palette, light
grid, no top/right spines, embedded TrueType fonts in the PDF), with legends outside the data,
axes labelled with their units, and the papers' numbers, where there are any, as black reference
marks. Functions given per-query rows (a ``value`` column) draw bootstrap 95% intervals.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
NEUTRAL = "0.25"
"""The grey of baselines and papers' lines: dark enough to stay apart from every Okabe–Ito colour
under deuteranopia and protanopia (a mid grey fades into the bluish green and the reddish purple;
``tests/test_colour_vision.py``)."""
STYLE = {"axes.prop_cycle": None, "axes.grid": True, "grid.alpha": 0.3, "grid.linewidth": 0.6,
         "axes.spines.top": False, "axes.spines.right": False, "font.size": 9, "axes.titlesize": 10,
         "axes.labelsize": 9, "legend.fontsize": 8, "legend.frameon": False, "savefig.dpi": 150,
         "pdf.fonttype": 42, "ps.fonttype": 42}
REFERENCE = {"color": "black", "marker": "D", "markerfacecolor": "none", "markersize": 7, "linestyle": "none"}


def grainlab_style() -> dict:
    """The rcParams every grainlab figure is drawn with (use with ``plt.rc_context``)."""
    from cycler import cycler

    return {**STYLE, "axes.prop_cycle": cycler(color=list(OKABE_ITO))}


def styled(plot):
    """Draw ``plot`` inside :func:`grainlab_style`."""
    @functools.wraps(plot)
    def drawn(*args, **kwargs):
        import matplotlib.pyplot as plt

        with plt.rc_context(grainlab_style()):
            return plot(*args, **kwargs)
    return drawn


PAGE_WIDTH = 7.0
"""Inches: a paper's text width (ACM and IEEE two-column pages are 7.0–7.16 in); every figure is
laid out to it, so 9-pt text stays 9 pt when pasted."""
COLUMN_WIDTH = 3.3
"""Inches: one column of a two-column paper."""
MAX_PANELS_PER_ROW = 4


def wrapped(text: str, width: float, fontsize: float) -> str:
    """``text`` broken into lines that fit ``width`` inches at ``fontsize`` points (an average
    glyph is about 0.55 em wide)."""
    return textwrap.fill(text, max(12, int(width * 72 / (0.55 * fontsize))), break_long_words=False)


def panel_grid(n: int, *, panel_height: float = 2.3, columns: int | None = None, width: float = PAGE_WIDTH,
               sharex: bool | str = False, sharey: bool | str = False):
    """A ``width``-inch figure of ``n`` panels, at most :data:`MAX_PANELS_PER_ROW` a row, laid out by
    matplotlib's constrained layout (legends and titles placed inside the figure's width); the
    grid's unused cells hidden. Returns the figure and its ``n`` axes in reading order."""
    import matplotlib.pyplot as plt

    columns = max(1, min(n, columns or MAX_PANELS_PER_ROW))
    rows = -(-n // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(width, panel_height * rows + 0.9), squeeze=False,
                             layout="constrained", sharex=sharex, sharey=sharey)
    for ax in grid.flat[n:]:
        ax.set_visible(False)
    return fig, list(grid.flat[:n])


def _entries(axes: Sequence, order: Sequence[str] | None) -> dict:
    """Every legend entry on ``axes``, each label once (labels in ``order`` first, in that order);
    the axes' own legends removed."""
    entries: dict = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if not label.startswith("_"):
                entries.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if order:
        rank = {label: i for i, label in enumerate(order)}
        entries = dict(sorted(entries.items(), key=lambda item: rank.get(item[0], len(rank))))
    return entries


def legend_columns(labels: Sequence[str], width: float, fontsize: float = 8) -> int:
    """As many legend columns as fit ``width`` inches: an entry is its label (~0.55 em a character)
    plus about 40 pt of handle and spacing."""
    entry = max(len(label) for label in labels) * 0.55 * fontsize + 40
    return max(1, min(len(labels), int(0.95 * width * 72 / entry)))


def legend_below(fig, axes: Sequence, title: str | None = None, order: Sequence[str] | None = None,
                 width: float | None = None) -> None:
    """One legend for the whole figure, under its panels and inside its width: every entry on
    ``axes`` once, in as many columns as the longest label allows."""
    entries = _entries(axes, order)
    if not entries:
        return
    ncol = legend_columns(list(entries), width or fig.get_figwidth())
    fig.legend(list(entries.values()), list(entries), title=title, loc="outside lower center", ncol=ncol,
               title_fontsize=8)


def label_bottom_row(axes: Sequence, columns: int, text: str, width: float = PAGE_WIDTH) -> None:
    """``text`` as the x label of the last row's panels only, wrapped to a panel's width."""
    bottom = {i for i in range(len(axes)) if i + columns >= len(axes)}
    for i, ax in enumerate(axes):
        ax.set_xlabel(wrapped(text, width / columns, 8) if i in bottom else "", fontsize=8)


def panel_ylabel(ax, text: str, panel_height: float, fontsize: float = 8) -> None:
    """A panel's y label, wrapped to the panel's height (a long label on stacked rows would run
    into the next row's)."""
    ax.set_ylabel(wrapped(text, 0.85 * panel_height, fontsize), fontsize=fontsize)


def panel_title(ax, text: str, columns: int, fontsize: float = 8, width: float = PAGE_WIDTH) -> None:
    """A panel's title, wrapped to the panel's share of the figure's width."""
    ax.set_title(wrapped(text, 0.9 * width / columns, fontsize), fontsize=fontsize)


def suptitle(fig, title: str, fontsize: float = 10) -> None:
    """The figure's title, wrapped to its width."""
    fig.suptitle(wrapped(title, fig.get_figwidth(), fontsize), fontsize=fontsize)


def fixed_palette(levels: Sequence) -> dict:
    """A colour per level, the same in every panel of a figure (Okabe–Ito, in the order given)."""
    return {level: OKABE_ITO[i % len(OKABE_ITO)] for i, level in enumerate(levels)}


def _y_and_interval(table: pd.DataFrame) -> tuple[str, object]:
    """Per-query rows (``value``) get a bootstrap 95% interval; aggregate rows (``mean``) none."""
    return ("value", ("ci", 95)) if "value" in table.columns else ("mean", None)


def draw_references(ax, references: Sequence[tuple[str, float, float]] | None) -> None:
    """Papers' numbers as hollow black diamonds with their label: ``(label, x, y)``. Call it once the
    axis scales are set: a label goes right of its mark where it fits in the panel, else left of it,
    and stays out of the layout (a label counted in constrained layout squeezes the panels, and
    several long ones collapse the layout altogether)."""
    marks = list(references or ())
    for _, x, y in marks:
        ax.plot([x], [y], **REFERENCE)
    if not marks:
        return
    ax.autoscale_view()
    to_axes = ax.transData + ax.transAxes.inverted()
    panel_points = 0.8 * ax.get_position().width * ax.figure.get_figwidth() * 72  # less its tick labels
    for label, x, y in marks:
        at = to_axes.transform((x, y))[0]
        share = (8 + len(label) * 0.55 * 7) / panel_points  # offset + an average 7-pt glyph per character
        left = at + share > 1 and at > 1 - at
        text = ax.annotate(label, (x, y), textcoords="offset points", xytext=(-6 if left else 6, 0), fontsize=7,
                           va="center", ha="right" if left else "left")
        text.set_in_layout(False)


def draw_reference_lines(ax, lines: Mapping[str, float] | None) -> None:
    """Papers' numbers as labelled horizontal lines."""
    for (label, value), style in zip((lines or {}).items(), ["--", "-.", ":", (0, (5, 1))]):
        ax.axhline(value, color="black", linestyle=style, linewidth=1, label=label)


def figures_dir(path: str | Path | None = None) -> Path:
    from grainlab import settings

    return settings.figures_dir(path)


STAMP_KEY = "grainlab-plots"  # PNG text chunk: the fingerprint of the plotting code that drew it


def plots_fingerprint() -> str:
    """The code version of the drawing code: this module and the figure registry
    (``grainlab.figures``), what a figure's stamp is checked against."""
    from grainlab.cache import code_fingerprint

    return code_fingerprint("plots", "figures")[:16]


def save_figure(fig, name: str, folder: str | Path | None = None) -> list[Path]:
    """Write ``<name>.png`` (150 dpi) and ``<name>.pdf`` (vector), each stamped with the drawing
    code's fingerprint (a PNG text chunk; the PDF's Subject) and nothing else that varies (no date),
    so the same tables drawn by the same code give the same bytes; return the paths."""
    import matplotlib.pyplot as plt

    out = figures_dir(folder)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    stamp = plots_fingerprint()
    with plt.rc_context(grainlab_style()):  # the PDF's font type is read when saving, not when drawing
        fig.savefig(paths[0], dpi=150, bbox_inches="tight", metadata={STAMP_KEY: stamp})
        fig.savefig(paths[1], bbox_inches="tight", metadata={"Subject": f"{STAMP_KEY}={stamp}", "CreationDate": None})
    return paths


def pdf_font_types(path: str | Path) -> set[str]:
    """The ``/Subtype`` of every font a PDF embeds, a composite (``/Type0``) font by its
    descendant's (matplotlib's Type 42 is ``/CIDFontType2`` or ``/TrueType``: TrueType outlines;
    ``/Type3`` is what camera-ready checkers reject)."""
    from pypdf import PdfReader

    kinds: set[str] = set()
    for page in PdfReader(str(path)).pages:
        fonts = (page.get("/Resources") or {}).get("/Font") or {}
        for font in (f.get_object() for f in fonts.values()):
            descendants = [d.get_object() for d in font.get("/DescendantFonts") or []]
            kinds |= {str(f.get("/Subtype")) for f in descendants or [font]}
    return kinds


def figure_stamp(path: Path) -> str | None:
    """The plotting-code fingerprint a PNG was stamped with (None: drawn before stamps existed)."""
    from PIL import Image

    with Image.open(path) as image:
        return image.info.get(STAMP_KEY)


def spans_decades(values) -> bool:
    """Whether positive ``values`` span ten times or more: on a linear axis their small end would
    crowd (k = 1 and 2 drawn on top of each other beside 20)."""
    values = pd.Series(values, dtype=float).dropna()
    return bool(len(values) and values.min() > 0 and values.max() >= 10 * values.min())


def ticks_at_values(values, log: bool) -> bool:
    """Whether an axis can be ticked at the ``values`` themselves (k = 1, 2, 5, 10, 20): a few
    whole numbers, none closer to its neighbour than a fifteenth of the axis (on a log axis: 1.4
    times), so no two tick labels overlap."""
    steps = np.sort(pd.Series(values, dtype=float).dropna().unique())
    if not 1 < len(steps) <= 12 or not np.all(steps == np.round(steps)):
        return False
    if log:
        return bool(np.min(steps[1:] / steps[:-1]) >= 1.4)
    return bool(np.min(np.diff(steps)) >= (steps[-1] - steps[0]) / 15)


def _log_ticks(ax, values, few: bool) -> None:
    """A log x axis labelled in plain numbers (10k from ten thousand on): at the ``values``
    themselves when they are ``few`` (k = 1, 2, 5, 10, 20), else at 1-2-5 steps of each decade, or
    at the decades alone where the values span more than two (their 1-2-5 labels would collide)."""
    import matplotlib.ticker as ticker

    ax.set_xscale("log")
    if few:
        ax.set_xticks(sorted(values))
    else:
        positive = [value for value in values if value > 0]
        decades = np.log10(max(positive) / min(positive)) if positive else 0
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 2 else (1.0,)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(
        lambda value, _: f"{value / 1000:g}k" if value >= 10_000 else f"{value:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


@styled
def plot_metric_vs_chunk_size(table: pd.DataFrame, measure_by_dataset: dict[str, str], title: str,
                              paper_best: Mapping[str, tuple[int, int]] | None = None,
                              truncated: tuple[int, str] | None = None):
    """One panel per dataset (at most four a row): ``measure`` against chunk size (tokens), a
    line per retriever, one legend under the panels.

    ``table`` needs columns ``dataset, retriever_label, chunk_size, measure`` and ``mean`` (an
    aggregate) or ``value`` (per-query rows: then with bootstrap 95% intervals). ``paper_best``
    shades the size range the paper calls best on a dataset; ``truncated`` (size, who) hatches
    the sizes from ``size`` on, where ``who`` reads the chunks cut short.
    """
    import seaborn as sns

    y, interval = _y_and_interval(table)
    datasets = list(measure_by_dataset)
    retrievers = list(dict.fromkeys(table["retriever_label"]))
    fig, axes = panel_grid(len(datasets), panel_height=2.2)
    for ax, dataset in zip(axes, datasets):
        measure = measure_by_dataset[dataset]
        data = table[(table["dataset"] == dataset) & (table["measure"] == measure)]
        n = data["qid"].nunique() if "qid" in data.columns else None
        sns.lineplot(data=data, x="chunk_size", y=y, hue="retriever_label", hue_order=retrievers,
                     palette=fixed_palette(retrievers), marker="o", ax=ax, errorbar=interval, err_style="bars",
                     err_kws={"capsize": 2}, seed=0)
        if paper_best and dataset in paper_best:
            low, high = paper_best[dataset]
            ax.axvspan(low, high, color="black", alpha=0.08, label="paper's best sizes")
        sizes = sorted(data["chunk_size"].unique())
        if truncated and sizes and sizes[-1] >= truncated[0]:
            start = max([x for x in sizes if x < truncated[0]], default=truncated[0] / 2)
            ax.axvspan((start * truncated[0]) ** 0.5, sizes[-1] * 1.3, facecolor="none", edgecolor="0.55",
                       hatch="///", linewidth=0, label=f"truncated: {truncated[1]}")
        _log_ticks(ax, data["chunk_size"].unique(), few=True)  # 64, 128, …, 1024
        ax.tick_params(axis="x", labelsize=6)
        ax.set_ylabel(measure)
        panel_title(ax, dataset + (f" (n={n:,})" if n else ""), min(len(datasets), MAX_PANELS_PER_ROW), 9)
    label_bottom_row(axes, min(len(axes), MAX_PANELS_PER_ROW), "chunk size (cl100k tokens)")
    legend_below(fig, axes, "retriever", order=retrievers)
    suptitle(fig, title)
    return fig


@styled
def plot_recall_vs_budget(table: pd.DataFrame, datasets: list[str], title: str):
    """AnswerRecall@k against the tokens it reads (k × mean chunk tokens), a line per chunk
    size; a row of panels per dataset, a panel per retriever. Compares chunk sizes at equal
    reading budget.

    ``table`` needs ``dataset, retriever_label, chunk_size, measure, mean, mean_unit_tokens``.
    """
    import seaborn as sns

    from grainlab.experiments.tables import split_cutoff

    data = split_cutoff(table[table["dataset"].isin(datasets)])
    data = data[data["measure_name"] == "AnswerRecall"].copy()
    data["tokens_read"] = data["k"] * data["mean_unit_tokens"]
    retrievers = sorted(data["retriever_label"].unique())
    sizes = sorted(data["chunk_size"].unique())
    palette = dict(zip(sizes, sns.color_palette("viridis", len(sizes))))  # one colour per size everywhere
    fig, axes = panel_grid(len(datasets) * len(retrievers), columns=len(retrievers), panel_height=1.9,
                           sharey="row", sharex=True)
    for i, ax in enumerate(axes):
        dataset, retriever = datasets[i // len(retrievers)], retrievers[i % len(retrievers)]
        part = data[(data["dataset"] == dataset) & (data["retriever_label"] == retriever)]
        sns.lineplot(data=part, x="tokens_read", y="mean", hue="chunk_size", hue_order=sizes, marker="o",
                     markersize=4, ax=ax, palette=palette)
        ax.set_xscale("log")
        ax.set_xlabel("tokens read (k × mean chunk)" if i >= len(axes) - len(retrievers) else "")
        ax.set_ylabel(f"{dataset}\nAnswerRecall@k" if i % len(retrievers) == 0 else "")
        panel_title(ax, retriever, len(retrievers))
    legend_below(fig, axes, "chunk size (cl100k tokens); k = 1..5 along each line", order=[str(s) for s in sizes])
    suptitle(fig, title)
    return fig


@styled
def plot_pipeline_stages(table: pd.DataFrame, measure: str, title: str,
                         stages: tuple[str, ...] = ("candidates", "fused", "reranked", "context"),
                         columns: int = MAX_PANELS_PER_ROW, references: Mapping[str, float] | None = None,
                         reference_label: str = "published"):
    """Small multiples: one panel per system, ``measure`` at each pipeline stage it has, a line
    per granularity; the same y-axis everywhere, so panels compare at a glance. ``references``
    (system → a published number) are drawn as a dashed black line in that system's panel.

    ``table`` needs ``granularity, system, stage, measure`` and either per-query ``qid, value`` rows
    (means with bootstrap 95% intervals, the number of queries appended to the title) or aggregate
    ``mean`` rows (means only).
    """
    import seaborn as sns

    data = table[table["measure"] == measure].copy()
    y, interval = _y_and_interval(data)
    data["stage_index"] = data["stage"].map({stage: i for i, stage in enumerate(stages)})
    data = data.dropna(subset=["stage_index"])
    systems = list(dict.fromkeys(data["system"]))
    granularities = list(dict.fromkeys(data["granularity"]))
    palette = fixed_palette(granularities)
    columns = min(columns, MAX_PANELS_PER_ROW)
    fig, axes = panel_grid(len(systems), columns=columns, panel_height=1.9, sharey=True, sharex=True)
    for i, (ax, system) in enumerate(zip(axes, systems)):
        sns.lineplot(data=data[data["system"] == system], x="stage_index", y=y, hue="granularity",
                     hue_order=granularities, palette=palette, marker="o", markersize=4, errorbar=interval,
                     err_style="bars", err_kws={"capsize": 2}, seed=0, ax=ax)
        if references and system in references:
            ax.axhline(references[system], color="black", linestyle="--", linewidth=0.8, label=reference_label)
        ax.set_title(wrapped(system.replace("+", "+ "), PAGE_WIDTH / columns, 7), fontsize=7)
        ax.set_xticks(range(len(stages)), stages, rotation=30, fontsize=7)
        ax.set_xlabel("")
        ax.set_ylabel(measure + (" (mean, 95% CI)" if interval else "") if i % columns == 0 else "")
    legend_below(fig, axes, "granularity", order=granularities)
    queries = data["qid"].nunique() if interval else None  # per-query rows: one decision, by _y_and_interval
    suptitle(fig, title + (f" (n = {queries} queries)" if queries else ""))
    return fig


@styled
def plot_paired_differences(table: pd.DataFrame, x: str, hue: str | None, ylabel: str, title: str,
                            col: str | None = None, row: str | None = None, xlabel: str = "",
                            estimate: str = "delta", low: str = "ci_low", high: str = "ci_high",
                            hue_title: str | None = None,
                            references: Sequence[tuple[str, object, float]] | None = None):
    """What a paired test tested: the mean paired difference (``estimate``) with its 95% interval
    (``low``, ``high``) at each ``x``, a point per ``hue`` level (dodged), a panel per ``col`` (and a
    row of panels per ``row``), a line at zero. An interval that misses zero is drawn filled, one
    that covers it hollow; ``references`` are the paper's ``(label, x, difference)``, drawn as
    black diamonds in every panel that has that ``x``."""
    hues = list(dict.fromkeys(table[hue])) if hue else [None]
    cols = list(dict.fromkeys(table[col])) if col else [None]
    rows = list(dict.fromkeys(table[row])) if row else [None]
    palette = fixed_palette(hues)
    panel_height = 2.1
    fig, axes = panel_grid(len(rows) * len(cols), columns=len(cols), panel_height=panel_height, sharey="row")
    step = 0.7 / max(1, len(hues))
    for i, ax in enumerate(axes):
        row_level, col_level = rows[i // len(cols)], cols[i % len(cols)]
        keep = pd.Series(True, index=table.index)
        if row:
            keep &= table[row] == row_level
        if col:
            keep &= table[col] == col_level
        part = table[keep]
        xs = list(dict.fromkeys(part[x]))  # a panel's own x levels (e.g. the quarters of its window)
        for j, level in enumerate(hues):
            points = part[part[hue] == level] if hue else part
            position = [xs.index(value) + (j - (len(hues) - 1) / 2) * step for value in points[x]]
            colour = palette[level]
            ax.errorbar(position, points[estimate], yerr=[points[estimate] - points[low], points[high] - points[estimate]],
                        fmt="none", ecolor=colour, elinewidth=1, capsize=2)
            clear = (points[low] > 0) | (points[high] < 0)
            label = str(level) if level is not None else None
            ax.scatter([p for p, c in zip(position, clear) if c], points[estimate][clear], color=colour, s=14,
                       zorder=3, label=label if clear.any() else None)
            ax.scatter([p for p, c in zip(position, clear) if not c], points[estimate][~clear], facecolor="white",
                       edgecolor=colour, s=14, zorder=3, label=None if clear.any() else label)
        ax.axhline(0, color="black", linewidth=0.8)
        for label, at, difference in references or ():
            if at in xs:
                ax.plot([xs.index(at)], [difference], **{**REFERENCE, "label": label})
        ax.set_xticks(range(len(xs)), [str(v) for v in xs], fontsize=6)
        title_parts = [str(level) for level in (row_level, col_level) if level is not None]
        panel_title(ax, " · ".join(title_parts), len(cols))
        panel_ylabel(ax, ylabel if i % len(cols) == 0 else "", panel_height)
    label_bottom_row(axes, len(cols), xlabel)
    note = "filled: the 95% interval excludes 0"
    if hue:
        legend_below(fig, axes, f"{hue_title or hue} ({note})")
    else:
        legend_below(fig, axes)
        title = f"{title} ({note})"
    suptitle(fig, title)
    return fig


def _wrapped_ticks(ax, axis: str, width: float) -> None:
    """Category labels wrapped to ``width`` inches so neighbours never overlap."""
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    labels = [wrapped(t.get_text(), width, 7) for t in ticks]
    if axis == "x":
        ax.set_xticks(ax.get_xticks(), labels, fontsize=7)
    else:
        ax.set_yticks(ax.get_yticks(), labels, fontsize=7)


def _error_extents(ax) -> dict[float, tuple[float, float]]:
    """The low and high end of each vertical error bar on ``ax``, by its x position."""
    extents = {}
    for line in ax.lines:
        xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        if len(xs) == 2 and xs[0] == xs[1] and np.isfinite(ys).all():
            extents[float(xs[0])] = (float(ys.min()), float(ys.max()))
    return extents


def label_bars(ax, counts: bool = False) -> None:
    """Write each bar's value beyond the end of its bar or, where one is drawn, of its error bar
    (so the two never cross); ``counts`` whose bars are whole numbers as integers, everything else
    with two decimals."""
    bars = [bar for container in ax.containers for bar in container if np.isfinite(bar.get_height())]
    if not bars:
        return
    heights = np.array([bar.get_height() for bar in bars])
    integral = counts and bool(np.all(heights == np.round(heights)))
    extents = _error_extents(ax)
    ends = []
    for bar, height in zip(bars, heights):
        centre = bar.get_x() + bar.get_width() / 2
        nearest = min(extents, key=lambda at: abs(at - centre), default=None)
        low, high = (extents[nearest] if nearest is not None and abs(nearest - centre) < bar.get_width() / 2
                     else (height, height))
        end = max(height, high) if height >= 0 else min(height, low)
        ends.append(end)
        ax.annotate(f"{height:.0f}" if integral else f"{height:.2f}", (centre, end),
                    xytext=(0, 2 if height >= 0 else -2), textcoords="offset points", ha="center",
                    va="bottom" if height >= 0 else "top", fontsize=6)
    bottom, top = ax.get_ylim()
    span = top - bottom
    ax.set_ylim(min(bottom, min(ends) - 0.08 * span if min(ends) < 0 else bottom),
                max(top, max(ends) + 0.08 * span))


@styled
def plot_bars(table: pd.DataFrame, x: str, y: str, hue: str | None, ylabel: str, title: str,
              error: str | None = ("ci", 95), references: Mapping[str, float] | None = None, xlabel: str = "",
              width: float = PAGE_WIDTH, units: str | None = None):
    """Bars of the mean ``y`` per ``x`` (and ``hue``), with a bootstrap 95% interval over rows — or,
    given ``units`` (the column naming each row's cluster, e.g. its gold document), a multilevel
    bootstrap that resamples whole clusters and then rows within them, so questions sharing a
    document are not counted as independent — and each bar's value written on it when the bars are
    few enough to read (so a zero is seen, not missing); category labels wrapped to their slot;
    ``references`` are the paper's numbers as labelled horizontal lines."""
    import seaborn as sns

    fig, (ax,) = panel_grid(1, width=width, panel_height=2.8)
    sns.barplot(data=table, x=x, y=y, hue=hue, errorbar=error, ax=ax, seed=0, units=units)
    bars = sum(len(container) for container in ax.containers)
    if bars <= 24:
        label_bars(ax, counts=pd.api.types.is_integer_dtype(table[y]))
    draw_reference_lines(ax, references)
    if references:  # a paper's number above every bar is drawn, not left in the legend off-scale
        low, high = ax.get_ylim()
        ax.set_ylim(low, max(high, 1.05 * max(references.values())))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    categories = table[x].nunique()
    _wrapped_ticks(ax, "x", 0.9 * width / max(1, categories))
    legend_below(fig, [ax], hue)
    suptitle(fig, title)
    return fig


@styled
def plot_hbars(table: pd.DataFrame, category: str, value: str, hue: str | None, col: str | None, xlabel: str,
               title: str, error: str | None = ("ci", 95)):
    """Horizontal bars for many categories (a row per ``category``, a bar per ``hue`` level), a
    panel per ``col`` sharing the categories, each bar's value at its end: readable where an
    upright bar chart's labels would collide."""
    import seaborn as sns

    cols = list(dict.fromkeys(table[col])) if col else [None]
    categories = list(dict.fromkeys(table[category]))
    hues = list(dict.fromkeys(table[hue])) if hue else None
    fig, axes = panel_grid(len(cols), panel_height=0.16 * len(categories) * max(1, len(hues or [1])) ** 0.5 + 0.6,
                           sharey=True)
    for ax, level in zip(axes, cols):
        part = table[table[col] == level] if col else table
        sns.barplot(data=part, y=category, x=value, hue=hue, hue_order=hues, order=categories, orient="h",
                    errorbar=error, ax=ax, seed=0, palette=fixed_palette(hues) if hues else None)
        small = part[value].abs().max() < 0.2  # two decimals would print 0.05 for 0.046 and 0.054
        for container in ax.containers:
            ax.bar_label(container, fmt="%.3f" if small else "%.2f", fontsize=5, padding=1)
        panel_title(ax, str(level) if level is not None else "", min(len(cols), MAX_PANELS_PER_ROW))
        ax.set_ylabel("")
        ax.margins(x=0.15)
    _wrapped_ticks(axes[0], "y", 0.3 * PAGE_WIDTH)  # the panels share the categories
    # x labels wrapped to what the panels keep beside the category labels (0.3 of the page), so
    # neighbouring panels' labels stay apart
    label_bottom_row(axes, min(len(axes), MAX_PANELS_PER_ROW), xlabel, width=0.6 * PAGE_WIDTH)
    legend_below(fig, axes, hue)
    suptitle(fig, title)
    return fig


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@styled
def plot_tradeoff(table: pd.DataFrame, x: str, y: str, hue: str, col: str, xlabel: str, ylabel: str, title: str,
                  references: Sequence[tuple[str, float, float]] | None = None, style: str | None = None,
                  hue_title: str | None = None, columns: int | None = None):
    """``y`` against ``x``, a line per ``hue`` (and ``style``), a panel per ``col`` (at most four a
    row): e.g. answer recall against tokens read. The x axis is logarithmic when ``x`` spans ten
    times or more (else the small values crowd), ticked at the values when they are a few whole
    numbers; the y label is written once per row. ``references`` are the paper's
    ``(label, x, y)`` points, drawn in every panel. A ``hue`` level has one colour (and a ``style``
    level one dash) in every panel, and one legend under the panels lists them all; ``columns``
    panels a row (default: as many as fit, at most four), the x label under the last row. Given
    per-query rows (several per point), each point gets its bootstrap 95% interval (seeded, so the
    figure is reproducible)."""
    import seaborn as sns

    panels = list(dict.fromkeys(table[col]))
    hue_order = list(dict.fromkeys(table[hue]))
    style_order = list(dict.fromkeys(table[style])) if style else None
    keys = [col, hue, x] + ([style] if style else [])
    per_query = table.duplicated(keys).any()
    values = table[x].dropna()
    log_x = spans_decades(values)
    few_counts = ticks_at_values(values, log_x)
    columns = min(len(panels), columns or MAX_PANELS_PER_ROW)
    fig, axes = panel_grid(len(panels), panel_height=2.4, columns=columns)
    for i, (ax, panel) in enumerate(zip(axes, panels)):
        sns.lineplot(data=table[table[col] == panel], x=x, y=y, hue=hue, hue_order=hue_order,
                     palette=fixed_palette(hue_order), style=style, style_order=style_order, marker="o",
                     markersize=4, ax=ax, sort=True, errorbar=("ci", 95) if per_query else None, err_style="bars",
                     err_kws={"capsize": 2}, seed=0)
        if log_x:
            _log_ticks(ax, values.unique(), few_counts)
        elif few_counts:
            ax.set_xticks(sorted(values.unique()))  # k = 1, 2, 5, 10, 20 rather than 2.5, 7.5, ...
        draw_references(ax, references)
        if i % columns == 0:
            panel_ylabel(ax, ylabel, 2.4)
        else:
            ax.set_ylabel("")
        panel_title(ax, str(panel), columns, 9)
    label_bottom_row(axes, columns, xlabel)
    order = ([hue] if style else []) + hue_order + ([style, *style_order] if style else [])
    legend_below(fig, axes, None if style else (hue_title or hue), order=order)
    suptitle(fig, title)
    return fig


@styled
def plot_recall_precision(ours: pd.DataFrame, paper: pd.DataFrame | None, family: str, title: str,
                          xlabel: str = "precision, %", ylabel: str = "recall, %", paper_label: str = "report"):
    """Recall against precision as points (no lines: the chunkers are not a series): a colour per
    chunker ``family``, a marker per configuration within it, and — for every configuration
    ``paper`` has (``label, precision, recall``) — the paper's point as a black diamond with an
    arrow from it to ours. ``ours`` needs ``label, precision, recall`` and ``family``."""
    import matplotlib.lines as mlines

    families = list(dict.fromkeys(ours[family]))
    # no yellow (unreadable as a small marker) and no black (the paper's marks): grey comes last
    colours = [c for c in OKABE_ITO if c not in ("#F0E442", "#000000")] + [NEUTRAL]
    palette = {name: colours[i % len(colours)] for i, name in enumerate(families)}
    fig, (ax,) = panel_grid(1, panel_height=3.6)
    handles = []
    for name in families:
        rows = ours[ours[family] == name]
        for marker, (_, point) in zip(MARKERS * 3, rows.iterrows()):
            ax.scatter(point["precision"], point["recall"], color=palette[name], marker=marker, s=28, zorder=3)
            handles.append(mlines.Line2D([], [], color=palette[name], marker=marker, linestyle="none",
                                         label=point["label"]))
    if paper is not None:
        ours_at = ours.set_index("label")
        for _, theirs in paper.iterrows():
            if theirs["label"] not in ours_at.index:
                continue
            mine = ours_at.loc[theirs["label"]]
            ax.annotate("", xy=(mine["precision"], mine["recall"]), xytext=(theirs["precision"], theirs["recall"]),
                        arrowprops={"arrowstyle": "->", "color": "grey", "linewidth": 0.8})
            ax.plot([theirs["precision"]], [theirs["recall"]], **{**REFERENCE, "markersize": 5})
        handles.append(mlines.Line2D([], [], **{**REFERENCE, "markersize": 5},
                                     label=f"{paper_label} (arrow: to ours)"))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.legend(handles=handles, loc="outside lower center", ncol=legend_columns([h.get_label() for h in handles],
                                                                               PAGE_WIDTH, 7), fontsize=7)
    suptitle(fig, title)
    return fig


@styled
def plot_position_curve(summary: pd.DataFrame, baselines: dict[str, float], title: str,
                        ylabel: str = "accuracy (best-subspan EM)", paper: pd.DataFrame | None = None,
                        paper_baselines: Mapping[str, float] | None = None, paper_label: str = "paper",
                        xlabel: str = "position of the gold document (1 = first)"):
    """Accuracy at each tested position of the gold document (ticks at those positions), a line
    (with its 95% CI band) per setting, our position-free baselines (closed-book, oracle) as black
    lines; ``paper`` (``setting, position, accuracy``) in the setting's colour, dotted with hollow
    squares, and ``paper_baselines`` as grey lines — the paper's claims rest on them."""
    fig, (ax,) = panel_grid(1, panel_height=3.0)
    settings = list(dict.fromkeys(summary["setting"]))
    palette = fixed_palette(settings)
    for setting in settings:
        group = summary[summary["setting"] == setting].sort_values("position")
        ax.plot(group["position"], group["accuracy"], marker="o", color=palette[setting], label=f"ours · {setting}")
        ax.fill_between(group["position"], group["ci_low"], group["ci_high"], color=palette[setting], alpha=0.15)
    if paper is not None:
        for setting, group in paper.groupby("setting", sort=False):
            group = group.sort_values("position")
            ax.plot(group["position"], group["accuracy"], marker="s", markerfacecolor="white", linestyle=":",
                    color=palette.get(setting, NEUTRAL), label=f"{paper_label} · {setting}")
    for (label, value), style in zip(baselines.items(), ["--", "-.", ":"]):
        ax.axhline(value, linestyle=style, color="black", linewidth=1, label=label)
    for (label, value), style in zip((paper_baselines or {}).items(), ["--", "-.", ":"]):
        ax.axhline(value, linestyle=style, color=NEUTRAL, linewidth=1, label=label)
    positions = sorted(set(summary["position"]) | (set(paper["position"]) if paper is not None else set()))
    ax.set_xticks(positions)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    legend_below(fig, [ax])
    suptitle(fig, title)
    return fig


@styled
def plot_reader_curves(summary: pd.DataFrame, title: str, paper: pd.DataFrame | None = None,
                       paper_label: str = "paper", ylabel: str = "accuracy (best-subspan EM)",
                       xlabel: str = "position of the gold document (1 = first)"):
    """One panel per setting (``10 documents``, ``20 documents``): accuracy against the gold
    document's 1-based position, a line with its 95% CI band per reader (``model``; one colour
    per reader in every panel, its n per panel in the panel's title), the reader's closed-book
    accuracy as a dotted line of its colour, and ``paper`` (``setting, position, accuracy``) as
    grey squares. ``summary`` is ``accuracy_by_position``'s table for several readers."""
    curves = summary[summary["gold_index"] >= 0]
    settings = [s for s in curves["setting"].unique() if s != "oracle"]
    closed = summary[summary["setting"] == "closed-book"].set_index("model")["accuracy"]
    readers = list(dict.fromkeys(curves["model"]))
    palette = fixed_palette(readers)
    fig, axes = panel_grid(len(settings), panel_height=2.6, sharey=True)
    for ax, setting in zip(axes, settings):
        counts = []
        for model, group in curves[curves["setting"] == setting].groupby("model", sort=False):
            group, colour = group.sort_values("position"), palette[model]
            ax.plot(group["position"], group["accuracy"], marker="o", markersize=4, color=colour,
                    label=model.split("/")[-1])
            ax.fill_between(group["position"], group["ci_low"], group["ci_high"], color=colour, alpha=0.15)
            counts.append(f"{model.split('/')[-1].split('-Instruct')[0]} n={int(group['n'].max())}")
            if model in closed:
                ax.axhline(closed[model], linestyle=":", color=colour, linewidth=1)
        if paper is not None:
            own = paper[paper["setting"] == setting].sort_values("position")
            if not own.empty:
                ax.plot(own["position"], own["accuracy"], marker="s", markerfacecolor="white", linestyle="--",
                        color=NEUTRAL, label=paper_label)
        ax.set_title(wrapped(f"{setting} ({', '.join(counts)})", PAGE_WIDTH / len(settings), 8), fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_xticks(sorted(curves.loc[curves["setting"] == setting, "position"].unique()))
        ax.set_ylim(-0.02, 1.02)
    axes[0].set_ylabel(ylabel)
    legend_below(fig, axes, "reader (dotted: its closed-book accuracy)" if len(closed) else "reader",
                 order=[m.split("/")[-1] for m in readers])
    suptitle(fig, title)
    return fig
