"""A write a `tf.train.SessionRunHook` (`tf.estimator.SessionRunHook`)
builds and runs with each step: made in `begin` and kept as `self.op`,
then run by `after_run` (`run_context.session.run(self.op)`, after each
step) or fetched by `before_run` (`return SessionRunArgs(self.op)`,
beside the train op, in no order with it). The graph order sees only the
op built; the hook's methods say when it runs.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def runs(call: ast.Call, scope: _scopes.Scope
         ) -> Optional[Dict[str, object]]:
  """When a hook runs the write `call` builds and keeps in `self.X`:
  `{"order": "after", "at": after_run}` or `{"order": "fetch", "at":
  the SessionRunArgs call}`, or None."""
  info = scope.cls
  if info is None or not any(
      "SessionRunHook" in base for base in info.bases):
    return None
  kept = next((_names.dotted(t) for n in scope.nodes
               if isinstance(n, ast.Assign) and n.value is call
               for t in n.targets
               if (_names.dotted(t) or "").startswith("self.")), None)
  if kept is None:
    return None
  for method in info.node.body:
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
        method.name not in {"after_run", "before_run"}):
      continue
    for item in ast.walk(method):
      if isinstance(item, ast.Call) and _names.call_name(item) in {
          "run", "SessionRunArgs"} and any(
              _names.dotted(n) == kept for a in item.args
              for n in ast.walk(a)):
        if method.name == "after_run":
          return {"order": "after", "at": method}
        return {"order": "fetch", "at": item}
  return None
