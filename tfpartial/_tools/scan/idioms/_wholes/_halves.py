"""Whether a helper's filter chooses one half of a model per call: a
function that keeps the variables whose names a parameter names
(`v.name.startswith(d_or_g)`) and trains them for the loss it is given,
called once per half with other names and another loss
(`optimizer(G_loss, 'Generator')`, `optimizer(D_loss, 'Discriminator')`):
a GAN's generator and discriminator, each trained by its own optimizer.
Between them the calls train everything, as the same two steps written
out would; a helper called for one group, or for several groups of one
loss (stages of a fine-tuning), still leaves the rest out.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# How many callers are read (a helper called from more places is a
# library's, not one script's two halves).
_CALLERS = 8


def one_per_call(analysis: Analysis, scope: _scopes.Scope,
                 loss: Optional[ast.AST], chosen: ast.AST) -> bool:
  """Whether the step of `scope` minimising `loss` (a parameter) keeps the
  variables `chosen` (a filter reading another parameter) for each call
  of its function, called with two or more names for two or more
  losses."""
  node = scope.node
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
      not isinstance(loss, ast.Name)) or loss.id not in scope.params:
    return False
  read = {n.id for n in ast.walk(chosen) if isinstance(n, ast.Name)}
  keys = [p for p in scope.params if p in read and p != loss.id]
  if len(keys) != 1:
    return False
  pairs = _arguments(analysis, scope, (loss.id, keys[0]))
  if pairs is None or len(pairs) < 2:
    return False
  losses = {each for each, _ in pairs}
  names = [name for _, name in pairs]
  return len(losses) == len(pairs) and len(set(names)) == len(names)


def _arguments(analysis: Analysis, scope: _scopes.Scope,
               params: Tuple[str, str]) -> Optional[List[Tuple[str, str]]]:
  """The text of the arguments passed for `params` at each call of the
  function of `scope`; None if a call passes them some other way."""
  node = scope.node
  shift = 1 if scope.cls is not None and scope.params[:1] == ["self"] else 0
  found: List[Tuple[str, str]] = []
  seen: Set[int] = set()
  for place, call in analysis.project.calls_named((scope.name,)):
    if id(call) in seen or analysis.flow.callee(call, place) is not node:
      continue
    seen.add(id(call))
    texts = [_argument(call, scope.params.index(p) - shift, p)
             for p in params]
    if None in texts or len(found) >= _CALLERS:
      return None
    found.append((str(texts[0]), str(texts[1])))
  return found


def _argument(call: ast.Call, index: int, name: str) -> Optional[str]:
  """What `call` passes for the parameter `name` at `index`, as text."""
  if any(isinstance(a, ast.Starred) for a in call.args) or index < 0:
    return None
  if index < len(call.args):
    return ast.unparse(call.args[index])
  value = next((k.value for k in call.keywords if k.arg == name), None)
  return None if value is None else _names.dotted(value) or ast.unparse(
      value)
