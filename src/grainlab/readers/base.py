"""The reader protocol: prompts in, cached greedy generations out, whichever runtime decodes.

A reader names its model by Hugging Face id and runs it on one backend (``transformers`` or
``llama.cpp``); both share what this module does: the formatted prompt's fit to the context
window (a clear error, not a truncated prompt), and the on-disk cache — every generation stored
under a key of the reader's identity (model, file or revision, backend, decoding settings), the
prompt and any decoding constraint, one batch at a time, so an interrupted run resumes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from tqdm.auto import tqdm

from grainlab.cache import ArtifactCache, content_key
from grainlab.errors import ConfigError
from grainlab.readers.archive import GenerationArchive, archive_from_environment

Prompt = str | Sequence[Mapping[str, str]]  # one user turn, or a conversation ending with one


@dataclass(frozen=True)
class Generation:
    """One reader output; ``seconds`` is the prompt's share of its batch's time;
    ``token_logprobs`` the log-probability of each generated token (when the reader records them);
    ``constrained`` whether a grammar constrained the decoding."""

    text: str
    prompt_tokens: int
    new_tokens: int
    seconds: float
    cached: bool = False
    token_logprobs: tuple[float, ...] | None = None
    constrained: bool = False


class Reader(ABC):
    """Greedy generation with a shared cache; subclasses format, count and decode."""

    model_id: str
    backend: str
    max_new_tokens: int
    batch_size: int
    context_window: int  # 0: unbounded
    is_seq2seq: bool = False
    supports_grammar: bool = False
    sort_by_length: bool = True  # batch similar lengths together (padding); False keeps prompt order
    archive: GenerationArchive | None = None  # generations kept with a study's results (``readers.archive``)
    legacy_code: str | None = None
    """The source fingerprint generations were keyed by before readers carried explicit versions
    (at 31f5994): a generation stored under the key this reader's identity had then is reused and
    re-keyed, since exactly that code made it (see :meth:`_legacy_key`)."""
    _cache: ArtifactCache

    @property
    @abstractmethod
    def record(self) -> dict[str, object]:
        """Which model copy ran where (source, revision or file hash, backend, device): for manifests."""

    @property
    @abstractmethod
    def identity(self) -> dict[str, object]:
        """Everything that changes an output: a cache-key component."""

    @abstractmethod
    def format(self, prompt: Prompt) -> str:
        """The text the model reads (chat template and response prefix applied)."""

    @abstractmethod
    def count_tokens(self, prompt: Prompt) -> int:
        """Tokens of the formatted prompt."""

    @abstractmethod
    def _generate_batch(self, prompts: list[Prompt], grammar: str | None) -> list[Generation]:
        """Decode a batch (uncached)."""

    def check_fits(self, prompt: Prompt) -> int:
        """Tokens of ``prompt``; a clear error when it and the answer exceed the model's window."""
        n = self.count_tokens(prompt)
        if self.context_window and n + self.max_new_tokens > self.context_window:
            raise ConfigError(f"{self.model_id} ({self.backend}) reads at most {self.context_window} tokens; this "
                              f"prompt has {n} (+{self.max_new_tokens} to generate): use fewer documents, a shorter "
                              f"budget or a longer context window")
        return n

    def _key(self, prompt: Prompt, grammar: str | None = None) -> str:
        return content_key(kind="generation", reader=self.identity, prompt=prompt,
                           **({"grammar": grammar} if grammar else {}))

    def _legacy_key(self, prompt: Prompt, grammar: str | None = None) -> str | None:
        """The key this request had when readers were keyed by their source fingerprint: the same
        identity with ``code`` (:attr:`legacy_code`) in place of ``version``; ``None`` when the
        reader's version has been bumped since (its old generations are then stale)."""
        identity = dict(self.identity)
        if self.legacy_code is None or identity.pop("version", None) != "1":
            return None
        return content_key(kind="generation", reader={**identity, "code": self.legacy_code}, prompt=prompt,
                           **({"grammar": grammar} if grammar else {}))

    def _lookup(self, prompt: Prompt, grammar: str | None, archive: GenerationArchive | None) -> dict | None:
        """A stored generation for this request: from the cache or the archive under its key, else
        under its legacy key (then stored under its key in both)."""
        key = self._key(prompt, grammar)
        hit = self._cache.load_json("generations", key)
        if hit is None and archive is not None:
            hit = archive.get(key)
            if hit is not None:  # made in an earlier session, maybe on another machine
                self._cache.save_json("generations", key, hit)
        elif hit is not None and archive is not None:
            archive.append(key, hit)  # made earlier on this machine: the archive must hold it too
        legacy = self._legacy_key(prompt, grammar) if hit is None else None
        if legacy is not None:
            hit = self._cache.load_json("generations", legacy)
            if hit is None and archive is not None:
                hit = archive.get(legacy)
            if hit is not None:
                self._cache.save_json("generations", key, hit)
                if archive is not None:
                    archive.append(key, hit)
        return hit

    def archived(self, prompt: Prompt, archive: GenerationArchive, grammar: str | None = None) -> dict | None:
        """The generation ``archive`` holds for this request, under its key or its legacy key;
        nothing is read from the cache or written anywhere (what ``grainlab verify`` checks)."""
        hit = archive.get(self._key(prompt, grammar))
        legacy = self._legacy_key(prompt, grammar) if hit is None else None
        return archive.get(legacy) if legacy is not None else hit

    def regenerate(self, prompt: Prompt, grammar: str | None = None) -> Generation:
        """A fresh generation for ``prompt``: decoded now, neither looked up nor stored."""
        self.check_fits(prompt)
        return self._generate_batch([prompt], grammar)[0]

    def generate(self, prompts: Sequence[Prompt], progress: bool = True, grammar: str | None = None) -> list[Generation]:
        """One generation per prompt, from the cache (or the reader's ``archive``) where possible;
        each batch is saved when done (and appended to the archive).

        ``grammar`` (GBNF, llama.cpp's constraint language) constrains what may be generated; only
        readers with ``supports_grammar`` take one."""
        if grammar and not self.supports_grammar:
            raise ConfigError(f"{self.model_id} on {self.backend} cannot constrain decoding with a grammar; "
                              f"use backend='llama.cpp'")
        out: dict[int, Generation] = {}
        todo = []
        archive = self.archive if self.archive is not None else archive_from_environment()
        for i, prompt in enumerate(prompts):
            hit = self._lookup(prompt, grammar, archive)
            if hit is not None:
                logprobs = hit.pop("token_logprobs", None)
                out[i] = Generation(**{**hit, "cached": True,
                                       "token_logprobs": tuple(logprobs) if logprobs is not None else None})
            else:
                todo.append((self.check_fits(prompt) if self.sort_by_length else 0, i))
        if self.sort_by_length:
            todo.sort()  # similar lengths share a batch: less padding
        else:
            for i, _ in enumerate(todo):
                self.check_fits(prompts[todo[i][1]])
        batches = [todo[s:s + self.batch_size] for s in range(0, len(todo), self.batch_size)]
        for batch in tqdm(batches, desc=f"generate {self.model_id.split('/')[-1]}", disable=not progress or not batches):
            for (_, i), generation in zip(batch, self._generate_batch([prompts[i] for _, i in batch], grammar)):
                record = {k: v for k, v in asdict(generation).items() if k != "cached"}
                if record["token_logprobs"] is None:
                    del record["token_logprobs"]
                key = self._key(prompts[i], grammar)
                self._cache.save_json("generations", key, record)
                if archive is not None:
                    archive.append(key, record)
                out[i] = generation
        return [out[i] for i in range(len(prompts))]
