"""Parts of a model the flow shows no step trains: a class's own parts, a
part between two trained ones, a swapped, stacked or staged part, groups
and upstream networks left out."""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._runs import _stage_values
from tfpartial._tools.scan.idioms._runs import _stages
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _class_of, _deep_nodes, _loss_node)
from tfpartial._tools.scan.idioms._wholes import _between
from tfpartial._tools.scan.idioms._wholes import _composed
from tfpartial._tools.scan.idioms._wholes import _grown_models
from tfpartial._tools.scan.idioms._wholes import _part_of_self
from tfpartial._tools.scan.idioms._wholes import _restored_group
from tfpartial._tools.scan.idioms._wholes import _stacked
from tfpartial._tools.scan.idioms._wholes import _swapped
from tfpartial._tools.scan.idioms._wholes import _untaped
from tfpartial._tools.scan.idioms._wholes._model_named import _identifiers


def _left_out_by_flow(analysis: Analysis, steps: List[Step]
                      ) -> List[_idiom.Hit]:
  """The steps whose list no filter chooses, but what runs around them
  says some variables are left out."""
  return (_groups_left_out(analysis, steps) + _upstream_left_out(
      analysis, steps) + _parts_left_out(analysis, steps) +
          _composed.composed_left_out(analysis, steps) + _staged_left_out(
              analysis, steps) + _stacked_left_out(analysis, steps) +
          _between_left_out(analysis, steps) +
          _swapped_left_out(analysis, steps) +
          _self_parts_left_out(analysis, steps) +
          _restored_group.left_out(analysis, steps) + [
              _idiom.Hit(first, scope, call, {"filtered": first})
              for first, (call, scope, _) in _grown_models.left_out(
                  [(s.call, s.scope, s.var_list) for s in steps])] + [
                      _idiom.Hit(node, scope, call, {"filtered": node})
                      for node, scope, call in _stage_values.grown_apart(
                          [(s.call, s.scope, s.var_list) for s in steps])])


def _self_parts_left_out(analysis: Analysis, steps: List[Step]
                         ) -> List[_idiom.Hit]:
  """A method's step training one part of its class (`self.head`) run on
  another part's output that no step of the class trains
  (`_part_of_self`): the part below is left out."""
  hits: Dict[Tuple[int, str], _idiom.Hit] = {}
  by_class = _ByClass(steps, lambda other: _part_of_self.trained_parts(
      _alternatives(analysis, other) or [other.var_list]
      if other.var_list is not None else [ast.Name("self")]))
  for step in steps:
    info = _class_of(step.scope)
    part = _part_of_self.part_trained(step.scope, step.var_list)
    if info is None or part is None:
      continue
    trained = by_class.of_others(info, step) - {part[0]}
    # Run before the step's tape opens: no gradient of it reaches them.
    trained |= _untaped.run_before_tape(step.call, step.scope, info)
    method = _scopes.enclosing_method(step.scope)
    if _part_of_self.left_below(analysis.project, info, part[0], trained,
                                analysis.module(step.scope).source.text,
                                method.node if method else None):
      hits.setdefault((id(info), part[0]), _idiom.Hit(
          part[1], step.scope, step.call, {"filtered": part[1]}))
  return list(hits.values())


class _ByClass:
  """What the steps of each class train, by `read` of each step, kept by
  its call: read once per class, on the first step of it asking."""

  def __init__(self, steps: List[Step], read: Callable[[Step], Set[str]]):
    self._steps, self._read = steps, read
    # id(class) -> (id(call) -> what its steps read, in how many calls'
    # steps each name is read).
    self._classes: Dict[int, Tuple[Dict[int, Set[str]], Dict[str, int]]] = {}

  def of_others(self, info: _scopes.ClassInfo, step: Step) -> Set[str]:
    """What the steps of `info` read but for those of `step`'s call."""
    if id(info) not in self._classes:
      by_call: Dict[int, Set[str]] = {}
      for other in self._steps:
        if _class_of(other.scope) is info:
          by_call.setdefault(id(other.call), set()).update(self._read(other))
      counts: Dict[str, int] = {}
      for names in by_call.values():
        for name in names:
          counts[name] = counts.get(name, 0) + 1
      self._classes[id(info)] = (by_call, counts)
    by_call, counts = self._classes[id(info)]
    own = by_call.get(id(step.call), set())
    return set(counts) - {name for name in own if counts[name] == 1}


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
      home = _composed.function_of(step.scope)
      trained.setdefault(id(home.node), set()).update(
          _identifiers(step.var_list))
      trained.setdefault(id(analysis.module(step.scope)), set()).update(
          n.attr for n in _scopes.walk(step.var_list) if isinstance(
              n, ast.Attribute) and isinstance(n.value, ast.Name) and (
                  n.value.id == "self"))
  seen: Set[int] = set()
  makers: Dict[str, bool] = {}
  built: Dict[int, Dict[str, str]] = {}  # A function -> its groups.
  for step in steps:
    home = _composed.function_of(step.scope)
    if step.var_list is None or id(home.node) in seen or (
        _names.call_name(step.call) in {"gradients", "gradient"}):
      continue  # An inner loop's gradient moves fast weights, no variable.
    if id(home.node) not in built:
      built[id(home.node)] = _composed.constructed(home, analysis, makers)
    groups = built[id(home.node)]
    mine = set(_identifiers(step.var_list))
    chosen = {maker for name, maker in groups.items() if name in mine}
    if not chosen:
      continue
    module = analysis.module(step.scope)
    left = [name for name, maker in groups.items()
            if maker not in chosen and name not in trained[id(home.node)]
            and name not in trained.get(id(module), ())
            and _composed.read_besides(name, home)
            and not _composed.written(name, module, analysis)]
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
  # What the steps of a function train, the steps of a module: read
  # once, on the first step asking.
  trained_in: Dict[int, Set[Optional[str]]] = {}
  of_module: Dict[int, Dict[int, Set[str]]] = {}
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
    if id(step.scope) not in trained_in:
      trained_in[id(step.scope)] = {
          _names.dotted(n) for other in steps
          if other.scope is step.scope and other.var_list is not None
          for value in _composed.var_list_values(other)
          for n in _scopes.walk(value)}
    trained = trained_in[id(step.scope)]
    module = analysis.module(step.scope)
    text = module.source.text
    if id(module) not in of_module:
      of_module[id(module)] = _composed.applied_names([
          other for other in steps if analysis.module(other.scope) is module])
    mine = of_module[id(module)]
    for upstream in _composed.feeding(step.scope, owner):
      if upstream not in trained and not _composed.own_step(
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
  by_class = _ByClass(steps, lambda other: {
      n.attr for value in _alternatives(analysis, other)
      for n in _scopes.walk(value) if isinstance(n, ast.Attribute)}
                      if other.var_list is not None else set())
  for step in steps:
    info = _class_of(step.scope)
    if info is None or not isinstance(step.var_list, ast.expr):
      continue
    others = by_class.of_others(info, step)
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
    return [_bound(d) for d in step.scope.defs[chosen.id]]
  # `encoder_params + proj_head_params`: what each local name holds too.
  return [chosen] + [_bound(d) for node in ast.walk(chosen) if isinstance(
      node, ast.Name) for d in step.scope.defs.get(node.id, [])]


def _bound(definition: _scopes.Def) -> ast.expr:
  """The value a name's assignment binds: element i of `a, b = x, y`."""
  value = definition.value
  if definition.part is not None and isinstance(value, (
      ast.Tuple, ast.List)) and len(value.elts) == definition.part[1]:
    return value.elts[definition.part[0]]
  return value


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
