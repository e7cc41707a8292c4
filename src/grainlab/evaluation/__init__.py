"""Evaluation: ir-measures metrics, answer-string recall, paired significance."""

from grainlab.evaluation.answers import answer_recall, has_answer, normalize_answer
from grainlab.evaluation.measures import evaluate_run, parse_measures, read_trec_run, write_trec_run
from grainlab.evaluation.significance import (
    bootstrap_ci,
    compare_to_baseline,
    holm,
    paired_comparison,
    randomization_test,
)

__all__ = ["answer_recall", "bootstrap_ci", "compare_to_baseline", "paired_comparison", "evaluate_run", "has_answer", "holm",
           "normalize_answer", "parse_measures", "randomization_test", "read_trec_run", "write_trec_run"]
