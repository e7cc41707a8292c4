"""A system = chunker + retriever (+ unit→document aggregation), named canonically."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from grainlab.chunking.base import get_chunker
from grainlab.errors import ConfigError
from grainlab.retrieval.aggregate import METHODS
from grainlab.spec import format_spec, parse_spec

RESERVED_COLUMNS = frozenset({"dataset", "system", "retriever", "chunker", "aggregate", "qid", "measure", "value",
                              "mean", "count"})


def canonical(spec: str) -> str:
    """Re-render a spec string in canonical form (keys as given, literals normalised)."""
    name, params = parse_spec(spec)
    return format_spec(name, params)


@dataclass(frozen=True)
class System:
    """What one row group of a results table measures."""

    retriever: str
    chunker: str = "none"
    aggregate: str | None = "max"
    label: str | None = None
    tags: Mapping[str, str] | tuple[tuple[str, str], ...] = ()
    """Typed facts about the system that become result columns as they are (``unit="proposition"``,
    ``granularity="documents"``): filter and group on them instead of parsing labels. They
    describe a system, they do not change what it computes, so they are not part of its key."""

    def __post_init__(self) -> None:
        tags = dict(self.tags)
        clash = sorted(set(tags) & RESERVED_COLUMNS)
        if clash or not all(isinstance(k, str) and k.isidentifier() for k in tags):
            raise ConfigError(f"tag names must be identifiers other than {sorted(RESERVED_COLUMNS)}, got {sorted(tags)}")
        if not all(isinstance(v, str | int | float | bool) for v in tags.values()):
            raise ConfigError(f"tag values must be str, int, float or bool, got {tags}")
        object.__setattr__(self, "tags", tuple(sorted(tags.items())))
        object.__setattr__(self, "chunker", get_chunker(self.chunker).spec)
        object.__setattr__(self, "retriever", canonical(self.retriever))
        if self.aggregate is not None and self.aggregate not in METHODS:
            raise ConfigError(f"aggregate must be one of {METHODS} or None, got {self.aggregate!r}")

    @property
    def name(self) -> str:
        """``retriever|chunker|aggregate`` — the results column and a cache-key part."""
        return f"{self.retriever}|{self.chunker}|{self.aggregate or 'units'}"

    @property
    def display(self) -> str:
        return self.label or self.name
