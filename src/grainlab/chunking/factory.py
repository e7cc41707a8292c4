"""Chunkers by spec string: a registered grainlab chunker (``fixed_tokens(size=256)``) or a
library's splitter (``langchain:…``, ``semchunk(…)``, built by ``chunking.foreign``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from grainlab.chunking.base import _REGISTRY, Chunker
from grainlab.chunking.foreign import ForeignChunker, is_foreign
from grainlab.errors import ConfigError
from grainlab.spec import check_types, parse_spec


def available_chunkers() -> list[str]:
    return sorted(_REGISTRY)


def get_chunker(spec: str, **overrides: Any) -> Chunker:
    """Build a chunker from its spec string; ``overrides`` replace parameters (e.g. tokenizer). A
    library's splitter (``langchain:RecursiveCharacterTextSplitter(chunk_size=800)``,
    ``semchunk(chunk_size=256)``, …) is built by ``chunking.foreign``."""
    if is_foreign(spec):
        return ForeignChunker.from_spec(spec, overrides.get("tokenizer"))
    name, params = parse_spec(spec)
    if name not in _REGISTRY:
        raise ConfigError(f"unknown chunker {name!r}; known: {', '.join(available_chunkers())}")
    cls = _REGISTRY[name]
    allowed = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    params.update({k: v for k, v in overrides.items() if v is not None and k in allowed})
    unknown = set(params) - allowed
    if unknown:
        raise ConfigError(f"chunker {name!r} has no parameter(s) {sorted(unknown)}; it takes {sorted(allowed)}")
    check_types(f"chunker {name!r}", params, {f.name: f.type for f in dataclasses.fields(cls)})  # type: ignore[arg-type]
    try:
        return cls(**params)
    except TypeError as exc:
        raise ConfigError(f"cannot build {spec!r}: {exc}") from exc
