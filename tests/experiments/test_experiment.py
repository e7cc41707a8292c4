"""The experiment call: tidy tables, saved files, resume after a crash, content keys."""

import json

import pandas as pd
import pytest

from grainlab.data import Dataset, Document, load_dataset
from grainlab.errors import ConfigError
from grainlab.experiments import System, run_experiment
from grainlab.experiments import engine as experiment_module

SYSTEMS = [System("bm25", "none", "max"), System("bm25", "fixed_tokens(size=8,overlap=0)", "max"),
           System("bm25(k1=0.9,b=0.4)", "none", "max")]


def test_tables_and_files(toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    result = run_experiment(data, SYSTEMS, name="toy", results_dir=tmp_path / "results", cache=cache,
                            measures=["nDCG@10", "R@100"], n_resamples=200, progress=False)
    assert list(result.per_query.columns) == ["dataset", "system", "retriever", "chunker", "aggregate", "stage",
                                              "qid", "measure", "value"]
    assert set(result.per_query["stage"]) == {"final"}
    assert len(result.per_query) == 3 * 3 * 2  # systems × queries × measures
    assert set(result.aggregate["system"]) == {s.name for s in SYSTEMS}
    assert len(result.significance) == 2 and result.significance["baseline"].iloc[0] == SYSTEMS[0].name
    ndcg = result.aggregate.set_index(["system", "measure"])["mean"]
    assert ndcg[(SYSTEMS[0].name, "nDCG@10")] == pytest.approx(
        result.per_query.query("system == @SYSTEMS[0].name and measure == 'nDCG@10'")["value"].mean())
    for name in ("per_query.csv", "aggregate.csv", "significance.csv", "systems.csv", "manifest.json"):
        assert (tmp_path / "results" / "toy" / name).exists()
    manifest = json.loads((tmp_path / "results" / "toy" / "manifest.json").read_text())
    assert manifest["parameters"]["dataset_fingerprint"] == data.fingerprint()
    assert {"torch", "bm25s", "ir-measures"} <= set(manifest["versions"])
    assert manifest["systems"][SYSTEMS[1].name]["n_units"] > 5
    assert result.systems.set_index("system").loc[SYSTEMS[1].name, "n_units"] > 5
    assert "git_commit" in manifest and manifest["parameters"]["seed"] == 0


def test_rerun_resumes_finished_systems(toy_mirror, tmp_path, cache, monkeypatch):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    calls = []
    real = experiment_module._system_runs

    def crash_on_second(*args, **kwargs):
        calls.append(args[1].name)
        if len(calls) == 2:
            raise RuntimeError("simulated crash")
        return real(*args, **kwargs)

    monkeypatch.setattr(experiment_module, "_system_runs", crash_on_second)
    with pytest.raises(RuntimeError):
        run_experiment(data, SYSTEMS, name="toy", results_dir=tmp_path, cache=cache, progress=False)
    monkeypatch.setattr(experiment_module, "_system_runs", real)
    counted = []
    monkeypatch.setattr(experiment_module, "_system_runs",
                        lambda *a, **k: counted.append(a[1].name) or real(*a, **k))
    result = run_experiment(data, SYSTEMS, name="toy", results_dir=tmp_path, cache=cache, progress=False)
    assert counted == [SYSTEMS[1].name, SYSTEMS[2].name]  # the first finished before the crash
    assert result.manifest["systems"][SYSTEMS[0].name]["reused"] is True


def test_changed_data_is_never_read_from_a_stale_result(toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    first = run_experiment(data, SYSTEMS[:1], name="toy", results_dir=tmp_path, cache=cache, progress=False)
    changed = Dataset(data.name, {**data.corpus, "d3": Document("d3", "solar cells make electricity")},
                      data.queries, data.qrels)
    second = run_experiment(changed, SYSTEMS[:1], name="toy", results_dir=tmp_path, cache=cache, progress=False)
    assert "reused" not in second.manifest["systems"][SYSTEMS[0].name]
    assert len(list((tmp_path / "toy" / "per_query").glob("*.csv"))) == 2
    assert first.manifest["parameters"]["dataset_fingerprint"] != second.manifest["parameters"]["dataset_fingerprint"]


def test_qa_dataset_uses_answer_recall(tmp_path, cache):
    corpus = {"long": Document("long", "Paris is the capital of France. " + "Filler text here. " * 40 +
                               "Berlin is the capital of Germany.")}
    data = Dataset("qa", corpus, {"q1": "capital of Germany", "q2": "capital of France"},
                   {"q1": {"long": 1}, "q2": {"long": 1}}, {"q1": ["Berlin"], "q2": ["Paris"]})
    result = run_experiment(data, [System("bm25", "sentences(n=1)", None)], ["AnswerRecall@1", "AnswerRecall@2"],
                            name="qa", results_dir=tmp_path, cache=cache, progress=False)
    table = result.per_query.pivot_table(index="qid", columns="measure", values="value")
    assert table.loc["q1", "AnswerRecall@1"] == 1.0 and table.loc["q2", "AnswerRecall@1"] == 1.0
    # MaxP: whole documents ranked by their best sentence; recall reads the document
    maxp = run_experiment(data, [System("bm25", "sentences(n=1)", "max")], ["AnswerRecall@1", "Tokens@1"],
                          name="qa_maxp", results_dir=tmp_path, cache=cache, progress=False)
    values = maxp.per_query.pivot_table(index="qid", columns="measure", values="value")
    assert values["AnswerRecall@1"].tolist() == [1.0, 1.0]
    assert (values["Tokens@1"] > 40).all()  # the whole document is read, not its best sentence


def test_validation_before_a_long_run(toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    with pytest.raises(ConfigError, match="aggregate"):
        run_experiment(data, [System("bm25", "none", None)], name="x", results_dir=tmp_path, cache=cache)
    with pytest.raises(ConfigError, match="duplicate"):
        run_experiment(data, [System("bm25"), System("bm25")], name="x", results_dir=tmp_path, cache=cache)
    with pytest.raises(ConfigError, match="unknown measure"):
        run_experiment(data, [System("bm25")], name="x", measures=["nope@3"], results_dir=tmp_path, cache=cache)
    with pytest.raises(ConfigError, match="no answer strings"):
        run_experiment(data, [System("bm25")], ["AnswerRecall@5"], name="x", results_dir=tmp_path, cache=cache)
    with pytest.raises(ConfigError, match="baseline"):
        run_experiment(data, [System("bm25")], name="x", baseline="nope", results_dir=tmp_path, cache=cache,
                       progress=False)


def test_a_different_model_copy_never_reuses_results(toy_mirror, tmp_path, cache, monkeypatch):
    from grainlab.experiments import identity

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    system = System("bm25", "fixed_tokens(size=8,overlap=0,tokenizer=sentence-transformers/all-MiniLM-L6-v2)", "max")
    run_experiment(data, [system], name="rev", results_dir=tmp_path, cache=cache, progress=False)
    again = run_experiment(data, [system], name="rev", results_dir=tmp_path, cache=cache, progress=False)
    assert again.manifest["systems"][system.name]["reused"] is True
    monkeypatch.setattr(identity, "model_revisions", lambda spec: {"x": "another-revision"} if "/" in spec else {})
    third = run_experiment(data, [system], name="rev", results_dir=tmp_path, cache=cache, progress=False)
    assert "reused" not in third.manifest["systems"][system.name]


def test_tags_become_columns_and_do_not_change_the_key(toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    systems = [System("bm25", "none", "max", tags={"unit": "document", "family": "lexical"}),
               System("bm25", "fixed_tokens(size=8,overlap=0)", "max", tags={"unit": "chunk"})]
    result = run_experiment(data, systems, name="tags", results_dir=tmp_path, cache=cache, progress=False)
    assert {"unit", "family"} <= set(result.per_query.columns) and {"unit", "family"} <= set(result.aggregate.columns)
    by_unit = result.aggregate.query("measure == 'nDCG@10'").set_index("unit")
    assert by_unit.loc["document", "family"] == "lexical" and pd.isna(by_unit.loc["chunk", "family"])
    assert result.manifest["systems"][systems[0].name]["tags"] == {"family": "lexical", "unit": "document"}
    retagged = [System("bm25", "none", "max", tags={"unit": "whole document"}), systems[1]]
    again = run_experiment(data, retagged, name="tags", results_dir=tmp_path, cache=cache, progress=False)
    assert again.manifest["systems"][systems[0].name]["reused"] is True  # tags describe, they are not keyed
    assert set(again.per_query["unit"]) == {"whole document", "chunk"}
    with pytest.raises(ConfigError, match="tag names"):
        System("bm25", tags={"measure": "x"})
    with pytest.raises(ConfigError, match="tag values"):
        System("bm25", tags={"unit": ["a"]})


def test_a_reused_table_reads_its_runs_by_the_key_it_is_stored_under(toy_mirror, tmp_path, cache):
    """A re-keyed record may still name its runs by an older key; the engine names them by the
    table's key, so a reused table's runs read back (notebook 09 failed on such a record)."""
    import json

    from grainlab.data import load_dataset
    from grainlab.evaluation import read_trec_run

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    system = System("bm25", "fixed_tokens(size=8,overlap=0)", "max")
    kwargs = dict(measures=["nDCG@10"], name="toy", results_dir=tmp_path, cache=cache, n_resamples=50,
                  progress=False, save_runs=True)
    first = run_experiment(data, [system], **kwargs)
    (record,) = (tmp_path / "toy" / "per_query").glob("*.json")
    stale = json.loads(record.read_text())
    stale["runs"] = {stage: f"0123456789ab.{stage}.run" for stage in stale["runs"]}
    record.write_text(json.dumps(stale))
    again = run_experiment(data, [system], **kwargs)
    assert again.manifest["systems"][system.display]["reused"]
    assert again.run(system.display) == first.run(system.display)
    assert read_trec_run(str(tmp_path / "toy" / "per_query" / again.manifest["systems"][system.display]["runs"]["final"]))
