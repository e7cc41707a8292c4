"""Vector indexes for dense retrieval: exact (``flat``) or approximate through FAISS.

An index is named by a spec: ``flat`` (exact inner product, the default), ``hnsw(M,efConstruction,
efSearch)``, ``ivf(nlist,nprobe)`` or ``ivfpq(nlist,nprobe,m,nbits)``. Parameters left out take
FAISS's usual values; the canonical spec lists them all, so results and cache keys say exactly
which index ran. Build parameters key the cached index; search parameters (``efSearch``,
``nprobe``) don't, so sweeping them reuses one built index. Vectors are L2-normalised, so inner
product is cosine similarity.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from grainlab.cache import ArtifactCache, code_fingerprint, content_key, report_corrupt, sha256_file
from grainlab.errors import ConfigError
from grainlab.files import atomic_write_text
from grainlab.spec import format_spec, parse_spec

ANN_CODE_VERSION = code_fingerprint("retrieval.ann")
BUILD_THREADS_ENV = "GRAINLAB_FAISS_BUILD_THREADS"

# kind → (build parameters, search parameters), with their defaults
KINDS: dict[str, tuple[dict[str, int], dict[str, int]]] = {
    "flat": ({}, {}),
    "hnsw": ({"M": 32, "efConstruction": 40}, {"efSearch": 64}),
    "ivf": ({"nlist": 1024}, {"nprobe": 16}),
    "ivfpq": ({"nlist": 1024, "m": 16, "nbits": 8}, {"nprobe": 16}),
}


def faiss_module() -> Any:
    """The ``faiss`` module, or a clear error naming the package to install."""
    try:
        import faiss
    except ImportError as exc:
        raise ConfigError("approximate indexes need FAISS: pip install faiss-cpu "
                          "(or faiss-gpu where CUDA is available)") from exc
    return faiss


@dataclass(frozen=True)
class IndexSpec:
    """A parsed index spec: its kind and every parameter (defaults filled in)."""

    kind: str
    build: tuple[tuple[str, int], ...] = ()
    search: tuple[tuple[str, int], ...] = ()

    @classmethod
    def parse(cls, text: str) -> IndexSpec:
        name, params = parse_spec(text)
        if name not in KINDS:
            known = ", ".join(format_spec(k, {**b, **s}) for k, (b, s) in KINDS.items())
            raise ConfigError(f"unknown vector index {name!r}; choose one of {known}")
        build_defaults, search_defaults = KINDS[name]
        unknown = sorted(set(params) - set(build_defaults) - set(search_defaults))
        if unknown:
            raise ConfigError(f"index {name!r} has no parameter(s) {unknown}; it takes "
                              f"{sorted([*build_defaults, *search_defaults])}")
        for key, value in params.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"index {name!r}: {key} must be a positive integer, got {value!r}")
        build = {**build_defaults, **{k: v for k, v in params.items() if k in build_defaults}}
        search = {**search_defaults, **{k: v for k, v in params.items() if k in search_defaults}}
        return cls(name, tuple(build.items()), tuple(search.items()))

    @property
    def canonical(self) -> str:
        return format_spec(self.kind, {**dict(self.build), **dict(self.search)})

    @property
    def exact(self) -> bool:
        return self.kind == "flat"


def build_index(vectors: np.ndarray, spec: IndexSpec, threads: int | None = None) -> Any:
    """A FAISS index over ``vectors`` (inner product), trained where the kind needs it, with the
    spec's search parameters set.

    Built with ``threads`` OpenMP threads (default ``$GRAINLAB_FAISS_BUILD_THREADS``, else 1:
    a single-threaded HNSW or k-means build gives the same index every time)."""
    faiss = faiss_module()
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    n, dim = vectors.shape
    params = dict(spec.build)
    metric = faiss.METRIC_INNER_PRODUCT
    if spec.kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif spec.kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, params["M"], metric)
        index.hnsw.efConstruction = params["efConstruction"]
    else:
        nlist = params["nlist"]
        if nlist > n:
            raise ConfigError(f"index {spec.canonical}: nlist={nlist} is more than the {n} vectors to "
                              f"train it on; use nlist ≤ {n} (≈ 4·√n = {int(4 * n ** 0.5)} is usual)")
        quantizer = faiss.IndexFlatIP(dim)
        if spec.kind == "ivf":
            index = faiss.IndexIVFFlat(quantizer, dim, nlist, metric)
        else:
            if dim % params["m"]:
                raise ConfigError(f"index {spec.canonical}: m={params['m']} must divide the dimension {dim}")
            index = faiss.IndexIVFPQ(quantizer, dim, nlist, params["m"], params["nbits"], metric)
        index.cp.seed = 1234
    previous = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads or int(os.environ.get(BUILD_THREADS_ENV, "1")))
    try:
        if not index.is_trained:
            index.train(vectors)
        index.add(vectors)
    finally:
        faiss.omp_set_num_threads(previous)
    set_search_params(index, spec)
    return index


def set_search_params(index: Any, spec: IndexSpec) -> None:
    """Apply ``efSearch``/``nprobe`` to a built (or loaded) index."""
    faiss = faiss_module()
    params = dict(spec.search)
    if spec.kind == "hnsw":
        faiss.downcast_index(index).hnsw.efSearch = params["efSearch"]
    elif spec.kind in ("ivf", "ivfpq"):
        faiss.extract_index_ivf(index).nprobe = params["nprobe"]


def cached_index(vectors: np.ndarray, spec: IndexSpec, vectors_key: str, cache: ArtifactCache | None = None) -> Any:
    """The index over ``vectors`` (identified by ``vectors_key``, e.g. their embedding cache key),
    loaded from the cache — memory-mapped where FAISS allows — or built and saved atomically with
    a checksum. A saved index that fails its checksum is reported and rebuilt."""
    faiss = faiss_module()
    cache = cache or ArtifactCache()
    key = content_key(kind="faiss", vectors=vectors_key, shape=list(vectors.shape), index=spec.kind,
                      build=dict(spec.build), faiss=faiss.__version__, code=ANN_CODE_VERSION)
    path = cache.path("faiss", key, ".faiss")
    sidecar = path.with_name(path.name + ".sha256")
    index = None
    if path.exists():
        try:
            recorded = json.loads(sidecar.read_text("utf-8"))["sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            recorded = None
        if recorded is not None and recorded == sha256_file(path):
            index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        else:
            report_corrupt(path, "checksum missing or wrong")
            path.unlink(missing_ok=True)
            sidecar.unlink(missing_ok=True)
    if index is None:
        built = build_index(vectors, spec)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            faiss.write_index(built, str(tmp))
            digest = sha256_file(tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        atomic_write_text(sidecar, json.dumps({"sha256": digest, "bytes": path.stat().st_size}))
        return built
    set_search_params(index, spec)
    return index


def on_device(index: Any, spec: IndexSpec, device: str) -> Any:
    """The index moved to the GPUs when ``device`` is CUDA and FAISS was built with GPU support
    (``faiss-gpu``); HNSW has no GPU implementation and stays on the CPU, as does everything when
    FAISS is the CPU build."""
    faiss = faiss_module()
    gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    if not device.startswith("cuda") or gpus == 0 or spec.kind == "hnsw":
        return index
    return faiss.index_cpu_to_all_gpus(index)


def search_index(index: Any, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` unit indices and scores per query (``-1`` where fewer than ``k`` were found)."""
    k = min(k, index.ntotal)
    if k == 0:
        empty = np.zeros((len(queries), 0))
        return empty.astype(np.int64), empty.astype(np.float32)
    scores, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
    return ids, scores
