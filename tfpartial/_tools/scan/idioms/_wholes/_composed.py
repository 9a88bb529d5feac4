"""Models composed of others: a network run under another's step, what feeds
it, which function constructs and writes its variables.

The functions without an underscore are what `_left_out` reads of a
step's function and of its models (`function_of`, `var_list_values`,
`feeding`, `own_step`, `constructed`, `read_besides`, `written`) besides
the rule itself (`composed_left_out`)."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _OWN_VARIABLES, _deep_nodes, _trainable_variable)


def composed_left_out(analysis: Analysis, steps: List[Step]
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
    by_home.setdefault(id(function_of(step.scope).node), []).append(step)
  # What the steps of each function train, read on the first step of it
  # asking; what every function's applied steps train.
  trained_in: Dict[int, Set[str]] = {}
  applied: List[Dict[int, Set[str]]] = []
  for step in steps:
    owner = _model_trained(step)
    if owner is None or not isinstance(step.var_list, ast.expr) or (
        _names.call_name(step.call) in {"gradient", "gradients"}) or (
            owner in step.scope.loops):
      continue  # A bare gradient (a meta-learner's inner update), a loop
      # over the groups (each trained).
    home = function_of(step.scope)
    if id(home.node) not in trained_in:
      trained_in[id(home.node)] = {
          n.id for other in by_home[id(home.node)]
          if other.var_list is not None for value in var_list_values(other)
          for n in _scopes.walk(value) if isinstance(n, ast.Name)}
    trained = trained_in[id(home.node)]
    text = analysis.module(step.scope).source.text
    for upstream in _run_under(analysis, home, owner):
      if upstream not in home.params and not re.search(
          re.escape(upstream) + r"\.(trainable_variables|trainable_weights|"
          r"variables|weights|get_weights|layers)\b", text) or (
              _NOT_A_MODEL.search(upstream)):
        continue  # A function making the input, not a model.
      applied = applied or [applied_names(steps)]
      if upstream not in trained and not own_step(
          applied[0], upstream, owner) and not re.search(
          re.escape(upstream) + r"\.(set_weights\b|variables\b|"
          r"trainable\s*=\s*False)", text):
        hits.setdefault((id(home.node), owner), _idiom.Hit(
            step.var_list, step.scope, step.call,
            {"filtered": step.var_list}))
        break
  return list(hits.values())


def own_step(applied: Dict[int, Set[str]], upstream: str, owner: str
             ) -> bool:
  """Whether a step (of those `applied_names` read) trains `upstream`
  without `owner`: the upstream model has its own step (a GAN's
  generator, the encoder a critic's update trains), not one shared with
  the owner (a meta-learner's outer step training the representation and
  the head, or a copy of the head, `tln_initial`). A bare gradient is not
  a step: the outer step takes one per part, then applies them together."""
  return any(upstream in held and not any(
      name == owner or name.startswith(owner + "_") for name in held)
             for held in applied.values())


def applied_names(steps: List[Step]) -> Dict[int, Set[str]]:
  """A function -> the names its applied steps train (a fine-tuning phase
  training the owner and the upstream at two optimizers is not one own
  step); read once for every step asking `own_step`."""
  names: Dict[int, Set[str]] = {}
  for step in steps:
    if step.var_list is None or _names.call_name(step.call) in {
        "gradient", "gradients"}:
      continue
    names.setdefault(id(function_of(step.scope).node), set()).update(
        _names.dotted(n) or "" for value in var_list_values(step)
        for n in _scopes.walk(value))
  return names


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
  both to (`compute_loss(x, y, tln, rln)` running `tln(rln(x))`); found
  once per function and model (each step training the model asks)."""
  return home.once((_run_under, owner, 0),
                   lambda: _read_run_under(analysis, home, owner))


def _read_run_under(analysis: Analysis, home: _scopes.Scope, owner: str
                    ) -> List[str]:
  found: List[str] = []
  calls = home.once((_calls_of_names, None, 0), lambda: _calls_of_names(home))
  for node, scope, direct in calls.get(owner, ()):
    if direct:
      found += _inputs_of(node, scope)
      continue
    names = [a.id if isinstance(a, ast.Name) else "" for a in node.args]
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


def _calls_of_names(home: _scopes.Scope
                    ) -> Dict[str, List[Tuple[ast.Call, _scopes.Scope, bool]]]:
  """What `_run_under` reads of a function, once per function (each step
  asks): by name, in order, the calls of it (direct) and the calls that
  pass it beside another argument to a helper (not direct)."""
  found: Dict[str, List[Tuple[ast.Call, _scopes.Scope, bool]]] = {}
  for scope in home.all():
    for node in scope.nodes:
      if not isinstance(node, ast.Call):
        continue
      called = node.func.id if isinstance(node.func, ast.Name) else None
      if called is not None:
        found.setdefault(called, []).append((node, scope, True))
      if len(node.args) < 2:
        continue
      for name in dict.fromkeys(a.id for a in node.args
                                if isinstance(a, ast.Name)):
        if name != called:
          found.setdefault(name, []).append((node, scope, False))
  return found


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


def var_list_values(step: Step) -> List[ast.AST]:
  """A step's list, and the values of the local name holding it."""
  chosen = step.var_list
  assert chosen is not None
  if isinstance(chosen, ast.Name):
    return [chosen] + [d.value for d in step.scope.defs.get(chosen.id, [])]
  return [chosen]


def feeding(scope: _scopes.Scope, owner: str) -> List[str]:
  """The `self.` sub-models whose output, by a local name, the function
  passes into `owner` (`h = self.encoder_(x, training=False)`, then
  `self.task_(h)`)."""
  outputs, calls = scope.once((_runs, None, 0), lambda: _runs(scope))
  found: List[str] = []
  for node in calls.get(owner, ()):
    found.extend(outputs[a.id] for a in node.args if isinstance(
        a, ast.Name) and outputs.get(a.id, owner) != owner)
    found.extend(_run_inline(a, owner) for a in node.args
                 if _run_inline(a, owner))
  return found


def _runs(scope: _scopes.Scope
          ) -> Tuple[Dict[str, str], Dict[str, List[ast.Call]]]:
  """What `feeding` reads of a function, once per function (each step
  asks): the Keras sub-model (`self.x` run with `training=`) whose output
  each local name last holds, and the calls of each dotted callee."""
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
    if callee.startswith("self.") and callee.count(".") == 1 and any(
        k.arg == "training" for k in getattr(value, "keywords", ())):
      outputs[name] = callee  # A Keras model run, not a helper.
  calls: Dict[str, List[ast.Call]] = {}
  for node in _deep_nodes(scope):
    called = _names.dotted(node.func) if isinstance(node, ast.Call) else None
    if called and isinstance(node, ast.Call):
      calls.setdefault(called, []).append(node)
  return outputs, calls


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


def function_of(scope: _scopes.Scope) -> _scopes.Scope:
  """The outermost function `scope` is nested in (or itself), below its
  method, any class or the module."""
  while scope.cls is None and scope.parent is not None and isinstance(
      scope.parent.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    scope = scope.parent
  return scope


def constructed(home: _scopes.Scope, analysis: Analysis,
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


def read_besides(name: str, home: _scopes.Scope) -> bool:
  """Whether `home` (or a function nested in it) reads `name`."""
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Load) for n in _deep_nodes(home))


def written(name: str, module: object, analysis: Analysis) -> bool:
  """Whether a write of the module (`tf.assign(target[k], w[k])`) names
  `name` (a target network synced from the trained one)."""
  for scope, call in analysis.calls_named(_writes.WRITE_CALLS):
    if analysis.module(scope) is module and any(
        isinstance(n, ast.Name) and n.id == name for n in _scopes.walk(call)):
      return True
  return False
