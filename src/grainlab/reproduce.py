"""Run the notebooks through papermill and gather their paper-vs-ours tables."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from grainlab import settings
from grainlab.cache import atomic_write_text
from grainlab.errors import ConfigError
from grainlab.settings import project_root

NOTEBOOKS: dict[str, str] = {
    "chunk_size": "01_chunk_size",
    "dense_x": "02_dense_x",
    "late_chunking": "03_late_chunking",
    "longrag": "04_longrag",
    "lost_in_the_middle": "05_lost_in_the_middle",
    "hybrid_rerank": "06_hybrid_rerank",
    "semantic_chunking": "07_semantic_chunking",
}
PROFILES = ("quick", "full")


@dataclass(frozen=True)
class NotebookSetup:
    """Where a notebook run writes: ``results/<name>/<profile>/`` and ``figures/`` (``figures/quick/``)."""

    quick: bool
    root: Path
    results: Path
    figures: Path


def notebook_setup(name: str, profile: str, mirror: str = "") -> NotebookSetup:
    """The shared first cell of every notebook: mirror setting, profile, output folders."""
    if profile not in PROFILES:
        raise ConfigError(f"PROFILE must be one of {PROFILES}, got {profile!r}")
    if mirror:
        os.environ[settings.MIRROR_ENV] = mirror
    root = project_root()
    results = root / "results" / name / profile
    results.mkdir(parents=True, exist_ok=True)
    quick = profile == "quick"
    return NotebookSetup(quick, root, results, root / "figures" / ("quick" if quick else ""))


def notebook_paths(name: str, root: Path) -> tuple[Path, Path]:
    """The ``.py`` (jupytext source) and ``.ipynb`` of a registered notebook."""
    if name not in NOTEBOOKS:
        raise ConfigError(f"unknown notebook {name!r}; known: {', '.join(NOTEBOOKS)}")
    stem = root / "notebooks" / NOTEBOOKS[name]
    return stem.with_suffix(".py"), stem.with_suffix(".ipynb")


def build_notebook(py_path: Path, ipynb_path: Path) -> None:
    """Write the ``.ipynb`` from its jupytext ``py:percent`` source (outputs empty)."""
    import jupytext

    notebook = jupytext.read(py_path)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    jupytext.write(notebook, ipynb_path, fmt="ipynb")


def parse_parameters(items: list[str] | None) -> dict[str, object]:
    """``["SEED=3", "MODELS=[\"a\"]"]`` → ``{"SEED": 3, "MODELS": ["a"]}`` (JSON values, else strings)."""
    out: dict[str, object] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise ConfigError(f"parameter {item!r} must look like NAME=VALUE")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out


def reproduce(profile: str = "quick", only: list[str] | None = None, mirror: str | None = None,
              root: Path | None = None, parameters: dict[str, object] | None = None) -> Path:
    """Execute notebooks with ``PROFILE`` (and any ``parameters``) injected; write executed copies
    and the profile's summary."""
    import papermill

    if profile not in PROFILES:
        raise ConfigError(f"profile must be one of {PROFILES}, got {profile!r}")
    root = root or project_root()
    names = only or list(NOTEBOOKS)
    if mirror:
        os.environ[settings.MIRROR_ENV] = str(Path(mirror).resolve())
    executed = root / "results" / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    for name in names:
        py_path, ipynb_path = notebook_paths(name, root)
        if not ipynb_path.exists():
            build_notebook(py_path, ipynb_path)
        tick = time.perf_counter()
        papermill.execute_notebook(
            str(ipynb_path), str(executed / f"{NOTEBOOKS[name]}.{profile}.ipynb"),
            parameters={"PROFILE": profile, **(parameters or {})}, cwd=str(root / "notebooks"),
            kernel_name=os.environ.get("GRAINLAB_KERNEL", "python3"), progress_bar=False)
        seconds = time.perf_counter() - tick
        run_info = {"notebook": NOTEBOOKS[name], "profile": profile, "seconds": round(seconds, 1),
                    "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        atomic_write_text(root / "results" / name / profile / "runtime.json", json.dumps(run_info))
    return write_summary(root, profile)


def write_summary(root: Path, profile: str) -> Path:
    """Every notebook's paper-vs-ours table for ``profile``, with run times: ``results/summary.md``
    for the full profile (committed), ``results/summary-<profile>.md`` otherwise."""
    lines = ["# grainlab results summary", "", f"Profile: **{profile}** (`grainlab reproduce --profile {profile}`).",
             "", "| notebook | run time (s) | finished |", "|---|---|---|"]
    sections = []
    for name, stem in NOTEBOOKS.items():
        folder = root / "results" / name / profile
        if (folder / "runtime.json").exists():
            info = json.loads((folder / "runtime.json").read_text())
            lines.append(f"| {stem} | {info['seconds']:.0f} | {info['finished']} |")
        if (folder / "paper_vs_ours.md").exists():
            sections += ["", f"## {name} ({stem})", "", (folder / "paper_vs_ours.md").read_text().strip()]
    lines += sections
    path = root / "results" / ("summary.md" if profile == "full" else f"summary-{profile}.md")
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path
