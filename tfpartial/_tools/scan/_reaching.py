"""Which assignments of a name a read sees: reaching definitions over the
statements of one scope, in the order they can run.

One forward walk of a scope's statements (on its first question) records,
for each read of a name the scope assigns, what the name may hold just
before the read's statement runs. An `if` runs one of its arms, each from
the state before it, and after it the arms that go on are joined (an arm
never sees its siblings); `match` runs one case; `try` its body, then its
`else`, and a handler from any point of the body; `finally` is read as
every path reaches it, and what goes on after it as the paths that go on
do. A loop's body sees the values before the loop and those its turns
leave at its head, a `for` target set anew each turn; `return`, `raise`,
`break` and `continue` end their path (the last two at their loop's exit
and head). `with` runs its body once.

Values are shared, never copied: an assignment that adds (`x.append(v)`)
and a join are nodes over the values they extend, and a loop's head is a
marker resolved when a read is asked, so the walk is linear in the
scope's size.

>>> tree = ast.parse("x = 0\\nif c:\\n  x = 1\\nelse:\\n  f(x)\\n")
>>> first, branch = tree.body
>>> call = branch.orelse[0]
>>> defs = {"x": [_Made(id(first)), _Made(id(branch.body[0]))]}
>>> read = call.value.args[0]
>>> walk = Walk(tree.body, defs, {id(read): ((5, 4), None, id(call), "x")})
>>> walk.reaching("x", id(read), (5, 4), id(call))  # Not the `if`'s `x`.
(0,)
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from typing import (Any, Callable, Dict, List, Mapping, Optional, Protocol,
                    Sequence, Set, Tuple)

Position = Tuple[int, int]
# id(read) -> (its position, where, id(its statement), the name read).
Uses = Mapping[int, Tuple[Position, Any, int, str]]


class Assignment(Protocol):
  """What the walk reads of one assignment (`_scopes.Def`)."""

  @property
  def replaces(self) -> bool: ...

  @property
  def inner(self) -> bool: ...

  @property
  def statement(self) -> int: ...

  @property
  def end(self) -> Position: ...

  @property
  def value(self) -> ast.expr: ...


class _Value:
  """What a name may hold: the assignments (indexes) and loop heads
  (negative markers) of `items`, and every value of `parts`."""

  __slots__ = ("items", "parts")

  def __init__(self, items: Tuple[int, ...],
               parts: Tuple["_Value", ...] = ()) -> None:
    self.items, self.parts = items, parts


_NOTHING = _Value(())


class _Frame:
  """The names a block set, over the frame it runs in; a loop's frame
  (`loop`, its marker) adds its head's turns to what it reads through."""

  __slots__ = ("values", "parent", "loop")

  def __init__(self, parent: Optional["_Frame"], loop: int = 0) -> None:
    self.values: Dict[str, _Value] = {}
    self.parent, self.loop = parent, loop


@dataclasses.dataclass
class _Loop:
  """A loop being walked: its frame and the states its paths leave it
  by (`break`) and take back to its head (`continue`, the body's end)."""

  marker: int
  frame: _Frame
  breaks: List[Dict[str, _Value]] = dataclasses.field(default_factory=list)
  turns: List[Dict[str, _Value]] = dataclasses.field(default_factory=list)


def _lookup(frame: Optional[_Frame], name: str) -> _Value:
  """What `name` holds at the end of `frame` (through its parents)."""
  marks: List[int] = []
  got = _NOTHING
  while frame is not None:
    found = frame.values.get(name)
    if found is not None:
      got = found
      break
    if frame.loop:
      marks.append(frame.loop)
    frame = frame.parent
  return _Value(tuple(marks), (got,)) if marks else got


def _set_since(frame: Optional[_Frame], stop: Optional[_Frame]
               ) -> Set[str]:
  """The names set in `frame` and its parents below `stop`."""
  names: Set[str] = set()
  while frame is not None and frame is not stop:
    names.update(frame.values)
    frame = frame.parent
  return names


def _join(frame: _Frame, arms: Sequence[_Frame],
          into: Optional[_Frame] = None) -> bool:
  """Joins the states of the arms (frames over `frame`) that go on into
  `into` (`frame` itself unless given); whether any goes on."""
  if not arms:
    return False
  names: Set[str] = set()
  for arm in arms:
    names |= _set_since(arm, frame)
  target = frame if into is None else into
  for name in names:
    values = [_lookup(arm, name) for arm in arms]
    target.values[name] = values[0] if len(values) == 1 else _Value(
        (), tuple(values))
  return True


class Walk:
  """The reaching assignments of every read of one scope, walked once.

  Args:
    body: The scope's statements.
    defs: Its assignments, by name (`_scopes.Def`).
    uses: Its reads: id -> (position, where, id(statement), name).
  """

  def __init__(self, body: Sequence[ast.AST],
               defs: Mapping[str, Sequence[Assignment]], uses: Uses) -> None:
    self._defs = defs
    # id(statement) -> its assignments (name, index), in order.
    self._made: Dict[int, List[Tuple[str, int]]] = {}
    for name, each in defs.items():
      for index, made in enumerate(each):
        self._made.setdefault(made.statement, []).append((name, index))
    # id(statement) -> its reads (id, name) of names assigned here.
    self._reads: Dict[int, List[Tuple[int, str]]] = {}
    for read, (_, _, statement, name) in uses.items():
      if name in defs:
        self._reads.setdefault(statement, []).append((read, name))
    self._before: Dict[int, _Value] = {}  # id(read) -> before its statement.
    self._back: Dict[int, Dict[str, _Value]] = {}  # marker -> at its head.
    self._loops: List[_Loop] = []
    self._applied: List[Tuple[str, int]] = []  # Every assignment walked.
    self._markers = itertools.count(-1, -1)
    self._flat: Dict[Tuple[int, str], Set[int]] = {}
    try:
      self.block(body, _Frame(None))
    except RecursionError:  # Nested past the stack: no read is answered.
      self._before.clear()

  def reaching(self, name: str, read: int, position: Position,
               statement: int) -> Optional[Tuple[int, ...]]:
    """The indexes of the assignments of `name` the read `read` sees, or
    None if the walk did not meet it. A read sees those of its own
    statement made before it (a comprehension's name in its element, a
    walrus), never its statement's own of the turn before."""
    value = self._before.get(read)
    if value is None:
      return None
    defs = self._defs[name]
    found = {i for i in self._flat_value(value, name)
             if defs[i].statement != statement}
    for each, index in self._made.get(statement, ()):
      made = defs[index] if each == name else None
      if made is not None and made.end <= position and not _inside(
          position, made.value):
        found = {index} if made.replaces else found | {index}
    return tuple(sorted(found))

  def _flat_value(self, value: _Value, name: str) -> Set[int]:
    """The assignments a value holds, loop heads resolved."""
    key = (id(value), name)
    found = self._flat.get(key)
    if found is not None:
      return found
    found, seen, marks = set(), set(), set()
    stack = [value]
    while stack:
      each = stack.pop()
      if id(each) in seen:
        continue
      seen.add(id(each))
      for item in each.items:
        if item >= 0:
          found.add(item)
        elif item not in marks:
          marks.add(item)
          back = self._back.get(item, {}).get(name)
          if back is not None:
            stack.append(back)
      stack.extend(each.parts)
    self._flat[key] = found
    return found

  def block(self, body: Sequence[ast.AST], frame: _Frame) -> bool:
    """Walks statements in `frame`; whether their end is reached (code
    after a `return` is walked for its reads, and changes nothing)."""
    for index, statement in enumerate(body):
      walker = _WALKERS.get(type(statement), Walk._simple)
      if not walker(self, statement, frame):
        if index + 1 < len(body):
          self.block(body[index + 1:], _Frame(frame))
        return False
    return True

  def _simple(self, node: ast.AST, frame: _Frame) -> bool:
    """A statement's reads (before it runs), then its assignments."""
    self._read(node, frame)
    self._assign(node, frame)
    return True

  def _read(self, node: ast.AST, frame: _Frame) -> None:
    for read, name in self._reads.get(id(node), ()):
      self._before[read] = _lookup(frame, name)

  def _assign(self, node: ast.AST, frame: _Frame) -> None:
    for name, index in self._made.get(id(node), ()):
      made = self._defs[name][index]
      if made.inner:  # A comprehension's name, for itself alone.
        continue
      self._applied.append((name, index))
      frame.values[name] = _Value((index,)) if made.replaces else _Value(
          (index,), (_lookup(frame, name),))

  def _ends(self, node: ast.AST, frame: _Frame) -> bool:
    self._simple(node, frame)
    return False

  def _leaves(self, node: ast.AST, frame: _Frame) -> bool:
    """`break` or `continue`: the state goes to the loop's exit or head."""
    if self._loops:
      loop = self._loops[-1]
      state = {n: _lookup(frame, n) for n in _set_since(
          frame, loop.frame.parent)}
      (loop.breaks if isinstance(node, ast.Break) else loop.turns).append(
          state)
    return False

  def _if(self, node: ast.AST, frame: _Frame) -> bool:
    """One arm of an `if` and its `elif`s (a chain of any length walked
    as one list of arms) runs, each from the state before it."""
    arms = []
    while True:
      self._simple(node, frame)  # The test.
      arm = _Frame(frame)
      if self.block(getattr(node, "body"), arm):
        arms.append(arm)
      orelse = getattr(node, "orelse")
      if len(orelse) != 1 or not isinstance(orelse[0], ast.If):
        break
      node = orelse[0]
    arm = _Frame(frame)
    if self.block(orelse, arm):
      arms.append(arm)
    return _join(frame, arms)

  def _with(self, node: ast.AST, frame: _Frame) -> bool:
    self._simple(node, frame)  # Its items, and the names they bind.
    return self.block(getattr(node, "body"), frame)

  def _class(self, node: ast.AST, frame: _Frame) -> bool:
    """A class body runs where it stands (its methods apart)."""
    self._simple(node, frame)
    return self.block([s for s in getattr(node, "body") if not isinstance(
        s, (ast.FunctionDef, ast.AsyncFunctionDef))], frame)

  def _match(self, node: ast.AST, frame: _Frame) -> bool:
    self._simple(node, frame)  # The subject.
    arms, cases = [], getattr(node, "cases")
    for case in cases:
      arm = _Frame(frame)
      self._simple(case, arm)  # Its guard.
      if self.block(case.body, arm):
        arms.append(arm)
    last = cases[-1] if cases else None
    if last is None or last.guard is not None or not isinstance(
        last.pattern, ast.MatchAs) or last.pattern.pattern is not None:
      arms.append(_Frame(frame))  # No case matched.
    return _join(frame, arms)

  def _loop(self, node: ast.AST, frame: _Frame) -> bool:
    """`for` (its iterable read once, its target set at each turn's
    head) or `while` (its test read at each turn's head)."""
    looped = isinstance(node, ast.While)
    if not looped:
      self._read(node, frame)
    loop = _Loop(next(self._markers), _Frame(frame))
    loop.frame.loop = loop.marker
    self._loops.append(loop)
    if looped:
      self._read(node, loop.frame)
    self._assign(node, loop.frame)
    if self.block(getattr(node, "body"), loop.frame):
      loop.turns.append(dict(loop.frame.values))
    self._loops.pop()
    back = self._back[loop.marker] = _turns(loop.turns)
    head = _Frame(frame)
    head.values = {n: _Value((loop.marker,), (_lookup(frame, n),))
                   for n in back}
    exits = []
    if not (looped and _endless(getattr(node, "test"))):
      rest = _Frame(head)
      if self.block(getattr(node, "orelse"), rest):
        exits.append(rest)
    for state in loop.breaks:
      out = _Frame(head)
      out.values = state
      exits.append(out)
    return _join(frame, exits)

  def _try(self, node: ast.AST, frame: _Frame) -> bool:
    start = len(self._applied)
    body = _Frame(frame)
    goes_on = self.block(getattr(node, "body"), body)
    raised = self._applied[start:]  # A handler may start after any.
    arms = []
    for handler in getattr(node, "handlers"):
      caught = _Frame(frame)
      caught.values = _any_of(frame, raised)
      self._simple(handler, caught)
      if self.block(handler.body, caught):
        arms.append(caught)
    if goes_on and self.block(getattr(node, "orelse"), body):
      arms.append(body)
    final = getattr(node, "finalbody")
    if not final:
      return _join(frame, arms)
    # Walked twice: for what goes on after it, from the paths that go
    # on; then for its own reads, from every path (an exception anywhere).
    every = _Frame(frame)
    every.values = _any_of(frame, self._applied[start:])
    after = _Frame(frame)
    goes_on = _join(frame, arms, after) and self.block(final, after)
    self.block(final, every)
    frame.values.update(after.values)
    return goes_on


def _any_of(frame: _Frame, made: Sequence[Tuple[str, int]]
            ) -> Dict[str, _Value]:
  """The state where any of `made` (name, index) may have run, from the
  end of `frame`."""
  indexes: Dict[str, List[int]] = {}
  for name, index in made:
    indexes.setdefault(name, []).append(index)
  return {n: _Value(tuple(i), (_lookup(frame, n),))
          for n, i in indexes.items()}


def _turns(states: Sequence[Dict[str, _Value]]) -> Dict[str, _Value]:
  """What the turns of a loop take back to its head, by name (a path
  that leaves a name as it was adds nothing: the head itself)."""
  back: Dict[str, List[_Value]] = {}
  for state in states:
    for name, value in state.items():
      back.setdefault(name, []).append(value)
  return {n: v[0] if len(v) == 1 else _Value((), tuple(v))
          for n, v in back.items()}


def _endless(test: ast.expr) -> bool:
  """`while True:`, `while 1:`: left only by `break`."""
  return isinstance(test, ast.Constant) and bool(test.value)


def _inside(position: Position, value: ast.AST) -> bool:
  """Whether `position` lies in `value`'s text (an assignment is not
  seen by a read inside its own value: `for x in x`)."""
  start = (getattr(value, "lineno", 0), getattr(value, "col_offset", 0))
  end = (getattr(value, "end_lineno", 0) or 0,
         getattr(value, "end_col_offset", 0) or 0)
  return start <= position < end


@dataclasses.dataclass(frozen=True)
class _Made:
  """An assignment for the doctest: one that replaces, by its statement."""

  statement: int
  replaces: bool = True
  inner: bool = False
  end: Position = (0, 0)
  value: ast.expr = dataclasses.field(
      default_factory=lambda: ast.Constant(None))


_WALKERS: Dict[type, Callable[[Walk, Any, _Frame], bool]] = {
    ast.If: Walk._if,
    ast.For: Walk._loop, ast.AsyncFor: Walk._loop, ast.While: Walk._loop,
    ast.Try: Walk._try,
    ast.With: Walk._with, ast.AsyncWith: Walk._with,
    ast.Match: Walk._match,
    ast.ClassDef: Walk._class,
    ast.Return: Walk._ends, ast.Raise: Walk._ends,
    ast.Break: Walk._leaves, ast.Continue: Walk._leaves,
}
if hasattr(ast, "TryStar"):
  _WALKERS[getattr(ast, "TryStar")] = Walk._try
