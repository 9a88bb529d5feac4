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
          each.slice, scope) for each in scope.nodes)


def _every(index: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `index` is the name a `for` of the function counts over a
  `range(...)` with (`for style_i in range(len(styles))`): the loop
  takes each element in turn, not one apart."""
  return isinstance(index, ast.Name) and any(
      isinstance(each, ast.For) and isinstance(each.target, ast.Name) and (
          each.target.id == index.id) and isinstance(
              each.iter, ast.Call) and isinstance(
                  each.iter.func, ast.Name) and each.iter.func.id == "range"
      for each in scope.nodes)


def _targets(node: ast.AST) -> Set[str]:
  """The names a comprehension binds for each element."""
  return {n.id for g in getattr(node, "generators", ())
          for n in ast.walk(g.target) if isinstance(n, ast.Name)}


def _holds(part: ast.AST, call: ast.AST) -> bool:
  return any(n is call for n in ast.walk(part))
