"""A step of a model class training one of its parts
(`self.head.trainable_variables`, in a Keras `train_step` override) while
a method of the class runs that part on another part's output
(`self.head(self.backbone(x))`) that no step of the class trains: the
part below (the backbone of a head-only fine-tuning) is left out.
A GAN's generator, under its discriminator, has its own step; a teacher
or a target copy runs beside the student, not under it; a part set
`trainable = False` is frozen whole. Only a part the step's own method
may run is left out (a generator fed noise runs no encoder); the method
may run every part it reads, or its methods (of bases and subclasses
too) and attributes read, and all of them when `self` is handed on or
an attribute the project never assigns is read (`self.layers`).
"""

from __future__ import annotations

import ast
import builtins
import re
import weakref
from typing import Dict, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _handed_lookups
from tfpartial._tools.scan.idioms._wholes import _untrainable_part

# What makes a weight when called (a class of the project is read).
_MAKES_WEIGHTS = {"add_weight", "add_variable", "Variable", "VariableV1",
                  "get_variable", "model_variable"}
_SIZED_LAYERS = {"Dense", "Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose",
                 "Conv3DTranspose", "DepthwiseConv2D", "SeparableConv2D",
                 "Embedding", "LSTM", "GRU", "SimpleRNN", "LSTMCell",
                 "GRUCell", "BatchNormalization", "LayerNormalization",
                 "GroupNormalization", "MultiHeadAttention", "PReLU",
                 "EinsumDense", "Bidirectional", "Linear"}
# Library bases that make no weight themselves.
_BARE_BASES = {"Layer", "Model", "Module", "object", "Object"}
_BUILTINS = frozenset(dir(builtins))
_OWN = {"trainable_variables", "trainable_weights", "variables", "weights"}
# A copy kept in step by copying, or a callable making the input.
_NOT_TRAINED = re.compile(r"target|ema|average|avg|old|teacher|frozen|"
                          r"(fn|func|function)$|^aug|attack|preprocess|"
                          r"transform|noise", re.I)


def part_trained(scope: _scopes.Scope, chosen: Optional[ast.AST]
                 ) -> Optional[Tuple[str, ast.expr]]:
  """`head` and the list when `chosen` (a step's list, in a method) is
  `self.head.trainable_variables`, or a local name holding only it."""
  if isinstance(chosen, ast.Name):
    defs = scope.defs.get(chosen.id, [])
    chosen = defs[0].value if len(defs) == 1 else None
  if not isinstance(chosen, ast.Attribute) or chosen.attr not in _OWN:
    return None
  owner = _names.dotted(chosen.value) or ""
  if not owner.startswith("self.") or owner.count(".") != 1:
    return None
  return owner[len("self."):], chosen


def left_below(project: _project.Project, info: _scopes.ClassInfo,
               part: str, trained: Set[str], text: str,
               step: Optional[ast.AST] = None) -> Optional[str]:
  """The part of `info` whose output a method feeds into `self.part`
  and that no step of the class trains (`trained`: the names the
  class's steps' lists read), else None; `text` is the module's. With
  `step` (the function whose step it is), only a part that function
  runs: a loss that never runs it leaves nothing of it out."""
  if "self" in trained:
    return None  # A step of the class trains the whole model.
  todo, seen = list(_feeding(info, part)), {part}
  # The parts reached through a supplier: judged by what the code does
  # only, never by their names.
  through: Set[str] = set()
  while todo:
    below = todo.pop(0)
    if below in seen or below in trained or below in info.methods or (
        below not in through and _NOT_TRAINED.search(below)) or (
            not project.attribute(info, f"self.{below}")):
      continue
    seen.add(below)
    if step is not None and not _runs(project, info, step, below):
      continue  # A GAN's generator fed noise, not the encoder's output.
    if re.search(rf"self\.{re.escape(below)}\.trainable\s*=\s*False",
                 text) or _untrainable_part.frozen_whole(project, info, below):
      continue  # Frozen whole.
    if _size_free_on_fixed(project, info, below) or _weightless_on_fixed(
        project, info, below):
      continue  # No weights of its own.
    if _passes_on(project, info, below) or _handed_lookups.handed_lookup(
        project, info, below):
      # It can hold and run nothing (a supplier picking some of its
      # arguments), or holds no trainable weight (a lookup layer handed
      # in): what runs below it is judged as if it fed `self.part`
      # itself, each part once.
      fed = [name for name in _feeding(info, below) if name not in seen]
      through.update(fed)
      todo.extend(fed)
      continue
    return below
  return None


# What a part's attribute tells without running it.
_READ_ONLY = {"output_shape", "input_shape", "shape", "name", "dtype",
              "trainable"}
# Every part: what a method may run when it hands on `self` itself
# (`self(x)`, `model = self`, `helper(self)`) or reads what the scan
# cannot follow (`self.layers`, an attribute of a library base).
_ALL = "self"
# What Keras' `compile` sets, or a step's own tools: no part of the model.
_PLAIN = re.compile(r"optim|loss|metric|tracker|learning_rate|"
                    r"(^|_)(lr|opt)(_|$)", re.I)


def _runs(project: _project.Project, info: _scopes.ClassInfo,
          function: ast.AST, below: str) -> bool:
  """Whether `function` (a method of `info`) may run `self.below`."""
  may = _may_run(project, info, function)
  return _ALL in may or below in may


def _may_run(project: _project.Project, info: _scopes.ClassInfo,
             function: ast.AST) -> Set[str]:
  """The `self.` parts `function` may run, read once per method: those
  it reads (not only for a size, `self.g.output_shape`), those held by
  an attribute it reads (`self.stack = [self.encoder, ...]`), and those
  of the methods it calls, in the class or its bases or subclasses (a
  `@property` too); `_ALL` when it hands on a bare `self` or reads an
  attribute the project does not assign (`self.layers`), but for the
  tools `compile` sets (`self.optimizer`, `self.loss_fn`)."""
  return info.home.once((_may_run, id(function), 0), lambda: _reach(
      project, info, [function]))


def _reach(project: _project.Project, info: _scopes.ClassInfo,
           todo: List[ast.AST]) -> Set[str]:
  """What `_may_run` gives for the functions and values in `todo`,
  following the methods and attributes they read, each once."""
  found: Set[str] = set()
  seen: Set[int] = set()
  names: Set[str] = set()
  while todo:
    node = todo.pop()
    if id(node) in seen:
      continue
    seen.add(id(node))
    owned: Set[int] = set()  # `self` of `self.x`: not handed on.
    read: Set[int] = set()  # `self.g.output_shape`: a size, not a run.
    for each in ast.walk(node):
      if isinstance(each, ast.Attribute):
        owned.add(id(each.value))
        if each.attr in _READ_ONLY:
          read.add(id(each.value))
        if not (isinstance(each.value, ast.Name) and each.value.id == "self"
                ) or id(each) in read or each.attr in names:
          continue
        names.add(each.attr)
        methods = [m for m in [project.method(info, each.attr)] if m] + (
            project.overriding(info, each.attr))
        values = project.attribute(info, f"self.{each.attr}")
        if not methods and not values and not _PLAIN.search(each.attr):
          return {_ALL}  # `self.layers`: what it holds is not seen.
        if any(_aliases(value, scope) for value, scope in values):
          return {_ALL}  # `self.parts = {"enc": encoder}`: a part again.
        found.add(each.attr)
        todo.extend(m.node for m in methods)
        todo.extend(value for value, _ in values)
      elif isinstance(each, ast.Name) and each.id == "self" and (
          id(each) not in owned) or isinstance(each, ast.Call) and (
              _names.call_name(each) == "super"):
        return {_ALL}  # `self(x)`, `model = self`, `super().call(x)`.
  return found


def _aliases(value: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether an attribute's `value` holds, inside a container or a call
  (`{"enc": encoder}`, `partial(run, encoder)`), a parameter of the
  method assigning it that the method also makes a part
  (`self.encoder = encoder`): that part runs through it too."""
  given = {node.id for node in ast.walk(value) if isinstance(
      node, ast.Name) and node.id in scope.params} if not isinstance(
          value, ast.Name) else set()
  return bool(given) and bool(given & scope.once(
      (_aliases, None, 0), lambda: _held_whole(scope)))


def _held_whole(scope: _scopes.Scope) -> Set[str]:
  """The names a method assigns, as they are, to `self.` attributes."""
  return {node.value.id for node in ast.walk(scope.node)
          if isinstance(node, ast.Assign) and isinstance(
              node.value, ast.Name) and any(
                  (_names.dotted(t) or "").startswith("self.")
                  for t in node.targets)}


def _size_free_on_fixed(project: _project.Project, info: _scopes.ClassInfo,
                        below: str) -> bool:
  """Whether every value of `self.below` is made by a call given no
  arguments, of no class of the project (a library's size-free op:
  `layers.AdaIN()`, `Add()`), and every part whose output it runs on is
  frozen whole (a pretrained encoder's features): such an op has no
  weights a step could leave out. A sized layer (`Dense(64)`) has."""
  values = project.attribute(info, f"self.{below}")
  if not values or not all(_size_free(project, value, scope)
                           for value, scope in values):
    return False
  fed = set(_feeding(info, below)) - {below}
  return bool(fed) and all(
      _untrainable_part.frozen_whole(project, info, part) for part in fed)


def _weightless_on_fixed(project: _project.Project,
                         info: _scopes.ClassInfo, below: str) -> bool:
  """Whether every value of `self.below` is made by a class of the
  project that makes no weight whatever its arguments
  (`BicubicScale2D(rate)`, only `tf.image.resize` in its `call`), and
  every part whose output it runs on, if any, is frozen whole."""
  values = project.attribute(info, f"self.{below}")
  if not values or not all(_never_weighted(project, value, scope)
                           for value, scope in values):
    return False
  return all(_untrainable_part.frozen_whole(project, info, part)
             for part in set(_feeding(info, below)) - {below})


def _passes_on(project: _project.Project, info: _scopes.ClassInfo,
               below: str) -> bool:
  """Whether every value of `self.below` is made by a plain class of
  the project (no base) whose methods call only builtins and its own
  lambdas, which call nothing (`self.pick = lambda args: args[:n]`):
  it can make or run no network, only pass on what it is given (no
  call is given an attribute of `self`: `map(self.net, args)` runs it);
  a class wrapping a library model (`tf.keras.Model(vgg.input, ...)`)
  or running an object it holds does not."""
  values = project.attribute(info, f"self.{below}")
  return bool(values) and all(
      isinstance(target, _scopes.ClassInfo) and _plain(project, target)
      for value, scope in values if isinstance(value, ast.Call)
      for target in [project.resolve(scope, _names.dotted(value.func) or "")]
  ) and all(isinstance(value, ast.Call) for value, _ in values)


# Per project, id(class node) -> (the node, whether it is plain).
_READ_PLAIN: "weakref.WeakKeyDictionary[_project.Project, Dict[int, Tuple[ast.AST, bool]]]" = (
    weakref.WeakKeyDictionary())


def _plain(project: _project.Project, info: _scopes.ClassInfo) -> bool:
  """Whether a class has no base but `object` and every call in it is a
  builtin's (not rebound) or one of its own lambdas' that call nothing,
  and no call is given an attribute of `self` (`map(self.net, args)`
  can run what it holds). Each class is read once per project."""
  memo = _READ_PLAIN.setdefault(project, {})
  known = memo.get(id(info.node))
  if known is None or known[0] is not info.node:
    known = memo[id(info.node)] = (info.node, _read_plain(info))
  return known[1]


def _read_plain(info: _scopes.ClassInfo) -> bool:
  """`_plain`, read in one walk of the class."""
  if any(base != "object" for base in info.bases):
    return False
  lambdas: Set[str] = set()
  bound: Set[str] = set()
  calls: List[ast.Call] = []
  for node in ast.walk(info.node):
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
      if any(isinstance(n, ast.Call) for n in ast.walk(node.value)):
        return False
      lambdas.update(name[len("self."):] for t in node.targets
                     for name in [_names.dotted(t) or ""]
                     if name.startswith("self."))
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
      bound.add(node.id)
    elif isinstance(node, ast.Call):
      calls.append(node)
  for node in calls:
    name = _names.dotted(node.func) or ""
    if not (name in _BUILTINS and name not in bound or (
        name.startswith("self.") and name[len("self."):] in lambdas)):
      return False
    if any((_names.dotted(a) or "").startswith("self.") for a in [
        *node.args, *(k.value for k in node.keywords)]):
      return False  # A builtin given what the object holds may run it.
  return True


def _never_weighted(project: _project.Project, value: ast.AST,
                    scope: _scopes.Scope) -> bool:
  """`Maker(...)`: `Maker` a class of the project whose bases outside
  the project are bare (`Layer`, `Model`, `Module`) and that makes no
  weight in any branch (arguments may set its flags)."""
  name = _names.dotted(value.func) if isinstance(value, ast.Call) else None
  target = project.resolve(scope, name) if name else None
  if not isinstance(target, _scopes.ClassInfo):
    return False
  for each in [target] + project.base_classes(target):
    for base in each.bases:
      if not isinstance(project.resolve(each.home, base), _scopes.ClassInfo
                        ) and base.split(".")[-1] not in _BARE_BASES:
        return False
  return _weightless(project, target, 0, strict=True)


def _size_free(project: _project.Project, value: ast.AST,
               scope: _scopes.Scope) -> bool:
  """`Maker()`: a call with no arguments, `Maker` no class of the
  project, or one that makes no weights unasked (`_weightless`)."""
  name = _names.dotted(value.func) if isinstance(value, ast.Call) else None
  if not isinstance(value, ast.Call) or name is None or (
      value.args or value.keywords):
    return False
  target = project.resolve(scope, name)
  return not isinstance(target, _scopes.ClassInfo) or _weightless(
      project, target, 0)


def _weightless(project: _project.Project, info: _scopes.ClassInfo,
                depth: int, strict: bool = False) -> bool:
  """Whether no method of the class (or of its project bases) makes a
  weight outside an `if` (`add_weight`, a variable, a sized Keras layer,
  a class of the project that does): weights made only when a flag asks
  (`if self.use_learnable_params:`) are not made by its defaults, unless
  `strict` (arguments given may set the flag)."""
  if depth > 3:
    return False
  for each in [info] + project.base_classes(info):
    for method in each.methods.values():
      for call in _unconditional_calls(method.node, strict):
        name = _names.call_name(call)
        target = project.resolve(method, _names.dotted(call.func) or "")
        if name in _MAKES_WEIGHTS or (
            isinstance(target, _scopes.ClassInfo) and not _weightless(
                project, target, depth + 1, strict)) or (
                    name in _SIZED_LAYERS and target is None):
          return False
  return True


def _unconditional_calls(function: ast.AST, strict: bool = False
                         ) -> Iterator[ast.Call]:
  """The calls of a function's body outside any `if` (or conditional
  expression; inside too when `strict`) and outside nested functions."""
  stack = list(getattr(function, "body", []))
  while stack:
    node = stack.pop()
    if isinstance(node, (ast.If, ast.IfExp)) and strict:
      stack.extend(ast.iter_child_nodes(node))
      continue
    if isinstance(node, (ast.If, ast.IfExp, ast.FunctionDef,
                         ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
      continue
    if isinstance(node, ast.Call):
      yield node
    stack.extend(ast.iter_child_nodes(node))


def trained_parts(lists: List[ast.AST]) -> Set[str]:
  """`head` of each `self.head...` a list reads; `self` for
  `self.trainable_variables` or a bare `self` (the whole model)."""
  found: Set[str] = set()
  for each in lists:
    if isinstance(each, ast.Name) and each.id == "self":
      found.add("self")
    for node in ast.walk(each):
      name = _names.dotted(node) if isinstance(node, ast.Attribute) else None
      if not name or not name.startswith("self."):
        continue
      rest = name.split(".")
      found.add("self" if rest[1] in _OWN else rest[1])
  return found


def _feeding(info: _scopes.ClassInfo, part: str) -> Iterator[str]:
  """The `self.` parts whose output a method passes, directly or
  through local names, into a call of `self.part`."""
  yield from info.home.once((_fed_parts, id(info.node), 0),
                            lambda: _fed_parts(info)).get(part, ())


def _fed_parts(info: _scopes.ClassInfo) -> Dict[str, List[str]]:
  """`part` -> what `_feeding` yields for it, for every `self.part`
  called in the class, read once per class (each step asks)."""
  found: Dict[str, List[str]] = {}
  for method in info.methods.values():
    held: Dict[str, Set[str]] = {}
    for _ in range(2):  # Names assigned from names assigned later on.
      for node in _scopes.walk(method.node):
        if isinstance(node, ast.Assign):
          made = _callers(node.value, held)
          for target in node.targets:
            if isinstance(target, ast.Name) and made:
              held[target.id] = held.get(target.id, set()) | made
    for node in _scopes.walk(method.node):
      if not isinstance(node, ast.Call):
        continue
      name = _names.dotted(node.func) or ""
      if name.startswith("self."):
        part = name[len("self."):]
        for arg in [*node.args, *(k.value for k in node.keywords)]:
          found.setdefault(part, []).extend(
              sorted(_callers(arg, held) - {part}))
  return found


def _callers(value: ast.AST, held: Dict[str, Set[str]]) -> Set[str]:
  """The `self.` parts called in `value` (`self.backbone(x)`), or held
  by the local names it reads; not through a size (`y.shape[0]`,
  `len(y)`): a part's size feeds none of its values into another."""
  found: Set[str] = set()
  for node in _values(value):
    if isinstance(node, ast.Call):
      name = _names.dotted(node.func) or ""
      if name.startswith("self.") and name.count(".") == 1:
        found.add(name[len("self."):])
    elif isinstance(node, ast.Name) and node.id in held:
      found |= held[node.id]
  return found



# What reads only the size of its argument.
_SIZES = {"len", "shape", "size", "rank"}


def _values(value: ast.AST) -> Iterator[ast.AST]:
  """`value` and the nodes inside it, but none under a read of a size
  (`y.shape`, `len(y)`, `tf.shape(y)`)."""
  todo = [value]
  for node in todo:  # Grows as it is read: breadth first.
    if isinstance(node, ast.Attribute) and node.attr in _SIZES or (
        isinstance(node, ast.Call) and _names.call_name(node) in _SIZES):
      continue
    yield node
    todo.extend(ast.iter_child_nodes(node))
