"""Whether a filter's other half is trained: lists split apart, a
complement trained beside it, other trainings of the same variables, the
groups of one loss, and target networks synced from a trained one."""

from __future__ import annotations

import ast
from typing import (
    Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import has_var as _has_var
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._sources import _flag_param
from tfpartial._tools.scan.idioms._sources import _flagged
from tfpartial._tools.scan.idioms._sources import _handed_part
from tfpartial._tools.scan.idioms._sources import _step_lists
from tfpartial._tools.scan.idioms._sources import _unbound_lists
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, Step, _OWN_VARIABLES, _deep_nodes, var_list_of)
from tfpartial._tools.scan.idioms._sources import _groups
from tfpartial._tools.scan.idioms._wholes import _cut_before_split
from tfpartial._tools.scan.idioms._wholes import _flag_only
from tfpartial._tools.scan.idioms._wholes import _forwarded
from tfpartial._tools.scan.idioms._wholes import _shared_part
from tfpartial._tools.scan.idioms._wholes import _rebound
from tfpartial._tools.scan.idioms._wholes import _twin_steps
from tfpartial._tools.scan.idioms._wholes import _whole_elsewhere


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


def _split(step: Step, steps: List[Step], groups: Dict[str, Set[str]]
           ) -> bool:
  """Whether another step of the module trains other variables for
  another loss (a GAN's generator and discriminator, an actor and a
  critic, a policy and its value function): between them they train
  everything; a filter of one training is one step's, or several steps'
  of the same loss (layers at two learning rates, two stages)."""
  mine = groups.get(step.loss or "", set())
  return any(not mine & groups.get(other.loss or "", set())
             for other in _each_other_training(step, steps))


def _shares_lists(analysis: Analysis, step: Step, steps: List[Step],
                  node: ast.AST) -> bool:
  """Whether another loss trains lists overlapping this step's (an actor
  and a critic sharing a trunk), and the filter leaves out no name by
  itself (`'beta' not in v.name` does), nor were the lists drawn from
  one list cut before the split (`_cut_before_split`): between them the
  losses train everything."""
  others = _other_trainings(step, steps)
  return any(not halves(other, steps) for other in others) and not (
      _drops_a_name(node)) and not _cut_before_split.cut_before(
          analysis, step, others)


def halves(step: Step, steps: List[Step]) -> bool:
  """Whether the step's list joins the weights of two parts of the model
  its function runs (`model.trunk.trainable_variables +
  model.heads['human'].trainable_variables`), or another step of its
  function minimises the same loss over another part (the trunk's
  weights to one optimizer, a head's to another): between them the loss
  trains the model whole, not one half of it."""
  mine = _part_lists(step)
  if not mine:
    return False
  return len(mine) > 1 or any(
      other is not step and other.scope is step.scope and (
          other.loss == step.loss) and _part_lists(other) - mine
      for other in steps)


def _part_lists(step: Step) -> Set[str]:
  """The weights of parts of a model its function runs whole that the
  step's list is joined from (`model.trunk.trainable_variables`, labelled
  by `Flow._run_part`), as text; none unless the filter is one of them."""
  part = step.labels.get("filtered")
  listed = _rebound.at_step(step.var_list, step.call, step.scope) or (
      step.var_list)
  if step.loss is None or listed is None or not any(
      part is n for n in _added(listed)):
    return set()
  return {ast.unparse(n) for n in _added(listed) if isinstance(
      n, ast.Attribute) and n.attr in _names.VARIABLE_ATTRIBUTES and (
          isinstance(n.value, (
              ast.Attribute, ast.Subscript))) and not _names.chosen_layers(
                  n.value)}


def _added(node: ast.AST) -> List[ast.AST]:
  """The lists `a + b + c` joins; `node` itself when it joins none."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return _added(node.left) + _added(node.right)
  return [node]


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
  return list(_each_other_training(step, steps))


def _each_other_training(step: Step, steps: List[Step]) -> Iterator[Step]:
  """`_other_trainings` one by one, each weighed only when asked: a
  question any one other answers (`_split`) reads no more of a class of
  many steps than it needs."""
  if step.loss is None or step.var_list is None or _flag_only.flags(
      step.scope) and _flag_only.extended_under_flag(
          step.call, step.scope, step.loss, [
              (o.call, o.scope, o.loss, o.var_list) for o in steps]):
    return  # A flag trains one more list for the loss: not a pair's.
  mine = _list_text(step)
  lists: Optional[Dict[int, FrozenSet[str]]] = None
  for other in steps:
    if other.loss is None or other.loss == step.loss or (
        other.var_list is None) or other.scope is step.scope and (
            other.section != step.section) or not _a_partner(other) or (
                _list_text(other) == mine):
      continue
    if other.scope is step.scope:  # No twin, no whole elsewhere.
      if _shared_part.left_out_by_both(
          step.labels.get("filtered"), other.labels.get("filtered"),
          step.scope.node):
        continue  # Both fine-tune one part: neither trains the rest.
      if not _forwarded.forwarded(other.call, other.scope, step.scope):
        yield other
      continue
    lists = lists or _step_lists.once_per_list(steps, _twin_steps.lists_of)
    if _twin_steps.twins(step, other, lists) or (
        _forwarded.forwarded(other.call, other.scope, step.scope)) or (
            _whole_elsewhere.whole_elsewhere(
                step.labels.get("filtered"), step.scope, other.labels,
                other.scope) or _whole_elsewhere.model_elsewhere(
                    step.labels, step.scope, other.labels, other.scope) or (
                        _whole_elsewhere.cut_elsewhere(
                            step.labels.get("vararith"), step.scope,
                            other.labels, other.scope))):
      continue
    yield other


def _a_partner(step: Step) -> bool:
  """Whether a step may be another's other half by what it is alone: it
  chooses a group (`_trains`), moves no fast weights, runs, and its list
  is a group: worked out once per step (every other step asks)."""
  if _a_partner not in step.memo:
    step.memo[_a_partner] = _trains(step) and not (
        _fast_weights(step) or _groups.inner_loop(step.call, step.scope) or (
            _flagged.never_run(step.call, step.scope)) or (
                _unbound_lists.no_group(step.var_list, step.labels,
                                        step.scope)))
  return bool(step.memo[_a_partner])


def _list_text(step: Step) -> str:
  """A step's list as text, by the value its name holds at the step
  (unparsed once per step)."""
  if _list_text not in step.memo:
    step.memo[_list_text] = _rebound.as_text(
        step.var_list, step.call, step.scope)
  return str(step.memo[_list_text])


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
      value = _rebound.at_step(step.var_list, step.call, step.scope) or (
          step.var_list)
      texts = _summands(value)
      if texts == [ast.unparse(value)]:  # One list: its object's own.
        texts = [_rebound.as_text(step.var_list, step.call, step.scope)]
      found.setdefault(step.loss, set()).update(texts)
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
  train in neither), or the members of a list that none keeps (`v not in
  model.inception_variables` for the comprehension's own item `v`, cut
  before a split: `_cut_before_split`); only `in` keeps and `not in`
  drops."""
  kept: Set[str] = set()
  dropped: Set[str] = set()
  # Lists apart from names: a list `L` and a name spelled "L" differ.
  kept_lists: Set[str] = set()
  dropped_lists: Set[str] = set()
  for each in hits:
    if id(each.scope) != scope:
      continue
    nodes = list(_scopes.walk(each.node))
    items = {n.target.id for n in nodes if isinstance(
        n, ast.comprehension) and isinstance(n.target, ast.Name)}
    for node in nodes:
      if isinstance(node, ast.Compare) and isinstance(
          node.left, ast.Constant) and isinstance(node.left.value, str):
        negated = any(isinstance(op, ast.NotIn) for op in node.ops)
        (dropped if negated else kept).add(node.left.value)
      elif isinstance(node, ast.Compare) and len(node.ops) == 1 and (
          isinstance(node.ops[0], (ast.In, ast.NotIn))) and isinstance(
              node.left, ast.Name) and node.left.id in items and (
                  isinstance(node.comparators[0], (ast.Name, ast.Attribute))):
        negated = isinstance(node.ops[0], ast.NotIn)
        (dropped_lists if negated else kept_lists).add(
            ast.unparse(node.comparators[0]))
  del hit
  return bool(dropped - kept) or bool(dropped_lists - kept_lists)


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


def _stepped_here(target: ast.expr, scope: _scopes.Scope,
                  stepped: Set[Tuple[int, str]]) -> bool:
  """Whether a step of the write's own function trains the list the
  written variable is an entry of (`tf.assign(new[0], old[-4])` beside
  `minimize(loss, var_list=new)`): a group started from copied values
  and trained, not a target network (no step trains one). `stepped`
  holds each step's function and list, as text."""
  while isinstance(target, ast.Subscript):
    target = target.value
  return (id(scope), ast.unparse(target)) in stepped


def _synced_modules(analysis: Analysis, by_module: Dict[int, List[Step]]
                    ) -> Set[int]:
  """Modules that write into a filtered group of variables (a target
  network updated from the trained one), unless a step trains a part of
  a scope the module reads whole (`_groups.part_of_copied`)."""
  found = set()
  stepped = {(id(step.scope), ast.unparse(step.var_list))
             for steps in by_module.values() for step in steps
             if step.var_list is not None}
  for scope, call in analysis.calls_named(_writes.WRITE_CALLS):
    if scope.name in _names.OPTIMIZER_METHODS:
      continue  # An optimizer's own update of what it trains.
    parts = _writes.target_and_value(call)
    if parts and _stepped_here(parts[0], scope, stepped):
      continue  # A new layer started from another's values, then trained.
    if parts and "filtered" in analysis.flow.labels(parts[0], scope) \
        and _has_var(analysis.flow.labels(parts[1], scope)) and (
            _groups.copied_from(analysis.flow, parts[0], parts[1], scope)):
      # Copied from other variables (not a proximal step of its own).
      found.add(id(analysis.module(scope)))
  return {module for module in found if not _groups.part_of_copied(
      [(step.var_list, step.scope) for step in by_module.get(module, ())
       if step.var_list is not None])}
