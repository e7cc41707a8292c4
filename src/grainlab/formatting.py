"""One formatter per kind of number, shared by every table a person reads (the report, the
README and docs blocks, ``compare``'s output): p-values, counts, shares, tokens, effects."""

from __future__ import annotations

import math
import re

P_COLUMN = re.compile(r"^(p|p \(holm\)|p_holm|p_ttest|p_randomization)(_holm)?$|^p_", re.I)
COUNT_COLUMN = re.compile(r"^(n|count|queries needed|queries_needed|clusters|clusters_needed|chunks|wins|ties|losses|questions)$"
                          r"|^n_", re.I)
TOKENS_COLUMN = re.compile(r"tokens", re.I)


def missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def p_value(p: float) -> str:
    """Two significant digits; below 0.001 as ``< 0.001``."""
    if missing(p):
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def count(n: float) -> str:
    """A whole number with thousands separators."""
    return "—" if missing(n) else f"{int(round(n)):,}"


def tokens(n: float) -> str:
    """Tokens: whole, with thousands separators."""
    return count(n)


def share(x: float, digits: int = 1) -> str:
    """A share of 1 as a percentage."""
    return "—" if missing(x) else f"{100 * x:.{digits}f}%"


def effect(estimate: float, low: float, high: float, digits: int = 3) -> str:
    """A signed difference with its interval: ``+0.012 [+0.006, +0.020]``."""
    if missing(estimate):
        return "—"
    return f"{estimate:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def cell(column: str, value: object, floatfmt: str = ".3g") -> str:
    """A table cell by its column's kind: p-values, counts and tokens by their formatter, booleans
    as yes/no, other numbers in ``floatfmt`` (never ``-0.000``), text as it is."""
    if missing(value):
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if P_COLUMN.search(column):
            return p_value(float(value))
        if COUNT_COLUMN.search(column) or TOKENS_COLUMN.search(column):
            return count(float(value))
        text = format(value, floatfmt)
        return text.lstrip("-") if re.fullmatch(r"-0(\.0*)?(e[+-]?0+)?", text) else text
    return str(value)
