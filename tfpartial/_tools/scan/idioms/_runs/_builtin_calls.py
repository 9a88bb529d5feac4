"""Which calls of a module call a builtin: a called name resolved in the
call's own scope chain (its function's locals and parameters, the
functions enclosing it, the module, then the builtins; a class body
encloses none of its methods; `global` and `nonlocal` honoured), or
the builtin named through `builtins` (`builtins.eval(...)`, `import
builtins as b; b.vars(...)`, `from builtins import vars as v; v()`,
`__builtins__['eval']`, `getattr(builtins, 'eval')`); and a builtin
held as a value where it may be called later (`run = eval; run(k)`,
`map(eval, keys)`). Two walks a module, and a call resolved in as
many steps as it is nested deep."""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan._analysis import Analysis

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
  each name of one read as a value where it may be called later: bound
  to a name the module calls (`run = eval; run(k)`, a default `run=eval`)
  or passed as an argument (`map(vars, xs)`); not compared or kept in a
  table (`fn is not eval`, `{'eval': eval}`).

  >>> tree = ast.parse("def f(vars):\\n  return vars()\\nvars()\\n"
  ...                  "import builtins as b\\nb.eval('1')\\n"
  ...                  "r = getattr\\nr(b, k)\\nok = locals is f")
  >>> sorted(builtin_calls(tree).values())
  ['eval', 'getattr', 'vars']
  """
  module = _Scope(tree, None)
  uses: List[_Use] = []
  scopes = _fill(module, _owned(tree), uses)
  called = {id(n.func) for n, _ in uses if isinstance(n, ast.Call)}
  held = _held(tree, uses, scopes)
  found: Dict[int, str] = {}
  for node, scope in uses:
    if not isinstance(node, ast.Call) and id(node) in called:
      continue  # The call's own entry stands for it (`eval(s)()` stays).
    if not isinstance(node, ast.Call) and id(node) not in held:
      continue  # Read where it is never called (`fn is eval`).
    name = _resolved(node.func if isinstance(node, ast.Call) else node,
                     scope)
    if name in DYNAMIC:
      found[id(node)] = name
  return found


def of_module(analysis: Analysis, tree: ast.AST) -> Dict[int, str]:
  """`builtin_calls(tree)`, read once a scan: the unread-gradient check
  and the project's unnamed reads both ask it of a module."""
  found = analysis.once(f"builtin_calls:{id(tree)}",
                        lambda: builtin_calls(tree))
  assert isinstance(found, dict)
  return found


def _held(tree: ast.AST, uses: List[_Use],
          scopes: List[_Scope]) -> Set[int]:
  """The ids of the values of `tree` that may be called later: the
  arguments of a call, and the values bound to a plain name that a call
  of that name resolves to, scope by scope (`run = eval; run(k)`, `def
  f(run=eval): run(k)`, `(run := eval)`; not another function's `run`).

  >>> tree = ast.parse("r = vars\\nr()\\nok = eval is f\\n"
  ...                  "map(exec, x)\\ndef g(run):\\n  run(1)\\n"
  ...                  "def h():\\n  run = eval")
  >>> uses = []
  >>> scopes = _fill(_Scope(tree, None), _owned(tree), uses)
  >>> sorted(type(n).__name__ for n in ast.walk(tree)
  ...        if id(n) in _held(tree, uses, scopes))
  ['Constant', 'Name', 'Name', 'Name']
  """
  passed: Set[int] = set()
  bound: List[Tuple[str, int, Optional[ast.AST]]] = []
  for node in ast.walk(tree):
    if isinstance(node, ast.Call):
      passed.update(id(a.value if isinstance(a, ast.Starred) else a)
                    for a in node.args)
      passed.update(id(k.value) for k in node.keywords)
    elif isinstance(node, ast.Assign):
      bound += [(t.id, id(node.value), None) for t in node.targets
                if isinstance(t, ast.Name)]
    elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(
        node.target, ast.Name) and node.value is not None:
      bound.append((node.target.id, id(node.value), None))
    elif isinstance(node, _FUNCTIONS):
      bound += [(name, value, node) for name, value in _defaults(node.args)]
  where = {id(n): s for n, s in uses}
  owner = {id(s.node): s for s in scopes}
  homes = {(n.func.id, id(_home(n.func.id, s))) for n, s in uses
           if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
  held = set(passed)
  for name, value, function in bound:
    scope = owner.get(id(function)) if function else where.get(value)
    home = _home(name, scope) if scope else None
    if home is not None and (name, id(home)) in homes:
      held.add(value)
  return held


def _defaults(args: ast.arguments) -> List[Tuple[str, int]]:
  """Each parameter given a default, and the default's id."""
  plain = [*args.posonlyargs, *args.args]
  pairs = list(zip(plain[len(plain) - len(args.defaults):],
                   args.defaults))
  pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)
            if d is not None]
  return [(a.arg, id(d)) for a, d in pairs]


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
          calls: List[_Use]) -> List[_Scope]:
  """Walks the module once: each node's names bound into the scope it
  belongs to, each call and each name read kept with its scope; gives
  every scope."""
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
    # A `:=` target is bound by `_bind` where it binds, not here.
    children = [node.value] if isinstance(node, ast.NamedExpr) and (
        isinstance(node.target, ast.Name)) else ast.iter_child_nodes(node)
    stack += [(n, scope) for n in children]
  for each in scopes:  # A name a function declares `global` and binds.
    module.bound.update(n for n, kind in each.declared.items()
                        if kind == "global" and n in each.bound)
  return scopes


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
  if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
    home = scope  # `:=` in a comprehension binds in the scope around it.
    while isinstance(home.node, _COMPREHENSIONS) and home.parent:
      home = home.parent
    home.bound.add(node.target.id)
    return
  scope.bound.update(_names.bound_names(node))



def _resolved(func: ast.AST, scope: _Scope) -> str:
  """The builtin `func` names from `scope`, or "" when it names none:
  a name, an attribute of the `builtins` module (`b.eval`), an entry of
  `__builtins__` (`__builtins__['eval']`) or a `getattr` of the module
  by a literal name (`getattr(builtins, 'eval')`)."""
  if isinstance(func, ast.Name):
    home = _home(func.id, scope)
    if home is None:
      return func.id
    return home.builtins.get(func.id, "")
  if isinstance(func, ast.Attribute) and _is_builtins(func.value, scope):
    return func.attr
  if isinstance(func, ast.Subscript) and isinstance(
      func.slice, ast.Constant) and _is_builtins(func.value, scope):
    return str(func.slice.value)
  if isinstance(func, ast.Call) and len(func.args) >= 2 and isinstance(
      func.args[1], ast.Constant) and _is_builtins(func.args[0], scope) and (
          _resolved(func.func, scope) == "getattr"):
    return str(func.args[1].value)
  return ""


def _is_builtins(node: ast.AST, scope: _Scope) -> bool:
  """Whether `node` names the builtins: `__builtins__` unbound, or a
  name the `builtins` module is imported as."""
  if not isinstance(node, ast.Name):
    return False
  home = _home(node.id, scope)
  return home is None and node.id == "__builtins__" or (
      home is not None and node.id in home.modules)


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
