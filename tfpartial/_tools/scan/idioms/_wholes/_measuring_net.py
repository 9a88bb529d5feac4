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
does. The measure excuses only what is its own: a filter that leaves
out, beside the measuring network's scopes, a scope opened around or
inside another network the loss reads (a second generator) is still a
freeze."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._runs import _inversion
from tfpartial._tools.scan.idioms._wholes import _loss_network
from tfpartial._tools.scan.idioms._wholes import _own_loss

# What makes data where a model reads it.
_DATA = {"placeholder", "get_next", "placeholder_with_default"}


def only_measure_left_out(flow: Flow, scope: _scopes.Scope, loss: ast.AST,
                          var_list: Optional[ast.AST],
                          home: _scopes.Scope) -> bool:
  """Whether `loss` is measured and the filter of `var_list` (in `home`)
  leaves out, of the scopes opened around or inside the networks the
  loss reads, only the measuring network's: a filter that also leaves
  out a generator the loss reads (`second_unet`) leaves a part of the
  model out. Where the scopes the filter keeps are not literal, the
  measure is enough."""
  calls = _measuring(flow, scope, loss)
  if not calls:
    return False
  kept = _kept(var_list, home, 0) if isinstance(
      var_list, ast.expr) else None
  if not kept:
    return True
  where, read = _read(flow, scope, loss)
  ids = {id(c) for c in calls}
  measuring = _opened(flow, scope, where, ids)
  return all(s in measuring or _own_loss._matches(s, kept)
             for s in _opened(flow, scope, where, read - ids))


def _measuring(flow: Flow, scope: _scopes.Scope, loss: ast.AST
               ) -> List[ast.Call]:
  """The calls of the network whose outputs on the data and on another
  input `loss`, in `scope` (a method's class read too), compares, that
  network running in inference mode or pretrained; none if no such."""
  home, read = _read(flow, scope, loss)
  by_callee: Dict[str, List[ast.Call]] = {}
  for node in _scopes.walk(home):
    if isinstance(node, ast.Call) and id(node) in read and _input(node):
      by_callee.setdefault(ast.unparse(node.func), []).append(node)
  for calls in by_callee.values():
    sides = [_is_data(scope, _input(c)[0]) for c in calls]
    if True in sides and False in sides and (_pretrained(calls[0]) or (
        _inference(flow, flow.callee(calls[0], scope), scope))):
      return calls
  for calls in by_callee.values():
    if len(calls) == 1 and _joined_measure(scope, loss, calls[0]):
      return calls
  return []


# The calls that join a batch along an axis.
_JOINS = {"concat", "stack"}


def _joined_measure(scope: _scopes.Scope, loss: ast.AST, call: ast.Call
                    ) -> bool:
  """Whether `call` runs one network on the data and another input
  joined in one batch (`loss_model(tf.concat([image, generated,
  style_image], 0))`) and the loss reads no data but through it: it
  compares the network's outputs on the two sides, a perceptual loss's
  measure. A loss against a target of its own (`refine(concat([image,
  coarse]))` against the sharp image) reads the network as a stage."""
  joined = _input(call)[0]
  if not (isinstance(joined, ast.Call) and _names.call_name(joined) in (
      _JOINS) and joined.args and isinstance(joined.args[0], (
          ast.List, ast.Tuple))):
    return False
  sides = {_is_data(scope, e) for e in joined.args[0].elts}
  if sides != {True, False}:
    return False
  defs = {name: [(d.value, 0) for d in found]
          for name, found in scope.defs.items()}
  apart = _inversion.reads_apart(loss, lambda c: c is call, defs)
  return not any(_is_data(scope, ast.Name(name)) for name in apart)


def _read(flow: Flow, scope: _scopes.Scope, loss: ast.AST
          ) -> Tuple[ast.AST, Set[int]]:
  """Where the loss is built (the class of a method, or the function)
  and the calls it reads there, through the methods it calls."""
  if scope.cls is not None:
    scope.cls.attributes  # Every method read: what `self.` holds.
  read = _loss_network._calls_read(scope, loss)
  home = scope.cls.node if scope.cls is not None else scope.node
  return home, read | _returned_by_methods(flow, scope, home, read)


def _kept(node: ast.expr, home: _scopes.Scope, depth: int
          ) -> Optional[List[str]]:
  """The literal scopes a list keeps (`first + second` of comprehensions
  by name), or None where a part is not such a filter."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    left = _kept(node.left, home, depth + 1)
    right = _kept(node.right, home, depth + 1)
    return left + right if left and right else None
  values: List[Tuple[ast.expr, _scopes.Scope]] = []
  if isinstance(node, ast.Name):
    values = [(d.value, home) for d in home.defs.get(node.id, [])]
  elif isinstance(node, ast.Attribute) and home.cls is not None:
    values = list(home.cls.attributes.get(_names.dotted(node) or "", []))
  if len(values) == 1 and depth < 4:
    return _kept(values[0][0], values[0][1], depth + 1)
  return _own_loss.kept_scopes(node, home) or None


def _opened(flow: Flow, scope: _scopes.Scope, home: ast.AST,
            ids: Set[int]) -> Set[str]:
  """The literal scopes opened around the calls `ids` of `home`, or in
  the functions of the project they call (two calls deep)."""
  blocks = [(w, name) for w in _scopes.walk(home) if isinstance(w, ast.With)
            for name in _literals(w.items)]
  found: Set[str] = set()
  todo: List[ast.AST] = []
  for call in _scopes.walk(home):
    if isinstance(call, ast.Call) and id(call) in ids:
      found |= {name for w, name in blocks
                if w.lineno <= call.lineno <= (w.end_lineno or 0)}
      callee = flow.callee(call, scope)
      todo += [callee] if callee is not None else []
  for _ in range(2):
    inner = [n for f in todo for n in _scopes.walk(f)]
    found |= {name for name in map(_opened_scopes.literal, inner)
              if name is not None}
    todo = [f for f in (flow.callee(c, scope) for c in inner[:400]
                        if isinstance(c, ast.Call)) if f is not None]
  return found


def _literals(items: List[ast.withitem]) -> Iterator[str]:
  return (name for name in (_opened_scopes.literal(i.context_expr)
                            for i in items) if name is not None)


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
