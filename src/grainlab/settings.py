"""Process-wide settings read from the environment (no side effects at import)."""

from __future__ import annotations

import os
from pathlib import Path

MIRROR_ENV = "GRAINLAB_MIRROR"
CACHE_ENV = "GRAINLAB_CACHE"
RESULTS_ENV = "GRAINLAB_RESULTS"
FIGURES_ENV = "GRAINLAB_FIGURES"
DEVICE_ENV = "GRAINLAB_DEVICE"


def mirror_dir(override: str | os.PathLike | None = None) -> Path | None:
    """The local dataset mirror: the argument, else ``$GRAINLAB_MIRROR``, else ``None``."""
    value = override if override is not None else os.environ.get(MIRROR_ENV)
    return Path(value).expanduser().resolve() if value else None


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """Where content-keyed artefacts (embeddings, indexes, generations) live."""
    value = override or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "grainlab"
    path = Path(value).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def download_dir() -> Path:
    """Where datasets fetched from their official URLs are unpacked."""
    path = cache_dir() / "datasets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def project_root(start: Path | None = None) -> Path:
    """The folder holding grainlab's ``pyproject.toml``, searched upward from ``start``/cwd;
    the current folder when there is none (an installed package used elsewhere)."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.exists() and 'name = "grainlab"' in candidate.read_text():
            return folder
    return here


def results_dir(override: str | os.PathLike | None = None) -> Path:
    """Where tidy result tables are written (the project's ``results/`` by default)."""
    value = override or os.environ.get(RESULTS_ENV) or project_root() / "results"
    path = Path(value).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def figures_dir(override: str | os.PathLike | None = None) -> Path:
    """Where figures are saved (the project's ``figures/`` by default, ``$GRAINLAB_FIGURES``)."""
    value = override or os.environ.get(FIGURES_ENV) or project_root() / "figures"
    path = Path(value).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def verify_releases(override: bool | None = None) -> bool:
    """Whether registered datasets are compared with their known releases on load
    (``$GRAINLAB_VERIFY_RELEASES=0`` turns it off, e.g. for hand-made test folders)."""
    if override is not None:
        return override
    return os.environ.get("GRAINLAB_VERIFY_RELEASES", "1") not in ("0", "false", "no")


def torch_device(preferred: str | None = None) -> str:
    """``cuda`` when available (or asked for), else ``cpu``."""
    choice = preferred or os.environ.get(DEVICE_ENV)
    if choice:
        return choice
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"
