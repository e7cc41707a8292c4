"""The README points only at things that exist: figures and benchmark files it names are committed."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text("utf-8")


def test_every_figure_the_readme_names_exists():
    named = sorted(set(re.findall(r"figures/[\w./-]+?\.(?:png|pdf)", README)))
    assert named, "the README names no figure: this test would check nothing"
    missing = [name for name in named if not (ROOT / name).is_file()]
    assert not missing, f"the README names figures that are not committed: {missing}"


def test_every_benchmark_script_the_readme_names_exists():
    named = sorted(set(re.findall(r"benchmarks/[\w.-]+\.py", README)))
    assert named
    assert [n for n in named if not (ROOT / n).is_file()] == []


def test_the_readme_verdict_block_is_the_one_the_committed_results_generate():
    from grainlab.publish import README_BEGIN, readme_block

    assert README_BEGIN in README, "the README lost its generated verdict block"
    expected = readme_block("full", ROOT / "results")
    assert expected in README, "README verdicts differ from results/*/full/verdicts.csv: run `grainlab report --readme README.md`"
