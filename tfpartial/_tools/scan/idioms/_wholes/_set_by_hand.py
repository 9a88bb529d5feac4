"""Whether the variables a filter leaves out are written by the program
itself: the loop that fills the step's list fills another list beside
it (`if 'value' in v.name: value_params.append(v) else:
parameters.append(v)`), and that list is handed to a setter of the
project that assigns each of its variables (`SetFromFlat(parameters)`:
`tf.assign(v, theta[start:start + size])`), the policy updated by a
flat-parameter rule of its own (LOLA's exact gradients, evolution
strategies). Or the rest is filtered from the same list by another test
(`pol_var_list = [v for v in all_var_list if ...'pol'...]` beside
`vf_var_list = [... 'vf' ...]`) and handed to an optimizer made over a
list (baselines' `MpiAdam(vf_var_list)`, TRPO's value function). The rest
is trained, not frozen.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

_ASSIGNS = {"assign", "assign_add", "assign_sub"}
# Optimizers made over the list they train (baselines' `MpiAdam(var_list)`).
_LIST_OPTIMIZERS = {"MpiAdam"}


def rest_set(project: _project.Project, var_list: Optional[ast.AST],
             scope: _scopes.Scope) -> bool:
  """Whether a list filled beside `var_list` in one loop of `scope` is
  handed there to a project setter that assigns every variable of it."""
  if var_list is None:
    return False
  facts = scope.once((_read_facts, None, 0), lambda: _read_facts(scope))
  mine = ast.unparse(var_list)
  for rest in facts.siblings.get(mine, []) + _filtered_beside(
      var_list, scope, facts):
    if rest in facts.listed:
      return True
    for call, index in facts.passed.get(rest, []):
      if _assigns_each(project, call, index, scope):
        return True
  return False


@dataclasses.dataclass
class _Facts:
  """What a scope's calls are handed and its loops fill, read once per
  scope (every step of it asks)."""

  # The text of an argument -> (the call, the argument's index), in order.
  passed: Dict[str, List[Tuple[ast.Call, int]]]
  listed: Set[str]  # The first arguments of `_LIST_OPTIMIZERS`, as text.
  # A list a loop appends to -> the other lists the loops filling it fill.
  siblings: Dict[str, List[str]]
  # The list a comprehension's test filters, as text -> the names bound
  # to one (each bound once).
  filtering: Dict[str, List[str]]


def _read_facts(scope: _scopes.Scope) -> _Facts:
  passed: Dict[str, List[Tuple[ast.Call, int]]] = {}
  listed: Set[str] = set()
  siblings: Dict[str, List[str]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Call):
      if _names.call_name(node) in _LIST_OPTIMIZERS and node.args:
        listed.add(ast.unparse(node.args[0]))
      for index, arg in enumerate(node.args):
        passed.setdefault(ast.unparse(arg), []).append((node, index))
    elif isinstance(node, ast.For):
      filled = [ast.unparse(n.func.value) for n in ast.walk(node)
                if isinstance(n, ast.Call) and isinstance(
                    n.func, ast.Attribute) and n.func.attr == "append"]
      for mine in set(filled):
        found = siblings.setdefault(mine, [])
        found += [f for f in filled if f != mine and f not in found]
  filtering: Dict[str, List[str]] = {}
  for name, defs in scope.defs.items():
    source = _filtered_source(defs)
    if source is not None:
      filtering.setdefault(source, []).append(name)
  return _Facts(passed, listed, siblings, filtering)


def _filtered_beside(var_list: ast.AST, scope: _scopes.Scope,
                     facts: _Facts) -> List[str]:
  """The other names bound to a comprehension with a test over the same
  list as `var_list`'s (`[v for v in all_var_list if ...]`)."""
  if not isinstance(var_list, ast.Name):
    return []
  source = _filtered_source(scope.defs.get(var_list.id, []))
  if source is None:
    return []
  return [name for name in facts.filtering.get(source, [])
          if name != var_list.id]


def _filtered_source(defs: List[_scopes.Def]) -> Optional[str]:
  """The list a name's one binding filters by a test, as text."""
  value = defs[0].value if len(defs) == 1 else None
  if not isinstance(value, ast.ListComp) or len(value.generators) != 1 or (
      not value.generators[0].ifs):
    return None
  return ast.unparse(value.generators[0].iter)


def _assigns_each(project: _project.Project, call: ast.Call, index: int,
                  scope: _scopes.Scope) -> bool:
  """Whether the callee of `call` (a project function or class) assigns
  each element of its parameter at `index` in a loop."""
  name = _names.dotted(call.func)
  target = project.resolve(scope, name) if name else None
  function: Optional[ast.AST] = None
  skip = 0
  if isinstance(target, _scopes.ClassInfo):
    init = target.methods.get("__init__")
    function, skip = (init.node if init is not None else None), 1
  elif isinstance(target, tuple):
    function = target[0]
  if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  params = [a.arg for a in function.args.args][skip:]
  if index >= len(params):
    return False
  param = params[index]
  for loop in ast.walk(function):
    if isinstance(loop, ast.For) and any(
        isinstance(n, ast.Name) and n.id == param for n in ast.walk(
            loop.iter)):
      element = {n.id for n in ast.walk(loop.target) if isinstance(
          n, ast.Name)}
      if any(_assigned_to(n, element) for n in ast.walk(loop)):
        return True
  return False


def _assigned_to(node: ast.AST, element: Set[str]) -> bool:
  """`tf.assign(v, ...)` or `v.assign(...)` of a name in `element`."""
  if not isinstance(node, ast.Call) or _names.call_name(node) not in _ASSIGNS:
    return False
  func = node.func
  if isinstance(func, ast.Attribute) and isinstance(
      func.value, ast.Name) and func.value.id in element:
    return True
  return bool(node.args) and isinstance(
      node.args[0], ast.Name) and node.args[0].id in element
