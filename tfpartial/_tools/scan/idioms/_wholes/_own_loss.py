"""Whether a filtered list is the whole of what its loss trains: the
loss reads only networks that functions of the project build under the
scope the filter keeps, or layers made in the body of a `with` opening
it, fed from placeholders. A metric's classifier
built and trained on its own (`def discriminator(x): with
tf.variable_scope("discriminator") as vs: ...; d_vars = [v for v in
tf.all_variables() if v.name.startswith(vs.name)]`, minimised on a loss
of its outputs alone), a semi-supervised predictor over features an
encoder computed beforehand: the list leaves out variables of other
networks that this loss never reads, so nothing is kept from training.
A loss reading anything else on a network's input (another network's
output, a parameter handed in, a layer made outside the scope) is not
answered here. Part of `var-list-filter`."""

from __future__ import annotations

import ast
import weakref
from typing import List, NamedTuple, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _typed
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._wholes import _given_network
from tfpartial._tools.scan.idioms._wholes import _members

# Every variable of the graph, as a filter's comprehension reads them.
_WHOLE = {"trainable_variables", "global_variables", "all_variables",
          "get_collection"}
# TensorFlow's and NumPy's modules, as code spells them.
_MODULES = {"tf", "tf1", "tfv1", "v1", "np", "numpy", "K", "math",
            "tensorflow", "backend"}
# Modules whose calls make variables (`tf.layers.dense`, `slim.conv2d`).
_MAKING = {"layers", "slim", "rnn_cell", "keras", "rnn"}
# ... unless a loss or a metric (`tf.keras.losses.mse`).
_MEASURING = {"losses", "metrics", "backend"}
_MAKERS = {"get_variable", "dense", "conv1d", "conv2d", "conv3d",
           "conv2d_transpose", "fully_connected", "embedding",
           "batch_normalization", "batch_norm", "layer_norm",
           "separable_conv2d", "dynamic_rnn", "bidirectional_dynamic_rnn",
           "static_rnn", "make_template"}
# Inputs: their arguments are shapes, not tensors.
_INPUTS = {"placeholder", "placeholder_with_default", "constant", "zeros",
           "ones", "fill"}
_BUILTINS = {"len", "max", "min", "int", "float", "abs", "sum", "list",
             "tuple", "range", "zip", "sorted", "round"}
# Builtins that make a number (a size), never a tensor.
_SIZES = {"len", "max", "min", "int", "float", "abs", "round", "range"}
_LIMIT = 400  # Expressions read at most: a loss is near its networks.


def reads_only_kept(flow: Flow, filtered: Optional[ast.AST],
                    loss: Optional[ast.expr], scope: _scopes.Scope,
                    typed: Optional[_typed.Typed] = None) -> bool:
  """Whether `loss` (in `scope`) reads only networks built under the
  scopes `filtered` (a step's filtered label) keeps, one at least
  (`typed`, where given: objects of the project's classes made under a
  kept scope they are given, `_given_network`)."""
  if filtered is None or loss is None:
    return False
  kept = kept_scopes(filtered, flow.origin.get(id(filtered), scope))
  return bool(kept) and _Cone(flow, kept, typed).reads_only_kept(
      loss, scope)


def kept_scopes(node: ast.AST, home: _scopes.Scope) -> List[str]:
  """The literal scopes a filter keeps by a prefix or a part of the
  variable's name (`v.name.startswith('predictor')`, `scope=vs.name` of
  a `with tf.variable_scope("d") as vs`), none if it tests anything
  else or leaves a name out."""
  if isinstance(node, ast.Call):
    chosen = _names.scope_argument(node)
    found = _literal(chosen, home) if chosen is not None else None
    return [found] if found else []
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(
      node.generators) != 1:
    return []
  every = _members.one_value(node.generators[0].iter, home)
  if not isinstance(every, ast.Call) or _names.call_name(every) not in _WHOLE:
    return []
  tests = node.generators[0].ifs
  if len(tests) != 1:
    return []
  parts = tests[0].values if isinstance(tests[0], ast.BoolOp) and (
      isinstance(tests[0].op, ast.Or)) else [tests[0]]
  kept = [_kept_by(part, home) for part in parts]
  return [k for k in kept if k] if all(kept) else []


def _kept_by(test: ast.AST, home: _scopes.Scope) -> Optional[str]:
  """The scope one name test keeps (`x.name.startswith(s)`, `s in
  x.name`)."""
  if isinstance(test, ast.Call) and _names.call_name(test) in {
      "startswith", "match"} and len(test.args) == 1:
    return _literal(test.args[0], home)
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.In) and isinstance(test.comparators[0], ast.Attribute):
    return _literal(test.left, home)
  return None


def _literal(node: ast.AST, home: _scopes.Scope) -> Optional[str]:
  """A scope as a literal: a string, or `vs.name` of a scope opened
  `as vs` with a literal name."""
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value.strip("/") or None
  if isinstance(node, ast.Attribute) and node.attr in {
      "name", "original_name_scope"} and isinstance(node.value, ast.Name):
    opened = [d.value for d in home.defs.get(node.value.id, ())]
    name = _opened_scopes.literal(opened[0]) if len(opened) == 1 else None
    if name is not None:
      return name.strip("/") or None
  return None


class _Cone:
  """The expressions a loss reads, back through the names of its
  function, to the networks that make them."""

  def __init__(self, flow: Flow, kept: List[str],
               typed: Optional[_typed.Typed] = None):
    self.flow = flow
    self.typed = typed
    self.kept = kept
    self.built = False  # A network under a kept scope was reached.
    self.read = 0

  def reads_only_kept(self, loss: ast.expr, scope: _scopes.Scope) -> bool:
    seen: Set[Tuple[int, bool]] = set()
    stack: List[Tuple[ast.AST, _scopes.Scope, bool]] = [(loss, scope, False)]
    while stack:
      node, home, feeding = stack.pop()
      if (id(node), feeding) in seen:
        continue
      seen.add((id(node), feeding))
      self.read += 1
      more = self._reads(node, home, feeding)
      if more is None or self.read > _LIMIT:
        return False
      stack.extend(more)
    return self.built

  def _reads(self, node: ast.AST, home: _scopes.Scope, feeding: bool
             ) -> Optional[List[Tuple[ast.AST, _scopes.Scope, bool]]]:
    """What `node` reads next (`feeding`: on a network's input), or None
    when it reads what this cannot follow."""
    if isinstance(node, ast.Constant):
      return []
    if isinstance(node, ast.Name):
      return self._name(node.id, home, feeding)
    if isinstance(node, ast.Call):
      return self._call(node, home, feeding)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
      return _comprehension(node, home, feeding)
    if isinstance(node, ast.Attribute):
      # `tf.float32`, a module's constant; `self.logits` through what the
      # class's methods set (`_members`); `model.output` is not followed.
      if (_names.dotted(node) or "").split(".")[0] in _MODULES:
        return []
      values = _members.held(node, home) or _members.comprehended(
          node, home)
      return None if values is None else [
          (value, place, feeding) for value, place in values]
    if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp,
                         ast.IfExp, ast.Tuple, ast.List, ast.Subscript,
                         ast.Slice, ast.keyword, ast.Starred)):
      return [(child, home, feeding) for child in ast.iter_child_nodes(node)
              if not isinstance(child, (ast.operator, ast.unaryop,
                                        ast.cmpop, ast.boolop, ast.expr_context))]
    return None

  def _name(self, name: str, home: _scopes.Scope, feeding: bool
            ) -> Optional[List[Tuple[ast.AST, _scopes.Scope, bool]]]:
    place: Optional[_scopes.Scope] = home
    while place is not None:
      if name in place.params:
        # A weight or a target at the loss; on a network's input, what
        # the caller computed (maybe through a network left out).
        return None if feeding else []
      defs = place.defs.get(name)
      if defs:
        return [(d.value, place, feeding) for d in defs]
      place = place.parent
    return None

  def _call(self, call: ast.Call, home: _scopes.Scope, feeding: bool
            ) -> Optional[List[Tuple[ast.AST, _scopes.Scope, bool]]]:
    arguments = [*call.args, *(k.value for k in call.keywords)]
    callee = self.flow.callee(call, home)
    if isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        _built_under(callee, self.kept)):
      self.built = True  # A network under a kept scope.
      return [(a, home, True) for a in arguments]
    if self.typed is not None and _given_network.runs_kept(
        self.typed, call, home, self.kept, _plain):
      self.built = True  # An object made under the kept scope it is given.
      return [(a, home, True) for a in arguments]
    if _in_kept_block(call, home, self.kept):
      if not _made_in_block(call, home, self.kept):
        return None  # `base(x)` of a model made before: maybe frozen.
      self.built = True  # A layer under a kept scope, fed by its input.
      return [(a, home, True) for a in _inputs_of(call)]
    if isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
      if not _read_method(callee).makes or self.typed is not None and (
          _given_network.helper_makes_nothing(self.typed, call, home,
                                              _plain)):
        # A loss helper; a method returning what its object holds
        # (`b.get_rep_ops()`: `self._top_final_hidden`) reads the object.
        held = [call.func.value] if isinstance(
            call.func, ast.Attribute) and _reads_own_object(
                call, callee) else []
        return [(a, home, feeding) for a in [*arguments, *held]]
      return None
    if not _plain(call):
      return None
    if _names.call_name(call) in _INPUTS or isinstance(
        call.func, ast.Name) and call.func.id in _SIZES:
      return []  # A shape, a size: no tensor.
    return [(a, home, feeding) for a in arguments]


def _reads_own_object(call: ast.Call, callee: ast.AST) -> bool:
  """Whether `call` calls a method (`b.get_rep_ops()`) that reads its
  own object (`self._top_final_hidden`): what it returns was made where
  the object was built, not from what the call passes.

  >>> tree = ast.parse("def ops(self):\\n    return self.hidden, 1\\n")
  >>> _reads_own_object(ast.parse("b.ops()").body[0].value, tree.body[0])
  True
  >>> _reads_own_object(ast.parse("ops(b)").body[0].value, tree.body[0])
  False
  >>> loss = ast.parse("def huber(x):\\n    return x * x\\n").body[0]
  >>> _reads_own_object(ast.parse("U.huber(x)").body[0].value, loss)
  False
  """
  arguments = getattr(callee, "args", None)
  if not isinstance(call.func, ast.Attribute) or arguments is None or (
      not arguments.args) or arguments.args[0].arg != "self":
    return False  # `U.huber_loss(x)`: a module's function, given `x`.
  return _read_method(callee).reads_self


class _Method(NamedTuple):
  """What a function a loss calls holds, read once however many calls
  reach it."""

  makes: bool  # It calls more than plain operations.
  reads_self: bool
  makes_outside: bool  # A statement other than a `with` makes something.
  withs: List[Tuple[ast.With, bool]]  # Its `with`s, whether each makes.


def _read_method(callee: ast.AST) -> _Method:
  known = _METHODS.get(callee)
  if known is None:
    read = list(ast.walk(callee))
    making = [(s, any(isinstance(n, ast.Call) and not _plain(n)
                      for n in ast.walk(s)))
              for s in getattr(callee, "body", [])]
    known = _METHODS[callee] = _Method(
        any(isinstance(n, ast.Call) and not _plain(n) for n in read),
        any(isinstance(n, ast.Name) and n.id == "self" and isinstance(
            n.ctx, ast.Load) for n in read),
        any(m for s, m in making if not isinstance(s, ast.With)),
        [(s, m) for s, m in making if isinstance(s, ast.With)])
  return known


# Held weakly: a function's facts live as long as its parsed tree.
_METHODS: "weakref.WeakKeyDictionary[ast.AST, _Method]" = (
    weakref.WeakKeyDictionary())


def _comprehension(node: ast.expr, home: _scopes.Scope, feeding: bool
                   ) -> Optional[List[Tuple[ast.AST, _scopes.Scope, bool]]]:
  """What a comprehension of plain operations reads (`[tf.nn.l2_loss(v)
  for v in d_vars]`, a weight decay over the list): what it iterates
  over and the other names it reads."""
  generators = getattr(node, "generators")
  own = {n.id for g in generators for n in ast.walk(g.target)
         if isinstance(n, ast.Name)}
  parts = [getattr(node, "elt"), *(t for g in generators for t in g.ifs)]
  read = [n for part in parts for n in ast.walk(part)]
  if any(isinstance(n, ast.Call) and not _plain(n) and (
      _names.dotted(n.func) or "").split(".")[0] not in own for n in read):
    return None  # Not `v.name.startswith(...)`, a test of its element.
  heads = {id(n) for n in read if isinstance(n, ast.Name) and n.id in (
      _MODULES)}
  return [(g.iter, home, feeding) for g in generators] + [
      (n, home, feeding) for n in read if isinstance(n, ast.Name) and (
          n.id not in own) and id(n) not in heads]


def _plain(call: ast.Call) -> bool:
  """Whether a call makes no variable: a TensorFlow or NumPy operation
  (`tf.reduce_mean`, `tf.nn.sigmoid`, `tf.losses.absolute_difference`)
  or a builtin, not a layer or a class."""
  dotted = _names.dotted(call.func)
  if dotted is None:
    return False
  parts = dotted.split(".")
  if len(parts) == 1:
    return parts[0] in _BUILTINS
  last = parts[-1]
  if parts[0] not in _MODULES or last in _MAKERS or last[:1].isupper():
    return False
  middle = set(parts[1:-1])
  return not middle & _MAKING or bool(middle & _MEASURING)


def _built_under(function: ast.AST, kept: List[str]) -> bool:
  """Whether a function makes its variables under a kept scope: each of
  its statements that calls more than plain operations is a `with` of
  a scope the filter keeps."""
  read = _read_method(function)
  return not read.makes_outside and any(
      _opens_kept(w, kept) for w, _ in read.withs) and all(
          _opens_kept(w, kept) or not makes for w, makes in read.withs)


def _inputs_of(call: ast.Call) -> List[ast.expr]:
  """What a layer reads as its input: its first argument (an RNN's cell
  and inputs, its first two), or `inputs=`; its sizes and options are
  no tensors."""
  count = 2 if _names.call_name(call).endswith("rnn") else 1
  return [*call.args[:count], *(k.value for k in call.keywords
                                if k.arg in {"inputs", "input", "x", "cell"})]


def _made_in_block(call: ast.Call, home: _scopes.Scope,
                   kept: List[str]) -> bool:
  """Whether what `call` calls is made where its variables are kept: a
  layer function (`tf.layers.dense`), or an object made in a kept
  scope's block too (`cell = GRUCell(...)` there), not a model made
  before it (`base = MobileNetV2(...)`; `base(x)` in the block)."""
  root = (_names.dotted(call.func) or "").split(".")[0]
  place: Optional[_scopes.Scope] = home
  while place is not None and root:
    defs = place.defs.get(root)
    if defs:
      return all(isinstance(d.value, ast.Call) and _in_kept_block(
          d.value, place, kept) for d in defs)
    place = place.parent
  return bool(root)


def _in_kept_block(call: ast.Call, home: _scopes.Scope,
                   kept: List[str]) -> bool:
  """Whether `call` is in the body of a `with` of `home` opening a kept
  scope (`with tf.variable_scope("predictor") as vs: y = dense(x, 1)`)."""
  at = (getattr(call, "lineno", 0), getattr(call, "col_offset", 0))
  withs = home.once((_in_kept_block, None, 0), lambda: [
      node for node in home.nodes if isinstance(node, ast.With)])
  return any(_opens_kept(node, kept) and (node.body[0].lineno, 0) <= at <= (
      node.end_lineno or 0, node.end_col_offset or 0) for node in withs)


def _matches(opened: str, kept: List[str]) -> bool:
  """Whether a scope opened by its literal name lies under a kept one."""
  opened = opened.strip("/")
  return any(opened == k or opened.startswith(k) for k in kept)


def _opens_kept(statement: ast.With, kept: List[str]) -> bool:
  """Whether the `with` opens a literal scope the filter keeps."""
  return any(name is not None and _matches(name, kept) for name in (
      _opened_scopes.literal(i.context_expr) for i in statement.items))
