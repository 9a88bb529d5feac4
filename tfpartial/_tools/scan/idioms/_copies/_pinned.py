"""A whole variable that a step trains, set back to a number right after
that step in every pass of the training loop (`optimizer.apply_gradients(
zip(grads, params))`, then `params[-1].assign(1.56)`: "keep t0"; or held
at 0): the step moves it and the write undoes the move, so it never
changes while the others train. A hand-made freeze of a whole variable:
exact as it is, the optimizer's work on it wasted.

The step is a statement of the loop's own body before the write, or of
the function's own body when the function runs once per step (each
call runs both): a method named `train_step` (Keras calls it each
step), a method a loop body of its own class calls as `self.<name>(...)`
(`for x in data: self.step(x)`) or as `<name>.<method>(...)` where
`<name>` is bound in that scope to an instance of the class
(`trainer = Trainer(); for x in data: trainer.step(x)`), or a function
that is not a method
which a loop body of the same module calls by its bare name (`for x in
data: step(x)`); never by the last part of another call's name
(`layer.build(None)` in a loop is no call of a function `build`), nor
from another module (`from model import step` in a training script is
not followed). No `continue`, `break` or `return` between them;
`X[k]` is a whole variable only when every
binding of `X` is a list (a literal, a comprehension, `tuple(...)` of
one, `.trainable_variables`, or that item of each tuple the function
`X` is unpacked from returns), else a part of one (`emb[0]` of a
variable); a name is one when the list names it (`self.t0` too) or it
is unpacked from the list (`t1, t0 = params`).

Not one: a variable set once before the loop (an initial value, also
in a function called once: zero gradients applied to build the slots,
then a start value), a write of the variable's own value
(`assign(tf.clip_by_value(v, 0, 1))`: a projection), a write under a
test inside the loop (a periodic reset), a write once per pass of an
outer loop whose inner loop runs the steps (a reset each epoch), a
variable the step does not train (a learning rate, a counter)."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Set, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._sources._train_step import var_list_of

# A loop whose body runs once per pass.
_Loop = Union[ast.For, ast.AsyncFor, ast.While]
# The steps whose list names the variables they train.
_STEPS = frozenset({"apply_gradients", "minimize"})
# The attributes that are a model's list of variables.
_WEIGHTS = frozenset({"trainable_variables", "trainable_weights", "weights"})
# The steps before a write: a list shared along a body, and how many.
_Before = Tuple[List[ast.Call], int]


def pinned(call: ast.Call, scope: _scopes.Scope, target: ast.AST,
           value: ast.AST, flow: Flow) -> Optional[ast.Call]:
  """The step that trains `target` when `call` sets it back to a number
  after that step in each pass of their loop, else None."""
  if not _number(value):
    return None
  steps, count = _steps_before(scope).get(id(call), ([], 0))
  return next((step for step in steps[:count] if _trains(
      var_list_of(step), target, scope, flow)), None)


def whole_item(scope: _scopes.Scope, target: ast.AST, flow: Flow) -> bool:
  """Whether `target` is an item, by a fixed index, of a list of
  variables a step of `scope` trains (`params[-1]` beside
  `apply_gradients(zip(grads, params))`, `params` bound to a list): a
  whole variable, not a part of one."""
  if not isinstance(target, ast.Subscript) or not _fixed(target.slice):
    return False
  # Worked out once per function, by binding: a long one holds many writes.
  listed = scope.once((whole_item, 0, 0), lambda: frozenset(
      key for node in scope.nodes
      if isinstance(node, ast.Call) and _names.call_name(node) in _STEPS
      for key in [_list_key(scope, var_list_of(node), flow)]
      if key is not None))
  assert isinstance(listed, frozenset)
  key = _list_key(scope, target.value, flow)
  return key is not None and key in listed


def _list_key(scope: _scopes.Scope, node: Optional[ast.AST],
              flow: Flow) -> Optional[object]:
  """What a list of variables is bound to, when it is one: a name every
  binding of which in its function is a list (`_listing`), by that
  function and name; a model's `.trainable_variables` itself, by its
  text; else None (one variable, a parameter, anything else)."""
  if isinstance(node, ast.Attribute) and node.attr in _WEIGHTS:
    return ast.unparse(node)
  if not isinstance(node, ast.Name):
    return None
  name = node.id
  listed = scope.once((_list_key, name, 0), lambda: bool(
      scope.defs.get(name)) and all(
          _bound_to_list(d, scope, flow) for d in scope.defs[name]))
  return (id(scope), name) if listed else None


def _bound_to_list(bound: _scopes.Def, scope: _scopes.Scope, flow: Flow
                   ) -> bool:
  """Whether one binding of a name is a list of variables: a list, or
  the item at its place of every tuple the function it is unpacked from
  returns (`fn, params = make()`, `make` ending `return fn, [a, b]`)."""
  if bound.outer is not None or bound.inner:
    return False
  if bound.part is None:
    return _listing(bound.value)
  place, width = bound.part
  callee = flow.callee(bound.value, scope) if isinstance(
      bound.value, ast.Call) else None
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  returned = _returns(callee)
  return bool(returned) and all(
      isinstance(r, ast.Tuple) and len(r.elts) == width and _listing(
          r.elts[place]) for r in returned)


def _listing(value: Optional[ast.AST]) -> bool:
  """A list of variables written as one: a literal, a comprehension, a
  model's `.trainable_variables`, `list(table.values())`, `tuple(...)`
  of a comprehension."""
  if isinstance(value, (ast.List, ast.Tuple, ast.ListComp)):
    return True
  if isinstance(value, ast.Attribute):
    return value.attr in _WEIGHTS
  if not (isinstance(value, ast.Call) and _names.call_name(value) in (
      "list", "tuple") and len(value.args) == 1 and not value.keywords):
    return False
  made = value.args[0]
  return isinstance(made, (ast.ListComp, ast.GeneratorExp)) or isinstance(
      made, ast.Call) and _names.call_name(made) == "values"


def _returns(function: ast.AST) -> List[Optional[ast.expr]]:
  """The values a function's own `return`s give (not those of the
  functions it defines)."""
  found: List[Optional[ast.expr]] = []
  todo = list(ast.iter_child_nodes(function))
  while todo:
    each = todo.pop()
    if isinstance(each, _names.DEFINITIONS + (ast.Lambda,)):
      continue
    if isinstance(each, ast.Return):
      found.append(each.value)
    todo.extend(ast.iter_child_nodes(each))
  return found


def _steps_before(scope: _scopes.Scope) -> Dict[int, _Before]:
  """For each write that is a statement of a loop's body, or of the
  function's own body when the function runs once per step
  (`_per_step`), the steps that are statements of that body before it
  with no `continue`, `break` or `return` between; worked out once per
  function."""
  def find() -> Dict[int, _Before]:
    found: Dict[int, _Before] = {}
    # Each pass of a loop, and each call of a function run once per
    # step, runs its body's statements in order.
    bodies = [loop.body for loop in _loops(scope.node)]
    if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
        _per_step(scope)):
      bodies.append(scope.node.body)
    for body in bodies:
      steps: List[ast.Call] = []
      for statement in body:
        if _leaves(statement):
          steps = []
        made = statement.value if isinstance(
            statement, (ast.Expr, ast.Assign)) else None
        if not isinstance(made, ast.Call):
          continue
        if _names.call_name(made) in _STEPS:
          steps.append(made)
        elif isinstance(statement, ast.Expr):
          found[id(made)] = (steps, len(steps))
    return found
  before = scope.once((_steps_before, 0, 0), find)
  assert isinstance(before, dict)
  return before


def _per_step(scope: _scopes.Scope) -> bool:
  """Whether the function of `scope` runs once per step: a method named
  `train_step` (Keras' per-step override), a method a loop body of its
  own class calls as `self.<name>(...)`, or a function that is not a
  method which a loop body of its module calls by its bare name; not
  one called once (building slots)."""
  if scope.cls is not None and scope.name == "train_step":
    return True
  module = scope
  while module.parent is not None:
    module = module.parent
  # One pass per module, however many functions ask.
  called = module.once((_per_step, 0, 0), lambda: _called_in_loops(
      module.node))
  assert isinstance(called, frozenset)
  if scope.cls is not None:
    return (id(scope.cls.node), scope.name) in called
  return (0, scope.name) in called


def _called_in_loops(tree: ast.AST) -> FrozenSet[Tuple[int, str]]:
  """The calls in the bodies of the loops of `tree` that may run a
  function of the module: a bare name, as `(0, name)` (`step(x)`), and
  `self.<name>(...)` inside a class, as `(id(class node), name)`; not
  another call by the last part of its name (`layer.build(None)`), nor
  one in a function or class a loop body defines (run when called, not
  per pass).

  >>> sorted(_called_in_loops(ast.parse(
  ...     "setup()\\nfor x in data():\\n  step(x)\\n  layer.build(x)\\n"
  ...     "  def f():\\n    g()")))
  [(0, 'step')]
  """
  found: Set[Tuple[int, str]] = set()
  classes = {n.name: id(n) for n in getattr(tree, "body", [])
             if isinstance(n, ast.ClassDef)}
  # Per function (or the module, 0): each name -> the class of the one
  # instance it is bound to (None: bound to anything else too, by `=` or
  # otherwise: `_binds`).
  bound: Dict[int, Dict[str, Optional[int]]] = {}
  # `name.method(...)` in a loop body: (its function, name, method).
  on_instances: List[Tuple[int, str, str]] = []
  plain: Set[int] = set()  # The names `_bind` read, by id.
  # A node, whether a loop body holds it, the class `self` stands for,
  # the function whose names it reads.
  todo: List[Tuple[ast.AST, bool, int, int]] = [(tree, False, 0, 0)]
  while todo:
    node, looped, cls, home = todo.pop()
    if isinstance(node, ast.Call) and looped:
      called = node.func
      if isinstance(called, ast.Name):
        found.add((0, called.id))
      elif isinstance(called, ast.Attribute) and isinstance(
          called.value, ast.Name):
        if cls and called.value.id == "self":
          found.add((cls, called.attr))
        on_instances.append((home, called.value.id, called.attr))
    _bind(node, classes, bound.setdefault(home, {}), plain)
    if isinstance(node, ast.ClassDef):
      cls = id(node)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
      home = id(node)
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
      heads = [node.test] if isinstance(node, ast.While) else [
          node.target, node.iter]
      todo.extend((each, True, cls, home) for each in node.body)
      todo.extend((each, looped, cls, home)
                  for each in [*heads, *node.orelse])
      continue
    inner = looped and not isinstance(node, _names.DEFINITIONS)
    todo.extend((each, inner, cls, home)
                for each in ast.iter_child_nodes(node))
  # `trainer = Trainer(...)`, then `for x in data: trainer.step(x)`.
  for home, name, method in on_instances:
    made = bound.get(home, {}).get(name)
    if made is not None:
      found.add((made, method))
  return frozenset(found)


def _bind(node: ast.AST, classes: Dict[str, int],
          bound: Dict[str, Optional[int]], plain: Set[int]) -> None:
  """Record what `node` binds a name to: for an assignment, the class of
  the module it makes an instance of, else None (a name bound twice to
  two things: None), its names' ids kept in `plain`; None for a name
  bound otherwise (`_binds`), not one of `plain`."""
  if not isinstance(node, ast.Assign):
    if id(node) not in plain:
      bound.update(dict.fromkeys(_binds(node)))
    return
  made = node.value.func.id if isinstance(node.value, ast.Call) and (
      isinstance(node.value.func, ast.Name)) else None
  for target in node.targets:
    for each in ast.walk(target):
      if isinstance(each, ast.Name):
        plain.add(id(each))
        cls = classes.get(made or "") if each is target else None
        bound[each.id] = cls if bound.get(each.id, cls) == cls else None


def _binds(node: ast.AST) -> List[str]:
  """The names `node` binds other than by a plain assignment: a store or
  `del` (a loop or `with` target, `+=`, an annotation, a walrus), an
  import, a parameter, a definition, `global`/`nonlocal`, `except .. as`.

  >>> [_binds(n) for n in ast.parse("import a.b as c, d.e").body[0].names]
  [['c'], ['d']]
  """
  if isinstance(node, ast.Name):
    return [] if isinstance(node.ctx, ast.Load) else [node.id]
  if isinstance(node, ast.alias):
    return [node.asname or node.name.split(".")[0]]
  if isinstance(node, ast.arg):
    return [node.arg]
  if isinstance(node, (ast.Global, ast.Nonlocal)):
    return list(node.names)
  if isinstance(node, _names.DEFINITIONS) or isinstance(
      node, ast.ExceptHandler) and node.name:
    return [getattr(node, "name")]
  return []


def _leaves(statement: ast.stmt) -> bool:
  """Whether a statement holds a `continue`, a `break` (of its loop or
  of one inside it) or a `return`: either way the pass may skip what
  follows."""
  todo: List[ast.AST] = [statement]
  while todo:
    node = todo.pop()
    if isinstance(node, (ast.Continue, ast.Break, ast.Return)):
      return True
    if not isinstance(node, _names.DEFINITIONS + (ast.Lambda,)):
      todo.extend(ast.iter_child_nodes(node))
  return False


def _fixed(index: ast.AST) -> bool:
  """A literal integer index (`0`, `-1`)."""
  if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
    index = index.operand
  return isinstance(index, ast.Constant) and type(index.value) is int


def _number(value: ast.AST) -> bool:
  """A literal number (`1.56`, `-2`, `0.0`)."""
  if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
    value = value.operand
  return isinstance(value, ast.Constant) and not isinstance(
      value.value, bool) and isinstance(value.value, (int, float))


def _trains(listed: Optional[ast.AST], target: ast.AST,
            scope: _scopes.Scope, flow: Flow) -> bool:
  """Whether the step's list `listed` holds `target`: an item of it by a
  fixed index (`params[-1]` of `zip(grads, params)`, `params` bound to a
  list), or a name the literal list writes (in the call, or where its one
  name is bound)."""
  if listed is None:
    return False
  if isinstance(target, ast.Subscript):
    key = _list_key(scope, listed, flow)
    return _fixed(target.slice) and key is not None and (
        key == _list_key(scope, target.value, flow))
  if isinstance(target, ast.Name) and _unpacked_from(
      target, listed, scope, flow):
    return True
  if isinstance(listed, ast.Name):
    defs = scope.defs.get(listed.id, ())
    listed = defs[0].value if len(defs) == 1 and (
        defs[0].part is None) else listed
  name = _names.dotted(target) if isinstance(
      target, (ast.Name, ast.Attribute)) else None
  if name is None or not isinstance(listed, (ast.List, ast.Tuple)):
    return False
  # The list's names (`t0`, `self.t0`), once per list: a body may write
  # each of many.
  names = scope.once((_trains, id(listed), 0), lambda: frozenset(
      _names.dotted(e) for e in listed.elts))
  assert isinstance(names, frozenset)
  return name in names


def _unpacked_from(target: ast.Name, listed: ast.AST,
                   scope: _scopes.Scope, flow: Flow) -> bool:
  """Whether every binding of `target` unpacks it from the step's list
  (`t1, t0 = params`, `params` a list of variables bound once): an item
  of that list, a whole variable."""
  key = _list_key(scope, listed, flow)
  defs = scope.defs.get(target.id, ())
  return key is not None and bool(defs) and all(
      d.part is not None and d.outer is None and not d.inner and (
          _list_key(scope, d.value, flow) == key) for d in defs)


def _loops(node: ast.AST) -> List[_Loop]:
  """The `for` and `while` loops of a function or module, not of the
  functions it defines."""
  found: List[_Loop] = []
  todo = list(ast.iter_child_nodes(node))
  while todo:
    each = todo.pop()
    if isinstance(each, _names.DEFINITIONS + (ast.Lambda,)):
      continue
    if isinstance(each, (ast.For, ast.AsyncFor, ast.While)):
      found.append(each)
    todo.extend(ast.iter_child_nodes(each))
  return found
