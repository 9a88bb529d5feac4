"""Gradients handed to an optimizer outside TensorFlow: the callback given
to `scipy.optimize.minimize(fun, x0, jac=True)` (it returns the value and
the gradient) or as `jac=grad_fn`, and `iminuit.Minuit(fcn, x0,
grad=grad_fn)`. A callback returning a gradient whose elements it zeroed
(`grad = grad.numpy(); grad[idx] = 0`) keeps those parameters where they
are: a gradient mask whose apply is that optimizer's step. A callback
that returns the gradient as computed freezes nothing."""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels, union

# The optimizers outside TensorFlow that take a gradient callback.
_CALLS = ("minimize", "Minuit")


def masked(analysis: Analysis
           ) -> List[Tuple[Labels, _scopes.Scope, ast.Call]]:
  """(the labels of what a callback returns, the scope, the optimizer's
  call) of each gradient callback returning a masked gradient."""
  found: List[Tuple[Labels, _scopes.Scope, ast.Call]] = []
  for scope, call in analysis.calls_named(_CALLS):
    callback = _callback(call)
    labels = _returned(analysis, callback, scope) if callback else {}
    if "masked" in labels and "grad" in labels:
      found.append((labels, scope, call))
  return found


def _callback(call: ast.Call) -> Optional[ast.expr]:
  """The function whose gradient the optimizer steps with, if any:
  Minuit's `grad=`, scipy's `jac=` function, or its objective under
  `jac=True`."""
  given = {k.arg: k.value for k in call.keywords}
  if _names.call_name(call) == "Minuit":
    return given.get("grad")
  jac = given.get("jac")
  if isinstance(jac, ast.Constant):
    return (call.args[0] if call.args else given.get("fun")) if (
        jac.value is True) else None
  return jac


def _returned(analysis: Analysis, callback: ast.expr, scope: _scopes.Scope
              ) -> Labels:
  """What a function of the project given by name returns."""
  flow = analysis.flow
  known = flow.functions.get(id(flow.labels(callback, scope).get("fn")))
  inner = known[1].scope_of(known[0]) if known is not None else None
  if inner is None:
    return {}
  return union([flow.labels(n.value, inner) for n in inner.nodes
                if isinstance(n, ast.Return) and n.value is not None])
