"""Whether what a filter keeps only ever joins the list of every
trainable variable: `trainable_list = tf.trainable_variables()`, the
batch norm's moving statistics filtered out of the global variables by
name and added to it (`trainable_list += bn_moving_vars`), the whole
handed to the step (and to a `Saver`). The filter chooses what is added
to the whole, never what is left out of it: the step trains every
trainable variable. Part of `var-list-filter`'s gates."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# The calls that list every trainable variable of the graph.
_EVERY = {"trainable_variables"}
# How a list is added to another (`whole.extend(part)`).
_ADDS = {"extend"}


def joins_every(chosen: Optional[ast.AST],
                scope: Optional[_scopes.Scope]) -> bool:
  """Whether `chosen`, a filter of `scope`, is bound to a name that
  `scope` reads only to add it to a name bound once to every trainable
  variable and otherwise only added to.

  >>> tree = ast.parse(
  ...     "def f():\\n"
  ...     "  every = tf.trainable_variables()\\n"
  ...     "  bn = [g for g in tf.global_variables() if 'moving' in g.name]\\n"
  ...     "  every += bn\\n"
  ...     "  return every\\n")
  >>> scope = list(_scopes.collect(tree).all())[1]
  >>> joins_every(tree.body[0].body[1].value, scope)
  True
  """
  if chosen is None or scope is None:
    return False
  kept = next((n.targets[0].id for n in scope.nodes if isinstance(
      n, ast.Assign) and n.value is chosen and len(n.targets) == 1 and (
          isinstance(n.targets[0], ast.Name))), None)
  if kept is None:
    return False
  wholes = set()
  for node in scope.nodes:
    if isinstance(node, ast.Name) and node.id == kept and isinstance(
        node.ctx, ast.Load):
      whole = _added_to(node, scope)
      if whole is None or not _every_trainable(whole, scope):
        return False
      wholes.add(whole)
  return bool(wholes)


def _added_to(read: ast.Name, scope: _scopes.Scope) -> Optional[str]:
  """The name `read` is added to (`whole += read`, `whole.extend(read)`,
  `whole = whole + read`), or None."""
  for node in scope.nodes:
    if isinstance(node, ast.AugAssign) and node.value is read and (
        isinstance(node.op, ast.Add)) and isinstance(node.target, ast.Name):
      return node.target.id
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr in _ADDS and (
            node.args == [read] or len(node.args) == 1 and (
                node.args[0] is read)) and isinstance(
                    node.func.value, ast.Name):
      return node.func.value.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)) and isinstance(
            node.value, ast.BinOp) and isinstance(node.value.op, ast.Add) and (
                node.value.right is read) and isinstance(
                    node.value.left, ast.Name) and (
                        node.value.left.id == node.targets[0].id):
      return node.targets[0].id
  return None


def _every_trainable(name: str, scope: _scopes.Scope) -> bool:
  """Whether `name` is bound once to every trainable variable
  (`tf.trainable_variables()`, no scope) and otherwise only added to
  (`+=`, `append`, `extend`): no entry replaced, removed or sliced off."""
  made = [d for d in scope.defs.get(name, []) if d.replaces]
  if len(made) != 1 or not isinstance(made[0].value, ast.Call):
    return False
  value = made[0].value
  if _names.call_name(value) not in _EVERY or value.args or value.keywords:
    return False
  for node in scope.nodes:
    if isinstance(node, ast.AugAssign) and isinstance(
        node.target, ast.Name) and node.target.id == name and not (
            isinstance(node.op, ast.Add)):
      return False  # `whole -= ...`, `whole *= ...`.
    if isinstance(node, ast.Subscript) and isinstance(
        node.ctx, (ast.Store, ast.Del)) and _names.root(node) == name:
      return False  # `whole[0] = ...`, `del whole[-1]`.
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and isinstance(
            node.func.value, ast.Name) and node.func.value.id == name and (
                node.func.attr not in {"append", "extend", "insert"}):
      return False  # `whole.remove(v)`, `whole.pop()`.
  return True
