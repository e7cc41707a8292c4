"""The committed Lost in the Middle rows verify: every stored prediction of an installed reader is
rebuilt from its prompt (the study's own code over the mirror) and found in the committed archive,
a sampled one is decoded again, and a planted change to the prompt or the measure fails."""

import shutil
from functools import partial
from pathlib import Path

import pytest

from grainlab.data import load_dataset
from grainlab.packing import unpack_archives
from grainlab.readers.archive import ARCHIVE_NAME, GenerationArchive
from grainlab.studies import lost_in_the_middle
from grainlab.studies.reader_checks import reader_runs, verify_readers

COMMITTED = Path(__file__).resolve().parents[2] / "results" / "lost_in_the_middle" / "full"
SMALL = "HuggingFaceTB/SmolLM2-135M-Instruct"

pytestmark = [pytest.mark.mirror, pytest.mark.slow]


@pytest.fixture(scope="module")
def results(tmp_path_factory, mirror) -> Path:
    """A copy of the committed run with its archive unpacked (the repository's results/ is not written)."""
    root = tmp_path_factory.mktemp("results")
    shutil.copytree(COMMITTED, root / "lost_in_the_middle" / "full")
    unpack_archives(root)
    return root


@pytest.fixture(scope="module")
def rows(results, mirror):
    return lost_in_the_middle.stored_reader_rows(results / "lost_in_the_middle" / "full",
                                                 partial(load_dataset, mirror=mirror, allow_download=False))


def test_the_run_is_found_by_its_study_module(results):
    assert [(folder.name, rebuild) for folder, rebuild in reader_runs(results)] == [
        ("full", lost_in_the_middle.stored_reader_rows)]


def test_every_stored_row_of_the_small_reader_is_its_archived_generation(results, rows):
    from grainlab.experiments.reader_rows import verify_reader_rows

    small = [row for row in rows.rows if row.model == SMALL]
    assert len(small) == 500  # 100 questions × (3 gold positions, closed-book, oracle)
    report = verify_reader_rows(small, GenerationArchive(results / "lost_in_the_middle" / "full" / ARCHIVE_NAME),
                                rows.reader_for, regenerate=1, seed=0)
    assert report.ok and report.reproduced == report.rows == len(small) + 1 and report.generations == 1


def test_a_sample_of_every_installed_reader_verifies(results, mirror):
    report = verify_readers(results, partial(load_dataset, mirror=mirror, allow_download=False), per_stratum=1,
                            regenerate=0)
    assert report.ok and report.rows == 13 + 5  # one row per stratum: the 0.5B's 13 settings, SmolLM2's 5
    assert all("Qwen2.5-Coder-1.5B" in where for where, _ in report.skipped)  # `make models-large` only


def test_a_changed_prompt_without_a_version_bump_fails(results, mirror, monkeypatch):
    real = lost_in_the_middle.qa_prompt
    monkeypatch.setattr(lost_in_the_middle, "qa_prompt", lambda question, documents: real(question + " ", documents))
    report = verify_readers(results, partial(load_dataset, mirror=mirror, allow_download=False), per_stratum=1,
                            regenerate=0)
    assert not report.ok
    assert {d.measure for d in report.differences} == {"prompt"}
    assert {d.stage.split(",")[0] for d in report.differences} >= {"10 documents", "oracle"}


def test_a_changed_measure_fails_and_is_blamed(results, mirror, monkeypatch):
    monkeypatch.setattr(lost_in_the_middle, "best_subspan_em", lambda prediction, answers: 1.0)
    report = verify_readers(results, partial(load_dataset, mirror=mirror, allow_download=False), per_stratum=2,
                            regenerate=0)
    assert not report.ok and {d.measure for d in report.differences} == {"best_subspan_em"}
