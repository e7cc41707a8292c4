"""``grainlab report``: one self-contained HTML page, and its Markdown twin, from the results.

Per study (in notebook order): the paper-vs-ours rows its notebook saved (``paper_vs_ours.csv`` /
``.json``), the deviations note, the run time, the manifest facts (commit, models and where they
came from), and the study's figures (``figures/<study>_*.png``, embedded as data URIs so the page
opens offline, alone). Nothing is computed here: every number comes from the saved tables.
"""

from __future__ import annotations

import base64
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path


from grainlab import settings
from grainlab.cache import atomic_write_text
from grainlab.reproduce import NOTEBOOKS
from grainlab.studies.report import Report

STYLE = """body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0 1rem}th,td{border:1px solid #ccc;padding:.2rem .4rem;
text-align:left;vertical-align:top}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee;margin:.5rem 0}
.facts{font-size:.85rem;color:#555}.note{background:#fafafa;border-left:3px solid #999;padding:.4rem .8rem}"""


@dataclass
class StudySection:
    """What the report shows of one study."""

    name: str
    notebook: str
    report: Report | None = None
    legacy: str = ""  # a paper_vs_ours.md written before the studies saved their rows
    runtime: dict | None = None
    manifest: dict | None = None
    figures: list[Path] = field(default_factory=list)


def _json(path: Path) -> dict | None:
    return json.loads(path.read_text("utf-8")) if path.exists() else None


def _manifest(folder: Path) -> dict | None:
    """The study's manifest: its own, else the first of its experiments'."""
    direct = _json(folder / "manifest.json")
    if direct is not None:
        return direct
    nested = sorted(folder.glob("*/manifest.json"))
    return _json(nested[0]) if nested else None


def study_sections(profile: str = "full", results: Path | None = None, figures: Path | None = None) -> list[StudySection]:
    """Every study that has results for ``profile``, in notebook order."""
    results = results or settings.results_dir()
    figures = figures or (settings.figures_dir() if profile == "full" else settings.figures_dir() / profile)
    sections = []
    for name, notebook in NOTEBOOKS.items():
        folder = results / name / profile
        if not folder.is_dir():
            continue
        report = Report.load(folder) if (folder / "paper_vs_ours.json").exists() else None
        legacy = (folder / "paper_vs_ours.md").read_text("utf-8") if report is None and \
            (folder / "paper_vs_ours.md").exists() else ""
        sections.append(StudySection(name, notebook, report, legacy, _json(folder / "runtime.json"),
                                     _manifest(folder), sorted(figures.glob(f"{name}_*.png"))))
    return sections


def _facts(section: StudySection) -> list[str]:
    facts = []
    if section.runtime:
        facts.append(f"run time {section.runtime.get('seconds', 0):.0f} s, finished {section.runtime.get('finished', '?')}")
    if section.manifest:
        facts.append(f"commit {section.manifest.get('git_commit', 'unknown')}")
        models = section.manifest.get("models") or {}
        if isinstance(models, dict) and models:
            facts.append("models: " + ", ".join(f"{k} ({v.get('source', '?')}, {v.get('revision', '?')})"
                                                 if isinstance(v, dict) else f"{k} ({v})" for k, v in models.items()))
    return facts


def _image(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def build_html(sections: list[StudySection], title: str) -> str:
    """The whole report as one HTML document with no external reference."""
    parts = [f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts.append("<ul>" + "".join(f"<li><a href='#{s.name}'>{html.escape(s.notebook)}</a></li>" for s in sections) + "</ul>")
    for section in sections:
        parts.append(f"<h2 id='{section.name}'>{html.escape(section.notebook)}"
                     + (f": {html.escape(section.report.title)}" if section.report else "") + "</h2>")
        facts = _facts(section)
        if facts:
            parts.append("<p class='facts'>" + " · ".join(html.escape(f) for f in facts) + "</p>")
        if section.report is not None:
            parts.append(section.report.rows.to_html(index=False, na_rep="—", float_format=lambda v: f"{v:.3f}",
                                                     border=0, escape=True))
            if section.report.note:
                parts.append(f"<p class='note'>{html.escape(section.report.note)}</p>")
        elif section.legacy:
            parts.append(f"<pre>{html.escape(section.legacy)}</pre>")
        else:
            parts.append("<p>No paper-vs-ours table saved for this profile yet.</p>")
        parts += [_image(path) for path in section.figures]
    parts.append("</body></html>")
    return "\n".join(parts)


def build_markdown(sections: list[StudySection], title: str, figures_relative_to: Path | None = None) -> str:
    """The same content as Markdown, figures linked (relative to ``figures_relative_to``)."""
    lines = [f"# {title}", ""]
    for section in sections:
        facts = _facts(section)
        lines += [f"## {section.notebook}", ""]
        lines += [f"*{fact}*  " for fact in facts] + ([""] if facts else [])
        lines.append(section.report.markdown().strip() if section.report else
                     section.legacy.strip() or "No paper-vs-ours table saved yet.")
        for path in section.figures:
            shown = os.path.relpath(path, figures_relative_to) if figures_relative_to else str(path)
            lines += ["", f"![{path.stem}]({Path(shown).as_posix()})"]
        lines.append("")
    return "\n".join(lines)


def write_report(profile: str = "full", out: Path | None = None, results: Path | None = None,
                 figures: Path | None = None) -> tuple[Path, Path]:
    """``results/report[-<profile>].html`` and ``.md``; returns both paths."""
    results = results or settings.results_dir()
    out = out or results / ("report.html" if profile == "full" else f"report-{profile}.html")
    sections = study_sections(profile, results, figures)
    title = f"grainlab: retrieval granularity, paper vs ours ({profile} profile)"
    atomic_write_text(out, build_html(sections, title))
    markdown = out.with_suffix(".md")
    atomic_write_text(markdown, build_markdown(sections, title, figures_relative_to=markdown.parent))
    return out, markdown
