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

import pandas as pd

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
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


def legend_outside(ax, title: str | None = None, panels: Sequence | None = None,
                   order: Sequence[str] | None = None, **kwargs) -> None:
    """One legend to the right of ``ax``, outside the data, of every entry on ``ax`` (and on
    ``panels``, e.g. a reference band drawn only in some panels), each label once, labels in
    ``order`` first and in that order."""
    entries: dict = {}
    for source in [ax, *(panels or [])]:
        for handle, label in zip(*source.get_legend_handles_labels()):
            entries.setdefault(label, handle)
        if source is not ax and source.get_legend() is not None:
            source.get_legend().remove()
    if order:
        rank = {label: i for i, label in enumerate(order)}
        entries = dict(sorted(entries.items(), key=lambda item: rank.get(item[0], len(rank))))
    if entries:
        ax.legend(list(entries.values()), list(entries), title=title, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0, title_fontsize=8, **kwargs)


def fixed_palette(levels: Sequence) -> dict:
    """A colour per level, the same in every panel of a figure (Okabe–Ito, in the order given)."""
    return {level: OKABE_ITO[i % len(OKABE_ITO)] for i, level in enumerate(levels)}


def _y_and_interval(table: pd.DataFrame) -> tuple[str, object]:
    """Per-query rows (``value``) get a bootstrap 95% interval; aggregate rows (``mean``) none."""
    return ("value", ("ci", 95)) if "value" in table.columns else ("mean", None)


def draw_references(ax, references: Sequence[tuple[str, float, float]] | None) -> None:
    """Papers' numbers as hollow black diamonds with their label: ``(label, x, y)``."""
    for label, x, y in references or ():
        ax.plot([x], [y], **REFERENCE)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, 0), fontsize=7, va="center")


def draw_reference_lines(ax, lines: Mapping[str, float] | None) -> None:
    """Papers' numbers as labelled horizontal lines."""
    for (label, value), style in zip((lines or {}).items(), ["--", "-.", ":", (0, (5, 1))]):
        ax.axhline(value, color="black", linestyle=style, linewidth=1, label=label)


def figures_dir(path: str | Path | None = None) -> Path:
    from grainlab import settings

    return settings.figures_dir(path)


STAMP_KEY = "grainlab-plots"  # PNG text chunk: the fingerprint of the plotting code that drew it


def plots_fingerprint() -> str:
    """The code version of this module (what a figure's stamp is checked against)."""
    from grainlab.cache import code_fingerprint

    return code_fingerprint("plots")[:16]


def save_figure(fig, name: str, folder: str | Path | None = None) -> list[Path]:
    """Write ``<name>.png`` (150 dpi) and ``<name>.pdf`` (vector), each stamped with the plotting
    code's fingerprint and the commit (PNG text chunks; the PDF's Subject); return the paths."""
    from grainlab.experiments.manifest import git_commit

    out = figures_dir(folder)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    stamp, commit = plots_fingerprint(), git_commit()
    fig.savefig(paths[0], dpi=150, bbox_inches="tight", metadata={STAMP_KEY: stamp, "grainlab-commit": commit})
    fig.savefig(paths[1], bbox_inches="tight", metadata={"Subject": f"{STAMP_KEY}={stamp} commit={commit}"})
    return paths


def figure_stamp(path: Path) -> str | None:
    """The plotting-code fingerprint a PNG was stamped with (None: drawn before stamps existed)."""
    from PIL import Image

    with Image.open(path) as image:
        return image.info.get(STAMP_KEY)


@styled
def plot_metric_vs_chunk_size(table: pd.DataFrame, measure_by_dataset: dict[str, str], title: str,
                              paper_best: Mapping[str, tuple[int, int]] | None = None):
    """One panel per dataset: ``measure`` against chunk size (tokens), a line per retriever.

    ``table`` needs columns ``dataset, retriever_label, chunk_size, measure`` and ``mean`` (an
    aggregate) or ``value`` (per-query rows: then with bootstrap 95% intervals). ``paper_best``
    shades the size range the paper calls best on a dataset.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    y, interval = _y_and_interval(table)
    datasets = list(measure_by_dataset)
    retrievers = list(dict.fromkeys(table["retriever_label"]))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets) + 1.8, 3.6), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        measure = measure_by_dataset[dataset]
        data = table[(table["dataset"] == dataset) & (table["measure"] == measure)]
        n = data["qid"].nunique() if "qid" in data.columns else None
        sns.lineplot(data=data, x="chunk_size", y=y, hue="retriever_label", hue_order=retrievers,
                     palette=fixed_palette(retrievers), marker="o", ax=ax, errorbar=interval, err_style="bars",
                     err_kws={"capsize": 2}, seed=0)
        if paper_best and dataset in paper_best:
            low, high = paper_best[dataset]
            ax.axvspan(low, high, color="black", alpha=0.08, label="paper's best sizes")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(data["chunk_size"].unique()))
        ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("chunk size (cl100k tokens)")
        ax.set_ylabel(measure)
        ax.set_title(dataset + (f" (n={n:,})" if n else ""))
    legend_outside(axes[0][-1], "retriever", panels=list(axes[0][:-1]), order=retrievers)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


@styled
def plot_recall_vs_budget(table: pd.DataFrame, datasets: list[str], title: str):
    """AnswerRecall@k against the tokens it reads (k × mean chunk tokens), a line per chunk
    size; one panel per dataset × retriever. Compares chunk sizes at equal reading budget.

    ``table`` needs ``dataset, retriever_label, chunk_size, measure, mean, mean_unit_tokens``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    from grainlab.experiments.tables import split_cutoff

    data = split_cutoff(table[table["dataset"].isin(datasets)])
    data = data[data["measure_name"] == "AnswerRecall"].copy()
    data["tokens_read"] = data["k"] * data["mean_unit_tokens"]
    retrievers = sorted(data["retriever_label"].unique())
    sizes = sorted(data["chunk_size"].unique())
    shades = sns.color_palette("viridis", len(sizes))
    palette = dict(zip(sizes, shades))  # one colour per chunk size in every panel
    fig, axes = plt.subplots(len(datasets), len(retrievers), figsize=(4.2 * len(retrievers), 3.4 * len(datasets)),
                             squeeze=False, sharey="row")
    for row, dataset in enumerate(datasets):
        for col, retriever in enumerate(retrievers):
            ax = axes[row][col]
            part = data[(data["dataset"] == dataset) & (data["retriever_label"] == retriever)]
            sns.lineplot(data=part, x="tokens_read", y="mean", hue="chunk_size", hue_order=sizes, marker="o",
                         ax=ax, palette=palette)
            ax.set_xscale("log")
            ax.set_xlabel("tokens read (k × mean chunk tokens, cl100k)")
            ax.set_ylabel("AnswerRecall@k (k = 1..5)")
            ax.set_title(f"{dataset} — {retriever}", fontsize=9)
    legend_outside(axes[0][-1], "chunk size (tokens)", panels=[ax for ax in axes.flat if ax is not axes[0][-1]],
                   order=[str(size) for size in sizes])
    fig.suptitle(title)
    fig.tight_layout()
    return fig


@styled
def plot_pipeline_stages(table: pd.DataFrame, measure: str, title: str,
                         stages: tuple[str, ...] = ("candidates", "fused", "reranked", "context"), columns: int = 4):
    """Small multiples: one panel per system, ``measure`` at each pipeline stage it has, a line
    per granularity; the same y-axis everywhere, so panels compare at a glance.

    ``table`` needs ``granularity, system, stage, measure`` and either per-query ``qid, value`` rows
    (means with bootstrap 95% intervals, the number of queries appended to the title) or aggregate
    ``mean`` rows (means only).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    data = table[table["measure"] == measure].copy()
    y, interval = _y_and_interval(data)
    data["stage_index"] = data["stage"].map({stage: i for i, stage in enumerate(stages)})
    data = data.dropna(subset=["stage_index"])
    systems = list(dict.fromkeys(data["system"]))
    granularities = list(dict.fromkeys(data["granularity"]))
    palette = fixed_palette(granularities)
    rows = -(-len(systems) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(2.6 * columns + 1.8, 2.3 * rows), squeeze=False,
                             sharey=True, sharex=True)
    for ax, system in zip(axes.flat, systems):
        sns.lineplot(data=data[data["system"] == system], x="stage_index", y=y, hue="granularity",
                     hue_order=granularities, palette=palette, marker="o", errorbar=interval, err_style="bars",
                     err_kws={"capsize": 2}, seed=0, ax=ax)
        ax.set_title(textwrap.fill(system.replace("+", "+ "), 34), fontsize=7)
        ax.set_xticks(range(len(stages)), stages, rotation=30, fontsize=7)
        ax.set_xlabel("")
    for ax in axes.flat[len(systems):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(measure + (" (mean, 95% CI)" if interval else ""))
    first = axes[0][-1] if axes[0][-1].get_visible() else axes[0][0]
    legend_outside(first, "granularity", panels=[ax for ax in axes.flat if ax is not first and ax.get_visible()],
                   order=granularities)
    queries = data["qid"].nunique() if interval else None  # per-query rows: one decision, by _y_and_interval
    fig.suptitle(title + (f" (n = {queries} queries)" if queries else ""))
    fig.tight_layout()
    return fig


@styled
def plot_sweep(table: pd.DataFrame, x: str, y: str, hue: str, xlabel: str, ylabel: str, title: str,
               references: Sequence[tuple[str, float, float]] | None = None):
    """A log2-x line plot of ``y`` against ``x``, one line per ``hue`` (e.g. late vs naive by size);
    per-query rows (``y`` = ``value``) get bootstrap 95% intervals; ``references`` are the paper's
    ``(label, x, y)`` points."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    interval = ("ci", 95) if y == "value" else None
    sns.lineplot(data=table, x=x, y=y, hue=hue, marker="o", ax=ax, errorbar=interval, err_style="bars",
                 err_kws={"capsize": 2}, seed=0)
    draw_references(ax, references)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(table[x].unique()))
    ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    legend_outside(ax, hue)
    fig.tight_layout()
    return fig


@styled
def plot_bars(table: pd.DataFrame, x: str, y: str, hue: str | None, ylabel: str, title: str,
              error: str | None = ("ci", 95), references: Mapping[str, float] | None = None, xlabel: str = ""):
    """Bars of the mean ``y`` per ``x`` (and ``hue``), with a bootstrap 95% interval over rows and
    each bar's value written on it (so a zero is seen, not missing); ``references`` are the
    paper's numbers as labelled horizontal lines."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(7.2, 3.8))
    sns.barplot(data=table, x=x, y=y, hue=hue, errorbar=error, ax=ax, seed=0)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.2f", fontsize=6, padding=2)
    draw_reference_lines(ax, references)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    legend_outside(ax, hue)
    fig.tight_layout()
    return fig


@styled
def plot_tradeoff(table: pd.DataFrame, x: str, y: str, hue: str, col: str, xlabel: str, ylabel: str, title: str,
                  references: Sequence[tuple[str, float, float]] | None = None, style: str | None = None):
    """``y`` against ``x`` (linear axes), a line per ``hue`` (and ``style``), a panel per ``col``:
    e.g. answer recall against tokens read, or boundary retention against duplication; ``references``
    are the paper's ``(label, x, y)`` points, drawn in every panel. A ``hue`` level has one colour
    (and a ``style`` level one dash) in every panel, and one legend lists them all. Given per-query
    rows (several per point), each point gets its bootstrap 95% interval (seeded, so the figure is
    reproducible)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    panels = list(dict.fromkeys(table[col]))
    hue_order = list(dict.fromkeys(table[hue]))
    style_order = list(dict.fromkeys(table[style])) if style else None
    keys = [col, hue, x] + ([style] if style else [])
    per_query = table.duplicated(keys).any()
    values = table[x].dropna()
    few_counts = values.nunique() <= 12 and bool((values == values.round()).all())
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 2.6, 3.8), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        sns.lineplot(data=table[table[col] == panel], x=x, y=y, hue=hue, hue_order=hue_order,
                     palette=fixed_palette(hue_order), style=style, style_order=style_order, marker="o", ax=ax,
                     sort=True, errorbar=("ci", 95) if per_query else None, err_style="bars",
                     err_kws={"capsize": 2}, seed=0)
        draw_references(ax, references)
        if few_counts:
            ax.set_xticks(sorted(table[x].unique()))  # k = 1, 2, 5, 10, 20 rather than 2.5, 7.5, ...
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(str(panel), fontsize=10)
    order = ([hue] if style else []) + hue_order + ([style, *style_order] if style else [])
    legend_outside(axes[0][-1], None if style else hue, panels=list(axes[0][:-1]), order=order)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


@styled
def plot_position_curve(summary: pd.DataFrame, baselines: dict[str, float], title: str,
                        ylabel: str = "accuracy (best_subspan_em)", paper: pd.DataFrame | None = None):
    """Accuracy against the gold passage's 1-based position, a line (with its 95% CI band) per
    setting, dashed lines for position-free baselines (closed-book, oracle); ``paper`` (same
    columns ``setting, position, accuracy``) is drawn in grey for comparison."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for setting, group in summary.groupby("setting", sort=False):
        group = group.sort_values("position")
        line, = ax.plot(group["position"], group["accuracy"], marker="o", label=f"ours · {setting}")
        ax.fill_between(group["position"], group["ci_low"], group["ci_high"], color=line.get_color(), alpha=0.15)
    if paper is not None:
        for setting, group in paper.groupby("setting", sort=False):
            group = group.sort_values("position")
            ax.plot(group["position"], group["accuracy"], marker="s", linestyle=":", color="grey", alpha=0.8,
                    label=f"paper · {setting}")
    for (label, value), style in zip(baselines.items(), ["--", "-.", ":"]):
        ax.axhline(value, linestyle=style, color="black", linewidth=1, label=label)
    ax.set_xlabel("position of the gold passage (1 = first)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=10)
    legend_outside(ax)
    fig.tight_layout()
    return fig


@styled
def plot_reader_curves(summary: pd.DataFrame, title: str, paper: pd.DataFrame | None = None,
                       paper_label: str = "paper", ylabel: str = "accuracy (best_subspan_em)"):
    """One panel per setting (``10 documents``, ``20 documents``): accuracy against the gold
    passage's 1-based position, a line with its 95% CI band per reader (``model``, n in the
    legend), the reader's closed-book accuracy as a dotted line of its colour, and ``paper``
    (``setting, position, accuracy``) as grey squares. ``summary`` is ``accuracy_by_position``'s
    table for several readers."""
    import matplotlib.pyplot as plt

    curves = summary[summary["gold_index"] >= 0]
    settings = [s for s in curves["setting"].unique() if s != "oracle"]
    closed = summary[summary["setting"] == "closed-book"].set_index("model")["accuracy"]
    fig, axes = plt.subplots(1, len(settings), figsize=(4.4 * len(settings) + 2.2, 3.8), squeeze=False, sharey=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, setting in zip(axes[0], settings):
        for number, (model, group) in enumerate(curves[curves["setting"] == setting].groupby("model", sort=False)):
            group, colour = group.sort_values("position"), colours[number % len(colours)]
            ax.plot(group["position"], group["accuracy"], marker="o", color=colour,
                    label=f"{model.split('/')[-1]} (n={int(group['n'].max())})")
            ax.fill_between(group["position"], group["ci_low"], group["ci_high"], color=colour, alpha=0.15)
            if model in closed:
                ax.axhline(closed[model], linestyle=":", color=colour, linewidth=1)
        if paper is not None:
            own = paper[paper["setting"] == setting].sort_values("position")
            if not own.empty:
                ax.plot(own["position"], own["accuracy"], marker="s", linestyle="--", color="grey",
                        label=paper_label)
        ax.set_title(setting, fontsize=10)
        ax.set_xlabel("position of the gold passage (1 = first)")
        ax.set_xticks(sorted(curves.loc[curves["setting"] == setting, "position"].unique()))
        ax.set_ylim(-0.02, 1.02)
    axes[0][0].set_ylabel(ylabel)
    handles: dict = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
               title="reader (dotted: its closed-book)", title_fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
