"""Whether a step's loss compares what one network of the project makes
of the data and of something else (Deep3DFace's `Perceptual_Net(
self.imgs)` beside `Perceptual_Net(self.Face3D.render_imgs)`), where
that network's function runs it in inference mode (`is_training=False`
in its body, or in the body of a function it calls). Such a network
only measures what the trained one makes (a face-recognition network's
identity features, a perceptual loss): a filter leaving it out leaves
no part of the model out. The same network run on two inputs of data
(a siamese pair on a frozen backbone) is not this: neither side is the
model's output."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

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
  by_callee: Dict[str, List[ast.Call]] = {}
  for node in _scopes.walk(home):
    if isinstance(node, ast.Call) and id(node) in read and node.args:
      by_callee.setdefault(ast.unparse(node.func), []).append(node)
  for calls in by_callee.values():
    sides = [_is_data(scope, c.args[0]) for c in calls]
    if True in sides and False in sides and _inference(
        flow, flow.callee(calls[0], scope), scope):
      return True
  return False


def _is_data(scope: _scopes.Scope, arg: ast.expr) -> bool:
  """Whether `arg` names what a placeholder or an input pipeline gives
  (`self.imgs, ... = iterator.get_next()`)."""
  name = _names.dotted(arg)
  if name is None:
    return False
  values = [d.value for d in scope.defs.get(name, [])]
  if scope.cls is not None:
    values += [v for v, _ in scope.cls.attributes.get(name, [])]
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
