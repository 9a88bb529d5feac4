"""Gradients over a list and more, applied zipped with the list alone
(`grads = tape.gradient(loss, weights + [self.init_state])`, then
`apply_gradients(zip(grads, weights))`): `zip` stops at the shorter
list, so the variables added after it (a learned initial state, created
trainable) get a gradient and never an update. Not this: the pairs
zipped with the whole list, an added variable created untrainable
(`trainable=False`), or one another apply of the function trains with
its own gradient. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import var_list_of

_GRADIENTS = {"gradient", "gradients"}
# The label of a hit's gradient list (`weights + [self.init_state]`).
COMPUTED = "zip-computed"


def hits(analysis: Analysis) -> List[_idiom.Hit]:
  """Each apply that zips gradients over `listed + [extra, ...]` with
  `listed` alone, at the list it applies.

  >>> from tfpartial._tools.scan import _files, _project
  >>> code = ("import tensorflow as tf\\n"
  ...         "h0 = tf.Variable(tf.zeros([2]))\\n"
  ...         "def step(loss, tape, ws, opt):\\n"
  ...         "  grads = tape.gradient(loss, ws + [h0])\\n"
  ...         "  opt.apply_gradients(zip(grads, ws))\\n")
  >>> project = _project.Project([_files.Source("m.py", code)])
  >>> [ast.unparse(h.node) for h in hits(Analysis(project))]
  ['ws']
  """
  found: List[_idiom.Hit] = []
  for scope, call in analysis.calls_named({"apply_gradients"}):
    if analysis.module(scope).is_test:
      continue
    pairs = _names.unwrapped(call.args[0]) if call.args else None
    if isinstance(pairs, ast.Call) and _names.call_name(pairs) == "list" and (
        len(pairs.args) == 1):
      pairs = _names.unwrapped(pairs.args[0])
    if not isinstance(pairs, ast.Call) or _names.call_name(
        pairs) != "zip" or len(pairs.args) != 2 or pairs.keywords:
      continue
    grads, listed = pairs.args
    computed = _gradient_list(grads, scope)
    extra = _added(computed, listed, scope)
    if extra and computed is not None and all(
        _trainable(analysis, scope, e) for e in extra) and not (
            _applied_apart(scope, call, extra)):
      found.append(_idiom.Hit(listed, scope, call, {
          "filtered": listed, COMPUTED: computed}))
  return found


def message(hit: _idiom.Hit) -> str:
  """What a hit's apply leaves out, and why."""
  computed = hit.labels[COMPUTED]
  return (f"gradients over `{ast.unparse(computed)}` (line "
          f"{_idiom.line(computed)}) applied zipped with "
          f"`{ast.unparse(hit.node)}` alone (line {_idiom.line(hit.node)}): "
          "`zip` stops at the shorter list, so what is added after it "
          "never trains: whole variables only; exact as it is, not a "
          "drift; a candidate for a spec file")


def _gradient_list(grads: ast.expr, scope: _scopes.Scope
                   ) -> Optional[ast.AST]:
  """The list the gradients `grads` (a name bound once by a gradient
  call, or again by a clip of itself: `grads, _ = tf.clip_by_global_norm(
  grads, c)`) are computed over."""
  if not isinstance(grads, ast.Name):
    return None
  computed: List[ast.Call] = []
  for each in scope.defs.get(grads.id, ()):
    value = each.value
    if isinstance(value, ast.Call) and _names.call_name(value) in _GRADIENTS:
      computed.append(value)
    elif not (isinstance(value, ast.Call) and value.args and isinstance(
        value.args[0], ast.Name) and value.args[0].id == grads.id):
      return None
  return var_list_of(computed[0]) if len(computed) == 1 else None


def _added(computed: Optional[ast.AST], listed: ast.expr,
           scope: _scopes.Scope) -> Sequence[ast.expr]:
  """The elements `computed` (`listed + [a, b]`, or a name bound once to
  it) adds after `listed`, each a name or an attribute chain."""
  if isinstance(computed, ast.Name):
    defs = scope.defs.get(computed.id, ())
    computed = defs[0].value if len(defs) == 1 else None
  if not isinstance(computed, ast.BinOp) or not isinstance(
      computed.op, ast.Add) or not isinstance(computed.right, ast.List) or (
          ast.unparse(computed.left) != ast.unparse(listed)):
    return ()
  elements = computed.right.elts
  return elements if elements and all(
      _names.dotted(e) for e in elements) else ()


def _trainable(analysis: Analysis, scope: _scopes.Scope,
               extra: ast.expr) -> bool:
  """Whether the module binds `extra` (`h0`, `self.init_state`) to a
  variable it creates, never with a literal `trainable=False`."""
  name = _names.dotted(extra)
  tree = analysis.module(scope).tree
  made = [node.value for node in ast.walk(tree) if isinstance(
      node, ast.Assign) and isinstance(node.value, ast.Call) and (
          _names.call_name(node.value) in _names.VARIABLES) and any(
              _names.dotted(t) == name for t in node.targets)] if (
                  tree is not None) else []
  return bool(made) and not any(
      k.arg == "trainable" and isinstance(k.value, ast.Constant) and (
          k.value.value is False) for value in made for k in value.keywords)


def _applied_apart(scope: _scopes.Scope, call: ast.Call,
                   extra: Sequence[ast.expr]) -> bool:
  """Whether another apply of the function names one of `extra`."""
  names = {_names.dotted(e) for e in extra}
  return any(
      isinstance(node, ast.Call) and node is not call and (
          _names.call_name(node) == "apply_gradients") and any(
              _names.dotted(n) in names for n in ast.walk(node)
              if isinstance(n, (ast.Name, ast.Attribute)))
      for node in _scopes.walk(scope.node))
