"""A step in a function of a script whose one call is switched off: a
module-level function of a file run as a program (`if __name__ ==
"__main__":`) that no module of the project names, not even its own,
and whose call sits in a comment or in a string literal that parses as
Python (kinetics-i3d's `'''for example in data: train_step(...)'''`
beside the `session_train` that trains the head). Its step is never
built, so the whole model it would train is no other step's wider
training. Never a `main` (`tf.app.run()` calls it unnamed), a decorated
function (`@click.command`), one a module exports, nor any function of a
module that may run one by its name (`globals()`, `locals()`, `vars()`,
`getattr(sys.modules[...], ...)`, `eval`, `exec`, `fire.Fire()`). Part
of `var-list-filter`."""

from __future__ import annotations

import ast
import io
import tokenize
from typing import FrozenSet, List, NamedTuple, Set

from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._wholes import _unused_helper

_RUN_BY_NAME = frozenset({"globals", "locals", "vars", "eval", "exec"})


class _Script(NamedTuple):
  """What one module says of its functions' names, read once."""
  attributes: FrozenSet[str]  # `self.train_step`, `m.f`.
  switched_off: FrozenSet[str]  # Called in a comment or a code string.
  by_name: bool  # May run any of its functions by its name.


def never_run(analysis: Analysis, scope: _scopes.Scope) -> bool:
  """Whether the step's `scope` is in a module-level function of a
  script that no module of the project names and whose one call is
  switched off."""
  function = _unused_helper.top_function(scope)
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
      function.name in _unused_helper.loaded_names(analysis, home.tree)):
    return False
  script = _read(analysis, home)
  if script.by_name or function.name in script.attributes or (
      function.name not in script.switched_off):
    return False
  return not any(module is not home for module in project.all_modules_with(
      (function.name,)))  # Named elsewhere: maybe imported and run.


def _read(analysis: Analysis, module: _project.Module) -> _Script:
  found = analysis.once(f"script names {id(module)}",
                        lambda: _script(module))
  assert isinstance(found, _Script)
  return found


def _script(module: _project.Module) -> _Script:
  assert module.tree is not None
  attributes: Set[str] = set()
  off: Set[str] = set()
  by_name = False
  for node in ast.walk(module.tree):
    if isinstance(node, ast.Attribute):
      attributes.add(node.attr)
    elif isinstance(node, ast.Call):
      by_name = by_name or _runs_by_name(node)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
      off |= _called_in(node.value)
  for comment in _comments(module.source.text):
    off |= _called_in(comment.lstrip("#").strip())
  return _Script(frozenset(attributes), frozenset(off), by_name)


def _runs_by_name(call: ast.Call) -> bool:
  """`globals()[...]`, `eval(...)`, `getattr(sys.modules[...], ...)`,
  `fire.Fire()`: a call that may run a function of the module by name."""
  func = call.func
  name = func.id if isinstance(func, ast.Name) else (
      func.attr if isinstance(func, ast.Attribute) else "")
  if name in _RUN_BY_NAME:
    return True
  if name == "Fire":
    return not call.args and not call.keywords
  return name == "getattr" and bool(call.args) and any(
      isinstance(node, ast.Attribute) and node.attr == "modules"
      for node in ast.walk(call.args[0]))


def _called_in(text: str) -> FrozenSet[str]:
  """The names `text` calls, when it parses as Python."""
  if "(" not in text:
    return frozenset()
  try:
    tree = ast.parse(text)
  except (SyntaxError, ValueError):
    return frozenset()
  return frozenset(
      node.func.id for node in ast.walk(tree)
      if isinstance(node, ast.Call) and isinstance(node.func, ast.Name))


def _comments(text: str) -> List[str]:
  try:
    return [token.string for token in tokenize.generate_tokens(
        io.StringIO(text).readline) if token.type == tokenize.COMMENT]
  except (tokenize.TokenError, SyntaxError):
    return []
