"""Whether a write before a step that a loop carries round writes into a
model the loop makes anew from its item: `for name in os.listdir(d):
model = load_model(join(d, name)); layer = model.get_layer("conv_3");
layer.set_weights([pruned, bias]); model.fit(x, y)`. The step the write
seems to follow (the last pass's `fit`) trained another model; this one
is written once, then trains freely (a pruning repair of each model in
a folder). So is a model the loop grows from the one the last pass
trained, handed on under another name after the step (`model2 =
build(previous_model=model)`, its new head's old columns set from
`model.layers[-1].get_weights()`, `model2.fit(...)`, `model = model2`:
class-incremental training), where what it writes is read out in the
pass. A model the loop reloads from one path, or goes on training, is
written after a step of its own. Part of `write-back` and
`weight-remask`.

Whether a write into a model comes before any step has trained it:
the writing function makes the model itself (`dgp = Model(inp, out)`;
`layer = dgp.get_layer("skip")`), its kernels' chosen lags zeroed and
set, whatever step its caller ran before the call (a simulation's
data-generating model, made anew on each call): an initialisation, not
saved values put back. A model handed in, or kept on `self`, may have
been trained by the caller's step."""

from __future__ import annotations

import ast
from typing import Dict, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies._clipped import base_name

# How many assignments back a written layer is followed to its model.
_HOPS = 4


def made_anew(write: ast.Call, target: ast.AST, scope: _scopes.Scope,
              when: Optional[Dict[str, object]]) -> bool:
  """Whether the step `write` is ordered after (`when["at"]`, a call after
  `write` in a loop around both) trains the model `target` belongs to,
  which the loop makes from its item before `write`."""
  step = when.get("at") if when is not None else None
  if isinstance(step, ast.AST) and not any(n is step for n in scope.nodes):
    return made_here(write, target, scope)  # The caller's step.
  if not isinstance(step, ast.Call) or step.lineno <= write.lineno or (
      not isinstance(step.func, ast.Attribute)):
    return False
  loop = _loop_around(scope, write, step)
  if loop is None:
    return False
  model = _names.root(step.func.value)
  made = _made_in(scope, loop, model, write)
  items = _from_item(scope, loop) - {model}
  if made is None or not any(isinstance(n, ast.Name) and n.id in items
                             for n in ast.walk(made)) and not (
      _grown_from_last(scope, loop, model, made, step) and _read_each_pass(
          scope, loop, write)):
    return False  # Not made from the loop's item: one model trained on.
  name = _names.root(target)
  for _ in range(_HOPS):  # `layer` of `layer = model.get_layer("c3")`.
    if name == model or name.split(".")[0] == model:
      return True  # Or the model's own attribute: `model.layers[-1]`.
    got = _made_in(scope, loop, name, write)
    if got is None or not isinstance(got.func, ast.Attribute):
      return False
    name = _names.root(got.func.value)
  return False


def _grown_from_last(scope: _scopes.Scope, loop: ast.For, model: str,
                     made: ast.Call, step: ast.AST) -> bool:
  """Whether `made` (the pass's model, `model2 = build(previous=model)`)
  is built from a name the loop sets to that model after its step
  (`model = model2`): each pass trains a new model grown from the last
  one, which the loop hands on under another name."""
  after = _idiom.position(step)
  for read in {n.id for n in ast.walk(made) if isinstance(n, ast.Name)}:
    if read != model and any(
        id(loop) in d.where.loops and d.start > after and isinstance(
            d.value, ast.Name) and d.value.id == model
        for d in scope.defs.get(read, [])):
      return True
  return False


def _read_each_pass(scope: _scopes.Scope, loop: ast.For,
                    write: ast.Call) -> bool:
  """Whether the weights `write` writes are read out in the pass itself
  (`weights = model2.layers[-1].get_weights()`, its columns set from
  `old = model.layers[-1].get_weights()`): every name its value reads,
  and every name holding a call's result that is stored into it, is
  bound only in the loop, ahead of the write, under no `if` the write
  is not under. A name bound after the write, or only on some passes,
  carries an earlier pass's value into this one."""
  values = [*write.args, *(k.value for k in write.keywords)]
  names = {n.id for v in values for n in ast.walk(v)
           if isinstance(n, ast.Name)}
  stored: Set[str] = set()
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and id(node) != id(write) and any(
        isinstance(t, ast.Subscript) and _names.base_name(t) in names
        for t in node.targets):
      stored |= {n.id for n in ast.walk(node.value)
                 if isinstance(n, ast.Name)}
  held = {name for name in stored if any(
      isinstance(d.value, ast.Call) for d in scope.defs.get(name, []))}
  inside, around = _blocks_around(loop, write)
  at = _idiom.position(write)
  return bool(names) and all(
      scope.defs.get(name) and all(
          id(loop) in d.where.loops and d.start < at and all(
              b in around for b in d.where.blocks if b in inside)
          for d in scope.defs[name])
      for name in names | held)


def _blocks_around(loop: ast.For, write: ast.AST) -> Tuple[Set[int],
                                                           Set[int]]:
  """(the ids of the nodes in `loop`, those of the nodes holding
  `write`)."""
  parents: Dict[int, ast.AST] = {}
  for outer in ast.walk(loop):
    for child in ast.iter_child_nodes(outer):
      parents[id(child)] = outer
  around: Set[int] = set()
  node: Optional[ast.AST] = write
  while node is not None and node is not loop:
    node = parents.get(id(node))
    if node is not None:
      around.add(id(node))
  return set(parents) | {id(loop)}, around


def _from_item(scope: _scopes.Scope, loop: ast.For) -> Set[str]:
  """The loop's item and the names its body assigns from it (`path =
  join(folder, name)`)."""
  found = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
  for _ in range(2):
    found |= {name for name, defs in scope.defs.items() for d in defs
              if id(loop) in d.where.loops and any(
                  isinstance(n, ast.Name) and n.id in found
                  for n in ast.walk(d.value))}
  return found


def _loop_around(scope: _scopes.Scope, write: ast.AST, step: ast.AST
                 ) -> Optional[ast.For]:
  """The innermost `for` of `scope` around both calls."""
  found: Optional[ast.For] = None
  for node in scope.nodes:
    if isinstance(node, ast.For) and _spans(node, write) and _spans(
        node, step) and (found is None or node.lineno > found.lineno):
      found = node
  return found


def _spans(node: ast.stmt, inner: ast.AST) -> bool:
  end = getattr(node, "end_lineno", None) or node.lineno
  return node.lineno < getattr(inner, "lineno", 0) <= end


def _made_in(scope: _scopes.Scope, loop: ast.For, name: str,
             write: ast.AST) -> Optional[ast.Call]:
  """The call the loop's body (alone) assigns `name` from, before
  `write` (a layer added to it, `model.add(Dense(n))`, binds no model)."""
  inside = [d for d in scope.defs.get(name, [])
            if id(loop) in d.where.loops and d.replaces]
  if len(inside) != 1:
    return None
  value = inside[0].value
  if not isinstance(value, ast.Call) or value.lineno >= getattr(
      write, "lineno", 0):
    return None
  return value


def made_here(call: ast.Call, target: ast.AST, scope: _scopes.Scope
              ) -> bool:
  """Whether the model `target` belongs to is made in `scope` before
  `call` (`dgp = Model(inp, out)`; `layer = dgp.get_layer("skip")`), by
  one assignment each: no step of the caller has trained it yet."""
  modules = _scopes.imported_names(scope)
  name: Optional[str] = base_name(target)
  for _ in range(_HOPS):
    defs = scope.defs.get(name or "", [])
    if name in scope.params or len(defs) != 1 or not isinstance(
        defs[0].value, ast.Call) or defs[0].start >= _idiom.position(call):
      return False
    made = defs[0].value
    assert isinstance(made, ast.Call)
    if not isinstance(made.func, ast.Attribute) or base_name(
        made.func) in modules:
      return True  # `Model(...)`, `ks.models.Model(...)`, `build()`.
    name = base_name(made.func.value)
  return False
