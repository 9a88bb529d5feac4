"""A variable's own rows set to constants by a scatter in the table the
forward pass reads: `tf.tensor_scatter_nd_update(table, [[0]], tf.zeros(
[1, E]))`, TF2's way to write the padding row of Kyubyong's `zero_pad`
concat; those rows of the variable never train. Only rows named by
literal indices and set to a constant made to size count: rows chosen by
the data (a batch's ids) or set to values of the step are an update, not
a freeze."""

from __future__ import annotations

import ast
from typing import Callable, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

SCATTERS = frozenset({"tensor_scatter_nd_update", "tensor_scatter_update"})


def scattered(node: ast.Call, scope: _scopes.Scope,
              filled: Callable[[ast.expr, _scopes.Scope], bool]
              ) -> Optional[ast.expr]:
  """The tensor whose rows `node` sets to constants (`filled` tells a
  constant made to size), or None."""
  if _names.call_name(node) not in SCATTERS or len(node.args) != 3:
    return None
  tensor, indices, updates = node.args
  if not _literal_indices(indices) or not filled(updates, scope):
    return None
  return tensor


def _literal_indices(node: ast.expr) -> bool:
  """`[[0]]`, `[[0], [1]]`, `[0]`: integers written out."""
  if isinstance(node, (ast.List, ast.Tuple)):
    return bool(node.elts) and all(_literal_indices(e) for e in node.elts)
  return isinstance(node, ast.Constant) and isinstance(
      node.value, int) and not isinstance(node.value, bool)
