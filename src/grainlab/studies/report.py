"""Paper-vs-ours rows: every study's ``report()`` returns them, notebooks save them, the summary
renders them (``grainlab reproduce`` → ``results/summary.md``). No Markdown is assembled by hand."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from grainlab.errors import ConfigError, MalformedData
from grainlab.evaluation.labels import measure_label
from grainlab.experiments.tables import markdown_table
from grainlab.files import atomic_write_text
from grainlab.studies.claims import where_columns

COLUMNS = ("claim", "paper", "ours")  # every report has these, then its own columns
SHARED_ONCE = ("paper", "deviation")
"""Columns shown once above or below a claim table when every row has the same value."""
HEADERS = {"p_holm": "p (Holm)", "queries_needed": "queries needed", "p": "p", "n": "n",
           "retriever_label": "retriever", "chunker_label": "chunker", "ci_low": "95% CI low",
           "ci_high": "95% CI high", "share_at_limit": "share at token limit", "design_effect": "design effect"}


def human_header(column: str) -> str:
    """A column name as a reader writes it: ``p (Holm)`` for ``p_holm``, a measure by its label
    (``grainlab.evaluation.labels``), spaces for underscores."""
    if column in HEADERS:
        return HEADERS[column]
    label = measure_label(column)
    return label if label != column else column.replace("_", " ")


def signed(value: object, digits: int = 3) -> str:
    """A difference with its sign and a fixed number of decimals (one scale per column)."""
    return "—" if value is None or pd.isna(value) else f"{float(value):+.{digits}f}"


def effect_cell(row: pd.Series) -> str:
    """Our effect and its 95% interval on one scale: ``+0.125 [+0.055, +0.195]``."""
    if pd.isna(row.get("effect")):
        return str(row.get("ours", "—"))
    return f"{signed(row['effect'])} [{signed(row['ci_low'])}, {signed(row['ci_high'])}]"


def paper_effect_cell(row: pd.Series) -> str:
    """The paper's effect on our measure's scale, and whether our interval rules it out."""
    effect = row.get("paper_effect")
    if effect is None or pd.isna(effect):
        return "—"
    outside = row.get("paper_effect_excluded")
    return signed(effect) + (" (outside our CI)" if outside is True or str(outside) == "True" else "")


def count_cell(value: object) -> str:
    return "" if value is None or pd.isna(value) else f"{int(value):,}"


def _with_where(row: pd.Series, where: list[str]) -> str:
    """The claim, with the filters that place it (a set, a reader) in parentheses when its text
    does not already name them."""
    claim = str(row["claim"])
    shown = [str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
             for c in where if pd.notna(v := row.get(c)) and str(v)]
    extra = [v for v in shown if not re.search(rf"(?<!\w){re.escape(v)}(?!\w)", claim)]
    return f"{claim} ({', '.join(extra)})" if extra else claim


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
        """The tested claims as a reader sees them, narrow enough for a page column: the claim
        with its filters, the arms, the measure, the paper's effect, ours [95% CI], n, p (Holm),
        verdict, queries needed (when inconclusive); the paper and deviation strings are columns
        only where they differ between rows (:meth:`shared_once` gives them otherwise)."""
        if self.verdicts is None or self.verdicts.empty:
            return None
        table = self.verdicts
        where = [c for c in where_columns(table) if c != "family"]
        shown = pd.DataFrame({"claim": [_with_where(row, where) for _, row in table.iterrows()]})
        for column in SHARED_ONCE:
            values = table[column].map(lambda v: "" if pd.isna(v) else str(v)) if column in table.columns else None
            if values is not None and column not in self.shared_once() and values.str.len().any():
                shown[column] = values.to_numpy()
        shown["arms"] = (table["system"].astype(str) + " vs " + table["baseline"].astype(str)).to_numpy()
        shown["measure"] = table["measure"].astype(str).to_numpy()
        shown["paper effect"] = [paper_effect_cell(row) for _, row in table.iterrows()]
        shown["ours [95% CI]"] = [effect_cell(row) for _, row in table.iterrows()]
        shown["n"] = table["n"].map(count_cell).to_numpy() if "n" in table.columns else ""
        shown["p (Holm)"] = table["p_holm"].to_numpy()
        shown["verdict"] = table["verdict"].to_numpy()
        shown["queries needed"] = table["queries_needed"].map(count_cell).to_numpy()
        if "family" in table.columns and table["family"].nunique() > 1:
            shown.insert(1, "Holm family", table["family"].to_numpy())
        return shown

    def shared_once(self) -> dict[str, str]:
        """``paper`` and ``deviation`` when every tested claim has the same one (shown once)."""
        if self.verdicts is None or self.verdicts.empty:
            return {}
        out = {}
        for column in SHARED_ONCE:
            if column in self.verdicts.columns:
                values = self.verdicts[column].map(lambda v: "" if pd.isna(v) else str(v)).unique()
                if len(values) == 1 and values[0]:
                    out[column] = values[0]
        return out

    def summary(self) -> str:
        """``4 reproduced, 1 not reproduced, 3 inconclusive, 0 untestable`` for this study's claims."""
        if self.verdicts is None or self.verdicts.empty:
            return "no claim tested"
        verdicts = self.verdicts["verdict"].astype(str)
        untestable = int(verdicts.str.startswith("untestable").sum())
        return (f"{int((verdicts == 'reproduced').sum())} reproduced, {int((verdicts == 'not reproduced').sum())} "
                f"not reproduced, {int((verdicts == 'inconclusive').sum())} inconclusive, {untestable} untestable")

    def holm_family(self) -> str:
        """The one Holm family each claim's p is corrected in, as the verdict table's header says it:
        the study's testable claims, or — with a ``family`` column — each named family's."""
        if self.verdicts is None or "family" not in self.verdicts.columns:
            return "Holm over this study's testable claims"
        families = list(dict.fromkeys(self.verdicts["family"].dropna().astype(str)))
        return "Holm within each family of testable claims (" + ", ".join(families) + ")"

    def verdict_markdown(self) -> str:
        shown = self.verdict_shown()
        if shown is None:
            return ""
        once = "".join(f"{column.capitalize()}: {value}\n\n" for column, value in self.shared_once().items())
        return once + markdown_table(shown, ".3g")

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
        verdicts = read_saved_table(folder / "verdicts.csv", VERDICT_COLUMNS) \
            if (folder / "verdicts.csv").exists() else None
        return cls(meta["title"], read_saved_table(folder / "paper_vs_ours.csv", ()), meta.get("note", ""),
                   meta.get("floatfmt", ".3f"), verdicts)

    @classmethod
    def concat(cls, title: str, parts: list[Report], note: str = "") -> Report:
        """Several reports of one notebook as one (rows stacked, a ``part`` column naming each)."""
        rows = pd.concat([p.rows.assign(part=p.title) for p in parts], ignore_index=True)
        tested = [p.verdicts for p in parts if p.verdicts is not None]
        return cls(title, rows, note or " ".join(p.note for p in parts if p.note),
                   verdicts=pd.concat(tested, ignore_index=True) if tested else None)


VERDICT_ORDER = ("reproduced", "not reproduced", "inconclusive")
VERDICT_COLUMNS = ("claim", "verdict")
CONFLICT_MARKERS = ("<<<<<<< ", "=======", ">>>>>>> ")


def read_saved_table(path: Path, required: tuple[str, ...]) -> pd.DataFrame:
    """A table a study saved, refused with one line when it is not one: empty, with git conflict
    markers, without its header (``required`` columns) or with a row cut short (a field missing
    where the header has one: a file cut mid-row)."""
    todo = "restore it (git checkout) or re-run the study's notebook"
    text = path.read_text("utf-8", errors="replace")
    if not text.strip():
        raise MalformedData(f"{path}: empty; {todo}")
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith(CONFLICT_MARKERS):
            raise MalformedData(f"{path}:{number}: a git conflict marker ({line[:7]}); resolve the merge or {todo}")
    try:
        table = pd.read_csv(io.StringIO(text), on_bad_lines="error")
    except (ValueError, pd.errors.ParserError) as exc:
        raise MalformedData(f"{path}: not a CSV table ({str(exc).splitlines()[0]}); {todo}") from None
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise MalformedData(f"{path}: no {missing} column(s) in its header {list(table.columns)[:6]}; {todo}")
    if required and table[list(required)].isna().any(axis=None):
        row = int(table[list(required)].isna().any(axis=1).to_numpy().argmax()) + 2
        raise MalformedData(f"{path}:{row}: a row without its {list(required)} (cut mid-row?); {todo}")
    if not text.endswith("\n") and required:
        raise MalformedData(f"{path}: its last row is not complete (the file was cut); {todo}")
    if "verdict" in required:
        unknown = sorted({v for v in table["verdict"].astype(str) if v not in VERDICT_ORDER
                          and not v.startswith("untestable (")})
        if unknown:
            raise MalformedData(f"{path}: unknown verdict(s) {unknown[:3]}; {todo}")
    return table


def conclusion_markdown(verdicts: pd.DataFrame) -> str:
    """A study's conclusion as its verdict table says it: the tally, then one line per claim —
    verdict, claim (and where), our effect [95% CI] on the measure's scale, n, p (Holm), the
    paper's effect, and for an inconclusive claim the queries a test would need. Nothing typed by
    hand, so the conclusion cannot drift from the tests."""
    if verdicts is None or verdicts.empty:
        return "No claim was tested in this run."
    values = verdicts["verdict"].astype(str)
    order = [*VERDICT_ORDER, *sorted(set(values) - set(VERDICT_ORDER))]
    tally = ", ".join(f"{int((values == v).sum())} {v}" for v in order if (values == v).any())
    where = [c for c in where_columns(verdicts) if c != "family"]
    lines = [f"**{len(verdicts)} claims tested: {tally}** (paired randomization tests, Holm-corrected p)."]
    for verdict in order:
        for _, row in verdicts[values == verdict].iterrows():
            line = (f"- **{verdict}**: {_with_where(row, where)} ({row['system']} vs {row['baseline']}) — "
                    f"{row['measure']} {effect_cell(row)}")
            line += f", n = {count_cell(row.get('n'))}" if pd.notna(row.get("n")) else ""
            line += f", p (Holm) = {float(row['p_holm']):.3g}" if pd.notna(row.get("p_holm")) else ""
            paper = paper_effect_cell(row)
            line += f"; paper {paper}" if paper != "—" else ""
            if verdict == "inconclusive" and pd.notna(row.get("queries_needed")):
                line += f"; a test would need ~{count_cell(row['queries_needed'])} queries"
            lines.append(line + ".")
    return "\n".join(lines)
