"""Whether a blend written into a variable is a running average: `b * m
+ (1 - b) * g` whose coefficient `b` is a number (a literal, or a
parameter or an attribute set from one that defaults to a number: a
hand-written optimizer's `beta1=0.9`, a decay). A number weighs every
element of the variable the same: all of them move toward `g` and none
is kept, so the write is an optimizer's moment or a moving average, not
saved values put into the elements a mask chooses. Part of the writes
`write-back` and `weight-remask` read."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._masks import _numbers


def by_number(value: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether every `1 - b` of `value` takes a number `b` off one."""
  found = [n.right for n in _scopes.walk(value) if isinstance(
      n, ast.BinOp) and isinstance(n.op, ast.Sub) and isinstance(
          n.left, ast.Constant) and n.left.value == 1]
  return bool(found) and all(_numbers.number(b, scope) for b in found)
