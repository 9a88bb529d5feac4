"""TF1 gradients kept on an object and only ever fetched by `run`
(`self.grads = opt.compute_gradients(cost, [w1, w2])`, run from a
notebook to square into a Fisher in NumPy): they leave the graph as
numbers and train nothing, so the variables their list leaves out are
left out of no step. A step that applies fetched numbers fed back in
is a step of its own, with its own list. Gradients read by anything but
a fetch (applied, clipped, passed on) keep their step."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_GRADIENTS = {"compute_gradients", "gradients"}


def only_fetched(call: ast.Call, scope: _scopes.Scope,
                 analysis: Analysis) -> bool:
  """Whether `call`'s gradients are kept as `self.name` and every read of
  `.name` in the project is a fetch of a `run` (its first argument, or
  inside the lists and dicts it is built of)."""
  if _names.call_name(call) not in _GRADIENTS:
    return False
  name = _kept_as(call, scope, analysis)
  if name is None:
    return False
  fetched = analysis.once(f"fetched_out:reads:{name}",
                          lambda: _only_fetches(analysis, name))
  return fetched is True


def _only_fetches(analysis: Analysis, name: str) -> bool:
  """Whether the project reads `.name` somewhere and only in fetches."""
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
      if isinstance(node, ast.Attribute) and node.attr == name and (
          isinstance(node.ctx, ast.Load)):
        if id(node) not in fetched:
          return False  # Applied, passed on, aliased: a step's.
        reads += 1
  return reads > 0


def _kept_as(call: ast.Call, scope: _scopes.Scope,
             analysis: Analysis) -> Optional[str]:
  """The attribute `call` is assigned to (`self.grads = call`), if that
  is the only target."""
  kept = analysis.once(f"fetched_out:{id(scope)}", lambda: _kept(scope))
  assert isinstance(kept, dict)
  return kept.get(id(call))


def _kept(scope: _scopes.Scope) -> Dict[int, str]:
  """Each value `scope` assigns to one `self.name` -> the name."""
  found: Dict[int, str] = {}
  for node in _scopes.walk(scope.node):
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
      target = node.targets[0]
      if isinstance(target, ast.Attribute) and isinstance(
          target.value, ast.Name) and target.value.id == "self":
        found[id(node.value)] = target.attr
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
