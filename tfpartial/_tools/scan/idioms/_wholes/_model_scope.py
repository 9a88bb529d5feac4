"""Whether a trainer's filter trains the scope its callers build the model
under: the filter reads a scope the trainer is given (`self.train_scopes`
of `__init__(self, model, train_scopes)`), and every construction of the
trainer passes, as that scope, what it builds its model under
(`model = Net(scope=net_scope)`, `Trainer(model=model, train_scopes=
net_scope)`): the whole model, not a part of it. Or the trainer calls
slim's helper without scopes (`get_variables_to_train()`), whose `if
trainable_scopes is None` returns every trainable variable.
"""

from __future__ import annotations

import ast
from typing import List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._wholes._own_scopes import class_of


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


# Calls that list every variable of a kind.
_EVERY = {"trainable_variables", "global_variables", "all_variables",
          "model_variables"}


def defaults_to_all(flow: Flow, node: ast.AST, scope: _scopes.Scope
                    ) -> bool:
  """Whether `node` calls a helper of the project leaving out a parameter
  (default `None`) under whose `if scopes is None:` the helper returns
  every variable (`variables = tf.trainable_variables()`)."""
  callee = flow.callee(node, scope) if isinstance(node, ast.Call) else None
  if not isinstance(node, ast.Call) or not isinstance(
      callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  arguments = callee.args
  positional = [*arguments.posonlyargs, *arguments.args]
  defaults = dict(zip([a.arg for a in positional[len(positional) - len(
      arguments.defaults):]], arguments.defaults))
  left = {name for index, name in enumerate(a.arg for a in positional)
          if index >= len(node.args) and name in defaults and (
              _is_none(defaults[name])) and name not in {
                  k.arg for k in node.keywords}}
  returned = {_names.dotted(n.value) if n.value is not None else None
              for n in ast.walk(callee) if isinstance(n, ast.Return)}
  for statement in callee.body:
    if isinstance(statement, ast.If) and isinstance(
        statement.test, ast.Compare) and isinstance(
            statement.test.left, ast.Name) and (
                statement.test.left.id in left) and isinstance(
                    statement.test.ops[0], ast.Is) and _is_none(
                        statement.test.comparators[0]):
      return any(isinstance(s, ast.Return) or isinstance(
          s, ast.Assign) and len(s.targets) == 1 and (
              returned == {_names.dotted(s.targets[0])}) for s in (
                  statement.body)) and all(isinstance(
                      s.value, ast.Call) and _names.call_name(
                          s.value) in _EVERY for s in statement.body
                      if isinstance(s, (ast.Assign, ast.Return)))
  return False


def _is_none(node: ast.AST) -> bool:
  return isinstance(node, ast.Constant) and node.value is None


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
