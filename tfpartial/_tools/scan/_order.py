"""When a write runs relative to the train step: under its
`control_dependencies`, fetched beside it (no order: a race), or after it
in the same block; or none of these (an initialisation, not a freeze).

Everything here is computed once per module, block or scope, so a file of
many writes and steps is read in time linear in its size.
"""

from __future__ import annotations

import ast
from typing import (TYPE_CHECKING, Callable, Dict, Iterable, List, Optional,
                    Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

if TYPE_CHECKING:
  from tfpartial._tools.scan._flow import Flow

Fetchers = Callable[[ast.Call, _scopes.Scope],
                    List[Tuple[ast.Call, _scopes.Scope]]]
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For,
             ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith,
             ast.Try)
# What runs a graph's fetches, or builds one op of several.
FETCHES = frozenset({"run", "group", "tuple", "__call__"})


def _parents(tree: ast.AST) -> Dict[int, ast.AST]:
  """id(node) -> the node it is in, for every node of `tree` (as
  `ast.walk` and `ast.iter_child_nodes` give them, each child read once:
  a shared `Load` is in the last node, breadth first, that holds one)."""
  parents: Dict[int, ast.AST] = {}
  todo = [tree]
  for node in todo:  # Grows as it is read: breadth first.
    for field in _fields(node):
      value = getattr(node, field, None)
      if isinstance(value, ast.AST):
        parents[id(value)] = node
        todo.append(value)
      elif isinstance(value, list):
        for item in value:
          if isinstance(item, ast.AST):
            parents[id(item)] = node
            todo.append(item)
  return parents


def _fields(node: ast.AST) -> Tuple[str, ...]:
  """The fields of `node` that may hold a node (not its names, numbers
  and flags), found once per kind of node."""
  kind = type(node)
  fields = _FIELDS.get(kind)
  if fields is None:
    fields = _FIELDS[kind] = tuple(f for f in node._fields
                                   if f not in _NO_NODES)
  return fields


# Fields of the grammar that hold an identifier, a number or a string.
_NO_NODES = frozenset({"id", "attr", "arg", "name", "asname", "module",
                       "level", "kind", "type_comment", "conversion",
                       "is_async", "rest", "tag"})
_FIELDS: Dict[type, Tuple[str, ...]] = {}


class Order:
  """The statement structure of one module.

  >>> tree = ast.parse("with tf.control_dependencies([t]):\\n  w = f()\\n")
  >>> Order(tree).parent(tree.body[0].body[0]) is tree.body[0]
  True
  """

  def __init__(self, tree: ast.Module,
               fetchers: Optional[Fetchers] = None,
               orders: Optional[Callable[[_scopes.Scope], "Order"]] = None):
    self._fetchers = fetchers or (lambda write, scope: [])
    # The order of another scope's module (a run in another file).
    self._orders = orders or (lambda scope: self)
    self._parents = _parents(tree)
    self._steps: Dict[Tuple[int, str], Tuple[Dict[int, int], List[
        Optional[ast.AST]]]] = {}
    self._trains: Dict[int, bool] = {}

  def parent(self, node: ast.AST) -> Optional[ast.AST]:
    """The node `node` is in."""
    return self._parents.get(id(node))

  def statement_of(self, node: ast.AST) -> Optional[ast.stmt]:
    """The simple statement holding `node`."""
    current: Optional[ast.AST] = node
    while current is not None:
      if isinstance(current, ast.stmt):
        return None if isinstance(current, _COMPOUND) else current
      current = self.parent(current)
    return None

  def of_write(self, write: ast.Call, scope: _scopes.Scope,
               flow: "Flow") -> Optional[Dict[str, object]]:
    """How `write` is ordered after the train step, or None."""
    node: Optional[ast.AST] = write
    while node is not None:
      if isinstance(node, ast.With):
        for item in node.items:
          expr = item.context_expr
          if isinstance(expr, ast.Call) and _names.call_name(
              expr) == "control_dependencies" and expr.args and (
                  "train" in flow.ops(expr.args[0], scope)):
            return {"order": "control", "at": node}
      node = self.parent(node)
    for call, found in self._fetches_of(write, scope, flow):
      if "train" in found:
        return {"order": "fetch", "at": call}
    for run, place in self._runs_of(write, scope, flow):
      step = self._orders(place)._step_before(run, place, flow)
      if step is not None:
        return {"order": "after", "at": step}
    if _after_steps(scope):
      return {"order": "after", "at": scope.node}
    return None

  def _fetches_of(self, write: ast.Call, scope: _scopes.Scope, flow: "Flow"
                  ) -> List[Tuple[ast.Call, Dict[str, ast.AST]]]:
    """The `run`/`group` calls anywhere in the project that fetch
    `write`, with the labels of what they fetch."""
    return [(call, flow.ops(call.args[0], place))
            for call, place in self._fetchers(write, scope)]

  def _runs_of(self, write: ast.Call, scope: _scopes.Scope,
               flow: "Flow") -> List[Tuple[ast.AST, _scopes.Scope]]:
    """Where `write` runs, and in which function: itself when eager, or
    a `run` that fetches it."""
    runs: List[Tuple[ast.AST, _scopes.Scope]] = []
    if isinstance(self.parent(write), ast.Expr) or (
        _in_override(scope)):
      runs.append((write, scope))
    for call, place in self._fetchers(write, scope):
      if _names.call_name(call) == "run" and call.args:
        runs.append((call, place))
    return runs

  def step_before(self, run: ast.AST, scope: _scopes.Scope,
                  flow: "Flow") -> Optional[ast.AST]:
    """A train step run in the same block before `run` (a call of the
    function that writes, say), if any."""
    return self._step_before(run, scope, flow)

  def _step_before(self, run: ast.AST, scope: _scopes.Scope,
                   flow: "Flow") -> Optional[ast.AST]:
    """A train step run in the same block before `run`, if any."""
    node: Optional[ast.AST] = run
    while node is not None:
      block = self.parent(node)
      for field in ("body", "orelse"):
        siblings = getattr(block, field, None)
        if block is None or not isinstance(siblings, list):
          continue
        index, firsts = self._block_steps(block, field, siblings, scope,
                                          flow)
        if id(node) in index and firsts[index[id(node)]] is not None:
          if scope.parent is None and not self._in_loop(block):
            return None  # Module code run once after training: a reset.
          return firsts[index[id(node)]]
        if id(node) in index and field == "body" and isinstance(
            block, (ast.For, ast.AsyncFor, ast.While)):
          later = firsts[index[id(node)] + 1:] + [self._block_end(
              block, field, siblings, scope, flow)]
          step = next((s for s in later if s is not None), None)
          if step is not None:
            return step  # Run before each step: after the one before.
      if block is None or isinstance(block, (
          ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        return None
      node = block
    return None

  def _block_end(self, block: ast.AST, field: str, siblings: List[ast.AST],
                 scope: _scopes.Scope, flow: "Flow") -> Optional[ast.AST]:
    """The first step a block runs, if any (its last statement's too)."""
    _, firsts = self._block_steps(block, field, siblings, scope, flow)
    seen = next((s for s in firsts if s is not None), None)
    return seen if seen is not None or not siblings else self._runs_a_step(
        siblings[-1], scope, flow)

  def _in_loop(self, node: Optional[ast.AST]) -> bool:
    """Whether `node` is a loop or in one (repeated with the step)."""
    while node is not None:
      if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return True
      node = self.parent(node)
    return False

  def _block_steps(self, block: ast.AST, field: str, siblings: List[ast.AST],
                   scope: _scopes.Scope, flow: "Flow"
                   ) -> Tuple[Dict[int, int], List[Optional[ast.AST]]]:
    """For a block: statement -> its index, and for each index the first
    step run before it (None if none)."""
    key = (id(block), field)
    if key not in self._steps:
      index = {id(s): i for i, s in enumerate(siblings)}
      firsts: List[Optional[ast.AST]] = []
      seen: Optional[ast.AST] = None
      for statement in siblings:
        firsts.append(seen)
        if seen is None:
          seen = self._runs_a_step(statement, scope, flow)
      self._steps[key] = (index, firsts)
    return self._steps[key]

  def _runs_a_step(self, statement: ast.AST, scope: _scopes.Scope,
                   flow: "Flow") -> Optional[ast.AST]:
    for node in ast.walk(statement):
      if not isinstance(node, ast.Call):
        continue
      name = _names.call_name(node)
      receiver = node.func.value if isinstance(node.func, ast.Attribute) \
          else None
      if library_fit(node, scope):
        continue  # SciPy's `norm.fit(data)`: a distribution, no model.
      if name in _names.TRAIN_STEPS | {"fit", "train_on_batch"} and (
          not isinstance(statement, ast.Assign) or isinstance(
              receiver, ast.Call) and _names.call_name(receiver) == "super"):
        return node  # Eager, or an override's `super()` step: it runs.
      if name == "run" and node.args and "train" in flow.ops(
          node.args[0], scope):
        return node
      if self.trains(node, scope, flow):
        return node
    return None

  def trains(self, call: ast.Call, scope: _scopes.Scope,
             flow: "Flow") -> bool:
    """Whether `call` calls a function of the project that runs a step."""
    callee = flow.labels(call.func, scope) if isinstance(
        call.func, ast.Name) else {}
    function = callee.get("fn")
    if function is None:
      return False
    if id(function) not in self._trains:
      self._trains[id(function)] = any(
          isinstance(n, ast.Call) and _names.call_name(n) in
          _names.TRAIN_STEPS for n in ast.walk(function))
    return self._trains[id(function)]


# A Keras model's own steps: its object names what trains.
KERAS_STEPS = frozenset({"fit", "fit_generator", "train_on_batch"})
# Libraries whose objects a `fit` fits to data (a distribution, a
# regression, a curve), never a model of the script.
_FITTING_LIBRARIES = frozenset({"scipy", "statsmodels", "numpy", "lmfit",
                                "pandas"})


def library_fit(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `call` is a Keras step's name (`fit`, `train_on_batch`)
  called on an object of a library known to fit distributions or
  regressions (`from scipy.stats import norm`; `norm.fit(histogram)`,
  `st.norm.fit(...)`, `stats.norm.fit(...)`): it fits that library's
  object, never a model. Any other root, an unresolved one too (a model
  imported from a module not scanned, a wrapper package of Keras), may
  be a model: its `fit` trains."""
  if _names.call_name(call) not in KERAS_STEPS or not isinstance(
      call.func, ast.Attribute):
    return False
  node: ast.AST = call.func.value
  while isinstance(node, ast.Attribute):
    node = node.value
  imports = getattr(scope.module, "imports", None)  # A `_project.Module`.
  if not isinstance(node, ast.Name) or not isinstance(imports, dict) or (
      node.id not in imports) or any(
          node.id in s.defs or node.id in s.params for s in _chain(scope)):
    return False
  where, attribute = imports[node.id]
  root = (where or attribute or "").split(".")[0]
  return root in _FITTING_LIBRARIES


def handles(write: ast.Call, order: "Order") -> List[str]:
  """The names a write op is kept under, for a `run` elsewhere to fetch
  it: `keep = tf.scatter_update(...)` -> `keep`, `self.restore_op = ...`
  -> `restore_op`, `ops.append(...)` -> `ops`."""
  statement = order.statement_of(write)
  found: List[str] = []
  if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
    targets = statement.targets if isinstance(statement, ast.Assign) else [
        statement.target]
    for target in targets:
      for node in ast.walk(target):
        if isinstance(node, ast.Name):
          found.append(node.id)
        elif isinstance(node, ast.Attribute):
          found.append(node.attr)
  elif isinstance(statement, ast.Expr) and isinstance(
      statement.value, ast.Call) and statement.value is not write:
    receiver = statement.value.func
    if isinstance(receiver, ast.Attribute) and receiver.attr in {
        "append", "extend", "add"}:
      name = _names.dotted(receiver.value)
      if name:
        found.append(name.rsplit(".", 1)[-1])
  return [n for n in dict.fromkeys(found) if n != "self"]


def fetching(calls: Iterable[Tuple[_scopes.Scope, ast.Call]],
             write: ast.Call, names: List[str], flow: "Flow",
             beside: Callable[[ast.AST], bool] = lambda node: False
             ) -> List[Tuple[ast.Call, _scopes.Scope]]:
  """The `run`/`group` calls among `calls` that fetch `write` (one of
  their items names it and holds it, or holds a copy of it that
  `beside` says is in its file)."""
  found = []
  for place, call in calls:
    if not call.args:
      continue
    for item in _items(call.args[0]):
      spelled = {n.id if isinstance(n, ast.Name) else n.attr
                 for n in ast.walk(item)
                 if isinstance(n, (ast.Name, ast.Attribute))}
      held = flow.ops(item, place).get("write")
      listed = _iterated(item, call, place)
      if held is not write and listed is not None:
        # `for op in ops: session.run(op)`: each op of a list run.
        spelled |= {n.id if isinstance(n, ast.Name) else n.attr
                    for n in ast.walk(listed)
                    if isinstance(n, (ast.Name, ast.Attribute))}
        held = write if _added(write, listed, place) else held
      if spelled & set(names) and (held is write or held is not None and (
          _copy_of(held, write) and beside(held))):
        found.append((call, place))
        break
  return found


def _iterated(item: ast.AST, call: ast.Call, place: _scopes.Scope
              ) -> Optional[ast.Name]:
  """The list the loop around `call` iterates over (`for op in ops:
  session.run(op)`), if `item` is that loop's name."""
  if not isinstance(item, ast.Name) or item.id not in place.loops:
    return None
  loops = [n for n in place.nodes if isinstance(n, ast.For) and isinstance(
      n.target, ast.Name) and n.target.id == item.id and (
          n.lineno <= call.lineno <= (n.end_lineno or 0))]
  listed = loops[-1].iter if loops else None
  return listed if isinstance(listed, ast.Name) else None


def _added(write: ast.Call, listed: ast.Name, place: _scopes.Scope
           ) -> bool:
  """Whether the function `place` puts `write` into the list `listed`
  names (`ops += [w.assign(v)]`, `ops = [..., w.assign(v)]`)."""
  return any(n is write for d in place.defs.get(listed.id, [])
             for n in ast.walk(d.value))


def _copy_of(held: object, write: ast.Call) -> bool:
  """Whether the write a fetched item holds is a copy of `write` spelled
  alike (`self.clear = scatter_update(...)` in two classes of a file: an
  attribute of a parameter is resolved to the first class that sets it,
  not the one the caller passes)."""
  return isinstance(held, ast.Call) and ast.dump(held) == ast.dump(write)


def _items(node: ast.AST) -> List[ast.AST]:
  if isinstance(node, (ast.List, ast.Tuple)):
    return list(node.elts)
  if isinstance(node, ast.Dict):
    return [v for v in node.values if v is not None]
  return [node]


def _after_steps(scope: _scopes.Scope) -> bool:
  """A callback's or hook's method that runs after the steps
  (`on_train_batch_end`, `on_epoch_end`, `after_run`)."""
  name = scope.name
  return scope.cls is not None and (
      name.startswith("on_") and name.endswith("_end") or name in {
          "after_run", "after_step", "on_batch_end"})


def _in_override(scope: _scopes.Scope) -> bool:
  """A method of an optimizer or callback: its writes run when called."""
  return scope.cls is not None and (
      scope.name in _names.OPTIMIZER_METHODS or scope.name.startswith(
          ("on_", "after_", "before_")))


def _chain(scope: _scopes.Scope) -> List[_scopes.Scope]:
  chain = []
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    chain.append(place)
    place = place.parent
  return chain
