"""Variables picked from a dict by keys a name test chose: `for key in
keys: if 'latent' not in key: net_keys.append(key) else:
latent_keys.append(key)`, then a step on `[params[key] for key in
latent_keys]`. The keys are the filter (rllab-style policies keep their
variables in `all_params` by name); the other group, trained by no step
of the function, stays fixed (a meta-learner adapting only its latents).
Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _joined_keys

_STEPS = {"gradients", "gradient", "minimize", "compute_gradients"}


def chosen_keys(chosen: ast.AST, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The step's `[d[k] for k in keys]` where its keys are chosen by a
  name test, when the keys the test sends elsewhere reach no step of the
  function; else None. The list is the finding's place: the step shows
  which keys it takes."""
  if not isinstance(chosen, ast.ListComp) or len(chosen.generators) != 1:
    return None
  generator = chosen.generators[0]
  element, target = chosen.elt, generator.target
  if not isinstance(element, ast.Subscript) or not isinstance(
      target, ast.Name) or not isinstance(element.slice, ast.Name) or (
          element.slice.id != target.id) or not isinstance(
              generator.iter, ast.Name):
    return None
  name = _alias(generator.iter.id, scope)
  found = _split(name, scope)
  if found is None:
    return None
  test, others = found
  others |= {other for other in scope.defs if _alias(other, scope) in others}
  if any(_trains(call, others) for call in scope.nodes if isinstance(
      call, ast.Call) and _names.call_name(call) in _STEPS):
    return None
  return chosen if test is not None else None


def _alias(name: str, scope: _scopes.Scope) -> str:
  """The list a name copies (`update_keys = keys`), else the name."""
  defs = scope.defs.get(name, [])
  if len(defs) == 1 and isinstance(defs[0].value, ast.Name):
    return defs[0].value.id
  return name


def _split(name: str, scope: _scopes.Scope
           ) -> Optional[Tuple[ast.expr, Set[str]]]:
  """The name test under which a loop appends keys to `name`, and the
  lists its other arm appends to: `if 'latent' not in key: a.append(key)
  else: name.append(key)`."""
  for node in scope.nodes:
    if not isinstance(node, ast.If) or not _names_a_key(node.test) and (
        not _joined_keys.joined(node.test, _names_a_key)):
      continue
    mine = _appended(node.body)
    theirs = _appended(node.orelse)
    if name in mine and theirs - {name}:
      return node.test, theirs - {name}
    if name in theirs and mine - {name}:
      return node.test, mine - {name}
  return None


def _names_a_key(test: ast.expr) -> bool:
  """A test of a key's text: `'latent' in key`, `'latent' not in key`."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], (ast.In, ast.NotIn))) and isinstance(
          test.left, ast.Constant) and isinstance(test.left.value, str) and (
              isinstance(test.comparators[0], ast.Name))


def _appended(body: List[ast.stmt]) -> Set[str]:
  """The lists a branch appends to."""
  return {_names.dotted(s.value.func.value) or "" for s in body
          if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
          and isinstance(s.value.func, ast.Attribute)
          and s.value.func.attr == "append"}


def _trains(call: ast.Call, lists: Set[str]) -> bool:
  """Whether a step's arguments read one of `lists`."""
  return any(isinstance(n, ast.Name) and n.id in lists
             for arg in [*call.args, *(k.value for k in call.keywords)]
             for n in _scopes.walk(arg))
