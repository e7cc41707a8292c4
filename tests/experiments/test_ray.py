"""Ray on a local two-worker cluster: sharded encoding (resumable, a killed worker survived) and a
sweep of systems (a reranked hybrid pipeline among them) through the one engine, each equal to
the serial run up to rounding (grainlab.experiments.agreement says what that can change)."""

import os
import signal
from dataclasses import replace

import numpy as np
import pytest

from grainlab.data import load_dataset
from grainlab.data.sample import sample_dataset
from grainlab.experiments import System, run_experiment
from grainlab.experiments.agreement import ranking_differences, reordered_queries, table_differences
from grainlab.models import Encoder
from grainlab.models.encoders import embedding_key
from grainlab.models.sharded import encode_on_ray, ray_encoding_requested, shard_plan

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.mirror]

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def cluster(session_cache_dir):
    """A local cluster whose workers use the test session's cache, as the driver does (they inherit
    the environment at start-up, before the per-test settings apply): never the user's cache."""
    from grainlab.distributed import connect

    if ray.is_initialized():
        ray.shutdown()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRAINLAB_CACHE", str(session_cache_dir))
        yield connect("local", num_cpus=2)
    ray.shutdown()


@pytest.fixture(scope="module")
def sample(mirror):
    return sample_dataset(load_dataset("scifact", mirror=mirror), n_queries=15, n_docs=150)


def test_shards_are_whole_serial_batches():
    texts = ["a" * n for n in (5, 50, 7, 30, 1, 12, 40)]
    plan = shard_plan(texts, "", batch_size=2, shard_batches=2)
    assert [len(s) for s in plan] == [4, 3]
    assert [texts[i] for s in plan for i in s] == sorted(texts, key=len, reverse=True)


def test_ray_encoding_is_asked_for_by_the_environment(monkeypatch):
    monkeypatch.delenv("GRAINLAB_RAY", raising=False)
    assert not ray_encoding_requested(["x"] * 5000, "passage", 32)
    monkeypatch.setenv("GRAINLAB_RAY", "local")
    assert ray_encoding_requested(["x"] * 5000, "passage", 32)
    assert not ray_encoding_requested(["x"] * 5000, "query", 32)  # queries are few: encoded in-process
    assert not ray_encoding_requested(["x"] * 100, "passage", 32)


def test_killed_worker_loses_no_finished_shard(cluster, sample, cache):
    texts = [d.text for d in sample.corpus.values()]
    encoder = Encoder(MINILM, batch_size=16)
    serial = encoder.encode_passages(texts, progress=False)
    n_shards = len(shard_plan(texts, "", 16, 2))
    computed: list[int] = []

    def kill_one_worker_once(shard: int) -> None:
        computed.append(shard)
        if len(computed) == 2:
            actor = ray.get_actor("kill-test-0", namespace="grainlab")
            os.kill(ray.get(actor.pid.remote()), signal.SIGKILL)

    vectors = encode_on_ray(encoder, texts, "passage", cache, workers=2, shard_batches=2,
                            on_shard=kill_one_worker_once, name="kill-test")
    assert sorted(computed) == list(range(n_shards))  # every shard computed once: none lost, none redone
    np.testing.assert_allclose(vectors, serial, atol=1e-5)
    assert np.array_equal(cache.load_array("embeddings", embedding_key(encoder, texts, "passage")), vectors)


class Interrupted(Exception):
    pass


def test_interrupted_encoding_resumes_with_the_missing_shards(cluster, sample, cache):
    texts = [d.title + " " + d.text for d in sample.corpus.values()]
    encoder = Encoder(MINILM, batch_size=16)
    n_shards = len(shard_plan(texts, "", 16, 2))
    first: list[int] = []

    def stop_after_three(shard: int) -> None:
        first.append(shard)
        if len(first) == 3:
            raise Interrupted

    with pytest.raises(Interrupted):
        encode_on_ray(encoder, texts, "passage", cache, workers=2, shard_batches=2, on_shard=stop_after_three)
    second: list[int] = []
    vectors = encode_on_ray(encoder, texts, "passage", cache, workers=2, shard_batches=2, on_shard=second.append)
    assert sorted(first + second) == list(range(n_shards))  # the rerun computes only what was missing
    np.testing.assert_allclose(vectors, encoder.encode_passages(texts, progress=False), atol=1e-5)


def test_sweep_on_ray_equals_the_serial_run(cluster, sample, tmp_path):
    from grainlab.cache import ArtifactCache
    from grainlab.experiments import Stages

    hybrid = Stages(fusion="rrf", reranker="cross-encoder/ms-marco-MiniLM-L-12-v2", candidate_k=20, rerank_k=8,
                    context_k=5)
    systems = [System("bm25", "none", "max"), System("bm25", "fixed_tokens(size=64,overlap=0)", "max"),
               System(f"dense(model={MINILM})", "none", "max"),
               System(f"dense(model={MINILM},index=hnsw(M=16))", "fixed_tokens(size=64,overlap=0)", "max"),
               System(("bm25", f"dense(model={MINILM})"), "none", "max", stages=hybrid),
               # the same pairs' head again: served from the serial run's reranker memo, scored afresh on Ray
               System(("bm25", f"dense(model={MINILM})"), "none", "max", stages=replace(hybrid, rerank_k=5))]
    kwargs = dict(measures=["nDCG@10", "R@100"], n_resamples=500, progress=False, save_runs=True)
    serial = run_experiment(sample, systems, name="sweep", results_dir=tmp_path / "serial",
                            cache=ArtifactCache(tmp_path / "cache-serial"), ray=False, **kwargs)
    on_ray = run_experiment(sample, systems, name="sweep", results_dir=tmp_path / "ray",
                            cache=ArtifactCache(tmp_path / "cache-ray"), ray="local", **kwargs)
    # The promise (grainlab.experiments.agreement): scores equal up to rounding, every ranking the
    # same up to near-ties, and every table row equal unless a near-tie reordering explains it.
    reordered: dict[str, set[str]] = {}
    for system, runs in zip(serial.systems["system"], serial.systems["runs"]):
        for stage in runs:
            ours, theirs = serial.run(system, stage), on_ray.run(system, stage)
            if "index=" in system:
                # An approximate index may route a query differently deep in its list (seen on an
                # AVX2-only machine below the top 6): each query's top 100 must share 95 units.
                for qid, ranking in ours.items():
                    overlap = {d for d, _ in ranking} & {d for d, _ in theirs[qid]}
                    assert len(overlap) >= 0.95 * len(ranking), f"{system} · {stage} · {qid}"
                changed = reordered_queries(ours, theirs)
            else:
                assert ranking_differences(ours, theirs) == [], f"{system} · {stage}"
                changed = reordered_queries(ours, theirs)
            reordered.setdefault(system, set()).update(changed)
    keys = ["dataset", "system", "stage", "qid", "measure"]
    assert table_differences(serial.per_query, on_ray.per_query, keys, reordered) == []
    assert table_differences(serial.aggregate, on_ray.aggregate, ["system", "stage", "measure"], reordered) == []
    holm_free = [c for c in serial.significance.columns if c not in ("dataset", "system", "baseline", "measure")
                 and (not any(reordered.values()) or not c.endswith("_holm"))]  # Holm reads every system's p
    assert table_differences(serial.significance, on_ray.significance, ["system", "baseline", "measure"], reordered,
                             value_columns=holm_free) == []


def test_encoding_joins_the_cluster_grainlab_ray_names(monkeypatch, cache):
    """``$GRAINLAB_RAY`` decides where shards go: the address is passed to ``connect``."""
    import grainlab.distributed as distributed

    seen = []

    class Stop(Exception):
        pass

    def fake_connect(target="auto", num_cpus=None):
        seen.append(target)
        raise Stop

    monkeypatch.setattr(distributed, "connect", fake_connect)
    monkeypatch.setenv("GRAINLAB_RAY", "ray://head:10001")
    with pytest.raises(Stop):
        encode_on_ray(Encoder(MINILM, batch_size=4), ["a text", "another text"], "passage", cache, shard_batches=1)
    assert seen == ["ray://head:10001"]
