"""A step that trains a hand-written list of variables (`var_list=
[ID_table]`) beside a step of its function that minimises the same loss
over every variable (`minimize(warm_loss)`): the model is trained whole by
one and only in part by the other, which leaves the rest frozen (a
warm-up that updates only the new item embeddings). The entries are
names, attributes or a layer's table read by a fixed key (`[self.
full_ec_layer['weights'], ...]`); a list of `self`'s attributes that
names every variable its class makes leaves nothing out, unless the class
also builds layers (`slim.fully_connected`, `Dense`) on them: a
hyper-network's task embeddings fitted alone (`var_list=[self.
task_embeddings]`)."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _graphs
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, var_list_of)


def beside_whole(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call
                 ) -> bool:
  """Whether `call` trains the hand-written list `chosen` (names only)
  while another step of `scope` minimises the same loss with no list, in
  the same graph (a notebook's next exercise, after
  `tf.reset_default_graph()`, minimises its own `f`)."""
  listed: Optional[ast.AST] = chosen
  staged = False
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    listed = defs[0].value if len(defs) == 1 else None
    # One stage's list unpacked from a table of stages (`for name, xhat,
    # var_list in layer_info:`), its loss also minimised whole.
    staged = len(defs) == 1 and defs[0].part is not None
  if isinstance(listed, ast.IfExp):
    return _against_every(listed, scope)
  if not staged and (not isinstance(listed, (ast.List, ast.Tuple)) or (
      not listed.elts) or not all(_entry(e) for e in listed.elts) or (
          _every_one_held(listed, scope))):
    return False
  return minimised_whole(scope, call)


def minimised_whole(scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether another step of `scope` like `call` (a call named in
  `STEPS`) minimises the loss of `call` with no list, in the same
  graph."""
  loss = _loss(call)
  # Worked out once per function: a long one holds many steps.
  whole = scope.once((minimised_whole, 0, 0), lambda: {
      (_graphs.section(scope, n), _names.call_name(n), _loss(n))
      for n in scope.nodes
      if isinstance(n, ast.Call) and _names.call_name(n) in STEPS
      and var_list_of(n) is None})
  return loss is not None and (_graphs.section(scope, call),
                               _names.call_name(call), loss) in whole


def _against_every(choice: ast.IfExp, scope: _scopes.Scope) -> bool:
  """Whether a flag chooses between a hand-written list and every
  variable of the graph for one step (`[self._syn0_d] if is_inferring
  else tf.global_variables()`: inference trains the new documents'
  vectors alone, the loss's other tables fixed); not a list of `self`'s
  attributes naming every variable its class makes in place.

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> module = _scopes.collect(ast.parse("pass"))
  >>> def chose(text):
  ...   return _against_every(ast.parse(text, mode="eval").body, module)
  >>> chose("[self.d] if infer else tf.global_variables()")
  True
  >>> chose("[self.d] if infer else [self.d, self.w]")
  False
  """
  for arm, other in ((choice.body, choice.orelse),
                     (choice.orelse, choice.body)):
    if isinstance(arm, (ast.List, ast.Tuple)) and arm.elts and all(
        _entry(e) for e in arm.elts) and isinstance(other, ast.Call) and (
            _names.call_name(other) in _EVERY) and not (
                other.args or other.keywords) and not (
                    _every_one_held(arm, scope, known=True)):
      return True
  return False


# The whole graph's lists.
_EVERY = {"trainable_variables", "global_variables", "all_variables"}


def _entry(node: ast.expr) -> bool:
  """A variable named as written: `w`, `self.w`, `self.layer['weights']`
  (a table of a layer's variables read by a fixed key)."""
  if isinstance(node, ast.Subscript) and isinstance(
      node.slice, ast.Constant) and isinstance(node.slice.value, str):
    node = node.value
  while isinstance(node, ast.Attribute):
    node = node.value
  return isinstance(node, ast.Name)


def _every_one_held(listed: ast.expr, scope: _scopes.Scope,
                    known: bool = False) -> bool:
  """Whether a list of `self`'s attributes names every attribute its
  class sets to a variable (or a table of them): nothing is left out
  (`known`: only where the class makes some in place)."""
  held = {_held(e) for e in getattr(listed, "elts", [])}
  if None in held:
    return False
  if scope.cls is None:
    return False
  made = {target.attr for node in ast.walk(scope.cls.node)
          if isinstance(node, ast.Assign) and _makes_variables(node.value)
          for target in node.targets if isinstance(target, ast.Attribute)
          and isinstance(target.value, ast.Name) and target.value.id == "self"}
  if made and _builds_layers(scope.cls.node):
    # Layers the class builds beside its own variables (a hyper-network
    # of `fully_connected` on a task embedding) hold more.
    return False
  return made <= held and bool(made or not known)


# Calls that make a layer's variables where they run.
_LAYERS = frozenset({
    "dense", "fully_connected", "conv1d", "conv2d", "conv3d",
    "conv2d_transpose", "separable_conv2d", "Dense", "Conv1D", "Conv2D",
    "Conv3D", "Conv2DTranspose", "LSTM", "GRU", "LSTMCell", "GRUCell"})


def _builds_layers(cls: ast.AST) -> bool:
  """Whether a class calls a layer that makes variables of its own.

  >>> import ast
  >>> _builds_layers(ast.parse("class H:\\n  def f(self, e):\\n"
  ...                          "    return slim.fully_connected(e, 8)"))
  True
  >>> _builds_layers(ast.parse("class V:\\n  def f(self, e):\\n"
  ...                          "    return tf.nn.embedding_lookup(e, 1)"))
  False
  """
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _LAYERS
             for n in ast.walk(cls))


def _held(node: ast.expr) -> Optional[str]:
  """`w` of `self.w` or `self.w['weights']`."""
  if isinstance(node, ast.Subscript):
    node = node.value
  return node.attr if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self" else None


def _makes_variables(value: ast.expr) -> bool:
  """A variable made in place, or a table of them."""
  return any(isinstance(n, ast.Call) and _names.call_name(n) in {
      "Variable", "get_variable"} for n in ast.walk(value))


def _loss(call: ast.Call) -> Optional[str]:
  """A step's loss as written (its first argument)."""
  return ast.unparse(call.args[0]) if call.args else None
