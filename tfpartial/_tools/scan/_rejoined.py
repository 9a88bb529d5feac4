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
  """Whether a list of `joined`, or one made from it (an assignment or
  an addition that reads it, followed to a fixed point), is given to a
  step (`apply_gradients(...)`, `minimize(...)`) or returned: a list
  only summarised or normed beside the step puts nothing back."""
  reach = set(joined)
  nodes = list(ast.walk(root))
  grown = True
  while grown:
    grown = False
    for node in nodes:
      made: List[str] = []
      if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and (
          node.value is not None and _reads(node.value) & reach):
        targets = node.targets if isinstance(node, ast.Assign) else [
            node.target]
        made = [_names.dotted(n) or "" for t in targets for n in ast.walk(t)
                if isinstance(n, (ast.Name, ast.Attribute))]
      added = _added(node)
      if added is not None and _reads(added[1]) & reach:
        made.append(added[0])
      new = set(made) - reach - {""}
      if new:
        reach |= new
        grown = True
  return any(isinstance(node, ast.Return) and node.value is not None and (
      _reads(node.value) & reach) or isinstance(node, ast.Call) and (
          _names.call_name(node) in _STEPS) and any(
              _reads(a) & reach for a in [*node.args, *(
                  k.value for k in node.keywords)]) for node in nodes)


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
