"""`weight-remask` fed through a session: the weights read out after a
step, kept only on a support (a mask) that another method saved once (a
hard-thresholding round, a pruning phase), and fed back into the variables
(`sess.run(assign_group, feed_dict={w_ph: copy_support(self.thrsd_w,
w.eval())})`). The support stays fixed between its rounds, so the elements
outside it never train; a mask made from the values it masks, in the same
method, prunes by magnitude and keeps nothing fixed."""

from __future__ import annotations

import ast
from typing import List, Optional, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._copies import _in_training
from tfpartial._tools.scan.idioms._copies import _writes

# The calls that read a variable's values out of the graph.
_READS = ("eval", "run", "get_value", "numpy", "get_weights")


def hits(analysis: Analysis) -> List[_writes.WriteHit]:
  """Each fed write whose value keeps the weights' own values on a support
  saved by another method of the class, in a method that runs with each
  step."""
  found: List[_writes.WriteHit] = []
  for scope, call in analysis.calls_named(("run",)):
    if scope.cls is None or not call.args or (
        analysis.module(scope).is_test):
      continue
    for value in _fed_values(_writes.feed_of(call), scope):
      kept = _kept_on_saved(value, scope)
      if kept is None:
        continue
      if "write" in analysis.flow.ops(call.args[0], scope) and (
          _in_training.repeats_with_training(scope, analysis, call)):
        found.append(_writes.WriteHit(kept, scope, call, {}, "weight-remask",
                                      call.args[0], value))
      break
  return found


def _fed_values(feed: Optional[ast.expr], scope: _scopes.Scope
                ) -> List[ast.expr]:
  """The values of a `feed_dict`: a dict spelled there, or a name given a
  dict and filled item by item (`fd[ph] = v`) in the function."""
  if isinstance(feed, ast.Dict):
    return [v for v in feed.values if v is not None]
  if not isinstance(feed, ast.Name):
    return []
  values: List[ast.expr] = []
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == feed.id for t in node.targets):
      values += [v for v in node.value.values if v is not None] if (
          isinstance(node.value, ast.Dict)) else []
    elif isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
        and t.value.id == feed.id for t in node.targets):
      values.append(node.value)
  return values


def _kept_on_saved(value: ast.expr, scope: _scopes.Scope
                   ) -> Optional[ast.expr]:
  """The call or product in `value` (or in what it reads here) that
  combines the weights read out of the graph with an attribute another
  method of the class saved from them, if any."""
  cls = scope.cls
  assert cls is not None
  saved: Optional[Set[str]] = None  # Read only for a product found.
  for part in _expanded(value, scope):
    pair = _operands(part)
    if len(pair) != 2 or not any(_attribute(p) for p in pair) or not any(
        _read_out(p, scope) for p in pair):
      continue
    saved = _saved_elsewhere(cls, scope) if saved is None else saved
    if any(_attribute(p) in saved for p in pair):
      return part
  return None


def _expanded(value: ast.expr, scope: _scopes.Scope) -> List[ast.expr]:
  """`value` and what the names and lists it reads hold (`new_w` given in
  this function; `self.new[i]` appended to here), two steps deep."""
  out: List[ast.expr] = []
  stack = [(value, 0)]
  while stack:
    item, depth = stack.pop()
    out.append(item)
    if depth >= 2:
      continue
    if isinstance(item, ast.Name):
      stack += [(d.value, depth + 1) for d in scope.defs.get(item.id, [])
                if d.value is not None]
    elif isinstance(item, ast.Subscript) and _attribute(item):
      stack += [(a, depth + 1) for a in _appended(
          scope.nodes, _attribute(item))]
  return out


def _operands(node: ast.expr) -> List[ast.expr]:
  """The two operands of `a * b` or of a two-argument call."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
    return [node.left, node.right]
  if isinstance(node, ast.Call) and len(node.args) == 2 and (
      _names.call_name(node) not in _BLENDS):
    return list(node.args)
  return []


# Calls of two arrays that blend them (a running average, a best-of).
_BLENDS = {"add", "subtract", "maximum", "minimum", "average", "mean",
           "concatenate", "stack", "append", "assign", "load"}


def _attribute(node: ast.expr) -> str:
  """`self.x` of `self.x` or `self.x[i]`, else ""."""
  if isinstance(node, ast.Subscript):
    node = node.value
  name = _names.dotted(node) or ""
  return name if name.startswith("self.") and name.count(".") == 1 else ""


def _appended(nodes: List[ast.AST], attribute: str) -> List[ast.expr]:
  """What `nodes` append to the list `attribute`."""
  return [n.args[0] for n in nodes if isinstance(n, ast.Call) and isinstance(
      n.func, ast.Attribute) and n.func.attr == "append" and len(
          n.args) == 1 and _names.dotted(n.func.value) == attribute]


def _read_out(node: ast.expr, scope: _scopes.Scope) -> bool:
  """Whether `node` (or a local name it is) reads a variable's values out
  of the graph (`w.eval()`, `sess.run(w)`)."""
  values = [node]
  if isinstance(node, ast.Name):
    values += [d.value for d in scope.defs.get(node.id, [])
               if d.value is not None]
  return any(isinstance(n, ast.Call) and _names.call_name(n) in _READS
             for v in values for n in ast.walk(v))


def _saved_elsewhere(cls: _scopes.ClassInfo, scope: _scopes.Scope
                     ) -> Set[str]:
  """The `self.` attributes that another method of the class sets (or
  fills) from values it reads out of the graph, and `scope` does not."""
  saved: Set[str] = set()
  for name, places in cls.attributes.items():
    if any(where is scope for _, where in places):
      continue  # Made here again each time: from the values it masks.
    if any(_read_out_in(value, where) for value, where in places):
      saved.add(name)
  for method in cls.methods.values():
    if method is scope:
      continue
    for name in {_names.dotted(n.func.value) or "" for n in method.nodes
                 if isinstance(n, ast.Call) and isinstance(
                     n.func, ast.Attribute) and n.func.attr == "append"}:
      if name.startswith("self.") and not any(
          where is scope for _, where in cls.attributes.get(name, [])) and (
              not _appended(scope.nodes, name)) and any(
              _read_out_in(v, method) for v in _appended(method.nodes, name)):
        saved.add(name)
  return saved


def _read_out_in(value: ast.expr, where: _scopes.Scope) -> bool:
  """Whether `value` reads weights read out of the graph in `where` (by
  itself or through the local names its call reads)."""
  if _read_out(value, where):
    return True
  return any(_read_out(n, where) for n in ast.walk(value)
             if isinstance(n, ast.Name))
