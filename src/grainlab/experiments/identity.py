"""Model revisions behind a spec string, so caches and results keyed by specs can't go stale."""

from __future__ import annotations

from grainlab.cache import code_fingerprint, content_key
from grainlab.chunking.base import get_chunker
from grainlab.models.resolve import resolve_model
from grainlab.spec import parse_spec

MODEL_PARAMS = ("model", "tokenizer")


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


ENGINE_CODE = ("evaluation.measures", "evaluation.registry", "evaluation.spans", "evaluation.answers",
               "retrieval", "chunking", "models", "readers", "data.types", "cache",
               "experiments.engine", "experiments.scoring", "experiments.chunk_cache",
               "experiments.systems", "experiments.store", "experiments.identity", "languages")
"""The source a stored per-query table depends on. Inference over the tables (``evaluation``'s
significance and verdicts) and how files are written (``files``) are not in it: they do not change
a per-query value, so editing them never recomputes one."""


def results_key(dataset_fingerprint: str, chunker: str, retriever: str | tuple[str, ...], *,
                code: tuple[str, ...] = (), **parts: object) -> str:
    """The content key of one system's stored per-query table: the dataset's fingerprint, the
    chunker's spec **and version**, the retriever's spec, the revisions of every model either
    names, the source of the code that computes the table (``ENGINE_CODE`` plus ``code``) and
    the run's ``parts`` (measures, cutoffs, ...). Changing any of them recomputes the table."""
    specs = (retriever,) if isinstance(retriever, str) else tuple(retriever)
    models = {hf_id: revision for spec in (*specs, chunker) for hf_id, revision in model_revisions(spec).items()}
    if any("index=" in spec for spec in specs):  # an approximate index: its library's version changes the ranking
        from grainlab.retrieval.ann import faiss_module

        models["faiss"] = faiss_module().__version__
    for spec in specs:  # a morphological analyzer's dictionary changes the tokens, hence the ranking
        name, params = parse_spec(spec)
        if name == "bm25" and params.get("language", "en") != "en":
            from grainlab.retrieval.analyzers import analyzer_versions

            models.update(analyzer_versions(str(params["language"])))
    return content_key(dataset=dataset_fingerprint, chunker=chunker, chunker_version=get_chunker(chunker).version_string,
                       retriever=" + ".join(specs), models=models,
                       code=code_fingerprint(*ENGINE_CODE, *code), **parts)
