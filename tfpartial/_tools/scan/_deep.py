"""Expressions nested deeper than the checks read: a generated table or a
long flat sum (`1 + 1 + ... + 1`, one `BinOp` inside the next) nests as
deep as it is long, and Python's parser takes a few thousand terms, far
past the stack of a check that walks an expression by recursion.

Each expression is read to `LIMIT` levels below its statement; a part
that nests deeper is one unknown value (`...`) at its place. No freeze
is written that deep, and every check stays within the stack on whatever
else the file holds; the cut is one iterative pass, linear in the tree
(about 6% of a scan of the project's own tree, measured by its review).

Two expressions cut at the same place compare equal by their text
(`ast.unparse` gives `... + 1` for both): a check that compares texts
reads them as one. A placeholder is marked (`holds_cut`): a port never
rewrites a statement holding one (`TooDeep`), since its text is gone.
"""

from __future__ import annotations

import ast
from typing import List, Tuple

from tfpartial._tools.scan import _scopes

# Levels of an expression below its statement that the checks read; real
# code nests a few dozen at most.
LIMIT = 100


def cut(tree: ast.AST, limit: int = LIMIT) -> int:
  """Replace, in place, each expression more than `limit` levels below its
  statement with `...` at its position; the number replaced.

  >>> tree = ast.parse("x = " + " + ".join(["1"] * 5))
  >>> cut(tree, 2)
  1
  >>> ast.unparse(tree)
  'x = ... + 1 + 1'
  >>> cut(ast.parse("y = a + b"), 2)
  0
  """
  replaced = 0
  todo: List[Tuple[ast.AST, int]] = [(tree, 0)]
  while todo:
    node, depth = todo.pop()
    for field in _scopes.node_fields(type(node)):
      value = getattr(node, field, None)
      if isinstance(value, list):
        for index, child in enumerate(value):
          if isinstance(child, ast.AST) and not _short(child, depth, limit):
            if _deeper(child, depth, limit):
              value[index] = _unknown(child)
              replaced += 1
            else:
              todo.append((child, _level(child, depth)))
      elif isinstance(value, ast.AST) and not _short(value, depth, limit):
        if _deeper(value, depth, limit):
          setattr(node, field, _unknown(value))
          replaced += 1
        else:
          todo.append((value, _level(value, depth)))
  return replaced


def _short(node: ast.AST, depth: int, limit: int) -> bool:
  """Whether `node` is too short to nest past the limit: an expression
  on one line nests at most one level per character (an operator, a
  bracket, a dot), so one of fewer characters than the levels left
  needs no reading (most of a file: the pass stays cheap). Any other
  node on one line (a statement, a keyword `a=...`, a parameter) holds
  only such expressions, each a level or more below it within fewer
  characters (its `=`, its keywords): one shorter than the limit needs
  no reading either (most statements of a file, each keyword of a call
  over many lines: the pass reads the few long ones and the blocks). A
  mark (`Load`, `+`) is no level and holds nothing: never read. A
  definition's span starts at its `def` or `class`: its decorators,
  on the lines above, are read."""
  if isinstance(node, _MARKS):
    return True
  if getattr(node, "decorator_list", None):
    return False
  start = getattr(node, "lineno", None)
  end = getattr(node, "end_lineno", None)
  width = (getattr(node, "end_col_offset", None) or 0) - getattr(
      node, "col_offset", 0)
  return start is not None and start == end and (
      width + _MARGIN < limit - depth)


# Nodes that share their text with a child (an f-string's parts) nest a
# few levels within no more characters.
_MARGIN = 8


def _level(node: ast.AST, depth: int) -> int:
  """The level of `node` below its statement (a statement is level 0; a
  keyword or a comprehension inside an expression is a level of it)."""
  return 0 if isinstance(node, ast.stmt) else depth + 1


def _deeper(node: ast.AST, depth: int, limit: int) -> bool:
  """An expression past the limit that nests further (a leaf there, a
  name or a number, is kept)."""
  return isinstance(node, ast.expr) and depth + 1 > limit and any(
      not isinstance(child, _MARKS) for child in ast.iter_child_nodes(node))


# The operator and context marks of a node: never a level of their own.
_MARKS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


_MARK = "tfpartial_cut"


class TooDeep(ValueError):
  """A port asked for the text of a cut expression."""

  def __init__(self) -> None:
    super().__init__("port by hand: the expression is too deep to rewrite")


def holds_cut(node: ast.AST) -> bool:
  """Whether `node` holds a placeholder `cut` put in.

  >>> tree = ast.parse("x = " + " + ".join(["1"] * 5))
  >>> holds_cut(tree), cut(tree, 2), holds_cut(tree)
  (False, 1, True)
  """
  return any(getattr(each, _MARK, False) for each in ast.walk(node))


def _unknown(node: ast.AST) -> ast.expr:
  unknown = ast.Constant(value=...)
  setattr(unknown, _MARK, True)
  return ast.copy_location(unknown, node)
