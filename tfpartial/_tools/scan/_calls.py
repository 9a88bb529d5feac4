"""The labels of calls and arithmetic: where masks meet gradients and
variables (`_flow` dispatches here)."""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Set

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._labels import Labels, union

Flow = Any  # `_flow.Flow`, which imports this module.

# What arithmetic on a variable, a mask or a copy keeps of them.
_DROPPED_BY_ARITHMETIC = {"var", "shadow", "filtered", "write", "train"}


def binop(flow: Flow, node: ast.AST, left: ast.AST, right: ast.AST,
          scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  """`left OP right` (and `tf.multiply(left, right)`)."""
  first = flow.labels(left, scope, env)
  second = flow.labels(right, scope, env)
  op = getattr(node, "op", ast.Mult())
  result: Labels = {}
  for kind, where in (*first.items(), *second.items()):
    if kind not in _DROPPED_BY_ARITHMETIC | {"mask", "const"}:
      result.setdefault(kind, where)
  if "var" in first or "var" in second:
    result.setdefault("vararith", node)
  if isinstance(op, ast.Add) and ("filtered" in first or "filtered" in
                                  second):  # `chosen += get_variables(s)`.
    result["filtered"] = first.get("filtered") or second["filtered"]
  plain = {"mask", "const", "param"}
  if ("mask" in first or "mask" in second) and set(first) | set(
      second) <= plain:
    result["mask"] = node  # `1 - mask`, `mask[:, None] * 1.0`.
  if "const" in first and "const" in second:
    result["const"] = node
  if isinstance(op, ast.Mult):
    _multiplied(node, left, right, first, second, result)
  elif isinstance(op, (ast.Add, ast.Sub)) and _is_mix(
      flow, left, right, first, second, scope, env):
    result["mix"] = node
  return result


def _is_mix(flow: Flow, left: ast.AST, right: ast.AST, first: Labels,
            second: Labels, scope: _scopes.Scope,
            env: Dict[str, Labels]) -> bool:
  """`m * x + (1 - m) * sg(x)`, `sg(h * x) + m * x`: a mask on both sides,
  a stop_gradient on one, the same variable in both."""
  masks = {"mask", "timesmask", "sgmask"}
  if not (masks & set(first) and masks & set(second)):
    return False
  for mine, other, mine_node, other_node in (
      (first, second, left, right), (second, first, right, left)):
    if "sg" in mine and ("var" in other or "vararith" in other):
      stopped = variables_in(flow, mine_node, scope, env, stopped=True)
      if stopped & variables_in(flow, other_node, scope, env):
        return True
  return False


def variables_in(flow: Flow, node: ast.AST, scope: _scopes.Scope,
                 env: Dict[str, Labels], stopped: bool = False) -> Set[str]:
  """The variables (as text) read in `node`: inside `stop_gradient` calls
  only when `stopped`, outside them otherwise."""
  found: Set[str] = set()
  stack = [(node, False)]
  while stack:
    item, inside = stack.pop()
    if isinstance(item, ast.Call) and _names.call_name(item) == (
        "stop_gradient"):
      stack.extend((a, True) for a in item.args)
      continue
    if isinstance(item, (ast.Name, ast.Attribute)) and inside == stopped:
      labels = flow.labels(item, scope, env)
      if "var" in labels:
        found.add(_names.dotted(item) or "")
        continue
    if isinstance(item, ast.Call) and _names.call_name(item) not in (
        _names.SHAPES):
      continue  # What a call makes of a variable is not the variable.
    stack.extend((child, inside) for child in ast.iter_child_nodes(item))
  return found - {""}


def _multiplied(node: ast.AST, left: ast.AST, right: ast.AST,
                first: Labels, second: Labels, result: Labels) -> None:
  for mine, other, mine_node in ((first, second, left),
                                 (second, first, right)):
    if "mask" not in other:
      continue
    result["timesmask"] = node
    if "grad" in mine and "grad" not in other:
      result["masked"] = node
    copies = [k for k in mine if k.startswith("copy:")]
    if "var" in mine or "vararith" in mine or copies:
      base = copies[0][5:] if copies else _names.root(mine_node)
      result[f"varmask:{base}"] = node


def call(flow: Flow, node: ast.Call, scope: _scopes.Scope,
         env: Dict[str, Labels]) -> Labels:
  """The labels of one call, by what it calls."""
  name = _names.call_name(node)
  args: List[ast.AST] = list(node.args)
  if name in _names.GRADIENTS:
    return {"grad": node}
  if name in _names.VARIABLES:
    return _variable(flow, node, scope, env)
  if name in _names.VARIABLE_LISTS:
    found: Labels = {"var": node}
    if _names.scope_argument(node) is not None:
      found["filtered"] = node
    return found
  if name == "stop_gradient" and args:
    inner = flow.labels(args[0], scope, env)
    found = {k: v for k, v in inner.items() if k not in {"var", "vararith"}}
    if "var" in inner or "vararith" in inner or "param" in inner:
      found["sg"] = node
    if "mask" in inner:
      found["sgmask"] = node
    return found
  if name in {"where", "where_v2", "switch"} and len(args) == 3:
    return _where(flow, node, args, scope, env)
  if name in {"multiply", "mul"} and len(args) >= 2:
    return binop(flow, node, args[0], args[1], scope, env)
  if name in {"multiply", "Multiply"} and len(args) == 1 and isinstance(
      args[0], (ast.List, ast.Tuple)) and len(args[0].elts) == 2:
    first, second = args[0].elts  # Keras' `multiply([a, b])`.
    return binop(flow, node, first, second, scope, env)
  if name in _names.MASKS:
    return {"mask": node, "const": node}
  if name in _names.TRAIN_STEPS:
    return {"train": node}
  if name in _names.WRITES:
    return {"write": node}
  if name == "filter" and len(args) == 2:
    found = dict(flow.labels(args[1], scope, env))
    if "var" in found and _names.mentions_a_name_test(args[0]):
      found["filtered"] = node
    return found
  return _other(flow, node, name, args, scope, env)


def _variable(flow: Flow, node: ast.Call, scope: _scopes.Scope,
              env: Dict[str, Labels]) -> Labels:
  found: Labels = {"var": node}
  for keyword in node.keywords:
    if keyword.arg == "trainable" and isinstance(
        keyword.value, ast.Constant) and keyword.value.value is False:
      found["shadow"] = node
  initial = node.args[0] if node.args else next(
      (k.value for k in node.keywords
       if k.arg in {"initial_value", "initializer"}), None)
  if initial is not None:
    inner = flow.labels(initial, scope, env)
    copies = [k for k in inner if k.startswith("copy:")]
    if copies:
      found[copies[0]] = node
    elif "var" in inner or "vararith" in inner:
      found[f"copy:{_names.root(initial)}"] = node
  return found


def _where(flow: Flow, node: ast.Call, args: List[ast.AST],
           scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  condition, yes, no = (flow.labels(a, scope, env) for a in args)
  found = {k: v for k, v in {**no, **yes}.items() if k not in {"var"}}
  found.pop("mask", None)
  if not _names.checks_finite(args[0]):
    for branch, other in ((yes, args[2]), (no, args[1])):
      if "grad" in branch and _names.is_zero(other):
        found["masked"] = node
    for branch, other in ((yes, no), (no, yes)):
      if "sg" in branch and ("var" in other or "vararith" in other):
        found["mix"] = node
  if "var" in yes or "var" in no:
    found["vararith"] = node
  copies = [k for k in {**yes, **no} if k.startswith("copy:")]
  if copies and "mask" in condition:
    found[f"restore:{copies[0][5:]}"] = node
  return found


def _other(flow: Flow, node: ast.Call, name: str, args: List[ast.AST],
           scope: _scopes.Scope, env: Dict[str, Labels]) -> Labels:
  receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
  if name in _names.SNAPSHOTS | {"run", "get_value"}:
    by_argument = name in {"identity", "get_value", "run"}
    base = (args[0] if args else None) if by_argument else receiver
    inner = flow.labels(base, scope, env) if base is not None else {}
    if base is not None and (set(inner) & {"var", "vararith", "param"} or
                             name == "get_weights"):
      return {f"copy:{_names.root(base)}": node}
    if name == "run":
      return {}
  if isinstance(node.func, ast.Name):
    helper = scope.function(node.func.id)
    if helper is not None:
      arguments = [flow.labels(a, scope, env) for a in args]
      returned: Labels = flow.helper(helper[0], helper[1], arguments)
      return returned
  shape = name in _names.SHAPES
  if shape:  # What is reshaped or gathered, not the indices.
    parts = [flow.labels(a, scope, env) for a in args[:1]]
  else:
    parts = [flow.labels(a, scope, env) for a in args]
    parts += [flow.labels(k.value, scope, env) for k in node.keywords]
  if receiver is not None and (shape or name == "values"):
    parts.append(flow.labels(receiver, scope, env))
  found = union(parts)
  if name in _names.CONTAINERS or name in {"group", "tuple"}:
    return found
  keep_mask = shape and "mask" in found
  found = {k: v for k, v in found.items() if k not in {
      "var", "mask", "filtered"} and (shape or k not in {"shadow", "const"})}
  if keep_mask or _names.is_mask_name(name):
    found["mask"] = node
  return found
