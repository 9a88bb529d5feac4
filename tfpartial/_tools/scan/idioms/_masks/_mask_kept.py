"""Whether a mask stays as it was made while the model trains: not fed
anew with each batch, not trained, not recomputed in each step nor
regrown by a schedule (RigL, SET), not written between rounds. Part of
`_masked_weights`."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _evaluated
from tfpartial._tools.scan.idioms._masks import _whole_writes
from tfpartial._tools.scan.idioms._masks._mask_origins import (
    assigned, bindings, drawn, made_here, mask_key, written_to)

# Methods that run with each step: a mask written there is made anew.
_PER_STEP = re.compile(r"^(call|__call__|train_step|_?update\w*|step|"
                       r"on_(train_)?batch_\w+)$")


def fed(name: str, scope: _scopes.Scope) -> bool:
  """Whether a name is made by a placeholder (once per scope and name)."""
  return scope.once((fed, name, 0), lambda: any(
      isinstance(d.value, ast.Call) and _names.call_name(d.value) == (
          "placeholder") for d in bindings(name, scope)))


def fixed(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether `mask` is a 0/1 mask fixed while the model trains: named for
  a mask (a non-trainable variable, an attribute, a loaded array) or a
  constant made of ones and zeros, or a placeholder of a weight's shape;
  not drawn at random, not compared here, not a trainable gate, not
  written by a method that runs with each step. A parameter read in
  making it rules it out, except in a non-trainable weight whose array
  had kept positions written by an attribute set only from a parameter,
  and that nothing assigns (katejarne's `CustomDense`)."""
  if _evaluated.fed(mask, scope, analysis):
    return True  # Its shape may read the function's parameters.
  if _evaluated.fed_otherwise(mask, scope, analysis):
    return False
  flow = analysis.flow
  labels = flow.labels(mask, scope)
  # A variable kept from training holds its mask: a parameter read in
  # making it (the layer's `input_shape`, the positions it keeps) is no
  # mask of the batch.
  held = "var" in labels and "shadow" in labels and _kept_positions(
      mask, scope, analysis) and not written_to(mask, scope, analysis)
  if "random" in labels or "grad" in labels or "param" in labels and (
      not held) or ("var" in labels and "shadow" not in labels):
    return False  # A draw, a gradient, the batch's mask, a trainable gate.
  if "mask" in labels or kept_as_made(mask, scope, analysis):
    return not _rewritten_each_step(mask, scope) and not (
        regrown(mask, scope, analysis))
  return _placeholder_mask(mask, scope)


def _kept_positions(mask: ast.expr, scope: _scopes.Scope,
                    analysis: Analysis) -> bool:
  """Whether the array a held mask (`self.mask`) was made from had
  positions written by an attribute the class sets only from a parameter
  (katejarne's `self.mask[self.trainable_indices] = 1.0`): the kept
  positions, handed to the model, not of the batch. A slice of the
  shapes (a block, half the columns) is structural and gives no
  exemption."""
  if not isinstance(mask, ast.Attribute) or scope.cls is None:
    return False
  for node in ast.walk(scope.cls.node):
    for target in node.targets if isinstance(node, ast.Assign) else []:
      if isinstance(target, ast.Subscript) and isinstance(
          target.value, ast.Attribute) and target.value.attr == (
              mask.attr) and _names.dotted(target.value.value) == "self":
        index = target.slice
        if isinstance(index, ast.Attribute) and _names.dotted(
            index.value) == "self" and _handed_in(scope.cls.node, index.attr):
          return True
  return False


def _handed_in(cls: ast.ClassDef, attr: str) -> bool:
  """Whether the class sets `self.<attr>` only from a parameter of the
  method that sets it (`self.trainable_indices = trainable_indices`):
  positions the user hands the layer, not computed from its shapes.

  >>> cls = ast.parse("class L:\\n def __init__(self, rows):\\n"
  ...                 "  self.rows = rows\\n  self.half = rows // 2").body[0]
  >>> _handed_in(cls, "rows"), _handed_in(cls, "half")
  (True, False)
  """
  handed = []
  for method in cls.body:
    if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
      continue
    params = {a.arg for a in method.args.args + method.args.kwonlyargs}
    for node in ast.walk(method):
      targets = node.targets if isinstance(node, ast.Assign) else [
          node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
      for target in targets:
        if isinstance(target, ast.Attribute) and target.attr == attr and (
            _names.dotted(target.value) == "self"):
          value = getattr(node, "value", None)
          handed.append(isinstance(node, ast.Assign) and isinstance(
              value, ast.Name) and value.id in params)
  return bool(handed) and all(handed)


def trained(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis,
             depth: int = 0) -> bool:
  """Whether a mask is computed from a trainable variable (itself or
  through the local names it reads): a learned gate (`sigmoid(self.
  mask_logits)`), the top-k of trainable scores passed straight through
  (movement pruning)."""
  flow = analysis.flow
  for item in _data(mask):
    if not isinstance(item, (ast.Name, ast.Attribute)) or isinstance(
        item, ast.Name) and item.id in scope.params:
      continue
    labels = flow.labels(item, scope)
    if ("var" in labels or "vararith" in labels or "sg" in labels) and (
        "shadow" not in labels):
      return True
    if isinstance(item, ast.Name) and depth < 2 and any(
        trained(d.value, scope, analysis, depth + 1)
        for d in scope.defs.get(item.id, []) if d.value is not None):
      return True
  return False


def fed_anew(mask: ast.expr, scope: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether a placeholder mask is fed a random draw (`feed_dict={drop_mask:
  np.random.binomial(1, p, shape)}`): DropConnect from NumPy, a new mask
  each step."""
  if not isinstance(mask, ast.Name) or not fed(mask.id, scope):
    return False
  module = analysis.module(scope)
  root = analysis.project.parsed(module)
  if root is None:
    return False
  for place in root.all():
    for node in place.nodes:
      if not isinstance(node, ast.Dict):
        continue
      for key, value in zip(node.keys, node.values):
        if isinstance(key, ast.Name) and key.id == mask.id and drawn(
            value, place):
          return True
  return False


def kept_as_made(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis
                 ) -> bool:
  """Whether a mask is, whatever its name, a 0/1 tensor data or training
  chose: an array loaded from a file (`np.load`), or a non-trainable
  variable made of ones (`add_weight(..., initializer="ones",
  trainable=False)`) that the code writes somewhere (a pruning round); not
  a scalar, not a variable of ones nothing writes (it masks nothing)."""
  values = assigned(mask, scope, analysis)[:8]
  if not values:
    return False
  for value, _ in values:
    if isinstance(value, ast.Call) and _names.call_name(value) in _LOADS and (
        (_names.dotted(value.func) or "").startswith(("np.", "numpy."))):
      continue
    if not (isinstance(value, ast.Call) and _names.call_name(value) in (
        _VARIABLES) and _ones_kept(value)):
      return False
  return all(isinstance(v, ast.Call) and _names.call_name(v) in _LOADS
             for v, _ in values) or written_to(mask, scope, analysis) or (
                 _whole_writes.written_whole(
                     scope, analysis, _whole_writes.MADE, run=True))


def ones_unwritten(mask: ast.expr, scope: _scopes.Scope,
                    analysis: Analysis) -> bool:
  """Whether a mask, whatever its name, is a non-trainable variable of
  ones kept in a notebook that nothing writes (by name, by a whole
  model's `set_weights` or a restore): all ones, it masks nothing. Only
  in a notebook: nothing imports one, so every write of its layers is in
  sight; a module's layer may be pruned by code that imports it."""
  if not analysis.module(scope).path.endswith(".ipynb"):
    return False
  values = assigned(mask, scope, analysis)[:8]
  return bool(values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _VARIABLES and (
          _ones_kept(v)) for v, _ in values) and not written_to(
              mask, scope, analysis) and not _whole_writes.written_whole(
                  scope, analysis, _whole_writes.ANY)


_LOADS = {"load", "loadtxt", "genfromtxt", "fromfile"}


_VARIABLES = {"Variable", "VariableV1", "get_variable", "add_weight",
              "add_variable"}


def _ones_kept(call: ast.Call) -> bool:
  """`Variable(tf.ones(shape), trainable=False)`, `add_weight(shape=s,
  initializer="ones", trainable=False)`, `get_variable(name, shape,
  initializer=constant_initializer(1.0), trainable=False)`."""
  keywords = {k.arg: k.value for k in call.keywords if k.arg}
  trainable = keywords.get("trainable")
  if not (isinstance(trainable, ast.Constant) and trainable.value is False):
    return False
  first = keywords.get("initial_value", keywords.get("initializer"))
  if first is None and _names.call_name(call) in {"Variable", "VariableV1"}:
    first = call.args[0] if call.args else None
  if isinstance(first, ast.Constant):
    return first.value in ("ones", "Ones")
  if not isinstance(first, ast.Call):
    return False
  name = _names.call_name(first)
  if name in {"ones", "ones_initializer", "Ones"}:
    return True
  value = first.args[0] if first.args else None
  return name in {"Constant", "constant_initializer"} and isinstance(
      value, ast.Constant) and value.value == 1


def _data(node: ast.AST) -> List[ast.AST]:
  """The nodes of an expression its values come from: not an index
  (`masks[i]`), not a length or a range (`range(len(outputs))`)."""
  found: List[ast.AST] = []
  stack: List[ast.AST] = [node]
  while stack:
    item = stack.pop()
    found.append(item)
    if isinstance(item, ast.Subscript):
      stack.append(item.value)
    elif not (isinstance(item, ast.Call) and _names.call_name(item) in {
        "len", "range", "shape", "enumerate"}):
      stack.extend(ast.iter_child_nodes(item))
  return found


def _rewritten_each_step(mask: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether a mask attribute (`self.mask`) is written by a method of its
  class that runs with each step (`call`, `train_step`, a batch hook):
  pruning recomputed as the model trains."""
  spelled = _names.dotted(mask)
  owner = scope
  while owner.parent is not None and owner.cls is None:
    owner = owner.parent
  if spelled is None or not spelled.startswith("self.") or owner.cls is None:
    return False
  root = owner
  while root.parent is not None:
    root = root.parent
  for method in root.all():
    if method.cls is not owner.cls or not _PER_STEP.match(method.name):
      continue
    for node in method.nodes:
      if isinstance(node, ast.Call) and _names.call_name(node) in {
          "assign", "assign_sub", "assign_add"} and any(
              n is not None and _names.dotted(n) == spelled for n in (
                  getattr(node.func, "value", None), *node.args[:1])):
        return True
  return False


def _assigned(analysis: Analysis
              ) -> Dict[str, List[Tuple[_scopes.Scope, ast.Call, ast.expr]]]:
  """The project's `assign` calls by the mask attribute they write
  (`mask_key` of the receiver), in order, with the value written: read
  once per analysis, however many masks ask."""
  found: Dict[str, List[Tuple[_scopes.Scope, ast.Call, ast.expr]]] = {}
  for place, call in analysis.calls_named(("assign",)):
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else (
        call.args[0] if call.args else None)
    value = call.args[-1] if call.args else None
    key = mask_key(receiver, place) if receiver is not None and (
        value is not None) else None
    if key is not None and value is not None:
      found.setdefault(key, []).append((place, call, value))
  return found


def regrown(mask: ast.expr, scope: _scopes.Scope, analysis: Analysis,
            steps: Tuple[str, ...] = ()) -> bool:
  """Whether a mask (`layer.mask`, an element of `self.masks`) is set anew
  from values it compares or ranks (`top_k`, a percentile, a draw) while
  the model trains: in a callback's epoch or batch hook (SET's
  evolution), in a `train_step` or a function it calls, or in a loop that
  also applies the steps (RigL's drop and regrowth every n steps; `steps`
  names the project's functions that apply one). A mask pruned between
  whole runs of `fit` (a lottery ticket's round) is fixed within each."""
  key = mask_key(mask, scope)
  if key is None:
    return False
  assigned = analysis.once("mask_kept:assigned", lambda: _assigned(analysis))
  assert isinstance(assigned, dict)
  for place, call, value in assigned.get(key, ()):
    if not made_here(value, place):
      continue
    if place.cls is not None and _HOOK.match(place.name) and any(
        b.endswith("Callback") for b in place.cls.bases):
      return True
    callers = analysis.project.callers(place.name)[:12] if isinstance(
        place.node, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    if _STEP_FUNCTION.match(place.name) or any(
        _STEP_FUNCTION.match(s.name) for s, _ in callers):
      return True
    if _in_step_loop(call, place, analysis, steps) or any(
        _in_step_loop(c, s, analysis, steps) for s, c in callers):
      return True
  return False


# A callback's hooks that run while `fit` trains.
_HOOK = re.compile(r"^on_(epoch|train_batch|batch)_(begin|end)$")


# Functions that run with each step of `fit`.
_STEP_FUNCTION = re.compile(r"^(train_step|_?train_on_batch|call|__call__)$")


# What applies one step of training.
_STEPS = {"apply_gradients", "train_on_batch", "minimize", "train_step",
          "apply_updates"}


def _in_step_loop(node: ast.AST, scope: _scopes.Scope,
                  analysis: Analysis, steps: Tuple[str, ...] = ()) -> bool:
  """Whether `node` is in a loop whose own body (not a nested loop's)
  applies a step of training."""
  order = analysis.order(scope)
  current: Optional[ast.AST] = order.parent(node)
  while current is not None:
    if isinstance(current, (ast.For, ast.While)):
      stack: List[ast.AST] = list(current.body)
      while stack:
        item = stack.pop()
        if isinstance(item, ast.Call) and (_names.call_name(
            item) in _STEPS or _names.call_name(item) in steps):
          return True
        if not isinstance(item, (ast.For, ast.While, ast.FunctionDef)):
          stack.extend(ast.iter_child_nodes(item))
      return False
    current = order.parent(current)
  return False


def _placeholder_mask(mask: ast.expr, scope: _scopes.Scope) -> bool:
  """`prune_1 = tf.placeholder(tf.float32, shape=[784, 300])`: a feed of
  a weight's full, static shape (not a batch, not a scalar rate)."""
  if not isinstance(mask, ast.Name):
    return False
  values = [d.value for d in bindings(mask.id, scope)]
  if not values:
    return False
  for value in values:
    if not (isinstance(value, ast.Call) and _names.call_name(value) == (
        "placeholder")):
      return False
    shape = next((k.value for k in value.keywords if k.arg == "shape"),
                 value.args[1] if len(value.args) > 1 else None)
    if not isinstance(shape, (ast.List, ast.Tuple)) or not shape.elts or (
        not all(isinstance(e, ast.Constant) and isinstance(e.value, int)
                for e in shape.elts)):
      return False
  return True
