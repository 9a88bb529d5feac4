"""A write kept on an attribute (`self.e0 = tf.scatter_update(self.table,
[0], zeros)`) and made a control dependency of a lookup of the table in
another method or class that holds both attributes, its own or copied
from the object that made them (`self.e0 = model.e0; self.table =
model.table`, then `with tf.control_dependencies([self.e0]):
embedding_lookup(self.table, ids)`): the row is set back before each
forward pass (the Neural GPU's padding row). Part of `weight-remask`.

The `control_dependencies` blocks of the project are indexed once per
analysis by the attributes they wait on, so each write looks up only the
blocks naming its attribute, and a class's copies of an attribute are
read once."""

from __future__ import annotations

import ast
import functools
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_Blocks = Dict[str, List[Tuple[_scopes.Scope, ast.Call]]]


def kept_on(call: ast.Call, scope: _scopes.Scope) -> Optional[str]:
  """The attribute of `self` the write is kept on (`self.e0 = call`)."""
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and node.value is call and len(
        node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
        and isinstance(node.targets[0].value, ast.Name) and (
            node.targets[0].value.id == "self"):
      return node.targets[0].attr
  return None


def guarded_elsewhere(call: ast.Call, table: str, scope: _scopes.Scope,
                      analysis: Analysis,
                      reads: Callable[[Sequence[ast.stmt], str], bool]
                      ) -> Optional[ast.With]:
  """The block of another function that waits on the write kept on an
  attribute and reads the same table (`self.<attr>` in both classes)
  inside (as `reads` says), each attribute the class's own or copied
  from another object's attribute of the same name; None if none does."""
  handle = kept_on(call, scope)
  parts = table.split(".")
  if handle is None or len(parts) != 2 or parts[0] != "self" or (
      scope.cls is None):
    return None
  blocks = analysis.once("dependency attributes", lambda: _index(analysis))
  assert isinstance(blocks, dict)
  for other, dependency in blocks.get(handle, []):
    if other is scope or other.cls is None or not all(
        other.cls is scope.cls or analysis.once(
            f"copied {id(other.cls)} {attr}",
            functools.partial(_copied, other.cls, attr))
        for attr in (handle, parts[1])):
      continue
    block = analysis.order(other).parent(analysis.order(other).parent(
        dependency) or dependency)
    if isinstance(block, ast.With) and reads(block.body, table):
      return block
  return None


def _index(analysis: Analysis) -> _Blocks:
  """Each `control_dependencies([...])` call of the project under each
  attribute of `self` its list names."""
  blocks: _Blocks = {}
  for scope, call in analysis.calls_named(("control_dependencies",)):
    if not call.args or not isinstance(call.args[0], (ast.List,
                                                      ast.Tuple)):
      continue
    for item in call.args[0].elts:
      if isinstance(item, ast.Attribute) and isinstance(
          item.value, ast.Name) and item.value.id == "self":
        blocks.setdefault(item.attr, []).append((scope, call))
  return blocks


def _copied(info: _scopes.ClassInfo, attr: str) -> bool:
  """Whether a method of the class sets `self.<attr>` to another
  object's attribute of the same name (`self.e0 = model.e0`)."""
  for method in info.methods.values():
    for node in method.nodes:
      if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
          isinstance(node.targets[0], ast.Attribute)) and (
              node.targets[0].attr == attr) and isinstance(
                  node.value, ast.Attribute) and node.value.attr == attr:
        return True
  return False
