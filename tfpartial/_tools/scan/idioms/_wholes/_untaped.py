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
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def run_before_tape(call: ast.AST, scope: Optional[_scopes.Scope],
                    info: Optional[_scopes.ClassInfo]) -> Set[str]:
  """The `self.` parts the function of `call` (a `tape.gradient`) runs,
  none of them inside that tape's `with` block.

  Only direct `self.x(...)` calls are seen, and inside the tape one
  method deep (`self.forward(x)` running `self.head(...)`): a part
  reached through a local alias (`net = self.base; net(x)`) or two
  methods down is not, so it is not counted as run before the tape.

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> run_before_tape(ast.parse("f()").body[0].value, None, None)
  set()
  """
  opened = _tape_opened(call, scope)
  if opened is None or scope is None or info is None:
    return set()
  start, end = _span(opened.body)
  calls = _calls(scope)
  run = {name for at, name in calls if name and not start <= at <= end}
  inside = [name for at, name in calls if start <= at <= end]
  recorded = {name for name in inside if name}
  # `self(x)` runs `call`; a method the tape runs records what it calls.
  for name in sorted(recorded | {"call" for name in inside if not name}):
    if name in info.methods:
      recorded |= {part for _, part in _calls(info.methods[name]) if part}
  return run - recorded


# A call in a function: where it starts, and `x` of `self.x(...)` (""
# for `self(...)`).
_Call = Tuple[_scopes.Position, str]


def _calls(scope: _scopes.Scope) -> List[_Call]:
  """The `self.x(...)` and `self(...)` calls of a function (nested
  functions too), read once per function (each step of it asks)."""
  return scope.once((_calls, None, 0), lambda: [
      ((n.lineno, n.col_offset), name) for n in _scopes.walk(scope.node)
      if isinstance(n, ast.Call) for name in [_called(n)] if name is not None])


def _called(call: ast.Call) -> Optional[str]:
  """`x` of `self.x(...)`, "" of `self(...)`, else None."""
  func = call.func
  if isinstance(func, ast.Name) and func.id == "self":
    return ""
  if isinstance(func, ast.Attribute) and isinstance(
      func.value, ast.Name) and func.value.id == "self":
    return func.attr
  return None


def _span(body: List[ast.stmt]) -> Tuple[_scopes.Position,
                                         _scopes.Position]:
  """Where a block's statements start (a decorator of the first too)
  and end: a node starts in between only if it is inside them."""
  first = body[0]
  start = min([(first.lineno, first.col_offset)] + [
      (d.lineno, d.col_offset) for d in getattr(first, "decorator_list", [])])
  last = body[-1]
  return start, (last.end_lineno or last.lineno, last.end_col_offset or 0)


def _tape_opened(call: ast.AST, scope: Optional[_scopes.Scope]
                 ) -> Optional[ast.With]:
  """The `with tf.GradientTape() as tape` whose tape `call`
  (`tape.gradient(...)`, or an `apply_gradients` of what it returned)
  reads, in its function."""
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
  line = call.lineno
  opened = [node for node, tape in _tapes(scope)
            if node.lineno < line and tape == call.func.value.id]
  # The last tape of that name opened before the call (a name reused).
  return max(opened, key=lambda n: n.lineno) if opened else None


def _tapes(scope: _scopes.Scope) -> List[Tuple[ast.With, str]]:
  """Each `with tf.GradientTape() as tape` of a function and each name
  it binds a tape to, read once per function."""
  return scope.once((_tapes, None, 0), lambda: [
      (node, item.optional_vars.id) for node in _scopes.walk(scope.node)
      if isinstance(node, ast.With) for item in node.items
      if isinstance(item.context_expr, ast.Call) and _names.call_name(
          item.context_expr) == "GradientTape" and isinstance(
              item.optional_vars, ast.Name)])
