"""One dict of variables trained of two the model is built from: a step
over `weights.values()` while the call that builds the model is also
passed `biases`, a dict of trainable variables no step of the module
trains (ShHsLin/Neural-Network-Quantum-State's `tf_FCN.py`). A GAN's
second dict, trained by its own step, a dict of `trainable=False`
variables, or one no call beside the first reads, leaves nothing out."""

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
# The label of a finding's dict left out: where a call passes it beside
# the trained one.
LEFT = "dict left out"


class _Function:
  """What one function does with dicts of variables, read once: the
  names it binds, each once, to a dict of trainable variables, the
  values it binds each name to, and the sets of those dicts each call
  is passed side by side."""

  def __init__(self, node: ast.AST):
    values: Dict[str, List[ast.expr]] = {}
    for each in _scopes.walk(node):
      if isinstance(each, ast.Assign) and len(each.targets) == 1:
        name = _names.dotted(each.targets[0])
        if name is not None:
          values.setdefault(name, []).append(each.value)
    self.values = values
    self.dicts = {name for name, bound in values.items()
                  if len(bound) == 1 and _variables(bound[0])}
    # A dict -> the dicts calls are passed beside it, with the first call.
    self.beside: Dict[str, Dict[str, ast.Call]] = {}
    for each in _scopes.walk(node):
      if isinstance(each, ast.Call):
        given = sorted(n for n in {_names.dotted(arg) for arg in each.args}
                       & self.dicts if n)
        for name in given if len(given) < 8 else ():
          for other in given:
            if other != name:
              self.beside.setdefault(name, {}).setdefault(other, each)


def _variables(value: ast.expr) -> bool:
  """Whether `value` is a dict literal of trainable variables only."""
  return isinstance(value, ast.Dict) and bool(value.values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _MAKERS and not any(
          k.arg == "trainable" and isinstance(k.value, ast.Constant)
          and k.value.value is False for k in v.keywords)
      for v in value.values)


def _bound(node: Optional[ast.AST], facts: _Function) -> Optional[ast.AST]:
  """The value a name bound once in the function holds, else `node`."""
  name = _names.dotted(node) if node is not None else None
  bound = facts.values.get(name, []) if name is not None else []
  return bound[0] if len(bound) == 1 else node


def _one_dict(node: Optional[ast.AST]) -> Optional[str]:
  """`d` of `d.values()` or `list(d.values())`, else None."""
  if isinstance(node, ast.Call) and _names.call_name(node) == "list" and (
      len(node.args) == 1) and not node.keywords:
    node = node.args[0]
  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
      node.func.attr == "values") and not node.args:
    return _names.dotted(node.func.value)
  return None


def left_out(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """The steps over one dict's values whose model is built from another
  dict of trainable variables that no step of the module trains."""
  functions: Dict[int, _Function] = {}
  trained: Dict[int, Set[str]] = {}  # A module -> the names steps train.
  everything: Set[int] = set()  # Modules with a step training all.
  chosen = []
  for step in steps:
    home = function_of(step.scope)
    facts = functions.get(id(home.node))
    if facts is None:
      facts = functions[id(home.node)] = _Function(home.node)
    module = id(analysis.module(step.scope))
    if step.var_list is None:
      everything.add(module)
      continue
    listed = _bound(step.var_list, facts)
    names = trained.setdefault(module, set())
    for node in (step.var_list, listed or step.var_list):
      names.update(n for n in map(_names.dotted, _scopes.walk(node)) if n)
    owner = _one_dict(listed)
    if owner is not None and owner in facts.dicts:
      chosen.append((step, listed, owner, facts, module))
  found: Dict[int, _idiom.Hit] = {}
  for step, listed, owner, facts, module in chosen:
    beside = [(call, name) for name, call in sorted(
        facts.beside.get(owner, {}).items()) if name not in trained[module]]
    if module not in everything and beside:
      assert isinstance(listed, ast.expr)
      call, name = beside[0]
      given = next(a for a in call.args if _names.dotted(a) == name)
      found.setdefault(id(listed), _idiom.Hit(
          listed, step.scope, step.call, {"filtered": listed, LEFT: given}))
  return list(found.values())


def message(hit: _idiom.Hit, step: str) -> Optional[str]:
  """What a finding of this pass says, for the step named `step`; None
  for another's."""
  left = hit.labels.get(LEFT)
  if not isinstance(left, ast.expr):
    return None
  return (f"`var_list` of {step} built by hand from "
          f"`{ast.unparse(hit.node)}`, while `{ast.unparse(left)}`, "
          "trainable variables the model is built from too (line "
          f"{_idiom.line(left)}), is trained by no step: whole variables "
          "only; exact as it is, not a drift; a candidate for a spec file")
