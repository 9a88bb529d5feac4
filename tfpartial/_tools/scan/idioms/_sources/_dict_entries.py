"""A class's own dict of variable lists, read by key
(`self.variables['trainable']` where `self.variables = {}`): the values
assigned that entry, not a pick from a model's collection that happens
to share the attribute's name (YeongHyeon/Normalizing-Flow-TF2 fills it
with each variable whose own `trainable` flag is set).

An entry filled under a test of names (`if 'embedding' not in v.name:
self.variables['trainable'].append(v)`), or of anything but the
variable's own `trainable` flag, or holding a value built by such a
filter, is a filter whatever the dict is called: the entry is then read
as any other subscript (`None`). The entries are read once per class and
attribute, however many methods read them."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# The values assigned one key of the dict, and whether a filter chose them.
_Entry = Tuple[List[Tuple[ast.expr, _scopes.Scope]], bool]


def entries(analysis: Analysis, node: ast.Subscript, scope: _scopes.Scope
            ) -> Optional[_Entry]:
  """The values a class assigns the entry `node` reads of a dict of its
  own, with their scopes, and whether a filter fills it (then the entry
  is a part even where none of its values is one); None for any other
  subscript."""
  key = node.slice
  dotted = _names.dotted(node.value) or ""
  info = _scopes.enclosing_class(scope)
  if info is None or not isinstance(key, ast.Constant) or not isinstance(
      key.value, str) or not dotted.startswith("self.") or (
          dotted.count(".") != 1):
    return None
  cls = info
  known = info.home.once((entries, (id(info.node), dotted), 0),
                         lambda: _by_key(analysis, cls, dotted))
  if known is None:
    return None
  return known.get(key.value, ([], False))


def _by_key(analysis: Analysis, info: _scopes.ClassInfo, dotted: str
            ) -> Optional[Dict[str, _Entry]]:
  """Each key of the dict `dotted` of the class: its values, and whether
  a filter chose them; None when the class makes no dict there."""
  made = analysis.flow.project.attribute(info, dotted)
  if not any(isinstance(value, ast.Dict) or isinstance(
      value, ast.Call) and _names.call_name(value) == "dict" and not (
          value.args) for value, _ in made):
    return None
  found: Dict[str, _Entry] = {}
  for made_as, home in made:
    if isinstance(made_as, ast.Dict):
      for name, value in zip(made_as.keys, made_as.values):
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
          _add(found, name.value, value, home, _filtered(
              analysis, value, home))
  for method in info.methods.values():
    _written(analysis, method, dotted, getattr(method.node, "body", []),
             (), found)
  return found


def _add(found: Dict[str, _Entry], key: str, value: Optional[ast.expr],
         home: _scopes.Scope, filtered: bool) -> None:
  values, before = found.get(key, ([], False))
  found[key] = ([*values, (value, home)] if value is not None else values,
                before or filtered)


def _written(analysis: Analysis, method: _scopes.Scope, dotted: str,
             body: Sequence[ast.AST], tests: Tuple[ast.expr, ...],
             found: Dict[str, _Entry]) -> None:
  """The entries `body` assigns (`self.x[key] = value`) or adds to
  (`self.x[key].append(v)`), each with the `if` tests around it."""
  for statement in body:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef)):
      continue
    if isinstance(statement, ast.If):
      inner = (*tests, statement.test)
      _written(analysis, method, dotted, statement.body, inner, found)
      _written(analysis, method, dotted, statement.orelse, inner, found)
      continue
    blocks = list(_scopes.blocks(statement)) if isinstance(
        statement, ast.stmt) else []
    for block in blocks:
      _written(analysis, method, dotted, block, tests, found)
    if blocks:
      continue
    for key, value, adds in _writes(statement, dotted):
      chosen = any(not _flag_test(test, method) for test in tests)
      _add(found, key, None if adds else value, method, chosen or (
          _filtered(analysis, value, method)))


def _writes(statement: ast.AST, dotted: str
            ) -> List[Tuple[str, ast.expr, bool]]:
  """(key, value, whether it adds) of `self.x[key] = value`, `self.x[key]
  += value` and `self.x[key].append(value)` in one simple statement."""
  def keyed(target: ast.AST) -> Optional[str]:
    if isinstance(target, ast.Subscript) and _names.dotted(
        target.value) == dotted and isinstance(
            target.slice, ast.Constant) and isinstance(
                target.slice.value, str):
      return target.slice.value
    return None
  found: List[Tuple[str, ast.expr, bool]] = []
  if isinstance(statement, ast.Assign):
    found += [(k, statement.value, False) for t in statement.targets
              for k in [keyed(t)] if k is not None]
  elif isinstance(statement, ast.AugAssign):
    key = keyed(statement.target)
    found += [(key, statement.value, True)] if key is not None else []
  elif isinstance(statement, ast.Expr) and isinstance(
      statement.value, ast.Call) and isinstance(
          statement.value.func, ast.Attribute) and (
              statement.value.func.attr in {"append", "extend", "insert"}) and (
                  statement.value.args):
    key = keyed(statement.value.func.value)
    found += [(key, statement.value.args[-1], True)] if key is not None else []
  return found


def _flag_test(test: ast.expr, method: _scopes.Scope) -> bool:
  """A test of each variable's own `trainable` flag (`if v.trainable:`,
  or a name bound to one) or a `None` check: it keeps every variable
  that trains, no choice of names."""
  if isinstance(test, ast.Compare) and all(
      isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops):
    # `v is not None`; `v is not self.emb` leaves a chosen variable out.
    return all(isinstance(c, ast.Constant) and c.value is None
               for c in test.comparators)
  if isinstance(test, ast.Attribute):
    return test.attr == "trainable"
  if isinstance(test, ast.Name):
    defs = method.defs.get(test.id, [])
    return bool(defs) and all(isinstance(d.value, ast.Attribute) and (
        d.value.attr == "trainable") for d in defs)
  return False


def _filtered(analysis: Analysis, value: ast.expr, home: _scopes.Scope
              ) -> bool:
  """A value built by a filter: a comprehension with a test other than
  the `trainable` flag, or what the flow labels so."""
  if isinstance(value, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
    if any(not _flag_test(test, home)
           for g in value.generators for test in g.ifs):
      return True
  return "filtered" in analysis.flow.labels(value, home)
