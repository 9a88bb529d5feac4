"""A hand-kept list of "trainable" variables that a maker fills only
when its caller says so, the variable made trainable all the same
(remega/OMCNN_2CLSTM's `_variable_on_cpu`: `var = tf.get_variable(name,
shape)`, then `if trainable: self.trainable_var_collection.append(var)`,
a front-end built with `trainable=False`, and a step over that list):
what a caller tells False is in the model, trainable, and never trained.
A maker that hands the flag to the variable too, or one no caller tells
False, leaves nothing out."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan._project import MAX_CALLER_MODULES, Project
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import Step, _class_of
from tfpartial._tools.scan.idioms._wholes import _swapped

_MAKERS = {"Variable", "get_variable"}
# How many callers deep a flag is followed from the maker (a layer helper
# passing it on, the model's method telling it False).
_DEPTH = 4
_Function = ast.FunctionDef
# The label of a finding's test that keeps a variable off the list.
KEPT = "kept if"


def left_out(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The appends to a step's `self.` list that skip variables some caller
  tells untrainable while the maker makes them trainable."""
  found: Dict[int, _idiom.Hit] = {}
  told = _Told()
  read: Set[Tuple[int, str]] = set()
  for step in steps:
    chosen = step.var_list
    info = _class_of(step.scope)
    if info is None or not isinstance(chosen, ast.Attribute) or (
        _names.dotted(chosen.value) != "self"):
      continue
    for klass in [info, *analysis.project.base_classes(info)]:
      if (id(klass.node), chosen.attr) in read:
        continue
      read.add((id(klass.node), chosen.attr))
      for method in klass.methods.values():
        node = method.node
        if not isinstance(node, ast.FunctionDef):
          continue
        for append, test in _skipping(node, chosen.attr):
          if _told_false(analysis.project, node, test.id, told, _DEPTH):
            labels: Labels = {"filtered": append, KEPT: test}
            path = analysis.module(step.scope).source.path
            if analysis.module(method).source.path != path:
              labels[_swapped.STEP_FILE] = ast.Constant(path)
            found.setdefault(id(append), _idiom.Hit(
                append, method, step.call, labels))
  return list(found.values())


@dataclasses.dataclass
class _Told:
  """What `_told_false` has found: by (name, parameter), and the calls
  of each name, read once however many makers share it."""

  answers: Dict[Tuple[str, str, int], bool] = dataclasses.field(
      default_factory=dict)
  callers: Dict[str, List[Tuple[_scopes.Scope, ast.Call]]] = (
      dataclasses.field(default_factory=dict))


def _skipping(node: _Function, attr: str
              ) -> Iterator[Tuple[ast.Call, ast.Name]]:
  """`self.<attr>.append(var)` under `if <flag>:`, a parameter, where
  `var` was made before the `if` by a maker not told `trainable`."""
  params = {a.arg for a in node.args.args + node.args.kwonlyargs}
  made: Dict[str, List[ast.Assign]] = {}
  for each in _scopes.walk(node):
    if isinstance(each, ast.Assign) and len(each.targets) == 1 and (
        isinstance(each.targets[0], ast.Name)) and isinstance(
            each.value, ast.Call):
      made.setdefault(each.targets[0].id, []).append(each)
  for each in _scopes.walk(node):
    if not isinstance(each, ast.If) or not isinstance(each.test, ast.Name) or (
        each.test.id not in params):
      continue
    for inner in each.body:
      call = inner.value if isinstance(inner, ast.Expr) else None
      if isinstance(call, ast.Call) and _names.call_name(call) == "append" \
          and isinstance(call.func, ast.Attribute) and _names.dotted(
              call.func.value) == f"self.{attr}" and len(call.args) == 1 \
          and isinstance(call.args[0], ast.Name) and _untold(
              made.get(call.args[0].id, []), each):
        yield call, each.test


def _untold(assigns: List[ast.Assign], test: ast.If) -> bool:
  """Whether the one making of a variable, before `test`, is a maker's
  call that says nothing of `trainable`."""
  if len(assigns) != 1 or assigns[0].lineno >= test.lineno:
    return False
  value = assigns[0].value
  return isinstance(value, ast.Call) and (
      _names.call_name(value) in _MAKERS) and not any(
          k.arg == "trainable" or k.arg is None for k in value.keywords)


def _told_false(project: Project, node: _Function, flag: str,
                told: "_Told", depth: int) -> bool:
  """Whether some call of a method spelled as `node` is (as `self.<name>
  (...)`) passes False for its parameter `flag`, itself or through callers
  that pass their own parameter on. Asked once per name and parameter
  (the same helper copied into many classes is one question)."""
  names = [a.arg for a in node.args.args]
  index = names.index(flag) - 1 if flag in names else -2
  key = (node.name, flag, index)
  if key in told.answers:
    return told.answers[key]
  told.answers[key] = False  # A cycle of callers tells nothing.
  answer = False
  for scope, call in _callers(project, node.name, told):
    if not isinstance(call.func, ast.Attribute):
      continue
    given = _argument(call, flag, index)
    if given is None:
      continue
    if _false(given):
      answer = True
      break
    caller = _function(scope)
    if isinstance(given, ast.Name) and caller is not None:
      if any(_false(d.value) for d in scope.defs.get(given.id, ())):
        answer = True
        break
      if depth > 1 and given.id in {a.arg for a in caller.args.args} and (
          _told_false(project, caller, given.id, told, depth - 1)):
        answer = True
        break
  told.answers[key] = answer
  return answer


def _callers(project: Project, name: str, told: _Told
             ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """The calls spelled `name` in every module, scanned or not (a layer
  helper's module names no step), none where many modules write it;
  found once a name, kept in `told`."""
  if name not in told.callers:
    modules = project.all_modules_with((name,))
    told.callers[name] = [] if len(modules) > MAX_CALLER_MODULES else list(
        project.calls_named((name,), modules))
  return told.callers[name]


def _argument(call: ast.Call, flag: str, index: int
              ) -> Optional[ast.expr]:
  """What `call` passes for the parameter `flag` (at `index`, self not
  counted), if it passes it."""
  for keyword in call.keywords:
    if keyword.arg == flag:
      return keyword.value
  if 0 <= index < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args[:index + 1]):
    return call.args[index]
  return None


def _false(node: ast.AST) -> bool:
  return isinstance(node, ast.Constant) and node.value is False


def _function(scope: _scopes.Scope) -> Optional[_Function]:
  """The function a scope is, or is nested in (a `with` block is not a
  scope of its own)."""
  place: Optional[_scopes.Scope] = scope
  while place is not None and not isinstance(place.node, ast.FunctionDef):
    place = place.parent
  return place.node if place is not None and isinstance(
      place.node, ast.FunctionDef) else None


def message(hit: _idiom.Hit, step: str) -> Optional[str]:
  """What a finding of this pass says, for the step named `step`; None
  for another's."""
  kept = hit.labels.get(KEPT)
  if not isinstance(kept, ast.Name):
    return None
  return (f"`var_list` of {step} kept by hand: a variable is added only "
          f"`if {kept.id}` (line {_idiom.line(kept)}), but is made "
          f"trainable either way, so those its callers tell "
          f"`{kept.id}=False` are never trained: whole variables only; "
          "exact as it is, not a drift; a candidate for a spec file")
