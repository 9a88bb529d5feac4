"""A step over some scopes of a loss that another step trains more of.

`first = optimizer.minimize(loss, var_list=get_collection(T, "glgcm") +
get_collection(T, "fc2"))` and `second = optimizer.minimize(loss,
var_list=get_collection(T, "fc2"))`: both differentiate the same loss, so
that loss reaches every scope the first step trains; the second keeps
fixed the scopes it leaves out of that list. Its filter names a model's
head, not a whole model trained alone beside another one.
"""

from __future__ import annotations

import ast
from typing import Iterable, Set

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import Step


def trained_wider(step: Step, steps: Iterable[Step]) -> bool:
  """Whether another step of `step`'s function minimises the same loss
  over a list whose scope names strictly contain those of `step`'s list.

  >>> import ast
  >>> module = _scopes.collect(ast.parse("pass"))
  >>> def made(names):
  ...   node = ast.parse(" + ".join(f"col({n!r})" for n in names)).body[0]
  ...   return Step(ast.Call(ast.Name("f"), [], []), module, node.value,
  ...               "loss", {})
  >>> trained_wider(made(["fc2"]), [made(["fc2"]), made(["conv", "fc2"])])
  True
  >>> trained_wider(made(["conv", "fc2"]), [made(["fc2"])])
  False
  """
  if step.loss is None or step.var_list is None:
    return False
  mine = _named(step)
  return bool(mine) and any(
      other is not step and other.scope is step.scope
      and other.loss == step.loss and other.var_list is not None
      and mine < _named(other) for other in steps)


def _named(step: Step) -> Set[str]:
  """The scope names (string constants) the step's list is made of."""
  assert step.var_list is not None
  return {n.value.strip("/") for n in _scopes.made_from(
      step.var_list, step.scope) if isinstance(n, ast.Constant)
          and isinstance(n.value, str) and n.value.strip("/")}
