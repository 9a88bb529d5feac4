"""Whether a written variable is a model's input, not its weights: made
by the function that writes it (`input_variables = [tf.Variable(x) for x
in seed_inputs]`) and read as what a model is called on (`self.model([v.
value() for v in input_variables])`). Activation maximisation, deep
dream, an adversarial example or a style transfer optimise such an
input; setting it to new values between steps (`v.assign(jittered)`)
moves the picture, and freezes no part of a model. A model's weights are
read inside the model, never handed to it as its input.
"""

from __future__ import annotations

import ast
from typing import Iterator, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def inputs(scope: _scopes.Scope) -> Set[str]:
  """The local names of `scope` bound to `tf.Variable(...)` values that a
  call of a model in `scope` runs on, and the names its `for` loops give
  their elements (`for v, x in zip(input_variables, values)`: `v`)."""
  if scope.cls is None:
    return set()  # No model kept on an object to call.
  made = {name for name, defs in scope.defs.items()
          if any(isinstance(n, ast.Call) and _names.call_name(n) == "Variable"
                 for d in defs for n in ast.walk(d.value))}
  if not made:
    return set()
  read = {name for call in _model_calls(scope) if call.args
          for name in _read_names(call.args[0], scope)}
  found = made & read
  if not found:
    return set()
  for loop in scope.nodes:
    if isinstance(loop, (ast.For, ast.AsyncFor)):
      found.update(_elements(loop, found))
  return found


def _elements(loop: ast.For | ast.AsyncFor, lists: Set[str]
              ) -> Iterator[str]:
  """The names `loop` gives the elements of `lists` (`for v in vs`,
  `for v, x in zip(vs, xs)`)."""
  if isinstance(loop.target, ast.Name) and isinstance(
      loop.iter, ast.Name) and loop.iter.id in lists:
    yield loop.target.id
  elif isinstance(loop.target, ast.Tuple) and isinstance(
      loop.iter, ast.Call) and _names.call_name(loop.iter) == "zip":
    for element, walked in zip(loop.target.elts, loop.iter.args):
      if isinstance(element, ast.Name) and isinstance(
          walked, ast.Name) and walked.id in lists:
        yield element.id


def _model_calls(scope: _scopes.Scope) -> Iterator[ast.Call]:
  """The calls of a model kept on the object (`self.model(x)`: called,
  and not a method of its class)."""
  assert scope.cls is not None
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and isinstance(
            node.func.value, ast.Name) and node.func.value.id == "self" and (
                node.func.attr not in scope.cls.methods):
      yield node


def _read_names(value: ast.AST, scope: _scopes.Scope) -> Set[str]:
  """The local names `value` is made from."""
  return {n.id for n in _scopes.made_from(value, scope)
          if isinstance(n, ast.Name)}
