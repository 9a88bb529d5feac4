"""Whether a helper of the module makes a variable. A helper makes none
only when every call in its body (followed through the module's helpers
it calls, `DEPTH` calls deep) is a pure op on a short allowlist: TF's and
numpy's reshaping, joining and math (`tf.reshape`, `tf.reverse`,
`tf.concat`, `tf.nn.relu`, `tf.nn.conv2d` with the kernel it is given),
logging, `print`, shape reads, a few builtins. Anything else may make one:
a TF call off the list (`tf.contrib.layers.batch_norm`,
`tf.nn.rnn_cell.LSTMCell`), an alias (`V = tf.Variable`), a `partial`, a
class of the module, an imported helper, a method. Each helper is read
once per scan: its answer is kept on its module's scope, and an answer
cut by a cycle is kept too once the outermost question is answered
without the depth bound (a cycle adds nothing its first turn did not;
where nothing reached makes a variable, none of the helpers read does).
Only answers the bound cut are read again, so asking at every call is
linear but for helpers deeper than the bound.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Callable, Dict, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# TF1's layer functions (`tf.layers.dense`, slim's `fully_connected`).
LAYER_CALLS = {"dense", "conv1d", "conv2d", "conv3d", "conv2d_transpose",
               "separable_conv2d", "fully_connected", "embedding"}
# The pure ops: `tf.<op>` (also under `tf.math.`), `tf.nn.<op>`, and any
# function of numpy, `math` or `logging`; a shape read; a string's
# `format` and a shape's `as_list`, or either where no class of the
# module defines one (`_read_of`).
_TF_PURE = {"reshape", "transpose", "reverse", "concat", "stack", "unstack",
            "squeeze", "expand_dims", "split", "tile", "pad", "gather",
            "identity", "cast", "shape", "zeros", "ones", "zeros_like",
            "ones_like", "fill", "constant", "add", "multiply", "subtract",
            "divide", "matmul", "square", "sqrt", "exp", "log", "abs",
            "maximum", "minimum", "clip_by_value", "sigmoid", "tanh",
            "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "range",
            "print", "Print", "image_summary", "scalar_summary"}
_NN_PURE = {"relu", "relu6", "elu", "selu", "leaky_relu", "sigmoid", "tanh",
            "softmax", "softplus", "conv1d", "conv2d", "conv3d",
            "depthwise_conv2d", "conv2d_transpose", "max_pool", "avg_pool",
            "bias_add", "l2_normalize", "dropout"}
_PURE_MODULES = {"np", "numpy", "math", "logging"}
_SHAPE_READS = {"get_shape"}
_PURE_BUILTINS = {"print", "len", "int", "float", "str", "bool", "range",
                  "list", "tuple", "dict", "zip", "enumerate", "min", "max",
                  "abs", "sum", "isinstance", "round"}
DEPTH = 4  # Helpers calling helpers: deeper is read as a maker.

_Answer = Tuple[bool, bool]  # (makes, known without a cycle or the bound)


def called_makes(call: ast.Call, scope: _scopes.Scope) -> Optional[bool]:
  """For a call of a function of the module by its bare name (seen from
  `scope`): whether that function makes a variable; None when the name
  is no function of the module (imported, a parameter, a class).

  >>> module = _scopes.collect(ast.parse(
  ...     "def flip(k):\\n  return tf.reverse(k, [0])\\n"
  ...     "def make(n):\\n  return tf.get_variable('w', [n])\\n"))
  >>> [called_makes(ast.parse(f"{f}(x)").body[0].value, module)
  ...  for f in ("flip", "make", "other")]
  [False, True, None]
  """
  found = _resolve(call, scope)
  if found is None:
    return None
  walk = _Walk()
  answer, complete = _makes(found[0], found[1], 0, walk)
  if not complete and not walk.bounded:
    # Cut by cycles only: the outermost answer is exact, and where it is
    # no, no helper read makes a variable.
    cache = _cache(found[1])
    cache[id(found[0])] = answer
    if not answer:
      cache.update((seen, False) for seen in walk.seen)
  return answer


@dataclasses.dataclass
class _Walk:
  """One question's walk: the helpers on its stack, every helper it
  read, and whether the depth bound answered for one."""
  stack: Set[int] = dataclasses.field(default_factory=set)
  seen: Set[int] = dataclasses.field(default_factory=set)
  bounded: bool = False


def _resolve(call: ast.Call, scope: _scopes.Scope
             ) -> Optional[Tuple[_scopes.FunctionNode, _scopes.Scope]]:
  if not isinstance(call.func, ast.Name):
    return None
  name = call.func.id
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if name in place.functions:
      function = place.functions[name]
      return function, place.scopes.get(id(function), place)
    if name in place.defs or name in place.params or name in place.classes:
      return None  # Bound to something else here.
    place = place.parent
  return None


def _cache(scope: _scopes.Scope) -> Dict[int, bool]:
  root = scope
  while root.parent is not None:
    root = root.parent
  return root.once((_cache, None, 0), dict)


def _makes(function: _scopes.FunctionNode, scope: _scopes.Scope,
           depth: int, walk: _Walk) -> _Answer:
  """Whether `function` (its scope `scope`) makes a variable, and whether
  that answer holds whoever asks (not cut by a cycle or the bound)."""
  cache = _cache(scope)
  if id(function) in cache:
    return cache[id(function)], True
  if id(function) in walk.stack:
    return False, False  # A cycle adds nothing its first turn did not.
  if depth > DEPTH:
    walk.bounded = True
    return True, False  # Not read: it may make one, as a helper did.
  walk.stack.add(id(function))
  walk.seen.add(id(function))
  complete = True
  answer = False
  for node in ast.walk(function):
    if not isinstance(node, ast.Call):
      continue
    made = _call_makes(node, scope, depth, walk)
    complete = complete and made[1]
    if made[0]:
      # Kept only when read, not when the bound answered for it.
      answer, complete = True, made[1]
      break
  walk.stack.discard(id(function))
  if complete:
    cache[id(function)] = answer
  return answer, complete


def _call_makes(call: ast.Call, scope: _scopes.Scope, depth: int,
                walk: _Walk) -> _Answer:
  """Whether `call` may make a variable: a helper of the module as its
  body says, a pure op (`_pure`) not, anything else yes."""
  if isinstance(call.func, ast.Name):
    found = _resolve(call, scope)
    if found is not None:
      return _makes(found[0], found[1], depth + 1, walk)
  return not _pure(call, scope), True


def _pure(call: ast.Call, scope: _scopes.Scope) -> bool:
  """Whether `call` is on the allowlist of ops that make no variable (a
  builtin not bound in the module, `tf.reshape`, `logging.info`, ..).

  >>> [_pure(ast.parse(c).body[0].value, _scopes.collect(ast.parse("")))
  ...  for c in ("tf.reverse(k, [0])", "tf.layers.batch_normalization(k)",
  ...            "print(k)", "k.get_shape()", "V(k)", "'{}_W'.format(k)",
  ...            "k.format(n)", "k.shape.as_list()", "k.as_list()")]
  [True, False, True, True, False, True, True, True, True]
  >>> bank = _scopes.collect(ast.parse("class B:\\n  def as_list(s): pass"))
  >>> [_pure(ast.parse(c).body[0].value, bank)
  ...  for c in ("k.as_list()", "k.shape.as_list()")]
  [False, True]
  """
  if isinstance(call.func, ast.Name):
    name = call.func.id
    place: Optional[_scopes.Scope] = scope
    while place is not None:
      if name in place.defs or name in place.params or (
          name in place.classes) or name in place.functions:
        return False  # Rebound in the module: not the builtin.
      place = place.parent
    return name in _PURE_BUILTINS and name not in _scopes.imported_names(
        scope)
  if not isinstance(call.func, ast.Attribute):
    return False
  if call.func.attr in _SHAPE_READS or _read_of(call.func, scope):
    return True
  parts = (_names.dotted(call.func) or "").split(".")
  if parts[0] in _PURE_MODULES and len(parts) > 1:
    return True
  if parts[0] not in {"tf", "tensorflow"}:
    return False
  middle = parts[1:-1]
  if middle in ([], ["math"]):
    return parts[-1] in _TF_PURE
  if middle == ["nn"]:
    return parts[-1] in _NN_PURE
  return middle in (["logging"], ["summary"])


def _read_of(func: ast.Attribute, scope: _scopes.Scope) -> bool:
  """Whether `func` is a string's `format` (`'{}_W'.format(name)`, of a
  name bound only to strings or a parameter with a string default) or a
  shape's `as_list` (`x.shape`, `x.get_shape()`, a name bound only to
  one), or either where no class of the module has such a method: a
  user object's `format` or `as_list` may make a variable."""
  if func.attr not in ("format", "as_list"):
    return False
  kind = _text if func.attr == "format" else _shape
  return _bound_only(func.value, scope, kind) or not _has_method(
      scope, func.attr)


def _text(value: ast.expr) -> bool:
  """A string: a literal, an f-string, a `+` with one or `%` of one."""
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    return _text(value.left) or _text(value.right)
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mod):
    return _text(value.left)
  return isinstance(value, ast.JoinedStr) or isinstance(
      value, ast.Constant) and isinstance(value.value, str)


def _shape(value: ast.expr) -> bool:
  return isinstance(value, ast.Attribute) and value.attr == "shape" or (
      isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
      and value.func.attr == "get_shape")


def _has_method(scope: _scopes.Scope, name: str) -> bool:
  """Whether a class of the module (or around `scope`) defines `name`."""
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if any(isinstance(n, ast.FunctionDef) and n.name == name
           for info in place.classes.values() for n in info.node.body):
      return True
    place = place.parent
  return False


def _bound_only(value: ast.expr, scope: _scopes.Scope,
                kind: Callable[[ast.expr], bool]) -> bool:
  """Whether `value` is of `kind`, or a name whose every assignment in
  the nearest scope binding it is, or a parameter whose default is."""
  if kind(value):
    return True
  if not isinstance(value, ast.Name):
    return False
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    if value.id in place.params:
      return _default_is(place.node, value.id, kind)
    if value.id in place.functions or value.id in place.classes:
      return False
    defs = place.defs.get(value.id)
    if defs:
      return all(d.part is None and d.outer is None and kind(d.value)
                 for d in defs)
    place = place.parent
  return False


def _default_is(function: ast.AST, param: str,
                kind: Callable[[ast.expr], bool]) -> bool:
  """Whether `param` of `function` has a default of `kind`."""
  args = getattr(function, "args", None)
  if not isinstance(args, ast.arguments):
    return False
  positional = [*args.posonlyargs, *args.args]
  pairs = [*zip(positional[len(positional) - len(args.defaults):],
                args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
  return any(arg.arg == param and default is not None and kind(default)
             for arg, default in pairs)
