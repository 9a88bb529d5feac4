"""A trained input (an attack's perturbation, modifier or patch) multiplied
in the forward pass by a mask fixed while it trains: `newimg =
tanh(modifier + simg) / 2 * canchange + (1 - canchange) * original` with
`minimize(loss, var_list=[modifier])` (Carlini's L0 attack), `perturb *
l0_mask` with a placeholder fed a task's mask. Where the mask is 0 the
variable's elements reach neither the model nor the loss: their gradient
is exactly 0 and they never train while the rest of the variable does.

Which variables train is read from the steps themselves (the list given
to `minimize`, `compute_gradients` or a tape's `gradient`); the mask is
fixed by what feeds or writes it (`_fixed_feeds`: a placeholder fed once
before the loop or from what the loop does not bind anew, a variable no
step trains written such a value, an array loaded once from a file). No
name is read for what it says. Every other read of the variable is
followed: each must reach the loss only through a product with the same
mask (else the masked elements train by that other way, a regulariser of
the variable itself too), or only be written, fetched, listed or saved.

Not this: a variable no listed step trains (a model's activations, an
attention, padding or sequence mask on them), a mask fed or drawn anew in
the loop (dropout, a batch's mask), a scalar, a triangle or a pattern
built from the shape, a trained gate (`sigmoid(g) * w` with `g` trained
too), a product only reduced into a loss (a loss mask), read as a layer's
weight (`_masked_weights`), written back or stopped."""

from __future__ import annotations

import ast
import bisect
from typing import List, Optional, Set, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _fixed_feeds
from tfpartial._tools.scan.idioms._masks import _input_index
from tfpartial._tools.scan.idioms._masks import _masked_weights
from tfpartial._tools.scan.idioms._masks._mask_origins import (
    drawn, made_here, structural)

Hit = Tuple[ast.expr, _scopes.Scope, ast.expr]
Index = _input_index.Index

_MAKERS = {"Variable", "VariableV1", "get_variable"}
_LOADS = {"load", "loadtxt", "genfromtxt", "fromfile", "open", "imread",
          "read_file", "load_img"}
# What passes a value on element by element (or reshaped, stacked).
_ELEMENTWISE = {"tanh", "sigmoid", "clip_by_value", "identity", "reshape",
                "cast", "abs", "exp", "sqrt", "square", "add", "subtract",
                "divide", "truediv", "expand_dims", "squeeze", "tile",
                "stack", "to_float", "convert_to_tensor", "constant",
                "maximum", "minimum", "sin", "cos", "atan", "multiply"}
# What ends a value's way into a scalar (a loss mask), a summary or a
# print: no forward pass.
_NOT_FORWARD = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
                "norm", "l2_loss", "nn.l2_loss", "print", "Print", "image",
                "histogram", "scalar", "assign", "assign_add", "assign_sub",
                "stop_gradient", "gradients", "gradient", "run", "eval"}
# Calls a read of the variable may reach without reaching the loss: it
# is written, fetched, saved, printed or asked for its optimizer slot.
_ASIDE = {"assign", "assign_add", "assign_sub", "load", "set_value", "run",
          "eval", "get_slot", "variables_initializer",
          "initialize_variables", "Saver", "Checkpoint", "print", "Print",
          "histogram", "scalar", "image", "info", "debug", "warning",
          "control_dependencies", "is_variable_initialized", "get_value",
          "batch_get_value", "apply_gradients"}
# What a variable read as `v.x` gives that is no value of it.
_HANDLES = {"assign", "assign_add", "assign_sub", "load", "initializer",
            "name", "op", "shape", "dtype", "get_shape", "graph", "device",
            "initial_value"}
# A step's list of sources (its first argument is the loss).
_SOURCES = {"minimize", "compute_gradients", "gradients", "gradient"}
_LISTS = {"var_list", "variables", "sources", "variables_to_train"}
# What a read of the variable reaches first: aside (True), the loss by
# another way (False), a string key it is kept under, an assignment.
Reached = Union[bool, str, ast.Assign]


def masked_inputs(analysis: Analysis) -> List[Hit]:
  """(the product, its scope, the variable) of each trained input
  multiplied by a fixed mask on its way into the model."""
  found: List[Hit] = []
  project = analysis.project
  for module in project.modules:
    text = module.source.text
    if module.is_test or "*" not in text and "multiply(" not in text or (
        "var_list" not in text and ".gradient(" not in text) or not (
            "Variable(" in text or "get_variable(" in text):
      continue
    root = project.parsed(module)
    if root is None:
      continue
    index = Index(list(root.all()))
    trained = _trained(index)
    if not trained:
      continue
    judge = _Judge(analysis, index, trained)
    lines: Set[int] = set()
    for node, scope, pair in index.products:
      if node.lineno in lines:
        continue
      hit = judge.judged(node, pair, scope)
      if hit is not None:
        lines.add(node.lineno)
        found.append(hit)
  return found


def _trained(index: Index) -> Set[str]:
  """The dotted names of the variables the module's steps list (`var_list
  =[modifier]`, `self.var_list = [self.w]`, `[tensors['pert']]` of a dict
  `{'pert': perturb}`)."""
  found: Set[str] = set()
  for given, home, line in index.listed:
    values = [(given, home, line)]
    spelled = _names.dotted(given)
    if spelled is not None and spelled in index.assigned:
      values = [(v, place, stmt.lineno)
                for v, place, stmt in index.assigned[spelled]]
    for value, place, at in values:
      elements = value.elts if isinstance(value, (ast.List, ast.Tuple)) \
          else [value]
      if len(elements) > 4:
        continue
      for element in elements:
        name = _names.dotted(element)
        bound = index.values(name, place, at) if name is not None else []
        if name is not None and not (bound and not _made(bound[-1][0])):
          found.add(name)  # Not a value bound to the name since.
        elif isinstance(element, ast.Subscript) and isinstance(
            element.slice, ast.Constant) and isinstance(
                element.slice.value, str):
          found.update(n for n in (_names.dotted(v) for v, _ in (
              index.keyed.get(element.slice.value, []))) if n is not None)
  return found


def _made(value: ast.expr) -> bool:
  return isinstance(value, ast.Call) and _names.call_name(value) in _MAKERS


class _Judge:
  """Judges one module's products against its index."""

  def __init__(self, analysis: Analysis, index: Index, trained: Set[str]):
    self.analysis = analysis
    self.index = index
    self.trained = trained
    self.feeds = _fixed_feeds.Feeds(analysis, index)

  def judged(self, node: ast.expr, pair: Tuple[ast.expr, ast.expr],
             scope: _scopes.Scope) -> Optional[Hit]:
    for side, mask in (pair, pair[::-1]):
      variable = self._trained_variable(side, scope, node.lineno, 0)
      if variable is None:
        continue
      root = self._fixed_mask(mask, scope)
      if root is None or not self._forward(node, scope, 0):
        continue
      if _masked_weights._written_or_stopped(node, scope, self.analysis) or (
          _masked_weights.evaluation_only(node, scope, self.analysis)):
        return None
      if not self._only_masked(variable, node, scope, root):
        return None
      return node, scope, variable
    return None

  def _trained_variable(self, node: ast.expr, scope: _scopes.Scope,
                        before: int, depth: int) -> Optional[ast.expr]:
    """The listed variable `node` is made of, element by element (`tanh(
    modifier + simg) / 2`, `0.5 * (tanh(w) + 1) - x`), else None."""
    if depth > 3:
      return None
    if isinstance(node, (ast.Name, ast.Attribute)):
      name = _names.dotted(node)
      if name is None:
        return None
      values = self.index.values(name, scope, before)
      if name in self.trained and values and _made(values[-1][0]):
        return node  # The variable itself, not a value since bound to it.
      for value, place, statement in values[-1:]:
        return self._trained_variable(value, place, statement.lineno,
                                      depth + 1)
      return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (
        ast.Add, ast.Sub, ast.Mult, ast.Div)):
      return self._trained_variable(node.left, scope, before, depth) or (
          self._trained_variable(node.right, scope, before, depth))
    if isinstance(node, ast.UnaryOp):
      return self._trained_variable(node.operand, scope, before, depth)
    if isinstance(node, ast.Call) and _names.call_name(
        node) in _ELEMENTWISE and node.args:
      return self._trained_variable(node.args[0], scope, before, depth)
    return None

  def _fixed_mask(self, mask: ast.expr, scope: _scopes.Scope
                  ) -> Optional[Tuple[str, bool]]:
    """(the mask's name, whether the factor is its complement `1 - m`)
    when a factor is a mask fixed while the variable trains, else None."""
    root, complement = _peeled(mask)
    name = _names.dotted(root)
    if name is None or isinstance(root, ast.Name) and (
        root.id in scope.params) or name in self.trained:
      return None
    if drawn(mask, scope) or made_here(mask, scope) or structural(
        mask, scope) or not self._fixed_origin(name, scope, 0):
      return None
    return name, complement

  def _fixed_origin(self, name: str, scope: _scopes.Scope, depth: int
                    ) -> bool:
    """Whether every value `name` is assigned is fixed for the run: a
    placeholder of a fixed non-scalar shape whose feeds are, a variable
    no step trains whose writes are, an array or an image loaded once."""
    values = self.index.values(name, scope)
    if not values or depth > 2:
      return False
    for value, place, statement in values[-4:]:
      peeled, _ = _peeled(value)
      if isinstance(peeled, (ast.Name, ast.Attribute)) and (
          peeled is not value):
        inner = _names.dotted(peeled)
        if inner is None or inner in self.trained or not (
            self._fixed_origin(inner, place, depth + 1)):
          return False
        continue
      if not isinstance(value, ast.Call):
        return False
      called = _names.call_name(value)
      if called in _fixed_feeds.PLACEHOLDERS:
        if not _fixed_shape(value) or not self.feeds.placeholder_fixed(
            value):
          return False
      elif called in _MAKERS:
        if not self.feeds.variable_fixed(name, self.trained):
          return False
      elif not self._loaded(value, place) or _input_index.loop_around(
          statement, self.analysis.order(place).parent) is not None:
        return False
    return True

  def _loaded(self, call: ast.Call, scope: _scopes.Scope) -> bool:
    """Whether a call loads an array or an image (`np.load`, a project
    function that opens a file and draws nothing)."""
    if _names.call_name(call) in _LOADS:
      return True
    function = self.analysis.flow.callee(call, scope)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      return False
    return any(isinstance(n, ast.Call) and _names.call_name(n) in _LOADS
               for n in ast.walk(function)) and not any(
                   isinstance(n, ast.Call) and "random" in (
                       _names.dotted(n.func) or "")
                   for n in ast.walk(function))

  def _forward(self, node: ast.AST, scope: _scopes.Scope, depth: int
               ) -> bool:
    """Whether a value goes on into a model or an op of the forward pass
    (`model.predict(newimg)`, `tf.math.add(cloud, perturb_masked)`), not
    only into a reduction (a loss mask), a summary, or a weight's
    reader."""
    order = self.analysis.order(scope)
    current: ast.AST = node
    parent = order.parent(current)
    while isinstance(parent, (ast.BinOp, ast.UnaryOp)) or isinstance(
        parent, ast.Call) and _names.call_name(parent) in _ELEMENTWISE and (
            parent.func is not current):
      current, parent = parent, order.parent(parent)
    if isinstance(parent, ast.Call) and parent.func is not current:
      called = _names.call_name(parent)
      return not (called in _NOT_FORWARD or called in (
          _masked_weights._READERS) or "loss" in called.lower() or (
              "summary" in (_names.dotted(parent.func) or "")))
    if isinstance(parent, ast.keyword) or not isinstance(
        parent, ast.Assign) or len(parent.targets) != 1 or depth > 3:
      return False
    name = _names.dotted(parent.targets[0])
    if name is None:
      return False
    return any(self._forward(read, place, depth + 1)
               for read, place in self._reads_seeing(name, parent, scope))

  def _reads_seeing(self, name: str, statement: ast.Assign,
                    home: _scopes.Scope, masking: Optional[ast.AST] = None
                    ) -> List[_input_index.Read]:
    """The reads of `name` that may see what `statement` assigns it: in
    its scope, those after it up to an assignment on every path after it
    (one in a branch hides it only in that branch; in a loop, the reads
    before the first assignment see it next turn); elsewhere (another
    method, a closure), all unless such an assignment follows. The
    statement `masking` (the masked product's, under the `if` that turns
    the mask on) hides it wherever it runs: the question is what trains
    when the mask is on."""
    mine = [b[2] for b in self.index.values(name, home) if b[1] is home]
    at = bisect.bisect_left([b.lineno for b in mine], statement.lineno)
    if at >= len(mine) or mine[at] is not statement:
      return []
    parent_of = self.analysis.order(home).parent
    later = mine[at + 1:]
    cut = next((b for b in later if b is masking or _hides(
        b, statement, parent_of)), None)
    end = statement.end_lineno or statement.lineno
    until = 10 ** 9 if cut is None else (cut.end_lineno or cut.lineno)
    reads, lines = self.index.reads_in(name, home)
    between = [b for b in later if b is not cut and b.lineno < until]
    found = [r for r in reads[bisect.bisect_right(lines, end):(
        bisect.bisect_right(lines, until))] if not any(
            (b.end_lineno or b.lineno) < r[0].lineno and _hides(
                b, r[0], parent_of) for b in between)]
    loop = _input_index.loop_around(statement, parent_of)
    if loop is not None:
      first = mine[0].lineno
      found += [r for r in reads[bisect.bisect_left(
          lines, getattr(loop, "lineno", 0)):bisect.bisect_left(
              lines, first)] if _input_index.loop_around(
                  r[0], parent_of) is loop]
    if cut is None:
      found += [(read, place) for read, place in self.index.reads.get(
          name, []) if place is not home and (
              place.cls is home.cls if name.startswith("self.") else (
                  home in _outer(place) and name not in _local(place)))]
    return found

  def _only_masked(self, variable: ast.expr, product: ast.expr,
                   scope: _scopes.Scope, mask: Tuple[str, bool]) -> bool:
    """Whether every read of the variable (and of what is computed from
    it) reaches the loss only through a product with this mask: else the
    masked elements train by that other way."""
    name = _names.dotted(variable)
    bound = self.index.values(name, scope, product.lineno) if (
        name is not None) else []
    if not bound or name is None:
      return False
    made = bound[-1][2]
    masking = self.analysis.order(scope).statement_of(product)
    if not isinstance(made, ast.Assign):
      return False
    queue: List[Tuple[str, Optional[ast.Assign], _scopes.Scope]] = [
        (name, made, bound[-1][1])]
    seen: Set[object] = set()
    while queue:
      spelled, statement, home = queue.pop()
      reads = self.index.key_reads.get(spelled, []) if statement is None \
          else self._reads_seeing(spelled, statement, home, masking)
      for read, place in reads:
        reached = self._reached(read, place, product, mask)
        if reached is False:
          return False
        if reached is True or id(reached) in seen or reached in seen:
          continue
        if len(seen) > 200:
          return False
        if isinstance(reached, str):
          seen.add(reached)
          queue.append((reached, None, place))
        else:
          seen.add(id(reached))
          target = _names.dotted(reached.targets[0])
          if target is None:
            return False
          queue.append((target, reached, place))
    return True

  def _reached(self, read: ast.expr, place: _scopes.Scope,
               product: ast.expr, mask: Tuple[str, bool]) -> Reached:
    """What a read of the variable (or of a value made from it) reaches
    first, walking out of its expression."""
    parent_of = self.analysis.order(place).parent
    node: ast.AST = read
    while True:
      if node is product or _same_mask(node, mask):
        return True
      parent = parent_of(node)
      if parent is None:
        return False
      if isinstance(parent, ast.Attribute) and parent.attr in _HANDLES:
        return True
      if isinstance(parent, ast.Call) and parent.func is not node:
        called = _names.call_name(parent)
        if called in _ASIDE:
          return True
        if called in _SOURCES:
          return bool(parent.args) and node is not parent.args[0]
      if isinstance(parent, ast.keyword) and parent.arg in _LISTS:
        return True
      if isinstance(parent, ast.Dict):
        if node not in parent.values:
          return True  # A key fed: the variable's value is set.
        key = parent.keys[parent.values.index(node)]
        return key.value if isinstance(key, ast.Constant) and isinstance(
            key.value, str) else False
      if isinstance(parent, ast.stmt):
        if not isinstance(parent, ast.Assign) or len(parent.targets) != 1:
          return False
        target = parent.targets[0]
        if isinstance(target, ast.Subscript):
          key = target.slice
          return key.value if isinstance(key, ast.Constant) and isinstance(
              key.value, str) else False
        return parent if _names.dotted(target) is not None else False
      if isinstance(parent, (ast.Lambda, ast.comprehension)):
        return False
      node = parent


def _hides(assignment: ast.stmt, later: ast.AST,
           parent_of: _input_index.ParentOf) -> bool:
  """Whether `assignment` runs on every path to `later` that follows it:
  `later` (or a statement around it) is in the same list of statements
  (not another branch of an `if`)."""
  holder = parent_of(assignment)
  if holder is None:
    return False
  siblings = next((v for v in map(lambda f: getattr(holder, f, None), (
      "body", "orelse", "finalbody", "handlers")) if isinstance(v, list)
                   and any(x is assignment for x in v)), None)
  if siblings is None:
    return False
  node: Optional[ast.AST] = later
  while node is not None and node is not holder:
    if any(x is node for x in siblings):
      return True
    node = parent_of(node)
  return False


def _same_mask(node: ast.AST, mask: Tuple[str, bool]) -> bool:
  """Whether `node` is a product with the mask (or, for `1 - m`, with the
  same complement)."""
  pair = _masked_weights.product(node)
  return pair is not None and isinstance(node, ast.expr) and any(
      (_names.dotted(root), complement) == mask
      for root, complement in map(_peeled, pair))


def _outer(scope: _scopes.Scope) -> List[_scopes.Scope]:
  chain = []
  place: Optional[_scopes.Scope] = scope.parent
  while place is not None:
    chain.append(place)
    place = place.parent
  return chain


def _local(scope: _scopes.Scope) -> Set[str]:
  return set(scope.defs) | set(scope.params)


def _peeled(mask: ast.expr) -> Tuple[ast.expr, bool]:
  """(what a mask factor reads, whether it is the complement `1 - m`)."""
  complement = False
  for _ in range(4):
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.Sub) and (
        isinstance(mask.left, ast.Constant)) and mask.left.value in (1, 1.0):
      mask, complement = mask.right, True
    elif isinstance(mask, ast.Call) and _names.call_name(mask) in (
        _ELEMENTWISE) and mask.args:
      mask = mask.args[0]
    elif isinstance(mask, (ast.List, ast.Tuple)) and mask.elts:
      mask = mask.elts[0]
    elif isinstance(mask, ast.BinOp) and isinstance(
        mask.op, ast.Mult) and isinstance(mask.left, ast.List):
      mask = mask.left  # `[m] * 3` stacked.
    elif isinstance(mask, ast.Subscript):
      mask = mask.value
  return mask, complement


def _fixed_shape(call: ast.Call) -> bool:
  """Whether a placeholder's shape has no batch axis (`None`) and is no
  scalar (`[]`): one mask for the whole run, of the input's shape."""
  shape = next((k.value for k in call.keywords if k.arg == "shape"),
               call.args[1] if len(call.args) > 1 else None)
  if shape is None:
    return False
  if isinstance(shape, (ast.List, ast.Tuple)) and not shape.elts:
    return False
  return not any(isinstance(n, ast.Constant) and n.value is None
                 for n in ast.walk(shape))
