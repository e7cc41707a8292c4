"""The causal-LM reader on the real offline SmolLM2 copy: conversion, chat template, greedy
generation, the on-disk generation cache, and clear errors."""

import pytest

from grainlab.cache import ArtifactCache
from grainlab.errors import ConfigError, ModelNotAvailable
from grainlab.readers import CausalLMReader, closedbook_prompt, qa_prompt

MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    try:
        return CausalLMReader(MODEL, max_new_tokens=12, batch_size=2,
                              cache=ArtifactCache(tmp_path_factory.mktemp("generations")))
    except ModelNotAvailable as exc:
        pytest.skip(str(exc))


def test_loads_a_converted_folder_with_chat_template(reader):
    assert reader.chat_template and reader.context_window == 8192
    text = reader.format("Question: q\nAnswer:")
    assert "<|im_start|>user\nQuestion: q\nAnswer:<|im_end|>" in text and text.endswith("<|im_start|>assistant\n")
    if reader.resolved.backend == "gguf":
        assert (reader.resolved.path / "SmolLM2-135M-Instruct.Q4_1.gguf").exists()


def test_greedy_generation_is_cached_and_deterministic(reader, monkeypatch):
    prompts = [closedbook_prompt("what is the capital of france"),
               qa_prompt("what is the capital of france", [("France", "Paris is the capital of France.")])]
    first = reader.generate(prompts, progress=False)
    assert all(not g.cached and g.prompt_tokens > 10 and 0 < g.new_tokens <= 12 for g in first)
    assert all("\n" not in g.text.strip() for g in first)  # stopped at the first newline

    def fail(*_):
        raise AssertionError("should have come from the cache")

    monkeypatch.setattr(reader, "_generate_batch", fail)
    again = reader.generate(prompts, progress=False)
    assert [g.text for g in again] == [g.text for g in first] and all(g.cached for g in again)


def test_batched_equals_one_at_a_time(reader):
    prompts = [closedbook_prompt("who wrote hamlet"), closedbook_prompt("how many legs does a spider have")]
    batched = reader._generate_batch(prompts)
    single = [reader._generate_batch([p])[0] for p in prompts]
    assert [g.text for g in batched] == [g.text for g in single]


def test_prompt_longer_than_the_window_is_a_clear_error(reader):
    long_docs = [("t", "word " * 3000)] * 3
    with pytest.raises(ConfigError, match="reads at most 8192 tokens"):
        reader.generate([qa_prompt("q", long_docs)], progress=False)


def test_unknown_model_names_what_to_do(monkeypatch):
    from grainlab.models import hub, resolve

    monkeypatch.setattr(hub, "hub_reachable", lambda *a, **k: False)
    resolve.resolve_model.cache_clear()
    with pytest.raises(ModelNotAvailable, match="Go online once"):
        CausalLMReader("nobody/no-such-llm")


def test_a_conversation_and_a_response_prefix_are_formatted(reader):
    turns = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"},
             {"role": "user", "content": "three"}]
    text = reader.format(turns)
    assert text.index("one") < text.index("two") < text.index("three") and text.endswith("assistant\n")
    prefixed = CausalLMReader.__new__(CausalLMReader)
    prefixed.__dict__.update({**reader.__dict__, "response_prefix": '["'})
    assert prefixed.format(turns) == text + '["' and "response_prefix" in prefixed.identity
    assert "response_prefix" not in reader.identity and "stop_chars" not in reader.identity
