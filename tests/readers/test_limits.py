"""Raising a reader's token budget reuses exactly the generations that stopped on their own."""

import pytest

from grainlab.cache import ArtifactCache
from grainlab.readers import Generation, Reader, limits
from grainlab.readers.archive import GenerationArchive


class BudgetReader(Reader):
    """Greedy-like: the answer to a prompt is fixed; it is cut at ``max_new_tokens`` words."""

    model_id, backend, batch_size, context_window = "budget", "stub", 2, 0
    answers = {"short": "a b", "long": "w1 w2 w3 w4 w5 w6"}

    def __init__(self, cache, max_new_tokens):
        self._cache, self.max_new_tokens, self.decoded = cache, max_new_tokens, []

    @property
    def identity(self):
        return {"budget": 1, "max_new_tokens": self.max_new_tokens}

    @property
    def record(self):
        return {"id": "budget"}

    def format(self, prompt):
        return str(prompt)

    def count_tokens(self, prompt):
        return 1

    def _generate_batch(self, prompts, grammar):
        self.decoded += prompts
        out = []
        for p in prompts:
            words = self.answers[p].split()[: self.max_new_tokens]
            out.append(Generation(" ".join(words), 1, len(words), 0.1))
        return out


def test_only_generations_that_stopped_below_the_old_limit_are_reused(tmp_path):
    cache = ArtifactCache(tmp_path / "cache")
    old = BudgetReader(cache, 4)
    assert [g.text for g in old.generate(["short", "long"], progress=False)] == ["a b", "w1 w2 w3 w4"]
    new = BudgetReader(cache, 16)
    made = limits.generate(new, ["short", "long"], progress=False, limits=(4, 8))
    assert new.decoded == ["long"]  # "long" used its whole budget of 4: it may have been cut
    assert [g.text for g in made] == ["a b", "w1 w2 w3 w4 w5 w6"]
    assert made[0].cached and not made[1].cached


def test_a_larger_limit_is_never_a_source_and_the_archive_is_searched(tmp_path):
    archive_path = tmp_path / "generations.jsonl"
    old = BudgetReader(ArtifactCache(tmp_path / "machine-a"), 4)
    old.archive = GenerationArchive(archive_path)
    old.generate(["short"], progress=False)
    fresh = BudgetReader(ArtifactCache(tmp_path / "machine-b"), 8)  # another machine: only the archive
    fresh.archive = GenerationArchive(archive_path)
    assert limits.seed_from_lower_limits(fresh, ["short", "long"], limits=(4,)) == 1
    assert fresh.generate(["short"], progress=False)[0].cached and fresh.decoded == []
    assert len(GenerationArchive(archive_path)) == 2  # the seeded generation is archived under its new key
    smaller = BudgetReader(ArtifactCache(tmp_path / "machine-c"), 2)
    smaller.archive = GenerationArchive(archive_path)
    assert limits.seed_from_lower_limits(smaller, ["short"], limits=(4, 8)) == 0


def test_the_key_matches_the_readers_own():
    reader = BudgetReader(ArtifactCache.__new__(ArtifactCache), 16)
    assert limits.generation_key(reader, "p", None, 16) == reader._key("p")
    assert limits.generation_key(reader, "p", "g", 16) == reader._key("p", "g")
    with pytest.raises(AssertionError):
        broken = BudgetReader(ArtifactCache.__new__(ArtifactCache), 16)
        broken._key = lambda prompt, grammar=None: "other"
        limits.seed_from_lower_limits(broken, ["p"], limits=(4,))
