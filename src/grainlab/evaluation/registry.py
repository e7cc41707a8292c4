"""grainlab's own measures, registered once: a canonical name, what it computes, where it comes
from. IR measures (nDCG, R, P, AP, RR, …) are ir-measures' own and are parsed by it; the names
here are the ones grainlab computes itself, written ``Name@k`` — or ``Name(param=value,…)@k``
when a parameter differs from its default, as ir-measures writes ``P(rel=2)@5`` — in every
results table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from grainlab.errors import ConfigError

SPAN_PARAMS = (("count", ("union", "sum")), ("unit", ("token", "char")), ("match", ("exact", "any_copy")))
"""The span family's conventions (first value = default), see ``evaluation.spans``: ``count`` —
each retrieved character once (``union``) or every chunk's full length (``sum``, Chroma's code);
``unit`` — tokens of the default tokenizer or characters; ``match`` — chunks at their own offsets
(``exact``) or at the first copy of their text (``any_copy``, Chroma's code, see ``spans.first_copy``)."""


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

    params: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Parameters as ``(name, allowed values)``; the first value is the default."""
    cutoff: bool = True
    """Whether the measure reads the top ``k`` (``Name@k``) or the whole chunking (``Name``)."""
    version: str = "1"
    """Bump when the same ranking would score differently (a part of every results key using it)."""

    def at(self, k: int | None = None, **params: str) -> str:
        """The canonical name, e.g. ``AnswerRecall@5`` or ``SpanIoU(count=sum,unit=char)@5``
        (parameters in declared order, defaults left out)."""
        if self.cutoff and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ConfigError(f"{self.name}: the cutoff must be a positive integer, got {k!r}")
        if not self.cutoff and k is not None:
            raise ConfigError(f"{self.name} reads the whole chunking: it takes no cutoff")
        values = self.resolve(params)
        shown = [f"{name}={values[name]}" for name, allowed in self.params if values[name] != allowed[0]]
        return self.name + (f"({','.join(shown)})" if shown else "") + (f"@{k}" if self.cutoff else "")

    def resolve(self, params: dict[str, str]) -> dict[str, str]:
        """Every parameter's value (defaults filled in); a clear error for an unknown one."""
        allowed = dict(self.params)
        for name, value in params.items():
            if name not in allowed:
                raise ConfigError(f"{self.name} has no parameter {name!r}; it takes {sorted(allowed) or 'none'}")
            if value not in allowed[name]:
                raise ConfigError(f"{self.name}: {name} must be one of {allowed[name]}, got {value!r}")
        return {name: params.get(name, values[0]) for name, values in self.params}

    def __matmul__(self, k: int) -> str:  # ANSWER_RECALL @ 5, as ir-measures writes nDCG@10
        return self.at(k)


class ParsedMeasure(NamedTuple):
    """A grainlab measure name read back: the measure, its cutoff (``None`` without one) and
    every parameter's value."""

    measure: Measure
    k: int | None
    params: dict[str, str]

    @property
    def name(self) -> str:
        return self.measure.at(self.k, **self.params)


ANSWER_RECALL = Measure(
    "AnswerRecall", "1 if a normalised gold answer occurs, as whole words, in one of the top-k units",
    "DPR's top-k retrieval accuracy (Karpukhin et al. 2020), as Bhat et al. 2025 and Dense X report it")
SPAN_COVERED = Measure(
    "SpanCovered", "1 if one of the top-k chunks holds a whole gold span", "grainlab (gold-span coverage)",
    params=(SPAN_PARAMS[2],))
SPAN_HIT = Measure(
    "SpanHit", "1 if one of the top-k units overlaps a gold span (the evidence is at least partly retrieved)",
    "grainlab (your-documents decision table: Hit@k)", params=(SPAN_PARAMS[2],))
SPAN_RR = Measure(
    "SpanRR", "1 / rank of the first top-k unit overlapping a gold span, 0 if none (MRR@k over questions)",
    "grainlab (your-documents decision table: MRR@k)", params=(SPAN_PARAMS[2],))
CITATION_MATCH = Measure(
    "CitationMatch", "share of the top-k units (shown as citations) that overlap a gold span",
    "grainlab (your-documents decision table: citation match)", params=(SPAN_PARAMS[2],))
SPAN_RECALL = Measure(
    "SpanRecall", "share of the gold spans covered by the top-k chunks",
    "Chroma's chunking evaluation (Smith & Troynikov 2024)", params=SPAN_PARAMS)
SPAN_PRECISION = Measure(
    "SpanPrecision", "share of the top-k chunks inside a gold span",
    "Chroma's chunking evaluation (Smith & Troynikov 2024)", params=SPAN_PARAMS)
SPAN_IOU = Measure(
    "SpanIoU", "gold covered by the top-k chunks / (gold ∪ retrieved), or / (Σ retrieved + gold left) with count=sum",
    "Chroma's chunking evaluation (Smith & Troynikov 2024)", params=SPAN_PARAMS)
SPAN_PRECISION_OMEGA = Measure(
    "SpanPrecisionOmega", "precision with every chunk that touches a gold span retrieved and nothing else "
    "(the best precision the chunking allows)", "Chroma's chunking evaluation (Smith & Troynikov 2024), PrecisionΩ",
    params=SPAN_PARAMS, cutoff=False)
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

REGISTRY: dict[str, Measure] = {m.name: m for m in (ANSWER_RECALL, SPAN_COVERED, SPAN_HIT, SPAN_RR, CITATION_MATCH,
                                                    SPAN_RECALL, SPAN_PRECISION,
                                                    SPAN_IOU, SPAN_PRECISION_OMEGA, TOKENS, BOUNDARY_RETENTION, DUPLICATION_RATE,
                                                    EXACT_MATCH, BEST_SUBSPAN_EM)}
_NAME = re.compile(r"^([A-Za-z]+)(?:\(([^()]*)\))?(?:@(-?\d+))?$")


def parse_grainlab_measure(text: str) -> ParsedMeasure | None:
    """``"AnswerRecall@5"`` → (ANSWER_RECALL, 5, {}); ``"SpanIoU(count=sum)@5"`` → (SPAN_IOU, 5,
    {count: sum, unit: token, match: exact}); ``None`` for a name grainlab does not define (an
    ir-measures name, for instance)."""
    match = _NAME.match(text.strip())
    if not match or match.group(1) not in REGISTRY:
        return None
    measure = REGISTRY[match.group(1)]
    if measure.scores != "ranking":
        raise ConfigError(f"{text!r}: {measure.name} scores a {measure.scores}, not a ranking; "
                          "read it from the reader or systems table")
    k = int(match.group(3)) if match.group(3) is not None else None
    if measure.cutoff and (k is None or k < 1):
        raise ConfigError(f"measure {text!r}: the cutoff after '@' must be a positive integer")
    params = {}
    for part in filter(None, (match.group(2) or "").split(",")):
        name, _, value = part.partition("=")
        params[name.strip()] = value.strip()
    measure.at(k, **params)  # validates the parameters and the cutoff
    return ParsedMeasure(measure, k, measure.resolve(params))
