"""A list of variables grown per value of a stage: one step whose list
is extended under tests of one stage value (`if evo in ('1_dm1',):
train_vars.extend(get_collection(..., 'netDM1'))`), in a function that
builds its scopes under tests of the same value (`if evo >= '1_dm1':
with tf.variable_scope('netDM1'): ...`).

Each value the function compares the stage with is one run: in that run
the list holds the scopes whose tests hold, and the graph holds the
scopes whose tests hold. A scope built in a run, trained in another run,
trained by no addition of this one, and feeding a scope this run trains
(`netDM1` reads `netFlow1`'s outputs) stays fixed in that run: DeMoN's
evolutions, a progressive network's earlier blocks."""

from __future__ import annotations

import ast
import dataclasses
import operator
import weakref
from typing import (Callable, Dict, FrozenSet, List, Optional, Set, Tuple,
                    Union)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_GROW = {"extend", "append"}
# A stage's value: a name (`'1_dm1'`) or a number (`stage >= 2`).
Value = Union[str, int]
# How a test compares the stage with a value, by its operator.
_COMPARE: Dict[type, Callable[[Value, Value], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


@dataclasses.dataclass
class _Placed:
  """A scope's name, the node that opens or adds it, and the tests of the
  stage around it."""

  scope: str
  node: ast.AST
  tests: List[ast.expr]
  added: Optional[ast.expr] = None  # The list's growth, where it is one.


def grown_apart(steps: List[Tuple[ast.Call, _scopes.Scope, object]]
                ) -> List[Tuple[ast.expr, _scopes.Scope, ast.Call]]:
  """Of the steps (call, scope, list), where each list grown per stage
  value leaves out a built scope in some run (`left_out`), with the
  step's scope and call."""
  found = []
  grown: Dict[int, Dict[str, List[_Placed]]] = {}  # Read once a function.
  for call, scope, var_list in steps:
    if isinstance(var_list, ast.Name):
      if id(scope.node) not in grown:
        grown[id(scope.node)] = _added_by_name(scope.node)
      node = left_out(scope.node, var_list, grown[id(scope.node)])
      if node is not None:
        found.append((node, scope, call))
  return found


def left_out(function: ast.AST, var_list: ast.expr,
             grown: Optional[Dict[str, List[_Placed]]] = None
             ) -> Optional[ast.expr]:
  """Where the list `var_list` of a step in `function` is grown for the
  first stage value whose run leaves out a built scope that feeds what
  it trains, or None; `grown` is `_added_by_name(function)` when read
  already."""
  name = _names.dotted(var_list)
  if name is None:
    return None
  added = (_added_by_name(function) if grown is None else grown).get(
      name, [])
  subject = _subject([test for each in added for test in each.tests])
  if subject is None or len({a.scope for a in added}) < 2:
    return None
  built = scopes_built(function)
  for value in _values(function, subject):
    trained = [a for a in added if _holds(a.tests, subject, value)]
    if not trained:
      continue
    mine = {a.scope for a in trained}
    elsewhere = {a.scope for a in added} - mine
    blocks = [b for b in built if b.scope in mine and (
        _holds(b.tests, subject, value))]
    fed = names_fed(function, blocks)
    start = min((_position(b.node)[0] for b in blocks), default=0)
    for each in built:
      if each.scope in elsewhere and _holds(each.tests, subject, value) and (
          names_assigned(each.node) & fed) and (
              getattr(each.node, "end_lineno", 0) or 0) < start:
        return min((a.added for a in trained if a.added is not None),
                   key=_position, default=None)
  return None


def _position(node: ast.AST) -> Tuple[int, int]:
  return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _around(function: ast.AST) -> Dict[int, List[ast.expr]]:
  """The tests of the `if` statements around each node (the body's; not
  a single `Load` or `+`, which no question asks about)."""
  found: Dict[int, List[ast.expr]] = {}

  def visit(node: ast.AST, tests: List[ast.expr]) -> None:
    # Iterated, not recursive: a generated `1 + 1 + ...` nests past the
    # stack. In the order of the recursion it replaces (a shared `Load`
    # or `==` keeps the tests of its last place). By id, once per `if`: a
    # long body is not searched for each child.
    todo: List[Tuple[ast.AST, List[ast.expr], bool]] = [(node, tests, False)]
    while todo:
      node, tests, seen = todo.pop()
      if seen:  # Its own entry, after its parent's earlier children.
        found[id(node)] = tests
        continue
      test: Optional[ast.expr] = None
      body: FrozenSet[int] = frozenset()
      orelse: FrozenSet[int] = frozenset()
      if isinstance(node, ast.If):
        test = node.test
        body = frozenset(id(c) for c in node.body)
        orelse = frozenset(id(c) for c in node.orelse)
      later: List[Tuple[ast.AST, List[ast.expr], bool]] = []
      for child in _scopes.children(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef, ast.Lambda)):
          continue
        later.append((child, tests, True))
        if test is not None and id(child) in body:
          later.append((child, [*tests, test], False))
        elif test is not None and id(child) in orelse:
          later.append((child, [*tests, ast.UnaryOp(ast.Not(), test)],
                        False))
        else:
          later.append((child, tests, False))
      todo.extend(reversed(later))
  body = getattr(function, "body", [])
  for statement in body if isinstance(body, list) else []:
    found[id(statement)] = []
    visit(statement, [])
  return found


def _scope_of(node: ast.expr) -> Optional[str]:
  """The literal scope a collection of variables is read by."""
  for each in _scopes.walk(node):
    if isinstance(each, ast.Call) and _names.call_name(each) in {
        "get_collection", "trainable_variables", "global_variables"}:
      given = [a.value for a in [*each.args, *(
          k.value for k in each.keywords)] if isinstance(
              a, ast.Constant) and isinstance(a.value, str)]
      if given:
        return given[-1].strip("/")
  return None


def _added_by_name(function: ast.AST) -> Dict[str, List[_Placed]]:
  """Each scope added to a list of the function, with the tests around
  it, by the list's name: one walk for every step's list (the tests
  around, a walk of their own, read only for a function that adds a
  scope: most add none)."""
  grown = [(node, name, value, scope) for node, name, value, scope in (
      _grown(node) for node in _scopes.walk(function) if isinstance(
          node, (ast.Call, ast.AugAssign))) if scope is not None]
  if not grown:
    return {}
  around = _around(function)
  found: Dict[str, List[_Placed]] = {}
  for node, name, value, scope in grown:
    if id(node) in around:  # Not in a function of its own.
      found.setdefault(name, []).append(_Placed(
          scope, node, around[id(node)],
          node if isinstance(node, ast.Call) else value))
  return found


def _grown(node: ast.AST) -> Tuple[ast.AST, str, Optional[ast.expr],
                                   Optional[str]]:
  """(node, list, value, scope) of a node that adds a literal scope's
  collection to a list (`train_vars.extend(get_collection(...,
  'netDM1'))`, `+=`); scope None for any other node."""
  value: Optional[ast.expr] = None
  name: Optional[str] = None
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
      and node.func.attr in _GROW and node.args:
    name, value = _names.dotted(node.func.value), node.args[0]
  elif isinstance(node, ast.AugAssign):
    name, value = _names.dotted(node.target), node.value
  if name is None or value is None:
    return node, "", None, None
  return node, name, value, _scope_of(value)


def scopes_built(function: ast.AST) -> List[_Placed]:
  """Each literal scope the function opens (`with
  tf.variable_scope('netDM1'):`), with the tests around it; read once
  per function, however many of its stages ask (each asking walked it:
  quadratic in the stages of one function)."""
  if function not in _BUILT:
    _BUILT[function] = _read_scopes_built(function)
  return list(_BUILT[function])


# What `scopes_built` read of each function, while the tree lives.
_BUILT: "weakref.WeakKeyDictionary[ast.AST, List[_Placed]]" = (
    weakref.WeakKeyDictionary())


def _read_scopes_built(function: ast.AST) -> List[_Placed]:
  opened = [(node, item.context_expr) for node in _scopes.walk(function)
            if isinstance(node, (ast.With, ast.AsyncWith))
            for item in node.items if isinstance(
                item.context_expr, ast.Call) and _names.call_name(
                    item.context_expr) == "variable_scope" and (
                        item.context_expr.args)]
  if not opened:
    return []  # The tests around, a walk of their own, read for none.
  around = _around(function)
  found: List[_Placed] = []
  for node, call in opened:
    if id(node) in around:
      name = call.args[0]
      text = name.value.strip("/") if isinstance(
          name, ast.Constant) and isinstance(name.value, str) else (
              f"={ast.unparse(name)}")  # A computed scope, by its text.
      found.append(_Placed(text, node, around[id(node)]))
  return found


def _subject(tests: List[ast.expr]) -> Optional[str]:
  """The one value every test of the additions compares with strings."""
  read: Set[str] = set()
  for test in tests:
    for compare in _scopes.walk(test):
      if isinstance(compare, ast.Compare):
        name = _names.dotted(compare.left)
        if name is None:
          return None
        read.add(name)
  return read.pop() if len(read) == 1 else None


def _value(node: ast.AST) -> Optional[Value]:
  """A constant a stage is compared with: a string or a number."""
  if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) \
      and not isinstance(node.value, bool):
    return node.value
  return None


def _values(function: ast.AST, subject: str) -> List[Value]:
  """The values of one kind the function compares `subject` with,
  sorted."""
  found: Set[Value] = set()
  for node in _scopes.walk(function):
    if isinstance(node, ast.Compare) and _names.dotted(node.left) == subject:
      for side in node.comparators:
        elts = side.elts if isinstance(side, (ast.Tuple, ast.List,
                                              ast.Set)) else [side]
        found.update(v for v in map(_value, elts) if v is not None)
  if len({type(v) for v in found}) > 1:
    return []  # Names and numbers: not one stage.
  return sorted(found, key=lambda v: (v, "") if isinstance(v, int) else (
      0, v))


def _holds(tests: List[ast.expr], subject: str, value: Value) -> bool:
  """Whether every test holds when the stage is `value` (a test of
  anything else: not known to hold)."""
  return all(_truth(test, subject, value) is True for test in tests)


def _truth(test: ast.expr, subject: str, value: Value) -> Optional[bool]:
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
    inner = _truth(test.operand, subject, value)
    return None if inner is None else not inner
  if isinstance(test, ast.BoolOp):
    parts = [_truth(v, subject, value) for v in test.values]
    if None in parts:
      return None
    return all(parts) if isinstance(test.op, ast.And) else any(parts)
  if not isinstance(test, ast.Compare) or len(test.ops) != 1 or (
      _names.dotted(test.left) != subject):
    return None
  op, side = test.ops[0], test.comparators[0]
  if isinstance(side, (ast.Tuple, ast.List, ast.Set)) and isinstance(
      op, (ast.In, ast.NotIn)) and all(
          _value(e) is not None for e in side.elts):
    inside = value in [_value(e) for e in side.elts]
    return inside if isinstance(op, ast.In) else not inside
  given = _value(side)
  if given is not None and type(given) is type(value) and (
      type(op) in _COMPARE):
    return _COMPARE[type(op)](value, given)
  return None


def names_assigned(node: ast.AST) -> Set[str]:
  """The names a block assigns."""
  return {n.id for n in _scopes.walk(node) if isinstance(
      n, ast.Name) and isinstance(n.ctx, ast.Store)}


def names_fed(function: ast.AST, blocks: List[_Placed]) -> Set[str]:
  """The names the blocks of the trained scopes read, and those these
  are computed from in the function (`predict_flow2` of `tf.split(
  netFlow1_result[...])`)."""
  read = {n.id for b in blocks for n in _scopes.walk(b.node) if isinstance(
      n, ast.Name) and isinstance(n.ctx, ast.Load)}
  assigns = [n for n in _scopes.walk(function) if isinstance(n, ast.Assign)]
  for _ in range(4):  # A few steps back along the assignments.
    more = {n.id for a in assigns if names_assigned(a) & read
            for n in _scopes.walk(a.value) if isinstance(n, ast.Name)}
    if more <= read:
      break
    read |= more
  return read
