"""A variable's edge rows set back to constants by writing it whole:
`emb.assign(tf.concat([tf.zeros([1, E]), emb[1:]], 0))` (or `tf.pad(emb[
1:], ...)`) after each step, the padding row of a table zeroed again the
way Kyubyong's `zero_pad` join zeroes it in the forward pass. Counted
only while the model trains (a callback, a step's loop); written once
before training, it is an initialisation."""

from __future__ import annotations

import ast
from typing import List

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _in_training
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._masks import _rows


def row_resets(analysis: Analysis) -> List[_writes.WriteHit]:
  """A `weight-remask` hit for each write of a variable's own rows joined
  with constants back into it, where it runs with each step."""
  hits: List[_writes.WriteHit] = []
  for scope, call in analysis.calls_named(("assign",)):
    parts = _writes.target_and_value(call)
    if parts is None or parts[2] or not isinstance(parts[1], ast.Call) or (
        analysis.module(scope).is_test):
      continue
    target, value, _ = parts
    assert isinstance(value, ast.Call)
    sliced = _rows.edge_slice(value, scope)
    spelled = _names.dotted(target)
    if sliced is None or spelled is None or (
        _names.dotted(sliced.value) != spelled):
      continue
    if not _in_training.in_training(scope, analysis, call) or not _repeated(
        call, scope, analysis):
      continue
    labels = analysis.flow.labels(target, scope)
    if "var" in labels and "shadow" not in labels:
      hits.append(_writes.WriteHit(call, scope, call, labels,
                                   "weight-remask", target, value,
                                   zeros=True))
  return hits


def _repeated(call: ast.Call, scope: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether the write runs again and again: in a loop, or in a function
  (a callback, a step) rather than once at a module's top level."""
  if scope.parent is not None:
    return True
  order = analysis.order(scope)
  current = order.parent(call)
  while current is not None:
    if isinstance(current, (ast.For, ast.While, ast.AsyncFor)):
      return True
    current = order.parent(current)
  return False
