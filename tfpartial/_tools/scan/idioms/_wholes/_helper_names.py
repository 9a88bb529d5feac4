"""The names a model's layers are built under when no root scope holds
them: every call of the project's helpers that open a scope from a
parameter and make variables (`def conv2d(x, n, name='conv2d'): with
tf.variable_scope(name): w = weight('weights', ...)`) gives that
parameter a literal (`conv2d(image, 32, name='d_conv1')`,
`fully_connected(h, 500, name='d_ip1')`), and no variable is made
outside such a scope (`_named_scopes.all_scoped`). A hashing network
copied from a GAN's discriminator names every layer `d_...` and trains
`[v for v in t_vars if 'd_' in v.name]`: every variable it makes. A
call that gives a name the scan cannot read (a parameter, a format), or
one helper name held by two functions, tells nothing. Part of
`_every_layer`."""

from __future__ import annotations

import ast
import weakref
from typing import Dict, FrozenSet, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _named_scopes

_MADE_BY_HAND = {"get_variable", "Variable"}


def layer_names(project: _project.Project) -> FrozenSet[str]:
  """The literal names every call of the project's variable-making
  scope helpers gives them, or none when one call gives no literal, a
  helper's name is defined twice, or a variable is made outside a
  scope (worked out once per project)."""
  kept = _KEPT.get(project)
  if kept is None:
    kept = _KEPT[project] = _read(project)
  return kept


def _read(project: _project.Project) -> FrozenSet[str]:
  named = _named_scopes.helpers(project)
  if not named:
    return frozenset()
  functions: Dict[str, List[ast.FunctionDef]] = {}
  for module in project.modules:
    if module.tree is not None and project.parsed(module) is not None:
      for node in module.tree.body:
        if isinstance(node, ast.FunctionDef):
          functions.setdefault(node.name, []).append(node)
  # The scopes right around the variables: a helper that makes them
  # itself or through functions opening no scope (`weight(...)`), not
  # one that calls other scope helpers (`discriminator`'s name scope).
  makers = _making({n: f for n, f in functions.items() if n not in named})
  helpers = {n for n in named if len(functions.get(n, ())) == 1 and (
      _calls_of(functions[n][0]) & (makers | _MADE_BY_HAND))}
  if not helpers or not _named_scopes.all_scoped(project):
    return frozenset()
  found: Set[str] = set()
  for module in project.modules:
    if module.tree is None or not any(
        f"{name}(" in module.source.text for name in helpers):
      continue
    for call in ast.walk(module.tree):
      if not (isinstance(call, ast.Call) and isinstance(
          call.func, ast.Name) and call.func.id in helpers):
        continue
      given = _given(call, functions[call.func.id][0])
      if given is None:
        return frozenset()
      found.add(given)
  return frozenset(found) if len(found) >= 2 else frozenset()


def _calls_of(function: ast.FunctionDef) -> Set[str]:
  return {_names.call_name(n) for n in _scopes.walk(function)
          if isinstance(n, ast.Call)}


def _making(functions: Dict[str, List[ast.FunctionDef]]) -> Set[str]:
  """The functions (of `functions`) that make a variable, themselves or
  through another of them they call."""
  calls = {name: {c for each in defs for c in _calls_of(each)}
           for name, defs in functions.items()}
  making = {name for name, called in calls.items()
            if called & _MADE_BY_HAND}
  grown = True
  while grown:
    more = {name for name, called in calls.items() if called & making}
    grown = bool(more - making)
    making |= more
  return making


def _given(call: ast.Call, function: ast.FunctionDef) -> Optional[str]:
  """The literal `call` gives the parameter `function` opens as its
  scope (its default when it gives none), else None."""
  opened = _named_scopes._opened_parameter(function)
  if opened is None:
    return None
  params = [a.arg for a in (*function.args.posonlyargs, *function.args.args,
                            *function.args.kwonlyargs)]
  value = _names.argument(call, params, opened)
  if value is None and not any(isinstance(a, ast.Starred) for a in (
      call.args)) and not any(k.arg is None for k in call.keywords):
    value = _default(function, opened)
  return value.value if isinstance(value, ast.Constant) and isinstance(
      value.value, str) and value.value else None


def _default(function: ast.FunctionDef, param: str) -> Optional[ast.expr]:
  arguments = function.args
  positional = [*arguments.posonlyargs, *arguments.args]
  pairs = [*zip(positional[len(positional) - len(arguments.defaults):],
                arguments.defaults),
           *zip(arguments.kwonlyargs, arguments.kw_defaults)]
  return next((d for a, d in pairs if a.arg == param), None)


_KEPT: weakref.WeakKeyDictionary[_project.Project, FrozenSet[str]] = (
    weakref.WeakKeyDictionary())
