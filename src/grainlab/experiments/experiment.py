"""Run several systems over one dataset; return and save tidy per-query and aggregate tables.

Each finished system is written to ``<results>/<name>/per_query/`` at once, under a file
keyed by content (dataset fingerprint, system, measures, code version): a crash loses
nothing already finished and a rerun only computes what is missing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from grainlab import settings
from grainlab.cache import ArtifactCache, atomic_write_text
from grainlab.chunking.base import Chunker, get_chunker
from grainlab.data.types import Dataset
from grainlab.errors import ConfigError
from grainlab.evaluation.answers import answer_recall
from grainlab.evaluation.measures import evaluate_run, parse_measures
from grainlab.evaluation.registry import ANSWER_RECALL
from grainlab.evaluation.significance import compare_to_baseline
from grainlab.experiments.chunk_cache import chunk_corpus
from grainlab.experiments.identity import results_key
from grainlab.experiments.manifest import new_manifest
from grainlab.experiments.store import slug, stored_table
from grainlab.experiments.systems import System
from grainlab.models.tokenizers import get_tokenizer
from grainlab.retrieval import Retriever, get_retriever
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Chunk

KEYS = ["dataset", "system", "retriever", "chunker", "aggregate"]


@dataclass
class ExperimentResult:
    """Tidy tables of one experiment: per query (long), aggregated, significance."""

    per_query: pd.DataFrame
    aggregate: pd.DataFrame
    significance: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    folder: Path | None = None


def _validate(dataset: Dataset, systems: Sequence[System]) -> None:
    if not systems:
        raise ConfigError("no systems to run")
    names = [s.name for s in systems]
    if len(set(names)) != len(names):
        raise ConfigError(f"duplicate systems: {sorted(n for n in names if names.count(n) > 1)}")
    if not dataset.queries:
        raise ConfigError(f"dataset {dataset.name!r} has no queries")
    for system in systems:
        get_chunker(system.chunker)
        if not dataset.is_qa and system.aggregate is None:
            raise ConfigError(f"{dataset.name} has document qrels: give {system.display} an aggregate "
                              f"('max', 'first' or 'mean')")


def chunk_and_index(dataset: Dataset, chunker: Chunker, retriever_spec: str, cache: ArtifactCache,
                    fingerprint: str) -> tuple[list[Chunk], Retriever, dict[str, float]]:
    """The corpus's chunks (cached) and a retriever indexed over them, with the time each took."""
    tick = time.perf_counter()
    units = chunk_corpus(dataset, chunker, cache, fingerprint)
    timings = {"chunk_s": time.perf_counter() - tick}
    tick = time.perf_counter()
    retriever = get_retriever(retriever_spec, cache=cache).index(units, documents=dataset.corpus)
    timings["index_s"] = time.perf_counter() - tick
    return units, retriever, timings


def rank(dataset: Dataset, system: System, k: int, cache: ArtifactCache | None = None
         ) -> tuple[dict[str, list[tuple[str, float]]], list[Chunk]]:
    """The top-``k`` run of one system (unit ids, or document ids when it aggregates) and its units."""
    units, retriever, _ = chunk_and_index(dataset, get_chunker(system.chunker), system.retriever,
                                          cache or ArtifactCache(), dataset.fingerprint())
    return retriever.search(dataset.queries, k=k, aggregate=system.aggregate), units


def run_system(dataset: Dataset, system: System, measures: Sequence[str], answer_ks: Sequence[int],
               depth: int, cache: ArtifactCache, fingerprint: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Chunk, index, search and score one system; per-query rows plus timings and sizes."""
    chunker = get_chunker(system.chunker)
    units, retriever, timings = chunk_and_index(dataset, chunker, system.retriever, cache, fingerprint)
    tick = time.perf_counter()
    k = max(answer_ks) if dataset.is_qa else depth
    run = retriever.search(dataset.queries, k=k, aggregate=system.aggregate)
    timings["search_s"] = time.perf_counter() - tick
    if dataset.is_qa and system.aggregate is None:  # answer recall over the retrieved units
        texts = {u.chunk_id: u.text for u in units}
        table = answer_recall(run, texts, dataset.answers, answer_ks)
        n_tok = {u.chunk_id: u.n_tokens for u in units}
    elif dataset.is_qa:  # documents ranked by their units (MaxP for "max"); recall over whole documents
        hit = {d for ranking in run.values() for d, _ in ranking}
        texts = {d: dataset.corpus[d].text for d in hit}
        table = answer_recall(run, texts, dataset.answers, answer_ks)
        tok = get_tokenizer(DEFAULT_TOKENIZER)
        n_tok = {d: tok.count(text) for d, text in texts.items()}
    else:
        table = evaluate_run(run, dataset.qrels, measures)
    tokens_at = {k: float(np.mean([sum(n_tok[uid] for uid, _ in run.get(q, [])[:k]) for q in dataset.answers]))
                 for k in answer_ks} if dataset.is_qa else {}
    info = {"retriever_spec": retriever.spec, "chunker_version": chunker.version_string, "n_units": len(units),
            "mean_unit_tokens": float(np.mean([u.n_tokens for u in units])) if units else 0.0,
            "mean_tokens_retrieved_at_max_k": tokens_at.get(max(answer_ks)) if tokens_at else None,
            "mean_tokens_retrieved": {str(k): v for k, v in tokens_at.items()}, **timings}
    encoder = getattr(retriever, "encoder", None)
    if encoder is not None:
        info["model"] = encoder.record
    return table, info


def run_experiment(dataset: Dataset, systems: Iterable[System], name: str,
                   measures: Sequence[str] = ("nDCG@10", "R@100"), answer_ks: Sequence[int] = (1, 2, 3, 4, 5),
                   depth: int = 100, baseline: int | str = 0, significance_measure: str | None = None,
                   results_dir: str | Path | None = None, cache: ArtifactCache | None = None,
                   seed: int = 0, n_resamples: int = 10_000, progress: bool = True) -> ExperimentResult:
    """PyTerrier-style experiment: every system on ``dataset``, evaluated, compared to a baseline."""
    from tqdm.auto import tqdm

    systems = list(systems)
    _validate(dataset, systems)
    parse_measures(measures)
    cache = cache or ArtifactCache()
    folder = settings.results_dir(results_dir) / name
    (folder / "per_query").mkdir(parents=True, exist_ok=True)
    fingerprint = dataset.fingerprint()
    manifest = new_manifest(name=name, dataset=dataset.name, dataset_fingerprint=fingerprint,
                            n_docs=len(dataset.corpus), n_queries=len(dataset.queries),
                            measures=list(measures), answer_ks=list(answer_ks), depth=depth,
                            baseline=baseline, seed=seed, systems=[s.name for s in systems])
    frames = []
    for system in tqdm(systems, desc=f"{name}: systems", disable=not progress):
        key = results_key(fingerprint, system.chunker, system.retriever, system=system.name,
                          measures=list(measures), answer_ks=list(answer_ks), depth=depth)
        readable = f"{slug(system.retriever)[:48]}__{slug(system.chunker)[:64]}"

        def compute(system: System = system) -> tuple[pd.DataFrame, dict[str, Any]]:
            table, info = run_system(dataset, system, measures, answer_ks, depth, cache, fingerprint)
            for column, value in [("aggregate", system.aggregate or "units"), ("chunker", system.chunker),
                                  ("retriever", system.retriever), ("system", system.display),
                                  ("dataset", dataset.name)]:
                table.insert(0, column, value)
            return table, info

        table, info = stored_table(folder / "per_query", key, readable, compute)
        table = table.assign(**dict(system.tags))
        manifest["systems"][system.display] = {"name": system.name, "key": key, "tags": dict(system.tags), **info}
        frames.append(table)
    per_query = pd.concat(frames, ignore_index=True)
    tag_columns = list(dict.fromkeys(name for s in systems for name, _ in s.tags))
    aggregate = (per_query.groupby(KEYS + tag_columns + ["measure"], sort=False, dropna=False)["value"]
                 .agg(["mean", "count"]).reset_index())
    sizes = pd.DataFrame([{"system": s, "n_units": i["n_units"], "mean_unit_tokens": i["mean_unit_tokens"],
                           "mean_tokens_retrieved_at_max_k": i.get("mean_tokens_retrieved_at_max_k")}
                          for s, i in manifest["systems"].items()])
    aggregate = aggregate.merge(sizes, on="system", how="left")
    base = systems[baseline].display if isinstance(baseline, int) else baseline
    measure = significance_measure or (ANSWER_RECALL @ max(answer_ks) if dataset.is_qa else measures[0])
    significance = compare_to_baseline(per_query, base, measure, n_resamples=n_resamples, seed=seed)
    if not significance.empty:
        significance.insert(0, "dataset", dataset.name)
    atomic_write_text(folder / "per_query.csv", per_query.to_csv(index=False))
    atomic_write_text(folder / "aggregate.csv", aggregate.to_csv(index=False))
    atomic_write_text(folder / "significance.csv", significance.to_csv(index=False))
    atomic_write_text(folder / "manifest.json", json.dumps(manifest, indent=1, default=str))
    return ExperimentResult(per_query, aggregate, significance, manifest, folder)
