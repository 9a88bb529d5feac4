"""A trained input (an attack's perturbation, modifier or patch) multiplied
in the forward pass by a mask fixed while it trains: `newimg =
tanh(modifier + simg) / 2 * canchange + (1 - canchange) * original` with
`minimize(loss, var_list=[modifier])` (Carlini's L0 attack), `perturb *
l0_mask` with a placeholder fed a task's mask. Where the mask is 0 the
variable's elements reach neither the model nor the loss: their gradient
is exactly 0 and they never train while the rest of the variable does.

Which variables train is read from the steps themselves (the list given
to `minimize`, `compute_gradients` or a tape's `gradient`); the mask is
fixed by what feeds or writes it (`_fixed_feeds`: a placeholder fed once
before the loop or from what the loop does not bind anew, a variable no
step trains written such a value, an array loaded once from a file). No
name is read for what it says (a helper given the product is the
forward pass, whatever it is called). Every other read of the variable is
followed: each must reach the loss only through a product with the same
mask (else the masked elements train by that other way, a regulariser of
the variable itself too), or only be written, fetched, listed or saved.

Not this: a variable no listed step trains (a model's activations, an
attention, padding or sequence mask on them), a mask fed or drawn anew in
the loop (dropout, a batch's mask), a scalar, a triangle or a pattern
built from the shape, a trained gate (`sigmoid(g) * w` with `g` trained
too), a product only reduced into a loss (a loss mask), read as a layer's
weight (`_masked_weights`), written back or stopped."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _fixed_feeds
from tfpartial._tools.scan.idioms._masks import _input_index
from tfpartial._tools.scan.idioms._masks import _masked_reads
from tfpartial._tools.scan.idioms._masks import _masked_weights
from tfpartial._tools.scan.idioms._masks._mask_origins import (
    drawn, made_here, structural)

Hit = Tuple[ast.expr, _scopes.Scope, ast.expr]
Index = _input_index.Index

_MAKERS = {"Variable", "VariableV1", "get_variable"}
_LOADS = {"load", "loadtxt", "genfromtxt", "fromfile", "open", "imread",
          "read_file", "load_img"}
# What ends a value's way into a scalar (a loss mask), a summary or a
# print: no forward pass.
_NOT_FORWARD = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                "norm", "l2_loss", "nn.l2_loss", "print", "Print", "image",
                "histogram", "scalar", "assign", "assign_add", "assign_sub",
                "stop_gradient", "gradients", "gradient", "run", "eval"}


# What gathers every variable's penalty, or every trainable variable.
_COLLECTED = {"get_regularization_loss", "get_regularization_losses"}
_VARIABLES = {"trainable_variables", "trainable_weights",
              "TRAINABLE_VARIABLES"}


def masked_inputs(analysis: Analysis) -> List[Hit]:
  """(the product, its scope, the variable) of each trained input
  multiplied by a fixed mask on its way into the model."""
  found: List[Hit] = []
  project = analysis.project
  for module in project.modules:
    text = module.source.text
    if module.is_test or "*" not in text and "multiply(" not in text or (
        "var_list" not in text and ".gradient(" not in text) or not (
            "Variable(" in text or "get_variable(" in text):
      continue
    root = project.parsed(module)
    if root is None:
      continue
    index = Index(list(root.all()))
    trained = _trained(index)
    if not trained:
      continue
    judge = _Judge(analysis, index, trained)
    judge.collects = _collects(module.tree, text)
    lines: Set[int] = set()
    for node, scope, pair in index.products:
      if node.lineno in lines:
        continue
      hit = judge.judged(node, pair, scope)
      if hit is not None:
        lines.add(node.lineno)
        found.append(hit)
  return found


def _trained(index: Index) -> Set[str]:
  """The dotted names of the variables the module's steps list (`var_list
  =[modifier]`, `self.var_list = [self.w]`, `[tensors['pert']]` of a dict
  `{'pert': perturb}`)."""
  found: Set[str] = set()
  for given, home, line in index.listed:
    values = [(given, home, line)]
    spelled = _names.dotted(given)
    if spelled is not None and spelled in index.assigned:
      values = [(v, place, stmt.lineno)
                for v, place, stmt in index.assigned[spelled]]
    for value, place, at in values:
      elements = value.elts if isinstance(value, (ast.List, ast.Tuple)) \
          else [value]
      if len(elements) > 4:
        continue
      for element in elements:
        name = _names.dotted(element)
        bound = index.values(name, place, at) if name is not None else []
        if name is not None and not (bound and not _made(bound[-1][0])):
          found.add(name)  # Not a value bound to the name since.
        elif isinstance(element, ast.Subscript) and isinstance(
            element.slice, ast.Constant) and isinstance(
                element.slice.value, str):
          found.update(n for n in (_names.dotted(v) for v, _ in (
              index.keyed.get(element.slice.value, []))) if n is not None)
  return found


def _made(value: ast.expr) -> bool:
  return isinstance(value, ast.Call) and _names.call_name(value) in _MAKERS


class _Judge:
  """Judges one module's products against its index."""

  def __init__(self, analysis: Analysis, index: Index, trained: Set[str]):
    self.analysis = analysis
    self.index = index
    self.trained = trained
    self.collects = False  # The loss sums every variable's penalty.
    self.feeds = _fixed_feeds.Feeds(analysis, index)
    self.reads = _masked_reads.Reads(analysis, index)

  def judged(self, node: ast.expr, pair: Tuple[ast.expr, ast.expr],
             scope: _scopes.Scope) -> Optional[Hit]:
    for side, mask in (pair, pair[::-1]):
      variable = self._trained_variable(side, scope, node.lineno, 0)
      if variable is None:
        continue
      root = self._fixed_mask(mask, scope)
      if root is None or not self._forward(node, scope, 0):
        continue
      if _masked_weights._written_or_stopped(node, scope, self.analysis) or (
          _masked_weights.evaluation_only(node, scope, self.analysis)):
        return None
      if self.collects or self._regularized(variable, scope) or not (
          self.reads.only_masked(variable, node, scope, root)):
        return None
      return node, scope, variable
    return None

  def _regularized(self, variable: ast.expr, scope: _scopes.Scope
                   ) -> bool:
    """Whether the variable is made with a regularizer (its penalty
    trains every element)."""
    name = _names.dotted(variable)
    values = self.index.values(name, scope) if name is not None else []
    return bool(values) and isinstance(values[-1][0], ast.Call) and any(
        k.arg == "regularizer" for k in values[-1][0].keywords)

  def _trained_variable(self, node: ast.expr, scope: _scopes.Scope,
                        before: int, depth: int) -> Optional[ast.expr]:
    """The listed variable `node` is made of, element by element (`tanh(
    modifier + simg) / 2`, `0.5 * (tanh(w) + 1) - x`), else None."""
    if depth > 3:
      return None
    if isinstance(node, (ast.Name, ast.Attribute)):
      name = _names.dotted(node)
      if name is None:
        return None
      values = self.index.values(name, scope, before)
      if name in self.trained and values and _made(values[-1][0]):
        return node  # The variable itself, not a value since bound to it.
      for value, place, statement in values[-1:]:
        return self._trained_variable(value, place, statement.lineno,
                                      depth + 1)
      return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (
        ast.Add, ast.Sub, ast.Mult, ast.Div)):
      return self._trained_variable(node.left, scope, before, depth) or (
          self._trained_variable(node.right, scope, before, depth))
    if isinstance(node, ast.UnaryOp):
      return self._trained_variable(node.operand, scope, before, depth)
    if isinstance(node, ast.Call) and _names.call_name(
        node) in _masked_reads.ELEMENTWISE and node.args:
      return self._trained_variable(node.args[0], scope, before, depth)
    return None

  def _fixed_mask(self, mask: ast.expr, scope: _scopes.Scope
                  ) -> Optional[Tuple[str, bool]]:
    """(the mask's name, whether the factor is its complement `1 - m`)
    when a factor is a mask fixed while the variable trains, else None."""
    root, complement = _masked_reads.peeled(mask)
    name = _names.dotted(root)
    if name is None or isinstance(root, ast.Name) and (
        root.id in scope.params) or name in self.trained:
      return None
    if drawn(mask, scope) or made_here(mask, scope) or structural(
        mask, scope) or not self._fixed_origin(name, scope, 0):
      return None
    return name, complement

  def _fixed_origin(self, name: str, scope: _scopes.Scope, depth: int
                    ) -> bool:
    """Whether every value `name` is assigned is fixed for the run: a
    placeholder of a fixed non-scalar shape whose feeds are, a variable
    no step trains whose writes are, an array or an image loaded once."""
    values = self.index.values(name, scope)
    if not values or depth > 2:
      return False
    for value, place, statement in values[-4:]:
      peeled, _ = _masked_reads.peeled(value)
      if isinstance(peeled, (ast.Name, ast.Attribute)) and (
          peeled is not value):
        inner = _names.dotted(peeled)
        if inner is None or inner in self.trained or not (
            self._fixed_origin(inner, place, depth + 1)):
          return False
        continue
      if not isinstance(value, ast.Call):
        return False
      called = _names.call_name(value)
      if called in _fixed_feeds.PLACEHOLDERS:
        if not _fixed_shape(value) or not self.feeds.placeholder_fixed(
            value) or self.feeds.set_elsewhere(name, place):
          return False
      elif called in _MAKERS:
        if not self.feeds.variable_fixed(name, self.trained) or (
            self.feeds.set_elsewhere(name, place)):
          return False
      elif not self._loaded(value, place) or _input_index.loop_around(
          statement, self.analysis.order(place).parent) is not None:
        return False
    return True

  def _loaded(self, call: ast.Call, scope: _scopes.Scope) -> bool:
    """Whether a call loads an array or an image (`np.load`, a project
    function that opens a file and draws nothing)."""
    if _names.call_name(call) in _LOADS:
      return True
    function = self.analysis.flow.callee(call, scope)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return False
    calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
    return any(_names.call_name(n) in _LOADS for n in calls) and not any(
        drawn(n, scope) for n in calls)

  def _forward(self, node: ast.AST, scope: _scopes.Scope, depth: int
               ) -> bool:
    """Whether a value goes on into a model or an op of the forward pass
    (`model.predict(newimg)`, `tf.math.add(cloud, perturb_masked)`, a
    project function given it, whatever its name), not only into a
    reduction (a loss mask), a summary op, or a weight's reader."""
    order = self.analysis.order(scope)
    current: ast.AST = node
    parent = order.parent(current)
    while isinstance(parent, (ast.BinOp, ast.UnaryOp)) or isinstance(
        parent, ast.Call) and _names.call_name(
            parent) in _masked_reads.ELEMENTWISE and (
                parent.func is not current):
      current, parent = parent, order.parent(parent)
    if isinstance(parent, ast.Call) and parent.func is not current:
      called = _names.call_name(parent)
      return not (called in _NOT_FORWARD or called in (
          _masked_weights._READERS))
    if isinstance(parent, ast.keyword) or not isinstance(
        parent, ast.Assign) or len(parent.targets) != 1 or depth > 3:
      return False
    name = _names.dotted(parent.targets[0])
    if name is None:
      return False
    return any(self._forward(read, place, depth + 1)
               for read, place in self.reads.seeing(name, parent, scope))

def _collects(tree: Optional[ast.AST], text: str) -> bool:
  """Whether the module gathers the regularisation losses, or iterates
  over the trainable variables (`[tf.nn.l2_loss(v) for v in
  tf.trainable_variables()]`): a penalty that trains each variable
  whole, whatever its name."""
  if tree is None or "regulari" not in text and (
      "trainable_variables" not in text and "TRAINABLE" not in text):
    return False
  for node in ast.walk(tree):
    if isinstance(node, ast.Call) and _names.call_name(node) in _COLLECTED:
      return True
    if isinstance(node, ast.Attribute) and node.attr == (
        "REGULARIZATION_LOSSES"):
      return True
    if isinstance(node, ast.comprehension) and any(
        isinstance(n, ast.Attribute) and n.attr in _VARIABLES or isinstance(
            n, ast.Name) and n.id in _VARIABLES for n in ast.walk(node.iter)):
      return True
  return False


def _fixed_shape(call: ast.Call) -> bool:
  """Whether a placeholder's shape has no batch axis (`None`) and is no
  scalar (`[]`): one mask for the whole run, of the input's shape."""
  shape = next((k.value for k in call.keywords if k.arg == "shape"),
               call.args[1] if len(call.args) > 1 else None)
  if shape is None:
    return False
  if isinstance(shape, (ast.List, ast.Tuple)) and not shape.elts:
    return False
  return not any(isinstance(n, ast.Constant) and n.value is None
                 for n in ast.walk(shape))
