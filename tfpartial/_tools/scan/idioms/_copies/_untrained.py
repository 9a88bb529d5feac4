"""Variables nothing trains: a `tf.Variable` an object makes for itself
in a class that is no layer (no `call`, `build` or `__call__`), in a
module that holds no train step. An attack's perturbation flipped edge
by edge where a gradient is largest, a counter, a state: written by
hand and never trained, so a write into it freezes nothing. So is a
`tf.Variable` a function with no step makes anew in each pass of a loop
that fills it (a loss's padding mask): no value of it outlives the
pass. So is a variable made with an integer or boolean dtype (a
counter kept per utterance): no gradient reaches it, no optimizer
trains it. A layer's own weight, or a variable of a module that trains,
stays a candidate."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple, Union

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

# Methods that make a class a layer or a model a step trains.
_LAYER_METHODS = {"call", "build", "__call__", "forward"}
# Spellings of a step that trains, in a module's text.
_TRAINING = ("minimize", "apply_gradients", "fit(", "train_on_batch",
             "assign_sub", "ptimizer")


def untrained(target: ast.AST, scope: _scopes.Scope,
              analysis: Analysis) -> bool:
  """Whether `target` (`self.w` or an element of it) is a variable its
  object makes with `tf.Variable` in a class that is no layer, in a
  module with no train step."""
  while isinstance(target, ast.Subscript):
    target = target.value
  info = scope.cls
  name = _names.dotted(target) or ""
  if info is None or not name.startswith("self.") or name.count(".") != 1:
    return False
  if _LAYER_METHODS & set(info.methods) or any(
      word in analysis.module(scope).source.text for word in _TRAINING):
    return False
  made = analysis.project.attribute(info, name)
  return bool(made) and all(
      isinstance(value, ast.Call) and _names.call_name(value) == "Variable"
      for value, _ in made)


# Calls that make or run a step: a function holding one trains.
_STEPS = {"minimize", "apply_gradients", "fit", "train_on_batch",
          "gradient", "gradients", "compute_gradients"}


def made_each_pass(target: ast.AST, scope: _scopes.Scope,
                   analysis: Analysis) -> bool:
  """Whether `target` (an element of a local name) is a `tf.Variable`
  its function makes anew in each pass of a loop that also writes it, a
  function with no step that hands the variable to no function of the
  project: a buffer filled for one pass (a loss's padding mask zeroed
  element by element, then stacked), whose values no step carries on."""
  while isinstance(target, ast.Subscript):
    target = target.value
  if not isinstance(target, ast.Name):
    return False
  defs = scope.defs.get(target.id, [])
  if len(defs) != 1 or not isinstance(defs[0].value, ast.Call) or (
      _names.call_name(defs[0].value) != "Variable") or (
          not defs[0].where.loops):
    return False
  loops = [n for n in ast.walk(scope.node) if isinstance(
      n, (ast.For, ast.While)) and id(n) in defs[0].where.loops]
  calls = [n for n in scope.nodes if isinstance(n, ast.Call)]
  return bool(loops) and all(
      any(n is target for n in ast.walk(loop)) for loop in loops) and not (
          any(_names.call_name(c) in _STEPS for c in calls)) and not any(
              analysis.project.resolve(scope, _names.dotted(c.func) or "")
              is not None and any(isinstance(a, ast.Name) and a.id == (
                  target.id) for a in c.args) for c in calls)


# Dtypes no gradient reaches: a variable of one is never trained.
_INTEGRAL = {"int8", "int16", "int32", "int64", "uint8", "uint16",
             "uint32", "uint64", "bool"}


def integral(target: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `target` (`self.x`, an element of it, or a local name) is
  made only as a `tf.Variable` of an integer or boolean dtype (given to
  the variable or to its initial value: `tf.Variable(tf.zeros([n],
  dtype=tf.int32))`), besides `None` placeholders (`[None] * n`)."""
  while isinstance(target, ast.Subscript):
    target = target.value
  name = _names.dotted(target) or ""
  if isinstance(target, ast.Name):
    values = [d.value for d in scope.defs.get(target.id, [])]
  elif scope.cls is not None and name.startswith("self.") and (
      name.count(".") == 1):
    values = _made(scope.cls).get(name, [])
  else:
    return False
  made = [v for v in values if isinstance(v, ast.Call) and (
      _names.call_name(v) == "Variable")]
  return bool(made) and all(_integral_dtype(v) for v in made) and all(
      v in made or _placeholder(v) for v in values)


def _placeholder(value: object) -> bool:
  """`None`, `[None] * n`, `[None for _ in range(n)]`: no value yet."""
  if isinstance(value, ast.ListComp):
    value = value.elt
  elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
    value = value.left
  if isinstance(value, (ast.List, ast.Tuple)):
    return all(_placeholder(e) for e in value.elts)
  return isinstance(value, ast.Constant) and value.value is None


def _made(info: _scopes.ClassInfo) -> Dict[str, List[ast.expr]]:
  """`self.x` -> the values a class assigns to it or to its elements,
  read once per class (each write into a weight asks)."""
  return info.home.once((_made, id(info.node), 0),
                        lambda: _assigned_in(info.node))


def _assigned_in(cls: ast.ClassDef) -> Dict[str, List[ast.expr]]:
  """The values a class assigns to each `self.x` or to its elements."""
  values: Dict[str, List[ast.expr]] = {}
  for node in _scopes.walk(cls):
    if isinstance(node, ast.Assign):
      for target in node.targets:
        while isinstance(target, ast.Subscript):
          target = target.value
        name = _names.dotted(target)
        if name is not None:
          values.setdefault(name, []).append(node.value)
  return values


def _integral_dtype(call: ast.Call) -> bool:
  """Whether a `tf.Variable` call, or the call making its initial value,
  names an integer or boolean dtype."""
  first = call.args[0] if call.args else next(
      (k.value for k in call.keywords if k.arg == "initial_value"), None)
  for each in (call, first):
    for keyword in getattr(each, "keywords", []):
      if keyword.arg == "dtype":
        value = keyword.value
        text = value.value if isinstance(value, ast.Constant) else (
            _names.dotted(value) or "").rsplit(".", 1)[-1]
        return text in _INTEGRAL
  return False


def cast_integral(value: ast.AST) -> bool:
  """Whether a written value is cast to an integer or boolean dtype
  (Keras' own step counter set from another: `self._train_counter.
  assign(tf.cast(self.step, tf.int64))`): no gradient reaches it.

  >>> cast_integral(ast.parse("tf.cast(step, tf.int64)").body[0].value)
  True
  >>> cast_integral(ast.parse("tf.cast(saved, 'float32')").body[0].value)
  False
  """
  if not isinstance(value, ast.Call) or _names.call_name(value) != "cast":
    return False
  dtype = value.args[1] if len(value.args) > 1 else next(
      (k.value for k in value.keywords if k.arg == "dtype"), None)
  text = dtype.value if isinstance(dtype, ast.Constant) else (
      _names.dotted(dtype) or "").rsplit(".", 1)[-1] if dtype else ""
  return text in _INTEGRAL


def entry_of_variables(target: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `target` is an entry (`accum[i]`) of a name its function,
  or one around it, binds only to a list of new variables (`accum =
  [tf.Variable(tf.zeros_like(w)) for w in weights]`), a list the same
  function hands to the optimizer as gradients (`apply_gradients(zip(
  accum, weights))`): one whole accumulator, no weight."""
  if not isinstance(target, ast.Subscript) or not isinstance(
      target.value, ast.Name) or not _applied_as_gradients(
          target.value.id, scope):
    return False
  name = target.value.id
  function = scope.node
  if name not in scope.defs and scope.parent is not None and isinstance(
      function, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in {
          a.arg for a in function.args.args}:
    # A parameter: what each call in the function around passes for it.
    given = _passed(function, name, scope.parent)
    return bool(given) and all(_new_variables_named(
        g, scope.parent) for g in given)
  return _new_variables_named(target.value, scope)


def _applied_as_gradients(name: str, scope: _scopes.Scope) -> bool:
  """Whether `scope` applies the list `name` as gradients:
  `apply_gradients(zip(name, ...))`."""
  for call in scope.nodes:
    if isinstance(call, ast.Call) and _names.call_name(
        call) == "apply_gradients" and call.args:
      pairs = call.args[0]
      if isinstance(pairs, ast.Call) and _names.call_name(
          pairs) == "zip" and pairs.args and isinstance(
              pairs.args[0], ast.Name) and pairs.args[0].id == name:
        return True
  return False


def _passed(function: Union[ast.FunctionDef, ast.AsyncFunctionDef],
            param: str, around: _scopes.Scope) -> List[ast.expr]:
  """What the calls of `function` by name in the scope around it pass
  for `param` (by position or keyword); empty when one passes none."""
  names = [a.arg for a in function.args.args]
  if param not in names:
    return []
  index, given = names.index(param), []
  for node in ast.walk(around.node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id == function.name):
      keyword = next((k.value for k in node.keywords if k.arg == param),
                     None)
      early = node.args[:index + 1]
      if keyword is None and (len(early) <= index or any(
          isinstance(a, ast.Starred) for a in early)):
        return []
      given.append(keyword if keyword is not None else node.args[index])
  return given


def _new_variables_named(name: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `name` is bound, in `scope` or one around it, only to
  lists of new variables."""
  if not isinstance(name, ast.Name):
    return False
  around: Optional[_scopes.Scope] = scope
  while around is not None and name.id not in around.defs:
    around = around.parent
  defs = around.defs.get(name.id, []) if around is not None else []
  return bool(defs) and all(d.replaces and d.part is None and _new_variables(
      d.value) for d in defs)


def _new_variables(value: ast.expr) -> bool:
  """`[tf.Variable(...) for w in ws]` or `[tf.Variable(...), ...]`."""
  items = [value.elt] if isinstance(value, ast.ListComp) else (
      value.elts if isinstance(value, (ast.List, ast.Tuple)) else [])
  return bool(items) and all(isinstance(i, ast.Call) and _names.call_name(
      i) == "Variable" for i in items)


def enumerated_entry(target: ast.AST, write: ast.AST,
                     scope: _scopes.Scope) -> Optional[ast.Name]:
  """The loop's item `w` when `target` is `ws[i]` written inside `for i,
  w in enumerate(ws)` (neither bound again in it): the same variable,
  named by its entry (`m.trainable_weights[i].assign(w * mask)`)."""
  if not isinstance(target, ast.Subscript) or not isinstance(
      target.slice, ast.Name):
    return None
  listed = ast.unparse(target.value)
  for index, item, walked in _enumerations(scope).get(id(write), []):
    if index == target.slice.id and walked == listed:
      return ast.copy_location(ast.Name(item, ast.Load()), target)
  return None


_Enumerated = Dict[int, List[Tuple[str, str, str]]]


def _enumerations(scope: _scopes.Scope) -> _Enumerated:
  """(index, item, list walked, as written) of each `for i, w in
  enumerate(ws)` of `scope` that binds neither name again, outermost
  first, by the id of each node inside it: one walk of each loop, made
  once per scope however many writes it holds."""
  return scope.once((_enumerations, None, 0), lambda: _read_loops(scope))


def _read_loops(scope: _scopes.Scope) -> _Enumerated:
  found: _Enumerated = {}
  for loop in scope.nodes:
    if not isinstance(loop, ast.For) or not isinstance(
        loop.target, ast.Tuple) or len(loop.target.elts) != 2 or not (
            isinstance(loop.iter, ast.Call)) or _names.call_name(
                loop.iter) != "enumerate" or len(loop.iter.args) != 1:
      continue
    index, item = loop.target.elts
    if not (isinstance(index, ast.Name) and isinstance(item, ast.Name)) or (
        _rebound(loop, {index.id, item.id})):
      continue
    entry = (index.id, item.id, ast.unparse(loop.iter.args[0]))
    for node in ast.walk(loop):
      found.setdefault(id(node), []).append(entry)
  return found


def _rebound(loop: ast.For, names: Set[str]) -> bool:
  """Whether the body of `loop` assigns one of `names` again."""
  return any(isinstance(n, ast.Name) and n.id in names and isinstance(
      n.ctx, ast.Store) for each in loop.body for n in ast.walk(each))
