"""A parameter that holds variables by the optimizer API's contract: the
`var_list` an optimizer's `compute_gradients(loss, var_list=None)` or
`minimize` is given (a wrapper optimizer's override filtering what its
callers pass: `[v for v in var_list if scope in v.name]`), whoever the
callers are and whether the scan can follow them."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels

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
