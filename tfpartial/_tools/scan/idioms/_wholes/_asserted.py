"""Whether the code asserts that a filtered list holds every variable:
`g_vars = [v for v in t_vars if v.name.startswith('g_')]`, then `for x
in t_vars: assert x in g_vars, x.name`, or that it is as long as the
list it filters (`assert len(m.trainable_weights) - len(kept) == 0`).
The filter names the whole model, and its author checks that it does:
nothing is left out. Part of `var-list-filter`."""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes


def every_kept(node: ast.AST, home: Optional[_scopes.Scope]) -> bool:
  """Whether `home` binds `node` (a filter) to a name or attribute and
  asserts that it leaves nothing out: in a loop, that each item of the
  loop is in it, or that it is as long as the list it filters."""
  if home is None:
    return False
  facts = home.once((every_kept, None, 0), lambda: _read_facts(home))
  bound = facts.bound.get(id(node))
  if not bound:
    return False
  return any(_none_left_out(each.test, bound, node)
             for each in facts.asserts) or any(
                 _inside(each.test, item, bound)
                 for item, each in facts.looped)


@dataclasses.dataclass
class _Facts:
  """What a scope binds and asserts, read once per scope."""

  bound: Dict[int, Set[str]]  # The id of an assigned value -> its names.
  asserts: List[ast.Assert]
  looped: List[Tuple[str, ast.Assert]]  # A loop's item, an assert of it.


def _read_facts(home: _scopes.Scope) -> _Facts:
  facts = _Facts({}, [], [])
  for statement in home.nodes:
    if isinstance(statement, ast.Assign):
      names = {_names.dotted(t) or "" for t in statement.targets} - {""}
      if names:
        facts.bound.setdefault(id(statement.value), set()).update(names)
    elif isinstance(statement, ast.Assert):
      facts.asserts.append(statement)
    elif isinstance(statement, ast.For) and isinstance(
        statement.target, ast.Name):
      facts.looped += [(statement.target.id, each) for each in statement.body
                       if isinstance(each, ast.Assert)]
  return facts


def _inside(test: ast.expr, item: str, bound: Set[str]) -> bool:
  """Whether `test` is `item in X` for X one of `bound`."""
  return isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], ast.In)) and isinstance(
          test.left, ast.Name) and test.left.id == item and (
              _names.dotted(test.comparators[0]) in bound)


def _none_left_out(test: ast.expr, bound: Set[str], node: ast.AST) -> bool:
  """Whether `test` is `len(a) - len(X) == 0` (either way round) or
  `len(X) == len(a)` (either way round), X one of `bound` and `a` the
  list the comprehension `node` filters, spelled the same.

  >>> kept = ast.parse("[v for v in ws if f(v)]", mode="eval").body
  >>> test = ast.parse("len(ws) - len(kept) == 0").body[0].value
  >>> _none_left_out(test, {"kept"}, kept), _none_left_out(test, {"o"}, kept)
  (True, False)
  >>> test = ast.parse("len(kept) == len(layer.ws)").body[0].value
  >>> _none_left_out(test, {"kept"}, kept)
  False
  >>> rebound = ast.parse("[v for v in kept if f(v)]", mode="eval").body
  >>> test = ast.parse("len(kept) == len(kept)").body[0].value
  >>> _none_left_out(test, {"kept"}, rebound)
  False
  """
  if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and (
      isinstance(test.ops[0], ast.Eq))) or not isinstance(
          node, _COMPREHENSIONS) or not node.generators:
    return False
  left, right = test.left, test.comparators[0]
  difference = left
  if isinstance(right, ast.Constant) and right.value == 0 and isinstance(
      difference, ast.BinOp) and isinstance(difference.op, ast.Sub):
    left, right = difference.left, difference.right
  one, other = _length_of(left), _length_of(right)
  if one is None or other is None or ast.dump(one) == ast.dump(other):
    return False  # `len(kept) == len(kept)` holds of any list.
  filtered = ast.dump(node.generators[0].iter)
  return any(_names.dotted(kept) in bound and ast.dump(whole) == filtered
             for kept, whole in ((one, other), (other, one)))


# The comprehensions a filter is written as.
_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp)


def _length_of(node: ast.expr) -> Optional[ast.expr]:
  """`X` of `len(X)`."""
  if isinstance(node, ast.Call) and _names.call_name(node) == "len" and (
      len(node.args) == 1):
    return node.args[0]
  return None
