"""Whether a part of a class is a Keras lookup layer handed to its
constructor: `self.ids = ids`, set once from a parameter of the class's
own `__init__`, and every construction of the class in the project
passes there a call of a TensorFlow or Keras layer that holds no
trainable weight whatever its arguments (`tf.keras.layers.StringLookup(
vocabulary=vocab)`, bound once to a local name or written in place). A
character model's trainer runs `self.model` on `self.ids(chars)`:
nothing below the model is left out by the lookup itself, so what runs
under it is judged as if it fed the model (`_part_of_self`).

Anything the scan cannot see at every construction keeps the part:
the class named other than as the callee of a call resolved to it (an
alias `make = Manager`, a subclass, `isinstance`), the class building
itself unnamed (`type(self)(...)`, `cls(...)`), a call inside a
lambda or comprehension, unpacked arguments, a default left to the
parameter, a name bound more than once, a layer of the project spelled
like Keras', the attribute set again (`self.ids = Dense(8)`, `m.ids =
...`), an attribute of that name set in any other class too, a
`setattr` whose name is not another literal, or any module reaching
objects, classes or globals unnamed (`__dict__`, `vars`, `globals()`,
`__setattr__`, `.__init__(...)` but on `super()`, `getattr` of a built
name or of a module). `handed_number` reads the same way a number
given for a part (`AlphaConstraint(5.0)`, for `_sign_kept`). Part of
`var-list-filter`.
"""

from __future__ import annotations

import ast
import dataclasses
import weakref
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes

# Library layers that make no trainable weight whatever their arguments
# (their tables and statistics are untrainable state).
_LOOKUPS = frozenset({"StringLookup", "IntegerLookup", "Hashing",
                      "HashedCrossing", "CategoryEncoding",
                      "TextVectorization", "Discretization"})
_LIBRARIES = frozenset({"tensorflow", "keras", "tf_keras"})
# How many modules naming the class are read, at most (else: kept).
_MODULES = 24
_INNER = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp)


@dataclasses.dataclass
class _Index:
  """What a project's modules hold, each module and function read once:
  the reads of each name (see `_references`), the attributes set by
  name, the `setattr` calls and the names bound in each function."""

  reads: Dict[int, Dict[str, List[_Read]]] = dataclasses.field(
      default_factory=dict)  # id(module) -> name -> its reads.
  # Attribute -> its stores (module, node), all modules read once.
  stores: Optional[Dict[str, List[Tuple[_project.Module, ast.AST]]]] = None
  # The literal names `setattr` is given; whether one is given another.
  set_names: Set[str] = dataclasses.field(default_factory=set)
  set_any: bool = False
  # Whether a module reaches objects, classes or globals unnamed.
  unnamed: bool = False
  # The modules that do not parse.
  unread: List[_project.Module] = dataclasses.field(default_factory=list)
  bound: Dict[int, Dict[str, int]] = dataclasses.field(
      default_factory=dict)  # id(function) -> name -> its bindings.
  # (id(class node), part, kind) -> whether it is handed one.
  answers: Dict[Tuple[int, str, str], bool] = dataclasses.field(
      default_factory=dict)


# A read of a name: the callee of which call (or None), in which
# function or module (None: in a lambda or comprehension).
_Read = Tuple[Optional[ast.Call], Optional[ast.AST]]
_INDEX: "weakref.WeakKeyDictionary[_project.Project, _Index]" = (
    weakref.WeakKeyDictionary())


def handed_lookup(project: _project.Project, info: _scopes.ClassInfo,
                  part: str) -> bool:
  """Whether `self.part` of `info` is set only from a parameter of its
  `__init__` that every construction fills with a library lookup layer;
  read once per class and part.

  >>> from tfpartial._tools.scan import _files
  >>> p = _project.Project([_files.Source("m.py", "class A:\\n  pass\\n")])
  >>> top = p.parsed(p.modules[0])
  >>> handed_lookup(p, top.classes["A"], "ids")
  False
  """
  return _answer(project, info, part, "lookup")


def handed_number(project: _project.Project, info: _scopes.ClassInfo,
                  part: str) -> bool:
  """Whether `self.part` of `info` is set only from a parameter of its
  `__init__` that every construction gives a number written there
  (`AlphaConstraint(5.0)`): a scalar, whatever the class does with it.

  >>> from tfpartial._tools.scan import _files
  >>> p = _project.Project([_files.Source("m.py", "class A:\\n  pass\\n")])
  >>> handed_number(p, p.parsed(p.modules[0]).classes["A"], "cap")
  False
  """
  return _answer(project, info, part, "number")


def _answer(project: _project.Project, info: _scopes.ClassInfo,
            part: str, kind: str) -> bool:
  """`handed_lookup` or `handed_number`, read once per class and part."""
  index = _INDEX.setdefault(project, _Index())
  key = (id(info.node), part, kind)
  if key not in index.answers:
    accept = _lookup if kind == "lookup" else _number
    index.answers[key] = _handed(project, index, info, part, accept)
  return index.answers[key]


_Accept = Callable[[_project.Project, _Index, _scopes.Scope,
                    Optional[ast.expr]], bool]


def _handed(project: _project.Project, index: _Index,
            info: _scopes.ClassInfo, part: str, accept: _Accept) -> bool:
  """Whether every construction gives what `accept` takes for the one
  parameter `self.part` is set from, nothing setting it elsewhere."""
  init = info.methods.get("__init__")
  values = project.attribute(info, f"self.{part}")
  if init is None or len(values) != 1 or values[0][1] is not init:
    return False
  value = values[0][0]
  if not isinstance(value, ast.Name) or value.id not in init.params or (
      init.defs.get(value.id)):
    return False
  calls = _constructions(project, index, info)
  if not calls or _builds_itself(info) or _set_outside(
      project, index, info, part):
    return False
  return all(accept(project, index, place, given)
             for place, call in calls
             for given in [_argument(init.node, value.id, call)])


def _number(project: _project.Project, index: _Index,
            place: _scopes.Scope, given: Optional[ast.expr]) -> bool:
  """Whether `given` is a number written in place (`5.0`, `-1`)."""
  del project, index, place  # A literal is read alone.
  if isinstance(given, ast.UnaryOp) and isinstance(given.op, ast.USub):
    given = given.operand
  return isinstance(given, ast.Constant) and isinstance(
      given.value, (int, float)) and not isinstance(given.value, bool)


def _builds_itself(info: _scopes.ClassInfo) -> bool:
  """Whether the class may build objects of itself unnamed: `type(self)(
  ...)`, `self.__class__(...)`, `cls(...)` in a classmethod."""
  return any(isinstance(n, ast.Attribute) and n.attr == "__class__" or (
      isinstance(n, ast.Call) and _names.call_name(n) == "type") or (
          isinstance(n, ast.Name) and n.id in {"classmethod", "cls"})
             for n in ast.walk(info.node))


def _tree(project: _project.Project, module: _project.Module
          ) -> Optional[ast.Module]:
  """The module's tree, parsed (None if it does not parse)."""
  return module.tree if project.parsed(module) is not None else None


def _reads(index: _Index, module: _project.Module, tree: ast.Module
           ) -> Dict[str, List[_Read]]:
  """The reads of every name in a module, read once."""
  if id(module) not in index.reads:
    found: Dict[str, List[_Read]] = {}
    for node, call, home in _references(tree, tree):
      name = node.id if isinstance(node, ast.Name) else getattr(
          node, "attr", "")
      found.setdefault(name, []).append((call, home))
    index.reads[id(module)] = found
  return index.reads[id(module)]


def _constructions(project: _project.Project, index: _Index,
                   info: _scopes.ClassInfo
                   ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """Every call of the class in the project with its scope, or [] when
  the class is named otherwise, too many modules name it, or a call is
  not resolved to it in the function it is written in."""
  modules = project.all_modules_with((info.name,))
  if len(modules) > _MODULES:
    return []
  found: List[Tuple[_scopes.Scope, ast.Call]] = []
  for module in modules:
    tree = _tree(project, module)
    if tree is None:
      return []
    for call, home in _reads(index, module, tree).get(info.name, []):
      if call is None or home is None:
        return []  # Named otherwise, or called in a lambda.
      place = _scope_of(project, module, home, call)
      if place is None or project.resolve(
          place, _names.dotted(call.func) or "") is not info:
        return []
      found.append((place, call))
  return found


def _references(node: ast.AST, home: Optional[ast.AST]
                ) -> Iterator[Tuple[ast.AST, Optional[ast.Call],
                                    Optional[ast.AST]]]:
  """Each read of a name or an attribute under `node`, with the call it
  is the callee of (or None) and the function or module it is written
  in (None inside a lambda, a comprehension or a class body)."""
  for child in ast.iter_child_nodes(node):
    yield from _references_in(child, home)


def _references_in(node: ast.AST, home: Optional[ast.AST]
                   ) -> Iterator[Tuple[ast.AST, Optional[ast.Call],
                                       Optional[ast.AST]]]:
  """`_references` of `node` itself and under it; `node` opens the
  function it defines, or no function for a lambda, a comprehension or
  a class body, wherever it stands (a lambda given to a call too)."""
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    home = node
  elif isinstance(node, (*_INNER, ast.ClassDef)):
    home = None
  if isinstance(node, ast.Call) and _read(node.func):
    yield node.func, node, home
    for each in [*node.args, *(k.value for k in node.keywords)]:
      yield from _references_in(each, home)
    if isinstance(node.func, ast.Attribute):
      yield from _references_in(node.func.value, home)
    return
  if _read(node):
    yield node, None, home
  yield from _references(node, home)


def _read(node: ast.AST) -> bool:
  """Whether `node` reads a name (`Manager`, `trainer.Manager`)."""
  return isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
      node.ctx, ast.Load)


def _scope_of(project: _project.Project, module: _project.Module,
              home: ast.AST, call: ast.Call) -> Optional[_scopes.Scope]:
  """The scope of the function (or module) `home` holding `call`."""
  for scope in project.scopes_at(module, [call.lineno]):
    if scope.node is home:
      return scope
  return None


def _set_outside(project: _project.Project, index: _Index,
                 info: _scopes.ClassInfo, part: str) -> bool:
  """Whether a module assigns an attribute named `part` other than in
  the class's `__init__` (`m.ids = Dense(8)`), calls `setattr` with a
  name that may be it, or reaches objects unnamed (`_unnamed`)."""
  stores = _whole(project, index)
  init = info.methods["__init__"].node
  return index.unnamed or index.set_any or part in index.set_names or any(
      not (module is info.home.module and _within(node, init))
      for module, node in stores.get(part, [])) or any(
          word in m.source.text for m in index.unread
          for word in (part, "setattr", "getattr", "__dict__", "vars(",
                       "globals(", ".__init__("))


def _whole(project: _project.Project, index: _Index
           ) -> Dict[str, List[Tuple[_project.Module, ast.AST]]]:
  """The attributes the project's modules set or delete, by name, read
  once for the project; `setattr`'s names and unnamed access noted."""
  if index.stores is None:
    index.stores = {}
    for module in project.modules:
      tree = _tree(project, module)
      if tree is None:
        index.unread.append(module)
        continue
      for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(
            node.ctx, ast.Load):
          index.stores.setdefault(node.attr, []).append((module, node))
        elif isinstance(node, ast.Call) and _names.call_name(
            node) == "setattr":
          name = node.args[1] if len(node.args) > 1 else None
          if isinstance(name, ast.Constant) and isinstance(
              name.value, str):
            index.set_names.add(name.value)
          else:
            index.set_any = True
        index.unnamed = index.unnamed or _unnamed(node, module)
  return index.stores


def _unnamed(node: ast.AST, module: _project.Module) -> bool:
  """Whether `node` reaches an object's attributes, a module's names or
  a constructor without naming them: `x.__dict__`, `vars(...)`,
  `globals()`, `exec` or `eval` of a string, `__setattr__`,
  `.__init__(...)` called on anything but `super()`, `getattr` of a
  name not a literal, or of a module (an import, or what a call
  returns: `importlib.import_module`)."""
  if isinstance(node, ast.Attribute):
    return node.attr in {"__dict__", "__setattr__"}
  if not isinstance(node, ast.Call):
    return False
  func = node.func
  if isinstance(func, ast.Name) and func.id in {
      "vars", "globals", "locals", "exec", "eval"}:
    return True  # Code in a string may name anything.
  if isinstance(func, ast.Attribute) and func.attr == "__init__":
    return not (isinstance(func.value, ast.Call) and isinstance(
        func.value.func, ast.Name) and func.value.func.id == "super")
  if not (isinstance(func, ast.Name) and func.id == "getattr"):
    return False
  if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
    return True
  held = node.args[0]
  return isinstance(held, ast.Call) or isinstance(held, ast.Name) and (
      held.id in getattr(module, "imports", {}))


def _within(node: ast.AST, function: ast.AST) -> bool:
  """Whether `node`, of the module of `function`, is written in it."""
  line = getattr(node, "lineno", 0)
  start = getattr(function, "lineno", 0)
  return start <= line <= (getattr(function, "end_lineno", None) or start)


def _may_name(call: ast.AST, part: str) -> bool:
  """Whether a `setattr` call may set `part`: unless its name is another
  literal."""
  args = getattr(call, "args", [])
  name = args[1] if len(args) > 1 else None
  return not (isinstance(name, ast.Constant) and name.value != part)


def _argument(init: ast.AST, parameter: str, call: ast.Call
              ) -> Optional[ast.expr]:
  """What `call` passes `__init__`'s `parameter` (None: unpacked, or the
  default left)."""
  if not isinstance(init, ast.FunctionDef) or any(
      isinstance(a, ast.Starred) for a in call.args) or any(
          k.arg is None for k in call.keywords):
    return None
  positional = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
  if parameter in positional and positional.index(parameter) < len(
      call.args):
    return call.args[positional.index(parameter)]
  return next((k.value for k in call.keywords if k.arg == parameter), None)


def _bindings(index: _Index, function: ast.AST) -> Dict[str, int]:
  """How many times each name is bound (or declared global or nonlocal)
  in `function` and the functions in it, read once."""
  if id(function) not in index.bound:
    index.bound[id(function)] = _names.binding_counts(function)
  return index.bound[id(function)]


def _lookup(project: _project.Project, index: _Index,
            place: _scopes.Scope, given: Optional[ast.expr]) -> bool:
  """Whether `given` (read in `place`) is a call of a library lookup
  layer, or a local name bound once, and only, to one."""
  if isinstance(given, ast.Name):
    defs = place.defs.get(given.id, [])
    bound = _bindings(index, place.node)
    if len(defs) != 1 or given.id in place.params or bound.get(
        given.id) != 1 or "*" in bound:  # A star import binds unseen.
      return False
    given = defs[0].value
  if not isinstance(given, ast.Call):
    return False
  spelled = (_names.dotted(given.func) or "").split(".")
  imports = getattr(place.module, "imports", {})
  if spelled[0] not in imports or not project.external(place, spelled[0]):
    return False
  where, attribute = imports[spelled[0]]
  path = [p for p in where.split(".") + [attribute] if p] + spelled[1:]
  return path[0] in _LIBRARIES and path[-1] in _LOOKUPS
