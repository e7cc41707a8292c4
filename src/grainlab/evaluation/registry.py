"""grainlab's own measures, registered once: a canonical name, what it computes, where it comes
from. IR measures (nDCG, R, P, AP, RR, …) are ir-measures' own and are parsed by it; the names
here are the ones grainlab computes itself, written ``Name@k`` in every results table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grainlab.errors import ConfigError


@dataclass(frozen=True)
class Measure:
    """A measure grainlab computes; ``measure@k`` is its canonical column value."""

    name: str
    description: str
    source: str
    higher_is_better: bool = True
    scores: str = "ranking"
    """What one value scores: a query's ``ranking`` (by ``run_experiment``), a reader's
    ``generation`` (a column of the reader tables) or a ``chunking`` of the corpus (a column of the
    experiment's systems table)."""

    def at(self, k: int) -> str:
        """The canonical name at cutoff ``k``, e.g. ``AnswerRecall@5``."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"{self.name}: the cutoff must be a positive integer, got {k!r}")
        return f"{self.name}@{k}"

    def __matmul__(self, k: int) -> str:  # ANSWER_RECALL @ 5, as ir-measures writes nDCG@10
        return self.at(k)


ANSWER_RECALL = Measure(
    "AnswerRecall", "1 if a normalised gold answer occurs, as whole words, in one of the top-k units",
    "DPR's top-k retrieval accuracy (Karpukhin et al. 2020), as Bhat et al. 2025 and Dense X report it")
SPAN_COVERED = Measure(
    "SpanCovered", "1 if one of the top-k chunks holds a whole gold span", "grainlab (gold-span coverage)")
SPAN_RECALL = Measure(
    "SpanRecall", "share of gold-span tokens inside the top-k chunks",
    "Chroma's chunking evaluation (Smith & Troynikov 2024), token level")
SPAN_PRECISION = Measure(
    "SpanPrecision", "share of the top-k chunks' tokens inside a gold span",
    "Chroma's chunking evaluation (Smith & Troynikov 2024), token level")
SPAN_IOU = Measure(
    "SpanIoU", "gold-span tokens retrieved / (gold ∪ retrieved tokens)",
    "Chroma's chunking evaluation (Smith & Troynikov 2024), token level")
TOKENS = Measure(
    "Tokens", "tokens the reader would read from the top-k units (the cost of a granularity)", "grainlab",
    higher_is_better=False)

BOUNDARY_RETENTION = Measure(
    "BoundaryRetention", "share of gold answer spans that lie inside one chunk", "grainlab (chunking diagnostics)",
    scores="chunking")
DUPLICATION_RATE = Measure(
    "DuplicationRate", "tokens indexed beyond the corpus's own, over the corpus's tokens (overlap's cost)",
    "grainlab (chunking diagnostics)", higher_is_better=False, scores="chunking")
EXACT_MATCH = Measure(
    "EM", "SQuAD exact match of the prediction's first line with a gold answer (column ``em``)",
    "Rajpurkar et al. 2016 (SQuAD evaluation script), as Dense X and LongRAG report EM", scores="generation")
BEST_SUBSPAN_EM = Measure(
    "BestSubspanEM", "1 if a normalised gold answer occurs in the prediction (columns ``answer_in_prediction``, "
    "``correct``)", "Liu et al. 2024 (Lost in the Middle), best_subspan_em", scores="generation")

REGISTRY: dict[str, Measure] = {m.name: m for m in (ANSWER_RECALL, SPAN_COVERED, SPAN_RECALL, SPAN_PRECISION,
                                                    SPAN_IOU, TOKENS, BOUNDARY_RETENTION, DUPLICATION_RATE,
                                                    EXACT_MATCH, BEST_SUBSPAN_EM)}
_AT = re.compile(r"^([A-Za-z]+)@(\d+)$")


def parse_grainlab_measure(text: str) -> tuple[Measure, int] | None:
    """``"AnswerRecall@5"`` → (ANSWER_RECALL, 5); ``None`` for a name grainlab does not define
    (an ir-measures name, for instance)."""
    match = _AT.match(text.strip())
    if not match or match.group(1) not in REGISTRY:
        return None
    if REGISTRY[match.group(1)].scores != "ranking":
        raise ConfigError(f"{text!r}: {match.group(1)} scores a {REGISTRY[match.group(1)].scores}, not a ranking; "
                          "read it from the reader or systems table")
    k = int(match.group(2))
    if k < 1:
        raise ConfigError(f"measure {text!r}: the cutoff after '@' must be a positive integer")
    return REGISTRY[match.group(1)], k
