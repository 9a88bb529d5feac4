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
>>> call = ast.parse("self._forward(x, h, c, opaque_params=self._m)").body[0]
>>> run_as_params(call.value, "self._m")
True
"""

from __future__ import annotations

import ast
from typing import Callable, List, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_CUDNN_LAYERS = {"CudnnLSTM", "CudnnGRU", "CudnnRNNTanh", "CudnnRNNRelu"}


def cudnn_layer(info: _scopes.ClassInfo) -> bool:
  """Whether the class derives from a cuDNN RNN layer by a base spelled
  as tf.contrib's (`cudnn_rnn.CudnnLSTM`, `CudnnLSTM`; a class of the
  project so named too: its `_forward` is read the same) and keeps its
  `_forward`."""
  return "_forward" not in info.methods and any(
      base.rsplit(".", 1)[-1] in _CUDNN_LAYERS for base in info.bases)


def run_as_params(node: ast.AST, name: str) -> bool:
  """Whether `node` is the layer's `self._forward(inputs, h, c, params,
  training)` run on `name` as its opaque parameters (`opaque_params=`
  by keyword too)."""
  if not isinstance(node, ast.Call) or _names.dotted(node.func) != (
      "self._forward"):
    return False
  given = [k.value for k in node.keywords if k.arg == "opaque_params"]
  return any(_names.dotted(p) == name for p in [*node.args[3:4], *given])


def packed_lists(value: ast.expr) -> List[ast.expr]:
  """The lists `value` packs into one opaque kernel: the arguments of its
  `_canonical_to_opaque(weights, biases)` calls (never an attribute read
  for its shape or dtype).

  >>> call = ast.parse("self._canonical_to_opaque(self._masks, ones)")
  >>> [ast.unparse(e) for e in packed_lists(call.body[0].value)]
  ['self._masks', 'ones']
  """
  return [arg for node in ast.walk(value) if isinstance(node, ast.Call)
          and _names.call_name(node) == "_canonical_to_opaque"
          for arg in [*node.args, *(k.value for k in node.keywords)]]


def packs_gates(mask: ast.expr, scope: _scopes.Scope, values: Values,
                made: Callable[[ast.expr, _scopes.Scope], List[ast.expr]]
                ) -> bool:
  """Whether a mask packed from the layer's own lists of variables
  (`self._canonical_to_opaque(self._masks, ones)`, `self._masks` grown by
  `.append`) packs one made trainable: a learned gate, no fixed choice.
  `values` gives what a name or `self` attribute is assigned (what is
  appended too), `made` what makes a value (a name's assignments)."""
  reached = [pair for value, home in values(mask, scope)[:4]
             for packed in packed_lists(value)
             for pair in values(packed, home)[:4]]
  return any(isinstance(each, ast.Call) and _names.call_name(each) in (
      _VARIABLES) and not any(
          k.arg == "trainable" and isinstance(k.value, ast.Constant)
          and k.value.value is False for k in each.keywords)
             for value, home in reached[:8] for each in made(value, home))


_VARIABLES = {"Variable", "VariableV1", "get_variable", "add_weight",
              "add_variable"}
# What the masked-weights rule reads a mask's assignments with.
Values = Callable[[ast.expr, _scopes.Scope],
                  List[Tuple[ast.expr, _scopes.Scope]]]
