"""Whether a write sets a model to an average of its own weights and
another model's, both read as they are now: a mean teacher's or an EMA
model's update (`for t, s in zip(teacher.get_weights(),
student.get_weights()): new.append(a * t + (1 - a) * s)`, then
`teacher.set_weights(new)`). Every element of every weight moves by
numbers the same for all of them, and the values come from two live
models, none saved before a step: a second model computed from the
trained one, not saved values put back into a frozen part. A list that
mixes in a mask, a slice or a copy of the target itself taken earlier
(`saved`) is not one. So is a list written out of entries each mixed
that way from weights unpacked from the two models (`w, b =
ema.get_weights()`, `w_new, b_new = model.get_weights()`), where each
factor a helper is handed is a number at its calls and the model it
writes is none a step there trains. Part of the writes `write-back`
reads."""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# The arithmetic of an average.
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
# How a model's weights are read out, all of them, as they are now.
_READS = frozenset({"get_weights"})


def averaged(call: ast.Call, scope: _scopes.Scope, target: ast.AST,
             value: ast.AST) -> bool:
  """Whether `call` is `target.set_weights(value)` and `value` is an
  average of two live models' weights (`from_two_models`)."""
  return _names.call_name(call) == "set_weights" and from_two_models(
      scope, target, value)


def from_two_models(scope: _scopes.Scope, target: ast.AST,
                    value: ast.AST) -> bool:
  """Whether `value`, written into the model `target`, is a list each
  entry of which mixes, by arithmetic and scalars, the entry of
  `target.get_weights()` with that of another model's `get_weights()`,
  both read where the list is built (in its comprehension, or beside
  the list in the same turn of the same loops).

  >>> import ast
  >>> f = ast.parse('''
  ... def f(ema, model, d=0.99):
  ...   new = []
  ...   for e, w in zip(ema.get_weights(), model.get_weights()):
  ...     new.append(e * d + w * (1 - d))
  ...   ema.set_weights(new)''')
  >>> scope = list(_scopes.collect(f).all())[1]
  >>> from_two_models(scope, ast.Name("ema"), ast.Name("new"))
  True
  >>> from_two_models(scope, ast.Name("model"), ast.Name("new"))
  True
  >>> from_two_models(scope, ast.Name("other"), ast.Name("new"))
  False
  """
  own = _names.dotted(target)
  if own is None:
    return False
  if isinstance(value, ast.ListComp):
    return _mixes(scope, own, value.elt, value.generators, None)
  if isinstance(value, ast.List) and value.elts:
    # `w, b = ema.get_weights()`; `w = w * d + w_new * (1 - d)`; ...;
    # `ema.set_weights([w, b])`: each entry mixed, one by one.
    return all(_entry_mixes(scope, own, e) for e in value.elts)
  if not isinstance(value, ast.Name):
    return False
  key = (from_two_models, (own, value.id), 0)  # Judged once per list.
  return scope.once(key, lambda: _list_mixes(scope, own, value.id)) is True


def _list_mixes(scope: _scopes.Scope, own: str, name: str) -> bool:
  """`from_two_models` of the list named `name`."""
  # The list made once; its `append`s are kept as further (adding) defs.
  defs = [d for d in scope.defs.get(name, []) if d.replaces]
  if len(defs) != 1:
    return False
  made = defs[0].value
  if isinstance(made, ast.ListComp):
    return _mixes(scope, own, made.elt, made.generators, defs[0].where.loops)
  if not (isinstance(made, ast.List) and not made.elts):
    return False
  appends = _appends(scope, name)
  return bool(appends) and all(
      loop is not None and _mixes(scope, own, added, [loop], _turn(
          scope, name, added, loop)) for added, loop in appends)


def _entry_mixes(scope: _scopes.Scope, own: str, entry: ast.expr) -> bool:
  """Whether `entry` of a written list is a name last assigned, once, by
  arithmetic of a name unpacked from `own.get_weights()` and one from
  another model's, and scalars, each read as the function reads it."""
  if not isinstance(entry, ast.Name):
    return False
  defs = scope.defs.get(entry.id, [])
  reached = scope.reaching(entry.id, entry) if defs else ()
  if len(reached) != 1 or not isinstance(defs[reached[0]].value, ast.BinOp):
    return False
  mixed = defs[reached[0]].value
  models: Dict[str, str] = {}
  for name in ast.walk(mixed):
    if not isinstance(name, ast.Name) or name.id not in scope.defs:
      continue
    read = [scope.defs[name.id][i].value for i in scope.reaching(
        name.id, name)]
    model = _weights_of(scope, read[0], None) if len(read) == 1 else None
    if model is not None:
      models[name.id] = model
  return own in models.values() and len(set(models.values())) == 2 and (
      _arithmetic(mixed, set(models), scope)) and _passed_right(
          scope, own, mixed)


def _passed_right(scope: _scopes.Scope, own: str, mixed: ast.AST) -> bool:
  """Whether each parameter of the helper `scope` that `mixed` reads as
  a factor is a number where the helper is called (`update(e, e_frozen,
  mask)` with `mask` a mask is no average), and no call hands in, as the
  model `own` written, one its function trains (`m.student.layers[i]`
  where `m.student.trainable_weights` are applied): an average goes into
  the model no step trains."""
  factors = {n.id for n in ast.walk(mixed) if isinstance(n, ast.Name)} & (
      set(scope.params) - {own})
  calls = _local_calls(scope)
  for name in factors:
    # A default stands for a call that passes nothing, and for no call.
    default = _numeric_default(scope.node, name, bare=False)
    passed = [(_argument(scope.node, call, name), home)
              for home, call in calls]
    if not (passed or default) or not all(default if arg is None else (
        _numeric(home, arg, frozenset())) for arg, home in passed):
      return False
  for home, call in calls if own in scope.params else []:
    model = _argument(scope.node, call, own)
    while isinstance(model, ast.Subscript):
      model = model.value
    text = re.sub(r"\.layers?$", "", _names.dotted(model) or "") if (
        model is not None) else ""
    if text and any(t == text or t.startswith(text + ".")
                    for t in _trained_models(home)):
      return False
  return True


def _local_calls(scope: _scopes.Scope
                 ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """(where, the call) of each call of the function `scope`, by its name,
  in the scope that defines it or a scope inside that one."""
  name = getattr(scope.node, "name", None)
  parent = scope.parent
  return [] if name is None or parent is None else [
      (home, n) for home in parent.all() for n in home.nodes if isinstance(
          n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def _argument(function: ast.AST, call: ast.Call,
              name: str) -> Optional[ast.expr]:
  """What `call` passes `function` for its parameter `name` (None: not
  told, or left to a default)."""
  for keyword in call.keywords:
    if keyword.arg == name:
      return keyword.value
  args = getattr(function, "args", None)
  positional = [a.arg for a in [*args.posonlyargs, *args.args]] if (
      isinstance(args, ast.arguments)) else []
  at = positional.index(name) if name in positional else len(call.args)
  fits = at < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args[:at + 1])
  return call.args[at] if fits else None


# Reads of the weights a step trains (`m.student.trainable_weights`).
_TRAINED_READS = frozenset({"trainable_weights", "trainable_variables"})


def _trained_models(scope: _scopes.Scope) -> Set[str]:
  """The models whose trainable weights `scope` reads, or that it fits."""
  return {text for text in (_names.dotted(n.value) for n in scope.nodes if (
      isinstance(n, ast.Attribute) and n.attr in _TRAINED_READS) or (
          isinstance(n, ast.Attribute) and n.attr == "fit")) if text}


def _turn(scope: _scopes.Scope, name: str, added: Optional[ast.expr],
          loop: ast.For) -> Optional[Tuple[int, ...]]:
  """The loops around the `for` `loop` that adds `added` to the list
  `name`: a name read there is read in the same turn as the list is
  built (None: not known)."""
  for each in scope.defs.get(name, []):
    if each.value is added and id(loop) in each.where.loops:
      return each.where.loops[:each.where.loops.index(id(loop))]
  return None


_Loop = Union[ast.For, ast.comprehension]
_Added = List[Tuple[Optional[ast.expr], Optional[ast.For]]]


def _appends(scope: _scopes.Scope, name: str) -> _Added:
  """(value added, the innermost `for` around it) of each use of the
  list `name` in `scope` other than a read: `name.append(x)`; a store of
  any other kind (`name[i] = x`, `name += x`) stands for None."""
  return _all_appends(scope).get(name, [])


def _all_appends(scope: _scopes.Scope) -> Dict[str, _Added]:
  """`_appends` of every name of `scope`, read in one pass, once."""
  return scope.once((_all_appends, None, 0), lambda: _read_appends(scope))


def _read_appends(scope: _scopes.Scope) -> Dict[str, _Added]:
  found: Dict[str, _Added] = {}
  spoilt: Set[str] = set()
  around = _loops_around(scope)
  for node in scope.nodes:
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
      name = node.func.value.id
      if node.func.attr != "append" or len(node.args) != 1:
        spoilt.add(name)
      else:
        found.setdefault(name, []).append(
            (node.args[0], around.get(id(node))))
    elif isinstance(node, (ast.Assign, ast.AugAssign)):
      targets = node.targets if isinstance(node, ast.Assign) else [
          node.target]
      spoilt |= {_names.root(t) for t in targets if isinstance(
          t, ast.Subscript)}
      spoilt |= {t.id for t in targets if isinstance(
          node, ast.AugAssign) and isinstance(t, ast.Name)}
  found.update({name: [(None, None)] for name in spoilt})
  return found


def _loops_around(scope: _scopes.Scope) -> Dict[int, ast.For]:
  """The innermost `for` whose body holds each node of `scope`'s
  function (one line, `for ...: new.append(x)`, too), by node id: one
  walk of the function, made once."""
  return scope.once((_loops_around, None, 0), lambda: _read_loops(scope))


def _read_loops(scope: _scopes.Scope) -> Dict[int, ast.For]:
  around: Dict[int, ast.For] = {}
  stack: List[Tuple[ast.AST, Optional[ast.For]]] = [(scope.node, None)]
  while stack:
    node, loop = stack.pop()
    if loop is not None:
      around[id(node)] = loop
    for field, child in ast.iter_fields(node):
      inner = node if isinstance(node, ast.For) and field == "body" else loop
      for each in child if isinstance(child, list) else [child]:
        if isinstance(each, ast.AST):
          stack.append((each, inner))
  return around


def _mixes(scope: _scopes.Scope, own: str, added: Optional[ast.AST],
           loops: Sequence[_Loop], place: Optional[Tuple[int, ...]]) -> bool:
  """Whether `added`, under the one loop `loops` over `zip(a, b)` (a
  `for` or a comprehension), mixes its two items by arithmetic and
  scalars, `a` and `b` the weights of `own` and of another model, read
  in the loop or, named, in the turn of the loops `place` that makes the
  list (None: in the loop only)."""
  if len(loops) != 1 or added is None:
    return False
  loop = loops[0]
  items = loop.target
  if not (isinstance(items, ast.Tuple) and len(items.elts) == 2 and all(
      isinstance(e, ast.Name) for e in items.elts)):
    return False
  zipped = loop.iter
  if not (isinstance(zipped, ast.Call) and _names.call_name(zipped) == "zip"
          and len(zipped.args) == 2 and not zipped.keywords):
    return False
  models = [_weights_of(scope, a, place) for a in zipped.args]
  if None in models or own not in models or len(set(models)) != 2:
    return False
  names = [e.id for e in items.elts if isinstance(e, ast.Name)]
  if isinstance(added, ast.Name) and added.id not in names:
    # `new_w = a * t + (1 - a) * s; new.append(new_w)`, in the loop.
    defs = scope.defs.get(added.id, [])
    if len(defs) != 1 or id(loop) not in defs[0].where.loops:
      return False
    added = defs[0].value
  return _arithmetic(added, set(names), scope)


def _weights_of(scope: _scopes.Scope, node: ast.AST,
                place: Optional[Tuple[int, ...]]) -> Optional[str]:
  """The model `m` of `m.get_weights()`, or of a name assigned from it
  once in `scope` in the same turn of the loops `place` (a copy taken
  before them is saved values, not the model as it is now)."""
  if isinstance(node, ast.Name):
    defs = scope.defs.get(node.id, [])
    if len(defs) != 1 or place is None or defs[0].where.loops != place:
      return None
    node = defs[0].value
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr in _READS and not (
          node.args or node.keywords):
    return _names.dotted(node.func.value)
  return None


def _arithmetic(node: ast.AST, items: Set[str],
                scope: _scopes.Scope) -> bool:
  """Whether `node` reads both `items`, each whole, by arithmetic with
  scalars (`_scalar`) and nothing else: no call, no element chosen, no
  mask."""
  read: Set[str] = set()
  settings = _settings(node)
  for part in ast.walk(node):
    if isinstance(part, ast.Name) and part.id in items:
      read.add(part.id)
    elif isinstance(part, ast.Name) and id(part) not in settings and (
        not _scalar(scope, part.id, frozenset())):
      return False
    elif isinstance(part, ast.BinOp) and not isinstance(part.op, _OPS):
      return False
    elif isinstance(part, (ast.Call, ast.Subscript, ast.Lambda,
                           ast.IfExp, ast.Compare)):
      return False
  return read == items


# Calls of numbers that give a number (a decay warmed up, `min(d, (1 +
# step) / (10 + step))`).
_NUMERIC_CALLS = frozenset({"min", "max", "float", "abs"})


def _scalar(scope: _scopes.Scope, name: str, seen: FrozenSet[str]) -> bool:
  """Whether `name` holds a number: a parameter without a default or
  with a numeric one (a decay passed in), or a name every assignment of
  which in `scope` is numeric (`_numeric`); a mask (`mask = np.ones(...)`,
  `mask=None`) is not one."""
  if name in scope.params:
    return _numeric_default(scope.node, name)
  defs = scope.defs.get(name, [])
  if not defs and scope.parent is not None:  # A module's constant.
    return _scalar(scope.parent, name, seen)
  if name in seen:
    return True  # `d = 1.0 if early else d`: its other values decide.
  key = (_scalar, name, 0)  # Judged once per name, however many read it.
  return scope.once(key, lambda: bool(defs) and all(
      d.value is not None and _numeric(scope, d.value, seen | {name})
      for d in defs)) is True


def _settings(node: ast.AST) -> Set[int]:
  """The ids of the names whose attributes `node` reads (`self` of
  `self.alpha`): an attribute is a setting, its object no number."""
  return {id(a.value) for a in ast.walk(node) if isinstance(
      a, ast.Attribute) and isinstance(a.value, ast.Name)}


def _numeric_default(function: ast.AST, name: str, bare: bool = True
                     ) -> bool:
  """Whether the parameter `name` of `function` has a numeric default,
  or none and `bare`."""
  args = getattr(function, "args", None)
  if not isinstance(args, ast.arguments):
    return False
  positional = [*args.posonlyargs, *args.args]
  defaults: Dict[str, Optional[ast.expr]] = dict(zip(
      [a.arg for a in positional[len(positional) - len(args.defaults):]],
      args.defaults))
  defaults.update(zip([a.arg for a in args.kwonlyargs], args.kw_defaults))
  default = defaults.get(name)
  return bare if default is None else isinstance(default, ast.Constant) and (
      isinstance(default.value, (int, float))) and not isinstance(
          default.value, bool)


def _numeric(scope: _scopes.Scope, value: ast.expr,
             seen: FrozenSet[str]) -> bool:
  """Whether `value` is arithmetic of numbers, settings (attributes) and
  scalar names."""
  settings = _settings(value)
  for part in ast.walk(value):
    if id(part) in settings:
      continue
    if isinstance(part, ast.Call):
      if _names.call_name(part) not in _NUMERIC_CALLS or part.keywords:
        return False
    elif isinstance(part, ast.Constant) and not isinstance(
        part.value, (int, float)):
      return False
    elif isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load) and (
        part.id not in _NUMERIC_CALLS) and not _scalar(scope, part.id, seen):
      return False
    elif isinstance(part, (ast.Subscript, ast.List, ast.Tuple, ast.Lambda)):
      return False
  return True
