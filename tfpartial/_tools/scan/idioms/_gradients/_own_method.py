"""Whether a class's `get_gradients` or `compute_gradients` is one an
optimizer calls or that applies what it computes: the class derives from
another (an optimizer, a wrapper of one), or it defines or calls a step
(`apply_gradients`, `minimize`) or writes variables (`tf.assign_add`, a
hand-written Adam). A plain class of its own that only names a method so
(a metamodel fitting NumPy parameters by hand, `grads = params * 0`
filled row by row, then `self.params = self.params - lr * grads`) hands
its gradients to no optimizer. Part of `grads-mask`."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Steps and writes: what a class that applies gradients calls or defines.
_STEPS = frozenset({"apply_gradients", "minimize", "apply", "assign",
                    "assign_add", "assign_sub", "scatter_update",
                    "scatter_add", "scatter_sub"})


def optimizer_calls(info: _scopes.ClassInfo) -> bool:
  """Whether the gradients a method of `info` computes may be applied:
  it has a base other than `object`, or defines or calls a step."""
  if any(base != "object" for base in info.bases):
    return True
  for node in ast.walk(info.node):
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        node.name in _STEPS) or isinstance(node, ast.Call) and (
            _names.call_name(node) in _STEPS):
      return True
  return False
