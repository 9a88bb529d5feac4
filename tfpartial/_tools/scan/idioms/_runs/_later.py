"""Whether a written variable is one no train step of its graph holds:
made after every step its scope builds once (`tf.train.AdamOptimizer().
minimize(loss)`). A graph's step takes its variables when it is built
(`tf.trainable_variables()` then, or the list it is given then), so a
variable made later is trained by none of them. A beam search's saved
output and state, made in the notebook cell after the optimizer and set
back to zeros before each generated text, is such a variable: its writes
freeze no weight. A step built in a loop (an eager loop's `minimize`
each round) is there again after the variable is made: not counted.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom

_BUILT_ONCE = frozenset({"minimize", "compute_gradients", "apply_gradients"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def made_after_steps(scope: _scopes.Scope, target: ast.AST) -> bool:
  """Whether `target` (`state`, `state[i]`) is a variable its scope makes
  (`tf.Variable(...)`, or a list of them) only after every step it
  builds, none of them built in a loop."""
  name = _names.root(target)
  defs = scope.defs.get(name, [])
  if not defs or not all(_made_variable(d.value) for d in defs):
    return False
  last = _last_step(scope)
  return last is not None and last < min(d.start for d in defs)


def _last_step(scope: _scopes.Scope) -> Optional[Tuple[int, int]]:
  """Where the last step `scope` builds is, when it builds one and none
  in a loop; worked out once per function (a body writes many)."""
  def find() -> List[Tuple[int, int]]:
    steps = [node for node in scope.nodes if isinstance(node, ast.Call)
             and _names.call_name(node) in _BUILT_ONCE]
    if not steps or _any_in_loop(scope, steps):
      return []
    return [max(_idiom.position(step) for step in steps)]
  last = scope.once((_last_step, 0, 0), find)
  return last[0] if last else None


def _made_variable(value: ast.expr) -> bool:
  """`tf.Variable(...)` or a list (comprehension) of them, or of such
  lists."""
  if isinstance(value, ast.ListComp):
    return _made_variable(value.elt)
  if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
    return all(_made_variable(element) for element in value.elts)
  return isinstance(value, ast.Call) and _names.call_name(value) == "Variable"


def _any_in_loop(scope: _scopes.Scope, steps: List[ast.Call]) -> bool:
  inside: Set[int] = set()
  for node in scope.nodes:
    if isinstance(node, _LOOPS):
      inside.update(id(child) for child in ast.walk(node))
  return any(id(step) in inside for step in steps)
