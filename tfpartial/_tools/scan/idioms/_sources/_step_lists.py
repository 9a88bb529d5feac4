"""What a list of steps holds, read once per list however many of its
steps ask: each function's steps (`by_scope`), and any other reading of
the whole list (`once_per_list`). A class of many train steps then costs
about the same per step however many there are; each step reading the
whole list for its function's few made the work quadratic."""

from __future__ import annotations

from typing import Callable, Dict, List, Sequence, TypeVar, cast

from tfpartial._tools.scan.idioms._sources._train_step import Step

Value = TypeVar("Value")
_KEPT = 4  # Lists kept per first step and reading.


def once_per_list(steps: Sequence[Step], read: Callable[[Sequence[Step]],
                                                         Value]) -> Value:
  """`read(steps)`, worked out once for this very list (kept in its first
  step's memo beside the list itself, with the last few others, so
  another list of the same steps, or one grown since, is read anew).

  >>> import ast
  >>> from tfpartial._tools.scan import _scopes
  >>> scope = _scopes.collect(ast.parse("pass"))
  >>> call = ast.parse("f()", mode="eval").body
  >>> steps = [Step(call, scope, None, None, {})]
  >>> calls = []
  >>> def count(steps):
  ...   calls.append(len(steps))
  >>> once_per_list(steps, count), once_per_list(steps, count), calls
  (None, None, [1])
  """
  if not steps:
    return read(steps)
  kept = steps[0].memo.setdefault((once_per_list, read), [])
  assert isinstance(kept, list)
  for each, size, value in kept:
    if each is steps and size == len(steps):
      return cast(Value, value)
  value = read(steps)
  # The last few lists only: the module's, and the few each step weighs.
  kept[:] = [(steps, len(steps), value)] + kept[:_KEPT - 1]
  return value


def by_scope(steps: Sequence[Step], step: Step) -> List[Step]:
  """The steps of `steps` made in `step`'s function, in their order."""
  return _by_scope(steps).get(id(step.scope), [])


def _by_scope(steps: Sequence[Step]) -> Dict[int, List[Step]]:
  return once_per_list(steps, _group)


def _group(steps: Sequence[Step]) -> Dict[int, List[Step]]:
  found: Dict[int, List[Step]] = {}
  for each in steps:
    found.setdefault(id(each.scope), []).append(each)
  return found
