"""Rewrite the README's list of figures awaiting their redraw from the committed figures' stamps.

A figure stamped by older plotting code than ``grainlab.plots`` is listed: those whose PDFs still
embed Type 3 fonts (drawn before the page-width layout) apart from those that differ from the
current code only by its latest fixes. ``tests/test_readme.py`` checks the list is exact.
Run: ``.venv/bin/python scripts/awaiting_redraw.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

from grainlab.plots import figure_stamp, pdf_font_types, plots_fingerprint

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "<!-- figures awaiting redraw -->", "<!-- /figures awaiting redraw -->"
INTRO = """**Figures awaiting their redraw.** Figures are laid out for a paper's 7-inch text width (at most
four panels a row, one legend under the panels, titles and labels wrapped, one y label a row, a
log x axis where the values span ten times or more; `plots.PAGE_WIDTH`), their PDFs embed TrueType
(Type 42) fonts, and they draw what was tested: late chunking's sweep and long-document grid as
paired late − naive differences with their intervals, Lost in the Middle at the tested positions
with the paper's curves, closed-book and oracle lines, Chroma's recall and precision as points with
arrows from the report's numbers to ours, the papers' marks on the LongRAG and hybrid figures, the
overlap sweep on the tested answer recall, intervals over clusters where the verdicts use them. A
figure is drawn from its notebook's tables, so it takes this form when its notebook next runs its
full profile (each PNG and PDF is stamped with the plotting code that drew it; `grainlab report`
says which figure is older than the code)."""
OUTRO = """`scripts/awaiting_redraw.py` rewrites this list from the stamps; a test keeps it exact: every committed figure
drawn by older plotting code is named here, and none drawn by the current code."""


def stale_figures(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """The committed figures drawn by older plotting code: (before the page-width layout, later)."""
    current = plots_fingerprint()
    old, recent = [], []
    for png in sorted((root / "figures").glob("*.png")):
        if figure_stamp(png) == current:
            continue
        pdf = png.with_suffix(".pdf")
        name = f"`figures/{png.name}`"
        (old if pdf.is_file() and "/Type3" in pdf_font_types(pdf) else recent).append(name)
    return old, recent


def block(old: list[str], recent: list[str]) -> str:
    """The README block naming ``old`` (pre-layout) and ``recent`` (pre-fix) stale figures."""
    parts = [INTRO]
    if old:
        parts.append("Until then these committed figures are from before that layout — wider than the page, PDFs "
                     f"with Type 3 fonts: {', '.join(old)}.")
    if recent:
        parts.append("These are in that layout but drawn before the latest plotting fixes (log x axes, one y label "
                     f"a row, wrapped panel x labels, cluster intervals): {', '.join(recent)}.")
    if not old and not recent:
        parts.append("None is waiting: every committed figure was drawn by the current code.")
    return "\n".join([BEGIN, " ".join(parts) + " " + OUTRO, END])


def main() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"README.md has no {BEGIN} block")
    old, recent = stale_figures()
    readme.write_text(pattern.sub(lambda _: block(old, recent), text, count=1), encoding="utf-8")
    print("\n".join(old + recent) or "no figure awaits its redraw")


if __name__ == "__main__":
    main()
