"""The port of a masked gradient written back into its list of pairs in a
loop over `enumerate` of that list (bryankim96/stux-DNN, part seven):

    for i, (grad, var) in enumerate(gradients):
        if var.name in chosen:
            mask = tf.constant(top_k_mask)      # fixed once made
            gradients[i] = (tf.multiply(grad, mask), gradients[i][1])
    train_op = optimizer.apply_gradients(gradients)

->  a spec made empty before the loop, joined in the loop with
`tfpartial.freeze(gradients[i][1], <where the mask is 0>)` where the mask
was applied (so it holds whatever `mask` is there, for the pair's own
variable), the gradient kept, and the apply through the spec.

The mask must be fixed once made: a constant (literals, NumPy), or, in the
loop's block, last assigned `tf.constant(...)` (a value that never
changes). A mask read from a variable or recomputed from the weights stays
by hand.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# (the loop, the statement writing the pair back, the list's name).
Loop = Tuple[ast.For, ast.Assign, str]


def port(node: ast.AST, sink: ast.Call, scope: _scopes.Scope,
         analysis: Analysis, grad: ast.AST, mask: ast.AST
         ) -> Optional[_edits.Port]:
  """The port of `node` (the masked gradient) in such a loop, or why
  there is none; None when `node` is not the gradient of such a pair."""
  loop = _loop_of(node, scope)
  if loop is None:
    return None
  for_node, statement, listed = loop
  lines = analysis.lines(scope)
  if not (_constants.is_constant(mask, scope) or _made_constant(
      mask, statement, scope)):
    return f"the mask `{_edits.text(mask, lines)}` is not a constant: it " \
           "may change while training (see the guide's dynamic masks)"
  step = analysis.order(scope).statement_of(sink)
  if step is None or step.lineno <= (for_node.end_lineno or 0) or not (
      sink.args and isinstance(sink.args[0], ast.Name)
      and sink.args[0].id == listed) or any(
          for_node.lineno <= getattr(d.value, "lineno", 0) <= sink.lineno
          for d in scope.defs.get(listed, []) if d.value is not (
              statement.value)):
    return "the list the loop writes changes before the apply, or the " \
           "apply does not take it"
  if not _reaches(step, for_node, scope.node):
    return "the apply is not in the block of the loop"
  if _edits.spec_site(for_node, scope.node) is not for_node:
    return "the masks are made inside a `tf.function`: make the spec " \
           "once, outside it"
  module = analysis.module(scope)
  assert module.tree is not None
  tf = _edits.tf_alias(module.tree)
  np = _edits.numpy_alias(module.tree)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(sink, name, lines)
  if tf is None or apply is None:
    return "the optimizer call or TensorFlow's import is not plain here"
  assert isinstance(statement.value, ast.Tuple)
  variable = _edits.text(statement.value.elts[1], lines)
  frozen = _edits.frozen_where_zero(_edits.text(mask, lines), tf,
                                    np or "np", variable)
  return _edits.with_import(module.tree, [
      _edits.before(for_node, lines, f"{name} = tfpartial.FreezeSpec()"),
      _edits.before(statement, lines,
                    f"{name} = {name} | tfpartial.freeze({variable}, "
                    f"{frozen})"),
      _edits.replace(node, _edits.text(grad, lines)), apply],
                            numpy=np is None)


def _loop_of(node: ast.AST, scope: _scopes.Scope) -> Optional[Loop]:
  """(the loop, the statement, the list) when `node` is the gradient of
  `listed[i] = (node, variable)` in `for i, ... in enumerate(listed)`,
  the statement in the loop's body or in `if`s in it."""
  statement = next((n for n in scope.nodes if isinstance(n, ast.Assign)
                    and len(n.targets) == 1 and isinstance(n.value, ast.Tuple)
                    and len(n.value.elts) == 2 and n.value.elts[0] is node),
                   None)
  if statement is None:
    return None
  target = statement.targets[0]
  if not (isinstance(target, ast.Subscript) and isinstance(
      target.value, ast.Name) and isinstance(target.slice, ast.Name)):
    return None
  listed, index = target.value.id, target.slice.id
  for loop in scope.nodes:
    if not isinstance(loop, ast.For) or loop.orelse or not _within(
        loop.body, statement):
      continue
    head = loop.target.elts if isinstance(loop.target, ast.Tuple) else []
    if len(head) == 2 and isinstance(head[0], ast.Name) and (
        head[0].id == index) and isinstance(loop.iter, ast.Call) and (
            _names.call_name(loop.iter) == "enumerate") and len(
                loop.iter.args) == 1 and not loop.iter.keywords and (
                    isinstance(loop.iter.args[0], ast.Name)) and (
                        loop.iter.args[0].id == listed) and not any(
                            _stores(s, index) for s in loop.body):
      return loop, statement, listed
  return None


def _within(block: List[ast.stmt], statement: ast.stmt) -> bool:
  """Whether `statement` is in `block`, or in the branches of an `if` in
  it (not in a nested loop, `with` or `try`)."""
  for item in block:
    if item is statement:
      return True
    if isinstance(item, ast.If) and (_within(item.body, statement) or (
        _within(item.orelse, statement))):
      return True
  return False


def _stores(node: ast.AST, name: str) -> bool:
  """Whether `node` assigns `name`."""
  return any(isinstance(n, ast.Name) and n.id == name and isinstance(
      n.ctx, ast.Store) for n in ast.walk(node))


def _made_constant(mask: ast.AST, statement: ast.stmt,
                   scope: _scopes.Scope) -> bool:
  """Whether `mask` is a name last assigned `tf.constant(...)` in the
  block of `statement`, before it, and not assigned again in between."""
  if not isinstance(mask, ast.Name):
    return False
  block = _block_of(statement, scope.node)
  if block is None:
    return False
  before = block[:block.index(statement)]
  for at in range(len(before) - 1, -1, -1):
    item = before[at]
    if isinstance(item, ast.Assign) and len(item.targets) == 1 and (
        isinstance(item.targets[0], ast.Name)) and (
            item.targets[0].id == mask.id):
      return isinstance(item.value, ast.Call) and (
          _names.call_name(item.value) == "constant")
    if _stores(item, mask.id):
      return False
  return False


def _block_of(statement: ast.stmt, root: ast.AST
              ) -> Optional[List[ast.stmt]]:
  """The statement list holding `statement`."""
  for node in ast.walk(root):
    for field in ("body", "orelse", "finalbody"):
      block = getattr(node, field, None)
      if isinstance(block, list) and any(s is statement for s in block):
        return block
  return None


def _reaches(step: ast.stmt, loop: ast.For, root: ast.AST) -> bool:
  """Whether `step` follows `loop` in its block, or a `with` holding it
  (so the spec made before the loop is bound when the step runs)."""
  block = _block_of(step, root)
  if block is None:
    return False
  return any(_holds_loop(s, loop) for s in block[:block.index(step)])


def _holds_loop(item: ast.stmt, loop: ast.For) -> bool:
  return item is loop or isinstance(item, ast.With) and any(
      _holds_loop(s, loop) for s in item.body)

