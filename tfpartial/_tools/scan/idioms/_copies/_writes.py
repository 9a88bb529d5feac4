"""Writes into a variable, classified once for the three idioms that
anchor on them: a copy of the variable written back (`shadow-variable`,
`write-back`) or the variable times a mask written back
(`weight-remask`)."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms._copies import _averaged
from tfpartial._tools.scan.idioms._copies._in_training import (
    TRAINS as _TRAINS, after_fit as _after_fit, in_training,
    loop_trains as _loop_trains, memo as _memo,
    once_beside_fit as _once_beside_fit,
    repeats_with_training as _repeats_with_training)
from tfpartial._tools.scan.idioms._copies import _clipped
from tfpartial._tools.scan.idioms._copies import _weight_average
from tfpartial._tools.scan.idioms._copies import _decayed
from tfpartial._tools.scan.idioms._copies import _each_model
from tfpartial._tools.scan.idioms._copies import _interpolated
from tfpartial._tools.scan.idioms._copies import _kept_params
from tfpartial._tools.scan.idioms._copies import _model_input
from tfpartial._tools.scan.idioms._copies import _own_value
from tfpartial._tools.scan.idioms._copies import _passed_untrainable
from tfpartial._tools.scan.idioms._copies import _pinned
from tfpartial._tools.scan.idioms._copies import _premasked
from tfpartial._tools.scan.idioms._copies import _put_back
from tfpartial._tools.scan.idioms._copies import _read_back
from tfpartial._tools.scan.idioms._copies import _rollback
from tfpartial._tools.scan.idioms._copies import _session_hooks
from tfpartial._tools.scan.idioms._copies import _taken_off
from tfpartial._tools.scan.idioms._copies import _trained_too
from tfpartial._tools.scan.idioms._copies import _untrained
from tfpartial._tools.scan.idioms._gradients import _hooks
from tfpartial._tools.scan.idioms._idiom import Hit, short
from tfpartial._tools.scan.idioms._masks import _anew
from tfpartial._tools.scan.idioms._masks import _evaluated
from tfpartial._tools.scan.idioms._masks import _kept_zeros
from tfpartial._tools.scan.idioms._runs import _later

@dataclasses.dataclass
class WriteHit(Hit):
  """A write into a variable: what is written, and when it runs.

  Attributes:
    kind: The idiom it is ("shadow-variable", "write-back",
      "weight-remask").
    target: The variable written.
    value: What is written.
    order: "control", "fetch" or "after" (the train step), or "".
    at: The `control_dependencies` block, the fetching `run`, or the step.
    constraint: For a constraint, its class or keyword.
    zeros: Whether fixed elements are set back to zeros (a padding row
      reset with each step: a re-mask, nothing saved).
  """

  kind: str = ""
  target: Optional[ast.AST] = None
  value: Optional[ast.AST] = None
  order: str = ""
  at: Optional[ast.AST] = None
  constraint: str = ""
  zeros: bool = False

  def written(self) -> str:
    """The variable written, as a message names it."""
    return short(self.target) if self.target else "the variable"

  def writer(self) -> str:
    """The write's name (`scatter_update`), as a message names it."""
    return _names.call_name(self.sink) if self.sink is not None else (
        "a write")


# The label of a whole variable set back to a number after the step
# that trains it (`_pinned`): the step.
PINNED = "pinned"

# The calls `target_and_value` reads.
WRITE_CALLS = frozenset({"scatter_update", "scatter_nd_update", "assign",
                         "set_value", "set_weights", "load",
                         "batch_set_value"})
# And a mask's complement taken off a variable (`_taken_off`), read here
# only: the other readers of `WRITE_CALLS` look for copies, not masks.
_MASKING_WRITES = WRITE_CALLS | {"assign_sub"}
# Receivers whose `load` reads a file, not a variable's `load(value, sess)`.
_FILE_LOADERS = frozenset({"np", "numpy", "json", "pickle", "cPickle",
                           "yaml", "torch", "joblib", "dill", "marshal",
                           "h5py", "hickle", "msgpack", "toml", "ujson"})


def target_and_value(call: ast.Call
                     ) -> Optional[Tuple[ast.expr, ast.expr, bool]]:
  """(target, value, partial) of a write, or None."""
  name = _names.call_name(call)
  receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
  args = call.args
  if name == "set_value" and call.keywords:  # `K.set_value(x=w, value=v)`.
    named = {k.arg: k.value for k in call.keywords}
    args = [*args, *(named[k] for k in ("x", "value")[len(args):]
                     if k in named)]
  if name == "batch_set_value" and len(args) == 1 and isinstance(
      args[0], (ast.List, ast.Tuple)) and len(args[0].elts) == 1 and (
          isinstance(args[0].elts[0], ast.Tuple)) and len(
              args[0].elts[0].elts) == 2:
    pair = args[0].elts[0].elts  # `K.batch_set_value([(w, value)])`.
    return pair[0], pair[1], False
  if name in {"scatter_update", "scatter_nd_update"}:
    if len(args) >= 3:
      return args[0], args[2], True
    if receiver is not None and args:
      return receiver, _slices_values(args[-1]), True
  if name in {"assign", "set_value"} and len(args) == 2:
    return args[0], args[1], False
  if name == "set_weights" and len(args) == 1 and receiver:
    return receiver, args[0], False  # A layer's weights, all of them.
  if name == "assign" and len(args) == 1 and receiver:
    return receiver, args[0], isinstance(receiver, ast.Subscript) and not (
        _keyed(receiver))
  if name == "load" and receiver is not None and 1 <= len(args) <= 2 and (
      isinstance(receiver, (ast.Name, ast.Attribute, ast.Subscript))
      and _names.root(receiver) not in _FILE_LOADERS
      and not isinstance(args[0], (ast.Constant, ast.JoinedStr))):
    return receiver, args[0], False  # `Variable.load(value, session)`.
  return None


def _slices_values(value: ast.expr) -> ast.expr:
  """The values of `tf.IndexedSlices(values, indices)`, the argument of
  `variable.scatter_update(...)`: what the rows are set to."""
  if isinstance(value, ast.Call) and _names.call_name(value) == (
      "IndexedSlices"):
    first = value.args[0] if value.args else next(
        (k.value for k in value.keywords if k.arg == "values"), None)
    if first is not None:
      return first
  return value


def _write_parts(call: ast.Call
                 ) -> Optional[Tuple[ast.expr, ast.expr, bool]]:
  """`target_and_value`, or a mask's complement taken off the variable
  (`w.assign_sub(w * (1 - m))`: `w * m` written, a whole variable)."""
  taken = _taken_off.taken_off(call) if _names.call_name(call) == (
      "assign_sub") else None
  return target_and_value(call) if taken is None else (*taken, False)


def _keyed(receiver: ast.Subscript) -> bool:
  """`states[key]['sum']`: an entry of a dict of variables by a string
  key (no tensor is indexed by one), a whole variable."""
  index = receiver.slice
  return isinstance(index, ast.Constant) and isinstance(index.value, str)


def writes(analysis: Analysis) -> Tuple[WriteHit, ...]:
  """Every write into a variable of its own copy or of itself masked
  (found once per analysis, for the three idioms that read them)."""
  def find() -> Tuple[WriteHit, ...]:
    hits: List[WriteHit] = []
    for scope, call in analysis.calls_named(_MASKING_WRITES):
      hit = _classify(call, scope, analysis)
      if hit is not None and not _recomputed(hit, analysis):
        hits.append(hit)
    for scope, call in analysis.calls_named(("run",)):
      hit = _fed(call, scope, analysis)
      if hit is not None:
        hits.append(hit)
    for scope, call in analysis.calls_named(("batch_set_value",)):
      hit = _batch_set(call, scope, analysis)
      if hit is not None:
        hits.append(hit)
    return tuple(hits)
  found = analysis.once("writes", find)
  assert isinstance(found, tuple)
  return found


def _recomputed(hit: WriteHit, analysis: Analysis) -> bool:
  """Whether a write-back after the step writes whole variables (no
  elements chosen by a `where`, no rows scattered) recomputed from the
  weights as the step left them: a prox, an average, a reset."""
  write, target, value = hit.sink, hit.target, hit.value
  if hit.kind != "write-back" or hit.order != "after" or not isinstance(
      write, ast.Call) or not isinstance(target, ast.expr) or not (
          isinstance(value, ast.expr)):
    return False
  parts = _write_parts(write)
  whole = parts is not None and value is parts[1] and (
      not parts[2] or _names.call_name(write) == "set_weights")
  return whole and _clipped.nothing_saved(
      write, hit.scope, analysis, hit.labels, target, value, hit.at)


def _classify(call: ast.Call, scope: _scopes.Scope,
              analysis: Analysis) -> Optional[WriteHit]:
  parts = _write_parts(call)
  if parts is None or analysis.module(scope).is_test:
    return None  # A test's writes check the project's code, not train.
  flow = analysis.flow
  target, value, partial = parts
  if _no_weight(call, scope, analysis, target, value, partial):
    return None  # A count, an EMA, accumulators; every variable put back.
  target, partial = _named_entry(target, partial, call, scope, flow)
  if (pinned := _pinned_hit(call, scope, target, value, flow)) is not None:
    return pinned  # A whole variable its step trains, held fixed.
  base = _names.root(target)
  kept = _replacing(target, value, scope, flow)
  read_out = _read_back.read_out(kept, target, value, scope)
  blended = kept is not None and isinstance(value, ast.BinOp) or read_out
  if kept is not None:  # `where(m, saved, w)`: some elements replaced.
    chosen = _chosen_by(value, scope, analysis)
    if chosen is None:
      return None  # Chosen by the data (`is_first()`): a reset.
    value, partial = kept, True
    if _names.is_zero(kept):  # `where(m, w, zeros_like(w))`: a re-mask.
      return _remask(call, scope, analysis, {f"varmask:{base}": call},
                     target, call, None) if "mask" in chosen else None
  if not partial and _names.is_zero(value):
    return None  # A whole variable zeroed: accumulators, a count reset.
  found = flow.labels(value, scope)
  if not any(k.startswith(("copy:", "varmask:", "restore:")) for k in found):
    found = flow.sink_labels(value, scope, "shadow")
  copy = _kept_params.copy_of(analysis.project, scope, target, found, base)
  remask = found.get(f"varmask:{base}")
  if remask is None and _names.call_name(call) == "set_weights":
    # A model's weights set to its layers' weights, read out and masked
    # by the project's helpers (`model.set_weights(self.mask(m, w))`).
    remask = next((v for k, v in found.items() if k.startswith(
        "varmask:") and f"copy:{k[8:]}" in found and id(v) not in _node_ids(
            analysis, scope)), None)
  if copy is None and remask is not None:
    # The variable masked and blended with a copy taken elsewhere under
    # another name (`w.assign(original * (1 - m) + w * m)`).
    copy = next((v for k, v in found.items() if k.startswith("copy:")), None)
  zeroed = _zeroed(value, scope)
  if copy is not None and remask is None and zeroed:
    return _zeroed_copy(call, scope, analysis, found, copy) if (
        zeroed == "mask") else None  # Pruned by magnitude: no mask kept.
  own_copy = copy is not None or "shadow" in found
  blend = own_copy and remask is not None and ("vararith" in found or read_out)
  if remask is not None and not blend:
    if isinstance(value, ast.BinOp) and isinstance(value.op, (
        ast.Add, ast.Sub)) and _calls.variables_in(
            flow, value, scope, {}) - {base, ""}:
      return None  # Blended with another variable: a soft (polyak) update.
    if "random" in found:
      return None  # Some elements drawn anew (dead codes revived): a reset.
    return _remask(call, scope, analysis, found, target, value, copy)
  if not (own_copy or partial and (set(found) <= {
      "const", "mask", "param"} or _calls.zero(value, scope))):
    return None  # Another variable's values: EMA, a target network.
  return _by_order(call, scope, analysis, found, target, value, partial,
                   own_copy, blended, copy)


def _no_weight(call: ast.Call, scope: _scopes.Scope, analysis: Analysis,
               target: ast.expr, value: ast.expr, partial: bool) -> bool:
  """Whether a write puts no saved or masked values into a weight's
  elements: it writes no weight (an optimizer's window, a count, an
  input optimised), a counter cast to an integer, an EMA of two models,
  an accumulator of gradients cleared; or it puts every variable back,
  mirrors a target, resets rows chosen by the caller."""
  return _not_weights(analysis, scope, target) or _untrained.cast_integral(
      value) or _averaged.averaged(call, scope, target, value) or (
          partial and _names.is_zero(value) and (
              _untrained.entry_of_variables(target, scope))) or (
          _rollback.undoes_or_mirrors(call, scope, analysis, target, value)
          or _anew.indices_passed_in(call, scope, analysis))


def _named_entry(target: ast.expr, partial: bool, call: ast.Call,
                 scope: _scopes.Scope, flow: Flow) -> Tuple[ast.expr, bool]:
  """`w`, whole, for a write into `ws[i]` inside `for i, w in
  enumerate(ws)`, or into an item of a step's list (`params[-1]`); else
  the target as it is."""
  alias = _untrained.enumerated_entry(target, call, scope)
  if alias is None and partial and _pinned.whole_item(scope, target, flow):
    return target, False  # `params[-1]` of the step's list: whole.
  return (target, partial) if alias is None else (alias, False)


def _pinned_hit(call: ast.Call, scope: _scopes.Scope, target: ast.expr,
                value: ast.expr, flow: Flow) -> Optional[WriteHit]:
  """A whole variable set back to a number after each step that trains
  it (`_pinned`), as a re-mask whose label is that step; else None."""
  step = _pinned.pinned(call, scope, target, value, flow)
  return None if step is None else WriteHit(
      call, scope, call, {PINNED: step}, "weight-remask", target, value,
      "after", step)


# An optimizer's settings, as its attributes.
_HYPERPARAMETERS = {"lr", "learning_rate", "momentum", "decay", "beta_1",
                    "beta_2", "epsilon", "rho", "iterations", "weight_decay"}


def _hyperparameter(target: ast.AST) -> bool:
  """Whether a write's target is an optimizer's setting (`model.optimizer.
  lr`, `opt.learning_rate`): a schedule or a rate finder, not a weight."""
  parts = (_names.dotted(target) or "").split(".")
  return len(parts) > 1 and parts[-1] in _HYPERPARAMETERS and (
      parts[-1] in {"lr", "learning_rate"} or any(
          "opt" in p.lower() for p in parts[:-1]))


# A batch norm's moving statistics: its update ops set them, no optimizer.
_STATISTICS = {"moving_mean", "moving_variance"}


def _statistics(target: ast.AST) -> bool:
  """Whether a write's target is a batch norm's moving statistics
  (`layer.moving_mean`): kept by the layer, trained by no step."""
  while isinstance(target, ast.Subscript):
    target = target.value
  return (_names.dotted(target) or "").split(".")[-1] in _STATISTICS


def _by_order(call: ast.Call, scope: _scopes.Scope, analysis: Analysis,
              found: Labels, target: ast.expr, value: ast.expr,
              partial: bool, own_copy: bool, blended: bool,
              copy: Optional[ast.AST]) -> Optional[WriteHit]:
  """A write of saved or fixed values, judged by when it runs: beside the
  train op, after the step, by a method the loop calls, or never while the
  model trains."""
  if _computed_anew(call, scope, target, value):
    return None
  flow = analysis.flow
  when = analysis.order(scope).of_write(call, scope, flow) or (
      _session_hooks.runs(call, scope))
  if when is None and own_copy:
    when = _called_after_step(scope, analysis, call) or (
        _hooks.called_after_step(scope, analysis, call))
  zeros = _set_to_zeros(scope, analysis, target, value, partial, own_copy)
  if when is None and blended and _repeats_with_training(
      scope, analysis, call) or when is None and zeros and in_training(
      scope, analysis, call) and (
      analysis.flow.calls_of(scope.node)) and not _order.handles(
          call, analysis.order(scope)) and not _once_beside_fit(
              scope, analysis, call):
    # Rows set back to zeros (a re-mask: nothing saved) or saved values
    # blended into chosen elements, by a method the training loop calls
    # (a write kept under a name is a graph's op: it writes when a `run`
    # fetches it, and none does).
    return WriteHit(call, scope, call, found, "weight-remask" if zeros else
                    "write-back", target, value, zeros=zeros)
  if _each_model.made_anew(call, target, scope, when):
    return None  # The last pass's step trained another model.
  chosen = isinstance(value, ast.Name) and any(
      _put_back.chosen_each(d.value) for d in scope.defs.get(value.id, []))
  if when is None or not chosen and (_weight_average.read_after_step(
      call, scope, value, copy, when["at"]) or _clipped.of_itself(
          target, value)):
    # Written once, before training: an initialisation; or the step's
    # own values changed from themselves (clipped): a constraint.
    return None
  if _rollback.undone_before_step(
      call, scope, analysis, target, value, when["at"]):
    return None  # A perturbation undone before the pass's step.
  order = str(when["order"]) if isinstance(when["order"], str) else ""
  if order == "after" and not partial and _whole(value, scope) and (
      _ended_before(when["at"], call, analysis.order(scope)) or
      scope.name not in _TRAINS and not _loop_trains(scope, analysis, call)):
    # The best weights restored once training is over (in a loop that
    # only evaluates, maybe; not in a step's own override, which runs
    # with each step).
    return None
  kind = "shadow-variable" if (_on_device(found, copy) or _read_back.held(
      value, call, scope)) and (order == "control" or order == "after" and (
          scope.cls is not None)) and not _saved_before(call, scope, target,
                                                        value) \
      else "weight-remask" if zeros or partial and not own_copy and (
          constant_fill(value, scope)) else "write-back"
  at = when["at"]
  return WriteHit(call, scope, call, found, kind, target, value, order,
                  at if isinstance(at, ast.AST) else None, zeros=zeros)


def _computed_anew(call: ast.Call, scope: _scopes.Scope, target: ast.expr,
                   value: ast.expr) -> bool:
  """Whether a write puts values computed anew from what trained: its own
  value's schedule, a Reptile step, an EMA model."""
  return _own_value.of_itself(scope, call, target, value) or (
      _interpolated.toward_trained(scope, value)) or (
          _averaged.averaged(call, scope, target, value))


def _set_to_zeros(scope: _scopes.Scope, analysis: Analysis,
                  target: ast.expr, value: ast.expr, partial: bool,
                  own_copy: bool) -> bool:
  """Whether fixed elements are set back to zeros: rows zeroed in place
  (not a counter's reset), or weights read out, zeroed at ids the object
  keeps and written back after a step."""
  if own_copy:
    return _kept_zeros.kept_zeros(value, scope) and (
        _kept_zeros.after_steps(scope, analysis))
  return partial and _calls.zero(value, scope) and (
      "shadow" not in analysis.flow.labels(target, scope))


def constant_fill(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `node` is a tensor filled with one constant (`tf.ones_like(
  w[i])`, `tf.fill(shape, 0.5)`), or a local name only ever bound to one:
  chosen elements set back to it after each step are a re-mask."""
  values = [node]
  if isinstance(node, ast.Name):
    values = [d.value for d in scope.defs.get(node.id, [])]
  return bool(values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _FILLS
      for v in values)


# The calls that make a tensor of one constant value.
_FILLS = frozenset({"ones", "ones_like", "fill", "full", "full_like"})


def _called_after_step(scope: _scopes.Scope, analysis: Analysis,
                       call: ast.Call) -> Optional[Dict[str, object]]:
  """`self.model.fit(x, y); self.apply_frozen()`: a method that writes a
  saved copy back, called right after the step (in the caller's block)."""
  order = analysis.order(scope)
  statement = order.parent(call)
  if not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
      or not isinstance(statement, ast.Expr) or (
          order.parent(statement) is not scope.node):
    return None  # Written in a branch or a loop of its own: unclear.
  for place, site in analysis.flow.calls_of(scope.node):
    if place is not scope:
      step = analysis.order(place).step_before(site, place, analysis.flow)
      if step is not None:
        return {"order": "after", "at": step}
  return None


def feed_of(call: ast.Call) -> Optional[ast.expr]:
  """A `session.run`'s `feed_dict`."""
  feed = next((k.value for k in call.keywords if k.arg == "feed_dict"),
              None)
  if feed is None and len(call.args) >= 2:
    feed = call.args[1]
  return feed


def _fed(call: ast.Call, scope: _scopes.Scope, analysis: Analysis
         ) -> Optional[WriteHit]:
  """`session.run(assign_w, feed_dict={w_ph: mask * w_now})`: a write op
  fed its own variable's values times a mask (deep compression's re-mask
  after each step); a mask made here from those values (`abs(w) >= t`)
  prunes by magnitude."""
  feed = feed_of(call)
  if not isinstance(feed, ast.Dict) or not call.args or (
      analysis.module(scope).is_test):
    return None
  flow = analysis.flow
  for value in feed.values:
    found = flow.labels(value, scope)
    if not any(k.startswith("varmask:") for k in found) or _by_magnitude(
        value, scope) or not any(k.startswith("copy:") for k in found):
      continue  # Not its own values read out (`sess.run(w)`) and masked.
    # What is fetched is worked out last: most runs feed batches of data.
    if "write" not in flow.ops(call.args[0], scope) or not in_training(
        scope, analysis, call) and analysis.order(scope).of_write(
            call, scope, flow) is None:
      return None
    return WriteHit(call, scope, call, found, "weight-remask", call.args[0],
                    value)
  return None


def _batch_set(call: ast.Call, scope: _scopes.Scope, analysis: Analysis
               ) -> Optional[WriteHit]:
  """`K.batch_set_value([(w, K.get_value(w) * m) for w, m in zip(ws,
  masks)])`, or a list of such pairs written out (`[(layer.kernel,
  K.get_value(layer.kernel) * mask)]`): each weight set to its own
  values times a mask."""
  pairs = call.args[0] if call.args else None
  if analysis.module(scope).is_test:
    return None
  for target, values in _set_pairs(pairs):
    found = analysis.flow.labels(values, scope)
    if not any(k.startswith("varmask:") for k in found) or _by_magnitude(
        values, scope) or not in_training(scope, analysis, call):
      continue
    return WriteHit(call, scope, call, found, "weight-remask", target,
                    values)
  return None


def _set_pairs(pairs: Optional[ast.expr]) -> List[Tuple[ast.expr, ast.expr]]:
  """(weight, value) of the pairs `batch_set_value` is given: of a
  comprehension (its values as one comprehension), or of a list."""
  if isinstance(pairs, ast.ListComp) and isinstance(
      pairs.elt, ast.Tuple) and len(pairs.elt.elts) == 2:
    values = ast.ListComp(elt=pairs.elt.elts[1], generators=pairs.generators)
    ast.copy_location(values, pairs)
    return [(pairs.elt.elts[0], values)]
  if isinstance(pairs, (ast.List, ast.Tuple)):
    return [(e.elts[0], e.elts[1]) for e in pairs.elts if isinstance(
        e, ast.Tuple) and len(e.elts) == 2]
  return []


def _by_magnitude(value: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a name `value` reads is compared in its function (the mask
  made from the values it masks)."""
  modules = {_names.root(n.func) for n in ast.walk(value)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
  read = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} - modules
  return any(isinstance(node, ast.Compare) and read & {
      n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
             for node in scope.nodes)


def _saved_before(call: ast.Call, scope: _scopes.Scope, target: ast.AST,
                  value: ast.AST) -> bool:
  """Whether a copy the write reads is taken from the variable again above
  the write (`tf.assign(backup, w)` before the step): values saved each
  step and written back, not a copy kept."""
  mine = ast.dump(target)
  read = {ast.dump(n) for n in ast.walk(value)
          if isinstance(n, (ast.Name, ast.Attribute, ast.Subscript))}
  read.discard(mine)
  for node in scope.nodes:
    if not isinstance(node, ast.Call) or node is call or (
        node.lineno >= call.lineno) or _names.call_name(node) != "assign":
      continue
    parts = target_and_value(node)
    if parts is not None and ast.dump(parts[1]) == mine and (
        ast.dump(parts[0]) in read) and _each_step(node, scope):
      return True
  return False


def _each_step(save: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether a save runs with each step: a statement of a function (run
  on each call) or an op the step waits on (`control_dependencies`), not
  an op kept under a name and run once."""
  if scope.parent is not None and any(
      isinstance(n, ast.Expr) and n.value is save for n in scope.nodes):
    return True
  held = {t.id for n in scope.nodes if isinstance(n, ast.Assign) and any(
      m is save for m in ast.walk(n.value)) for t in n.targets
          if isinstance(t, ast.Name)}
  for n in scope.nodes:
    if isinstance(n, ast.With):
      for item in n.items:
        spec = item.context_expr
        if isinstance(spec, ast.Call) and _names.call_name(
            spec) == "control_dependencies" and any(
            m is save or isinstance(m, ast.Name) and m.id in held
            for m in ast.walk(spec)):
          return True
  return False


def _on_device(found: Labels, copy: Optional[ast.AST]) -> bool:
  """Whether the copy written back is a tensor or a variable (a shadow),
  not values read out of the graph."""
  return "shadow" in found or isinstance(copy, ast.Call) and (
      _names.call_name(copy) in {"identity", "read_value",
                                 "initialized_value", "value", "Variable",
                                 "VariableV1", "get_variable"})


def _zeroed_copy(call: ast.Call, scope: _scopes.Scope, analysis: Analysis,
                 found: Labels, copy: ast.AST) -> Optional[WriteHit]:
  """Its own values with some set to zero (`w[0][mask] = 0.0`) written
  back: a re-mask, unless the copy was taken elsewhere (a rewind) or
  nothing trains after it."""
  if id(copy) in _node_ids(analysis, scope) and in_training(
      scope, analysis, call) and not _once_beside_fit(scope, analysis, call):
    parts = _write_parts(call)
    assert parts is not None
    return WriteHit(call, scope, call, found, "weight-remask", parts[0],
                    parts[1])
  return None


def _chosen_by(value: ast.AST, scope: _scopes.Scope, analysis: Analysis
               ) -> Optional[Labels]:
  """The labels of what chooses the replaced elements (a `where`'s
  condition; a scatter's indices count as a mask), or None when the data
  chooses them (a variable, a gradient, a value of the step)."""
  if not isinstance(value, ast.Call) or _names.call_name(value) == (
      "tensor_scatter_nd_update") or not value.args:
    return {"mask": value}
  chosen = analysis.flow.labels(value.args[0], scope)
  if "mask" not in chosen and not set(chosen) & {"param", "const"} or (
      set(chosen) & {"var", "vararith", "grad"}):
    return None
  return chosen


def _replacing(target: ast.AST, value: ast.AST, scope: _scopes.Scope,
               flow: Flow) -> Optional[ast.expr]:
  """What replaces some elements of `target`: kept elsewhere, or saved
  already masked (`w * m + frozen`); none in a moving average by a
  number (`b * m + (1 - b) * g` of `beta1=0.9`: `_decayed`)."""
  if isinstance(value, ast.BinOp) and _decayed.by_number(value, scope):
    return None
  return _kept_elsewhere(target, value) or _premasked.saved(
      target, value, scope, flow) or _read_back.blended(target, value, scope)


def _kept_elsewhere(target: ast.AST, value: ast.AST) -> Optional[ast.expr]:
  """What replaces some elements of `target` in a value that keeps the
  others: `where(m, saved, w)` or `where(m, w, saved)` (the other branch),
  `tensor_scatter_nd_update(w, indices, saved)` (the updates)."""
  mine = _names.dotted(target)
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and (
      mine is not None):
    return _blended_in(value, mine)
  if not isinstance(value, ast.Call):
    return None
  name = _names.call_name(value)
  args = value.args
  if mine is None:
    return None
  if name in {"where", "where_v2", "select"} and len(args) == 3:
    same = [_names.dotted(a) == mine for a in args[1:]]
    if same == [False, True]:
      return args[1]
    if same == [True, False]:
      return args[2]
  if name in {"tensor_scatter_nd_update", "tensor_scatter_update"} and len(
      args) == 3 and _names.dotted(args[0]) == mine:
    return args[2]
  return None


def _blended_in(value: ast.BinOp, mine: str) -> Optional[ast.expr]:
  """`s` of `(1 - m) * w + m * s` or `m * w + (1 - m) * s` (either
  order): saved values put into the elements one mask chooses, the target
  kept in the others by its complement."""
  terms = [value.left, value.right]
  factors = [[t.left, t.right] if isinstance(t, ast.BinOp) and isinstance(
      t.op, ast.Mult) else [] for t in terms]
  for index, pair in enumerate(factors):
    other = factors[1 - index]
    if len(pair) == 2 and len(other) == 2 and any(
        _names.dotted(f) == mine for f in pair):
      masks = [ast.unparse(f) for f in pair if _names.dotted(f) != mine]
      for kept, saved in ((other[0], other[1]), (other[1], other[0])):
        if masks and _put_back.complements(masks[0], ast.unparse(
            kept)) and not _names.is_zero(saved) and (
                _names.dotted(saved) != mine):
          return saved  # `(1 - m)` beside `w`, `m` beside the saved values.
  return None


def _zeroed(value: ast.AST, scope: _scopes.Scope) -> str:
  """How `value`, a name, has some elements set to zero and nothing else:
  "mask" (`w[0][mask] = 0.`), "own" when its own values choose them
  (`w[abs(w) < t] = 0`: pruned anew each time, nothing kept), or ""."""
  if not isinstance(value, ast.Name):
    return ""
  added = [d.value for d in scope.defs.get(value.id, []) if not d.replaces]
  if not added or not all(
      isinstance(v, ast.Constant) and v.value == 0 and not isinstance(
          v.value, str) for v in added):
    return ""
  return "own" if any(
      isinstance(node, ast.Assign) and any(
          isinstance(t, ast.Subscript) and _names.root(t) == value.id and any(
              isinstance(n, ast.Name) and n.id == value.id
              for n in ast.walk(t.slice)) for t in node.targets)
      for node in scope.nodes) else "mask"


def _whole(value: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a written value is a whole copy, not one with some elements
  put back (`w[0][:10] = frozen[0][:10]`)."""
  if isinstance(value, (ast.List, ast.Tuple)):
    return all(_whole(e, scope) for e in value.elts)  # `[kernel, bias]`.
  if isinstance(value, ast.Name):
    defs = scope.defs.get(value.id, [])
    return all(d.replaces and not _put_back.chosen_each(d.value)
               for d in defs)
  spelled = _names.dotted(value)
  if spelled is not None and any(
      isinstance(node, ast.Assign) and any(
          isinstance(t, ast.Subscript) and _names.dotted(t.value) == spelled
          for t in node.targets) for node in scope.nodes):
    return False  # `self.frozen[0] = vstack([kept, new])`: parts put back.
  if _put_back.chosen_each(value):
    return False  # `[where(m, after, before) ...]`: elements of each.
  if isinstance(value, ast.Call):
    return _names.call_name(value) in _names.SNAPSHOTS
  return not isinstance(value, ast.BinOp)


def _ended_before(step: object, write: ast.AST, order: "_order.Order"
                  ) -> bool:
  """Whether the step runs in a loop that ends before the write (the
  write does not repeat with it)."""
  node = step if isinstance(step, ast.AST) else None
  while node is not None and not isinstance(node, (
      ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
      inside: Optional[ast.AST] = write
      while inside is not None and inside is not node:
        inside = order.parent(inside)
      return inside is None
    node = order.parent(node)
  if node is None or not isinstance(step, ast.AST):
    return False
  # A step made once (a training function called), the write after it
  # in no loop either: the weights restored once training is over.
  current: Optional[ast.AST] = write
  while current is not None and current is not node:
    if isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
      return False
    current = order.parent(current)
  return current is node


def _remask(call: ast.Call, scope: _scopes.Scope, analysis: Analysis,
            found: Labels, target: ast.AST, value: ast.AST,
            copy: Optional[ast.AST]) -> Optional[WriteHit]:
  if _trained_too.only_untrainable(analysis.flow.labels(target, scope)):
    return None  # A variable nothing trains (an RNN's state reset).
  masked = found
  product = found.get(f"varmask:{_names.root(target)}")
  if product is not None and id(product) in _node_ids(analysis, scope):
    masked = analysis.flow.labels(product, scope)  # The copy it masks.
  snapshot = next((v for k, v in masked.items() if k.startswith("copy:")),
                  None)
  if snapshot is not None and id(snapshot) not in _node_ids(
      analysis, scope) and (masked is not found or not _read_here(
          value, scope, analysis)):
    return None  # Initial weights, masked: a rewind, not a re-mask.
  if _mask_of_its_magnitude(value, target, scope, _kept_before(
      call, value, target, scope, analysis)) or _anew.from_magnitude(
      call, target, scope, analysis) or _anew.from_own_values(
          call, target, value, scope, analysis) or _anew.pruned_elsewhere(
              found, target, scope, analysis, _node_ids(analysis, scope)):
    return None  # Pruned anew by magnitude: no mask kept from before.
  ordered = analysis.order(scope).of_write(call, scope, analysis.flow)
  if ordered is None and not in_training(scope, analysis, call) or (
      _after_fit(ordered) and _once_beside_fit(scope, analysis, call)):
    return None  # Pruned once (or a copy to evaluate): it trains on.
  # The step's change kept in some elements, added back onto the copy
  # saved before it (`before + (after - before) * m`): the others are
  # written back, not masked.
  changed = copy is not None and _put_back.masked_change(
      found.get(f"varmask:{_names.root(target)}"))
  return WriteHit(call, scope, call, found, "write-back" if changed else
                  "weight-remask", target, value)


def _read_here(value: ast.AST, scope: _scopes.Scope,
               analysis: Analysis) -> bool:
  """Whether `value`, masked by a helper, is made (through the local
  names it reads) from a call of this function to the project's helper
  that reads the weights out
  (`current = self.get_weights()` before `set_weights(self.mask(m,
  current))`): the current weights, not initial ones kept elsewhere."""
  flow = analysis.flow
  for item in _scopes.made_from(value, scope):
    if isinstance(item, ast.Call) and not item.args and not (
        item.keywords) and flow.callee(item, scope) is not None and any(
          k.startswith("copy:") for k in flow.labels(item, scope)):
      return True  # `self.get_weights()`: read out here.
  return False


def _mask_of_its_magnitude(value: ast.AST, target: ast.AST,
                           scope: _scopes.Scope, kept: Set[str]) -> bool:
  """Whether `value` multiplies the target by a mask this function makes
  by comparing the target's own values (`keep = abs(v) > t; v * keep`),
  other than the masks in `kept`."""
  mine = _names.root(target)

  def compares_mine(tree: ast.AST) -> bool:
    return any((isinstance(node, ast.Compare) or isinstance(
        node, ast.Call) and _names.call_name(node) in _COMPARISONS) and any(
            _names.dotted(n) == mine for n in ast.walk(node)
            if isinstance(n, (ast.Name, ast.Attribute)))
               for node in ast.walk(tree))

  read = {n.id for n in ast.walk(value)
          if isinstance(n, ast.Name)} - {mine} - kept
  return compares_mine(value) or any(
      compares_mine(each.value) for name in read
      for each in scope.defs.get(name, []))


def _kept_before(call: ast.Call, value: ast.AST, target: ast.AST,
                 scope: _scopes.Scope, analysis: Analysis) -> Set[str]:
  """The names of `value` holding a mask of the target's magnitude
  evaluated once in the session before the loop that repeats the write
  and a step (`mask = np.abs(sess.run(w)) > t` before the loop, `w.assign(
  w * mask)` after each step in it): a snapshot kept, not pruning anew. A
  mask evaluated again in that loop is made anew; one evaluated after
  training and written in a loop with no step only prunes."""
  order = analysis.order(scope)
  loops = _loops_around(call, order) or _anew.run_loops(
      call, scope, order)
  names = {n for n in ast.walk(value) if isinstance(n, ast.Name)}
  once = [n for n in names if loops and isinstance(target, ast.expr)
          and _evaluated.once(n, target, scope)]
  if not once:
    return set()
  ordered = order.of_write(call, scope, analysis.flow)
  step = ordered.get("at") if ordered is not None else order.step_before(
      call, scope, analysis.flow)  # `run(w.assign(w * m))`: in the run.
  loops &= _loops_around(step, order) if isinstance(step, ast.AST) else set()
  return {n.id for n in once if loops and all(
      loops - set(d.where.loops) for d in scope.defs.get(n.id, []))}


def _loops_around(node: ast.AST, order: "_order.Order") -> Set[int]:
  """The ids of the loops of its function that hold `node`."""
  loops: Set[int] = set()
  current = order.parent(node)
  while current is not None and not isinstance(current, (
      ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
    if isinstance(current, (ast.For, ast.AsyncFor, ast.While)):
      loops.add(id(current))
    current = order.parent(current)
  return loops


_COMPARISONS = {"less", "greater", "less_equal", "greater_equal", "equal",
                "not_equal"}


def _node_ids(analysis: Analysis, scope: _scopes.Scope) -> Set[int]:
  """The ids of the nodes of `scope` (found once)."""
  known = _memo(analysis, "node ids")
  found = known.get(id(scope))
  if not isinstance(found, set):
    found = known[id(scope)] = {id(n) for n in scope.nodes}
  return found


def _not_weights(analysis: Analysis, scope: _scopes.Scope,
                 target: ast.AST) -> bool:
  """Whether a write's target is no model's weights: a variable nothing
  trains (an optimizer's window, a count, one made after every step of
  its graph, one every caller of a helper passes made untrainable), an
  optimizer's setting, a batch norm's moving statistics,
  or an input optimised (a visualisation's)."""
  return _trained_too.only_untrainable(analysis.flow.labels(
      target, scope)) or (
      _hyperparameter(target)) or _statistics(target) or _model_input_of(
          analysis, scope, target) or _later.made_after_steps(
              scope, target) or _passed_untrainable.passed_untrainable(
                  analysis, scope, target)


def _model_input_of(analysis: Analysis, scope: _scopes.Scope,
                    target: ast.AST) -> bool:
  """Whether `target` is one of `_model_input.inputs` of `scope` (worked
  out once per scope)."""
  if not isinstance(target, ast.Name):
    return False
  memo = _memo(analysis, "model_inputs")
  if id(scope) not in memo:
    memo[id(scope)] = _model_input.inputs(scope)
  found = memo[id(scope)]
  assert isinstance(found, set)
  return target.id in found
