"""Every result number a study page prints comes from that study's committed tables (issue 60, item 8).

The study pages in ``docs/studies/`` are prose around numbers. Their generated blocks are checked
against the tables by ``tests/test_readme.py``; this test reads the rest: each number printed with
three or four decimals (an effect, a mean, an interval end, a p-value) must be, at the precision
printed, a value of one of the study's committed tables, or a number the papers' anchors or the
claim files state. A re-run that moves a number, or a number typed wrong, fails here."""

import re
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"(?<![\w.])[+\-−]?\d?\.(\d{3,4})(?![\d])")
GENERATED = re.compile(r"<!-- [\w-]+:begin.*?<!-- [\w-]+:end -->", re.S)
TABLES = {"your_documents": ["your_documents", "japanese"]}
"""Study pages whose numbers live in more than the study's own results folder."""
PAPER_SOURCES = [ROOT.parent / "shared" / "ANCHORS.md", *sorted((ROOT / "src/grainlab/studies").glob("*.py")),
                 *sorted((ROOT / "src/grainlab/studies/paper_claims").glob("*.toml"))]


def _value(text: str) -> float:
    return float(text.replace("−", "-"))


@cache
def table_values(study: str) -> frozenset[float]:
    """Every number in the study's committed tables (per-query tables aside), rounded to 3 and 4
    decimals, with both signs."""
    values: set[float] = set()
    for folder in TABLES.get(study, [study]):
        for path in (ROOT / "results" / folder / "full").glob("**/*.csv"):
            if "per_query" in path.parts or path.name == "per_query.csv" or path.stat().st_size > 5_000_000:
                continue
            try:
                table = pd.read_csv(path)
            except (ValueError, pd.errors.ParserError):
                continue
            for column in table.columns:
                for x in pd.to_numeric(table[column], errors="coerce").dropna():
                    for digits in (3, 4):
                        values |= {round(float(x), digits), round(-float(x), digits)}
    return frozenset(values)


@cache
def paper_values() -> frozenset[float]:
    """Numbers the papers' anchors, the claim files and the study modules (paper constants) state."""
    found = set()
    for path in PAPER_SOURCES:
        if path.exists():
            found |= {round(_value(m.group()), len(m.group(1))) for m in NUMBER.finditer(path.read_text("utf-8"))}
    return frozenset(found)


NOT_RESULTS = {  # numbers a page prints that are no committed table's value, each with why
    "chunk_size": {"0.7086": "bge-small's int8 graph on SciFact, before the float32 re-run (history)"},
    "hybrid_rerank": {"0.7086": "bge-small's int8 graph on SciFact, before the float32 re-run (history)",
                      "+0.0004": "how far the cross-encoder's float32 graph moved the reranked rows (history)",
                      "0.0496": "a Holm p before the float32 re-run (history)"},
    "late_chunking": {"0.0078": "2/2⁸, the smallest p 8 clusters allow (arithmetic)",
                      "0.0625": "that p after Holm over 8 claims (arithmetic)",
                      "0.0013": "how far the torch runtime moved the SciFact numbers (history)",
                      "0.9999": "the two runtimes' cosine agreement (tests/models/test_nomic_torch.py)"},
}
PAGES = sorted((ROOT / "docs" / "studies").glob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_printed_result_is_a_committed_tables_value(page):
    if not (ROOT / "results").is_dir():
        pytest.skip("no committed results here")
    prose = GENERATED.sub("", page.read_text("utf-8"))
    known = table_values(page.stem) | paper_values()
    allowed = NOT_RESULTS.get(page.stem, {})
    unknown = [m.group() for m in NUMBER.finditer(prose)
               if round(_value(m.group()), len(m.group(1))) not in known and m.group() not in allowed]
    assert not unknown, (f"{page.relative_to(ROOT)} prints {unknown} that no committed table of the study holds "
                         f"(at the precision printed): correct the text, or generate it from the table")
