"""A step's list written out from one dict in the two arms of an `if`,
one arm's entries some of the other's (PyMDNet's `optimize(branch=None)`:
`[self.weights['fc4'], self.weights['fc5']]` for the online tracker,
`conv1`..`fc5` for pretraining): the short arm trains a part. Counted
only where each entry it leaves out is built outside any `if` (its key
written in a statement no test guards: `self.conv('conv1', ...)`), so
that the case taking the short arm has those layers too (a bias made
only `if use_bias:` is not left out, it is not there), and where no
other statement of the function reads them (a list of the short case
that trains them at a rate of its own)."""

from __future__ import annotations

import ast
from typing import FrozenSet, Iterator, List, Optional, Set, Tuple

from tfpartial._tools.scan import _scopes

# What keeps a statement's key from being built on every path.
_GUARDS = (ast.If, ast.IfExp, ast.Try, ast.For, ast.AsyncFor, ast.While,
           ast.With, ast.AsyncWith)


def short_arm(chosen: ast.AST, scope: _scopes.Scope) -> Optional[ast.expr]:
  """The short arm's list of a name the step's list reads (`chosen`, or
  a name of the `+` that joins them), when its entries are some of the
  other arm's, each left out built unguarded and read nowhere else in
  the function (`leaves_out`); else None."""
  names = _joined_names(chosen)
  if not names:
    return None
  for node in _scopes.walk(scope.node):
    if not isinstance(node, ast.If) or not node.orelse:
      continue
    for name in names:
      found = _fewer(node, name)
      if found is not None and _built_unguarded(found[1], node, scope) and (
          leaves_out(found[0], scope)):
        return found[0]
  return None


def _joined_names(node: ast.AST) -> List[str]:
  if isinstance(node, ast.Name):
    return [node.id]
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
    return _joined_names(node.left) + _joined_names(node.right)
  return []


def _fewer(test: ast.If, name: str
           ) -> Optional[Tuple[ast.expr, FrozenSet[str], str]]:
  """(the short list, the keys it leaves out, the dict as text) of
  `name` assigned a list of one dict's entries in each arm of `test`."""
  body, orelse = _entries(test.body, name), _entries(test.orelse, name)
  if body is None or orelse is None or body[2] != orelse[2]:
    return None
  for (short, mine, owner), (_, theirs, _) in ((body, orelse),
                                                (orelse, body)):
    if mine < theirs:
      return short, theirs - mine, owner
  return None


def _entries(body: List[ast.stmt], name: str
             ) -> Optional[Tuple[ast.expr, FrozenSet[str], str]]:
  """(the list, its keys, its dict as text) of the one statement of
  `body` assigning `name` a list of `d['key']` entries of one dict."""
  found = [s for s in body if isinstance(s, ast.Assign) and len(
      s.targets) == 1 and isinstance(s.targets[0], ast.Name) and (
          s.targets[0].id == name)]
  if len(found) != 1 or not isinstance(found[0].value, ast.List):
    return None
  keys: Set[str] = set()
  owners: Set[str] = set()
  for element in found[0].value.elts:
    if not isinstance(element, ast.Subscript) or not isinstance(
        element.slice, ast.Constant) or not isinstance(
            element.slice.value, str):
      return None
    keys.add(element.slice.value)
    owners.add(ast.dump(element.value))
  if len(owners) != 1 or not keys:
    return None
  return found[0].value, frozenset(keys), owners.pop()


def _built_unguarded(keys: FrozenSet[str], test: ast.If,
                     scope: _scopes.Scope) -> bool:
  """Whether each of `keys` is written, outside `test`, in a statement
  of a function of the class (or module) that no `if`, loop, `try` or
  `with` guards."""
  home = _scopes.enclosing_class(scope)
  root: ast.AST
  if home is not None:
    root = home.node
  else:
    outer = scope
    while outer.parent is not None:
      outer = outer.parent
    root = outer.node
  seen = {text for text in _unguarded_texts(root, test)}
  return keys <= seen


def _unguarded_texts(root: ast.AST, skipped: ast.AST) -> Iterator[str]:
  """The string constants of the statements of the functions under
  `root` that no guard encloses (within their function)."""
  for function in ast.walk(root):
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
      for statement in function.body:
        if statement is skipped or isinstance(statement, _GUARDS) or (
            isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                   ast.ClassDef))):
          continue
        for node in ast.walk(statement):
          if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def leaves_out(chosen: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether `chosen` is a short arm's list (`short_arm`) whose left-out
  entries no other statement of the function reads (only the long arm
  names them): the function's steps, whatever groups they train at
  their own rates, leave them out when the short arm is taken."""
  for node in _scopes.walk(scope.node):
    if not isinstance(node, ast.If) or not node.orelse:
      continue
    for arm, other in ((node.body, node.orelse), (node.orelse, node.body)):
      for statement in arm:
        if isinstance(statement, ast.Assign) and (
            statement.value is chosen) and len(statement.targets) == 1 and (
                isinstance(statement.targets[0], ast.Name)):
          found = _fewer(node, statement.targets[0].id)
          if found is None or found[0] is not chosen:
            return False
          return not _read_elsewhere(scope.node, other, found[1],
                                     found[2])
  return False


def _read_elsewhere(function: ast.AST, long_arm: List[ast.stmt],
                    keys: FrozenSet[str], owner: str) -> bool:
  """Whether an entry `owner[key]` of `keys` is read in `function`
  outside the statements of `long_arm`."""
  skipped = {id(n) for s in long_arm for n in ast.walk(s)}
  return any(isinstance(node, ast.Subscript) and id(node) not in skipped
             and isinstance(node.slice, ast.Constant)
             and node.slice.value in keys and ast.dump(node.value) == owner
             for node in ast.walk(function))
