"""Names unpacked from a call of a data helper of the project
(`x, t, y = batch(train_x, train_t, fake_y, n)`, the helper returning
`X[i], T[i], Y[i]`): each name is computed from the arguments its own
element reads, not from every argument. A network distilled from a
trained one's outputs (the targets `y`) takes only `x`: the other
network feeds its loss, not its input. Part of `_stages`.

Only a plain helper is read so: a function of the project called by
name, whose every `return` is a tuple as long as the names, with no
nested function, `yield`, `global` or `nonlocal`, that makes no variable
and opens no scope; a method call as a statement on a name it binds
(`xb.append(feats[i])`) adds its arguments to that name's values, any
other call as a statement (`np.copyto(xb, ...)`) keeps the whole call;
an element computed from names its function does not
bind but library modules and builtins (a global model), or calling
anything but a library function or a builtin (`model(x)` of a model
passed in), keeps the whole call."""

from __future__ import annotations

import ast
import builtins
from typing import Callable, Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow

# Each name's assigned values, with their lines (`_stage_marks`').
Defs = Dict[str, List[Tuple[ast.expr, int]]]
_BUILTINS = frozenset(dir(builtins))
# What makes a helper more than data: variables, layers, scopes.
_MAKERS = frozenset(_names.VARIABLES) | _names.TF_SCOPES | frozenset({
    "dense", "conv2d", "Dense", "Conv2D", "Embedding", "LSTM", "GRU"})


class Unpacked:
  """The elements of each plain helper the project's calls unpack, read
  once per function (`elements` of one analysis)."""

  def __init__(self, flow: Flow):
    self.flow = flow
    # id(function) -> per element, the parameters it reads; None: whole.
    self._read: Dict[Tuple[int, int], Optional[List[Set[str]]]] = {}

  def narrowed(self, defs: Defs, home: ast.AST, scope: _scopes.Scope
               ) -> Defs:
    """`defs` with each name unpacked from a plain helper's call bound
    to a tuple of the arguments its element reads; `scope` resolves the
    helper's name."""
    changed: Dict[Tuple[str, int], ast.expr] = {}
    for node in _scopes.walk(home):
      if not (isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], (ast.Tuple, ast.List))
              and isinstance(node.value, ast.Call)
              and isinstance(node.value.func, ast.Name)):
        continue
      names = node.targets[0].elts
      if not all(isinstance(e, ast.Name) for e in names):
        continue
      given = self._given(node.value, len(names), scope)
      for name, kept in zip(names, given or []):
        changed[(getattr(name, "id"), id(node.value))] = ast.Tuple(
            elts=kept, ctx=ast.Load())
    if not changed:
      return defs
    return {name: [(changed.get((name, id(value)), value), at)
                   for value, at in values]
            for name, values in defs.items()}

  def _given(self, call: ast.Call, size: int, scope: _scopes.Scope
             ) -> Optional[List[List[ast.expr]]]:
    """Per element of what `call` returns, the arguments it is computed
    from; None when the callee is no plain helper."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords):
      return None
    target = self.flow.project.resolve(scope, getattr(call.func, "id"))
    if not isinstance(target, tuple):
      return None
    function, place = target
    if not isinstance(function, ast.FunctionDef):
      return None
    key = (id(function), size)
    if key not in self._read:
      self._read[key] = _elements(function, size, lambda name: (
          name in _BUILTINS and name not in place.defs) or (
              self.flow.project.external(place, name)))
    read = self._read[key]
    if read is None:
      return None
    params = [a.arg for a in [*function.args.posonlyargs,
                              *function.args.args]]
    bound: Dict[str, ast.expr] = dict(zip(params, call.args))
    bound.update((k.arg, k.value) for k in call.keywords if k.arg)
    return [[bound[p] for p in params + [
        a.arg for a in function.args.kwonlyargs] if p in names and (
            p in bound)] for names in read]


def _elements(function: ast.FunctionDef, size: int,
              library: Callable[[str], bool]) -> Optional[List[Set[str]]]:
  """Per element of the tuples `function` returns, the parameters it is
  computed from (through the names the function assigns); None when
  the function is no plain helper (see the module's docstring).
  `library(name)`: whether a free name is a library module or builtin."""
  args = function.args
  if args.vararg or args.kwarg:
    return None
  params = {a.arg for a in [*args.posonlyargs, *args.args,
                            *args.kwonlyargs]}
  values: Dict[str, List[ast.AST]] = {}
  returns: List[ast.Tuple] = []
  bound: Set[str] = set()  # Every name the function binds, any way.
  for node in ast.walk(function):
    if node is not function and isinstance(node, (
        ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
        ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
      return None
    if isinstance(node, ast.Call) and _names.call_name(node) in _MAKERS:
      return None
    if isinstance(node, ast.Return):
      if not (isinstance(node.value, ast.Tuple) and len(
          node.value.elts) == size and not any(
              isinstance(e, ast.Starred) for e in node.value.elts)):
        return None
      returns.append(node.value)
    elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign,
                           ast.For, ast.comprehension, ast.withitem,
                           ast.NamedExpr)):
      targets = node.targets if isinstance(node, ast.Assign) else [
          getattr(node, "target", None) or getattr(
              node, "optional_vars", None)]
      value = getattr(node, "value", None) or getattr(
          node, "iter", None) or getattr(node, "context_expr", None)
      for target in targets:
        for name in ast.walk(target) if target is not None else ():
          if isinstance(name, ast.Name):
            values.setdefault(name.id, []).extend([value] if value else [])
            bound.add(name.id)
            if isinstance(node, ast.AugAssign):
              values[name.id].append(name)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
      bound.add(node.id)
  if not returns or not _filled(function, values, bound | params):
    return None
  reader = _Reader(params, values, bound, library)
  found: List[Set[str]] = []
  for index in range(size):
    read = reader.read([r.elts[index] for r in returns])
    if read is None:
      return None
    found.append(read)
  return found


def _filled(function: ast.FunctionDef, values: Dict[str, List[ast.AST]],
            local: Set[str]) -> bool:
  """Adds to `values` what each call made as a statement on a `local`
  name puts in it (`xb.append(feats[i])`: `xb` holds `feats[i]`); False
  when another call is a statement (`np.copyto(xb, ...)` may fill what
  it is given)."""
  for node in ast.walk(function):
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
      continue
    call = node.value
    first = call.func
    while isinstance(first, ast.Attribute):
      first = first.value
    if not (isinstance(call.func, ast.Attribute) and isinstance(
        first, ast.Name) and first.id in local):
      return False
    values.setdefault(first.id, []).extend(
        [*call.args, *(k.value for k in call.keywords)])
  return True


class _Reader:
  """The parameters expressions of one helper are computed from; each
  bound name's values are walked once, however many elements read it."""

  def __init__(self, params: Set[str], values: Dict[str, List[ast.AST]],
               bound: Set[str], library: Callable[[str], bool]):
    self.params, self.values = params, values
    self.bound, self.library = bound, library
    # name -> its parameters (None: it reads something else); complete.
    self.done: Dict[str, Optional[Set[str]]] = {}
    self.depth: Dict[str, int] = {}  # The names being read, their depth.

  def read(self, roots: List[ast.AST]) -> Optional[Set[str]]:
    """The parameters `roots` are computed from; None when they read a
    free name that is no library module or builtin, or call anything
    but a library function or a builtin."""
    try:
      found = self._names(roots, 0)
    except RecursionError:
      return None
    return None if found is None else found[0]

  def _names(self, roots: List[ast.AST], depth: int
             ) -> Optional[Tuple[Set[str], int]]:
    """(the parameters, the lowest depth of a name being read that they
    reach) of `roots`, read at `depth`."""
    read: Set[str] = set()
    low = depth
    for root in roots:
      for node in ast.walk(root):
        if isinstance(node, ast.Call):
          first = node.func
          while isinstance(first, ast.Attribute):
            first = first.value
          if not (isinstance(first, ast.Name) and first.id not in self.params
                  and first.id not in self.bound and self.library(first.id)):
            return None  # `model(x)`, `x.predict(...)`: something runs.
        if not isinstance(node, ast.Name) or not isinstance(
            node.ctx, ast.Load):
          continue
        if node.id in self.params:
          read.add(node.id)
        if node.id in self.values:
          got = self._name(node.id, depth + 1)
          if got is None:
            return None
          read |= got[0]
          low = min(low, got[1])
        elif node.id not in self.params and node.id not in self.bound and (
            not self.library(node.id)):
          return None  # A global model or value: not what it is passed.
    return read, low

  def _name(self, name: str, depth: int) -> Optional[Tuple[Set[str], int]]:
    """`_names` of the values of `name`, once complete."""
    if name in self.done:
      known = self.done[name]
      return None if known is None else (known, depth)
    if name in self.depth:
      return set(), self.depth[name]  # A cycle: read where it began.
    self.depth[name] = depth
    got = self._names(self.values[name], depth)
    del self.depth[name]
    if got is None:
      self.done[name] = None
      return None
    if got[1] >= depth:  # Nothing it reached is still being read.
      self.done[name] = got[0]
    return got[0], min(got[1], depth)
