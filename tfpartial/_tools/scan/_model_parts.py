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
from typing import Iterable, Iterator, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# Methods a Keras model (or a module) runs its parts in, in the order a
# model's forward is looked for.
FORWARD = ("call", "__call__", "forward")
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
    return any(called(model, scope) for model in _functional_models(
        node.id, scope))
  if not isinstance(node, ast.Attribute) or info is None or not (
      isinstance(node.value, ast.Name)) or node.value.id == "self":
    return False
  forward = next((info.methods[m] for m in FORWARD if m in info.methods),
                 None)
  if forward is None or not called(node.value.id, scope):
    return False
  parts = {stored(info, name) for name in self_attributes(forward.node)}
  parts = {name for name in parts if built(info, name)}
  return stored(info, node.attr) in parts and len(parts) > 1


def stored(info: _scopes.ClassInfo, name: str) -> str:
  """The attribute a property `name` of the class returns (`def trunk(self):
  return self._trunk` -> `_trunk`), else `name`.

  >>> tree = ast.parse("class M:\\n  @property\\n  def trunk(self):\\n"
  ...                  "    return self._trunk")
  >>> stored(_scopes.collect(tree).classes["M"], "trunk")
  '_trunk'
  """
  method = info.methods.get(name)
  if method is None or not any(
      (_names.dotted(d) or "").split(".")[-1] == "property"
      for d in getattr(method.node, "decorator_list", [])):
    return name
  returned = [n.value for n in method.nodes if isinstance(n, ast.Return)]
  found = self_names(v for v in returned if v is not None)
  return found.pop() if len(returned) == 1 and len(found) == 1 else name


def self_attributes(function: ast.AST) -> Set[str]:
  """The `x` of each `self.x` a function (a method) reads.

  >>> sorted(self_attributes(ast.parse("def call(self, x):\\n"
  ...                                  "  return self.head(self.body(x))")))
  ['body', 'head']
  """
  return self_names(ast.walk(function))


def self_names(nodes: Iterable[ast.AST]) -> Set[str]:
  """The `x` of each `self.x` among `nodes` (not inside them).

  >>> sorted(self_names(ast.parse("[self.a, b.c, self.d.e]").body[0]
  ...                   .value.elts))
  ['a']
  """
  return {node.attr for node in nodes if isinstance(
      node, ast.Attribute) and isinstance(node.value, ast.Name) and (
          node.value.id == "self")}


def built(info: _scopes.ClassInfo, name: str) -> bool:
  """Whether `self.name` is assigned a constructed object (a class
  called, `Dense(10)`), as layers and models are, or a dict of them
  (`{'human': Head()}`).

  >>> tree = ast.parse("class M:\\n  def __init__(self):\\n"
  ...                  "    self.head = Dense(1)\\n    self.n = 3\\n"
  ...                  "    self.heads = {k: Dense(1) for k in 'ab'}")
  >>> info = _scopes.collect(tree).classes["M"]
  >>> built(info, "head"), built(info, "n"), built(info, "heads")
  (True, False, True)
  """
  return any(constructed(value) or _all_constructed(value)
             for value, _ in info.attributes.get(f"self.{name}", ()))


def _all_constructed(value: ast.AST) -> bool:
  """Whether `value` is a dict whose values are all constructed."""
  if isinstance(value, ast.DictComp):
    return constructed(value.value)
  return isinstance(value, ast.Dict) and bool(value.values) and all(
      constructed(v) for v in value.values)


def constructed(value: ast.AST) -> bool:
  """Whether `value` calls a class (a name that starts with a capital
  letter: `Dense(10)`, `layers.Conv2D(8, 3)`), as a layer or a model is
  made.

  >>> constructed(ast.parse("layers.Dense(4)").body[0].value)
  True
  >>> constructed(ast.parse("tf.matmul(a, b)").body[0].value)
  False
  """
  return isinstance(value, ast.Call) and _names.call_name(value)[:1].isupper()


def called(name: str, scope: _scopes.Scope) -> bool:
  """Whether the function `scope` calls `name(...)` itself (a plain
  name, not a method; not in the functions inside it).

  >>> tree = ast.parse("def step(x):\\n  return model(x)")
  >>> called("model", _scopes.collect(tree).scopes[id(tree.body[0])])
  True
  """
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
  return bool(defs) and all(constructed(d.value) for d in defs)


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
  inline = any(isinstance(n.func, ast.Call) and constructed(n.func)
               for n in called)
  return part in names and (inline or any(
      _is_constructed(other, scope) for other in names - {part}))
