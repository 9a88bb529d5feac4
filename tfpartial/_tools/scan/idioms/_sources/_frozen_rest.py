"""Whether a filter over a Keras model's trainable variables leaves out
only layers the same code froze whole just before: `for layer in
cls_model.layers: layer.trainable = False`, then `for v in
dec_model.trainable_variables: if 'dec' in v.name: keep = True; if keep:
train_vars += [v]` (or a comprehension over them), where the two models
were built by one call and share the encoder's layers, or the frozen
layers are the filtered model's own. Frozen layers are no longer in
`trainable_variables`, so the filter has nothing of them to leave out.
Part of `var-list-filter` (`_origins`)."""

from __future__ import annotations

import ast
from typing import Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._runs import _same_test

_LISTS = {"trainable_variables", "trainable_weights"}


def left_frozen(value: ast.AST, home: _scopes.Scope) -> bool:
  """Whether `value`, a list kept from `model.trainable_variables` in
  `home` (a comprehension, or an addition in a loop over them), leaves
  out only what `home` froze: a loop before it, not in another arm of a
  mode's `if`, set `.trainable = False` on the `.layers` of the model or
  of one built with it by the same call.

  >>> code = '''
  ... def build(self, net):
  ...   self.enc, self.dec = net.pair()
  ...   for layer in self.enc.layers:
  ...     layer.trainable = False
  ...   for v in self.dec.trainable_variables:
  ...     if 'dec' in v.name:
  ...       self.vs += [v]
  ... '''
  >>> tree = ast.parse(code)
  >>> scope = list(_scopes.collect(tree).all())[1]
  >>> added = tree.body[0].body[2].body[0].body[0].value
  >>> left_frozen(added, scope)
  True
  """
  found = _source(value, home)
  if found is None:
    return False
  model, place = found
  models = _built_with(model, home)
  return any(_freezes_layers(loop, models) and _place(loop) < place and (
      not _same_test.exclusive(home, _place(loop), place))
             for loop in home.nodes if isinstance(loop, ast.For))


def _source(value: ast.AST, home: _scopes.Scope
            ) -> Optional[Tuple[str, Tuple[int, int]]]:
  """The model whose trainable variables `value` keeps some of, and the
  place of the comprehension or loop that keeps them."""
  if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
    return _model_of(value.generators[0].iter, _place(value))
  for loop in home.nodes:
    # The flow may hold a node made for an augmented assignment
    # (`vs += [v]` as `vs + [v]`): the loop is found by its lines.
    if isinstance(loop, ast.For) and _line(loop) < _line(value) <= (
        getattr(loop, "end_lineno", 0) or 0):
      found = _model_of(loop.iter, _place(loop))
      if found is not None:
        return found
  return None


def _model_of(iterated: ast.expr, place: Tuple[int, int]
              ) -> Optional[Tuple[str, Tuple[int, int]]]:
  """`model` of `model.trainable_variables`, with `place`."""
  if not isinstance(iterated, ast.Attribute) or iterated.attr not in _LISTS:
    return None
  model = _names.dotted(iterated.value)
  return (model, place) if model is not None else None


def _built_with(model: str, home: _scopes.Scope) -> Set[str]:
  """`model` and the names assigned with it from one call in `home`
  (`self.cls_model, self.dec_model = net.generator()`)."""
  models = {model}
  for assign in home.nodes:
    if isinstance(assign, ast.Assign) and isinstance(
        assign.value, ast.Call) and len(assign.targets) == 1 and isinstance(
            assign.targets[0], ast.Tuple):
      names = [_names.dotted(e) for e in assign.targets[0].elts]
      if model in names:
        models |= {n for n in names if n is not None}
  return models


def _freezes_layers(loop: ast.For, models: Set[str]) -> bool:
  """Whether `loop` sets `.trainable = False` on a target it draws from
  the `.layers` of `models` (also sliced or zipped with others)."""
  if not any(isinstance(n, ast.Attribute) and n.attr == "layers" and (
      _names.dotted(n.value) in models) for n in ast.walk(loop.iter)):
    return False
  targets = {t.id for t in ast.walk(loop.target) if isinstance(t, ast.Name)}
  return any(
      isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
      and node.value.value is False and any(
          isinstance(t, ast.Attribute) and t.attr == "trainable"
          and isinstance(t.value, ast.Name) and t.value.id in targets
          for t in node.targets)
      for node in ast.walk(loop))


def _place(node: ast.AST) -> Tuple[int, int]:
  return (_line(node), getattr(node, "col_offset", 0))


def _line(node: ast.AST) -> int:
  return getattr(node, "lineno", 0)
