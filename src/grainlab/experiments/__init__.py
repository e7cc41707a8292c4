"""Experiments: one runner (``run_experiment``) over :class:`System` values → tidy, stored,
resumable results with manifests. Paper-specific studies live in ``grainlab.studies``."""

from grainlab.experiments.baselines import size_matched_fixed
from grainlab.experiments.chunk_cache import chunk_corpus
from grainlab.experiments.engine import FINAL, ExperimentResult, last_stage, rank, run_experiment
from grainlab.experiments.systems import Stages, System, retriever_label
from grainlab.experiments.tables import (
    best_rows,
    gate_table,
    markdown_table,
    means_with_ci,
    paired_between,
    significance_by_group,
    split_cutoff,
)

__all__ = ["FINAL", "ExperimentResult", "Stages", "System", "best_rows", "chunk_corpus", "gate_table",
           "last_stage", "markdown_table", "rank", "means_with_ci", "paired_between", "retriever_label", "run_experiment",
           "significance_by_group", "size_matched_fixed", "split_cutoff"]
