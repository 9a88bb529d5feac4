"""Whether a trainer's filter trains the scope its callers build the model
under: the filter reads a scope the trainer is given (`self.train_scopes`
of `__init__(self, model, train_scopes)`), and every construction of the
trainer passes, as that scope, what it builds its model under
(`model = Net(scope=net_scope)`, `Trainer(model=model, train_scopes=
net_scope)`): the whole model, not a part of it.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._own_scopes import class_of


def trains_model_scope(flow: Flow, node: ast.AST, scope: _scopes.Scope
                       ) -> bool:
  """Whether `node` (a helper's call filtering by a scope) reads a scope
  every construction of its class sets to its model's own scope."""
  info = class_of(scope)
  if info is None or not isinstance(node, ast.Call):
    return False
  read = [a for a in [*node.args, *(k.value for k in node.keywords)]
          if _self_attribute(a)]
  if len(read) != 1:
    return False
  param = _init_param(flow, info, _names.dotted(read[0]) or "")
  built = flow.constructions(info) if param else []
  return bool(built) and all(
      _model_under(call, home, param or "") for home, call in built)


def _self_attribute(node: ast.AST) -> bool:
  name = _names.dotted(node) or ""
  return name.startswith("self.") and name.count(".") == 1


def _init_param(flow: Flow, info: _scopes.ClassInfo, name: str
                ) -> Optional[str]:
  """The parameter of an `__init__` (of the class or a base) that
  `self.name` is set to, when that is all it is set to."""
  values = flow.project.attribute(info, name)
  found = {value.id for value, home in values
           if isinstance(value, ast.Name) and home.name == "__init__"
           and value.id in home.params}
  if len(found) != 1 or len(values) != 1:
    return None
  return found.pop()


def _model_under(call: ast.Call, home: _scopes.Scope, param: str) -> bool:
  """Whether `call` passes as `param` the scope it passes (by the same
  name or literal) to the constructor of another of its arguments."""
  given = next((k.value for k in call.keywords if k.arg == param), None)
  if given is None:
    return False
  text = ast.unparse(given)
  others: List[ast.expr] = [*call.args, *(k.value for k in call.keywords
                                          if k.arg != param)]
  for other in others:
    if not isinstance(other, ast.Name):
      continue
    defs = home.defs.get(other.id, [])
    for index in home.reaching(other.id, other):
      value = defs[index].value
      if isinstance(value, ast.Call) and any(
          k.arg and "scope" in k.arg and ast.unparse(k.value) == text
          for k in value.keywords):
        return True
  return False
