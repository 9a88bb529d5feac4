"""A pipeline of networks held as the parts of one object (a camera ISP
network feeding a forensic classifier), whose training step trains a
list the constructor builds from one part's variables and adds another
part's only under a flag that a construction leaves off, while the loss
flows through that other part into a trained one: the part left out
stays fixed while the rest trains through it.

What the code does decides, not how anything is named:
- the object's parts are what its constructor assigns (`self.P =
  <call>`); a part holds variables where the list takes them from it
  (`self._parameters.extend(self.P.parameters)`);
- the list is `self.L`, built by the class's methods only from its parts'
  variables (`self.L = []`, `.extend`, `.append`, `+=`); anything else in
  it leaves the rule out;
- the part is added only under `if <constant> in <param>` (or `if
  <param>`) of the constructor, and some construction of the class leaves
  it off (the parameter absent at a default that holds it off, or given
  something that is not a literal turning it on); a flag every
  construction turns on reports nothing;
- the step's loss is computed, in order (a rebound name forgets what it
  held), through a call into the left-out part whose value is passed to a
  call into a trained part (through the class's own methods, their
  parameters followed); `tf.stop_gradient` cuts it, so a part run only on
  the inputs under it, or only in another method (an evaluation), is not
  read;
- no other step trains it: the class (its bases and subclasses too) has
  no step over any other list; no call through the part's attribute
  (`flow.camera.fit_step(...)`, `flow.camera.fit(...)`) runs a method of
  the project that holds a step, or Keras's own training; and the part is
  not handed on whole (`self.camera` by a method of the class, or
  `flow.camera` where `flow` is bound to a construction of the class,
  given to a call or bound to a name), where whatever receives it may
  train it;
- what is added in an `else`, or by a method other than the
  constructor, counts as added always (no flag of a construction reads
  it).

Everything is worked out once per class (the list's sources in one walk
of its methods, each method's flow once) and once per project (the calls
into stepping methods). Part of `var-list-filter`.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms._sources._train_step import (
    Step, _class_of, _loss_node)

# The label of a finding's left-out part (`self.camera`), and of the
# trained part its output flows into.
PART = "object_part"
INTO = "object_part_into"
LIST = "object_part_list"

# A taint: the parts (or `#i`, a method's i-th parameter) a value was
# computed through, and `a>b` where a value of `a` was passed into `b`.
_Taint = FrozenSet[str]
_NONE: _Taint = frozenset()


@dataclasses.dataclass
class _Source:
  """One thing added to a list: the part's variables, and the `if` test it
  is added under (None: always)."""
  part: str
  node: ast.expr
  test: Optional[ast.expr]


@dataclasses.dataclass
class _Class:
  """What a class's methods do with its parts, worked out once."""
  parts: Set[str]
  # `self.L` -> what is added to it (None: something other than parts).
  lists: Dict[str, Optional[List[_Source]]]
  summaries: Dict[str, _Taint] = dataclasses.field(default_factory=dict)


def _self_attr(node: ast.AST) -> Optional[str]:
  """`x` for `self.x`."""
  if isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self":
    return node.attr
  return None


def _part_root(node: ast.AST, parts: Set[str]) -> Optional[str]:
  """The part `P` of `self.P`, `self.P.a.b` (None for anything else)."""
  while isinstance(node, ast.Attribute):
    name = _self_attr(node)
    if name is not None:
      return name if name in parts else None
    node = node.value
  return None


def _constructed_parts(init: Optional[_scopes.Scope]) -> Set[str]:
  """The attributes the constructor assigns a call's result to."""
  found: Set[str] = set()
  if init is None:
    return found
  for node in ast.walk(init.node):
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
      for target in node.targets:
        name = _self_attr(target)
        if name is not None:
          found.add(name)
  return found


def _sources_of(value: ast.expr, parts: Set[str], test: Optional[ast.expr]
                ) -> Optional[List[_Source]]:
  """The parts' variables `value` adds, or None if it adds anything else
  (an empty list adds nothing)."""
  if isinstance(value, (ast.List, ast.Tuple)):
    found: List[_Source] = []
    for each in value.elts:
      more = _sources_of(each, parts, test)
      if more is None:
        return None
      found += more
    return found
  if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
    left = _sources_of(value.left, parts, test)
    right = _sources_of(value.right, parts, test)
    return None if left is None or right is None else left + right
  if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
      and value.func.id == "list" and len(value.args) == 1:
    return _sources_of(value.args[0], parts, test)
  if isinstance(value, ast.Attribute) and _self_attr(value) is None:
    part = _part_root(value, parts)
    if part is not None and _self_attr(value.value) == part:
      return [_Source(part, value, test)]
  return None


# The test of what a method other than the constructor, or an `else`,
# adds: conditional, but no flag of a construction that can be read.
_UNREAD = ast.Constant(value=None)


def _walk_lists(body: List[ast.stmt], parts: Set[str],
                test: Optional[ast.expr],
                lists: Dict[str, Optional[List[_Source]]],
                init: bool = True) -> None:
  """Records what each statement of `body` adds to a `self.L`, with the
  outermost `if` test it is added under (`_UNREAD` outside the
  constructor, or in an `else`)."""
  for statement in body:
    if isinstance(statement, ast.If):
      inner = test if test is not None else (
          statement.test if init else _UNREAD)
      _walk_lists(statement.body, parts, inner, lists, init)
      _walk_lists(statement.orelse, parts, test if test is not None
                  else _UNREAD, lists, init)
      continue
    for field in ("body", "orelse", "finalbody", "handlers"):
      nested = getattr(statement, field, None)
      if isinstance(nested, list) and not isinstance(
          statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        _walk_lists([s for s in nested if isinstance(s, ast.stmt)]
                    + [s for h in nested if isinstance(h, ast.ExceptHandler)
                       for s in h.body], parts, test, lists, init)
    added: List[Tuple[str, ast.expr]] = []
    if isinstance(statement, ast.Assign):
      added += [(n, statement.value) for n in map(_self_attr,
                                                  statement.targets) if n]
    elif isinstance(statement, ast.AugAssign):
      name = _self_attr(statement.target)
      if name:
        added.append((name, statement.value))
    elif isinstance(statement, ast.Expr) and isinstance(
        statement.value, ast.Call) and isinstance(
            statement.value.func, ast.Attribute) and (
                statement.value.func.attr in ("extend", "append")):
      name = _self_attr(statement.value.func.value)
      if name and len(statement.value.args) == 1:
        value = statement.value.args[0]
        if statement.value.func.attr == "append":
          value = ast.List(elts=[value], ctx=ast.Load())
        added.append((name, value))
    for name, value in added:
      if name in lists and lists[name] is None:
        continue
      more = _sources_of(value, parts, test)
      if more is None:
        lists[name] = None
      else:
        lists.setdefault(name, [])
        current = lists[name]
        assert current is not None
        current += more


def _of_class(analysis: Analysis, info: _scopes.ClassInfo) -> _Class:
  """The class's parts and lists, read once."""
  def compute() -> _Class:
    parts = _constructed_parts(info.methods.get("__init__"))
    lists: Dict[str, Optional[List[_Source]]] = {}
    for name, method in info.methods.items():
      body = getattr(method.node, "body", None)
      if isinstance(body, list):
        _walk_lists(body, parts, None, lists, name == "__init__")
    return _Class(parts, lists)
  found = analysis.once(f"object_parts.class {id(info.node)}", compute)
  assert isinstance(found, _Class)
  return found


# How deep the class's own methods are followed from a step.
_DEPTH = 4


def _summary(analysis: Analysis, info: _scopes.ClassInfo, facts: _Class,
             name: str, depth: int) -> _Taint:
  """What a method of the class returns, as a taint of its parameters
  (`#i`) and the parts it calls: worked out once per method."""
  if name in facts.summaries:
    return facts.summaries[name]
  facts.summaries[name] = _NONE  # A recursion reads nothing.
  method = info.methods.get(name)
  node = method.node if method is not None else None
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
      depth > _DEPTH):
    return _NONE
  params = [a.arg for a in node.args.posonlyargs + node.args.args][1:]
  env: Dict[str, _Taint] = {p: frozenset({f"#{i}"})
                            for i, p in enumerate(params)}
  env.update({a.arg: frozenset({f"#k{a.arg}"})
              for a in node.args.kwonlyargs})
  returned: Set[str] = set()
  _Flow(analysis, info, facts, depth, env, returned).block(node.body)
  facts.summaries[name] = frozenset(returned)
  return facts.summaries[name]


class _Flow:
  """The parts each name of one function holds, statement by statement."""

  def __init__(self, analysis: Analysis, info: _scopes.ClassInfo,
               facts: _Class, depth: int, env: Dict[str, _Taint],
               returned: Set[str],
               record: Optional[Dict[int, _Taint]] = None):
    self.analysis, self.info, self.facts = analysis, info, facts
    self.depth, self.env, self.returned = depth, env, returned
    self.record = record  # What each name read held where it was read.

  def block(self, body: List[ast.stmt]) -> None:
    for statement in body:
      self.statement(statement)

  def statement(self, statement: ast.stmt) -> None:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                              ast.ClassDef)):
      return
    if isinstance(statement, ast.Assign):
      taint = self.expr(statement.value)
      for target in statement.targets:
        self.bind(target, taint)
    elif isinstance(statement, ast.AnnAssign) and statement.value:
      self.bind(statement.target, self.expr(statement.value))
    elif isinstance(statement, ast.AugAssign):
      taint = self.expr(statement.value) | self.expr(statement.target)
      self.bind(statement.target, taint)
    elif isinstance(statement, ast.Return) and statement.value is not None:
      self.returned.update(self.expr(statement.value))
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
      self.bind(statement.target, self.expr(statement.iter))
      self.block(statement.body)
      self.block(statement.orelse)
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
      for item in statement.items:
        self.expr(item.context_expr)
      self.block(statement.body)
    elif isinstance(statement, (ast.If, ast.While)):
      self.expr(statement.test)
      self.block(statement.body)
      self.block(statement.orelse)
    elif isinstance(statement, ast.Try):
      self.block(statement.body)
      for handler in statement.handlers:
        self.block(handler.body)
      self.block(statement.orelse)
      self.block(statement.finalbody)
    elif isinstance(statement, ast.Expr):
      self.expr(statement.value)

  def bind(self, target: ast.expr, taint: _Taint) -> None:
    if isinstance(target, ast.Name):
      self.env[target.id] = taint
    elif isinstance(target, (ast.Tuple, ast.List)):
      for each in target.elts:
        self.bind(each, taint)
    elif isinstance(target, ast.Starred):
      self.bind(target.value, taint)

  def expr(self, node: ast.AST) -> _Taint:
    found = self._expr(node)
    if self.record is not None:  # What it held where it was read.
      self.record[id(node)] = found
    return found

  def _expr(self, node: ast.AST) -> _Taint:
    if isinstance(node, ast.Name):
      return self.env.get(node.id, _NONE)
    if isinstance(node, ast.Lambda):  # What its body computes when called
      shadowed = {a.arg for a in node.args.args}  # (`minimize(lambda:`).
      env = {k: v for k, v in self.env.items() if k not in shadowed}
      return _Flow(self.analysis, self.info, self.facts, self.depth, env,
                   set(), self.record).expr(node.body)
    if isinstance(node, ast.Call):
      return self.call(node)
    found: Set[str] = set()
    for child in ast.iter_child_nodes(node):
      if isinstance(child, ast.expr):
        found |= self.expr(child)
      elif isinstance(child, ast.comprehension):
        found |= self.expr(child.iter)
    return frozenset(found)

  def call(self, node: ast.Call) -> _Taint:
    args = [self.expr(a.value if isinstance(a, ast.Starred) else a)
            for a in node.args]
    keywords = {k.arg: self.expr(k.value) for k in node.keywords}
    given = frozenset().union(*args, *keywords.values())
    if _names.call_name(node) == "stop_gradient":
      return _NONE  # No gradient flows back through it.
    part = _part_root(node.func, self.facts.parts)
    if part is not None:  # A call into a part: what it is given feeds it.
      fed = {f"{p}>{part}" for p in given if ">" not in p}
      return given | {part} | fed
    own = _self_attr(node.func)
    if own is not None and own in self.info.methods:
      summary = _summary(self.analysis, self.info, self.facts, own,
                         self.depth + 1)
      return _substituted(summary, args, keywords, self.info.methods[own])
    return given | self.expr(node.func)


def _substituted(summary: _Taint, args: List[_Taint],
                 keywords: Dict[Optional[str], _Taint],
                 method: _scopes.Scope) -> _Taint:
  """A method's summary at one call: each parameter's mark replaced by
  the taint of the argument given for it."""
  node = method.node
  params = [a.arg for a in node.args.posonlyargs + node.args.args][1:] if (
      isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))) else []

  def given(mark: str) -> _Taint:
    if mark.startswith("#k"):
      return keywords.get(mark[2:], _NONE)
    if mark.startswith("#"):
      index = int(mark[1:])
      if index < len(args):
        return args[index]
      return keywords.get(params[index], _NONE) if index < len(
          params) else _NONE
    return frozenset({mark})

  found: Set[str] = set()
  for mark in summary:
    if ">" in mark:
      source, into = mark.split(">", 1)
      found |= {f"{p}>{into}" for p in given(source) if ">" not in p}
    else:
      found |= given(mark)
  return frozenset(found)


def _loss_taint(analysis: Analysis, info: _scopes.ClassInfo, facts: _Class,
                step: Step) -> _Taint:
  """What the step's loss was computed through, in its own function."""
  loss = _loss_node(step.call)
  function = step.scope.node
  if loss is None or not isinstance(function, (ast.FunctionDef,
                                               ast.AsyncFunctionDef)):
    return _NONE
  key = f"object_parts.flow {id(function)}"

  def compute() -> Dict[int, _Taint]:
    # Each name's taint where it is read: the function read in order,
    # once.
    seen: Dict[int, _Taint] = {}
    _Flow(analysis, info, facts, 0, {}, set(), seen).block(function.body)
    return seen
  names = analysis.once(key, compute)
  assert isinstance(names, dict)
  taint = names.get(id(loss), _NONE)
  assert isinstance(taint, frozenset)
  return taint


def _stepping(analysis: Analysis, steps: List[Step]) -> Set[str]:
  """The attributes `P` of every call `x.P.m(...)` in the project whose
  `m` is a method holding a step (a part trained by its own step)."""
  def compute() -> Set[str]:
    methods = {s.scope.name for s in steps if _class_of(s.scope) is not None
               } | _KERAS_TRAINING
    found: Set[str] = set()
    for _, call in _calls_named(analysis, methods):
      func = call.func
      if isinstance(func, ast.Attribute) and isinstance(
          func.value, ast.Attribute):
        found.add(func.value.attr)
    return found
  found = analysis.once("object_parts.stepping", compute)
  assert isinstance(found, set)
  return found


def _calls_named(analysis: Analysis, names: Set[str]
                 ) -> Iterator[Tuple[_scopes.Scope, ast.Call]]:
  """The calls spelled one of `names` in every module of the project,
  scanned or not (a script that only drives the object names no sink)."""
  project = analysis.project
  return project.calls_named(names, project.all_modules_with(names))


# Keras's own training, called through a part (`flow.camera.fit(...)`).
_KERAS_TRAINING = frozenset({"fit", "fit_generator", "train_on_batch"})
# Builtins that read an object without keeping it.
_READERS = frozenset({"print", "isinstance", "hasattr", "getattr", "len",
                      "type", "id", "repr", "str"})


def _handed(nodes: Iterator[ast.AST]) -> Tuple[Set[Tuple[str, str]],
                                               Dict[int, str]]:
  """What `nodes` hand on whole: (`x`, `P`) for each `x.P` given to a call
  (not a builtin that only reads it) or bound to a name; and the name
  each call's result is bound to (`flow = Workflow(...)`)."""
  handed: Set[Tuple[str, str]] = set()
  bound: Dict[int, str] = {}
  for node in nodes:
    values: List[ast.expr] = []
    if isinstance(node, ast.Call) and not (
        isinstance(node.func, ast.Name) and node.func.id in _READERS):
      values = [*node.args, *(k.value for k in node.keywords)]
      values += [e for v in values if isinstance(
          v, (ast.List, ast.Tuple, ast.Set)) for e in v.elts]
    elif isinstance(node, ast.Assign):
      if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
          and isinstance(node.value, ast.Call):
        bound[id(node.value)] = node.targets[0].id
      if all(isinstance(t, (ast.Name, ast.Tuple)) for t in node.targets):
        values = [node.value]
    handed |= {(base, v.attr) for v in values
               if isinstance(v, ast.Attribute)
               for base in [_names.dotted(v.value)] if base}
  return handed, bound


def _constructions(analysis: Analysis, info: _scopes.ClassInfo
                   ) -> List[Tuple[_scopes.Scope, ast.Call]]:
  """The calls of the class's name in the project, with their scopes,
  found once per class."""
  def compute() -> List[Tuple[_scopes.Scope, ast.Call]]:
    return [(scope, call) for scope, call in _calls_named(
        analysis, {info.name}) if _names.dotted(call.func) is not None]
  found = analysis.once(f"object_parts.made {id(info.node)}", compute)
  assert isinstance(found, list)
  return found


def _escaped(analysis: Analysis, info: _scopes.ClassInfo, part: str
             ) -> bool:
  """Whether the part is handed on whole, where whatever receives it may
  train it: `self.P` by a method of the class, or `flow.P` where `flow`
  is bound to a construction of the class. Each class and module is
  read once."""
  def of_class() -> Tuple[Set[Tuple[str, str]], Dict[int, str]]:
    return _handed(node for method in info.methods.values()
                   for node in ast.walk(method.node))
  own = analysis.once(f"object_parts.handed {id(info.node)}", of_class)
  assert isinstance(own, tuple)
  if ("self", part) in own[0]:
    return True
  for scope, call in _constructions(analysis, info):
    module = analysis.project.module_of(scope)
    def of_module(module: object = module
                  ) -> Tuple[Set[Tuple[str, str]], Dict[int, str]]:
      tree = getattr(module, "tree", None)
      return _handed(ast.walk(tree)) if tree is not None else (set(), {})
    read = analysis.once(f"object_parts.handed {id(module)}", of_module)
    assert isinstance(read, tuple)
    name = read[1].get(id(call))
    if name is not None and (name, part) in read[0]:
      return True
  return False


def _list_key(step: Step) -> str:
  """The `self.L` a step trains, or a key of its own for any other."""
  var_list = step.var_list
  if var_list is not None:
    for node in ast.walk(var_list):
      name = _self_attr(node)
      if name is not None:
        return name
  return f"#{id(step.call)}"


def _list_node(step: Step) -> Optional[ast.expr]:
  """The `self.L` of the step's list."""
  if step.var_list is not None:
    for node in ast.walk(step.var_list):
      if isinstance(node, ast.Attribute) and _self_attr(node) is not None:
        return node
  return None


def _off_somewhere(analysis: Analysis, info: _scopes.ClassInfo,
                   test: ast.expr) -> bool:
  """Whether some construction of the class (or the defaults, when
  nothing constructs it) leaves the flag `test` off."""
  init = info.methods.get("__init__")
  node = init.node if init is not None else None
  if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return False
  wanted: Optional[object] = None
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.In) and isinstance(test.left, ast.Constant) and (
          isinstance(test.comparators[0], ast.Name)):
    wanted, param = test.left.value, test.comparators[0].id
  elif isinstance(test, ast.Name):
    param = test.id
  else:
    return False
  params = [a.arg for a in node.args.posonlyargs + node.args.args][1:]
  if param not in params:
    return False
  index = params.index(param)
  defaults = node.args.defaults
  first = len(params) - len(defaults)
  default = defaults[index - first] if index >= first else None

  constructions = [call for _, call in _constructions(analysis, info)]
  if not constructions:
    return _turns_on(default, wanted) is False
  for call in constructions:
    given, value = _given(call, index, param)
    if not given:
      if _turns_on(default, wanted) is False:
        return True
      continue
    if _turns_on(value, wanted) is not True:
      return True  # Off, or chosen by the caller: may be off.
  return False


def _given(call: ast.Call, index: int, param: str
           ) -> Tuple[bool, Optional[ast.expr]]:
  """Whether a construction gives the parameter, and what (None: given
  but not known, through `*args` or `**kwargs`)."""
  value: Optional[ast.expr] = None
  given = False
  if index < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args[:index + 1]):
    value, given = call.args[index], True
  for keyword in call.keywords:
    if keyword.arg == param:
      value, given = keyword.value, True
    elif keyword.arg is None:
      given = True  # `**kwargs`: not known.
  return given, value


def _turns_on(value: Optional[ast.expr], wanted: Optional[object]
              ) -> Optional[bool]:
  """Whether a value given for the flag's parameter turns it on (None:
  not known): a truth for `if param:`, a literal holding `wanted` for
  `if wanted in param:`."""
  if value is None:
    return None
  if wanted is None:
    return bool(value.value) if isinstance(value, ast.Constant) else None
  if isinstance(value, ast.Constant):
    if value.value is None:
      return False
    if isinstance(value.value, str) and isinstance(wanted, str):
      return wanted in value.value
    return None
  if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
    if all(isinstance(e, ast.Constant) for e in value.elts):
      return any(e.value == wanted  # type: ignore[attr-defined]
                 for e in value.elts)
  return None


def hits(analysis: Analysis, steps: List[Step]) -> List[_idiom.Hit]:
  """One finding per class list and left-out part."""
  by_class: Dict[int, Tuple[_scopes.ClassInfo, List[Step]]] = {}
  for step in steps:
    info = _class_of(step.scope)
    if info is not None:
      by_class.setdefault(id(info.node), (info, []))[1].append(step)
  found: List[_idiom.Hit] = []
  done: Set[Tuple[int, str]] = set()
  for info, own in by_class.values():
    facts = _of_class(analysis, info)
    if not facts.parts:
      continue
    # Every list a step of the class, its bases or subclasses trains:
    # worked out once per class.
    related = [info, *analysis.project.base_classes(info),
               *analysis.project.subclasses(info)]
    keys = {_list_key(s) for c in related
            for s in by_class.get(id(c.node), (c, []))[1]}
    if len(keys) != 1:
      continue  # Another step trains another list: it may train the part.
    for step in own:
      key = _list_key(step)
      sources = facts.lists.get(key)
      if not sources or (id(info.node), key) in done:
        continue
      always = {s.part for s in sources if s.test is None}
      if not always:
        continue
      # A part also added in an `else` or another method is not left
      # out by the flag alone.
      always |= {s.part for s in sources if s.test is _UNREAD}
      left = [s for s in sources if s.test is not None
              and s.part not in always]
      if not left:
        continue
      taint = _loss_taint(analysis, info, facts, step)
      stepping = _stepping(analysis, steps)
      for source in left:
        test = source.test
        assert test is not None
        into = [s for s in sources if s.test is None
                and f"{source.part}>{s.part}" in taint]
        if not into or source.part in stepping or _escaped(
            analysis, info, source.part) or not _off_somewhere(
            analysis, info, test):
          continue
        done.add((id(info.node), key))
        found.append(_idiom.Hit(test, step.scope, step.call, {
            PART: source.node, INTO: into[0].node,
            LIST: _list_node(step) or source.node}))
        break
  return found


def message(hit: _idiom.Hit, step_named: str) -> str:
  """The finding's words."""
  part, into, listed = (hit.labels[PART], hit.labels[INTO],
                        hit.labels[LIST])
  assert isinstance(part, ast.Attribute) and isinstance(into, ast.Attribute)
  return (f"the list `{ast.unparse(listed)}` that {step_named} trains "
          f"takes `{ast.unparse(part)}` only where "
          f"`{ast.unparse(hit.node)}`, which a construction of the class "
          f"leaves off, while the loss flows through "
          f"`{ast.unparse(part.value)}` into the trained "
          f"`{ast.unparse(into.value)}`: that part stays fixed; "
          "whole variables only; exact as it is, not a drift; a candidate "
          "for a spec file")
