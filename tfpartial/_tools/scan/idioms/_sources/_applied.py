"""An apply of gradients that a filtered step of its function computed
(`grads = opt.compute_gradients(loss, var_list=kept)`, clipped or
averaged, then `opt.apply_gradients(grads)`): the same training as that
step, not a second filter beside it, whatever the apply's pairs were
rebuilt through (`[(t_list[i], grads[i][1]) for i in ...]`)."""

from __future__ import annotations

import ast
from typing import Sequence

from tfpartial._tools.scan import _names
from tfpartial._tools.scan.idioms._sources._train_step import Step


def of_filtered(step: Step, steps: Sequence[Step]) -> bool:
  """Whether `step` applies the gradients of a filtered step of its own
  function."""
  if _names.call_name(step.call) != "apply_gradients":
    return False
  source = step.labels.get("grad")
  return isinstance(source, ast.Call) and any(
      other is not step and other.call is source and (
          other.scope is step.scope) and "filtered" in other.labels
      for other in steps)
