"""One part of a Keras model trained while the whole model runs.

`grads = tape.gradient(loss, model.head.trainable_variables)` where
`loss` reads `model(x)` and the model's `call` runs `self.backbone`
before `self.head`; or `head.trainable_variables` where `model =
keras.Model(inputs, head(backbone(inputs)))` is what the function runs:
the step trains the head, the backbone stays as it is. The part is a
layer or model the project builds (a class called), the model runs it
with another such part, and the function the step is in calls the model.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Methods a Keras model (or a module) runs its parts in.
_FORWARD = ("call", "__call__", "forward")
# Constructors of a functional model from its inputs and outputs.
_FUNCTIONAL = {"Model", "Functional"}


def part_of_run_model(node: ast.expr, info: Optional[_scopes.ClassInfo],
                      scope: _scopes.Scope) -> bool:
  """Whether `node` (`owner.part`, `info` the owner's class, or a name
  `part`) is one part of a model the function `scope` runs beside
  another part.

  >>> tree = ast.parse(
  ...     "body = Dense(4)\\nhead = Dense(1)\\n"
  ...     "model = Model(x, head(body(x)))\\n"
  ...     "def step(x):\\n  return model(x), head.trainable_variables")
  >>> module = _scopes.collect(tree)
  >>> step = module.scope_of(tree.body[3])
  >>> part_of_run_model(tree.body[3].body[0].value.elts[1].value, None, step)
  True
  """
  if isinstance(node, ast.Name):
    return any(_called(model, scope) for model in _functional_models(
        node.id, scope))
  if not isinstance(node, ast.Attribute) or info is None or not (
      isinstance(node.value, ast.Name)) or node.value.id == "self":
    return False
  forward = next((info.methods[m] for m in _FORWARD if m in info.methods),
                 None)
  if forward is None or not _called(node.value.id, scope):
    return False
  run = _self_attributes(forward.node)
  built = {name for name in run if _built(info, name)}
  return node.attr in built and len(built) > 1


def _self_attributes(function: ast.AST) -> Set[str]:
  """The `self.x` a method reads."""
  return {n.attr for n in ast.walk(function) if isinstance(
      n, ast.Attribute) and isinstance(n.value, ast.Name) and (
          n.value.id == "self")}


def _built(info: _scopes.ClassInfo, name: str) -> bool:
  """Whether `self.name` is assigned a constructed object (a class
  called, `Dense(10)`), as layers and models are."""
  return any(_constructed(value) for value, _ in info.attributes.get(
      f"self.{name}", ()))


def _constructed(value: ast.AST) -> bool:
  return isinstance(value, ast.Call) and _names.call_name(value)[:1].isupper()


def _called(name: str, scope: _scopes.Scope) -> bool:
  """Whether the function calls `name(...)`."""
  return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and (
      n.func.id == name) for n in scope.nodes)


def _functional_models(part: str, scope: _scopes.Scope) -> Iterator[str]:
  """The names bound, in `scope` or around it, to a functional model
  whose outputs run the constructed `part` and another constructed
  layer (`Model(x, head(body(x)))`)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if _is_constructed(part, place):
      for name, defs in place.defs.items():
        if any(_runs_with_another(d.value, part, place) for d in defs):
          yield name
      return
    place = place.parent


def _is_constructed(name: str, scope: _scopes.Scope) -> bool:
  defs = scope.defs.get(name, [])
  return bool(defs) and all(_constructed(d.value) for d in defs)


def _runs_with_another(value: ast.AST, part: str,
                       scope: _scopes.Scope) -> bool:
  """Whether `value` is `Model(inputs, outputs)` whose outputs call
  `part` and another constructed layer (by name or inline)."""
  if not isinstance(value, ast.Call) or _names.call_name(
      value) not in _FUNCTIONAL:
    return False
  called: List[ast.Call] = [n for n in ast.walk(value) if isinstance(
      n, ast.Call) and n is not value]
  names = {n.func.id for n in called if isinstance(n.func, ast.Name)}
  inline = any(isinstance(n.func, ast.Call) and _constructed(n.func)
               for n in called)
  return part in names and (inline or any(
      _is_constructed(other, scope) for other in names - {part}))
