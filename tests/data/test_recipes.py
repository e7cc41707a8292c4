"""Recipes: a derived dataset records how it was built, and the record rebuilds the same data.

``grainlab verify`` rebuilds the data an experiment ran on from its manifest's recipe, so these
tests check what a recipe holds, that a rebuild has the recorded fingerprint, that a derivation
changed after the fact is caught as a difference (never skipped), and the migration helper."""

import json
from pathlib import Path

import pytest

from grainlab import settings
from grainlab.cache import ArtifactCache
from grainlab.data import load_dataset, sample_dataset
from grainlab.data.recipes import derivation, local_path, portable_path, rebuild
from grainlab.errors import ConfigError
from grainlab.experiments import System, run_experiment
from grainlab.experiments.manifest import record_recipe
from grainlab.experiments.verify import verify
from grainlab.studies import longrag
from grainlab.studies import your_documents as yd
from tests.studies.test_your_documents import questions_rows
from tests.studies.your_documents_fixture import write_documents, write_questions


@pytest.fixture
def toy(toy_mirror, monkeypatch):
    monkeypatch.setenv("GRAINLAB_MIRROR", str(toy_mirror))
    return load_dataset("scifact", allow_download=False)


def _load(name, split="test"):
    return load_dataset(name, split=split, allow_download=False)


def test_a_loaded_dataset_records_its_name_and_split(toy):
    assert toy.info["recipe"] == {"dataset": "scifact", "split": "test"}


def test_a_derivation_records_its_arguments_with_defaults_and_its_inputs_recipes(toy):
    sampled = sample_dataset(toy, 2, 4, seed=3)
    recipe = sampled.info["recipe"]
    assert recipe == {"derive": "grainlab.data.sample:sample_dataset",
                      "args": {"dataset": {"$recipe": {"dataset": "scifact", "split": "test"}}, "n_queries": 2,
                               "n_docs": 4, "seed": 3, "mode": "queries"}}
    assert json.loads(json.dumps(recipe)) == recipe  # a manifest holds it as JSON


def test_a_chain_of_derivations_rebuilds_the_same_fingerprint(toy):
    pool = longrag.merge_sources("wiki", [toy], toy)
    passages = longrag.passage_corpus(longrag.document_corpus(pool), words=4)
    rebuilt = rebuild(json.loads(json.dumps(passages.info["recipe"])), _load)
    assert rebuilt.fingerprint() == passages.fingerprint()
    assert rebuild(longrag.passage_corpus(pool, words=6).info["recipe"], _load).fingerprint() != passages.fingerprint()


def test_a_subset_or_an_input_without_a_recipe_records_none(toy):
    subset = toy.subset(list(toy.queries)[:1])
    assert "recipe" not in subset.info
    assert "recipe" not in longrag.passage_corpus(subset, words=4).info


def test_an_argument_a_recipe_cannot_hold_records_none(toy):
    @derivation
    def tagged(dataset, tag):
        return dataset.subset()

    assert "recipe" not in tagged(toy, object()).info
    assert tagged(toy, "x").info["recipe"]["args"]["tag"] == "x"


def test_paths_are_kept_relative_to_the_mirror_and_the_project(toy_mirror, monkeypatch):
    monkeypatch.setenv("GRAINLAB_MIRROR", str(toy_mirror))
    inside = toy_mirror / "japanese" / "*_*.txt"
    assert portable_path(inside) == "mirror:japanese/*_*.txt"
    assert local_path("mirror:japanese/*_*.txt") == str(toy_mirror.resolve() / "japanese" / "*_*.txt")
    project = settings.project_root() / "results" / "questions.jsonl"
    assert portable_path(project) == "project:results/questions.jsonl"
    assert local_path("project:results/questions.jsonl") == str(project)
    assert portable_path("/elsewhere/docs") == "/elsewhere/docs"
    monkeypatch.delenv("GRAINLAB_MIRROR")
    with pytest.raises(ConfigError, match="GRAINLAB_MIRROR"):
        local_path("mirror:japanese/a.txt")
    assert portable_path(project) == "project:results/questions.jsonl"  # no mirror: the project still counts


def test_a_recipe_naming_anything_but_a_grainlab_function_is_refused():
    with pytest.raises(ConfigError, match="not a grainlab function"):
        rebuild({"derive": "os:remove", "args": {"path": "x"}}, _load)
    with pytest.raises(ConfigError, match="no longer has"):
        rebuild({"derive": "grainlab.studies.longrag:no_such_corpus", "args": {}}, _load)


def test_your_documents_and_questions_rebuild_from_their_files(tmp_path):
    docs = write_documents(tmp_path / "docs")
    questions = write_questions(tmp_path / "questions.jsonl", questions_rows())
    inputs = yd.subset_inputs(yd.load_inputs(docs, questions, keep_unlocated=True), questions_per_document=2)
    recipe = inputs.dataset.info["recipe"]
    assert recipe["derive"] == "grainlab.studies.your_documents:subset_inputs"
    assert recipe["args"]["inputs"]["$recipe"]["args"]["questions"] == {"$path": str(questions.resolve())}
    assert rebuild(recipe, _load).fingerprint() == inputs.dataset.fingerprint()


# ---------------------------------------------------------------- verify and the migration


@pytest.fixture
def derived_experiment(toy, tmp_path):
    passages = longrag.passage_corpus(longrag.merge_sources("wiki", [toy], toy), words=4)
    results = tmp_path / "results"
    run_experiment(passages, [System("bm25", "none", "max")], measures=["nDCG@10"], name="derived",
                   results_dir=results, cache=ArtifactCache(tmp_path / "cache"), n_resamples=50, progress=False)
    return results, passages


def test_verify_rebuilds_a_derived_dataset_from_the_manifest_and_reproduces_it(derived_experiment):
    results, passages = derived_experiment
    manifest = json.loads((results / "derived" / "manifest.json").read_text())
    assert manifest["parameters"]["recipe"] == json.loads(json.dumps(passages.info["recipe"]))
    report = verify(results, _load, queries=2)
    assert report.ok and report.rows > 0 and not report.skipped


def test_a_derivation_that_now_builds_other_data_is_named_not_compared(derived_experiment, monkeypatch):
    """Its rows were keyed by the old data's fingerprint, so nothing stale can be reused; but
    they cannot be checked either, and the report says why."""
    results, _ = derived_experiment
    real = longrag.passage_corpus
    monkeypatch.setattr(longrag, "passage_corpus", lambda dataset, words=100: real(dataset, words + 1))
    report = verify(results, _load, queries=2)
    assert not report.ok and report.rows == 0
    assert "rebuilt from its recorded recipe" in report.skipped[0][1] and "fingerprint differs" in report.skipped[0][1]


def test_record_recipe_writes_only_a_missing_recipe_of_the_same_data(derived_experiment, toy):
    results, passages = derived_experiment
    path = results / "derived" / "manifest.json"
    manifest = json.loads(path.read_text())
    recipe = manifest["parameters"].pop("recipe")
    path.write_text(json.dumps(manifest))
    assert not record_recipe(path, longrag.passage_corpus(longrag.merge_sources("wiki", [toy], toy), words=5))
    assert "recipe" not in json.loads(path.read_text())["parameters"]
    assert record_recipe(path, passages)
    assert json.loads(path.read_text())["parameters"]["recipe"] == recipe
    assert not record_recipe(path, passages)  # a recorded recipe is never rewritten


@pytest.mark.mirror
def test_the_committed_longrag_and_japanese_experiments_record_their_recipes():
    """Their data are study-built; before recipes, verify had to skip them."""
    root = Path(__file__).resolve().parents[2] / "results"
    for folder in ("longrag/full/passages", "longrag/full/documents", "longrag/full/grouped_documents",
                   "japanese/full/compare/experiment", "japanese/full/compare/side_by_side/experiment"):
        parameters = json.loads((root / folder / "manifest.json").read_text())["parameters"]
        assert parameters["recipe"]["derive"].startswith("grainlab.studies."), folder


def test_a_named_dataset_is_reloaded_with_its_split_and_mapping_arguments_decode():
    from grainlab.data.recipes import _decode

    calls = []

    def load(name, **split):
        calls.append((name, split))
        return "data"

    test = "".join(["te", "st"])  # as read from a manifest: equal to "test", not the same object
    loaded = [_decode({"$recipe": {"dataset": "scifact", "split": split}}, load) for split in (test, "train", "dev")]
    assert loaded == ["data"] * 3
    assert calls == [("scifact", {}), ("scifact", {"split": "train"}), ("scifact", {"split": "dev"})]
    project = settings.project_root()
    assert _decode({"$map": {"a": {"$path": "project:x.txt"}, "b": [1, "two"]}}, load) == {
        "a": str(project / "x.txt"), "b": [1, "two"]}


def test_a_derivation_keeps_its_functions_name_and_docstring():
    assert sample_dataset.__name__ == "sample_dataset" and "smaller dataset" in sample_dataset.__doc__
