"""Columns of a progressive network: one step per group in a loop, but
each column reads the outputs of the columns built before it (lateral
connections, `for tt in range(task): pre += matmul(h_pnn[tt][i], u)`),
never the reverse. Task `t`'s step trains its own column while the
earlier columns feed its output: they are frozen on purpose, not trained
by some other step of the same run (a GAN's halves, mutual learning and
ensembles read each other both ways, or not at all)."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import Step, _class_of


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


# Calls that apply a column's own weights to what they are given.
_APPLIED = {"matmul", "conv1d", "conv2d", "conv3d", "dense", "einsum"}


def column_steps(analysis: Analysis, steps: List[Step]
                 ) -> List[Tuple[ast.expr, Step]]:
  """The steps of a column class that train the column's own lists
  (`variables_to_update = self.W + self.b + self.U`) while the class
  applies its own weights to the outputs of the columns it is given
  (`tf.matmul(prevCols[kk].h[k], U)`, `h` being what each column makes):
  the earlier columns feed its output and no step of it trains them.
  Each with the list, where the finding is shown."""
  found: List[Tuple[ast.expr, Step]] = []
  for step in steps:
    info = _class_of(step.scope)
    own = _own_lists(step)
    if info is None or own is None:
      continue
    node = info.node
    lateral = analysis.once(f"progressive lateral {id(node)}",
                            lambda: _reads_columns(node))
    if lateral is True:
      found.append((own, step))
  return found


def _own_lists(step: Step) -> Optional[ast.expr]:
  """`self.W + self.b + self.U`, the step's list or the one value of the
  name it is given, when it joins only lists of the object itself."""
  chosen = step.var_list
  if isinstance(chosen, ast.Name):
    defs = step.scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else None
  if not isinstance(chosen, ast.BinOp):
    return None
  parts: List[ast.AST] = [chosen]
  for part in parts:
    if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Add):
      parts += [part.left, part.right]
    elif not (isinstance(part, ast.Attribute) and _names.dotted(
        part.value) == "self"):
      return None
  return chosen


def _reads_columns(node: ast.ClassDef) -> bool:
  """Whether the class applies weights (`tf.matmul`) to an attribute
  that it sets on itself, read from an element of a list it is given
  (`prevCols[kk].h[k]`): a column reading the columns before it."""
  made = {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
          and isinstance(n.ctx, ast.Store) and _names.dotted(n.value) == "self"}
  for call in ast.walk(node):
    if not isinstance(call, ast.Call) or _names.call_name(
        call) not in _APPLIED:
      continue
    for read in (n for arg in call.args for n in ast.walk(arg)):
      if isinstance(read, ast.Attribute) and read.attr in made and (
          isinstance(read.value, ast.Subscript)) and isinstance(
              read.value.value, ast.Name) and read.value.value.id != "self":
        return True
  return False
