"""Experiments: systems over datasets → tidy, saved, resumable results with manifests."""

from grainlab.experiments.chunk_cache import chunk_corpus
from grainlab.experiments.experiment import ExperimentResult, run_experiment, run_system
from grainlab.experiments.systems import System
from grainlab.experiments.tables import (
                                         best_rows,
                                         gate_table,
                                         markdown_table,
                                         retriever_label,
                                         significance_by_group,
                                         with_spec_columns,
)

__all__ = ["ExperimentResult", "System", "chunk_corpus", "run_experiment", "run_system",
           "best_rows", "gate_table", "markdown_table", "retriever_label", "significance_by_group", "with_spec_columns"]
