"""Hand-made lists that name a part of a model, one question for
`_hand_made`: pairs written out in one arm that are some of the other
arm's (`_fewer_pairs`), the newest layer of a stack trained first
(`_newest_first`), variables looked up by name (`_looked_up`), a list cut
where a name test matches (`_sliced_at_name`)."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources import _fewer_pairs
from tfpartial._tools.scan.idioms._sources import _looked_up
from tfpartial._tools.scan.idioms._sources import _newest_first
from tfpartial._tools.scan.idioms._sources import _sliced_at_name


def picked(chosen: ast.AST, scope: _scopes.Scope, call: ast.Call) -> bool:
  """Whether the list `chosen` of the step `call` is one of these hand-
  made parts."""
  return _fewer_pairs.fewer_pairs(chosen, scope, call) or (
      _newest_first.newest_first(chosen, scope, call)) or (
          _looked_up.by_name(chosen, scope) or _sliced_at_name.sliced(
              chosen, scope)) is not None
