"""Whether a name filter keeps an object's own scope, all of it: the
filter reads a scope attribute of its object (`scope=self.abs_scope`,
`self.scope + "/"`), and the class and its subclasses open that scope
(or the name it is made from, `self.abs_scope = ... + scope`) and no
other for what they build. An RL agent's parameters, a model library's
`get_params()`: the whole object, not a part of it.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._wholes import _own_blocks
from tfpartial._tools.scan.idioms._wholes import _scope_around
from tfpartial._tools.scan.idioms._wholes._own_scopes import class_of


def keeps_own_scope(project: _project.Project, flow: Flow, node: ast.AST,
                    scope: _scopes.Scope) -> bool:
  """Whether `node` (a call collecting variables, or of a method that
  returns one) filters by its object's scope attribute, the only scope
  its class family builds under."""
  if isinstance(node, ast.Call) and _attribute_read(node) is None:
    return _returns_own_scope(project, flow, node, scope)
  info = class_of(scope)
  attribute = _attribute_read(node) or _compared_attribute(
      project, node, scope)
  if info is None or attribute is None:
    return False
  opened: Set[str] = set()
  # Layers named under the attribute count as built in it only for a
  # filter of the attribute itself, not of a layer under it.
  named = attribute if _whole_attribute(node) else None
  family = [info, *project.subclasses(info)]
  around = [a for each in family for a in _scope_around.own_attributes(
      each, attribute, sorted(_own_names(project, each, attribute)))]
  kinds: List[Set[str]] = []
  for each in family:
    own = _own_names(project, each, attribute)
    for method in each.methods.values():
      if not _scope_around.opened_around(project, method, around):
        here: Set[str] = set()
        _opened(getattr(method.node, "body", []), attribute, own, here,
                named)
        kinds.append(here)
  # A family that names its layers under the attribute opens no scope of
  # its own: a layer made anywhere in it without that name (in another
  # method too) is outside, and so is a rebound attribute's older value.
  by_name = any("named" in here for here in kinds)
  if by_name and sum(len(each.assigned.get(f"self.{attribute}", []))
                     for each in family) != 1:
    return False
  for here in kinds:
    if not by_name and "own" not in here:  # Where a caller's scope holds.
      here.discard("unscoped")
    opened |= {"other" if kind == "unscoped" else "own" if kind == (
        "named") else kind for kind in here}
  return opened == {"own"} or _scope_around.made_inside(
      project, info, attribute)


def builds_unscoped(project: _project.Project, scope: _scopes.Scope
                    ) -> bool:
  """Whether a method of the class of `scope` (or of a subclass) makes a
  layer or a variable outside any `with` block (a backbone built before
  the object's own scope opens), which a filter by that scope leaves
  out."""
  info = class_of(scope)
  if info is None:
    return True
  for each in [info, *project.subclasses(info)]:
    for method in each.methods.values():
      if any(_unscoped_maker(s) for s in getattr(method.node, "body", [])):
        return True
  return False


def _unscoped_maker(statement: ast.stmt) -> bool:
  if isinstance(statement, (ast.With, ast.AsyncWith, ast.FunctionDef,
                            ast.AsyncFunctionDef, ast.ClassDef)):
    return False
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _MAKERS
             for n in ast.walk(statement))


# Calls that make variables where they run (TF1 layers and variables).
_MAKERS = frozenset({"dense", "conv2d", "conv1d", "conv3d",
                     "conv2d_transpose", "fully_connected", "embedding",
                     "batch_normalization", "batch_norm", "get_variable",
                     "Variable"})


def _trained_maker(statement: ast.stmt) -> bool:
  """Whether a statement (no block) makes a trainable layer or variable
  (`self.emb = tf.get_variable('emb', ...)`; not a step counter made
  `trainable=False`)."""
  if isinstance(statement, (ast.With, ast.AsyncWith, ast.FunctionDef,
                            ast.AsyncFunctionDef, ast.ClassDef)) or any(
                                True for _ in _scopes.blocks(statement)):
    return False
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _MAKERS
             and not any(k.arg == "trainable" and isinstance(
                 k.value, ast.Constant) and k.value.value is False
                         for k in n.keywords) for n in ast.walk(statement))


def _returns_own_scope(project: _project.Project, flow: Flow,
                       call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `call` calls a method (`model.get_params()`) each of whose
  returns collects its object's own scope."""
  callee = flow.callee(call, scope)
  if callee is None:
    return False
  found = flow.functions.get(id(callee))
  home = found[1].scope_of(callee) if found else None
  if home is None or home.cls is None:
    return False
  returned: List[ast.expr] = []
  for node in ast.walk(callee):
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
      returned += [d.value for d in home.defs.get(node.value.id, [])]
    elif isinstance(node, ast.Return) and node.value is not None:
      returned.append(node.value)
  collected = [r for r in returned if _attribute_read(r) is not None or (
      _compared_attribute(project, r, home) is not None)]
  return bool(collected) and all(keeps_own_scope(
      project, flow, r, home) for r in collected) and all(
          r in collected or _cached(r) for r in returned)


def _cached(value: ast.expr) -> bool:
  """Whether `value` is a list the object keeps (`self.params`,
  `list(self.params)`)."""
  if isinstance(value, ast.Call) and _names.call_name(value) == "list" and (
      len(value.args) == 1):
    value = value.args[0]
  return (_names.dotted(value) or "").startswith("self.")


def _attribute_read(node: ast.AST) -> Optional[str]:
  """`x` of a collecting call whose scope is `self.x` (or `self.x + "/"`,
  or `self.x.name` for a scope object kept on the object)."""
  if not isinstance(node, ast.Call) or _names.call_name(node) not in {
      "get_collection", "trainable_variables", "global_variables"}:
    return None
  for value in [*node.args, *(k.value for k in node.keywords)]:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and (
        isinstance(value.right, ast.Constant)):
      value = value.left
    dotted = _names.dotted(value) or ""
    if dotted.startswith("self.") and dotted.endswith(".name") and (
        dotted.count(".") == 2):  # A scope object's name.
      dotted = dotted[:-len(".name")]
    if dotted.startswith("self.") and dotted.count(".") == 1:
      return dotted[5:]
  return None


def _compared_attribute(project: _project.Project, node: ast.AST,
                        scope: _scopes.Scope) -> Optional[str]:
  """`name` of `[v for v in tf.trainable_variables() if name in v.name]`
  in a method `get_vars(self, name=None)` that sets `name = name or
  self.name`, when no call of the method in the project passes a name:
  the comprehension keeps the object's scope attribute `self.name` (or
  a dict comprehension over `t_vars = tf.trainable_variables()`, keyed by
  name)."""
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.DictComp)
                    ) or len(node.generators) != 1 or not isinstance(
                        scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  loop = node.generators[0]
  source = _every_variable(loop.iter, scope)
  if not isinstance(loop.target, ast.Name) or not isinstance(
      source, ast.Call) or _names.call_name(source) not in {
          "trainable_variables", "global_variables"} or source.args or (
              source.keywords) or len(loop.ifs) != 1:
    return None
  test = loop.ifs[0]
  if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not (
      isinstance(test.ops[0], ast.In)) or _names.dotted(
          test.comparators[0]) != f"{loop.target.id}.name":
    return None
  kept = test.left
  dotted = _names.dotted(kept) or ""
  if dotted.startswith("self.") and dotted.count(".") == 1:
    return dotted[5:]
  if not isinstance(kept, ast.Name) or kept.id not in scope.params:
    return None
  defs = scope.defs.get(kept.id, [])
  falls_back = [d.value for d in defs if isinstance(d.value, ast.BoolOp)
                and isinstance(d.value.op, ast.Or) and len(
                    d.value.values) == 2 and isinstance(
                        d.value.values[0], ast.Name) and (
                            d.value.values[0].id == kept.id)]
  if len(defs) != 1 or len(falls_back) != 1:
    return None
  own = _names.dotted(falls_back[0].values[1]) or ""
  if not own.startswith("self.") or own.count(".") != 1 or not (
      _never_passed(project, scope, kept.id)):
    return None
  return own[5:]


def _every_variable(node: ast.expr, scope: _scopes.Scope) -> ast.expr:
  """What a local name bound once holds (`t_vars =
  tf.trainable_variables()`), else `node`."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) == 1 and defs[0].value is not None:
      return defs[0].value
  return node


def _never_passed(project: _project.Project, scope: _scopes.Scope,
                  param: str) -> bool:
  """Whether `param` defaults to None and no call of the method `scope`
  in the project passes it (by keyword or position)."""
  assert isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef))
  args = scope.node.args
  names = [a.arg for a in args.args]
  defaults = dict(zip(names[len(names) - len(args.defaults):],
                      args.defaults))
  defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs,
                                             args.kw_defaults) if d)
  if not _names.is_none(defaults.get(param) or ast.Constant(0)):
    return False  # `name=...` of another default: not the object's own.
  # Its place among a bound method's arguments (a keyword-only one has
  # none).
  position = names.index(param) - 1 if param in names else 1 << 30
  for _, call in project.calls_named([scope.node.name]):
    if len(call.args) > position or any(
        k.arg in {param, None} for k in call.keywords):
      return False
  return True


def _own_names(project: _project.Project, info: _scopes.ClassInfo,
               attribute: str) -> Set[str]:
  """The names the attribute is made from where it is assigned (`scope`
  of `self.abs_scope = (... + '/' + scope).lstrip('/')`)."""
  return {n.id for value, _ in project.attribute(info, f"self.{attribute}")
          for n in ast.walk(value) if isinstance(n, ast.Name)}


def _opened(body: List[ast.stmt], attribute: str, own: Set[str],
            opened: Set[str], named: Optional[str] = None) -> None:
  """Adds "own" or "other" to `opened` for each scope the statements
  open outside any other scope (nested functions and classes aside); a
  layer that names its scope under the attribute `named`
  (`fully_connected(x, 64, scope=self._name_scope + "/fc1")`) is built
  in the own scope too."""
  for statement in body:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef)):
      continue
    if isinstance(statement, (ast.With, ast.AsyncWith)):
      if _own_blocks.opens_own(statement, attribute, own):
        opened.add("own")
        continue
      items = [i.context_expr for i in statement.items if isinstance(
          i.context_expr, ast.Call) and _names.call_name(
              i.context_expr) in _names.TF_SCOPES_OR_CLASS and not (
                  _own_blocks.names_nothing(i.context_expr))]
      if items:
        opened.update(_kind(i, attribute, own) for i in items)
        continue  # What it builds inside is under that scope.
    elif named and _named_elsewhere(statement, named):
      opened.add("other")
    elif _trained_maker(statement):  # Beside the own block: outside it.
      opened.add("named" if named and _named_under(statement, named) else (
          "unscoped"))
    for block in _scopes.blocks(statement):
      _opened(block, attribute, own, opened, named)


def _named_under(statement: ast.stmt, attribute: str) -> bool:
  """Whether every layer or variable the statement makes is given a
  scope under `self.<attribute>` (`scope=self._name_scope + "/fc1"`).

  >>> _named_under(ast.parse(
  ...     "h = fully_connected(x, 8, scope=self.s + '/fc1')").body[0], "s")
  True
  >>> _named_under(ast.parse(
  ...     "h = fully_connected(x, 8, scope='fc1')").body[0], "s")
  False
  """
  makers = [n for n in ast.walk(statement) if isinstance(n, ast.Call)
            and _names.call_name(n) in _MAKERS]
  return bool(makers) and all(any(
      k.arg == "scope" and _under(k.value, attribute) for k in n.keywords)
                              for n in makers)


def _named_elsewhere(statement: ast.stmt, attribute: str) -> bool:
  """Whether a statement (no block) calls anything but an op that makes
  no variable with a `scope=` or `name=` not under `self.<attribute>`
  (`linear(h, n, scope="fc_pi")`), or a layer maker with no scope.

  >>> _named_elsewhere(ast.parse(
  ...     "pi = linear(h, 4, scope='fc_pi')").body[0], "s")
  True
  >>> _named_elsewhere(ast.parse(
  ...     "x = tf.placeholder(tf.float32, name='x')").body[0], "s")
  False
  """
  if any(True for _ in _scopes.blocks(statement)):
    return False
  for call in ast.walk(statement):
    if not isinstance(call, ast.Call) or _names.call_name(
        call) in _NO_VARIABLES:
      continue
    given = [k.value for k in call.keywords if k.arg in {"scope", "name"}]
    if any(not _under(value, attribute) for value in given) or (
        not given and _names.call_name(call) in _LAYERS):
      return True
  return False


# Ops that make no variable, whatever their `name=`.
_NO_VARIABLES = frozenset({
    "placeholder", "placeholder_with_default", "constant", "group",
    "identity", "stop_gradient", "reshape", "concat", "polynomial_decay",
    "exponential_decay", "reduce_sum", "reduce_mean", "square", "log",
    "softmax", "one_hot", "gradients", "clip_by_global_norm"})
# Layer makers of `tf.contrib.layers` beside `_MAKERS`.
_LAYERS = _MAKERS | {"linear", "separable_conv2d", "layer_norm"}


def _under(value: ast.expr, attribute: str) -> bool:
  while isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    value = value.left
  return _names.dotted(value) == f"self.{attribute}"


def _whole_attribute(node: ast.AST) -> bool:
  """Whether a collecting call's scope is the attribute itself (`scope=
  self._name_scope`, or with a bare "/" after it), not a layer under it
  (`self._name_scope + "/fc_value"`)."""
  if not isinstance(node, ast.Call):
    return False
  for value in [*node.args, *(k.value for k in node.keywords)]:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
      right = value.right
      if not isinstance(right, ast.Constant) or not isinstance(
          right.value, str) or right.value.strip("/"):
        return False
  return True


def _kind(call: ast.Call, attribute: str, own: Set[str]) -> str:
  first = call.args[0] if call.args else None
  if first is not None and (_names.dotted(first) == f"self.{attribute}" or (
      isinstance(first, ast.Name) and first.id in own)):
    return "own"
  return "other"
