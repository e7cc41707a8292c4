"""Process-wide settings read from the environment (no side effects at import)."""

from __future__ import annotations

import os
from pathlib import Path

MIRROR_ENV = "GRAINLAB_MIRROR"
CACHE_ENV = "GRAINLAB_CACHE"
RESULTS_ENV = "GRAINLAB_RESULTS"
FIGURES_ENV = "GRAINLAB_FIGURES"
DEVICE_ENV = "GRAINLAB_DEVICE"

DEFAULT_TOKENIZER = "cl100k_base"
"""The tokenizer every size and budget is counted in unless a spec names another (tiktoken's
GPT-4 encoding: model-independent, so all retrievers see the same chunks)."""


def mirror_dir(override: str | os.PathLike | None = None) -> Path | None:
    """The local dataset mirror: the argument, else ``$GRAINLAB_MIRROR``, else ``None``; a mirror
    that is named but is not a folder is an error (not a silent fall-through to downloading)."""
    from grainlab.errors import ConfigError

    value = override if override is not None else os.environ.get(MIRROR_ENV)
    if not value:
        return None
    path = Path(value).expanduser().resolve()
    if not path.is_dir():
        source = "--mirror" if override is not None else f"${MIRROR_ENV}"
        raise ConfigError(f"the dataset mirror {path} ({source}) is not a folder: fix the path, or unset it "
                          f"to use the download cache and the official URLs")
    return path


def _writable_folder(override: str | os.PathLike | None, env: str, default: Path, what: str) -> Path:
    """The folder named by ``override``, else ``$env``, else ``default``, created when missing; a
    name that is a file (or cannot be created) is a :class:`ConfigError` naming where it came from."""
    from grainlab.errors import ConfigError

    source = "the argument" if override else f"${env}" if os.environ.get(env) else "the default"
    path = Path(override or os.environ.get(env) or default).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"the {what} {path} ({source}) is a file, not a folder: point {env} at a folder "
                          f"(or unset it for the default)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"the {what} {path} ({source}) cannot be created: {exc.strerror}; point {env} at a "
                          f"writable folder") from None
    return path


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """Where content-keyed artefacts (embeddings, indexes, generations) live."""
    return _writable_folder(override, CACHE_ENV, Path.home() / ".cache" / "grainlab", "cache")


def download_dir() -> Path:
    """Where datasets fetched from their official URLs are unpacked."""
    path = cache_dir() / "datasets"
    path.mkdir(parents=True, exist_ok=True)
    return path


def project_root(start: Path | None = None) -> Path:
    """The folder holding grainlab's ``pyproject.toml``, searched upward from ``start``/cwd, then
    the checkout this package is installed from (editable installs); else the current folder."""
    here = (start or Path.cwd()).resolve()
    source = Path(__file__).resolve().parents[2]  # src/grainlab/settings.py in a checkout
    for folder in [here, *here.parents, source]:
        candidate = folder / "pyproject.toml"
        if candidate.exists() and 'name = "grainlab"' in candidate.read_text():
            return folder
    return here


def results_dir(override: str | os.PathLike | None = None) -> Path:
    """Where tidy result tables are written (the project's ``results/`` by default)."""
    return _writable_folder(override, RESULTS_ENV, project_root() / "results", "results folder")


def figures_dir(override: str | os.PathLike | None = None) -> Path:
    """Where figures are saved (the project's ``figures/`` by default, ``$GRAINLAB_FIGURES``)."""
    return _writable_folder(override, FIGURES_ENV, project_root() / "figures", "figures folder")


def verify_releases(override: bool | None = None) -> bool:
    """Whether registered datasets are compared with their known releases on load
    (``$GRAINLAB_VERIFY_RELEASES=0`` turns it off, e.g. for hand-made test folders)."""
    if override is not None:
        return override
    return os.environ.get("GRAINLAB_VERIFY_RELEASES", "1") not in ("0", "false", "no")


def torch_device(preferred: str | None = None) -> str:
    """``cuda`` when available, else ``cpu``; a device asked for (argument or ``$GRAINLAB_DEVICE``)
    that this machine does not have is a :class:`ConfigError`, not a torch traceback later."""
    import re

    import torch

    from grainlab.errors import ConfigError

    choice = preferred or os.environ.get(DEVICE_ENV)
    if not choice:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", choice):
        raise ConfigError(f"device {choice!r} (from {'the argument' if preferred else '$' + DEVICE_ENV}) must be "
                          f"'cpu', 'cuda', 'cuda:N' or 'mps'")
    if choice.startswith("cuda"):
        index = int(choice.split(":")[1]) if ":" in choice else 0
        if not torch.cuda.is_available() or index >= torch.cuda.device_count():
            raise ConfigError(f"device {choice!r} was asked for ({'argument' if preferred else '$' + DEVICE_ENV}) "
                              f"but this machine has {torch.cuda.device_count()} CUDA device(s): unset "
                              f"{DEVICE_ENV} or use 'cpu'")
    if choice == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"device 'mps' was asked for but is not available here: unset {DEVICE_ENV} or use 'cpu'")
    return choice
