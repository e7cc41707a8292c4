"""Bad input gets a clear error naming the file, line or parameter (issue 13's catalogue)."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grainlab.chunking import get_chunker
from grainlab.cli import main
from grainlab.data import load_dataset
from grainlab.errors import ConfigError, DatasetNotFound, MalformedData
from grainlab.evaluation import parse_measures, read_trec_run
from grainlab.reproduce import check_parameters, notebook_paths
from grainlab.retrieval import get_retriever
from grainlab.settings import project_root
from tests.conftest import TOY_CORPUS, TOY_QRELS, TOY_QUERIES, write_beir


# -- specs ---------------------------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    ("recursive(size=abc)", "'size' must be an integer, got 'abc'"),
    ("fixed_tokens(size=1e3)", "'size' must be an integer, got 1000.0"),
    ("fixed_tokens(size=64.0)", "must be an integer"),
    ("fixed_tokens(size=true)", "must be an integer, got True"),
    ("fixed_tokens(size=8,size=9)", "'size' is given twice"),
    ("sentences(n=5,tokenizer=3)", "'tokenizer' must be a string"),
])
def test_chunker_parameters_are_type_checked(spec, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        get_chunker(spec)


def test_retriever_parameters_are_type_checked():
    with pytest.raises(ConfigError, match="'k1' must be a number"):
        get_retriever("bm25(k1=abc)")
    with pytest.raises(ConfigError, match="no parameter"):
        get_retriever("bm25(cache=x)")
    assert get_retriever("bm25(k1=1.2,b=0.75)").spec == "bm25(k1=1.2,b=0.75,method=lucene)"


@pytest.mark.parametrize("name", ["P@0", "nDCG@0", "R@0"])
def test_a_zero_cutoff_is_rejected_before_pytrec_eval(name):
    with pytest.raises(ConfigError, match="positive integer"):
        parse_measures([name])


# -- run files ------------------------------------------------------------------------
def _run_file(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "run.trec"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


@pytest.mark.parametrize("text, message", [
    ("q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n", r"run.trec:2: document 'd1' is ranked twice .*line 1"),
    ("q1 Q0 d1 1 nan t\n", r"run.trec:1: score 'nan' is not finite"),
    ("q1 Q0 d1 1 inf t\n", "not finite"),
    ("q1 Q0 d1 1 0.5\n", r"run.trec:1: expected 'qid Q0 docid rank score tag'"),
    (b"q1 Q0 d1 1 0.5 t\nq1 Q0 d\xff 2 0.4 t\n", r"run.trec:2: not UTF-8 \(byte offset 24\)"),
])
def test_bad_run_files_name_the_line(tmp_path, text, message):
    with pytest.raises(MalformedData, match=message):
        read_trec_run(_run_file(tmp_path, text))


def test_a_bom_is_stripped_and_a_missing_run_is_one_line(tmp_path):
    assert read_trec_run(_run_file(tmp_path, "\ufeffq1 Q0 d1 1 0.5 t\n")) == {"q1": [("d1", 0.5)]}
    with pytest.raises(DatasetNotFound, match="cannot be read"):
        read_trec_run(str(tmp_path / "absent.trec"))


def test_evaluate_warns_on_a_run_for_another_dataset_and_fails_with_strict(toy_mirror, tmp_path, capsys):
    run = _run_file(tmp_path, "other-q Q0 other-d 1 0.5 t\n")
    assert main(["evaluate", "--dataset", "scifact", "--mirror", str(toy_mirror), run]) == 0
    err = capsys.readouterr().err
    assert "shares no query" in err and "none of the 1 retrieved documents" in err
    assert main(["evaluate", "--dataset", "scifact", "--mirror", str(toy_mirror), "--strict", run]) == 3
    good = _run_file(tmp_path, "q1 Q0 d1 1 0.5 t\nq2 Q0 d3 1 0.5 t\nq3 Q0 d5 1 0.5 t\n")
    assert main(["evaluate", "--dataset", "scifact", "--mirror", str(toy_mirror), "--strict", good]) == 0
    assert main(["evaluate", "--dataset", "scifact", "--mirror", str(toy_mirror), good, "--measures", "P@0"]) == 2


# -- grainlab chunk ---------------------------------------------------------------------
def _chunk(monkeypatch, capsys, data: bytes) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status = main(["chunk", "none"])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("data, message", [
    (b'{"_id": 7, "text": "x"}\n', "stdin:1: _id must be a string, got int"),
    (b'{"_id": "a", "text": null}\n', "stdin:1: text must be a string, got NoneType"),
    (b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "\\ud800"}\n', "stdin:2: text holds a lone surrogate"),
    (b'{"_id": "a", "text": "ok"}\n{"_id": "b", "text": "\xff"}\n', r"stdin:2: not UTF-8 \(byte offset 49 "),
    (b'{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n', "stdin:2: _id 'a' repeats line 1"),
])
def test_chunk_rejects_bad_corpus_lines(monkeypatch, capsys, data, message):
    import re

    status, err = _chunk(monkeypatch, capsys, data)
    assert status == 2 and re.search(message, err), err


def test_datasets_survives_a_closed_pipe():
    command = f"{sys.executable} -m grainlab.cli datasets | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "BrokenPipe" not in done.stderr and done.stdout.count("\n") == 1


# -- datasets -------------------------------------------------------------------------------
def _folder(tmp_path: Path, monkeypatch, **change) -> Path:
    monkeypatch.setenv("GRAINLAB_VERIFY_RELEASES", "0")
    corpus = change.get("corpus", TOY_CORPUS)
    root = tmp_path / "mirror"
    write_beir(root / "beir_scifact", corpus, change.get("queries", TOY_QUERIES), change.get("qrels", TOY_QRELS))
    return root


def test_duplicate_doc_ids(tmp_path, monkeypatch):
    root = _folder(tmp_path, monkeypatch)
    corpus = root / "beir_scifact" / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + json.dumps({"_id": "d1", "title": "", "text": "again"}) + "\n")
    with pytest.raises(MalformedData, match=r"corpus.jsonl:6: _id 'd1' repeats line 1"):
        load_dataset("scifact", mirror=root, allow_download=False)


def test_qrels_naming_unknown_documents_or_queries(tmp_path, monkeypatch):
    root = _folder(tmp_path, monkeypatch, qrels=[*TOY_QRELS, ("q1", "d99", 1)])
    with pytest.raises(MalformedData, match=r"name document\(s\) \['d99'\]"):
        load_dataset("scifact", mirror=root, allow_download=False)


def test_empty_qrels(tmp_path, monkeypatch):
    root = _folder(tmp_path, monkeypatch, qrels=[])
    with pytest.raises(MalformedData, match="test.tsv holds no records"):
        load_dataset("scifact", mirror=root, allow_download=False)


@pytest.mark.parametrize("record, message", [
    ({"_id": 5, "title": "", "text": "x"}, "_id must be a string, got int"),
    ({"_id": "d9", "title": "", "text": None}, "text must be a string, got NoneType"),
])
def test_non_string_ids_and_texts(tmp_path, monkeypatch, record, message):
    root = _folder(tmp_path, monkeypatch)
    corpus = root / "beir_scifact" / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + json.dumps(record) + "\n")
    with pytest.raises(MalformedData, match=message):
        load_dataset("scifact", mirror=root, allow_download=False)


def test_undecodable_bytes_name_the_line_and_offset(tmp_path, monkeypatch):
    root = _folder(tmp_path, monkeypatch)
    queries = root / "beir_scifact" / "queries.jsonl"
    first = queries.read_bytes().split(b"\n")[0]
    queries.write_bytes(first + b"\n" + b'{"_id": "q9", "text": "caf\xe9"}\n')
    with pytest.raises(MalformedData, match=rf"queries.jsonl:2: not UTF-8 \(byte offset {len(first) + 1 + 26}\)"):
        load_dataset("scifact", mirror=root, allow_download=False)


def test_qrels_without_header(tmp_path, monkeypatch):
    root = _folder(tmp_path, monkeypatch)
    qrels = root / "beir_scifact" / "qrels" / "test.tsv"
    qrels.write_text("\n".join(qrels.read_text().splitlines()[1:]) + "\n")
    with pytest.raises(MalformedData, match="test.tsv:1: the first line is a judgment"):
        load_dataset("scifact", mirror=root, allow_download=False)


@pytest.mark.mirror
def test_a_mirror_corpus_cut_at_a_line_boundary_is_caught(mirror, tmp_path):
    copy = tmp_path / "beir_scifact"
    shutil.copytree(mirror / "beir_scifact", copy, ignore=shutil.ignore_patterns("raw_*", "derivation"))
    assert len(load_dataset("scifact", mirror=tmp_path, allow_download=False).corpus) == 5183
    lines = (copy / "corpus.jsonl").read_text().splitlines(keepends=True)
    judged = {d for docs in load_dataset("scifact", mirror=tmp_path, allow_download=False).qrels.values() for d in docs}
    cut = [line for line in lines if json.loads(line)["_id"] not in judged][10:] + \
        [line for line in lines if json.loads(line)["_id"] in judged]
    (copy / "corpus.jsonl").write_text("".join(cut))  # well-formed, every judged document kept
    with pytest.raises(MalformedData, match="matching no known release"):
        load_dataset("scifact", mirror=tmp_path, allow_download=False)


# -- reproduce --------------------------------------------------------------------------
def test_reproduce_rejects_unknown_parameters_and_profile():
    py_path, _ = notebook_paths("chunk_size", project_root())
    with pytest.raises(ConfigError, match="PROFILE is set with --profile"):
        check_parameters("chunk_size", py_path, {"PROFILE": "quick"})
    with pytest.raises(ConfigError, match=r"no parameter\(s\) \['QUIK_QA_DOCS'\]"):
        check_parameters("chunk_size", py_path, {"QUIK_QA_DOCS": 1})
    check_parameters("chunk_size", py_path, {"QUICK_QA_DOCS": 1})
    assert main(["reproduce", "--profile", "full", "-p", "PROFILE=quick", "--only", "chunk_size"]) == 2


def test_squad_and_jsonl_files_with_bad_bytes_or_cut_gzip(tmp_path):
    import gzip

    from grainlab.data.qa_formats import load_squad_format, read_jsonl

    squad = tmp_path / "dev.json"
    squad.write_bytes(b'{"data": [{"title": "caf\xe9"}]}')
    with pytest.raises(MalformedData, match=r"dev.json: not UTF-8 \(byte offset 24\)"):
        load_squad_format(squad, "squad_dev")
    lines = tmp_path / "x.jsonl"
    lines.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(MalformedData, match=r"x.jsonl:2: not UTF-8 \(byte offset 16\)"):
        list(read_jsonl(lines))
    packed = tmp_path / "x.jsonl.gz"
    body = b"".join(b'{"a": %d}\n' % (i * 7919 % 100003) for i in range(5000))
    packed.write_bytes(gzip.compress(body)[:-100])
    with pytest.raises(MalformedData, match="cannot be read"):
        list(read_jsonl(packed))
