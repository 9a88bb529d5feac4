"""Whether a class's name filter keeps every variable the class makes:
the filter keeps names by prefix (`p.name.startswith('mean_network') or
p.name.startswith('output_meta_constant')`) and drops only names no
maker of the class is given (`'Adam' not in p.name`, an optimizer's
slots), and every literal `name=` the class's methods hand a maker of
variables outside any scope (`self.create_MLP(name='mean_network')`,
`make_param_layer(name='output_meta_constant')`, `tf.Variable(...,
name=...)`; a `trainable=False` one aside) starts with a kept prefix.
The filter is the class's own parameters (an RL baseline's
`get_params`), not a part: a maker it leaves out (the policy's
`output_std_param`) keeps it found.
"""

from __future__ import annotations

import ast
import weakref
from typing import FrozenSet, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

_MAKERS = {"Variable", "get_variable"}


def keeps_every_made(project: _project.Project, node: ast.AST,
                     home: _scopes.Scope) -> bool:
  """Whether the filter `node` (in a method) keeps by prefix every name
  its class makes variables under, and drops none of them."""
  info = _scopes.enclosing_class(home)
  if info is None:
    return False
  chain = _chain(node, home, info)
  kept = {c.args[0].value for c in chain if isinstance(c, ast.Call) and (
      _names.call_name(c) == "startswith") and c.args and isinstance(
          c.args[0], ast.Constant) and isinstance(c.args[0].value, str)}
  dropped = {c.left.value for c in chain if isinstance(c, ast.Compare) and (
      isinstance(c.ops[0], ast.NotIn)) and isinstance(c.left, ast.Constant)
             and isinstance(c.left.value, str)}
  made = _made_by_class(project, info)
  return bool(kept) and bool(made) and all(
      any(m.startswith(k) for k in kept) and not any(d in m for d in dropped)
      for m in made)


def _made_by_class(project: _project.Project, info: _scopes.ClassInfo
                   ) -> FrozenSet[str]:
  """The literal names the methods of `info` and of its bases make
  variables under, read once per class (each filter of a class walked
  every method of it and of its bases)."""
  kept = _MADE.get(info.node)
  if kept is None:
    made: Set[str] = set()
    for each in [info, *project.base_classes(info)]:
      for method in each.methods.values():
        _made(getattr(method.node, "body", []), info, made)
    kept = _MADE[info.node] = frozenset(made)
  return kept


# Per class (weakly: a scan's trees go when it ends).
_MADE: weakref.WeakKeyDictionary[ast.AST, FrozenSet[str]] = (
    weakref.WeakKeyDictionary())


def _chain(node: ast.AST, home: _scopes.Scope, info: _scopes.ClassInfo
           ) -> List[ast.AST]:
  """The nodes the filter is made from, in its method or, for a call of
  a method of the class (`self.get_params_internal(trainable=True)`),
  in what that method returns."""
  name = _names.call_name(node) if isinstance(node, ast.Call) else ""
  method = info.methods.get(name) if isinstance(node, ast.Call) and (
      isinstance(node.func, ast.Attribute)) and _names.dotted(
          node.func.value) == "self" else None
  if method is None:
    return list(_scopes.made_from(node, home))
  return [n for r in ast.walk(method.node) if isinstance(r, ast.Return) and (
      r.value is not None) for n in _scopes.made_from(r.value, method)]


def _made(body: List[ast.stmt], info: _scopes.ClassInfo, made: Set[str]
          ) -> None:
  """Adds the literal `name=` of each maker called in `body` outside any
  scope it opens (what is made inside a scope is named under it)."""
  for statement in body:
    if isinstance(statement, _names.DEFINITIONS):
      continue
    if _names.opens_scope(statement, _names.TF_SCOPES):
      continue
    for node in _shallow(statement):
      if isinstance(node, ast.Call) and _maker(node, info):
        made.update(v.value for v in _names_given(node, info) if isinstance(
            v, ast.Constant) and isinstance(v.value, str))
    for block in _scopes.blocks(statement):
      _made(block, info, made)


def _names_given(call: ast.Call, info: _scopes.ClassInfo) -> List[ast.expr]:
  """What a maker is given as its name: `name=` (or `scope=`), the first
  argument of `get_variable`, or a method's `name` parameter passed by
  position (`self.create_mlp("head", sizes)`)."""
  given = [k.value for k in call.keywords if k.arg in {"name", "scope"}]
  if _names.call_name(call) == "get_variable" and call.args:
    given.append(call.args[0])
  method = info.methods.get(_names.call_name(call))
  node = method.node if method is not None else None
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    params = [a.arg for a in node.args.args][1:]
    given += [a for p, a in zip(params, call.args) if p in {"name", "scope"}]
  return given


def _shallow(statement: ast.stmt) -> List[ast.AST]:
  """The nodes of a statement outside the statements it holds."""
  inner = {id(s) for block in _scopes.blocks(statement) for s in block}
  found: List[ast.AST] = []
  stack: List[ast.AST] = [statement]
  while stack:
    node = stack.pop()
    found.append(node)
    stack += [c for c in ast.iter_child_nodes(node) if id(c) not in inner]
  return found


def _maker(call: ast.Call, info: _scopes.ClassInfo) -> bool:
  """Whether `call` makes trainable variables: `tf.Variable`,
  `get_variable`, a method of the class, or a `make_*` / `create_*`
  helper, not given `trainable=False`."""
  if any(k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
      k.value.value is False) for k in call.keywords):
    return False
  name = _names.call_name(call)
  own = isinstance(call.func, ast.Attribute) and isinstance(
      call.func.value, ast.Name) and call.func.value.id == "self" and (
          name in info.methods)
  return name in _MAKERS or own or name.startswith(("make_", "create_"))
