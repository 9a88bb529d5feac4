"""A model's own list of trained parameters swapped for a part's: a step
of a class differentiates and applies `self.param`, and a method of the
class or of a subclass keeps the full list aside (`self.param_ =
self.param.copy()`) and sets `self.param` to a list it starts empty and
fills from other parts only (`param.extend(self.head.param)`): what is
not in that part (the backbone of a head-only fine-tuning) is left out.
A list gathered from every part (a constructor's) keeps nothing aside;
a list started from the kept one puts it back.
"""

from __future__ import annotations

import ast
from typing import Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels

_COPIES = {"copy", "list", "tuple"}
# The label of a hit whose step is in another file than the swap: the
# path of the step's file, named in the message.
STEP_FILE = "step_file"


def step_file(labels: Labels) -> str:
  """` in nn.py` for a hit whose step is in another file, else the empty
  string."""
  path = labels.get(STEP_FILE)
  if isinstance(path, ast.Constant) and isinstance(path.value, str):
    return f" in {path.value}"
  return ""


def swaps(project: _project.Project, scope: _scopes.Scope,
          var_list: ast.AST) -> List[Tuple[_scopes.Scope, ast.Assign]]:
  """The methods (with their assignment) of the class of `scope` (a
  step's method training `var_list`, `self.X`) or of its subclasses that
  swap `self.X` for a part's list, keeping the full list aside."""
  name = _names.dotted(var_list)
  if scope.cls is None or not name or not name.startswith("self.") or (
      name.count(".") != 1):
    return []
  attr = name[len("self."):]
  spellings = (f".{attr}.copy()", f"list(self.{attr})", f".{attr}[:]")
  found: List[Tuple[_scopes.Scope, ast.Assign]] = []
  for info in [scope.cls, *project.subclasses(scope.cls)]:
    text = project.module_of(info.home).source.text
    if not any(each in text for each in spellings):
      continue  # Read only where the full list may be kept aside.
    for method in info.methods.values():
      found.extend((method, node) for node in _swapping(method, name))
  return found


def _swapping(method: _scopes.Scope, name: str) -> Iterator[ast.Assign]:
  """The assignments `self.X = L` of `method` with `L` a part's list,
  after the full list is kept aside."""
  kept = None
  for node in _scopes.walk(method.node):
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
      continue
    target = _names.dotted(node.targets[0])
    if target and target != name and target.startswith(
        "self.") and _copies(node.value, name):
      kept = node if kept is None else kept
    elif target == name and isinstance(node.value, ast.Name) and (
        kept is not None) and kept.lineno < node.lineno and _parts_only(
            method, node.value.id, name):
      yield node


def _copies(value: ast.AST, name: str) -> bool:
  """Whether `value` copies `name` (`self.X.copy()`, `list(self.X)`,
  `self.X[:]`)."""
  if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
    return _names.dotted(value.value) == name
  if not isinstance(value, ast.Call) or _names.call_name(
      value) not in _COPIES:
    return False
  if isinstance(value.func, ast.Attribute) and not value.args:
    return _names.dotted(value.func.value) == name
  return len(value.args) == 1 and _names.dotted(value.args[0]) == name


def _parts_only(method: _scopes.Scope, local: str, name: str) -> bool:
  """Whether `local` is started empty (`param = []`) and filled only
  from other parts of the object (`param.extend(self.head.param)`)."""
  started: Optional[bool] = None
  added = 0
  for node in _scopes.walk(method.node):
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == local for t in node.targets):
      empty = isinstance(node.value, ast.List) and not node.value.elts
      started = empty if started is None else started and empty
    elif isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and isinstance(
            node.func.value, ast.Name) and node.func.value.id == local:
      if node.func.attr not in {"append", "extend"} or len(node.args) != 1:
        return False
      read = {_names.dotted(n) for n in _scopes.walk(node.args[0])}
      parts = {r for r in read if r and r.startswith("self.") and (
          r.count(".") >= 2)}
      if not parts or any(p == name or p.startswith(name + ".")
                          for p in read if p):
        return False
      added += 1
  return bool(started) and added > 0
