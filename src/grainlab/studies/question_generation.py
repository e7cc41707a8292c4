"""Span-labelled questions generated from a user's own documents, as Chroma's synthetic
evaluation makes them: a local reader reads one passage, proposes a question and quotes its
evidence; only quotes found **verbatim** in the passage are kept (so the gold span has exact
offsets), replies whose "question" is not a question, copies the passage word for word, or
restates its evidence (≥ 90% of its words, or character bigrams in Japanese, in the evidence: an
answer leaked into the query) are dropped, near-duplicate questions are dropped, and the yield is
reported. Every question is
marked ``generated`` with the model that wrote it, and every table ``compare`` writes says so.

Japanese documents (``language="ja"``, or detected) get a Japanese prompt; their lengths are counted
in content morphemes rather than space-separated words, a quote matches across line wraps between
any two characters (Japanese has no spaces to wrap at), and near-duplicates are compared on
character bigrams.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from grainlab.chunking.factory import get_chunker
from grainlab.data.documents import SourceDocument
from grainlab.data.evidence import EvidenceQuestion
from grainlab.languages import resolve_language
from grainlab.readers.base import Reader
from grainlab.retrieval.analyzers import japanese_tokens
from grainlab.types import Document

DEFAULT_MODEL = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
PASSAGES = "structure(size=300)"
MAX_NEW_TOKENS = 160
MIN_EVIDENCE_WORDS = 3
DUPLICATE_JACCARD = 0.8
RESTATED_SHARE = 0.9
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
PROMPT_JA = """次の文章を読み、その文章だけで答えられる質問を日本語で一つ書いてください。次に、その答えを含む文を\
文章から一字一句そのまま写してください（要約や言い換えは不可）。

例の文章:
保証期間は部品が2年間です。工賃は最初の1年間のみ保証されます。

例の返答:
Question: 工賃はどのくらいの期間保証されますか？
Evidence: 工賃は最初の1年間のみ保証されます。

文章:
{passage}

次の形式だけで返答してください:
Question: <日本語の質問>
Evidence: <文章からそのまま写した文>"""
PROMPTS = {"en": PROMPT, "ja": PROMPT_JA}
LINE = re.compile(r"^\s*\**\s*(question|evidence|質問|根拠)\s*\**\s*[:：]\s*(.*)$", re.IGNORECASE)
LABELS = {"質問": "question", "根拠": "evidence"}
QUOTES = "\"'“”‘’`「」『』"
JA_INTERROGATIVES = re.compile(r"何|なに|なん[でのだ]|どの|どう|どこ|どれ|どちら|どんな|いつ|なぜ|誰|だれ|いくつ|いくら|幾")


@dataclass
class GenerationYield:
    """How many passages were asked, and where the rest went."""

    asked: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    language: str = "en"

    def drop(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    @property
    def share(self) -> float:
        return self.kept / self.asked if self.asked else 0.0

    def as_dict(self) -> dict[str, object]:
        return {"asked": self.asked, "kept": self.kept, "yield": round(self.share, 3), "dropped": dict(self.dropped),
                "language": self.language}


def parse_reply(text: str) -> tuple[str, str] | None:
    """``(question, evidence)`` from a reply in the prompt's form, else ``None``."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        if match := LINE.match(line):
            label = match.group(1).lower()
            found.setdefault(LABELS.get(label, label), match.group(2).strip())
    if not found.get("question") or not found.get("evidence"):
        return None
    return found["question"], found["evidence"]


def verbatim_offsets(passage: str, evidence: str, language: str = "en") -> tuple[int, int] | None:
    """Where ``evidence`` lies in ``passage`` — its words in order, as written, with any run of
    whitespace matching any other (a quote of a line-wrapped sentence), with or without surrounding
    quotes, ellipses or a final full stop — else ``None`` (a paraphrase is never accepted). In
    Japanese (``ja``) its characters in order, with optional whitespace between any two. The
    offsets are the passage's own, so the span is exact."""
    stripped = evidence.strip(QUOTES + " ")
    candidates = [evidence, stripped, stripped.rstrip(".…。").strip()]
    for candidate in candidates:
        pieces = [c for c in candidate if not c.isspace()] if language == "ja" else candidate.split()
        if not pieces:
            continue
        if match := re.search((r"\s*" if language == "ja" else r"\s+").join(map(re.escape, pieces)), passage):
            return match.start(), match.end()
    return None


def is_question(text: str, language: str = "en") -> bool:
    """Whether ``text`` reads as a question: it ends with a question mark, or — in Japanese, where
    questions often end with ``か`` or ``。`` — ends with ``か`` or holds an interrogative word."""
    core = text.strip().strip(QUOTES + " ")
    if core.endswith(("?", "？")):
        return True
    return language == "ja" and (core.rstrip("。").endswith("か") or bool(JA_INTERROGATIVES.search(core)))


def copies_passage(question: str, passage: str, language: str = "en") -> bool:
    """Whether the question, without its final mark, is a run of the passage word for word (at least
    ``MIN_EVIDENCE_WORDS`` words): a statement copied from the passage, so retrieval is a string match."""
    core = question.strip().strip(QUOTES + " ").rstrip("?？。.").strip()
    return word_count(core, language) >= MIN_EVIDENCE_WORDS and verbatim_offsets(passage, core, language) is not None


def restates_evidence(question: str, evidence: str, language: str = "en", threshold: float = RESTATED_SHARE) -> bool:
    """Whether at least ``threshold`` of the question's words (character bigrams in Japanese) are
    in its evidence: the evidence sentence turned into a question ("…必要ない。" → "…必要ないか？"),
    which retrieval finds by string match, not by understanding."""
    core = question.strip().strip(QUOTES + " ").rstrip("?？。.").strip()
    if language == "ja":
        core = core.removesuffix("か")
    words, source = _words(core, language), _words(evidence, language)
    return bool(words) and len(words & source) / len(words) >= threshold


def word_count(text: str, language: str = "en") -> int:
    """Space-separated words (``en``) or content morphemes (``ja``) of ``text``."""
    return len(japanese_tokens(text)) if language == "ja" else len(text.split())


def _words(text: str, language: str = "en") -> set[str]:
    if language == "ja":  # character bigrams: no spaces to find words at
        compact = "".join(text.lower().split())
        return {compact[i:i + 2] for i in range(max(len(compact) - 1, 1))}
    return set(re.findall(r"\w+", text.lower()))


def is_near_duplicate(question: str, kept: Sequence[str], threshold: float = DUPLICATE_JACCARD,
                      language: str = "en") -> bool:
    """Whether ``question`` shares at least ``threshold`` of its words (Jaccard; character bigrams in
    Japanese) with a kept one."""
    words = _words(question, language)
    for other in kept:
        theirs = _words(other, language)
        if words and theirs and len(words & theirs) / len(words | theirs) >= threshold:
            return True
    return False


def sample_passages(documents: Sequence[SourceDocument], n: int, seed: int = 0,
                    passages: str = PASSAGES, language: str = "en") -> list[tuple[SourceDocument, int, int]]:
    """Up to ``n`` passages ``(document, start, end)``, taken in turn from each document (so every
    document is asked about), in a seeded random order within each document."""
    chunker = get_chunker(passages)
    rng = random.Random(seed)
    pools = []
    for doc in documents:
        chunks = [c for c in chunker.chunk(Document(doc.key, doc.text))
                  if word_count(c.text, language) >= 2 * MIN_EVIDENCE_WORDS]
        rng.shuffle(chunks)
        pools.append([(doc, c.start, c.end) for c in chunks])
    out: list[tuple[SourceDocument, int, int]] = []
    while len(out) < n and any(pools):
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop())
    return out


def generate_questions(documents: Sequence[SourceDocument], reader: Reader, n: int = 100, seed: int = 0,
                       progress: bool = True, language: str = "auto",
                       passages: str = PASSAGES) -> tuple[list[EvidenceQuestion], GenerationYield]:
    """Ask ``reader`` for a question and its quoted evidence on up to ``n`` passages (cut by the
    chunker spec ``passages``); keep the verbatim, non-duplicate ones (see the module docstring).
    ``language``: ``en``, ``ja`` or ``auto`` (detected from the documents' text)."""
    language = resolve_language(language, [d.text for d in documents])
    passages = sample_passages(documents, n, seed, passages=passages, language=language)
    replies = reader.generate([PROMPTS[language].format(passage=doc.text[a:b]) for doc, a, b in passages],
                              progress=progress)
    report = GenerationYield(asked=len(passages), language=language)
    kept: list[EvidenceQuestion] = []
    spans: set[tuple[str, int, int]] = set()
    for (doc, start, end), reply in zip(passages, replies, strict=True):
        parsed = parse_reply(reply.text)
        if parsed is None:
            report.drop("no question and evidence in the reply")
            continue
        question, evidence = parsed
        if not is_question(question, language):
            report.drop("not a question")
            continue
        if copies_passage(question, doc.text[start:end], language):
            report.drop("question copied from the passage")
            continue
        where = verbatim_offsets(doc.text[start:end], evidence, language)
        if where is None:
            report.drop("evidence not verbatim in the passage")
            continue
        span = (doc.key, start + where[0], start + where[1])
        if word_count(doc.text[span[1]:span[2]], language) < MIN_EVIDENCE_WORDS:
            report.drop(f"evidence under {MIN_EVIDENCE_WORDS} words")
            continue
        if restates_evidence(question, doc.text[span[1]:span[2]], language):
            report.drop("question restates its evidence")
            continue
        if span in spans or is_near_duplicate(question, [q.question for q in kept], language=language):
            report.drop("near-duplicate question")
            continue
        spans.add(span)
        kept.append(EvidenceQuestion(f"gen{len(kept):04d}", question, (span,), category="generated",
                                     generated=True, document=doc.key,
                                     extra={"model": reader.model_id, "language": language}))
    report.kept = len(kept)
    return kept, report
