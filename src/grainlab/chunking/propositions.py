"""Proposition units (Dense X): each passage decomposed by an LLM into self-contained statements.

A proposition is model-written text, not a slice of the passage, so each unit keeps two things:
``text`` — the exact source span it stands for (the passage sentence sharing most words with it;
``doc.text[start:end] == text`` holds as for every chunk) — and ``rewrite`` — the proposition,
which is what retrievers index. A proposition sharing less than ``min_support`` of its words with
the passage (a 135M model sometimes repeats the prompt's example) is dropped; a passage whose
output cannot be parsed, or keeps no proposition, falls back to its sentences (``rewrite`` empty)
and is counted by :func:`decomposition_report`. Nothing is dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from grainlab.cache import content_key
from grainlab.chunking.base import Chunk, Chunker, make_chunk, register
from grainlab.chunking.sentences import SEGMENTER_VERSION, sentence_spans
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer
from grainlab.readers.factory import BACKENDS, shared_reader
from grainlab.readers.propositions import (
    ParsedPropositions,
    proposition_prompt,
    propositionize,
    propositionizer_input,
)
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.types import Document

WORD = re.compile(r"\w+")
RESPONSE_PREFIX = '["'  # the output starts as a JSON list of strings: small models otherwise echo the input
PROMPT_VERSION = content_key(prompt=proposition_prompt("t", "c", "s"), prefix=RESPONSE_PREFIX,
                             seq2seq_input=propositionizer_input("t", "c", "s"))[:12]


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits)."""
    return WORD.findall(text.lower())


def support(proposition: str, source: str) -> float:
    """Share of the proposition's words that occur in ``source`` (1.0 for an empty proposition)."""
    prop = words(proposition)
    if not prop:
        return 1.0
    vocabulary = set(words(source))
    return sum(w in vocabulary for w in prop) / len(prop)


def coverage(source: str, propositions: Iterable[str]) -> float:
    """Share of the source's distinct words that some proposition repeats (what survives decomposition)."""
    vocabulary = set(words(source))
    said = {w for p in propositions for w in words(p)}
    return len(vocabulary & said) / len(vocabulary) if vocabulary else 1.0


def best_sentence(proposition: str, text: str, spans: list[tuple[int, int]]) -> tuple[int, int]:
    """The sentence span sharing most distinct words with ``proposition`` (the earliest on ties)."""
    prop = set(words(proposition))
    scores = [len(prop & set(words(text[s:e]))) for s, e in spans]
    return spans[max(range(len(spans)), key=lambda i: (scores[i], -i))]


@dataclass(frozen=True)
class PassageDecomposition:
    """What the propositionizer made of one passage: kept propositions and why any were lost."""

    doc_id: str
    status: str  # json | repaired | failed | unsupported (all propositions dropped)
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    repeats: int
    raw: str
    seconds: float = 0.0  # generation time when first made (cached reruns keep it)
    new_tokens: int = 0
    constrained: bool = False  # generated again under the JSON grammar (the free output did not parse)


@register("propositions")
@dataclass(frozen=True)
class PropositionChunker(Chunker):
    """``propositions(model=…,max_new_tokens=256,min_support=0.5,backend=auto)``: one unit per proposition.

    ``backend`` is the reader's runtime (``auto``: llama.cpp on CPU when the model has a GGUF copy;
    there, an output that is not a JSON list is generated again under a JSON grammar and counted)."""

    model: str = "Qwen/Qwen2.5-Coder-0.5B-Instruct"
    max_new_tokens: int = 256
    batch_size: int = 4
    min_support: float = 0.5
    tokenizer: str = DEFAULT_TOKENIZER
    backend: str = "auto"
    version = f"1.{SEGMENTER_VERSION}-{PROMPT_VERSION}"  # cached units follow the prompt: a changed prompt re-cuts them

    def __post_init__(self) -> None:
        if self.max_new_tokens < 16 or self.batch_size < 1 or not 0.0 <= self.min_support <= 1.0:
            raise ConfigError("propositions needs max_new_tokens ≥ 16, batch_size ≥ 1 and 0 ≤ min_support ≤ 1")
        if self.backend not in BACKENDS:
            raise ConfigError(f"propositions: backend must be one of {BACKENDS}, got {self.backend!r}")

    def decompose(self, docs: Iterable[Document], progress: bool = True) -> list[PassageDecomposition]:
        """Propositionize every document (cached generations), filtering unsupported propositions."""
        docs = [d for d in docs if d.text.strip()]
        reader = shared_reader(self.model, self.max_new_tokens, self.batch_size, stop_at_newline=False,
                               stop_chars="]", response_prefix=RESPONSE_PREFIX, backend=self.backend)
        out = []
        for doc, (parsed, raw, generation) in zip(docs, propositionize(reader, [(d.title, d.text) for d in docs],
                                                                        progress)):
            out.append(self._filter(doc, parsed, raw, generation.seconds, generation.new_tokens, generation.constrained))
        return out

    def _filter(self, doc: Document, parsed: ParsedPropositions, raw: str, seconds: float = 0.0,
                new_tokens: int = 0, constrained: bool = False) -> PassageDecomposition:
        kept = tuple(p for p in parsed.propositions if support(p, doc.text) >= self.min_support)
        dropped = tuple(p for p in parsed.propositions if p not in kept)
        status = parsed.status if kept or parsed.status == "failed" else "unsupported"
        return PassageDecomposition(doc.doc_id, status, kept, dropped, parsed.repeats, raw, seconds, new_tokens,
                                    constrained)

    def _units(self, doc: Document, decomposition: PassageDecomposition) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        spans = sentence_spans(doc.text)
        if not decomposition.kept:  # fallback: the passage's sentences, counted by decomposition_report()
            return [make_chunk(doc, i, s, e, tok.count(doc.text[s:e]), metadata={"fallback": True})
                    for i, (s, e) in enumerate(spans)]
        units = []
        for i, proposition in enumerate(decomposition.kept):
            start, end = best_sentence(proposition, doc.text, spans)
            units.append(make_chunk(doc, i, start, end, tok.count(proposition), rewrite=proposition,
                                    metadata={"fallback": False}))
        return units

    def chunk(self, doc: Document) -> list[Chunk]:
        return self.chunk_many([doc])

    def chunk_many(self, docs: Iterable[Document]) -> list[Chunk]:
        docs = list(docs)
        by_id = {d.doc_id: d for d in docs}
        return [c for dec in self.decompose(docs) for c in self._units(by_id[dec.doc_id], dec)]


def decomposition_report(decompositions: list[PassageDecomposition], docs: dict[str, Document],
                         max_new_tokens: int | None = None) -> dict[str, float]:
    """Proposition statistics comparable with the paper's (6.3 propositions per passage and 11.2
    words per proposition): counts, parse outcomes, how much of each proposition the passage
    supports (``word_support``) and how much of each decomposed passage its propositions still say
    (``passage_word_coverage``, over passages that kept propositions). With the propositionizer's
    ``max_new_tokens``: the share of outputs that used the whole budget (``at_limit_share``), split
    into those that were looping (``looped_share``: exact repeats removed — a larger budget only
    repeats more) and those cut mid-list (``cut_share``: propositions lost at the passage's end)."""
    n = len(decompositions)
    limit = {}
    if max_new_tokens is not None:
        at_limit = [d for d in decompositions if d.new_tokens >= max_new_tokens]
        looped = sum(d.repeats > 0 for d in at_limit)
        limit = {"at_limit_share": len(at_limit) / n if n else 0.0, "looped_share": looped / n if n else 0.0,
                 "cut_share": (len(at_limit) - looped) / n if n else 0.0}
    kept = [p for d in decompositions for p in d.kept]
    parsed = [d for d in decompositions if d.status != "failed"]
    status = {s: sum(d.status == s for d in decompositions) / n if n else 0.0
              for s in ("json", "repaired", "failed", "unsupported")}
    return {
        "passages": n,
        "propositions": len(kept),
        "propositions_per_passage": len(kept) / n if n else 0.0,
        "words_per_proposition": sum(len(p.split()) for p in kept) / len(kept) if kept else 0.0,
        "word_support": (sum(support(p, docs[d.doc_id].text) for d in decompositions for p in d.kept) / len(kept)
                         if kept else 0.0),
        "passage_word_coverage": (sum(coverage(docs[d.doc_id].text, d.kept) for d in decompositions if d.kept)
                                  / max(sum(bool(d.kept) for d in decompositions), 1)),
        "dropped_unsupported_share": (sum(len(d.dropped) for d in parsed)
                                      / max(sum(len(d.kept) + len(d.dropped) for d in parsed), 1)),
        "repeats_per_passage": sum(d.repeats for d in decompositions) / n if n else 0.0,
        "constrained_share": sum(d.constrained for d in decompositions) / n if n else 0.0,
        "generation_seconds": sum(d.seconds for d in decompositions),
        "new_tokens_per_passage": sum(d.new_tokens for d in decompositions) / n if n else 0.0,
        **{f"{s}_share": v for s, v in status.items()},
        "fallback_share": status["failed"] + status["unsupported"],
        **limit,
    }
