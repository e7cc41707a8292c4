"""What a stored per-query table was computed from: its content key.

A key names what was computed, never the source bytes that computed it: the dataset's
fingerprint, the system (every parameter of its chunker, retrievers, aggregation and stages),
the run settings (measures with their cutoffs, depth), the revisions of the models and data
files it reads, and an explicit ``version`` of each component that computes it (chunker,
retriever, encoder runtime, pooling, aggregation, pipeline, reranker, each measure, the
scorer). Changing what a component computes means bumping its version, a one-line change
beside its code; a change that forgets the bump is caught by ``grainlab verify``, which
recomputes a sample of the stored rows.
"""

from __future__ import annotations

from typing import Any

from grainlab.cache import content_key
from grainlab.chunking.factory import get_chunker
from grainlab.evaluation.measures import IR_MEASURES_VERSION
from grainlab.evaluation.registry import parse_grainlab_measure
from grainlab.experiments.scoring import SCORING_VERSION
from grainlab.experiments.systems import System
from grainlab.models.catalogue import GGUF_EMBEDDERS, gguf_model_id
from grainlab.models.cross_encoders import CROSS_ENCODER_VERSION
from grainlab.models.encoders import ENCODER_VERSION, PRESETS
from grainlab.models.llama_encoder import LLAMA_ENCODER_VERSION
from grainlab.models.nomic_torch import NOMIC_TORCH_VERSION
from grainlab.models.resolve import resolve_model
from grainlab.retrieval import retriever_class, retriever_parameters
from grainlab.retrieval.aggregate import AGGREGATE_VERSION
from grainlab.retrieval.ann import IndexSpec
from grainlab.retrieval.late import LatePooler
from grainlab.retrieval.pipeline import PIPELINE_VERSION
from grainlab.spec import format_spec, parse_spec

MODEL_PARAMS = ("model", "tokenizer")
EMBEDDING_RUNTIMES = {"encoder": ENCODER_VERSION, "llama.cpp": LLAMA_ENCODER_VERSION, "nomic_torch": NOMIC_TORCH_VERSION}
"""The versions of every runtime a dense or late retriever may embed with (which one runs is
chosen by model and backend, so all of them are in its key)."""


def model_revisions(spec: str) -> dict[str, str]:
    """``{hf_id: revision}`` for every Hugging Face id among a spec's ``model``/``tokenizer``
    parameters (tiktoken encodings are fixed by their file hash and need none)."""
    _, params = parse_spec(spec)
    out = {}
    for name in MODEL_PARAMS:
        value = params.get(name)
        if isinstance(value, str) and "/" in value:
            resolved = resolve_model(value)
            out[value] = f"{resolved.source}:{resolved.revision}"
    return out


def retriever_identity(spec: str) -> dict[str, Any]:
    """A retriever's every parameter (defaults filled in) and its component versions."""
    name, params = retriever_parameters(spec)
    # a parameter added after tables were stored is keyed only away from the behaviour they were computed with
    unkeyed = getattr(retriever_class(name), "unkeyed_defaults", {})
    params = {k: v for k, v in params.items() if k not in unkeyed or v != unkeyed[k]}
    versions: dict[str, Any] = {"retriever": f"{name}/{retriever_class(name).version}"}
    if name in ("dense", "late"):
        versions["embedding"] = EMBEDDING_RUNTIMES
        model = str(params["model"])
        preset = PRESETS.get(model) or GGUF_EMBEDDERS.get(gguf_model_id(model))
        versions["preset"] = repr(preset) if preset else None  # a model without one reads its folder's config
    if name == "late":
        versions["pooling"] = f"late/{LatePooler.version}"
    return {"spec": format_spec(name, params), "versions": versions}


def measure_versions(measures: list[str]) -> dict[str, str]:
    """Each measure's component version: grainlab's own measures carry theirs; ir-measures' are
    computed by the library through grainlab's adapter (its version)."""
    out = {}
    for name in measures:
        parsed = parse_grainlab_measure(name)
        out[name] = f"grainlab/{parsed.measure.version}" if parsed else f"ir-measures/{IR_MEASURES_VERSION}"
    return out


def _library_revisions(spec: str) -> dict[str, str]:
    """Library data that changes a ranking: an approximate index's FAISS version, a morphological
    analyzer's dictionary."""
    name, params = retriever_parameters(spec)
    out: dict[str, str] = {}
    if name == "dense" and not IndexSpec.parse(str(params["index_spec"])).exact:
        from grainlab.retrieval.ann import faiss_module

        out["faiss"] = faiss_module().__version__
    if name == "bm25" and params.get("language", "en") != "en":
        from grainlab.retrieval.analyzers import analyzer_versions

        out.update(analyzer_versions(str(params["language"])))
    return out


def key_parts(dataset_fingerprint: str, system: System, measures: list[str], depth: int) -> dict[str, Any]:
    """Everything one system's stored table is keyed by (see the module docstring)."""
    chunker = get_chunker(system.chunker)
    retrievers = [retriever_identity(spec) for spec in system.retrievers]
    models: dict[str, str] = {}
    for spec in (*(r["spec"] for r in retrievers), chunker.revision_spec):  # every parameter: a default model too
        models.update(model_revisions(spec))
    for spec in system.retrievers:
        models.update(_library_revisions(spec))
    versions: dict[str, Any] = {"scoring": SCORING_VERSION, "chunker": chunker.version_string,
                                "measures": measure_versions(measures)}
    if system.aggregate is not None:
        versions["aggregate"] = AGGREGATE_VERSION
    stages = None
    if system.stages is not None:
        versions["pipeline"] = PIPELINE_VERSION
        stages = {"fusion": system.stages.fusion, "rrf_k": system.stages.rrf_k, "candidate_k": system.stages.candidate_k,
                  "rerank_k": system.stages.rerank_k, "context_k": system.stages.context_k,
                  "reranker": system.stages.reranker}
        if system.stages.reranker:
            versions["reranker"] = CROSS_ENCODER_VERSION
            models.update(model_revisions(f"rerank(model={system.stages.reranker})"))
    chunker_spec = chunker.spec if chunker.revision_spec == chunker.spec else f"{chunker.spec} {chunker.revision_spec}"
    return {"dataset": dataset_fingerprint, "chunker": chunker_spec, "retrievers": retrievers,
            "aggregate": system.aggregate, "parents": system.parents, "stages": stages,
            "measures": list(measures), "depth": depth, "models": models, "versions": versions}


def results_key(dataset_fingerprint: str, system: System, measures: list[str], depth: int) -> str:
    """The content key of one system's stored per-query table (:func:`key_parts`, hashed)."""
    return content_key(kind="per_query", **key_parts(dataset_fingerprint, system, measures, depth))
