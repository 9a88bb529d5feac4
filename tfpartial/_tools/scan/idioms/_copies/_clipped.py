"""Whether a write sets a variable back to its own values, read out after
the step and changed only from themselves: a WGAN's critic clipped
(`weights = layer.get_weights()` after `critic.train_on_batch(...)`, then
`weights[j] = np.clip(weights[j], -c, c)` and `layer.set_weights(weights)`).
That is a constraint on every weight (what Keras' `kernel_constraint`
does), not saved values put back: nothing from before the step is kept.
Weights read out after the step with elements of a copy saved earlier
put into them (`weights[0][:5] = saved[0][:5]`) are a write-back still.
The same holds for a variable clipped in place by its own op
(`w.assign(tf.clip_by_value(w, -c, c))`, an IRM game's projection).
"""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom

# Ops that bound every element of their first argument by settings.
_CLIPS = {"clip_by_value", "clip_by_norm", "clip"}


def of_itself(target: ast.AST, value: ast.AST) -> bool:
  """Whether `value` clips the written variable itself
  (`w.assign(tf.clip_by_value(w, -c, c))`): every element bounded after
  the step, nothing saved from before it.

  >>> of_itself(ast.parse("w[0]").body[0].value,
  ...           ast.parse("tf.clip_by_value(w[0], -c, c)").body[0].value)
  True
  """
  return isinstance(value, ast.Call) and _names.call_name(
      value) in _CLIPS and bool(value.args) and ast.unparse(
          value.args[0]) == ast.unparse(target)


def read_after_step(call: ast.Call, scope: _scopes.Scope,
                    value: ast.expr, copy: Optional[ast.AST],
                    step: object) -> bool:
  """Whether `value`, written by `call`, is a local name bound to `copy`
  (the variable read out) between `step` and the write, each element
  stored into it made from itself, the loops' indices and constants."""
  if not isinstance(value, ast.Name) or not isinstance(
      copy, ast.AST) or not isinstance(step, ast.AST) or not (
          _idiom.position(step) < _idiom.position(copy) <
          _idiom.position(call)):
    return False
  own = value.id
  indices = {n.id for loop in scope.nodes if isinstance(
      loop, (ast.For, ast.AsyncFor)) for n in ast.walk(loop.target)
              if isinstance(n, ast.Name)}
  allowed = {own, *indices, *_scopes.imported_names(scope)}
  for node in scope.nodes:
    if isinstance(node, (ast.Assign, ast.AugAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [
          node.target]
      if any(isinstance(t, ast.Subscript) and _names.base_name(t) == own
             for t in targets) and not _from_itself(node.value, own,
                                                    allowed):
        return False
  return True


def _from_itself(stored: ast.AST, own: str, allowed: Set[str]) -> bool:
  """Whether `stored` reads `own` and no other local name but
  `allowed` (attributes of `self`, a clip value, are settings)."""
  read = {n.id for n in ast.walk(stored) if isinstance(n, ast.Name)}
  return own in read and read <= allowed | {"self"}
