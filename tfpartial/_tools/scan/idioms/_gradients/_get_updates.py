"""A Keras 2 optimizer's `get_updates(loss, params)` override masking the
gradients it computes (`grads = [g * self.masks[p.name] ...]`) before it
writes each update with `K.update(p, new_p)` (or `update_sub`,
`update_add`, `assign`): the masked elements get no update from the
gradient. A factor made by a comparison (`K.cast(iterations > warmup)`),
or by a comparing op of the step count (an accumulating optimizer's
`K.cast(K.equal((self.iterations + 1) % n, 0))`), is a schedule of
every element, not a mask; a comparing op that reads a weight, a
gradient or a mask too (a threshold that grows with the step) makes a
mask, and so does any other multiplied factor that reads a mask or
compares positions (`m * flag` of `m = self.masks[p.name]`).
"""

from __future__ import annotations

import ast
import itertools
import re
from typing import Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels

# Keras 2 backend's writes, and a variable's own.
_WRITES = {"update", "update_sub", "update_add", "assign", "assign_sub",
           "assign_add"}


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(labels of the masked update, the method, the write) of each write
  in a `get_updates` method of masked gradients."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  for scope in analysis.functions_named(("get_updates",)):
    if scope.cls is None or analysis.module(scope).is_test:
      continue
    for call in analysis.calls(scope):
      if _names.call_name(call) not in _WRITES or len(call.args) != 2:
        continue
      labels = analysis.flow.labels(call.args[-1], scope)
      mask = labels.get("masked")
      if "grad" in labels and isinstance(mask, ast.expr) and not (
          _schedule(mask, scope)):
        found.append((labels, scope, call))
        break  # One finding per method: the mask, not every write.
  return found


def _schedule(mask: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether the multiplied factors of `mask` (through the local names
  it reads, two deep) hold a comparison of the step count and nothing
  that picks elements: no mask read (`self.masks[p.name]`), no
  comparison of positions or weights (`K.arange(n) >= 100`). The
  gradient, the rate and the settings multiply every element alike."""
  factors = list(_factors(mask, scope))
  return any(_compares(f, scope) for f in factors) and not any(
      _scopes.found_through_names(f, scope, lambda item: _picks(item, scope))
      for f in factors)


def _factors(node: ast.expr, scope: _scopes.Scope,
             depth: int = 2) -> Iterator[ast.expr]:
  """The multiplied (or divided) factors of `node`, a local name's
  through what it is bound to, `depth` names deep."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult,
                                                          ast.Div)):
    yield from _factors(node.left, scope, depth)
    yield from _factors(node.right, scope, depth)
    return
  defs = scope.defs.get(node.id, []) if isinstance(node, ast.Name) else []
  if depth and defs and all(d.value is not None for d in defs):
    for d in defs:
      assert d.value is not None
      yield from _factors(d.value, scope, depth - 1)
    return
  yield node


def _picks(item: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `item` reads a mask or compares elements."""
  if isinstance(item, ast.Attribute) and isinstance(
      item.value, ast.Name) and item.value.id == "self":
    return "mask" in item.attr.lower()
  if isinstance(item, ast.Compare):
    return any(isinstance(n, ast.Call) and _names.call_name(n) in (
        "arange", "range") for n in ast.walk(item))
  return _compares_elements(item, scope)


def _compares(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` compares values, itself or through the local names
  it reads (`warm = K.cast(self.iterations > 100)`), and no comparing op
  in it reads a weight or a mask (`K.not_equal(self.masks[p.name] *
  warm, 0)`); a membership test (`p.name in self.masks`) picks
  variables, it compares no values."""
  return _scopes.found_through_names(
      node, scope, lambda item: _compares_values(item, scope)) and not (
          _scopes.found_through_names(
              node, scope, lambda item: _compares_elements(item, scope)))


# Ops comparing values element by element.
_COMPARING = {"equal", "not_equal", "greater", "greater_equal", "less",
              "less_equal"}


def _compares_values(item: ast.AST, scope: _scopes.Scope) -> bool:
  if isinstance(item, ast.Call):
    return _names.call_name(item) in _COMPARING and _of_the_step(
        item, scope)
  return isinstance(item, ast.Compare) and not all(isinstance(op, (
      ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in item.ops)


_DTYPE = re.compile(r"(b?float|u?int|complex)(8|16|32|64|128)?|bool|double|half")


def _compares_elements(item: ast.AST, scope: _scopes.Scope) -> bool:
  return isinstance(item, ast.Call) and _names.call_name(
      item) in _COMPARING and not _of_the_step(item, scope)


def _of_the_step(call: ast.Call, scope: Optional[_scopes.Scope] = None,
                 depth: int = 2) -> bool:
  """Whether the comparing op `call` reads the step count and nothing
  but it, numbers and the optimizer's settings (`K.equal((self.iterations
  + 1) % self.accum_iters, 0)`): one value for every element. A weight,
  a gradient or a mask read (`K.greater(K.abs(p), self.thresh *
  self.iterations)`) makes it a mask that changes with the step. A
  local name the method binds only to such values (`t = self.iterations
  + 1`) reads the step count too.

  >>> at = lambda text: ast.parse(text).body[0].value
  >>> _of_the_step(at("K.equal(self.iterations % self.n, K.cast(1, 'int64'))"))
  True
  >>> _of_the_step(at("K.greater(K.abs(p), self.t * self.iterations)"))
  False
  """
  return _reads_the_step(
      [*call.args, *(k.value for k in call.keywords)], scope, depth)


def _reads_the_step(values: List[ast.expr], scope: Optional[_scopes.Scope],
                    depth: int) -> bool:
  """Whether `values` read the step count and nothing but it, numbers,
  settings and local names bound only to such values (`depth` deep)."""
  read = False
  for operand in values:
    for part in _operand_parts(operand):
      if isinstance(part, ast.Name) and scope is not None and depth:
        defs = scope.defs.get(part.id, [])
        if defs and all(d.value is not None and _reads_the_step(
            [d.value], scope, depth - 1) for d in defs):
          read = True
          continue
      if isinstance(part, ast.Attribute) and isinstance(
          part.value, ast.Name) and part.value.id == "self":
        if "mask" in part.attr.lower():
          return False
        read |= part.attr == "iterations"
      elif isinstance(part, ast.Attribute) and _DTYPE.fullmatch(part.attr):
        continue  # `tf.float32`: a dtype to cast to.
      elif isinstance(part, (ast.Name, ast.Subscript, ast.Attribute)):
        return False  # A weight, a gradient, an entry, a local value.
  return read


def _operand_parts(node: ast.AST) -> Iterator[ast.AST]:
  """The nodes of `node` that hold values: `self.x` whole, a call's
  arguments but not the function it calls (`K.cast`)."""
  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
    yield node
    return
  if isinstance(node, ast.Call):
    yield from itertools.chain.from_iterable(_operand_parts(a) for a in [
        *node.args, *(k.value for k in node.keywords)])
    return
  yield node
  for child in ast.iter_child_nodes(node):
    yield from _operand_parts(child)
