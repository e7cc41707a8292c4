"""Baselines that take chunk size out of a comparison between chunking methods."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from grainlab.chunking import get_chunker
from grainlab.data.types import Dataset
from grainlab.experiments.chunk_cache import chunk_corpus


def size_matched_fixed(dataset: Dataset, chunkers: Mapping[str, str]) -> dict[str, str]:
    """For each chunker that is not fixed-size, a ``fixed_tokens`` spec whose size is that
    chunker's mean chunk length on ``dataset`` (rounded, at least 8 tokens), so a comparison
    with it cannot be won by being smaller or larger."""
    out = {}
    for label, spec in chunkers.items():
        if spec.startswith("fixed_tokens"):
            continue
        units = chunk_corpus(dataset, get_chunker(spec))
        size = max(8, int(round(float(np.mean([u.n_tokens for u in units])))))
        out[label] = f"fixed_tokens(size={size},overlap=0)"
    return out
