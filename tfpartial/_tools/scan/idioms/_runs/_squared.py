"""Gradients computed only to be squared: an EWC Fisher estimate
(`g = tape.gradient(loss, shared)`, then `fisher + tf.square(g)` for
each) measures how much each variable matters and trains nothing, so
the variables its list leaves out are left out of no step. Gradients
read any other way (applied, returned, kept, divided by the Fisher)
keep their step."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# The calls that compute gradients outside an optimizer (whose own
# `compute_gradients` is the first half of its step).
_GRADIENTS = {"gradients", "gradient"}
_SQUARES = {"square"}


def only_squared(call: ast.Call, scope: _scopes.Scope,
                 analysis: Analysis) -> bool:
  """Whether every read of the names `call`'s gradients are assigned to
  in `scope`'s function squares them, directly or through a loop over
  them (`for i, (f, g) in enumerate(zip(fisher, grads))`,
  `[g ** 2 for g in grads]`)."""
  if _names.call_name(call) not in _GRADIENTS:
    return False
  names = {name for name, defs in scope.defs.items() for d in defs
           if d.value is call}
  if not names:
    return False
  reads = analysis.once(f"squared:{id(scope)}", lambda: _reads(scope))
  assert isinstance(reads, _Reads)
  pending: Set[str] = set(names)
  done: Set[str] = set()
  while pending:
    name = pending.pop()
    done.add(name)
    if not reads.loads.get(name):
      return False  # Read elsewhere, or nothing here: not this rule's.
    for read in reads.loads[name]:
      if id(read) in reads.squared:
        continue
      bound = reads.loops.get(id(read))
      if bound is None:
        return False  # Applied, returned, kept, divided: a step's.
      pending |= bound - done
  return True


@dataclasses.dataclass
class _Reads:
  """A function's reads of names: which are squared, which loops bind."""
  loads: Dict[str, List[ast.Name]]
  squared: Set[int]
  loops: Dict[int, Set[str]]  # A read iterated -> the names it binds.


def _reads(scope: _scopes.Scope) -> _Reads:
  """Walks `scope`'s function once."""
  found = _Reads({}, set(), {})
  for node in _scopes.walk(scope.node):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
      found.loads.setdefault(node.id, []).append(node)
    _mark(node, found.squared, found.loops)
  return found


def _mark(node: ast.AST, squared: Set[int],
          loops: Dict[int, Set[str]]) -> None:
  """Records the names `node` squares and the loops it opens over a
  name (the names each element binds)."""
  if isinstance(node, ast.Call) and _names.call_name(node) in _SQUARES:
    squared.update(id(a) for a in node.args if isinstance(a, ast.Name))
  elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and (
      isinstance(node.right, ast.Constant) and node.right.value == 2):
    if isinstance(node.left, ast.Name):
      squared.add(id(node.left))
  elif isinstance(node, (ast.For, ast.comprehension)):
    _bind(node.iter, node.target, loops)


def _bind(iterated: ast.expr, target: ast.expr,
          loops: Dict[int, Set[str]]) -> None:
  """Maps each name `iterated` walks (`xs`, `zip(a, xs)`,
  `enumerate(...)`) to the names of `target` its elements bind."""
  if isinstance(iterated, ast.Name) and isinstance(target, ast.Name):
    loops[id(iterated)] = {target.id}
    return
  if not isinstance(iterated, ast.Call) or iterated.keywords:
    return
  name = _names.call_name(iterated)
  parts = _parts(target)
  if name == "enumerate" and len(iterated.args) == 1 and parts and len(
      parts) == 2:
    _bind(iterated.args[0], parts[1], loops)
  elif name == "zip" and parts and len(parts) == len(iterated.args):
    for each, bound in zip(iterated.args, parts):
      _bind(each, bound, loops)


def _parts(target: ast.expr) -> Optional[List[ast.expr]]:
  """The elements of a tuple or list target, else None."""
  if isinstance(target, (ast.Tuple, ast.List)):
    return list(target.elts)
  return None
