"""Whether a write into a model comes before any step has trained it:
the writing function makes the model itself (`dgp = Model(inp, out)`;
`layer = dgp.get_layer("skip")`), its kernels' chosen lags zeroed and
set, whatever step its caller ran before the call (a simulation's
data-generating model, made anew on each call): an initialisation, not
saved values put back. A model handed in, or kept on `self`, may have
been trained by the caller's step. Part of `write-back`."""

from __future__ import annotations

import ast
from typing import Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._copies._recomputed import base_name

# How many assignments back a written layer is followed to its model.
_HOPS = 4


def made_here(call: ast.Call, target: ast.AST, scope: _scopes.Scope
              ) -> bool:
  """Whether the model `target` belongs to is made in `scope` before
  `call` (`dgp = Model(inp, out)`; `layer = dgp.get_layer("skip")`), by
  one assignment each: no step of the caller has trained it yet."""
  modules = _scopes.imported_names(scope)
  name: Optional[str] = base_name(target)
  for _ in range(_HOPS):
    defs = scope.defs.get(name or "", [])
    if name in scope.params or len(defs) != 1 or not isinstance(
        defs[0].value, ast.Call) or defs[0].start >= _idiom.position(call):
      return False
    made = defs[0].value
    assert isinstance(made, ast.Call)
    if not isinstance(made.func, ast.Attribute) or base_name(
        made.func) in modules:
      return True  # `Model(...)`, `ks.models.Model(...)`, `build()`.
    name = base_name(made.func.value)
  return False
