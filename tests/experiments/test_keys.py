"""A stored table's key is complete and names what was computed, never the source bytes.

Completeness is a property generated from the registries: every parameter of every registered
chunker and retriever, every field of a system and its stages, every run setting, every model
revision and every component version changes the key, so a new parameter or component is
covered without a new test. Stability: adding a module or editing a docstring changes no key,
and the committed manifests' keys are the keys the current code computes."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import grainlab
from grainlab.chunking.base import _REGISTRY
from grainlab.chunking.factory import available_chunkers, get_chunker
from grainlab.data import Dataset, Document
from grainlab.errors import ConfigError, ModelNotAvailable
from grainlab.evaluation import registry as measure_registry
from grainlab.experiments import identity
from grainlab.experiments.systems import Stages, System
from grainlab.retrieval import available_retrievers, retriever_class, retriever_parameters
from grainlab.spec import format_spec, parse_spec

FINGERPRINT = "f" * 64
MEASURES = ["nDCG@10", "AnswerRecall@5"]
STRINGS = ("o200k_base", "std", "gradient", "recursive", "llama.cpp", "BAAI/bge-small-en-v1.5",
           "sentence-transformers/all-mpnet-base-v2", "hnsw(M=16)", "ja", "german", "x")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fake_revisions(monkeypatch):
    """Every model resolves to a revision named after it, so no key needs an installed model."""
    monkeypatch.setattr(identity, "resolve_model",
                        lambda model_id: SimpleNamespace(source="test", revision=f"rev:{model_id}"))


def _key(system: System, measures=MEASURES, depth=10, fingerprint=FINGERPRINT) -> str:
    return identity.results_key(fingerprint, system, list(measures), depth)


def _alternatives(value):
    """Values of ``value``'s type other than it, most likely valid first."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        candidates = [value + 1, value * 2, max(value - 1, 1), 3]
    elif isinstance(value, float):
        candidates = [round(value + 0.05, 4), value / 2, round(value - 0.05, 4), 0.5]
    elif value is None:
        candidates = [384, 7]
    else:
        candidates = list(STRINGS)
    return [c for c in dict.fromkeys(candidates) if c != value]


def _default_parameters(cls) -> dict:
    return {f.name: f.default for f in dataclasses.fields(cls)
            if f.default is not dataclasses.MISSING and f.name not in ("cache", "units")}


@pytest.mark.parametrize("name", available_chunkers())
def test_every_chunker_parameter_changes_the_key(name):
    base = get_chunker(name)
    system = System("bm25", base.spec, None)
    for field, value in _default_parameters(_REGISTRY[name]).items():
        changed = []
        for alternative in _alternatives(value):
            try:
                chunker = get_chunker(format_spec(name, {**base.params(), field: alternative}))
            except (ConfigError, ValueError, ModelNotAvailable):
                continue
            changed.append(_key(System("bm25", chunker.spec, None)) != _key(system))
        assert changed, f"{name}.{field}: no alternative value builds; add one to STRINGS"
        assert all(changed), f"{name}.{field} is not in the key"


@pytest.mark.parametrize("name", available_retrievers())
def test_every_retriever_parameter_changes_the_key(name):
    _, defaults = retriever_parameters(name)
    aliases = {field: alias for alias, field in getattr(retriever_class(name), "SPEC_ALIASES", {}).items()}
    base = _key(System(name, "none", "max"))
    for field, value in defaults.items():
        changed = []
        for alternative in _alternatives(value):
            spec = format_spec(name, {aliases.get(field, field): alternative})
            try:
                system = System(spec, "none", "max")
                key = _key(system)
            except (ConfigError, ValueError, ImportError):
                continue
            changed.append(key != base)
        assert changed, f"{name}.{field}: no alternative value is accepted; add one to STRINGS"
        assert all(changed), f"{name}.{field} is not in the key"


def test_defaults_written_out_or_left_out_give_the_same_key():
    for name in available_retrievers():
        _, defaults = retriever_parameters(name)
        spelled = format_spec(name, {k: v for k, v in defaults.items() if v is not None})
        assert _key(System(spelled, "none", "max")) == _key(System(name, "none", "max")), name


def test_every_system_and_stage_field_changes_the_key_and_labels_and_tags_do_not():
    fused = System(("bm25", "dense"), "fixed_tokens(size=64,overlap=0)", "max", stages=Stages(fusion="rrf"))
    base = _key(fused)
    for field in dataclasses.fields(Stages):
        value = getattr(fused.stages, field.name)
        for alternative in ([None] if field.name == "fusion" else []) + _alternatives(value):
            if field.name == "fusion" and alternative not in (None, "minmax", "zscore"):
                continue
            try:
                stages = dataclasses.replace(fused.stages, **{field.name: alternative})
                system = dataclasses.replace(fused, stages=stages, retriever=fused.retriever if stages.fusion else "bm25")
            except ConfigError:
                continue
            assert _key(system) != base, f"Stages.{field.name}={alternative!r} is not in the key"
            break
        else:
            pytest.fail(f"Stages.{field.name}: no alternative accepted")
    single = System("bm25", "parent_child", "max")
    assert len({_key(dataclasses.replace(single, aggregate=a)) for a in ("max", "first", "mean", None)}) == 4
    assert _key(dataclasses.replace(single, parents=True)) != _key(single)
    assert _key(System("bm25", "none", "max")) != _key(System("bm25(b=0.5)", "none", "max"))
    labelled = System("bm25", "none", "max", label="BM25 · documents", tags={"unit": "document", "size": 3})
    assert _key(labelled) == _key(System("bm25", "none", "max"))


def test_run_settings_and_data_change_the_key():
    system = System("bm25", "none", "max")
    assert _key(system, depth=100) != _key(system, depth=10)
    assert _key(system, measures=["nDCG@10", "AnswerRecall@10"]) != _key(system)
    assert _key(system, measures=["nDCG@10"]) != _key(system)
    assert _key(system, measures=["nDCG@20", "AnswerRecall@5"]) != _key(system)
    assert _key(system, fingerprint="e" * 64) != _key(system)


def _dataset(**changes) -> Dataset:
    parts = {"name": "toy", "corpus": {"d1": Document("d1", "alpha beta"), "d2": Document("d2", "gamma")},
             "queries": {"q1": "alpha?"}, "qrels": {"q1": {"d1": 1}}, "answers": {"q1": ["beta"]},
             "info": {"gold_spans": {"q1": [("d1", 6, 10)]}}}
    return Dataset(**{**parts, **changes})


@pytest.mark.parametrize("change", [
    {"corpus": {"d1": Document("d1", "alpha beta!"), "d2": Document("d2", "gamma")}},
    {"queries": {"q1": "alpha beta?"}},
    {"qrels": {"q1": {"d1": 2}}},
    {"qrels": {"q1": {"d1": 0}}},
    {"answers": {"q1": ["alpha"]}},
    {"info": {"gold_spans": {"q1": [("d1", 0, 5)]}}},
])
def test_every_part_of_a_dataset_changes_its_fingerprint(change):
    assert _dataset(**change).fingerprint() != _dataset().fingerprint()


def test_a_model_revision_changes_the_key(monkeypatch):
    system = System("dense(model=BAAI/bge-small-en-v1.5)", "fixed_tokens(tokenizer=BAAI/bge-small-en-v1.5)", None)
    before = _key(system)
    monkeypatch.setattr(identity, "resolve_model", lambda model_id: SimpleNamespace(source="test", revision="other"))
    assert _key(system) != before
    reranked = System("bm25", "none", "max", stages=Stages(reranker="cross-encoder/ms-marco-MiniLM-L-12-v2"))
    monkeypatch.setattr(identity, "resolve_model", lambda model_id: SimpleNamespace(source="test", revision=model_id))
    first = _key(reranked)
    monkeypatch.setattr(identity, "resolve_model", lambda model_id: SimpleNamespace(source="test", revision="other"))
    assert _key(reranked) != first


def _systems_using_every_component() -> list[System]:
    return [System("dense(model=BAAI/bge-small-en-v1.5)", "fixed_tokens(size=64,overlap=0)", "max"),
            System("late(model=nomic-ai/nomic-embed-text-v1.5)", "fixed_tokens(size=64,overlap=0)", None),
            System(("bm25", "dense"), "none", "max",
                   stages=Stages(fusion="rrf", reranker="cross-encoder/ms-marco-MiniLM-L-12-v2"))]


USES = {  # each module-level component version → which of _systems_using_every_component() compute with it
    "SCORING_VERSION": (True, True, True),
    "IR_MEASURES_VERSION": (True, True, True),
    "AGGREGATE_VERSION": (True, False, True),
    "PIPELINE_VERSION": (False, False, True),
    "CROSS_ENCODER_VERSION": (False, False, True),
}


@pytest.mark.parametrize("name", sorted(USES))
def test_bumping_a_component_version_changes_the_key_of_every_system_using_it(monkeypatch, name):
    systems = _systems_using_every_component()
    before = [_key(s) for s in systems]
    monkeypatch.setattr(f"grainlab.experiments.identity.{name}", "bumped")
    changed = tuple(_key(s) != b for s, b in zip(systems, before, strict=True))
    assert changed == USES[name], name


def test_library_data_that_changes_a_ranking_is_in_the_key(monkeypatch):
    """A morphological analyzer's dictionary (Japanese BM25) and FAISS's version (approximate
    indexes) change rankings without changing a spec; English BM25 and exact search name neither."""
    from grainlab.retrieval import analyzers, ann

    ja, en = System("bm25(language=ja)", "none", "max"), System("bm25", "none", "max")
    hnsw, flat = System("dense(index=hnsw(M=16))", "none", "max"), System("dense", "none", "max")
    monkeypatch.setattr(ann, "faiss_module", lambda: SimpleNamespace(__version__="1.0"))
    before = {s.name: _key(s) for s in (ja, en, hnsw, flat)}
    monkeypatch.setattr(analyzers, "analyzer_versions",
                        lambda language: {"fugashi": "9.9"} if language == "ja" else {})
    monkeypatch.setattr(ann, "faiss_module", lambda: SimpleNamespace(__version__="2.0"))
    after = {s.name: _key(s) for s in (ja, en, hnsw, flat)}
    assert [after[s.name] != before[s.name] for s in (ja, en, hnsw, flat)] == [True, False, True, False]


def test_bumping_any_chunker_retriever_embedder_pooling_or_measure_version_changes_the_key(monkeypatch):
    for name in available_chunkers():
        system = System("bm25", name, None)
        before = _key(system)
        monkeypatch.setattr(_REGISTRY[name], "version", "bumped")
        assert _key(system) != before, name
    for name in available_retrievers():
        system = System(name, "none", "max")
        before = _key(system)
        monkeypatch.setattr(retriever_class(name), "version", "bumped")
        assert _key(system) != before, name
    dense, late, _ = _systems_using_every_component()
    for runtime in identity.EMBEDDING_RUNTIMES:
        before = [_key(dense), _key(late)]
        monkeypatch.setitem(identity.EMBEDDING_RUNTIMES, runtime, "bumped")
        assert [_key(dense), _key(late)] != before and all(a != b for a, b in zip([_key(dense), _key(late)], before))
    before = _key(late)
    monkeypatch.setattr(identity.LatePooler, "version", "bumped")
    assert _key(late) != before
    system = System("bm25", "none", "max")
    for measure in measure_registry.REGISTRY.values():
        if measure.scores != "ranking":
            continue
        name = measure.at(5) if measure.cutoff else measure.name
        before = _key(system, measures=["nDCG@10", name])
        monkeypatch.setitem(measure_registry.REGISTRY, measure.name, dataclasses.replace(measure, version="bumped"))
        assert _key(system, measures=["nDCG@10", name]) != before, measure.name


def _keys_in_a_subprocess(src: Path, systems: list[str]) -> list[str]:
    code = ("import json, sys; from types import SimpleNamespace; from grainlab.experiments import identity; "
            "from grainlab.experiments.systems import System; "
            "identity.resolve_model = lambda m: SimpleNamespace(source='test', revision='rev:' + m); "
            "print(json.dumps([identity.results_key('f' * 64, System.from_name(n), ['nDCG@10'], 10) "
            "for n in json.loads(sys.argv[1])]))")
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", code, json.dumps(systems)], env=env, capture_output=True,
                         text=True, check=True, timeout=300)
    return json.loads(out.stdout)


def test_a_new_module_and_an_edited_docstring_change_no_key(tmp_path):
    systems = [s.name for s in _systems_using_every_component()] + [System("bm25", name, None).name
                                                                     for name in available_chunkers()]
    before = _keys_in_a_subprocess(Path(grainlab.__file__).parents[1], systems)
    copy = tmp_path / "src" / "grainlab"
    shutil.copytree(Path(grainlab.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "chunking" / "my_lines.py").write_text('"""A new chunker module: one chunk per line."""\n')
    for module in ("chunking/__init__.py", "retrieval/bm25.py", "experiments/engine.py", "models/encoders.py"):
        path = copy / module
        text = path.read_text()
        assert text.startswith('"""'), module
        path.write_text('"""A comment edited. ' + text[3:].replace("\n\n", "\n\n# an added comment\n", 1))
    assert _keys_in_a_subprocess(tmp_path / "src", systems) == before


def test_committed_tables_are_keyed_as_the_current_code_keys_them(monkeypatch):
    """Every committed per-query table that records its identity (the engine writes it; the key
    migration added it) is stored under the key the current code computes from its manifest entry:
    a key-scheme change without a migration fails here."""
    monkeypatch.undo()  # real model revisions
    listed = subprocess.run(["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True, check=False)
    records = [REPO / n for n in listed.stdout.split() if "/per_query/" in n and n.endswith(".json")]
    if not records:
        pytest.skip("not a git checkout with committed results")
    manifests: dict[Path, dict] = {}
    checked, stale = 0, []
    for record in records:
        identity_ = json.loads(record.read_text("utf-8")).get("identity")
        if not identity_:
            continue  # written by older code, before tables recorded their identity
        manifest_path = record.parent.parent / "manifest.json"
        manifest = manifests.setdefault(manifest_path, json.loads(manifest_path.read_text("utf-8")))
        entry = next((e for e in manifest["systems"].values() if e["name"] == identity_["system"]), None)
        if entry is None or entry["key"] != identity_["key"]:
            continue  # a table its experiment no longer lists (superseded, or a run in progress)
        parameters = manifest["parameters"]
        try:
            key = identity.results_key(parameters["dataset_fingerprint"], System.from_name(entry["name"]),
                                       list(parameters["measures"]), int(parameters["depth"]))
        except ModelNotAvailable:
            continue
        checked += 1
        if key != identity_["key"]:
            stale.append(f"{record.relative_to(REPO)}")
    assert checked > 200 and stale == [], (checked, stale[:5])


def test_a_system_name_reads_back_as_the_same_system():
    for system in [*_systems_using_every_component(), System("bm25", "parent_child", "max", parents=True)]:
        assert System.from_name(system.name) == dataclasses.replace(system, label=None, tags=())
    with pytest.raises(ConfigError, match="not a system name"):
        System.from_name("bm25")
    assert parse_spec  # the spec grammar is shared with the manifests' names


def test_every_bm25_parameter_changes_its_index_key():
    """The BM25 index cache is keyed by every parameter that shapes the index (generated from the
    retriever's fields, so a new one is covered); ``language`` switches the analyzer."""
    from grainlab.chunking.base import make_chunk
    from grainlab.retrieval import get_retriever

    units = [make_chunk(Document("d", "alpha beta gamma"), 0, 0, 16, 0)]
    base = get_retriever("bm25").index_key(units)
    _, defaults = retriever_parameters("bm25")
    choices = {"method": "robertson", "stemmer": "german", "stopwords": "de", "language": "ja"}
    for field, value in defaults.items():
        alternative = choices.get(field, _alternatives(value)[0])
        assert get_retriever(format_spec("bm25", {field: alternative})).index_key(units) != base, field
    other = [make_chunk(Document("d", "alpha beta delta"), 0, 0, 16, 0)]
    assert get_retriever("bm25").index_key(other) != base


def test_a_citation_id_names_the_splitter_version_the_headings_and_the_text():
    from grainlab.chunking.citations import citation_id

    base = citation_id("doc@1", "fixed_tokens/1", ["Intro"], "some text")
    assert citation_id("doc@1", "fixed_tokens/2", ["Intro"], "some text") != base
    assert citation_id("doc@1", "fixed_tokens/1", ["Usage"], "some text") != base
    assert citation_id("doc@1", "fixed_tokens/1", ["Intro"], "some text!") != base
    assert citation_id("doc@2", "fixed_tokens/1", ["Intro"], "some text").startswith("doc@2#")
