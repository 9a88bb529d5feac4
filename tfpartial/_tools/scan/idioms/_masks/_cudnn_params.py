"""A cuDNN RNN layer of tf.contrib (`cudnn_rnn.CudnnLSTM`) keeps every
gate's weights in one opaque `kernel`, and its `_forward(inputs, h, c,
opaque_params, training)` runs the RNN on whatever it is given as those
parameters: a subclass that passes a product of the kernel there (a mask
packed with `_canonical_to_opaque`) reads the product as its weights, as
a matmul reads a dense layer's.

>>> import ast
>>> call = ast.parse("self._forward(x, h, c, self._masked, True)").body[0]
>>> run_as_params(call.value, "self._masked")
True
"""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_CUDNN_LAYERS = {"CudnnLSTM", "CudnnGRU", "CudnnRNNTanh", "CudnnRNNRelu"}


def cudnn_layer(info: _scopes.ClassInfo) -> bool:
  """Whether the class derives from a cuDNN RNN layer (outside the
  project) and keeps its `_forward`."""
  return "_forward" not in info.methods and any(
      base.rsplit(".", 1)[-1] in _CUDNN_LAYERS for base in info.bases)


def run_as_params(node: ast.AST, name: str) -> bool:
  """Whether `node` is the layer's `self._forward(inputs, h, c, params,
  training)` run on `name` as its opaque parameters."""
  return isinstance(node, ast.Call) and _names.dotted(node.func) == (
      "self._forward") and len(node.args) >= 4 and _names.dotted(
          node.args[3]) == name
