"""``grainlab verify`` for reader rows: a stored prediction rebuilt from its prompt and regenerated.

A study whose rows are reader outputs (one row per question × setting × reader, with the
prediction and its score) keeps every generation in its archive (``readers.archive``), keyed by the
reader's identity and the prompt. A sampled row is checked three ways, each blaming one component:

1. its prompt, rebuilt from the raw data by the study's own code, has an archived generation under
   the reader's key (else the prompt's construction, the data or the reader's identity changed);
2. that generation's text gives the row's stored prediction and, scored by the study's measure
   now, the row's stored score (else the table or the measure changed);
3. for a seeded few rows, the reader decodes the prompt again, in this process and on this CPU,
   and must give the archived text (else the reader's decoding changed without a version bump).

Nothing is read from the cache and nothing is written: the archive is the committed truth.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from grainlab.errors import GrainlabError
from grainlab.experiments.verify import Difference, VerifyReport
from grainlab.readers.archive import GenerationArchive
from grainlab.readers.base import Prompt, Reader


@dataclass(frozen=True)
class ReaderRow:
    """One stored reader row and what recomputes it."""

    experiment: str
    setting: str
    qid: str
    model: str
    max_new_tokens: int
    prompt: Prompt
    prediction: str
    score: float
    measure: str
    rescore: Callable[[str], float]
    """The study's measure over a generation's whole text."""
    shown: Callable[[str], str]
    """How the stored prediction derives from a generation's text."""
    prompt_tokens: int = 0


ReaderFactory = Callable[[str, int], Reader]


@dataclass(frozen=True)
class ReaderRows:
    """A study run's stored reader rows, and how to build the reader of each (model, token limit)."""

    rows: list[ReaderRow]
    reader_for: ReaderFactory


def verify_reader_rows(rows: Sequence[ReaderRow], archive: GenerationArchive, reader_for: ReaderFactory,
                       regenerate: int = 1, seed: int | str = 0, regenerate_below: int | None = None,
                       progress: Callable[[str], None] | None = None) -> VerifyReport:
    """Check each row against ``archive`` (steps 1–2 of the module docstring) and regenerate
    ``regenerate`` of them drawn by ``seed`` (step 3), among rows whose prompt has fewer than
    ``regenerate_below`` tokens when given. ``reader_for(model, max_new_tokens)`` builds a reader;
    a model that cannot be built here skips its rows, with the reason."""
    report = VerifyReport()
    start = time.perf_counter()
    readers: dict[tuple[str, int], Reader | str] = {}
    found: list[tuple[ReaderRow, Reader, str]] = []
    unavailable: dict[tuple[str, str], int] = {}
    for row in rows:
        reader = _reader(readers, reader_for, row)
        if isinstance(reader, str):
            where = (f"{row.experiment}: {row.model}", reader)
            unavailable[where] = unavailable.get(where, 0) + 1
            continue
        report.rows += 1
        hit = reader.archived(row.prompt, archive)
        if hit is None:
            report.differences.append(_difference(row, "prompt", None, None, "the prompt built from the data, the "
                                                  f"study's prompt code or reader {row.model}'s identity: no archived "
                                                  "generation has this prompt's key"))
            continue
        text = str(hit["text"])
        problems = []
        if row.shown(text) != row.prediction:
            problems.append(_difference(row, "prediction", None, None, "the stored table: its prediction is not "
                                        "the archived generation", detail=f"{row.prediction!r} vs {row.shown(text)!r}"))
        rescored = float(row.rescore(text))
        if abs(rescored - float(row.score)) > 1e-9:
            problems.append(_difference(row, row.measure, float(row.score), rescored,
                                        f"measure {row.measure}: the archived generation scores differently"))
        report.differences += problems
        report.reproduced += not problems
        if not problems:
            found.append((row, reader, text))
    report.skipped += [(where, f"{count} sampled rows: {why}") for (where, why), count in unavailable.items()]
    eligible = [item for item in found if regenerate_below is None or item[0].prompt_tokens < regenerate_below]
    for row, reader, text in random.Random(seed).sample(eligible, min(regenerate, len(eligible))):
        if progress:
            progress(f"{row.experiment}: regenerate {row.model.split('/')[-1]} [{row.setting}]")
        fresh = reader.regenerate(row.prompt).text
        report.rows += 1
        report.generations += 1
        if fresh == text:
            report.reproduced += 1
        else:
            report.differences.append(_difference(row, "generation", None, None,
                                                  f"reader {row.model} ({reader.backend}): its decoding changed "
                                                  "without a version bump", detail=f"{text!r} vs {fresh!r}"))
    report.seconds = time.perf_counter() - start
    return report


def _reader(readers: dict, reader_for: ReaderFactory, row: ReaderRow) -> Reader | str:
    """The reader for a row, built once; the one-line reason when it cannot be built here."""
    wanted = (row.model, row.max_new_tokens)
    if wanted not in readers:
        try:
            readers[wanted] = reader_for(*wanted)
        except GrainlabError as exc:
            message = str(exc)
            how = message.rsplit(";", 1)[-1].split(" — ")[0].strip() if ";" in message else message
            readers[wanted] = f"the reader is not available here ({type(exc).__name__}): {how}"
    return readers[wanted]


def _difference(row: ReaderRow, measure: str, stored: float | None, recomputed: float | None, blame: str,
                detail: str = "") -> Difference:
    return Difference(row.experiment, row.model, row.setting, row.qid, measure, stored, recomputed, blame, detail)


def stratified(rows: Iterable[ReaderRow], per_stratum: int, seed: int | str = 0) -> list[ReaderRow]:
    """``per_stratum`` rows of each (model, setting), drawn by ``seed``, in a stable order."""
    strata: dict[tuple[str, str], list[ReaderRow]] = {}
    for row in rows:
        strata.setdefault((row.model, row.setting), []).append(row)
    rng = random.Random(seed)
    chosen = []
    for key in sorted(strata):
        group = sorted(strata[key], key=lambda r: r.qid)
        chosen += rng.sample(group, min(per_stratum, len(group)))
    return chosen
