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


AWAITING_REDRAW = re.search(r"<!-- figures awaiting redraw -->(.*?)<!-- /figures awaiting redraw -->", README, re.S)


def awaiting_redraw() -> set[str]:
    """The figures the README says were drawn by older plotting code, awaiting their notebook's run."""
    assert AWAITING_REDRAW, "the README lost its list of figures awaiting their redraw"
    return set(re.findall(r"figures/[\w./-]+?\.png", AWAITING_REDRAW.group(1)))


def test_every_stamped_figure_the_readme_names_was_drawn_by_the_current_plotting_code():
    """A figure stamped by an older ``grainlab.plots`` is stale: re-run its notebook, or say so in
    the README's list of figures awaiting their redraw. (Figures from before the stamps have none;
    ``grainlab report`` marks them.)"""
    from grainlab.plots import figure_stamp, plots_fingerprint

    named = sorted(set(re.findall(r"figures/[\w./-]+?\.png", README)) - awaiting_redraw())
    stale = [n for n in named if (ROOT / n).is_file() and figure_stamp(ROOT / n) not in (None, plots_fingerprint())]
    assert not stale, f"drawn by older plotting code, re-run their notebooks: {stale}"


def test_the_list_of_figures_awaiting_redraw_is_exact():
    """Every committed figure the older plotting code drew is listed, and no figure the current
    code drew (a redrawn figure leaves the list)."""
    from grainlab.plots import figure_stamp, plots_fingerprint

    committed = {f"figures/{png.name}" for png in (ROOT / "figures").glob("*.png")}
    older = {name for name in committed if figure_stamp(ROOT / name) != plots_fingerprint()}
    listed = awaiting_redraw()
    assert listed <= committed, f"listed but not committed: {sorted(listed - committed)}"
    assert older == listed, (f"drawn by older code, not listed: {sorted(older - listed)}; "
                             f"redrawn, still listed: {sorted(listed - older)}")


def test_every_benchmark_script_the_readme_names_exists():
    named = sorted(set(re.findall(r"benchmarks/[\w.-]+\.py", README)))
    assert named
    assert [n for n in named if not (ROOT / n).is_file()] == []


def test_the_readme_verdict_block_is_the_one_the_committed_results_generate():
    from grainlab.publish import README_BEGIN, readme_block

    assert README_BEGIN in README, "the README lost its generated verdict block"
    expected = readme_block("full", ROOT / "results")
    assert expected in README, "README verdicts differ from results/*/full/verdicts.csv: run `grainlab report --readme README.md`"
