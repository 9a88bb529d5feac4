"""A hit, explained: its message and its drift, in words, with the lines
of what is in scope."""

from __future__ import annotations

import ast
from typing import List, Tuple

from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _drift
from tfpartial._tools.scan import _names
from tfpartial._tools.scan._detect import Hit


def explain(hit: Hit, context: _context.Context) -> Tuple[str, str]:
  """(message, drift) for `hit`."""
  text = _EXPLAINERS[hit.idiom](hit, context)
  message, reasons = text
  if not reasons:
    reasons = ["holds only as long as nothing but the gradient moves these "
               "elements (plain SGD, finite gradients, no restore)"]
  drift = "; ".join(reasons)
  return f"{message} (see {_drift.link(hit.idiom)})", drift


def _line(node: object) -> int:
  return int(getattr(node, "lineno", 0))


def _restores(context: _context.Context) -> List[str]:
  if not context.restores:
    return []
  first = context.restores[0]
  return [f"after `{_short(first)}` (line {_line(first)}) the next step "
          "writes the stale copy back over what was restored"]


def _short(node: ast.AST) -> str:
  text = ast.unparse(node)
  return text if len(text) <= 50 else text[:47] + "..."


def _grads_mask(hit: Hit, context: _context.Context) -> Tuple[str, List[str]]:
  node = hit.node
  by_where = isinstance(node, ast.Call)
  how = (f"`{_names.call_name(node)}`" if isinstance(node, ast.Call)
         else "a mask")
  sink = _names.call_name(hit.sink) if isinstance(hit.sink, ast.Call) else ""
  message = (f"gradients zeroed by {how} before `{sink}`"
             f" (line {_line(hit.sink)})")
  nan = not by_where
  return message, _drift.optimizer_drift(context.optimizer, nan)


def _mix(hit: Hit, context: _context.Context) -> Tuple[str, List[str]]:
  helper = hit.detail.get("helper")
  message = ("a variable mixed with its `tf.stop_gradient` copy under a mask"
             + (f", by the helper `{helper}`" if helper else ""))
  reasons = _drift.optimizer_drift(context.optimizer, nan=True)
  if context.regularizers:
    first = context.regularizers[0]
    reasons.append(f"the regularizer `{_short(first)}` (line {_line(first)}) "
                   "reads the variable itself, not the mix, so its gradient "
                   "reaches the frozen elements")
  return message, reasons


def _shadow(hit: Hit, context: _context.Context) -> Tuple[str, List[str]]:
  target = ast.unparse(hit.detail["target"])  # type: ignore[arg-type]
  message = (f"`{target}` gets its copy written back by "
             f"`{_names.call_name(hit.sink)}` after the train step "  # type: ignore[arg-type]
             f"(line {_line(hit.detail.get('at'))})")
  reasons = _restores(context) or [
      "the copy is taken once: a checkpoint restore, a pretrained load or "
      "an `assign` between steps is undone by the next step"]
  return message, reasons


def _write_back(hit: Hit, context: _context.Context) -> Tuple[str, List[str]]:
  target = ast.unparse(hit.detail["target"])  # type: ignore[arg-type]
  order = hit.detail.get("order")
  at = hit.detail.get("at")
  name = _names.call_name(hit.sink)  # type: ignore[arg-type]
  message = f"saved values written into `{target}` by `{name}`"
  reasons = []
  if order == "fetch":
    message += f", fetched beside the train op (line {_line(at)})"
    reasons.append(f"the {name} and the train op are fetched in one "
                   f"`{_names.call_name(at)}` (line {_line(at)}) with no order "  # type: ignore[arg-type]
                   "between them: a race, the update may land after the "
                   "write")
  else:
    message += f", after the train step (line {_line(at)})"
    reasons.append("between the step and the write the optimizer's values "
                   "are in the variable (a checkpoint saved then, another "
                   "reader, sees them)")
  reasons += _restores(context)
  return message, reasons


def _var_list(hit: Hit, context: _context.Context) -> Tuple[str, List[str]]:
  message = (f"`var_list` filtered by name or scope for "
             f"`{_names.call_name(hit.sink)}` (line {_line(hit.sink)}): "  # type: ignore[arg-type]
             "whole variables only; exact as it is, not a drift; a "
             "candidate for a spec file")
  reasons = []
  for keyword in getattr(hit.sink, "keywords", []):
    if keyword.arg == "decay_var_list":
      reasons.append("`decay_var_list` decays variables the filter leaves "
                     "out")
  if not reasons:
    reasons = ["none: the variables left out get no update and no "
               "optimizer slots"]
  return message, reasons


def _remask(hit: Hit, context: _context.Context) -> Tuple[str, List[str]]:
  where = hit.detail.get("constraint")
  if where:
    message = (f"weights re-multiplied by a mask in the constraint "
               f"`{where}`")
    reasons = ["a Keras constraint runs after every update, so the masked "
               "weights are zero after each step; the optimizer still "
               "keeps state for them and computes their update"]
  else:
    message = (f"weights re-multiplied by a mask and written back by "
               f"`{_names.call_name(hit.sink)}`")  # type: ignore[arg-type]
    reasons = ["between two re-maskings the optimizer moves the masked "
               "weights, and the model trains with them non-zero"]
    reasons += _drift.optimizer_drift(context.optimizer, nan=False)
  return message, reasons


_EXPLAINERS = {
    "grads-mask": _grads_mask,
    "stop-gradient-mix": _mix,
    "shadow-variable": _shadow,
    "write-back": _write_back,
    "var-list-filter": _var_list,
    "weight-remask": _remask,
}
