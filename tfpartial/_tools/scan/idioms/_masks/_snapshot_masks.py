"""Masks a function of the project makes from a snapshot of the weights:
every value it returns holds NumPy comparisons of values read out of the
graph by a library's call (`w.eval()`, `sess.run(w)`, `get_weights()`;
a project's method of such a name is not one), each comparison keeping
the shape of what it reads (a name or a read-out, not a reduction such
as `v.max()`), joined elementwise by `+`, `*`, `&`, `|`: a 0/1 array
per weight, fixed once made (`[np.abs(w.eval()) > t for w in ws]`, or
`masks.append(mask)` of `(v <= low) + (v >= high)`); a mask keeping
every element (`np.ones(w.shape)`) may stand beside them."""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# A library's calls that read a variable's values out of the graph (a
# project's function of one of these names is not one).
_READ_OUTS = {"eval", "run", "numpy", "get_weights", "get_value"}


def makes_masks(inner: Optional[_scopes.Scope], analysis: Analysis
                 ) -> bool:
  """Whether every value `inner` returns holds only comparisons of values
  read out (`[np.abs(w.eval()) > t for w in ws]`, or a list appended
  `(v <= low) + (v >= high)`); found once per function."""
  if inner is None:
    return False
  known = analysis.once("held rounds: masks", dict)
  assert isinstance(known, dict)
  if id(inner.node) not in known:
    returns = [n.value for n in inner.nodes if isinstance(n, ast.Return)]
    elements = [e for r in returns if r is not None
                for e in _elements(r, inner, analysis)]
    compared = [e is not None and _compared(e, inner, analysis)
                for e in elements]
    known[id(inner.node)] = any(compared) and None not in returns and all(
        c or _ones(e) for c, e in zip(compared, elements))
  return bool(known[id(inner.node)])


def _elements(value: ast.expr, inner: _scopes.Scope, analysis: Analysis,
              depth: int = 3) -> List[Optional[ast.expr]]:
  """The masks a returned `value` holds, through names `depth` deep
  (None for one not known)."""
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
    return [value.elt]
  if not isinstance(value, ast.Name):
    return [value]
  if depth == 0:
    return [None]
  found: List[Optional[ast.expr]] = []
  for each in inner.defs.get(value.id, []):
    if isinstance(each.value, ast.List) and not each.value.elts:
      continue  # Filled by `append` (below).
    found += _elements(each.value, inner, analysis, depth - 1)
  for call in analysis.calls(inner):
    if isinstance(call.func, ast.Attribute) and isinstance(
        call.func.value, ast.Name) and call.func.value.id == value.id:
      found += [e for a in call.args for e in _elements(
          a, inner, analysis, depth - 1)] if call.func.attr == "append" and (
              len(call.args) == 1) else [None]
  return found


def _compared(node: ast.expr, inner: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether `node` is a NumPy comparison of values read out (or such
  comparisons joined elementwise)."""
  if isinstance(node, ast.BinOp) and isinstance(
      node.op, (ast.Add, ast.Mult, ast.BitAnd, ast.BitOr)):
    return _compared(node.left, inner, analysis) and _compared(
        node.right, inner, analysis)
  if not isinstance(node, ast.Compare):
    return False
  flow = analysis.flow
  return any(_whole(o, inner) and any(
      isinstance(n, ast.Call) and _names.call_name(n) in _READ_OUTS
      and isinstance(n.func, ast.Attribute)
      and id(flow.callee(n, inner)) not in flow.functions
      for n in _scopes.made_from(o, inner))
             for o in [node.left, *node.comparators])


def _ones(node: Optional[ast.expr]) -> bool:
  """Whether `node` is a mask keeping every element (`np.ones(w.shape)`,
  `np.ones_like(w)`)."""
  return isinstance(node, ast.Call) and _names.call_name(node) in (
      "ones", "ones_like")


def _whole(operand: ast.expr, inner: _scopes.Scope) -> bool:
  """Whether `operand` keeps the shape of what it reads: a read-out
  (`w.eval()`), its `abs`, or a name every binding of which is one, an
  `np.array` of one or an element of a name (`for v in values`); not a
  reduction (`v.max()`, `s = v.max()`)."""
  if isinstance(operand, ast.Call) and _names.call_name(operand) == "abs" and (
      len(operand.args) == 1):
    operand = operand.args[0]
  if isinstance(operand, ast.Call):
    return _names.call_name(operand) in _READ_OUTS
  defs = inner.defs.get(operand.id, []) if isinstance(
      operand, ast.Name) else []
  return bool(defs) and all(
      isinstance(d.value, ast.Name) or isinstance(d.value, ast.Call) and (
          _names.call_name(d.value) in _READ_OUTS | {"array", "abs"})
      for d in defs)
