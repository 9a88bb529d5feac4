"""The forward path from a step's own part to its loss through another
part: the loss reads an output (`self.outputs['x_enc']`, a name) that
the model computes in the other part's scope block from what the step's
own scope block made (f-AnoGAN's `Generator(Encoder(x))`: the encoder
trains through the generator). An output of the other part computed
from data alone (`outputs['x_']` of `z`, a target) is not on the
path."""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project
from tfpartial._tools.scan.idioms._runs import _stage_values

# Searches bounded: modules read for one pair, assignments followed.
_MODULES = 40
_BOUND = 200

# An output: a dict entry by its key (`"'x_enc'"`) or a plain name.
Outputs = Tuple[Set[str], Set[str]]


def _span(node: ast.AST) -> Tuple[int, int]:
  return getattr(node, "lineno", 0), getattr(node, "end_lineno", 0) or 0


def _assignments(function: ast.AST) -> Dict[str, List[Tuple[int, ast.expr]]]:
  found: Dict[str, List[Tuple[int, ast.expr]]] = {}
  for node in _scopes.walk(function):
    if isinstance(node, ast.Assign):
      for name in _stage_values.names_assigned(
          ast.Tuple(elts=node.targets, ctx=ast.Store())):
        found.setdefault(name, []).append((node.lineno, node.value))
  return found


def _from_blocks(value: ast.expr, line: int,
                 defs: Dict[str, List[Tuple[int, ast.expr]]],
                 spans: List[Tuple[int, int]]) -> bool:
  """Whether `value`, read at `line`, is computed (along the nearest
  assignment before each read) from what a block of `spans` assigns."""
  todo = [(value, line)]
  seen: Set[Tuple[str, int]] = set()
  while todo and len(seen) < _BOUND:
    node, at = todo.pop()
    for name in {n.id for n in _scopes.walk(node) if isinstance(
        n, ast.Name) and isinstance(n.ctx, ast.Load)}:
      earlier = [pair for pair in defs.get(name, []) if pair[0] < at]
      if not earlier or (name, at) in seen:
        continue
      seen.add((name, at))
      where, made = max(earlier, key=lambda pair: pair[0])
      if any(start <= where <= end for start, end in spans):
        return True
      todo.append((made, where))
  return False


def outputs(function: ast.AST, mine: Set[str], other: Set[str]) -> Outputs:
  """The keys and names that `function` assigns in a block of `other`
  from what its blocks of `mine` made."""
  built = _stage_values.scopes_built(function)
  spans = [_span(b.node) for b in built if b.scope in mine]
  keys: Set[str] = set()
  names: Set[str] = set()
  if not spans:
    return keys, names
  defs = _assignments(function)
  for block in (b for b in built if b.scope in other):
    for node in _scopes.walk(block.node):
      if isinstance(node, ast.Assign) and _from_blocks(
          node.value, node.lineno, defs, spans):
        for target in node.targets:
          key = _key(target)
          if key is not None:
            keys.add(key)
        names |= _stage_values.names_assigned(
            ast.Tuple(elts=node.targets, ctx=ast.Store()))
  return keys, names


def _key(node: ast.AST) -> Optional[str]:
  if isinstance(node, ast.Subscript) and isinstance(
      node.slice, ast.Constant) and isinstance(node.slice.value, str):
    return node.slice.value
  return None


def through(project: Project, loss: Iterable[ast.AST], mine: Set[str],
            other: Set[str], near: List[ast.AST],
            cache: Dict[Tuple[str, ...], Set[str]]) -> bool:
  """Whether the loss (the nodes it is computed from) reads an output of
  `other` computed from `mine`: a name of a function around the step,
  or a dict entry's key that a function of the project assigns."""
  mine = {s for s in mine if not s.startswith("=")}
  other = {s for s in other if not s.startswith("=")}
  if not mine or not other:
    return False
  read = list(loss)
  keys = {k for k in map(_key, read) if k is not None}
  names = {n.id for n in read if isinstance(n, ast.Name)}
  if names and any(outputs(f, mine, other)[1] & names for f in near):
    return True
  key = (*sorted(mine), "|", *sorted(other))
  if keys and key not in cache:
    cache[key] = {k for module in project.all_modules_with(
        [*mine, *other])[:_MODULES] for path in module.functions()
                  for k in outputs(path[-1], mine, other)[0]}
  return bool(keys & cache.get(key, set()))
