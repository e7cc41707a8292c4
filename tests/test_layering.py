"""Lower layers never import higher ones (the shape of the house in DEVELOPERS.md)."""

import ast
from pathlib import Path

import grainlab

LAYERS = {
    "errors": 0,
    "types": 0,
    "settings": 1, "spec": 1, "sanity_gates": 1, "files": 1, "languages": 1, "formatting": 1,
    "cache": 2, "distributed": 2,
    "data": 3, "models": 3,
    "readers": 4,
    "chunking": 5,
    "retrieval": 6,
    "evaluation": 7,
    "experiments": 8,
    "studies": 9, "packing": 9,
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


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The grainlab modules ``path`` imports anywhere in its body, function-level imports included
    (``from package import module`` names the module, not the package's ``__init__``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found |= submodules or ({node.module} & modules)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names} & modules
    return found


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in ROOT.rglob("*.py")}
    return {name: imported_modules(path, set(paths)) - {name} for name, path in paths.items()}


def test_no_module_imports_itself_back():
    """Inside packages too: the imports between grainlab's modules form no circle, so each package's
    modules have one direction as the layers do (a function-level import counts: it only hides one)."""
    graph = import_graph()
    circles = []
    for start in sorted(graph):
        stack, seen = [(start, (start,))], set()
        while stack:
            node, path = stack.pop()
            for target in sorted(graph[node]):
                if target == start:
                    circles.append(" → ".join(path + (start,)))
                elif target not in seen and target > start:  # each circle reported from its smallest module
                    seen.add(target)
                    stack.append((target, path + (target,)))
    assert circles == []


def test_the_import_graph_sees_function_level_and_submodule_imports():
    graph = import_graph()
    assert "grainlab.models.sharded" in graph["grainlab.models.embedding_cache"]
    assert "grainlab.chunking.foreign" in graph["grainlab.chunking.factory"]  # imported inside get_chunker
    assert "grainlab.readers" not in graph["grainlab.readers.propositions"]  # `from grainlab.readers import limits`


def test_the_model_catalogue_is_read_by_models_and_reads_none():
    graph = import_graph()
    assert {m for m in graph["grainlab.models.catalogue"] if m.startswith("grainlab.")} == set()
    assert "grainlab.models.catalogue" in graph["grainlab.models.resolve"]
