"""A catalogue of bad inputs through the command line: each gets a one-line error that says what
to do (exit status 2), a loud warning, or a correct result — never a traceback, never silence."""

from __future__ import annotations

import io
import re
import sys

import pytest

from grainlab.cli import main

CORPUS = b'{"_id": "a", "text": "Hello world. Second sentence."}\n'

CHUNK_CASES = [
    ("fixed_tokens(size=0)", CORPUS, "size must be ≥ 1"),
    ("fixed_tokens(size=8,overlap=8)", CORPUS, r"overlap must be in \[0, size\)"),
    ("fixed_tokens(", CORPUS, "not a spec string"),
    ("nosuch", CORPUS, "unknown chunker 'nosuch'; known:"),
    ("fixed_tokens(size=8,colour=red)", CORPUS, r"has no parameter\(s\) \['colour'\]"),
    ("sentences(n=0)", CORPUS, "n must be ≥ 1"),
    ("sentences(n=2.5)", CORPUS, "'n' must be an integer"),
    ("recursive(size=2)", CORPUS, "size must be ≥ 8"),
    ("passages(words=0)", CORPUS, "passages needs words ≥ 1"),
    ("parent_child(child_size=512,parent_size=64)", CORPUS, "child_size ≤ parent_size"),
    ("none", b"not json\n", "stdin:1: not valid JSON"),
    ("none", b'["a list"]\n', "stdin:1: expected a BEIR corpus line"),
    ("none", b'{"text": "no id"}\n', "stdin:1: expected a BEIR corpus line with _id and text"),
    ("none", b'{"_id": "a", "text": "x", "title": 3}\n', "stdin:1: title must be a string"),
]


@pytest.mark.parametrize("spec, data, message", CHUNK_CASES)
def test_bad_chunk_inputs(spec, data, message, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["chunk", spec]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grainlab: error: ") and err.count("\n") == 1 and re.search(message, err), err


def test_a_tokenizer_for_a_chunker_without_one(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(CORPUS)))
    assert main(["chunk", "none", "--tokenizer", "bogus"]) == 2
    assert "takes no tokenizer" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--measures", "foo"], "unknown measure 'foo'"),
    (["--measures", "nDCG@10.5"], "positive integer"),
    (["--measures", "P@0"], "positive integer"),
    (["--split", "dev"], "qrels/dev.tsv is missing"),
])
def test_bad_evaluate_inputs(args, message, toy_mirror, tmp_path, capsys):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 0.5 t\n")
    assert main(["evaluate", "--dataset", "scifact", "--mirror", str(toy_mirror), str(run), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grainlab: error: ") and re.search(message, err), err


@pytest.mark.parametrize("args, message", [
    (["evaluate", "--dataset", "scifact", "run.trec", "--mirror", "/no/such/mirror"], "is not a folder"),
    (["datasets", "--mirror", "/no/such/mirror"], "is not a folder"),
    (["evaluate", "--dataset", "litm_kv_75", "run.trec"], "not a retrieval dataset"),
    (["evaluate", "--dataset", "nope", "run.trec"], "unknown dataset 'nope'; known datasets"),
    (["reproduce", "--only", "nope"], "unknown notebook 'nope'"),
    (["reproduce", "--only", "chunk_size", "-p", "X"], "must look like NAME=VALUE"),
    (["reproduce", "--only", "chunk_size", "-p", "QUICK_QA_DOCS=abc"], "is int .*got str"),
    (["reproduce", "--only", "chunk_size", "-p", "CHUNK_SIZES=64"], "is list .*got int"),
    (["reproduce", "--only", "chunk_size", "-p", "NOPE=1"], r"no parameter\(s\) \['NOPE'\]"),
    (["reproduce", "--profile", "full", "-p", "PROFILE=quick"], "PROFILE is set with --profile"),
])
def test_bad_command_lines(args, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 0.5 t\n")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("grainlab: error: ") and err.count("\n") == 1 and re.search(message, err), err
