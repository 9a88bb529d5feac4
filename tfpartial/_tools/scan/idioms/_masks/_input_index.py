"""One module's facts for `_masked_inputs`, read in one walk of its
scopes: what each name is assigned, where each name and each string key
is read, what each feed dict feeds, what each variable is written, and
its products. Each question about a product is then a look-up, not a new
walk of the module (a walk per product grew with the square of the
file)."""

from __future__ import annotations

import ast
import bisect
from typing import Callable, Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._masks import _masked_weights

Scope = _scopes.Scope
# (the assigned value, its scope, its statement).
Bound = Tuple[ast.expr, Scope, ast.stmt]
Read = Tuple[ast.expr, Scope]
ParentOf = Callable[[ast.AST], Optional[ast.AST]]
# A scope, what it assigns a name in line order, and their lines.
_Scoped = Tuple[Scope, List[Bound], List[int]]

STEPS = {"minimize", "compute_gradients", "gradient"}
WRITES = {"assign", "load", "set_value", "assign_add", "assign_sub"}
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.comprehension)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class Index:
  """What one module assigns, reads, feeds, writes and multiplies.

  >>> tree = ast.parse("m = load()\\nv = tf.Variable(0.)\\ny = v * m\\n")
  >>> index = Index(list(_scopes.collect(tree).all()))
  >>> [ast.unparse(p) for p, _, _ in index.products]
  ['v * m']
  >>> [n.lineno for n, _ in index.reads["v"]]
  [3]
  """

  def __init__(self, scopes: List[Scope]):
    self.assigned: Dict[str, List[Bound]] = {}
    self.reads: Dict[str, List[Read]] = {}
    self.key_reads: Dict[str, List[Read]] = {}
    self.keyed: Dict[str, List[Tuple[ast.expr, Scope]]] = {}
    # (the key, the value fed, the dict or store, its scope).
    self.feeds: List[Tuple[ast.expr, ast.expr, ast.AST, Scope]] = []
    # A variable's name -> (the value written, the call, its scope).
    self.writes: Dict[str, List[Tuple[ast.expr, ast.Call, Scope]]] = {}
    self.named: Dict[str, List[ast.Call]] = {}  # placeholder(name=...)
    self.products: List[Tuple[ast.expr, Scope, Tuple[ast.expr,
                                                     ast.expr]]] = []
    # (a list a step trains, its scope, its line).
    self.listed: List[Tuple[ast.expr, Scope, int]] = []
    self._scoped: Dict[str, Dict[int, _Scoped]] = {}
    self._reads_by_scope: Dict[str, Dict[int, List[Read]]] = {}
    self._scoped_reads: Dict[Tuple[str, int], Tuple[List[Read],
                                                    List[int]]] = {}
    for scope in scopes:
      for node in scope.nodes:
        self._note(node, scope)

  def _note(self, node: ast.AST, scope: Scope) -> None:
    if isinstance(node, ast.Assign):
      self._assignment(node, scope)
    elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(
        node.ctx, ast.Load):
      name = _names.dotted(node)
      if name is not None:
        self.reads.setdefault(name, []).append((node, scope))
    elif isinstance(node, ast.Subscript) and isinstance(
        node.ctx, ast.Load):
      spelled = _text_key(node.slice)
      if spelled is not None:
        self.key_reads.setdefault(spelled, []).append((node, scope))
    elif isinstance(node, ast.Dict):
      for key, value in zip(node.keys, node.values):
        if key is None:
          continue
        text = _text_key(key)
        if text is not None:
          self.keyed.setdefault(text, []).append((value, scope))
        elif not isinstance(key, ast.Constant):
          self.feeds.append((key, value, node, scope))
    if isinstance(node, ast.Call):
      self._call(node, scope)
    if isinstance(node, ast.expr) and _masked_weights.product(
        node) is not None:
      pair = _masked_weights.product(node)
      assert pair is not None
      self.products.append((node, scope, pair))

  def _assignment(self, node: ast.Assign, scope: Scope) -> None:
    for target in node.targets:
      if isinstance(target, ast.Subscript):
        key = _text_key(target.slice)
        if key is not None:
          self.keyed.setdefault(key, []).append((node.value, scope))
        elif not isinstance(target.slice, ast.Constant):
          self.feeds.append((target.slice, node.value, node, scope))
        continue
      name = _names.dotted(target)
      if name is not None and len(node.targets) == 1:
        self.assigned.setdefault(name, []).append((node.value, scope, node))

  def _call(self, node: ast.Call, scope: Scope) -> None:
    called = _names.call_name(node)
    if called in STEPS:
      given = next((k.value for k in node.keywords if k.arg == "var_list"),
                   None)
      if given is None and called != "minimize" and len(node.args) > 1:
        given = node.args[1]
      if given is not None:
        self.listed.append((given, scope, node.lineno))
    if called in {"placeholder", "placeholder_with_default"}:
      given = next((k.value for k in node.keywords if k.arg == "name"),
                   None)
      if isinstance(given, ast.Constant) and isinstance(given.value, str):
        self.named.setdefault(given.value, []).append(node)
    if called not in WRITES:
      return
    receiver = node.func.value if isinstance(node.func, ast.Attribute) \
        and _names.dotted(node.func.value) not in {
            "tf", "tf.compat.v1", "K", "backend", "keras.backend"} else (
                node.args[0] if node.args else None)
    value = node.args[-1] if node.args and (
        receiver is not node.args[-1]) else None
    name = _names.dotted(receiver) if receiver is not None else None
    if name is not None and value is not None:
      self.writes.setdefault(name, []).append((value, node, scope))

  def values(self, name: str, scope: Scope, before: int = 10 ** 9
             ) -> List[Bound]:
    """What `name` (a local name, or `self.x` in `scope`'s class) is
    assigned before the line `before`: in `scope` or, for a name it does
    not assign, in the scopes around it."""
    by_scope = self._by_scope(name)
    if not by_scope:
      return []
    if name.startswith("self."):
      found: List[Bound] = []
      for owner, bound, lines in by_scope.values():
        if owner.cls is scope.cls:
          found += bound if owner is not scope else bound[
              :bisect.bisect_left(lines, before)]
      return found
    place: Optional[Scope] = scope
    while place is not None:
      here = by_scope.get(id(place))
      if here is not None:
        _, bound, lines = here
        return bound[:bisect.bisect_left(lines, before)] if (
            place is scope) else bound
      if name in place.params:
        return []
      place = place.parent
    return []

  def _by_scope(self, name: str) -> Dict[int, _Scoped]:
    """`name`'s assignments by scope, in line order, with their lines
    (sorted once)."""
    known = self._scoped.get(name)
    if known is None:
      known = self._scoped[name] = {}
      for bound in self.assigned.get(name, []):
        known.setdefault(id(bound[1]), (bound[1], [], []))[1].append(bound)
      for _, bound_list, lines in known.values():
        bound_list.sort(key=lambda b: b[2].lineno)
        lines.extend(b[2].lineno for b in bound_list)
    return known

  def reads_in(self, name: str, scope: Scope) -> Tuple[List[Read],
                                                      List[int]]:
    """The reads of `name` in `scope` and their lines, in line order
    (sorted once)."""
    key = (name, id(scope))
    known = self._scoped_reads.get(key)
    if known is None:
      if name not in self._reads_by_scope:
        table: Dict[int, List[Read]] = {}
        for read in self.reads.get(name, []):
          table.setdefault(id(read[1]), []).append(read)
        for each in table.values():
          each.sort(key=lambda r: r[0].lineno)
        self._reads_by_scope[name] = table
      reads = self._reads_by_scope[name].get(id(scope), [])
      known = self._scoped_reads[key] = (reads, [r[0].lineno for r in reads])
    return known


def _text_key(node: ast.AST) -> Optional[str]:
  return node.value if isinstance(node, ast.Constant) and isinstance(
      node.value, str) else None


def loop_around(node: ast.AST, parent_of: ParentOf) -> Optional[ast.AST]:
  """The innermost loop around `node` in its function, else None."""
  current = parent_of(node)
  while current is not None and not isinstance(current, _FUNCTIONS):
    if isinstance(current, _LOOPS):
      return current
    current = parent_of(current)
  return None


def function_around(node: ast.AST, parent_of: ParentOf
                    ) -> Optional[ast.AST]:
  """The function `node` is in, else None (the module)."""
  current = parent_of(node)
  while current is not None and not isinstance(current, _FUNCTIONS):
    current = parent_of(current)
  return current
