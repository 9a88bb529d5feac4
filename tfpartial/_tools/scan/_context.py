"""What is in scope around a finding: the optimizer that applies the
update, its settings, restores, regularizers."""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Dict, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

_OPTIMIZER = re.compile(
    r"^(\w*Optimizer|SGD|Adam\w*|Nadam|RMS[pP]rop|Adagrad|Adadelta|Adamax|"
    r"Ftrl|Lion|Lamb|LAMB|Adafactor|LazyAdam|AdamW|Momentum|Lars)$")
_STRING_OPTIMIZERS = {"sgd", "adam", "adamw", "rmsprop", "adagrad", "ftrl",
                      "nadam", "adamax", "adadelta", "lion"}
SETTINGS = ("momentum", "weight_decay", "l1_regularization_strength",
            "l2_regularization_strength",
            "l2_shrinkage_regularization_strength", "decay", "use_nesterov")


@dataclasses.dataclass(frozen=True)
class Optimizer:
  """An optimizer construction found in the source.

  Attributes:
    name: Its class (`MomentumOptimizer`, `AdamW`) or Keras string.
    line: Where it is built.
    settings: The keyword arguments that move weights, as source text.
  """

  name: str
  line: int
  settings: Dict[str, str]


@dataclasses.dataclass(frozen=True)
class Context:
  """What a finding's explanation can name."""

  optimizer: Optional[Optimizer]
  restores: List[ast.Call]
  regularizers: List[ast.Call]


def optimizer_of(call: ast.AST) -> Optional[Optimizer]:
  """The optimizer `call` builds, if it builds one.

  >>> optimizer_of(ast.parse("tf.train.MomentumOptimizer(0.1, 0.9)").body[0].value)
  Optimizer(name='MomentumOptimizer', line=1, settings={'momentum': '0.9'})
  """
  if isinstance(call, ast.Constant) and isinstance(call.value, str) and (
      call.value.lower() in _STRING_OPTIMIZERS):
    return Optimizer(call.value, call.lineno, {})
  if not isinstance(call, ast.Call):
    return None
  name = _names.call_name(call)
  if not _OPTIMIZER.match(name) or name.endswith("Wrapper"):
    return None
  settings = {k.arg: ast.unparse(k.value) for k in call.keywords
              if k.arg in SETTINGS}
  if name in {"MomentumOptimizer", "RMSPropOptimizer"} and len(
      call.args) >= 2 and "momentum" not in settings:
    settings["momentum"] = ast.unparse(call.args[1])
  if name == "SGD" and len(call.args) >= 2 and "momentum" not in settings:
    settings["momentum"] = ast.unparse(call.args[1])
  return Optimizer(name, call.lineno, settings)


class ModuleContext:
  """What a module holds that explanations name: its restores and
  regularizers, and the first optimizer built in each scope (found once)."""

  def __init__(self, module: _scopes.Scope):
    self.module = module
    self.restores: List[ast.Call] = []
    self.regularizers: List[ast.Call] = []
    self._first: Dict[int, Optional[Optimizer]] = {}
    for each in module.all():
      for node in each.nodes:
        if isinstance(node, ast.Call):
          name = _names.call_name(node)
          if name in _names.RESTORES:
            self.restores.append(node)
          elif name in {"l2_loss", "l2_regularizer", "l1_regularizer", "l2",
                        "l1", "L1L2", "l1_l2"}:
            self.regularizers.append(node)

  def first_in(self, scope: _scopes.Scope) -> Optional[Optimizer]:
    if id(scope) not in self._first:
      self._first[id(scope)] = _first_in(scope)
    return self._first[id(scope)]

  def find(self, scope: _scopes.Scope, sink: Optional[ast.AST]) -> Context:
    """The context of a finding in `scope` whose sink is `sink`."""
    optimizer = None
    if isinstance(sink, ast.Call) and isinstance(sink.func, ast.Attribute):
      optimizer = _defined(sink.func.value, scope)
    place: Optional[_scopes.Scope] = scope
    while optimizer is None and place is not None:
      optimizer = self.first_in(place)
      place = place.parent
    if optimizer is None:
      optimizer = next((o for s in self.module.all()
                        for o in [self.first_in(s)] if o), None)
    return Context(optimizer, self.restores, self.regularizers)


def _defined(receiver: ast.AST, scope: _scopes.Scope) -> Optional[Optimizer]:
  name = _names.dotted(receiver)
  place: Optional[_scopes.Scope] = scope
  while name is not None and place is not None:
    if name.startswith("self."):
      values = [v for v, _ in place.cls.attributes.get(name, [])] if (
          place.cls is not None) else []
    else:
      values = [d.value for d in place.defs.get(name, [])]
    for value in values:
      found = optimizer_of(value)
      if found is None and isinstance(value, ast.Call) and value.args:
        found = optimizer_of(value.args[0])  # A wrapper around one.
      if found is not None:
        return found
    place = place.parent
  return None


def _first_in(scope: _scopes.Scope) -> Optional[Optimizer]:
  for node in scope.nodes:
    if isinstance(node, ast.Call):
      found = optimizer_of(node)
      if found is None and _names.call_name(node) == "compile":
        for keyword in node.keywords:
          if keyword.arg == "optimizer":
            found = optimizer_of(keyword.value)
      if found is not None:
        return found
  return None
