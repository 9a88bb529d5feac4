"""What a stage's loss runs through its class's own methods: the lists of
variables a class makes by its own constructor (`self.u_w, self.u_b =
init_net(layers)`) as what marks a net, and the values a method of the
class returns (`self.net_f(x)` returns `u_x - self.net_p(terms)`, where
`u = self.net_u(x)`) as what a loss that calls it is computed from.

A stage's loss is rarely written in one place: a physics-informed model
builds its residual in one method from the solution net another method
runs, and trains the residual's net apart from the solution's. Reading
the methods a loss calls tells what the loss runs."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Module, Project

# Searches bounded: a method calls at most this many others, and this
# many modules are read for the loops that call a pair of methods.
_DEPTH = 8
_MODULES = 40


def made_by_call(name: str, value: ast.expr) -> bool:
  """Whether `name` is an attribute of the object holding what a call
  makes (`self.u_w, self.u_b = init_net(layers)`): the attribute itself
  marks that net's variables where the model runs."""
  if not name.startswith("self.") or not isinstance(value, ast.Call):
    return False
  maker = _names.dotted(value.func) or ""  # Not `tf.placeholder(...)`.
  return "." not in maker or maker.startswith("self.") and (
      maker.count(".") == 1)


def methods(home: ast.AST) -> Dict[str, ast.AST]:
  """The methods of a class by name (a module's functions, for a
  module), none for a function."""
  if not isinstance(home, (ast.ClassDef, ast.Module)):
    return {}
  return {node.name: node for node in home.body if isinstance(
      node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _own_method(call: ast.AST, own: Dict[str, ast.AST]) -> Optional[ast.AST]:
  """The method of the class a call `self.m(...)` runs, or None."""
  if not isinstance(call, ast.Call) or not isinstance(
      call.func, ast.Attribute) or _names.dotted(call.func.value) != "self":
    return None
  return own.get(call.func.attr)


def returned(call: ast.AST, own: Dict[str, ast.AST]) -> List[ast.expr]:
  """What the method a call of the class's own method returns."""
  method = _own_method(call, own)
  if method is None:
    return []
  return [node.value for node in _scopes.walk(method) if isinstance(
      node, ast.Return) and node.value is not None]


def _read(method: ast.AST) -> Iterator[str]:
  for node in _scopes.walk(method):
    if isinstance(node, ast.Attribute) and isinstance(
        node.value, ast.Name) and node.value.id == "self" and isinstance(
            node.ctx, ast.Load):
      yield f"self.{node.attr}"


def runs_named(call: ast.AST, own: Dict[str, ast.AST], names: Set[str]
               ) -> bool:
  """Whether a call of the class's own method reads, itself or through
  the methods it calls, one of `names` (`self.net_p(terms)` reads
  `self.p_w`)."""
  todo = [_own_method(call, own)]
  seen: Set[int] = set()
  while todo and len(seen) < _DEPTH:
    method = todo.pop()
    if method is None or id(method) in seen:
      continue
    seen.add(id(method))
    if names & set(_read(method)):
      return True
    todo.extend(_own_method(node, own) for node in _scopes.walk(method))
  return False


def spans(own: Dict[str, ast.AST]) -> List[Tuple[int, int]]:
  """The lines each method spans."""
  return [(getattr(m, "lineno", 0), getattr(m, "end_lineno", 0) or 0)
          for m in own.values()]


def same_method(spanned: List[Tuple[int, int]], one: int, other: int
                ) -> bool:
  """Whether two lines of a class are in one method, or neither is in
  any (a local name of one method is not another's)."""
  def method(line: int) -> Optional[Tuple[int, int]]:
    return next((span for span in spanned if span[0] <= line <= span[1]),
                None)
  return method(one) == method(other)


class Together:
  """Which loops of the project call which methods, read once per
  analysis, and the pairs of methods asked about."""

  def __init__(self, project: Project):
    self.project = project
    self.loops: Dict[int, List[Set[str]]] = {}  # A module -> its loops'.
    self.pairs: Dict[Tuple[FrozenSet[str], FrozenSet[str]], bool] = {}

  def called_together(self, one: Set[str], other: Set[str]) -> bool:
    """Whether a loop of the project calls a method named in `one` and
    one named in `other` (`for _ in range(n): gan.train_d();
    gan.train_g()`): the steps these fetch alternate in one run, a GAN's
    halves."""
    key = (frozenset(one), frozenset(other))
    if key not in self.pairs:
      self.pairs[key] = any(
          called & one and called & other
          for module in self.project.all_modules_with(
              [*one, *other])[:_MODULES]
          for called in self._loops(module))
    return self.pairs[key]

  def _loops(self, module: Module) -> List[Set[str]]:
    if id(module) not in self.loops:
      tree = module.tree
      self.loops[id(module)] = [
          {n.func.attr for n in ast.walk(loop) if isinstance(
              n, ast.Call) and isinstance(n.func, ast.Attribute)}
          for loop in (ast.walk(tree) if tree is not None else ())
          if isinstance(loop, (ast.For, ast.While, ast.AsyncFor))]
    return self.loops[id(module)]


def own_of(scope: _scopes.Scope) -> Dict[str, ast.AST]:
  """The functions a step's code shares its names with: its class's
  methods, else its module's functions (each one's locals its own)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if place.cls is not None:
      return methods(place.cls.node)
    if place.parent is None:
      return methods(place.node)
    place = place.parent
  return {}
