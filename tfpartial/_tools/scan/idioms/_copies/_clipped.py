"""Whether a write sets a variable back to its own values, read out after
the step and changed only from themselves: a WGAN's critic clipped
(`weights = layer.get_weights()` after `critic.train_on_batch(...)`, then
`weights[j] = np.clip(weights[j], -c, c)` and `layer.set_weights(weights)`).
That is a constraint on every weight (what Keras' `kernel_constraint`
does), not saved values put back: nothing from before the step is kept.
So is a stochastic weight average set once training is over: each
entry made from itself, the model's weights read again after the step
(`swa[i] = (swa[i] * n + network.get_weights()[i]) / (n + 1)`) and
counts of settings (`_weight_average.read_after_step`). Weights read
out after the step with elements of a copy saved earlier put into them
(`weights[0][:5] = saved[0][:5]`) are a write-back still.
The same holds for a variable clipped in place by its own op
(`w.assign(tf.clip_by_value(w, -c, c))`, an IRM game's projection).

More generally (`nothing_saved`), a write after the step that puts
back nothing saved before it: every value it writes is read out after
the step, in the same pass, from the models the step trains (or the
target), or made from such reads and settings. LassoNet's hier-prox
(`theta, W = hier_prox(skip.get_weights()[0], gw.get_weights()[0], lam,
M)` written into the kernels), a bias kept at zero (`Q, b =
model.get_weights(); model.set_weights([Q, np.zeros_like(b)])`), a
server's model set to the mean of its clients' weights: every weight is
recomputed from the weights as they are now (a proximal, projection or
averaging step), or a whole variable reset. A write-back puts values
saved before the step (`frozen = layer.get_weights()` ahead of the
loop, a copy taken ahead of each step, a `self.` snapshot, a model no
step trains) into some elements.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _weight_average
from tfpartial._tools.scan.idioms._masks import _numbers

# Ops that bound every element of their first argument by settings.
_CLIPS = {"clip_by_value", "clip_by_norm", "clip"}


def of_itself(target: ast.AST, value: ast.AST) -> bool:
  """Whether `value` clips the written variable itself
  (`w.assign(tf.clip_by_value(w, -c, c))`): every element bounded after
  the step, nothing saved from before it.

  >>> of_itself(ast.parse("w[0]").body[0].value,
  ...           ast.parse("tf.clip_by_value(w[0], -c, c)").body[0].value)
  True
  """
  return isinstance(value, ast.Call) and _names.call_name(
      value) in _CLIPS and bool(value.args) and ast.unparse(
          value.args[0]) == ast.unparse(target)


Position = Tuple[int, int]

# Reads of a variable's values as they are when the read runs.
_READS = _names.SNAPSHOTS | {"get_value", "batch_get_value"}
# Labels of values kept from another time: a copy, a restore, a shadow.
_KEPT = ("copy:", "restore:", "shadow")
# Labels of elements chosen (a mask, a re-mask, elements drawn anew).
_CHOOSING = ("mask", "varmask:", "random")
# Calls that choose, element by element, between two values.
_CHOICES = {"where", "where_v2", "select", "select_v2", "putmask", "place",
            "copyto", "choose"}
# Calls that count, not read, the values they are given.
_SIZES = {"len", "range"}
_KERAS_STEPS = _order.KERAS_STEPS  # The model they are called on trains.
# Measures of data: reductions to a number, a model's predictions.
_MEASURES = {"mean", "sum", "median", "log", "average", "predict"}
# How many assignments back a name is followed to what it spells.
_HOPS = 4


def nothing_saved(call: ast.Call, scope: _scopes.Scope, analysis: Analysis,
                  found: Labels, target: ast.expr, value: ast.expr,
                  step: object) -> bool:
  """Whether `value`, written by `call` into `target` after `step` (a
  call of the same function), holds only the values, read after `step`,
  of the variables `step` trains or of the target itself, numbers and
  settings handed to helpers, stored into whole entries of the lists it
  writes, with no elements chosen: nothing saved before the step (nor
  another model's weights) comes back."""
  if not isinstance(step, ast.Call) or any(
      k.startswith(_CHOOSING) for k in found):
    return False
  helper = not any(n is step for n in scope.nodes)
  if helper and not _stepless_function(scope):
    return False
  trained = _trained(step)
  if not trained:
    return False
  # A helper with no step of its own, run after the step: all of it is
  # after the step; values handed in are not read after it.
  after = (getattr(scope.node, "lineno", 0), 0) if helper else (
      getattr(step, "end_lineno", 0) or 0,
      getattr(step, "end_col_offset", 0) or 0)
  walk = _Walk(scope, analysis, (after, _idiom.position(call)),
               [*trained, _spelled(target, scope)])
  if helper:
    walk.handed = set(scope.params) - {"self"}
  return walk.fresh(value)


# Calls that make or run a step.
_STEPS = _KERAS_STEPS | {"minimize", "apply_gradients", "gradient",
                         "gradients", "compute_gradients", "run"}


def _stepless_function(scope: _scopes.Scope) -> bool:
  """Whether `scope` is a function that makes and runs no step."""
  return isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
      and not any(isinstance(n, ast.Call) and _names.call_name(n) in _STEPS
                  for n in scope.nodes)


class _Walk:
  """What a written value reads, followed through the function's names
  back to the step."""

  def __init__(self, scope: _scopes.Scope, analysis: Analysis,
               window: Tuple[Position, Position], own: List[str]) -> None:
    self.scope = scope
    self.flow = analysis.flow
    self.analysis = analysis
    self.window = window  # After the step, before the write.
    self.own = own  # The models the step trains, and the target.
    self.modules = _scopes.imported_names(scope)
    # A helper's parameters: values handed in, read only by calls.
    self.handed: Set[str] = set()

  def fresh(self, value: ast.expr) -> bool:
    """Whether every value `value` reads is read inside the window, from
    the step's models or the target, or holds no variable's values (a
    number, where it scales a weight)."""
    seen: Set[int] = set()
    stack: List[Tuple[ast.AST, bool]] = [(value, False)]
    while stack:
      node, scaling = stack.pop()
      if isinstance(node, ast.Call):
        name = _names.call_name(node)
        if name in _CHOICES:
          return False  # Chosen elements set apart: a partial write.
        if name in _SIZES or name in _names.SHAPE_QUERIES:
          continue  # `range(len(ws))`: a count, not a value written.
        if name in _READS:
          if not self._own_read(node):
            return False  # Another model's weights, or a shadow's.
          continue  # The weights as they are after the step.
        if self.handed and self._reads_handed(node):
          continue  # `np.log(1 + cts.sum(-1))`: data handed in, measured.
        stack.extend((a, False) for a in node.args)
        stack.extend((k.value, False) for k in node.keywords)
        if isinstance(node.func, ast.Attribute) and base_name(
            node.func) not in self.modules:
          stack.append((node.func.value, scaling))  # `saved.copy()`.
      elif isinstance(node, ast.Name):
        if node.id in self.modules or id(node) in seen:
          continue
        seen.add(id(node))
        if not self._name(node, scaling, stack):
          return False
      elif isinstance(node, ast.Attribute):
        if base_name(node) in self.modules:
          continue
        if _kept(self.flow.labels(node, self.scope)) or scaling and not (
            _numbers.number(node, self.scope)):
          return False  # `self.frozen`: a snapshot kept on the object.
      elif isinstance(node, (ast.BinOp, ast.UnaryOp)):
        weighs = scaling or self._weighty(node)
        stack.extend((n, weighs) for n in ast.iter_child_nodes(node)
                     if isinstance(n, ast.expr))
      elif isinstance(node, ast.Subscript):
        if not self._entry(node.value):
          return False  # `w[0][n:]`: chosen elements, a partial write.
        stack.append((node.value, scaling))
        stack.append((node.slice, False))
      elif not isinstance(node, ast.Lambda):
        stack.extend((n, scaling) for n in ast.iter_child_nodes(node))
    return True

  def _reads_handed(self, call: ast.Call, depth: int = 0) -> bool:
    """Whether `call` measures data handed in: a reduction (`np.mean`,
    `.sum()`) or a model's `predict`, every name it reads a parameter,
    a module, a number, or a local set to such a measure in the helper
    (`_, pred = model.predict(seqs)`; `np.mean(np.log(cts) - pred)`)."""
    if _names.call_name(call) not in _MEASURES:
      return False
    read = {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    return bool(read & self.handed) and all(
        r in self.handed or r in self.modules or _numbers.number(
            ast.Name(r, ast.Load()), self.scope) or depth == 0 and bool(
                self.scope.defs.get(r)) and all(isinstance(
                    d.value, ast.Call) and self._reads_handed(
                        d.value, 1) for d in self.scope.defs[r])
        for r in read)

  def _weighty(self, node: ast.AST) -> bool:
    """Whether arithmetic reads weights (its other terms scale them): a
    read of values, a name assigned after the step, the step's models or
    the target by name."""
    for n in ast.walk(node):
      if isinstance(n, ast.Call) and _names.call_name(n) in _READS:
        return True
      if isinstance(n, (ast.Name, ast.Attribute)) and (
          _unindexed(n) in self.own):
        return True
      if isinstance(n, ast.Name) and any(
          self.window[0] < self.scope.defs[n.id][i].start < self.window[1]
          for i in (self.scope.reaching(n.id, n)
                    if n.id in self.scope.defs else ())):
        return True
    return False

  def _name(self, node: ast.Name, scaling: bool,
            stack: List[Tuple[ast.AST, bool]]) -> bool:
    """Follow a name read: its assignments inside the window are read in
    turn; one outside it (before the step, or a pass before) must hold
    no variable's values, and be a number where it scales a weight."""
    scope = self.scope
    defs = scope.defs.get(node.id)
    if node.id in self.handed:
      return False  # Values handed in: saved before, perhaps.
    if not defs:
      return node.id in self.own or not _kept(
          self.flow.labels(node, scope)) and not (
              scaling and not _numbers.number(node, scope))
    for index in scope.reaching(node.id, node):
      bound = defs[index]
      if self.window[0] < bound.start < self.window[1]:
        if not bound.replaces and not _whole_entry(node.id, bound, scope):
          return False  # Chosen elements stored: a partial write.
        stack.append((bound.value, scaling))
      elif _holds_values(bound.value, scope, self.analysis) or (
          scaling and not _numbers.number(bound.value, scope)):
        return False  # Read before the step (or the pass before).
    return True

  def _entry(self, listed: ast.expr) -> bool:
    """Whether indexing `listed` picks whole variables: it is a list of
    weights (`layer.get_weights()`, a name only ever bound to one, or to
    a list built of them), not a tensor or an array."""
    if isinstance(listed, ast.Call):
      return _names.call_name(listed) in {"get_weights", "batch_get_value"}
    if not isinstance(listed, ast.Name):
      return False
    defs = self.scope.defs.get(listed.id, [])
    return bool(defs) and all(
        _a_list(d.value) for d in defs if d.replaces and d.part is None
    ) and all(d.part is None for d in defs)

  def _own_read(self, read: ast.Call) -> bool:
    """Whether a read of values (`layer.get_weights()`, `K.get_value(w)`)
    reads a model the step trains, or the written target, and no
    shadow."""
    if any(k.startswith(("restore:", "shadow"))
           for k in self.flow.labels(read, self.scope)):
      return False
    func = read.func
    read_of = func.value if isinstance(func, ast.Attribute) and (
        base_name(func) not in self.modules) else (
            read.args[0] if read.args else None)
    if read_of is None:
      return False
    spelled = _spelled(read_of, self.scope)
    return any(spelled == own or spelled.startswith((own + ".", own + "["))
               for own in self.own)


def _trained(step: ast.Call) -> List[str]:
  """What a step trains, spelled with subscripts' indices dropped: the
  model a Keras step is called on, the models whose variables an
  `apply_gradients` or a `minimize` is given; none when unknown."""
  name = _names.call_name(step)
  if name in _KERAS_STEPS and isinstance(step.func, ast.Attribute):
    return [_unindexed(step.func.value)]
  lists: List[ast.expr] = []
  if name == "apply_gradients" and step.args:
    pairs = step.args[0]
    if isinstance(pairs, ast.Call) and _names.call_name(pairs) == "zip" and (
        len(pairs.args) == 2):
      lists.append(pairs.args[1])
  elif name == "minimize":
    lists.extend(k.value for k in step.keywords if k.arg == "var_list")
  found = []
  for listed in lists:
    items = listed.elts if isinstance(listed, (ast.List, ast.Tuple)) else [
        listed]
    for item in items:
      while isinstance(item, ast.Attribute) and (
          item.attr in _names.VARIABLE_ATTRIBUTES):
        item = item.value
      if not isinstance(item, (ast.Name, ast.Attribute, ast.Subscript)):
        return []
      found.append(_unindexed(item))
  return found


def _spelled(node: ast.expr, scope: _scopes.Scope) -> str:
  """`node` as text, subscripts' indices dropped, a local name assigned
  once spelled by what it was assigned (`layer` of `layer =
  net.get_layer('x')` is `net.get_layer('x')`)."""
  for _ in range(_HOPS):
    base = node
    while isinstance(base, (ast.Attribute, ast.Subscript)):
      base = base.value
    if not isinstance(base, ast.Name):
      break
    defs = scope.defs.get(base.id, [])
    if len(defs) != 1 or defs[0].part is not None or not isinstance(
        defs[0].value, (ast.Attribute, ast.Subscript, ast.Call, ast.Name)) \
        or base is node and isinstance(defs[0].value, ast.Call) and (
            _names.call_name(defs[0].value) in _READS):
      break
    node = _replaced(node, base, defs[0].value)
  return _unindexed(node)


def _replaced(node: ast.expr, base: ast.Name, value: ast.expr) -> ast.expr:
  """`node` with its base name `base` replaced by `value`."""
  if node is base:
    return value
  assert isinstance(node, (ast.Attribute, ast.Subscript))
  copy = ast.Attribute(value=_replaced(node.value, base, value),
                       attr=node.attr, ctx=ast.Load()) if isinstance(
                           node, ast.Attribute) else ast.Subscript(
                               value=_replaced(node.value, base, value),
                               slice=node.slice, ctx=ast.Load())
  return copy


def _unindexed(node: ast.AST) -> str:
  """`self.clients[]` of `self.clients[c]`: one of a list of models.

  >>> _unindexed(ast.parse("self.clients[c].layers[w[0]]").body[0].value)
  'self.clients[].layers[]'
  """
  text = ast.unparse(node)
  out, depth = [], 0
  for ch in text:
    if ch == "[":
      depth += 1
      if depth == 1:
        out.append("[")
      continue
    if ch == "]":
      depth -= 1
      if depth == 0:
        out.append("]")
      continue
    if depth == 0:
      out.append(ch)
  return "".join(out)


def _kept(labels: Labels) -> bool:
  return any(k.startswith(_KEPT) for k in labels)


def _holds_values(value: ast.expr, scope: _scopes.Scope,
                  analysis: Analysis) -> bool:
  """Whether an assignment outside the window holds a variable's values
  (a read of them, or a copy the flow follows)."""
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _READS
             for n in ast.walk(value)) or _kept(
                 analysis.flow.labels(value, scope))


def _whole_entry(name: str, bound: _scopes.Def, scope: _scopes.Scope
                 ) -> bool:
  """Whether a store into `name` (`weights[0] = theta`) replaces a whole
  entry of a list of weights (`weights = layer.get_weights()`, a list
  built by appending) rather than chosen elements of an array."""
  statement = next((n for n in scope.nodes if id(n) == bound.statement),
                   None)
  if isinstance(statement, ast.Expr):
    return True  # `updates.append(w)`: an entry added.
  if not isinstance(statement, ast.Assign):
    return False
  for target in statement.targets:
    if isinstance(target, ast.Subscript) and isinstance(
        target.value, ast.Name) and target.value.id == name:
      return all(_a_list(d.value) for d in scope.defs.get(name, [])
                 if d.replaces and d.part is None)
  return False


def _a_list(value: ast.expr) -> bool:
  """Whether an assignment makes a list of weights, one entry a
  variable: a layer's or model's `get_weights()`, a list display, or
  `np.array(list_of_weights, dtype=object)`."""
  if isinstance(value, (ast.List, ast.ListComp)):
    return True
  if not isinstance(value, ast.Call):
    return False
  name = _names.call_name(value)
  return name in {"get_weights", "list"} or name == "array" and any(
      k.arg == "dtype" and isinstance(k.value, ast.Name) and (
          k.value.id == "object") for k in value.keywords)


def base_name(node: ast.AST) -> Optional[str]:
  """The name an expression starts from: `dgp` of `dgp.get_layer('s')`."""
  while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
    node = node.func if isinstance(node, ast.Call) else node.value
  return node.id if isinstance(node, ast.Name) else None
