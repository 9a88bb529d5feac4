"""Writes of every weight of a layer at once: a model's `set_weights(
weights)` after a pruning round zeroed some of a mask's entries in the
list `get_weights()` gave, `load_weights(path)` of a pruned model. A mask
variable that a layer keeps (`self.m = self.add_weight(...,
initializer="ones", trainable=False)`) is written so even though no line
names it: the write reaches it from the module that defines its class or
from one that imports the class (`from .layers import CustomConvLayer`).

A variable of ones that nothing writes, by name or so, stays all ones:
its product with the kernel masks nothing; nor does a write in a method
nothing calls (a notebook that defines its pruning rounds and trains
without running one)."""

from __future__ import annotations

import ast
import re
from typing import Iterable, Optional

from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# Writes of every weight a model or layer holds, from values the code made.
MADE = ("set_weights",)
# The same, and restores of saved values (a pruned model's file).
ANY = ("set_weights", "load_weights", "restore")


def owner_class(scope: _scopes.Scope) -> Optional[_scopes.ClassInfo]:
  """The class whose method `scope` is (or is inside), or None."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  return place.cls if place is not None else None


def written_whole(scope: _scopes.Scope, analysis: Analysis,
                  calls: Iterable[str], run: bool = False) -> bool:
  """Whether one of `calls` (`set_weights`, ...) is made in the module
  of the class `scope` is a method of, or in a module that names that
  class by import; with `run`, only by code that runs (at the top of a
  module or in a function the project calls)."""
  info = owner_class(scope)
  if info is None:
    return False
  project = analysis.project
  home = project.module_of(info.home)
  for place, _ in analysis.calls_named(tuple(calls)):
    module = project.module_of(place)
    if run and not _runs(place, analysis):
      continue
    if module is home:
      return True
    root = project.parsed(module)
    if root is not None and info.name in module.words and project.resolve(
        root, info.name) is info:
      return True
  return False


def _runs(place: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether code in `place` runs: at a module's top, or in a function
  whose outermost function (a method, a module's function) some line
  calls (a notebook's, only the notebook: nothing imports one)."""
  names = []
  while place.parent is not None:
    if isinstance(place.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      names.append(place.node.name)
    place = place.parent
  if not names:
    return True
  name = names[-1]
  home = analysis.project.module_of(place)
  notebook = home.path.endswith(".ipynb")
  # Asked for every write and every method of a class: the texts are
  # searched once per name (and notebook).
  called = analysis.once(
      f"whole-writes:called:{name}:{home.path if notebook else ''}",
      lambda: _called(name, analysis, home if notebook else None))
  return bool(called)


def _called(name: str, analysis: Analysis,
            notebook: Optional[_project.Module]) -> bool:
  """Whether a line of `notebook`, or else of the project, calls `name`
  (`train(...)`, not `def train(`)."""
  called = re.compile(r"(?<!def )\b" + re.escape(name) + r"\s*\(")
  modules = [notebook] if notebook is not None else (
      analysis.project.all_modules_with((name,)))
  return any(called.search(module.source.text) for module in modules)
