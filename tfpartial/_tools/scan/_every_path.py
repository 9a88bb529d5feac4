"""Additions in a loop that choose nothing: an `if` whose body adds to a
list that the statements after it add to on every path anyway
(`if 'offset' in v.name: out.append((0.1 * g, v))` before `if ...:
out.append(...) else: out.append((g, v))`: every variable goes in, some
twice); a gradient rescaled in place under a name test (`if
v.name.startswith('enc/'): g *= scale`: a rate, not a choice); an entry
set once per key (`if p.name not in grads: grads[p.name] = 0;
params[p.name] = p`: each variable once, none left out); a loss's term
summed in place under a name test (`if 'bias' not in v.name: loss +=
wd * tf.nn.l2_loss(v)`: weight decay, a number, not a list). Read by
`_scopes` as it records what a loop's `if`s guard."""

from __future__ import annotations

import ast
from typing import Optional, Sequence, Set

from tfpartial._tools.scan import _names

_ADDS = {"append", "extend", "insert", "add", "update"}
# In-place arithmetic that changes a value and adds nothing to a list.
_RESCALES = (ast.Mult, ast.Div, ast.FloorDiv, ast.Pow, ast.Sub)
# Statements after which no path of their block goes on.
_STOPS = (ast.Continue, ast.Break, ast.Return, ast.Raise)
# Calls that reduce a variable to a number (a penalty), never to a list.
_NUMBERS = {"l2_loss", "reduce_sum", "reduce_mean", "norm", "global_norm"}


def added_later_in(block: Sequence[ast.stmt]) -> Set[int]:
  """The indexes of the `if`s without an `else` of `block` that add only
  to lists the statements after them add to on every path (up to a
  `continue`, `break`, `return` or `raise`): the block read once, from
  its end (asked of each `if` in turn, the rest was read again for each).

  >>> block = ast.parse("if a:\\n  x.append(1)\\nif b:\\n  y.append(2)\\n"
  ...                   "x.append(3)\\ncontinue\\ny.append(4)").body
  >>> sorted(added_later_in(block))
  [0]
  """
  bodies = {index: _added(statement.body)
            for index, statement in enumerate(block)
            if isinstance(statement, ast.If) and not statement.orelse}
  found: Set[int] = set()
  wanted = [index for index, body in bodies.items() if body]
  if not wanted:
    return found
  first = min(wanted)
  always: Set[str] = set()  # What `_always` finds after `index`.
  for index in range(len(block) - 1, first - 1, -1):
    body = bodies.get(index)
    if body and body <= always:
      found.add(index)
    if index == first:
      break  # Nothing before the first such `if` is asked for.
    statement = block[index]
    if isinstance(statement, _STOPS):
      always = set()
    else:
      always |= _always([statement])
  return found


def rescaled(node: ast.AugAssign) -> bool:
  """Whether `node` rescales a name in place (`g *= c`), which adds
  nothing to what the name holds."""
  return isinstance(node.target, ast.Name) and isinstance(node.op, _RESCALES)


def summed(node: ast.AugAssign) -> bool:
  """Whether `node` adds a number to a name in place (`loss += wd *
  tf.nn.l2_loss(v)`, `reg += tf.reduce_sum(tf.square(v)) / 2`): a term of
  a loss, not an entry of a list.

  >>> summed(ast.parse("loss += 1e-4 * tf.nn.l2_loss(v)").body[0])
  True
  >>> summed(ast.parse("var_list += tf.get_collection(k, scope)").body[0])
  False
  """
  value = node.value
  while isinstance(value, ast.BinOp) and isinstance(value.op, (
      ast.Mult, ast.Div)):
    value = value.right if isinstance(value.right, ast.Call) else value.left
  return isinstance(node.target, ast.Name) and isinstance(
      node.op, ast.Add) and isinstance(value, ast.Call) and (
          _names.call_name(value) in _NUMBERS)


def once_per_key(guard: Optional[ast.expr], target: ast.Subscript,
                 dicts: Set[str]) -> bool:
  """Whether `guard` (`key not in seen`, `seen` one of `dicts`, the
  names bound to an empty dict) only keeps `target`'s entry (`x[key] =
  ...`) from being set twice: a set per key, no choice."""
  if not isinstance(guard, ast.Compare) or len(guard.ops) != 1 or (
      not isinstance(guard.ops[0], ast.NotIn)) or not isinstance(
          guard.comparators[0], ast.Name) or (
              guard.comparators[0].id not in dicts):
    return False
  return ast.unparse(guard.left) == ast.unparse(target.slice)


def empty_dict(value: ast.expr) -> bool:
  """Whether `value` makes an empty dict (`{}`, `dict()`)."""
  return isinstance(value, ast.Dict) and not value.keys or isinstance(
      value, ast.Call) and not value.args and not value.keywords and (
          _names.call_name(value) in {"dict", "OrderedDict"})


def _always(block: Sequence[ast.stmt]) -> Set[str]:
  """The lists `block` adds to whichever way its `if`s go."""
  found: Set[str] = set()
  for statement in block:
    if isinstance(statement, ast.If):
      found |= _always(statement.body) & _always(statement.orelse)
    elif isinstance(statement, (ast.Expr, ast.AugAssign)):
      found |= _added([statement])
    elif isinstance(statement, _STOPS):
      break
  return found


def _added(block: Sequence[ast.stmt]) -> Set[str]:
  """The names of the lists `block` adds to (`x.append(v)`, `x += v`)."""
  found: Set[str] = set()
  for statement in block:
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and isinstance(
          node.func, ast.Attribute) and node.func.attr in _ADDS:
        found.add(_names.dotted(node.func.value) or "")
      elif isinstance(node, ast.AugAssign) and not rescaled(node):
        found.add(_names.dotted(node.target) or "")
  return found - {""}
