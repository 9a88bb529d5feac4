"""What a statement does to the trainable collection (`TRAINABLE_VARIABLES`
or its value, `"trainable_variables"`): the names bound to it
(`get_collection_ref`), what empties it (`clear_collection`, `del
coll[:]`, `coll.clear()`) and what puts variables into it
(`add_to_collection`, `coll.append`, `coll.extend`, `coll[:] = ...`).
The trimmed collection's reader (`_trimmed_collection`) asks these.
"""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_KEY = "TRAINABLE_VARIABLES"
# The key's value written out as a string (`get_collection_ref(...)`).
_VALUE = "trainable_variables"


def names_key(text: str) -> bool:
  """Whether a module's text can name the key as `is_key` reads it."""
  return _KEY in text or any(f"{quote}{_VALUE}{quote}" in text
                             for quote in ("'", '"'))


def is_key(node: ast.AST) -> bool:
  """`tf.GraphKeys.TRAINABLE_VARIABLES`, or its value written out."""
  text = _names.dotted(node)
  if text is not None:
    return text.split(".")[-1] == _KEY
  return isinstance(node, ast.Constant) and node.value == _VALUE


def handles(scope: _scopes.Scope) -> Set[str]:
  """The names bound to the collection itself (`get_collection_ref`)."""
  found: Set[str] = set()
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (
        _names.call_name(node.value) == "get_collection_ref") and (
            node.value.args and is_key(node.value.args[0])):
      found.update(t.id for t in node.targets if isinstance(t, ast.Name))
  return found | {_KEY}


def receiver(call: ast.Call) -> Optional[str]:
  """The handle a method is called on (`coll.remove(v)` -> `coll`), or
  the key's own name for the collection read in place
  (`tf.get_collection_ref(KEY).remove(v)`)."""
  func = call.func
  if not isinstance(func, ast.Attribute):
    return None
  if isinstance(func.value, ast.Name):
    return func.value.id
  ref = func.value
  return _KEY if isinstance(ref, ast.Call) and _names.call_name(
      ref) == "get_collection_ref" and ref.args and is_key(
          ref.args[0]) else None


def empties(node: ast.AST, handles: Set[str]) -> bool:
  """`clear_collection(KEY)`, `del coll[:]` (a bare slice: `del coll[i]`
  takes one out), `coll.clear()`."""
  if isinstance(node, ast.Call):
    name = _names.call_name(node)
    if name == "clear_collection":
      return bool(node.args) and is_key(node.args[0])
    return name == "clear" and receiver(node) in handles
  return isinstance(node, ast.Delete) and any(
      isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and (
          t.value.id in handles) and _bare(t.slice) for t in node.targets)


def _bare(index: ast.AST) -> bool:
  return isinstance(index, ast.Slice) and index.lower is None and (
      index.upper is None) and index.step is None


def is_slice_store(node: ast.AST, handles: Set[str]) -> bool:
  return isinstance(node, ast.Assign) and any(
      isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and (
          t.value.id in handles) and isinstance(t.slice, ast.Slice)
      for t in node.targets)


def added(node: ast.AST, handles: Set[str]) -> Optional[ast.expr]:
  """What `node` puts into the collection: `add_to_collection(KEY, v)`'s
  `v`, `coll.append(v)`, `coll.extend(vs)`, `coll[:] = vs`."""
  if is_slice_store(node, handles):
    assert isinstance(node, ast.Assign)
    return node.value
  if not isinstance(node, ast.Call):
    return None
  name = _names.call_name(node)
  if name in {"add_to_collection", "add_to_collections"} and len(
      node.args) == 2:
    keys = node.args[0]
    if is_key(keys) or isinstance(keys, (ast.List, ast.Tuple)) and any(
        is_key(k) for k in keys.elts):
      return node.args[1]
  if name in {"append", "extend"} and receiver(node) in handles and len(
      node.args) == 1:
    return node.args[0]
  return None
