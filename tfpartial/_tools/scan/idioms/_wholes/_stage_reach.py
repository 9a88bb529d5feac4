"""What a function's names are computed from, scope by scope, for the
later-stage rule (`_later_stage`): names made inside
`with tf.variable_scope('<literal>')` blocks belong to that scope's
path (nested blocks joined, `model/ddpm`); what each name is computed
from is followed in source order (`+=` adds, a tuple's names each take
their element), never below what carries no gradient (`reads`).
Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
import re
from typing import (
    Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Set, Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _scopes_untrained
from tfpartial._tools.scan.idioms._wholes import _stage_lists

Reach = Dict[str, FrozenSet[str]]
# TensorFlow's ops with no gradient to their inputs (an index, a
# rounding, a test), spelled `tf.`/`tf.math.`.
_CUT = {"argmax", "argmin", "round", "floor", "ceil", "sign", "equal",
        "not_equal", "greater", "greater_equal", "less", "less_equal",
        "logical_and", "logical_or", "logical_not", "is_nan",
        "is_finite"}
_INTEGRAL = re.compile(r"(^|\.)(u?int(8|16|32|64)|bool)$")
# Marks a name `reads` finds below a call not known to pass a gradient
# (a project helper, a method, an op outside `_PASSING`), and a path
# `reach` cannot follow through one.
UNKNOWN = "?"
# Ops and layers known to pass a gradient to what they read, spelled
# from `tf`, `slim`, `keras` or `layers` (a Keras layer class called on
# its input too).
_PASSING = frozenset("""
abs add add_n atrous_conv2d average_pooling2d avg_pool batch_norm
batch_normalization bias_add concat conv1d conv2d conv2d_transpose conv3d
dense depthwise_conv2d divide dropout elu exp expand_dims flatten
fully_connected identity l2_loss l2_normalize leaky_relu log log_softmax
matmul max_pool max_pooling2d maximum minimum multiply pad pow reduce_max
reduce_mean reduce_min reduce_sum relu relu6 reshape selu separable_conv2d
sigmoid sigmoid_cross_entropy_with_logits softmax
softmax_cross_entropy_with_logits softmax_cross_entropy_with_logits_v2
softplus sqrt square squared_difference squeeze stack subtract tanh tile
transpose mean_squared_error absolute_difference
Dense Conv1D Conv2D Conv2DTranspose Conv3D Flatten Dropout
BatchNormalization Activation Add Concatenate Reshape MaxPooling2D
AveragePooling2D LeakyReLU ReLU UpSampling2D upsampling2d
""".split())
_ROOTS = ("tf", "slim", "keras", "layers")


class Reading(NamedTuple):
  """What one function's names are computed from (`reach`)."""

  names: Reach  # The scope paths each name is computed from.
  under: Reach  # The paths each path's own layers are computed from.
  fixed: FrozenSet[str]  # Paths with a layer made `trainable=` not True.
  words: Dict[str, _stage_lists.Words]  # What may name each path's layers.


def reach(scope: _scopes.Scope, helpers: FrozenSet[str] = frozenset()
          ) -> Reading:
  """The scope paths each name of a function is computed from, in
  order (`+=` adds, a tuple's names each take their own element), and
  those the layers each path's block makes are computed from, itself
  aside (`_scopes_untrained.builds_layers`: a call making a layer). A
  name also bound another way (a loop's target, `with ... as`) is not
  known; `helpers` are the module's functions (their layers unseen).

  >>> code = ("with tf.variable_scope('a'):\\n"
  ...         "  h = tf.layers.dense(x, 4)\\n  y = h * 2\\n"
  ...         "  with tf.variable_scope('b'):\\n"
  ...         "    d = tf.layers.dense(h, 2)\\n    t = tf.argmax(y)\\n"
  ...         "loss, aux = tf.add(d, t), 0\\n"
  ...         "loss += tf.square(tf.stop_gradient(e))\\nz = f(d)\\n")
  >>> found = reach(_scopes.collect(ast.parse(code)))
  >>> sorted(found.names["loss"]), sorted(found.under["a/b"]), found.fixed
  (['a', 'a/b'], ['a'], frozenset())
  >>> sorted(found.names["t"]), sorted(found.under["a"]), found.names["aux"]
  (['a/b'], [], frozenset())
  >>> sorted(found.names["z"])  # `f` is not known to pass a gradient.
  ['?', 'a', 'a/b']
  """
  names: Dict[str, FrozenSet[str]] = {}
  under: Dict[str, FrozenSet[str]] = {}
  fixed: Set[str] = set()
  words: Dict[str, _stage_lists.Words] = {}
  body = getattr(scope.node, "body", [])
  body = body if isinstance(body, list) else []
  known: Set[int] = set()
  for target, value, path, added in _assigned(body, None, words, helpers):
    known.add(id(target))
    read = _reached(reads(value), names)
    names[target.id] = read | ({path} if path else frozenset()) | (
        names.get(target.id, frozenset()) if added else frozenset())
    if path and _scopes_untrained.builds_layers([ast.Expr(value)], scope):
      # A layer made in the block computes from what it reads; a label
      # or a target the block derives (`tf.argmax(x_hat)`) does not.
      under[path] = under.get(path, frozenset()) | (read - {path})
      if _untrainable(value):
        fixed.add(path)
  for other in _other_binds(body, known):
    names.pop(other, None)
  return Reading(names, under, frozenset(fixed), words)


def _reached(read: Set[str], names: Reach) -> FrozenSet[str]:
  """The paths the names read are computed from, and `UNKNOWN` where a
  name computed from a path is read below a call not known."""
  found = frozenset().union(*(names.get(n.lstrip(UNKNOWN), frozenset())
                              for n in read))
  return found | frozenset(UNKNOWN for n in read if n.startswith(
      UNKNOWN) and names.get(n[1:]))


def _other_binds(body: List[ast.stmt], known: Set[int]) -> Set[str]:
  """The names bound other than by the assignments `reach` reads."""
  return {n.id for statement in body for n in _scopes.walk(statement)
          if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
          and id(n) not in known}


def _untrainable(value: ast.expr) -> bool:
  """Whether a call in `value` is given `trainable=` other than the
  constant True (a part frozen whole, or by a value not read)."""
  return any(isinstance(n, ast.Call) and any(
      k.arg == "trainable" and not (
          isinstance(k.value, ast.Constant) and k.value.value is True)
      for k in n.keywords) for n in ast.walk(value))


Bound = Tuple[ast.Name, ast.expr, Optional[str], bool]


def _assigned(body: List[ast.stmt], path: Optional[str],
              words: Dict[str, _stage_lists.Words],
              helpers: FrozenSet[str]) -> Iterator[Bound]:
  """(target, value, scope path, whether added) of each assignment to
  names, in source order, with the literal scope path opened around it
  (None outside); each path's words noted in `words`."""
  for node in body:
    if isinstance(node, _names.DEFINITIONS):
      continue
    yield from _bound(node, path)
    inner = _opened(node) if isinstance(node, ast.With) else None
    if inner is not None and isinstance(node, ast.With):
      inner = f"{path}/{inner}" if path else inner
      words[inner] = _words(node.body, helpers)
    for field in ("body", "orelse", "finalbody"):
      yield from _assigned(getattr(node, field, []) or [], inner or path,
                           words, helpers)


def _bound(node: ast.stmt, path: Optional[str]) -> Iterator[Bound]:
  """The names one statement assigns, each with what it is given."""
  if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
    yield node.target, node.value, path, True
  if isinstance(node, ast.AnnAssign) and node.value is not None and (
      isinstance(node.target, ast.Name)):
    yield node.target, node.value, path, False
  if not isinstance(node, ast.Assign):
    return
  for target in node.targets:
    if isinstance(target, ast.Name):
      yield target, node.value, path, False
    elif isinstance(target, (ast.Tuple, ast.List)) and all(
        isinstance(e, ast.Name) for e in target.elts):
      paired = isinstance(node.value, (ast.Tuple, ast.List)) and len(
          node.value.elts) == len(target.elts) and not any(
              isinstance(e, ast.Starred) for e in node.value.elts)
      for k, each in enumerate(target.elts):
        assert isinstance(each, ast.Name)
        yield each, (node.value.elts[k] if paired and isinstance(
            node.value, (ast.Tuple, ast.List)) else node.value), path, False


def _words(body: List[ast.stmt], helpers: FrozenSet[str]
           ) -> _stage_lists.Words:
  """What may name the variables made right in a block (a block opened
  inside has its own): its strings and the names of what it calls (a
  layer's default name); None where a name is computed (`name=n`, a
  scope of a value) or it calls one of the module's functions."""
  found: Set[str] = set()
  stack: List[ast.AST] = list(body)
  while stack:
    node = stack.pop()
    if isinstance(node, ast.With) and _opened(node) is not None:
      continue  # Read as its own path.
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
      found.add(node.value)
    if isinstance(node, ast.Call):
      if isinstance(node.func, ast.Name) and node.func.id in helpers or (
          _computed_name(node)):
        return None
      name = _names.call_name(node)
      found |= {name.lower(), _snake(name)}
    stack.extend(ast.iter_child_nodes(node))
  return frozenset(found)


def _computed_name(call: ast.Call) -> bool:
  """Whether a call is given a name or a scope the code computes."""
  given = [k.value for k in call.keywords if k.arg in (
      "name", "scope", "name_or_scope", "default_name")]
  if _names.call_name(call) in _names.TF_SCOPES and call.args:
    given.append(call.args[0])
  return any(not (isinstance(g, ast.Constant) and isinstance(
      g.value, (str, type(None)))) for g in given)


def _snake(name: str) -> str:
  """`Conv2D` as Keras names its layers by default (`conv2d`)."""
  return "".join(("_" + c.lower()) if c.isupper() and k and not (
      name[k - 1].isupper() or name[k - 1].isdigit()) else c.lower()
      for k, c in enumerate(name))


def _opened(node: ast.With) -> Optional[str]:
  """The literal scope a `with` opens (`'ddpm'`), or None."""
  for item in node.items:
    call = item.context_expr
    if not isinstance(call, ast.Call) or _names.call_name(call) not in (
        _names.TF_SCOPES):
      continue
    named = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == "name_or_scope"), None)
    if isinstance(named, ast.Constant) and isinstance(
        named.value, str) and named.value.strip("/"):
      return named.value.strip("/")
  return None


def reads(node: ast.AST) -> Set[str]:
  """The names an expression reads through which a gradient flows: none
  below `tf.stop_gradient`, an index or a rounding (`tf.argmax`,
  `tf.round`), a comparison, or a cast to an integer or a boolean; and
  a name read below a call neither such a cut nor known to pass a
  gradient (`_passes`) is given marked (`UNKNOWN` before it).

  >>> sorted(reads(ast.parse(
  ...     "tf.add_n([a, tf.argmax(b), tf.cast(c, tf.int32),"
  ...     " tf.cast(d, 'float16'), e > 0, tf.stop_gradient(g)])",
  ...     mode="eval")))
  ['a', 'd', 'tf']
  >>> sorted(reads(ast.parse("tf.square(f(a))", mode="eval")))
  ['?a', '?f', 'tf']
  """
  found: Set[str] = set()
  stack = [(node, "")]
  while stack:
    each, mark = stack.pop()
    if isinstance(each, ast.Compare) or isinstance(each, ast.Call) and (
        _no_gradient(each)):
      continue
    if isinstance(each, ast.Call) and not _passes(each):
      mark = UNKNOWN
    if isinstance(each, ast.Name):
      found.add(mark + each.id)
    stack.extend((child, mark) for child in ast.iter_child_nodes(each))
  return found


def _passes(call: ast.Call) -> bool:
  """Whether the call is an op or a layer known to pass a gradient
  (`_PASSING`, spelled from `_ROOTS` or a class called on its input), or
  a cast to a float (a cast cutting one is `_no_gradient`)."""
  func = call.func.func if isinstance(call.func, ast.Call) else call.func
  spelled = _names.dotted(func) or ""
  parts = spelled.split(".")
  if "compat" in parts or "backend" in parts:
    return False  # Read as their own ops, not these.
  name = parts[-1]
  if name == "cast" and parts[0] in _ROOTS:
    return True
  return name in _PASSING and (parts[0] in _ROOTS or (
      len(parts) == 1 and name[:1].isupper()))


def _no_gradient(call: ast.Call) -> bool:
  """Whether TensorFlow gives no gradient through the call to what it
  reads (the call spelled `tf.` or `tf.math.`; a stop_gradient)."""
  name = _names.call_name(call)
  if name == "stop_gradient":
    return True
  spelled = _names.dotted(call.func) or ""
  if spelled.split(".")[0] != "tf" or spelled.count(".") > 2:
    return False
  if name == "cast":
    dtype = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "dtype"), None)
    text = (dtype.value if isinstance(dtype, ast.Constant) else
            _names.dotted(dtype) if dtype is not None else None)
    return isinstance(text, str) and bool(_INTEGRAL.search(text))
  return name in _CUT
