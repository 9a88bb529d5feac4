"""The scopes of a module: what each name is assigned, function by function,
and where, so that a read sees the assignments that reach it.

A name's assignment records where it takes effect (the end of its
statement), whether it replaces what the name held (`g = ...`) or adds to
it (`g.append(...)`, `g[0] = ...`, `g += ...`), and the loops and
conditional blocks it is in. A read then sees the last replacing
assignment before it in a block that encloses it, every adding one after
that, and those later in a loop that encloses both (the next iteration).
Class attributes (`self.mask = ...`) are shared by the class's methods,
whatever their order.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import itertools
import weakref
from typing import (Callable, Dict, FrozenSet, Iterable, Iterator, List,
                    Optional, Sequence, Set, Tuple, Type, TypeVar, Union,
                    cast)

from tfpartial._tools.scan import _every_path
from tfpartial._tools.scan import _feed_dicts
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _reaching

FunctionNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]
Position = Tuple[int, int]
# What a judge of a scope's values finds, by (judge, value or name, depth).
JudgedKey = Tuple[object, object, int]
_Judged = TypeVar("_Judged")
_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.IfExp,
           ast.ExceptHandler)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)
_LOOP_TYPES = frozenset(_LOOPS)
_BLOCK_TYPES = frozenset(_BLOCKS)
_SPLIT = _LOOP_TYPES | _BLOCK_TYPES
# Blocks that run their body once, as it stands.
_WITH_TYPES = frozenset({ast.With, ast.AsyncWith, ast.Try})
_NESTED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                     ast.ClassDef})
_BINDS = frozenset({ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For,
                    ast.AsyncFor, ast.withitem, ast.NamedExpr, ast.Call,
                    ast.Import, ast.ImportFrom, ast.ListComp, ast.SetComp,
                    ast.GeneratorExp, ast.DictComp})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp,
                   ast.DictComp)
# What runs as one step for `_reaching`: statements, handlers, cases.
_STATEMENTS = frozenset([*ast.stmt.__subclasses__(), ast.ExceptHandler,
                         ast.match_case])


# The methods by which a call adds to (or takes from) a list it names.
_LIST_WRITES = frozenset({"append", "extend", "insert", "add", "update",
                          "remove", "discard"})

# The attribute marking a `where` that stands for `g[cond] = 0`.
ZEROED = "tfpartial_zeroed"


def _children(node: ast.AST) -> List[ast.AST]:
  """The child nodes of `node` (as `ast.iter_child_nodes`, faster; a
  single `Load`, `+`, `and`, `-x` left out)."""
  fields = _NODE_FIELDS.get(type(node))
  if fields is None:
    fields = _NODE_FIELDS[type(node)] = tuple(
        f for f in node._fields if f not in _NEVER_NODES)
  found: List[ast.AST] = []
  for field in fields:
    value = getattr(node, field, None)
    if isinstance(value, list):
      found.extend([v for v in value if isinstance(v, ast.AST)])
    elif isinstance(value, ast.AST) and not isinstance(value, _NOT_READ):
      found.append(value)
  return found


def node_fields(kind: Type[ast.AST]) -> Tuple[str, ...]:
  """The fields of a node type that may hold a child node (`_children`'s:
  no name, number or single `Load` and `+`), found once per type."""
  fields = _NODE_FIELDS.get(kind)
  if fields is None:
    fields = _NODE_FIELDS[kind] = tuple(
        f for f in kind._fields if f not in _NEVER_NODES)
  return fields


def walk(node: ast.AST) -> Iterator[ast.AST]:
  """`node` and every node inside it, as `ast.walk` (breadth first) but
  for the single `Load`, `+`, `and`, `-x` of a node.

  >>> [type(n).__name__ for n in walk(ast.parse("a + f(b)").body[0])]
  ['Expr', 'BinOp', 'Name', 'Call', 'Name', 'Name']
  """
  if type(node) in _KEPT_WALKS:
    return itertools.chain((node,), _kept_walk(node))
  return _walked(node)


def _walked(node: ast.AST) -> Iterator[ast.AST]:
  todo = [node]
  for each in todo:  # Grows as it is read: breadth first.
    todo.extend(_children(each))
    yield each


def _kept_walk(node: ast.AST) -> List[ast.AST]:
  """The nodes inside a function, class, module or loop, walked once and
  kept on the node: the idioms ask for them many times, and the tree (with
  what is kept on it) goes when the scan ends. Never the node itself: that
  would be a cycle, and the scan frees its trees without the collector."""
  nodes: Optional[List[ast.AST]] = getattr(node, _WALKED, None)
  if nodes is None:
    nodes = []
    setattr(node, _WALKED, nodes)
    _walk_into(node, nodes)
  return nodes


def _walk_into(top: ast.AST, nodes: List[ast.AST]) -> None:
  """Fills `nodes` with the walk of `top`, and the kept walk of each
  function, class and loop inside it not walked yet on the way: each
  node's children are read once, and go to the walk of every walked
  node holding it (read in the order of the walk of `top`, breadth
  first, a node inside is in the same order in the walk of each)."""
  todo: List[ast.AST] = [top]
  # The walks each node of `todo` goes into, by position.
  into: List[Tuple[List[ast.AST], ...]] = [(nodes,)]
  for position, each in enumerate(todo):  # Grows as it is read.
    walks = into[position]
    found = _children(each)
    if not found:
      continue
    for walk in walks:
      walk.extend(found)
    todo.extend(found)
    for child in found:
      if type(child) in _KEPT_WALKS and getattr(child, _WALKED, None) is None:
        kept: List[ast.AST] = []
        setattr(child, _WALKED, kept)
        into.append((*walks, kept))
      else:
        into.append(walks)


# The nodes whose walk is kept on them (in the attribute `_WALKED`):
# scopes, and loops (each loop of a function is asked about too).
_KEPT_WALKS = frozenset({ast.Module, ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef, ast.For, ast.AsyncFor, ast.While})
_WALKED = "tfpartial_walked"


children = _children  # The child nodes of a node, for the idioms' walks.


# Leaves that say how, not what: `Load`, `+`, `and`, `-x`, `<`.
_NOT_READ = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop,
             ast.cmpop)
# Fields that never hold a child to read: names and numbers (the grammar's
# identifiers, ints and constants) and the single `Load` or `+` of a node.
_NEVER_NODES = frozenset({"ctx", "op", "id", "attr", "arg", "name", "asname",
                          "module", "level", "kind", "type_comment",
                          "conversion", "is_async", "rest", "tag"})
_NODE_FIELDS: Dict[type, Tuple[str, ...]] = {}


@dataclasses.dataclass(frozen=True)
class Where:
  """Where a statement runs: its loops and its conditional blocks."""

  loops: Tuple[int, ...] = ()
  blocks: Tuple[int, ...] = ()
  guard: Optional[ast.expr] = None  # The test of the innermost `if`.
  test: Optional[ast.expr] = None  # The same, with an `else` too.
  # A branch of an `if` with an `else` inside a loop: its test (`not`
  # the test in the `else`), a choice for the lists only this branch
  # adds to (`if 'norm' in v.name: norm_vars.append(v) elif ...`), and
  # the lists every branch adds to (no choice: each element somewhere).
  branch: Optional[ast.expr] = None
  shared: FrozenSet[str] = frozenset()


# Never changed once made; not frozen, for speed: a frozen dataclass sets
# each field through `object.__setattr__`, and a project makes one of these
# per assignment of every function it reads. Compared by identity.
@dataclasses.dataclass(eq=False, slots=True)
class Def:
  """One assignment of a name.

  Attributes:
    value: The expression assigned (or added).
    end: Where it takes effect: the end of its statement.
    replaces: Whether it replaces the name's value (else it adds to it).
    where: Its loops and conditional blocks.
  """

  value: ast.expr
  end: Position
  replaces: bool
  where: Where
  part: Optional[Tuple[int, int]] = None  # (i, n): element i of n-tuples.
  start: Position = (0, 0)  # Where its statement starts.
  # For a nested target (`for (g, v), m in zip(gvs, masks)`): the element
  # of the outer n-tuples that `part` is an element of.
  outer: Optional[Tuple[int, int]] = None
  statement: int = 0  # id() of its statement (for `_reaching`).
  inner: bool = False  # A comprehension's name: for itself alone.


@dataclasses.dataclass(eq=False)
class ClassInfo:
  """A class: its bases as written, its methods and `self.` attributes."""

  node: ast.ClassDef
  home: "Scope"
  methods: Dict[str, "Scope"] = dataclasses.field(default_factory=dict)
  # `self.x` -> (value, the method's scope), as the methods read so far.
  assigned: Dict[str, List[Tuple[ast.expr, "Scope"]]] = dataclasses.field(
      default_factory=dict)

  @property
  def name(self) -> str:
    return self.node.name

  @property
  def bases(self) -> List[str]:
    return [_names.dotted(b) or "" for b in self.node.bases]

  @property
  def attributes(self) -> Dict[str, List[Tuple[ast.expr, "Scope"]]]:
    """`self.x` -> (value, the method's scope), in every method (each
    method read first)."""
    for method in self.methods.values():
      for _ in method.all():
        pass
    return self.assigned


# What a scope knows once its statements are read (on first use).
_LAZY = frozenset({"defs", "functions", "classes", "scopes", "loops",
                   "children", "nodes", "uses", "imports", "guards", "tests",
                   "_ends"})


class Scope:
  """One function (or the module): its assignments, parameters, helpers.

  A function's statements are read the first time anything about them is
  asked (most functions of a project hold nothing an idiom looks for).

  >>> tree = ast.parse("m = [0., 1.]\\ndef f(g):\\n  h = g * m\\n")
  >>> module = collect(tree)
  >>> [(s.name, sorted(s.defs)) for s in module.all()]
  [('<module>', ['m']), ('f', ['h'])]
  """

  defs: Dict[str, List[Def]]
  functions: Dict[str, FunctionNode]
  classes: Dict[str, ClassInfo]
  scopes: Dict[int, "Scope"]  # id(function node) -> its scope.
  # What each loop name iterates over: `for i, w in enumerate(ws)` -> ws.
  loops: Dict[str, ast.expr]
  children: List["Scope"]
  nodes: List[ast.AST]  # The nodes of this scope, not nested.
  # Names read here: id -> (position, where, id(statement), name).
  uses: Dict[int, Tuple[Position, Where, int, str]]
  imports: List[Union[ast.Import, ast.ImportFrom]]
  # What a loop adds to a list under an `if`: id(added value) -> the test
  # (`if fixed[i] == '0': chosen += weights[i]`).
  guards: Dict[int, ast.expr]
  # The same for any `if` around it, one with an `else` too
  # (`if 'emb' in v.name: out.append(zeros_like(g)) else: out.append(g)`).
  tests: Dict[int, ast.expr]
  _ends: Dict[str, List[Position]]

  def __init__(self, node: ast.AST, parent: Optional["Scope"],
               cls: Optional[ClassInfo] = None,
               body: Optional[Sequence[ast.AST]] = None,
               module: object = None):
    self.node = node
    self.parent = parent
    self.name = getattr(node, "name", "<lambda>" if isinstance(
        node, ast.Lambda) else "<module>")
    self.params: List[str] = []
    self.cls = cls  # The class this is a method of.
    # The project's module (for `_project`): the parent's, or given.
    self.module: object = parent.module if parent is not None else module
    self._body = body
    self._statements: Sequence[ast.AST] = body or ()
    # (name, id(read)) -> the assignments it sees, worked out once.
    self._reached: Dict[Tuple[str, int], Tuple[int, ...]] = {}
    self._walk: Optional[_reaching.Walk] = None  # Walked on first read.
    # What a judge of this scope's values found, by (judge, value or name,
    # depth): asked once per scope, however many places ask.
    self.judged: Dict[JudgedKey, object] = {}

  def __getattr__(self, name: str) -> object:
    """Reads the scope's statements on the first question about them."""
    if name not in _LAZY or "_body" not in self.__dict__:
      raise AttributeError(name)
    self._read()
    return self.__dict__[name]

  def _read(self) -> None:
    body, self._body = self._body, None
    self.defs, self.functions, self.classes, self.scopes = {}, {}, {}, {}
    self.loops, self.children, self.nodes, self.uses = {}, [], [], {}
    self.imports, self.guards, self._ends = [], {}, {}
    self.tests = {}
    if body:
      _Filler(self).fill(body, Where())

  @property
  def classname(self) -> str:
    return self.cls.name if self.cls is not None else ""

  def all(self) -> Iterator["Scope"]:
    """This scope and every scope inside it."""
    stack = [self]
    while stack:
      scope = stack.pop()
      yield scope
      stack.extend(reversed(scope.children))

  def read(self) -> Iterator["Scope"]:
    """This scope and the scopes inside it read so far (none is read)."""
    stack = [self]
    while stack:
      scope = stack.pop()
      if "nodes" in scope.__dict__:
        yield scope
        stack.extend(reversed(scope.__dict__["children"]))

  def once(self, key: JudgedKey, compute: Callable[[], _Judged]) -> _Judged:
    """What `compute` finds for `key`, worked out on the first question
    only: a fact read from the whole scope, asked once per step.

    >>> scope = Scope(ast.parse("x = 1"), None)
    >>> scope.once(("calls", None, 0), lambda: [1]) is scope.once(
    ...     ("calls", None, 0), lambda: [2])
    True
    """
    if key in self.judged:
      return cast(_Judged, self.judged[key])
    found = compute()
    self.judged[key] = found
    return found

  def function(self, name: str) -> Optional[Tuple[FunctionNode, "Scope"]]:
    """The helper function `name` visible here and the scope it is in."""
    scope: Optional[Scope] = self
    while scope is not None:
      if name in scope.functions:
        return scope.functions[name], scope
      scope = scope.parent
    return None

  def scope_of(self, function: ast.AST) -> Optional["Scope"]:
    """The scope of a function defined directly in this one."""
    return self.scopes.get(id(function))

  def reaching(self, name: str, node: ast.AST) -> Tuple[int, ...]:
    """The indexes in `defs[name]` of the assignments a read of `name` at
    `node` sees (all of them when the read's place is not known)."""
    key = (name, id(node))
    known = self._reached.get(key)
    if known is None:
      known = self._reached[key] = self._reaching(name, node)
    return known

  def _reaching(self, name: str, node: ast.AST) -> Tuple[int, ...]:
    defs = self.defs.get(name, [])
    use = self.uses.get(id(node))
    if use is None or not defs:
      return tuple(range(len(defs)))
    if self._walk is None:
      self._walk = _reaching.Walk(self._statements, self.defs, self.uses)
    found = self._walk.reaching(name, id(node), use[0], use[2])
    if found is not None:
      return found
    return self._nearest(name, use[0], use[1], defs)

  def _nearest(self, name: str, position: Position, where: Where,
               defs: List[Def]) -> Tuple[int, ...]:
    """A read the walk did not meet (a default value, made beside the
    statements): the assignments before it back to the nearest that
    replaces the name in a block around it, and those later in its
    loops."""
    ends = self._ends.get(name)
    if ends is None or len(ends) != len(defs):
      ends = self._ends[name] = [d.end for d in defs]
    last = bisect.bisect_right(ends, position)
    seen = []
    loops = set(where.loops)
    for index in range(last - 1, -1, -1):
      seen.append(index)
      each = defs[index]
      if each.replaces and _encloses(each.where.blocks, where.blocks):
        # Run before the read in each turn of its loops: what the rest of
        # those loops assigns last turn is replaced by then.
        loops -= set(each.where.loops)
        break
    if loops:  # The next iteration, but not the statement itself.
      seen += [i for i in range(last, min(len(defs), last + 64))
               if set(defs[i].where.loops) & loops
               and not defs[i].start <= position <= defs[i].end]
    return tuple(sorted(seen))


def enclosing_class(scope: Optional[Scope]) -> Optional[ClassInfo]:
  """The class whose method (or a function inside one) `scope` is."""
  method = enclosing_method(scope)
  return method.cls if method is not None else None


def enclosing_method(scope: Optional[Scope]) -> Optional[Scope]:
  """The method of a class that `scope` is, or is nested in."""
  while scope is not None and scope.cls is None:
    scope = scope.parent
  return scope


def imported_names(scope: Scope) -> Set[str]:
  """The names the module of `scope` imports (`np` of `np.clip`)."""
  while scope.parent is not None:
    scope = scope.parent
  return {(a.asname or a.name).split(".")[0]
          for i in scope.imports for a in i.names}


def values_reaching(chosen: ast.AST, scope: Scope) -> List[ast.AST]:
  """What `chosen` may hold: the values of the assignments a read of a
  local name sees, else `chosen` itself."""
  if not isinstance(chosen, ast.Name):
    return [chosen]
  defs = scope.defs.get(chosen.id, [])
  return [defs[i].value for i in scope.reaching(chosen.id, chosen)]


def blocks(statement: ast.stmt) -> Iterator[List[ast.stmt]]:
  """The statement lists a compound statement holds, in order: its body,
  its `else`, its `finally`, and its `except` handlers' bodies as one."""
  for field in ("body", "orelse", "finalbody", "handlers"):
    inner = getattr(statement, field, None)
    if isinstance(inner, list):
      yield [s for s in inner if isinstance(s, ast.stmt)] + [
          s for h in inner if isinstance(h, ast.ExceptHandler)
          for s in h.body]


def made_from(value: ast.AST, scope: Scope, bound: int = 40
              ) -> Iterator[ast.AST]:
  """Every node of `value` and of the assignments of the local names it
  reads, and theirs in turn, up to `bound` expressions
  (`h = g * m; out = h + 1`: from `out`, the nodes of `h + 1` and of
  `g * m`).

  >>> module = collect(ast.parse("h = g * m\\nout = h + 1\\n"))
  >>> out = module.defs["out"][0].value
  >>> sorted({n.id for n in made_from(out, module) if isinstance(n, ast.Name)})
  ['g', 'h', 'm']

  A comprehension's own variable is its own (`[v for v in
  tf.trainable_variables(scope='rnn')]`): not what other comprehensions
  of the function bind to the same name.

  >>> module = collect(ast.parse("a = [v for v in f('x')]\\n"
  ...                            "b = [v for v in f('y')]\\n"))
  >>> b = module.defs["b"][0].value
  >>> sorted({n.value for n in made_from(b, module)
  ...         if isinstance(n, ast.Constant)})
  ['y']
  """
  stack: List[ast.AST] = [value]
  seen: Set[int] = set()
  while stack and len(seen) < bound:
    node = stack.pop()
    if id(node) in seen:
      continue
    seen.add(id(node))
    items = list(ast.walk(node))
    own = {n.id for item in items if isinstance(item, ast.comprehension)
           for n in ast.walk(item.target) if isinstance(n, ast.Name)}
    for item in items:
      yield item
      if isinstance(item, ast.Name) and isinstance(item.ctx, ast.Load) and (
          item.id not in own):
        stack += [d.value for d in scope.defs.get(item.id, [])]


def found_through_names(node: ast.AST, scope: Scope,
                        test: Callable[[ast.AST], bool],
                        walk: Callable[[ast.AST], Iterable[ast.AST]] = (
                            ast.walk), depth: int = 0) -> bool:
  """Whether `test` holds for a node of `node` (as `walk` gives them) or
  of the values of the local names it reads, and theirs, two names deep
  (`keep = tf.cast(step > n)`; `mask = keep * m`: from `mask`, the
  comparison).

  >>> module = collect(ast.parse("keep = step > n\\nmask = keep * m\\n"))
  >>> mask = module.defs["mask"][0].value
  >>> found_through_names(mask, module, lambda n: isinstance(n, ast.Compare))
  True
  """
  for item in walk(node):
    if test(item):
      return True
    if isinstance(item, ast.Name) and depth < 2 and any(
        found_through_names(d.value, scope, test, walk, depth + 1)
        for d in scope.defs.get(item.id, []) if d.value is not None):
      return True
  return False


def _fills_missing(guard: Optional[ast.expr], target: ast.Subscript,
                   scope: Scope) -> bool:
  """Whether `guard` tests that the entry `target` writes is `None` (`if
  grads[i] is None:` or `== None` before `grads[i] = zeros`, or before
  `filled[i] = zeros` of `filled = list(grads)`): zeros where there was
  no gradient, not elements zeroed.

  >>> test = ast.parse("grads[i] == None").body[0].value
  >>> at = lambda text: ast.parse(text).body[0].value
  >>> [_fills_missing(test, at(t), collect(ast.parse("")))
  ...  for t in ("grads[i]", "grads[j]", "other[i]")]
  [True, False, False]
  """
  if not (isinstance(guard, ast.Compare) and len(guard.ops) == 1 and (
      isinstance(guard.ops[0], (ast.Is, ast.Eq))) and isinstance(
          guard.left, ast.Subscript) and ast.unparse(
              guard.left.slice) == ast.unparse(target.slice) and isinstance(
                  guard.comparators[0], ast.Constant) and (
                      guard.comparators[0].value is None)):
    return False
  tested, written = ast.unparse(guard.left.value), target.value
  return ast.unparse(written) == tested or isinstance(written, ast.Name) and (
      any(isinstance(d.value, ast.Call) and _names.call_name(d.value) == (
          "list") and [ast.unparse(a) for a in d.value.args] == [tested]
          for d in scope.defs.get(written.id, []) if d.replaces))


def _binarized(target: ast.Subscript, value: ast.expr) -> bool:
  """`m[m != 0] = 1` (or `> 0`): the nonzero elements of a name set to
  one, so it holds the 0/1 mask of where it was nonzero."""
  test = target.slice
  return isinstance(target.value, ast.Name) and isinstance(
      value, ast.Constant) and value.value == 1 and isinstance(
          test, ast.Compare) and len(test.ops) == 1 and isinstance(
              test.ops[0], (ast.NotEq, ast.Gt)) and isinstance(
                  test.left, ast.Name) and test.left.id == (
                      target.value.id) and _names.is_zero(test.comparators[0])


def _encloses(outer: Tuple[int, ...], inner: Tuple[int, ...]) -> bool:
  return inner[:len(outer)] == outer


def collect(tree: ast.Module, module: object = None) -> Scope:
  """The module's scope (its functions' scopes below it, each read when
  first asked); `module` is the project's module it belongs to."""
  scope = Scope(tree, None, body=tree.body, module=module)
  scope.nodes  # pylint: disable=pointless-statement
  return scope


def _branches(node: ast.If, inner: Where, here: Where
              ) -> List[Tuple[ast.AST, Where]]:
  """The children of an `if` with an `else` in a loop, each branch with
  its own test, to push on the filler's stack (last first)."""
  body, orelse = added_to(node.body), added_to(node.orelse)
  shared = frozenset(body & orelse) | inner.shared
  negated = ast.copy_location(ast.UnaryOp(ast.Not(), node.test), node.test)
  yes = dataclasses.replace(inner, branch=node.test, shared=shared)
  no = dataclasses.replace(inner, branch=negated, shared=shared)
  return [*[(c, no) for c in reversed(node.orelse)],
          *[(c, yes) for c in reversed(node.body)],
          (node.test, here)]


def _continued(node: ast.AST) -> Dict[int, Sequence[ast.stmt]]:
  """The `if`s without an `else` of a block in a loop whose body ends in
  `continue`, each with the statements after it: its `else`."""
  found: Dict[int, Sequence[ast.stmt]] = {}
  for block in (getattr(node, "body", []), getattr(node, "orelse", [])):
    later = _every_path.added_later_in(block)  # The block read once.
    for index, statement in enumerate(block):
      if isinstance(statement, ast.If) and not statement.orelse and (
          isinstance(statement.body[-1], ast.Continue)) or index in later:
        found[id(statement)] = block[index + 1:]
  return found


def _skipping(node: ast.If, inner: Where, here: Where,
              after: Sequence[ast.stmt]) -> List[Tuple[ast.AST, Where]]:
  """The children of an `if` that ends in `continue` (`if 'norm' in
  g.name: out.append([p, g]); continue` before `out.append([m, g])`):
  when the statements after it add to every list its body adds to, each
  element goes somewhere, as with an `else`; else as any `if`."""
  body = added_to(node.body)
  if body and body <= added_to(after):
    inner = dataclasses.replace(inner, guard=None, branch=node.test,
                                shared=frozenset(body) | inner.shared)
  return [*[(c, inner) for c in reversed(node.body)], (node.test, here)]


def _kept_after(node: ast.If, after: Sequence[ast.stmt],
                stack: List[Tuple[ast.AST, "Where"]]) -> None:
  """`if 'emb' in v.name: continue` (perhaps with a log line) before
  `kept.append(v)`: what the statements after a bare skip add is chosen
  by the test's negation, as under `if not ...:`; their places on the
  filler's stack are given that guard."""
  if added_to(node.body) or not all(isinstance(s, (
      ast.Continue, ast.Pass)) or isinstance(s, ast.Expr) and isinstance(
          s.value, (ast.Call, ast.Constant)) for s in node.body):
    return
  later = {id(s) for s in after}
  negated = ast.copy_location(ast.UnaryOp(ast.Not(), node.test), node.test)
  for index, (each, where) in enumerate(stack):
    if id(each) in later and where.guard is None:
      stack[index] = (each, dataclasses.replace(where, guard=negated))


def added_to(body: Sequence[ast.stmt]) -> Set[str]:
  """The names of the lists a block adds to (`x.append(v)`, `x += v`).

  >>> sorted(added_to(ast.parse("if a:\\n  x.append(1)\\nelif b:\\n"
  ...                            "  y += [2]\\nelse:\\n  z = 3\\n").body))
  ['x', 'y']
  """
  found: Set[str] = set()
  for statement in body:
    if isinstance(statement, ast.If):
      kept = _IF_ADDED.get(statement)
      found |= _added_by_ifs(statement) if kept is None else kept
    else:
      found |= _added_in(walk(statement))
  return found


def _added_by_ifs(statement: ast.If) -> FrozenSet[str]:
  """`added_to` of one `if`: its test's, its body's and its `else`'s,
  kept per `if` (the filler asks again of each `if` inside, and of each
  `elif` of a chain: read once, not once per `if` around it). An `elif`
  chain is read from its last `if`, not by recursion."""
  chain = [statement]
  while len(chain[-1].orelse) == 1:
    inner = chain[-1].orelse[0]
    if not isinstance(inner, ast.If) or inner in _IF_ADDED:
      break
    chain.append(inner)
  for each in reversed(chain):
    _IF_ADDED[each] = frozenset(
        _added_in(walk(each.test)) | added_to(each.body) | added_to(
            each.orelse))
  return _IF_ADDED[statement]


# Per `if` (weakly: a scan's trees go when it ends).
_IF_ADDED: "weakref.WeakKeyDictionary[ast.AST, FrozenSet[str]]" = (
    weakref.WeakKeyDictionary())


def _added_in(nodes: Iterable[ast.AST]) -> Set[str]:
  """The names of the lists calls or augmented assignments among `nodes`
  add to."""
  found: Set[str] = set()
  for node in nodes:
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr in {
            "append", "extend", "insert", "add", "update"}:
      found.add(_names.dotted(node.func.value) or "")
    elif isinstance(node, ast.AugAssign):
      found.add(_names.dotted(node.target) or "")
  return found - {""}


class _Filler:
  """Walks one scope's statements in source order."""

  def __init__(self, scope: Scope):
    self.scope = scope
    # id(an `if` ending in `continue`) -> the statements after it.
    self._after: Dict[int, Sequence[ast.stmt]] = {}
    self.statement = 0  # id() of the statement being read.

  def fill(self, body: Sequence[ast.AST], where: Where) -> None:
    stack: List[Tuple[ast.AST, Where]] = [(n, where) for n in reversed(body)]
    nodes, uses = self.scope.nodes, self.scope.uses
    outer = statement = self.statement
    while stack:
      node, here = stack.pop()
      kind = type(node)
      if kind is ast.Constant:
        continue
      if kind in _STATEMENTS:  # Read depth first: its parts come next.
        statement = self.statement = id(node)
      if isinstance(node, ast.Name):
        nodes.append(node)
        if type(node.ctx) is ast.Load:
          uses[id(node)] = ((node.lineno, node.col_offset), here, statement,
                            node.id)
        continue
      if kind in _NESTED and self._nested(node):
        self.statement = statement
        continue
      nodes.append(node)
      if kind in _BINDS:
        self._bind_statement(node, here)
      children = _children(node)
      if kind in _WITH_TYPES and here.loops:
        self._after.update(_continued(node))
      if kind not in _SPLIT:
        stack.extend([(c, here) for c in reversed(children)])
        continue
      inner = Where(
          (*here.loops, id(node)) if kind in _LOOP_TYPES else here.loops,
          (*here.blocks, id(node)) if kind in _BLOCK_TYPES
          else here.blocks,
          # An `if` with an `else` puts every element somewhere: a choice
          # is an `if` alone (per element: a loop starts afresh).
          (None if node.orelse else node.test) if isinstance(node, ast.If)
          else None if kind in _LOOP_TYPES else here.guard,
          node.test if isinstance(node, ast.If)
          else None if kind in _LOOP_TYPES else here.test,
          None if kind in _LOOP_TYPES else here.branch,
          frozenset() if kind in _LOOP_TYPES else here.shared)
      if isinstance(node, ast.If) and node.orelse and here.loops:
        stack.extend(_branches(node, inner, here))
      elif isinstance(node, ast.If) and id(node) in self._after:
        after = self._after.pop(id(node))
        _kept_after(node, after, stack)
        stack.extend(_skipping(node, inner, here, after))
      elif isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.If)):
        if inner.loops:
          self._after.update(_continued(node))
        inside = {id(c) for c in (*node.body, *node.orelse)}
        stack.extend([(c, inner if id(c) in inside else here)
                      for c in reversed(children)])
      else:
        stack.extend([(c, inner) for c in reversed(children)])
    self.statement = outer

  def _nested(self, node: ast.AST) -> bool:
    scope = self.scope
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      scope.functions[node.name] = node
      self._child(node, node.body, scope.cls if isinstance(
          scope.node, ast.ClassDef) else None)
      self.fill(node.decorator_list, Where())
      return True
    if isinstance(node, ast.Lambda):
      self._child(node, [ast.Return(node.body)], None)
      return True
    if isinstance(node, ast.ClassDef):
      info = ClassInfo(node, scope)
      scope.classes[node.name] = info
      for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
          info.methods[item.name] = self._child(item, item.body, info)
      body = [i for i in node.body if not isinstance(
          i, (ast.FunctionDef, ast.AsyncFunctionDef))]
      self.fill([*node.bases, *node.decorator_list, *body], Where())
      return True
    return False

  def _child(self, node: FunctionNode, body: List[ast.stmt],
             cls: Optional[ClassInfo]) -> Scope:
    child = Scope(node, self.scope, cls, body)
    args = node.args
    child.params = [a.arg for a in (*args.posonlyargs, *args.args,
                                    *args.kwonlyargs)]
    child.params += [a.arg for a in (args.vararg, args.kwarg) if a]
    self.scope.children.append(child)
    self.scope.scopes[id(node)] = child
    for default in [*args.defaults, *args.kw_defaults]:
      if default is not None:
        self.fill([ast.Expr(default)], Where())
    return child

  def _bind_statement(self, node: ast.AST, where: Where) -> None:
    if type(node) is ast.Call and not (isinstance(
        node.func, ast.Attribute) and node.func.attr in _LIST_WRITES):
      return  # Most calls bind nothing (read first: the most frequent).
    if isinstance(node, _COMPREHENSIONS):
      # Its names hold from its start: the element is read before the
      # `for` that binds it (`[t.assign(q) for q, t in pairs]`).
      start = (node.lineno, node.col_offset)
      for generator in node.generators:
        _Binder(self.scope, start, where, start, self.statement,
                inner=True).loop(generator.target, generator.iter)
      return
    ends_at: ast.AST = node
    if isinstance(node, (ast.For, ast.AsyncFor)):
      ends_at = node.iter  # The loop name holds inside the body.
    elif isinstance(node, ast.withitem):
      ends_at = node.context_expr
    end = (getattr(ends_at, "end_lineno", 0) or 0,
           getattr(ends_at, "end_col_offset", 0) or 0)
    bind = _Binder(self.scope, end, where, (
        getattr(node, "lineno", 0) or 0, getattr(node, "col_offset", 0) or 0),
                   self.statement)
    if isinstance(node, ast.Assign):
      for target in node.targets:
        bind.bind(target, node.value)
    elif isinstance(node, ast.AnnAssign) and node.value:
      bind.bind(node.target, node.value)
    elif isinstance(node, ast.AugAssign):
      bind.augmented(node)
    elif isinstance(node, (ast.For, ast.AsyncFor)):
      bind.loop(node.target, node.iter)
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
      bind.bind(node.optional_vars, node.context_expr)
    elif isinstance(node, ast.NamedExpr):
      bind.bind(node.target, node.value)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
      self.scope.imports.append(node)
      register = getattr(self.scope.module, "add_import", None)
      if register is not None:
        register(node)
    elif isinstance(node, ast.Call) and _names.call_name(node) in {
        "append", "extend", "insert", "add", "update"} and isinstance(
            node.func, ast.Attribute) and node.args:
      bind.bind(node.func.value, node.args[-1], replaces=False)
    elif isinstance(node, ast.Call) and _names.call_name(node) in {
        "remove", "discard"} and isinstance(node.func, ast.Attribute) and (
            len(node.args) == 1):
      # `tvars.remove(v)` under an `if` that tests names: a choice.
      bind.bind(node.func.value, node, replaces=False)


class _Binder:
  """Records assignments of one statement."""

  def __init__(self, scope: Scope, end: Position, where: Where,
               start: Position = (0, 0), statement: int = 0,
               inner: bool = False):
    self.scope, self.end, self.where, self.start = scope, end, where, start
    self.statement, self.inner = statement, inner

  def bind(self, target: ast.AST, value: ast.expr,
           replaces: bool = True,
           part: Optional[Tuple[int, int]] = None,
           outer: Optional[Tuple[int, int]] = None) -> None:
    scope = self.scope
    if isinstance(target, (ast.Tuple, ast.List)):
      parts = _parts(value, len(target.elts))
      count = len(target.elts)
      starred = any(isinstance(e, ast.Starred) for e in target.elts)
      for index, (element, each) in enumerate(zip(target.elts, parts)):
        self.bind(element, each, replaces, None if each is not value or (
            starred) else (index, count),
                  part if each is value and not starred else None)
    elif isinstance(target, ast.Starred):
      self.bind(target.value, value, replaces)
    elif isinstance(target, ast.Name):
      scope.defs.setdefault(target.id, []).append(
          Def(value, self.end, replaces, self.where, part, self.start,
              outer, self.statement, self.inner))
      self._guard(value, replaces, target.id)
    elif isinstance(target, ast.Attribute):
      name = _names.dotted(target)
      self._guard(value, replaces, name or "")
      method = scope
      while method.cls is None and method.parent is not None:
        method = method.parent
      if name is not None and name.startswith("self.") and method.cls:
        method.cls.assigned.setdefault(name, []).append((value, scope))
      elif name is not None and scope.parent is None:
        scope.defs.setdefault(name, []).append(
            Def(value, self.end, replaces, self.where,
                statement=self.statement))
    elif isinstance(target, ast.Subscript):
      # `grads[0] = masked` adds `masked` to what `grads` holds.
      base: ast.expr = target.value
      while isinstance(base, ast.Subscript):
        base = base.value
      if _binarized(target, value):
        # `m[m != 0] = 1`: every element now 0 or 1, the mask it tests.
        self.bind(base, target.slice, replaces=True)
        return
      value = self._zeroed(target, value)
      self.bind(base, value, replaces=False)
      if self.where.guard is None or not self._filled(base) or (
          _every_path.once_per_key(self.where.guard, target, {
              name for name, defs in self.scope.defs.items() if any(
                  _every_path.empty_dict(d.value) for d in defs)})):
        # Replacing an element under an `if` keeps the others: no choice;
        # nor is splitting a dict in two by an `if` and its `else`.
        self.scope.guards.pop(id(value), None)
        self.scope.tests.pop(id(value), None)

  def _filled(self, base: ast.expr) -> bool:
    """Whether a loop fills a dict made empty before it (`chosen = {}`;
    `for key, w in weights.items(): if ...: chosen[key] = w`): an entry
    set under an `if` is then a choice, as an `append` is."""
    if not isinstance(base, ast.Name) or not self.where.loops:
      return False
    made = [d for d in self.scope.defs.get(base.id, []) if d.replaces]
    return len(made) == 1 and made[0].where.loops != self.where.loops and (
        isinstance(made[0].value, ast.Dict) and not made[0].value.keys or (
            isinstance(made[0].value, ast.Call) and not made[0].value.args
            and _names.call_name(made[0].value) in {"dict", "OrderedDict"}))

  def _zeroed(self, target: ast.Subscript, value: ast.expr) -> ast.expr:
    """`g[w == 0] = 0` (elements chosen by a condition set to zero) as
    the `where(w == 0, 0, g)` it is, for the flow; any other element
    assignment as its value."""
    chosen = target.slice
    if _fills_missing(self.where.guard, target, self.scope):
      return value  # A gradient that is `None` given zeros: none zeroed.
    if not _names.is_zero(value) or isinstance(target.value, ast.Subscript) \
        or isinstance(chosen, (ast.Constant, ast.Slice, ast.Tuple)) or (
            isinstance(chosen, ast.UnaryOp) and isinstance(
                chosen.operand, ast.Constant)):
      return value
    if _feed_dicts.is_feed_dict(target.value, self.scope):
      return value  # `feed_dict[flag] = 0`: a key's value, no element.
    base = _as_load(target.value)
    for name in ast.walk(base):  # It reads what held before.
      if isinstance(name, ast.Name):
        self.scope.uses[id(name)] = ((target.lineno, target.col_offset),
                                     self.where, self.statement, name.id)
    where = ast.Call(ast.Name("where", ast.Load()), [chosen, value, base], [])
    setattr(where, ZEROED, True)  # Not in the source: said so when shown.
    return ast.fix_missing_locations(ast.copy_location(where, target))

  def _guard(self, value: ast.expr, replaces: bool, name: str = "") -> None:
    where = self.where
    if not replaces and where.guard is not None and where.loops:
      self.scope.guards[id(value)] = where.guard
    elif not replaces and where.branch is not None and where.loops and (
        name and name not in where.shared) and not isinstance(
            value, (ast.Tuple, ast.List)):
      # Variables, not (gradient, variable) pairs: the other branch may
      # keep the gradients it leaves out to apply them later.
      self.scope.guards[id(value)] = where.branch
    if not replaces and self.where.test is not None and self.where.loops:
      self.scope.tests[id(value)] = self.where.test

  def augmented(self, node: ast.AugAssign) -> None:
    # `w[0] *= mask` makes `w` hold `w[0] * mask`, for the flow.
    value = ast.BinOp(_as_load(node.target), node.op, node.value)
    ast.copy_location(value, node)
    ast.fix_missing_locations(value)
    for name in ast.walk(value.left):  # It reads what held before.
      if isinstance(name, ast.Name):
        self.scope.uses[id(name)] = ((node.lineno, node.col_offset),
                                     self.where, self.statement, name.id)
    base: ast.expr = node.target
    while isinstance(base, ast.Subscript):
      base = base.value
    self.bind(base, value, replaces=False)
    if isinstance(base, ast.Name) and base.id in self.scope.loops:
      # NumPy's `w *= m` in `for w in ws` changes the elements of `ws`.
      self.bind(self.scope.loops[base.id], value, replaces=False)
    if _every_path.rescaled(node) or _every_path.summed(node):
      self.scope.guards.pop(id(value), None)  # A rate or a loss's term.

  def loop(self, target: ast.AST, source: ast.expr) -> None:
    """`for g, m in zip(gs, ms)` binds `g` to `gs` and `m` to `ms`;
    `for i, w in enumerate(ws)` binds `w` to `ws`."""
    args = source.args if isinstance(source, ast.Call) else []
    name = _names.call_name(source) if isinstance(source, ast.Call) else ""
    elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) \
        else []
    if name == "zip" and elements and len(elements) == len(args):
      for element, part in zip(elements, args):
        self.loop(element, part)
      return
    if name == "enumerate" and len(elements) == 2 and args:
      self.loop(elements[1], args[0])
      return
    if isinstance(target, ast.Name) and isinstance(source, (
        ast.Name, ast.Attribute)):
      self.scope.loops[target.id] = source
    self.bind(target, source)


def _parts(value: ast.expr, count: int) -> List[ast.expr]:
  """The parts of `a, b = value`: the elements of a tuple written out,
  else `value` itself for each."""
  if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == count \
      and not any(isinstance(e, ast.Starred) for e in value.elts):
    return list(value.elts)
  return [value] * count


def _as_load(target: ast.expr) -> ast.expr:
  """`target` read instead of written (its inner parts already read)."""
  if isinstance(target, ast.Name):
    read: ast.expr = ast.Name(target.id, ast.Load())
  elif isinstance(target, ast.Attribute):
    read = ast.Attribute(target.value, target.attr, ast.Load())
  elif isinstance(target, ast.Subscript):
    read = ast.Subscript(target.value, target.slice, ast.Load())
  else:
    return target
  return ast.copy_location(read, target)
