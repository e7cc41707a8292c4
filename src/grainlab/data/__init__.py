"""Datasets in one shape: BEIR corpus/queries/qrels, plus answers for QA sets."""

from __future__ import annotations

import os

from grainlab.data.beir_format import document_text, load_beir_folder
from grainlab.data.locate import ensure_local, local_path
from grainlab.data.qa_formats import load_nq_oracle, load_squad_format
from grainlab.data.registry import REGISTRY, DatasetSpec, get_spec
from grainlab.data.sample import sample_dataset
from grainlab.data.stitch import stitch_documents
from grainlab.data.types import Dataset, Document
from grainlab.errors import ConfigError

__all__ = [
    "Dataset", "DatasetSpec", "Document", "REGISTRY", "available", "document_text", "get_spec",
    "load_dataset", "sample_dataset", "stitch_documents",
]


def load_dataset(name: str, mirror: str | os.PathLike | None = None, split: str = "test",
                 allow_download: bool = True) -> Dataset:
    """Load a registered dataset from the mirror, the download cache, or its official URL.

    ``name`` may end in ``_stitched`` (e.g. ``squad_dev_stitched``) for Bhat et al.'s
    ≥50,000-character stitched documents.
    """
    if name.endswith("_stitched"):
        return stitch_documents(load_dataset(name[: -len("_stitched")], mirror, split, allow_download))
    spec = get_spec(name)
    path = ensure_local(spec, mirror, allow_download=allow_download)
    if spec.kind == "beir":
        return load_beir_folder(path, name, split)
    if spec.kind == "squad":
        return load_squad_format(path, name)
    if spec.kind == "nq_oracle":
        return load_nq_oracle(path, name)
    raise ConfigError(f"{name} is a Lost-in-the-Middle file, not a retrieval dataset: read it with "
                      f"grainlab.data.lost_in_the_middle (load_kv_examples / load_multidoc_file)")


def available(mirror: str | os.PathLike | None = None) -> dict[str, str | None]:
    """Each registered dataset → its local path, or ``None`` when it must be downloaded."""
    return {name: (str(p) if (p := local_path(spec, mirror)) else None) for name, spec in REGISTRY.items()}
