"""Score one run with any registered measure: ir-measures' against document qrels, grainlab's own
(answer recall, tokens read, gold-span coverage/recall/precision/IoU) against answer strings.

Gold spans are the occurrences of a question's answer strings in its judged documents; on
stitched documents each answer occurs exactly once (the stitcher keeps only such questions).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from grainlab.data.types import Dataset
from grainlab.errors import ConfigError
from grainlab.evaluation.answers import answer_recall
from grainlab.evaluation.measures import evaluate_run, parse_measures
from grainlab.evaluation.registry import (
    ANSWER_RECALL,
    CITATION_MATCH,
    SPAN_COVERED,
    SPAN_HIT,
    SPAN_IOU,
    SPAN_PRECISION,
    SPAN_PRECISION_OMEGA,
    SPAN_RECALL,
    SPAN_RR,
    TOKENS,
    Measure,
    ParsedMeasure,
    parse_grainlab_measure,
)
from grainlab.evaluation.spans import (
    Span,
    covers,
    first_copy,
    overlaps,
    precision_omega,
    span_scores,
)
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Chunk, Run

SCORING_VERSION = "1"
"""Bump when the same runs would give other per-query rows (gold spans, how a run is scored)."""

_SPAN_SCORE = {SPAN_RECALL: "recall", SPAN_PRECISION: "precision", SPAN_IOU: "iou"}


def answer_spans(dataset: Dataset) -> dict[str, list[Span]]:
    """Each question's gold spans: the dataset's own when it has them (``info["gold_spans"]``,
    e.g. Chroma's excerpts at their published offsets), else every occurrence of every gold answer
    string in its judged documents."""
    if "gold_spans" in dataset.info:
        return {qid: [tuple(span) for span in spans] for qid, spans in dataset.info["gold_spans"].items()}
    out: dict[str, list[Span]] = {}
    for qid, answers in dataset.answers.items():
        spans = []
        for doc_id in dataset.qrels.get(qid, {}):
            text = dataset.corpus[doc_id].text
            for answer in answers:
                start = text.find(answer)
                while answer and start >= 0:
                    spans.append((doc_id, start, start + len(answer)))
                    start = text.find(answer, start + 1)
        out[qid] = spans
    return out


@dataclass(frozen=True)
class MeasureSet:
    """Measures split by who computes them: ir-measures (``ir``) or grainlab (``own``, parsed)."""

    ir: tuple[str, ...]
    own: tuple[ParsedMeasure, ...]

    @classmethod
    def parse(cls, names: Sequence[str]) -> MeasureSet:
        if isinstance(names, str):  # one name, "nDCG@10": never its characters
            names = [names]
        if not names:
            raise ConfigError(f"measures must be a non-empty list of names, got {names!r}")
        ir, own = [], []
        for name in names:
            parsed = parse_grainlab_measure(name)
            if parsed is None:
                ir.append(name)
            else:
                own.append(parsed)
        ir = [str(measure) for measure in parse_measures(ir)]  # ir-measures' own names: MAP → AP, MRR@10 → RR@10
        canonical = [*ir, *(p.name for p in own)]
        if len(set(canonical)) != len(canonical):
            raise ConfigError(f"measures listed twice: {sorted(n for n in canonical if canonical.count(n) > 1)}")
        return cls(tuple(ir), tuple(own))

    @property
    def names(self) -> list[str]:
        """Canonical names, in the order given."""
        return [*self.ir, *(p.name for p in self.own)]

    @property
    def default(self) -> str:
        """The headline measure: the first ir-measures one, else the deepest answer recall, else the first."""
        if self.ir:
            return self.ir[0]
        recall = self.cutoffs(ANSWER_RECALL)
        return ANSWER_RECALL @ recall[-1] if recall else self.names[0]

    def cutoffs(self, measure: Measure) -> list[int]:
        return sorted(p.k for p in self.own if p.measure == measure and p.k is not None)

    @property
    def depth(self) -> int:
        """The run depth the grainlab measures need."""
        return max((p.k for p in self.own if p.k is not None), default=0)


@dataclass
class Scorer:
    """Per-query rows (``qid, measure, value``) of one dataset's runs."""

    dataset: Dataset
    measures: MeasureSet
    _doc_tokens: dict[tuple[str, str], int] = field(default_factory=dict)

    def check(self, label: str, ranks_documents: bool) -> None:
        """A clear error when a system cannot be scored with these measures on this dataset."""
        if self.measures.ir and not ranks_documents:
            raise ConfigError(f"{label}: ir-measures measures {list(self.measures.ir)} score documents against "
                              f"{self.dataset.name}'s qrels: give the system an aggregate ('max', 'first' or 'mean')")
        if self.measures.own and not self.dataset.is_qa:
            raise ConfigError(f"{self.dataset.name} has no answer strings: {[p.name for p in self.measures.own]} "
                              "need a QA dataset")

    @cached_property
    def gold(self) -> dict[str, list[Span]]:
        return answer_spans(self.dataset)

    @cached_property
    def token_starts(self) -> dict[str, list[int]]:
        tok = get_tokenizer(DEFAULT_TOKENIZER)
        return {d: tok.token_starts(doc.text) for d, doc in self.dataset.corpus.items()}

    def document_tokens(self, doc_id: str, tokenizer: str = DEFAULT_TOKENIZER) -> int:
        """A document's token count, counted once per tokenizer for the whole experiment."""
        key = (tokenizer, doc_id)
        if key not in self._doc_tokens:
            self._doc_tokens[key] = get_tokenizer(tokenizer).count(self.dataset.corpus[doc_id].text)
        return self._doc_tokens[key]

    def document_units(self, doc_ids: set[str]) -> dict[str, Chunk]:
        """Whole documents as units (their tokens counted by the default tokenizer)."""
        out = {}
        for doc_id in doc_ids:
            text = self.dataset.corpus[doc_id].text
            out[doc_id] = Chunk(doc_id, doc_id, text, 0, len(text), self.document_tokens(doc_id), 0)
        return out

    def rows(self, run: Run, shown: Mapping[str, Chunk] | None) -> pd.DataFrame:
        """Score ``run``: ir-measures on its ids as documents; grainlab's measures on the units
        ``shown`` (by id; ``None`` when the run ranks whole documents)."""
        frames = []
        if self.measures.ir:
            frames.append(evaluate_run(run, self.dataset.qrels, self.measures.ir,
                                       ignore_identical_ids=bool(self.dataset.info.get("queries_in_corpus"))))
        if self.measures.own:
            if shown is None:
                shown = self.document_units({d for ranking in run.values() for d, _ in ranking})
            frames.append(self._own_rows(run, shown))
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    def _own_rows(self, run: Run, shown: Mapping[str, Chunk]) -> pd.DataFrame:
        frames = []
        recall_ks = self.measures.cutoffs(ANSWER_RECALL)
        if recall_ks:
            frames.append(answer_recall(run, {uid: shown[uid].text for r in run.values() for uid, _ in r},
                                        self.dataset.answers, recall_ks))
        ranked = [p for p in self.measures.own if p.measure != ANSWER_RECALL]
        order = sorted(ranked, key=lambda p: p.k or 0)  # per cutoff, in the order given (stable)
        rows: list[tuple[str, str, float]] = []
        for qid in self.dataset.answers:
            top = [shown[uid] for uid, _ in run.get(qid, [])]
            gold = self.gold.get(qid) or []
            memo: dict[tuple, dict[str, float]] = {}
            for parsed in order:
                if parsed.measure == TOKENS:
                    rows.append((qid, parsed.name, float(sum(u.n_tokens for u in top[:parsed.k]))))
                elif gold:
                    rows.append((qid, parsed.name, self._span_value(parsed, top, gold, shown, memo)))
        if rows:
            frames.append(pd.DataFrame(rows, columns=["qid", "measure", "value"]))
        table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["qid", "measure", "value"])
        return table[table["measure"].isin(self.measures.names)].reset_index(drop=True)

    def _placed(self, chunks: Sequence[Chunk], match: str) -> list[Chunk]:
        """Chunks at their own offsets, or where Chroma's code would place them (``any_copy``)."""
        if match == "exact":
            return list(chunks)
        return [dataclasses.replace(c, start=start, end=end) for c in chunks
                for start, end in [first_copy(self.dataset.corpus[c.doc_id].text, c.start, c.end)]]

    def _span_value(self, parsed: ParsedMeasure, top: list[Chunk], gold: list[Span], shown: Mapping[str, Chunk],
                    memo: dict[tuple, dict[str, float]]) -> float:
        params = parsed.params
        match = params["match"]
        if parsed.measure == SPAN_COVERED:
            return float(any(covers(u, g) for u in self._placed(top[:parsed.k], match) for g in gold))
        if parsed.measure in (SPAN_HIT, SPAN_RR, CITATION_MATCH):
            hits = [any(overlaps(u, g) for g in gold) for u in self._placed(top[:parsed.k], match)]
            if parsed.measure == SPAN_HIT:
                return float(any(hits))
            if parsed.measure == SPAN_RR:
                return next((1.0 / rank for rank, hit in enumerate(hits, start=1) if hit), 0.0)
            return sum(hits) / len(hits) if hits else 0.0
        starts = self.token_starts if params["unit"] == "token" else None
        if parsed.measure == SPAN_PRECISION_OMEGA:
            docs = {d for d, _, _ in gold}
            pool = [u for u in shown.values() if u.doc_id in docs]
            return precision_omega(self._placed(pool, match), gold, starts, params["count"])
        key = (parsed.k, params["count"], params["unit"], match)
        if key not in memo:
            memo[key] = span_scores(self._placed(top[:parsed.k], match), gold, starts, params["count"])
        return memo[key][_SPAN_SCORE[parsed.measure]]
