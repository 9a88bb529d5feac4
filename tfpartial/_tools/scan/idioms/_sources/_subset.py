"""A strict subset of one model's variables, as the model's own accessor
returns it.

One abstract value, "some of model M's variables", followed through what
an accessor (a method or property of a project class) returns: the
`self.x` it lists (`[self.w, self.b]`, `self.head.trainable_variables`),
local lists it grows (`params.extend(...)`, `params += ...`), the arms of
a conditional, sums, and the same accessor of the parts it holds (`for
layer in self.layers: params.extend(layer.get_params())`, a method of
another class, in another module too). The value is a strict subset where

- a flag chooses between returns that hold more and fewer of the
  model's variables (`if self.train: return [self.f, self.b]` and
  `else: return []`; `[self.w2] if self.freeze_base else [self.w1,
  self.w2]`): the model's own choice to leave some out;
- the model's whole list is cut by position or by a test
  (`self.trainable_variables[-n:]`, `[v for v in self.weights if ...]`);
- a part it gathers is such a subset.

Not a subset: an accessor returning the same variables on every path
(`return [self.w, self.b]`), one whose smaller return is chosen by a test
that the model is not built yet (`if not self.built: return []`), the
step's whole list empty under a flag (a mode that trains nothing, `if
self.training: ... return []`; a part gathered empty is one), and a
whole list uncut. Whether the subset leaves out what the function trains
elsewhere (a GAN's other half, a target network written from it) the
precision gates decide, as for any filter.
"""

from __future__ import annotations

import ast
import itertools
from typing import Dict, FrozenSet, List, Optional, Set, Tuple

from tfpartial._tools.scan import _model_parts
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._project import Project

_DEPTH = 4
# Tests that a model is not built yet: the empty list is no choice.
_UNBUILT = {"built", "_built", "initialized", "_initialized"}
_GROWING = {"append", "extend"}
_TAKING = {"remove", "pop"}
_WRAPPERS = {"list", "set", "tuple", "sorted"}

# The `self.x` an expression holds, and where it is cut to fewer, if it is.
_Held = Tuple[FrozenSet[str], Optional[ast.AST]]


def narrowed(project: Project, info: _scopes.ClassInfo,
             method: _scopes.Scope) -> Optional[ast.AST]:
  """Where the accessor `method` of the class `info` returns a strict
  subset of the model's variables, or None.

  >>> tree = ast.parse(
  ...     "class Conv:\\n"
  ...     "  def __init__(self, tune_bias=True):\\n"
  ...     "    self.tune_bias = tune_bias\\n"
  ...     "    self.w, self.b = tf.Variable(1.), tf.Variable(0.)\\n"
  ...     "  def params(self):\\n"
  ...     "    if self.tune_bias:\\n"
  ...     "      return [self.w, self.b]\\n"
  ...     "    return [self.w]\\n")
  >>> info = _scopes.collect(tree).classes["Conv"]
  >>> narrowed(Project([]), info, info.methods["params"]).lineno
  8
  """
  return _Narrowing(project).method(info, method, 0)


def strict(project: Project, info: _scopes.ClassInfo,
           method: _scopes.Scope, run: bool) -> bool:
  """Whether the accessor `method` of the class `info` returns a strict
  subset of the model's variables: where `narrowed` finds one, or, when
  the step's function runs the model (`run`: another object than the
  step's own), where it reads some of the parts the model's forward runs
  and leaves out another that the class builds (`_some_parts`).

  >>> tree = ast.parse(
  ...     "class Net:\\n"
  ...     "  def __init__(self):\\n"
  ...     "    self.body, self.head = Body(), Dense(2)\\n"
  ...     "  def call(self, x):\\n"
  ...     "    return self.head(self.body(x))\\n"
  ...     "  def head_vars(self):\\n"
  ...     "    return self.head.trainable_variables\\n")
  >>> info = _scopes.collect(tree).classes["Net"]
  >>> method = info.methods["head_vars"]
  >>> strict(Project([]), info, method, True)
  True
  >>> strict(Project([]), info, method, False)
  False
  """
  return run and _some_parts(info, method) or narrowed(
      project, info, method) is not None


class _Narrowing:
  """The evaluation of accessors, memoised per method."""

  def __init__(self, project: Project) -> None:
    self.project = project
    self.memo: Dict[int, Optional[ast.AST]] = {}

  def method(self, info: _scopes.ClassInfo, method: _scopes.Scope,
             depth: int) -> Optional[ast.AST]:
    """Where `method` returns fewer of the model's variables, or None."""
    key = id(method.node)
    if key in self.memo:
      return self.memo[key]
    self.memo[key] = None  # A method reached again while it is read.
    found = self._returns(info, method, depth)
    self.memo[key] = found
    return found

  def _returns(self, info: _scopes.ClassInfo, method: _scopes.Scope,
               depth: int) -> Optional[ast.AST]:
    returns = [n for n in ast.walk(method.node) if isinstance(
        n, ast.Return) and n.value is not None]
    held = [(each, self.held(each.value, info, method, depth))
            for each in returns]
    for _, (_, cut) in held:
      if cut is not None:
        return cut
    for each, (names, _) in held:
      if any(names < other for _, (other, _) in held) and (
          _chosen_by_flag(each, method.node)) and (
              depth > 0 or not _empty(each.value)):
        return each
    return None

  def held(self, node: Optional[ast.AST], info: _scopes.ClassInfo,
           method: _scopes.Scope, depth: int) -> _Held:
    """The `self.x` `node` holds, and where it is cut."""
    if node is None or depth > _DEPTH:
      return frozenset(), None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
      return _joined([self.held(e, info, method, depth) for e in node.elts])
    if isinstance(node, ast.Starred):
      return self.held(node.value, info, method, depth)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
      return _joined([self.held(node.left, info, method, depth),
                      self.held(node.right, info, method, depth)])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
      left = self.held(node.left, info, method, depth)
      return left[0], node if left[0] or _whole(node.left) else left[1]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id in _WRAPPERS) and len(node.args) == 1:
      return self.held(node.args[0], info, method, depth)
    if isinstance(node, ast.IfExp):
      arms = [self.held(node.body, info, method, depth),
              self.held(node.orelse, info, method, depth)]
      joined = _joined(arms)
      if joined[1] is None and (
          arms[0][0] < arms[1][0] or arms[1][0] < arms[0][0]):
        return joined[0], node  # A flag's choice of fewer.
      return joined
    if isinstance(node, ast.Name):
      return self._local(node, info, method, depth)
    if isinstance(node, (ast.Subscript, ast.ListComp)):
      return self._cut(node, info, method, depth)
    if isinstance(node, ast.Call):
      return self._called(node, info, method, depth)
    own = _own_name(node)
    return (frozenset({own}) if own else frozenset()), None

  def _cut(self, node: ast.AST, info: _scopes.ClassInfo,
           method: _scopes.Scope, depth: int) -> _Held:
    """A list of the model's variables cut by position
    (`self.trainable_variables[-2:]`, `params[1:]`) or by a test (`[v for
    v in self.weights if v.shape.ndims > 1]`); an entry of a list is what
    the list holds."""
    if isinstance(node, ast.Subscript):
      whole = self.held(node.value, info, method, depth + 1)
      if (whole[0] or _whole(node.value)) and isinstance(
          node.slice, ast.Slice) and (
              node.slice.lower is not None or node.slice.upper is not None):
        return whole[0], node
      own = _own_name(node.value)
      return (frozenset({own}) if own else whole[0]), whole[1]
    assert isinstance(node, ast.ListComp)
    for each in node.generators:
      held = self.held(each.iter, info, method, depth + 1)
      if (held[0] or _whole(each.iter)) and any(
          _a_choice(test) for test in each.ifs):
        return held[0], node
    return frozenset(), None

  def _local(self, node: ast.Name, info: _scopes.ClassInfo,
             method: _scopes.Scope, depth: int) -> _Held:
    """A local list: its values and what the method adds to it."""
    values: List[ast.AST] = [d.value for d in method.defs.get(node.id, ())
                             if d.value is not None and d.value is not node]
    for each in ast.walk(method.node):
      if isinstance(each, ast.Call) and isinstance(
          each.func, ast.Attribute) and each.func.attr in _GROWING and (
              isinstance(each.func.value, ast.Name)) and (
                  each.func.value.id == node.id):
        values += [ast.List(elts=[a]) if each.func.attr == "append" else a
                   for a in each.args]
      elif isinstance(each, ast.AugAssign) and isinstance(
          each.target, ast.Name) and each.target.id == node.id:
        values.append(each.value)
    held = _joined([self.held(v, info, method, depth + 1) for v in values])
    if held[1] is None:
      return held[0], _taken_out(node.id, method.node) or (
          self._grown_by_test(node.id, info, method, depth))
    return held

  def _grown_by_test(self, name: str, info: _scopes.ClassInfo,
                     method: _scopes.Scope, depth: int) -> Optional[ast.AST]:
    """The test that adds some of the model's variables to the list
    `name` only where it holds (`if self.train_body:
    out.append(self.body_w)`; in a loop over the model's variables or
    parts, `if 'head' in v.name: out.append(v)`), or None; not a test
    that also decides whether the model makes them (`if self.use_bias:`
    around `self.b = ...` too)."""
    loops = [loop for loop in ast.walk(method.node) if isinstance(
        loop, ast.For) and (self.held(loop.iter, info, method, depth + 1)[0]
                            or _whole(loop.iter))]
    for test in ast.walk(method.node):
      if not isinstance(test, ast.If) or not _a_choice(test.test):
        continue
      added = [each for part in test.body for each in ast.walk(part)
               if _grows(each, name)]
      if not added or any(_grows(each, name) for part in test.orelse
                          for each in ast.walk(part)):
        continue
      grown = _joined([self.held(_growth(each), info, method, depth + 1)
                       for each in added])[0]
      if grown and not _made_under(info, test.test, grown) or any(
          test is each for loop in loops for each in ast.walk(loop)):
        return test
    return None

  def _called(self, node: ast.Call, info: _scopes.ClassInfo,
              method: _scopes.Scope, depth: int) -> _Held:
    """The same or another accessor: of this class (`self.m()`), or of
    the parts it holds (`layer.get_params()`, any project class with a
    method of that name that returns the model's variables)."""
    func = node.func
    if not isinstance(func, ast.Attribute) or node.args or node.keywords:
      return frozenset(), None
    if isinstance(func.value, ast.Name) and func.value.id == "self":
      own = self.project.method(info, func.attr)
      if own is None:
        return frozenset(), None
      return frozenset(), self.method(info, own, depth + 1)
    if not _a_part(func.value, method.node):
      return frozenset(), None
    for other in self._accessors(func.attr):
      owner = other.cls
      if owner is not None and other.node is not method.node:
        cut = self.method(owner, other, depth + 1)
        if cut is not None:
          return frozenset(), cut
    return frozenset(), None

  def _accessors(self, name: str) -> List[_scopes.Scope]:
    if name.startswith("__") or name in _GROWING:
      return []
    return list(itertools.islice(self.project.functions_named(
        [name], unscanned=True), 8))


def _empty(node: Optional[ast.AST]) -> bool:
  """`[]` or `()`: the step's whole list empty trains nothing (a mode
  that builds no step); only a part gathered empty leaves it out."""
  return isinstance(node, (ast.List, ast.Tuple)) and not node.elts


def _a_part(node: ast.AST, function: ast.AST) -> bool:
  """Whether `node` is a part the model holds: `self.x`, or an item of a
  loop over one (`for layer in self.layers:`)."""
  if _own_name(node) is not None:
    return True
  return isinstance(node, ast.Name) and any(
      isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and (
          loop.target.id == node.id) and _own_name(loop.iter) is not None
      for loop in ast.walk(function))


def _joined(parts: List[_Held]) -> _Held:
  names: Set[str] = set()
  cut: Optional[ast.AST] = None
  for each, where in parts:
    names |= each
    cut = cut or where
  return frozenset(names), cut


def _whole(node: ast.AST) -> bool:
  """`self.trainable_variables` (the model's own whole list)."""
  return isinstance(node, ast.Attribute) and node.attr in (
      "trainable_variables", "trainable_weights", "weights",
      "variables") and _is_self(node.value)


def _own_name(node: ast.AST) -> Optional[str]:
  """The `x` of `self.x` or of `self.x.trainable_variables`."""
  if isinstance(node, ast.Attribute) and node.attr in (
      _names.VARIABLE_ATTRIBUTES) and isinstance(node.value, ast.Attribute):
    node = node.value
  if isinstance(node, ast.Attribute) and _is_self(node.value):
    return node.attr
  return None


def _is_self(node: ast.AST) -> bool:
  return isinstance(node, ast.Name) and node.id == "self"


def _chosen_by_flag(returned: ast.Return, function: ast.AST) -> bool:
  """Whether an `if` around `returned` (or before it, returning the
  other way) tests a flag, not whether the model is built yet."""
  for node in ast.walk(function):
    if isinstance(node, ast.If) and _a_choice(node.test) and (any(
        returned is each for each in ast.walk(node)) or (
            node.lineno < returned.lineno and any(
                isinstance(each, ast.Return) for each in ast.walk(node)))):
      return True
  return False


def _grows(node: ast.AST, name: str) -> bool:
  """Whether `node` adds to the list `name` (`name.append(v)`, `name +=
  [v]`)."""
  if isinstance(node, ast.AugAssign):
    return isinstance(node.target, ast.Name) and node.target.id == name
  return isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr in _GROWING and (
          isinstance(node.func.value, ast.Name)) and (
              node.func.value.id == name)


def _taken_out(name: str, function: ast.AST) -> Optional[ast.AST]:
  """Where the method takes an entry out of the list `name`
  (`name.remove(self.w)`, `name.pop()`, `del name[0]`), or None."""
  for node in ast.walk(function):
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr in _TAKING and (
            isinstance(node.func.value, ast.Name)) and (
                node.func.value.id == name):
      return node
    if isinstance(node, ast.Delete) and any(
        isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and (
            t.value.id == name) for t in node.targets):
      return node
  return None


def _a_choice(test: ast.AST) -> bool:
  """Whether a test chooses: it reads a flag or a name, and is not one
  that keeps the trainable variables or those with a gradient (`v.trainable`,
  `g is not None`) or asks whether the model is built yet."""
  read = {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)} | {
      n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
  return bool(read - {"self"}) and not read & _UNBUILT and not any(
      isinstance(n, ast.Constant) and n.value is None or isinstance(
          n, ast.Attribute) and n.attr == "trainable" and not _is_self(
              n.value) for n in ast.walk(test))


def _growth(node: ast.AST) -> Optional[ast.AST]:
  """What a growth of a list adds (`[v]` for `append(v)`)."""
  if isinstance(node, ast.AugAssign):
    return node.value
  assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
  if not node.args:
    return None
  return ast.List(elts=[node.args[0]]) if node.func.attr == "append" else (
      node.args[0])


def _made_under(info: _scopes.ClassInfo, test: ast.expr,
                names: FrozenSet[str]) -> bool:
  """Whether a method of the class makes one of `self.names` only under
  the same test (`if self.use_bias: self.b = tf.Variable(...)`)."""
  text = ast.dump(test)
  for method in info.methods.values():
    for node in ast.walk(method.node):
      if isinstance(node, ast.If) and ast.dump(node.test) == text and any(
          _own_name(t) in names for each in node.body
          for t in getattr(each, "targets", ())):
        return True
  return False


def made_by_the_same_test(scope: _scopes.Scope, value: ast.AST,
                          test: ast.expr) -> bool:
  """Whether the `self.x` a method adds under `test` (`if
  self.tune_embeddings: chosen.append(self.emb)`) is made by its class
  only under the same test: no variable is left out where it exists."""
  names = set()
  for node in ast.walk(value):
    own = _own_name(node)
    if own is not None:
      names.add(own)
  place: Optional[_scopes.Scope] = scope
  while place is not None and place.cls is None:
    place = place.parent
  return bool(names) and place is not None and place.cls is not None and (
      _made_under(place.cls, test, frozenset(names)))


def _some_parts(info: _scopes.ClassInfo, method: _scopes.Scope) -> bool:
  """Whether the accessor reads the variables of some parts the forward
  runs, and leaves out another part the forward runs that the class
  builds, and never the model's own whole list."""
  if any(isinstance(n, ast.Attribute) and _is_self(n.value) and (
      n.attr in _names.VARIABLE_ATTRIBUTES) for n in ast.walk(method.node)):
    return False  # `self.trainable_variables`: the whole model.
  parts = _parts_read(method.node)
  run = _run(info)
  left = {name for name in run - parts if _model_parts.built(info, name)}
  return bool(parts & run) and bool(left)


def _parts_read(function: ast.AST) -> Set[str]:
  """The `self.x` whose variables an accessor reads (`self.x.weights`)
  or that it lists itself (`[self.prompt_tokens]`)."""
  found: Set[str] = set()
  for node in ast.walk(function):
    if isinstance(node, ast.Attribute) and node.attr in (
        _names.VARIABLE_ATTRIBUTES):
      found |= _model_parts.self_names([node.value])
    if isinstance(node, (ast.List, ast.Tuple)):
      found |= _model_parts.self_names(node.elts)
  return found


def _run(info: _scopes.ClassInfo) -> Set[str]:
  """The `self.x` the forward reads, with the methods of the class it
  calls (`self.features(x)`), their names left out."""
  todo: List[str] = [m for m in _model_parts.FORWARD
                     if m in info.methods][:1]
  done: Set[str] = set()
  read: Set[str] = set()
  while todo:
    name = todo.pop()
    if name in done or len(done) > 8:
      continue
    done.add(name)
    names = _model_parts.self_attributes(info.methods[name].node)
    read |= names
    todo += [each for each in names if each in info.methods]
  return read - set(info.methods)
