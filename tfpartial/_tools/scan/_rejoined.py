"""Whether a loop's `if`/`else` split of variables is put back together:
each arm adds to lists of its own (`shard_vars.append(gv[1])` under `if
gv[1] in sharded`, `replica_vars.append(gv[1])` under the `else`), and
one later list takes from both (`indexed.append((shard_idx[i], (g,
shard_vars[i])))` in one loop, `indexed.append((rep_idx[i], (g,
rep_vars[i])))` in the next), and that list, or what is made of it,
is given to a step or returned: the groups are handled apart (synced
another way) and every pair reaches the step. A split where only one
arm's lists go on, or whose joined list only feeds a summary beside the
step, still chooses variables."""

from __future__ import annotations

import ast
import weakref
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def both_arms_joined(guard: ast.expr, home: _scopes.Scope) -> bool:
  """Whether the `if` whose test is `guard` (or its negation, for the
  `else`) splits what a loop adds into lists that one list of `home`'s
  function later takes from, both arms' lists, and that list reaches a
  step or the function's return.

  >>> code = ("def f(pairs, chosen):\\n"
  ...         "  a, b, out = [], [], []\\n"
  ...         "  for p in pairs:\\n"
  ...         "    if p[1] in chosen:\\n"
  ...         "      a.append(p)\\n"
  ...         "    else:\\n"
  ...         "      b.append(p)\\n"
  ...         "  for p in a:\\n"
  ...         "    out.append(p)\\n"
  ...         "  for p in b:\\n"
  ...         "    out.append(p)\\n"
  ...         "  return out\\n")
  >>> module = _scopes.collect(ast.parse(code))
  >>> home = module.children[0]
  >>> test = [n for n in ast.walk(home.node) if isinstance(n, ast.If)][0]
  >>> both_arms_joined(test.test, home)
  True
  """
  known = _JOINED.get(guard)
  if known is None:
    known = _JOINED[guard] = _joined(guard, home)
  return known


# Per test (weakly: a scan's trees go when it ends); a loop's values ask
# of their `if` once each.
_JOINED: "weakref.WeakKeyDictionary[ast.AST, bool]" = (
    weakref.WeakKeyDictionary())


def _joined(guard: ast.expr, home: _scopes.Scope) -> bool:
  split = _split_at(guard, home.node)
  if split is None:
    return False
  yes = _scopes.added_to(split.body)
  no = _scopes.added_to(split.orelse)
  if not yes or not no or yes & no:
    return False
  inside = {id(n) for n in ast.walk(split)}
  taken: Dict[str, List[bool]] = {}
  for name, read in _additions(home.node, inside):
    if name in yes or name in no:
      continue
    seen = taken.setdefault(name, [False, False])
    seen[0] = seen[0] or bool(read & yes)
    seen[1] = seen[1] or bool(read & no)
  joined = {name for name, (a, b) in taken.items() if a and b}
  return bool(joined) and _reaches_step(joined, home.node)


def _reaches_step(joined: Set[str], root: ast.AST) -> bool:
  """Whether a list of `joined`, or one its items are carried on to (an
  assignment of it, `list(...)`, `+` or `extend` of it, a comprehension
  or `zip` over it), is given to a step (`apply_gradients(...)`,
  `minimize(...)`) or is what the function returns: a list reduced
  (`tf.add_n(norms)`), only summarised or returned beside the step puts
  nothing back. Each statement is asked again only when a name it reads
  joins, so a long chain costs its length."""
  nodes = list(ast.walk(root))
  flows: List[Tuple[List[str], ast.expr]] = []
  readers: Dict[str, List[int]] = {}
  for node in nodes:
    for targets, value in _flows(node):
      for name in _reads(value):
        readers.setdefault(name, []).append(len(flows))
      flows.append((targets, value))
  reach = set(joined)
  todo = list(joined)
  while todo:
    for index in readers.get(todo.pop(), ()):
      targets, value = flows[index]
      if _carries(value, reach):
        new = set(targets) - reach
        reach |= new
        todo.extend(new)
  return any(isinstance(node, ast.Return) and node.value is not None and (
      _carries(node.value, reach)) or isinstance(node, ast.Call) and (
          _names.call_name(node) in _STEPS) and any(
              _carries(a, reach) for a in [*node.args, *(
                  k.value for k in node.keywords)]) for node in nodes)


def _flows(node: ast.AST) -> Iterator[Tuple[List[str], ast.expr]]:
  """(the names bound, what they are bound from) of an assignment, a
  `for` (its targets from what it iterates), or an addition to a list."""
  targets: List[ast.expr] = []
  value: Optional[ast.expr] = None
  if isinstance(node, ast.Assign):
    targets, value = node.targets, node.value
  elif isinstance(node, (ast.AnnAssign, ast.For, ast.AsyncFor)):
    targets = [node.target]
    value = node.iter if isinstance(node, (ast.For, ast.AsyncFor)) else (
        node.value)
  if value is not None:
    yield [_names.dotted(n) or "" for t in targets for n in _bound(t)], value
  added = _added(node)
  if added is not None:
    yield [added[0]], added[1]


def _bound(target: ast.expr) -> Iterator[ast.expr]:
  """The names and attributes a target binds (`_, pairs = ...`)."""
  if isinstance(target, (ast.Tuple, ast.List)):
    for each in target.elts:
      yield from _bound(each)
  elif isinstance(target, ast.Starred):
    yield from _bound(target.value)
  elif isinstance(target, (ast.Name, ast.Attribute)):
    yield target


# The calls that hand on the items of what they are given.
_CARRIERS = {"list", "tuple", "sorted", "reversed", "zip", "enumerate",
             "chain", "identity_n"}


def _carries(value: ast.expr, reach: Set[str]) -> bool:
  """Whether `value` holds the items of a list of `reach`: the list, a
  slice of it, `list(...)`/`sorted(...)`/`zip(...)` of it, `a + b`, a
  comprehension over it or `[*a, *b]`; not a reduction of it nor a tuple
  that holds it beside other values."""
  if isinstance(value, (ast.Name, ast.Attribute)):
    return _names.dotted(value) in reach
  if isinstance(value, ast.Starred):
    return _carries(value.value, reach)
  if isinstance(value, ast.Subscript):
    return isinstance(value.slice, ast.Slice) and _carries(value.value, reach)
  if isinstance(value, ast.BinOp):
    return isinstance(value.op, ast.Add) and (
        _carries(value.left, reach) or _carries(value.right, reach))
  if isinstance(value, ast.Call):
    return _names.call_name(value) in _CARRIERS and any(
        _carries(a, reach) for a in value.args)
  if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
    return any(_carries(g.iter, reach) for g in value.generators)
  if isinstance(value, (ast.List, ast.Tuple)):
    return any(isinstance(e, ast.Starred) and _carries(e, reach)
               for e in value.elts)
  return False


# The calls a list of pairs or variables is trained by.
_STEPS = _names.TRAIN_STEPS | {"_apply_gradients", "apply_gradients"}


def _reads(node: ast.AST) -> Set[str]:
  return {_names.dotted(n) or "" for n in ast.walk(node)
          if isinstance(n, (ast.Name, ast.Attribute))} - {""}


def _split_at(guard: ast.expr, root: ast.AST) -> Optional[ast.If]:
  """The `if` with an `else` whose test is `guard` (or whose negation
  `guard` is), inside `root`."""
  test = guard.operand if isinstance(guard, ast.UnaryOp) and isinstance(
      guard.op, ast.Not) else guard
  for node in ast.walk(root):
    if isinstance(node, ast.If) and node.test is test and node.orelse:
      return node
  return None


def _additions(root: ast.AST, skipped: Set[int]
               ) -> Iterator[Tuple[str, Set[str]]]:
  """(the list a statement of `root` adds to, the names it reads in what
  it adds and in the loops around it), outside the nodes `skipped`."""
  yield from _walk(root, [], skipped)


def _walk(node: ast.AST, loops: List[ast.expr], skipped: Set[int]
          ) -> Iterator[Tuple[str, Set[str]]]:
  for child in ast.iter_child_nodes(node):
    if id(child) in skipped:
      continue
    if isinstance(child, (ast.For, ast.AsyncFor)):
      yield from _walk(child, loops + [child.iter], skipped)
      continue
    added = _added(child)
    if added is not None:
      read: Set[str] = set()
      for part in [added[1], *loops]:
        read |= {_names.dotted(n) or "" for n in ast.walk(part)
                 if isinstance(n, (ast.Name, ast.Attribute))}
      yield added[0], read - {""}
    yield from _walk(child, loops, skipped)


def _added(node: ast.AST) -> Optional[Tuple[str, ast.expr]]:
  """(the list, what is added) of `x.append(v)`, `x.extend(v)`, `x +=
  v`."""
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr in {
          "append", "extend", "insert"} and node.args:
    name = _names.dotted(node.func.value)
    return (name, node.args[-1]) if name else None
  if isinstance(node, ast.AugAssign):
    name = _names.dotted(node.target)
    return (name, node.value) if name else None
  return None
