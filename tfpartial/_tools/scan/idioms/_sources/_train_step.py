"""A train step as `var-list-filter` reads it (`Step`): the calls that are
steps, the list each names (`var_list_of`) and the loss it minimises."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels


# `apply_optimizer`: prettytensor's `pt.apply_optimizer(optimizer,
# losses=[loss], var_list=...)`, which minimises the sum of its losses.
STEPS = {"minimize", "compute_gradients", "gradients", "gradient",
         "apply_gradients", "create_train_op", "optimize_clones",
         "optimize_loss", "get_updates", "apply_optimizer"}
# `trainable_variables=`: TensorFlow Probability's `tfp.math.minimize`.
_VAR_LIST_KEYWORDS = {"var_list", "variables_to_train", "trainable_variables",
                      "sources", "xs", "variables"}
_LOSS_KEYWORDS = {"loss", "ys", "target", "total_loss"}
# Where a step takes its list by position: slim's and `tf.contrib.
# training`'s `create_train_op(total_loss, optimizer, global_step,
# update_ops, variables_to_train)`; `tf.contrib.layers.optimize_loss(loss,
# global_step, learning_rate, optimizer, gradient_noise_scale,
# gradient_multipliers, clip_gradients, learning_rate_decay_fn,
# update_ops, variables)`.
_POSITIONS = {"create_train_op": 4, "optimize_loss": 9}


@dataclasses.dataclass
class Step:
  """One train step (or gradient computation) and what it trains.

  Attributes:
    call: The call (`minimize`, `tf.gradients`, or a function of the
      project that calls one with its parameters).
    scope: Where it is called.
    var_list: What it trains, as the call names it (None: everything).
    loss: What it minimises, as text (None when not known).
    labels: The labels of `var_list`.
  """

  call: ast.Call
  scope: _scopes.Scope
  var_list: Optional[ast.AST]
  loss: Optional[str]
  labels: Labels
  # The filters of the other classes whose method of the name the step
  # reads (`model.get_retrain_vars()`, `model` of a class passed in).
  also: Tuple[ast.expr, ...] = ()
  # A sibling group of its list (split off by the same loop or helper)
  # that no step of the module trains: not one of a GAN's halves.
  grouped: bool = False
  # How many new graphs its function started before it (`_graphs`).
  section: int = 0
  # For a call of a function of the project that passes its parameters
  # on to a step in the same file: that step (`compute_gradients` inside
  # `create_optimizer`), which a message names with its line.
  inside: Optional[ast.Call] = None
  # What the gates read of the step alone, worked out once however many
  # other steps ask (`_other_half`); a copy starts with none.
  memo: Dict[object, object] = dataclasses.field(
      default_factory=dict, init=False, repr=False, compare=False)


def _loss_node(call: ast.Call) -> Optional[ast.expr]:
  """What a step minimises, as the call passes it (not an apply's)."""
  if _names.call_name(call) == "apply_gradients":
    return None
  if _names.call_name(call) == "apply_optimizer":
    return _optimized_loss(call)
  return call.args[0] if call.args else next(
      (k.value for k in call.keywords if k.arg in _LOSS_KEYWORDS), None)


def _optimized_loss(call: ast.Call) -> Optional[ast.expr]:
  """The loss of prettytensor's `apply_optimizer(optimizer, losses)`:
  the one loss its list holds, else the list."""
  losses = call.args[1] if len(call.args) >= 2 else next(
      (k.value for k in call.keywords if k.arg == "losses"), None)
  if isinstance(losses, (ast.List, ast.Tuple)) and len(losses.elts) == 1:
    return losses.elts[0]
  return losses


def _class_of(scope: _scopes.Scope) -> Optional[_scopes.ClassInfo]:
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  return place.cls if place is not None else None


def _deep_nodes(scope: _scopes.Scope) -> Iterator[ast.AST]:
  """The nodes of a function and of the functions nested in it (each
  scope's, read once and kept; no constants)."""
  for each in scope.all():
    yield from each.nodes


def var_list_of(call: ast.Call) -> Optional[ast.AST]:
  """The variables a step trains, as the call names them (what a callable
  `var_list=lambda: [...]` returns)."""
  chosen = _var_list_of(call)
  if isinstance(chosen, ast.Lambda) and not chosen.args.args:
    return chosen.body
  return chosen


def _var_list_of(call: ast.Call) -> Optional[ast.AST]:
  name = _names.call_name(call)
  for keyword in call.keywords:
    if keyword.arg in _VAR_LIST_KEYWORDS:
      return keyword.value
  if name in {"gradients", "gradient", "compute_gradients"} and len(
      call.args) >= 2:
    return call.args[1]
  if name == "minimize" and len(call.args) >= 2:
    return call.args[-1]
  if name == "apply_gradients" and call.args:
    pairs = _names.unwrapped(call.args[0])
    if isinstance(pairs, ast.Call) and _names.call_name(pairs) == "zip" and (
        len(pairs.args) == 2):
      return pairs.args[1]  # The variables, not the gradients.
    return pairs
  if name in _POSITIONS and len(call.args) > _POSITIONS[name]:
    return call.args[_POSITIONS[name]]
  if name == "get_updates":  # Keras 2: `get_updates(loss, params)`.
    return next((k.value for k in call.keywords if k.arg == "params"),
                call.args[1] if len(call.args) >= 2 else None)
  return None


def _loss_of(call: ast.Call, flow: Flow, scope: _scopes.Scope
             ) -> Optional[str]:
  """What a step minimises, as text; for `apply_gradients`, the loss of
  the gradients it applies."""
  name = _names.call_name(call)
  if name == "apply_gradients":
    source = flow.labels(call.args[0], scope).get("grad") if (
        call.args) else None
    if isinstance(source, ast.Call) and _names.call_name(source) in STEPS:
      return _loss_of(source, flow, flow.origin.get(id(source), scope))
    return None
  loss = _optimized_loss(call) if name == "apply_optimizer" else (
      call.args[0] if call.args else next(
          (k.value for k in call.keywords if k.arg in _LOSS_KEYWORDS), None))
  return _loss_key(loss, scope)


def _gradient_call(analysis: Analysis, step: Step
                   ) -> Optional[Tuple[ast.Call, _scopes.Scope]]:
  """The call that takes the step's loss, with its scope: the step itself,
  or the gradient call whose result an `apply_gradients` applies (None
  when that is not a call)."""
  call, scope = step.call, step.scope
  if _names.call_name(call) == "apply_gradients":
    source = analysis.flow.labels(call.args[0], scope).get("grad") if (
        call.args) else None
    if not isinstance(source, ast.Call):
      return None
    call, scope = source, analysis.flow.origin.get(id(source), scope)
  return call, scope


def _loss_key(loss: Optional[ast.AST], scope: _scopes.Scope
              ) -> Optional[str]:
  """A loss as text; a local name also by its function (two functions'
  `loss` are two losses)."""
  if loss is None:
    return None
  text = ast.unparse(loss)  # `_deep` cut it: within the stack.
  if isinstance(loss, ast.Name) and (loss.id in scope.defs or
                                     loss.id in scope.params):
    return f"{id(scope)}:{text}"
  return text


_OWN_VARIABLES = {"trainable_variables", "trainable_weights", "variables",
                  "weights"}


def _trainable_variable(value: ast.AST) -> bool:
  """`tf.get_variable(...)`, `tf.Variable(...)`, not `trainable=False`,
  nor a scalar set from a number (a step counter, a learning rate)."""
  return isinstance(value, ast.Call) and _names.call_name(value) in (
      _names.VARIABLES) and not any(
          k.arg == "trainable" and isinstance(k.value, ast.Constant) and
          k.value.value is False for k in value.keywords) and not (
              _names.call_name(value) in {"Variable", "VariableV1"} and
              value.args and isinstance(value.args[0], ast.Constant) and
              isinstance(value.args[0].value, (int, float)))


def _end(node: ast.AST) -> Tuple[int, int]:
  return (getattr(node, "end_lineno", 0) or 0,
          getattr(node, "end_col_offset", 0) or 0)


def _unparsed(node: Optional[ast.expr]) -> Optional[str]:
  return ast.unparse(node) if node is not None else None


def _opened_here(chosen: Optional[ast.AST], home: _scopes.Scope) -> bool:
  """Whether the function that filters by the scope `chosen` (a name,
  not a literal) opens that scope itself around what it builds (`with
  tf.variable_scope(net_name): self.create_network()` before
  `trainable_variables(scope=net_name)`): its own whole network."""
  if chosen is None or isinstance(chosen, ast.Constant) or not isinstance(
      home.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  text = ast.unparse(chosen)
  return any(isinstance(n, ast.With) and any(
      _unparsed(_opened_scopes.opened_on(
          i.context_expr, _names.TF_SCOPES_OR_CLASS)) == text
      for i in n.items) and any(
                  isinstance(c, ast.Call) for s in n.body
                  for c in _scopes.walk(s)) for n in _deep_nodes(home))
