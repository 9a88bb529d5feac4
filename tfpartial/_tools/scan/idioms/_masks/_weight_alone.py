"""Whether a factor of a constraint's product is computed from its
weight alone, through the local names of its `__call__` bound once
(`m = w * (desired / norms)`, then `m * cast(m >= 0)`): such a mask is
made anew from the weight after every update, a projection (a sign
kept, a norm clipped), as `w * cast(w >= 0)` is. A factor reading a
parameter other than the weight (`self.mask`), a global of the module
(`MASK`), a function of the project, or a name bound more than once,
is not of the weight alone (a `self.` attribute set only to a number,
`self.max_value`, scales it and is), nor is the weight's own name bound again
(`w = cast(self.mask > 0)`). Read by `weight-remask`."""

from __future__ import annotations

import ast
import weakref
from typing import Dict, Optional, Tuple

from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._masks import _numbers

# How many local names deep a factor is followed.
_DEPTH = 4
# id(function node) -> how many times each name is bound in it.
_Bound = Dict[int, Dict[str, int]]
# Per project, the functions read.
_BOUND: "weakref.WeakKeyDictionary[_project.Project, _Bound]" = (
    weakref.WeakKeyDictionary())


def of_weight_alone(node: ast.AST, weight: str, scope: _scopes.Scope,
                    project: _project.Project) -> bool:
  """Whether `node` (read in `scope`, the constraint's `__call__`)
  reads `weight` and otherwise only constants, `self.` attributes set
  only to numbers (`_numbers.scale`), libraries imported from outside
  the project and local names bound once to such values.

  >>> top = _scopes.collect(ast.parse("def f(w):\\n  m = w * 2\\n"))
  >>> f = top.scope_of(top.node.body[0])
  >>> p = _project.Project([])
  >>> of_weight_alone(ast.parse("m * m").body[0].value, "w", f, p)
  True
  >>> of_weight_alone(ast.parse("m * k").body[0].value, "w", f, p)
  False
  """
  functions = _BOUND.setdefault(project, {})
  if id(scope.node) not in functions:
    functions[id(scope.node)] = _bindings(scope.node)
  bound = functions[id(scope.node)]
  seen: Dict[str, Optional[bool]] = {}
  return _alone(node, weight, scope, project, (bound, seen), 0) is True


def _alone(node: ast.AST, weight: str, scope: _scopes.Scope,
           project: _project.Project,
           read: Tuple[Dict[str, int], Dict[str, Optional[bool]]],
           depth: int) -> Optional[bool]:
  """True: of the weight alone, reading it; None: reading nothing but
  constants and libraries; False: reading anything else. `read`: the
  function's bindings, and each local name's answer once."""
  if depth > _DEPTH:
    return False
  bound, seen = read
  reads = None
  numbers = {id(n.value) for n in ast.walk(node) if isinstance(
      n, ast.Attribute) and _numbers.scale(n, scope, project)}
  for name in (n for n in ast.walk(node) if isinstance(n, ast.Name)):
    if id(name) in numbers:
      continue  # `self.max_value` set only to a number: a scale.
    if name.id == weight and weight in scope.params and not bound.get(
        weight):  # The parameter itself, never bound again.
      reads = True
      continue
    defs = scope.defs.get(name.id, [])
    if len(defs) == 1 and bound.get(name.id) == 1 and (
        name.id not in scope.params):
      if name.id not in seen:
        seen[name.id] = False  # A name read in its own value: not alone.
        seen[name.id] = _alone(defs[0].value, weight, scope, project, read,
                               depth + 1)
      inner = seen[name.id]
      if inner is False:
        return False
      reads = reads or inner
    elif not project.external(scope, name.id):
      return False
  return reads


def _bindings(function: ast.AST) -> Dict[str, int]:
  """How many times each name is bound, or declared global or
  nonlocal, in `function` and what is nested in it."""
  counts: Dict[str, int] = {}
  for node in ast.walk(function):
    names = [node.id] if isinstance(node, ast.Name) and not isinstance(
        node.ctx, ast.Load) else list(node.names) if isinstance(
            node, (ast.Global, ast.Nonlocal)) else []
    for name in names:
      counts[name] = counts.get(name, 0) + 1
  return counts
