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

COLUMNS = ("claim", "paper", "ours")  # every report has these, then its own columns


@dataclass
class Report:
    """A study's comparison with its paper: a title, the rows, and the deviations that matter."""

    title: str
    rows: pd.DataFrame
    note: str = ""
    floatfmt: str = ".3f"

    def __post_init__(self) -> None:
        missing = [c for c in COLUMNS if c not in self.rows.columns]
        if missing:
            raise ConfigError(f"report {self.title!r} lacks the columns {missing}")

    def markdown(self, floatfmt: str | None = None) -> str:
        text = f"### {self.title}\n\n{markdown_table(self.rows, floatfmt or self.floatfmt)}"
        return text + (f"\n\n{self.note}" if self.note else "") + "\n"

    def save(self, folder: Path) -> Path:
        """``paper_vs_ours.csv`` (the rows), ``paper_vs_ours.json`` (title, note) and the rendered ``.md``."""
        atomic_write_text(folder / "paper_vs_ours.csv", self.rows.to_csv(index=False))
        atomic_write_text(folder / "paper_vs_ours.json", json.dumps({"title": self.title, "note": self.note, "floatfmt": self.floatfmt}, indent=1))
        atomic_write_text(folder / "paper_vs_ours.md", self.markdown())
        return folder / "paper_vs_ours.csv"

    @classmethod
    def load(cls, folder: Path) -> Report:
        meta = json.loads((folder / "paper_vs_ours.json").read_text("utf-8"))
        return cls(meta["title"], pd.read_csv(folder / "paper_vs_ours.csv"), meta.get("note", ""),
                   meta.get("floatfmt", ".3f"))

    @classmethod
    def concat(cls, title: str, parts: list[Report], note: str = "") -> Report:
        """Several reports of one notebook as one (rows stacked, a ``part`` column naming each)."""
        rows = pd.concat([p.rows.assign(part=p.title) for p in parts], ignore_index=True)
        return cls(title, rows, note or " ".join(p.note for p in parts if p.note))
