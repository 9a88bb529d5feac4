"""Parameters by their names: pairs of gradients and variables (`gvs`,
or a helper's parameter it reads as pairs whatever its name),
and variables by the optimizer API's contract: the `var_list` an
optimizer's `compute_gradients(loss, var_list=None)` or
`minimize` is given (a wrapper optimizer's override filtering what its
callers pass: `[v for v in var_list if scope in v.name]`), whoever the
callers are and whether the scan can follow them."""

from __future__ import annotations

import ast
import re

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels

# Parameters named for (gradient, variable) pairs, not one gradient.
_PAIRS = re.compile(r"(var|gvs|pairs)", re.I)
# The keywords by which TensorFlow's steps take the variables they train.
_NAMES = {"var_list", "variables_to_train"}


def widened(source: ast.AST, scope: _scopes.Scope, found: Labels) -> Labels:
  """`found` (what a comprehension iterates over), as variables where it
  is such a parameter of its function, read as given.

  >>> module = _scopes.collect(ast.parse("def f(loss, var_list): pass"))
  >>> scope = module.children[0]
  >>> sorted(widened(ast.Name("var_list"), scope, {"param": scope.node}))
  ['param', 'var']
  """
  if "var" in found or "param" not in found or not isinstance(
      source, ast.Name) or source.id not in _NAMES or (
          source.id not in scope.params):
    return found
  return {**found, "var": source}


def pairs_name(name: str) -> bool:
  """Whether a gradient parameter's name says pairs (`grads_and_vars`,
  `gvs`), not one gradient (`grad`).

  >>> pairs_name("gvs"), pairs_name("grad")
  (True, False)
  """
  return bool(_PAIRS.search(name))


def read_as_pairs(name: str, function: ast.AST) -> bool:
  """Whether `function` reads its parameter `name` as a list of pairs,
  whatever the name says: an item's gradient or variable (`grad[i][0]`),
  or each item unpacked in two (`for g, v in grad`).

  >>> tree = ast.parse("def f(grad):\\n  return [v for g, v in grad]")
  >>> read_as_pairs("grad", tree.body[0]), read_as_pairs("g", tree.body[0])
  (True, False)
  """
  def named(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == name

  for node in ast.walk(function):
    if isinstance(node, ast.Subscript) and isinstance(
        node.value, ast.Subscript) and named(node.value.value) and (
            isinstance(node.slice, ast.Constant)) and node.slice.value in (
                0, 1):
      return True
    if isinstance(node, (ast.For, ast.comprehension)) and named(
        node.iter) and isinstance(node.target, ast.Tuple) and len(
            node.target.elts) == 2:
      return True
  return False
