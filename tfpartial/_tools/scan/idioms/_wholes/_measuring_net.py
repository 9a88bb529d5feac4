"""Whether a step's loss compares what one network of the project makes
of the data and of something else (Deep3DFace's `Perceptual_Net(
self.imgs)` beside `Perceptual_Net(self.Face3D.render_imgs)`), where
that network's function runs it in inference mode (`is_training=False`
in its body, or in the body of a function it calls). Such a network
only measures what the trained one makes (a face-recognition network's
identity features, a perceptual loss): a filter leaving it out leaves
no part of the model out. The same network run on two inputs of data
(a siamese pair on a frozen backbone) is not this: neither side is the
model's output. The loss may be built in a method of its own that the
step's function calls (Super-SloMo's `self.loss_cal_all()` running
`tf.keras.applications.VGG16(input_tensor=self.second_output)` beside
`VGG16(input_tensor=self.frame1)`); a pretrained application (its
`weights` left to ImageNet's) measures as a network in inference mode
does."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._wholes import _loss_network

# What makes data where a model reads it.
_DATA = {"placeholder", "get_next", "placeholder_with_default"}


def measured(flow: Flow, scope: _scopes.Scope, loss: ast.AST) -> bool:
  """Whether `loss`, in `scope` (a method's class read too), compares a
  network's outputs on the data and on another input, that network
  running in inference mode."""
  if scope.cls is not None:
    scope.cls.attributes  # Every method read: what `self.` holds.
  read = _loss_network._calls_read(scope, loss)
  home = scope.cls.node if scope.cls is not None else scope.node
  read |= _returned_by_methods(flow, scope, home, read)
  by_callee: Dict[str, List[ast.Call]] = {}
  for node in _scopes.walk(home):
    if isinstance(node, ast.Call) and id(node) in read and _input(node):
      by_callee.setdefault(ast.unparse(node.func), []).append(node)
  for calls in by_callee.values():
    sides = [_is_data(scope, _input(c)[0]) for c in calls]
    if True in sides and False in sides and (_pretrained(calls[0]) or (
        _inference(flow, flow.callee(calls[0], scope), scope))):
      return True
  return False


def _input(call: ast.Call) -> List[ast.expr]:
  """What a network runs on: its first argument, or a Keras
  application's `input_tensor=`."""
  return call.args[:1] or [k.value for k in call.keywords
                           if k.arg == "input_tensor"]


def _pretrained(call: ast.Call) -> bool:
  """`tf.keras.applications.VGG16(...)` with its `weights` left to
  ImageNet's (or named): a classifier trained elsewhere."""
  name = _names.dotted(call.func) or ""
  return "applications." in name and not any(
      k.arg == "weights" and isinstance(k.value, ast.Constant)
      and k.value.value is None for k in call.keywords)


def _returned_by_methods(flow: Flow, scope: _scopes.Scope, home: ast.AST,
                         read: Set[int]) -> Set[int]:
  """The calls whose results the class's methods that `read` calls
  (`self.loss_cal_all()`) return: a loss built in a method of its
  own."""
  found: Set[int] = set()
  if scope.cls is None:
    return found
  for node in _scopes.walk(home):
    if isinstance(node, ast.Call) and id(node) in read and isinstance(
        node.func, ast.Attribute) and _names.dotted(
            node.func.value) == "self":
      method = flow.callee(node, scope)
      inner = _scope_of(scope, method) if method is not None else None
      if method is not None and inner is not None:
        found |= {c for r in _scopes.walk(method)
                  if isinstance(r, ast.Return) and r.value is not None
                  for c in _loss_network._calls_read(inner, r.value)}
  return found


def _scope_of(scope: _scopes.Scope, method: ast.AST
              ) -> Optional[_scopes.Scope]:
  """The scope of `method`, defined in a scope around `scope`'s."""
  outer: Optional[_scopes.Scope] = scope.parent
  while outer is not None and outer.scope_of(method) is None:
    outer = outer.parent
  return outer.scope_of(method) if outer is not None else None


def _is_data(scope: _scopes.Scope, arg: ast.expr, sliced: bool = True
             ) -> bool:
  """Whether `arg` names what a placeholder or an input pipeline gives
  (`self.imgs, ... = iterator.get_next()`), or (`sliced`) a slice of
  such a name."""
  name = _names.dotted(arg)
  if name is None:
    return False
  values = [d.value for d in scope.defs.get(name, [])]
  if scope.cls is not None:
    values += [v for v, _ in scope.cls.attributes.get(name, [])]
  if len(values) == 1 and isinstance(values[0], ast.Subscript) and (
      sliced):
    # A slice of the data (`self.imgs_pla[:, :, :, 3:6]`) is data.
    return _is_data(scope, values[0].value, sliced=False)
  return bool(values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _DATA
      for v in values)


def _inference(flow: Flow, function: Optional[ast.AST],
               scope: _scopes.Scope) -> bool:
  """Whether `function`, or a function of the project it calls, runs a
  network told it does not train (`is_training=False`)."""
  todo = [function] if function is not None else []
  for _ in range(2):
    calls = [n for f in todo for n in _scopes.walk(f)
             if isinstance(n, ast.Call)]
    if any(_loss_network._inference(c) for c in calls):
      return True
    todo = [f for f in (flow.callee(c, scope) for c in calls[:40])
            if f is not None]
  return False
