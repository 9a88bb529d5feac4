"""A write into a helper's parameter that every call of the helper binds
to a variable made `trainable=False`: population-based training's
`def explore(h): return h.assign(h + noise)`, called as `explore(h)`
on a hyperparameter no optimizer trains. The write moves a setting,
not a weight, so no part of a trained variable is held. A helper that
some call hands a trained variable (or something the scan cannot
trace), or whose name the project reads as a value (`partial(explore,
theta)`, `map(explore, ...)`, an alias import), stays a candidate."""

from __future__ import annotations

import ast
import weakref
from typing import FrozenSet, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _trained_too

# Past this many calls the name is too common to be one helper's.
_MAX_CALLS = 8


def passed_untrainable(analysis: Analysis, scope: _scopes.Scope,
                       target: ast.AST) -> bool:
  """Whether `target` is a parameter of `scope`'s function, never bound
  anew in it, and each of the function's calls (one at least) passes a
  variable made `trainable=False` for it."""
  function = scope.node
  if not isinstance(target, ast.Name) or target.id not in scope.params or (
      not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))):
    return False
  spelled = analysis.project.callers(function.name)
  if not spelled or len(spelled) > _MAX_CALLS or scope.defs.get(target.id):
    return False  # No call seen, too common a name, or bound anew.
  # Only the calls of this function (another module's `explore()` aside).
  calls = [(caller, call) for caller, call in spelled
           if analysis.flow.callee(call, caller) is function]
  if not calls or _read_as_value(analysis, function.name):
    return False
  for caller, call in calls:
    given = _names.argument(call, scope.params, target.id)
    if given is None or not _trained_too.only_untrainable(
        analysis.flow.labels(given, caller)):
      return False
  return True


def _read_as_value(analysis: Analysis, name: str) -> bool:
  """Whether some module reads `name` other than as the callee of a
  call (`partial(name, x)`, `map(name, xs)`, `hooks = [name]`), or
  imports it under another name: calls the scan does not see."""
  return any(name in _values_read(module.tree)
             for module in analysis.project.all_modules_with((name,))
             if module.tree is not None)


# Each module's names read as values, walked once per parsed tree (kept
# while the tree lives), so asking for every helper's writes is linear.
_VALUE_READS: "weakref.WeakKeyDictionary[ast.AST, FrozenSet[str]]" = (
    weakref.WeakKeyDictionary())


def _values_read(tree: ast.AST) -> FrozenSet[str]:
  """The names `tree` reads other than as a call's callee, and the names
  it imports under another name.

  >>> sorted(_values_read(ast.parse(
  ...     "from h import put as p\\nf(g)\\nk = [m]\\nn.o(1)")))
  ['g', 'm', 'n', 'put']
  """
  known = _VALUE_READS.get(tree)
  if known is not None:
    return known
  called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
  names: Set[str] = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.alias):
      last = node.name.rpartition(".")[2]
      if node.asname not in (None, last):
        names.add(last)
      continue
    read = node.id if isinstance(node, ast.Name) else node.attr if (
        isinstance(node, ast.Attribute)) else None
    if read is not None and isinstance(
        getattr(node, "ctx", None), ast.Load) and id(node) not in called:
      names.add(read)
  known = _VALUE_READS[tree] = frozenset(names)
  return known
