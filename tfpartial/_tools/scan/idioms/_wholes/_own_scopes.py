"""Whether a name filter keeps an object's own variables, all of them:
the literal scopes its class names for what it creates, outside any
other scope (`self.create_mlp(name="mean_network")` where `create_mlp`
opens `tf.variable_scope(name)`; `make_param_layer(name="log_std")`
passing its name on to a helper that opens it), an optimizer's slots
aside (`'Adam' not in p.name`: slots are no parameters). Such a filter
(rllab's `get_params_internal`) selects a whole policy, not a part.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow

# The names TF's optimizers give their slot variables.
_SLOTS = {"Adam", "Adam_1", "Momentum", "RMSProp", "RMSProp_1", "Adagrad",
          "Adadelta", "Ftrl", "Ftrl_1"}


def keeps_all(flow: Flow, node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` (a comprehension, or one of a chain of them) keeps
  exactly the scopes the class of `scope` creates its variables under,
  and the class makes no trainable variable outside them."""
  info = class_of(scope)
  kept = _kept(node, scope, 4)
  if info is None or not kept:
    return False
  return kept == _class_scopes(flow, info) and not _made_unscoped(info)


# What makes variables where it runs: TF1 variables and layers.
_MAKERS = {"get_variable", "Variable", "VariableV1", "ResourceVariable",
           "dense", "conv2d", "conv1d", "conv3d", "conv2d_transpose",
           "fully_connected", "batch_normalization", "batch_norm"}
# The makers whose second argument is `trainable`.
_VARIABLES = {"Variable", "VariableV1", "ResourceVariable"}
# Searches bounded: at most this many methods are followed.
_METHODS = 32


def _made_unscoped(info: _scopes.ClassInfo) -> bool:
  """Whether the class makes a trainable variable outside every scope it
  opens: a method no other method calls (where its building starts)
  makes one outside any `with` scope, itself or through the methods it
  calls there (`self.model_vars = self._build_model_vars()` beside
  `with tf.variable_scope("ddpm"): self._build_model_vars()`). A filter
  by the class's scopes then leaves that network out: no whole object.
  A variable made `trainable=False` (a global step, a learning rate)
  is no network left out. Read once per class."""
  return info.home.once((_made_unscoped, id(info.node), 0),
                        lambda: _read_unscoped(info))


def _read_unscoped(info: _scopes.ClassInfo) -> bool:
  methods = {name: method.node for name, method in info.methods.items()}
  called = {_self_method(c) for node in methods.values()
            for c in _self_calls(getattr(node, "body", []), True)}
  todo = [node for name, node in methods.items() if name not in called]
  seen: Set[int] = set()
  while todo and len(seen) < _METHODS:
    node = todo.pop()
    if id(node) in seen:
      continue
    seen.add(id(node))
    for call in _self_calls(getattr(node, "body", []), False):
      method = _self_method(call)
      if method is None and _names.call_name(call) in _MAKERS and (
          not _untrainable(call)):
        return True
      if method in methods:
        todo.append(methods[method])
  return False


def _untrainable(call: ast.Call) -> bool:
  """`tf.Variable(0, trainable=False)`, `tf.Variable(0, False)`: a
  variable no optimizer's list takes."""
  flag = next((k.value for k in call.keywords if k.arg == "trainable"), None)
  if flag is None and _names.call_name(call) in _VARIABLES and len(
      call.args) >= 2:
    flag = call.args[1]  # `Variable(initial_value, trainable, ...)`.
  return isinstance(flag, ast.Constant) and flag.value is False


def _self_method(call: ast.Call) -> Optional[str]:
  """`m` of a call `self.m(...)`, else None."""
  name = _names.dotted(call.func)
  return name[5:] if name and name.startswith("self.") and (
      name.count(".") == 1) else None


def _self_calls(body: List[ast.stmt], only_self: bool) -> List[ast.Call]:
  """The calls of `body` outside any `with` scope and nested definition
  (only `self.m(...)` ones where `only_self`, in scopes too)."""
  found: List[ast.Call] = []
  for statement in body:
    if isinstance(statement, _names.DEFINITIONS) or not only_self and (
        _names.opens_scope(statement, _names.TF_SCOPES_OR_CLASS)):
      continue
    inner = [s for field in ("body", "orelse", "finalbody", "handlers")
             for s in getattr(statement, field, None) or []
             if isinstance(s, ast.stmt)]
    own = [n for n in ast.walk(statement) if isinstance(n, ast.Call)] if (
        not inner) else [n for part in _own_nodes(statement)
                         for n in [part] if isinstance(n, ast.Call)]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
      own = [n for item in statement.items
             for n in ast.walk(item.context_expr) if isinstance(n, ast.Call)]
    found += [c for c in own if not only_self or _self_method(c)]
    found += _self_calls(inner, only_self)
  return found


def _kept(node: ast.AST, scope: _scopes.Scope, depth: int
          ) -> Optional[Set[str]]:
  """The literal prefixes a chain of comprehensions keeps (None when one
  of its tests is anything else)."""
  if isinstance(node, ast.Name) and depth:
    defs = scope.defs.get(node.id, [])
    found: Set[str] = set()
    for index in scope.reaching(node.id, node):
      got = _kept(defs[index].value, scope, depth - 1)
      if got is None:
        return None
      found |= got
    return found
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp)):
    return set()  # The variables it starts from.
  if len(node.generators) != 1:
    return None
  found = set()
  for test in node.generators[0].ifs:
    got = _test_keeps(test)
    if got is None:
      return None
    found |= got
  inner = _kept(node.generators[0].iter, scope, depth - 1)
  if inner is None or found and inner:
    return None  # Two filters of scopes: one inside the other.
  return found or inner


def _test_keeps(test: ast.expr) -> Optional[Set[str]]:
  """The prefixes `p.name.startswith('a') or 'b' in p.name` keeps, none
  for a test that drops only optimizer slots; None for any other test."""
  parts = test.values if isinstance(test, ast.BoolOp) and isinstance(
      test.op, ast.Or) else [test]
  found: Set[str] = set()
  for part in parts:
    literal = _literal(part)
    if isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(
        part.ops[0], ast.NotIn) and literal in _SLOTS and len(parts) == 1:
      continue
    if literal is None or not (isinstance(part, ast.Call) and (
        _names.call_name(part) == "startswith") or isinstance(
            part, ast.Compare) and len(part.ops) == 1 and isinstance(
                part.ops[0], ast.In)):
      return None
    found.add(literal.strip("/"))
  return found


def _literal(part: ast.expr) -> Optional[str]:
  """The string `part` tests a name against."""
  chosen: Optional[ast.expr] = None
  if isinstance(part, ast.Call) and len(part.args) == 1:
    chosen = part.args[0]
  elif isinstance(part, ast.Compare):
    chosen = part.left
  if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
    return chosen.value
  return None


def class_of(scope: _scopes.Scope) -> Optional[_scopes.ClassInfo]:
  """The class whose method (or a function inside one) `scope` is."""
  return _scopes.enclosing_class(scope)


def _class_scopes(flow: Flow, info: _scopes.ClassInfo) -> Set[str]:
  """The literal scopes the class's methods create variables under,
  outside any other scope (what runs after a `raise` never runs); read
  once per class."""
  return info.home.once((_class_scopes, id(info.node), 0),
                        lambda: _read_scopes(flow, info))


def _read_scopes(flow: Flow, info: _scopes.ClassInfo) -> Set[str]:
  found: Set[str] = set()
  for method in info.methods.values():
    body = getattr(method.node, "body", [])
    _walk(flow, method, body, found)
  return found


def _walk(flow: Flow, method: _scopes.Scope, body: List[ast.stmt],
          found: Set[str]) -> None:
  for statement in body:
    if isinstance(statement, _names.DEFINITIONS):
      continue
    if _names.opens_scope(statement, _names.TF_SCOPES_OR_CLASS):
      for item in statement.items:
        name = _scope_literal(item.context_expr)
        if name is not None:
          found.add(name)
      continue  # What it builds inside is under that scope.
    for node in _own_nodes(statement):
      if isinstance(node, ast.Call):
        found.update(_named_scopes(flow, node, method))
    for field in ("body", "orelse", "finalbody"):
      inner = getattr(statement, field, None)
      if isinstance(inner, list):
        _walk(flow, method, [s for s in inner if isinstance(s, ast.stmt)],
              found)
    if isinstance(statement, (ast.Raise, ast.Return)):
      break


def _own_nodes(statement: ast.stmt) -> List[ast.AST]:
  """The nodes of a statement outside its nested blocks."""
  if isinstance(statement, (ast.If, ast.While)):
    return list(ast.walk(statement.test))
  if isinstance(statement, (ast.For, ast.AsyncFor)):
    return list(ast.walk(statement.iter))
  if isinstance(statement, (ast.Try, ast.With, ast.AsyncWith)):
    return []
  return list(ast.walk(statement))


def _scope_literal(expr: ast.AST) -> Optional[str]:
  if isinstance(expr, ast.Call) and _names.call_name(expr) in _names.TF_SCOPES_OR_CLASS and (
      expr.args) and isinstance(expr.args[0], ast.Constant) and isinstance(
          expr.args[0].value, str):
    return expr.args[0].value.strip("/")
  return None


def _named_scopes(flow: Flow, call: ast.Call, scope: _scopes.Scope
                  ) -> Set[str]:
  """The literals `call` passes to parameters its function opens as a
  scope (itself, or through the helpers it passes them on to)."""
  found: Set[str] = set()
  literal = [(i, a.value) for i, a in enumerate(call.args)
             if isinstance(a, ast.Constant) and isinstance(a.value, str)]
  named = [(k.arg, k.value.value) for k in call.keywords
           if k.arg and isinstance(k.value, ast.Constant)
           and isinstance(k.value.value, str)]
  if not literal and not named:
    return found
  callee = flow.callee(call, scope)
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return found
  params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args)]
  if params[:1] == ["self"] and isinstance(call.func, ast.Attribute):
    params = params[1:]
  for key, value in [*((params[i] if i < len(params) else "", v)
                       for i, v in literal), *named]:
    if key and _opens(flow, callee, key, 2):
      found.add(value.strip("/"))
  return found


def _is_name(node: Optional[ast.expr], name: str) -> bool:
  return isinstance(node, ast.Name) and node.id == name


def _opens(flow: Flow, function: ast.AST, param: str, depth: int) -> bool:
  """Whether `function` opens its parameter `param` as a variable scope,
  or passes it on to a function that does."""
  for node in ast.walk(function):
    if isinstance(node, ast.With) and any(_is_name(_opened_scopes.opened_on(
        i.context_expr, _names.TF_SCOPES_OR_CLASS), param) for i in node.items):
      return True
  if not depth:
    return False
  found = flow.functions.get(id(function))
  home = found[1].scope_of(function) if found else None
  if home is None:
    return False
  for node in home.nodes:
    if not isinstance(node, ast.Call):
      continue
    passed = [k.arg for k in node.keywords if isinstance(
        k.value, ast.Name) and k.value.id == param and k.arg]
    if not passed:
      continue
    callee = flow.callee(node, home)
    if isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        _opens(flow, callee, name, depth - 1) for name in passed):
      return True
  return False
