"""all-MiniLM-L6-v2's encoder as an ONNX graph, built from the verified weights.

The graph is the numpy encoder (orchestrator.knowledge.minilm) written as ONNX operators:
per layer, self-attention over 12 heads, a residual and layer norm, the feed-forward with
BERT's exact (erf) GELU, a residual and layer norm. Inputs are the embedded tokens and the
additive attention mask; embedding lookups and pooling stay in numpy, where they are cheap.
Built in memory at load, so what runs is always these weights, never a file from elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from numpy.typing import NDArray
from onnx import TensorProto, helper, numpy_helper

from orchestrator.knowledge.minilm import DIMENSIONS, EPS, HEADS, LAYERS

OPSET = 17  # LayerNormalization is a standard operator from 17
HIDDEN_INPUT = "hidden"
MASK_INPUT = "attention_bias"
OUTPUT = "encoded"


class _Builder:
    def __init__(self, weights: Mapping[str, NDArray[Any]]) -> None:
        self.weights = weights
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def constant(self, name: str, value: NDArray[Any]) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def scalar(self, name: str, value: float) -> str:
        return self.constant(name, np.array(value, dtype=np.float32))

    def node(self, op: str, inputs: list[str], **attributes: Any) -> str:
        out = f"{op.lower()}_{len(self.nodes)}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attributes))
        return out

    def dense(self, x: str, name: str) -> str:
        weight = self.constant(f"{name}.weight_t", self.weights[f"{name}.weight"].T)
        bias = self.constant(f"{name}.bias", self.weights[f"{name}.bias"])
        return self.node("Add", [self.node("MatMul", [x, weight]), bias])

    def layer_norm(self, x: str, name: str) -> str:
        scale = self.constant(f"{name}.weight", self.weights[f"{name}.weight"])
        bias = self.constant(f"{name}.bias", self.weights[f"{name}.bias"])
        return self.node("LayerNormalization", [x, scale, bias], axis=-1, epsilon=EPS)


def encoder_graph(weights: Mapping[str, NDArray[Any]]) -> onnx.ModelProto:
    """The encoder of these weights: (batch, width, 384) and (batch, 1, 1, width) in,
    (batch, width, 384) out."""
    b = _Builder(weights)
    head = DIMENSIONS // HEADS
    to_heads = b.constant("to_heads", np.array([0, 0, HEADS, head], dtype=np.int64))
    to_hidden = b.constant("to_hidden", np.array([0, 0, DIMENSIONS], dtype=np.int64))
    scale = b.scalar("score_scale", 1.0 / float(np.sqrt(head)))
    half, one = b.scalar("half", 0.5), b.scalar("one", 1.0)
    root_half = b.scalar("root_half", float(1.0 / np.sqrt(2.0)))

    def heads(x: str, perm: list[int]) -> str:
        return b.node("Transpose", [b.node("Reshape", [x, to_heads])], perm=perm)

    x = HIDDEN_INPUT
    for layer in range(LAYERS):
        prefix = f"encoder.layer.{layer}."
        q = heads(b.dense(x, prefix + "attention.self.query"), [0, 2, 1, 3])
        k = heads(b.dense(x, prefix + "attention.self.key"), [0, 2, 3, 1])
        v = heads(b.dense(x, prefix + "attention.self.value"), [0, 2, 1, 3])
        scores = b.node("Add", [b.node("Mul", [b.node("MatMul", [q, k]), scale]), MASK_INPUT])
        context = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), v])
        merged = b.node("Reshape", [b.node("Transpose", [context], perm=[0, 2, 1, 3]), to_hidden])
        attended = b.dense(merged, prefix + "attention.output.dense")
        x = b.layer_norm(b.node("Add", [x, attended]), prefix + "attention.output.LayerNorm")
        inner = b.dense(x, prefix + "intermediate.dense")
        erf = b.node("Erf", [b.node("Mul", [inner, root_half])])
        gelu = b.node("Mul", [b.node("Mul", [inner, half]), b.node("Add", [one, erf])])
        out = b.dense(gelu, prefix + "output.dense")
        x = b.layer_norm(b.node("Add", [x, out]), prefix + "output.LayerNorm")
    b.nodes.append(helper.make_node("Identity", [x], [OUTPUT], name="output"))
    graph = helper.make_graph(
        b.nodes,
        "all-MiniLM-L6-v2-encoder",
        [
            helper.make_tensor_value_info(
                HIDDEN_INPUT, TensorProto.FLOAT, ["batch", "width", DIMENSIONS]
            ),
            helper.make_tensor_value_info(MASK_INPUT, TensorProto.FLOAT, ["batch", 1, 1, "width"]),
        ],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "width", DIMENSIONS])],
        b.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8  # what every ONNX Runtime since 1.10 reads
    onnx.checker.check_model(model)
    return model
