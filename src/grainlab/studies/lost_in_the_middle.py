"""Lost in the Middle runs: reader accuracy by the gold passage's position, closed-book and
oracle baselines, and the key–value retrieval curve — tidy rows, one per question × setting.

Generations are cached by the reader one prompt at a time, so an interrupted run resumes.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from grainlab.data.lost_in_the_middle import KVExample, MultiDocExample
from grainlab.evaluation.answers import best_subspan_em, first_line, kv_accuracy
from grainlab.evaluation.significance import bootstrap_ci
from grainlab.readers.base import Reader
from grainlab.readers.prompts import closedbook_prompt, kv_prompt, qa_prompt
from grainlab.studies.report import Report

# Liu et al. (TACL 2024), GPT-3.5-Turbo on NQ-open, best_subspan_em; positions are 1-based.
PAPER_QA = pd.DataFrame(
    [{"setting": "20 documents", "position": p, "accuracy": a}
     for p, a in zip((1, 5, 10, 15, 20), (0.758, 0.572, 0.538, 0.554, 0.632))]
    + [{"setting": "10 documents", "position": p, "accuracy": a} for p, a in zip((1, 5, 10), (0.768, 0.612, 0.624))])
PAPER_BASELINES = {"closed-book": 0.561, "oracle": 0.883}
PAPER_READER = "GPT-3.5-Turbo"
# Key–value retrieval, 140 keys, MPT-30B (the repository's EXPERIMENTS.md).
PAPER_KV_140 = pd.DataFrame(
    [{"setting": "140 keys", "position": p, "accuracy": a}
     for p, a in zip((1, 35, 70, 105, 140), (1.0, 0.936, 0.886, 0.804, 0.962))])


def _rows(reader: Reader, jobs: list[dict], prompts: list[str], score) -> pd.DataFrame:
    generations = reader.generate(prompts)
    rows = []
    for job, generation in zip(jobs, generations):
        rows.append({**job, "model": reader.model_id, "prediction": first_line(generation.text),
                     "correct": score(job, generation.text), "prompt_tokens": generation.prompt_tokens,
                     "new_tokens": generation.new_tokens, "seconds": generation.seconds,
                     "cached": generation.cached})
    return pd.DataFrame(rows)


def qa_position_runs(examples: Sequence[MultiDocExample], reader: Reader,
                     settings: dict[int, Sequence[int]], closed_book: bool = True,
                     oracle: bool = True) -> pd.DataFrame:
    """``settings`` maps a document count to the gold positions to test (0-based)."""
    jobs, prompts = [], []
    for example in examples:
        base = {"qid": example.qid, "answers": "|".join(example.answers)}
        for n_docs, golds in settings.items():
            for gold in golds:
                jobs.append({**base, "setting": f"{n_docs} documents", "n_docs": n_docs, "gold_index": gold})
                prompts.append(qa_prompt(example.question, example.documents(n_docs, gold)))
        if closed_book:
            jobs.append({**base, "setting": "closed-book", "n_docs": 0, "gold_index": -1})
            prompts.append(closedbook_prompt(example.question))
        if oracle:
            jobs.append({**base, "setting": "oracle", "n_docs": 1, "gold_index": 0})
            prompts.append(qa_prompt(example.question, [example.gold]))
    return _rows(reader, jobs, prompts, lambda job, text: best_subspan_em(text, job["answers"].split("|")))


def kv_position_runs(examples: Sequence[KVExample], reader: Reader, golds: Sequence[int]) -> pd.DataFrame:
    """Key–value retrieval accuracy with the queried pair at each index in ``golds``."""
    jobs, prompts = [], []
    for number, example in enumerate(examples):
        for gold in golds:
            jobs.append({"qid": f"kv-{number}", "setting": f"{len(example.records)} keys", "n_docs": len(example.records),
                         "gold_index": gold, "value": example.value})
            prompts.append(kv_prompt(example.with_gold_at(gold), example.key))
    return _rows(reader, jobs, prompts, lambda job, text: kv_accuracy(text, job["value"]))


def accuracy_by_position(runs: pd.DataFrame, n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Mean accuracy per setting × gold position with a percentile bootstrap 95% CI over questions
    (``position`` is 1-based, as the paper plots it)."""
    rows = []
    for (setting, gold), group in runs.groupby(["setting", "gold_index"], sort=False):
        values = group["correct"].to_numpy(dtype=float)
        low, high = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        rows.append({"setting": setting, "gold_index": gold, "position": gold + 1, "accuracy": values.mean(),
                     "ci_low": low, "ci_high": high,
                     "n": len(values), "mean_prompt_tokens": group["prompt_tokens"].mean()})
    return pd.DataFrame(rows)


def report(summary: pd.DataFrame, kv_summary: pd.DataFrame, note: str) -> Report:
    """Accuracy by the gold document's position beside the paper's (with 95% intervals), the
    closed-book and oracle baselines, and our key–value curve (``accuracy_by_position`` tables)."""
    rows = []
    paper = PAPER_QA.set_index(["setting", "position"])["accuracy"]
    for r in summary.itertuples():
        if r.setting in PAPER_BASELINES:
            paper_value = PAPER_BASELINES[r.setting]
            claim = f"{r.setting} baseline"
        else:
            paper_value = paper.get((r.setting, r.position))
            claim = "accuracy is highest with the gold document first or last, lowest in the middle (U-curve)"
        rows.append({"claim": claim, "setting": r.setting, "position": r.position,
                     "paper": paper_value, "ours": r.accuracy, "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n})
    for r in kv_summary.itertuples():
        rows.append({"claim": "key–value retrieval by the key's position (paper: 140 keys, MPT-30B)",
                     "setting": r.setting, "position": r.position, "paper": None, "ours": r.accuracy,
                     "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n})
    return Report(f"Lost in the Middle (paper reader: {PAPER_READER})", pd.DataFrame(rows), note)
