"""Whether a write after the step puts back nothing saved before it:
every value it writes is read out after the step, in the same pass, or
made from such reads and settings. LassoNet's hier-prox (`theta, W =
hier_prox(skip.get_weights()[0], gw.get_weights()[0], lam, M)` written
into the kernels), a bias kept at zero (`Q, b = model.get_weights();
model.set_weights([Q, np.zeros_like(b)])`), a server's model set to the
mean of its clients' weights: every weight is recomputed from the
weights as they are now (a proximal, projection or averaging step), or
a whole variable reset. A write-back puts values saved before the step
(`frozen = layer.get_weights()` ahead of the loop, a copy taken ahead of
each step, a `self.` snapshot) into some elements.

A model the writing function makes itself (`dgp = Model(inp, out)`,
its kernels' chosen lags zeroed and set) is written before any step has
trained it, whatever step its caller ran before the call: an
initialisation. Part of `write-back`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan._labels import Labels
from tfpartial._tools.scan.idioms import _idiom

# Reads of a variable's values as they are when the read runs.
_READS = _names.SNAPSHOTS | {"get_value", "batch_get_value"}
# Labels of values kept from another time: a copy, a restore, a shadow.
_KEPT = ("copy:", "restore:", "shadow")
# Labels of elements chosen (a mask, a re-mask, elements drawn anew).
_CHOOSING = ("mask", "varmask:", "random")
# Calls that choose, element by element, between two values.
_CHOICES = {"where", "where_v2", "select", "select_v2", "putmask", "place",
            "copyto", "choose"}
# How many assignments back a written layer is followed to its model.
_HOPS = 4


def nothing_saved(call: ast.Call, scope: _scopes.Scope, analysis: Analysis,
                  found: Labels, value: ast.expr, step: object) -> bool:
  """Whether `value`, written by `call` after `step` (a call of the same
  function), holds only values read after `step`, numbers and settings,
  stored into whole entries of the lists it writes, with no elements
  chosen by a mask: nothing saved before the step comes back."""
  if not isinstance(step, ast.AST) or any(
      k.startswith(_CHOOSING) for k in found) or not any(
          n is step for n in scope.nodes):
    return False
  after = (getattr(step, "end_lineno", 0) or 0,
           getattr(step, "end_col_offset", 0) or 0)
  window = (after, _idiom.position(call))
  return _fresh(value, scope, analysis, window)


def _fresh(value: ast.expr, scope: _scopes.Scope, analysis: Analysis,
           window: tuple) -> bool:
  """Whether every value `value` reads is read inside `window` (after
  the step, before the write) or holds no variable's values."""
  flow = analysis.flow
  modules = _scopes.imported_names(scope)
  seen: Set[int] = set()
  stack: List[ast.AST] = [value]
  while stack:
    node = stack.pop()
    if isinstance(node, ast.Call):
      if _names.call_name(node) in _CHOICES:
        return False  # Chosen elements set apart: a partial write.
      if _names.call_name(node) in _READS:
        if any(k.startswith(("restore:", "shadow"))
               for k in flow.labels(node, scope)):
          return False  # A shadow variable's values: saved.
        continue  # The weights as they are after the step.
      stack.extend(node.args)
      stack.extend(k.value for k in node.keywords)
      if isinstance(node.func, ast.Attribute) and _base(
          node.func) not in modules:
        stack.append(node.func.value)  # `saved.copy()`: what it reads.
    elif isinstance(node, ast.Name):
      if node.id in modules or id(node) in seen:
        continue
      seen.add(id(node))
      defs = scope.defs.get(node.id)
      if not defs:
        if _kept(flow.labels(node, scope)):
          return False  # A parameter or a global holding saved values.
        continue
      for index in scope.reaching(node.id, node):
        bound = defs[index]
        if window[0] < bound.start < window[1]:
          if not bound.replaces and not _whole_entry(
              node.id, bound, scope):
            return False  # Chosen elements stored: a partial write.
          stack.append(bound.value)
        elif _holds_values(bound.value, scope, analysis):
          return False  # Read before the step (or the pass before).
    elif isinstance(node, ast.Attribute):
      if _base(node) not in modules and _kept(flow.labels(node, scope)):
        return False  # `self.frozen`: a snapshot kept on the object.
    elif isinstance(node, ast.Lambda):
      continue
    else:
      stack.extend(ast.iter_child_nodes(node))
  return True


def _kept(labels: Labels) -> bool:
  return any(k.startswith(_KEPT) for k in labels)


def _holds_values(value: ast.expr, scope: _scopes.Scope,
                  analysis: Analysis) -> bool:
  """Whether an assignment outside the window holds a variable's values
  (a read of them, or a copy the flow follows)."""
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _READS
             for n in ast.walk(value)) or _kept(
                 analysis.flow.labels(value, scope))


def _whole_entry(name: str, bound: _scopes.Def, scope: _scopes.Scope
                 ) -> bool:
  """Whether a store into `name` (`weights[0] = theta`) replaces a whole
  entry of a list of weights (`weights = layer.get_weights()`, a list
  built by appending) rather than chosen elements of an array."""
  statement = next((n for n in scope.nodes if id(n) == bound.statement),
                   None)
  if isinstance(statement, ast.Expr):
    return True  # `updates.append(w)`: an entry added.
  if not isinstance(statement, ast.Assign):
    return False
  for target in statement.targets:
    if isinstance(target, ast.Subscript) and isinstance(
        target.value, ast.Name) and target.value.id == name:
      return all(_a_list(d.value) for d in scope.defs.get(name, [])
                 if d.replaces and d.part is None)
  return False


def _a_list(value: ast.expr) -> bool:
  """Whether an assignment makes a list of weights, one entry a
  variable: a layer's or model's `get_weights()`, a list display, or
  `np.array(list_of_weights, dtype=object)`."""
  if isinstance(value, (ast.List, ast.ListComp)):
    return True
  if not isinstance(value, ast.Call):
    return False
  name = _names.call_name(value)
  return name in {"get_weights", "list"} or name == "array" and any(
      k.arg == "dtype" and isinstance(k.value, ast.Name) and (
          k.value.id == "object") for k in value.keywords)


def made_here(call: ast.Call, target: ast.AST, scope: _scopes.Scope
              ) -> bool:
  """Whether the model `target` belongs to is made in `scope` before
  `call` (`dgp = Model(inp, out)`; `layer = dgp.get_layer("skip")`), by
  one assignment each: no step of the caller has trained it yet."""
  modules = _scopes.imported_names(scope)
  name: Optional[str] = _base(target)
  for _ in range(_HOPS):
    defs = scope.defs.get(name or "", [])
    if name in scope.params or len(defs) != 1 or not isinstance(
        defs[0].value, ast.Call) or defs[0].start >= _idiom.position(call):
      return False
    made = defs[0].value
    assert isinstance(made, ast.Call)
    if not isinstance(made.func, ast.Attribute) or _base(
        made.func) in modules:
      return True  # `Model(...)`, `ks.models.Model(...)`, `build()`.
    name = _base(made.func.value)
  return False


def _base(node: ast.AST) -> Optional[str]:
  """The name an expression starts from: `dgp` of `dgp.get_layer('s')`."""
  while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
    node = node.func if isinstance(node, ast.Call) else node.value
  return node.id if isinstance(node, ast.Name) else None
