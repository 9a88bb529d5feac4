"""The port of fixed rows of a model's own weight set back to zeros in its
`call` (`self.table[0].assign(tf.zeros(...))`, a padding row) while the
model's own step applies the gradients of its variables through a stock
optimizer: the spec is made where the weight is, and that apply goes
through it. The reset stays: it zeroes the row once, before the first
step, and after that writes the zeros the frozen row already holds."""

from __future__ import annotations

import ast
from typing import List, Optional, Union

from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._finding import Edit
from tfpartial._tools.scan.idioms._copies import _writes

_CALLS = ("call", "__call__")
_MAKERS = ("add_weight", "Variable")
_OWN = ("self.trainable_variables", "self.trainable_weights")
_MOVES = ("minimize", "apply_gradients", "assign_add", "assign_sub")


def port(hit: _writes.WriteHit, analysis: Analysis
         ) -> Optional[_edits.Port]:
  """The edits, a reason this reset cannot be ported, or None when it is
  not this form (not a row of a `self.` weight reset in `call`)."""
  scope, target = hit.scope, hit.target
  cls = scope.cls
  if cls is None or scope.name not in _CALLS or not isinstance(
      target, ast.Subscript) or not isinstance(hit.sink, ast.Call):
    return None
  weight = _names.dotted(target.value)
  if weight is None or not weight.startswith("self.") or not isinstance(
      target.slice, ast.Constant) or not isinstance(target.slice.value, int):
    return None
  made = _made(cls, weight)
  apply = _the_apply(cls)
  if isinstance(apply, str):
    return apply
  if made is None:
    return f"`{weight}` is not made once in this class by `add_weight` " \
           "or `tf.Variable`: freeze its row where it is made"
  module = analysis.module(scope)
  assert module.tree is not None
  lines = analysis.lines(scope)
  name = "self.tfpartial_spec"
  edit = _edits.apply_with(apply, name, lines)
  if edit is None or made.end_lineno is None or made.end_lineno >= len(
      lines):
    return "the apply is not a plain statement"
  indent = lines[made.lineno - 1][:made.col_offset]
  index = _edits.text(target.slice, lines)
  spec = f"{indent}{name} = tfpartial.freeze({weight}, {index})\n"
  after = Edit(made.end_lineno + 1, 0, made.end_lineno + 1, 0, spec)
  return _edits.with_import(module.tree, [after, edit])


def _made(cls: _scopes.ClassInfo, weight: str) -> Optional[ast.stmt]:
  """The one statement of the class that makes `weight`
  (`self.table = self.add_weight(...)`) in a method's own body."""
  found = [s for s in ast.walk(cls.node) if isinstance(s, ast.Assign)
           and any(_names.dotted(t) == weight for t in s.targets)]
  if len(found) != 1 or not isinstance(found[0].value, ast.Call) or (
      _names.call_name(found[0].value) not in _MAKERS) or any(
          k.arg == "trainable" for k in found[0].value.keywords):
    return None
  method = next((m for m in cls.node.body if isinstance(
      m, (ast.FunctionDef, ast.AsyncFunctionDef)) and found[0] in m.body),
                None)
  return found[0] if method is not None else None


def _the_apply(cls: _scopes.ClassInfo) -> Union[ast.Call, str]:
  """The class's one `optimizer.apply_gradients(...)` of the gradients of
  its own variables, as a statement of its own; else why not."""
  moves: List[ast.Call] = [
      c for c in ast.walk(cls.node) if isinstance(c, ast.Call)
      and _names.call_name(c) in _MOVES]
  applies = [c for c in moves if _names.call_name(c) == "apply_gradients"]
  if len(moves) != 1 or len(applies) != 1:
    return "the model's step does not apply its gradients in one " \
           "`apply_gradients` of this class: wrap the optimizer that " \
           "trains it with `tfpartial.freeze(weight, rows)`"
  apply = applies[0]
  statement = any(isinstance(s, ast.Expr) and s.value is apply
                  for s in ast.walk(cls.node))
  if not statement or not any(
      _names.dotted(n) in _OWN for n in ast.walk(apply)):
    return "the apply is not a plain statement over " \
           "`self.trainable_variables`"
  return apply
