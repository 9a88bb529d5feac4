"""TF1 gradients kept on an object and only ever fetched by `run`
(`self.grads = opt.compute_gradients(cost, [w1, w2])`, run from a
notebook to square into a Fisher in NumPy): they leave the graph as
numbers and train nothing, so the variables their list leaves out are
left out of no step. A step that applies fetched numbers fed back in
is a step of its own, with its own list. Gradients read by anything but
a fetch (applied, clipped, passed on, given to a `run` of the project's
own, read by a getter naming it: `getattr`, `builtins.getattr`,
`operator.attrgetter`, `__getattribute__`) keep their step, and so do
all of them in a project that may read attributes unnamed (`vars`,
`__dict__`, `eval`, `exec`, a getter of a built name in the gradients'
module or one importing it, not on an imported module as in
`getattr(tf.nn, name)`: `_unnamed`) or holds a module that does not
parse."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _unnamed

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
  owner = analysis.module(scope)
  fetched = analysis.once(f"fetched_out:reads:{name}:{id(owner)}",
                          lambda: _only_fetches(analysis, name, owner))
  return fetched is True


def _only_fetches(analysis: Analysis, name: str,
                  owner: _project.Module) -> bool:
  """Whether the project reads `.name` somewhere and only in fetches,
  and no module may read it unnamed (`_unnamed.project_reads`) where
  it may reach `owner`, the module keeping it."""
  project = analysis.project
  reads = 0
  for module in project.all_modules_with([name]):
    index = _index(analysis, module)
    if index is None:
      return False  # Unread: its reads are unknown.
    fetched, loads, named = index
    if name in named:
      return False  # A getter naming it: a read no fetch holds.
    for node in loads.get(name, ()):
      if id(node) not in fetched:
        return False  # Applied, passed on, aliased: a step's.
      reads += 1
  unnamed = _unnamed.project_reads(analysis)
  return reads > 0 and not (unnamed.unparsed or unnamed.objects) and (
      id(owner) not in unnamed.modules | unnamed.others)


# What a module reads of attributes: the ids of the expressions its
# sessions' runs fetch, its attribute loads by name, and the names its
# getters are given as literals.
_Index = Tuple[Set[int], Dict[str, List[ast.Attribute]], Set[str]]


def _index(analysis: Analysis, module: _project.Module
           ) -> Optional[_Index]:
  """`module`'s `_Index`, read once a scan however many names it keeps;
  None when it does not parse."""
  def find() -> Optional[_Index]:
    parsed = analysis.project.parsed(module)
    if parsed is None:
      return None
    fetched: Set[int] = set()
    loads: Dict[str, List[ast.Attribute]] = {}
    named: Set[str] = set()
    for node in _scopes.walk(parsed.node):
      if isinstance(node, ast.Call) and _names.call_name(node) == "run" and (
          not _the_projects(node, module, analysis)):
        fetched.update(id(n) for n in _fetches(node))
      if isinstance(node, ast.Call) and _unnamed.getter(node):
        named.update(a.value for a in node.args if isinstance(
            a, ast.Constant) and isinstance(a.value, str))
      if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        loads.setdefault(node.attr, []).append(node)
    return fetched, loads, named
  found = analysis.once(f"fetched_out:index:{id(module)}", find)
  return found if isinstance(found, tuple) else None


def _the_projects(run: ast.Call, module: _project.Module,
                  analysis: Analysis) -> bool:
  """Whether `run` calls a function of the project (which may apply what
  it is given), not a session's `run` (a library's, unresolved)."""
  scopes = analysis.project.scopes_at(module, [run.lineno])
  return not scopes or analysis.flow.callee(run, scopes[0]) is not None


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
