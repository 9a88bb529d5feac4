"""The gates on how a filtered step is run and what it is given, beside
those on what its filter keeps (`_filter_gates`): a gradient only shown
or only measured, never applied (`only_summarised`, `only_measured`); a
filter that chooses nothing to freeze (`no_choice`: gradients fed in
from outside, only unread or never-opened variables left out, nothing
left out to train); a phase beside a whole step of the same loss
(`phased`, over the steps that may run with it, `run_with`); one step of
a loop's, one per group, every group trained (`per_group`); where the
variables were chosen (`chosen_where`) and where the finding is shown
(`shown`)."""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional, Sequence, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _arms
from tfpartial._tools.scan.idioms._runs import _fed
from tfpartial._tools.scan.idioms._runs import _fetched
from tfpartial._tools.scan.idioms._runs import _growing
from tfpartial._tools.scan.idioms._runs import _same_test
from tfpartial._tools.scan.idioms._runs import _scheduled
from tfpartial._tools.scan.idioms._sources import _flagged
from tfpartial._tools.scan.idioms._sources import _listed
from tfpartial._tools.scan.idioms._sources import _step_lists
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _deep_nodes, _end)
from tfpartial._tools.scan.idioms._sources import _groups
from tfpartial._tools.scan.idioms._wholes import _accumulated
from tfpartial._tools.scan.idioms._wholes import _sliced_parts
from tfpartial._tools.scan.idioms._wholes import _fast_weights
from tfpartial._tools.scan.idioms._wholes import _progressive
from tfpartial._tools.scan.idioms._wholes import _picked_step
from tfpartial._tools.scan.idioms._wholes import _set_by_hand
from tfpartial._tools.scan.idioms._wholes import _unopened
from tfpartial._tools.scan.idioms._wholes import _unread
from tfpartial._tools.scan.idioms._wholes import _updated_apart
from tfpartial._tools.scan.idioms._wholes._other_half import _other_trainings




def _trains_nothing_left(analysis: Analysis, step: Step) -> bool:
  """Whether the step leaves nothing out: its gradient makes fast weights
  (`_fast_weights`; not from a list chosen by literal names) or is only
  accumulated (`_accumulated`), or the rest of its loop's variables is
  written by a setter (`_set_by_hand`) or updated by the loop that runs
  the step (`_updated_apart`)."""
  return _fast_weights.inner_update(step.call, step.scope) and not (
      step.var_list is not None and _fast_weights.named_part(
          step.var_list, step.scope)) or (
      _accumulated.only_accumulated(step.call, step.scope)) or (
          _set_by_hand.rest_set(analysis.project, step.var_list, step.scope)
      ) or _updated_apart.rest_updated(step.var_list, step.scope, step.call)


def run_with(step: Step, steps: List[Step]) -> List[Step]:
  """The steps that may run with `step`: not one of its function in the
  other arm of an `if` whose run trains none of the other losses' lists
  (`if gan_weight <= 0: minimize(g_loss) else: minimize(g_loss,
  var_list=g_vars)`, the discriminator's step only where the GAN is on:
  a choice of run, no phase)."""
  partners = _other_trainings(step, steps)
  return [other for other in steps if other.scope is not step.scope or (
      not _apart(step, other)) or not partners or not all(
          partner.scope is other.scope and _apart(partner, other)
          for partner in partners)]


def _apart(one: Step, other: Step) -> bool:
  """Whether two steps of one function never run in one run."""
  return _same_test.exclusive(one.scope, _idiom.position(one.call),
                              _idiom.position(other.call))


# Calls that only show a value (a summary, a print).
_SHOWN = {"histogram", "scalar", "image", "audio", "text", "print",
          "Print", "info", "debug", "write"}


_REARRANGE = {"zip", "list", "tuple", "enumerate", "sorted", "dict"}


def only_summarised(step: Step, steps: List[Step]) -> bool:
  """Whether a filtered gradient is only shown (`tf.summary.histogram` of
  each) or fetched to look at (`sess.run(gradient)`), never applied,
  while the function's step minimises the same loss on every variable
  (`optimizer.minimize(loss)`, or applies its `compute_gradients(loss)`
  of every variable), or no other step is in its module
  (`_fetched`); or passed straight to a call that shows it
  (`tf.print(tape.gradient(loss, [a, b]))`): bound to nothing, it is
  shown and dropped, whatever else trains (`_shown_directly`)."""
  if _names.call_name(step.call) in {
      "gradients", "gradient", "compute_gradients"} and _shown_directly(
          step):
    return True
  if _names.call_name(step.call) not in {
      "gradients", "gradient", "compute_gradients"} or not (
      any(other.scope is step.scope and other.loss == step.loss and (
          other.var_list is None) and _names.call_name(other.call) in {
              "minimize", "create_train_op", "optimize_loss",
              "compute_gradients"}
          for other in _step_lists.by_scope(steps, step)) or _fetched.alone(step.scope, step.call, [
              (other.call, other.scope) for other in steps])):
    return False
  held: Set[str] = set()
  passed: Set[int] = set()  # Reads that pass the value on or show it.
  for node in step.scope.nodes:  # In source order: assignments first.
    value = getattr(node, "value", None) if isinstance(node, ast.Assign) \
        else getattr(node, "iter", None) if isinstance(node, ast.For) \
        else None
    targets: List[ast.AST] = list(node.targets) if isinstance(
        node, ast.Assign) else [getattr(node, "target", node)]
    if value is not None and (value is step.call or any(
        isinstance(n, ast.Name) and n.id in held
        for n in _scopes.walk(value)) and all(
            _names.call_name(c) in _REARRANGE for c in _scopes.walk(value)
            if isinstance(c, ast.Call))) and all(
            isinstance(t, (ast.Name, ast.Tuple)) for t in targets):
      held.update(n.id for t in targets for n in _scopes.walk(t)
                  if isinstance(n, ast.Name))
      passed.update(id(n) for n in _scopes.walk(value))
    elif isinstance(node, ast.Call) and _names.call_name(node) in {
        *_SHOWN, "run"}:
      passed.update(id(n) for n in _scopes.walk(node))
  return bool(held) and all(
      id(n) in passed for n in step.scope.nodes if isinstance(
          n, ast.Name) and n.id in held and isinstance(n.ctx, ast.Load))


def _shown_directly(step: Step) -> bool:
  """Whether the step's gradient call is itself an argument of a call
  that shows it and returns nothing the code can use (`tf.print(...)`,
  `print(...)`, a `tf.summary` op's), alone or in a list or tuple display
  there, the call a statement of its own: its value is dropped, it
  reaches nothing else (the calls so shown found once per function).
  Never `tf.Print`, which returns its input."""
  key = (_shown_directly, 0, 0)
  shown = step.scope.judged.get(key)
  if not isinstance(shown, set):
    shown = step.scope.judged[key] = {
        id(item) for node in step.scope.nodes
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
        and _drops(node.value)
        for argument in [*node.value.args,
                         *(k.value for k in node.value.keywords)]
        for item in (argument.elts if isinstance(argument, (
            ast.List, ast.Tuple)) else [argument])
        if isinstance(item, ast.Call)}
  return id(step.call) in shown


def _drops(call: ast.Call) -> bool:
  """Whether `call` shows its arguments and gives back nothing usable:
  Python's `print`, `tf.print`, a `tf.summary` op."""
  name = _names.dotted(call.func) or ""
  return name in {"print", "tf.print"} or name.startswith("tf.summary.")


def no_choice(step: Step, analysis: Analysis,
              steps: Sequence[Step] = ()) -> bool:
  """Whether the step's filter chooses nothing to freeze: it applies
  gradients fed in from outside (computed for those variables elsewhere),
  leaves out only variables its loss never reads (beside names another
  of `steps` keeps for the same loss) or a scope no code that
  runs opens (`_unopened`), or trains nothing
  left out (`_trains_nothing_left`)."""
  chosen = step.labels.get("filtered")
  return _fed.fed_gradients(
      step.call, step.scope, analysis.project) or chosen is not None and (
      _unread.only_unread(chosen, analysis.module(step.scope),
                           analysis.project, _kept_beside(step, steps)) or (
          _rest_beside(step, analysis, steps)) or (
          _unopened.excludes_none(analysis.project, chosen))) or (
              _trains_nothing_left(analysis, step))


def _beside(step: Step, steps: Sequence[Step]) -> List[ast.AST]:
  """The filters of the other steps of the step's function and loss."""
  return [chosen for other in steps
          for chosen in [other.labels.get("filtered")]
          if other is not step and other.scope is step.scope and (
              other.loss is not None) and other.loss == step.loss and (
                  chosen is not None)]


def _kept_names(chosen: ast.AST) -> FrozenSet[str]:
  """The names a filter keeps by an `in` test (`[v for v in tvars if
  'custom' in v.name]`)."""
  return frozenset(n.left.value for n in ast.walk(chosen) if isinstance(
      n, ast.Compare) and len(n.ops) == 1 and isinstance(
          n.ops[0], ast.In) and isinstance(n.left, ast.Constant) and (
              isinstance(n.left.value, str)))


def _kept_beside(step: Step, steps: Sequence[Step]) -> FrozenSet[str]:
  """The names other steps of the step's function and loss keep."""
  return frozenset(name for chosen in _beside(step, steps)
                   for name in _kept_names(chosen))


def _rest_beside(step: Step, analysis: Analysis, steps: Sequence[Step]
                 ) -> bool:
  """Whether the step keeps only names it tests with `in` (a head,
  `'custom' in v.name`) and another step of its loss trains the rest
  but a pooler its loss never reads (`'pooler' not in v.name and
  'custom' not in v.name`): between them they leave nothing out."""
  chosen = step.labels.get("filtered")
  if chosen is None:
    return False
  kept = _kept_names(chosen)
  if not kept or any(isinstance(n, ast.Constant) and isinstance(
      n.value, str) and n.value not in kept for n in ast.walk(chosen)):
    return False
  return any(_unread.only_unread(other, analysis.module(step.scope),
                                 analysis.project, kept)
             for other in _beside(step, steps))


def only_measured(step: Step) -> bool:
  """Whether a gradient is only measured, never applied: `grads =
  tf.gradients(loss, var_list)` read only squared (a Fisher diagonal,
  a saliency)."""
  if _names.call_name(step.call) not in {"gradients", "gradient"}:
    return False
  assigned = [n for n in step.scope.nodes if isinstance(n, ast.Assign)
              and n.value is step.call and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Name)]
  if len(assigned) != 1:
    return False
  name = assigned[0].targets[0]
  assert isinstance(name, ast.Name)
  squared: Set[int] = set()
  reads: Set[int] = set()
  for node in step.scope.nodes:
    if isinstance(node, ast.Name) and node.id == name.id and isinstance(
        node.ctx, ast.Load):
      reads.add(id(node))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) or (
        isinstance(node, ast.Call) and _names.call_name(node) in {
            "square", "reduce_sum", "norm", "global_norm"}):
      squared.update(id(n) for n in _scopes.walk(node)
                     if isinstance(n, ast.Name) and n.id == name.id)
  return bool(reads) and reads <= squared


def phased(step: Step, steps: List[Step]) -> bool:
  """Whether the same function also trains the same loss on every
  variable (`train_all = create_train_op(loss, opt)` beside `train_head
  = create_train_op(loss, opt, variables_to_train=head)`, or
  `apply_gradients(pairs)` beside `apply_gradients(pairs[-2:])`): the
  filtered step freezes the rest, whatever its scope names; not a whole
  step in the other arm of an `if` (`if FLAGS["is_diff"]: <two rates>
  else: minimize(loss)`) when this arm's steps of the loss train slices
  of one list that cover it (`_sliced_parts.covers`): no arm leaves a
  variable out."""
  whole = step.var_list.value if isinstance(
      step.var_list, ast.Subscript) and isinstance(
          step.var_list.slice, ast.Slice) else None
  source = step.labels.get("grad")  # The gradients it keeps some of.
  if step.grouped:
    return True  # A sibling group is trained by no step: frozen too.
  if "filtered" in step.labels and _scheduled.chosen_apart(
      step.call, step.scope, [o.call for o in steps if o is not step and (
          "filtered" not in o.labels)]):
    return True  # Trained alone before (or after) the whole model is.
  if step.loss is None:
    return False
  covered: List[bool] = []

  def covers() -> bool:
    """Whether this arm's slices cover the list: not `other`'s, so read
    once per step, and only if asked."""
    if not covered:
      covered.append(_sliced_parts.covers(_arm_slices(step, steps)))
    return covered[0]

  return any(
      other is not step and other.scope is step.scope and (
          other.call is not source) and other.section == step.section and
      other.loss == step.loss and (other.var_list is None and _names.call_name(
          other.call) != "apply_gradients" or whole is not None and (
              other.var_list is not None) and ast.unparse(
                  other.var_list) == ast.unparse(whole)) and not (
                      _arms.apart(step.scope, _idiom.position(step.call),
                                  _idiom.position(other.call)) and covers())
      for other in _step_lists.by_scope(steps, step))


def _arm_slices(step: Step, steps: List[Step]) -> List[str]:
  """The lists, as written where they are made (a name bound once: its
  value), of the steps of `step`'s function and loss that may run beside
  it (none in the other arm of an `if`)."""
  texts = []
  for other in _step_lists.by_scope(steps, step):
    if other.scope is not step.scope or other.loss != step.loss or (
        other.var_list is None) or _arms.apart(
            step.scope, _idiom.position(step.call),
            _idiom.position(other.call)):
      continue
    value = other.var_list
    if isinstance(value, ast.Name):
      defs = step.scope.defs.get(value.id, [])
      if len(defs) != 1 or defs[0].value is None:
        return []
      value = defs[0].value
    texts.append(ast.unparse(value))
  return texts


# Loops, and comprehensions (each makes its element once per item).
_LOOPS = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.GeneratorExp,
          ast.DictComp)


def per_group(analysis: Analysis, step: Step, node: ast.AST) -> bool:
  """Whether the step is one of a loop's, one per group, every group
  trained (`_looped`); not one that a run-time value picks to run
  (`_picked_step`: a stage), nor a stage's beside a whole step of its
  loss (`_staged`), nor a progressive network's column, fed by the
  columns before it (`_progressive`)."""
  return _looped(step, node) and not _picked_step.picked(
      analysis.project, step) and not _staged(step) and not (
          _progressive.columns(analysis, step.scope, step.var_list))


def _staged(step: Step) -> bool:
  """Whether a step of a loop's stage trains its list (`for name, xhat,
  var_list in layer_info:`) while another step of its function and graph
  minimises that stage's loss over every variable: each stage trains its
  new layer alone first, the earlier layers held (LISTA's layer-wise
  training), not one group of many each trained by its own loss."""
  return isinstance(step.call, ast.Call) and _listed.minimised_whole(
      step.scope, step.call)


def shown(analysis: Analysis, step: Step, node: ast.expr) -> ast.expr:
  """Where a filter is shown: at the list of a step that a run-time value
  picks from a loop's (the filters are the loop's groups), else `node`."""
  if isinstance(step.var_list, ast.expr) and _looped(step, node) and (
      _picked_step.picked(analysis.project, step)):
    return step.var_list
  return node


def _looped(step: Step, node: ast.AST) -> bool:
  """Whether the step is made in a loop whose variable chooses the group
  (`for i in range(n): ... 'net_%d' % i in v.name ... minimize`, or a
  comprehension `[opt.compute_gradients(loss, vs) for vs, loss in
  zip(groups, losses)]`): one step per group, every group trained (mutual
  learning, ensembles, a GAN's halves)."""
  loops: Set[str] = set()
  at = _idiom.position(step.call)
  for loop in _deep_nodes(step.scope):
    if not isinstance(loop, _LOOPS):
      continue
    # A comprehension's element, not what it iterates over.
    made = getattr(loop, "elt", getattr(loop, "value", loop))
    if _idiom.position(made) <= at and _end(step.call) <= _end(made):
      targets = [loop.target] if isinstance(loop, (ast.For, ast.AsyncFor)) \
          else [g.target for g in getattr(loop, "generators", [])]
      loops.update(n.id for t in targets for n in _scopes.walk(t)
                   if isinstance(n, ast.Name))
  if not loops:
    return False
  used = {n.id for part in (node, step.var_list) if part is not None
          for n in _scopes.walk(part) if isinstance(n, ast.Name)
          } - _growing.growing_names(node)
  return bool(used & loops)


def chosen_where(flow: Flow, step: Step, node: Optional[ast.AST]
                  ) -> Optional[ast.AST]:
  """Where the variables were chosen when only the objects the step's
  callers pass tell it (`Trainer(config, model)` training
  `model.get_var_list()`): the choice, in the model's code; but where a
  flag's `if` narrows the list by name in the step's own function
  (`_flagged.narrowed`), that filter."""
  where = step.labels.get("filtered")
  if step.grouped and step.var_list is not None and _groups.among(
      step.var_list, step.scope):
    return step.var_list  # One group or another, by a flag: at the step.
  if node is step.var_list and node is not None and isinstance(
      where, ast.expr) and where is not node and (
          "filtered" not in flow.labels(node, step.scope)):
    return _flagged.narrowed(node, step.scope, where) or where
  return node
