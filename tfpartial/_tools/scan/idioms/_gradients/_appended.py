"""The port of gradients masked in place in a loop over the pairs and
appended, with their variable, to a new list that is applied (the Masse
lab's RNNs, nmasse/Short-term-plasticity-RNN, part eight):

    capped_gvs = []
    for grad, var in grads_and_vars:
        if 'w_rnn' in var.op.name:
            grad *= par['w_rnn_mask']            # fixed masks, one per
        elif 'w_out' in var.op.name:             # variable chosen by name
            grad *= par['w_out_mask']
        capped_gvs.append((tf.clip_by_norm(grad, 1.0), var))
    train_op = opt.apply_gradients(capped_gvs)

->  a spec made empty before the loop, joined before each masking with
`tfpartial.freeze(var, <where that mask is 0>)` (the pair's own variable,
the mask as it is there), every gradient kept as written (a mask that
also scales still scales; clipping after it is unchanged), and the apply
through the spec.

Every mask in the loop must be a constant; the list must be made empty
before the loop, added to only by the loop's one `append` of the pair's
own variable, and applied as it left the loop. Otherwise by hand.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple, Union

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._gradients import _enumerated

# (the loop, the gradient's name, the variable's name, the maskings).
Loop = Tuple[ast.For, str, str, List[ast.AugAssign]]


def port(node: ast.AST, sink: ast.Call, scope: _scopes.Scope,
         analysis: Analysis) -> Optional[_edits.Port]:
  """The port of `node` (`grad *= mask`, as the flow holds it) in such a
  loop, or why there is none; None when it is not in such a loop."""
  loop = _loop_of(node, scope)
  if loop is None or isinstance(loop, str):
    return loop
  for_node, grad, variable, maskings = loop
  lines = analysis.lines(scope)
  for masking in maskings:
    if not _constants.is_constant(
        masking.value, scope, imported=analysis.project.imported_values):
      return f"the mask `{_edits.text(masking.value, lines)}` is not a " \
             "constant: it may change while training (see the guide's " \
             "dynamic masks)"
  step = analysis.order(scope).statement_of(sink)
  listed = _appended_to(for_node, variable, grad)
  if listed is None or step is None or not _applies(
      for_node, listed, sink, step, scope):
    return "the masked pairs are not appended to one new list that is " \
           "applied as the loop left it"
  if not _enumerated._reaches(step, for_node, scope.node):
    return "the apply is not in the block of the loop"
  if _edits.in_trace(scope):
    return "the masks are made inside a `tf.function`: make the spec " \
           "once, outside it"
  module = analysis.module(scope)
  assert module.tree is not None
  tf, np = _edits.tf_alias(module.tree), _edits.numpy_alias(module.tree)
  name = _edits.spec_name(module.tree)
  apply = _edits.apply_with(sink, name, lines)
  if tf is None or apply is None:
    return "the optimizer call or TensorFlow's import is not plain here"
  edits = [_edits.before(for_node, lines, f"{name} = tfpartial.FreezeSpec()"),
           apply]
  for masking in maskings:  # Each gradient stays as written.
    frozen = _edits.frozen_where_zero(_edits.text(masking.value, lines), tf,
                                      np or "np", variable)
    edits.append(_edits.before(masking, lines, (
        f"{name} = {name} | tfpartial.freeze({variable}, {frozen})")))
  return _edits.with_import(module.tree, edits, numpy=np is None)


def _loop_of(node: ast.AST, scope: _scopes.Scope
             ) -> Union[Loop, str, None]:
  """The loop `for grad, var in pairs` whose body (or an `if` in it)
  holds `grad *= mask` for `node`, with every such masking in it; None
  when there is none; why not when `var` (or `grad` other than by a
  masking) is assigned in it."""
  if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
    return None
  for loop in scope.nodes:
    if not isinstance(loop, ast.For) or loop.orelse or not (
        isinstance(loop.target, ast.Tuple)) or len(loop.target.elts) != 2 or (
            not all(isinstance(e, ast.Name) for e in loop.target.elts)) or (
                not isinstance(loop.iter, ast.Name)):
      continue
    grad, variable = (e.id for e in loop.target.elts
                      if isinstance(e, ast.Name))
    maskings = [s for s in ast.walk(loop) if isinstance(s, ast.AugAssign)
                and isinstance(s.target, ast.Name) and s.target.id == grad]
    if not any(m.value is node.right for m in maskings):
      continue
    if not all(isinstance(m.op, ast.Mult) and _enumerated._within(
        loop.body, m) for m in maskings) or any(
            _enumerated._stores(s, variable) for s in loop.body) or (
                _stored_elsewhere(loop, grad, maskings)):
      return f"`{grad}` or `{variable}` changes in the loop other than by " \
             "a mask: the masked elements may move"
    return loop, grad, variable, maskings
  return None


def _stored_elsewhere(loop: ast.For, grad: str,
                     maskings: List[ast.AugAssign]) -> bool:
  """Whether the loop assigns `grad` other than in its head and by the
  maskings (the masked elements could then reach the list nonzero)."""
  allowed = [loop.target, *(m.target for m in maskings)]
  return any(isinstance(n, ast.Name) and n.id == grad and isinstance(
      n.ctx, ast.Store) and not any(n is a for a in allowed)
             for s in loop.body for n in ast.walk(s))


# Calls that keep a gradient's zeros zero (the first argument's).
_KEEP_ZEROS = {"clip_by_norm", "identity"}


def _keeps_zeros(value: ast.expr, grad: str) -> bool:
  """Whether `value` is `grad`, or `grad` through a call that keeps its
  zeros (`tf.clip_by_norm(grad, c)`)."""
  if isinstance(value, ast.Name):
    return value.id == grad
  return isinstance(value, ast.Call) and _names.call_name(value) in (
      _KEEP_ZEROS) and bool(value.args) and _keeps_zeros(value.args[0], grad)


def _appended_to(loop: ast.For, variable: str, grad: str) -> Optional[str]:
  """`out` when the loop's body ends with one `out.append((<the
  gradient>, variable))`, the gradient as it is or through a call that
  keeps its zeros, and nothing in it is a loop, `with`, `try` or
  `break`/`continue` (every masked gradient reaches the list, with its
  own variable and its zeros)."""
  appends = [s for s in loop.body if isinstance(s, ast.Expr)
             and isinstance(s.value, ast.Call) and isinstance(
                 s.value.func, ast.Attribute) and s.value.func.attr == "append"
             and isinstance(s.value.func.value, ast.Name)]
  if len(appends) != 1 or loop.body[-1] is not appends[0] or any(
      isinstance(n, (ast.For, ast.While, ast.With, ast.Try, ast.Break,
                     ast.Continue)) for s in loop.body for n in ast.walk(s)):
    return None
  call = appends[0].value
  assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
  pair = call.args[0] if len(call.args) == 1 and not call.keywords else None
  if not (isinstance(pair, ast.Tuple) and len(pair.elts) == 2 and isinstance(
      pair.elts[1], ast.Name) and pair.elts[1].id == variable
          and _keeps_zeros(pair.elts[0], grad)):
    return None
  assert isinstance(call.func.value, ast.Name)
  return call.func.value.id


def _applies(loop: ast.For, listed: str, sink: ast.Call, step: ast.stmt,
             scope: _scopes.Scope) -> bool:
  """Whether `listed` is made `[]` last before the loop and the apply
  `sink` (in `step`, after the loop) takes it as it left the loop: used
  nowhere else from its making to the apply but by the loop's append."""
  if step.lineno <= (loop.end_lineno or 0) or not (
      sink.args and isinstance(sink.args[0], ast.Name)
      and sink.args[0].id == listed):
    return False
  begin = (loop.lineno, loop.col_offset)
  made = [d for d in scope.defs.get(listed, []) if d.end <= begin]
  later = [d for d in scope.defs.get(listed, []) if d.end > begin]
  if not made or not made[-1].replaces or not isinstance(
      made[-1].value, ast.List) or made[-1].value.elts or any(
          d.end <= (step.end_lineno or step.lineno, 1 << 30) and d.replaces
          for d in later):
    return False
  append = loop.body[-1]
  assert isinstance(append, ast.Expr) and isinstance(append.value, ast.Call)
  assert isinstance(append.value.func, ast.Attribute)
  allowed = [append.value.func.value, sink.args[0]]
  return not _enumerated._other_uses(
      listed, scope.node, allowed, made[-1].end,
      (step.end_lineno or step.lineno, 1 << 30))
