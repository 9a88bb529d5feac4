"""Whether a mask is fixed while a trained input trains, shown by what
feeds or writes it (part of `_masked_inputs`): a placeholder every feed
of which is fixed, a variable no step trains every write of which is, an
array loaded once from a file.

A feed is fixed for the loop it runs in when nothing it reads is bound
anew in that loop and it draws nothing (`{mask: np.random...}`, `feed[
mask] = batch_mask` with `batch_mask` taken in the loop are new each
step); a feed outside any loop is fixed when its function runs the
training loop after it (fed once, before the loop), or when every caller
passes what the feed reads fixed for the caller's own loop. A fill of
zeros or ones is the same in each step. Nothing here reads a name's
spelling."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._masks import _input_index
from tfpartial._tools.scan.idioms._masks._mask_origins import drawn

Index = _input_index.Index
PLACEHOLDERS = {"placeholder", "placeholder_with_default"}
_FILLS = {"zeros", "ones", "zeros_like", "ones_like", "full"}
# Calls that give the same array for the same arguments.
_PURE = {"array", "asarray", "repeat", "reshape", "expand_dims", "stack",
         "tile", "astype", "copy", "float32", "broadcast_to", "squeeze",
         "list", "tuple", "float", "transpose", "concatenate"}
_WRITES = {"assign", "assign_add", "assign_sub", "load"}
# What runs a step inside a loop.
_STEPS = {"run", "apply_gradients", "minimize", "train_on_batch", "fit",
          "optimize"}


class Feeds:
  """Answers, for one module, whether a mask is fixed for the run."""

  def __init__(self, analysis: Analysis, index: Index):
    self.analysis = analysis
    self.index = index
    self._outside: Dict[int, bool] = {}
    self._bound: Dict[int, Set[str]] = {}  # id(loop) -> what it binds.
    self._changed: Dict[int, Set[str]] = {}  # ... and changes by calls.
    # What is passed to a function that writes its parameter.
    self._passed: Optional[Set[str]] = None
    self._elsewhere: Dict[str, bool] = {}  # A name -> set elsewhere.
    # id(function) -> the last line a loop running a step starts on.
    self._last_loop: Dict[int, int] = {}
    self._trains: Optional[Set[str]] = None
    # id(placeholder) -> (the value fed, the dict or store, its scope).
    self._fed: Optional[Dict[int, List[Tuple[ast.expr, ast.AST,
                                             _scopes.Scope]]]] = None

  def placeholder_fixed(self, call: ast.Call) -> bool:
    """Whether every feed of the placeholder `call` is fixed (one left
    with its default is)."""
    if self._fed is None:
      self._fed = {}
      for key, value, node, scope in self.index.feeds:
        for target in self._names_of(key, scope, 0):
          self._fed.setdefault(target, []).append((value, node, scope))
    feeds = self._fed.get(id(call), [])
    if not feeds:
      return _names.call_name(call) == "placeholder_with_default"
    return all(self.fixed_value(value, node, scope)
               for value, node, scope in feeds)

  def variable_fixed(self, name: str, trained: Set[str]) -> bool:
    """Whether a variable no step trains is written, and only written
    values fixed for the run (a placeholder fed once, a fill)."""
    writes = self.index.writes.get(name, [])
    if not writes or name in trained or self._written_as_parameter(name):
      return False
    for value, call, scope in writes:
      placeholder = self._placeholder(value, scope)
      if placeholder is not None:
        if not self.placeholder_fixed(placeholder):
          return False
      elif not self.fixed_value(value, call, scope):
        return False
    return True

  def _written_as_parameter(self, name: str) -> bool:
    """Whether a function writes its parameter (`m.assign(...)` in `def
    refresh(m)`) something not a fill, and is passed the variable."""
    if self._passed is None:
      self._passed = set()
      project = self.analysis.project
      for key, writes in self.index.writes.items():
        for value, _, scope in writes[:8]:
          function = scope.node
          if key.split(".")[0] in set(scope.params) - {"self"} and (
              isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
          ) and not _fill(value):
            for _, call in project.calls_named([function.name], [
                self.analysis.module(scope)]):
              self._passed.update(n for n in map(_names.dotted, [
                  *call.args, *(k.value for k in call.keywords)]) if n)
    return name in self._passed

  def set_elsewhere(self, name: str, scope: _scopes.Scope) -> bool:
    """Whether another module may feed or write the mask `name` (an
    attribute, or a name of the module's own): a key of a dict or a feed
    (`{a.mask: ...}`, `feed[a.mask] = `), or a write (`t.mask.assign(
    ...)`) of an attribute so spelled, or of the name imported."""
    last = name.split(".")[-1]
    if not name.startswith("self.") and (
        "." in name or scope.parent is not None):
      return False  # Local to a function: out of other modules' reach.
    if last not in self._elsewhere:
      own = self.analysis.module(scope)
      project = self.analysis.project
      self._elsewhere[last] = any(
          _sets(project.parsed(m), last) for m in project.all_modules_with(
              [last]) if m is not own)
    return self._elsewhere[last]

  def _placeholder(self, value: ast.expr, scope: _scopes.Scope
                   ) -> Optional[ast.Call]:
    """The placeholder a written value is, if it is one."""
    if isinstance(value, ast.Call) and _names.call_name(
        value) in PLACEHOLDERS:
      return value
    name = _names.dotted(value)
    if name is None:
      return None
    bound = self.index.values(name, scope)
    last = bound[-1][0] if bound else None
    return last if isinstance(last, ast.Call) and _names.call_name(
        last) in PLACEHOLDERS else None

  def _names_of(self, key: ast.expr, scope: _scopes.Scope, depth: int
                ) -> Set[int]:
    """The ids of the placeholders a feed's key names: through the names
    and string keys it is kept under, and `get_tensor_by_name`."""
    found: Set[int] = set()
    if depth <= 4:
      if isinstance(key, ast.Call) and _names.call_name(key) in PLACEHOLDERS:
        found.add(id(key))
      elif isinstance(key, ast.Call) and _names.call_name(
          key) == "get_tensor_by_name" and key.args and isinstance(
              key.args[0], ast.Constant) and isinstance(
                  key.args[0].value, str):
        for call in self.index.named.get(key.args[0].value.split(":")[0],
                                         []):
          found.add(id(call))
      elif isinstance(key, ast.Subscript) and isinstance(
          key.slice, ast.Constant) and isinstance(key.slice.value, str):
        for value, place in self.index.keyed.get(key.slice.value, [])[:8]:
          found |= self._names_of(value, place, depth + 1)
      elif isinstance(key, (ast.Name, ast.Attribute)):
        name = _names.dotted(key)
        for value, place, _ in (self.index.values(name, scope)
                                if name is not None else [])[-4:]:
          found |= self._names_of(value, place, depth + 1)
    return found

  def fixed_value(self, value: ast.expr, where: ast.AST,
                  scope: _scopes.Scope) -> bool:
    """Whether a value fed (or written) at `where` is fixed for the run."""
    if drawn(value, scope) or _calls_other(value):
      return False
    if _fill(value):
      return True
    order = self.analysis.order(scope)
    loop = _input_index.loop_around(where, order.parent)
    if loop is not None:
      read = _read_names(value)
      return not (read & self._bound_in(loop) or _touched(
          read, self._changed_in(loop, scope))) or (
              self._outside_training(loop, order.parent))
    function = _input_index.function_around(where, order.parent)
    if function is None or self._runs_a_loop(function, where):
      return True  # Fed once, before the loop that trains.
    params = set(scope.params) - {"self"}
    read = _read_names(value)
    roots = {n.split(".")[0] for n in read}
    if roots - params - _scopes.imported_names(scope) - {"self"} or any(
        n.startswith("self.") for n in read):
      return False  # Made in the function, or state: anew with each call.
    return self._callers_fixed(function, read & params)

  def _bound_in(self, loop: ast.AST) -> Set[str]:
    if id(loop) not in self._bound:
      self._bound[id(loop)] = _bound_in(loop)
    return self._bound[id(loop)]

  def _changed_in(self, loop: ast.AST, scope: _scopes.Scope) -> Set[str]:
    """What a loop may change through calls: an object it calls a method
    of or passes to a call (`loader.advance()`, `refresh(m)`), and what a
    project function it calls assigns (a `self.` attribute, a global, an
    array in place)."""
    if id(loop) not in self._changed:
      found: Set[str] = set()
      for call in (n for n in ast.walk(loop) if isinstance(n, ast.Call)):
        if _names.call_name(call) in _PURE | _FILLS | {"print"}:
          continue
        receiver = _names.dotted(call.func.value) if isinstance(
            call.func, ast.Attribute) else None
        if receiver is not None and receiver.split(".")[0] not in (
            _scopes.imported_names(scope)):
          found.add(receiver)
        found.update(n for n in map(_names.dotted, [
            *call.args, *(k.value for k in call.keywords)]) if n)
        if receiver in (None, "self"):
          function = self.analysis.flow.callee(call, scope)
          if function is not None:
            found |= _assigns(function)
      self._changed[id(loop)] = found
    return self._changed[id(loop)]

  def _runs_a_loop(self, function: ast.AST, where: ast.AST) -> bool:
    """Whether the function runs a step in a loop after `where`."""
    if id(function) not in self._last_loop:
      self._last_loop[id(function)] = max((
          n.lineno for n in ast.walk(function) if isinstance(
              n, (ast.For, ast.While)) and any(
                  isinstance(c, ast.Call) and _names.call_name(c) in _STEPS
                  for c in ast.walk(n))), default=0)
    return self._last_loop[id(function)] > getattr(where, "lineno", 0)

  def _outside_training(self, loop: ast.AST,
                        parent_of: _input_index.ParentOf) -> bool:
    """Whether a loop runs no train op itself, only in loops inside it
    (a loop over files around the training loop: what it binds is new
    with each run, not with each step)."""
    if id(loop) not in self._outside:
      trains = self._train_ops()
      runs = [c for c in ast.walk(loop) if isinstance(c, ast.Call) and (
          _names.call_name(c) == "run") and c.args and (
              _read_names(c.args[0]) & trains)]
      self._outside[id(loop)] = bool(runs) and all(
          _input_index.loop_around(c, parent_of) is not loop for c in runs)
    return self._outside[id(loop)]

  def _train_ops(self) -> Set[str]:
    """The names the module binds a `minimize` or `apply_gradients`."""
    if self._trains is None:
      self._trains = {name for name, bound in self.index.assigned.items()
                      if any(isinstance(v, ast.Call) and _names.call_name(
                          v) in {"minimize", "apply_gradients"}
                             for v, _, _ in bound)}
    return self._trains

  def _callers_fixed(self, function: ast.AST, used: Set[str]) -> bool:
    """Whether every call of the function passes what the feed reads
    fixed for the loop the call is in (and there is a call)."""
    name = getattr(function, "name", "")
    params = [a.arg for a in function.args.args] if isinstance(
        function, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
    method = bool(params) and params[0] == "self"
    project = self.analysis.project
    calls = list(project.calls_named([name], project.all_modules_with(
        [name])))[:16] if name else []
    if not calls:
      return False
    for place, call in calls:
      for param in used:
        argument = _argument(call, params, param, method)
        if argument is None:
          continue
        if drawn(argument, place) or _calls_other(argument):
          return False
        loop = _input_index.loop_around(call, self.analysis.order(
            place).parent)
        if loop is not None and _read_names(argument) & self._bound_in(
            loop):
          return False
    return True


def _argument(call: ast.Call, params: List[str], param: str,
              method: bool) -> Optional[ast.expr]:
  for keyword in call.keywords:
    if keyword.arg == param:
      return keyword.value
  position = params.index(param) - (1 if method else 0)
  if 0 <= position < len(call.args):
    return call.args[position]
  return None


def _fill(value: ast.expr) -> bool:
  """`np.zeros(n)`, `np.ones_like(x)`: the same zeros or ones each step."""
  return isinstance(value, ast.Call) and _names.call_name(value) in _FILLS


def _calls_other(value: ast.expr) -> bool:
  """Whether a value calls anything but an array's pure reshaping (a
  batch's loader, `next`, a run): a new value with each call."""
  return any(isinstance(n, ast.Call) and _names.call_name(n) not in (
      _PURE | _FILLS) for n in ast.walk(value))


def _read_names(value: ast.expr) -> Set[str]:
  found: Set[str] = set()
  for node in ast.walk(value):
    if isinstance(node, (ast.Name, ast.Attribute)):
      name = _names.dotted(node)
      if name is not None:
        found.add(name)
  return found


def _bound_in(loop: ast.AST) -> Set[str]:
  """The names a loop binds or changes in place (its target, `x = `,
  `x[i] = `, `x += `)."""
  found: Set[str] = set()
  for node in ast.walk(loop):
    targets: List[ast.AST] = []
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
      targets = [node.target]
    elif isinstance(node, ast.Assign):
      targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
      targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
      targets = [node.optional_vars]
    for target in targets:
      for part in ast.walk(target):
        if isinstance(part, ast.Subscript):
          part = part.value
        name = _names.dotted(part) if isinstance(
            part, (ast.Name, ast.Attribute)) else None
        if name is not None:
          found.add(name)
  return found


def _touched(read: Set[str], changed: Set[str]) -> bool:
  """Whether a name read is (or is part of) what a loop changes."""
  return any(name == c or name.startswith(c + ".") for name in read
             for c in changed)


def _assigns(function: ast.AST) -> Set[str]:
  """What a function assigns that outlives it: `self.x`, a global, an
  array changed in place (`m[...] = `)."""
  found: Set[str] = set()
  declared = {n for g in ast.walk(function) if isinstance(g, ast.Global)
              for n in g.names}
  for node in ast.walk(function):
    targets = node.targets if isinstance(node, ast.Assign) else [
        node.target] if isinstance(node, ast.AugAssign) else []
    for target in targets:
      inner = target.value if isinstance(target, ast.Subscript) else target
      name = _names.dotted(inner) if isinstance(
          inner, (ast.Name, ast.Attribute)) else None
      if name is not None and (name.startswith("self.") or name in (
          declared) or inner is not target):
        found.add(name)
  return found


def _sets(root: Optional[_scopes.Scope], last: str) -> bool:
  """Whether a module feeds or writes an attribute spelled `last` (or the
  name, imported): a dict's key, a subscript's, a write's receiver."""
  if root is None:
    return False
  tree = root.node
  imported = any(isinstance(n, ast.ImportFrom) and any(
      a.name == last for a in n.names) for n in ast.walk(tree))

  def named(node: Optional[ast.AST]) -> bool:
    """`a.mask` (another class's own `self.mask` is its own)."""
    return isinstance(node, ast.Attribute) and node.attr == last and not (
        isinstance(node.value, ast.Name) and node.value.id == "self") or (
            imported and isinstance(node, ast.Name) and node.id == last)

  for node in ast.walk(tree):
    if isinstance(node, ast.Dict) and any(named(k) for k in node.keys) or (
        isinstance(node, ast.Subscript) and isinstance(
            node.ctx, ast.Store) and named(node.slice)) or (
                isinstance(node, ast.Call) and isinstance(
                    node.func, ast.Attribute) and node.func.attr in _WRITES
                and named(node.func.value)):
      return True
  return False
