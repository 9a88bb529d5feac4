"""`write-back`: saved values (`x.numpy()`, `session.run(x)`, a constant)
written back into the variable after the train step, or fetched beside
it."""

from __future__ import annotations

import ast
from typing import List, Sequence, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _names
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies import _writes


class WriteBack(_idiom.Idiom):
  """Saved values written into a variable after or beside the step."""

  id = "write-back"
  order = 4
  entry = _idiom.Entry(
      "saved values written into the variable after (or beside) the "
      "train step", "saved-values-written-back-after-the-step",
      "`tfpartial.freeze(x, index)` on the train step; drop the write")
  by_hand = ("the saved values come from outside the step: say which "
             "elements they keep in a `tfpartial.freeze` and drop the write")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    return [h for h in _writes.writes(analysis) if h.kind == self.id]

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    assert isinstance(hit, _writes.WriteHit)
    target, name = hit.written(), hit.writer()
    when, reasons = timing(hit, name)
    message = f"saved values written into `{target}` by `{name}`{when}"
    return message, reasons + _idiom.restores(context)


def timing(hit: _writes.WriteHit, name: str) -> Tuple[str, List[str]]:
  """When a write runs, said after its message (", after the train step
  (line 12)"), and the window it leaves open."""
  at = hit.at
  if hit.order == "fetch" and at is not None:
    spelled = _names.call_name(at) if isinstance(at, ast.Call) else "run"
    return (f", fetched beside the train op (line {_idiom.line(at)})", [
        f"the {name} and the train op are fetched in one `{spelled}` "
        f"(line {_idiom.line(at)}) with no order between them: a race, "
        "the update may land after the write"])
  if isinstance(at, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return f", after each step (in `{at.name}`, line {_idiom.line(at)})", []
  if at is None or not _idiom.line(at):
    return ", while the model trains", []
  return f", after the train step (line {_idiom.line(at)})", [
      "between the step and the write the optimizer's values are in the "
      "variable (a checkpoint saved then, another reader, sees them)"]


IDIOM = WriteBack()
