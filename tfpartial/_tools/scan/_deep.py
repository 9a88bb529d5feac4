"""Expressions nested deeper than the checks read: a generated table or a
long flat sum (`1 + 1 + ... + 1`, one `BinOp` inside the next) nests as
deep as it is long, and Python's parser takes a few thousand terms, far
past the stack of a check that walks an expression by recursion.

Each expression is read to `LIMIT` levels below its statement; a part
that nests deeper is one unknown value (`...`) at its place. No freeze is written that deep, and every check stays within the
stack on whatever else the file holds; the cut is one iterative pass,
linear in the tree.
"""

from __future__ import annotations

import ast
from typing import List, Tuple

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
    for field, value in ast.iter_fields(node):
      if isinstance(value, list):
        for index, child in enumerate(value):
          if isinstance(child, ast.AST):
            if _deeper(child, depth, limit):
              value[index] = _unknown(child)
              replaced += 1
            else:
              todo.append((child, _level(child, depth)))
      elif isinstance(value, ast.AST):
        if _deeper(value, depth, limit):
          setattr(node, field, _unknown(value))
          replaced += 1
        else:
          todo.append((value, _level(value, depth)))
  return replaced


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


def _unknown(node: ast.AST) -> ast.expr:
  unknown = ast.Constant(value=...)
  return ast.copy_location(unknown, node)
