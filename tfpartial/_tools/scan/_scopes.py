"""The scopes of a module: what each name is assigned, function by function.

Flow-insensitive on purpose: a name holds the union of everything it is
ever assigned in its function (appends and `+=` included), which is what
a reader of TF1 graph-building code assumes too. Class attributes
(`self.mask = ...`) are shared by the class's methods.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Set, Tuple, Union

from tfpartial._tools.scan import _names

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


class Scope:
  """One function (or the module): its assignments, parameters, helpers.

  >>> tree = ast.parse("m = [0., 1.]\\ndef f(g):\\n  h = g * m\\n")
  >>> module = collect(tree)
  >>> [(s.name, sorted(s.defs)) for s in module.all()]
  [('<module>', ['m']), ('f', ['h'])]
  """

  def __init__(self, node: ast.AST, parent: Optional["Scope"],
               attributes: Optional[Dict[str, List[ast.expr]]] = None):
    self.node = node
    self.parent = parent
    self.name = getattr(node, "name", "<lambda>" if isinstance(
        node, ast.Lambda) else "<module>")
    self.defs: Dict[str, List[ast.expr]] = {}
    self.params: List[str] = []
    self.functions: Dict[str, FunctionNode] = {}
    self.stored: Set[str] = set()  # Names assigned by subscript: `m[0] = 0`.
    # What each loop name iterates over: `for i, w in enumerate(ws)` -> ws.
    self.loops: Dict[str, ast.expr] = {}
    self.bases: List[str] = []  # The enclosing class's bases, as text.
    self.attributes = attributes if attributes is not None else {}
    self.children: List[Scope] = []
    self.nodes: List[ast.AST] = []  # The nodes of this scope, not nested.
    self.classname = ""

  def all(self) -> Iterator["Scope"]:
    """This scope and every scope inside it."""
    yield self
    for child in self.children:
      yield from child.all()

  def function(self, name: str) -> Optional[Tuple[FunctionNode, "Scope"]]:
    """The helper function `name` visible here and the scope it is in."""
    scope: Optional[Scope] = self
    while scope is not None:
      if name in scope.functions:
        return scope.functions[name], scope
      scope = scope.parent
    return None


def collect(tree: ast.Module) -> Scope:
  """The module's scope, with every function's scope below it."""
  module = Scope(tree, None)
  _fill(module, tree.body)
  return module


def _fill(scope: Scope, body: List[ast.stmt]) -> None:
  stack: List[ast.AST] = list(reversed(body))
  while stack:
    node = stack.pop()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      scope.functions[node.name] = node
      _child(scope, node, node.body)
      stack.extend(reversed(node.decorator_list))
      continue
    if isinstance(node, ast.Lambda):
      _child(scope, node, [ast.Return(node.body)])
      continue
    if isinstance(node, ast.ClassDef):
      attributes: Dict[str, List[ast.expr]] = {}
      for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
          child = _child(scope, item, item.body, attributes)
          child.classname = node.name
          child.bases = [_names.dotted(b) or "" for b in node.bases]
      stack.extend(item for item in reversed(node.body) if not isinstance(
          item, (ast.FunctionDef, ast.AsyncFunctionDef)))
      continue
    scope.nodes.append(node)
    _bind_statement(scope, node)
    stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _child(scope: Scope, node: FunctionNode, body: List[ast.stmt],
           attributes: Optional[Dict[str, List[ast.expr]]] = None) -> Scope:
  child = Scope(node, scope, attributes if attributes is not None
                else scope.attributes)
  args = node.args
  child.params = [a.arg for a in (*args.posonlyargs, *args.args,
                                  *args.kwonlyargs)]
  child.params += [a.arg for a in (args.vararg, args.kwarg) if a]
  scope.children.append(child)
  _fill(child, body)
  return child


def _bind_statement(scope: Scope, node: ast.AST) -> None:
  if isinstance(node, ast.Assign):
    for target in node.targets:
      _bind(scope, target, node.value)
  elif isinstance(node, ast.AnnAssign) and node.value:
    _bind(scope, node.target, node.value)
  elif isinstance(node, ast.AugAssign):
    # `w[0] *= mask` makes `w` hold `w[0] * mask`, for the flow.
    read = ast.parse(ast.unparse(node.target), mode="eval").body
    value = ast.copy_location(ast.BinOp(read, node.op, node.value), node)
    ast.fix_missing_locations(value)
    base: ast.expr = node.target
    while isinstance(base, ast.Subscript):
      base = base.value
    _bind(scope, base, value)
    if isinstance(base, ast.Name) and base.id in scope.loops:
      # NumPy's `w *= m` in `for w in ws` changes the elements of `ws`.
      _bind(scope, scope.loops[base.id], value)
  elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
    _bind(scope, node.target, node.iter)
    if isinstance(node, (ast.For, ast.AsyncFor)):
      _loop(scope, node.target, node.iter)
  elif isinstance(node, ast.withitem) and node.optional_vars is not None:
    _bind(scope, node.optional_vars, node.context_expr)
  elif isinstance(node, ast.NamedExpr):
    _bind(scope, node.target, node.value)
  elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
    call = node.value
    if _names.call_name(call) in {"append", "extend", "insert"} and (
        isinstance(call.func, ast.Attribute)) and call.args:
      _bind(scope, call.func.value, call.args[-1])


def _loop(scope: Scope, target: ast.AST, source: ast.expr) -> None:
  """Record which container a loop name is an element of."""
  if isinstance(source, ast.Call) and source.args and _names.call_name(
      source) in {"enumerate", "reversed", "list"}:
    if _names.call_name(source) == "enumerate" and isinstance(
        target, ast.Tuple) and len(target.elts) == 2:
      target = target.elts[1]
    source = source.args[0]
  if isinstance(target, ast.Name) and isinstance(source, ast.Name):
    scope.loops[target.id] = source


def _bind(scope: Scope, target: ast.AST, value: ast.expr) -> None:
  if isinstance(target, (ast.Tuple, ast.List)):
    for element in target.elts:
      _bind(scope, element, value)
  elif isinstance(target, ast.Starred):
    _bind(scope, target.value, value)
  elif isinstance(target, ast.Name):
    scope.defs.setdefault(target.id, []).append(value)
  elif isinstance(target, ast.Attribute):
    name = _names.dotted(target)
    if name is not None and name.startswith("self."):
      scope.attributes.setdefault(name, []).append(value)
  elif isinstance(target, ast.Subscript):
    name = _names.dotted(target.value)
    if name is not None:
      scope.stored.add(name)
