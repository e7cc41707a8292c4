"""Paper claims as data: every verdict row placed once, claims' tallies apart from ablations."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from grainlab.errors import ConfigError
from grainlab.studies.roles import (
    CLAIMS_DIR,
    OtherRows,
    PaperClaim,
    PaperClaims,
    claim_verdict,
    classify,
    headline,
    headline_verdict,
    paper_claims,
)

ROOT = Path(__file__).resolve().parents[2]
STUDIES = sorted(p.stem for p in CLAIMS_DIR.glob("*.toml"))


def _verdicts(study: str) -> pd.DataFrame:
    return pd.read_csv(ROOT / "results" / study / "full" / "verdicts.csv")


def test_every_study_with_verdicts_has_a_claim_file():
    with_verdicts = sorted(p.parent.parent.name for p in (ROOT / "results").glob("*/full/verdicts.csv"))
    assert with_verdicts == STUDIES and len(STUDIES) == 8


@pytest.mark.parametrize("study", STUDIES)
def test_every_committed_verdict_row_is_placed_once_and_every_claim_has_a_faithful_row(study):
    spec = paper_claims(study)
    labelled = classify(_verdicts(study), spec)  # strict: refuses an unplaced or doubly placed row
    assert set(labelled["role"]) <= {"claim", "ablation", "extension"}
    assert set(labelled.loc[labelled["role"] == "claim", "claim_id"]) == {c.id for c in spec.claims}
    for claim in spec.claims:
        assert claim.text and claim.source and claim.setting


def test_the_late_chunking_tally_counts_the_papers_claims_not_the_grid():
    """Issue 60: one question asked at 18 cells × 2 levels counted 36 times, the chunk-level rows the
    paper never scored, the narrower windows we chose: none is in the paper's tally now."""
    labelled = classify(_verdicts("late_chunking"), paper_claims("late_chunking"))
    faithful = labelled[labelled["role"] == "claim"]
    assert len(labelled) == 45 and len(faithful) == 6
    assert not faithful["family"].eq("long documents (chunk answer recall)").any()
    grid = faithful[faithful["family"].str.startswith("long documents")]
    assert set(grid["system"]) == {"late · 256 · w2048 · documents"}
    assert (labelled.loc[labelled["family"] == "long documents (chunk answer recall)", "role"] == "extension").all()


def test_bm25_rows_are_extensions_where_the_paper_has_no_bm25():
    for study, column in (("chunk_size", "retriever_label"), ("dense_x", "retriever_label"), ("longrag", "retriever")):
        labelled = classify(_verdicts(study), paper_claims(study))
        assert (labelled.loc[labelled[column] == "BM25", "role"] == "extension").all(), study


def _spec(faithful, others=()) -> PaperClaims:
    return PaperClaims("toy", "Toy et al.", (PaperClaim("c1", "a beats b", "abstract", "s", "1 vs 0", faithful),),
                       tuple(others))


def test_an_unplaced_or_doubly_placed_row_is_refused_or_labelled():
    rows = pd.DataFrame({"claim": ["a beats b", "a beats b"], "system": ["a", "a2"], "baseline": ["b", "b"],
                         "verdict": ["reproduced", "inconclusive"], "ours": ["+1", "+0"], "p_holm": [0.01, 0.5]})
    spec = _spec(({"system": "a"},))
    with pytest.raises(ConfigError, match="row 1 .*no selector names it"):
        classify(rows, spec)
    loose = classify(rows, spec, strict=False)
    assert list(loose["role"]) == ["claim", "unplaced"]
    double = _spec(({"system": "a.*"},), [OtherRows("ablation", "variants", ({"system": "a2"},))])
    with pytest.raises(ConfigError, match="2 selectors name it"):
        classify(rows, double)
    placed = classify(rows, _spec(({"system": "a"},), [OtherRows("ablation", "a variant", ({"system": "a2"},))]))
    assert list(placed["role"]) == ["claim", "ablation"] and placed["role_reason"][1] == "a variant"
    verdict, reason = headline(rows, _spec(({"system": "a"},), [OtherRows("ablation", "v", ({"system": "a2"},))]))
    assert verdict == "reproduced"  # the inconclusive ablation does not count
    assert reason.startswith("1 of 1 claims reproduced: c1 reproduced (+1, Holm p 0.01)") and "1 ablation rows" in reason


@pytest.mark.parametrize("verdicts, expected", [
    (["reproduced", "reproduced"], "reproduced"),
    (["reproduced", "inconclusive"], "partly reproduced"),
    (["reproduced", "not reproduced", "inconclusive"], "mixed"),
    (["not reproduced", "inconclusive"], "not reproduced"),
    (["inconclusive", "untestable (clusters)"], "inconclusive"),
    (["untestable (clusters)", "untestable (floor)"], "untestable"),
])
def test_a_claims_verdict_from_its_rows(verdicts, expected):
    assert claim_verdict(pd.DataFrame({"verdict": verdicts})) == expected


@pytest.mark.parametrize("claims, expected", [
    (["reproduced", "reproduced"], "reproduced"),
    (["reproduced", "inconclusive"], "partly reproduced"),
    (["partly reproduced", "not reproduced"], "mixed"),
    (["mixed"], "mixed"),
    (["not reproduced", "inconclusive"], "not reproduced"),
    (["inconclusive", "untestable"], "inconclusive"),
])
def test_a_papers_headline_from_its_claims(claims, expected):
    assert headline_verdict(claims) == expected


def test_a_selector_matches_the_whole_value_and_reads_missing_values_as_empty():
    rows = pd.DataFrame({"claim": ["x", "x"], "system": ["late · 256", "late · 2560"], "part": ["scifact", None],
                         "verdict": ["reproduced", "reproduced"], "ours": ["+1", "+1"], "p_holm": [0.01, 0.01]})
    spec = _spec(({"system": "late · 256", "part": "scifact"},), [OtherRows("extension", "rest", ({"part": ""},))])
    assert list(classify(rows, spec)["role"]) == ["claim", "extension"]
