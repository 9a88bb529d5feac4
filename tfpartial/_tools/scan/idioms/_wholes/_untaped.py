"""Parts of a class a tape step's function runs only before its tape
opens: `images = self.augmenter(x)` (or `feats = self.base(x)`), then
`with tf.GradientTape() as tape: logits = self.head(feats)` and
`tape.gradient(loss, self.head.trainable_variables)`. The tape never
records those parts, so no gradient of the step's loss reaches their
variables: a list that leaves them out leaves out nothing the step
could train (an augmentation stack, a feature extractor run apart).
A part also run inside the tape, directly or through a method of the
class the tape calls (`self(x)` runs `call`), is recorded. Part of
`var-list-filter` (`_left_out`'s parts of a class)."""

from __future__ import annotations

import ast
from typing import Iterable, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def run_before_tape(call: ast.AST, scope: Optional[_scopes.Scope],
                    info: Optional[_scopes.ClassInfo]) -> Set[str]:
  """The `self.` parts the function of `call` (a `tape.gradient`) runs,
  none of them inside that tape's `with` block.

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> run_before_tape(ast.parse("f()").body[0].value, None, None)
  set()
  """
  body = _tape_body(call, scope)
  if body is None or scope is None or info is None:
    return set()
  inside = {id(n) for statement in body for n in ast.walk(statement)}
  run = _parts_called(n for n in ast.walk(scope.node) if id(n) not in inside)
  recorded = _parts_called(n for s in body for n in ast.walk(s))
  for method in _methods_called(body, info):
    recorded |= _parts_called(ast.walk(method.node))
  return run - recorded


def _tape_body(call: ast.AST, scope: Optional[_scopes.Scope]
               ) -> Optional[List[ast.stmt]]:
  """The statements of the `with tf.GradientTape() as tape` whose tape
  `call` (`tape.gradient(...)`, or an `apply_gradients` of what it
  returned) reads, in its function."""
  if scope is None or not isinstance(call, ast.Call):
    return None
  if _names.call_name(call) != "gradient":
    made = [d.value for n in ast.walk(call) if isinstance(n, ast.Name)
            for d in scope.defs.get(n.id, [])
            if isinstance(d.value, ast.Call) and _names.call_name(
                d.value) == "gradient"]
    if len(made) != 1:
      return None
    call = made[0]
  if not isinstance(call.func, ast.Attribute) or not isinstance(
      call.func.value, ast.Name):
    return None
  tape = call.func.value.id
  opened = [node for node in _scopes.walk(scope.node) if isinstance(
      node, ast.With) and node.lineno < call.lineno and any(
          isinstance(item.context_expr, ast.Call) and _names.call_name(
              item.context_expr) == "GradientTape" and isinstance(
                  item.optional_vars, ast.Name) and (
                      item.optional_vars.id == tape) for item in node.items)]
  # The last tape of that name opened before the call (a name reused).
  return max(opened, key=lambda n: n.lineno).body if opened else None


def _parts_called(nodes: Iterable[ast.AST]) -> Set[str]:
  """`x` of each `self.x(...)` call among `nodes`."""
  return {n.func.attr for n in nodes
          if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
          and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"}


def _methods_called(body: List[ast.stmt], info: _scopes.ClassInfo
                    ) -> List[_scopes.Scope]:
  """The methods of the class a tape's body calls (`self.m(...)`, and
  `call` for `self(...)`)."""
  names = {"call" for s in body for n in ast.walk(s) if isinstance(
      n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "self"}
  names |= _parts_called(n for s in body for n in ast.walk(s))
  return [info.methods[name] for name in sorted(names)
          if name in info.methods]
