"""One dict of variables trained of two the model is built from: a step
over `weights.values()` whose loss comes from a call also passed
`biases`, a dict of trainable variables no step trains
(ShHsLin/Neural-Network-Quantum-State's `tf_FCN.py`). The second dict
leaves nothing out when a step anywhere in the project trains a dict of
its last name (a GAN's `gan.D`), a step of its module trains every
variable (`var_list=None`, or a list of `tf.trainable_variables()`),
the call beside the first feeds no loss (a target's copy, an average,
optimizer slots), a saver restores it (a teacher), or its entries are
made `trainable=False` or rebound."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes._composed import function_of

_MAKERS = {"Variable", "get_variable"}
# Calls whose list of variables covers every trainable one.
_EVERY = {"trainable_variables", "global_variables", "get_collection"}
# Calls that load a dict's variables from a checkpoint.
_RESTORING = {"Saver", "Checkpoint", "restore", "init_from_checkpoint"}
# A call given more dicts than this walks a registry of them (saving,
# summaries), not a model built from a few; the cap also bounds the
# pairs one call adds.
_MOST_GIVEN = 8
# The label of a finding's dict left out: where a call passes it beside
# the trained one.
LEFT = "dict left out"


class _Function:
  """What one function does with dicts of variables, read once: the
  values it binds each name to, the names it binds once to a dict of
  trainable variables and never writes an entry of or restores, and the
  calls each such dict is passed to beside another."""

  def __init__(self, node: ast.AST):
    values: Dict[str, List[ast.expr]] = {}
    written: Set[str] = set()
    for each in _scopes.walk(node):
      if isinstance(each, ast.Assign):
        for target in each.targets:
          named = target.elts if isinstance(target, ast.Tuple) else [target]
          for one in named:
            name = _names.dotted(one)
            if name is not None:
              values.setdefault(name, []).append(each.value)
            elif isinstance(one, ast.Subscript):
              written.add(_names.dotted(one.value) or "")
      elif isinstance(each, ast.Call) and (
          _names.call_name(each) in _RESTORING):
        written.update(n for n in map(_names.dotted, _scopes.walk(each)) if n)
    self.values = values
    self.dicts = {name for name, bound in values.items()
                  if len(bound) == 1 and _variables(bound[0])} - written
    # A dict -> the dicts calls are passed beside it, with those calls.
    self.beside: Dict[str, Dict[str, List[ast.Call]]] = {}
    for each in _scopes.walk(node):
      if isinstance(each, ast.Call):
        given = sorted(n for n in {_names.dotted(arg) for arg in _given(
            each)} & self.dicts if n)
        for name in given if len(given) <= _MOST_GIVEN else ():
          for other in given:
            if other != name:
              self.beside.setdefault(name, {}).setdefault(
                  other, []).append(each)
    # What the function's steps minimise, and the ids of the calls those
    # losses are computed from (worked out once, for all its steps).
    self.losses: List[ast.AST] = []
    self._reached: Optional[Set[int]] = None

  def reached(self) -> Set[int]:
    """The ids of the calls a loss of the function's steps is computed
    from, through the names the function binds (each followed once)."""
    if self._reached is not None:
      return self._reached
    seen: Set[str] = set()
    calls: Set[int] = set()
    self._reached = calls
    todo = list(self.losses)
    while todo:
      for each in _scopes.walk(todo.pop()):
        if isinstance(each, ast.Call):
          calls.add(id(each))
        name = _names.dotted(each)
        if name is not None and name not in seen:
          seen.add(name)
          todo.extend(self.values.get(name, []))
    return calls


def _given(call: ast.Call) -> List[ast.expr]:
  """What a call is passed, positionally or by keyword."""
  return list(call.args) + [k.value for k in call.keywords]


def _variables(value: ast.expr) -> bool:
  """Whether `value` is a dict literal of trainable variables only."""
  return isinstance(value, ast.Dict) and bool(value.values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _MAKERS and not any(
          k.arg == "trainable" and isinstance(k.value, ast.Constant)
          and k.value.value is False for k in v.keywords)
      for v in value.values)


def _bound(node: ast.AST, facts: _Function) -> ast.AST:
  """The value a name bound once in the function holds, else `node`."""
  name = _names.dotted(node)
  bound = facts.values.get(name, []) if name is not None else []
  return bound[0] if len(bound) == 1 else node


def _one_dict(node: ast.AST) -> Optional[str]:
  """`d` of `d.values()` or `list(d.values())`, else None."""
  if isinstance(node, ast.Call) and _names.call_name(node) == "list" and (
      len(node.args) == 1) and not node.keywords:
    node = node.args[0]
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
      node.func.attr == "values") and not node.args:
    return _names.dotted(node.func.value)
  return None


def _last(name: str) -> str:
  """`D` of `gan.D`: how a dict trained elsewhere is matched."""
  return name.rsplit(".", 1)[-1]


def left_out(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The steps over one dict's values whose loss is built by a call also
  passed another dict of trainable variables no step trains (a call
feeding the loss of any step of the function: each function's losses
are followed once, however many steps it has)."""
  functions: Dict[int, _Function] = {}
  trained: Set[str] = set()  # The last parts of names any step trains.
  everything: Set[int] = set()  # Modules with a step training all.
  chosen = []
  for step in steps:
    home = function_of(step.scope)
    facts = functions.get(id(home.node))
    if facts is None:
      facts = functions[id(home.node)] = _Function(home.node)
    module = id(analysis.module(step.scope))
    facts.losses.extend(
        a for a in _given(step.call) if a is not step.var_list)
    if step.var_list is None:
      everything.add(module)
      continue
    listed = _bound(step.var_list, facts)
    for node in (step.var_list, listed):
      for each in _scopes.walk(node):
        name = _names.dotted(each)
        if name is not None:
          trained.add(_last(name))
        elif isinstance(each, ast.Call) and _names.call_name(each) in _EVERY:
          everything.add(module)
    owner = _one_dict(listed)
    if owner is not None and owner in facts.dicts:
      chosen.append((step, listed, owner, facts, module))
  found: Dict[int, _idiom.Hit] = {}
  for step, listed, owner, facts, module in chosen:
    beside = facts.beside.get(owner, {})
    left = [name for name in sorted(beside) if _last(name) not in trained]
    if module in everything or not left:
      continue
    reached = facts.reached()
    for name in left:
      call = next((c for c in beside[name] if id(c) in reached), None)
      if call is not None and isinstance(listed, ast.expr):
        given = next(a for a in _given(call) if _names.dotted(a) == name)
        found.setdefault(id(listed), _idiom.Hit(
            listed, step.scope, step.call, {"filtered": listed, LEFT: given}))
        break
  return list(found.values())


def message(hit: _idiom.Hit, step: str) -> Optional[str]:
  """What a finding of this pass says, for the step named `step`; None
  for another's."""
  left = hit.labels.get(LEFT)
  if not isinstance(left, ast.expr):
    return None
  return (f"`var_list` of {step} built by hand from "
          f"`{ast.unparse(hit.node)}`, while `{ast.unparse(left)}`, "
          "trainable variables the loss is built from too (line "
          f"{_idiom.line(left)}), is trained by no step: whole variables "
          "only; exact as it is, not a drift; a candidate for a spec file")
