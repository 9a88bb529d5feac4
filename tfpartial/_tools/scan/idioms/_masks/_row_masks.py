"""A table's looked-up rows multiplied by a lookup, with the same ids, into
a fixed 0/1 column over its rows (hasky's `embedding_lookup(emb, ids) *
embedding_lookup(mask2d(emb), ids)`, `mask2d` joining `tf.zeros([1, 1])`
and `tf.ones([V - 1, 1])`): the product is `embedding_lookup(emb * mask,
ids)`, so every read of a row whose mask is 0 is multiplied by 0 and that
row never trains. Counted only where the branch runs (as `_rows` counts
a join).

Not this: a mask computed from the ids (`tf.sign(ids)`, `ids != 0`) or
from lengths, a mask of positions (padding, loss, attention); a column
looked up by other ids; a column that is not made of constants with some
zeros (a trainable gate)."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._calls import joined_parts
from tfpartial._tools.scan.idioms._masks import _masked_weights
from tfpartial._tools.scan.idioms._masks import _rows

_LOOKUPS = {"embedding_lookup", "gather"}
_ZEROS = {"zeros", "zeros_like"}


def row_masks(analysis: Analysis
              ) -> List[Tuple[ast.expr, _scopes.Scope, ast.expr]]:
  """(the product, its scope, the table) of each table whose looked-up
  rows are multiplied by the same lookup into a fixed row mask, where its
  branch runs."""
  found: List[Tuple[ast.expr, _scopes.Scope, ast.expr]] = []
  project = analysis.project
  for module in project.all_modules_with(("embedding_lookup", "gather"),
                                         _two_lookups):
    if project.parsed(module) is None:
      continue
    for scope in analysis.scopes_with(module, ("multiply", "*")):
      for node in scope.nodes:
        pair = None if isinstance(node, ast.AugAssign) else (
            _masked_weights.product(node))  # A lookup is not assigned.
        if pair is None:
          continue
        table = _masked_table(analysis, pair, scope)
        if table is not None and isinstance(node, ast.expr) and (
            _rows.branch_runs(analysis, node, scope)):
          found.append((node, scope, table))
  return found


def _two_lookups(module: _project.Module) -> bool:
  """Whether a module's text may hold the form: two lookups, a mask (read
  before it is parsed)."""
  text = module.source.text
  return text.count("embedding_lookup(") + text.count("gather(") >= 2 and (
      "concat" in text or "mask" in text)


def _masked_table(analysis: Analysis, pair: Tuple[ast.expr, ast.expr],
                  scope: _scopes.Scope) -> Optional[ast.expr]:
  """The table one factor looks up when the other looks up a fixed row
  mask by the same ids, the table a variable that trains (or a helper's
  parameter: a table handed in to be looked up)."""
  first, second = (_lookup(p, scope) for p in pair)
  if first is None or second is None or ast.dump(first[1]) != ast.dump(
      second[1]):
    return None
  for (table, _), (mask, _) in ((first, second), (second, first)):
    if _row_mask(analysis, mask, scope) and _trains(analysis, table, scope):
      return table
  return None


def _lookup(node: ast.expr, scope: _scopes.Scope
            ) -> Optional[Tuple[ast.expr, ast.expr]]:
  """(table, ids) of a lookup, or of the name the read sees bound to
  one."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    reaching = scope.reaching(node.id, node)
    if len(reaching) != 1:
      return None
    node = defs[reaching[0]].value
  if not isinstance(node, ast.Call) or _names.call_name(
      node) not in _LOOKUPS or len(node.args) < 2:
    return None
  return node.args[0], node.args[1]


def _row_mask(analysis: Analysis, mask: ast.expr, scope: _scopes.Scope,
              depth: int = 0) -> bool:
  """Whether `mask` is a join of constants, some of them zeros (or a name
  bound to one, or a call of the project's function returning one)."""
  if depth > 2:
    return False
  if isinstance(mask, ast.Name):
    defs = scope.defs.get(mask.id, [])
    return len(defs) == 1 and _row_mask(analysis, defs[0].value, scope,
                                        depth + 1)
  if not isinstance(mask, ast.Call):
    return False
  if _names.call_name(mask) in {"concat", "concat_v2", "concatenate"}:
    parts = joined_parts(mask) or []
    return bool(parts) and all(_rows.filled(p, scope) for p in parts) and (
        any(isinstance(p, ast.Call) and _names.call_name(p) in _ZEROS
            for p in parts))
  function = analysis.flow.callee(mask, scope)
  known = analysis.flow.functions.get(id(function))
  inner = known[1].scope_of(known[0]) if known is not None else None
  if inner is None:
    return False
  returned = [n.value for n in inner.nodes
              if isinstance(n, ast.Return) and n.value is not None]
  return len(returned) == 1 and _row_mask(analysis, returned[0], inner,
                                          depth + 1)


def _trains(analysis: Analysis, table: ast.expr,
            scope: _scopes.Scope) -> bool:
  """Whether the table is a variable that trains, or a parameter of the
  function (not a constant nor a non-trainable variable)."""
  if _rows.trained_variable(analysis, table, scope):
    return True
  labels = analysis.flow.labels(table, scope)
  return isinstance(table, ast.Name) and table.id in scope.params and (
      "param" in labels) and not {"shadow", "const"} & set(labels)
