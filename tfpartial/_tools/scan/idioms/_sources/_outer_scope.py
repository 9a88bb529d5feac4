"""Whether a step trains the scope that a model function opens around
its whole model, as canned Estimators write it: `def _model_fn(features,
labels, mode, ...)`, `with tf.variable_scope(parent_scope, values=...)
as scope:` around the call that builds the logits, `absolute_scope =
scope.name` in that same block, and the train op built in a nested
function (`def _train_op_fn(loss): optimizer.minimize(loss,
var_list=tf.get_collection(TRAINABLE_VARIABLES, scope=absolute_scope))`).

What is checked: the `with` is the one whose block holds the `scope.name`
binding; the function takes `features` (a model function's signature);
every call in that block calls a function, not a value: a dotted path
from an imported module (`tf.layers.dense`), an imported or defined
function (`_build_logits(...)`), or a layer built there
(`tf.keras.layers.Dense(2)(net)`), never `params["backbone"](...)` or
`backbone(...)`; and every value that block reads comes from no
network-building call: a parameter of the function itself (what the
Estimator passes) that it writes nothing into before the block (not
`features["net"] = tf.layers.dense(...)`), a name the function binds
without any call (`is_training = mode == TRAIN`), a module-level name
bound without a call (not `backbone = hub.Module(...)`), never a
parameter of a function around it (`def make_model_fn(backbone):`), and
no `self.` attribute (not a `self.backbone` built in `__init__`). A
backbone built before the block, in the function, at module level, on
`self`, handed in by `params` or a closure, and read by the scoped head
keeps the step found; so does a helper taking the backbone's output as
a parameter (`def add_head(net, labels, ...)`: it takes no
`features`). Part of `var-list-filter` (`_train_step._opened_here`)."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def opened_around(chosen: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `chosen` (a name read in `home`) is `scope.name` of a `with
  tf.variable_scope(...) as scope:` that `home` or a function around it
  opens around what it builds, from its parameters alone."""
  if not isinstance(chosen, ast.Name):
    return False
  owner: Optional[_scopes.Scope] = home
  while owner is not None and chosen.id not in owner.defs:
    owner = owner.parent
  if owner is None or not isinstance(owner.node, _FUNCTIONS):
    return False
  defs = owner.defs[chosen.id]
  value = defs[0].value if len(defs) == 1 else None
  if not isinstance(value, ast.Attribute) or value.attr != "name" or (
      not isinstance(value.value, ast.Name)):
    return False
  alias = value.value.id
  params = _parameters(owner.node)
  if "features" not in params:
    return False  # Not a model function: a parameter may be a backbone.
  return any(_opens_as(n, alias) and _holds(n, value) and (
      _built_from_inputs(n, owner)) for n in owner.nodes
             if isinstance(n, ast.With))


def _parameters(node: ast.AST) -> List[str]:
  args = getattr(node, "args", None)
  return [a.arg for a in [*args.posonlyargs, *args.args,
                          *args.kwonlyargs]] if args else []


def _holds(statement: ast.With, value: ast.expr) -> bool:
  """Whether the `with` block holds `value` (the `scope.name` read)."""
  return any(n is value for s in statement.body for n in ast.walk(s))


def _opens_as(statement: ast.With, alias: str) -> bool:
  """`with tf.variable_scope(...) as alias:` around a call."""
  return any(isinstance(i.context_expr, ast.Call) and _names.call_name(
      i.context_expr) in _names.TF_SCOPES and isinstance(
          i.optional_vars, ast.Name) and i.optional_vars.id == alias
             for i in statement.items) and any(
                 isinstance(c, ast.Call) for s in statement.body
                 for c in _scopes.walk(s))


def _built_from_inputs(statement: ast.With, owner: _scopes.Scope) -> bool:
  """Whether every call the `with` block makes calls a function and
  every value it reads comes from no call that could build a network
  (see the module)."""
  bound: Set[str] = {n.id for s in [*statement.body, *(
      i.optional_vars for i in statement.items if i.optional_vars)]
                     for n in ast.walk(s) if isinstance(n, ast.Name) and (
                         isinstance(n.ctx, ast.Store))}
  nodes = [n for s in statement.body for n in ast.walk(s)]
  if any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and (
      n.value.id == "self") for n in nodes):
    return False
  known = _scopes.imported_names(owner) | _defined(owner)
  if not all(_calls_function(n.func, known, bound) for n in nodes
             if isinstance(n, ast.Call)):
    return False  # `params["backbone"](x)`, `backbone(x)`: a value's call.
  read = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(
      n.ctx, ast.Load) and n.id not in bound}
  written = _written_before(owner, statement.lineno)
  for name in read:
    if name in owner.params:
      if name in written:
        return False  # `features["net"] = dense(...)` before the block.
      continue
    where: Optional[_scopes.Scope] = owner
    while where is not None and name not in where.defs:
      if where is not owner and name in where.params:
        return False  # A closure's parameter: built by whoever calls.
      where = where.parent
    for each in where.defs.get(name, ()) if where is not None else ():
      if isinstance(each.value, ast.expr) and any(
          isinstance(c, ast.Call) for c in ast.walk(each.value)):
        return False
  return True


def _defined(owner: _scopes.Scope) -> Set[str]:
  """The functions and classes `owner`, or a scope around it, defines."""
  names: Set[str] = set()
  where: Optional[_scopes.Scope] = owner
  while where is not None:
    names |= set(where.functions) | set(where.classes)
    where = where.parent
  return names


def _calls_function(func: ast.expr, known: Set[str], bound: Set[str]
                    ) -> bool:
  """Whether a call's `func` is a function: a name imported or defined
  (`known`, not rebound in the block), a dotted path from an imported
  name (`tf.layers.dense`), or a call of one (a layer built there)."""
  if isinstance(func, ast.Call):
    return _calls_function(func.func, known, bound)
  while isinstance(func, ast.Attribute):
    func = func.value
  return isinstance(func, ast.Name) and func.id in known and (
      func.id not in bound)


def _written_before(owner: _scopes.Scope, line: int) -> Set[str]:
  """The names `owner` writes into or rebinds before `line`
  (`features["net"] = ...`, `features.update(...)`, `features = ...`),
  read once per block."""
  written: Set[str] = owner.once(("written before", None, line),
                                 lambda: _writes(owner, line))
  return written


def _writes(owner: _scopes.Scope, line: int) -> Set[str]:
  written: Set[str] = set()
  for node in owner.nodes:
    target: ast.AST
    if getattr(node, "lineno", line) >= line:
      continue
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in ("update", "setdefault", "pop"):
      target = node.func.value
    elif isinstance(node, (ast.Subscript, ast.Attribute, ast.Name)) and (
        not isinstance(node.ctx, ast.Load)):
      target = node
    else:
      continue
    while isinstance(target, (ast.Subscript, ast.Attribute)):
      target = target.value
    if isinstance(target, ast.Name):
      written.add(target.id)
  return written
