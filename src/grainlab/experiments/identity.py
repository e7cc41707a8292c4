"""Model revisions behind a spec string, so caches and results keyed by specs can't go stale."""

from __future__ import annotations

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
