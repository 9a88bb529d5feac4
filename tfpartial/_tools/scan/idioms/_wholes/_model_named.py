"""Whether a filter names the whole model: the scopes the project opens
around it, the scope an object is built in, and the objects a step trains
whole."""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _joined_text
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._sources import _unscoped
from tfpartial._tools.scan.idioms._sources._origins import _origin
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _class_of, _opened_here)
from tfpartial._tools.scan.idioms._wholes import _built_outside
from tfpartial._tools.scan.idioms._wholes import _caller_scope
from tfpartial._tools.scan.idioms._wholes import _given_scope
from tfpartial._tools.scan.idioms._wholes import _helper_inputs
from tfpartial._tools.scan.idioms._wholes import _named_scopes
from tfpartial._tools.scan.idioms._wholes import _worker_pairs
from tfpartial._tools.scan.idioms._wholes import _run_outside
from tfpartial._tools.scan.idioms._wholes import _model_scope
from tfpartial._tools.scan.idioms._wholes import _own_scopes
from tfpartial._tools.scan.idioms._wholes import _self_scope


def _kept_roots(node: ast.AST) -> Set[str]:
  """The root scopes a filter keeps by their literal names."""
  return {n.value.strip("/").split("/")[0] for n in _scopes.walk(node)
          if isinstance(n, ast.Constant) and isinstance(n.value, str)
          and n.value}


def _whole_object(analysis: Analysis, node: ast.AST, step: Step) -> bool:
  """Whether the filter keeps every scope its class builds its own
  variables under (`_own_scopes`; unless it builds a model outside them,
  `_built_outside`), or the scope every caller builds the
  model it is given under, or is a helper called without the scopes it
  would filter by (`_model_scope`), or the scope its function hands the
  builder that builds only under it (`_given_scope`), or the scope every
  caller opens around the model it builds (`_caller_scope`)."""
  home = analysis.flow.origin.get(id(node), step.scope)
  return _own_scopes.keeps_all(analysis.flow, node, home) and not (
      _built_outside.built_outside(analysis, _kept_roots(node), home)) and (
          not _run_outside.run_outside(analysis, _kept_roots(node), home)) or (
      _model_scope.trains_model_scope(analysis.flow, node, home)) or (
          _model_scope.defaults_to_all(analysis.flow, node, home)) or (
              _self_scope.keeps_own_scope(analysis.project, analysis.flow, node,
                                          home)) or (
                  _given_scope.given_to_builder(analysis.flow, node, home)) or (
                  _unscoped.never_scoped(analysis.flow, node, home)) or (
                      _caller_scope.opened_by_callers(analysis.project, node,
                                                      home))


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
        _names_the_model(parent, opened, None, flow.origin.get(
            id(parent), home))):
      break
    node = parent
  return node


def _root_scopes(analysis: Analysis) -> Set[str]:
  """The literal scopes the project opens outside any other scope: the
  scopes whole models are built under."""
  opened: Set[str] = set()
  project = analysis.project
  named = _named_scopes.helpers(project)
  given: List[Tuple[_project.Module, ast.Call, str]] = []
  for module in project.modules:  # The model's file may hold no step.
    text = module.source.text
    if "_scope(" in text and project.parsed(module) and (
        module.tree is not None):
      _open_scopes(module.tree.body, False, opened)
      opened |= _named_scopes.passed(project, module, named) if (
          named) else set()  # `sdae(x, name="ae")`: `_named_scopes`.
    elif any(f"{name}(" in text for name in named) and project.parsed(
        module) and module.tree is not None:
      given += [(module, call, name) for call, name in _named_scopes.given(
          project, module, named)]
  if not opened and len({name for _, _, name in given}) == 1 and (
      _named_scopes.all_scoped(project)) and all(
          _helper_inputs.fed_inputs(project, module, call)
          for module, call, _ in given):
    # A file that opens no scope gives a helper the one name the whole
    # project builds under (`vs_multilayer.vs_multilayer(x, "APN")`,
    # the helper opening `variable_scope(name)`), fed its function's
    # inputs, and no layers call makes a variable outside a scope: the
    # model's root. Two names given so (a backbone and a head), a layer
    # made outside any scope, or a helper fed another call's output (a
    # backbone built by a library: `_helper_inputs`) are parts.
    opened |= {name for _, _, name in given}
  # `if scope != 'global':` around a worker's step: `_worker_pairs`.
  return opened | _worker_pairs.guarded_scopes(project)


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
              i.context_expr) in _names.TF_SCOPES_OR_CLASS for i in statement.items)
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
  if not (isinstance(expr, ast.Call) and _names.call_name(expr) in _names.TF_SCOPES_OR_CLASS
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


def _selves(opened: Set[str]) -> Set[str]:
  """The objects' own scopes among `opened` (`self.scope`), read once per
  set: the same set of the project's scopes comes with every step."""
  if _SELVES[0] is not opened or _SELVES[1] != len(opened):
    _SELVES[:] = [opened, len(opened), {o[len(_SELF_SCOPE):] for o in opened
                                        if o.startswith(_SELF_SCOPE)}]
  found = _SELVES[2]
  assert isinstance(found, set)
  return found


# The last set of opened scopes asked of `_selves`, its size and its
# answer (the set is held, so that no other set can come to have its id).
_SELVES: List[object] = [None, 0, set()]


def _built_scope(flow: Flow, node: ast.AST, scope: _scopes.Scope,
                 opened: Set[str]) -> bool:
  """Whether the filter is an object's own variables by the scope it
  builds them under (`get_collection(TRAINABLE_VARIABLES, self.scope)`,
  or a method returning that): a whole model (a GAN's discriminator, a
  policy), not a part of one."""
  selves = _selves(opened)
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


def _taken_away(node: ast.AST, step: Optional[Step]) -> bool:
  """Whether `node` is what the list a step trains takes away from the
  rest: the right of `every - frozen`, the argument of
  `every.difference(frozen)` (in `list()`, `set()`), or what a name read
  there is assigned in the step's function."""
  kept = step.labels.get("filtered") if step is not None else None
  while isinstance(kept, ast.Call) and _names.call_name(kept) in {
      "list", "set", "sorted", "tuple"} and len(kept.args) == 1:
    kept = kept.args[0]
  if isinstance(kept, ast.BinOp) and isinstance(kept.op, ast.Sub):
    taken: List[ast.AST] = [kept.right]
  elif isinstance(kept, ast.Call) and isinstance(
      kept.func, ast.Attribute) and kept.func.attr == "difference":
    taken = list(kept.args)
  else:
    return False
  read = [n for t in taken for n in ast.walk(t)]
  return any(n is node for n in read) or step is not None and any(
      d.value is node for n in read if isinstance(n, ast.Name)
      for d in step.scope.defs.get(n.id, ()))


def _names_the_model(node: ast.AST, opened: Set[str],
                     step: Optional[Step] = None,
                     home: Optional[_scopes.Scope] = None) -> bool:
  """Whether a filter selects by literal scopes that are all model roots
  (`'model' in v.name`; not `'bert' not in v.name`, which leaves the
  model out and trains what was added on top; nor `filter_variables(
  tvars, exclude_patterns=['bert'])` nor `itertools.filterfalse(...)`,
  the same by keyword or by function; nor what the list `step` trains
  takes away: `set(every) - set(frozen)`); a scope named in `home` (the
  function the filter is in) by a local set to the current scope
  (`_network_scope`)."""
  if _taken_away(node, step) or _names.names_left_out(node):
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
                 for word in _identifiers(chosen)) or _network_scope(
                     chosen, home)
    if isinstance(chosen, ast.Constant) and isinstance(chosen.value, str):
      # `get_collection('trainable_variables', 'graph')`: the key written
      # as a string is no scope.
      literals = [chosen.value]
  return bool(literals) and all(
      s.strip("/").split("/")[0] in opened and "/" not in s.strip("/")
      for s in literals)


def _network_scope(chosen: ast.AST, home: Optional[_scopes.Scope]) -> bool:
  """Whether `chosen` is a local of `home` that every assignment sets to
  the scope the model is being built in or to a network's literal name
  (`current_scope = 'network'` at the root, else `get_name_scope() +
  '/network'`): the whole network the function builds, not a part (not
  `get_variable_scope().name + '/decoder'`: every string the value adds
  must name a network, pieces written next to each other read as one:
  `scope + '/' + 'network'`, `'{}/{}'.format(scope, 'network')`)."""
  if home is None or not isinstance(chosen, ast.Name):
    return False
  values = [d.value for d in home.defs.get(chosen.id, ())]
  return bool(values) and all(
      isinstance(v, ast.Constant) and _network_name(v) or any(
          word in _CURRENT_SCOPE for word in _identifiers(v)) and all(
              isinstance(n.value, str) for n in _scopes.walk(v)
              if isinstance(n, ast.Constant)) and all(
                  _network_text(text) for text in _joined_text.runs(v))
      for v in values)


def _network_name(value: ast.Constant) -> bool:
  """Whether `value` is a string whose last scope names a whole network
  (`'/network'`, `'policy'`)."""
  return isinstance(value.value, str) and _network_text(value.value)


def _network_text(text: str) -> bool:
  """Whether the last scope of `text` names a whole network; a text
  joined from pieces (`'/' + 'network'`) is read whole (`_joined_text`)."""
  return bool(_WHOLE_NETWORK.search(text.strip("/").split("/")[-1]))
