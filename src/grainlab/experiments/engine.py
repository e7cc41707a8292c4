"""The one experiment runner: systems over a dataset → tidy, stored, resumable results.

``run_experiment`` is PyTerrier's ``Experiment`` for grainlab: every :class:`System` (one
retriever or a fused set, any chunker, units / documents / parents, optionally a staged
pipeline) is chunked, indexed, searched and scored with the measures asked for — ir-measures'
against qrels, grainlab's registered ones (answer recall, tokens read, span metrics) against
answer strings — and compared with a baseline. Each finished system is written at once under
``<results>/<name>/per_query/``, keyed by content (``identity.results_key``): a crash loses
nothing finished and a rerun only computes what is missing.

One schema: ``per_query`` has ``dataset, system, retriever, chunker, aggregate, stage, <tags>,
qid, measure, value``; ``aggregate`` the same keys with ``mean, count, n_units,
mean_unit_tokens``; ``systems`` one row per system (sizes, chunking costs, timings, models).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from grainlab import settings
from grainlab.cache import ArtifactCache, report_corrupt, sha256_file
from grainlab.chunking.base import Chunker
from grainlab.chunking.factory import get_chunker
from grainlab.data.types import Dataset
from grainlab.distributed import ray_requested
from grainlab.errors import ConfigError
from grainlab.evaluation.measures import read_trec_run, write_trec_run
from grainlab.evaluation.significance import compare_to_baseline
from grainlab.evaluation.spans import boundary_retention, duplication_rate
from grainlab.experiments.chunk_cache import chunk_corpus
from grainlab.experiments.identity import results_key
from grainlab.experiments.manifest import new_manifest
from grainlab.experiments.scoring import MeasureSet, Scorer
from grainlab.experiments.store import slug, stored_table, superseded_keys
from grainlab.experiments.stored import KEYS, aggregate_table
from grainlab.experiments.systems import System
from grainlab.files import atomic_write_text
from grainlab.models.threads import pin_threads, torch_threads
from grainlab.retrieval import Retriever, get_retriever
from grainlab.retrieval.aggregate import collapse_to_documents
from grainlab.retrieval.pipeline import Pipeline
from grainlab.retrieval.rerank import Reranker
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Chunk, Run

FINAL = "final"  # the stage name of an unstaged system's one run


@dataclass
class ExperimentResult:
    """Tidy tables of one experiment (see the module docstring for their columns)."""

    per_query: pd.DataFrame
    aggregate: pd.DataFrame
    significance: pd.DataFrame
    systems: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    folder: Path | None = None

    def run(self, system: str, stage: str = FINAL) -> Run:
        """The saved run of ``system`` (its label) at ``stage`` (``run_experiment(save_runs=True)``)."""
        row = self.systems[self.systems["system"] == system]
        if row.empty:
            raise ConfigError(f"no system {system!r}; systems: {list(self.systems['system'])}")
        runs = row.iloc[0]["runs"]
        if not isinstance(runs, dict) or stage not in runs:
            raise ConfigError(f"{system!r} has no saved {stage!r} run: pass save_runs=True "
                              f"(saved: {sorted(runs) if isinstance(runs, dict) else []})")
        return read_trec_run(str(self.folder / "per_query" / runs[stage]), decode_ids=True)


class _Indexes:
    """Retrievers indexed over the current chunker's units and cross-encoders, shared by the
    systems of one experiment (pipelines reuse their members' indexes and one reranker)."""

    def __init__(self, cache: ArtifactCache) -> None:
        self.cache = cache
        self.chunker: str | None = None
        self.retrievers: dict[str, Retriever] = {}

    def retriever(self, spec: str, chunker: str, units: list[Chunk], dataset: Dataset) -> Retriever:
        if chunker != self.chunker:  # keep one chunking's indexes in memory at a time
            self.chunker, self.retrievers = chunker, {}
        if spec not in self.retrievers:
            self.retrievers[spec] = get_retriever(spec, cache=self.cache).index(units, documents=dataset.corpus)
        return self.retrievers[spec]

    def reranker(self, model: str) -> Reranker:
        return _reranker(model, str(self.cache.root))


@functools.lru_cache(maxsize=4)
def _reranker(model: str, cache_root: str) -> Reranker:
    """One reranker per model and cache for the whole process: the pairs it has scored are kept in
    memory, so experiments run one after another score each (query, unit) pair once."""
    return Reranker(model, cache=ArtifactCache(cache_root))


def _chunking_costs(dataset: Dataset, chunker: Chunker, units: list[Chunk], scorer: Scorer) -> dict[str, Any]:
    """Index size and, on QA datasets, duplication and boundary retention of gold spans."""
    info: dict[str, Any] = {"n_units": len(units),
                            "mean_unit_tokens": float(np.mean([u.n_tokens for u in units])) if units else 0.0,
                            "index_tokens": int(sum(u.n_tokens for u in units))}
    if not dataset.is_qa:
        return info
    tokenizer = getattr(chunker, "tokenizer", DEFAULT_TOKENIZER)
    doc_tokens = {d: scorer.document_tokens(d, tokenizer) for d in dataset.corpus}
    info["duplication_rate"] = duplication_rate([chunker.covered_tokens(u) for u in units], sum(doc_tokens.values()))
    info["boundary_retention"] = boundary_retention(units, [s for spans in scorer.gold.values() for s in spans])
    expected = [chunker.expected_units(t) for t in doc_tokens.values()]
    if expected and None not in expected:
        info["formula_units"] = sum(expected)  # type: ignore[arg-type]
    return info


def _system_runs(dataset: Dataset, system: System, scorer: Scorer, depth: int, indexes: _Indexes,
                 fingerprint: str) -> tuple[dict[str, tuple[Run, Run, dict[str, Chunk] | None]], dict[str, Any]]:
    """Chunk, index and search one system: per measured stage its raw run, the run scored (documents
    when it aggregates) and the units that run shows; plus sizes and timings."""
    chunker = get_chunker(system.chunker)
    tick = time.perf_counter()
    units = chunk_corpus(dataset, chunker, indexes.cache, fingerprint)
    info: dict[str, Any] = {"chunk_s": time.perf_counter() - tick, "chunker_version": chunker.version_string}
    tick = time.perf_counter()
    retrievers = [indexes.retriever(spec, system.chunker, units, dataset) for spec in system.retrievers]
    info["index_s"] = time.perf_counter() - tick
    info["retriever_spec"] = " + ".join(r.spec for r in retrievers)
    analyzers = [r.record for r in retrievers if getattr(r, "language", "en") != "en"]
    if analyzers:
        info["analyzer"] = analyzers[0] if len(analyzers) == 1 else analyzers
    models = [r.encoder.record for r in retrievers if getattr(r, "encoder", None) is not None]
    if models:
        info["model"] = models[0] if len(models) == 1 else models
    by_id = {u.chunk_id: u for u in units}
    tick = time.perf_counter()
    out: dict[str, tuple[Run, Run, dict[str, Chunk] | None]] = {}
    if system.stages is not None:
        stages = system.stages
        reranker = indexes.reranker(stages.reranker) if stages.reranker else None
        pipeline = Pipeline(retrievers, units, chunker=system.chunker, fusion=stages.fusion, rrf_k=stages.rrf_k,
                            reranker=reranker, candidate_k=stages.candidate_k, rerank_k=stages.rerank_k,
                            context_k=stages.context_k)
        runs, _ = pipeline.run(dataset.queries)
        runs["candidates"] = runs[f"candidates:{retrievers[0].spec}"]
        unit_doc = {u.chunk_id: u.doc_id for u in units}
        for stage in stages.measured(len(retrievers)):
            raw = runs[stage]
            scored = collapse_to_documents(raw, unit_doc) if system.aggregate else raw
            out[stage] = (raw, scored, None if system.aggregate else by_id)
        info["stage_seconds"] = dict(pipeline.timings)
        if reranker is not None:
            info["reranker"] = reranker.encoder.record
    elif system.parents:
        parents = {p.chunk_id: p for doc in dataset.corpus.values() for p in chunker.parents_of(doc)}
        run = retrievers[0].search(dataset.queries, k=max(depth, 1), aggregate=system.aggregate, group_by="parent")
        out[FINAL] = (run, run, parents)
        info["n_children"] = len(units)
        units = list(parents.values())
    else:
        run = retrievers[0].search(dataset.queries, k=max(depth, 1), aggregate=system.aggregate)
        out[FINAL] = (run, run, None if system.aggregate else by_id)
    info["search_s"] = time.perf_counter() - tick
    info.update(_chunking_costs(dataset, chunker, units, scorer))
    return out, info


def _validate(dataset: Dataset, systems: Sequence[System], scorer: Scorer) -> None:
    if not systems:
        raise ConfigError("no systems to run")
    if not all(isinstance(s, System) for s in systems):
        raise ConfigError("systems must be grainlab.experiments.System values")
    labels = [s.display for s in systems]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"duplicate systems: {sorted({n for n in labels if labels.count(n) > 1})}")
    if not dataset.queries:
        raise ConfigError(f"dataset {dataset.name!r} has no queries")
    for system in systems:
        scorer.check(system.display, system.aggregate is not None)


@dataclass(frozen=True)
class _SystemJob:
    system: System
    key: str
    readable: str

    def runs_missing(self, per_query_dir: Path, save_runs: bool) -> bool:
        """Whether runs were asked for and this system's saved runs are not there, or one fails the
        checksum its table's record holds (a damaged run is reported and recomputed, never read)."""
        if not save_runs:
            return False
        if not list(per_query_dir.glob(f"{self.key[:12]}.*.run")):
            return True
        records = sorted(per_query_dir.glob(f"*-{self.key[:12]}.json"))
        try:
            expected = json.loads(records[0].read_text("utf-8")).get("runs_sha256") or {} if records else {}
        except (OSError, ValueError):
            expected = {}
        for stage, checksum in expected.items():
            path = per_query_dir / f"{self.key[:12]}.{stage}.run"
            if not path.exists() or sha256_file(path) != checksum:
                report_corrupt(path, "its run fails the checksum in the table's record")
                return True
        return False


def _system_key(system: System, fingerprint: str, measure_set: MeasureSet, depth: int) -> tuple[str, str]:
    """The stored table's content key and its readable file-name part."""
    key = results_key(fingerprint, system, measure_set.names, depth)
    return key, f"{slug(system.retriever_column)[:48]}__{slug(system.chunker)[:64]}"


def _system_table(dataset: Dataset, system: System, scorer: Scorer, depth: int, indexes: _Indexes,
                  fingerprint: str) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Run]]:
    """One system's per-query table (every measured stage), its info and its raw runs by stage."""
    runs, info = _system_runs(dataset, system, scorer, depth, indexes, fingerprint)
    tables = [scorer.rows(scored, shown).assign(stage=stage) for stage, (_, scored, shown) in runs.items()]
    table = pd.concat(tables, ignore_index=True)
    for column, value in [("chunker", system.chunker), ("aggregate", system.aggregate or "units"),
                          ("retriever", system.retriever_column)]:
        table.insert(0, column, value)
    return table, info, {stage: raw for stage, (raw, _, _) in runs.items()}


def compute_system(dataset: Dataset, system: System, measures: Sequence[str], depth: int, cache: ArtifactCache,
                   fingerprint: str) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Run]]:
    """One system computed afresh on ``dataset`` (nothing read from or written to a results folder):
    its per-query table, its info and its raw runs by stage — what ``grainlab verify`` compares
    with a stored table."""
    scorer = Scorer(dataset, MeasureSet.parse(list(measures)))
    return _system_table(dataset, system, scorer, depth, _Indexes(cache), fingerprint)


def _with_saved_runs(table: pd.DataFrame, info: dict[str, Any], runs: dict[str, Run] | None, per_query_dir: Path,
                     job: _SystemJob) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Write each stage's run (``save_runs``) beside the stored table and record their files."""
    if runs is not None:
        checksums = {}
        for stage, raw in runs.items():
            path = per_query_dir / f"{job.key[:12]}.{stage}.run"
            write_trec_run(raw, str(path), tag=slug(job.system.display))
            checksums[stage] = sha256_file(path)
        info["runs_sha256"] = checksums
    info["runs"] = {stage: f"{job.key[:12]}.{stage}.run" for stage in runs} if runs is not None else None
    return table, info


def _remote_system_table(dataset: Dataset, system: System, measures: list[str], depth: int, cache_root: str,
                         threads: int | None = None) -> tuple[pd.DataFrame, dict[str, Any], dict[str, Run]]:
    """A Ray task: one system computed in a worker as the serial loop computes it, with the
    driver's torch thread count (``threads``) so its matrix products are split the same way."""
    pin_threads(threads)
    scorer = Scorer(dataset, MeasureSet.parse(measures))
    return _system_table(dataset, system, scorer, depth, _Indexes(ArtifactCache(cache_root)), dataset.fingerprint())


def _precompute_on_ray(dataset: Dataset, jobs: list[_SystemJob], measure_set: MeasureSet, depth: int,
                       cache: ArtifactCache, per_query_dir: Path, save_runs: bool, target: str, progress: bool) -> None:
    """Compute the systems not yet stored as Ray tasks (one per system) and store each as it
    finishes — the driver writes, so workers need no shared disk; the serial loop then finds
    every system stored and assembles the tables exactly as without Ray."""
    from tqdm.auto import tqdm

    from grainlab.distributed import connect

    todo = [job for job in jobs if not list(per_query_dir.glob(f"*-{job.key[:12]}.csv"))
            or job.runs_missing(per_query_dir, save_runs)]
    if not todo:
        return
    ray = connect(target)
    task = ray.remote(num_cpus=1, max_retries=2)(_remote_system_table)
    data_ref = ray.put(dataset)
    threads = torch_threads()
    pending = {task.remote(data_ref, job.system, measure_set.names, depth, str(cache.root), threads): job
               for job in todo}
    with tqdm(total=len(todo), desc="systems on Ray", disable=not progress) as bar:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            job = pending.pop(ready[0])
            table, info, runs = ray.get(ready[0])
            stored_table(per_query_dir, job.key, job.readable,
                         functools.partial(_with_saved_runs, table, info, runs if save_runs else None, per_query_dir,
                                           job), refresh=True, system=job.system.name)
            bar.update()


def run_experiment(dataset: Dataset, systems: Iterable[System], measures: str | Sequence[str] = ("nDCG@10", "R@100"), *,
                   name: str, depth: int = 100, baseline: int | str = 0, significance_measure: str | None = None,
                   results_dir: str | Path | None = None, cache: ArtifactCache | None = None, seed: int = 0,
                   n_resamples: int = 10_000, save_runs: bool = False, progress: bool = True,
                   ray: str | bool | None = None) -> ExperimentResult:
    """Every system on ``dataset``, scored with ``measures``, compared with a baseline.

    Args:
        dataset: a loaded dataset (BEIR-style qrels and/or answer strings).
        systems: :class:`System` values; their labels name the ``system`` column.
        measures: ir-measures names (``nDCG@10``, ``R@100``, ``RR@10``) scored against the qrels
            of the documents a system ranks, and grainlab's registered ones
            (``grainlab.evaluation.registry``: ``AnswerRecall@5``, ``Tokens@5``, ``SpanIoU@5``, ...).
        name: the results folder, ``<results>/<name>/``.
        depth: units or documents retrieved per query when an ir-measures measure is asked for
            (otherwise the largest cutoff of grainlab's measures).
        baseline: the system (index or label) every other is compared with, on
            ``significance_measure`` (default ``MeasureSet.default``) at each system's last stage;
            paired t-test and randomization test, Holm-corrected (``evaluation.significance``).
        save_runs: keep every measured stage's run (TREC format) for ``ExperimentResult.run``.
        ray: compute the systems as Ray tasks (one per system) before assembling the tables:
            ``"local"``, ``"auto"``/``True`` (``$RAY_ADDRESS`` or local) or a cluster address;
            default ``$GRAINLAB_RAY`` (unset: in-process). The results are the serial run's up to
            rounding: scores within 1e-6, rankings the same up to near-ties
            (``experiments.agreement`` says what that can change).
    """
    from tqdm.auto import tqdm

    systems = list(systems)
    measure_set = MeasureSet.parse([measures] if isinstance(measures, str) else list(measures))
    scorer = Scorer(dataset, measure_set)
    _validate(dataset, systems, scorer)
    depth = max(depth, measure_set.depth) if measure_set.ir else measure_set.depth
    cache = cache or ArtifactCache()
    folder = settings.results_dir(results_dir) / name
    (folder / "per_query").mkdir(parents=True, exist_ok=True)
    fingerprint = dataset.fingerprint()
    manifest = new_manifest(name=name, dataset=dataset.name, dataset_fingerprint=fingerprint,
                            n_docs=len(dataset.corpus), n_queries=len(dataset.queries), measures=measure_set.names,
                            depth=depth, baseline=baseline, seed=seed, systems=[s.name for s in systems],
                            sample=dataset.info.get("sample"), recipe=dataset.info.get("recipe"))
    jobs = [_SystemJob(system, *_system_key(system, fingerprint, measure_set, depth)) for system in systems]
    per_query_dir = folder / "per_query"
    target = ray_requested(ray)
    if target is not None:
        _precompute_on_ray(dataset, jobs, measure_set, depth, cache, per_query_dir, save_runs, target, progress)
    indexes = _Indexes(cache)
    frames, infos = [], []
    for job in tqdm(jobs, desc=f"{name}: systems", disable=not progress):
        system, key = job.system, job.key

        def compute(job: _SystemJob = job) -> tuple[pd.DataFrame, dict[str, Any]]:
            table, info, runs = _system_table(dataset, job.system, scorer, depth, indexes, fingerprint)
            return _with_saved_runs(table, info, runs if save_runs else None, per_query_dir, job)

        table, info = stored_table(per_query_dir, key, job.readable, compute,
                                   refresh=job.runs_missing(per_query_dir, save_runs), system=system.name)
        if info.get("runs"):  # named by the key the table is stored under (a re-keyed record may name its old one)
            info["runs"] = {stage: f"{key[:12]}.{stage}.run" for stage in info["runs"]}
        table = table.assign(dataset=dataset.name, system=system.display, **dict(system.tags))
        frames.append(table)
        infos.append({"dataset": dataset.name, "system": system.display, "name": system.name, "key": key,
                      "retriever": system.retriever_column, "chunker": system.chunker,
                      "aggregate": system.aggregate or "units", "parents": system.parents,
                      "stages": system.stages.spec if system.stages else None, **dict(system.tags), **info})
        manifest["systems"][system.display] = {"name": system.name, "key": key, "tags": dict(system.tags), **info,
                                               "supersedes": superseded_keys(per_query_dir, system.name, key)}
    tags = list(dict.fromkeys(tag for s in systems for tag, _ in s.tags))
    per_query = pd.concat(frames, ignore_index=True)
    per_query = per_query[[*KEYS, *tags, "qid", "measure", "value"]]
    systems_table = pd.DataFrame(infos)
    aggregate = aggregate_table(per_query, systems_table, tags)
    significance = _significance(per_query, systems, baseline, significance_measure or measure_set.default,
                                 n_resamples, seed)
    if not significance.empty:
        significance.insert(0, "dataset", dataset.name)
    atomic_write_text(folder / "per_query.csv", per_query.to_csv(index=False))
    atomic_write_text(folder / "aggregate.csv", aggregate.to_csv(index=False))
    atomic_write_text(folder / "significance.csv", significance.to_csv(index=False))
    atomic_write_text(folder / "systems.csv",
                      systems_table.drop(columns=["runs", "runs_sha256"], errors="ignore").to_csv(index=False))
    atomic_write_text(folder / "manifest.json", json.dumps(manifest, indent=1, default=str))
    return ExperimentResult(per_query, aggregate, significance, systems_table, manifest, folder)


def last_stage(per_query: pd.DataFrame) -> pd.DataFrame:
    """Each system's rows at its last measured stage (``context`` for pipelines)."""
    last = per_query.groupby("system", sort=False)["stage"].last()
    return per_query[per_query["stage"] == per_query["system"].map(last)]


def _significance(per_query: pd.DataFrame, systems: Sequence[System], baseline: int | str, measure: str,
                  n_resamples: int, seed: int) -> pd.DataFrame:
    base = systems[baseline].display if isinstance(baseline, int) else baseline
    if base not in {s.display for s in systems}:
        raise ConfigError(f"baseline {base!r} is not one of the systems {[s.display for s in systems]}")
    return compare_to_baseline(last_stage(per_query), base, measure, n_resamples=n_resamples, seed=seed)


def rank(dataset: Dataset, system: System, k: int, cache: ArtifactCache | None = None) -> tuple[Run, list[Chunk]]:
    """The top-``k`` run of one unstaged system (unit ids, or document ids when it aggregates)
    and its units — for readers that need the ranked units themselves, not scores."""
    if system.stages is not None or system.parents:
        raise ConfigError(f"{system.display}: rank() takes a single-retriever system without stages or parents")
    cache = cache or ArtifactCache()
    units = chunk_corpus(dataset, get_chunker(system.chunker), cache)
    retriever = get_retriever(system.retriever, cache=cache).index(units, documents=dataset.corpus)  # type: ignore[arg-type]
    return retriever.search(dataset.queries, k=k, aggregate=system.aggregate), units
