"""Variables chosen by their shape: `[v for v in tf.trainable_variables()
if v.shape[-1] == n_outputs]` keeps the output layers' kernels and
biases (the only ones of that width), `len(v.shape) == 1` the biases and
norms, as a test of `v.name` keeps a scope. A test comparing two shapes
(`g.shape == v.shape`) checks, it chooses nothing.
"""

from __future__ import annotations

import ast

_SIZES = {"ndims", "rank"}


def chooses_by_shape(node: ast.AST) -> bool:
  """Whether a condition compares one variable's shape (or a dimension
  or the rank of it) with something that is no shape.

  >>> [chooses_by_shape(ast.parse(test).body[0].value) for test in (
  ...     "v.shape[-1] == 3 * (5 + n)", "len(v.get_shape()) > 1",
  ...     "g.shape == v.shape")]
  [True, True, False]
  """
  return any(isinstance(item, ast.Compare) and _one_shape(item)
             for item in ast.walk(node))


def _one_shape(compare: ast.Compare) -> bool:
  """Whether exactly one side of `compare` reads a variable's shape."""
  sides = [compare.left, *compare.comparators]
  return sum(_reads_shape(side) for side in sides) == 1


def _reads_shape(node: ast.AST) -> bool:
  """Whether an expression reads a name's shape: `v.shape`,
  `v.get_shape()`, `v.shape.ndims`, `len(v.shape)`, `v.shape[-1]`."""
  for item in ast.walk(node):
    if isinstance(item, ast.Attribute) and (
        item.attr == "shape" or item.attr in _SIZES) and isinstance(
            _base(item.value), ast.Name):
      return True
    if isinstance(item, ast.Call) and isinstance(
        item.func, ast.Attribute) and item.func.attr == "get_shape":
      return True
  return False


def _base(node: ast.AST) -> ast.AST:
  """The name an attribute chain starts from (`v` of `v.shape`)."""
  while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
    node = node.func if isinstance(node, ast.Call) else node.value
  return node
