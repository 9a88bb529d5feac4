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
variable), the masked gradient kept (a mask that also scales, `0.5`,
still scales), and the apply through the spec.

The mask must be fixed once made: a constant (literals, NumPy), or, in the
loop's block, last assigned TensorFlow's `tf.constant(...)` of a constant,
or of anything in a TF1 graph built once (the list from
`compute_gradients`, the apply's op kept). A mask read from a variable or
recomputed from the weights (`tf.constant(v.numpy() > 0)` in an eager
step) stays by hand, and so does a list passed to a call, aliased or
changed between the loop and the apply.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple, Union

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# (the loop, the statement writing the pair back, the list's name).
Loop = Tuple[ast.For, ast.Assign, str]


def port(node: ast.AST, sink: ast.Call, scope: _scopes.Scope,
         analysis: Analysis, mask: ast.AST) -> Optional[_edits.Port]:
  """The port of `node` (the masked gradient) in such a loop, or why
  there is none; None when `node` is not the gradient of such a pair."""
  loop = _loop_of(node, scope)
  if loop is None or isinstance(loop, str):
    return loop
  for_node, statement, listed = loop
  lines = analysis.lines(scope)
  module = analysis.module(scope)
  assert module.tree is not None
  tf = _edits.tf_alias(module.tree)
  step = analysis.order(scope).statement_of(sink)
  constant = _constants.is_constant(
      mask, scope, imported=analysis.project.imported_values)
  if not (constant or _made_constant(
      mask, statement, scope, tf, _built_once(listed, for_node, step,
                                              scope))):
    return f"the mask `{_edits.text(mask, lines)}` is not a constant: it " \
           "may change while training (see the guide's dynamic masks)"
  if step is None or not _applies_the_list(loop, sink, step, scope):
    return "the list the loop writes changes before the apply, or the " \
           "apply does not take it"
  if not _reaches(step, for_node, scope.node):
    return "the apply is not in the block of the loop"
  if _edits.in_trace(scope):
    return "the masks are made inside a `tf.function`: make the spec " \
           "once, outside it"
  np = _edits.numpy_alias(module.tree)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(sink, name, lines)
  if tf is None or apply is None:
    return "the optimizer call or TensorFlow's import is not plain here"
  assert isinstance(statement.value, ast.Tuple)
  variable = _edits.text(statement.value.elts[1], lines)
  frozen = _edits.frozen_where_zero(_edits.text(mask, lines), tf,
                                    np or "np", variable)
  # The masked gradient stays: the spec holds where the mask is 0, the
  # multiply keeps any other value the mask has.
  return _edits.with_import(module.tree, [
      _edits.before(for_node, lines, f"{name} = tfpartial.FreezeSpec()"),
      _edits.before(statement, lines,
                    f"{name} = {name} | tfpartial.freeze({variable}, "
                    f"{frozen})"), apply], numpy=np is None)


def _loop_of(node: ast.AST, scope: _scopes.Scope
             ) -> Union[Loop, str, None]:
  """(the loop, the statement, the list) when `node` is the gradient of
  `listed[i] = (node, variable)` in `for i, ... in enumerate(listed)`,
  the statement in the loop's body or in `if`s in it; why not when the
  pair is written back elsewhere than at `i`, or `i` changes."""
  statement = next((n for n in scope.nodes if isinstance(n, ast.Assign)
                    and len(n.targets) == 1 and isinstance(n.value, ast.Tuple)
                    and len(n.value.elts) == 2 and n.value.elts[0] is node),
                   None)
  if statement is None:
    return None
  target = statement.targets[0]
  if not (isinstance(target, ast.Subscript) and isinstance(
      target.value, ast.Name)):
    return None
  listed = target.value.id
  for loop in scope.nodes:
    if not isinstance(loop, ast.For) or loop.orelse or not _within(
        loop.body, statement):
      continue
    index = _enumerates(loop, listed)
    if index is None:
      continue
    if not (isinstance(index, ast.Name) and isinstance(
        target.slice, ast.Name) and target.slice.id == index.id):
      return f"the pair is written back at `{ast.unparse(target)}`, not " \
             f"at the loop's index `{ast.unparse(index)}`"
    if any(_stores(s, index.id) for s in loop.body):
      return f"the loop's index `{index.id}` is reassigned in the loop"
    return loop, statement, listed
  return None


def _enumerates(loop: ast.For, listed: str) -> Optional[ast.expr]:
  """`i` when `loop` is `for i, item in enumerate(listed)`."""
  head = loop.target.elts if isinstance(loop.target, ast.Tuple) else []
  enumerates = len(head) == 2 and isinstance(loop.iter, ast.Call) and (
      _names.call_name(loop.iter) == "enumerate") and len(
          loop.iter.args) == 1 and not loop.iter.keywords and isinstance(
              loop.iter.args[0], ast.Name) and loop.iter.args[0].id == listed
  return head[0] if enumerates else None


def _applies_the_list(loop: Loop, sink: ast.Call, step: ast.stmt,
                      scope: _scopes.Scope) -> bool:
  """Whether the apply `sink` (in `step`, after the loop) takes the list
  the loop writes as it left the loop: not assigned after the loop's
  start but by the loop's statement, and not passed to a call, aliased
  or changed in place (`del`, a slice) from its last assignment before
  the loop to the apply."""
  for_node, statement, listed = loop
  if step.lineno <= (for_node.end_lineno or 0) or not (
      sink.args and isinstance(sink.args[0], ast.Name)
      and sink.args[0].id == listed):
    return False
  defs = scope.defs.get(listed, [])
  if any(for_node.lineno <= getattr(d.value, "lineno", 0) <= sink.lineno
         for d in defs if d.value is not statement.value):
    return False
  begin = (for_node.lineno, for_node.col_offset)
  start = max((d.end for d in defs if d.replaces and d.end <= begin),
              default=(0, 0))
  target = statement.targets[0]
  assert isinstance(target, ast.Subscript) and isinstance(for_node.iter,
                                                          ast.Call)
  allowed = [for_node.iter.args[0], sink.args[0], target.value]
  return not _other_uses(listed, scope.node, allowed, start,
                         (step.end_lineno or step.lineno, 1 << 30))


def _other_uses(listed: str, root: ast.AST, allowed: Sequence[ast.AST],
                start: _scopes.Position, end: _scopes.Position) -> bool:
  """Whether `listed` is used between `start` and `end` other than at
  `allowed`, read at an index (`listed[k]`) or iterated (`for p in
  listed`); or used at all in a function or class nested in `root`."""
  parents: Dict[int, ast.AST] = {}
  for parent in ast.walk(root):
    for child in ast.iter_child_nodes(parent):
      parents[id(child)] = parent
  for name in ast.walk(root):
    if not isinstance(name, ast.Name) or name.id != listed or any(
        name is a for a in allowed):
      continue
    if _nested(name, parents, root):
      return True
    above = parents.get(id(name))
    if start <= (name.lineno, name.col_offset) <= end and not (
        isinstance(above, ast.Subscript) and above.value is name
        and isinstance(above.ctx, ast.Load)) and not (
            isinstance(above, (ast.For, ast.comprehension))
            and above.iter is name):
      return True
  return False


def _nested(node: ast.AST, parents: Dict[int, ast.AST], root: ast.AST
            ) -> bool:
  """Whether `node` is in a function, lambda or class inside `root`."""
  at = parents.get(id(node))
  while at is not None and at is not root:
    if isinstance(at, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                       ast.ClassDef)):
      return True
    at = parents.get(id(at))
  return False


def _built_once(listed: str, for_node: ast.For, step: Optional[ast.stmt],
                scope: _scopes.Scope) -> bool:
  """Whether the loop builds a TF1 graph once: the list assigned before
  it from `compute_gradients` (then perhaps filtered), the apply's op kept
  (assigned or returned), so a `tf.constant` made in the loop never
  changes."""
  begin = (for_node.lineno, for_node.col_offset)
  return isinstance(step, (ast.Assign, ast.Return)) and any(
      d.replaces and d.end <= begin and isinstance(d.value, ast.Call)
      and _names.call_name(d.value) == "compute_gradients"
      for d in scope.defs.get(listed, []))


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
                   scope: _scopes.Scope, tf: Optional[str],
                   built_once: bool) -> bool:
  """Whether `mask` is a name last assigned TensorFlow's `tf.constant(...)`
  in the block of `statement`, before it, and not assigned again in
  between; of a constant, or of anything when the graph is `built_once`."""
  if not isinstance(mask, ast.Name) or tf is None:
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
      value = item.value
      return isinstance(value, ast.Call) and _names.dotted(value.func) in (
          f"{tf}.constant", f"{tf}.compat.v1.constant") and (
              built_once or all(_constants.is_constant(a, scope) for a in (
                  *value.args, *(k.value for k in value.keywords))))
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
  """Whether `item` is `loop`, or a `with` whose body holds it (directly
  or in a nested `with`)."""
  return item is loop or isinstance(item, ast.With) and any(
      _holds_loop(s, loop) for s in item.body)

