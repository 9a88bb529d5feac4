"""One scan's shared state: the project, its flow, and what the idioms ask
of a module (its lines, its statement structure, the calls of a scope),
each computed once."""

from __future__ import annotations

import ast
import re
from typing import (Callable, Dict, Iterable, Iterator, List, Optional, Set,
                    Tuple)

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _typed
from tfpartial._tools.scan._flow import Flow

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def lines_of(text: str) -> List[str]:
  """The lines of `text` as Python counts them (`\\n`, `\\r\\n`, `\\r`
  only: a form feed or U+2028 does not end a line), ends kept.

  >>> lines_of("a\\x0cb\\u2028c\\r\\nd")
  ['a\\x0cb\\u2028c\\r\\n', 'd']
  """
  found = _LINE.findall(text)
  return [line for line in found if line]


class Analysis:
  """The project, its flow and per-module facts, computed once."""

  def __init__(self, project: _project.Project):
    self.project = project
    self.flow = Flow(project)
    # The project class of an object reached indirectly (`_typed`).
    self.typed = _typed.Typed(project)
    self._orders: Dict[int, _order.Order] = {}
    self._lines: Dict[int, List[str]] = {}
    self._calls: Dict[int, List[ast.Call]] = {}
    self._contexts: Dict[int, _context.ModuleContext] = {}
    self._members: Dict[int, Set[int]] = {}
    self._once: Dict[str, object] = {}
    self._fetchers: Dict[int, List[Tuple[ast.Call, _scopes.Scope]]] = {}

  def once(self, key: str, compute: Callable[[], object]) -> object:
    """`compute()`, computed once per analysis under `key`."""
    if key not in self._once:
      self._once[key] = compute()
    return self._once[key]

  def calls_named(self, names: Iterable[str]
                  ) -> Iterator[Tuple[_scopes.Scope, ast.Call]]:
    """The calls spelled one of `names` in the modules that may hold a
    sink, with their scopes (only the functions naming one are read)."""
    return self.project.calls_named(names)

  def functions_named(self, names: Iterable[str]
                      ) -> Iterator[_scopes.Scope]:
    """The functions and methods named one of `names`."""
    return self.project.functions_named(names)

  def scopes_with(self, module: _project.Module, words: Iterable[str]
                  ) -> List[_scopes.Scope]:
    """The scopes of `module` whose text holds one of `words`."""
    return self.project.scopes_at(module, module.lines_of(words))

  def calls(self, scope: _scopes.Scope) -> List[ast.Call]:
    """The calls made directly in `scope`."""
    if id(scope) not in self._calls:
      self._calls[id(scope)] = [n for n in scope.nodes
                                if isinstance(n, ast.Call)]
    return self._calls[id(scope)]

  def module(self, scope: _scopes.Scope) -> _project.Module:
    return self.project.module_of(scope)

  def order(self, scope: _scopes.Scope) -> _order.Order:
    module = self.module(scope)
    if id(module) not in self._orders:
      assert module.tree is not None
      self._orders[id(module)] = _order.Order(module.tree, self.fetchers,
                                              self.order)
    return self._orders[id(module)]

  def fetchers(self, write: ast.Call, scope: _scopes.Scope
               ) -> List[Tuple[ast.Call, _scopes.Scope]]:
    """The `run`/`group` calls of the project (in any file) that fetch
    `write`, found by the names it is kept under."""
    if id(write) in self._fetchers:
      return self._fetchers[id(write)]
    self._fetchers[id(write)] = found = self._find_fetchers(write, scope)
    return found

  def _find_fetchers(self, write: ast.Call, scope: _scopes.Scope
                     ) -> List[Tuple[ast.Call, _scopes.Scope]]:
    names = _order.handles(write, self.order(scope))
    callers = self._returned(write, scope) if not names else []
    names += [n for place, call in callers
              for n in _order.handles(call, self.order(place))]
    if not names:
      return []
    here = self.module(scope)
    # Fetched in this file, in a caller's that keeps what a helper returns
    # (`fix = build(...)`), or in one that reads it as an attribute of
    # what it imports or builds (`model.clear_padding`).
    dotted = [f".{name}" for name in names]
    modules = [here]
    for place, _ in callers:
      if self.module(place) not in modules:
        modules.append(self.module(place))
    modules += [
        m for m in self.project.all_modules_with(names) if m not in modules
        and any(d in m.source.text for d in dotted)]
    calls: List[Tuple[_scopes.Scope, ast.Call]] = []
    for module in modules:
      near = set(module.lines_of(names))
      lines = [n for n in module.lines_of(_order.FETCHES)
               if near & set(range(n - 1, n + 12))]  # `for op in ops:`
      for place in self.project.scopes_at(module, lines):
        calls += [(place, c) for c in self.calls(place)
                  if _names.call_name(c) in _order.FETCHES]
    return _order.fetching(calls, write, names, self.flow,
                           lambda node: self.holds(here, node))

  def _returned(self, write: ast.Call, scope: _scopes.Scope
                ) -> List[Tuple[_scopes.Scope, ast.Call]]:
    """The project's calls of the function that returns `write`."""
    statement = self.order(scope).statement_of(write)
    if not isinstance(statement, ast.Return) or not isinstance(
        scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return []
    return self.flow.calls_of(scope.node)

  def lines(self, scope: _scopes.Scope) -> List[str]:
    module = self.module(scope)
    if id(module) not in self._lines:
      self._lines[id(module)] = lines_of(module.source.text)
    return self._lines[id(module)]

  def context(self, scope: _scopes.Scope) -> _context.ModuleContext:
    module = self.module(scope)
    if id(module) not in self._contexts:
      assert module.scope is not None
      self._contexts[id(module)] = _context.ModuleContext(module.scope)
    return self._contexts[id(module)]

  def holds(self, module: _project.Module, node: ast.AST) -> bool:
    """Whether `module`'s tree holds `node`."""
    if module.tree is None:
      return False
    if id(module) not in self._members:
      self._members[id(module)] = {id(n) for n in ast.walk(module.tree)}
    return id(node) in self._members[id(module)]
