"""A list a function reads but never assigns: the value the scope around
it gives the name (`train_vars = [v for v in ... if 'fc' in v.name]` at
the top of a script, read by a `@tf.function def train_step` that runs
`tape.gradient(loss, train_vars)`). Python reads such a name from the
nearest enclosing function or the module; so does the search for where
the variables were chosen."""

from __future__ import annotations

import ast
from typing import List, Tuple

from tfpartial._tools.scan import _scopes


def outer_values(name: ast.Name, scope: _scopes.Scope
                 ) -> List[Tuple[ast.expr, _scopes.Scope]]:
  """The values the nearest scope around `scope` that binds `name`
  assigns it, the last first; none when `scope` binds it itself or the
  nearest binding is a parameter (whatever a caller passes)."""
  if name.id in scope.defs or name.id in scope.params:
    return []
  place = scope.parent
  while place is not None:
    if name.id in place.params:
      return []
    defs = place.defs.get(name.id)
    if defs:
      return [(each.value, place) for each in reversed(defs)]
    place = place.parent
  return []
