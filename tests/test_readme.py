"""The README is a front door and the docs point only at things that exist: figures, benchmark
scripts and links; their generated blocks are the ones the committed results generate."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text("utf-8")
PAGES = {path: path.read_text("utf-8") for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]}
ALL_TEXT = "\n".join(PAGES.values())
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_is_a_front_door():
    """Issue 56: what it is, the quick start, the papers' verdicts, compare, the package map and
    links, in at most 250 lines; the lab log lives in docs/."""
    assert len(README.splitlines()) <= 250
    for heading in ("## The papers, and what held", "## Quick start", "## Your own documents", "## The package",
                    "## Documentation"):
        assert heading in README


def test_every_figure_the_docs_name_exists():
    named = sorted(set(re.findall(r"figures/[\w./-]+?\.(?:png|pdf)", ALL_TEXT)))
    assert named, "the docs name no figure: this test would check nothing"
    missing = [name for name in named if not (ROOT / name).is_file()]
    assert not missing, f"the docs name figures that are not committed: {missing}"


def test_every_benchmark_script_the_docs_name_exists():
    named = sorted(set(re.findall(r"benchmarks/[\w.-]+\.py", ALL_TEXT)))
    assert named
    assert [n for n in named if not (ROOT / n).is_file()] == []


@pytest.mark.parametrize("page", sorted(PAGES), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    """A broken link fails: each relative Markdown link names a file (and, with ``#``, a heading
    of that file) that exists."""
    broken = []
    for target in LINK.findall(PAGES[page]):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and file.suffix == ".md":
            slugs = {re.sub(r"[^\w\- ]", "", h.strip("# ").lower()).replace(" ", "-")
                     for h in re.findall(r"^#+ .*$", file.read_text("utf-8"), re.M)}
            if anchor not in slugs:
                broken.append(target)
    assert broken == []


def test_the_generated_blocks_are_the_ones_the_committed_results_generate():
    from grainlab.publish import PAPERS_BEGIN, README_BEGIN, papers_block, readme_block

    assert PAPERS_BEGIN in README, "the README lost its generated papers table"
    assert papers_block("full", ROOT / "results") in README, \
        "README papers table differs from results/*/full/verdicts.csv: run `grainlab report --readme README.md docs/results.md`"
    results_page = PAGES[ROOT / "docs" / "results.md"]
    assert README_BEGIN in results_page, "docs/results.md lost its generated verdict block"
    assert readme_block("full", ROOT / "results") in results_page, \
        "docs/results.md verdicts differ from results/*/full/verdicts.csv: run `grainlab report --readme README.md docs/results.md`"


def test_the_run_times_are_the_run_records():
    """Issue 59: the docs time every profile from the run records, not by hand."""
    from grainlab.reproduce import RUN_TIMES_BEGIN, run_times_block

    profiles = PAGES[ROOT / "docs" / "profiles.md"]
    assert RUN_TIMES_BEGIN in profiles
    assert run_times_block(ROOT / "results") in profiles, \
        "docs/profiles.md run times differ from the run records: run `grainlab report --readme docs/profiles.md`"


def test_the_late_chunking_framing_findings_are_the_committed_tables():
    from grainlab.publish import FRAMING_BEGIN, framing_block

    page = PAGES[ROOT / "docs" / "studies" / "late_chunking.md"]
    assert FRAMING_BEGIN in page
    assert framing_block("full", ROOT / "results") in page, \
        "docs/studies/late_chunking.md differs from the framing tables: run `grainlab report --readme docs/studies/late_chunking.md`"


def test_the_semantic_size_matched_findings_are_the_committed_tables():
    """Issue 60, item 4: Qu et al.'s test against fixed chunks of each splitter's own mean length is
    written on the study page from the committed verdicts, not typed."""
    from grainlab.publish import SIZE_MATCHED_BEGIN, size_matched_block

    page = PAGES[ROOT / "docs" / "studies" / "semantic_chunking.md"]
    assert SIZE_MATCHED_BEGIN in page
    assert size_matched_block("full", ROOT / "results") in page, \
        "docs/studies/semantic_chunking.md differs from the verdicts: run `grainlab report --readme docs/studies/semantic_chunking.md`"


def test_the_best_splitter_of_each_library_is_the_committed_decision_tables():
    """Issue 58: each library's best configuration is named from the committed comparisons."""
    from grainlab.publish import LIBRARIES_BEGIN, libraries_block

    page = PAGES[ROOT / "docs" / "studies" / "your_documents.md"]
    assert LIBRARIES_BEGIN in page
    assert libraries_block("full", ROOT / "results") in page, \
        "docs/studies/your_documents.md differs from the decision tables: run `grainlab report --readme docs/studies/your_documents.md`"
