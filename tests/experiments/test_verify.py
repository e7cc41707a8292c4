"""``grainlab verify`` recomputes sampled stored rows and fails on any that differ.

A computation changed without its version bump keeps every key, so the stored tables would be
reused; these tests plant such changes (in the retriever, the chunker, a measure) and check that
verify reports them with the right component to blame, and that the committed tables verify."""

import json
from pathlib import Path

import pytest

from grainlab.cli import main
from grainlab.data import load_dataset
from grainlab.experiments import System, run_experiment
from grainlab.experiments.verify import verify, verify_experiment

SYSTEMS = [System("bm25", "none", "max"), System("bm25", "fixed_tokens(size=8,overlap=0)", "max")]
MEASURES = ["nDCG@10", "R@100"]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def stored(toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    run_experiment(data, SYSTEMS, measures=MEASURES, name="toy", results_dir=tmp_path / "results", cache=cache,
                   n_resamples=50, progress=False, save_runs=True)
    return tmp_path / "results", data


def _verify(results, data, cache, **kwargs):
    """Verify in a fresh cache (the default): the run's cached chunks and indexes are not reused."""
    return verify(results, lambda name: data, queries=3, **kwargs)


def test_unchanged_code_reproduces_every_sampled_row(stored, cache):
    results, data = stored
    report = _verify(results, data, cache)
    assert report.ok and report.systems == 2 and report.rows == report.reproduced
    assert report.rows == 3 * len(MEASURES) + 3 * len(MEASURES)  # sampled queries × measures, each system


def test_a_changed_retriever_without_a_version_bump_fails_and_is_blamed(stored, cache, monkeypatch):
    from grainlab.retrieval.bm25 import BM25Retriever

    results, data = stored
    real = BM25Retriever.tokenize
    monkeypatch.setattr(BM25Retriever, "tokenize", lambda self, texts: [t[:1] for t in real(self, texts)])
    report = _verify(results, data, cache)
    assert not report.ok and report.differences
    assert {d.blame for d in report.differences} <= {"retriever bm25/1 with aggregate 1: its ranking changed"}


def test_a_changed_chunker_is_blamed_on_the_chunker(stored, cache, monkeypatch):
    from grainlab.chunking.fixed import FixedTokenChunker

    results, data = stored
    real = FixedTokenChunker.chunk
    monkeypatch.setattr(FixedTokenChunker, "chunk", lambda self, doc: real(self, doc)[::2])
    report = _verify(results, data, cache)
    assert not report.ok
    assert {d.system for d in report.differences} == {SYSTEMS[1].name}
    assert all(d.blame.startswith("chunker fixed_tokens/1") for d in report.differences)


def test_a_changed_measure_is_blamed_on_that_measure(stored, cache, monkeypatch):
    from grainlab.experiments import scoring

    results, data = stored
    real = scoring.evaluate_run

    def shifted(run, qrels, measures, **kwargs):
        table = real(run, qrels, measures, **kwargs)
        return table.assign(value=table["value"].where(table["measure"] != "R@100", table["value"] * 0.5 + 0.25))

    monkeypatch.setattr(scoring, "evaluate_run", shifted)
    report = _verify(results, data, cache)
    assert not report.ok and {d.measure for d in report.differences} == {"R@100"}
    assert {d.blame for d in report.differences} == {"measure R@100 (ir-measures/1): the ranking is the stored one"}
    for run in (results / "toy" / "per_query").glob("*.run"):
        run.unlink()  # without a stored run both candidates are named
    assert {d.blame for d in _verify(results, data, cache).differences} == {
        "retriever bm25/1 with aggregate 1 or measure R@100 (ir-measures/1) (no stored run to tell which)"}


def test_a_damaged_table_fails_and_a_table_under_an_old_key_is_named(stored, cache):
    results, data = stored
    table = next((results / "toy" / "per_query").glob("bm25__none-*.csv"))
    table.write_text(table.read_text().replace("1.0", "0.9", 1))
    manifest = results / "toy" / "manifest.json"
    entries = json.loads(manifest.read_text())
    entries["systems"][SYSTEMS[1].name]["key"] = "0" * 64
    manifest.write_text(json.dumps(entries))
    report = verify_experiment(manifest, lambda name: data, cache=cache)
    assert report.damaged and "fails the checksum" in report.damaged[0] and not report.ok
    assert [why for _, why in report.skipped] == [
        "stored under a key the current code no longer computes (a version was bumped): the next run recomputes it"]


def test_data_that_is_not_the_manifests_is_named_not_compared(stored, cache):
    results, data = stored
    other = data.subset(list(data.queries)[:1])
    report = _verify(results, other, cache)
    assert report.rows == 0 and not report.ok and "fingerprint differs" in report.skipped[0][1]


def test_the_command_line_exits_1_on_a_difference_and_2_on_nothing_checked(stored, monkeypatch, capsys, toy_mirror):
    from grainlab.retrieval.bm25 import BM25Retriever

    results, _ = stored
    monkeypatch.setenv("GRAINLAB_MIRROR", str(toy_mirror))
    monkeypatch.setenv("GRAINLAB_VERIFY_RELEASES", "0")
    assert main(["verify", "--results", str(results)]) == 0
    assert "sampled rows reproduced on this machine (CPU" in capsys.readouterr().out
    real = BM25Retriever.tokenize
    monkeypatch.setattr(BM25Retriever, "tokenize", lambda self, texts: [t[:1] for t in real(self, texts)])
    assert main(["verify", "--results", str(results)]) == 1
    assert "DIFFERS:" in capsys.readouterr().out
    assert main(["verify", "--results", str(results), "--retriever", "dense"]) == 2
    assert main(["verify", "--results", str(results), "--queries", "0"]) == 2


@pytest.mark.slow
def test_committed_bm25_tables_reproduce_and_a_planted_change_fails(mirror, monkeypatch, capsys):
    """What CI runs: a fixed, model-free sample of the committed tables (BM25 over the stitched
    COVID-QA documents, Bhat et al.'s setting), recomputed from the mirror."""
    from grainlab.retrieval.bm25 import BM25Retriever

    args = ["verify", "--results", str(REPO / "results"), "--only", "chunk_size/full/covid_qa_stitched",
            "--retriever", "bm25", "--systems", "2", "--queries", "3", "--mirror", str(mirror)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "30 of 30 sampled rows reproduced" in out  # 2 systems × 3 questions × 5 measures
    real = BM25Retriever.tokenize  # an analyzer that keeps each text's first term only, without a version bump
    monkeypatch.setattr(BM25Retriever, "tokenize", lambda self, texts: [t[:1] for t in real(self, texts)])
    assert main(args) == 1
    assert "blame retriever bm25/1 or measure" in capsys.readouterr().out  # its runs are not committed


@pytest.mark.slow
def test_committed_tables_on_your_documents_rebuild_from_their_recipe_and_reproduce(mirror, capsys):
    """The Japanese articles with their generated questions: a dataset no registry names, rebuilt
    from the files its manifest's recipe records (``grainlab.data.recipes``)."""
    args = ["verify", "--results", str(REPO / "results"), "--only", "japanese/full/compare/experiment",
            "--queries", "3", "--mirror", str(mirror)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "60 of 60 sampled rows reproduced" in out and "not checked" not in out  # 4 systems × 3 × 5 measures


@pytest.mark.parametrize("recorded", [True, False])
def test_a_sampled_experiment_is_rebuilt_from_the_registrys_dataset(toy_mirror, tmp_path, cache, recorded):
    """An experiment on a sample_dataset subset is verified against the same subset, rebuilt from
    the whole dataset by the sample the manifest records (or, for a manifest from before that
    field, by its counts with seed 0 in either mode); the fingerprint decides."""
    from grainlab.data import sample_dataset

    whole = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    sampled = sample_dataset(whole, 2, 4, seed=0, mode="queries")
    assert sampled.fingerprint() != whole.fingerprint()
    run_experiment(sampled, SYSTEMS[:1], measures=MEASURES, name="s", results_dir=tmp_path, cache=cache,
                   n_resamples=50, progress=False)
    manifest = tmp_path / "s" / "manifest.json"
    data = json.loads(manifest.read_text())
    assert data["parameters"]["sample"]["n_docs"] == 4
    if not recorded:
        del data["parameters"]["sample"]
        manifest.write_text(json.dumps(data))
    report = verify(tmp_path, lambda name: whole, queries=2)
    assert report.ok and report.systems == 1
    other = sample_dataset(whole, 2, 3, seed=0, mode="queries")
    assert verify_experiment(manifest, lambda name: other.subset(list(other.queries)[:1])).rows == 0
