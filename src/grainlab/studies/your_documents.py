"""The chunking decision on a user's own documents (``grainlab compare``, notebook 09).

The procedure practitioners follow, over grainlab's shared layers:

1. Documents with ids and revisions (``data.documents``) and questions with gold evidence spans
   (``data.evidence``), or any registered/BEIR dataset (its gold spans, or its relevant documents
   as spans).
2. A **tuning split** (``tune_share`` of the questions, chosen by a hash of each id, so it is
   stable) picks the candidate and the unanswerable-score threshold; the rest **confirms** it,
   once.
3. Candidates differ in the chunker only; extraction, the encoder and search are fixed
   (``DEFAULT_CANDIDATES``: fixed 256/32, fixed 512/64, structure sections ≤ 800, 256-token children
   returning their heading-level parent ≤ 1,200).
4. One table decides (:func:`decision_table`): Hit@k, MRR@10, boundary retention, citation match,
   duplication (tokens indexed beyond the text covered), mean retrieved tokens, chunk count, embedding tokens and cost, false retrievals of
   unanswerable questions, seconds — with the misses' question ids beside the rates and one
   ``pass_<criterion>`` column per acceptance criterion.
5. The stop rule (:func:`recommend`): among the candidates within 1 point of the best Hit@k on
   the tuning split, one whose index costs at most half the best's is kept (the cheapest such).
6. Every failed question is attributed to the first stage that lost it (:func:`failure_stages`).
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from grainlab.cache import ArtifactCache
from grainlab.chunking.citations import citation_records
from grainlab.chunking.factory import get_chunker
from grainlab.data import evidence_clusters, gold_clusters, load_dataset
from grainlab.data.documents import SourceDocument, load_documents
from grainlab.data.evidence import evidence_dataset, load_questions
from grainlab.data.recipes import derivation
from grainlab.data.types import Dataset
from grainlab.errors import ConfigError
from grainlab.evaluation.registry import CITATION_MATCH, SPAN_COVERED, SPAN_HIT, SPAN_RR, TOKENS
from grainlab.evaluation.significance import (
    cluster_bootstrap_ci,
    cluster_randomization_test,
    design_effect,
    holm,
)
from grainlab.evaluation.spans import covers, excess_tokens
from grainlab.experiments import System, chunk_corpus, run_experiment
from grainlab.experiments.engine import FINAL, last_stage
from grainlab.experiments.systems import Stages, canonical
from grainlab.files import atomic_write_text
from grainlab.formatting import cell, count, share
from grainlab.languages import resolve_language
from grainlab.models.tokenizers import get_tokenizer
from grainlab.retrieval import get_retriever
from grainlab.retrieval.ann import IndexSpec
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.spec import format_spec, parse_spec
from grainlab.studies.report import Report
from grainlab.types import Run

DEFAULT_RETRIEVER = "dense(model=sentence-transformers/all-MiniLM-L6-v2)"
DEFAULT_RETRIEVERS = {"en": DEFAULT_RETRIEVER, "ja": "bm25(language=ja)"}  # the offline encoders are English-only
DEFAULT_CANDIDATES = {
    "A: fixed 256/32": "fixed_tokens(size=256,overlap=32)",
    "B: fixed 512/64": "fixed_tokens(size=512,overlap=64)",
    "C: sections ≤ 800": "structure(size=800)",
    "D: 256 → parent ≤ 1200": "parent_child(child_size=256,parent_size=1200,parents=structure)",
}
STAGES = ("source", "extraction", "chunking", "embedding", "index", "search")
MRR_K = 10
STOP_POINTS = 0.01  # "less than 1 point of Hit@k"
STOP_COST = 2.0  # "while one costs twice the index"
ALPHA = 0.05
THRESHOLD_QUANTILE = 0.1  # the unanswerable threshold: 90% of the tuning split's hits score above it
DEFAULT_ACCEPT = "hit@{k}>=0.92,boundary_retention>=0.9,mean_tokens<=3000"
"""The issue's example criteria; ``{k}`` is the run's cutoff."""
CRITERION = re.compile(r"^\s*([a-z_@0-9]+)\s*(>=|<=|>|<)\s*([0-9.eE+-]+)\s*$")


@dataclass(frozen=True)
class Criterion:
    """An acceptance criterion on a decision-table column, e.g. ``hit@5>=0.92``."""

    column: str
    op: str
    value: float

    @property
    def name(self) -> str:
        return f"pass_{self.column}{self.op}{self.value:g}"

    def passes(self, observed: float) -> bool:
        if observed is None or (isinstance(observed, float) and math.isnan(observed)):
            return False
        return {">=": observed >= self.value, "<=": observed <= self.value,
                ">": observed > self.value, "<": observed < self.value}[self.op]


def parse_criteria(text: str | Sequence[str] | None, k: int = 5) -> list[Criterion]:
    """``"hit@5>=0.92,boundary_retention>=0.9"`` → criteria; ``hit@k`` names are checked against
    the run's ``k``. An unknown column or a malformed criterion is an error naming it."""
    if not text:
        return []
    parts = [p.replace("{k}", str(k)) for chunk in ([text] if isinstance(text, str) else text)
             for p in chunk.split(",") if p.strip()]
    columns = set(decision_columns(k))
    out = []
    for part in parts:
        match = CRITERION.match(part)
        if not match:
            raise ConfigError(f"acceptance criterion {part!r}: write it as column>=value (or <=, >, <)")
        column, op, value = match.groups()
        if column not in columns:
            raise ConfigError(f"acceptance criterion {part!r}: no column {column!r}; the decision table has "
                              f"{sorted(columns)}")
        out.append(Criterion(column, op, float(value)))
    return out


def decision_columns(k: int) -> list[str]:
    """The decision table's measure columns at cutoff ``k``."""
    return [f"hit@{k}", f"mrr@{MRR_K}", "boundary_retention", "citation_match", "duplication", "mean_tokens",
            "chunks", "embed_tokens", "cost", "unanswerable_false_hits", "seconds"]


def tuning_split(qids: Sequence[str], share: float, seed: int = 0) -> dict[str, str]:
    """Question id → ``tune`` or ``confirm``: a question is in the tuning split when the SHA-256 of
    ``seed:id`` (as a fraction of 2⁶⁴) is below ``share``, so adding questions never moves others."""
    if not 0.0 < share < 1.0:
        raise ConfigError(f"tune_share must be between 0 and 1 (exclusive), got {share}")
    def fraction(qid: str) -> float:
        return int(hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()[:16], 16) / 2 ** 64
    return {q: "tune" if fraction(q) < share else "confirm" for q in qids}


# ---------------------------------------------------------------------------------------------
# inputs


@dataclass
class Inputs:
    """A dataset with gold spans and the source documents behind it; ``questions_from`` says who
    wrote the questions (``yours``, or ``generated by <model>``)."""

    dataset: Dataset
    documents: dict[str, SourceDocument]
    questions_from: str = "yours"


@derivation
def subset_inputs(inputs: Inputs, documents: Sequence[str] = (), questions_per_document: int = 0) -> Inputs:
    """Only ``documents`` (all when empty) and the questions about them, at most
    ``questions_per_document`` each (all when 0), in their order: a quick profile."""
    dataset = inputs.dataset
    keep = set(documents) if documents else set(dataset.corpus)
    unknown = keep - set(dataset.corpus)
    if unknown:
        raise ConfigError(f"no document(s) {sorted(unknown)}; the corpus has {sorted(dataset.corpus)[:10]}")
    document_of = dataset.info.get("document_of") or {}
    taken: dict[str, int] = {}
    qids = []
    for qid in dataset.queries:
        doc = document_of.get(qid, "")
        if doc and doc not in keep:
            continue
        taken[doc] = taken.get(doc, 0) + 1
        if not questions_per_document or taken[doc] <= questions_per_document:
            qids.append(qid)
    smaller = dataset.subset(qids, sorted(keep))
    smaller.info["gold_spans"] = {q: dataset.info["gold_spans"][q] for q in qids if q in dataset.info["gold_spans"]}
    return Inputs(smaller, {k: d for k, d in inputs.documents.items() if k in keep}, inputs.questions_from)


def source_documents(dataset: Dataset) -> dict[str, SourceDocument]:
    """A dataset's corpus as source documents (no revision; raw = text)."""
    kind = dataset.info.get("kind") or {}
    return {d.doc_id: SourceDocument(d.doc_id, "", d.text, d.title, kind.get(d.doc_id, "text"), d.doc_id, d.text)
            for d in dataset.corpus.values()}


def _with_spans(dataset: Dataset) -> Dataset:
    """A registered or BEIR dataset with evidence spans: its own (Chroma's excerpts), or each
    relevant document whole (document-level evidence, stated by ``info["evidence"]``)."""
    info = dict(dataset.info)
    if "gold_spans" in info:
        spans = {q: [tuple(s) for s in v] for q, v in info["gold_spans"].items()}
        info["evidence"] = "gold spans"
    else:
        spans = {q: [(d, 0, len(dataset.corpus[d].text)) for d, grade in docs.items() if grade > 0]
                 for q, docs in dataset.qrels.items()}
        info["evidence"] = "relevant documents (no spans: each whole document is the evidence)"
    spans = {q: s for q, s in spans.items() if s}
    info["gold_spans"] = spans
    info.setdefault("category", {q: "single span" if len(s) == 1 else "several spans" for q, s in spans.items()})
    info.setdefault("answerable", {q: q in spans for q in dataset.queries})
    info.setdefault("document_of", {q: s[0][0] for q, s in spans.items()})
    info.setdefault("kind", {d: d for d in dataset.corpus} if len(dataset.corpus) <= 20 else {})
    answers = {q: [dataset.corpus[d].text[a:b] for d, a, b in s] for q, s in spans.items()}
    return Dataset(dataset.name, dataset.corpus, dataset.queries,
                   {q: dataset.qrels.get(q) or {s[0][0]: 1} for q, s in spans.items()}, answers, info)


@derivation(paths=("documents", "questions", "exclude"), ignore=("mirror",))
def load_inputs(documents: str | Path, questions: str | Path | None = None, keep_unlocated: bool = False,
                mirror: str | None = None, exclude: Sequence[str | Path] = ()) -> Inputs:
    """``documents``: a folder, a ``documents.jsonl``, a BEIR folder or a registered dataset name;
    ``questions``: a ``questions.jsonl`` (needed unless ``documents`` is a dataset with questions)."""
    path = Path(str(documents)).expanduser()
    beir = path.is_dir() and (path / "corpus.jsonl").is_file()
    pattern = any(c in str(documents) for c in "*?[")
    if questions is None and (beir or not (path.exists() or pattern)):
        dataset = _with_spans(load_dataset(str(documents), mirror=mirror))
        return Inputs(dataset, source_documents(dataset))
    if questions is None:
        raise ConfigError(f"{documents}: give a questions.jsonl, or generate questions first "
                          "(grainlab questions DOCS --out questions.jsonl)")
    docs = load_documents(path, exclude=exclude)
    found = load_questions(questions, docs, keep_unlocated)
    generated = [q for q in found if q.generated]
    source = "yours" if not generated else ("generated" if len(generated) == len(found) else "yours and generated")
    if generated and "model" in generated[0].extra:
        source += f" by {generated[0].extra['model']}"
    dataset = evidence_dataset(path.parent.name if pattern else path.name, docs, found)
    return Inputs(dataset, {d.key: d for d in docs}, source)


# ---------------------------------------------------------------------------------------------
# systems and measures


def parse_candidates(items: Sequence[str] | None) -> dict[str, str]:
    """``["A=fixed_tokens(size=256)", "structure(size=800)"]`` → ``{label: spec}`` (a bare spec is
    its own label); ``None`` or empty → :data:`DEFAULT_CANDIDATES`. Each spec is checked."""
    if not items:
        return dict(DEFAULT_CANDIDATES)
    out = {}
    for item in items:
        label, sep, spec = item.partition("=")
        if not sep or "(" in label:
            label, spec = item, item
        get_chunker(spec)
        if label.strip() in out:
            raise ConfigError(f"candidate label {label.strip()!r} is given twice")
        out[label.strip()] = spec.strip()
    return out


def is_parent_child(spec: str) -> bool:
    return get_chunker(spec).has_parents


def exact_spec(spec: str) -> str:
    """The retriever with its vector index replaced by exact search (the spec itself when exact)."""
    name, params = parse_spec(canonical(spec))
    if name == "dense" and "index" in params and not IndexSpec.parse(str(params["index"])).exact:
        params.pop("index")
    return format_spec(name, params)


def measures(k: int) -> list[str]:
    return [SPAN_HIT @ k, SPAN_RR @ MRR_K, SPAN_COVERED @ k, CITATION_MATCH @ k, TOKENS @ k]


def candidate_systems(chunkers: Mapping[str, str], retrievers: str | Sequence[str],
                      reranker: str | None = None, k: int = 5) -> list[System]:
    """Each candidate under one search (tag ``check=system``): a retriever, several fused by RRF,
    optionally a cross-encoder reranker (then the last stage, one unit per document, is what is
    shown). Beside it, the evidence the failure stages need: the first retriever with exact search
    (``check=exact``) and, when its index is approximate, as given (``check=first``) — each added
    only where it differs from the system itself."""
    specs = [retrievers] if isinstance(retrievers, str) else list(retrievers)
    if not specs:
        raise ConfigError("compare needs a retriever spec")
    staged = len(specs) > 1 or reranker is not None
    stages = Stages(fusion="rrf" if len(specs) > 1 else None, reranker=reranker, candidate_k=max(100, k),
                    rerank_k=max(20, k), context_k=k) if staged else None
    exact, first = exact_spec(specs[0]), canonical(specs[0])
    out = []
    for label, spec in chunkers.items():
        parents = is_parent_child(spec)
        if parents and staged:
            raise ConfigError(f"{label}: a parent–child candidate returns parents itself; compare it with one "
                              "retriever and no reranker, or drop it from this run")
        aggregate = "max" if parents else None
        checks: list[tuple[str | tuple[str, ...], str, str, Stages | None]] = [
            (tuple(specs) if len(specs) > 1 else specs[0], "system", "", stages)]
        if staged or exact != first:
            checks.append((exact, "exact", " · exact", None))
        if staged and exact != first:
            checks.append((first, "first", " · first stage", None))
        out += [System(retriever, spec, aggregate, parents=parents, stages=with_stages, label=f"{label}{suffix}",
                       tags={"candidate": label, "check": check})
                for retriever, check, suffix, with_stages in checks]
    return out


def _wide(per_query: pd.DataFrame) -> pd.DataFrame:
    """One row per candidate × check × question at each system's last stage, measures as columns."""
    per_query = last_stage(per_query).assign(staged=lambda f: f["stage"] != FINAL)
    return per_query.pivot_table(index=["candidate", "check", "staged", "qid"], columns="measure", values="value",
                                 aggfunc="first").reset_index()


# ---------------------------------------------------------------------------------------------
# the comparison


@dataclass
class Comparison:
    """Everything ``compare`` writes (see :func:`compare`)."""

    decision: pd.DataFrame
    tuning: pd.DataFrame
    by_category: pd.DataFrame
    failures: pd.DataFrame
    paired: pd.DataFrame
    recommendation: str
    recommended: str
    per_question: pd.DataFrame
    criteria: list[Criterion] = field(default_factory=list)
    info: dict[str, object] = field(default_factory=dict)


def _units(dataset: Dataset, spec: str, cache: ArtifactCache) -> tuple[list, list]:
    """The units a candidate searches and the units it returns (parents for parent–child)."""
    chunker = get_chunker(spec)
    searched = chunk_corpus(dataset, chunker, cache)
    if chunker.has_parents:
        return searched, [p for doc in dataset.corpus.values() for p in chunker.parents_of(doc)]
    return searched, searched


def failure_stages(per_question: pd.DataFrame, dataset: Dataset, returned: Mapping[str, list], k: int) -> pd.DataFrame:
    """One row per answerable question × candidate that missed (no top-``k`` unit overlaps its
    evidence): ``stage`` = the first stage that lost it — **source** / **extraction** (the answer
    could not be located: ``info["lost_at"]``), **chunking** (no unit the candidate returns holds a
    whole gold span), **embedding** (exact search misses too), **index** (exact search finds it,
    the approximate index does not), **search** (what follows the first stage dropped it)."""
    spans = dataset.info.get("gold_spans") or {}
    lost_at = dataset.info.get("lost_at") or {}
    hit = f"SpanHit@{k}"
    rows = []
    for candidate, group in per_question.groupby("candidate", sort=False):
        by_doc: dict[str, list] = {}
        for unit in returned[candidate]:
            by_doc.setdefault(unit.doc_id, []).append(unit)
        system = group[group["check"] == "system"].set_index("qid")
        exact = group[group["check"] == "exact"].set_index("qid")
        first = group[group["check"] == "first"].set_index("qid")
        staged = bool(group["staged"].any())
        for qid, row in system.iterrows():
            if not row["answerable"] or row[hit] > 0:
                continue
            gold = [tuple(s) for s in spans.get(qid, [])]
            if qid in lost_at:
                stage = lost_at[qid]
            elif not any(covers(u, g) for g in gold for u in by_doc.get(g[0], [])):
                stage = "chunking"
            elif (exact.loc[qid, hit] if qid in exact.index else row[hit]) == 0:
                stage = "embedding"
            elif qid in first.index and first.loc[qid, hit] == 0 or qid not in first.index and not staged:
                stage = "index"  # exact search finds it, the approximate index does not
            else:
                stage = "search"  # the first stage finds it; fusion, reranking or the context cut dropped it
            rows.append({"question_id": qid, "chunker": candidate, "stage": stage, "split": row["split"],
                         "category": row["category"], "document": row["document"],
                         "evidence": " … ".join(dataset.corpus[d].text[a:b][:160] for d, a, b in gold)})
    return pd.DataFrame(rows, columns=["question_id", "chunker", "stage", "split", "category", "document", "evidence"])


def _shown_runs(result, systems: Sequence[System]) -> dict[str, Run]:
    """Each candidate's run as shown (its last stage), from the saved runs."""
    return {dict(s.tags)["candidate"]: result.run(s.display, "context" if s.stages is not None else FINAL)
            for s in systems if dict(s.tags)["check"] == "system"}


def _rate(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else math.nan


def _ids(frame: pd.DataFrame, mask: pd.Series) -> str:
    return ";".join(frame.loc[mask, "qid"].astype(str))


def _summary(rows: pd.DataFrame, k: int, costs: Mapping[str, Mapping[str, float]], thresholds: Mapping[str, float],
             scores: Mapping[str, Mapping[str, float]], criteria: Sequence[Criterion]) -> pd.DataFrame:
    hit, rr, held, cite, tokens = (f"SpanHit@{k}", f"SpanRR@{MRR_K}", f"SpanCovered@{k}", f"CitationMatch@{k}",
                                   f"Tokens@{k}")
    out = []
    for candidate, group in rows.groupby("candidate", sort=False):
        answerable = group[group["answerable"]]
        unanswerable = group[~group["answerable"]]
        top, cut = scores[candidate], thresholds[candidate]
        false_hit = unanswerable["qid"].map(lambda q, top=top, cut=cut: top.get(q, -math.inf) >= cut).astype(bool)
        row = {"chunker": candidate, "spec": costs[candidate]["spec"], "questions": len(group),
               "answerable": len(answerable), f"hit@{k}": _rate(answerable[hit]),
               f"mrr@{MRR_K}": _rate(answerable[rr]), "boundary_retention": _rate(answerable[held]),
               "citation_match": _rate(answerable[cite]),
               **{c: costs[candidate][c] for c in ("duplication", "chunks", "embed_tokens", "cost")},
               "mean_tokens": _rate(answerable[tokens]),
               "unanswerable_false_hits": _rate(false_hit.astype(float)) if len(unanswerable) else math.nan,
               "threshold": thresholds[candidate], "seconds": costs[candidate]["seconds"],
               f"hit@{k}_misses": int((answerable[hit] == 0).sum()),
               f"hit@{k}_missed_ids": _ids(answerable, answerable[hit] == 0),
               "boundary_misses": int((answerable[held] == 0).sum()),
               "boundary_missed_ids": _ids(answerable, answerable[held] == 0),
               "false_hits": int(false_hit.sum()), "false_hit_ids": _ids(unanswerable, false_hit)}
        for criterion in criteria:
            row[criterion.name] = criterion.passes(row[criterion.column])
        out.append(row)
    frame = pd.DataFrame(out)
    order = ["chunker", *decision_columns(k)]
    return frame[order + [c for c in frame.columns if c not in order]]


def recommend(tuning: pd.DataFrame, k: int) -> tuple[str, str]:
    """The candidate the tuning split picks, and why: the best Hit@k — unless a candidate within 1
    point of it indexes at most half as many tokens (the stop rule), then the cheapest such."""
    hit = f"hit@{k}"
    best = tuning.sort_values([hit, "embed_tokens"], ascending=[False, True]).iloc[0]
    close = tuning[(tuning[hit] >= best[hit] - STOP_POINTS - 1e-12)
                   & (tuning["embed_tokens"] * STOP_COST <= best["embed_tokens"])]
    if close.empty:
        tied = tuning[tuning[hit] >= best[hit] - 1e-12]
        reason = f"the best Hit@{k} on the tuning split ({best[hit]:.3f}"
        if len(tied) > 1:
            reason += f", tied with {len(tied) - 1} other{'s' if len(tied) > 2 else ''}: the smallest index of those"
        return str(best["chunker"]), reason + ")"
    pick = close.sort_values("embed_tokens").iloc[0]
    return str(pick["chunker"]), (f"within 1 point of the best Hit@{k} on the tuning split ({pick[hit]:.3f} vs "
                                  f"{best['chunker']}'s {best[hit]:.3f}) at {pick['embed_tokens'] / best['embed_tokens']:.0%} "
                                  "of its index (the stop rule keeps the cheaper)")


def paired_tests(rows: pd.DataFrame, recommended: str, measure: str, clusters: Mapping[str, str],
                 n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Each other candidate against the recommended one on ``measure`` (answerable questions):
    mean difference, cluster bootstrap interval, cluster randomization p (Holm over the pairs),
    design effect and number of clusters."""
    table = rows[rows["answerable"]].pivot_table(index="qid", columns="candidate", values=measure, aggfunc="first")
    labels = np.array([clusters.get(q, q) for q in table.index])
    out = []
    for candidate in table.columns:
        if candidate == recommended:
            continue
        diff = (table[candidate] - table[recommended]).to_numpy(dtype=float)
        low, high = cluster_bootstrap_ci(diff, labels, n_resamples=n_resamples, seed=seed)
        out.append({"chunker": candidate, "versus": recommended, "measure": measure, "delta": float(diff.mean()),
                    "ci_low": low, "ci_high": high,
                    "p": cluster_randomization_test(table[candidate].to_numpy(float), table[recommended].to_numpy(float),
                                                    labels, n_resamples, seed),
                    "design_effect": design_effect(diff, labels), "clusters": int(len(set(labels))),
                    "questions": len(diff)})
    frame = pd.DataFrame(out)
    if not frame.empty:
        frame["p_holm"] = holm(frame["p"].tolist())
    return frame


def retriever_contrast(comparisons: Mapping[str, Comparison], dataset: Dataset, k: int = 5,
                       n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Two retrievers side by side on the same chunkers and questions (``compare`` run once with
    each): per chunker, each retriever's Hit@k and MRR@10 over every answerable question, and the
    first minus the second on Hit@k with a cluster bootstrap interval and a cluster randomization
    p (clusters: :func:`question_clusters`; Holm over the chunkers)."""
    if len(comparisons) != 2:
        raise ConfigError(f"a retriever contrast needs two comparisons, got {len(comparisons)}")
    (first, a), (second, b) = comparisons.items()
    clusters, cluster_name = question_clusters(dataset)
    hit, rr = f"SpanHit@{k}", "SpanRR@10"
    rows = []
    for chunker in a.per_question["candidate"].unique():
        pair = [c.per_question[(c.per_question["candidate"] == chunker) & (c.per_question["check"] == "system")
                               & c.per_question["answerable"]].set_index("qid") for c in (a, b)]
        qids = [q for q in pair[0].index if q in pair[1].index]
        x, y = (frame.loc[qids, hit].to_numpy(float) for frame in pair)
        labels = np.array([clusters.get(q, q) for q in qids])
        low, high = cluster_bootstrap_ci(x - y, labels, n_resamples=n_resamples, seed=seed)
        rows.append({"chunker": chunker, f"{hit} · {first}": x.mean(), f"{hit} · {second}": y.mean(),
                     f"{rr} · {first}": pair[0].loc[qids, rr].mean(), f"{rr} · {second}": pair[1].loc[qids, rr].mean(),
                     "delta": float((x - y).mean()), "ci_low": low, "ci_high": high,
                     "p": cluster_randomization_test(x, y, labels, n_resamples, seed), "questions": len(qids),
                     "clusters": int(len(set(labels))), "cluster": cluster_name,
                     "design_effect": design_effect(x - y, labels)})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["p_holm"] = holm(frame["p"].tolist())
    return frame.assign(versus=f"{first} − {second}", language=a.info.get("language"))


def question_clusters(dataset: Dataset) -> tuple[dict[str, str], str]:
    """The unit questions share: their gold document when there are at least 10 gold documents,
    else their overlapping evidence (``data.evidence_clusters``) — a handful of documents is too few
    clusters for any test."""
    located = dataset.subset([q for q in dataset.queries if q in dataset.qrels])
    by_document = gold_clusters(located)
    if len(set(by_document.values())) >= 10:
        return by_document, "gold document"
    return evidence_clusters(located), "overlapping evidence (fewer than 10 gold documents)"


def corpus_language(inputs: Inputs, language: str = "auto") -> str:
    """``language``, or the one detected from the documents' text when it is ``auto``."""
    return resolve_language(language, [d.text for d in inputs.dataset.corpus.values()])


def compare(inputs: Inputs, chunkers: Mapping[str, str] | None = None,
            retriever: str | Sequence[str] | None = None, *, reranker: str | None = None, k: int = 5,
            tune_share: float = 0.2, price_per_mtok: float = 0.02, accept: str | None = DEFAULT_ACCEPT,
            threshold: float | None = None, out: str | Path, cache: ArtifactCache | None = None, seed: int = 0,
            n_resamples: int = 10_000, progress: bool = True, language: str = "auto") -> Comparison:
    """Every candidate chunker on the inputs, scored, attributed, tested and written under ``out``:
    ``decision.csv`` (the confirmation split), ``tuning.csv``, ``by_category.csv``,
    ``failures.csv``, ``paired.csv``, ``per_question.csv``, ``chunks.jsonl``, ``report.html``
    and ``summary.json``. ``language`` (``auto``: detected from the documents) picks the default
    retriever (:data:`DEFAULT_RETRIEVERS`) and is stated in the decision tables."""
    from tqdm.auto import tqdm

    started = time.perf_counter()
    language = corpus_language(inputs, language)
    retriever = retriever or DEFAULT_RETRIEVERS[language]
    for spec in [retriever] if isinstance(retriever, str) else retriever:
        name, params = parse_spec(spec)
        if language == "ja" and name == "bm25" and params.get("language", "en") != "ja":
            warnings.warn(f"{spec} splits Japanese text at spaces, so it matches almost nothing: use "
                          "bm25(language=ja) (morphemes)", UserWarning, stacklevel=2)
    chunkers = dict(chunkers or DEFAULT_CANDIDATES)
    criteria = parse_criteria(accept, k)
    dataset, out = inputs.dataset, Path(out)
    cache = cache or ArtifactCache()
    split = tuning_split(list(dataset.queries), tune_share, seed)
    held_out = {"tune", "confirm"} <= set(split.values())  # else too few questions: all of them pick and confirm

    def part(table: pd.DataFrame, name: str) -> pd.DataFrame:
        return table[table["split"] == name] if held_out else table

    systems = candidate_systems(chunkers, retriever, reranker, k)
    loading = time.perf_counter()
    for spec in [retriever] if isinstance(retriever, str) else retriever:
        get_retriever(spec, cache)  # its model loads once here; every candidate's system shares it
    load_seconds = time.perf_counter() - loading
    stages = tqdm(total=4, desc="compare: stages", disable=not progress)
    result = run_experiment(dataset, systems, measures(k), name="experiment", results_dir=out, cache=cache,
                            save_runs=True, progress=progress, seed=seed, n_resamples=min(n_resamples, 1000))
    stages.update()
    info = dataset.info
    wide = _wide(result.per_query)
    checks = wide[["candidate", "check", "staged"]].drop_duplicates()
    rows = checks.merge(pd.DataFrame({"qid": list(dataset.queries)}), how="cross")
    rows = rows.merge(wide, on=["candidate", "check", "staged", "qid"], how="left")
    rows["answerable"] = rows["qid"].map(lambda q: bool((info.get("answerable") or {}).get(q, q in dataset.qrels)))
    for column in measures(k):
        rows[column] = rows[column].astype(float)
        rows.loc[rows["answerable"], column] = rows.loc[rows["answerable"], column].fillna(0.0)  # unlocated: a miss
    rows["split"] = rows["qid"].map(split)
    rows["category"] = rows["qid"].map(lambda q: (info.get("category") or {}).get(q, "unlabelled"))
    rows["document"] = rows["qid"].map(lambda q: (info.get("document_of") or {}).get(q, ""))
    rows["document_kind"] = rows["document"].map(lambda d: (info.get("kind") or {}).get(d, ""))
    rows["questions_from"] = inputs.questions_from

    costs, returned = {}, {}
    texts = {doc_id: doc.text for doc_id, doc in dataset.corpus.items()}
    seconds = result.systems.set_index("system")
    for label, spec in tqdm(chunkers.items(), desc="compare: chunk costs", disable=not progress):
        searched, returned[label] = _units(dataset, spec, cache)
        embed = int(sum(u.n_tokens for u in searched))
        tokenizer = get_tokenizer(getattr(get_chunker(spec), "tokenizer", DEFAULT_TOKENIZER))
        timing = seconds.loc[label]
        costs[label] = {"spec": spec, "chunks": len(searched), "embed_tokens": embed,
                        "cost": embed * price_per_mtok / 1e6, "duplication": excess_tokens(searched, texts, tokenizer.count),
                        "seconds": float(sum(float(timing.get(c, 0) or 0) for c in ("chunk_s", "index_s", "search_s")))}
    stages.update()
    system_rows = rows[rows["check"] == "system"].reset_index(drop=True)
    shown = _shown_runs(result, systems)
    scores = {c: {q: (r[0][1] if r else -math.inf) for q, r in run.items()} for c, run in shown.items()}
    rows["top_score"] = [scores.get(c, {}).get(q, -math.inf) if check == "system" else math.nan
                         for c, q, check in zip(rows["candidate"], rows["qid"], rows["check"], strict=True)]
    system_rows = rows[rows["check"] == "system"].reset_index(drop=True)
    thresholds = {}
    for label in chunkers:
        tuning_rows = part(system_rows, "tune")
        tune_hits = tuning_rows[(tuning_rows["candidate"] == label) & tuning_rows["answerable"]
                                & (tuning_rows[f"SpanHit@{k}"] > 0)]
        found = [scores[label][q] for q in tune_hits["qid"] if q in scores[label]]
        thresholds[label] = threshold if threshold is not None else (
            float(np.quantile(found, THRESHOLD_QUANTILE)) if found else math.inf)
    searched_by = retriever if isinstance(retriever, str) else " + ".join(retriever)
    tuning, decision = (_summary(part(system_rows, name), k, costs, thresholds, scores, criteria)
                        .assign(language=language, retriever=searched_by) for name in ("tune", "confirm"))
    if tuning.empty or decision.empty:
        raise ConfigError(f"the {'tuning' if tuning.empty else 'confirmation'} split is empty: "
                          f"{len(dataset.queries)} questions at tune_share={tune_share}; give more questions")
    recommended, why = recommend(tuning, k)
    failures = failure_stages(rows, dataset, returned, k)
    failures["retrieved"] = [";".join(u for u, _ in shown[c].get(q, [])[:k])
                             for c, q in zip(failures["chunker"], failures["question_id"], strict=True)]
    stages.update()
    clusters, cluster_name = question_clusters(dataset)
    confirm = part(system_rows, "confirm")
    paired = paired_tests(confirm, recommended, f"SpanHit@{k}", clusters, n_resamples, seed)
    by_category = _breakdowns(system_rows, k)
    sentence = recommendation_sentence(decision, paired, recommended, why, k, criteria, inputs.questions_from,
                                       held_out)
    if not held_out:
        sentence += (f" No held-out split: {len(dataset.queries)} questions are too few at tune_share={tune_share} "
                     f"(each split needs at least one; about {math.ceil(2 / min(tune_share, 1 - tune_share))} "
                     "questions give both), so the same questions picked the candidate and confirmed it.")
    stages.update()
    stages.close()
    comparison = Comparison(decision, tuning, by_category, failures, paired, sentence, recommended, rows, criteria,
                            {"questions_from": inputs.questions_from, "clusters": cluster_name, "k": k,
                             "retriever": searched_by, "language": language,
                             "reranker": reranker, "tune_share": tune_share, "price_per_mtok": price_per_mtok,
                             "thresholds": thresholds, "evidence": info.get("evidence", "gold spans"),
                             "held_out": held_out,
                             "n_documents": len(dataset.corpus), "n_questions": len(dataset.queries),
                             "load_seconds": load_seconds, "seconds": time.perf_counter() - started})
    write_comparison(comparison, out, inputs, chunkers, cache)
    return comparison


def _breakdowns(rows: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per candidate × split × category, and × document kind: questions and the rates."""
    answerable = rows[rows["answerable"]]
    columns = {f"SpanHit@{k}": f"hit@{k}", f"SpanRR@{MRR_K}": f"mrr@{MRR_K}", f"SpanCovered@{k}": "boundary_retention",
               f"CitationMatch@{k}": "citation_match"}
    frames = []
    for by in ("category", "document_kind"):
        table = (answerable.groupby(["candidate", "split", by], sort=False)
                 .agg(questions=("qid", "size"), **{v: (m, "mean") for m, v in columns.items()}).reset_index()
                 .rename(columns={by: "group"}))
        frames.append(table.assign(breakdown=by))
    out = pd.concat(frames, ignore_index=True).rename(columns={"candidate": "chunker"})
    return out[["breakdown", "group", "chunker", "split", "questions", *columns.values()]]


def _number(value: float) -> str:
    return f"{value:.3f}" if abs(value) < 10 else f"{value:,.0f}"


def recommendation_sentence(decision: pd.DataFrame, paired: pd.DataFrame, recommended: str, why: str, k: int,
                            criteria: Sequence[Criterion], questions_from: str, held_out: bool = True) -> str:
    """One sentence the numbers support: the pick, why, its confirmation numbers, the criteria."""
    row = decision.set_index("chunker").loc[recommended]
    passed = [c for c in criteria if row[c.name]]
    failed = [f"{c.column} {_number(row[c.column])} (needs {c.op} {c.value:g})" for c in criteria if not row[c.name]]
    worse = paired[paired["p_holm"] < ALPHA]["chunker"].tolist() if not paired.empty else []
    text = (f"Use {recommended}: {why}; on the {int(row['answerable'])} {'held-out ' if held_out else ''}answerable questions its Hit@{k} is "
            f"{row[f'hit@{k}']:.3f}, boundary retention {row['boundary_retention']:.3f} and mean retrieved tokens "
            f"{row['mean_tokens']:.0f}")
    if worse:
        text += (f"; {', '.join(worse)} {'is' if len(worse) == 1 else 'are'} significantly worse "
                 f"(cluster randomization test, Holm p < {ALPHA})")
    elif not paired.empty:
        text += f"; no other candidate differs significantly (Holm p ≥ {ALPHA}, {int(paired['clusters'].max())} clusters)"
    if criteria:
        text += (f"; it passes {len(passed)} of {len(criteria)} acceptance criteria"
                 + (f" (fails: {'; '.join(failed)})" if failed else ""))
    if questions_from != "yours":
        text += f" (questions: {questions_from})"
    return text + "."


def write_comparison(comparison: Comparison, out: Path, inputs: Inputs, chunkers: Mapping[str, str],
                     cache: ArtifactCache) -> None:
    """Every table as CSV, the chunk metadata as JSON lines, the report as HTML, a summary JSON."""
    out.mkdir(parents=True, exist_ok=True)
    tag = {"questions_from": comparison.info["questions_from"]}
    for name, table in (("decision", comparison.decision), ("tuning", comparison.tuning),
                        ("by_category", comparison.by_category), ("failures", comparison.failures),
                        ("paired", comparison.paired), ("per_question", comparison.per_question)):
        atomic_write_text(out / f"{name}.csv", table.assign(**tag).to_csv(index=False))
    lines = []
    for spec in chunkers.values():
        chunker = get_chunker(spec)
        searched = chunk_corpus(inputs.dataset, chunker, cache)
        by_doc: dict[str, list] = {}
        for unit in searched:
            by_doc.setdefault(unit.doc_id, []).append(unit)
        for key, doc in inputs.documents.items():
            parents = chunker.parents_of(inputs.dataset.corpus[key]) if chunker.has_parents else ()
            for record in citation_records(doc, by_doc.get(key, []), chunker, parents):
                lines.append(json.dumps(record, ensure_ascii=False))
    atomic_write_text(out / "chunks.jsonl", "\n".join(lines) + "\n")
    atomic_write_text(out / "summary.json", json.dumps({"recommended": comparison.recommended,
                                                        "recommendation": comparison.recommendation,
                                                        **comparison.info}, indent=1, default=str))
    atomic_write_text(out / "report.html", report_html(comparison))


def library_of(spec: str) -> str:
    """Which library a candidate's splitter comes from: LangChain, LlamaIndex, chonkie, semchunk or grainlab."""
    prefix = spec.split(":", 1)[0] if ":" in spec.split("(", 1)[0] else spec.split("(", 1)[0]
    return {"langchain": "LangChain", "llamaindex": "LlamaIndex", "chonkie": "chonkie",
            "semchunk": "semchunk"}.get(prefix, "grainlab")


def best_per_library(decision: pd.DataFrame, k: int = 5) -> pd.DataFrame:
    """Each library's best configuration in a decision table (highest held-out Hit@k, then MRR),
    with what it reads (mean retrieved tokens): one row per library."""
    hit, mrr = f"hit@{k}", f"mrr@{2 * k}"
    rows = decision.assign(library=decision["spec"].map(library_of)).sort_values([hit, mrr], ascending=False)
    best = rows.drop_duplicates("library")
    return best[["library", "chunker", "spec", hit, mrr, "boundary_retention", "mean_tokens"]].reset_index(drop=True)


DECISION_LABELS = {"boundary_retention": "boundary", "citation_match": "citation", "duplication": "dup.",
                   "mean_tokens": "tokens read", "chunks": "chunks", "embed_tokens": "indexed", "cost": "cost",
                   "unanswerable_false_hits": "false hits", "seconds": "s"}
_OPERATORS = {">=": "≥", "<=": "≤", ">": ">", "<": "<"}


def decision_label(column: str) -> str:
    """A decision column's short human label (``boundary_retention`` → ``boundary``)."""
    return DECISION_LABELS.get(column, column.replace("mrr", "MRR"))


def decision_view(decision: pd.DataFrame, k: int, criteria: Sequence[Criterion] = ()) -> pd.DataFrame:
    """The decision table as a person reads it: the chunker, pass or fail on each acceptance
    criterion, then the measures with human labels, each formatted by its kind
    (``grainlab.formatting``); the specs and the missed question ids stay in ``decision.csv``."""
    view = pd.DataFrame({"chunker": decision["chunker"].astype(str)})
    for criterion in criteria:
        view[f"{decision_label(criterion.column)}{_OPERATORS[criterion.op]}{criterion.value:g}"] = \
            ["pass" if bool(ok) else "FAIL" for ok in decision[criterion.name]]
    digits = {"cost": ".4f", "seconds": ".1f"}
    for column in decision_columns(k):
        label = decision_label(column)
        if column in ("chunks", "embed_tokens", "mean_tokens"):
            view[label] = [count(v) for v in decision[column]]
        elif column == "duplication":
            view[label] = [share(v) for v in decision[column]]
        else:
            view[label] = [cell(column, v, digits.get(column, ".3f")) for v in decision[column]]
    return view


def failure_counts(failures: pd.DataFrame) -> pd.DataFrame:
    """Failed questions per candidate × stage (every stage a column, in order)."""
    if failures.empty:
        return pd.DataFrame(columns=["chunker", *STAGES])
    table = failures.pivot_table(index="chunker", columns="stage", values="question_id", aggfunc="count",
                                 fill_value=0)
    return table.reindex(columns=list(STAGES), fill_value=0).reset_index()


def decision_report(comparison: Comparison, note: str = "") -> Report:
    """The decision as a study report (``paper_vs_ours``): one row per candidate — the acceptance
    criteria in ``paper`` (there is no paper: the criteria are the user's), what it achieved in
    ``ours``, then the decision table's columns."""
    k = int(comparison.info["k"])
    criteria = ", ".join(f"{c.column} {c.op} {c.value:g}" for c in comparison.criteria) or "none given"
    rows = []
    for _, row in comparison.decision.iterrows():
        passed = sum(bool(row[c.name]) for c in comparison.criteria)
        rows.append({"claim": row["chunker"] + (" (recommended)" if row["chunker"] == comparison.recommended else ""),
                     "paper": criteria, "ours": f"passes {passed} of {len(comparison.criteria)}",
                     **{c: row[c] for c in decision_columns(k)}})
    return Report("Your documents: the chunking decision (held-out questions)", pd.DataFrame(rows),
                  f"{comparison.recommendation} {note}".strip())


def report_html(comparison: Comparison) -> str:
    """One self-contained page: the recommendation, the decision table, the breakdowns, the paired
    tests and the failures by stage, with every question id."""
    def table(frame: pd.DataFrame) -> str:
        shown = pd.DataFrame({column: [cell(str(column), v, ".3f") for v in frame[column]] for column in frame.columns})
        return shown.to_html(index=False, border=0)
    info = comparison.info
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>grainlab compare</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;"
        "font-size:13px}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}"
        "details table{display:block;overflow-x:auto}"
        "td:first-child,th:first-child{text-align:left}</style></head><body>",
        "<h1>Which chunker: the decision</h1>",
        f"<p><b>{html.escape(comparison.recommendation)}</b></p>",
        f"<p>{info['n_documents']} documents, {info['n_questions']} questions ({html.escape(str(info['questions_from']))}; "
        f"evidence: {html.escape(str(info['evidence']))}); retriever {html.escape(str(info['retriever']))}; top "
        f"{info['k']}; tuning share {info['tune_share']}; clusters for the paired tests: "
        f"{html.escape(str(info['clusters']))}; cost at {info['price_per_mtok']} per million embedded tokens.</p>",
        "<h2>Decision table (held-out questions)</h2>",
        decision_view(comparison.decision, info["k"], comparison.criteria).to_html(index=False, border=0),
        f"<p>Model loading took {info.get('load_seconds', 0.0):.1f} s, charged to no candidate.</p>",
        "<details><summary>Every column, with the missed question ids</summary>", table(comparison.decision),
        "</details>", "<!-- figures -->",
        "<h2>Tuning split (picks the candidate and the unanswerable threshold)</h2>",
        decision_view(comparison.tuning, info["k"], comparison.criteria).to_html(index=False, border=0),
        "<h2>Paired tests against the recommended candidate (held-out, cluster-aware)</h2>",
        table(comparison.paired) if not comparison.paired.empty else "<p>one candidate only</p>",
        "<h2>Failures by first stage that lost the question</h2>", table(failure_counts(comparison.failures)),
        "<h2>By category and document kind</h2>", table(comparison.by_category),
        "<h2>Every failed question</h2>", table(comparison.failures),
        "</body></html>"]
    return "\n".join(parts)
