"""The gates a step's filter passes to be a finding (`_filter_of`), on
what the filter keeps: not a whole model, not half of one whose other
half is trained, not a loss measured by a network it does not train,
not a rest handed on or trained beside it. The gates on how the step
runs (only summarised or measured, phased, one group of a loop) are
`_step_gates`'."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._runs import _run_off
from tfpartial._tools.scan.idioms._sources import _either_arm
from tfpartial._tools.scan.idioms._sources import _flag_return
from tfpartial._tools.scan.idioms._sources import _flagged
from tfpartial._tools.scan.idioms._sources import _passed_scope
from tfpartial._tools.scan.idioms._sources._origins import _origin
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, _LOSS_KEYWORDS, _gradient_call, _loss_node, _opened_here)
from tfpartial._tools.scan.idioms._wholes import _built_outside
from tfpartial._tools.scan.idioms._wholes import _asserted
from tfpartial._tools.scan.idioms._wholes import _capable
from tfpartial._tools.scan.idioms._wholes import _complement_subset
from tfpartial._tools.scan.idioms._wholes import _complemented
from tfpartial._tools.scan.idioms._wholes import _constant_graph
from tfpartial._tools.scan.idioms._wholes import _covering
from tfpartial._tools.scan.idioms._wholes import _covering_tests
from tfpartial._tools.scan.idioms._wholes import _cut_before_split
from tfpartial._tools.scan.idioms._wholes import _every_layer
from tfpartial._tools.scan.idioms._wholes import _fast_weights
from tfpartial._tools.scan.idioms._wholes import _fed_inputs
from tfpartial._tools.scan.idioms._wholes import _frozen_backbone
from tfpartial._tools.scan.idioms._wholes import _last_stage
from tfpartial._tools.scan.idioms._wholes import _layers_beside
from tfpartial._tools.scan.idioms._wholes import _halves
from tfpartial._tools.scan.idioms._wholes import _loss_network
from tfpartial._tools.scan.idioms._wholes import _measuring_net
from tfpartial._tools.scan.idioms._wholes import _named_layers
from tfpartial._tools.scan.idioms._wholes import _named_makers
from tfpartial._tools.scan.idioms._wholes import _named_scopes
from tfpartial._tools.scan.idioms._wholes import _narrowed_half
from tfpartial._tools.scan.idioms._wholes import _inherited
from tfpartial._tools.scan.idioms._wholes import _own_loss
from tfpartial._tools.scan.idioms._wholes import _partition
from tfpartial._tools.scan.idioms._wholes import _per_element
from tfpartial._tools.scan.idioms._wholes import _progressive
from tfpartial._tools.scan.idioms._wholes import _reached
from tfpartial._tools.scan.idioms._wholes import _reset_inputs
from tfpartial._tools.scan.idioms._wholes import _registry
from tfpartial._tools.scan.idioms._wholes import _restored
from tfpartial._tools.scan.idioms._wholes import _run_together
from tfpartial._tools.scan.idioms._wholes import _scopes_untrained
from tfpartial._tools.scan.idioms._wholes import _self_scope
from tfpartial._tools.scan.idioms._wholes import _run_outside
from tfpartial._tools.scan.idioms._wholes import _warm_started
from tfpartial._tools.scan.idioms._wholes import _wider_step
from tfpartial._tools.scan.idioms._wholes._model_named import (
    _built_scope, _first_filter, _kept_roots, _names_the_model, _whole_object)
from tfpartial._tools.scan.idioms._wholes._other_half import (
    _complement_trained, _drops_a_name, _other_trainings, _shares_lists,
    _split, halves)
from tfpartial._tools.scan.idioms._wholes._step_gates import (
    chosen_where, no_choice, only_measured, only_summarised, per_group,
    phased, run_with, shown)




def _loads_graph(analysis: Analysis, module: _project.Module) -> bool:
  """Whether `module` loads a saved graph (read once per module)."""
  return bool(analysis.once(
      f"loads a graph {id(module)}", lambda: _flagged.loads_a_graph(
          module.source.text, module.tree)))


def _filter_of(analysis: Analysis, step: Step, steps: List[Step],
               groups: Dict[str, Set[str]], opened: Set[str]
               ) -> Optional[ast.expr]:
  """The filter leaving variables out of a step's list, or None: another
  loss's half, only measured or summarised, fed inputs, a model named by
  its scope (not a flag's choice against more) or what others leave out."""
  in_phase, flow = phased(step, steps), analysis.flow
  halved = _narrowed_half.narrowed(flow, step, steps) or (
      _capable.others_not_built(analysis, step, steps))
  if "filtered" not in step.labels or _own_training(
      analysis, step, steps, groups, halved) or only_measured(step) or (
          only_summarised(step, steps)) or no_choice(step, analysis, steps) or (
              _flagged.never_run(step.call, step.scope)) or (
                  _half_per_call(analysis, step)) or halves(step, steps) or (
                      _fed_or_every(analysis, step)) or (
                          _beside_whole(step, steps)):
    return None
  chosen = _flagged.choice(flow, step.var_list, step.scope)
  node = chosen or chosen_where(flow, step, _origin(
      flow, step.var_list, step.scope, set()))
  widened = chosen is not None or _flagged.grown(
      step.var_list, step.scope) or _flag_return.against_every(flow, node) or (
          _either_arm.against_a_model(
          step.call, step.scope, [(o.call, o.var_list, o.labels) for o in steps
                                  if o.scope is step.scope and o is not step
                                  and o.loss == step.loss]))
  module = analysis.module(step.scope)
  if not isinstance(node, ast.expr) or per_group(analysis, step, node) or (
      not in_phase and not widened and (_names_the_model(
          node, opened, step) and not _loads_graph(analysis, module) and not (
                  _restores_a_part(module, step)) and (
                          not _warm_started.restores_beside(
                              analysis, module, node)) and (
                          not _backbone_outside(analysis, step, node)) and (
                          not _run_outside.run_outside(
                              analysis, _kept_roots(node), step.scope)) and (
                          not _layers_beside.built_beside(
                              analysis, module, _kept_roots(node))) and (
                          not _other_off(analysis, step, steps, node)) or (
                          _built_scope(flow, node, step.scope, opened)) or (
                              _reached.only_template(module.tree, node)))) or (
                              _a_whole(analysis, node, step)) or (
                                  _passed_scope.opened_by_caller(
                                      flow, node, step.scope, _opened_here)):
    return None
  node = node if halved else _first_filter(flow, node, step.scope, opened)
  # A rest dropping names itself (`v not in new and v not in fc`): kept.
  tested = (node,) if _drops_a_name(node) else (
      node, step.labels.get("filtered"))
  if not in_phase and not halved and _shares_lists(analysis, step, steps,
      node) and not _reached_beside(analysis, step, steps) and not (
          _adapts_part(step, steps)) or any(
      _complement_trained(n, steps, flow.origin.get(id(n), step.scope))
      for n in tested if n is not None) or _rest_passed(
          flow, node, step, steps) or (
              _every_layer.keeps_all(analysis, node, _tests(
                  flow, step.labels.get("filtered"), step.scope))):
    return None
  return shown(analysis, step, node)


def _restores_a_part(module: _project.Module, step: Step) -> bool:
  """Whether the module restores a part other than the step's list, or
  what that list holds (`_restored`)."""
  held = _scopes.values_reaching(step.var_list, step.scope) if (
      step.var_list is not None) else []
  return _restored.restores_a_part(module, step.var_list, held)


def _fed_or_every(analysis: Analysis, step: Step) -> bool:
  """Whether the step's list is set from what a run feeds
  (`_fed_inputs`) or set anew for each search (`_reset_inputs`), or
  keeps every variable there is: a head over a graph imported as
  constants (`_constant_graph`)."""
  return _fed_inputs.set_from_feeds(
      step.var_list, step.call, step.scope) or _reset_inputs.reset_each_pass(
          step.var_list, step.call, step.scope) or (
          _constant_graph.keeps_every_variable(analysis, step))


def _beside_whole(step: Step, steps: List[Step]) -> bool:
  """Whether the step is one arm of a per-element choice whose other arm
  trains every variable on the same loss (`_per_element`)."""
  return _per_element.beside_whole(step.call, step.scope, [
      (o.call, o.var_list) for o in steps
      if o.scope is step.scope and o is not step and o.loss == step.loss])


def _backbone_outside(analysis: Analysis, step: Step, node: ast.expr
                      ) -> bool:
  """Whether the scopes the filter `node` keeps are built on a model
  built outside them (`_built_outside`), or on a pretrained backbone no
  other step trains (`_frozen_backbone.scope_on_backbone`): a part of
  the model, not a whole one."""
  kept = _kept_roots(node)
  listed = step.var_list or node  # All it keeps: `head + backbone_vars`.
  whole = kept.union(*(_kept_roots(value) for value in (
      _scopes.values_reaching(listed, step.scope))))
  return _built_outside.built_outside(analysis, kept, step.scope) or (
      _frozen_backbone.scope_on_backbone(analysis, whole, step.call,
                                         step.scope, listed))


def _some_layers(analysis: Analysis, step: Step, node: ast.expr) -> bool:
  """Whether the step's list (`node`, in the whole list it is part of)
  keeps some, not all, of the layers a one-layer helper builds under the
  names its caller gives (`fc_layer(h, 4096, 14, name='fc8')` beside
  `name='fc7'`): part of one model, not a model
  (`_named_scopes.layer_groups`)."""
  groups = analysis.once("layer groups", lambda: _named_scopes.layer_groups(
      analysis.project, _named_scopes.helpers(analysis.project)))
  kept, read = _kept_roots(node), step.var_list
  for _ in range(4):  # `second = first`, `first = a + b` (origin: `a`).
    values = [d.value for d in step.scope.defs.get(read.id, ())] if (
        isinstance(read, ast.Name)) else []
    kept |= {r for value in values for r in _kept_roots(value)}
    read = values[0] if len(values) == 1 else None
  return isinstance(groups, list) and any(
      kept & group and not group <= kept for group in groups)


def _own_training(analysis: Analysis, step: Step, steps: List[Step],
                  groups: Dict[str, Set[str]], halved: bool) -> bool:
  """Whether the step trains a model of its own: one half of a split whose
  other half another loss trains (`_split`, not phased nor narrowed), or
  a loss measured by a network it does not train or read only from the
  scopes it keeps (`_by_network`); not an inner update over a named
  part beside outer steps over everything (`_adapts_part`), nor halves
  drawn from a list cut before the split (`_cut_before_split`); never
  where another step of the same loss trains a wider list
  (`_wider_step`): that loss reaches what this step leaves out; nor for
  the last stage of a stack its function builds (`_last_stage`)."""
  if _reached_beside(analysis, step, steps):
    return False
  return _split(step, steps, groups) and not phased(
      step, run_with(step, steps)) and not halved and not (
          _adapts_part(step, steps)) and not (
          _cut_before_split.cut_before(analysis, step, _other_trainings(
              step, steps))) or _by_network(analysis, step)


def _adapts_part(step: Step, steps: List[Step]) -> bool:
  """Whether the step is a meta-learning inner update over a part chosen
  by literal names (`_fast_weights.named_part`) beside outer steps that
  each train every variable, where its function runs other networks
  beside the one it adapts: the outer step trains the rest, the inner
  loop adapts the part alone (not a GAN's half)."""
  return step.var_list is not None and _fast_weights.inner_update(
      step.call, step.scope) and _fast_weights.named_part(
          step.var_list, step.scope) and _fast_weights.beside_other_networks(
              step.var_list, step.scope) and all(
              "filtered" not in other.labels
              for other in _other_trainings(step, steps))


def _reached_beside(analysis: Analysis, step: Step, steps: List[Step]
                    ) -> bool:
  """Whether the loss of the step reaches what it leaves out, whatever
  another loss trains: another step of that loss trains a wider list
  (`_wider_step`; the overridden base method's step,
  `_inherited.cuts_base`),
  or the step trains the last stage of a stack its function builds
  (`_last_stage`), or a progressive network's column, fed by the columns
  before it (`_progressive`)."""
  return _progressive.columns(analysis, step.scope, step.var_list) or (
      _wider_step.trained_wider(step, steps, taken=True)) or (
      _last_stage.last_stage(analysis, step)) or _inherited.cuts_base(
          analysis.project, step)


def _tests(flow: Flow, chosen: Optional[ast.AST], scope: _scopes.Scope
           ) -> List[ast.expr]:
  """The test a loop keeps `chosen` (a step's filtered label) under, if
  any (`if name in v.name: kept.append(v)`)."""
  home = flow.origin.get(id(chosen), scope) if chosen is not None else None
  guard = home.guards.get(id(chosen)) if home is not None else None
  return [guard] if guard is not None else []


def _rest_passed(flow: Flow, node: ast.expr, step: Step,
                 steps: List[Step]) -> bool:
  """Whether the filter's rest is handed on beside it (`_complemented`),
  or trained by a step over a list no filter chose
  (`_complement_subset.rest_trained`), or by a step of the same loss run
  with it (`_run_together`), or by a list of another loss the step
  applies with it (`_covering_tests`)."""
  return _complemented.passed_with_rest(
      node, flow.origin.get(id(node), step.scope)) or (
      _complement_subset.rest_trained(flow, node, step, steps)) or (
      _run_together.trained_together(step, steps)) or (
      _covering_tests.keeps_every_name(step.var_list, step.scope))


def _other_off(analysis: Analysis, step: Step, steps: List[Step],
               node: ast.expr) -> bool:
  """Whether another step of the function, over another list, makes an
  op that runs only off the options' defaults (`_run_off`): by default
  what it would train stays fixed, so the step's scope is no whole model
  trained beside another; or its filters leave out layers built in
  scopes of their own that feed the kept ones (`_scopes_untrained`), or
  layers one helper builds under names its caller gives
  (`_some_layers`: `node` is the step's filter)."""
  return _some_layers(analysis, step, node) or (
      _scopes_untrained.leaves_scopes(step, steps)) or (
      _wider_step.trained_wider(step, steps)) or any(other.scope is step.scope and other.var_list is not None and (
      step.var_list is None or ast.unparse(other.var_list) != ast.unparse(
          step.var_list)) and _run_off.off_by_default(
              analysis.project, other.call, other.scope)
             for other in steps if other is not step)


def _measured_by_network(analysis: Analysis, step: Step) -> bool:
  """Whether the step's loss is measured by a network it does not train
  (`_loss_network`: a perceptual loss's classifier, a teacher)."""
  found = _loss_of(analysis, step)
  return found is not None and (_loss_network.runs_one(
      found[1], found[0], STEPS) or _measuring_net.only_measure_left_out(
          analysis.flow, found[1], found[0], step.var_list, step.scope))


_COMPREHENSIONS = (ast.ListComp, ast.DictComp, ast.GeneratorExp)


def _a_whole(analysis: Analysis, node: ast.expr, step: Step) -> bool:
  """Whether the filter keeps a whole object (`_whole_object`, or the
  object's own list read whole: `[d[k] for k in d]` of a method's `{v.name:
  v for v in t_vars if self.name in v.name}`; or, for a
  step over one class's list, every name its makers are given:
  `_named_makers`), one part of a partition each of whose parts is
  applied (`_partition`), a network's registry of every layer's
  variables (`_registry`), or scopes that cover every root scope of the
  model (`_covering`)."""
  flow = analysis.flow
  home = flow.origin.get(id(node), step.scope)
  label = step.labels.get("filtered")  # An object's list: its own scope?
  return _whole_object(analysis, node, step) or (isinstance(
      node, ast.Attribute) and isinstance(label, ast.Call) or isinstance(
          label, _COMPREHENSIONS) and label is not node and not (
              _self_scope.builds_unscoped(analysis.project, flow.origin.get(
                  id(label), step.scope)))) and (
          _self_scope.keeps_own_scope(analysis.project, flow, label, (
              flow.origin.get(id(label), step.scope)))) or (
                  _partition.partitioned(
      node, home, analysis.project)) or _registry.whole_registry(
      flow, node, home, step.labels.get("var"), step.scope) or (
          _asserted.every_kept(node, home)) or _covering.covers_roots(
              analysis.project, node, home) or not step.also and (
                  _named_makers.keeps_every_made(analysis.project, node, home))


def _by_network(analysis: Analysis, step: Step) -> bool:
  """Whether the step's loss is measured by a network it does not train,
  or reads only the networks its filter keeps."""
  return _measured_by_network(analysis, step) or _own_network(
      analysis, step)


def _own_network(analysis: Analysis, step: Step) -> bool:
  """Whether the step's loss reads only networks built under the scopes
  its filter keeps (`_own_loss`: a metric's classifier trained alone), or
  only its object's layers named with the word it keeps (`_named_layers`:
  a layer's test-time update of its predictor)."""
  found = _loss_of(analysis, step)
  chosen = step.labels.get("filtered")
  return found is not None and (_own_loss.reads_only_kept(
      analysis.flow, chosen, found[0], found[1], analysis.typed) or (
          _named_layers.reads_only_named(chosen, found[0], found[1])))


def _loss_of(analysis: Analysis, step: Step
             ) -> Optional[Tuple[ast.expr, _scopes.Scope]]:
  """The loss the step's gradient call differentiates, with its scope."""
  found = _gradient_call(analysis, step)
  if found is None:
    return None
  call, scope = found
  loss = call.args[0] if call.args else next(
      (k.value for k in call.keywords if k.arg in _LOSS_KEYWORDS), None)
  return (loss, scope) if loss is not None else None


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
