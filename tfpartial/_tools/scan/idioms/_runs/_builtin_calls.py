"""Which calls of a module call a builtin: a called name resolved in the
call's own scope chain (its function's locals and parameters, the
functions enclosing it, the module, then the builtins; a class body
encloses none of its methods; `global` and `nonlocal` honoured), or
the builtin named through `builtins` (`builtins.eval(...)`, `import
builtins as b; b.vars(...)`, `from builtins import vars as v; v()`).
One walk a module, and a call resolved in as many steps as it is
nested deep."""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names

# The builtins that may read a name they are not given as a word.
DYNAMIC = frozenset({"vars", "eval", "exec", "locals", "globals",
                     "getattr"})
# The nodes that open a scope of their own.
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp,
                   ast.GeneratorExp)


class _Scope:
  """One scope: its names bound, declared `global`, declared `nonlocal`,
  and those `from builtins import X as name` binds (name -> X)."""

  def __init__(self, node: ast.AST, parent: Optional["_Scope"]):
    self.node = node
    self.parent = parent
    self.bound: Set[str] = set()
    self.declared: Dict[str, str] = {}  # name -> "global"/"nonlocal".
    self.builtins: Dict[str, str] = {}  # name -> the builtin's name.
    self.modules: Set[str] = set()  # Names of the `builtins` module.


# A call, or a name that may be a builtin's read as a value, and the
# scope it is in.
_Use = Tuple[ast.expr, _Scope]


def builtin_calls(tree: ast.AST) -> Dict[int, str]:
  """id(node) -> the builtin of `DYNAMIC` each call of `tree` calls, and
  each name of one read as a value (`run = eval`, `map(vars, xs)`): it
  may be called anywhere under any name.

  >>> tree = ast.parse("def f(vars):\\n  return vars()\\nvars()\\n"
  ...                  "import builtins as b\\nb.eval('1')\\nr = getattr")
  >>> sorted(builtin_calls(tree).values())
  ['eval', 'getattr', 'vars']
  """
  module = _Scope(tree, None)
  uses: List[_Use] = []
  _fill(module, _owned(tree), uses)
  called = {id(n.func) for n, _ in uses if isinstance(n, ast.Call)}
  found: Dict[int, str] = {}
  for node, scope in uses:
    if id(node) in called:
      continue  # The call's own entry stands for it.
    name = _resolved(node.func if isinstance(node, ast.Call) else node,
                     scope)
    if name in DYNAMIC:
      found[id(node)] = name
  return found


def _owned(node: ast.AST) -> Iterable[ast.AST]:
  """The children of a scope's node that belong to its own scope (a
  function's defaults and decorators are its enclosing scope's)."""
  if isinstance(node, _FUNCTIONS):
    body = node.body if isinstance(node.body, list) else [node.body]
    return list(_arg_names(node.args)) + body
  if isinstance(node, ast.ClassDef):
    return node.body
  if isinstance(node, _COMPREHENSIONS):
    rest = [node.key, node.value] if isinstance(node, ast.DictComp) else [
        node.elt]
    first = node.generators[0]
    return [first.target, *first.ifs, *rest, *node.generators[1:]]
  return list(ast.iter_child_nodes(node))


def _outside(node: ast.AST) -> List[ast.AST]:
  """The parts of a scope's node its enclosing scope evaluates."""
  if isinstance(node, _FUNCTIONS):
    args = node.args
    parts: List[ast.AST] = [*args.defaults,
                            *(d for d in args.kw_defaults if d)]
    if not isinstance(node, ast.Lambda):
      parts += [*node.decorator_list, *(
          [node.returns] if node.returns else []), *(
              a.annotation for a in _args(args) if a.annotation)]
    return parts
  if isinstance(node, ast.ClassDef):
    return [*node.decorator_list, *node.bases, *node.keywords]
  if isinstance(node, _COMPREHENSIONS):
    return [node.generators[0].iter]
  return []


def _args(args: ast.arguments) -> List[ast.arg]:
  return [*args.posonlyargs, *args.args, *args.kwonlyargs, *(
      [args.vararg] if args.vararg else []), *(
          [args.kwarg] if args.kwarg else [])]


def _arg_names(args: ast.arguments) -> Iterable[ast.AST]:
  """A parameter as the name it binds (`ast.Name`, stored)."""
  return [ast.Name(id=a.arg, ctx=ast.Store()) for a in _args(args)]


def _fill(module: _Scope, top: Iterable[ast.AST],
          calls: List[_Use]) -> None:
  """Walks the module once: each node's names bound into the scope it
  belongs to, each call and each name read kept with its scope."""
  stack = [(node, module) for node in top]
  scopes = [module]
  while stack:
    node, scope = stack.pop()
    if isinstance(node, (*_FUNCTIONS, ast.ClassDef, *_COMPREHENSIONS)):
      inner = _Scope(node, scope)
      scopes.append(inner)
      stack += [(n, inner) for n in _owned(node)]
      stack += [(n, scope) for n in _outside(node)]
      scope.bound.update(_names.bound_names(node))
      continue
    _bind(node, scope)
    if isinstance(node, ast.Call) or isinstance(node, ast.Name) and (
        isinstance(node.ctx, ast.Load)) or isinstance(
            node, ast.Attribute) and isinstance(node.value, ast.Name):
      calls.append((node, scope))
    stack += [(n, scope) for n in ast.iter_child_nodes(node)]
  for each in scopes:  # A name a function declares `global` and binds.
    module.bound.update(n for n, kind in each.declared.items()
                        if kind == "global" and n in each.bound)


def _bind(node: ast.AST, scope: _Scope) -> None:
  """Records in `scope` what `node` binds or declares."""
  if isinstance(node, (ast.Global, ast.Nonlocal)):
    kind = "global" if isinstance(node, ast.Global) else "nonlocal"
    scope.declared.update((n, kind) for n in node.names)
    return
  if isinstance(node, ast.ImportFrom) and node.module == "builtins" and (
      not node.level):
    scope.builtins.update((a.asname or a.name, a.name) for a in node.names)
  if isinstance(node, ast.Import):
    scope.modules.update(a.asname or a.name for a in node.names
                         if a.name == "builtins")
  scope.bound.update(_names.bound_names(node))
  if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
    home = scope  # `:=` in a comprehension binds in the scope around it.
    while isinstance(home.node, _COMPREHENSIONS) and home.parent:
      home = home.parent
    home.bound.add(node.target.id)



def _resolved(func: ast.AST, scope: _Scope) -> str:
  """The builtin `func` names from `scope`, or "" when it names none."""
  if isinstance(func, ast.Name):
    home = _home(func.id, scope)
    if home is None:
      return func.id
    return home.builtins.get(func.id, "")
  if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
    name = func.value.id
    home = _home(name, scope)
    if home is None and name == "__builtins__" or (
        home is not None and name in home.modules):
      return func.attr
  return ""


def _home(name: str, scope: _Scope) -> Optional[_Scope]:
  """The scope that binds `name` as read from `scope`, None for the
  builtins: a class body is skipped from the scopes nested in it."""
  here: Optional[_Scope] = scope
  while here is not None:
    declared = here.declared.get(name)
    if declared == "global":
      while here.parent is not None:
        here = here.parent
      return here if name in here.bound else None
    if declared is None and name in here.bound and (
        here is scope or not isinstance(here.node, ast.ClassDef)):
      return here
    here = here.parent
  return None
