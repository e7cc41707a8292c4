"""A real :class:`~grainlab.readers.Reader` whose answers a test scripts: prompt → text.

It goes through ``Reader.generate`` (cache lookups, the archive, ``readers.limits``' seeding)
with an in-memory cache, so a study function that calls any reader entry point runs as in a
notebook."""

from collections.abc import Callable

from grainlab.readers import Generation, Reader


class MemoryCache:
    """The two methods a reader uses of ``ArtifactCache``, in a dict."""

    def __init__(self):
        self.entries = {}

    def load_json(self, kind, key):
        value = self.entries.get((kind, key))
        return dict(value) if value is not None else None

    def save_json(self, kind, key, value):
        self.entries[(kind, key)] = dict(value)


class ScriptedReader(Reader):
    backend, batch_size, context_window = "scripted", 4, 0
    sort_by_length = False  # prompts reach the script in the order a study made them

    def __init__(self, answer: Callable[[str], str], model_id: str = "test/scripted", max_new_tokens: int = 32,
                 prompt_tokens: Callable[[str], int] = lambda prompt: 10, new_tokens: int = 2):
        self.answer, self.model_id, self.max_new_tokens = answer, model_id, max_new_tokens
        self.prompt_tokens, self.new_tokens = prompt_tokens, new_tokens
        self.response_prefix, self.prompts = "", []
        self._cache = MemoryCache()

    @property
    def identity(self):
        return {"scripted": self.model_id, "max_new_tokens": self.max_new_tokens}

    @property
    def record(self):
        return {"source": "scripted"}

    def format(self, prompt):
        return str(prompt)

    def count_tokens(self, prompt):
        return self.prompt_tokens(str(prompt))

    def _generate_batch(self, prompts, grammar):
        self.prompts += prompts
        return [Generation(self.answer(p), self.prompt_tokens(p), self.new_tokens, 0.1) for p in prompts]
