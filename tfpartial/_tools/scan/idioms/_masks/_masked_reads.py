"""Whether a trained input reaches the loss only through its mask (part
of `_masked_inputs`): every read of the variable, and of each value made
from it (followed through local names, `self.` attributes and the string
keys of a dict it is kept in), must reach the loss through a product
with the same mask, or only be written (`assign`), fetched (`run`),
listed (`var_list=`, a step's sources), saved or asked for its
optimizer's slots. A second use past the mask, a regulariser of the
variable itself or an overlay under the mask's complement trains the
masked elements: then the input is no partial freeze."""

from __future__ import annotations

import ast
import bisect
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _input_index
from tfpartial._tools.scan.idioms._masks import _masked_weights

Index = _input_index.Index
# What passes a value on element by element (or reshaped, stacked).
ELEMENTWISE = {"tanh", "sigmoid", "clip_by_value", "identity", "reshape",
               "cast", "abs", "exp", "sqrt", "square", "add", "subtract",
               "divide", "truediv", "expand_dims", "squeeze", "tile",
               "stack", "to_float", "convert_to_tensor", "constant",
               "maximum", "minimum", "sin", "cos", "atan", "multiply"}
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


class Reads:
  """Follows the reads of one module's variables through its index."""

  def __init__(self, analysis: Analysis, index: Index):
    self.analysis = analysis
    self.index = index
    # (id(the variable's assignment), the mask) -> the answer.
    self._answers: Dict[Tuple[int, Tuple[str, bool]], bool] = {}
    self._masking: Dict[Tuple[str, bool], FrozenSet[int]] = {}

  def seeing(self, name: str, statement: ast.Assign, home: _scopes.Scope,
             masking: FrozenSet[int] = frozenset()
             ) -> List[_input_index.Read]:
    """The reads of `name` that may see what `statement` assigns it: in
    its scope, those after it up to an assignment on every path after it
    (one in a branch hides it only in that branch; in a loop, the reads
    before the first assignment see it next turn); elsewhere (another
    method, a closure), all unless such an assignment follows. The
    statements `masking` (ids of the masked products', under the `if`
    that turns the mask on) hide it wherever they run: the question is
    what trains when the mask is on."""
    mine = [b[2] for b in self.index.values(name, home) if b[1] is home]
    at = bisect.bisect_left([b.lineno for b in mine], statement.lineno)
    if at >= len(mine) or mine[at] is not statement:
      return []
    parent_of = self.analysis.order(home).parent
    later = mine[at + 1:]
    cut = next((b for b in later if id(b) in masking or _hides(
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
      derived = self._derived(home) if name.startswith("self.") else []
      found += [(read, place) for read, place in self.index.reads.get(
          name, []) if place is not home and (
              place.cls is home.cls if name.startswith("self.") else (
                  home in _outer(place) and name not in _local(place)))]
      found += [(node, method) for info in derived
                for method in info.methods.values()
                for node in ast.walk(method.node) if isinstance(
                    node, ast.Attribute) and isinstance(
                        node.ctx, ast.Load) and _names.dotted(node) == name]
    return found

  def _derived(self, home: _scopes.Scope) -> List[_scopes.ClassInfo]:
    """The project's subclasses of the class `home` is a method of (a
    subclass's method reads what `self.` holds too)."""
    if home.cls is None:
      return []
    return self.analysis.project.subclasses(home.cls)[:8]

  def only_masked(self, variable: ast.expr, product: ast.expr,
                   scope: _scopes.Scope, mask: Tuple[str, bool]) -> bool:
    """Whether every read of the variable (and of what is computed from
    it) reaches the loss only through a product with this mask: else the
    masked elements train by that other way. Answered once per variable
    and mask, all its products with the mask the way through."""
    name = _names.dotted(variable)
    bound = self.index.values(name, scope, product.lineno) if (
        name is not None) else []
    if not bound or name is None:
      return False
    made = bound[-1][2]
    if not isinstance(made, ast.Assign):
      return False
    key = (id(made), mask)
    if key not in self._answers:
      self._answers[key] = self._only_masked(name, made, bound[-1][1], mask)
    return self._answers[key]

  def _masking_statements(self, mask: Tuple[str, bool]) -> FrozenSet[int]:
    """The ids of the statements holding a product with the mask."""
    if not self._masking:
      grouped: Dict[Tuple[str, bool], Set[int]] = {}
      for node, place, _ in self.index.products:
        pair = _masked_weights.product(node)
        for root, complement in map(peeled, pair or ()):
          grouped.setdefault((_names.dotted(root) or "", complement),
                             set()).add(id(self.analysis.order(
                                 place).statement_of(node)))
      self._masking = {k: frozenset(v) for k, v in grouped.items()}
      self._masking[("", False)] = frozenset()
    return self._masking.get(mask, frozenset())

  def _only_masked(self, name: str, made: ast.Assign, home: _scopes.Scope,
                   mask: Tuple[str, bool]) -> bool:
    masking = self._masking_statements(mask)
    queue: List[Tuple[str, Optional[ast.Assign], _scopes.Scope]] = [
        (name, made, home)]
    seen: Set[object] = set()
    while queue:
      spelled, statement, home = queue.pop()
      reads = self.index.key_reads.get(spelled, []) if statement is None \
          else self.seeing(spelled, statement, home, masking)
      for read, place in reads:
        reached = self._reached(read, place, mask)
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
               mask: Tuple[str, bool]) -> Reached:
    """What a read of the variable (or of a value made from it) reaches
    first, walking out of its expression."""
    parent_of = self.analysis.order(place).parent
    node: ast.AST = read
    while True:
      if _same_mask(node, mask):
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
      for root, complement in map(peeled, pair))


def _outer(scope: _scopes.Scope) -> List[_scopes.Scope]:
  chain = []
  place: Optional[_scopes.Scope] = scope.parent
  while place is not None:
    chain.append(place)
    place = place.parent
  return chain


def _local(scope: _scopes.Scope) -> Set[str]:
  return set(scope.defs) | set(scope.params)


def peeled(mask: ast.expr) -> Tuple[ast.expr, bool]:
  """(what a mask factor reads, whether it is the complement `1 - m`)."""
  complement = False
  for _ in range(4):
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, ast.Sub) and (
        isinstance(mask.left, ast.Constant)) and mask.left.value in (1, 1.0):
      mask, complement = mask.right, True
    elif isinstance(mask, ast.Call) and _names.call_name(mask) in (
        ELEMENTWISE) and mask.args:
      mask = mask.args[0]
    elif isinstance(mask, (ast.List, ast.Tuple)) and mask.elts:
      mask = mask.elts[0]
    elif isinstance(mask, ast.BinOp) and isinstance(
        mask.op, ast.Mult) and isinstance(mask.left, ast.List):
      mask = mask.left  # `[m] * 3` stacked.
    elif isinstance(mask, ast.Subscript):
      mask = mask.value
  return mask, complement


