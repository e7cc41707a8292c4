"""Choosing a GGUF embedder's runtime: by name, or the faster one for the device."""

import pytest

from grainlab.errors import ConfigError
from grainlab.models.embedders import gguf_backend, load_encoder


def test_auto_takes_the_faster_runtime_of_the_device(monkeypatch):
    import grainlab.settings

    monkeypatch.setattr(grainlab.settings, "torch_device", lambda device=None: "cpu")
    assert gguf_backend() == "torch" and gguf_backend(backend="llama.cpp") == "llama.cpp"
    monkeypatch.setattr(grainlab.settings, "torch_device", lambda device=None: "cuda:0")
    assert gguf_backend() == "torch"
    with pytest.raises(ConfigError, match="choose one of"):
        gguf_backend(backend="vllm")


def test_a_runtime_for_a_model_without_a_gguf_is_refused():
    with pytest.raises(ConfigError, match="GGUF embedders"):
        load_encoder("sentence-transformers/all-MiniLM-L6-v2", backend="llama.cpp")


@pytest.mark.slow
def test_a_llama_cpp_nomic_retriever_names_its_runtime_in_its_spec():
    from grainlab.retrieval import get_retriever

    spec = get_retriever("dense(model=nomic-ai/nomic-embed-text-v1.5,max_length=512,backend=llama.cpp)").spec
    assert spec.endswith("backend=llama.cpp)")
    default = get_retriever("dense(model=nomic-ai/nomic-embed-text-v1.5,max_length=512)")
    assert "backend" not in default.spec and default.encoder.identity["backend"] == "torch"
    late = get_retriever("late(model=nomic-ai/nomic-embed-text-v1.5,max_length=512,backend=llama.cpp)")
    assert late.spec.endswith("backend=llama.cpp)") and late.encoder.identity["backend"] == "llama.cpp"
