"""Whether a constraint's product keeps the sign of a value by testing
that same value against zero (`m * cast(m >= 0)`, `m *
cast(greater_equal(m, 0.))`, the test bound once to a local name too):
the product is `relu(m)` (or its negative side), a projection computed
anew from the value after every update, as `w * cast(w >= 0)` is. An
element zeroed that way gets its gradient and comes back once its sign
turns: nothing is frozen by the test itself, and what `m` is made of is
judged on its own products; `m` is the weight or a copy of it scaled
by a scalar (part 39's `AlphaConstraint`: `m = w * (desired / norms)`,
numbers, whole reductions of the weight and a cap every construction
gives as a number); a scale of any other shape, a stored, loaded or
helper's mask, `w / self.mask`, may be zero where it chooses. A
statistic of the weight (`low = K.min(w)`, mend 40's shift), a
magnitude threshold (`abs(m) > 0.01`, a pruning mask), a test of
another value or of positions (`rows >= 10`), or a name bound again
between the test and the product is no sign test.
Read by `weight-remask`."""

from __future__ import annotations

import ast
import weakref
from typing import Callable, Dict, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _handed_lookups

# What only converts a test's truth to numbers.
_CASTS = frozenset({"cast", "to_float", "cast_to_floatx"})
# Tests of a value against zero, as calls.
_TESTS = frozenset({"greater", "greater_equal", "less", "less_equal"})
_OPS = (ast.Gt, ast.GtE, ast.Lt, ast.LtE)
# id(function node) -> how many times each name is bound in it.
_Bound = Dict[int, Dict[str, int]]
# Per project, the functions read.
_BOUND: "weakref.WeakKeyDictionary[_project.Project, _Bound]" = (
    weakref.WeakKeyDictionary())


# Where a function computing from values may come from.
_LIBRARIES = frozenset({"tensorflow", "keras", "tf_keras", "numpy"})
# Elementwise functions of values (and Keras' fuzz factor).
_MATH = frozenset({"sqrt", "rsqrt", "square", "abs", "exp", "log",
                   "clip", "clip_by_value", "maximum", "minimum",
                   "epsilon"})
# Reductions of a whole tensor to one number, given no axis.
_WHOLE = frozenset({"reduce_sum", "reduce_mean", "reduce_max", "sum",
                    "mean", "max", "norm"})
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)


def sign_kept(pair: Sequence[ast.AST], weight: str, scope: _scopes.Scope,
              project: _project.Project) -> bool:
  """Whether one factor of `pair` is the weight, or a copy of it scaled
  by a scalar of it (`m = w * s`, bound once; `_Reading.scalar`), and
  the other tests that same name against zero, directly or through a
  name bound once in `scope` (a constraint's `__call__`), the tested
  name then bound at most once; the bindings read once per function. A
  statistic of the weight (`low = K.min(w)`) is no copy: a shift by it
  stays reported (mend 40).

  >>> top = _scopes.collect(ast.parse("def f(w):\\n  m = w * 2\\n"))
  >>> f, p = top.scope_of(top.node.body[0]), _project.Project([])
  >>> product = ast.parse("m * cast(m >= 0.)").body[0].value
  >>> sign_kept([product.left, product.right], "w", f, p)
  True
  >>> product = ast.parse("m * cast(abs(m) > 0.01)").body[0].value
  >>> sign_kept([product.left, product.right], "w", f, p)
  False
  """
  if len(pair) != 2:
    return False
  functions = _BOUND.setdefault(project, {})
  if id(scope.node) not in functions:
    functions[id(scope.node)] = _names.binding_counts(scope.node)
  bound = functions[id(scope.node)]
  for value, test in ((pair[0], pair[1]), (pair[1], pair[0])):
    if not isinstance(value, ast.Name) or not _scaled_copy(
        value.id, weight, scope, bound, project):
      continue
    through = _bound_once(test, scope, bound)
    binds = bound.get(value.id, 0) + (value.id in scope.params)
    if through is not None and binds > 1:
      continue  # The name may be bound again between test and product.
    if _tests_sign(through or test, value.id):
      return True
  return False


def _scaled_copy(name: str, weight: str, scope: _scopes.Scope,
                 bound: Dict[str, int], project: _project.Project) -> bool:
  """Whether `name` is the weight, never bound again, or a local name
  bound once to it times or over a scalar of it (`w * s`, `w / s`):
  where a factor of any other shape is zero (a stored or loaded mask,
  a helper's) the element would stay zero."""
  if name == weight:
    return weight in scope.params and not bound.get(weight)
  value = _bound_once(ast.Name(name, ast.Load()), scope, bound)
  if not isinstance(value, ast.BinOp) or bound.get(weight) or not (
      isinstance(value.op, (ast.Mult, ast.Div))):
    return False
  pairs = [(value.left, value.right)] + (
      [] if isinstance(value.op, ast.Div) else [(value.right, value.left)])
  read = _Reading(weight, scope, bound, project)
  return any(isinstance(w, ast.Name) and w.id == weight and read.scalar(s)
             for w, s in pairs)


class _Reading:
  """What a constraint's scale is made of, read through local names
  bound once (a name read within its own binding is no scale)."""

  def __init__(self, weight: str, scope: _scopes.Scope,
               bound: Dict[str, int], project: _project.Project) -> None:
    self.weight, self.scope, self.bound = weight, scope, bound
    self.project = project
    self.seen: Set[str] = set()
    self.known: Dict[Tuple[str, str], bool] = {}

  def scalar(self, node: ast.AST) -> bool:
    """A scalar made of numbers, the class's numbers given at every
    construction, and whole reductions of values of the weight alone
    (`desired / (K.epsilon() + K.sqrt(reduce_sum(square(w))))`)."""
    if _number(node):
      return True
    if isinstance(node, ast.Attribute):
      return self._handed(node)
    call = self._math(node)
    if call is not None:
      if _names.call_name(call) in _WHOLE:
        return len(call.args) == 1 and self.of_weight(call.args[0])
      return all(self.scalar(a) for a in call.args)
    return self._through(node, self.scalar)

  def of_weight(self, node: ast.AST) -> bool:
    """A value of the weight and numbers alone, any shape."""
    if _number(node) or isinstance(node, ast.Name) and (
        node.id == self.weight):
      return True
    call = self._math(node)
    if call is not None:
      return all(self.of_weight(a) for a in call.args)
    return self._through(node, self.of_weight)

  def _through(self, node: ast.AST, read: Callable[[ast.AST], bool]
               ) -> bool:
    """`read` over arithmetic and a local name's one binding."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
      return read(node.left) and read(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(
        node.op, (ast.USub, ast.UAdd)):
      return read(node.operand)
    if not isinstance(node, ast.Name) or node.id in self.seen:
      return False
    key = (node.id, read.__name__)
    if key not in self.known:  # Each name read once per kind.
      value = _bound_once(node, self.scope, self.bound)
      self.seen.add(node.id)  # Being read: `x = x * 2` is no scale.
      self.known[key] = value is not None and read(value)
      self.seen.discard(node.id)
    return self.known[key]

  def _math(self, node: ast.AST) -> Optional[ast.Call]:
    """`node` as a call, without keywords, of a TensorFlow, Keras or
    NumPy function that computes from values (`sqrt`, `clip`)."""
    if not isinstance(node, ast.Call) or node.keywords or any(
        isinstance(a, ast.Starred) for a in node.args):
      return None
    spelled = (_names.dotted(node.func) or "").split(".")
    imports = getattr(self.scope.module, "imports", {})
    if spelled[0] not in imports or not self.project.external(
        self.scope, spelled[0]):
      return None
    where = imports[spelled[0]][0].lstrip(".").split(".")[0]
    if where not in _LIBRARIES or spelled[-1] not in _MATH | _WHOLE:
      return None
    return node

  def _handed(self, node: ast.Attribute) -> bool:
    """`self.cap`, set in `__init__` from a number at every
    construction of the class."""
    info = self.scope.cls
    return info is not None and isinstance(node.value, ast.Name) and (
        node.value.id == "self") and _handed_lookups.handed_number(
            self.project, info, node.attr)


def _number(node: ast.AST) -> bool:
  """A number written (`1e-7`, `5`)."""
  return isinstance(node, ast.Constant) and isinstance(
      node.value, (int, float)) and not isinstance(node.value, bool)


def _bound_once(node: ast.AST, scope: _scopes.Scope, bound: Dict[str, int]
                ) -> Optional[ast.expr]:
  """The value of a local name bound once (`keep = cast(m >= 0)`)."""
  if not isinstance(node, ast.Name) or node.id in scope.params:
    return None
  defs = scope.defs.get(node.id, [])
  if len(defs) != 1 or bound.get(node.id) != 1:
    return None
  return defs[0].value


def _tests_sign(node: ast.AST, name: str) -> bool:
  """`cast(name >= 0)`, `greater_equal(name, 0.)` (cast or not)."""
  while isinstance(node, ast.Call) and _names.call_name(
      node) in _CASTS and node.args:
    node = node.args[0]
  if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
      node.ops[0], _OPS):
    sides = [node.left, node.comparators[0]]
  elif isinstance(node, ast.Call) and _names.call_name(node) in _TESTS and (
      len(node.args) == 2) and not node.keywords:
    sides = list(node.args)
  else:
    return False
  return any(isinstance(a, ast.Name) and a.id == name and _zero(b)
             for a, b in (sides, sides[::-1]))


def _zero(node: ast.AST) -> bool:
  """A literal zero (`0`, `0.`, `-0.0`)."""
  if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
    node = node.operand
  return isinstance(node, ast.Constant) and not isinstance(
      node.value, bool) and isinstance(node.value, (int, float)) and (
          node.value == 0)
