"""Result integrity: keys cover everything a value depends on, corrupt entries are recomputed,
run files round-trip exactly (regression tests for the defects in issue 13)."""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from grainlab import cache as cache_module
from grainlab.cache import ArtifactCache, CorruptCacheWarning, code_fingerprint
from grainlab.chunking.fixed import FixedTokenChunker
from grainlab.data import load_dataset
from grainlab.evaluation import evaluate_run, read_trec_run, write_trec_run
from grainlab.experiments import System, run_experiment
from grainlab.experiments.chunk_cache import chunk_corpus
from grainlab.retrieval import get_retriever

SYSTEM = System("bm25", "fixed_tokens(size=8,overlap=0)", "max")


def _run(data, tmp_path, cache, name="keys"):
    return run_experiment(data, [SYSTEM], name=name, results_dir=tmp_path / "results", cache=cache, progress=False)


def test_a_new_chunker_version_recomputes_results_and_the_manifest_shows_it(toy_mirror, tmp_path, cache, monkeypatch):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    first = _run(data, tmp_path, cache)
    assert _run(data, tmp_path, cache).manifest["systems"][SYSTEM.name]["reused"] is True
    monkeypatch.setattr(FixedTokenChunker, "version", "999")
    again = _run(data, tmp_path, cache)
    info = again.manifest["systems"][SYSTEM.name]
    assert "reused" not in info and info["chunker_version"] == "fixed_tokens/999"
    assert first.manifest["systems"][SYSTEM.name]["chunker_version"] != info["chunker_version"]


def test_an_edit_without_a_version_bump_reuses_results_and_a_bump_recomputes_them(toy_mirror, tmp_path, cache,
                                                                               monkeypatch):
    """Keys name versions, not source: an edited file changes no key (``grainlab verify`` catches an
    edit that changes a value without its bump); a bumped retriever version recomputes."""
    from grainlab.retrieval.bm25 import BM25Retriever

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    _run(data, tmp_path, cache)
    real = cache_module.code_fingerprint
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda *m: real(*m) + "-edited")
    assert _run(data, tmp_path, cache).manifest["systems"][SYSTEM.name]["reused"] is True
    monkeypatch.setattr(BM25Retriever, "version", "2")
    assert "reused" not in _run(data, tmp_path, cache).manifest["systems"][SYSTEM.name]


def test_code_fingerprint_follows_every_source_file(tmp_path, monkeypatch):
    copy = tmp_path / "grainlab"
    shutil.copytree(cache_module.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "PACKAGE_ROOT", copy)
    code_fingerprint.cache_clear()
    try:
        before = code_fingerprint("evaluation", "retrieval.bm25")
        answers = copy / "evaluation" / "answers.py"
        answers.write_text(answers.read_text() + "\n# answer_recall now returns 0\n")
        code_fingerprint.cache_clear()
        assert code_fingerprint("evaluation", "retrieval.bm25") != before
        assert code_fingerprint("retrieval.bm25") == code_fingerprint("retrieval.bm25")
        with pytest.raises(ValueError, match="no grainlab module"):
            code_fingerprint("no.such.module")
    finally:
        code_fingerprint.cache_clear()


def test_a_truncated_stored_table_is_recomputed_not_reused(toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    full = _run(data, tmp_path, cache)
    [stored] = (tmp_path / "results" / "keys" / "per_query").glob("*.csv")
    stored.write_text("\n".join(stored.read_text().splitlines()[:3]) + "\n")
    with pytest.warns(CorruptCacheWarning, match="checksum mismatch"):
        again = _run(data, tmp_path, cache)
    assert "reused" not in again.manifest["systems"][SYSTEM.name]
    assert len(again.per_query) == len(full.per_query)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "no_checksum"])
def test_a_damaged_array_is_a_miss(tmp_path, damage):
    cache = ArtifactCache(tmp_path)
    good = np.arange(12, dtype=np.float32).reshape(3, 4)
    cache.save_array("emb", "k" * 64, good)
    path = cache.path("emb", "k" * 64, ".npy")
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[:-8])
    elif damage == "garbage":
        path.write_bytes(data[:-16] + np.full(4, 9e9, dtype=np.float32).tobytes())
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.with_name(path.name + ".sha256").unlink()
    with pytest.warns(CorruptCacheWarning):
        assert cache.load_array("emb", "k" * 64) is None
    assert not path.exists()
    assert np.array_equal(cache.array("emb", "k" * 64, lambda: good), good)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(cache.load_array("emb", "k" * 64), good)  # reported once, then healthy


def test_a_damaged_json_entry_is_a_miss(tmp_path):
    cache = ArtifactCache(tmp_path)
    cache.save_json("generations", "g" * 64, {"text": "Paris"})
    path = cache.path("generations", "g" * 64, ".json")
    path.write_text('{"text": "Lyon"}')
    with pytest.warns(CorruptCacheWarning):
        assert cache.json("generations", "g" * 64, lambda: {"text": "Paris"}) == {"text": "Paris"}


def test_chunk_offsets_that_do_not_fit_the_corpus_are_recomputed(toy_mirror, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    chunker = FixedTokenChunker(size=8, overlap=0)
    chunks = chunk_corpus(data, chunker, cache)
    from grainlab.experiments.chunk_cache import chunks_key

    key = chunks_key(data, chunker)
    rows = cache.load_json("chunks", key)
    rows[0][3] = 10**6  # an end offset past the document: written with a valid checksum
    cache.save_json("chunks", key, rows)
    with pytest.warns(CorruptCacheWarning, match="does not fit"):
        assert chunk_corpus(data, chunker, cache) == chunks


def test_a_damaged_bm25_index_is_rebuilt(toy_mirror, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    units = chunk_corpus(data, FixedTokenChunker(size=8, overlap=0), cache)
    expected = get_retriever("bm25", cache=cache).index(units).search(data.queries, k=5)
    [folder] = [p for p in (cache.root / "bm25").glob("*/*") if p.is_dir()]
    victim = next(p for p in sorted(folder.iterdir()) if p.suffix == ".npy" or p.suffix == ".json"
                  and p.name != ".checksums.json")
    victim.write_bytes(victim.read_bytes()[:5])
    with pytest.warns(CorruptCacheWarning):
        assert get_retriever("bm25", cache=cache).index(units).search(data.queries, k=5) == expected


def test_trec_run_round_trips_every_measure(tmp_path):
    rng = np.random.default_rng(0)
    docs = [f"d{i}" for i in range(40)]
    qrels = {f"q{q}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 8, replace=False)} for q in range(20)}
    base = np.float32(0.5)
    run = {}
    for q in qrels:  # scores that differ only below 1e-6, in float32 as the dense retrievers return them
        scores = base + np.arange(len(docs), dtype=np.float32)[::-1] * np.float32(6e-8)
        order = rng.permutation(len(docs))
        run[q] = sorted(((docs[i], scores[j]) for j, i in enumerate(order)), key=lambda x: -x[1])
    path = tmp_path / "run.trec"
    write_trec_run(run, str(path))
    back = read_trec_run(str(path))
    assert {q: [(d, float(s)) for d, s in r] for q, r in run.items()} == back
    measures = ["nDCG@10", "R@5", "P@3", "AP", "RR", "nDCG@3"]
    assert evaluate_run(back, qrels, measures).equals(evaluate_run(run, qrels, measures))


def test_a_new_chunker_version_recomputes_cached_chunks(toy_mirror, cache, monkeypatch):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    chunker = FixedTokenChunker(size=8, overlap=0)
    calls = []
    real = FixedTokenChunker.chunk_many
    monkeypatch.setattr(FixedTokenChunker, "chunk_many", lambda self, docs: calls.append(1) or real(self, docs))
    chunk_corpus(data, chunker, cache)
    chunk_corpus(data, chunker, cache)
    assert calls == [1]
    monkeypatch.setattr(FixedTokenChunker, "version", "999")
    chunk_corpus(data, chunker, cache)
    assert calls == [1, 1]


def test_an_executed_notebook_over_the_limit_keeps_its_images_and_loses_long_text(tmp_path):
    import json

    from grainlab.reproduce import trim_outputs

    image = "iVBORw0KGgo" * 50
    notebook = {"cells": [{"cell_type": "code", "source": "print()", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "x" * 50_000},
        {"output_type": "display_data", "data": {"image/png": image, "text/plain": "<Figure>"}}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(notebook))
    assert trim_outputs(path, limit=10_000, keep=100) == 1
    trimmed = json.loads(path.read_text())
    outputs = trimmed["cells"][0]["outputs"]
    assert outputs[1]["data"]["image/png"] == image and "characters trimmed" in outputs[0]["text"]
    assert path.stat().st_size <= 10_000
    assert trim_outputs(path, limit=10_000) == 0  # under the limit: nothing more cut


def test_an_executed_notebook_over_the_limit_keeps_one_output_per_stream_and_each_bars_last_state(tmp_path):
    import json

    from grainlab.reproduce import trim_outputs

    redraws = [{"output_type": "stream", "name": "stderr", "text": f"\rencode: {i:3d}%|" + "#" * (i // 10)}
               for i in range(101)]
    notebook = {"cells": [{"cell_type": "code", "source": "run()", "outputs": [
        {"output_type": "stream", "name": "stdout", "text": "start\n"}, *redraws,
        {"output_type": "stream", "name": "stderr", "text": "\n"},
        {"output_type": "display_data", "data": {"text/plain": "table"}},
        {"output_type": "stream", "name": "stdout", "text": ["done\n", "ok\n"]}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(notebook))
    assert trim_outputs(path, limit=1_000) == 0  # coalescing alone brought it under: no text cut
    outputs = json.loads(path.read_text())["cells"][0]["outputs"]
    assert [o.get("name") for o in outputs] == ["stdout", "stderr", None, "stdout"]
    assert outputs[1]["text"] == "encode: 100%|##########\n" and outputs[3]["text"] == "done\nok\n"


def test_nested_progress_bars_keep_their_last_states_only():
    from grainlab.reproduce import _last_bar_states

    outer = "systems: 100%|##| 2/2 [00:09<00:00]"
    inner = [f"rerank:  {i}0%|# | {i}/9 [00:0{i}<00:00]\x1b[A" for i in range(1, 10)]
    unsized = [f"read: {i}it [00:0{i}, 1.00it/s]" for i in range(3)]
    prose = ["Answer: 42 [source]", "Answer: 43 [source]"]  # not bars: both stay
    text = "\n".join(["systems:  50%|# | 1/2 [00:04<00:04]", *inner, "rerank: 100%|##| 9/9 [00:09<00:00]", outer,
                      *unsized, *prose, "documents 5183 units", ""])
    assert _last_bar_states(text).split("\n") == [
        "systems:  50%|# | 1/2 [00:04<00:04]", "rerank: 100%|##| 9/9 [00:09<00:00]", outer, unsized[-1], *prose,
        "documents 5183 units", ""]


def test_committed_executed_notebooks_are_full_profile_and_under_the_limit():
    from grainlab.reproduce import EXECUTED_LIMIT_BYTES

    root = Path(__file__).resolve().parents[1]
    for path in (root / "results" / "executed").glob("*.ipynb"):
        if not path.name.endswith(".full.ipynb"):
            continue
        assert path.stat().st_size <= EXECUTED_LIMIT_BYTES, f"{path.name} is over the committed size limit"


def test_a_manifest_calls_a_tree_dirty_only_for_uncommitted_code(tmp_path):
    import subprocess

    from grainlab.experiments.manifest import git_commit

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "results.csv").write_text("a\n")
    git("add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "c")
    assert not git_commit(tmp_path).endswith("-dirty")
    (tmp_path / "results.csv").write_text("b\n")  # an output changed: still clean
    assert not git_commit(tmp_path).endswith("-dirty")
    (tmp_path / "src" / "a.py").write_text("x = 2\n")  # code changed: dirty
    assert git_commit(tmp_path).endswith("-dirty")


MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home|tmp|Users|opt|private)/")


def test_committed_executed_notebooks_show_no_machine_and_no_load_noise():
    """No absolute path of the machine that ran them, no missing-widgets warning, no per-load
    "Loading weights" bar (``reproduce.scrub_outputs``, applied to every executed copy)."""
    root = Path(__file__).resolve().parents[1]
    found = list((root / "results" / "executed").glob("*.full.ipynb"))
    assert found
    for path in found:
        text = path.read_text("utf-8")
        assert not MACHINE_PATH.findall(text), (path.name, MACHINE_PATH.search(text))
        assert "TqdmWarning" not in text and "Loading weights" not in text, path.name


def test_scrubbing_takes_the_machine_out_of_text_and_keeps_the_rest(tmp_path):
    from grainlab.reproduce import scrub_outputs

    root = tmp_path / "project"
    stream = {"output_type": "stream", "name": "stderr", "text": (
        f"{root}/.venv/lib/tqdm/auto.py:21: TqdmWarning: IProgress not found. Please update jupyter\n"
        "  from .autonotebook import tqdm as notebook_tqdm\n"
        "Loading weights: 100%|██████████| 103/103 [00:00<00:00, 9118.82it/s]\n"
        "/tmp/ipykernel_6944/3825163187.py:14: FutureWarning: x\n"
        "encode all-MiniLM-L6-v2: 100%|██████████| 18/18\n")}
    noise = {"output_type": "stream", "name": "stderr", "text": "Loading weights: 100%|█| 1/1\n"}
    shown = {"output_type": "execute_result", "data": {"text/plain": [f"[PosixPath('{root}/figures/a.png'),\n",
                                                                        f" PosixPath('{root}')]"]}}
    notebook = {"cells": [{"cell_type": "code", "outputs": [stream, noise, shown]}],
                "metadata": {"papermill": {"input_path": f"{root}/notebooks/x.ipynb"}}}
    scrub_outputs(notebook, root)
    outputs = notebook["cells"][0]["outputs"]
    assert outputs[0]["text"] == "<cell>:14: FutureWarning: x\nencode all-MiniLM-L6-v2: 100%|██████████| 18/18\n"
    assert len(outputs) == 2  # the stream left empty is gone
    assert outputs[1]["data"]["text/plain"] == ["[PosixPath('figures/a.png'),\n", " PosixPath('.')]"]
    assert notebook["metadata"]["papermill"]["input_path"] == "notebooks/x.ipynb"
