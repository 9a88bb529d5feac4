"""TF1 gradients kept on an object, or under a name, and only ever
fetched by `run` (`self.grads = opt.compute_gradients(cost, [w1, w2])`,
run from a notebook to square into a Fisher in NumPy; `grad1 =
tf.gradients(loss, weights[0])[0]` fetched beside the train op to be
printed): they leave the graph as numbers and train nothing, so the variables their list leaves out are
left out of no step. A step that applies fetched numbers fed back in
is a step of its own, with its own list. Gradients read by anything but
a fetch (applied, clipped, passed on) keep their step."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_GRADIENTS = {"compute_gradients", "gradients"}


def only_fetched(call: ast.Call, scope: _scopes.Scope,
                 analysis: Analysis) -> bool:
  """Whether `call`'s gradients (or an entry of them) are kept as
  `self.name` or a name and every read of `.name` (of the name) in the
  project is a fetch of a `run` (its first argument, or inside the lists
  and dicts it is built of)."""
  if _names.call_name(call) not in _GRADIENTS:
    return False
  kept = _kept_as(call, scope, analysis)
  if kept is None:
    return False
  name, attribute = kept
  fetched = analysis.once(f"fetched_out:reads:{name}:{attribute}",
                          lambda: _only_fetches(analysis, name, attribute))
  return fetched is True


def _only_fetches(analysis: Analysis, name: str, attribute: bool) -> bool:
  """Whether the project reads `.name` (`name`, when not `attribute`:
  in any module, the same word read elsewhere counts too) somewhere and
  only in fetches."""
  project = analysis.project
  reads = 0
  for module in project.all_modules_with([name]):
    parsed = project.parsed(module)
    if parsed is None:
      continue
    fetched: Set[int] = set()
    nodes = list(_scopes.walk(parsed.node))
    for node in nodes:
      if isinstance(node, ast.Call) and _names.call_name(node) == "run":
        fetched.update(id(n) for n in _fetches(node))
    for node in nodes:
      if (isinstance(node, ast.Attribute) and attribute and (
          node.attr == name) or isinstance(node, ast.Name) and not (
              attribute) and node.id == name) and isinstance(
                  node.ctx, ast.Load):
        if id(node) not in fetched:
          return False  # Applied, passed on, aliased: a step's.
        reads += 1
  return reads > 0


def _kept_as(call: ast.Call, scope: _scopes.Scope,
             analysis: Analysis) -> Optional[Tuple[str, bool]]:
  """(the attribute, True) `call` or an entry of what it returns is
  assigned to (`self.grads = call`), or (the name, False) (`grad =
  call[0]`), if that is the only target."""
  kept = analysis.once(f"fetched_out:{id(scope)}", lambda: _kept(scope))
  assert isinstance(kept, dict)
  return kept.get(id(call))


def _kept(scope: _scopes.Scope) -> Dict[int, Tuple[str, bool]]:
  """Each value `scope` assigns to one `self.name` or name -> (the name,
  whether an attribute); a value subscripted (`call[0]`) is its call's."""
  found: Dict[int, Tuple[str, bool]] = {}
  for node in _scopes.walk(scope.node):
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
      target, value = node.targets[0], node.value
      while isinstance(value, ast.Subscript):
        value = value.value
      if isinstance(target, ast.Attribute) and isinstance(
          target.value, ast.Name) and target.value.id == "self":
        found[id(value)] = (target.attr, True)
      elif isinstance(target, ast.Name):
        found[id(value)] = (target.id, False)
  return found


def _fetches(run: ast.Call) -> Iterator[ast.expr]:
  """The expressions `run` fetches: its first argument or `fetches=`,
  and the elements of the lists, tuples and dicts it is made of."""
  pending = list(run.args[:1]) + [
      k.value for k in run.keywords if k.arg == "fetches"]
  while pending:
    each = pending.pop()
    yield each
    if isinstance(each, (ast.List, ast.Tuple, ast.Set)):
      pending.extend(each.elts)
    elif isinstance(each, ast.Dict):
      pending.extend(each.values)
