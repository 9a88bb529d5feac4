"""A step's list of one model's variables that a flag grows by another
model's (`var_list = head.trainable_variables`, then `if
args.fine_tune_backbone: var_list += backbone.trainable_variables`),
where the step's function runs that other model (`head(backbone(x))`):
with the flag off the other model (a pretrained backbone or embedder)
stays fixed under the loss that runs through it. The list may be a
local name or a `self.` attribute set in any method of the class. Part
of `var-list-filter`; `_flagged.grown` reads the same form of scopes."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _flagged

_VARIABLES = {"trainable_variables", "trainable_weights", "variables",
              "weights"}
# A step: its call, scope and list.
Trained = Tuple[ast.Call, _scopes.Scope, Optional[ast.AST]]


def left_out(steps: Sequence[Trained]) -> List[Tuple[ast.expr, Trained]]:
  """The first value (`head.trainable_variables`) of each step's list
  that a flag grows by a model the step's function runs, with no other
  step training that model: (that value, the step)."""
  found: Dict[int, Tuple[ast.expr, Trained]] = {}
  # Each function's or class's lists, all names at once, read once
  # (many steps, many methods of one class).
  read: Dict[int, Dict[str, List[Tuple[ast.expr, List[str]]]]] = {}
  run: Dict[int, List[str]] = {}
  spelled = [(c, ast.unparse(v)) for c, _, v in steps if v is not None]
  for step in steps:
    call, scope, var_list = step
    name = _names.dotted(var_list) if var_list is not None else None
    if name is None or name.count(".") > 1 or (
        "." in name and not name.startswith("self.")):
      continue
    grown = _lists(scope, name, read).get(name, [])
    if not grown:
      continue
    function = _function_of(scope).node
    runs = run.setdefault(id(function), _run(function))
    others = " ".join(text for c, text in spelled if c is not call)
    for first, added in grown:
      base = _owner(first)
      if any(_runs(runs, owner, base) and owner not in others
             for owner in added):
        found.setdefault(id(first), (first, step))
        break
  return list(found.values())


def _lists(scope: _scopes.Scope, name: str,
           read: Dict[int, Dict[str, List[Tuple[ast.expr, List[str]]]]]
           ) -> Dict[str, List[Tuple[ast.expr, List[str]]]]:
  """The grown lists of the functions that may set `name`, read once
  for all of them (in `read`): the step's own function's (a local name),
  or every method's of its class (a `self.` attribute)."""
  if not name.startswith("self."):
    home = _function_of(scope).node
    if id(home) not in read:
      read[id(home)] = _grown(home)
    return read[id(home)]
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  if place is None or place.cls is None:
    return {}
  if id(place.cls) not in read:
    merged: Dict[str, List[Tuple[ast.expr, List[str]]]] = {}
    for method in place.cls.methods.values():
      for each, grown in _grown(method.node).items():
        merged.setdefault(each, []).extend(grown)
    read[id(place.cls)] = merged
  return read[id(place.cls)]


def _grown(home: ast.AST) -> Dict[str, List[Tuple[ast.expr, List[str]]]]:
  """Each list name's (first value, a model's variables, and the models
  whose variables a flag's `if` adds to it) in the function `home`, all
  names read in one pass."""
  first: Dict[str, ast.expr] = {}
  added: Dict[str, List[str]] = {}
  for statement, tests in _statements(_names.statements(home), ()):
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
      name = _names.dotted(statement.targets[0])
      if name is None:
        continue
      if not tests and _owner(statement.value) and name not in first:
        first[name] = statement.value
      elif tests and _flagged.a_flag(tests[-1], name):
        added.setdefault(name, []).extend(
            _added_owners(statement.value, name))
    elif isinstance(statement, ast.AugAssign) and isinstance(
        statement.op, ast.Add) and tests:
      name = _names.dotted(statement.target)
      if name is not None and _flagged.a_flag(tests[-1], name):
        added.setdefault(name, []).extend(
            _added_owners(statement.value, name))
  return {name: [(first[name], owners)] for name, owners in added.items()
          if name in first and owners}


def _statements(body: List[ast.stmt], tests: Tuple[ast.expr, ...]
                ) -> Iterator[Tuple[ast.stmt, Tuple[ast.expr, ...]]]:
  """Each statement of `body`, not in nested functions, with the tests
  of the `if`s it runs under (loops and `with` blocks looked through)."""
  for statement in body:
    yield statement, tests
    if isinstance(statement, ast.If):
      yield from _statements(statement.body, tests + (statement.test,))
      yield from _statements(statement.orelse, tests + (statement.test,))
    elif isinstance(statement, (ast.For, ast.While, ast.With, ast.Try)):
      yield from _statements(statement.body, tests)


def _added_owners(value: ast.expr, name: str) -> List[str]:
  """The models whose variables `value` adds to the list `name`."""
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    return [owner for side in (value.left, value.right)
            for owner in _added_owners(side, name)]
  owner = _owner(value)
  return [owner] if owner and owner != name else []


def _owner(value: ast.expr) -> Optional[str]:
  """`m` of `m.trainable_variables` (a model's variables), else None."""
  if isinstance(value, ast.Attribute) and value.attr in _VARIABLES:
    owner = _names.dotted(value.value)
    return owner if owner and owner != "self" else None
  return None


def _run(home: ast.AST) -> List[str]:
  """The objects `home` calls (`backbone(x)`, `self.embed_model(s)`)."""
  return [name for node in ast.walk(home) if isinstance(node, ast.Call)
          for name in [_names.dotted(node.func)] if name and name != "self"]


def _runs(run: List[str], owner: str, base: Optional[str]) -> bool:
  """Whether a call of `run` runs the model `owner` (or the object that
  holds it, `self.embed_model` of `self.embed_model.embedder`), not the
  trained model `base` itself."""
  return any((owner == called or owner.startswith(called + ".")) and not (
      base == called or (base or "").startswith(called + "."))
             for called in run)


def _function_of(scope: _scopes.Scope) -> _scopes.Scope:
  """The outermost function `scope` is nested in (or itself)."""
  while scope.cls is None and scope.parent is not None and isinstance(
      scope.parent.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    scope = scope.parent
  return scope
