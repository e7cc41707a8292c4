"""Paper-vs-ours rows: every study's ``report()`` returns them, notebooks save them, the summary
renders them (``grainlab reproduce`` → ``results/summary.md``). No Markdown is assembled by hand."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from grainlab.cache import atomic_write_text
from grainlab.errors import ConfigError
from grainlab.experiments.tables import markdown_table
from grainlab.studies.claims import where_columns

COLUMNS = ("claim", "paper", "ours")  # every report has these, then its own columns
VERDICT_SHOWN = ("claim", "paper", "system", "baseline", "measure", "ours", "p_holm", "verdict", "queries_needed",
                 "paper_effect_excluded", "deviation")


@dataclass
class Report:
    """A study's comparison with its paper: a title, the rows, and the deviations that matter."""

    title: str
    rows: pd.DataFrame
    note: str = ""
    floatfmt: str = ".3f"
    verdicts: pd.DataFrame | None = None  # ``claims.verdict_table`` rows: each claim tested

    def __post_init__(self) -> None:
        missing = [c for c in COLUMNS if c not in self.rows.columns]
        if missing:
            raise ConfigError(f"report {self.title!r} lacks the columns {missing}")

    def verdict_shown(self) -> pd.DataFrame | None:
        """The tested claims as shown: claim, paper, the claim's filters, arms, measure, our effect
        [95% CI] and n, Holm p, verdict, queries needed (when inconclusive), deviation."""
        if self.verdicts is None or self.verdicts.empty:
            return None
        where = where_columns(self.verdicts)
        columns = [*VERDICT_SHOWN[:2], *where, *VERDICT_SHOWN[2:]]
        shown = self.verdicts[[c for c in columns if c in self.verdicts.columns]].copy()
        shown["queries_needed"] = shown["queries_needed"].map(lambda v: "" if pd.isna(v) else f"{int(v):,}")
        return shown

    def holm_family(self) -> str:
        """The one Holm family each claim's p is corrected in, as the verdict table's header says it:
        the study's testable claims, or — with a ``family`` column — each named family's."""
        if self.verdicts is None or "family" not in self.verdicts.columns:
            return "Holm over this study's testable claims"
        families = list(dict.fromkeys(self.verdicts["family"].dropna().astype(str)))
        return "Holm within each family of testable claims (" + ", ".join(families) + ")"

    def verdict_markdown(self) -> str:
        shown = self.verdict_shown()
        return "" if shown is None else markdown_table(shown, ".3g")

    def markdown(self, floatfmt: str | None = None) -> str:
        text = f"### {self.title}\n\n"
        verdicts = self.verdict_markdown()
        if verdicts:
            text += f"Claims tested (paired randomization test, {self.holm_family()}):\n\n{verdicts}\n\n"
        text += markdown_table(self.rows, floatfmt or self.floatfmt)
        return text + (f"\n\n{self.note}" if self.note else "") + "\n"

    def save(self, folder: Path) -> Path:
        """``paper_vs_ours.csv`` (the rows), ``paper_vs_ours.json`` (title, note) and the rendered ``.md``."""
        atomic_write_text(folder / "paper_vs_ours.csv", self.rows.to_csv(index=False))
        atomic_write_text(folder / "paper_vs_ours.json", json.dumps({"title": self.title, "note": self.note, "floatfmt": self.floatfmt}, indent=1))
        if self.verdicts is not None:
            atomic_write_text(folder / "verdicts.csv", self.verdicts.to_csv(index=False))
        else:
            (folder / "verdicts.csv").unlink(missing_ok=True)  # never leave an older run's verdicts beside new rows
        atomic_write_text(folder / "paper_vs_ours.md", self.markdown())
        return folder / "paper_vs_ours.csv"

    @classmethod
    def load(cls, folder: Path) -> Report:
        meta = json.loads((folder / "paper_vs_ours.json").read_text("utf-8"))
        verdicts = pd.read_csv(folder / "verdicts.csv") if (folder / "verdicts.csv").exists() else None
        return cls(meta["title"], pd.read_csv(folder / "paper_vs_ours.csv"), meta.get("note", ""),
                   meta.get("floatfmt", ".3f"), verdicts)

    @classmethod
    def concat(cls, title: str, parts: list[Report], note: str = "") -> Report:
        """Several reports of one notebook as one (rows stacked, a ``part`` column naming each)."""
        rows = pd.concat([p.rows.assign(part=p.title) for p in parts], ignore_index=True)
        tested = [p.verdicts for p in parts if p.verdicts is not None]
        return cls(title, rows, note or " ".join(p.note for p in parts if p.note),
                   verdicts=pd.concat(tested, ignore_index=True) if tested else None)
