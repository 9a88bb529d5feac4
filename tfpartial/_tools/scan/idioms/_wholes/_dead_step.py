"""A step in a function of a script that nothing runs: a module-level
function of a file run as a program (`if __name__ == "__main__":`) that
no module of the project names, not even its own (its one call sits in
a string literal, code switched off: kinetics-i3d's `train_step` beside
the `session_train` that trains the head). It never builds its step, so
the whole model it would train is no other step's wider training. Not a
`main` (`tf.app.run()` calls it unnamed), nor a decorated function
(`@click.command`), nor one a module exports. Part of `var-list-filter`."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._wholes import _unused_helper


def never_run(analysis: Analysis, scope: _scopes.Scope) -> bool:
  """Whether the step's `scope` is in a module-level function of a
  script that no module of the project names."""
  function = _unused_helper._top_function(scope)
  if function is None or function.name == "main" or (
      function.decorator_list):
    return False
  found = analysis.once(f"never run {id(function)}",
                        lambda: _never_run(analysis, function, scope))
  return found is True


def _never_run(analysis: Analysis, function: ast.FunctionDef,
               scope: _scopes.Scope) -> bool:
  project = analysis.project
  home = project.module_of(scope)
  text = home.source.text
  if home.tree is None or "__main__" not in text or "__all__" in text or (
      function.name in _unused_helper._loaded(analysis, home.tree)):
    return False
  if any(module is not home for module in project.all_modules_with(
      (function.name,))):
    return False  # Named elsewhere: maybe imported and run.
  return not any(
      isinstance(node, ast.Attribute) and node.attr == function.name
      for node in ast.walk(home.tree))  # Nor `self.train_step`, `m.f`.
