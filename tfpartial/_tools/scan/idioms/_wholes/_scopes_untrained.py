"""Scopes a function builds its model in that none of its filters keeps.

`with tf.variable_scope('rgb'): model_rgb = ResNet(x)` and the same for
'depth', 'conv1x1' and 'rnn', then steps over `trainable_variables(
scope='rnn')` and `scope='conv1x1'` only: two filters at their own
learning rates, which together train the head, never the backbones built
beside it. The scopes the function (or its class's methods) opens around
layers, less the scopes its filters name, is what no step trains; where
the filters name some of those scopes and leave one out, the parts are
not a whole model split between optimizers. A scope that only measures
(losses, summaries) or sets up the optimizer builds no layer.
"""

from __future__ import annotations

import ast
import re
from typing import (Callable, Dict, Iterable, Iterator, List, Optional,
                    Sequence, Set, Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _step_lists
from tfpartial._tools.scan.idioms._sources._train_step import Step
from tfpartial._tools.scan.idioms._wholes import _helper_makers

_MAKERS = {"get_variable", "Variable"}
# TF1's layer functions (`tf.layers.dense`, slim's `fully_connected`).
_LAYER_CALLS = _helper_makers.LAYER_CALLS
# Classes made beside a model that hold no layer of it.
_NOT_LAYERS = re.compile(r"(Optimizer|Saver|Session|Config|Writer|Summary|"
                         r"Scaffold|Hook|Coordinator|Error|Exception|"
                         r"Initializer|Regularizer|Constraint|Decay)$|"
                         r"^(SGD|Adam|AdamW|RMSprop|Adagrad|Adadelta|Adamax|"
                         r"Nadam|Ftrl|Lion)$")
# Modules whose classes are no layers (`tf.keras.optimizers.RMSprop`).
_NOT_LAYER_MODULES = {"optimizers", "train", "summary", "losses", "metrics",
                      "initializers", "regularizers", "constraints",
                      "callbacks", "schedules"}


def leaves_scopes(step: Step, steps: Sequence[Step]) -> bool:
  """Whether every step of `step`'s function trains a filtered list, and
  those filters name some scopes the function (or its class) opens
  around layers and leave another of them out."""
  # The same for each step of the function: read once for its steps,
  # keyed by the one list of them that `by_scope` keeps for `steps` (kept
  # with the answer, so its id names it).
  mine = _step_lists.by_scope(steps, step)
  return step.scope.once(
      (leaves_scopes, id(mine), 0),
      lambda: (mine, _steps_leave_scopes(mine, step.scope)))[1]


def _steps_leave_scopes(mine: List[Step], scope: _scopes.Scope) -> bool:
  """`leaves_scopes` for the steps `mine` of the function `scope`."""
  # An apply of pairs another of these steps computed trains its list.
  computed = {id(o.call) for o in mine}
  mine = [o for o in mine if "filtered" in o.labels or id(
      o.labels.get("grad")) not in computed]
  filters = [o.labels.get("filtered") for o in mine]
  if not all(isinstance(f, ast.AST) for f in filters):
    return False  # A step over every variable, or a list not known.
  # And all a list is made of (`params += get_collection(..., "decoder")`).
  made = [n for o in mine if o.var_list is not None
          for n in _scopes.made_from(o.var_list, o.scope)]
  return _leaves([f for f in filters if f is not None] + made, scope)


def _leaves(filters: Iterable[ast.AST], scope: _scopes.Scope) -> bool:
  """Whether `filters` name some scopes the function `scope` (or its
  class) opens around layers and leave another of them out."""
  owner, by = _owner(scope)
  # The class's methods and their scopes, read once per class: each
  # method's steps ask.
  functions, opened_bodies = owner.once((_functions, by, 0),
                                        lambda: _opened_by(scope))
  bodies = [(name, body) for name, body in opened_bodies
            if _builds_layers(body, scope)]
  opened = {name for name, _ in bodies}
  kept: Set[str] = set()
  for node in filters:
    named = {_root(n.value) for n in ast.walk(node) if isinstance(
        n, ast.Constant) and isinstance(n.value, str) and n.value.strip("/")}
    # `'head' not in v.name` keeps every scope but those it names.
    kept |= opened - named if _names.names_left_out(node) else named
  if not kept & opened or not opened - kept:
    return False
  # Only layers that feed the kept ones: a perceptual network run on
  # the trained one's output measures it, it is another model.
  made = owner.once((_read_into, by, 0), lambda: _made_from(functions))
  fed = _read_into([b for name, body in bodies if name in kept
                    for b in body], made)
  return any(_assigned(body) & fed for name, body in bodies
             if name not in kept)


def _assigned(body: List[ast.stmt]) -> Set[str]:
  """The names and attributes `body` assigns, as text."""
  return {ast.unparse(t) for s in body for n in ast.walk(s)
          if isinstance(n, ast.Assign) for target in n.targets
          for t in ast.walk(target) if isinstance(t, (ast.Name, ast.Attribute))}


def _reads(node: ast.AST) -> Set[str]:
  """The names and attributes `node` reads, as text."""
  return {ast.unparse(n) for n in ast.walk(node) if isinstance(
      n, (ast.Name, ast.Attribute)) and isinstance(n.ctx, ast.Load)}


def _made_from(functions: List[ast.AST]) -> Dict[str, Set[str]]:
  """What each name or attribute the assignments of `functions` bind
  reads."""
  made: Dict[str, Set[str]] = {}
  for function in functions:
    for node in ast.walk(function):
      if isinstance(node, ast.Assign):
        for target in node.targets:
          for each in ast.walk(target):
            if isinstance(each, (ast.Name, ast.Attribute)):
              made.setdefault(ast.unparse(each), set()).update(
                  _reads(node.value))
  return made


def _read_into(body: List[ast.stmt], made: Dict[str, Set[str]]
               ) -> Set[str]:
  """What `body` reads, and what the assignments that make it read in
  turn (`made`: what each binding reads, `_made_from`)."""
  found = set().union(*[_reads(s) for s in body]) if body else set()
  queue = list(found)
  while queue and len(found) < 2000:
    for read in made.get(queue.pop(), ()):
      if read not in found:
        found.add(read)
        queue.append(read)
  return found


def _root(text: str) -> str:
  """The first segment of a scope (`rnn` of `rnn/gru`)."""
  return text.strip("/").split("/")[0]


def _opened_by(scope: _scopes.Scope
               ) -> Tuple[List[ast.AST], List[Tuple[str, List[ast.stmt]]]]:
  """`_functions` of `scope`, and the scopes they open (`_opened`)."""
  functions = _functions(scope)
  return functions, list(_opened(functions))


def _owner(scope: _scopes.Scope) -> Tuple[_scopes.Scope, int]:
  """Where `_leaves` keeps what it reads of `scope`'s class once (its
  module's scope, by the class), or of `scope` alone outside a class."""
  place = scope
  while place.parent is not None and place.cls is None:
    place = place.parent
  if place.cls is None:
    return scope, 0
  root = place
  while root.parent is not None:
    root = root.parent
  return root, id(place.cls)


def _functions(scope: _scopes.Scope) -> List[ast.AST]:
  """The function of `scope`, or its class's methods but those called
  inside a scope another method opens (their scopes nest in it)."""
  place = scope
  while place.parent is not None and place.cls is None:
    place = place.parent
  if place.cls is None:
    return [scope.node]
  methods = {name: method.node for name, method in place.cls.methods.items()}
  nested: Set[str] = set()
  while True:
    called = {name for own, function in methods.items() if own
              not in nested for _, body in _opened([function])
              for name in _self_calls(body)} - nested
    if not called:
      break
    nested |= called
  return [node for name, node in methods.items() if name not in nested]


def _self_calls(body: List[ast.stmt]) -> Set[str]:
  """The methods `self.name(...)` calls in `body`."""
  return {node.func.attr for statement in body for node in ast.walk(
      statement) if isinstance(node, ast.Call) and isinstance(
          node.func, ast.Attribute) and isinstance(
              node.func.value, ast.Name) and node.func.value.id == "self"}


def _opened(nodes: List[ast.AST]) -> Iterator[Tuple[str, List[ast.stmt]]]:
  """The literal scopes `with` statements in `nodes` open outside any
  other scope, with the statements they hold."""
  for function in nodes:
    body = getattr(function, "body", [])
    if isinstance(body, list):  # A lambda's body is one expression.
      yield from _outermost(body)


def _outermost(body: List[ast.stmt]
               ) -> Iterator[Tuple[str, List[ast.stmt]]]:
  """The literal scopes opened in `body` outside any other scope."""
  for statement in body:
    if isinstance(statement, (ast.With, ast.AsyncWith)):
      names = [_literal(item.context_expr) for item in statement.items]
      opened = [name for name in names if name]
      if opened:
        yield opened[0], statement.body
        continue
    for block in _scopes.blocks(statement):
      yield from _outermost(block)


def _literal(call: ast.expr) -> str:
  """The literal root a scope call opens, or ''."""
  name = _opened_scopes.literal(call)
  return _root(name) if name is not None else ""


def _builds_layers(body: List[ast.stmt],
                   scope: Optional[_scopes.Scope] = None) -> bool:
  """Whether the statements make a layer or a model: a class made (not an
  optimizer, saver or writer) or a trainable variable, whose result is
  kept; `scope` (where they are) reads the module's helpers they call."""
  known: List[Dict[str, List[Optional[ast.expr]]]] = []

  def bound() -> Dict[str, List[Optional[ast.expr]]]:
    """The names `body` binds, read once and only when asked."""
    if not known:
      known.append(bound_names(body))
    return known[0]

  for statement in body:
    for node in ast.walk(statement):
      if not isinstance(node, ast.Call):
        continue
      name = _names.call_name(node)
      if name in _MAKERS and not any(
          k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
              k.value.value is False) for k in node.keywords):
        return True
      spelled = set((_names.dotted(node.func) or "").split("."))
      if name in _LAYER_CALLS and layer_call(node, bound, scope) or name[
          :1].isupper() and not (_NOT_LAYERS.search(name)) and not (
              spelled & _NOT_LAYER_MODULES):
        return True
  return False


def layer_call(call: ast.Call,
               bound: Callable[[], Dict[str, List[Optional[ast.expr]]]],
               scope: Optional[_scopes.Scope] = None) -> bool:
  """Whether a call of TF1's layer functions (`_LAYER_CALLS`) makes a
  layer: all do but `tf.nn.conv2d(x, kernel)` whose kernel the statements
  around it (`bound()`, their bindings) never make, which convolves with
  a kernel made elsewhere (`w = weight_variable(..)` before it, or the
  kernel made in the call, is a layer built here; `k = tf.reshape(psfs,
  ..)` is not); with `scope`, a helper of the module makes it only if
  its body makes a variable (`_helper_makers`).

  >>> code = "tf.nn.conv2d(x, psfs, [1, 1, 1, 1], 'SAME')"
  >>> layer_call(ast.parse(code).body[0].value, dict)
  False
  >>> layer_call(ast.parse(code).body[0].value, lambda: {"psfs": [None]})
  True
  """
  if "nn" not in (_names.dotted(call.func) or "").split("."):
    return True
  kernel = call.args[1:2] + [k.value for k in call.keywords
                             if k.arg in {"filter", "filters"}]
  if not kernel or not isinstance(kernel[0], (ast.Name, ast.Attribute)):
    return True
  return any(value is None or _may_make(value, scope)
             for value in bound().get(_names.dotted(kernel[0]) or "", []))


# Modules whose functions compute tensors and make no variable.
_OPS = {"tf", "np", "numpy", "K", "math", "tensorflow"}


def _may_make(value: ast.expr, scope: Optional[_scopes.Scope] = None
              ) -> bool:
  """Whether `value` may make a variable: it calls `tf.Variable`,
  `get_variable` or a function not of TF or numpy (a helper); a helper
  of the module (seen from `scope`) only if its body makes one."""
  for node in ast.walk(value):
    if not isinstance(node, ast.Call):
      continue
    if _names.call_name(node) in _MAKERS:
      return True
    if (_names.dotted(node.func) or "").split(".")[0] in _OPS:
      continue
    made = _helper_makers.called_makes(node, scope) if (
        scope is not None) else None
    if made is None or made:
      return True
  return False


def bound_names(body: Iterable[ast.AST]
                ) -> Dict[str, List[Optional[ast.expr]]]:
  """The names and attributes (`self.w`) the statements `body` bind, each
  with the values a plain assignment gives it (None: bound otherwise, by
  a loop, `+=` or unpacking)."""
  found: Dict[str, List[Optional[ast.expr]]] = {}
  for statement in body:
    for node in ast.walk(statement):
      if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
          node.ctx, ast.Store):
        found.setdefault(_names.dotted(node) or "", [])
      if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
          isinstance(node.targets[0], (ast.Name, ast.Attribute))):
        found.setdefault(_names.dotted(node.targets[0]) or "", []).append(
            node.value)
  # A name bound but never by a plain assignment: bound otherwise.
  for name, values in found.items():
    if not values:
      values.append(None)
  return found
