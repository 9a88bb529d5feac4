"""Whether a name written under a key (`feed_dict[model.flag] = 0`) is a
feed dict, not gradients kept by key: a zero written there sets a
switch of the graph, it zeroes no element. Used by `_scopes._Binder`.

A name counts only when every value it is given is a dict display with
keys, none of its values read gradients (`tape.gradient`,
`compute_gradients`, `tf.gradients`, or a name bound from them; what a
run returns is arrays), and it
either reaches a run (`feed_dict=feed`, `sess.run(fetches, feed)`) or
its keys are placeholders or attributes of a model (`model.x`)."""

from __future__ import annotations

import ast
from typing import Any, List, Mapping, Protocol, Sequence

from tfpartial._tools.scan import _names


class Scope(Protocol):
  """What this reads of a `_scopes.Scope` (not imported: `_scopes` uses
  this module)."""
  @property
  def defs(self) -> Mapping[str, Sequence[Any]]: ...

  @property
  def nodes(self) -> Sequence[ast.AST]: ...

_GRADIENT_CALLS = {"gradient", "gradients", "compute_gradients",
                   "jacobian", "batch_jacobian"}
_PLACEHOLDERS = {"placeholder", "placeholder_with_default",
                 "sparse_placeholder"}


def is_feed_dict(base: ast.expr, scope: Scope) -> bool:
  """Whether `base` names a feed dict in `scope` (see the module)."""
  made = scope.defs.get(base.id, []) if isinstance(base, ast.Name) else []
  given = [d.value for d in made if d.replaces]
  if not given or not all(isinstance(v, ast.Dict) and v.keys and all(
      k is not None for k in v.keys) for v in given):
    return False
  dicts: List[ast.Dict] = [v for v in given if isinstance(v, ast.Dict)]
  if any(_reads_gradients(v, scope) for d in dicts for v in d.values):
    return False
  assert isinstance(base, ast.Name)
  return _fed(base.id, scope) or all(
      _input_key(k, scope) for d in dicts for k in d.keys if k is not None)


def _reads_gradients(value: ast.AST, scope: Scope, depth: int = 3
                     ) -> bool:
  """Whether `value` reads a gradient call, or a name bound from one;
  what a run returns (`sess.run(grads)`) is arrays, not read further."""
  if isinstance(value, ast.Call):
    if _names.call_name(value) == "run":
      return False
    if _names.call_name(value) in _GRADIENT_CALLS:
      return True
  if depth and isinstance(value, ast.Name) and any(
      _reads_gradients(d.value, scope, depth - 1)
      for d in scope.defs.get(value.id, ())):
    return True
  return any(_reads_gradients(c, scope, depth)
             for c in ast.iter_child_nodes(value))


def _fed(name: str, scope: Scope) -> bool:
  """Whether `name` is passed as `feed_dict=` or as a run's second
  argument (`sess.run(fetches, feed)`) in `scope`."""
  for node in scope.nodes:
    if not isinstance(node, ast.Call):
      continue
    if any(k.arg == "feed_dict" and isinstance(k.value, ast.Name) and (
        k.value.id == name) for k in node.keywords):
      return True
    if _names.call_name(node) == "run" and len(node.args) > 1 and (
        isinstance(node.args[1], ast.Name) and node.args[1].id == name):
      return True
  return False


def _input_key(key: ast.expr, scope: Scope) -> bool:
  """Whether a key is `model.<attr>` or a name bound to a placeholder."""
  if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name):
    return True
  return isinstance(key, ast.Name) and bool(scope.defs.get(key.id)) and all(
      isinstance(d.value, ast.Call) and _names.call_name(
          d.value) in _PLACEHOLDERS for d in scope.defs[key.id])
