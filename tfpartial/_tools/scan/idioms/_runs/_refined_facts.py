"""What the refined-stage rule (`_refined_stage`) reads of one class, each
read once however many steps the class holds: the calls of its methods
unpacked into tuples, the op each step is kept in, the lists a step
trains by name, and what the sum of two outputs feeds in a method."""

from __future__ import annotations

import ast
import heapq
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, var_list_of)

# Searches bounded: statements of one method read for what a value feeds,
# and how far a list is followed through names, parameters and steps.
_BOUND = 400
_DEPTH = 4
# The values a name of a list may be read through: built of names.
_LISTS = (ast.BinOp, ast.List, ast.Tuple, ast.Name, ast.Attribute,
          ast.Starred)


def of(info: _scopes.ClassInfo) -> "ClassFacts":
  """The facts of `info`, read on the first question."""
  return info.home.once((ClassFacts, id(info.node), 0),
                        lambda: ClassFacts(info))


class ClassFacts:
  """One class as the rule reads it.

  Attributes:
    unpacked: Method name -> the calls `self.<method>(...)` of the class
      unpacked into a tuple, with the tuple and the caller's scope.
    made: The names each call's results are unpacked into (`G1, DiffMap,
      self.G_var1, self.G_var2 = Generator(...)`), with the method.
  """

  def __init__(self, info: _scopes.ClassInfo):
    self.unpacked: Dict[str, List[Tuple[ast.Call, ast.Tuple,
                                        _scopes.Scope]]] = {}
    self.made: List[Tuple[List[Optional[str]], _scopes.Scope]] = []
    for scope in info.methods.values():
      for node in scope.nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
            isinstance(node.targets[0], ast.Tuple)) and isinstance(
                node.value, ast.Call):
          self.made.append(([_names.dotted(e) for e in node.targets[0].elts],
                            scope))
          name = _names.dotted(node.value.func) or ""
          if name.startswith("self.") and name.count(".") == 1:
            self.unpacked.setdefault(name[len("self."):], []).append(
                (node.value, node.targets[0], scope))
    self._info = info
    # The names a call's results are unpacked into: (scope, local) and
    # attributes.
    self._tupled: Set[Tuple[int, str]] = set()
    self._tupled_attributes: Set[str] = set()
    for names, scope in self.made:
      for each in names:
        if each is not None and each.startswith("self."):
          self._tupled_attributes.add(each)
        elif each is not None:
          self._tupled.add((id(scope), each))
    self._parts: Dict[Tuple[int, int, int], Optional[Set[str]]] = {}
    self._assigned: Optional[Dict[str, List[Tuple[
        ast.expr, _scopes.Scope]]]] = None
    self._kept: Dict[int, Dict[int, ast.Assign]] = {}
    self._returned: Dict[int, Optional[List[Optional[str]]]] = {}
    self._flows: Dict[int, _Flow] = {}
    self._fed: Dict[Tuple[int, FrozenSet[str]], Set[str]] = {}

  def kept(self, scope: _scopes.Scope) -> Dict[int, ast.Assign]:
    """The one-target assignment each call of `scope` is a part of."""
    if id(scope) not in self._kept:
      self._kept[id(scope)] = {
          id(each): node for node in scope.nodes
          if isinstance(node, ast.Assign) and len(node.targets) == 1
          for each in ast.walk(node.value) if isinstance(each, ast.Call)}
    return self._kept[id(scope)]

  def returned(self, scope: _scopes.Scope) -> Optional[List[Optional[str]]]:
    """The names of the one tuple `scope` returns, else None."""
    if id(scope) not in self._returned:
      tuples = [node.value for node in scope.nodes
                if isinstance(node, ast.Return) and isinstance(
                    node.value, ast.Tuple)]
      self._returned[id(scope)] = [
          _names.dotted(e) for e in tuples[0].elts] if len(
              tuples) == 1 else None
    return self._returned[id(scope)]

  def arguments(self, scope: _scopes.Scope, param: str
                ) -> List[Tuple[ast.expr, _scopes.Scope]]:
    """What each caller in the class that unpacks the method's results
    passes for `param`, with the caller's scope, in call order; an empty
    list when a caller passes nothing for it."""
    params = [p for p in scope.params if p != "self"]
    if param not in params:
      return []
    found = [self.given(call, caller, params.index(param), param)
             for call, _, caller in self.unpacked.get(scope.name, [])]
    return [each for each in found if each is not None] if all(
        each is not None for each in found) else []

  @staticmethod
  def given(call: ast.Call, caller: _scopes.Scope, index: int, param: str
            ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
    """What one call passes for the parameter at `index`, `param`."""
    if index < len(call.args):
      return call.args[index], caller
    for keyword in call.keywords:
      if keyword.arg == param:
        return keyword.value, caller
    return None

  def parts(self, scope: _scopes.Scope, node: Optional[ast.AST],
            depth: int = _DEPTH) -> Optional[Set[str]]:
    """The lists, by name, a step's list `node` is made of (`self.G_var1
    + self.G_var2`, a name or a parameter holding them, with every call
    site's argument, the list of the gradients it applies); None for
    every variable (no list, a whole-model call) or a list not read to
    names (a filter of such a list, another call)."""
    key = id(scope), id(node), depth
    if key not in self._parts:
      self._parts[key] = self._read_parts(scope, node, depth)
    return self._parts[key]

  def _read_parts(self, scope: _scopes.Scope, node: Optional[ast.AST],
                  depth: int) -> Optional[Set[str]]:
    if node is None or depth == 0:
      return None
    if isinstance(node, ast.Starred):
      return self.parts(scope, node.value, depth)
    if isinstance(node, ast.Call) and _names.call_name(node) in STEPS:
      return self.parts(scope, var_list_of(node), depth - 1)
    if isinstance(node, ast.Name) and node.id in scope.params:
      given = self.arguments(scope, node.id)
      return self._joined([(value, caller) for value, caller in given],
                          depth - 1) if given else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
      pieces = [node.left, node.right]
    elif isinstance(node, (ast.List, ast.Tuple)):
      pieces = list(node.elts)
    else:
      name = _names.dotted(node)
      if name is None:
        return None
      held = self._held(scope, node, name, depth - 1)
      return {name} | held if held is not None else None
    return self._joined([(piece, scope) for piece in pieces], depth)

  def _held(self, scope: _scopes.Scope, node: ast.AST, name: str,
            depth: int) -> Optional[Set[str]]:
    """The lists a named list holds where each value it is assigned is
    built of names or by a step (`gv = self.G_var1 + self.G_var2`,
    `gvs = opt.compute_gradients(...)`), or filters such a list; none
    where it is one of the lists a call's results are unpacked into (a
    stage's own); None where a value may hold any variable (a call,
    `tf.trainable_variables()`, a filter of it) or none is seen."""
    if isinstance(node, ast.Name):
      values = [(value, scope)
                for value in _scopes.values_reaching(node, scope)]
    else:
      if self._assigned is None:
        self._assigned = self._info.attributes
      values = list(self._assigned.get(name, []))
    if values and all(isinstance(value, ast.Call) for value, _ in values) and (
        (id(scope), name) in self._tupled or name in self._tupled_attributes):
      return set()
    pieces: List[Tuple[ast.AST, _scopes.Scope]] = []
    for value, where in values:
      if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and len(
          value.generators) == 1:
        value = value.generators[0].iter
      if not (isinstance(value, _LISTS) or (isinstance(value, ast.Call) and (
          _names.call_name(value) in STEPS))):
        return None
      pieces.append((value, where))
    return self._joined(pieces, depth) if pieces else None

  def _joined(self, pieces: Sequence[Tuple[ast.AST, _scopes.Scope]],
              depth: int) -> Optional[Set[str]]:
    """The lists of every piece; None when one may hold every variable."""
    found: Set[str] = set()
    for piece, scope in pieces:
      each = self.parts(scope, piece, depth)
      if each is None:
        return None
      found |= each
    return found

  def fed(self, scope: _scopes.Scope, outputs: List[str]) -> Set[str]:
    """The names assigned the sum of the two `outputs` (`G2 = G1 +
    DiffMap`) in `scope`, and those computed from them after."""
    key = id(scope), frozenset(outputs)
    if key not in self._fed:
      if id(scope) not in self._flows:
        self._flows[id(scope)] = _Flow(scope)
      self._fed[key] = self._flows[id(scope)].fed(key[1])
    return self._fed[key]


class _Flow:
  """A method's assignments in order, read once: what each reads and
  assigns, who reads each name, and the two names each adds."""

  def __init__(self, scope: _scopes.Scope):
    nodes = sorted((n for n in scope.nodes if isinstance(
        n, (ast.Assign, ast.AugAssign))), key=_idiom.position)[:_BOUND]
    self.targets: List[List[str]] = []
    self.readers: Dict[str, List[int]] = {}
    self.sums: Dict[FrozenSet[Optional[str]], List[int]] = {}
    for index, node in enumerate(nodes):
      value = node.value
      for name in {_names.dotted(n) for n in ast.walk(value) if isinstance(
          n, (ast.Name, ast.Attribute))} - {"self", None}:
        assert name is not None
        self.readers.setdefault(name, []).append(index)
      if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        self.sums.setdefault(frozenset(
            {_names.dotted(value.left), _names.dotted(value.right)}),
                             []).append(index)
      targets = node.targets if isinstance(node, ast.Assign) else [
          node.target]
      self.targets.append([
          name for target in targets for element in (
              target.elts if isinstance(target, (ast.Tuple, ast.List))
              else [target])
          for name in [_names.dotted(element)] if name is not None])

  def fed(self, outputs: FrozenSet[str]) -> Set[str]:
    """What the assignments of the sum of `outputs` assign, and those
    of each later assignment reading a name assigned so before it: the
    statements read in order, each once."""
    waiting = list(self.sums.get(frozenset(outputs), []))
    heapq.heapify(waiting)
    seen: Set[int] = set()
    fed: Set[str] = set()
    while waiting:
      index = heapq.heappop(waiting)
      if index in seen:
        continue
      seen.add(index)
      for name in self.targets[index]:
        if name not in fed:
          fed.add(name)
          for reader in self.readers.get(name, []):
            if reader > index:
              heapq.heappush(waiting, reader)
    return fed
