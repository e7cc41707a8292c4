"""``grainlab verify``: recompute a sample of stored per-query rows and compare them with the stored ones.

A stored table is reused whenever its key matches (``experiments.identity``), and the key names
components by their explicit versions, not their source. So a change to what a component computes
that forgets its version bump would silently reuse stale rows; this module catches it the way
Pyserini's reproduction pages check stored scores: it reloads each experiment's dataset, checks
it is the data the manifest names (its fingerprint), draws a seeded random sample of queries,
recomputes every system on them from raw data and models, and compares row for row. A row that
differs while its key did not change is a defect (``VerifyReport.ok`` is false), never a warning;
the report names the component to blame: the chunker when the units changed; else, where the
stored run is kept, the retriever (or pipeline) when the ranking changed and the measures when it
did not; without a stored run, both candidates.
"""

from __future__ import annotations

import json
import math
import random
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.cache import ArtifactCache
from grainlab.data.recipes import rebuild
from grainlab.data.sample import sample_dataset
from grainlab.data.types import Dataset
from grainlab.errors import GrainlabError
from grainlab.evaluation.measures import read_trec_run
from grainlab.experiments.engine import compute_system
from grainlab.experiments.identity import key_parts, results_key
from grainlab.experiments.store import DamagedTable, load_stored_table
from grainlab.experiments.systems import System
from grainlab.types import Run

TOLERANCE = 1e-6  # float32 encoders give the same rankings; their scores may differ below this
ROW_KEYS = ["stage", "qid", "measure"]


@dataclass(frozen=True)
class Difference:
    """One sampled row whose recomputed value is not the stored one."""

    experiment: str
    system: str
    stage: str
    qid: str
    measure: str
    stored: float | None
    recomputed: float | None
    blame: str
    detail: str = ""
    """What differs when it is not a number (a prediction's text, stored vs recomputed)."""


@dataclass
class VerifyReport:
    """What was sampled and recomputed, what differed, and what could not be checked (with why)."""

    rows: int = 0
    reproduced: int = 0
    systems: int = 0
    generations: int = 0
    """Reader rows decoded again (``experiments.reader_rows``)."""
    differences: list[Difference] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.differences and not self.damaged and self.rows > 0

    def merge(self, other: VerifyReport) -> None:
        self.rows += other.rows
        self.reproduced += other.reproduced
        self.systems += other.systems
        self.generations += other.generations
        self.differences += other.differences
        self.skipped += other.skipped
        self.damaged += other.damaged
        self.seconds += other.seconds


def experiment_manifests(results: Path, only: Iterable[str] = ()) -> list[Path]:
    """Every experiment manifest under ``results`` (one listing systems), optionally only those
    whose folder (relative to ``results``) starts with one of ``only``."""
    found = []
    for path in sorted(results.glob("**/manifest.json")):
        relative = path.parent.relative_to(results).as_posix()
        if only and not any(relative.startswith(prefix) for prefix in only):
            continue
        try:
            systems = json.loads(path.read_text("utf-8")).get("systems")
        except (OSError, ValueError):
            continue
        if isinstance(systems, dict) and systems and (path.parent / "per_query").is_dir():
            found.append(path)
    return found


def _blame(system: System, parts: dict[str, Any], units_changed: bool, ranking_changed: bool | None,
           measures: set[str]) -> str:
    """The component a difference points to: the chunker when the units changed; with the stored
    run to compare, the ranking's components when it changed, else the measures that moved;
    without one, both candidates."""
    versions = parts["versions"]
    if units_changed:
        return f"chunker {versions['chunker']} ({system.chunker}): its units changed"
    names = ", ".join(r["versions"]["retriever"] for r in parts["retrievers"])
    ranking = (f"pipeline {versions['pipeline']} over retriever {names}" if system.stages is not None
               else f"retriever {names}" + (f" with aggregate {versions['aggregate']}" if "aggregate" in versions else ""))
    measured = "measure " + ", ".join(f"{m} ({versions['measures'].get(m, '?')})" for m in sorted(measures))
    if ranking_changed is None:
        return f"{ranking} or {measured} (no stored run to tell which)"
    return f"{ranking}: its ranking changed" if ranking_changed else f"{measured}: the ranking is the stored one"


def _ranking_changed(folder: Path, key: str, runs: dict[str, Run], qids: list[str]) -> bool | None:
    """Whether any stored run of this table ranks a sampled query differently; ``None`` when
    no run was stored."""
    stored_any = False
    for stage, run in runs.items():
        path = folder / f"{key[:12]}.{stage}.run"
        if not path.exists():
            continue
        stored_any = True
        before = read_trec_run(str(path), decode_ids=True)
        if any([d for d, _ in before.get(q, [])] != [d for d, _ in run.get(q, [])] for q in qids):
            return True
    return False if stored_any else None


def dataset_as_ran(dataset: Dataset, parameters: Mapping[str, Any]) -> Dataset | None:
    """The data an experiment ran on, rebuilt from the registry's dataset: itself, or the
    :func:`~grainlab.data.sample_dataset` subset its manifest records (``sample``: counts, seed,
    mode; a manifest from before that field is tried with the recorded counts, seed 0 and either
    mode). The fingerprint decides; ``None`` when nothing matches. (A manifest with a ``recipe``
    is rebuilt by :func:`recorded_dataset` instead.)"""
    wanted = parameters["dataset_fingerprint"]
    if dataset.fingerprint() == wanted:
        return dataset
    recorded = parameters.get("sample")
    tries = ([(recorded["n_queries"], recorded["n_docs"], recorded["seed"], recorded["mode"])] if recorded else
             [(parameters.get("n_queries"), parameters.get("n_docs"), 0, mode) for mode in ("docs", "queries")])
    for n_queries, n_docs, seed, mode in tries:
        if not n_queries or not n_docs:
            continue
        sampled = sample_dataset(dataset, int(n_queries), int(n_docs), int(seed), mode=str(mode))
        if sampled.fingerprint() == wanted:
            return sampled
    return None


def recorded_dataset(parameters: Mapping[str, Any], load: Callable[..., Dataset]) -> Dataset | None:
    """The data an experiment ran on: rebuilt from the manifest's ``recipe`` when it has one
    (``grainlab.data.recipes``; a study's derived corpus, your documents and questions), else from
    the registry's dataset of that name (:func:`dataset_as_ran`). ``None`` when the fingerprint
    of what was rebuilt is not the recorded one."""
    recipe = parameters.get("recipe")
    if not recipe:
        return dataset_as_ran(load(parameters["dataset"]), parameters)
    dataset = rebuild(recipe, load)
    return dataset if dataset.fingerprint() == parameters["dataset_fingerprint"] else None


def _component_kinds(system: System) -> list[str]:
    """The kinds of model-using parts of a system: its retrievers' names, ``rerank`` for a reranker."""
    kinds = [spec.split("(")[0] for spec in system.retrievers]
    return kinds + (["rerank"] if system.stages is not None and system.stages.reranker else [])


def _compare(stored: pd.DataFrame, fresh: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    merged = stored[ROW_KEYS + ["value"]].merge(fresh[ROW_KEYS + ["value"]], on=ROW_KEYS, how="outer",
                                                suffixes=("_stored", "_recomputed"))
    a, b = merged["value_stored"], merged["value_recomputed"]
    same = (a.isna() & b.isna()) | ((a - b).abs() <= tolerance)
    return merged.assign(same=same)


def verify_experiment(manifest_path: Path, load: Callable[[str], Dataset], queries: int = 3, seed: int = 0,
                      cache: ArtifactCache | None = None, retrievers: Iterable[str] = (),
                      tolerance: float = TOLERANCE, progress: Callable[[str], None] | None = None,
                      systems: int | None = None, root: Path | None = None) -> VerifyReport:
    """Recompute ``queries`` sampled queries of every system an experiment stored (only systems
    using one of ``retrievers``' names, when given; ``systems`` of them drawn at random, when given)
    and compare each row with the stored one. The experiment is named relative to ``root`` (the
    results folder), and the sample is drawn from that name and ``seed``, so every checkout and
    machine draws the same queries."""
    report = VerifyReport()
    folder_of = manifest_path.parent
    name = folder_of.relative_to(root).as_posix() if root is not None else folder_of.as_posix()
    manifest = json.loads(manifest_path.read_text("utf-8"))
    parameters = manifest["parameters"]
    try:
        dataset = recorded_dataset(parameters, load)
    except GrainlabError as exc:
        report.skipped.append((name, f"dataset {parameters['dataset']!r} not loadable here: {str(exc).split(';')[0]}"))
        return report
    if dataset is None:
        how = ("rebuilt from its recorded recipe (a derivation or its source files changed)" if parameters.get("recipe")
               else "whole or sampled as recorded (a study-built derivation with no recorded recipe)")
        report.skipped.append((name, f"the data {parameters['dataset']!r}, {how}, is not the data this experiment "
                                     "ran on: its fingerprint differs"))
        return report
    measures = list(parameters["measures"])
    depth = int(parameters["depth"])
    folder = manifest_path.parent / "per_query"
    cache = cache or ArtifactCache()
    rng = random.Random(f"{seed}:{name}")
    chosen = [(label, entry) for label, entry in manifest["systems"].items()
              if not retrievers or set(_component_kinds(System.from_name(entry["name"]))) <= set(retrievers)]
    if systems is not None and len(chosen) > systems:
        chosen = [chosen[i] for i in sorted(rng.sample(range(len(chosen)), systems))]
    for label, entry in chosen:
        system = System.from_name(entry["name"])
        parts = key_parts(parameters["dataset_fingerprint"], system, measures, depth)
        if results_key(parameters["dataset_fingerprint"], system, measures, depth) != entry["key"]:
            report.skipped.append((f"{name}: {label}", "stored under a key the current code no longer computes "
                                                       "(a version was bumped): the next run recomputes it"))
            continue
        try:
            stored = load_stored_table(folder, entry["key"])
        except DamagedTable as exc:
            report.damaged.append(str(exc))
            continue
        if stored is None:
            report.skipped.append((f"{name}: {label}", "its per-query table is not stored here"))
            continue
        qids = sorted(set(stored["qid"].astype(str)))
        sample = sorted(rng.sample(qids, min(queries, len(qids))))
        if progress:
            progress(f"{name}: {label} ({len(sample)} queries)")
        subset = dataset.subset(sample)
        fresh, info, runs = compute_system(subset, system, measures, depth, cache, parameters["dataset_fingerprint"])
        compared = _compare(stored[stored["qid"].astype(str).isin(sample)].astype({"qid": str}),
                            fresh.astype({"qid": str}), tolerance)
        report.systems += 1
        report.rows += len(compared)
        report.reproduced += int(compared["same"].sum())
        differing = compared[~compared["same"]]
        if differing.empty:
            continue
        units_changed = any(entry.get(k) is not None and not _close(entry.get(k), info.get(k))
                            for k in ("n_units", "mean_unit_tokens"))
        blame = _blame(system, parts, units_changed, _ranking_changed(folder, entry["key"], runs, sample),
                       set(differing["measure"]))
        report.differences += [Difference(name, label, row.stage, row.qid, row.measure, _number(row.value_stored),
                                          _number(row.value_recomputed), blame)
                               for row in differing.itertuples()]
    return report


def _close(a: Any, b: Any) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
    except (TypeError, ValueError):
        return a == b


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def verify(results: Path, load: Callable[[str], Dataset], only: Iterable[str] = (), queries: int = 3, seed: int = 0,
           cache: ArtifactCache | None = None, retrievers: Iterable[str] = (), max_seconds: float | None = None,
           progress: Callable[[str], None] | None = None, systems: int | None = None) -> VerifyReport:
    """:func:`verify_experiment` over every experiment under ``results`` (or ``only`` those),
    stopping before a new experiment once ``max_seconds`` have passed (the rest listed as skipped).
    Without a ``cache`` every chunk list, index and embedding is recomputed in an empty one that is
    removed afterwards, so nothing a cached artefact holds is taken on trust."""
    report = VerifyReport()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="grainlab-verify-") as scratch:
        _verify_all(report, results, load, only, queries, seed, cache or ArtifactCache(Path(scratch)), retrievers,
                    max_seconds, progress, start, systems)
    report.seconds = time.perf_counter() - start
    return report


def _verify_all(report: VerifyReport, results: Path, load: Callable[[str], Dataset], only: Iterable[str], queries: int,
                seed: int, cache: ArtifactCache, retrievers: Iterable[str], max_seconds: float | None,
                progress: Callable[[str], None] | None, start: float, systems: int | None) -> None:
    for manifest in experiment_manifests(results, only):
        name = manifest.parent.relative_to(results).as_posix()
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            report.skipped.append((name, f"not reached within --max-seconds {max_seconds:g}"))
            continue
        report.merge(verify_experiment(manifest, load, queries=queries, seed=seed, cache=cache,
                                       retrievers=tuple(retrievers), progress=progress, systems=systems,
                                       root=results))
