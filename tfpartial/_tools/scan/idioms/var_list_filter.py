"""`var-list-filter`: the variables a step trains filtered by name or
scope, leaving the others untrained on purpose (fine-tuning, slim's
`--trainable_scopes`). Whole variables only: exact as it is, a candidate
for a spec file.

What the code does decides, not how a scope is written: a module whose
steps train two or more filtered groups (a GAN's generator and
discriminator, an actor and a critic) trains everything between them;
a filtered group that is also written (a target network's sync) is not
left out; a filter naming a scope that the project opens around the
whole model (`with tf.variable_scope("ppo2_model")`) selects the model.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import (Dict, Iterable, Iterator, List, Optional, Sequence, Set,
                    Tuple)

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow, has_var as _has_var
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms import _arms
from tfpartial._tools.scan.idioms import _between
from tfpartial._tools.scan.idioms import _built_outside
from tfpartial._tools.scan.idioms import _chosen_ops
from tfpartial._tools.scan.idioms import _complemented
from tfpartial._tools.scan.idioms import _fed
from tfpartial._tools.scan.idioms import _either_arm
from tfpartial._tools.scan.idioms import _every_layer
from tfpartial._tools.scan.idioms import _flag_param
from tfpartial._tools.scan.idioms import _flagged
from tfpartial._tools.scan.idioms import _graphs
from tfpartial._tools.scan.idioms import _groups
from tfpartial._tools.scan.idioms import _halves
from tfpartial._tools.scan.idioms import _growing
from tfpartial._tools.scan.idioms import _held
from tfpartial._tools.scan.idioms import _kept_lists
from tfpartial._tools.scan.idioms import _handed_part
from tfpartial._tools.scan.idioms import _helper_choice
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms import _listed
from tfpartial._tools.scan.idioms import _loss_network
from tfpartial._tools.scan.idioms import _model_scope
from tfpartial._tools.scan.idioms import _narrowed
from tfpartial._tools.scan.idioms import _outer
from tfpartial._tools.scan.idioms import _own_scopes
from tfpartial._tools.scan.idioms import _part_of_self
from tfpartial._tools.scan.idioms import _passed_scope
from tfpartial._tools.scan.idioms import _picked
from tfpartial._tools.scan.idioms import _restored
from tfpartial._tools.scan.idioms import _stacked
from tfpartial._tools.scan.idioms import _run_off
from tfpartial._tools.scan.idioms import _run_outside
from tfpartial._tools.scan.idioms import _scheduled
from tfpartial._tools.scan.idioms import _self_scope
from tfpartial._tools.scan.idioms import _stages
from tfpartial._tools.scan.idioms import _swapped
from tfpartial._tools.scan.idioms import _unbound_lists
from tfpartial._tools.scan.idioms import _unread
from tfpartial._tools.scan.idioms import _unscoped
from tfpartial._tools.scan.idioms import _warm_started
from tfpartial._tools.scan.idioms import _whole_elsewhere
from tfpartial._tools.scan.idioms import _writes

STEPS = {"minimize", "compute_gradients", "gradients", "gradient",
         "apply_gradients", "create_train_op", "optimize_clones",
         "optimize_loss"}
_VAR_LIST_KEYWORDS = {"var_list", "variables_to_train", "sources",
                      "xs", "variables"}
_LOSS_KEYWORDS = {"loss", "ys", "target", "total_loss"}
_SCOPES = {"variable_scope", "name_scope", "VariableScope"}


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


class VarListFilter(_idiom.Idiom):
  """A `var_list` filtered by name or scope that leaves variables out."""

  id = "var-list-filter"
  order = 5
  entry = _idiom.Entry(
      "`var_list` built by filtering variables by name or scope (whole "
      "variables only)", "var_list-filtering-slims-trainable_scopes",
      "keep the filter (it is exact); to keep part of a variable too, "
      "`spec.minimize(optimizer, loss, var_list=var_list)`, or write the "
      "filter as a spec file (`{\"scope/**\": {\"freeze\": \"...\"}}`)",
      level="note")
  by_hand = ("nothing to port: the filter is exact; add a spec only if part "
             "of a variable must stay too")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    by_module: Dict[int, List[Step]] = {}
    for step in _grouped(analysis, _steps(analysis)):
      by_module.setdefault(id(analysis.module(step.scope)), []).append(step)
    synced = _synced_modules(analysis, by_module)
    opened = _root_scopes(analysis)
    # One finding per function and loss: the layers of one fine-tuning
    # trained at several learning rates are one filter.
    hits: Dict[_Key, _idiom.Hit] = {}
    sides: Dict[_Key, Optional[_arms.Arm]] = {}
    also: Dict[_Key, List[_idiom.Hit]] = {}
    # The filters each function's steps train in each of its graphs, with
    # the arm of a flag's `if` each is built in.
    parts: Dict[Tuple[int, int], Set[_Part]] = {}
    # Groups emptied by a flag (`if args.freeze_convolutions: conv = []`).
    flagged: List[_idiom.Hit] = []
    made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]] = {}
    for module, steps in by_module.items():
      if module in synced:
        continue  # A target network written from the trained one.
      groups = _loss_groups(steps)
      for step in steps:
        node = _filter_of(analysis, step, steps, groups, opened)
        if node is None:
          flagged += _models_by_flag(analysis, step, steps, groups)
          continue
        flagged += [_idiom.Hit(n, step.scope, step.call, step.labels)
                    for n in _flagged.emptied(analysis.flow, step.var_list,
                                              step.scope, step.call)]
        side = _arms.arm(step.call, step.scope, [
            o.call for o in steps if o is not step and _one_loss(o, step)])
        if not _phased(step, steps):
          _add_part(step, (_filter_text(node), side), parts, made)
        key = (id(step.scope), step.section, step.loss or str(id(node)))
        node, labels = _helper_choice.placed(analysis.flow, _into_method(
            analysis, node, step.scope), step.scope, step.labels,
                                             _returned_filter)
        if _helper_choice.NARROWED in labels:  # Each helper its own part.
          key = (key[0], key[1], f"{key[2]} {id(node)}")
        node = _narrowed.narrowing(node, analysis.flow.origin.get(
            id(node), step.scope)) or node
        node = _at_default(analysis, step) or node
        hit = _idiom.Hit(node, step.scope, step.call, labels)
        if key not in hits or _placed_before(node, hits[key], _arms.apart(
            step.scope, _idiom.position(node),
            _idiom.position(hits[key].node)), analysis.flow):
          hits[key], sides[key] = hit, side
          also[key] = [_idiom.Hit(n, step.scope, step.call, step.labels)
                       for n in step.also
                       if not _whole_object(analysis, n, step)]
    # Not a part whose op runs only where the options' defaults never go.
    _drop_run_off(analysis, parts, made)
    found = _run_chosen(analysis, _kept(hits, sides, also, parts))
    sinks = {id(hit.sink) for hit in found}
    every = [step for steps in by_module.values() for step in steps]
    return found + flagged + _skipped_updates(analysis) + _declared_weights(
        analysis) + [hit for hit in _left_out_by_flow(analysis, every)
                     if id(hit.sink) not in sinks]

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    del context
    name = _names.call_name(hit.sink) if hit.sink is not None else "a step"
    chosen = "`var_list`"
    if name in {"append", "extend"}:
      chosen, name = "a layer's `_trainable_weights`", f"self.{name}"
    message = (f"{chosen} filtered by name or scope for `{name}` (line "
               f"{_idiom.line(hit.sink)}{_swapped.step_file(hit.labels)})"
               f"{_helper_choice.mention(hit.labels)}"
               ": whole variables only; exact as it is, not a drift; a "
               "candidate for a spec file")
    run = hit.labels.get("run")
    if run is not None:  # The step's own ops, some of them run.
      message = (f"update ops of `{name}` (line {_idiom.line(hit.sink)}) "
                 f"run (line {_idiom.line(run)}) only where this test keeps "
                 "them: whole variables only; exact as it is, not a drift; "
                 "a candidate for a spec file")
    flagged = _flagged.reason(hit.node)
    reasons = [flagged] if flagged else []
    for keyword in getattr(hit.sink, "keywords", []):
      if keyword.arg == "decay_var_list":
        reasons.append("`decay_var_list` decays variables the filter "
                       "leaves out")
    return message, reasons or [
        "none: the variables left out get no update and no optimizer slots"]


# A finding's function, graph and loss.
_Key = Tuple[int, int, str]
# A filter as text, and the arm of a flag's `if` it is built in.
_Part = Tuple[str, Optional[_arms.Arm]]


def _kept(hits: Dict[_Key, _idiom.Hit],
          sides: Dict[_Key, Optional[_arms.Arm]],
          also: Dict[_Key, List[_idiom.Hit]],
          parts: Dict[Tuple[int, int], Set[_Part]]
          ) -> List[_idiom.Hit]:
  """The findings, with what each adds: none where two filters of one
  function, neither inside the other, may train together (a linear and a
  deep part at their own optimizers, a GAN's two halves whose losses a
  helper returns): between them they train the model."""
  return [each for key, hit in hits.items()
          if _one_part(parts.get(key[:2], set()), sides[key]) or _left_out(
              hit, hits.values(), key[0]) or (
                  _helper_choice.NARROWED in hit.labels)
          for each in [hit, *also.get(key, ())]]


def _one_part(parts: Set[_Part],
              side: Optional[_arms.Arm]) -> bool:
  """Whether the filters that may train beside one built in `side`
  (none in the other arm of its `if`) are one filter."""
  return len({text for text, other in parts
              if not _arms.exclusive(side, other)}) < 2


def _one_loss(one: Step, other: Step) -> bool:
  """Whether two steps of one function minimise one loss, made once
  (not a `loss` each arm of an `if` assigns its own)."""
  if one.scope is not other.scope or one.loss is None or (
      one.loss != other.loss):
    return False
  loss = _loss_node(one.call)
  return not isinstance(loss, ast.Name) or len(
      one.scope.defs.get(loss.id, ())) == 1


def _add_part(step: Step, part: _Part,
              parts: Dict[Tuple[int, int], Set[_Part]],
              made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]]) -> None:
  """The step's filter (by text: the same filter written at the gradient
  and at the apply is one filter; with the arm of a flag's `if` it is
  built in) added to its function's parts, and the step that makes it to
  `made`."""
  place = (id(step.scope), step.section)
  parts.setdefault(place, set()).add(part)
  made.setdefault(place, []).append((step, part))


def _drop_run_off(analysis: Analysis,
                  parts: Dict[Tuple[int, int], Set[_Part]],
                  made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]]
                  ) -> None:
  """Of functions with two parts or more, the parts whose step makes an
  op that runs only where the options' defaults never go (`_run_off`)
  left out: by default they stay fixed."""
  for place, texts in parts.items():
    if len(texts) > 1:
      texts.difference_update([part for step, part in made[place] if (
          _run_off.off_by_default(analysis.project, step.call, step.scope))])


def _run_chosen(analysis: Analysis, found: List[_idiom.Hit]
                ) -> List[_idiom.Hit]:
  """`found` with each step whose update ops a loop chooses to run
  reported at that choice, not at the list the step was built with."""
  chosen = _chosen_ops.chosen_ops(analysis)
  if not chosen:
    return found
  steps = {id(step) for _, _, step, _ in chosen}
  return [hit for hit in found if id(hit.sink) not in steps] + [
      _idiom.Hit(test, scope, step, {"filtered": test, "run": run})
      for test, scope, step, run in chosen]


def _filter_text(node: ast.AST) -> str:
  """A filter as text (the same filter written at the gradient and at
  the apply is one), an element a branch adds by itself also by where it
  is added (`scaled.append(val)` under the `if`, `rest.append(val)` under
  the `else`: two groups)."""
  text = ast.unparse(node)
  return f"{text}@{_idiom.position(node)}" if isinstance(
      node, ast.Name) else text


def _placed_before(node: ast.AST, shown: _idiom.Hit, apart: bool,
                   flow: Flow) -> bool:
  """Whether the filter `node` is shown rather than `shown`'s, of the
  same function and loss: the first of them, but a filter written the
  same way again after the shown one's step (a list rebuilt once what its
  test reads changed: PathNet's second task, the first task's path marked
  fixed; not the same slice written at the gradient and at the apply,
  nor one `apart`, in the other arm of an `if`, which never follows the
  shown one's step: `if with_clip: ... else: ...`; nor the same element
  kept by another test, `_guarded`)."""
  before = _idiom.position(node) < _idiom.position(shown.node)
  step = shown.sink
  if _guarded(flow, node) == _guarded(flow, shown.node) and not before and (
      step is not None) and not apart:
    return _idiom.position(shown.node) < _idiom.position(step) and (
        _end(step) < _idiom.position(node))
  return before


def _guarded(flow: Flow, node: ast.AST) -> str:
  """A filter as written, an element a loop keeps with the test that
  keeps it: `(grad, var)` kept past `if any(n in var.name for n in
  self.exclude_vars): continue` and again past a test of `skip_vars` is
  two filters, not one list rebuilt."""
  home = flow.origin.get(id(node))
  guard = home.guards.get(id(node)) if home is not None else None
  text = ast.unparse(node)
  return text if guard is None else f"{text} if {ast.unparse(guard)}"


def _filter_of(analysis: Analysis, step: Step, steps: List[Step],
               groups: Dict[str, Set[str]], opened: Set[str]
               ) -> Optional[ast.expr]:
  """The filter that leaves variables out of a step's list, or None: a
  list of another loss's half (a GAN's), only measured or summarised, a
  whole model named by its scope (unless a flag chooses it against a
  larger list), or the complement of lists other steps train."""
  phased = _phased(step, steps)
  if "filtered" not in step.labels or _split(step, steps, groups) and (
      not phased) or _only_measured(step) or (
          _only_summarised(step, steps)) or _no_choice(step, analysis) or (
              _flagged.never_run(step.call, step.scope)) or (
                  _measured_by_network(analysis, step)) or (
                      _half_per_call(analysis, step)):
    return None
  flow = analysis.flow
  chosen = _flagged.choice(flow, step.var_list, step.scope)
  node = chosen or _chosen_where(flow, step, _origin(
      flow, step.var_list, step.scope, set()))
  widened = chosen is not None or _flagged.grown(
      step.var_list, step.scope) or _either_arm.against_a_model(
          step.call, step.scope, [(o.call, o.var_list, o.labels) for o in steps
                                  if o.scope is step.scope and o is not step
                                  and o.loss == step.loss])
  module = analysis.module(step.scope)
  if not isinstance(node, ast.expr) or _per_group(step, node) or (
      not phased and not widened and (_names_the_model(
          node, opened) and not _flagged.loads_a_graph(
              module.source.text, module.tree) and not (
                  _restored.restores_a_part(
                      module.source.text, module.tree, step.var_list)) and (
                          not _warm_started.restores_other_scopes(
                              module.source.text, module.tree, node)) and (
                          not _built_outside.built_outside(
                              analysis, _kept_roots(node), step.scope)) and (
                          not _run_outside.run_outside(
                              analysis, _kept_roots(node), step.scope)) and (
                                  not _other_off(analysis, step, steps)) or (
                          _built_scope(flow, node, step.scope, opened)))) or (
                              _whole_object(analysis, node, step)) or (
                                  _passed_scope.opened_by_caller(
                                      flow, node, step.scope, _opened_here)):
    return None
  node = _first_filter(flow, node, step.scope, opened)
  # The rest of a list that drops names by itself (`rest = [v for v in
  # no_bn if v not in new and v not in fc]`) is not a complement.
  tested = (node,) if _drops_a_name(node) else (
      node, step.labels.get("filtered"))
  if not phased and _shares_lists(step, steps, node) or any(
      _complement_trained(n, steps, flow.origin.get(id(n), step.scope))
      for n in tested if n is not None) or _complemented.passed_with_rest(
          node, flow.origin.get(id(node), step.scope)) or (
              _every_layer.keeps_all(analysis.project, node, _tests(
                  flow, step.labels.get("filtered"), step.scope))):
    return None
  return node


def _tests(flow: Flow, chosen: Optional[ast.AST], scope: _scopes.Scope
           ) -> List[ast.expr]:
  """The test a loop keeps `chosen` (a step's filtered label) under, if
  any (`if name in v.name: kept.append(v)`)."""
  home = flow.origin.get(id(chosen), scope) if chosen is not None else None
  guard = home.guards.get(id(chosen)) if home is not None else None
  return [guard] if guard is not None else []


def _other_off(analysis: Analysis, step: Step, steps: List[Step]) -> bool:
  """Whether another step of the function, over another list, makes an
  op that runs only off the options' defaults (`_run_off`): by default
  what it would train stays fixed, so the step's scope is no whole model
  trained beside another."""
  return any(other.scope is step.scope and other.var_list is not None and (
      step.var_list is None or ast.unparse(other.var_list) != ast.unparse(
          step.var_list)) and _run_off.off_by_default(
              analysis.project, other.call, other.scope)
             for other in steps if other is not step)


def _kept_roots(node: ast.AST) -> Set[str]:
  """The root scopes a filter keeps by their literal names."""
  return {n.value.strip("/").split("/")[0] for n in _scopes.walk(node)
          if isinstance(n, ast.Constant) and isinstance(n.value, str)
          and n.value}


def _models_by_flag(analysis: Analysis, step: Step, steps: List[Step],
                    groups: Dict[str, Set[str]]) -> List[_idiom.Hit]:
  """The models of a dict a flag leaves out by their names
  (`_flagged.models_by_flag`), a list handed in and trained beside the
  same loss's step over everything (`_handed_part`), or the variables a
  helper adds only under a test of a flag it is given (`_flag_param`),
  where the step trains no other loss's."""
  value = step.labels.get("var")
  if "filtered" in step.labels or not _trains(step) or _split(
      step, steps, groups):
    return []
  if isinstance(step.var_list, ast.Name) and _handed_part.handed(
      step.call, step.scope, step.var_list, step.labels, step.loss,
      step.section, [(o.call, o.scope, o.var_list, o.loss, o.section)
                     for o in steps]):
    return [_idiom.Hit(step.var_list, step.scope, step.call, step.labels)]
  if not isinstance(value, ast.expr):
    return []
  if _flagged.models_by_flag(analysis.flow, value):
    return [_idiom.Hit(value, step.scope, step.call, step.labels)]
  added = _flag_param.flagged(analysis.flow, value, step.scope)
  return [] if added is None else [_idiom.Hit(
      value, step.scope, step.call, {**step.labels, "filtered": added})]


def _at_default(analysis: Analysis, step: Step) -> Optional[ast.expr]:
  """The default of the flag that chooses the step's filter, when one is
  written (slim's `--trainable_scopes` defaulting to the new head's
  scopes): where a reader looks for the choice."""
  filtered = step.labels.get("filtered")
  found = _flagged.flag_default(analysis.project, filtered, (
      analysis.flow.origin.get(id(filtered), step.scope)))
  if found is None:
    return None
  analysis.flow.origin.setdefault(id(found[0]), found[1])
  return found[0]


def _whole_object(analysis: Analysis, node: ast.AST, step: Step) -> bool:
  """Whether the filter keeps every scope its class builds its own
  variables under (`_own_scopes`; unless it builds a model outside them,
  `_built_outside`), or the scope every caller builds the
  model it is given under, or is a helper called without the scopes it
  would filter by (`_model_scope`)."""
  home = analysis.flow.origin.get(id(node), step.scope)
  return _own_scopes.keeps_all(analysis.flow, node, home) and not (
      _built_outside.built_outside(analysis, _kept_roots(node), home)) and (
          not _run_outside.run_outside(analysis, _kept_roots(node), home)) or (
      _model_scope.trains_model_scope(analysis.flow, node, home)) or (
          _model_scope.defaults_to_all(analysis.flow, node, home)) or (
              _self_scope.keeps_own_scope(analysis.project, analysis.flow, node,
                                          home)) or (
                  _unscoped.never_scoped(analysis.flow, node, home))


def _into_method(analysis: Analysis, node: ast.expr, scope: _scopes.Scope
                 ) -> ast.expr:
  """Where a method of the step's object that its list is read from
  (`trainable_vars = self._freeze_vars()`) filters what it returns, else
  `node` (a helper's call, as slim's `_get_variables_to_train()`, stays
  the finding's place)."""
  info = _class_of(scope)
  if not isinstance(node, ast.Call) or not isinstance(
      node.func, ast.Attribute) or _names.dotted(
          node.func.value) != "self" or info is None:
    return node
  callee = analysis.flow.callee(node, scope)
  method = analysis.project.method(info, node.func.attr)
  if method is None or method.node is not callee:
    return node
  found = _returned_filter(analysis.flow, method)
  return found if found is not None else node


def _left_out_by_flow(analysis: Analysis, steps: List[Step]
                      ) -> List[_idiom.Hit]:
  """The steps whose list no filter chooses, but what runs around them
  says some variables are left out."""
  return (_groups_left_out(analysis, steps) + _upstream_left_out(
      analysis, steps) + _parts_left_out(analysis, steps) +
          _composed_left_out(analysis, steps) + _staged_left_out(
              analysis, steps) + _stacked_left_out(analysis, steps) +
          _between_left_out(analysis, steps) +
          _swapped_left_out(analysis, steps) +
          _self_parts_left_out(analysis, steps))


def _self_parts_left_out(analysis: Analysis, steps: List[Step]
                         ) -> List[_idiom.Hit]:
  """A method's step training one part of its class (`self.head`) run on
  another part's output that no step of the class trains
  (`_part_of_self`): the part below is left out."""
  hits: Dict[Tuple[int, str], _idiom.Hit] = {}
  for step in steps:
    info = _class_of(step.scope)
    part = _part_of_self.part_trained(step.scope, step.var_list)
    if info is None or part is None:
      continue
    lists = [value for other in steps if other.call is not step.call and (
        _class_of(other.scope) is info)
             for value in (_alternatives(analysis, other) or [
                 other.var_list] if other.var_list is not None else [
                     ast.Name("self")])]
    trained = _part_of_self.trained_parts(lists) - {part[0]}
    if _part_of_self.left_below(analysis.project, info, part[0], trained,
                                analysis.module(step.scope).source.text):
      hits.setdefault((id(info), part[0]), _idiom.Hit(
          part[1], step.scope, step.call, {"filtered": part[1]}))
  return list(hits.values())


def _between_left_out(analysis: Analysis, steps: List[Step]
                      ) -> List[_idiom.Hit]:
  """A step whose loss runs a part that no step of its module trains,
  between its own part and another step's (`_between`): that part is
  left out."""
  by_module: Dict[int, List[_between.Training]] = {}
  for step in steps:
    by_module.setdefault(id(analysis.module(step.scope)), []).append(
        _between.Training(step.call, step.scope, step.var_list if isinstance(
            step.var_list, ast.expr) else None, _loss_node(step.call)))
  return [_idiom.Hit(chosen, training.scope, training.call,
                     {"filtered": chosen})
          for group in by_module.values() if len(group) > 1
          for training, chosen in _between.left_between(group)]


def _swapped_left_out(analysis: Analysis, steps: List[Step]
                      ) -> List[_idiom.Hit]:
  """A step training `self.X` whose class, or a subclass, swaps `self.X`
  for a part's list, the full list kept aside (`_swapped`): the rest of
  the model is left out."""
  found: Dict[int, _idiom.Hit] = {}
  for step in steps:
    if isinstance(step.var_list, ast.Attribute):
      for scope, node in _swapped.swaps(analysis.project, step.scope,
                                        step.var_list):
        labels: Labels = {"filtered": node.value}
        path = analysis.module(step.scope).source.path
        if analysis.module(scope).source.path != path:
          labels[_swapped.STEP_FILE] = ast.Constant(path)
        found.setdefault(id(node), _idiom.Hit(
            node.value, scope, step.call, labels))
  return list(found.values())


def _stacked_left_out(analysis: Analysis, steps: List[Step]
                      ) -> List[_idiom.Hit]:
  """A step training a part built on another part's output that no step
  beside it trains (`_stacked`): the part below is left out."""
  by_scope: Dict[int, List[Tuple[ast.Call, Optional[ast.AST]]]] = {}
  for step in steps:
    by_scope.setdefault(id(step.scope), []).append((step.call, step.var_list))
  return [_idiom.Hit(step.var_list, step.scope, step.call,
                     {"filtered": step.var_list})
          for step in steps if isinstance(step.var_list, ast.Attribute) and (
              _stacked.below(step.scope, step.call, step.var_list,
                             by_scope[id(step.scope)],
                             analysis.module(step.scope).source.text))]


def _staged_left_out(analysis: Analysis, steps: List[Step]
                     ) -> List[_idiom.Hit]:
  """A step of one stage whose run trains no step of the earlier stage
  that feeds it (`_stages`): the earlier stage is left out."""
  trainings = [_stages.Training(step.call, step.scope, step.var_list, loss)
               for step in steps if isinstance(step.var_list, ast.expr)
               for loss in [_loss_node(step.call)] if loss is not None]
  return [_idiom.Hit(chosen, training.scope, training.call,
                     {"filtered": chosen})
          for training, chosen in _stages.left_behind(analysis.flow,
                                                      trainings)]


def _loss_node(call: ast.Call) -> Optional[ast.expr]:
  """What a step minimises, as the call passes it (not an apply's)."""
  if _names.call_name(call) == "apply_gradients":
    return None
  return call.args[0] if call.args else next(
      (k.value for k in call.keywords if k.arg in _LOSS_KEYWORDS), None)


def _groups_left_out(analysis: Analysis, steps: List[Step]
                     ) -> List[_idiom.Hit]:
  """A step training some of the groups of variables its function builds
  by the project's constructors (`ss_weights + fc_weights` of `weights =
  self.construct_weights()`, `ss_weights = ...`, `fc_weights = ...`)
  while the function reads another group, built by a constructor of its
  own, that no step of the module trains and nothing writes: that group
  (a pretrained backbone) is left out. A bare gradient is not a step
  here: a meta-learner's inner loop takes one for its fast weights."""
  hits: List[_idiom.Hit] = []
  # A function, or a module by `self.` attributes -> the names trained.
  trained: Dict[int, Set[str]] = {}
  for step in steps:
    if step.var_list is not None:
      trained.setdefault(id(_function_of(step.scope).node), set()).update(
          _identifiers(step.var_list))
      trained.setdefault(id(analysis.module(step.scope)), set()).update(
          n.attr for n in _scopes.walk(step.var_list) if isinstance(
              n, ast.Attribute) and isinstance(n.value, ast.Name) and (
                  n.value.id == "self"))
  seen: Set[int] = set()
  makers: Dict[str, bool] = {}
  built: Dict[int, Dict[str, str]] = {}  # A function -> its groups.
  for step in steps:
    home = _function_of(step.scope)
    if step.var_list is None or id(home.node) in seen or (
        _names.call_name(step.call) in {"gradients", "gradient"}):
      continue  # An inner loop's gradient moves fast weights, no variable.
    if id(home.node) not in built:
      built[id(home.node)] = _constructed(home, analysis, makers)
    groups = built[id(home.node)]
    mine = set(_identifiers(step.var_list))
    chosen = {maker for name, maker in groups.items() if name in mine}
    if not chosen:
      continue
    module = analysis.module(step.scope)
    left = [name for name, maker in groups.items()
            if maker not in chosen and name not in trained[id(home.node)]
            and name not in trained.get(id(module), ())
            and _read_besides(name, home) and not _written(
                name, module, analysis)]
    if left and isinstance(step.var_list, ast.expr):
      seen.add(id(home.node))
      hits.append(_idiom.Hit(step.var_list, step.scope, step.call,
                             {"filtered": step.var_list}))
  return hits


def _upstream_left_out(analysis: Analysis, steps: List[Step]
                       ) -> List[_idiom.Hit]:
  """A step training one sub-model's variables (`self.task_.
  trainable_variables`) whose input is the output of another sub-model
  its function runs (`h = self.encoder_(x)`, `self.task_(h)`), that no
  step of the function trains: the upstream part (a pretrained encoder)
  is left out; a teacher or a target network, whose output feeds only
  the loss, is not. One finding per sub-model and function, at its apply
  rather than its gradient."""
  hits: Dict[Tuple[int, str], _idiom.Hit] = {}
  for step in steps:
    chosen = step.var_list
    if isinstance(chosen, ast.Name):
      defs = step.scope.defs.get(chosen.id, [])
      chosen = defs[0].value if len(defs) == 1 else None
    if not (isinstance(chosen, ast.Attribute) and chosen.attr in {
        "trainable_variables", "trainable_weights"}) or not isinstance(
            step.var_list, ast.expr):
      continue
    owner = _names.dotted(chosen.value) or ""
    if not owner.startswith("self.") or owner.count(".") != 1:
      continue
    trained = {_names.dotted(n) for other in steps
               if other.scope is step.scope and other.var_list is not None
               for value in _var_list_values(other)
               for n in _scopes.walk(value)}
    module = analysis.module(step.scope)
    text = module.source.text
    mine = [other for other in steps if analysis.module(other.scope) is module]
    for upstream in _feeding(step.scope, owner):
      if upstream not in trained and not _own_step(
          mine, upstream, owner) and not re.search(
          re.escape(upstream) + r"\.(set_weights\b|variables\b|"
          r"trainable\s*=\s*False)", text):  # Synced, or frozen by its flag.
        key = (id(step.scope), owner)
        if key not in hits or _names.call_name(step.call) not in {
            "gradient", "gradients"}:
          hits[key] = _idiom.Hit(step.var_list, step.scope, step.call,
                                 {"filtered": step.var_list})
        break
  return list(hits.values())


# How a part of a model gives its weights.
_WEIGHTS_OF = {"get_weights", "trainable_variables", "trainable_weights",
               "variables", "weights", "get_variables"}


def _parts_left_out(analysis: Analysis, steps: List[Step]
                    ) -> List[_idiom.Hit]:
  """A step training the weights of some parts of an object, summed
  (`self.encoder.get_weights() + self.decoder.get_weights()`), while a
  part built beside them (`self.inter = Inter(...)`) runs between them
  (its output feeds a trained part) and no other step trains it: that
  part is left out. A discriminator has its own step; a teacher's
  output feeds only the loss."""
  hits: List[_idiom.Hit] = []
  for step in steps:
    info = _class_of(step.scope)
    if info is None or not isinstance(step.var_list, ast.expr):
      continue
    others = {n.attr for other in steps if other.call is not step.call and (
        other.var_list is not None and _class_of(other.scope) is info)
              for value in _alternatives(analysis, other)
              for n in _scopes.walk(value) if isinstance(n, ast.Attribute)}
    for value in _alternatives(analysis, step):
      parts = _summed_parts(value)
      if len(parts) < 2:
        continue
      text = analysis.module(step.scope).source.text
      left = [name for name in _built_beside(analysis, info, parts)
              if name not in others and not _SYNCED.search(name) and not (
                  re.search(re.escape(name) + r"\.(set_weights|variables|"
                            r"assign)\b", text)) and _feeds(info, name, parts)]
      if left and isinstance(value, ast.expr):
        hits.append(_idiom.Hit(value, step.scope, step.call,
                               {"filtered": value}))
        break
  return hits


# A copy of a network kept in step by copying, not by training.
_SYNCED = re.compile(r"target|ema|average|avg|old|teacher", re.I)


def _class_of(scope: _scopes.Scope) -> Optional[_scopes.ClassInfo]:
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  return place.cls if place is not None else None


def _alternatives(analysis: Analysis, step: Step) -> List[ast.AST]:
  """The values a step's list may hold: a `self.` attribute's or a local
  name's assignments, or the list as written."""
  chosen = step.var_list
  if chosen is None:
    return []
  name = _names.dotted(chosen) or ""
  info = _class_of(step.scope)
  if name.startswith("self.") and name.count(".") == 1 and info:
    return [v for v, _ in analysis.project.attribute(info, name)]
  if isinstance(chosen, ast.Name) and chosen.id in step.scope.defs:
    return [d.value for d in step.scope.defs[chosen.id]]
  return [chosen]


def _summed_parts(value: ast.AST) -> List[str]:
  """`a`, `b` of `self.a.get_weights() + self.b.trainable_variables`
  (every term such a part's weights), else nothing."""
  parts: List[str] = []
  terms: List[ast.AST] = []
  todo = [value]
  while todo:  # The terms of `a + b + c`, `[*a, *b]`, in order.
    each = todo.pop()
    if isinstance(each, ast.BinOp) and isinstance(each.op, ast.Add):
      todo += [each.right, each.left]
    elif isinstance(each, (ast.List, ast.Tuple)) and each.elts and all(
        isinstance(e, ast.Starred) for e in each.elts):
      todo += [getattr(e, "value") for e in reversed(each.elts)]
    else:
      terms.append(each)
  for node in terms:
    if isinstance(node, ast.Call) and not node.args:
      node = node.func
    owner = _names.dotted(node.value) if isinstance(
        node, ast.Attribute) and node.attr in _WEIGHTS_OF else None
    if not owner or not owner.startswith("self.") or owner.count(".") != 1:
      return []
    parts.append(owner[5:])
  return parts


def _built_beside(analysis: Analysis, info: _scopes.ClassInfo,
                  parts: List[str]) -> List[str]:
  """The other `self.` attributes that a method building the parts
  assigns from a call (`self.inter = Inter(name='inter')`)."""
  homes = {id(home): home for part in parts for _, home in (
      analysis.project.attribute(info, f"self.{part}"))}
  found: List[str] = []
  for home in homes.values():
    for node in home.nodes:
      if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
          and len(node.targets) == 1:
        name = _names.dotted(node.targets[0]) or ""
        if name.startswith("self.") and name.count(".") == 1 and (
            name[5:] not in parts) and name[5:] not in found:
          found.append(name[5:])
  return found


def _feeds(info: _scopes.ClassInfo, name: str, parts: List[str]) -> bool:
  """Whether a method of the class passes the output of `self.name(...)`
  (through local names) into a call of one of the parts."""
  wanted = {f"self.{p}" for p in parts}
  for method in info.methods.values():
    held: Set[str] = set()
    for _ in range(2):  # Names reassigned later in a loop's body.
      for node in _deep_nodes(method):
        if isinstance(node, ast.Assign) and any(
            isinstance(n, ast.Call) and _names.dotted(n.func) == (
                f"self.{name}") or isinstance(n, ast.Name) and n.id in held
            for n in _scopes.walk(node.value)):
          held.update(n.id for t in node.targets for n in _scopes.walk(t)
                      if isinstance(n, ast.Name) and isinstance(
                          n.ctx, ast.Store))
    for node in _deep_nodes(method):
      if isinstance(node, ast.Call) and _names.dotted(node.func) in wanted \
          and any(isinstance(n, ast.Name) and n.id in held or isinstance(
              n, ast.Call) and _names.dotted(n.func) == f"self.{name}"
                  for a in [*node.args, *node.keywords]
                  for n in _scopes.walk(a)):
        return True
  return False


def _composed_left_out(analysis: Analysis, steps: List[Step]
                       ) -> List[_idiom.Hit]:
  """A step training one model's variables (`tln.trainable_variables`)
  whose function runs that model on another's output (`tln(rln(x))`,
  there or in a helper it passes both to) that no step of the function
  trains: the other (a meta-learned representation at meta-test) is
  left out. A GAN's generator, under its discriminator, has its own
  step."""
  hits: Dict[Tuple[int, str], _idiom.Hit] = {}
  by_home: Dict[int, List[Step]] = {}
  for step in steps:
    by_home.setdefault(id(_function_of(step.scope).node), []).append(step)
  for step in steps:
    owner = _model_trained(step)
    if owner is None or not isinstance(step.var_list, ast.expr) or (
        _names.call_name(step.call) in {"gradient", "gradients"}) or (
            owner in step.scope.loops):
      continue  # A bare gradient (a meta-learner's inner update), a loop
      # over the groups (each trained).
    home = _function_of(step.scope)
    trained = {n.id for other in by_home[id(home.node)]
               if other.var_list is not None
               for value in _var_list_values(other)
               for n in _scopes.walk(value) if isinstance(n, ast.Name)}
    text = analysis.module(step.scope).source.text
    for upstream in _run_under(analysis, home, owner):
      if upstream not in home.params and not re.search(
          re.escape(upstream) + r"\.(trainable_variables|trainable_weights|"
          r"variables|weights|get_weights|layers)\b", text) or (
              _NOT_A_MODEL.search(upstream)):
        continue  # A function making the input, not a model.
      if upstream not in trained and not _own_step(
          steps, upstream, owner) and not re.search(
          re.escape(upstream) + r"\.(set_weights\b|variables\b|"
          r"trainable\s*=\s*False)", text):
        hits.setdefault((id(home.node), owner), _idiom.Hit(
            step.var_list, step.scope, step.call,
            {"filtered": step.var_list}))
        break
  return list(hits.values())


def _own_step(steps: List[Step], upstream: str, owner: str) -> bool:
  """Whether a step (anywhere in `steps`) trains `upstream` without
  `owner`: the upstream model has its own step (a GAN's generator, the
  encoder a critic's update trains), not one shared with the owner (a
  meta-learner's outer step training the representation and the head,
  or a copy of the head, `tln_initial`). A bare gradient is not a step:
  the outer step takes one per part, then applies them together."""
  # A function -> the names its applied steps train (a fine-tuning phase
  # training the owner and the upstream at two optimizers is not it).
  names: Dict[int, Set[str]] = {}
  for step in steps:
    if step.var_list is None or _names.call_name(step.call) in {
        "gradient", "gradients"}:
      continue
    names.setdefault(id(_function_of(step.scope).node), set()).update(
        _names.dotted(n) or "" for value in _var_list_values(step)
        for n in _scopes.walk(value))
  return any(upstream in held and not any(
      name == owner or name.startswith(owner + "_") for name in held)
             for held in names.values())


# Callables passed in that make a model's input (`attack_fn(x, y)`).
_NOT_A_MODEL = re.compile(r"(fn|func|function)$|attack|augment|preprocess|"
                          r"transform|noise", re.I)


def _model_trained(step: Step) -> Optional[str]:
  """`m` when a step trains `m.trainable_variables` (a local model)."""
  chosen = step.var_list
  if isinstance(chosen, ast.Name):
    defs = step.scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else None
  if isinstance(chosen, ast.Attribute) and chosen.attr in _OWN_VARIABLES \
      and isinstance(chosen.value, ast.Name) and chosen.value.id != "self":
    return chosen.value.id
  return None


def _run_under(analysis: Analysis, home: _scopes.Scope, owner: str
               ) -> List[str]:
  """The models whose output `home` passes into `owner` (`owner(b(x))`,
  `h = b(x); owner(h)`), there or in a helper of the project it passes
  both to (`compute_loss(x, y, tln, rln)` running `tln(rln(x))`)."""
  found: List[str] = []
  for scope in home.all():
    for node in scope.nodes:
      if not isinstance(node, ast.Call):
        continue
      if isinstance(node.func, ast.Name) and node.func.id == owner:
        found += _inputs_of(node, scope)
        continue
      names = [a.id if isinstance(a, ast.Name) else "" for a in node.args]
      if owner not in names or len(names) < 2:
        continue
      callee = analysis.flow.callee(node, scope)
      place = analysis.flow.functions.get(id(callee)) if callee else None
      inner = place[1].scope_of(callee) if place and callee else None
      if inner is None:
        continue
      params = dict(zip(inner.params, names))
      mine = next((p for p, n in params.items() if n == owner), "")
      for each in inner.all():
        for call in each.nodes:
          if isinstance(call, ast.Call) and isinstance(
              call.func, ast.Name) and call.func.id == mine:
            found += [params[b] for b in _inputs_of(call, each)
                      if params.get(b)]
  return [name for name in found if name != owner]


def _inputs_of(call: ast.Call, scope: _scopes.Scope) -> List[str]:
  """The callables whose output `call` takes: `b` of `f(b(x))` and of
  `f(h)` after `h = b(x)`."""
  found: List[str] = []
  for arg in call.args:
    value: Optional[ast.AST] = arg
    if isinstance(arg, ast.Name):
      defs = scope.defs.get(arg.id, [])
      value = defs[-1].value if defs else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
      found.append(value.func.id)
  return found


def _var_list_values(step: Step) -> List[ast.AST]:
  """A step's list, and the values of the local name holding it."""
  chosen = step.var_list
  assert chosen is not None
  if isinstance(chosen, ast.Name):
    return [chosen] + [d.value for d in step.scope.defs.get(chosen.id, [])]
  return [chosen]


def _feeding(scope: _scopes.Scope, owner: str) -> List[str]:
  """The `self.` sub-models whose output, by a local name, the function
  passes into `owner` (`h = self.encoder_(x, training=False)`, then
  `self.task_(h)`)."""
  outputs: Dict[str, str] = {}
  assigns = sorted((n for n in _deep_nodes(scope) if isinstance(
      n, ast.Assign) and len(n.targets) == 1 and isinstance(
          n.targets[0], ast.Name)), key=_idiom.position)
  for assign in assigns:
    name = getattr(assign.targets[0], "id")
    outputs.pop(name, None)  # Rebound (`o = tf.stop_gradient(o)`).
    value = assign.value
    callee = _names.dotted(value.func) or "" if isinstance(
        value, ast.Call) else ""
    if callee.startswith("self.") and callee.count(".") == 1 and (
        callee != owner) and any(k.arg == "training" for k in getattr(
            value, "keywords", ())):
      outputs[name] = callee  # A Keras model run, not a helper.
  found: List[str] = []
  for node in _deep_nodes(scope):
    if isinstance(node, ast.Call) and _names.dotted(node.func) == owner:
      found.extend(outputs[a.id] for a in node.args
                   if isinstance(a, ast.Name) and a.id in outputs)
      found.extend(_run_inline(a, owner) for a in node.args
                   if _run_inline(a, owner))
  return found


def _run_inline(arg: ast.AST, owner: str) -> str:
  """`self.backbone` of `self.head(self.backbone(x, training=False))`:
  a Keras sub-model run inline into the owner."""
  callee = _names.dotted(arg.func) or "" if isinstance(
      arg, ast.Call) else ""
  if callee.startswith("self.") and callee.count(".") == 1 and (
      callee != owner) and any(k.arg == "training" for k in getattr(
          arg, "keywords", ())):
    return callee
  return ""


def _function_of(scope: _scopes.Scope) -> _scopes.Scope:
  """The outermost function `scope` is nested in (or itself), below its
  method, any class or the module."""
  while scope.cls is None and scope.parent is not None and isinstance(
      scope.parent.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    scope = scope.parent
  return scope


def _constructed(home: _scopes.Scope, analysis: Analysis,
                 makers: Dict[str, bool]) -> Dict[str, str]:
  """The names `home` binds, each once, to the call of a function of the
  project that creates trainable variables: name -> that function."""
  found: Dict[str, str] = {}
  for name, defs in home.defs.items():
    if len(defs) != 1 or not isinstance(defs[0].value, ast.Call) or (
        defs[0].part is not None):
      continue
    maker = _names.call_name(defs[0].value)
    if maker not in makers:
      makers[maker] = _creates(maker, analysis, 2)
    if makers[maker]:
      found[name] = maker
  return found


def _creates(name: str, analysis: Analysis, depth: int) -> bool:
  """Whether a function of the project named `name` creates trainable
  variables, itself or by a function it calls."""
  if not name or name in _names.VARIABLES or depth <= 0:
    return False
  for function in analysis.project.functions_named((name,), unscanned=True):
    calls = [n for n in _deep_nodes(function) if isinstance(n, ast.Call)]
    if any(_trainable_variable(c) for c in calls) or any(
        _creates(_names.call_name(c), analysis, depth - 1) for c in calls
        if _names.call_name(c) != name and isinstance(c.func, ast.Attribute)
        and isinstance(c.func.value, ast.Name) and c.func.value.id == "self"):
      return True
  return False


def _deep_nodes(scope: _scopes.Scope) -> Iterator[ast.AST]:
  """The nodes of a function and of the functions nested in it (each
  scope's, read once and kept; no constants)."""
  for each in scope.all():
    yield from each.nodes


def _read_besides(name: str, home: _scopes.Scope) -> bool:
  """Whether `home` (or a function nested in it) reads `name`."""
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Load) for n in _deep_nodes(home))


def _written(name: str, module: object, analysis: Analysis) -> bool:
  """Whether a write of the module (`tf.assign(target[k], w[k])`) names
  `name` (a target network synced from the trained one)."""
  for scope, call in analysis.calls_named(_writes.WRITE_CALLS):
    if analysis.module(scope) is module and any(
        isinstance(n, ast.Name) and n.id == name for n in _scopes.walk(call)):
      return True
  return False


def _skipped_updates(analysis: Analysis) -> List[_idiom.Hit]:
  """A hand-written update (`v.assign_sub(lr * g)`) in a loop over the
  variables that a test of their names skips (`if 'emb' in v.name:
  continue`) or guards: whole variables left out of the step."""
  hits: List[_idiom.Hit] = []
  flow = analysis.flow
  for scope, call in analysis.calls_named(("assign_sub", "assign_add")):
    if analysis.module(scope).is_test or not call.args or (
        "grad" not in flow.labels(call.args[0], scope)):
      continue
    order = analysis.order(scope)
    test = _skipping_test(call, order, flow, scope)
    if test is not None:
      hits.append(_idiom.Hit(test, scope, call, {"filtered": test}))
  return hits


# What a Keras layer declares it trains, by the attribute its base reads.
_DECLARED = {"_trainable_weights"}


def _declared_weights(analysis: Analysis) -> List[_idiom.Hit]:
  """A Keras layer declaring as trainable only some of the variables it
  holds (`self._trainable_weights.append(var)` for the variables a name
  test keeps of a hub module's): the others get no update."""
  hits: List[_idiom.Hit] = []
  modules = analysis.project.modules_with(_DECLARED)
  if not modules:
    return hits
  flow = analysis.flow
  for scope, call in analysis.project.calls_named(("append", "extend"),
                                                 modules):
    receiver = call.func.value if isinstance(call.func, ast.Attribute) \
        else None
    if receiver is None or len(call.args) != 1 or analysis.module(
        scope).is_test or (_names.dotted(receiver) or "").split(".")[-1] \
        not in _DECLARED:
      continue
    node = _origin(flow, call.args[0], scope, set())
    if "filtered" in flow.chosen(call.args[0], scope, flow.labels(
        call.args[0], scope)) and isinstance(node, ast.expr):
      hits.append(_idiom.Hit(node, scope, call, {"filtered": node}))
  return hits


def _skipping_test(call: ast.Call, order: object, flow: Flow,
                   scope: _scopes.Scope) -> Optional[ast.expr]:
  """The test of names that skips or guards `call` in its loop."""
  parent = getattr(order, "parent")
  child: ast.AST = call
  current = parent(call)
  while current is not None and current is not scope.node:
    if isinstance(current, ast.If) and not current.orelse and any(
        child is s for s in current.body) and _names.filters_by_name(
            current.test, flow, scope):
      return current.test
    if isinstance(current, (ast.For, ast.AsyncFor)):
      for statement in current.body:
        if statement is child:
          break
        if isinstance(statement, ast.If) and len(statement.body) == 1 and (
            isinstance(statement.body[0], ast.Continue)) and (
                _names.filters_by_name(statement.test, flow, scope)):
          return statement.test
      return None
    child, current = current, parent(current)
  return None


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
  if name == "create_train_op" and len(call.args) >= 6:
    return call.args[5]
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
  loss = call.args[0] if call.args else next(
      (k.value for k in call.keywords if k.arg in _LOSS_KEYWORDS), None)
  return _loss_key(loss, scope)


def _measured_by_network(analysis: Analysis, step: Step) -> bool:
  """Whether the step's loss is measured by a network it does not train
  (`_loss_network`: a perceptual loss's classifier, a teacher)."""
  found = _gradient_call(analysis, step)
  if found is None:
    return False
  call, scope = found
  loss = call.args[0] if call.args else next(
      (k.value for k in call.keywords if k.arg in _LOSS_KEYWORDS), None)
  return loss is not None and _loss_network.runs_one(scope, loss, STEPS)


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


def _half_per_call(analysis: Analysis, step: Step) -> bool:
  """Whether the step's function is a helper called once per half of a
  model, each call naming its half and its loss (`_halves`)."""
  found = _gradient_call(analysis, step)
  if found is None:
    return False
  call, scope = found
  chosen = step.labels.get("filtered")
  return isinstance(chosen, ast.AST) and _halves.one_per_call(
      analysis, scope, _loss_node(call), chosen)


def _loss_key(loss: Optional[ast.AST], scope: _scopes.Scope
              ) -> Optional[str]:
  """A loss as text; a local name also by its function (two functions'
  `loss` are two losses)."""
  if loss is None:
    return None
  text = ast.unparse(loss)
  if isinstance(loss, ast.Name) and (loss.id in scope.defs or
                                     loss.id in scope.params):
    return f"{id(scope)}:{text}"
  return text


def _steps(analysis: Analysis) -> List[Step]:
  """Every step outside the project's tests, with what it trains; a
  function of the project that only passes its parameters on to a step
  (`flatgrad(loss, var_list)`) is a step where it is called."""
  flow = analysis.flow
  wrappers: Dict[int, Tuple[int, int]] = {}  # function -> (loss, vars).
  names: Set[str] = set()
  by_name: Dict[str, List[ast.AST]] = {}
  created: Dict[int, Set[str]] = {}  # A function -> its parameters.
  found: List[Step] = []
  seen: Set[int] = set()
  for scope, call in analysis.calls_named(STEPS):
    if analysis.module(scope).is_test:
      continue
    seen.add(id(call))
    chosen = var_list_of(call)
    given = _read_of_parameter(chosen, scope)
    owner = _owner(given, scope)
    passed = _passed_on(call, given, owner) if owner else None
    if owner is not None and passed is not None and not _refiltered(
        given, owner, flow) and not _kept_lists.filled_in(
            given, owner, flow):
      wrappers[id(owner.node)] = passed
      by_name.setdefault(owner.name, []).append(owner.node)
      names.add(owner.name)
      continue
    labels = flow.sink_labels(chosen, scope, "filtered") if chosen else {}
    if chosen is not None and "filtered" not in labels and _hand_made(
        analysis, chosen, scope, call, created):
      labels = {**labels, "filtered": chosen}
    entries = _some_entries(chosen, scope, analysis) if chosen is not None \
        and "filtered" not in labels else None
    if entries is not None:
      flow.origin.setdefault(id(entries), scope)
      labels = {**labels, "filtered": entries}
    returned = _returned_filters(analysis, chosen, scope, labels)
    if returned:
      labels = {**labels, "filtered": returned[0]}
    found.append(Step(call, scope, chosen, _loss_of(call, flow, scope),
                      labels, tuple(returned[1:]),
                      section=_graphs.section(scope, call)))
  # A wrapper's other steps train what its callers pass: their filter is
  # found where the wrapper is called.
  found = [step for step in found if not _inside(step.scope, wrappers)]
  callers = analysis.project.all_modules_with(names) if names else []
  for scope, call in analysis.project.calls_named(names, callers) if (
      names) else ():
    if analysis.module(scope).is_test or id(call) in seen:
      continue
    callee = flow.callee(call, scope) or _by_keyword(
        call, by_name.get(_names.call_name(call), []), wrappers)
    if callee is not None and id(callee) in wrappers:
      found.append(_wrapped(call, scope, callee, wrappers[id(callee)],
                            analysis))
  return found


def _hand_made(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope,
               call: ast.Call, created: Dict[int, Set[str]]) -> bool:
  """Whether a list no filter chooses is written by hand and leaves
  variables out: one part of a model run whole, some of the variables a
  function creates, a list run beside the others', one trained beside the
  whole loss, some items of a container picked by index."""
  return _part_of_called(chosen, scope, call) or _some_created(
      chosen, scope, analysis.flow, created) or _run_beside(
          chosen, scope, call) or _listed.beside_whole(
              chosen, scope, call, lambda n: _names.call_name(n) in STEPS,
              var_list_of) or _picked.left_out(
                  chosen, scope, call, analysis,
                  lambda: _module_steps(analysis, scope)) or (
                      _scheduled.part_chosen_apart(
                          chosen, scope, call,
                          lambda n: _names.call_name(n) in STEPS, var_list_of))


def _module_steps(analysis: Analysis, scope: _scopes.Scope
                  ) -> List[Tuple[ast.Call, Optional[ast.AST]]]:
  """The steps of `scope`'s module, each with its list."""
  module = analysis.module(scope)
  return [(call, var_list_of(call))
          for place, call in analysis.calls_named(STEPS)
          if analysis.module(place) is module]


# A container of models or layers, called as one model.
_CONTAINERS = {"Sequential", "Model", "ModuleList"}
_OWN_VARIABLES = {"trainable_variables", "trainable_weights", "variables",
                  "weights"}


def _part_of_called(chosen: ast.AST, scope: _scopes.Scope,
                    step: ast.Call) -> bool:
  """Whether a step trains the variables of one part of a model that its
  function runs whole before it (`head2.trainable_variables` where `path2
  = Sequential([trunk, head2])`, built before, is called): the other parts
  are left out."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not (isinstance(chosen, ast.Attribute) and chosen.attr in _OWN_VARIABLES
          and isinstance(chosen.value, ast.Name)):
    return False
  part = chosen.value.id
  at = _idiom.position(step)
  called: Dict[str, List[Tuple[int, int]]] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        _idiom.position(node) < at):
      called.setdefault(node.func.id, []).append(_idiom.position(node))
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    for name, defs in place.defs.items():
      if name in called and name != part and any(
          _holds(d.value, part) and any(
              tuple(d.end) < where for where in called[name])
          and not _others_frozen(d.value, part, scope) for d in defs):
        return True
    place = place.parent
  return False


def _others_frozen(container: ast.AST, part: str, scope: _scopes.Scope
                   ) -> bool:
  """Whether the container's other parts are set `trainable = False`
  (`base.trainable = False`): Keras freezes them already."""
  others = {e.id for e in getattr(container, "args")[0].elts
            if isinstance(e, ast.Name) and e.id != part}
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    for node in place.nodes:
      if isinstance(node, ast.Assign) and isinstance(
          node.value, ast.Constant) and node.value.value is False and any(
              isinstance(t, ast.Attribute) and t.attr == "trainable" and
              isinstance(t.value, ast.Name) and t.value.id in others
              for t in node.targets):
        return True
    place = place.parent
  return False


def _some_created(chosen: ast.AST, scope: _scopes.Scope, flow: Flow,
                  created: Dict[int, Set[str]]) -> bool:
  """Whether a step trains a hand-written list of some of the variables a
  function creates (`return logits, [head_w, head_b]` from a `create_model`
  that also creates the classifier's; `var_list=[modifier]` beside other
  variables): the others are left out."""
  home = scope
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    if len(defs) != 1:
      return False
    value, part = defs[0].value, defs[0].part
    callee = flow.callee(value, scope) if isinstance(
        value, ast.Call) else None
    if part is not None and isinstance(callee, ast.FunctionDef):
      found = flow.functions.get(id(callee))
      inner = found[1].scope_of(callee) if found else None
      if inner is None:
        return False
      home = inner
      returned = [n.value for n in home.nodes if isinstance(n, ast.Return)]
      if len(returned) != 1 or not isinstance(returned[0], ast.Tuple) or (
          len(returned[0].elts) != part[1]):
        return False
      chosen = returned[0].elts[part[0]]
    else:
      chosen = value
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts or (
      not all(isinstance(e, ast.Name) for e in chosen.elts)):
    return False
  names = {e.id for e in chosen.elts if isinstance(e, ast.Name)}
  if not all(any(_trainable_variable(d.value) for d in home.defs.get(n, []))
             for n in names):
    return False
  if id(home) not in created:
    # A variable the code assigns holds inputs (an attack's target
    # image), not parameters.
    written = {_names.dotted(parts[0]) for parts in (
        _writes.target_and_value(n) for n in home.nodes
        if isinstance(n, ast.Call)) if parts}
    created[id(home)] = {
        name for name, defs in home.defs.items()
        if any(_trainable_variable(d.value) for d in defs) and not any(
            _data(d.value) for d in defs)} - written
  at = _idiom.position(chosen)
  # A variable made only in the other arm of a flag's `if` is another
  # model's (each arm builds and trains its own).
  others = {n for n in created[id(home)] - names if not all(
      _arms.apart(home, at, d.start) for d in home.defs.get(n, []))}
  starts = _graphs.resets(home) if others else []
  if starts:  # A script building each model in a graph of its own.
    others = {n for n in others if any(
        _trainable_variable(d.value) and _graphs.same_graph(
            at, d.start, starts) for d in home.defs.get(n, []))}
  return bool(others)


# Calls whose value is data, not a parameter: a name bound to one of them
# (`X = tf.constant(batch)` each step, after `X = tf.Variable([0])`)
# holds inputs.
_DATA = frozenset({"constant", "convert_to_tensor", "placeholder", "array",
                   "asarray"})


def _data(value: ast.expr) -> bool:
  return isinstance(value, ast.Call) and _names.call_name(value) in _DATA


def _some_entries(chosen: ast.AST, scope: _scopes.Scope,
                  analysis: Analysis) -> Optional[ast.expr]:
  """The list, when a step trains a hand-written list of some entries of dicts
  of variables (`[weights['out'], biases['out']]`, or of `self.weights`)
  that the function passes whole to the model (`inference(x, weights,
  biases)`): the other entries are left out."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else chosen
  if not isinstance(chosen, (ast.List, ast.Tuple)) or not chosen.elts:
    return None
  picked: Dict[str, Set[str]] = {}
  for element in chosen.elts:
    name = _names.dotted(element.value) or "" if isinstance(
        element, ast.Subscript) else ""
    if not (isinstance(element, ast.Subscript) and (name.isidentifier() or (
        name.startswith("self.") and name.count(".") == 1)) and isinstance(
            element.slice, ast.Constant)):
      return None
    picked.setdefault(name, set()).add(str(element.slice.value))
  passed = {_names.dotted(a) for n in scope.nodes if isinstance(n, ast.Call)
            for a in n.args if isinstance(a, (ast.Name, ast.Attribute))}
  left = False
  for name, keys in picked.items():
    table, home = _table_of(name, scope, analysis)
    if not isinstance(table, ast.Dict) or name not in passed or not all(
        isinstance(v, ast.Call) and (_trainable_variable(v) or "var" in (
            analysis.flow.labels(v, home))) for v in table.values):
      return None
    left = left or len(table.keys) > len(keys)
  return chosen if left and not _rest_trained(scope, set(picked)) else None


def _table_of(name: str, scope: _scopes.Scope, analysis: Analysis
              ) -> Tuple[Optional[ast.expr], _scopes.Scope]:
  """The one value a local name or a `self.` attribute is assigned, and
  where."""
  if name.startswith("self."):
    info = _class_of(scope)
    values = analysis.project.attribute(info, name) if info else []
    return values[0] if len(values) == 1 else (None, scope)
  defs = scope.defs.get(name, [])
  return (defs[0].value if len(defs) == 1 else None), scope


def _rest_trained(scope: _scopes.Scope, tables: Set[str]) -> bool:
  """Whether a step of the function trains a list read from the whole
  dicts (`list(set(weights.values()) - set(head))` at its own rate)."""
  for node in scope.nodes:
    chosen = var_list_of(node) if isinstance(node, ast.Call) and (
        _names.call_name(node) in STEPS) else None
    values: List[ast.AST] = [chosen] if chosen is not None else []
    if isinstance(chosen, ast.Name):
      values += [d.value for d in scope.defs.get(chosen.id, [])]
    if any(isinstance(n, ast.Attribute) and n.attr == "values" and (
        _names.dotted(n.value) in tables)
           for value in values for n in _scopes.walk(value)):
      return True
  return False


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


def _holds(value: ast.AST, part: str) -> bool:
  """`Sequential([trunk, head2])` holding `head2` among other parts."""
  if not (isinstance(value, ast.Call) and _names.call_name(value) in (
      _CONTAINERS) and value.args and isinstance(value.args[0], (
          ast.List, ast.Tuple))):
    return False
  names = [e.id for e in value.args[0].elts if isinstance(e, ast.Name)]
  return part in names and len(value.args[0].elts) > 1


def _by_keyword(call: ast.Call, candidates: List[ast.AST],
                functions: Dict[int, Tuple[int, int]]) -> Optional[ast.AST]:
  """The wrapper a method call of an object the flow cannot follow
  (`ensembler.build_train_op(loss=loss, var_list=chosen)`, `ensembler` a
  parameter) reaches: the project's methods of that name, when each
  passes on the variables the call names by keyword."""
  if not isinstance(call.func, ast.Attribute) or not candidates:
    return None
  given = {k.arg for k in call.keywords}
  for candidate in candidates:
    params = [a.arg for a in getattr(candidate, "args").args]
    position = functions[id(candidate)][1]
    if not 0 <= position < len(params) or params[position] not in given:
      return None
  return candidates[0]


def _inside(scope: Optional[_scopes.Scope],
            functions: Dict[int, Tuple[int, int]]) -> bool:
  """Whether `scope` is one of `functions` or nested in one."""
  while scope is not None:
    if id(scope.node) in functions:
      return True
    scope = scope.parent
  return False


def _read_of_parameter(chosen: Optional[ast.AST], scope: _scopes.Scope
                       ) -> Optional[ast.AST]:
  """`chosen`, or the parameter it reads each element of (`var_refs =
  [v.read_value() for v in tvars]`, `tvars` given)."""
  if not isinstance(chosen, ast.Name) or chosen.id in scope.params:
    return chosen
  defs = scope.defs.get(chosen.id, [])
  value = defs[0].value if len(defs) == 1 else None
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and len(
      value.generators) == 1 and not value.generators[0].ifs and isinstance(
          value.generators[0].iter, ast.Name) and (
              value.generators[0].iter.id in scope.params):
    return value.generators[0].iter
  return chosen


def _owner(chosen: Optional[ast.AST], scope: _scopes.Scope
           ) -> Optional[_scopes.Scope]:
  """The function whose parameter `chosen` is: the step's own, or one
  that encloses it (a factory returning the step as a closure,
  `get_train_step_fn(model, optimizer, vars_to_fine_tune)`)."""
  if not isinstance(chosen, ast.Name):
    return None
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if chosen.id in place.params:
      return place
    if chosen.id in place.defs or not isinstance(place.node, (
        ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
      return None
    place = place.parent
  return None


def _passed_on(call: ast.Call, chosen: Optional[ast.AST],
               scope: _scopes.Scope) -> Optional[Tuple[int, int]]:
  """(loss, var_list) parameter positions when `call` trains exactly the
  variables its function was given."""
  if not isinstance(chosen, ast.Name) or chosen.id not in scope.params or (
      not isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef))):
    return None
  loss = call.args[0] if call.args and _names.call_name(
      call) != "apply_gradients" else None
  position = scope.params.index(chosen.id)
  losses = scope.params.index(loss.id) if isinstance(
      loss, ast.Name) and loss.id in scope.params else -1
  return losses, position


def _refiltered(given: Optional[ast.AST], owner: _scopes.Scope,
                flow: Flow) -> bool:
  """Whether the function sets its parameter anew to a filtered list
  before its step (`if config.trainSubset: var_list = [v for v in all if
  ...]`): a step of its own, not only the list its callers pass; not a
  default filled in when none is given (`if var_list is None:`)."""
  return isinstance(given, ast.Name) and given.id in owner.defs and not any(
      isinstance(n, ast.If) and any(
          isinstance(t, ast.Name) and t.id == given.id
          for t in _scopes.walk(n.test)) for n in owner.nodes) and (
              "filtered" in flow.sink_labels(given, owner, "filtered"))


def _wrapped(call: ast.Call, scope: _scopes.Scope, callee: ast.AST,
             positions: Tuple[int, int], analysis: Analysis) -> Step:
  """The step a call of a wrapper makes, from its arguments."""
  params = [a.arg for a in getattr(callee, "args").args]
  if params[:1] in (["self"], ["cls"]):
    params = params[1:]
    positions = (positions[0] - 1, positions[1] - 1)

  def argument(position: int) -> Optional[ast.expr]:
    if position < 0:
      return None
    if position < len(call.args) and not any(
        isinstance(a, ast.Starred) for a in call.args[:position + 1]):
      return call.args[position]
    name = params[position] if position < len(params) else ""
    return next((k.value for k in call.keywords if k.arg == name), None)

  chosen, loss = argument(positions[1]), argument(positions[0])
  labels = analysis.flow.labels(chosen, scope) if chosen is not None else {}
  returned = _returned_filters(analysis, chosen, scope, labels)
  if returned:
    labels = {**labels, "filtered": returned[0]}
  return Step(call, scope, chosen, _loss_key(loss, scope), labels,
              tuple(returned[1:]))


def _returned_filters(analysis: Analysis, chosen: Optional[ast.AST],
                      scope: _scopes.Scope, labels: Labels
                      ) -> List[ast.expr]:
  """The filters of the functions whose result the step trains where the
  flow does not follow it there: a property of the step's class
  (`self.var_list`), a method of an object of a class passed in (`model =
  model_def(x)`, `model.get_retrain_vars()`) or a helper of a module the
  imports do not find (`variables_helper.freeze_gradients_matching_regex(
  grads_and_vars, ...)`) that the project's functions of that name
  filter by name or scope; or the attribute of an object the trainer is
  built with (`self.policy.params`) that its class filters (not its own
  scope, the one it opens around what it builds)."""
  if chosen is None or "filtered" in labels:
    return []
  values: List[ast.AST] = [chosen]
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    values = [defs[i].value for i in scope.reaching(chosen.id, chosen)]
  found: List[ast.expr] = []
  for value in values:
    for function in _unfollowed(analysis, value, scope, labels):
      node = _returned_filter(analysis.flow, function)
      if node is not None:
        found.append(node)
  for node, home in _held.held_filters(analysis, chosen, scope):
    if node not in found and not (isinstance(node, ast.Call) and (
        _opened_here(_names.scope_argument(node), home))):
      analysis.flow.origin.setdefault(id(node), home)
      found.append(node)
  return found


def _negated(node: ast.AST) -> bool:
  """Whether a filter drops what a test names (`not lower(v)`, `'beta'
  not in v.name`)."""
  return any(isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) or (
      isinstance(n, ast.Compare) and any(
          isinstance(op, ast.NotIn) for op in n.ops))
             for n in _scopes.walk(node))


def _unfollowed(analysis: Analysis, value: ast.AST, scope: _scopes.Scope,
                labels: Labels) -> List[_scopes.Scope]:
  """The functions a property read or a call the flow does not follow
  may run: the property's, or the project's functions of the name."""
  function = labels.get("fn")
  if isinstance(value, ast.Attribute) and isinstance(
      function, ast.FunctionDef) and any(
          _names.dotted(d) == "property" for d in function.decorator_list):
    home = analysis.flow.functions.get(id(function))
    inner = home[1].scope_of(function) if home else None
    return [inner] if inner is not None else []
  if isinstance(value, ast.Call) and isinstance(
      value.func, ast.Attribute) and analysis.flow.callee(
          value, scope) is None and (
              not isinstance(value.func.value, ast.Name) or not (
                  analysis.project.external(scope, value.func.value.id))
              or analysis.project.holds_module(scope, value.func.value.id)):
    return list(analysis.project.functions_named(
        (value.func.attr,), unscanned=True))
  return []


def _returned_filter(flow: Flow, function: _scopes.Scope
                     ) -> Optional[ast.expr]:
  """Where a function filters the variables it returns, if it does."""
  for returned in function.nodes:
    if not isinstance(returned, ast.Return) or returned.value is None:
      continue
    got = flow.chosen(returned.value, function, flow.labels(
        returned.value, function))
    if "filtered" in got:
      node = _origin(flow, returned.value, function, set())
      if node is returned.value and isinstance(got["filtered"], ast.expr):
        node = got["filtered"]  # Where the comprehension's source is.
      node = node if isinstance(node, ast.expr) else returned.value
      if any(isinstance(n, ast.Name) and n.id in function.params and (
          _REPLICA.search(n.id)) for n in _scopes.walk(node)):
        return None  # One replica's copy of the model (`'v%s/' % device`).
      flow.origin.setdefault(id(node), function)
      return node
  return None


# A parameter naming one replica of a model copied per device.
_REPLICA = re.compile(r"device|tower|replica|gpu|clone|worker|shard", re.I)


def _grouped(analysis: Analysis, steps: List[Step]) -> List[Step]:
  """The steps, each marked when a sibling group of its filtered list
  is trained by no step of its module (`_groups`)."""
  chosen: Dict[int, List[ast.AST]] = {}
  for step in steps:
    if step.var_list is not None:
      chosen.setdefault(id(analysis.module(step.scope)), []).append(
          step.var_list)
  for step in steps:
    step.grouped = "filtered" in step.labels and step.var_list is not None \
        and (_groups.left_out(analysis.flow, step.var_list, step.scope,
                              chosen[id(analysis.module(step.scope))])
             or _run_beside(step.var_list, step.scope, step.call))
  return steps


def _run_beside(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call
                ) -> bool:
  """`_groups.run_beside`, given the steps of the function."""
  return _groups.run_beside(chosen, scope, call, lambda: [
      (n, var_list_of(n)) for n in scope.nodes if isinstance(n, ast.Call)
      and _names.call_name(n) in STEPS])


def _split(step: Step, steps: List[Step], groups: Dict[str, Set[str]]
           ) -> bool:
  """Whether another step of the module trains other variables for
  another loss (a GAN's generator and discriminator, an actor and a
  critic, a policy and its value function): between them they train
  everything; a filter of one training is one step's, or several steps'
  of the same loss (layers at two learning rates, two stages)."""
  mine = groups.get(step.loss or "", set())
  return any(not mine & groups.get(other.loss or "", set())
             for other in _other_trainings(step, steps))


def _shares_lists(step: Step, steps: List[Step], node: ast.AST) -> bool:
  """Whether another loss trains lists overlapping this step's (an actor
  and a critic sharing a trunk), and the filter leaves out no name by
  itself (`'beta' not in v.name` does): between them the losses train
  everything."""
  return bool(_other_trainings(step, steps)) and not _drops_a_name(node)


def _drops_a_name(node: ast.AST) -> bool:
  """Whether a filter leaves out a name by itself (`'beta' not in
  v.name`)."""
  return any(
      isinstance(n, ast.Compare) and isinstance(n.left, ast.Constant) and any(
          isinstance(op, ast.NotIn) for op in n.ops)
      for n in _scopes.walk(node))


def _complement_trained(node: ast.AST, steps: List[Step],
                        home: _scopes.Scope) -> bool:
  """Whether the filter keeps every variable but the members of a list
  that another step of the module, or of the filter's function, trains
  (`[v for v in tvars if v not in d_vars]` beside `tf.gradients(loss_d,
  d_vars)`, a GAN's generator as what is not the discriminator): between
  them they train everything."""
  excluded = {ast.unparse(_unwrapped(n.comparators[0]))
              for n in _scopes.walk(node) if isinstance(n, ast.Compare) and len(
                  n.ops) == 1 and isinstance(n.ops[0], ast.NotIn) and (
                      not isinstance(n.comparators[0], ast.Constant))}
  if not excluded:
    return False
  chosen = [step.var_list for step in steps] + [
      var_list_of(n) for n in _deep_nodes(home) if isinstance(
          n, ast.Call) and _names.call_name(n) in STEPS]
  return any(excluded & set(_summands(c)) for c in chosen if c is not None)


def _unwrapped(node: ast.expr) -> ast.expr:
  """`set(x)`, `list(x)`: x."""
  while isinstance(node, ast.Call) and _names.call_name(node) in {
      "set", "list", "tuple", "frozenset"} and len(node.args) == 1:
    node = node.args[0]
  return node


def _other_trainings(step: Step, steps: List[Step]) -> List[Step]:
  """The steps of the module training other lists for other losses."""
  if step.loss is None or step.var_list is None:
    return []
  mine = ast.unparse(step.var_list)
  return [other for other in steps if other.loss is not None and (
      other.loss != step.loss) and other.var_list is not None and _trains(
          other) and ast.unparse(other.var_list) != mine and (
              other.scope is not step.scope or other.section == step.section
          ) and not _whole_elsewhere.whole_elsewhere(
              step.labels.get("filtered"), step.scope, other.labels,
              other.scope) and not (
              _fast_weights(other) or _groups.inner_loop(
                  other.call, other.scope) or _flagged.never_run(
                      other.call, other.scope) or _unbound_lists.no_group(
                          other.var_list, other.labels, other.scope))]


def _fast_weights(step: Step) -> bool:
  """Whether a bare gradient is taken of weights its function is given
  (`tf.gradients(loss, list(weights.values()))`): a meta-learner's inner
  loop moving fast weights, not a step of an optimizer."""
  if _names.call_name(step.call) not in {"gradients", "gradient"} or (
      step.var_list is None):
    return False
  nodes = list(_scopes.walk(step.var_list))
  return any(isinstance(n, ast.Name) and n.id in step.scope.params
             for n in nodes) and not any(
                 isinstance(n, ast.Attribute) and n.attr in _OWN_VARIABLES
                 for n in nodes)  # A model passed in: its own variables.


def _loss_groups(steps: List[Step]) -> Dict[str, Set[str]]:
  """The lists that the steps of each loss train, as text (`conv + fc_c`:
  `conv` and `fc_c`): two losses sharing one (`conv + fc_c` and `conv +
  fc_c + fc_d`) are one training of shared layers, not a model's two
  halves."""
  found: Dict[str, Set[str]] = {}
  for step in steps:
    if step.loss is not None and step.var_list is not None:
      found.setdefault(step.loss, set()).update(_summands(step.var_list))
  return found


def _summands(node: ast.AST) -> List[str]:
  """The lists a list is joined from (`a + list(b.values())`: `a`, `b`)."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return _summands(node.left) + _summands(node.right)
  if isinstance(node, ast.Call) and not node.keywords and (
      _names.call_name(node) in {"list", "tuple", "values"}):
    inner = node.args[0] if len(node.args) == 1 else (
        node.func.value if isinstance(node.func, ast.Attribute) and (
            not node.args) else None)
    if inner is not None:
      return _summands(inner)
  return [ast.unparse(node)]


def _left_out(hit: _idiom.Hit, hits: Iterable[_idiom.Hit], scope: int
              ) -> bool:
  """Whether one of a function's filters leaves out a name that none of
  its other filters trains (`body = [... 'head' not in v.name and 'emb'
  not in v.name]` beside `head = [... 'head' in v.name]`: the embeddings
  train in neither)."""
  kept: Set[str] = set()
  dropped: Set[str] = set()
  for each in hits:
    if id(each.scope) != scope:
      continue
    for node in _scopes.walk(each.node):
      if isinstance(node, ast.Compare) and isinstance(
          node.left, ast.Constant) and isinstance(node.left.value, str):
        negated = any(isinstance(op, ast.NotIn) for op in node.ops)
        (dropped if negated else kept).add(node.left.value)
  del hit
  return bool(dropped - kept)


# Calls that only show a value (a summary, a print).
_SHOWN = {"histogram", "scalar", "image", "audio", "text", "print",
          "Print", "info", "debug", "write"}


_REARRANGE = {"zip", "list", "tuple", "enumerate", "sorted", "dict"}


def _only_summarised(step: Step, steps: List[Step]) -> bool:
  """Whether a filtered gradient is only shown (`tf.summary.histogram` of
  each) or fetched to look at (`sess.run(gradient)`), never applied,
  while the function's step minimises the same loss on every variable
  (`optimizer.minimize(loss)`)."""
  if _names.call_name(step.call) not in {
      "gradients", "gradient", "compute_gradients"} or not (
      any(other.scope is step.scope and other.loss == step.loss and (
          other.var_list is None) and _names.call_name(other.call) in {
              "minimize", "create_train_op", "optimize_loss"}
          for other in steps)):
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


def _no_choice(step: Step, analysis: Analysis) -> bool:
  """Whether the step's filter chooses nothing to freeze: it applies
  gradients fed in from outside (computed for those variables elsewhere),
  or leaves out only variables its loss never reads."""
  chosen = step.labels.get("filtered")
  return _fed.fed_gradients(step.call, step.scope) or chosen is not None and (
      _unread.only_unread(chosen, analysis.module(step.scope)))


def _only_measured(step: Step) -> bool:
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


def _phased(step: Step, steps: List[Step]) -> bool:
  """Whether the same function also trains the same loss on every
  variable (`train_all = create_train_op(loss, opt)` beside `train_head
  = create_train_op(loss, opt, variables_to_train=head)`, or
  `apply_gradients(pairs)` beside `apply_gradients(pairs[-2:])`): the
  filtered step freezes the rest, whatever its scope names."""
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
  return step.loss is not None and any(
      other is not step and other.scope is step.scope and (
          other.call is not source) and other.section == step.section and
      other.loss == step.loss and (other.var_list is None and _names.call_name(
          other.call) != "apply_gradients" or whole is not None and (
              other.var_list is not None) and ast.unparse(
                  other.var_list) == ast.unparse(whole)) for other in steps)


def _trains(step: Step) -> bool:
  """Whether a step chooses a group of variables to train: not the apply
  of (gradient, variable) pairs made elsewhere (chosen where they were
  computed, a step of its own), nor a gradient with respect to a tensor
  no variable flows into (the inputs of an adversarial example, a saliency
  map); a group passed in as a parameter may be variables."""
  call = step.call
  name = _names.call_name(call)
  if name == "apply_gradients":
    # Pairs kept by a filter here choose a group too.
    return not (call.args and step.var_list is call.args[0]) or (
        "filtered" in step.labels)
  if name not in {"gradients", "gradient"} or "var" in step.labels:
    return True
  chosen = step.var_list
  return isinstance(chosen, ast.Name) and chosen.id in step.scope.params


# Loops, and comprehensions (each makes its element once per item).
_LOOPS = (ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.GeneratorExp,
          ast.DictComp)


def _per_group(step: Step, node: ast.AST) -> bool:
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


def _end(node: ast.AST) -> Tuple[int, int]:
  return (getattr(node, "end_lineno", 0) or 0,
          getattr(node, "end_col_offset", 0) or 0)


def _origin(flow: Flow, expr: Optional[ast.AST], scope: _scopes.Scope,
            seen: Set[int]) -> Optional[ast.AST]:
  """Where the filtered list comes from, as near the step as the code
  says it: the local name's assignment, the call of a helper or of a
  filter passed in, the comprehension, the loop's addition."""
  if expr is None or id(expr) in seen or len(seen) > 16:
    return expr
  seen.add(id(expr))
  if isinstance(expr, (ast.Name, ast.Attribute)):
    values = _values_of(flow, expr, scope)
    for value, home in values:
      got = flow.chosen(value, home, flow.labels(value, home))
      if "filtered" in got:
        if id(value) in home.guards:
          return value
        return _origin(flow, value, home, seen)
    # A list written by hand (`meta_vars = [W_meta, W_senet]`) is the
    # choice where it is written.
    return values[0][0] if len(values) == 1 and values[0][1] is scope and (
        isinstance(values[0][0], (ast.List, ast.Tuple))) else expr
  parts: List[ast.AST] = []
  if isinstance(expr, ast.BinOp):
    parts = [expr.left, expr.right]
  elif isinstance(expr, ast.IfExp):
    parts = [expr.body, expr.orelse]
  elif isinstance(expr, (ast.List, ast.Tuple)):
    if len(expr.elts) > 1:
      return expr  # `[head_w, adapters]`: the list is the choice.
    parts = list(expr.elts)
  elif isinstance(expr, ast.Starred):
    parts = [expr.value]
  elif isinstance(expr, ast.Call) and (_names.call_name(expr) in (
      _names.CONTAINERS) or _names.joins_lists(expr)):
    parts = list(expr.args)
  elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
      and expr.func.attr in _names.SUBSETS:
    parts = [expr.func.value, *expr.args]  # The set it keeps some of.
  for part in parts:
    if "filtered" in flow.labels(part, scope):
      return _origin(flow, part, scope, seen)
  return expr


def _chosen_where(flow: Flow, step: Step, node: Optional[ast.AST]
                  ) -> Optional[ast.AST]:
  """Where the variables were chosen when only the objects the step's
  callers pass tell it (`Trainer(config, model)` training
  `model.get_var_list()`): the choice, in the model's code."""
  where = step.labels.get("filtered")
  if step.grouped and step.var_list is not None and _groups.among(
      step.var_list, step.scope):
    return step.var_list  # One group or another, by a flag: at the step.
  if node is step.var_list and node is not None and isinstance(
      where, ast.expr) and where is not node and (
          "filtered" not in flow.labels(node, step.scope)):
    return where
  return node


def _first_filter(flow: Flow, node: ast.expr, scope: _scopes.Scope,
                  opened: Set[str]) -> ast.expr:
  """The filter that first leaves variables out, when a filtered list is
  filtered again (`head = [v for v in chosen if 'fc' in v.name]` of
  `chosen = [v for v in tvars if 'beta' not in v.name]`): the steps of
  the parts of one filtered list are one finding, at its filter; a list
  that only names the model (`'model' in v.name`) is not that filter."""
  for _ in range(8):
    home = flow.origin.get(id(node), scope)
    if isinstance(node, ast.Name) and node.id in home.loops:
      # `for item in chosen: if 'gamma' in item.name: gammas.append(item)`.
      source = home.loops[node.id]
    elif not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(
        node.generators) != 1:
      break
    else:
      source = node.generators[0].iter
    if not isinstance(source, (ast.Name, ast.Attribute)) or (
        "filtered" not in flow.labels(source, home)):
      break
    parent = _origin(flow, source, home, set())
    if not isinstance(parent, ast.expr) or parent is source or (
        _names_the_model(parent, opened)):
      break
    node = parent
  return node


def _values_of(flow: Flow, expr: ast.AST, scope: _scopes.Scope
               ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """The values a local name or a `self.` attribute holds at `expr`."""
  name = _names.dotted(expr)
  owner = flow.labels(expr.value, scope).get("obj") if isinstance(
      expr, ast.Attribute) and isinstance(expr.value, ast.Name) and (
          expr.value.id != "self") else None
  info = flow.classes.get(id(owner)) if owner is not None else None
  if info is not None and isinstance(expr, ast.Attribute):
    # `D_gpu.trainables` of a network: where its class drops some of its
    # variables by a negated test (`not lower(v)`).
    return [(value, home) for value, home in flow.project.attribute(
        info, f"self.{expr.attr}") if _negated(value)]
  if isinstance(expr, ast.Name) and expr.id in scope.defs:
    defs = scope.defs[expr.id]
    return [(defs[i].value, scope)
            for i in reversed(scope.reaching(expr.id, expr))]
  if isinstance(expr, ast.Name):
    outer = _outer.outer_values(expr, scope)
    if outer:  # A script's list read by its `train_step`.
      return outer
  if name and name.count(".") == 1 and name.startswith("self."):
    info = scope.cls
    place: Optional[_scopes.Scope] = scope
    while info is None and place is not None:
      place = place.parent
      info = place.cls if place is not None else None
    if info is not None:
      return flow.project.attribute(info, name)
  return []


def _synced_modules(analysis: Analysis, by_module: Dict[int, List[Step]]
                    ) -> Set[int]:
  """Modules that write into a filtered group of variables (a target
  network updated from the trained one), unless a step trains a part of
  a scope the module reads whole (`_groups.part_of_copied`)."""
  found = set()
  for scope, call in analysis.calls_named(_writes.WRITE_CALLS):
    if scope.name in _names.OPTIMIZER_METHODS:
      continue  # An optimizer's own update of what it trains.
    parts = _writes.target_and_value(call)
    if parts and "filtered" in analysis.flow.labels(parts[0], scope) \
        and _has_var(analysis.flow.labels(parts[1], scope)) and (
            _groups.copied_from(analysis.flow, parts[0], parts[1], scope)):
      # Copied from other variables (not a proximal step of its own).
      found.add(id(analysis.module(scope)))
  return {module for module in found if not _groups.part_of_copied(
      [(step.var_list, step.scope) for step in by_module.get(module, ())
       if step.var_list is not None])}


def _root_scopes(analysis: Analysis) -> Set[str]:
  """The literal scopes the project opens outside any other scope: the
  scopes whole models are built under."""
  opened: Set[str] = set()
  project = analysis.project
  for module in project.modules:  # The model's file may hold no step.
    if "_scope(" in module.source.text and project.parsed(module) and (
        module.tree is not None):
      _open_scopes(module.tree.body, False, opened)
  return opened


def _open_scopes(body: List[ast.stmt], inside: bool, opened: Set[str],
                 defaults: Optional[Dict[str, str]] = None) -> None:
  for statement in body:
    here = inside
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
      _open_scopes(statement.body, inside, opened, _defaults(statement))
      continue
    if isinstance(statement, ast.With):
      names = [_literal_scope(i.context_expr, defaults or {})
               for i in statement.items]
      if not inside:
        opened.update(n for n in names if n)
      here = inside or any(
          isinstance(i.context_expr, ast.Call) and _names.call_name(
              i.context_expr) in _SCOPES for i in statement.items)
    for block in _scopes.blocks(statement):
      _open_scopes(block, here, opened, defaults)


def _defaults(function: ast.AST) -> Dict[str, str]:
  """A function's parameters with a literal string default (`def
  model(hparams, X, scope='model')`)."""
  arguments = getattr(function, "args")
  positional = [*arguments.posonlyargs, *arguments.args]
  pairs = [*zip(positional[len(positional) - len(arguments.defaults):],
                arguments.defaults),
           *zip(arguments.kwonlyargs, arguments.kw_defaults)]
  return {a.arg: d.value for a, d in pairs
          if isinstance(d, ast.Constant) and isinstance(d.value, str)}


def _literal_scope(expr: ast.AST, defaults: Dict[str, str]
                   ) -> Optional[str]:
  """The scope a `with variable_scope(...)` opens, if written as a string
  here or as the default of its function's parameter."""
  if not (isinstance(expr, ast.Call) and _names.call_name(expr) in _SCOPES
          and expr.args):
    return None
  name = expr.args[0]
  if isinstance(name, ast.Constant) and isinstance(name.value, str):
    return name.value
  if isinstance(name, ast.Name):
    return defaults.get(name.id)
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
    # `self.scope + '_encoder'`: under the object's own scope, as a
    # collection's scope (a prefix) matches it.
    name = name.left
  dotted = _names.dotted(name) or ""
  if dotted.startswith("self.") and dotted.count(".") == 1:
    # An object's own scope (`self.scope`, `self.name`), opened around
    # what it builds.
    return _SELF_SCOPE + dotted
  return None


# `with tf.variable_scope(self.scope)` somewhere in the project: a class
# builds its variables under a scope of its own.
_SELF_SCOPE = "\0"


def _built_scope(flow: Flow, node: ast.AST, scope: _scopes.Scope,
                 opened: Set[str]) -> bool:
  """Whether the filter is an object's own variables by the scope it
  builds them under (`get_collection(TRAINABLE_VARIABLES, self.scope)`,
  or a method returning that): a whole model (a GAN's discriminator, a
  policy), not a part of one."""
  selves = {o[len(_SELF_SCOPE):] for o in opened if o.startswith(_SELF_SCOPE)}
  member = _member_values(flow, node, scope)
  if member:  # `self.net.params` of a class of the project: its own list.
    return all(_built_scope(flow, v, home, opened) for v, home in member)
  if isinstance(node, ast.Call) and _opened_here(_names.scope_argument(
      node), flow.origin.get(id(node), scope)):
    return True
  if not selves:
    return False
  if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and all(
      _names.dotted(c) in selves or isinstance(c, ast.Constant)
      for test in (t for g in node.generators for t in g.ifs)
      for c in _compared(test)):
    # `[v for v in tvars if v.name.startswith(self.name)]`.
    return any(_names.dotted(c) in selves
               for test in (t for g in node.generators for t in g.ifs)
               for c in _compared(test))
  if not isinstance(node, ast.Call):
    return False
  chosen = _names.scope_argument(node)
  if chosen is not None:
    return _names.dotted(chosen) in selves
  callee = flow.callee(node, scope)
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  returns = [r.value for r in _scopes.walk(callee)
             if isinstance(r, ast.Return) and r.value is not None]
  return bool(returns) and all(
      isinstance(r, ast.Call) and (_names.dotted(
          _names.scope_argument(r) or r) in selves) for r in returns)


def _member_values(flow: Flow, node: ast.AST, scope: _scopes.Scope
                   ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """What `self.net.params` is assigned in the class of the project that
  `self.net` is made from (`self.net = Network(conf)`), or nothing."""
  info = _class_of(scope)
  if not isinstance(node, ast.Attribute) or info is None or not (
      isinstance(node.value, ast.Attribute)) or _names.dotted(
          node.value.value) != "self":
    return []
  made = flow.project.attribute(info, f"self.{node.value.attr}")
  if len(made) != 1 or not isinstance(made[0][0], ast.Call):
    return []
  maker = _names.dotted(made[0][0].func)
  target = flow.project.resolve(made[0][1], maker) if maker else None
  if not isinstance(target, _scopes.ClassInfo):
    return []
  return flow.project.attribute(target, f"self.{node.attr}")


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
      isinstance(i.context_expr, ast.Call) and _names.call_name(
          i.context_expr) in _SCOPES and i.context_expr.args and ast.unparse(
              i.context_expr.args[0]) == text for i in n.items) and any(
                  isinstance(c, ast.Call) for s in n.body
                  for c in _scopes.walk(s)) for n in _deep_nodes(home))


def _compared(test: ast.AST) -> List[ast.expr]:
  """What a name test compares a variable's name with (`v.name.startswith(
  x)`: x; `x in v.name`: x)."""
  found: List[ast.expr] = []
  for node in _scopes.walk(test):
    if isinstance(node, ast.Call) and _names.call_name(node) in {
        "startswith", "match", "search"} and node.args:
      found.append(node.args[0])
    elif isinstance(node, ast.Compare) and any(
        isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
      found.append(node.left)
  return found


_WHOLE_NETWORK = re.compile(
    r"(policy|network|model|actor|critic|generator|discriminator|agent|"
    r"q_?func|value_?func)s?$", re.I)


_CURRENT_SCOPE = {"get_name_scope", "get_variable_scope",
                  "original_name_scope"}


def _identifiers(node: ast.AST) -> List[str]:
  """The names and attribute names `node` reads."""
  return [n.attr if isinstance(n, ast.Attribute) else n.id
          for n in _scopes.walk(node)
          if isinstance(n, (ast.Attribute, ast.Name))]


def _names_the_model(node: ast.AST, opened: Set[str]) -> bool:
  """Whether a filter selects by literal scopes that are all model roots
  (`'model' in v.name`; not `'bert' not in v.name`, which leaves the
  model out and trains what was added on top)."""
  if any(isinstance(n, ast.Compare) and any(
      isinstance(op, ast.NotIn) for op in n.ops) or isinstance(
          n, ast.UnaryOp) and isinstance(n.op, ast.Not)
         for n in _scopes.walk(node)):
    return False
  literals = [n.value for n in _scopes.walk(node)
              if isinstance(n, ast.Constant) and isinstance(n.value, str)
              and n.value]
  if isinstance(node, ast.Call):
    chosen = _names.scope_argument(node)
    if chosen is not None and not isinstance(chosen, ast.Constant):
      # `global_variables(hparams.policy_network + "/.*")`: a configured
      # name of a whole network; `scope=get_default_graph().
      # get_name_scope()`: the scope the model is being built in.
      return any(_WHOLE_NETWORK.search(word) or word in _CURRENT_SCOPE
                 for word in _identifiers(chosen))
  return bool(literals) and all(
      s.strip("/").split("/")[0] in opened and "/" not in s.strip("/")
      for s in literals)


IDIOM = VarListFilter()
