"""Whether a name filter leaves out only a copy network whose outputs the
model stops at once: `train_weights = [e for e in m.trainable_weights if
'frozen' not in e.name]`, where `m`'s class makes `self.hubert_frozen =
hubert(..., name='hubert_frozen')` and its every call of that part is
followed by `fs = [tf.stop_gradient(f) for f in fs]` (or `fs =
tf.stop_gradient(fs)`): a teacher whose features only feed the loss. No
gradient reaches what the filter drops, so it keeps nothing from
training. A part named with the word whose output is read unstopped, or
any other maker in the class given a name with the word, keeps the
filter found. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan import _typed

# An object's own variables, as a filter's comprehension reads them.
_OWN = {"trainable_variables", "trainable_weights", "variables", "weights"}


def only_stopped(typed: _typed.Typed, filtered: Optional[ast.AST],
                 home: _scopes.Scope) -> bool:
  """Whether `filtered` (in `home`) drops by a literal word only the
  parts of its object's class named with it, each stopped at every call."""
  found = _dropped_word(filtered)
  if found is None:
    return False
  word, owner = found
  info = typed.class_of(owner, home)
  if info is None:
    return False
  parts = _named_parts(info, word)
  return parts is not None and bool(parts) and all(
      _stopped_calls(info, part) for part in parts)


def _dropped_word(filtered: Optional[ast.AST]
                  ) -> Optional[Tuple[str, ast.expr]]:
  """(word, object) of `[e for e in obj.trainable_weights if 'word' not
  in e.name]`."""
  if not isinstance(filtered, (ast.ListComp, ast.GeneratorExp)) or len(
      filtered.generators) != 1:
    return None
  loop = filtered.generators[0]
  if not isinstance(loop.iter, ast.Attribute) or loop.iter.attr not in (
      _OWN) or len(loop.ifs) != 1 or not isinstance(loop.target, ast.Name):
    return None
  test = loop.ifs[0]
  if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not (
      isinstance(test.ops[0], ast.NotIn)) or not isinstance(
          test.left, ast.Constant) or not isinstance(test.left.value, str):
    return None
  name = test.comparators[0]
  if not (isinstance(name, ast.Attribute) and name.attr == "name" and (
      isinstance(name.value, ast.Name)) and (
          name.value.id == loop.target.id)) or not test.left.value:
    return None
  return test.left.value, loop.iter.value


def _named_parts(info: _scopes.ClassInfo, word: str) -> Optional[Set[str]]:
  """The attributes `self.part = Maker(..., name='...word...')` of the
  class, or None where a maker given such a name is not so kept."""
  parts: Set[str] = set()
  for method in info.methods.values():
    for node in _scopes.walk(method.node):
      if not isinstance(node, ast.Call) or not any(
          k.arg == "name" and isinstance(k.value, ast.Constant) and (
              isinstance(k.value.value, str)) and word in k.value.value
          for k in node.keywords):
        continue
      kept = _kept_as(method.node, node)
      if kept is None:
        return None
      parts.add(kept)
  return parts


def _kept_as(function: ast.AST, call: ast.Call) -> Optional[str]:
  """`part` of `self.part = call`, if the call is so kept."""
  for node in _scopes.walk(function):
    if isinstance(node, ast.Assign) and node.value is call and len(
        node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) and (
            _names.dotted(node.targets[0].value) == "self"):
      return node.targets[0].attr
  return None


def _stopped_calls(info: _scopes.ClassInfo, part: str) -> bool:
  """Whether every read of `self.part` in the class, but its making, is a
  call whose results the next statement stops, one call at least."""
  calls = 0
  for method in info.methods.values():
    for body in _bodies(method.node):
      for index, statement in enumerate(body):
        reads = [n for n in _header(statement) if isinstance(
            n, ast.Attribute) and n.attr == part and _names.dotted(
                n.value) == "self" and isinstance(n.ctx, ast.Load)]
        if not reads:
          continue
        if len(reads) > 1 or not _stopped_next(
            statement, reads[0], body[index + 1:index + 2]):
          return False
        calls += 1
  return calls > 0


def _header(statement: ast.stmt) -> List[ast.AST]:
  """The nodes of a statement outside its blocks (an `if`'s test, not
  its body: each block is read as its own list of statements)."""
  blocks = ("body", "orelse", "finalbody", "handlers")
  found: List[ast.AST] = []
  for field, value in ast.iter_fields(statement):
    if field in blocks and not isinstance(statement, ast.Lambda):
      continue
    for item in value if isinstance(value, list) else [value]:
      if isinstance(item, ast.AST):
        found += list(ast.walk(item))
  return found


def _bodies(function: ast.AST) -> List[List[ast.stmt]]:
  """The statement lists of a function, nested blocks too."""
  found: List[List[ast.stmt]] = []
  for node in ast.walk(function):
    for field in ("body", "orelse", "finalbody"):
      block = getattr(node, field, None)
      if isinstance(block, list) and block and isinstance(
          block[0], ast.stmt):
        found.append(block)
  return found


def _stopped_next(statement: ast.stmt, read: ast.Attribute,
                  after: List[ast.stmt]) -> bool:
  """`a, _ = self.part(x)` then `a = tf.stop_gradient(a)` (or `a =
  [tf.stop_gradient(f) for f in a]`): every name bound stopped at once."""
  if not isinstance(statement, ast.Assign) or not isinstance(
      statement.value, ast.Call) or statement.value.func is not read or (
          len(statement.targets) != 1):
    return False
  target = statement.targets[0]
  names = [target] if isinstance(target, ast.Name) else list(
      getattr(target, "elts", []))
  if not names or not all(isinstance(n, ast.Name) for n in names):
    return False
  live = [n.id for n in names if isinstance(n, ast.Name) and n.id != "_"]
  stopped = _stopped_names(after[0]) if after else set()
  return bool(live) and set(live) <= stopped


def _stopped_names(statement: ast.stmt) -> Set[str]:
  """The names `n = tf.stop_gradient(n)` or `n = [tf.stop_gradient(f)
  for f in n]` rebinds stopped."""
  if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 or (
      not isinstance(statement.targets[0], ast.Name)):
    return set()
  name, value = statement.targets[0].id, statement.value
  if _stops(value, name):
    return {name}
  if isinstance(value, ast.ListComp) and len(value.generators) == 1:
    loop = value.generators[0]
    if isinstance(loop.iter, ast.Name) and loop.iter.id == name and (
        isinstance(loop.target, ast.Name)) and not loop.ifs and _stops(
            value.elt, loop.target.id):
      return {name}
  return set()


def _stops(value: ast.expr, name: str) -> bool:
  """`tf.stop_gradient(name)`."""
  return isinstance(value, ast.Call) and _names.call_name(value) == (
      "stop_gradient") and len(value.args) == 1 and isinstance(
          value.args[0], ast.Name) and value.args[0].id == name
