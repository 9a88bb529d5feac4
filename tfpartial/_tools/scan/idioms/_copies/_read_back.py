"""Saved values blended into a weight through the local names of a
method, the weight read out first: `now = K.get_value(w); kept = saved *
m; rest = (1 - m) * now; K.set_value(w, kept + rest)` (Incremental
Network Quantisation's layer, called after each batch: the quantised
elements keep their saved values while the others train). The spelled
form (`w.assign(m * saved + (1 - m) * w)`) is `_writes._blended_in`.

Not this: a sum of the weight read out and another network's values (a
soft update: no complement of one mask), the weight's own values masked
(a re-mask: nothing saved).

A copy the object holds (`self.saved`) and saves again after each write
(`self.saved = new`) is a shadow of the variable kept beside it, even as
NumPy values: `shadow-variable`, not a snapshot taken once."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._copies import _put_back

# What reads a variable's values out: a snapshot of it.
_READS = {"get_value", "numpy", "eval", "read_value", "run"}


def blended(target: ast.AST, value: ast.AST, scope: _scopes.Scope
            ) -> Optional[ast.expr]:
  """`s` of `m * s + (1 - m) * now` (either order, through the names
  the method assigns once) written into the weight `now` was read
  from."""
  mine = ast.unparse(target)
  total = _one_value(value, scope)
  if not isinstance(total, ast.BinOp) or not isinstance(total.op, ast.Add):
    return None
  terms = [_factors(_one_value(t, scope)) for t in (total.left, total.right)]
  for index, pair in enumerate(terms):
    other = terms[1 - index]
    own = [f for f in pair if _reads(f, mine, scope)]
    if len(pair) != 2 or len(other) != 2 or len(own) != 1:
      continue
    mask = ast.unparse(next(f for f in pair if f is not own[0]))
    for kept, saved in ((other[0], other[1]), (other[1], other[0])):
      if _put_back.complements(mask, ast.unparse(kept)) and not (
          _names.is_zero(saved) or _reads(saved, mine, scope)):
        return saved
  return None


def read_out(kept: Optional[ast.expr], target: ast.AST, value: ast.AST,
             scope: _scopes.Scope) -> bool:
  """Whether `kept`, the saved values a write puts into some elements,
  was found by `blended`: the rest is the weight read out, not spelled."""
  return kept is not None and kept is blended(target, value, scope)


def _one_value(node: ast.AST, scope: _scopes.Scope) -> ast.AST:
  """What a local name is assigned, when it is assigned once."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) == 1 and defs[0].value is not None:
      return defs[0].value
  return node


def _factors(node: ast.AST) -> List[ast.expr]:
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
    return [node.left, node.right]
  return []


def _reads(node: ast.expr, mine: str, scope: _scopes.Scope) -> bool:
  """Whether `node` is the weight, or a name of its values read out
  (`K.get_value(w)`, `w.numpy()`, `sess.run(w)`)."""
  if ast.unparse(node) == mine:
    return True
  value = _one_value(node, scope)
  if not isinstance(value, ast.Call) or _names.call_name(value) not in (
      _READS):
    return False
  read = value.args[0] if value.args else getattr(value.func, "value", None)
  return read is not None and ast.unparse(read) == mine


def held(saved: ast.AST, call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `saved` is an attribute of `self` that the writing method
  assigns again after the write (`self.saved = new`)."""
  spelled = _names.dotted(saved)
  if spelled is None or not spelled.startswith("self."):
    return False
  return any(isinstance(n, ast.Assign) and n.lineno > call.lineno and any(
      _names.dotted(t) == spelled for t in n.targets) for n in scope.nodes)
