"""Span-labelled questions generated from a user's own documents, as Chroma's synthetic
evaluation makes them: a local reader reads one passage, proposes a question and quotes its
evidence; only quotes found **verbatim** in the passage are kept (so the gold span has exact
offsets), near-duplicate questions are dropped, and the yield is reported. Every question is
marked ``generated`` with the model that wrote it, and every table ``compare`` writes says so.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from grainlab.chunking.base import get_chunker
from grainlab.data.documents import SourceDocument
from grainlab.data.evidence import EvidenceQuestion
from grainlab.readers.base import Reader
from grainlab.types import Document

DEFAULT_MODEL = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
PASSAGES = "structure(size=300)"
MAX_NEW_TOKENS = 160
MIN_EVIDENCE_WORDS = 3
DUPLICATE_JACCARD = 0.8
PROMPT = """Read the passage and write one question that it answers. Then copy, word for word, the sentence \
of the passage that answers it: the exact words, not a summary.

Example passage:
The warranty covers parts for two years. Labour is covered for the first year only.

Example reply:
Question: How long is labour covered by the warranty?
Evidence: Labour is covered for the first year only.

Passage:
{passage}

Reply in exactly this form and nothing else:
Question: <the question>
Evidence: <the exact words copied from the passage>"""
LINE = re.compile(r"^\s*\**\s*(question|evidence)\s*\**\s*:\s*(.*)$", re.IGNORECASE)
QUOTES = "\"'“”‘’`"


@dataclass
class GenerationYield:
    """How many passages were asked, and where the rest went."""

    asked: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    @property
    def share(self) -> float:
        return self.kept / self.asked if self.asked else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"asked": self.asked, "kept": self.kept, "yield": round(self.share, 3), "dropped": dict(self.dropped)}


def parse_reply(text: str) -> tuple[str, str] | None:
    """``(question, evidence)`` from a reply in the prompt's form, else ``None``."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if match := LINE.match(line):
            found.setdefault(match.group(1).lower(), match.group(2).strip())
    if not found.get("question") or not found.get("evidence"):
        return None
    return found["question"], found["evidence"]


def verbatim_offsets(passage: str, evidence: str) -> tuple[int, int] | None:
    """Where ``evidence`` lies in ``passage`` — its words in order, as written, with any run of
    whitespace matching any other (a quote of a line-wrapped sentence), with or without surrounding
    quotes, ellipses or a final full stop — else ``None`` (a paraphrase is never accepted). The
    offsets are the passage's own, so the span is exact."""
    candidates = [evidence, evidence.strip(QUOTES + " "), evidence.strip(QUOTES + " ").rstrip(".…").strip()]
    for candidate in candidates:
        words = candidate.split()
        if not words:
            continue
        if match := re.search(r"\s+".join(map(re.escape, words)), passage):
            return match.start(), match.end()
    return None


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def is_near_duplicate(question: str, kept: Sequence[str], threshold: float = DUPLICATE_JACCARD) -> bool:
    """Whether ``question`` shares at least ``threshold`` of its words (Jaccard) with a kept one."""
    words = _words(question)
    for other in kept:
        theirs = _words(other)
        if words and theirs and len(words & theirs) / len(words | theirs) >= threshold:
            return True
    return False


def sample_passages(documents: Sequence[SourceDocument], n: int, seed: int = 0,
                    passages: str = PASSAGES) -> list[tuple[SourceDocument, int, int]]:
    """Up to ``n`` passages ``(document, start, end)``, taken in turn from each document (so every
    document is asked about), in a seeded random order within each document."""
    chunker = get_chunker(passages)
    rng = random.Random(seed)
    pools = []
    for doc in documents:
        chunks = [c for c in chunker.chunk(Document(doc.key, doc.text)) if len(c.text.split()) >= 2 * MIN_EVIDENCE_WORDS]
        rng.shuffle(chunks)
        pools.append([(doc, c.start, c.end) for c in chunks])
    out: list[tuple[SourceDocument, int, int]] = []
    while len(out) < n and any(pools):
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop())
    return out


def generate_questions(documents: Sequence[SourceDocument], reader: Reader, n: int = 100, seed: int = 0,
                       progress: bool = True) -> tuple[list[EvidenceQuestion], GenerationYield]:
    """Ask ``reader`` for a question and its quoted evidence on up to ``n`` passages; keep the
    verbatim, non-duplicate ones (see the module docstring)."""
    passages = sample_passages(documents, n, seed)
    replies = reader.generate([PROMPT.format(passage=doc.text[a:b]) for doc, a, b in passages], progress=progress)
    report = GenerationYield(asked=len(passages))
    kept: list[EvidenceQuestion] = []
    spans: set[tuple[str, int, int]] = set()
    for (doc, start, end), reply in zip(passages, replies, strict=True):
        parsed = parse_reply(reply.text)
        if parsed is None:
            report.drop("no question and evidence in the reply")
            continue
        question, evidence = parsed
        where = verbatim_offsets(doc.text[start:end], evidence)
        if where is None:
            report.drop("evidence not verbatim in the passage")
            continue
        span = (doc.key, start + where[0], start + where[1])
        if len(doc.text[span[1]:span[2]].split()) < MIN_EVIDENCE_WORDS:
            report.drop(f"evidence under {MIN_EVIDENCE_WORDS} words")
            continue
        if span in spans or is_near_duplicate(question, [q.question for q in kept]):
            report.drop("near-duplicate question")
            continue
        spans.add(span)
        kept.append(EvidenceQuestion(f"gen{len(kept):04d}", question, (span,), category="generated",
                                     generated=True, document=doc.key, extra={"model": reader.model_id}))
    report.kept = len(kept)
    return kept, report
