"""A step's hand-written list of some of a class's `self.` variables that
leaves out another its model reads: `[self.A, self.C, self.W]` while the
forward also looks up `self.ASP` (loaded with pretrained vectors)."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, _class_of, _trainable_variable, var_list_of)


def left_out(chosen: ast.AST, scope: _scopes.Scope,
             known: Dict[int, Set[str]]) -> bool:
  """Whether `chosen` (or the one list a name holds) names only trainable
  `self.` variables of the class, and the class makes another trainable
  weight its model reads (as an operand, not only under `stop_gradient`)
  that no step of the class trains, nor is a copy of its variables (a
  target network's, a moving average's). `known` keeps each class's
  weights and those left out, read once per class."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts:
    return False
  listed = {_own(e) for e in chosen.elts}
  info = _class_of(scope)
  if "" in listed or info is None:
    return False
  if id(info) not in known:
    weights = {name for name, values in info.attributes.items()
               if values and all(_weight(v) for v, _ in values)}
    nodes = [n for method in info.methods.values() for each in method.all()
             for n in each.nodes]
    known[id(info.node)] = weights
    trained = _trained(nodes)
    known[id(info)] = set() if "*" in trained else (
        weights - trained - _copies(nodes, weights)) & _read(nodes)
  return listed <= known[id(info.node)] and bool(known[id(info)] - listed)


def _own(node: ast.AST) -> str:
  """`self.x` as the class's attributes name it, else ''."""
  return "self." + node.attr if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self" else ""


def _weight(value: ast.AST) -> bool:
  """A trainable variable made from a tensor op (`tf.random_uniform([n,
  d])`, an initializer) or with a shape: not a scalar kept from a number
  or an attribute (a learning rate, a step)."""
  if not _trainable_variable(value):
    return False
  assert isinstance(value, ast.Call)
  first = value.args[0] if value.args else None
  return isinstance(first, ast.Call) or any(
      k.arg in {"shape", "initializer", "initial_value"}
      for k in value.keywords) or (
          _names.call_name(value) not in {"Variable", "VariableV1"}
          and len(value.args) > 1)


def _trained(nodes: List[ast.AST]) -> Set[str]:
  """The attributes the steps of the class train (a list written in the
  call or held in a name); every one when a step trains all (no list)
  or a list read from elsewhere."""
  trained: Set[str] = set()
  held: Set[str] = set()
  for node in nodes:
    if not (isinstance(node, ast.Call) and _names.call_name(node) in STEPS):
      continue
    chosen = var_list_of(node)
    if isinstance(chosen, ast.Name):
      held.add(chosen.id)
    elif isinstance(chosen, (ast.List, ast.Tuple)):
      trained.update(_own(part) for part in _scopes.walk(chosen))
    else:
      return {"*"}
  for node in nodes:
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id in held for t in node.targets):
      trained.update(_own(part) for part in _scopes.walk(node.value))
  return trained


def _copies(nodes: List[ast.AST], weights: Set[str]) -> Set[str]:
  """The attributes assigned from the class's own variables (a target
  network's sync, a moving average): copies, not parameters."""
  copies: Set[str] = set()
  for node in nodes:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr.startswith("assign") and node.args and any(
            _own(n) in weights for n in _scopes.walk(node.args[0])):
      copies.add(_own(node.func.value))
  return copies


def _read(nodes: List[ast.AST]) -> Set[str]:
  """The attributes a call or an operation of the class reads, outside a
  `stop_gradient` (a teacher's targets)."""
  held: Dict[int, bool] = {}
  stopped = [n for n in nodes if isinstance(n, ast.Call) and _names.call_name(
      n) == "stop_gradient"]
  # Outermost first: a nested one is inside, walked once (linear).
  stopped.sort(key=lambda n: (n.lineno, n.col_offset, -(n.end_lineno or 0),
                              -(n.end_col_offset or 0)))
  for node in stopped:
    if id(node) not in held:
      for inner in _scopes.walk(node):
        held[id(inner)] = True
  return {_own(operand) for operand in _operands(nodes)
          if id(operand) not in held} - {""}


def _operands(nodes: List[ast.AST]) -> Iterator[ast.AST]:
  for node in nodes:
    if isinstance(node, ast.Call):
      yield from node.args
      yield from (k.value for k in node.keywords)
    elif isinstance(node, ast.BinOp):
      yield node.left
      yield node.right
