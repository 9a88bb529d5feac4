"""The inverse default (`selected`): a step's list that no recogniser
reads as a filter is still a part when its construction can be followed
and it selects from a larger set; the precision gates then decide as
for any filter.

A part: a slice or subscript of a variable collection, a comprehension
or `filter()` with a condition (not a `None` check, not a name test,
which the name recognisers own), a collection call with a scope, a set
difference, a list a `.remove()`/`del`/`.pop()` shortens, additions made
under a condition, and a helper's, method's or attribute's value that is
one of these. The whole (no list, `tf.trainable_variables()`, a model's
`trainable_variables`) and what cannot be followed (a parameter, a call
out of the project) are not parts.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources import _dict_entries
from tfpartial._tools.scan.idioms._sources import _outer
from tfpartial._tools.scan.idioms._sources import _shortened_lists
from tfpartial._tools.scan.idioms._sources import _subset

# A selection and the scope it is written in.
Found = Optional[Tuple[ast.expr, _scopes.Scope]]

_DEPTH = 6
# Calls that keep every element of their argument.
_KEEPING = {"list", "tuple", "sorted", "set", "frozenset", "reversed",
            "flatten", "nest_flatten"}
# Collections of a model's variables or layers, read by attribute.
_COLLECTIONS = {"trainable_variables", "trainable_weights", "variables",
                "weights", "layers", "submodules", "trainable_vars"
                } | _names.VARIABLE_LISTS


def selected(analysis: Analysis, chosen: ast.AST, scope: _scopes.Scope
             ) -> Found:
  """The selection a step's list `chosen` is made by, with its scope, or
  None (the whole, or a value that cannot be followed)."""
  if "grad" in analysis.flow.labels(chosen, scope):
    return None  # Pairs of gradients: the pairs' recognisers decide.
  return _part(analysis, chosen, scope, 0, set())


def _part(analysis: Analysis, node: ast.AST, scope: _scopes.Scope,
          depth: int, seen: Set[int]) -> Found:
  if depth > _DEPTH or id(node) in seen:
    return None
  seen.add(id(node))
  if isinstance(node, ast.Starred):
    return _part(analysis, node.value, scope, depth + 1, seen)
  if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
    return _comprehension(analysis, node, scope, depth, seen)
  if isinstance(node, ast.Subscript) and _copied(node.slice):
    return _part(analysis, node.value, scope, depth + 1, seen)
  if isinstance(node, ast.Subscript):
    entry = _dict_entries.entries(analysis, node, scope)
    found = _any(analysis, entry[0], depth, seen) if entry else None
    if entry is not None and (found is not None or not entry[1]):
      return found  # `self.variables['trainable']`: its values.
    return (node, scope) if _collection(analysis, node.value, scope) and (
        "grad" not in analysis.flow.labels(node.value, scope)) else None
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
    taken = ast.unparse(_inner(node.right))
    return (node, scope) if _collection(analysis, node.left, scope) and (
        taken not in _shortened_lists.trained_lists(scope, "")) else None
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    parts = [_part(analysis, side, scope, depth + 1, seen)
             for side in (node.left, node.right)]
    return parts[0] if parts[0] and parts[1] else None
  if isinstance(node, (ast.List, ast.Tuple)):
    return _listed(analysis, node, scope, depth, seen)
  if isinstance(node, ast.IfExp):
    return _part(analysis, node.body, scope, depth + 1, seen) or _part(
        analysis, node.orelse, scope, depth + 1, seen)
  if isinstance(node, ast.Call):
    return _called(analysis, node, scope, depth, seen)
  if isinstance(node, ast.Name):
    return _named(analysis, node, scope, depth, seen)
  if isinstance(node, ast.Attribute):
    return _attribute(analysis, node, scope, depth, seen)
  return None


def _inner(node: ast.expr) -> ast.expr:
  """`x` of `set(x)`, `list(x)`."""
  while isinstance(node, ast.Call) and _names.call_name(node) in (
      _KEEPING) and len(node.args) == 1:
    node = node.args[0]
  return node


def _copied(index: ast.expr) -> bool:
  """`[:]`, `[0:]`: a copy of the whole list, no choice."""
  return isinstance(index, ast.Slice) and index.upper is None and (
      index.step is None) and (index.lower is None or isinstance(
          index.lower, ast.Constant) and index.lower.value == 0)


def _comprehension(analysis: Analysis, node: ast.expr, scope: _scopes.Scope,
                   depth: int, seen: Set[int]) -> Found:
  """A comprehension keeps some of what it reads when one of its tests
  chooses (not a `None` check, not a name test: the recognisers of
  names decide those), or when what it reads is a part."""
  generators = getattr(node, "generators", [])
  if len(generators) != 1:
    return None
  source = generators[0].iter
  if isinstance(source, ast.Call) and _names.call_name(source) in {
      "zip", "enumerate"} and source.args:
    source = source.args[-1]
  if any(_chooses(test) and not _among_all(test, scope)
         for test in generators[0].ifs) and _collection(
             analysis, source, scope):
    return node, scope
  return _part(analysis, source, scope, depth + 1, seen)


def _chooses(test: ast.expr) -> bool:
  """Whether a test keeps some variables by what they are, not a guard
  against a missing gradient nor a test of names (one of the tests an
  `and` joins is enough)."""
  if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
    return any(_chooses(each) for each in test.values)
  for each in ast.walk(test):
    if isinstance(each, ast.Compare) and (all(
        isinstance(op, (ast.Is, ast.IsNot)) for op in each.ops) or any(
            _names.is_none(c) for c in each.comparators)):
      return False
    if isinstance(each, ast.Call) and _names.call_name(each) in {
        "isinstance", "hasattr", "callable"}:
      return False
    if isinstance(each, ast.Constant) and isinstance(each.value, str):
      return False  # A test of names: the name recognisers decide it.
    if isinstance(each, ast.Attribute) and each.attr in {
        "name", "op", "trainable", "dtype", "shape"}:
      return False
    if isinstance(each, ast.Call) and _names.call_name(each) in {
        "search", "match", "startswith", "endswith", "fullmatch"}:
      return False
  return True


def _among_all(test: ast.expr, scope: _scopes.Scope) -> bool:
  """`v in tvars` where `tvars` is every trainable variable: the test
  keeps the trainable ones, all of them."""
  if not isinstance(test, ast.Compare) or not isinstance(
      test.ops[0], ast.In):
    return False
  values = _scopes.values_reaching(test.comparators[0], scope)
  return bool(values) and all(
      isinstance(v, ast.Call) and _names.call_name(v) in (
          _names.VARIABLE_LISTS) and _names.scope_argument(v) is None or (
              isinstance(v, ast.Attribute) and v.attr in _COLLECTIONS)
      for v in values)


def _predicate_chooses(predicate: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `filter`'s predicate (a lambda, or a function of the
  project's scope) tests what `_chooses` reads as a choice."""
  if isinstance(predicate, ast.Lambda):
    return _chooses(predicate.body)
  found = scope.function(predicate.id) if isinstance(
      predicate, ast.Name) else None
  inner = found[1].scope_of(found[0]) if found is not None else None
  tests = [n.value for n in inner.nodes if isinstance(
      n, ast.Return) and n.value is not None] if inner is not None else []
  return bool(tests) and all(_chooses(test) for test in tests)


def _listed(analysis: Analysis, node: ast.expr, scope: _scopes.Scope,
            depth: int, seen: Set[int]) -> Found:
  """A list written by hand is a part when one of its entries is (a
  slice of a collection, a scoped collection)."""
  for element in getattr(node, "elts", []):
    if isinstance(element, ast.Subscript) and isinstance(
        element.slice, ast.Constant):
      continue  # Entries picked by place: the pairs' recognisers decide.
    found = _part(analysis, element, scope, depth + 1, seen)
    if found is not None:
      return found
  return None


def _called(analysis: Analysis, call: ast.Call, scope: _scopes.Scope,
            depth: int, seen: Set[int]) -> Found:
  name = _names.call_name(call)
  if name in _names.FILTERS and len(call.args) == 2:
    return (call, scope) if _predicate_chooses(call.args[0], scope) and (
        _collection(analysis, call.args[1], scope)) else None
  if name in _KEEPING and len(call.args) == 1:
    return _part(analysis, call.args[0], scope, depth + 1, seen)
  if name in _names.VARIABLE_LISTS:
    return (call, scope) if _names.scope_argument(call) is not None else None
  if name in _shortened_lists.SHORTENING | {"difference"} and isinstance(
      call.func, ast.Attribute):
    return (call, scope) if name == "difference" and _collection(
        analysis, call.func.value, scope) else None
  return _returned(analysis, call, scope, depth, seen)


def _returned(analysis: Analysis, call: ast.Call, scope: _scopes.Scope,
              depth: int, seen: Set[int]) -> Found:
  """The part a function of the project returns, where the flow knows
  which one the call runs."""
  function = analysis.flow.callee(call, scope)
  home = analysis.flow.functions.get(id(function)) if function else None
  inner = home[1].scope_of(function) if home and function else None
  functions = [inner] if inner is not None else _named_methods(
      analysis, call, scope)
  for each in functions:
    for returned in each.nodes:
      if isinstance(returned, ast.Return) and returned.value is not None:
        found = _part(analysis, returned.value, each, depth + 1, seen)
        if found is not None:
          return found
  return None


def _named_methods(analysis: Analysis, call: ast.Call,
                   scope: _scopes.Scope) -> List[_scopes.Scope]:
  """The project's one method of the name a method call of an object the
  flow cannot follow calls (`self.fm.scope_vars_list(...)`), when the
  name is the project's own (not a library's)."""
  if not isinstance(call.func, ast.Attribute) or isinstance(
      call.func.value, ast.Name) and analysis.project.external(
          scope, call.func.value.id) and not (
              analysis.project.holds_module(scope, call.func.value.id)):
    return []
  found = list(analysis.project.functions_named(
      (call.func.attr,), unscanned=True))
  return found if len(found) == 1 else []


def _named(analysis: Analysis, name: ast.Name, scope: _scopes.Scope,
           depth: int, seen: Set[int]) -> Found:
  """A local name is a part when a value it holds is one, when it is
  shortened in place, or when it is added to under a condition."""
  if name.id in scope.params:
    return None
  if name.id not in scope.defs:
    return _any(analysis, _outer.outer_values(name, scope), depth, seen)
  defs = scope.defs[name.id]
  for index in reversed(scope.reaching(name.id, name)):
    each = defs[index]
    test = each.where.guard  # Not an `if` and its `else`: a partition.
    if not each.replaces and test is not None and _chooses(test) and (
        name.id not in each.where.shared) and _added(
            analysis, name.id, each.value, test, scope):
      return each.value, scope
    found = _part(analysis, each.value, scope, depth + 1, seen) or (
        None if each.replaces or not each.where.loops else _looped(
            analysis, name.id, each.value, scope, depth, seen))
    if found is not None:
      return found
  return _shortened(analysis, name, scope)


def _looped(analysis: Analysis, name: str, value: ast.expr,
            scope: _scopes.Scope, depth: int, seen: Set[int]) -> Found:
  """An addition made for each item of a loop over a part (`for layer in
  model.layers[k:]: chosen += layer.trainable_weights`)."""
  if isinstance(value, ast.BinOp) and isinstance(
      value.left, ast.Name) and value.left.id == name:
    value = value.right
  item = _base(value)
  if item == name:
    return None
  return _any(analysis, [(each.value, scope) for each in scope.defs.get(
      item, ())], depth, seen)


def _added(analysis: Analysis, name: str, value: ast.expr, test: ast.expr,
           scope: _scopes.Scope) -> bool:
  """Whether a guarded addition adds variables (not a loss, a summary),
  and not those of a model made under the same test."""
  if isinstance(value, ast.BinOp) and isinstance(
      value.left, ast.Name) and value.left.id == name:
    value = value.right  # `names += more`, read as `names + more`.
  if isinstance(value, ast.Attribute) and value.attr in _COLLECTIONS:
    return False  # A whole model added under a flag: `_other_half` decides.
  owner = _base(value)
  if any(d.where.guard is test for d in scope.defs.get(owner, ())):
    return False  # A model made where its variables are added: it exists.
  if _subset.made_by_the_same_test(scope, value, test):
    return False  # `self.emb` made only under this flag, in `__init__`.
  return _collection(analysis, value, scope) or "filtered" in (
      analysis.flow.labels(value, scope))


def _base(node: ast.AST) -> str:
  """The name an expression starts from (`model` of `model.a.weights`)."""
  while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
    node = node.func if isinstance(node, ast.Call) else node.value
  return node.id if isinstance(node, ast.Name) else ""


def _shortened(analysis: Analysis, name: ast.Name, scope: _scopes.Scope
               ) -> Found:
  """`names.remove(v)`, `del names[i]`, `names.pop()` before the read, of
  a list of variables, where no other step trains what it takes out."""
  at = (name.lineno, name.col_offset)
  for target, removed in _shortened_lists.shortenings(scope).get(name.id, ()):
    if (target.lineno, target.col_offset) < at and any(
        _collection(analysis, value, scope)
        for value in _scopes.values_reaching(target, scope)) and not (
            removed & _shortened_lists.trained_lists(scope, name.id)):
      return target, scope
  return None


def _attribute(analysis: Analysis, node: ast.Attribute, scope: _scopes.Scope,
               depth: int, seen: Set[int]) -> Found:
  """`self.x` (or `obj.x` of a project class): a part when a value the
  class assigns it is one."""
  if node.attr in _COLLECTIONS:
    return None  # A model's own variables: the whole of it.
  info = _scopes.enclosing_class(scope) if isinstance(
      node.value, ast.Name) and node.value.id == "self" else None
  if info is None and isinstance(node.value, ast.Name):
    owner = analysis.flow.labels(node.value, scope).get("obj")
    info = analysis.flow.classes.get(id(owner)) if owner is not None else None
  if info is None:
    return None
  return _any(analysis, analysis.flow.project.attribute(
      info, f"self.{node.attr}"), depth, seen)


def _any(analysis: Analysis, values: List[Tuple[ast.expr, _scopes.Scope]],
         depth: int, seen: Set[int]) -> Found:
  for value, home in values:
    found = _part(analysis, value, home, depth + 1, seen)
    if found is not None:
      return found
  return None


def _collection(analysis: Analysis, node: ast.AST,
                scope: _scopes.Scope) -> bool:
  """Whether `node` holds variables (or layers) of which a subscript or
  a difference keeps some."""
  if isinstance(node, ast.Call) and _names.call_name(node) in _KEEPING \
      and len(node.args) == 1:
    return _collection(analysis, node.args[0], scope)
  if isinstance(node, ast.Call) and _names.call_name(node) == "keys":
    return False  # Names of the variables, not them.
  if isinstance(node, ast.Call) and _names.call_name(node) == "copy" and (
      isinstance(node.func, ast.Attribute)) and not node.args:
    return _collection(analysis, node.func.value, scope)
  if isinstance(node, ast.Call) and _names.call_name(
      node) in _names.VARIABLE_LISTS:
    return True
  if isinstance(node, ast.Attribute) and node.attr in _COLLECTIONS:
    return True
  labels = analysis.flow.labels(node, scope)
  return "var" in labels
