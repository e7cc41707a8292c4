"""A cached second run of the same experiment against the first (fresh cache and results)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from common import mirror, save, timer

from grainlab.cache import ArtifactCache
from grainlab.data import load_dataset, sample_dataset
from grainlab.experiments import System, run_experiment

SYSTEMS = [System("bm25", "fixed_tokens(size=128,overlap=0)", "max"),
           System("dense(model=sentence-transformers/all-MiniLM-L6-v2)", "fixed_tokens(size=128,overlap=0)", "max")]


def main() -> None:
    data = sample_dataset(load_dataset("scifact", mirror=mirror()), n_queries=100, n_docs=400, seed=0)
    tmp = Path(tempfile.mkdtemp())
    t: dict[str, float] = {}
    try:
        cache = ArtifactCache(tmp / "cache")
        with timer(t, "first_run_s"):
            run_experiment(data, SYSTEMS, name="bench", results_dir=tmp / "r1", cache=cache, progress=False)
        with timer(t, "second_run_new_results_dir_s"):  # embeddings/indexes/chunks from the cache
            run_experiment(data, SYSTEMS, name="bench", results_dir=tmp / "r2", cache=cache, progress=False)
        with timer(t, "third_run_same_results_dir_s"):  # per-system results reused as well
            run_experiment(data, SYSTEMS, name="bench", results_dir=tmp / "r2", cache=cache, progress=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    save("cache", {"docs": len(data.corpus), "queries": len(data.queries), **t,
                   "speedup_artifact_cache": round(t["first_run_s"] / t["second_run_new_results_dir_s"], 1),
                   "speedup_full_resume": round(t["first_run_s"] / t["third_run_same_results_dir_s"], 1)})


if __name__ == "__main__":
    main()
