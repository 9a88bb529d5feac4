"""Whether a step trains no group of its own: its list is a name nothing
binds where it is read (a step left behind by a later version of its
function, `create_optimizer` beside `create_optimizer_v10`: it raises
before it trains). Beside a filtered step of another loss it is no
other half of one model, as a GAN's discriminator is of its generator:
what the filter leaves out stays fixed. A step over every variable of
the graph is still taken for another training beside a filter by slice:
a library's file holds many models' steps (TensorLayer's `ReconLayer`
beside its seq2seq model), and the filtered one may then be one of two
groups of a model (beside a filter by name, see `_whole_elsewhere`).
Part of `var-list-filter`."""

from __future__ import annotations

import ast
import builtins
from typing import Iterator, List, Optional

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels


def no_group(var_list: Optional[ast.AST], labels: Labels,
             scope: _scopes.Scope) -> bool:
  """Whether the step over `var_list` (of those labels, in `scope`)
  trains a list no statement binds."""
  return isinstance(var_list, ast.Name) and not labels and _unbound(
      var_list.id, scope)


def _unbound(name: str, scope: _scopes.Scope) -> bool:
  """Whether neither the step's function (nor one around it) nor the
  module's own statements bind `name` (an assignment, parameter,
  import, definition or star import), and no builtin is it."""
  if hasattr(builtins, name):
    return False
  while scope.parent is not None:
    if any(_binds(n, name) for n in ast.walk(scope.node)):
      return False
    scope = scope.parent
  return isinstance(scope.node, ast.Module) and not any(
      _binds(n, name) for n in _module_level(scope.node))


def _module_level(tree: ast.Module) -> Iterator[ast.AST]:
  """The module's nodes outside its functions' and classes' bodies."""
  stack: List[ast.AST] = [tree]
  while stack:
    node = stack.pop()
    yield node
    if node is tree or not isinstance(node, (
        ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
      stack.extend(ast.iter_child_nodes(node))


def _binds(node: ast.AST, name: str) -> bool:
  """Whether `node` binds `name`."""
  if isinstance(node, ast.Name):
    return node.id == name and not isinstance(node.ctx, ast.Load)
  if isinstance(node, ast.arg):
    return node.arg == name
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    return node.name == name
  if isinstance(node, (ast.Global, ast.Nonlocal)):
    return name in node.names
  if isinstance(node, (ast.Import, ast.ImportFrom)):
    return any(a.name == "*" or (a.asname or a.name).split(".")[0] == name
               for a in node.names)
  return isinstance(node, ast.ExceptHandler) and node.name == name
