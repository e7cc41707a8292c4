"""The figure names the registry draws (``grainlab.figures``): a name as its parts, ``None`` standing
for a family's per-model suffix."""

from __future__ import annotations


def saved_figure_names() -> list[tuple[str | None, ...]]:
    from grainlab.figures import FIGURES

    return [(spec.name, None) if spec.family else (spec.name,) for spec in FIGURES.values()]
