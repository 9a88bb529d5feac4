"""Whether a name written under a key (`feed_dict[model.flag] = 0`) is a
feed dict, not gradients kept by key: a zero written there sets a
switch of the graph, it zeroes no element. Used by `_scopes._Binder`.

A name counts only when every value it is given is a dict display with
keys, none of its values read gradients (`tape.gradient`,
`compute_gradients`, `tf.gradients`, or a name bound from them; what a
run returns is arrays), and it either reaches a run somewhere in its
function (`feed_dict=feed`, `sess.run(fetches, feed)`) or every key is
a placeholder: a name bound to one, or an attribute (`model.x`) that
the module binds to one (`self.x = tf.placeholder(...)`). A dict keyed
by a model's variables (`{model.emb: gs[0]}`) and never fed is
gradients. What a function feeds and what a module binds to
placeholders is read once (`Scope.once`)."""

from __future__ import annotations

import ast
from typing import (Any, Callable, FrozenSet, List, Mapping, Optional,
                    Protocol, Sequence, Tuple)

from tfpartial._tools.scan import _names


class Scope(Protocol):
  """What this reads of a `_scopes.Scope` (not imported: `_scopes` uses
  this module)."""
  @property
  def defs(self) -> Mapping[str, Sequence[Any]]: ...

  @property
  def node(self) -> ast.AST: ...

  @property
  def parent(self) -> Optional[Any]: ...

  def once(self, key: Tuple[object, object, int],
           compute: Callable[[], Any]) -> Any: ...


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
  return base.id in _fed(scope) or all(
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


def _fed(scope: Scope) -> FrozenSet[str]:
  """The names the function (or module) of `scope` passes as
  `feed_dict=` or as a run's second argument (`sess.run(fetches,
  feed)`), anywhere in it: read once per scope."""
  fed: FrozenSet[str] = scope.once(("fed names", None, 0), lambda: (
      frozenset(_fed_names(scope.node))))
  return fed


def _fed_names(node: ast.AST) -> List[str]:
  fed = []
  for call in ast.walk(node):
    if not isinstance(call, ast.Call):
      continue
    fed += [k.value.id for k in call.keywords if k.arg == "feed_dict" and (
        isinstance(k.value, ast.Name))]
    if _names.call_name(call) == "run" and len(call.args) > 1 and (
        isinstance(call.args[1], ast.Name)):
      fed.append(call.args[1].id)
  return fed


def _placeholder_attributes(scope: Scope) -> FrozenSet[str]:
  """The attribute names the module of `scope` binds to a placeholder
  (`self.x = tf.placeholder(...)`): read once per module."""
  root = scope
  while root.parent is not None:
    root = root.parent
  bound: FrozenSet[str] = root.once(("placeholder attributes", None, 0),
                                    lambda: _bound_attributes(root.node))
  return bound


def _bound_attributes(tree: ast.AST) -> FrozenSet[str]:
  return frozenset(t.attr for n in ast.walk(tree) if isinstance(
      n, ast.Assign) and isinstance(n.value, ast.Call) and _names.call_name(
          n.value) in _PLACEHOLDERS for t in n.targets if isinstance(
              t, ast.Attribute))


def _input_key(key: ast.expr, scope: Scope) -> bool:
  """Whether a key is a name bound to a placeholder, or an attribute
  the module binds to one."""
  if isinstance(key, ast.Attribute):
    return key.attr in _placeholder_attributes(scope)
  return isinstance(key, ast.Name) and bool(scope.defs.get(key.id)) and all(
      isinstance(d.value, ast.Call) and _names.call_name(
          d.value) in _PLACEHOLDERS for d in scope.defs[key.id])
