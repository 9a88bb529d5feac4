"""Whether a train op runs only where an option, at its default, never
lets it: a captioner builds `self.train_op` over the language model's
scope and `self.cnn_train_op` over the CNN's, but the script runs the
second only `if iteration > opt.finetune_cnn_after` with the option's
default -1 meaning never (`if ... or opt.finetune_cnn_after == -1:
sess.run(model.train_op) else: sess.run([model.train_op,
model.cnn_train_op])`). The two lists are then no two halves trained
side by side: by default only the first trains, the CNN stays fixed."""

from __future__ import annotations

import ast
import operator
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

# What declares an option with its default.
_DEFINES = {"add_argument", "DEFINE_integer", "DEFINE_bool",
            "DEFINE_boolean", "DEFINE_float", "DEFINE_string", "DEFINE_int"}
_UNKNOWN = object()
# A branch: the test and whether the run is in its `else`.
Branch = Tuple[ast.expr, bool]


def off_by_default(project: _project.Project, call: ast.Call,
                   scope: _scopes.Scope) -> bool:
  """Whether the op the step `call` makes (`self.cnn_train_op = ...`) is
  run, wherever a session runs it, only in a branch its options' defaults
  never take."""
  name = _assigned_attribute(call, scope)
  if name is None:
    return False
  runs = list(_runs(project, name))
  return bool(runs) and all(
      any(_taken(project, test, orelse) is False for test, orelse in branch)
      for branch in runs)


def _assigned_attribute(call: ast.Call, scope: _scopes.Scope
                        ) -> Optional[str]:
  """`cnn_train_op` for `self.cnn_train_op = opt.apply_gradients(...)`."""
  return scope.once((_assigned_attribute, None, 0),
                    lambda: _attributes_assigned(scope)).get(id(call))


def _attributes_assigned(scope: _scopes.Scope) -> Dict[int, str]:
  """The id of each value `scope` assigns to one attribute -> the
  attribute; read once per scope (each step of it asks)."""
  found: Dict[int, str] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Attribute)):
      found.setdefault(id(node.value), node.targets[0].attr)
  return found


def _runs(project: _project.Project, name: str) -> Iterator[List[Branch]]:
  """The branches around each `run` call that fetches `x.name`."""
  for module in project.all_modules_with(
      (name,), lambda m: ".run(" in m.source.text):
    if project.parsed(module) is None or module.tree is None:
      continue
    yield from _walk(module.tree, name, [])


def _walk(node: ast.AST, name: str, branches: List[Branch]
          ) -> Iterator[List[Branch]]:
  if isinstance(node, ast.If):
    for statement in node.body:
      yield from _walk(statement, name, [*branches, (node.test, False)])
    for statement in node.orelse:
      yield from _walk(statement, name, [*branches, (node.test, True)])
    return
  if isinstance(node, ast.Call) and _names.call_name(node) == "run" and any(
      isinstance(n, ast.Attribute) and n.attr == name
      for a in node.args for n in ast.walk(a)):
    yield branches
  for child in ast.iter_child_nodes(node):
    yield from _walk(child, name, branches)


def _taken(project: _project.Project, test: ast.expr, orelse: bool
           ) -> Optional[bool]:
  """Whether the branch is taken with every option at its default (None
  when the test reads anything else)."""
  value = _value(project, test, {})
  if value is _UNKNOWN:
    return None
  return bool(value) != orelse


def _value(project: _project.Project, test: ast.expr,
           seen: Dict[str, object]) -> object:
  """The test's value at the options' defaults, or `_UNKNOWN`."""
  if isinstance(test, ast.BoolOp):
    values = [_value(project, v, seen) for v in test.values]
    decisive = isinstance(test.op, ast.Or)
    if any(v is not _UNKNOWN and bool(v) is decisive for v in values):
      return decisive
    return _UNKNOWN if _UNKNOWN in values else not decisive
  if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
    inner = _value(project, test.operand, seen)
    return inner if inner is _UNKNOWN else not inner
  if isinstance(test, ast.Compare) and len(test.ops) == 1:
    left = _value(project, test.left, seen)
    right = _value(project, test.comparators[0], seen)
    if left is _UNKNOWN or right is _UNKNOWN:
      return _UNKNOWN
    return _compare(test.ops[0], left, right)
  if isinstance(test, (ast.Constant, ast.UnaryOp)):
    try:
      return ast.literal_eval(test)
    except (ValueError, TypeError, SyntaxError):
      return _UNKNOWN
  if isinstance(test, ast.Attribute) and isinstance(
      test.value, ast.Name) and test.value.id != "self":
    if test.attr not in seen:
      seen[test.attr] = _default(project, test.attr)
    return seen[test.attr]
  return _UNKNOWN


_COMPARED: Dict[type, Callable[[object, object], object]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_,
    ast.IsNot: operator.is_not}


def _compare(op: ast.cmpop, left: object, right: object) -> object:
  found = _COMPARED.get(type(op))
  return found(left, right) if found is not None else _UNKNOWN


def _default(project: _project.Project, name: str) -> object:
  """The default of the option `name` (`add_argument('--name',
  default=-1)`, `action='store_true'`: False), one declaration only."""
  found: List[object] = []
  for module in project.all_modules_with((name,), _declares):
    if project.parsed(module) is None or module.tree is None:
      continue
    for node in ast.walk(module.tree):
      if isinstance(node, ast.Call) and _names.call_name(
          node) in _DEFINES and node.args and isinstance(
              node.args[0], ast.Constant) and str(
                  node.args[0].value).lstrip("-").replace("-", "_") == name:
        found.append(_declared(node))
  return found[0] if len(found) == 1 else _UNKNOWN


def _declares(module: _project.Module) -> bool:
  text = module.source.text
  return "add_argument(" in text or "DEFINE_" in text


def _declared(call: ast.Call) -> object:
  keywords = {k.arg: k.value for k in call.keywords if k.arg}
  given = keywords.get("default")
  if given is None and _names.call_name(call) != "add_argument":
    given = call.args[1] if len(call.args) > 1 else None
  if given is None:
    action = keywords.get("action")
    if isinstance(action, ast.Constant) and action.value in (
        "store_true", "store_false"):
      return action.value == "store_false"
    return _UNKNOWN
  try:
    return ast.literal_eval(given)
  except (ValueError, TypeError, SyntaxError):
    return _UNKNOWN
