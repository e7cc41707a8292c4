"""Canonical configuration strings: ``name(key=value,...)`` ↔ (name, params).

Every chunker and retriever has one; it is the results column and a cache-key part.
"""

from __future__ import annotations

import re
from typing import Any

from grainlab.errors import ConfigError

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.S)


def format_value(value: Any) -> str:
    """Render a literal so that :func:`parse_value` gives it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if text != text.strip() or (any(ch in text for ch in ",()=") and not _is_nested_spec(text)):
        raise ConfigError(f"value {text!r} cannot appear in a spec string")
    return text


def _is_nested_spec(text: str) -> bool:
    """A value may itself be a spec (``index=hnsw(M=32,efSearch=64)``) when it parses as one."""
    try:
        parse_spec(text)
    except ConfigError:
        return False
    return "(" in text


def _split_top_level(inner: str, text: str) -> list[str]:
    """``inner`` split at the commas outside parentheses (nested specs stay whole)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            raise ConfigError(f"unbalanced parentheses in {text!r}")
        if ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    if depth != 0:
        raise ConfigError(f"unbalanced parentheses in {text!r}")
    return [*parts, inner[start:]]


def parse_value(text: str) -> Any:
    """Parse an int, float, bool or bare string literal."""
    text = text.strip()
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def format_spec(name: str, params: dict[str, Any]) -> str:
    """``format_spec("fixed_tokens", {"size": 64})`` → ``"fixed_tokens(size=64)"``."""
    if not params:
        return name
    inner = ",".join(f"{key}={format_value(value)}" for key, value in params.items())
    return f"{name}({inner})"


def parse_spec(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``name(k=v,...)`` into its name and parameter dict; a value may be a nested spec
    (``dense(model=m,index=hnsw(M=32))`` → ``{"model": "m", "index": "hnsw(M=32)"}``)."""
    match = _SPEC.match(text)
    if not match:
        raise ConfigError(f"not a spec string: {text!r}; expected e.g. 'fixed_tokens(size=256,overlap=0)'")
    name, inner = match.group(1), match.group(2)
    params: dict[str, Any] = {}
    if inner and inner.strip():
        for part in _split_top_level(inner, text):
            if "=" not in part:
                raise ConfigError(f"parameter {part.strip()!r} in {text!r} needs the form key=value")
            key, value = part.split("=", 1)
            key = key.strip()
            if key in params:
                raise ConfigError(f"parameter {key!r} is given twice in {text!r}")
            params[key] = parse_value(value)
    return name, params


_KINDS = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string"}


def check_types(owner: str, params: dict[str, Any], annotations: dict[str, str]) -> None:
    """Check each parameter against its dataclass annotation (``int``, ``float``, ``bool``, ``str``,
    optionally ``| None``); a wrong type is a :class:`ConfigError` naming the parameter, the type it
    wants and the value given (``size=1e3`` and ``size=true`` are not integers)."""
    for key, value in params.items():
        wanted = [t.strip() for t in str(annotations.get(key, "")).split("|")]
        if value is None and "None" in wanted:
            continue
        kinds = [t for t in wanted if t in _KINDS]
        if not kinds:
            continue
        ok = any(
            (kind == "int" and isinstance(value, int) and not isinstance(value, bool))
            or (kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool))
            or (kind == "bool" and isinstance(value, bool))
            or (kind == "str" and isinstance(value, str))
            for kind in kinds)
        if not ok:
            raise ConfigError(f"{owner}: parameter {key!r} must be {' or '.join(_KINDS[k] for k in kinds)}, "
                              f"got {value!r}")
