"""Lower layers never import higher ones (the shape of the house in DEVELOPERS.md)."""

import ast
from pathlib import Path

import grainlab

LAYERS = {
    "errors": 0,
    "types": 0,
    "settings": 1, "spec": 1, "anchors": 1, "files": 1, "languages": 1, "formatting": 1,
    "cache": 2, "distributed": 2,
    "data": 3, "models": 3,
    "readers": 4,
    "chunking": 5,
    "retrieval": 6,
    "evaluation": 7,
    "experiments": 8,
    "studies": 9, "transport": 9,
    "plots": 10, "reproduce": 10,
    "publish": 11, "figures": 11,
    "replay": 12,
    "cli": 13,
}
ROOT = Path(grainlab.__file__).parent


def module_layer(path: Path) -> tuple[str, int]:
    top = path.relative_to(ROOT).parts[0].removesuffix(".py")
    return top, LAYERS[top]


def test_every_module_has_a_layer():
    for path in ROOT.rglob("*.py"):
        if path.name != "__init__.py" or path.parent != ROOT:
            module_layer(path)


def test_imports_point_downwards():
    problems = []
    for path in ROOT.rglob("*.py"):
        if path.parent == ROOT and path.name == "__init__.py":
            continue
        top, level = module_layer(path)
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                parts = name.split(".")
                if parts[0] != "grainlab" or len(parts) < 2:
                    continue
                target = parts[1]
                if target == top:
                    continue
                if LAYERS[target] >= level:
                    problems.append(f"{path.relative_to(ROOT)} imports grainlab.{target}")
    assert problems == []
