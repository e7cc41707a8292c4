"""Datasets in one shape: BEIR corpus/queries/qrels, plus answers for QA sets."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from grainlab import settings
from grainlab.data.beir_format import document_text, load_beir_folder
from grainlab.data.chroma_eval import FILES as CHROMA_FILES
from grainlab.data.chroma_eval import load_chroma_eval
from grainlab.data.clusters import evidence_clusters, gold_clusters
from grainlab.data.irds import is_irds, load_irds
from grainlab.data.locate import ensure_local, local_path
from grainlab.data.qa_formats import load_nq_oracle, load_squad_format
from grainlab.data.recipes import portable_path, with_recipe
from grainlab.data.registry import REGISTRY, DatasetSpec, get_spec
from grainlab.data.sample import sample_dataset, sample_label
from grainlab.data.stitch import join_articles, stitch_documents
from grainlab.data.types import Dataset, Document
from grainlab.data.validate import check_dataset, check_release
from grainlab.errors import ConfigError, DatasetNotFound

__all__ = [
    "Dataset", "DatasetSpec", "Document", "REGISTRY", "available", "document_text", "evidence_clusters", "get_spec", "gold_clusters",
    "UnverifiedDatasetWarning", "is_folder_path", "join_articles", "load_beir_path", "load_dataset", "sample_dataset", "sample_label", "stitch_documents",
]


def load_dataset(name: str, mirror: str | os.PathLike | None = None, split: str = "test",
                 allow_download: bool = True, verify_release: bool | None = None) -> Dataset:
    """Load a registered dataset from the mirror, the download cache, or its official URL — or
    any BEIR folder given by path (``load_dataset("/data/my_beir_folder")``; no release check), or
    an ir_datasets id (``load_dataset("irds:beir/scifact/test")``; ``grainlab.data.irds``).

    ``name`` may end in ``_stitched`` (e.g. ``squad_dev_stitched``) for Bhat et al.'s
    ≥50,000-character stitched documents, or in ``_articles`` (``squad_dev_articles``) for one
    document per article. Every dataset is checked on load (files line by line,
    then nothing empty and every judgment naming a known query and document); a registered one
    is also compared with the releases the registry knows (counts and checksums), unless
    ``verify_release=False`` (or ``$GRAINLAB_VERIFY_RELEASES=0``, for home-made test folders).
    A dataset whose queries are in its corpus (ArguAna, Quora) has ``info["queries_in_corpus"]``:
    its evaluation drops a hit whose id equals the query id, as BEIR does; no other dataset's does.
    """
    dataset = _load(name, mirror, split, allow_download, verify_release)
    path = {"$path": portable_path(name)} if is_folder_path(name) and not is_irds(name) else name
    return with_recipe(dataset, {"dataset": path, "split": split})


def _load(name: str, mirror: str | os.PathLike | None, split: str, allow_download: bool,
          verify_release: bool | None) -> Dataset:
    if is_irds(name):
        return load_irds(name)
    if is_folder_path(name):
        return load_beir_path(Path(name).expanduser(), split)
    if name.endswith("_stitched"):
        return stitch_documents(load_dataset(name[: -len("_stitched")], mirror, split, allow_download, verify_release))
    if name.endswith("_articles"):
        return join_articles(load_dataset(name[: -len("_articles")], mirror, split, allow_download, verify_release))
    spec = get_spec(name)
    if spec.kind not in ("beir", "squad", "nq_oracle", "chroma_eval"):
        raise ConfigError(f"{name} is a Lost-in-the-Middle file, not a retrieval dataset: read it with "
                          f"grainlab.data.lost_in_the_middle (load_kv_examples / load_multidoc_file)")
    path = ensure_local(spec, mirror, allow_download=allow_download)
    if spec.kind == "beir":
        dataset = load_beir_folder(path, name, split)
        files = {f: path / f for f in ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv")}
    elif spec.kind == "squad":
        dataset, files = load_squad_format(path, name), {path.name: path}
    elif spec.kind == "chroma_eval":
        dataset, files = load_chroma_eval(path, name), {f: path / f for f in CHROMA_FILES}
    else:
        dataset, files = load_nq_oracle(path, name), {path.name: path}
    check_dataset(dataset)
    if spec.queries_in_corpus:
        dataset.info["queries_in_corpus"] = True
    if settings.verify_releases(verify_release):
        check_release(dataset, files, spec.releases, split)
    return dataset


class UnverifiedDatasetWarning(UserWarning):
    """A dataset loaded by path: checked line by line, but not compared with any known release."""


def is_folder_path(name: str) -> bool:
    """Whether ``name`` names a folder by path (``/data/mine``, ``./mine``, ``~/mine``) rather than a
    registered dataset: it holds a path separator or starts with ``.``/``~``, or is an existing
    folder that is not a registered name."""
    return name not in REGISTRY and (os.sep in name or "/" in name or name.startswith((".", "~"))
                                     or Path(name).is_dir())


def load_beir_path(folder: Path, split: str = "test") -> Dataset:
    """Any BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``) given by path:
    validated as every dataset is, but compared with no release (said once per process)."""
    if not folder.is_dir():
        raise DatasetNotFound(f"{folder} is not a folder: a dataset given by path is a BEIR folder holding "
                              f"corpus.jsonl, queries.jsonl and qrels/{split}.tsv (registered names: grainlab datasets)")
    dataset = load_beir_folder(folder.resolve(), folder.resolve().name, split)
    check_dataset(dataset)
    warnings.warn(f"grainlab: {folder} is loaded as a BEIR folder by path: its files are checked line by line, "
                  f"but not against any known release", UnverifiedDatasetWarning, stacklevel=3)
    return dataset


def available(mirror: str | os.PathLike | None = None) -> dict[str, str | None]:
    """Each registered dataset → its local path, or ``None`` when it must be downloaded."""
    return {name: (str(p) if (p := local_path(spec, mirror)) else None) for name, spec in REGISTRY.items()}
