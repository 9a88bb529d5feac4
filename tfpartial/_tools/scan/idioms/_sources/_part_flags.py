"""A step run only while a flag named after its part is on, and a script
that turns one part's flag off beside another's on before handing the
flags on (DETR's fine-tuning: `if getattr(config, "train_{}".format(
name)):` around each part's `apply_gradients`, and `config.train_backbone
= False`, `config.train_nlayers = True` in the script): the part left
off never gets its step, so it stays fixed while the others train.

What the code does decides: the gate must hold a step and run it while
the flag is on (not a negated test, not a layer built or not); the
script must leave a part off for good (not turned on again later in it:
a warm-up), keep another on (not a config's all-off defaults), and pass
the flags on after setting them. A flag counts only when it names a part
the gate can be asked about (`_part_names`: not `train_from_scratch`
beside `train_backbone`), and a holder is passed on only when the call
carries it, through the functions it calls, to the gated function's own
parameter (not `print`, logging, or a function that never trains). Part
of `var-list-filter`.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, FrozenSet, Iterator, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources import _part_names
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _swapped

_Pattern = _part_names.Pattern
_IDENTIFIER = _part_names.IDENTIFIER
# The label of the flag a finding's script turns off.
FLAG = "part_flag"


@dataclasses.dataclass(frozen=True)
class _Gate:
  """A step run only while a flag named after its part is on: the flag's
  name pattern, the parameter of the gated function holding the flags,
  and the parts the gate can be asked about."""
  pattern: _Pattern
  step: Step
  param: str
  parts: FrozenSet[str]

  def flags(self) -> FrozenSet[str]:
    prefix, suffix = self.pattern
    return frozenset(prefix + part + suffix for part in self.parts)


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """One finding per function (or module body) that turns a part's flag
  off for good beside another's on and hands the holder to the gated
  step: at the first flag it turns off, for a step gated by a flag named
  after its part."""
  gates: Dict[Tuple[_Pattern, int], _Gate] = {}
  # Each function's gated blocks read once, however many steps it holds.
  read: Dict[int, Dict[int, Tuple[_Pattern, ast.Call]]] = {}
  for step in steps:
    if id(step.scope) not in read:
      read[id(step.scope)] = _gated_calls(step.scope)
    gated = read[id(step.scope)].get(id(step.call))
    if gated is None or (gated[0], id(step.scope)) in gates:
      continue
    gate = _gate(analysis, step, *gated)
    if gate is not None:
      gates[(gated[0], id(step.scope))] = gate
  if not gates:
    return []
  found: List[_idiom.Hit] = []
  project = analysis.project
  reached = _Reached(analysis)
  for module in project.modules:
    if module.is_test or not any(flag in module.source.text
                                 for gate in gates.values()
                                 for flag in gate.flags()):
      continue
    root = project.parsed(module)
    if root is None:
      continue
    for scope in root.all():
      for gate in gates.values():
        node = _left_off(scope, gate, reached)
        if node is None:
          continue
        step = gate.step
        labels = dict(step.labels)
        labels["filtered"] = labels[FLAG] = node
        path = analysis.module(step.scope).source.path
        if module.source.path != path:
          labels[_swapped.STEP_FILE] = ast.Constant(path)
        found.append(_idiom.Hit(node, scope, step.call, labels))
        break
  return found


def _gate(analysis: Analysis, step: Step, pattern: _Pattern,
          test: ast.Call) -> Optional[_Gate]:
  """The gate of `step`, when it reads its flags from a parameter of its
  function and names at least one part that the code shows."""
  holder, scope = test.args[0], step.scope
  if not isinstance(holder, ast.Name) or holder.id not in scope.params or (
      not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef))):
    return None
  hole = _part_names.hole(_flag_name(test, scope))
  if not isinstance(hole, ast.Name):
    return None
  parts = _part_names.parts(analysis, scope, hole.id, pattern)
  return _Gate(pattern, step, holder.id, parts) if parts else None


def _gated_calls(scope: _scopes.Scope
                 ) -> Dict[int, Tuple[_Pattern, ast.Call]]:
  """The calls in the body of each `if getattr(holder, <computed name>):`
  of `scope`, by id, with the flag's name pattern and the test."""
  found: Dict[int, Tuple[_Pattern, ast.Call]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.If) and isinstance(node.test, ast.Call):
      pattern = _computed_flag(node.test, scope)
      if pattern is not None:
        gated = (pattern, node.test)
        found.update((id(each), gated) for stmt in node.body
                     for each in ast.walk(stmt) if isinstance(each, ast.Call))
  return found


def _flag_name(test: ast.Call, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The name `getattr(holder, name)` reads, through a name bound once."""
  name = test.args[1]
  if isinstance(name, ast.Name):
    defs = scope.defs.get(name.id, [])
    if len(defs) != 1 or not isinstance(defs[0].value, ast.expr):
      return None
    return defs[0].value
  return name


def _computed_flag(test: ast.expr, scope: _scopes.Scope
                   ) -> Optional[_Pattern]:
  """(prefix, suffix) of `getattr(holder, name)` whose name is a text
  around another value: `"train_{}".format(part)`, `"train_" + part`,
  `f"train_{part}"`, `"train_%s" % part`, or a name bound once to one.

  >>> from tfpartial._tools.scan import _scopes
  >>> module = _scopes.collect(ast.parse("pass"))
  >>> test = ast.parse('getattr(c, "train_{}".format(n))').body[0].value
  >>> _computed_flag(test, module)
  ('train_', '')
  >>> _computed_flag(ast.parse('getattr(c, "train")').body[0].value, module)
  """
  if not isinstance(test, ast.Call) or _names.dotted(test.func) != (
      "getattr") or len(test.args) < 2:
    return None
  name = _flag_name(test, scope)
  found = _part_names.around(name) if name is not None else None
  if found is None or not "".join(found) or not _IDENTIFIER.match(
      "".join(found) + "x"):
    return None
  return found


def _left_off(scope: _scopes.Scope, gate: _Gate, reached: "_Reached"
              ) -> Optional[ast.expr]:
  """Where `scope` first sets a part's flag of `gate` off on a holder (a
  name) that it never sets on again, while it sets another part's flag
  on, and hands the holder on to the gated function afterwards."""
  flags = gate.flags()
  values: Dict[Tuple[str, str], List[Tuple[bool, ast.expr]]] = {}
  for node in scope.nodes:
    for target, value in _flag_sets(node):
      if isinstance(target.value, ast.Name) and target.attr in flags:
        values.setdefault((target.value.id, target.attr), []).append(
            (value, target))
  by_holder: Dict[str, List[Tuple[str, List[Tuple[bool, ast.expr]]]]] = {}
  for (name, attr), sets in values.items():
    by_holder.setdefault(name, []).append((attr, sets))
  for holder, parts in by_holder.items():
    on = any(value for _, sets in parts for value, _ in sets)
    off = sorted((sets[0][1] for _, sets in parts
                  if not any(value for value, _ in sets)),
                 key=_idiom.position)
    if on and off and reached.handed_on(scope, holder, off[0], gate):
      return off[0]
  return None


def _flag_sets(node: ast.AST) -> Iterator[Tuple[ast.Attribute, bool]]:
  """`holder.attr = True`, `= tf.Variable(False)`, `holder.attr.assign(
  True)`: the attribute and the value set."""
  if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
      node.targets[0], ast.Attribute):
    value = _boolean(node.value)
    if value is not None:
      yield node.targets[0], value
  elif isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "assign" and (
          isinstance(node.func.value, ast.Attribute)) and len(node.args) == 1:
    value = _boolean(node.args[0])
    if value is not None:
      yield node.func.value, value


def _boolean(node: ast.expr) -> Optional[bool]:
  """`True`, `False`, or a variable made of one (`tf.Variable(False)`)."""
  if isinstance(node, ast.Call) and _names.call_name(node) == "Variable" and (
      node.args):
    node = node.args[0]
  if isinstance(node, ast.Constant) and isinstance(node.value, bool):
    return node.value
  return None


class _Reached:
  """Whether a holder of flags reaches the gated function's parameter
  through the calls it is passed to (`print`, logging, a function that
  never trains: not), each function's parameter followed once."""

  def __init__(self, analysis: Analysis):
    self._flow = analysis.flow
    # (function, parameter, gate) -> whether it carries the flags on.
    self._carries: Dict[Tuple[int, str, int], bool] = {}

  def handed_on(self, scope: _scopes.Scope, holder: str, after: ast.AST,
                gate: _Gate) -> bool:
    """Whether a call of `scope` after `after` hands the holder on to the
    gate's parameter."""
    start = _idiom.position(after)
    return any(isinstance(node, ast.Call) and _idiom.position(
        node) > start and self._hands_on(node, scope, holder, gate)
               for node in scope.nodes)

  def _hands_on(self, call: ast.Call, scope: _scopes.Scope, holder: str,
                gate: _Gate) -> bool:
    """Whether `call` passes `holder` to a parameter that carries it to
    the gate's."""
    if not _passes(call, holder):
      return False
    callee = self._flow.callee(call, scope)
    known = self._flow.functions.get(id(callee)) if isinstance(
        callee, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    inner = known[1].scope_of(known[0]) if known is not None else None
    param = _given(call, inner.params, holder) if inner is not None else None
    return param is not None and inner is not None and self._carried(
        inner, param, gate)

  def _carried(self, scope: _scopes.Scope, param: str, gate: _Gate
               ) -> bool:
    """Whether the function of `scope` carries its parameter `param` to
    the gate's (itself the gated function, or passing it on)."""
    if scope.node is gate.step.scope.node:
      return param == gate.param
    key = (id(scope.node), param, id(gate))
    if key not in self._carries:
      self._carries[key] = False  # Functions calling each other.
      self._carries[key] = any(
          isinstance(node, ast.Call) and self._hands_on(
              node, scope, param, gate) for node in scope.nodes)
    return self._carries[key]


def _passes(call: ast.Call, holder: str) -> bool:
  return any(isinstance(arg, ast.Name) and arg.id == holder
             for arg in [*call.args, *(k.value for k in call.keywords)])


def _given(call: ast.Call, params: List[str], holder: str) -> Optional[str]:
  """The parameter `call` passes the name `holder` to (`self` aside for
  a method call).

  >>> call = ast.parse("fit(m, data, config=c)").body[0].value
  >>> _given(call, ["model", "data", "config"], "c")
  'config'
  >>> _given(call, ["model", "data", "config"], "data")
  'data'
  """
  for keyword in call.keywords:
    if isinstance(keyword.value, ast.Name) and keyword.value.id == holder:
      return keyword.arg
  offset = 1 if params[:1] in (["self"], ["cls"]) and isinstance(
      call.func, ast.Attribute) else 0
  for index, arg in enumerate(call.args):
    if isinstance(arg, ast.Starred):
      return None
    if isinstance(arg, ast.Name) and arg.id == holder:
      return params[index + offset] if index + offset < len(
          params) else None
  return None
