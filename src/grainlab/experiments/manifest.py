"""What a result was made with: parameters, versions, commit, seed, timings."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import grainlab

PACKAGES = ("torch", "transformers", "sentence-transformers", "onnxruntime", "bm25s", "ir-measures",
            "beir", "tiktoken", "pysbd", "numpy", "pandas", "scipy", "xllamacpp", "papermill")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version(), "grainlab": grainlab.__version__}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


CODE_PATHS = ("src", "notebooks", "pyproject.toml", "environment.yml", "scripts")


def code_changes(root: Path) -> list[str]:
    """Uncommitted changes to the code that makes results (``git status --porcelain`` lines for
    ``src/``, ``notebooks/``, the project files; results and figures are outputs, not code);
    ``[]`` outside a git checkout."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", *CODE_PATHS], cwd=root, capture_output=True,
                             text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def git_commit(path: Path | None = None) -> str:
    """The commit of the working tree (with ``-dirty`` when the code that makes results —
    :data:`CODE_PATHS` — has uncommitted changes; results, figures and docs are not code), or
    ``unknown``."""
    cwd = path or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True, text=True,
                             check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *CODE_PATHS],
                               cwd=top, capture_output=True, text=True, timeout=10).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def cpu_name() -> str:
    """The processor's model name (``/proc/cpuinfo``), else ``platform.processor()``, else the machine type."""
    try:
        for line in Path("/proc/cpuinfo").read_text("utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def new_manifest(**parameters: Any) -> dict[str, Any]:
    return {"created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "parameters": parameters,
            "versions": package_versions(), "git_commit": git_commit(), "platform": platform.platform(),
            "systems": {}}


def record_recipe(manifest_path: Path, dataset: Any) -> bool:
    """Write ``dataset``'s recipe (``grainlab.data.recipes``) into an experiment manifest that
    records none, when ``dataset`` is the data the experiment ran on (the same fingerprint): how
    an experiment stored before recipes were recorded becomes verifiable without a re-run.
    Whether it was written; a manifest that has a recipe is never changed."""
    import json

    from grainlab.files import atomic_write_text

    manifest = json.loads(Path(manifest_path).read_text("utf-8"))
    parameters = manifest["parameters"]
    recipe = dataset.info.get("recipe")
    if parameters.get("recipe") or not recipe or dataset.fingerprint() != parameters["dataset_fingerprint"]:
        return False
    parameters["recipe"] = recipe
    atomic_write_text(Path(manifest_path), json.dumps(manifest, indent=1, default=str))
    return True
