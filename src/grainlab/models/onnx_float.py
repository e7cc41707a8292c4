"""Dynamic-int8 ONNX exports run in float32, so their vectors do not depend on the CPU.

onnxruntime's integer matrix product is not the same computation on every CPU: on AVX2 without
VNNI (AMD EPYC Milan, older Xeons) ``MatMulInteger`` adds u8 × s8 products in pairs that
saturate at 16 bits (``vpmaddubsw``), on AVX-512 VNNI it is exact — so the offline int8 copies
of bge-small-en-v1.5 and the MiniLM cross-encoder ranked differently on AMD and Intel machines.

:func:`float32_graph` replaces every dynamically quantized product (``DynamicQuantizeLinear`` →
``MatMulInteger`` → ``Cast`` → ``Mul`` by the two scales) with a float ``MatMul`` over the
dequantized weights ``(w - zero_point) × scale``. The int8 weights are kept exactly; only the
activations stay in float32, so results differ between CPUs by float rounding (~1e-7) instead
of by saturation, and come closer to the published fp32 checkpoint. :func:`float32_folder`
writes the rewritten model once into the cache, beside the original's tokenizer and config.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

from grainlab import settings
from grainlab.cache import sha256_file
from grainlab.errors import ModelNotAvailable
from grainlab.files import atomic_write_dir

REWRITE_VERSION = 1
"""Bumped whenever the rewrite changes what it computes (it is part of the model's revision)."""

INTEGER_OPS = frozenset({"MatMulInteger", "DynamicQuantizeLinear", "ConvInteger", "QLinearMatMul"})


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as exc:
        raise ModelNotAvailable("running an int8 ONNX model CPU-independently needs the onnx package: "
                                "pip install 'onnx>=1.16'") from exc
    return onnx


def integer_ops(model: Any) -> set[str]:
    """The integer-kernel operators a graph uses (what makes its results CPU-dependent)."""
    return {node.op_type for node in model.graph.node} & INTEGER_OPS


def float32_graph(model: Any) -> Any:
    """``model`` with every dynamically quantized MatMul computed in float32 (a new ModelProto).

    Raises ``ValueError`` naming the node when a ``MatMulInteger`` is not in the pattern
    onnxruntime's ``quantize_dynamic`` writes (quantized activations × constant int8 weights)."""
    onnx = _onnx()
    from onnx import numpy_helper

    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    inits = {init.name: init for init in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)

    replaced: dict[int, Any] = {}  # id(node) of each MatMulInteger → its float MatMul
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "MatMulInteger":
            continue
        quantize = producer.get(node.input[0])
        after = consumers.get(node.output[0], [])
        cast = after[0] if len(after) == 1 and after[0].op_type == "Cast" else None
        rescale = consumers.get(cast.output[0], []) if cast is not None else []
        if (quantize is None or quantize.op_type != "DynamicQuantizeLinear" or node.input[1] not in inits
                or cast is None or len(rescale) != 1 or rescale[0].op_type != "Mul"):
            raise ValueError(f"ONNX node {node.name or node.output[0]!r} is not a dynamically quantized "
                             "MatMul (DynamicQuantizeLinear → MatMulInteger → Cast → Mul); cannot run it in float32")
        scale_name = _weight_scale_name(node.input[1], inits)
        weights = numpy_helper.to_array(inits[node.input[1]]).astype("float32")
        zero = numpy_helper.to_array(inits[node.input[3]]).astype("float32") if len(node.input) > 3 and node.input[3] \
            else 0.0
        scale = numpy_helper.to_array(inits[scale_name]).astype("float32")
        name = f"{node.input[1]}_float32"
        if name not in inits:
            dequantized = numpy_helper.from_array(((weights - zero) * scale).astype("float32"), name)
            graph.initializer.append(dequantized)
            inits[name] = dequantized
        replaced[id(node)] = onnx.helper.make_node("MatMul", [quantize.input[0], name], [rescale[0].output[0]],
                                                   name=f"{node.name}_float32")
        dropped.update((id(cast), id(rescale[0])))

    nodes = [replaced.get(id(node), node) for node in graph.node if id(node) not in dropped]
    nodes = _without_dead_nodes(nodes, {out.name for out in graph.output})
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in nodes for name in node.input}
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return model


def _weight_scale_name(weight: str, inits: dict[str, Any]) -> str:
    """``quantize_dynamic`` names a weight ``W_quantized`` and its scale ``W_scale``."""
    base = weight[: -len("_quantized")] if weight.endswith("_quantized") else weight
    name = f"{base}_scale"
    if name not in inits:
        raise ValueError(f"ONNX weight {weight!r} has no scale initializer {name!r}; cannot dequantize it")
    return name


def _without_dead_nodes(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """Drop nodes none of whose outputs is read (repeatedly: the quantize chains left behind)."""
    while True:
        read = outputs | {name for node in nodes for name in node.input}
        alive = [node for node in nodes if any(out in read for out in node.output)]
        if len(alive) == len(nodes):
            return alive
        nodes = alive


def float32_folder(folder: Path) -> Path:
    """A cached copy of ``folder`` whose ``model.onnx`` runs in float32 (``folder`` itself when its
    graph has no integer kernels). Built once per source file and rewrite version, as a whole
    folder renamed into place (concurrent builders: the first one's copy stays). The tokenizer and
    config files are copied, not linked, so the copy outlives the environment that built it; a
    cached copy missing any of them (an older build's links into a removed environment) is rebuilt."""
    onnx = _onnx()
    source = folder / "model.onnx"
    target = settings.cache_dir() / "models" / "onnx-float32" / f"{sha256_file(source)[:16]}-v{REWRITE_VERSION}"
    if target.is_dir():
        if _holds_every_file(target, folder):
            return target
        _set_aside(target)
    model = onnx.load(str(source))
    if not integer_ops(model):
        return folder

    def write(tmp: Path) -> None:
        for item in folder.iterdir():
            if item.name != "model.onnx" and item.is_file():
                shutil.copyfile(item, tmp / item.name)
        (tmp / "model.onnx").write_bytes(float32_graph(model).SerializeToString())

    atomic_write_dir(target, write)
    return target


def _holds_every_file(copy: Path, folder: Path) -> bool:
    """Whether ``copy`` has a readable file (a link that resolves) for every file of ``folder``."""
    return all((copy / item.name).is_file() for item in folder.iterdir() if item.is_file())


def _set_aside(target: Path) -> None:
    """Move a broken cached copy out of the way (another process may have done so already), then
    delete it: a cache entry, rebuilt from the package it was made from."""
    aside = target.with_name(f".{target.name}.broken-{uuid.uuid4().hex[:8]}")
    try:
        target.rename(aside)
    except OSError:
        return
    shutil.rmtree(aside, ignore_errors=True)


def float32_revision(revision: str) -> str:
    """The revision recorded (and keyed) for a model run through :func:`float32_folder`."""
    return f"{revision}+float32-v{REWRITE_VERSION}"
