"""Columns of a progressive network: one step per group in a loop, but
each column reads the outputs of the columns built before it (lateral
connections, `for tt in range(task): pre += matmul(h_pnn[tt][i], u)`),
never the reverse. Task `t`'s step trains its own column while the
earlier columns feed its output: they are frozen on purpose, not trained
by some other step of the same run (a GAN's halves, mutual learning and
ensembles read each other both ways, or not at all)."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def columns(analysis: Analysis, scope: _scopes.Scope,
            var_list: Optional[ast.AST]) -> bool:
  """Whether `var_list` is one column of a list of groups (`groups[i]`)
  that the module fills column by column, each column reading only the
  columns before it.

  >>> tree = ast.parse(
  ...     "def col(self, h, task):\\n"
  ...     "    for tt in range(task):\\n"
  ...     "        self.tv[task].append(u)\\n"
  ...     "        h += mm(self.h_pnn[tt][0], u)\\n")
  >>> sorted(_fed_groups(tree))
  ['tv']
  """
  module = analysis.module(scope)
  if not isinstance(var_list, ast.Subscript) or module.tree is None:
    return False
  base = _last_name(var_list.value)
  tree = module.tree
  fed = analysis.once(f"progressive columns {id(module)}",
                      lambda: _fed_groups(tree))
  return base is not None and isinstance(fed, set) and base in fed


def _last_name(node: ast.AST) -> Optional[str]:
  """`tv` of `self.tv` or of `tv`."""
  if isinstance(node, ast.Attribute):
    return node.attr
  if isinstance(node, ast.Name):
    return node.id
  return None


def _fed_groups(tree: ast.AST) -> Set[str]:
  """The lists of groups (`tv` of `self.tv[task].append(w)`) filled
  under a loop over the columns before `task` (`for tt in
  range(task)`) that reads another list at `tt` (an earlier column's
  output)."""
  found: Set[str] = set()
  for loop in _scopes.walk(tree):
    if not isinstance(loop, ast.For):
      continue
    bound = _earlier(loop.iter)
    if bound is None or not isinstance(loop.target, ast.Name):
      continue
    earlier = loop.target.id
    filled: Set[str] = set()
    read: Set[str] = set()
    for node in (n for stmt in loop.body for n in _scopes.walk(stmt)):
      if not isinstance(node, ast.Subscript):
        continue
      index = node.slice
      name = _last_name(node.value)
      if not isinstance(index, ast.Name) or name is None:
        continue
      if index.id == bound:
        filled.add(name)
      elif index.id == earlier:
        read.add(name)
    # A column's own group, and an earlier column's output read beside.
    if read - filled:
      found |= filled
  return found


def _earlier(node: ast.AST) -> Optional[str]:
  """`task` of `range(task)`: the columns before `task`."""
  if isinstance(node, ast.Call) and _names.call_name(node) == "range" and (
      len(node.args) == 1) and isinstance(node.args[0], ast.Name):
    return node.args[0].id
  return None
