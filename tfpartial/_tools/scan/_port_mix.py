"""The ports of a stop-gradient mix and of a shadow variable written back
under `control_dependencies`."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _constants
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._detect import Hit
from tfpartial._tools.scan._edits import (
    Port, apply_with, before, replace, spec_site, statement_of, text,
    tf_alias, with_import)
from tfpartial._tools.scan._flow import Flow


def _live_term(flow: Flow, mix: ast.AST, scope: _scopes.Scope
               ) -> Optional[Tuple[ast.AST, ast.AST]]:
  """(mask, variable) of the term of `mix` that the gradient flows through."""
  if isinstance(mix, ast.Call) and _names.call_name(mix) in {"where",
                                                            "where_v2"}:
    return None  # Which branch is live is in the condition; by hand.
  if not isinstance(mix, ast.BinOp):
    return None
  for term in (mix.left, mix.right):
    if any(isinstance(n, ast.Call) and _names.call_name(n) == "stop_gradient"
           for n in ast.walk(term)):
      continue
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
      for mask, variable in ((term.left, term.right),
                             (term.right, term.left)):
        known = flow.labels(variable, scope)
        if ("var" in known or "param" in known) and "mask" in flow.labels(
            mask, scope):
          return mask, variable
  return None


def mix(hit: Hit, module: ast.Module, lines: List[str], flow: Flow) -> Port:
  """`used = m * x + (1 - m) * tf.stop_gradient(x)` -> `used = x`, and the
  train step through `tfpartial.train_only(x, m != 0)`."""
  tf = tf_alias(module)
  node = hit.node
  helper = hit.detail.get("helper")
  if helper and isinstance(node, ast.Call):
    found = hit.scope.function(str(helper))
    if found is None or len(node.args) != 2:
      return "the helper's arguments are not (variable, mask)"
    scope = next(s for s in found[1].children if s.node is found[0])
    returned = [n.value for n in scope.nodes if isinstance(n, ast.Return)]
    live = (_live_term(flow, returned[0], scope)
            if len(returned) == 1 and returned[0] is not None else None)
    if live is None or not all(isinstance(t, ast.Name) for t in live):
      return "the helper does not read as `m * x + sg((1 - m) * x)`"
    names = scope.params
    mask: ast.AST = node.args[names.index(live[0].id)]  # type: ignore[attr-defined]
    variable: ast.AST = node.args[names.index(live[1].id)]  # type: ignore[attr-defined]
  else:
    live = _live_term(flow, node, hit.scope)
    if live is None:
      return "which term trains is in a `tf.where` condition: say it in " \
             "a `tfpartial.train_only`"
    mask, variable = live
  if tf is None or not _constants.is_constant(mask, hit.scope):
    return f"the mask `{text(mask, lines)}` is not a constant"
  sink = _one_step(hit.scope)
  if sink is None:
    return "no single `minimize`/`apply_gradients` in this function: " \
           "put `spec.wrap(optimizer)` where the optimizer is built"
  statement = statement_of(sink, module)
  apply = apply_with(sink, "spec", lines)
  if statement is None or apply is None or statement.lineno <= (
      node.lineno):  # type: ignore[attr-defined]
    return "the train step is not a plain statement after the mix"
  spec = (f"spec = tfpartial.train_only({text(variable, lines)}, "
          f"{tf}.get_static_value({tf}.convert_to_tensor("
          f"{text(mask, lines)})) != 0)")
  site = spec_site(statement, hit.scope.node)
  return with_import(module, [replace(node, text(variable, lines)),
                              before(site, lines, spec), apply])


def _one_step(scope: _scopes.Scope) -> Optional[ast.Call]:
  steps = [n for n in scope.nodes if isinstance(n, ast.Call) and
           _names.call_name(n) in _names.TRAIN_STEPS]
  return steps[0] if len(steps) == 1 else None


def shadow(hit: Hit, module: ast.Module, lines: List[str]) -> Port:
  """`with control_dependencies([train]): op = scatter_update(x, i, copy)`
  -> `train = tfpartial.freeze(x, i).minimize(opt, ...)`, `op = train`."""
  block = hit.detail.get("at")
  write = hit.sink
  if not isinstance(block, ast.With) or len(block.body) != 1 or not (
      isinstance(block.body[0], ast.Assign)) or block.body[0].value is not (
          write) or len(block.items) != 1:
    return "the write is not the one statement under `control_dependencies`"
  dependency = block.items[0].context_expr
  steps = dependency.args[0] if isinstance(dependency, ast.Call) else None
  if not (isinstance(steps, (ast.List, ast.Tuple)) and len(steps.elts) == 1
          and isinstance(steps.elts[0], ast.Name)):
    return "`control_dependencies` does not name one train op"
  train = steps.elts[0].id
  made = [v for v in hit.scope.defs.get(train, []) if isinstance(v, ast.Call)
          and _names.call_name(v) in _names.TRAIN_STEPS]
  index = _index_of(write, lines)
  if len(made) != 1 or index is None:
    return "the train op or the written index is not plain here"
  target = text(hit.detail["target"], lines)  # type: ignore[arg-type]
  spec = f"tfpartial.freeze({target}, {index})"
  step = apply_with(made[0], spec, lines)
  if step is None:
    return "the train op is not `optimizer.minimize(...)`"
  name = text(block.body[0].targets[0], lines)
  return with_import(module, [step, replace(block, f"{name} = {train}")])


def _index_of(write: Optional[ast.AST], lines: List[str]) -> Optional[str]:
  if not isinstance(write, ast.Call):
    return None
  if _names.call_name(write) == "scatter_update" and len(write.args) >= 3:
    return text(write.args[1], lines)
  receiver = write.func.value if isinstance(write.func, ast.Attribute) \
      else None
  if isinstance(receiver, ast.Subscript):
    return text(receiver.slice, lines)
  return None
