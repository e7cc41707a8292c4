"""LongRAG retrieval units over the Wikipedia text available offline (Jiang et al. 2024).

Three corpora over the same text: ~100-word passages, whole documents (passages of one Wikipedia
title joined in order), and grouped documents (LongRAG's grouping over a document graph, within
a token budget). Offline there are no hyperlinks, so the graph is declared: each document is
linked to its ``k`` nearest documents by BM25 (title + opening words as the query), made
undirected. Every corpus keeps the questions and answers, so answer recall is comparable.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from tqdm.auto import tqdm

from grainlab.cache import ArtifactCache
from grainlab.chunking.factory import get_chunker
from grainlab.chunking.grouping import group_documents, symmetric
from grainlab.data.clusters import gold_clusters
from grainlab.data.recipes import derivation, rebuild
from grainlab.data.types import Dataset, Document
from grainlab.errors import ConfigError
from grainlab.evaluation.answers import answer_recall, best_subspan_em, exact_match, has_answer
from grainlab.evaluation.registry import ANSWER_RECALL, TOKENS
from grainlab.experiments import System, split_cutoff
from grainlab.experiments.stored import experiment_manifest, stored_aggregate, stored_per_query
from grainlab.experiments.tables import means_with_ci, paired_between
from grainlab.models.tokenizers import get_tokenizer
from grainlab.readers import limits
from grainlab.readers.base import Reader
from grainlab.readers.prompts import closedbook_prompt, longrag_prompt, within_budget
from grainlab.retrieval import index_titled_documents
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.studies.claims import Claim, verdict_table
from grainlab.studies.report import Report
from grainlab.studies.short_answers import short_answers
from grainlab.studies.token_limits import token_limit_table

SEPARATOR = "\n\n"
UNITS = ("passages", "documents", "grouped documents")

# LongRAG (Jiang et al. 2024), NQ answer recall in % (Table 1) and reader EM.
PAPER_NQ_RECALL = pd.DataFrame(
    [{"unit": "passages", "paper corpus size": "22M", "units retrieved": k, "paper AR": v}
     for k, v in ((1, 52.24), (100, 89.92), (200, 91.30))]
    + [{"unit": "documents", "paper corpus size": "3M", "units retrieved": k, "paper AR": v}
       for k, v in ((1, 69.45), (5, 85.37), (10, 88.12))]
    + [{"unit": "grouped documents", "paper corpus size": "600K", "units retrieved": k, "paper AR": v}
       for k, v in ((1, 71.69), (4, 86.30), (8, 88.53))])
PAPER_NQ_READER_EM = {"EM": 62.7, "reader": "GPT-4o", "units": "4 grouped units (~30K tokens)"}


def title_id(title: str) -> str:
    """A document id from a Wikipedia title (spaces → underscores)."""
    return re.sub(r"\s+", "_", title.strip()) or "untitled"


@derivation
def merge_sources(name: str, sources: Sequence[Dataset], question_source: Dataset) -> Dataset:
    """One passage corpus from several (ids prefixed by source), with ``question_source``'s questions."""
    corpus: dict[str, Document] = {}
    for source in sources:
        for doc in source.corpus.values():
            doc_id = f"{source.name}:{doc.doc_id}"
            corpus[doc_id] = Document(doc_id, doc.text, doc.title)
    qrels = {q: {f"{question_source.name}:{d}": r for d, r in judged.items()} for q, judged in question_source.qrels.items()}
    return Dataset(name, corpus, dict(question_source.queries), qrels, dict(question_source.answers),
                   info={"sources": [s.name for s in sources]})


@derivation
def passage_corpus(dataset: Dataset, words: int = 100) -> Dataset:
    """Every source passage cut into ``passages(words=…)`` units (each unit a document)."""
    chunker = get_chunker(f"passages(words={words},min_last={words // 2})")
    corpus, home = {}, {}
    for doc in dataset.corpus.values():
        for chunk in chunker.chunk(doc):
            corpus[chunk.chunk_id] = Document(chunk.chunk_id, chunk.text, doc.title)
            home[chunk.chunk_id] = doc.doc_id
    qrels = {q: {u: 1 for u, d in home.items() if d in judged} for q, judged in dataset.qrels.items()}
    return Dataset(f"{dataset.name}_passages", corpus, dataset.queries, qrels, dataset.answers,
                   info={**dataset.info, "unit": f"passages ({words} words)", "source_of": home})


@derivation
def document_corpus(dataset: Dataset) -> Dataset:
    """Passages of one title joined (in corpus order) into one document per title."""
    by_title: dict[str, list[Document]] = {}
    for doc in dataset.corpus.values():
        by_title.setdefault(doc.title or doc.doc_id, []).append(doc)
    corpus, home, segments = {}, {}, {}
    for title, docs in by_title.items():
        doc_id = title_id(title)
        while doc_id in corpus:
            doc_id += "_"
        corpus[doc_id] = Document(doc_id, SEPARATOR.join(d.text for d in docs), title)
        segments[doc_id] = [d.doc_id for d in docs]
        home.update({d.doc_id: doc_id for d in docs})
    qrels = {q: {home[d]: 1 for d in judged if d in home} for q, judged in dataset.qrels.items()}
    return Dataset(f"{dataset.name}_documents", corpus, dataset.queries, qrels, dataset.answers,
                   info={**dataset.info, "unit": "documents", "members": segments})


def similarity_neighbours(documents: Dataset, k: int = 5, query_words: int = 64, retriever: str = "bm25",
                          cache: ArtifactCache | None = None) -> dict[str, list[str]]:
    """Each document's ``k`` nearest other documents by ``retriever`` (query: title + opening words)."""
    index = index_titled_documents(documents.corpus.values(), retriever, cache)
    queries = {d: f"{doc.title} {' '.join(doc.text.split()[:query_words])}" for d, doc in documents.corpus.items()}
    run = index.search(queries, k=k + 1, aggregate="max", progress=True)
    return {d: [other for other, _ in run[d] if other != d][:k] for d in documents.corpus}


def grouped_corpus(documents: Dataset, neighbours: dict[str, list[str]], max_tokens: int = 4000) -> Dataset:
    """LongRAG groups of documents (≤ ``max_tokens`` cl100k tokens unless a document alone is bigger)."""
    tok = get_tokenizer(DEFAULT_TOKENIZER)
    sizes = {d: tok.count(doc.text) for d, doc in tqdm(documents.corpus.items(), desc="document sizes",
                                                        disable=len(documents.corpus) < 500)}
    groups = group_documents(sizes, symmetric(neighbours), max_tokens)
    corpus, home = {}, {}
    for index, members in enumerate(groups):
        group_id = f"group-{index}"
        corpus[group_id] = Document(group_id, SEPARATOR.join(documents.corpus[m].text for m in members),
                                    " | ".join(documents.corpus[m].title for m in members))
        home.update({m: group_id for m in members})
    qrels = {q: {home[d]: 1 for d in judged if d in home} for q, judged in documents.qrels.items()}
    return Dataset(f"{documents.name.removesuffix('_documents')}_grouped", corpus, documents.queries, qrels,
                   documents.answers, info={**documents.info, "unit": f"grouped documents (≤{max_tokens} tokens)",
                                            "groups": {f"group-{i}": g for i, g in enumerate(groups)}})


@derivation
def similarity_groups(documents: Dataset, k: int = 5, max_tokens: int = 4000, query_words: int = 64,
                      retriever: str = "bm25") -> Dataset:
    """:func:`grouped_corpus` over each document's ``k`` :func:`similarity_neighbours`."""
    return grouped_corpus(documents, similarity_neighbours(documents, k, query_words, retriever), max_tokens)


@derivation
def first_articles(dataset: Dataset, articles: int) -> Dataset:
    """The passages of a SQuAD-style dataset's first ``articles`` articles (sorted by title), no questions."""
    article_of = dataset.info["article_of"]
    kept = set(sorted(set(article_of.values()))[:articles])
    return dataset.subset([], [d for d, a in article_of.items() if a in kept])


def reader_context(units: Dataset, ranking: Sequence[tuple[str, float]], budget_tokens: int) -> list[tuple[str, str]]:
    """``(title, text)`` of the top-ranked units, in rank order, within ``budget_tokens`` cl100k
    tokens (the unit that crosses the budget is cut; nothing after it is read)."""
    return within_budget(((units.corpus[u].title, units.corpus[u].text) for u, _ in ranking), budget_tokens,
                         DEFAULT_TOKENIZER)


def long_reader_runs(units_by_setting: dict[str, tuple[Dataset, dict[str, list[tuple[str, float]]]]],
                     reader: Reader, question_ids: Sequence[str], budget_tokens: int,
                     extract_over_words: int = 5, closed_book: bool = True) -> pd.DataFrame:
    """LongRAG's reader on each setting's top units within the budget: a long answer (first line,
    after an ``answer:`` label as the official post-processing does), then — when it has more than
    ``extract_over_words`` words — the extraction step for a short answer. One row
    per question × setting: EM of the short answer, answer-in-long-answer, answer-in-context, and
    ``confidence`` — the reader's geometric-mean token probability of its long answer, when the
    reader records log-probabilities (else NaN)."""
    any_units = next(iter(units_by_setting.values()))[0]
    jobs, prompts = [], []
    for qid in question_ids:
        question, answers = any_units.queries[qid], any_units.answers[qid]
        for setting, (units, run) in units_by_setting.items():
            documents = reader_context(units, run[qid], budget_tokens)
            jobs.append({"qid": qid, "setting": setting, "answers": answers,
                         "context_has_answer": float(has_answer(" ".join(t for _, t in documents), answers))})
            prompts.append(longrag_prompt(question, documents))
        if closed_book:
            jobs.append({"qid": qid, "setting": "closed-book", "answers": answers, "context_has_answer": 0.0})
            prompts.append(closedbook_prompt(question))
    long = limits.generate(reader, prompts)
    shorts = short_answers(reader, [any_units.queries[job["qid"]] for job in jobs], long, extract_over_words)
    rows = []
    for job, generation, answer in zip(jobs, long, shorts):
        rows.append({"model": reader.model_id, "qid": job["qid"], "setting": job["setting"],
                     "long_answer": generation.text,
                     "short_answer": answer.short, "extracted": answer.extracted,
                     "em": exact_match(answer.short, job["answers"]),
                     "answer_in_long": best_subspan_em(generation.text, job["answers"]),
                     "context_has_answer": job["context_has_answer"], "confidence": confidence(generation.token_logprobs),
                     "prompt_tokens": generation.prompt_tokens, "new_tokens": generation.new_tokens,
                     "max_new_tokens": reader.max_new_tokens,
                     "seconds": generation.seconds + (answer.extraction.seconds if answer.extraction else 0.0),
                     "answers": "|".join(job["answers"])})
    return pd.DataFrame(rows)


def confidence(token_logprobs: Sequence[float] | None) -> float:
    """exp(mean token log-probability): the reader's per-token confidence in what it wrote."""
    return math.exp(sum(token_logprobs) / len(token_logprobs)) if token_logprobs else float("nan")


def confidence_table(reader_rows: pd.DataFrame) -> pd.DataFrame:
    """Per reader × setting: mean confidence of right (EM 1) and wrong answers, and the AUROC of
    confidence for telling them apart (Mann–Whitney U / n₁n₀; 0.5 = no signal)."""
    rows = []
    for (model, setting), group in reader_rows.dropna(subset=["confidence"]).groupby(["model", "setting"], sort=False):
        right, wrong = group.loc[group["em"] == 1, "confidence"], group.loc[group["em"] == 0, "confidence"]
        auroc = (stats.mannwhitneyu(right, wrong).statistic / (len(right) * len(wrong))
                 if len(right) and len(wrong) else np.nan)
        rows.append({"model": model, "setting": setting, "n": len(group), "right": len(right),
                     "confidence when right": right.mean(), "confidence when wrong": wrong.mean(), "AUROC": auroc})
    return pd.DataFrame(rows)


def systems(unit: str, dense: str, pieces: str, long_dense: str = "", long_label: str = "nomic",
            maxp: Mapping[str, tuple[str, Mapping[int, str]]] | None = None) -> list[System]:
    """BM25 and the dense encoder over one unit type; long units also by their best piece (MaxP),
    by their first window, and — with ``long_dense``, a long-context encoder — by their whole text
    up to its context (tags ``unit``, ``retriever_label``). ``maxp`` adds encoders scored as the
    paper scores long units — label → (dense spec, window size → piece chunker): the encoder alone
    on passages, ``<label> · MaxP <size>`` on long units."""
    specs = [("BM25", "bm25", "none", None)]
    if unit == "passages":
        specs.append(("MiniLM", dense, "none", None))
        specs += [(label, spec, "none", None) for label, (spec, _) in (maxp or {}).items()]
    else:
        specs += [("MiniLM · MaxP", dense, pieces, "max"), ("MiniLM · first 512 tokens", dense, "none", None)]
        specs += [(f"{label} · MaxP {size}", spec, chunker, "max")
                  for label, (spec, windows) in (maxp or {}).items() for size, chunker in windows.items()]
        if long_dense:
            specs.append((f"{long_label} · whole unit (≤ its context)", long_dense, "none", None))
    return [System(retriever, chunker, aggregate, label=label, tags={"unit": unit, "retriever_label": label})
            for label, retriever, chunker, aggregate in specs]


def member_sources(units: Dataset) -> dict[str, list[str]]:
    """Each long unit's source passages: a document's (``info["members"]``) or a group's, through
    its documents (``info["groups"]``)."""
    documents = units.info.get("members")
    if not documents:
        raise ConfigError(f"{units.name}: no member passages recorded (make it with document_corpus or grouped_corpus)")
    groups = units.info.get("groups")
    if not groups:
        return {d: list(sources) for d, sources in documents.items()}  # type: ignore[union-attr]
    return {g: [s for d in members for s in documents[d]] for g, members in groups.items()}  # type: ignore[index]


def member_passage_bound(passages: Dataset, passage_run: Mapping[str, Sequence[tuple[str, float]]],
                         units: Dataset, ks: Sequence[int]) -> pd.DataFrame:
    """The bound MaxP over member passages implies: each long unit scored by the best score of the
    passages it holds (from ``passage_run``, a ranking of ``passages``' units), so the top unit
    holds the top passage and its answer recall at k units cannot fall below the passages' at k.
    Per-query ``AnswerRecall@k`` rows (``qid, measure, value``) over ``units``' texts."""
    source_of = passages.info.get("source_of")
    if not source_of:
        raise ConfigError(f"{passages.name}: no source passages recorded (make it with passage_corpus)")
    unit_of = {source: unit for unit, sources in member_sources(units).items() for source in sources}
    runs = {}
    for qid, ranking in passage_run.items():
        best: dict[str, float] = {}
        for passage, score in ranking:
            unit = unit_of[source_of[passage]]  # type: ignore[index]
            best.setdefault(unit, score)  # rankings are best first: the first score is the maximum
        runs[qid] = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    texts = {u: doc.text for u, doc in units.corpus.items()}
    return answer_recall(runs, texts, {q: units.answers[q] for q in units.queries}, ks)


def measures(ks: Sequence[int]) -> list[str]:
    """Answer recall and tokens read at every number of units retrieved."""
    return [m @ k for k in ks for m in (ANSWER_RECALL, TOKENS)]


def recall_table(aggregate: pd.DataFrame) -> pd.DataFrame:
    """``unit, retriever, corpus size, units retrieved, avg tokens, answer recall`` from the
    experiments' aggregate tables (with a ``corpus_size`` column)."""
    wide = split_cutoff(aggregate).pivot_table(index=["unit", "retriever_label", "corpus_size", "k"],
                                               columns="measure_name", values="mean", sort=False).reset_index()
    return wide.rename(columns={"retriever_label": "retriever", "corpus_size": "corpus size", "k": "units retrieved",
                                "Tokens": "avg tokens", "AnswerRecall": "answer recall"})[
        ["unit", "retriever", "corpus size", "units retrieved", "avg tokens", "answer recall"]]


PAPER_UNIT_TOKENS = {"passages": 120, "grouped documents": 4000}
"""The paper's approximate tokens per unit (ANCHORS.md: passages ~120, grouped units ~4K; it
gives none for documents)."""


def paper_points(max_units: int = 20) -> list[tuple[str, float, float]]:
    """The paper's NQ answer recall as ``(label, tokens retrieved, recall)`` reference marks: units
    retrieved × the unit's approximate tokens, for the units whose size the paper states, up to
    ``max_units`` units. A unit's first mark names it ("paper groups ×1"), its next marks only
    their count ("×4"), so neighbouring marks' labels do not run into each other."""
    rows = PAPER_NQ_RECALL[PAPER_NQ_RECALL["unit"].isin(PAPER_UNIT_TOKENS)
                           & (PAPER_NQ_RECALL["units retrieved"] <= max_units)]
    marks, named = [], set()
    for _, row in rows.iterrows():
        unit = "groups" if row["unit"] == "grouped documents" else row["unit"]
        label = f"×{row['units retrieved']}" if unit in named else f"paper {unit} ×{row['units retrieved']}"
        named.add(unit)
        marks.append((label, row["units retrieved"] * PAPER_UNIT_TOKENS[row["unit"]], row["paper AR"] / 100))
    return marks


def bound_label(encoder: str) -> str:
    """The retriever label of the member-passage bound (:func:`member_passage_bound`) with ``encoder``."""
    return f"{encoder} · max over member passages"


def bound_note(beside: pd.DataFrame, encoder: str, k: int = 1) -> str:
    """The report's sentence on what a "groups lose" verdict is about, from the member-passage bound
    table (``unit, retriever, units retrieved, answer recall``): at ``k`` units, groups ranked by
    their best member passage against the passages and against MaxP at each piece size."""
    at = beside[beside["units retrieved"] == k].set_index(["unit", "retriever"])["answer recall"]
    bound = at[("grouped documents", bound_label(encoder))]
    passages = at[("passages", encoder)]
    maxp = {int(retriever.rsplit(" ", 1)[1]): value for (unit, retriever), value in at.items()
            if unit == "grouped documents" and retriever.startswith(f"{encoder} · MaxP ")}
    pieces = ", ".join(f"{size}-token pieces {maxp[size]:.1%}" for size in sorted(maxp, reverse=True))
    return (f"Harness check: ranked by their best {encoder} member passage, groups hold the answer at AR@{k} "
            f"{bound:.1%} against the passages' {passages:.1%}; {encoder} MaxP over {pieces}. A verdict that "
            f"groups lose is about scoring a group by its best long piece here, not about grouping.")


def recall_points(per_query: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Per-query answer recall (``answer recall``) placed at its system's mean tokens read at that
    number of units (``avg tokens`` of :func:`recall_table`), so each point of the recall–tokens
    curve gets an interval."""
    rows = split_cutoff(per_query)
    rows = rows[rows["measure_name"] == ANSWER_RECALL.name]
    rows = rows.assign(retriever=rows["retriever_label"], **{"answer recall": rows["value"]})
    return rows.merge(table[["unit", "retriever", "units retrieved", "avg tokens"]],
                      left_on=["unit", "retriever", "k"], right_on=["unit", "retriever", "units retrieved"])


def with_encoder_and_scoring(points: pd.DataFrame) -> pd.DataFrame:
    """Split ``retriever`` (``"MiniLM · MaxP"``) into ``encoder`` (``MiniLM``) and how a unit is
    scored (``scoring``: ``MaxP``, ``first 512 tokens``, ``whole unit (≤ its context)``; ``whole
    unit`` when the label names none), so a figure can give each encoder a panel and each unit type
    one colour."""
    parts = points["retriever"].str.split(" · ", n=1)
    return points.assign(encoder=parts.str[0], scoring=parts.str[1].fillna("whole unit"))


MAIN_ENCODER, MAIN_WINDOW = "bge-small", 512


def main_retrievers(encoder: str = MAIN_ENCODER, window: int = MAIN_WINDOW) -> dict[str, str]:
    """The retrievers the claims read, label → ``BM25`` or ``dense``: the dense encoder alone on
    passages and by MaxP over ``window``-token pieces on long units — the paper's design, with an
    encoder trained at 512 tokens (bge-small-en-v1.5; the paper: bge-large)."""
    return {"BM25": "BM25", encoder: "dense", f"{encoder} · MaxP {window}": "dense"}
UNIT_CLAIMS = (("documents", "passages", "69.45 vs 52.24"), ("grouped documents", "passages", "71.69 vs 52.24"),
               ("grouped documents", "documents", "71.69 vs 69.45"))


def recall_claims(measure: str, corpus_note: str, encoder: str = MAIN_ENCODER) -> list[Claim]:
    """Longer units beat shorter ones at one unit retrieved (the paper's NQ AR@1), for BM25 and
    the dense retriever (MaxP for long units); compared on column ``unit`` of :func:`claim_rows`."""
    paper_ar = {"passages": 52.24, "documents": 69.45, "grouped documents": 71.69}
    return [Claim(f"{longer} beat {shorter} at one unit ({measure})", f"NQ AR@1 {text}", longer, shorter, measure,
                  +1, (paper_ar[longer] - paper_ar[shorter]) / 100, {"retriever": retriever},
                  f"{encoder if retriever == 'dense' else 'BM25'} (paper: bge-large); {corpus_note}")
            for retriever in ("dense", "BM25") for longer, shorter, text in UNIT_CLAIMS]


def claim_rows(per_query: pd.DataFrame, encoder: str = MAIN_ENCODER, window: int = MAIN_WINDOW) -> pd.DataFrame:
    """The per-query rows of the main retriever of each unit type, labelled ``retriever`` BM25 or
    dense (:func:`main_retrievers`)."""
    main = main_retrievers(encoder, window)
    rows = per_query[per_query["retriever_label"].isin(list(main))]
    return rows.assign(retriever=rows["retriever_label"].map(main))


def reader_claims(models: Sequence[str]) -> list[Claim]:
    """Per reader: with the same token budget, grouped documents give more exact answers than passages."""
    return [Claim("grouped documents beat passages as reader context (EM, same token budget)",
                  f"LongRAG's premise; its reader reaches EM {PAPER_NQ_READER_EM['EM']} with "
                  f"{PAPER_NQ_READER_EM['units']} (no same-budget passage baseline in the paper)",
                  "grouped documents", "passages", None, +1, None, {"model": model},
                  f"{model.split('/')[-1]} (paper: {PAPER_NQ_READER_EM['reader']})") for model in models]


def report(table: pd.DataFrame, reader_table: pd.DataFrame, note: str, verdicts: pd.DataFrame | None = None,
           encoder: str = MAIN_ENCODER, window: int = MAIN_WINDOW) -> Report:
    """The paper's NQ answer recall beside ours (dense retriever, MaxP for long units) at the
    paper's numbers of units, and the reader's EM per setting beside the paper's."""
    dense = [label for label, kind in main_retrievers(encoder, window).items() if kind == "dense"]
    ours = table[table["retriever"].isin(dense)]
    side = PAPER_NQ_RECALL.merge(ours, on=["unit", "units retrieved"], how="left")
    rows = [{"claim": "fewer, longer units reach higher answer recall (NQ, %)", "unit": r["unit"],
             "units retrieved": r["units retrieved"], "paper": r["paper AR"],
             "ours": round(100 * r["answer recall"], 2) if pd.notna(r["answer recall"]) else None,
             "paper corpus size": r["paper corpus size"], "corpus size": r["corpus size"],
             "avg tokens": r["avg tokens"]} for _, r in side.iterrows()]
    paper_em = f"EM {PAPER_NQ_READER_EM['EM']} ({PAPER_NQ_READER_EM['reader']}, {PAPER_NQ_READER_EM['units']})"
    rows += [{"claim": "a long-context reader over long units answers well (EM, %)", "unit": r["setting"],
              "reader": str(r.get("model", "")).split("/")[-1], "n": r["n"],
              "paper": paper_em, "ours": round(100 * r["em"], 1),
              "95% CI": f"{100 * r['em_low']:.1f}–{100 * r['em_high']:.1f}",
              "answer in long answer (%)": round(100 * r["answer_in_long"], 1),
              "answer in context (%)": round(100 * r["context_has_answer"], 1)} for _, r in reader_table.iterrows()]
    return Report("LongRAG long retrieval units", pd.DataFrame(rows), note, floatfmt=".2f", verdicts=verdicts)


UNITS = ("passages", "documents", "grouped documents")
"""The unit types, shortest first; each is one experiment, ``results/longrag/<profile>/<unit>``."""


def experiment_folder(unit: str) -> str:
    """The folder of a unit type's experiment under ``results/longrag/<profile>/``."""
    return unit.replace(" ", "_")


def corpus_note(sizes: Mapping[str, int]) -> str:
    """The corpus sizes beside the paper's, for the recall claims (``sizes``: unit type → units)."""
    return (f"{sizes['passages']} passages / {sizes['documents']} documents / {sizes['grouped documents']} groups "
            "(paper: 22M / 3M / 600K)")


def reader_tables(reader_rows: pd.DataFrame, models: Sequence[str], budget: int, n_resamples: int = 10_000,
                  seed: int = 0) -> dict[str, pd.DataFrame]:
    """The reader tables derived from the reader runs, by file name: generations at their limit,
    exact match (and answer in the long answer, context holding it) per reader × setting with 95%
    intervals, each other reader against ``models[0]``, and the readers' confidence."""
    table = means_with_ci(reader_rows, ["model", "setting"], ["em", "answer_in_long", "context_has_answer"],
                          n_resamples, seed)
    table.insert(3, "budget tokens", [0 if s == "closed-book" else budget for s in table["setting"]])
    by_setting = reader_rows.groupby(["model", "setting"], sort=False)
    table["extracted share"] = by_setting["extracted"].mean().to_numpy()
    table["mean prompt tokens"] = by_setting["prompt_tokens"].mean().to_numpy()
    tests = pd.concat([paired_between(reader_rows, "model", [(m, models[0]) for m in models[1:]], value, "setting",
                                      n_resamples=n_resamples, seed=seed).assign(measure=value)
                       for value in ("em", "answer_in_long")], ignore_index=True)
    return {"token_limits.csv": token_limit_table(reader_rows), "reader_em.csv": table,
            "reader_size_tests.csv": tests, "reader_confidence.csv": confidence_table(reader_rows)}


def tested_tables(unit_per_query: pd.DataFrame, reader_rows: pd.DataFrame, gold_document: Mapping[str, str],
                  models: Sequence[str], note: str, encoder: str = MAIN_ENCODER, n_resamples: int = 10_000,
                  seed: int = 0) -> dict[str, pd.DataFrame]:
    """The verdicts, by file name: longer units against shorter ones at one unit retrieved (the
    paper's AR@1 contrasts) and, per reader, groups against passages as context; Holm within each
    family; questions sharing a gold document (``gold_document``: question → document) are one
    cluster."""
    recall_rows = claim_rows(unit_per_query, encoder)
    verdicts = pd.concat([
        verdict_table(recall_rows.assign(document=recall_rows["qid"].map(gold_document)),
                      recall_claims(ANSWER_RECALL @ 1, note, encoder), system_col="unit", n_resamples=n_resamples,
                      seed=seed, cluster_col="document").assign(family="answer recall"),
        verdict_table(reader_rows.assign(document=reader_rows["qid"].map(gold_document)), reader_claims(models),
                      system_col="setting", value_col="em", n_resamples=n_resamples, seed=seed,
                      cluster_col="document").assign(family="reader EM")], ignore_index=True)
    return {"verdicts.csv": verdicts}


def derived_tables(folder: Path, load: Callable[[str], Dataset]) -> dict[str, pd.DataFrame]:
    """The recall, reader and verdict tables rebuilt from a run's stored per-query tables and
    reader runs (``results/longrag/<profile>/``), the documents rebuilt from their recorded recipe
    for the questions' gold documents, with the parameters the run's manifest records."""
    parameters = json.loads((folder / "manifest.json").read_text("utf-8"))["parameters"]
    quick = parameters.get("profile") == "quick"
    n, seed = int(parameters["N_RESAMPLES"]), int(parameters["SEED"])
    experiments = {unit: folder / experiment_folder(unit) for unit in UNITS}
    sizes = {unit: int(experiment_manifest(path)["parameters"]["n_docs"]) for unit, path in experiments.items()}
    aggregates = pd.concat([stored_aggregate(path).assign(corpus_size=sizes[unit])
                            for unit, path in experiments.items()], ignore_index=True)
    unit_per_query = pd.concat([stored_per_query(path) for path in experiments.values()], ignore_index=True)
    documents = rebuild(experiment_manifest(experiments["documents"])["parameters"]["recipe"], load)
    reader_rows = pd.read_csv(folder / "reader_runs.csv")
    models = list(parameters["QUICK_READERS" if quick else "READERS"])
    budget = int(parameters["QUICK_READER_TOKENS" if quick else "READER_TOKENS"])
    return {"answer_recall.csv": recall_table(aggregates),
            **reader_tables(reader_rows, models, budget, n, seed),
            **tested_tables(unit_per_query, reader_rows, gold_clusters(documents), models, corpus_note(sizes),
                            parameters["MAXP_ENCODER"], n, seed)}


def reader_note(reader_table: pd.DataFrame, settings: Sequence[str] = UNITS) -> str:
    """What the readers made of each unit type as context, from ``reader_em.csv``: exact match and
    the share of contexts holding the answer per reader, over ``settings`` in order."""
    parts = []
    for model, rows in reader_table.groupby("model", sort=False):
        at = rows.set_index("setting")
        shown = [s for s in settings if s in at.index]
        em = " / ".join(f"{at.loc[s, 'em']:.2f}" for s in shown)
        held = " / ".join(f"{at.loc[s, 'context_has_answer']:.0%}" for s in shown)
        parts.append(f"{model.split('/')[-1]} (n={int(at['n'].max())}): exact match {em}, context holds the answer "
                     f"{held}")
    return f"Readers over {' / '.join(settings)} at the same token budget: " + "; ".join(parts) + "."
