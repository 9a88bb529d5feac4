"""A group of one model's variables that no step trains, beside the
groups the steps do train: the lists one loop or one helper splits the
variables into by name (test-time adaptation's `divide_vars_into_groups`
returning the normaliser's, the batch norm's and the segmenter's groups;
`if 'adaptAx' in v.name: adapt_ax_vars.append(v)` beside
`if 'i2l_mapper' in v.name: i2l_vars.append(v)`). Two steps training two
of the groups for two losses are then not a GAN's halves that between
them train everything: the group neither trains is left out.

Part of `var-list-filter` (it asks, for a step, whether such a group is
left out); the flow of names is read from the step's scope only."""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow

_DEPTH = 4


def left_out(flow: Flow, var_list: ast.AST, scope: _scopes.Scope,
             chosen: List[ast.AST]) -> bool:
  """Whether a sibling group of the lists `var_list` is made from, split
  off by the same loop or returned by the same call, is in none of the
  lists the module's steps train (`chosen`, each read in `scope`)."""
  siblings = _siblings(flow, var_list, scope)
  if not siblings:
    return False
  trained: Set[str] = set()
  for each in chosen:
    trained |= _names_read(each, scope)
  return bool(siblings - trained)


def _names_read(node: ast.AST, scope: _scopes.Scope) -> Set[str]:
  """The names a list is read from, through the names assigned to it
  (`tta_vars = normalization_vars` in any branch)."""
  found: Set[str] = set()
  stack = [(n.id, 0) for n in _scopes.walk(node) if isinstance(n, ast.Name)]
  while stack:
    name, depth = stack.pop()
    if name in found:
      continue
    found.add(name)
    if depth >= _DEPTH:
      continue
    for each in scope.defs.get(name, []):
      stack.extend((n.id, depth + 1) for n in _scopes.walk(each.value)
                   if isinstance(n, ast.Name))
  return found


def _siblings(flow: Flow, var_list: ast.AST, scope: _scopes.Scope
              ) -> Set[str]:
  """The other groups made where the lists `var_list` reads are made."""
  mine = _names_read(var_list, scope)
  found: Set[str] = set()
  for name in mine:
    for each in scope.defs.get(name, []):
      if each.part is not None and isinstance(each.value, ast.Call):
        found |= _unpacked_beside(flow, each.value, scope)
      elif not each.replaces and each.where.loops and _chosen(
          each.value, scope):
        found |= _appended_beside(each.where.loops[-1], scope)
  return found - mine


def _unpacked_beside(flow: Flow, value: ast.Call, scope: _scopes.Scope
                     ) -> Set[str]:
  """The names one call's returned tuple is unpacked into where the
  function of the project it calls returns a list it splits off by name
  (every such list, or none if the call is not followed)."""
  callee = flow.callee(value, scope)
  home = flow.functions.get(id(callee)) if callee is not None else None
  inner = home[1].scope_of(callee) if home and callee is not None else None
  if inner is None:
    return set()
  split: Set[int] = set()
  for returned in inner.nodes:
    if isinstance(returned, ast.Return) and isinstance(
        returned.value, ast.Tuple):
      split |= {index for index, element in enumerate(returned.value.elts)
                if isinstance(element, ast.Name) and any(
                    _chosen(d.value, inner)
                    for d in inner.defs.get(element.id, []))}
  return {name for name, defs in scope.defs.items()
          if any(d.value is value and d.part is not None and (
              d.part[0] in split) for d in defs)}


def _appended_beside(loop: int, scope: _scopes.Scope) -> Set[str]:
  """The lists one loop adds variables to under a test of their names."""
  return {name for name, defs in scope.defs.items()
          if any(not d.replaces and d.where.loops and (
              d.where.loops[-1] == loop) and _chosen(d.value, scope)
                 for d in defs)}


def _chosen(value: ast.AST, scope: _scopes.Scope) -> bool:
  guard = scope.guards.get(id(value))
  return guard is not None and _names.filters_by_name(guard, None, scope)


def among(var_list: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether a list is one of several groups, chosen by a flag
  (`if args.TTA_VARS == "BN": tta_vars = bn_vars elif ...`)."""
  return isinstance(var_list, ast.Name) and sum(
      1 for each in scope.defs.get(var_list.id, [])
      if each.replaces and each.where.blocks) >= 2


_COLLECTIONS = {"get_collection", "trainable_variables", "global_variables"}


def part_of_copied(chosen: List[Tuple[ast.AST, _scopes.Scope]]) -> bool:
  """Whether one step trains the variables of a scope inside a scope its
  function also reads and no step trains (`scope='q_func/col1'` beside
  `scope='q_func'`, a progressive network's new column of the Q network
  whose whole is copied to the target network): one model's part, even
  in a module that syncs a target network."""
  trained: Set[str] = set()
  for var_list, scope in chosen:
    trained |= _scopes_read(var_list, scope)
  for var_list, scope in chosen:
    read = {each for each in map(collection_scope, scope.nodes)
            if each is not None}
    for part in _scopes_read(var_list, scope):
      if any(part.startswith(whole.rstrip("/") + "/") and whole not in (
          trained) for whole in read):
        return True
  return False


def _scopes_read(var_list: ast.AST, scope: _scopes.Scope) -> Set[str]:
  """The literal scopes of the collections a list is read from."""
  found: Set[str] = set()
  for name in _names_read(var_list, scope):
    for each in scope.defs.get(name, []):
      got = collection_scope(each.value)
      if got:
        found.add(got)
  got = collection_scope(var_list)
  return found | ({got} if got else set())


def collection_scope(node: ast.AST) -> Optional[str]:
  """`get_collection(key, scope='q_func')`: 'q_func'."""
  if not isinstance(node, ast.Call) or _names.call_name(
      node) not in _COLLECTIONS:
    return None
  given = [k.value for k in node.keywords if k.arg == "scope"]
  given += node.args[1:2] if _names.call_name(
      node) == "get_collection" else node.args[:1]
  for each in given:
    if isinstance(each, ast.Constant) and isinstance(each.value, str):
      return each.value
  return None


def copied_from(flow: Flow, target: ast.expr, value: ast.expr,
                scope: _scopes.Scope) -> Set[str]:
  """The variables other than the target a write reads (a target
  network's sync reads the trained one), not counting the indices of
  entries (`w[k]`) nor gradients (`fast_weights[k] - lr * gvs[k]`, a
  meta-learner's hand-written step on a dict of weights)."""
  bare = _Unindexed().visit(_copied(value))
  found = _calls.variables_in(flow, bare, scope, {}) - {
      _names.dotted(target) or "", _names.dotted(
          _names.underlying(target)) or ""}
  return {name for name in found if "grad" not in flow.labels(
      ast.Name(name, ast.Load()), scope)}


def _copied(node: ast.expr) -> ast.expr:
  copy = ast.parse(ast.unparse(node), mode="eval").body
  return ast.copy_location(copy, node)


class _Unindexed(ast.NodeTransformer):
  """`w[k]` as `w`."""

  def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
    inner: ast.AST = self.visit(node.value)
    return inner


def run_beside(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call,
               others: Callable[[], Sequence[Tuple[ast.Call,
                                                   Optional[ast.AST]]]]
               ) -> bool:
  """Whether a step trains some of the groups of weights its function
  makes from nothing (`weights = self.construct_resnet_weights()`, no
  data in) and one forward call takes together with another group the
  step leaves out (`forward(x, weights, ss_weights)`, the list
  `ss_weights.values() + fc.values()`: meta-transfer learning's scaling
  and shifting beside the pretrained ResNet): one model, partly trained.
  Steps in the other branch of an `if` (the other mode) do not count;
  `others` gives the function's steps and their lists. A step in a
  function nested in the one that makes the groups (an episode's inner
  loop, `grads = tf.gradients(lossa, list(fc_weights.values()))` in
  `task_metalearn`, run by `tf.map_fn`) reads them from there."""
  trained = _groups_of(chosen, kept=True)
  home = _maker(trained, scope)
  made = {name for name in trained if _made(name, home)}
  if not made or not isinstance(home.node, (ast.FunctionDef,
                                            ast.AsyncFunctionDef)):
    return False
  for other in _steps_beside(call, scope, others()):
    trained |= _groups_of(other)
  # A second group by the same constructor is a copy of the model (a
  # source and its target), not a part of it.
  kinds = {_made_by(name, home) for name in trained}
  for node in ast.walk(home.node):
    if isinstance(node, ast.Call) and node is not call:
      given = {g for arg in node.args for g in _groups_of(arg)}
      given |= _fed_from(node, given & made, scope) if home is not (
          scope) else set()
      if given & made and any(_made(name, home) and _made_by(
          name, home) not in kinds for name in given - trained):
        return True
  return False


def _fed_from(node: ast.Call, kept: Set[str], scope: _scopes.Scope
              ) -> Set[str]:
  """With a closure's groups `kept` given to `node`, the groups given to
  the calls that made its other arguments in `scope`
  (`forward_fc(emb, fc_weights)`, `emb = forward_resnet(x, weights,
  ss_weights)`): the head run on the body's output."""
  if not kept:
    return set()
  found: Set[str] = set()
  for arg in node.args:
    if isinstance(arg, ast.Name):
      for each in scope.defs.get(arg.id, []):
        if isinstance(each.value, ast.Call):
          found |= {g for a in each.value.args for g in _groups_of(a)}
  return found


def _maker(names: Set[str], scope: _scopes.Scope) -> _scopes.Scope:
  """The function whose groups `names` are: `scope`, or the function it
  is nested in when it binds none of them itself (a closure's)."""
  parent = scope.parent
  if names and not any(name in scope.defs or name in scope.params
                       for name in names) and parent is not None and (
                           isinstance(parent.node, (
                               ast.FunctionDef, ast.AsyncFunctionDef))):
    return parent
  return scope


def _made_by(name: str, scope: _scopes.Scope) -> Optional[str]:
  """The method that makes a group (`construct_resnet_weights`)."""
  defs = scope.defs.get(name, [])
  value = defs[0].value if defs else None
  return value.func.attr if isinstance(value, ast.Call) and isinstance(
      value.func, ast.Attribute) else None


def _groups_of(node: Optional[ast.AST], kept: bool = False) -> Set[str]:
  """`a.values() + list(b.values())`, `a`: {'a', 'b'}; with `kept`, only
  the dicts read `.values()` (`a`, `b`)."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return _groups_of(node.left, kept) | _groups_of(node.right, kept)
  dict_read = False
  while isinstance(node, ast.Call) and (_names.call_name(node) in {
      "list", "tuple"} and len(node.args) == 1 or _names.call_name(
          node) == "values" and not node.args):
    dict_read = dict_read or not node.args
    node = node.args[0] if node.args else getattr(node.func, "value", None)
  return {node.id} if isinstance(node, ast.Name) and (
      dict_read or not kept) else set()


def _made(name: str, scope: _scopes.Scope) -> bool:
  """Whether a name is only assigned what a method of the object makes
  from nothing (`self.construct_resnet_weights()`, no data in: weights),
  directly or unpacked from its tuple; not a library's collection
  (`tf.trainable_variables()`) nor a global step."""
  defs = scope.defs.get(name, [])
  return bool(defs) and all(
      isinstance(d.value, ast.Call) and d.replaces and not any(
          isinstance(a, (ast.Name, ast.Attribute, ast.Subscript))
          for a in (*d.value.args, *(k.value for k in d.value.keywords)))
      and isinstance(d.value.func, ast.Attribute) and isinstance(
          d.value.func.value, ast.Name) and d.value.func.value.id == "self"
      for d in defs)


def _steps_beside(call: ast.Call, scope: _scopes.Scope,
                  others: Sequence[Tuple[ast.Call, Optional[ast.AST]]]
                  ) -> List[Optional[ast.AST]]:
  """The lists the function's other steps train, but for the steps in
  another branch of an `if` the step is in."""
  apart: Set[int] = set()
  for node in scope.nodes:
    if isinstance(node, ast.If) and node.orelse:
      body = {id(n) for s in node.body for n in ast.walk(s)}
      orelse = {id(n) for s in node.orelse for n in ast.walk(s)}
      if id(call) in body:
        apart |= orelse
      elif id(call) in orelse:
        apart |= body
  return [chosen for other, chosen in others
          if other is not call and id(other) not in apart]


_APPLIES = frozenset({"apply_gradients", "minimize", "assign", "assign_sub",
                      "assign_add", "scatter_update", "scatter_sub"})


def inner_loop(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether a bare gradient only moves fast weights (`grads =
  tf.gradients(lossa, list(w.values()))`, then `w[k] - lr * grads[k]`
  as new tensors): its function neither applies nor assigns anything nor
  returns the gradients, and they are subtracted (`w - lr * g`): a MAML
  inner loop, not a training of its own."""
  if _names.call_name(call) not in {"gradients", "gradient"}:
    return False
  facts = scope.once((_NamesRead, None, 0), lambda: _NamesRead(scope))
  if facts.applies:
    return False
  return scope.once((inner_loop, id(call), 0),
                    lambda: facts.only_subtracted(call))


class _NamesRead:
  """What `inner_loop` reads of a whole scope, read once per scope (each
  step of the module asks, for every other step)."""

  def __init__(self, scope: _scopes.Scope):
    self.applies = any(isinstance(n, ast.Call) and _names.call_name(
        n) in _APPLIES for n in scope.nodes)
    self.held_by: Dict[int, Set[str]] = {}  # id(value) -> names holding it.
    self.returned: Set[str] = set()
    # Each `a = ...`: the names its value reads, the names it sets.
    self.assigned: List[Tuple[Set[str], Set[str]]] = []
    self.subtracted: Set[str] = set()  # Names read right of a `-`.
    if self.applies:
      return
    for node in scope.nodes:
      if isinstance(node, ast.Assign):
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        self.held_by.setdefault(id(node.value), set()).update(names)
        self.assigned.append((_read(node.value), names))
      elif isinstance(node, ast.Return) and node.value is not None:
        self.returned |= _read(node.value)
      elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        self.subtracted |= _read(node.right)

  def only_subtracted(self, call: ast.Call) -> bool:
    held = set(self.held_by.get(id(call), ()))
    if not held or held & self.returned:
      return False
    for read, names in self.assigned:  # `gradients = dict(zip(keys, grads))`.
      if read & held:
        held |= names
    return bool(held & self.subtracted)


def _read(node: ast.AST) -> Set[str]:
  """The names read anywhere in `node`."""
  return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
