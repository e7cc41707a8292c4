"""Human labels for measures: what a report, a table header or a figure shows a person instead of
a measure's spec string (``SpanRecall(count=sum,unit=char,match=any_copy)@5`` → ``span recall@5
(summed over chunks, characters, any copy)``). Stored tables keep the spec strings."""

from __future__ import annotations

import re

from grainlab.errors import ConfigError
from grainlab.evaluation.registry import parse_grainlab_measure

NAMES = {
    "AnswerRecall": "answer recall", "SpanCovered": "answer covered", "SpanHit": "hit", "SpanRR": "MRR",
    "CitationMatch": "citation match", "SpanRecall": "span recall", "SpanPrecision": "span precision",
    "SpanIoU": "span IoU", "SpanPrecisionOmega": "span precision Ω", "Tokens": "tokens read",
}
PARAMETER_WORDS = {("count", "sum"): "summed over chunks", ("unit", "char"): "characters",
                   ("match", "any_copy"): "any copy"}
"""Non-default parameter values in words (a default value says nothing and is left out)."""
IR_MEASURES = {"nDCG": "nDCG", "R": "recall", "RR": "MRR", "P": "precision", "AP": "MAP", "Judged": "judged"}
_IR_NAME = re.compile(r"^(\w+)@(\d+)$")


def measure_label(name: str) -> str:
    """A measure's name as a reader writes it; a name that is not a measure comes back unchanged."""
    try:
        parsed = parse_grainlab_measure(name)
    except ConfigError:
        parsed = None
    if parsed is not None:
        base = NAMES.get(parsed.measure.name, parsed.measure.name)
        label = f"{base}@{parsed.k}" if parsed.k is not None else base
        words = [PARAMETER_WORDS[item] for item in parsed.params.items() if item in PARAMETER_WORDS]
        return label + (f" ({', '.join(words)})" if words else "")
    match = _IR_NAME.match(name.strip())
    if match and match.group(1) in IR_MEASURES:
        return f"{IR_MEASURES[match.group(1)]}@{match.group(2)}"
    return name


def is_measure(name: str) -> bool:
    """Whether ``name`` is a measure :func:`measure_label` renames."""
    return measure_label(name) != name or bool(_IR_NAME.match(name.strip()))
