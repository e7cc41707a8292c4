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
from grainlab.errors import ConfigError
from grainlab.evaluation.answers import best_subspan_em, exact_match, has_answer
from grainlab.evaluation.registry import ANSWER_RECALL
from grainlab.experiments import System, rank, split_cutoff
from grainlab.readers import limits
from grainlab.readers.base import Reader
from grainlab.readers.prompts import closedbook_prompt, qa_prompt, within_budget
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.studies.claims import Claim
from grainlab.studies.report import Report
from grainlab.studies.short_answers import short_answers
from grainlab.types import Chunk

UNIT_CHUNKERS = {"passage": "none", "sentence": "sentences(n=1)"}
UNITS = ("passage", "sentence", "proposition")

# Dense X Retrieval (Chen et al., EMNLP 2024; arXiv 2312.06648), passage Recall@k in %.
PAPER_SQUAD_R5 = pd.DataFrame([
    {"retriever": r, "passage": p, "proposition": q, "source": "Chen et al., SQuAD column, R@5"}
    for r, p, q in (("SimCSE", 29.5, 38.7), ("Contriever", 40.8, 50.7), ("DPR", 38.3, 41.4), ("GTR", 54.4, 63.3))
])
PAPER_AVERAGE = pd.DataFrame([
    {"retriever": r, "unit": u, "R@5": r5, "R@20": r20, "source": "Chen et al., average over 5 sets"}
    for r, rows in (("SimCSE", ((34.3, 49.1), (40.9, 56.8), (46.3, 61.7))),
                    ("Contriever", ((43.0, 62.8), (47.3, 66.1), (52.7, 70.5))),
                    ("DPR", ((57.3, 69.5), (59.2, 71.0), (59.9, 72.2))),
                    ("GTR", ((65.2, 76.6), (66.7, 78.4), (68.0, 79.2))))
    for u, (r5, r20) in zip(UNITS, rows)
])
PAPER_PROPOSITION_STATS = {"propositions_per_passage": 6.3, "words_per_proposition": 11.2}


def article_subset(dataset: Dataset, n_articles: int) -> Dataset:
    """The first ``n_articles`` articles of a SQuAD-style dataset and the questions about them."""
    article_of = dataset.info["article_of"]
    keep = {d for d, a in article_of.items() if a < n_articles}
    questions = [q for q, judged in dataset.qrels.items() if set(judged) & keep]
    return dataset.subset(questions, [d for d in dataset.corpus if d in keep])


def unit_systems(retriever: str, label: str, proposition_chunker: str) -> dict[str, System]:
    """Passage-level systems for each unit type: passages as they are, sentences and
    propositions ranking their passage by their best unit (tags ``retriever_label``, ``unit``)."""
    chunkers = {"passage": ("none", None), "sentence": (UNIT_CHUNKERS["sentence"], "max"),
                "proposition": (proposition_chunker, "max")}
    return {unit: System(retriever, chunker, aggregate, label=f"{label} · {unit}",
                         tags={"retriever_label": label, "unit": unit})
            for unit, (chunker, aggregate) in chunkers.items()}


def measures(ks: Sequence[int]) -> list[str]:
    return [ANSWER_RECALL @ k for k in ks]


def recall_points(per_query: pd.DataFrame) -> pd.DataFrame:
    """Per-query answer recall at each k (columns ``k`` and ``recall``), so a plot can put an
    interval on every recall@k point."""
    rows = split_cutoff(per_query)
    rows = rows[rows["measure_name"] == ANSWER_RECALL.name]
    return rows.assign(recall=rows["value"])


def recall_by_answer_survival(per_query: pd.DataFrame, survived: Mapping[str, bool], measures: Sequence[str],
                              baseline: str = "passage") -> pd.DataFrame:
    """Each retriever's recall per unit, split by whether the decomposition kept the answer: over the
    questions whose gold passage's units still state it (``survived[qid]`` true) and over those
    whose units dropped it. Separates "propositions retrieve worse" from "this propositionizer
    lost the fact" — a unit's loss confined to the dropped rows is the propositionizer's, not the
    unit's. Questions missing from ``survived`` (their passage never stated the answer) are left
    out. One row per retriever, measure and stratum: ``n``, the mean per unit, and each unit's
    difference from ``baseline``."""
    rows = per_query[per_query["measure"].isin(measures) & per_query["qid"].isin(survived)]
    rows = rows.assign(answer=rows["qid"].map(lambda q: "kept" if survived[q] else "dropped"))
    table = rows.pivot_table(index=["retriever_label", "measure", "answer"], columns="unit", values="value",
                             aggfunc="mean", sort=False)
    units = [unit for unit in UNITS if unit in table.columns]
    differences = {f"{unit} − {baseline}": table[unit] - table[baseline] for unit in units if unit != baseline}
    counts = rows.groupby(["retriever_label", "measure", "answer"], sort=False)["qid"].nunique()
    return table[units].assign(**differences, n=counts).reset_index().rename_axis(columns=None)


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


def first_words(texts: Sequence[str], budget_words: int) -> str:
    """The first ``budget_words`` whitespace-separated words of ``texts`` read in order."""
    words: list[str] = []
    for text in texts:
        words.extend(text.split()[: budget_words - len(words)])
        if len(words) >= budget_words:
            break
    return " ".join(words)


def word_budget_recall(dataset: Dataset, system: System, budgets_words: Sequence[int],
                       cache: ArtifactCache | None = None, depth: int = 100) -> pd.DataFrame:
    """The paper's recall within a word budget: per question and ``l``, 1 if a gold answer occurs
    in the first ``l`` words of the top-ranked *units* read in rank order (a proposition's text is
    its rewrite), else 0 — a smaller unit spends fewer words per hit. Columns ``qid``, ``l_words``,
    ``recall``, ``words_read``; ``depth`` units must hold the largest budget (an error otherwise)."""
    run, units = rank(dataset, System(system.retriever, system.chunker, None), depth, cache)
    by_id: dict[str, Chunk] = {u.chunk_id: u for u in units}
    largest = max(budgets_words)
    rows = []
    for qid, ranking in run.items():
        texts = [by_id[u].rewrite or by_id[u].text for u, _ in ranking]
        available = sum(len(t.split()) for t in texts)
        for budget in budgets_words:
            read = first_words(texts, budget)
            rows.append({"qid": qid, "l_words": budget, "recall": float(has_answer(read, dataset.answers[qid])),
                         "words_read": len(read.split())})
        if available < largest and len(ranking) == depth:
            raise ConfigError(f"the top {depth} units of {system.display} hold {available} words, fewer than the "
                              f"{largest}-word budget: raise depth")
    return pd.DataFrame(rows)


def word_budget_claims(retrievers: Sequence[str], budgets_words: Sequence[int], deviation: str) -> list[Claim]:
    """Per retriever and word budget: propositions put the answer within the first ``l`` retrieved
    words more often than passages (the paper's recall-vs-words comparison; no effect size given)."""
    return [Claim(f"propositions put the answer within the first {budget} retrieved words more often",
                  "answer recall within l retrieved words: proposition > passage (Dense X, §5)", "proposition",
                  "passage", None, +1, None, {"retriever_label": retriever, "l_words": budget}, deviation)
            for retriever in retrievers for budget in budgets_words]


def reader_runs(dataset: Dataset, reader: Reader,
                contexts: Sequence[tuple[Mapping[str, object], Mapping[str, list[tuple[str, str]]]]],
                question_ids: Sequence[str], closed_book: bool = True) -> pd.DataFrame:
    """One row per question × setting: the reader's answer, its short answer (LongRAG's extraction
    step when the answer's first line is longer than five words, :mod:`grainlab.studies.short_answers`),
    exact match of the short answer (the paper's EM) and answer-in-prediction (``best_subspan_em``
    of the whole answer), and the tokens generated against the budget. ``contexts`` pairs a setting's columns (``{"retriever_label": "BM25",
    "unit": "proposition", "l": 100}``) with each question's documents; the closed-book rows
    have ``unit="closed-book"`` and ``l=0``."""
    jobs, prompts = [], []
    for qid in question_ids:
        question, answers = dataset.queries[qid], dataset.answers[qid]
        for setting, by_question in contexts:
            jobs.append((qid, dict(setting), answers))
            prompts.append(qa_prompt(question, by_question[qid]))
        if closed_book:
            jobs.append((qid, {"retriever_label": "none", "unit": "closed-book", "l": 0}, answers))
            prompts.append(closedbook_prompt(question))
    generations = limits.generate(reader, prompts)
    shorts = short_answers(reader, [dataset.queries[qid] for qid, _, _ in jobs], generations)
    rows = []
    for (qid, setting, answers), generation, answer in zip(jobs, generations, shorts):
        rows.append({"model": reader.model_id, "qid": qid, **setting, "prediction": generation.text,
                     "short_answer": answer.short, "extracted": answer.extracted,
                     "em": exact_match(answer.short, answers),
                     "answer_in_prediction": best_subspan_em(generation.text, answers),
                     "prompt_tokens": generation.prompt_tokens, "new_tokens": generation.new_tokens,
                     "max_new_tokens": reader.max_new_tokens,
                     "seconds": generation.seconds + (answer.extraction.seconds if answer.extraction else 0.0),
                     "answers": "|".join(answers)})
    return pd.DataFrame(rows)


def paper_squad_gain() -> float:
    """The mean proposition − passage R@5 gain over the paper's four SQuAD retrievers (a share)."""
    return float((PAPER_SQUAD_R5["proposition"] - PAPER_SQUAD_R5["passage"]).mean() / 100)


def recall_claims(retrievers: Sequence[str], ks: Sequence[int], deviation: str) -> list[Claim]:
    """Per retriever and k: propositions beat passages (compared on column ``unit``). The paper's
    effect is its SQuAD mean gain at R@5 for dense retrievers; BM25 is not in the paper."""
    gains = ", ".join(f"{r.retriever} {r.passage}→{r.proposition}" for r in PAPER_SQUAD_R5.itertuples())
    return [Claim(f"propositions beat passages as retrieval units (R@{k})", f"SQuAD R@5: {gains}", "proposition",
                  "passage", ANSWER_RECALL @ k, +1, paper_squad_gain() if k == 5 and retriever != "BM25" else None,
                  {"retriever_label": retriever}, deviation + ("; BM25 is not in the paper" if retriever == "BM25" else ""))
            for retriever in retrievers for k in ks]


def reader_claims(models: Sequence[str], retrievers: Sequence[str], budgets: Sequence[int]) -> list[Claim]:
    """Per reader × retriever × l: EM@l with propositions beats EM@l with passages."""
    return [Claim(f"propositions beat passages as reader context (EM@{budget})",
                  "EM@l proposition > passage for every retriever (LLaMA-2-7B; Contriever avg EM@500 34.1 → 37.3)",
                  "proposition", "passage", None, +1, (37.3 - 34.1) / 100 if budget == 500 else None,
                  {"model": model, "retriever_label": retriever, "l": budget},
                  f"reader {model.split('/')[-1]} (paper: LLaMA-2-7B)")
            for model in models for retriever in retrievers for budget in budgets]


def report(recall: pd.DataFrame, significance: pd.DataFrame, stats: Mapping[str, float], em: pd.DataFrame,
           note: str, verdicts: pd.DataFrame | None = None) -> Report:
    """Recall@5 by unit per retriever (with the paired test against passages), proposition
    statistics against the paper's, and the reader's EM per setting.

    ``recall``: ``retriever_label, unit, k, recall``; ``significance``: ``paired_comparison`` rows
    (``system`` = ``<retriever> · <unit>``; shown unadjusted — each claim's one Holm correction is
    the verdict table's); ``em``: ``means_with_ci`` over reader runs."""
    paper = ", ".join(f"{r.retriever} {r.passage} → {r.proposition}" for r in PAPER_SQUAD_R5.itertuples())
    tests = significance[significance["measure"] == ANSWER_RECALL @ 5].set_index("system")
    rows = []
    at5 = recall[recall["k"] == 5]
    for row in at5.itertuples():
        label = f"{row.retriever_label} · {row.unit}"
        rows.append({"claim": "propositions retrieve better passages than sentences or passages (Recall@5, %)",
                     "retriever": row.retriever_label, "unit": row.unit,
                     "paper": f"SQuAD R@5 passage → proposition: {paper}" if row.unit == "proposition" else "",
                     "ours": round(100 * float(row.recall), 1),
                     "delta vs passage": round(100 * float(tests.loc[label, "delta"]), 1) if label in tests.index else None,
                     "p (randomization, unadjusted)": float(tests.loc[label, "p_randomization"]) if label in tests.index else None})
    for name, value in PAPER_PROPOSITION_STATS.items():
        rows.append({"claim": "propositionizer output", "retriever": "", "unit": name.replace("_", " "),
                     "paper": value, "ours": round(float(stats[name]), 2)})
    for row in em.itertuples():
        reader = str(getattr(row, "model", "")).split("/")[-1]
        rows.append({"claim": "reader exact match over the first l tokens of retrieved units (EM@l)",
                     "retriever": row.retriever_label, "unit": f"{row.unit} · l={row.l}", "paper": "",
                     "ours": round(float(row.em), 3), "reader": reader, "n": row.n,
                     "95% CI": f"{row.em_low:.3f}–{row.em_high:.3f}",
                     "answer in prediction": round(float(row.answer_in_prediction), 3)})
    return Report("Dense X: passage vs sentence vs proposition units", pd.DataFrame(rows), note, verdicts=verdicts)
