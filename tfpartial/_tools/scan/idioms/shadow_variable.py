"""`shadow-variable`: a non-trainable copy of the frozen values written
back into the variable under the train op's `control_dependencies`, or
after the step inside an optimizer."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _writes


class ShadowVariable(_idiom.Idiom):
  """A non-trainable copy written back after the step."""

  id = "shadow-variable"
  order = 3
  entry = _idiom.Entry(
      "a copy of the frozen values written back into the variable after "
      "the step", "a-shadow-variable-and-control_dependencies",
      "`tfpartial.freeze(x, index).minimize(optimizer, loss)`; drop the "
      "copy and its write")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    return [h for h in _writes.writes(analysis) if h.kind == self.id]

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    assert isinstance(hit, _writes.WriteHit)
    target, name = hit.written(), hit.writer()
    message = (f"`{target}` gets its copy written back by `{name}` after "
               f"the train step (line {_idiom.line(hit.at)})")
    reasons = _idiom.restores(context) or [
        "the copy is taken once: a checkpoint restore, a pretrained load or "
        "an `assign` between steps is undone by the next step"]
    return message, reasons

  def port(self, hit: _idiom.Hit, analysis: Analysis) -> _edits.Port:
    assert isinstance(hit, _writes.WriteHit)
    return _port(hit, analysis)


def _port(hit: _writes.WriteHit, analysis: Analysis) -> _edits.Port:
  """`with control_dependencies([train]): op = scatter_update(x, i, copy)`
  -> `train = tfpartial.freeze(x, i).minimize(opt, ...)`, `op = train`."""
  block, write = hit.at, hit.sink
  lines = analysis.lines(hit.scope)
  module = analysis.module(hit.scope)
  assert module.tree is not None
  if not isinstance(block, ast.With) or len(block.body) != 1 or not (
      isinstance(block.body[0], ast.Assign)) or block.body[0].value is not (
          write) or len(block.items) != 1:
    return "the write is not the one statement under `control_dependencies`"
  dependency = block.items[0].context_expr
  steps = dependency.args[0] if isinstance(dependency, ast.Call) and (
      dependency.args) else None
  if not (isinstance(steps, (ast.List, ast.Tuple)) and len(steps.elts) == 1
          and isinstance(steps.elts[0], ast.Name)):
    return "`control_dependencies` does not name one train op"
  train = steps.elts[0].id
  made = [d.value for d in hit.scope.defs.get(train, [])
          if isinstance(d.value, ast.Call)
          and _names.call_name(d.value) in _names.TRAIN_STEPS]
  index = _index_of(write, lines)
  if len(made) != 1 or index is None or hit.target is None:
    return "the train op or the written index is not plain here"
  spec = f"tfpartial.freeze({_edits.text(hit.target, lines)}, {index})"
  step = _edits.apply_with(made[0], spec, lines)
  if step is None:
    return "the train op is not `optimizer.minimize(...)`"
  name = _edits.text(block.body[0].targets[0], lines)
  return _edits.with_import(module.tree, [
      step, _edits.replace(block, f"{name} = {train}")])


def _index_of(write: Optional[ast.AST], lines: List[str]) -> Optional[str]:
  if not isinstance(write, ast.Call):
    return None
  if _names.call_name(write) == "scatter_update" and len(write.args) >= 3:
    return _edits.text(write.args[1], lines)
  receiver = write.func.value if isinstance(write.func, ast.Attribute) \
      else None
  if isinstance(receiver, ast.Subscript):
    return _edits.text(receiver.slice, lines)
  return None


IDIOM = ShadowVariable()
