"""A lambda given as a training hook (`LambdaCallback(on_batch_end=lambda
batch, logs: w.assign(w * mask))`): its writes run with each step, as a
callback method's do. A lambda given as an evaluation hook
(`on_test_batch_end=`) or anywhere else is not one.
"""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _scopes

# The keywords of Keras' `LambdaCallback` that run while the model trains.
_HOOKS = frozenset({"on_batch_end", "on_batch_begin", "on_train_batch_end",
                    "on_train_batch_begin", "on_epoch_end", "on_epoch_begin"})


def training_hook(scope: _scopes.Scope) -> bool:
  """Whether `scope` is a lambda passed as a training hook's keyword."""
  if not isinstance(scope.node, ast.Lambda) or scope.parent is None:
    return False
  return any(isinstance(node, ast.keyword) and node.arg in _HOOKS and (
      node.value is scope.node) for node in scope.parent.nodes)
