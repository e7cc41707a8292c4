"""Figures drawn from tidy result tables, saved as PNG and PDF under ``figures/``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def figures_dir(path: str | Path | None = None) -> Path:
    from grainlab import settings

    return settings.figures_dir(path)


def save_figure(fig, name: str, folder: str | Path | None = None) -> list[Path]:
    """Write ``<name>.png`` (150 dpi) and ``<name>.pdf``; return the paths."""
    out = figures_dir(folder)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    return paths


def plot_metric_vs_chunk_size(table: pd.DataFrame, measure_by_dataset: dict[str, str], title: str):
    """One panel per dataset: ``measure`` against chunk size (tokens), a line per retriever.

    ``table`` needs columns ``dataset, retriever_label, chunk_size, measure, mean``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    datasets = list(measure_by_dataset)
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.8), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        measure = measure_by_dataset[dataset]
        data = table[(table["dataset"] == dataset) & (table["measure"] == measure)]
        sns.lineplot(data=data, x="chunk_size", y="mean", hue="retriever_label", marker="o", ax=ax)
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(data["chunk_size"].unique()))
        ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("chunk size (cl100k tokens)")
        ax.set_ylabel(measure)
        ax.set_title(dataset)
        ax.legend(title="retriever", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_recall_vs_budget(table: pd.DataFrame, datasets: list[str], title: str):
    """AnswerRecall@k against the tokens it reads (k × mean chunk tokens), a line per chunk
    size; one panel per dataset × retriever. Compares chunk sizes at equal reading budget.

    ``table`` needs ``dataset, retriever_label, chunk_size, measure, mean, mean_unit_tokens``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    data = table[table["measure"].str.startswith("AnswerRecall@") & table["dataset"].isin(datasets)].copy()
    data["k"] = data["measure"].str.split("@").str[1].astype(int)
    data["tokens_read"] = data["k"] * data["mean_unit_tokens"]
    retrievers = sorted(data["retriever_label"].unique())
    fig, axes = plt.subplots(len(datasets), len(retrievers), figsize=(4.2 * len(retrievers), 3.4 * len(datasets)),
                             squeeze=False, sharey="row")
    for row, dataset in enumerate(datasets):
        for col, retriever in enumerate(retrievers):
            ax = axes[row][col]
            part = data[(data["dataset"] == dataset) & (data["retriever_label"] == retriever)]
            sns.lineplot(data=part, x="tokens_read", y="mean", hue="chunk_size", marker="o", ax=ax,
                         palette="viridis", legend=(row == 0 and col == len(retrievers) - 1))
            ax.set_xscale("log")
            ax.set_xlabel("tokens read (k × mean chunk tokens, cl100k)")
            ax.set_ylabel("AnswerRecall@k (k = 1..5)")
            ax.set_title(f"{dataset} — {retriever}", fontsize=9)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_pipeline_stages(aggregate: pd.DataFrame, measure: str, title: str,
                         stages: tuple[str, ...] = ("candidates", "fused", "reranked", "context")):
    """``measure`` at each pipeline stage, a line per system; one panel per granularity.

    ``aggregate`` needs ``granularity, system, stage, measure, mean`` (the engine's aggregate table).
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    data = aggregate[aggregate["measure"] == measure]
    panels = list(dict.fromkeys(data["granularity"]))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 4.2), squeeze=False, sharey=True)
    for ax, panel in zip(axes[0], panels):
        part = data[data["granularity"] == panel]
        sns.pointplot(data=part, x="stage", y="mean", hue="system", order=list(stages), ax=ax,
                      markersize=4, linewidth=1.2)
        ax.set_xlabel("pipeline stage")
        ax.set_ylabel(measure)
        ax.set_title(panel)
        ax.legend(fontsize=7, title="system", title_fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def plot_sweep(table: pd.DataFrame, x: str, y: str, hue: str, xlabel: str, ylabel: str, title: str):
    """A log2-x line plot of ``y`` against ``x``, one line per ``hue`` (e.g. late vs naive by size)."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(5.8, 3.8))
    sns.lineplot(data=table, x=x, y=y, hue=hue, marker="o", ax=ax)
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(table[x].unique()))
    ax.get_xaxis().set_major_formatter(plt.matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def plot_bars(table: pd.DataFrame, x: str, y: str, hue: str | None, ylabel: str, title: str,
              error: str | None = ("ci", 95)):
    """Bars of the mean ``y`` per ``x`` (and ``hue``), with a bootstrap 95% interval over rows."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    sns.barplot(data=table, x=x, y=y, hue=hue, errorbar=error, ax=ax, seed=0)
    ax.set_xlabel("")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    if hue:
        ax.legend(fontsize=7, title=hue, title_fontsize=8)
    fig.tight_layout()
    return fig


def plot_tradeoff(table: pd.DataFrame, x: str, y: str, hue: str, col: str, xlabel: str, ylabel: str, title: str):
    """``y`` against ``x`` (linear axes), a line per ``hue``, a panel per ``col``: e.g. answer
    recall against tokens read, or boundary retention against duplication."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    panels = list(dict.fromkeys(table[col]))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels) + 2.6, 3.8), squeeze=False)
    for i, (ax, panel) in enumerate(zip(axes[0], panels)):
        sns.lineplot(data=table[table[col] == panel], x=x, y=y, hue=hue, marker="o", ax=ax, sort=True,
                     legend=i == len(panels) - 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(str(panel), fontsize=10)
    axes[0][-1].legend(fontsize=7, title=hue, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


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
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


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
    handles, labels = {}, []
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8,
               title="reader (dotted: its closed-book)", title_fontsize=8, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
