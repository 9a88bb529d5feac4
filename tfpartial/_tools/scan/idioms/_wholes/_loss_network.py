"""Whether a step's function runs a loss network: a network run in
inference mode (`phase_train=False`) on what another network of the
function produced (`network.inference(concat([images, reconstructed]))`
of `reconstructed = vae.decoder(latent)`), whose outputs reach the
step's loss and no other network. Such a network (a perceptual loss's
pretrained classifier, a teacher) only measures what the trained one
makes; a filter that leaves it out leaves no part of the model out.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# How far a value is followed through the function's assignments.
_DEPTH = 12
# The keywords that tell a network whether it trains.
_TRAINING_FLAGS = {"is_training", "training", "phase_train", "train"}
# The keywords a network is given its input by.
_INPUT_KEYWORDS = {"inputs", "images", "input", "x"}


def runs_one(scope: _scopes.Scope, loss: ast.AST, steps: Set[str]
             ) -> bool:
  """Whether `scope` (the step's function) runs a loss network that its
  step's `loss` reads (`steps`: the names of the calls that train)."""
  if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  read = _calls_read(scope, loss)
  for call in _networks(scope, steps):
    if _inference(call) and id(call) in read and any(
        _networks_in(scope, a, steps) - {id(call)}
        for a in _inputs(call)) and not _feeds_network(
            scope, call, steps, read):
      return True
  return False


def _networks(scope: _scopes.Scope, steps: Set[str]) -> Iterator[ast.Call]:
  """The calls of a method of an object the function makes
  (`vae.decoder(z)` of `vae = ...Vae(n)`), or of a function told whether
  it trains (`vgg_19(inputs=x, is_training=False)`), steps aside: the
  networks it runs."""
  imported = _imported(scope)
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id not in steps) and any(
            k.arg in _TRAINING_FLAGS for k in node.keywords):
      yield node
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and isinstance(
            node.func.value, ast.Name) and (
                node.func.value.id in scope.defs) and (
                    node.func.attr not in steps) and (
                        node.func.value.id not in imported):
      yield node


def _imported(scope: _scopes.Scope) -> Set[str]:
  """The names the module imports (`np`: `np.append(a, v)` adds to no
  list of the function's)."""
  while scope.parent is not None:
    scope = scope.parent
  return {(a.asname or a.name).split(".")[0]
          for i in scope.imports for a in i.names}


def _inputs(call: ast.Call) -> List[ast.expr]:
  """What a network call runs on: its first argument, or its input by
  keyword (`inputs=`, `images=`)."""
  return call.args[:1] or [k.value for k in call.keywords
                           if k.arg in _INPUT_KEYWORDS][:1]


def _inference(call: ast.Call) -> bool:
  """`phase_train=False`, `is_training=False`, `training=False`."""
  return any(k.arg and "train" in k.arg and isinstance(
      k.value, ast.Constant) and k.value.value is False
             for k in call.keywords)


def _calls_read(scope: _scopes.Scope, expr: ast.AST) -> Set[int]:
  """The calls whose results `expr` reads through the function's
  assignments."""
  found: Set[int] = set()
  seen = _imported(scope)
  owned = scope.cls.assigned if scope.cls is not None else {}
  todo: List[ast.AST] = [expr]
  for _ in range(_DEPTH):
    names: List[str] = []
    todo_next: List[ast.AST] = []
    for part in todo:
      for node in ast.walk(part):
        if isinstance(node, ast.Call):
          found.add(id(node))
        elif isinstance(node, ast.Name) and node.id not in seen:
          seen.add(node.id)
          names.append(node.id)
          todo_next += _run_for_object(scope, node.id)
        elif isinstance(node, ast.Attribute) and owned and isinstance(
            node.value, ast.Name) and node.value.id == "self" and (
                f"self.{node.attr}" not in seen):
          seen.add(f"self.{node.attr}")  # Kept on the object: its values.
          names.append(f"self.{node.attr}")
    todo = [d.value for n in names for d in scope.defs.get(n, [])]
    todo += [v for n in names for v, _ in owned.get(n, [])] + todo_next
    if not todo:
      break
  return found


def _run_for_object(scope: _scopes.Scope, name: str) -> List[ast.AST]:
  """The calls of `name`'s methods whose results the function drops
  (`_ = net.transform(x)`, then `net.features`): what they make reaches
  a reader of the object through what it keeps. Only an object the
  function makes by a call (`net = Net('judge')`): a list filled by
  `append` is no network."""
  defs = scope.defs.get(name, ())
  if not defs or not all(isinstance(d.value, ast.Call) for d in defs):
    return []
  dropped = scope.once((_run_for_object, None, 0), lambda: [
      node.value for node in scope.nodes
      if isinstance(node, (ast.Expr, ast.Assign)) and isinstance(
          node.value, ast.Call) and isinstance(
              node.value.func, ast.Attribute) and isinstance(
                  node.value.func.value, ast.Name) and (
                      isinstance(node, ast.Expr) or all(
                          isinstance(t, ast.Name) and t.id == "_"
                          for t in node.targets))])
  return [c for c in dropped if isinstance(c, ast.Call) and (
      _names.dotted(c.func) or "").split(".")[0] == name]


def _networks_in(scope: _scopes.Scope, expr: ast.AST, steps: Set[str]
                 ) -> Set[int]:
  """The network calls whose results `expr` reads."""
  read = _calls_read(scope, expr)
  return {id(c) for c in _networks(scope, steps) if id(c) in read}


def _feeds_network(scope: _scopes.Scope, call: ast.Call, steps: Set[str],
                   read: Set[int]) -> bool:
  """Whether another network whose results the loss reads (`read`) reads
  `call`'s results: then it is a part of the model, not its measure."""
  return any(id(call) in _calls_read(scope, a)
             for other in _networks(scope, steps)
             if other is not call and id(other) in read
             for a in [*other.args, *(k.value for k in other.keywords)])
