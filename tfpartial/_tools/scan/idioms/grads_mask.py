"""`grads-mask`: gradients multiplied by a mask, or rebuilt with
`tf.where` / `IndexedSlices` to zero some elements, between computing and
applying them."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple, Union

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _drift
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._finding import Edit
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels, union
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._gradients import _appended
from tfpartial._tools.scan.idioms._gradients import _custom_gradients
from tfpartial._tools.scan.idioms._gradients import _enumerated
from tfpartial._tools.scan.idioms._gradients import _external
from tfpartial._tools.scan.idioms._gradients import _get_updates
from tfpartial._tools.scan.idioms._gradients import _hooks
from tfpartial._tools.scan.idioms._gradients import _lr_masks
from tfpartial._tools.scan.idioms._gradients import _multipliers
from tfpartial._tools.scan.idioms._gradients import _own_method
from tfpartial._tools.scan.idioms._gradients import _own_rule
from tfpartial._tools.scan.idioms._gradients import _split
from tfpartial._tools.scan.idioms._gradients import _transformers
from tfpartial._tools.scan.idioms._gradients import _zero_rates
from tfpartial._tools.scan.idioms._masks import _mask_kept
from tfpartial._tools.scan.idioms._masks import _mask_origins

# The calls that apply gradients: the optimizer's, and an override's
# `super()` call of the same name.
APPLIES = {"apply_gradients", "apply"} | _names.OPTIMIZER_METHODS
# An optimizer's own writes of its update.
_UPDATES = {"assign", "assign_sub", "assign_add", "scatter_sub",
            "scatter_add", "scatter_update"}
# Overrides whose returned gradients an optimizer applies.
COMPUTES = {"compute_gradients", "get_gradients", "_compute_gradients",
            "_clip_gradients", "_aggregate_gradients"}


@dataclasses.dataclass
class GradsMaskHit(_idiom.Hit):
  """A masked gradient reaching an apply; `sinks` every apply it reaches;
  `shown` the call of the helper that masks it, where it is used."""

  sinks: Tuple[ast.AST, ...] = ()
  shown: Optional[ast.expr] = None


class GradsMask(_idiom.Idiom):
  """Masked gradients that an `apply_gradients` applies."""

  id = "grads-mask"
  order = 1
  entry = _idiom.Entry(
      "gradients multiplied by a mask (or rebuilt with tf.where or "
      "IndexedSlices) between computing and applying them",
      "gradient-masks",
      "drop a 0/1 mask (keep any scaling); apply with `spec.apply_gradients(optimizer, ...)` "
      "(or `optimizer = spec.wrap(optimizer)`), `spec = "
      "tfpartial.freeze(variable, index)`")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    hits: List[GradsMaskHit] = []
    flow = analysis.flow
    for scope, call in analysis.calls_named(APPLIES):
      found = _arguments(flow, call, scope)
      if "masked" in found and not _through_a_spec(call, scope):
        hits.append(_hit(found, scope, call))
    for scope, call in _passed_applies(analysis):
      found = _arguments(flow, call, scope)
      if "masked" in found:
        hits.append(_hit(found, scope, call))
    for scope, call in analysis.calls_named(("run",)):
      # `session.run(train_op, feed_dict={grad: masked_values})`; what it
      # fetches worked out last (most runs feed batches of data).
      feed = _writes.feed_of(call)
      if feed is None or not call.args:
        continue
      found = flow.sink_labels(feed, scope, "masked")
      if "masked" in found and _trains_on_fed(call, feed, scope, flow):
        hits.append(_hit(found, scope, call))
    for scope in analysis.functions_named(_names.OPTIMIZER_METHODS):
      # A hand-written optimizer writing an update it masked (`update *=
      # to_float(step > n)` for the pretrained variables).
      if scope.cls is None:
        continue
      for call in analysis.calls(scope):
        if _names.call_name(call) in _UPDATES and call.args:
          found = flow.labels(call.args[-1], scope)
          if "masked" in found and "grad" in found and _named(
              found["masked"], scope, analysis):
            hits.append(_hit(found, scope, call))
    hits += _hand_written_updates(analysis)
    for scope in analysis.functions_named(COMPUTES):
      if scope.cls is None or not _own_method.optimizer_calls(scope.cls):
        continue
      for node in scope.nodes:
        if isinstance(node, ast.Return) and node.value is not None:
          found = flow.labels(node.value, scope)
          if "masked" in found:
            hits.append(_hit(found, scope, None))
    hits += [_hit(found, scope, None) for scope, found in (
        _hooks.masked_by_hooks(analysis, APPLIES, APPLIES | COMPUTES))]
    hits += [_hit(found, scope, None)
             for scope, found in _custom_gradients.masked(analysis)]
    hits += [_hit(found, scope, call)
             for found, scope, call in _lr_masks.masked(analysis)]
    hits += [_hit(found, scope, call)
             for found, scope, call in _zero_rates.masked(analysis)]
    hits += [_hit(found, scope, call) for module in (
        _transformers, _multipliers, _get_updates, _external)
             for found, scope, call in module.masked(analysis)]
    merged = [h for h in _merged(hits, analysis)
              if not _own_rule.updated_by_own_rule(h.node, h.scope)]
    for hit in merged:
      if isinstance(hit, GradsMaskHit):
        hit.shown = _split.use_of_helper(hit.node, hit.scope, hit.sinks,
                                         analysis)
    return merged

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    node = hit.node
    how = (f"`{_names.call_name(node)}`" if isinstance(node, ast.Call)
           else "a mask")
    if getattr(node, _scopes.ZEROED, False):
      how = "an element assignment of zeros"
    elif isinstance(node, ast.IfExp):
      how = "`None` or zeros chosen by a test"
    if hit.sink is not None:
      message = (f"gradients zeroed by {how} before "
                 f"`{_names.call_name(hit.sink)}` (line "
                 f"{_idiom.line(hit.sink)})")
    else:
      message = (f"gradients zeroed by {how} in `{hit.scope.name}`, which "
                 "the optimizer applies")
    nan = not isinstance(node, ast.Call) or _names.call_name(node) in {
        "multiply", "mul"}
    if isinstance(hit.sink, ast.Call) and _names.call_name(
        hit.sink) in _UPDATES:
      message = (f"a hand-written update zeroed by {how} before "
                 f"`{_names.call_name(hit.sink)}` (line "
                 f"{_idiom.line(hit.sink)})")
      return message, [
          "the masked elements keep their values: the update itself is "
          "masked, so nothing in it (momentum, decay) moves them; its "
          "slots still track them"] + _drift.optimizer_drift(None, nan)
    return message, _drift.optimizer_drift(context.optimizer, nan)

  def port(self, hit: _idiom.Hit, analysis: Analysis) -> _edits.Port:
    return _port(hit, analysis)


def _trains_on_fed(call: ast.Call, feed: ast.expr, scope: _scopes.Scope,
                   flow: Flow) -> bool:
  """Whether the `run` fetches a train step that could apply what it is
  fed. A step made beside the run (or in a function around it) from
  gradients it computes in the graph
  (`apply_gradients(zip(tf.gradients(loss, tvars), tvars))`, `minimize`)
  applies those: a fed value is data (an input's noise, an adversarial
  perturbation from the loss's gradient by an input), unless the feed
  replaces a gradient tensor itself (`feed_dict={grads[0]: masked}`)."""
  step = flow.ops(call.args[0], scope).get("train")
  if step is None:
    return False
  home: Optional[_scopes.Scope] = scope  # The run's function or one around.
  while home is not None and not any(node is step for node in home.nodes):
    home = home.parent
  if not isinstance(step, ast.Call) or home is None or _grad_keyed(
      feed, scope, flow):
    return True
  if _names.call_name(step) == "minimize":
    return False
  made = flow.labels(step.args[0], home).get("grad") if (
      _names.call_name(step) == "apply_gradients" and step.args) else None
  return not (isinstance(made, ast.Call) and _names.call_name(
      made) in _names.GRADIENTS)


def _grad_keyed(feed: ast.expr, scope: _scopes.Scope, flow: Flow) -> bool:
  """Whether a feed (a dict, or a name bound to one or filled here) has a
  gradient for a key."""
  keys: List[Optional[ast.expr]] = list(getattr(feed, "keys", []))
  if isinstance(feed, ast.Name):
    for d in scope.defs.get(feed.id, []):
      keys += list(getattr(d.value, "keys", []))
    keys += [node.slice for node in scope.nodes if isinstance(
        node, ast.Subscript) and isinstance(node.ctx, ast.Store) and (
            isinstance(node.value, ast.Name)) and node.value.id == feed.id]
  return any(key is not None and "grad" in flow.labels(key, scope)
             for key in keys)


def _hand_written_updates(analysis: Analysis) -> List[GradsMaskHit]:
  """A hand-written step writing a variable's update times a fixed mask
  (`w.assign(w - lr * m_hat / (sqrt(v_hat) + eps) * w_rnn_mask)`, in a
  function or in an optimizer's `_resource_apply_dense`): the masked
  elements never move. A mask the step makes anew (`to_float(step > n)`,
  a trust ratio) or a test of the variable's own values is a schedule or
  a projection, not a freeze."""
  hits: List[GradsMaskHit] = []
  flow = analysis.flow
  slots: Dict[int, Dict[str, List[ast.expr]]] = {}  # Per scope, once.
  graded: Dict[Tuple[int, str], bool] = {}  # (scope, slot) -> a gradient?
  for scope, call in analysis.calls_named(_UPDATES):
    parts = _update_parts(call)
    if parts is None or analysis.module(scope).is_test or not (
        _spelled_mask(parts[1], scope)):
      continue
    target, value = parts
    found = flow.labels(value, scope)
    masked = found.get("masked") or found.get("timesmask")
    if not isinstance(masked, ast.expr) or not _fixed_mask(
        masked, scope, flow) or _shaped(masked, scope, analysis) or (
            _regrown(masked, scope, analysis)):
      continue
    aimed = flow.labels(target, scope)
    if "shadow" in aimed or not ("var" in aimed or "param" in aimed):
      continue  # An accumulator or a slot, not a trained variable.
    if "grad" not in found and not _slot_of_gradient(
        value, scope, flow, _written(scope, analysis, slots), graded):
      continue
    hits.append(_hit({**found, "masked": masked}, scope, call))
  return hits


def _shaped(masked: ast.expr, scope: _scopes.Scope, analysis: Analysis
            ) -> bool:
  """Whether a factor of the masked update is a triangle or a band (a
  causal kernel's shape, masked in the forward pass alike)."""
  factors = [masked.left, masked.right] if isinstance(
      masked, ast.BinOp) else list(getattr(masked, "args", []))
  home = analysis.flow.origin.get(id(masked), scope)
  return any(isinstance(f, ast.expr) and _mask_origins.shaped(
      f, home, analysis) for f in factors)


def _regrown(masked: ast.expr, scope: _scopes.Scope, analysis: Analysis
             ) -> bool:
  """Whether a mask factor of the update is re-ranked while the model
  trains (sparse training: `_mask_kept.regrown`), counting a call of
  the function writing the update as a step."""
  factors = [masked.left, masked.right] if isinstance(
      masked, ast.BinOp) else list(getattr(masked, "args", []))
  home = analysis.flow.origin.get(id(masked), scope)
  return any(isinstance(f, ast.expr) and _mask_kept.regrown(
      f, home, analysis, (home.name, scope.name)) for f in factors)


def _spelled_mask(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a product in `node` (or in the local names it reads) has a
  factor spelled as a mask: read before any flow (most writes are
  slots, counters and copies)."""
  return _scopes.found_through_names(node, scope, _mask_product)


def _mask_product(item: ast.AST) -> bool:
  """Whether `item` is a product whose text names a mask."""
  return (isinstance(item, (ast.BinOp, ast.AugAssign)) and isinstance(
      item.op, ast.Mult) or isinstance(item, ast.Call) and (
          _names.call_name(item) in {"multiply", "mul"})) and (
              "mask" in ast.unparse(item).lower())


def _written(scope: _scopes.Scope, analysis: Analysis,
             memo: Dict[int, Dict[str, List[ast.expr]]]
             ) -> Dict[str, List[ast.expr]]:
  """What each variable of `scope` is assigned, by its spelling (once per
  scope)."""
  found = memo.get(id(scope))
  if found is None:
    found = memo[id(scope)] = {}
    for call in analysis.calls(scope):
      parts = _update_parts(call) if _names.call_name(call) in {
          "assign", "assign_add"} else None
      spelled = _names.dotted(parts[0]) if parts is not None else None
      if parts is not None and spelled:
        found.setdefault(spelled, []).append(parts[1])
  return found


def _slot_of_gradient(value: ast.expr, scope: _scopes.Scope, flow: Flow,
                      written: Dict[str, List[ast.expr]],
                      graded: Dict[Tuple[int, str], bool]) -> bool:
  """Whether `value` reads a slot this function writes a gradient into
  (`m.assign(b1 * m + (1 - b1) * grad)`, then `m / (1 - b1 ** t)`);
  `graded` keeps, per scope and slot, whether one of its writes holds a
  gradient (asked of each write once: a long function writes a slot
  as often as it reads it)."""
  if not written:
    return False
  for item in _scopes.made_from(value, scope):
    name = _names.dotted(item) if isinstance(
        item, (ast.Name, ast.Attribute)) else None
    if name is not None and name in written:
      key = (id(scope), name)
      if key not in graded:
        graded[key] = any("grad" in flow.labels(v, scope)
                          for v in written[name])
      if graded[key]:
        return True
  return False


def _update_parts(call: ast.Call) -> Optional[Tuple[ast.expr, ast.expr]]:
  """(variable, value) of `tf.assign_sub(v, x)`, `v.assign_sub(x)`,
  `tf.scatter_sub(v, i, x)`, `v.scatter_sub(slices)`."""
  args = call.args
  receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
  if _names.call_name(call).startswith("scatter"):
    if len(args) >= 3:
      return args[0], args[2]
    return (receiver, args[-1]) if receiver is not None and args else None
  if len(args) >= 2:
    return args[0], args[1]
  return (receiver, args[0]) if receiver is not None and args else None


def _fixed_mask(masked: ast.expr, scope: _scopes.Scope, flow: Flow) -> bool:
  """Whether the factor that masks a gradient's update is fixed: a mask
  by its name or a constant, comparing nothing the step computes."""
  if isinstance(masked, ast.BinOp) and isinstance(masked.op, ast.Mult):
    factors = [masked.left, masked.right]
  elif isinstance(masked, ast.Call) and _names.call_name(masked) in {
      "multiply", "mul"} and len(masked.args) == 2:
    factors = list(masked.args)
  else:
    return False
  home = flow.origin.get(id(masked), scope)
  for factor in factors:
    labels = flow.labels(factor, home)
    if "grad" in labels or "mask" not in labels:
      continue
    return "random" not in labels and not _made_each_step(factor, home)
  return False


def _made_each_step(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a mask compares (or draws) values here, itself or through the
  local names it reads (`keep = tf.cast(step > n)`, `uniform(s) < p`)."""
  return _scopes.found_through_names(node, scope, _compared_or_drawn)


def _compared_or_drawn(item: ast.AST) -> bool:
  """Whether `item` compares values or draws them (`step > n`,
  `tf.greater(...)`, `tf.random.uniform(...)`)."""
  return isinstance(item, ast.Compare) or isinstance(item, ast.Call) and (
      _names.call_name(item) in _SCHEDULES or "random" in (
          _names.dotted(item.func) or ""))


# What makes a mask anew each step: a comparison's spelling, a NaN guard.
_SCHEDULES = {"greater", "less", "greater_equal", "less_equal", "equal",
              "not_equal", "cond", "where", *_names.FINITE_CHECKS}


def _passed_applies(analysis: Analysis
                    ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """The calls of a parameter to which the project's calls pass an
  optimizer's apply (`prune(optimizer.apply_gradients, gvs)` ->
  `origin_func(gvs)` in `prune`)."""
  flow = analysis.flow
  found: List[Tuple[_scopes.Scope, ast.Call]] = []
  for module in analysis.project.modules_with(("apply_gradients",)):
    for scope in analysis.scopes_with(module, ("apply_gradients",)):
      for call in analysis.calls(scope):
        passed = [(i, None, a) for i, a in enumerate(call.args)] + [
            (-1, k.arg, k.value) for k in call.keywords]
        for position, keyword, argument in passed:
          if not isinstance(argument, ast.Attribute) or (
              argument.attr != "apply_gradients"):
            continue
          callee = flow.callee(call, scope)
          function = flow.functions.get(id(callee))
          inner = function[1].scope_of(function[0]) if function else None
          if inner is None:
            continue
          if keyword is None and inner.cls is not None and inner.params[
              :1] == ["self"]:
            position += 1
          name = keyword or (inner.params[position] if 0 <= position < len(
              inner.params) else None)
          found += [(inner, c) for c in analysis.calls(inner)
                    if isinstance(c.func, ast.Name) and c.func.id == name]
  return found


def _through_a_spec(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `call` is `spec.apply_gradients(optimizer, pairs)` of a spec
  made by `tfpartial` (ported code keeping a mask that also scales)."""
  func = call.func
  if not (isinstance(func, ast.Attribute) and isinstance(
      func.value, ast.Name) and len(call.args) >= 2):
    return False
  name = func.value.id
  place: Optional[_scopes.Scope] = scope
  while place is not None and name not in place.defs:
    place = place.parent
  values = [d.value for d in place.defs[name]] if place else []
  return bool(values) and all(any(
      isinstance(n, ast.Call) and (_names.dotted(n.func) or "").startswith(
          "tfpartial.") for n in ast.walk(v)) for v in values)


def _named(node: object, scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether an optimizer masks its update under a test of the variable's
  name (`if param_name in self.pretrained_param_names:`), not for every
  variable alike (a schedule, a trust ratio)."""
  line = getattr(node, "lineno", None)
  if line is None:
    return False
  for test in ast.walk(scope.node):  # `update *= ...` is rebuilt: by line.
    if isinstance(test, ast.If) and test.body and (
        test.body[0].lineno <= line <= (test.body[-1].end_lineno or 0)) and (
            _names.filters_by_name(test.test, analysis.flow, scope)):
      return True
  return False


def _arguments(flow: Flow, call: ast.Call, scope: _scopes.Scope) -> Labels:
  return union(flow.sink_labels(a, scope, "masked") for a in [
      *call.args, *(k.value for k in call.keywords)])


def _hit(found: Labels, scope: _scopes.Scope, sink: Optional[ast.Call]
         ) -> GradsMaskHit:
  masked = found["masked"]
  assert isinstance(masked, ast.expr)
  return GradsMaskHit(masked, scope, sink, found, (sink,) if sink else ())


def _merged(hits: List[GradsMaskHit], analysis: Analysis
            ) -> List[_idiom.Hit]:
  """One hit per masking op, with every apply it reaches; of a helper
  zeroing rows (`zero_nil_slot`), one per function that calls it."""
  by_node: Dict[Tuple[int, int], GradsMaskHit] = {}
  for hit in hits:
    helper = analysis.flow.origin.get(id(hit.node))
    apart = helper is not None and helper is not hit.scope and (
        _split.zero_rows(hit.node, helper) is not None)
    first = by_node.setdefault(
        (id(hit.node), id(hit.scope) if apart else 0), hit)
    if first is not hit:
      first.sinks = tuple(dict.fromkeys((*first.sinks, *hit.sinks)))
  return list(by_node.values())


def _port(hit: _idiom.Hit, analysis: Analysis) -> _edits.Port:
  node, sink = hit.node, hit.sink
  module = analysis.module(hit.scope)
  assert module.tree is not None
  tf = _edits.tf_alias(module.tree)
  lines = analysis.lines(hit.scope)
  several = isinstance(hit, GradsMaskHit) and len(hit.sinks) > 1
  # A `compute_gradients` that steps the variables itself (`assign_add`):
  # no optimizer applies what it returns.
  if any(_names.call_name(s) in _UPDATES for s in (
      getattr(hit, "sinks", ()) or (sink,)) if isinstance(s, ast.Call)) or (
          sink is None and _steps_itself(hit.scope)):
    return ("a hand-written update: apply the gradients with a stock "
            "optimizer through `tfpartial.freeze(variable, mask == 0)` "
            "and drop the mask")
  if not isinstance(sink, ast.Call) or tf is None:
    return "the optimizer call or TensorFlow's import is not plain here"
  helper = analysis.flow.origin.get(id(node))
  if helper is not None and helper is not hit.scope and (
      _split.zero_rows(node, helper) is not None):
    if several and any(not analysis.holds(module, sink)
                       for sink in getattr(hit, "sinks", ())):
      return "the helper is called from several files: port each " \
             "caller by hand as the port of one would"
    return _port_helper_rows(hit, analysis, helper)  # Its file or another.
  if not _held(node, module, analysis):
    return "the mask is applied in a helper: port its callers by hand"
  if several:
    return "the masked gradients reach more than one apply"
  split = _split.concat_zeros(node, hit.scope,
                              lambda n: _edits.text(n, lines))
  if split is not None:
    return split if isinstance(split, str) else _port_split(
        hit, analysis, split)
  scattered = _scattered(node, hit.scope, lines)
  if scattered is not None:
    return scattered if isinstance(scattered, str) else _port_scattered(
        hit, analysis, scattered)
  rows = _rows_kept(node, hit.scope, lines)
  if rows is not None:
    return rows if isinstance(rows, str) else _port_rows_kept(
        hit, analysis, rows)
  pair = _grad_and_mask(node, helper or hit.scope, analysis)
  if isinstance(pair, str):
    return pair
  _, mask = pair  # (the gradient stays as written)
  enumerated = _enumerated.port(node, sink, hit.scope, analysis, mask)
  if enumerated is not None:
    return enumerated
  appended = _appended.port(node, sink, hit.scope, analysis)
  if appended is not None:
    return appended
  return _port_constant(hit, analysis, mask, helper or hit.scope)


def _steps_itself(scope: _scopes.Scope) -> bool:
  """Whether the function adds a step to a variable (`tf.assign_add(var,
  delta)`, `var.assign_sub(...)`): a hand-written optimizer's."""
  return any(isinstance(c, ast.Call) and _names.call_name(c) in {
      "assign_add", "assign_sub"} for c in ast.walk(scope.node))


def _held(node: ast.AST, module: _project.Module, analysis: Analysis
          ) -> bool:
  """Whether `module` holds the masking `node`: itself, or, for the value
  the flow makes of `grad *= mask` (not in the tree), its mask."""
  return analysis.holds(module, node) or isinstance(node, ast.BinOp) and (
      analysis.holds(module, node.right)) and not analysis.holds(
          module, node.left)


def _port_constant(hit: _idiom.Hit, analysis: Analysis, mask: ast.AST,
                   where: _scopes.Scope) -> _edits.Port:
  """`grad * mask` with a constant mask on the one variable the code names
  -> the apply through `tfpartial.freeze(variable, mask == 0)`; the mask
  read `where` it is applied (a helper of the module, maybe)."""
  sink = hit.sink
  module = analysis.module(hit.scope)
  assert module.tree is not None and isinstance(sink, ast.Call)
  tf = _edits.tf_alias(module.tree)
  lines = analysis.lines(hit.scope)
  if not _constants.is_constant(
      mask, where, imported=analysis.project.imported_values):
    return f"the mask `{_edits.text(mask, lines)}` is not a constant: it " \
           "may change while training (see the guide's dynamic masks)"
  variable = _the_variable(hit, lines)
  if variable is None:
    return "the mask applies to every gradient in the list: name the " \
           "variable it is for in a `tfpartial.freeze`"
  statement = analysis.order(hit.scope).statement_of(sink)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(sink, name, lines)
  if statement is None or apply is None:
    return "the apply is not a plain statement"
  np = _edits.numpy_alias(module.tree)
  assert tf is not None
  frozen = _edits.frozen_where_zero(_edits.text(mask, lines), tf,
                                    np or "np", variable)
  spec = f"{name} = tfpartial.freeze({variable}, {frozen})"
  site = _edits.spec_site(statement, hit.scope)
  # `grad * mask` stays: the spec holds where the mask is 0, the multiply
  # keeps any other value it has (`0.5` still scales).
  edits = [_edits.before(site, lines, spec), apply]
  return _edits.with_import(module.tree, edits, numpy=np is None)


def _port_split(hit: _idiom.Hit, analysis: Analysis,
                split: Tuple[ast.expr, str, str]) -> _edits.Port:
  """`masked = concat([zeros_like(old), new])` -> `masked = grad`, the
  spec freezing the split-off part of each variable, the apply through
  it."""
  grad, index, _ = split
  module = analysis.module(hit.scope)
  assert module.tree is not None and isinstance(hit.sink, ast.Call)
  lines = analysis.lines(hit.scope)
  loop = _split.loop_of(grad, hit.scope)
  if loop is not None:
    spec = _loop_spec(loop, grad, index, hit.scope, lines)
  else:
    variables = _split.variables_of(grad, hit.scope)
    spec = None if variables is None or isinstance(
        variables, (ast.List, ast.Tuple)) else (
            f"tfpartial.freeze({_edits.text(variables, lines)}, "
            f"{index.format(v=_edits.text(variables, lines))})")
  if spec is None:
    return "which variable each gradient is for is not plain here"
  order = analysis.order(hit.scope)
  statement = order.statement_of(hit.sink)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(hit.sink, name, lines)
  if statement is None or apply is None:
    return "the apply is not a plain statement"
  site = _edits.spec_site(statement, hit.scope)
  edits = [_edits.replace(hit.node, _edits.text(grad, lines)),
           _edits.before(site, lines, f"{name} = {spec}"), apply]
  return _edits.with_import(module.tree, edits,
                            functools=loop is not None)


# (the statement rebuilding the gradient, the variable's text, the rows'
# text, whether they are the rows that train).
RowsKept = Tuple[ast.Assign, str, str, bool]


def _rows_kept(node: ast.AST, scope: _scopes.Scope, lines: List[str]
               ) -> "RowsKept | str | None":
  """For a sparse gradient rebuilt with the values of some rows zeroed
  (Keras' textual inversion):

      condition = grads[0].indices == token  # (expanded to the values)
      grads[0] = tf.IndexedSlices(
          values=tf.where(condition, grads[0].values, 0),
          indices=grads[0].indices, dense_shape=grads[0].dense_shape)

  with `grads = tape.gradient(loss, weights)`: (the statement,
  `weights[0]`, `token`, True: only that row trains); `!=` freezes it
  instead. None when `node` is no such `where`."""
  if not (isinstance(node, ast.Call) and _names.call_name(node) in {
      "where", "where_v2"} and len(node.args) == 3 and not node.keywords):
    return None
  test, first, second = node.args
  if _names.is_zero(second):
    values, keep = first, True
  elif _names.is_zero(first):
    values, keep = second, False
  else:
    return None
  if not (isinstance(values, ast.Attribute) and values.attr == "values"):
    return None
  gradient = _edits.text(values.value, lines)
  compare = _row_test(test, scope, gradient, lines)
  if compare is None:
    return None
  rows, equal = compare
  statement = next((n for n in scope.nodes if isinstance(n, ast.Assign)
                    and isinstance(n.value, ast.Call) and any(
                        k.value is node for k in n.value.keywords
                        if k.arg == "values") or isinstance(n, ast.Assign)
                    and isinstance(n.value, ast.Call)
                    and n.value.args[:1] == [node]), None)
  if statement is None or len(statement.targets) != 1 or not isinstance(
      statement.value, ast.Call) or (
          _names.call_name(statement.value) != "IndexedSlices") or (
          _edits.text(statement.targets[0], lines) != gradient):
    return "the sparse gradient is not rebuilt in place"
  variable = _variable_of(statement.targets[0], scope, lines)
  if variable is None:
    return "which variable the gradient is for is not plain here"
  return statement, variable, rows, keep == equal


def _row_test(test: ast.AST, scope: _scopes.Scope, gradient: str,
              lines: List[str]) -> Optional[Tuple[str, bool]]:
  """(the row, whether the test is `==`) for `gradient.indices == row` (or
  a name holding it, expanded with `expand_dims`/`reshape`)."""
  seen = 0
  while isinstance(test, ast.Name) and seen < 4:
    made = [d.value for d in scope.defs.get(test.id, [])]
    compares = [m for m in made if isinstance(m, ast.Compare) or (
        m is not None and _either(m) is not None)]
    if len(compares) != 1 or not all(
        m is compares[0] or isinstance(m, ast.Call) and _names.call_name(
            m) in {"expand_dims", "reshape"} and m.args and isinstance(
                m.args[0], ast.Name) and m.args[0].id == test.id
        for m in made):
      return None
    test, seen = compares[0], seen + 1
  either = _either(test)
  if either is not None:
    found = [_row_test(t, scope, gradient, lines) for t in either]
    rows = [f for f in found if f is not None and f[1]]
    if len(rows) != len(either):
      return None
    return "[" + ", ".join(r[0] for r in rows) + "]", True
  if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], (ast.Eq, ast.NotEq)))):
    return None
  sides = [test.left, test.comparators[0]]
  for index, other in (sides, sides[::-1]):
    if isinstance(index, ast.Attribute) and index.attr == "indices" and (
        _edits.text(index.value, lines) == gradient) and not any(
            isinstance(n, ast.Attribute) and n.attr == "indices"
            for n in ast.walk(other)):
      return _edits.text(other, lines), isinstance(test.ops[0], ast.Eq)
  return None


def _either(test: ast.AST) -> Optional[List[ast.expr]]:
  """The two tests of `tf.logical_or(a, b)` or `a | b`, else None."""
  if isinstance(test, ast.Call) and _names.call_name(test) == "logical_or" \
      and len(test.args) == 2 and not test.keywords:
    return list(test.args)
  if isinstance(test, ast.BinOp) and isinstance(test.op, ast.BitOr):
    return [test.left, test.right]
  return None


# (the statement zeroing the elements, the variable's text, the index of
# the elements zeroed).
Scattered = Tuple[ast.Assign, str, str]


def _scattered(node: ast.AST, scope: _scopes.Scope, lines: List[str]
               ) -> "Scattered | str | None":
  """For zeros scattered into a gradient at indices written out:

      grads = tape.gradient(loss, [x_points])
      grads[0] = tf.tensor_scatter_nd_update(grads[0], [[0], [n - 1]],
                                             [0.0, 0.0])

  (the statement, `x_points`, `[0, n - 1]`): those elements are frozen.
  None when `node` is no such scatter."""
  if not (isinstance(node, ast.Call) and _names.call_name(node) == (
      "tensor_scatter_nd_update") and len(node.args) == 3):
    return None
  gradient, indices = node.args[0], node.args[1]
  points = getattr(indices, "elts", None) if isinstance(
      indices, (ast.List, ast.Tuple)) else None
  if not points or not all(isinstance(p, (ast.List, ast.Tuple)) and p.elts
                           and len(p.elts) == len(points[0].elts)
                           for p in points):
    return "the zeroed elements are not a list of indices written out"
  axes = ["[" + ", ".join(_edits.text(p.elts[a], lines) for p in points)
          + "]" for a in range(len(points[0].elts))]
  index = axes[0] if len(axes) == 1 else "(" + ", ".join(axes) + ")"
  statement = next((n for n in scope.nodes if isinstance(n, ast.Assign)
                    and n.value is node), None)
  if statement is None or len(statement.targets) != 1 or _edits.text(
      statement.targets[0], lines) != _edits.text(gradient, lines):
    return "the gradient is not zeroed in place"
  names = {n.id for n in ast.walk(indices) if isinstance(n, ast.Name)}
  if any(d.value is None or getattr(d.value, "lineno", 0) >= (
      statement.lineno) for n in names for d in scope.defs.get(n, [])):
    return "the zeroed indices change in the function"
  variable = _variable_of(statement.targets[0], scope, lines)
  if variable is None:
    return "which variable the gradient is for is not plain here"
  return statement, variable, index


def _variable_of(target: ast.expr, scope: _scopes.Scope, lines: List[str]
                 ) -> Optional[str]:
  """The variable whose gradient `grads[i]` is, for `grads =
  tape.gradient(loss, variables)`: `variables[i]` (the element itself
  when `variables` is a list written out)."""
  if not (isinstance(target, ast.Subscript) and isinstance(
      target.value, ast.Name)):
    return None
  variables = _split.variables_of(target.value, scope)
  if variables is None:
    return None
  if isinstance(variables, (ast.List, ast.Tuple)):
    at = target.slice
    if not (isinstance(at, ast.Constant) and isinstance(at.value, int)) or (
        isinstance(at.value, bool)) or not (
            -len(variables.elts) <= at.value < len(variables.elts)):
      return None
    return _edits.text(variables.elts[at.value], lines)
  return f"{_edits.text(variables, lines)}[{_edits.text(target.slice, lines)}]"


def _port_scattered(hit: _idiom.Hit, analysis: Analysis,
                    scattered: Scattered) -> _edits.Port:
  """The scatter of zeros dropped; the apply through
  `tfpartial.freeze(variable, index)`, made before it."""
  statement, variable, index = scattered
  module = analysis.module(hit.scope)
  assert module.tree is not None and isinstance(hit.sink, ast.Call)
  lines = analysis.lines(hit.scope)
  step = analysis.order(hit.scope).statement_of(hit.sink)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(hit.sink, name, lines)
  if step is None or apply is None or step.lineno <= (
      statement.end_lineno or statement.lineno):
    return "the apply is not a plain statement after the gradient"
  spec = f"{name} = tfpartial.freeze({variable}, {index})"
  return _edits.with_import(module.tree, [
      _dropped(statement, hit.scope, lines),
      _edits.before(_site(step, hit.scope, spec), lines, spec), apply])


def _dropped(statement: ast.Assign, scope: _scopes.Scope, lines: List[str]
             ) -> Edit:
  """`statement`'s lines removed; when it stands alone in its block or
  shares a line, its value replaced by its target (`g = g`)."""
  first, last = statement.lineno, statement.end_lineno or statement.lineno
  alone = any(getattr(n, field, None) == [statement] for n in ast.walk(
      scope.node) for field in ("body", "orelse", "finalbody"))
  head = lines[first - 1].encode("utf-8", "surrogateescape")
  tail = lines[last - 1].encode("utf-8", "surrogateescape")
  if alone or head[:statement.col_offset].strip() or tail[
      statement.end_col_offset or 0:].strip():
    return _edits.replace(statement.value,
                          _edits.text(statement.targets[0], lines))
  return Edit(first, 0, last, len(tail), "")


def _port_rows_kept(hit: _idiom.Hit, analysis: Analysis, rows: RowsKept
                    ) -> _edits.Port:
  """`values=tf.where(condition, grads[0].values, 0)` -> `values=grads[0]
  .values`, and the apply through `tfpartial.train_only(weights[0],
  token)` (or `freeze` for `!=`)."""
  statement, variable, index, trains = rows
  module = analysis.module(hit.scope)
  assert module.tree is not None and isinstance(hit.sink, ast.Call)
  lines = analysis.lines(hit.scope)
  order = analysis.order(hit.scope)
  step = order.statement_of(hit.sink)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(hit.sink, name, lines)
  if step is None or apply is None or step.lineno <= (
      statement.end_lineno or statement.lineno):
    return "the apply is not a plain statement after the gradient"
  assert isinstance(hit.node, ast.Call)
  values = hit.node.args[1 if trains else 2]
  how = "train_only" if trains else "freeze"
  spec = f"{name} = tfpartial.{how}({variable}, {index})"
  return _edits.with_import(module.tree, [
      _edits.replace(hit.node, _edits.text(values, lines)),
      _edits.before(_site(step, hit.scope, spec), lines, spec), apply])


def _site(step: ast.stmt, scope: _scopes.Scope, spec: str) -> ast.stmt:
  """Where to make `spec`: before the `tf.function` it is in (once, not
  per trace), unless it reads the function's own names (its variables
  taken from an argument, `model.text_encoder.trainable_weights`): then
  before the step, in the function (each trace makes it; it holds only
  Python values, as a Keras `train_step`'s does)."""
  site = _edits.spec_site(step, scope)
  if site is step:
    return step
  read = {n.id for n in ast.walk(ast.parse(spec)) if isinstance(n, ast.Name)}
  local = read & (set(scope.params) | set(scope.defs))
  return step if local else site


def _port_helper_rows(hit: _idiom.Hit, analysis: Analysis,
                      helper: _scopes.Scope) -> _edits.Port:
  """A helper writing zeros over the first rows of a gradient, called in a
  loop over `grads_and_vars` for the variables a test chooses (the memory
  networks' `zero_nil_slot`):

      for g, v in grads_and_vars:
          if v.name in nil_vars:
              out.append((zero_nil_slot(g), v))

  -> `out.append((g, v))`, and the union of `tfpartial.freeze(v,
  slice(None, k))` for the same `v`s."""
  rows = _split.zero_rows(hit.node, helper)
  assert rows is not None and isinstance(hit.sink, ast.Call)
  tensor, count = rows
  lines = analysis.lines(hit.scope)
  module = analysis.module(hit.scope)
  assert module.tree is not None
  position = _gradient_param(tensor, helper)
  returned = [n for n in helper.nodes if isinstance(n, ast.Return)]
  if position is None or len(returned) != 1 or (
      returned[0].value is not hit.node):
    return "the helper does not return its gradient with rows zeroed"
  called = _helper_call(hit, analysis, helper, position)
  if isinstance(called, str):
    return called
  call, grad = called
  loop = _loop_around(call, hit.scope, lines)
  if isinstance(loop, str):
    return loop
  node, test = loop
  targets = getattr(node.target, "elts", [])
  names = [t.id for t in targets if isinstance(t, ast.Name)]
  if len(targets) != 2 or len(names) != 2 or grad.id not in names or (
      names[0] == names[1]):
    return "the loop does not read as `for g, v in grads_and_vars`"
  variable = names[1 - names.index(grad.id)]
  name = _edits.spec_name(module.tree)
  applies = _applies_after(hit, analysis, node, name)
  if isinstance(applies, str):
    return applies
  edits, last = applies
  # Clipped together, changed again or applied twice: masked in place,
  # the spec made before the loop, so that what follows sees the zeros.
  in_place = len(edits) > 1 or not _applies_the_list(hit, call, node)
  site = node if in_place else last
  if _edits.in_trace(hit.scope):
    return "the variables are chosen inside a `tf.function`: make the " \
           "spec once, outside it"
  chosen = f" if {test}" if test else ""
  spec = (f"{name} = functools.reduce(lambda a, b: a | b, ["
          f"tfpartial.freeze({variable}, slice(None, {count})) for "
          f"{_edits.text(node.target, lines)} in "
          f"{_edits.text(node.iter, lines)}{chosen}], "
          "tfpartial.FreezeSpec())")  # None chosen: nothing frozen.
  masked = f"{name}.mask([{grad.id}], [{variable}])[0]" if in_place else (
      grad.id)
  edits += [_edits.replace(call, masked), _edits.before(site, lines, spec)]
  return _edits.with_import(module.tree, edits, functools=True)


def _applies_after(hit: _idiom.Hit, analysis: Analysis, loop: ast.For,
                   name: str) -> Union[Tuple[List[Edit], ast.stmt], str]:
  """Every apply the masked gradients reach, through the spec `name`,
  and the statement of the last: each a plain statement after `loop`."""
  sinks = hit.sinks if isinstance(hit, GradsMaskHit) and hit.sinks else (
      hit.sink,)
  order = analysis.order(hit.scope)
  lines = analysis.lines(hit.scope)
  edits: List[Edit] = []
  statement: Optional[ast.stmt] = None
  for sink in sinks:
    statement = order.statement_of(sink) if isinstance(
        sink, ast.Call) else None
    apply = _edits.apply_with(sink, name, lines) if isinstance(
        sink, ast.Call) else None
    if statement is None or apply is None or statement.lineno <= (
        loop.end_lineno or loop.lineno):
      return "the apply is not a plain statement after the loop"
    edits.append(apply)
  assert statement is not None
  return edits, statement


def _helper_call(hit: _idiom.Hit, analysis: Analysis,
                 helper: _scopes.Scope, position: int
                 ) -> Union[Tuple[ast.Call, ast.Name], str]:
  """The one call of `helper` in the hit's function, and the gradient's
  name it passes at the parameter `position`."""
  calls = [n for n in hit.scope.nodes if isinstance(n, ast.Call)
           and analysis.flow.callee(n, hit.scope) is helper.node]
  if len(calls) != 1:
    return "the helper is called more than once here: port it by hand"
  call = calls[0]
  if isinstance(call.func, ast.Attribute) and helper.params[:1] in (
      ["self"], ["cls"]):
    position -= 1
  grad = call.args[position] if 0 <= position < len(call.args) else None
  if call.keywords or not isinstance(grad, ast.Name):
    return "the helper's gradient is not given by position"
  return call, grad


def _gradient_param(tensor: ast.Name, helper: _scopes.Scope
                    ) -> Optional[int]:
  """The position of the helper's parameter that `tensor` is (or is
  `convert_to_tensor` of)."""
  name = tensor.id
  if name not in helper.params:
    made = helper.defs.get(name, [])
    value = made[0].value if len(made) == 1 else None
    if not (isinstance(value, ast.Call) and value.args and isinstance(
        value.args[0], ast.Name) and _names.call_name(value) in {
            "convert_to_tensor", "identity"}):
      return None
    name = value.args[0].id
  return helper.params.index(name) if name in helper.params else None


def _loop_around(call: ast.Call, scope: _scopes.Scope, lines: List[str]
                 ) -> Union[Tuple[ast.For, str], str]:
  """The `for` whose body (or an `if` right in it) holds the statement
  that makes `call`, and the test choosing it (`not (...)` in an
  `else`)."""
  for node in scope.nodes:
    if not isinstance(node, ast.For) or node.orelse:
      continue
    for statement in node.body:
      if _holds(statement, call) and not isinstance(statement, ast.If):
        return node, ""
      if isinstance(statement, ast.If) and _holds(statement, call):
        if _holds(statement.test, call):
          break
        test = _edits.text(statement.test, lines)
        for branch, chosen in ((statement.body, test), (
            statement.orelse, f"not ({test})")):
          if any(_holds(s, call) and not isinstance(s, _BLOCKS)
                 for s in branch):
            return node, chosen
  return "the helper is not called straight in a loop over the gradients"


def _applies_the_list(hit: _idiom.Hit, call: ast.Call, loop: ast.For
                      ) -> bool:
  """Whether the apply takes the very list the loop appends `call` to, as
  the loop left it."""
  added = _added_to(call, loop)
  sink = hit.sink
  end = loop.end_lineno or loop.lineno
  return added is not None and isinstance(sink, ast.Call) and bool(
      sink.args) and isinstance(sink.args[0], ast.Name) and (
          sink.args[0].id == added) and not any(
              end < getattr(d.value, "lineno", 0) <= sink.lineno
              for d in hit.scope.defs.get(added, []))


def _added_to(call: ast.Call, loop: ast.For) -> Optional[str]:
  """The list `call` is appended to (`out.append((call, v))`) in `loop`."""
  for statement in ast.walk(loop):
    if isinstance(statement, ast.Expr) and isinstance(
        statement.value, ast.Call) and isinstance(
            statement.value.func, ast.Attribute) and (
                statement.value.func.attr == "append") and isinstance(
                    statement.value.func.value, ast.Name) and _holds(
                        statement, call):
      return statement.value.func.value.id
  return None


_BLOCKS = (ast.If, ast.For, ast.While, ast.With, ast.Try)


def _holds(node: ast.AST, call: ast.Call) -> bool:
  return any(n is call for n in ast.walk(node))


def _loop_spec(loop: Tuple[ast.For, ast.expr], grad: ast.expr, index: str,
               scope: _scopes.Scope, lines: List[str]) -> Optional[str]:
  """`for a, grad in zip(axes, grads)` over `grads = tape.gradient(loss,
  weights)`: the union of each weight's spec, zipped the same way."""
  node, grads = loop
  variables = _split.variables_of(grads, scope)
  if variables is None or not isinstance(grad, ast.Name) or not isinstance(
      node.iter, ast.Call):
    return None
  targets = ", ".join("_v" if isinstance(t, ast.Name) and t.id == grad.id
                      else _edits.text(t, lines)
                      for t in getattr(node.target, "elts", []))
  sources = ", ".join(_edits.text(variables if a is grads else a, lines)
                      for a in node.iter.args)
  return (f"functools.reduce(lambda a, b: a | b, ["
          f"tfpartial.freeze(_v, {index.format(v='_v')}) "
          f"for {targets} in zip({sources})])")


def _grad_and_mask(node: ast.AST, scope: _scopes.Scope, analysis: Analysis
                   ) -> Union[Tuple[ast.AST, ast.AST], str]:
  if isinstance(node, ast.BinOp):
    pairs = [(node.left, node.right), (node.right, node.left)]
  elif isinstance(node, ast.Call) and _names.call_name(node) in {
      "multiply", "mul"} and len(node.args) >= 2:
    pairs = [(node.args[0], node.args[1]), (node.args[1], node.args[0])]
  elif isinstance(node, ast.IfExp):
    return "zeros (or `None`) chosen by a test for whole variables: leave " \
           "those out of the apply, or `tfpartial.freeze(variable)` them"
  else:
    return "the gradients are rebuilt with `tf.where`: say which elements " \
           "it keeps in a `tfpartial.freeze`"
  flow = analysis.flow
  grad, mask = next(((g, m) for g, m in pairs
                     if "grad" in flow.labels(g, scope)), pairs[0])
  while isinstance(mask, ast.Subscript) or isinstance(
      mask, ast.Call) and _names.call_name(mask) in {"gather", "cast"} and (
          mask.args):
    mask = mask.value if isinstance(mask, ast.Subscript) else mask.args[0]
  return grad, mask


def _the_variable(hit: _idiom.Hit, lines: List[str]) -> Optional[str]:
  """The one variable whose gradients are masked, if the code says it."""
  source = hit.labels.get("grad")
  lists = []
  if isinstance(source, ast.Call):
    lists += [k.value for k in source.keywords if k.arg == "var_list"]
    if _names.call_name(source) in {"gradient", "gradients"} and len(
        source.args) >= 2:
      lists.append(source.args[1])
  for item in lists:
    if isinstance(item, (ast.List, ast.Tuple)) and len(item.elts) == 1:
      return _edits.text(item.elts[0], lines)
  if isinstance(source, ast.Call) and not lists:
    root = hit.scope
    while root.parent is not None:
      root = root.parent
    made = [d for s in root.all() for name, defs in s.defs.items()
            for d in defs if isinstance(d.value, ast.Call)
            and _names.call_name(d.value) in _names.VARIABLES
            and not any(k.arg == "trainable" for k in d.value.keywords)]
    names = {n for s in root.all() for n, defs in s.defs.items()
             for d in defs if d in made}
    if len(made) == 1 and len(names) == 1:
      return names.pop()
  return None


IDIOM = GradsMask()
