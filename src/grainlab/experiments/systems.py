"""A system = chunker + retriever (+ unit→document aggregation), named canonically."""

from __future__ import annotations

from dataclasses import dataclass

from grainlab.chunking.base import get_chunker
from grainlab.errors import ConfigError
from grainlab.retrieval.aggregate import METHODS
from grainlab.spec import format_spec, parse_spec


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

    def __post_init__(self) -> None:
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
