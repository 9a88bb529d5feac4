"""Whether a write sets a model to the average of several models'
weights: federated averaging (`for k in range(len(w_global)):
w_global[k] = w_locals[0][k]; for j in range(1, clients): w_global[k] +=
w_locals[j][k]; w_global[k] /= clients`, each `w_locals[j]` a client
model's `get_weights()` read out after it trained, then
`model_global.set_weights(w_global)`, and each client set to the global
weights before its next round). Every entry of the list written is
replaced by the average, in a loop over all of them: the values the
clients trained, nothing kept from before a step. A list whose entries
are replaced only in part, under an `if`, or from one model's own copy,
is not one. Part of the writes `write-back` reads."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._copies import _weight_average

# How a model's weights are read out, all of them, as they are now.
_READS = frozenset({"get_weights"})


def averaged_models(call: ast.Call, scope: _scopes.Scope,
                    value: ast.AST) -> bool:
  """Whether `call` is `model.set_weights(value)`, `value` a name bound
  only to a model's weights read out (or to a name bound only to it, the
  best round's), every entry of which a loop of `scope` replaces by an
  average over a list of models' weights (`_averages`).

  >>> tree = ast.parse('''
  ... def f(server, clients, data):
  ...   w_global = server.get_weights()
  ...   w_locals = [0] * len(clients)
  ...   for r in range(10):
  ...     for j, client in enumerate(clients):
  ...       client.set_weights(w_global)
  ...       client.fit(data[j])
  ...       w_locals[j] = client.get_weights()
  ...     for k in range(len(w_global)):
  ...       w_global[k] = sum(w[k] for w in w_locals) / len(w_locals)
  ...     server.set_weights(w_global)''')
  >>> scope = list(_scopes.collect(tree).all())[1]
  >>> writes = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
  ...           and _names.call_name(n) == "set_weights"]
  >>> [averaged_models(w, scope, w.args[0]) for w in writes]
  [True, True]
  """
  if _names.call_name(call) != "set_weights" or not isinstance(
      value, ast.Name) or not _read_out(value.id, scope, 2):
    return False
  return any(_averages(loop, value.id, scope) for loop in scope.nodes
             if isinstance(loop, ast.For))


def _read_out(name: str, scope: _scopes.Scope, depth: int) -> bool:
  """Whether every value that replaces `name` is a model's weights read
  out (`model.get_weights()`), or, `depth` names on, a name bound only
  to such values (`best_weights = w_global`)."""
  made = [d.value for d in scope.defs.get(name, []) if d.replaces]
  return bool(made) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _READS and not (
          v.args) or depth > 0 and isinstance(v, ast.Name) and (
              v.id == name or _read_out(v.id, scope, depth - 1) or all(
                  isinstance(d.value, ast.Name) and d.value.id == name
                  for d in scope.defs.get(v.id, [])))
      for v in made)


def _averages(loop: ast.For, name: str, scope: _scopes.Scope) -> bool:
  """Whether `loop` runs over every entry of `name` (`for k in
  range(len(name))`) and its body (not under an `if`) replaces entry `k`
  by entries `k` of a list of models' weights, the rest of its stores
  into that entry reading only it, those lists, numbers and counts."""
  index = _entry_index(loop, name)
  if index is None:
    return False
  stores = [s for s in _stores(loop.body, name, index)]
  if not stores or any(s is None for s in stores):
    return False
  first = stores[0]
  assert first is not None
  lists = _weight_lists(first, index, scope)
  if not lists or any(isinstance(n, ast.Name) and n.id == name
                      for n in ast.walk(first)):
    return False
  indices = {n.id for inner in ast.walk(loop) if isinstance(
      inner, ast.For) for n in ast.walk(inner.target)
             if isinstance(n, ast.Name)}
  allowed = {name, *lists, *indices, *_scopes.imported_names(scope)}
  return all(_reads_only(s, allowed, scope, indices) for s in stores
             if s is not None)


def _reads_only(stored: ast.expr, allowed: Set[str], scope: _scopes.Scope,
                indices: Set[str]) -> bool:
  """Whether `stored` reads no local name (a builtin, a comprehension's
  own are none) but `allowed` and counts."""
  own = {t.id for c in ast.walk(stored) if isinstance(c, ast.comprehension)
         for t in ast.walk(c.target) if isinstance(t, ast.Name)}
  read = {n.id for n in ast.walk(stored) if isinstance(n, ast.Name) and (
      n.id in scope.defs or n.id in scope.params)} - own
  lengths = {name for name in read if scope.defs.get(name) and all(
      isinstance(d.value, ast.Call) and _names.call_name(d.value) == "len"
      for d in scope.defs[name])}  # `clients = len(train)`: a count.
  return read <= allowed | lengths | _weight_average.counts(
      stored, scope, indices)


def _entry_index(loop: ast.For, name: str) -> Optional[str]:
  """`k` of `for k in range(len(name))`, else None."""
  source = loop.iter
  if not isinstance(loop.target, ast.Name) or not isinstance(
      source, ast.Call) or _names.call_name(source) != "range" or len(
          source.args) != 1:
    return None
  length = source.args[0]
  if isinstance(length, ast.Call) and _names.call_name(
      length) == "len" and len(length.args) == 1 and isinstance(
          length.args[0], ast.Name) and length.args[0].id == name:
    return loop.target.id
  return None


def _stores(body: List[ast.stmt], name: str, index: str
            ) -> List[Optional[ast.expr]]:
  """The values stored into `name[index]` by the statements of `body`
  and the loops in it (not under an `if`), in order; None for a store
  into another entry, or under an `if`."""
  found: List[Optional[ast.expr]] = []
  for statement in body:
    if isinstance(statement, (ast.For, ast.While)):
      found += _stores(statement.body, name, index)
      continue
    targets: List[ast.expr] = []
    stored: Optional[ast.expr] = None
    if isinstance(statement, ast.Assign):
      targets, stored = statement.targets, statement.value
    elif isinstance(statement, ast.AugAssign):
      targets, stored = [statement.target], statement.value
    for target in targets:
      if isinstance(target, ast.Subscript) and _names.root(
          target.value) == name:
        entry = isinstance(target.value, ast.Name) and isinstance(
            target.slice, ast.Name) and target.slice.id == index
        found.append(stored if entry else None)
    if isinstance(statement, ast.If) and any(
        isinstance(t, ast.Subscript) and _names.root(t) == name
        for n in ast.walk(statement) if isinstance(n, (
            ast.Assign, ast.AugAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])):
      found.append(None)  # An entry replaced only under an `if`.
  return found


def _weight_lists(stored: ast.expr, index: str,
                  scope: _scopes.Scope) -> List[str]:
  """The lists of models' weights `stored` reads entry `index` of
  (`w_locals[0][k]`, `w[k] for w in w_locals`): lists each entry of which
  is stored (or appended) as a model's weights read out."""
  found = []
  for node in ast.walk(stored):
    if not isinstance(node, ast.Subscript) or not isinstance(
        node.slice, ast.Name) or node.slice.id != index:
      continue
    inner = node.value
    if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Name):
      listed = inner.value.id
    elif isinstance(inner, ast.Name):
      listed = _iterated(stored, inner.id) or ""
    else:
      continue
    if listed and _of_models(listed, scope):
      found.append(listed)
  return found


def _iterated(stored: ast.expr, name: str) -> Optional[str]:
  """`w_locals` of `... for w in w_locals` in `stored`, for `name` `w`."""
  for node in ast.walk(stored):
    if isinstance(node, ast.comprehension) and isinstance(
        node.target, ast.Name) and node.target.id == name and isinstance(
            node.iter, ast.Name):
      return node.iter.id
  return None


def _of_models(listed: str, scope: _scopes.Scope) -> bool:
  """Whether the entries `listed` is given (`w_locals[j] = ...`,
  `w_locals.append(...)`) are all models' weights read out, at least
  one (or constants, places kept for them), and what replaces it is a
  list display or a repeat of one."""
  entries = [d.value for d in scope.defs.get(listed, []) if not d.replaces]
  made = [d.value for d in scope.defs.get(listed, []) if d.replaces]
  appended = [n.args[0] for n in scope.nodes if isinstance(
      n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(
          n.func.value, ast.Name) and n.func.value.id == listed and (
              n.func.attr == "append") and len(n.args) == 1]
  every = [v for v in entries + appended if not isinstance(
      v, ast.Constant)]  # `w_locals.append(0)`: a place kept for one.
  return bool(every) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in _READS
      for v in every) and all(
          isinstance(v, (ast.List, ast.ListComp)) or isinstance(
              v, ast.BinOp) and isinstance(v.left, ast.List) for v in made)
