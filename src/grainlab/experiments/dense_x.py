"""Dense X retrieval (Chen et al.): passage, sentence and proposition units over one passage corpus.

Retrieval is scored at the passage level as in the paper: a sentence or proposition ranks its
source passage by the best of the passage's units (``aggregate="max"``), and answer recall reads
the top-k unique passages. Downstream, EM@l gives the reader the first ``l`` tokens of the
retrieved *units* (propositions, sentences or passages, in rank order) — the paper's setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from grainlab.cache import ArtifactCache
from grainlab.data.types import Dataset
from grainlab.evaluation.answers import best_subspan_em, exact_match
from grainlab.experiments.experiment import rank
from grainlab.experiments.systems import System
from grainlab.readers.llm import CausalLMReader
from grainlab.readers.prompts import closedbook_prompt, qa_prompt, within_budget
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Chunk

UNIT_CHUNKERS = {"passage": "none", "sentence": "sentences(n=1)"}


def article_subset(dataset: Dataset, n_articles: int) -> Dataset:
    """The first ``n_articles`` articles of a SQuAD-style dataset and the questions about them."""
    article_of = dataset.info["article_of"]
    keep = {d for d, a in article_of.items() if a < n_articles}
    questions = [q for q, judged in dataset.qrels.items() if set(judged) & keep]
    return dataset.subset(questions, [d for d in dataset.corpus if d in keep])


def unit_systems(retriever: str, label: str, proposition_chunker: str) -> dict[str, System]:
    """Passage-level systems for each unit type: passages as they are, sentences and
    propositions ranking their passage by their best unit."""
    return {"passage": System(retriever, "none", None, label=f"{label} · passage"),
            "sentence": System(retriever, UNIT_CHUNKERS["sentence"], "max", label=f"{label} · sentence"),
            "proposition": System(retriever, proposition_chunker, "max", label=f"{label} · proposition")}


def retrieved_contexts(dataset: Dataset, system: System, budget_tokens: int, cache: ArtifactCache | None = None,
                       depth: int = 50) -> dict[str, list[tuple[str, str]]]:
    """Per question, ``(title, text)`` of the top-ranked *units* (not passages) up to the first
    ``budget_tokens`` cl100k tokens; the last unit is cut at the budget."""
    run, units = rank(dataset, System(system.retriever, system.chunker, None), depth, cache)
    by_id: dict[str, Chunk] = {u.chunk_id: u for u in units}
    contexts = {}
    for qid, ranking in run.items():
        units_in_order = ((dataset.corpus[by_id[u].doc_id].title, by_id[u].rewrite or by_id[u].text) for u, _ in ranking)
        contexts[qid] = within_budget(units_in_order, budget_tokens, DEFAULT_TOKENIZER)
    return contexts


def reader_runs(dataset: Dataset, reader: CausalLMReader, contexts: Mapping[str, Mapping[str, list[tuple[str, str]]]],
                question_ids: Sequence[str], closed_book: bool = True) -> pd.DataFrame:
    """One row per question × setting: the reader's answer, exact match and answer-in-prediction
    (``best_subspan_em``). ``contexts`` maps a setting name to each question's documents."""
    jobs, prompts = [], []
    for qid in question_ids:
        question, answers = dataset.queries[qid], dataset.answers[qid]
        for setting, by_question in contexts.items():
            jobs.append((qid, setting, answers))
            prompts.append(qa_prompt(question, by_question[qid]))
        if closed_book:
            jobs.append((qid, "closed-book", answers))
            prompts.append(closedbook_prompt(question))
    rows = []
    for (qid, setting, answers), generation in zip(jobs, reader.generate(prompts)):
        rows.append({"qid": qid, "setting": setting, "prediction": generation.text,
                     "em": exact_match(generation.text, answers),
                     "answer_in_prediction": best_subspan_em(generation.text, answers),
                     "prompt_tokens": generation.prompt_tokens, "seconds": generation.seconds,
                     "answers": "|".join(answers)})
    return pd.DataFrame(rows)
