"""Whether a step over a whole scope is a later stage, not one of two
halves: its loss reads, through the forward graph of its function, an
upstream scope (one the kept scopes' layers are computed from) that
every step able to train it trains only in loops that end before the
first loop running this step, and whose own loss reads nothing this
step trains (tensor_holography: the main CNN trained in one loop, then
a `ddpm` net appended to its output trained alone in the next).

Read from one function's statements in order: names made inside a
`with tf.variable_scope('<literal>')` belong to that scope; what each
name is computed from is followed, never below `tf.stop_gradient`; a
scope is built on what its block's layers read (not on a label or a
target the block derives without a layer).
Silent where the read scope is trained in the step's own loop or a
later one (an online probe, a joint stage), where the other step's
loss reads the step's scopes (a GAN's mutual halves), where a read
scope is only downstream (a loss network, a discriminator), and where
a step elsewhere in the project may train it. Part of
`var-list-filter`.
"""

from __future__ import annotations

import ast
from typing import (
    Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Set, Tuple)

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._runs import _sequential
from tfpartial._tools.scan.idioms._sources._train_step import STEPS, Step
from tfpartial._tools.scan.idioms._wholes import _scopes_untrained

Reach = Dict[str, FrozenSet[str]]
# Searches bounded: a module's list of more steps than this is not
# ordered against a step (each step of it would order every other).
_STEPS = 24
# Kept roots of a step's list; None where it may train any scope.
Kept = Optional[FrozenSet[str]]


class Reading(NamedTuple):
  """What one function's names are computed from (`reach`)."""

  names: Reach  # The scopes each name is computed from.
  under: Reach  # The scopes each scope's own names are computed from.
  fixed: FrozenSet[str]  # Scopes with a layer made `trainable=` not True.


def reach(scope: _scopes.Scope) -> Reading:
  """The scopes each name of a function is computed from, in order, and
  those the layers each scope's block makes are computed from, itself
  aside (`_scopes_untrained.builds_layers`: a call making a layer).

  >>> code = ("with tf.variable_scope('a'):\\n"
  ...         "  h = tf.layers.dense(x, 4)\\n  y = h * 2\\n"
  ...         "with tf.variable_scope('b'):\\n"
  ...         "  d = tf.layers.dense(h, 2)\\n  t = tf.argmax(y)\\n"
  ...         "loss = f(d, t) + g(tf.stop_gradient(e))\\n")
  >>> found = reach(_scopes.collect(ast.parse(code)))
  >>> sorted(found.names["loss"]), sorted(found.under["b"]), found.fixed
  (['a', 'b'], ['a'], frozenset())
  >>> sorted(found.names["t"]), sorted(found.under["a"])
  (['a', 'b'], [])
  """
  names: Reach = {}
  under: Reach = {}
  fixed: Set[str] = set()
  body = getattr(scope.node, "body", [])
  for target, value, root in _assigned(
      body if isinstance(body, list) else [], None):
    read = frozenset().union(*(names.get(n, frozenset())
                               for n in _reads(value)))
    names[target] = read | ({root} if root else frozenset())
    if root and _scopes_untrained.builds_layers([ast.Expr(value)], scope):
      # A layer made in the block computes from what it reads; a label
      # or a target the block derives (`tf.argmax(x_hat)`) does not.
      under[root] = under.get(root, frozenset()) | (read - {root})
      if _untrainable(value):
        fixed.add(root)
  return Reading(names, under, frozenset(fixed))


def _untrainable(value: ast.expr) -> bool:
  """Whether a call in `value` is given `trainable=` other than the
  constant True (a part frozen whole, or by a value not read)."""
  return any(isinstance(n, ast.Call) and any(
      k.arg == "trainable" and not (
          isinstance(k.value, ast.Constant) and k.value.value is True)
      for k in n.keywords) for n in ast.walk(value))


def _assigned(body: List[ast.stmt], root: Optional[str]
              ) -> Iterator[Tuple[str, ast.expr, Optional[str]]]:
  """(name, value, scope) of each plain assignment, in source order,
  with the literal root scope opened around it (None outside)."""
  for node in body:
    if isinstance(node, _names.DEFINITIONS):
      continue
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)):
      yield node.targets[0].id, node.value, root
    inner = _opened(node) if isinstance(node, ast.With) else None
    for field in ("body", "orelse", "finalbody"):
      yield from _assigned(getattr(node, field, []) or [], inner or root)


def _opened(node: ast.With) -> Optional[str]:
  """The root of a literal scope a `with` opens (`'ddpm'`), or None."""
  for item in node.items:
    call = item.context_expr
    if isinstance(call, ast.Call) and _names.call_name(call) in (
        _names.TF_SCOPES) and call.args and isinstance(
            call.args[0], ast.Constant) and isinstance(
                call.args[0].value, str) and call.args[0].value:
      return call.args[0].value.strip("/").split("/")[0]
  return None


def _reads(node: ast.AST) -> Set[str]:
  """The names an expression reads, none below `tf.stop_gradient`."""
  found: Set[str] = set()
  stack = [node]
  while stack:
    each = stack.pop()
    if isinstance(each, ast.Call) and _names.call_name(each) == (
        "stop_gradient"):
      continue
    if isinstance(each, ast.Name):
      found.add(each.id)
    stack.extend(ast.iter_child_nodes(each))
  return found


def _loss_reach(step: Step, names: Reach) -> Optional[FrozenSet[str]]:
  """The scopes a step's loss is computed from, None if not known."""
  text = step.loss or ""
  local = f"{id(step.scope)}:"  # A local name's loss, keyed by function.
  try:
    parsed = ast.parse(text[len(local):] if text.startswith(local) else (
        text), mode="eval")
  except SyntaxError:
    return None
  read = _reads(parsed)
  if not read or not read <= set(names):
    return None
  return frozenset().union(*(names[n] for n in read))


def _upstream(kept: FrozenSet[str], under: Reach) -> FrozenSet[str]:
  """The scopes the kept scopes' own names are computed from."""
  return frozenset().union(*(under.get(k, frozenset()) for k in kept)
                           ) - kept


def later_stage(analysis: Analysis, step: Step, steps: List[Step]
                ) -> bool:
  """Whether the step is a later stage on scopes that earlier loops
  alone train (see the module)."""
  kept = _kept(step) if len(steps) <= _STEPS else None
  if not kept:
    return False
  found = analysis.once(f"stage reach {id(step.scope)}",
                        lambda: reach(step.scope))
  assert isinstance(found, Reading)
  names = found.names
  read = _loss_reach(step, names)
  left = (read - kept) & _upstream(kept, found.under) if read else (
      frozenset())
  if not left or left & found.fixed:
    return False  # Nothing upstream read, or a part frozen whole.
  order = analysis.once("stage order", _sequential.Order)
  assert isinstance(order, _sequential.Order)
  earlier = 0
  for other in steps:
    if other is step or not _may_train(other, left):
      continue
    theirs = _loss_reach(other, names) if (
        other.scope is step.scope) else None
    if theirs is None or theirs & kept or not _sequential.before(
        (other.call, other.scope), (step.call, step.scope), order):
      return False  # Unordered, or mutual halves.
    earlier += 1
  return earlier > 0 and not _trained_elsewhere(analysis, step)


def _may_train(step: Step, roots: FrozenSet[str]) -> bool:
  """Whether a step may train a scope of `roots`: it trains every
  variable, or a list whose kept roots are not read, or meets them."""
  kept = _kept(step)
  return kept is None or bool(kept & roots)


def _kept(step: Step) -> Kept:
  """The literal root scopes a step's filter keeps, None if not read."""
  if step.var_list is None:
    return None
  node = step.labels.get("filtered")
  if not isinstance(node, ast.AST) or any(
      isinstance(n, (ast.NotIn, ast.Not)) for n in _scopes.walk(node)):
    return None  # A list kept by leaving names out keeps the rest.
  found = frozenset(
      n.value.strip("/").split("/")[0] for n in _scopes.walk(node)
      if isinstance(n, ast.Constant) and isinstance(n.value, str)
      and n.value)
  return found or None


def _trained_elsewhere(analysis: Analysis, step: Step) -> bool:
  """Whether another module of the project has a step: it may train the
  scopes read, in a run the scan cannot order against this one."""
  module = analysis.module(step.scope)
  others = analysis.once("stage others", lambda: [
      (analysis.module(place), call)
      for place, call in analysis.calls_named(STEPS)])
  assert isinstance(others, list)
  return any(home is not module for home, _ in others)
