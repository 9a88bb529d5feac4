"""What marks the variables a stage's step trains, and what runs them:
the scopes a filter names, the objects whose variables it takes and the
variables it lists (`Group`), read through the assignments of the
function or class building the steps (`definitions`); and what a loss is
computed from (`computed_from`), where a call runs a group
(`runs_group`). Part of `_stages`."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._runs import _chosen_stage
from tfpartial._tools.scan.idioms._runs import _made_names
from tfpartial._tools.scan.idioms._runs import _stage_calls

# What a model or a layer gives its variables by.
_OWN = {"variables", "trainable_variables", "trainable_weights", "weights"}
# Searches bounded: a slice of a loss reads at most this many values.
_BOUND = 400


@dataclasses.dataclass
class Training:
  """One step, as a stage sees it: what it trains and minimises."""

  call: ast.Call
  scope: _scopes.Scope
  var_list: ast.expr
  loss: ast.expr


@dataclasses.dataclass
class Group:
  """What marks a group of variables where the model is run: the scopes
  a filter names (`'net1'`), the objects whose variables it takes
  (`coarse.variables`), the variables it lists by name (`[E]`)."""

  scopes: Set[str]
  objects: Set[str]
  names: Set[str]

  def __bool__(self) -> bool:
    return bool(self.scopes or self.objects or self.names)

  def meets(self, other: "Group") -> bool:
    return bool(self.scopes & other.scopes or self.objects & other.objects
                or self.names & other.names)


def home_of(scope: _scopes.Scope) -> ast.AST:
  """The class a method is of (its steps are built in one method and
  fetched in others), else the function."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if place.cls is not None:
      return place.cls.node
    place = place.parent
  return scope.node


def position(node: ast.AST) -> Tuple[int, int]:
  return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


# A name as the code assigns it: `x`, `self.x` (`x[i] = ...` assigns x).
def assigned_key(target: ast.AST) -> Optional[str]:
  while isinstance(target, (ast.Subscript, ast.Starred)):
    target = target.value
  name = _names.dotted(target)
  if name is None or name.count(".") > 1 or "." in name and not (
      name.startswith("self.")):
    return None
  return name


def definitions(home: ast.AST) -> Dict[str, List[Tuple[ast.expr, int]]]:
  """Each name's assigned values in `home`, with their lines; in a
  function, not the local names of a function or class it defines (`x`
  of a method of a model class built in the training function is that
  method's own), but their `self.` attributes."""
  found: Dict[str, List[Tuple[ast.expr, int]]] = {}
  inner = _inner_nodes(home) if isinstance(
      home, (ast.FunctionDef, ast.AsyncFunctionDef)) else set()
  for node in _scopes.walk(home):
    if isinstance(node, ast.Assign):
      targets, value = list(node.targets), node.value
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and (
        node.value is not None):
      targets, value = [node.target], node.value
    elif isinstance(node, (ast.For, ast.AsyncFor)):
      targets, value = [node.target], node.iter
    else:
      continue
    while targets:
      target = targets.pop()
      if isinstance(target, (ast.Tuple, ast.List)):
        targets.extend(target.elts)  # `c0, self.G0 = ...`: each.
        continue
      key = assigned_key(target)
      if key is not None and not ("." not in key and id(node) in inner):
        found.setdefault(key, []).append((value, node.lineno))
  return found


def _inner_nodes(home: ast.AST) -> Set[int]:
  """The nodes inside the functions and classes `home` defines."""
  inner: Set[int] = set()
  for node in _scopes.walk(home):
    if node is not home and isinstance(node, _names.DEFINITIONS + (
        ast.Lambda,)) and id(node) not in inner:
      inner.update(id(n) for n in ast.walk(node))
  return inner


def _reaching(name: str, line: int,
              defs: Dict[str, List[Tuple[ast.expr, int]]]
              ) -> Optional[ast.expr]:
  """The nearest value assigned to `name` before `line` (the branch a
  step is in assigns its own list to the attribute others share)."""
  before = [(at, value) for value, at in defs.get(name, []) if at <= line]
  return max(before, key=lambda pair: pair[0])[1] if before else None


def chosen_at(var_list: ast.expr, call: ast.Call,
            defs: Dict[str, List[Tuple[ast.expr, int]]]) -> ast.expr:
  """Where a step's list is chosen: its assignment, else the list."""
  name = _names.dotted(var_list)
  value = _reaching(name, call.lineno, defs) if name else None
  return value if value is not None else var_list


def marks_of(step: Training, defs: Dict[str, List[Tuple[ast.expr, int]]]
           ) -> Group:
  """What marks the variables a step trains where the model runs."""
  group = Group(set(), set(), set())
  todo = [step.var_list]
  group.scopes.update(_chosen_stage.computed_scopes(step.var_list))
  seen: Set[int] = set()
  while todo and len(seen) < 32:
    node = todo.pop()
    if id(node) in seen:
      continue
    seen.add(id(node))
    name = _names.dotted(node)
    if name is not None:
      value = _reaching(name, step.call.lineno, defs)
      if value is not None:
        if _stage_calls.made_by_call(name, value):
          group.names.add(name)
        group.scopes.update(_chosen_stage.computed_scopes(value))
        todo.append(value)
        continue
    called = {id(c.func) for c in _scopes.walk(node) if isinstance(
        c, ast.Call)}  # `tf.trainable_variables()` is no model's.
    for each in _scopes.walk(node):
      if id(each) in called:
        continue
      if isinstance(each, ast.Constant) and isinstance(each.value, str) \
          and each.value.strip("/"):
        group.scopes.add(each.value.strip("/"))
      elif isinstance(each, ast.Attribute) and each.attr in _OWN:
        owner = _names.dotted(each.value)
        if owner is not None:
          group.objects.add(owner)
      elif isinstance(each, ast.List):
        group.names.update(e.id for e in each.elts if isinstance(e, ast.Name))
      elif isinstance(each, ast.BinOp):
        todo.extend([each.left, each.right])
  return group


def computed_from(roots: List[ast.expr],
                  defs: Dict[str, List[Tuple[ast.expr, int]]],
                  own: Optional[Dict[str, ast.AST]] = None
                  ) -> Iterator[ast.AST]:
  """The nodes of what `roots` are computed from, by the assignments of
  their names (`loss` of `out` of `net2(h)` of `h = net1(x)`) and what
  the class's `own` methods they call return."""
  todo = list(roots)
  seen: Set[int] = set()
  names: Set[str] = set()
  spanned = _stage_calls.spans(own or {})
  while todo and len(seen) < _BOUND:
    root = todo.pop()
    if id(root) in seen:
      continue
    seen.add(id(root))
    for node in _scopes.walk(root):
      yield node
      todo.extend(_stage_calls.returned(node, own or {}))
      name = assigned_key(node) if isinstance(node, (
          ast.Name, ast.Attribute)) and isinstance(
              getattr(node, "ctx", None), ast.Load) else None
      if name is not None and "." not in name and spanned:
        todo.extend(value for value, at in defs.get(name, [])
                    if _stage_calls.same_method(spanned, at, position(
                        node)[0]))
      elif name is not None and name not in names:
        names.add(name)
        todo.extend(value for value, _ in defs.get(name, []))


# The scope calls that name the variables made inside them.
_VARIABLE_SCOPES = frozenset({"variable_scope"})
# The calls that make a layer's variables where they run.
_MAKERS = frozenset({
    "dense", "fully_connected", "conv1d", "conv2d", "conv3d",
    "conv2d_transpose", "separable_conv2d", "batch_normalization",
    "embedding", "Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose",
    "LSTM", "GRU", "LSTMCell", "GRUCell", "Embedding"})


def _makes_here(call: ast.Call) -> bool:
  name = _names.call_name(call)
  return name in _names.VARIABLES or name in _MAKERS


class Opened:
  """The literal scopes each function a call runs opens (`with
  tf.variable_scope('g1')`), and those the step's function opens around
  a call that makes variables, each read once."""

  def __init__(self, flow: Flow):
    self.flow = flow
    self.by_call: Dict[int, Set[str]] = {}
    self.names: Dict[int, Set[str]] = {}  # `made`'s, by call.
    self.here: Dict[int, Set[int]] = {}  # A scope -> its own nodes.
    self.built: Dict[Tuple[str, ...], bool] = {}  # `_chosen_stage`'s.
    self.together = _stage_calls.Together(flow.project)
    self.forward: Dict[Tuple[str, ...], Set[str]] = {}  # `_forward`'s.
    self.blocks: Dict[int, Dict[int, Set[str]]] = {}  # `within`'s.
    self.making: Dict[int, bool] = {}  # `_makes`', by function.
    self.feeding: Dict[Tuple[int, str], bool] = {}  # `feeds_maker`'s.

  def _callee(self, call: ast.Call, scope: _scopes.Scope
              ) -> Optional[ast.AST]:
    if id(scope) not in self.here:
      self.here[id(scope)] = {id(n) for n in scope.nodes}
    return self.flow.callee(call, scope) if id(call) in self.here[
        id(scope)] else None  # The flow resolves a call where it is.

  def feeds_maker(self, call: ast.Call, scope: _scopes.Scope,
                  param: str) -> bool:
    """Whether the project function `call` runs feeds its parameter
    `param` to a call that makes variables (`_into_maker`), read once
    per function and parameter."""
    callee = self._callee(call, scope)
    if callee is None:
      return False
    key = (id(callee), param)
    if key not in self.feeding:
      self.feeding[key] = _into_maker(callee, param)
    return self.feeding[key]

  def made(self, call: ast.Call, scope: _scopes.Scope) -> Set[str]:
    """The names of the variables the call's function makes from the
    text it is passed (`_made_names`: `'{}_W'.format(name)`)."""
    if id(call) not in self.names:
      callee = self._callee(call, scope)
      self.names[id(call)] = _made_names.made_names(callee, call) if (
          callee is not None) else set()
    return self.names[id(call)]

  def scopes(self, call: ast.Call, scope: _scopes.Scope) -> Set[str]:
    if id(call) not in self.by_call:
      callee = self._callee(call, scope)
      self.by_call[id(call)] = {
          n.args[0].value for n in _scopes.walk(callee) if isinstance(
              n, ast.Call) and _names.call_name(n) in _names.TF_SCOPES
          and n.args and isinstance(n.args[0], ast.Constant) and isinstance(
              n.args[0].value, str)} if callee is not None else set()
    return self.by_call[id(call)]

  def within(self, call: ast.Call, scope: _scopes.Scope) -> Set[str]:
    """The literal variable scopes the `with` blocks of the step's
    function open around a call that makes variables there (`with
    tf.variable_scope('encoder'): mu = dense(x, 10)`, a variable, a
    project function whose body makes some): a softmax, a loss or a
    `stop_gradient` of a teacher's output in the block makes none."""
    if id(scope) not in self.blocks:
      found: Dict[int, Set[str]] = {}
      for node in scope.nodes:
        names = {name for item in getattr(node, "items", [])
                 for name in [_opened_scopes.literal(
                     item.context_expr, _VARIABLE_SCOPES)] if name}
        for each in (n for statement in getattr(node, "body", [])
                     for n in _scopes.walk(statement)) if (
                         isinstance(node, ast.With) and names) else ():
          found.setdefault(id(each), set()).update(names)
      self.blocks[id(scope)] = found
    opened = self.blocks[id(scope)].get(id(call), set())
    return opened if opened and self._makes(call, scope) else set()

  def _makes(self, call: ast.Call, scope: _scopes.Scope) -> bool:
    """Whether a call makes variables where it runs: a variable or layer
    maker, or a project function whose own body calls one."""
    if _makes_here(call):
      return True
    callee = self._callee(call, scope)
    if callee is not None and id(callee) not in self.making:
      self.making[id(callee)] = any(
          isinstance(n, ast.Call) and _makes_here(n)
          for n in _scopes.walk(callee))
    return callee is not None and self.making[id(callee)]


def runs_group(node: ast.AST, group: Group, opened: Opened,
          scope: _scopes.Scope) -> bool:
  """Whether `node` runs the group's variables: a call under its scope
  (`net2(h, scope="net2")`, a method opening `variable_scope('g1')`, a
  layer made inside a `with variable_scope('g1'):` block of the step's
  function), a call of its model (`fine([x, h])`), a read of a listed
  variable."""
  if isinstance(node, (ast.Name, ast.Attribute)):
    return assigned_key(node) in group.names
  if not isinstance(node, ast.Call):
    return False
  if group.names and _stage_calls.runs_named(
      node, _stage_calls.methods(home_of(scope)), group.names):
    return True
  func = _names.dotted(node.func)
  if func is not None and (func in group.objects or func.rpartition(".")[
      0] in group.objects and not func.endswith(tuple(_OWN))):
    return True
  given = [a.value for a in [*node.args, *(k.value for k in node.keywords)]
           if isinstance(a, ast.Constant) and isinstance(a.value, str)]
  return any(a.strip("/") in group.scopes for a in given) or bool(
      group.scopes and (opened.scopes(node, scope) | opened.within(
          node, scope)) & group.scopes) or bool(
          given and group.scopes) and any(
              kept in made for made in opened.made(node, scope)
              for kept in group.scopes)


# What a call is measured against by name (`loss(x, labels=y)`), unless
# the project function it calls feeds that parameter to a variable maker.
_TARGETS = frozenset({"labels", "targets", "target", "label"})


# How a value is read when only its size is: `x.shape`, `x.get_shape()`,
# `tf.shape(x)`, `len(x)`, `int(x)`.
_SIZE_READS = frozenset({"shape", "get_shape"})
_SIZE_CALLS = frozenset({"len", "int", "tf.shape", "tf.compat.v1.shape"})


def _into_maker(callee: ast.AST, param: str) -> bool:
  """Whether `param` of `callee` reaches the data argument (the first
  positional, `inputs=`, `x=`) of a call that makes variables
  (`dense(tf.concat([inputs, targets], 1))`), through the names the
  function assigns from it: a target only a loss reads, or whose size
  only sets a layer's width (`units=labels.shape[-1]`), reaches none."""
  feeds: Dict[str, Set[str]] = {}  # A name -> the names set from it.
  for node in _scopes.walk(callee):
    if isinstance(node, ast.Assign):
      targets = {t.id for target in node.targets
                 for t in _scopes.walk(target) if isinstance(t, ast.Name)}
      for name in _read_for_values(node.value):
        feeds.setdefault(name, set()).update(targets)
  reached, todo = {param}, [param]
  while todo:
    more = feeds.get(todo.pop(), set()) - reached
    reached |= more
    todo += more
  return any(isinstance(n, ast.Call) and _makes_here(n) and any(
      reached & _read_for_values(a) for a in [*n.args[:1], *(
          k.value for k in n.keywords if k.arg in ("inputs", "x"))])
             for n in _scopes.walk(callee))


def _read_for_values(node: ast.AST) -> Set[str]:
  """The names `node` reads for their values, not only for their size."""
  if isinstance(node, ast.Name):
    return {node.id}
  if isinstance(node, ast.Attribute) and node.attr in _SIZE_READS or (
      isinstance(node, ast.Call) and _names.dotted(node.func) in _SIZE_CALLS):
    return set()
  return {name for child in ast.iter_child_nodes(node) if not isinstance(
      child, (ast.FunctionDef, ast.Lambda)) for name in _read_for_values(child)}


def _given(node: ast.Call, opened: Opened, scope: _scopes.Scope
           ) -> List[ast.expr]:
  """The values a call that runs the group computes from: its arguments,
  less a target passed by name that the callee only measures against."""
  kept: List[ast.expr] = list(node.args)
  for keyword in node.keywords:
    if keyword.arg not in _TARGETS or opened.feeds_maker(
        node, scope, keyword.arg):
      kept.append(keyword.value)
  return kept


def inputs_of(step: Training, mine: Group,
            defs: Dict[str, List[Tuple[ast.expr, int]]], opened: Opened
            ) -> List[ast.AST]:
  """What the inputs of what the step trains are computed from, in its
  loss (`h`, `net1(x)` of `net2(h)`): not what only the loss reads (a
  teacher's output)."""
  own = _stage_calls.own_of(step.scope)
  given = [value for node in computed_from([step.loss], defs, own)
           if isinstance(node, ast.Call) and runs_group(
               node, mine, opened, step.scope)
           for value in _given(node, opened, step.scope)]
  return list(computed_from(given, defs, own)) if given else []
