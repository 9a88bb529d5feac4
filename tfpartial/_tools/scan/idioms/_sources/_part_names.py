"""The parts a flag named after its part can name: the gate computes the
flag's name around a value (`"train_{}".format(name)`), and the parts are
the values that one takes, as the code shows them: a literal loop over
them (`for name in ("gen", "disc")`, in the gated function or a caller
passing it), or the keys the parts are read by, built around the same
value (`"{}_variables".format(name)` reads `"backbone_variables"` of a
dict the optimizers are set up in). Part of `_part_flags`.
"""

from __future__ import annotations

import ast
import re
from typing import FrozenSet, Iterator, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# A name as the code computes it: the constant text around its one value.
Pattern = Tuple[str, str]
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def parts(analysis: Analysis, scope: _scopes.Scope, name: str,
          pattern: Pattern) -> FrozenSet[str]:
  """The parts the name `name` of the gated function `scope` takes, for
  the flag's name `pattern` computed around it."""
  found = set(looped(scope, name))
  if name in scope.params:
    for caller, call in analysis.flow.calls_of(scope.node):
      given = _names.argument(call, scope.params, name)
      if isinstance(given, ast.Name):
        found.update(looped(caller, given.id))
      elif given is not None and _text(given) is not None:
        found.add(str(_text(given)))
  for other in _computed(scope, name):
    if other != pattern:
      found.update(_keys(analysis.project, other))
  return frozenset(part for part in found if IDENTIFIER.match(part))


def looped(scope: _scopes.Scope, name: str) -> Iterator[str]:
  """The texts `name` takes in a loop of `scope` over a literal.

  >>> from tfpartial._tools.scan import _scopes
  >>> scope = _scopes.collect(ast.parse(
  ...     'for name, net in (("gen", g), ("disc", d)):\\n  pass'))
  >>> list(looped(scope, "name"))
  ['gen', 'disc']
  """
  for node in scope.nodes:
    if not isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
      continue
    target, values = node.target, node.iter
    index: Optional[int] = None
    if isinstance(target, ast.Tuple):
      index = next((i for i, each in enumerate(target.elts) if isinstance(
          each, ast.Name) and each.id == name), None)
      if index is None:
        continue
    elif not isinstance(target, ast.Name) or target.id != name:
      continue
    if isinstance(values, ast.Call) and isinstance(
        values.func, ast.Attribute) and values.func.attr == "items" and (
            index == 0):
      values, index = values.func.value, None
    elements = values.keys if isinstance(values, ast.Dict) else getattr(
        values, "elts", []) if isinstance(
            values, (ast.Tuple, ast.List, ast.Set)) else []
    for element in elements:
      if index is not None:
        element = element.elts[index] if isinstance(element, ast.Tuple) and (
            index < len(element.elts)) else None
      text = _text(element) if element is not None else None
      if text is not None:
        yield text


def _computed(scope: _scopes.Scope, name: str) -> Iterator[Pattern]:
  """The texts `scope` computes around the value of `name`."""
  for node in scope.nodes:
    if isinstance(node, (ast.BinOp, ast.JoinedStr, ast.Call)):
      value = hole(node)
      if isinstance(value, ast.Name) and value.id == name:
        found = around(node)
        if found is not None and "".join(found):
          yield found


def _keys(project: _project.Project, pattern: Pattern) -> Set[str]:
  """The parts named by the keys of the project's dicts and subscripts
  that are texts of `pattern` (`"backbone_variables"` for `"{}_variables"`)."""
  prefix, suffix = pattern
  quoted = ('"' + prefix, "'" + prefix) if not suffix else (
      suffix + '"', suffix + "'")
  found: Set[str] = set()
  for module in project.modules:
    if module.is_test or not any(q in module.source.text for q in quoted):
      continue
    root = project.parsed(module)
    if root is None:
      continue
    for key in root.once((_keys, None, 0), lambda: _read_keys(root)):
      if key.startswith(prefix) and key.endswith(suffix) and len(key) > len(
          prefix) + len(suffix):
        found.add(key[len(prefix):len(key) - len(suffix)])
  return found


def _read_keys(root: _scopes.Scope) -> FrozenSet[str]:
  """The texts a module uses as dict keys or subscripts."""
  found: Set[str] = set()
  for scope in root.all():
    for node in scope.nodes:
      keys = node.keys if isinstance(node, ast.Dict) else [
          node.slice] if isinstance(node, ast.Subscript) else []
      found.update(str(_text(k)) for k in keys
                   if k is not None and _text(k) is not None)
  return frozenset(found)


def around(name: ast.expr) -> Optional[Pattern]:
  """The constant text before and after the one computed part of
  `name`."""
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
    left, right = _text(name.left), _text(name.right)
    if left is not None and right is None:
      return left, ""
    if right is not None and left is None:
      return "", right
    return None
  if isinstance(name, ast.JoinedStr):
    values = name.values
    parts = [i for i, v in enumerate(values)
             if isinstance(v, ast.FormattedValue)]
    if len(parts) != 1:
      return None
    return ("".join(_text(v) or "" for v in values[:parts[0]]),
            "".join(_text(v) or "" for v in values[parts[0] + 1:]))
  if isinstance(name, ast.Call) and isinstance(name.func, ast.Attribute) and (
      name.func.attr == "format") and len(name.args) == 1:
    return _split(_text(name.func.value), ("{}", "{0}"))
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Mod):
    return _split(_text(name.left), ("%s",))
  return None


def hole(name: Optional[ast.expr]) -> Optional[ast.expr]:
  """The one computed part of a name `around` reads.

  >>> ast.unparse(hole(ast.parse('"train_{}".format(n)').body[0].value))
  'n'
  """
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Add):
    left, right = _text(name.left), _text(name.right)
    return name.right if right is None and left is not None else (
        name.left if left is None and right is not None else None)
  if isinstance(name, ast.JoinedStr):
    values = [v.value for v in name.values
              if isinstance(v, ast.FormattedValue)]
    return values[0] if len(values) == 1 else None
  if isinstance(name, ast.Call) and isinstance(name.func, ast.Attribute) and (
      name.func.attr == "format") and len(name.args) == 1:
    return name.args[0]
  if isinstance(name, ast.BinOp) and isinstance(name.op, ast.Mod):
    return name.right
  return None


def _split(text: Optional[str], holes: Tuple[str, ...]
           ) -> Optional[Pattern]:
  """The text before and after its one hole."""
  if text is None:
    return None
  for hole in holes:
    if text.count(hole) == 1 and "{" not in text.replace(hole, ""):
      before, after = text.split(hole)
      return before, after
  return None


def _text(node: ast.AST) -> Optional[str]:
  if isinstance(node, ast.Constant) and isinstance(node.value, str):
    return node.value
  return None
