"""Shared fixtures: the offline mirror, a private cache, tiny BEIR folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from grainlab.cache import ArtifactCache

REPO = Path(__file__).resolve().parents[1]


def mirror_path() -> Path | None:
    """``$GRAINLAB_MIRROR``, else ``../shared/data`` beside the repository."""
    env = os.environ.get("GRAINLAB_MIRROR")
    candidate = Path(env) if env else REPO.parent / "shared" / "data"
    return candidate if (candidate / "beir_scifact" / "corpus.jsonl").exists() else None


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory) -> Path:
    """One model/embedding cache for the whole test session: empty at the start (as on a fresh
    machine), unless ``$GRAINLAB_TEST_CACHE`` names a folder to keep between sessions. Under
    pytest-xdist every worker shares it (the session's common temporary root): cache writes are
    atomic renames, so two workers that build the same artefact keep one whole copy."""
    kept = os.environ.get("GRAINLAB_TEST_CACHE")
    if kept:
        return Path(kept)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent / "grainlab-cache"
        shared.mkdir(exist_ok=True)
        return shared
    return tmp_path_factory.mktemp("grainlab-cache")


@pytest.fixture(autouse=True)
def isolated_outputs(session_cache_dir: Path, tmp_path_factory, monkeypatch) -> None:
    """No test writes into the repository's ``results/``/``figures/`` or the user's cache."""
    out = tmp_path_factory.mktemp("out")
    for name in ("GRAINLAB_RAY", "GRAINLAB_GENERATION_ARCHIVE"):  # unset unless a test sets them
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    for name in ("GRAINLAB_MIRROR", "GRAINLAB_DEVICE", "GRAINLAB_VERIFY_RELEASES"):  # restored after each test
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:  # set, then delete: monkeypatch records that it was absent
            monkeypatch.setenv(name, "")
            monkeypatch.delenv(name)
    monkeypatch.setenv("GRAINLAB_CACHE", str(session_cache_dir))
    monkeypatch.setenv("GRAINLAB_RESULTS", str(out / "results"))
    monkeypatch.setenv("GRAINLAB_FIGURES", str(out / "figures"))


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = mirror_path()
    if path is None:
        pytest.skip("no dataset mirror: set GRAINLAB_MIRROR or place shared/data beside the repo")
    return path


@pytest.fixture
def cache(tmp_path: Path) -> ArtifactCache:
    return ArtifactCache(tmp_path / "cache")


def write_beir(folder: Path, corpus: dict[str, tuple[str, str]], queries: dict[str, str],
               qrels: list[tuple[str, str, int]], split: str = "test") -> Path:
    """A BEIR folder: corpus {id: (title, text)}, queries {id: text}, qrels rows."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w") as handle:
        for doc_id, (title, text) in corpus.items():
            handle.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as handle:
        for qid, text in queries.items():
            handle.write(json.dumps({"_id": qid, "text": text}) + "\n")
    (folder / "qrels").mkdir(exist_ok=True)
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{r}" for q, d, r in qrels]
    (folder / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    return folder


TOY_CORPUS = {
    "d1": ("Solar power", "Photovoltaic cells convert sunlight directly into electricity."),
    "d2": ("Wind power", "Wind turbines convert the kinetic energy of moving air into electricity."),
    "d3": ("Coffee", "Coffee is brewed from roasted coffee beans and contains caffeine."),
    "d4": ("Tea", "Tea is an aromatic beverage prepared by pouring hot water over cured leaves."),
    "d5": ("Batteries", "Lithium-ion batteries store electricity for phones and electric cars."),
}
TOY_QUERIES = {"q1": "how do solar cells make electricity", "q2": "which drink contains caffeine",
               "q3": "storing electricity in batteries"}
TOY_QRELS = [("q1", "d1", 1), ("q2", "d3", 1), ("q3", "d5", 1), ("q3", "d1", 0)]


@pytest.fixture
def toy_mirror(tmp_path: Path, monkeypatch) -> Path:
    """A mirror folder holding a tiny BEIR 'scifact' with the real layout (not the real release,
    so release verification is off while it is used)."""
    monkeypatch.setenv("GRAINLAB_VERIFY_RELEASES", "0")
    root = tmp_path / "mirror"
    write_beir(root / "beir_scifact", TOY_CORPUS, TOY_QUERIES, TOY_QRELS)
    return root
