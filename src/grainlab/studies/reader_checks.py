"""The reader rows of every study run under ``results/``, checked by ``grainlab verify``.

A study whose rows are reader outputs defines ``stored_reader_rows(folder, load)`` in its module
(``grainlab.studies.<study>``, named as its results folder ``results/<study>/<profile>/``), which
rebuilds each stored row's prompt from the raw data with the study's own code;
:func:`verify_readers` finds every such run that keeps a generation archive, draws a stratified
sample and checks it (``experiments.reader_rows``). No list of studies is kept anywhere.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from grainlab.data.types import Dataset
from grainlab.errors import GrainlabError
from grainlab.experiments.reader_rows import stratified, verify_reader_rows
from grainlab.experiments.verify import VerifyReport
from grainlab.readers.archive import ARCHIVE_NAME, GenerationArchive

REGENERATE_BELOW = 1_500
"""Rows decoded again are drawn among prompts shorter than this (tokens): a 10-document QA prompt
takes seconds on two cores, a 75-key key–value prompt minutes."""


def reader_runs(results: Path, only: Iterable[str] = ()) -> list[tuple[Path, Callable]]:
    """``(folder, stored_reader_rows)`` for each run under ``results`` with a generation archive
    whose study module can rebuild its rows (only runs whose ``<study>/<profile>`` starts with one
    of ``only``, when given)."""
    found = []
    for archive in sorted(results.glob(f"*/*/{ARCHIVE_NAME}")):
        folder = archive.parent
        name = f"{folder.parent.name}/{folder.name}"
        if only and not any(name.startswith(prefix) for prefix in only):
            continue
        module = f"grainlab.studies.{folder.parent.name}"
        if importlib.util.find_spec(module) is None:
            continue
        rebuild = getattr(importlib.import_module(module), "stored_reader_rows", None)
        if rebuild is not None and (folder / "manifest.json").exists():
            found.append((folder, rebuild))
    return found


def verify_readers(results: Path, load: Callable[[str], Dataset], only: Iterable[str] = (), per_stratum: int = 2,
                   regenerate: int = 1, seed: int = 0, regenerate_below: int | None = REGENERATE_BELOW,
                   progress: Callable[[str], None] | None = None) -> VerifyReport:
    """``per_stratum`` rows of each reader × setting of every reader run (:func:`reader_runs`),
    checked against the run's archive, ``regenerate`` of them decoded again; see
    ``experiments.reader_rows``. A run whose data cannot be loaded here is skipped, with why."""
    report = VerifyReport()
    start = time.perf_counter()
    for folder, rebuild in reader_runs(results, only):
        name = f"{folder.parent.name}/{folder.name}"
        if progress:
            progress(f"{name}: reader rows")
        try:
            stored = rebuild(folder, load)
        except GrainlabError as exc:
            report.skipped.append((name, f"its data is not loadable here: {str(exc).split(';')[0]}"))
            continue
        draw = f"{seed}:{name}"  # a str seed draws the same sample on every machine and Python
        rows = stratified(stored.rows, per_stratum, seed=draw)
        report.merge(verify_reader_rows(rows, GenerationArchive(folder / ARCHIVE_NAME), stored.reader_for,
                                        regenerate=regenerate, seed=draw,
                                        regenerate_below=regenerate_below, progress=progress))
    report.seconds = time.perf_counter() - start
    return report

