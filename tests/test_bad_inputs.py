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


# -- issue 35: inputs that were scored silently wrong, crashed with a traceback or were unclear -----------
def _beir_folder(root, corpus=None, queries=None, qrels=None):
    from tests.conftest import write_beir

    return write_beir(root, corpus or {"1": ("", "solar cells make electricity"), "7": ("", "batteries store it")},
                      queries or {"1": "how do solar cells work"}, qrels or [("1", "1", 1), ("1", "7", 1)])


def _one_error_line(err: str) -> bool:
    """One ``grainlab: error:`` line and no traceback (beir's own progress bar may stand before it)."""
    return [line for line in err.splitlines() if "grainlab:" in line] == \
        [line for line in err.splitlines() if "grainlab: error: " in line][:1] and "Traceback" not in err


def _evaluate(args, capsys):
    status = main(["evaluate", *map(str, args)])
    return status, *capsys.readouterr()


def test_a_document_sharing_its_query_id_is_scored_like_any_other(tmp_path, capsys):
    """Document 1 ranked first for query 1 scored nDCG@10 0.5 (the hit was dropped); ir-measures gives 1.0."""
    folder = _beir_folder(tmp_path / "mine")
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 1 1 2.0 t\n1 Q0 7 2 1.0 t\n")
    from grainlab.data import UnverifiedDatasetWarning

    with pytest.warns(UnverifiedDatasetWarning, match="loaded as a BEIR folder by path"):  # said, not silent
        status, out, err = _evaluate(["--dataset", folder, run, "--measures", "nDCG@10"], capsys)
    assert status == 0 and out == "nDCG@10\t1.0000\n", (out, err)


def test_the_identical_id_convention_applies_where_the_registry_says_so():
    from grainlab.data import REGISTRY

    assert {name for name, spec in REGISTRY.items() if spec.queries_in_corpus} == {"arguana", "quora"}


def test_run_ids_that_match_the_qrels_only_in_part_are_reported_and_refused_with_strict(tmp_path, capsys):
    queries = {str(i): f"question {i}" for i in range(1, 5)}
    folder = _beir_folder(tmp_path / "mine", queries=queries, qrels=[(q, "1", 1) for q in queries])
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 1 1 1.0 t\n2 Q0 1 1 1.0 t\n00003 Q0 1 1 1.0 t\n00004 Q0 1 1 1.0 t\n")
    status, out, err = _evaluate(["--dataset", folder, run], capsys)
    assert status == 0 and "2 of 4 run queries are not judged" in err and "leading zeros" in err, err
    assert "2 of 4 judged queries are not in the run and score 0" in err
    assert _evaluate(["--dataset", folder, run, "--strict"], capsys)[0] == 3


def test_qrels_without_a_positive_judgment_are_an_error_not_zero(tmp_path, capsys):
    folder = _beir_folder(tmp_path / "mine", qrels=[("1", "1", 0), ("1", "7", 0)])
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 1 1 1.0 t\n")
    status, out, err = _evaluate(["--dataset", folder, run], capsys)
    assert status == 2 and out == "" and "no positive judgment" in err and _one_error_line(err), err


def test_some_queries_without_a_positive_judgment_are_counted(tmp_path, capsys):
    folder = _beir_folder(tmp_path / "mine", queries={"1": "a", "2": "b"}, qrels=[("1", "1", 1), ("2", "7", 0)])
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 1 1 1.0 t\n2 Q0 7 1 1.0 t\n")
    status, _, err = _evaluate(["--dataset", folder, run], capsys)
    assert status == 0 and "1 of 2 judged queries have no positive judgment" in err, err


def test_a_report_over_an_empty_results_folder_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path / "results"))
    assert main(["report"]) == 2
    err = capsys.readouterr().err
    assert "holds no full-profile results" in err and "grainlab reproduce" in err, err


def test_ids_with_spaces_survive_a_saved_run(toy_mirror, tmp_path):
    from grainlab.data import load_dataset
    from grainlab.experiments import System, run_experiment

    folder = _beir_folder(tmp_path / "mine", corpus={"doc 1": ("", "solar cells make electricity"),
                                                    "50% off": ("", "batteries store it")},
                          queries={"q 1": "solar cells"}, qrels=[("q 1", "doc 1", 1)])
    data = load_dataset(str(folder))
    result = run_experiment(data, [System("bm25", "none", "max")], name="spaces", results_dir=tmp_path / "results",
                            progress=False, save_runs=True, measures="nDCG@10")
    run = result.run(result.systems["system"][0])
    assert set(run) == {"q 1"} and {d for d, _ in run["q 1"]} == {"doc 1", "50% off"}


@pytest.mark.parametrize("name, content, line", [
    ("corpus.jsonl", b'{"_id": "1", "text": "a"}\n{"_id": "7", "text": "b"}\n\n', 3),
    ("corpus.jsonl", b'\xef\xbb\xbf{"_id": "1", "text": "a"}\n{"_id": "7", "text": "b"}\n', 1),
    ("queries.jsonl", b'{"_id": "1", "text": "q"}\n\n', 2),
    ("qrels/test.tsv", b"query-id\tcorpus-id\tscore\n1\t1\t1\n\n", 3),
])
def test_files_beir_cannot_read_are_one_line_errors_naming_the_line(name, content, line, tmp_path, capsys):
    folder = _beir_folder(tmp_path / "mine")
    (folder / name).write_bytes(content)
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 1 1 1.0 t\n")
    status, _, err = _evaluate(["--dataset", folder, run], capsys)
    assert status == 2 and _one_error_line(err) and f"{name}:{line}:" in err, err


def test_a_bom_on_the_qrels_header_is_read_as_beir_reads_it(tmp_path, capsys):
    folder = _beir_folder(tmp_path / "mine")
    qrels = folder / "qrels" / "test.tsv"
    qrels.write_bytes(b"\xef\xbb\xbf" + qrels.read_bytes())
    run = tmp_path / "run.trec"
    run.write_text("1 Q0 1 1 2.0 t\n1 Q0 7 2 1.0 t\n")
    assert _evaluate(["--dataset", folder, run, "--measures", "nDCG@10"], capsys)[:2] == (0, "nDCG@10\t1.0000\n")


@pytest.mark.parametrize("variable", ["GRAINLAB_RESULTS", "GRAINLAB_CACHE"])
def test_a_settings_folder_that_is_a_file_is_one_line(variable, tmp_path, capsys, monkeypatch):
    afile = tmp_path / "not-a-folder"
    afile.write_text("x")
    monkeypatch.setenv(variable, str(afile))
    monkeypatch.setenv("GRAINLAB_RESULTS" if variable == "GRAINLAB_CACHE" else "GRAINLAB_CACHE", str(tmp_path / "ok"))
    folder = _beir_folder(tmp_path / "mine")
    status = main(["report"]) if variable == "GRAINLAB_RESULTS" else main(
        ["evaluate", "--dataset", "scifact", str(folder / "corpus.jsonl"), "--mirror", str(tmp_path / "nomirror")])
    err = capsys.readouterr().err
    if variable == "GRAINLAB_CACHE":  # the cache is only needed once a dataset is fetched: ask for it directly
        from grainlab import settings
        from grainlab.errors import ConfigError

        with pytest.raises(ConfigError, match=f"is a file, not a folder: point {variable} at a folder"):
            settings.cache_dir()
        return
    assert status == 2 and _one_error_line(err) and f"point {variable} at a folder" in err, err


def test_an_own_folder_in_the_mirror_names_the_switch_that_accepts_it(toy_mirror, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GRAINLAB_VERIFY_RELEASES", "1")  # the toy scifact is not the release
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    status, _, err = _evaluate(["--dataset", "scifact", "--mirror", toy_mirror, run], capsys)
    assert status == 2 and "GRAINLAB_VERIFY_RELEASES=0" in err and "by path" in err, err


def test_a_gzipped_run_is_read_as_trec_eval_users_expect(tmp_path, capsys):
    import gzip

    folder = _beir_folder(tmp_path / "mine")
    run = tmp_path / "run.trec.gz"
    run.write_bytes(gzip.compress(b"1 Q0 1 1 2.0 t\n1 Q0 7 2 1.0 t\n"))
    assert _evaluate(["--dataset", folder, run, "--measures", "nDCG@10"], capsys)[:2] == (0, "nDCG@10\t1.0000\n")
    run.write_bytes(gzip.compress(b"1 Q0 1 1 2.0 t\n")[:12])
    status, _, err = _evaluate(["--dataset", folder, run], capsys)
    assert status == 2 and "cannot be decompressed" in err, err


def test_a_measure_in_the_wrong_case_suggests_the_right_one(toy_mirror, tmp_path, capsys):
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    status, _, err = _evaluate(["--dataset", "scifact", "--mirror", toy_mirror, run, "--measures", "ndcg@10"], capsys)
    assert status == 2 and "did you mean 'nDCG@10'?" in err, err


def test_one_measure_name_is_one_measure(toy_mirror, tmp_path):
    from grainlab.data import load_dataset
    from grainlab.experiments import System, run_experiment

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    result = run_experiment(data, [System("bm25", "none", "max")], measures="nDCG@10", name="one",
                            results_dir=tmp_path / "results", progress=False)
    assert sorted(result.aggregate["measure"].unique()) == ["nDCG@10"]


# ------------------------------------------------------------------ issue 55: tables, figures, arguments

def _report_fixture(tmp_path):
    from tests.test_publish import fake_results, with_verdicts

    results, figures = fake_results(tmp_path)
    with_verdicts(results)
    return results, figures, results / "late_chunking" / "full" / "verdicts.csv"


@pytest.mark.parametrize("damage, message", [
    (lambda text: "", "verdicts.csv: empty"),
    (lambda text: text.split("\n", 1)[1], r"no \['claim', 'verdict'\] column"),
    (lambda text: "<<<<<<< HEAD\n" + text + "=======\n" + text + ">>>>>>> theirs\n", r"verdicts.csv:1: a git conflict"),
    (lambda text: text[: text.index("\n") + 20], "cut"),
    (lambda text: text.replace("reproduced", "reproducd", 1) if "reproduced" in text else text.replace(
        "inconclusive", "inconclusiv", 1), "unknown verdict"),
])
def test_a_damaged_verdict_table_is_refused_with_one_line(tmp_path, monkeypatch, capsys, damage, message):
    results, figures, verdicts = _report_fixture(tmp_path)
    verdicts.write_text(damage(verdicts.read_text()))
    monkeypatch.setenv("GRAINLAB_RESULTS", str(results))
    monkeypatch.setenv("GRAINLAB_FIGURES", str(figures))
    assert main(["report", "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("grainlab: error: ") and err.count("\n") == 1 and re.search(message, err), err


@pytest.mark.parametrize("damage", ["empty", "missing"])
def test_a_figure_that_cannot_be_shown_is_named(tmp_path, monkeypatch, capsys, damage):
    results, figures, _ = _report_fixture(tmp_path)
    png = figures / "late_chunking_sweep.png"
    png.with_suffix(".pdf").write_bytes(b"%PDF-1.4")
    png.write_bytes(b"") if damage == "empty" else png.unlink()
    monkeypatch.setenv("GRAINLAB_RESULTS", str(results))
    monkeypatch.setenv("GRAINLAB_FIGURES", str(figures))
    assert main(["report", "--out", str(tmp_path / "r.html")]) == 0
    err = capsys.readouterr().err
    assert f"late_chunking_sweep.png is {damage}" in err
    assert f"Figure not shown: late_chunking_sweep.png is {damage}" in (tmp_path / "r.html").read_text()


def test_ir_measures_aliases_are_scored_under_their_canonical_names(toy_mirror, tmp_path, cache):
    from grainlab.data import load_dataset
    from grainlab.experiments import System, run_experiment

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    result = run_experiment(data, [System("bm25"), System("bm25(b=0.3)")], ["MAP", "MRR@10", "NDCG@10"], name="a",
                            results_dir=tmp_path, cache=cache, progress=False, n_resamples=50)
    assert sorted(set(result.aggregate["measure"])) == ["AP", "RR@10", "nDCG@10"]
    assert result.significance["measure"].tolist() == ["AP"]


@pytest.mark.parametrize("argv, message", [
    (["tokens", "--sizes", "0", "-5"], r"--sizes are token counts: each at least 1, got \[0, -5\]"),
    (["tokens", "--tokenizer", "cl100k", "--mirror", "."], "unknown tokenizer 'cl100k'; did you mean 'cl100k_base'"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--k", "-1"], "--k is how many units a question is shown"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--price-per-mtok", "-1"], "--price-per-mtok is a price"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--tune-share", "1.5"], "--tune-share"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--chunkers", "breakpoint(amount=150)"],
     "from 0 to 100, got 150"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--chunkers", "maxmin(threshold=3)"], "from -1 to 1"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--chunkers", "fixed_tokens(size=0)"], "size must be ≥ 1"),
    (["compare", "docs", "q.jsonl", "--out", "o", "--side-by-side", "bm25(colour=red)"],
     r"has no parameter\(s\) \['colour'\]"),
    (["questions", "docs", "--out", "q.jsonl", "--reader", "sentence-transformers/all-MiniLM-L6-v2"],
     "an embedding or ranking model, which cannot write questions"),
])
def test_values_that_should_be_refused_are_refused_before_anything_is_read_or_written(
        tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)  # "docs" does not exist: each error must come before it is read
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("grainlab: error: ") and err.count("\n") == 1 and re.search(message, err), err
    assert not (tmp_path / "o").exists() and not (tmp_path / "q.jsonl").exists()


def test_tokens_over_a_mirror_without_the_reference_texts_is_one_line(tmp_path, capsys):
    assert main(["tokens", "--mirror", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no Japanese articles in" in err


# ------------------------------------------------------------------ issue 55: inputs that vanish, runs that rot

def test_every_skipped_or_empty_document_is_named(tmp_path, monkeypatch):
    from grainlab.data import documents as documents_module
    from grainlab.data.documents import SkippedInputWarning, load_documents

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bom.md").write_bytes("\ufeff# Title\n\nBody text.\n".encode("utf-8"))
    (docs / "empty.txt").write_bytes(b"")
    (docs / "dangling.md").symlink_to(docs / "nowhere.md")
    (docs / "big.txt").write_text("x " * 100, encoding="utf-8")
    (docs / "out").mkdir()
    (docs / "out" / "report.html").write_text("<p>an earlier decision</p>", encoding="utf-8")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "linked.md").write_text("# Linked\n\nFrom a linked folder.\n", encoding="utf-8")
    (docs / "team").symlink_to(tmp_path / "shared")  # a linked subfolder is read
    (docs / "again").symlink_to(docs)  # a loop is named, not followed
    monkeypatch.setattr(documents_module, "LARGE_FILE_BYTES", 150)
    with pytest.warns(SkippedInputWarning) as caught:
        found = load_documents(docs, exclude=[docs / "out"])
    said = " | ".join(str(w.message) for w in caught)
    assert "empty.txt: empty; not indexed" in said and "dangling.md: a link that leads nowhere" in said
    assert "report.html: under the output folder" in said and "big.txt: 0 MB" in said
    assert "again: a link back to a folder already read (a loop)" in said
    assert sorted(d.doc_id for d in found) == ["big", "bom", "team/linked"]
    bom = next(d for d in found if d.doc_id == "bom")
    assert bom.text.startswith("# Title")  # the byte-order mark no longer hides the heading
    from grainlab.chunking import get_chunker
    from grainlab.data import Document

    assert get_chunker("structure(size=64)").chunk(Document("bom", bom.text))[0].metadata["headings"] == ["Title"]


def test_a_stored_run_with_a_flipped_byte_is_recomputed_not_read(toy_mirror, tmp_path, cache):
    from grainlab.cache import CorruptCacheWarning
    from grainlab.data import load_dataset
    from grainlab.experiments import System, run_experiment

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    system = System("bm25")
    first = run_experiment(data, [system], name="r", results_dir=tmp_path, cache=cache, progress=False,
                           n_resamples=50, save_runs=True)
    run_file = next((tmp_path / "r" / "per_query").glob("*.final.run"))
    original = run_file.read_bytes()
    run_file.write_bytes(original.replace(b" 1 ", b" 9 ", 1) if b" 1 " in original else original[:-2] + b"9\n")
    with pytest.warns(CorruptCacheWarning, match="fails the checksum"):
        again = run_experiment(data, [system], name="r", results_dir=tmp_path, cache=cache, progress=False,
                               n_resamples=50, save_runs=True)
    assert "reused" not in again.manifest["systems"][system.name]
    assert run_file.read_bytes() == original
    assert again.run(system.name) == first.run(system.name)


def test_a_new_decision_is_not_left_beside_an_earlier_side_by_side_run(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    (out / "side_by_side").mkdir(parents=True)
    (out / "retrievers.csv").write_text("earlier\n")
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "docs", "q.jsonl", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds an earlier run's side-by-side comparison" in err
    assert (out / "retrievers.csv").read_text() == "earlier\n"  # nothing deleted


def test_a_folder_that_cannot_be_written_is_one_line(tmp_path, capsys, monkeypatch):
    """Read-only --out or cache (root, as CI runs, may write anywhere, so the refusal is simulated)."""
    from grainlab.studies import your_documents as yd

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "out" / "decision.csv"))

    monkeypatch.setattr(yd, "load_inputs", refuse)
    assert main(["compare", "docs", "q.jsonl", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "decision.csv: not writable (Permission denied)" in err
