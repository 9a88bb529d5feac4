"""The port of a gradient rebuilt with zeros for a part split off it:

    old, new = tf.split(grad, [n, -1], axis=a)
    masked = tf.concat([tf.zeros_like(old), new], axis=a)

freezes the first `n` elements along `a` of the gradient's variable; in a
loop over several gradients (`for a, grad in zip(axes, grads)`), of each
variable with its own axis. The port keeps `grad` and makes the spec from
the same names, so it holds whatever `n` and `a` are when it runs.

Also where a helper writing zeros over a gradient's first rows (the memory
networks' `zero_nil_slot`) is used: the call whose list is applied.
"""

from __future__ import annotations

import ast
from typing import Callable, List, Optional, Sequence, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# (gradient, the part's index as a function of the variable's text), or
# why there is none.
Split = Union[Tuple[ast.expr, str, str], str]


def concat_zeros(node: ast.AST, scope: _scopes.Scope,
                 text: Callable[[ast.AST], str]) -> Optional[Split]:
  """For `concat([zeros_like(old), new], axis=a)` with `old, new =
  split(grad, sizes, axis=a)`: (grad, frozen-index template with `{v}` for
  the variable, the axis text); None when `node` is not such a concat."""
  if not (isinstance(node, ast.Call) and _names.call_name(node) in {
      "concat", "concatenate"} and node.args and isinstance(
          node.args[0], (ast.List, ast.Tuple)) and len(node.args[0].elts) == 2):
    return None
  parts = node.args[0].elts
  zero = [i for i, p in enumerate(parts) if _names.is_zero(p)]
  if len(zero) != 1:
    return "the gradient is rebuilt from more than two parts"
  kept = parts[1 - zero[0]]
  zeroed = parts[zero[0]]
  inner = zeroed.args[0] if isinstance(zeroed, ast.Call) and (
      zeroed.args) else None
  if isinstance(inner, ast.Subscript) and isinstance(kept, ast.Subscript):
    return _sliced(node, inner, kept, text)
  if not (isinstance(inner, ast.Name) and isinstance(kept, ast.Name)):
    return "the zeroed part is not a name split off the gradient"
  split = _split_of(inner.id, kept.id, scope)
  if split is None:
    return "the zeroed part does not come from a `tf.split` of the gradient"
  call, position = split
  here, there = _axis_node(node), _axis_node(call)
  if (here is None) != (there is None) or here is not None and (
      there is not None and text(here) != text(there)):
    return "the split and the concat use different axes"
  sizes = call.args[1] if len(call.args) > 1 else None
  if not (isinstance(sizes, (ast.List, ast.Tuple)) and len(sizes.elts) == 2):
    return "the gradient is split in other than two known parts"
  first, second = (text(e) for e in sizes.elts)
  if position == 0:
    part = (f"slice(None, {first})" if first != "-1"
            else f"slice(None, -({second}))")
  else:
    part = (f"slice({first}, None)" if first != "-1"
            else f"slice(-({second}), None)")
  axis_text = text(there) if there is not None else "0"
  index = (f"(slice(None),) * (({axis_text}) % len({{v}}.shape)) + "
           f"({part},)")
  return call.args[0], index, axis_text


def _sliced(node: ast.Call, zeroed: ast.Subscript, kept: ast.Subscript,
            text: Callable[[ast.AST], str]) -> Split:
  """`concat([zeros_like(g[:n]), g[n:]])`: the zeroed slice of the first
  axis (or of the axis given, written on each part)."""
  if text(zeroed.value) != text(kept.value):
    return "the parts are not slices of one gradient"
  axis = _axis_node(node)
  index = zeroed.slice
  dims = list(index.elts) if isinstance(index, ast.Tuple) else [index]
  if not dims or not isinstance(dims[-1], ast.Slice) or any(
      not (isinstance(d, ast.Slice) and d.lower is d.upper is d.step is None)
      for d in dims[:-1]):
    return "the zeroed part is not one slice along an axis"
  if axis is not None and text(axis) != str(len(dims) - 1):
    return "the parts are joined along another axis than the one sliced"
  last = dims[-1]
  assert isinstance(last, ast.Slice)
  parts = [last.lower, last.upper] + ([last.step] if last.step else [])
  part = "slice({})".format(", ".join(
      text(b) if b is not None else "None" for b in parts))
  index_text = part if len(dims) == 1 else (
      f"(slice(None),) * {len(dims) - 1} + ({part},)")
  return zeroed.value, index_text, str(len(dims) - 1)


def _axis_node(call: ast.Call) -> Optional[ast.expr]:
  for keyword in call.keywords:
    if keyword.arg == "axis":
      return keyword.value
  return call.args[2] if len(call.args) > 2 else None


def _split_of(first: str, second: str, scope: _scopes.Scope
              ) -> Optional[Tuple[ast.Call, int]]:
  """The `tf.split` whose two parts `first` (zeroed) and `second` are, and
  the position of the zeroed one."""
  for each in scope.defs.get(first, []):
    value = each.value
    if isinstance(value, ast.Call) and _names.call_name(value) == "split" \
        and each.part is not None and each.part[1] == 2 and any(
            d.value is value for d in scope.defs.get(second, [])):
      return value, each.part[0]
  return None


def loop_of(grad: ast.expr, scope: _scopes.Scope
            ) -> Optional[Tuple[ast.For, ast.expr]]:
  """The `for ..., grad in zip(..., grads)` that binds `grad`, and the
  `grads` it iterates, when there is one."""
  if not isinstance(grad, ast.Name):
    return None
  for node in scope.nodes:
    if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and (
        _names.call_name(node.iter) == "zip") and isinstance(
            node.target, ast.Tuple) and len(node.target.elts) == len(
                node.iter.args):
      for target, source in zip(node.target.elts, node.iter.args):
        if isinstance(target, ast.Name) and target.id == grad.id:
          return node, source
  return None


def variables_of(grads: ast.expr, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The variables `grads = tape.gradient(loss, variables)` is taken for."""
  if not isinstance(grads, ast.Name):
    return None
  calls = [d.value for d in scope.defs.get(grads.id, [])
           if isinstance(d.value, ast.Call) and _names.call_name(d.value) in {
               "gradient", "gradients"}]
  if len(calls) != 1:
    return None
  call = calls[0]
  chosen = call.args[1] if len(call.args) > 1 else next(
      (k.value for k in call.keywords if k.arg in {"sources", "xs"}), None)
  return chosen


def zero_rows(node: ast.AST, scope: _scopes.Scope
              ) -> Optional[Tuple[ast.Name, str]]:
  """For `concat([zeros, slice(t, [k, 0], [-1, -1])], axis=0)` (or `t[k:]`
  kept, or TF 0.x's `concat(0, [...])`): (t, k), the first `k` rows of `t`
  zeroed; None for anything else."""
  if not (isinstance(node, ast.Call) and _names.call_name(node) in {
      "concat", "concat_v2"}):
    return None
  keywords = {k.arg: k.value for k in node.keywords}
  values, axis = keywords.get("values"), keywords.get("axis")
  args = list(node.args)
  if values is None and args and isinstance(args[0], (ast.List, ast.Tuple)):
    values, args = args[0], args[1:]
  elif values is None and len(args) >= 2 and isinstance(
      args[1], (ast.List, ast.Tuple)):
    values, args = args[1], args[:1]  # TF 0.x: `concat(axis, values)`.
  if axis is None and args:
    axis = args[0]
  if not (isinstance(values, (ast.List, ast.Tuple)) and len(
      values.elts) == 2 and isinstance(axis, ast.Constant) and (
          axis.value == 0) and not isinstance(axis.value, bool)):
    return None
  zeroed, kept = values.elts
  if isinstance(zeroed, ast.Name):  # `z = tf.zeros(tf.stack([1, s]))`
    made = scope.defs.get(zeroed.id, [])
    zeroed = made[0].value if len(made) == 1 else zeroed
  if not _names.is_zero(zeroed):
    return None
  if isinstance(kept, ast.Subscript) and isinstance(kept.value, ast.Name) \
      and isinstance(kept.slice, ast.Slice) and kept.slice.upper is None \
      and kept.slice.step is None and _count(kept.slice.lower):
    return kept.value, str(getattr(kept.slice.lower, "value"))
  if isinstance(kept, ast.Call) and _names.call_name(kept) == "slice" and (
      len(kept.args) == 3) and isinstance(kept.args[0], ast.Name):
    begin, size = kept.args[1], kept.args[2]
    if isinstance(begin, ast.List) and isinstance(size, ast.List) and len(
        begin.elts) == len(size.elts) >= 1 and _count(begin.elts[0]) and all(
            isinstance(b, ast.Constant) and b.value == 0
            for b in begin.elts[1:]) and all(
                isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub)
                and isinstance(s.operand, ast.Constant)
                and s.operand.value == 1 for s in size.elts):
      return kept.args[0], str(getattr(begin.elts[0], "value"))
  return None


def _count(node: Optional[ast.AST]) -> bool:
  """A positive whole number written as one."""
  return isinstance(node, ast.Constant) and isinstance(node.value, int) \
      and not isinstance(node.value, bool) and node.value > 0


def reaching(calls: List[ast.Call], sink: ast.AST, order: _order.Order
             ) -> List[ast.Call]:
  """The calls whose statement writes a name the sink reads (`out.append(
  (zero_nil_slot(g), v))` or `out = ...` before `apply_gradients(out)`):
  of a helper called in two loops, the one whose pairs are applied."""
  read = {n.id for n in ast.walk(sink) if isinstance(n, ast.Name)}
  kept = []
  for call in calls:
    node: Optional[ast.AST] = call
    while node is not None and not isinstance(node, ast.stmt):
      node = order.parent(node)
    written: List[ast.AST] = []
    if isinstance(node, ast.Assign):
      written = list(node.targets)
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and (
        isinstance(node.value.func, ast.Attribute)):
      written = [node.value.func.value]  # `out.append(...)`.
    if any(isinstance(w, ast.Name) and w.id in read for w in written):
      kept.append(call)
  return kept


def use_of_helper(node: ast.AST, scope: _scopes.Scope,
                  sinks: Sequence[ast.AST], analysis: Analysis
                  ) -> Optional[ast.expr]:
  """The one call, in the function `scope` that applies the gradients
  (`sinks`), of a helper that zeroes rows of the gradient it is given
  (`zero_nil_slot(g)` in the loop over the pairs), whose list the apply
  reads: where the mask is used, reported there rather than at the
  helper's `concat` (`node`, which every caller shares)."""
  flow = analysis.flow
  helper = flow.origin.get(id(node))
  if helper is None or helper is scope or len(sinks) != 1 or not (
      isinstance(helper.node, (ast.FunctionDef, ast.AsyncFunctionDef))) or (
          zero_rows(node, helper) is None):
    return None  # Only a helper zeroing rows (the nil slot) is moved.
  calls = [c for c in analysis.calls(scope)
           if flow.callee(c, scope) is helper.node]
  if len(calls) > 1:  # One list the apply reads (IRN: two loops, one run).
    calls = reaching(calls, sinks[0], analysis.order(scope))
  return calls[0] if len(calls) == 1 else None
