"""Raising a reader's token budget without paying again for the generations that never needed it.

Decoding is greedy and a generation's tokens do not depend on ``max_new_tokens`` until it is
reached, so a generation that *stopped on its own* (``new_tokens`` below the limit it ran under)
is exactly what the same reader would produce under any larger limit. :func:`seed_from_lower_limits`
looks each prompt up under the same reader identity with a smaller limit (:data:`LIMIT_LADDER`, or
the caller's), in the on-disk cache and the study's generation archive, and stores every such
natural stop under the current key; a generation that used its whole budget is never reused (it
may have been cut), so it is generated again. :func:`generate` seeds, then generates.
"""

from __future__ import annotations

from collections.abc import Sequence

from grainlab.cache import content_key
from grainlab.readers.archive import archive_from_environment
from grainlab.readers.base import Generation, Prompt, Reader

LIMIT_LADDER = (16, 32, 48, 64, 100, 128, 200, 256, 384, 512, 768, 1024)


def generation_key(reader: Reader, prompt: Prompt, grammar: str | None, max_new_tokens: int) -> str:
    """The reader's cache key for ``prompt`` as if it ran with ``max_new_tokens``."""
    identity = {**reader.identity, "max_new_tokens": max_new_tokens}
    return content_key(kind="generation", reader=identity, prompt=prompt, **({"grammar": grammar} if grammar else {}))


def seed_from_lower_limits(reader: Reader, prompts: Sequence[Prompt], grammar: str | None = None,
                           limits: Sequence[int] = LIMIT_LADDER) -> int:
    """Store under the reader's own key every generation found under a smaller limit that stopped
    before it; returns how many prompts were seeded (0 when all were cached or none was found)."""
    if "max_new_tokens" not in reader.identity:  # the limit is not in its keys: nothing to look up
        return 0
    if generation_key(reader, "probe", grammar, reader.max_new_tokens) != reader._key("probe", grammar):
        raise AssertionError("readers.limits derives keys differently from Reader._key: update generation_key")
    lower = sorted((limit for limit in set(limits) if limit < reader.max_new_tokens), reverse=True)
    archive = reader.archive if reader.archive is not None else archive_from_environment()
    cache = reader._cache
    seeded = 0
    for prompt in prompts if lower else ():
        key = reader._key(prompt, grammar)
        if cache.load_json("generations", key) is not None or (archive is not None and archive.get(key) is not None):
            continue
        for limit in lower:
            old = generation_key(reader, prompt, grammar, limit)
            hit = cache.load_json("generations", old)
            if hit is None and archive is not None:
                hit = archive.get(old)
            if hit is not None and int(hit.get("new_tokens", limit)) < limit:
                cache.save_json("generations", key, hit)
                if archive is not None:
                    archive.append(key, hit)
                seeded += 1
                break
    return seeded


def generate(reader: Reader, prompts: Sequence[Prompt], progress: bool = True, grammar: str | None = None,
             limits: Sequence[int] = LIMIT_LADDER) -> list[Generation]:
    """``reader.generate`` after :func:`seed_from_lower_limits`."""
    seed_from_lower_limits(reader, prompts, grammar, limits)
    return reader.generate(prompts, progress=progress, grammar=grammar)
