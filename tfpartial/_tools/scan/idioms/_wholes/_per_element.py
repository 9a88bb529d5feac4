"""Whether a step is one arm of a choice made per element of a
comprehension, by the element's own index or item alone
(`[opt.minimize(loss, var_list=scale_offset) if i != 0 else
opt.minimize(loss) for i, loss in enumerate(losses)]`), whose other arm
trains every variable on a loss written the same (the element's own):
every element's step is built and run, the first trains the whole
model, so the filter leaves nothing out of training (a multi-style
network whose later styles adapt only their norms). A flag choosing
between the two (one step built, or a flag in the test), or a list of
the steps run by a fixed element or slice (`sess.run(ops[1:])`), is
not this.
Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _scopes

_COMPREHENSIONS = (ast.ListComp, ast.GeneratorExp, ast.SetComp,
                   ast.DictComp)
# Another step of the same function and loss: its call and list.
Other = Tuple[ast.Call, Optional[ast.AST]]


def beside_whole(call: ast.Call, scope: _scopes.Scope,
                 others: List[Other]) -> bool:
  """Whether `call` lies in one arm of a conditional expression of a
  comprehension whose test reads only the comprehension's own targets
  and literals (no flag decides it), and one of `others` (steps whose
  loss is written as the same text, here the element's own loss) lies in
  the other arm, training every variable (no list); and the list the
  comprehension makes is not subscripted in the function but by a loop's
  counter over a `range` (the steps run together or in turn, not one
  element's apart)."""
  whole = [other for other, var_list in others if var_list is None]
  if not whole:
    return False
  for node in scope.nodes:
    if not isinstance(node, _COMPREHENSIONS):
      continue
    own = _targets(node)
    if _picked_apart(node, scope):
      continue
    for choice in ast.walk(node):
      if not isinstance(choice, ast.IfExp):
        continue
      read = {n.id for n in ast.walk(choice.test)
              if isinstance(n, ast.Name)}
      if not read or not read <= own:
        continue
      for mine, theirs in ((choice.body, choice.orelse),
                           (choice.orelse, choice.body)):
        if _holds(mine, call) and any(_holds(theirs, o) for o in whole):
          return True
  return False


def _picked_apart(node: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether the list the comprehension `node` makes is bound to a name
  that the function subscripts (`sess.run(ops[0])`, `ops[1:]`): some
  elements' steps may then run apart from the others, or never."""
  bound = {t.id for each in scope.nodes if isinstance(each, ast.Assign)
           and each.value is node for t in each.targets
           if isinstance(t, ast.Name)}
  return any(isinstance(each, ast.Subscript) and isinstance(
      each.value, ast.Name) and each.value.id in bound and not _every(
          each, scope) for each in scope.nodes)


def _every(subscript: ast.Subscript, scope: _scopes.Scope) -> bool:
  """Whether `subscript`'s index is the name a `for` of the function
  counts with over `range(n)` or `range(0, n)` (`for style_i in
  range(len(styles))`), the subscript inside that loop: the loop takes
  each element in turn, not one apart (`range(1, n)` skips the first; a
  subscript after the loop takes its last)."""
  index = subscript.slice
  return isinstance(index, ast.Name) and any(
      isinstance(each, ast.For) and isinstance(each.target, ast.Name) and (
          each.target.id == index.id) and _from_zero(each.iter) and any(
              n is subscript for s in each.body for n in ast.walk(s))
      for each in scope.nodes)


def _from_zero(counted: ast.expr) -> bool:
  """Whether `counted` is `range(n)` or `range(0, n)`: every index from
  the first, one at a time."""
  if not isinstance(counted, ast.Call) or not isinstance(
      counted.func, ast.Name) or counted.func.id != "range" or (
          counted.keywords):
    return False
  first = counted.args[0] if len(counted.args) == 2 else None
  return len(counted.args) == 1 or isinstance(
      first, ast.Constant) and first.value == 0 and not isinstance(
          first.value, bool)


def _targets(node: ast.AST) -> Set[str]:
  """The names a comprehension binds for each element."""
  return {n.id for g in getattr(node, "generators", ())
          for n in ast.walk(g.target) if isinstance(n, ast.Name)}


def _holds(part: ast.AST, call: ast.AST) -> bool:
  return any(n is call for n in ast.walk(part))
