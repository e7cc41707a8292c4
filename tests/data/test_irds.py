"""Datasets by ir_datasets id (issue 58): ``load_dataset("irds:…")`` and ``grainlab evaluate --dataset irds:…``.

Nothing here downloads: a dataset is built with ir_datasets' local-file API, and SciFact is read
from an ir_datasets home whose copy is made from the mirror's BEIR files, so the same files are
loaded both ways and must give the same data and the same scores."""

import itertools
import os
import subprocess
import sys
import zipfile

import pytest

ir_datasets = pytest.importorskip("ir_datasets")

from grainlab.cli import main  # noqa: E402
from grainlab.data import load_dataset  # noqa: E402
from grainlab.data.recipes import rebuild  # noqa: E402
from grainlab.errors import ConfigError, DatasetNotFound  # noqa: E402

_ids = itertools.count()


@pytest.fixture
def local_irds(tmp_path):
    """A dataset made with ``ir_datasets.create_dataset`` from local TSV/TREC files, registered
    under a new id (ir_datasets' registry is process-wide)."""
    (tmp_path / "docs.tsv").write_text("d1\tsolar cells turn light into electricity\n"
                                       "d2\tcoffee contains caffeine\nd3\tbatteries store electricity\n")
    (tmp_path / "queries.tsv").write_text("q1\thow do solar cells work\nq2\twhich drink has caffeine\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 2\nq2 0 d3 0\n")
    name = f"grainlab-test/local-{next(_ids)}"
    ir_datasets.registry.register(name, ir_datasets.create_dataset(
        docs_tsv=str(tmp_path / "docs.tsv"), queries_tsv=str(tmp_path / "queries.tsv"),
        qrels_trec=str(tmp_path / "qrels")))
    return name


def test_a_local_ir_datasets_dataset_maps_onto_grainlabs_shape(local_irds):
    data = load_dataset(f"irds:{local_irds}")
    assert {d: doc.text for d, doc in data.corpus.items()} == {
        "d1": "solar cells turn light into electricity", "d2": "coffee contains caffeine",
        "d3": "batteries store electricity"}
    assert data.queries == {"q1": "how do solar cells work", "q2": "which drink has caffeine"}
    assert data.qrels == {"q1": {"d1": 1}, "q2": {"d2": 2, "d3": 0}}
    assert data.info["recipe"] == {"dataset": f"irds:{local_irds}", "split": "test"}
    assert rebuild(data.info["recipe"], load_dataset).fingerprint() == data.fingerprint()


def test_grainlab_evaluate_reads_an_ir_datasets_id(local_irds, tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 9 x\nq2 Q0 d3 1 5 x\nq2 Q0 d2 2 4 x\n")
    assert main(["evaluate", "--dataset", f"irds:{local_irds}", str(run), "--measures", "P@1"]) == 0
    assert capsys.readouterr().out.strip() == "P@1\t0.5000"


@pytest.mark.mirror
def test_the_same_scifact_files_give_the_same_data_and_scores_either_way(mirror, tmp_path, capsys):
    """ir_datasets fixes its home when imported, so its side runs in a fresh process."""
    home = tmp_path / "ir_datasets"
    (home / "beir" / "scifact").mkdir(parents=True)
    with zipfile.ZipFile(home / "beir" / "scifact" / "source.zip", "w") as archive:  # where ir_datasets keeps it
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            archive.write(mirror / "beir_scifact" / name, f"scifact/{name}")
    through_beir = load_dataset("scifact", mirror=str(mirror), allow_download=False)
    run = tmp_path / "run.txt"  # each query's first judged document at rank 1, a wrong one at rank 2
    wrong = next(iter(through_beir.corpus))
    run.write_text("".join(f"{q} Q0 {next(iter(docs))} 1 2 x\n{q} Q0 {wrong} 2 1 x\n"
                           for q, docs in sorted(through_beir.qrels.items())))
    code = ("import sys; from grainlab.data import load_dataset; from grainlab.cli import main; "
            "print(load_dataset('irds:beir/scifact/test').fingerprint()); "
            f"sys.exit(main(['evaluate', '--dataset', 'irds:beir/scifact/test', {str(run)!r}, "
            "'--measures', 'nDCG@10', 'R@100']))")
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "HTTPS_PROXY": "http://127.0.0.1:9"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    fingerprint, scores = done.stdout.split("\n", 1)
    assert fingerprint == through_beir.fingerprint()
    assert main(["evaluate", "--mirror", str(mirror), "--dataset", "scifact", str(run),
                 "--measures", "nDCG@10", "R@100"]) == 0
    assert capsys.readouterr().out == scores and "nDCG@10" in scores


def test_a_dataset_ir_datasets_cannot_read_offline_is_one_line_saying_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setattr(ir_datasets.util, "home_path", lambda: tmp_path)
    for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # nothing listens there: no download can happen
    with pytest.raises(DatasetNotFound, match=r"irds:beir/nfcorpus/test: ir_datasets has no local copy.*"
                                              r"ir_datasets export beir/nfcorpus/test"):
        load_dataset("irds:beir/nfcorpus/test")


def test_an_unknown_id_or_a_missing_library_is_one_line():
    with pytest.raises(DatasetNotFound, match="ir_datasets has no dataset 'no/such/set'"):
        load_dataset("irds:no/such/set")


def test_without_ir_datasets_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ir_datasets", None)
    with pytest.raises(ConfigError, match=r"pip install 'grainlab\[irds\]'"):
        load_dataset("irds:beir/scifact/test")
