"""Stages one after another: a function fetching one step's op only in
a loop and another step's op only in a later loop, with no loop around
both (f-AnoGAN's WGAN epochs, then its encoder's epochs). The earlier
step runs apart from the later one and before it; a GAN's halves share
one loop, and a later loop that trains a group again (TimeGAN's joint
training after its pre-training) is not before the step."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_LOOPS = (ast.For, ast.While, ast.AsyncFor)
# Searches bounded: at most this many fetched ops are ordered in a home.
_FETCHED = 12

Step = Tuple[ast.Call, _scopes.Scope]


class Order:
  """What a function keeps its steps' ops in, where it reads them and
  which nodes each of its loops holds, each read once per function."""

  def __init__(self) -> None:
    self._kept: Dict[int, Dict[int, str]] = {}
    self._reads: Dict[int, Dict[str, List[ast.AST]]] = {}
    self._loops: Dict[int, List[Set[int]]] = {}
    self._around: Dict[int, Dict[int, FrozenSet[int]]] = {}

  def kept(self, step: Step) -> Optional[str]:
    """The name a step's op is kept in (`optim_enc = ...minimize(...)`,
    `self.g_op = ...`) in its function."""
    call, scope = step
    if id(scope.node) not in self._kept:
      found: Dict[int, str] = {}
      for node in _scopes.walk(scope.node):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
          name = _names.dotted(node.targets[0])
          if name is not None and (name.count(".") == 0 or (
              name.count(".") == 1 and name.startswith("self."))):
            found.update((id(c), name) for c in _scopes.walk(node.value)
                         if isinstance(c, ast.Call))
      self._kept[id(scope.node)] = found
    return self._kept[id(scope.node)].get(id(call))

  def reads(self, function: ast.AST) -> Dict[str, List[ast.AST]]:
    """Where `function` reads each name and `self.` attribute."""
    if id(function) not in self._reads:
      found: Dict[str, List[ast.AST]] = {}
      for n in _scopes.walk(function):
        if isinstance(n, (ast.Name, ast.Attribute)) and isinstance(
            getattr(n, "ctx", None), ast.Load):
          name = _names.dotted(n)
          if name is not None:
            found.setdefault(name, []).append(n)
      self._reads[id(function)] = found
    return self._reads[id(function)]

  def around(self, function: ast.AST) -> Dict[int, FrozenSet[int]]:
    """The loops of `function` around each of its nodes, by the loop's
    place in `loops`: each fetch looked up, not searched for in every
    loop (quadratic in the stages of one function)."""
    if id(function) not in self._around:
      found: Dict[int, Set[int]] = {}
      for k, loop in enumerate(self.loops(function)):
        for each in loop:
          found.setdefault(each, set()).add(k)
      self._around[id(function)] = {
          each: frozenset(ks) for each, ks in found.items()}
    return self._around[id(function)]

  def loops(self, function: ast.AST) -> List[Set[int]]:
    """The nodes inside each loop of `function`, by identity."""
    if id(function) not in self._loops:
      self._loops[id(function)] = [
          {id(each) for each in _scopes.walk(n)}
          for n in _scopes.walk(function) if isinstance(n, _LOOPS)]
    return self._loops[id(function)]


def _functions(name: str, scope: _scopes.Scope) -> List[ast.AST]:
  """The functions that may fetch an op kept in `name`: its own, and
  its class's methods for a `self.` attribute."""
  found = [scope.node]
  if name.startswith("self.") and scope.cls is not None:
    found += [m for m in scope.cls.node.body if isinstance(
        m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m is not scope.node]
  return found


def before(earlier: Step, later: Step, order: Order) -> bool:
  """Whether one function fetches the op of `earlier` only in loops that
  end before the first loop fetching the op of `later`, and no loop
  fetches both."""
  mine, theirs = order.kept(earlier), order.kept(later)
  if mine is None or theirs is None or mine == theirs or (
      earlier[1].node is not later[1].node):
    return False
  for function in _functions(mine, earlier[1]):
    read = order.reads(function)
    one, other = read.get(mine, []), read.get(theirs, [])
    if not one or not other:
      continue
    around = order.around(function)
    if not all(around.get(id(n)) for n in [*one, *other]):
      return False  # A fetch outside every loop: no stage is seen.
    if _in_loops(one, around) & _in_loops(other, around):
      return False  # One loop fetches both: they alternate.
    last = max(getattr(n, "lineno", 0) for n in one)
    return last < min(getattr(n, "lineno", 0) for n in other)
  return False


def _in_loops(nodes: List[ast.AST], around: Dict[int, FrozenSet[int]]
              ) -> FrozenSet[int]:
  """The loops (by their place in the function) around any of `nodes`."""
  return frozenset().union(*(around.get(id(n), frozenset()) for n in nodes))


def any_before(steps: List[Step], order: Order) -> bool:
  """Whether some step of `steps` runs before another (`before`): only
  steps whose op their function reads are ordered, a few at most."""
  fetched = [s for s in steps if _fetched(s, order)]
  if len(fetched) > _FETCHED:
    return False
  return any(before(one, other, order) for one in fetched
             for other in fetched if one[0] is not other[0])


def _fetched(step: Step, order: Order) -> bool:
  name = order.kept(step)
  return name is not None and any(
      name in order.reads(f) for f in _functions(name, step[1]))
