"""The figure names notebooks save, read from their ``save_figure(fig, name, ...)`` calls."""

from __future__ import annotations

import ast
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def saved_figure_names() -> list[tuple[str | None, ...]]:
    """Each call's name as its parts: literal text, or ``None`` for an f-string's formatted value."""
    names = []
    for notebook in sorted(NOTEBOOKS.glob("*.py")):
        for node in ast.walk(ast.parse(notebook.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "save_figure" and len(node.args) >= 2:
                name = node.args[1]
                if isinstance(name, ast.Constant):
                    names.append((name.value,))
                elif isinstance(name, ast.JoinedStr):
                    names.append(tuple(p.value if isinstance(p, ast.Constant) else None for p in name.values))
    return names
