"""Whether a loop's `if`/`else` split of variables is put back together:
each arm adds to lists of its own (`shard_vars.append(gv[1])` under `if
gv[1] in sharded`, `replica_vars.append(gv[1])` under the `else`), and
one later list takes from both (`indexed.append((shard_idx[i], (g,
shard_vars[i])))` in one loop, `indexed.append((rep_idx[i], (g,
rep_vars[i])))` in the next): the groups are handled apart (synced
another way) and every pair reaches the step. A split where only one
arm's lists go on still chooses variables."""

from __future__ import annotations

import ast
import weakref
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def both_arms_joined(guard: ast.expr, home: _scopes.Scope) -> bool:
  """Whether the `if` whose test is `guard` (or its negation, for the
  `else`) splits what a loop adds into lists that one list of `home`'s
  function later takes from, both arms' lists.

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
  yes = _scopes._added_to(split.body)  # pylint: disable=protected-access
  no = _scopes._added_to(split.orelse)  # pylint: disable=protected-access
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
  return any(a and b for a, b in taken.values())


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
