"""Stages one after another: a function fetching one step's op only in
a loop and another step's op only in a later loop, with no loop around
both (f-AnoGAN's WGAN epochs, then its encoder's epochs). The earlier
step runs apart from the later one and before it; a GAN's halves share
one loop, and a later loop that trains a group again (TimeGAN's joint
training after its pre-training) is not before the step."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _chosen_stage

_LOOPS = (ast.For, ast.While, ast.AsyncFor)


def _loops_of(function: ast.AST) -> List[ast.AST]:
  return [n for n in _scopes.walk(function) if isinstance(n, _LOOPS)]


def _reads(name: str, function: ast.AST) -> List[ast.AST]:
  """Where `function` reads a step's op by the name it is kept in."""
  return [n for n in _scopes.walk(function) if isinstance(
      n, (ast.Name, ast.Attribute)) and isinstance(
          getattr(n, "ctx", None), ast.Load) and _names.dotted(n) == name]


def _inside(node: ast.AST, loop: ast.AST) -> bool:
  return any(each is node for each in _scopes.walk(loop))


def _places(step: ast.Call, scope: _scopes.Scope
            ) -> Tuple[Optional[str], List[ast.AST]]:
  """The name a step's op is kept in and the functions that may fetch
  it: its own, and its class's methods for a `self.` attribute."""
  name = _chosen_stage._kept_as(step, scope.node)
  functions = [scope.node]
  if name is not None and name.startswith("self.") and scope.cls is not None:
    functions += [m for m in scope.cls.node.body if isinstance(
        m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m is not scope.node]
  return name, functions


def before(earlier: Tuple[ast.Call, _scopes.Scope],
           later: Tuple[ast.Call, _scopes.Scope],
           cache: Dict[int, List[ast.AST]]) -> bool:
  """Whether one function fetches the op of `earlier` only in loops that
  end before the first loop fetching the op of `later`, and no loop
  fetches both."""
  (first, first_scope), (second, second_scope) = earlier, later
  mine, functions = _places(first, first_scope)
  theirs, _ = _places(second, second_scope)
  if mine is None or theirs is None or mine == theirs or (
      first_scope.node is not second_scope.node):
    return False
  for function in functions:
    one, other = _reads(mine, function), _reads(theirs, function)
    if not one or not other:
      continue
    if id(function) not in cache:
      cache[id(function)] = _loops_of(function)
    loops = cache[id(function)]
    if not all(any(_inside(n, loop) for loop in loops)
               for n in [*one, *other]):
      return False  # A fetch outside every loop: no stage is seen.
    if any(any(_inside(n, loop) for n in one) and any(
        _inside(n, loop) for n in other) for loop in loops):
      return False  # One loop fetches both: they alternate.
    last = max(getattr(n, "lineno", 0) for n in one)
    return last < min(getattr(n, "lineno", 0) for n in other)
  return False


def any_before(steps: List[Tuple[ast.Call, _scopes.Scope]],
               cache: Dict[int, List[ast.AST]]) -> bool:
  """Whether some step of `steps` runs before another (`before`)."""
  return any(before(one, other, cache) for one in steps for other in steps
             if one[0] is not other[0])
