"""A Keras constraint class that sets chosen elements of its weight back
to constants (part 36f's H-Mem: `tf.tensor_scatter_nd_update(w, [[w.
shape[0] - 1]], tf.ones((1, w.shape[1])))`, the last row of a learned
table set to ones after every update: that row never moves), and such a
class nothing can attach (no decorator, named nowhere, comments included,
but on its own `class` line, in a module that trains and that no package
exports). Part of `weight-remask`.

Zeros written at positions the shapes alone give (an autapse diagonal)
are connectivity, not a freeze (BUILDING.md, "Structural masks"); zeros
at positions spelled as numbers (a padding row) and any non-zero
constant are a fixed part of a trained weight; so are elements zeroed by
a mask of ones and then given a number by an array added at the same
positions (`offset_at_zeroed`: Bayar's centre of -1)."""

from __future__ import annotations

import ast
import bisect
import collections
import re
from typing import Counter, Dict, List, Optional, Set, Tuple, cast

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _mask_origins
from tfpartial._tools.scan.idioms._masks import _rows

_SCATTERS = frozenset({"tensor_scatter_nd_update", "tensor_scatter_update"})


def set_back(scope: _scopes.Scope, node: ast.FunctionDef
             ) -> Optional[ast.Call]:
  """The scatter by which a constraint's `__call__` (`node`, its `scope`)
  writes constants into elements of its weight that neither the weight's
  values nor a draw choose, if any."""
  if len(node.args.args) < 2:
    return None
  weight = node.args.args[1].arg
  for item in scope.nodes:
    if not isinstance(item, ast.Call) or _names.call_name(item) not in (
        _SCATTERS) or len(item.args) != 3:
      continue
    tensor, indices, updates = item.args
    if not (isinstance(tensor, ast.Name) and tensor.id == weight) or not (
        _rows.filled(updates, scope)) or _chosen_anew(indices, weight,
                                                      scope):
      continue
    if _calls.zero(updates, scope) or _zeros(updates):
      if not _literal(indices, scope):
        continue  # Zeros where the shapes say: connectivity.
    return item
  return None


def offset_at_zeroed(scope: _scopes.Scope, node: ast.FunctionDef,
                     analysis: Analysis
                     ) -> Optional[Tuple[ast.expr, ast.Constant]]:
  """The product and the value by which a constraint's `__call__` returns
  its weight zeroed by a mask of ones (`keep[c, c] = 0; w = w * keep`,
  then only rescaled, `w = w / s`, `tf.math.divide(w, s)`) with an array of zeros holding a number
  at the same positions added or taken off after it (`one[c, c] = 1;
  return w - one`, or that sum reshaped): Bayar's constrained convolution, the centre -1 after
  every update. The zeroed positions alone are connectivity; a non-zero
  number added there after the zeroing, in the value returned, is a fixed
  part of the trained weight. Judged once per `__call__`, in one pass
  over its statements."""
  found = analysis.once(f"offset at zeroed {id(node)}",
                        lambda: _offset_at_zeroed(scope, node, analysis))
  return cast(Optional[Tuple[ast.expr, ast.Constant]], found)


def _offset_at_zeroed(scope: _scopes.Scope, node: ast.FunctionDef,
                      analysis: Analysis
                      ) -> Optional[Tuple[ast.expr, ast.Constant]]:
  body = node.body
  if len(node.args.args) < 2 or not body or not isinstance(
      body[-1], ast.Return) or body[-1].value is None or sum(
          isinstance(n, ast.Return) for n in ast.walk(node)) != 1:
    return None  # One value returned, by the last statement.
  bound = _top_bindings(node)
  result: ast.expr = body[-1].value
  at = len(body) - 1
  if isinstance(result, ast.Call) and _names.call_name(
      result) == "reshape" and result.args:
    result = result.args[0]  # Every element kept, only laid out anew.
  if isinstance(result, ast.Name):
    last = _last_binding(body, bound, result.id, at)
    if last is None:
      return None
    at, result = last
  parts = _summands(result)
  if parts is None:
    return None
  first, added, sign = parts
  line = body[at].lineno
  filled = _spots(added.id, scope, "zeros", False, line, analysis)
  current: ast.expr = first
  while filled and isinstance(current, ast.Name):
    last = _last_binding(body, bound, current.id, at)
    if last is None:
      return None  # The parameter itself: nothing zeroed before the sum.
    at, value = last
    factors = _names.factors(value)
    zeroed = [_spots(f.id, scope, "ones", True, body[at].lineno, analysis)
              for f in factors if isinstance(f, ast.Name)]
    spots = next((z for z in zeroed if z), None)
    if spots is not None:
      for index, number in filled.items():
        if index in spots and isinstance(number, ast.Constant) and (
            isinstance(number.value, (int, float))):
          product = body[at]
          target = product.target if isinstance(
              product, ast.AugAssign) else value
          return target, ast.Constant(sign * number.value)
      return None
    if isinstance(value, ast.BinOp) and isinstance(value.op,
                                                   (ast.Mult, ast.Div)):
      current = value.left
    elif isinstance(value, ast.Call) and _names.call_name(value) in {
        "divide", "truediv", "multiply"} and len(value.args) == 2:
      current = value.args[0]
    else:
      return None  # Not only rescaled: the zeros need not survive.
  return None


def _top_bindings(node: ast.FunctionDef) -> Dict[str, List[int]]:
  """Each local name bound only by plain assignments among the function's
  own statements (`w = ...`, `w *= ...`): the indexes of those
  statements. A name bound anywhere else (in a block, by a loop, by
  unpacking) is left out, so the order of its values is not guessed."""
  bound: Dict[str, List[int]] = {}
  plain: Set[int] = set()
  for index, statement in enumerate(node.body):
    target = None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
      target = statement.targets[0]
    elif isinstance(statement, ast.AugAssign):
      target = statement.target
    if isinstance(target, ast.Name):
      bound.setdefault(target.id, []).append(index)
      plain.add(id(target))
  for item in ast.walk(node):
    if isinstance(item, ast.Name) and isinstance(
        item.ctx, ast.Store) and id(item) not in plain:
      bound[item.id] = []
  return bound


def _last_binding(body: List[ast.stmt], bound: Dict[str, List[int]],
                  name: str, before: int) -> Optional[Tuple[int, ast.expr]]:
  """The last plain binding of `name` before statement `before`, with
  its value (`w *= m` read as `w * m`)."""
  indexes = bound.get(name, [])
  at = bisect.bisect_left(indexes, before) - 1
  if at < 0:
    return None
  statement = body[indexes[at]]
  if isinstance(statement, ast.AugAssign):
    return indexes[at], ast.copy_location(ast.BinOp(
        ast.Name(name, ast.Load()), statement.op, statement.value),
        statement)
  return indexes[at], cast(ast.Assign, statement).value


def _summands(item: ast.AST) -> Optional[Tuple[ast.expr, ast.Name, int]]:
  """The first term, the name added (+1) or taken off (-1) as the second
  term, of `a + b`, `a - b`, `add(a, b)`, `subtract(a, b)`."""
  if isinstance(item, ast.BinOp) and isinstance(item.op, (ast.Add,
                                                          ast.Sub)):
    first, second = item.left, item.right
    sign = 1 if isinstance(item.op, ast.Add) else -1
  elif isinstance(item, ast.Call) and _names.call_name(item) in {
      "add", "subtract"} and len(item.args) == 2:
    first, second = item.args
    sign = 1 if _names.call_name(item) == "add" else -1
  else:
    return None
  return (first, second, sign) if isinstance(second, ast.Name) else None


def _spots(name: str, scope: _scopes.Scope, fill: str, zero: bool,
           before: int, analysis: Analysis) -> Dict[str, ast.AST]:
  """The positions (as text of their index) at which the local array
  `name`, made once by `np.<fill>(...)`, is set to a number on a line
  before `before`: to zero (`zero`) or to a non-zero one; none if it is
  bound or written otherwise. The writes are indexed once per scope."""
  made = [d.value for d in scope.defs.get(name, [])
          if not isinstance(d.value, ast.Constant)]  # Not `m[i] = 0`.
  if len(made) != 1 or not isinstance(made[0], ast.Call) or (
      _names.call_name(made[0]) not in (fill, fill + "_like")):
    return {}
  writes = cast(Dict[str, List[ast.Assign]], analysis.once(
      f"subscript writes {id(scope)}", lambda: _subscript_writes(scope)))
  spots: Dict[str, ast.AST] = {}
  for item in writes.get(name, []):
    number = item.value
    if not (isinstance(number, ast.Constant) and isinstance(
        number.value, (int, float))) or _names.is_zero(number) != zero:
      return {}
    if item.lineno < before:
      spots[ast.dump(cast(ast.Subscript, item.targets[0]).slice)] = number
  return spots


def _subscript_writes(scope: _scopes.Scope) -> Dict[str, List[ast.Assign]]:
  """Each local name's element writes in `scope` (`m[i, j] = 0`)."""
  writes: Dict[str, List[ast.Assign]] = {}
  for item in scope.nodes:
    if isinstance(item, ast.Assign) and len(item.targets) == 1 and (
        isinstance(item.targets[0], ast.Subscript)) and isinstance(
            item.targets[0].value, ast.Name):
      writes.setdefault(item.targets[0].value.id, []).append(item)
  return writes


def _zeros(node: ast.expr) -> bool:
  """`tf.zeros(...)`, `tf.zeros_like(...)`, `tf.fill(shape, 0)`,
  `tf.constant(0., shape=...)`."""
  if not isinstance(node, ast.Call):
    return False
  name = _names.call_name(node)
  if name in {"zeros", "zeros_like"}:
    return True
  value = node.args[1] if name == "fill" and len(node.args) > 1 else (
      node.args[0] if name == "constant" and node.args else None)
  return value is not None and _names.is_zero(value)


def _chosen_anew(indices: ast.expr, weight: str, scope: _scopes.Scope,
                 seen: Optional[Set[str]] = None) -> bool:
  """Whether the weight's values (not its shape), or a draw, choose the
  positions (itself or through the local names it reads, each name once
  and at most four names deep: `kept = rows; rows = kept` ends)."""
  seen = set() if seen is None else seen
  shaped = set()
  for item in ast.walk(indices):
    if isinstance(item, ast.Attribute) and item.attr in {"shape", "dtype"} \
        or isinstance(item, ast.Call) and _names.call_name(item) in {
            "shape", "int_shape", "size", "rank"}:
      shaped |= {id(n) for n in ast.walk(item)}
  for item in ast.walk(indices):
    if isinstance(item, ast.Name) and id(item) not in shaped and (
        item.id == weight):
      return True
  if _mask_origins.drawn(indices, scope):
    return True
  if len(seen) > 4:
    return False
  names = {n.id for n in ast.walk(indices) if isinstance(n, ast.Name)}
  fresh = names - {weight} - seen
  seen |= fresh
  return any(d.value is not None and _chosen_anew(d.value, weight, scope,
                                                  seen)
             for name in sorted(fresh)
             for d in scope.defs.get(name, [])[:4]
             if d.value is not indices)


def _literal(indices: ast.expr, scope: _scopes.Scope, depth: int = 0
             ) -> bool:
  """`[[0]]`, `[[0], [1]]`, `[0]`, or a local name bound to one: positions
  spelled as numbers."""
  if isinstance(indices, ast.Name) and depth < 2:
    defs = scope.defs.get(indices.id, [])
    return len(defs) == 1 and defs[0].value is not None and _literal(
        defs[0].value, scope, depth + 1)
  if isinstance(indices, (ast.List, ast.Tuple)):
    return bool(indices.elts) and all(_literal(e, scope, depth)
                                      for e in indices.elts)
  return isinstance(indices, ast.Constant) and isinstance(
      indices.value, int) and not isinstance(indices.value, bool)


def never_attached(info: _scopes.ClassInfo, analysis: Analysis) -> bool:
  """Whether a constraint class `info` with no decorator, in a module
  that trains a model of its own, is named nowhere in the project (code,
  strings or comments) but on its own `class` line and in `super(Name,
  self)`, and no package's `__init__` passes its module on: nothing can
  give it to a weight. A registry, a getattr by name or a comment names
  it and keeps it. Only a scatter constraint is judged so."""
  if info.node.decorator_list:
    return False
  home = analysis.project.module_of(info.home)
  if not _words(home, analysis)[0]:
    return False  # A module of constraints alone: its users attach them.
  for module in analysis.project.all_modules_with((info.name,)):
    _, words, own = _words(module, analysis)
    if words[info.name] > own[info.name] or (
        module is not home and words[info.name]):
      return False
  stem = home.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
  if stem == "__init__":
    return False
  return not any(
      module is not home and module.path.endswith("__init__.py") and (
          _imports(module, stem))
      for module in analysis.project.all_modules_with((stem,)))


def _words(module: object, analysis: Analysis
           ) -> Tuple[bool, Counter[str], Counter[str]]:
  """Once per module: whether it trains, the count of each word in its
  whole text (comments and strings too), and of each class name on its
  own `class` line or in `super(Name,`."""
  text = getattr(getattr(module, "source", None), "text", "")
  path = getattr(module, "path", "")

  def compute() -> Tuple[bool, Counter[str], Counter[str]]:
    return (_TRAINS.search(text) is not None,
            collections.Counter(_WORD.findall(text)),
            collections.Counter(a or b for a, b in _OWN.findall(text)))

  return cast(Tuple[bool, Counter[str], Counter[str]],
              analysis.once("constraint-words:" + path, compute))


# What trains in a module.
_TRAINS = re.compile(r"\.(?:fit|fit_generator|train_on_batch|"
                     r"apply_gradients|minimize)\(")
_WORD = re.compile(r"\b\w+\b")
_OWN = re.compile(r"\bclass\s+(\w+)|\bsuper\(\s*(\w+)\s*,")

def _imports(module: object, stem: str) -> bool:
  """Whether a module's text imports a module named `stem`."""
  text = getattr(getattr(module, "source", None), "text", "")
  return re.search(r"\bimport\b[^\n]*\b" + re.escape(stem) + r"\b|"
                   r"\bfrom\s+[\w.]*\b" + re.escape(stem) + r"\b",
                   text) is not None
