"""The offline mirror's real files load with the counts their README states."""

import pytest

from grainlab.data import available, load_dataset

pytestmark = pytest.mark.mirror


def test_scifact_counts(mirror):
    data = load_dataset("scifact", mirror=mirror, allow_download=False)
    assert (len(data.corpus), len(data.queries)) == (5183, 300)
    assert sum(len(v) for v in data.qrels.values()) == 339


def test_squad_and_covid_counts(mirror):
    squad = load_dataset("squad_dev", mirror=mirror, allow_download=False)
    assert len(squad.corpus) == 2067 and len(squad.queries) == 10570
    covid = load_dataset("covid_qa", mirror=mirror, allow_download=False)
    assert len(covid.corpus) == 98


def test_stitched_sets(mirror):
    for name in ("squad_dev_stitched", "covid_qa_stitched"):
        data = load_dataset(name, mirror=mirror, allow_download=False)
        assert all(len(d.text) >= 50_000 for d in data.corpus.values())
        for qid, answers in data.answers.items():
            text = data.corpus[next(iter(data.qrels[qid]))].text
            assert all(text.count(a) == 1 for a in answers)


def test_nq_oracle(mirror):
    data = load_dataset("nq_open_oracle", mirror=mirror, allow_download=False)
    assert len(data.queries) == 2655


def test_available_reports_mirror_paths(mirror):
    found = available(mirror)
    assert found["scifact"].endswith("beir_scifact") and found["nfcorpus"] is None
