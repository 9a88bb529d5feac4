"""Whether a step is one arm of a choice made per element of a
comprehension, by the element's own index or item (`[opt.minimize(
loss, var_list=scale_offset) if i != 0 else opt.minimize(loss) for i,
loss in enumerate(losses)]`), whose other arm trains every variable on
the same loss: every element's step is built and run, the first trains
the whole model, so the filter leaves nothing out of training (a
multi-style network whose later styles adapt only their norms). A flag
choosing between the two (one step built) is not this. Part of
`var-list-filter`."""

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
  comprehension whose test reads the comprehension's own targets, and
  one of `others` (steps of the same loss) lies in the other arm,
  training every variable (no list)."""
  whole = [other for other, var_list in others if var_list is None]
  if not whole:
    return False
  for node in scope.nodes:
    if not isinstance(node, _COMPREHENSIONS):
      continue
    own = _targets(node)
    for choice in ast.walk(node):
      if not isinstance(choice, ast.IfExp) or not own & {
          n.id for n in ast.walk(choice.test) if isinstance(n, ast.Name)}:
        continue
      for mine, theirs in ((choice.body, choice.orelse),
                           (choice.orelse, choice.body)):
        if _holds(mine, call) and any(_holds(theirs, o) for o in whole):
          return True
  return False


def _targets(node: ast.AST) -> Set[str]:
  """The names a comprehension binds for each element."""
  return {n.id for g in getattr(node, "generators", ())
          for n in ast.walk(g.target) if isinstance(n, ast.Name)}


def _holds(part: ast.AST, call: ast.AST) -> bool:
  return any(n is call for n in ast.walk(part))
