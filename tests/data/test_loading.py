import json

import pytest

from grainlab.data import load_dataset, sample_dataset
from grainlab.data.registry import REGISTRY
from grainlab.errors import DatasetNotFound, MalformedData
from tests.conftest import TOY_CORPUS, TOY_QRELS, TOY_QUERIES, write_beir


def test_beir_folder_through_the_beir_loader(toy_mirror):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    assert set(data.corpus) == set(TOY_CORPUS)
    assert data.corpus["d1"].text == "Solar power Photovoltaic cells convert sunlight directly into electricity."
    assert data.corpus["d1"].title == "Solar power"
    assert set(data.queries) == {"q1", "q2", "q3"}  # beir keeps queries that have qrels
    assert data.qrels["q3"] == {"d5": 1, "d1": 0}
    assert not data.is_qa


def test_mirror_comes_from_the_environment(toy_mirror, monkeypatch):
    monkeypatch.setenv("GRAINLAB_MIRROR", str(toy_mirror))
    assert len(load_dataset("scifact", allow_download=False).corpus) == 5


def test_unknown_dataset_lists_known_names():
    with pytest.raises(DatasetNotFound, match="known datasets: .*scifact"):
        load_dataset("no-such-set")


def test_missing_dataset_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DatasetNotFound) as info:
        load_dataset("nfcorpus", mirror=tmp_path, allow_download=False)
    message = str(info.value)
    assert "GRAINLAB_MIRROR" in message and "beir_nfcorpus" in message and REGISTRY["nfcorpus"].url in message


def test_malformed_corpus_line_is_named(tmp_path):
    folder = write_beir(tmp_path / "m" / "beir_scifact", TOY_CORPUS, TOY_QUERIES, TOY_QRELS)
    lines = (folder / "corpus.jsonl").read_text().splitlines()
    lines[2] = '{"_id": "d3", "text": broken'
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(MalformedData, match=r"corpus\.jsonl:3: not valid JSON"):
        load_dataset("scifact", mirror=tmp_path / "m", allow_download=False)


def test_corpus_line_without_id_is_named(tmp_path):
    folder = write_beir(tmp_path / "m" / "beir_scifact", TOY_CORPUS, TOY_QUERIES, TOY_QRELS)
    with (folder / "corpus.jsonl").open("a") as handle:
        handle.write(json.dumps({"title": "x", "text": "no id"}) + "\n")
    with pytest.raises(MalformedData, match=r"corpus\.jsonl:6: missing field\(s\) \['_id'\]"):
        load_dataset("scifact", mirror=tmp_path / "m", allow_download=False)


@pytest.mark.parametrize("line,expected", [("q1\td1", "expected 3 tab-separated fields"),
                                           ("q1\td1\thigh", "relevance 'high' is not an integer")])
def test_malformed_qrels_line_is_named(tmp_path, line, expected):
    folder = write_beir(tmp_path / "m" / "beir_scifact", TOY_CORPUS, TOY_QUERIES, TOY_QRELS)
    with (folder / "qrels" / "test.tsv").open("a") as handle:
        handle.write(line + "\n")
    with pytest.raises(MalformedData, match=rf"test\.tsv:6: {expected}"):
        load_dataset("scifact", mirror=tmp_path / "m", allow_download=False)


def test_missing_qrels_file(tmp_path):
    folder = write_beir(tmp_path / "m" / "beir_scifact", TOY_CORPUS, TOY_QUERIES, TOY_QRELS)
    (folder / "qrels" / "test.tsv").unlink()
    with pytest.raises(DatasetNotFound, match="qrels/test.tsv"):
        load_dataset("scifact", mirror=tmp_path / "m", allow_download=False)


def test_squad_format(tmp_path):
    squad = {"data": [{"title": "T", "paragraphs": [
        {"context": "Paris is the capital of France.", "qas": [
            {"id": "a", "question": "Capital of France?", "answers": [{"text": "Paris", "answer_start": 0},
                                                                       {"text": "Paris", "answer_start": 0}]},
            {"id": "b", "question": "Impossible?", "answers": [], "is_impossible": True}]}]}]}
    path = tmp_path / "squad_v1.1_dev" / "dev-v1.1.json"
    path.parent.mkdir()
    path.write_text(json.dumps(squad))
    data = load_dataset("squad_dev", mirror=tmp_path, allow_download=False, verify_release=False)
    assert data.answers == {"a": ["Paris"]}
    assert data.qrels == {"a": {"0-0": 1}}
    assert data.corpus["0-0"].title == "T"


def test_malformed_squad_file(tmp_path):
    path = tmp_path / "squad_v1.1_dev" / "dev-v1.1.json"
    path.parent.mkdir()
    path.write_text('{"version": 1}')
    with pytest.raises(MalformedData, match="SQuAD-format"):
        load_dataset("squad_dev", mirror=tmp_path, allow_download=False)


def test_sample_keeps_judged_documents(toy_mirror):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    small = sample_dataset(data, n_queries=2, n_docs=3, seed=1)
    assert len(small.queries) == 2 and len(small.corpus) == 3
    for qid in small.queries:
        assert all(d in small.corpus for d, r in small.qrels[qid].items() if r > 0)
    assert sample_dataset(data, 2, 3, seed=1).queries == small.queries
