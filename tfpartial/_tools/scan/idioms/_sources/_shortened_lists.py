"""Lists shortened in place (`names.remove(v)`, `v = names.pop()`, `del
names[:n]`) and what the other steps of a function train: an entry taken
out of a step's list that another step trains is no freeze."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._sources._train_step import (
    STEPS, var_list_of)

# Methods that shorten the list they are called on.
SHORTENING = {"remove", "pop", "discard", "difference_update"}


def trained_lists(scope: _scopes.Scope, chosen: str) -> Set[str]:
  """What the other steps of the function train, as text: each list,
  its entries, and the values a name of one holds."""
  texts: Set[str] = set()
  for node in scope.nodes:
    if not isinstance(node, ast.Call) or _names.call_name(node) not in STEPS:
      continue
    listed = var_list_of(node)
    if listed is None or ast.unparse(listed) == chosen:
      continue
    for value in [listed, *_scopes.values_reaching(listed, scope)]:
      texts.add(ast.unparse(value))
      texts.update(ast.unparse(e) for e in getattr(value, "elts", ()))
      if isinstance(value, ast.Subscript):
        texts.add(f"[{ast.unparse(value.slice)}]")
  return texts


# A shortened list's name at the shortening, and what it takes out (as
# text: the entry removed, the name a popped entry is kept in, `[slice]`
# for a `del`).
_Shortened = Dict[str, List[Tuple[ast.Name, Set[str]]]]


def shortenings(scope: _scopes.Scope) -> _Shortened:
  """Each scope's shortened lists, by name, read once per scope (kept by
  the scope, so they go with the scan)."""
  return scope.once(("shortened lists", None, 0),
                    lambda: _read_shortenings(scope))


def _read_shortenings(scope: _scopes.Scope) -> _Shortened:
  known: _Shortened = {}
  kept = {id(n.value): n.targets for n in scope.nodes
          if isinstance(n, ast.Assign)}
  for node in scope.nodes:
    target: Optional[ast.expr] = None
    removed: Set[str] = set()
    if isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr in SHORTENING:
      target = node.func.value
      removed = {ast.unparse(a) for a in node.args} | {
          ast.unparse(t) for t in kept.get(id(node), ())}
    elif isinstance(node, ast.Delete) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Subscript)):
      target = node.targets[0].value
      removed = {f"[{ast.unparse(node.targets[0].slice)}]"}
    if isinstance(target, ast.Name):
      known.setdefault(target.id, []).append((target, removed))
  return known
