"""Whether a step's part is a discriminator fed its 'real' side by a
third network: the loss runs the step's own network (a scope its filter
keeps) on what a network another step of the run trains makes (the
fake side) and on what a network no step of the run trains makes from
the data alone (features a pretrained extractor, or a generator trained
in another mode, gives from images or noise). That third network plays
the data's part for a GAN's halves (part sixteen's adversarial feature
augmentation): a second model, not a part left out of the model."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _opened_scopes
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow

# Searches bounded: values followed back from a loss.
_BOUND = 200


class _Reader:
  """The nearest value assigned to a name or `self.` attribute before a
  line, within one function."""

  def __init__(self, scope: _scopes.Scope):
    self.scope = scope
    node = scope.node
    self.span = (getattr(node, "lineno", 0), getattr(node, "end_lineno", 0))
    owned = scope.cls.attributes if scope.cls is not None else {}
    self.owned: Dict[str, List[ast.expr]] = {
        k: [v for v, _ in pairs] for k, pairs in owned.items()}

  def value(self, node: ast.AST, line: int) -> Optional[ast.expr]:
    name = _names.dotted(node)
    if name is None:
      return None
    values = [d.value for d in self.scope.defs.get(name, [])] + (
        self.owned.get(name, []))
    start, end = self.span
    before = [v for v in values if start <= getattr(v, "lineno", 0) < line
              and getattr(v, "lineno", 0) <= (end or 0)]
    return max(before, key=lambda v: v.lineno) if before else None


def _slice(reader: _Reader, root: ast.expr, line: int) -> List[ast.AST]:
  """The nodes `root` (read at `line`) is computed from."""
  found: List[ast.AST] = []
  todo = [(root, line)]
  seen: Set[int] = set()
  while todo and len(found) < _BOUND:
    node, at = todo.pop()
    for each in _scopes.walk(node):
      found.append(each)
      if isinstance(each, (ast.Name, ast.Attribute)) and isinstance(
          getattr(each, "ctx", None), ast.Load):
        value = reader.value(each, min(at, getattr(each, "lineno", at)))
        if value is not None and id(value) not in seen:
          seen.add(id(value))
          todo.append((value, value.lineno))
  return found


def _opened(flow: Flow, call: ast.Call, scope: _scopes.Scope) -> Set[str]:
  """The literal scopes the function `call` calls opens."""
  callee = flow.callee(call, scope)
  if callee is None:
    return set()
  return {name for name in map(_opened_scopes.literal, _scopes.walk(callee))
          if name is not None}


def kept(reader: _Reader, var_list: ast.expr, line: int) -> Set[str]:
  """The names a step's filter tests variables by (`'disc' in v.name`)."""
  return {n.value for n in _slice(reader, var_list, line) if isinstance(
      n, ast.Constant) and isinstance(n.value, str) and n.value}


def _keeps(words: Set[str], scopes: Set[str]) -> bool:
  return any(word in scope for word in words for scope in scopes)


def fed_real(flow: Flow, scope: _scopes.Scope, call: ast.Call,
             loss: ast.expr, var_list: ast.expr,
             partners: List[ast.expr]) -> bool:
  """Whether the step's loss runs its own network on a partner's
  network's output and on a third network's output made from the data
  alone (`partners`: the lists of the steps that may run with it)."""
  reader = _Reader(scope)
  mine = kept(reader, var_list, call.lineno)
  theirs = set().union(*(kept(reader, p, call.lineno) for p in partners)) \
      if partners else set()
  if not mine or not theirs:
    return False
  calls = [n for n in _slice(reader, loss, call.lineno)
           if isinstance(n, ast.Call) and n.args]
  by_func: Dict[str, List[ast.Call]] = {}
  for each in calls:
    by_func.setdefault(ast.unparse(each.func), []).append(each)
  for runs in by_func.values():
    if len(runs) < 2 or not _keeps(mine, _opened(flow, runs[0], scope)):
      continue
    made = [reader.value(r.args[0], r.lineno) for r in runs]
    producers = [m for m in made if isinstance(m, ast.Call)]
    sides = [_opened(flow, p, scope) for p in producers]
    if any(_keeps(theirs, s) for s in sides) and any(
        s and not _keeps(mine | theirs, s) and _from_data(
            flow, reader, p, scope) for p, s in zip(producers, sides)):
      return True
  return False


def _from_data(flow: Flow, reader: _Reader, producer: ast.Call,
               scope: _scopes.Scope) -> bool:
  """Whether a network's inputs are computed with no network of the
  project (placeholders, noise, images joined)."""
  given = [*producer.args, *(k.value for k in producer.keywords)]
  return not any(isinstance(n, ast.Call) and flow.callee(n, scope)
                 is not None for g in given
                 for n in _slice(reader, g, producer.lineno))
