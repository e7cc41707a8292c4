"""The figure registry: each committed figure is a function of its study's stored tables.

A study module in this package declares its figures with :func:`figure`; each function reads
the tables its notebook saved under ``results/<study>/<profile>/`` (:class:`StudyTables`) and
returns a matplotlib figure (or, for a figure per model, a ``{file stem: figure}`` mapping).
``make figures`` (``grainlab figures``) and the notebooks call the same functions, so a figure
is redrawn, or restyled, without re-running anything that computed its numbers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.errors import ConfigError
from grainlab.experiments.stored import MissingResults, experiment_manifest, stored_per_query
from grainlab.plots import save_figure


@dataclass(frozen=True)
class StudyTables:
    """The stored tables of one study run: ``results/<study>/<profile>/`` (each table read once)."""

    folder: Path
    _read: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def study(self) -> str:
        return self.folder.parent.name

    @property
    def profile(self) -> str:
        return self.folder.name

    def path(self, name: str) -> Path:
        path = self.folder / name
        if not path.is_file():
            raise MissingResults(f"{path} not found: run the {self.study} notebook ({self.profile} profile) "
                                 f"that writes it, or check out the committed results")
        return path

    def csv(self, name: str, **read: Any) -> pd.DataFrame:
        """A table the notebook saved beside its experiments (``name`` relative to the folder)."""
        key = ("csv", name, repr(sorted(read.items())))
        if key not in self._read:
            self._read[key] = pd.read_csv(self.path(name), **read)
        return self._read[key].copy()

    def json(self, name: str) -> Any:
        return json.loads(self.path(name).read_text("utf-8"))

    def per_query(self, *experiments: str) -> pd.DataFrame:
        """The per-query rows of the named experiments (``run_experiment``'s ``name`` below this
        folder), from their checked per-system tables."""
        key = ("per_query", experiments)
        if not experiments:
            raise MissingResults(f"{self.folder}: no stored experiment to read")
        if key not in self._read:
            self._read[key] = pd.concat([stored_per_query(self.folder / name) for name in experiments],
                                        ignore_index=True)
        return self._read[key].copy()

    def manifest(self, experiment: str) -> dict[str, Any]:
        return experiment_manifest(self.folder / experiment)

    def experiments(self, under: str = "") -> dict[str, str]:
        """``{experiment: dataset}`` for the experiments stored directly in ``under`` (each a
        folder whose ``manifest.json`` lists systems), in name order."""
        found = {}
        for manifest in sorted((self.folder / under).glob("*/manifest.json")):
            name = manifest.parent.relative_to(self.folder).as_posix()
            found[name] = self.manifest(name).get("parameters", {}).get("dataset", manifest.parent.name)
        if not found:
            raise MissingResults(f"{self.folder / under}: no stored experiment: run the {self.study} notebook "
                                 f"({self.profile} profile), or check out the committed results")
        return found


Drawn = Any  # a matplotlib Figure, or {file stem: Figure} for a figure per model
Draw = Callable[[StudyTables], Drawn]


@dataclass(frozen=True)
class FigureSpec:
    """One registered figure: its file stem (a family's prefix, ``dense_x_reader_``), the study
    whose tables it reads, and the function that draws it."""

    name: str
    study: str
    draw: Draw
    family: bool = False

    def drawn(self, tables: StudyTables) -> dict[str, Any]:
        """``{file stem: figure}``."""
        result = self.draw(tables)
        if not self.family:
            return {self.name: result}
        if not isinstance(result, dict):
            raise TypeError(f"figure family {self.name!r} must return {{stem: figure}}")
        return result


FIGURES: dict[str, FigureSpec] = {}


def figure(study: str, name: str, *, family: bool = False) -> Callable[[Draw], Draw]:
    """Register ``draw`` as the figure ``name`` of ``study`` (``family=True``: ``name`` is the
    prefix of one figure per model, and ``draw`` returns ``{stem: figure}``)."""
    def register(draw: Draw) -> Draw:
        if name in FIGURES:
            raise ValueError(f"figure {name!r} is registered twice")
        FIGURES[name] = FigureSpec(name, study, draw, family)
        return draw
    return register


def study_figures(study: str) -> list[FigureSpec]:
    return [spec for spec in FIGURES.values() if spec.study == study]


def owner(stem: str) -> FigureSpec | None:
    """The registered figure a committed file stem belongs to (a family's member by its prefix)."""
    if stem in FIGURES and not FIGURES[stem].family:
        return FIGURES[stem]
    return next((s for s in FIGURES.values() if s.family and stem.startswith(s.name)), None)


def draw_figure(name: str, results: Path | StudyTables, figures: Path | None = None, *,
                close: bool = False) -> dict[str, Any]:
    """Draw the registered figure ``name`` from the study tables in ``results``
    (``results/<study>/<profile>``), save each as PNG and PDF in ``figures`` (none: not saved)
    and return ``{stem: figure}`` (closed after saving when ``close``)."""
    import matplotlib.pyplot as plt

    if name not in FIGURES:
        raise ConfigError(f"unknown figure {name!r}; known: {', '.join(sorted(FIGURES))}")
    tables = results if isinstance(results, StudyTables) else StudyTables(Path(results))
    drawn = FIGURES[name].drawn(tables)
    for stem, fig in drawn.items():
        if figures is not None:
            save_figure(fig, stem, figures)
        if close:
            plt.close(fig)
    return drawn


def show_figure(name: str, results: Path, figures: Path) -> None:
    """A notebook's figure: drawn from the tables the notebook just stored in ``results`` and saved
    in ``figures`` (:func:`draw_figure`); the notebook shows it below the cell."""
    draw_figure(name, results, figures)


@dataclass
class Redrawn:
    """What :func:`draw_all` wrote, and the figures it could not draw (name: one-line reason)."""

    written: list[Path]
    missing: dict[str, str]


def draw_all(results_root: Path, figures: Path, profile: str = "full", studies: Iterable[str] = (),
             progress: bool = True) -> Redrawn:
    """Every registered figure (of ``studies``, default all) drawn from
    ``results_root/<study>/<profile>/`` into ``figures``; nothing is computed but the figure."""
    from tqdm.auto import tqdm

    chosen = set(studies)
    unknown = chosen - {s.study for s in FIGURES.values()}
    if unknown:
        raise ConfigError(f"no figures registered for {sorted(unknown)}; studies with figures: "
                          f"{', '.join(sorted({s.study for s in FIGURES.values()}))}")
    specs = [s for s in FIGURES.values() if not chosen or s.study in chosen]
    written: list[Path] = []
    missing: dict[str, str] = {}
    tables = {study: StudyTables(Path(results_root) / study / profile) for study in {s.study for s in specs}}
    for spec in tqdm(specs, desc="figures", disable=not progress):
        try:
            drawn = draw_figure(spec.name, tables[spec.study], figures, close=True)
        except MissingResults as exc:
            missing[spec.name] = str(exc)
            continue
        written += [Path(figures) / f"{stem}.png" for stem in drawn]
    return Redrawn(written, missing)


def binary_rows(aggregate: pd.DataFrame, value: str = "value") -> pd.DataFrame:
    """Per-question 0/1 rows rebuilt from an aggregate of a 0/1 measure (``mean`` over ``count``
    questions): the bootstrap of a mean of 0/1 values depends only on how many are 1, so these
    rows give the same intervals as the questions' own. Refuses a mean that is not a whole number
    of questions (the measure was not 0/1)."""
    hits = aggregate["mean"] * aggregate["count"]
    if ((hits - hits.round()).abs() > 1e-6).any():
        raise ValueError("binary_rows: a mean × count is not a whole number: the measure is not 0/1 per question")
    rows = aggregate.loc[aggregate.index.repeat(aggregate["count"].astype(int))].copy()
    position = rows.groupby(level=0).cumcount()
    rows[value] = (position < hits.round().astype(int).reindex(rows.index).to_numpy()).astype(float)
    return rows.drop(columns=["mean"]).reset_index(drop=True)
