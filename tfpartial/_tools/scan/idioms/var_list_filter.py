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
from typing import Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _arms
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _cond_branches
from tfpartial._tools.scan.idioms._runs import _refined_stage
from tfpartial._tools.scan.idioms._runs import _run_off
from tfpartial._tools.scan.idioms._runs import _scheduled
from tfpartial._tools.scan.idioms._runs import _warm_up
from tfpartial._tools.scan.idioms._sources import _applied
from tfpartial._tools.scan.idioms._sources import _arm_choice
from tfpartial._tools.scan.idioms._sources import _chosen_ops
from tfpartial._tools.scan.idioms._sources import _flag_dropped
from tfpartial._tools.scan.idioms._sources import _flagged
from tfpartial._tools.scan.idioms._sources import _generic_helper
from tfpartial._tools.scan.idioms._sources import _hand_picked
from tfpartial._tools.scan.idioms._sources import _helper_choice
from tfpartial._tools.scan.idioms._sources import _name_scoped
from tfpartial._tools.scan.idioms._sources import _narrowed
from tfpartial._tools.scan.idioms._sources import _narrowed_arm
from tfpartial._tools.scan.idioms._sources import _part_flags
from tfpartial._tools.scan.idioms._sources import _outside
from tfpartial._tools.scan.idioms._sources import _trimmed_collection
from tfpartial._tools.scan.idioms._sources import _weights_property
from tfpartial._tools.scan.idioms._sources._declared import (
    _declared_weights, _skipped_updates, _sliced_weights)
from tfpartial._tools.scan.idioms._sources._origins import _returned_filter
from tfpartial._tools.scan.idioms._sources._steps import _grouped, _steps
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _class_of, _end, _loss_node)
from tfpartial._tools.scan.idioms._wholes import _frozen_backbone
from tfpartial._tools.scan.idioms._wholes import _grown_levels
from tfpartial._tools.scan.idioms._wholes import _inherited
from tfpartial._tools.scan.idioms._wholes import _progressive
from tfpartial._tools.scan.idioms._wholes import _swapped
from tfpartial._tools.scan.idioms._wholes import _unused_helper
from tfpartial._tools.scan.idioms._wholes import _complement_subset
from tfpartial._tools.scan.idioms._wholes import _dead_step
from tfpartial._tools.scan.idioms._wholes import _reached
from tfpartial._tools.scan.idioms._wholes import _scopes_untrained
from tfpartial._tools.scan.idioms._wholes import _sliced_parts
from tfpartial._tools.scan.idioms._wholes import _wider_step
from tfpartial._tools.scan.idioms._wholes import _worker_pairs
from tfpartial._tools.scan.idioms._wholes._filter_gates import _filter_of
from tfpartial._tools.scan.idioms._wholes._left_out import _left_out_by_flow
from tfpartial._tools.scan.idioms._wholes._model_named import (
    _names_the_model, _root_scopes, _whole_object)
from tfpartial._tools.scan.idioms._wholes._other_half import (
    _left_out, _loss_groups, _models_by_flag, _synced_modules)
from tfpartial._tools.scan.idioms._wholes._step_gates import phased


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
    found = _Found()
    every = [step for steps in by_module.values() for step in steps]
    for module, steps in by_module.items():
      # What a step of a function nothing runs would train widens none.
      live = [s for s in steps if not _dead_step.never_run(analysis, s.scope)]
      if module in synced:  # A target network written from the trained one,
        found.flagged += [  # unless a flag narrows what the step trains.
            _idiom.Hit(node, step.scope, step.call, step.labels)
            for step in steps for node in [_narrowed_arm.narrowed(
                analysis, step.var_list, step.scope)] if node is not None]
        continue
      whole = steps + _inherited.of_bases(analysis.project, steps, every)
      every_step = live_steps = (whole, _loss_groups(whole))
      if len(live) < len(steps):
        others = live + _inherited.of_bases(analysis.project, live, every)
        live_steps = (others, _loss_groups(others))
      for step in steps:
        seen, groups = live_steps if any(s is step for s in live) else (
            every_step)
        if _unused_helper.imported_unread(analysis, step.scope):
          continue  # A helper its importer never calls: no step is built.
        if _grown_levels.every_level(step):
          continue  # Every level a growing stage has built: its network.
        node = _filter_of(analysis, step, _hand_picked.own_steps(
            step, seen), groups, opened)
        if _worker_pairs.paired(step.call, step.scope.node, node):
          continue  # An A3C worker's list, paired with its gradients.
        node = node or _frozen_backbone.frozen_backbone(step, every)
        if node is None:
          found.flagged += _models_by_flag(analysis, step, steps, groups)
          _add_model(step, steps, opened, found)
          continue
        _add_step(analysis, step, steps, node, found)
    return _gathered(analysis, found, every, synced)

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    del context
    name = _names.call_name(hit.sink) if hit.sink is not None else "a step"
    chosen = "`var_list`"
    if name in {"append", "extend"}:
      chosen, name = "a layer's `_trainable_weights`", f"self.{name}"
    elif name == "compile":  # `d.trainable_weights = ...[1:]`.
      chosen = "a layer's `trainable_weights`"
    elif _trimmed_collection.COLLECTION in hit.labels:
      chosen = "the `TRAINABLE_VARIABLES` collection"
    whole = hit.labels.get(_weights_property.WHOLE)
    if isinstance(whole, ast.Attribute):  # No step: the property itself.
      return (f"`{whole.attr}` overridden to return a part of the layer's "
              f"weights (line {_idiom.line(whole)} returns them all): "
              "whole variables only; exact as it is, not a drift; a "
              "candidate for a spec file"), []
    message = (f"{chosen} filtered by name or scope for "
               f"{_step_named(hit, name)}{_outside.mention(hit.labels)}"
               f"{_helper_choice.mention(hit.labels)}"
               ": whole variables only; exact as it is, not a drift; a "
               "candidate for a spec file")
    flag = hit.labels.get(_part_flags.FLAG)
    if isinstance(flag, ast.Attribute):  # A part's flag, turned off.
      message = (f"`{ast.unparse(flag)}` turned off for good here, so the "
                 f"part's {_step_named(hit, name)}, run only while its flag "
                 "is on, never trains it: whole variables only; exact as it "
                 "is, not a drift; a candidate for a spec file")
    refined = hit.labels.get(_refined_stage.REFINED)
    if isinstance(refined, ast.expr):  # The second stage's op instead.
      message = _refined_stage.message(hit, _step_named(hit, name))
    run = hit.labels.get("run")
    if run is not None:  # The step's own ops, some of them run.
      message = (f"update ops of `{name}` (line {_idiom.line(hit.sink)}) "
                 f"run (line {_idiom.line(run)}) only where this test keeps "
                 "them: whole variables only; exact as it is, not a drift; "
                 "a candidate for a spec file")
    flagged = _flagged.reason(hit.node) or _name_scoped.reason(hit.labels)
    reasons = [flagged] if flagged else []
    for keyword in getattr(hit.sink, "keywords", []):
      if keyword.arg == "decay_var_list":
        reasons.append("`decay_var_list` decays variables the filter "
                       "leaves out")
    return message, reasons or [
        "none: the variables left out get no update and no optimizer slots"]


# The label of the step inside the function a hit's sink calls.
_INSIDE = "inside"


def _step_named(hit: _idiom.Hit, name: str) -> str:
  """`` `minimize` (line N)``, or for a call of a function of the same
  file that makes the step with what it is passed, that step's own line:
  `` `compute_gradients` (line N) in `make_op`, called at line M``."""
  inside = hit.labels.get(_INSIDE)
  if isinstance(inside, ast.Call):
    return (f"`{_names.call_name(inside)}` (line {_idiom.line(inside)}) in "
            f"`{name}`, called at line {_idiom.line(hit.sink)}")
  return (f"`{name}` (line {_idiom.line(hit.sink)}"
          f"{_swapped.step_file(hit.labels)})")


# A finding's function, graph and loss.
_Key = Tuple[int, int, str]
# A filter as text, and the arm of a flag's `if` it is built in.
_Part = Tuple[str, Optional[_arms.Arm]]


@dataclasses.dataclass
class _Found:
  """What `detect` gathers, step by step, before it chooses what to say."""

  # One finding per function and loss: the layers of one fine-tuning
  # trained at several learning rates are one filter.
  hits: Dict[_Key, _idiom.Hit] = dataclasses.field(default_factory=dict)
  sides: Dict[_Key, Optional[_arms.Arm]] = dataclasses.field(
      default_factory=dict)
  also: Dict[_Key, List[_idiom.Hit]] = dataclasses.field(default_factory=dict)
  # The filters each function's steps train in each of its graphs, with
  # the arm of a flag's `if` each is built in.
  parts: Dict[Tuple[int, int], Set[_Part]] = dataclasses.field(
      default_factory=dict)
  # Groups emptied by a flag (`if args.freeze_convolutions: conv = []`).
  flagged: List[_idiom.Hit] = dataclasses.field(default_factory=list)
  made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]] = dataclasses.field(
      default_factory=dict)


def _add_step(analysis: Analysis, step: Step, steps: List[Step],
              node: ast.expr, found: _Found) -> None:
  """Records what the filter `node` of `step` keeps, and its finding
  unless one placed before it stands for the same function and loss."""
  found.flagged += [_idiom.Hit(n, step.scope, step.call, step.labels)
                    for n in _flagged.emptied(analysis.flow, step.var_list,
                                              step.scope, step.call)]
  side = _arms.arm(step.call, step.scope, [
      o.call for o in steps if o is not step and _one_loss(o, step)])
  if not (phased(step, steps) or _applied.of_filtered(step, steps)):
    _add_part(step, (_filter_text(node), side), found.parts, found.made)
  key = (id(_cond_branches.home(step.scope)), step.section,
         step.loss or str(id(node)))
  if _scheduled.chosen_apart(step.call, step.scope, [
      o.call for o in steps if o is not step and _loss_of_both(o, step) and (
          "filtered" in o.labels)]):  # Its own part of the run: its own.
    key = (key[0], key[1], f"{key[2]} {id(step.call)}")
  labels = step.labels
  if not (_helper_choice.scope_passed(analysis.flow, node, step.scope,
                                      _returned_filter)
          or _helper_choice.names_given(analysis.flow, node, step.scope,
                                        _returned_filter)):
    node, labels = _helper_choice.placed(analysis.flow, _into_method(
        analysis, node, step.scope), step.scope, step.labels,
                                         _returned_filter)
  if _helper_choice.NARROWED in labels:  # Each helper its own part.
    key = (key[0], key[1], f"{key[2]} {id(node)}")
  node = _narrowed.narrowing(node, analysis.flow.origin.get(
      id(node), step.scope)) or node
  node = _at_default(analysis, step) or _arm_choice.chosen_step(
      step.call, step.var_list, step.scope, [
          (o.call, o.var_list) for o in steps
          if o is not step and _loss_of_both(o, step)], node) or _shown_at(
              analysis, step, node)
  if step.inside is not None:
    labels = {**labels, _INSIDE: step.inside}
  hit = _idiom.Hit(node, step.scope, step.call, labels)
  hits = found.hits
  if key not in hits or _placed_before(node, hits[key], _arms.apart(
      step.scope, _idiom.position(node),
      _idiom.position(hits[key].node)), analysis.flow):
    hits[key], found.sides[key] = hit, side
    found.also[key] = [_idiom.Hit(n, step.scope, step.call, step.labels)
                       for n in step.also
                       if not _whole_object(analysis, n, step)]


def _add_model(step: Step, steps: List[Step], opened: Set[str],
               found: _Found) -> None:
  """Records a step whose filter names a whole model by its root scope,
  and whose op runs with another step's (`_reached.run_with`), as one of
  the parts its function trains, with no finding: the run trains that
  model beside the other filters (`select_vars('encoder')` and
  `select_vars('generator')`, grouped, where the project opens
  `generator` around a model)."""
  filtered = step.var_list
  if isinstance(filtered, ast.Name):
    defs = step.scope.defs.get(filtered.id, ())
    filtered = defs[0].value if len(defs) == 1 else None
  if "filtered" not in step.labels or not isinstance(
      filtered, ast.expr) or phased(step, steps) or not (
          _names_the_model(filtered, opened, step)) or not (
              _reached.run_with(step, steps)):
    return
  side = _arms.arm(step.call, step.scope, [
      o.call for o in steps if o is not step and _one_loss(o, step)])
  found.parts.setdefault((id(step.scope), step.section), set()).add(
      (_filter_text(filtered), side))


def _gathered(analysis: Analysis, found: _Found, every: List[Step],
              synced: Set[int]) -> List[_idiom.Hit]:
  """The findings of what `detect` gathered, with those of the steps
  that say what they train in other ways (the trainable collection
  trimmed by hand, but not in a module that syncs a target network)."""
  # Not a part whose op runs only where the options' defaults never go.
  _drop_run_off(analysis, found.parts, found.made)
  # The later rules see the steps the main loop reads: none of a module
  # that syncs a target network, none of a helper its importer never calls.
  gated = [step for step in every
           if id(analysis.module(step.scope)) not in synced
           and not _unused_helper.imported_unread(analysis, step.scope)]
  kept = _run_chosen(analysis, _kept(
      found.hits, found.sides, found.also, found.parts,
      _untrained(analysis, found.made, every) | _phases(found.made)))
  # A column's step is shown at its own lists, whatever else chose it.
  columns = [_idiom.Hit(own, step.scope, step.call, {"filtered": own})
             for own, step in _progressive.column_steps(analysis, every)]
  shown = {id(each.sink) for each in columns}
  kept = [each for each in kept if id(each.sink) not in shown] + columns
  sinks = {id(each.sink) for each in kept}
  return kept + found.flagged + _skipped_updates(analysis) + (
      _declared_weights(analysis)) + _sliced_weights(analysis) + (
          _weights_property.narrowed_properties(analysis)) + [
          hit for hit in _warm_up.hits(analysis, gated)
          if id(hit.sink) not in sinks] + [
          hit for hit in _left_out_by_flow(analysis, every)
          if id(hit.sink) not in sinks] + [
          hit for hit in _trimmed_collection.trimmed(analysis, synced)
          if id(hit.sink) not in sinks] + [
          hit for hit in _flag_dropped.hits(analysis, gated)
          + _name_scoped.hits(analysis, gated)
          + _part_flags.hits(analysis, gated)
          + _refined_stage.hits(analysis, gated)
          if id(hit.sink) not in sinks]


def _kept(hits: Dict[_Key, _idiom.Hit],
          sides: Dict[_Key, Optional[_arms.Arm]],
          also: Dict[_Key, List[_idiom.Hit]],
          parts: Dict[Tuple[int, int], Set[_Part]],
          untrained: Set[Tuple[int, int]]) -> List[_idiom.Hit]:
  """The findings, with what each adds: none where two filters of one
  function, neither inside the other, may train together (a linear and a
  deep part at their own optimizers, a GAN's two halves whose losses a
  helper returns): between them they train the model; unless the
  function builds, in scopes of its own, layers none of them trains
  (`untrained`: `_scopes_untrained`)."""
  return [each for key, hit in hits.items()
          if _one_part(parts.get(key[:2], set()), sides[key]) or _left_out(
              hit, hits.values(), key[0]) or (
                  _helper_choice.NARROWED in hit.labels) or (
                      _sliced_parts.leaves_out(
                          text for text, _ in parts.get(key[:2], ()))) or (
                              key[:2] in untrained)
          for each in [hit, *also.get(key, ())]]


def _untrained(analysis: Analysis,
               made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]],
               every: List[Step]) -> Set[Tuple[int, int]]:
  """The functions whose filters, together, leave out layers they build
  in scopes of their own (`_scopes_untrained`), the rest of a list one
  of them filters (`_complement_subset`), or scopes of the network their
  scopes are parts of (`_reached`)."""
  return {place for place, each in made.items() if any(
      _scopes_untrained.leaves_scopes(step, every) or _dropped_later(
          analysis, step, every) for step, _ in each) or (
          _complement_subset.leaves_out(analysis.flow, [
              step for step, _ in each])) or _reached.leaves_sub_scopes(
                  analysis.project, [step for step, _ in each])}


def _phases(made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]]
            ) -> Set[Tuple[int, int]]:
  """The functions whose filters' steps an ordered test of a loop's
  counter runs each in its own part of the run (`if epoch <= 4:
  run(train_new) else: run(train_all)`, `_scheduled`): no two of them
  train together, so none trains what another leaves out meanwhile."""
  return {place for place, each in made.items() if len(
      {part for _, part in each}) > 1 and all(_scheduled.chosen_apart(
          step.call, step.scope, [other.call for other, theirs in each
                                  if theirs != part]) for step, part in each)}


def _dropped_later(analysis: Analysis, step: Step, every: List[Step]
                   ) -> bool:
  """Whether the step trains, from a bound of its loop's counter on,
  fewer scopes of its loss than a step picked before it
  (`_wider_step.dropped_later`); the tests of each class or function
  read once."""
  home = _scopes.enclosing_class(step.scope)
  node = home.node if home is not None else step.scope.node
  picking = analysis.once(f"counter ranges {id(node)}",
                          lambda: _chosen_stage.Picking(node))
  assert isinstance(picking, _chosen_stage.Picking)
  return _wider_step.dropped_later(step, every, picking)


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


def _loss_of_both(one: Step, other: Step) -> bool:
  """Whether two steps of one function minimise one loss that no arm of
  an `if` assigns its own (a parameter, or a name bound once)."""
  return one.scope is other.scope and one.loss is not None and (
      one.loss == other.loss) and len(one.scope.defs.get(one.loss, ())) < 2


def _add_part(step: Step, part: _Part,
              parts: Dict[Tuple[int, int], Set[_Part]],
              made: Dict[Tuple[int, int], List[Tuple[Step, _Part]]]) -> None:
  """The step's filter (by text: the same filter written at the gradient
  and at the apply is one filter; with the arm of a flag's `if` it is
  built in) added to its function's parts, and the step that makes it to
  `made`."""
  place = (id(_cond_branches.home(step.scope)), step.section)
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
      texts.difference_update([
          part for step, part in made.get(place, ()) if (
              _run_off.off_by_default(analysis.project, step.call,
                                      step.scope))])


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


def _at_default(analysis: Analysis, step: Step) -> Optional[ast.expr]:
  """The default of the flag that chooses the step's filter, when one is
  written (slim's `--trainable_scopes` defaulting to the new head's
  scopes): where a reader looks for the choice."""
  filtered = step.labels.get("filtered")
  found = _flagged.flag_default(analysis, filtered, (
      analysis.flow.origin.get(id(filtered), step.scope)), step.scope)
  if found is None:
    return None
  analysis.flow.origin.setdefault(id(found[0]), found[1])
  return found[0]


def _shown_at(analysis: Analysis, step: Step, node: ast.expr) -> ast.expr:
  """Where a choice made apart from the filter `node` is shown: a list
  picked by hand (`_hand_picked`), the arm of a flag's `if` that leaves a
  group out (`_arm_choice`), the step for a helper its callers tell what
  to keep (`_generic_helper`)."""
  return _hand_picked.placed(step) or _arm_choice.chosen_arm(
      step.var_list, step.scope, node) or _generic_helper.at_step(
          analysis.flow, node, step.call, step.scope) or node


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


IDIOM = VarListFilter()
