"""Which verdict rows test a paper's claim, and which are our ablations and extensions.

Each paper's claims are data, one TOML file per study in ``studies/paper_claims/``: every claim
with the paper's words, source, setting and numbers, and selectors naming the rows of the study's
verdict table that are its faithful test. Every other row is an *ablation* (the paper's question
in a setting the paper did not run: other sizes, windows, encoders, samples) or an *extension* (a
question the paper did not ask: a retriever or measure it never used), each with the reason.
Only claim rows count toward a paper's tally and its one headline verdict, whose sentence is
written from the rows.

A selector is ``{column = "regex"}``: a row matches when every named column's value (as text,
empty when missing) matches its regular expression in full.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.errors import ConfigError

CLAIMS_DIR = Path(__file__).with_name("paper_claims")
ROLES = ("claim", "ablation", "extension", "unplaced")
DECIDED = ("reproduced", "not reproduced")


@dataclass(frozen=True)
class PaperClaim:
    """One claim of a paper: its id, the paper's words, source, setting and numbers, and the
    selectors of the verdict rows that are its faithful test."""

    id: str
    text: str
    source: str
    setting: str
    paper_numbers: str
    faithful: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class OtherRows:
    """Rows that are not a paper claim's test: their role (ablation or extension) and why."""

    role: str
    why: str
    where: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class PaperClaims:
    """A study's paper, its claims and how its other verdict rows are labelled."""

    study: str
    paper: str
    claims: tuple[PaperClaim, ...]
    others: tuple[OtherRows, ...]


def _selectors(value: Any, where: str) -> tuple[dict[str, str], ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(i, dict) and i for i in items):
        raise ConfigError(f"{where}: a selector is a table of column = regex (or a list of them)")
    return tuple({str(k): str(v) for k, v in item.items()} for item in items)


@cache
def paper_claims(study: str) -> PaperClaims | None:
    """The claim file of ``study`` (``None`` for a study without one)."""
    path = CLAIMS_DIR / f"{study}.toml"
    if not path.exists():
        return None
    data = tomllib.loads(path.read_text("utf-8"))
    claims = tuple(PaperClaim(c["id"], c["text"], c["source"], c["setting"], c.get("paper_numbers", ""),
                              _selectors(c["faithful"], f"{path.name}: claim {c['id']}"))
                   for c in data.get("claim", []))
    others = tuple(OtherRows(role, o["why"], _selectors(o["where"], f"{path.name}: {role} {o['why']!r}"))
                   for role in ("ablation", "extension") for o in data.get(role, []))
    if len({c.id for c in claims}) != len(claims):
        raise ConfigError(f"{path.name}: two claims share an id")
    return PaperClaims(study, data["paper"], claims, others)


def _matches(row: pd.Series, selectors: tuple[dict[str, str], ...]) -> bool:
    def text(column: str) -> str:
        value = row.get(column)
        return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)

    return any(all(re.fullmatch(pattern, text(column)) for column, pattern in selector.items())
               for selector in selectors)


def classify(verdicts: pd.DataFrame, spec: PaperClaims, strict: bool = True) -> pd.DataFrame:
    """``verdicts`` with ``role`` (claim / ablation / extension), ``claim_id`` (a claim row's) and
    ``role_reason``. A row that no selector names, or that two name, is refused (``strict``) or
    labelled ``unplaced`` with the reason: every row of a paper's study is placed once, and none
    counts toward the paper's tally by accident."""
    roles, ids, reasons, problems = [], [], [], []
    for index, row in verdicts.iterrows():
        found = [("claim", c.id, c.text) for c in spec.claims if _matches(row, c.faithful)]
        found += [(o.role, "", o.why) for o in spec.others if _matches(row, o.where)]
        if len(found) != 1:
            why = "no selector names it" if not found else f"{len(found)} selectors name it"
            problems.append(f"row {index} ({row.get('claim')}; {row.get('system')} vs {row.get('baseline')}): {why}")
            found = [("unplaced", "", f"{why} in studies/paper_claims/{spec.study}.toml")]
        role, claim_id, reason = found[0]
        roles.append(role)
        ids.append(claim_id)
        reasons.append(reason)
    if problems and strict:
        raise ConfigError(f"studies/paper_claims/{spec.study}.toml does not place every verdict row once: "
                          + "; ".join(problems[:5]))
    return verdicts.assign(role=roles, claim_id=ids, role_reason=reasons)


def claim_verdict(rows: pd.DataFrame) -> str:
    """One verdict for a claim from its faithful rows: theirs when they agree; ``mixed`` when some
    reproduce and some refute it; ``partly reproduced`` when some reproduce it and the rest decide
    nothing; ``not reproduced`` when some refute it and none reproduce it."""
    values = rows["verdict"].astype(str)
    values = set(values.where(~values.str.startswith("untestable"), "untestable"))
    if len(values) == 1:
        return values.pop()
    if {"reproduced", "not reproduced"} <= values:
        return "mixed"
    if "reproduced" in values:
        return "partly reproduced"
    if "not reproduced" in values:
        return "not reproduced"
    return "inconclusive"


def headline_verdict(verdicts: list[str]) -> str:
    """A paper's one verdict from its claims': reproduced (every claim), mixed (some claims
    reproduced and some refuted), partly reproduced (some reproduced, none refuted), not
    reproduced (some refuted, none reproduced) or inconclusive (nothing decided)."""
    if verdicts and all(v == "reproduced" for v in verdicts):
        return "reproduced"
    positive = any(v in ("reproduced", "partly reproduced", "mixed") for v in verdicts)
    negative = any(v in ("not reproduced", "mixed") for v in verdicts)
    if positive and negative:
        return "mixed"
    if positive:
        return "partly reproduced"
    return "not reproduced" if negative else "inconclusive"


def _rows_phrase(rows: pd.DataFrame) -> str:
    """What a claim's rows found, in a few words: one row's effect and Holm p, or the count per
    verdict over several settings."""
    if len(rows) == 1:
        row = rows.iloc[0]
        return f"{row['ours']}, Holm p {row['p_holm']:.2g}" if pd.notna(row.get("p_holm")) else str(row["ours"])
    counts = rows["verdict"].astype(str).value_counts()
    return f"{len(rows)} settings: " + ", ".join(f"{n} {v}" for v, n in counts.items())


def claim_table(verdicts: pd.DataFrame, spec: PaperClaims) -> pd.DataFrame:
    """One row per paper claim: id, the paper's words, source, paper numbers, the faithful rows'
    count, the claim's verdict and what the rows found."""
    return _claim_table(classify(verdicts, spec, strict=False), spec)


def _claim_table(labelled: pd.DataFrame, spec: PaperClaims) -> pd.DataFrame:
    rows = []
    for claim in spec.claims:
        own = labelled[labelled["claim_id"] == claim.id]
        rows.append({"claim": claim.id, "paper's claim": claim.text, "source": claim.source,
                     "paper": claim.paper_numbers, "settings": len(own),
                     "verdict": claim_verdict(own) if len(own) else "not tested",
                     "ours": _rows_phrase(own) if len(own) else ""})
    return pd.DataFrame(rows)


def headline(verdicts: pd.DataFrame, spec: PaperClaims) -> tuple[str, str]:
    """The paper's headline verdict and its reason in one sentence, written from the rows."""
    labelled = classify(verdicts, spec, strict=False)
    table = _claim_table(labelled, spec)
    verdict = headline_verdict([v for v in table["verdict"] if v != "not tested"])
    parts = [f"{row['claim']} {row['verdict']}" + (f" ({row['ours']})" if row["ours"] else "")
             for row in table.to_dict("records")]
    others = labelled["role"].value_counts()
    aside = ", ".join(f"{others[r]} {r} rows" for r in ("ablation", "extension", "unplaced") if r in others)
    reason = (f"{int((table['verdict'] == 'reproduced').sum())} of {len(table)} claims reproduced: "
              + "; ".join(parts) + (f" ({aside} kept out of the tally)" if aside else ""))
    return verdict, reason
