"""TF1 gradients kept on an object and only ever fetched by `run`
(`self.grads = opt.compute_gradients(cost, [w1, w2])`, run from a
notebook to square into a Fisher in NumPy): they leave the graph as
numbers and train nothing, so the variables their list leaves out are
left out of no step. A step that applies fetched numbers fed back in
is a step of its own, with its own list. Gradients read by anything but
a fetch (applied, clipped, passed on, given to a `run` of the project's
own, read by `getattr`) keep their step, and so do all of them in a
project that may read attributes unnamed (`getattr` of a built name,
`vars`, `__dict__`, `eval`) or holds a module that does not parse."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_GRADIENTS = {"compute_gradients", "gradients"}
# The words of a module that may read an attribute without naming it.
_UNNAMED = ("getattr", "vars", "__dict__", "exec", "eval")


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
  """Whether the project reads `.name` somewhere and only in fetches,
  and no module may read it unnamed (`getattr`, `vars`, `__dict__`)."""
  project = analysis.project
  reads = 0
  for module in project.all_modules_with([name]):
    parsed = project.parsed(module)
    if parsed is None:
      return False  # Unread: its reads are unknown.
    fetched: Set[int] = set()
    nodes = list(_scopes.walk(parsed.node))
    for node in nodes:
      if isinstance(node, ast.Call) and _names.call_name(node) == "run" and (
          not _the_projects(node, module, analysis)):
        fetched.update(id(n) for n in _fetches(node))
    for node in nodes:
      if _getattr_of(node, name):
        return False
      if isinstance(node, ast.Attribute) and node.attr == name and (
          isinstance(node.ctx, ast.Load)):
        if id(node) not in fetched:
          return False  # Applied, passed on, aliased: a step's.
        reads += 1
  return reads > 0 and not analysis.once(
      "fetched_out:unnamed", lambda: _reads_unnamed(project))


def _the_projects(run: ast.Call, module: _project.Module,
                  analysis: Analysis) -> bool:
  """Whether `run` calls a function of the project (which may apply what
  it is given), not a session's `run` (a library's, unresolved)."""
  scopes = analysis.project.scopes_at(module, [run.lineno])
  return not scopes or analysis.flow.callee(run, scopes[0]) is not None


def _getattr_of(node: ast.AST, name: str) -> bool:
  """Whether `node` is `getattr(x, "name")`: a read no fetch holds."""
  return isinstance(node, ast.Call) and isinstance(
      node.func, ast.Name) and node.func.id == "getattr" and len(
          node.args) > 1 and isinstance(node.args[1], ast.Constant) and (
              node.args[1].value == name)


def _reads_unnamed(project: _project.Project) -> bool:
  """Whether a module of the project may read attributes unnamed
  (`_unnamed`): read once
  a project, from the trees of the modules that write such a word (an
  unparsed one may too)."""
  for module in project.all_modules_with(_UNNAMED):
    tree = project.parsed(module)
    if tree is None or any(_unnamed(n) for n in _scopes.walk(tree.node)):
      return True
  return False


def _unnamed(node: ast.AST) -> bool:
  """Whether `node` may read an attribute it does not name: `getattr` of
  a name not a literal, `vars(...)`, `x.__dict__`, `eval` or `exec`."""
  if isinstance(node, ast.Attribute):
    return node.attr == "__dict__"
  if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
    return False
  if node.func.id == "getattr":
    return len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
  return node.func.id in {"vars", "eval", "exec"}


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
