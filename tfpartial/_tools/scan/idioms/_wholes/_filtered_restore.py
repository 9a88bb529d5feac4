"""What a restored list keeps when it is a comprehension filtering every
variable by a literal name (`{v: d[v] for v in d if v.find('MobilenetV2')
!= -1}`, `[v for v in tf.global_variables() if 'encoder' in v.name]`),
for `_restored.restores_scopes`: the positive name tests' literal roots,
and whether a value of the list filters nothing (the dict of every
variable that the filter is then read from). Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional, Set

from tfpartial._tools.scan import _names

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp,
                   ast.GeneratorExp)


def unfiltered(value: ast.AST) -> bool:
  """Whether `value` is a comprehension with no condition (every
  variable, keyed or listed).

  >>> unfiltered(ast.parse("{v.name: v for v in vs}").body[0].value)
  True
  >>> unfiltered(ast.parse("[v for v in vs if 'a' in v.name]").body[0].value)
  False
  """
  return isinstance(value, _COMPREHENSIONS) and not any(
      g.ifs for g in value.generators)


def kept_roots(value: ast.AST) -> Set[str]:
  """The first parts of the literal names a comprehension's conditions
  keep a variable by (`'x' in v.name`, `v.find('x') != -1`, `v.name.
  startswith('x')`); empty when any condition is of another form (a
  `not in` drops names: what it keeps is not written).

  >>> kept_roots(ast.parse(
  ...     "{v: d[v] for v in d if v.find('Mobile/a') != -1}").body[0].value)
  {'Mobile'}
  >>> kept_roots(ast.parse("[v for v in vs if 'x' not in v.name]"
  ...                      ).body[0].value)
  set()
  """
  if not isinstance(value, _COMPREHENSIONS):
    return set()
  tests = [t for g in value.generators for t in g.ifs]
  roots = [_kept(t) for t in tests]
  if not tests or any(r is None for r in roots):
    return set()
  return {r for r in roots if r}


def _kept(test: ast.expr) -> Optional[str]:
  """The root one positive name test keeps, or None."""
  literal = None
  if isinstance(test, ast.Compare) and len(test.ops) == 1:
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.In):
      literal = left
    elif isinstance(left, ast.Call) and _names.call_name(left) == "find" and (
        isinstance(op, ast.NotEq) and _is(right, -1) or isinstance(
            op, ast.GtE) and _is(right, 0)) and len(left.args) == 1:
      literal = left.args[0]
  elif isinstance(test, ast.Call) and _names.call_name(test) == (
      "startswith") and len(test.args) == 1:
    literal = test.args[0]
  if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
    root = literal.value.strip("/").split("/")[0]
    return root or None
  return None


def _is(node: ast.expr, number: int) -> bool:
  """Whether `node` is the literal `number` (`-1` is a unary minus)."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
    return _is(node.operand, -number)
  return isinstance(node, ast.Constant) and node.value == number and (
      not isinstance(node.value, bool))
