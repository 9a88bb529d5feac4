"""Masks that keep nothing fixed, for the writes `weight-remask` reads:

- made where they are written from the weights' own magnitude (`abs` of
  the variable, or of its values read out by `get_weights()`/`numpy()`;
  taken there or by a project helper given them, `prune(w, 90)`):
  one-shot magnitude pruning before a fine-tune, network slimming's
  channel ranking, a proximal shrinkage; each write decides anew;
- rows zeroed at indices passed in by the caller (`scatter_update(state,
  indices, zeros)` with `indices` a parameter no call gives a constant):
  the data chooses them (a recurrent state reset for ended episodes)."""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

_MAGNITUDES = {"abs", "absolute", "norm", "l1_norm", "l2_norm"}
_READ_OUTS = {"get_weights", "numpy", "get_value", "read_value"}
_SCATTERS = {"scatter_update", "scatter_nd_update"}


def from_magnitude(call: ast.Call, target: ast.AST, scope: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether `scope` takes the magnitude (`abs`, a norm) of the written
  variable or of weights it reads out, each time the write runs (in every
  loop around the write): the mask is made from them anew."""
  taken = _magnitudes(scope, analysis)
  if not taken:
    return False
  mine = _names.root(target)
  loops = _write_loops(call, analysis.order(scope), scope)
  return any(loops <= around and (read_out or mine in names)
             for names, read_out, around in taken)


def _magnitudes(scope: _scopes.Scope, analysis: Analysis
                ) -> List[Tuple[Set[str], bool, Set[int]]]:
  """The magnitudes `scope` takes (found once): the names each reads,
  whether it reads weights out, the loops around it."""
  def find() -> List[Tuple[Set[str], bool, Set[int]]]:
    found: List[Tuple[Set[str], bool, Set[int]]] = []
    read_out: Optional[Set[str]] = None
    for node in scope.nodes:
      if not isinstance(node, ast.Call):
        continue
      measured = _measured_argument(node, scope, analysis)
      if measured is None:
        continue
      if read_out is None:
        read_out = _read_out_names(scope)
      names = {n.id for n in ast.walk(measured)
               if isinstance(n, ast.Name)}
      reads = bool(names & read_out) or any(
          isinstance(n, ast.Call) and _names.call_name(n) in _READ_OUTS
          for n in ast.walk(measured))
      found.append((names, reads, _loops(node, analysis.order(scope),
                                         scope)))
    return found
  taken = analysis.once(f"magnitudes:{id(scope)}", find)
  assert isinstance(taken, list)
  return taken


def _measured_argument(call: ast.Call, scope: _scopes.Scope,
                       analysis: Analysis) -> Optional[ast.expr]:
  """The argument whose magnitude `call` takes: its first, for `abs` or a
  norm; for a project helper, the one given to a parameter the helper
  takes the magnitude of (`prune(w, 90)` with `np.abs(w) > t` inside)."""
  if _names.call_name(call) in _MAGNITUDES:
    return call.args[0] if call.args else None
  helper = analysis.flow.callee(call, scope)
  if not isinstance(helper, ast.FunctionDef) or helper is scope.node:
    return None
  measured = analysis.once(f"measured params:{id(helper)}",
                           lambda: _measured_params(helper))
  assert isinstance(measured, list)
  return next((a for a, p in zip(call.args, [
      a.arg for a in helper.args.args]) if p in measured), None)


def _measured_params(helper: ast.FunctionDef) -> List[str]:
  """The parameters of `helper` it takes the magnitude of, directly."""
  params = {a.arg for a in helper.args.args}
  return sorted({n.args[0].id for n in ast.walk(helper) if isinstance(
      n, ast.Call) and _names.call_name(n) in _MAGNITUDES and n.args and (
          isinstance(n.args[0], ast.Name)) and n.args[0].id in params})


def from_own_values(call: ast.Call, target: ast.AST, value: ast.AST,
                    scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether the mask in `value` is a comparison (in every loop around
  the write) of values made from the written variable here (`ratio =
  overflows / steps; cond = ratio > t; overflows.assign(overflows * (1 -
  cond))`): chosen anew by the variable's own values each time."""
  mine = _names.root(target)
  if not mine:
    return False
  derived = _derived(mine, scope, analysis)
  order = analysis.order(scope)
  loops = _write_loops(call, order, scope)
  names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
  seen: Set[str] = set()
  for _ in range(3):
    names -= seen
    seen |= names
    found: Set[str] = set()
    for name in names - {mine}:
      for each in scope.defs.get(name, []):
        for node in ast.walk(each.value):
          if (isinstance(node, ast.Compare) or isinstance(node, ast.Call) and (
              _names.call_name(node) in _COMPARISONS)) and any(
                  isinstance(n, ast.Name) and n.id in derived
                  for n in ast.walk(node)) and loops <= _loops(
                      node, order, scope):
            return True
          if isinstance(node, ast.Name):
            found.add(node.id)
    names = found
  return False


_COMPARISONS = {"less", "greater", "less_equal", "greater_equal"}


def _derived(mine: str, scope: _scopes.Scope, analysis: Analysis
             ) -> Set[str]:
  """`mine` and the names of `scope` made from its values (found once);
  not a lookup keyed by it (`sens[mine]`, precomputed elsewhere)."""
  def find() -> Set[str]:
    derived = {mine}
    for _ in range(4):
      grown = {name for name, defs in scope.defs.items() if any(
          isinstance(n, ast.Name) and n.id in derived
          for d in defs for n in _value_reads(d.value, mine))}
      if grown <= derived:
        break
      derived |= grown
    return derived
  found = analysis.once(f"derived:{id(scope)}:{mine}", find)
  assert isinstance(found, set)
  return found


def _value_reads(node: ast.AST, mine: str) -> Iterator[ast.AST]:
  """The nodes of `node`, less those of a key that is `mine` or its
  attribute (`sens[mine]`, `masks[mine.name]`): a lookup, not its values."""
  keys = {id(k) for n in ast.walk(node) if isinstance(n, ast.Subscript) and (
      f"{_names.dotted(n.slice)}.".startswith(f"{mine}."))
          for k in ast.walk(n.slice)}
  return (n for n in ast.walk(node) if id(n) not in keys)


def _write_loops(call: ast.Call, order: _order.Order,
                 scope: _scopes.Scope) -> Set[int]:
  """The loops of `scope` the write repeats in: those around it, else
  those around a `run` of it."""
  return _loops(call, order, scope) or run_loops(call, scope, order)


def run_loops(call: ast.Call, scope: _scopes.Scope,
              order: _order.Order) -> Set[int]:
  """The loops of `scope` around a `run` of the op `call` builds before
  them (`prune = w.assign(w * mask)`, then `sess.run(prune)` in the
  loop): the write repeats there."""
  kept = set(_order.handles(call, order))
  loops: Set[int] = set()
  for node in scope.nodes if kept else ():
    if isinstance(node, ast.Call) and _names.call_name(node) == "run" and (
        node.args) and any(isinstance(n, ast.Name) and n.id in kept or (
            isinstance(n, ast.Attribute) and n.attr in kept)
                           for n in ast.walk(node.args[0])):
      loops |= _loops(node, order, scope)
  return loops


def _loops(node: ast.AST, order: _order.Order,
           scope: _scopes.Scope) -> Set[int]:
  """The loops of `scope` around `node`."""
  found: Set[int] = set()
  parent = order.parent(node)
  while parent is not None and parent is not scope.node:
    if isinstance(parent, (ast.For, ast.While, ast.AsyncFor)):
      found.add(id(parent))
    parent = order.parent(parent)
  return found


def _read_out_names(scope: _scopes.Scope) -> Set[str]:
  """The names bound to weights read out (`w = layer.get_weights()`), or
  to a list filled with read-outs only (`ws = []`, then `ws.append(
  v.numpy())` in a loop: the same weights read out one by one)."""
  filled = _filled_with_read_outs(scope)
  return {name for name, defs in scope.defs.items() if defs and all(
      _read_out(d.value) or name in filled and isinstance(
          d.value, ast.List) and not d.value.elts for d in defs)}


def _filled_with_read_outs(scope: _scopes.Scope) -> Set[str]:
  """The names whose `append`s in `scope` all append a read-out."""
  appended: Dict[str, bool] = {}
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr == "append" and (
            isinstance(node.func.value, ast.Name)) and len(node.args) == 1:
      name = node.func.value.id
      appended[name] = appended.get(name, True) and _read_out(node.args[0])
  return {name for name, every in appended.items() if every}


def _read_out(value: Optional[ast.AST]) -> bool:
  """A read-out (`layer.get_weights()`), or one of its parts (`[0]`)."""
  while isinstance(value, ast.Subscript):
    value = value.value
  return isinstance(value, ast.Call) and _names.call_name(value) in (
      _READ_OUTS)


def indices_passed_in(call: ast.Call, scope: _scopes.Scope,
                      analysis: Analysis) -> bool:
  """Whether a scatter's indices are a parameter of its function that no
  call of the function gives as a constant (the data chooses them)."""
  if _names.call_name(call) not in _SCATTERS or len(call.args) < 3:
    return False
  indices = call.args[1]
  if not isinstance(indices, ast.Name) or indices.id not in scope.params or (
      scope.defs.get(indices.id)) or not isinstance(
          scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  position = scope.params.index(indices.id)
  for _, site in analysis.flow.calls_of(scope.node):
    given = next((k.value for k in site.keywords if k.arg == indices.id),
                 site.args[position] if position < len(site.args) else None)
    if given is not None and not isinstance(given, ast.Name):
      return False  # A constant, a list, an expression: fixed rows maybe.
  return True


def pruned_elsewhere(found: Dict[str, ast.AST], target: ast.AST,
                     scope: _scopes.Scope, analysis: Analysis,
                     here: Set[int]) -> bool:
  """Whether the only mask a write's value carries for its target is a
  prune by magnitude made in another function (`W_pruned *= mask` with
  `mask = np.abs(W) > t` in a helper), reached through what `self.model`
  held (a sibling base class's one-time prune), and no product of the
  write's own class masks it, and the write's function does not call
  that helper: weights rebuilt from shared centroids by a class of its
  own (weight sharing after each step) are no re-mask. `here`: the ids
  of the nodes of `scope`."""
  product = found.get(f"varmask:{_names.root(target)}")
  if product is None or id(product) in here:
    return False
  helper = _holder(product, analysis)
  if helper is None or not _by_magnitude(product, *helper) or any(
      isinstance(n, ast.Call) and analysis.flow.callee(n, scope) is helper[0]
      for n in scope.nodes):
    return False  # (A helper called here: judged by its arguments.)
  other = found.get("timesmask")
  own = list(scope.cls.methods.values()) if scope.cls is not None else [
      scope]
  return other is None or other is product or not any(
      any(n is other for n in m.nodes) for m in own)


def _holder(node: ast.AST, analysis: Analysis
            ) -> Optional[Tuple[ast.FunctionDef, _scopes.Scope]]:
  """The function of the project that holds `node` (or the statement it
  stands for: `w *= m` is read as `w * m`), and its scope."""
  at = (getattr(node, "lineno", 0), getattr(node, "col_offset", -1))
  for function, home in analysis.flow.functions.values():
    if isinstance(function, ast.FunctionDef) and function.lineno <= at[0] <= (
        function.end_lineno or 0) and any((getattr(n, "lineno", 0), getattr(
            n, "col_offset", -1)) == at for n in ast.walk(function)):
      inner = home.scope_of(function)
      return (function, inner) if inner is not None else None
  return None


def _by_magnitude(product: ast.AST, function: ast.FunctionDef,
                  scope: _scopes.Scope) -> bool:
  """Whether `product` multiplies by a comparison of the magnitude of a
  parameter of `function` (through the local names it reads)."""
  measured = set(_measured_params(function))
  return bool(measured) and any(isinstance(n, ast.Compare) and any(
      isinstance(m, ast.Name) and m.id in measured for m in ast.walk(n))
                                for n in _scopes.made_from(product, scope))
