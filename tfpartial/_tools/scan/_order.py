"""When a write runs relative to the train step: under its
`control_dependencies`, fetched beside it (no order: a race), or after it
in the same block; or none of these (an initialisation, not a freeze)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

if TYPE_CHECKING:
  from tfpartial._tools.scan._flow import Flow


class Order:
  """The statement structure of one module.

  >>> tree = ast.parse("with tf.control_dependencies([t]):\\n  w = f()\\n")
  >>> Order(tree).parent(tree.body[0].body[0]) is tree.body[0]
  True
  """

  def __init__(self, tree: ast.Module):
    self._parents: Dict[int, ast.AST] = {}
    for node in ast.walk(tree):
      for child in ast.iter_child_nodes(node):
        self._parents[id(child)] = node

  def parent(self, node: ast.AST) -> Optional[ast.AST]:
    """The node `node` is in."""
    return self._parents.get(id(node))

  def of_write(self, write: ast.Call, scope: _scopes.Scope,
               flow: "Flow") -> Optional[Dict[str, object]]:
    """How `write` is ordered after the train step, or None."""
    node: Optional[ast.AST] = write
    while node is not None:
      if isinstance(node, ast.With):
        for item in node.items:
          expr = item.context_expr
          if isinstance(expr, ast.Call) and _names.call_name(
              expr) == "control_dependencies" and expr.args and (
                  "train" in flow.labels(expr.args[0], scope)):
            return {"order": "control", "at": node}
      node = self.parent(node)
    for place in _chain(scope):
      for call in place.nodes:
        if isinstance(call, ast.Call) and _names.call_name(call) in {
            "run", "group", "tuple"} and call.args:
          found = flow.labels(call.args[0], place)
          if "train" in found and found.get("write") is write:
            return {"order": "fetch", "at": call}
    for run in self._runs_of(write, scope, flow):
      step = self._step_before(run, scope, flow)
      if step is not None:
        return {"order": "after", "at": step}
    return None

  def _runs_of(self, write: ast.Call, scope: _scopes.Scope,
               flow: "Flow") -> List[ast.AST]:
    """Where `write` runs: itself when eager, or a `run` that fetches it."""
    runs: List[ast.AST] = []
    if isinstance(self.parent(write), ast.Expr):
      runs.append(write)
    for place in _chain(scope):
      for call in place.nodes:
        if isinstance(call, ast.Call) and _names.call_name(call) == "run" \
            and call.args and flow.labels(call.args[0], place).get(
                "write") is write:
          runs.append(call)
    return runs

  def _step_before(self, run: ast.AST, scope: _scopes.Scope,
                   flow: "Flow") -> Optional[ast.AST]:
    """A train step run in the same block before `run`, if any."""
    node: Optional[ast.AST] = run
    while node is not None:
      block = self.parent(node)
      for field in ("body", "orelse"):
        siblings = getattr(block, field, None)
        if isinstance(siblings, list) and node in siblings:
          for earlier in siblings[:siblings.index(node)]:
            step = _runs_a_step(earlier, scope, flow)
            if step is not None:
              return step
      if isinstance(block, (ast.FunctionDef, ast.AsyncFunctionDef,
                            ast.Module)):
        return None
      node = block
    return None


def _runs_a_step(statement: ast.AST, scope: _scopes.Scope,
                 flow: "Flow") -> Optional[ast.AST]:
  for node in ast.walk(statement):
    if not isinstance(node, ast.Call):
      continue
    name = _names.call_name(node)
    if name in _names.TRAIN_STEPS and not isinstance(statement, ast.Assign):
      return node  # Eager: the step runs here.
    if name == "run" and node.args and "train" in flow.labels(node.args[0],
                                                              scope):
      return node
    if isinstance(node.func, ast.Name):
      helper = scope.function(node.func.id)
      if helper is not None and any(
          isinstance(n, ast.Call) and _names.call_name(n) in
          _names.TRAIN_STEPS for n in ast.walk(helper[0])):
        return node
  return None


def _chain(scope: _scopes.Scope) -> List[_scopes.Scope]:
  chain = []
  place: Optional[_scopes.Scope] = scope
  while place is not None:
    chain.append(place)
    place = place.parent
  return chain
