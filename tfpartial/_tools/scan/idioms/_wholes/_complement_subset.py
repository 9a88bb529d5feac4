"""A list filtered out of a group beside the rest of the model less that
whole group: `head = [v for v in model.trainable_variables if v not in
backbone.trainable_variables]` and `top = [v for v in all_backbone if
any(n in v.name for n in top_names)]`, `all_backbone =
list(backbone.trainable_variables)`. The head is the model but the
group, the filter keeps some of the group: together they leave the rest
of the group out (the lower layers of a hub backbone kept fixed), not a
model split between two optimizers.
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan.idioms._sources._train_step import Step

_COPIES = {"list", "tuple", "set", "frozenset", "sorted"}


def leaves_out(flow: Flow, steps: Iterable[Step]) -> bool:
  """Whether one step's filter keeps every variable but a group and
  another's keeps, by a test, some variables of that same group."""
  filters = [(node, flow.origin.get(id(node), step.scope))
             for step in steps for node in [step.labels.get("filtered")]
             if isinstance(node, ast.ListComp)]
  excluded: Set[str] = set()
  for node, home in filters:
    excluded |= _excluded(node, home)
  return bool(excluded) and any(
      _iterated(node, home) & excluded for node, home in filters
      if node.generators[0].ifs and not _excluded(node, home))


def _excluded(node: ast.ListComp, home: Optional[_scopes.Scope]
              ) -> Set[str]:
  """The groups a comprehension leaves out by `v not in group`."""
  found: Set[str] = set()
  target = node.generators[0].target
  for test in node.generators[0].ifs:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
        test.ops[0], ast.NotIn) and _same(test.left, target) and not (
            isinstance(test.comparators[0], ast.Constant)):
      found |= _spellings(test.comparators[0], home)
  return found


def _iterated(node: ast.ListComp, home: Optional[_scopes.Scope]
              ) -> Set[str]:
  """The group a comprehension walks over, as its spellings."""
  return _spellings(node.generators[0].iter, home)


def _spellings(node: ast.expr, home: Optional[_scopes.Scope]) -> Set[str]:
  """A group as text: as written and, for a local name made once, as the
  value it was made from (`list(x)` as `x`)."""
  node = _unwrapped(node)
  found = {ast.unparse(node)}
  if isinstance(node, ast.Name) and home is not None:
    made = home.defs.get(node.id, [])
    if len(made) == 1:
      value = getattr(made[0], "value", None)
      if isinstance(value, ast.expr):
        found.add(ast.unparse(_unwrapped(value)))
  return found


def _unwrapped(node: ast.expr) -> ast.expr:
  """`list(x)`: x."""
  while isinstance(node, ast.Call) and _names.call_name(
      node) in _COPIES and len(node.args) == 1:
    node = node.args[0]
  return node


def _same(one: ast.AST, other: ast.AST) -> bool:
  """Whether two expressions are written the same."""
  return ast.unparse(one) == ast.unparse(other)


def rest_trained(flow: Flow, node: ast.AST, step: Step,
                 steps: Iterable[Step]) -> bool:
  """Whether the filter `node` keeps the model less a group while another
  step of its function trains a list no filter chose
  (`self.opt_top.apply_gradients(zip(g, self.top))`, `self.top` every
  variable of the backbone, or a list handed in): together they may
  train everything."""
  if not isinstance(node, ast.ListComp) or not _excluded(
      node, flow.origin.get(id(node), step.scope)):
    return False
  return any("filtered" not in other.labels and other.var_list is not None
             and not _applies_pairs(other) for other in steps
             if other.scope is step.scope and other is not step)


def _applies_pairs(step: Step) -> bool:
  """Whether the step applies (gradient, variable) pairs made by another
  step (`opt.apply_gradients(gvs)`): that one chose the variables."""
  call = step.call
  return _names.call_name(call) == "apply_gradients" and bool(
      call.args) and step.var_list is call.args[0]
