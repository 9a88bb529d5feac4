"""A part of an object left out of the list its tape step trains.

A workflow object holds parts (`self.nip`, `self.codec`, `self.fan`,
each an object of its own with its variables), builds the list it
optimises from some of them (`self._parameters = []`, then
`self._parameters.extend(self.fan.parameters)`, and `if 'nip' in
trainable: self._parameters.extend(self.nip.parameters)`), and a method
differentiates that list (`tape.gradient(loss, self._parameters)`)
while the tape runs the left-out part upstream of a listed one
(`y = self.nip.process(x)`, then, through the class's methods,
`self.fan.process(...)` of what `y` made). Where that part is restored
from pretrained weights (`self.nip.load_model(dirname)`, `self.codec =
codec.restore(dirname)`) and no other step of the class trains it, the
list freezes it: on the path where the `if` that adds it fails, or on
every path where nothing adds it.

Not this: a part every path adds, a part another step of the class
trains (a GAN's other half), a part not loaded (a random network), a
part whose output feeds no listed part (a teacher or a target network
only compared with the trained part's output in the loss), a part run
only outside the tape. Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _class_of)
from tfpartial._tools.scan.idioms._wholes._frozen_backbone import (
    _tape_body)

# Reading an object's weights back from disk (Keras' and TF1's calls).
_LOADS = {"load_weights", "load_model", "restore"}
# Adding a part's variables to a list in place.
_ADDS = {"extend", "append"}
# The label of a finding's left-out part (`self.nip`, as read there).
PART = "left-out part"


@dataclasses.dataclass
class _Parts:
  """What a class's methods do with its parts, read once per class."""

  # `self.X` -> (part, what adds it, the test of the `if` that adds it
  # with no `else`, or None).
  lists: Dict[str, List[Tuple[str, ast.expr, Optional[ast.expr]]]] = (
      dataclasses.field(default_factory=dict))
  # The `self.X` assigned anything but an empty list.
  other: Set[str] = dataclasses.field(default_factory=set)
  # The parts read back from disk.
  loaded: Set[str] = dataclasses.field(default_factory=set)
  # Method -> the parts it calls (`self.nip.process(x)`) and the methods
  # of the class it calls (`self.run_workflow(x)`).
  calls: Dict[str, Set[str]] = dataclasses.field(default_factory=dict)
  methods: Dict[str, Set[str]] = dataclasses.field(default_factory=dict)
  # Method -> (kept part, part it reads the output of) pairs: the
  # listed part's call reads, through the method's names, what a call
  # of the other part made.
  feeds: Dict[str, Set[Tuple[str, str]]] = dataclasses.field(
      default_factory=dict)


def left_out_part(analysis: Analysis, step: Step, every: Sequence[Step]
                  ) -> Optional[Tuple[ast.expr, ast.expr]]:
  """Where the list of `step` leaves out a loaded part of its object
  that the tape runs into a listed part (the test of the `if` that adds
  it, or the first place the list is added to), with the part as a read
  of it (`self.nip`); None otherwise."""
  listed = step.var_list
  if _names.call_name(step.call) != "gradient" or not _self_attr(listed):
    return None
  assert isinstance(listed, ast.Attribute)
  info = _class_of(step.scope)
  if info is None:
    return None
  parts = analysis.once(f"object parts {id(info.node)}",
                        lambda: _read(info.node))
  assert isinstance(parts, _Parts)
  added = parts.lists.get(listed.attr)
  if not added or listed.attr in parts.other:
    return None
  tape = _tape_body(step)
  if tape is None:
    return None
  kept = {part for part, _, test in added if test is None}
  ran, fed = _run_in(tape, parts)
  trained = _trained_elsewhere(analysis, step, every, parts, listed.attr)
  for part in sorted(parts.loaded - kept - trained):
    if part in ran and any(pair in fed for pair in (
        (k, part) for k in kept)):
      tests = [test for each, _, test in added
               if each == part and test is not None]
      node: ast.expr = tests[0] if tests else added[0][1]
      read = ast.copy_location(ast.Attribute(
          ast.copy_location(ast.Name("self", ast.Load()), node), part,
          ast.Load()), node)
      return node, read
  return None


def _self_attr(node: Optional[ast.AST]) -> bool:
  return isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self"


def _part_of(node: ast.AST) -> Optional[str]:
  """`nip` of `self.nip.x` (an attribute of an attribute of `self`)."""
  if isinstance(node, ast.Attribute) and _self_attr(node.value):
    assert isinstance(node.value, ast.Attribute)
    return node.value.attr
  return None


def _read(cls: ast.ClassDef) -> _Parts:
  """What the methods of `cls` do with its parts (one walk)."""
  parts = _Parts()
  for method in cls.body:
    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
      _read_body(method.body, None, parts)
      _read_method(method, parts)
  return parts


def _read_body(body: List[ast.stmt], test: Optional[ast.expr],
               parts: _Parts) -> None:
  """Lists built from parts in `body`, each addition with the test of
  the innermost `if` without an `else` around it."""
  for statement in body:
    if isinstance(statement, ast.If):
      inner = statement.test if not statement.orelse else test
      _read_body(statement.body, inner, parts)
      _read_body(statement.orelse, test, parts)
      continue
    if isinstance(statement, (ast.For, ast.While, ast.With, ast.Try)):
      for block in ("body", "orelse", "finalbody"):
        _read_body(getattr(statement, block, []), test, parts)
      for handler in getattr(statement, "handlers", []):
        _read_body(handler.body, test, parts)
      continue
    _read_statement(statement, test, parts)


def _read_statement(statement: ast.stmt, test: Optional[ast.expr],
                    parts: _Parts) -> None:
  """One statement's additions to, and assignments of, a `self.X`."""
  if isinstance(statement, ast.Expr) and isinstance(
      statement.value, ast.Call) and isinstance(
          statement.value.func, ast.Attribute) and (
              statement.value.func.attr in _ADDS) and _self_attr(
                  statement.value.func.value):
    target = statement.value.func.value
    assert isinstance(target, ast.Attribute)
    for argument in statement.value.args:
      part = _part_of(argument)
      if part is not None:
        parts.lists.setdefault(target.attr, []).append(
            (part, statement.value, test))
      else:
        parts.other.add(target.attr)
  elif isinstance(statement, ast.AugAssign) and _self_attr(statement.target):
    assert isinstance(statement.target, ast.Attribute)
    part = _part_of(statement.value)
    if part is not None:
      parts.lists.setdefault(statement.target.attr, []).append(
          (part, statement.value, test))
    else:
      parts.other.add(statement.target.attr)
  elif isinstance(statement, ast.Assign):
    for target in statement.targets:
      if _self_attr(target) and not (isinstance(
          statement.value, ast.List) and not statement.value.elts):
        assert isinstance(target, ast.Attribute)
        parts.other.add(target.attr)
        if isinstance(statement.value, ast.Call) and (
            _names.call_name(statement.value) in _LOADS):
          parts.loaded.add(target.attr)  # `self.codec = restore(d)`.


def _read_method(method: ast.AST, parts: _Parts) -> None:
  """The parts a method calls and loads, the methods of the class it
  calls, and which listed part reads which part's output in it."""
  name = getattr(method, "name", "")
  calls = parts.calls.setdefault(name, set())
  own = parts.methods.setdefault(name, set())
  for node in ast.walk(method):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
      part = _part_of(node.func)
      if part is not None:
        calls.add(part)
        if node.func.attr in _LOADS:
          parts.loaded.add(part)
      elif _self_attr(node.func):
        own.add(node.func.attr)
  parts.feeds[name] = _feeds([method])


def _feeds(nodes: List[ast.AST]) -> Set[Tuple[str, str]]:
  """The (part, other part) pairs of `nodes`: a call of the first reads,
  through the names `nodes` assign, what a call of the second made."""
  made: Dict[str, Set[str]] = {}  # A local name -> parts and names read.
  uses: List[Tuple[str, Set[str]]] = []  # A part's call -> what it reads.
  for each in nodes:
    for node in ast.walk(each):
      if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        part = _part_of(node.func)
        if part is not None:
          uses.append((part, _reads(node.args + [
              k.value for k in node.keywords])))
      if isinstance(node, ast.Assign):
        read = _reads([node.value])
        for target in node.targets:
          for name in ast.walk(target):
            if isinstance(name, ast.Name):
              made.setdefault(name.id, set()).update(read)
  pairs: Set[Tuple[str, str]] = set()
  for part, read in uses:
    for source in _closure(read, made):
      if source.startswith("self.") and source[5:] != part:
        pairs.add((part, source[5:]))
  return pairs


def _reads(nodes: List[ast.expr]) -> Set[str]:
  """The local names `nodes` read, and `self.<part>` for each part whose
  method they call."""
  found: Set[str] = set()
  for value in nodes:
    for node in ast.walk(value):
      if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        found.add(node.id)
      elif isinstance(node, ast.Call) and isinstance(
          node.func, ast.Attribute):
        part = _part_of(node.func)
        if part is not None:
          found.add(f"self.{part}")
  return found


def _closure(read: Set[str], made: Dict[str, Set[str]]) -> Set[str]:
  """`read`, and what the assignments of the names in it read, in turn
  (each name followed once)."""
  found = set(read)
  queue = list(read)
  while queue:
    for each in made.get(queue.pop(), ()):
      if each not in found:
        found.add(each)
        queue.append(each)
  return found


def _run_in(tape: List[ast.stmt], parts: _Parts
            ) -> Tuple[Set[str], Set[Tuple[str, str]]]:
  """The parts the tape's statements run, directly or through the
  class's methods they call (each method once), and the pairs of a part
  fed by another in them (in the tape's own statements: what the tape
  reads of a part run before it carries no gradient to it)."""
  ran: Set[str] = set()
  fed: Set[Tuple[str, str]] = _feeds(list(tape))
  queue: List[str] = []
  for statement in tape:
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        part = _part_of(node.func)
        if part is not None:
          ran.add(part)
        elif _self_attr(node.func):
          queue.append(node.func.attr)
  seen: Set[str] = set()
  while queue:
    name = queue.pop()
    if name in seen or name not in parts.calls:
      continue
    seen.add(name)
    ran |= parts.calls[name]
    fed |= parts.feeds[name]
    queue += parts.methods[name]
  return ran, fed


def _trained_elsewhere(analysis: Analysis, step: Step,
                       every: Sequence[Step], parts: _Parts,
                       listed: str) -> Set[str]:
  """The parts another step of the same class trains: a list of another
  `self.X` that adds them, or a list reading `self.part.` itself (the
  steps grouped by class once per scan)."""
  info = _class_of(step.scope)
  by_class = analysis.once(f"object parts steps {id(every)}",
                           lambda: _by_class(every))
  assert isinstance(by_class, dict)
  found: Set[str] = set()
  for other in by_class.get(id(info), ()):
    if other is step or other.var_list is None:
      continue
    var = other.var_list
    if _self_attr(var):
      assert isinstance(var, ast.Attribute)
      if var.attr == listed:
        continue
      found |= {part for part, _, _ in parts.lists.get(var.attr, ())}
    found |= {part for node in ast.walk(var)
              for part in [_part_of(node)] if part is not None}
  return found


def _by_class(every: Sequence[Step]) -> Dict[int, List[Step]]:
  """The steps of each class (by the id of its `ClassInfo`)."""
  found: Dict[int, List[Step]] = {}
  for step in every:
    info = _class_of(step.scope) if step.scope is not None else None
    if info is not None:
      found.setdefault(id(info), []).append(step)
  return found
