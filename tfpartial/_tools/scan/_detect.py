"""The six idioms, each anchored on what it does to a variable's update.

A detector reports only where its sink is reached: masked gradients that
an `apply_gradients` applies, a stop-gradient mix of a variable, a write
into a variable of its own copy (under `control_dependencies` of a train
op, fetched beside one, or run after one), a variable times a mask
written back into that variable, a `var_list` filtered by name or scope
that a train step uses.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Dict, List, Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._flow import Flow
from tfpartial._tools.scan._labels import Labels, union


@dataclasses.dataclass
class Hit:
  """One idiom at one node, before it is explained.

  Attributes:
    idiom: The idiom id.
    node: Where it is (the masking op, the mix, the write, the filter).
    scope: The function it is in.
    sink: The call that makes it matter (the apply, the write), if any.
    labels: The labels of what was masked, mixed or written.
    detail: What the explanation and the port need (`helper`, `order`,
      `fetch`, `value`, `target`).
  """

  idiom: str
  node: ast.AST
  scope: _scopes.Scope
  sink: Optional[ast.AST] = None
  labels: Labels = dataclasses.field(default_factory=dict)
  detail: Dict[str, object] = dataclasses.field(default_factory=dict)


def detect(module: _scopes.Scope, flow: Flow,
           order: _order.Order) -> List[Hit]:
  """Every hit in a module, in source order, one per node and idiom."""
  hits: List[Hit] = []
  for scope in module.all():
    calls = [n for n in scope.nodes if isinstance(n, ast.Call)]
    hits += _grads_mask(scope, calls, flow)
    hits += _stop_gradient_mix(scope, flow)
    hits += _writes(scope, calls, flow, order)
    hits += _constraints(scope, calls, flow)
    hits += _var_list_filters(scope, calls, flow)
  hits = _unsplit(hits, module, flow)
  seen = set()
  unique = []
  for hit in sorted(hits, key=lambda h: (h.node.lineno,  # type: ignore
                                         h.node.col_offset)):  # type: ignore
    key = (hit.idiom, id(hit.node))
    if key not in seen:
      seen.add(key)
      unique.append(hit)
  return unique


def _grads_mask(scope: _scopes.Scope, calls: List[ast.Call],
                flow: Flow) -> List[Hit]:
  hits = []
  for call in calls:
    if _names.call_name(call) not in {"apply_gradients", "apply"}:
      continue
    found = union(flow.labels(a, scope) for a in [
        *call.args, *(k.value for k in call.keywords)])
    if "masked" in found:
      hits.append(Hit("grads-mask", found["masked"], scope, call, found))
  return hits


def _stop_gradient_mix(scope: _scopes.Scope, flow: Flow) -> List[Hit]:
  hits = []
  own = {id(n) for n in scope.nodes}
  for node in scope.nodes:
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add,
                                                            ast.Sub)):
      found = flow.labels(node, scope)
      if found.get("mix") is node:
        hits.append(Hit("stop-gradient-mix", node, scope, None, found))
    elif isinstance(node, ast.Call):
      name = _names.call_name(node)
      found = flow.labels(node, scope) if (
          name in {"where", "where_v2"} or isinstance(node.func, ast.Name)
          and scope.function(name)) else {}
      mix = found.get("mix")
      if mix is node or (mix is not None and id(mix) not in own):
        hits.append(Hit("stop-gradient-mix", node, scope, None, found,
                        {"helper": name if mix is not node else ""}))
  return hits


def _target_and_value(
    call: ast.Call) -> Optional[Tuple[ast.AST, ast.AST, bool]]:
  """(target, value, partial) of a write, or None."""
  name = _names.call_name(call)
  receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
  args = call.args
  if name in {"scatter_update", "scatter_nd_update"}:
    if len(args) >= 3:
      return args[0], args[2], True
    if receiver is not None and args:
      return receiver, args[-1], True
  if name in {"assign", "set_value"} and len(args) == 2:
    return args[0], args[1], False
  if name in {"assign", "set_weights"} and len(args) == 1 and receiver:
    return receiver, args[0], isinstance(receiver, ast.Subscript)
  return None


def _writes(scope: _scopes.Scope, calls: List[ast.Call], flow: Flow,
            order: _order.Order) -> List[Hit]:
  hits = []
  for call in calls:
    parts = _target_and_value(call)
    if parts is None:
      continue
    target, value, partial = parts
    base = _names.root(target)
    aimed = flow.labels(target, scope)
    if not ("var" in aimed or "vararith" in aimed or _names.call_name(
        call) == "set_weights" or "param" in aimed):
      continue
    found = flow.labels(value, scope)
    detail: Dict[str, object] = {"target": target, "value": value}
    if f"varmask:{base}" in found:
      hits.append(Hit("weight-remask", call, scope, call, found, detail))
      continue
    copy = found.get(f"copy:{base}") or found.get(f"restore:{base}")
    own_copy = copy is not None or "shadow" in found
    if not (own_copy or partial and set(found) <= {"const", "mask", "param"}):
      continue  # Another variable's values: EMA, a target network.
    when = order.of_write(call, scope, flow)
    if when is None:
      continue  # Written once, before training: an initialisation.
    detail.update(when)
    kind = "shadow-variable" if _on_device(found, base) and (
        when["order"] == "control") else "write-back"
    hits.append(Hit(kind, call, scope, call, found, detail))
  return hits


def _on_device(found: Labels, base: str) -> bool:
  """Whether the copy is a TensorFlow variable or tensor (not NumPy)."""
  if "shadow" in found:
    return True
  copy = found.get(f"copy:{base}")
  return isinstance(copy, ast.Call) and _names.call_name(copy) in {
      "identity", "read_value", "initialized_value", "value", "Variable",
      "VariableV1", "get_variable"}


def _constraints(scope: _scopes.Scope, calls: List[ast.Call],
                 flow: Flow) -> List[Hit]:
  """Keras constraints that multiply the weight by a mask."""
  hits = []
  node = scope.node
  if isinstance(node, ast.FunctionDef) and node.name == "__call__" and (
      "Constraint" in scope.classname or "Mask" in scope.classname or any(
          b.endswith("Constraint") for b in scope.bases)):
    found = flow.helper(node, scope.parent or scope, [{}, {"var": node}])
    masked = [v for k, v in found.items() if k.startswith("varmask:")]
    if any(not _projection(m, node) for m in masked) or _fixed_factor(
        scope, node):
      hits.append(Hit("weight-remask", node, scope, None, found,
                      {"constraint": scope.classname}))
  for call in calls:
    for keyword in call.keywords:
      if (keyword.arg or "").endswith("constraint") and isinstance(
          keyword.value, ast.Lambda):
        found = flow.helper(keyword.value, scope, [{"var": keyword.value}])
        if any(k.startswith("varmask:") for k in found):
          hits.append(Hit("weight-remask", keyword.value, scope, call, found,
                          {"constraint": keyword.arg}))
  return hits


def _factors(item: ast.AST) -> List[ast.AST]:
  """The two factors of `a * b`, `multiply(a, b)`, `multiply([a, b])`."""
  if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mult):
    return [item.left, item.right]
  if isinstance(item, ast.Call) and _names.call_name(item) in {
      "multiply", "mul"}:
    if len(item.args) == 1 and isinstance(item.args[0], (ast.List,
                                                         ast.Tuple)):
      return list(item.args[0].elts)
    return list(item.args[:2])
  return []


def _projection(product: ast.AST, node: ast.FunctionDef) -> bool:
  """Whether both factors of a constraint's product read its weight
  (`w * cast(w >= 0)`): a projection computed from the weight each time,
  which freezes nothing."""
  if len(node.args.args) < 2:
    return False
  weight = node.args.args[1].arg
  pair = _factors(product)
  return len(pair) == 2 and all(_reads(f, weight) for f in pair)


def _fixed_factor(scope: _scopes.Scope, node: ast.FunctionDef) -> bool:
  """Whether a constraint multiplies its weight by a value fixed when it
  was made (`w * self.mask`, `multiply([w, K.variable(self.m)])`): a
  factor read from `self` that does not depend on the weight. A factor
  computed from the weight (`w * cast(w >= 0)`, a norm) is a projection,
  not a mask."""
  if len(node.args.args) < 2:
    return False
  weight = node.args.args[1].arg
  for item in scope.nodes:
    pair = _factors(item)
    if len(pair) != 2:
      continue
    for mine, other in ((pair[0], pair[1]), (pair[1], pair[0])):
      if isinstance(mine, ast.Name) and mine.id == weight and not _reads(
          other, weight) and any(
              (_names.dotted(n) or "").startswith("self.")
              for n in ast.walk(other) if isinstance(n, ast.Attribute)):
        return True
  return False


def _reads(node: ast.AST, name: str) -> bool:
  return any(isinstance(n, ast.Name) and n.id == name
             for n in ast.walk(node))


def _var_list_of(call: ast.Call) -> Optional[ast.AST]:
  name = _names.call_name(call)
  for keyword in call.keywords:
    if keyword.arg == "var_list":
      return keyword.value
  if name in {"gradients", "gradient", "compute_gradients"} and len(
      call.args) >= 2:
    return call.args[1]
  if name == "minimize" and len(call.args) >= 2:
    return call.args[-1]
  if name == "apply_gradients" and call.args:
    return call.args[0]
  return None


def _var_list_filters(scope: _scopes.Scope, calls: List[ast.Call],
                      flow: Flow) -> List[Hit]:
  hits = []
  for call in calls:
    if _names.call_name(call) not in {"minimize", "compute_gradients",
                                      "gradients", "gradient",
                                      "apply_gradients"}:
      continue
    chosen = _var_list_of(call)
    found = flow.labels(chosen, scope) if chosen is not None else {}
    if "filtered" in found:
      hits.append(Hit("var-list-filter", found["filtered"], scope, call,
                      found))
  return hits


def _unsplit(hits: List[Hit], module: _scopes.Scope,
             flow: Flow) -> List[Hit]:
  """Without the `var_list` filters of split training, which freeze
  nothing: a module with two or more filters (a GAN's generator and
  discriminator, an actor and a critic, a policy and a value function),
  or whose filtered variables are written (a target network's sync)."""
  filters = 0
  for scope in module.all():
    for node in scope.nodes:
      if isinstance(node, (ast.ListComp, ast.GeneratorExp)) and any(
          _names.mentions_a_name_test(test) for g in node.generators
          for test in g.ifs) or isinstance(node, ast.Call) and (
              _names.scope_argument(node) is not None) and (
                  _names.call_name(node) != "get_variables_to_restore"):
        filters += 1
      elif isinstance(node, ast.Call):
        parts = _target_and_value(node)
        if parts and "filtered" in flow.labels(parts[0], scope):
          filters += 2
  if filters < 2:
    return hits
  return [h for h in hits if h.idiom != "var-list-filter"]
