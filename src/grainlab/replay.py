"""The main job: the committed full-profile results, replayed and checked on this machine.

``make reproduce`` runs :func:`replay`: it restores the packed per-query tables, recomputes a
seeded sample of their rows from the raw data and models (``grainlab verify``: every BM25 system
of every experiment, its data rebuilt from the registry or its recorded recipe, plus a dense system
drawn at random, and the reader rows of each study that keeps them: two per reader and setting
rebuilt from their prompts and checked against the generation archive, two decoded again),
rebuilds each experiment's aggregate table from its per-query tables and each study's derived
tables (positions, contrasts, verdicts) from its stored runs where its module can
(``studies.derived``), compares them with the committed ones, redraws every figure and rebuilds
the report from the stored tables, and ends with one line per paper (its claims' verdicts) and
one line saying how many sampled rows reproduced on this CPU. No notebook runs; the quick profile
(``grainlab reproduce --profile quick``) is for development and CI smoke runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from grainlab import settings
from grainlab.data import load_dataset
from grainlab.experiments.manifest import cpu_name
from grainlab.experiments.stored import aggregate_differences
from grainlab.experiments.verify import VerifyReport, experiment_manifests, verify
from grainlab.figures import Redrawn, draw_all
from grainlab.packing import unpack_archives, unpack_tables
from grainlab.publish import paper_lines, study_sections, write_report
from grainlab.studies.derived import derived_differences
from grainlab.studies.reader_checks import verify_readers

DENSE_SAMPLE = ("chunk_size/full/covid_qa_stitched",)
"""Where the dense sample is drawn: Bhat et al.'s stitched COVID-QA (33 documents), whose
whole corpus one small encoder embeds in about two minutes on two cores."""


@dataclass
class Replay:
    """What the main job found: the sampled recompute, the report written, one line per paper."""

    verified: VerifyReport
    report: Path
    figures: Redrawn
    headlines: list[str] = field(default_factory=list)
    aggregates: dict[str, list[str]] = field(default_factory=dict)
    derived: dict[str, list[str]] = field(default_factory=dict)

    @property
    def aggregates_line(self) -> str:
        matching = sum(not problems for problems in self.aggregates.values())
        return (f"{matching} of {len(self.aggregates)} experiments' aggregate tables rebuilt from their stored "
                "per-query tables match the committed ones")

    @property
    def derived_line(self) -> str:
        matching = sum(not problems for problems in self.derived.values())
        return (f"{matching} of {len(self.derived)} derived study tables (positions, contrasts, verdicts) rebuilt "
                "from their stored runs match the committed ones")

    @property
    def verify_line(self) -> str:
        return (f"{self.verified.reproduced} of {self.verified.rows} sampled rows reproduced on this machine "
                f"(CPU {cpu_name()}; {self.verified.systems} systems recomputed and "
                f"{self.verified.generations} generations decoded again in {self.verified.seconds:.0f} s)")


def rebuilt_aggregates(results: Path) -> dict[str, list[str]]:
    """Every stored experiment's ``aggregate.csv`` rebuilt from its per-query tables and compared
    with the committed one: experiment → the differences (none when they match). Nothing is written."""
    out = {}
    for manifest in experiment_manifests(results):
        if (manifest.parent / "aggregate.csv").exists():
            out[manifest.parent.relative_to(results).as_posix()] = aggregate_differences(manifest.parent)
    return out


def headlines(results: Path) -> list[str]:
    """One line per paper with tested claims (:func:`grainlab.publish.paper_lines`)."""
    return [line for _, line in paper_lines(study_sections("full", results))]


def record_run(results: Path, seconds: float, done: Replay) -> Path:
    """The main job's run record, ``results/main_job/runtime.json`` (the notebooks' format: the
    last run, the longest and the history; ``docs/profiles.md`` is generated from it)."""
    import json
    import time

    from grainlab.files import atomic_write_text
    from grainlab.reproduce import MAIN_JOB, runtime_record

    path = results / MAIN_JOB / "runtime.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    info = {"notebook": "make reproduce", "profile": "stored", "seconds": round(seconds, 1),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cache": "cold", "cpu": cpu_name(),
            "rows": done.verified.rows, "reproduced": done.verified.reproduced,
            "figures": len(done.figures.written)}  # verify recomputes in an empty cache: always cold
    atomic_write_text(path, json.dumps(runtime_record(info, path)))
    return path


def replay(results: Path | None = None, queries: int = 2, dense_systems: int = 1, reader_rows: int = 2,
           regenerate: int = 2, progress: Callable[[str], None] | None = None, figures: Path | None = None) -> Replay:
    """Restore, verify a sample, redraw the figures (into ``figures``, default ``figures/``),
    rebuild the report, record the run; see the module docstring."""
    import time

    started = time.perf_counter()
    results = results or settings.results_dir()
    figures = figures or settings.figures_dir()
    unpack_tables(results)
    unpack_archives(results)
    load = partial(load_dataset, allow_download=False)
    checked = verify(results, load, retrievers=("bm25",), queries=queries, progress=progress)
    if dense_systems:
        checked.merge(verify(results, load, only=DENSE_SAMPLE, retrievers=("dense",), systems=dense_systems,
                             queries=queries, progress=progress))
    if reader_rows:
        checked.merge(verify_readers(results, load, per_stratum=reader_rows, regenerate=regenerate,
                                     progress=progress))
    aggregates = rebuilt_aggregates(results)
    derived = derived_differences(results, load)
    redrawn = draw_all(results, figures, "full", progress=progress is not None)
    html, _ = write_report("full", results=results, figures=figures)
    done = Replay(checked, html, redrawn, headlines(results), aggregates, derived)
    record_run(results, time.perf_counter() - started, done)
    from grainlab.reproduce import refresh_run_times

    refresh_run_times(settings.project_root(), results)  # docs/profiles.md shows this run at once
    return done
