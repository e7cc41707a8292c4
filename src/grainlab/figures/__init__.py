"""Every committed figure as a function of its study's stored tables (``make figures``).

Importing the package registers every study's figures (:data:`FIGURES`)."""

from grainlab.figures import (  # noqa: F401  (registers)
    chroma_chunking,
    chunk_size,
    dense_x,
    hybrid_rerank,
    late_chunking,
    longrag,
    lost_in_the_middle,
    semantic_chunking,
    your_documents,
)
from grainlab.figures.registry import (
    FIGURES,
    FigureSpec,
    Redrawn,
    StudyTables,
    draw_all,
    draw_figure,
    figure,
    owner,
    show_figure,
)

__all__ = ["FIGURES", "FigureSpec", "Redrawn", "StudyTables", "draw_all", "draw_figure", "figure", "owner",
           "show_figure"]
