"""A sparse gradient's rows kept by their ids: `keep = tf.where(g.indices
>= n_frozen)[:, 0]` and `tf.IndexedSlices(tf.gather(g.values, keep),
tf.gather(g.indices, keep), g.dense_shape)` drops the rows of the frozen
ids, as `tf.boolean_mask(g.values, g.indices >= n)` does. A gather by
indices that no test of the gradient's ids chose (a batch's rows, a
permutation) drops nothing; scattered back into a tensor of zeros
(`tf.scatter_nd(ids, tf.gather(g, ids), tf.shape(g))`) it drops every
row it did not gather; a slice of a gradient padded back to its shape
with zeros (`tf.pad(g[10:], [[10, 0], [0, 0]])`) zeroes the rows it cut;
`tf.sparse.mask(g, ids)` drops a sparse gradient's slices of those ids;
slices built of a dense gradient's gathered rows
(`tf.IndexedSlices([tf.gather(g, i)], [i])`) leave every other row out.
"""

from __future__ import annotations

import ast
from typing import List

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def drops_rows(name: str, args: List[ast.AST], scope: _scopes.Scope
               ) -> bool:
  """Whether `name(*args)` keeps some rows of its first argument by a
  mask (`boolean_mask(x, m)`) or by ids a test chose (`by_ids`)."""
  return name == "boolean_mask" and len(args) >= 2 or by_ids(
      name, args, scope)


def by_ids(name: str, args: List[ast.AST], scope: _scopes.Scope) -> bool:
  """Whether `name(*args)` gathers rows chosen by a test of a sparse
  gradient's ids (`tf.where(g.indices >= n)`), there or through a local
  name."""
  if name != "gather" or len(args) < 2:
    return False
  chosen = _assigned_once(args[1], scope)
  return any(isinstance(node, ast.Call) and _names.call_name(node) == "where"
             and len(node.args) == 1 and isinstance(node.args[0], ast.Compare)
             and any(isinstance(n, ast.Attribute) and n.attr == "indices"
                     for n in ast.walk(node.args[0]))
             for node in ast.walk(chosen))


def scattered_back(name: str, args: List[ast.AST], scope: _scopes.Scope
                   ) -> bool:
  """Whether `name(*args)` scatters gathered rows into zeros
  (`tf.scatter_nd(ids, tf.gather(g, ids), shape)`): every row not
  gathered is zero. Scattering a sparse gradient's own values
  (`scatter_nd(g.indices, g.values, ...)`) densifies it, dropping
  nothing."""
  if name != "scatter_nd" or len(args) != 3:
    return False
  updates = _assigned_once(args[1], scope)
  return isinstance(updates, ast.Call) and _names.call_name(updates) in {
      "gather", "gather_nd"}


def gathered_slices(name: str, args: List[ast.AST], scope: _scopes.Scope
                    ) -> bool:
  """Whether `name(*args)` builds sparse slices from rows gathered out of
  a dense tensor (`tf.IndexedSlices([tf.gather(g, i)], [i])`,
  `tf.IndexedSlices(tf.gather(g, ids), ids, shape)`): every row not
  gathered gets nothing. Rows gathered from a sparse gradient's own
  values (`tf.gather(g.values, order)`) keep whatever they hold."""
  if name != "IndexedSlices" or len(args) < 2:
    return False
  values = _assigned_once(args[0], scope)
  parts = values.elts if isinstance(values, (ast.List, ast.Tuple)) else [
      values]
  gathers = [_assigned_once(p, scope) for p in parts]
  return bool(gathers) and all(
      isinstance(g, ast.Call) and _names.call_name(g) in {
          "gather", "gather_nd"} and g.args and not (
              isinstance(g.args[0], ast.Attribute) and (
                  g.args[0].attr == "values")) for g in gathers)


def _assigned_once(node: ast.AST, scope: _scopes.Scope) -> ast.AST:
  """What a local name holds when it is assigned once, else `node` (a
  name assigned twice is no call, and walks to nothing)."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) == 1:
      return defs[0].value
  return node


def padded_back(name: str, args: List[ast.AST]) -> bool:
  """Whether `name(*args)` pads a slice back with zeros (`tf.pad(g[10:],
  [[10, 0], [0, 0]])`): the rows the slice cut are zero."""
  if name != "pad" or len(args) < 2 or not isinstance(args[0], ast.Subscript):
    return False
  index = args[0].slice
  parts = index.elts if isinstance(index, ast.Tuple) else [index]
  return any(isinstance(p, ast.Slice) for p in parts)


def sparse_mask(node: ast.Call, args: List[ast.AST]) -> bool:
  """Whether `node` is `tf.sparse.mask(slices, ids)` (TF1's
  `tf.sparse_mask`): the slices of those ids dropped."""
  spelled = _names.dotted(node.func) or ""
  return len(args) == 2 and (spelled.endswith("sparse.mask") or (
      spelled.split(".")[-1] == "sparse_mask"))
