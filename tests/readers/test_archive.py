"""The generation archive: a long reader run resumes in a later session on a fresh machine."""

import json

from grainlab.cache import ArtifactCache
from grainlab.readers import Generation, Reader
from grainlab.readers.archive import GenerationArchive, archive_from_environment


class CountingReader(Reader):
    model_id, backend, max_new_tokens, batch_size, context_window = "counting", "stub", 8, 2, 0

    def __init__(self, cache):
        self._cache = cache
        self.decoded = []

    @property
    def identity(self):
        return {"counting": 1}

    @property
    def record(self):
        return {"id": "counting"}

    def format(self, prompt):
        return str(prompt)

    def count_tokens(self, prompt):
        return len(str(prompt).split())

    def _generate_batch(self, prompts, grammar):
        self.decoded += prompts
        return [Generation(f"answer to {p}", 3, 2, 0.5, token_logprobs=(-0.1, -0.2)) for p in prompts]


def test_a_fresh_machine_resumes_from_the_archive(tmp_path):
    path = tmp_path / "results" / "generations.jsonl"
    first = CountingReader(ArtifactCache(tmp_path / "cache-a"))
    first.archive = GenerationArchive(path)
    made = first.generate(["q1", "q2", "q3"], progress=False)
    assert len(path.read_text().splitlines()) == 3
    second = CountingReader(ArtifactCache(tmp_path / "cache-b"))  # another machine: an empty cache
    second.archive = GenerationArchive(path)
    again = second.generate(["q1", "q2", "q3", "q4"], progress=False)
    assert second.decoded == ["q4"]  # only what the first session had not finished
    assert [g.text for g in again[:3]] == [g.text for g in made] and all(g.cached for g in again[:3])
    assert again[0].token_logprobs == (-0.1, -0.2)
    assert len(path.read_text().splitlines()) == 4


def test_generations_cached_before_the_archive_existed_are_archived_too(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    CountingReader(cache).generate(["q1"], progress=False)  # no archive yet
    reader = CountingReader(cache)
    reader.archive = GenerationArchive(tmp_path / "generations.jsonl")
    (hit,) = reader.generate(["q1"], progress=False)
    assert hit.cached and reader.decoded == [] and len(GenerationArchive(tmp_path / "generations.jsonl")) == 1


def test_a_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "generations.jsonl"
    path.write_text(json.dumps({"key": "k1", "text": "a", "prompt_tokens": 1, "new_tokens": 1, "seconds": 0.1})
                    + "\n" + '{"key": "k2", "text": "trunc')
    archive = GenerationArchive(path)
    assert archive.get("k1")["text"] == "a" and archive.get("k2") is None and len(archive) == 1


def test_notebooks_point_readers_at_their_results_folder(tmp_path, monkeypatch):
    from grainlab.reproduce import notebook_setup

    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path / "results"))
    setup = notebook_setup("lost_in_the_middle", "full")
    archive = archive_from_environment()
    assert archive is not None and archive.path == setup.results / "generations.jsonl"
    reader = CountingReader(ArtifactCache(tmp_path / "cache"))
    reader.generate(["q"], progress=False)
    assert (setup.results / "generations.jsonl").exists()


def test_a_generation_archived_under_its_source_fingerprint_key_is_reused_and_rekeyed(tmp_path):
    """Readers were keyed by their source's fingerprint until 31f5994; an archived generation made
    by that code (its key: the same identity with ``code`` instead of ``version``) is reused and
    stored under its new key, not generated again; a bumped version or another fingerprint is not."""
    from grainlab.cache import content_key
    from tests.scripted_reader import ScriptedReader

    class VersionedReader(ScriptedReader):
        legacy_code = "c1045bb9de46bda9"
        version = "1"

        @property
        def identity(self):
            return {**super().identity, "version": self.version}

    archive = GenerationArchive(tmp_path / "generations.jsonl")
    old_identity = {"scripted": "test/scripted", "max_new_tokens": 32, "code": "c1045bb9de46bda9"}
    archive.append(content_key(kind="generation", reader=old_identity, prompt="q1"),
                   {"text": "archived", "prompt_tokens": 10, "new_tokens": 2, "seconds": 0.1, "constrained": False})
    reader = VersionedReader(lambda p: "generated")
    reader.archive = archive
    assert [g.text for g in reader.generate(["q1", "q2"], progress=False)] == ["archived", "generated"]
    assert reader.prompts == ["q2"]
    assert GenerationArchive(archive.path).get(reader._key("q1")) is not None  # re-keyed in the archive
    bumped = VersionedReader(lambda p: "regenerated")
    bumped.version, bumped.archive = "2", GenerationArchive(archive.path)
    assert bumped._legacy_key("q1") is None
    other = VersionedReader(lambda p: "regenerated")
    other.legacy_code, other.archive = "0" * 16, GenerationArchive(tmp_path / "empty.jsonl")
    assert other.generate(["q1"], progress=False)[0].text == "regenerated"
