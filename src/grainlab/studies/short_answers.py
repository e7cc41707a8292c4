"""LongRAG's short-answer step, shared by every reader study scored by exact match.

A small instruct reader answers in sentences ("Based on the provided search results, …"), which
exact match cannot score. LongRAG's protocol keeps the long answer's first line (the text after an
``answer:`` label, as its official post-processing does) and, when that has more than
``extract_over_words`` words, asks the reader for the short answer with the paper's extraction
prompt and demonstrations (:func:`~grainlab.readers.prompts.short_answer_prompt`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grainlab.evaluation.answers import first_line
from grainlab.readers import limits
from grainlab.readers.base import Generation, Reader
from grainlab.readers.prompts import after_answer_label, short_answer_prompt

EXTRACT_OVER_WORDS = 5


@dataclass(frozen=True)
class ShortAnswer:
    """The long answer's first line, the short answer EM scores, and the extraction generation
    (``None`` when the long answer was short enough to stand as it is)."""

    long: str
    short: str
    extraction: Generation | None = None

    @property
    def extracted(self) -> bool:
        return self.extraction is not None


def short_answers(reader: Reader, questions: Sequence[str], generations: Sequence[Generation],
                  extract_over_words: int = EXTRACT_OVER_WORDS) -> list[ShortAnswer]:
    """One :class:`ShortAnswer` per (question, long-answer generation), extracting with ``reader``."""
    if len(questions) != len(generations):
        raise ValueError(f"{len(questions)} questions for {len(generations)} generations")
    longs = [after_answer_label(first_line(g.text)) for g in generations]
    needs = [i for i, answer in enumerate(longs) if len(answer.split()) > extract_over_words]
    made = limits.generate(reader, [short_answer_prompt(questions[i], longs[i]) for i in needs])
    extracted = dict(zip(needs, made))
    return [ShortAnswer(long, after_answer_label(first_line(extracted[i].text)) if i in extracted else long,
                        extracted.get(i)) for i, long in enumerate(longs)]
